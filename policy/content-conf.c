/* SPDX-License-Identifier: MIT */
/*
 * The [content] section of a policy and the one rule that joins a content
 * verdict to the zone of a name (jf_classify_content). The rule in words is
 * in man/jailfs-policy.5.scd, "CONTENT".
 *
 *   [content]
 *   scan = on|off                 default on, off with "profiles = -secrets"
 *   detectors = all | NAME, ...   "all, -jwt" takes some away; default all
 *   PATTERN                       a secret whatever the detectors say
 *   !PATTERN                      never a secret by content
 *
 * The patterns are gitignore(5) lines matched as [denied] ones are (a
 * directory covers what is below it, ASCII case folded); each kind is held
 * in a small policy of its own, so matching is jf_classify()'s.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-internal.h"
#include "secrets.h"

#define CONTENT_RULE_SOURCE "content"

static const struct jf_rule content_rule = {
	.source = CONTENT_RULE_SOURCE, .pattern = "", .zone = JF_DENIED};

static bool word_is(const char *s, size_t len, const char *w)
{
	return strlen(w) == len && strncasecmp(s, w, len) == 0;
}

static void trim(const char **s, size_t *len)
{
	while (*len && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*len)--;
	}
	while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
		(*len)--;
}

/* "all", "NAME, NAME", "all, -NAME": the mask they select, or -EINVAL. */
static int parse_detectors(const char *v, size_t len, uint32_t *mask, char *why, size_t wsz)
{
	*mask = 0;
	for (size_t i = 0; i < len;) {
		const char *comma = memchr(v + i, ',', len - i);
		const char *t = v + i;
		size_t n = (comma ? (size_t)(comma - v) : len) - i;
		bool minus;
		int d;

		i += n + 1;
		trim(&t, &n);
		if (n == 0)
			continue;
		minus = t[0] == '-';
		if (word_is(t, n, "all")) {
			*mask = JF_DET_ALL;
			continue;
		}
		d = jf_secret_det_lookup(t + minus, n - minus);
		if (d < 0) {
			snprintf(why, wsz, "unknown detector '%.*s' (docs/secrets.md lists them)",
				 (int)(n > 40 ? 40 : n), t);
			return -EINVAL;
		}
		if (minus)
			*mask &= ~(1u << d);
		else
			*mask |= 1u << d;
	}
	return 0;
}

/* Append @len bytes and a newline to the text *@buf of *@n bytes. */
static int text_add(char **buf, size_t *n, const char *s, size_t len)
{
	char *b = realloc(*buf, *n + len + 2);

	if (!b)
		return -ENOMEM;
	memcpy(b + *n, s, len);
	b[*n + len] = '\n';
	b[*n + len + 1] = '\0';
	*buf = b;
	*n += len + 1;
	return 0;
}

int jf_content_conf_line(struct jf_content_conf *c, const char *s, size_t len, char *why,
			 size_t wsz)
{
	const char *eq = memchr(s, '=', len), *k = s, *v;
	size_t klen, vlen;

	if (!eq || s[0] == '!' || s[0] == '/' || memchr(s, '/', (size_t)(eq - s))) {
		struct jf_cpat cp;
		const char *pwhy = NULL;
		bool neg = s[0] == '!';
		int r = jf_cpat_compile(s, len, true, &cp, &pwhy);

		if (r < 0) {
			snprintf(why, wsz, "bad pattern: %s", pwhy ? pwhy : "out of memory");
			return r;
		}
		jf_cpat_free(&cp);
		if (neg)
			return text_add(&c->public_text, &c->public_len, s + 1, len - 1);
		return text_add(&c->secret_text, &c->secret_len, s, len);
	}
	klen = (size_t)(eq - s);
	v = eq + 1;
	vlen = len - klen - 1;
	trim(&k, &klen);
	trim(&v, &vlen);
	if (word_is(k, klen, "scan")) {
		if (!word_is(v, vlen, "on") && !word_is(v, vlen, "off")) {
			snprintf(why, wsz, "scan must be on or off");
			return -EINVAL;
		}
		c->seen_scan = true;
		c->scan = word_is(v, vlen, "on");
		return 0;
	}
	if (word_is(k, klen, "detectors")) {
		c->seen_detectors = true;
		return parse_detectors(v, vlen, &c->detectors, why, wsz);
	}
	snprintf(why, wsz, "unknown key '%.*s' in [content] (expected scan or detectors)",
		 (int)(klen > 40 ? 40 : klen), k);
	return -EINVAL;
}

/* A policy whose [denied] holds the lines of @text (NULL: none). */
static int names_policy(const char *text, struct jf_policy **out)
{
	char *full;
	int r;

	*out = NULL;
	if (!text)
		return 0;
	if (asprintf(&full, "[options]\ndefault = safe\nprofiles = -secrets\n[denied]\n%s", text) <
	    0)
		return -ENOMEM;
	r = jf_policy_parse("[content]", full, strlen(full), out, NULL, 0);
	free(full);
	return r;
}

int jf_content_conf_apply(struct jf_content_conf *c, bool secrets_removed, struct jf_policy *p)
{
	int r;

	p->content_scan = c->seen_scan ? c->scan : !secrets_removed;
	p->content_detectors = c->seen_detectors ? c->detectors : JF_DET_ALL;
	r = names_policy(c->secret_text, &p->content_secret);
	if (r == 0)
		r = names_policy(c->public_text, &p->content_public);
	return r;
}

void jf_content_conf_free(struct jf_content_conf *c)
{
	free(c->secret_text);
	free(c->public_text);
	memset(c, 0, sizeof(*c));
}

bool jf_policy_content_scan(const struct jf_policy *p, uint32_t *detectors)
{
	if (detectors)
		*detectors = p->content_scan ? p->content_detectors : 0;
	return p->content_scan && p->content_detectors;
}

static bool names_match(const struct jf_policy *names, const char *path, size_t len)
{
	struct jf_verdict v;

	if (!names)
		return false;
	jf_classify(names, path, len, false, &v);
	return v.zone == JF_DENIED && v.rule;
}

int jf_policy_content_name(const struct jf_policy *p, const char *path, size_t len)
{
	if (names_match(p->content_secret, path, len))
		return 1;
	if (names_match(p->content_public, path, len))
		return 0;
	return -1;
}

/* Bytes a built-in extension rule may let through on "not a secret": text
 * (no NUL) whose armor, if any, is of public kinds only. */
static bool plain_or_public(enum jf_content kind, const char *buf, size_t len)
{
	if (memchr(buf, '\0', len))
		return false;
	if (!memmem(buf, len, "-----BEGIN", 10))
		return true;
	return jf_content_public(kind, buf, len);
}

void jf_classify_content(const struct jf_policy *p, const char *path, size_t len, int secret,
			 const char *buf, size_t blen, struct jf_verdict *out)
{
	int forced = jf_policy_content_name(p, path, len);

	jf_classify(p, path, len, false, out);
	if (!p->content_scan)
		return;
	if (forced >= 0)
		secret = forced;
	if (secret > 0) {
		if (out->zone != JF_DENIED)
			*out = (struct jf_verdict){
				.zone = JF_DENIED, .rule = &content_rule, .by_content = true};
		return;
	}
	if (out->zone == JF_DENIED && out->rule && out->rule->content != JF_CONTENT_NONE &&
	    (forced == 0 || plain_or_public(out->rule->content, buf, blen))) {
		jf_classify_public(p, path, len, out);
		out->by_content = true;
	}
}
