/* SPDX-License-Identifier: MIT */
/*
 * What a name cannot tell (refine.c): zones refined by what a DENIED file
 * holds (public content, a blob tracked by git).
 */
#pragma once

#include <stdbool.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "hash.h"
#include "policy.h"
#include "tracked.h"
#include "zone-name.h"

/* How many judgements of what files hold a struct jf_judged keeps. */
#define JF_JUDGED_MAX 1024

/* One judgement: did the object (dev, ino), as it was at (size, mtime,
 * ctime), pass question @what (a content kind, or a tracked entry)? */
struct jf_judgement {
	struct jf_hnode node; /* in jf_judged.tab, by (dev, ino, what) */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	uint32_t what;
	bool pass;
};

/* The cache of judgements a view points to (jf_view.judged), bounded: when
 * full, the oldest judgement is reused. Owned by whoever built the view. */
struct jf_judged {
	pthread_mutex_t lock; /* guards tab, pool, used and next */
	struct jf_htab tab;
	struct jf_judgement pool[JF_JUDGED_MAX];
	size_t used; /* pool entries in use */
	size_t next; /* the one to reuse next once all are */
};

/* Make @c an empty cache. 0 or -ENOMEM. Start-up only. */
int jf_judged_init(struct jf_judged *c);
/* Free what @c holds. Not while a view using it is used. */
void jf_judged_destroy(struct jf_judged *c);

/* May jf_refine() change verdict @v of @path (DENIED by a rule subject
 * to content, or a path in @view->tracked)? No backing access;
 * thread-safe. */
bool jf_refine_may(const struct jf_view *view, const char *path, size_t len,
		   const struct jf_verdict *v);
/*
 * Refine the DENIED verdict @v of the existing object @name below directory
 * @dirfd (view path @path, @len bytes; @st its lstat): a regular file whose
 * content is public gets the zone of jf_classify_public(), a tracked file
 * whose content is its indexed blob and a tracked directory get RESTRICTED
 * with rule jf_git_index_rule; by_content is set for files. Otherwise @v
 * stays. Reads the file through openat2 below @dirfd (never a symlink),
 * only when it still matches @st; results cached in @view->judged by
 * (dev, ino, size, mtime, ctime). Thread-safe.
 */
void jf_refine(const struct jf_view *view, int dirfd, const char *name, const char *path,
	       size_t len, const struct stat *st, struct jf_verdict *v);
/*
 * Would the regular file @st, with view path @a (@alen bytes) before a
 * rename and @b (@blen) after, be hidden at both or SAFE at both, whatever
 * it holds? True when both names are DENIED by the same rule, neither is
 * tracked nor the mountpoint, the file has one link, and the rule is not
 * subject to content or a public content would make it SAFE at both paths
 * (the content's judgement is the same at both). Then a rename need not
 * read it. No backing access; thread-safe.
 */
bool jf_refine_same_either_way(const struct jf_view *view, const char *a, size_t alen,
			       const char *b, size_t blen, const struct stat *st);
/* Is the regular file @name below @dirfd (@st) the blob of tracked entry @t?
 * Cached like jf_refine(). */
bool jf_refine_tracked_ok(const struct jf_view *view, int dirfd, const char *name,
			  const struct stat *st, const struct jf_tracked *t);

/* When to say how many tracked files are shown read-only. */
enum jf_tell {
	JF_TELL_NEVER,	/* --check, --scan: their output says it per file */
	JF_TELL_ONCE,	/* a mount: the first time for SOURCE, and when it changes */
	JF_TELL_ALWAYS, /* a mount with -v */
};

/* Load into @ts the files tracked by @view's SOURCE's git index whose names
 * are DENIED (jf_tracked_load), keeping those whose content is still the
 * indexed blob, and say on stderr how many are shown read-only as @tell says
 * (once: jf_notice_said); @view->tracked is @ts or NULL. Start-up only, one
 * thread. Returns what jf_tracked_load() returns. */
int jf_refine_load_tracked(const struct jf_view *view, struct jf_tracked_set *ts,
			   enum jf_tell tell);
