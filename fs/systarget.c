/* SPDX-License-Identifier: MIT */
/*
 * Where an absolute symlink target below a system directory leads on the
 * host (docs/threat-model.md, "Symlink targets"). The view shows such a
 * target as it is; the kernel of whoever follows it resolves it in their
 * namespace. In a jail that is the host's /usr, read-only; on the host it
 * is the host's /usr, whose own links lead into /etc
 * (/usr/lib/ssl/private -> /etc/ssl/private), and a host program following
 * links through the view (tar -h) would read what they lead to. So a
 * target is shown only when its host resolution stays in the system
 * directories at every step and ends at a regular file: a directory would
 * hand a recursive follower the links inside it
 * (/usr/lib/jvm/java-17-openjdk-amd64/conf/logging.properties ->
 * /etc/java-17-openjdk/logging.properties).
 *
 * The walk is the kernel's, done by hand from an fd on "/": one openat
 * (O_PATH | O_NOFOLLOW) per component, readlinkat on each link met, its
 * text spliced in front of what is left, at most JF_SYSTARGET_MAX_HOPS
 * links. The path reached so far is kept as text, the physical path (every
 * link in it expanded), so ".." on it is the directory's real parent; the
 * text is what is checked against the system directories before anything
 * under it is opened: nothing outside them is ever opened,
 * and a walk that passes through /etc is refused even when it comes back
 * (/usr/bin/java -> /etc/alternatives/java -> /usr/lib/jvm/...): where it
 * leads would be decided by the host's configuration.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "policy.h"
#include "sysdirs.h"
#include "systarget.h"

struct walk {
	int root, fd;		    /* fd is root or an fd of the walk's own */
	char done[JF_PATH_MAX + 1]; /* the physical path reached, "" for "/" */
	size_t dlen;
	char todo[JF_PATH_MAX + 1]; /* what is left to resolve */
	struct stat st;		    /* of the last component opened */
	unsigned hops;
};

static void walk_move(struct walk *w, int fd)
{
	if (w->fd != w->root)
		close(w->fd);
	w->fd = fd;
}

/* Put @text (@n bytes: a link's, or a path to walk again) in front of
 * w->todo[@rest...], from "/" when absolute; 0 or -ENAMETOOLONG. */
static int walk_splice(struct walk *w, const char *text, size_t n, size_t rest)
{
	size_t left = strlen(w->todo + rest);

	if (n + 1 + left >= sizeof(w->todo))
		return -ENAMETOOLONG;
	memmove(w->todo + n + 1, w->todo + rest, left + 1);
	memcpy(w->todo, text, n);
	w->todo[n] = '/';
	if (text[0] == '/') {
		walk_move(w, w->root);
		w->dlen = 0;
		w->done[0] = '\0';
	}
	return 0;
}

/* One component @name (@n bytes) of the walk, w->todo[@rest...] after it:
 * 0 when it was followed, 1 when what to walk next was spliced into
 * w->todo (a link's text, a parent's path), or a negative errno. */
static int walk_step(struct walk *w, const char *name, size_t n, size_t rest)
{
	char text[JF_PATH_MAX + 1];
	size_t dlen = w->dlen;
	ssize_t tn;
	int fd, r;

	if (n == 2 && name[0] == '.' && name[1] == '.') {
		/* The parent's path is walked again from "/": its text, not
		 * an fd's "..", is what was checked, and a directory moved
		 * meanwhile is walked where it is now. Never above @root. */
		while (dlen > 0 && w->done[dlen] != '/')
			dlen--;
		w->done[dlen] = '\0';
		memcpy(text, w->done, dlen + 1);
		if (!dlen) {
			walk_move(w, w->root);
			w->dlen = 0;
			return 0;
		}
		r = walk_splice(w, text, dlen, rest);
		return r < 0 ? r : 1;
	}
	if (dlen + 1 + n >= sizeof(w->done))
		return -ENAMETOOLONG;
	w->done[dlen] = '/';
	memcpy(w->done + dlen + 1, name, n);
	w->done[dlen + 1 + n] = '\0';
	if (!jf_is_system_path(w->done) && !jf_is_system_dir(w->done))
		return -EACCES;
	fd = openat(w->fd, w->done + dlen + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &w->st) < 0) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	if (!S_ISLNK(w->st.st_mode)) {
		w->dlen = dlen + 1 + n;
		walk_move(w, fd);
		return 0;
	}
	w->done[dlen] = '\0';
	tn = readlinkat(fd, "", text, sizeof(text));
	close(fd);
	if (tn < 0)
		return -errno;
	if (tn == 0 || (size_t)tn >= sizeof(text))
		return -ENAMETOOLONG;
	if (++w->hops > JF_SYSTARGET_MAX_HOPS)
		return -ELOOP;
	r = walk_splice(w, text, (size_t)tn, rest);
	return r < 0 ? r : 1;
}

static int walk_all(struct walk *w)
{
	size_t p = 0;

	while (w->todo[p]) {
		size_t n = strcspn(w->todo + p, "/"), rest = p + n + (w->todo[p + n] == '/');
		char name[NAME_MAX + 1];
		int r;

		if (n == 0 || (n == 1 && w->todo[p] == '.')) {
			p = rest;
			continue;
		}
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, w->todo + p, n);
		name[n] = '\0';
		/* A step from a non-directory fails in openat (ENOTDIR). */
		r = walk_step(w, name, n, rest);
		if (r < 0)
			return r;
		/* 1: w->todo starts anew; else go on after @name. */
		p = r == 1 ? 0 : rest;
	}
	return 0;
}

int jf_systarget_resolve(int root_fd, const char *target)
{
	_cleanup_free_ struct walk *w = calloc(1, sizeof(*w));
	size_t n = strlen(target);
	int r;

	if (!w)
		return -ENOMEM;
	if (target[0] != '/' || n >= sizeof(w->todo))
		return -EACCES;
	w->root = w->fd = root_fd;
	memcpy(w->todo, target, n + 1);
	r = walk_all(w);
	if (r == 0 && (!w->dlen || !S_ISREG(w->st.st_mode)))
		r = -EACCES;
	walk_move(w, root_fd);
	return r;
}

/* ---------- the daemon's cache ---------- */

#define CACHE_SLOTS 64

static struct {
	pthread_mutex_t lock;
	struct {
		char *text;
		int verdict;
		uint64_t at_ms;
	} slot[CACHE_SLOTS];
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static size_t slot_of(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % CACHE_SLOTS;
}

int jf_systarget_check(int root_fd, const char *target)
{
	size_t i = slot_of(target);
	uint64_t now = now_ms();
	char *copy;
	int r = 1;

	pthread_mutex_lock(&cache.lock);
	if (cache.slot[i].text && strcmp(cache.slot[i].text, target) == 0 &&
	    now - cache.slot[i].at_ms < JF_SYSTARGET_TTL_MS)
		r = cache.slot[i].verdict;
	pthread_mutex_unlock(&cache.lock);
	if (r <= 0)
		return r;
	r = jf_systarget_resolve(root_fd, target);
	copy = strdup(target);
	if (!copy)
		return r; /* not cached: judged again next time */
	pthread_mutex_lock(&cache.lock);
	free(cache.slot[i].text);
	cache.slot[i].text = copy;
	cache.slot[i].verdict = r;
	cache.slot[i].at_ms = now;
	pthread_mutex_unlock(&cache.lock);
	return r;
}
