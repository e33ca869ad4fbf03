/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the guardrail sources: guard.c (commands, arguments),
 * guard-path.c (path arguments), guard-shell.c (--shell strings) and
 * guard-lang.c (other tools' languages). Not an API: jailrun.h is.
 * Every check returns true when it refused, with the verdict filled by
 * jr_deny(); false when it let the command through.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cleanup.h"
#include "jailrun.h"

#define MAX_DEPTH 8 /* wrappers and nested shell strings, before "nesting" refuses */

/* One walk through a request: where the verdict goes, and the context the
 * command being checked will run in. */
struct walk {
	struct jr_guard *g;
	struct jr_verdict *v;
	const char *cwd;      /* may differ from g->cwd under env -C */
	const char *path_env; /* may differ under env PATH=... */
	int depth;
	bool stdin_text; /* --shell: stdin is a pipe or here-document of the string */
};

/* Refuse: fill the verdict with @rule and the formatted reason. Returns true. */
_printf_(3, 4) bool jr_deny(struct walk *w, const char *rule, const char *fmt, ...);

/* Check one simple command (argv[0] is the command as typed). */
bool jr_check_cmd(struct walk *w, int argc, char *const argv[]);

/* Check a shell command string (guard-shell.c): split into simple commands,
 * each checked with jr_check_cmd, redirection targets with jr_check_path_arg. */
bool jr_check_shell(struct walk *w, const char *s);

/* Check argument @a as a path if it looks like one (see path_candidate). */
bool jr_check_path_arg(struct walk *w, const char *a);

/* jr_check_path_arg on argv[from..to). */
bool jr_check_paths(struct walk *w, int from, int to, char *const argv[]);

/* ---- guard-lang.c ---- */

/* Option specs like getopt(3) optstrings, each name followed by its kind:
 * ':' a value, '=' a shell command string, '@' a debugger command, '<' a
 * program file, '?' an optional attached value, '!' and '~' flags that change
 * how the operands are read (struct wrapper in guard.c says how). */
#define OPT_KINDS ":=@!~<?"
#define OPT_VALUE ":=@<" /* kinds taking a value, attached or the next word */

/* Kind of short option @c in @opts: a character of OPT_KINDS, ' ' for a plain
 * flag, 0 when unknown. */
char jr_opt_kind(const char *opts, char c);

/* Kind of long option @name (@n bytes) in NULL-terminated @longs: an exact
 * match first, then an abbreviation (getopt_long accepts unambiguous ones). */
char jr_long_kind(const char *const *longs, const char *name, size_t n);

/* Option word argv[*i]: the kind of its first option taking a value (or of its
 * last flag), the value in *val; *i advances past a separate value. */
char jr_opt_at(const char *opts, const char *const *longs, int argc, char *const argv[], int *i,
	       const char **val);

/* awk, sed, tar and pwsh command lines: refuse inline code. */
bool jr_check_awk(struct walk *w, const char *shown, int argc, char *const argv[]);
bool jr_check_sed(struct walk *w, const char *shown, int argc, char *const argv[]);
bool jr_check_tar(struct walk *w, const char *shown, int argc, char *const argv[]);
bool jr_check_pwsh(struct walk *w, const char *shown, int argc, char *const argv[]);
