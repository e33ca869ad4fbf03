/* SPDX-License-Identifier: MIT */
/*
 * The kernel overlayfs mount under the daemon's overlay mode (overlay.c):
 * a detached mount (fsopen/fsconfig/fsmount, no mount point, no entry in
 * any mount table) of lowerdir=SOURCE, upperdir=DIR/upper,
 * workdir=DIR/work, userxattr, whose fd the daemon uses as its root fd.
 */
#pragma once

/*
 * Mount the overlay of @lower, @upper and @work (absolute paths). As root,
 * directly; otherwise a child enters a new user and mount namespace that
 * maps the caller's uid and gid to themselves (an unprivileged overlay
 * mount, Linux >= 5.11) and passes the mount's fd back over a socketpair.
 * Returns the fd of the mount's root (caller owns it), or -errno with
 * *@why (may be NULL) naming the step that failed (a static string).
 * Thread-safe: forks a child that makes only system calls.
 */
int jf_overlay_mount(const char *lower, const char *upper, const char *work, const char **why);
