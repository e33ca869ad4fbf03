/* SPDX-License-Identifier: MIT */
/*
 * The zone of a known inode (zone.c), for the FUSE handlers: cached on the
 * inode, recomputed by probe.c after a rename. Thread-safe; no lock is held
 * across a system call.
 */
#pragma once

#include "fsstate.h"
#include "policy.h"
#include "zone-name.h"

/* The zone of @inode (an inode of @view's table) at its current name into
 * @v: the cached one, or, when
 * a rename moved the inode or an ancestor since it was computed, one
 * recomputed from the name (classification, hard links, symlink target)
 * and cached again. Returns 0; a negative errno when the name could not be
 * probed (renamed on the host and not yet seen), in which case @v holds the
 * last cached zone. A hidden name gives JF_DENIED. Takes jf_fs.lock
 * briefly, never across a system call. */
int jf_zone_of(const struct jf_view *view, struct jf_inode *inode, struct jf_verdict *v);
/* jf_zone_of() for reading the content: a zone that depends on what the file
 * holds (by_content: a public certificate, a tracked file) is computed again
 * from the file as it is now (cheap while it is unchanged), so a file the
 * host filled with a private key since it was looked up is not read. */
int jf_zone_read(const struct jf_view *view, struct jf_inode *inode, struct jf_verdict *v);
/* For a mutation through @fd, an fd of @inode's backing file, when @v (from
 * jf_zone_of) is SAFE: a regular file that has more names now than when its
 * zone was computed (a hard link made on the host, which no rename of the
 * inode announces) gets the zone of all its names (jf_effective_zone), so
 * writes through the SAFE name do not change a file that also has a
 * RESTRICTED one. Updates @v (zone and rule). 0 or -errno of fstat(2); takes
 * jf_fs.lock briefly for files with several names only. */
int jf_zone_links(const struct jf_view *view, int fd, struct jf_verdict *v);
