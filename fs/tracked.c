/* SPDX-License-Identifier: MIT */
/*
 * Files tracked by git whose names the policy DENIES. Hiding a tracked
 * tests/server.pem makes it look deleted to git in the view, and the
 * agent's "git commit -a" records its deletion; its content is in
 * .git/objects anyway, so hiding it protects nothing. At start-up SOURCE's
 * own index (SOURCE/.git/index, .git a directory) is read once, by
 * gitindex.c, never by running git. Every regular file of stage 0 whose
 * path the policy DENIES is a candidate; it is kept only when its content
 * now is the blob the index names (so it really is in .git/objects: a
 * tracked .env filled with real values after the commit stays hidden, and
 * an index written by an agent cannot name a file it has not seen). Kept
 * files, and the DENIED directories leading to them, are shown RESTRICTED
 * by zones.c, which checks the content again at each look.
 *
 * Not done: when the policy hides .git/objects, nothing is shown (the
 * objects are not readable either). Entries added to the index after
 * start-up are not seen. A malformed index, or one over JF_INDEX_MAX_SIZE,
 * shows nothing, with one warning.
 *
 * The set is built before the daemon serves and read-only afterwards:
 * lookups take no lock.
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
#include "zone.h"

#define JF_INDEX_MAX_SIZE (256u << 20)

const struct jf_rule jf_git_index_rule = {
	.source = "git-index", .pattern = "", .zone = JF_RESTRICTED};

static struct jf_tracked *set; /* files, then directories */
static size_t nset, capset;
static uint32_t *slots; /* open addressing into set, UINT32_MAX free */
static size_t nslots;

static uint32_t hash_path(const char *s, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

const struct jf_tracked *jf_tracked_find(const char *path, size_t len)
{
	if (!nslots)
		return NULL;
	for (size_t i = hash_path(path, len) & (nslots - 1);; i = (i + 1) & (nslots - 1)) {
		const struct jf_tracked *t;

		if (slots[i] == UINT32_MAX)
			return NULL;
		t = &set[slots[i]];
		if (t->len == len && memcmp(t->path, path, len) == 0)
			return t;
	}
}

/* Append a copy of @t (its path copied) to the set. 0 or -ENOMEM. */
static int set_push(const struct jf_tracked *t)
{
	if (nset == capset) {
		size_t cap = capset ? 2 * capset : 64;
		struct jf_tracked *n = realloc(set, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		set = n;
		capset = cap;
	}
	set[nset] = *t;
	set[nset].path = strndup(t->path, t->len);
	if (!set[nset].path)
		return -ENOMEM;
	nset++;
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

/* A candidate: a regular file of stage 0 whose canonical path is DENIED. */
static int collect_entry(const struct jf_git_entry *e, void *arg)
{
	struct jf_verdict v;
	struct jf_tracked t = {.path = e->path, .len = (uint32_t)e->len, .size = e->size};

	if (e->stage != 0 || (e->mode & 0170000) != 0100000 || !canonical(e->path, e->len))
		return 0;
	jf_classify_path(e->path, e->len, false, &v);
	if (v.zone != JF_DENIED)
		return 0;
	t.id = (uint32_t)nset;
	t.hashsz = e->hashsz;
	memcpy(t.oid, e->oid, e->hashsz);
	return set_push(&t);
}

/* Read SOURCE's index into the candidate list. 0 (also when there is no
 * index), or -EINVAL/-EFBIG/-errno after one warning. */
static int read_index(int rootfd, const char *source)
{
	_cleanup_close_ int fd = jf_open_below(rootfd, ".git/index", O_RDONLY | O_NONBLOCK, 0);
	_cleanup_free_ unsigned char *buf = NULL;
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
	} else if (!(buf = malloc((size_t)st.st_size + 1))) {
		return -ENOMEM;
	} else {
		ssize_t n;

		while (got < (size_t)st.st_size &&
		       (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
			got += (size_t)n;
		r = jf_git_index_parse(buf, got, collect_entry, NULL, &info, &why);
	}
	if (r < 0 && why)
		fprintf(stderr,
			"jailfs: warning: %s/.git/index: %s; files tracked by git keep their "
			"hidden "
			"names hidden\n",
			source, why);
	return r;
}

/* Does the policy let the agent read git's objects? Else showing tracked
 * files would reveal what .git/objects does not. */
static bool objects_readable(void)
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
		jf_classify_path(probes[i][0], strlen(probes[i][0]), probes[i][1][0] == 'd', &v);
		if (v.zone == JF_DENIED)
			return false;
	}
	return true;
}

/* Index set[i] in the hash table (room is reserved by build_set). */
static void slot_add(uint32_t i)
{
	size_t h = hash_path(set[i].path, set[i].len) & (nslots - 1);

	while (slots[h] != UINT32_MAX)
		h = (h + 1) & (nslots - 1);
	slots[h] = i;
}

/* Keep the verified candidates, add the DENIED directories above them and
 * hash everything. Returns how many candidates were dropped, or -ENOMEM. */
static long build_set(int rootfd, jf_tracked_verify_fn verify)
{
	size_t n = nset, kept = 0, room = 0;

	for (size_t i = 0; i < n; i++) {
		if (verify(rootfd, &set[i]))
			set[kept++] = set[i];
		else
			free((char *)set[i].path);
	}
	nset = kept;
	for (size_t i = 0; i < kept; i++) /* the file and each directory above it */
		for (size_t d = 0; d <= set[i].len; d++)
			room += d == set[i].len || set[i].path[d] == '/';
	for (nslots = 16; nslots < 2 * room + 2; nslots *= 2)
		;
	slots = malloc(nslots * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	memset(slots, 0xff, nslots * sizeof(*slots));
	for (size_t i = 0; i < kept; i++)
		slot_add((uint32_t)i);
	for (size_t i = 0; i < kept; i++) {
		for (size_t d = 0; d < set[i].len; d++) {
			struct jf_tracked dir = {
				.path = set[i].path, .len = (uint32_t)d, .dir = true};
			struct jf_verdict v;

			if (set[i].path[d] != '/' || jf_tracked_find(dir.path, d))
				continue;
			jf_classify_path(dir.path, d, true, &v);
			if (v.zone != JF_DENIED)
				continue;
			if (set_push(&dir) < 0)
				return -ENOMEM;
			slot_add((uint32_t)(nset - 1));
		}
	}
	return (long)(n - kept);
}

int jf_tracked_load(int rootfd, const char *source, jf_tracked_verify_fn verify, long *ret_dropped)
{
	long dropped = 0;
	int r;

	*ret_dropped = 0;
	if (!objects_readable())
		return 0;
	r = read_index(rootfd, source);
	if (r == 0 && nset)
		r = (int)(dropped = build_set(rootfd, verify));
	if (r < 0) {
		jf_tracked_free(); /* fail closed: nothing is shown */
		return r;
	}
	*ret_dropped = dropped;
	return 0;
}

size_t jf_tracked_count(void)
{
	return nset;
}

const struct jf_tracked *jf_tracked_at(size_t i)
{
	return i < nset ? &set[i] : NULL;
}

void jf_tracked_free(void)
{
	for (size_t i = 0; i < nset; i++)
		free((char *)set[i].path);
	free(set);
	free(slots);
	set = NULL;
	slots = NULL;
	nset = capset = nslots = 0;
}
