/* SPDX-License-Identifier: MIT */
/*
 * Guardrails on path arguments: which arguments are paths, where they lead
 * in the jail (resolve.c), and whether that is allowed. A path written from
 * inside the project must stay in it ("../../etc/passwd", a symlink out of
 * the tree); any other may name what the jail shows: the system directories
 * and /etc entries it binds read-only (jf_system_dirs, jr_etc_entries: the
 * table sandbox.c builds the jail from, read through jr_map), [run] expose,
 * and what the jail makes itself (/, /proc, /tmp, /dev nodes). DENIED names
 * of the project are refused wherever the path came from.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "guard-path.h"
#include "guard-walk.h"
#include "policy.h"
#include "resolve.h"
#include "sysdirs.h"

/* Is @p (absolute, resolved) something the jail makes itself: the root, its
 * private /tmp and /dev/shm, the harmless /dev nodes, its own /proc (a fresh
 * proc of the jail's PID namespace; other processes' entries are refused)? */
static bool is_private_path(const char *p)
{
	static const char *const dev[] = {"/dev/null",	  "/dev/zero", "/dev/full",  "/dev/random",
					  "/dev/urandom", "/dev/tty",  "/dev/stdin", "/dev/stdout",
					  "/dev/stderr",  NULL};
	const char *pid;

	if (strcmp(p, "/") == 0 || jr_path_under(p, "/tmp") || jr_path_under(p, "/dev/shm"))
		return true;
	for (const char *const *d = dev; *d; d++)
		if (strcmp(p, *d) == 0)
			return true;
	if (!jr_path_under(p, "/proc"))
		return false;
	pid = p + strlen("/proc");
	pid += *pid == '/';
	return strspn(pid, "0123456789") != strcspn(pid, "/") || !*pid;
}

/* Does the jail show the path @abs (absolute, resolved, outside the project)
 * at all: what it makes itself, or what it binds read-only from the host
 * (jr_map: the system directories and /etc entries sandbox.c binds, and
 * [run] expose)? */
static bool jail_shows(const struct jr_view *v, const char *abs)
{
	char host[PATH_MAX];

	return is_private_path(abs) || jr_map(v, abs, host, sizeof(host)) == 0;
}

/* Does the path @p, as written, start in the project: relative to a working
 * directory inside it, or absolute and spelled below the project? Such a path
 * that resolves outside the project escapes it ("../../etc/passwd", a
 * symlink out of the tree). */
static bool starts_in_project(const struct walk *w, const char *p)
{
	return jr_path_under(p[0] == '/' ? p : w->cwd, w->g->view->project);
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
	int r;

	if (p[0] == '~') {
		if (p[1] && p[1] != '/')
			return jr_deny(w, "path-outside-view",
				       "path '%s' names another user's home", arg);
		if ((size_t)snprintf(abs, sizeof(abs), "%s%s", w->g->home, p + 1) >= sizeof(abs))
			return jr_deny(w, "path-refused", "path '%s' is too long", arg);
		p = abs;
	}
	cbuf = c = malloc(sizeof(*c));
	if (!c)
		return jr_deny(w, "internal", "out of memory");
	/* The policy library's string checks first (encodings, lookalikes, NUL,
	 * lengths); ".." and "outside" are judged after resolution below. */
	r = jf_canonicalize(v->project, NULL, p, strlen(p), c);
	if (r < 0 && c->refusal != JF_REFUSE_DOTDOT && c->refusal != JF_REFUSE_OUTSIDE_ROOT)
		return jr_deny(w, "path-refused", "path '%s': %s", arg,
			       jf_refusal_message(c->refusal));
	if (jr_resolve(v, w->cwd, p, abs, NULL) < 0)
		return jr_deny(w, "path-refused", "path '%s' cannot be resolved (symlink loop)",
			       arg);
	if (!jr_path_under(abs, v->project)) {
		/* Reading /usr/include or /proc/cpuinfo is what compilers do
		 * anyway; "../../x" out of the project is refused even where the
		 * jail shows x. The project may itself live below /tmp: tested
		 * first, above. */
		if (starts_in_project(w, p))
			return jr_deny(w, "path-outside-view", "path '%s' leaves the project (%s)",
				       arg, abs);
		if (jail_shows(v, abs))
			return false;
		return jr_deny(w, "path-outside-view",
			       "path '%s' is not in the jail (%s): outside the project it has only "
			       "the system directories, part of /etc, /proc, /tmp, /dev nodes "
			       "and [run] expose paths",
			       arg, abs);
	}
	r = jf_canonicalize(v->project, NULL, abs, strlen(abs), c);
	if (r < 0)
		return jr_deny(w, "path-refused", "path '%s': %s", arg,
			       jf_refusal_message(c->refusal));
	/* classify on the raw source; through a view DENIED names do not exist */
	if ((size_t)snprintf(host, sizeof(host), "%s%s%s", v->host, c->len ? "/" : "", c->path) >=
	    sizeof(host))
		host[0] = '\0';
	jf_classify(v->policy, c->path, c->len, lstat(host, &st) == 0 && S_ISDIR(st.st_mode),
		    &verdict);
	if (verdict.zone == JF_DENIED) {
		jf_rule_format(verdict.rule, rule, sizeof(rule));
		return jr_deny(w, "path-denied", "path '%s' is DENIED by the policy (%s: %s)", arg,
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

bool jr_check_path_arg(struct walk *w, const char *a)
{
	const char *p = path_candidate(w, a);

	return p && check_path(w, a, p);
}

bool jr_check_paths(struct walk *w, int from, int to, char *const argv[])
{
	for (int i = from; i < to; i++)
		if (jr_check_path_arg(w, argv[i]))
			return true;
	return false;
}

bool jr_fd_program(const struct walk *w, const char *p)
{
	static const char *const in[] = {
		"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/proc/thread-self/fd/0", NULL};
	static const char *const fds[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/",
					  NULL};

	for (const char *const *s = in; *s; s++)
		if (!strcmp(p, *s))
			return w->stdin_text;
	for (const char *const *s = fds; *s; s++)
		if (!strncmp(p, *s, strlen(*s)))
			return w->g->shell;
	return false;
}
