/* SPDX-License-Identifier: MIT */
/*
 * Probing a name: is a child of a directory visible, and in which zone? The
 * name is classified first (a name DENIED whatever its object is gets no
 * backing access at all), then the stat, what a DENIED file holds, a
 * crossed mount, a symlink's target and hard links decide. The zone of a
 * known inode is the cached one until a rename moves it or an ancestor;
 * then its current name is probed again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "backing.h"
#include "hardlinks.h"
#include "policy.h"
#include "probe.h"
#include "refine.h"
#include "symlink.h"
#include "zone-name.h"

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
 * the other ("foo" then "!foo/": a directory rule such as "secrets/" holds
 * every type) needs the stat that tells which,
 * and so does a name whose object may decide (jf_refine_may: a rule
 * subject to content, a file tracked by git).
 */
static bool denied_by_name(const struct jf_view *view, struct probe *p, unsigned char dtype)
{
	struct jf_verdict as_dir;

	jf_classify_path(view, p->path, p->len, dtype == DT_DIR, &p->v);
	if (p->v.zone != JF_DENIED || jf_refine_may(view, p->path, p->len, &p->v))
		return false;
	if (dtype != DT_UNKNOWN)
		return true;
	jf_classify_path(view, p->path, p->len, true, &as_dir);
	return as_dir.zone == JF_DENIED && !jf_refine_may(view, p->path, p->len, &as_dir);
}

int jf_probe_child(const struct jf_view *view, int dirfd, const char *dirpath, dev_t dir_dev,
		   const char *name, unsigned char dtype, bool want_stat, struct probe *p)
{
	char target[JF_PATH_MAX + 1], shown[JF_PATH_MAX + 1];
	unsigned char guess;
	int r;

	p->gen = view->name_gen ? atomic_load(view->name_gen) : 0;
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
	if (jf_is_mnt_path(view, p->path))
		return 0; /* checked before any stat: stat would call into ourselves */
	if (denied_by_name(view, p, dtype))
		return 0;
	guess = dtype;
	if (want_stat || dtype == DT_UNKNOWN || dtype == DT_DIR || p->v.zone == JF_DENIED ||
	    (dtype == DT_REG &&
	     (view->hardlinks == JF_HARDLINKS_DENY || jf_hardlink_any_denied(view->links)))) {
		r = stat_at(dirfd, name, &p->st, &p->btime);
		if (r < 0) /* an absent DENIED name: a hidden lookup to audit */
			return r == -ENOENT && p->v.zone == JF_DENIED ? 0 : r;
		p->have_stat = true;
		dtype = IFTODT(p->st.st_mode);
		/* SOURCE bind-mounted below itself: a directory loop, hide it. */
		if (p->st.st_dev == view->root_dev && p->st.st_ino == view->root_ino)
			return 0;
	}
	if ((dtype == DT_DIR) != (guess == DT_DIR))
		jf_classify_path(view, p->path, p->len, dtype == DT_DIR, &p->v);
	if (p->v.zone == JF_DENIED) /* what the object holds may decide */
		jf_refine(view, dirfd, name, p->path, p->len, &p->st, &p->v);
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
		const struct jf_symlink_ctx sc = jf_view_symlink_ctx(view);
		ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

		if (n < 0)
			return -errno;
		target[n] = '\0';
		if (jf_symlink_view(&sc, dirpath, target, shown, sizeof(shown)) < 0)
			return 0;
		/* An absolute target is shown relative to the link's directory:
		 * with names in two directories one text (cached per inode by the
		 * kernel) cannot be right for both, and could climb out. */
		if (target[0] == '/' && p->have_stat && p->st.st_nlink > 1)
			return 0;
		p->symlink_len = (uint32_t)strlen(shown);
	}
	if (p->have_stat) {
		struct jf_inode_info known = {.safe_links = false};

		if (S_ISREG(p->st.st_mode) && p->st.st_nlink > 1 && view->inode_info)
			view->inode_info(p->st.st_dev, p->st.st_ino, &known);
		jf_effective_zone(view, &p->st, &p->v, known.safe_links);
		if (p->v.zone == JF_DENIED)
			return 0;
	}
	return 1;
}

/* Probe an existing, visible name for a mutation: fills @p; 0 when SAFE,
 * -ENOENT when absent or hidden, -EROFS otherwise. */
int jf_probe_existing(const struct jf_view *view, int fd, const char *dpath, dev_t dev,
		      const char *name, struct probe *p)
{
	int r = jf_probe_child(view, fd, dpath, dev, name, DT_UNKNOWN, true, p);

	if (r <= 0)
		return r == 0 ? -ENOENT : r;
	struct jf_inode_info known;

	if (view->inode_info && view->inode_info(p->st.st_dev, p->st.st_ino, &known) &&
	    known.zone > p->v.zone && !(known.safe_links && p->v.zone == JF_SAFE))
		p->v.zone = known.zone;
	return p->v.zone == JF_SAFE || jf_hardlink_name_only(&p->v) ? 0 : -EROFS;
}
