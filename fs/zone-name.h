/* SPDX-License-Identifier: MIT */
/*
 * The zone of a view path by its name (zone-name.c): the policy applied to
 * paths of the view; and struct jf_view, the context every rule that
 * decides what an agent sees takes (zone-name.c, probe.c, refine.c,
 * tracked.c, hardlinks.c) instead of reading the daemon's state. The FUSE
 * daemon keeps one in its session's userdata (fsstate.h, jf_req_view());
 * --check and --scan build their own (check.c); unit tests build theirs
 * over a fake backing tree. Lock-free, no backing access.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"
#include "symlink.h"

struct jf_judged;
struct jf_links;
struct jf_tracked_set;

/* What the inode table knows of an object (jf_view.inode_info; inode.c). */
struct jf_inode_info {
	enum jf_zone zone; /* its cached effective zone */
	bool safe_links;   /* hard-linked through the view between SAFE names */
	uint64_t view_ino;
	bool writers; /* an open handle of the inode may write */
};

/*
 * What the visibility rules know of one view. Whoever builds it owns every
 * fd, string and table it points to and keeps them alive while the view is
 * used; the rules only read through it. Read-only once built (the tables it
 * points to have their own locking, documented in their headers), so it is
 * shared by all threads without a lock.
 */
struct jf_view {
	struct jf_policy *policy; /* classifies view paths */
	int root_fd;		  /* fd of SOURCE: every backing access is below it; -1 none */
	dev_t root_dev;		  /* SOURCE's st_dev and st_ino (a directory loop is hidden) */
	ino_t root_ino;
	char *source_abs; /* realpath(SOURCE) */
	char *mnt_rel;	  /* MOUNTPOINT relative to SOURCE if inside it, else NULL */
	/* O_PATH fd of the host's "/": only for judging where a symlink target
	 * below a system directory leads (systarget.c), never for the backing
	 * tree; -1 none. */
	int host_root_fd;
	/* Judges an absolute symlink target below a system directory
	 * (jf_symlink_ctx.host_check); NULL hides every such target. */
	int (*host_check)(int root_fd, const char *target);
	enum jf_hardlinks hardlinks; /* the policy's hardlinks setting */
	/* Files git tracks with DENIED names (tracked.h); NULL: none. */
	const struct jf_tracked_set *tracked;
	/* The index of files with several names (hardlinks.h); NULL: none was
	 * built, and a name's own verdict stands for such a file. */
	struct jf_links *links;
	/* Judgements of what files hold (refine.h); NULL: every look reads. */
	struct jf_judged *judged;
	/* Bumped by every rename the inode table learns of: a probe dates the
	 * zone it computes with it. NULL: always 0 (nothing is renamed). */
	_Atomic uint64_t *name_gen;
	/* What the inode table knows of (dev, ino) (inode.h): true and fills
	 * @out when known. NULL: nothing is known. */
	bool (*inode_info)(dev_t dev, ino_t ino, struct jf_inode_info *out);
};

/* Classify view path @path (@len bytes, @is_dir: as a directory) with
 * @view's policy into @v; names refused by jf_check_name are DENIED. */
void jf_classify_path(const struct jf_view *view, const char *path, size_t len, bool is_dir,
		      struct jf_verdict *v);
/* Is view path @path the jailfs mountpoint (MOUNTPOINT inside SOURCE)? */
bool jf_is_mnt_path(const struct jf_view *view, const char *path);
/* The symlink rule's view of @view (SOURCE, mountpoint, policy, host
 * check), for jf_symlink_view() and jf_symlink_check_new(). */
struct jf_symlink_ctx jf_view_symlink_ctx(const struct jf_view *view);
