/* SPDX-License-Identifier: MIT */
/*
 * The daemon's fds under a hostile opener: a real jailfs (build's fs/jailfs)
 * with RLIMIT_NOFILE 256, a child process (its own limit far higher) that
 * keeps opening view files until the daemon refuses, and this process as
 * "every other user of the mount" meanwhile:
 *   - opens of one file: refused with EMFILE at the opener's share (half
 *     the budget), well before the daemon's limit; ls, stat, a lookup of a
 *     new name, readdir and another process's cat and touch keep working;
 *     a second opener of the same user gets the rest of the user's share
 *     (three quarters); once the openers close everything, opens work
 *     again;
 *   - openers of one user, as many processes as they like, leave another
 *     user (jftest, on root's mount with allow_other) its cat and touch;
 *   - directory handles: the same bound, stat and lookups keep working;
 *   - -o fast_open: opens cost the daemon nothing; files unlinked while
 *     open (orphan fds) are bounded too and unlinks keep working;
 *   - the soft RLIMIT_NOFILE is raised to the hard limit at start-up.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mount-util.h"

#define DAEMON_NOFILE 256
#define OPENER_NOFILE 8192

static struct jf_mnt M;

enum hold_kind {
	HOLD_FILE,     /* open one file again and again */
	HOLD_DIR,      /* open one directory and read it, again and again */
	HOLD_UNLINKED, /* create a file, keep it open, unlink it; repeat */
};

struct holder {
	pid_t pid;
	int release; /* write end: closing it makes the opener close all and exit */
	int count;   /* how many it opened */
	int err;     /* errno of the open that failed, 0 when it reached @max */
	int first;   /* 1 when its first fd still read back what it wrote/read */
};

/* In the child: one open of @kind number @i; the fd or -1 with errno. */
static int hold_one(enum hold_kind kind, int i)
{
	char name[64];
	int fd;

	switch (kind) {
	case HOLD_FILE:
		return open(mu_v(&M, "d/f1"), O_RDONLY | O_CLOEXEC);
	case HOLD_DIR:
		fd = open(mu_v(&M, "d"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			char buf[4096];

			/* a READDIR, so the daemon's handle opens its stream */
			if (syscall(SYS_getdents64, fd, buf, sizeof(buf)) < 0) {
				close(fd);
				return -1;
			}
		}
		return fd;
	case HOLD_UNLINKED:
		snprintf(name, sizeof(name), "u/%d", i);
		fd = open(mu_v(&M, name), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			return -1;
		if (write(fd, "x", 1) != 1 || unlink(mu_v(&M, name)) < 0) {
			int e = errno;

			close(fd);
			errno = e;
			return -1;
		}
		return fd;
	}
	return -1;
}

static _Noreturn void holder_main(enum hold_kind kind, int max, int report, int release)
{
	struct rlimit rl = {OPENER_NOFILE, OPENER_NOFILE};
	int res[3] = {0, 0, 0}, first = -1, fd;
	char c;

	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		_exit(2);
	while (res[0] < max) {
		fd = hold_one(kind, res[0]);
		if (fd < 0) {
			res[1] = errno;
			break;
		}
		if (first < 0)
			first = fd;
		res[0]++;
	}
	if (kind == HOLD_DIR)
		res[2] = first >= 0;
	else
		res[2] = first >= 0 && pread(first, &c, 1, 0) == 1 &&
			 c == (kind == HOLD_FILE ? 'o' : 'x');
	if (write(report, res, sizeof(res)) != sizeof(res))
		_exit(3);
	while (read(release, &c, 1) > 0)
		;
	_exit(0); /* the kernel closes every fd */
}

static void holder_start(struct holder *h, enum hold_kind kind, int max)
{
	int rep[2], rel[2], res[3];

	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	assert_int_equal(pipe2(rel, O_CLOEXEC), 0);
	h->pid = fork();
	assert_true(h->pid >= 0);
	if (h->pid == 0) {
		close(rep[0]);
		close(rel[1]);
		holder_main(kind, max, rep[1], rel[0]);
	}
	close(rep[1]);
	close(rel[0]);
	h->release = rel[1];
	assert_int_equal(read(rep[0], res, sizeof(res)), sizeof(res));
	close(rep[0]);
	h->count = res[0];
	h->err = res[1];
	h->first = res[2];
}

/* Let the @n openers @h close everything and exit, then wait (at most 10 s)
 * until the daemon holds fewer than 64 fds: the kernel sends RELEASE
 * asynchronously, after close(2) has returned. */
static void holders_stop(struct holder *h, int n)
{
	int status, i;

	/* all first: an opener started later holds the earlier ones' pipes */
	for (i = 0; i < n; i++)
		close(h[i].release);
	for (i = 0; i < n; i++) {
		assert_int_equal(waitpid(h[i].pid, &status, 0), h[i].pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	for (i = 0; i < 1000 && mu_count_fds(M.pid) >= 64; i++)
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	assert_true(mu_count_fds(M.pid) < 64);
}

static void holder_stop(struct holder *h)
{
	holders_stop(h, 1);
}

/* Number of visible names in view directory @rel, -errno on failure. */
static int count_names(const char *rel)
{
	DIR *dp = opendir(mu_v(&M, rel));
	struct dirent *de;
	int n = 0;

	if (!dp)
		return -errno;
	while ((de = readdir(dp)))
		n += de->d_name[0] != '.';
	closedir(dp);
	return n;
}

static void tree(const char *const *args, long nofile)
{
	mu_tree_new(&M);
	mu_write(&M, "d/f1", "one\n");
	mu_write(&M, "d/f2", "two\n");
	mu_mkdir(&M, "u");
	if (mu_mount(&M, args, nofile) < 0)
		fail_msg("jailfs did not mount");
}

/* What every other user of the mount must still be able to do. */
static void others_still_work(bool readdir_too)
{
	struct stat st;

	assert_int_equal(stat(mu_v(&M, "d/f2"), &st), 0);
	assert_int_equal(st.st_size, 4);
	/* a name the kernel has never seen: a LOOKUP the daemon must serve */
	mu_write(&M, "d/late", "late\n");
	assert_int_equal(stat(mu_v(&M, "d/late"), &st), 0);
	assert_int_equal(st.st_size, 5);
	if (readdir_too) {
		assert_int_equal(count_names("d"), 3);
		assert_int_equal(mu_sh("ls -l '%s' >/dev/null", mu_v(&M, "d")), 0);
	}
	assert_true(mu_count_fds(M.pid) <= DAEMON_NOFILE);
}

static void open_reads(const char *rel, const char *want)
{
	char buf[64] = "";
	int fd = open(mu_v(&M, rel), O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), (ssize_t)strlen(want));
	assert_string_equal(buf, want);
	close(fd);
}

/* Real cat(1) and touch(1) through the view as user @user (NULL: this
 * process's): both succeed. */
static void cat_and_touch(const char *user, const char *name)
{
	const char *as = user ? "setpriv --reuid=" : "";
	const char *rest = user ? " --regid=" : "";

	assert_int_equal(mu_sh("%s%s%s%s%s cat '%s' >/dev/null", as, user ? user : "", rest,
			       user ? user : "", user ? " --clear-groups" : "", mu_v(&M, "d/f2")),
			 0);
	assert_int_equal(mu_sh("%s%s%s%s%s touch '%s'", as, user ? user : "", rest,
			       user ? user : "", user ? " --clear-groups" : "", mu_v(&M, name)),
			 0);
}

static void test_file_opens_bounded(void **state)
{
	static const char *const args[] = {"-o", "nofast_open", NULL}; /* opens hold fds */
	struct holder h[2];
	int first;

	(void)state;
	tree(args, DAEMON_NOFILE);
	holder_start(&h[0], HOLD_FILE, OPENER_NOFILE - 64);
	/* refused by the daemon (EMFILE) at the opener's share of the budget,
	 * half of it: long before the opener's own limit, and not so early that
	 * a normal workload would notice */
	assert_int_equal(h[0].err, EMFILE);
	assert_in_range(h[0].count, DAEMON_NOFILE / 8, DAEMON_NOFILE / 2);
	assert_true(h[0].first);
	others_still_work(true);
	/* another process of the same user: its cat and touch work */
	cat_and_touch(NULL, "u/t1");
	open_reads("d/f2", "two\n");
	/* a second opener of the same user gets what is left of the user's
	 * share (three quarters): then that user's opens are refused, and
	 * lookups, stat and readdir still work */
	holder_start(&h[1], HOLD_FILE, OPENER_NOFILE - 64);
	assert_int_equal(h[1].err, EMFILE);
	assert_true(h[1].count > 0 && h[1].count < h[0].count);
	assert_errno(open(mu_v(&M, "d/f2"), O_RDONLY | O_CLOEXEC), EMFILE);
	others_still_work(true);
	holders_stop(h, 2);
	open_reads("d/f2", "two\n");
	/* and the budget was all given back: the same number of opens again */
	first = h[0].count;
	holder_start(&h[0], HOLD_FILE, OPENER_NOFILE - 64);
	assert_int_equal(h[0].err, EMFILE);
	assert_int_equal(h[0].count, first);
	holder_stop(&h[0]);
	assert_int_equal(mu_umount(&M, SIGTERM), 0);
	mu_tree_free(&M);
}

/*
 * Root's mount with allow_other: openers of one user, however many
 * processes, leave another user a quarter of the budget; that user's cat
 * and touch (and, as every other user, its lookups) still work.
 */
static void test_file_shares_per_user(void **state)
{
	static const char *const args[] = {"-o", "allow_other", NULL};
	struct holder h[3];

	(void)state;
	if (geteuid() != 0 || mu_sh("id jftest >/dev/null 2>&1") != 0)
		skip(); /* needs root and the test user jftest */
	tree(args, DAEMON_NOFILE);
	assert_ok(chmod(M.dir, 0755));
	assert_ok(chmod(mu_s(&M, "u"), 0777));
	for (int i = 0; i < 3; i++) {
		holder_start(&h[i], HOLD_FILE, OPENER_NOFILE - 64);
		assert_int_equal(h[i].err, EMFILE);
	}
	assert_int_equal(h[2].count, 0); /* the user's share is spent */
	cat_and_touch("jftest", "u/other");
	holders_stop(h, 3);
	assert_int_equal(mu_umount(&M, SIGTERM), 0);
	mu_tree_free(&M);
}

static void test_dir_handles_bounded(void **state)
{
	/* short timeouts: the kernel sends OPENDIR for every open(2) of a
	 * directory (with the default ones it sends none, see ops-dir.c) */
	static const char *const args[] = {"-o", "entry_timeout=1,attr_timeout=1", NULL};
	struct holder h;

	(void)state;
	tree(args, DAEMON_NOFILE);
	holder_start(&h, HOLD_DIR, OPENER_NOFILE - 64);
	assert_int_equal(h.err, EMFILE);
	assert_in_range(h.count, DAEMON_NOFILE / 4, DAEMON_NOFILE - 1);
	others_still_work(false);
	holder_stop(&h);
	assert_int_equal(count_names("d"), 3);
	assert_int_equal(mu_umount(&M, SIGTERM), 0);
	mu_tree_free(&M);
}

static void test_fast_open(void **state)
{
	static const char *const args[] = {"-o", "fast_open", NULL};
	struct holder h;

	(void)state;
	tree(args, DAEMON_NOFILE);
	/* no OPEN, no handle: the opener meets only its own limit */
	holder_start(&h, HOLD_FILE, 2000);
	assert_int_equal(h.err, 0);
	assert_int_equal(h.count, 2000);
	assert_true(h.first);
	assert_true(mu_count_fds(M.pid) < 64);
	others_still_work(true);
	holder_stop(&h);
	/* files unlinked while open keep an fd of the daemon each (orphans):
	 * bounded like handles; past the bound unlinks still work */
	holder_start(&h, HOLD_UNLINKED, 600);
	assert_int_equal(h.err, 0);
	assert_int_equal(h.count, 600);
	assert_true(h.first); /* the first orphan was kept: it still reads */
	assert_int_equal(count_names("u"), 0);
	assert_true(mu_count_fds(M.pid) <= DAEMON_NOFILE);
	mu_write(&M, "d/late", "late\n");
	assert_int_equal(mu_sh("ls -l '%s' >/dev/null", mu_v(&M, "d")), 0);
	open_reads("d/late", "late\n");
	holder_stop(&h);
	assert_int_equal(mu_umount(&M, SIGTERM), 0);
	mu_tree_free(&M);
}

/* Max open files "soft hard" of @pid from /proc/PID/limits. */
static void nofile_of(pid_t pid, long *soft, long *hard)
{
	char path[64], line[256];
	FILE *f;

	*soft = *hard = -1;
	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Max open files", 14))
			sscanf(line + 14, "%ld %ld", soft, hard);
	fclose(f);
}

static void test_soft_limit_raised(void **state)
{
	struct rlimit old, low;
	long soft, hard;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = (struct rlimit){DAEMON_NOFILE, old.rlim_max};
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	mu_tree_new(&M);
	mu_write(&M, "d/f1", "one\n");
	if (mu_mount(&M, NULL, 0) < 0)
		fail_msg("jailfs did not mount");
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	nofile_of(M.pid, &soft, &hard);
	assert_int_equal(hard, (long)old.rlim_max);
	assert_int_equal(soft, (long)old.rlim_max);
	assert_int_equal(mu_umount(&M, SIGTERM), 0);
	mu_tree_free(&M);
}

/* Also after a failed assertion: no mount and no tree left behind. */
static int teardown(void **state)
{
	(void)state;
	if (M.dir[0])
		mu_tree_free(&M);
	memset(&M, 0, sizeof(M));
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_file_opens_bounded, teardown),
		cmocka_unit_test_teardown(test_file_shares_per_user, teardown),
		cmocka_unit_test_teardown(test_dir_handles_bounded, teardown),
		cmocka_unit_test_teardown(test_fast_open, teardown),
		cmocka_unit_test_teardown(test_soft_limit_raised, teardown),
	};

	mu_require_fuse();
	return cmocka_run_group_tests_name("mount-fds", tests, NULL, NULL);
}
