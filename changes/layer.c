/* SPDX-License-Identifier: MIT */
/*
 * The changes layer DIR (docs/changes-format.md): opening and checking it,
 * its lock, and its journal of origins and renames. Checkpoints are in
 * checkpoint.c, the list of changes in changes.c, apply and discard in
 * apply.c, the diff in diff.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "layer-internal.h"

static void set_err(char **ret_err, const char *fmt, ...) _printf_(2, 3);
static void set_err(char **ret_err, const char *fmt, ...)
{
	va_list ap;

	if (!ret_err)
		return;
	va_start(ap, fmt);
	if (vasprintf(ret_err, fmt, ap) < 0)
		*ret_err = NULL;
	va_end(ap);
}

void jf_layer_free(struct jf_layer *l)
{
	if (!l)
		return;
	int fds[] = {l->dirfd, l->upperfd, l->srcfd, l->lockfd,
		     l->jfd,   l->cpfd,	   l->cpsfd, l->cpjfd};
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	json_decref(l->origins);
	json_decref(l->renames);
	json_decref(l->saved);
	free(l->dir);
	free(l->upper_path);
	free(l->work_path);
	free(l);
}

const char *jf_layer_upper_path(const struct jf_layer *l)
{
	return l->upper_path;
}

const char *jf_layer_work_path(const struct jf_layer *l)
{
	return l->work_path;
}

int jf_layer_upper_fd(const struct jf_layer *l)
{
	return l->upperfd;
}

bool jf_layer_is_dir(struct jf_layer *l, const char *path)
{
	struct stat st;

	return (jf_layer_lstat(l->upperfd, path, &st) == 0 && S_ISDIR(st.st_mode)) ||
	       (jf_layer_lstat(l->srcfd, path, &st) == 0 && S_ISDIR(st.st_mode));
}

int jf_layer_lock(struct jf_layer *l)
{
	if (l->lockfd < 0) {
		l->lockfd =
			openat(l->dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (l->lockfd < 0)
			return -errno;
	}
	if (flock(l->lockfd, LOCK_EX | LOCK_NB) < 0)
		return errno == EAGAIN ? -EWOULDBLOCK : -errno;
	return 0;
}

/* Applies one journal record to the tables (a reader's view of it). */
static void journal_apply(struct jf_layer *l, json_t *rec)
{
	const char *op = json_string_value(json_object_get(rec, "op"));
	const char *p = json_string_value(json_object_get(rec, "path"));

	if (!op)
		return;
	if (!strcmp(op, "origin") && p && !json_object_get(l->origins, p)) {
		json_object_set_nocheck(l->origins, p, rec);
	} else if (!strcmp(op, "rename")) {
		const char *from = json_string_value(json_object_get(rec, "from"));
		const char *to = json_string_value(json_object_get(rec, "to"));
		if (from && to)
			json_array_append_new(l->renames,
					      json_pack("[oo]", json_string_nocheck(from),
							json_string_nocheck(to)));
	} else if (!strcmp(op, "drop") && p) {
		const char *k;
		json_t *v, *tmp;
		size_t i;

		json_object_foreach_safe(l->origins, tmp, k, v) if (jf_path_within(k, p))
			json_object_del(l->origins, k);
		for (i = json_array_size(l->renames); i-- > 0;) {
			json_t *r = json_array_get(l->renames, i);
			if (jf_path_within(json_string_value(json_array_get(r, 0)), p) ||
			    jf_path_within(json_string_value(json_array_get(r, 1)), p))
				json_array_remove(l->renames, i);
		}
	}
}

/* Reads journal.jsonl into the tables; a torn or unreadable line is skipped. */
int jf_layer_journal_reload(struct jf_layer *l)
{
	int fd = openat(l->dirfd, "journal.jsonl", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_fclose_ FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!f) {
		close(fd);
		return -errno;
	}
	while (getline(&line, &cap, f) > 0) {
		json_t *rec = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);

		if (json_is_object(rec)) {
			jf_layer_rec_unhex(rec);
			journal_apply(l, rec);
		}
		json_decref(rec);
	}
	return 0;
}

int jf_layer_journal(struct jf_layer *l, json_t *rec)
{
	_cleanup_free_ char *s = json_dumps(rec, JSON_COMPACT);
	_cleanup_free_ char *line = NULL;
	ssize_t n;
	int len;

	if (!s) {
		json_decref(rec);
		return -ENOMEM;
	}
	len = asprintf(&line, "%s\n", s);
	if (len < 0) {
		json_decref(rec);
		return -ENOMEM;
	}
	n = write(l->jfd, line, (size_t)len);
	if (n != len) {
		json_decref(rec);
		return n < 0 ? -errno : -EIO;
	}
	jf_layer_rec_unhex(rec);
	journal_apply(l, rec);
	json_decref(rec);
	return 0;
}

json_t *jf_layer_origin(const struct jf_layer *l, const char *path)
{
	return json_object_get(l->origins, path);
}

int jf_layer_renamed_from(const struct jf_layer *l, const char *path, char **ret)
{
	_cleanup_free_ char *cur = strdup(path);
	bool moved = false;

	if (!cur)
		return -ENOMEM;
	for (size_t i = json_array_size(l->renames); i-- > 0;) {
		json_t *r = json_array_get(l->renames, i);
		const char *from = json_string_value(json_array_get(r, 0));
		const char *to = json_string_value(json_array_get(r, 1));
		char *next;

		if (!jf_path_within(cur, to))
			continue;
		if (asprintf(&next, "%s%s", from, cur + strlen(to)) < 0)
			return -ENOMEM;
		free(cur);
		cur = next;
		moved = true;
	}
	*ret = moved ? steal_ptr(&cur) : NULL;
	return 0;
}

static long long ns_of(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

int jf_layer_note_origin(struct jf_layer *l, const char *path)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	char hex[65];
	bool hashed = false;
	json_t *rec;
	int r;

	if (jf_layer_origin(l, path))
		return 0;
	r = jf_layer_lstat(l->srcfd, path, &st);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size <= JF_LAYER_HASH_MAX) {
		fd = jf_layer_openat(l->srcfd, path, O_RDONLY | O_NONBLOCK);
		if (fd >= 0 && jf_layer_sha256(fd, hex) == 0)
			hashed = true;
	}
	rec = json_pack("{ss ss sI sI sI sI sI sI so}", "op", "origin", "type",
			jf_type_name(st.st_mode), "dev", (json_int_t)st.st_dev, "ino",
			(json_int_t)st.st_ino, "size", (json_int_t)st.st_size, "mtime_ns",
			(json_int_t)ns_of(&st.st_mtim), "ctime_ns", (json_int_t)ns_of(&st.st_ctim),
			"mode", (json_int_t)st.st_mode, "sha256",
			hashed ? json_string(hex) : json_null());
	rec = jf_layer_rec(rec, "path", path, NULL, NULL);
	if (!rec)
		return -ENOMEM;
	return jf_layer_journal(l, rec);
}

int jf_layer_note_rename(struct jf_layer *l, const char *from, const char *to)
{
	json_t *rec = jf_layer_rec(json_pack("{ss}", "op", "rename"), "from", from, "to", to);
	int r;

	if (!rec)
		return -ENOMEM;
	r = jf_layer_journal(l, rec);
	if (r < 0)
		return r;
	return jf_layer_saved_moved(l, from);
}

int jf_layer_drop(struct jf_layer *l, const char *path)
{
	json_t *rec = jf_layer_rec(json_pack("{ss}", "op", "drop"), "path", path, NULL, NULL);
	int r;

	if (!rec)
		return -ENOMEM;
	r = jf_layer_save(l, path, false);
	if (r < 0)
		return r;
	return jf_layer_journal(l, rec);
}

int jf_layer_source(const char *dir, char **ret)
{
	_cleanup_free_ char *p = NULL;
	json_error_t e;
	json_t *j;
	const char *s;

	if (asprintf(&p, "%s/layer.json", dir) < 0)
		return -ENOMEM;
	j = json_load_file(p, 0, &e);
	if (!j)
		return -ENOENT;
	s = json_string_value(json_object_get(j, "source"));
	*ret = s ? strdup(s) : NULL;
	json_decref(j);
	return !s ? -EINVAL : *ret ? 0 : -ENOMEM;
}

/* Is @a equal to or below @b (real paths)? */
static bool below(const char *a, const char *b)
{
	size_t n = strlen(b);

	return !strncmp(a, b, n) && (a[n] == '/' || a[n] == '\0' || !strcmp(b, "/"));
}

/* Writes DIR/layer.json for SOURCE @src (@st) atomically. */
static int write_layer_json(int dirfd, const char *src, const struct stat *st)
{
	json_t *j = json_pack("{sI ss sI sI}", "format", (json_int_t)1, "source", src, "source_dev",
			      (json_int_t)st->st_dev, "source_ino", (json_int_t)st->st_ino);
	_cleanup_free_ char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	_cleanup_close_ int fd = -1;
	size_t len;

	json_decref(j);
	if (!s)
		return -ENOMEM;
	len = strlen(s);
	fd = openat(dirfd, "layer.json.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0 || write(fd, s, len) != (ssize_t)len || write(fd, "\n", 1) != 1 ||
	    fsync(fd) < 0 || renameat(dirfd, "layer.json.tmp", dirfd, "layer.json") < 0)
		return -errno;
	return 0;
}

/* layer.json names SOURCE (@src, @st)? Writes it with @create when absent. */
static int check_layer_json(struct jf_layer *l, const char *src, const struct stat *st, bool create,
			    char **ret_err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	json_t *j;
	int r = jf_layer_read_file(l->dirfd, "layer.json", 1 << 20, &buf, &len);
	bool same;

	if (r == -ENOENT && create)
		return write_layer_json(l->dirfd, src, st);
	if (r < 0) {
		set_err(ret_err, "%s/layer.json: %s", l->dir, strerror(-r));
		return r;
	}
	j = json_loads(buf, 0, NULL);
	same = json_integer_value(json_object_get(j, "format")) == 1 &&
	       (dev_t)json_integer_value(json_object_get(j, "source_dev")) == st->st_dev &&
	       (ino_t)json_integer_value(json_object_get(j, "source_ino")) == st->st_ino;
	json_decref(j);
	if (!same) {
		set_err(ret_err, "%s: a changes directory of another source than %s", l->dir, src);
		return -EINVAL;
	}
	return 0;
}

/*
 * Where @dir is or would be: the real path of its parent and its last name,
 * malloc'd, or NULL with errno. So that a DIR refused is never made.
 */
static char *place_of(const char *dir)
{
	_cleanup_free_ char *copy = strdup(dir), *parent = NULL;
	char *slash, *name, *r = NULL;
	size_t n;

	if (!copy)
		return NULL;
	for (n = strlen(copy); n > 1 && copy[n - 1] == '/'; n--)
		copy[n - 1] = '\0';
	slash = strrchr(copy, '/');
	name = slash ? slash + 1 : copy;
	if (slash)
		*slash = '\0';
	parent = realpath(slash ? (*copy ? copy : "/") : ".", NULL);
	if (!parent)
		return NULL;
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return realpath(dir, NULL);
	if (asprintf(&r, "%s/%s", strcmp(parent, "/") ? parent : "", name) < 0)
		return NULL;
	return r;
}

/* DIR, made or not, outside SOURCE (@src) and the mount (@mountpoint). */
static int check_place(const char *dir, const char *src, const char *mountpoint, char **ret_err)
{
	_cleanup_free_ char *real = place_of(dir);
	_cleanup_free_ char *mnt = mountpoint ? realpath(mountpoint, NULL) : NULL;

	if (!real) {
		set_err(ret_err, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	if (below(real, src) || below(src, real)) {
		set_err(ret_err,
			"%s: the changes directory must lie outside SOURCE (%s), which is only "
			"read; choose a directory beside it",
			dir, src);
		return -EINVAL;
	}
	if (mnt && (below(real, mnt) || below(mnt, real))) {
		set_err(ret_err,
			"%s: the changes directory must lie outside MOUNTPOINT (%s); choose a "
			"directory beside it",
			dir, mnt);
		return -EINVAL;
	}
	return 0;
}

/* The checks of DIR itself: owner and mode. */
static int check_dir(struct jf_layer *l, char **ret_err)
{
	struct stat st;

	if (fstat(l->dirfd, &st) < 0) {
		set_err(ret_err, "%s: %s", l->dir, strerror(errno));
		return -errno;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 07777) != 0700) {
		set_err(ret_err, "%s: must be a directory of yours with mode 0700", l->dir);
		return -EPERM;
	}
	return 0;
}

/* Makes (with @create) and opens DIR's parts. */
static int open_parts(struct jf_layer *l, const struct stat *src, bool create)
{
	const char *dirs[] = {"upper", "work", "checkpoints"};

	/* overlayfs shows upper/'s mode as the view's root: SOURCE's, not 0700 */
	for (size_t i = 0; create && i < ARRAY_SIZE(dirs); i++)
		if (mkdirat(l->dirfd, dirs[i], i == 0 ? src->st_mode & 07777 : 0700) < 0 &&
		    errno != EEXIST)
			return -errno;
	l->upperfd = openat(l->dirfd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (l->upperfd < 0)
		return -errno;
	l->jfd = openat(l->dirfd, "journal.jsonl",
			O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (l->jfd < 0)
		return -errno;
	if (asprintf(&l->upper_path, "%s/upper", l->dir) < 0 ||
	    asprintf(&l->work_path, "%s/work", l->dir) < 0)
		return -ENOMEM;
	return 0;
}

/* SOURCE's real path into @src (PATH_MAX) and its stat into @st. */
static int source_of(int fd, char *src, struct stat *st)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, src, PATH_MAX - 1);
	if (n < 0 || fstat(fd, st) < 0)
		return -errno;
	src[n] = '\0';
	return 0;
}

/* Makes (with @create) and opens DIR itself, then checks it. */
static int open_dir(struct jf_layer *l, const char *src, const struct stat *st,
		    const char *mountpoint, bool create, char **ret_err)
{
	int r = check_place(l->dir, src, mountpoint, ret_err);

	if (r < 0)
		return r;
	if (create && mkdir(l->dir, 0700) < 0 && errno != EEXIST) {
		r = -errno;
		set_err(ret_err, "%s: %s", l->dir, strerror(errno));
		return r;
	}
	l->dirfd = open(l->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (l->dirfd < 0) {
		r = -errno;
		set_err(ret_err, "%s: %s", l->dir, strerror(errno));
		return r;
	}
	/* O_NOFOLLOW: DIR is where check_place() found it */
	r = check_dir(l, ret_err);
	return r < 0 ? r : check_layer_json(l, src, st, create, ret_err);
}

int jf_layer_open(const char *dir, int source_fd, const char *mountpoint, bool create,
		  struct jf_layer **ret, char **ret_err)
{
	struct jf_layer *l = calloc(1, sizeof(*l));
	char src[PATH_MAX];
	struct stat st = {0};
	int r;

	if (ret_err)
		*ret_err = NULL;
	if (!l)
		return -ENOMEM;
	l->dirfd = l->upperfd = l->lockfd = l->jfd = l->cpfd = l->cpsfd = l->cpjfd = -1;
	l->cpseq = -1;
	l->srcfd = fcntl(source_fd, F_DUPFD_CLOEXEC, 3);
	l->dir = strdup(dir);
	l->origins = json_object();
	l->renames = json_array();
	l->saved = json_object();
	r = l->srcfd < 0 ? -errno : 0;
	if (r == 0 && (!l->dir || !l->origins || !l->renames || !l->saved))
		r = -ENOMEM;
	if (r == 0 && (r = source_of(l->srcfd, src, &st)) < 0)
		set_err(ret_err, "the source: %s", strerror(-r));
	if (r == 0)
		r = open_dir(l, src, &st, mountpoint, create, ret_err);
	if (r == 0 && (r = open_parts(l, &st, create)) == 0 &&
	    (r = jf_layer_end_line(l->jfd)) == 0 && (r = jf_layer_journal_reload(l)) == 0)
		r = jf_layer_cp_load(l);
	if (r < 0) {
		if (ret_err && !*ret_err)
			set_err(ret_err, "%s: %s", dir, strerror(-r));
		jf_layer_free(l);
		return r;
	}
	*ret = l;
	return 0;
}
