/* SPDX-License-Identifier: MIT */
/*
 * jailrun internals shared between the runner's source files.
 *
 * Topics and files:
 *   resolve.c  the jail's file namespace as seen from jailrun (jr_map) and
 *              exec-style path resolution inside it (jr_resolve)
 *   guard.c    the guardrails: pure checks of a request, decided before any
 *              process is spawned (jr_guard_*); the wrapper table
 *   guard-path.c   path arguments: where they lead, what may be named
 *   guard-shell.c  --shell strings split into simple commands
 *   guard-lang.c   inline programs of awk, sed, gdb, tar, pwsh, sqlite3 (jr_*_runs_code)
 *   guard-tools.c  env, find, git, cmake, npm, python -m, node data: URLs, copies of
 *                  denied binaries, and environment variables that make tools run code
 *   guard.h    internals shared by the guard*.c files
 *   view.c     --root mountinfo check, the one-shot jailfs mount
 *   gitdir.c   the main repository's git directory of a linked work tree
 *   home.c     the jail's home directory, the toolchains exposed in it
 *   sandbox.c  namespaces, mounts, pivot_root, caps, seccomp, rlimits
 *   mountfd.c  mounts attached through fds, without following a symlink
 *   capture.c  bounded output capture, timeout, tree kill
 *   termfilter.c  terminal escape sequences kept or dropped (termfilter.h)
 *   result.c   exit statuses and the --json result
 *   env.c      the command's environment (allowlist, [run] env, --env)
 *   main.c     options, --request JSON, the flow
 *
 * Conventions: functions return 0 or a negative errno; nothing here is
 * thread-safe unless said (jailrun is single-threaded).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"
#include "capture.h"
#include "env.h"
#include "gitdir.h"
#include "guard-lang.h"
#include "guard.h"
#include "home.h"
#include "mountfd.h"
#include "resolve.h"
#include "sandbox.h"
#include "view.h"

/* Exit statuses (bash and coreutils timeout(1) conventions). */
#define JR_EXIT_TIMEOUT 124 /* the command ran out of time */
#define JR_EXIT_USAGE 2	    /* bad options or request (as bwrap and coreutils) */
#define JR_EXIT_ERROR 125   /* jailrun itself failed (setup) */
#define JR_EXIT_DENIED 126  /* a guardrail refused the command */
#define JR_JSON_DENIED (-100)
#define JR_JSON_TIMEOUT (-101)
