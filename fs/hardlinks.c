/* SPDX-License-Identifier: MIT */
/*
 * The hard-link index (docs/threat-model.md, invariant 6: "no second name for a
 * protected file"; a file with several names is treated by its most
 * restrictive known name, or refused).
 *
 * At start-up, before the mount is made, SOURCE is walked once: directories
 * are opened with openat(O_NOFOLLOW | O_DIRECTORY) relative to the directory
 * above, symlinks are never followed, pseudo filesystems and MOUNTPOINT are
 * not entered. Every regular file with st_nlink > 1 is recorded as
 * (st_dev, st_ino) -> the most restrictive zone among the names found and
 * how many names were found. Only those files are stored (an entry of the
 * base hash table each), so memory is bounded by the number of
 * multiply-linked files, not by the size of the tree. The index is
 * read-only once the mount serves, so lookups take no lock. The index is a
 * struct jf_links its owner makes (mount.c, check.c, a test) and the view
 * points to; everything else comes from the struct jf_view passed in.
 *
 * The walk runs in a thread of its own while the mount already serves
 * (jf_hardlinks_start), so a mount of a large tree is usable at once: until
 * it ends, the lookup of a file with st_nlink > 1 waits for it
 * (jf_hardlink_zone), readdir stats every regular file (as when a DENIED
 * name is known), and rename and link wait (jf_hardlinks_wait), because a
 * name moved from a walked directory to one not yet walked would be counted
 * twice and could make "all names found" true for a file whose other name
 * is outside SOURCE. Files with one name never wait. A walk that fails
 * (ENOMEM) hides every file with several names, as hardlinks = deny does.
 *
 * Serving a file with st_nlink > 1 (policy hardlinks = restricted, the
 * default): a known DENIED name hides it; all st_nlink names found and all
 * SAFE keeps it SAFE (pnpm's store inside the project, git's local clones);
 * anything else (a name outside SOURCE, a directory we could not read, a
 * link made after the walk) is RESTRICTED by rule hardlink:outside.
 *
 * hardlink:outside protects the content, which the other name shares, not
 * the name, which is SAFE by the policy: the name may be removed, renamed
 * or replaced by a rename (jf_hardlink_name_only), since that changes
 * nothing the other names show. git gc deletes and replaces the packs a
 * git clone --local linked to its origin's; cp then mv changes such a file.
 * Its content, mode, owner and times (which every name shares) stay
 * read-only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backing.h"
#include "hardlinks.h"
#include "hash.h"
#include "policy.h"
#include "refine.h"
#include "zone-name.h"

/* Deeper directories are not entered (an fd per level is open): files
 * below keep the default (RESTRICTED) treatment. */
#define JF_HL_MAX_DEPTH 256

struct hl_entry {
	struct jf_hnode node; /* in jf_links.tab, by (dev, ino) */
	dev_t dev;
	ino_t ino;
	uint32_t found;	   /* names seen in SOURCE */
	enum jf_zone zone; /* most restrictive of them */
};

struct jf_links {
	struct jf_htab tab; /* of struct hl_entry; read-only once ready */
	bool any_denied;
	struct jf_hardlink_stats stats;
	/* The background walk: ready is set once, under lock, when it ended. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_bool ready, stop;
	bool failed, started;
	pthread_t thread;
	const struct jf_view *view; /* of the background walk */
	bool verbose;
	/* Devices that stand for the one the index was built on
	 * (jf_hardlinks_alias_dev()): written before @n_alias counts them. */
	dev_t alias[JF_HL_MAX_ALIASES];
	_Atomic unsigned n_alias;
	dev_t alias_of; /* [const] once the first alias is added */
};

struct jf_links *jf_hardlinks_new(void)
{
	struct jf_links *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	atomic_init(&l->ready, false);
	atomic_init(&l->stop, false);
	return l;
}

static bool hl_match(const struct jf_hnode *n, const void *key)
{
	const struct hl_entry *e = jf_container_of(n, struct hl_entry, node);
	const struct stat *st = key;

	return e->dev == st->st_dev && e->ino == st->st_ino;
}

/* @dev, or the device it stands for. */
static dev_t hl_dev(const struct jf_links *l, dev_t dev)
{
	unsigned n = atomic_load(&l->n_alias);

	for (unsigned i = 0; i < n; i++)
		if (l->alias[i] == dev)
			return l->alias_of;
	return dev;
}

static struct hl_entry *hl_find(const struct jf_links *l, const struct stat *st)
{
	struct stat key = {.st_dev = hl_dev(l, st->st_dev), .st_ino = st->st_ino};
	struct jf_hnode *n =
		jf_htab_find(&l->tab, jf_hash_dev_ino(key.st_dev, key.st_ino), hl_match, &key);

	return n ? jf_container_of(n, struct hl_entry, node) : NULL;
}

int jf_hardlinks_alias_dev(struct jf_links *l, dev_t dev, dev_t of)
{
	unsigned n = atomic_load(&l->n_alias);

	if (n && hl_dev(l, of) != l->alias_of)
		return -EINVAL;
	if (n == JF_HL_MAX_ALIASES)
		return -ENOSPC;
	if (!n)
		l->alias_of = of;
	l->alias[n] = dev;
	atomic_store(&l->n_alias, n + 1);
	return 0;
}

static int hl_add(struct jf_links *l, const struct stat *st, enum jf_zone zone)
{
	struct hl_entry *e;

	if (st->st_ino == 0)
		return 0; /* cannot be keyed; stays RESTRICTED */
	e = hl_find(l, st);
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->dev = st->st_dev;
		e->ino = st->st_ino;
		e->zone = zone;
		if (jf_htab_insert(&l->tab, &e->node, jf_hash_dev_ino(e->dev, e->ino)) < 0) {
			free(e);
			return -ENOMEM;
		}
	} else if (zone > e->zone) {
		e->zone = zone;
	}
	e->found++;
	if (zone == JF_DENIED)
		l->any_denied = true;
	return 0;
}

struct hl_walk {
	struct jf_links *links;
	const struct jf_view *view;
	char path[JF_PATH_MAX + 1];
	int err;
};

static void walk_dir(struct hl_walk *w, int fd, size_t len, dev_t dev, bool denied, int depth);

/* The verdict of the object @st at w->path (@nlen bytes), entry @name of
 * directory @dfd, into @v; DENIED below a DENIED directory. */
static void walk_verdict(struct hl_walk *w, int dfd, const char *name, size_t nlen,
			 const struct stat *st, bool denied, struct jf_verdict *v)
{
	*v = (struct jf_verdict){.zone = JF_DENIED};
	if (denied || jf_check_name(name, strlen(name)) != JF_REFUSE_NONE)
		return;
	jf_classify_path(w->view, w->path, nlen, S_ISDIR(st->st_mode), v);
	jf_refine(w->view, dfd, name, w->path, nlen, st, v);
}

/* One directory entry below view path w->path[0..len). */
static void walk_entry(struct hl_walk *w, DIR *dp, struct dirent *de, size_t len, dev_t dev,
		       bool denied, int depth)
{
	size_t n = strlen(de->d_name), nlen = len ? len + 1 + n : n;
	struct jf_verdict v;
	struct stat st;
	int fd;

	if (de->d_type != DT_REG && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
		return;
	if (nlen > JF_PATH_MAX)
		return;
	if (len)
		w->path[len] = '/';
	memcpy(w->path + (len ? len + 1 : 0), de->d_name, n + 1);
	if (jf_is_mnt_path(w->view, w->path))
		goto out; /* MOUNTPOINT: never entered, never stat'ed */
	if (fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		goto out;
	w->links->stats.entries++;
	if (!S_ISDIR(st.st_mode) && !(S_ISREG(st.st_mode) && st.st_nlink > 1))
		goto out; /* the common case: nothing to classify */
	walk_verdict(w, dirfd(dp), de->d_name, nlen, &st, denied, &v);
	if (S_ISREG(st.st_mode)) {
		if (hl_add(w->links, &st, v.zone) < 0)
			w->err = -ENOMEM;
	} else if (S_ISDIR(st.st_mode) && depth < JF_HL_MAX_DEPTH) {
		if (st.st_dev == w->view->root_dev && st.st_ino == w->view->root_ino)
			goto out; /* SOURCE bind-mounted below itself */
		fd = openat(dirfd(dp), de->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			goto out;
		if (st.st_dev != dev && jf_is_pseudo_fs(fd)) {
			close(fd);
			goto out;
		}
		walk_dir(w, fd, nlen, st.st_dev, v.zone == JF_DENIED, depth + 1);
	}
out:
	w->path[len] = '\0';
}

/* Walk the directory @fd (consumed) at view path w->path[0..len). */
static void walk_dir(struct hl_walk *w, int fd, size_t len, dev_t dev, bool denied, int depth)
{
	DIR *dp = fdopendir(fd);
	struct dirent *de;

	if (!dp) {
		close(fd);
		return;
	}
	w->links->stats.dirs++;
	while (!w->err && !atomic_load(&w->links->stop) && (de = readdir(dp))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		walk_entry(w, dp, de, len, dev, denied, depth);
	}
	closedir(dp);
}

int jf_hardlinks_index(struct jf_links *l, const struct jf_view *view,
		       struct jf_hardlink_stats *stats)
{
	struct hl_walk *w = calloc(1, sizeof(*w));
	struct timespec t0, t1;
	int fd;

	if (!w)
		return -ENOMEM;
	w->links = l;
	w->view = view;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = openat(view->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		free(w);
		return -errno;
	}
	walk_dir(w, fd, 0, view->root_dev, false, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	l->stats.files = l->tab.count;
	l->stats.ms =
		(uint64_t)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	l->stats.bytes = l->tab.count * sizeof(struct hl_entry) + l->tab.size * sizeof(void *);
	if (stats)
		*stats = l->stats;
	fd = w->err;
	free(w);
	return fd;
}

static void hl_finish(struct jf_links *l, int r)
{
	pthread_mutex_lock(&l->lock);
	l->failed = r < 0 || atomic_load(&l->stop);
	atomic_store(&l->ready, true);
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
}

static void *hl_main(void *arg)
{
	struct jf_links *l = arg;
	struct jf_hardlink_stats hs;
	int r = jf_hardlinks_index(l, l->view, &hs);

	if (r < 0)
		fprintf(stderr,
			"jailfs: %s: indexing hard links: %s; files with several names "
			"are hidden\n",
			l->view->source_abs, strerror(-r));
	else if (l->verbose)
		fprintf(stderr,
			"jailfs: hard-link index: %llu names in %llu directories, %llu files "
			"with several names, %llu bytes, %llu ms\n",
			(unsigned long long)hs.entries, (unsigned long long)hs.dirs,
			(unsigned long long)hs.files, (unsigned long long)hs.bytes,
			(unsigned long long)hs.ms);
	hl_finish(l, r);
	return NULL;
}

int jf_hardlinks_build(struct jf_links *l, const struct jf_view *view)
{
	int r = jf_hardlinks_index(l, view, NULL);

	hl_finish(l, r);
	return r;
}

bool jf_hardlinks_empty(const struct jf_links *l)
{
	return atomic_load(&l->ready) && !l->failed && l->tab.count == 0;
}

void jf_hardlinks_skip(struct jf_links *l)
{
	hl_finish(l, 0);
}

int jf_hardlinks_start(struct jf_links *l, const struct jf_view *view, bool verbose)
{
	int r;

	l->view = view;
	l->verbose = verbose;
	r = pthread_create(&l->thread, NULL, hl_main, l);
	if (r)
		return -r;
	l->started = true;
	return 0;
}

void jf_hardlinks_wait(struct jf_links *l)
{
	if (atomic_load(&l->ready))
		return;
	pthread_mutex_lock(&l->lock);
	while (!atomic_load(&l->ready))
		pthread_cond_wait(&l->cond, &l->lock);
	pthread_mutex_unlock(&l->lock);
}

void jf_hardlinks_stop(struct jf_links *l)
{
	if (!l || !l->started)
		return;
	atomic_store(&l->stop, true);
	pthread_join(l->thread, NULL);
	l->started = false;
}

const struct jf_rule jf_hardlink_outside_rule = {
	.source = "hardlink:outside", .pattern = "", .zone = JF_RESTRICTED};
const struct jf_rule jf_hardlink_denied_rule = {
	.source = "hardlink:denied", .pattern = "", .zone = JF_DENIED};
const struct jf_rule jf_hardlink_policy_rule = {
	.source = "hardlink:policy", .pattern = "", .zone = JF_DENIED};

enum jf_zone jf_hardlink_zone(struct jf_links *l, const struct stat *st, enum jf_zone zone)
{
	const struct hl_entry *e;

	jf_hardlinks_wait(l);
	if (l->failed)
		return JF_DENIED;
	e = hl_find(l, st);
	if (!e)
		return zone == JF_SAFE ? JF_RESTRICTED : zone; /* unknown */
	if (e->zone == JF_DENIED)
		return JF_DENIED;
	if (zone == JF_SAFE && e->zone == JF_SAFE && e->found >= st->st_nlink)
		return JF_SAFE;
	return zone == JF_SAFE ? JF_RESTRICTED : zone;
}

bool jf_hardlink_any_denied(const struct jf_links *l)
{
	/* Until the walk ended (or when it failed), any file may be one. */
	return l && (!atomic_load(&l->ready) || l->failed || l->any_denied);
}

void jf_hardlinks_free(struct jf_links *l)
{
	struct jf_htab_iter it;
	struct jf_hnode *n;

	if (!l)
		return;
	jf_hardlinks_stop(l);
	jf_htab_iter_init(&it, &l->tab);
	while ((n = jf_htab_iter_next(&it)))
		free(jf_container_of(n, struct hl_entry, node));
	jf_htab_destroy(&l->tab);
	pthread_cond_destroy(&l->cond);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

/* The zone @zone of @v's name becomes @eff, and the rule names why. */
static void set_effective(struct jf_verdict *v, enum jf_zone eff, const struct jf_rule *why)
{
	if (eff == v->zone)
		return;
	v->zone = eff;
	v->rule = why;
	v->by_content = false;
}

void jf_effective_zone(const struct jf_view *view, const struct stat *st, struct jf_verdict *v,
		       bool safe_links)
{
	if (v->zone == JF_DENIED || !S_ISREG(st->st_mode) || st->st_nlink <= 1)
		return;
	switch (view->hardlinks) {
	case JF_HARDLINKS_DENY:
		set_effective(v, JF_DENIED, &jf_hardlink_policy_rule);
		return;
	case JF_HARDLINKS_ZONE:
		return;
	case JF_HARDLINKS_RESTRICTED:
	default:
		if (safe_links || !view->links)
			return;
		/* the start-up index (above) */
		switch (jf_hardlink_zone(view->links, st, v->zone)) {
		case JF_DENIED:
			set_effective(v, JF_DENIED,
				      view->links->failed ? &jf_hardlink_policy_rule
							  : &jf_hardlink_denied_rule);
			return;
		case JF_RESTRICTED:
			set_effective(v, JF_RESTRICTED, &jf_hardlink_outside_rule);
			return;
		case JF_SAFE:
		default:
			return;
		}
	}
}

bool jf_hardlink_name_only(const struct jf_verdict *v)
{
	return v->zone == JF_RESTRICTED && v->rule == &jf_hardlink_outside_rule;
}
