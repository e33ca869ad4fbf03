/* SPDX-License-Identifier: MIT */
/*
 * The daemon's end of /dev/fuse, and FUSE passthrough on a libfuse that does
 * not know it (3.14, Debian 12).
 *
 * Every request and reply passes through our own read and writev hooks
 * (fuse_session_custom_io()): requests are counted (stats.h), the INIT reply
 * gets the protocol 7.40 bits libfuse 3.14 cannot set (FUSE_PASSTHROUGH with
 * max_stack_depth, FUSE_HANDLE_KILLPRIV_V2), and OPEN/CREATE replies of
 * passthrough handles get FOPEN_PASSTHROUGH and the backing id. With
 * -o io_uring, a reply to a request taken from a ring goes on into its ring
 * entry instead of /dev/fuse (uring.h), after the same patching.
 *
 * Passthrough (Linux >= 6.9): the kernel serves read, write, splice and mmap
 * of such a handle from a backing file the daemon registered with
 * FUSE_DEV_IOC_BACKING_OPEN, without a request. The kernel wants one backing
 * file per inode while any handle of it is open, and every handle of an inode
 * in the same mode (all passthrough or none, else open(2) fails with EIO): the
 * first open of an inode decides, later ones follow while it stays open.
 * Registering needs CAP_SYS_ADMIN in the initial user namespace.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "fsstate.h"

/* Install the hooks on @se, after fuse_session_mount() (its fd is the one
 * the hooks use). 0 or a negative errno from fuse_session_custom_io(). */
int jf_devio_install(struct fuse_session *se);

/* From the init handler: decide what the INIT reply asks the kernel for
 * beyond what libfuse set in @conn (passthrough, killpriv v2), and clear the
 * libfuse flags that would contradict it (writeback cache with passthrough).
 * With -d, says once whether passthrough is on and why not. */
void jf_pt_init(struct fuse_conn_info *conn);
/* Does the daemon hold CAP_SYS_ADMIN, effective, in the initial user
 * namespace (whose uid_map is the identity over the whole range)? What
 * FUSE_DEV_IOC_BACKING_OPEN asks. Reads /proc/self/uid_map; any thread. */
bool jf_pt_privileged(void);
/* Is passthrough in use on this mount (asked at INIT, accepted so far)? */
bool jf_pt_active(void);
/* Did the INIT reply ask for FUSE_HANDLE_KILLPRIV_V2: the kernel no longer
 * clears set-id bits on write, truncate and open(O_TRUNC) itself. */
bool jf_pt_killpriv_v2(void);

/*
 * Decide the data path of the new handle @f (not yet on its inode's
 * open_files list; its fd, zone, writable set) on a file of @size bytes at
 * open: sets f->backing_id (0: served by the daemon). The first open of an
 * inode decides; later ones follow while any is open. Called with
 * jf_fs.lock held, in the hold that links @f, so deciding and linking are
 * one step. Registering a backing file is an ioctl(2) on /dev/fuse, which
 * the lock is never held across, so it happens between two holds: @reg is
 * 0 at the first call; -EAGAIN asks the caller to drop the lock, set *@reg
 * = jf_pt_register(@f), take the lock and call again. Otherwise returns 0,
 * or -ETXTBSY when the inode's open handles are passthrough and this one
 * may not be (a write open where the zone limits file sizes); *@reg is then
 * a backing id registered but not used (another handle of the inode decided
 * in between), which the caller passes to jf_pt_unregister() once the lock
 * is dropped, or 0 or -1.
 */
int jf_pt_attach(struct jf_file *f, off_t size, int32_t *reg);
/* Register @f's fd as a backing file (FUSE_DEV_IOC_BACKING_OPEN): its id
 * (> 0), or -1 when the kernel refused (said once with -d; EPERM turns
 * passthrough off for the mount). Without jf_fs.lock. */
int32_t jf_pt_register(const struct jf_file *f);
/* @f was just taken off its inode's open_files list (jf_fs.lock held): the
 * backing id to jf_pt_unregister() once the lock is dropped, when no other
 * handle of the inode uses it, else 0. No handle can take that id up in
 * between: a new handle only copies the id of one on the list. */
int32_t jf_pt_detach(const struct jf_file *f);
/* Drop the backing id @id (FUSE_DEV_IOC_BACKING_CLOSE); nothing when @id <=
 * 0. Without jf_fs.lock. */
void jf_pt_unregister(int32_t id);

/* fuse_reply_open() / fuse_reply_create() that mark the reply of a
 * passthrough handle (fi->fh a struct jf_file with backing_id > 0) on its
 * way to the kernel. Same return values. */
int jf_reply_open(fuse_req_t req, const struct fuse_file_info *fi);
int jf_reply_create(fuse_req_t req, const struct fuse_entry_param *e,
		    const struct fuse_file_info *fi);

/* Clear what a write must clear on the file @fd (open for writing; not
 * O_PATH), when it is a regular file: S_ISUID, S_ISGID when group-executable, and the
 * security.capability xattr. The kernel leaves this to the daemon with
 * FUSE_HANDLE_KILLPRIV_V2, and never does it for passthrough writes (made
 * with the daemon's credentials); done when a handle is opened for writing
 * and on truncate, for every caller (no set-ID file through the view). 0 or
 * a negative errno from fstat(2)/chmod(2); the xattr is removed best effort. */
int jf_kill_setid(int fd);
