/* SPDX-License-Identifier: MIT */
/*
 * The one hash table (hash.c): intrusive chaining, as the kernel's hlist.
 * Base layer: depends on nothing above it.
 *
 * The caller embeds a struct jf_hnode in its own object and owns that
 * object's memory; the table only links nodes, and owns nothing but its
 * bucket array. Each node keeps the 64-bit hash it was inserted with, so
 * growth never calls back into the caller, and a lookup compares full
 * hashes before asking the caller whether the keys are equal. Any key
 * works: (dev, ino) through jf_hash_dev_ino(), an integer through
 * jf_hash_u64(), anything else through a hash of the caller's that mixes
 * its low bits well (the bucket is the low bits).
 *
 * Sizes are powers of two; the table doubles when it holds more than two
 * nodes per bucket. It never shrinks and never fails an insertion once it
 * has buckets: a growth that cannot allocate keeps the longer chains.
 *
 * Not thread-safe: the caller's lock guards the table and its nodes'
 * links, as one field guarded by that lock. No function allocates except
 * jf_htab_init() and jf_htab_insert().
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The object holding @ptr, a pointer to its @member of @type. */
#define jf_container_of(ptr, type, member)                                                         \
	((type *)((char *)(ptr) - (size_t)offsetof(type, member)))

/* A link in a chain; embed it in the hashed object. Set by the table. */
struct jf_hnode {
	struct jf_hnode *next;
	uint64_t hash;
};

/* A table. All zeroes ({0}, static storage) is an empty table with no
 * buckets yet: the first insertion allocates JF_HTAB_DEFAULT_SIZE. */
struct jf_htab {
	struct jf_hnode **b;
	size_t size;  /* buckets: 0 or a power of two */
	size_t count; /* nodes in the table */
};

#define JF_HTAB_DEFAULT_SIZE 1024

/* Give @t at least @size buckets (rounded up to a power of two; 0 means
 * JF_HTAB_DEFAULT_SIZE), empty. @t holds no buckets before (zeroed or
 * destroyed). 0 or -ENOMEM (then @t is left empty and bucketless). */
int jf_htab_init(struct jf_htab *t, size_t size);

/* Free @t's buckets and leave it empty (all zeroes). The nodes are the
 * caller's: unlink or free them first (jf_htab_iter allows freeing each
 * node it returns), the table never touches them again. */
void jf_htab_destroy(struct jf_htab *t);

/* Link @n (not in any table) into @t under @hash. Keys are not checked:
 * inserting a key twice holds both, and jf_htab_find() returns the newer.
 * 0, or -ENOMEM only when @t had no buckets and none could be allocated
 * (then @n is not linked). */
int jf_htab_insert(struct jf_htab *t, struct jf_hnode *n, uint64_t hash);

/* Unlink @n from @t, where it must be; walks @n's chain (about two nodes).
 * @n is the caller's again, to free or to insert anew. */
void jf_htab_remove(struct jf_htab *t, struct jf_hnode *n);

/* Does @n (whose hash equals the one looked up) hold the key @key? */
typedef bool jf_hmatch_fn(const struct jf_hnode *n, const void *key);

/* The newest node of @t with @hash for which @match(node, @key) is true,
 * or NULL. @match is called only for nodes whose hash is @hash. */
struct jf_hnode *jf_htab_find(const struct jf_htab *t, uint64_t hash, jf_hmatch_fn *match,
			      const void *key);

/* A walk over every node, in no particular order. Between calls of
 * jf_htab_iter_next() the caller may unlink (jf_htab_remove) or free the
 * node it was last given, but no other node, and may not insert. */
struct jf_htab_iter {
	const struct jf_htab *t;
	size_t bucket;	       /* the next bucket to start */
	struct jf_hnode *next; /* the next node to return, read in advance */
};

void jf_htab_iter_init(struct jf_htab_iter *it, const struct jf_htab *t);
/* The next node, or NULL when every node was returned. */
struct jf_hnode *jf_htab_iter_next(struct jf_htab_iter *it);

/* The hash of a (st_dev, st_ino) key, as every (dev, ino) table uses:
 * all 64 bits mixed, so any bit range indexes well. Pure. */
uint64_t jf_hash_dev_ino(dev_t dev, ino_t ino);
/* The hash of an integer key (a wd, an address), mixed likewise. Pure. */
uint64_t jf_hash_u64(uint64_t key);
