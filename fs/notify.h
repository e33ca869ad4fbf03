/* SPDX-License-Identifier: MIT */
/*
 * The daemon's one notifier (notify.c): every kernel invalidation
 * (fuse_lowlevel_notify_inval_entry, _inval_inode, the dentry epoch) goes
 * out from one thread, fed by a bounded queue (notifyq.h) that the watcher
 * and the request handlers push to. A push never blocks and never sends,
 * so a handler may ask for an invalidation of the very inode it is
 * answering (libfuse's fuse_lowlevel.h: sent from the handler, it could
 * wait in the kernel for that request).
 *
 * Queue full (JF_NOTIFY_QUEUE items behind: the thread is held up in the
 * kernel, or the host changes faster than notifications go out): the queued
 * items become one "invalidate everything", as for an inotify overflow
 * (watch.c): the dentry epoch where the kernel has it, then every inode the
 * table holds. Nothing is dropped in favour of the timeouts, which may be
 * long.
 *
 * Conventions: fsstate.h's. Every function is thread-safe; the pushes take
 * one mutex of their own (a leaf: any other lock may be held) and malloc.
 */
#pragma once

#include "fsstate.h"

/* Items the queue holds before it turns into one "invalidate everything". */
#define JF_NOTIFY_QUEUE 16384

/* Start the notifier thread, sending on @se. Call after fuse_daemonize()
 * (threads do not survive the fork), before the session loop. 0, or -errno
 * after a warning on stderr: notifications are then not sent, and the
 * timeouts are the only bound on staleness. Not thread-safe against itself. */
int jf_notify_start(struct fuse_session *se);
/* Stop: refuse further pushes, drain the queue (nothing is sent once the
 * session loop has ended), join the thread; a thread blocked in the kernel
 * after 2 s gets the FUSE connection aborted and 2 s more, then is left
 * behind. Call after the session loop and the watcher have stopped, before
 * fuse_session_unmount() closes the session's fd. Safe when
 * jf_notify_start() was not called or failed. */
void jf_notify_stop(void);

/* Queue inval_entry(@parent, @name): the kernel drops its dentry (a negative
 * one too; for a directory its cached subtree). @name is copied. */
void jf_notify_entry(fuse_ino_t parent, const char *name);
/* Queue inval_inode(@ino, 0, 0): its attributes and page cache. */
void jf_notify_inode(fuse_ino_t ino);
/* Queue "invalidate everything": the dentry epoch (FUSE_NOTIFY_INC_EPOCH,
 * Linux >= 6.16), else inval_entry of every name the table holds, and
 * inval_inode of every inode. */
void jf_notify_all(void);
