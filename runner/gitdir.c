/* SPDX-License-Identifier: MIT */
/*
 * The main repository's git directory of a linked work tree.
 *
 * A work tree made by `git worktree add` has a .git file "gitdir: X" where X
 * is <common>/worktrees/<name>, the work tree's own git directory, holding
 * "commondir" (the way back to <common>, "../..") and "gitdir" (the path of
 * the work tree's .git file). The files are checked against each other
 * before anything is exposed: the .git file is in the project, which the
 * agent may have written, so it is never followed on its word alone; a
 * directory is taken for <common> only when its worktrees/<name>/ names
 * this very .git file in return, which the agent cannot arrange from inside
 * a view that does not show it. Sources: gitrepository-layout(5),
 * git-worktree(1) "DETAILS".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "gitdir.h"
#include "policy.h"
#include "resolve.h"
#include "sysdirs.h"

const char jr_gitdir_policy[] = "[options]\nprofiles = gitdir\ndefault = safe\n";

_printf_(3, 4) static int gd_fail(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * Read the small regular file @path (not through a symlink at its last
 * component) into @buf (@size bytes, NUL-terminated) without its trailing
 * newlines and carriage returns, as git reads .git, commondir and gitdir
 * files. Returns the length, or -errno (-EFBIG: does not fit, -EINVAL: not
 * a regular file, empty, or holds a NUL or a line break before its end).
 */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	n = read(fd, buf, size);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size)
		return -EFBIG;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	if (n == 0 || strlen(buf) != (size_t)n || strpbrk(buf, "\n\r"))
		return -EINVAL;
	return n;
}

/* realpath() of @rel taken relative to the directory @base when not
 * absolute; writes @out (PATH_MAX bytes). Returns 0 or -errno. */
static int resolve_from(const char *base, const char *rel, char *out)
{
	char joined[PATH_MAX * 2];

	if (rel[0] == '/')
		snprintf(joined, sizeof(joined), "%s", rel);
	else if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", base, rel) >= PATH_MAX)
		return -ENAMETOOLONG;
	return realpath(joined, out) ? 0 : -errno;
}

static bool is_dir(const char *dir, const char *name)
{
	char p[PATH_MAX + 16];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *dir, const char *name)
{
	char p[PATH_MAX + 16];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Can @common be shown at its own path in the jail next to @project? */
static int check_place(const char *project, const char *common, char *err, size_t errsz)
{
	if (strcmp(common, "/") == 0 || jr_path_under(project, common))
		return gd_fail(err, errsz, "the work tree %s lies inside its git directory %s",
			       project, common);
	for (const char *const *d = jf_system_dirs; *d; d++)
		if (jr_path_under(common, *d))
			return gd_fail(err, errsz,
				       "%s lies in %s, which the jail binds from the host", common,
				       *d);
	if (jr_path_under(common, "/proc") || jr_path_under(common, "/dev") ||
	    jr_path_under(common, "/etc"))
		return gd_fail(err, errsz, "%s lies in a directory the jail replaces", common);
	return 0;
}

/* The checks on <common>/worktrees/<name> (@admin, canonical) once the .git
 * file led there: commondir leads to @common, gitdir back to @dotgit. */
static int check_admin(const char *admin, const char *common, const char *dotgit, char *err,
		       size_t errsz)
{
	char path[PATH_MAX + 16], text[PATH_MAX + 2], real[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/commondir", admin);
	n = read_small(path, text, sizeof(text));
	if (n < 0 || resolve_from(admin, text, real) < 0 || strcmp(real, common) != 0)
		return gd_fail(err, errsz, "%s does not lead back to %s", path, common);
	snprintf(path, sizeof(path), "%s/gitdir", admin);
	n = read_small(path, text, sizeof(text));
	if (n < 0 || resolve_from(admin, text, real) < 0 || strcmp(real, dotgit) != 0)
		return gd_fail(err, errsz, "%s does not name %s", path, dotgit);
	if (!is_file(common, "HEAD") || !is_dir(common, "objects") || !is_dir(common, "refs"))
		return gd_fail(err, errsz, "%s is not a git directory (HEAD, objects/, refs/)",
			       common);
	return 0;
}

int jr_gitdir_common(const char *project, char *common, char *err, size_t errsz)
{
	char dotgit[PATH_MAX + 8], text[PATH_MAX + 16], admin[PATH_MAX], *slash;
	struct stat st;
	ssize_t n;
	int r;

	if ((size_t)snprintf(dotgit, sizeof(dotgit), "%s/.git", project) >= PATH_MAX)
		return 0;
	if (lstat(dotgit, &st) < 0 || !S_ISREG(st.st_mode))
		return 0; /* a repository's own .git directory, or none */
	n = read_small(dotgit, text, sizeof(text));
	if (n < 0 || strncmp(text, "gitdir: ", 8) != 0)
		return gd_fail(err, errsz, "%s is not a \"gitdir: PATH\" file", dotgit);
	r = resolve_from(project, text + 8, admin);
	if (r < 0 || stat(admin, &st) < 0 || !S_ISDIR(st.st_mode))
		return gd_fail(err, errsz, "%s names %s, which is not a directory", dotgit,
			       text + 8);
	/* <common>/worktrees/<name>; a submodule's modules/<name> is not ours */
	slash = strrchr(admin, '/');
	snprintf(common, PATH_MAX, "%.*s", (int)(slash - admin), admin);
	slash = strrchr(common, '/');
	if (!slash || strcmp(slash, "/worktrees") != 0)
		return 0;
	*slash = '\0';
	if (!common[0] || jr_path_under(common, project))
		return 0; /* inside the project: its own view shows it */
	r = check_admin(admin, common, dotgit, err, errsz);
	if (r == 0)
		r = check_place(project, common, err, errsz);
	return r < 0 ? r : 1;
}

/* Is @p absolute, with no empty, "." or ".." component, and a .git file's
 * path ("/.../.git")? */
static bool plain_dotgit(const char *p)
{
	size_t n = strlen(p);
	const char *c = p + 1;

	if (p[0] != '/' || n < 6 || strcmp(p + n - 5, "/.git") != 0)
		return false;
	for (;;) {
		size_t len = strcspn(c, "/");

		if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && !strncmp(c, "..", 2)))
			return false;
		if (!c[len])
			return true;
		c += len + 1;
	}
}

/* May an empty file stand at @p in the jail's root: a path the jail shows
 * nothing at (jr_map), not below what the jail makes itself (its /tmp is
 * its own: a file there is as good as in the root)? */
static bool placeholder_fits(const struct jr_view *v, const char *p)
{
	char host[PATH_MAX];

	if (jr_path_under(p, "/proc") || jr_path_under(p, "/dev") || jr_path_under(p, "/etc"))
		return false;
	return jr_map(v, p, host, sizeof(host)) == -ENOENT;
}

char **jr_gitdir_placeholders(const char *common, const struct jr_view *v)
{
	char wts[PATH_MAX + 16], path[PATH_MAX * 2], text[PATH_MAX + 2];
	_cleanup_closedir_ DIR *d = NULL;
	char **out = calloc(JR_MAX_PLACEHOLDERS + 1, sizeof(*out));
	struct dirent *de;
	struct stat st;
	int n = 0;

	snprintf(wts, sizeof(wts), "%s/worktrees", common);
	d = opendir(wts);
	while (out && d && n < JR_MAX_PLACEHOLDERS && (de = readdir(d))) {
		if (de->d_name[0] == '.' || (size_t)snprintf(path, sizeof(path), "%s/%s/gitdir",
							     wts, de->d_name) >= PATH_MAX)
			continue;
		/* the work tree must exist on the host: then the jail's git and
		 * the host's agree that it is not stale */
		if (read_small(path, text, sizeof(text)) < 0 || !plain_dotgit(text) ||
		    stat(text, &st) < 0 || !placeholder_fits(v, text))
			continue;
		out[n] = strdup(text);
		if (out[n])
			n++;
	}
	return out;
}

/* The view of @common (canonical) as the project's policy would treat a
 * repository's own .git directory: none when DENIED, read-only when
 * RESTRICTED. Returns 1 when shown, 0, or -ENOMEM. */
static int show_common(struct jr_gitdir *g, struct jr_view *v, const char *common)
{
	char err[256];
	struct jf_verdict verdict;

	jf_classify(v->policy, ".git", 4, true, &verdict);
	if (verdict.zone == JF_DENIED)
		return 0;
	g->read_only = verdict.zone == JF_RESTRICTED;
	if (jf_policy_parse("gitdir view", jr_gitdir_policy, strlen(jr_gitdir_policy), &g->policy,
			    err, sizeof(err)) < 0)
		return -ENOMEM; /* the text is ours: only memory can fail */
	snprintf(g->view.project, sizeof(g->view.project), "%s", common);
	snprintf(g->view.host, sizeof(g->view.host), "%s", common);
	g->view.policy = g->policy;
	g->view.host_is_source = true;
	v->gitdir = &g->view;
	return 1;
}

int jr_gitdir_setup(struct jr_gitdir *g, struct jr_view *v, char *warn, size_t warnsz)
{
	char common[PATH_MAX];
	struct stat st;
	int r;

	memset(g, 0, sizeof(*g));
	if (warnsz)
		warn[0] = '\0';
	r = jr_gitdir_common(v->project, common, warn, warnsz);
	if (r == 1)
		r = show_common(g, v, common);
	if (r == -ENOMEM)
		return r;
	if (r != 1 &&
	    ((size_t)snprintf(common, sizeof(common), "%s/.git", v->project) >= sizeof(common) ||
	     lstat(common, &st) < 0 || !S_ISDIR(st.st_mode)))
		return 0;
	g->placeholders = jr_gitdir_placeholders(common, v);
	if (!g->placeholders)
		return -ENOMEM;
	v->placeholders = g->placeholders;
	return 0;
}

void jr_gitdir_release(struct jr_gitdir *g)
{
	jf_policy_free(g->policy);
	jr_strv_free(g->placeholders);
	g->policy = NULL;
	g->placeholders = NULL;
}

void jr_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}
