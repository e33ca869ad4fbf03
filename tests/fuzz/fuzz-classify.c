/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: jf_canonicalize + jf_classify.
 *
 * Input: one flag byte, then the path bytes.
 *   bit 0      is_dir
 *   bit 1      canonicalize relative to base "src/sub" instead of the root
 *   bit 2      read-only policy view
 *   bits 3-4   policy: 0 built-in default, 1 a fixed policy exercising every
 *              pattern form, 2 the system profile, 3 from the input: policy
 *              text up to the first NUL byte, the path after it
 *
 * Checks, beyond the sanitizers:
 *  - a canonical path has no empty, "." or ".." component, no leading or
 *    trailing '/', is at most 4096 bytes, and canonicalizes to itself;
 *  - the indexed classifier agrees with a slow reference that tries every
 *    rule at every depth (no hash table, no prefilters);
 *  - DENIED does not depend on ASCII case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-internal.h"

static const char fixed_policy[] =
	"[safe]\n/\nvendor/patches/\nsrc/**/*.c\n/Docs/\n[restricted]\nvendor/\n*.h\n"
	"a/**/b\n/build/**\n[ab]?[!c]*.txt\n**/x/y\nCON*\n\\#lit\n[denied]\n.env*\n"
	"!.env.example\nlogs/\n!logs/keep\nout/*\n!out/keep\n*.p[ae]m\nid_*\n**/.cfg/*/tok\n"
	"tmp/\n/root\nsp\\ \n[[:digit:]]*x\n*~\n[options]\ndefault = restricted\n"
	"profiles = secrets, project\n";

static struct jf_policy *policies[3];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[512];

	(void)argc;
	(void)argv;
	if (jf_policy_default(&policies[0]) < 0 ||
	    jf_policy_parse("fixed", fixed_policy, sizeof(fixed_policy) - 1, &policies[1], err,
			    sizeof(err)) < 0 ||
	    jf_policy_parse("system", "[options]\nprofiles = system\n", 28, &policies[2], err,
			    sizeof(err)) < 0) {
		fprintf(stderr, "fuzz-classify: %s\n", err);
		abort();
	}
	return 0;
}

/* ---- slow reference classifier ---- */

#define REF_MAX 48

struct ref {
	const char *fold_buf, *exact;
	size_t off[REF_MAX], len[REF_MAX], slen[REF_MAX], n;
	char fold[JF_PATH_MAX + 1];
	bool is_dir, any_strip;
};

static bool ref_seg(const struct jf_seg *g, const char *s, size_t len)
{
	if (g->kind == JF_SEG_LIT)
		return g->len == len && memcmp(g->s, s, len) == 0;
	if (g->kind == JF_SEG_GLOB)
		return jf_glob_match(g->s, g->len, s, len);
	return true; /* ANY1 */
}

/* dp[si][ci]: segs[si..] match comps[ci..k) */
static bool ref_segs(const struct jf_cpat *c, const struct ref *x, const char *buf,
		     const size_t *lens, size_t k)
{
	static bool dp[2 * REF_MAX + 2][REF_MAX + 1];

	for (size_t si = c->nseg + 1; si-- > 0;) {
		for (size_t ci = k + 1; ci-- > 0;) {
			bool m;

			if (si == c->nseg) {
				m = ci == k;
			} else if (c->segs[si].kind == JF_SEG_STARSTAR) {
				m = dp[si + 1][ci] || (ci < k && dp[si][ci + 1]);
			} else {
				m = ci < k && ref_seg(&c->segs[si], buf + x->off[ci], lens[ci]) &&
				    dp[si + 1][ci + 1];
			}
			dp[si][ci] = m;
		}
	}
	return dp[0][0];
}

/* Does rule @u (compiled @c) match prefix @k of @x? A trailing '/' limits a
 * [safe] rule or an exception to directories; a [denied] or [restricted]
 * rule holds the name whatever the object is. */
static bool ref_match(const struct jf_cpat *c, const struct jf_rule *u, const struct ref *x,
		      size_t k)
{
	if (k == 0 || c->last_kind == JF_LAST_ROOT)
		return k == 0 && c->last_kind == JF_LAST_ROOT;
	if (c->dir_only && (u->zone == JF_SAFE || u->negated) && k == x->n && !x->is_dir)
		return false;
	if (c->nondir_only && (k != x->n || x->is_dir))
		return false; /* a directory above a [restricted] rule's name */
	for (int variant = 0; variant < 2; variant++) {
		const char *buf = c->fold ? x->fold : x->exact;
		const size_t *lens = variant ? x->slen : x->len;

		if (variant && (!c->fold || !x->any_strip))
			break;
		if (!c->anchored) {
			if (ref_seg(&c->segs[0], buf + x->off[k - 1], lens[k - 1]))
				return true;
		} else if (ref_segs(c, x, buf, lens, k)) {
			return true;
		}
	}
	return false;
}

static bool ref_split(struct ref *x, const char *p, size_t len)
{
	x->n = 0;
	x->any_strip = false;
	for (size_t i = 0; i < len;) {
		size_t start = i, l;

		while (i < len && p[i] != '/') {
			x->fold[i] = (p[i] >= 'A' && p[i] <= 'Z') ? p[i] + 32 : p[i];
			i++;
		}
		if (x->n == REF_MAX)
			return false;
		l = i - start;
		x->off[x->n] = start;
		x->len[x->n] = l;
		while (l > 1 && (p[start + l - 1] == '.' || p[start + l - 1] == ' '))
			l--;
		x->slen[x->n] = l;
		x->any_strip |= l != x->len[x->n];
		x->n++;
		i++;
	}
	return true;
}

/* Returns false when the path is too deep for the reference. */
static bool ref_classify(const struct jf_policy *p, const char *path, size_t len, bool is_dir,
			 struct jf_verdict *out)
{
	static struct ref x;
	uint32_t best = JF_NONE;

	x.exact = path;
	x.is_dir = is_dir || len == 0;
	if (!ref_split(&x, path, len))
		return false;
	for (size_t r = 0; r < p->nindexed; r++)
		if (p->cpats[r].nseg > 2 * REF_MAX)
			return false;
	for (size_t k = 0; k <= x.n; k++) {
		uint32_t d = JF_NONE, z = JF_NONE, e = JF_NONE;

		/* the last [restricted] exception matching here: the
		 * [restricted] rules up to it do not count at this depth */
		for (uint32_t r = 0; r < p->nindexed; r++)
			if (p->rules[r].zone == JF_RESTRICTED && p->rules[r].negated &&
			    ref_match(&p->cpats[r], &p->rules[r], &x, k))
				e = r;
		for (uint32_t r = 0; r < p->nindexed; r++) {
			const struct jf_cpat *c = &p->cpats[r];
			const struct jf_rule *u = &p->rules[r];

			if (!ref_match(c, u, &x, k))
				continue;
			if (u->zone == JF_DENIED)
				d = r;
			else if (u->zone == JF_RESTRICTED &&
				 (u->negated || (e != JF_NONE && r <= e)))
				continue;
			else if (z == JF_NONE || c->speclen >= p->cpats[z].speclen)
				z = r;
		}
		if (d != JF_NONE && !p->cpats[d].negated) {
			out->rule = &p->rules[d];
			out->zone = JF_DENIED;
			return true;
		}
		if (z != JF_NONE)
			best = z;
	}
	out->rule = best == JF_NONE ? NULL : &p->rules[best];
	out->zone = best == JF_NONE ? p->def : p->rules[best].zone;
	if (p->read_only && out->zone == JF_SAFE)
		out->zone = JF_RESTRICTED;
	return true;
}

/* ---- checks ---- */

static void check_canonical(const struct jf_canon *c)
{
	static struct jf_canon again;
	size_t start = 0;

	if (c->len > JF_PATH_MAX || strlen(c->path) != c->len)
		abort();
	if (c->len == 0)
		return;
	if (c->path[0] == '/' || c->path[c->len - 1] == '/')
		abort();
	for (size_t i = 0; i <= c->len; i++) {
		if (i < c->len && c->path[i] != '/')
			continue;
		if (i == start || (i - start == 1 && c->path[start] == '.') ||
		    (i - start == 2 && c->path[start] == '.' && c->path[start + 1] == '.') ||
		    i - start > JF_NAME_MAX)
			abort();
		start = i + 1;
	}
	if (jf_canonicalize("/work/proj", NULL, c->path, c->len, &again) != 0 ||
	    again.len != c->len || memcmp(again.path, c->path, c->len) != 0)
		abort();
}

static void check_classify(const struct jf_policy *p, const char *path, size_t len, bool dir)
{
	static char lower[JF_PATH_MAX + 1];
	struct jf_verdict v, r, lv;

	jf_classify(p, path, len, dir, &v);
	if (v.zone > JF_DENIED)
		abort();
	if (ref_classify(p, path, len, dir, &r) && (r.zone != v.zone || r.rule != v.rule)) {
		fprintf(stderr, "index/reference mismatch on '%.*s': %s %s:%u vs %s %s:%u\n",
			(int)len, path, jf_zone_name(v.zone), v.rule ? v.rule->pattern : "-",
			v.rule ? v.rule->line : 0, jf_zone_name(r.zone),
			r.rule ? r.rule->pattern : "-", r.rule ? r.rule->line : 0);
		abort();
	}
	for (size_t i = 0; i < len; i++)
		lower[i] = (path[i] >= 'A' && path[i] <= 'Z') ? path[i] + 32 : path[i];
	jf_classify(p, lower, len, dir, &lv);
	if ((lv.zone == JF_DENIED) != (v.zone == JF_DENIED))
		abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct jf_canon c;
	struct jf_policy *own = NULL;
	const struct jf_policy *p;
	const char *path;
	size_t len;
	unsigned flags;

	if (size < 1)
		return 0;
	flags = data[0];
	path = (const char *)data + 1;
	len = size - 1;
	if (((flags >> 3) & 3) == 3) {
		const char *nul = memchr(path, '\0', len);

		if (!nul)
			return 0;
		if (jf_policy_parse("input", path, nul - path, &own, NULL, 0) < 0)
			return 0;
		len -= nul + 1 - path;
		path = nul + 1;
		p = own;
	} else {
		p = policies[(flags >> 3) & 3];
	}
	if (flags & 4)
		jf_policy_set_read_only((struct jf_policy *)p, true);
	if (jf_canonicalize("/work/proj", (flags & 2) ? "src/sub" : NULL, path, len, &c) == 0) {
		check_canonical(&c);
		check_classify(p, c.path, c.len, flags & 1);
	} else if (c.refusal == JF_REFUSE_NONE || c.refusal > JF_REFUSE_EMPTY) {
		abort();
	}
	if (flags & 4)
		jf_policy_set_read_only((struct jf_policy *)p, false);
	jf_policy_free(own);
	return 0;
}
