/* SPDX-License-Identifier: MIT */
/*
 * Guardrails, continued: does a program text in another tool's language run a
 * command? Pure string predicates for awk programs, sed scripts, gdb
 * commands and PowerShell parameters given inline on the command line, the
 * getopt-style option specs the wrapper table uses, and the checks of awk,
 * sed, tar and pwsh command lines built on them. Best effort by
 * design (the namespace is the wall): each scanner knows just enough of its
 * language to skip string literals and regular expressions, so that the
 * common harmless programs pass and the spellings that run a program do not.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "guard-lang.h"
#include "guard-path.h"
#include "guard-walk.h"

/* ---- awk (POSIX awk, gawk, mawk) ---- */

/* Where an awk operand is expected, '/' opens a regular expression, elsewhere
 * it divides (the lexer rule of the one true awk). @prev is the last
 * significant character before it, 0 at the start. */
static bool awk_regex_here(char prev)
{
	return !prev || strchr("(,{};~!&|=?:\n", prev);
}

/* Past the end of a "..." string or a /.../ regex starting at @s (on the
 * opening delimiter). */
static const char *skip_delimited(const char *s, char close)
{
	for (s++; *s && *s != close; s++)
		if (*s == '\\' && s[1])
			s++;
	return *s ? s + 1 : s;
}

const char *jr_awk_runs_code(const char *prog)
{
	char prev = 0;

	for (const char *s = prog; *s;) {
		if (*s == '"' || (*s == '/' && awk_regex_here(prev))) {
			s = skip_delimited(s, *s);
			prev = 'x'; /* an operand */
			continue;
		}
		if (*s == '#') {
			s += strcspn(s, "\n");
			continue;
		}
		if (*s == '|' && s[1] == '|') {
			s += 2;
			prev = '|';
			continue;
		}
		if (*s == '|') /* print | "cmd", "cmd" | getline, |& coprocess */
			return "'|' command pipe";
		if (strncmp(s, "system", 6) == 0 &&
		    (s == prog || !(isalnum((unsigned char)s[-1]) || s[-1] == '_'))) {
			const char *p = s + 6 + strspn(s + 6, " \t");

			if (*p == '(')
				return "system()";
		}
		if (!isspace((unsigned char)*s) || *s == '\n')
			prev = *s;
		s++;
	}
	return NULL;
}

/* ---- sed (GNU sed: the 'e' command and the s///e flag run sh -c) ---- */

/* One address: a line number, $, first~step, +N, /re/ or \cREc with I/M. */
static const char *sed_addr(const char *s)
{
	if (*s == '/')
		s = skip_delimited(s, '/');
	else if (*s == '\\' && s[1])
		s = skip_delimited(s + 1, s[1]);
	else
		return s + strspn(s, "0123456789$~+");
	return s + strspn(s, "IM");
}

/* The flags of an s command at @s: true when one is 'e'; *end past them. */
static bool sed_s_flags(const char *s, const char **end)
{
	for (; *s && !strchr(";\n}#", *s); s++) {
		if (*s == 'e')
			return true;
		if (*s == 'w') { /* w FILE: the rest of the line is a file name */
			s += strcspn(s, "\n");
			break;
		}
	}
	*end = s;
	return false;
}

bool jr_sed_runs_code(const char *s)
{
	while (*s) {
		char c;

		s += strspn(s, " \t\n;");
		s = sed_addr(s);
		s += strspn(s, " \t");
		if (*s == ',')
			s = sed_addr(s + 1 + strspn(s + 1, " \t"));
		s += strspn(s, " \t!");
		if (!(c = *s))
			break;
		s++;
		if (c == 'e')
			return true;
		if ((c == 's' || c == 'y') && *s && *s != '\n' && *s != '\\') {
			char d = *s;

			s = skip_delimited(s, d);     /* the pattern, ends on d */
			s = skip_delimited(s - 1, d); /* the replacement */
			if (c == 's' && sed_s_flags(s, &s))
				return true;
		} else if (strchr("aic", c)) { /* text up to an unescaped newline */
			while (*s && !(*s == '\n' && s[-1] != '\\'))
				s++;
		} else if (strchr("rRwW:#", c)) {
			s += strcspn(s, "\n"); /* file name, label or comment */
		} else if (c != '{' && c != '}') {
			s += strcspn(s, ";\n}"); /* b LABEL, q 5, l 70, p, d... */
		}
	}
	return false;
}

/* ---- gdb commands (-ex, -iex, --eval-command) ---- */

/* Is @w (@n bytes) an abbreviation of @cmd at least @min bytes long? */
static bool abbrev(const char *w, size_t n, const char *cmd, size_t min)
{
	return n >= min && n <= strlen(cmd) && strncmp(w, cmd, n) == 0;
}

/* Does @s call a function whose name starts with @fn (system(, execve (...)? */
static bool calls_fn(const char *s, const char *fn)
{
	for (const char *p = s; (p = strstr(p, fn)); p++) {
		const char *e = p + strlen(fn);

		while (isalnum((unsigned char)*e) || *e == '_')
			e++;
		e += strspn(e, " \t");
		if (*e == '(' && (p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')))
			return true;
	}
	return false;
}

const char *jr_gdb_runs_code(const char *cmd)
{
	static const char *const calls[] = {"system", "exec",	     "popen",
					    "dlopen", "posix_spawn", NULL};
	const char *w = cmd + strspn(cmd, " \t");
	size_t n = strcspn(w, " \t");

	if (*w == '!' || *w == '|')
		return "shell escape";
	if (abbrev(w, n, "shell", 3) || abbrev(w, n, "pipe", 3))
		return "shell command";
	if (abbrev(w, n, "python", 2) || abbrev(w, n, "python-interactive", 7) ||
	    abbrev(w, n, "pi", 2) || abbrev(w, n, "guile", 2) || abbrev(w, n, "guile-repl", 6) ||
	    abbrev(w, n, "gr", 2) || abbrev(w, n, "compile", 4) || abbrev(w, n, "expression", 4) ||
	    abbrev(w, n, "eval", 3))
		return "script code";
	for (const char *const *c = calls; *c; c++)
		if (calls_fn(w, *c))
			return "call into the debugged program";
	return NULL;
}

/* ---- PowerShell parameters ---- */

int jr_pwsh_param(const char *word)
{
	static const char *const value[] = {"executionpolicy",	 "workingdirectory",
					    "configurationname", "configurationfile",
					    "outputformat",	 "inputformat",
					    "settingsfile",	 "windowstyle",
					    "custompipename",	 NULL};
	static const char *const alias[] = {"ex",  "ep", "wd",	     "config", "o", "of",
					    "inp", "if", "settings", "w",      NULL};
	char name[64];
	size_t n = 0;

	word += 1 + (word[1] == '-');
	for (; word[n] && word[n] != ':' && n + 1 < sizeof(name); n++)
		name[n] = (char)tolower((unsigned char)word[n]);
	name[n] = '\0';
	if (abbrev(name, n, "command", 1) || abbrev(name, n, "commandwithargs", 8) ||
	    !strcmp(name, "cwa") || abbrev(name, n, "encodedcommand", 1) || !strcmp(name, "ec") ||
	    abbrev(name, n, "encodedarguments", 8) || !strcmp(name, "ea"))
		return JR_PWSH_INLINE;
	if (abbrev(name, n, "file", 1))
		return JR_PWSH_FILE;
	for (const char *const *v = alias; *v; v++)
		if (!strcmp(name, *v))
			return JR_PWSH_VALUE;
	for (const char *const *v = value; *v; v++)
		if (abbrev(name, n, *v, 3))
			return JR_PWSH_VALUE;
	return 0;
}

/* ---- getopt-style option specs (see struct wrapper in guard.c) ---- */

char jr_opt_kind(const char *opts, char c)
{
	const char *p = strchr(opts, c);

	if (!p || strchr(OPT_KINDS, c))
		return 0;
	return p[1] && strchr(OPT_KINDS, p[1]) ? p[1] : ' ';
}

/* The same for long option @name (@n bytes): an exact match first, then the
 * first name @name abbreviates (getopt_long accepts unambiguous prefixes). */
char jr_long_kind(const char *const *longs, const char *name, size_t n)
{
	const char *const *l;

	for (int pass = 0; pass < 2; pass++)
		for (l = longs; n && *l; l++) {
			size_t len = strcspn(*l, OPT_KINDS);

			if (strncmp(*l, name, n) == 0 && (pass ? n < len : n == len))
				return (*l)[len] ? (*l)[len] : ' ';
		}
	return 0;
}

/* ---- the checks of those commands' arguments ---- */

/* Option word argv[*i] against a getopt-style spec (see struct wrapper; also
 * '<' a value naming a program file, '?' an optional attached value): the
 * kind of its first option taking a value (or of its last flag), the value
 * in *val; *i advances past a separate value. */
char jr_opt_at(const char *opts, const char *const *longs, int argc, char *const argv[], int *i,
	       const char **val)
{
	const char *a = argv[*i];
	char k = 0;

	*val = NULL;
	if (a[1] == '-') {
		size_t n = strcspn(a + 2, "=");

		k = jr_long_kind(longs, a + 2, n);
		*val = a[2 + n] ? a + 3 + n : NULL;
	} else {
		for (int j = 1; a[j] && !*val; j++) {
			k = jr_opt_kind(opts, a[j]);
			if (k && strchr(OPT_VALUE "?", k)) {
				*val = a[j + 1] ? a + j + 1 : NULL;
				break;
			}
		}
	}
	if (k && strchr(OPT_VALUE, k) && !*val && *i + 1 < argc)
		*val = argv[++*i];
	return k;
}

/* awk [-F FS] [-v V=X] [-f FILE | -e PROG | PROG] [FILE...]: an inline program
 * that runs a command (system(), a pipe to or from one) is inline code. */
bool jr_check_awk(struct walk *w, const char *shown, int argc, char *const argv[])
{
	static const char *const longs[] = {"file<", "source=",		 "exec<",   "include:",
					    "load:", "field-separator:", "assign:", NULL};
	const char *val, *what;
	bool program = false;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		char k;

		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		k = jr_opt_at("f<F:v:e=E<i:l:W:", longs, argc, argv, &i, &val);
		program |= k == '<' || k == '=';
		if (k == '<' && val && jr_fd_program(w, val))
			return jr_deny(w, "inline-code",
				       "awk program read from a pipe or here-document (%s -f %s)",
				       shown, val);
		if (k == '=' && val && (what = jr_awk_runs_code(val)))
			return jr_deny(w, "inline-code", "awk program runs a command: %s (%s)",
				       what, shown);
	}
	if (!program && i < argc) {
		if ((what = jr_awk_runs_code(argv[i])))
			return jr_deny(w, "inline-code", "awk program runs a command: %s (%s)",
				       what, shown);
		i++;
	}
	return jr_check_paths(w, i, argc, argv);
}

/* sed [-n] [-e SCRIPT | -f FILE | SCRIPT] [FILE...], options anywhere (GNU
 * getopt permutes): GNU sed's 'e' command and s///e flag run sh -c, unless
 * --sandbox (which makes sed refuse e, r and w). */
bool jr_check_sed(struct walk *w, const char *shown, int argc, char *const argv[])
{
	static const char *const longs[] = {
		"expression=", "file<", "line-length:", "sandbox~", "in-place?", NULL};
	const char *val, *runs = NULL, *script = NULL;
	bool given = false, sandbox = false, opts = true;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char k;

		if (!opts || a[0] != '-' || !a[1]) {
			if (!given && !script)
				script = a; /* the first operand, unless -e/-f */
			else if (jr_check_path_arg(w, a))
				return true;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			opts = false;
			continue;
		}
		k = jr_opt_at("e=f<l:i?", longs, argc, argv, &i, &val);
		given |= k == '=' || k == '<';
		sandbox |= k == '~';
		if (k == '=' && val && jr_sed_runs_code(val))
			runs = val;
		if (k == '<' && val && jr_fd_program(w, val))
			return jr_deny(w, "inline-code",
				       "sed script read from a pipe or here-document (%s -f %s)",
				       shown, val);
		if (k == '<' && val && jr_check_path_arg(w, val))
			return true;
	}
	if (!given && script && jr_sed_runs_code(script))
		runs = script;
	if (given && script && jr_check_path_arg(w, script))
		return true;
	if (runs && !sandbox)
		return jr_deny(w, "inline-code", "sed script runs a command with e (%s '%s')",
			       shown, runs);
	return false;
}

/* tar options that run a program through sh -c (GNU tar's xexec), also in a
 * short cluster (-I, -F) and in the old-style first word (tar xIf ...). */
bool jr_check_tar(struct walk *w, const char *shown, int argc, char *const argv[])
{
	static const char *const longs[] = {"to-command=",
					    "use-compress-program=",
					    "info-script=",
					    "new-volume-script=",
					    "rsh-command=",
					    "rmt-command=",
					    "checkpoint-action:",
					    "checkpoint",
					    NULL};

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *a = argv[i], *val;
		char k;

		if (a[0] == '-' && a[1] == '-') {
			k = jr_opt_at("", longs, argc, argv, &i, &val);
			if (k == '=' || (k == ':' && val && strncmp(val, "exec=", 5) == 0))
				return jr_deny(w, "inline-code", "%s runs a command (%s)", shown,
					       a);
			continue;
		}
		if (a[0] != '-' && i > 1)
			continue;
		for (int j = a[0] == '-'; a[j]; j++) {
			if (a[j] == 'I' || a[j] == 'F')
				return jr_deny(w, "inline-code",
					       "%s runs a command (%s, option %c)", shown, a, a[j]);
			if (a[0] == '-' && strchr("bCfgHKLNTVX", a[j]))
				break; /* the rest is that option's value */
		}
	}
	return jr_check_paths(w, 1, argc, argv);
}

/* pwsh [-NoProfile] [-Command STRING | -File SCRIPT ARGS...] */
bool jr_check_pwsh(struct walk *w, const char *shown, int argc, char *const argv[])
{
	for (int i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		int k = jr_pwsh_param(argv[i]);

		if (k == JR_PWSH_INLINE)
			return jr_deny(w, "inline-code", "interpreter inline code (%s %s)", shown,
				       argv[i]);
		if (k == JR_PWSH_FILE)
			break; /* the script and its arguments follow */
		if (k == JR_PWSH_VALUE && !strchr(argv[i], ':'))
			i++;
	}
	return jr_check_paths(w, 1, argc, argv);
}

/* ---- sqlite3 (the command-line shell) ---- */

/* Is @w (@n bytes) an abbreviation of dot-command @cmd, at least 2 bytes? */
static bool dot_is(const char *w, size_t n, const char *cmd)
{
	return n >= 2 && abbrev(w, n, cmd, 2);
}

/* One line of sqlite3 text. */
static const char *sqlite_line(const char *s, size_t len)
{
	const char *end = s + len;
	char low[512];
	size_t n;

	s += strspn(s, " \t");
	len = (size_t)(end - s);
	if (*s == '.') {
		const char *w = s + 1, *arg;

		n = strcspn(w, " \t\n");
		if (dot_is(w, n, "shell") || dot_is(w, n, "system"))
			return "shell command";
		if (dot_is(w, n, "load"))
			return "extension loaded";
		for (arg = w + n; arg < end && *arg; arg += strcspn(arg, " \t\n")) {
			arg += strspn(arg, " \t'\"");
			if (*arg == '|')
				return "'|' command pipe";
		}
		return NULL;
	}
	/* SQL: edit(TEXT, EDITOR) runs EDITOR; load_extension() loads code */
	n = len < sizeof(low) - 1 ? len : sizeof(low) - 1;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[n] = '\0';
	if (calls_fn(low, "edit") || calls_fn(low, "load_extension"))
		return "SQL function that runs a program";
	return NULL;
}

const char *jr_sqlite_runs_code(const char *text)
{
	for (const char *s = text; *s;) {
		size_t len = strcspn(s, "\n");
		const char *what = sqlite_line(s, len);

		if (what)
			return what;
		s += len + (s[len] == '\n');
	}
	return NULL;
}

bool jr_check_sqlite(struct walk *w, const char *shown, int argc, char *const argv[])
{
	static const char *const one[] = {"cmd",   "init",	"maxsize",   "mmap", "newline",
					  "nonce", "nullvalue", "separator", "vfs",  NULL};
	static const char *const two[] = {"lookaside", "pagecache", "heap", NULL};
	const char *what;
	int operands = 0;
	bool sql = false, safe = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *o = a + 1 + (a[1] == '-');
		bool is_cmd = !strcmp(o, "cmd");

		if (a[0] != '-' || !a[1]) {
			if (operands++ == 0) { /* the database */
				if (jr_check_path_arg(w, a))
					return true;
				continue;
			}
			sql = true;
			if (!safe && (what = jr_sqlite_runs_code(a)))
				return jr_deny(w, "inline-code",
					       "sqlite3 text runs a program: %s (%s)", what, shown);
			continue;
		}
		safe |= !strcmp(o, "safe");
		for (const char *const *v = one; *v; v++)
			if (!strcmp(o, *v) && i + 1 < argc) {
				i++;
				if (is_cmd && !safe && (what = jr_sqlite_runs_code(argv[i])))
					return jr_deny(w, "inline-code",
						       "sqlite3 text runs a program: %s (%s -cmd)",
						       what, shown);
				if (!strcmp(o, "init") && jr_fd_program(w, argv[i]))
					return jr_deny(w, "inline-code",
						       "sqlite3 reads commands from a pipe or "
						       "here-document (%s -init)",
						       shown);
			}
		for (const char *const *v = two; *v; v++)
			if (!strcmp(o, *v))
				i += 2;
		if (!strcmp(o, "A") || !strcmp(o, "archive"))
			return jr_check_paths(w, i + 1, argc, argv);
	}
	if (!sql && !safe && w->stdin_text)
		return jr_deny(w, "inline-code",
			       "sqlite3 reads commands from a pipe or here-document (%s)", shown);
	return false;
}
