/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the mount suite: temporary source trees, starting a real
 * jailfs daemon (foreground, as a child) on a real mountpoint, stopping it,
 * and checksums of a backing tree. Every mount made here is registered and
 * torn down at exit, also when a test fails.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct jf_mnt {
	char dir[256]; /* temporary directory holding src/ and mnt/ */
	char src[300]; /* SOURCE */
	char mnt[300]; /* MOUNTPOINT */
	pid_t pid;     /* the daemon (jailfs -f) */
	bool mounted;
};

/* 0 when /dev/fuse is usable; otherwise prints why and exits the process:
 * 1 (failure) when CI=true, 77 (skip) elsewhere. */
void mu_require_fuse(void);

/* Create a fresh temporary tree (mkdtemp under $TMPDIR or /tmp). */
void mu_tree_new(struct jf_mnt *m);
/* Remove the tree (rm -rf), unmounting first if needed. */
void mu_tree_free(struct jf_mnt *m);

/* Write @content to SOURCE-relative @rel (creating parent dirs). */
void mu_write(const struct jf_mnt *m, const char *rel, const char *content);
void mu_mkdir(const struct jf_mnt *m, const char *rel);
void mu_symlink(const struct jf_mnt *m, const char *target, const char *rel);
/* Build "MOUNTPOINT/rel" / "SOURCE/rel" into a static rotating buffer. */
const char *mu_v(const struct jf_mnt *m, const char *rel);
const char *mu_s(const struct jf_mnt *m, const char *rel);

/* Start "jailfs -f ARGS... SOURCE MOUNTPOINT" (NULL-terminated @args) and
 * wait until the mount shows in /proc/self/mountinfo. @nofile > 0 sets
 * RLIMIT_NOFILE for the daemon. Returns 0, or -1 if it did not mount. */
int mu_mount(struct jf_mnt *m, const char *const *args, long nofile);
/* SIGTERM (or @sig) the daemon, wait for it; returns its wait status. Falls
 * back to SIGKILL + umount -l so nothing is left behind. */
int mu_umount(struct jf_mnt *m, int sig);
/* Drop @m from the exit-time cleanup list (after unmounting it yourself). */
void mu_forget(const struct jf_mnt *m);
/* Is @path a mountpoint in /proc/self/mountinfo (fstype @type or any)? */
bool mu_is_mounted(const char *path, const char *type);

/* Checksum of every entry below SOURCE (type, mode, size, content, symlink
 * target, user xattrs), skipping paths that start with @skip_prefix. */
uint64_t mu_tree_sum(const struct jf_mnt *m, const char *skip_prefix);
/* Checksum of one SOURCE-relative file's content; 0 if absent. */
uint64_t mu_file_sum(const struct jf_mnt *m, const char *rel);

/*
 * Is a write to RESTRICTED file @path refused, where the daemon refuses it?
 * Opens it with @flags (a write mode) and, if that succeeds, writes one
 * byte. Without @fast_open (OPEN reaches the daemon): open(2) fails with
 * EROFS. With it (FUSE no_open: the kernel opens the file without asking
 * the daemon, and shows the real mode bits): open succeeds and write(2)
 * fails with EROFS; with O_TRUNC, open fails with EROFS (the truncation
 * reaches the daemon as SETATTR). Returns 0 when refused so, else -1 with
 * the reason in @why (@size bytes).
 */
int mu_write_refused(const char *path, int flags, bool fast_open, char *why, size_t size);

/* Run a shell command (sh -c), return its exit status (-1 on signal). */
int mu_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Count open fds of @pid (entries in /proc/PID/fd). */
int mu_count_fds(pid_t pid);
/* VmHWM of @pid in KiB. */
long mu_peak_rss_kib(pid_t pid);

/* The daemon @pid's count of FUSE requests of kind @kind ("READ", "total",
 * "passthrough_opens", ...): SIGUSR1 makes a daemon started with --stats
 * @stats append one report line there (fs/stats.h); its value of @kind
 * (0 when absent) goes to @out. 0, or -1 when no line came within 2 s. */
int mu_requests(pid_t pid, const char *stats, const char *kind, uint64_t *out);

/* Read @path into a static buffer (64 KiB at most, NUL-terminated; the next
 * call overwrites it). NULL when it cannot be opened. */
char *mu_slurp(const char *path);
/* Does directory @dir list @name? Fails the running test if @dir cannot be
 * opened. */
bool mu_dir_has(const char *dir, const char *name);
/* Is a jailfs process for mountpoint @mnt still running (its command line)? */
bool mu_daemon_alive_for(const char *mnt);

/*
 * The standard tree of the test-mount*.c files, mounted by mu_std_setup with
 * their policy (written to mu_policy_path):
 *
 *   work/      SAFE      f, d/, l -> f, .env and id_rsa (DENIED by name)
 *   ro/        RESTRICTED f, d/, l -> f, big (over the 64 KiB limit),
 *              patches/ (SAFE again inside RESTRICTED)
 *   secret/    DENIED    token
 *   .env       DENIED
 *   .git/hooks RESTRICTED (built-in profile project)
 *
 * plus escapes planted in SOURCE: work/pw -> /etc/passwd, work/up -> ../../..,
 * work/toenv -> .env, work/totoken -> ../secret/token, absolute symlinks
 * work/abs and absroot to work/f, work/s/u -> .., work/s/w -> u/../.. and
 * work/hl, a hard link of secret/token.
 */
extern char mu_policy_path[512];
/* The view of the running test was mounted -o fast_open (set by the setups,
 * cleared by mu_std_teardown). */
extern bool mu_fast_open_mount;
/* cmocka setup: the standard tree (plus what @extra adds before the mount),
 * mounted with @args (NULL-terminated); *state becomes its struct jf_mnt,
 * freed by mu_std_teardown. 0, or -1 when it did not mount. */
int mu_setup_with(void **state, const char *const *args, void (*extra)(struct jf_mnt *m));
/* mu_setup_with() of the standard tree's policy with -o fast_open when
 * @fast_open, else -o nofast_open; sets mu_fast_open_mount to match. */
int mu_setup_mode(void **state, bool fast_open, void (*extra)(struct jf_mnt *m));
/* cmocka setups: the standard tree with its policy, with -o nofast_open and
 * with -o fast_open (zero-message opens, FUSE no_open; no audit log). */
int mu_std_setup(void **state);
int mu_fast_setup(void **state);
/* cmocka teardown of the setups above: unmount, remove the tree. */
int mu_std_teardown(void **state);
/* Fail the running test unless a write to RESTRICTED file @path is refused
 * (mu_write_refused, with the mount's fast_open mode). */
void assert_write_refused(const char *path, int flags);

/* A test of the standard tree, on a fresh mount of it. */
#define mu_std_test(f) cmocka_unit_test_setup_teardown(f, mu_std_setup, mu_std_teardown)
/* A test of the standard tree run once more on a fast_open view, named
 * fast_open_<test> in the output. */
#define mu_fast_open_test(f)                                                                       \
	{                                                                                          \
		"fast_open_" #f, f, mu_fast_setup, mu_std_teardown, NULL                           \
	}

struct CMUnitTest;
/*
 * main() of a mount test program: fails (CI=true) or skips without
 * /dev/fuse, then runs @count @tests as the cmocka group @name, or
 * "@name-unprivileged" when not root. Arguments: "--unprivileged" (run as an
 * ordinary user by run-unprivileged.sh: every test, a smaller big tree
 * unless JF_BIGTREE_FILES says otherwise) or a cmocka test filter.
 */
int mu_run_group(const char *name, const struct CMUnitTest *tests, size_t count, int argc,
		 char **argv);
#define mu_run_tests(name, tests, argc, argv)                                                      \
	mu_run_group((name), (tests), sizeof(tests) / sizeof((tests)[0]), (argc), (argv))

/*
 * Assertions for the cmocka tests that include this header (after
 * <cmocka.h>, <errno.h> and <string.h>).
 */
/* @call fails (returns < 0) with errno @e. */
#define assert_errno(call, e)                                                                      \
	do {                                                                                       \
		errno = 0;                                                                         \
		long _r = (long)(call);                                                            \
		if (_r >= 0 || errno != (e))                                                       \
			fail_msg("%s: expected errno %d (%s), got r=%ld errno=%d (%s)", #call,     \
				 (e), strerror(e), _r, errno, strerror(errno));                    \
	} while (0)

/* @call returns 0. */
#define assert_ok(call)                                                                            \
	do {                                                                                       \
		errno = 0;                                                                         \
		long _r = (long)(call);                                                            \
		if (_r != 0)                                                                       \
			fail_msg("%s: returned %ld: %s", #call, _r, strerror(errno));              \
	} while (0)

/* Up to 3 s in 20 ms steps until @cond holds; its final value. */
#define EVENTUALLY(cond)                                                                           \
	({                                                                                         \
		bool _ok = false;                                                                  \
		for (int _i = 0; _i < 150 && !(_ok = (cond)); _i++)                                \
			usleep(20000);                                                             \
		_ok;                                                                               \
	})
