/* SPDX-License-Identifier: MIT */
/*
 * Checkpoints of the changes layer (docs/changes-format.md, checkpoints/):
 * taking one writes meta.json only; the first change of each upper path
 * after it keeps that path's pre-image (a hard link when the name goes
 * away, a clone or copy when it is written in place); restore replays the
 * pre-images newest first.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "layer-internal.h"

#define CP_NAME_MAX 64

/* The sequence number of checkpoint directory @name, or -1 if it is none. */
static long cp_seq(const char *name)
{
	char *end;
	long seq;

	if (strlen(name) < 8 || !isdigit((unsigned char)name[0]) || name[6] != '-' ||
	    strstr(name, ".tmp"))
		return -1;
	seq = strtol(name, &end, 10);
	return end == name + 6 ? seq : -1;
}

/* The checkpoint ids in checkpoints/, sorted by sequence, as a JSON array. */
static int cp_list(struct jf_layer *l, json_t **ret)
{
	int fd = openat(l->dirfd, "checkpoints", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_closedir_ DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	json_t *a = json_array();
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		json_decref(a);
		return -errno;
	}
	while ((de = readdir(d)))
		if (cp_seq(de->d_name) >= 0)
			json_array_append_new(a, json_string(de->d_name));
	/* ids start with six digits: their byte order is their sequence order */
	for (size_t i = 1; i < json_array_size(a); i++)
		for (size_t j = i; j > 0; j--) {
			json_t *x = json_array_get(a, j - 1), *y = json_array_get(a, j);
			if (strcmp(json_string_value(x), json_string_value(y)) <= 0)
				break;
			json_incref(x);
			json_array_set(a, j - 1, y);
			json_array_set_new(a, j, x);
		}
	*ret = a;
	return 0;
}

/* The saved.jsonl records of checkpoint @cpfd, in order. */
static json_t *saved_lines(int cpfd)
{
	int fd = openat(cpfd, "saved.jsonl", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_fclose_ FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	_cleanup_free_ char *line = NULL;
	json_t *a = json_array();
	size_t cap = 0;

	if (fd >= 0 && !f)
		close(fd);
	while (f && getline(&line, &cap, f) > 0) {
		json_t *rec = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);

		if (json_is_object(rec))
			jf_layer_rec_unhex(rec);
		if (json_is_object(rec) && json_string_value(json_object_get(rec, "path")))
			json_array_append(a, rec);
		json_decref(rec);
	}
	return a;
}

int jf_layer_cp_load(struct jf_layer *l)
{
	json_t *ids = NULL, *lines, *rec;
	size_t i;
	int r = cp_list(l, &ids);

	if (r < 0)
		return r == -ENOENT ? 0 : r;
	int *fds[] = {&l->cpfd, &l->cpsfd, &l->cpjfd};
	for (size_t k = 0; k < ARRAY_SIZE(fds); k++) {
		if (*fds[k] >= 0)
			close(*fds[k]);
		*fds[k] = -1;
	}
	l->cpseq = -1;
	json_object_clear(l->saved);
	l->nsaved = 0;
	if (json_array_size(ids) > 0) {
		const char *id = json_string_value(json_array_get(ids, json_array_size(ids) - 1));
		char path[128];

		snprintf(path, sizeof(path), "checkpoints/%s", id);
		l->cpfd = openat(l->dirfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (l->cpfd < 0)
			r = -errno;
		l->cpseq = cp_seq(id);
	}
	json_decref(ids);
	if (l->cpfd < 0)
		return r;
	l->cpsfd = openat(l->cpfd, "saved", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	l->cpjfd = openat(l->cpfd, "saved.jsonl",
			  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (l->cpsfd < 0 || l->cpjfd < 0)
		return -errno;
	r = jf_layer_end_line(l->cpjfd);
	if (r < 0)
		return r;
	lines = saved_lines(l->cpfd);
	json_array_foreach(lines, i, rec)
	{
		size_t n = (size_t)json_integer_value(json_object_get(rec, "n"));
		json_object_set_nocheck(l->saved, json_string_value(json_object_get(rec, "path")),
					rec);
		if (n + 1 > l->nsaved)
			l->nsaved = n + 1;
	}
	json_decref(lines);
	return 0;
}

static bool valid_name(const char *name)
{
	size_t n = strlen(name);

	if (n < 1 || n > CP_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
			return false;
	return true;
}

/* Writes @s as file @name of @dirfd, fsync'd unless empty (then its
 * directory's fsync keeps it). */
static int write_small(int dirfd, const char *name, const char *s)
{
	_cleanup_close_ int fd =
		openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	size_t len = strlen(s);

	if (fd < 0 || write(fd, s, len) != (ssize_t)len || (len && fsync(fd) < 0))
		return -errno;
	return 0;
}

/* Makes checkpoints/@id.tmp with meta.json, then renames it to @id. */
static int cp_make(struct jf_layer *l, const char *id, long seq, const char *name)
{
	_cleanup_close_ int cps = -1, fd = -1;
	_cleanup_free_ char *tmp = NULL, *meta = NULL;
	struct timespec now;
	struct stat st;

	if (fstat(l->jfd, &st) < 0 || asprintf(&tmp, "%s.tmp", id) < 0)
		return -ENOMEM;
	clock_gettime(CLOCK_REALTIME, &now);
	if (asprintf(&meta,
		     "{\"seq\":%ld,\"name\":\"%s\",\"created_ns\":%lld,\"journal_bytes\":%lld}\n",
		     seq, name, (long long)now.tv_sec * 1000000000LL + now.tv_nsec,
		     (long long)st.st_size) < 0)
		return -ENOMEM;
	cps = openat(l->dirfd, "checkpoints", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cps < 0)
		return -errno;
	jf_layer_rm_rf(cps, tmp);
	if (mkdirat(cps, tmp, 0700) < 0)
		return -errno;
	fd = openat(cps, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || mkdirat(fd, "saved", 0700) < 0)
		return -errno;
	if (write_small(fd, "meta.json", meta) < 0 || write_small(fd, "saved.jsonl", "") < 0 ||
	    renameat(cps, tmp, cps, id) < 0 || fsync(cps) < 0)
		return -errno;
	return 0;
}

int jf_layer_checkpoint(struct jf_layer *l, const char *name, char **ret_id)
{
	_cleanup_free_ char *id = NULL, *dflt = NULL;
	json_t *ids = NULL, *v;
	long seq = 1;
	size_t i;
	int r = cp_list(l, &ids);

	if (r < 0)
		return r;
	json_array_foreach(ids, i, v)
	{
		const char *s = json_string_value(v);
		if (cp_seq(s) >= seq)
			seq = cp_seq(s) + 1;
		if (name && !strcmp(s + 7, name))
			r = -EEXIST;
	}
	json_decref(ids);
	if (r < 0)
		return r;
	if (name && !valid_name(name))
		return -EINVAL;
	if (seq > 999999)
		return -EOVERFLOW;
	if (!name && asprintf(&dflt, "cp%06ld", seq) < 0)
		return -ENOMEM;
	if (asprintf(&id, "%06ld-%s", seq, name ? name : dflt) < 0)
		return -ENOMEM;
	r = cp_make(l, id, seq, name ? name : dflt);
	if (r < 0)
		return r;
	r = jf_layer_cp_load(l);
	if (r < 0)
		return r;
	*ret_id = steal_ptr(&id);
	return 0;
}

/* Appends @rec (consumed) to the newest checkpoint's saved.jsonl. */
static int saved_append(struct jf_layer *l, json_t *rec)
{
	_cleanup_free_ char *s = json_dumps(rec, JSON_COMPACT), *line = NULL;
	int fd = l->cpjfd;
	int len = s ? asprintf(&line, "%s\n", s) : -1;

	if (len < 0 || fd < 0 || write(fd, line, (size_t)len) != len) {
		json_decref(rec);
		return -EIO;
	}
	jf_layer_rec_unhex(rec);
	json_object_set_nocheck(l->saved, json_string_value(json_object_get(rec, "path")), rec);
	json_decref(rec);
	return 0;
}

/* Is @path, or a directory above it, saved as absent (new since)? */
static bool saved_new(const struct jf_layer *l, const char *path)
{
	_cleanup_free_ char *p = strdup(path);
	char *slash;

	if (!p)
		return false;
	for (;;) {
		json_t *rec = json_object_get(l->saved, p);
		if (rec)
			return !strcmp(json_string_value(json_object_get(rec, "state")), "absent");
		slash = strrchr(p, '/');
		if (!slash)
			return false;
		*slash = '\0';
	}
}

static int save_path(struct jf_layer *l, const char *path, bool in_place);

/* Keeps every entry of upper directory @path (@fd) before the name goes. */
static int save_children(struct jf_layer *l, const char *path, int fd)
{
	_cleanup_closedir_ DIR *d = jf_layer_opendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while (r == 0 && (de = readdir(d))) {
		_cleanup_free_ char *child = NULL;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (asprintf(&child, "%s/%s", path, de->d_name) < 0)
			return -ENOMEM;
		r = save_path(l, child, false);
	}
	return r;
}

/* Copies regular file @in (@st) to @name of @sfd with its mode, times and
 * xattrs: a restore gives back the file as it was. */
static int copy_saved(int in, int sfd, const char *name, const struct stat *st)
{
	_cleanup_close_ int out = -1;
	int r = jf_layer_copy_file(in, sfd, name, st->st_mode, false);

	if (r < 0)
		return r;
	out = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (out < 0 || futimens(out, (struct timespec[]){st->st_atim, st->st_mtim}) < 0)
		return -errno;
	return jf_layer_copy_xattrs(in, out);
}

/* Keeps the upper entry @name of @pfd (lstat @st) as saved/@n. */
static int save_entry(struct jf_layer *l, int pfd, const char *name, const struct stat *st,
		      bool in_place, const char *n, bool *link)
{
	int sfd = l->cpsfd;
	_cleanup_close_ int in = -1, out = -1;

	*link = false;
	unlinkat(sfd, n, 0); /* a save cut short by a kill */
	if (S_ISDIR(st->st_mode)) {
		if (mkdirat(sfd, n, st->st_mode & 07777) < 0)
			return -errno;
		in = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		out = openat(sfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (in < 0 || out < 0 || fchmod(out, st->st_mode & 07777) < 0)
			return -errno;
		return jf_layer_copy_xattrs(in, out);
	}
	if (!S_ISREG(st->st_mode) || (!in_place && st->st_nlink == 1)) {
		*link = S_ISREG(st->st_mode);
		return linkat(pfd, name, sfd, n, 0) < 0 ? -errno : 0;
	}
	in = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	return in < 0 ? -errno : copy_saved(in, sfd, n, st);
}

static int save_path(struct jf_layer *l, const char *path, bool in_place)
{
	const char *name;
	_cleanup_close_ int pfd = -1;
	struct stat st;
	char n[32];
	bool link = false;
	int r;

	if (json_object_get(l->saved, path) || saved_new(l, path))
		return 0;
	pfd = jf_layer_parent(l->upperfd, path, &name);
	r = pfd < 0 ? pfd : fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	if (r == -ENOENT || r == -ENOTDIR || r == -ELOOP)
		return saved_append(l, jf_layer_rec(json_pack("{ss sI}", "state", "absent", "n",
							      (json_int_t)l->nsaved++),
						    "path", path, NULL, NULL));
	if (r < 0)
		return r;
	if (S_ISDIR(st.st_mode) && !in_place) {
		_cleanup_close_ int dfd =
			openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* the entries first: restore, in reverse, makes the directory first */
		r = dfd < 0 ? -errno : save_children(l, path, dfd);
		if (r < 0)
			return r;
	}
	snprintf(n, sizeof(n), "%zu", l->nsaved);
	r = save_entry(l, pfd, name, &st, in_place, n, &link);
	if (r < 0)
		return r;
	return saved_append(l, jf_layer_rec(json_pack("{ss sI sb}", "state", "saved", "n",
						      (json_int_t)l->nsaved++, "link", link),
					    "path", path, NULL, NULL));
}

int jf_layer_save(struct jf_layer *l, const char *path, bool in_place)
{
	if (l->cpfd < 0)
		return 0;
	return save_path(l, path, in_place);
}

int jf_layer_saved_moved(struct jf_layer *l, const char *from)
{
	int sfd = l->cpsfd;
	const char *k;
	json_t *rec;

	if (l->cpfd < 0)
		return 0;
	json_object_foreach(l->saved, k, rec)
	{
		char n[32], tmp[40];
		struct stat st;
		_cleanup_close_ int in = -1;
		int r;

		if (!jf_path_within(k, from) || !json_is_true(json_object_get(rec, "link")))
			continue;
		snprintf(n, sizeof(n), "%lld",
			 (long long)json_integer_value(json_object_get(rec, "n")));
		snprintf(tmp, sizeof(tmp), "%s.tmp", n);
		if (fstatat(sfd, n, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_nlink < 2)
			continue;
		in = openat(sfd, n, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		unlinkat(sfd, tmp, 0);
		r = in < 0 ? -errno : copy_saved(in, sfd, tmp, &st);
		if (r == 0 && renameat(sfd, tmp, sfd, n) < 0)
			r = -errno;
		if (r < 0)
			return r;
	}
	return 0;
}

/* Makes the directories above upper @path that are missing (a replay cut
 * short may have left them out). */
static int upper_parents(struct jf_layer *l, const char *path)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
		const char *name;
		_cleanup_close_ int pfd = -1;

		*s = '\0';
		pfd = jf_layer_parent(l->upperfd, p, &name);
		if (pfd < 0)
			return pfd;
		if (mkdirat(pfd, name, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

/* Sets upper directory @fd's user.* xattrs to those of @from. */
static int reset_xattrs(int fd, int from)
{
	char names[8192];
	ssize_t len = flistxattr(fd, names, sizeof(names));

	for (char *n = names; len > 0 && n < names + len; n += strlen(n) + 1)
		if (!strncmp(n, "user.", 5) && fremovexattr(fd, n) < 0)
			return -errno;
	return jf_layer_copy_xattrs(from, fd);
}

/* Puts saved/@n (@sfd) back at upper @path. */
static int put_back(struct jf_layer *l, int sfd, const char *n, const char *path)
{
	const char *name;
	_cleanup_close_ int pfd = -1, from = -1, to = -1;
	struct stat st, cur;
	bool has, isdir;
	int r;

	if (fstatat(sfd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno; /* put back by a replay cut short */
	pfd = jf_layer_parent(l->upperfd, path, &name);
	if (pfd == -ENOENT) { /* only a replay cut short leaves a parent out */
		r = upper_parents(l, path);
		pfd = r < 0 ? r : jf_layer_parent(l->upperfd, path, &name);
	}
	if (pfd < 0)
		return pfd;
	has = fstatat(pfd, name, &cur, AT_SYMLINK_NOFOLLOW) == 0;
	isdir = has && S_ISDIR(cur.st_mode);
	if (isdir && !S_ISDIR(st.st_mode))
		r = jf_layer_rm_rf(l->upperfd, path);
	else if (has && !isdir)
		r = unlinkat(pfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	else
		r = 0;
	if (r < 0)
		return r;
	if (!S_ISDIR(st.st_mode))
		return renameat(sfd, n, pfd, name) < 0 ? -errno : 0;
	if (!isdir && mkdirat(pfd, name, st.st_mode & 07777) < 0)
		return -errno;
	from = openat(sfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	to = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (from < 0 || to < 0 || fchmod(to, st.st_mode & 07777) < 0)
		return -errno;
	return reset_xattrs(to, from);
}

/* Replays checkpoint @cpfd's saved.jsonl in reverse. */
static int replay(struct jf_layer *l, int cpfd)
{
	json_t *lines = saved_lines(cpfd);
	_cleanup_close_ int sfd = openat(cpfd, "saved", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = sfd < 0 ? -errno : 0;

	for (size_t i = json_array_size(lines); r == 0 && i-- > 0;) {
		json_t *rec = json_array_get(lines, i);
		const char *path = json_string_value(json_object_get(rec, "path"));
		char n[32];

		snprintf(n, sizeof(n), "%lld",
			 (long long)json_integer_value(json_object_get(rec, "n")));
		if (!strcmp(json_string_value(json_object_get(rec, "state")), "absent"))
			r = jf_layer_rm_rf(l->upperfd, path);
		else
			r = put_back(l, sfd, n, path);
	}
	json_decref(lines);
	return r;
}

/* The index in @ids of checkpoint @id: an id, else the newest of that
 * name, else a sequence number. -1 if none. */
static long cp_find(json_t *ids, const char *id)
{
	char *end;
	long seq = strtol(id, &end, 10);

	for (size_t i = json_array_size(ids); i-- > 0;)
		if (!strcmp(json_string_value(json_array_get(ids, i)), id))
			return (long)i;
	for (size_t i = json_array_size(ids); i-- > 0;)
		if (!strcmp(json_string_value(json_array_get(ids, i)) + 7, id))
			return (long)i;
	for (size_t i = json_array_size(ids); *id && !*end && i-- > 0;)
		if (cp_seq(json_string_value(json_array_get(ids, i))) == seq)
			return (long)i;
	return -1;
}

/* Undoes checkpoint @id (of checkpoints/): replays it, then removes it, or
 * with @keep empties it. */
static int undo_one(struct jf_layer *l, const char *id, bool keep, long long *journal_bytes)
{
	_cleanup_free_ char *p = NULL, *meta = NULL;
	_cleanup_close_ int cpfd = -1;
	size_t len;
	json_t *m;
	int r;

	if (asprintf(&p, "checkpoints/%s", id) < 0)
		return -ENOMEM;
	cpfd = openat(l->dirfd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cpfd < 0)
		return -errno;
	r = jf_layer_read_file(cpfd, "meta.json", 1 << 16, &meta, &len);
	m = r < 0 ? NULL : json_loads(meta, 0, NULL);
	if (!m)
		return r < 0 ? r : -EINVAL;
	*journal_bytes = json_integer_value(json_object_get(m, "journal_bytes"));
	json_decref(m);
	r = replay(l, cpfd);
	if (r < 0)
		return r;
	if (!keep)
		return jf_layer_rm_rf(l->dirfd, p);
	r = jf_layer_rm_rf(cpfd, "saved");
	if (r == 0 && mkdirat(cpfd, "saved", 0700) < 0)
		r = -errno;
	return r < 0 ? r : write_small(cpfd, "saved.jsonl", "");
}

int jf_layer_restore(struct jf_layer *l, const char *id)
{
	json_t *ids = NULL;
	long long bytes = 0;
	long at;
	int r = cp_list(l, &ids);

	if (r < 0)
		return r;
	at = cp_find(ids, id);
	if (at < 0)
		r = -ENOENT;
	for (size_t i = json_array_size(ids); r == 0 && i-- > (size_t)at;)
		r = undo_one(l, json_string_value(json_array_get(ids, i)), i == (size_t)at, &bytes);
	json_decref(ids);
	if (r < 0)
		return r;
	if (ftruncate(l->jfd, bytes) < 0 || fsync(l->jfd) < 0)
		return -errno;
	json_object_clear(l->origins);
	json_array_clear(l->renames);
	r = jf_layer_journal_reload(l);
	return r < 0 ? r : jf_layer_cp_load(l);
}
