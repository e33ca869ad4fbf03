/* SPDX-License-Identifier: MIT */
/*
 * The daemon's file descriptors. Every request needs a few for a moment
 * (the directory of a lookup, readdir's stream, a file opened for one read
 * in no_open mode), every worker thread a splice pipe; an open file or
 * directory handle holds one for as long as the kernel keeps it open, that
 * is for as long as the caller likes. Unbounded, one process opening one
 * file thousands of times takes every fd of the daemon, and every other user
 * of the mount then gets EMFILE from ls and stat.
 *
 * So the fds that outlive a request are counted and bounded below
 * RLIMIT_NOFILE, leaving a reserve of JF_FD_RESERVE_BASE plus
 * JF_FD_PER_THREAD per worker thread:
 *   open files (OPEN, CREATE, no_open orphan fds)  limit - reserve
 *   directory handles (OPENDIR)                    limit - reserve / 2
 * An open past its bound answers EMFILE, what open(2) says when a process is
 * out of fds. Lookups, getattr and readdir keep at least half the reserve
 * whatever is open, and listing a directory still works when open files are
 * at their bound. At start-up the soft RLIMIT_NOFILE is raised to the hard
 * limit, as most daemons do.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/resource.h>

#include "fd-budget.h"

#define JF_FD_RESERVE_BASE 64 /* stdio, /dev/fuse, SOURCE, audit, inotify, index walk */
#define JF_FD_PER_THREAD 6    /* a splice pipe and up to 4 fds of one request */

static atomic_long held;
static long max_held[2] = {LONG_MAX, LONG_MAX};

void jf_fd_budget_init(unsigned workers)
{
	struct rlimit rl;
	long limit, reserve;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit raised = {rl.rlim_max, rl.rlim_max};

		if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
			rl = raised;
	}
	limit = rl.rlim_cur > INT_MAX ? INT_MAX : (long)rl.rlim_cur;
	reserve = JF_FD_RESERVE_BASE + JF_FD_PER_THREAD * (long)workers;
	if (reserve > limit / 4 * 3)
		reserve = limit / 4 * 3; /* a tiny limit: still leave opens a quarter */
	max_held[JF_FD_FILE] = limit - reserve;
	max_held[JF_FD_DIR] = limit - reserve / 2;
}

int jf_fd_take(enum jf_fd_kind kind)
{
	if (atomic_fetch_add(&held, 1) < max_held[kind])
		return 0;
	atomic_fetch_sub(&held, 1);
	return -EMFILE;
}

void jf_fd_put(void)
{
	atomic_fetch_sub(&held, 1);
}
