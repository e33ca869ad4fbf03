/* SPDX-License-Identifier: MIT */
/*
 * The changes of the layer: upper/ read the way overlayfs reads it (an
 * entry hides SOURCE's, a whiteout deletes it, an opaque directory hides
 * all of SOURCE below it), compared with SOURCE, with renames followed
 * through the journal. Every deletion is listed one by one, also below a
 * deleted or replaced directory: a review never misses one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "layer-internal.h"

void jf_change_list_free(struct jf_changes *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].path);
		free(c->v[i].from);
	}
	free(c->v);
	*c = (struct jf_changes){0};
}

static struct jf_change *add(struct jf_changes *c, enum jf_change_kind kind, const char *path)
{
	struct jf_change *e;

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		void *v = realloc(c->v, cap * sizeof(*c->v));
		if (!v)
			return NULL;
		c->v = v;
		c->cap = cap;
	}
	e = &c->v[c->n];
	*e = (struct jf_change){.kind = kind, .path = strdup(path)};
	if (!e->path)
		return NULL;
	c->n++;
	return e;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of directory @fd (borrowed), NULL-terminated, in *@ret. */
static int names_of(int fd, char ***ret, size_t *count)
{
	_cleanup_closedir_ DIR *d = jf_layer_opendir(fd);
	char **v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n + 1 >= cap) {
			cap = cap ? 2 * cap : 16;
			char **nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto nomem;
			v = nv;
		}
		v[n] = strdup(de->d_name);
		if (!v[n])
			goto nomem;
		n++;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_names);
	if (v)
		v[n] = NULL;
	*ret = v;
	*count = n;
	return 0;
nomem:
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return -ENOMEM;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static char *join(const char *prefix, const char *name)
{
	char *p;

	if (!prefix[0])
		return strdup(name);
	return asprintf(&p, "%s/%s", prefix, name) < 0 ? NULL : p;
}

static int deleted_below(int fd, const char *path, struct jf_changes *c);

/* Lists SOURCE's entry @name of directory @fd, view path @p, as deleted,
 * and for a directory every entry below it. */
static int add_deleted(int fd, const char *name, const char *p, struct jf_changes *c)
{
	struct jf_change *e;
	struct stat st;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	e = add(c, JF_CH_DELETED, p);
	if (!e)
		return -ENOMEM;
	e->old = st;
	if (S_ISDIR(st.st_mode)) {
		_cleanup_close_ int sub =
			openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		return sub < 0 ? -errno : deleted_below(sub, p, c);
	}
	return 0;
}

/* Lists every SOURCE entry below directory @path (@fd) as deleted. */
static int deleted_below(int fd, const char *path, struct jf_changes *c)
{
	char **names = NULL;
	size_t n = 0;
	int r = names_of(fd, &names, &n);

	for (size_t i = 0; r == 0 && i < n; i++) {
		_cleanup_free_ char *p = join(path, names[i]);

		r = p ? add_deleted(fd, names[i], p, c) : -ENOMEM;
	}
	free_names(names, n);
	return r;
}

/* Do the bytes of two regular files (or two symlinks' targets) differ? */
static bool differ(int ufd, int sfd, const char *name, const struct stat *us, const struct stat *ss)
{
	char a[65536], b[65536];
	_cleanup_close_ int fa = -1, fb = -1;

	if (S_ISLNK(us->st_mode)) {
		ssize_t na = readlinkat(ufd, name, a, sizeof(a)),
			nb = readlinkat(sfd, name, b, sizeof(b));
		return na != nb || na < 0 || memcmp(a, b, (size_t)na) != 0;
	}
	if (!S_ISREG(us->st_mode))
		return us->st_rdev != ss->st_rdev;
	if (us->st_size != ss->st_size)
		return true;
	fa = openat(ufd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	fb = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fa < 0 || fb < 0)
		return true;
	for (off_t off = 0;;) {
		ssize_t na = pread(fa, a, sizeof(a), off), nb = pread(fb, b, sizeof(b), off);
		if (na != nb || na < 0)
			return true;
		if (na == 0)
			return false;
		if (memcmp(a, b, (size_t)na) != 0)
			return true;
		off += na;
	}
}

static int walk(int ufd, int sfd, const char *prefix, bool opaque, struct jf_changes *c);

/* One upper entry @name of @ufd at view path @path against SOURCE's (@sfd
 * may be -1: none there). */
static int walk_entry(int ufd, int sfd, const char *name, const char *path, struct jf_changes *c)
{
	struct stat us, ss;
	bool has = sfd >= 0 && fstatat(sfd, name, &ss, AT_SYMLINK_NOFOLLOW) == 0;
	struct jf_change *e = NULL;
	_cleanup_close_ int usub = -1, ssub = -1;

	if (fstatat(ufd, name, &us, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (has && S_ISDIR(ss.st_mode))
		ssub = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (jf_layer_is_whiteout(ufd, name, &us)) {
		if (!has)
			return 0;
		e = add(c, JF_CH_DELETED, path);
		if (!e)
			return -ENOMEM;
		e->old = ss;
		e->whiteout = true;
		return ssub >= 0 ? deleted_below(ssub, path, c) : 0;
	}
	if (!has) {
		e = add(c, JF_CH_ADDED, path);
	} else if ((us.st_mode & S_IFMT) != (ss.st_mode & S_IFMT)) {
		e = add(c, JF_CH_TYPE, path);
	} else {
		bool opq = S_ISDIR(us.st_mode) && jf_layer_is_opaque(ufd, name);
		bool content = !S_ISDIR(us.st_mode) && differ(ufd, sfd, name, &us, &ss);
		if (content || opq || (us.st_mode & 07777) != (ss.st_mode & 07777)) {
			e = add(c, JF_CH_MODIFIED, path);
			if (e) {
				e->content = content;
				e->opaque = opq;
			}
		} else if (!S_ISDIR(us.st_mode)) {
			return 0; /* a copy-up that changed nothing */
		}
	}
	if (e) {
		e->new = us;
		if (has)
			e->old = ss;
	} else if (!S_ISDIR(us.st_mode) || (has && !S_ISDIR(us.st_mode))) {
		return -ENOMEM;
	}
	if (has && S_ISDIR(ss.st_mode) && !S_ISDIR(us.st_mode))
		return ssub >= 0 ? deleted_below(ssub, path, c) : -errno;
	if (!S_ISDIR(us.st_mode))
		return 0;
	usub = openat(ufd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (usub < 0)
		return -errno;
	return walk(usub, ssub, path, jf_layer_is_opaque(ufd, name), c);
}

/* Upper directory @ufd at @prefix against SOURCE's @sfd (-1: none). */
static int walk(int ufd, int sfd, const char *prefix, bool opaque, struct jf_changes *c)
{
	char **names = NULL, **snames = NULL;
	size_t n = 0, sn = 0, j = 0;
	int r = names_of(ufd, &names, &n);

	for (size_t i = 0; r == 0 && i < n; i++) {
		_cleanup_free_ char *p = join(prefix, names[i]);
		r = p ? walk_entry(ufd, sfd, names[i], p, c) : -ENOMEM;
	}
	if (r == 0 && opaque && sfd >= 0)
		r = names_of(sfd, &snames, &sn);
	/* below an opaque directory, what upper/ does not name is gone */
	for (size_t i = 0; r == 0 && i < sn; i++) {
		_cleanup_free_ char *p = join(prefix, snames[i]);

		while (j < n && strcmp(names[j], snames[i]) < 0)
			j++;
		if (j < n && !strcmp(names[j], snames[i]))
			continue;
		r = p ? add_deleted(sfd, snames[i], p, c) : -ENOMEM;
	}
	free_names(names, n);
	free_names(snames, sn);
	return r;
}

/* Pairs an added entry with the whiteout of the SOURCE name it was renamed
 * from (the journal's renames): one R instead of a D and an A. */
static int pair_renames(struct jf_layer *l, struct jf_changes *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct jf_change *a = &c->v[i];
		char *from = NULL;
		int r;

		if (a->kind != JF_CH_ADDED)
			continue;
		r = jf_layer_renamed_from(l, a->path, &from);
		if (r < 0)
			return r;
		for (size_t k = 0; from && k < c->n; k++) {
			struct jf_change *d = &c->v[k];
			if (d->kind != JF_CH_DELETED || !d->whiteout || strcmp(d->path, from) ||
			    (d->old.st_mode & S_IFMT) != (a->new.st_mode &S_IFMT))
				continue;
			a->kind = JF_CH_RENAMED;
			a->old = d->old;
			a->from = steal_ptr(&from);
			a->content = true; /* told apart below */
			free(d->path);
			memmove(d, d + 1, (c->n - k - 1) * sizeof(*d));
			c->n--;
			if (k < i)
				i--;
			break;
		}
		free(from);
	}
	return 0;
}

/* Does the renamed file differ from its SOURCE original? */
static void rename_content(struct jf_layer *l, struct jf_change *e)
{
	_cleanup_free_ char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;

	if (S_ISDIR(e->new.st_mode)) {
		e->content = false;
		return;
	}
	if (S_ISLNK(e->new.st_mode)) {
		char x[4096], y[4096];
		const char *n1, *n2;
		_cleanup_close_ int p1 = jf_layer_parent(l->upperfd, e->path, &n1);
		_cleanup_close_ int p2 = jf_layer_parent(l->srcfd, e->from, &n2);
		ssize_t s1 = p1 < 0 ? -1 : readlinkat(p1, n1, x, sizeof(x));
		ssize_t s2 = p2 < 0 ? -1 : readlinkat(p2, n2, y, sizeof(y));
		e->content = s1 != s2 || s1 < 0 || memcmp(x, y, (size_t)s1) != 0;
		return;
	}
	if (e->new.st_size != e->old.st_size)
		return;
	if (jf_layer_read_file(l->upperfd, e->path, JF_LAYER_HASH_MAX, &a, &na) == 0 &&
	    jf_layer_read_file(l->srcfd, e->from, JF_LAYER_HASH_MAX, &b, &nb) == 0)
		e->content = na != nb || memcmp(a, b, na) != 0;
}

int jf_layer_list(struct jf_layer *l, const char *const *paths, size_t n, struct jf_changes *out)
{
	_cleanup_close_ int sfd = openat(l->srcfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct jf_changes c = {0};
	size_t k = 0;
	int r;

	if (sfd < 0)
		return -errno;
	r = walk(l->upperfd, sfd, "", jf_layer_is_opaque(l->upperfd, "."), &c);
	if (r == 0)
		r = pair_renames(l, &c);
	if (r < 0) {
		jf_change_list_free(&c);
		return r;
	}
	for (size_t i = 0; i < c.n; i++) {
		bool keep = n == 0;

		if (c.v[i].kind == JF_CH_RENAMED)
			rename_content(l, &c.v[i]);
		for (size_t j = 0; !keep && j < n; j++)
			keep = jf_path_within(c.v[i].path, paths[j]) ||
			       (c.v[i].from && jf_path_within(c.v[i].from, paths[j]));
		if (keep) {
			c.v[k++] = c.v[i];
		} else {
			free(c.v[i].path);
			free(c.v[i].from);
		}
	}
	c.n = k;
	*out = c;
	return 0;
}

int jf_layer_changes(struct jf_layer *l, const char *const *paths, size_t n, void **ret_json)
{
	struct jf_changes c = {0};
	json_t *a;
	int r = jf_layer_list(l, paths, n, &c);

	if (r < 0)
		return r;
	a = json_array();
	for (size_t i = 0; a && i < c.n; i++) {
		const struct jf_change *e = &c.v[i];
		char st[2] = {(char)e->kind, 0};
		const struct stat *now = e->kind == JF_CH_DELETED ? &e->old : &e->new;
		bool esc = false, fesc = false;
		json_t *o = json_pack(
			"{ss so* ss sI sI}", "status", st, "path",
			jf_layer_path_json(e->path, &esc), "type", jf_type_name(now->st_mode),
			"size", (json_int_t)(e->kind == JF_CH_DELETED ? 0 : e->new.st_size), "mode",
			(json_int_t)(e->kind == JF_CH_DELETED ? 0 : e->new.st_mode & 07777));

		if (!o || !json_object_get(o, "path")) { /* never a list cut short */
			json_decref(o);
			json_decref(a);
			jf_change_list_free(&c);
			return -ENOMEM;
		}
		if (esc)
			json_object_set_new(o, "path_escaped", json_true());
		if (e->kind != JF_CH_ADDED) {
			json_object_set_new(o, "old_type",
					    json_string(jf_type_name(e->old.st_mode)));
			json_object_set_new(o, "old_size", json_integer(e->old.st_size));
			json_object_set_new(o, "old_mode", json_integer(e->old.st_mode & 07777));
		}
		if (e->from)
			json_object_set_new(o, "from", jf_layer_path_json(e->from, &fesc));
		if (fesc)
			json_object_set_new(o, "from_escaped", json_true());
		if (e->opaque)
			json_object_set_new(o, "replaced", json_true());
		if (e->kind == JF_CH_MODIFIED || e->kind == JF_CH_RENAMED)
			json_object_set_new(o, "content", json_boolean(e->content));
		json_array_append_new(a, o);
	}
	jf_change_list_free(&c);
	if (!a)
		return -ENOMEM;
	*ret_json = a;
	return 0;
}
