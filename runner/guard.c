/* SPDX-License-Identifier: MIT */
/*
 * Guardrails: pure checks of a request, decided before any process is
 * spawned. They make the common failure modes loud (the seed's list: sudo,
 * rm -rf, chmod -R 777, python3 -c, ../../etc/passwd...) and name the rule
 * that refused. They are not the wall: a determined program gets past any
 * name list, which is why sandbox.c exists (threat model, invariant 10).
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
 *  - Path arguments outside the view are refused, except the jail's private
 *    /tmp and the harmless /dev nodes (/dev/null...), which exist only inside.
 *  - Shell mode (--shell) is best effort: the string is split into simple
 *    commands (lists, pipelines, $(...), `...`, redirections, keywords) and
 *    each is checked; variables and globs are not expanded.
 *  - Any allocation failure refuses (fail closed).
 */
#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "jailrun.h"

#define MAX_DEPTH 8

const char *const jr_default_denylist[] = {
	"rm",	  "sudo",   "su",	"doas",	    "pkexec",	"runuser", "mkfs*",
	"mke2fs", "mkswap", "wipefs",	"dd",	    "shred",	"mount",   "umount",
	"reboot", "halt",   "poweroff", "shutdown", "killall5", NULL,
};

/* A binary found in the jail's PATH whose copies we recognise. */
struct jr_ident {
	char name[NAME_MAX + 1]; /* stripped name, e.g. "rm", "python" */
	char host[PATH_MAX];
	off_t size;
};

struct interp {
	const char *name;      /* stripped basename */
	bool shell;	       /* a POSIX-ish shell: -c allowed with --shell */
	const char *inline_sh; /* short flags that run inline code */
	const char *arg_sh;    /* short flags that take a separate argument */
	const char *const *inline_long;
	const char *const *arg_long;
	const char *stop_sh; /* short flags after which the rest is not ours (python -m) */
};

static const char *const long_eval[] = {"eval", "command", "print", "require", "exec", NULL};
static const char *const long_none[] = {NULL};
static const char *const long_sh_arg[] = {"rcfile", "init-file", NULL};
static const char *const long_node_arg[] = {"input-type",	   "loader", "import", "conditions",
					    "experimental-loader", "title",  NULL};

/* The issue's list: sh bash dash zsh ksh fish python* node deno perl* ruby*
 * php* lua* Rscript osascript, plus close relatives. Inline flags: -c -e -E
 * -r --eval --command everywhere; node -p/--print, php -B/-R as well. */
static const struct interp interps[] = {
	{"sh", true, "ceEr", "oO", long_eval, long_sh_arg, ""},
	{"bash", true, "ceEr", "oO", long_eval, long_sh_arg, ""},
	{"dash", true, "ceEr", "oO", long_eval, long_sh_arg, ""},
	{"ash", true, "ceEr", "oO", long_eval, long_sh_arg, ""},
	{"zsh", true, "ceEr", "oO", long_eval, long_sh_arg, ""},
	{"ksh", true, "ceEr", "oO", long_eval, long_sh_arg, ""},
	{"mksh", true, "ceEr", "oO", long_eval, long_sh_arg, ""},
	{"fish", true, "ceEr", "oO", long_eval, long_sh_arg, ""},
	{"python", false, "ceEr", "WXQ", long_eval, long_none, "m"},
	{"pypy", false, "ceEr", "WXQ", long_eval, long_none, "m"},
	{"node", false, "ceErp", "C", long_eval, long_node_arg, ""},
	{"nodejs", false, "ceErp", "C", long_eval, long_node_arg, ""},
	{"deno", false, "ceEr", "", long_eval, long_none, ""},
	{"bun", false, "ceErp", "", long_eval, long_none, ""},
	{"perl", false, "ceEr", "I", long_eval, long_none, ""},
	{"ruby", false, "ceEr", "ICX", long_eval, long_none, ""},
	{"irb", false, "ceEr", "I", long_eval, long_none, ""},
	{"php", false, "ceErBR", "dz", long_eval, long_none, ""},
	{"lua", false, "ceEr", "l", long_eval, long_none, ""},
	{"luajit", false, "ceEr", "lj", long_eval, long_none, ""},
	{"Rscript", false, "ceEr", "", long_eval, long_none, ""},
	{"R", false, "ceEr", "", long_eval, long_none, ""},
	{"osascript", false, "ceEr", "ls", long_eval, long_none, ""},
	{"tclsh", false, "ceEr", "", long_eval, long_none, ""},
};

/* Wrappers that run their arguments after options (and positionals). */
struct wrapper {
	const char *name;
	const char *arg_sh;
	const char *const *arg_long;
	int positional; /* operands before the command (timeout DURATION) */
};

static const char *const wl_nice[] = {"adjustment", NULL};
static const char *const wl_timeout[] = {"signal", "kill-after", NULL};
static const char *const wl_stdbuf[] = {"input", "output", "error", NULL};
static const char *const wl_time[] = {"format", "output", NULL};
static const char *const wl_xargs[] = {"arg-file",  "delimiter", "max-lines",	     "max-args",
				       "max-procs", "max-chars", "process-slot-var", NULL};
static const char *const wl_strace[] = {"output", "trace", "signal", "attach", "user", "env", NULL};

static const struct wrapper wrappers[] = {
	{"nice", "n", wl_nice, 0},
	{"nohup", "", long_none, 0},
	{"timeout", "sk", wl_timeout, 1},
	{"stdbuf", "ioe", wl_stdbuf, 0},
	{"setsid", "", long_none, 0},
	{"time", "fo", wl_time, 0},
	{"xargs", "adEILnPs", wl_xargs, 0},
	{"ionice", "cn", long_none, 0},
	{"chrt", "", long_none, 1},
	{"taskset", "", long_none, 1},
	{"strace", "eoOpPsSuEXb", wl_strace, 0},
	{"ltrace", "eoOpPsSuEXnAa", wl_strace, 0},
	{"unbuffer", "", long_none, 0},
	{"catchsegv", "", long_none, 0},
	{"fakeroot", "", long_none, 0},
	{"chroot", "", long_none, 1},
	{"flock", "wEs", long_none, 1},
	{"script", "", long_none, 0},
};

struct walk {
	struct jr_guard *g;
	struct jr_verdict *v;
	const char *cwd;      /* may differ from g->cwd under env -C */
	const char *path_env; /* may differ under env PATH=... */
	int depth;
};

static bool check_cmd(struct walk *w, int argc, char *const argv[]);
static bool check_shell(struct walk *w, const char *s);

_printf_(3, 4) static bool deny(struct walk *w, const char *rule, const char *fmt, ...)
{
	va_list ap;

	w->v->denied = true;
	snprintf(w->v->rule, sizeof(w->v->rule), "%s", rule);
	va_start(ap, fmt);
	vsnprintf(w->v->reason, sizeof(w->v->reason), fmt, ap);
	va_end(ap);
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

/* The denylist pattern matching @name (raw or stripped), or NULL. */
static const char *denied_name(const struct jr_guard *g, const char *name)
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

/* ---- renamed copies ---- */

static int ident_add(struct jr_guard *g, const char *name, const char *host, off_t size)
{
	struct jr_ident *n;

	for (size_t i = 0; i < g->n_idents; i++)
		if (g->idents[i].size == size && strcmp(g->idents[i].name, name) == 0)
			return 0;
	n = realloc(g->idents, (g->n_idents + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	g->idents = n;
	n = &g->idents[g->n_idents++];
	snprintf(n->name, sizeof(n->name), "%s", name);
	snprintf(n->host, sizeof(n->host), "%s", host);
	n->size = size;
	return 0;
}

static int idents_scan_dir(struct jr_guard *g, const char *jdir)
{
	char hdir[PATH_MAX], host[PATH_MAX], s[NAME_MAX + 1];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;

	if (jdir[0] != '/' || jr_map(g->view, jdir, hdir, sizeof(hdir)) < 0)
		return 0;
	if (strncmp(jdir, g->view->project, strlen(g->view->project)) == 0)
		return 0; /* copies in the project are what we look for, not references */
	d = opendir(hdir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct stat st;

		jr_strip_version(de->d_name, s, sizeof(s));
		if (!denied_name(g, de->d_name) && !find_interp(de->d_name))
			continue;
		if ((size_t)snprintf(host, sizeof(host), "%s/%s", hdir, de->d_name) >= sizeof(host))
			continue;
		if (stat(host, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
			continue;
		if (ident_add(g, s, host, st.st_size) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int idents_build(struct jr_guard *g)
{
	const char *p = g->path_env ? g->path_env : "/bin:/usr/bin";
	char dir[PATH_MAX];

	if (g->idents_built)
		return 0;
	g->idents_built = true;
	for (;;) {
		size_t n = strcspn(p, ":");

		if (n < sizeof(dir)) {
			memcpy(dir, p, n);
			dir[n] = '\0';
			if (idents_scan_dir(g, dir) < 0)
				return -ENOMEM;
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	return 0;
}

static bool same_content(const char *a, const char *b)
{
	_cleanup_close_ int fa = open(a, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int fb = open(b, O_RDONLY | O_CLOEXEC);
	static char ba[65536], bb[65536];

	if (fa < 0 || fb < 0)
		return false;
	for (;;) {
		ssize_t na = read(fa, ba, sizeof(ba));
		ssize_t nb = read(fb, bb, sizeof(bb));

		if (na < 0 || nb < 0 || na != nb || memcmp(ba, bb, na) != 0)
			return false;
		if (na == 0)
			return true;
	}
}

/* If @jail (a resolved executable inside the project) is a copy of a known
 * binary, return that binary's stripped name. */
static const char *copy_of(struct walk *w, const char *jail)
{
	char host[PATH_MAX];
	struct stat st;

	if (strncmp(jail, w->g->view->project, strlen(w->g->view->project)) != 0)
		return NULL;
	if (jr_map(w->g->view, jail, host, sizeof(host)) < 0 || stat(host, &st) < 0)
		return NULL;
	if (idents_build(w->g) < 0)
		return "(out of memory)";
	for (size_t i = 0; i < w->g->n_idents; i++)
		if (w->g->idents[i].size == st.st_size && same_content(host, w->g->idents[i].host))
			return w->g->idents[i].name;
	return NULL;
}

/* ---- path arguments ---- */

static bool is_private_path(const char *p)
{
	static const char *const dev[] = {"/dev/null",	  "/dev/zero", "/dev/full",  "/dev/random",
					  "/dev/urandom", "/dev/tty",  "/dev/stdin", "/dev/stdout",
					  "/dev/stderr",  NULL};

	if (strcmp(p, "/tmp") == 0 || strncmp(p, "/tmp/", 5) == 0)
		return true;
	for (const char *const *d = dev; *d; d++)
		if (strcmp(p, *d) == 0)
			return true;
	return false;
}

static bool exists_in_jail(struct walk *w, const char *name)
{
	char jail[PATH_MAX], host[PATH_MAX];
	struct stat st;
	int r;

	if ((size_t)snprintf(jail, sizeof(jail), "%s/%s", strcmp(w->cwd, "/") ? w->cwd : "",
			     name) >= sizeof(jail))
		return false;
	r = jr_map(w->g->view, jail, host, sizeof(host));
	if (r == -EACCES)
		return true; /* DENIED in the source: let the classification speak */
	return r == 0 && lstat(host, &st) == 0;
}

/* Check one candidate path @p (already extracted from argument @arg). */
static bool check_path(struct walk *w, const char *arg, const char *p)
{
	const struct jr_view *v = w->g->view;
	char abs[PATH_MAX], host[PATH_MAX], rule[256];
	struct jf_canon *c = NULL;
	_cleanup_free_ struct jf_canon *cbuf = NULL;
	struct jf_verdict verdict;
	struct stat st;
	size_t plen = strlen(v->project);
	int r;

	if (p[0] == '~') {
		if (p[1] && p[1] != '/')
			return deny(w, "path-outside-view", "path '%s' names another user's home",
				    arg);
		if ((size_t)snprintf(abs, sizeof(abs), "%s%s", w->g->home, p + 1) >= sizeof(abs))
			return deny(w, "path-refused", "path '%s' is too long", arg);
		p = abs;
	}
	cbuf = c = malloc(sizeof(*c));
	if (!c)
		return deny(w, "internal", "out of memory");
	/* The policy library's string checks first (encodings, lookalikes, NUL,
	 * lengths); ".." and "outside" are judged after resolution below. */
	r = jf_canonicalize(v->project, NULL, p, strlen(p), c);
	if (r < 0 && c->refusal != JF_REFUSE_DOTDOT && c->refusal != JF_REFUSE_OUTSIDE_ROOT)
		return deny(w, "path-refused", "path '%s': %s", arg,
			    jf_refusal_message(c->refusal));
	if (jr_resolve(v, w->cwd, p, abs, NULL) < 0)
		return deny(w, "path-refused", "path '%s' cannot be resolved (symlink loop)", arg);
	if (strncmp(abs, v->project, plen) != 0 || (abs[plen] && abs[plen] != '/')) {
		/* the jail's own /tmp and /dev nodes, when named as such (an
		 * absolute spelling); "../../x" landing there still leaves the view.
		 * The project may itself live below /tmp: tested first, above. */
		if (p[0] == '/' && is_private_path(abs))
			return false;
		return deny(w, "path-outside-view", "path '%s' leaves the view (%s)", arg, abs);
	}
	r = jf_canonicalize(v->project, NULL, abs, strlen(abs), c);
	if (r < 0)
		return deny(w, "path-refused", "path '%s': %s", arg,
			    jf_refusal_message(c->refusal));
	/* classify on the raw source; through a view DENIED names do not exist */
	if ((size_t)snprintf(host, sizeof(host), "%s%s%s", v->host, c->len ? "/" : "", c->path) >=
	    sizeof(host))
		host[0] = '\0';
	jf_classify(v->policy, c->path, c->len, lstat(host, &st) == 0 && S_ISDIR(st.st_mode),
		    &verdict);
	if (verdict.zone == JF_DENIED) {
		jf_rule_format(verdict.rule, rule, sizeof(rule));
		return deny(w, "path-denied", "path '%s' is DENIED by the policy (%s: %s)", arg,
			    c->path, rule);
	}
	return false;
}

/* Does argument @a look like a path? Returns the candidate or NULL. */
static const char *path_candidate(struct walk *w, const char *a)
{
	const char *eq;

	if (a[0] == '-') {
		eq = strchr(a, '=');
		if (eq)
			a = eq + 1; /* --opt=value, -Dx=value */
		else if (a[1] != '-' && a[1] && a[2] && strchr(a + 2, '/'))
			return a + 2; /* -I../include, -o/tmp/x */
		else
			return NULL;
	}
	if (!*a)
		return NULL;
	if (strchr(a, '/') || a[0] == '~' || exists_in_jail(w, a))
		return a;
	return NULL;
}

static bool check_path_arg(struct walk *w, const char *a)
{
	const char *p = path_candidate(w, a);

	return p && check_path(w, a, p);
}

static bool check_paths(struct walk *w, int from, int to, char *const argv[])
{
	for (int i = from; i < to; i++)
		if (check_path_arg(w, argv[i]))
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
				return deny(w, "chmod-recursive",
					    "recursive chmod to a world-writable mode (%s -R %s)",
					    argv[0], argv[i]);
	}
	if ((strcmp(name, "chown") == 0 || strcmp(name, "chgrp") == 0) && is_recursive(argc, argv))
		return deny(w, "chown-recursive", "recursive %s (%s -R)", name, name);
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
				return deny(w, "mass-kill", "kill of every process (%s ... -1)",
					    argv[0]);
		}
	}
	return false;
}

/* ---- interpreters ---- */

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

		if (str_in(in->inline_long, a + 2, n))
			return 1;
		if (!a[2 + n] && str_in(in->arg_long, a + 2, n) && *i + 1 < argc)
			(*i)++;
		return 0;
	}
	for (int j = 1; a[j]; j++) {
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
 * @i) is checked as a shell command. */
static bool check_shell_operand(struct walk *w, int argc, char *const argv[], int i)
{
	for (int k = i + 1; k < argc; k++)
		if (argv[k][0] != '-' && argv[k][0] != '+')
			return check_shell(w, argv[k]);
	return false;
}

static bool check_interp(struct walk *w, const struct interp *in, const char *shown, int argc,
			 char *const argv[])
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int at = i, k;

		if (strcmp(a, "--") == 0 || a[0] != '-' || !a[1])
			break; /* the script, stdin, or the end of options */
		k = interp_option(in, argc, argv, &i);
		if (k < 0)
			return false;
		if (k == 0)
			continue;
		if (in->shell && w->g->shell)
			return check_shell_operand(w, argc, argv, at);
		return deny(w, "inline-code", "interpreter inline code (%s %s)", shown, a);
	}
	if (strcmp(in->name, "deno") == 0 && argc > 1 && strcmp(argv[1], "eval") == 0)
		return deny(w, "inline-code", "interpreter inline code (%s eval)", shown);
	return false;
}

/* ---- wrappers ---- */

static int skip_options(int argc, char *const argv[], int i, const char *arg_sh,
			const char *const *arg_long)
{
	while (i < argc) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0)
			return i + 1;
		if (a[0] != '-' || !a[1])
			return i;
		if (a[1] == '-') {
			size_t n = strcspn(a + 2, "=");

			i += (!a[2 + n] && str_in(arg_long, a + 2, n)) ? 2 : 1;
			continue;
		}
		for (int j = 1; a[j]; j++)
			if (strchr(arg_sh, a[j])) {
				if (!a[j + 1])
					i++;
				break;
			}
		i++;
	}
	return i;
}

/* Split like env -S: whitespace separates, '...' and "..." quote, \ escapes. */
static char **split_words(const char *s, int *count)
{
	size_t cap = strlen(s) + 1;
	char **words = calloc(cap + 1, sizeof(char *));
	char *buf = malloc(cap), *o = buf;
	int n = 0;

	if (!words || !buf) {
		free(words);
		free(buf);
		return NULL;
	}
	while (*s) {
		char q = 0;

		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		words[n++] = o;
		for (; *s && (q || !(*s == ' ' || *s == '\t' || *s == '\n')); s++) {
			if (q && *s == q)
				q = 0;
			else if (!q && (*s == '\'' || *s == '"'))
				q = *s;
			else if (*s == '\\' && s[1] && q != '\'')
				*o++ = *++s;
			else
				*o++ = *s;
		}
		*o++ = '\0';
	}
	words[n] = NULL;
	*count = n;
	if (n == 0)
		free(buf);
	return words;
}

static void free_words(char **words, int n)
{
	if (words && n > 0)
		free(words[0]);
	free(words);
}

/* One env option at argv[*i]: sets *split for -S/--split-string, *dir for
 * -C/--chdir; a separate value advances *i. */
static void env_option(int argc, char *const argv[], int *i, const char **split, const char **dir)
{
	static const char *const longs[] = {"split-string", "chdir", "unset"};
	const char *a = argv[*i], *v;

	if (a[1] == '-') {
		for (size_t k = 0; k < ARRAY_SIZE(longs); k++) {
			size_t n = strlen(longs[k]);

			if (strncmp(a + 2, longs[k], n) != 0 || (a[2 + n] && a[2 + n] != '='))
				continue;
			v = a[2 + n] ? a + 3 + n : (*i + 1 < argc ? argv[++*i] : "");
			if (k == 0)
				*split = v;
			else if (k == 1)
				*dir = v;
			return;
		}
		return; /* --ignore-environment, --null, --debug, signal options */
	}
	for (int j = 1; a[j]; j++) {
		if (!strchr("uCS", a[j]))
			continue;
		v = a[j + 1] ? a + j + 1 : (*i + 1 < argc ? argv[++*i] : "");
		if (a[j] == 'S')
			*split = v;
		else if (a[j] == 'C')
			*dir = v;
		return;
	}
}

static bool check_env(struct walk *w, int argc, char *const argv[]);

/* env -S STRING: the words replace the option and the rest follows. */
static bool check_env_split(struct walk *w, int argc, char *const argv[], int i, const char *split)
{
	int n = 0, total;
	char **words = split_words(split, &n);
	char **nargv;
	bool r;

	if (!words)
		return deny(w, "internal", "out of memory");
	total = 1 + n + (argc - i - 1);
	nargv = calloc(total + 1, sizeof(char *));
	if (!nargv) {
		free_words(words, n);
		return deny(w, "internal", "out of memory");
	}
	nargv[0] = argv[0];
	memcpy(nargv + 1, words, n * sizeof(char *));
	memcpy(nargv + 1 + n, argv + i + 1, (argc - i - 1) * sizeof(char *));
	w->depth++;
	r = w->depth > MAX_DEPTH ? deny(w, "nesting", "wrappers nested too deep")
				 : check_env(w, total, nargv);
	free(nargv);
	free_words(words, n);
	return r;
}

/* env [OPTION]... [-] [NAME=VALUE]... [COMMAND [ARG]...] */
static bool check_env(struct walk *w, int argc, char *const argv[])
{
	struct walk inner = *w;
	char cwd[PATH_MAX];
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *split = NULL, *dir = NULL;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1]) {
			if (a[0] == '-')
				continue; /* "-": same as -i */
			if (!strchr(a, '='))
				break; /* the command */
			if (strncmp(a, "PATH=", 5) == 0)
				inner.path_env = a + 5; /* the command is looked up there */
			continue;
		}
		env_option(argc, argv, &i, &split, &dir);
		if (dir) {
			if (check_path_arg(w, dir))
				return true;
			if (jr_resolve(w->g->view, inner.cwd, dir, cwd, NULL) < 0)
				return deny(w, "path-refused", "env -C '%s' cannot be resolved",
					    dir);
			inner.cwd = cwd;
		}
		if (split)
			return check_env_split(&inner, argc, argv, i, split);
	}
	if (i >= argc)
		return false;
	inner.depth++;
	return check_cmd(&inner, argc - i, argv + i);
}

/* find PATH... EXPR: -exec/-execdir/-ok/-okdir CMD ... ; or +, and -delete */
static bool check_find(struct walk *w, int argc, char *const argv[])
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-delete") == 0)
			return deny(w, "find-delete", "find -delete");
		if (strcmp(a, "-exec") == 0 || strcmp(a, "-execdir") == 0 ||
		    strcmp(a, "-ok") == 0 || strcmp(a, "-okdir") == 0) {
			int s = ++i;
			struct walk inner = *w;

			while (i < argc && strcmp(argv[i], ";") != 0 && strcmp(argv[i], "+") != 0)
				i++;
			if (i == s)
				continue;
			inner.depth++;
			if (check_cmd(&inner, i - s, argv + s))
				return true;
			continue;
		}
		if (check_path_arg(w, a))
			return true;
	}
	return false;
}

/* git -c KEY=VALUE: configuration that makes git run a program. */
static bool git_config_runs_code(const char *kv)
{
	static const char *const keys[] = {
		"core.fsmonitor",
		"core.sshcommand",
		"core.pager",
		"core.editor",
		"core.askpass",
		"core.hookspath",
		"core.gitproxy",
		"diff.external",
		"sequence.editor",
		"gpg.program",
		"gpg.*.program",
		"credential.helper",
		"credential.*.helper",
		"filter.*.clean",
		"filter.*.smudge",
		"filter.*.process",
		"diff.*.textconv",
		"diff.*.command",
		"merge.*.driver",
		"pager.*",
		"uploadpack.packobjectshook",
		"remote.*.uploadpack",
		"remote.*.receivepack",
		"include.path",
		"includeif.*.path",
		"protocol.ext.allow",
		"alias.*",
		NULL,
	};
	char key[256];
	size_t n = strcspn(kv, "=");

	if (n >= sizeof(key))
		return true;
	for (size_t i = 0; i < n; i++)
		key[i] = tolower((unsigned char)kv[i]);
	key[n] = '\0';
	if (n > 6 && memcmp(key, "alias.", 6) == 0) {
		const char *val = kv[n] ? kv + n + 1 : "";

		return val[strspn(val, " \t")] == '!';
	}
	for (const char *const *k = keys; *k; k++)
		if (fnmatch(*k, key, 0) == 0)
			return true;
	return false;
}

static bool check_git(struct walk *w, int argc, char *const argv[])
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if ((strcmp(a, "-c") == 0 && i + 1 < argc) || strncmp(a, "--config-env", 12) == 0) {
			const char *kv = a[1] == 'c'	? argv[++i]
					 : a[12] == '=' ? a + 13
							: (i + 1 < argc ? argv[++i] : "");

			if (a[1] != 'c' && strncasecmp(kv, "alias.", 6) == 0)
				return deny(w, "git-config", "git %s %s", a, kv);
			if (git_config_runs_code(kv))
				return deny(w,
					    strncasecmp(kv, "alias.", 6) == 0 ? "git-alias"
									      : "git-config",
					    "git -c %s runs a program", kv);
			continue;
		}
		if (check_path_arg(w, a))
			return true;
	}
	return false;
}

static bool is_loader(const char *name)
{
	return fnmatch("ld-linux*.so*", name, 0) == 0 || fnmatch("ld64.so*", name, 0) == 0 ||
	       fnmatch("ld-musl-*.so*", name, 0) == 0 || strcmp(name, "ld.so") == 0;
}

static bool check_loader(struct walk *w, int argc, char *const argv[])
{
	static const char *const arg_long[] = {
		"library-path",		"inhibit-rpath",     "audit", "preload", "argv0",
		"glibc-hwcaps-prepend", "glibc-hwcaps-mask", NULL};
	int i = skip_options(argc, argv, 1, "", arg_long);
	struct walk inner = *w;

	inner.depth++;
	if (i < argc && check_cmd(&inner, argc - i, argv + i))
		return true;
	return check_paths(w, 1, i, argv);
}

static const struct wrapper *find_wrapper(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(wrappers); i++)
		if (strcmp(wrappers[i].name, name) == 0)
			return &wrappers[i];
	return NULL;
}

static bool check_wrapper(struct walk *w, const struct wrapper *wr, const char *shown, int argc,
			  char *const argv[])
{
	int i = skip_options(argc, argv, 1, wr->arg_sh, wr->arg_long);

	/* flock -c CMD and script -c CMD run a shell command */
	if ((strcmp(wr->name, "flock") == 0 || strcmp(wr->name, "script") == 0)) {
		for (int k = 1; k < argc; k++)
			if (strcmp(argv[k], "-c") == 0 || strcmp(argv[k], "--command") == 0) {
				if (!w->g->shell)
					return deny(w, "inline-code", "shell command via %s -c",
						    shown);
				return k + 1 < argc && check_shell(w, argv[k + 1]);
			}
		if (strcmp(wr->name, "script") == 0)
			return false;
	}
	struct walk inner = *w;

	inner.depth++;
	if (i + wr->positional < argc &&
	    check_cmd(&inner, argc - i - wr->positional, argv + i + wr->positional))
		return true;
	return check_paths(w, 1, i, argv);
}

/* Shell builtins and exec-like words that run their operand. */
static bool check_builtin(struct walk *w, const char *name, int argc, char *const argv[],
			  bool *handled)
{
	int i = 1;

	*handled = true;
	if (strcmp(name, "command") == 0 || strcmp(name, "builtin") == 0) {
		for (; i < argc && argv[i][0] == '-'; i++)
			if (strchr(argv[i], 'v') || strchr(argv[i], 'V'))
				return false; /* a lookup, runs nothing */
	} else if (strcmp(name, "exec") == 0) {
		for (; i < argc && argv[i][0] == '-'; i++)
			if (strcmp(argv[i], "-a") == 0)
				i++;
	} else if (strcmp(name, "eval") == 0 || strcmp(name, "watch") == 0) {
		size_t len = 1;
		_cleanup_free_ char *s = NULL;

		if (strcmp(name, "watch") == 0)
			i = skip_options(argc, argv, 1, "nd", long_none);
		for (int k = i; k < argc; k++)
			len += strlen(argv[k]) + 1;
		s = calloc(len, 1);
		if (!s)
			return deny(w, "internal", "out of memory");
		for (int k = i; k < argc; k++) {
			strcat(s, argv[k]);
			strcat(s, " ");
		}
		if (!w->g->shell)
			return deny(w, "inline-code", "shell command via %s", name);
		return check_shell(w, s);
	} else {
		*handled = false;
		return false;
	}
	if (i >= argc)
		return false;
	w->depth++;
	return check_cmd(w, argc - i, argv + i);
}

/* ---- one simple command ---- */

static bool check_names(struct walk *w, const char *typed, const char *resolved,
			const struct jr_chain *chain, const char **family)
{
	const char *pat, *copy;

	if ((pat = denied_name(w->g, typed)))
		return deny(w, "exec-denylist", "denied executable %s%s%s", typed,
			    resolved ? " -> " : "", resolved ? resolved : "");
	for (int i = 0; chain && i < chain->n; i++) {
		if ((pat = denied_name(w->g, chain->name[i])))
			return deny(w, "exec-denylist", "denied executable %s (%s -> %s)",
				    chain->name[i], typed, resolved);
		if (!*family && (find_interp(chain->name[i]) || find_wrapper(chain->name[i])))
			*family = chain->name[i];
	}
	if (resolved && (copy = copy_of(w, resolved))) {
		if (!find_interp(copy) && !allowed(w->g, copy))
			return deny(w, "exec-copy", "renamed copy of denied executable %s (%s)",
				    copy, resolved);
		*family = copy;
	}
	return false;
}

static bool check_cmd(struct walk *w, int argc, char *const argv[])
{
	char resolved[PATH_MAX], stripped[NAME_MAX + 1];
	const char *typed, *family = NULL;
	const struct interp *in;
	const struct wrapper *wr;
	struct jr_chain chain = {0};
	bool found, handled;

	if (argc <= 0 || !argv[0])
		return false;
	if (w->depth > MAX_DEPTH)
		return deny(w, "nesting", "wrappers nested too deep");
	typed = base_name(argv[0]);
	found = jr_find_exec(w->g->view, w->cwd, w->path_env, argv[0], resolved, &chain) == 0;
	if (check_names(w, typed, found ? resolved : NULL, found ? &chain : NULL, &family))
		return true;
	/* what the command is: the typed name unless it is unknown and the file
	 * it resolves to (symlink target, copy) is a known interpreter/wrapper */
	jr_strip_version(typed, stripped, sizeof(stripped));
	if (find_interp(typed) || find_wrapper(stripped) || !family)
		family = typed;
	jr_strip_version(family, stripped, sizeof(stripped));

	if (check_special(w, stripped, argc, argv))
		return true;
	if ((in = find_interp(family)))
		return check_interp(w, in, typed, argc, argv) || check_paths(w, 1, argc, argv);
	if (strcmp(stripped, "env") == 0)
		return check_env(w, argc, argv);
	if (strcmp(stripped, "busybox") == 0 && argc > 1) {
		w->depth++;
		return argv[1][0] == '-' ? false : check_cmd(w, argc - 1, argv + 1);
	}
	if (strcmp(stripped, "find") == 0)
		return check_find(w, argc, argv);
	if (strcmp(stripped, "git") == 0)
		return check_git(w, argc, argv);
	if (is_loader(family))
		return check_loader(w, argc, argv);
	if ((wr = find_wrapper(stripped)))
		return check_wrapper(w, wr, typed, argc, argv);
	if (check_builtin(w, stripped, argc, argv, &handled) || handled)
		return w->v->denied;
	return check_paths(w, 1, argc, argv);
}

/* ---- shell strings ---- */

struct sh_cmd {
	char **words;
	int n, cap;
	char *redir[64]; /* redirection targets (paths) */
	int nredir;
};

static const char *const sh_keywords[] = {"if", "then", "else",	 "elif",  "fi",
					  "do", "done", "while", "until", "!",
					  "{",	"}",	"time",	 "esac",  NULL};

static void sh_clear(struct sh_cmd *c)
{
	for (int k = 0; k < c->n; k++)
		free(c->words[k]);
	for (int k = 0; k < c->nredir; k++)
		free(c->redir[k]);
	c->n = c->nredir = 0;
}

/* Check one simple command collected by check_shell, then forget it. */
static bool sh_run(struct walk *w, struct sh_cmd *c)
{
	int i = 0;
	bool r = false;

	for (int k = 0; k < c->nredir && !r; k++)
		r = check_path_arg(w, c->redir[k]);
	while (!r && i < c->n) {
		const char *a = c->words[i];
		size_t n = strcspn(a, "=");

		if (a[n] == '=' && n > 0 && (isalpha((unsigned char)a[0]) || a[0] == '_')) {
			i++; /* NAME=VALUE prefix */
			continue;
		}
		if (str_in(sh_keywords, a, strlen(a))) {
			i++;
			continue;
		}
		if (!strcmp(a, "for") || !strcmp(a, "case") || !strcmp(a, "select") ||
		    !strcmp(a, "[[") || !strcmp(a, "((") || !strcmp(a, "function"))
			break; /* only words, no command in this segment */
		if (!strcmp(a, ".") || !strcmp(a, "source")) {
			r = check_paths(w, i + 1, c->n, c->words);
			break;
		}
		r = check_cmd(w, c->n - i, c->words + i);
		break;
	}
	sh_clear(c);
	return r;
}

static int sh_push(struct sh_cmd *c, char *word, bool redir)
{
	if (redir) {
		if (c->nredir >= (int)ARRAY_SIZE(c->redir)) {
			free(word);
			return 0;
		}
		c->redir[c->nredir++] = word;
		return 0;
	}
	if (c->n + 1 >= c->cap) {
		int cap = c->cap ? c->cap * 2 : 16;
		char **nw = realloc(c->words, (cap + 1) * sizeof(char *));

		if (!nw)
			return -ENOMEM;
		c->words = nw;
		c->cap = cap;
	}
	c->words[c->n++] = word;
	c->words[c->n] = NULL;
	return 0;
}

/* Return the end of a $( ... ) starting after "$(", counting parens and
 * skipping quotes; *inner gets a copy of the inside. */
static const char *sh_subst_end(const char *s, char close, char **inner)
{
	const char *p = s;
	int depth = 1;
	char q = 0;

	for (; *p; p++) {
		if (q) {
			if (*p == q)
				q = 0;
			else if (*p == '\\' && q == '"' && p[1])
				p++;
			continue;
		}
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (close == ')' && (*p == '\'' || *p == '"')) {
			q = *p;
			continue;
		}
		if (close == ')' && *p == '(')
			depth++;
		else if (*p == close && --depth == 0)
			break;
	}
	*inner = strndup(s, p - s);
	return *p ? p + 1 : p;
}

/* The shell string lexer: words, quotes, operators, substitutions. */
struct sh_lex {
	struct walk *w; /* one level deeper than the caller's */
	const char *p;	/* next byte */
	char *word;	/* the word being built (3 x input + 8 bytes) */
	size_t wl;
	bool in_word, want_redir, skip_word;
	bool denied, oom;
	struct sh_cmd c;
};

static void lex_end_word(struct sh_lex *l)
{
	if (l->in_word) {
		char *d = strndup(l->word, l->wl);

		if (!d) {
			l->oom = true;
		} else if (l->skip_word) {
			free(d);
		} else if (sh_push(&l->c, d, l->want_redir) < 0) {
			free(d);
			l->oom = true;
		}
		l->want_redir = l->skip_word = false;
	}
	l->in_word = false;
	l->wl = 0;
}

/* $( ... ) or ` ... ` at l->p: the inside is a command of its own. */
static void lex_subst(struct sh_lex *l, bool in_word)
{
	bool dollar = *l->p == '$';
	char *sub = NULL;
	const char *e = sh_subst_end(l->p + (dollar ? 2 : 1), dollar ? ')' : '`', &sub);

	if (!sub) {
		l->oom = true;
		return;
	}
	l->denied = check_shell(l->w, sub);
	free(sub);
	if (in_word) {
		memcpy(l->word + l->wl, "$SUBST", 6); /* text unknown until run */
		l->wl += 6;
	}
	l->p = e;
}

static void lex_double_quote(struct sh_lex *l)
{
	for (l->p++; *l->p && *l->p != '"' && !l->denied && !l->oom;) {
		if (*l->p == '\\' && l->p[1]) {
			l->word[l->wl++] = l->p[1];
			l->p += 2;
		} else if ((*l->p == '$' && l->p[1] == '(') || *l->p == '`') {
			lex_subst(l, false);
		} else {
			l->word[l->wl++] = *l->p++;
		}
	}
	if (*l->p == '"')
		l->p++;
}

/* < > >> >| 2> &> <& >& << <<< : the next word is a path, a fd, or text. */
static void lex_redirect(struct sh_lex *l)
{
	const char *p = l->p;
	size_t digits = 0;

	while (digits < l->wl && l->word[digits] >= '0' && l->word[digits] <= '9')
		digits++;
	if (l->in_word && digits == l->wl) /* "2>": the word was a fd number */
		l->in_word = false, l->wl = 0;
	lex_end_word(l);
	if (*p == '&') /* &> FILE, &>> FILE */
		p++;
	if (p[0] == '<' && p[1] == '<') { /* heredoc delimiter or herestring */
		l->p = p + 2 + (p[2] == '<' || p[2] == '-');
		l->skip_word = true;
		return;
	}
	p++;
	if (*p == '>' || *p == '|')
		p++;
	if (*p == '&') { /* >&2, <&- */
		l->p = p + 1;
		l->skip_word = true;
		return;
	}
	l->p = p;
	l->want_redir = true;
}

static void lex_step(struct sh_lex *l)
{
	char ch = *l->p;

	if (ch == '#' && !l->in_word) {
		l->p += strcspn(l->p, "\n");
	} else if (ch == ' ' || ch == '\t') {
		lex_end_word(l);
		l->p++;
	} else if (ch == '<' || ch == '>' || (ch == '&' && l->p[1] == '>')) {
		lex_redirect(l);
	} else if (strchr(";&|\n()", ch)) {
		lex_end_word(l);
		if (!l->oom)
			l->denied = sh_run(l->w, &l->c);
		l->p++;
	} else if (ch == '\\' && l->p[1]) {
		l->in_word = true;
		if (l->p[1] != '\n')
			l->word[l->wl++] = l->p[1];
		l->p += 2;
	} else if (ch == '\'') {
		const char *e = strchrnul(l->p + 1, '\'');

		l->in_word = true;
		memcpy(l->word + l->wl, l->p + 1, e - l->p - 1);
		l->wl += e - l->p - 1;
		l->p = *e ? e + 1 : e;
	} else if ((ch == '$' && l->p[1] == '(') || ch == '`') {
		l->in_word = true;
		lex_subst(l, true);
	} else if (ch == '"') {
		l->in_word = true;
		lex_double_quote(l);
	} else {
		l->in_word = true;
		l->word[l->wl++] = *l->p++;
	}
}

static bool check_shell(struct walk *w, const char *s)
{
	struct walk inner = *w;
	struct sh_lex l = {.w = &inner, .p = s};

	if (++inner.depth > MAX_DEPTH)
		return deny(w, "nesting", "shell commands nested too deep");
	l.word = malloc(strlen(s) * 3 + 8); /* "``" (2 bytes) becomes "$SUBST" (6) */
	if (!l.word)
		return deny(w, "internal", "out of memory");
	while (*l.p && !l.denied && !l.oom)
		lex_step(&l);
	if (!l.denied && !l.oom) {
		lex_end_word(&l);
		if (!l.oom)
			l.denied = sh_run(&inner, &l.c);
	}
	sh_clear(&l.c);
	free(l.c.words);
	free(l.word);
	if (l.oom && !l.denied)
		return deny(w, "internal", "out of memory");
	return l.denied;
}

/* ---- entry points ---- */

static const char metachars[] = ";|&><`\n";

static bool find_exec_before(int argc, char *const argv[], int i)
{
	for (int k = 0; k < i && k < argc; k++)
		if (!strcmp(argv[k], "-exec") || !strcmp(argv[k], "-execdir") ||
		    !strcmp(argv[k], "-ok") || !strcmp(argv[k], "-okdir"))
			return true;
	return false;
}

int jr_guard_shell(struct jr_guard *g, const char *cmd, struct jr_verdict *out)
{
	struct walk w = {.g = g, .v = out, .cwd = g->cwd, .path_env = g->path_env};

	memset(out, 0, sizeof(*out));
	check_shell(&w, cmd);
	return 0;
}

int jr_guard_argv(struct jr_guard *g, int argc, char *const argv[], struct jr_verdict *out)
{
	struct walk w = {.g = g, .v = out, .cwd = g->cwd, .path_env = g->path_env};

	memset(out, 0, sizeof(*out));
	if (argc <= 0)
		return 0;
	if (g->shell) {
		size_t len = 1;
		_cleanup_free_ char *s = NULL;

		for (int i = 0; i < argc; i++)
			len += strlen(argv[i]) + 1;
		s = calloc(len, 1);
		if (!s)
			return -ENOMEM;
		for (int i = 0; i < argc; i++) {
			if (i)
				strcat(s, " ");
			strcat(s, argv[i]);
		}
		return jr_guard_shell(g, s, out);
	}
	/* the command's own rules first: they name the more useful rule */
	if (check_cmd(&w, argc, argv))
		return 0;
	for (int i = 0; i < argc; i++) {
		const char *m = strpbrk(argv[i], metachars);
		const char *d = strstr(argv[i], "$(");

		if (strcmp(argv[i], ";") == 0 && find_exec_before(argc, argv, i))
			continue; /* find ... -exec CMD {} ; is find's syntax, not a shell's */
		if (m || d) {
			char shown[8];

			if (m && *m == '\n')
				snprintf(shown, sizeof(shown), "newline");
			else
				snprintf(shown, sizeof(shown), "%s", m ? (char[]){*m, 0} : "$(");
			deny(&w, "metachar",
			     "shell metacharacter '%s' in argument %d without --shell", shown, i);
			return 0;
		}
	}
	return 0;
}

void jr_guard_release(struct jr_guard *g)
{
	free(g->idents);
	g->idents = NULL;
	g->n_idents = 0;
	g->idents_built = false;
}
