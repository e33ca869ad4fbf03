/* SPDX-License-Identifier: MIT */
/*
 * The start-up index of multiply-linked files (hardlinks.c) and the
 * effective zone of an object with several names.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "policy.h"

struct jf_hardlink_stats {
	uint64_t entries; /* names stat'ed */
	uint64_t dirs;	  /* directories read */
	uint64_t files;	  /* regular files with st_nlink > 1 indexed */
	uint64_t bytes;	  /* memory of the index */
	uint64_t ms;	  /* wall time of the walk, milliseconds */
};

/* Walk SOURCE (below jf_fs.root_fd, never following symlinks, skipping
 * pseudo filesystems and MOUNTPOINT) and index every regular file with
 * st_nlink > 1: the most restrictive zone of its names and how many were
 * found. Start-up only, single-threaded, before the mount. 0 or -ENOMEM. */
int jf_hardlinks_index(struct jf_hardlink_stats *stats);
/* Run jf_hardlinks_index() in a thread of its own (start after any fork):
 * 0 or -EAGAIN... from pthread_create(3). Main thread only. */
int jf_hardlinks_start(void);
/* No walk (policy hardlinks = zone or deny): mark the index complete. */
void jf_hardlinks_skip(void);
/* Block until the walk ended (at once once it has, or after
 * jf_hardlinks_skip). Any thread. */
void jf_hardlinks_wait(void);
/* Stop the walk early (at exit) and join it. Main thread only; idempotent. */
void jf_hardlinks_stop(void);
/* Effective zone of a regular file with st_nlink > 1 reached by a name of
 * zone @zone (policy hardlinks = restricted): DENIED when a known name is
 * DENIED, SAFE when all st_nlink names were found and are SAFE, else at
 * least RESTRICTED. Lock-free (the index is read-only once serving). */
enum jf_zone jf_hardlink_zone(const struct stat *st, enum jf_zone zone);
/* Does the index hold a file with a DENIED name (readdir must stat files)? */
bool jf_hardlink_any_denied(void);
void jf_hardlinks_free(void);

/* Effective zone of an existing backing object @st reached by a name of
 * zone @zone, after the policy's hardlinks setting (jf_fs.hardlinks);
 * @safe_links: the inode was hard-linked through the view between SAFE
 * names. Lock-free. */
enum jf_zone jf_effective_zone(const struct stat *st, enum jf_zone zone, bool safe_links);
