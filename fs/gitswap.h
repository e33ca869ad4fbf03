/* SPDX-License-Identifier: MIT */
/*
 * A new git index, packed-refs or config renamed into place (git writes
 * index.lock, packed-refs.lock or config.lock, then renames it): the one way
 * to change them through the view. The profiles make them RESTRICTED, since
 * the host's git writes wherever an index's entries say ("git restore ."
 * with an entry .git/hooks/pre-commit), takes a replace ref in packed-refs
 * as the object of a commit id and runs the programs a config names, and
 * ops-names.c lets such a rename through only by
 * way of this module, which checks the content (gitcheck.h) and leaves on
 * disk the bytes it checked.
 *
 * Conventions: 0 or a negative errno; thread-safe.
 */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "gitconfig.h"
#include "policy.h"

/* The largest file the check reads, bytes (an index is about 100 bytes per
 * tracked file: 4 million files). */
#define JF_GIT_SWAP_MAX (512u << 20)
/* The most bytes of work-tree files an index's check hashes, to tell that
 * an entry names what a RESTRICTED file holds (past it, such entries fail
 * the check). */
#define JF_GIT_SWAP_HASHED (64u << 20)

/* Why jf_git_swap() refused. */
struct jf_git_refusal {
	const char *why;	  /* static text, NULL when not refused for the content */
	char key[JF_GIT_KEY_MAX]; /* the refused config key, or "" */
};

/*
 * Wait up to 1 s for the handles that may write the file @st (as probed) to
 * be released: the kernel sends RELEASE after close(2) returns, so git's own
 * handle of index.lock may still be open when the rename arrives. Returns
 * whether one still may. Call it without jf_fs.ns_lock: a directory's
 * rename waiting for the lock would hold every other name operation behind
 * it that long. Thread-safe.
 */
bool jf_git_swap_wait(const struct stat *st);

/*
 * Rename the regular file @sname of directory @dfd (view path @dpath: the
 * git directory a config's core.worktree is resolved from; @sst, as probed)
 * to @dname in the same directory when its content passes the check @kind.
 * An index must also keep, as the one it replaces has them, its entries for
 * names the view does not make SAFE in the work tree above @dpath's ".git",
 * unless an entry names what that file holds and the agent may read it
 * (jf_git_index_keeps(): "git add -A" of an untracked .vscode/settings.json,
 * a public certificate); a linked work tree's index (worktrees/<name>/index)
 * is judged by the names at the top of the view, as if it were its work tree.
 *
 * The file is read once into memory and checked (an index also loses its
 * cache-tree and untracked cache, jf_git_index_strip()); after the rename it
 * is rewritten with those bytes, its times kept, so a write that reached it
 * between the read and the rename is undone, and every write after the
 * rename meets a RESTRICTED name. The file is exchanged with @dname
 * (RENAME_EXCHANGE) and the old @dname removed only once that held: a
 * handle still open for writing then (one that could write without the
 * daemon, through passthrough) exchanges them back, so the user's file
 * stays; without an old @dname the renamed file goes again: *@moved_away is
 * set, and the caller forgets the name.
 *
 * Returns 0; -EBUSY with @out filled while a handle of the file may write
 * (the caller waits with jf_git_swap_wait(), without the namespace lock, and
 * tries again once); -EROFS with @out filled for a content that fails the
 * check, a file with another name (st_nlink > 1: writes by that name would
 * reach the index), or a file over JF_GIT_SWAP_MAX; another negative errno of
 * the system calls. Caller holds jf_fs.ns_lock.
 */
int jf_git_swap(enum jf_git_check kind, int dfd, const char *dpath, const char *sname,
		const struct stat *sst, const char *dname, bool *moved_away,
		struct jf_git_refusal *out);

/*
 * The content check of a git config or packed-refs file @path below @dirfd
 * (a view path: a config's git directory is its parent), as jf_git_swap()
 * runs it, for `jailfs apply` of a file the view let git rename into place.
 * An index is always refused: jf_git_swap() also strips it and compares it
 * with the index it replaces, which only a rename through the view has.
 * Returns 0 when it passes; -EROFS with @out filled when it does not, or for
 * a file with another name or over JF_GIT_SWAP_MAX; -EAGAIN when it changed
 * while read; another -errno of the open (not a regular file: -ENXIO).
 * Thread-safe.
 */
int jf_git_state_check(enum jf_git_check kind, int dirfd, const char *path,
		       struct jf_git_refusal *out);
