/* SPDX-License-Identifier: MIT */
/*
 * A bounded queue of kernel invalidations served by one thread: a ring of
 * items under one mutex, a condition variable for the thread and one for
 * the stop. See notifyq.h for the rules; this file says how.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "notifyq.h"

enum nq_kind { NQ_ENTRY = 1, NQ_INODE };

struct nq_item {
	enum nq_kind kind;
	uint64_t node; /* the parent for NQ_ENTRY, else the inode */
	char *name;    /* NQ_ENTRY only, malloc'd */
};

struct jf_notifyq {
	pthread_mutex_t mu;   /* everything below but sink and thread */
	pthread_cond_t work;  /* an item, an "all" or the stop for the thread */
	pthread_cond_t ended; /* the thread left its loop (done) */
	struct nq_item *ring;
	size_t cap, head, count;
	bool all;      /* an "all" is queued; the ring is empty meanwhile */
	bool stopping; /* pushes are refused; the thread drains and ends */
	bool done;     /* the thread will not touch the ring again */
	bool orphan;   /* the stop gave up: the thread frees the queue */
	struct jf_nq_stats st;
	struct jf_nq_sink sink;
	pthread_t thread;
};

static void item_free(struct nq_item *it)
{
	free(it->name);
	it->name = NULL;
}

/* Replace everything queued by one "all". Under q->mu. */
static void turn_all_locked(struct jf_notifyq *q)
{
	q->st.coalesced += q->count;
	while (q->count) {
		item_free(&q->ring[q->head]);
		q->head = (q->head + 1) % q->cap;
		q->count--;
	}
	q->head = 0;
	q->all = true;
}

/* Is @it the same as the last item queued? Under q->mu. */
static bool same_as_tail_locked(const struct jf_notifyq *q, const struct nq_item *it)
{
	const struct nq_item *t;

	if (!q->count)
		return false;
	t = &q->ring[(q->head + q->count - 1) % q->cap];
	return t->kind == it->kind && t->node == it->node &&
	       (it->kind != NQ_ENTRY || strcmp(t->name, it->name) == 0);
}

/* Queue @it (its name is taken in every case). 0 or -ESHUTDOWN. */
static int push(struct jf_notifyq *q, struct nq_item *it)
{
	pthread_mutex_lock(&q->mu);
	if (q->stopping) {
		q->st.refused++;
		pthread_mutex_unlock(&q->mu);
		item_free(it);
		return -ESHUTDOWN;
	}
	q->st.pushed++;
	if (q->all || same_as_tail_locked(q, it)) {
		q->st.coalesced++;
		item_free(it);
	} else if (q->count == q->cap) {
		q->st.full++;
		q->st.coalesced++;
		item_free(it);
		turn_all_locked(q);
	} else {
		q->ring[(q->head + q->count) % q->cap] = *it;
		q->count++;
	}
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

int jf_nq_entry(struct jf_notifyq *q, uint64_t parent, const char *name)
{
	struct nq_item it = {.kind = NQ_ENTRY, .node = parent, .name = strdup(name)};

	if (!it.name) {
		pthread_mutex_lock(&q->mu);
		q->st.refused++;
		if (!q->stopping) {
			turn_all_locked(q); /* the name cannot be kept: cover it */
			pthread_cond_signal(&q->work);
		}
		pthread_mutex_unlock(&q->mu);
		return -ENOMEM;
	}
	return push(q, &it);
}

int jf_nq_inode(struct jf_notifyq *q, uint64_t ino)
{
	struct nq_item it = {.kind = NQ_INODE, .node = ino};

	return push(q, &it);
}

int jf_nq_all(struct jf_notifyq *q)
{
	pthread_mutex_lock(&q->mu);
	if (q->stopping) {
		q->st.refused++;
		pthread_mutex_unlock(&q->mu);
		return -ESHUTDOWN;
	}
	q->st.pushed++;
	if (q->all)
		q->st.coalesced++;
	else
		turn_all_locked(q);
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

/* Take the next thing to send: 1 with @it filled (kind 0: an "all"), or 0
 * when stopping and drained. Under q->mu; waits on q->work. */
static int take_locked(struct jf_notifyq *q, struct nq_item *it)
{
	while (!q->all && !q->count && !q->stopping)
		pthread_cond_wait(&q->work, &q->mu);
	if (q->all) {
		q->all = false;
		*it = (struct nq_item){0};
		return 1;
	}
	if (!q->count)
		return 0;
	*it = q->ring[q->head];
	q->ring[q->head].name = NULL;
	q->head = (q->head + 1) % q->cap;
	q->count--;
	return 1;
}

static void send_item(const struct jf_nq_sink *s, const struct nq_item *it)
{
	switch (it->kind) {
	case NQ_ENTRY:
		s->entry(s->ctx, it->node, it->name);
		break;
	case NQ_INODE:
		s->inode(s->ctx, it->node);
		break;
	default:
		s->all(s->ctx);
		break;
	}
}

static void nq_free(struct jf_notifyq *q)
{
	while (q->count) {
		item_free(&q->ring[q->head]);
		q->head = (q->head + 1) % q->cap;
		q->count--;
	}
	pthread_cond_destroy(&q->work);
	pthread_cond_destroy(&q->ended);
	pthread_mutex_destroy(&q->mu);
	free(q->ring);
	free(q);
}

static void *nq_main(void *arg)
{
	struct jf_notifyq *q = arg;
	struct nq_item it;
	bool orphan;

	pthread_mutex_lock(&q->mu);
	while (take_locked(q, &it)) {
		pthread_mutex_unlock(&q->mu);
		send_item(&q->sink, &it);
		item_free(&it);
		pthread_mutex_lock(&q->mu);
		q->st.sent++;
	}
	q->done = true;
	orphan = q->orphan;
	pthread_cond_broadcast(&q->ended);
	pthread_mutex_unlock(&q->mu);
	if (orphan)
		nq_free(q);
	return NULL;
}

static int nq_init(struct jf_notifyq *q, size_t capacity)
{
	pthread_condattr_t ca;
	int r;

	q->ring = calloc(capacity, sizeof(*q->ring));
	if (!q->ring)
		return -ENOMEM;
	q->cap = capacity;
	/* The stop's wait is measured on CLOCK_MONOTONIC: a clock step must
	 * not make it longer or shorter. */
	r = -pthread_condattr_init(&ca);
	if (r < 0)
		goto fail_ring;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	r = -pthread_cond_init(&q->ended, &ca);
	pthread_condattr_destroy(&ca);
	if (r < 0)
		goto fail_ring;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->work, NULL);
	return 0;
fail_ring:
	free(q->ring);
	return r;
}

int jf_nq_start(struct jf_notifyq **qp, size_t capacity, const struct jf_nq_sink *sink)
{
	struct jf_notifyq *q;
	sigset_t all, old;
	int r;

	if (capacity == 0)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	r = nq_init(q, capacity);
	if (r < 0) {
		free(q);
		return r;
	}
	q->sink = *sink;
	/* Signals go to the session loop's threads (fuse_set_signal_handlers):
	 * one taken by this thread would not wake the loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&q->thread, NULL, nq_main, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		nq_free(q);
		return r;
	}
	pthread_setname_np(q->thread, "jailfs-notify"); /* visible in top -H, /proc */
	*qp = q;
	return 0;
}

/* Wait, under q->mu, until the thread is done or @seconds have passed. */
static void wait_done_locked(struct jf_notifyq *q, unsigned seconds)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += seconds;
	while (!q->done && pthread_cond_timedwait(&q->ended, &q->mu, &until) != ETIMEDOUT)
		;
}

int jf_nq_stop(struct jf_notifyq *q, unsigned wait_s, struct jf_nq_stats *st)
{
	pthread_mutex_lock(&q->mu);
	q->stopping = true;
	pthread_cond_signal(&q->work);
	wait_done_locked(q, wait_s);
	if (!q->done && q->sink.unblock) {
		pthread_mutex_unlock(&q->mu);
		(void)q->sink.unblock(q->sink.ctx);
		pthread_mutex_lock(&q->mu);
		wait_done_locked(q, wait_s);
	}
	if (st)
		*st = q->st;
	if (!q->done) {
		/* From the unlock on, the thread may free @q at any time. */
		pthread_t t = q->thread;

		q->orphan = true;
		pthread_mutex_unlock(&q->mu);
		pthread_detach(t);
		return -ETIMEDOUT;
	}
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->thread, NULL);
	nq_free(q);
	return 0;
}
