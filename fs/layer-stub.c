/* SPDX-License-Identifier: MIT */
/*
 * A minimal changes layer behind changes/layer.h, for the daemon's overlay
 * mode until the library lands: it makes and checks DIR (mode 0700, owned
 * by the caller, outside SOURCE and the mountpoint), its upper/ and work/,
 * and takes DIR/lock. It keeps no journal and no checkpoint: the notes are
 * no-ops, checkpoint and restore answer -ENOSYS, apply and discard too.
 * Replaced whole by changes/layer.c.
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
#include <unistd.h>

#include "cleanup.h"
#include "layer.h"

struct jf_layer {
	int dir_fd, upper_fd, lock_fd, source_fd;
	char *upper, *work;
};

/* Is @inner (canonical) @outer or below it? */
static bool below(const char *outer, const char *inner)
{
	size_t n = strlen(outer);

	if (strcmp(outer, "/") == 0)
		return true;
	return strncmp(outer, inner, n) == 0 && (inner[n] == '/' || inner[n] == '\0');
}

_printf_(3, 4) static int fail(char **ret_err, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (ret_err && vasprintf(ret_err, fmt, ap) < 0)
		*ret_err = NULL;
	va_end(ap);
	return r;
}

/* realpath(@dir), or of its parent + its name when it does not exist yet. */
static char *abs_path(const char *dir)
{
	_cleanup_free_ char *copy = strdup(dir), *parent = NULL;
	char *slash, *out = NULL;

	out = realpath(dir, NULL);
	if (out || errno != ENOENT || !copy)
		return out;
	while ((slash = strrchr(copy, '/')) && slash != copy && !slash[1])
		*slash = '\0'; /* trailing slashes */
	slash = strrchr(copy, '/');
	parent = realpath(slash == copy ? "/" : slash ? (*slash = '\0', copy) : ".", NULL);
	if (!parent)
		return NULL;
	if (asprintf(&out, "%s/%s", strcmp(parent, "/") ? parent : "", slash ? slash + 1 : copy) <
	    0)
		return NULL;
	return out;
}

/* Where @abs lies: outside SOURCE and @mnt, not around either. */
static int check_place(const char *abs, int source_fd, const char *mnt, char **ret_err)
{
	char proc[64], src[PATH_MAX];
	_cleanup_free_ char *mabs = mnt ? realpath(mnt, NULL) : NULL;
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", source_fd);
	n = readlink(proc, src, sizeof(src) - 1);
	if (n < 0)
		return -errno;
	src[n] = '\0';
	if (below(src, abs) || below(abs, src))
		return fail(ret_err, -EINVAL,
			    "--changes %s: the changes directory must lie outside SOURCE %s (and "
			    "not contain it)",
			    abs, src);
	if (mabs && (below(mabs, abs) || below(abs, mabs)))
		return fail(ret_err, -EINVAL,
			    "--changes %s: the changes directory must lie outside MOUNTPOINT %s "
			    "(and not contain it)",
			    abs, mabs);
	return 0;
}

/* @abs (@fd) is a directory of ours, mode 0700. */
static int check_dir(const char *abs, int fd, char **ret_err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_uid != geteuid())
		return fail(ret_err, -EPERM, "--changes %s: %s is not owned by this user", abs,
			    "the changes directory");
	if ((st.st_mode & 07777) != 0700)
		return fail(ret_err, -EPERM, "--changes %s: %s must have mode 0700", abs,
			    "the changes directory");
	return 0;
}

static int sub_dir(struct jf_layer *l, const char *name, bool create)
{
	if (create && mkdirat(l->dir_fd, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	return openat(l->dir_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int jf_layer_open(const char *dir, int source_fd, const char *mountpoint, bool create,
		  struct jf_layer **ret, char **ret_err)
{
	_cleanup_free_ char *abs = NULL;
	struct jf_layer *l;
	int r, wfd = -1;

	if (ret_err)
		*ret_err = NULL;
	abs = abs_path(dir);
	if (!abs)
		return fail(ret_err, -errno, "--changes %s: %s", dir, strerror(errno));
	r = check_place(abs, source_fd, mountpoint, ret_err);
	if (r < 0)
		return r;
	if (create && mkdir(abs, 0700) < 0 && errno != EEXIST)
		return fail(ret_err, -errno, "--changes %s: cannot make it: %s", dir,
			    strerror(errno));
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->upper_fd = l->lock_fd = -1;
	l->source_fd = dup(source_fd);
	l->dir_fd = open(abs, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	r = l->dir_fd < 0 || l->source_fd < 0 ? -errno : 0;
	if (r == 0)
		r = check_dir(abs, l->dir_fd, ret_err);
	if (r == 0 &&
	    (asprintf(&l->upper, "%s/upper", abs) < 0 || asprintf(&l->work, "%s/work", abs) < 0))
		r = -ENOMEM;
	if (r == 0 && (l->upper_fd = sub_dir(l, "upper", create)) < 0)
		r = fail(ret_err, -errno, "--changes %s: upper/: %s", dir, strerror(errno));
	if (r == 0 && (wfd = sub_dir(l, "work", create)) < 0)
		r = fail(ret_err, -errno, "--changes %s: work/: %s", dir, strerror(errno));
	if (wfd >= 0)
		close(wfd);
	if (r < 0 && ret_err && !*ret_err)
		fail(ret_err, r, "--changes %s: %s", dir, strerror(-r));
	if (r < 0) {
		jf_layer_free(l);
		return r;
	}
	*ret = l;
	return 0;
}

void jf_layer_free(struct jf_layer *l)
{
	if (!l)
		return;
	for (int *fd = &l->dir_fd; fd <= &l->source_fd; fd++)
		if (*fd >= 0)
			close(*fd);
	free(l->upper);
	free(l->work);
	free(l);
}

const char *jf_layer_upper_path(const struct jf_layer *l)
{
	return l->upper;
}

const char *jf_layer_work_path(const struct jf_layer *l)
{
	return l->work;
}

int jf_layer_upper_fd(const struct jf_layer *l)
{
	return l->upper_fd;
}

int jf_layer_lock(struct jf_layer *l)
{
	if (l->lock_fd < 0)
		l->lock_fd =
			openat(l->dir_fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (l->lock_fd < 0)
		return -errno;
	return flock(l->lock_fd, LOCK_EX | LOCK_NB) < 0 ? -errno : 0;
}

int jf_layer_note_origin(struct jf_layer *l, const char *path)
{
	(void)l;
	(void)path;
	return 0;
}

int jf_layer_save(struct jf_layer *l, const char *path, bool in_place)
{
	(void)l;
	(void)path;
	(void)in_place;
	return 0;
}

int jf_layer_note_rename(struct jf_layer *l, const char *from, const char *to)
{
	(void)l;
	(void)from;
	(void)to;
	return 0;
}

int jf_layer_checkpoint(struct jf_layer *l, const char *name, char **ret_id)
{
	(void)l;
	(void)name;
	*ret_id = NULL;
	return -ENOSYS;
}

int jf_layer_restore(struct jf_layer *l, const char *id)
{
	(void)l;
	(void)id;
	return -ENOSYS;
}

int jf_layer_apply(struct jf_layer *l, const char *const *paths, size_t n, bool force,
		   jf_layer_safe_fn safe, void *safe_data, void **ret_report)
{
	(void)l;
	(void)paths;
	(void)n;
	(void)force;
	(void)safe;
	(void)safe_data;
	*ret_report = NULL;
	return -ENOSYS;
}

int jf_layer_discard(struct jf_layer *l, const char *const *paths, size_t n, void **ret_report)
{
	(void)l;
	(void)paths;
	(void)n;
	*ret_report = NULL;
	return -ENOSYS;
}
