/* SPDX-License-Identifier: MIT */
/*
 * Host-change invalidation with inotify(7).
 *
 * Why: the kernel caches the view's names, attributes and page contents for
 * entry_timeout, attr_timeout and negative_timeout. Changes made through the
 * view update those caches from our replies; changes made to SOURCE directly
 * (an editor, git checkout, mv on the host) would stay invisible until the
 * timeouts expire, and a directory renamed on the host would keep its cached
 * children in the view that long (a relative symlink deep inside could then
 * point out). With every directory the kernel knows watched, the long
 * timeouts that keep requests off the daemon cost no coherence.
 *
 * What is watched: each directory inode while the inode table holds it, the
 * root from the start. The table calls jf_watch_dir() when it hands out a
 * reference to a directory (lookup, readdirplus, mkdir), before the reply,
 * so no child of a directory can be cached by the kernel before the
 * directory is watched; jf_watch_forget() drops the watch when the table
 * frees the inode. The directory is opened with jf_open_inode() (openat2
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, then the (dev, ino) check) and
 * inotify_add_watch() is given "/proc/self/fd/N": never a path string from
 * '/' (docs/threat-model.md, invariant 1).
 *
 * Maps: wd -> (dev, ino) of the directory (struct wdrec; shared when two
 * table inodes reach one backing directory, to which inotify gives one wd)
 * and table inode address -> wdrec (struct wentry; the address is a key,
 * never dereferenced here). An event finds the directory's nodeid by
 * (dev, ino) in the table under jf_fs.lock (jf_inode_find), never through a
 * pointer that may have been freed.
 *
 * Events -> notifications, queued for the notifier thread (notify.h), which
 * sends them with no lock held (fuse_lowlevel.h: inval_entry must not run
 * in the path of a related operation, or the kernel deadlocks):
 *  - IN_CREATE, IN_DELETE, IN_MOVED_FROM, IN_MOVED_TO of name N in D:
 *    inval_entry(D, N), which drops a negative dentry and, for a directory,
 *    its whole cached subtree (d_invalidate); then inval_inode(D, 0, 0), so
 *    D's attributes and its cached listing (the readdir cache is D's page
 *    cache) go too: inval_entry alone touches D only when the kernel had a
 *    dentry for N.
 *  - IN_MODIFY, IN_CLOSE_WRITE, IN_ATTRIB of N in D: fstatat(D, N) on a
 *    directory fd from the openat2 layer -> (dev, ino) -> nodeid, and
 *    inval_inode(child, 0, 0) drops its attributes and page cache (a
 *    same-size edit included). A child the table does not hold gets
 *    inval_entry(D, N).
 *  - IN_ATTRIB of the root itself (no name): inval_inode(root, 0, 0). Other
 *    directories' nameless IN_ATTRIB is ignored: their parent's watch
 *    reports the same change with the name.
 *  - IN_Q_OVERFLOW (more than fs.inotify.max_queued_events pending):
 *    jf_notify_all(), the dentry epoch and every inode the table holds
 *    (notify.c says what older kernels miss).
 *  - IN_IGNORED (directory removed, or our rm_watch): the wd is dead.
 *
 * Cost: after the first event the thread waits WATCH_COALESCE_MS (1 ms;
 * WATCH_BURST_MS, 20 ms, while events keep coming), then reads everything
 * queued and handles each distinct (directory, name, kind) once per read().
 * The daemon's own mutations produce events too; their handlers record
 * (directory, name) (recent.h) and events on such a name younger than
 * JF_RECENT_MS are skipped: the kernel already learnt the change from our
 * reply.
 * Residual: a host change to that very name within JF_RECENT_MS of a change
 * through the view is seen only after the timeouts (jailfs(1), "Host changes").
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backing.h"
#include "changes.h"
#include "fsstate.h"
#include "hash.h"
#include "inode.h"
#include "notify.h"
#include "options.h"
#include "policy.h"
#include "recent.h"
#include "watch.h"
#include "zone-name.h"

/*
 * Watch mask:
 *  IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO  names come and go
 *  IN_CLOSE_WRITE  an editor's save, a compiler's output: content is final
 *  IN_MODIFY       writers that keep the file open (logs); deduplicated
 *  IN_ATTRIB       chmod, chown, utimes, link count, xattrs
 *  IN_ONLYDIR      the fd is a directory; refuse to watch anything else
 *  IN_EXCL_UNLINK  no events for children already unlinked: an open,
 *                  removed file cannot be reached by a name any more
 * Left out: IN_ACCESS, IN_OPEN, IN_CLOSE_NOWRITE (reads change nothing, and
 * the daemon's own reads would flood the queue); IN_DELETE_SELF and
 * IN_MOVE_SELF (the parent's watch reports the same change with the name,
 * which is what the kernel's dentries are keyed by; the root moving changes
 * nothing in the view, root_fd follows it). IN_IGNORED and IN_Q_OVERFLOW
 * are always reported.
 */
#define WATCH_MASK                                                                                 \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY |        \
	 IN_ATTRIB | IN_ONLYDIR | IN_EXCL_UNLINK)

#define WATCH_COALESCE_MS 1 /* wait after the first event of a quiet spell */
#define WATCH_BURST_MS 20   /* ... and in a burst (woken < WATCH_BURST_GAP_MS ago) */
#define WATCH_BURST_GAP_MS 100
#define WATCH_FLUSH_MS 500 /* deferred inotify_rm_watch at least this often */
#define WATCH_KICK_PENDING 1024
#define EVBUF_SIZE 65536 /* one read() */
#define EVBUF_MAX_EVENTS (EVBUF_SIZE / sizeof(struct inotify_event))
#define WATCH_GRACE_MS 2 /* before acting: let handlers record own changes */
#define SEEN_SLOTS 16384 /* > 2 keys per event of one read() */

/* ---------- state ---------- */

struct wdrec {
	struct jf_hnode h; /* in W.recs, keyed by @wd */
	int wd;
	unsigned users; /* table inodes using this watch */
	bool dead;	/* IN_IGNORED seen: the kernel dropped the watch */
	dev_t dev;
	ino_t ino;
};

struct wentry {
	struct jf_hnode h; /* in W.ents, keyed by @inode */
	uint64_t inode;	   /* the table inode's address: a key, never dereferenced */
	struct wdrec *rec; /* NULL: adding the watch failed, do not retry */
};

static struct {
	int ifd; /* inotify; -1 when not watching (written only without workers) */
	int efd; /* eventfd: stop, or many pending rm_watch */
	pthread_t thread;
	bool thread_running;
	atomic_bool stop;
	pthread_mutex_t mu;	/* recs, ents, pending */
	pthread_mutex_t add_mu; /* inotify_add_watch vs rm_watch of pending wds */
	struct jf_htab recs;	/* wd -> struct wdrec (live watches only) */
	struct jf_htab ents;	/* inode address -> struct wentry */
	int *pending;		/* wds whose last user is gone: rm_watch them */
	size_t npending, cap_pending;
	atomic_bool warned_add;
	/* counters for -d */
	atomic_uint_fast64_t n_events, n_own, n_overflow;
} W = {
	.ifd = -1,
	.efd = -1,
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.add_mu = PTHREAD_MUTEX_INITIALIZER,
};

/* ---------- the two maps, under W.mu ---------- */

static bool rec_match(const struct jf_hnode *n, const void *key)
{
	return jf_container_of(n, struct wdrec, h)->wd == *(const int *)key;
}

static struct wdrec *rec_find_locked(int wd)
{
	struct jf_hnode *n = jf_htab_find(&W.recs, jf_hash_u64((uint64_t)wd), rec_match, &wd);

	return n ? jf_container_of(n, struct wdrec, h) : NULL;
}

static bool ent_match(const struct jf_hnode *n, const void *key)
{
	return jf_container_of(n, struct wentry, h)->inode == *(const uint64_t *)key;
}

static struct wentry *ent_find_locked(uint64_t inode)
{
	struct jf_hnode *n = jf_htab_find(&W.ents, jf_hash_u64(inode), ent_match, &inode);

	return n ? jf_container_of(n, struct wentry, h) : NULL;
}

/* ---------- adding and dropping watches ---------- */

static void kick(void)
{
	uint64_t one = 1;

	if (W.efd >= 0 && write(W.efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, the thread is awake anyway */
	}
}

/* Queue @wd for inotify_rm_watch in the thread. Returns true when the
 * thread should be woken now. Under W.mu. */
static bool pending_push_locked(int wd)
{
	if (W.npending == W.cap_pending) {
		size_t ncap = W.cap_pending ? W.cap_pending * 2 : 64;
		int *n = realloc(W.pending, ncap * sizeof(*n));

		if (!n) {
			inotify_rm_watch(W.ifd, wd); /* out of memory: do it now */
			return false;
		}
		W.pending = n;
		W.cap_pending = ncap;
	}
	W.pending[W.npending++] = wd;
	return W.npending == WATCH_KICK_PENDING;
}

/* inotify_add_watch() returned a wd queued for removal: it is alive again. */
static void pending_cancel_locked(int wd)
{
	for (size_t i = 0; i < W.npending; i++)
		if (W.pending[i] == wd)
			W.pending[i--] = W.pending[--W.npending];
}

/* Record that table inode @key uses watch @wd (-1: none, do not retry) on
 * the directory @st. Under W.add_mu. */
static void register_watch(uint64_t key, int wd, const struct stat *st)
{
	struct wdrec *rec = NULL;
	struct wentry *e;
	bool wake = false;

	pthread_mutex_lock(&W.mu);
	if (ent_find_locked(key))
		goto out; /* a concurrent lookup of the same inode won */
	if (wd >= 0) {
		rec = rec_find_locked(wd);
		if (!rec) {
			rec = calloc(1, sizeof(*rec));
			if (!rec)
				goto unwatch;
			rec->wd = wd;
			rec->dev = st->st_dev;
			rec->ino = st->st_ino;
			if (jf_htab_insert(&W.recs, &rec->h, jf_hash_u64((uint64_t)wd)) < 0) {
				free(rec);
				goto unwatch;
			}
			pending_cancel_locked(wd);
		}
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		goto drop_rec;
	e->inode = key;
	e->rec = rec;
	if (jf_htab_insert(&W.ents, &e->h, jf_hash_u64(key)) < 0) {
		free(e);
		goto drop_rec;
	}
	if (rec)
		rec->users++;
	goto out;
drop_rec:
	if (!rec || rec->users)
		goto out;
	jf_htab_remove(&W.recs, &rec->h);
	free(rec);
unwatch:
	wake = pending_push_locked(wd);
out:
	pthread_mutex_unlock(&W.mu);
	if (wake)
		kick();
}

static void warn_add_failed(int err)
{
	char limit[32] = "?";
	FILE *f;

	if (atomic_exchange(&W.warned_add, true))
		return;
	if (err != ENOSPC) {
		fprintf(stderr,
			"jailfs: inotify_add_watch: %s: changes made to %s outside the view show "
			"in it only after entry_timeout/attr_timeout\n",
			strerror(err), jf_fs.view.source_abs);
		return;
	}
	f = fopen("/proc/sys/fs/inotify/max_user_watches", "re");
	if (f) {
		if (!fgets(limit, sizeof(limit), f))
			snprintf(limit, sizeof(limit), "?");
		limit[strcspn(limit, "\n")] = '\0';
		fclose(f);
	}
	fprintf(stderr,
		"jailfs: inotify watch limit reached (fs.inotify.max_user_watches = %s,\n"
		"  /proc/sys/fs/inotify/max_user_watches; in a user namespace also\n"
		"  user.max_inotify_watches): directories of %s looked up from now on\n"
		"  are not watched, and changes made to them outside the view show in it\n"
		"  only after entry_timeout/attr_timeout; raise the limit, e.g.\n"
		"  sysctl fs.inotify.max_user_watches=%d\n",
		limit, jf_fs.view.source_abs, 1 << 20);
}

/*
 * The directory inotify watches for @inode, whose O_PATH fd in the view @fd
 * the caller gives up: in overlay mode SOURCE's own directory at the same
 * path, since the host changes SOURCE and the overlay reports only its own
 * changes (-1 when SOURCE has no such directory: one the view made, which
 * the host cannot reach); otherwise @fd.
 */
static int watched_dir(struct jf_inode *inode, int fd)
{
	char path[JF_PATH_MAX + 1];
	int lower = jf_changes_lower_fd();

	if (lower < 0)
		return fd;
	close(fd);
	if (jf_inode_path(inode, path, sizeof(path)) < 0)
		return -1;
	fd = jf_open_below(lower, jf_rel(path), O_PATH | O_DIRECTORY, 0);
	return fd < 0 ? -1 : fd;
}

void jf_watch_dir(struct jf_inode *inode)
{
	uint64_t key = (uint64_t)(uintptr_t)inode;
	char proc[64];
	struct stat st;
	bool known;
	int fd, wd, err = 0;

	if (W.ifd < 0)
		return;
	pthread_mutex_lock(&W.mu);
	known = ent_find_locked(key) != NULL;
	pthread_mutex_unlock(&W.mu);
	if (known)
		return;
	fd = jf_open_inode(inode, O_PATH | O_DIRECTORY, &st);
	if (fd < 0)
		return; /* renamed or removed meanwhile: retried at its next lookup */
	fd = watched_dir(inode, fd);
	if (fd < 0) {
		pthread_mutex_lock(&W.add_mu);
		register_watch(key, -1, &st);
		pthread_mutex_unlock(&W.add_mu);
		return;
	}
	jf_proc_fd_path(proc, sizeof(proc), fd);
	pthread_mutex_lock(&W.add_mu);
	wd = inotify_add_watch(W.ifd, proc, WATCH_MASK);
	if (wd < 0)
		err = errno;
	register_watch(key, wd, &st);
	pthread_mutex_unlock(&W.add_mu);
	close(fd);
	if (wd < 0)
		warn_add_failed(err);
}

void jf_watch_forget(const struct jf_inode *inode)
{
	struct wentry *e;
	bool wake = false;

	if (W.ifd < 0)
		return;
	pthread_mutex_lock(&W.mu);
	e = ent_find_locked((uint64_t)(uintptr_t)inode);
	if (e)
		jf_htab_remove(&W.ents, &e->h);
	if (e && e->rec && --e->rec->users == 0) {
		if (!e->rec->dead) {
			jf_htab_remove(&W.recs, &e->rec->h);
			wake = pending_push_locked(e->rec->wd);
		}
		free(e->rec);
	}
	pthread_mutex_unlock(&W.mu);
	free(e);
	if (wake)
		kick();
}

/* IN_IGNORED: the kernel removed watch @wd (directory gone, or our own
 * rm_watch). Table inodes using it keep their entry until they are freed. */
static void rec_dead(int wd)
{
	struct wdrec *rec;

	pthread_mutex_lock(&W.mu);
	rec = rec_find_locked(wd);
	if (rec) {
		jf_htab_remove(&W.recs, &rec->h);
		rec->dead = true;
	}
	pending_cancel_locked(wd);
	pthread_mutex_unlock(&W.mu);
}

/* (dev, ino) of the directory watched by @wd; false when not (any more). */
static bool rec_lookup(int wd, dev_t *dev, ino_t *ino)
{
	struct wdrec *rec;

	pthread_mutex_lock(&W.mu);
	rec = rec_find_locked(wd);
	if (rec) {
		*dev = rec->dev;
		*ino = rec->ino;
	}
	pthread_mutex_unlock(&W.mu);
	return rec != NULL;
}

/* The thread: inotify_rm_watch for every wd queued by jf_watch_forget. */
static void flush_pending(void)
{
	int *list;
	size_t n;

	pthread_mutex_lock(&W.add_mu);
	pthread_mutex_lock(&W.mu);
	list = W.pending;
	n = W.npending;
	W.pending = NULL;
	W.npending = W.cap_pending = 0;
	pthread_mutex_unlock(&W.mu);
	for (size_t i = 0; i < n; i++)
		inotify_rm_watch(W.ifd, list[i]);
	pthread_mutex_unlock(&W.add_mu);
	free(list);
}

/* IN_Q_OVERFLOW: events were lost; invalidate everything the kernel may
 * cache (notify.h). */
static void invalidate_all(void)
{
	atomic_fetch_add(&W.n_overflow, 1);
	if (jf_fs.opts->debug)
		fprintf(stderr, "jailfs: watch: event queue overflowed\n");
	jf_notify_all();
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---------- one read() of events ---------- */

enum ev_kind { K_ENTRY = 1, K_CHILD, K_SELF, K_DIRINVAL };

struct batch {
	uint64_t seen[SEEN_SLOTS]; /* (wd, kind, name) keys handled in this read() */
	uint32_t used[SEEN_SLOTS]; /* slots of seen[] to clear after the read() */
	size_t nused;
	bool overflow;
	uint64_t now;
	/* the directory of the last event (events come grouped by directory) */
	int wd;	       /* -1: none */
	bool have_dir; /* rec_lookup succeeded */
	dev_t dev;
	ino_t ino;
	int node_err; /* 1: not resolved yet, 0: nodeid valid, else -errno */
	bool path_ok; /* path holds the directory's view path */
	fuse_ino_t nodeid;
	int fd; /* -1: not opened, -2: cannot be opened */
	char path[JF_PATH_MAX + 1];
	/* events of this read() that ask for an invalidation, and which */
	const struct inotify_event *cand[EVBUF_MAX_EVENTS];
	enum ev_kind cand_kind[EVBUF_MAX_EVENTS];
};

/* Add @key; false when this read() handled it already. */
static bool seen_add(struct batch *b, uint64_t key)
{
	size_t i = key & (SEEN_SLOTS - 1);

	for (size_t n = 0; n < SEEN_SLOTS; n++, i = (i + 1) & (SEEN_SLOTS - 1)) {
		if (b->seen[i] == key)
			return false;
		if (!b->seen[i]) {
			b->seen[i] = key;
			b->used[b->nused++] = (uint32_t)i;
			return true;
		}
	}
	return true; /* full: handle it again rather than lose it */
}

static void dir_close(struct batch *b)
{
	if (b->fd >= 0 && !jf_is_root_fd(b->fd))
		close(b->fd);
	b->fd = -1;
}

/* Make @wd the current directory of @b. False when the watch is dead. */
static bool dir_select(struct batch *b, int wd)
{
	if (b->wd == wd)
		return b->have_dir;
	dir_close(b);
	b->wd = wd;
	b->node_err = 1;
	b->have_dir = rec_lookup(wd, &b->dev, &b->ino);
	return b->have_dir;
}

/* Nodeid (and view path, when it can be built) of the current directory:
 * 0, or -ENOENT when the table does not hold it. */
static int dir_node(struct batch *b)
{
	int r;

	if (b->node_err == 1) {
		r = jf_inode_find(b->dev, b->ino, &b->nodeid, b->path, sizeof(b->path));
		b->node_err = r == -ENOENT ? r : 0;
		b->path_ok = r == 0;
	}
	return b->node_err;
}

/* O_PATH fd of the current directory, reached through the openat2 layer and
 * checked by (dev, ino); -errno when it moved or went away. */
static int dir_fd(struct batch *b)
{
	struct stat st;
	int fd;

	if (b->fd >= 0 || b->fd == -2)
		return b->fd == -2 ? -ESTALE : b->fd;
	if (dir_node(b) < 0 || !b->path_ok) {
		b->fd = -2;
		return -ESTALE;
	}
	if (b->nodeid == FUSE_ROOT_ID) {
		b->fd = jf_fs.view.root_fd;
		return b->fd;
	}
	fd = jf_open_beneath(b->path, O_PATH | O_DIRECTORY, 0);
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_dev != b->dev || st.st_ino != b->ino)) {
		close(fd);
		fd = -ESTALE;
	}
	b->fd = fd < 0 ? -2 : fd;
	return fd < 0 ? fd : b->fd;
}

/* Nodeid of child @name of the current directory: 1 found, 0 not in the
 * table (or the directory cannot be reached), -1 leave it alone (the
 * mountpoint: stat would call into ourselves). */
static int child_node(struct batch *b, const char *name, fuse_ino_t *child)
{
	char full[JF_PATH_MAX + 1];
	struct stat st;
	int fd = dir_fd(b);

	if (fd < 0)
		return 0;
	if (jf_join(full, sizeof(full), b->path, name) < 0)
		return 0;
	if (jf_is_mnt_path(&jf_fs.view, full))
		return -1; /* MOUNTPOINT inside SOURCE */
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	return jf_inode_find(st.st_dev, st.st_ino, child, NULL, 0) == 0 ? 1 : 0;
}

/* First pass over one event: bookkeeping (overflow, dead watches), then the
 * kind of invalidation it asks for, or 0 when none (already handled in this
 * read(), the daemon's own change, a dead watch). */
static enum ev_kind classify_event(struct batch *b, const struct inotify_event *ev)
{
	const char *name = ev->len ? ev->name : "";
	enum ev_kind kind;

	atomic_fetch_add(&W.n_events, 1);
	if (ev->mask & IN_Q_OVERFLOW) {
		b->overflow = true;
		return 0;
	}
	if (ev->mask & IN_IGNORED) {
		rec_dead(ev->wd);
		if (b->wd == ev->wd)
			b->wd = -1;
		return 0;
	}
	if (b->overflow)
		return 0; /* everything is invalidated after this read() */
	if (ev->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))
		kind = K_ENTRY;
	else if (ev->mask & (IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB))
		kind = name[0] ? K_CHILD : K_SELF;
	else
		return 0;
	if ((kind != K_SELF && !name[0]) ||
	    !seen_add(b, jf_recent_key((uint64_t)ev->wd, kind, name)))
		return 0;
	if (!dir_select(b, ev->wd))
		return 0;
	/* A directory's own IN_ATTRIB is reported by its parent's watch too,
	 * with the name (and the daemon's own chmod/utimes filtered): only the
	 * root, which has no parent watch, needs the nameless one. */
	if (kind == K_SELF && (b->dev != jf_fs.root.dev || b->ino != jf_fs.root.ino))
		return 0;
	if (kind != K_SELF && jf_recent_has(b->dev, b->ino, name, b->now)) {
		atomic_fetch_add(&W.n_own, 1);
		return 0;
	}
	return kind;
}

/* @name was moved into the batch's directory on the host: the table's inode
 * for it takes its new place, so cached zones below it follow the name. */
static void note_move(struct batch *b, const char *name)
{
	char full[JF_PATH_MAX + 1];
	struct stat st;
	int fd = dir_fd(b);

	if (fd < 0 || jf_join(full, sizeof(full), b->path, name) < 0 ||
	    jf_is_mnt_path(&jf_fs.view, full))
		return; /* the mountpoint: stat would call into ourselves */
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		jf_inode_moved(st.st_dev, st.st_ino, b->dev, b->ino, name);
}

/* Second pass: send the invalidations @ev asks for. */
static void act_on_event(struct batch *b, const struct inotify_event *ev, enum ev_kind kind)
{
	const char *name = ev->len ? ev->name : "";
	fuse_ino_t child;

	if (!dir_select(b, ev->wd))
		return;
	if (kind != K_SELF && jf_recent_has(b->dev, b->ino, name, b->now)) {
		atomic_fetch_add(&W.n_own, 1);
		return;
	}
	if (dir_node(b) < 0)
		return; /* the kernel does not know the directory: nothing cached */
	if (jf_fs.opts->debug)
		fprintf(stderr, "jailfs: watch: event 0x%x on %s/%s\n", ev->mask,
			b->path_ok ? b->path : "?", name);
	switch (kind) {
	case K_ENTRY:
		if (ev->mask & IN_MOVED_TO)
			note_move(b, name);
		jf_notify_entry(b->nodeid, name);
		if (seen_add(b, jf_recent_key((uint64_t)ev->wd, K_DIRINVAL, "")))
			jf_notify_inode(b->nodeid);
		break;
	case K_CHILD:
		switch (child_node(b, name, &child)) {
		case 1:
			jf_notify_inode(child);
			break;
		case 0:
			jf_notify_entry(b->nodeid, name);
			break;
		default:
			break;
		}
		break;
	case K_SELF:
	case K_DIRINVAL: /* a key of the seen set, never an event's kind */
	default:
		jf_notify_inode(b->nodeid);
		break;
	}
}

/*
 * One read() of events. A handler records its own change just after the
 * system call that queued the event (jf_entry_for_new stats the new name
 * first), so an event read in between would look like a host change: events
 * that pass the first check wait WATCH_GRACE_MS and are checked again.
 */
static void handle_read(struct batch *b, const char *buf, size_t len)
{
	const struct inotify_event *ev;
	size_t n = 0;

	b->overflow = false;
	b->now = jf_recent_now_ms();
	b->wd = -1;
	b->fd = -1;
	for (size_t off = 0; off + sizeof(*ev) <= len && n < EVBUF_MAX_EVENTS;
	     off += sizeof(*ev) + ev->len) {
		ev = (const struct inotify_event *)(buf + off);
		b->cand_kind[n] = classify_event(b, ev);
		if (b->cand_kind[n])
			b->cand[n++] = ev;
	}
	if (n && !b->overflow) {
		sleep_ms(WATCH_GRACE_MS);
		b->now = jf_recent_now_ms();
		b->wd = -1;
		for (size_t i = 0; i < n && !atomic_load(&W.stop); i++)
			act_on_event(b, b->cand[i], b->cand_kind[i]);
	}
	dir_close(b);
	while (b->nused)
		b->seen[b->used[--b->nused]] = 0;
	if (b->overflow && !atomic_load(&W.stop))
		invalidate_all();
}

/* Events are queued: wait a little, then read and handle all of them. A
 * lone host change is acted on within a few ms; a burst (an untar, a git
 * checkout) is read in larger batches, which cuts wake-ups (the thread's
 * main cost) and repeats. */
static void read_events(struct batch *b, char *buf, uint64_t *last_wake)
{
	uint64_t now = jf_recent_now_ms();
	ssize_t len;

	sleep_ms(now - *last_wake < WATCH_BURST_GAP_MS ? WATCH_BURST_MS : WATCH_COALESCE_MS);
	*last_wake = now;
	while (!atomic_load(&W.stop) && (len = read(W.ifd, buf, EVBUF_SIZE)) > 0)
		handle_read(b, buf, (size_t)len);
}

static void *watch_main(void *arg)
{
	struct pollfd pfd[2] = {{.fd = W.ifd, .events = POLLIN}, {.fd = W.efd, .events = POLLIN}};
	struct batch *b = calloc(1, sizeof(*b));
	char *buf = malloc(EVBUF_SIZE); /* malloc: aligned for struct inotify_event */
	uint64_t last_wake = 0, v;

	(void)arg;
	if (!b || !buf) {
		fprintf(stderr, "jailfs: watch thread: out of memory; host changes show in the "
				"view only after the timeouts\n");
		goto out;
	}
	while (!atomic_load(&W.stop)) {
		int n = poll(pfd, 2, WATCH_FLUSH_MS);

		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "jailfs: watch thread: poll: %s\n", strerror(errno));
			break;
		}
		if (n > 0 && (pfd[1].revents & POLLIN) && read(W.efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: another wake-up took it */
		}
		if (atomic_load(&W.stop))
			break;
		flush_pending();
		if (n > 0 && (pfd[0].revents & POLLIN))
			read_events(b, buf, &last_wake);
	}
out:
	free(buf);
	free(b);
	return NULL;
}

/* ---------- start and stop ---------- */

static void watch_free(void)
{
	struct jf_htab_iter it;
	struct jf_hnode *n;

	jf_htab_iter_init(&it, &W.ents);
	while ((n = jf_htab_iter_next(&it))) {
		struct wentry *e = jf_container_of(n, struct wentry, h);

		if (e->rec && --e->rec->users == 0)
			free(e->rec);
		free(e);
	}
	jf_htab_destroy(&W.ents);
	jf_htab_destroy(&W.recs); /* every live rec had a user: freed above */
	free(W.pending);
	W.pending = NULL;
	W.npending = W.cap_pending = 0;
	jf_recent_free();
	if (W.ifd >= 0)
		close(W.ifd); /* removes every watch */
	if (W.efd >= 0)
		close(W.efd);
	W.ifd = W.efd = -1;
}

static void warn_init_failed(int err)
{
	fprintf(stderr,
		"jailfs: cannot watch %s for changes made outside the view: %s%s\n"
		"  they show in the view only after entry_timeout/attr_timeout\n",
		jf_fs.view.source_abs, strerror(err),
		err == EMFILE ? " (fs.inotify.max_user_instances, "
				"/proc/sys/fs/inotify/max_user_instances)"
			      : "");
}

int jf_watch_start(void)
{
	char proc[64];
	sigset_t all, old;
	struct stat st;
	int wd, r;

	atomic_store(&W.stop, false);
	W.ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (W.ifd < 0 || fstat(jf_fs.view.root_fd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	W.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (W.efd < 0) {
		r = -errno;
		goto fail;
	}
	r = jf_recent_init();
	if (r < 0)
		goto fail;
	jf_proc_fd_path(proc, sizeof(proc),
			jf_changes_on() ? jf_changes_lower_fd() : jf_fs.view.root_fd);
	wd = inotify_add_watch(W.ifd, proc, WATCH_MASK);
	if (wd < 0) {
		r = -errno;
		goto fail;
	}
	register_watch((uint64_t)(uintptr_t)&jf_fs.root, wd, &st);
	/* Signals go to the session loop's threads (fuse_set_signal_handlers):
	 * one taken by this thread would not wake the loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&W.thread, NULL, watch_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		goto fail;
	pthread_setname_np(W.thread, "jailfs-watch"); /* visible in top -H, /proc */
	W.thread_running = true;
	return 0;
fail:
	warn_init_failed(-r);
	watch_free();
	return r;
}

void jf_watch_stop(void)
{
	if (W.thread_running) {
		atomic_store(&W.stop, true);
		kick();
		/* No wait in the kernel here: the thread sends nothing itself
		 * (notify.h), and its waits are bounded (poll, sleep). */
		pthread_join(W.thread, NULL);
		W.thread_running = false;
	}
	if (jf_fs.opts->debug && W.ifd >= 0)
		fprintf(stderr,
			"jailfs: watch: %llu events, %llu skipped as our own, %llu overflows, %zu "
			"watches\n",
			(unsigned long long)W.n_events, (unsigned long long)W.n_own,
			(unsigned long long)W.n_overflow, W.recs.count);
	watch_free();
}
