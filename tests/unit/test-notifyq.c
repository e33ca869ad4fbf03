/* SPDX-License-Identifier: MIT */
/*
 * The notifier's queue (fs/notifyq.c) against a fake kernel whose calls can
 * be held, as the kernel holds a notification that waits for a directory
 * lock: the stop drains what is queued behind a held call, unblocks a call
 * still held, gives up on one that stays held and leaves the thread to free
 * the queue; a full queue turns into one "all" that covers what it held and
 * what comes before the thread takes it; pushes during the stop are refused.
 * tests/sanitize.sh runs it under ThreadSanitizer.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "notifyq.h"

#define MAX_CALLS 64

/* One sink call as the fake kernel saw it. */
struct call {
	char kind; /* 'e' entry, 'i' inode, 'a' all */
	uint64_t node;
	char name[16];
};

struct fake {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool hold;	    /* sink calls wait while set */
	bool unblock_opens; /* unblock() clears hold */
	unsigned entered;   /* sink calls started */
	unsigned unblocks;  /* unblock() calls */
	struct call calls[MAX_CALLS];
	unsigned ncalls; /* sink calls finished */
	unsigned nall;	 /* of which "all" */
};

static void fake_call(struct fake *f, char kind, uint64_t node, const char *name)
{
	pthread_mutex_lock(&f->mu);
	f->entered++;
	pthread_cond_broadcast(&f->cv);
	while (f->hold)
		pthread_cond_wait(&f->cv, &f->mu);
	if (f->ncalls < MAX_CALLS) {
		struct call *c = &f->calls[f->ncalls];

		c->kind = kind;
		c->node = node;
		snprintf(c->name, sizeof(c->name), "%s", name ? name : "");
	}
	f->ncalls++;
	f->nall += kind == 'a';
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

static void fake_entry(void *ctx, uint64_t parent, const char *name)
{
	fake_call(ctx, 'e', parent, name);
}

static void fake_inode(void *ctx, uint64_t ino)
{
	fake_call(ctx, 'i', ino, NULL);
}

static void fake_all(void *ctx)
{
	fake_call(ctx, 'a', 0, NULL);
}

static int fake_unblock(void *ctx)
{
	struct fake *f = ctx;

	pthread_mutex_lock(&f->mu);
	f->unblocks++;
	if (f->unblock_opens)
		f->hold = false;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	return f->unblock_opens ? 0 : -EIO;
}

static void fake_init(struct fake *f, bool hold)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	f->hold = hold;
}

static void fake_release(struct fake *f)
{
	pthread_mutex_lock(&f->mu);
	f->hold = false;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

/* Wait (at most 5 s) until @n sink calls started (@finished: ended). */
static void fake_wait(struct fake *f, unsigned n, bool finished)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&f->mu);
	while ((finished ? f->ncalls : f->entered) < n &&
	       pthread_cond_timedwait(&f->cv, &f->mu, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&f->mu);
}

static unsigned fake_ncalls(struct fake *f)
{
	unsigned n;

	pthread_mutex_lock(&f->mu);
	n = f->ncalls;
	pthread_mutex_unlock(&f->mu);
	return n;
}

static struct jf_notifyq *start(struct fake *f, size_t cap)
{
	struct jf_nq_sink sink = {
		.entry = fake_entry,
		.inode = fake_inode,
		.all = fake_all,
		.unblock = fake_unblock,
		.ctx = f,
	};
	struct jf_notifyq *q = NULL;

	assert_int_equal(jf_nq_start(&q, cap, &sink), 0);
	assert_non_null(q);
	return q;
}

static void assert_call(const struct fake *f, unsigned i, char kind, uint64_t node,
			const char *name)
{
	assert_true(i < f->ncalls);
	assert_int_equal(f->calls[i].kind, kind);
	assert_int_equal(f->calls[i].node, node);
	assert_string_equal(f->calls[i].name, name);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct releaser {
	struct fake *f;
	struct jf_notifyq *q;
	int push_during_stop; /* what a push returned while the stop waited */
};

/* Once the stop is under way (it asked to unblock the held call, which
 * does not help): push (refused), then let the held call return. */
static void *release_later(void *arg)
{
	struct releaser *r = arg;
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&r->f->mu);
	while (!r->f->unblocks && pthread_cond_timedwait(&r->f->cv, &r->f->mu, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&r->f->mu);
	r->push_during_stop = jf_nq_inode(r->q, 99);
	fake_release(r->f);
	return NULL;
}

/* Stop while items are queued behind a held call: all are sent, in order,
 * a duplicate of the last one once, a push during the stop refused. */
static void test_stop_drains_queued(void **state)
{
	struct releaser rel = {0};
	struct jf_nq_stats st;
	struct fake f;
	pthread_t t;

	(void)state;
	fake_init(&f, true);
	rel.f = &f;
	rel.q = start(&f, 16);
	assert_int_equal(jf_nq_entry(rel.q, 1, "a"), 0);
	fake_wait(&f, 1, false); /* the thread is held in the kernel */
	assert_int_equal(jf_nq_inode(rel.q, 2), 0);
	assert_int_equal(jf_nq_entry(rel.q, 3, "b"), 0);
	assert_int_equal(jf_nq_entry(rel.q, 3, "b"), 0);
	assert_int_equal(jf_nq_entry(rel.q, 3, "c"), 0);
	assert_int_equal(pthread_create(&t, NULL, release_later, &rel), 0);
	assert_int_equal(jf_nq_stop(rel.q, 1, &st), 0);
	pthread_join(t, NULL);
	assert_int_equal(rel.push_during_stop, -ESHUTDOWN);
	assert_int_equal(f.ncalls, 4);
	assert_call(&f, 0, 'e', 1, "a");
	assert_call(&f, 1, 'i', 2, "");
	assert_call(&f, 2, 'e', 3, "b");
	assert_call(&f, 3, 'e', 3, "c");
	assert_int_equal(st.pushed, 5);
	assert_int_equal(st.sent, 4);
	assert_int_equal(st.coalesced, 1);
	assert_int_equal(st.refused, 1);
	assert_int_equal(f.unblocks, 1);
}

/* A call still held after the first wait: the stop unblocks it (the daemon
 * aborts the connection), then drains and joins. */
static void test_stop_unblocks_held_call(void **state)
{
	struct jf_nq_stats st;
	struct jf_notifyq *q;
	struct fake f;
	double t0;

	(void)state;
	fake_init(&f, true);
	f.unblock_opens = true;
	q = start(&f, 16);
	assert_int_equal(jf_nq_inode(q, 1), 0);
	fake_wait(&f, 1, false);
	assert_int_equal(jf_nq_inode(q, 2), 0);
	assert_int_equal(jf_nq_inode(q, 3), 0);
	t0 = now_s();
	assert_int_equal(jf_nq_stop(q, 1, &st), 0);
	assert_true(now_s() - t0 >= 0.9);
	assert_true(now_s() - t0 < 3);
	assert_int_equal(f.unblocks, 1);
	assert_int_equal(f.ncalls, 3);
	assert_int_equal(st.sent, 3);
}

/* A call that stays held: the stop gives up after two waits and leaves the
 * thread, which drains and frees the queue once the call returns. */
static void test_stop_gives_up_on_stuck_call(void **state)
{
	struct jf_nq_stats st;
	struct jf_notifyq *q;
	struct fake f;
	double t0;

	(void)state;
	fake_init(&f, true);
	q = start(&f, 16);
	assert_int_equal(jf_nq_inode(q, 1), 0);
	fake_wait(&f, 1, false);
	assert_int_equal(jf_nq_entry(q, 2, "x"), 0);
	t0 = now_s();
	assert_int_equal(jf_nq_stop(q, 1, &st), -ETIMEDOUT);
	assert_true(now_s() - t0 >= 1.9);
	assert_true(now_s() - t0 < 4);
	assert_int_equal(f.unblocks, 1);
	assert_int_equal(st.sent, 0);
	assert_int_equal(fake_ncalls(&f), 0);
	fake_release(&f);
	fake_wait(&f, 2, true);
	assert_int_equal(fake_ncalls(&f), 2);
	assert_call(&f, 1, 'e', 2, "x");
	usleep(100 * 1000); /* the thread frees the queue after its last call */
}

/* A full queue becomes one "all", which covers what it held and what is
 * pushed before the thread takes it; later pushes are queued again. */
static void test_full_queue_turns_into_all(void **state)
{
	struct jf_nq_stats st;
	struct jf_notifyq *q;
	struct fake f;

	(void)state;
	fake_init(&f, true);
	q = start(&f, 4);
	assert_int_equal(jf_nq_inode(q, 1), 0);
	fake_wait(&f, 1, false);
	for (uint64_t i = 2; i <= 5; i++)
		assert_int_equal(jf_nq_inode(q, i), 0); /* fills the 4 slots */
	assert_int_equal(jf_nq_entry(q, 6, "full"), 0);
	assert_int_equal(jf_nq_inode(q, 7), 0); /* covered by the "all" */
	fake_release(&f);
	fake_wait(&f, 2, true);
	assert_int_equal(jf_nq_entry(q, 8, "after"), 0);
	fake_wait(&f, 3, true);
	assert_int_equal(jf_nq_stop(q, 5, &st), 0);
	assert_int_equal(f.ncalls, 3);
	assert_call(&f, 0, 'i', 1, "");
	assert_call(&f, 1, 'a', 0, "");
	assert_call(&f, 2, 'e', 8, "after");
	assert_int_equal(st.pushed, 8);
	assert_int_equal(st.full, 1);
	assert_int_equal(st.coalesced, 6);
	assert_int_equal(st.sent, 3);
}

/* jf_nq_all() drops what is queued before it and runs once for two asks. */
static void test_all_covers_queued(void **state)
{
	struct jf_nq_stats st;
	struct jf_notifyq *q;
	struct fake f;

	(void)state;
	fake_init(&f, true);
	q = start(&f, 8);
	assert_int_equal(jf_nq_inode(q, 1), 0);
	fake_wait(&f, 1, false);
	assert_int_equal(jf_nq_entry(q, 2, "y"), 0);
	assert_int_equal(jf_nq_all(q), 0);
	assert_int_equal(jf_nq_all(q), 0);
	fake_release(&f);
	assert_int_equal(jf_nq_stop(q, 5, &st), 0);
	assert_int_equal(f.ncalls, 2);
	assert_call(&f, 1, 'a', 0, "");
	assert_int_equal(st.full, 0);
	assert_int_equal(st.coalesced, 2);
}

/* Many pushers against one thread (a TSan run's material): every push
 * is sent or coalesced, none is lost. */
struct pusher {
	struct jf_notifyq *q;
	uint64_t base;
};

static void *push_many(void *arg)
{
	struct pusher *p = arg;

	for (uint64_t i = 0; i < 200; i++)
		assert_int_equal(i % 2 ? jf_nq_inode(p->q, p->base + i)
				       : jf_nq_entry(p->q, p->base, "n"),
				 0);
	return NULL;
}

static void test_concurrent_pushers(void **state)
{
	struct pusher p[4];
	pthread_t t[4];
	struct jf_nq_stats st;
	struct fake f;
	struct jf_notifyq *q;

	(void)state;
	fake_init(&f, false);
	q = start(&f, 32);
	for (int i = 0; i < 4; i++) {
		p[i] = (struct pusher){.q = q, .base = (uint64_t)(i + 1) * 1000};
		assert_int_equal(pthread_create(&t[i], NULL, push_many, &p[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(jf_nq_stop(q, 5, &st), 0);
	assert_int_equal(st.pushed, 800);
	assert_int_equal(st.sent, f.ncalls);
	/* each push was sent on its own or covered; an "all" is a call of its own */
	assert_int_equal(st.pushed, st.sent - f.nall + st.coalesced);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stop_drains_queued),
		cmocka_unit_test(test_stop_unblocks_held_call),
		cmocka_unit_test(test_stop_gives_up_on_stuck_call),
		cmocka_unit_test(test_full_queue_turns_into_all),
		cmocka_unit_test(test_all_covers_queued),
		cmocka_unit_test(test_concurrent_pushers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
