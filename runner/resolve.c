/* SPDX-License-Identifier: MIT */
/*
 * The jail's file namespace as jailrun sees it before anything runs, and
 * exec-style resolution inside it. The guardrails use this to decide on the
 * file a name would reach inside the jail (after PATH lookup, "..", symlinks
 * and /proc/self/root spellings), not on the string the agent wrote.
 *
 * Mapping (kept in step with sandbox.c, which builds the real thing):
 *   the project path         -> the view (mountpoint), or the source with
 *                               DENIED names hidden by the policy
 *   a linked work tree's     -> likewise, through its own view
 *   main git directory
 *   jf_system_dirs (sysdirs.h) -> the same host path (read-only binds)
 *   /etc/<jr_etc_entries>    -> the same host path
 *   exposed paths            -> the same host path, but for their masked
 *                               (DENIED) entries
 *   the jail's HOME          -> the jail home's directory on the host
 *   anything else            -> not visible (/run, host /tmp, sockets)
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "home.h"
#include "policy.h"
#include "resolve.h"
#include "sysdirs.h"

/* What programs need from /etc: users and groups for ls -l and getpwuid,
 * name service and resolver config, the dynamic loader's cache, TLS roots
 * (the certificates and openssl.cnf of /etc/ssl, never its private/: keys
 * a uid-0 command would own), Debian alternatives (awk, editor...), time
 * zone, OS identification. */
const char *const jr_etc_entries[] = {
	"passwd",	   "group",
	"nsswitch.conf",   "hosts",
	"host.conf",	   "resolv.conf",
	"gai.conf",	   "ld.so.cache",
	"ld.so.conf",	   "ld.so.conf.d",
	"ssl/certs",	   "ssl/openssl.cnf",
	"ca-certificates", "ca-certificates.conf",
	"alternatives",	   "localtime",
	"timezone",	   "os-release",
	"mime.types",	   NULL,
};

bool jr_path_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(path, prefix, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/';
}

static int map_project(const struct jr_view *v, const char *jail, char *host, size_t size)
{
	const char *rel = jail + strlen(v->project);
	struct jf_verdict verdict;
	struct stat st;

	if (*rel == '/')
		rel++;
	if ((size_t)snprintf(host, size, "%s%s%s", v->host, *rel ? "/" : "", rel) >= size)
		return -ENAMETOOLONG;
	if (!v->host_is_source || !v->policy || !*rel)
		return 0;
	/* Before the one-shot view exists the raw source stands in for it: hide
	 * what the view would hide (a DENIED parent hides everything below). */
	jf_classify(v->policy, rel, strlen(rel), lstat(host, &st) == 0 && S_ISDIR(st.st_mode),
		    &verdict);
	return verdict.zone == JF_DENIED ? -EACCES : 0;
}

int jr_map(const struct jr_view *v, const char *jail, char *host, size_t size)
{
	if (jail[0] != '/')
		return -EINVAL;
	if (jr_path_under(jail, v->project))
		return map_project(v, jail, host, size);
	if (v->gitdir && jr_path_under(jail, v->gitdir->project))
		return map_project(v->gitdir, jail, host, size);
	for (const char *const *d = jf_system_dirs; *d; d++)
		if (jr_path_under(jail, *d))
			goto same;
	if (strcmp(jail, "/etc") == 0)
		goto same;
	if (strncmp(jail, "/etc/", 5) == 0) {
		char entry[PATH_MAX];

		/* an entry, below one, or a directory the jail makes above one
		 * (/etc/ssl for ssl/certs) */
		for (const char *const *e = jr_etc_entries; *e; e++) {
			snprintf(entry, sizeof(entry), "/etc/%s", *e);
			if (jr_path_under(jail, entry) || jr_path_under(entry, jail))
				goto same;
		}
		return -ENOENT;
	}
	for (int i = 0; v->home && i < v->home->nmasks; i++)
		if (jr_path_under(jail, v->home->masks[i].path))
			return -EACCES;
	for (const char *const *x = v->expose; x && *x; x++)
		if (jr_path_under(jail, *x))
			goto same;
	if (v->home && v->home->host[0] && jr_path_under(jail, v->home->jail)) {
		if ((size_t)snprintf(host, size, "%s%s", v->home->host,
				     jail + strlen(v->home->jail)) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	return -ENOENT;
same:
	if ((size_t)snprintf(host, size, "%s", jail) >= size)
		return -ENAMETOOLONG;
	return 0;
}

static bool all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/*
 * /proc magic links that name another process's root or cwd. Inside the jail
 * /proc is the jail's own, so every such link leads back into the jail:
 * returns 1 for a root link, 2 for a cwd link, 0 otherwise.
 */
static int proc_magic(const char *p)
{
	const char *s, *slash;

	if (strncmp(p, "/proc/", 6) != 0)
		return 0;
	s = p + 6;
	slash = strchr(s, '/');
	if (!slash)
		return 0;
	if (!((size_t)(slash - s) == 4 && strncmp(s, "self", 4) == 0) &&
	    !((size_t)(slash - s) == 11 && strncmp(s, "thread-self", 11) == 0) &&
	    !all_digits(s, slash - s))
		return 0;
	s = slash + 1;
	if (strncmp(s, "task/", 5) == 0) {
		s += 5;
		slash = strchr(s, '/');
		if (!slash || !all_digits(s, slash - s))
			return 0;
		s = slash + 1;
	}
	if (strcmp(s, "root") == 0)
		return 1;
	if (strcmp(s, "cwd") == 0)
		return 2;
	return 0;
}

static void chain_add(struct jr_chain *chain, const char *name, size_t n)
{
	if (!chain || chain->n >= (int)(sizeof(chain->name) / sizeof(chain->name[0])))
		return;
	if (n > NAME_MAX)
		n = NAME_MAX;
	memcpy(chain->name[chain->n], name, n);
	chain->name[chain->n][n] = '\0';
	chain->n++;
}

int jr_resolve(const struct jr_view *v, const char *cwd, const char *in, char *out,
	       struct jr_chain *chain)
{
	char cur[PATH_MAX], rest[PATH_MAX], tmp[PATH_MAX], host[PATH_MAX], target[PATH_MAX];
	const char *base = strcmp(cwd, "/") == 0 ? "" : cwd;
	int links = 0;
	char *p;

	if (chain)
		chain->n = 0;
	if ((size_t)snprintf(cur, sizeof(cur), "%s", in[0] == '/' ? "" : base) >= sizeof(cur) ||
	    (size_t)snprintf(rest, sizeof(rest), "%s", in) >= sizeof(rest))
		return -ENAMETOOLONG;
	p = rest;
	while (*p) {
		struct stat st;
		char *e;
		size_t clen;
		bool last;
		ssize_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		clen = e - p;
		last = e[strspn(e, "/")] == '\0';
		if (clen == 1 && p[0] == '.') {
			p = e;
			continue;
		}
		if (clen == 2 && p[0] == '.' && p[1] == '.') {
			char *s = strrchr(cur, '/');

			if (s)
				*s = '\0';
			p = e;
			continue;
		}
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%.*s", cur, (int)clen, p) >= sizeof(tmp))
			return -ENAMETOOLONG;
		switch (proc_magic(tmp)) {
		case 1:
			cur[0] = '\0';
			p = e;
			continue;
		case 2:
			snprintf(cur, sizeof(cur), "%s", base);
			p = e;
			continue;
		}
		if (jr_map(v, tmp, host, sizeof(host)) == 0 && lstat(host, &st) == 0 &&
		    S_ISLNK(st.st_mode) && (n = readlink(host, target, sizeof(target) - 1)) > 0) {
			if (++links > 40)
				return -ELOOP;
			target[n] = '\0';
			if (last)
				chain_add(chain, p, clen);
			/* splice: the link's target, then what was left after it */
			if ((size_t)snprintf(tmp, sizeof(tmp), "%s%s", target, e) >= sizeof(tmp))
				return -ENAMETOOLONG;
			memcpy(rest, tmp, sizeof(rest));
			p = rest;
			if (target[0] == '/')
				cur[0] = '\0';
			continue;
		}
		memcpy(cur, tmp, sizeof(cur));
		p = e;
	}
	snprintf(out, PATH_MAX, "%s", cur[0] ? cur : "/");
	if (chain) {
		const char *b = strrchr(out, '/') + 1;

		chain_add(chain, b, strlen(b));
	}
	return 0;
}

/* Would execve() accept this jail path (exists, regular file, an x bit)? */
static bool is_executable(const struct jr_view *v, const char *jail)
{
	char host[PATH_MAX];
	struct stat st;

	if (jr_map(v, jail, host, sizeof(host)) < 0 || stat(host, &st) < 0)
		return false;
	return S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

int jr_find_exec(const struct jr_view *v, const char *cwd, const char *path_env, const char *name,
		 char *out, struct jr_chain *chain)
{
	char cand[PATH_MAX];
	const char *p;
	int r;

	if (!*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		r = jr_resolve(v, cwd, name, out, chain);
		if (r < 0)
			return r;
		return is_executable(v, out) ? 0 : -ENOENT;
	}
	/* execvp(3): no PATH means confstr(_CS_PATH), "/bin:/usr/bin" on glibc */
	p = path_env ? path_env : "/bin:/usr/bin";
	for (;;) {
		size_t n = strcspn(p, ":");

		if (n == 0)
			snprintf(cand, sizeof(cand), "%s", name);
		else if ((size_t)snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, p, name) >=
			 sizeof(cand))
			goto next;
		if (jr_resolve(v, cwd, cand, out, chain) == 0 && is_executable(v, out))
			return 0;
next:
		if (!p[n])
			break;
		p += n + 1;
	}
	return -ENOENT;
}
