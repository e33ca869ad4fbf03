/* SPDX-License-Identifier: MIT */
/*
 * Guardrails: pure checks of a request, decided before any process is
 * spawned. They make the common failure modes loud (sudo, rm -rf,
 * chmod -R 777, python3 -c, ../../etc/passwd...) and name the rule
 * that refused. They are not the wall: a determined program gets past any
 * name list, which is why sandbox.c exists (docs/threat-model.md, invariant 10).
 *
 * Decisions documented here:
 *  - Names are compared after exec-style resolution (resolve.c), on every
 *    name met on the way (as typed, each symlink hop, the final file), raw
 *    and with the version suffix stripped (python3.11 -> python).
 *  - A renamed copy is recognised by content: an executable inside the
 *    project (the only place a copy can exist before the command runs) whose
 *    size equals a denied or interpreter binary found in the jail's PATH is
 *    compared byte for byte. Inode identity would not do: the view serves
 *    its own inode numbers and a copy has a new inode anyway. A modified copy
 *    (one byte appended) gets through; the wall holds it.
 *  - A path argument written from inside the project must stay in it; any
 *    other may name what the jail shows (the read-only system binds of
 *    resolve.c's table, [run] expose, and what the jail makes itself: its
 *    /proc, /tmp, /dev nodes). Paths the jail does not have are refused.
 *  - echo and printf arguments are text. In --shell strings the working
 *    directory follows cd, and here-document bodies are not commands.
 *  - Shell mode (--shell) is best effort: the string is split into simple
 *    commands (lists, pipelines, $(...), `...`, redirections, keywords) and
 *    each is checked; variables and globs are not expanded.
 *  - Any allocation failure refuses (fail closed).
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "guard-lang.h"
#include "guard-path.h"
#include "guard-shell.h"
#include "guard-tools.h"
#include "guard-walk.h"
#include "guard-wrap.h"
#include "guard.h"
#include "resolve.h"

const char *const jr_default_denylist[] = {
	"rm",	  "sudo",   "su",	"doas",	    "pkexec",	"runuser", "mkfs*",
	"mke2fs", "mkswap", "wipefs",	"dd",	    "shred",	"mount",   "umount",
	"reboot", "halt",   "poweroff", "shutdown", "killall5", NULL,
};

struct interp {
	const char *name;      /* stripped basename */
	bool shell;	       /* a POSIX-ish shell: -c allowed with --shell */
	const char *inline_sh; /* short flags that run inline code */
	const char *arg_sh;    /* short flags that take a separate argument */
	const char *const *inline_long;
	const char *const *arg_long;
	const char *stop_sh; /* short flags after which the rest is not ours (python -m) */
	unsigned flags;
	/* perl's short flags with an attached value, which may hide no other flag:
	 * -M -m -x -i -F take the rest of the word, -l and -0 digits, -d :MODULE */
	const char *val_sh;
};

enum {
	IN_PERMUTE = 1, /* options may follow operands (vim FILE -c CMD, make all --eval=X) */
	IN_PLUS = 2,	/* +CMD runs an editor command (vim), except +N and a lone + */
	IN_GETOPT = 4,	/* getopt_long: long options also match by prefix (make --ev=X) */
	IN_MAKE = 8,	/* -f/--file/--makefile FILE is the program (make) */
};

static const char *const long_eval[] = {"eval", "command", "print", "require", "exec", NULL};
static const char *const long_none[] = {NULL};
static const char *const long_sh_arg[] = {"rcfile", "init-file", NULL};
static const char *const long_vim[] = {"cmd", NULL};
static const char *const long_make[] = {"eval", NULL};
static const char *const long_node_arg[] = {"input-type",	   "loader", "import", "conditions",
					    "experimental-loader", "title",  NULL};

/* The issue's list: sh bash dash zsh ksh fish python* node deno perl* ruby*
 * php* lua* Rscript osascript, plus close relatives. Inline flags: -c -e -E
 * -r --eval --command everywhere; node -p/--print, php -B/-R as well. */
static const struct interp interps[] = {
	{"sh", true, "ceEr", "oO", long_eval, long_sh_arg, "", 0},
	{"bash", true, "ceEr", "oO", long_eval, long_sh_arg, "", 0},
	{"dash", true, "ceEr", "oO", long_eval, long_sh_arg, "", 0},
	{"ash", true, "ceEr", "oO", long_eval, long_sh_arg, "", 0},
	{"zsh", true, "ceEr", "oO", long_eval, long_sh_arg, "", 0},
	{"ksh", true, "ceEr", "oO", long_eval, long_sh_arg, "", 0},
	{"mksh", true, "ceEr", "oO", long_eval, long_sh_arg, "", 0},
	{"fish", true, "ceEr", "oO", long_eval, long_sh_arg, "", 0},
	{"python", false, "ceEr", "WXQ", long_eval, long_none, "m", 0},
	{"pypy", false, "ceEr", "WXQ", long_eval, long_none, "m", 0},
	{"node", false, "ceErp", "C", long_eval, long_node_arg, "", 0},
	{"nodejs", false, "ceErp", "C", long_eval, long_node_arg, "", 0},
	{"deno", false, "ceEr", "", long_eval, long_none, "", 0},
	{"bun", false, "ceErp", "", long_eval, long_none, "", 0},
	{"perl", false, "ceEr", "I", long_eval, long_none, "", 0, "MmxiFl0d"},
	{"ruby", false, "ceEr", "ICX", long_eval, long_none, "", 0},
	{"irb", false, "ceEr", "I", long_eval, long_none, "", 0},
	{"php", false, "ceErBR", "dz", long_eval, long_none, "", 0},
	{"lua", false, "ceEr", "l", long_eval, long_none, "", 0},
	{"luajit", false, "ceEr", "lj", long_eval, long_none, "", 0},
	{"Rscript", false, "ceEr", "", long_eval, long_none, "", 0},
	{"R", false, "ceEr", "", long_eval, long_none, "", 0},
	{"osascript", false, "ceEr", "ls", long_eval, long_none, "", 0},
	{"tclsh", false, "ceEr", "", long_eval, long_none, "", 0},
	/* editors: -c CMD, --cmd CMD and +CMD run Ex commands (:!rm, :py). These
	 * permute, so no option is taken to swallow the next word: at worst an
	 * odd value is refused, never hidden. */
	{"vim", false, "c", "", long_vim, long_none, "", IN_PERMUTE | IN_PLUS},
	{"vi", false, "c", "", long_vim, long_none, "", IN_PERMUTE | IN_PLUS},
	{"nvim", false, "c", "", long_vim, long_none, "", IN_PERMUTE | IN_PLUS},
	{"ex", false, "c", "", long_vim, long_none, "", IN_PERMUTE | IN_PLUS},
	{"view", false, "c", "", long_vim, long_none, "", IN_PERMUTE | IN_PLUS},
	{"vimdiff", false, "c", "", long_vim, long_none, "", IN_PERMUTE | IN_PLUS},
	{"gvim", false, "c", "", long_vim, long_none, "", IN_PERMUTE | IN_PLUS},
	{"rvim", false, "c", "", long_vim, long_none, "", IN_PERMUTE | IN_PLUS},
	/* make -E/--eval STRING is makefile text: $(shell ...) and recipes run */
	{"make", false, "E", "", long_make, long_none, "", IN_PERMUTE | IN_GETOPT | IN_MAKE},
	{"gmake", false, "E", "", long_make, long_none, "", IN_PERMUTE | IN_GETOPT | IN_MAKE},
};

/* jr_deny() by a rule that allow_exec @name lifts: note @name for the hint. */
static bool deny_subject(struct walk *w, const char *name)
{
	snprintf(w->v->subject, sizeof(w->v->subject), "%s", name);
	return true;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

void jr_strip_version(const char *name, char *out, size_t size)
{
	size_t n = strlen(name);

	/* trailing digits and dots ("3.11", "5.36"), then a dangling '-' or '.' */
	while (n > 1 && (isdigit((unsigned char)name[n - 1]) || name[n - 1] == '.'))
		n--;
	while (n > 1 && (name[n - 1] == '-' || name[n - 1] == '_'))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(out, name, n);
	out[n] = '\0';
}

static bool name_in(const char *const *list, const char *name)
{
	for (; list && *list; list++)
		if (fnmatch(*list, name, 0) == 0)
			return true;
	return false;
}

static bool allowed(const struct jr_guard *g, const char *name)
{
	char s[NAME_MAX + 1];

	jr_strip_version(name, s, sizeof(s));
	return name_in(g->allow, name) || name_in(g->allow, s);
}

const char *jr_denied_name(const struct jr_guard *g, const char *name)
{
	char s[NAME_MAX + 1];

	jr_strip_version(name, s, sizeof(s));
	for (const char **p = g->deny; p && *p; p++)
		if ((fnmatch(*p, name, 0) == 0 || fnmatch(*p, s, 0) == 0) && !allowed(g, name))
			return *p;
	return NULL;
}

static const struct interp *find_interp(const char *name)
{
	char s[NAME_MAX + 1];

	jr_strip_version(name, s, sizeof(s));
	for (size_t i = 0; i < ARRAY_SIZE(interps); i++)
		if (strcmp(interps[i].name, name) == 0 || strcmp(interps[i].name, s) == 0)
			return &interps[i];
	return NULL;
}

static bool str_in(const char *const *list, const char *s, size_t n)
{
	for (; *list; list++)
		if (strlen(*list) == n && strncmp(*list, s, n) == 0)
			return true;
	return false;
}

/* ---- argument shapes of particular commands ---- */

static bool has_short(const char *a, char c)
{
	return a[0] == '-' && a[1] != '-' && strchr(a + 1, c);
}

static bool is_recursive(int argc, char *const argv[])
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--recursive") == 0 || has_short(argv[i], 'R'))
			return true;
	}
	return false;
}

/* 777-style: the mode makes files writable by others (octal o+w, or a
 * symbolic clause granting w to o, a, or everyone). */
static bool world_writable(const char *m)
{
	if (m[0] >= '0' && m[0] <= '7' && strspn(m, "01234567") == strlen(m))
		return (m[strlen(m) - 1] - '0') & 2;
	for (const char *c = m; *c;) {
		size_t n = strcspn(c, ",");
		size_t who = strspn(c, "ugoa");
		bool others = who == 0 || memchr(c, 'o', who) || memchr(c, 'a', who);

		for (size_t i = who; i < n; i++)
			if ((c[i] == '+' || c[i] == '=') && others && memchr(c + i, 'w', n - i))
				return true;
		c += n + (c[n] == ',');
	}
	return false;
}

static bool check_special(struct walk *w, const char *name, int argc, char *const argv[])
{
	if (allowed(w->g, name))
		return false;
	if (strcmp(name, "chmod") == 0 && is_recursive(argc, argv)) {
		for (int i = 1; i < argc; i++)
			if ((argv[i][0] != '-' || argv[i][1] == 'w' || argv[i][1] == 'r' ||
			     argv[i][1] == 'x') &&
			    world_writable(argv[i][0] == '-' ? argv[i] + 1 : argv[i]))
				return jr_deny(w, "chmod-recursive",
					       "recursive chmod to a world-writable mode (%s -R "
					       "%s)",
					       argv[0], argv[i]) &&
				       deny_subject(w, name);
	}
	if ((strcmp(name, "chown") == 0 || strcmp(name, "chgrp") == 0) && is_recursive(argc, argv))
		return jr_deny(w, "chown-recursive", "recursive %s (%s -R)", name, name) &&
		       deny_subject(w, name);
	if (strcmp(name, "kill") == 0) {
		bool sig_seen = false;

		for (int i = 1; i < argc; i++) {
			const char *a = argv[i];

			if (strcmp(a, "--") == 0) {
				sig_seen = true;
				continue;
			}
			if (!sig_seen && (strcmp(a, "-s") == 0 || strcmp(a, "-n") == 0 ||
					  strcmp(a, "--signal") == 0)) {
				i++;
				sig_seen = true;
				continue;
			}
			if (!sig_seen && a[0] == '-' && a[1]) {
				sig_seen = true;
				continue;
			}
			if (strcmp(a, "-1") == 0)
				return jr_deny(w, "mass-kill", "kill of every process (%s ... -1)",
					       argv[0]) &&
				       deny_subject(w, name);
		}
	}
	return false;
}

/* ---- interpreters ---- */

/* perl -MMODULE=a,b becomes `use MODULE split(/,/, q{a,b});`: anything but a
 * module name and plain import words (a space, ';', parentheses) is code. */
static bool perl_module_plain(const char *m)
{
	m += *m == '-'; /* -M-MODULE: no MODULE */
	return m[strspn(
		       m,
		       "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:=,.+-/")] ==
	       '\0';
}

/* perl flag a[*j] with an attached value (struct interp, val_sh): 1 when the
 * value is code, 0 when it ends the word, -1 to read on after it (*j moved to
 * its last byte): -l and -0 take octal digits (-0x hex), -d a :MODULE. */
static int perl_value(const char *a, int *j)
{
	char c = a[*j];

	if (c == 'l' || c == '0') {
		if (c == '0' && a[*j + 1] == 'x')
			for (++*j; isxdigit((unsigned char)a[*j + 1]);)
				++*j;
		else
			while (a[*j + 1] >= '0' && a[*j + 1] <= '7')
				++*j;
		return -1;
	}
	if (c == 'd')
		return a[*j + 1] == ':' ? !perl_module_plain(a + *j + 2) : -1;
	return (c == 'M' || c == 'm') && !perl_module_plain(a + *j + 1);
}

/*
 * Look at the option at argv[*i] of interpreter @in: 1 when it runs inline
 * code, -1 when the rest of the line is not the interpreter's (python -m),
 * 0 otherwise; an option taking a separate value advances *i past it.
 */
static int interp_option(const struct interp *in, int argc, char *const argv[], int *i)
{
	const char *a = argv[*i];

	if (a[1] == '-') {
		size_t n = strcspn(a + 2, "=");

		if (str_in(in->inline_long, a + 2, n) ||
		    ((in->flags & IN_GETOPT) && n && jr_long_kind(in->inline_long, a + 2, n)))
			return 1;
		if (!a[2 + n] && str_in(in->arg_long, a + 2, n) && *i + 1 < argc)
			(*i)++;
		return 0;
	}
	for (int j = 1; a[j]; j++) {
		if (in->val_sh && strchr(in->val_sh, a[j])) {
			int k = perl_value(a, &j);

			if (k >= 0)
				return k;
			continue;
		}
		if (strchr(in->inline_sh, a[j]))
			return 1;
		if (strchr(in->stop_sh, a[j]))
			return -1;
		if (strchr(in->arg_sh, a[j])) {
			if (!a[j + 1] && *i + 1 < argc)
				(*i)++;
			return 0;
		}
	}
	return 0;
}

/* With --shell, `sh -c STRING`: STRING (the first operand after the flag at
 * @i) is checked as a shell command. Without one the string comes from
 * elsewhere (`xargs sh -c` reads it from stdin): refused. */
static bool check_shell_operand(struct walk *w, const char *shown, int argc, char *const argv[],
				int i)
{
	for (int k = i + 1; k < argc; k++)
		if (argv[k][0] != '-' && argv[k][0] != '+')
			return jr_check_shell(w, argv[k]);
	return jr_deny(w, "inline-code", "shell command from elsewhere (%s %s without a string)",
		       shown, argv[i]);
}

/* vim +CMD: an Ex command, except +N (a line) and a lone + (the last line). */
static bool plus_command(const char *a)
{
	return a[0] == '+' && a[1] && a[1 + strspn(a + 1, "0123456789")];
}

/* Does the interpreter read its program from text the string feeds it: no
 * script operand or sh -s with a pipe or here-document on stdin, or a script
 * that is stdin or a descriptor the string opened (jr_fd_program)? Editors
 * and make (IN_PERMUTE) read text or a makefile there. */
static bool program_from_stdin(const struct walk *w, const struct interp *in, int argc,
			       char *const argv[], int i, bool sh_s)
{
	if (in->flags & IN_PERMUTE)
		return false;
	return (w->stdin_text && (sh_s || i >= argc)) || (i < argc && jr_fd_program(w, argv[i]));
}

/* make -f FILE, -fFILE, --file=FILE, --makefile FILE at argv[i]: the value. */
static const char *make_file(int argc, char *const argv[], int i)
{
	const char *a = argv[i];

	if (a[1] != '-') {
		const char *f = strchr(a + 1, 'f');

		if (!f || strspn(a + 1, "BeiknqrRsStw") < (size_t)(f - a - 1))
			return NULL; /* f is not among the leading flags */
		return f[1] ? f + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
	}
	if (!strncmp(a, "--file=", 7) || !strncmp(a, "--makefile=", 11))
		return strchr(a, '=') + 1;
	if (!strcmp(a, "--file") || !strcmp(a, "--makefile"))
		return i + 1 < argc ? argv[i + 1] : NULL;
	return NULL;
}

static bool is_js(const char *name)
{
	return !strcmp(name, "node") || !strcmp(name, "nodejs") || !strcmp(name, "deno") ||
	       !strcmp(name, "bun");
}

bool jr_is_interp(const char *name)
{
	return find_interp(name) != NULL;
}

bool jr_runs_stdin_program(const char *name)
{
	const struct interp *in = find_interp(name);

	return in && !(in->flags & IN_PERMUTE);
}

static bool check_interp(struct walk *w, const struct interp *in, const char *shown, int argc,
			 char *const argv[])
{
	bool sh_s = false;
	const char *mf;
	int i;

	if (is_js(in->name) && jr_check_js(w, in->name, shown, argc, argv))
		return true;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		int at = i, k;

		if ((in->flags & IN_MAKE) && a[0] == '-' && (mf = make_file(argc, argv, i)) &&
		    jr_fd_program(w, mf))
			return jr_deny(w, "inline-code",
				       "makefile read from a pipe or here-document (%s -f %s)",
				       shown, mf);

		if (strcmp(a, "--") == 0) {
			i++;
			break; /* the end of options */
		}
		if ((in->flags & IN_PLUS) && plus_command(a))
			return jr_deny(w, "inline-code", "interpreter inline code (%s %s)", shown,
				       a);
		if (a[0] != '-' || !a[1]) {
			if (in->flags & IN_PERMUTE)
				continue; /* a file; options may follow */
			break;		  /* the script or stdin */
		}
		sh_s |= in->shell && has_short(a, 's');
		k = interp_option(in, argc, argv, &i);
		if (k < 0)
			return jr_check_pymodule(w, shown, argc, argv, at);
		if (k == 0)
			continue;
		if (in->shell && w->g->shell)
			return check_shell_operand(w, shown, argc, argv, at);
		return jr_deny(w, "inline-code", "interpreter inline code (%s %s)", shown, a);
	}
	if (strcmp(in->name, "deno") == 0 && argc > 1 && strcmp(argv[1], "eval") == 0)
		return jr_deny(w, "inline-code", "interpreter inline code (%s eval)", shown);
	if (program_from_stdin(w, in, argc, argv, i, sh_s))
		return jr_deny(w, "inline-code",
			       "interpreter reads its program from a pipe or here-document (%s)",
			       shown);
	return false;
}

/* Is @name (a basename as typed) in @list: a pattern matching it raw or
 * version-stripped, or an entry naming the same stripped name (python3 for
 * python3.12)? */
static bool inline_listed(const char *const *list, const char *name)
{
	char s[NAME_MAX + 1], e[NAME_MAX + 1];

	jr_strip_version(name, s, sizeof(s));
	for (; list && *list; list++) {
		jr_strip_version(*list, e, sizeof(e));
		if (!fnmatch(*list, name, 0) || !fnmatch(*list, s, 0) || !strcmp(e, s))
			return true;
	}
	return false;
}

/*
 * check_interp, and what lifts an inline-code refusal for the hint: a
 * language's -c/-e code runs when the caller names the interpreter in
 * allow_inline (--allow-inline, [run] allow_inline); a shell's -c string is
 * checked as a command line with --shell instead, never let through blind.
 */
static bool check_interp_named(struct walk *w, const struct interp *in, const char *typed, int argc,
			       char *const argv[])
{
	const char *name = base_name(typed);

	if (!in->shell && inline_listed(w->g->allow_inline, name))
		return false;
	if (!check_interp(w, in, typed, argc, argv))
		return false;
	if (strcmp(w->v->rule, "inline-code") == 0 && !w->v->interp[0] && !w->v->needs_shell) {
		if (in->shell)
			w->v->needs_shell = true;
		else
			snprintf(w->v->interp, sizeof(w->v->interp), "%s", name);
	}
	return true;
}

bool jr_check_shell_string(struct walk *w, const char *shown, const char *opt, const char *s)
{
	if (!w->g->shell)
		return jr_deny(w, "inline-code", "shell command via %s%s%s", shown, opt ? " " : "",
			       opt ? opt : "");
	return jr_check_shell(w, s);
}

/* Words @argv[0..@argc) joined with spaces, as watch and sg hand them to
 * sh -c. Returns a malloc'ed string, NULL when out of memory. */
static char *join_words(int argc, char *const argv[])
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(len, 1);
	for (int i = 0; s && i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static bool check_wrapper(struct walk *w, const struct wrapper *wr, const char *shown, int argc,
			  char *const argv[])
{
	struct walk inner = *w;
	struct wr_parse o;

	jr_wrapper_parse(wr, argc, argv, &o);
	if (o.dbg && strstr(o.dbg_opt, o.dbg)) /* attached: --eval-command=CMD */
		return jr_deny(w, "inline-code", "debugger command runs a program: %s (%s %s)",
			       o.dbg_what, shown, o.dbg_opt);
	if (o.dbg)
		return jr_deny(w, "inline-code", "debugger command runs a program: %s (%s %s '%s')",
			       o.dbg_what, shown, o.dbg_opt, o.dbg);
	if (o.shell)
		return jr_check_shell_string(w, shown, o.shell_opt, o.shell);
	inner.depth++;
	if (o.cmd < argc && (wr->flags & WR_SHELL_ARGS) && !o.direct) {
		_cleanup_free_ char *s = join_words(argc - o.cmd, argv + o.cmd);

		if (!s)
			return jr_deny(w, "internal", "out of memory");
		if (jr_check_shell_string(&inner, shown, NULL, s))
			return true;
	} else if (o.cmd < argc && jr_check_cmd(&inner, argc - o.cmd, argv + o.cmd)) {
		return true; /* the command's rules first: they name the more useful rule */
	}
	return jr_check_paths(w, 1, o.cmd, argv);
}

/* ---- one simple command ---- */

static bool check_names(struct walk *w, const char *typed, const char *resolved,
			const struct jr_chain *chain, const char **family)
{
	const char *pat, *copy;

	if ((pat = jr_denied_name(w->g, typed)))
		return jr_deny(w, "exec-denylist", "denied executable %s%s%s", typed,
			       resolved ? " -> " : "", resolved ? resolved : "") &&
		       deny_subject(w, typed);
	for (int i = 0; chain && i < chain->n; i++) {
		if ((pat = jr_denied_name(w->g, chain->name[i])))
			return jr_deny(w, "exec-denylist", "denied executable %s (%s -> %s)",
				       chain->name[i], typed, resolved) &&
			       deny_subject(w, chain->name[i]);
		if (!*family && (find_interp(chain->name[i]) || jr_find_wrapper(chain->name[i])))
			*family = chain->name[i];
	}
	if (resolved && (copy = jr_copy_of(w, resolved))) {
		if (!find_interp(copy) && !allowed(w->g, copy))
			return jr_deny(w, "exec-copy", "renamed copy of denied executable %s (%s)",
				       copy, resolved) &&
			       deny_subject(w, copy);
		*family = copy;
	}
	return false;
}

/* Commands whose arguments say what runs, by stripped name. */
static const struct {
	const char *name;
	bool (*check)(struct walk *w, const char *shown, int argc, char *const argv[]);
} checkers[] = {
	{"env", jr_check_env},
	{"find", jr_check_find},
	{"git", jr_check_git},
	{"awk", jr_check_awk},
	{"gawk", jr_check_awk},
	{"mawk", jr_check_awk},
	{"nawk", jr_check_awk},
	{"original-awk", jr_check_awk},
	{"sed", jr_check_sed},
	{"gsed", jr_check_sed},
	{"tar", jr_check_tar},
	{"gtar", jr_check_tar},
	{"pwsh", jr_check_pwsh},
	{"powershell", jr_check_pwsh},
	{"pwsh-preview", jr_check_pwsh},
	{"cmake", jr_check_cmake},
	{"sqlite", jr_check_sqlite},
	{"npx", jr_check_npm},
	{"npm", jr_check_npm},
	{"pnpm", jr_check_npm},
	{"yarn", jr_check_npm},
	{"ln", jr_check_copy},
	{"cp", jr_check_copy},
	{"install", jr_check_copy},
	{"link", jr_check_copy},
	/* shell builtins that set variables for the commands after them */
	{"export", jr_check_assigns},
	{"declare", jr_check_assigns},
	{"typeset", jr_check_assigns},
	{"readonly", jr_check_assigns},
	{"local", jr_check_assigns},
};

/* echo and printf print their arguments and open nothing: "// wip" or
 * "../x" there is text, not a path (where it goes is a redirection, which is
 * checked). */
static bool prints_its_arguments(const char *name)
{
	return strcmp(name, "echo") == 0 || strcmp(name, "printf") == 0;
}

/* The name the command goes by for the rules: the typed name unless it is
 * unknown and a file it resolves to (symlink target, copy) is a known
 * interpreter or wrapper. Writes it, version suffix stripped, to @stripped. */
static const char *command_family(const char *typed, const char *family, char *stripped)
{
	jr_strip_version(typed, stripped, NAME_MAX + 1);
	if (find_interp(typed) || jr_find_wrapper(stripped) || !family)
		family = typed;
	jr_strip_version(family, stripped, NAME_MAX + 1);
	return family;
}

bool jr_check_cmd(struct walk *w, int argc, char *const argv[])
{
	char resolved[PATH_MAX], stripped[NAME_MAX + 1];
	const char *typed, *family = NULL;
	const struct interp *in;
	const struct wrapper *wr;
	struct jr_chain chain = {0};
	bool found;

	if (argc <= 0 || !argv[0])
		return false;
	if (w->depth > MAX_DEPTH)
		return jr_deny(w, "nesting", "wrappers nested too deep");
	typed = base_name(argv[0]);
	found = jr_find_exec(w->g->view, w->cwd, w->path_env, argv[0], resolved, &chain) == 0;
	if (check_names(w, typed, found ? resolved : NULL, found ? &chain : NULL, &family))
		return true;
	family = command_family(typed, family, stripped);
	if (check_special(w, stripped, argc, argv))
		return true;
	if ((in = find_interp(family)))
		return check_interp_named(w, in, typed, argc, argv) ||
		       jr_check_paths(w, 1, argc, argv);
	for (size_t i = 0; i < ARRAY_SIZE(checkers); i++)
		if (strcmp(stripped, checkers[i].name) == 0)
			return checkers[i].check(w, typed, argc, argv);
	if (jr_is_loader(family))
		return check_wrapper(w, &jr_loader, typed, argc, argv);
	if ((wr = jr_find_wrapper(stripped)))
		return check_wrapper(w, wr, typed, argc, argv);
	if (prints_its_arguments(stripped))
		return false;
	return jr_check_paths(w, 1, argc, argv);
}

/* ---- entry points ---- */

static const char metachars[] = ";|&><`\n";

/* The environment the command gets from jailrun (--env, [run] env). */
static bool check_envp(struct walk *w)
{
	for (char *const *e = w->g->envp; e && *e; e++)
		if (jr_check_assign(w, *e))
			return true;
	return false;
}

int jr_guard_shell(struct jr_guard *g, const char *cmd, struct jr_verdict *out)
{
	struct walk w = {.g = g, .v = out, .cwd = g->cwd, .path_env = g->path_env};

	memset(out, 0, sizeof(*out));
	if (!check_envp(&w))
		jr_check_shell(&w, cmd);
	return 0;
}

/*
 * Argv mode runs the command without a shell, so metacharacters in its
 * arguments are text (rg 'a|b', git log '--format=%h <%ae>'); where a shell
 * does read them (sh -c, eval, watch, flock -c) that check already treats
 * the string as shell. Only a command word holding shell syntax is refused:
 * it names no program ('make && make test' as one word), and the caller
 * meant --shell.
 */
static bool check_metachars(struct walk *w, const char *cmd)
{
	const char *m = strpbrk(cmd, metachars);
	const char *d = strstr(cmd, "$(");
	char shown[8];

	if (!m && !d)
		return false;
	if (m && *m == '\n')
		snprintf(shown, sizeof(shown), "newline");
	else
		snprintf(shown, sizeof(shown), "%s", m ? (char[]){*m, 0} : "$(");
	return jr_deny(w, "metachar",
		       "shell metacharacter '%s' in the command name without --shell", shown);
}

int jr_guard_argv(struct jr_guard *g, int argc, char *const argv[], struct jr_verdict *out)
{
	struct walk w = {.g = g, .v = out, .cwd = g->cwd, .path_env = g->path_env};

	memset(out, 0, sizeof(*out));
	if (argc <= 0)
		return 0;
	if (g->shell) {
		_cleanup_free_ char *s = join_words(argc, argv);

		return s ? jr_guard_shell(g, s, out) : -ENOMEM;
	}
	/* the command's own rules first: they name the more useful rule */
	if (!check_envp(&w) && !jr_check_cmd(&w, argc, argv))
		check_metachars(&w, argv[0]);
	return 0;
}

void jr_guard_release(struct jr_guard *g)
{
	free(g->idents);
	g->idents = NULL;
	g->n_idents = 0;
	g->idents_built = false;
}
