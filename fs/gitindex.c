/* SPDX-License-Identifier: MIT */
/*
 * git's index file, read-only (gitformat-index(5)):
 *
 *   header   "DIRC", version (2, 3, 4), entry count: three 32-bit big-endian
 *   entries  ctime s/ns, mtime s/ns, dev, ino, mode, uid, gid, size (ten
 *            32-bit fields), the object id (20 or 32 bytes), 16-bit flags
 *            (assume-valid, extended, 2-bit stage, 12-bit name length), in
 *            version 3+ 16-bit extended flags when "extended" is set, then
 *            the path: versions 2 and 3 NUL-terminated and NUL-padded to a
 *            multiple of 8 bytes; version 4 a varint N (remove N bytes from
 *            the end of the previous path) and a NUL-terminated suffix
 *   extensions  4-byte signature, 32-bit size, data; until the trailer
 *   trailer  the hash of everything before it (zero with index.skipHash)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "gitindex.h"

#define HEADER 12
#define STAT_FIELDS 40 /* ten 32-bit fields before the object id */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

void jf_git_hash_start(struct jf_git_hash *h, size_t hashsz)
{
	h->hashsz = hashsz;
	if (hashsz == JF_GIT_SHA256_SIZE)
		sha256_init(&h->u.sha256);
	else
		sha1_init(&h->u.sha1);
}

void jf_git_hash_update(struct jf_git_hash *h, const void *p, size_t n)
{
	if (h->hashsz == JF_GIT_SHA256_SIZE)
		sha256_update(&h->u.sha256, n, p);
	else
		sha1_update(&h->u.sha1, n, p);
}

void jf_git_hash_end(struct jf_git_hash *h, unsigned char *out)
{
	if (h->hashsz == JF_GIT_SHA256_SIZE)
		sha256_digest(&h->u.sha256, JF_GIT_SHA256_SIZE, out);
	else
		sha1_digest(&h->u.sha1, JF_GIT_SHA1_SIZE, out);
}

void jf_git_blob_start(struct jf_git_hash *h, size_t hashsz, uint64_t size)
{
	char hdr[32];
	int n = snprintf(hdr, sizeof(hdr), "blob %llu", (unsigned long long)size);

	jf_git_hash_start(h, hashsz);
	jf_git_hash_update(h, hdr, (size_t)n + 1); /* with its NUL */
}

static bool checksum_ok(const unsigned char *buf, size_t len, size_t hashsz)
{
	unsigned char sum[JF_GIT_SHA256_SIZE];
	struct jf_git_hash h;

	if (len < HEADER + hashsz)
		return false;
	jf_git_hash_start(&h, hashsz);
	jf_git_hash_update(&h, buf, len - hashsz);
	jf_git_hash_end(&h, sum);
	return memcmp(sum, buf + len - hashsz, hashsz) == 0;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* git's varint (varint.c): 7 bits a byte, each continuation adds one. */
static int varint(const unsigned char **p, const unsigned char *end, size_t *out)
{
	size_t v;

	if (*p >= end)
		return -EINVAL;
	v = **p & 127;
	while (*(*p)++ & 128) {
		if (*p >= end || v > (SIZE_MAX >> 8))
			return -EINVAL;
		v = ((v + 1) << 7) | (**p & 127);
	}
	*out = v;
	return 0;
}

struct cursor {
	const unsigned char *p, *end; /* entries and extensions: before the trailer */
	unsigned version;
	size_t hashsz;
	char path[JF_GIT_MAX_PATH + 1];
	size_t plen;	/* the previous path, for version 4 and the order */
	unsigned stage; /* the previous entry's */
	bool first;
	const char *why;
};

static int bad(struct cursor *c, const char *why)
{
	c->why = why;
	return -EINVAL;
}

/*
 * How the path whose last @n bytes are @suffix compares with the previous
 * one, whose last @oldn bytes (@old) the suffix replaces: <0, 0 or >0, as
 * git orders names (bytes, then length). Only the bytes that differ are
 * looked at, so a version 4 index costs what it holds, not what it expands
 * to.
 */
static int path_order(const char *old, size_t oldn, const unsigned char *suffix, size_t n)
{
	int r = memcmp(suffix, old, n < oldn ? n : oldn);

	if (r)
		return r;
	return n < oldn ? -1 : n > oldn;
}

/* The path of the entry whose name starts at c->p; moves c->p past it.
 * *@order: how it compares with the previous entry's path. */
static int read_path(struct cursor *c, const unsigned char *entry, unsigned namelen, int *order)
{
	const unsigned char *nul;
	size_t strip = 0, n;

	if (c->version == 4 && varint(&c->p, c->end, &strip) < 0)
		return bad(c, "truncated entry");
	nul = memchr(c->p, '\0', (size_t)(c->end - c->p));
	if (!nul)
		return bad(c, "truncated entry");
	n = (size_t)(nul - c->p);
	if (c->version == 4 && strip > c->plen)
		return bad(c, "prefix longer than the previous path");
	if (c->version < 4) /* the whole previous path is replaced */
		strip = c->plen;
	if (c->plen - strip + n > JF_GIT_MAX_PATH)
		return bad(c, "path over 4096 bytes");
	*order = c->first ? 1 : path_order(c->path + c->plen - strip, strip, c->p, n);
	memcpy(c->path + c->plen - strip, c->p, n);
	c->plen = c->plen - strip + n;
	c->path[c->plen] = '\0';
	if (namelen < 0xfff && namelen != c->plen)
		return bad(c, "name length does not match the path");
	c->p = nul + 1;
	if (c->version < 4) { /* NUL padding to a multiple of 8 */
		size_t size = ((size_t)(nul - entry) + 8) & ~(size_t)7;

		if (size > (size_t)(c->end - entry))
			return bad(c, "truncated entry");
		c->p = entry + size;
	}
	return 0;
}

static int read_entry(struct cursor *c, struct jf_git_entry *e)
{
	const unsigned char *entry = c->p;
	size_t fixed = STAT_FIELDS + c->hashsz + 2;
	uint16_t flags;
	int order;

	if ((size_t)(c->end - c->p) < fixed)
		return bad(c, "truncated entry");
	flags = be16(c->p + STAT_FIELDS + c->hashsz);
	e->mode = be32(c->p + 24);
	e->size = be32(c->p + 36);
	e->ctime_s = be32(c->p);
	e->ctime_ns = be32(c->p + 4);
	e->mtime_s = be32(c->p + 8);
	e->mtime_ns = be32(c->p + 12);
	e->ino = be32(c->p + 20);
	e->oid = c->p + STAT_FIELDS;
	e->hashsz = c->hashsz;
	e->stage = (flags >> 12) & 3;
	e->flags = flags & JF_GIT_ASSUME_VALID;
	c->p += fixed;
	if (flags & 0x4000) { /* extended */
		if (c->version < 3)
			return bad(c, "extended flags in a version 2 index");
		if (c->end - c->p < 2)
			return bad(c, "truncated entry");
		e->flags |= (uint32_t)be16(c->p) << 16;
		c->p += 2;
	}
	if (read_path(c, entry, flags & 0xfff, &order) < 0)
		return -EINVAL;
	/* git's own order (read-cache.c refuses any other): by name, a name
	 * only once unless in several merge stages, in increasing stage */
	if (order < 0 || (order == 0 && (e->stage == 0 || c->stage == 0 || e->stage <= c->stage)))
		return bad(c, "entries out of order");
	c->first = false;
	c->stage = e->stage;
	e->path = c->path;
	e->len = c->plen;
	return 0;
}

/* The extensions must fill what is left before the trailer exactly. */
static int read_extensions(struct cursor *c)
{
	while (c->p < c->end) {
		uint32_t size;

		if (c->end - c->p < 8)
			return bad(c, "truncated extension");
		size = be32(c->p + 4);
		if (size > (size_t)(c->end - c->p) - 8)
			return bad(c, "truncated extension");
		c->p += 8 + (size_t)size;
	}
	return 0;
}

static int parse_as(const unsigned char *buf, size_t len, size_t hashsz, jf_git_entry_fn fn,
		    void *arg, struct jf_git_index *out, const char **why)
{
	struct cursor c = {
		.p = buf + HEADER, .end = buf + len - hashsz, .hashsz = hashsz, .first = true};
	uint32_t n = be32(buf + 8);
	int r = 0;

	c.version = be32(buf + 4);
	*out = (struct jf_git_index){.version = c.version, .hashsz = hashsz, .entries = n};
	/* the smallest entry of any version is 40 + hash + 2 + 2 bytes */
	if (n > (len - HEADER) / (STAT_FIELDS + hashsz + 4))
		r = bad(&c, "more entries than the file can hold");
	for (uint32_t i = 0; r == 0 && i < n; i++) {
		struct jf_git_entry e;

		r = read_entry(&c, &e);
		if (r == 0 && fn)
			r = fn(&e, arg);
	}
	if (r == 0) {
		out->ext = c.p;
		out->ext_len = (size_t)(c.end - c.p);
		r = read_extensions(&c);
	}
	*why = c.why;
	return r;
}

int jf_git_index_parse(const unsigned char *buf, size_t len, jf_git_entry_fn fn, void *arg,
		       struct jf_git_index *out, const char **why)
{
	unsigned version;
	int r;

	*why = NULL;
	if (len < HEADER + JF_GIT_SHA1_SIZE || memcmp(buf, "DIRC", 4) != 0) {
		*why = "not an index (no DIRC signature)";
		return -EINVAL;
	}
	version = be32(buf + 4);
	if (version < 2 || version > 4) {
		*why = "unknown index version";
		return -EINVAL;
	}
	if (checksum_ok(buf, len, JF_GIT_SHA1_SIZE))
		return parse_as(buf, len, JF_GIT_SHA1_SIZE, fn, arg, out, why);
	if (checksum_ok(buf, len, JF_GIT_SHA256_SIZE))
		return parse_as(buf, len, JF_GIT_SHA256_SIZE, fn, arg, out, why);
	/* index.skipHash: a zero trailer; only a layout that fits says which */
	if (all_zero(buf + len - JF_GIT_SHA1_SIZE, JF_GIT_SHA1_SIZE)) {
		r = parse_as(buf, len, JF_GIT_SHA1_SIZE, NULL, NULL, out, why);
		if (r == 0)
			return parse_as(buf, len, JF_GIT_SHA1_SIZE, fn, arg, out, why);
		if (len >= HEADER + JF_GIT_SHA256_SIZE &&
		    all_zero(buf + len - JF_GIT_SHA256_SIZE, JF_GIT_SHA256_SIZE) &&
		    parse_as(buf, len, JF_GIT_SHA256_SIZE, NULL, NULL, out, why) == 0)
			return parse_as(buf, len, JF_GIT_SHA256_SIZE, fn, arg, out, why);
	}
	*why = "checksum mismatch";
	return -EINVAL;
}
