/* SPDX-License-Identifier: MIT */
/*
 * The daemon's file descriptors. Every request needs a few for a moment
 * (the directory of a lookup, readdir's stream, a file opened for one read
 * in no_open mode), every worker thread a splice pipe; an open file or
 * directory handle holds one for as long as the kernel keeps it open, that
 * is for as long as the caller likes. Unbounded, one process opening one
 * file thousands of times takes every fd of the daemon, and every other user
 * of the mount then gets EMFILE from ls and stat.
 *
 * So the fds that outlive a request are counted and bounded below
 * RLIMIT_NOFILE, leaving a reserve of JF_FD_RESERVE_BASE plus
 * JF_FD_PER_THREAD per worker thread:
 *   open files (OPEN, CREATE, no_open orphan fds)  limit - reserve
 *   directory handles (OPENDIR)                    limit - reserve / 2
 * An open past its bound answers EMFILE, what open(2) says when a process is
 * out of fds. Lookups, getattr and readdir keep at least half the reserve
 * whatever is open, and listing a directory still works when open files are
 * at their bound. At start-up the soft RLIMIT_NOFILE is raised to the hard
 * limit, as most daemons do.
 *
 * A bound shared by everyone still lets one opener take all of it, and every
 * other process's cat and touch then fail. So each opener has a share: the
 * handles opened by one caller (the pid FUSE reports, that is the thread ID
 * of the caller) may hold at most half of a bound, those of one uid three
 * quarters. One process leaves the other processes of its user half; a
 * process that forks to get more shares still leaves the other users a
 * quarter. The counts are exact (a table of openers under a mutex), so no
 * opener is ever charged for another.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "fd-budget.h"

#define JF_FD_RESERVE_BASE 64 /* stdio, /dev/fuse, SOURCE, audit, inotify, index walk */
#define JF_FD_PER_THREAD 6    /* a splice pipe and up to 4 fds of one request */
#define SHARE_BUCKETS 1024

static atomic_long held;
static long max_held[2] = {LONG_MAX, LONG_MAX};

/* The fds held by one pid (key: the pid) or one uid (key: 1 << 32 | uid). */
struct share {
	uint64_t key;
	long n;
	struct share *next;
};

static pthread_mutex_t share_lock = PTHREAD_MUTEX_INITIALIZER;
static struct share *shares[SHARE_BUCKETS];

void jf_fd_budget_init(unsigned workers)
{
	struct rlimit rl;
	long limit, reserve;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit raised = {rl.rlim_max, rl.rlim_max};

		if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
			rl = raised;
	}
	limit = rl.rlim_cur > INT_MAX ? INT_MAX : (long)rl.rlim_cur;
	reserve = JF_FD_RESERVE_BASE + JF_FD_PER_THREAD * (long)workers;
	if (reserve > limit / 4 * 3)
		reserve = limit / 4 * 3; /* a tiny limit: still leave opens a quarter */
	max_held[JF_FD_FILE] = limit - reserve;
	max_held[JF_FD_DIR] = limit - reserve / 2;
}

static struct share **bucket_of(uint64_t key)
{
	return &shares[(key * 0x9e3779b97f4a7c15ull) >> 54];
}

/* The share of @key, made with n 0 when there is none; NULL without memory.
 * Caller holds share_lock. */
static struct share *share_get(uint64_t key)
{
	struct share **b = bucket_of(key), *s;

	for (s = *b; s; s = s->next)
		if (s->key == key)
			return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->key = key;
	s->next = *b;
	*b = s;
	return s;
}

/* Count @delta fds for @key; a share back at 0 is freed. Caller holds
 * share_lock; @key's share exists. */
static void share_add(uint64_t key, long delta)
{
	for (struct share **pp = bucket_of(key); *pp; pp = &(*pp)->next) {
		struct share *s = *pp;

		if (s->key != key)
			continue;
		s->n += delta;
		if (s->n <= 0) {
			*pp = s->next;
			free(s);
		}
		return;
	}
}

static uint64_t uid_key(uid_t uid)
{
	return 1ull << 32 | uid;
}

static int take_global(enum jf_fd_kind kind)
{
	if (atomic_fetch_add(&held, 1) < max_held[kind])
		return 0;
	atomic_fetch_sub(&held, 1);
	return -EMFILE;
}

int jf_fd_take(enum jf_fd_kind kind, pid_t pid, uid_t uid)
{
	struct share *p, *u;
	int r = -EMFILE;

	pthread_mutex_lock(&share_lock);
	p = share_get((uint32_t)pid);
	u = p ? share_get(uid_key(uid)) : NULL;
	if (p && u && p->n < max_held[kind] / 2 && u->n < max_held[kind] / 4 * 3 &&
	    (r = take_global(kind)) == 0) {
		p->n++;
		u->n++;
	} else {
		/* an entry just made for this refused take */
		share_add((uint32_t)pid, 0);
		if (p)
			share_add(uid_key(uid), 0);
	}
	pthread_mutex_unlock(&share_lock);
	return r;
}

void jf_fd_put(pid_t pid, uid_t uid)
{
	pthread_mutex_lock(&share_lock);
	share_add((uint32_t)pid, -1);
	share_add(uid_key(uid), -1);
	pthread_mutex_unlock(&share_lock);
	atomic_fetch_sub(&held, 1);
}

int jf_fd_take_unshared(enum jf_fd_kind kind)
{
	return take_global(kind);
}

void jf_fd_put_unshared(void)
{
	atomic_fetch_sub(&held, 1);
}
