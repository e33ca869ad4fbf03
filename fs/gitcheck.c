/* SPDX-License-Identifier: MIT */
/*
 * The paths of a git index, checked as git checks a path it adds
 * (read-cache.c, verify_path), and the refs of packed-refs (fs/gitcheck.h
 * says why).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gitcheck.h"
#include "gitindex.h"

/* Is component @c (@n bytes) one git takes for its own directory: ".git" in
 * any case followed only by dots and spaces (NTFS drops them), its 8.3 name
 * "git~1", or ".git:" (an NTFS stream of it)? */
static bool dotgit(const char *c, size_t n)
{
	size_t i = 4;

	if (n == 5 && strncasecmp(c, "git~1", 5) == 0)
		return true;
	if (n < 4 || strncasecmp(c, ".git", 4) != 0)
		return false;
	if (n > 4 && c[4] == ':')
		return true;
	while (i < n && (c[i] == '.' || c[i] == ' '))
		i++;
	return i == n;
}

/* The names git refuses for a symlink: files git itself reads from the
 * work tree, which a symlink would send elsewhere. */
static bool symlink_name_bad(const char *c, size_t n)
{
	static const char *const names[] = {".gitmodules", ".gitattributes", ".gitignore",
					    ".mailmap"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (n == strlen(names[i]) && strncasecmp(c, names[i], n) == 0)
			return true;
	return false;
}

bool jf_git_path_ok(const char *path, size_t len, uint32_t mode)
{
	const char *c = path, *end = path + len;

	if ((mode & 0170000) == 040000 && len > 1 && path[len - 1] == '/')
		end--; /* a sparse directory entry */
	if (c == end || memchr(path, '\0', len))
		return false;
	for (;;) {
		const char *slash = memchr(c, '/', (size_t)(end - c));
		size_t n = (size_t)((slash ? slash : end) - c);

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.') ||
		    dotgit(c, n))
			return false;
		if (!slash)
			return (mode & 0170000) != 0120000 || !symlink_name_bad(c, n);
		c = slash + 1;
	}
}

static int entry_ok(const struct jf_git_entry *e, void *arg)
{
	(void)arg;
	return jf_git_path_ok(e->path, e->len, e->mode) ? 0 : 1;
}

static int bad(const char **why, const char *text)
{
	*why = text;
	return -EINVAL;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * The resolve-undo extension: per path, the path NUL-terminated, three modes
 * in octal ASCII each NUL-terminated, then an object id for each nonzero
 * mode (gitformat-index(5)). Returns 0 when every path passes.
 */
static int reuc_ok(const unsigned char *p, size_t n, size_t hashsz, const char **why)
{
	const unsigned char *end = p + n;

	while (p < end) {
		const unsigned char *nul = memchr(p, '\0', (size_t)(end - p));
		unsigned nonzero = 0;

		if (!nul)
			return bad(why, "truncated resolve-undo extension");
		if (!jf_git_path_ok((const char *)p, (size_t)(nul - p), 0100644))
			return bad(why, "a resolve-undo path git would not add");
		p = nul + 1;
		for (int i = 0; i < 3; i++) {
			nul = memchr(p, '\0', (size_t)(end - p));
			if (!nul || nul == p)
				return bad(why, "truncated resolve-undo extension");
			nonzero += !(nul - p == 1 && p[0] == '0');
			p = nul + 1;
		}
		if ((size_t)(end - p) < nonzero * hashsz)
			return bad(why, "truncated resolve-undo extension");
		p += nonzero * hashsz;
	}
	return 0;
}

int jf_git_index_check(const unsigned char *buf, size_t len, const char **why)
{
	struct jf_git_index info;
	const unsigned char *p, *end;
	int r = jf_git_index_parse(buf, len, entry_ok, NULL, &info, why);

	if (r > 0)
		*why = "an entry whose path git would not add";
	if (r != 0)
		return -EINVAL;
	/* jf_git_index_parse() checked that the extensions fill their range */
	for (p = info.ext, end = info.ext + info.ext_len; p < end; p += 8 + be32(p + 4)) {
		if (memcmp(p, "link", 4) == 0)
			return bad(why, "a split index (link extension)");
		if (memcmp(p, "REUC", 4) == 0 && reuc_ok(p + 8, be32(p + 4), info.hashsz, why) < 0)
			return -EINVAL;
	}
	return 0;
}

/* A guarded entry of the index being replaced. */
struct kept {
	char *path;
	size_t len;
	uint32_t mode;
	unsigned stage;
	unsigned char oid[JF_GIT_SHA256_SIZE];
};

struct keeps {
	const struct jf_git_guard *g;
	struct kept *v;
	size_t n, cap, at; /* at: the merge's place in v while the new index is read */
	size_t hashsz;
};

/* git's order of entries (read-cache.c, cache_name_stage_compare). */
static int entry_cmp(const char *a, size_t alen, unsigned astage, const struct kept *b)
{
	int c = memcmp(a, b->path, alen < b->len ? alen : b->len);

	if (c)
		return c;
	if (alen != b->len)
		return alen < b->len ? -1 : 1;
	return (int)astage - (int)b->stage;
}

static int keep_old(const struct jf_git_entry *e, void *arg)
{
	struct keeps *k = arg;
	struct kept *n;

	if (!k->g->guarded(e->path, e->len, k->g->arg))
		return 0;
	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 16;

		n = realloc(k->v, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		k->v = n;
		k->cap = cap;
	}
	n = &k->v[k->n];
	n->path = strndup(e->path, e->len);
	if (!n->path)
		return -ENOMEM;
	n->len = e->len;
	n->mode = e->mode;
	n->stage = e->stage;
	memcpy(n->oid, e->oid, e->hashsz);
	k->n++;
	return 0;
}

/* 0 for an entry the old index held as it is, or one not guarded; 1 else.
 * Both indexes are in git's order, so one pass over the old one's does. */
static int check_new(const struct jf_git_entry *e, void *arg)
{
	struct keeps *k = arg;
	int c = 1;

	if (!k->g->guarded(e->path, e->len, k->g->arg))
		return 0;
	while (k->at < k->n && (c = entry_cmp(e->path, e->len, e->stage, &k->v[k->at])) > 0)
		k->at++;
	if (c == 0 && k->v[k->at].mode == e->mode && e->hashsz == k->hashsz &&
	    memcmp(k->v[k->at].oid, e->oid, e->hashsz) == 0)
		return 0;
	return k->g->on_disk(e, k->g->arg) ? 0 : 1;
}

static void drop_kept(struct keeps *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].path);
	free(k->v);
	k->v = NULL;
	k->n = k->cap = k->at = 0;
}

int jf_git_index_keeps(const unsigned char *buf, size_t len, const unsigned char *old,
		       size_t old_len, const struct jf_git_guard *g, const char **why)
{
	struct keeps k = {.g = g};
	struct jf_git_index info;
	const char *owhy;
	int r = 0;

	if (old) {
		r = jf_git_index_parse(old, old_len, keep_old, &k, &info, &owhy);
		if (r == 0)
			k.hashsz = info.hashsz;
		else
			drop_kept(&k); /* a malformed old index holds nothing */
		if (r == -ENOMEM)
			return r;
	}
	r = jf_git_index_parse(buf, len, check_new, &k, &info, why);
	drop_kept(&k);
	if (r > 0)
		*why = "a changed entry for a name the view keeps read-only";
	return r > 0 ? -EINVAL : r;
}

int jf_git_packed_refs_check(const unsigned char *buf, size_t len, const char **why)
{
	static const char replace[] = "refs/replace/";
	const unsigned char *p = buf, *end = buf + len;

	while (p < end) {
		const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
		const unsigned char *eol = nl ? nl : end;
		const unsigned char *sp = memchr(p, ' ', (size_t)(eol - p));

		if (memchr(p, '\0', (size_t)(eol - p)))
			return bad(why, "a NUL byte in packed-refs");
		if (p < eol && *p != '#' && *p != '^' && sp &&
		    (size_t)(eol - sp - 1) >= sizeof(replace) - 1 &&
		    memcmp(sp + 1, replace, sizeof(replace) - 1) == 0)
			return bad(why, "a replace ref in packed-refs");
		p = eol + 1;
	}
	return 0;
}

size_t jf_git_index_strip(unsigned char *buf, size_t len)
{
	struct jf_git_index info;
	struct jf_git_hash h;
	const char *why;
	unsigned char *p, *out, *end;
	bool zero = true;

	if (jf_git_index_parse(buf, len, NULL, NULL, &info, &why) != 0)
		return len;
	for (size_t i = len - info.hashsz; i < len; i++)
		zero &= buf[i] == 0;
	p = out = (unsigned char *)info.ext;
	end = p + info.ext_len;
	while (p < end) {
		size_t n = 8 + be32(p + 4);

		if (memcmp(p, "TREE", 4) != 0 && memcmp(p, "UNTR", 4) != 0) {
			memmove(out, p, n);
			out += n;
		}
		p += n;
	}
	len = (size_t)(out - buf);
	memset(out, 0, info.hashsz);
	if (!zero) {
		jf_git_hash_start(&h, info.hashsz);
		jf_git_hash_update(&h, buf, len);
		jf_git_hash_end(&h, out);
	}
	return len + info.hashsz;
}
