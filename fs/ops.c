/* SPDX-License-Identifier: MIT */
/*
 * The FUSE low-level operations of the jailed view.
 *
 * Every handler is thin: resolve the inode(s), call a function that returns
 * a negative errno or a result, reply exactly once. Decisions (threat model
 * invariants 2-6):
 *  - lookup and readdir classify parent_path/name before anything reaches
 *    the kernel; DENIED and refused names, the jailfs mountpoint inside
 *    SOURCE, pseudo filesystems and symlinks whose target leaves the view are
 *    answered with a negative entry / left out;
 *  - creating name X in directory D is allowed iff classify(D/X) is SAFE: a
 *    SAFE vendor/patches/new.c inside a RESTRICTED vendor/ works, and a
 *    RESTRICTED name inside a SAFE directory cannot be created. DENIED names
 *    answer EACCES, RESTRICTED ones EROFS;
 *  - every mutation of an existing object needs the object's cached zone to
 *    be SAFE (EROFS otherwise); rename and link check both ends;
 *  - a regular file with st_nlink > 1 is RESTRICTED (policy default
 *    hardlinks = restricted): its other name may be a secret. Links made
 *    through the view between SAFE names stay SAFE while the daemon knows the
 *    inode.
 * Ownership: when the daemon runs as root for another uid, new objects are
 * created by root and handed to the caller with fchownat (group: the
 * caller's, unless the directory is set-group-ID, where the backing
 * filesystem already chose it). The kernel checks modes (default_permissions).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cleanup.h"
#include "daemon.h"

#define JF_MAX_DIR_RENAME_ENTRIES 20000
#define JF_MAX_DIR_RENAME_DEPTH 32

struct jf_dir {
	DIR *dp;
	struct dirent *entry;
	off_t offset;
	dev_t dev;
	char path[]; /* view path of the directory at opendir */
};

/* ---------- small helpers ---------- */

static void put_fd(int fd)
{
	if (fd >= 0 && fd != jf_fs.root_fd)
		close(fd);
}

static struct jf_file *file_of(struct fuse_file_info *fi)
{
	return (struct jf_file *)(uintptr_t)fi->fh;
}

void jf_classify_path(const char *path, size_t len, bool is_dir, struct jf_verdict *v)
{
	jf_classify(jf_fs.policy, path, len, is_dir, v);
}

enum jf_zone jf_effective_zone(const struct stat *st, enum jf_zone zone,
			       const struct jf_inode *existing)
{
	if (zone == JF_DENIED || !S_ISREG(st->st_mode) || st->st_nlink <= 1)
		return zone;
	switch (jf_fs.hardlinks) {
	case JF_HARDLINKS_DENY:
		return JF_DENIED;
	case JF_HARDLINKS_ZONE:
		return zone;
	case JF_HARDLINKS_RESTRICTED:
	default:
		if (existing && existing->safe_links)
			return zone;
		return zone == JF_SAFE ? JF_RESTRICTED : zone;
	}
}

static bool is_mnt_path(const char *path)
{
	return jf_fs.mnt_rel && strcmp(path, jf_fs.mnt_rel) == 0;
}

static void audit(fuse_req_t req, const char *op, const char *path, const char *path2,
		  enum jf_zone zone, const struct jf_rule *rule, enum jf_audit_decision d,
		  bool mutation, int err)
{
	if (!jf_audit_wants(d, mutation))
		return;
	const struct fuse_ctx *ctx = req ? fuse_req_ctx(req) : NULL;
	struct jf_audit_event ev = {
		.op = op,
		.path = path,
		.path2 = path2,
		.zone = zone,
		.decision = d,
		.mutation = mutation,
		.err = err,
		.rule = rule,
		.pid = ctx ? ctx->pid : 0,
		.uid = ctx ? ctx->uid : 0,
		.bytes_read = -1,
		.bytes_written = -1,
	};
	jf_audit_emit(&ev);
}

/* Refusal of a mutation on an existing object: audit and return -EROFS. */
static int refuse(fuse_req_t req, const char *op, const char *path, const char *path2,
		  enum jf_zone zone, const struct jf_rule *rule, int err)
{
	audit(req, op, path, path2, zone, rule, err == -ENOENT ? JF_AUDIT_HIDE : JF_AUDIT_DENY,
	      true, -err);
	return err;
}

static void fill_attr(struct stat *st, const struct jf_inode *inode)
{
	st->st_ino = jf_view_ino(inode);
	if (S_ISLNK(st->st_mode) && inode->symlink_len)
		st->st_size = inode->symlink_len;
}

/* Open @inode's directory (root_fd for the root); fills @path. */
static int dir_fd(struct jf_inode *dir, char *path, size_t size)
{
	int r = jf_inode_path(dir, path, size);

	if (r < 0)
		return r;
	if (dir == &jf_fs.root)
		return jf_fs.root_fd;
	if (dir->type != S_IFDIR)
		return -ENOTDIR;
	return jf_open_inode(dir, O_PATH | O_DIRECTORY, NULL);
}

/* ---------- probing a name (lookup, readdir, mutations) ---------- */

struct probe {
	char path[JF_PATH_MAX + 1]; /* view path of the child */
	size_t len;
	struct stat st;
	bool have_stat;
	struct jf_verdict v;
	uint32_t symlink_len;
	enum jf_refusal refusal;
};

/*
 * Decide whether @name in directory @dirfd (view path @dirpath, device
 * @dir_dev) is visible. @dtype is a d_type hint (DT_UNKNOWN to stat);
 * @want_stat forces a stat. Returns 1 visible, 0 hidden by policy, -errno
 * (-ENOENT absent). Fills @p.
 */
static int probe_child(int dirfd, const char *dirpath, dev_t dir_dev, const char *name,
		       unsigned char dtype, bool want_stat, struct probe *p)
{
	char target[JF_PATH_MAX + 1], view[JF_PATH_MAX + 1];
	int r;

	p->have_stat = false;
	p->symlink_len = 0;
	p->v.zone = JF_DENIED;
	p->v.rule = NULL;
	p->refusal = jf_check_name(name, strlen(name));
	if (p->refusal != JF_REFUSE_NONE)
		return 0;
	r = jf_join(p->path, sizeof(p->path), dirpath, name);
	if (r < 0)
		return r;
	p->len = (size_t)r;
	if (is_mnt_path(p->path))
		return 0; /* checked before any stat: stat would call into ourselves */
	if (want_stat || dtype == DT_UNKNOWN || dtype == DT_DIR ||
	    (dtype == DT_REG && jf_fs.hardlinks != JF_HARDLINKS_ZONE)) {
		if (fstatat(dirfd, name, &p->st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		p->have_stat = true;
		dtype = IFTODT(p->st.st_mode);
	}
	jf_classify_path(p->path, p->len, dtype == DT_DIR, &p->v);
	if (p->v.zone == JF_DENIED)
		return 0;
	if (dtype == DT_DIR && p->st.st_dev != dir_dev) {
		/* A mount crossed: hide pseudo filesystems. */
		int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		bool pseudo = fd < 0 || jf_is_pseudo_fs(fd);

		if (fd >= 0)
			close(fd);
		if (pseudo)
			return 0;
	}
	if (dtype == DT_LNK) {
		ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

		if (n < 0)
			return -errno;
		target[n] = '\0';
		if (jf_symlink_view(dirpath, target, view, sizeof(view)) < 0)
			return 0;
		p->symlink_len = (uint32_t)strlen(view);
	}
	if (p->have_stat) {
		struct jf_inode *existing = NULL;

		if (S_ISREG(p->st.st_mode) && p->st.st_nlink > 1)
			existing = jf_inode_find(p->st.st_dev, p->st.st_ino);
		p->v.zone = jf_effective_zone(&p->st, p->v.zone, existing);
		if (p->v.zone == JF_DENIED)
			return 0;
	}
	return 1;
}

static void reply_negative(fuse_req_t req)
{
	struct fuse_entry_param e = {
		.ino = 0,
		.entry_timeout = jf_fs.opts->negative_timeout,
	};
	fuse_reply_entry(req, &e);
}

/* Register a probed child in the table and fill @e. */
static int make_entry(struct jf_inode *parent, const char *name, struct probe *p,
		      struct fuse_entry_param *e)
{
	bool created;
	struct jf_inode *inode =
		jf_inode_ref(parent, name, &p->st, p->v.zone, p->v.rule, &created);

	if (!inode)
		return -ENOMEM;
	inode->symlink_len = p->symlink_len;
	memset(e, 0, sizeof(*e));
	e->ino = (fuse_ino_t)(uintptr_t)inode;
	if (inode == &jf_fs.root)
		e->ino = FUSE_ROOT_ID;
	e->attr = p->st;
	fill_attr(&e->attr, inode);
	e->attr_timeout = jf_fs.opts->attr_timeout;
	e->entry_timeout = jf_fs.opts->entry_timeout;
	return 0;
}

/* Stat @name in @dirfd after we created it and reply with its entry. */
static int entry_for_new(struct jf_inode *parent, int dirfd, const char *dirpath,
			 const char *name, struct fuse_entry_param *e)
{
	struct probe p;
	int r = probe_child(dirfd, dirpath, parent->dev, name, DT_UNKNOWN, true, &p);

	if (r < 0)
		return r;
	if (r == 0)
		return -EACCES;
	return make_entry(parent, name, &p, e);
}

/* ---------- lookup / forget / getattr ---------- */

static void jf_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct jf_inode *pi = jf_inode_get(parent);
	char dpath[JF_PATH_MAX + 1];
	struct fuse_entry_param e;
	struct probe p;
	int fd, r;

	if (strlen(name) > JF_NAME_MAX) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	fd = dir_fd(pi, dpath, sizeof(dpath));
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	r = probe_child(fd, dpath, pi->dev, name, DT_UNKNOWN, true, &p);
	put_fd(fd);
	if (r == 0) {
		if (jf_audit_wants(JF_AUDIT_HIDE, false)) {
			const struct fuse_ctx *ctx = fuse_req_ctx(req);
			char full[JF_PATH_MAX + 1];
			struct jf_audit_event ev = {
				.op = "lookup", .path = full, .zone = JF_DENIED,
				.decision = JF_AUDIT_HIDE, .err = ENOENT, .rule = p.v.rule,
				.refusal = p.refusal != JF_REFUSE_NONE ? jf_refusal_reason(p.refusal)
								       : NULL,
				.pid = ctx->pid, .uid = ctx->uid, .bytes_read = -1,
				.bytes_written = -1,
			};
			if (jf_join(full, sizeof(full), dpath, name) < 0)
				snprintf(full, sizeof(full), "%s", dpath);
			jf_audit_emit(&ev);
		}
		reply_negative(req);
		return;
	}
	if (r == -ENOENT) {
		reply_negative(req);
		return;
	}
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	r = make_entry(pi, name, &p, &e);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	audit(req, "lookup", p.path, NULL, p.v.zone, p.v.rule, JF_AUDIT_ALLOW, false, 0);
	fuse_reply_entry(req, &e);
}

static void jf_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	jf_inode_forget(jf_inode_get(ino), nlookup);
	fuse_reply_none(req);
}

static void jf_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		jf_inode_forget(jf_inode_get(forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

/* fstat through an open handle of @inode, if any: cheaper than reopening the
 * path, and the only way for a file unlinked while open. 0 or -ENOENT. */
static int fstat_open_file(struct jf_inode *inode, struct stat *st)
{
	int r = -ENOENT;

	pthread_mutex_lock(&jf_fs.lock);
	if (inode->open_files && fstat(inode->open_files->fd, st) == 0)
		r = 0;
	pthread_mutex_unlock(&jf_fs.lock);
	return r;
}

static int do_getattr(struct jf_inode *inode, struct fuse_file_info *fi, struct stat *st)
{
	int fd;

	if (fi && fi->fh) {
		if (fstat(file_of(fi)->fd, st) < 0)
			return -errno;
	} else if (inode == &jf_fs.root) {
		if (fstat(jf_fs.root_fd, st) < 0)
			return -errno;
	} else if (fstat_open_file(inode, st) < 0) {
		fd = jf_open_inode(inode, O_PATH, st);
		if (fd < 0)
			return fd;
		close(fd);
	}
	fill_attr(st, inode);
	return 0;
}

static void jf_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int r = do_getattr(jf_inode_get(ino), fi, &st);

	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_attr(req, &st, jf_fs.opts->attr_timeout);
}

/* ---------- setattr ---------- */

static int set_times(int fd, const struct stat *attr, int to_set)
{
	struct timespec tv[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT } };
	char proc[64];

	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		tv[0].tv_nsec = UTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_ATIME)
		tv[0] = attr->st_atim;
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		tv[1].tv_nsec = UTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_MTIME)
		tv[1] = attr->st_mtim;
	if (utimensat(fd, "", tv, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (errno != EINVAL && errno != EBADF)
		return -errno;
	jf_proc_fd_path(proc, sizeof(proc), fd);
	return utimensat(AT_FDCWD, proc, tv, 0) < 0 ? -errno : 0;
}

static int do_truncate(struct jf_inode *inode, struct jf_file *f, off_t size)
{
	int fd, r = 0;

	if ((uint64_t)size > jf_fs.max_size[JF_SAFE])
		return -EFBIG;
	if (f && f->writable)
		return ftruncate(f->fd, size) < 0 ? -errno : 0;
	fd = jf_open_inode(inode, O_WRONLY | O_NONBLOCK, NULL);
	if (fd < 0)
		return fd;
	if (ftruncate(fd, size) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int do_setattr(struct jf_inode *inode, struct stat *attr, int to_set,
		      struct fuse_file_info *fi, struct stat *out)
{
	struct jf_file *f = fi ? file_of(fi) : NULL;
	_cleanup_close_ int pfd = -1;
	char proc[64];
	int fd, r;

	if (f) {
		fd = f->fd;
	} else if (inode == &jf_fs.root) {
		fd = jf_fs.root_fd;
	} else {
		pfd = jf_open_inode(inode, O_PATH, NULL);
		if (pfd < 0)
			return pfd;
		fd = pfd;
	}
	if (to_set & FUSE_SET_ATTR_MODE) {
		if (inode->type == S_IFLNK)
			return -EOPNOTSUPP;
		jf_proc_fd_path(proc, sizeof(proc), fd);
		if (chmod(proc, attr->st_mode & 07777) < 0)
			return -errno;
	}
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t u = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t g = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;

		if (fchownat(fd, "", u, g, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		r = do_truncate(inode, f, attr->st_size);
		if (r < 0)
			return r;
	}
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
		      FUSE_SET_ATTR_MTIME_NOW)) {
		r = set_times(fd, attr, to_set);
		if (r < 0)
			return r;
	}
	if (fstat(fd, out) < 0)
		return -errno;
	fill_attr(out, inode);
	return 0;
}

static const char *setattr_op(int to_set)
{
	if (to_set & FUSE_SET_ATTR_SIZE)
		return "truncate";
	if (to_set & FUSE_SET_ATTR_MODE)
		return "chmod";
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
		return "chown";
	return "utimens";
}

static void jf_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct jf_inode *inode = jf_inode_get(ino);
	char path[JF_PATH_MAX + 1] = "";
	struct stat st;
	int r;

	jf_inode_path(inode, path, sizeof(path));
	if (inode->zone != JF_SAFE) {
		fuse_reply_err(req, -refuse(req, setattr_op(to_set), path, NULL, inode->zone,
					    inode->rule, -EROFS));
		return;
	}
	r = do_setattr(inode, attr, to_set, fi, &st);
	if (r < 0) {
		if (r == -EFBIG)
			refuse(req, setattr_op(to_set), path, NULL, inode->zone, inode->rule, r);
		fuse_reply_err(req, -r);
		return;
	}
	audit(req, setattr_op(to_set), path, NULL, inode->zone, inode->rule, JF_AUDIT_ALLOW,
	      true, 0);
	fuse_reply_attr(req, &st, jf_fs.opts->attr_timeout);
}

/* ---------- readlink ---------- */

static int do_readlink(struct jf_inode *inode, char *out, size_t size)
{
	char path[JF_PATH_MAX + 1], target[JF_PATH_MAX + 1];
	ssize_t n;
	int fd, r;

	r = jf_inode_path(inode, path, sizeof(path));
	if (r < 0)
		return r;
	fd = jf_open_inode(inode, O_PATH, NULL);
	if (fd < 0)
		return fd;
	n = readlinkat(fd, "", target, sizeof(target) - 1);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	target[n] = '\0';
	/* The directory part of the link's view path. */
	char *slash = strrchr(path, '/');

	if (slash)
		*slash = '\0';
	else
		path[0] = '\0';
	return jf_symlink_view(path, target, out, size);
}

static void jf_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char out[JF_PATH_MAX + 1];
	int r = do_readlink(jf_inode_get(ino), out, sizeof(out));

	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_readlink(req, out);
}

/* ---------- creating names ---------- */

/* May @name be created in view dir @dpath? 0, -EACCES (DENIED or refused
 * name), -EROFS (RESTRICTED). Audits refusals. */
static int check_new_name(fuse_req_t req, const char *op, const char *dpath, const char *name,
			  bool is_dir, char *path, size_t size, struct jf_verdict *v)
{
	enum jf_refusal refusal = jf_check_name(name, strlen(name));
	int r;

	v->zone = JF_DENIED;
	v->rule = NULL;
	r = jf_join(path, size, dpath, name);
	if (r < 0)
		return r;
	if (refusal == JF_REFUSE_NONE && !is_mnt_path(path))
		jf_classify_path(path, (size_t)r, is_dir, v);
	if (v->zone == JF_SAFE)
		return 0;
	r = v->zone == JF_DENIED ? -EACCES : -EROFS;
	if (jf_audit_wants(JF_AUDIT_DENY, true)) {
		const struct fuse_ctx *ctx = fuse_req_ctx(req);
		struct jf_audit_event ev = {
			.op = op, .path = path, .zone = v->zone, .decision = JF_AUDIT_DENY,
			.mutation = true, .err = -r, .rule = v->rule,
			.refusal = refusal != JF_REFUSE_NONE ? jf_refusal_reason(refusal) : NULL,
			.pid = ctx->pid, .uid = ctx->uid, .bytes_read = -1, .bytes_written = -1,
		};
		jf_audit_emit(&ev);
	}
	return r;
}

/* Hand a new object to the calling user when we run as root for someone else. */
static void give_to_caller(fuse_req_t req, int dirfd, const char *name)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct stat dst;
	gid_t gid = ctx->gid;

	if (jf_fs.daemon_uid != 0 || ctx->uid == 0)
		return;
	if (fstat(dirfd, &dst) == 0 && (dst.st_mode & S_ISGID))
		gid = (gid_t)-1;
	(void)fchownat(dirfd, name, ctx->uid, gid, AT_SYMLINK_NOFOLLOW);
}

enum mk_kind { MK_NOD, MK_DIR, MK_SYMLINK };

static int do_make(fuse_req_t req, struct jf_inode *pi, const char *name, enum mk_kind kind,
		   mode_t mode, const char *link, struct fuse_entry_param *e, const char **op)
{
	char dpath[JF_PATH_MAX + 1], path[JF_PATH_MAX + 1];
	struct jf_verdict v;
	int fd, r;

	*op = kind == MK_DIR ? "mkdir" : kind == MK_SYMLINK ? "symlink" : "mknod";
	if (kind == MK_NOD && !S_ISREG(mode) && !S_ISFIFO(mode) && !S_ISSOCK(mode))
		return -EPERM; /* no device nodes, ever (invariant 8) */
	fd = dir_fd(pi, dpath, sizeof(dpath));
	if (fd < 0)
		return fd;
	r = check_new_name(req, *op, dpath, name, kind == MK_DIR, path, sizeof(path), &v);
	if (r == 0 && kind == MK_SYMLINK && jf_symlink_check_new(dpath, link) < 0) {
		r = -EACCES;
		audit(req, *op, path, link, v.zone, v.rule, JF_AUDIT_DENY, true, EACCES);
	}
	if (r == 0) {
		if (kind == MK_DIR)
			r = mkdirat(fd, name, mode);
		else if (kind == MK_SYMLINK)
			r = symlinkat(link, fd, name);
		else
			r = mknodat(fd, name, mode, 0);
		r = r < 0 ? -errno : 0;
	}
	if (r == 0) {
		give_to_caller(req, fd, name);
		audit(req, *op, path, kind == MK_SYMLINK ? link : NULL, v.zone, v.rule,
		      JF_AUDIT_ALLOW, true, 0);
		r = entry_for_new(pi, fd, dpath, name, e);
	}
	put_fd(fd);
	return r;
}

static void reply_make(fuse_req_t req, fuse_ino_t parent, const char *name, enum mk_kind kind,
		       mode_t mode, const char *link)
{
	struct fuse_entry_param e;
	const char *op;
	int r = do_make(req, jf_inode_get(parent), name, kind, mode, link, &e, &op);

	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_entry(req, &e);
}

static void jf_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev)
{
	reply_make(req, parent, name, MK_NOD, mode, NULL);
}

static void jf_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	reply_make(req, parent, name, MK_DIR, mode, NULL);
}

static void jf_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	reply_make(req, parent, name, MK_SYMLINK, 0, link);
}

/* ---------- removing names ---------- */

/* Probe an existing, visible name for a mutation: fills @p; 0 when SAFE,
 * -ENOENT when absent or hidden, -EROFS otherwise. */
static int probe_existing(int fd, const char *dpath, dev_t dev, const char *name,
			  struct probe *p)
{
	int r = probe_child(fd, dpath, dev, name, DT_UNKNOWN, true, p);

	if (r <= 0)
		return r == 0 ? -ENOENT : r;
	struct jf_inode *known = jf_inode_find(p->st.st_dev, p->st.st_ino);

	if (known && known->zone > p->v.zone && !(known->safe_links && p->v.zone == JF_SAFE))
		p->v.zone = known->zone;
	return p->v.zone == JF_SAFE ? 0 : -EROFS;
}

/* Forget the table's name for a removed @name in @pi. */
static void detach_name(struct jf_inode *pi, const char *name, const struct stat *st)
{
	struct jf_inode *inode = jf_inode_find(st->st_dev, st->st_ino);

	if (inode && inode != &jf_fs.root && inode->parent == pi && inode->name &&
	    strcmp(inode->name, name) == 0)
		jf_inode_move(inode, NULL, NULL);
}

static int do_remove(fuse_req_t req, struct jf_inode *pi, const char *name, bool dir)
{
	const char *op = dir ? "rmdir" : "unlink";
	char dpath[JF_PATH_MAX + 1];
	struct probe p;
	int fd, r;

	fd = dir_fd(pi, dpath, sizeof(dpath));
	if (fd < 0)
		return fd;
	r = probe_existing(fd, dpath, pi->dev, name, &p);
	if (r < 0) {
		if (r == -EROFS || r == -ENOENT)
			refuse(req, op, p.path, NULL, p.v.zone, p.v.rule, r);
	} else if (unlinkat(fd, name, dir ? AT_REMOVEDIR : 0) < 0) {
		r = -errno;
	} else {
		detach_name(pi, name, &p.st);
		audit(req, op, p.path, NULL, p.v.zone, p.v.rule, JF_AUDIT_ALLOW, true, 0);
	}
	put_fd(fd);
	return r;
}

static void jf_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, -do_remove(req, jf_inode_get(parent), name, false));
}

static void jf_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, -do_remove(req, jf_inode_get(parent), name, true));
}

/* ---------- rename ---------- */

/*
 * Renaming a directory moves every name below it. Allowed only when every
 * entry below is SAFE at its old and at its new path; otherwise -EXDEV, which
 * makes mv(1) fall back to copy + delete, checked name by name.
 */
static int subtree_ok(int parent_fd, char *oldp, size_t olen, char *newp, size_t nlen, int depth,
		      unsigned *budget)
{
	_cleanup_closedir_ DIR *dp = NULL;
	struct dirent *de;
	int fd;

	if (depth > JF_MAX_DIR_RENAME_DEPTH)
		return -EXDEV;
	fd = openat(parent_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(dp))) {
		size_t n = strlen(de->d_name);
		struct jf_verdict v;
		struct stat st;
		bool is_dir;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (--*budget == 0 || olen + n + 2 > JF_PATH_MAX || nlen + n + 2 > JF_PATH_MAX)
			return -EXDEV;
		if (jf_check_name(de->d_name, n) != JF_REFUSE_NONE)
			return -EXDEV;
		if (fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		is_dir = S_ISDIR(st.st_mode);
		sprintf(oldp + olen, "/%s", de->d_name);
		sprintf(newp + nlen, "/%s", de->d_name);
		jf_classify_path(oldp, olen + n + 1, is_dir, &v);
		if (jf_effective_zone(&st, v.zone, NULL) != JF_SAFE)
			return -EXDEV;
		jf_classify_path(newp, nlen + n + 1, is_dir, &v);
		if (jf_effective_zone(&st, v.zone, NULL) != JF_SAFE)
			return -EXDEV;
		if (is_dir) {
			_cleanup_close_ int sub = openat(dirfd(dp), de->d_name,
							 O_PATH | O_DIRECTORY | O_NOFOLLOW |
								 O_CLOEXEC);
			int r;

			if (sub < 0)
				return -errno;
			r = subtree_ok(sub, oldp, olen + n + 1, newp, nlen + n + 1, depth + 1,
				       budget);
			if (r < 0)
				return r;
		}
		oldp[olen] = '\0';
		newp[nlen] = '\0';
	}
	return 0;
}

static int check_dir_move(int pfd, const char *name, const char *oldpath, const char *newpath)
{
	char o[JF_PATH_MAX + 2], n[JF_PATH_MAX + 2];
	unsigned budget = JF_MAX_DIR_RENAME_ENTRIES;
	_cleanup_close_ int fd = openat(pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	snprintf(o, sizeof(o), "%s", oldpath);
	snprintf(n, sizeof(n), "%s", newpath);
	return subtree_ok(fd, o, strlen(o), n, strlen(n), 0, &budget);
}

struct rename_req {
	struct jf_inode *pi, *npi;
	const char *name, *newname;
	unsigned flags;
	int fd, nfd;
	char dpath[JF_PATH_MAX + 1], ndpath[JF_PATH_MAX + 1];
	struct probe src, dst;
	bool dst_exists;
};

static int rename_checks(fuse_req_t req, struct rename_req *rr)
{
	struct jf_verdict v;
	char newpath[JF_PATH_MAX + 1];
	bool src_dir;
	int r;

	r = probe_existing(rr->fd, rr->dpath, rr->pi->dev, rr->name, &rr->src);
	if (r < 0)
		return refuse(req, "rename", rr->src.path, NULL, rr->src.v.zone, rr->src.v.rule, r);
	src_dir = S_ISDIR(rr->src.st.st_mode);
	r = check_new_name(req, "rename", rr->ndpath, rr->newname, src_dir, newpath,
			   sizeof(newpath), &v);
	if (r < 0)
		return r;
	r = probe_existing(rr->nfd, rr->ndpath, rr->npi->dev, rr->newname, &rr->dst);
	rr->dst_exists = r != -ENOENT || fstatat(rr->nfd, rr->newname, &rr->dst.st,
						 AT_SYMLINK_NOFOLLOW) == 0;
	if (rr->dst_exists && r < 0) {
		/* An existing target must be a visible SAFE object; a hidden one
		 * (DENIED, a symlink out of the view) counts as DENIED. */
		r = r == -ENOENT ? -EACCES : r;
		return refuse(req, "rename", rr->src.path, newpath, rr->dst.v.zone,
			      rr->dst.v.rule, r);
	}
	if (rr->flags & RENAME_EXCHANGE) {
		if (!rr->dst_exists)
			return -ENOENT;
		/* The old name receives the target: classify it as such. */
		jf_classify_path(rr->src.path, rr->src.len, S_ISDIR(rr->dst.st.st_mode), &v);
		if (v.zone != JF_SAFE)
			return refuse(req, "rename", rr->src.path, newpath, v.zone, v.rule,
				      v.zone == JF_DENIED ? -EACCES : -EROFS);
		if (S_ISDIR(rr->dst.st.st_mode)) {
			r = check_dir_move(rr->nfd, rr->newname, newpath, rr->src.path);
			if (r < 0)
				return r;
		}
	}
	if (src_dir) {
		r = check_dir_move(rr->fd, rr->name, rr->src.path, newpath);
		if (r < 0)
			return refuse(req, "rename", rr->src.path, newpath, JF_SAFE, NULL, r);
	}
	return 0;
}

static void rename_update_table(struct rename_req *rr)
{
	struct jf_inode *moved = jf_inode_find(rr->src.st.st_dev, rr->src.st.st_ino);
	struct jf_inode *other = rr->dst_exists
					 ? jf_inode_find(rr->dst.st.st_dev, rr->dst.st.st_ino)
					 : NULL;

	if (other && other != moved) {
		if (rr->flags & RENAME_EXCHANGE)
			jf_inode_move(other, rr->pi, rr->name);
		else if (other->parent == rr->npi && other->name &&
			 strcmp(other->name, rr->newname) == 0)
			jf_inode_move(other, NULL, NULL);
	}
	if (moved && moved->parent == rr->pi && moved->name && strcmp(moved->name, rr->name) == 0)
		jf_inode_move(moved, rr->npi, rr->newname);
}

static int do_rename(fuse_req_t req, struct rename_req *rr)
{
	char newpath[JF_PATH_MAX + 1];
	int r;

	if (rr->flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	rr->fd = dir_fd(rr->pi, rr->dpath, sizeof(rr->dpath));
	if (rr->fd < 0)
		return rr->fd;
	rr->nfd = dir_fd(rr->npi, rr->ndpath, sizeof(rr->ndpath));
	if (rr->nfd < 0) {
		put_fd(rr->fd);
		return rr->nfd;
	}
	r = rename_checks(req, rr);
	if (r == 0 && renameat2(rr->fd, rr->name, rr->nfd, rr->newname, rr->flags) < 0)
		r = -errno;
	if (r == 0) {
		rename_update_table(rr);
		jf_join(newpath, sizeof(newpath), rr->ndpath, rr->newname);
		audit(req, "rename", rr->src.path, newpath, JF_SAFE, NULL, JF_AUDIT_ALLOW, true, 0);
	}
	put_fd(rr->fd);
	put_fd(rr->nfd);
	return r;
}

static void jf_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct rename_req *rr = calloc(1, sizeof(*rr));
	int r;

	if (!rr) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	rr->pi = jf_inode_get(parent);
	rr->npi = jf_inode_get(newparent);
	rr->name = name;
	rr->newname = newname;
	rr->flags = flags;
	r = do_rename(req, rr);
	free(rr);
	fuse_reply_err(req, -r);
}

/* ---------- link ---------- */

static int do_link(fuse_req_t req, struct jf_inode *inode, struct jf_inode *npi,
		   const char *newname, struct fuse_entry_param *e)
{
	char path[JF_PATH_MAX + 1] = "", ndpath[JF_PATH_MAX + 1], newpath[JF_PATH_MAX + 1];
	char proc[64];
	struct jf_verdict v;
	int fd, nfd, r;

	jf_inode_path(inode, path, sizeof(path));
	if (inode->zone != JF_SAFE)
		return refuse(req, "link", path, newname, inode->zone, inode->rule, -EROFS);
	if (inode->type == S_IFDIR)
		return -EPERM;
	nfd = dir_fd(npi, ndpath, sizeof(ndpath));
	if (nfd < 0)
		return nfd;
	r = check_new_name(req, "link", ndpath, newname, false, newpath, sizeof(newpath), &v);
	fd = r < 0 ? -1 : jf_open_inode(inode, O_PATH, NULL);
	if (r == 0 && fd < 0)
		r = fd;
	if (r == 0 && linkat(fd, "", nfd, newname, AT_EMPTY_PATH) < 0) {
		/* Without CAP_DAC_READ_SEARCH: link our own fd through procfs. */
		jf_proc_fd_path(proc, sizeof(proc), fd);
		if (linkat(AT_FDCWD, proc, nfd, newname, AT_SYMLINK_FOLLOW) < 0)
			r = -errno;
	}
	if (fd >= 0)
		close(fd);
	if (r == 0) {
		inode->safe_links = true;
		audit(req, "link", path, newpath, JF_SAFE, v.rule, JF_AUDIT_ALLOW, true, 0);
		r = entry_for_new(npi, nfd, ndpath, newname, e);
	}
	put_fd(nfd);
	return r;
}

static void jf_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct fuse_entry_param e;
	int r = do_link(req, jf_inode_get(ino), jf_inode_get(newparent), newname, &e);

	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_entry(req, &e);
}

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

static void jf_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct jf_inode *inode = jf_inode_get(ino);
	char path[JF_PATH_MAX + 1] = "";
	bool w = wants_write(fi->flags);
	int r;

	r = do_open(req, inode, fi);
	if (r == -EROFS || r == -EFBIG || (r == 0 && jf_audit_wants(JF_AUDIT_ALLOW, w))) {
		jf_inode_path(inode, path, sizeof(path));
		audit(req, "open", path, NULL, inode->zone, inode->rule,
		      r ? JF_AUDIT_DENY : JF_AUDIT_ALLOW, w, -r);
	}
	if (r < 0)
		fuse_reply_err(req, -r);
	else if (fuse_reply_open(req, fi) == -ENOENT)
		drop_file(file_of(fi));
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

	dfd = dir_fd(pi, dpath, sizeof(dpath));
	if (dfd < 0)
		return dfd;
	r = check_new_name(req, "create", dpath, name, false, path, sizeof(path), &v);
	if (r == 0) {
		fd = openat(dfd, name, flags | O_EXCL, mode);
		if (fd < 0 && errno == EEXIST && !(fi->flags & O_EXCL)) {
			created = false;
			fd = openat(dfd, name, flags & ~O_CREAT);
		}
		if (fd < 0)
			r = errno == ELOOP ? -EACCES : -errno;
	}
	if (r == 0 && created)
		give_to_caller(req, dfd, name);
	if (r == 0)
		r = entry_for_new(pi, dfd, dpath, name, e);
	put_fd(dfd);
	if (r < 0)
		goto fail;
	inode = jf_inode_get(e->ino);
	if (inode->zone != JF_SAFE) { /* an existing hard-linked file, say */
		jf_inode_forget(inode, 1);
		r = refuse(req, "create", path, NULL, inode->zone, inode->rule, -EROFS);
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
	audit(req, "create", path, NULL, v.zone, v.rule, JF_AUDIT_ALLOW, true, 0);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	return r;
}

static void jf_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	int r = do_create(req, jf_inode_get(parent), name, mode, fi, &e);

	if (r < 0)
		fuse_reply_err(req, -r);
	else if (fuse_reply_create(req, &e, fi) == -ENOENT)
		drop_file(file_of(fi));
}

static bool audit_all(void)
{
	return jf_audit_wants(JF_AUDIT_ALLOW, false);
}

static void jf_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct jf_file *f = file_of(fi);

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

static void jf_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
			 struct fuse_file_info *fi)
{
	struct jf_file *f = file_of(fi);
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
		refuse(req, "write", path, NULL, f->zone, f->inode->rule, -EFBIG);
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

static void jf_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* Nothing is buffered in the daemon: every write went to the backing fd. */
	fuse_reply_err(req, 0);
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

static void jf_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct jf_file *f = file_of(fi);

	if (jf_audit_wants(JF_AUDIT_ALLOW, false) ||
	    (f->writable && jf_audit_wants(JF_AUDIT_ALLOW, true) &&
	     atomic_load(&f->bytes_written) > 0)) {
		char path[JF_PATH_MAX + 1] = "";
		const struct fuse_ctx *ctx = fuse_req_ctx(req);
		struct jf_audit_event ev = {
			.op = "release", .path = path, .zone = f->zone,
			.decision = JF_AUDIT_ALLOW, .mutation = atomic_load(&f->bytes_written) > 0,
			.rule = f->inode->rule, .pid = f->pid ? f->pid : ctx->pid,
			.uid = f->pid ? f->uid : ctx->uid, .bytes_read = atomic_load(&f->bytes_read),
			.bytes_written = atomic_load(&f->bytes_written),
		};
		jf_inode_path(f->inode, path, sizeof(path));
		jf_audit_emit(&ev);
	}
	drop_file(f);
	fuse_reply_err(req, 0);
}

static void jf_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	int fd = file_of(fi)->fd;
	int r = datasync ? fdatasync(fd) : fsync(fd);

	fuse_reply_err(req, r < 0 ? errno : 0);
}

static void jf_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	struct jf_file *f = file_of(fi);
	char path[JF_PATH_MAX + 1] = "";
	int r = 0;

	if (f->zone != JF_SAFE)
		r = -EROFS;
	else if (!(mode & FALLOC_FL_KEEP_SIZE) &&
		 (uint64_t)off + (uint64_t)len > jf_fs.max_size[JF_SAFE])
		r = -EFBIG;
	if (r < 0) {
		jf_inode_path(f->inode, path, sizeof(path));
		fuse_reply_err(req, -refuse(req, "fallocate", path, NULL, f->zone,
					    f->inode->rule, r));
		return;
	}
	fuse_reply_err(req, fallocate(f->fd, mode, off, len) < 0 ? errno : 0);
}

static void jf_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	off_t r = lseek(file_of(fi)->fd, off, whence);

	if (r < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_lseek(req, r);
}

static void jf_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			       struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			       struct fuse_file_info *fi_out, size_t len, int flags)
{
	struct jf_file *in = file_of(fi_in), *out = file_of(fi_out);
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

/* ---------- directories ---------- */

static void jf_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct jf_inode *inode = jf_inode_get(ino);
	char path[JF_PATH_MAX + 1];
	struct jf_dir *d;
	struct stat st;
	int fd, r;

	r = jf_inode_path(inode, path, sizeof(path));
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	fd = jf_open_inode(inode, O_RDONLY | O_DIRECTORY, &st);
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	d = calloc(1, sizeof(*d) + (size_t)r + 1);
	if (!d || !(d->dp = fdopendir(fd))) {
		free(d);
		close(fd);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memcpy(d->path, path, (size_t)r + 1);
	d->dev = st.st_dev;
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->cache_readdir = 0;
	audit(req, "readdir", path, NULL, inode->zone, inode->rule, JF_AUDIT_ALLOW, false, 0);
	if (fuse_reply_open(req, fi) == -ENOENT) {
		closedir(d->dp);
		free(d);
	}
}

/* Add one visible entry; returns its size, 0 when it did not fit. */
static size_t add_entry(fuse_req_t req, struct jf_inode *dir, struct jf_dir *d, char *p,
			size_t rem, struct dirent *de, bool plus, int *err)
{
	struct probe pr;
	struct stat st = { 0 };
	size_t sz;
	int r;

	*err = 0;
	if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
		st.st_ino = strcmp(de->d_name, ".") == 0 ? jf_view_ino(dir) : de->d_ino;
		st.st_mode = S_IFDIR;
		if (plus) {
			struct fuse_entry_param e = { .attr = st };

			return fuse_add_direntry_plus(req, p, rem, de->d_name, &e, de->d_off);
		}
		return fuse_add_direntry(req, p, rem, de->d_name, &st, de->d_off);
	}
	r = probe_child(dirfd(d->dp), d->path, d->dev, de->d_name, de->d_type, plus, &pr);
	if (r <= 0)
		return (size_t)-1; /* hidden or vanished: skip */
	if (!plus) {
		struct jf_inode *known =
			pr.have_stat ? jf_inode_find(pr.st.st_dev, pr.st.st_ino) : NULL;

		st.st_ino = known ? jf_view_ino(known) : de->d_ino;
		if (!known && pr.have_stat && pr.st.st_dev != jf_fs.root_dev)
			st.st_ino = de->d_ino | (1ULL << 63);
		st.st_mode = (mode_t)DTTOIF(de->d_type);
		return fuse_add_direntry(req, p, rem, de->d_name, &st, de->d_off);
	}
	struct fuse_entry_param e;

	r = make_entry(dir, de->d_name, &pr, &e);
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
	_cleanup_free_ char *buf = malloc(size);
	size_t rem = size;
	int err = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
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
	if (err && rem == size)
		fuse_reply_err(req, err > 0 ? err : -err);
	else
		fuse_reply_buf(req, buf, size - rem);
}

static void jf_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

static void jf_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

static void jf_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct jf_dir *d = (struct jf_dir *)(uintptr_t)fi->fh;

	closedir(d->dp);
	free(d);
	fuse_reply_err(req, 0);
}

static void jf_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct jf_dir *d = (struct jf_dir *)(uintptr_t)fi->fh;
	int fd = dirfd(d->dp);

	fuse_reply_err(req, (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? errno : 0);
}

static void jf_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	if (fstatvfs(jf_fs.root_fd, &sv) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &sv);
}

/* ---------- xattrs ---------- */

/* O_PATH fd of @inode and its /proc/self/fd path in @proc. */
static int xattr_fd(struct jf_inode *inode, char *proc, size_t size)
{
	int fd = inode == &jf_fs.root ? dup(jf_fs.root_fd) : jf_open_inode(inode, O_PATH, NULL);

	if (fd < 0)
		return fd == -1 ? -errno : fd;
	jf_proc_fd_path(proc, size, fd);
	return fd;
}

static void xattr_mutation(fuse_req_t req, fuse_ino_t ino, const char *op, const char *name,
			   const char *value, size_t size, int flags)
{
	struct jf_inode *inode = jf_inode_get(ino);
	char path[JF_PATH_MAX + 1] = "", proc[64];
	int fd, r = 0;

	jf_inode_path(inode, path, sizeof(path));
	if (inode->zone != JF_SAFE) {
		fuse_reply_err(req, -refuse(req, op, path, NULL, inode->zone, inode->rule, -EROFS));
		return;
	}
	fd = xattr_fd(inode, proc, sizeof(proc));
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	if (value ? setxattr(proc, name, value, size, flags) : removexattr(proc, name))
		r = -errno;
	close(fd);
	if (r == 0)
		audit(req, op, path, NULL, inode->zone, inode->rule, JF_AUDIT_ALLOW, true, 0);
	fuse_reply_err(req, -r);
}

static void jf_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	xattr_mutation(req, ino, "setxattr", name, value ? value : "", size, flags);
}

static void jf_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	xattr_mutation(req, ino, "removexattr", name, NULL, 0, 0);
}

static void xattr_read(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	char proc[64];
	_cleanup_free_ char *buf = size ? malloc(size) : NULL;
	ssize_t n;
	int fd;

	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fd = xattr_fd(jf_inode_get(ino), proc, sizeof(proc));
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	n = name ? getxattr(proc, name, buf, size) : listxattr(proc, buf, size);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

static void jf_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	xattr_read(req, ino, name, size);
}

static void jf_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	xattr_read(req, ino, NULL, size);
}

/* ---------- init ---------- */

static void jf_init(void *userdata, struct fuse_conn_info *conn)
{
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
	if (!jf_fs.opts->no_splice && (conn->capable & FUSE_CAP_SPLICE_WRITE))
		conn->want |= FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE;
	/* Writeback cache stays off: with it the kernel would own O_APPEND and
	 * file sizes, and writes could sit in the page cache past our size
	 * limit checks. */
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	conn->want &= ~FUSE_CAP_HANDLE_KILLPRIV;
	conn->max_write = 1 << 20;
	conn->max_readahead = 1 << 20;
	conn->time_gran = 1;
}

const struct fuse_lowlevel_ops jf_ops = {
	.init = jf_init,
	.lookup = jf_lookup,
	.forget = jf_forget,
	.forget_multi = jf_forget_multi,
	.getattr = jf_getattr,
	.setattr = jf_setattr,
	.readlink = jf_readlink,
	.mknod = jf_mknod,
	.mkdir = jf_mkdir,
	.unlink = jf_unlink,
	.rmdir = jf_rmdir,
	.symlink = jf_symlink,
	.rename = jf_rename,
	.link = jf_link,
	.open = jf_open,
	.read = jf_read,
	.write_buf = jf_write_buf,
	.flush = jf_flush,
	.release = jf_release,
	.fsync = jf_fsync,
	.opendir = jf_opendir,
	.readdir = jf_readdir,
	.readdirplus = jf_readdirplus,
	.releasedir = jf_releasedir,
	.fsyncdir = jf_fsyncdir,
	.statfs = jf_statfs,
	.setxattr = jf_setxattr,
	.getxattr = jf_getxattr,
	.listxattr = jf_listxattr,
	.removexattr = jf_removexattr,
	.create = jf_create,
	.fallocate = jf_fallocate,
	.lseek = jf_lseek,
	.copy_file_range = jf_copy_file_range,
};
