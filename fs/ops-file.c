/* SPDX-License-Identifier: MIT */
/*
 * Open files: open, create, read, write, flush, release, fsync, fallocate,
 * lseek, copy_file_range. A handle owns one fd on the backing file; nothing
 * is buffered in the daemon (a write is on the backing fd before it is
 * acknowledged), so a killed daemon loses nothing. Byte counters are atomic
 * and reported once, at release, for the audit log.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "ops.h"

/* ---------- open / create / read / write ---------- */

static void drop_file(struct jf_file *f);

static bool wants_write(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
}

static int new_file(fuse_req_t req, struct jf_inode *inode, int fd, int flags,
		    struct fuse_file_info *fi, const struct stat *st)
{
	struct jf_file *f = calloc(1, sizeof(*f));
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	if (!f)
		return -ENOMEM;
	f->pid = ctx->pid;
	f->uid = ctx->uid;
	f->fd = fd;
	f->inode = inode;
	f->zone = inode->zone;
	f->writable = (flags & O_ACCMODE) != O_RDONLY;
	atomic_init(&f->bytes_read, 0);
	atomic_init(&f->bytes_written, 0);
	fi->fh = (uint64_t)(uintptr_t)f;
	/* Keep the page cache when the file did not change since the last open. */
	pthread_mutex_lock(&jf_fs.lock);
	if (inode->open_size == st->st_size && inode->open_mtime.tv_sec == st->st_mtim.tv_sec &&
	    inode->open_mtime.tv_nsec == st->st_mtim.tv_nsec && !(flags & O_TRUNC))
		fi->keep_cache = 1;
	inode->open_size = st->st_size;
	inode->open_mtime = st->st_mtim;
	f->next_open = inode->open_files;
	inode->open_files = f;
	pthread_mutex_unlock(&jf_fs.lock);
	if (flags & O_DIRECT)
		fi->direct_io = 1;
	return 0;
}

static int do_open(fuse_req_t req, struct jf_inode *inode, struct fuse_file_info *fi)
{
	int flags = fi->flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC);
	struct stat st;
	int fd, r;

	if (wants_write(fi->flags) && inode->zone != JF_SAFE)
		return -EROFS;
	fd = jf_open_inode(inode, flags, &st);
	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_size > jf_fs.max_size[inode->zone]) {
		close(fd);
		return -EFBIG;
	}
	if ((fi->flags & O_TRUNC) && ftruncate(fd, 0) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (fi->flags & O_TRUNC)
		st.st_size = -1; /* never keep the cache of a truncated file */
	r = new_file(req, inode, fd, fi->flags, fi, &st);
	if (r < 0)
		close(fd);
	return r;
}

void jf_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct jf_inode *inode = jf_inode_get(ino);
	char path[JF_PATH_MAX + 1] = "";
	bool w = wants_write(fi->flags);
	int r;

	r = do_open(req, inode, fi);
	if (r == -EROFS || r == -EFBIG || (r == 0 && jf_audit_wants(JF_AUDIT_ALLOW, w))) {
		jf_inode_path(inode, path, sizeof(path));
		jf_audit_op(req, "open", path, NULL, inode->zone, inode->rule,
			    r ? JF_AUDIT_DENY : JF_AUDIT_ALLOW, w, -r);
	}
	if (r < 0)
		fuse_reply_err(req, -r);
	else if (fuse_reply_open(req, fi) == -ENOENT)
		drop_file(jf_file_of(fi));
}

static int do_create(fuse_req_t req, struct jf_inode *pi, const char *name, mode_t mode,
		     struct fuse_file_info *fi, struct fuse_entry_param *e)
{
	char dpath[JF_PATH_MAX + 1], path[JF_PATH_MAX + 1];
	int flags = (fi->flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC) & ~O_TRUNC;
	struct jf_verdict v;
	struct jf_inode *inode;
	bool created = true;
	int dfd, fd = -1, r;

	dfd = jf_dir_fd(pi, dpath, sizeof(dpath));
	if (dfd < 0)
		return dfd;
	r = jf_check_new_name(req, "create", dpath, name, false, path, sizeof(path), &v);
	/* No set-user/group-ID file through the view (invariant 8). */
	mode &= ~(mode_t)(S_ISUID | S_ISGID);
	if (r == 0) {
		fd = openat(dfd, name, flags | O_EXCL, mode);
		if (fd < 0 && errno == EEXIST && !(fi->flags & O_EXCL)) {
			created = false;
			fd = openat(dfd, name, flags & ~O_CREAT);
		}
		if (fd < 0)
			r = errno == ELOOP ? -EACCES
					   : jf_hide_eexist(-errno, dfd, dpath, pi->dev, name);
	}
	if (r == 0 && created)
		jf_give_to_caller(req, dfd, name);
	if (r == 0)
		r = jf_entry_for_new(pi, dfd, dpath, name, e);
	if (r < 0 && fd >= 0 && created)
		jf_unlink_created(dfd, name, fd, false); /* leave nothing behind */
	jf_put_fd(dfd);
	if (r < 0)
		goto fail;
	inode = jf_inode_get(e->ino);
	if (inode->zone != JF_SAFE) { /* an existing hard-linked file, say */
		jf_inode_forget(inode, 1);
		r = jf_refuse(req, "create", path, NULL, inode->zone, inode->rule, -EROFS);
		goto fail;
	}
	if ((fi->flags & O_TRUNC) && !created && ftruncate(fd, 0) < 0) {
		r = -errno;
		jf_inode_forget(inode, 1);
		goto fail;
	}
	e->attr.st_size = created ? 0 : e->attr.st_size;
	r = new_file(req, inode, fd, fi->flags, fi, &e->attr);
	if (r < 0) {
		jf_inode_forget(inode, 1);
		goto fail;
	}
	fi->keep_cache = 0;
	jf_audit_op(req, "create", path, NULL, v.zone, v.rule, JF_AUDIT_ALLOW, true, 0);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	return r;
}

void jf_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	int r = do_create(req, jf_inode_get(parent), name, mode, fi, &e);

	if (r < 0)
		fuse_reply_err(req, -r);
	else if (fuse_reply_create(req, &e, fi) == -ENOENT)
		drop_file(jf_file_of(fi));
}

static bool audit_all(void)
{
	return jf_audit_wants(JF_AUDIT_ALLOW, false);
}

void jf_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct jf_file *f = jf_file_of(fi);

	if (audit_all()) {
		/* Count the bytes for the release record. */
		_cleanup_free_ char *buf = malloc(size ? size : 1);
		ssize_t n;

		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		n = pread(f->fd, buf, size, off);
		if (n < 0) {
			fuse_reply_err(req, errno);
			return;
		}
		atomic_fetch_add(&f->bytes_read, n);
		fuse_reply_buf(req, buf, (size_t)n);
		return;
	}
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);

	bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	bv.buf[0].fd = f->fd;
	bv.buf[0].pos = off;
	fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
}

void jf_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
		  struct fuse_file_info *fi)
{
	struct jf_file *f = jf_file_of(fi);
	size_t size = fuse_buf_size(in);
	uint64_t max = jf_fs.max_size[f->zone];
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(size);
	ssize_t n;

	if (f->zone != JF_SAFE || !f->writable) {
		fuse_reply_err(req, f->writable ? EROFS : EBADF);
		return;
	}
	if (fi->flags & O_APPEND) {
		struct stat st;

		if (fstat(f->fd, &st) == 0)
			off = st.st_size;
	}
	if ((uint64_t)off >= max && size > 0) {
		char path[JF_PATH_MAX + 1] = "";

		jf_inode_path(f->inode, path, sizeof(path));
		jf_refuse(req, "write", path, NULL, f->zone, f->inode->rule, -EFBIG);
		fuse_reply_err(req, EFBIG);
		return;
	}
	if ((uint64_t)off + size > max)
		size = (size_t)(max - (uint64_t)off); /* short write, then EFBIG */
	out.buf[0].size = size;
	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = f->fd;
	out.buf[0].pos = off;
	n = fuse_buf_copy(&out, in, 0);
	if (n < 0) {
		fuse_reply_err(req, (int)-n);
		return;
	}
	atomic_fetch_add(&f->bytes_written, n);
	fuse_reply_write(req, (size_t)n);
}

/* Unlink @f from its inode's open list, close and free it. */
static void drop_file(struct jf_file *f)
{
	pthread_mutex_lock(&jf_fs.lock);
	for (struct jf_file **pp = &f->inode->open_files; *pp; pp = &(*pp)->next_open) {
		if (*pp == f) {
			*pp = f->next_open;
			break;
		}
	}
	pthread_mutex_unlock(&jf_fs.lock);
	close(f->fd);
	free(f);
}

void jf_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct jf_file *f = jf_file_of(fi);

	if (jf_audit_wants(JF_AUDIT_ALLOW, false) ||
	    (f->writable && jf_audit_wants(JF_AUDIT_ALLOW, true) &&
	     atomic_load(&f->bytes_written) > 0)) {
		char path[JF_PATH_MAX + 1] = "";
		const struct fuse_ctx *ctx = fuse_req_ctx(req);
		struct jf_audit_event ev = {
			.op = "release",
			.path = path,
			.zone = f->zone,
			.decision = JF_AUDIT_ALLOW,
			.mutation = atomic_load(&f->bytes_written) > 0,
			.rule = f->inode->rule,
			.pid = f->pid ? f->pid : ctx->pid,
			.uid = f->pid ? f->uid : ctx->uid,
			.bytes_read = atomic_load(&f->bytes_read),
			.bytes_written = atomic_load(&f->bytes_written),
		};
		jf_inode_path(f->inode, path, sizeof(path));
		jf_audit_emit(&ev);
	}
	drop_file(f);
	fuse_reply_err(req, 0);
}

void jf_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	int fd = jf_file_of(fi)->fd;
	int r = datasync ? fdatasync(fd) : fsync(fd);

	fuse_reply_err(req, r < 0 ? errno : 0);
}

/*
 * safe.max_file_size bounds what a file may occupy, not only its size: every
 * mode that allocates (plain, FALLOC_FL_KEEP_SIZE, FALLOC_FL_ZERO_RANGE)
 * must keep off + len under it, and FALLOC_FL_INSERT_RANGE grows the file
 * by len. Punching a hole or collapsing a range only frees. 0 or -EFBIG.
 */
static int fallocate_limit(int fd, int mode, off_t off, off_t len)
{
	uint64_t max = jf_fs.max_size[JF_SAFE], end = (uint64_t)off + (uint64_t)len;
	struct stat st;

	if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE))
		return 0;
	if (mode & FALLOC_FL_INSERT_RANGE) {
		if (fstat(fd, &st) < 0)
			return -errno;
		end = (uint64_t)st.st_size + (uint64_t)len;
	}
	return end > max ? -EFBIG : 0;
}

void jf_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
		  struct fuse_file_info *fi)
{
	struct jf_file *f = jf_file_of(fi);
	char path[JF_PATH_MAX + 1] = "";
	int r = 0;

	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL); /* what fallocate(2) answers: no decision */
		return;
	}
	if (f->zone != JF_SAFE)
		r = -EROFS;
	else
		r = fallocate_limit(f->fd, mode, off, len);
	if (r < 0) {
		jf_inode_path(f->inode, path, sizeof(path));
		fuse_reply_err(
			req, -jf_refuse(req, "fallocate", path, NULL, f->zone, f->inode->rule, r));
		return;
	}
	fuse_reply_err(req, fallocate(f->fd, mode, off, len) < 0 ? errno : 0);
}

void jf_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi)
{
	off_t r = lseek(jf_file_of(fi)->fd, off, whence);

	if (r < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_lseek(req, r);
}

void jf_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			struct fuse_file_info *fi_out, size_t len, int flags)
{
	struct jf_file *in = jf_file_of(fi_in), *out = jf_file_of(fi_out);
	ssize_t n;

	if (out->zone != JF_SAFE || !out->writable) {
		fuse_reply_err(req, out->writable ? EROFS : EBADF);
		return;
	}
	if ((uint64_t)off_out >= jf_fs.max_size[JF_SAFE] && len > 0) {
		fuse_reply_err(req, EFBIG);
		return;
	}
	if ((uint64_t)off_out + len > jf_fs.max_size[JF_SAFE])
		len = (size_t)(jf_fs.max_size[JF_SAFE] - (uint64_t)off_out);
	n = copy_file_range(in->fd, &off_in, out->fd, &off_out, len, (unsigned)flags);
	if (n < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	atomic_fetch_add(&in->bytes_read, n);
	atomic_fetch_add(&out->bytes_written, n);
	fuse_reply_write(req, (size_t)n);
}
