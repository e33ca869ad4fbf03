/* SPDX-License-Identifier: MIT */
/*
 * A reader of git's index file (.git/index), gitformat-index(5): versions
 * 2, 3 and 4 (prefix-compressed paths), SHA-1 and SHA-256 repositories.
 * Pure: it works on bytes already read, never on files, and never runs git
 * (git would run the repository's own configuration). Used by tracked.c;
 * tests/unit/test-gitindex.c runs it on crafted indexes.
 *
 * Conventions: 0 or a negative errno; thread-safe (no global state).
 */
#pragma once

#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <stddef.h>
#include <stdint.h>

#define JF_GIT_SHA1_SIZE 20
#define JF_GIT_SHA256_SIZE 32
#define JF_GIT_MAX_PATH 4096

/* Entry flags (gitformat-index(5)), in jf_git_entry.flags. */
#define JF_GIT_ASSUME_VALID 0x8000u
#define JF_GIT_SKIP_WORKTREE (0x4000u << 16) /* extended flags, version 3+ */
#define JF_GIT_INTENT_TO_ADD (0x2000u << 16)

/* One entry, valid during the callback only. */
struct jf_git_entry {
	const char *path; /* NUL-terminated, @len bytes, as stored (not checked) */
	size_t len;
	uint32_t mode;		    /* 0100644, 0100755, 0120000 (symlink), 0160000 (gitlink)... */
	unsigned stage;		    /* 0, or 1-3 during a merge */
	uint32_t flags;		    /* JF_GIT_* bits */
	uint32_t size;		    /* the file's size as git saw it, truncated to 32 bits */
	uint32_t ctime_s, ctime_ns; /* the file's ctime and mtime as git saw them, */
	uint32_t mtime_s, mtime_ns; /* seconds truncated to 32 bits */
	uint32_t ino;		    /* its inode number, truncated to 32 bits */
	const unsigned char *oid;   /* object id, @hashsz bytes */
	size_t hashsz;		    /* JF_GIT_SHA1_SIZE or JF_GIT_SHA256_SIZE */
};

/* What the header and trailer said. */
struct jf_git_index {
	unsigned version; /* 2, 3 or 4 */
	size_t hashsz;	  /* JF_GIT_SHA1_SIZE or JF_GIT_SHA256_SIZE */
	uint32_t entries;
	/* The extensions (signature, size, data each), between the last entry
	 * and the trailer; points into the caller's buffer. */
	const unsigned char *ext;
	size_t ext_len;
};

/* Called for every entry in index order; a nonzero return stops the parse
 * and is returned by jf_git_index_parse(). */
typedef int (*jf_git_entry_fn)(const struct jf_git_entry *e, void *arg);

/*
 * Parse the @len bytes of an index at @buf. The hash function is the one
 * whose checksum (the last 20 or 32 bytes) matches; with index.skipHash the
 * trailer is zero and the layout decides (SHA-1 first). Every entry is
 * bounds-checked before @fn sees it; a truncated index, one claiming more
 * entries than its size allows, a path over JF_GIT_MAX_PATH bytes, entries
 * out of git's order (by path, then stage; a stage-0 path only once) or
 * extensions that do not end at the trailer are malformed. The work is
 * linear in @len, however long the version 4 paths expand. Returns 0 with
 * @out filled, -EINVAL with *why (static text) for a malformed index (@fn
 * may have seen the entries before the fault: callers discard them), or
 * the first nonzero return of @fn.
 */
int jf_git_index_parse(const unsigned char *buf, size_t len, jf_git_entry_fn fn, void *arg,
		       struct jf_git_index *out, const char **why);

/* Streaming git object id of a blob: hash of "blob <size>\0" + content. */
struct jf_git_hash {
	size_t hashsz;
	union {
		struct sha1_ctx sha1;
		struct sha256_ctx sha256;
	} u;
};

/* Start the id of a blob of @size bytes with the hash of @hashsz bytes. */
void jf_git_blob_start(struct jf_git_hash *h, size_t hashsz, uint64_t size);
/* Raw hash (no "blob" header) of @hashsz bytes. */
void jf_git_hash_start(struct jf_git_hash *h, size_t hashsz);
void jf_git_hash_update(struct jf_git_hash *h, const void *p, size_t n);
/* Write the hashsz-byte digest to @out. */
void jf_git_hash_end(struct jf_git_hash *h, unsigned char *out);
