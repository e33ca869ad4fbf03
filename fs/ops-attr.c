/* SPDX-License-Identifier: MIT */
/*
 * FUSE handlers of lookup, forget, attributes (getattr, setattr), readlink,
 * statfs and extended attributes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "audit.h"
#include "backing.h"
#include "changes.h"
#include "cleanup.h"
#include "fsstate.h"
#include "gitfile.h"
#include "handler.h"
#include "inode.h"
#include "ops.h"
#include "options.h"
#include "passthrough.h"
#include "policy.h"
#include "probe.h"
#include "status.h"
#include "symlink.h"
#include "zone-name.h"
#include "zone.h"

/* ---------- lookup / forget / getattr ---------- */

/* Negative entry, cached by the kernel for negative_timeout, hidden names
 * too: a hidden lookup is recorded when it reaches the daemon, once per name
 * per window of the kernel's negative cache (docs/audit.md), instead of
 * sending every repeated stat(2) of the same absent name through here. */
static void reply_negative(fuse_req_t req)
{
	struct fuse_entry_param e = {
		.ino = 0,
		.entry_timeout = jf_fs.opts->negative_timeout,
	};
	fuse_reply_entry(req, &e);
}

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

void jf_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
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
	r = jf_probe_child(jf_req_view(req), fd, dpath, pi->dev, name, DT_UNKNOWN, true, &p);
	jf_put_fd(fd);
	if (r == 0) {
		audit_hidden_lookup(req, dpath, name, &p);
		reply_negative(req);
	} else if (r == -ENOENT) {
		reply_negative(req);
	} else if (r < 0 || (r = jf_make_entry(pi, name, &p, &e)) < 0) {
		fuse_reply_err(req, -r);
	} else {
		jf_audit_op(req, "lookup", p.path, NULL, p.v.zone, p.v.rule, JF_AUDIT_ALLOW, false,
			    0);
		fuse_reply_entry(req, &e);
	}
}

void jf_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	jf_inode_forget(jf_inode_get(ino), nlookup);
	fuse_reply_none(req);
}

void jf_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		jf_inode_forget(jf_inode_get(forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

static int do_getattr(struct jf_inode *inode, struct fuse_file_info *fi, struct stat *st)
{
	struct jf_verdict v;
	int fd;

	jf_zone_of(&jf_fs.view, inode, &v);
	if (v.zone == JF_DENIED)
		return -ENOENT; /* moved to a hidden name */
	if (fi && fi->fh) {
		if (fstat(jf_file_of(fi)->fd, st) < 0)
			return -errno;
	} else if (inode == &jf_fs.root) {
		if (fstat(jf_fs.view.root_fd, st) < 0)
			return -errno;
	} else if (jf_fstat_open_file(inode, st) < 0) {
		fd = jf_open_inode(inode, O_PATH, st);
		if (fd == -ESTALE)
			jf_forget_name_later(inode);
		if (fd < 0)
			return fd;
		close(fd);
	}
	jf_fill_attr(st, inode);
	return 0;
}

void jf_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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

/* A truncation or a change of times of a .git file (jf_gitfile_checked()),
 * no mode or owner:
 * git's open(O_TRUNC) arrives as one, and the new size goes through the
 * file's check (jf_gitfile_truncate()). */
static bool gitfile_attr(struct jf_inode *inode, const struct jf_verdict *v, int to_set)
{
	return !(to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) &&
	       jf_gitfile_inode(v, inode);
}

static int do_truncate(struct jf_inode *inode, struct jf_file *f, off_t size, bool gitfile,
		       const char **why)
{
	char path[JF_PATH_MAX + 1] = "";
	int fd, r = 0;

	if ((uint64_t)size > jf_fs.max_size[JF_SAFE])
		return -EFBIG;
	if (f && f->writable)
		fd = f->fd;
	else if ((fd = jf_open_inode(inode, O_WRONLY | O_NONBLOCK, NULL)) < 0)
		return fd;
	r = jf_kill_setid(fd);
	if (r == 0 && gitfile) {
		jf_inode_path(inode, path, sizeof(path));
		r = jf_gitfile_truncate(fd, path, size, why);
	} else if (r == 0 && ftruncate(fd, size) < 0) {
		r = -errno;
	}
	if (f && f->writable)
		return r;
	close(fd);
	return r;
}

/* A chmod of a git config (RESTRICTED, replaced by a checked rename): git
 * init flips the exec bit of .git/config to learn whether the filesystem
 * keeps it (core.fileMode). A mode of a config runs nothing, so it is let
 * through, set-ID bits dropped as for every file. */
static bool config_chmod(const struct jf_verdict *v, int to_set)
{
	return v->zone == JF_RESTRICTED && jf_rule_git_check(v->rule) == JF_GIT_CHECK_CONFIG &&
	       !(to_set & ~(FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_CTIME));
}

/*
 * no_open mode: a chmod that takes away the owner's write bit of a regular
 * file would keep a caller that has it open for writing (the kernel
 * checked that open) from the daemon's next reopen by name. An fd open for
 * writing, taken before, for jf_inode_hold_writer(); -1 when none is needed
 * or the file cannot be opened.
 */
static int writer_before_chmod(struct jf_inode *inode, const struct jf_verdict *v, mode_t mode)
{
	if (!jf_fs.no_open || v->zone != JF_SAFE || inode->type != S_IFREG || (mode & S_IWUSR) ||
	    geteuid() == 0)
		return -1;
	return jf_open_inode(inode, O_RDWR | O_NONBLOCK | O_NOCTTY, NULL);
}

/* The change of a SAFE inode, or a config_chmod() (@v, which jf_zone_links
 * may make RESTRICTED: -EROFS, audited by the caller). */
static int do_setattr(struct jf_inode *inode, struct stat *attr, int to_set,
		      struct fuse_file_info *fi, struct jf_verdict *v, struct stat *out,
		      const char **why)
{
	jf_ns_assert_held();
	struct jf_file *f = fi ? jf_file_of(fi) : NULL;
	_cleanup_close_ int pfd = -1;
	char proc[64];
	int fd, wfd, r;

	if (f) {
		fd = f->fd;
	} else if (inode == &jf_fs.root) {
		fd = jf_fs.view.root_fd;
	} else {
		pfd = jf_open_inode(inode, O_PATH, NULL);
		if (pfd < 0)
			return pfd;
		fd = pfd;
	}
	r = jf_zone_links(&jf_fs.view, fd, v);
	if (r < 0 ||
	    (v->zone != JF_SAFE && !config_chmod(v, to_set) && !gitfile_attr(inode, v, to_set)))
		return r < 0 ? r : -EROFS;
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
		if (inode->type == S_IFREG && jf_rule_git_sample(v->rule))
			mode &= ~(mode_t)0111; /* a hook sample (jf_rule_git_sample()) */
		jf_proc_fd_path(proc, sizeof(proc), fd);
		wfd = writer_before_chmod(inode, v, mode);
		if (chmod(proc, mode) < 0) {
			if (wfd >= 0)
				close(wfd);
			return -errno;
		}
		if (wfd >= 0)
			jf_inode_hold_writer(wfd);
	}
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t u = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t g = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;

		if (fchownat(fd, "", u, g, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		r = do_truncate(inode, f, attr->st_size, gitfile_attr(inode, v, to_set), why);
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
	jf_fill_attr(out, inode);
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

/*
 * Is this SETATTR a truncation to the size the backing file has, and
 * nothing else? Then it changes nothing (a truncate(2) or ftruncate(2)
 * also sets the times, so never arrives as one): the kernel sends it by
 * itself, to undo what it cached of a direct write past the end that failed,
 * refused on a file opened without the daemon. Answered with the
 * attributes in @out, neither refused nor recorded. 0 when so, -1 otherwise.
 */
static int same_size_only(struct jf_inode *inode, const struct stat *attr, int to_set,
			  struct stat *out)
{
	int fd;

	if (to_set != FUSE_SET_ATTR_SIZE || inode->type != S_IFREG)
		return -1;
	fd = jf_open_inode(inode, O_PATH, out);
	if (fd < 0)
		return -1;
	close(fd);
	if (out->st_size != attr->st_size)
		return -1;
	jf_fill_attr(out, inode);
	return 0;
}

/* Zone checks and the change, under the shared namespace lock so a rename
 * cannot give the inode another zone between the two. */
static int setattr_locked(fuse_req_t req, struct jf_inode *inode, struct stat *attr, int to_set,
			  struct fuse_file_info *fi, struct stat *out)
{
	char path[JF_PATH_MAX + 1] = "";
	const char *why = NULL;
	struct jf_verdict v;
	int r;

	jf_ns_assert_held();
	jf_inode_path(inode, path, sizeof(path));
	jf_zone_of(jf_req_view(req), inode, &v);
	if (v.zone == JF_RESTRICTED && same_size_only(inode, attr, to_set, out) == 0)
		return 0;
	if (v.zone != JF_SAFE && !config_chmod(&v, to_set) && !gitfile_attr(inode, &v, to_set))
		return jf_refuse(req, setattr_op(to_set), path, NULL, v.zone, v.rule,
				 v.zone == JF_DENIED ? -ENOENT : -EROFS);
	r = jf_changes_note(path, true);
	if (r == 0)
		r = do_setattr(inode, attr, to_set, fi, &v, out, &why);
	if (r == -EFBIG || (v.zone != JF_SAFE && r < 0))
		jf_refuse_detail(req, setattr_op(to_set), path, NULL, v.zone, v.rule, r, why);
	if (r == 0)
		jf_audit_op(req, setattr_op(to_set), path, NULL, v.zone, v.rule, JF_AUDIT_ALLOW,
			    true, 0);
	return r;
}

void jf_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
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
	const struct jf_symlink_ctx sc = jf_view_symlink_ctx(&jf_fs.view);
	char path[JF_PATH_MAX + 1], target[JF_PATH_MAX + 1];
	struct jf_verdict v;
	ssize_t n;
	int fd, r;

	jf_zone_of(&jf_fs.view, inode, &v);
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
	return jf_symlink_view(&sc, path, target, out, size);
}

void jf_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char out[JF_PATH_MAX + 1];
	int r = do_readlink(jf_inode_get(ino), out, sizeof(out));

	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_readlink(req, out);
}

void jf_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	if (fstatvfs(jf_fs.view.root_fd, &sv) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &sv);
}

/* ---------- xattrs ---------- */

/* O_PATH fd of @inode and its /proc/self/fd path in @proc. */
static int xattr_fd(struct jf_inode *inode, char *proc, size_t size)
{
	int fd =
		inode == &jf_fs.root ? dup(jf_fs.view.root_fd) : jf_open_inode(inode, O_PATH, NULL);

	if (fd < 0)
		return fd == -1 ? -errno : fd;
	jf_proc_fd_path(proc, size, fd);
	return fd;
}

/*
 * The user.* names the view keeps for itself: jailfs's own attributes of
 * the root (user.jailfs.*), and overlayfs's (user.overlay.*), which say
 * what a changes directory's entries mean (whiteouts, opaque directories,
 * redirects): set in SOURCE they would change what an overlay over it
 * shows (docs/changes-format.md).
 */
static bool reserved_xattr(const char *name)
{
	return strncmp(name, "user.jailfs.", 12) == 0 || strncmp(name, "user.overlay.", 13) == 0;
}

static int xattr_mutation_locked(fuse_req_t req, struct jf_inode *inode, const char *op,
				 const char *name, const char *value, size_t size, int flags)
{
	char path[JF_PATH_MAX + 1] = "", proc[64];
	struct jf_verdict v;
	int fd, r = 0;

	jf_ns_assert_held();
	jf_inode_path(inode, path, sizeof(path));
	jf_zone_of(jf_req_view(req), inode, &v);
	if (v.zone != JF_SAFE)
		return jf_refuse(req, op, path, NULL, v.zone, v.rule,
				 v.zone == JF_DENIED ? -ENOENT : -EROFS);
	/* Defence in depth for a daemon running as root: file capabilities and
	 * trusted.* attributes are never set through the view (docs/threat-model.md,
	 * invariant 8). */
	if (strncmp(name, "trusted.", 8) == 0 || strcmp(name, "security.capability") == 0 ||
	    reserved_xattr(name))
		return jf_refuse(req, op, path, NULL, v.zone, v.rule, -EPERM);
	fd = xattr_fd(inode, proc, sizeof(proc));
	if (fd < 0)
		return fd;
	r = jf_zone_links(jf_req_view(req), fd, &v);
	if (r == 0 && v.zone != JF_SAFE)
		r = jf_refuse(req, op, path, NULL, v.zone, v.rule, -EROFS);
	if (r == 0)
		r = jf_changes_note(path, true);
	if (r == 0 && (value ? setxattr(proc, name, value, size, flags) : removexattr(proc, name)))
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

void jf_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
		 int flags)
{
	xattr_mutation(req, ino, "setxattr", name, value ? value : "", size, flags);
}

void jf_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
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
	int n = jf_policy_run_format(jf_fs.view.policy, &text);

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
	if (name && ino == FUSE_ROOT_ID && strcmp(name, JF_INFO_XATTR) == 0) {
		char text[3 * PATH_MAX];

		reply_xattr_text(req, size, text, jf_status_info(text, sizeof(text)));
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

void jf_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	xattr_read(req, ino, name, size);
}

void jf_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	xattr_read(req, ino, NULL, size);
}
