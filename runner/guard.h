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

/* Split @s like env -S: whitespace separates, '...' and "..." quote, \
 * escapes. Returns a malloc'ed NULL-terminated array (free with
 * jr_free_words), its length in *count; NULL when out of memory. */
char **jr_split_words(const char *s, int *count);
void jr_free_words(char **words, int n);

/* A program file that is the command's stdin fed by the string itself (a
 * pipe or here-document: "-", /dev/stdin, /dev/fd/0), or in --shell mode
 * any /dev/fd/N or /proc/self/fd/N the string opened: inline code. */
bool jr_fd_program(const struct walk *w, const char *path);

/* ---- guard-tools.c: tools whose arguments or environment say what runs ---- */

/* git: -c KEY=VALUE, --config-env, git config KEY VALUE. */
bool jr_check_git(struct walk *w, const char *shown, int argc, char *const argv[]);

/* Does git configuration "KEY=VALUE" (or "KEY") make git run a program? */
bool jr_git_config_runs_code(const char *kv);

/* env [OPTION]... [NAME=VALUE]... [COMMAND [ARG]...] (argv[0] is env). */
bool jr_check_env(struct walk *w, const char *shown, int argc, char *const argv[]);

/* find PATH... EXPR: -exec/-execdir/-ok/-okdir CMD ... ; or +, and -delete. */
bool jr_check_find(struct walk *w, const char *shown, int argc, char *const argv[]);

/* If @jail (a resolved executable inside the project) is a copy, byte for
 * byte, of a denied or interpreter binary in the jail's PATH, that binary's
 * stripped name (static storage of @w->g: valid until jr_guard_release);
 * NULL otherwise. Builds the table of such binaries on first use. */
const char *jr_copy_of(struct walk *w, const char *jail);

/* cmake -E rm/remove/remove_directory, -E env/chdir/time CMD, -P FILE. */
bool jr_check_cmake(struct walk *w, const char *shown, int argc, char *const argv[]);

/* npx -c/--call, npm exec -c/--call, pnpm and yarn exec CMD. */
bool jr_check_npm(struct walk *w, const char *shown, int argc, char *const argv[]);

/* python -m MODULE [ARG]... at argv[@i] (the word holding -m): modules whose
 * operands are code (timeit, pdb -c, IPython -c), or that run another one
 * (cProfile, profile, trace -m MODULE), or read stdin (code, asyncio). */
bool jr_check_pymodule(struct walk *w, const char *shown, int argc, char *const argv[], int i);

/* node, deno, bun: a program in a data: URL (--import, --loader, the script
 * operand), deno repl --eval. */
bool jr_check_js(struct walk *w, const char *name, const char *shown, int argc, char *const argv[]);

/* ln, cp, install, link with a denied executable as the source: the copy or
 * link would run it under another name. */
bool jr_check_copy(struct walk *w, const char *shown, int argc, char *const argv[]);

/* One environment assignment NAME=VALUE the command gets (env, a shell
 * prefix or export, --env, [run] env): GIT_CONFIG_PARAMETERS and
 * GIT_CONFIG_KEY_n/VALUE_n as git -c, GIT_SSH_COMMAND, pagers and editors as
 * the commands they name, NODE_OPTIONS and PERL5OPT as the interpreter's
 * options. */
bool jr_check_assign(struct walk *w, const char *kv);

/* export/declare/typeset/readonly/local NAME=VALUE...: jr_check_assign each. */
bool jr_check_assigns(struct walk *w, const char *shown, int argc, char *const argv[]);

/* ---- guard-lang.c, continued ---- */

/* Does sqlite3 text (SQL or a dot-command) run a program or load code:
 * .shell, .system, a '|' output or input, .load, edit(), load_extension()?
 * Returns what does, or NULL. */
const char *jr_sqlite_runs_code(const char *text);

/* sqlite3 [OPTION]... [DB [SQL]...] */
bool jr_check_sqlite(struct walk *w, const char *shown, int argc, char *const argv[]);

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
