/* SPDX-License-Identifier: MIT */
/*
 * The daemon's shared state (fsstate.h) and its lock.
 */
#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "fsstate.h"

struct jf_fs jf_fs;

/* Does this thread hold jf_fs.lock? For the debug-build precondition
 * checks; written by the holder only. */
static __thread bool lock_held;

/* fds jf_fs_close_unlocked() queued in this thread's hold of jf_fs.lock.
 * One hold frees at most one inode holding an fd (an orphan fd: the
 * parents freed with it are directories), so a few slots are plenty. */
#define CLOSE_LATER_MAX 8
static __thread int close_later[CLOSE_LATER_MAX];
static __thread unsigned n_close_later;

void jf_fs_lock(void)
{
	assert(!lock_held); /* a plain mutex: taken twice it deadlocks */
	pthread_mutex_lock(&jf_fs.lock);
	lock_held = true;
}

void jf_fs_unlock(void)
{
	assert(lock_held);
	lock_held = false;
	pthread_mutex_unlock(&jf_fs.lock);
	while (n_close_later > 0)
		close(close_later[--n_close_later]);
}

void jf_fs_close_unlocked(int fd)
{
	assert(lock_held);
	if (n_close_later < CLOSE_LATER_MAX)
		close_later[n_close_later++] = fd;
	else
		close(fd); /* cannot happen (see CLOSE_LATER_MAX) */
}

void jf_fs_assert_locked(void)
{
	assert(lock_held);
}
