/* SPDX-License-Identifier: MIT */
/*
 * gitignore(5) patterns: compiling a pattern line into path segments, and
 * matching one segment against one path component.
 *
 * Pattern rules (gitignore(5), "PATTERN FORMAT"):
 *  - a leading '!' negates (not in [safe]; the parser checks);
 *  - a trailing '/' matches directories only;
 *  - a '/' at the start or in the middle anchors the pattern to the view's
 *    root; without one, the pattern matches a name at any depth;
 *  - "**" as a whole segment: leading "**" / matches in all directories,
 *    trailing / "**" matches everything inside, "/ ** /" zero or more
 *    directories; any other "**" is an ordinary '*';
 *  - '*' matches anything but '/', '?' one byte, "[...]" a class with ranges,
 *    '!' or '^' negation and [:alpha:]-style names; '\' escapes.
 * Decisions beyond gitignore: the pattern "/" alone names the view's root;
 * empty, "." and ".." segments ("a//b", "./a", "a/..") are errors, since no
 * canonical path can contain them.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy-internal.h"

/* 1 if @c is in the class named @name ("alpha"), 0 if not, -1 unknown name. */
static int named_class(const char *name, size_t len, unsigned char c)
{
	static const struct {
		const char *name;
		int (*fn)(int);
	} classes[] = {
		{"alnum", isalnum}, {"alpha", isalpha}, {"blank", isblank}, {"cntrl", iscntrl},
		{"digit", isdigit}, {"graph", isgraph}, {"lower", islower}, {"print", isprint},
		{"punct", ispunct}, {"space", isspace}, {"upper", isupper}, {"xdigit", isxdigit},
	};

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strlen(classes[i].name) == len && memcmp(classes[i].name, name, len) == 0)
			return c < 0x80 && classes[i].fn(c) != 0;
	return -1;
}

/*
 * Match byte @c against the class starting at p[0] == '['. Returns 1 match,
 * 0 no match, -1 malformed (no closing ']', bad class name, dangling '\');
 * *used is the length of the class text.
 */
static int class_match(const char *p, size_t plen, unsigned char c, size_t *used)
{
	size_t i = 1;
	bool neg = false, hit = false;

	if (i < plen && (p[i] == '!' || p[i] == '^')) {
		neg = true;
		i++;
	}
	for (bool first = true;; first = false) {
		unsigned char lo, hi;

		if (i >= plen)
			return -1;
		if (p[i] == ']' && !first)
			break;
		if (p[i] == '[' && i + 1 < plen && p[i + 1] == ':') {
			const char *end = memchr(p + i + 2, ':', plen - i - 2);
			int m;

			if (!end || (size_t)(end - p) + 1 >= plen || end[1] != ']')
				return -1;
			m = named_class(p + i + 2, end - (p + i + 2), c);
			if (m < 0)
				return -1;
			if (m)
				hit = true;
			i = (end - p) + 2;
			continue;
		}
		if (p[i] == '\\') {
			if (++i >= plen)
				return -1;
		}
		lo = hi = (unsigned char)p[i++];
		if (i + 1 < plen && p[i] == '-' && p[i + 1] != ']') {
			i++;
			if (p[i] == '\\' && ++i >= plen)
				return -1;
			hi = (unsigned char)p[i++];
		}
		if (lo <= c && c <= hi)
			hit = true;
	}
	*used = i + 1;
	return hit != neg;
}

bool jf_glob_match(const char *p, size_t plen, const char *s, size_t slen)
{
	size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0;

	while (si < slen) {
		if (pi < plen) {
			char c = p[pi];
			size_t used;
			int m;

			switch (c) {
			case '*':
				while (pi < plen && p[pi] == '*')
					pi++;
				star_p = pi;
				star_s = si;
				continue;
			case '?':
				pi++;
				si++;
				continue;
			case '[':
				m = class_match(p + pi, plen - pi, (unsigned char)s[si], &used);
				if (m > 0) {
					pi += used;
					si++;
					continue;
				}
				if (m < 0 && s[si] == '[') { /* malformed: literal '[' */
					pi++;
					si++;
					continue;
				}
				break;
			case '\\':
				if (pi + 1 < plen && p[pi + 1] == s[si]) {
					pi += 2;
					si++;
					continue;
				}
				break;
			default:
				if (c == s[si]) {
					pi++;
					si++;
					continue;
				}
			}
		}
		if (star_p == SIZE_MAX)
			return false;
		pi = star_p;
		si = ++star_s;
	}
	while (pi < plen && p[pi] == '*')
		pi++;
	return pi == plen;
}

const char *jf_glob_check(const char *p, size_t plen)
{
	for (size_t i = 0; i < plen; i++) {
		size_t used;

		if (p[i] == '\\') {
			if (++i >= plen)
				return "trailing backslash";
		} else if (p[i] == '[') {
			if (class_match(p + i, plen - i, 'a', &used) < 0)
				return "unclosed or malformed '[' class";
			i += used - 1;
		}
	}
	return NULL;
}

static bool has_meta(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == '\\')
			return true;
	return false;
}

/* Removes backslash escapes in place; returns the new length. */
static size_t unescape(char *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 1 < len)
			i++;
		s[o++] = s[i];
	}
	return o;
}

static bool only_literal_after_unescape(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] == '*' || s[i] == '?' || s[i] == '[')
			return false;
	}
	return true;
}

/* Files the last segment by shape (see enum jf_last_kind). */
static void classify_last(struct jf_cpat *c, char *spare)
{
	struct jf_seg *l = &c->segs[c->nseg - 1];
	char *t = (char *)l->s;

	c->first = c->last = -1;
	if (l->kind == JF_SEG_LIT) {
		c->last_kind = JF_LAST_LIT;
		c->lit = l->s;
		c->litlen = l->len;
		return;
	}
	c->last_kind = JF_LAST_GENERIC;
	if (l->kind != JF_SEG_GLOB)
		return;
	if (l->len >= 2 && t[0] == '*' && only_literal_after_unescape(t + 1, l->len - 1) &&
	    t[1] != '*') {
		/* "*LIT": keep an unescaped copy in the spare half of buf */
		char *lit = spare;

		memcpy(lit, t + 1, l->len - 1);
		c->litlen = unescape(lit, l->len - 1);
		c->lit = lit;
		c->last_kind = JF_LAST_SUFFIX;
		return;
	}
	if (l->len >= 2 && t[l->len - 1] == '*' && t[l->len - 2] != '\\' &&
	    only_literal_after_unescape(t, l->len - 1)) {
		char *lit = spare;

		memcpy(lit, t, l->len - 1);
		c->litlen = unescape(lit, l->len - 1);
		c->lit = lit;
		c->last_kind = JF_LAST_PREFIX;
		return;
	}
	if (!strchr("*?[\\", t[0]))
		c->first = (unsigned char)t[0];
	if (!strchr("*?]", t[l->len - 1]))
		c->last = (unsigned char)t[l->len - 1];
}

static int split_segments(struct jf_cpat *c, char *s, size_t len, const char **why)
{
	size_t n = 1;

	for (size_t i = 0; i < len; i++)
		n += s[i] == '/';
	/* one spare for a trailing "**" turning into ANY1 + STARSTAR */
	c->segs = calloc(n + 1, sizeof(*c->segs));
	if (!c->segs)
		return -ENOMEM;
	c->nseg = 0;
	for (size_t start = 0; start <= len;) {
		char *end = memchr(s + start, '/', len - start);
		size_t sl = (end ? (size_t)(end - s) : len) - start;
		struct jf_seg *g = &c->segs[c->nseg++];

		g->s = s + start;
		g->len = sl;
		if (sl == 0) {
			*why = "empty path component in pattern";
			return -EINVAL;
		}
		if ((sl == 1 && s[start] == '.') ||
		    (sl == 2 && s[start] == '.' && s[start + 1] == '.')) {
			*why = "'.' or '..' component in pattern";
			return -EINVAL;
		}
		if (sl == 2 && s[start] == '*' && s[start + 1] == '*' && c->anchored) {
			g->kind = JF_SEG_STARSTAR;
		} else if (!has_meta(g->s, sl)) {
			g->kind = JF_SEG_LIT;
		} else {
			*why = jf_glob_check(g->s, sl);
			if (*why)
				return -EINVAL;
			if (only_literal_after_unescape(g->s, sl)) {
				g->kind = JF_SEG_LIT;
				g->len = unescape(s + start, sl);
			} else {
				g->kind = JF_SEG_GLOB;
			}
		}
		start += sl + 1;
	}
	return 0;
}

/* "**" / X  is the same as the unanchored X; X / "**" is X / ANY1 / "**". */
static void simplify(struct jf_cpat *c)
{
	if (!c->anchored)
		return;
	if (c->nseg == 2 && c->segs[0].kind == JF_SEG_STARSTAR &&
	    c->segs[1].kind != JF_SEG_STARSTAR) {
		c->segs[0] = c->segs[1];
		c->nseg = 1;
		c->anchored = false;
		return;
	}
	if (c->segs[c->nseg - 1].kind == JF_SEG_STARSTAR) {
		c->segs[c->nseg - 1].kind = JF_SEG_ANY1;
		c->segs[c->nseg] = c->segs[c->nseg - 1];
		c->segs[c->nseg].kind = JF_SEG_STARSTAR;
		c->nseg++;
	}
}

int jf_cpat_compile(const char *text, size_t len, bool fold, struct jf_cpat *out, const char **why)
{
	char *s, *spare;
	int r;

	memset(out, 0, sizeof(*out));
	out->fold = fold;
	out->speclen = len > UINT16_MAX ? UINT16_MAX : len;
	*why = "empty pattern";
	if (len > 0 && text[0] == '!') {
		out->negated = true;
		text++;
		len--;
	}
	if (len == 0)
		return -EINVAL;
	if (len == 1 && text[0] == '/') {
		out->last_kind = JF_LAST_ROOT;
		return 0;
	}
	/* room for the text, a NUL, and a second copy for a SUFFIX/PREFIX literal */
	out->buf = s = malloc(2 * len + 2);
	if (!s)
		return -ENOMEM;
	spare = s + len + 1;
	memcpy(s, text, len);
	s[len] = '\0';
	if (fold)
		for (size_t i = 0; i < len; i++)
			s[i] = tolower((unsigned char)s[i]);
	if (s[len - 1] == '/') {
		out->dir_only = true;
		len--;
	}
	if (memchr(s, '/', len)) {
		out->anchored = true;
		if (s[0] == '/') {
			s++;
			len--;
		}
	}
	if (len == 0) {
		r = -EINVAL;
		goto fail;
	}
	r = split_segments(out, s, len, why);
	if (r < 0)
		goto fail;
	simplify(out);
	classify_last(out, spare);
	return 0;
fail:
	jf_cpat_free(out);
	return r;
}

void jf_cpat_free(struct jf_cpat *c)
{
	free(c->segs);
	free(c->buf);
	c->segs = NULL;
	c->buf = NULL;
}
