/* SPDX-License-Identifier: MIT */
/*
 * A bounded queue of kernel invalidations served by one thread (notifyq.c).
 * Pure: what an invalidation does is the sink's (the daemon's is notify.c,
 * over the FUSE session; tests/unit/test-notifyq.c gives a fake kernel), so
 * the queue, its overflow and its stop are unit-tested without a mount.
 *
 * Pushing never blocks and never calls the sink: a request handler may push
 * an invalidation of the very inode it is answering (libfuse's
 * fuse_lowlevel.h: sent from the handler, it could wait for that request).
 * The thread calls the sink for one item at a time, in push order, with no
 * lock of the queue held, so a sink call may block (the kernel takes a
 * directory lock) without holding up a push.
 *
 * When the queue is full the items it holds are replaced by one "all"
 * (struct jf_nq_sink.all: invalidate everything the kernel may cache),
 * which covers them and every item pushed before the thread takes it; items
 * pushed after that are queued again. Nothing pushed is lost without
 * something that covers it being sent. An item equal to the last one queued
 * is not queued twice.
 *
 * Conventions: fsstate.h's (0 or a negative errno). Every function is
 * thread-safe except that jf_nq_stop() must not race a push on the same
 * queue (the daemon stops it after the session loop, when no handler runs).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* What the thread calls. Each call may block. @ctx is struct jf_nq_sink.ctx. */
struct jf_nq_sink {
	/* Drop the kernel's dentry @name (NUL-terminated) of directory @parent. */
	void (*entry)(void *ctx, uint64_t parent, const char *name);
	/* Drop the kernel's attributes and page cache of @ino. */
	void (*inode)(void *ctx, uint64_t ino);
	/* Drop everything the kernel may cache: the queue overflowed, or
	 * jf_nq_all() asked for it. */
	void (*all)(void *ctx);
	/* At stop, when the thread is still in a sink call after the first
	 * wait: make that call return (the daemon aborts its FUSE connection).
	 * 0 or -errno. May be NULL. */
	int (*unblock)(void *ctx);
	void *ctx;
};

/* Counts of one queue's life, for -d and the unit test. */
struct jf_nq_stats {
	uint64_t pushed;    /* accepted by jf_nq_entry/_inode/_all */
	uint64_t sent;	    /* sink calls made (an "all" counts once) */
	uint64_t coalesced; /* pushed but covered by another item (duplicate, "all") */
	uint64_t full;	    /* times the queue was full and turned into one "all" */
	uint64_t refused;   /* pushed while stopping, or out of memory (-ENOMEM) */
};

struct jf_notifyq;

/* Create a queue of @capacity items (>= 1) and start its thread, which
 * blocks every signal and is named "jailfs-notify". @sink is copied.
 * Returns 0 with *@qp set, or -EINVAL (@capacity 0), -ENOMEM, -EAGAIN
 * (pthread_create). The caller owns *@qp until jf_nq_stop(). */
int jf_nq_start(struct jf_notifyq **qp, size_t capacity, const struct jf_nq_sink *sink);
/* Queue sink->entry(@parent, @name); @name is copied. 0, -ESHUTDOWN (the
 * queue is stopping), -ENOMEM (then an "all" is queued instead when it can
 * be). Never blocks (one mutex, one malloc). */
int jf_nq_entry(struct jf_notifyq *q, uint64_t parent, const char *name);
/* Queue sink->inode(@ino). 0 or -ESHUTDOWN. Never blocks. */
int jf_nq_inode(struct jf_notifyq *q, uint64_t ino);
/* Queue sink->all(), which covers everything queued before it: 0 or
 * -ESHUTDOWN. Never blocks. */
int jf_nq_all(struct jf_notifyq *q);
/*
 * Stop: refuse further pushes, let the thread send what is queued (the
 * drain; a sink that knows the kernel is gone returns at once), join it.
 * When it is still busy after @wait_s seconds, call sink->unblock and wait
 * @wait_s more. Returns 0 (joined, @q freed) or -ETIMEDOUT: the thread is
 * left running, detached, and frees @q when its sink call returns. Either
 * way @q must not be used again. @st (may be NULL) gets the counts.
 */
int jf_nq_stop(struct jf_notifyq *q, unsigned wait_s, struct jf_nq_stats *st);
