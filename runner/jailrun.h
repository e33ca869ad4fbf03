/* SPDX-License-Identifier: MIT */
/*
 * jailrun internals shared between the runner's source files.
 *
 * Topics and files:
 *   resolve.c  the jail's file namespace as seen from jailrun (jr_map) and
 *              exec-style path resolution inside it (jr_resolve)
 *   guard.c    the guardrails: pure checks of a request, decided before any
 *              process is spawned (jr_guard_*); the wrapper table
 *   guard-path.c   path arguments: where they lead, what may be named
 *   guard-shell.c  --shell strings split into simple commands
 *   guard-lang.c   inline programs of awk, sed, gdb, tar, pwsh, sqlite3 (jr_*_runs_code)
 *   guard-tools.c  env, find, git, cmake, npm, python -m, node data: URLs, copies of
 *                  denied binaries, and environment variables that make tools run code
 *   guard.h    internals shared by the guard*.c files
 *   view.c     --root mountinfo check, the one-shot jailfs mount
 *   gitdir.c   the main repository's git directory of a linked work tree
 *   home.c     the jail's home directory, the toolchains exposed in it
 *   sandbox.c  namespaces, mounts, pivot_root, caps, seccomp, rlimits
 *   mountfd.c  mounts attached through fds, without following a symlink
 *   capture.c  bounded output capture, timeout, tree kill
 *   termfilter.c  terminal escape sequences kept or dropped (termfilter.h)
 *   result.c   exit statuses and the --json result
 *   env.c      the command's environment (allowlist, [run] env, --env)
 *   main.c     options, --request JSON, the flow
 *
 * Conventions: functions return 0 or a negative errno; nothing here is
 * thread-safe unless said (jailrun is single-threaded).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"
#include "capture.h"
#include "env.h"
#include "gitdir.h"
#include "home.h"
#include "mountfd.h"
#include "resolve.h"
#include "sandbox.h"
#include "view.h"

/* Exit statuses (bash and coreutils timeout(1) conventions). */
#define JR_EXIT_TIMEOUT 124 /* the command ran out of time */
#define JR_EXIT_USAGE 2	    /* bad options or request (as bwrap and coreutils) */
#define JR_EXIT_ERROR 125   /* jailrun itself failed (setup) */
#define JR_EXIT_DENIED 126  /* a guardrail refused the command */
#define JR_JSON_DENIED (-100)
#define JR_JSON_TIMEOUT (-101)

/* ---- guard.c ---- */

struct jr_verdict {
	bool denied;
	char rule[64];	  /* machine-readable rule id, e.g. "inline-code" */
	char reason[640]; /* human text, e.g. "interpreter inline code (python3 -c)" */
	/* the executable name an allow_exec would lift the rule for ("rm" for
	 * exec-denylist, exec-copy, chmod-recursive...), "" for other rules */
	char subject[NAME_MAX + 1];
	/* inline-code: the interpreter whose inline code allow_inline would let
	 * run (as typed, "python3"), "" for none; @needs_shell: a shell's -c
	 * string, which --shell checks as a command line */
	char interp[NAME_MAX + 1];
	bool needs_shell;
};

struct jr_guard {
	const struct jr_view *view;
	const char *cwd;      /* absolute jail path of the command's working directory */
	const char *path_env; /* PATH as the child will get it */
	const char *home;     /* HOME inside the jail (for "~") */
	/* the environment the command will get (NAME=VALUE, NULL-terminated):
	 * variables that make git or node run code are checked; NULL for none */
	char *const *envp;
	bool shell;	    /* --shell given */
	const char **deny;  /* effective denylist (fnmatch patterns), NULL-terminated */
	const char **allow; /* names exempted from the built-in rules, NULL-terminated */
	/* interpreters whose inline code (-c, -e, -m timeit...) may run:
	 * patterns, NULL-terminated, or NULL for none */
	const char *const *allow_inline;
	/* lazily built table of denied binaries in PATH (renamed-copy check) */
	struct jr_ident *idents;
	size_t n_idents;
	bool idents_built;
};

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

/* ---- guard-lang.c: inline programs in other tools' languages ---- */

/*
 * Does awk program text @prog run a command? Returns what does ("system()",
 * "'|' command pipe": print | "cmd", "cmd" | getline, |&) or NULL. String
 * literals, regular expressions (where an operand is expected) and comments
 * are skipped. Best effort; pure.
 */
const char *jr_awk_runs_code(const char *prog);

/* Does sed script @script use GNU sed's 'e' command or the s///e flag (both
 * run sh -c)? Addresses, regexes, replacements and text arguments are
 * skipped. Best effort; pure. */
bool jr_sed_runs_code(const char *script);

/* Does gdb command @cmd (-ex, -iex, --eval-command) run a program: shell, !,
 * pipe, python, guile, compile, eval (abbreviations too), or a call of
 * system/exec.../popen/dlopen/posix_spawn in the debugged program? Returns
 * what, or NULL. Source: gdb(1), "Shell Commands" in the GDB manual. */
const char *jr_gdb_runs_code(const char *cmd);

/* What PowerShell parameter @word ("-Command", "-c", "--file", "-ep:x";
 * case-insensitive, abbreviations) is. Source: about_Pwsh. */
enum { JR_PWSH_INLINE = 1, JR_PWSH_FILE = 2, JR_PWSH_VALUE = 3 };
int jr_pwsh_param(const char *word);
