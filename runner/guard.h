/* SPDX-License-Identifier: MIT */
/*
 * The guardrails (guard.c): a request checked before anything is spawned,
 * one simple command at a time (jr_check_cmd).
 *
 * The one circle of runner/, on purpose: a command can hold a command.
 * jr_check_cmd hands a tool's command (env CMD, find -exec CMD, cmake -E
 * env CMD, npx -c CMD, GIT_EDITOR=CMD) to guard-tools.c and a shell string (sh -c,
 * --shell) to guard-shell.c; guard-shell.c hands its assignments
 * (NAME=VALUE CMD, export) to guard-tools.c; and both hand every command
 * they find back to jr_check_cmd or jr_check_shell_string, one level
 * deeper, until MAX_DEPTH (guard-walk.h) refuses. So guard.c, guard-shell.c
 * and guard-tools.c call each other. What else the guardrails use lies
 * below that circle and calls nothing in it: guard-wrap.c (the wrapper
 * table), guard-lang.c (other tools' languages), guard-path.c (path
 * arguments), guard-walk.c (the request, its verdict, the refusal).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "guard-walk.h"

/* The built-in executable denylist (fnmatch patterns), NULL-terminated. */
extern const char *const jr_default_denylist[];

/*
 * Strip a version suffix from an executable basename: "python3.11" ->
 * "python", "perl5.36" -> "perl", "lua5.4" -> "lua", "node" unchanged.
 * Writes at most @size bytes to @out.
 */
void jr_strip_version(const char *name, char *out, size_t size);

/*
 * Check @argc arguments (argv mode) and fill @out. With g->shell, argv is
 * joined with spaces into one shell command and checked as jr_guard_shell
 * would. Never spawns anything; reads the filesystem only through jr_map.
 * Returns 0 (the answer is in out->denied) or -ENOMEM.
 */
int jr_guard_argv(struct jr_guard *g, int argc, char *const argv[], struct jr_verdict *out);

/* Check a shell command string (best effort: simple commands, pipelines,
 * lists, redirections, $(...) and `...` are split out and checked one by one).
 * Same return convention as jr_guard_argv. */
int jr_guard_shell(struct jr_guard *g, const char *cmd, struct jr_verdict *out);

/* Release the lazily built tables. The struct may be reused. */
void jr_guard_release(struct jr_guard *g);

/* ---- for guard-shell.c and guard-tools.c ---- */

/* Check one simple command (argv[0] is the command as typed). */
bool jr_check_cmd(struct walk *w, int argc, char *const argv[]);

/* The denylist pattern matching @name (raw or version-stripped) that no
 * allow entry lifts, or NULL. */
const char *jr_denied_name(const struct jr_guard *g, const char *name);

/* Is @name (version-stripped) a shell or language interpreter, one that runs
 * the text it reads on stdin as a program (not an editor or make)? */
bool jr_runs_stdin_program(const char *name);

/* @s is a command string a tool hands to sh -c: refused as inline code
 * without --shell, checked as a shell command with it. @opt (may be NULL) is
 * the option that carried it, for the reason. */
bool jr_check_shell_string(struct walk *w, const char *shown, const char *opt, const char *s);

/* Is @name (version-stripped) in the interpreter table? */
bool jr_is_interp(const char *name);
