/* SPDX-License-Identifier: MIT */
/*
 * The jail's home directory and the toolchains shown in it (jailrun(1),
 * "THE HOME DIRECTORY").
 *
 * One home per project, kept between commands: a directory on the host
 * outside the project (--home, [run] home, else
 * $XDG_STATE_HOME/jailrun/homes/NAME-HASH or ~/.local/state/jailrun/...),
 * shown in the jail at the user's own $HOME path. Tools derive defaults
 * from $HOME (~/.rustup, ~/.cargo, ~/.pyenv, ~/.npm, ~/.cache) and write
 * absolute paths under it into caches and build files, so the jail's HOME
 * is the path they have on the host. The user's toolchain directories are
 * bound read-only on top, at their own paths; an exposed directory never
 * shows a DENIED entry: the few near its top are masked (a toolchain tree
 * holds 10^5 files, too many to walk before every command), one that is
 * DENIED itself is not exposed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "home.h"
#include "policy.h"
#include "resolve.h"
#include "sysdirs.h"
#include "text.h"

/* Go's module cache: read-only in the jail, so Go gets a writable one in
 * the jail home and reads the host's through a file:// proxy (go help
 * goproxy: a file:// entry that lacks a module falls through to the
 * next, after a comma). */
#define GO_MODULES "go/pkg/mod"
#define GO_PROXY_REST ",https://proxy.golang.org,direct"

/* Below the user's home, what the jail shows read-only when it exists. */
static const char *const toolchains[] = {".rustup",    ".cargo/bin", ".pyenv", ".nvm",
					 ".local/bin", GO_MODULES,   NULL};

/* Where the jail's HOME is when the user's own path cannot hold it. */
#define FALLBACK_HOME "/tmp/home"

/* "jailrun: MESSAGE" on stderr, escaped: paths are the host's. */
_printf_(1, 2) static void warn(const char *fmt, ...)
{
	char buf[PATH_MAX + 512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	fputs("jailrun: ", stderr);
	jf_fput_escaped(stderr, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	fputc('\n', stderr);
}

/* FNV-1a, 64 bits: a stable name for a project path (not a secret). */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* The user's home on the host: $HOME when it is a directory of the user
 * (su and setpriv keep the caller's), else the password database's. Writes
 * its canonical path to @out (PATH_MAX). */
static int user_home(char *out)
{
	const char *h = getenv("HOME");
	struct passwd *pw;
	struct stat st;

	if (h && h[0] == '/' && realpath(h, out) && stat(out, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == geteuid())
		return 0;
	pw = getpwuid(geteuid());
	if (pw && pw->pw_dir[0] == '/' && realpath(pw->pw_dir, out))
		return 0;
	return -ENOENT;
}

/* Can the jail show its HOME at @path? Not /, not where the jail binds or
 * makes directories of its own, not at or above the project (the project
 * is bound on top of the home, never the other way round). */
static bool home_path_ok(const char *path, const char *project)
{
	static const char *const own[] = {"/tmp", "/proc", "/dev", "/etc", NULL};

	if (strcmp(path, "/") == 0 || jr_path_under(path, project))
		return false;
	for (const char *const *d = jf_system_dirs; *d; d++)
		if (jr_path_under(path, *d))
			return false;
	for (const char *const *d = own; *d; d++)
		if (jr_path_under(path, *d))
			return false;
	return true;
}

/* mkdir -p @path (absolute), new directories mode 0700. */
static int mkdir_private(const char *path)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *s = buf + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return -errno;
		*s = c;
		if (!c)
			return 0;
	}
}

/* The default home directory of @project on the host, in @out. */
static int default_dir(const char *project, const char *user, char *out)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *base = strrchr(project, '/') + 1;
	int n;

	if (state && state[0] == '/')
		n = snprintf(out, PATH_MAX, "%s/jailrun/homes/%.64s-%016llx", state, base,
			     (unsigned long long)fnv1a(project));
	else
		n = snprintf(out, PATH_MAX, "%s/.local/state/jailrun/homes/%.64s-%016llx", user,
			     base, (unsigned long long)fnv1a(project));
	return n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Create @h->host if needed and check it: a directory of ours (not a
 * symlink), mode 0700, outside the project and the view. */
static int make_dir(struct jr_home *h, const char *project, const char *mnt, char *err,
		    size_t errsz)
{
	char real[PATH_MAX];
	_cleanup_close_ int fd = -1;
	struct stat st;
	int e = mkdir_private(h->host);

	if (e < 0) {
		snprintf(err, errsz, "the jail home %s: %s", h->host, strerror(-e));
		return -EINVAL;
	}
	fd = open(h->host, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !realpath(h->host, real)) {
		snprintf(err, errsz, "the jail home %s: %s (a directory, not a symlink)", h->host,
			 strerror(errno));
		return -EINVAL;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errsz, "the jail home %s belongs to uid %u, not to uid %u", real,
			 (unsigned)st.st_uid, (unsigned)geteuid());
		return -EINVAL;
	}
	if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) < 0) {
		snprintf(err, errsz, "the jail home %s: chmod 0700: %s", real, strerror(errno));
		return -EINVAL;
	}
	if (jr_path_under(real, project) || jr_path_under(project, real) ||
	    (mnt && (jr_path_under(real, mnt) || jr_path_under(mnt, real)))) {
		snprintf(err, errsz,
			 "the jail home %s lies inside the project %s or around it (it must be "
			 "outside SOURCE and the view)",
			 real, project);
		return -EINVAL;
	}
	snprintf(h->host, sizeof(h->host), "%s", real);
	return 0;
}

int jr_home_setup(struct jr_home *h, const char *project, const char *mnt, const char *dir,
		  char *err, size_t errsz)
{
	char user[PATH_MAX];
	int e;

	memset(h, 0, sizeof(*h));
	if (user_home(user) < 0) {
		snprintf(err, errsz, "no home directory for uid %u ($HOME, passwd)",
			 (unsigned)geteuid());
		return -EINVAL;
	}
	snprintf(h->user, sizeof(h->user), "%s", user);
	snprintf(h->jail, sizeof(h->jail), "%s",
		 home_path_ok(user, project) ? user : FALLBACK_HOME);
	if (dir && (size_t)snprintf(h->host, sizeof(h->host), "%s", dir) >= sizeof(h->host))
		e = -ENAMETOOLONG;
	else
		e = dir ? 0 : default_dir(project, user, h->host);
	if (e < 0) {
		snprintf(err, errsz, "the jail home: %s", strerror(-e));
		return -EINVAL;
	}
	e = make_dir(h, project, mnt, err, errsz);
	if (e < 0 && !dir) {
		/* the default place cannot hold it (a read-only or foreign home):
		 * the command still runs, with a home of its own */
		warn("%s; HOME is %s, emptied after the command (give --home DIR)", err,
		     FALLBACK_HOME);
		snprintf(h->jail, sizeof(h->jail), "%s", FALLBACK_HOME);
		h->host[0] = '\0';
		return 0;
	}
	return e;
}

/* Is @path DENIED by one of @pols? Classified relative to the user's home
 * when below it (the secrets profile names ~/.ssh as ".ssh/"), else
 * relative to /. Writes the deciding rule to @rule. */
static bool denied(const struct jr_home *h, const struct jf_policy *const *pols, const char *path,
		   bool is_dir, char *rule, size_t rsz)
{
	const char *rel = path + 1;
	struct jf_verdict v;

	if (jr_path_under(path, h->user) && path[strlen(h->user)])
		rel = path + strlen(h->user) + 1;
	for (; *pols; pols++) {
		jf_classify(*pols, rel, strlen(rel), is_dir, &v);
		if (v.zone == JF_DENIED) {
			jf_rule_format(v.rule, rule, rsz);
			return true;
		}
	}
	return false;
}

static int add_mask(struct jr_home *h, const char *path, bool is_dir)
{
	struct jr_mask *m;

	if (h->nmasks >= JR_HOME_MASKS)
		return -E2BIG;
	m = &h->masks[h->nmasks++];
	snprintf(m->path, sizeof(m->path), "%s", path);
	m->is_dir = is_dir;
	return 0;
}

/* Mask the DENIED entries of @dir down to @depth levels (symlinks show
 * nothing of their own and are left). */
static int mask_dir(struct jr_home *h, const struct jf_policy *const *pols, const char *dir,
		    int depth)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	char path[PATH_MAX], rule[256];
	struct dirent *de;
	int e;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    S_ISLNK(st.st_mode))
			continue;
		if (denied(h, pols, path, S_ISDIR(st.st_mode), rule, sizeof(rule))) {
			warn("not exposing %s (DENIED by %s): the jail shows it empty", path, rule);
			e = add_mask(h, path, S_ISDIR(st.st_mode));
			if (e < 0)
				return e;
		} else if (S_ISDIR(st.st_mode) && depth > 1 &&
			   (e = mask_dir(h, pols, path, depth - 1)) < 0) {
			return e;
		}
	}
	return 0;
}

/* Add @path to the exposed list unless it is DENIED; mask what it holds. */
static void expose_one(struct jr_home *h, const struct jf_policy *const *pols, const char *path)
{
	char rule[256];
	struct stat st;
	int n0 = h->nmasks;

	if (h->nexpose >= JR_HOME_EXPOSE || stat(path, &st) < 0)
		return;
	if (denied(h, pols, path, S_ISDIR(st.st_mode), rule, sizeof(rule))) {
		warn("not exposing %s: DENIED by %s", path, rule);
		return;
	}
	if (S_ISDIR(st.st_mode) && mask_dir(h, pols, path, 2) < 0) {
		warn("not exposing %s: it holds more DENIED entries than the jail masks (%d)", path,
		     JR_HOME_MASKS);
		h->nmasks = n0;
		return;
	}
	h->expose[h->nexpose++] = strdup(path);
	if (!h->expose[h->nexpose - 1])
		h->nexpose--;
}

/* With the host's Go module cache exposed: GOMODCACHE in the jail home
 * and GOPROXY reading the host's cache first. 0 or -ENOMEM. */
static int go_env(struct jr_home *h)
{
	char path[PATH_MAX];
	int i;

	if (snprintf(path, sizeof(path), "%s/" GO_MODULES, h->user) >= (int)sizeof(path))
		return 0;
	for (i = 0; i < h->nexpose && strcmp(h->expose[i], path) != 0; i++)
		;
	if (i == h->nexpose)
		return 0;
	if (asprintf(&h->env[0], "GOMODCACHE=%s/.cache/go-mod", h->jail) < 0) {
		h->env[0] = NULL;
		return -ENOMEM;
	}
	if (asprintf(&h->env[1], "GOPROXY=file://%s/cache/download" GO_PROXY_REST, path) < 0) {
		h->env[1] = NULL;
		return -ENOMEM;
	}
	return 0;
}

int jr_home_expose(struct jr_home *h, const struct jf_policy *policy, const char *const *extra)
{
	static const char secrets[] = "[options]\ndefault = safe\nprofiles = secrets\n";
	struct jf_policy *sp = NULL;
	const struct jf_policy *pols[3] = {NULL};
	char path[PATH_MAX];
	int np = 0;

	if (jf_policy_parse("profile:secrets", secrets, sizeof(secrets) - 1, &sp, NULL, 0) < 0)
		return -ENOMEM;
	pols[np++] = sp;
	if (policy)
		pols[np++] = policy;
	for (const char *const *t = toolchains; *t; t++)
		if (snprintf(path, sizeof(path), "%s/%s", h->user, *t) < (int)sizeof(path))
			expose_one(h, pols, path);
	for (; extra && *extra; extra++)
		expose_one(h, pols, *extra);
	h->expose[h->nexpose] = NULL;
	jf_policy_free(sp);
	return go_env(h);
}

void jr_home_release(struct jr_home *h)
{
	for (int i = 0; i < JR_HOME_ENV; i++) {
		free(h->env[i]);
		h->env[i] = NULL;
	}
	for (int i = 0; i < h->nexpose; i++)
		free(h->expose[i]);
	h->nexpose = 0;
	h->expose[0] = NULL;
}

int jr_home_missing(const char *name, const char *host_path, char *dir, size_t size)
{
	char cand[PATH_MAX];

	if (!name[0] || strchr(name, '/') || !host_path)
		return -ENOENT;
	for (const char *p = host_path; *p;) {
		size_t n = strcspn(p, ":");

		if (n > 0 && p[0] == '/' &&
		    snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, p, name) < (int)sizeof(cand) &&
		    access(cand, X_OK) == 0) {
			snprintf(dir, size, "%.*s", (int)n, p);
			return 0;
		}
		p += n + (p[n] == ':');
	}
	return -ENOENT;
}
