/* SPDX-License-Identifier: MIT */
/*
 * Live views: what a daemon says about itself (the JF_INFO_XATTR attribute
 * of its root), the fuse.jailfs mounts of /proc/self/mountinfo, and the
 * commands built on them, jailfs --list and jailfs --stop (status.c).
 */
#ifndef JAILFS_STATUS_H
#define JAILFS_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Read-only attribute of a view's root, answered by its daemon: lines
 * "pid N", "source PATH", "policy PATH|built-in", "mode MODES", "audit LEVEL
 * PATH|none". Never set through the view. */
#define JF_INFO_XATTR "user.jailfs.info"

/* Write the daemon's JF_INFO_XATTR text into @buf (@size bytes). Returns its
 * length (no NUL counted) or -ENAMETOOLONG. Reads jf_fs and its options;
 * any thread. */
int jf_status_info(char *buf, size_t size);

/* One fuse.jailfs mount of /proc/self/mountinfo, unescaped; the strings
 * live until the callback returns. */
struct jf_mount {
	const char *mountpoint, *source;
	uid_t uid; /* user_id= of the mount: who mounted it */
};

/* Call @fn for each fuse.jailfs mount, in mountinfo order, until it returns
 * non-zero. Returns that value, 0 after the last, or -errno (mountinfo
 * unreadable). Any thread. */
int jf_mounts_foreach(int (*fn)(const struct jf_mount *m, void *arg), void *arg);

int jf_cmd_list(int argc, char **argv); /* jailfs --list */
int jf_cmd_stop(int argc, char **argv); /* jailfs --stop MOUNTPOINT */

#endif
