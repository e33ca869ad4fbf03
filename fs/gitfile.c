/* SPDX-License-Identifier: MIT */
/*
 * A .git file written through the view, checked at every change
 * (fs/gitfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backing.h"
#include "cleanup.h"
#include "fsstate.h"
#include "gitfile.h"
#include "gitlink.h"
#include "inode.h"
#include "policy.h"

static pthread_mutex_t gitfile_lock = PTHREAD_MUTEX_INITIALIZER;

bool jf_gitfile_checked(const struct jf_verdict *v, mode_t type, const char *path)
{
	/* not in a view that can write nothing (--read-only makes every
	 * verdict RESTRICTED, the rules kept) */
	return S_ISREG(type) && v->zone == JF_RESTRICTED && jf_rule_gitfile(v->rule, path) &&
	       jf_policy_can_write(jf_fs.view.policy);
}

bool jf_gitfile_inode(const struct jf_verdict *v, struct jf_inode *inode)
{
	char path[JF_PATH_MAX + 1] = "";

	if (inode->type != S_IFREG || v->zone != JF_RESTRICTED || !v->rule || !v->rule->builtin)
		return false;
	jf_inode_path(inode, path, sizeof(path));
	return jf_gitfile_checked(v, inode->type, path);
}

/* Is every existing component of view path @target a directory, none a
 * symlink? What does not exist yet may only become a directory
 * (jf_gitfile_symlink_rule()). */
static bool reached_without_symlinks(const char *target)
{
	_cleanup_close_ int cur = dup(jf_fs.view.root_fd);
	const char *p = target;

	while (cur >= 0 && *p) {
		char name[NAME_MAX + 1];
		size_t n = strcspn(p, "/");
		struct stat st;
		int next;

		if (n > NAME_MAX)
			return false;
		memcpy(name, p, n);
		name[n] = '\0';
		if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT;
		if (!S_ISDIR(st.st_mode))
			return false;
		next = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return false;
		close(cur);
		cur = next;
		p += n + (p[n] == '/');
	}
	return cur >= 0;
}

/* May the .git file at view path @path hold the @len bytes at @buf? */
static int check(const char *path, const unsigned char *buf, size_t len, const char **why)
{
	char dir[JF_PATH_MAX + 1], target[JF_PATH_MAX + 1];
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	int r;

	memcpy(dir, path, n);
	dir[n] = '\0';
	r = jf_gitfile_target(buf, len, dir, jf_fs.view.source_abs, target, sizeof(target), why);
	if (r == -ENAMETOOLONG)
		*why = "a .git file naming a path too long";
	if (r != 0)
		return r > 0 ? 0 : -EROFS;
	if (!jf_git_dir_rule(jf_fs.view.policy, target)) {
		*why = "a .git file naming a directory the view does not keep as a git directory";
		return -EROFS;
	}
	if (!reached_without_symlinks(target)) {
		*why = "a .git file naming a path through a symlink or a file";
		return -EROFS;
	}
	return 0;
}

/* Read the whole file of @fd (@size bytes) into @buf. */
static int read_old(int fd, unsigned char *buf, size_t size)
{
	size_t n = 0;

	while (n < size) {
		ssize_t r = pread(fd, buf + n, size - n, (off_t)n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	memset(buf + n, 0, size - n);
	return 0;
}

static int put(int fd, const void *buf, size_t len, off_t off)
{
	while (len > 0) {
		ssize_t r = pwrite(fd, buf, len, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		buf = (const char *)buf + r;
		len -= (size_t)r;
		off += r;
	}
	return 0;
}

/* Make the file of @fd (@old bytes now) hold the @len bytes at @buf. A
 * reader sees the old content, a first byte NUL (git: "invalid gitfile
 * format") or the new content: a one-byte write is never seen in part. */
static int store(int fd, size_t old, const unsigned char *buf, size_t len)
{
	static const unsigned char nul;
	int r = 0;

	if (len == 0)
		return ftruncate(fd, 0) < 0 ? -errno : 0;
	if (old > 0)
		r = put(fd, &nul, 1, 0);
	if (r == 0 && len > 1)
		r = put(fd, buf + 1, len - 1, 1);
	if (r == 0 && ftruncate(fd, (off_t)len) < 0)
		r = -errno;
	return r < 0 ? r : put(fd, buf, 1, 0);
}

/* Under gitfile_lock: the new content of the file of @fd, the @size bytes
 * at @data put at @off (@off < 0: at the end) and the file cut to @trunc
 * (< 0: not cut) first, checked and stored. */
static int change(int fd, const char *path, const void *data, size_t size, off_t off, off_t trunc,
		  const char **why)
{
	unsigned char buf[JF_GITFILE_MAX];
	_cleanup_close_ int rw = -1;
	char proc[64];
	size_t old, len;
	struct stat st;
	int r;

	/* A descriptor of our own: the caller's may be write-only, or
	 * O_APPEND (where pwrite(2) ignores its offset). */
	jf_proc_fd_path(proc, sizeof(proc), fd);
	rw = open(proc, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (rw < 0)
		return -errno;
	fd = rw;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_nlink != 1) {
		*why = "a .git file with another name";
		return -EROFS;
	}
	if ((uint64_t)st.st_size > JF_GITFILE_MAX) {
		*why = "a .git file larger than jailfs checks";
		return -EROFS;
	}
	old = (size_t)st.st_size;
	len = trunc >= 0 ? (size_t)trunc : old;
	if (off < 0)
		off = (off_t)len;
	if (trunc > (off_t)JF_GITFILE_MAX || (uint64_t)off + size > JF_GITFILE_MAX) {
		*why = "a .git file larger than jailfs checks";
		return -EROFS;
	}
	r = read_old(fd, buf, sizeof(buf));
	if (r < 0)
		return r;
	if (len < old)
		memset(buf + len, 0, old - len);
	if (size)
		memcpy(buf + off, data, size);
	if ((size_t)off + size > len)
		len = (size_t)off + size;
	r = check(path, buf, len, why);
	return r < 0 ? r : store(fd, old, buf, len);
}

ssize_t jf_gitfile_write(int fd, const char *path, const void *data, size_t size, off_t off,
			 bool append, const char **why)
{
	int r;

	*why = NULL;
	if (off < 0)
		return -EINVAL;
	pthread_mutex_lock(&gitfile_lock);
	r = change(fd, path, data, size, append ? -1 : off, -1, why);
	pthread_mutex_unlock(&gitfile_lock);
	return r < 0 ? r : (ssize_t)size;
}

int jf_gitfile_truncate(int fd, const char *path, off_t size, const char **why)
{
	int r;

	*why = NULL;
	if (size < 0)
		return -EINVAL;
	pthread_mutex_lock(&gitfile_lock);
	r = change(fd, path, NULL, 0, 0, size, why);
	pthread_mutex_unlock(&gitfile_lock);
	return r;
}

/* The rule zoning @path ("" for the top) as a git directory, or (@below)
 * its entries as git directories; NULL when it does not. */
static const struct jf_rule *git_dir(const char *path, bool below)
{
	char entry[JF_PATH_MAX + 1];
	int n;

	if (!below)
		return jf_git_dir_rule(jf_fs.view.policy, path);
	n = snprintf(entry, sizeof(entry), "%s%sx", path, *path ? "/" : "");
	return n < 0 || (size_t)n >= sizeof(entry) ? NULL
						   : jf_git_dir_rule(jf_fs.view.policy, entry);
}

/* Is @target relative, every component a name (none empty, "." or "..")? */
static bool downward(const char *target)
{
	const char *p = target;

	if (*p == '/' || *p == '\0')
		return false;
	for (;;) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (p[n] == '\0')
			return true;
		p += n + 1;
	}
}

const struct jf_rule *jf_gitfile_symlink_rule(const char *path, const char *target)
{
	const struct jf_rule *self = git_dir(path, false), *below = git_dir(path, true);
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	char to[JF_PATH_MAX + 1];

	if (!self && !below)
		return NULL;
	if (!downward(target) || n + 1 + strlen(target) > JF_PATH_MAX)
		return self ? self : below;
	snprintf(to, sizeof(to), "%.*s%s%s", (int)n, path, n ? "/" : "", target);
	if (self && !git_dir(to, false))
		return self;
	if (below && !git_dir(to, true))
		return below;
	return NULL;
}
