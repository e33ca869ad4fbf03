/* SPDX-License-Identifier: MIT */
/*
 * apply and discard. apply writes each file into SOURCE atomically (a
 * temporary name in the same directory, fsync, rename), creates
 * directories before their entries and removes them after, refuses what
 * the policy does not make SAFE and leaves conflicts alone unless forced.
 * Every step is idempotent, so an apply killed at any moment leaves each
 * file old or new, and a rerun finishes it: a SOURCE entry that already
 * equals the layer's is done, not in conflict.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cleanup.h"
#include "layer-internal.h"

#define TMP_PREFIX ".jailfs-apply-"
#define TMP_MARK "user.jailfs.apply" /* on a temporary of apply's, so a rerun knows it */

struct run {
	struct jf_layer *l;
	json_t *report;
	bool force;
	jf_layer_safe_fn safe;
	void *safe_data;
};

/* Appends {path, action, reason?} to @rep; a path that is not UTF-8 is
 * escaped (path_escaped), never left out. */
static void add_report(json_t *rep, const char *path, const char *action, const char *why)
{
	bool esc = false;
	json_t *o = json_pack("{so* ss}", "path", jf_layer_path_json(path, &esc), "action", action);

	if (o && esc)
		json_object_set_new(o, "path_escaped", json_true());
	if (o && why)
		json_object_set_new(o, "reason", json_string(why));
	json_array_append_new(rep, o);
}

static void report(struct run *u, const char *path, const char *action, const char *why)
{
	add_report(u->report, path, action, why);
}

static long long ns_of(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* The mode apply gives a SOURCE entry: no set-ID bit on a non-directory,
 * as through the view (jailfs(1), "No privilege through the view"). */
static mode_t applied_mode(mode_t m)
{
	return S_ISDIR(m) ? m & 07777 : m & 07777 & ~(mode_t)(S_ISUID | S_ISGID);
}

/* Does SOURCE's @path already hold what upper's @upath holds (an apply
 * that got that far)? */
static bool same_as_upper(struct jf_layer *l, const char *path, const char *upath)
{
	_cleanup_free_ char *a = NULL, *b = NULL;
	struct stat s, u;
	size_t na, nb;

	if (jf_layer_lstat(l->srcfd, path, &s) < 0 || jf_layer_lstat(l->upperfd, upath, &u) < 0)
		return false;
	if ((s.st_mode & S_IFMT) != (u.st_mode & S_IFMT) ||
	    (s.st_mode & 07777) != applied_mode(u.st_mode))
		return false;
	if (S_ISDIR(s.st_mode))
		return true;
	if (S_ISLNK(s.st_mode)) {
		char x[4096], y[4096];
		const char *n1, *n2;
		_cleanup_close_ int p1 = jf_layer_parent(l->srcfd, path, &n1);
		_cleanup_close_ int p2 = jf_layer_parent(l->upperfd, upath, &n2);
		ssize_t s1 = p1 < 0 ? -1 : readlinkat(p1, n1, x, sizeof(x));
		ssize_t s2 = p2 < 0 ? -1 : readlinkat(p2, n2, y, sizeof(y));
		return s1 >= 0 && s1 == s2 && !memcmp(x, y, (size_t)s1);
	}
	if (!S_ISREG(s.st_mode) || s.st_size != u.st_size)
		return false;
	return jf_layer_read_file(l->srcfd, path, JF_LAYER_HASH_MAX, &a, &na) == 0 &&
	       jf_layer_read_file(l->upperfd, upath, JF_LAYER_HASH_MAX, &b, &nb) == 0 && na == nb &&
	       !memcmp(a, b, na);
}

/* Has SOURCE's @path changed since its origin was recorded? The reason,
 * or NULL. @dir_ok: a directory there now is no conflict. */
static const char *changed_since(struct jf_layer *l, const char *path, bool dir_ok)
{
	json_t *o = jf_layer_origin(l, path);
	struct stat st;
	bool has = jf_layer_lstat(l->srcfd, path, &st) == 0;
	const char *sha;
	char hex[65];

	if (has && dir_ok && S_ISDIR(st.st_mode))
		return NULL;
	if (!o)
		return has ? "the source has it, and no origin was recorded" : NULL;
	if (!has)
		return "removed from the source since its copy";
	if (json_integer_value(json_object_get(o, "dev")) != (json_int_t)st.st_dev ||
	    json_integer_value(json_object_get(o, "ino")) != (json_int_t)st.st_ino ||
	    json_integer_value(json_object_get(o, "size")) != (json_int_t)st.st_size ||
	    json_integer_value(json_object_get(o, "mtime_ns")) != ns_of(&st.st_mtim) ||
	    json_integer_value(json_object_get(o, "ctime_ns")) != ns_of(&st.st_ctim))
		return "changed in the source since its copy";
	sha = json_string_value(json_object_get(o, "sha256"));
	if (sha && S_ISREG(st.st_mode)) {
		_cleanup_close_ int fd = jf_layer_openat(l->srcfd, path, O_RDONLY | O_NONBLOCK);
		if (fd < 0 || jf_layer_sha256(fd, hex) < 0 || strcmp(hex, sha))
			return "changed in the source since its copy";
	}
	return NULL;
}

/* Is @path's last name one of apply's temporaries? A symlink cannot carry
 * TMP_MARK, so such a name of the layer would pass for one. */
static bool tmp_named(const char *path)
{
	const char *slash = strrchr(path, '/');

	return !strncmp(slash ? slash + 1 : path, TMP_PREFIX, strlen(TMP_PREFIX));
}

/* The reason @e may not be applied (policy or conflict), or NULL. */
static const char *blocked(struct run *u, const struct jf_change *e, const char **action)
{
	const char *why = NULL;

	*action = "refused";
	if (tmp_named(e->path) || (e->from && tmp_named(e->from)))
		return "named like apply's temporary files (" TMP_PREFIX "*)";
	if (!u->safe(e->path, u->safe_data) || (e->from && !u->safe(e->from, u->safe_data)))
		return "not SAFE under the policy";
	*action = "conflict";
	if (u->force)
		return NULL;
	if (e->kind == JF_CH_DELETED)
		return changed_since(u->l, e->path, S_ISDIR(e->old.st_mode));
	if (same_as_upper(u->l, e->path, e->path))
		return NULL;
	why = changed_since(u->l, e->path, S_ISDIR(e->new.st_mode));
	if (!why && e->from)
		why = changed_since(u->l, e->from, false);
	return why;
}

/* Opens SOURCE's directory above @path for writing (O_RDONLY: *at calls). */
static int src_parent(struct jf_layer *l, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup("");

	*name = slash ? slash + 1 : path;
	if (!dir)
		return -ENOMEM;
	return jf_layer_openat(l->srcfd, dir, O_RDONLY | O_DIRECTORY);
}

/* Is @tmp of @pfd (@st) a temporary an earlier apply left: a file it
 * marked, or a symlink to @target? Anything else is the user's. */
static bool ours(int pfd, const char *tmp, const struct stat *st, const char *target)
{
	char buf[4096];
	ssize_t n;

	if (S_ISLNK(st->st_mode)) {
		n = readlinkat(pfd, tmp, buf, sizeof(buf) - 1);
		return target && n >= 0 && (size_t)n == strlen(target) &&
		       !memcmp(buf, target, (size_t)n);
	}
	_cleanup_close_ int fd = openat(pfd, tmp, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	return S_ISREG(st->st_mode) && fd >= 0 && fgetxattr(fd, TMP_MARK, buf, sizeof(buf)) >= 0;
}

/* Removes the temporary of a killed apply; -EEXIST for a name not ours. */
static int clear_tmp(int pfd, const char *tmp, const char *target)
{
	struct stat st;

	if (fstatat(pfd, tmp, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!ours(pfd, tmp, &st, target))
		return -EEXIST;
	return unlinkat(pfd, tmp, 0) < 0 ? -errno : 0;
}

/* The content of @in as @tmp of @pfd, complete and fsync'd before it has
 * the name (O_TMPFILE where the filesystem has it), marked as apply's.
 * The open file in *@ret_fd. */
static int write_tmp(int in, int pfd, const char *tmp, mode_t mode, int *ret_fd)
{
	_cleanup_close_ int out = openat(pfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	bool named = out < 0;
	char link[64];
	int r;

	if (named)
		out = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (out < 0)
		return -errno;
	r = jf_layer_copy_data(in, out);
	if (r == 0 && fsetxattr(out, TMP_MARK, "1", 1, 0) < 0 && errno != ENOTSUP)
		r = -errno;
	if (r == 0 && (fchmod(out, mode) < 0 || fsync(out) < 0))
		r = -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", out);
	if (r == 0 && !named && linkat(AT_FDCWD, link, pfd, tmp, AT_SYMLINK_FOLLOW) < 0)
		r = -errno;
	if (r < 0 && named)
		unlinkat(pfd, tmp, 0);
	if (r == 0)
		*ret_fd = steal_fd(&out);
	return r;
}

/* Writes upper's non-directory @path into SOURCE: a temporary name, fsync,
 * rename over. */
static int put_file(struct jf_layer *l, const char *path, const struct stat *st)
{
	const char *name, *un;
	_cleanup_close_ int pfd = src_parent(l, path, &name), in = -1, out = -1, up = -1;
	char tmp[256], target[4096];
	ssize_t n;
	int r;

	if (pfd < 0)
		return pfd;
	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%.200s", name);
	if (S_ISREG(st->st_mode)) {
		r = clear_tmp(pfd, tmp, NULL);
		in = r < 0 ? r : jf_layer_openat(l->upperfd, path, O_RDONLY | O_NONBLOCK);
		r = in < 0 ? in : write_tmp(in, pfd, tmp, applied_mode(st->st_mode), &out);
	} else if (S_ISLNK(st->st_mode)) {
		up = jf_layer_parent(l->upperfd, path, &un);
		n = up < 0 ? -1 : readlinkat(up, un, target, sizeof(target) - 1);
		if (n < 0)
			return up < 0 ? up : -errno;
		target[n] = '\0';
		r = clear_tmp(pfd, tmp, target);
		if (r == 0 && symlinkat(target, pfd, tmp) < 0)
			r = -errno;
	} else {
		return -EOPNOTSUPP;
	}
	if (r < 0)
		return r;
	if (renameat(pfd, tmp, pfd, name) < 0) {
		r = -errno;
		unlinkat(pfd, tmp, 0);
		return r;
	}
	if (out >= 0)
		fremovexattr(out, TMP_MARK); /* a kill before it leaves a harmless mark */
	return fsync(pfd) < 0 ? -errno : 0;
}

/* Makes or updates SOURCE's directory @path (mode of @st). */
static int put_dir(struct jf_layer *l, const char *path, const struct stat *st)
{
	const char *name;
	_cleanup_close_ int pfd = src_parent(l, path, &name);
	struct stat cur;

	if (pfd < 0)
		return pfd;
	if (fstatat(pfd, name, &cur, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(cur.st_mode) &&
	    unlinkat(pfd, name, 0) < 0)
		return -errno;
	if (mkdirat(pfd, name, st->st_mode & 07777) < 0 && errno != EEXIST)
		return -errno;
	if (fchmodat(pfd, name, st->st_mode & 07777, 0) < 0)
		return -errno;
	return fsync(pfd) < 0 ? -errno : 0;
}

/* Removes SOURCE's @path (a directory only when empty). */
static int remove_src(struct jf_layer *l, const char *path)
{
	const char *name;
	_cleanup_close_ int pfd = src_parent(l, path, &name);
	struct stat st;

	if (pfd < 0)
		return pfd == -ENOENT ? 0 : pfd;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (unlinkat(pfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
		return -errno;
	return fsync(pfd) < 0 ? -errno : 0;
}

/* Takes @path out of upper/ (a directory only once empty), journal first. */
static int leave_upper(struct jf_layer *l, const char *path)
{
	const char *name;
	_cleanup_close_ int pfd = jf_layer_parent(l->upperfd, path, &name);
	struct stat st;
	int r;

	if (pfd < 0 || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISDIR(st.st_mode))
		return 0; /* prune() removes it once nothing below differs */
	r = jf_layer_drop(l, path);
	if (r < 0)
		return r;
	return unlinkat(pfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
}

/* Does upper directory @name of @ufd (view path @path, emptied) show what
 * SOURCE shows: a directory of the same mode, and, when opaque, hiding no
 * SOURCE entry? */
static bool shows_source(struct jf_layer *l, int ufd, const char *name, const char *path)
{
	struct stat us, ss;
	_cleanup_closedir_ DIR *sd = NULL;
	struct dirent *x;
	int fd;

	if (fstatat(ufd, name, &us, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(us.st_mode) ||
	    jf_layer_lstat(l->srcfd, path, &ss) < 0 || !S_ISDIR(ss.st_mode) ||
	    (ss.st_mode & 07777) != (us.st_mode & 07777))
		return false;
	if (!jf_layer_is_opaque(ufd, name))
		return true;
	fd = jf_layer_openat(l->srcfd, path, O_RDONLY | O_DIRECTORY);
	sd = fd >= 0 ? fdopendir(fd) : NULL;
	if (!sd) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while ((x = readdir(sd)))
		if (strcmp(x->d_name, ".") && strcmp(x->d_name, ".."))
			return false;
	return true;
}

/* Removes a whiteout that hides nothing (SOURCE has no entry there any
 * more: an apply killed after the removal, or the host removed it too):
 * else it would hide a file the host makes there later. */
static int stale_whiteout(struct jf_layer *l, int ufd, const char *name, const char *path)
{
	struct stat st;
	int r;

	if (fstatat(ufd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !jf_layer_is_whiteout(ufd, name, &st) || jf_layer_lstat(l->srcfd, path, &st) == 0)
		return 0;
	r = jf_layer_drop(l, path);
	if (r < 0)
		return r;
	return unlinkat(ufd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
}

/* Removes the upper directories that show nothing SOURCE does not, once
 * empty (shows_source), and the whiteouts that hide nothing. */
static int prune(struct jf_layer *l, int ufd, const char *prefix)
{
	_cleanup_closedir_ DIR *d = jf_layer_opendir(ufd);
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		_cleanup_free_ char *p = NULL;
		_cleanup_close_ int sub = -1;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((prefix[0] ? asprintf(&p, "%s/%s", prefix, de->d_name)
			       : asprintf(&p, "%s", de->d_name)) < 0)
			return -ENOMEM;
		if (de->d_type != DT_DIR) {
			int r = stale_whiteout(l, ufd, de->d_name, p);
			if (r < 0)
				return r;
			continue;
		}
		sub = openat(ufd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 || prune(l, sub, p) < 0 || !shows_source(l, ufd, de->d_name, p))
			continue;
		if (unlinkat(ufd, de->d_name, AT_REMOVEDIR) < 0 && errno != ENOTEMPTY &&
		    errno != EEXIST)
			return -errno;
	}
	return 0;
}

/* pass 1: what is created or replaced, parents first. */
static int apply_put(struct run *u, const struct jf_change *e, bool *deferred)
{
	struct stat cur;
	int r;

	*deferred = false;
	if (S_ISDIR(e->new.st_mode))
		return put_dir(u->l, e->path, &e->new);
	if (jf_layer_lstat(u->l->srcfd, e->path, &cur) == 0 && S_ISDIR(cur.st_mode)) {
		*deferred = true; /* after pass 2 has emptied the directory */
		return 0;
	}
	r = put_file(u->l, e->path, &e->new);
	if (r == 0 && e->from && !S_ISDIR(e->old.st_mode))
		r = remove_src(u->l, e->from);
	if (r == 0 && e->from) {
		r = jf_layer_drop(u->l, e->from);
		if (r == 0)
			r = jf_layer_rm_rf(u->l->upperfd, e->from); /* its whiteout */
	}
	return r < 0 ? r : leave_upper(u->l, e->path);
}

/* pass 2: a deletion (entries before their directory). */
static int apply_delete(struct run *u, const struct jf_change *e)
{
	int r = remove_src(u->l, e->path);

	if (r == -ENOTEMPTY)
		return r;
	if (r == 0 && e->whiteout) {
		r = jf_layer_drop(u->l, e->path);
		if (r == 0)
			r = jf_layer_rm_rf(u->l->upperfd, e->path);
	}
	return r;
}

/* Is change @i of @c selected, or a directory above a selected one? */
static bool selected(const struct jf_changes *c, size_t i, const char *const *paths, size_t n)
{
	const struct jf_change *e = &c->v[i];

	if (n == 0)
		return true;
	for (size_t j = 0; j < n; j++) {
		if (jf_path_within(e->path, paths[j]) ||
		    (e->from && jf_path_within(e->from, paths[j])))
			return true;
		if (e->kind != JF_CH_DELETED && S_ISDIR(e->new.st_mode) &&
		    jf_path_within(paths[j], e->path))
			return true;
	}
	return false;
}

static void do_one(struct run *u, const struct jf_change *e, int pass, bool *deferred)
{
	/* pass 3 finishes what pass 1 checked (pass 2 has changed the directory since) */
	const char *action, *why = pass == 3 ? NULL : blocked(u, e, &action);
	int r;

	if (why) {
		report(u, e->path, action, why);
		return;
	}
	if (pass == 1) {
		r = apply_put(u, e, deferred);
		if (*deferred)
			return;
	} else if (pass == 2) {
		r = apply_delete(u, e);
	} else {
		r = remove_src(u->l, e->path);
		if (r == 0)
			r = put_file(u->l, e->path, &e->new);
		if (r == 0)
			r = leave_upper(u->l, e->path);
	}
	if (r == -ENOTEMPTY)
		report(u, e->path, "conflict",
		       "the source's directory holds entries the layer does not");
	else
		report(u, e->path, r < 0 ? "failed" : "applied", r < 0 ? strerror(-r) : NULL);
}

/* A replaced (opaque) directory whose every entry below was applied: SOURCE
 * now holds what it showed, so it need hide SOURCE no more. */
static void unhide(struct run *u, const char *path)
{
	size_t i;
	json_t *o;
	_cleanup_close_ int fd = -1;

	json_array_foreach(u->report, i, o)
	{
		const char *p = json_string_value(json_object_get(o, "path"));
		/* an escaped path may lie below @path: it counts as if it did */
		if ((!p || jf_path_within(p, path) ||
		     json_is_true(json_object_get(o, "path_escaped"))) &&
		    strcmp(json_string_value(json_object_get(o, "action")), "applied"))
			return;
	}
	fd = jf_layer_openat(u->l->upperfd, path, O_RDONLY | O_DIRECTORY);
	if (fd >= 0 && jf_layer_save(u->l, path, true) == 0)
		fremovexattr(fd, "user.overlay.opaque");
}

int jf_layer_apply(struct jf_layer *l, const char *const *paths, size_t n, bool force,
		   jf_layer_safe_fn safe, void *safe_data, void **ret_report)
{
	struct run u = {l, json_array(), force, safe, safe_data};
	struct jf_changes c = {0};
	_cleanup_free_ bool *later = NULL;
	int r = jf_layer_list(l, NULL, 0, &c);

	if (r < 0) {
		json_decref(u.report);
		return r;
	}
	later = calloc(c.n + 1, sizeof(*later));
	if (!later || !u.report) {
		jf_change_list_free(&c);
		json_decref(u.report);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c.n; i++)
		if (c.v[i].kind != JF_CH_DELETED && selected(&c, i, paths, n))
			do_one(&u, &c.v[i], 1, &later[i]);
	for (size_t i = c.n; i-- > 0;)
		if (c.v[i].kind == JF_CH_DELETED && selected(&c, i, paths, n))
			do_one(&u, &c.v[i], 2, &later[i]);
	for (size_t i = 0; i < c.n; i++)
		if (later[i])
			do_one(&u, &c.v[i], 3, &later[i]);
	for (size_t i = 0; i < c.n; i++)
		if (c.v[i].kind != JF_CH_DELETED && S_ISDIR(c.v[i].new.st_mode) &&
		    selected(&c, i, paths, n))
			unhide(&u, c.v[i].path);
	jf_change_list_free(&c);
	r = prune(l, l->upperfd, "");
	if (r < 0) {
		json_decref(u.report);
		return r;
	}
	*ret_report = u.report;
	return 0;
}

/* The replaced (opaque) directory above @e that is not itself discarded. */
static const char *inside_replaced(const struct jf_changes *c, const bool *sel, size_t i)
{
	for (size_t k = 0; k < c->n; k++)
		if (k != i && !sel[k] && (c->v[k].opaque || c->v[k].whiteout) &&
		    jf_path_within(c->v[i].path, c->v[k].path))
			return c->v[k].path;
	return NULL;
}

static int discard_one(struct jf_layer *l, const struct jf_change *e)
{
	int r = jf_layer_drop(l, e->path);

	if (r == 0 && (e->kind != JF_CH_DELETED || e->whiteout))
		r = jf_layer_rm_rf(l->upperfd, e->path);
	if (r == 0 && e->from) {
		r = jf_layer_drop(l, e->from);
		if (r == 0)
			r = jf_layer_rm_rf(l->upperfd, e->from);
	}
	return r;
}

int jf_layer_discard(struct jf_layer *l, const char *const *paths, size_t n, void **ret_report)
{
	json_t *rep = json_array();
	struct jf_changes c = {0};
	_cleanup_free_ bool *sel = NULL;
	int r = jf_layer_list(l, NULL, 0, &c);

	if (r < 0) {
		json_decref(rep);
		return r;
	}
	sel = calloc(c.n + 1, sizeof(*sel));
	for (size_t i = 0; sel && i < c.n; i++)
		for (size_t j = 0; j <= n && !sel[i]; j++)
			sel[i] =
				n == 0 ||
				(j < n && (jf_path_within(c.v[i].path, paths[j]) ||
					   (c.v[i].from && jf_path_within(c.v[i].from, paths[j]))));
	for (size_t i = c.n; sel && i-- > 0;) {
		const char *top = sel[i] ? inside_replaced(&c, sel, i) : NULL;

		if (!sel[i])
			continue;
		if (top) {
			add_report(rep, c.v[i].path, "refused",
				   "inside a replaced or deleted directory: discard that one");
			continue;
		}
		r = discard_one(l, &c.v[i]);
		add_report(rep, c.v[i].path, r < 0 ? "failed" : "discarded",
			   r < 0 ? strerror(-r) : NULL);
	}
	jf_change_list_free(&c);
	r = sel ? prune(l, l->upperfd, "") : -ENOMEM;
	if (r < 0) {
		json_decref(rep);
		return r;
	}
	*ret_report = rep;
	return 0;
}
