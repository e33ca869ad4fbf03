/* SPDX-License-Identifier: MIT */
/*
 * Mount suite, the zone x operation matrix: every operation on DENIED,
 * RESTRICTED and SAFE names of the standard tree (mount-util.h), the size
 * limits of each zone, a SAFE island inside RESTRICTED. Every refusal checks
 * the exact errno and that a checksum of the backing tree did not change.
 * The other topics of the daemon are the test-mount-*.c files beside this
 * one; with argument "--unprivileged" each runs as an ordinary user
 * (fusermount3 path, run-unprivileged.sh).
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

static void test_mountinfo(void **state)
{
	struct jf_mnt *m = *state;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192], *real = realpath(m->src, NULL);
	bool seen = false;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, m->mnt))
			continue;
		seen = true;
		assert_non_null(strstr(line, "nosuid"));
		assert_non_null(strstr(line, "nodev"));
		char *dash = strstr(line, " - ");

		assert_non_null(dash);
		char type[64], src[4096];

		assert_int_equal(sscanf(dash + 3, "%63s %4095s", type, src), 2);
		assert_string_equal(type, "fuse.jailfs");
		assert_string_equal(src, real);
	}
	fclose(f);
	free(real);
	assert_true(seen);
}

static void test_denied_invisible(void **state)
{
	struct jf_mnt *m = *state;
	struct stat st;

	assert_errno(stat(mu_v(m, ".env"), &st), ENOENT);
	assert_errno(stat(mu_v(m, "work/.env"), &st), ENOENT);
	assert_errno(stat(mu_v(m, "work/id_rsa"), &st), ENOENT);
	assert_errno(stat(mu_v(m, "secret"), &st), ENOENT);
	assert_errno(stat(mu_v(m, "secret/token"), &st), ENOENT);
	assert_errno(open(mu_v(m, "secret/token"), O_RDONLY), ENOENT);
	assert_errno(stat(mu_v(m, ".ENV"), &st), ENOENT);
	assert_false(mu_dir_has(m->mnt, ".env"));
	assert_false(mu_dir_has(m->mnt, "secret"));
	assert_false(mu_dir_has(mu_v(m, "work"), ".env"));
	assert_false(mu_dir_has(mu_v(m, "work"), "id_rsa"));
	assert_true(mu_dir_has(mu_v(m, "work"), "f"));
	assert_true(mu_dir_has(m->mnt, "ro"));
	/* ls -l style: readdirplus must hide the same names */
	assert_int_equal(mu_sh("ls -la '%s' | grep -q -e '\\.env' -e secret", m->mnt), 1);
}

static void test_denied_create(void **state)
{
	struct jf_mnt *m = *state;
	uint64_t before = mu_tree_sum(m, NULL);

	assert_errno(open(mu_v(m, "work/.env.local"), O_CREAT | O_WRONLY, 0644), EACCES);
	assert_errno(open(mu_v(m, ".env"), O_CREAT | O_WRONLY | O_TRUNC, 0644), EACCES);
	assert_errno(mkdir(mu_v(m, ".ssh"), 0700), EACCES);
	assert_errno(mkdir(mu_v(m, "work/secrets"), 0700), EACCES);
	assert_errno(mknod(mu_v(m, "work/id_rsa2"), S_IFIFO | 0600, 0), EACCES);
	assert_errno(symlink("f", mu_v(m, "work/.env.2")), EACCES);
	assert_errno(link(mu_v(m, "work/f"), mu_v(m, "work/.env.3")), EACCES);
	assert_errno(rename(mu_v(m, "work/f"), mu_v(m, "work/.env")), EACCES);
	assert_errno(rename(mu_v(m, "work/f"), mu_v(m, ".env.prod")), EACCES);
	assert_errno(mkdir(mu_v(m, "secret"), 0700), EACCES);
	assert_errno(unlink(mu_v(m, ".env")), ENOENT);
	assert_errno(rmdir(mu_v(m, "secret")), ENOENT);
	assert_errno(chmod(mu_v(m, ".env"), 0777), ENOENT);
	assert_errno(truncate(mu_v(m, "work/.env"), 0), ENOENT);
	/* hidden symlinks (out of the view, onto DENIED names) are DENIED too */
	assert_errno(unlink(mu_v(m, "work/pw")), ENOENT);
	assert_errno(unlink(mu_v(m, "work/toenv")), ENOENT);
	assert_errno(rename(mu_v(m, "work/toenv"), mu_v(m, "work/x")), ENOENT);
	assert_errno(rename(mu_v(m, "work/f"), mu_v(m, "work/pw")), EACCES);
	assert_errno(lchown(mu_v(m, "work/pw"), getuid(), getgid()), ENOENT);
	assert_errno(symlink("f", mu_v(m, "work/pw")), EACCES);
	assert_errno(mkdir(mu_v(m, "work/pw"), 0755), EACCES);
	assert_true(mu_tree_sum(m, NULL) == before);
}

static void test_restricted_matrix(void **state)
{
	struct jf_mnt *m = *state;
	uint64_t before = mu_tree_sum(m, "work/");
	struct timespec ts[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
	struct stat st;
	mode_t mode;
	int fd;

	/* file */
	assert_string_equal(mu_slurp(mu_v(m, "ro/f")), "ro\n");
	assert_write_refused(mu_v(m, "ro/f"), O_WRONLY);
	assert_write_refused(mu_v(m, "ro/f"), O_RDWR);
	assert_string_equal(mu_slurp(mu_v(m, "ro/f")), "ro\n"); /* no page cache residue */
	/* the real write bits in every mode: the daemon refuses, not the mode check */
	assert_ok(stat(mu_s(m, "ro/f"), &st));
	mode = st.st_mode & 0222;
	assert_int_not_equal(mode, 0);
	assert_ok(stat(mu_v(m, "ro/f"), &st));
	assert_int_equal(st.st_mode & 0222, mode);
	assert_write_refused(mu_v(m, "ro/f"), O_WRONLY | O_TRUNC);
	assert_write_refused(mu_v(m, "ro/f"), O_RDONLY | O_TRUNC);
	assert_write_refused(mu_v(m, "ro/f"), O_WRONLY | O_APPEND);
	assert_errno(open(mu_v(m, "ro/new"), O_CREAT | O_WRONLY, 0644), EROFS);
	assert_errno(mknod(mu_v(m, "ro/fifo"), S_IFIFO | 0600, 0), EROFS);
	assert_errno(mkdir(mu_v(m, "ro/nd"), 0755), EROFS);
	assert_errno(symlink("f", mu_v(m, "ro/ns")), EROFS);
	assert_errno(link(mu_v(m, "ro/f"), mu_v(m, "work/rof")), EROFS);
	assert_errno(link(mu_v(m, "work/f"), mu_v(m, "ro/wf")), EROFS);
	assert_errno(unlink(mu_v(m, "ro/f")), EROFS);
	assert_errno(rename(mu_v(m, "ro/f"), mu_v(m, "work/x")), EROFS);
	assert_errno(rename(mu_v(m, "work/f"), mu_v(m, "ro/x")), EROFS);
	assert_errno(rename(mu_v(m, "work/f"), mu_v(m, "ro/f")), EROFS);
	assert_errno(rename(mu_v(m, "ro/f"), mu_v(m, "ro/g")), EROFS);
	assert_errno(chmod(mu_v(m, "ro/f"), 0777), EROFS);
	assert_errno(chown(mu_v(m, "ro/f"), getuid(), getgid()), EROFS);
	assert_errno(truncate(mu_v(m, "ro/f"), 0), EROFS);
	assert_errno(utimensat(AT_FDCWD, mu_v(m, "ro/f"), ts, 0), EROFS);
	assert_errno(setxattr(mu_v(m, "ro/f"), "user.x", "1", 1, 0), EROFS);
	assert_errno(removexattr(mu_v(m, "ro/f"), "user.x"), EROFS);
	/* fallocate / copy_file_range need a writable fd, which cannot exist
	 * where opens reach the daemon (no_open: test_first_mutation_refused) */
	fd = open(mu_v(m, "ro/f"), O_RDONLY);
	assert_true(fd >= 0);
	assert_errno(fallocate(fd, 0, 0, 4096), EBADF);
	{
		int wfd = open(mu_v(m, "work/f"), O_RDONLY);
		loff_t o = 0;

		assert_errno(copy_file_range(wfd, &o, fd, NULL, 4, 0), EBADF);
		close(wfd);
	}
	close(fd);
	/* directory */
	assert_errno(rmdir(mu_v(m, "ro/d")), EROFS);
	assert_errno(chmod(mu_v(m, "ro/d"), 0777), EROFS);
	assert_errno(utimensat(AT_FDCWD, mu_v(m, "ro/d"), ts, 0), EROFS);
	assert_errno(setxattr(mu_v(m, "ro/d"), "user.x", "1", 1, 0), EROFS);
	assert_errno(rename(mu_v(m, "ro/d"), mu_v(m, "work/d2")), EROFS);
	assert_errno(open(mu_v(m, "ro/d/new"), O_CREAT | O_WRONLY, 0644), EROFS);
	/* symlink */
	assert_errno(unlink(mu_v(m, "ro/l")), EROFS);
	assert_errno(lchown(mu_v(m, "ro/l"), getuid(), getgid()), EROFS);
	assert_errno(rename(mu_v(m, "ro/l"), mu_v(m, "work/l2")), EROFS);
	assert_write_refused(mu_v(m, "ro/l"), O_WRONLY);
	assert_string_equal(mu_slurp(mu_v(m, "ro/l")), "ro\n");
	/* the root-level RESTRICTED hooks */
	assert_write_refused(mu_v(m, ".git/hooks/pre-commit"), O_WRONLY | O_TRUNC);
	assert_errno(open(mu_v(m, ".git/hooks/post-checkout"), O_CREAT | O_WRONLY, 0755), EROFS);
	assert_true(mu_tree_sum(m, "work/") == before);
}

/* A shared writable mapping of a RESTRICTED file (any caller can open it
 * read-write in no_open mode): msync fails with EROFS, the disk keeps its
 * bytes and so, soon after, does the view. */
static void test_restricted_mmap(void **state)
{
	struct jf_mnt *m = *state;
	int fd = open(mu_v(m, "ro/f"), O_RDWR);
	char *p;
	int i;

	if (!mu_fast_open_mount) {
		assert_int_equal(fd, -1);
		assert_int_equal(errno, EROFS);
		return;
	}
	assert_true(fd >= 0);
	p = mmap(NULL, 3, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	memcpy(p, "XY", 2);
	assert_errno(msync(p, 3, MS_SYNC), EROFS);
	munmap(p, 3);
	close(fd);
	assert_string_equal(mu_slurp(mu_s(m, "ro/f")), "ro\n");
	for (i = 0; i < 200 && strcmp(mu_slurp(mu_v(m, "ro/f")), "ro\n") != 0; i++)
		usleep(10000);
	assert_string_equal(mu_slurp(mu_v(m, "ro/f")), "ro\n");
}

static void test_restricted_size_limit(void **state)
{
	struct jf_mnt *m = *state;

	/* ro/big is 100 KiB, over restricted.max_file_size = 64K */
	char buf[16];
	int fd;

	/* EFBIG at open(2), or at the first read(2) with fast_open */
	errno = 0;
	fd = open(mu_v(m, "ro/big"), O_RDONLY);
	if (fd >= 0 && !mu_fast_open_mount)
		fail_msg("open of a file over max_file_size succeeded without fast_open");
	if (fd >= 0) {
		assert_int_equal(read(fd, buf, sizeof(buf)), -1);
		close(fd);
	}
	assert_int_equal(errno, EFBIG);
	assert_string_equal(mu_slurp(mu_v(m, "ro/f")), "ro\n");
}

/*
 * Every mutation through an fd of @rel, which the kernel opened for writing
 * without asking the daemon (no_open), answers @e: write, pwrite, O_APPEND
 * write, fallocate, copy_file_range into it, and with @trunc O_TRUNC at open
 * and ftruncate; nothing of the backing file changes (content, size, mode,
 * mtime).
 */
static void refused_through_fd(const struct jf_mnt *m, const char *rel, int e, bool trunc)
{
	uint64_t sum = mu_file_sum(m, rel);
	struct stat before, after;
	loff_t o = 0;
	int fd, in;

	assert_ok(stat(mu_s(m, rel), &before));
	if (trunc) {
		assert_errno(open(mu_v(m, rel), O_WRONLY | O_TRUNC), e);
		assert_errno(open(mu_v(m, rel), O_RDONLY | O_TRUNC), e);
	}
	fd = open(mu_v(m, rel), O_RDWR);
	assert_true(fd >= 0);
	assert_errno(write(fd, "x", 1), e);
	assert_errno(pwrite(fd, "xy", 2, 1), e);
	if (trunc)
		assert_errno(ftruncate(fd, 1), e);
	assert_errno(fallocate(fd, 0, 0, 4096), e);
	assert_errno(fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 4096), e);
	in = open(mu_v(m, "work/f"), O_RDONLY);
	assert_true(in >= 0);
	assert_errno(copy_file_range(in, &o, fd, NULL, 4, 0), e);
	close(in);
	close(fd);
	fd = open(mu_v(m, rel), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_errno(write(fd, "z", 1), e);
	close(fd);
	assert_ok(stat(mu_s(m, rel), &after));
	assert_true(mu_file_sum(m, rel) == sum);
	assert_int_equal(after.st_size, before.st_size);
	assert_int_equal(after.st_mode, before.st_mode);
	assert_int_equal(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
	assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
}

/* SAFE work/huge, over safe.max_file_size (1M). */
static void add_huge(struct jf_mnt *m)
{
	char *buf = malloc((1 << 20) + 2);

	assert_non_null(buf);
	memset(buf, 'h', (1 << 20) + 1);
	buf[(1 << 20) + 1] = '\0';
	mu_write(m, "work/huge", buf);
	free(buf);
}

static int fast_huge_setup(void **state)
{
	return mu_setup_mode(state, true, add_huge);
}

/*
 * no_open mode: the kernel opens files without asking the daemon, so a
 * write open of a file the daemon refuses succeeds (the view shows the real
 * mode bits) and the refusal comes at the first mutation, which always
 * reaches the daemon. RESTRICTED ro/f and ro/big (over its limit too):
 * EROFS; SAFE work/huge over max_file_size: reads and writes EFBIG, as its
 * open would have answered, while shrinking it is allowed, as truncate(2)
 * is in every mode (open(O_TRUNC) reaches the daemon as that very
 * truncation). Pages the kernel filled for a refused write are not served
 * afterwards.
 */
static void test_first_mutation_refused(void **state)
{
	struct jf_mnt *m = *state;
	struct timespec ts[2] = {{1, 0}, {2, 0}};
	uint64_t before = mu_tree_sum(m, NULL);
	char buf[16];
	int fd;

	assert_ok(access(mu_v(m, "ro/f"), W_OK)); /* the documented caveat */
	refused_through_fd(m, "ro/f", EROFS, true);
	refused_through_fd(m, "ro/big", EROFS, true);
	refused_through_fd(m, "work/huge", EFBIG, false);
	/* attribute changes through the fd */
	fd = open(mu_v(m, "ro/f"), O_RDWR);
	assert_true(fd >= 0);
	assert_errno(fchmod(fd, 0600), EROFS);
	assert_errno(fchown(fd, getuid(), getgid()), EROFS);
	assert_errno(futimens(fd, ts), EROFS);
	/* the page cache: cached, then a refused write over the same bytes */
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 3);
	assert_errno(pwrite(fd, "XY", 2, 0), EROFS);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 3);
	assert_memory_equal(buf, "ro\n", 3);
	close(fd);
	assert_string_equal(mu_slurp(mu_v(m, "ro/f")), "ro\n");
	/* reads of files over their zone's limit */
	fd = open(mu_v(m, "work/huge"), O_RDONLY);
	assert_true(fd >= 0);
	assert_errno(read(fd, buf, sizeof(buf)), EFBIG);
	close(fd);
	assert_true(mu_tree_sum(m, NULL) == before);
	fd = open(mu_v(m, "work/huge"), O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "s", 1), 1);
	close(fd);
	assert_string_equal(mu_slurp(mu_s(m, "work/huge")), "s");
}

static void test_safe_inside_restricted(void **state)
{
	struct jf_mnt *m = *state;
	int fd = open(mu_v(m, "ro/patches/new.c"), O_CREAT | O_WRONLY, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	assert_string_equal(mu_slurp(mu_s(m, "ro/patches/new.c")), "x");
	assert_errno(open(mu_v(m, "ro/new.c"), O_CREAT | O_WRONLY, 0644), EROFS);
	/* rename a SAFE file out of the SAFE island into RESTRICTED: refused */
	assert_errno(rename(mu_v(m, "ro/patches/new.c"), mu_v(m, "ro/new.c")), EROFS);
}

static void test_safe_matrix(void **state)
{
	struct jf_mnt *m = *state;
	struct timespec ts[2] = {{1000, 0}, {2000, 0}};
	struct stat st;
	char buf[64];
	int fd;

	fd = open(mu_v(m, "work/new"), O_CREAT | O_EXCL | O_RDWR, 0640);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello", 5), 5);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 5);
	assert_ok(fsync(fd));
	assert_ok(fallocate(fd, 0, 0, 8192));
	close(fd);
	assert_ok(stat(mu_s(m, "work/new"), &st));
	assert_int_equal(st.st_size, 8192);
	assert_int_equal(st.st_mode & 0777, 0640);
	assert_ok(truncate(mu_v(m, "work/new"), 3));
	assert_string_equal(mu_slurp(mu_s(m, "work/new")), "hel");
	assert_ok(chmod(mu_v(m, "work/new"), 0600));
	assert_ok(stat(mu_s(m, "work/new"), &st));
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_ok(chown(mu_v(m, "work/new"), getuid(), getgid()));
	assert_ok(utimensat(AT_FDCWD, mu_v(m, "work/new"), ts, 0));
	assert_ok(stat(mu_s(m, "work/new"), &st));
	assert_int_equal(st.st_mtim.tv_sec, 2000);
	assert_ok(mkdir(mu_v(m, "work/nd"), 0755));
	assert_ok(rmdir(mu_v(m, "work/nd")));
	assert_ok(mknod(mu_v(m, "work/fifo"), S_IFIFO | 0600, 0));
	assert_ok(lstat(mu_v(m, "work/fifo"), &st));
	assert_true(S_ISFIFO(st.st_mode));
	assert_ok(symlink("new", mu_v(m, "work/ln")));
	assert_int_equal(readlink(mu_v(m, "work/ln"), buf, sizeof(buf)), 3);
	assert_ok(symlink("../ro/f", mu_v(m, "work/ln2")));
	assert_string_equal(mu_slurp(mu_v(m, "work/ln2")), "ro\n");
	assert_ok(link(mu_v(m, "work/new"), mu_v(m, "work/new2")));
	/* a hard link made between SAFE names stays writable */
	fd = open(mu_v(m, "work/new2"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "p", 1), 1);
	close(fd);
	assert_string_equal(mu_slurp(mu_s(m, "work/new")), "help");
	assert_ok(rename(mu_v(m, "work/new2"), mu_v(m, "work/new3")));
	assert_ok(unlink(mu_v(m, "work/new3")));
	assert_ok(setxattr(mu_v(m, "work/new"), "user.jf", "v1", 2, 0));
	assert_int_equal(getxattr(mu_v(m, "work/new"), "user.jf", buf, sizeof(buf)), 2);
	assert_memory_equal(buf, "v1", 2);
	assert_true(listxattr(mu_v(m, "work/new"), buf, sizeof(buf)) > 0);
	assert_ok(removexattr(mu_v(m, "work/new"), "user.jf"));
	assert_errno(getxattr(mu_v(m, "work/new"), "user.jf", buf, sizeof(buf)), ENODATA);
	assert_ok(unlink(mu_v(m, "work/fifo")));
	assert_ok(unlink(mu_v(m, "work/ln")));
	/* copy_file_range into SAFE, reading from RESTRICTED */
	{
		int in = open(mu_v(m, "ro/f"), O_RDONLY);
		int out = open(mu_v(m, "work/copy"), O_CREAT | O_WRONLY, 0644);

		assert_true(in >= 0 && out >= 0);
		assert_int_equal(copy_file_range(in, NULL, out, NULL, 3, 0), 3);
		close(in);
		close(out);
		assert_string_equal(mu_slurp(mu_s(m, "work/copy")), "ro\n");
	}
	/* SAFE directory and symlink */
	assert_ok(chmod(mu_v(m, "work/d"), 0700));
	assert_ok(utimensat(AT_FDCWD, mu_v(m, "work/d"), ts, 0));
	assert_ok(setxattr(mu_v(m, "work/d"), "user.d", "1", 1, 0));
	assert_ok(lchown(mu_v(m, "work/l"), getuid(), getgid()));
	assert_ok(rename(mu_v(m, "work/l"), mu_v(m, "work/l2")));
	assert_string_equal(mu_slurp(mu_v(m, "work/l2")), "safe\n");
	assert_ok(unlink(mu_v(m, "work/l2")));
	assert_ok(rename(mu_v(m, "work/d"), mu_v(m, "work/d2")));
	assert_ok(rmdir(mu_v(m, "work/d2")));
	/* xattrs of RESTRICTED names can be read */
	assert_ok(setxattr(mu_s(m, "ro/f"), "user.seen", "y", 1, 0));
	assert_int_equal(getxattr(mu_v(m, "ro/f"), "user.seen", buf, sizeof(buf)), 1);
}

static void test_safe_rename_flags(void **state)
{
	struct jf_mnt *m = *state;

	mu_write(m, "work/a", "A");
	mu_write(m, "work/b", "B");
	assert_errno(renameat2(AT_FDCWD, mu_v(m, "work/a"), AT_FDCWD, mu_v(m, "work/b"),
			       RENAME_NOREPLACE),
		     EEXIST);
	assert_ok(renameat2(AT_FDCWD, mu_v(m, "work/a"), AT_FDCWD, mu_v(m, "work/b"),
			    RENAME_EXCHANGE));
	assert_string_equal(mu_slurp(mu_v(m, "work/a")), "B");
	assert_string_equal(mu_slurp(mu_v(m, "work/b")), "A");
	/* rename over an existing file */
	assert_ok(rename(mu_v(m, "work/a"), mu_v(m, "work/b")));
	assert_string_equal(mu_slurp(mu_v(m, "work/b")), "B");
	assert_errno(access(mu_v(m, "work/a"), F_OK), ENOENT);
	/* directories move, with their content */
	mu_write(m, "work/dd/x", "X");
	assert_ok(rename(mu_v(m, "work/dd"), mu_v(m, "work/ee")));
	assert_string_equal(mu_slurp(mu_v(m, "work/ee/x")), "X");
	/* a SAFE dir holding a DENIED name that stays DENIED at the new path
	 * moves like any other (the answer does not reveal the hidden name),
	 * and the name stays hidden there */
	mu_write(m, "work/ff/.env", "S");
	mu_write(m, "work/ff/y", "Y");
	assert_ok(rename(mu_v(m, "work/ff"), mu_v(m, "work/gg")));
	assert_string_equal(mu_slurp(mu_s(m, "work/gg/.env")), "S");
	assert_string_equal(mu_slurp(mu_v(m, "work/gg/y")), "Y");
	assert_errno(access(mu_v(m, "work/gg/.env"), F_OK), ENOENT);
	/* one holding a visible name that would become DENIED (.kube/config)
	 * or RESTRICTED (.git/config) at any depth cannot (EXDEV: mv copies,
	 * name by name, and refuses those names) */
	mu_write(m, "work/k/config", "K");
	assert_errno(rename(mu_v(m, "work/k"), mu_v(m, "work/.kube")), EXDEV);
	mu_write(m, "work/g/config", "G");
	assert_errno(rename(mu_v(m, "work/g"), mu_v(m, "work/.git")), EXDEV);
	assert_errno(access(mu_s(m, "work/.kube"), F_OK), ENOENT);
	assert_errno(access(mu_s(m, "work/.git"), F_OK), ENOENT);
}

static void test_safe_size_limit(void **state)
{
	struct jf_mnt *m = *state;
	char *buf = calloc(1, 1 << 20);
	int fd = open(mu_v(m, "work/big"), O_CREAT | O_WRONLY, 0644);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, 1 << 20, 0), 1 << 20);
	assert_errno(pwrite(fd, buf, 10, 1 << 20), EFBIG);
	assert_errno(ftruncate(fd, (2 << 20)), EFBIG);
	close(fd);
	assert_errno(truncate(mu_v(m, "work/big"), 5 << 20), EFBIG);
	free(buf);
}

/* safe.max_file_size (1M here) bounds allocation too, not only the size. */
static void test_fallocate_limit(void **state)
{
	struct jf_mnt *m = *state;
	int fd = open(mu_v(m, "work/fa"), O_CREAT | O_RDWR, 0644);
	struct stat st;

	assert_true(fd >= 0);
	assert_errno(fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 64 << 20), EFBIG);
	assert_errno(fallocate(fd, FALLOC_FL_KEEP_SIZE, 1 << 20, 4096), EFBIG);
	assert_errno(fallocate(fd, 0, 0, 2 << 20), EFBIG);
	assert_ok(fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 64 << 10));
	assert_ok(fstat(fd, &st));
	assert_int_equal(st.st_size, 0);
	assert_ok(stat(mu_s(m, "work/fa"), &st));
	assert_true(st.st_blocks * 512 < (2 << 20));
	close(fd);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		mu_std_test(test_mountinfo),
		mu_std_test(test_denied_invisible),
		mu_std_test(test_denied_create),
		mu_std_test(test_restricted_matrix),
		mu_std_test(test_restricted_size_limit),
		mu_std_test(test_safe_inside_restricted),
		mu_std_test(test_safe_matrix),
		mu_std_test(test_safe_rename_flags),
		mu_std_test(test_safe_size_limit),
		mu_std_test(test_restricted_mmap),
		mu_std_test(test_fallocate_limit),
		mu_fast_open_test(test_restricted_mmap),
		mu_fast_open_test(test_restricted_matrix),
		mu_fast_open_test(test_safe_matrix),
		cmocka_unit_test_setup_teardown(test_first_mutation_refused, fast_huge_setup,
						mu_std_teardown),
	};

	return mu_run_tests("mount", tests, argc, argv);
}
