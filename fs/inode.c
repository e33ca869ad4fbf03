/* SPDX-License-Identifier: MIT */
/*
 * The inode table: one struct jf_inode per backing object the kernel knows
 * (nlookup > 0), keyed by (st_dev, st_ino), holding NO file descriptor. Each
 * inode stores a parent pointer and its name, like a dentry, so its
 * view-relative path can be rebuilt and reopened below root_fd when needed.
 * This keeps fds bounded by open files and directories, not by tree size
 * (docs/threat-model.md, invariant 9); memory is about 100 bytes + name per inode the
 * kernel holds, and forget/batch_forget free them.
 *
 * Locking: one mutex (jf_fs.lock) guards the hash tables and every inode's
 * parent, name, nlookup and refs. Path building holds it only while copying
 * names, never across a system call.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backing.h"
#include "changes.h"
#include "fd-budget.h"
#include "fsstate.h"
#include "hash.h"
#include "inode.h"
#include "policy.h"

#define VIEW_INO_FOREIGN (1ULL << 63)

/* The watch module's callbacks (NULL: none), set before serving. */
static const struct jf_inode_watcher *watcher;

void jf_inode_set_watcher(const struct jf_inode_watcher *w)
{
	watcher = w;
}

int jf_inode_init(struct jf_fs *fs, const struct stat *root_st)
{
	/* Both tables have buckets from here on, so no insertion fails. */
	if (jf_htab_init(&fs->table, 1 << 14) < 0)
		return -ENOMEM;
	if (jf_htab_init(&fs->unhashed, 64) < 0) {
		jf_htab_destroy(&fs->table);
		return -ENOMEM;
	}
	pthread_mutex_init(&fs->lock, NULL);
	pthread_rwlockattr_t ra;

	pthread_rwlockattr_init(&ra);
	/* A stream of creates must not starve a directory rename. */
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&fs->ns_lock, &ra);
	pthread_rwlockattr_destroy(&ra);
	atomic_init(&fs->name_gen, 0);
	memset(&fs->root, 0, sizeof(fs->root));
	fs->root.dev = root_st->st_dev;
	fs->root.ino = root_st->st_ino;
	fs->root.type = S_IFDIR;
	fs->root.nlookup = 2; /* never forgotten */
	fs->root.view_ino = FUSE_ROOT_ID;
	fs->root.orphan_fd = -1;
	fs->root_dev = root_st->st_dev;
	fs->next_view_ino = 1;
	return 0;
}

void jf_inode_root_replaced(const struct stat *root_st)
{
	jf_ns_assert_held();
	jf_fs_lock();
	jf_fs.root.dev = root_st->st_dev;
	jf_fs.root.ino = root_st->st_ino;
	jf_fs.root_dev = root_st->st_dev;
	jf_fs.view.root_dev = root_st->st_dev;
	jf_fs.view.root_ino = root_st->st_ino;
	jf_fs_unlock();
}

struct jf_inode *jf_inode_get(fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return &jf_fs.root;
	return (struct jf_inode *)(uintptr_t)ino;
}

struct inode_key {
	dev_t dev;
	ino_t ino;
};

static bool inode_match(const struct jf_hnode *n, const void *key)
{
	const struct jf_inode *p = jf_container_of(n, struct jf_inode, hnode);
	const struct inode_key *k = key;

	return p->dev == k->dev && p->ino == k->ino;
}

static struct jf_inode *find_locked(dev_t dev, ino_t ino)
{
	struct inode_key k = {dev, ino};
	struct jf_hnode *n;

	jf_fs_assert_locked();
	n = jf_htab_find(&jf_fs.table, jf_hash_dev_ino(dev, ino), inode_match, &k);
	return n ? jf_container_of(n, struct jf_inode, hnode) : NULL;
}

/* Drop @inode if nothing refers to it any more, then its parent likewise. */
static void maybe_free_locked(struct jf_inode *inode)
{
	jf_fs_assert_locked();
	while (inode && inode != &jf_fs.root && inode->nlookup == 0 && inode->refs == 0) {
		struct jf_inode *parent = inode->parent;

		jf_htab_remove(inode->unhashed ? &jf_fs.unhashed : &jf_fs.table, &inode->hnode);
		if (inode->orphan_fd >= 0) {
			jf_fs_close_unlocked(inode->orphan_fd);
			jf_fd_put_unshared();
		}
		if (inode->type == S_IFDIR && watcher)
			watcher->forget(inode);
		free(inode->name);
		free(inode);
		if (!parent)
			break;
		parent->refs--;
		inode = parent;
	}
}

/* Point @inode at @parent/@name; the old parent may be freed. Locked. */
static int attach_locked(struct jf_inode *inode, struct jf_inode *parent, const char *name)
{
	struct jf_inode *old = inode->parent;
	char *dup = NULL;

	jf_fs_assert_locked();
	if (parent == old && name && inode->name && strcmp(name, inode->name) == 0)
		return 0;
	if (name) {
		dup = strdup(name);
		if (!dup)
			return -ENOMEM;
	}
	free(inode->name);
	inode->name = dup;
	inode->parent = name ? parent : NULL;
	if (name && old) /* a new place: the zones below it are recomputed */
		inode->moved_gen = atomic_fetch_add(&jf_fs.name_gen, 1) + 1;
	if (inode->parent)
		inode->parent->refs++;
	if (old) {
		old->refs--;
		maybe_free_locked(old);
	}
	return 0;
}

/* Is the table's @inode an older object whose inode number was reused? */
static bool reused_locked(const struct jf_inode *inode, const struct stat *st,
			  const struct timespec *btime)
{
	jf_fs_assert_locked();
	if ((inode->type & S_IFMT) != (st->st_mode & S_IFMT))
		return true;
	if (!inode->name && S_ISDIR(st->st_mode))
		return true; /* a directory we saw removed cannot come back */
	if (!inode->name && st->st_nlink <= 1)
		return true; /* removed, and no other name could have led here */
	return btime && (inode->btime.tv_sec || inode->btime.tv_nsec) &&
	       (inode->btime.tv_sec != btime->tv_sec || inode->btime.tv_nsec != btime->tv_nsec);
}

static struct jf_inode *new_locked(struct jf_inode *parent, const char *name, const struct stat *st,
				   const struct timespec *btime)
{
	struct jf_inode *inode = calloc(1, sizeof(*inode));

	jf_fs_assert_locked();
	if (!inode || attach_locked(inode, parent, name) < 0) {
		free(inode);
		return NULL;
	}
	inode->dev = st->st_dev;
	inode->ino = st->st_ino;
	inode->type = st->st_mode & S_IFMT;
	inode->orphan_fd = -1;
	if (btime)
		inode->btime = *btime;
	/* Objects on SOURCE's filesystem keep their inode number; others get a
	 * serial number with the top bit set, which cannot collide with either. */
	if (st->st_dev == jf_fs.root_dev && !(st->st_ino & VIEW_INO_FOREIGN))
		inode->view_ino = st->st_ino;
	else
		inode->view_ino = VIEW_INO_FOREIGN | jf_fs.next_view_ino++;
	/* Cannot fail: the table has had buckets since jf_inode_init(). */
	jf_htab_insert(&jf_fs.table, &inode->hnode, jf_hash_dev_ino(inode->dev, inode->ino));
	return inode;
}

struct jf_inode *jf_inode_ref(struct jf_inode *parent, const char *name, const struct stat *st,
			      const struct timespec *btime, const struct jf_verdict *v,
			      uint64_t gen, bool *created)
{
	struct jf_inode *inode;

	*created = false;
	jf_fs_lock();
	if (st->st_dev == jf_fs.root.dev && st->st_ino == jf_fs.root.ino) {
		inode = &jf_fs.root; /* callers hide this alias; never a second root */
		inode->nlookup++;
		jf_fs_unlock();
		return inode;
	}
	inode = find_locked(st->st_dev, st->st_ino);
	if (inode && reused_locked(inode, st, btime)) {
		/* Leave the old object to the kernel's forget, out of the table
		 * (cannot fail, as in new_locked()). */
		jf_htab_remove(&jf_fs.table, &inode->hnode);
		inode->unhashed = true;
		jf_htab_insert(&jf_fs.unhashed, &inode->hnode, inode->hnode.hash);
		inode = NULL;
	}
	if (inode) {
		/* A file with several names keeps the name it has while that is
		 * attached: the kernel may hold dentries for each of them. */
		if (!(inode->name && inode->parent && !S_ISDIR(st->st_mode) && st->st_nlink > 1))
			attach_locked(inode, parent, name);
	} else {
		inode = new_locked(parent, name, st, btime);
		*created = inode != NULL;
	}
	if (inode) {
		inode->nlookup++;
		inode->zone = v->zone;
		inode->rule = v->rule;
		inode->by_content = v->by_content;
		inode->zone_gen = gen;
	}
	jf_fs_unlock();
	/* Watched before the reply: the kernel caches nothing below a directory
	 * before host changes in it are reported (watch.c). Outside the lock. */
	if (inode && S_ISDIR(st->st_mode) && watcher)
		watcher->dir_ref(inode);
	return inode;
}

void jf_inode_forget(struct jf_inode *inode, uint64_t n)
{
	jf_fs_lock();
	if (inode == &jf_fs.root) {
		jf_fs_unlock();
		return;
	}
	inode->nlookup = n >= inode->nlookup ? 0 : inode->nlookup - n;
	maybe_free_locked(inode);
	jf_fs_unlock();
}

static int path_locked(struct jf_inode *inode, char *buf, size_t size)
{
	const char *names[JF_PATH_MAX / 2];
	size_t depth = 0, len = 0;
	int r = 0;

	jf_fs_assert_locked();
	for (struct jf_inode *p = inode; p != &jf_fs.root; p = p->parent) {
		if (!p->name || !p->parent) {
			r = -ESTALE; /* detached: the kernel relooks the name up */
			goto out;
		}
		if (depth == sizeof(names) / sizeof(names[0])) {
			r = -ENAMETOOLONG;
			goto out;
		}
		names[depth++] = p->name;
	}
	while (depth-- > 0) {
		size_t n = strlen(names[depth]);

		if (len + n + 2 > size) {
			r = -ENAMETOOLONG;
			goto out;
		}
		if (len)
			buf[len++] = '/';
		memcpy(buf + len, names[depth], n);
		len += n;
	}
	buf[len] = '\0';
	r = (int)len;
out:
	return r;
}

int jf_inode_path(struct jf_inode *inode, char *buf, size_t size)
{
	int r;

	jf_fs_lock();
	r = path_locked(inode, buf, size);
	jf_fs_unlock();
	return r;
}

bool jf_inode_info(dev_t dev, ino_t ino, struct jf_inode_info *out)
{
	struct jf_inode *p;

	jf_fs_lock();
	p = find_locked(dev, ino);
	if (p) {
		out->zone = p->zone;
		out->safe_links = p->safe_links;
		out->view_ino = p->view_ino;
		out->writers = false;
		for (const struct jf_file *f = p->open_files; f; f = f->next_open)
			out->writers |= f->writable;
	}
	jf_fs_unlock();
	return p != NULL;
}

void jf_inode_rename(dev_t dev, ino_t ino, struct jf_inode *parent, const char *name,
		     struct jf_inode *nparent, const char *nname)
{
	struct jf_inode *p;

	/* Our own change: its inotify events are not host changes (watch.c). */
	if (watcher) {
		watcher->own_change(parent, name);
		watcher->own_change(nparent, nname);
	}
	jf_fs_lock();
	p = find_locked(dev, ino);
	if (p && p->parent == parent && p->name && strcmp(p->name, name) == 0) {
		p->nlookup++; /* keep it alive across the detach */
		attach_locked(p, nparent, nname);
		p->nlookup--;
		maybe_free_locked(p);
	}
	jf_fs_unlock();
}

/* Did @inode or an ancestor move after its zone was computed? Locked. */
static bool zone_stale_locked(const struct jf_inode *inode)
{
	jf_fs_assert_locked();
	for (const struct jf_inode *p = inode; p; p = p->parent)
		if (p->moved_gen > inode->zone_gen)
			return true;
	return false;
}

int jf_inode_zone_get(struct jf_inode *inode, struct jf_verdict *v, uint64_t *gen, char *path,
		      size_t size, bool reread)
{
	int r = 1;

	jf_fs_lock();
	v->zone = inode->zone;
	v->rule = inode->rule;
	v->by_content = inode->by_content;
	if (inode != &jf_fs.root && ((reread && inode->by_content) || zone_stale_locked(inode))) {
		*gen = atomic_load(&jf_fs.name_gen);
		r = path_locked(inode, path, size);
		r = r < 0 ? r : 0;
	}
	jf_fs_unlock();
	return r;
}

void jf_inode_zone_set(struct jf_inode *inode, const struct jf_verdict *v, uint64_t gen)
{
	jf_fs_lock();
	inode->zone = v->zone;
	inode->rule = v->rule;
	inode->by_content = v->by_content;
	inode->zone_gen = gen;
	jf_fs_unlock();
}

bool jf_inode_set_safe_links(struct jf_inode *inode, bool on)
{
	bool was;

	jf_fs_lock();
	was = inode->safe_links;
	inode->safe_links = on;
	jf_fs_unlock();
	return was;
}

void jf_inode_attach(struct jf_inode *inode, struct jf_inode *parent, const char *name)
{
	if (inode == &jf_fs.root)
		return;
	jf_fs_lock();
	if (inode->name && inode->parent)
		attach_locked(inode, parent, name);
	jf_fs_unlock();
}

/* ns_lock holds of this thread, for the debug-build precondition checks. */
static __thread int ns_depth;

void jf_ns_lock(bool exclusive)
{
	assert(ns_depth == 0); /* never recursive: a waiting writer would deadlock it */
	if (exclusive)
		pthread_rwlock_wrlock(&jf_fs.ns_lock);
	else
		pthread_rwlock_rdlock(&jf_fs.ns_lock);
	ns_depth++;
}

void jf_ns_unlock(void)
{
	assert(ns_depth == 1);
	ns_depth--;
	pthread_rwlock_unlock(&jf_fs.ns_lock);
}

void jf_ns_assert_held(void)
{
	assert(ns_depth > 0);
}

uint64_t jf_view_ino(const struct jf_inode *inode)
{
	return inode->view_ino;
}

/* Free every inode of @t and its buckets. Locked. */
static void free_table_locked(struct jf_htab *t)
{
	struct jf_htab_iter it;
	struct jf_hnode *n;

	jf_fs_assert_locked();
	jf_htab_iter_init(&it, t);
	while ((n = jf_htab_iter_next(&it))) {
		struct jf_inode *p = jf_container_of(n, struct jf_inode, hnode);

		/* Handles the kernel never released (unmounted by a signal). */
		while (p->open_files) {
			struct jf_file *f = p->open_files;

			p->open_files = f->next_open;
			close(f->fd);
			free(f);
		}
		free(p->name);
		free(p);
	}
	jf_htab_destroy(t);
}

void jf_inode_free_all(void)
{
	jf_fs_lock();
	free_table_locked(&jf_fs.table);
	free_table_locked(&jf_fs.unhashed);
	jf_fs_unlock();
}

/* Hand @fd to the inode (dev, ino) as its orphan fd; closes @fd when the
 * inode is not in the table, already has one, or the fd budget is spent (an
 * open of the unlinked file then reads ENOENT, as after a host unlink). */
void jf_inode_set_orphan(dev_t dev, ino_t ino, int fd)
{
	struct jf_inode *p;

	jf_fs_lock();
	p = find_locked(dev, ino);
	if (p && p != &jf_fs.root && p->orphan_fd < 0 && jf_fd_take_unshared(JF_FD_FILE) == 0) {
		p->orphan_fd = fd;
		fd = -1;
	}
	jf_fs_unlock();
	if (fd >= 0)
		close(fd);
}

void jf_inode_hold_writer(int fd)
{
	struct stat st;

	/* Root reopens whatever the mode says (CAP_DAC_OVERRIDE). */
	if (geteuid() == 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	jf_inode_set_orphan(st.st_dev, st.st_ino, fd);
}

int jf_inode_orphan_fd(struct jf_inode *inode)
{
	int ofd, fd;

	jf_fs_lock();
	ofd = inode->orphan_fd;
	jf_fs_unlock();
	/* Set once, closed only when @inode is freed, which the caller's
	 * request prevents: usable without the lock. */
	if (ofd < 0)
		return -ENOENT;
	fd = fcntl(ofd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

/* ---- for the watch thread (watch.h) ---- */

static fuse_ino_t nodeid_of(const struct jf_inode *inode)
{
	return inode == &jf_fs.root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)inode;
}

int jf_inode_find(dev_t dev, ino_t ino, fuse_ino_t *nodeid, char *path, size_t size)
{
	struct jf_inode *p;
	int r = 0;

	jf_fs_lock();
	if (dev == jf_fs.root.dev && ino == jf_fs.root.ino)
		p = &jf_fs.root;
	else
		p = find_locked(dev, ino);
	if (!p)
		r = -ENOENT;
	else
		*nodeid = nodeid_of(p);
	if (p && path)
		r = path_locked(p, path, size);
	jf_fs_unlock();
	return r < 0 ? r : 0;
}

void jf_inode_moved(dev_t dev, ino_t ino, dev_t pdev, ino_t pino, const char *name)
{
	struct jf_inode *p, *parent;

	jf_fs_lock();
	p = find_locked(dev, ino);
	parent = pdev == jf_fs.root.dev && pino == jf_fs.root.ino ? &jf_fs.root
								  : find_locked(pdev, pino);
	if (p && parent && p != &jf_fs.root && p->name && p->parent)
		attach_locked(p, parent, name);
	jf_fs_unlock();
}

/* Copy @p into @out[*n] (the list has room). 0 or -ENOMEM. Locked. */
static int list_one_locked(struct jf_inode *p, struct jf_inode_ent *out, size_t *n)
{
	struct jf_inode_ent *e = &out[*n];

	jf_fs_assert_locked();
	e->ino = nodeid_of(p);
	e->parent = p->parent && p->name ? nodeid_of(p->parent) : 0;
	e->name = NULL;
	if (e->parent && !(e->name = strdup(p->name)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* Copy every inode of @t into @out[*n...] (room for all). 0 or -ENOMEM. Locked. */
static int list_table_locked(const struct jf_htab *t, struct jf_inode_ent *out, size_t *n)
{
	struct jf_htab_iter it;
	struct jf_hnode *h;
	int r = 0;

	jf_fs_assert_locked();
	jf_htab_iter_init(&it, t);
	while (r == 0 && (h = jf_htab_iter_next(&it)))
		r = list_one_locked(jf_container_of(h, struct jf_inode, hnode), out, n);
	return r;
}

ssize_t jf_inode_list(struct jf_inode_ent **out)
{
	struct jf_inode_ent *list;
	size_t n = 0, cap;
	int r = 0;

	jf_fs_lock();
	cap = jf_fs.table.count + jf_fs.unhashed.count;
	list = calloc(cap ? cap : 1, sizeof(*list));
	if (!list)
		r = -ENOMEM;
	if (list)
		r = list_table_locked(&jf_fs.table, list, &n);
	if (list && r == 0)
		r = list_table_locked(&jf_fs.unhashed, list, &n);
	jf_fs_unlock();
	if (r < 0) {
		jf_inode_list_free(list, n);
		return r;
	}
	*out = list;
	return (ssize_t)n;
}

void jf_inode_list_free(struct jf_inode_ent *list, size_t n)
{
	for (size_t i = 0; list && i < n; i++)
		free(list[i].name);
	free(list);
}

int jf_inode_parent_name(struct jf_inode *inode, fuse_ino_t *parent, char **name)
{
	int r = -ENOENT;

	jf_fs_lock();
	if (inode->parent && inode->name) {
		*parent = nodeid_of(inode->parent);
		*name = strdup(inode->name);
		r = *name ? 0 : -ENOMEM;
	}
	jf_fs_unlock();
	return r;
}

int jf_open_inode(struct jf_inode *inode, int flags, struct stat *st)
{
	char path[JF_PATH_MAX + 1];
	struct stat tmp;
	int r, fd;

	if (!st)
		st = &tmp;
	r = jf_inode_path(inode, path, sizeof(path));
	if (r < 0)
		return r;
	if (flags & (O_PATH | O_DIRECTORY))
		fd = jf_open_beneath(path, flags, 0);
	else /* a regular file: never a FIFO or a device put at its name */
		fd = jf_open_file_below(jf_fs.view.root_fd, path, flags, st);
	if (fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP || fd == -ENXIO)
		return -ESTALE; /* the name now holds something else: the kernel
				 * retries once with a fresh lookup (LOOKUP_REVAL) */
	if (fd < 0)
		return fd;
	if ((flags & (O_PATH | O_DIRECTORY)) && fstat(fd, st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	/* an inode of an overlay mounted before keeps its objects (changes.h) */
	if (!jf_changes_same_dev(st->st_dev, inode->dev) || st->st_ino != inode->ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}
