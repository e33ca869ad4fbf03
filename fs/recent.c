/* SPDX-License-Identifier: MIT */
/*
 * The daemon's recent changes through the view: a fixed 4-way table of
 * (key, ms), the key a 64-bit hash of (directory dev, ino, name). See
 * recent.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "fsstate.h"
#include "recent.h"

#define RECENT_SLOTS 16384 /* power of two: 256 KiB of (key, ms) */
#define RECENT_WAYS 4

struct recent_slot {
	uint64_t key; /* jf_recent_key(dir dev, dir ino, name); 0: empty */
	uint64_t ms;  /* CLOCK_MONOTONIC of the change */
};

static struct {
	pthread_mutex_t mu;	  /* the slots */
	struct recent_slot *slot; /* RECENT_SLOTS; NULL when not kept (set without workers) */
} R = {.mu = PTHREAD_MUTEX_INITIALIZER};

uint64_t jf_recent_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* FNV-1a over (a, b, name), finished with a multiply-xorshift; never 0. */
uint64_t jf_recent_key(uint64_t a, uint64_t b, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < 8; i++)
		h = (h ^ ((a >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
	for (int i = 0; i < 8; i++)
		h = (h ^ ((b >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	h ^= h >> 31;
	h *= 0x7fb5d329728ea185ULL;
	h ^= h >> 27;
	return h ? h : 1;
}

/* The RECENT_WAYS slots of @key's bucket. */
static struct recent_slot *recent_bucket(uint64_t key)
{
	return &R.slot[(key & (RECENT_SLOTS / RECENT_WAYS - 1)) * RECENT_WAYS];
}

int jf_recent_init(void)
{
	R.slot = calloc(RECENT_SLOTS, sizeof(*R.slot));
	return R.slot ? 0 : -ENOMEM;
}

void jf_recent_free(void)
{
	free(R.slot);
	R.slot = NULL;
}

void jf_recent_note(const struct jf_inode *dir, const char *name)
{
	struct recent_slot *s, *victim;
	uint64_t key, ms;

	if (!R.slot || !dir || !name)
		return;
	key = jf_recent_key((uint64_t)dir->dev, (uint64_t)dir->ino, name);
	ms = jf_recent_now_ms();
	s = recent_bucket(key);
	pthread_mutex_lock(&R.mu);
	victim = s;
	for (int i = 0; i < RECENT_WAYS; i++) {
		if (s[i].key == key) {
			victim = &s[i];
			break;
		}
		if (s[i].ms < victim->ms)
			victim = &s[i];
	}
	victim->key = key;
	victim->ms = ms;
	pthread_mutex_unlock(&R.mu);
}

bool jf_recent_has(dev_t dev, ino_t ino, const char *name, uint64_t now_ms)
{
	uint64_t key;
	struct recent_slot *s;
	bool r = false;

	if (!R.slot)
		return false;
	key = jf_recent_key((uint64_t)dev, (uint64_t)ino, name);
	s = recent_bucket(key);
	pthread_mutex_lock(&R.mu);
	for (int i = 0; i < RECENT_WAYS && !r; i++)
		r = s[i].key == key && now_ms - s[i].ms < JF_RECENT_MS;
	pthread_mutex_unlock(&R.mu);
	return r;
}
