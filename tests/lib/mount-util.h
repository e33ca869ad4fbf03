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
 * Is a write to RESTRICTED file @path refused? Opens it with @flags (a write
 * mode) and, if that succeeds, writes one byte. Refused means: open(2) fails
 * with EROFS or EACCES (EACCES for a caller without CAP_DAC_OVERRIDE: the
 * view shows no write bits); or, only when @fast_open (FUSE no_open: the
 * daemon sees no OPEN), open succeeds and write(2) fails with EROFS.
 * Returns 0 when refused, else -1 with the reason in @why (@size bytes).
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
