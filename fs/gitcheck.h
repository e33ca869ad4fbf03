/* SPDX-License-Identifier: MIT */
/*
 * Is a git index, or a packed-refs file, one the host's git may read? git
 * refuses to add an entry
 * whose path leaves the work tree or enters a git directory (read-cache.c,
 * verify_path), but writes whatever an index it reads names: the host's
 * "git restore ." with an index an agent wrote would write
 * .git/hooks/pre-commit or ../x; and a replace ref makes it show another
 * object for a commit id. The daemon lets a new index or packed-refs be
 * renamed into place only when this check passes (fs/gitswap.c). Pure;
 * uses gitindex.c's reader.
 *
 * Conventions: 0 or a negative errno; thread-safe (no global state).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gitindex.h"

/* May git, adding an entry of @mode, take the path @path (@len bytes)?
 * The rules of verify_path with core.protectNTFS (git's default): no empty
 * path or component, no leading '/', no "." or ".." component, no ".git"
 * component in any case, with trailing dots or spaces, "git~1" or an NTFS
 * stream (".git:..."); a symlink may not be named .gitmodules,
 * .gitattributes, .gitignore or .mailmap. A sparse directory entry (mode
 * 040000) ends with '/'. */
bool jf_git_path_ok(const char *path, size_t len, uint32_t mode);

/*
 * Check the @len bytes of an index at @buf: well-formed (jf_git_index_parse),
 * every entry's path and every path of its resolve-undo extension (REUC,
 * which "git checkout -m" turns back into entries) passing jf_git_path_ok,
 * and no split-index link (the entries would then be in a sharedindex file
 * this check does not see). Returns 0, or -EINVAL with *why (static text).
 */
int jf_git_index_check(const unsigned char *buf, size_t len, const char **why);

/* The view's judgement of an index's work-tree paths (fs/gitswap.c). */
struct jf_git_guard {
	/* Does the view keep the work-tree path @path (@len bytes) from the
	 * agent: not SAFE by its name? */
	bool (*guarded)(const char *path, size_t len, void *arg);
	/* Does the work tree hold exactly what entry @e names (type, the
	 * executable bit, the blob's content), in a file the agent may read
	 * (the answer must not tell what a hidden file holds)? */
	bool (*on_disk)(const struct jf_git_entry *e, void *arg);
	void *arg;
};

/*
 * Check that every entry of the index at @buf (@len bytes, which passed
 * jf_git_index_check()) whose path @g guards is, with its stage, mode and
 * object id, an entry of the index it replaces (@old, @old_len bytes; NULL,
 * or a malformed one, holds none), or names what the work tree holds. The
 * host's "git restore ." writes every entry whose file differs: an entry
 * staged for .claude/settings.json or .husky/pre-commit would be written
 * there, though the view keeps the name read-only. Returns 0, -EINVAL with
 * *why (static text), or -ENOMEM. Thread-safe if @g's functions are.
 */
int jf_git_index_keeps(const unsigned char *buf, size_t len, const unsigned char *old,
		       size_t old_len, const struct jf_git_guard *g, const char **why);

/*
 * Check the @len bytes of a packed-refs file at @buf: no ref under
 * refs/replace/ (git reads replace refs from packed-refs as from loose
 * refs). Lines are "# pack-refs with: ...", "<oid> <refname>" and
 * "^<oid>" (the peeled object of the tag above). Returns 0, or -EINVAL
 * with *why (static text).
 */
int jf_git_packed_refs_check(const unsigned char *buf, size_t len, const char **why);

/*
 * Remove, in place, the cache-tree (TREE) and untracked-cache (UNTR)
 * extensions of the @len bytes of an index at @buf that jf_git_index_check()
 * passed, and write its trailer again (a zero trailer, index.skipHash, stays
 * zero). The cache-tree names a tree for each directory that the host's git
 * commit takes as it is, whatever the entries say, and the untracked cache
 * what git status leaves out; git rebuilds both. Returns the new length.
 */
size_t jf_git_index_strip(unsigned char *buf, size_t len);
