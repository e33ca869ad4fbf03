/* SPDX-License-Identifier: MIT */
/*
 * Probing a name (probe.c): whether a child of a directory is visible and in
 * which zone, from its name, its stat, what it holds and its symlink target.
 * Everything but the backing tree comes from the struct jf_view passed in
 * (policy, tables, what the inode table knows): no global state, so the
 * rules run in unit tests over a fake tree. Thread-safe; no lock held.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "policy.h"
#include "zone-name.h"

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
	uint64_t gen;	       /* *view->name_gen when the probe began */
};

/*
 * Decide whether @name in directory @dirfd (view path @dirpath, device
 * @dir_dev) is visible in @view. @dtype is a d_type hint (DT_UNKNOWN to stat);
 * @want_stat forces a stat. Returns 1 visible, 0 hidden by policy, -errno
 * (-ENOENT absent). Fills @p.
 */
int jf_probe_child(const struct jf_view *view, int dirfd, const char *dirpath, dev_t dir_dev,
		   const char *name, unsigned char dtype, bool want_stat, struct probe *p);
/* Probe an existing, visible name for a mutation of the name (unlink,
 * rename, the target of a rename): fills @p; 0 when SAFE or when only the
 * content is read-only (jf_hardlink_name_only), -ENOENT when absent or
 * hidden, -EROFS otherwise. */
int jf_probe_existing(const struct jf_view *view, int fd, const char *dpath, dev_t dev,
		      const char *name, struct probe *p);
