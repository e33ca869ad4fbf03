/* SPDX-License-Identifier: MIT */
/*
 * Mount suite, every way to change a file through an fd the kernel opened
 * for writing without asking the daemon (fast_open, FUSE no_open), as a
 * process inside the view would try it: the write family (writev,
 * pwritev2 with RWF_APPEND, sendfile, splice, O_DIRECT, Linux AIO, io_uring
 * writes, fallocate and ftruncate), every fallocate mode, madvise
 * MADV_REMOVE, clone and dedupe ioctls, xattrs, leases and seals, and shared
 * writable mappings left dirty at exit. A RESTRICTED file's bytes, size,
 * mode, times and xattrs on the backing tree never change, and the view
 * never keeps serving what was refused. Then the size limits of SAFE files
 * at the boundary, from two appenders, far past it and through every call
 * that grows a file, with and without fast_open.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "io-util.h"
#include "mount-util.h"

#ifndef RWF_APPEND
#define RWF_APPEND 0x10
#endif

#define MAX_SAFE (1 << 20) /* safe.max_file_size of the standard tree */

/* ---------- the RESTRICTED file's state on the backing tree ---------- */

struct snap {
	uint64_t sum, tree;
	struct stat st;
	char xattr[64];
	ssize_t xlen;
};

static void snap_take(const struct jf_mnt *m, const char *rel, struct snap *s)
{
	memset(s, 0, sizeof(*s));
	s->sum = mu_file_sum(m, rel);
	s->tree = mu_tree_sum(m, NULL);
	assert_ok(stat(mu_s(m, rel), &s->st));
	s->xlen = getxattr(mu_s(m, rel), "user.jf", s->xattr, sizeof(s->xattr));
}

/* Content, size, mode, owner, times and xattrs of @rel, and every other
 * entry of SOURCE, are as in @before. */
static void snap_same(const struct jf_mnt *m, const char *rel, const struct snap *before,
		      const char *after_what)
{
	struct snap now;

	snap_take(m, rel, &now);
	if (now.sum != before->sum || now.st.st_size != before->st.st_size)
		fail_msg("%s: content or size of %s changed", after_what, rel);
	if (now.st.st_mode != before->st.st_mode || now.st.st_uid != before->st.st_uid ||
	    now.st.st_gid != before->st.st_gid)
		fail_msg("%s: mode or owner of %s changed", after_what, rel);
	if (memcmp(&now.st.st_mtim, &before->st.st_mtim, sizeof(now.st.st_mtim)) != 0 ||
	    memcmp(&now.st.st_ctim, &before->st.st_ctim, sizeof(now.st.st_ctim)) != 0)
		fail_msg("%s: mtime or ctime of %s changed", after_what, rel);
	if (now.xlen != before->xlen ||
	    (now.xlen > 0 && memcmp(now.xattr, before->xattr, (size_t)now.xlen) != 0))
		fail_msg("%s: user.jf of %s changed", after_what, rel);
	if (now.tree != before->tree)
		fail_msg("%s: something else in SOURCE changed", after_what);
}

/* @r (a result, or -1 with errno) is a failure with @e; -errno results too. */
static void expect_err(const char *what, long r, int err_now, int e)
{
	int got = r < 0 ? (r == -1 ? err_now : (int)-r) : 0;

	if (r >= 0 || got != e)
		fail_msg("%s: expected %s, got r=%ld (%s)", what, strerror(e), r,
			 r < 0 ? strerror(got) : "success");
}

#define EXPECT_ERR(call, e)                                                                        \
	do {                                                                                       \
		errno = 0;                                                                         \
		long _r = (long)(call);                                                            \
		expect_err(#call, _r, errno, (e));                                                 \
	} while (0)

/* ro/x: a RESTRICTED file of 8 KiB with a user xattr; ro/suid: set-user-ID. */
static void add_targets(struct jf_mnt *m)
{
	char buf[8192 + 1];

	memset(buf, 'r', sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = '\0';
	mu_write(m, "ro/x", buf);
	if (setxattr(mu_s(m, "ro/x"), "user.jf", "keep", 4, 0) < 0)
		fail_msg("setxattr user.jf on SOURCE: %s", strerror(errno));
	mu_write(m, "ro/suid", "#!/bin/sh\n");
	assert_ok(chmod(mu_s(m, "ro/suid"), 04755));
	mu_write(m, "work/src", "SAFE-SOURCE-BYTES\n");
}

static int fast_setup(void **state)
{
	return mu_setup_mode(state, true, add_targets);
}

static int plain_setup(void **state)
{
	return mu_setup_mode(state, false, add_targets);
}

/*
 * The write family through an fd of RESTRICTED ro/x opened O_RDWR without
 * the daemon: each call reaches it as WRITE (or FALLOCATE, SETATTR) and
 * fails with EROFS; the backing file is unchanged after each.
 */
static void test_write_family(void **state)
{
	struct jf_mnt *m = *state;
	struct iovec iov[2] = {{"AB", 2}, {"CD", 2}};
	int fd = open(mu_v(m, "ro/x"), O_RDWR | O_CLOEXEC), src, p[2];
	struct snap before;
	off_t off = 0;
	void *al = NULL;

	assert_true(fd >= 0);
	snap_take(m, "ro/x", &before);
	EXPECT_ERR(writev(fd, iov, 2), EROFS);
	EXPECT_ERR(pwritev2(fd, iov, 2, 0, RWF_APPEND), EROFS);
	EXPECT_ERR(pwritev2(fd, iov, 2, 10, RWF_DSYNC), EROFS);
	EXPECT_ERR(pwritev2(fd, iov, 2, -1, 0), EROFS); /* at the file position */
	src = open(mu_v(m, "work/src"), O_RDONLY | O_CLOEXEC);
	assert_true(src >= 0);
	EXPECT_ERR(sendfile(fd, src, &off, 8), EROFS);
	off = 0;
	EXPECT_ERR(copy_file_range(src, &off, fd, NULL, 8, 0), EROFS);
	assert_ok(pipe(p));
	assert_int_equal(write(p[1], "PIPED", 5), 5);
	off = 0;
	EXPECT_ERR(splice(p[0], NULL, fd, &off, 5, 0), EROFS);
	close(p[0]);
	close(p[1]);
	EXPECT_ERR(iu_aio_write(fd, "aio", 3, 0), EROFS);
	EXPECT_ERR(iu_uring_write(fd, "uring", 5, 0, false), EROFS);
	EXPECT_ERR(iu_uring_write(fd, "uringv", 6, 4096, true), EROFS);
	EXPECT_ERR(iu_uring_fallocate(fd, 0, 0, 1 << 16), EROFS);
	EXPECT_ERR(iu_uring_ftruncate(fd, 1), EROFS);
	close(src);
	close(fd);
	/* O_DIRECT: the kernel sends the write to the daemon uncached */
	fd = open(mu_v(m, "ro/x"), O_RDWR | O_DIRECT | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(posix_memalign(&al, 4096, 8192), 0);
	memset(al, 'D', 8192);
	EXPECT_ERR(pwrite(fd, al, 4096, 0), EROFS);
	EXPECT_ERR(pwrite(fd, al, 8192, 4096), EROFS); /* growing the file */
	EXPECT_ERR(iu_aio_write(fd, al, 4096, 0), EROFS);
	free(al);
	close(fd);
	snap_same(m, "ro/x", &before, "the write family");
	assert_string_equal(mu_slurp(mu_v(m, "ro/x")), mu_slurp(mu_s(m, "ro/x")));
}

/*
 * Every fallocate mode, madvise(MADV_REMOVE) (a hole punched through a
 * mapping), FICLONE, FICLONERANGE and FIDEDUPERANGE from a SAFE file, xattr
 * changes, attribute changes, write leases, seals and locks: each fails (the
 * ones the daemon decides with EROFS) and ro/x is unchanged.
 */
static void test_other_mutations(void **state)
{
	struct jf_mnt *m = *state;
	struct timespec ts[2] = {{1, 0}, {2, 0}};
	struct file_clone_range cr = {.src_length = 4096};
	struct {
		struct file_dedupe_range r;
		struct file_dedupe_range_info i;
	} dd = {.r = {.src_length = 4, .dest_count = 1}};
	int fd = open(mu_v(m, "ro/x"), O_RDWR | O_CLOEXEC), src;
	struct snap before;
	char *map;

	assert_true(fd >= 0);
	src = open(mu_v(m, "work/src"), O_RDWR | O_CLOEXEC);
	assert_true(src >= 0);
	snap_take(m, "ro/x", &before);
	EXPECT_ERR(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096), EROFS);
	EXPECT_ERR(fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, 4096), EROFS);
	EXPECT_ERR(fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 4096), EROFS);
	/* FUSE has no collapse or insert (EOPNOTSUPP in the kernel) */
	assert_int_equal(fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 0, 4096), -1);
	assert_int_equal(fallocate(fd, FALLOC_FL_INSERT_RANGE, 0, 4096), -1);
	map = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(map != MAP_FAILED);
	EXPECT_ERR(madvise(map, 4096, MADV_REMOVE), EROFS);
	munmap(map, 8192);
	/* no remap_file_range in FUSE: refused by the kernel, before any request */
	assert_int_equal(ioctl(fd, FICLONE, src), -1);
	cr.src_fd = src;
	assert_int_equal(ioctl(fd, FICLONERANGE, &cr), -1);
	dd.i.dest_fd = fd;
	assert_true(ioctl(src, FIDEDUPERANGE, &dd) < 0 || dd.i.status < 0);
	EXPECT_ERR(fsetxattr(fd, "user.jf", "new", 3, 0), EROFS);
	EXPECT_ERR(fsetxattr(fd, "user.other", "new", 3, XATTR_CREATE), EROFS);
	EXPECT_ERR(fremovexattr(fd, "user.jf"), EROFS);
	EXPECT_ERR(fchmod(fd, 0777), EROFS);
	/* a user may not give a file away: the kernel answers before the daemon */
	EXPECT_ERR(fchown(fd, 1, 1), geteuid() == 0 ? EROFS : EPERM);
	EXPECT_ERR(futimens(fd, ts), EROFS);
	EXPECT_ERR(futimens(fd, NULL), EROFS);
	EXPECT_ERR(ftruncate(fd, 0), EROFS);
	EXPECT_ERR(ftruncate(fd, 1 << 20), EROFS);
	/* a lease, a seal and locks are the kernel's own state, never the file's */
	if (fcntl(fd, F_SETLEASE, F_WRLCK) == 0)
		assert_ok(fcntl(fd, F_SETLEASE, F_UNLCK));
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), -1);
	assert_ok(flock(fd, LOCK_EX));
	assert_ok(flock(fd, LOCK_UN));
	close(src);
	close(fd);
	snap_same(m, "ro/x", &before, "fallocate, ioctls, xattrs, attributes");
}

/*
 * A set-user-ID RESTRICTED file: writes and truncations are refused before
 * anything strips the bit (the kernel's kill-priv travels with the WRITE or
 * SETATTR the daemon refuses).
 */
static void test_setuid_kept(void **state)
{
	struct jf_mnt *m = *state;
	int fd = open(mu_v(m, "ro/suid"), O_RDWR | O_CLOEXEC);
	struct snap before;
	struct stat st;

	assert_true(fd >= 0);
	snap_take(m, "ro/suid", &before);
	EXPECT_ERR(write(fd, "x", 1), EROFS);
	EXPECT_ERR(ftruncate(fd, 0), EROFS);
	EXPECT_ERR(fallocate(fd, 0, 0, 4096), EROFS);
	close(fd);
	snap_same(m, "ro/suid", &before, "writes to a set-user-ID file");
	assert_ok(stat(mu_v(m, "ro/suid"), &st));
	assert_int_equal(st.st_mode & 07777, 04755);
}

/*
 * A shared writable mapping of ro/x dirtied by a process that exits without
 * msync or munmap: the write-back (forced here by syncfs) is refused, the
 * disk keeps its bytes, and the view soon serves them again, to a reader
 * that never mapped the file.
 */
static void test_mapping_left_dirty(void **state)
{
	struct jf_mnt *m = *state;
	struct snap before;
	char buf[16];
	pid_t pid;
	int fd, status;

	snap_take(m, "ro/x", &before);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *p;

		fd = open(mu_v(m, "ro/x"), O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(2);
		p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			_exit(3);
		memcpy(p, "DIRTY", 5);
		memcpy(p + 4096, "DIRTY", 5);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	fd = open(mu_v(m, "ro/x"), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	(void)syncfs(fd);
	close(fd);
	snap_same(m, "ro/x", &before, "a dirty mapping written back");
	assert_true(EVENTUALLY(strncmp(mu_slurp(mu_v(m, "ro/x")), "rrrrr", 5) == 0));
	fd = open(mu_v(m, "ro/x"), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, 5, 4096), 5);
	assert_memory_equal(buf, "rrrrr", 5);
	close(fd);
}

/*
 * After refused writes the view shows what the disk has: a second process
 * reads the old bytes, stat shows the old size and mtime (no size the disk
 * never got, from a refused write past the end).
 */
static void test_refused_not_shown(void **state)
{
	struct jf_mnt *m = *state;
	struct stat v, s;
	char buf[8192];
	int fd = open(mu_v(m, "ro/x"), O_RDWR | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 8192); /* cache it */
	EXPECT_ERR(pwrite(fd, "XXXX", 4, 100), EROFS);
	EXPECT_ERR(pwrite(fd, buf, sizeof(buf), 8192), EROFS); /* past the end */
	EXPECT_ERR(pwrite(fd, "Y", 1, 1 << 20), EROFS);
	EXPECT_ERR(pwritev2(fd, &(struct iovec){"Z", 1}, 1, 0, RWF_APPEND), EROFS);
	close(fd);
	assert_ok(stat(mu_v(m, "ro/x"), &v));
	assert_ok(stat(mu_s(m, "ro/x"), &s));
	assert_int_equal(v.st_size, 8192);
	assert_int_equal(v.st_size, s.st_size);
	assert_int_equal(v.st_mtim.tv_sec, s.st_mtim.tv_sec);
	assert_int_equal(v.st_mtim.tv_nsec, s.st_mtim.tv_nsec);
	assert_int_equal(mu_sh("cmp -s %s %s", mu_v(m, "ro/x"), mu_s(m, "ro/x")), 0);
}

/* ---------- size limits of SAFE files ---------- */

struct appender {
	const char *path;
	long written;
	int err;
};

/* Append 100,000-byte chunks through an O_APPEND fd of its own until refused. */
static void *append_until_refused(void *arg)
{
	struct appender *a = arg;
	static char chunk[100000];
	int fd = open(a->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	ssize_t n = 0;

	memset(chunk, 'a', sizeof(chunk));
	for (int i = 0; fd >= 0 && i < 100 && (n = write(fd, chunk, sizeof(chunk))) > 0; i++)
		a->written += n;
	a->err = n < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* The size of SOURCE-relative @rel on the backing tree. */
static off_t backing_size(const struct jf_mnt *m, const char *rel)
{
	struct stat st;

	assert_ok(stat(mu_s(m, rel), &st));
	return st.st_size;
}

/*
 * safe.max_file_size (1M) at the boundary: a write straddling it is short
 * and the next fails with EFBIG; two processes appending at once stop at
 * the limit; writes far past it (sparse, up to the largest offset) fail
 * and leave the size alone; so do ftruncate, fallocate, copy_file_range,
 * sendfile, io_uring and RWF_APPEND past it. Nothing past the limit lands.
 */
static void test_size_limit(void **state)
{
	struct jf_mnt *m = *state;
	struct appender a[2] = {{mu_v(m, "work/app")}, {mu_v(m, "work/app")}};
	pthread_t t[2];
	off_t off;
	int fd, src;

	fd = open(mu_v(m, "work/edge"), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "abcd", 4, MAX_SAFE - 2), 2);
	EXPECT_ERR(pwrite(fd, "ef", 2, MAX_SAFE), EFBIG);
	EXPECT_ERR(pwritev2(fd, &(struct iovec){"g", 1}, 1, 0, RWF_APPEND), EFBIG);
	EXPECT_ERR(pwrite(fd, "h", 1, (off_t)1 << 40), EFBIG);
	EXPECT_ERR(pwrite(fd, "i", 1, INT64_MAX - 1), EFBIG);
	EXPECT_ERR(iu_uring_write(fd, "j", 1, MAX_SAFE, false), EFBIG);
	EXPECT_ERR(iu_aio_write(fd, "k", 1, MAX_SAFE + 4096), EFBIG);
	EXPECT_ERR(ftruncate(fd, MAX_SAFE + 1), EFBIG);
	EXPECT_ERR(iu_uring_ftruncate(fd, (off_t)1 << 40), EFBIG);
	EXPECT_ERR(fallocate(fd, FALLOC_FL_KEEP_SIZE, MAX_SAFE - 1, 2), EFBIG);
	EXPECT_ERR(fallocate(fd, FALLOC_FL_ZERO_RANGE, MAX_SAFE, 4096), EFBIG);
	src = open(mu_v(m, "work/src"), O_RDONLY | O_CLOEXEC);
	assert_true(src >= 0);
	off = 0;
	assert_int_equal(lseek(fd, 0, SEEK_END), MAX_SAFE);
	EXPECT_ERR(sendfile(fd, src, &off, 4), EFBIG); /* at the file position */
	off = MAX_SAFE;
	EXPECT_ERR(copy_file_range(src, NULL, fd, &off, 4, 0), EFBIG);
	close(src);
	close(fd);
	assert_int_equal(backing_size(m, "work/edge"), MAX_SAFE);
	assert_int_equal(mu_sh("tail -c 2 %s | grep -qx ab", mu_s(m, "work/edge")), 0);

	/* two appenders at once */
	fd = open(mu_v(m, "work/app"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, append_until_refused, &a[i]), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(a[0].err, EFBIG);
	assert_int_equal(a[1].err, EFBIG);
	assert_int_equal(a[0].written + a[1].written, MAX_SAFE);
	assert_int_equal(backing_size(m, "work/app"), MAX_SAFE);
}

/*
 * A file made without its owner's write bit (git writes its objects 0444)
 * and one made write-protected while open: the caller's fd was opened for
 * writing, so its writes land, also when the daemon runs as an ordinary
 * user that could not open the file again by name (fast_open: no handle).
 */
static void test_write_protected(void **state)
{
	struct jf_mnt *m = *state;
	char back[16] = "";
	int fd = open(mu_v(m, "work/obj"), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0444);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "object", 6), 6);
	assert_int_equal(pread(fd, back, sizeof(back) - 1, 0), 6);
	assert_string_equal(back, "object");
	assert_ok(fsync(fd));
	close(fd);
	assert_string_equal(mu_slurp(mu_s(m, "work/obj")), "object");
	/* a writable file made read-only through the fd that writes it */
	fd = open(mu_v(m, "work/late"), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "one,", 4), 4);
	assert_ok(fchmod(fd, 0444));
	assert_int_equal(write(fd, "two", 3), 3);
	close(fd);
	assert_string_equal(mu_slurp(mu_s(m, "work/late")), "one,two");
	/* and a new open for writing of either is refused by its mode, for a user */
	if (geteuid() != 0)
		EXPECT_ERR(open(mu_v(m, "work/obj"), O_WRONLY | O_CLOEXEC), EACCES);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_family, fast_setup, mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_other_mutations, fast_setup, mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_setuid_kept, fast_setup, mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_mapping_left_dirty, fast_setup,
						mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_refused_not_shown, fast_setup,
						mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_size_limit, fast_setup, mu_std_teardown),
		{"nofast_open_test_size_limit", test_size_limit, plain_setup, mu_std_teardown,
		 NULL},
		cmocka_unit_test_setup_teardown(test_write_protected, fast_setup, mu_std_teardown),
		{"nofast_open_test_write_protected", test_write_protected, plain_setup,
		 mu_std_teardown, NULL},
	};

	return mu_run_tests("mount-mutations", tests, argc, argv);
}
