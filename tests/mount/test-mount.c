/* SPDX-License-Identifier: MIT */
/*
 * Mount suite: real jailfs mounts over real temporary trees. Each test gets
 * a fresh tree (see std_setup) mounted with tests' policy:
 *
 *   work/      SAFE      f, d/, l -> f, .env and id_rsa (DENIED by name)
 *   ro/        RESTRICTED f, d/, l -> f, big (over the 64 KiB limit),
 *              patches/ (SAFE again inside RESTRICTED)
 *   secret/    DENIED    token
 *   .env       DENIED
 *   .git/hooks RESTRICTED (built-in profile project)
 *
 * Every refusal test checks the exact errno and that a checksum of the
 * backing tree did not change. With argument "--unprivileged" only the
 * subset that makes sense as an ordinary user runs (fusermount3 path).
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

#define assert_errno(call, e)                                                                      \
	do {                                                                                       \
		errno = 0;                                                                         \
		long _r = (long)(call);                                                            \
		if (_r >= 0 || errno != (e))                                                       \
			fail_msg("%s: expected errno %d (%s), got r=%ld errno=%d (%s)", #call,     \
				 (e), strerror(e), _r, errno, strerror(errno));                    \
	} while (0)

/*
 * A write to a RESTRICTED file is refused: EROFS at open(2) where opens reach
 * the daemon (no -o fast_open, or an audit log on); in no_open mode (the
 * daemon sees no OPEN) EACCES at open(2) for a caller without
 * CAP_DAC_OVERRIDE (the view shows it without write bits), else EROFS at the
 * first write(2).
 */
#define assert_errno2(call, e1, e2)                                                                \
	do {                                                                                       \
		errno = 0;                                                                         \
		long _r = (long)(call);                                                            \
		if (_r >= 0 || (errno != (e1) && errno != (e2)))                                   \
			fail_msg("%s: expected errno %d or %d, got r=%ld errno=%d (%s)", #call,    \
				 (e1), (e2), _r, errno, strerror(errno));                          \
	} while (0)

/* Set by the setup of the running test: the view was mounted -o fast_open. */
static bool fast_open_mount;

static void assert_write_refused(const char *path, int flags)
{
	char why[512];

	if (mu_write_refused(path, flags, fast_open_mount, why, sizeof(why)) < 0)
		fail_msg("%s", why);
}

#define assert_ok(call)                                                                            \
	do {                                                                                       \
		errno = 0;                                                                         \
		long _r = (long)(call);                                                            \
		if (_r < 0)                                                                        \
			fail_msg("%s: failed: %s", #call, strerror(errno));                        \
	} while (0)

static const char *policy_text = "[safe]\n"
				 "/\n"
				 "/ro/patches/\n"
				 "[restricted]\n"
				 "/ro/\n"
				 "[denied]\n"
				 "/secret/\n"
				 "[limits]\n"
				 "safe.max_file_size = 1M\n"
				 "restricted.max_file_size = 64K\n";

static char policy_path[512];

static void std_tree(struct jf_mnt *m)
{
	char big[100 * 1024 + 1];

	mu_write(m, "work/f", "safe\n");
	mu_mkdir(m, "work/d");
	mu_symlink(m, "f", "work/l");
	mu_write(m, "work/.env", "WORK_SECRET\n");
	mu_write(m, "work/id_rsa", "KEY\n");
	mu_write(m, "ro/f", "ro\n");
	mu_mkdir(m, "ro/d");
	mu_symlink(m, "f", "ro/l");
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	mu_write(m, "ro/big", big);
	mu_write(m, "ro/patches/p.c", "patch\n");
	mu_write(m, "secret/token", "TOKEN\n");
	mu_write(m, ".env", "TOP_SECRET\n");
	mu_write(m, ".git/hooks/pre-commit", "#!/bin/sh\n");
	mu_write(m, ".git/HEAD", "ref: refs/heads/main\n");
	/* escapes planted in SOURCE */
	mu_symlink(m, "/etc/passwd", "work/pw");
	mu_symlink(m, "../../..", "work/up");
	mu_symlink(m, ".env", "work/toenv");
	mu_symlink(m, "../secret/token", "work/totoken");
	{
		char abs[600];

		snprintf(abs, sizeof(abs), "%s/work/f", m->src);
		mu_symlink(m, abs, "work/abs");
		mu_symlink(m, abs, "absroot");
	}
	mu_mkdir(m, "work/s");
	mu_symlink(m, "..", "work/s/u");
	mu_symlink(m, "u/../..", "work/s/w");
	if (link(mu_s(m, "secret/token"), mu_s(m, "work/hl")) < 0)
		fail_msg("link: %s", strerror(errno));
}

/* Mount the standard tree (plus what @extra adds before the mount) with
 * @args; the policy file is policy_path. */
static int setup_with(void **state, const char *const *args, void (*extra)(struct jf_mnt *m))
{
	struct jf_mnt *m = calloc(1, sizeof(*m));
	FILE *f;

	mu_tree_new(m);
	snprintf(policy_path, sizeof(policy_path), "%s/policy.ini", m->dir);
	f = fopen(policy_path, "we");
	fputs(policy_text, f);
	fclose(f);
	std_tree(m);
	if (extra)
		extra(m);
	if (mu_mount(m, args, 0) < 0) {
		fprintf(stderr, "jailfs did not mount %s\n", m->mnt);
		mu_tree_free(m);
		free(m);
		return -1;
	}
	*state = m;
	return 0;
}

static int std_setup(void **state)
{
	const char *args[] = {"--policy", policy_path, NULL};

	fast_open_mount = false;
	return setup_with(state, args, NULL);
}

/* -o fast_open: zero-message opens (FUSE no_open), no audit log. */
static int fast_setup(void **state)
{
	const char *args[] = {"--policy", policy_path, "-o", "fast_open", NULL};

	fast_open_mount = true;
	return setup_with(state, args, NULL);
}

static int std_teardown(void **state)
{
	struct jf_mnt *m = *state;

	fast_open_mount = false; /* tests with mounts of their own use the defaults */
	mu_tree_free(m);
	free(m);
	return 0;
}

static bool dir_has(const char *dir, const char *name)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	bool found = false;

	assert_non_null(dp);
	while ((de = readdir(dp)))
		if (strcmp(de->d_name, name) == 0)
			found = true;
	closedir(dp);
	return found;
}

static char *slurp(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

/* ---------------- mount basics ---------------- */

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

/* ---------------- DENIED ---------------- */

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
	assert_false(dir_has(m->mnt, ".env"));
	assert_false(dir_has(m->mnt, "secret"));
	assert_false(dir_has(mu_v(m, "work"), ".env"));
	assert_false(dir_has(mu_v(m, "work"), "id_rsa"));
	assert_true(dir_has(mu_v(m, "work"), "f"));
	assert_true(dir_has(m->mnt, "ro"));
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

/* ---------------- RESTRICTED ---------------- */

static void test_restricted_matrix(void **state)
{
	struct jf_mnt *m = *state;
	uint64_t before = mu_tree_sum(m, "work/");
	struct timespec ts[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
	struct stat st;
	mode_t mode;
	int fd;

	/* file */
	assert_string_equal(slurp(mu_v(m, "ro/f")), "ro\n");
	assert_write_refused(mu_v(m, "ro/f"), O_WRONLY);
	assert_write_refused(mu_v(m, "ro/f"), O_RDWR);
	assert_string_equal(slurp(mu_v(m, "ro/f")), "ro\n"); /* no page cache residue */
	/* write bits are hidden only where the kernel alone checks write opens */
	assert_ok(stat(mu_s(m, "ro/f"), &st));
	mode = st.st_mode & 0222;
	assert_int_not_equal(mode, 0);
	assert_ok(stat(mu_v(m, "ro/f"), &st));
	assert_int_equal(st.st_mode & 0222, fast_open_mount ? 0 : mode);
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
	/* EACCES without CAP_DAC_OVERRIDE: the view shows no write bits */
	assert_errno2(truncate(mu_v(m, "ro/f"), 0), EROFS, EACCES);
	assert_errno(utimensat(AT_FDCWD, mu_v(m, "ro/f"), ts, 0), EROFS);
	assert_errno2(setxattr(mu_v(m, "ro/f"), "user.x", "1", 1, 0), EROFS, EACCES);
	assert_errno2(removexattr(mu_v(m, "ro/f"), "user.x"), EROFS, EACCES);
	/* fallocate / copy_file_range need a writable fd, which cannot exist */
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
	assert_string_equal(slurp(mu_v(m, "ro/l")), "ro\n");
	/* the root-level RESTRICTED hooks */
	assert_write_refused(mu_v(m, ".git/hooks/pre-commit"), O_WRONLY | O_TRUNC);
	assert_errno(open(mu_v(m, ".git/hooks/post-checkout"), O_CREAT | O_WRONLY, 0755), EROFS);
	assert_true(mu_tree_sum(m, "work/") == before);
}

/* A shared writable mapping of a RESTRICTED file (root with
 * CAP_DAC_OVERRIDE can open it read-write in no_open mode): msync fails with
 * EROFS, the disk keeps its bytes and so, soon after, does the view. */
static void test_restricted_mmap(void **state)
{
	struct jf_mnt *m = *state;
	int fd = open(mu_v(m, "ro/f"), O_RDWR);
	char *p;
	int i;

	if (fd < 0) {
		assert_true(errno == EACCES || errno == EROFS);
		return;
	}
	p = mmap(NULL, 3, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	memcpy(p, "XY", 2);
	assert_errno(msync(p, 3, MS_SYNC), EROFS);
	munmap(p, 3);
	close(fd);
	assert_string_equal(slurp(mu_s(m, "ro/f")), "ro\n");
	for (i = 0; i < 200 && strcmp(slurp(mu_v(m, "ro/f")), "ro\n") != 0; i++)
		usleep(10000);
	assert_string_equal(slurp(mu_v(m, "ro/f")), "ro\n");
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
	if (fd >= 0 && !fast_open_mount)
		fail_msg("open of a file over max_file_size succeeded without fast_open");
	if (fd >= 0) {
		assert_int_equal(read(fd, buf, sizeof(buf)), -1);
		close(fd);
	}
	assert_int_equal(errno, EFBIG);
	assert_string_equal(slurp(mu_v(m, "ro/f")), "ro\n");
}

static void test_safe_inside_restricted(void **state)
{
	struct jf_mnt *m = *state;
	int fd = open(mu_v(m, "ro/patches/new.c"), O_CREAT | O_WRONLY, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	assert_string_equal(slurp(mu_s(m, "ro/patches/new.c")), "x");
	assert_errno(open(mu_v(m, "ro/new.c"), O_CREAT | O_WRONLY, 0644), EROFS);
	/* rename a SAFE file out of the SAFE island into RESTRICTED: refused */
	assert_errno(rename(mu_v(m, "ro/patches/new.c"), mu_v(m, "ro/new.c")), EROFS);
}

/* ---------------- SAFE ---------------- */

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
	assert_string_equal(slurp(mu_s(m, "work/new")), "hel");
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
	assert_string_equal(slurp(mu_v(m, "work/ln2")), "ro\n");
	assert_ok(link(mu_v(m, "work/new"), mu_v(m, "work/new2")));
	/* a hard link made between SAFE names stays writable */
	fd = open(mu_v(m, "work/new2"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "p", 1), 1);
	close(fd);
	assert_string_equal(slurp(mu_s(m, "work/new")), "help");
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
		assert_string_equal(slurp(mu_s(m, "work/copy")), "ro\n");
	}
	/* SAFE directory and symlink */
	assert_ok(chmod(mu_v(m, "work/d"), 0700));
	assert_ok(utimensat(AT_FDCWD, mu_v(m, "work/d"), ts, 0));
	assert_ok(setxattr(mu_v(m, "work/d"), "user.d", "1", 1, 0));
	assert_ok(lchown(mu_v(m, "work/l"), getuid(), getgid()));
	assert_ok(rename(mu_v(m, "work/l"), mu_v(m, "work/l2")));
	assert_string_equal(slurp(mu_v(m, "work/l2")), "safe\n");
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
	assert_string_equal(slurp(mu_v(m, "work/a")), "B");
	assert_string_equal(slurp(mu_v(m, "work/b")), "A");
	/* rename over an existing file */
	assert_ok(rename(mu_v(m, "work/a"), mu_v(m, "work/b")));
	assert_string_equal(slurp(mu_v(m, "work/b")), "B");
	assert_errno(access(mu_v(m, "work/a"), F_OK), ENOENT);
	/* directories move, with their content */
	mu_write(m, "work/dd/x", "X");
	assert_ok(rename(mu_v(m, "work/dd"), mu_v(m, "work/ee")));
	assert_string_equal(slurp(mu_v(m, "work/ee/x")), "X");
	/* a SAFE dir holding a DENIED name that stays DENIED at the new path
	 * moves like any other (the answer does not reveal the hidden name),
	 * and the name stays hidden there */
	mu_write(m, "work/ff/.env", "S");
	mu_write(m, "work/ff/y", "Y");
	assert_ok(rename(mu_v(m, "work/ff"), mu_v(m, "work/gg")));
	assert_string_equal(slurp(mu_s(m, "work/gg/.env")), "S");
	assert_string_equal(slurp(mu_v(m, "work/gg/y")), "Y");
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
	assert_memory_equal(slurp(mu_s(m, "work/mm")), "mapped!", 7);
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
	assert_string_equal(slurp(mu_v(m, "work/o")), "zz");
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
	assert_memory_equal(slurp(mu_s(m, "work/mm2")), "mapped", 6);
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
		assert_true(dir_has(mu_v(m, "work"), name + 5));
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

/* ---------------- escapes ---------------- */

static void test_escape_dotdot(void **state)
{
	struct jf_mnt *m = *state;
	char *r = realpath(mu_v(m, "work/.."), NULL);
	struct stat st;

	/* ".." of the view root is the kernel's business: the mountpoint's parent
	 * on the host side, never SOURCE's parent through the daemon. */
	assert_string_equal(r, m->mnt);
	free(r);
	assert_errno(stat(mu_v(m, "work/up/etc/passwd"), &st), ENOENT);
	assert_false(dir_has(mu_v(m, "work"), "up"));
}

static void test_escape_planted_symlink(void **state)
{
	struct jf_mnt *m = *state;
	struct stat st;

	assert_errno(lstat(mu_v(m, "work/pw"), &st), ENOENT);
	assert_errno(open(mu_v(m, "work/pw"), O_RDONLY), ENOENT);
	assert_false(dir_has(mu_v(m, "work"), "pw"));
	/* symlinks onto DENIED names are hidden too */
	assert_errno(lstat(mu_v(m, "work/toenv"), &st), ENOENT);
	assert_errno(lstat(mu_v(m, "work/totoken"), &st), ENOENT);
	assert_false(dir_has(mu_v(m, "work"), "toenv"));
	assert_false(dir_has(mu_v(m, "work"), "totoken"));
	/* s/u -> .. is fine, s/w -> u/../.. climbs out and is hidden */
	assert_ok(lstat(mu_v(m, "work/s/u"), &st));
	assert_errno(lstat(mu_v(m, "work/s/w"), &st), ENOENT);
	assert_false(dir_has(mu_v(m, "work/s"), "w"));
}

static void test_escape_agent_symlink(void **state)
{
	struct jf_mnt *m = *state;
	uint64_t before = mu_tree_sum(m, NULL);

	assert_errno(symlink("/etc/passwd", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("../../../../../etc", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("../.env", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("../secret/token", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("s/u/../..", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink(m->mnt, mu_v(m, "work/x")), EACCES);
	/* system paths only when written canonically */
	assert_errno(symlink("/usr/../etc/passwd", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("/usr/bin/./../../etc/passwd", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("/usr", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("/usrx/bin/sh", mu_v(m, "work/x")), EACCES);
	assert_true(mu_tree_sum(m, NULL) == before);
}

/* A virtual environment links bin/python3 to the system's interpreter: an
 * absolute target below a system directory (read-only in every jail) is
 * created and shown as it is. */
static void test_symlink_system_target(void **state)
{
	struct jf_mnt *m = *state;
	char buf[256];
	ssize_t n;

	assert_ok(mkdir(mu_v(m, "work/venv"), 0755));
	assert_ok(symlink("/usr/bin/python3", mu_v(m, "work/venv/python3")));
	n = readlink(mu_v(m, "work/venv/python3"), buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "/usr/bin/python3");
	n = readlink(mu_s(m, "work/venv/python3"), buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "/usr/bin/python3");
	assert_true(dir_has(mu_v(m, "work/venv"), "python3"));
	/* such a link never changes directory (its text is not relative) */
	assert_errno(rename(mu_v(m, "work/venv"), mu_v(m, "work/venv2")), EXDEV);
}

static void test_escape_absolute_rewritten(void **state)
{
	struct jf_mnt *m = *state;
	char buf[256];
	ssize_t n;

	n = readlink(mu_v(m, "work/abs"), buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "f");
	n = readlink(mu_v(m, "absroot"), buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "work/f");
	assert_string_equal(slurp(mu_v(m, "absroot")), "safe\n");
	{
		struct stat st;

		assert_ok(lstat(mu_v(m, "absroot"), &st));
		assert_int_equal(st.st_size, 6);
	}
}

static bool daemon_alive_for(const char *mnt);

static void test_escape_planted_hardlink(void **state)
{
	struct jf_mnt *m = *state;
	uint64_t before = mu_file_sum(m, "secret/token");
	struct stat st;

	/* work/hl is a second name of secret/token: the start-up hard-link
	 * index knows its DENIED name, so it is hidden like the secret itself */
	assert_errno(stat(mu_v(m, "work/hl"), &st), ENOENT);
	assert_errno(open(mu_v(m, "work/hl"), O_RDONLY), ENOENT);
	assert_errno(open(mu_v(m, "work/hl"), O_RDWR | O_TRUNC), ENOENT);
	assert_errno(unlink(mu_v(m, "work/hl")), ENOENT);
	assert_errno(link(mu_v(m, "work/hl"), mu_v(m, "work/hl2")), ENOENT);
	assert_false(dir_has(mu_v(m, "work"), "hl"));
	assert_int_equal(mu_sh("ls -la '%s' | grep -q ' hl$'", mu_v(m, "work")), 1);
	assert_true(mu_file_sum(m, "secret/token") == before);
}

/* Invariant 6 with the start-up index: SECRET=1 in .env, linked as notes.txt. */
static void test_hardlink_index(void **state)
{
	struct jf_mnt t;
	struct stat st;
	char pol[600];
	const char *zone_args[] = {"--policy", pol, NULL};
	int fd;

	mu_tree_new(&t);
	mu_write(&t, ".env", "SECRET=1\n");
	assert_ok(link(mu_s(&t, ".env"), mu_s(&t, "notes.txt")));
	mu_write(&t, "store/a/x", "pkg\n"); /* pnpm-style: both names SAFE, in SOURCE */
	mu_mkdir(&t, "node_modules/a");
	assert_ok(link(mu_s(&t, "store/a/x"), mu_s(&t, "node_modules/a/x")));
	mu_write(&t, "ext", "ext\n"); /* second name outside SOURCE: unknown */
	snprintf(pol, sizeof(pol), "%s/ext-name", t.dir);
	assert_ok(link(mu_s(&t, "ext"), pol));
	assert_int_equal(mu_mount(&t, NULL, 0), 0);
	assert_errno(stat(mu_v(&t, "notes.txt"), &st), ENOENT);
	assert_null(slurp(mu_v(&t, "notes.txt")));
	assert_false(dir_has(t.mnt, "notes.txt"));
	assert_errno(open(mu_v(&t, "notes.txt"), O_CREAT | O_WRONLY, 0644), EACCES);
	fd = open(mu_v(&t, "node_modules/a/x"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "w", 1), 1);
	close(fd);
	assert_string_equal(slurp(mu_s(&t, "store/a/x")), "pkg\nw");
	assert_string_equal(slurp(mu_v(&t, "ext")), "ext\n");
	assert_write_refused(mu_v(&t, "ext"), O_WRONLY);
	mu_umount(&t, SIGTERM);
	/* hardlinks = zone keeps its meaning: no index, the name's own zone */
	snprintf(pol, sizeof(pol), "%s/zone.ini", t.dir);
	assert_int_equal(mu_sh("printf '[options]\\nhardlinks = zone\\n' > '%s'", pol), 0);
	assert_int_equal(mu_mount(&t, zone_args, 0), 0);
	assert_string_equal(slurp(mu_v(&t, "notes.txt")), "SECRET=1\n");
	mu_umount(&t, SIGTERM);
	/* hardlinks = deny hides every multiply-linked file */
	assert_int_equal(mu_sh("printf '[options]\\nhardlinks = deny\\n' > '%s'", pol), 0);
	assert_int_equal(mu_mount(&t, zone_args, 0), 0);
	assert_errno(stat(mu_v(&t, "node_modules/a/x"), &st), ENOENT);
	assert_false(dir_has(mu_v(&t, "node_modules/a"), "x"));
	mu_umount(&t, SIGTERM);
	mu_tree_free(&t);
}

/* A symlink harmless where it is climbs out of the view once moved. */
static void test_symlink_rename_and_link(void **state)
{
	struct jf_mnt *m = *state;
	char buf[512], abs[600];
	struct stat st;
	ssize_t n;

	assert_int_equal(mu_sh("mkdir -p '%s'", mu_v(m, "work/a/b/c/d")), 0);
	assert_ok(symlink("../../../../../etc/passwd", mu_v(m, "work/a/b/c/d/l")));
	n = readlink(mu_v(m, "work/a/b/c/d/l"), buf, sizeof(buf) - 1);
	assert_int_equal(n, 25);
	/* the link itself, to a shallower directory: refused, nothing moves */
	assert_errno(rename(mu_v(m, "work/a/b/c/d/l"), mu_v(m, "work/l9")), EACCES);
	assert_errno(lstat(mu_s(m, "work/l9"), &st), ENOENT);
	assert_ok(lstat(mu_s(m, "work/a/b/c/d/l"), &st));
	assert_errno(stat(mu_v(m, "work/l9"), &st), ENOENT);
	/* a directory holding it: EXDEV (mv copies, symlink() checks each) */
	assert_errno(rename(mu_v(m, "work/a/b/c"), mu_v(m, "work/c2")), EXDEV);
	assert_ok(lstat(mu_s(m, "work/a/b/c/d/l"), &st));
	assert_int_equal(
		mu_sh("mv '%s' '%s' 2>/dev/null", mu_v(m, "work/a/b/c"), mu_v(m, "work/c2")), 1);
	assert_errno(lstat(mu_s(m, "work/c2/d/l"), &st), ENOENT);
	/* a second name elsewhere: refused before linkat, nothing on disk */
	assert_errno(link(mu_v(m, "work/a/b/c/d/l"), mu_v(m, "work/l2")), EACCES);
	assert_errno(lstat(mu_s(m, "work/l2"), &st), ENOENT);
	assert_errno(link(mu_v(m, "work/a/b/c/d/l"), mu_v(m, "l3")), EACCES);
	assert_errno(lstat(mu_s(m, "l3"), &st), ENOENT);
	/* in the same directory it is the same link: allowed */
	assert_ok(link(mu_v(m, "work/a/b/c/d/l"), mu_v(m, "work/a/b/c/d/l4")));
	/* an absolute target is shown relative to the link's directory, and the
	 * kernel caches that text: such a link never changes directory */
	mu_sh("rm -rf '%s' '%s'", mu_s(m, "work/a/b/c/d/l"), mu_s(m, "work/a/b/c/d/l4"));
	mu_sh("rm -rf '%s'", mu_s(m, "work/c2"));
	snprintf(abs, sizeof(abs), "%s/work/f", m->src);
	assert_ok(symlink(abs, mu_s(m, "work/a/b/c/d/abs")));
	n = readlink(mu_v(m, "work/a/b/c/d/abs"), buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "../../../../f");
	assert_string_equal(slurp(mu_v(m, "work/a/b/c/d/abs")), "safe\n");
	assert_errno(rename(mu_v(m, "work/a/b/c"), mu_v(m, "work/c3")), EXDEV);
	assert_errno(rename(mu_v(m, "work/a/b/c/d/abs"), mu_v(m, "work/abs2")), EXDEV);
	assert_errno(link(mu_v(m, "work/a/b/c/d/abs"), mu_v(m, "work/abs3")), EACCES);
	assert_errno(lstat(mu_s(m, "work/abs3"), &st), ENOENT);
	assert_ok(rename(mu_v(m, "work/a/b/c/d/abs"), mu_v(m, "work/a/b/c/d/abs4")));
	assert_string_equal(slurp(mu_v(m, "work/a/b/c/d/abs4")), "safe\n");
	/* planted: one absolute symlink with names in two directories: hidden */
	assert_ok(link(mu_s(m, "work/a/b/c/d/abs4"), mu_s(m, "abs5")));
	assert_errno(lstat(mu_v(m, "abs5"), &st), ENOENT);
	assert_errno(open(mu_v(m, "abs5"), O_RDONLY), ENOENT);
}

/* Invariant 8: no set-user/group-ID regular file through the view. */
static void test_no_setid_files(void **state)
{
	struct jf_mnt *m = *state;
	struct stat st;
	int fd;

	assert_ok(chmod(mu_v(m, "work/f"), 04755));
	assert_ok(stat(mu_s(m, "work/f"), &st));
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_ok(chmod(mu_v(m, "work/f"), 02755));
	assert_ok(stat(mu_s(m, "work/f"), &st));
	assert_int_equal(st.st_mode & 07777, 0755);
	fd = open(mu_v(m, "work/su"), O_CREAT | O_WRONLY, 06755);
	assert_true(fd >= 0);
	assert_ok(fchmod(fd, 04755));
	close(fd);
	assert_ok(stat(mu_s(m, "work/su"), &st));
	assert_int_equal(st.st_mode & (S_ISUID | S_ISGID), 0);
	assert_ok(mknod(mu_v(m, "work/su2"), S_IFREG | 04755, 0));
	assert_ok(stat(mu_s(m, "work/su2"), &st));
	assert_int_equal(st.st_mode & (S_ISUID | S_ISGID), 0);
	/* set-group-ID directories stay (group inheritance, no privilege) */
	assert_ok(mkdir(mu_v(m, "work/g"), 0755));
	assert_ok(chmod(mu_v(m, "work/g"), 02755));
	assert_ok(stat(mu_s(m, "work/g"), &st));
	assert_int_equal(st.st_mode & 07777, 02755);
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

/* Invariant 3: a directory's link count does not count hidden subdirectories. */
static void test_dir_nlink_hides(void **state)
{
	struct jf_mnt *m = *state;
	struct stat st;

	mu_mkdir(m, "work/h/.ssh");
	mu_mkdir(m, "work/h/secrets");
	assert_ok(stat(mu_s(m, "work/h"), &st));
	assert_int_equal(st.st_nlink, 4);
	assert_ok(stat(mu_v(m, "work/h"), &st));
	assert_int_equal(st.st_nlink, 1);
	assert_ok(stat(m->mnt, &st));
	assert_int_equal(st.st_nlink, 1);
	/* find(1) copes with nlink 1 (no leaf optimization) */
	assert_int_equal(mu_sh("test $(find '%s' -type d | wc -l) -eq 1", mu_v(m, "work/h")), 0);
}

/* Audit file: a relative path survives daemonizing, one inside MOUNTPOINT is
 * refused, one inside SOURCE only where the policy hides it, and a guessed (absent) DENIED name is
 * recorded as hidden. */
static void test_audit_path_and_guesses(void **state)
{
	struct jf_mnt t;
	struct stat st;

	mu_tree_new(&t);
	mu_write(&t, "f", "x");
	(void)unlink("/rel.jsonl"); /* where a relative path used to end up */
	assert_int_equal(mu_sh("cd '%s' && \"$JAILFS\" --audit mnt/a.jsonl src mnt 2>err; "
			       "r=$?; grep -q 'inside MOUNTPOINT' err && test $r -eq 2",
			       t.dir),
			 0);
	assert_false(mu_is_mounted(t.mnt, NULL));
	/* inside SOURCE and visible: the audited program could rewrite it */
	assert_int_equal(mu_sh("cd '%s' && \"$JAILFS\" --audit src/a.jsonl src mnt 2>err; "
			       "r=$?; grep -q 'inside SOURCE' err && test $r -eq 2 && "
			       "test ! -e src/a.jsonl",
			       t.dir),
			 0);
	assert_false(mu_is_mounted(t.mnt, NULL));
	/* ... also when reached through a symlink outside SOURCE, or as a second
	 * hard-link name of a file inside it (red-team findings) */
	assert_int_equal(
		mu_sh("cd '%s' && touch src/b.log && ln -s \"$PWD/src/b.log\" sl.log && "
		      "\"$JAILFS\" --audit sl.log src mnt 2>err; r=$?; "
		      "grep -q 'inside SOURCE' err && test $r -eq 2 && test ! -s src/b.log",
		      t.dir),
		0);
	assert_int_equal(mu_sh("cd '%s' && ln src/b.log hl.log && "
			       "\"$JAILFS\" --audit hl.log src mnt 2>err; r=$?; "
			       "grep -q 'hard links' err && test $r -eq 2 && test ! -s src/b.log",
			       t.dir),
			 0);
	assert_false(mu_is_mounted(t.mnt, NULL));
	/* inside SOURCE but DENIED (a secret's name): hidden from the view, accepted */
	assert_int_equal(mu_sh("cd '%s' && \"$JAILFS\" --audit src/.env.audit src mnt && "
			       "test ! -e mnt/.env.audit && fusermount3 -u mnt",
			       t.dir),
			 0);
	for (int i = 0; i < 200 && daemon_alive_for(t.mnt); i++)
		usleep(10000);
	assert_int_equal(mu_sh("cd '%s' && \"$JAILFS\" --audit rel.jsonl src mnt", t.dir), 0);
	assert_true(mu_is_mounted(t.mnt, "fuse.jailfs"));
	assert_errno(stat(mu_v(&t, ".env.production"), &st), ENOENT);
	assert_errno(stat(mu_v(&t, "id_rsa"), &st), ENOENT);
	assert_int_equal(mu_sh("fusermount3 -u '%s'", t.mnt), 0);
	for (int i = 0; i < 200 && daemon_alive_for(t.mnt); i++)
		usleep(10000);
	assert_int_equal(mu_sh("grep '\"path\":\".env.production\"' '%s/rel.jsonl' | "
			       "grep -q '\"decision\":\"hide\"'",
			       t.dir),
			 0);
	assert_int_equal(mu_sh("grep -q '\"path\":\"id_rsa\"' '%s/rel.jsonl'", t.dir), 0);
	assert_errno(stat("/rel.jsonl", &st), ENOENT);
	mu_tree_free(&t);
}

static void test_escape_link_restricted_then_write(void **state)
{
	struct jf_mnt *m = *state;

	assert_errno(link(mu_v(m, "ro/f"), mu_v(m, "work/rof")), EROFS);
	assert_errno(open(mu_v(m, "work/rof"), O_WRONLY), ENOENT);
	assert_string_equal(slurp(mu_s(m, "ro/f")), "ro\n");
}

static void test_escape_rename_to_env(void **state)
{
	struct jf_mnt *m = *state;

	assert_errno(rename(mu_v(m, "work/f"), mu_v(m, "work/.env")), EACCES);
	assert_errno(rename(mu_v(m, "work/f"), mu_v(m, "work/.ENV")), EACCES);
	assert_string_equal(slurp(mu_s(m, "work/f")), "safe\n");
	assert_string_equal(slurp(mu_s(m, "work/.env")), "WORK_SECRET\n");
}

static void test_escape_mkdir_ssh(void **state)
{
	struct jf_mnt *m = *state;
	struct stat st;

	assert_errno(mkdir(mu_v(m, ".ssh"), 0700), EACCES);
	assert_errno(mkdir(mu_v(m, "work/.ssh"), 0700), EACCES);
	assert_errno(stat(mu_s(m, ".ssh"), &st), ENOENT);
}

static void test_escape_git_hooks(void **state)
{
	struct jf_mnt *m = *state;

	assert_write_refused(mu_v(m, ".git/hooks/pre-commit"), O_WRONLY | O_TRUNC);
	assert_write_refused(mu_v(m, ".git/hooks/pre-commit"), O_WRONLY | O_APPEND);
	assert_errno(unlink(mu_v(m, ".git/hooks/pre-commit")), EROFS);
	assert_errno(chmod(mu_v(m, ".git/hooks/pre-commit"), 0755), EROFS);
	assert_string_equal(slurp(mu_s(m, ".git/hooks/pre-commit")), "#!/bin/sh\n");
}

static void test_escape_dir_swap(void **state)
{
	struct jf_mnt *m = *state;
	struct stat st;
	int dfd;
	char *s;

	mu_write(m, "work/sw/x", "inside\n");
	dfd = open(mu_v(m, "work/sw"), O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_ok(fstatat(dfd, "x", &st, 0));
	/* Swap the directory for a symlink to /etc under the daemon's feet. */
	assert_ok(rename(mu_s(m, "work/sw"), mu_s(m, "work/sw.old")));
	assert_ok(symlink("/etc", mu_s(m, "work/sw")));
	errno = 0;
	assert_true(fstatat(dfd, "passwd", &st, 0) < 0);
	if (errno != ENOENT && errno != ESTALE)
		fail_msg("fstatat through a swapped dir: %s", strerror(errno));
	assert_true(openat(dfd, "passwd", O_RDONLY) < 0);
	s = slurp(mu_v(m, "work/sw/passwd"));
	assert_null(s);
	close(dfd);
	/* and a directory swapped for another directory: never the wrong files */
	assert_ok(unlink(mu_s(m, "work/sw")));
	mu_write(m, "work/sw2/y", "old\n");
	dfd = open(mu_v(m, "work/sw2"), O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_ok(rename(mu_s(m, "work/sw2"), mu_s(m, "work/sw2.old")));
	mu_write(m, "work/sw2/z", "new\n");
	errno = 0;
	assert_true(fstatat(dfd, "z", &st, 0) < 0);
	close(dfd);
}

static void test_escape_pseudo_fs(void **state)
{
	struct jf_mnt *m = *state;

	(void)m;
	/* Needs CAP_SYS_ADMIN to mount proc under SOURCE; checked in
	 * test_mountpoint_inside_source's tree when root. */
	if (geteuid() != 0)
		skip();
	struct jf_mnt t;
	struct stat st;

	mu_tree_new(&t);
	mu_write(&t, "a", "a");
	mu_mkdir(&t, "proc");
	assert_int_equal(mu_sh("mount -t proc proc '%s'", mu_s(&t, "proc")), 0);
	assert_int_equal(mu_mount(&t, NULL, 0), 0);
	assert_errno(stat(mu_v(&t, "proc"), &st), ENOENT);
	assert_false(dir_has(t.mnt, "proc"));
	assert_ok(stat(mu_v(&t, "a"), &st));
	mu_umount(&t, SIGTERM);
	mu_sh("umount '%s'", mu_s(&t, "proc"));
	mu_tree_free(&t);
}

/* ---------------- mountpoint inside SOURCE, lifecycle ---------------- */

static void test_mountpoint_inside_source(void **state)
{
	struct jf_mnt t;
	struct stat st;

	mu_tree_new(&t);
	mu_write(&t, "file", "f");
	mu_mkdir(&t, "view");
	if (snprintf(t.mnt, sizeof(t.mnt), "%s/view", t.src) >= (int)sizeof(t.mnt))
		fail();
	assert_int_equal(mu_mount(&t, NULL, 0), 0);
	assert_false(dir_has(t.mnt, "view"));
	assert_true(dir_has(t.mnt, "file"));
	assert_errno(stat(mu_v(&t, "view"), &st), ENOENT);
	assert_errno(symlink("view", mu_v(&t, "l")), EACCES);
	assert_int_equal(mu_sh("find '%s' >/dev/null", t.mnt), 0);
	mu_umount(&t, SIGTERM);
	assert_false(mu_is_mounted(t.mnt, NULL));
	mu_tree_free(&t);
}

static bool daemon_alive_for(const char *mnt)
{
	return mu_sh("{ for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; "
		     "echo; done; } 2>/dev/null | grep -v grep | grep -q -- 'jailfs.* %s'",
		     mnt) == 0;
}

static void lifecycle_signal(int sig)
{
	struct jf_mnt t;
	int status;

	mu_tree_new(&t);
	mu_write(&t, "f", "x");
	assert_int_equal(mu_mount(&t, NULL, 0), 0);
	assert_string_equal(slurp(mu_v(&t, "f")), "x");
	status = mu_umount(&t, sig);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_false(mu_is_mounted(t.mnt, NULL));
	assert_false(daemon_alive_for(t.mnt));
	mu_tree_free(&t);
}

static void test_sigterm(void **state)
{
	lifecycle_signal(SIGTERM);
}

static void test_sigint(void **state)
{
	lifecycle_signal(SIGINT);
}

static void test_sigkill_fsync_and_stale(void **state)
{
	struct jf_mnt t;
	char *big = malloc(300000);
	int fd;

	mu_tree_new(&t);
	assert_int_equal(mu_mount(&t, NULL, 0), 0);
	memset(big, 'k', 300000);
	fd = open(mu_v(&t, "data"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, big, 300000), 300000);
	assert_ok(fsync(fd));
	kill(t.pid, SIGKILL);
	waitpid(t.pid, NULL, 0);
	t.pid = 0;
	close(fd);
	{
		struct stat st;

		assert_ok(stat(mu_s(&t, "data"), &st));
		assert_int_equal(st.st_size, 300000);
	}
	/* The stale mountpoint gets a message that says how to clear it. */
	assert_true(mu_is_mounted(t.mnt, NULL));
	assert_int_equal(
		mu_sh("\"$JAILFS\" '%s' '%s' 2>'%s/err'; test $? -eq 1", t.src, t.mnt, t.dir), 0);
	assert_int_equal(mu_sh("grep -q 'fusermount3 -u %s' '%s/err'", t.mnt, t.dir), 0);
	assert_int_equal(mu_sh("grep -q 'umount -l' '%s/err'", t.dir), 0);
	mu_sh("fusermount3 -uz '%s' 2>/dev/null || umount -l '%s'", t.mnt, t.mnt);
	t.mounted = false;
	mu_forget(&t);
	assert_false(mu_is_mounted(t.mnt, NULL));
	free(big);
	mu_tree_free(&t);
}

static void test_daemonize(void **state)
{
	struct jf_mnt t;

	mu_tree_new(&t);
	mu_write(&t, "f", "bg");
	/* Without -f the parent returns 0 only once the mount is ready. */
	assert_int_equal(mu_sh("\"$JAILFS\" '%s' '%s'", t.src, t.mnt), 0);
	assert_true(mu_is_mounted(t.mnt, "fuse.jailfs"));
	assert_string_equal(slurp(mu_v(&t, "f")), "bg");
	assert_int_equal(mu_sh("fusermount3 -u '%s'", t.mnt), 0);
	for (int i = 0; i < 200 && daemon_alive_for(t.mnt); i++)
		usleep(10000);
	assert_false(daemon_alive_for(t.mnt));
	assert_false(mu_is_mounted(t.mnt, NULL));
	mu_tree_free(&t);
}

static void test_cli(void **state)
{
	assert_int_equal(mu_sh("\"$JAILFS\" --help > /tmp/jf-help.$$ && "
			       "grep -q RESTRICTED /tmp/jf-help.$$ && grep -q 'Exit status' "
			       "/tmp/jf-help.$$ && grep -q fstab /tmp/jf-help.$$; r=$?; "
			       "rm -f /tmp/jf-help.$$; exit $r"),
			 0);
	assert_int_equal(mu_sh("\"$JAILFS\" --version | grep -q '^jailfs '"), 0);
	assert_int_equal(mu_sh("\"$JAILFS\" only-one-arg 2>/dev/null"), 2);
	assert_int_equal(mu_sh("\"$JAILFS\" --bogus a b 2>/dev/null"), 2);
	assert_int_equal(mu_sh("\"$JAILFS\" --policy /nonexistent/p.ini /tmp /mnt 2>/dev/null"), 2);
	assert_int_equal(mu_sh("\"$JAILFS\" /nonexistent/src /tmp 2>&1 | grep -q /nonexistent/src"),
			 0);
}

static void test_fstab_style_options(void **state)
{
	struct jf_mnt t;
	char opt[700];
	const char *args[] = {"-o", opt, NULL};
	struct stat st;

	mu_tree_new(&t);
	mu_write(&t, "f", "x");
	mu_write(&t, ".env", "s");
	snprintf(opt, sizeof(opt),
		 "rw,read_only,entry_timeout=1,attr_timeout=1,"
		 "negative_timeout=1");
	assert_int_equal(mu_mount(&t, args, 0), 0);
	assert_errno(open(mu_v(&t, "f"), O_WRONLY), EROFS);
	assert_errno(stat(mu_v(&t, ".env"), &st), ENOENT);
	mu_umount(&t, SIGTERM);
	mu_tree_free(&t);
}

static void test_fstab_mount_helper(void **state)
{
	struct jf_mnt t;
	struct stat st;

	/* mount(8) -> mount.fuse3 -> "jailfs SOURCE MOUNTPOINT -o opts": root only */
	if (geteuid() != 0)
		skip();
	mu_tree_new(&t);
	mu_write(&t, "f", "x");
	mu_write(&t, "id_rsa", "k");
	/* "PROGRAM#SOURCE" names the program by path (mount(8) resets PATH);
	 * an fstab line with type fuse.jailfs takes the same route. */
	assert_int_equal(
		mu_sh("mount -t fuse -o read_only,nofail \"$JAILFS#%s\" '%s'", t.src, t.mnt), 0);
	assert_true(mu_is_mounted(t.mnt, "fuse.jailfs"));
	assert_errno(open(mu_v(&t, "f"), O_WRONLY), EROFS);
	assert_errno(stat(mu_v(&t, "id_rsa"), &st), ENOENT);
	assert_int_equal(mu_sh("umount '%s'", t.mnt), 0);
	for (int i = 0; i < 200 && daemon_alive_for(t.mnt); i++)
		usleep(10000);
	assert_false(daemon_alive_for(t.mnt));
	assert_false(mu_is_mounted(t.mnt, NULL));
	mu_tree_free(&t);
}

/* ---------------- big tree ---------------- */

static void test_big_tree(void **state)
{
	struct jf_mnt t;
	const char *n = getenv("JF_BIGTREE_FILES");
	long files = n ? atol(n) : 100000, dirs = files / 100;
	int peak = 0, status;
	long rss;
	pid_t walker;

	mu_tree_new(&t);
	/* 100 files per directory, generated by the shell for speed */
	assert_int_equal(mu_sh("cd '%s' && for d in $(seq 1 %ld); do mkdir d$d; done && "
			       "for d in d*; do (cd $d && touch $(seq -f 'f%%g.c' 1 100)); done",
			       t.src, dirs),
			 0);
	assert_int_equal(mu_sh("test $(find '%s' -type f | wc -l) -eq %ld", t.src, dirs * 100), 0);
	assert_int_equal(mu_mount(&t, NULL, 1024), 0);
	walker = fork();
	if (walker == 0) {
		int r = mu_sh("test $(find '%s' -type f | wc -l) -eq %ld && "
			      "tar -C '%s' -cf - . | wc -c >/dev/null && "
			      "grep -r -q nothing-here '%s'; test $? -eq 1",
			      t.mnt, dirs * 100, t.mnt, t.mnt);
		_exit(r);
	}
	while (waitpid(walker, &status, WNOHANG) == 0) {
		int c = mu_count_fds(t.pid);

		if (c > peak)
			peak = c;
		usleep(2000);
	}
	rss = mu_peak_rss_kib(t.pid);
	fprintf(stderr, "big tree: %ld files, daemon peak fds %d, peak RSS %ld KiB\n", dirs * 100,
		peak, rss);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(peak > 0 && peak < 1024);
	assert_true(rss > 0 && rss < 256 * 1024);
	mu_umount(&t, SIGTERM);
	mu_tree_free(&t);
}

/* ---------------- host changes (inotify invalidation, fs/watch.c) ---------------- */

/*
 * Kernel caches that would hold for 10 minutes: only the daemon's inotify
 * watch can make a host change visible within the tests' 3 s. Each test
 * leaves the kernel with a valid cached answer before the host change (a
 * negative entry, a positive entry with fresh attributes, cached pages):
 * test_nowatch_stays_cached makes the same changes with -o nowatch and
 * checks that those answers are still served, so the watch is what made the
 * difference. (After a READ the kernel drops its cached atime and the next
 * stat() asks the daemon, which would notice a missing name by itself: the
 * tests stat after reading.)
 */
#define LONG_TIMEOUTS "entry_timeout=600,attr_timeout=600,negative_timeout=600"

/* Up to 3 s in 20 ms steps until @cond holds; its final value. */
#define EVENTUALLY(cond)                                                                           \
	({                                                                                         \
		bool _ok = false;                                                                  \
		for (int _i = 0; _i < 150 && !(_ok = (cond)); _i++)                                \
			usleep(20000);                                                             \
		_ok;                                                                               \
	})

static void watch_tree(struct jf_mnt *m)
{
	mu_write(m, "work/sub/inner", "inner\n");
	mu_write(m, "work/gone", "gone\n");
	mu_write(m, "work/config", "API_KEY=123\n");
}

static int long_mount(void **state, const char *opts)
{
	const char *args[] = {"--policy", policy_path, "-o", opts, NULL};

	return setup_with(state, args, watch_tree);
}

static int watch_setup(void **state)
{
	return long_mount(state, LONG_TIMEOUTS);
}

static int watch_fast_setup(void **state)
{
	return long_mount(state, "fast_open," LONG_TIMEOUTS);
}

static int nowatch_setup(void **state)
{
	return long_mount(state, "nowatch," LONG_TIMEOUTS);
}

/* Overwrite the first bytes of SOURCE file @rel in place: same size, new
 * content (no truncation, so only the mtime and the bytes change). */
static void host_overwrite(const struct jf_mnt *m, const char *rel, const char *bytes)
{
	int fd = open(mu_s(m, rel), O_WRONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, bytes, strlen(bytes), 0), (ssize_t)strlen(bytes));
	close(fd);
}

static bool reads(const char *path, const char *want)
{
	const char *got = slurp(path);

	return got && strcmp(got, want) == 0;
}

static bool fd_reads(int fd, const char *want)
{
	char buf[256];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return false;
	buf[n] = '\0';
	return strcmp(buf, want) == 0;
}

static bool absent(const char *path)
{
	struct stat st;

	return lstat(path, &st) < 0 && errno == ENOENT;
}

static bool present(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static bool has_size(const char *path, off_t size)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_size == size;
}

/* Cache work/f's pages (through @fd) and attributes in the kernel. */
static int cache_work_f(struct jf_mnt *m)
{
	int fd = open(mu_v(m, "work/f"), O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_true(fd_reads(fd, "safe\n"));
	assert_true(has_size(mu_v(m, "work/f"), 5));
	return fd;
}

static void test_watch_host_edit(void **state)
{
	struct jf_mnt *m = *state;
	int fd = cache_work_f(m);

	/* Same size: only the page cache can tell. */
	host_overwrite(m, "work/f", "SAFE");
	assert_true(EVENTUALLY(fd_reads(fd, "SAFE\n")));
	assert_true(reads(mu_v(m, "work/f"), "SAFE\n"));
	assert_true(has_size(mu_v(m, "work/f"), 5));
	/* Size change: attributes and content. */
	mu_write(m, "work/f", "edited on the host\n");
	assert_true(EVENTUALLY(has_size(mu_v(m, "work/f"), 19)));
	assert_true(EVENTUALLY(reads(mu_v(m, "work/f"), "edited on the host\n")));
	assert_true(fd_reads(fd, "edited on the host\n"));
	close(fd);
}

static void test_watch_host_create(void **state)
{
	struct jf_mnt *m = *state;

	/* A negative entry (cached for 600 s) and a listing without the name. */
	assert_true(absent(mu_v(m, "work/new")));
	assert_false(dir_has(mu_v(m, "work"), "new"));
	mu_write(m, "work/new", "new\n");
	assert_true(EVENTUALLY(reads(mu_v(m, "work/new"), "new\n")));
	assert_true(EVENTUALLY(dir_has(mu_v(m, "work"), "new")));
	/* A new directory with content, below the root. */
	assert_true(absent(mu_v(m, "newdir")));
	mu_write(m, "newdir/g", "g\n");
	assert_true(EVENTUALLY(reads(mu_v(m, "newdir/g"), "g\n")));
}

static void test_watch_host_delete(void **state)
{
	struct jf_mnt *m = *state;

	assert_true(present(mu_v(m, "work/gone")));
	assert_true(dir_has(mu_v(m, "work"), "gone"));
	assert_ok(unlink(mu_s(m, "work/gone")));
	assert_true(EVENTUALLY(absent(mu_v(m, "work/gone"))));
	assert_true(EVENTUALLY(!dir_has(mu_v(m, "work"), "gone")));
}

static void test_watch_host_dir_rename(void **state)
{
	struct jf_mnt *m = *state;

	/* The kernel holds work/sub and work/sub/inner; the host moves the
	 * directory. */
	assert_true(reads(mu_v(m, "work/sub/inner"), "inner\n"));
	assert_true(present(mu_v(m, "work/sub/inner")));
	assert_true(absent(mu_v(m, "work/moved")));
	assert_ok(rename(mu_s(m, "work/sub"), mu_s(m, "work/moved")));
	assert_true(EVENTUALLY(absent(mu_v(m, "work/sub"))));
	assert_true(absent(mu_v(m, "work/sub/inner")));
	assert_true(EVENTUALLY(reads(mu_v(m, "work/moved/inner"), "inner\n")));
	assert_true(dir_has(mu_v(m, "work/moved"), "inner"));
	assert_true(EVENTUALLY(!dir_has(mu_v(m, "work"), "sub")));
}

static void test_watch_host_rename_to_denied(void **state)
{
	struct jf_mnt *m = *state;

	assert_true(reads(mu_v(m, "work/config"), "API_KEY=123\n"));
	assert_true(present(mu_v(m, "work/config")));
	assert_true(dir_has(mu_v(m, "work"), "config"));
	/* .env.* is DENIED by the built-in secrets profile. */
	assert_ok(rename(mu_s(m, "work/config"), mu_s(m, "work/.env.production")));
	assert_true(EVENTUALLY(absent(mu_v(m, "work/config"))));
	assert_true(absent(mu_v(m, "work/.env.production")));
	assert_false(dir_has(mu_v(m, "work"), "config"));
	assert_false(dir_has(mu_v(m, "work"), ".env.production"));
	assert_true(reads(mu_s(m, "work/.env.production"), "API_KEY=123\n"));
}

/* Zones follow names moved on the host: a handle opened for writing while
 * the file was SAFE cannot write once the host moved its directory to a
 * RESTRICTED name (.git/config), and the file is not shown writable. */
static void host_move_to_restricted(struct jf_mnt *m, bool fast)
{
	struct stat st;
	uint64_t sum;
	int fd;

	mu_write(m, "work/g/config", "[core]\n");
	fd = open(mu_v(m, "work/g/config"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "a\n", 2), 2);
	assert_ok(rename(mu_s(m, "work/g"), mu_s(m, "work/.git")));
	assert_true(EVENTUALLY(present(mu_v(m, "work/.git/config"))));
	sum = mu_tree_sum(m, NULL);
	errno = 0;
	assert_int_equal(write(fd, "b\n", 2), -1);
	assert_int_equal(errno, EROFS);
	close(fd);
	assert_true(mu_tree_sum(m, NULL) == sum);
	/* With fast_open the file is shown without write bits and the kernel
	 * refuses a write open (EACCES) unless the caller may override modes
	 * (root), whose writes then fail as above; where the daemon sees opens
	 * it refuses them itself (EROFS). */
	assert_ok(stat(mu_v(m, "work/.git/config"), &st));
	if (fast)
		assert_int_equal(st.st_mode & 0222, 0);
	if (fast && geteuid() == 0)
		return;
	errno = 0;
	assert_int_equal(open(mu_v(m, "work/.git/config"), O_WRONLY | O_APPEND), -1);
	assert_true(errno == (fast ? EACCES : EROFS));
}

static void test_watch_host_move_to_restricted(void **state)
{
	host_move_to_restricted(*state, false);
}

static void test_watch_host_move_to_restricted_fast(void **state)
{
	host_move_to_restricted(*state, true);
}

static void test_watch_own_change_then_host(void **state)
{
	struct jf_mnt *m = *state;
	int fd;

	/* A name the view itself created: events on it are skipped for 1 s
	 * (our own change); a host change after that window is seen. */
	fd = open(mu_v(m, "work/mine"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "mine\n", 5), 5);
	close(fd);
	assert_true(reads(mu_v(m, "work/mine"), "mine\n"));
	assert_true(present(mu_v(m, "work/mine")));
	usleep(1300 * 1000);
	host_overwrite(m, "work/mine", "MINE");
	assert_true(EVENTUALLY(reads(mu_v(m, "work/mine"), "MINE\n")));
	assert_true(present(mu_v(m, "work/mine")));
	assert_ok(unlink(mu_s(m, "work/mine")));
	assert_true(EVENTUALLY(absent(mu_v(m, "work/mine"))));
}

static void test_nowatch_stays_cached(void **state)
{
	struct jf_mnt *m = *state;
	int fd = cache_work_f(m);

	/* The host changes of the tests above, with -o nowatch: a second later
	 * (the watch reacts within milliseconds) the view still serves what
	 * the kernel cached. */
	assert_true(absent(mu_v(m, "work/new")));
	assert_true(present(mu_v(m, "work/gone")));
	assert_true(reads(mu_v(m, "work/sub/inner"), "inner\n"));
	assert_true(present(mu_v(m, "work/sub/inner")));
	assert_true(reads(mu_v(m, "work/config"), "API_KEY=123\n"));
	assert_true(present(mu_v(m, "work/config")));
	host_overwrite(m, "work/f", "SAFE");
	mu_write(m, "work/new", "new\n");
	assert_ok(unlink(mu_s(m, "work/gone")));
	assert_ok(rename(mu_s(m, "work/sub"), mu_s(m, "work/moved")));
	assert_ok(rename(mu_s(m, "work/config"), mu_s(m, "work/.env.production")));
	usleep(1000 * 1000);
	assert_true(fd_reads(fd, "safe\n"));
	mu_write(m, "work/f", "edited on the host\n");
	usleep(200 * 1000);
	assert_true(has_size(mu_v(m, "work/f"), 5));
	assert_true(absent(mu_v(m, "work/new")));
	assert_true(present(mu_v(m, "work/gone")));
	/* the documented gap: the old names still resolve from the cache */
	assert_true(present(mu_v(m, "work/sub")));
	assert_true(present(mu_v(m, "work/sub/inner")));
	assert_true(present(mu_v(m, "work/config")));
	close(fd);
}

static void test_watch_limit_warns(void **state)
{
	struct jf_mnt t;
	char err[400];
	int r;

	(void)state;
	/* A user namespace has its own inotify watch limit
	 * (/proc/sys/user/max_inotify_watches): 3 watches for 6 directories.
	 * The daemon warns once, naming the limit, and serves on. */
	if (mu_sh("unshare -Urm true 2>/dev/null") != 0)
		skip();
	mu_tree_new(&t);
	for (int i = 1; i <= 6; i++) {
		char rel[32];

		snprintf(rel, sizeof(rel), "d%d/f", i);
		mu_write(&t, rel, "f\n");
	}
	snprintf(err, sizeof(err), "%s/err", t.dir);
	r = mu_sh("unshare -Urm sh -c '"
		  "echo 3 > /proc/sys/user/max_inotify_watches || exit 77; "
		  "\"$JAILFS\" -f -o " LONG_TIMEOUTS " %s %s 2>%s & p=$!; i=0; "
		  "until grep -q \" %s \" /proc/self/mountinfo; do "
		  "i=$((i+1)); [ $i -gt 250 ] && exit 3; sleep 0.02; done; r=0; "
		  "for d in 1 2 3 4 5 6; do cat %s/d$d/f >/dev/null || r=4; done; "
		  "kill $p; wait $p || r=5; exit $r'",
		  t.src, t.mnt, err, t.mnt, t.mnt);
	if (r == 77) {
		mu_tree_free(&t);
		skip();
	}
	assert_int_equal(r, 0);
	assert_int_equal(mu_sh("test $(grep -c 'inotify watch limit reached' %s) -eq 1 && "
			       "grep -q max_user_watches %s",
			       err, err),
			 0);
	mu_tree_free(&t);
}

/* ---------------- handles, fds and page cache with and without fast_open ---------------- */

/*
 * In no_open mode (fast_open) the kernel sends no RELEASE for a file made
 * with CREATE once the first OPEN was answered ENOSYS; a handle kept for it
 * would leak an fd and, once the file is removed, its disk space (found by
 * the red team: a build creating 1,000 files ran the daemon out of fds).
 * Invariant 9: the daemon's fds stay bounded, with and without fast_open.
 */
static void test_create_fds_bounded(void **state)
{
	struct jf_mnt *m = *state;
	char rel[64];
	int fd, before, i;

	/* An open(2) first: in no_open mode that OPEN is the one answered ENOSYS. */
	fd = open(mu_v(m, "work/f"), O_RDONLY);
	assert_true(fd >= 0);
	close(fd);
	before = mu_count_fds(m->pid);
	for (i = 0; i < 200; i++) {
		snprintf(rel, sizeof(rel), "work/c%d", i);
		fd = open(mu_v(m, rel), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "x", 1), 1);
		close(fd);
		assert_ok(unlink(mu_v(m, rel)));
	}
	/* RELEASE and FORGET are asynchronous; 40 fds of slack for worker
	 * threads' splice pipes. */
	for (i = 0; i < 150 && mu_count_fds(m->pid) > before + 40; i++)
		usleep(20000);
	if (mu_count_fds(m->pid) > before + 40)
		fail_msg("daemon fds grew from %d to %d after 200 create+unlink", before,
			 mu_count_fds(m->pid));
}

/*
 * Child process with CAP_DAC_OVERRIDE over the view: root, or (as an
 * ordinary user) uid 0 of a user namespace of its own, which any user can
 * make with unshare -Ur, and where the file owner's uid is mapped. It opens
 * @path read-write (no OPEN reaches the daemon in no_open mode), writes
 * @bytes through a shared mapping and msyncs. Exit 0: the mapping was
 * written; 2: the open was refused (EACCES/EROFS); 3: anything else.
 */
static int poison_by_mmap(const char *path, const char *bytes)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		uid_t uid = getuid();
		gid_t gid = getgid();
		char map[64];
		int fd;
		char *p;

		if (geteuid() != 0 && unshare(CLONE_NEWUSER) == 0) {
			snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
			fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, map, strlen(map)) < 0)
				_exit(3);
			close(fd);
			fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
			if (fd >= 0 && write(fd, "deny", 4) < 0)
				_exit(3);
			if (fd >= 0)
				close(fd);
			snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
			fd = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, map, strlen(map)) < 0)
				_exit(3);
			close(fd);
		}
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(errno == EACCES || errno == EROFS ? 2 : 3);
		p = mmap(NULL, strlen(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			_exit(3);
		memcpy(p, bytes, strlen(bytes));
		(void)msync(p, strlen(bytes), MS_SYNC); /* EROFS, ETXTBSY... */
		munmap(p, strlen(bytes));
		close(fd);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 3);
	return WEXITSTATUS(status);
}

/*
 * RESTRICTED is read-only "in every way": bytes written into the page cache
 * of a RESTRICTED file through a shared mapping must not be what the view
 * serves. In no_open mode the kernel lets a caller with CAP_DAC_OVERRIDE
 * map it writable; the page is dropped afterwards only because the daemon's
 * open(O_WRONLY) of the backing file (before its zone check) ends in an
 * IN_CLOSE_WRITE that the watcher turns into an invalidation. When that open
 * fails (ETXTBSY: the RESTRICTED file is a running executable) the written
 * page stays, and an exec through the view runs it.
 */
static void test_restricted_mmap_busy(void **state)
{
	struct jf_mnt *m = *state;
	char head[4] = "";
	pid_t runner;
	int fd, r, status;

	assert_int_equal(mu_sh("cp /usr/bin/sleep '%s'", mu_s(m, "ro/busy")), 0);
	runner = fork();
	assert_true(runner >= 0);
	if (runner == 0) {
		execl(mu_s(m, "ro/busy"), "busy", "30", (char *)NULL);
		_exit(127);
	}
	usleep(200000); /* exec'd: the backing file is now write-denied */
	r = poison_by_mmap(mu_v(m, "ro/busy"), "EVIL");
	if (r == 0) {
		bool clean = EVENTUALLY(({
			fd = open(mu_v(m, "ro/busy"), O_RDONLY | O_CLOEXEC);
			head[0] = 0;
			if (fd >= 0) {
				(void)!read(fd, head, 4);
				close(fd);
			}
			memcmp(head, "\177ELF", 4) == 0;
		}));

		kill(runner, SIGKILL);
		waitpid(runner, &status, 0);
		if (!clean)
			fail_msg("the view serves \"%.4s\" for a RESTRICTED executable whose "
				 "disk bytes are \\177ELF",
				 head);
		return;
	}
	kill(runner, SIGKILL);
	waitpid(runner, &status, 0);
}

/*
 * The host replaces a file the view wrote less than 1 s before (inside the
 * watcher's own-change window, so no invalidation comes): the stale inode
 * answers ESTALE, and the daemon then drops the name, so the view serves
 * the new file within moments instead of ESTALE until entry_timeout (red
 * team: ESTALE for 10 s and more with fast_open).
 */
static void test_host_replaces_own_file(void **state)
{
	struct jf_mnt *m = *state;
	const char *got;

	mu_write(m, "work/own.tmp", "H\n");
	assert_string_equal(slurp(mu_v(m, "work/f")), slurp(mu_v(m, "work/f"))); /* an open first */
	assert_int_equal(mu_sh("echo v >'%s'", mu_v(m, "work/own")), 0);
	assert_ok(rename(mu_s(m, "work/own.tmp"), mu_s(m, "work/own")));
	if (!EVENTUALLY((got = slurp(mu_v(m, "work/own"))) && strcmp(got, "H\n") == 0))
		fail_msg("the view still answers %s for a file replaced on the host",
			 got ? got : strerror(errno));
}

/* The same checks on a fast_open view (zero-message opens, no audit log),
 * named fast_open_<test> in the output. */
#define fast_open_test(f)                                                                          \
	{                                                                                          \
		"fast_open_" #f, f, fast_setup, std_teardown, NULL                                 \
	}

int main(int argc, char **argv)
{
	const struct CMUnitTest all[] = {
		cmocka_unit_test_setup_teardown(test_mountinfo, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_denied_invisible, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_denied_create, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_restricted_matrix, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_restricted_size_limit, std_setup,
						std_teardown),
		cmocka_unit_test_setup_teardown(test_safe_inside_restricted, std_setup,
						std_teardown),
		cmocka_unit_test_setup_teardown(test_safe_matrix, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_safe_rename_flags, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_safe_size_limit, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_posix_mmap_shared, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_posix_open_existing, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_restricted_mmap, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_posix_unlink_while_open, std_setup,
						std_teardown),
		cmocka_unit_test_setup_teardown(test_posix_sparse, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_posix_concurrent_append, std_setup,
						std_teardown),
		cmocka_unit_test_setup_teardown(test_exec_in_view, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_inode_number_reuse, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_inode_number_reuse_external, std_setup,
						std_teardown),
		cmocka_unit_test(test_concurrent_churn),
		cmocka_unit_test_setup_teardown(test_tmpfile, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_escape_dotdot, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_escape_planted_symlink, std_setup,
						std_teardown),
		cmocka_unit_test_setup_teardown(test_escape_agent_symlink, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_symlink_system_target, std_setup,
						std_teardown),
		fast_open_test(test_symlink_system_target),
		cmocka_unit_test_setup_teardown(test_escape_absolute_rewritten, std_setup,
						std_teardown),
		cmocka_unit_test_setup_teardown(test_escape_planted_hardlink, std_setup,
						std_teardown),
		cmocka_unit_test(test_hardlink_index),
		cmocka_unit_test_setup_teardown(test_symlink_rename_and_link, std_setup,
						std_teardown),
		cmocka_unit_test_setup_teardown(test_no_setid_files, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_fallocate_limit, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_dir_nlink_hides, std_setup, std_teardown),
		cmocka_unit_test(test_audit_path_and_guesses),
		cmocka_unit_test_setup_teardown(test_escape_link_restricted_then_write, std_setup,
						std_teardown),
		cmocka_unit_test_setup_teardown(test_escape_rename_to_env, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_escape_mkdir_ssh, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_escape_git_hooks, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_escape_dir_swap, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_escape_pseudo_fs, std_setup, std_teardown),
		cmocka_unit_test(test_mountpoint_inside_source),
		cmocka_unit_test(test_sigterm),
		cmocka_unit_test(test_sigint),
		cmocka_unit_test(test_sigkill_fsync_and_stale),
		cmocka_unit_test(test_daemonize),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_fstab_style_options),
		cmocka_unit_test(test_fstab_mount_helper),
		cmocka_unit_test(test_big_tree),
		cmocka_unit_test_setup_teardown(test_watch_host_edit, watch_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_host_create, watch_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_host_delete, watch_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_host_dir_rename, watch_setup,
						std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_host_rename_to_denied, watch_setup,
						std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_host_move_to_restricted, watch_setup,
						std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_host_move_to_restricted_fast,
						watch_fast_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_own_change_then_host, watch_setup,
						std_teardown),
		cmocka_unit_test_setup_teardown(test_nowatch_stays_cached, nowatch_setup,
						std_teardown),
		cmocka_unit_test(test_watch_limit_warns),
		cmocka_unit_test_setup_teardown(test_create_fds_bounded, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_restricted_mmap_busy, std_setup, std_teardown),
		cmocka_unit_test_setup_teardown(test_host_replaces_own_file, std_setup,
						std_teardown),
		fast_open_test(test_host_replaces_own_file),
		fast_open_test(test_create_fds_bounded),
		fast_open_test(test_restricted_mmap_busy),
		fast_open_test(test_restricted_mmap),
		fast_open_test(test_restricted_matrix),
		fast_open_test(test_safe_matrix),
		fast_open_test(test_posix_open_existing),
		fast_open_test(test_posix_unlink_while_open),
		fast_open_test(test_posix_mmap_shared),
	};

	mu_require_fuse();
	if (argc > 1 && strcmp(argv[1], "--unprivileged") == 0) {
		/* As an ordinary user through fusermount3: everything; the
		 * root-only tests (pseudo-fs mount, mount(8) helper) skip
		 * themselves, and the big tree is smaller. */
		if (!getenv("JF_BIGTREE_FILES"))
			setenv("JF_BIGTREE_FILES", "5000", 1);
	} else if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name(geteuid() == 0 ? "mount" : "mount-unprivileged", all,
					   NULL, NULL);
}
