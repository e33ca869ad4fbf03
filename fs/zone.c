/* SPDX-License-Identifier: MIT */
/*
 * The zone of a known inode: the one cached on the inode until a rename
 * moves it or an ancestor, then its current name probed again (probe.c);
 * the zone of an inode's content for a read, and for a mutation once a
 * host hard link may have given it another name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backing.h"
#include "fsstate.h"
#include "hardlinks.h"
#include "inode.h"
#include "policy.h"
#include "probe.h"
#include "zone.h"

/* Probe @path (the inode's current view path) again from its directory:
 * 0 with the zone in @v, or -ESTALE when the name holds another object. */
static int probe_again(const struct jf_view *view, const struct jf_inode *inode, char *path,
		       struct jf_verdict *v)
{
	char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	struct stat dst;
	struct probe p;
	int dfd, r;

	if (slash)
		*slash = '\0';
	dfd = slash ? jf_open_below(view->root_fd, path, O_PATH | O_DIRECTORY, 0) : view->root_fd;
	if (dfd < 0)
		return dfd == -ENOENT || dfd == -ENOTDIR ? -ESTALE : dfd;
	r = fstat(dfd, &dst) < 0 ? -errno : 0;
	if (r == 0)
		r = jf_probe_child(view, dfd, slash ? path : "", dst.st_dev, name, DT_UNKNOWN, true,
				   &p);
	if (dfd != view->root_fd)
		close(dfd);
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
static int zone_of(const struct jf_view *view, struct jf_inode *inode, struct jf_verdict *v,
		   bool reread)
{
	char path[JF_PATH_MAX + 1];
	struct jf_verdict fresh;
	uint64_t gen;
	int r = jf_inode_zone_get(inode, v, &gen, path, sizeof(path), reread);

	if (r > 0)
		return 0;
	if (r == 0)
		r = probe_again(view, inode, path, &fresh);
	if (r < 0)
		return r;
	jf_inode_zone_set(inode, &fresh, gen);
	*v = fresh;
	return 0;
}

int jf_zone_of(const struct jf_view *view, struct jf_inode *inode, struct jf_verdict *v)
{
	return zone_of(view, inode, v, false);
}

int jf_zone_read(const struct jf_view *view, struct jf_inode *inode, struct jf_verdict *v)
{
	return zone_of(view, inode, v, true);
}

int jf_zone_links(const struct jf_view *view, int fd, struct jf_verdict *v)
{
	struct jf_inode_info known = {.safe_links = false};
	struct stat st;

	if (v->zone != JF_SAFE)
		return 0;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_nlink <= 1)
		return 0;
	if (view->inode_info)
		view->inode_info(st.st_dev, st.st_ino, &known);
	jf_effective_zone(view, &st, v, known.safe_links);
	return 0;
}
