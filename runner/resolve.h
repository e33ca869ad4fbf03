/* SPDX-License-Identifier: MIT */
/*
 * The jail's file namespace as jailrun sees it (resolve.c): the project's
 * view, jail paths mapped to the host (jr_map) and resolved as exec would
 * resolve them (jr_resolve, jr_find_exec).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct jf_policy;

struct jr_home;

/*
 * The project as the jail shows it. The child sees the view at @project (the
 * project's own absolute path, i.e. the jailfs SOURCE); jailrun reaches the
 * same files at @host (the jailfs mountpoint, or the source directory itself
 * while guardrails run before a one-shot mount exists).
 */
struct jr_view {
	char project[PATH_MAX];		/* absolute, no trailing slash ("/" never allowed) */
	char host[PATH_MAX];		/* absolute path jailrun uses to reach the files */
	const struct jf_policy *policy; /* classifies view-relative paths; not owned */
	bool host_is_source;		/* @host is the raw source: hide DENIED names ourselves */
	const char *const *expose;	/* extra host paths bound read-only, NULL-terminated */
	/* the main repository's git directory when the project is a linked
	 * work tree (gitdir.c): a second view, shown at its own path, or NULL */
	const struct jr_view *gitdir;
	/* paths where the jail's read-only root holds an empty file: the .git
	 * files of the repository's other work trees, NULL-terminated or NULL */
	char *const *placeholders;
	/* the jail's home and what it masks (home.c), or NULL for none */
	const struct jr_home *home;
};

/* ---- resolve.c ---- */

/* Paths below /etc (files or dirs, one or more components) bound or copied
 * into the jail's reduced /etc. */
extern const char *const jr_etc_entries[];

/* Is @path equal to @prefix or below it, component-wise ("/usr" is under
 * "/usr", "/usrx" is not)? Both absolute, without a trailing slash. Pure. */
bool jr_path_under(const char *path, const char *prefix);

/*
 * Map the absolute jail path @jail to the host path jailrun can lstat() to see
 * what the child would see. Returns 0 and writes @host (@size bytes), -ENOENT
 * when the path is not visible in the jail at all (home, /run, host /tmp...),
 * -EACCES when it is a DENIED name of the project, -ENAMETOOLONG.
 */
int jr_map(const struct jr_view *v, const char *jail, char *host, size_t size);

/* Names met while resolving the last component (each symlink hop). */
struct jr_chain {
	int n;
	char name[8][NAME_MAX + 1];
};

/*
 * Resolve @in the way the kernel would inside the jail: relative to @cwd (an
 * absolute jail path), "." and ".." folded, symlinks followed (at most 40),
 * /proc/self/root, /proc/thread-self/root and /proc/PID/root folded to "/",
 * /proc/self/cwd and /proc/PID/cwd to @cwd. Components that do not exist are
 * kept lexically. Writes the absolute jail path to @out (PATH_MAX bytes) and,
 * when @chain is not NULL, the last component's name at every symlink hop.
 * Returns 0 or -ELOOP / -ENAMETOOLONG.
 */
int jr_resolve(const struct jr_view *v, const char *cwd, const char *in, char *out,
	       struct jr_chain *chain);

/*
 * Find the executable exec(3)/execvp would run for @name: a name with a '/'
 * is resolved against @cwd, otherwise each entry of @path_env (":"-separated,
 * empty entries mean the cwd) is tried in order for a regular file with an
 * execute bit. Writes the absolute jail path to @out (PATH_MAX bytes).
 * Returns 0, or -ENOENT when nothing was found.
 */
int jr_find_exec(const struct jr_view *v, const char *cwd, const char *path_env, const char *name,
		 char *out, struct jr_chain *chain);
