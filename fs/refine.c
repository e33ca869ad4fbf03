/* SPDX-License-Identifier: MIT */
/*
 * What a name alone cannot tell. Two kinds of regular files whose name the
 * policy DENIES are shown after a look at what they hold:
 *  - a file DENIED only by a rule subject to content (jf_rule.content:
 *    *.pem, *.key, *.asc of the secrets profile) whose content is public
 *    (jf_content_public): it gets the zone of the rest of the policy
 *    (jf_classify_public);
 *  - a file tracked by git in SOURCE's own index (tracked.c) whose content
 *    is the blob the index names, so it is in .git/objects already: it is
 *    RESTRICTED (rule "git-index"); so are the directories leading to one.
 * Either way the verdict is marked by_content: its zone is checked again
 * whenever it is read (ops-file.c), since the host may change the file.
 *
 * Files are read through openat2 below the directory fd the caller holds,
 * never following a symlink, and only when they are the object the caller
 * stat'ed (dev, ino, size, mtime, ctime). Judgements are cached by that
 * key (in the view's struct jf_judged): a lookup of an unchanged file
 * does not read it again. Everything comes from the struct jf_view passed
 * in: no global state.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "backing.h"
#include "cleanup.h"
#include "gitindex.h"
#include "hash.h"
#include "notice.h"
#include "policy.h"
#include "refine.h"
#include "tracked.h"
#include "zone-name.h"

/* The largest tracked file whose blob id is computed (bigger: stays hidden). */
#define JF_TRACKED_MAX_SIZE (64ull << 20)
#define CHUNK (64 << 10)

/* What was asked of a file: a content kind, or WHAT_TRACKED + tracked id. */
#define WHAT_TRACKED 0x100u

static bool same_ts(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool same_object(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       same_ts(&a->st_mtim, &b->st_mtim) && same_ts(&a->st_ctim, &b->st_ctim);
}

int jf_judged_init(struct jf_judged *c)
{
	*c = (struct jf_judged){0};
	pthread_mutex_init(&c->lock, NULL);
	/* buckets now, so no insertion fails later */
	return jf_htab_init(&c->tab, JF_JUDGED_MAX / 2);
}

void jf_judged_destroy(struct jf_judged *c)
{
	jf_htab_destroy(&c->tab);
	pthread_mutex_destroy(&c->lock);
}

/* The key of a judgement: the object and the question. */
struct judged_key {
	dev_t dev;
	ino_t ino;
	uint32_t what;
};

static uint64_t judged_hash(const struct judged_key *k)
{
	return jf_hash_dev_ino(k->dev, k->ino) ^ jf_hash_u64(k->what);
}

static bool judged_match(const struct jf_hnode *n, const void *key)
{
	const struct jf_judgement *j = jf_container_of(n, struct jf_judgement, node);
	const struct judged_key *k = key;

	return j->dev == k->dev && j->ino == k->ino && j->what == k->what;
}

/* The judgement of (@st's object, @what) in @c, or NULL. Caller holds
 * c->lock. */
static struct jf_judgement *judged_find(struct jf_judged *c, const struct stat *st, uint32_t what)
{
	const struct judged_key k = {st->st_dev, st->st_ino, what};
	struct jf_hnode *n = jf_htab_find(&c->tab, judged_hash(&k), judged_match, &k);

	return n ? jf_container_of(n, struct jf_judgement, node) : NULL;
}

/* 1 pass, 0 fail, -1 not cached (also without a cache). */
static int cache_get(struct jf_judged *c, const struct stat *st, uint32_t what)
{
	const struct jf_judgement *j;
	int r = -1;

	if (!c)
		return -1;
	pthread_mutex_lock(&c->lock);
	j = judged_find(c, st, what);
	if (j && j->size == st->st_size && same_ts(&j->mtime, &st->st_mtim) &&
	    same_ts(&j->ctime, &st->st_ctim))
		r = j->pass;
	pthread_mutex_unlock(&c->lock);
	return r;
}

/* Remember a judgement; when the pool is full the oldest one is reused. */
static void cache_put(struct jf_judged *c, const struct stat *st, uint32_t what, bool pass)
{
	const struct judged_key k = {st->st_dev, st->st_ino, what};
	struct jf_judgement *j;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	j = judged_find(c, st, what);
	if (!j) {
		if (c->used < JF_JUDGED_MAX) {
			j = &c->pool[c->used++];
		} else {
			j = &c->pool[c->next];
			c->next = (c->next + 1) % JF_JUDGED_MAX;
			jf_htab_remove(&c->tab, &j->node);
		}
		j->dev = st->st_dev;
		j->ino = st->st_ino;
		j->what = what;
		jf_htab_insert(&c->tab, &j->node, judged_hash(&k));
	}
	j->size = st->st_size;
	j->mtime = st->st_mtim;
	j->ctime = st->st_ctim;
	j->pass = pass;
	pthread_mutex_unlock(&c->lock);
}

/* The whole content (st_size bytes, at most @max) of @fd into a malloc'd
 * buffer; NULL when it is larger, changed size, or cannot be read. */
static char *read_all(int fd, const struct stat *st, size_t max)
{
	size_t size = (size_t)st->st_size, got = 0;
	char *buf;

	if ((uint64_t)st->st_size > max)
		return NULL;
	buf = malloc(size + 1);
	while (buf && got <= size) { /* one byte more: a file that grew */
		ssize_t n = pread(fd, buf + got, size + 1 - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (buf && got != size) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

static bool content_pass(int fd, const struct stat *st, enum jf_content kind)
{
	char *buf = read_all(fd, st, JF_CONTENT_MAX_SIZE);
	bool pass = buf && jf_content_public(kind, buf, (size_t)st->st_size);

	free(buf);
	return pass;
}

static bool tracked_pass(int fd, const struct stat *st, const struct jf_tracked *t)
{
	unsigned char oid[JF_GIT_SHA256_SIZE];
	struct jf_git_hash h;
	uint64_t got = 0;
	char *buf;

	if ((uint64_t)st->st_size > JF_TRACKED_MAX_SIZE || (uint32_t)st->st_size != t->size)
		return false;
	buf = malloc(CHUNK);
	if (!buf)
		return false;
	jf_git_blob_start(&h, t->hashsz, (uint64_t)st->st_size);
	for (;;) {
		ssize_t n = pread(fd, buf, CHUNK, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		jf_git_hash_update(&h, buf, (size_t)n);
		got += (uint64_t)n;
	}
	free(buf);
	jf_git_hash_end(&h, oid);
	return got == (uint64_t)st->st_size && memcmp(oid, t->oid, t->hashsz) == 0;
}

/* Open @name below @dirfd for reading when it still is the object of @st. */
static int open_same(int dirfd, const char *name, const struct stat *st)
{
	struct stat now;
	int fd = jf_open_below(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);

	if (fd < 0)
		return fd;
	if (fstat(fd, &now) < 0 || !S_ISREG(now.st_mode) || !same_object(st, &now)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* Does the regular file @name (below @dirfd, @st) pass question @what
 * (content of @kind, or tracked entry @t)? Cached. */
static bool judge(const struct jf_view *view, int dirfd, const char *name, const struct stat *st,
		  uint32_t what, enum jf_content kind, const struct jf_tracked *t)
{
	int r = cache_get(view->judged, st, what), fd;
	bool pass;

	if (r >= 0)
		return r;
	fd = open_same(dirfd, name, st);
	if (fd < 0)
		return false; /* not cached: changed under us, the next look decides */
	pass = t ? tracked_pass(fd, st, t) : content_pass(fd, st, kind);
	close(fd);
	cache_put(view->judged, st, what, pass);
	return pass;
}

bool jf_refine_tracked_ok(const struct jf_view *view, int dirfd, const char *name,
			  const struct stat *st, const struct jf_tracked *t)
{
	return S_ISREG(st->st_mode) && judge(view, dirfd, name, st, WHAT_TRACKED + t->id, 0, t);
}

bool jf_refine_may(const struct jf_view *view, const char *path, size_t len,
		   const struct jf_verdict *v)
{
	return v->zone == JF_DENIED && ((v->rule && v->rule->content != JF_CONTENT_NONE) ||
					jf_tracked_find(view->tracked, path, len));
}

void jf_refine(const struct jf_view *view, int dirfd, const char *name, const char *path,
	       size_t len, const struct stat *st, struct jf_verdict *v)
{
	const struct jf_tracked *t;
	struct jf_verdict pub = {.zone = JF_DENIED};

	if (!jf_refine_may(view, path, len, v))
		return;
	t = jf_tracked_find(view->tracked, path, len);
	if (t && t->dir != S_ISDIR(st->st_mode))
		t = NULL;
	if (t && t->dir) {
		*v = (struct jf_verdict){.zone = JF_RESTRICTED, .rule = &jf_git_index_rule};
		return;
	}
	if (!S_ISREG(st->st_mode))
		return;
	if (v->rule && v->rule->content != JF_CONTENT_NONE)
		jf_classify_public(view->policy, path, len, &pub);
	if (pub.zone != JF_DENIED &&
	    judge(view, dirfd, name, st, v->rule->content, v->rule->content, NULL)) {
		*v = pub;
		v->by_content = true;
	} else if (t && jf_refine_tracked_ok(view, dirfd, name, st, t)) {
		*v = (struct jf_verdict){
			.zone = JF_RESTRICTED, .rule = &jf_git_index_rule, .by_content = true};
	}
}

bool jf_refine_same_either_way(const struct jf_view *view, const char *a, size_t alen,
			       const char *b, size_t blen, const struct stat *st)
{
	struct jf_verdict va, vb, pa = {.zone = JF_DENIED}, pb = {.zone = JF_DENIED};

	if (!S_ISREG(st->st_mode) || st->st_nlink != 1 || jf_is_mnt_path(view, a) ||
	    jf_is_mnt_path(view, b))
		return false;
	jf_classify_path(view, a, alen, false, &va);
	jf_classify_path(view, b, blen, false, &vb);
	if (va.zone != JF_DENIED || vb.zone != JF_DENIED || va.rule != vb.rule ||
	    jf_tracked_find(view->tracked, a, alen) || jf_tracked_find(view->tracked, b, blen))
		return false;
	if (!va.rule || va.rule->content == JF_CONTENT_NONE)
		return true; /* hidden at both: nothing refines it */
	jf_classify_public(view->policy, a, alen, &pa);
	jf_classify_public(view->policy, b, blen, &pb);
	return pa.zone == JF_SAFE && pb.zone == JF_SAFE;
}

/* Is candidate @t still the blob the index names? */
static bool tracked_verified(const struct jf_view *view, const struct jf_tracked *t)
{
	const int rootfd = view->root_fd;
	_cleanup_close_ int fd = jf_open_below(rootfd, t->path, O_PATH, 0);
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 &&
	       jf_refine_tracked_ok(view, rootfd, t->path, &st, t);
}

#define SHOWN_NAMED 5 /* names in the start-up line */

/* Is tracked file @t shown by the git-index rule (not by a public content)? */
static bool shown_as_tracked(const struct jf_view *view, const struct jf_tracked *t)
{
	const int rootfd = view->root_fd;
	_cleanup_close_ int fd = -1;
	struct jf_verdict v;
	struct stat st;

	if (t->dir)
		return false;
	fd = jf_open_below(rootfd, t->path, O_PATH, 0);
	if (fd < 0 || fstat(fd, &st) < 0)
		return false;
	jf_classify_path(view, t->path, t->len, false, &v);
	jf_refine(view, rootfd, t->path, t->path, t->len, &st, &v);
	return v.rule == &jf_git_index_rule;
}

/* The start-up line: how many tracked files are shown read-only although
 * their names are DENIED (not those a public content shows anyway). */
static void report_tracked(const struct jf_view *view, const struct jf_tracked_set *ts,
			   long dropped, enum jf_tell tell)
{
	const char *source = view->source_abs;
	size_t shown = 0, n = jf_tracked_count(ts);
	char names[512] = "", line[1024], more[128] = "";

	for (size_t i = 0; i < n; i++) {
		const struct jf_tracked *t = jf_tracked_at(ts, i);

		if (!shown_as_tracked(view, t))
			continue;
		if (++shown <= SHOWN_NAMED)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 shown > 1 ? ", " : "", t->path);
	}
	if (shown == 0 && dropped == 0)
		return;
	if (dropped > 0)
		snprintf(more, sizeof(more),
			 "; %ld more differ%s from the index or changed after it and stay%s hidden",
			 dropped, dropped == 1 ? "s" : "", dropped == 1 ? "s" : "");
	snprintf(line, sizeof(line),
		 "jailfs: %zu file%s tracked by git shown read-only although the policy hides "
		 "%s name%s (hiding %s would make git record a deletion)%s%s%s%s",
		 shown, shown == 1 ? "" : "s", shown == 1 ? "its" : "their", shown == 1 ? "" : "s",
		 shown == 1 ? "it" : "them", shown ? ": " : "", names,
		 shown > SHOWN_NAMED ? ", ..." : "", more);
	/* checked last: a line not printed is not recorded as said */
	if (tell == JF_TELL_ALWAYS || !jf_notice_said("tracked", source, line))
		fprintf(stderr, "%s\n", line);
}

int jf_refine_load_tracked(const struct jf_view *view, struct jf_tracked_set *ts, enum jf_tell tell)
{
	long dropped;
	int r = jf_tracked_load(view, ts, tracked_verified, &dropped);

	if (r == 0 && tell != JF_TELL_NEVER && (jf_tracked_count(ts) || dropped > 0))
		report_tracked(view, ts, dropped, tell);
	return r;
}
