/* SPDX-License-Identifier: MIT */
/*
 * The daemon's recent changes through the view (recent.c): the handlers of
 * create, mkdir, unlink, rename... record (directory, name) with a
 * timestamp, and the watcher (watch.c) skips inotify events on such a name
 * for JF_RECENT_MS, since the kernel already learnt the change from our
 * reply. A fixed table of 16,384 (key, ms) slots in 4-way buckets: a record
 * is lost only to 4 newer ones in its bucket, which costs an extra
 * invalidation; a false match needs a 64-bit hash collision.
 *
 * Conventions: fsstate.h's. Thread-safe: one mutex of the module's own, a
 * leaf (any other lock may be held); no system call but clock_gettime.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fsstate.h"

/* How long an event on a name the daemon changed counts as ours, ms. */
#define JF_RECENT_MS 1000

/* Allocate the table (256 KiB): 0 or -ENOMEM. Before the session loop;
 * until then, and after jf_recent_free(), records are not kept. */
int jf_recent_init(void);
/* Free the table. After the session loop and the watcher have stopped. */
void jf_recent_free(void);
/* The daemon just created, removed or renamed @name in directory @dir.
 * @dir is used for its (dev, ino) only; NULL @dir or @name: nothing. */
void jf_recent_note(const struct jf_inode *dir, const char *name);
/* Did the daemon change @name in directory (@dev, @ino) less than
 * JF_RECENT_MS before @now_ms (jf_recent_now_ms())? */
bool jf_recent_has(dev_t dev, ino_t ino, const char *name, uint64_t now_ms);
/* CLOCK_MONOTONIC in ms. */
uint64_t jf_recent_now_ms(void);
/* The table's key of (@a, @b, @name): a 64-bit hash, never 0. The watcher's
 * per-read() set of handled events uses it too. */
uint64_t jf_recent_key(uint64_t a, uint64_t b, const char *name);
