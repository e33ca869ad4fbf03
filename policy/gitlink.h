/* SPDX-License-Identifier: MIT */
/*
 * A .git file ("gitdir: PATH", a submodule's or a linked work tree's) sends
 * git to PATH for its config and hooks/. The daemon lets one be written only
 * while it names a directory of the view that the policy zones as a git
 * directory (fs/gitfile.h); this is its pure half: git's reading of such a
 * file (setup.c, read_gitfile_gently) and the view path PATH names.
 *
 * Conventions: 0 or a negative errno; thread-safe (no global state).
 */
#pragma once

#include <stddef.h>

/* The largest .git file jailfs lets be written, bytes: "gitdir: ", a path
 * and its newline. */
#define JF_GITFILE_MAX 4200

/*
 * Read the @len bytes at @buf as git reads a .git file in view directory
 * @dir ("" for the top), the view's top being @root_abs on the host and in
 * the jail (jailrun shows the view at its source's path), and put the view
 * path of the directory it names into @out (@size bytes; "" for the top).
 * Only the forms git writes are taken: "gitdir: " then a path, then
 * newlines; the path either absolute below @root_abs, or relative with
 * every ".." first; no empty, "." or ".." component elsewhere, no NUL, no
 * line break inside. Returns 0; 1 for an empty file (it names nothing:
 * git refuses it); -EINVAL with *@why (static text) for any other content
 * or a path that leaves the view; -ENAMETOOLONG when @out is too small.
 */
int jf_gitfile_target(const unsigned char *buf, size_t len, const char *dir, const char *root_abs,
		      char *out, size_t size, const char **why);
