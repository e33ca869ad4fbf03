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
 * how many names were found. Only those files are stored (24 bytes each plus
 * the hash slot), so memory is bounded by the number of multiply-linked
 * files, not by the size of the tree. The index is read-only once the mount
 * serves, so lookups take no lock.
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
#include "fsstate.h"
#include "hardlinks.h"
#include "policy.h"
#include "zone.h"
#include "zones.h"

/* Deeper directories are not entered (an fd per level is open): files
 * below keep the default (RESTRICTED) treatment. */
#define JF_HL_MAX_DEPTH 256

struct hl_entry {
	dev_t dev;
	ino_t ino;
	uint32_t found;	   /* names seen in SOURCE */
	enum jf_zone zone; /* most restrictive of them */
};

static struct hl_entry *hl_table; /* open addressing, ino == 0 is free */
static size_t hl_size, hl_count;
static bool hl_any_denied;
static struct jf_hardlink_stats hl_stats;

/* The background walk: hl_ready is set once, under hl_lock, when it ended. */
static pthread_mutex_t hl_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hl_cond = PTHREAD_COND_INITIALIZER;
static atomic_bool hl_ready, hl_stop;
static bool hl_failed, hl_started;
static pthread_t hl_thread;

static size_t hl_hash(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ULL ^ (uint64_t)dev * 0xC2B2AE3D27D4EB4FULL;

	return (size_t)(h ^ (h >> 31));
}

static struct hl_entry *hl_slot(struct hl_entry *t, size_t size, dev_t dev, ino_t ino)
{
	size_t i = hl_hash(dev, ino) & (size - 1);

	while (t[i].ino && !(t[i].dev == dev && t[i].ino == ino))
		i = (i + 1) & (size - 1);
	return &t[i];
}

static int hl_grow(void)
{
	size_t nsize = hl_size ? hl_size * 2 : 1024;
	struct hl_entry *nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < hl_size; i++)
		if (hl_table[i].ino)
			*hl_slot(nt, nsize, hl_table[i].dev, hl_table[i].ino) = hl_table[i];
	free(hl_table);
	hl_table = nt;
	hl_size = nsize;
	return 0;
}

static int hl_add(const struct stat *st, enum jf_zone zone)
{
	struct hl_entry *e;

	if (st->st_ino == 0)
		return 0; /* cannot be keyed; stays RESTRICTED */
	if ((hl_count + 1) * 2 > hl_size && hl_grow() < 0)
		return -ENOMEM;
	e = hl_slot(hl_table, hl_size, st->st_dev, st->st_ino);
	if (!e->ino) {
		e->dev = st->st_dev;
		e->ino = st->st_ino;
		e->zone = zone;
		hl_count++;
	} else if (zone > e->zone) {
		e->zone = zone;
	}
	e->found++;
	if (zone == JF_DENIED)
		hl_any_denied = true;
	return 0;
}

struct hl_walk {
	char path[JF_PATH_MAX + 1];
	int err;
};

static void walk_dir(struct hl_walk *w, int fd, size_t len, dev_t dev, bool denied, int depth);

/* One directory entry below view path w->path[0..len). */
static void walk_entry(struct hl_walk *w, DIR *dp, struct dirent *de, size_t len, dev_t dev,
		       bool denied, int depth)
{
	size_t n = strlen(de->d_name), nlen = len ? len + 1 + n : n;
	struct jf_verdict v = {.zone = JF_DENIED};
	struct stat st;
	int fd;

	if (de->d_type != DT_REG && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
		return;
	if (nlen > JF_PATH_MAX)
		return;
	if (len)
		w->path[len] = '/';
	memcpy(w->path + (len ? len + 1 : 0), de->d_name, n + 1);
	if (jf_fs.mnt_rel && strcmp(w->path, jf_fs.mnt_rel) == 0)
		goto out; /* MOUNTPOINT: never entered, never stat'ed */
	if (fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		goto out;
	hl_stats.entries++;
	if (!S_ISDIR(st.st_mode) && !(S_ISREG(st.st_mode) && st.st_nlink > 1))
		goto out; /* the common case: nothing to classify */
	if (!denied && jf_check_name(de->d_name, n) == JF_REFUSE_NONE) {
		jf_classify_path(w->path, nlen, S_ISDIR(st.st_mode), &v);
		jf_zone_refine(dirfd(dp), de->d_name, w->path, nlen, &st, &v);
	}
	if (S_ISREG(st.st_mode)) {
		if (hl_add(&st, v.zone) < 0)
			w->err = -ENOMEM;
	} else if (S_ISDIR(st.st_mode) && depth < JF_HL_MAX_DEPTH) {
		if (st.st_dev == jf_fs.root.dev && st.st_ino == jf_fs.root.ino)
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
	hl_stats.dirs++;
	while (!w->err && !atomic_load(&hl_stop) && (de = readdir(dp))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		walk_entry(w, dp, de, len, dev, denied, depth);
	}
	closedir(dp);
}

int jf_hardlinks_index(struct jf_hardlink_stats *stats)
{
	struct hl_walk *w = calloc(1, sizeof(*w));
	struct timespec t0, t1;
	int fd;

	if (!w)
		return -ENOMEM;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = openat(jf_fs.root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		free(w);
		return -errno;
	}
	walk_dir(w, fd, 0, jf_fs.root.dev, false, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	hl_stats.files = hl_count;
	hl_stats.ms =
		(uint64_t)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	hl_stats.bytes = hl_size * sizeof(*hl_table);
	if (stats)
		*stats = hl_stats;
	fd = w->err;
	free(w);
	return fd;
}

static void hl_finish(int r)
{
	pthread_mutex_lock(&hl_lock);
	hl_failed = r < 0 || atomic_load(&hl_stop);
	atomic_store(&hl_ready, true);
	pthread_cond_broadcast(&hl_cond);
	pthread_mutex_unlock(&hl_lock);
}

static void *hl_main(void *arg)
{
	struct jf_hardlink_stats hs;
	int r = jf_hardlinks_index(&hs);

	if (r < 0)
		fprintf(stderr,
			"jailfs: %s: indexing hard links: %s; files with several names "
			"are hidden\n",
			jf_fs.source_abs, strerror(-r));
	else if (jf_fs.debug)
		fprintf(stderr,
			"jailfs: hard-link index: %llu names in %llu directories, %llu files "
			"with several names, %llu bytes, %llu ms\n",
			(unsigned long long)hs.entries, (unsigned long long)hs.dirs,
			(unsigned long long)hs.files, (unsigned long long)hs.bytes,
			(unsigned long long)hs.ms);
	hl_finish(r);
	return NULL;
}

int jf_hardlinks_build(void)
{
	int r = jf_hardlinks_index(NULL);

	hl_finish(r);
	return r;
}

bool jf_hardlinks_empty(void)
{
	return atomic_load(&hl_ready) && !hl_failed && hl_count == 0;
}

void jf_hardlinks_skip(void)
{
	hl_finish(0);
}

int jf_hardlinks_start(void)
{
	int r = pthread_create(&hl_thread, NULL, hl_main, NULL);

	if (r)
		return -r;
	hl_started = true;
	return 0;
}

void jf_hardlinks_wait(void)
{
	if (atomic_load(&hl_ready))
		return;
	pthread_mutex_lock(&hl_lock);
	while (!atomic_load(&hl_ready))
		pthread_cond_wait(&hl_cond, &hl_lock);
	pthread_mutex_unlock(&hl_lock);
}

void jf_hardlinks_stop(void)
{
	if (!hl_started)
		return;
	atomic_store(&hl_stop, true);
	pthread_join(hl_thread, NULL);
	hl_started = false;
}

const struct jf_rule jf_hardlink_outside_rule = {
	.source = "hardlink:outside", .pattern = "", .zone = JF_RESTRICTED};
const struct jf_rule jf_hardlink_denied_rule = {
	.source = "hardlink:denied", .pattern = "", .zone = JF_DENIED};
const struct jf_rule jf_hardlink_policy_rule = {
	.source = "hardlink:policy", .pattern = "", .zone = JF_DENIED};

enum jf_zone jf_hardlink_zone(const struct stat *st, enum jf_zone zone)
{
	const struct hl_entry *e = NULL;

	jf_hardlinks_wait();
	if (hl_failed)
		return JF_DENIED;
	if (hl_size)
		e = hl_slot(hl_table, hl_size, st->st_dev, st->st_ino);
	if (!e || !e->ino)
		return zone == JF_SAFE ? JF_RESTRICTED : zone; /* unknown */
	if (e->zone == JF_DENIED)
		return JF_DENIED;
	if (zone == JF_SAFE && e->zone == JF_SAFE && e->found >= st->st_nlink)
		return JF_SAFE;
	return zone == JF_SAFE ? JF_RESTRICTED : zone;
}

bool jf_hardlink_any_denied(void)
{
	/* Until the walk ended (or when it failed), any file may be one. */
	return !atomic_load(&hl_ready) || hl_failed || hl_any_denied;
}

void jf_hardlinks_free(void)
{
	free(hl_table);
	hl_table = NULL;
	hl_size = hl_count = 0;
	hl_any_denied = false;
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

void jf_effective_zone(const struct stat *st, struct jf_verdict *v, bool safe_links)
{
	if (v->zone == JF_DENIED || !S_ISREG(st->st_mode) || st->st_nlink <= 1)
		return;
	switch (jf_fs.hardlinks) {
	case JF_HARDLINKS_DENY:
		set_effective(v, JF_DENIED, &jf_hardlink_policy_rule);
		return;
	case JF_HARDLINKS_ZONE:
		return;
	case JF_HARDLINKS_RESTRICTED:
	default:
		if (safe_links)
			return;
		/* the start-up index (above) */
		switch (jf_hardlink_zone(st, v->zone)) {
		case JF_DENIED:
			set_effective(v, JF_DENIED,
				      hl_failed ? &jf_hardlink_policy_rule
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
