/* SPDX-License-Identifier: MIT */
/*
 * Directory handles: opendir, readdir, readdirplus, releasedir, fsyncdir.
 * readdir classifies every name before it reaches the kernel (d_type, or a
 * stat when it is unknown) and leaves DENIED and refused names, hidden
 * symlinks, pseudo filesystems and the mountpoint out. readdirplus also
 * registers each entry's inode, exactly like lookup.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "ops.h"

struct jf_dir {
	struct jf_dir *prev, *next; /* open_dirs list, under jf_fs.lock */
	DIR *dp;		    /* NULL until the first readdir (see dir_stream) */
	struct jf_inode *inode;	    /* held by the kernel while the handle is open */
	struct dirent *entry;
	off_t offset;
	dev_t dev;
	char path[]; /* view path of the directory at opendir */
};

/* Open directory handles, so that those the kernel never released (unmount
 * by a signal) are closed at exit. */
static struct jf_dir *open_dirs;

static void dir_link(struct jf_dir *d)
{
	pthread_mutex_lock(&jf_fs.lock);
	d->next = open_dirs;
	if (open_dirs)
		open_dirs->prev = d;
	open_dirs = d;
	pthread_mutex_unlock(&jf_fs.lock);
}

static void dir_unlink(struct jf_dir *d)
{
	pthread_mutex_lock(&jf_fs.lock);
	if (d->prev)
		d->prev->next = d->next;
	else
		open_dirs = d->next;
	if (d->next)
		d->next->prev = d->prev;
	pthread_mutex_unlock(&jf_fs.lock);
}

void jf_ops_cleanup(void)
{
	while (open_dirs) {
		struct jf_dir *d = open_dirs;

		open_dirs = d->next;
		if (d->dp)
			closedir(d->dp);
		free(d);
	}
}

/* ---------- directories ---------- */

/*
 * Directory listings may be cached by the kernel (FOPEN_CACHE_DIR): a second
 * find or tar over the tree is then answered without us. The kernel drops a
 * listing when the directory's mtime changes (checked at offset 0 once
 * attr_timeout expired, auto_inval_data) or when a change goes through the
 * view (fuse_dir_changed), so a listing is as fresh as attributes are
 * (attr_timeout), the documented price of the timeouts; the policy is fixed
 * for the life of the mount, so a cached listing never shows a name that a
 * new classification would hide.
 *
 * A cached listing does not refresh the children's dentries, though: once
 * entry_timeout has passed, every child costs one LOOKUP round trip, where an
 * uncached READDIRPLUS refreshes about 25 per round trip (measured: rg over
 * the Linux tree 20% slower with the cache and 10 s timeouts). So:
 *  - with short timeouts (the default), opendir keeps the cache only while
 *    the last READDIRPLUS of the directory is younger than the timeouts
 *    (listed_ms), and otherwise starts a fresh listing;
 *  - with entry and attr timeouts of at least JF_NO_OPENDIR_MIN_S, and when
 *    readdir is not audited, opendir answers ENOSYS: the kernel then stops
 *    sending OPENDIR and RELEASEDIR (two round trips per directory) and
 *    caches every listing (fs/fuse/file.c, "Default for no-open"). Each
 *    READDIR then opens the directory by its path (dev/ino checked, as every
 *    backing access) and seeks to the offset, the stateless readdir of NFS
 *    servers; d_off cookies survive a reopen on ext4, xfs, btrfs, tmpfs.
 * When readdir is audited, opendir always runs, so that every listing, cached
 * or not, is recorded. Either way the backing directory is opened by the
 * first READDIR that reaches us, never for a listing served from the cache.
 */
#define JF_NO_OPENDIR_MIN_S 60.0

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* May the kernel keep @dir's cached listing (its children's dentries are
 * still fresh)? One second of margin for the time the listing took. */
static bool listing_fresh(struct jf_inode *dir)
{
	double t = jf_fs.opts->entry_timeout < jf_fs.opts->attr_timeout ? jf_fs.opts->entry_timeout
									: jf_fs.opts->attr_timeout;
	uint64_t listed = atomic_load(&dir->listed_ms);

	return listed && t > 1.0 && now_ms() - listed < (uint64_t)((t - 1.0) * 1000);
}

void jf_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct jf_inode *inode = jf_inode_get(ino);
	char path[JF_PATH_MAX + 1];
	struct jf_dir *d;
	int r;

	if (!jf_audit_wants(JF_AUDIT_ALLOW, false) &&
	    jf_fs.opts->entry_timeout >= JF_NO_OPENDIR_MIN_S &&
	    jf_fs.opts->attr_timeout >= JF_NO_OPENDIR_MIN_S) {
		fuse_reply_err(req, ENOSYS); /* once per mount: no_opendir */
		return;
	}
	r = jf_inode_path(inode, path, sizeof(path));
	/* the handle holds an fd from its first readdir to releasedir */
	if (r >= 0 && jf_fd_take(JF_FD_DIR) < 0)
		r = -EMFILE;
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	d = calloc(1, sizeof(*d) + (size_t)r + 1);
	if (!d) {
		jf_fd_put();
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memcpy(d->path, path, (size_t)r + 1);
	d->inode = inode;
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->cache_readdir = 1;
	fi->keep_cache = listing_fresh(inode);
	jf_audit_op(req, "readdir", path, NULL, inode->zone, inode->rule, JF_AUDIT_ALLOW, false, 0);
	dir_link(d);
	if (fuse_reply_open(req, fi) == -ENOENT) {
		dir_unlink(d);
		jf_fd_put();
		free(d);
	}
}

/* The handle's directory stream, opened (by path, dev/ino checked, like every
 * backing access) on first use. Only the thread serving a request on this
 * handle calls it: the kernel serializes readdir on one open directory. */
static int dir_stream(struct jf_dir *d)
{
	struct stat st;
	int fd;

	if (d->dp)
		return 0;
	fd = jf_open_inode(d->inode, O_RDONLY | O_DIRECTORY, &st);
	if (fd < 0)
		return fd;
	d->dp = fdopendir(fd);
	if (!d->dp) {
		close(fd);
		return -ENOMEM;
	}
	d->dev = st.st_dev;
	return 0;
}

/* A handle for one READDIR when the kernel sends no OPENDIR. */
static int oneshot_dir(struct jf_inode *inode, struct jf_dir **out)
{
	char path[JF_PATH_MAX + 1];
	struct jf_dir *d;
	int r = jf_inode_path(inode, path, sizeof(path));

	if (r < 0)
		return r;
	d = calloc(1, sizeof(*d) + (size_t)r + 1);
	if (!d)
		return -ENOMEM;
	memcpy(d->path, path, (size_t)r + 1);
	d->inode = inode;
	*out = d;
	return 0;
}

/* Add one visible entry; returns its size, 0 when it did not fit. */
static size_t add_entry(fuse_req_t req, struct jf_inode *dir, struct jf_dir *d, char *p, size_t rem,
			struct dirent *de, bool plus, int *err)
{
	struct probe pr;
	struct stat st = {0};
	size_t sz;
	int r;

	*err = 0;
	if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
		/* The root's ".." is outside the view: report the root itself,
		 * not the host inode of SOURCE's parent (invariant 3). */
		if (strcmp(de->d_name, ".") == 0 || dir == &jf_fs.root)
			st.st_ino = jf_view_ino(dir);
		else
			st.st_ino = de->d_ino;
		st.st_mode = S_IFDIR;
		if (plus) {
			struct fuse_entry_param e = {.attr = st};

			return fuse_add_direntry_plus(req, p, rem, de->d_name, &e, de->d_off);
		}
		return fuse_add_direntry(req, p, rem, de->d_name, &st, de->d_off);
	}
	r = jf_probe_child(dirfd(d->dp), d->path, d->dev, de->d_name, de->d_type, plus, &pr);
	if (r <= 0)
		return (size_t)-1; /* hidden or vanished: skip */
	if (!plus) {
		struct jf_inode_info known;
		bool in_table = pr.have_stat && jf_inode_info(pr.st.st_dev, pr.st.st_ino, &known);

		st.st_ino = in_table ? known.view_ino : de->d_ino;
		if (!in_table && pr.have_stat && pr.st.st_dev != jf_fs.root_dev)
			st.st_ino = de->d_ino | (1ULL << 63);
		st.st_mode = (mode_t)DTTOIF(de->d_type);
		return fuse_add_direntry(req, p, rem, de->d_name, &st, de->d_off);
	}
	struct fuse_entry_param e;

	r = jf_make_entry(dir, de->d_name, &pr, &e);
	if (r < 0) {
		*err = r;
		return 0;
	}
	sz = fuse_add_direntry_plus(req, p, rem, de->d_name, &e, de->d_off);
	if (sz > rem)
		jf_inode_forget(jf_inode_get(e.ino), 1);
	return sz;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	struct jf_dir *d = (struct jf_dir *)(uintptr_t)fi->fh;
	struct jf_inode *dir = jf_inode_get(ino);
	_cleanup_free_ struct jf_dir *oneshot = NULL;
	_cleanup_free_ char *buf = malloc(size);
	size_t rem = size;
	int err = 0;

	if (!d) /* no_opendir: a handle for this request only */
		err = oneshot_dir(dir, &oneshot);
	if (!d && oneshot)
		d = oneshot;
	if (err == 0)
		err = dir_stream(d);
	if (err < 0 || !buf) {
		if (oneshot && oneshot->dp)
			closedir(oneshot->dp);
		fuse_reply_err(req, err < 0 ? -err : ENOMEM);
		return;
	}
	if (plus && off == 0)
		atomic_store(&dir->listed_ms, now_ms());
	if (off != d->offset) {
		seekdir(d->dp, off);
		d->entry = NULL;
		d->offset = off;
	}
	for (;;) {
		size_t sz;

		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				err = errno;
				break;
			}
		}
		sz = add_entry(req, dir, d, buf + (size - rem), rem, d->entry, plus, &err);
		if (err)
			break;
		if (sz != (size_t)-1) {
			if (sz > rem)
				break;
			rem -= sz;
		}
		d->offset = d->entry->d_off;
		d->entry = NULL;
	}
	if (oneshot)
		closedir(oneshot->dp);
	if (err && rem == size)
		fuse_reply_err(req, err > 0 ? err : -err);
	else
		fuse_reply_buf(req, buf, size - rem);
}

void jf_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

void jf_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

void jf_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct jf_dir *d = (struct jf_dir *)(uintptr_t)fi->fh;

	dir_unlink(d);
	if (d->dp)
		closedir(d->dp);
	jf_fd_put();
	free(d);
	fuse_reply_err(req, 0);
}

void jf_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct jf_dir *d = (struct jf_dir *)(uintptr_t)fi->fh;
	/* Not serialized with readdir by the kernel: never touch d->dp here. */
	_cleanup_close_ int fd = jf_open_inode(d->inode, O_RDONLY | O_DIRECTORY, NULL);

	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	fuse_reply_err(req, (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? errno : 0);
}
