/* SPDX-License-Identifier: MIT */
/*
 * Mount suite, requests without a handle: every FUSE operation that takes a
 * file handle, reached from real system calls on a real mount, in every open
 * and listing mode. In no_open (fast_open) and no_opendir (zero-message
 * listings, the default with long timeouts) modes the kernel sends those
 * requests with fh 0; with handles it sends the daemon's own. Either way
 * the daemon must stay alive and each call must answer success or an errno
 * the call documents (never ENOTCONN, EIO or ENOSYS).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "mount-util.h"

/* One call on a fd of @path opened with @flags: its result is 0 or -errno. */
typedef int (*fd_op)(int fd);

struct op {
	const char *name;
	fd_op run;
	bool dir;	/* on directories (else on regular files) */
	bool write;	/* needs a writable fd: only on SAFE files, EROFS on a --read-only view */
	bool writes;	/* writes to the view: EROFS on a --read-only view */
	bool must_fail; /* success would be wrong: only an errno of ok_errs is right */
	int ok_errs[3]; /* errnos the call may answer besides success (0-terminated) */
};

static int res(long r)
{
	return r < 0 ? -errno : 0;
}

static int op_fsync(int fd)
{
	return res(fsync(fd));
}

static int op_fdatasync(int fd)
{
	return res(fdatasync(fd));
}

static int op_syncfs(int fd)
{
	return res(syncfs(fd));
}

static int op_fstat(int fd)
{
	struct stat st;

	return res(fstat(fd, &st));
}

static int op_fstatfs(int fd)
{
	struct statfs st;

	return res(fstatfs(fd, &st));
}

static int op_read(int fd)
{
	char buf[64];

	return res(pread(fd, buf, sizeof(buf), 0));
}

static int op_mmap(int fd)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	volatile char c;

	if (p == MAP_FAILED)
		return -errno;
	c = *(volatile char *)p;
	(void)c;
	munmap(p, 4096);
	return 0;
}

static int op_sendfile(int fd)
{
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	off_t off = 0;
	long r = sendfile(null, fd, &off, 64);
	int e = errno;

	close(null);
	errno = e;
	return res(r);
}

static int op_write(int fd)
{
	return res(pwrite(fd, "safe\n", 5, 0));
}

static int op_ftruncate(int fd)
{
	return res(ftruncate(fd, 5));
}

static int op_fallocate(int fd)
{
	return res(fallocate(fd, 0, 0, 8));
}

static int op_seek_data(int fd)
{
	return res(lseek(fd, 0, SEEK_DATA));
}

static int op_seek_hole(int fd)
{
	return res(lseek(fd, 0, SEEK_HOLE));
}

static int op_seek_end(int fd)
{
	return res(lseek(fd, 0, SEEK_END));
}

static int op_fionread(int fd)
{
	int n = 0;

	return res(ioctl(fd, FIONREAD, &n));
}

static int op_getflags(int fd)
{
	long flags = 0;

	return res(ioctl(fd, FS_IOC_GETFLAGS, &flags));
}

static int op_flock(int fd)
{
	int r = res(flock(fd, LOCK_EX | LOCK_NB));

	return r ? r : res(flock(fd, LOCK_UN));
}

static int op_flock_sh(int fd)
{
	int r = res(flock(fd, LOCK_SH | LOCK_NB));

	return r ? r : res(flock(fd, LOCK_UN));
}

static int posix_lock(int fd, int cmd, short type)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
	int r = res(fcntl(fd, cmd, &fl));

	if (r || cmd == F_GETLK || cmd == F_OFD_GETLK)
		return r;
	fl.l_type = F_UNLCK;
	return res(fcntl(fd, cmd, &fl));
}

static int op_getlk(int fd)
{
	return posix_lock(fd, F_GETLK, F_WRLCK);
}

static int op_setlk_rd(int fd)
{
	return posix_lock(fd, F_SETLK, F_RDLCK);
}

static int op_setlk_wr(int fd)
{
	return posix_lock(fd, F_SETLKW, F_WRLCK);
}

static int op_ofd_setlk(int fd)
{
	return posix_lock(fd, F_OFD_SETLK, F_RDLCK);
}

static int op_poll(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT};
	int r = poll(&p, 1, 1000);

	if (r < 0)
		return -errno;
	return r == 1 && !(p.revents & (POLLERR | POLLNVAL)) ? 0 : -EIO;
}

static int op_fgetxattr(int fd)
{
	char buf[64];

	return res(fgetxattr(fd, "user.nullfh", buf, sizeof(buf)));
}

/* The SAFE file copy_file_range writes to (heap, per mode). */
static const char *nullfh_dst;

/* copy_file_range from @fd into nullfh_dst, opened here. */
static int op_copy_range(int fd)
{
	int out = open(nullfh_dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	off_t in_off = 0, out_off = 0;
	long r;
	int e;

	if (out < 0)
		return -errno;
	r = copy_file_range(fd, &in_off, out, &out_off, 64, 0);
	e = errno;
	close(out);
	errno = e;
	return res(r);
}

static int op_getdents(int fd)
{
	char buf[4096];
	long r = syscall(SYS_getdents64, fd, buf, sizeof(buf));

	if (r < 0)
		return -errno;
	/* twice from the start: a listing the kernel may cache */
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	return res(syscall(SYS_getdents64, fd, buf, sizeof(buf)));
}

static int op_fchmod(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return res(fchmod(fd, st.st_mode & 07777));
}

static const struct op ops[] = {
	{"fsync", op_fsync, false, false, false, false, {0}},
	{"fdatasync", op_fdatasync, false, false, false, false, {0}},
	{"syncfs", op_syncfs, false, false, false, false, {0}},
	{"fstat", op_fstat, false, false, false, false, {0}},
	{"fstatfs", op_fstatfs, false, false, false, false, {0}},
	{"pread", op_read, false, false, false, false, {0}},
	{"mmap", op_mmap, false, false, false, false, {0}},
	{"sendfile", op_sendfile, false, false, false, false, {0}},
	{"lseek SEEK_DATA", op_seek_data, false, false, false, false, {0}},
	{"lseek SEEK_HOLE", op_seek_hole, false, false, false, false, {0}},
	{"lseek SEEK_END", op_seek_end, false, false, false, false, {0}},
	{"ioctl FIONREAD", op_fionread, false, false, false, false, {0}},
	{"ioctl FS_IOC_GETFLAGS", op_getflags, false, false, false, false, {ENOTTY, EOPNOTSUPP}},
	{"flock LOCK_EX", op_flock, false, false, false, false, {0}},
	{"flock LOCK_SH", op_flock_sh, false, false, false, false, {0}},
	{"fcntl F_GETLK", op_getlk, false, false, false, false, {0}},
	{"fcntl F_SETLK F_RDLCK", op_setlk_rd, false, false, false, false, {0}},
	{"fcntl F_OFD_SETLK", op_ofd_setlk, false, false, false, false, {0}},
	{"poll", op_poll, false, false, false, false, {0}},
	{"fgetxattr", op_fgetxattr, false, false, false, false, {ENODATA, EOPNOTSUPP}},
	{"copy_file_range", op_copy_range, false, false, true, false, {EXDEV, EOPNOTSUPP}},
	{"fallocate on a read-only fd", op_fallocate, false, false, false, true, {EBADF}},
	{"pwrite", op_write, false, true, false, false, {0}},
	{"ftruncate", op_ftruncate, false, true, false, false, {0}},
	{"fallocate", op_fallocate, false, true, false, false, {0}},
	{"fcntl F_SETLKW F_WRLCK", op_setlk_wr, false, true, false, false, {0}},
	{"fchmod", op_fchmod, false, true, false, false, {0}},
	{"fsync (directory)", op_fsync, true, false, false, false, {0}},
	{"fdatasync (directory)", op_fdatasync, true, false, false, false, {0}},
	{"syncfs (directory)", op_syncfs, true, false, false, false, {0}},
	{"fstat (directory)", op_fstat, true, false, false, false, {0}},
	{"getdents64", op_getdents, true, false, false, false, {0}},
	{"lseek SEEK_END (directory)", op_seek_end, true, false, false, false, {EINVAL}},
	{"ioctl FIONREAD (directory)", op_fionread, true, false, false, false, {ENOTTY, EINVAL}},
	{"FS_IOC_GETFLAGS (directory)",
	 op_getflags,
	 true,
	 false,
	 false,
	 false,
	 {ENOTTY, EOPNOTSUPP}},
	{"flock LOCK_EX (directory)", op_flock, true, false, false, false, {0}},
	{"poll (directory)", op_poll, true, false, false, false, {0}},
	{"fgetxattr (directory)", op_fgetxattr, true, false, false, false, {ENODATA, EOPNOTSUPP}},
};

struct mode {
	const char *name;
	const char *opts;
	bool read_only;
	bool audit;
};

static const struct mode modes[] = {
	{"default (passthrough, zero-message listings)", "nofast_open", false, false},
	{"listings with handles", "nofast_open,entry_timeout=1,attr_timeout=1", false, false},
	{"fast_open", "fast_open", false, false},
	{"fast_open, listings with handles", "fast_open,entry_timeout=1,attr_timeout=1", false,
	 false},
	{"nopassthrough", "nofast_open,nopassthrough", false, false},
	{"io_uring", "io_uring", false, false},
	{"--read-only", "fast_open", true, false},
	{"audit level all", "nofast_open", false, true},
};

/* Is the daemon of @m alive and its mount answering? */
static bool daemon_serves(const struct jf_mnt *m)
{
	struct stat st;

	return waitpid(m->pid, NULL, WNOHANG) == 0 && stat(m->mnt, &st) == 0;
}

static bool allowed(const struct op *o, int r, bool ro)
{
	if ((o->write || o->writes) && ro)
		return r == -EROFS;
	if (r == 0)
		return !o->must_fail;
	for (size_t i = 0; i < 3 && o->ok_errs[i]; i++)
		if (r == -o->ok_errs[i])
			return true;
	return false;
}

/* Run @o on view path @rel of @m, opened with @flags; fails the test when the
 * answer is not one @o allows or the daemon died. */
static void run_op(const struct jf_mnt *m, const struct mode *md, const struct op *o,
		   const char *rel, int flags)
{
	int fd = open(mu_v(m, rel), flags | O_CLOEXEC);
	int r = -EBADF;

	rel = rel[0] ? rel : "/";

	if (fd < 0 && o->write && md->read_only && errno == EROFS)
		r = -EROFS;
	else if (fd < 0)
		fail_msg("%s: open %s: %s", md->name, rel, strerror(errno));
	else
		r = o->run(fd);
	if (fd >= 0 && close(fd) < 0)
		fail_msg("%s: %s on %s: close: %s", md->name, o->name, rel, strerror(errno));
	if (!daemon_serves(m))
		fail_msg("%s: %s on %s: the daemon died (%s)", md->name, o->name, rel,
			 strerror(-r));
	if (!allowed(o, r, md->read_only))
		fail_msg("%s: %s on %s: %s", md->name, o->name, rel, r ? strerror(-r) : "success");
}

static void run_mode(const struct mode *md)
{
	static const char *const files[] = {"work/f", "ro/f"};
	static const char *const dirs[] = {"", "work", "work/d", "ro", "ro/d"};
	char audit[600];
	const char *args[12] = {"--policy", mu_policy_path, "-o", md->opts};
	size_t n = 4;
	void *state = NULL;
	struct jf_mnt *m;

	snprintf(audit, sizeof(audit), "/tmp/jf-nullfh-%d.jsonl", (int)getpid());
	if (md->read_only)
		args[n++] = "--read-only";
	if (md->audit) {
		args[n++] = "--audit";
		args[n++] = audit;
		args[n++] = "--audit-level";
		args[n++] = "all";
	}
	if (mu_setup_with(&state, args, NULL) < 0)
		fail_msg("%s: the view did not mount", md->name);
	m = state;
	nullfh_dst = mu_v(m, "work/copy");
	nullfh_dst = strdup(nullfh_dst);
	/* open(2) first: in no_open mode the OPEN answered ENOSYS is this one */
	close(open(mu_v(m, "work/f"), O_RDONLY | O_CLOEXEC));
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const struct op *o = &ops[i];

		if (o->dir) {
			for (size_t k = 0; k < sizeof(dirs) / sizeof(dirs[0]); k++)
				run_op(m, md, o, dirs[k], O_RDONLY | O_DIRECTORY);
			continue;
		}
		run_op(m, md, o, files[0], o->write ? O_RDWR : O_RDONLY);
		if (!o->write)
			run_op(m, md, o, files[1], O_RDONLY);
	}
	free((void *)nullfh_dst);
	if (!daemon_serves(m))
		fail_msg("%s: the daemon died", md->name);
	mu_std_teardown(&state);
	unlink(audit);
}

#define MODE_TEST(i)                                                                               \
	static void test_mode_##i(void **state)                                                    \
	{                                                                                          \
		(void)state;                                                                       \
		run_mode(&modes[i]);                                                               \
	}

MODE_TEST(0)
MODE_TEST(1)
MODE_TEST(2)
MODE_TEST(3)
MODE_TEST(4)
MODE_TEST(5)
MODE_TEST(6)
MODE_TEST(7)

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode_0), cmocka_unit_test(test_mode_1),
		cmocka_unit_test(test_mode_2), cmocka_unit_test(test_mode_3),
		cmocka_unit_test(test_mode_4), cmocka_unit_test(test_mode_5),
		cmocka_unit_test(test_mode_6), cmocka_unit_test(test_mode_7),
	};

	return mu_run_tests("mount-nullfh", tests, argc, argv);
}
