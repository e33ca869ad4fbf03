/* SPDX-License-Identifier: MIT */
/*
 * Helpers for any cmocka test program, unit or mount (mount-util.h has the
 * ones that mount).
 */
#pragma once

#include <stddef.h>

/* The whole of file @path, NUL-terminated, in memory the caller frees; its
 * length in *@len unless @len is NULL. Fails the running test when @path
 * cannot be opened. */
char *tu_slurp(const char *path, size_t *len);
