/* SPDX-License-Identifier: MIT */
/* The one hash table (base/hash.c): growth, deletion, collisions, walks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hash.h"

struct obj {
	struct jf_hnode h;
	dev_t dev;
	ino_t ino;
	bool seen;
};

struct key {
	dev_t dev;
	ino_t ino;
};

static bool match(const struct jf_hnode *n, const void *k)
{
	const struct obj *o = jf_container_of(n, struct obj, h);
	const struct key *key = k;

	return o->dev == key->dev && o->ino == key->ino;
}

/* A hash that sends every key to one chain: only match() tells them apart. */
static uint64_t bad_hash(dev_t dev, ino_t ino)
{
	(void)dev;
	(void)ino;
	return 42;
}

typedef uint64_t hash_fn(dev_t dev, ino_t ino);

static struct obj *find(const struct jf_htab *t, hash_fn *hash, dev_t dev, ino_t ino)
{
	struct key k = {dev, ino};
	struct jf_hnode *n = jf_htab_find(t, hash(dev, ino), match, &k);

	return n ? jf_container_of(n, struct obj, h) : NULL;
}

static struct obj *objs(size_t n)
{
	struct obj *o = calloc(n, sizeof(*o));

	assert_non_null(o);
	for (size_t i = 0; i < n; i++) {
		o[i].dev = (dev_t)(i % 3);
		o[i].ino = (ino_t)(i / 3 + 1);
	}
	return o;
}

static void insert_all(struct jf_htab *t, struct obj *o, size_t n, hash_fn *hash)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(jf_htab_insert(t, &o[i].h, hash(o[i].dev, o[i].ino)), 0);
	assert_int_equal(t->count, n);
}

static void check_all(const struct jf_htab *t, struct obj *o, size_t n, hash_fn *hash)
{
	for (size_t i = 0; i < n; i++)
		assert_ptr_equal(find(t, hash, o[i].dev, o[i].ino), &o[i]);
}

/* An empty or zeroed table answers nothing; the first insert allocates. */
static void test_empty(void **state)
{
	struct jf_htab t = {0};
	struct jf_htab_iter it;
	struct obj o = {.dev = 1, .ino = 2};

	(void)state;
	assert_null(find(&t, jf_hash_dev_ino, 1, 2));
	jf_htab_iter_init(&it, &t);
	assert_null(jf_htab_iter_next(&it));
	jf_htab_remove(&t, &o.h); /* bucketless: nothing to unlink */
	assert_int_equal(jf_htab_insert(&t, &o.h, jf_hash_dev_ino(1, 2)), 0);
	assert_int_equal(t.size, JF_HTAB_DEFAULT_SIZE);
	assert_ptr_equal(find(&t, jf_hash_dev_ino, 1, 2), &o);
	assert_null(find(&t, jf_hash_dev_ino, 2, 1));
	assert_null(find(&t, jf_hash_dev_ino, 1, 3));
	jf_htab_destroy(&t);
	assert_null(t.b);
	assert_int_equal(t.size, 0);
	assert_int_equal(t.count, 0);

	assert_int_equal(jf_htab_init(&t, 5), 0);
	assert_int_equal(t.size, 8); /* rounded up to a power of two */
	jf_htab_destroy(&t);
}

/* From 4 buckets to 10,000 nodes: doubles at two per bucket, finds all. */
static void test_growth(void **state)
{
	const size_t n = 10000;
	struct obj *o = objs(n);
	struct jf_htab t;

	(void)state;
	assert_int_equal(jf_htab_init(&t, 4), 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(jf_htab_insert(&t, &o[i].h, jf_hash_dev_ino(o[i].dev, o[i].ino)),
				 0);
		assert_true(t.count <= t.size * 2);
	}
	assert_int_equal(t.size, 8192); /* 10,000 > 2 * 4096 */
	check_all(&t, o, n, jf_hash_dev_ino);
	assert_null(find(&t, jf_hash_dev_ino, 0, (ino_t)n));
	assert_null(find(&t, jf_hash_dev_ino, 3, 1));
	jf_htab_destroy(&t);
	free(o);
}

/* Removing every other node, then the rest; a removed node inserts anew. */
static void deletion(hash_fn *hash)
{
	const size_t n = 3000;
	struct obj *o = objs(n);
	struct jf_htab t = {0};

	insert_all(&t, o, n, hash);
	for (size_t i = 0; i < n; i += 2)
		jf_htab_remove(&t, &o[i].h);
	assert_int_equal(t.count, n / 2);
	for (size_t i = 0; i < n; i++)
		assert_ptr_equal(find(&t, hash, o[i].dev, o[i].ino), i % 2 ? &o[i] : NULL);
	assert_int_equal(jf_htab_insert(&t, &o[0].h, hash(o[0].dev, o[0].ino)), 0);
	assert_ptr_equal(find(&t, hash, o[0].dev, o[0].ino), &o[0]);
	jf_htab_remove(&t, &o[0].h);
	for (size_t i = 1; i < n; i += 2)
		jf_htab_remove(&t, &o[i].h);
	assert_int_equal(t.count, 0);
	for (size_t i = 0; i < t.size; i++)
		assert_null(t.b[i]);
	jf_htab_destroy(&t);
	free(o);
}

static void test_deletion(void **state)
{
	(void)state;
	deletion(jf_hash_dev_ino);
}

/* Every key in one chain: find, growth and removal rest on match(). */
static void test_collisions(void **state)
{
	const size_t n = 500;
	struct obj *o = objs(n);
	struct jf_htab t;

	(void)state;
	assert_int_equal(jf_htab_init(&t, 2), 0);
	insert_all(&t, o, n, bad_hash);
	assert_true(t.size > 2); /* grew although one chain holds all */
	check_all(&t, o, n, bad_hash);
	assert_null(find(&t, bad_hash, 7, 7));
	jf_htab_destroy(&t);
	free(o);
	deletion(bad_hash);
}

/* One key twice: the newer is found, and the older once it is removed. */
static void test_duplicate_key(void **state)
{
	struct obj a = {.dev = 5, .ino = 9}, b = {.dev = 5, .ino = 9};
	struct jf_htab t = {0};

	(void)state;
	assert_int_equal(jf_htab_insert(&t, &a.h, jf_hash_dev_ino(5, 9)), 0);
	assert_int_equal(jf_htab_insert(&t, &b.h, jf_hash_dev_ino(5, 9)), 0);
	assert_ptr_equal(find(&t, jf_hash_dev_ino, 5, 9), &b);
	jf_htab_remove(&t, &b.h);
	assert_ptr_equal(find(&t, jf_hash_dev_ino, 5, 9), &a);
	jf_htab_remove(&t, &a.h);
	assert_null(find(&t, jf_hash_dev_ino, 5, 9));
	jf_htab_destroy(&t);
}

/* A walk returns each node once; removing some, or freeing all, as it goes. */
static void walk(hash_fn *hash)
{
	const size_t n = 2000;
	struct obj *o = objs(n), **heap = calloc(n, sizeof(*heap));
	struct jf_htab t = {0};
	struct jf_htab_iter it;
	struct jf_hnode *h;
	size_t seen = 0;

	assert_non_null(heap);
	insert_all(&t, o, n, hash);
	jf_htab_iter_init(&it, &t);
	while ((h = jf_htab_iter_next(&it))) {
		struct obj *p = jf_container_of(h, struct obj, h);

		assert_false(p->seen);
		p->seen = true;
		if ((size_t)(p - o) % 3 == 0)
			jf_htab_remove(&t, h);
		seen++;
	}
	assert_int_equal(seen, n);
	assert_int_equal(t.count, n - (n + 2) / 3);
	for (size_t i = 0; i < n; i++)
		assert_ptr_equal(find(&t, hash, o[i].dev, o[i].ino), i % 3 ? &o[i] : NULL);
	jf_htab_destroy(&t);

	/* Nodes freed as they are returned, then the table destroyed (under
	 * ASan a read of a freed node fails here). */
	for (size_t i = 0; i < n; i++) {
		heap[i] = calloc(1, sizeof(**heap));
		assert_non_null(heap[i]);
		assert_int_equal(jf_htab_insert(&t, &heap[i]->h, hash((dev_t)i, (ino_t)i)), 0);
	}
	seen = 0;
	jf_htab_iter_init(&it, &t);
	while ((h = jf_htab_iter_next(&it))) {
		free(jf_container_of(h, struct obj, h));
		seen++;
	}
	assert_int_equal(seen, n);
	jf_htab_destroy(&t);
	free(heap);
	free(o);
}

static void test_iteration(void **state)
{
	(void)state;
	walk(jf_hash_dev_ino);
	walk(bad_hash);
}

/* The key helpers mix every bit: keys differing in one bit of dev or ino,
 * or swapped, land in different buckets of a small table most of the time. */
static void test_key_helpers(void **state)
{
	unsigned same = 0, tries = 0;

	(void)state;
	assert_true(jf_hash_dev_ino(1, 2) == jf_hash_dev_ino(1, 2));
	assert_true(jf_hash_dev_ino(1, 2) != jf_hash_dev_ino(2, 1));
	assert_true(jf_hash_u64(7) == jf_hash_u64(7));
	assert_true(jf_hash_u64(7) != jf_hash_u64(8));
	for (unsigned bit = 0; bit < 64; bit++) {
		uint64_t a = jf_hash_dev_ino(0x801, 123456), b;

		b = jf_hash_dev_ino(0x801 ^ (1ULL << bit), 123456);
		same += (a & 63) == (b & 63);
		b = jf_hash_dev_ino(0x801, 123456 ^ (1ULL << bit));
		same += (a & 63) == (b & 63);
		b = jf_hash_u64(123456 ^ (1ULL << bit));
		same += (jf_hash_u64(123456) & 63) == (b & 63);
		tries += 3;
	}
	/* 1 in 64 by chance: 3 expected of 192; 24 would be a poor mix */
	assert_true(same < tries / 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),	      cmocka_unit_test(test_growth),
		cmocka_unit_test(test_deletion),      cmocka_unit_test(test_collisions),
		cmocka_unit_test(test_duplicate_key), cmocka_unit_test(test_iteration),
		cmocka_unit_test(test_key_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
