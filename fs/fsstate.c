/* SPDX-License-Identifier: MIT */
/*
 * The daemon's shared state (fsstate.h) and its lock.
 */
#include <assert.h>
#include <pthread.h>
#include <stdbool.h>

#include "fsstate.h"

struct jf_fs jf_fs;

/* Does this thread hold jf_fs.lock? For the debug-build precondition
 * checks; written by the holder only. */
static __thread bool lock_held;

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
}

void jf_fs_assert_locked(void)
{
	assert(lock_held);
}
