/* SPDX-License-Identifier: MIT */
/*
 * Files tracked by git whose names the policy DENIES (tracked.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "zone-name.h"

/* A regular file tracked in SOURCE's git index whose path the policy DENIES,
 * which is the file git stat'ed for the entry and whose content was the
 * indexed blob at start-up, or (dir) a DENIED directory leading to one. */
struct jf_tracked {
	const char *path; /* view path, @len bytes, NUL-terminated */
	uint32_t len;
	bool dir;
	uint32_t id;   /* unique among the files */
	uint32_t size; /* as the index has it, truncated to 32 bits */
	size_t hashsz; /* 20 (SHA-1) or 32 (SHA-256) */
	unsigned char oid[32];
};

/* The rule of such files' verdicts: prints as "git-index", zone RESTRICTED. */
extern const struct jf_rule jf_git_index_rule;

/* The kept entries, owned by whoever loaded them (the daemon's view, or
 * check.c's). All zeroes is an empty set. */
struct jf_tracked_set {
	struct jf_tracked *set; /* files, then directories */
	size_t nset, capset;
	uint32_t *slots; /* open addressing into set, UINT32_MAX free */
	size_t nslots;
};

/* Is the file of candidate @t, below @view's SOURCE, still the blob the
 * index names? (refine.c's content judge, passed in so this module stays
 * below it.) */
typedef bool (*jf_tracked_verify_fn)(const struct jf_view *view, const struct jf_tracked *t);

/* Read SOURCE's .git/index below @view->root_fd once and keep in @ts (empty
 * before) the tracked files with DENIED names (by @view->policy) that
 * SOURCE holds, whose stat data is the entry's (ctime, mtime, inode, size)
 * and that @verify accepts, with the DENIED directories above them;
 * *@ret_dropped gets how many were refused. @view->source_abs names SOURCE
 * in messages; @view->tracked is not read. Start-up only, one thread,
 * before serving. Returns 0 (also without a repository, or when the policy
 * hides .git/objects) or a negative errno after one warning; then @ts is
 * left empty (fail closed). */
int jf_tracked_load(const struct jf_view *view, struct jf_tracked_set *ts,
		    jf_tracked_verify_fn verify, long *ret_dropped);
/* The kept entries, files and directories: how many, and the @i-th (NULL
 * past the end). @ts may be NULL (empty). Lock-free once loaded. */
size_t jf_tracked_count(const struct jf_tracked_set *ts);
const struct jf_tracked *jf_tracked_at(const struct jf_tracked_set *ts, size_t i);
/* The entry of @ts (NULL: none) for view path @path (@len bytes), or NULL.
 * Lock-free. */
const struct jf_tracked *jf_tracked_find(const struct jf_tracked_set *ts, const char *path,
					 size_t len);
/* Free what @ts holds and leave it empty. Not while it is read. */
void jf_tracked_free(struct jf_tracked_set *ts);
