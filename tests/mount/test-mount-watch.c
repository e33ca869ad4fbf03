/* SPDX-License-Identifier: MIT */
/*
 * Mount suite, host changes (the inotify watcher, fs/watch.c): edits,
 * creates, deletes and renames made on the host behind the view show
 * through kernel caches that would otherwise hold for 10 minutes; -o nowatch
 * keeps serving the cache; the watch limit; a file the host replaces right
 * after the view wrote it; what an inotify watcher in the view sees; the
 * unmount during a burst of host changes.
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
#include <sys/inotify.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "mount-util.h"

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

static void watch_tree(struct jf_mnt *m)
{
	mu_write(m, "work/sub/inner", "inner\n");
	mu_write(m, "work/gone", "gone\n");
	mu_write(m, "work/config", "API_KEY=123\n");
}

static int long_mount(void **state, const char *opts)
{
	const char *args[] = {"--policy", mu_policy_path, "-o", opts, NULL};

	return mu_setup_with(state, args, watch_tree);
}

static int watch_setup(void **state)
{
	return long_mount(state, "nofast_open," LONG_TIMEOUTS);
}

static int watch_fast_setup(void **state)
{
	return long_mount(state, "fast_open," LONG_TIMEOUTS);
}

static int nowatch_setup(void **state)
{
	return long_mount(state, "nofast_open,nowatch," LONG_TIMEOUTS);
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
	const char *got = mu_slurp(path);

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
	assert_false(mu_dir_has(mu_v(m, "work"), "new"));
	mu_write(m, "work/new", "new\n");
	assert_true(EVENTUALLY(reads(mu_v(m, "work/new"), "new\n")));
	assert_true(EVENTUALLY(mu_dir_has(mu_v(m, "work"), "new")));
	/* A new directory with content, below the root. */
	assert_true(absent(mu_v(m, "newdir")));
	mu_write(m, "newdir/g", "g\n");
	assert_true(EVENTUALLY(reads(mu_v(m, "newdir/g"), "g\n")));
}

static void test_watch_host_delete(void **state)
{
	struct jf_mnt *m = *state;

	assert_true(present(mu_v(m, "work/gone")));
	assert_true(mu_dir_has(mu_v(m, "work"), "gone"));
	assert_ok(unlink(mu_s(m, "work/gone")));
	assert_true(EVENTUALLY(absent(mu_v(m, "work/gone"))));
	assert_true(EVENTUALLY(!mu_dir_has(mu_v(m, "work"), "gone")));
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
	assert_true(mu_dir_has(mu_v(m, "work/moved"), "inner"));
	assert_true(EVENTUALLY(!mu_dir_has(mu_v(m, "work"), "sub")));
}

static void test_watch_host_rename_to_denied(void **state)
{
	struct jf_mnt *m = *state;

	assert_true(reads(mu_v(m, "work/config"), "API_KEY=123\n"));
	assert_true(present(mu_v(m, "work/config")));
	assert_true(mu_dir_has(mu_v(m, "work"), "config"));
	/* .env.* is DENIED by the built-in secrets profile. */
	assert_ok(rename(mu_s(m, "work/config"), mu_s(m, "work/.env.production")));
	assert_true(EVENTUALLY(absent(mu_v(m, "work/config"))));
	assert_true(absent(mu_v(m, "work/.env.production")));
	assert_false(mu_dir_has(mu_v(m, "work"), "config"));
	assert_false(mu_dir_has(mu_v(m, "work"), ".env.production"));
	assert_true(reads(mu_s(m, "work/.env.production"), "API_KEY=123\n"));
}

/* Zones follow names moved on the host: a handle opened for writing while
 * the file was SAFE cannot write once the host moved its directory to a
 * RESTRICTED name (.git/config), and the file is not shown writable. */
static void host_move_to_restricted(struct jf_mnt *m, bool fast)
{
	char why[512];
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
	/* A new write open: refused at open where the daemon sees opens, at
	 * the first write with fast_open; the real mode bits either way. */
	assert_ok(stat(mu_v(m, "work/.git/config"), &st));
	assert_int_not_equal(st.st_mode & 0200, 0);
	if (mu_write_refused(mu_v(m, "work/.git/config"), O_WRONLY | O_APPEND, fast, why,
			     sizeof(why)) < 0)
		fail_msg("%s", why);
	assert_true(mu_tree_sum(m, NULL) == sum);
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

/*
 * The host replaces a file the view wrote less than 1 s before (inside the
 * watcher's own-change window, so no invalidation comes): the stale inode
 * answers ESTALE, and the daemon then drops the name, so the view serves
 * the new file within moments instead of ESTALE until entry_timeout (red
 * team: ESTALE for 10 s and more with fast_open).
 */
/* Within 1 s (50 tries, 20 ms apart): what README promises a poller. */
#define WITHIN_1S(cond)                                                                            \
	({                                                                                         \
		bool _ok = false;                                                                  \
		for (int _i = 0; _i < 50 && !(_ok = (cond)); _i++)                                 \
			usleep(20000);                                                             \
		_ok;                                                                               \
	})

/* The union of the masks of the inotify events pending on @ifd. */
static uint32_t pending_events(int ifd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	uint32_t mask = 0;
	ssize_t n;

	while ((n = read(ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			mask |= ev->mask;
			p += sizeof(*ev) + ev->len;
		}
	}
	return mask;
}

/*
 * A file watcher in the view (inotify on the view's inodes, as inotifywait,
 * chokidar or watchdog use) sees the changes made through the mount, by any
 * process (another jailrun --root session on the same mount): the kernel
 * makes those events itself. It sees none of the host's: the daemon's FUSE
 * notifications (inval_entry, inval_inode) drop the kernel's caches and
 * make no fsnotify event, and the kernel has no notification that would
 * (FUSE_NOTIFY_DELETE's d_delete() makes none either). A poller (stat,
 * readdir) sees the host's changes within a second, through the watch.
 */
static void test_watcher_in_view(void **state)
{
	struct jf_mnt *m = *state;
	int fd = cache_work_f(m);
	int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	const uint32_t want = IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO |
			      IN_MOVED_FROM | IN_ATTRIB;
	uint32_t got;

	close(fd);
	assert_true(ifd >= 0);
	assert_true(inotify_add_watch(ifd, mu_v(m, "work"), want) >= 0);
	assert_true(absent(mu_v(m, "work/hostnew")));
	assert_true(present(mu_v(m, "work/gone")));
	mu_write(m, "work/hostnew", "new\n");
	mu_write(m, "work/f", "edited on the host\n");
	assert_int_equal(unlink(mu_s(m, "work/gone")), 0);
	assert_true(WITHIN_1S(present(mu_v(m, "work/hostnew"))));
	assert_true(WITHIN_1S(has_size(mu_v(m, "work/f"), 19)));
	assert_true(WITHIN_1S(absent(mu_v(m, "work/gone"))));
	assert_true(WITHIN_1S(mu_dir_has(mu_v(m, "work"), "hostnew")));
	usleep(300000);
	got = pending_events(ifd);
	print_message("host changes: inotify mask %#x\n", got);
	assert_int_equal(got & want, 0);
	/* another process, through the view */
	assert_int_equal(mu_sh("echo v > '%s' && echo more >> '%s' && rm '%s'",
			       mu_v(m, "work/viewnew"), mu_v(m, "work/f"), mu_v(m, "work/hostnew")),
			 0);
	assert_true(EVENTUALLY(((got |= pending_events(ifd)) &
				(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_DELETE)) ==
			       (IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_DELETE)));
	close(ifd);
}

static void test_host_replaces_own_file(void **state)
{
	struct jf_mnt *m = *state;
	const char *got;

	mu_write(m, "work/own.tmp", "H\n");
	assert_string_equal(mu_slurp(mu_v(m, "work/f")),
			    mu_slurp(mu_v(m, "work/f"))); /* an open first */
	assert_int_equal(mu_sh("echo v >'%s'", mu_v(m, "work/own")), 0);
	assert_ok(rename(mu_s(m, "work/own.tmp"), mu_s(m, "work/own")));
	if (!EVENTUALLY((got = mu_slurp(mu_v(m, "work/own"))) && strcmp(got, "H\n") == 0))
		fail_msg("the view still answers %s for a file replaced on the host",
			 got ? got : strerror(errno));
}

/* Host changes in @ndirs directories of SOURCE/work/burst, each file
 * created, renamed and removed (nothing stays: bounded), until killed or
 * after 10 s. Run in a child. */
static void host_burst(const struct jf_mnt *m, int ndirs)
{
	char a[600], b[600];

	alarm(10);
	for (unsigned long i = 0;; i++) {
		int d = (int)(i % (unsigned long)ndirs), fd;

		snprintf(a, sizeof(a), "%s/work/burst/d%d/f%lu", m->src, d, i % 64);
		snprintf(b, sizeof(b), "%s/work/burst/d%d/g%lu", m->src, d, i % 64);
		fd = open(a, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
		(void)rename(a, b);
		(void)unlink(b);
	}
}

/*
 * The unmount while the host changes SOURCE as fast as it can: the watcher
 * keeps pushing invalidations to the notifier while the session loop ends,
 * the watcher is joined, and the notifier is drained and joined before the
 * session's fd is closed. The daemon exits 0 within mu_umount's bound, the
 * mount is gone, and its -d counts show notifications went through the
 * queue. tests/sanitize.sh runs this under ThreadSanitizer, where a send
 * racing the close of the session's fd is a report.
 */
static void test_unmount_during_host_burst(void **state)
{
	const char *args[] = {"-d", "-o", LONG_TIMEOUTS, NULL};
	char err[300], rel[64];
	int ndirs = 16, saved, fd, status;
	struct jf_mnt t;
	pid_t burst;

	(void)state;
	mu_tree_new(&t);
	for (int d = 0; d < ndirs; d++) {
		snprintf(rel, sizeof(rel), "work/burst/d%d/keep", d);
		mu_write(&t, rel, "k\n");
	}
	/* -d's lines go to a file: the daemon inherits our stderr */
	snprintf(err, sizeof(err), "%s/err", t.dir);
	fd = open(err, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	saved = dup(2);
	dup2(fd, 2);
	close(fd);
	status = mu_mount(&t, args, 0);
	dup2(saved, 2);
	close(saved);
	assert_int_equal(status, 0);
	/* every directory known to the kernel, so watched, and cached */
	assert_int_equal(mu_sh("ls -lR '%s' >/dev/null", mu_v(&t, "work/burst")), 0);
	burst = fork();
	assert_true(burst >= 0);
	if (burst == 0) {
		host_burst(&t, ndirs);
		_exit(0);
	}
	usleep(500 * 1000);
	status = mu_umount(&t, SIGTERM);
	kill(burst, SIGKILL);
	waitpid(burst, NULL, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_false(mu_is_mounted(t.mnt, NULL));
	assert_int_equal(mu_sh("grep -Eq 'jailfs: notify: [1-9][0-9]* queued' '%s'", err), 0);
	assert_int_equal(mu_sh("! grep -q 'blocked in the kernel' '%s'", err), 0);
	mu_tree_free(&t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_watch_host_edit, watch_setup, mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_host_create, watch_setup,
						mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_host_delete, watch_setup,
						mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_host_dir_rename, watch_setup,
						mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_host_rename_to_denied, watch_setup,
						mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_host_move_to_restricted, watch_setup,
						mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_host_move_to_restricted_fast,
						watch_fast_setup, mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_watch_own_change_then_host, watch_setup,
						mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_nowatch_stays_cached, nowatch_setup,
						mu_std_teardown),
		cmocka_unit_test(test_watch_limit_warns),
		mu_std_test(test_host_replaces_own_file),
		cmocka_unit_test_setup_teardown(test_watcher_in_view, watch_setup, mu_std_teardown),
		cmocka_unit_test_setup_teardown(test_watcher_in_view, watch_fast_setup,
						mu_std_teardown),
		mu_fast_open_test(test_host_replaces_own_file),
		cmocka_unit_test(test_unmount_during_host_burst),
	};

	return mu_run_tests("mount-watch", tests, argc, argv);
}
