/* SPDX-License-Identifier: MIT */
/*
 * The directories this mount made, by (st_dev, st_ino): a hash set under
 * one mutex, touched by mkdir, rmdir and the creation of a name subject to
 * content only. Kept apart from the inode table, whose entries go when the
 * kernel forgets them: the answer for a directory must not change with the
 * kernel's cache. About 32 bytes a directory.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "newdirs.h"

struct newdir {
	struct newdir *next;
	dev_t dev;
	ino_t ino;
};

#define NBUCKETS 4096u

static struct {
	pthread_mutex_t lock;
	struct newdir *bucket[NBUCKETS];
	unsigned count;
} nd = {.lock = PTHREAD_MUTEX_INITIALIZER};

static struct newdir **slot(dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)ino ^ ((uint64_t)dev << 32)) * 0x9e3779b97f4a7c15ull;

	return &nd.bucket[(h >> 40) % NBUCKETS];
}

/* The link pointing at (@dev, @ino)'s node, or at the NULL ending its
 * chain. Caller holds nd.lock. */
static struct newdir **find(dev_t dev, ino_t ino)
{
	struct newdir **p = slot(dev, ino);

	while (*p && ((*p)->dev != dev || (*p)->ino != ino))
		p = &(*p)->next;
	return p;
}

void jf_newdir_add(dev_t dev, ino_t ino)
{
	struct newdir **p, *n;

	pthread_mutex_lock(&nd.lock);
	p = find(dev, ino);
	if (!*p && nd.count < JF_NEWDIRS_MAX && (n = malloc(sizeof(*n)))) {
		*n = (struct newdir){.next = NULL, .dev = dev, .ino = ino};
		*p = n;
		nd.count++;
	}
	pthread_mutex_unlock(&nd.lock);
}

void jf_newdir_forget(dev_t dev, ino_t ino)
{
	struct newdir **p, *n;

	pthread_mutex_lock(&nd.lock);
	p = find(dev, ino);
	if ((n = *p)) {
		*p = n->next;
		free(n);
		nd.count--;
	}
	pthread_mutex_unlock(&nd.lock);
}

bool jf_newdir_is(dev_t dev, ino_t ino)
{
	bool r;

	pthread_mutex_lock(&nd.lock);
	r = *find(dev, ino) != NULL;
	pthread_mutex_unlock(&nd.lock);
	return r;
}
