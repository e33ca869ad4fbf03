/* SPDX-License-Identifier: MIT */
/*
 * Directory handles: opendir, readdir, readdirplus, releasedir, fsyncdir.
 * readdir classifies every name before it reaches the kernel (d_type, or a
 * stat when it is unknown) and leaves DENIED and refused names, hidden
 * symlinks, pseudo filesystems and the mountpoint out. readdirplus also
 * registers each entry's inode, exactly like lookup.
 *
 * Directory offsets are the view's own: the visible entries of a listing
 * are numbered 1, 2, 3... (the d_off of the k-th visible entry is k), so
 * neither their values nor their gaps depend on hidden entries. The backing
 * d_off (on ext4 the hash of the next backing name, hidden or not; on tmpfs
 * a creation index) never reaches the kernel. A map per listing turns a view
 * offset back into a backing position (struct dir_map); an offset the map
 * does not know yet (seekdir on a fresh handle) is reached by reading on
 * from the last known position and counting visible entries.
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

#include "audit.h"
#include "cleanup.h"
#include "fd-budget.h"
#include "fsstate.h"
#include "handler.h"
#include "hash.h"
#include "inode.h"
#include "ops.h"
#include "options.h"
#include "policy.h"
#include "probe.h"
#include "zone.h"

/* View offset -> backing position: pos[k] is the telldir(3) cookie from
 * which the next visible entry is the one with view offset k (pos[0] = 0,
 * the start). pos[0..n) are known. */
struct dir_map {
	off_t *pos;
	size_t n, cap;
};

struct jf_dir {
	struct jf_dir *prev, *next; /* open_dirs list, under jf_fs.lock */
	DIR *dp;		    /* NULL until the first readdir (see dir_stream) */
	struct jf_inode *inode;	    /* held by the kernel while the handle is open */
	struct dirent *entry;	    /* read from dp but not yet given to the kernel */
	uint64_t vpos;		    /* view offset of the next visible entry from dp */
	struct dir_map map;
	dev_t dev;
	pid_t pid; /* the opener, charged for the handle's fd (fd-budget.h) */
	uid_t uid;
	char path[]; /* view path of the directory at opendir */
};

/* Open directory handles, so that those the kernel never released (unmount
 * by a signal) are closed at exit. */
static struct jf_dir *open_dirs;

static void dir_link(struct jf_dir *d)
{
	jf_fs_lock();
	d->next = open_dirs;
	if (open_dirs)
		open_dirs->prev = d;
	open_dirs = d;
	jf_fs_unlock();
}

static void dir_unlink(struct jf_dir *d)
{
	jf_fs_lock();
	if (d->prev)
		d->prev->next = d->next;
	else
		open_dirs = d->next;
	if (d->next)
		d->next->prev = d->prev;
	jf_fs_unlock();
}

/* ---------- view offsets ---------- */

/* Start a new listing: only the start is known. 0 or -ENOMEM. */
static int map_reset(struct dir_map *m)
{
	if (!m->cap) {
		m->pos = malloc(64 * sizeof(*m->pos));
		if (!m->pos)
			return -ENOMEM;
		m->cap = 64;
	}
	m->pos[0] = 0;
	m->n = 1;
	return 0;
}

/* Visible entry @k - 1 ended at backing position @cookie. A map that cannot
 * grow stays shorter: seeking past it reads on from its last position. */
static void map_note(struct dir_map *m, uint64_t k, off_t cookie)
{
	if (k < m->n) {
		m->pos[k] = cookie;
		return;
	}
	if (k != m->n)
		return;
	if (m->n == m->cap) {
		off_t *p = realloc(m->pos, 2 * m->cap * sizeof(*p));

		if (!p)
			return;
		m->pos = p;
		m->cap *= 2;
	}
	m->pos[m->n++] = cookie;
}

/*
 * Maps of the listings served without a handle (no_opendir, see below): each
 * READDIR opens the directory afresh, so the map of a directory is kept here
 * between requests, by (dev, ino), one per slot; a newer directory in the
 * same slot evicts the older map. A request takes the map out and puts it
 * back when done: two listings of one directory at once each get a map
 * (one starts empty, and is merely slower), never a shared one. A bounded
 * cache that forgets on collision, so a slot array and not a jf_htab (which
 * keeps every node): only the (dev, ino) hash is the table's.
 */
#define MAP_SLOTS 64

static struct {
	dev_t dev;
	ino_t ino;
	struct dir_map map;
} map_slots[MAP_SLOTS];
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t map_slot(dev_t dev, ino_t ino)
{
	return (size_t)(jf_hash_dev_ino(dev, ino) % MAP_SLOTS);
}

static void map_take(struct jf_inode *dir, struct dir_map *out)
{
	size_t i = map_slot(dir->dev, dir->ino);

	*out = (struct dir_map){0};
	pthread_mutex_lock(&map_lock);
	if (map_slots[i].map.pos && map_slots[i].dev == dir->dev && map_slots[i].ino == dir->ino) {
		*out = map_slots[i].map;
		map_slots[i].map = (struct dir_map){0};
	}
	pthread_mutex_unlock(&map_lock);
}

static void map_put(struct jf_inode *dir, struct dir_map *m)
{
	size_t i = map_slot(dir->dev, dir->ino);
	off_t *old;

	pthread_mutex_lock(&map_lock);
	old = map_slots[i].map.pos;
	map_slots[i].dev = dir->dev;
	map_slots[i].ino = dir->ino;
	map_slots[i].map = *m;
	pthread_mutex_unlock(&map_lock);
	free(old);
	*m = (struct dir_map){0};
}

void jf_ops_cleanup(void)
{
	while (open_dirs) {
		struct jf_dir *d = open_dirs;

		open_dirs = d->next;
		if (d->dp)
			closedir(d->dp);
		free(d->map.pos);
		free(d);
	}
	for (size_t i = 0; i < MAP_SLOTS; i++) {
		free(map_slots[i].map.pos);
		map_slots[i].map = (struct dir_map){0};
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
 *  - with entry and attr timeouts of at least JF_NO_OPENDIR_MIN_S, opendir
 *    answers ENOSYS: the kernel then stops sending OPENDIR and RELEASEDIR
 *    (two round trips per directory) and caches every listing
 *    (fs/fuse/file.c, "Default for no-open"). Each
 *    READDIR then opens the directory by its path (dev/ino checked, as every
 *    backing access) and seeks to the backing position of the view offset
 *    (map_take), the stateless readdir of NFS servers; d_off cookies survive
 *    a reopen on ext4, xfs, btrfs, tmpfs.
 * Audit level all records a listing at OPENDIR, or without OPENDIR at the
 * READDIR from offset 0 that reaches us: once per listing the kernel caches,
 * not per opendir(3) (docs/audit.md). Either way the backing directory is
 * opened by the first READDIR that reaches us, never for a listing served
 * from the cache.
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

/* The "readdir" record of a listing of @inode (view path @path). */
static void audit_listing(fuse_req_t req, struct jf_inode *inode, const char *path)
{
	struct jf_verdict v;

	if (!jf_audit_wants(JF_AUDIT_ALLOW, false))
		return;
	jf_zone_of(jf_req_view(req), inode, &v);
	jf_audit_op(req, "readdir", path, NULL, v.zone, v.rule, JF_AUDIT_ALLOW, false, 0);
}

void jf_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct jf_inode *inode = jf_inode_get(ino);
	char path[JF_PATH_MAX + 1];
	struct jf_dir *d;
	int r;

	if (jf_fs.opts->entry_timeout >= JF_NO_OPENDIR_MIN_S &&
	    jf_fs.opts->attr_timeout >= JF_NO_OPENDIR_MIN_S) {
		fuse_reply_err(req, ENOSYS); /* once per mount: no_opendir */
		return;
	}
	r = jf_inode_path(inode, path, sizeof(path));
	/* the handle holds an fd from its first readdir to releasedir */
	if (r >= 0 && jf_fd_take(JF_FD_DIR, ctx->pid, ctx->uid) < 0)
		r = -EMFILE;
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	d = calloc(1, sizeof(*d) + (size_t)r + 1);
	if (!d) {
		jf_fd_put(ctx->pid, ctx->uid);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	d->pid = ctx->pid;
	d->uid = ctx->uid;
	memcpy(d->path, path, (size_t)r + 1);
	d->inode = inode;
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->cache_readdir = 1;
	fi->keep_cache = listing_fresh(inode);
	audit_listing(req, inode, path);
	dir_link(d);
	if (fuse_reply_open(req, fi) == -ENOENT) {
		dir_unlink(d);
		jf_fd_put(d->pid, d->uid);
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

/* Is backing entry @de shown? 1 (with @pr filled for a name), 0 hidden or
 * vanished. "." and ".." always are. */
static int entry_visible(struct jf_dir *d, struct dirent *de, bool plus, struct probe *pr)
{
	if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
		return 1;
	return jf_probe_child(&jf_fs.view, dirfd(d->dp), d->path, d->dev, de->d_name, de->d_type,
			      plus, pr) > 0;
}

/* Add the visible entry @de with view offset @next for the entry after it;
 * returns its size (more than @rem when it did not fit), 0 with *err set. */
static size_t add_entry(fuse_req_t req, struct jf_inode *dir, char *p, size_t rem,
			struct dirent *de, struct probe *pr, bool plus, off_t next, int *err)
{
	struct stat st = {0};
	size_t sz;
	int r;

	*err = 0;
	if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
		/* The root's ".." is outside the view: report the root itself,
		 * not the host inode of SOURCE's parent (docs/threat-model.md,
		 * invariant 3). */
		if (strcmp(de->d_name, ".") == 0 || dir == &jf_fs.root)
			st.st_ino = jf_view_ino(dir);
		else
			st.st_ino = de->d_ino;
		st.st_mode = S_IFDIR;
		if (plus) {
			struct fuse_entry_param e = {.attr = st};

			return fuse_add_direntry_plus(req, p, rem, de->d_name, &e, next);
		}
		return fuse_add_direntry(req, p, rem, de->d_name, &st, next);
	}
	if (!plus) {
		struct jf_inode_info known;
		bool in_table =
			pr->have_stat && jf_inode_info(pr->st.st_dev, pr->st.st_ino, &known);

		st.st_ino = in_table ? known.view_ino : de->d_ino;
		if (!in_table && pr->have_stat && pr->st.st_dev != jf_fs.root_dev)
			st.st_ino = de->d_ino | (1ULL << 63);
		st.st_mode = (mode_t)DTTOIF(de->d_type);
		return fuse_add_direntry(req, p, rem, de->d_name, &st, next);
	}
	struct fuse_entry_param e;

	r = jf_make_entry(dir, de->d_name, pr, &e);
	if (r < 0) {
		*err = r;
		return 0;
	}
	sz = fuse_add_direntry_plus(req, p, rem, de->d_name, &e, next);
	if (sz > rem)
		jf_inode_forget(jf_inode_get(e.ino), 1);
	return sz;
}

/*
 * Position @d so that its next visible entry has view offset @off: offset 0
 * starts a new listing; a known offset seeks to its backing position; an
 * offset past the map reads on from the last known position, counting
 * visible entries. 0, 1 when the directory ends before @off, or -errno.
 */
static int dir_seek(struct jf_dir *d, uint64_t off)
{
	struct probe pr;

	if ((off == 0 || !d->map.n) && map_reset(&d->map) < 0)
		return -ENOMEM;
	if (off == d->vpos)
		return 0; /* also a pending entry: the kernel reads on */
	d->vpos = off < d->map.n ? off : d->map.n - 1;
	seekdir(d->dp, d->map.pos[d->vpos]);
	d->entry = NULL;
	while (d->vpos < off) {
		struct dirent *de;

		errno = 0;
		de = readdir(d->dp);
		if (!de)
			return errno ? -errno : 1;
		/* Visibility does not depend on want_stat (the probe stats
		 * where the decision needs it): the cheaper probe counts the
		 * same entries as readdirplus does. */
		if (entry_visible(d, de, false, &pr))
			map_note(&d->map, ++d->vpos, de->d_off);
	}
	return 0;
}

/* Fill @buf with the visible entries from @d's position on. Returns the bytes
 * used, or -errno when not even one entry could be added. */
static ssize_t fill_dir(fuse_req_t req, struct jf_inode *dir, struct jf_dir *d, char *buf,
			size_t size, bool plus)
{
	struct probe pr;
	size_t rem = size;
	int err = 0;

	for (;;) {
		size_t sz;

		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				err = -errno;
				break;
			}
		}
		if (entry_visible(d, d->entry, plus, &pr)) {
			sz = add_entry(req, dir, buf + (size - rem), rem, d->entry, &pr, plus,
				       (off_t)d->vpos + 1, &err);
			if (err || sz > rem)
				break; /* d->entry stays for the next request */
			rem -= sz;
			map_note(&d->map, ++d->vpos, d->entry->d_off);
		}
		d->entry = NULL;
	}
	if (err < 0 && rem == size)
		return err;
	return (ssize_t)(size - rem);
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	struct jf_dir *d = (struct jf_dir *)(uintptr_t)fi->fh;
	struct jf_inode *dir = jf_inode_get(ino);
	_cleanup_free_ struct jf_dir *oneshot = NULL;
	_cleanup_free_ char *buf = malloc(size);
	ssize_t n = 0;
	int err = 0;

	if (!d) /* no_opendir: a handle for this request only */
		err = oneshot_dir(dir, &oneshot);
	if (!d && oneshot) {
		d = oneshot;
		map_take(dir, &d->map);
	}
	if (err == 0)
		err = dir_stream(d);
	if (err == 0 && !buf)
		err = -ENOMEM;
	if (err == 0 && plus && off == 0)
		atomic_store(&dir->listed_ms, now_ms());
	if (err == 0 && oneshot && off == 0)
		audit_listing(req, dir, oneshot->path);
	if (err == 0)
		err = dir_seek(d, (uint64_t)off);
	if (err == 0)
		n = fill_dir(req, dir, d, buf, size, plus);
	if (oneshot) {
		if (oneshot->dp)
			closedir(oneshot->dp);
		if (oneshot->map.pos)
			map_put(dir, &oneshot->map);
	}
	if (err < 0 || n < 0)
		fuse_reply_err(req, err < 0 ? -err : (int)-n);
	else
		fuse_reply_buf(req, buf, err == 1 ? 0 : (size_t)n);
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

	/* no_opendir: the kernel sends none, but a handle of 0 owns nothing */
	if (!d) {
		fuse_reply_err(req, 0);
		return;
	}
	dir_unlink(d);
	if (d->dp)
		closedir(d->dp);
	free(d->map.pos);
	jf_fd_put(d->pid, d->uid);
	free(d);
	fuse_reply_err(req, 0);
}

void jf_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	/* No handle in no_opendir mode (fh 0), and one that is not serialized
	 * with readdir otherwise: the directory is opened for this request. */
	_cleanup_close_ int fd = jf_open_inode(jf_inode_get(ino), O_RDONLY | O_DIRECTORY, NULL);

	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	fuse_reply_err(req, (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? errno : 0);
}
