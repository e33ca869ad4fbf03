/* SPDX-License-Identifier: MIT */
/*
 * Canonicalization of untrusted path bytes (docs/threat-model.md, "Path
 * tricks the policy library refuses"). Pure string work, no filesystem access.
 *
 * Refusals, checked in this order so a path with several problems always
 * gets the same reason: empty, nul, path_too_long, encoded, control,
 * lookalike, dotdot, name_too_long, outside_root (and path_too_long again if
 * @base plus the path exceed JF_PATH_MAX).
 *
 * Decisions (also in jailfs-policy(5), SEMANTICS):
 *  - control bytes 0x01-0x1f and 0x7f, C1 controls U+0080-U+009F and the
 *    bidirectional embeddings, overrides and isolates U+202A-U+202E,
 *    U+2066-U+2069 (jf_unsafe_char_len) are refused anywhere: a name with a
 *    newline, an escape sequence or a reordering forges log lines and
 *    terminal output;
 *  - Unicode characters that NFKC-normalize to '.', '/' or '\' are refused:
 *    fullwidth U+FF0E '．', U+FF0F '／', U+FF3C '＼', small full stop
 *    U+FE52 '﹒', one/two dot leaders U+2024 '․' and U+2025 '‥'. Linux
 *    does not interpret them, but a tool that normalizes names (a Python or
 *    Java library, a Windows share) turns "．．／" into "../";
 *  - trailing dots and spaces are *not* refused here (they are legal and
 *    common in names); the classifier strips them when matching the
 *    protective zones, so ".env." and "id_rsa " are still secrets;
 *  - "%" followed by any number of "25" and then 2e, 2f or 5c (any case) is
 *    an encoded dot, slash or backslash: "%2e", "%252e", "%25252E". Other
 *    percent signs ("100%", "%41") are ordinary bytes.
 */
#include <errno.h>
#include <string.h>

#include "policy.h"
#include "text.h"

const char *jf_zone_name(enum jf_zone zone)
{
	switch (zone) {
	case JF_SAFE:
		return "SAFE";
	case JF_RESTRICTED:
		return "RESTRICTED";
	case JF_DENIED:
		break;
	}
	return "DENIED";
}

static const struct {
	const char *reason;
	const char *message;
} refusals[] = {
	[JF_REFUSE_NONE] = {"none", "accepted"},
	[JF_REFUSE_DOTDOT] = {"dotdot", "'..' component leaves the view"},
	[JF_REFUSE_ENCODED] = {"encoded",
			       "URL-encoded dot, slash or backslash (%2e %2f %5c %25..)"},
	[JF_REFUSE_NUL] = {"nul", "embedded NUL byte"},
	[JF_REFUSE_PATH_TOO_LONG] = {"path_too_long", "path longer than 4096 bytes (PATH_MAX)"},
	[JF_REFUSE_NAME_TOO_LONG] = {"name_too_long", "component longer than 255 bytes (NAME_MAX)"},
	[JF_REFUSE_OUTSIDE_ROOT] = {"outside_root", "absolute path outside the source directory"},
	[JF_REFUSE_CONTROL] = {"control", "control character in a name"},
	[JF_REFUSE_LOOKALIKE] = {"lookalike",
				 "fullwidth or lookalike dot/slash (U+FF0E, U+FF0F...)"},
	[JF_REFUSE_EMPTY] = {"empty", "empty path"},
};

const char *jf_refusal_reason(enum jf_refusal r)
{
	if ((unsigned)r >= sizeof(refusals) / sizeof(refusals[0]))
		return "unknown";
	return refusals[r].reason;
}

const char *jf_refusal_message(enum jf_refusal r)
{
	if ((unsigned)r >= sizeof(refusals) / sizeof(refusals[0]))
		return "unknown refusal";
	return refusals[r].message;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Is there an encoded '.', '/' or '\' at s[i] == '%' (any depth of %25)? */
static bool encoded_at(const unsigned char *s, size_t len, size_t i)
{
	for (;;) {
		int hi, lo;

		if (i + 2 >= len)
			return false;
		hi = hexval(s[i + 1]);
		lo = hexval(s[i + 2]);
		if (hi < 0 || lo < 0)
			return false;
		if ((hi == 2 && (lo == 0xe || lo == 0xf)) || (hi == 5 && lo == 0xc))
			return true;
		if (hi != 2 || lo != 5)
			return false;
		i += 2; /* "%25" + "2e": s[i] is now the '5', treat as the new '%' */
	}
}

/* UTF-8 sequences for characters that NFKC-normalize to '.', '/' or '\'. */
static bool lookalike_at(const unsigned char *s, size_t len, size_t i)
{
	if (i + 2 >= len)
		return false;
	if (s[i] == 0xef && s[i + 1] == 0xbc)
		return s[i + 2] == 0x8e || s[i + 2] == 0x8f ||
		       s[i + 2] == 0xbc; /* U+FF0E/F, FF3C */
	if (s[i] == 0xef && s[i + 1] == 0xb9)
		return s[i + 2] == 0x92; /* U+FE52 */
	if (s[i] == 0xe2 && s[i + 1] == 0x80)
		return s[i + 2] == 0xa4 || s[i + 2] == 0xa5; /* U+2024, U+2025 */
	return false;
}

/* Byte-level checks over the whole input, in refusal order. */
static enum jf_refusal scan_bytes(const unsigned char *s, size_t len)
{
	bool enc = false, ctl = false, look = false;

	if (memchr(s, '\0', len))
		return JF_REFUSE_NUL;
	if (len > JF_PATH_MAX)
		return JF_REFUSE_PATH_TOO_LONG;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c < 0x20 || c == 0x7f ||
		    ((c == 0xc2 || c == 0xe2) && jf_unsafe_char_len(s + i, len - i)))
			ctl = true;
		else if (c == '%')
			enc = enc || encoded_at(s, len, i);
		else if (c == 0xef || c == 0xe2)
			look = look || lookalike_at(s, len, i);
	}
	if (enc)
		return JF_REFUSE_ENCODED;
	if (ctl)
		return JF_REFUSE_CONTROL;
	if (look)
		return JF_REFUSE_LOOKALIKE;
	return JF_REFUSE_NONE;
}

/* Next component of s[*i..len): skips '/' runs; returns its length, 0 at end. */
static size_t next_comp(const char *s, size_t len, size_t *i, const char **comp)
{
	size_t start;

	while (*i < len && s[*i] == '/')
		(*i)++;
	start = *i;
	while (*i < len && s[*i] != '/')
		(*i)++;
	*comp = s + start;
	return *i - start;
}

static bool is_dot(const char *c, size_t n)
{
	return n == 1 && c[0] == '.';
}

static bool is_dotdot(const char *c, size_t n)
{
	return n == 2 && c[0] == '.' && c[1] == '.';
}

/* dotdot, then name_too_long, over every component of the input. */
static enum jf_refusal scan_components(const char *s, size_t len)
{
	bool too_long = false;
	const char *c;
	size_t n, i = 0;

	while ((n = next_comp(s, len, &i, &c)) > 0) {
		if (is_dotdot(c, n))
			return JF_REFUSE_DOTDOT;
		if (n > JF_NAME_MAX)
			too_long = true;
	}
	return too_long ? JF_REFUSE_NAME_TOO_LONG : JF_REFUSE_NONE;
}

/*
 * Consume the components of @root from the absolute input, component by
 * component ("." ignored on both sides). Returns the input offset where the
 * view-relative part starts, or -1 when the input is not inside root.
 */
static long strip_root(const char *root, const char *s, size_t len)
{
	size_t rlen = strlen(root), ri = 0, si = 0;

	for (;;) {
		const char *rc, *sc;
		size_t rn, sn;

		do
			rn = next_comp(root, rlen, &ri, &rc);
		while (is_dot(rc, rn));
		if (rn == 0)
			return (long)si;
		do
			sn = next_comp(s, len, &si, &sc);
		while (is_dot(sc, sn));
		if (sn != rn || memcmp(rc, sc, rn) != 0)
			return -1;
	}
}

static int refuse(struct jf_canon *out, enum jf_refusal r)
{
	out->refusal = r;
	out->path[0] = '\0';
	out->len = 0;
	return -EINVAL;
}

int jf_canonicalize(const char *root, const char *base, const char *in, size_t len,
		    struct jf_canon *out)
{
	enum jf_refusal r;
	size_t i = 0, o = 0, n;
	const char *c;

	if (len == 0)
		return refuse(out, JF_REFUSE_EMPTY);
	r = scan_bytes((const unsigned char *)in, len);
	if (r == JF_REFUSE_NONE)
		r = scan_components(in, len);
	if (r != JF_REFUSE_NONE)
		return refuse(out, r);
	if (in[0] == '/') {
		long off = (root && root[0] == '/') ? strip_root(root, in, len) : -1;

		if (off < 0)
			return refuse(out, JF_REFUSE_OUTSIDE_ROOT);
		i = (size_t)off;
	} else if (base && base[0]) {
		o = strlen(base);
		if (o > JF_PATH_MAX)
			return refuse(out, JF_REFUSE_PATH_TOO_LONG);
		memcpy(out->path, base, o);
	}
	while ((n = next_comp(in, len, &i, &c)) > 0) {
		if (is_dot(c, n))
			continue;
		if (o + (o > 0) + n > JF_PATH_MAX)
			return refuse(out, JF_REFUSE_PATH_TOO_LONG);
		if (o > 0)
			out->path[o++] = '/';
		memcpy(out->path + o, c, n);
		o += n;
	}
	out->path[o] = '\0';
	out->len = o;
	out->refusal = JF_REFUSE_NONE;
	return 0;
}

enum jf_refusal jf_check_name(const char *name, size_t len)
{
	enum jf_refusal r;

	if (len == 0)
		return JF_REFUSE_EMPTY;
	if (is_dot(name, len) || is_dotdot(name, len))
		return JF_REFUSE_DOTDOT;
	r = scan_bytes((const unsigned char *)name, len);
	if (r == JF_REFUSE_PATH_TOO_LONG || (r == JF_REFUSE_NONE && len > JF_NAME_MAX))
		return JF_REFUSE_NAME_TOO_LONG;
	if (r == JF_REFUSE_NONE && memchr(name, '/', len))
		return JF_REFUSE_OUTSIDE_ROOT;
	return r;
}
