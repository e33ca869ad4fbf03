/* SPDX-License-Identifier: MIT */
/*
 * The jailfs view a command runs in (view.c): a --root mount checked and
 * asked for its [run] rules, the git work tree a --source view widens to,
 * the one-shot mount, and the view's audit log read back after the command.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct jf_policy;

/*
 * Look @mnt up in /proc/self/mountinfo: it must be the mountpoint of a
 * fuse.jailfs filesystem. Writes the mount's source (the project's absolute
 * path, from the fsname) to @source (PATH_MAX bytes) and the canonical
 * mountpoint to @mnt_out. Returns 0, -ENOENT (no such mount), -EMEDIUMTYPE
 * (mounted, but not fuse.jailfs), or another negative errno.
 */
int jr_view_check_root(const char *mnt, char *source, char *mnt_out);

/*
 * The [run] rules of the jailfs view mounted at @mnt, as its daemon answers
 * getxattr(JF_RUN_XATTR) on the view's root (the policy the daemon was
 * started with, not the file as it is now). Returns 0 with *out a policy
 * holding only [run] (caller frees with jf_policy_free), or NULL when the
 * daemon has none to give (ENODATA, ENOTSUP); or a negative errno with a
 * message in @err (ENOTCONN: the daemon is gone; EACCES: a mount of another
 * user without allow_other).
 */
int jr_view_run_rules(const char *mnt, struct jf_policy **out, char *err, size_t errsz);

/*
 * Is the daemon of the jailfs view mounted at @mnt gone? Asks getxattr on the
 * view's root, which always reaches the daemon (stat may be answered from the
 * kernel's cache). Returns -ENOTCONN or -ECONNABORTED when the daemon is gone
 * (its mount answers so from then on), else 0, also when the daemon does
 * not answer within 2 s (a stopped daemon is not gone). Asks from a child
 * process, so a daemon that never answers holds no thread of ours.
 */
int jr_view_gone(const char *mnt);

/* jr_view_gone(), but -ETIMEDOUT when the daemon did not answer in 2 s. */
int jr_view_probe(const char *mnt);

/*
 * The topmost mount at @mnt (canonical path) in /proc/self/mountinfo: fills
 * @fstype and @source (octal escapes undone). Returns 0, -ENOENT when nothing
 * is mounted there, or a negative errno from fopen. Never touches the mount.
 */
int jr_view_find_mount(const char *mnt, char *fstype, size_t fsz, char *source, size_t ssz);

/* Unmount @dir now or lazily; fusermount3 -u -z where we may not
 * (unprivileged). Errors are ignored: mountinfo tells what is left. */
void jr_view_unmount(const char *dir);

/* The jailfs binary to run (PATH_MAX bytes to @out): env JAILFS, else next
 * to jailrun's own binary, else ../fs/jailfs of the build tree, else
 * "jailfs" from PATH. */
void jr_find_jailfs(char *out, size_t size);

/*
 * The git work tree holding @dir (absolute, canonical): the nearest directory
 * from @dir upwards, @dir itself included, that has a .git entry (directory,
 * or the file of a linked work tree or submodule), without crossing into
 * another filesystem (as git does by default). git is not run. Writes it to
 * @top (PATH_MAX bytes). Returns 0, or -ENOENT when there is none.
 */
int jr_view_git_top(const char *dir, char *top);

struct jr_oneshot {
	char dir[PATH_MAX]; /* private mountpoint (mode 0700), "" when none */
	pid_t daemon;	    /* jailfs -f, our child; 0 when none */
	int pidfd;
	bool mounted;
	dev_t dev;	    /* the mount's st_dev: the FUSE connection's number */
	char log[PATH_MAX]; /* the private refusal log's name until stopped, else "" */
	int log_fd;	    /* that log, read-write, O_CLOEXEC; -1 when none. Owned by
			     * the caller once started (jr_oneshot_stop leaves it open) */
};

/* What a one-shot view shows and how. */
struct jr_oneshot_args {
	const char *source;	 /* the directory the view shows */
	const char *policy;	 /* policy file, or NULL */
	const char *policy_text; /* or the policy as text (handed over in a memfd), or NULL */
	const char *audit;	 /* audit file (level all), or NULL */
	bool refusal_log;	 /* without @audit: a private log of refusals (level denied) */
	bool read_only;		 /* jailfs --read-only */
	const char *changes;	 /* jailfs --changes DIR: an overlay view, or NULL */
};

/*
 * Start `jailfs -f [-o fast_open] [--read-only] [--changes DIR] [--policy P] [--audit LOG
 * --audit-level L] SOURCE DIR` on a fresh private directory and wait (at
 * most 10 s) until the mount shows in mountinfo. LOG is @a->audit at level
 * all, or with @a->refusal_log a fresh private file at level denied (its fd
 * in o->log_fd, its name removed by jr_oneshot_stop); without either the
 * view gets zero-message opens (fast_open). On failure everything started
 * is torn down (o->log_fd may still need a close). Returns 0 or a negative
 * errno with a message in @err.
 */
int jr_oneshot_start(struct jr_oneshot *o, const struct jr_oneshot_args *a, char *err,
		     size_t errsz);

/*
 * Tear a view down whatever its daemon does (stopped, or a thread blocked):
 * abort its FUSE connection (fusectl's abort file where there is one, and
 * SIGKILL to the daemon), so that every request waiting on it fails, and
 * unmount it lazily. The audit records the daemon had not written are lost.
 * jr_oneshot_stop() still has to follow. No-op when not mounted.
 */
void jr_oneshot_abort(struct jr_oneshot *o);

/* Unmount, stop the daemon (SIGTERM, waits so the audit log is flushed),
 * remove the directory (and the log's name if still there; o->log_fd stays
 * open). Idempotent; safe on a zeroed struct. */
void jr_oneshot_stop(struct jr_oneshot *o);

/*
 * The audit file of the jailfs view mounted at @mnt: getxattr
 * JF_AUDIT_XATTR on its root, which the daemon answers once the records
 * queued so far are written. Writes its absolute path to @path (PATH_MAX
 * bytes). Returns 0, -ENODATA when the view writes no audit file, or another
 * negative errno (ENOTCONN: the daemon is gone).
 */
int jr_view_audit_log(const char *mnt, char *path);

/* Where jailrun reads the view's refusals during one command from. */
struct jr_viewlog {
	int fd;		 /* the audit log, O_RDONLY or the private log's fd; -1 none */
	long offset;	 /* where this command's records start, bytes */
	const char *mnt; /* --root: the mountpoint, asked again (a flush) before reading */
	/* a view other commands share: only the records of this pid namespace
	 * (the command's jail, jr_outcome.pidns) are its own; 0 = all */
	unsigned long long pidns;
	char unknown[PATH_MAX + 160]; /* why the refusals are unknown; "" when known */
};

/*
 * --root MNT: find the view's audit log (jr_view_audit_log), open it and
 * note its current end. When there is none or it cannot be read, @l->unknown
 * says why (the command runs all the same). Never fails.
 */
void jr_viewlog_root(struct jr_viewlog *l, const char *mnt);

struct jr_audit_counts;
struct jr_refusals;

/*
 * After the command: read its records from @l (jr_audit_read), under --root
 * once the daemon has written what it queued. Fills @rf (rf->unknown points
 * into @l when they are unknown) and, when @counts is not NULL, the counts;
 * returns 0, or a negative errno when the counts could not be read.
 */
int jr_viewlog_read(struct jr_viewlog *l, struct jr_audit_counts *counts, struct jr_refusals *rf);

/* Close @l's fd (if any). Idempotent. */
void jr_viewlog_close(struct jr_viewlog *l);
