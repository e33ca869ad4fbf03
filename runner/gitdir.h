/* SPDX-License-Identifier: MIT */
/* A linked work tree's main git directory, shown beside it (gitdir.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "resolve.h"

struct jf_policy;

/* The policy of the view of a linked work tree's main git directory: the
 * built-in profiles secrets and gitdir, everything else SAFE. */
extern const char jr_gitdir_policy[];

/*
 * Is @project (absolute, canonical) a linked work tree of a repository whose
 * git directory lies outside it? Its .git must be a file "gitdir: X" (X
 * absolute, or relative to @project) naming a directory <common>/worktrees/
 * <name> whose commondir file leads back to <common> and whose gitdir file
 * names @project/.git (both after realpath), and <common> must hold HEAD,
 * objects/ and refs/. Writes <common> (canonical) to @common (PATH_MAX
 * bytes). Returns 1 when all of that holds and <common> can be shown at its
 * own path (not /, not around @project, not where the jail binds or
 * replaces directories); 0 when @project has no .git file, or its git
 * directory is not a work tree's (a submodule's) or lies inside @project;
 * -EINVAL with a message in @err when the files do not
 * check out. Reads files only; git is not run.
 */
int jr_gitdir_common(const char *project, char *common, char *err, size_t errsz);

/* At most this many placeholders (other work trees of one repository). */
#define JR_MAX_PLACEHOLDERS 64

/*
 * The .git files of the work trees linked to the git directory @common
 * (canonical) that the jail of @v does not show: each <common>/worktrees/
 * <name>/gitdir naming, as a plain absolute path, a .git file that exists on
 * the host at a path where the jail shows nothing. The jail holds an empty
 * file there, so that git in the jail does not take those work trees for
 * deleted ones (`git worktree prune`, `git gc` would remove their HEAD,
 * index and logs). Returns a malloc'ed NULL-terminated array of malloc'ed
 * strings (free with jr_strv_free), at most JR_MAX_PLACEHOLDERS; NULL when
 * out of memory.
 */
char **jr_gitdir_placeholders(const char *common, const struct jr_view *v);

/* Free a NULL-terminated array of malloc'ed strings and the array. NULL is a
 * no-op. */
void jr_strv_free(char **v);

/* What --source shows of a repository beyond the project. */
struct jr_gitdir {
	struct jr_view view;	  /* the main git directory's view (project = its path) */
	struct jf_policy *policy; /* jr_gitdir_policy, parsed; NULL when not shown */
	bool read_only;		  /* the project's policy makes .git RESTRICTED */
	char **placeholders;	  /* jr_gitdir_placeholders(), or NULL */
};

/*
 * For the --source view @v (project, host = the source and policy set): when
 * the project is a linked work tree (jr_gitdir_common), fill @g->view with
 * the main git directory, shown as the project's policy would treat a
 * repository's .git directory (DENIED: not shown; RESTRICTED: read-only),
 * and point v->gitdir at it; with it, or with the project's own .git
 * directory, list the other work trees' placeholders in v->placeholders.
 * A .git file that does not check out leaves the git directory unshown,
 * with the reason in @warn ("" otherwise). @g owns what it holds until
 * jr_gitdir_release(). Returns 0, or -ENOMEM.
 */
int jr_gitdir_setup(struct jr_gitdir *g, struct jr_view *v, char *warn, size_t warnsz);

/* Free what @g holds (not the views pointing at it). Idempotent. */
void jr_gitdir_release(struct jr_gitdir *g);
