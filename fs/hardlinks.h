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
#include "zone-name.h"

struct jf_hardlink_stats {
	uint64_t entries; /* names stat'ed */
	uint64_t dirs;	  /* directories read */
	uint64_t files;	  /* regular files with st_nlink > 1 indexed */
	uint64_t bytes;	  /* memory of the index */
	uint64_t ms;	  /* wall time of the walk, milliseconds */
};

/* The index of one SOURCE (hardlinks.c), its maker's to free. */
struct jf_links;

/* A new, empty index whose walk has not ended; NULL when out of memory. */
struct jf_links *jf_hardlinks_new(void);
/* Walk @view's SOURCE (below view->root_fd, never following symlinks,
 * skipping pseudo filesystems and MOUNTPOINT) and index into @l every
 * regular file with st_nlink > 1: the most restrictive zone of its names
 * (view->policy, refine.c) and how many were found. One thread, before
 * the index is read. 0 or -ENOMEM, -errno of opening SOURCE. */
int jf_hardlinks_index(struct jf_links *l, const struct jf_view *view,
		       struct jf_hardlink_stats *stats);
/* Run jf_hardlinks_index() in a thread of its own (start after any fork;
 * @view lives until jf_hardlinks_stop), saying its figures on stderr when
 * @verbose: 0 or -EAGAIN... from pthread_create(3). Main thread only. */
int jf_hardlinks_start(struct jf_links *l, const struct jf_view *view, bool verbose);
/* jf_hardlinks_index() in the calling thread, then mark the index complete
 * (failed on error: every multiply-linked file is then DENIED). For
 * --check, --scan and tests, which judge SOURCE as the daemon would. 0 or
 * -ENOMEM, -errno of opening SOURCE. */
int jf_hardlinks_build(struct jf_links *l, const struct jf_view *view);
/* The walk ended and found no file with several names: no regular file
 * needs a stat for its links. Any thread. */
bool jf_hardlinks_empty(const struct jf_links *l);
/* No walk (policy hardlinks = zone or deny): mark the index complete. */
void jf_hardlinks_skip(struct jf_links *l);
/* Block until the walk ended (at once once it has, or after
 * jf_hardlinks_skip). Any thread. */
void jf_hardlinks_wait(struct jf_links *l);
/* Stop the walk early (at exit) and join it. Main thread only; idempotent;
 * @l may be NULL. */
void jf_hardlinks_stop(struct jf_links *l);
/* Effective zone of a regular file with st_nlink > 1 reached by a name of
 * zone @zone (policy hardlinks = restricted): DENIED when a known name is
 * DENIED, SAFE when all st_nlink names were found and are SAFE, else at
 * least RESTRICTED. Waits for the walk; then lock-free (the index is
 * read-only once complete). */
enum jf_zone jf_hardlink_zone(struct jf_links *l, const struct stat *st, enum jf_zone zone);
/* Does index @l hold a file with a DENIED name (readdir must stat files)?
 * True until the walk ended; false for NULL (no index). */
bool jf_hardlink_any_denied(const struct jf_links *l);
/* Stop the walk, free the entries and @l. @l may be NULL. */
void jf_hardlinks_free(struct jf_links *l);
/* How many devices may stand for the index's device. */
#define JF_HL_MAX_ALIASES 4096
/* From now on, objects on device @dev are the index's objects on device
 * @of, with the same inode numbers: the overlay mode mounts a fresh overlay
 * over the same layers (changes.h), whose objects keep their inode numbers
 * and get the new mount's device. 0, -ENOSPC (the bound above) or -EINVAL
 * (@of is not the device of earlier aliases). One caller at a time;
 * concurrent lookups are safe. */
int jf_hardlinks_alias_dev(struct jf_links *l, dev_t dev, dev_t of);

/* The rules of a verdict decided by a file's other names: RESTRICTED
 * because a name may lie where the daemon did not look (outside SOURCE, or
 * made since the walk); DENIED because another name is DENIED; DENIED by
 * policy hardlinks = deny or because the index could not be built. */
extern const struct jf_rule jf_hardlink_outside_rule;
extern const struct jf_rule jf_hardlink_denied_rule;
extern const struct jf_rule jf_hardlink_policy_rule;

/* The verdict @v of a name of the existing backing object @st, after
 * @view's hardlinks setting and its index (view->links; without one, under
 * hardlinks = restricted, the name's own verdict stands): a zone made
 * stricter gets one of the rules above. @safe_links: the inode was
 * hard-linked through the view between SAFE names. Lock-free; waits for
 * the walk for a file with several names. */
void jf_effective_zone(const struct jf_view *view, const struct stat *st, struct jf_verdict *v,
		       bool safe_links);
/* Is @v RESTRICTED only because the content is shared with a name the
 * daemon did not see (jf_hardlink_outside_rule)? The name itself is SAFE:
 * unlink, rename and rename onto it are allowed; changes of the inode are
 * not. */
bool jf_hardlink_name_only(const struct jf_verdict *v);
