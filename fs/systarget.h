/* SPDX-License-Identifier: MIT */
/*
 * What an absolute symlink target below a system directory leads to on the
 * host (systarget.c): the view shows such a target as it is, and a host
 * program that follows links through the view (tar -h, an indexer) goes
 * wherever the host's system directories send it.
 */
#pragma once

/* Links followed before a walk gives up with -ELOOP, as the kernel does. */
#define JF_SYSTARGET_MAX_HOPS 40
/* How long (ms, CLOCK_MONOTONIC) jf_systarget_check() reuses a verdict. */
#define JF_SYSTARGET_TTL_MS 1000

/*
 * Resolve the absolute path @target from @root_fd (an O_PATH fd of the
 * host's "/", or of a stand-in in the tests: ".." never climbs above it),
 * one component at a time with openat(O_PATH | O_NOFOLLOW) and readlinkat,
 * as the kernel would. Returns 0 when every path the walk reaches is a
 * system directory (jf_system_dirs) or below one ("/" only in passing) and
 * the walk ends at a regular file; -EACCES when it leaves them or ends
 * elsewhere; -ELOOP after JF_SYSTARGET_MAX_HOPS links; -ENAMETOOLONG; or
 * the -errno of a call (fail closed: an unreadable step refuses). Opens
 * and closes its own fds, leaves @root_fd open; thread-safe.
 */
int jf_systarget_resolve(int root_fd, const char *target);

/*
 * jf_systarget_resolve() with its verdicts cached per target text for
 * JF_SYSTARGET_TTL_MS (a venv's links are looked up again and again; a
 * change of the host's system directories is seen at the first check after
 * that). Only time invalidates an entry. Thread-safe (one mutex, never
 * held across a system call).
 */
int jf_systarget_check(int root_fd, const char *target);
