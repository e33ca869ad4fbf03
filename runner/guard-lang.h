/* SPDX-License-Identifier: MIT */
/* Inline programs in other tools' languages (guard-lang.c): awk, sed, gdb,
 * tar, pwsh, sqlite3. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "guard-walk.h"

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

/* Does sqlite3 text (SQL or a dot-command) run a program or load code:
 * .shell, .system, a '|' output or input, .load, edit(), load_extension()?
 * Returns what does, or NULL. */
const char *jr_sqlite_runs_code(const char *text);

/* sqlite3 [OPTION]... [DB [SQL]...] */
bool jr_check_sqlite(struct walk *w, const char *shown, int argc, char *const argv[]);

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
