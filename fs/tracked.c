/* SPDX-License-Identifier: MIT */
/*
 * Files tracked by git whose names the policy DENIES. Hiding a tracked
 * tests/server.pem makes it look deleted to git in the view, and the
 * agent's "git commit -a" records its deletion; its content is in
 * .git/objects anyway, so hiding it protects nothing. At start-up SOURCE's
 * own index (SOURCE/.git/index, .git a directory) is read once, by
 * gitindex.c, never by running git. Every regular file of stage 0 that
 * SOURCE holds and whose path the policy DENIES is a candidate (what the
 * index names but the tree lacks costs one lookup and is not kept, so an
 * index written to be large costs its size, not the 64 times more its
 * version 4 paths expand to); it is kept only when its content
 * now is the blob the index names (so it really is in .git/objects: a
 * tracked .env filled with real values after the commit stays hidden) and
 * it is the very file git stat'ed for the entry (ctime and mtime to the
 * nanosecond, inode number, size, as git records them: no program can set
 * a ctime, and an agent cannot stat a file it cannot see, so an entry it
 * wrote through a view, guessing the content of a hidden .env or of one
 * the host makes later from .env.example, does not show it). Kept
 * files, and the DENIED directories leading to them, are shown RESTRICTED
 * by refine.c, which checks the content again at each look.
 *
 * Not done: when the policy hides .git/objects, nothing is shown (the
 * objects are not readable either). Entries added to the index after
 * start-up are not seen. A malformed index (also one out of git's order),
 * one over JF_INDEX_MAX_SIZE, or one with more than JF_INDEX_MAX_MISSES
 * entries for files SOURCE lacks shows nothing, with one warning. A file
 * whose times or inode changed since git saw it (copied with the whole
 * repository) stays hidden until the host's git writes the index again.
 *
 * The set (struct jf_tracked_set, its owner's: the daemon's view, or
 * check.c's) is built before the daemon serves and read-only afterwards:
 * lookups take no lock. Everything else comes from the struct jf_view
 * passed in: no global state.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backing.h"
#include "cleanup.h"
#include "gitindex.h"
#include "policy.h"
#include "tracked.h"
#include "zone-name.h"

#define JF_INDEX_MAX_SIZE (256u << 20)
/* Entries of files SOURCE lacks, looked for in vain, before the index is
 * taken for a hostile one: each costs a lookup (a negative dentry) at
 * start-up, and git's own work trees hold what their index names but for a
 * few deletions not yet staged (sparse checkouts mark the rest
 * skip-worktree, not looked for). */
#define JF_INDEX_MAX_MISSES 65536
/* Paths up to this many bytes are classified before they are looked up
 * (about 1 us for 256 bytes, a lookup about as much); longer ones after. */
#define JF_INDEX_CLASSIFY_FIRST 256

const struct jf_rule jf_git_index_rule = {
	.source = "git-index", .pattern = "", .zone = JF_RESTRICTED};

static uint32_t hash_path(const char *s, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

const struct jf_tracked *jf_tracked_find(const struct jf_tracked_set *ts, const char *path,
					 size_t len)
{
	if (!ts || !ts->nslots)
		return NULL;
	for (size_t i = hash_path(path, len) & (ts->nslots - 1);; i = (i + 1) & (ts->nslots - 1)) {
		const struct jf_tracked *t;

		if (ts->slots[i] == UINT32_MAX)
			return NULL;
		t = &ts->set[ts->slots[i]];
		if (t->len == len && memcmp(t->path, path, len) == 0)
			return t;
	}
}

/* Append a copy of @t (its path copied) to the set. 0 or -ENOMEM. */
static int set_push(struct jf_tracked_set *ts, const struct jf_tracked *t)
{
	if (ts->nset == ts->capset) {
		size_t cap = ts->capset ? 2 * ts->capset : 64;
		struct jf_tracked *n = realloc(ts->set, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ts->set = n;
		ts->capset = cap;
	}
	ts->set[ts->nset] = *t;
	ts->set[ts->nset].path = strndup(t->path, t->len);
	if (!ts->set[ts->nset].path)
		return -ENOMEM;
	ts->nset++;
	return 0;
}

/* Is @path (@len bytes) a canonical view path jf_classify may judge? */
static bool canonical(const char *path, size_t len)
{
	const char *p = path, *end = path + len;

	if (len == 0 || len > JF_PATH_MAX)
		return false;
	while (p <= end) {
		const char *e = memchr(p, '/', (size_t)(end - p));

		if (!e)
			e = end;
		if (jf_check_name(p, (size_t)(e - p)) != JF_REFUSE_NONE)
			return false;
		p = e + 1;
	}
	return true;
}

/*
 * Which index paths name a regular file the tree holds, found without
 * looking at the paths below a directory the tree lacks. The index is in
 * path order, so the entries below any directory come in one run: the walk
 * keeps an fd of the deepest directory known to exist on the way (the
 * frontier) and the last directory found missing, opens directories one
 * name at a time below the frontier, and looks at a file with one fstatat.
 * So the cost is one lookup an entry plus one open per directory the tree
 * holds (reopened from the root when the run of entries below it ends),
 * never the expanded length of version 4 paths, and what is kept is what
 * the tree holds.
 */
struct walk {
	int rootfd;
	int fd;		      /* the frontier: rootfd, or an O_PATH fd of @dir */
	size_t dlen;	      /* @dir's length, 0 = SOURCE's root */
	size_t mlen;	      /* @miss's length, 0 = none */
	unsigned long misses; /* lookups that found nothing */
	char dir[JF_GIT_MAX_PATH + 1];
	char miss[JF_GIT_MAX_PATH + 1];
};

/* Is @path (@len bytes) below directory @dir (@dlen bytes, 0 = root)? */
static bool below(const char *path, size_t len, const char *dir, size_t dlen)
{
	return dlen == 0 || (len > dlen && path[dlen] == '/' && memcmp(path, dir, dlen) == 0);
}

static void walk_set_fd(struct walk *w, int fd, size_t dlen)
{
	if (w->fd != w->rootfd)
		close(w->fd);
	w->fd = fd;
	w->dlen = dlen;
	w->dir[dlen] = '\0';
}

/* Move the frontier up to the deepest of its ancestors that is also one of
 * directory @path[0..dirlen), reopened from the root. */
static void walk_up(struct walk *w, const char *path, size_t dirlen)
{
	size_t i = 0, k = 0, m = dirlen < w->dlen ? dirlen : w->dlen;
	int fd;

	for (; i < m && w->dir[i] == path[i]; i++)
		if (path[i] == '/')
			k = i;
	if (i == m && i == dirlen && w->dir[i] == '/')
		k = dirlen;
	if (k == 0) {
		walk_set_fd(w, w->rootfd, 0);
		return;
	}
	w->dir[k] = '\0';
	fd = jf_open_below(w->rootfd, w->dir, O_PATH | O_DIRECTORY, 0);
	walk_set_fd(w, fd < 0 ? w->rootfd : fd, fd < 0 ? 0 : k);
}

/* Open the directories of @path[0..dirlen) below the frontier, one name at
 * a time. 0, or -ENOENT after noting the first one missing. */
static int walk_down(struct walk *w, const char *path, size_t dirlen)
{
	while (w->dlen < dirlen) {
		size_t start = w->dlen ? w->dlen + 1 : 0, end = start;
		char name[256];
		int fd = -ENOENT;

		while (end < dirlen && path[end] != '/')
			end++;
		if (jf_check_name(path + start, end - start) == JF_REFUSE_NONE &&
		    end - start < sizeof(name)) {
			memcpy(name, path + start, end - start);
			name[end - start] = '\0';
			fd = jf_open_below(w->fd, name, O_PATH | O_DIRECTORY, 0);
		}
		if (fd < 0) {
			w->misses++;
			memcpy(w->miss, path, end);
			w->mlen = end;
			return -ENOENT;
		}
		memcpy(w->dir + w->dlen, path + w->dlen, end - w->dlen);
		walk_set_fd(w, fd, end);
	}
	return 0;
}

/* Does SOURCE hold a regular file at @path (@len bytes, no symlink on the
 * way)? Its lstat into *@st. */
static bool walk_present(struct walk *w, const char *path, size_t len, struct stat *st)
{
	const char *slash = memrchr(path, '/', len);
	size_t dirlen = slash ? (size_t)(slash - path) : 0;
	const char *name = slash ? slash + 1 : path;

	if (w->mlen && below(path, len, w->miss, w->mlen))
		return false;
	if (!(w->dlen <= dirlen && (w->dlen == dirlen ? memcmp(path, w->dir, dirlen) == 0
						      : below(path, dirlen, w->dir, w->dlen))))
		walk_up(w, path, dirlen);
	if (walk_down(w, path, dirlen) < 0)
		return false;
	if (jf_check_name(name, len - (size_t)(name - path)) != JF_REFUSE_NONE ||
	    fstatat(w->fd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		w->misses++;
		return false;
	}
	return S_ISREG(st->st_mode);
}

struct collect {
	struct walk walk;
	const struct jf_view *view;
	struct jf_tracked_set *ts;
	jf_tracked_verify_fn verify;
	uint32_t candidates; /* ids: unique among all candidates, kept or not */
	long dropped;
};

/* Is @st the file git stat'ed when it wrote entry @e (ctime, mtime, inode,
 * size, as git records them)? */
static bool stat_matches(const struct stat *st, const struct jf_git_entry *e)
{
	return (uint32_t)st->st_ctim.tv_sec == e->ctime_s &&
	       (uint32_t)st->st_ctim.tv_nsec == e->ctime_ns &&
	       (uint32_t)st->st_mtim.tv_sec == e->mtime_s &&
	       (uint32_t)st->st_mtim.tv_nsec == e->mtime_ns && (uint32_t)st->st_ino == e->ino &&
	       (uint32_t)st->st_size == e->size;
}

/* Keep a regular file of stage 0 that SOURCE holds, whose canonical path is
 * DENIED, which is the file git stat'ed for the entry and whose content is
 * the blob the entry names. */
static int collect_entry(const struct jf_git_entry *e, void *arg)
{
	struct collect *c = arg;
	struct jf_verdict v;
	struct stat st;
	struct jf_tracked t = {.path = e->path, .len = (uint32_t)e->len, .size = e->size};

	if (e->stage != 0 || (e->mode & 0170000) != 0100000 || (e->flags & JF_GIT_SKIP_WORKTREE))
		return 0;
	/* the cheaper question first: a short path's verdict costs less than
	 * a lookup, a long one's more */
	if (e->len > JF_INDEX_CLASSIFY_FIRST && !walk_present(&c->walk, e->path, e->len, &st))
		return c->walk.misses > JF_INDEX_MAX_MISSES ? -E2BIG : 0;
	if (!canonical(e->path, e->len))
		return 0;
	jf_classify_path(c->view, e->path, e->len, false, &v);
	if (v.zone != JF_DENIED)
		return 0;
	if (e->len <= JF_INDEX_CLASSIFY_FIRST && !walk_present(&c->walk, e->path, e->len, &st))
		return c->walk.misses > JF_INDEX_MAX_MISSES ? -E2BIG : 0;
	t.id = c->candidates++;
	t.hashsz = e->hashsz;
	memcpy(t.oid, e->oid, e->hashsz);
	/* an entry whose stat data is not the file's is not what git read
	 * from it: maybe a guess, written by an agent that cannot see it */
	if (!stat_matches(&st, e) || !c->verify(c->view, &t)) {
		c->dropped++;
		return 0;
	}
	return set_push(c->ts, &t);
}

/* Read SOURCE's index and keep the verified candidates; *@dropped counts
 * the others. 0 (also when there is no index), or -EINVAL/-EFBIG/-errno
 * after one warning. */
static int read_index(const struct jf_view *view, struct jf_tracked_set *ts,
		      jf_tracked_verify_fn verify, long *dropped)
{
	const int rootfd = view->root_fd;
	_cleanup_close_ int fd = jf_open_below(rootfd, ".git/index", O_RDONLY | O_NONBLOCK, 0);
	_cleanup_free_ unsigned char *buf = NULL;
	_cleanup_free_ struct collect *c = NULL;
	struct jf_git_index info;
	const char *why = NULL;
	struct stat st;
	size_t got = 0;
	int r;

	if (fd == -ENOENT || fd == -ENOTDIR)
		return 0; /* no repository at SOURCE's root */
	if (fd < 0 || fstat(fd, &st) < 0) {
		why = strerror(fd < 0 ? -fd : errno);
		r = -EIO;
	} else if (!S_ISREG(st.st_mode) || st.st_size > JF_INDEX_MAX_SIZE) {
		why = S_ISREG(st.st_mode) ? "larger than 256 MiB" : "not a regular file";
		r = -EFBIG;
	} else if (!(buf = malloc((size_t)st.st_size + 1)) || !(c = calloc(1, sizeof(*c)))) {
		return -ENOMEM;
	} else {
		ssize_t n;

		while (got < (size_t)st.st_size &&
		       (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
			got += (size_t)n;
		*c = (struct collect){.walk = {.rootfd = rootfd, .fd = rootfd},
				      .view = view,
				      .ts = ts,
				      .verify = verify};
		r = jf_git_index_parse(buf, got, collect_entry, c, &info, &why);
		if (r == -E2BIG)
			why = "more than 65536 entries name files SOURCE does not hold";
		walk_set_fd(&c->walk, rootfd, 0);
		*dropped = c->dropped;
	}
	if (r < 0 && why)
		fprintf(stderr,
			"jailfs: warning: %s/.git/index: %s; files tracked by git keep their "
			"hidden names hidden\n",
			view->source_abs, why);
	return r;
}

/* Does the policy let the agent read git's objects? Else showing tracked
 * files would reveal what .git/objects does not. */
static bool objects_readable(const struct jf_view *view)
{
	static const char *const probes[][2] = {
		{".git/objects", "d"},
		{".git/objects/00", "d"},
		{".git/objects/00/00000000000000000000000000000000000000", "f"},
		{".git/objects/pack", "d"},
		{".git/objects/pack/pack-0.pack", "f"},
	};
	struct jf_verdict v;

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		jf_classify_path(view, probes[i][0], strlen(probes[i][0]), probes[i][1][0] == 'd',
				 &v);
		if (v.zone == JF_DENIED)
			return false;
	}
	return true;
}

/* Index set[i] in the hash table (room is reserved by build_set). */
static void slot_add(struct jf_tracked_set *ts, uint32_t i)
{
	size_t h = hash_path(ts->set[i].path, ts->set[i].len) & (ts->nslots - 1);

	while (ts->slots[h] != UINT32_MAX)
		h = (h + 1) & (ts->nslots - 1);
	ts->slots[h] = i;
}

/* Add the DENIED directories above the kept files and hash everything.
 * 0 or -ENOMEM. */
static int build_set(const struct jf_view *view, struct jf_tracked_set *ts)
{
	size_t kept = ts->nset, room = 0;

	for (size_t i = 0; i < kept; i++) /* the file and each directory above it */
		for (size_t d = 0; d <= ts->set[i].len; d++)
			room += d == ts->set[i].len || ts->set[i].path[d] == '/';
	for (ts->nslots = 16; ts->nslots < 2 * room + 2; ts->nslots *= 2)
		;
	ts->slots = malloc(ts->nslots * sizeof(*ts->slots));
	if (!ts->slots)
		return -ENOMEM;
	memset(ts->slots, 0xff, ts->nslots * sizeof(*ts->slots));
	for (size_t i = 0; i < kept; i++)
		slot_add(ts, (uint32_t)i);
	for (size_t i = 0; i < kept; i++) {
		for (size_t d = 0; d < ts->set[i].len; d++) {
			struct jf_tracked dir = {
				.path = ts->set[i].path, .len = (uint32_t)d, .dir = true};
			struct jf_verdict v;

			if (ts->set[i].path[d] != '/' || jf_tracked_find(ts, dir.path, d))
				continue;
			jf_classify_path(view, dir.path, d, true, &v);
			if (v.zone != JF_DENIED)
				continue;
			if (set_push(ts, &dir) < 0)
				return -ENOMEM;
			slot_add(ts, (uint32_t)(ts->nset - 1));
		}
	}
	return 0;
}

int jf_tracked_load(const struct jf_view *view, struct jf_tracked_set *ts,
		    jf_tracked_verify_fn verify, long *ret_dropped)
{
	long dropped = 0;
	int r;

	*ret_dropped = 0;
	if (!objects_readable(view))
		return 0;
	r = read_index(view, ts, verify, &dropped);
	if (r == 0 && ts->nset)
		r = build_set(view, ts);
	if (r < 0) {
		jf_tracked_free(ts); /* fail closed: nothing is shown */
		return r;
	}
	*ret_dropped = dropped;
	return 0;
}

size_t jf_tracked_count(const struct jf_tracked_set *ts)
{
	return ts ? ts->nset : 0;
}

const struct jf_tracked *jf_tracked_at(const struct jf_tracked_set *ts, size_t i)
{
	return ts && i < ts->nset ? &ts->set[i] : NULL;
}

void jf_tracked_free(struct jf_tracked_set *ts)
{
	for (size_t i = 0; i < ts->nset; i++)
		free((char *)ts->set[i].path);
	free(ts->set);
	free(ts->slots);
	*ts = (struct jf_tracked_set){0};
}
