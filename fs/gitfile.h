/* SPDX-License-Identifier: MIT */
/*
 * A .git file written through the view (git submodule add and update write
 * "gitdir: ../.git/modules/<name>" into <path>/.git with open(O_CREAT |
 * O_TRUNC), one write and close; no rename). A .git that is not a
 * directory is RESTRICTED (policy/profiles.c, GIT_FILE): the host's git
 * takes its config and hooks/ from the directory it names. The daemon still
 * lets a regular .git be created, opened for writing, written and
 * truncated, checking at each change what the file will hold: nothing (git
 * refuses an empty .git file), or a "gitdir: PATH" (policy/gitlink.h) that
 * names a directory the policy zones as a git directory
 * (jf_git_dir_rule()), reached through no symlink, and removed (git then
 * finds the repository above). Everything else about the name stays
 * RESTRICTED: no rename or link of it, no passthrough handle (a writable
 * RESTRICTED handle never is one), no fallocate or copy_file_range into it,
 * and none of it in a view that can write nothing.
 *
 * Conventions: 0 or a negative errno; thread-safe (one lock serialises
 * every change of a .git file, so two writers never each see the other's
 * old content).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "gitlink.h"
#include "policy.h"

/* May a write to the object of type @type (S_IFREG...) at view path @path
 * with verdict @v go through the check here instead of being refused?
 * Never in a view that can write nothing (jf_policy_can_write()). */
bool jf_gitfile_checked(const struct jf_verdict *v, mode_t type, const char *path);

/* jf_gitfile_checked() for @inode, whose path is looked up only when the
 * type and zone tell that it may be one. Takes jf_fs.lock briefly. */
bool jf_gitfile_inode(const struct jf_verdict *v, struct jf_inode *inode);

/*
 * Write the @size bytes at @data at offset @off (@append: at the end) of
 * the .git file of @fd (open for writing) whose view path is @path, when
 * the content that gives passes the check. The file never holds, for a
 * reader on the host, anything but its old content, its new one or a
 * content git refuses: its first byte is made NUL while the rest changes.
 * Returns @size; -EROFS with *@why (static text) when refused: a content
 * that fails, a file with another name, a file over JF_GITFILE_MAX; another
 * negative errno of the system calls.
 */
ssize_t jf_gitfile_write(int fd, const char *path, const void *data, size_t size, off_t off,
			 bool append, const char **why);

/* Truncate (or extend) the .git file of @fd (open for writing) at view
 * path @path to @size bytes, under the same check. 0, or as
 * jf_gitfile_write(). */
int jf_gitfile_truncate(int fd, const char *path, off_t size, const char **why);

/*
 * The rule that keeps a symlink to @target (its text) from view path @path:
 * the policy zones @path as a git directory, or zones its entries as git
 * directories (.git/modules, .git/worktrees), and @target does not lead
 * to the same: a relative path of names only (it stays below the link's
 * directory, whatever the links on its way), zoned alike there. A .git file
 * may name a git directory that does not exist yet (git writes the file
 * first); a symlink put there later would send the host's git to a
 * directory the agent writes. Git's own probe of a new git directory
 * (a link tXXXXXX to "testing") stays allowed. NULL when the symlink may
 * stand at @path. Lock-free.
 */
const struct jf_rule *jf_gitfile_symlink_rule(const char *path, const char *target);
