/* SPDX-License-Identifier: MIT */
/*
 * Untrusted bytes shown to a person (text.c): UTF-8 well-formedness, the
 * characters that drive a terminal or reorder text, and the one escape
 * every human-readable output uses. Base layer: depends on nothing above it.
 */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* Length (1-4) of the well-formed UTF-8 sequence at @s (@n > 0 bytes
 * available), 0 when the bytes there are not one: overlong forms, surrogates
 * D800-DFFF, above U+10FFFF, truncated (RFC 3629, Unicode table 3-7).
 * Thread-safe, no allocation. */
size_t jf_utf8_len(const unsigned char *s, size_t n);
/* Length of the unsafe character at @s (@n > 0 bytes available), 0 when
 * there is none: a C0 control byte or DEL (1), a C1 control U+0080-U+009F as
 * UTF-8 (2), a bidirectional control U+202A-U+202E or U+2066-U+2069 (3).
 * Names holding one are refused (JF_REFUSE_CONTROL). Thread-safe. */
size_t jf_unsafe_char_len(const unsigned char *s, size_t n);
/*
 * The escape of every human-readable output: @len bytes at @s with each
 * unsafe character's bytes (jf_unsafe_char_len), each byte that is not part
 * of well-formed UTF-8 and each backslash written as \xHH (lowercase hex);
 * other UTF-8 is kept. Writes at most @size bytes to @out, NUL-terminated
 * when @size > 0, never a piece of an escape or of a UTF-8 sequence. Returns
 * the length of the whole escape (like snprintf: truncated when >= @size); at
 * most 4 * @len. Thread-safe, no allocation.
 */
size_t jf_escape(char *out, size_t size, const char *s, size_t len);
/* jf_escape() of @len bytes at @s, written to @f (stdio errors are the
 * stream's). Thread-safe as stdio is. */
void jf_fput_escaped(FILE *f, const char *s, size_t len);
