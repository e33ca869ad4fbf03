/* SPDX-License-Identifier: MIT */
/*
 * The FUSE low-level operations of the jailed view.
 *
 * Every handler is thin: resolve the inode(s), call a function that returns
 * a negative errno or a result, reply exactly once. Decisions (invariants
 * 2-6 of docs/threat-model.md):
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
 *  - a regular file with st_nlink > 1 (policy default hardlinks =
 *    restricted) is treated by the start-up index (hardlinks.c): hidden when
 *    a name is DENIED, SAFE when all its names are in SOURCE and SAFE,
 *    RESTRICTED otherwise. Links made through the view between SAFE names
 *    stay SAFE while the daemon knows the inode;
 *  - no set-user/group-ID file is made through the view (invariant 8), and
 *    directories report st_nlink 1 (hidden subdirectories are not counted).
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
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cleanup.h"
#include "ops.h"
#include "passthrough.h"
#include "watch.h"

/* ---------- small helpers ---------- */

void jf_put_fd(int fd)
{
	if (fd >= 0 && fd != jf_fs.root_fd)
		close(fd);
}

struct jf_file *jf_file_of(struct fuse_file_info *fi)
{
	return (struct jf_file *)(uintptr_t)fi->fh;
}

void jf_classify_path(const char *path, size_t len, bool is_dir, struct jf_verdict *v)
{
	jf_classify(jf_fs.policy, path, len, is_dir, v);
}

/* @safe_links: the inode was hard-linked through the view between SAFE names. */
enum jf_zone jf_effective_zone(const struct stat *st, enum jf_zone zone, bool safe_links)
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
		if (safe_links)
			return zone;
		return jf_hardlink_zone(st, zone); /* the start-up index (hardlinks.c) */
	}
}

bool jf_is_mnt_path(const char *path)
{
	return jf_fs.mnt_rel && strcmp(path, jf_fs.mnt_rel) == 0;
}

void jf_audit_op(fuse_req_t req, const char *op, const char *path, const char *path2,
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
int jf_refuse(fuse_req_t req, const char *op, const char *path, const char *path2,
	      enum jf_zone zone, const struct jf_rule *rule, int err)
{
	jf_audit_op(req, op, path, path2, zone, rule,
		    err == -ENOENT ? JF_AUDIT_HIDE : JF_AUDIT_DENY, true, -err);
	return err;
}

void jf_fill_attr(struct stat *st, const struct jf_inode *inode, enum jf_zone zone)
{
	st->st_ino = jf_view_ino(inode);
	/* A directory's link count would count hidden subdirectories (the
	 * agent learns nothing, docs/threat-model.md invariant 3): report 1
	 * like btrfs does, which find(1) and fts read as "unknown, do not use
	 * the leaf optimization".
	 * Its size and blocks grow with its entries, hidden ones too (tmpfs:
	 * 20 bytes a name; ext4: a block per ~100 names): report one block,
	 * as many FUSE filesystems do (JF_DIR_SIZE). */
	if (S_ISDIR(st->st_mode)) {
		st->st_nlink = 1;
		st->st_size = JF_DIR_SIZE;
		st->st_blocks = JF_DIR_SIZE / 512;
	}
	if (S_ISLNK(st->st_mode) && inode->symlink_len)
		st->st_size = inode->symlink_len;
	/* In no_open mode no OPEN reaches the daemon: a file outside SAFE is
	 * shown read-only there, so that with default_permissions the kernel
	 * refuses a write open(2) (EACCES) itself; a caller with
	 * CAP_DAC_OVERRIDE still gets EROFS at write(2). When opens reach us the
	 * real bits are shown and jf_open answers EROFS, with an audit record. */
	if (jf_fs.no_open && S_ISREG(st->st_mode) && zone != JF_SAFE)
		st->st_mode &= ~(mode_t)(S_IWUSR | S_IWGRP | S_IWOTH);
}

/* Open @inode's directory (root_fd for the root); fills @path. */
int jf_dir_fd(struct jf_inode *dir, char *path, size_t size)
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

/*
 * Decide whether @name in directory @dirfd (view path @dirpath, device
 * @dir_dev) is visible. @dtype is a d_type hint (DT_UNKNOWN to stat);
 * @want_stat forces a stat. Returns 1 visible, 0 hidden by policy, -errno
 * (-ENOENT absent). Fills @p.
 */
/* fstatat(AT_SYMLINK_NOFOLLOW) of one name, plus the birth time when the
 * filesystem records one (statx STATX_BTIME). 0 or -errno. */
static int stat_at(int dirfd, const char *name, struct stat *st, struct timespec *btime)
{
	struct statx x;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT,
		  STATX_BASIC_STATS | STATX_BTIME, &x) < 0)
		return -errno;
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(x.stx_dev_major, x.stx_dev_minor);
	st->st_ino = x.stx_ino;
	st->st_mode = x.stx_mode;
	st->st_nlink = x.stx_nlink;
	st->st_uid = x.stx_uid;
	st->st_gid = x.stx_gid;
	st->st_rdev = makedev(x.stx_rdev_major, x.stx_rdev_minor);
	st->st_size = (off_t)x.stx_size;
	st->st_blksize = x.stx_blksize;
	st->st_blocks = (blkcnt_t)x.stx_blocks;
	st->st_atim = (struct timespec){x.stx_atime.tv_sec, x.stx_atime.tv_nsec};
	st->st_mtim = (struct timespec){x.stx_mtime.tv_sec, x.stx_mtime.tv_nsec};
	st->st_ctim = (struct timespec){x.stx_ctime.tv_sec, x.stx_ctime.tv_nsec};
	if (x.stx_mask & STATX_BTIME)
		*btime = (struct timespec){x.stx_btime.tv_sec, x.stx_btime.tv_nsec};
	else
		*btime = (struct timespec){0, 0};
	return 0;
}

/*
 * Classify @p->path by name alone, as a directory when @dtype says so, else
 * as a file (into @p->v). True when the name is DENIED whatever the object
 * is: @dtype is known (a readdir entry), or the name is DENIED both as a
 * file and as a directory. Such a name is hidden without any backing
 * access, so a lookup answers the same, in the same time, whether it exists
 * or not (no stat whose cost tells). Only a name DENIED as one type and not
 * the other ("secrets/" but not "secrets") needs the stat that tells which,
 * and so does a name whose object may decide (jf_zone_may_refine: a rule
 * subject to content, a file tracked by git).
 */
static bool denied_by_name(struct probe *p, unsigned char dtype)
{
	struct jf_verdict as_dir;

	jf_classify_path(p->path, p->len, dtype == DT_DIR, &p->v);
	if (p->v.zone != JF_DENIED || jf_zone_may_refine(p->path, p->len, &p->v))
		return false;
	if (dtype != DT_UNKNOWN)
		return true;
	jf_classify_path(p->path, p->len, true, &as_dir);
	return as_dir.zone == JF_DENIED && !jf_zone_may_refine(p->path, p->len, &as_dir);
}

int jf_probe_child(int dirfd, const char *dirpath, dev_t dir_dev, const char *name,
		   unsigned char dtype, bool want_stat, struct probe *p)
{
	char target[JF_PATH_MAX + 1], view[JF_PATH_MAX + 1];
	unsigned char guess;
	int r;

	p->gen = atomic_load(&jf_fs.name_gen);
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
	if (jf_is_mnt_path(p->path))
		return 0; /* checked before any stat: stat would call into ourselves */
	if (denied_by_name(p, dtype))
		return 0;
	guess = dtype;
	if (want_stat || dtype == DT_UNKNOWN || dtype == DT_DIR || p->v.zone == JF_DENIED ||
	    (dtype == DT_REG &&
	     (jf_fs.hardlinks == JF_HARDLINKS_DENY || jf_hardlink_any_denied()))) {
		r = stat_at(dirfd, name, &p->st, &p->btime);
		if (r < 0) /* an absent DENIED name: a hidden lookup to audit */
			return r == -ENOENT && p->v.zone == JF_DENIED ? 0 : r;
		p->have_stat = true;
		dtype = IFTODT(p->st.st_mode);
		/* SOURCE bind-mounted below itself: a directory loop, hide it. */
		if (p->st.st_dev == jf_fs.root.dev && p->st.st_ino == jf_fs.root.ino)
			return 0;
	}
	if ((dtype == DT_DIR) != (guess == DT_DIR))
		jf_classify_path(p->path, p->len, dtype == DT_DIR, &p->v);
	if (p->v.zone == JF_DENIED) /* what the object holds may decide */
		jf_zone_refine(dirfd, name, p->path, p->len, &p->st, &p->v);
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
		/* An absolute target is shown relative to the link's directory:
		 * with names in two directories one text (cached per inode by the
		 * kernel) cannot be right for both, and could climb out. */
		if (target[0] == '/' && p->have_stat && p->st.st_nlink > 1)
			return 0;
		p->symlink_len = (uint32_t)strlen(view);
	}
	if (p->have_stat) {
		struct jf_inode_info known = {.safe_links = false};

		if (S_ISREG(p->st.st_mode) && p->st.st_nlink > 1)
			jf_inode_info(p->st.st_dev, p->st.st_ino, &known);
		p->v.zone = jf_effective_zone(&p->st, p->v.zone, known.safe_links);
		if (p->v.zone == JF_DENIED)
			return 0;
	}
	return 1;
}

/* Negative entry, cached by the kernel for negative_timeout. A hidden name is
 * not cached while hidden lookups are audited, so every attempt is recorded. */
static void reply_negative(fuse_req_t req, bool hidden)
{
	struct fuse_entry_param e = {
		.ino = 0,
		.entry_timeout = hidden && jf_audit_wants(JF_AUDIT_HIDE, false)
					 ? 0
					 : jf_fs.opts->negative_timeout,
	};
	fuse_reply_entry(req, &e);
}

/* Register a probed child in the table and fill @e. */
int jf_make_entry(struct jf_inode *parent, const char *name, struct probe *p,
		  struct fuse_entry_param *e)
{
	bool created;
	struct jf_inode *inode =
		jf_inode_ref(parent, name, &p->st, &p->btime, &p->v, p->gen, &created);

	if (!inode)
		return -ENOMEM;
	inode->symlink_len = p->symlink_len;
	memset(e, 0, sizeof(*e));
	e->ino = (fuse_ino_t)(uintptr_t)inode;
	if (inode == &jf_fs.root)
		e->ino = FUSE_ROOT_ID;
	e->attr = p->st;
	jf_fill_attr(&e->attr, inode, p->v.zone);
	e->attr_timeout = jf_fs.opts->attr_timeout;
	e->entry_timeout = jf_fs.opts->entry_timeout;
	return 0;
}

/* Stat @name in @dirfd after we created it and reply with its entry. */
int jf_entry_for_new(struct jf_inode *parent, int dirfd, const char *dirpath, const char *name,
		     struct fuse_entry_param *e)
{
	struct probe p;
	int r;

	/* We made @name: its inotify events are not host changes (watch.c). */
	jf_watch_own_change(parent, name);
	r = jf_probe_child(dirfd, dirpath, parent->dev, name, DT_UNKNOWN, true, &p);
	if (r < 0)
		return r;
	if (r == 0)
		return -EACCES;
	return jf_make_entry(parent, name, &p, e);
}

/* ---------- the zone of a known inode ---------- */

/* Probe @path (the inode's current view path) again from its directory:
 * 0 with the zone in @v, or -ESTALE when the name holds another object. */
static int probe_again(const struct jf_inode *inode, char *path, struct jf_verdict *v)
{
	char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	struct stat dst;
	struct probe p;
	int dfd, r;

	if (slash)
		*slash = '\0';
	dfd = slash ? jf_open_beneath(path, O_PATH | O_DIRECTORY, 0) : jf_fs.root_fd;
	if (dfd < 0)
		return dfd == -ENOENT || dfd == -ENOTDIR ? -ESTALE : dfd;
	r = fstat(dfd, &dst) < 0 ? -errno : 0;
	if (r == 0)
		r = jf_probe_child(dfd, slash ? path : "", dst.st_dev, name, DT_UNKNOWN, true, &p);
	jf_put_fd(dfd);
	if (r == -ENOENT ||
	    (r >= 0 && p.have_stat && (p.st.st_dev != inode->dev || p.st.st_ino != inode->ino)))
		return -ESTALE;
	if (r < 0)
		return r;
	*v = p.v;
	if (r == 0)
		v->zone = JF_DENIED;
	return 0;
}

/* jf_zone_of(); with @reread a zone that depends on the content is
 * computed again. */
static int zone_of(struct jf_inode *inode, struct jf_verdict *v, bool reread)
{
	char path[JF_PATH_MAX + 1];
	struct jf_verdict fresh;
	uint64_t gen;
	int r = jf_inode_zone_get(inode, v, &gen, path, sizeof(path), reread);

	if (r > 0)
		return 0;
	if (r == 0)
		r = probe_again(inode, path, &fresh);
	if (r < 0)
		return r;
	jf_inode_zone_set(inode, &fresh, gen);
	*v = fresh;
	return 0;
}

int jf_zone_of(struct jf_inode *inode, struct jf_verdict *v)
{
	return zone_of(inode, v, false);
}

int jf_zone_read(struct jf_inode *inode, struct jf_verdict *v)
{
	return zone_of(inode, v, true);
}

/* ---------- lookup / forget / getattr ---------- */

/* Audit record of a lookup answered ENOENT because the name is hidden. */
static void audit_hidden_lookup(fuse_req_t req, const char *dpath, const char *name,
				const struct probe *p)
{
	char full[JF_PATH_MAX + 1];
	const struct fuse_ctx *ctx;

	if (!jf_audit_wants(JF_AUDIT_HIDE, false))
		return;
	ctx = fuse_req_ctx(req);
	if (jf_join(full, sizeof(full), dpath, name) < 0)
		snprintf(full, sizeof(full), "%s", dpath);
	struct jf_audit_event ev = {
		.op = "lookup",
		.path = full,
		.zone = JF_DENIED,
		.decision = JF_AUDIT_HIDE,
		.err = ENOENT,
		.rule = p->v.rule,
		.refusal = p->refusal != JF_REFUSE_NONE ? jf_refusal_reason(p->refusal) : NULL,
		.pid = ctx->pid,
		.uid = ctx->uid,
		.bytes_read = -1,
		.bytes_written = -1,
	};
	jf_audit_emit(&ev);
}

static void jf_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct jf_inode *pi = jf_inode_get(parent);
	char dpath[JF_PATH_MAX + 1];
	struct fuse_entry_param e;
	struct probe p;
	int fd, r;

	if (strlen(name) > JF_NAME_MAX) { /* no filesystem holds it: POSIX's errno */
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	fd = jf_dir_fd(pi, dpath, sizeof(dpath));
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	r = jf_probe_child(fd, dpath, pi->dev, name, DT_UNKNOWN, true, &p);
	jf_put_fd(fd);
	if (r == 0) {
		audit_hidden_lookup(req, dpath, name, &p);
		reply_negative(req, true);
	} else if (r == -ENOENT) {
		reply_negative(req, false);
	} else if (r < 0 || (r = jf_make_entry(pi, name, &p, &e)) < 0) {
		fuse_reply_err(req, -r);
	} else {
		jf_audit_op(req, "lookup", p.path, NULL, p.v.zone, p.v.rule, JF_AUDIT_ALLOW, false,
			    0);
		fuse_reply_entry(req, &e);
	}
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

/* fstat through an open handle (or the orphan fd) of @inode, if any: cheaper
 * than reopening the path, and the only way for a file unlinked while open.
 * 0 or -ENOENT. */
static int fstat_open_file(struct jf_inode *inode, struct stat *st)
{
	int r = -ENOENT;

	pthread_mutex_lock(&jf_fs.lock);
	if (inode->open_files && fstat(inode->open_files->fd, st) == 0)
		r = 0;
	else if (inode->orphan_fd >= 0 && fstat(inode->orphan_fd, st) == 0)
		r = 0;
	pthread_mutex_unlock(&jf_fs.lock);
	return r;
}

static int do_getattr(struct jf_inode *inode, struct fuse_file_info *fi, struct stat *st)
{
	struct jf_verdict v;
	int fd;

	jf_zone_of(inode, &v);
	if (v.zone == JF_DENIED)
		return -ENOENT; /* moved to a hidden name */
	if (fi && fi->fh) {
		if (fstat(jf_file_of(fi)->fd, st) < 0)
			return -errno;
	} else if (inode == &jf_fs.root) {
		if (fstat(jf_fs.root_fd, st) < 0)
			return -errno;
	} else if (fstat_open_file(inode, st) < 0) {
		fd = jf_open_inode(inode, O_PATH, st);
		if (fd == -ESTALE)
			jf_forget_name_later(inode);
		if (fd < 0)
			return fd;
		close(fd);
	}
	jf_fill_attr(st, inode, v.zone);
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
	struct timespec tv[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_nsec = UTIME_OMIT}};
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
		fd = f->fd;
	else if ((fd = jf_open_inode(inode, O_WRONLY | O_NONBLOCK, NULL)) < 0)
		return fd;
	r = jf_kill_setid(fd);
	if (r == 0 && ftruncate(fd, size) < 0)
		r = -errno;
	if (f && f->writable)
		return r;
	close(fd);
	return r;
}

static int do_setattr(struct jf_inode *inode, struct stat *attr, int to_set,
		      struct fuse_file_info *fi, struct stat *out)
{
	jf_ns_assert_held();
	struct jf_file *f = fi ? jf_file_of(fi) : NULL;
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
		mode_t mode = attr->st_mode & 07777;

		if (inode->type == S_IFLNK)
			return -EOPNOTSUPP;
		/* No set-user/group-ID file through the view (docs/threat-model.md,
		 * invariant 8): a jailed root would set it on a root-owned backing
		 * file, and nosuid guards only the view. Set-group-ID directories
		 * stay. */
		if (inode->type != S_IFDIR)
			mode &= ~(mode_t)(S_ISUID | S_ISGID);
		jf_proc_fd_path(proc, sizeof(proc), fd);
		if (chmod(proc, mode) < 0)
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
	jf_fill_attr(out, inode, JF_SAFE);
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

/* Zone checks and the change, under the shared namespace lock so a rename
 * cannot give the inode another zone between the two. */
static int setattr_locked(fuse_req_t req, struct jf_inode *inode, struct stat *attr, int to_set,
			  struct fuse_file_info *fi, struct stat *out)
{
	char path[JF_PATH_MAX + 1] = "";
	struct jf_verdict v;
	int r;

	jf_inode_path(inode, path, sizeof(path));
	jf_zone_of(inode, &v);
	if (v.zone != JF_SAFE)
		return jf_refuse(req, setattr_op(to_set), path, NULL, v.zone, v.rule,
				 v.zone == JF_DENIED ? -ENOENT : -EROFS);
	r = do_setattr(inode, attr, to_set, fi, out);
	if (r == -EFBIG)
		jf_refuse(req, setattr_op(to_set), path, NULL, v.zone, v.rule, r);
	if (r == 0)
		jf_audit_op(req, setattr_op(to_set), path, NULL, v.zone, v.rule, JF_AUDIT_ALLOW,
			    true, 0);
	return r;
}

static void jf_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct stat st;
	int r;

	jf_ns_lock(false);
	r = setattr_locked(req, jf_inode_get(ino), attr, to_set, fi, &st);
	jf_ns_unlock();
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_attr(req, &st, jf_fs.opts->attr_timeout);
}

/* ---------- readlink ---------- */

static int do_readlink(struct jf_inode *inode, char *out, size_t size)
{
	char path[JF_PATH_MAX + 1], target[JF_PATH_MAX + 1];
	struct jf_verdict v;
	ssize_t n;
	int fd, r;

	jf_zone_of(inode, &v);
	if (v.zone == JF_DENIED)
		return -ENOENT;
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

static int xattr_mutation_locked(fuse_req_t req, struct jf_inode *inode, const char *op,
				 const char *name, const char *value, size_t size, int flags)
{
	char path[JF_PATH_MAX + 1] = "", proc[64];
	struct jf_verdict v;
	int fd, r = 0;

	jf_inode_path(inode, path, sizeof(path));
	jf_zone_of(inode, &v);
	if (v.zone != JF_SAFE)
		return jf_refuse(req, op, path, NULL, v.zone, v.rule,
				 v.zone == JF_DENIED ? -ENOENT : -EROFS);
	/* Defence in depth for a daemon running as root: file capabilities and
	 * trusted.* attributes are never set through the view (docs/threat-model.md,
	 * invariant 8). */
	if (strncmp(name, "trusted.", 8) == 0 || strcmp(name, "security.capability") == 0 ||
	    strcmp(name, JF_RUN_XATTR) == 0 || strcmp(name, JF_AUDIT_XATTR) == 0)
		return jf_refuse(req, op, path, NULL, v.zone, v.rule, -EPERM);
	fd = xattr_fd(inode, proc, sizeof(proc));
	if (fd < 0)
		return fd;
	if (value ? setxattr(proc, name, value, size, flags) : removexattr(proc, name))
		r = -errno;
	close(fd);
	if (r == 0)
		jf_audit_op(req, op, path, NULL, v.zone, v.rule, JF_AUDIT_ALLOW, true, 0);
	return r;
}

static void xattr_mutation(fuse_req_t req, fuse_ino_t ino, const char *op, const char *name,
			   const char *value, size_t size, int flags)
{
	int r;

	jf_ns_lock(false);
	r = xattr_mutation_locked(req, jf_inode_get(ino), op, name, value, size, flags);
	jf_ns_unlock();
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

/* Reply @n bytes of @text (or -errno in @n) to a getxattr of @size bytes. */
static void reply_xattr_text(fuse_req_t req, size_t size, const char *text, int n)
{
	if (n < 0)
		fuse_reply_err(req, -n);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else if (size < (size_t)n)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, text, (size_t)n);
}

/* getxattr JF_RUN_XATTR on the root: the policy's [run] section, which the
 * daemon answers itself (a backing attribute of that name is never seen), so
 * every jailrun --root using the view gets the view's rules. */
static void run_xattr(fuse_req_t req, size_t size)
{
	_cleanup_free_ char *text = NULL;
	int n = jf_policy_run_format(jf_fs.policy, &text);

	reply_xattr_text(req, size, text, n);
}

/* getxattr JF_AUDIT_XATTR on the root: "LEVEL PATH" of the audit file, once
 * the records queued so far are written (at most 1 s), so that jailrun --root
 * finds the refusals of a command that has ended in the file. ENODATA when
 * no audit file is written. */
static void audit_xattr(fuse_req_t req, size_t size)
{
	const struct jf_audit_config *a = &jf_fs.opts->audit;
	char text[PATH_MAX + 16];
	int n;

	if (!a->path || !jf_audit_wants(JF_AUDIT_DENY, true)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	jf_audit_flush(1000);
	n = snprintf(text, sizeof(text), "%s %s", jf_audit_level_name(a->level), a->path);
	reply_xattr_text(req, size, text, n < (int)sizeof(text) ? n : -ENAMETOOLONG);
}

static void xattr_read(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	char proc[64];
	_cleanup_free_ char *buf = NULL;
	ssize_t n;
	int fd;

	if (name && ino == FUSE_ROOT_ID && strcmp(name, JF_RUN_XATTR) == 0) {
		run_xattr(req, size);
		return;
	}
	if (name && ino == FUSE_ROOT_ID && strcmp(name, JF_AUDIT_XATTR) == 0) {
		audit_xattr(req, size);
		return;
	}
	buf = size ? malloc(size) : NULL;
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
	/* Symlink text may be cached by the kernel: a symlink whose shown text
	 * depends on its directory (absolute target) never changes directory
	 * (rename answers EXDEV, link EACCES) and is hidden when it has several
	 * names, so a cached text is right wherever the inode is reached. */
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
	/* no_open mode (jf_fs.no_open). O_TRUNC must then reach us as a SETATTR,
	 * where the zone is checked: with atomic_o_trunc the kernel would trust
	 * an OPEN it never sent to have truncated the file. Not while refusals
	 * are audited: a write open refused by the kernel's mode check would
	 * leave no record. */
	jf_fs.no_open = jf_fs.opts->fast_open && (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT) &&
			!jf_audit_wants(JF_AUDIT_DENY, true);
	if (jf_fs.no_open)
		conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	jf_pt_init(conn);
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
	/* No .flush: nothing is buffered in the daemon, so the kernel learns
	 * from ENOSYS to skip FLUSH, a synchronous round trip on every close(2).
	 * POSIX locks stay local to the kernel (no lock operations either). */
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
