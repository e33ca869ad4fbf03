/* SPDX-License-Identifier: MIT */
/*
 * --idle-exit: a view that outlives the commands run in it (jailrun's
 * persistent views) unmounts itself once nothing uses it (idle.c).
 */
#pragma once

#include <stdint.h>

/*
 * Open @lock_path (NULL: none) for the idle check; before the daemon
 * detaches, so that a relative name is the caller's. Returns 0 or a negative
 * errno from open(2). Main thread, once.
 */
int jf_idle_open(const char *lock_path);

/*
 * Start the idle watch: once no FUSE request came for @idle_ms and nobody
 * holds a flock(2) on the lock file (a jailrun command attached holds a
 * shared one), take it exclusively, keep it until exit (a jailrun waiting
 * for it then finds the view gone, not going), and send ourselves SIGTERM,
 * which unmounts like jailfs --stop. @idle_ms 0: no watch. Returns 0 or a
 * negative errno (eventfd, pthread_create). Main thread, after detaching.
 */
int jf_idle_start(uint64_t idle_ms);

/* Stop the watch thread and close the lock file. Idempotent. */
void jf_idle_stop(void);
