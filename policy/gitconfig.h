/* SPDX-License-Identifier: MIT */
/*
 * Is a git config file (.git/config, config.worktree, a submodule's
 * .git/modules/<name>/config) one the host's git may read? Some keys make
 * git run a program (core.fsmonitor, core.pager, filter.<driver>.smudge,
 * an alias...) or read another file (include.path, core.attributesFile),
 * so a config an agent wrote would run its code the next time the user runs
 * git on the host. The daemon lets a new config be renamed into place
 * (git writes config.lock, then renames it) only when no key of the list in
 * gitconfig.c is set (fs/gitswap.c), and jailrun refuses the same keys in
 * git -c (runner/guard-tools.c). The parser follows git's own
 * (config.c, git_parse_source) byte for byte, and refuses what git would
 * not parse: it is the wall, so it fails closed. Pure.
 *
 * Conventions: 0 or a negative errno; thread-safe (no global state).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Room for the key jf_git_config_check() names, bytes with the NUL (a longer
 * key is cut, "..." at its end). */
#define JF_GIT_KEY_MAX 128

/*
 * Check the @len bytes of a config file at @buf, the file of git directory
 * @gitdir (its view path, NUL-terminated: a relative core.worktree is
 * resolved from there and must stay inside the view, out of every git
 * directory). Returns 0 when the file parses and sets none of the refused
 * keys; -EINVAL otherwise, with *@why (static text) and, for a refused key,
 * that key in @key (@keysz bytes; section and name in lower case, a
 * subsection as written; "" for a parse error).
 */
int jf_git_config_check(const unsigned char *buf, size_t len, const char *gitdir, char *key,
			size_t keysz, const char **why);

/*
 * Does setting @key (@n bytes, as given to git -c or git config: section
 * and name in any case) to @value (NULL: no value) set a key of the list,
 * core.worktree aside (it depends on where the config lies)? jailrun's
 * guardrails refuse such a git -c with it. Pure, thread-safe.
 */
bool jf_git_config_key_refused(const char *key, size_t n, const char *value);

/* The refused keys, for tests and the documentation: the @i-th pattern
 * ("core.fsmonitor", "diff.*.textconv", "filter.*"), NULL past the end. The
 * returned text is static. */
const char *jf_git_config_refused(size_t i);
