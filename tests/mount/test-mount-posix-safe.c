/* SPDX-License-Identifier: MIT */
/*
 * Mount suite, POSIX behaviour in SAFE on the standard tree (mount-util.h):
 * shared mappings, unlink and rename of open files, sparse files, concurrent
 * appends, exec from the view, inode numbers the backing filesystem reuses
 * (also behind the daemon's back and under churn), O_TMPFILE.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "mount-util.h"

static void test_posix_mmap_shared(void **state)
{
	struct jf_mnt *m = *state;
	int fd = open(mu_v(m, "work/mm"), O_CREAT | O_RDWR, 0644), fd2;
	char buf[16] = "";
	char *p;

	assert_true(fd >= 0);
	assert_ok(ftruncate(fd, 4096));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	memcpy(p, "mapped!", 7);
	assert_ok(msync(p, 4096, MS_SYNC));
	fd2 = open(mu_v(m, "work/mm"), O_RDONLY);
	assert_true(fd2 >= 0);
	assert_int_equal(pread(fd2, buf, 7, 0), 7);
	assert_memory_equal(buf, "mapped!", 7);
	munmap(p, 4096);
	close(fd);
	close(fd2);
	assert_memory_equal(mu_slurp(mu_s(m, "work/mm")), "mapped!", 7);
}

static void test_posix_unlink_while_open(void **state)
{
	struct jf_mnt *m = *state;
	int fd = open(mu_v(m, "work/tmp"), O_CREAT | O_RDWR, 0644);
	char buf[8];
	struct stat st;

	assert_true(fd >= 0);
	assert_ok(unlink(mu_v(m, "work/tmp")));
	assert_int_equal(write(fd, "abc", 3), 3);
	assert_int_equal(pread(fd, buf, 3, 0), 3);
	assert_memory_equal(buf, "abc", 3);
	assert_ok(fstat(fd, &st));
	assert_int_equal(st.st_size, 3);
	close(fd);
	assert_errno(access(mu_v(m, "work/tmp"), F_OK), ENOENT);
}

/*
 * The same for a file opened with open(2), not created: in no_open mode the
 * daemon holds no fd for it, so it must keep one when the last name goes
 * (unlink, or a rename over it). Also: O_TRUNC reaches the disk, and a
 * shared mapping of an opened file writes back.
 */
static void test_posix_open_existing(void **state)
{
	struct jf_mnt *m = *state;
	char buf[16] = "";
	struct stat st;
	int fd, fd2;
	char *p;

	assert_int_equal(mu_sh("printf 0123456789 >'%s'; printf old >'%s'; printf zz >'%s'",
			       mu_s(m, "work/u"), mu_s(m, "work/o"), mu_s(m, "work/t")),
			 0);
	fd = open(mu_v(m, "work/u"), O_RDWR);
	fd2 = open(mu_v(m, "work/o"), O_RDWR);
	assert_true(fd >= 0 && fd2 >= 0);
	assert_ok(unlink(mu_v(m, "work/u")));
	assert_ok(rename(mu_v(m, "work/t"), mu_v(m, "work/o")));
	assert_int_equal(pwrite(fd, "AB", 2, 10), 2);
	assert_int_equal(pread(fd, buf, 12, 0), 12);
	assert_memory_equal(buf, "0123456789AB", 12);
	assert_ok(fstat(fd, &st));
	assert_int_equal(st.st_size, 12);
	assert_int_equal(pwrite(fd2, "N", 1, 0), 1);
	assert_int_equal(pread(fd2, buf, 3, 0), 3);
	assert_memory_equal(buf, "Nld", 3);
	close(fd);
	close(fd2);
	assert_string_equal(mu_slurp(mu_v(m, "work/o")), "zz");
	assert_errno(access(mu_v(m, "work/u"), F_OK), ENOENT);

	fd = open(mu_v(m, "work/o"), O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	close(fd);
	assert_ok(stat(mu_s(m, "work/o"), &st));
	assert_int_equal(st.st_size, 0);

	assert_int_equal(mu_sh("head -c 4096 /dev/zero >'%s'", mu_s(m, "work/mm2")), 0);
	fd = open(mu_v(m, "work/mm2"), O_RDWR);
	assert_true(fd >= 0);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	memcpy(p, "mapped", 6);
	assert_ok(msync(p, 4096, MS_SYNC));
	munmap(p, 4096);
	close(fd);
	assert_memory_equal(mu_slurp(mu_s(m, "work/mm2")), "mapped", 6);
}

static void test_posix_sparse(void **state)
{
	struct jf_mnt *m = *state;
	int fd = open(mu_v(m, "work/sparse"), O_CREAT | O_RDWR, 0644);
	off_t data;

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "z", 1, 512 * 1024), 1);
	data = lseek(fd, 0, SEEK_DATA);
	assert_true(data > 0 || data == 0); /* fs may not track holes; must not fail */
	assert_true(lseek(fd, 0, SEEK_HOLE) >= 0);
	close(fd);
}

static void test_posix_concurrent_append(void **state)
{
	struct jf_mnt *m = *state;
	const int procs = 4, lines = 500;
	struct stat st;
	pid_t pids[4];

	for (int p = 0; p < procs; p++) {
		pids[p] = fork();
		if (pids[p] == 0) {
			int fd = open(mu_v(m, "work/log"), O_CREAT | O_WRONLY | O_APPEND, 0644);
			char line[32];

			if (fd < 0)
				_exit(1);
			for (int i = 0; i < lines; i++) {
				snprintf(line, sizeof(line), "p%d line %06d\n", p, i);
				if (write(fd, line, strlen(line)) != (ssize_t)strlen(line))
					_exit(2);
			}
			_exit(0);
		}
	}
	for (int p = 0; p < procs; p++) {
		int status;

		waitpid(pids[p], &status, 0);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_ok(stat(mu_s(m, "work/log"), &st));
	assert_int_equal(st.st_size, procs * lines * 15);
	assert_int_equal(mu_sh("test $(grep -c -E '^p[0-3] line [0-9]{6}$' '%s') -eq %d",
			       mu_s(m, "work/log"), procs * lines),
			 0);
}

static void test_exec_in_view(void **state)
{
	struct jf_mnt *m = *state;

	/* execve opens with internal flag bits (__FMODE_EXEC) the daemon must
	 * not hand to openat2 (EINVAL): a program built in the view runs. */
	assert_int_equal(
		mu_sh("cp /bin/true '%s' && '%s'", mu_v(m, "work/true"), mu_v(m, "work/true")), 0);
	assert_int_equal(mu_sh("printf '#!/bin/sh\\nexit 7\\n' > '%s' && chmod +x '%s' && '%s'",
			       mu_v(m, "work/s.sh"), mu_v(m, "work/s.sh"), mu_v(m, "work/s.sh")),
			 7);
}

static void test_inode_number_reuse(void **state)
{
	struct jf_mnt *m = *state;

	/* The backing filesystem reuses freed inode numbers at once; the daemon
	 * must hand out a fresh inode (never ESTALE, never the old object). */
	for (int i = 0; i < 300; i++) {
		int fd;

		assert_ok(mkdir(mu_v(m, "work/r"), 0755));
		fd = open(mu_v(m, "work/r/f"), O_CREAT | O_WRONLY, 0644);
		assert_true(fd >= 0);
		close(fd);
		assert_ok(rename(mu_v(m, "work/r"), mu_v(m, "work/r.x")));
		assert_ok(unlink(mu_v(m, "work/r.x/f")));
		assert_ok(rmdir(mu_v(m, "work/r.x")));
		fd = open(mu_v(m, "work/r"), O_CREAT | O_WRONLY, 0644);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "x", 1), 1);
		close(fd);
		assert_ok(unlink(mu_v(m, "work/r")));
	}
}

static void test_inode_number_reuse_external(void **state)
{
	struct jf_mnt *m = *state;
	struct stat vst, sst;
	int hits = 0;

	/* Same, with the object removed behind the daemon's back while the
	 * kernel still holds its inode, and its number reused by a directory. */
	for (int i = 0; i < 20; i++) {
		char name[64];

		mu_write(m, "work/old", "o");
		assert_ok(stat(mu_v(m, "work/old"), &vst));
		assert_ok(stat(mu_s(m, "work/old"), &sst));
		assert_ok(unlink(mu_s(m, "work/old")));
		snprintf(name, sizeof(name), "work/new%d", i);
		assert_ok(mkdir(mu_s(m, name), 0755));
		struct stat nst;

		assert_ok(stat(mu_s(m, name), &nst));
		hits += nst.st_ino == sst.st_ino;
		assert_ok(stat(mu_v(m, name), &vst));
		assert_true(S_ISDIR(vst.st_mode));
		assert_true(mu_dir_has(mu_v(m, "work"), name + 5));
	}
	fprintf(stderr, "inode numbers reused: %d of 20\n", hits);
}

static void test_concurrent_churn(void **state)
{
	const char *args[] = {"-o", "entry_timeout=0.01,attr_timeout=0.01,negative_timeout=0",
			      NULL};
	struct jf_mnt t, *m = &t;
	int status;

	mu_tree_new(&t);
	mu_mkdir(&t, "work");
	assert_int_equal(mu_mount(&t, args, 0), 0);

	/* Several writers creating, renaming, linking and removing names while
	 * find walks the tree: inode numbers get reused while the kernel still
	 * holds the old inodes; nothing may fail (ESTALE, EIO). */
	status = mu_sh(
		"cd '%s' && pids=; for p in 1 2 3 4; do ( for i in $(seq 1 150); do "
		"echo $i > .c$p.tmp && mv -f .c$p .c$p.old 2>/dev/null; "
		"mv .c$p.tmp .c$p || exit 1; "
		"mkdir -p d$p/s && echo x > d$p/s/f && mv d$p d$p.x && rm -rf d$p.x || exit 2; "
		"ln .c$p .c$p.ln && rm .c$p.ln || exit 3; "
		"done ) & pids=\"$pids $!\"; done; "
		"( for i in $(seq 1 30); do find . >/dev/null 2>&1; done; true ) & pids=\"$pids "
		"$!\"; "
		"r=0; for j in $pids; do wait $j || r=1; done; exit $r",
		mu_v(m, "work"));
	assert_int_equal(status, 0);
	mu_umount(&t, SIGTERM);
	mu_tree_free(&t);
}

static void test_tmpfile(void **state)
{
	struct jf_mnt *m = *state;
	int fd = open(mu_v(m, "work"), O_TMPFILE | O_RDWR, 0600);

	/* libfuse 3.14 has no tmpfile operation: a clean EOPNOTSUPP is the answer */
	if (fd >= 0)
		close(fd);
	else
		assert_int_equal(errno, EOPNOTSUPP);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		mu_std_test(test_posix_mmap_shared),
		mu_std_test(test_posix_open_existing),
		mu_std_test(test_posix_unlink_while_open),
		mu_std_test(test_posix_sparse),
		mu_std_test(test_posix_concurrent_append),
		mu_std_test(test_exec_in_view),
		mu_std_test(test_inode_number_reuse),
		mu_std_test(test_inode_number_reuse_external),
		cmocka_unit_test(test_concurrent_churn),
		mu_std_test(test_tmpfile),
		mu_fast_open_test(test_posix_open_existing),
		mu_fast_open_test(test_posix_unlink_while_open),
		mu_fast_open_test(test_posix_mmap_shared),
	};

	return mu_run_tests("mount-posix-safe", tests, argc, argv);
}
