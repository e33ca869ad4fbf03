/* SPDX-License-Identifier: MIT */
/*
 * Host-change invalidation (watch.c): one inotify instance watches every
 * directory inode the inode table holds, and one thread turns the events
 * into fuse_lowlevel_notify_inval_entry()/_inode() calls, so changes made to
 * SOURCE outside the view (an editor, git checkout, mv on the host) reach
 * the kernel's caches at once instead of after entry_timeout/attr_timeout.
 * Off with -o nowatch.
 *
 * Conventions: daemon.h's (0 or a negative errno). Every function here is
 * thread-safe; which lock the caller may hold is said per function. The
 * notifications are sent only from the watch thread, never from a request
 * handler (libfuse's fuse_lowlevel.h: a handler that invalidates an entry
 * of its own operation deadlocks in the kernel).
 */
#pragma once

#include "daemon.h"

/* Start watching: create the inotify instance (IN_CLOEXEC | IN_NONBLOCK),
 * watch SOURCE's root and start the thread that sends notifications on @se.
 * Call after fuse_session_mount() and fuse_daemonize() (threads do not
 * survive the fork), before the session loop. Returns 0, or -errno (e.g.
 * -EMFILE: fs.inotify.max_user_instances reached, -ENOMEM) after printing a
 * warning: the daemon then serves without watching, with the timeouts as
 * the only bound on staleness. Not thread-safe against itself. */
int jf_watch_start(struct fuse_session *se);
/* Stop and join the thread, remove every watch, free everything. Call after
 * the session loop returned and before fuse_session_unmount(). Safe when
 * jf_watch_start() was not called or failed. */
void jf_watch_stop(void);

/* Watch the directory @inode (the inode table calls this after handing out
 * a reference to a directory, so @inode cannot be freed meanwhile). Opens
 * the directory through the openat2 layer and adds the watch by
 * /proc/self/fd/N, never by a path from '/'. Cheap when @inode is already
 * watched (one mutex). When the watch limit (fs.inotify.max_user_watches)
 * is reached, warns once on stderr and leaves @inode unwatched. Caller must
 * NOT hold jf_fs.lock. */
void jf_watch_dir(struct jf_inode *inode);
/* @inode is being freed: drop its watch (the inotify_rm_watch itself is
 * deferred to the watch thread; no system call here). Caller holds
 * jf_fs.lock (called from the inode table's free path); @inode is used as a
 * key only, never dereferenced. */
void jf_watch_forget(const struct jf_inode *inode);
/* The daemon itself just created, removed or renamed @name in directory
 * @dir (a mutation through the view): for WATCH_OWN_MS (1000 ms) events on
 * that name are not turned into invalidations, since the kernel already
 * learnt the change from our reply. Any lock may be held except the watch
 * module's own; no system call except clock_gettime. */
void jf_watch_own_change(const struct jf_inode *dir, const char *name);

/* ---- inode table helpers used by the watch thread (inode.c) ---- */

/* Nodeid (FUSE_ROOT_ID for SOURCE) of the table's inode (dev, ino) and, when
 * @path is not NULL, its view path (@size >= JF_PATH_MAX + 1), copied under
 * one hold of jf_fs.lock: no pointer escapes. Returns 0, -ENOENT when the
 * table does not hold (dev, ino), -ESTALE when it is detached (removed),
 * -ENAMETOOLONG. */
int jf_inode_find(dev_t dev, ino_t ino, fuse_ino_t *nodeid, char *path, size_t size);

/* The object (dev, ino) was moved on the host to @name in the directory
 * (pdev, pino): when the table holds both, the inode takes its new place and
 * counts as moved, so the zones below it are recomputed before their next
 * use (jf_zone_of). Takes jf_fs.lock. */
void jf_inode_moved(dev_t dev, ino_t ino, dev_t pdev, ino_t pino, const char *name);

/* One inode the kernel may know, as copied by jf_inode_list(). */
struct jf_inode_ent {
	fuse_ino_t ino;
	fuse_ino_t parent; /* 0 when detached or the root */
	char *name;	   /* malloc'd, NULL when detached or the root */
};
/* Snapshot of the whole table (hashed and unhashed inodes, not the root)
 * into a malloc'd array; the caller frees it with jf_inode_list_free().
 * Returns the count or -ENOMEM. Holds jf_fs.lock for the copy (tens of ms
 * for 100,000 inodes): for the inotify queue-overflow fallback only. */
ssize_t jf_inode_list(struct jf_inode_ent **out);
void jf_inode_list_free(struct jf_inode_ent *list, size_t n);
