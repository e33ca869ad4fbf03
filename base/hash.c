/* SPDX-License-Identifier: MIT */
/* The one hash table: intrusive chains, doubling at two nodes per bucket. */
#include <errno.h>
#include <stdlib.h>

#include "hash.h"

static size_t index_of(size_t size, uint64_t hash)
{
	return (size_t)hash & (size - 1);
}

int jf_htab_init(struct jf_htab *t, size_t size)
{
	size_t n = 1;

	if (!size)
		size = JF_HTAB_DEFAULT_SIZE;
	while (n < size)
		n <<= 1;
	*t = (struct jf_htab){0};
	t->b = calloc(n, sizeof(*t->b));
	if (!t->b)
		return -ENOMEM;
	t->size = n;
	return 0;
}

void jf_htab_destroy(struct jf_htab *t)
{
	free(t->b);
	*t = (struct jf_htab){0};
}

/* Double @t's buckets; on ENOMEM keep the longer chains. */
static void grow(struct jf_htab *t)
{
	size_t nsize = t->size * 2;
	struct jf_hnode **nb = calloc(nsize, sizeof(*nb));

	if (!nb)
		return;
	for (size_t i = 0; i < t->size; i++) {
		struct jf_hnode *n = t->b[i], *next;

		for (; n; n = next) {
			size_t k = index_of(nsize, n->hash);

			next = n->next;
			n->next = nb[k];
			nb[k] = n;
		}
	}
	free(t->b);
	t->b = nb;
	t->size = nsize;
}

int jf_htab_insert(struct jf_htab *t, struct jf_hnode *n, uint64_t hash)
{
	size_t k;

	if (!t->size && jf_htab_init(t, 0) < 0)
		return -ENOMEM;
	if (t->count >= t->size * 2)
		grow(t);
	k = index_of(t->size, hash);
	n->hash = hash;
	n->next = t->b[k];
	t->b[k] = n;
	t->count++;
	return 0;
}

void jf_htab_remove(struct jf_htab *t, struct jf_hnode *n)
{
	if (!t->size)
		return;
	for (struct jf_hnode **pp = &t->b[index_of(t->size, n->hash)]; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			n->next = NULL;
			t->count--;
			return;
		}
	}
}

struct jf_hnode *jf_htab_find(const struct jf_htab *t, uint64_t hash, jf_hmatch_fn *match,
			      const void *key)
{
	if (!t->size)
		return NULL;
	for (struct jf_hnode *n = t->b[index_of(t->size, hash)]; n; n = n->next)
		if (n->hash == hash && match(n, key))
			return n;
	return NULL;
}

/* Point @it at the first node of the next non-empty bucket, or NULL. */
static void iter_advance(struct jf_htab_iter *it)
{
	it->next = NULL;
	while (!it->next && it->bucket < it->t->size)
		it->next = it->t->b[it->bucket++];
}

void jf_htab_iter_init(struct jf_htab_iter *it, const struct jf_htab *t)
{
	it->t = t;
	it->bucket = 0;
	iter_advance(it);
}

struct jf_hnode *jf_htab_iter_next(struct jf_htab_iter *it)
{
	struct jf_hnode *n = it->next;

	if (!n)
		return NULL;
	it->next = n->next;
	if (!it->next)
		iter_advance(it);
	return n;
}

/* The finalizer of MurmurHash3 (fmix64): every input bit reaches every
 * output bit, so the low bits that pick a bucket depend on the whole key. */
static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

uint64_t jf_hash_dev_ino(dev_t dev, ino_t ino)
{
	return mix64((uint64_t)ino * 0x9E3779B97F4A7C15ULL ^ (uint64_t)dev * 0xC2B2AE3D27D4EB4FULL);
}

uint64_t jf_hash_u64(uint64_t key)
{
	return mix64(key);
}
