/* SPDX-License-Identifier: MIT */
/*
 * Tools whose arguments or environment say what runs (guard-tools.c): env,
 * find, git, cmake, npm, python -m, node data: URLs, copies of denied
 * binaries, and environment variables that make tools run code.
 */
#pragma once

#include <stdbool.h>

#include "guard-walk.h"

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

/* Split @s like env -S: whitespace separates, '...' and "..." quote, \
 * escapes. Returns a malloc'ed NULL-terminated array (free with
 * jr_free_words), its length in *count; NULL when out of memory. */
char **jr_split_words(const char *s, int *count);
void jr_free_words(char **words, int n);
