/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the cmocka programs that test jailrun's result
 * (runner/result.h): test-runner.c and test-hints.c.
 */
#pragma once

#include <jansson.h>

#include "result.h"

/* Print @r as jailrun does (jr_result_print() to stdout, at most 8 KiB) and
 * return the JSON object it printed, NUL escapes allowed, or NULL when it
 * does not parse; the caller json_decref()s it. Fails the running test when
 * stdout cannot be redirected or nothing was printed. Not thread-safe (it
 * moves fd 1). */
json_t *ru_print_report(const struct jr_report *r);
