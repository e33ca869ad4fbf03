/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of fs/gitindex.c, git's index reader, over indexes crafted
 * byte by byte after gitformat-index(5): versions 2, 3 (extended flags) and
 * 4 (prefix-compressed paths), SHA-1 and SHA-256, index.skipHash, an
 * extension; and malformed ones: truncated, a huge entry count, a bad
 * checksum, a prefix longer than the previous path, a path over 4096 bytes,
 * entries out of git's order (a 16 MiB version 4 index repeating one 4,000
 * byte path is refused at its second entry).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gitcheck.h"
#include "gitindex.h"

struct builder {
	unsigned char buf[1 << 16];
	size_t len;
	unsigned version;
	size_t hashsz;
	char prev[JF_GIT_MAX_PATH + 8];
};

static void put(struct builder *b, const void *p, size_t n)
{
	assert_true(b->len + n <= sizeof(b->buf));
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void put32(struct builder *b, uint32_t v)
{
	unsigned char x[4] = {v >> 24, v >> 16, v >> 8, v};

	put(b, x, 4);
}

static void put16(struct builder *b, uint16_t v)
{
	unsigned char x[2] = {v >> 8, v};

	put(b, x, 2);
}

static void start(struct builder *b, unsigned version, size_t hashsz, uint32_t count)
{
	memset(b, 0, sizeof(*b));
	b->version = version;
	b->hashsz = hashsz;
	put(b, "DIRC", 4);
	put32(b, version);
	put32(b, count);
}

/* git's varint (varint.c) */
static void put_varint(struct builder *b, size_t v)
{
	unsigned char tmp[16];
	size_t pos = sizeof(tmp) - 1;

	tmp[pos] = v & 127;
	while (v >>= 7)
		tmp[--pos] = 128 | (--v & 127);
	put(b, tmp + pos, sizeof(tmp) - pos);
}

/* One entry: @oid_byte fills the object id; @ext the extended flags. */
static void entry(struct builder *b, const char *path, uint32_t mode, unsigned stage, uint16_t ext,
		  unsigned char oid_byte)
{
	size_t start_len = b->len, n = strlen(path);
	unsigned char oid[32];
	uint16_t flags = (uint16_t)((stage << 12) | (n < 0xfff ? n : 0xfff));

	for (int i = 0; i < 6; i++)
		put32(b, 1000 + i); /* ctime s/ns, mtime s/ns, dev, ino */
	put32(b, mode);
	put32(b, 0);  /* uid */
	put32(b, 0);  /* gid */
	put32(b, 42); /* size */
	memset(oid, oid_byte, sizeof(oid));
	put(b, oid, b->hashsz);
	put16(b, (uint16_t)(flags | (ext ? 0x4000 : 0)));
	if (ext)
		put16(b, ext);
	if (b->version == 4) {
		size_t common = 0, plen = strlen(b->prev);

		while (common < plen && common < n && b->prev[common] == path[common])
			common++;
		put_varint(b, plen - common);
		put(b, path + common, n - common + 1);
		snprintf(b->prev, sizeof(b->prev), "%s", path);
		return;
	}
	put(b, path, n);
	do
		put(b, "", 1);
	while ((b->len - start_len) % 8);
}

static void finish(struct builder *b, bool zero)
{
	struct jf_git_hash h;
	unsigned char sum[32] = {0};

	if (!zero) {
		jf_git_hash_start(&h, b->hashsz);
		jf_git_hash_update(&h, b->buf, b->len);
		jf_git_hash_end(&h, sum);
	}
	put(b, sum, b->hashsz);
}

struct seen {
	int n;
	char path[8][320];
	uint32_t mode[8], flags[8];
	unsigned stage[8];
	unsigned char oid0[8];
	uint32_t stat5[8][5]; /* ctime s/ns, mtime s/ns, ino */
};

static int collect(const struct jf_git_entry *e, void *arg)
{
	struct seen *s = arg;

	assert_true(s->n < 8);
	assert_int_equal(strlen(e->path), e->len);
	snprintf(s->path[s->n], sizeof(s->path[0]), "%s", e->path);
	s->mode[s->n] = e->mode;
	s->flags[s->n] = e->flags;
	s->stage[s->n] = e->stage;
	s->oid0[s->n] = e->oid[0];
	s->stat5[s->n][0] = e->ctime_s;
	s->stat5[s->n][1] = e->ctime_ns;
	s->stat5[s->n][2] = e->mtime_s;
	s->stat5[s->n][3] = e->mtime_ns;
	s->stat5[s->n][4] = e->ino;
	s->n++;
	return 0;
}

static int parse(struct builder *b, struct seen *s, struct jf_git_index *info, const char **why)
{
	memset(s, 0, sizeof(*s));
	return jf_git_index_parse(b->buf, b->len, collect, s, info, why);
}

static void test_v2_sha1(void **state)
{
	struct builder *b = *state;
	struct jf_git_index info;
	const char *why;
	struct seen s;

	start(b, 2, JF_GIT_SHA1_SIZE, 4);
	entry(b, "README", 0100644, 0, 0, 0xa1);
	entry(b, "bin/run.sh", 0100755, 0, 0, 0xa2);
	entry(b, "link", 0120000, 0, 0, 0xa3);
	entry(b, "tests/server.pem", 0100644, 2, 0, 0xa4);
	finish(b, false);
	assert_int_equal(parse(b, &s, &info, &why), 0);
	assert_int_equal(info.version, 2);
	assert_int_equal(info.hashsz, JF_GIT_SHA1_SIZE);
	assert_int_equal(info.entries, 4);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.path[1], "bin/run.sh");
	assert_int_equal(s.mode[1], 0100755);
	assert_int_equal(s.mode[2], 0120000);
	assert_string_equal(s.path[3], "tests/server.pem");
	assert_int_equal(s.stage[3], 2);
	assert_int_equal(s.oid0[3], 0xa4);
	/* the stat data git recorded: the builder writes 1000..1005 */
	assert_int_equal(s.stat5[3][0], 1000);
	assert_int_equal(s.stat5[3][1], 1001);
	assert_int_equal(s.stat5[3][2], 1002);
	assert_int_equal(s.stat5[3][3], 1003);
	assert_int_equal(s.stat5[3][4], 1005);
}

static void test_v3_extended(void **state)
{
	struct builder *b = *state;
	struct jf_git_index info;
	const char *why;
	struct seen s;

	start(b, 3, JF_GIT_SHA1_SIZE, 2);
	entry(b, "a.key", 0100644, 0, 0x4000, 1); /* skip-worktree */
	entry(b, "b.key", 0100644, 0, 0, 2);
	finish(b, false);
	assert_int_equal(parse(b, &s, &info, &why), 0);
	assert_int_equal(s.n, 2);
	assert_true(s.flags[0] & JF_GIT_SKIP_WORKTREE);
	assert_false(s.flags[1] & JF_GIT_SKIP_WORKTREE);
	assert_string_equal(s.path[1], "b.key");
	/* the extended bit is not allowed in version 2 */
	start(b, 2, JF_GIT_SHA1_SIZE, 1);
	entry(b, "a.key", 0100644, 0, 0x4000, 1);
	finish(b, false);
	assert_int_equal(parse(b, &s, &info, &why), -EINVAL);
	assert_non_null(why);
}

static void test_v4_prefix(void **state)
{
	static const char *const paths[] = {"a/b/c.pem", "a/b/d.pem", "a/bb", "a/x/y/z.asc", "z"};
	struct builder *b = *state;
	struct jf_git_index info;
	const char *why;
	struct seen s;

	start(b, 4, JF_GIT_SHA1_SIZE, 5);
	for (int i = 0; i < 5; i++)
		entry(b, paths[i], 0100644, 0, 0, (unsigned char)i);
	finish(b, false);
	assert_int_equal(parse(b, &s, &info, &why), 0);
	assert_int_equal(info.version, 4);
	assert_int_equal(s.n, 5);
	for (int i = 0; i < 5; i++) {
		assert_string_equal(s.path[i], paths[i]);
		assert_int_equal(s.oid0[i], i);
	}
	/* strips of 128 bytes and more take two varint bytes */
	char deep[301], other[8] = "dir/xyz";

	memset(deep, 'd', 300);
	memcpy(deep, "dir/", 4);
	deep[300] = '\0';
	start(b, 4, JF_GIT_SHA1_SIZE, 3);
	entry(b, deep, 0100644, 0, 0, 1);
	entry(b, other, 0100644, 0, 0, 2);
	entry(b, "e", 0100644, 0, 0, 3);
	finish(b, false);
	assert_int_equal(parse(b, &s, &info, &why), 0);
	assert_string_equal(s.path[0], deep);
	assert_string_equal(s.path[1], other);
	assert_string_equal(s.path[2], "e");
}

static void test_sha256(void **state)
{
	struct builder *b = *state;
	struct jf_git_index info;
	const char *why;
	struct seen s;

	for (unsigned v = 2; v <= 4; v++) {
		start(b, v, JF_GIT_SHA256_SIZE, 2);
		entry(b, "id_rsa", 0100600, 0, 0, 0xb1);
		entry(b, "tests/.ssh/known_hosts", 0100644, 0, 0, 0xb2);
		finish(b, false);
		assert_int_equal(parse(b, &s, &info, &why), 0);
		assert_int_equal(info.hashsz, JF_GIT_SHA256_SIZE);
		assert_int_equal(s.n, 2);
		assert_string_equal(s.path[1], "tests/.ssh/known_hosts");
		assert_int_equal(s.oid0[1], 0xb2);
	}
}

static void test_skip_hash_and_extension(void **state)
{
	struct builder *b = *state;
	struct jf_git_index info;
	const char *why;
	struct seen s;

	start(b, 2, JF_GIT_SHA1_SIZE, 1);
	entry(b, "guide.asc", 0100644, 0, 0, 7);
	put(b, "TREE", 4); /* an extension: signature, size, data */
	put32(b, 3);
	put(b, "abc", 3);
	finish(b, true); /* index.skipHash: zero trailer */
	assert_int_equal(parse(b, &s, &info, &why), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.path[0], "guide.asc");
}

static void test_truncated(void **state)
{
	struct builder *b = *state;
	struct jf_git_index info;
	const char *why;
	struct seen s;
	size_t full;

	/* a valid checksum over an index whose last entry is cut */
	start(b, 2, JF_GIT_SHA1_SIZE, 2);
	entry(b, "one.pem", 0100644, 0, 0, 1);
	entry(b, "two.pem", 0100644, 0, 0, 2);
	full = b->len;
	for (size_t cut = full - 1; cut > full - 30; cut--) {
		b->len = cut;
		finish(b, false);
		assert_int_equal(parse(b, &s, &info, &why), -EINVAL);
		assert_non_null(why);
		b->len = full;
	}
	/* the whole file cut: the checksum no longer matches */
	finish(b, false);
	b->len -= 5;
	assert_int_equal(parse(b, &s, &info, &why), -EINVAL);
	assert_string_equal(why, "checksum mismatch");
	assert_int_equal(jf_git_index_parse(b->buf, 10, NULL, NULL, &info, &why), -EINVAL);
}

static void test_huge_count(void **state)
{
	struct builder *b = *state;
	struct jf_git_index info;
	const char *why;
	struct seen s;

	start(b, 2, JF_GIT_SHA1_SIZE, 0xffffffffu);
	entry(b, "a", 0100644, 0, 0, 1);
	finish(b, false);
	assert_int_equal(parse(b, &s, &info, &why), -EINVAL);
	assert_int_equal(s.n, 0); /* refused before any entry is read */
	assert_non_null(why);
	/* one entry more than written: read runs into the trailer */
	start(b, 4, JF_GIT_SHA1_SIZE, 3);
	entry(b, "a", 0100644, 0, 0, 1);
	entry(b, "b", 0100644, 0, 0, 1);
	finish(b, false);
	assert_int_equal(parse(b, &s, &info, &why), -EINVAL);
}

static void test_bad_prefix_and_long_path(void **state)
{
	struct builder *b = *state;
	struct jf_git_index info;
	const char *why;
	struct seen s;
	char *longp = malloc(JF_GIT_MAX_PATH + 2);

	/* version 4: strip 9 bytes from a 1-byte previous path */
	start(b, 4, JF_GIT_SHA1_SIZE, 2);
	entry(b, "a", 0100644, 0, 0, 1);
	snprintf(b->prev, sizeof(b->prev), "%s", "123456789a"); /* lie about the previous */
	entry(b, "b", 0100644, 0, 0, 1);
	finish(b, false);
	assert_int_equal(parse(b, &s, &info, &why), -EINVAL);
	assert_string_equal(why, "prefix longer than the previous path");
	/* a path over 4096 bytes */
	assert_non_null(longp);
	memset(longp, 'x', JF_GIT_MAX_PATH + 1);
	longp[JF_GIT_MAX_PATH + 1] = '\0';
	start(b, 2, JF_GIT_SHA1_SIZE, 1);
	entry(b, longp, 0100644, 0, 0, 1);
	finish(b, false);
	assert_int_equal(parse(b, &s, &info, &why), -EINVAL);
	assert_string_equal(why, "path over 4096 bytes");
	free(longp);
	/* not an index at all */
	start(b, 5, JF_GIT_SHA1_SIZE, 0);
	finish(b, false);
	assert_int_equal(parse(b, &s, &info, &why), -EINVAL);
	memcpy(b->buf, "DIRX", 4);
	assert_int_equal(parse(b, &s, &info, &why), -EINVAL);
}

static void test_order(void **state)
{
	struct builder *b = *state;
	struct jf_git_index info;
	const char *why;
	struct seen s;

	for (unsigned v = 2; v <= 4; v += 2) {
		/* one path twice at stage 0 */
		start(b, v, JF_GIT_SHA1_SIZE, 2);
		entry(b, ".env", 0100644, 0, 0, 1);
		entry(b, ".env", 0100644, 0, 0, 2);
		finish(b, false);
		assert_int_equal(parse(b, &s, &info, &why), -EINVAL);
		assert_string_equal(why, "entries out of order");
		assert_int_equal(s.n, 1);
		/* names out of order; "a/b" sorts before "a.c" in git ('.' < '/') */
		start(b, v, JF_GIT_SHA1_SIZE, 2);
		entry(b, "a/b", 0100644, 0, 0, 1);
		entry(b, "a.c", 0100644, 0, 0, 2);
		finish(b, false);
		assert_int_equal(parse(b, &s, &info, &why), -EINVAL);
		assert_string_equal(why, "entries out of order");
		start(b, v, JF_GIT_SHA1_SIZE, 3);
		entry(b, "a.c", 0100644, 0, 0, 1);
		entry(b, "a/b", 0100644, 0, 0, 2);
		entry(b, "a/bc", 0100644, 0, 0, 3);
		finish(b, false);
		assert_int_equal(parse(b, &s, &info, &why), 0);
		assert_int_equal(s.n, 3);
		/* a conflict: stages 1, 2, 3 of one path, in that order only */
		start(b, v, JF_GIT_SHA1_SIZE, 3);
		entry(b, "x.pem", 0100644, 1, 0, 1);
		entry(b, "x.pem", 0100644, 2, 0, 2);
		entry(b, "x.pem", 0100644, 3, 0, 3);
		finish(b, false);
		assert_int_equal(parse(b, &s, &info, &why), 0);
		assert_int_equal(s.n, 3);
		start(b, v, JF_GIT_SHA1_SIZE, 2);
		entry(b, "x.pem", 0100644, 2, 0, 1);
		entry(b, "x.pem", 0100644, 1, 0, 2);
		finish(b, false);
		assert_int_equal(parse(b, &s, &info, &why), -EINVAL);
	}
}

struct expanded {
	unsigned long entries;
	unsigned long long bytes;
};

static int count_expanded(const struct jf_git_entry *e, void *arg)
{
	struct expanded *x = arg;

	x->entries++;
	x->bytes += e->len;
	return 0;
}

/* A 16 MiB version 4 index: a 4,000-byte path, then entries that each
 * strip nothing and add nothing (the same path again: 64 bytes an entry
 * that expand to 4,000). The second entry is refused: git writes every
 * path once, so the expansion never reaches the callback. */
static void test_hostile_v4(void **state)
{
	const size_t size = 16u << 20, fixed = 40 + JF_GIT_SHA1_SIZE + 2;
	unsigned char *buf = malloc(size);
	size_t len = 12, n = 0;
	struct expanded x = {0};
	struct jf_git_index info;
	const char *why;
	struct jf_git_hash h;

	(void)state;
	assert_non_null(buf);
	memcpy(buf, "DIRC\0\0\0\4", 8);
	while (len + fixed + 4002 + JF_GIT_SHA1_SIZE <= size) {
		memset(buf + len, 0, fixed);
		buf[len + 26] = 0x81; /* mode 0100644 */
		buf[len + 27] = 0xa4;
		buf[len + fixed - 2] = 0x0f; /* name length 0xfff: "longer" */
		buf[len + fixed - 1] = 0xff;
		len += fixed;
		buf[len++] = 0; /* strip nothing */
		if (n++ == 0) {
			memset(buf + len, 'a', 3995);
			memcpy(buf + len + 3995, "x.pem", 6);
			len += 4001;
		} else {
			buf[len++] = '\0'; /* add nothing */
		}
	}
	buf[8] = (unsigned char)(n >> 24);
	buf[9] = (unsigned char)(n >> 16);
	buf[10] = (unsigned char)(n >> 8);
	buf[11] = (unsigned char)n;
	jf_git_hash_start(&h, JF_GIT_SHA1_SIZE);
	jf_git_hash_update(&h, buf, len);
	jf_git_hash_end(&h, buf + len);
	len += JF_GIT_SHA1_SIZE;
	assert_true(len > size - 4096 && n > 250000);
	assert_int_equal(jf_git_index_parse(buf, len, count_expanded, &x, &info, &why), -EINVAL);
	assert_string_equal(why, "entries out of order");
	assert_int_equal(x.entries, 1);
	assert_true(x.bytes <= 4000);
	free(buf);
}

static void test_blob_id(void **state)
{
	/* git hash-object of "hello\n": ce013625030ba8dba906f756967f9e9ca394464a */
	static const unsigned char want[] = {0xce, 0x01, 0x36, 0x25, 0x03, 0x0b, 0xa8,
					     0xdb, 0xa9, 0x06, 0xf7, 0x56, 0x96, 0x7f,
					     0x9e, 0x9c, 0xa3, 0x94, 0x46, 0x4a};
	unsigned char got[32];
	struct jf_git_hash h;

	(void)state;
	jf_git_blob_start(&h, JF_GIT_SHA1_SIZE, 6);
	jf_git_hash_update(&h, "hel", 3);
	jf_git_hash_update(&h, "lo\n", 3);
	jf_git_hash_end(&h, got);
	assert_memory_equal(got, want, sizeof(want));
}

static int setup(void **state)
{
	*state = calloc(1, sizeof(struct builder));
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

/* The paths git itself would refuse to add, and some it takes. */
static void test_path_ok(void **state)
{
	static const char *const bad[] = {
		"",
		"/etc/passwd",
		"a//b",
		"a/",
		"./a",
		"a/./b",
		"..",
		"../x",
		"a/../../x",
		".git",
		".git/hooks/pre-commit",
		"sub/.git/config",
		".GIT/hooks/x",
		".Git./x",
		".git /x",
		"git~1/hooks/x",
		"GIT~1",
		".git::$INDEX_ALLOCATION/x",
	};
	static const char *const good[] = {
		"a",
		"a/b",
		".gitignore",
		".github/workflows/ci.yml",
		".git-blame-ignore",
		"x.git/y",
		"...",
		".gitx",
		"git~2",
		"a/.gitmodules",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (jf_git_path_ok(bad[i], strlen(bad[i]), 0100644))
			fail_msg("'%s' passed", bad[i]);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!jf_git_path_ok(good[i], strlen(good[i]), 0100644))
			fail_msg("'%s' refused", good[i]);
	assert_false(jf_git_path_ok("a/.gitmodules", 13, 0120000));
	assert_false(jf_git_path_ok(".GitAttributes", 14, 0120000));
	assert_true(jf_git_path_ok("a/.gitmodules-x", 15, 0120000));
	assert_true(jf_git_path_ok("dir/", 4, 040000)); /* a sparse directory */
	assert_false(jf_git_path_ok("dir/", 4, 0100644));
	assert_false(jf_git_path_ok("a\0b", 3, 0100644)); /* a NUL inside */
}

/* A whole index: each entry, the resolve-undo paths, no split index. */
static void test_index_check(void **state)
{
	struct builder *b = *state;
	const char *why;

	start(b, 2, JF_GIT_SHA1_SIZE, 2);
	entry(b, "a/b", 0100644, 0, 0, 1);
	entry(b, "f", 0100755, 0, 0, 2);
	finish(b, false);
	assert_int_equal(jf_git_index_check(b->buf, b->len, &why), 0);

	start(b, 4, JF_GIT_SHA1_SIZE, 2);
	entry(b, ".git/hooks/pre-commit", 0100755, 0, 0, 1);
	entry(b, "f", 0100644, 0, 0, 2);
	finish(b, false);
	assert_int_equal(jf_git_index_check(b->buf, b->len, &why), -EINVAL);
	assert_string_equal(why, "an entry whose path git would not add");

	start(b, 3, JF_GIT_SHA256_SIZE, 1);
	entry(b, "../x", 0100644, 0, 0x2000, 1);
	finish(b, false);
	assert_int_equal(jf_git_index_check(b->buf, b->len, &why), -EINVAL);

	/* resolve-undo: "f" with modes 100644 0 100644, then ".git/x" */
	start(b, 2, JF_GIT_SHA1_SIZE, 1);
	entry(b, "f", 0100644, 0, 0, 1);
	put(b, "REUC", 4);
	put32(b, 2 + 7 + 2 + 7 + 2 * 20);
	put(b,
	    "f\0"
	    "100644\0"
	    "0\0"
	    "100644\0",
	    2 + 7 + 2 + 7);
	for (int i = 0; i < 40; i++)
		put(b, "\x11", 1);
	finish(b, false);
	assert_int_equal(jf_git_index_check(b->buf, b->len, &why), 0);
	b->len -= JF_GIT_SHA1_SIZE;
	b->buf[b->len - 40 - 18] = '.'; /* "f" stays one byte: make it "." */
	finish(b, false);
	assert_int_equal(jf_git_index_check(b->buf, b->len, &why), -EINVAL);
	assert_string_equal(why, "a resolve-undo path git would not add");

	start(b, 2, JF_GIT_SHA1_SIZE, 1);
	entry(b, "f", 0100644, 0, 0, 1);
	put(b, "link", 4);
	put32(b, 20);
	put(b, "01234567890123456789", 20);
	finish(b, false);
	assert_int_equal(jf_git_index_check(b->buf, b->len, &why), -EINVAL);
	assert_string_equal(why, "a split index (link extension)");

	start(b, 2, JF_GIT_SHA1_SIZE, 1);
	entry(b, "f", 0100644, 0, 0, 1);
	finish(b, false);
	b->buf[b->len - 1] ^= 1; /* checksum */
	assert_int_equal(jf_git_index_check(b->buf, b->len, &why), -EINVAL);
}

/* The test's view: names under ".claude/" or ".vscode/" are kept from the
 * agent; ".vscode/on-disk" holds what an entry with object id 7 names. */
static bool guarded_dirs(const char *path, size_t len, void *arg)
{
	(void)arg;
	return (len > 8 && memcmp(path, ".claude/", 8) == 0) ||
	       (len > 8 && memcmp(path, ".vscode/", 8) == 0);
}

static bool on_disk_7(const struct jf_git_entry *e, void *arg)
{
	(void)arg;
	return e->len == 15 && memcmp(e->path, ".vscode/on-disk", 15) == 0 && e->oid[0] == 7;
}

/* An index of entries (path, mode, oid byte) into @b; a copy in @copy. */
static size_t index_of(struct builder *b, unsigned char *copy, const char *const *paths,
		       const uint32_t *modes, const unsigned char *oids, int n)
{
	start(b, 2, JF_GIT_SHA1_SIZE, (uint32_t)n);
	for (int i = 0; i < n; i++)
		entry(b, paths[i], modes[i], 0, 0, oids[i]);
	finish(b, false);
	memcpy(copy, b->buf, b->len);
	return b->len;
}

/* Entries for guarded names: as the old index had them, or on disk. */
static void test_index_keeps(void **state)
{
	struct builder *b = *state;
	const struct jf_git_guard g = {.guarded = guarded_dirs, .on_disk = on_disk_7};
	static unsigned char old[1 << 12], cur[1 << 12];
	const char *const paths[] = {".claude/settings.json", ".vscode/on-disk",
				     ".vscode/settings.json", "f"};
	const uint32_t modes[] = {0100644, 0100644, 0100644, 0100644};
	const unsigned char same[] = {1, 7, 3, 4}, other_f[] = {1, 7, 3, 9},
			    changed[] = {1, 7, 5, 4}, disk_not[] = {1, 8, 3, 4};
	const uint32_t exec[] = {0100755, 0100644, 0100644, 0100644};
	size_t olen = index_of(b, old, paths, modes, same, 4), n;
	const char *why;

	n = index_of(b, cur, paths, modes, same, 4);
	assert_int_equal(jf_git_index_keeps(cur, n, old, olen, &g, &why), 0);
	n = index_of(b, cur, paths, modes, other_f, 4); /* "f" is the agent's */
	assert_int_equal(jf_git_index_keeps(cur, n, old, olen, &g, &why), 0);
	n = index_of(b, cur, paths, modes, changed, 4);
	assert_int_equal(jf_git_index_keeps(cur, n, old, olen, &g, &why), -EINVAL);
	assert_string_equal(why, "a changed entry for a name the view keeps read-only");
	n = index_of(b, cur, paths, exec, same, 4); /* a mode changed */
	assert_int_equal(jf_git_index_keeps(cur, n, old, olen, &g, &why), -EINVAL);
	/* a new entry: taken only when it names what the file holds */
	n = index_of(b, cur, paths + 1, modes + 1, same + 1, 3);
	assert_int_equal(jf_git_index_keeps(old, olen, cur, n, &g, &why), -EINVAL);
	assert_int_equal(jf_git_index_keeps(cur, n, NULL, 0, &g, &why), -EINVAL);
	n = index_of(b, cur, paths + 1, modes + 1, same + 1, 1);
	assert_int_equal(jf_git_index_keeps(cur, n, NULL, 0, &g, &why), 0);
	n = index_of(b, cur, paths + 1, modes + 1, disk_not + 1, 1);
	assert_int_equal(jf_git_index_keeps(cur, n, NULL, 0, &g, &why), -EINVAL);
	/* an entry removed is not written back by git restore */
	n = index_of(b, cur, paths + 3, modes + 3, same + 3, 1);
	assert_int_equal(jf_git_index_keeps(cur, n, old, olen, &g, &why), 0);
	/* a malformed old index holds nothing */
	old[olen - 1] ^= 1;
	n = index_of(b, cur, paths, modes, same, 4);
	assert_int_equal(jf_git_index_keeps(cur, n, old, olen, &g, &why), -EINVAL);
}

/* packed-refs: every ref but a replace ref. */
static void test_packed_refs_check(void **state)
{
	static const char good[] = "# pack-refs with: peeled fully-peeled sorted \n"
				   "0123456789012345678901234567890123456789 refs/heads/main\n"
				   "1123456789012345678901234567890123456789 refs/tags/v1\n"
				   "^2123456789012345678901234567890123456789\n"
				   "3123456789012345678901234567890123456789 refs/heads/replace/x";
	static const char bad[] = "0123456789012345678901234567890123456789 refs/heads/main\n"
				  "1123456789012345678901234567890123456789 refs/replace/"
				  "0123456789012345678901234567890123456789\n";
	const char *why;

	(void)state;
	assert_int_equal(jf_git_packed_refs_check((const unsigned char *)good, strlen(good), &why),
			 0);
	assert_int_equal(jf_git_packed_refs_check((const unsigned char *)"", 0, &why), 0);
	assert_int_equal(jf_git_packed_refs_check((const unsigned char *)bad, strlen(bad), &why),
			 -EINVAL);
	assert_string_equal(why, "a replace ref in packed-refs");
	assert_int_equal(
		jf_git_packed_refs_check((const unsigned char *)"x refs/replace/", 15, &why),
		-EINVAL);
	assert_int_equal(jf_git_packed_refs_check((const unsigned char *)"a\0b", 3, &why), -EINVAL);
}

/* Stripping the caches: TREE and UNTR go, the rest stays, the trailer is
 * right again (or stays zero). */
static void test_index_strip(void **state)
{
	struct builder *b = *state;
	struct jf_git_index info;
	struct seen s;
	const char *why;
	size_t n;

	for (int zero = 0; zero < 2; zero++) {
		start(b, 2, JF_GIT_SHA1_SIZE, 1);
		entry(b, "f", 0100644, 0, 0, 1);
		put(b, "TREE", 4);
		put32(b, 3);
		put(b, "abc", 3);
		put(b, "FSMN", 4);
		put32(b, 2);
		put(b, "xy", 2);
		put(b, "UNTR", 4);
		put32(b, 1);
		put(b, "u", 1);
		finish(b, zero);
		n = jf_git_index_strip(b->buf, b->len);
		assert_int_equal(n, b->len - 11 - 9);
		b->len = n;
		assert_int_equal(parse(b, &s, &info, &why), 0);
		assert_int_equal(s.n, 1);
		assert_int_equal(info.ext_len, 10);
		assert_memory_equal(info.ext, "FSMN", 4);
		if (zero)
			for (size_t i = n - JF_GIT_SHA1_SIZE; i < n; i++)
				assert_int_equal(b->buf[i], 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_v2_sha1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v3_extended, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v4_prefix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sha256, setup, teardown),
		cmocka_unit_test_setup_teardown(test_skip_hash_and_extension, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_huge_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_prefix_and_long_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_order, setup, teardown),
		cmocka_unit_test(test_hostile_v4),
		cmocka_unit_test_setup_teardown(test_blob_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_index_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_index_keeps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_packed_refs_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_index_strip, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
