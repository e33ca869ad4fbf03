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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "backing.h"
#include "changes.h"
#include "cleanup.h"
#include "fd-budget.h"
#include "fsstate.h"
#include "gitfile.h"
#include "gitlink.h"
#include "handler.h"
#include "inode.h"
#include "ops.h"
#include "passthrough.h"
#include "policy.h"
#include "probe.h"
#include "zone.h"

/* ---------- open / create / read / write ---------- */

static void drop_file(struct jf_file *f);

static bool wants_write(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
}

/*
 * Open @tmp's backing file for this request only (no_open mode: the file
 * has no handle) with @flags, by its path with the (dev, ino) check, or
 * through the fd the inode holds (jf_inode_hold_writer(): unlinked through the
 * view, or write-protected since a caller opened it for writing; the
 * kernel checked the caller's open). 0, -ESTALE,
 * -ENOENT (unlinked elsewhere), -EFBIG (over the zone's max_file_size, as
 * an OPEN would have answered), an errno of openat2(2).
 */
static int open_per_request(struct jf_file *tmp, int flags)
{
	struct stat st;
	int fd, r;

	fd = jf_open_inode(tmp->inode, flags, &st);
	if (fd >= 0 && (flags & O_ACCMODE) != O_RDONLY && (r = jf_kill_setid(fd)) < 0) {
		close(fd);
		return r;
	}
	if (fd == -ENOENT || fd == -ESTALE || fd == -EACCES) {
		int ofd = jf_inode_orphan_fd(tmp->inode);

		if (ofd >= 0 && fstat(ofd, &st) < 0)
			st.st_size = 0;
		if (ofd >= 0)
			fd = ofd;
		else if (fd != -EACCES)
			jf_forget_name_later(tmp->inode); /* the name holds another file now */
	}
	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_size > jf_fs.max_size[tmp->zone]) {
		close(fd);
		return -EFBIG;
	}
	tmp->fd = fd;
	return 0;
}

/* Audit and return @err (-EFBIG: over the zone's max_file_size) for @op on
 * @inode. */
static int refuse_size(fuse_req_t req, const char *op, struct jf_inode *inode,
		       const struct jf_verdict *v, int err)
{
	char path[JF_PATH_MAX + 1] = "";

	jf_inode_path(inode, path, sizeof(path));
	return jf_refuse(req, op, path, NULL, v->zone, v->rule, err);
}

/*
 * The handle a reading request (@op: READ, FSYNC, LSEEK, the source of
 * COPY_FILE_RANGE) works on. In no_open mode a file opened with open(2) has
 * none (fh == 0): the backing file is opened read-only for this request,
 * into @tmp (open_per_request). The caller ends with put_file(). Returns 0
 * or -ENOENT (renamed to a hidden name since the open), -EFBIG (audited),
 * an errno of open_per_request().
 */
static int get_file(fuse_req_t req, const char *op, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct jf_file *tmp, struct jf_file **out)
{
	struct jf_inode *inode = jf_inode_get(ino);
	struct jf_verdict v;
	int r;

	*out = jf_file_of(fi);
	if (*out)
		return 0;
	jf_zone_read(jf_req_view(req), inode, &v);
	if (v.zone == JF_DENIED)
		return -ENOENT;
	*tmp = (struct jf_file){.fd = -1, .inode = inode, .zone = v.zone};
	r = open_per_request(tmp, O_RDONLY);
	if (r == -EFBIG)
		return refuse_size(req, op, inode, &v, r);
	if (r == 0)
		*out = tmp;
	return r;
}

static void put_file(struct jf_file *f, struct jf_file *tmp)
{
	if (f == tmp && tmp->fd >= 0)
		close(tmp->fd);
}

static int new_file(fuse_req_t req, struct jf_inode *inode, const struct jf_verdict *v, int fd,
		    int flags, struct fuse_file_info *fi, const struct stat *st)
{
	struct jf_file *f = calloc(1, sizeof(*f));
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	int32_t reg = 0;
	int r;

	if (!f)
		return -ENOMEM;
	f->pid = ctx->pid;
	f->uid = ctx->uid;
	f->fd = fd;
	f->inode = inode;
	f->zone = v->zone;
	f->by_content = v->by_content;
	f->writable = (flags & O_ACCMODE) != O_RDONLY;
	atomic_init(&f->bytes_read, 0);
	atomic_init(&f->bytes_written, 0);
	/* Keep the page cache when the file did not change since the last open. */
	jf_fs_lock();
	while ((r = jf_pt_attach(f, st->st_size, &reg)) == -EAGAIN) {
		jf_fs_unlock();
		reg = jf_pt_register(f); /* != 0: at most one more turn */
		jf_fs_lock();
	}
	if (r < 0) {
		jf_fs_unlock();
		jf_pt_unregister(reg);
		free(f);
		return r;
	}
	fi->fh = (uint64_t)(uintptr_t)f;
	if (inode->open_size == st->st_size && inode->open_mtime.tv_sec == st->st_mtim.tv_sec &&
	    inode->open_mtime.tv_nsec == st->st_mtim.tv_nsec && !(flags & O_TRUNC))
		fi->keep_cache = 1;
	inode->open_size = st->st_size;
	inode->open_mtime = st->st_mtim;
	f->next_open = inode->open_files;
	inode->open_files = f;
	jf_fs_unlock();
	jf_pt_unregister(reg);
	if (flags & O_DIRECT)
		fi->direct_io = 1;
	return 0;
}

/* Truncate the file of @fd (@inode), opened with O_TRUNC, to nothing; a
 * .git file (@gitfile) through its check (an empty one always passes it,
 * unless the file has another name). */
static int truncate_new(struct jf_inode *inode, int fd, bool gitfile)
{
	char path[JF_PATH_MAX + 1] = "";
	const char *why;

	if (!gitfile)
		return ftruncate(fd, 0) < 0 ? -errno : 0;
	jf_inode_path(inode, path, sizeof(path));
	return jf_gitfile_truncate(fd, path, 0, &why);
}

/* Open @inode for an OPEN request; a write open also needs the zone of all
 * the file's names (jf_zone_links, which updates @v): -EROFS. */
static int do_open(fuse_req_t req, struct jf_inode *inode, struct jf_verdict *v,
		   struct fuse_file_info *fi)
{
	int flags = fi->flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC);
	bool gitfile = jf_gitfile_inode(v, inode);
	struct stat st;
	int fd, r;

	if (v->zone == JF_DENIED)
		return -ENOENT; /* renamed to a hidden name since the lookup */
	if (wants_write(fi->flags) && v->zone != JF_SAFE && !gitfile)
		return -EROFS;
	if (wants_write(fi->flags) && (r = jf_changes_note_inode(inode, true)) < 0)
		return r;
	fd = jf_open_inode(inode, flags, &st);
	if (fd < 0)
		return fd;
	r = wants_write(fi->flags) ? jf_zone_links(jf_req_view(req), fd, v) : 0;
	if (r == 0 && wants_write(fi->flags) && v->zone != JF_SAFE && !gitfile)
		r = -EROFS;
	else if (r == 0 && (uint64_t)st.st_size > jf_fs.max_size[v->zone])
		r = -EFBIG;
	if (r < 0) {
		close(fd);
		return r;
	}
	r = wants_write(fi->flags) ? jf_kill_setid(fd) : 0;
	if (r == 0 && (fi->flags & O_TRUNC))
		r = truncate_new(inode, fd, gitfile);
	if (r < 0) {
		close(fd);
		return r;
	}
	if (fi->flags & O_TRUNC)
		st.st_size = -1; /* never keep the cache of a truncated file */
	r = new_file(req, inode, v, fd, fi->flags, fi, &st);
	if (r < 0)
		close(fd);
	return r;
}

/* Handles hold an fd of the daemon for as long as the kernel keeps them:
 * each takes a slot of the fd budget (fd-budget.c) from the caller's share,
 * given back by drop_file(). EMFILE once the budget or the caller's share of
 * it is spent. No slot in no_open mode, where create leaves no handle. */
static int open_counted(fuse_req_t req, struct jf_inode *inode, struct jf_verdict *v,
			struct fuse_file_info *fi)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	int r = jf_fd_take(JF_FD_FILE, ctx->pid, ctx->uid);

	if (r == 0 && (r = do_open(req, inode, v, fi)) < 0)
		jf_fd_put(ctx->pid, ctx->uid);
	return r;
}

static int do_create(fuse_req_t req, struct jf_inode *pi, const char *name, mode_t mode,
		     struct fuse_file_info *fi, struct fuse_entry_param *e);

static int create_counted(fuse_req_t req, struct jf_inode *pi, const char *name, mode_t mode,
			  struct fuse_file_info *fi, struct fuse_entry_param *e)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	int r = jf_fs.no_open ? 0 : jf_fd_take(JF_FD_FILE, ctx->pid, ctx->uid);

	if (r == 0 && (r = do_create(req, pi, name, mode, fi, e)) < 0 && !jf_fs.no_open)
		jf_fd_put(ctx->pid, ctx->uid);
	return r;
}

void jf_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct jf_inode *inode = jf_inode_get(ino);
	char path[JF_PATH_MAX + 1] = "";
	bool w = wants_write(fi->flags);
	struct jf_verdict v;
	int r;

	if (jf_fs.no_open) {
		/* Once per mount: the kernel sets no_open, keeps this open (fh 0)
		 * and sends neither OPEN nor RELEASE again. */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	jf_zone_read(jf_req_view(req), inode, &v);
	r = open_counted(req, inode, &v, fi);
	if (r == -EROFS || r == -EFBIG || (r == 0 && jf_audit_wants(JF_AUDIT_ALLOW, w))) {
		jf_inode_path(inode, path, sizeof(path));
		jf_audit_op(req, "open", path, NULL, v.zone, v.rule,
			    r ? JF_AUDIT_DENY : JF_AUDIT_ALLOW, w, -r);
	}
	if (r < 0)
		fuse_reply_err(req, -r);
	else if (jf_reply_open(req, fi) == -ENOENT)
		drop_file(jf_file_of(fi));
}

/*
 * Make (or, without O_EXCL, open an existing visible) regular file @name in
 * @pi for create, with @oflags from the caller's open: returns the fd
 * (caller closes it) with the new entry in @e (one lookup reference), the
 * view path in @path (@size bytes), the verdict of the name in @v and
 * whether it was made in @created. A name made here and then refused is
 * removed again. Negative errno: -EACCES for hidden names whatever they are.
 */
static int create_name(fuse_req_t req, struct jf_inode *pi, const char *name, mode_t mode,
		       int oflags, char *path, size_t size, struct jf_verdict *v, bool *created,
		       struct fuse_entry_param *e)
{
	char dpath[JF_PATH_MAX + 1];
	int flags = (oflags | O_CREAT | O_NOFOLLOW | O_CLOEXEC) & ~O_TRUNC;
	_cleanup_close_ int fd = -1;
	int dfd, r;

	*created = true;
	dfd = jf_dir_fd(pi, dpath, sizeof(dpath));
	if (dfd < 0)
		return dfd;
	r = jf_check_new_name(req, "create", pi, dfd, dpath, name, S_IFREG, path, size, v);
	/* No set-user/group-ID file through the view (docs/threat-model.md, invariant 8). */
	mode &= ~(mode_t)(S_ISUID | S_ISGID);
	if (r == 0 && jf_rule_git_sample(v->rule))
		mode &= ~(mode_t)0111;
	if (r == 0) /* in place: the name may exist, and be opened for writing */
		r = jf_changes_note(path, true);
	if (r == 0) {
		fd = openat(dfd, name, flags | O_EXCL, mode);
		if (fd < 0 && errno == EEXIST && !(oflags & O_EXCL)) {
			*created = false;
			/* Open an existing name only when the view shows it: a
			 * hidden object answers EACCES whatever it is (never
			 * EISDIR), and is never opened (no open or close-write
			 * event on it for the host's watchers). */
			r = jf_hide_eexist(-EEXIST, dfd, dpath, pi->dev, name);
			if (r == -EEXIST) {
				/* Never a FIFO or a device put at the name since
				 * the lookup (-ENXIO); -ENOENT: a symlink. */
				fd = jf_open_below(dfd, name, flags & ~O_CREAT, 0);
				r = fd >= 0	    ? 0
				    : fd == -ENOENT ? -EACCES
						    : jf_hide_eexist(fd, dfd, dpath, pi->dev, name);
			}
		}
		if (fd < 0 && r == 0)
			r = errno == ELOOP ? -EACCES
					   : jf_hide_eexist(-errno, dfd, dpath, pi->dev, name);
	}
	if (r == 0 && *created)
		jf_give_to_caller(req, dfd, name);
	if (r == 0)
		r = jf_entry_for_new(pi, dfd, dpath, name, e);
	if (r < 0 && fd >= 0 && *created)
		jf_unlink_created(dfd, name, fd, false); /* leave nothing behind */
	jf_put_fd(dfd);
	return r < 0 ? r : steal_fd(&fd);
}

static int do_create(fuse_req_t req, struct jf_inode *pi, const char *name, mode_t mode,
		     struct fuse_file_info *fi, struct fuse_entry_param *e)
{
	char path[JF_PATH_MAX + 1];
	struct jf_verdict v, now;
	struct jf_inode *inode;
	bool created;
	_cleanup_close_ int fd = -1;
	int r;

	jf_ns_assert_held();
	fd = create_name(req, pi, name, mode, fi->flags, path, sizeof(path), &v, &created, e);
	if (fd < 0)
		return fd;
	inode = jf_inode_get(e->ino);
	jf_zone_of(jf_req_view(req), inode, &now);
	if (now.zone != JF_SAFE && !jf_gitfile_checked(&now, inode->type, path)) {
		/* an existing hard-linked file, say */
		jf_inode_forget(inode, 1);
		return jf_refuse(req, "create", path, NULL, now.zone, now.rule, -EROFS);
	}
	if (!created &&
	    ((r = jf_kill_setid(fd)) < 0 ||
	     ((fi->flags & O_TRUNC) &&
	      (r = truncate_new(inode, fd, jf_gitfile_checked(&now, inode->type, path))) < 0))) {
		jf_inode_forget(inode, 1);
		return r == -EROFS ? jf_refuse(req, "create", path, NULL, now.zone, now.rule, r)
				   : r;
	}
	e->attr.st_size = created ? 0 : e->attr.st_size;
	if (jf_fs.no_open) {
		/* The kernel sends no RELEASE in no_open mode, not even for a
		 * created file: no handle, reads and writes open per request. A
		 * file made without its owner's write bit (git's 0444 objects)
		 * could not be opened again for the caller's writes. */
		if (created && !(mode & S_IWUSR))
			jf_inode_hold_writer(steal_fd(&fd));
		else
			close(steal_fd(&fd));
		fi->fh = 0;
	} else {
		r = new_file(req, inode, &now, fd, fi->flags, fi, &e->attr);
		if (r < 0) {
			jf_inode_forget(inode, 1);
			return r;
		}
		steal_fd(&fd); /* the handle owns it now */
	}
	fi->keep_cache = 0;
	jf_audit_op(req, "create", path, NULL, v.zone, v.rule, JF_AUDIT_ALLOW, true, 0);
	return 0;
}

void jf_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	int r;

	jf_ns_lock(false);
	r = create_counted(req, jf_inode_get(parent), name, mode, fi, &e);
	jf_ns_unlock();
	if (r < 0)
		fuse_reply_err(req, -r);
	else if (jf_reply_create(req, &e, fi) == -ENOENT && jf_file_of(fi))
		drop_file(jf_file_of(fi));
}

static bool audit_all(void)
{
	return jf_audit_wants(JF_AUDIT_ALLOW, false);
}

/*
 * Count the bytes a READ of @size at @off on handle @f answers, for its
 * release record: what the file holds there now. The reply is spliced from
 * the fd, not copied through a buffer, so this is exact unless the file
 * changes size during the read.
 */
static void count_read(struct jf_file *f, size_t size, off_t off)
{
	struct stat st;

	if (fstat(f->fd, &st) == 0 && st.st_size > off)
		atomic_fetch_add(&f->bytes_read, (int64_t)size < st.st_size - off
							 ? (int64_t)size
							 : st.st_size - off);
}

#define JF_SEEN_READ 1u
#define JF_SEEN_WRITE 2u

/*
 * no_open mode sends no OPEN and no RELEASE: the first READ (@bit
 * JF_SEEN_READ) or WRITE (JF_SEEN_WRITE) of an inode stands for its opens,
 * recorded once per inode while the kernel knows it (lookup to forget; the
 * kernel's page cache lives no longer, so a later read served from it was
 * recorded before). @f is the request's handle (no_open: per request).
 */
static void audit_first_use(fuse_req_t req, struct jf_file *f, unsigned bit)
{
	bool write = bit == JF_SEEN_WRITE;
	char path[JF_PATH_MAX + 1] = "";
	struct jf_verdict v;

	if (!audit_all() || (atomic_fetch_or(&f->inode->audit_seen, bit) & bit))
		return;
	/* the zone and rule as the request's checks saw them, under the lock */
	if (write)
		jf_zone_of(jf_req_view(req), f->inode, &v);
	else
		jf_zone_read(jf_req_view(req), f->inode, &v);
	jf_inode_path(f->inode, path, sizeof(path));
	jf_audit_op(req, write ? "write" : "read", path, NULL, v.zone, v.rule, JF_AUDIT_ALLOW,
		    write, 0);
}

/*
 * May the content of @f still be read? A handle on a file whose zone depends
 * on what it holds (a public certificate, a tracked file) is checked again
 * at every read: the host may have written a private key into it since the
 * open. 0 or -ENOENT (hidden now).
 */
static int still_shown(struct jf_file *f, struct jf_file *tmp)
{
	struct jf_verdict v;

	if (f == tmp || !f->by_content)
		return 0; /* get_file() checked it for this request */
	jf_zone_read(&jf_fs.view, f->inode, &v);
	return v.zone == JF_DENIED ? -ENOENT : 0;
}

void jf_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);
	struct jf_file tmp, *f;
	int r = get_file(req, "read", ino, fi, &tmp, &f);

	if (r == 0)
		r = still_shown(f, &tmp);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	if (f == &tmp)
		audit_first_use(req, f, JF_SEEN_READ);
	else if (audit_all())
		count_read(f, size, off);
	bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	bv.buf[0].fd = f->fd;
	bv.buf[0].pos = off;
	fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
	put_file(f, &tmp);
}

/*
 * The file a write-class request (@op: WRITE, FALLOCATE, the destination of
 * COPY_FILE_RANGE) works on, once its zone allows the write. The zone is
 * the inode's at its current name (@v), not the one it had when a handle
 * was opened: a file renamed (or whose directory was renamed) to a
 * RESTRICTED name is read-only from then on, and so is one that has gained
 * a name since (jf_zone_links). Outside SAFE: -EROFS, audited, and nothing
 * is opened for writing when the cached zone tells (no ETXTBSY, no event
 * for the host's watchers); a file with a new name is seen only once
 * opened. This is where a write open that reached no daemon (no_open
 * mode) is refused. Without a handle the backing file is opened for this
 * request into @tmp (open_per_request); the caller ends with put_file().
 * With @checked (a WRITE), a .git file is let through for the caller to
 * write by way of its check (jf_gitfile_write()); fallocate and
 * copy_file_range never write one.
 * 0, -EBADF (a read-only handle), -ENOENT (renamed to a hidden name since
 * the open), -EROFS, -EFBIG (audited).
 */
static int get_write_file(fuse_req_t req, const char *op, fuse_ino_t ino, struct fuse_file_info *fi,
			  bool checked, struct jf_file *tmp, struct jf_file **out,
			  struct jf_verdict *v)
{
	struct jf_file *f = jf_file_of(fi);
	struct jf_inode *inode = f ? f->inode : jf_inode_get(ino);
	char path[JF_PATH_MAX + 1] = "";
	bool gitfile;
	int r = 0;

	*out = NULL;
	if (f && !f->writable)
		return -EBADF;
	jf_zone_of(jf_req_view(req), inode, v);
	gitfile = checked && jf_gitfile_inode(v, inode);
	if (!f && v->zone == JF_DENIED)
		return -ENOENT;
	if ((v->zone == JF_SAFE || gitfile) && !f) {
		*tmp = (struct jf_file){
			.fd = -1, .inode = inode, .zone = v->zone, .writable = true};
		r = jf_changes_note_inode(inode, true);
		if (r < 0)
			return r;
		r = open_per_request(tmp, O_WRONLY);
		if (r < 0)
			return r == -EFBIG ? refuse_size(req, op, inode, v, r) : r;
		f = tmp;
	}
	if (v->zone == JF_SAFE)
		r = jf_zone_links(jf_req_view(req), f->fd, v);
	if (r == 0 && v->zone != JF_SAFE && !gitfile) {
		jf_inode_path(inode, path, sizeof(path));
		r = jf_refuse(req, op, path, NULL, v->zone, v->rule, -EROFS);
	}
	if (r < 0 && f)
		put_file(f, tmp);
	else
		*out = f;
	return r;
}

static ssize_t do_write(fuse_req_t req, struct jf_file *f, const struct jf_verdict *v,
			struct fuse_bufvec *in, off_t off, int flags)
{
	size_t size = fuse_buf_size(in);
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(size);
	uint64_t max = jf_fs.max_size[v->zone];

	if (flags & O_APPEND) {
		struct stat st;

		if (fstat(f->fd, &st) == 0)
			off = st.st_size;
	}
	if ((uint64_t)off >= max && size > 0) {
		char path[JF_PATH_MAX + 1] = "";

		jf_inode_path(f->inode, path, sizeof(path));
		return jf_refuse(req, "write", path, NULL, v->zone, v->rule, -EFBIG);
	}
	if ((uint64_t)off + size > max)
		size = (size_t)(max - (uint64_t)off); /* short write, then EFBIG */
	out.buf[0].size = size;
	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = f->fd;
	out.buf[0].pos = off;
	return fuse_buf_copy(&out, in, 0);
}

/* A WRITE to a .git file (@v): the bytes copied out of @in, then written
 * by way of the check (jf_gitfile_write()); a refusal is audited, the
 * check's reason its detail. */
static ssize_t write_gitfile(fuse_req_t req, struct jf_file *f, const struct jf_verdict *v,
			     struct fuse_bufvec *in, off_t off, int flags)
{
	char path[JF_PATH_MAX + 1] = "";
	unsigned char data[JF_GITFILE_MAX];
	size_t size = fuse_buf_size(in);
	struct fuse_bufvec mem = FUSE_BUFVEC_INIT(size);
	const char *why = "a .git file larger than jailfs checks";
	ssize_t n = -EROFS;

	jf_inode_path(f->inode, path, sizeof(path));
	mem.buf[0].mem = data;
	if (size <= sizeof(data)) {
		n = fuse_buf_copy(&mem, in, 0);
		if (n >= 0 && (size_t)n != size)
			n = -EIO;
	}
	if (n >= 0)
		n = jf_gitfile_write(f->fd, path, data, size, off, flags & O_APPEND, &why);
	if (n == -EROFS)
		return jf_refuse_detail(req, "write", path, NULL, v->zone, v->rule, -EROFS, why);
	return n;
}

void jf_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
		  struct fuse_file_info *fi)
{
	struct jf_file tmp, *f;
	struct jf_verdict v;
	ssize_t n = get_write_file(req, "write", ino, fi, true, &tmp, &f, &v);

	if (n == 0 && jf_gitfile_inode(&v, f->inode))
		n = write_gitfile(req, f, &v, in, off, fi->flags);
	else if (n == 0)
		n = do_write(req, f, &v, in, off, fi->flags);
	if (n < 0) {
		fuse_reply_err(req, (int)-n);
		/* A refused write-back of a shared mapping: its pages are clean
		 * now, and hold what the disk never got. */
		if ((n == -EROFS || n == -EFBIG) && fi->writepage)
			jf_drop_pages_later(ino);
	} else {
		atomic_fetch_add(&f->bytes_written, n);
		if (f == &tmp)
			audit_first_use(req, f, JF_SEEN_WRITE);
		fuse_reply_write(req, (size_t)n);
	}
	if (f)
		put_file(f, &tmp);
}

/* Close and free @f, which neither its inode's list nor a pin reaches. */
static void free_file(struct jf_file *f)
{
	close(f->fd);
	jf_fd_put(f->pid, f->uid);
	free(f);
}

/* Unlink @f from its inode's open list; close and free it unless a
 * jf_fstat_open_file() still uses its fd (that one frees it then). */
static void drop_file(struct jf_file *f)
{
	int32_t id;
	bool last;

	jf_fs_lock();
	for (struct jf_file **pp = &f->inode->open_files; *pp; pp = &(*pp)->next_open) {
		if (*pp == f) {
			*pp = f->next_open;
			break;
		}
	}
	id = jf_pt_detach(f);
	f->released = true;
	last = f->pins == 0;
	jf_fs_unlock();
	jf_pt_unregister(id);
	if (last)
		free_file(f);
}

int jf_fstat_open_file(struct jf_inode *inode, struct stat *st)
{
	struct jf_file *f;
	bool last = false;
	int ofd, r = -ENOENT;

	jf_fs_lock();
	f = inode->open_files;
	if (f)
		f->pins++; /* its fd stays open until we unpin it */
	ofd = inode->orphan_fd;
	jf_fs_unlock();
	if (f && fstat(f->fd, st) == 0)
		r = 0;
	else if (ofd >= 0 && fstat(ofd, st) == 0)
		r = 0;
	if (f) {
		jf_fs_lock();
		last = --f->pins == 0 && f->released;
		jf_fs_unlock();
	}
	if (last)
		free_file(f);
	return r;
}

void jf_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct jf_file *f = jf_file_of(fi);

	if (f && (jf_audit_wants(JF_AUDIT_ALLOW, false) ||
		  (f->writable && jf_audit_wants(JF_AUDIT_ALLOW, true) &&
		   atomic_load(&f->bytes_written) > 0))) {
		char path[JF_PATH_MAX + 1] = "";
		const struct fuse_ctx *ctx = fuse_req_ctx(req);
		struct jf_audit_event ev = {
			.op = "release",
			.path = path,
			.zone = f->zone,
			.decision = JF_AUDIT_ALLOW,
			.mutation = atomic_load(&f->bytes_written) > 0,
			.pid = f->pid ? f->pid : ctx->pid,
			.uid = f->pid ? f->uid : ctx->uid,
			.bytes_read = atomic_load(&f->bytes_read),
			.bytes_written = atomic_load(&f->bytes_written),
		};
		jf_fs_lock();
		ev.rule = f->inode->rule; /* [lock]: a rename may recompute it */
		jf_fs_unlock();
		jf_inode_path(f->inode, path, sizeof(path));
		jf_audit_emit(&ev);
	}
	if (f)
		drop_file(f);
	fuse_reply_err(req, 0);
}

void jf_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct jf_file tmp, *f;
	int r = get_file(req, "fsync", ino, fi, &tmp, &f);

	if (r == 0) {
		r = (datasync ? fdatasync(f->fd) : fsync(f->fd)) < 0 ? -errno : 0;
		put_file(f, &tmp);
	}
	fuse_reply_err(req, -r);
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

static int do_fallocate(fuse_req_t req, struct jf_file *f, const struct jf_verdict *v, int mode,
			off_t off, off_t len)
{
	int r = fallocate_limit(f->fd, mode, off, len);

	if (r < 0)
		return refuse_size(req, "fallocate", f->inode, v, r);
	return fallocate(f->fd, mode, off, len) < 0 ? -errno : 0;
}

void jf_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
		  struct fuse_file_info *fi)
{
	struct jf_file tmp, *f;
	struct jf_verdict v;
	int r;

	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL); /* what fallocate(2) answers: no decision */
		return;
	}
	r = get_write_file(req, "fallocate", ino, fi, false, &tmp, &f, &v);
	if (r == 0) {
		r = do_fallocate(req, f, &v, mode, off, len);
		put_file(f, &tmp);
	}
	fuse_reply_err(req, -r);
}

void jf_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi)
{
	struct jf_file tmp, *f;
	off_t r = get_file(req, "lseek", ino, fi, &tmp, &f);

	if (r == 0) {
		r = lseek(f->fd, off, whence);
		if (r < 0)
			r = -errno;
		put_file(f, &tmp);
	}
	if (r < 0)
		fuse_reply_err(req, (int)-r);
	else
		fuse_reply_lseek(req, r);
}

/* Copy into @out, a SAFE file (@v), within its max_file_size: a range that
 * starts past the limit is refused (-EFBIG, audited as a write); one that
 * straddles it is copied short. */
static ssize_t do_copy_file_range(fuse_req_t req, struct jf_file *in, off_t off_in,
				  struct jf_file *out, const struct jf_verdict *v, off_t off_out,
				  size_t len, int flags)
{
	uint64_t max = jf_fs.max_size[JF_SAFE];
	ssize_t n;

	if ((uint64_t)off_out >= max && len > 0)
		return refuse_size(req, "write", out->inode, v, -EFBIG);
	if ((uint64_t)off_out + len > max)
		len = (size_t)(max - (uint64_t)off_out);
	n = copy_file_range(in->fd, &off_in, out->fd, &off_out, len, (unsigned)flags);
	if (n < 0)
		return -errno;
	atomic_fetch_add(&in->bytes_read, n);
	atomic_fetch_add(&out->bytes_written, n);
	return n;
}

void jf_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			struct fuse_file_info *fi_out, size_t len, int flags)
{
	struct jf_file tmp_in, tmp_out, *in = NULL, *out = NULL;
	struct jf_verdict v;
	ssize_t n = get_file(req, "read", ino_in, fi_in, &tmp_in, &in);

	if (n == 0 && (n = still_shown(in, &tmp_in)) < 0)
		in = NULL;
	if (n == 0)
		n = get_write_file(req, "write", ino_out, fi_out, false, &tmp_out, &out, &v);
	if (n == 0)
		n = do_copy_file_range(req, in, off_in, out, &v, off_out, len, flags);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
	if (in)
		put_file(in, &tmp_in);
	if (out)
		put_file(out, &tmp_out);
}
