/* SPDX-License-Identifier: MIT */
/*
 * Scope-bound cleanup helpers, after systemd's src/basic/macro.h and
 * bubblewrap's utils.h. Attach to a local with the matching attribute;
 * the cleanup runs when the variable leaves scope. steal_ptr()/steal_fd()
 * hand ownership to the caller and disarm the cleanup.
 *
 * Thread safety: none needed, they touch only the variable they guard.
 */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <dirent.h>

static inline void freep(void *p)
{
	free(*(void **)p);
}

/* close(2) that keeps errno: cleanup must not clobber the value being returned. */
static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)

/* Returns the fd and leaves -1 behind, so the cleanup does not close it. */
static inline int steal_fd(int *fd)
{
	int r = *fd;
	*fd = -1;
	return r;
}

/* Returns the pointer and leaves NULL behind. */
#define steal_ptr(pp)                                                                              \
	({                                                                                         \
		__typeof__(*(pp)) _p = *(pp);                                                      \
		*(pp) = NULL;                                                                      \
		_p;                                                                                \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
