/* SPDX-License-Identifier: MIT */
/*
 * Host-change invalidation (watch.c): one inotify instance watches every
 * directory inode the inode table holds, and one thread turns the events
 * into fuse_lowlevel_notify_inval_entry()/_inode() calls queued for the
 * notifier (notify.h), so changes made to SOURCE outside the view (an
 * editor, git checkout, mv on the host) reach the kernel's caches at once
 * instead of after entry_timeout/attr_timeout. Off with -o nowatch. Events
 * on names the daemon itself just changed are skipped (recent.h).
 *
 * Conventions: fsstate.h's (0 or a negative errno). Every function here is
 * thread-safe; which lock the caller may hold is said per function.
 */
#pragma once

#include "fsstate.h"

/* Start watching: create the inotify instance (IN_CLOEXEC | IN_NONBLOCK),
 * watch SOURCE's root, keep the daemon's recent changes (recent.h) and start
 * the thread that turns events into notifications. Call after
 * fuse_daemonize() (threads do not survive the fork) and jf_notify_start(),
 * before the session loop. Returns 0, or -errno (e.g. -EMFILE:
 * fs.inotify.max_user_instances reached, -ENOMEM) after printing a warning:
 * the daemon then serves without watching, with the timeouts as the only
 * bound on staleness. Not thread-safe against itself. */
int jf_watch_start(void);
/* Stop and join the thread (promptly: it waits only in poll(2) and short
 * sleeps, never in the kernel's FUSE code), remove every watch, free
 * everything. Call after the session loop returned and before
 * jf_notify_stop(). Safe when jf_watch_start() was not called or failed. */
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
