/* SPDX-License-Identifier: MIT */
/*
 * Probing a name (probe.c): whether a child of a directory is visible and in
 * which zone, from its name, its stat, what it holds and its symlink target;
 * and the zone of a known inode at its current name. Thread-safe; no lock is
 * held across a system call.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "fsstate.h"

/* What jf_probe_child() found out about one name. */
struct probe {
	char path[JF_PATH_MAX + 1]; /* view path of the child */
	size_t len;
	struct stat st;
	bool have_stat;
	struct jf_verdict v;
	uint32_t symlink_len;
	enum jf_refusal refusal;
	struct timespec btime; /* birth time, {0, 0} when the filesystem has none */
	uint64_t gen;	       /* jf_fs.name_gen when the probe began */
};

/*
 * Decide whether @name in directory @dirfd (view path @dirpath, device
 * @dir_dev) is visible. @dtype is a d_type hint (DT_UNKNOWN to stat);
 * @want_stat forces a stat. Returns 1 visible, 0 hidden by policy, -errno
 * (-ENOENT absent). Fills @p.
 */
int jf_probe_child(int dirfd, const char *dirpath, dev_t dir_dev, const char *name,
		   unsigned char dtype, bool want_stat, struct probe *p);
/* Probe an existing, visible name for a mutation of the name (unlink,
 * rename, the target of a rename): fills @p; 0 when SAFE or when only the
 * content is read-only (jf_hardlink_name_only), -ENOENT when absent or
 * hidden, -EROFS otherwise. */
int jf_probe_existing(int fd, const char *dpath, dev_t dev, const char *name, struct probe *p);
/* The zone of @inode at its current name into @v: the cached one, or, when
 * a rename moved the inode or an ancestor since it was computed, one
 * recomputed from the name (classification, hard links, symlink target)
 * and cached again. Returns 0; a negative errno when the name could not be
 * probed (renamed on the host and not yet seen), in which case @v holds the
 * last cached zone. A hidden name gives JF_DENIED. Takes jf_fs.lock
 * briefly, never across a system call. */
int jf_zone_of(struct jf_inode *inode, struct jf_verdict *v);
/* jf_zone_of() for reading the content: a zone that depends on what the file
 * holds (by_content: a public certificate, a tracked file) is computed again
 * from the file as it is now (cheap while it is unchanged), so a file the
 * host filled with a private key since it was looked up is not read. */
int jf_zone_read(struct jf_inode *inode, struct jf_verdict *v);
/* For a mutation through @fd, an fd of @inode's backing file, when @v (from
 * jf_zone_of) is SAFE: a regular file that has more names now than when its
 * zone was computed (a hard link made on the host, which no rename of the
 * inode announces) gets the zone of all its names (jf_effective_zone), so
 * writes through the SAFE name do not change a file that also has a
 * RESTRICTED one. Updates @v (zone and rule). 0 or -errno of fstat(2); takes
 * jf_fs.lock briefly for files with several names only. */
int jf_zone_links(int fd, struct jf_verdict *v);
