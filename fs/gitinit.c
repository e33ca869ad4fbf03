/* SPDX-License-Identifier: MIT */
/*
 * A new git directory a refused git init leaves, removed (fs/gitinit.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backing.h"
#include "cleanup.h"
#include "fsstate.h"
#include "gitinit.h"
#include "inode.h"
#include "newdirs.h"
#include "policy.h"
#include "zone-name.h"

/* The git directory of the refused @path, a hook (<dir>/hooks/<name>),
 * into @dir; false when none. Only a hook: a template's other refused
 * entries are not git's, and an agent making commondir by hand in a new
 * directory should meet EROFS, not see the directory go. */
static bool git_dir_of(const char *path, char *dir, size_t size)
{
	const char *hooks = NULL, *p = path;
	size_t end;

	while ((p = strstr(p, "/hooks/")))
		hooks = p++;
	if (!hooks || strchr(hooks + 7, '/'))
		return false;
	end = (size_t)(hooks - path);
	if (end == 0 || end >= size)
		return false;
	memcpy(dir, path, end);
	dir[end] = '\0';
	return jf_git_dir_rule(jf_fs.view.policy, dir) != NULL;
}

struct walk {
	char path[JF_PATH_MAX + 1]; /* view path of the directory being read */
	size_t len;
	unsigned budget;
	bool remove; /* false: only check that every entry may go */
};

static int walk_dir(int fd, struct walk *w, int depth);

/* Entry @name of @dfd (@st): may it go, and (w->remove) remove it. */
static int walk_entry(int dfd, const char *name, const struct stat *st, dev_t dev, struct walk *w,
		      int depth)
{
	size_t len = w->len, n = strlen(name);
	struct jf_verdict v;
	int r = 0;

	if (--w->budget == 0 || st->st_dev != dev || len + 1 + n > JF_PATH_MAX)
		return -E2BIG;
	w->path[len] = '/';
	memcpy(w->path + len + 1, name, n + 1);
	w->len = len + 1 + n;
	jf_classify_path(&jf_fs.view, w->path, w->len, S_ISDIR(st->st_mode), &v);
	if (v.zone == JF_DENIED || jf_is_mnt_path(&jf_fs.view, w->path))
		r = -EACCES; /* a hidden object is never removed */
	else if (S_ISDIR(st->st_mode) && !jf_newdir_is(st->st_dev, st->st_ino))
		r = -EPERM; /* a directory this mount did not make */
	if (r == 0 && S_ISDIR(st->st_mode)) {
		_cleanup_close_ int sub =
			openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		r = sub < 0 ? -errno : walk_dir(sub, w, depth + 1);
	}
	if (r == 0 && w->remove) {
		r = unlinkat(dfd, name, S_ISDIR(st->st_mode) ? AT_REMOVEDIR : 0) < 0 ? -errno : 0;
		if (r == 0 && S_ISDIR(st->st_mode))
			jf_newdir_forget(st->st_dev, st->st_ino);
	}
	w->path[len] = '\0';
	w->len = len;
	return r;
}

static int walk_dir(int fd, struct walk *w, int depth)
{
	_cleanup_closedir_ DIR *dp = NULL;
	struct dirent *de;
	struct stat self;
	int dfd, r = 0;

	if (depth >= JF_GITINIT_MAX_DEPTH || fstat(fd, &self) < 0)
		return -E2BIG;
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	dp = fdopendir(dfd);
	if (!dp) {
		close(dfd);
		return -errno;
	}
	while (r == 0 && (de = readdir(dp))) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		r = walk_entry(dirfd(dp), de->d_name, &st, self.st_dev, w, depth);
	}
	return r;
}

void jf_gitinit_refused(const char *path)
{
	_cleanup_free_ struct walk *w = calloc(1, sizeof(*w));
	char dir[JF_PATH_MAX + 1], parent[JF_PATH_MAX + 1];
	_cleanup_close_ int fd = -1, pfd = -1;
	const char *slash;
	struct stat st;

	jf_ns_assert_held();
	if (!w || !git_dir_of(path, dir, sizeof(dir)))
		return;
	fd = jf_open_beneath(dir, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0 || fstat(fd, &st) < 0 || !jf_newdir_is(st.st_dev, st.st_ino) ||
	    faccessat(fd, "HEAD", F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return;
	slash = strrchr(dir, '/');
	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - dir) : 0, dir);
	pfd = *parent ? jf_open_beneath(parent, O_PATH | O_DIRECTORY, 0) : dup(jf_fs.view.root_fd);
	if (pfd < 0)
		return;
	snprintf(w->path, sizeof(w->path), "%s", dir);
	w->len = strlen(w->path);
	w->budget = JF_GITINIT_MAX_ENTRIES;
	if (walk_dir(fd, w, 0) < 0)
		return; /* something in it may not go: all of it stays */
	w->remove = true;
	w->budget = JF_GITINIT_MAX_ENTRIES;
	if (walk_dir(fd, w, 0) == 0 && unlinkat(pfd, slash ? slash + 1 : dir, AT_REMOVEDIR) == 0)
		jf_newdir_forget(st.st_dev, st.st_ino);
}
