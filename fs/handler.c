/* SPDX-License-Identifier: MIT */
/*
 * What the FUSE handlers share: audit records and refusals, the view's
 * attributes, kernel entries for probed and new names, the checks and
 * clean-up around creating a name, and notifications queued for the
 * notifier thread. Below every handler file; calls nothing above it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "backing.h"
#include "fsstate.h"
#include "gitfile.h"
#include "gitinit.h"
#include "handler.h"
#include "inode.h"
#include "newdirs.h"
#include "notify.h"
#include "options.h"
#include "policy.h"
#include "probe.h"
#include "recent.h"
#include "zone-name.h"

struct jf_file *jf_file_of(struct fuse_file_info *fi)
{
	return (struct jf_file *)(uintptr_t)fi->fh;
}

static void audit_event(fuse_req_t req, const char *op, const char *path, const char *path2,
			enum jf_zone zone, const struct jf_rule *rule, enum jf_audit_decision d,
			bool mutation, int err, const char *detail)
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
		.detail = detail,
		.pid = ctx ? ctx->pid : 0,
		.uid = ctx ? ctx->uid : 0,
		.bytes_read = -1,
		.bytes_written = -1,
	};
	jf_audit_emit(&ev);
}

void jf_audit_op(fuse_req_t req, const char *op, const char *path, const char *path2,
		 enum jf_zone zone, const struct jf_rule *rule, enum jf_audit_decision d,
		 bool mutation, int err)
{
	audit_event(req, op, path, path2, zone, rule, d, mutation, err, NULL);
}

/* Refusal of a mutation on an existing object: audit and return -EROFS. */
int jf_refuse(fuse_req_t req, const char *op, const char *path, const char *path2,
	      enum jf_zone zone, const struct jf_rule *rule, int err)
{
	return jf_refuse_detail(req, op, path, path2, zone, rule, err, NULL);
}

int jf_refuse_detail(fuse_req_t req, const char *op, const char *path, const char *path2,
		     enum jf_zone zone, const struct jf_rule *rule, int err, const char *detail)
{
	audit_event(req, op, path, path2, zone, rule,
		    err == -ENOENT ? JF_AUDIT_HIDE : JF_AUDIT_DENY, true, -err, detail);
	return err;
}

void jf_fill_attr(struct stat *st, const struct jf_inode *inode)
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
}

/* Open @inode's directory (root_fd for the root); fills @path. */
int jf_dir_fd(struct jf_inode *dir, char *path, size_t size)
{
	int r = jf_inode_path(dir, path, size);

	if (r < 0)
		return r;
	if (dir == &jf_fs.root)
		return jf_fs.view.root_fd;
	if (dir->type != S_IFDIR)
		return -ENOTDIR;
	return jf_open_inode(dir, O_PATH | O_DIRECTORY, NULL);
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
	jf_fill_attr(&e->attr, inode);
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
	jf_recent_note(parent, name);
	r = jf_probe_child(&jf_fs.view, dirfd, dirpath, parent->dev, name, DT_UNKNOWN, true, &p);
	if (r < 0)
		return r;
	if (r == 0)
		return -EACCES;
	return jf_make_entry(parent, name, &p, e);
}

/*
 * May a regular file get the name @name of @pi (@dirfd, view path @dpath),
 * DENIED by a rule subject to content? Where the view shows an object of
 * that name (the program knows it is taken), or in a directory this mount
 * made (newdirs.h: nothing of the user's is hidden there). Anywhere else
 * a hidden private key may hold the name: creating it would succeed where
 * the name is free and fail where it is taken, so it fails in both cases.
 */
static bool content_name_ok(struct jf_inode *pi, int dirfd, const char *dpath, const char *name)
{
	struct probe p;

	if (jf_newdir_is(pi->dev, pi->ino))
		return true;
	return jf_probe_child(&jf_fs.view, dirfd, dpath, pi->dev, name, DT_UNKNOWN, true, &p) > 0;
}

/* May @name be created in directory @pi (@dirfd, view path @dpath) as an
 * object of type @type (S_IFREG, S_IFDIR...)? 0, -EACCES (DENIED or refused
 * name), -EROFS (RESTRICTED). A regular file named by a rule subject to
 * content is judged as public where content_name_ok() says so: it holds
 * nothing yet, and is judged by what it holds at each look afterwards
 * (refine.c), so one that comes to hold a private key is hidden then.
 * Audits refusals. */
int jf_check_new_name(fuse_req_t req, const char *op, struct jf_inode *pi, int dirfd,
		      const char *dpath, const char *name, mode_t type, char *path, size_t size,
		      struct jf_verdict *v)
{
	enum jf_refusal refusal = jf_check_name(name, strlen(name));
	int r;

	v->zone = JF_DENIED;
	v->rule = NULL;
	/* No filesystem holds such a name: the errno POSIX gives, not a
	 * refusal of the policy. */
	if (refusal == JF_REFUSE_NAME_TOO_LONG)
		return -ENAMETOOLONG;
	r = jf_join(path, size, dpath, name);
	if (r < 0)
		return r;
	if (refusal == JF_REFUSE_NONE && !jf_is_mnt_path(&jf_fs.view, path))
		jf_classify_path(&jf_fs.view, path, (size_t)r, S_ISDIR(type), v);
	if (v->zone == JF_DENIED && S_ISREG(type) && v->rule &&
	    v->rule->content != JF_CONTENT_NONE && content_name_ok(pi, dirfd, dpath, name))
		jf_classify_public(jf_fs.view.policy, path, (size_t)r, v);
	if (v->zone == JF_SAFE || (strcmp(op, "create") == 0 && jf_gitfile_checked(v, type, path)))
		return 0;
	r = v->zone == JF_DENIED ? -EACCES : -EROFS;
	if (r == -EROFS)
		jf_gitinit_refused(path);
	if (jf_audit_wants(JF_AUDIT_DENY, true)) {
		const struct fuse_ctx *ctx = fuse_req_ctx(req);
		struct jf_audit_event ev = {
			.op = op,
			.path = path,
			.zone = v->zone,
			.decision = JF_AUDIT_DENY,
			.mutation = true,
			.err = -r,
			.rule = v->rule,
			.refusal = refusal != JF_REFUSE_NONE ? jf_refusal_reason(refusal) : NULL,
			.pid = ctx->pid,
			.uid = ctx->uid,
			.bytes_read = -1,
			.bytes_written = -1,
		};
		jf_audit_emit(&ev);
	}
	return r;
}

/* Hand a new object to the calling user when we run as root for someone else. */
void jf_give_to_caller(fuse_req_t req, int dirfd, const char *name)
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

/* A create that failed with EEXIST must not reveal a hidden name (a symlink
 * out of the view, a pseudo filesystem): answer as for a DENIED name. */
int jf_hide_eexist(int r, int dirfd, const char *dpath, dev_t dev, const char *name)
{
	struct probe p;

	if (r == -EEXIST &&
	    jf_probe_child(&jf_fs.view, dirfd, dpath, dev, name, DT_UNKNOWN, true, &p) == 0)
		return -EACCES;
	return r;
}

void jf_unlink_created(int dirfd, const char *name, int fd, bool dir)
{
	struct stat a, b;

	if (fd >= 0 && (fstat(fd, &a) < 0 || fstatat(dirfd, name, &b, AT_SYMLINK_NOFOLLOW) < 0 ||
			a.st_dev != b.st_dev || a.st_ino != b.st_ino))
		return;
	(void)unlinkat(dirfd, name, dir ? AT_REMOVEDIR : 0);
}

/* Forget the table's name for a removed @name in @pi. */
void jf_detach_name(struct jf_inode *pi, const char *name, const struct stat *st)
{
	jf_inode_rename(st->st_dev, st->st_ino, pi, name, NULL, NULL);
}

/*
 * A refused write-back (a shared writable mapping of a file outside SAFE,
 * which any caller can make in no_open mode: its write open reached no
 * daemon) leaves the changed pages in the kernel's page cache, clean: the
 * view would show data the disk never got. Drop them.
 */
void jf_drop_pages_later(fuse_ino_t ino)
{
	jf_notify_inode(ino);
}

/*
 * A request on an open file (fstat, or in no_open mode READ and WRITE) whose
 * name now holds another file (replaced on the host within the watcher's
 * own-change window) answers ESTALE, which the kernel retries only for path
 * lookups: drop the dentry, so the next open(2) of the name finds the new
 * file instead of the same ESTALE until entry_timeout.
 */
void jf_forget_name_later(struct jf_inode *inode)
{
	fuse_ino_t parent;
	char *name;

	if (jf_inode_parent_name(inode, &parent, &name) < 0)
		return;
	jf_notify_entry(parent, name);
	free(name);
}
