/* SPDX-License-Identifier: MIT */
/*
 * POSIX in SAFE: a conformance suite of the project's own, on a real jailfs
 * daemon over a real tree on the disk, run once per data path:
 *   test-posix passthrough     the default mount: as root on Linux >= 6.9
 *                              the kernel reads and writes open files itself
 *                              (FUSE passthrough); checked to be really on
 *                              through the daemon's request counters
 *   test-posix nopassthrough   -o nopassthrough: every read and write is a
 *                              request to the daemon
 *   test-posix MODE io_uring   the same with -o io_uring, the fuse module's
 *                              enable_uring turned on for the run (and put
 *                              back); checked to serve requests from the
 *                              rings through the daemon's request counters
 * Each syscall's success and errno cases, timestamps after write, truncate,
 * rename and link, link counts, sticky directories, O_EXCL, long names and
 * long symlink targets. Results are compared with the backing tree where
 * the view could lie (sizes, times, contents).
 *
 * The view's deliberate differences are asserted as documented (README,
 * "POSIX"): set-ID bits cleared on every write and refused by chmod,
 * directories' st_nlink of 1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mount-util.h"

static struct jf_mnt M;
static char stats_path[400];
static bool passthrough;       /* the mode asked for on the command line */
static bool pt_active;	       /* ... and found on (counters) */
static bool io_uring;	       /* -o io_uring asked for */
static char uring_saved = 'N'; /* enable_uring before the run */
static int seq;
static char changes[300]; /* the overlay mode's DIR (--changes), or "" */

/* A fresh SAFE directory per test: "t<N>". Returns its view-relative name. */
static const char *fresh_dir(void)
{
	static char rel[32];

	snprintf(rel, sizeof(rel), "t%d", ++seq);
	mu_mkdir(&M, rel);
	return rel;
}

static const char *v(const char *dir, const char *name)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/%s", dir, name);
	return mu_v(&M, rel);
}

/* The backing object of @dir/@name: SOURCE's, or in the overlay mode what
 * the overlay shows there: DIR/upper's entry if it has one (a path that
 * does not exist for a whiteout), else SOURCE's. */
static const char *s(const char *dir, const char *name)
{
	static char up[4][PATH_MAX + 400];
	static int next;
	char rel[PATH_MAX], *u = up[next++ % 4];
	struct stat st;

	snprintf(rel, sizeof(rel), "%s/%s", dir, name);
	if (!changes[0])
		return mu_s(&M, rel);
	snprintf(u, PATH_MAX + 400, "%s/upper/%s", changes, rel);
	if (lstat(u, &st) < 0)
		return mu_s(&M, rel);
	return S_ISCHR(st.st_mode) && st.st_rdev == 0 ? "/nonexistent/whiteout" : u;
}

static void pause_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};

	nanosleep(&ts, NULL);
}

static int ts_cmp(struct timespec a, struct timespec b)
{
	if (a.tv_sec != b.tv_sec)
		return a.tv_sec < b.tv_sec ? -1 : 1;
	return a.tv_nsec < b.tv_nsec ? -1 : a.tv_nsec > b.tv_nsec;
}

#define assert_later(a, b) assert_true(ts_cmp((a), (b)) > 0)
#define assert_same_time(a, b) assert_int_equal(ts_cmp((a), (b)), 0)

static void write_all(int fd, const char *data)
{
	assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
}

static char *slurp(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	return buf;
}

static uint64_t requests(const char *kind)
{
	uint64_t n = 0;

	if (mu_requests(M.pid, stats_path, kind, &n) < 0)
		fail_msg("no request counters from the daemon (%s)", stats_path);
	return n;
}

/* ---------- open, create, O_EXCL ---------- */

static void test_create_excl(void **state)
{
	const char *d = fresh_dir();
	struct stat st;
	mode_t old = umask(022);
	int fd;

	fd = open(v(d, "f"), O_CREAT | O_EXCL | O_WRONLY, 0666);
	assert_true(fd >= 0);
	close(fd);
	assert_ok(stat(s(d, "f"), &st));
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_errno(open(v(d, "f"), O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
	/* O_EXCL fails on a symlink even when it dangles, and creates nothing */
	assert_ok(symlink("nowhere", v(d, "dangling")));
	assert_errno(open(v(d, "dangling"), O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
	assert_errno(lstat(s(d, "nowhere"), &st), ENOENT);
	/* without O_EXCL an existing file is opened, not recreated */
	fd = open(v(d, "f"), O_CREAT | O_WRONLY | O_APPEND, 0600);
	assert_true(fd >= 0);
	write_all(fd, "kept");
	close(fd);
	assert_ok(stat(s(d, "f"), &st));
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_string_equal(slurp(s(d, "f")), "kept");
	umask(old);
}

static void test_open_errors(void **state)
{
	const char *d = fresh_dir();

	assert_ok(mu_sh("echo data > '%s'", v(d, "file")));
	assert_errno(open(v(d, "absent"), O_RDONLY), ENOENT);
	assert_errno(open(v(d, "absent/x"), O_RDONLY), ENOENT);
	assert_errno(open(v(d, "file/x"), O_RDONLY), ENOTDIR);
	assert_errno(open(v(d, "file/x"), O_CREAT | O_WRONLY, 0644), ENOTDIR);
	assert_errno(open(mu_v(&M, d), O_WRONLY), EISDIR);
	assert_errno(open(v(d, "file"), O_RDONLY | O_DIRECTORY), ENOTDIR);
	assert_ok(symlink("file", v(d, "link")));
	assert_errno(open(v(d, "link"), O_RDONLY | O_NOFOLLOW), ELOOP);
}

/* ---------- read and write ---------- */

static void test_read_write(void **state)
{
	const char *d = fresh_dir();
	char buf[64] = "";
	struct stat st, bst;
	int fd, ro;

	fd = open(v(d, "f"), O_CREAT | O_RDWR, 0644);
	assert_true(fd >= 0);
	write_all(fd, "hello");
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(read(fd, buf, sizeof(buf)), 0); /* at EOF */
	/* a write past the end leaves a hole of zeros */
	assert_int_equal(pwrite(fd, "!", 1, 10), 1);
	assert_ok(fstat(fd, &st));
	assert_int_equal(st.st_size, 11);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 11);
	assert_memory_equal(buf, "hello\0\0\0\0\0!", 11);
	assert_ok(stat(s(d, "f"), &bst));
	assert_int_equal(bst.st_size, 11);
	assert_ok(stat(v(d, "f"), &st));
	assert_int_equal(st.st_size, 11);
	close(fd);
	/* O_APPEND writes at the end whatever the offset */
	fd = open(v(d, "f"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	write_all(fd, "END");
	close(fd);
	assert_ok(stat(s(d, "f"), &bst));
	assert_int_equal(bst.st_size, 14);
	assert_memory_equal(slurp(s(d, "f")) + 11, "END", 3);
	/* access modes */
	ro = open(v(d, "f"), O_RDONLY);
	fd = open(v(d, "f"), O_WRONLY);
	assert_true(ro >= 0 && fd >= 0);
	assert_errno(write(ro, "x", 1), EBADF);
	assert_errno(read(fd, buf, 1), EBADF);
	assert_errno(ftruncate(ro, 0), EINVAL);
	close(ro);
	close(fd);
}

/* A handle opened before another one writes sees the new data and size. */
static void test_two_handles(void **state)
{
	const char *d = fresh_dir();
	char buf[64] = "";
	struct stat st;
	int r, w;

	assert_ok(mu_sh("printf abc > '%s'", v(d, "f")));
	r = open(v(d, "f"), O_RDONLY);
	w = open(v(d, "f"), O_WRONLY | O_APPEND);
	assert_true(r >= 0 && w >= 0);
	assert_int_equal(read(r, buf, sizeof(buf)), 3);
	write_all(w, "defg");
	assert_ok(fstat(r, &st));
	assert_int_equal(st.st_size, 7);
	assert_int_equal(read(r, buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "defg", 4);
	close(r);
	close(w);
}

static void test_mmap_shared(void **state)
{
	const char *d = fresh_dir();
	char *p;
	int fd;

	fd = open(v(d, "f"), O_CREAT | O_RDWR, 0644);
	assert_true(fd >= 0);
	assert_ok(ftruncate(fd, 4096));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	memcpy(p, "mapped", 6);
	assert_ok(msync(p, 4096, MS_SYNC));
	assert_ok(munmap(p, 4096));
	close(fd);
	assert_memory_equal(slurp(s(d, "f")), "mapped", 6);
	assert_memory_equal(slurp(v(d, "f")), "mapped", 6);
}

static void test_truncate(void **state)
{
	const char *d = fresh_dir();
	char buf[16];
	struct stat a, b, bk;
	int fd;

	assert_ok(mu_sh("printf 0123456789 > '%s'", v(d, "f")));
	assert_ok(stat(v(d, "f"), &a));
	pause_ms(20);
	assert_ok(truncate(v(d, "f"), 4));
	assert_ok(stat(v(d, "f"), &b));
	assert_int_equal(b.st_size, 4);
	assert_later(b.st_mtim, a.st_mtim);
	assert_later(b.st_ctim, a.st_ctim);
	assert_ok(stat(s(d, "f"), &bk));
	assert_same_time(b.st_mtim, bk.st_mtim);
	/* growing fills with zeros */
	fd = open(v(d, "f"), O_RDWR);
	assert_true(fd >= 0);
	pause_ms(20);
	assert_ok(ftruncate(fd, 8));
	assert_ok(fstat(fd, &a));
	assert_int_equal(a.st_size, 8);
	assert_later(a.st_mtim, b.st_mtim);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 8);
	assert_memory_equal(buf, "0123\0\0\0\0", 8);
	close(fd);
	assert_errno(truncate(v(d, "absent"), 0), ENOENT);
	assert_errno(truncate(mu_v(&M, d), 0), EISDIR);
}

static void test_fsync(void **state)
{
	const char *d = fresh_dir();
	int fd = open(v(d, "f"), O_CREAT | O_WRONLY, 0644);

	assert_true(fd >= 0);
	write_all(fd, "x");
	assert_ok(fsync(fd));
	assert_ok(fdatasync(fd));
	close(fd);
	assert_string_equal(slurp(s(d, "f")), "x");
}

/* ---------- timestamps ---------- */

static void test_times_write(void **state)
{
	const char *d = fresh_dir();
	struct stat a, b, bk;
	int fd;

	fd = open(v(d, "f"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	write_all(fd, "one");
	assert_ok(fstat(fd, &a));
	pause_ms(20);
	write_all(fd, "two");
	assert_ok(fstat(fd, &b));
	assert_later(b.st_mtim, a.st_mtim);
	assert_later(b.st_ctim, a.st_ctim);
	close(fd);
	/* what stat(2) shows after close is what the disk has */
	assert_ok(stat(v(d, "f"), &b));
	assert_ok(stat(s(d, "f"), &bk));
	assert_int_equal(b.st_size, 6);
	assert_same_time(b.st_mtim, bk.st_mtim);
	assert_same_time(b.st_ctim, bk.st_ctim);
}

static void test_times_rename(void **state)
{
	const char *d = fresh_dir();
	char sub[64];
	struct stat f0, f1, d0, d1, e0, e1;

	snprintf(sub, sizeof(sub), "%s/sub", d);
	mu_mkdir(&M, sub);
	assert_ok(mu_sh("echo a > '%s'", v(d, "f")));
	assert_ok(stat(v(d, "f"), &f0));
	assert_ok(stat(mu_v(&M, d), &d0));
	assert_ok(stat(mu_v(&M, sub), &e0));
	pause_ms(20);
	assert_ok(rename(v(d, "f"), v(sub, "g")));
	assert_ok(stat(v(sub, "g"), &f1));
	assert_ok(stat(mu_v(&M, d), &d1));
	assert_ok(stat(mu_v(&M, sub), &e1));
	assert_int_equal(f1.st_ino, f0.st_ino);
	assert_same_time(f1.st_mtim, f0.st_mtim);
	assert_later(f1.st_ctim, f0.st_ctim); /* Linux marks the renamed inode changed */
	assert_later(d1.st_mtim, d0.st_mtim);
	assert_later(e1.st_mtim, e0.st_mtim);
	assert_later(e1.st_ctim, e0.st_ctim);
}

static void test_times_link(void **state)
{
	const char *d = fresh_dir();
	struct stat f0, f1, d0, d1;

	assert_ok(mu_sh("echo a > '%s'", v(d, "f")));
	assert_ok(stat(v(d, "f"), &f0));
	assert_ok(stat(mu_v(&M, d), &d0));
	pause_ms(20);
	assert_ok(link(v(d, "f"), v(d, "g")));
	assert_ok(stat(v(d, "f"), &f1));
	assert_ok(stat(mu_v(&M, d), &d1));
	assert_later(f1.st_ctim, f0.st_ctim);
	assert_same_time(f1.st_mtim, f0.st_mtim);
	assert_later(d1.st_mtim, d0.st_mtim);
	pause_ms(20);
	assert_ok(unlink(v(d, "g")));
	assert_ok(stat(v(d, "f"), &f0));
	assert_ok(stat(mu_v(&M, d), &d0));
	assert_later(f0.st_ctim, f1.st_ctim);
	assert_later(d0.st_mtim, d1.st_mtim);
}

static void test_utimens(void **state)
{
	const char *d = fresh_dir();
	struct timespec t[2] = {{1000000000, 123456789}, {1100000000, 987654321}};
	struct timespec omit[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
	struct stat st, bk;

	assert_ok(mu_sh("echo a > '%s'", v(d, "f")));
	assert_ok(utimensat(AT_FDCWD, v(d, "f"), t, 0));
	assert_ok(stat(v(d, "f"), &st));
	assert_same_time(st.st_atim, t[0]);
	assert_same_time(st.st_mtim, t[1]);
	assert_ok(stat(s(d, "f"), &bk));
	assert_same_time(bk.st_mtim, t[1]);
	assert_ok(utimensat(AT_FDCWD, v(d, "f"), omit, 0));
	assert_ok(stat(v(d, "f"), &st));
	assert_same_time(st.st_atim, t[0]);
	assert_true(st.st_mtim.tv_sec > t[1].tv_sec);
	assert_errno(utimensat(AT_FDCWD, v(d, "absent"), t, 0), ENOENT);
}

/* ---------- link counts, unlinked open files ---------- */

static void test_link_counts(void **state)
{
	const char *d = fresh_dir();
	char buf[16] = "";
	struct stat st;
	int fd;

	fd = open(v(d, "f"), O_CREAT | O_RDWR, 0644);
	assert_true(fd >= 0);
	assert_ok(fstat(fd, &st));
	assert_int_equal(st.st_nlink, 1);
	assert_ok(link(v(d, "f"), v(d, "g")));
	assert_ok(stat(v(d, "f"), &st));
	assert_int_equal(st.st_nlink, 2);
	assert_ok(stat(v(d, "g"), &st));
	assert_int_equal(st.st_nlink, 2);
	assert_errno(link(v(d, "f"), v(d, "g")), EEXIST);
	assert_errno(link(mu_v(&M, d), v(d, "dirlink")), EPERM);
	assert_errno(link(v(d, "absent"), v(d, "h")), ENOENT);
	assert_ok(unlink(v(d, "g")));
	assert_ok(stat(v(d, "f"), &st));
	assert_int_equal(st.st_nlink, 1);
	/* the last name goes; the open file stays usable */
	assert_ok(unlink(v(d, "f")));
	assert_ok(fstat(fd, &st));
	assert_int_equal(st.st_nlink, 0);
	write_all(fd, "still");
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 5);
	assert_memory_equal(buf, "still", 5);
	close(fd);
	assert_errno(stat(s(d, "f"), &st), ENOENT);
	assert_errno(unlink(v(d, "f")), ENOENT);
}

/* ---------- directories, rename ---------- */

static void test_dirs(void **state)
{
	const char *d = fresh_dir();
	char sub[64];
	struct stat st;

	snprintf(sub, sizeof(sub), "%s/sub", d);
	assert_ok(mkdir(mu_v(&M, sub), 0755));
	assert_errno(mkdir(mu_v(&M, sub), 0755), EEXIST);
	assert_ok(mu_sh("echo a > '%s'", v(sub, "f")));
	assert_errno(rmdir(mu_v(&M, sub)), ENOTEMPTY);
	assert_errno(rmdir(v(sub, "f")), ENOTDIR);
	assert_errno(unlink(mu_v(&M, sub)), EISDIR);
	assert_errno(mkdir(v(d, "absent/x"), 0755), ENOENT);
	/* deliberate difference: directories show st_nlink 1 (README) */
	assert_ok(stat(mu_v(&M, sub), &st));
	assert_int_equal(st.st_nlink, 1);
	assert_ok(unlink(v(sub, "f")));
	assert_ok(rmdir(mu_v(&M, sub)));
	assert_errno(stat(mu_s(&M, sub), &st), ENOENT);
}

static void test_rename_errors(void **state)
{
	const char *d = fresh_dir();
	char a[64], b[64], c[64];
	int fd;

	snprintf(a, sizeof(a), "%s/a", d);
	snprintf(b, sizeof(b), "%s/b", d);
	snprintf(c, sizeof(c), "%s/a/c", d);
	mu_mkdir(&M, a);
	mu_mkdir(&M, b);
	mu_mkdir(&M, c);
	assert_ok(mu_sh("echo f > '%s'; echo g > '%s'", v(d, "f"), v(d, "g")));
	assert_errno(rename(v(d, "f"), mu_v(&M, b)), EISDIR);
	assert_errno(rename(mu_v(&M, b), v(d, "f")), ENOTDIR);
	/* overlay mode: a directory of SOURCE never moves (jailfs(1), OVERLAY MODE) */
	assert_errno(rename(mu_v(&M, b), mu_v(&M, a)), changes[0] ? EXDEV : ENOTEMPTY);
	assert_errno(rename(mu_v(&M, a), v(c, "inside")), EINVAL);
	assert_errno(rename(v(d, "absent"), v(d, "x")), ENOENT);
	assert_errno(renameat2(AT_FDCWD, v(d, "f"), AT_FDCWD, v(d, "g"), RENAME_NOREPLACE), EEXIST);
	assert_ok(renameat2(AT_FDCWD, v(d, "f"), AT_FDCWD, v(d, "g"), RENAME_EXCHANGE));
	assert_string_equal(slurp(s(d, "f")), "g\n");
	assert_string_equal(slurp(s(d, "g")), "f\n");
	/* replacing a file: an open handle keeps the old one */
	fd = open(v(d, "g"), O_RDONLY);
	assert_true(fd >= 0);
	assert_ok(rename(v(d, "f"), v(d, "g")));
	assert_string_equal(slurp(v(d, "g")), "g\n");
	{
		char buf[8] = "";

		assert_int_equal(read(fd, buf, sizeof(buf)), 2);
		assert_string_equal(buf, "f\n");
	}
	close(fd);
	/* an empty directory may be replaced by a directory (in the overlay
	 * mode one the view made: SOURCE's answer EXDEV) */
	assert_ok(rmdir(mu_v(&M, c)));
	if (changes[0]) {
		assert_errno(rename(mu_v(&M, b), mu_v(&M, a)), EXDEV);
		assert_ok(mkdir(v(d, "made"), 0755));
		snprintf(b, sizeof(b), "%s/made", d);
	}
	assert_ok(rename(mu_v(&M, b), mu_v(&M, a)));
	assert_errno(access(s(d, changes[0] ? "made" : "b"), F_OK), ENOENT);
}

/* ---------- sticky directories ---------- */

/* Run @fn(@arg) as uid/gid @id in a child; its errno (0 on success). */
static int as_user(uid_t id, int (*fn)(const char *, const char *), const char *a, const char *b)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(id, id, id) < 0 ||
		    setresuid(id, id, id) < 0)
			_exit(200);
		_exit(fn(a, b) < 0 ? errno : 0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int do_unlink(const char *a, const char *b)
{
	(void)b;
	return unlink(a);
}

static int do_rename(const char *a, const char *b)
{
	return rename(a, b);
}

static int do_create(const char *a, const char *b)
{
	int fd = open(a, O_CREAT | O_EXCL | O_WRONLY, 0644);

	(void)b;
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void test_sticky(void **state)
{
	const char *d = fresh_dir();
	char tmp[64];
	struct stat st;

	if (geteuid() != 0)
		skip(); /* needs other users; the CI runs the mount suite as root */
	snprintf(tmp, sizeof(tmp), "%s/tmp", d);
	assert_ok(mkdir(mu_v(&M, tmp), 0777));
	assert_ok(chmod(mu_v(&M, tmp), 01777));
	assert_ok(chmod(mu_v(&M, d), 0755));
	assert_ok(stat(mu_v(&M, tmp), &st));
	assert_int_equal(st.st_mode & 07777, 01777);
	assert_int_equal(as_user(1000, do_create, v(tmp, "mine"), NULL), 0);
	assert_ok(stat(s(tmp, "mine"), &st));
	assert_int_equal(st.st_uid, 1000);
	/* another user may create but neither remove nor rename it */
	assert_int_equal(as_user(1001, do_create, v(tmp, "theirs"), NULL), 0);
	assert_int_equal(as_user(1001, do_unlink, v(tmp, "mine"), NULL), EPERM);
	assert_int_equal(as_user(1001, do_rename, v(tmp, "mine"), v(tmp, "taken")), EPERM);
	assert_int_equal(as_user(1001, do_rename, v(tmp, "theirs"), v(tmp, "mine")), EPERM);
	assert_ok(stat(s(tmp, "mine"), &st));
	assert_int_equal(st.st_uid, 1000);
	/* the owner may */
	assert_int_equal(as_user(1000, do_unlink, v(tmp, "mine"), NULL), 0);
	assert_errno(stat(s(tmp, "mine"), &st), ENOENT);
}

/* ---------- long names and targets ---------- */

static void test_long_names(void **state)
{
	const char *d = fresh_dir();
	char n255[256], n256[257];
	bool seen = false;
	struct dirent *de;
	struct stat st;
	DIR *dp;
	int fd;

	memset(n255, 'n', 255);
	n255[255] = '\0';
	memset(n256, 'n', 256);
	n256[256] = '\0';
	fd = open(v(d, n255), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_ok(stat(v(d, n255), &st));
	assert_ok(stat(s(d, n255), &st));
	dp = opendir(mu_v(&M, d));
	assert_non_null(dp);
	while ((de = readdir(dp)))
		seen |= strcmp(de->d_name, n255) == 0;
	closedir(dp);
	assert_true(seen);
	/* one byte more: ENAMETOOLONG for every call, nothing on disk */
	assert_errno(open(v(d, n256), O_CREAT | O_WRONLY, 0644), ENAMETOOLONG);
	assert_errno(stat(v(d, n256), &st), ENAMETOOLONG);
	assert_errno(mkdir(v(d, n256), 0755), ENAMETOOLONG);
	assert_errno(symlink("x", v(d, n256)), ENAMETOOLONG);
	assert_errno(link(v(d, n255), v(d, n256)), ENAMETOOLONG);
	assert_errno(rename(v(d, n255), v(d, n256)), ENAMETOOLONG);
	assert_errno(unlink(v(d, n256)), ENAMETOOLONG);
	assert_ok(stat(s(d, n255), &st));
	assert_ok(unlink(v(d, n255)));
	assert_errno(stat(s(d, n255), &st), ENOENT);
}

static void test_long_symlink_targets(void **state)
{
	const char *d = fresh_dir();
	static char target[4096], got[4096], deep[PATH_MAX];
	size_t n = 0;
	ssize_t k;

	/* 4,095 bytes, the most a target may have: ./././.../fffff */
	while (n < 4090)
		n += (size_t)snprintf(target + n, sizeof(target) - n, "./");
	n += (size_t)snprintf(target + n, sizeof(target) - n, "fffff");
	assert_int_equal(n, 4095);
	assert_ok(mu_sh("echo long > '%s'", v(d, "fffff")));
	assert_ok(symlink(target, v(d, "l")));
	k = readlink(v(d, "l"), got, sizeof(got));
	assert_int_equal(k, 4095);
	assert_memory_equal(got, target, 4095);
	assert_string_equal(slurp(v(d, "l")), "long\n");
	k = readlink(s(d, "l"), got, sizeof(got));
	assert_int_equal(k, 4095);
	/* a target that descends below a deep directory: dir path plus target
	 * exceed PATH_MAX, yet the link stays in the view */
	snprintf(deep, sizeof(deep), "%s", d);
	for (int i = 0; i < 60; i++)
		strcat(deep, "/dddddddddddddddddddddddddddddddddddddddddddddddddd");
	assert_ok(mu_sh("mkdir -p '%s'", mu_v(&M, deep)));
	n = 0;
	for (int i = 0; i < 600; i++)
		n += (size_t)snprintf(target + n, sizeof(target) - n, "x/");
	target[n++] = 'f';
	target[n] = '\0';
	assert_ok(symlink(target, v(deep, "l")));
	k = readlink(s(deep, "l"), got, sizeof(got));
	assert_int_equal(k, (ssize_t)n);
	/* still refused: one that names a DENIED path on its way */
	snprintf(target, sizeof(target), ".env/x");
	assert_errno(symlink(target, v(deep, "l2")), EACCES);
	assert_errno(access(s(deep, "l2"), F_OK), ENOENT);
}

/* ---------- deliberate difference: set-ID bits ---------- */

static void test_setid_cleared(void **state)
{
	const char *d = fresh_dir();
	struct stat st;
	int fd;

	assert_ok(mu_sh("echo a > '%s' && chmod 4755 '%s' && echo b > '%s' && chmod 2775 '%s'",
			s(d, "suid"), s(d, "suid"), s(d, "sgid"), s(d, "sgid")));
	fd = open(v(d, "suid"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	write_all(fd, "x");
	close(fd);
	assert_ok(stat(s(d, "suid"), &st));
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_ok(truncate(v(d, "sgid"), 0));
	assert_ok(stat(s(d, "sgid"), &st));
	assert_int_equal(st.st_mode & 07777, 0775);
	assert_ok(stat(v(d, "sgid"), &st));
	assert_int_equal(st.st_mode & 07777, 0775);
	/* chmod never makes one */
	assert_ok(chmod(v(d, "suid"), 04755));
	assert_ok(stat(s(d, "suid"), &st));
	assert_int_equal(st.st_mode & 07777, 0755);
}

/* ---------- the data path itself ---------- */

static bool kernel_has_passthrough(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	return uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	       (major > 6 || (major == 6 && minor >= 9));
}

/* With passthrough, reading and writing an open file sends no READ or WRITE
 * to the daemon; without, it does. Files under 1 MiB opened only for
 * reading are read through the daemon either way (the kernel then keeps
 * their pages across opens). */
static void test_data_path(void **state)
{
	const char *d = fresh_dir();
	static char buf[1 << 20];
	uint64_t r0, w0, r1, w1;
	int fd;

	memset(buf, 'z', sizeof(buf));
	r0 = requests("READ");
	w0 = requests("WRITE");
	fd = open(v(d, "big"), O_CREAT | O_RDWR, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	close(fd);
	assert_ok(mu_sh("echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; "
			"cat '%s' > /dev/null",
			v(d, "big")));
	r1 = requests("READ");
	w1 = requests("WRITE");
	if (pt_active) {
		assert_int_equal(r1, r0);
		assert_int_equal(w1, w0);
	} else {
		assert_true(r1 > r0);
		assert_true(w1 > w0);
	}
	assert_ok(mu_sh("printf small > '%s'", v(d, "small")));
	assert_string_equal(slurp(v(d, "small")), "small");
	assert_true(requests("READ") > r1);
}

/* Every order of read and write handles on one inode, small and large: the
 * kernel wants all handles of an inode on one data path (else open(2) fails
 * with EIO), and the data stays coherent. */
static void mixed(const char *path, size_t size, bool reader_first)
{
	static char buf[(1 << 20) + 16];
	char tail[8] = "";
	int r = -1, w;

	memset(buf, 'm', size);
	assert_ok(mu_sh("head -c %zu /dev/zero | tr '\\0' m > '%s'", size, path));
	if (reader_first)
		r = open(path, O_RDONLY);
	w = open(path, O_WRONLY | O_APPEND);
	if (!reader_first)
		r = open(path, O_RDONLY);
	assert_true(r >= 0 && w >= 0);
	assert_int_equal(read(r, buf, size), (ssize_t)size);
	write_all(w, "TAIL");
	assert_int_equal(read(r, tail, sizeof(tail)), 4);
	assert_memory_equal(tail, "TAIL", 4);
	close(w);
	close(r);
}

static void test_mixed_handles(void **state)
{
	const char *d = fresh_dir();

	mixed(v(d, "small-r"), 100, true);
	mixed(v(d, "small-w"), 100, false);
	mixed(v(d, "large-r"), 1 << 20, true);
	mixed(v(d, "large-w"), 1 << 20, false);
	assert_memory_equal(slurp(s(d, "small-w")) + 100, "TAIL", 4);
}

/* A RESTRICTED file (.git/config in the default policy) large enough to
 * pass through is read from the disk and cannot be opened for writing. */
static void test_restricted_read(void **state)
{
	const char *d = fresh_dir();
	char git[64], buf[16] = "";
	uint64_t sum;
	int fd;

	snprintf(git, sizeof(git), "%s/.git", d);
	mu_mkdir(&M, git);
	assert_ok(mu_sh("head -c 2097152 /dev/zero | tr '\\0' c > '%s'", s(git, "config")));
	sum = mu_tree_sum(&M, NULL);
	fd = open(v(git, "config"), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, 4, 2097148), 4);
	assert_memory_equal(buf, "cccc", 4);
	assert_errno(write(fd, "x", 1), EBADF);
	assert_errno(open(v(git, "config"), O_WRONLY), EROFS);
	close(fd);
	assert_true(mu_tree_sum(&M, NULL) == sum);
}

/* The host moves a SAFE file to a RESTRICTED name: new write opens are
 * refused and the file is shown read-only. A handle opened for writing
 * before keeps writing with passthrough (checked at open, as POSIX checks
 * permissions; README) and is refused through the daemon. */
static void test_host_move_to_restricted(void **state)
{
	const char *d = fresh_dir();
	char g[64], git[64];
	struct stat st;
	ssize_t n;
	int fd;

	/* overlay mode: the view's write copied g/config, and a host rename in
	 * SOURCE under a copy is a conflict the view does not follow */
	if (changes[0])
		skip();
	snprintf(g, sizeof(g), "%s/g", d);
	snprintf(git, sizeof(git), "%s/.git", d);
	mu_mkdir(&M, g);
	assert_ok(mu_sh("echo '[core]' > '%s'", s(g, "config")));
	fd = open(v(g, "config"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	write_all(fd, "a\n");
	assert_ok(rename(mu_s(&M, g), mu_s(&M, git)));
	for (int i = 0; i < 150 && stat(v(git, "config"), &st) < 0; i++)
		pause_ms(20);
	assert_ok(stat(v(git, "config"), &st));
	/* the daemon sees opens here (no fast_open): it refuses, for everyone */
	assert_errno(open(v(git, "config"), O_WRONLY | O_APPEND), EROFS);
	errno = 0;
	n = write(fd, "b\n", 2);
	if (pt_active)
		assert_int_equal(n, 2);
	else
		assert_true(n == -1 && errno == EROFS);
	close(fd);
}

/* ---------- set-up ---------- */

#define ENABLE_URING "/sys/module/fuse/parameters/enable_uring"

/* Write @c to the fuse module's enable_uring; with @old, save what it was. */
static int set_enable_uring(char c, char *old)
{
	int fd = open(ENABLE_URING, O_RDWR | O_CLOEXEC);
	int r = fd < 0 ? -1 : 0;

	if (fd >= 0 && old && read(fd, old, 1) != 1)
		r = -1;
	if (fd >= 0 && pwrite(fd, &c, 1, 0) != 1)
		r = -1;
	if (fd >= 0)
		close(fd);
	if (r < 0)
		fprintf(stderr, "test-posix: cannot set %s: %s\n", ENABLE_URING, strerror(errno));
	return r;
}

/* With io_uring, requests after the probe must have come from the rings. */
static int check_uring(void)
{
	uint64_t n = 0;

	if (mu_requests(M.pid, stats_path, "uring", &n) < 0)
		return -1;
	if (io_uring && n == 0) {
		fprintf(stderr, "test-posix: -o io_uring, but no request came from a ring\n");
		return -1;
	}
	if (!io_uring && n) {
		fprintf(stderr, "test-posix: requests from a ring without -o io_uring\n");
		return -1;
	}
	return 0;
}

static int group_setup(void **state)
{
	const char *args[10];
	uint64_t opens = 0;
	int n = 0, fd;

	mu_tree_new(&M);
	snprintf(stats_path, sizeof(stats_path), "%s/stats", M.dir);
	args[n++] = "-o";
	args[n++] = "allow_other";
	args[n++] = "--stats";
	args[n++] = stats_path;
	if (!passthrough) {
		args[n++] = "-o";
		args[n++] = "nopassthrough";
	}
	if (changes[0]) {
		snprintf(changes, sizeof(changes), "%s/changes", M.dir);
		args[n++] = "--changes";
		args[n++] = changes;
	}
	if (io_uring) {
		args[n++] = "-o";
		args[n++] = "io_uring";
		if (set_enable_uring('Y', &uring_saved) < 0)
			return -1;
	}
	args[n] = NULL;
	if (mu_mount(&M, args, 0) < 0)
		return -1;
	/* Is passthrough really on? A write open of a SAFE file counts. */
	mu_write(&M, "probe", "p");
	fd = open(mu_v(&M, "probe"), O_WRONLY | O_APPEND);
	if (fd >= 0)
		close(fd);
	if (mu_requests(M.pid, stats_path, "passthrough_opens", &opens) < 0)
		return -1;
	pt_active = opens > 0;
	if (passthrough && !pt_active) {
		bool ci = getenv("CI") && strcmp(getenv("CI"), "true") == 0;
		bool expected = geteuid() == 0 && kernel_has_passthrough();

		fprintf(stderr, "test-posix: passthrough is not active%s\n",
			expected ? " on a kernel that has it, as root"
				 : " (not root or Linux < 6.9)");
		if (ci && expected)
			return -1;
	}
	if (!passthrough && pt_active) {
		fprintf(stderr, "test-posix: passthrough is active with -o nopassthrough\n");
		return -1;
	}
	return check_uring();
}

static int group_teardown(void **state)
{
	int r = io_uring ? check_uring() : 0;

	mu_tree_free(&M);
	if (io_uring && set_enable_uring(uring_saved, NULL) < 0)
		r = -1;
	return r;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_excl),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_read_write),
		cmocka_unit_test(test_two_handles),
		cmocka_unit_test(test_mmap_shared),
		cmocka_unit_test(test_truncate),
		cmocka_unit_test(test_fsync),
		cmocka_unit_test(test_times_write),
		cmocka_unit_test(test_times_rename),
		cmocka_unit_test(test_times_link),
		cmocka_unit_test(test_utimens),
		cmocka_unit_test(test_link_counts),
		cmocka_unit_test(test_dirs),
		cmocka_unit_test(test_rename_errors),
		cmocka_unit_test(test_sticky),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_long_symlink_targets),
		cmocka_unit_test(test_setid_cleared),
		cmocka_unit_test(test_data_path),
		cmocka_unit_test(test_mixed_handles),
		cmocka_unit_test(test_restricted_read),
		cmocka_unit_test(test_host_move_to_restricted),
	};

	if (argc < 2 || argc > 3 ||
	    (strcmp(argv[1], "passthrough") && strcmp(argv[1], "nopassthrough")) ||
	    (argc == 3 && strcmp(argv[2], "io_uring") && strcmp(argv[2], "changes"))) {
		fprintf(stderr, "usage: %s passthrough|nopassthrough [io_uring|changes]\n",
			argv[0]);
		return 2;
	}
	passthrough = strcmp(argv[1], "passthrough") == 0;
	io_uring = argc == 3 && strcmp(argv[2], "io_uring") == 0;
	if (argc == 3 && strcmp(argv[2], "changes") == 0)
		changes[0] = '-'; /* set up in group_setup */
	mu_require_fuse();
	return cmocka_run_group_tests_name(io_uring	? "io_uring"
					   : changes[0] ? "changes"
							: argv[1],
					   tests, group_setup, group_teardown);
}
