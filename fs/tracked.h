/* SPDX-License-Identifier: MIT */
/*
 * Files tracked by git whose names the policy DENIES (tracked.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

/* A regular file tracked in SOURCE's git index whose path the policy DENIES
 * and whose content was the indexed blob at start-up, or (dir) a DENIED
 * directory leading to one. */
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

/* Read SOURCE's .git/index below @rootfd once, keep the tracked files with
 * DENIED names whose content matches (see tracked.c), and unless @quiet say
 * on stderr how many are shown. @source names SOURCE in messages. Needs jf_fs.policy. Start-up
 * only, one thread, before serving. Returns 0 (also without a repository, or when the policy hides
 * .git/objects) or a negative errno after one warning; then nothing is shown (fail closed). */
int jf_tracked_load(int rootfd, const char *source, bool quiet);
/* The entry for view path @path (@len bytes), or NULL. Lock-free. */
const struct jf_tracked *jf_tracked_find(const char *path, size_t len);
void jf_tracked_free(void);
