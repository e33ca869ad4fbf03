/* SPDX-License-Identifier: MIT */
/*
 * jailrun's own messages and failures (fail.c): on stderr, escaped with
 * jf_escape, and under --json also as the JSON result on stdout. die() and
 * usage_error() exit; they serve start-up, parsing and setup, before the
 * command runs. Not thread-safe (jailrun is single-threaded).
 */
#pragma once

#include <stdbool.h>

#include "cleanup.h"

/* --json was given: a failure is a JSON result on stdout too. Set while
 * the options are parsed. */
extern bool jr_fail_json;

/* "jailrun: MESSAGE" on stderr. Messages quote paths, names and reasons
 * taken from the command line, the request and the policy: the whole text
 * goes through jf_escape, so none can drive the reader's terminal. */
_printf_(1, 2) void say(const char *fmt, ...);

/* jailrun itself failed: say so (and print the JSON result under --json),
 * exit 125 (JR_EXIT_ERROR). */
_printf_(1, 2) _Noreturn void die(const char *fmt, ...);

/* The command line or the request is wrong: say so, point at --help, exit
 * 2 (JR_EXIT_USAGE). */
_printf_(1, 2) _Noreturn void usage_error(const char *fmt, ...);
