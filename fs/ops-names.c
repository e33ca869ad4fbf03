/* SPDX-License-Identifier: MIT */
/*
 * Operations on names: mknod, mkdir, symlink, unlink, rmdir, rename, link.
 * Creating name X in directory D is allowed iff classify(D/X) is SAFE;
 * DENIED (and refused) names answer EACCES, RESTRICTED ones EROFS, and an
 * existing but hidden name answers as a DENIED one (EACCES), so a refusal
 * never reveals it. Removing or renaming an object needs it to be SAFE.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "backing.h"
#include "changes.h"
#include "cleanup.h"
#include "fsstate.h"
#include "gitfile.h"
#include "gitswap.h"
#include "handler.h"
#include "hardlinks.h"
#include "inode.h"
#include "newdirs.h"
#include "ops.h"
#include "policy.h"
#include "probe.h"
#include "refine.h"
#include "symlink.h"
#include "zone-name.h"
#include "zone.h"

/* The bounds of a directory rename's walk, which holds the namespace lock
 * exclusive: names below the directory (hidden ones too), levels. */
#define JF_MAX_DIR_RENAME_ENTRIES 20000
#define JF_MAX_DIR_RENAME_DEPTH 32

/* ---------- creating names ---------- */

/*
 * May the symlink @name in @dirfd ("" with an O_PATH fd of the link) get a
 * name in another view directory @vdir (rename, link)? A relative target
 * means something else there, and a link harmless where it is may climb out
 * of the view from there: it must pass the rule for a new symlink
 * (jf_symlink_check_new), else -EACCES. An absolute target is shown as a
 * relative text computed for the link's directory, which the kernel caches
 * per inode (FUSE_CAP_CACHE_SYMLINKS) and may use at the old place while a
 * rename is in flight: such a link never changes directory, -EXDEV (mv then
 * copies, and symlink() checks the copy). Else 0, or -errno of readlinkat.
 */
static int symlink_fits(int dirfd, const char *name, const char *vdir)
{
	const struct jf_symlink_ctx sc = jf_view_symlink_ctx(&jf_fs.view);
	char target[JF_PATH_MAX + 1];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

	if (n < 0)
		return -errno;
	target[n] = '\0';
	if (target[0] == '/')
		return -EXDEV;
	return jf_symlink_check_new(&sc, vdir, target);
}

/*
 * May the symlink @name of @dirfd ("" with an O_PATH fd of the link) get
 * the view path @path (rename, link)? Not where a .git file may send git,
 * unless its target leads to the same (jf_gitfile_symlink_rule()). The rule
 * that refuses it, or NULL.
 */
static const struct jf_rule *symlink_gitdir(int dirfd, const char *name, const char *path)
{
	char target[JF_PATH_MAX + 1];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

	target[n < 0 ? 0 : n] = '\0';
	return jf_gitfile_symlink_rule(path, target);
}

/* Is @path (a view path) directly in view directory @dir? */
static bool in_dir(const char *path, const char *dir)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	return strlen(dir) == n && strncmp(path, dir, n) == 0;
}

enum mk_kind { MK_NOD, MK_DIR, MK_SYMLINK };

static int do_make(fuse_req_t req, struct jf_inode *pi, const char *name, enum mk_kind kind,
		   mode_t mode, const char *link, struct fuse_entry_param *e, const char **op)
{
	const struct jf_symlink_ctx sc = jf_view_symlink_ctx(jf_req_view(req));
	char dpath[JF_PATH_MAX + 1], path[JF_PATH_MAX + 1];
	const struct jf_rule *gitdir;
	struct jf_verdict v;
	int fd, r;

	jf_ns_assert_held();
	*op = kind == MK_DIR ? "mkdir" : kind == MK_SYMLINK ? "symlink" : "mknod";
	if (kind == MK_NOD && !S_ISREG(mode) && !S_ISFIFO(mode) && !S_ISSOCK(mode))
		return -EPERM; /* no device nodes, ever (docs/threat-model.md, invariant 8) */
	if (kind == MK_NOD)
		mode &= ~(mode_t)(S_ISUID | S_ISGID); /* no set-ID files either */
	fd = jf_dir_fd(pi, dpath, sizeof(dpath));
	if (fd < 0)
		return fd;
	r = jf_check_new_name(req, *op, pi, fd, dpath, name,
			      kind == MK_DIR	   ? S_IFDIR
			      : kind == MK_SYMLINK ? S_IFLNK
						   : mode & S_IFMT,
			      path, sizeof(path), &v);
	if (r == 0 && kind == MK_NOD && jf_rule_git_sample(v.rule))
		mode &= ~(mode_t)0111; /* a hook sample (jf_rule_git_sample()) */
	if (r == 0 && kind == MK_SYMLINK && jf_symlink_check_new(&sc, dpath, link) < 0) {
		r = -EACCES;
		jf_audit_op(req, *op, path, link, v.zone, v.rule, JF_AUDIT_DENY, true, EACCES);
	}
	if (r == 0 && kind == MK_SYMLINK && (gitdir = jf_gitfile_symlink_rule(path, link)))
		r = jf_refuse(req, *op, path, link, JF_RESTRICTED, gitdir, -EROFS);
	if (r == 0)
		r = jf_changes_note(path, false);
	if (r == 0) {
		if (kind == MK_DIR)
			r = mkdirat(fd, name, mode);
		else if (kind == MK_SYMLINK)
			r = symlinkat(link, fd, name);
		else
			r = mknodat(fd, name, mode, 0);
		r = r < 0 ? jf_hide_eexist(-errno, fd, dpath, pi->dev, name) : 0;
	}
	if (r == 0) {
		jf_give_to_caller(req, fd, name);
		r = jf_entry_for_new(pi, fd, dpath, name, e);
		if (r < 0)
			jf_unlink_created(fd, name, -1, kind == MK_DIR); /* leave nothing */
		else
			jf_audit_op(req, *op, path, kind == MK_SYMLINK ? link : NULL, v.zone,
				    v.rule, JF_AUDIT_ALLOW, true, 0);
	}
	if (r == 0 && kind == MK_DIR) {
		const struct jf_inode *made = jf_inode_get(e->ino);

		jf_newdir_add(made->dev, made->ino);
	}
	jf_put_fd(fd);
	return r;
}

static void reply_make(fuse_req_t req, fuse_ino_t parent, const char *name, enum mk_kind kind,
		       mode_t mode, const char *link)
{
	struct fuse_entry_param e;
	const char *op;
	int r;

	jf_ns_lock(false);
	r = do_make(req, jf_inode_get(parent), name, kind, mode, link, &e, &op);
	jf_ns_unlock();
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_entry(req, &e);
}

void jf_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	reply_make(req, parent, name, MK_NOD, mode, NULL);
}

void jf_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	reply_make(req, parent, name, MK_DIR, mode, NULL);
}

void jf_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	reply_make(req, parent, name, MK_SYMLINK, 0, link);
}

/* ---------- removing names ---------- */

/*
 * no_open mode: the kernel may have @name open without the daemon holding an
 * fd (no OPEN was sent). Before its last name goes, open it, so reads and
 * writes on it keep working after the unlink or the rename over it (POSIX);
 * jf_inode_set_orphan() hands the fd to the inode, closed when the kernel
 * forgets it. Only for regular files the kernel knows. Returns the fd or -1.
 */
static int open_orphan(int dirfd, const char *name, const struct stat *st)
{
	struct jf_inode_info info;
	struct stat now;
	int fd;

	if (!jf_fs.no_open || !S_ISREG(st->st_mode) || st->st_nlink != 1 ||
	    !jf_inode_info(st->st_dev, st->st_ino, &info))
		return -1;
	/* jf_open_below: the name may hold a FIFO or a device by now */
	fd = jf_open_below(dirfd, name, O_RDWR | O_NONBLOCK | O_NOCTTY, 0);
	if (fd < 0)
		fd = jf_open_below(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	if (fd < 0)
		return -1;
	if (fstat(fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void keep_orphan(int fd, const struct stat *st, int r)
{
	if (fd < 0)
		return;
	if (r < 0)
		close(fd);
	else
		jf_inode_set_orphan(st->st_dev, st->st_ino, fd);
}

static int do_remove(fuse_req_t req, struct jf_inode *pi, const char *name, bool dir)
{
	const char *op = dir ? "rmdir" : "unlink";
	char dpath[JF_PATH_MAX + 1];
	struct probe p;
	int fd, r;

	jf_ns_assert_held();
	fd = jf_dir_fd(pi, dpath, sizeof(dpath));
	if (fd < 0)
		return fd;
	r = jf_probe_existing(jf_req_view(req), fd, dpath, pi->dev, name, &p);
	/* A .git file may go (git removes the one of a clone that failed):
	 * without it, git in that directory finds the repository above. */
	if (r == -EROFS && !dir && p.st.st_nlink == 1 &&
	    jf_gitfile_checked(&p.v, p.st.st_mode & S_IFMT, p.path))
		r = 0;
	if (r < 0) {
		if (r == -EROFS || r == -ENOENT)
			jf_refuse(req, op, p.path, NULL, p.v.zone, p.v.rule, r);
	} else if ((r = jf_changes_note(p.path, false)) == 0) {
		int ofd = dir ? -1 : open_orphan(fd, name, &p.st);

		r = unlinkat(fd, name, dir ? AT_REMOVEDIR : 0) < 0 ? -errno : 0;
		keep_orphan(ofd, &p.st, r);
	}
	if (r == 0) {
		if (dir)
			jf_newdir_forget(p.st.st_dev, p.st.st_ino);
		jf_detach_name(pi, name, &p.st);
		jf_audit_op(req, op, p.path, NULL, p.v.zone, p.v.rule, JF_AUDIT_ALLOW, true, 0);
	}
	jf_put_fd(fd);
	return r;
}

static void reply_remove(fuse_req_t req, fuse_ino_t parent, const char *name, bool dir)
{
	int r;

	jf_ns_lock(false);
	r = do_remove(req, jf_inode_get(parent), name, dir);
	jf_ns_unlock();
	fuse_reply_err(req, -r);
}

void jf_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	reply_remove(req, parent, name, false);
}

void jf_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	reply_remove(req, parent, name, true);
}

/* ---------- rename ---------- */

/*
 * Renaming a directory moves every name below it. Allowed when every visible
 * entry below is SAFE at its old and at its new path (a symlink's target
 * also passes the new-symlink rule from its new directory), and every
 * hidden entry stays hidden at its new path; otherwise -EXDEV, which makes
 * mv(1) fall back to copy + delete, checked name by name. A hidden entry
 * that stays hidden is not looked into, but counted: the walk holds every
 * other name operation back, so its bound counts every name it reads.
 */
struct move_walk {
	char *oldp, *newp; /* view paths of the entry's old and new directory */
	size_t olen, nlen;
	int depth;
	unsigned budget; /* names still allowed, hidden or not */
};

/*
 * Zone of the entry @name (@st) of @dirfd if its view directory were @dir:
 * JF_DENIED when it would be hidden (a DENIED name, the mountpoint, a
 * symlink whose target would leave the view from there). A file hard-linked
 * through the view between SAFE names, or RESTRICTED only for its content
 * (jf_hardlink_name_only), moves as SAFE. A visible symlink
 * with an absolute target counts as RESTRICTED: the view shows it as a
 * relative text computed for its directory, which the kernel caches per
 * inode and may still use at the old place, so it never changes directory;
 * so does one that would stand where a .git file may send git
 * (jf_gitfile_symlink_rule()).
 */
static enum jf_zone zone_below(int dirfd, const char *name, const struct stat *st, const char *dir)
{
	const struct jf_symlink_ctx sc = jf_view_symlink_ctx(&jf_fs.view);
	char path[JF_PATH_MAX + 1], target[JF_PATH_MAX + 1], view[JF_PATH_MAX + 1];
	struct jf_inode_info known = {.safe_links = false};
	struct jf_verdict v;
	int len = jf_join(path, sizeof(path), dir, name);
	ssize_t n;

	if (len < 0 || jf_is_mnt_path(&jf_fs.view, path))
		return JF_DENIED;
	jf_classify_path(&jf_fs.view, path, (size_t)len, S_ISDIR(st->st_mode), &v);
	jf_refine(&jf_fs.view, dirfd, name, path, (size_t)len, st, &v);
	if (S_ISREG(st->st_mode) && st->st_nlink > 1)
		jf_inode_info(st->st_dev, st->st_ino, &known);
	jf_effective_zone(&jf_fs.view, st, &v, known.safe_links);
	if (jf_hardlink_name_only(&v))
		return JF_SAFE; /* the name moves; the content stays read-only */
	if (v.zone == JF_DENIED || !S_ISLNK(st->st_mode))
		return v.zone;
	n = readlinkat(dirfd, name, target, sizeof(target) - 1);
	if (n < 0)
		return JF_DENIED;
	target[n] = '\0';
	if (jf_symlink_view(&sc, dir, target, view, sizeof(view)) < 0)
		return JF_DENIED;
	return target[0] == '/' || jf_gitfile_symlink_rule(path, target) ? JF_RESTRICTED : v.zone;
}

static int subtree_ok(int parent_fd, struct move_walk *w);

/* Is entry @name (@st) answered alike at its old and new path without a
 * look at its content (jf_refine_same_either_way)? */
static bool same_either_way(const char *name, const struct stat *st, const struct move_walk *w)
{
	char a[JF_PATH_MAX + 1], b[JF_PATH_MAX + 1];
	int alen = jf_join(a, sizeof(a), w->oldp, name),
	    blen = jf_join(b, sizeof(b), w->newp, name);

	return alen >= 0 && blen >= 0 &&
	       jf_refine_same_either_way(&jf_fs.view, a, (size_t)alen, b, (size_t)blen, st);
}

/* One entry of the walk: 0 or -EXDEV (or -errno of the backing calls). */
static int entry_moves_ok(DIR *dp, const char *name, struct move_walk *w)
{
	size_t n = strlen(name), olen = w->olen, nlen = w->nlen;
	enum jf_zone old_zone, new_zone;
	struct stat st;
	int r;

	/* every name counts, hidden ones too: the walk holds the namespace
	 * lock exclusive, and what it may cost is what bounds the wait of
	 * every other name operation */
	if (--w->budget == 0)
		return -EXDEV;
	if (jf_check_name(name, n) != JF_REFUSE_NONE)
		return 0; /* refused names are hidden wherever they are */
	if (olen + n + 2 > JF_PATH_MAX || nlen + n + 2 > JF_PATH_MAX)
		return -EXDEV;
	if (fstatat(dirfd(dp), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (same_either_way(name, &st, w))
		return 0; /* hidden at both or SAFE at both, whatever it holds */
	old_zone = zone_below(dirfd(dp), name, &st, w->oldp);
	new_zone = zone_below(dirfd(dp), name, &st, w->newp);
	if (old_zone == JF_DENIED && new_zone == JF_DENIED)
		return 0; /* stays hidden: not looked into */
	if (old_zone != JF_SAFE || new_zone != JF_SAFE)
		return -EXDEV;
	if (!S_ISDIR(st.st_mode))
		return 0;
	_cleanup_close_ int sub =
		openat(dirfd(dp), name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (sub < 0)
		return -errno;
	sprintf(w->oldp + olen, "%s%s", olen ? "/" : "", name);
	sprintf(w->newp + nlen, "%s%s", nlen ? "/" : "", name);
	w->olen = strlen(w->oldp);
	w->nlen = strlen(w->newp);
	r = subtree_ok(sub, w);
	w->oldp[olen] = w->newp[nlen] = '\0';
	w->olen = olen;
	w->nlen = nlen;
	return r;
}

static int subtree_ok(int parent_fd, struct move_walk *w)
{
	_cleanup_closedir_ DIR *dp = NULL;
	struct dirent *de;
	int fd, r = 0;

	if (w->depth >= JF_MAX_DIR_RENAME_DEPTH)
		return -EXDEV;
	fd = openat(parent_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return -errno;
	}
	w->depth++;
	while (r == 0 && (de = readdir(dp)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			r = entry_moves_ok(dp, de->d_name, w);
	w->depth--;
	return r;
}

static int check_dir_move(int pfd, const char *name, const char *oldpath, const char *newpath)
{
	char o[JF_PATH_MAX + 2], n[JF_PATH_MAX + 2];
	struct move_walk w = {.oldp = o, .newp = n, .budget = JF_MAX_DIR_RENAME_ENTRIES};
	_cleanup_close_ int fd = openat(pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	jf_ns_assert_held();
	snprintf(o, sizeof(o), "%s", oldpath);
	snprintf(n, sizeof(n), "%s", newpath);
	w.olen = strlen(o);
	w.nlen = strlen(n);
	return subtree_ok(fd, &w);
}

struct rename_req {
	struct jf_inode *pi, *npi;
	const char *name, *newname;
	unsigned flags;
	int fd, nfd;
	char dpath[JF_PATH_MAX + 1], ndpath[JF_PATH_MAX + 1];
	struct probe src, dst;
	bool dst_exists;
	bool exclusive;			/* jf_fs.ns_lock is held exclusive */
	bool waited;			/* for the writers of a git file (jf_git_swap_wait) */
	const struct jf_rule *git_rule; /* onto a checked git file: by jf_git_swap() */
};

/*
 * A SAFE regular file renamed onto the git index or packed-refs of its own
 * directory (git's index.lock, packed-refs.lock): those are RESTRICTED, and
 * this rename is the one change let through, by jf_git_swap(), which checks
 * the content first. Returns the target's rule, or NULL for every other
 * rename.
 */
static const struct jf_rule *git_target(const struct rename_req *rr, const char *newpath)
{
	struct jf_verdict v;

	if (rr->pi != rr->npi || rr->flags != 0 || !S_ISREG(rr->src.st.st_mode) ||
	    rr->src.v.zone != JF_SAFE || jf_is_mnt_path(&jf_fs.view, newpath))
		return NULL;
	jf_classify_path(&jf_fs.view, newpath, strlen(newpath), false, &v);
	return v.zone == JF_RESTRICTED && jf_rule_git_check(v.rule) != JF_GIT_CHECK_NONE ? v.rule
											 : NULL;
}

static int rename_checks(fuse_req_t req, struct rename_req *rr)
{
	const struct jf_rule *gitdir;
	struct jf_verdict v;
	char newpath[JF_PATH_MAX + 1];
	bool src_dir;
	int r;

	r = jf_probe_existing(jf_req_view(req), rr->fd, rr->dpath, rr->pi->dev, rr->name, &rr->src);
	if (r < 0)
		return jf_refuse(req, "rename", rr->src.path, NULL, rr->src.v.zone, rr->src.v.rule,
				 r);
	src_dir = S_ISDIR(rr->src.st.st_mode);
	if (src_dir && !rr->exclusive)
		return -EDEADLK; /* a directory moves: again, with the lock exclusive */
	r = jf_join(newpath, sizeof(newpath), rr->ndpath, rr->newname);
	rr->git_rule = r < 0 ? NULL : git_target(rr, newpath);
	if (!rr->git_rule) {
		r = jf_check_new_name(req, "rename", rr->npi, rr->nfd, rr->ndpath, rr->newname,
				      rr->src.st.st_mode & S_IFMT, newpath, sizeof(newpath), &v);
		if (r < 0)
			return r;
	}
	r = jf_probe_existing(jf_req_view(req), rr->nfd, rr->ndpath, rr->npi->dev, rr->newname,
			      &rr->dst);
	if (r == -EROFS && rr->git_rule && rr->dst.v.rule == rr->git_rule &&
	    S_ISREG(rr->dst.st.st_mode))
		r = 0; /* the checked file being replaced */
	rr->dst_exists = r != -ENOENT ||
			 fstatat(rr->nfd, rr->newname, &rr->dst.st, AT_SYMLINK_NOFOLLOW) == 0;
	if (rr->dst_exists && r < 0) {
		/* An existing target must be a visible SAFE object; a hidden one
		 * (DENIED, a symlink out of the view) counts as DENIED. */
		r = r == -ENOENT ? -EACCES : r;
		return jf_refuse(req, "rename", rr->src.path, newpath, rr->dst.v.zone,
				 rr->dst.v.rule, r);
	}
	if (S_ISLNK(rr->src.st.st_mode) && rr->pi != rr->npi &&
	    (r = symlink_fits(rr->fd, rr->name, rr->ndpath)) < 0)
		return jf_refuse(req, "rename", rr->src.path, newpath, rr->src.v.zone,
				 rr->src.v.rule, r);
	if (S_ISLNK(rr->src.st.st_mode) && (gitdir = symlink_gitdir(rr->fd, rr->name, newpath)))
		return jf_refuse(req, "rename", rr->src.path, newpath, JF_RESTRICTED, gitdir,
				 -EROFS);
	if (rr->flags & RENAME_EXCHANGE) {
		if (!rr->dst_exists)
			return -ENOENT;
		if (S_ISLNK(rr->dst.st.st_mode) && rr->pi != rr->npi &&
		    (r = symlink_fits(rr->nfd, rr->newname, rr->dpath)) < 0)
			return jf_refuse(req, "rename", rr->src.path, newpath, rr->dst.v.zone,
					 rr->dst.v.rule, r);
		/* The old name receives the target: classify it as such. */
		jf_classify_path(&jf_fs.view, rr->src.path, rr->src.len,
				 S_ISDIR(rr->dst.st.st_mode), &v);
		if (v.zone != JF_SAFE)
			return jf_refuse(req, "rename", rr->src.path, newpath, v.zone, v.rule,
					 v.zone == JF_DENIED ? -EACCES : -EROFS);
		if (S_ISDIR(rr->dst.st.st_mode)) {
			if (!rr->exclusive)
				return -EDEADLK;
			r = check_dir_move(rr->nfd, rr->newname, newpath, rr->src.path);
			if (r < 0)
				return r;
		}
	}
	if (src_dir) {
		r = check_dir_move(rr->fd, rr->name, rr->src.path, newpath);
		if (r < 0)
			return jf_refuse(req, "rename", rr->src.path, newpath, JF_SAFE, NULL, r);
	}
	return 0;
}

static void rename_update_table(struct rename_req *rr)
{
	const struct stat *src = &rr->src.st, *dst = &rr->dst.st;

	if (rr->dst_exists && src->st_dev == dst->st_dev && src->st_ino == dst->st_ino)
		return; /* two names of one file: rename(2) did nothing */
	if (rr->dst_exists && (rr->flags & RENAME_EXCHANGE))
		jf_inode_rename(dst->st_dev, dst->st_ino, rr->npi, rr->newname, rr->pi, rr->name);
	else if (rr->dst_exists)
		jf_inode_rename(dst->st_dev, dst->st_ino, rr->npi, rr->newname, NULL, NULL);
	if (rr->dst_exists && !(rr->flags & RENAME_EXCHANGE) && S_ISDIR(dst->st_mode))
		jf_newdir_forget(dst->st_dev, dst->st_ino); /* an empty directory replaced */
	jf_inode_rename(src->st_dev, src->st_ino, rr->pi, rr->name, rr->npi, rr->newname);
}

/* The rename of a new git index or packed-refs into place (git_target()). */
static int swap_git_file(fuse_req_t req, struct rename_req *rr)
{
	char newpath[JF_PATH_MAX + 1];
	struct jf_git_refusal no;
	bool away;
	int ofd = rr->dst_exists && (rr->src.st.st_ino != rr->dst.st.st_ino ||
				     rr->src.st.st_dev != rr->dst.st.st_dev)
			  ? open_orphan(rr->nfd, rr->newname, &rr->dst.st)
			  : -1;
	int r = jf_git_swap(jf_rule_git_check(rr->git_rule), rr->fd, rr->dpath, rr->name,
			    &rr->src.st, rr->newname, &away, &no);

	if (r == -EBUSY && rr->waited)
		r = -EROFS; /* still open for writing after the wait */
	keep_orphan(ofd, &rr->dst.st, r == 0 || away ? 0 : r);
	if (away) { /* renamed, then removed: do_rename() records only a success */
		rename_update_table(rr);
		jf_detach_name(rr->npi, rr->newname, &rr->src.st);
	}
	if (r == -EROFS && no.why) {
		char detail[JF_GIT_KEY_MAX + 128];

		snprintf(detail, sizeof(detail), "%s%s%s", no.why, no.key[0] ? ": " : "", no.key);
		jf_join(newpath, sizeof(newpath), rr->ndpath, rr->newname);
		return jf_refuse_detail(req, "rename", rr->src.path, newpath, JF_RESTRICTED,
					rr->git_rule, r, detail);
	}
	return r;
}

static int do_rename(fuse_req_t req, struct rename_req *rr)
{
	char newpath[JF_PATH_MAX + 1];
	int r;

	if (rr->flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	rr->fd = jf_dir_fd(rr->pi, rr->dpath, sizeof(rr->dpath));
	if (rr->fd < 0)
		return rr->fd;
	rr->nfd = jf_dir_fd(rr->npi, rr->ndpath, sizeof(rr->ndpath));
	if (rr->nfd < 0) {
		jf_put_fd(rr->fd);
		return rr->nfd;
	}
	jf_ns_assert_held();
	r = rename_checks(req, rr);
	if (r == 0 && (r = jf_join(newpath, sizeof(newpath), rr->ndpath, rr->newname)) >= 0)
		r = jf_changes_note_rename(rr->src.path, newpath, rr->flags & RENAME_EXCHANGE);
	if (r == 0 && rr->git_rule) {
		r = swap_git_file(req, rr);
	} else if (r == 0) {
		int ofd = rr->dst_exists && !(rr->flags & RENAME_EXCHANGE) &&
					  (rr->src.st.st_ino != rr->dst.st.st_ino ||
					   rr->src.st.st_dev != rr->dst.st.st_dev)
				  ? open_orphan(rr->nfd, rr->newname, &rr->dst.st)
				  : -1;

		r = renameat2(rr->fd, rr->name, rr->nfd, rr->newname, rr->flags) < 0 ? -errno : 0;
		keep_orphan(ofd, &rr->dst.st, r);
	}
	if (r == 0) {
		rename_update_table(rr);
		jf_join(newpath, sizeof(newpath), rr->ndpath, rr->newname);
		jf_audit_op(req, "rename", rr->src.path, newpath, JF_SAFE, NULL, JF_AUDIT_ALLOW,
			    true, 0);
	}
	jf_put_fd(rr->fd);
	jf_put_fd(rr->nfd);
	return r;
}

/* Does this rename move a directory, as far as the kernel's inodes tell?
 * A guess for the lock mode only: rename_checks() asks for the exclusive
 * lock (-EDEADLK) when the backing tree shows a directory after all. */
static bool moves_dir(fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned flags)
{
	char dpath[JF_PATH_MAX + 1];
	struct stat st;
	bool dir = false;
	int fd = jf_dir_fd(jf_inode_get(parent), dpath, sizeof(dpath));

	if (fd >= 0) {
		dir = fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
		jf_put_fd(fd);
	}
	if (dir || !(flags & RENAME_EXCHANGE))
		return dir;
	fd = jf_dir_fd(jf_inode_get(newparent), dpath, sizeof(dpath));
	if (fd >= 0) {
		dir = fstatat(fd, newname, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
		jf_put_fd(fd);
	}
	return dir;
}

void jf_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
	       const char *newname, unsigned int flags)
{
	struct rename_req *rr;
	int r;

	/* A name moved while the hard-link walk runs could be counted twice
	 * (hardlinks.c): wait for it (at once once it ended). */
	jf_hardlinks_wait(jf_req_view(req)->links);
	rr = calloc(1, sizeof(*rr));
	if (!rr) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	rr->pi = jf_inode_get(parent);
	rr->npi = jf_inode_get(newparent);
	rr->name = name;
	rr->newname = newname;
	rr->flags = flags;
	rr->exclusive = moves_dir(parent, name, newparent, newname, flags);
	jf_ns_lock(rr->exclusive);
	r = do_rename(req, rr);
	jf_ns_unlock();
	if (r == -EDEADLK && !rr->exclusive) {
		rr->exclusive = true;
		jf_ns_lock(true);
		r = do_rename(req, rr);
		jf_ns_unlock();
	}
	if (r == -EBUSY && rr->git_rule) {
		/* A git file still open for writing: waited for without the
		 * lock, then checked again from the start. */
		rr->waited = true;
		(void)jf_git_swap_wait(&rr->src.st);
		jf_ns_lock(rr->exclusive);
		r = do_rename(req, rr);
		jf_ns_unlock();
	}
	free(rr);
	fuse_reply_err(req, -r);
}

/* ---------- link ---------- */

static int do_link(fuse_req_t req, struct jf_inode *inode, struct jf_inode *npi,
		   const char *newname, struct fuse_entry_param *e)
{
	char path[JF_PATH_MAX + 1] = "", ndpath[JF_PATH_MAX + 1], newpath[JF_PATH_MAX + 1];
	char proc[64];
	const struct jf_rule *gitdir;
	struct jf_verdict v, cur;
	int fd, nfd, r;

	jf_ns_assert_held();
	jf_inode_path(inode, path, sizeof(path));
	jf_zone_of(jf_req_view(req), inode, &cur);
	if (cur.zone != JF_SAFE)
		return jf_refuse(req, "link", path, newname, cur.zone, cur.rule,
				 cur.zone == JF_DENIED ? -ENOENT : -EROFS);
	if (inode->type == S_IFDIR)
		return -EPERM;
	nfd = jf_dir_fd(npi, ndpath, sizeof(ndpath));
	if (nfd < 0)
		return nfd;
	r = jf_check_new_name(req, "link", npi, nfd, ndpath, newname, inode->type, newpath,
			      sizeof(newpath), &v);
	fd = r < 0 ? -1 : jf_open_inode(inode, O_PATH, NULL);
	if (r == 0 && fd < 0)
		r = fd;
	/* A second name of a symlink in another directory: checked there first,
	 * like a new symlink, before anything is created. */
	if (r == 0 && inode->type == S_IFLNK && !in_dir(path, ndpath) &&
	    (r = symlink_fits(fd, "", ndpath)) < 0 && (r == -EACCES || r == -EXDEV))
		r = jf_refuse(req, "link", path, newpath, cur.zone, cur.rule, -EACCES);
	if (r == 0 && inode->type == S_IFLNK && (gitdir = symlink_gitdir(fd, "", newpath)))
		r = jf_refuse(req, "link", path, newpath, JF_RESTRICTED, gitdir, -EROFS);
	/* overlay mode: link(2) copies the file up first */
	if (r == 0 && (r = jf_changes_note(path, false)) == 0)
		r = jf_changes_note(newpath, false);
	if (r == 0 && linkat(fd, "", nfd, newname, AT_EMPTY_PATH) < 0) {
		/* Without CAP_DAC_READ_SEARCH: link our own fd through procfs. */
		jf_proc_fd_path(proc, sizeof(proc), fd);
		if (linkat(AT_FDCWD, proc, nfd, newname, AT_SYMLINK_FOLLOW) < 0)
			r = jf_hide_eexist(-errno, nfd, ndpath, npi->dev, newname);
	}
	if (r == 0) {
		bool had_safe_links = jf_inode_set_safe_links(inode, true);

		r = jf_entry_for_new(npi, nfd, ndpath, newname, e);
		if (r < 0) {
			jf_unlink_created(nfd, newname, fd, false); /* leave nothing behind */
			jf_inode_set_safe_links(inode, had_safe_links);
		} else {
			/* Its newest name is the one its path is built from: a
			 * program that links a temporary file to its final name
			 * and unlinks the temporary (git) keeps a reachable file. */
			jf_inode_attach(jf_inode_get(e->ino), npi, newname);
			jf_audit_op(req, "link", path, newpath, JF_SAFE, v.rule, JF_AUDIT_ALLOW,
				    true, 0);
		}
	}
	if (fd >= 0)
		close(fd);
	jf_put_fd(nfd);
	return r;
}

void jf_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct fuse_entry_param e;
	int r;

	/* as rename: a name added mid-walk could be counted */
	jf_hardlinks_wait(jf_req_view(req)->links);
	jf_ns_lock(false);
	r = do_link(req, jf_inode_get(ino), jf_inode_get(newparent), newname, &e);
	jf_ns_unlock();

	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_entry(req, &e);
}
