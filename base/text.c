/* SPDX-License-Identifier: MIT */
/*
 * Untrusted bytes shown to a person: UTF-8 well-formedness, the characters
 * that drive a terminal or reorder text, and the one escape every
 * human-readable output of jailfs and jailrun uses (--check, --scan,
 * --audit-report, jailrun's messages on stderr). Pure string work.
 *
 * Unsafe characters (refused in names by canon.c, escaped here):
 *  - C0 controls 0x01-0x1f and DEL 0x7f: newline and ESC forge log lines and
 *    start terminal escape sequences;
 *  - C1 controls U+0080-U+009F written as UTF-8 (C2 80 .. C2 9F): U+009B is
 *    CSI, U+009D OSC, so a terminal that honours 8-bit controls decoded from
 *    UTF-8 moves the cursor or recolours text;
 *  - bidirectional embeddings, overrides and isolates U+202A-U+202E and
 *    U+2066-U+2069 ("Trojan Source", CVE-2021-42574): they reorder what the
 *    reader sees, so "exe.txt" can be shown for "txt.exe".
 * Sources: RFC 3629 and table 3-7 of the Unicode standard (well-formed
 * UTF-8), ECMA-48 (C1 set), Unicode UAX #9 (explicit directional formatting
 * characters).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

size_t jf_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t need;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 2;
	else if (c >= 0xe0 && c <= 0xef)
		need = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n < need || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < need; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return need;
}

size_t jf_unsafe_char_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];

	if (c < 0x20 || c == 0x7f)
		return 1;
	if (c == 0xc2 && n >= 2 && s[1] >= 0x80 && s[1] <= 0x9f)
		return 2; /* U+0080-U+009F */
	if (c == 0xe2 && n >= 3 && s[1] == 0x80 && s[2] >= 0xaa && s[2] <= 0xae)
		return 3; /* U+202A-U+202E */
	if (c == 0xe2 && n >= 3 && s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9)
		return 3; /* U+2066-U+2069 */
	return 0;
}

/* Bytes of the next piece of @s to copy as they are (0: escape one byte). */
static size_t plain_len(const unsigned char *s, size_t n)
{
	if (s[0] == '\\' || jf_unsafe_char_len(s, n))
		return 0;
	return jf_utf8_len(s, n);
}

size_t jf_escape(char *out, size_t size, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	bool full = size == 0;
	size_t o = 0, i = 0;

	while (i < len) {
		size_t l = plain_len(s + i, len - i);
		char e[4] = {'\\', 'x', hex[s[i] >> 4], hex[s[i] & 15]};
		size_t w = l ? l : sizeof(e);

		/* A piece is written whole or not at all, and nothing after a
		 * piece that did not fit. */
		if (!full && o + w >= size) {
			out[o] = '\0';
			full = true;
		}
		if (!full)
			memcpy(out + o, l ? str + i : e, w);
		o += w;
		i += l ? l : 1;
	}
	if (!full)
		out[o] = '\0';
	return o;
}

void jf_fput_escaped(FILE *f, const char *s, size_t len)
{
	char buf[1024];

	/* 1/4 of the buffer per round: every input byte needs at most 4. */
	for (size_t i = 0; i < len;) {
		size_t k = len - i < sizeof(buf) / 4 - 1 ? len - i : sizeof(buf) / 4 - 1;

		/* Never split a UTF-8 sequence between two rounds. */
		while (k < len - i && k > 0 && (((unsigned char)s[i + k]) & 0xc0) == 0x80)
			k--;
		if (k == 0)
			k = len - i < 4 ? len - i : 4;
		fwrite(buf, 1, jf_escape(buf, sizeof(buf), s + i, k), f);
		i += k;
	}
}
