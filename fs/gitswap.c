/* SPDX-License-Identifier: MIT */
/*
 * A git index, packed-refs or config renamed into place, checked first
 * (fs/gitswap.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backing.h"
#include "cleanup.h"
#include "fsstate.h"
#include "gitcheck.h"
#include "gitindex.h"
#include "gitswap.h"
#include "inode.h"
#include "policy.h"
#include "zone-name.h"

/* Read all of @fd (@size bytes by fstat) into a new buffer: *@out, *@len. */
static int read_all(int fd, size_t size, unsigned char **out, size_t *len)
{
	unsigned char *buf = malloc(size ? size : 1);
	size_t n = 0;

	if (!buf)
		return -ENOMEM;
	while (n < size) {
		ssize_t r = pread(fd, buf + n, size - n, (off_t)n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return -errno;
		}
		if (r == 0)
			break; /* shorter now: the check sees what is there */
		n += (size_t)r;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* Make the file of @fd hold exactly the @len bytes at @buf. */
static int rewrite(int fd, const unsigned char *buf, size_t len)
{
	size_t n = 0;

	while (n < len) {
		ssize_t r = pwrite(fd, buf + n, len - n, (off_t)n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		n += (size_t)r;
	}
	return ftruncate(fd, (off_t)len) < 0 ? -errno : 0;
}

/* Put back the times @st of the file of @fd: git compares a file's mtime
 * with the index's to tell a racily clean entry. */
static void keep_times(int fd, const struct stat *st)
{
	const struct timespec times[2] = {st->st_atim, st->st_mtim};

	(void)futimens(fd, times);
}

static bool has_writers(const struct stat *st)
{
	struct jf_inode_info info;

	return jf_inode_info(st->st_dev, st->st_ino, &info) && info.writers;
}

bool jf_git_swap_wait(const struct stat *st)
{
	for (int i = 0; i < 200 && has_writers(st); i++)
		usleep(5000);
	return has_writers(st);
}

/* The work tree of an index: the view path above its ".git", with a
 * trailing '/' ("" at the top). */
struct worktree {
	char path[JF_PATH_MAX + 1];
	size_t len;
	bool known; /* false: a linked work tree's index, judged at the top */
	/* Bytes on_disk() may still hash: the check runs under the namespace
	 * lock, and entries may name one large file many times. */
	uint64_t budget;
};

static void worktree_of(const char *dpath, struct worktree *w)
{
	size_t n = strlen(dpath);

	w->known = strcmp(dpath, ".git") == 0 || (n > 5 && strcmp(dpath + n - 5, "/.git") == 0);
	w->len = w->known ? n - 4 : 0;
	memcpy(w->path, dpath, w->len);
	w->path[w->len] = '\0';
}

/* The view path of work-tree path @path (@len bytes) in w->path; false
 * when too long. */
static bool view_path(struct worktree *w, const char *path, size_t len)
{
	if (w->len + len > JF_PATH_MAX)
		return false;
	memcpy(w->path + w->len, path, len);
	w->path[w->len + len] = '\0';
	return true;
}

static bool guarded(const char *path, size_t len, void *arg)
{
	struct worktree *w = arg;
	struct jf_verdict v;

	if (!view_path(w, path, len))
		return true;
	jf_classify_path(&jf_fs.view, w->path, w->len + len, false, &v);
	/* A name subject to content (*.pem) too: the host's deploy.key. */
	return v.zone != JF_SAFE;
}

/* Does the regular file of @fd (@st) hold the blob @e names, and, for a
 * name subject to content (@content), a public content? */
static bool blob_is(int fd, const struct stat *st, const struct jf_git_entry *e,
		    enum jf_content content)
{
	unsigned char oid[JF_GIT_SHA256_SIZE];
	_cleanup_free_ unsigned char *buf = NULL;
	struct jf_git_hash h;
	size_t len;

	if (!(e->mode == 0100755) != !(st->st_mode & 0100))
		return false;
	if (content != JF_CONTENT_NONE && (uint64_t)st->st_size > JF_CONTENT_MAX_SIZE)
		return false;
	if (read_all(fd, (size_t)st->st_size, &buf, &len) < 0 || len != (size_t)st->st_size)
		return false;
	if (content != JF_CONTENT_NONE && !jf_content_public(content, (const char *)buf, len))
		return false;
	jf_git_blob_start(&h, e->hashsz, (uint64_t)len);
	jf_git_hash_update(&h, buf, len);
	jf_git_hash_end(&h, oid);
	return memcmp(oid, e->oid, e->hashsz) == 0;
}

/* Only the content of a file the agent may read is compared (RESTRICTED,
 * or public under a name subject to content): the answer for a hidden one
 * would tell whether a hidden .env holds the content it guessed. */
static bool on_disk(const struct jf_git_entry *e, void *arg)
{
	struct worktree *w = arg;
	enum jf_content content;
	struct jf_verdict v;
	struct stat st;
	bool same;
	int fd;

	if (!w->known || (e->mode & 0170000) != 0100000 || !view_path(w, e->path, e->len))
		return false;
	jf_classify_path(&jf_fs.view, w->path, w->len + e->len, false, &v);
	content = v.zone == JF_DENIED && v.rule ? v.rule->content : JF_CONTENT_NONE;
	if (v.zone != JF_RESTRICTED && content == JF_CONTENT_NONE)
		return false;
	fd = jf_open_file_below(jf_fs.view.root_fd, w->path, O_RDONLY | O_NONBLOCK | O_NOCTTY, &st);
	if (fd < 0)
		return false;
	same = (uint64_t)st.st_size <= w->budget && blob_is(fd, &st, e, content);
	w->budget -= (uint64_t)st.st_size <= w->budget ? (uint64_t)st.st_size : w->budget;
	close(fd);
	return same;
}

/* May the index @buf (@len bytes) replace @dname of @dfd (view path
 * @dpath)? Its guarded entries as the old one had them, or as on disk. */
static int index_keeps(int dfd, const char *dpath, const char *dname, const unsigned char *buf,
		       size_t len, const char **why)
{
	_cleanup_free_ struct worktree *w = malloc(sizeof(*w));
	_cleanup_free_ unsigned char *old = NULL;
	_cleanup_close_ int fd = -1;
	struct jf_git_guard g = {.guarded = guarded, .on_disk = on_disk};
	struct stat st;
	size_t olen = 0;
	int r;

	if (!w)
		return -ENOMEM;
	worktree_of(dpath, w);
	w->budget = JF_GIT_SWAP_HASHED;
	g.arg = w;
	fd = jf_open_file_below(dfd, dname, O_RDONLY | O_NONBLOCK | O_NOCTTY, &st);
	if (fd >= 0 && (uint64_t)st.st_size <= JF_GIT_SWAP_MAX &&
	    (r = read_all(fd, (size_t)st.st_size, &old, &olen)) < 0)
		return r;
	return jf_git_index_keeps(buf, len, old, olen, &g, why);
}

/* Open @name of @dfd read-write if it is still the object @sst. */
static int open_same(int dfd, const char *name, const struct stat *sst)
{
	struct stat st;
	int fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_dev != sst->st_dev || st.st_ino != sst->st_ino ||
	    !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOENT; /* replaced since the probe */
	}
	return fd;
}

/* The check @kind of the @len bytes at @buf, a file of @dpath. */
static int check(enum jf_git_check kind, const unsigned char *buf, size_t len, const char *dpath,
		 struct jf_git_refusal *out)
{
	switch (kind) {
	case JF_GIT_CHECK_INDEX:
		return jf_git_index_check(buf, len, &out->why);
	case JF_GIT_CHECK_PACKED_REFS:
		return jf_git_packed_refs_check(buf, len, &out->why);
	case JF_GIT_CHECK_CONFIG:
		return jf_git_config_check(buf, len, dpath, out->key, sizeof(out->key), &out->why);
	case JF_GIT_CHECK_NONE:
		break;
	}
	return -EINVAL;
}

int jf_git_state_check(enum jf_git_check kind, int dirfd, const char *path,
		       struct jf_git_refusal *out)
{
	_cleanup_free_ unsigned char *buf = NULL;
	_cleanup_free_ char *dpath = strdup(path);
	_cleanup_close_ int fd = -1;
	char *slash = dpath ? strrchr(dpath, '/') : NULL;
	struct stat st;
	ssize_t n;

	*out = (struct jf_git_refusal){0};
	if (!dpath)
		return -ENOMEM;
	if (kind == JF_GIT_CHECK_INDEX || kind == JF_GIT_CHECK_NONE) {
		/* jf_git_swap() also strips an index and compares it with the
		 * one it replaces and with the work tree: only git's own
		 * rename through a view does that */
		out->why = "a git index is not applied; git status or git reset in SOURCE "
			   "rebuilds it";
		return -EROFS;
	}
	fd = jf_open_file_below(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, &st);
	if (fd < 0)
		return fd;
	if (st.st_nlink > 1 || (uint64_t)st.st_size > JF_GIT_SWAP_MAX) {
		out->why = st.st_nlink > 1 ? "the file has another name" : "the file is too large";
		return -EROFS;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	n = pread(fd, buf, (size_t)st.st_size + 1, 0);
	if (n < 0)
		return -errno;
	if (n != st.st_size)
		return -EAGAIN; /* changed while read */
	if (slash)
		*slash = '\0';
	else
		dpath[0] = '\0';
	return check(kind, buf, (size_t)n, dpath, out) < 0 ? -EROFS : 0;
}

int jf_git_swap(enum jf_git_check kind, int dfd, const char *dpath, const char *sname,
		const struct stat *sst, const char *dname, bool *moved_away,
		struct jf_git_refusal *out)
{
	const char **why = &out->why;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ unsigned char *buf = NULL;
	struct stat st;
	size_t len = 0;
	bool exchanged;
	int r;

	*moved_away = false;
	*why = NULL;
	out->key[0] = '\0';
	fd = open_same(dfd, sname, sst);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size > JF_GIT_SWAP_MAX) {
		*why = "a file larger than jailfs checks";
		return -EROFS;
	}
	/* Another name of the file stays SAFE, and with -o fast_open a write
	 * by it is judged by that name: it would change the index after the
	 * check. The kernel locks the file across a rename and a link of it,
	 * so no name is added before the rename is done. */
	if (st.st_nlink != 1) {
		*why = "a file with another name";
		return -EROFS;
	}
	if (has_writers(&st)) {
		*why = "a file still open for writing";
		return -EBUSY;
	}
	r = read_all(fd, (size_t)st.st_size, &buf, &len);
	if (r < 0)
		return r;
	r = check(kind, buf, len, dpath, out);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		if (!*why)
			*why = "a content jailfs does not let through";
		return -EROFS;
	}
	if (kind == JF_GIT_CHECK_INDEX && (r = index_keeps(dfd, dpath, dname, buf, len, why)) < 0)
		return r == -EINVAL ? -EROFS : r;
	if (kind == JF_GIT_CHECK_INDEX)
		len = jf_git_index_strip(buf, len);
	/* Exchanged, not renamed over: the old file stays at @sname until the
	 * new one proved good, and comes back when it did not. */
	exchanged = renameat2(dfd, sname, dfd, dname, RENAME_EXCHANGE) == 0;
	if (!exchanged && (errno != ENOENT && errno != EINVAL))
		return -errno;
	if (!exchanged && renameat(dfd, sname, dfd, dname) < 0)
		return -errno;
	r = rewrite(fd, buf, len);
	if (r == 0)
		keep_times(fd, &st);
	if (r == 0 && !has_writers(&st)) {
		if (exchanged)
			(void)unlinkat(dfd, sname, 0);
		return 0;
	}
	/* A writer we cannot stop, or content we could not put back: the name
	 * must not keep this file. */
	*why = "a file still open for writing";
	if (exchanged && renameat2(dfd, sname, dfd, dname, RENAME_EXCHANGE) == 0)
		return r < 0 ? r : -EROFS;
	if (unlinkat(dfd, dname, 0) == 0)
		*moved_away = true;
	if (exchanged)
		(void)renameat(dfd, sname, dfd, dname);
	return r < 0 ? r : -EROFS;
}
