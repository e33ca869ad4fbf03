/* SPDX-License-Identifier: MIT */
/*
 * The one grammar of sizes, durations and counts, for policy files, jailrun's
 * command line and its JSON requests. Base layer: depends on nothing above
 * it. All functions are pure and thread-safe; they return 0 or a negative
 * errno (-EINVAL: not of the grammar, -ERANGE: does not fit), and leave
 * their output alone on error.
 *
 *   size      DIGITS [K|M|G|T]  binary multiples (K = 1024), either case;
 *             "unlimited" = UINT64_MAX where the caller allows it
 *   duration  DIGITS [. DIGITS] seconds, at most millisecond precision
 *             (more digits are refused, not rounded)
 *   count     DIGITS
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Size of @len bytes at @s into @ret_bytes; "unlimited" only with
 * @allow_unlimited. */
int jf_parse_size(const char *s, size_t len, bool allow_unlimited, uint64_t *ret_bytes);
/* Duration of @len bytes at @s, in milliseconds, into @ret_ms. */
int jf_parse_duration_ms(const char *s, size_t len, uint64_t *ret_ms);
/* Count of @len bytes at @s into @ret. */
int jf_parse_count(const char *s, size_t len, uint64_t *ret);
/* Format @ms as seconds with no more decimals than needed ("2", "0.25"),
 * into @buf of @size bytes (24 is always enough). Returns @buf. */
char *jf_format_duration(uint64_t ms, char *buf, size_t size);
