/* SPDX-License-Identifier: MIT */
/*
 * Classification: canonical path -> zone and deciding rule.
 *
 * The path is split once into components. For each prefix depth k
 * (0 = the root, 1 = the first name, ...) the index of each zone yields the
 * rules whose last segment matches component k; an anchored rule then checks
 * its earlier segments against components 1..k. A rule matching prefix k
 * matches the path (a rule matching a directory covers everything below).
 *
 * DENIED (gitignore(5) semantics, in rule order): at each depth the last
 * matching [denied] rule decides whether that prefix is excluded; a '!'
 * exception un-excludes it. The first excluded prefix makes the path DENIED
 * and ends the walk, so an exception cannot re-include anything below an
 * excluded directory ("It is not possible to re-include a file if a parent
 * directory of that file is excluded", gitignore(5)).
 *
 * SAFE/RESTRICTED: the most specific match wins: deepest prefix, then the
 * longer pattern text, then the later rule. A '!' exception in [restricted]
 * is indexed apart (jf_policy.restricted_except): at each depth the last one
 * matching sets a floor, and only [restricted] rules after it count there,
 * so a later exception undoes earlier rules and a later rule undoes the
 * exception, as in gitignore.
 *
 * DENIED and RESTRICTED patterns are matched case-insensitively (ASCII) and
 * also against names with trailing dots and spaces removed, so ".ENV",
 * ".env." and ".cUrSoR/" are caught; SAFE patterns match exactly (a looser
 * SAFE match would widen write access).
 *
 * A pattern with a trailing '/' matches only directories in gitignore(5);
 * here that holds for the rules that widen access ([safe], '!'
 * exceptions) only. A [denied] or [restricted] one matches the name it ends
 * on whatever the object is: a host program reading ".claude/" or
 * ".git/hooks/" follows a symlink of that name, and a file named ".ssh"
 * would be a name taken by a hidden directory, which creating must not
 * reveal. So @is_dir only decides [safe] and exception matches. And a
 * [restricted] rule's directories above its last name (".git/objects" and
 * ".git/objects/info" for the rule on ".git/objects/info/alternates") are
 * RESTRICTED for a non-directory: a symlink there would send the host's program that
 * reads the protected path to files the agent wrote (derived rules,
 * jf_cpat.nondir_only, made by parse.c).
 *
 * No allocation: the work area lives on the stack (about 17 KiB).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy-internal.h"

struct cctx {
	const char *exact;
	char fold[JF_PATH_MAX + 1];
	uint16_t off[JF_MAX_COMPONENTS];
	uint16_t len[JF_MAX_COMPONENTS];
	uint16_t slen[JF_MAX_COMPONENTS]; /* len without trailing dots and spaces */
	size_t n;
	bool is_dir;
	bool any_strip;
};

/* A view of the components: which buffer, which lengths; rules at or
 * before @floor (a rule index, JF_NONE for none) are not candidates. */
struct cview {
	const char *buf;
	const uint16_t *len;
	uint32_t hash;
	uint32_t floor;
};

static uint32_t hash_bytes(const char *s, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static bool seg_match(const struct jf_seg *g, const char *s, size_t len)
{
	switch (g->kind) {
	case JF_SEG_LIT:
		return g->len == len && memcmp(g->s, s, len) == 0;
	case JF_SEG_GLOB:
		return jf_glob_match(g->s, g->len, s, len);
	default:
		return true;
	}
}

/* Anchored pattern against components 0..k-1: '**' matches any run of
 * components; single-backtrack wildcard matching, O(nseg * k). */
static bool segs_match(const struct jf_cpat *c, const struct cctx *x, const struct cview *v,
		       size_t k)
{
	size_t si = 0, ci = 0, star_s = SIZE_MAX, star_c = 0;

	while (ci < k) {
		if (si < c->nseg && c->segs[si].kind == JF_SEG_STARSTAR) {
			star_s = ++si;
			star_c = ci;
			continue;
		}
		if (si < c->nseg && seg_match(&c->segs[si], v->buf + x->off[ci], v->len[ci])) {
			si++;
			ci++;
			continue;
		}
		if (star_s == SIZE_MAX)
			return false;
		si = star_s;
		ci = ++star_c;
	}
	while (si < c->nseg && c->segs[si].kind == JF_SEG_STARSTAR)
		si++;
	return si == c->nseg;
}

enum pick { PICK_LAST, PICK_SPECIFIC };

static uint32_t better(const struct jf_policy *p, enum pick how, uint32_t best, uint32_t cand)
{
	if (best == JF_NONE)
		return cand;
	if (how == PICK_SPECIFIC && p->cpats[cand].speclen != p->cpats[best].speclen)
		return p->cpats[cand].speclen > p->cpats[best].speclen ? cand : best;
	return cand > best ? cand : best;
}

/* Rule @r's last segment matched component @i: check the rest. */
static bool cand_ok(const struct jf_cpat *c, const struct cctx *x, const struct cview *v, size_t i)
{
	if (c->dir_only && !c->any_type && i + 1 == x->n && !x->is_dir)
		return false;
	if (c->nondir_only && (i + 1 != x->n || x->is_dir))
		return false;
	if (!c->anchored)
		return true;
	/* a literal before the last segment names component i - 1: a cheap
	 * test before the full match (".git/worktrees/x" needs "worktrees") */
	if (c->nseg >= 2 && c->segs[c->nseg - 2].kind == JF_SEG_LIT &&
	    (i == 0 || !seg_match(&c->segs[c->nseg - 2], v->buf + x->off[i - 1], v->len[i - 1])))
		return false;
	return segs_match(c, x, v, i + 1);
}

/* @best, or rule @r if its last segment matched component @i, the rest
 * matches, it is past @v's floor and it is better. */
static uint32_t consider(const struct jf_policy *p, enum pick how, uint32_t best, uint32_t r,
			 const struct cctx *x, const struct cview *v, size_t i)
{
	if (v->floor != JF_NONE && r <= v->floor)
		return best;
	if (!cand_ok(&p->cpats[r], x, v, i))
		return best;
	return better(p, how, best, r);
}

static uint32_t scan_chain(const struct jf_policy *p, const struct jf_group *g, enum pick how,
			   uint32_t r, uint32_t best, const struct cctx *x, const struct cview *v,
			   size_t i, int mode)
{
	const char *s = v->buf + x->off[i];
	size_t len = v->len[i];

	for (; r != JF_NONE; r = g->next[r]) {
		const struct jf_cpat *c = &p->cpats[r];

		if (c->litlen > len)
			continue;
		if (mode == JF_LAST_SUFFIX && memcmp(s + len - c->litlen, c->lit, c->litlen))
			continue;
		if (mode == JF_LAST_PREFIX && memcmp(s, c->lit, c->litlen))
			continue;
		best = consider(p, how, best, r, x, v, i);
	}
	return best;
}

static uint32_t scan_hash(const struct jf_policy *p, const struct jf_group *g, enum pick how,
			  uint32_t best, const struct cctx *x, const struct cview *v, size_t i)
{
	const char *s = v->buf + x->off[i];
	size_t len = v->len[i];

	for (uint32_t h = v->hash & g->hmask;; h = (h + 1) & g->hmask) {
		uint32_t r = g->slots[h];
		const struct jf_cpat *c;

		if (r == JF_NONE)
			return best;
		c = &p->cpats[r];
		if (c->litlen != len || memcmp(c->lit, s, len) != 0)
			continue;
		for (; r != JF_NONE; r = g->next[r])
			best = consider(p, how, best, r, x, v, i);
		return best;
	}
}

/* Best rule of group @g matching component @i (depth i + 1) in view @v. */
static uint32_t scan_level(const struct jf_policy *p, const struct jf_group *g, enum pick how,
			   uint32_t best, const struct cctx *x, const struct cview *v, size_t i)
{
	const char *s = v->buf + x->off[i];
	size_t len = v->len[i];

	if (g->slots)
		best = scan_hash(p, g, how, best, x, v, i);
	if (g->chained) {
		best = scan_chain(p, g, how, g->suffix[(unsigned char)s[len - 1]], best, x, v, i,
				  JF_LAST_SUFFIX);
		best = scan_chain(p, g, how, g->prefix[(unsigned char)s[0]], best, x, v, i,
				  JF_LAST_PREFIX);
	}
	for (uint32_t j = 0; j < g->ngeneric; j++) {
		uint32_t r = g->generic[j];
		const struct jf_cpat *c = &p->cpats[r];
		const struct jf_seg *l = &c->segs[c->nseg - 1];

		if ((c->first >= 0 && (unsigned char)s[0] != c->first) ||
		    (c->last >= 0 && (unsigned char)s[len - 1] != c->last) ||
		    (c->nondir_only && (i + 1 != x->n || x->is_dir)))
			continue;
		if (l->kind == JF_SEG_GLOB && !jf_glob_match(l->s, l->len, s, len))
			continue;
		best = consider(p, how, best, r, x, v, i);
	}
	return best;
}

/* Best root rule ("/") of group @g after rule @floor (JF_NONE: any). */
static uint32_t scan_root(const struct jf_policy *p, const struct jf_group *g, enum pick how,
			  uint32_t best, uint32_t floor)
{
	for (uint32_t j = 0; j < g->nroot; j++)
		if (floor == JF_NONE || g->root[j] > floor)
			best = better(p, how, best, g->root[j]);
	return best;
}

static void split(struct cctx *x, const char *path, size_t len)
{
	x->n = 0;
	x->any_strip = false;
	for (size_t i = 0; i < len;) {
		size_t start, l;

		while (i < len && path[i] == '/')
			i++;
		if (i >= len)
			break;
		start = i;
		while (i < len && path[i] != '/') {
			char ch = path[i];

			x->fold[i++] = (ch >= 'A' && ch <= 'Z') ? ch + 32 : ch;
		}
		l = i - start;
		x->off[x->n] = start;
		x->len[x->n] = l;
		while (l > 1 && (path[start + l - 1] == '.' || path[start + l - 1] == ' '))
			l--;
		/* a name of only dots/spaces keeps its first byte: "..." stays "." */
		x->slen[x->n] = l;
		x->any_strip |= l != x->len[x->n];
		x->n++;
	}
}

/* scan_level() of group @g over the @nv views @v of component @i, past rule
 * @floor (JF_NONE: any). */
static uint32_t scan_views(const struct jf_policy *p, const struct jf_group *g, enum pick how,
			   const struct cctx *x, struct cview *v, size_t nv, size_t i,
			   uint32_t floor)
{
	uint32_t best = JF_NONE;

	for (size_t k = 0; k < nv; k++) {
		v[k].floor = floor;
		best = scan_level(p, g, how, best, x, &v[k], i);
	}
	return best;
}

/*
 * Best rule of folding group @g at depth i + 1, in both views of the name
 * (as it is, and without trailing dots and spaces). With @except, only the
 * rules of @g after the last rule of @except matching there count; @except
 * is looked at only when a rule of @g matches, which is rare.
 */
static uint32_t folded_level(const struct jf_policy *p, const struct jf_group *g, enum pick how,
			     const struct jf_group *except, const struct cctx *x, size_t i)
{
	struct cview v[2] = {{x->fold, x->len, 0, JF_NONE}, {x->fold, x->slen, 0, JF_NONE}};
	size_t nv = x->any_strip ? 2 : 1;
	uint32_t best, floor;

	for (size_t k = 0; k < nv; k++)
		v[k].hash = hash_bytes(x->fold + x->off[i], v[k].len[i]);
	best = scan_views(p, g, how, x, v, nv, i, JF_NONE);
	if (best == JF_NONE || !except)
		return best;
	floor = scan_views(p, except, PICK_LAST, x, v, nv, i, JF_NONE);
	return floor == JF_NONE ? best : scan_views(p, g, how, x, v, nv, i, floor);
}

/* DENIED check of group @g at depth i + 1; returns the deciding rule or JF_NONE. */
static uint32_t denied_level(const struct jf_policy *p, const struct jf_group *g,
			     const struct cctx *x, size_t i)
{
	return folded_level(p, g, PICK_LAST, NULL, x, i);
}

static uint32_t zoned_level(const struct jf_policy *p, const struct cctx *x, size_t i)
{
	const struct jf_group *rg = &p->groups[JF_RESTRICTED], *sg = &p->groups[JF_SAFE];
	const struct jf_group *eg = &p->restricted_except;
	uint32_t best = JF_NONE;

	if (rg->nonempty)
		best = folded_level(p, rg, PICK_SPECIFIC, eg->nonempty ? eg : NULL, x, i);
	if (sg->nonempty) {
		struct cview v = {x->exact, x->len, 0, JF_NONE};

		if (sg->slots)
			v.hash = hash_bytes(x->exact + x->off[i], x->len[i]);
		best = scan_level(p, sg, PICK_SPECIFIC, best, x, &v, i);
	}
	return best;
}

static void verdict(const struct jf_policy *p, uint32_t r, struct jf_verdict *out)
{
	out->rule = r == JF_NONE ? NULL : &p->rules[r];
	out->zone = r == JF_NONE ? p->def : p->rules[r].zone;
	out->by_content = false;
	if (p->read_only && out->zone == JF_SAFE)
		out->zone = JF_RESTRICTED;
}

/* jf_classify() with the [denied] rules of group @dg. */
static void classify(const struct jf_policy *policy, const struct jf_group *dg, const char *path,
		     size_t len, bool is_dir, struct jf_verdict *out)
{
	uint32_t best, d;
	struct cctx x;

	if (len > JF_PATH_MAX) { /* not canonical: fail closed */
		out->zone = JF_DENIED;
		out->rule = NULL;
		out->by_content = false;
		return;
	}
	x.exact = path;
	x.is_dir = is_dir;
	split(&x, path, len);
	if (x.n == 0)
		x.is_dir = true;
	d = scan_root(policy, dg, PICK_LAST, JF_NONE, JF_NONE);
	if (d != JF_NONE && !policy->cpats[d].negated)
		return verdict(policy, d, out);
	d = scan_root(policy, &policy->restricted_except, PICK_LAST, JF_NONE, JF_NONE);
	best = scan_root(policy, &policy->groups[JF_RESTRICTED], PICK_SPECIFIC, JF_NONE, d);
	best = scan_root(policy, &policy->groups[JF_SAFE], PICK_SPECIFIC, best, JF_NONE);
	for (size_t i = 0; i < x.n; i++) {
		uint32_t lb;

		if (dg->nonempty) {
			d = denied_level(policy, dg, &x, i);
			if (d != JF_NONE && !policy->cpats[d].negated)
				return verdict(policy, d, out);
		}
		lb = zoned_level(policy, &x, i);
		if (lb != JF_NONE)
			best = lb;
	}
	verdict(policy, best, out);
}

static const struct jf_rule policy_file_rule = {
	.source = "policy-file", .pattern = JF_PROJECT_POLICY, .zone = JF_RESTRICTED};

/* A name spelled JF_PROJECT_POLICY is never SAFE, whatever the policy says:
 * it may be the policy of a later view (jf_policy_locate). */
static void protect_policy_file(const char *path, size_t len, struct jf_verdict *out)
{
	size_t n = sizeof(JF_PROJECT_POLICY) - 1;

	if (out->zone == JF_SAFE && len >= n && memcmp(path + len - n, JF_PROJECT_POLICY, n) == 0 &&
	    (len == n || path[len - n - 1] == '/')) {
		out->zone = JF_RESTRICTED;
		out->rule = &policy_file_rule;
	}
}

void jf_classify(const struct jf_policy *policy, const char *path, size_t len, bool is_dir,
		 struct jf_verdict *out)
{
	classify(policy, &policy->groups[JF_DENIED], path, len, is_dir, out);
	protect_policy_file(path, len, out);
}

void jf_classify_public(const struct jf_policy *policy, const char *path, size_t len,
			struct jf_verdict *out)
{
	classify(policy, &policy->strict_denied, path, len, false, out);
	protect_policy_file(path, len, out);
}

/* ---- index construction (load time) ---- */

static int hash_insert(struct jf_policy *p, struct jf_group *g, uint32_t r)
{
	const struct jf_cpat *c = &p->cpats[r];
	uint32_t h = hash_bytes(c->lit, c->litlen) & g->hmask;

	for (;; h = (h + 1) & g->hmask) {
		uint32_t o = g->slots[h];
		uint32_t *tail;

		if (o == JF_NONE) {
			g->slots[h] = r;
			return 0;
		}
		if (p->cpats[o].litlen != c->litlen || memcmp(p->cpats[o].lit, c->lit, c->litlen))
			continue;
		for (tail = &g->slots[h]; *tail != JF_NONE; tail = &g->next[*tail])
			;
		*tail = r;
		return 0;
	}
}

static void chain_append(struct jf_group *g, uint32_t *head, uint32_t r)
{
	while (*head != JF_NONE)
		head = &g->next[*head];
	*head = r;
}

/* Which rules of a zone a group indexes. */
enum gsel {
	SEL_ALL,    /* all, but [restricted] exceptions (SEL_EXCEPT) */
	SEL_STRICT, /* DENIED rules without jf_rule.content */
	SEL_EXCEPT, /* the '!' exceptions of [restricted] */
};

/* Does rule @r belong in the group @sel of @zone? */
static bool in_group(const struct jf_policy *p, size_t r, enum jf_zone zone, enum gsel sel)
{
	const struct jf_rule *u = &p->rules[r];

	if (u->zone != zone)
		return false;
	if (sel == SEL_STRICT)
		return u->content == JF_CONTENT_NONE;
	return zone != JF_RESTRICTED || u->negated == (sel == SEL_EXCEPT);
}

static int group_alloc(struct jf_policy *p, struct jf_group *g, enum jf_zone zone, enum gsel sel)
{
	size_t nlit = 0, ngen = 0, nroot = 0, size = 8;

	for (size_t r = 0; r < p->nindexed; r++) {
		if (!in_group(p, r, zone, sel))
			continue;
		nlit += p->cpats[r].last_kind == JF_LAST_LIT;
		ngen += p->cpats[r].last_kind == JF_LAST_GENERIC;
		nroot += p->cpats[r].last_kind == JF_LAST_ROOT;
		g->nonempty = true;
	}
	while (size < 2 * nlit)
		size *= 2;
	if (nlit) {
		g->slots = malloc(size * sizeof(*g->slots));
		g->hmask = size - 1;
	}
	g->generic = calloc(ngen + 1, sizeof(*g->generic));
	g->root = calloc(nroot + 1, sizeof(*g->root));
	g->next = malloc((p->nindexed + 1) * sizeof(*g->next));
	if ((nlit && !g->slots) || !g->generic || !g->root || !g->next)
		return -ENOMEM;
	for (size_t i = 0; i < p->nindexed; i++)
		g->next[i] = JF_NONE;
	for (size_t i = 0; nlit && i < size; i++)
		g->slots[i] = JF_NONE;
	return 0;
}

/* File rule @r in the index of group @g by the shape of its last segment. */
static void group_add(struct jf_policy *p, struct jf_group *g, uint32_t r)
{
	struct jf_cpat *c = &p->cpats[r];

	switch (c->last_kind) {
	case JF_LAST_LIT:
		hash_insert(p, g, r);
		break;
	case JF_LAST_SUFFIX:
		chain_append(g, &g->suffix[(unsigned char)c->lit[c->litlen - 1]], r);
		g->chained = true;
		break;
	case JF_LAST_PREFIX:
		chain_append(g, &g->prefix[(unsigned char)c->lit[0]], r);
		g->chained = true;
		break;
	case JF_LAST_GENERIC:
		g->generic[g->ngeneric++] = r;
		break;
	case JF_LAST_ROOT:
		g->root[g->nroot++] = r;
		break;
	}
}

/* Build the index of the rules @sel of @zone (see in_group) into @g. */
static int group_build(struct jf_policy *p, struct jf_group *g, enum jf_zone zone, enum gsel sel)
{
	int r;

	memset(g, 0, sizeof(*g));
	for (int b = 0; b < 256; b++)
		g->suffix[b] = g->prefix[b] = JF_NONE;
	g->fold = zone != JF_SAFE;
	r = group_alloc(p, g, zone, sel);
	if (r < 0)
		return r;
	for (uint32_t i = 0; i < p->nindexed; i++) {
		if (in_group(p, i, zone, sel))
			group_add(p, g, i);
	}
	return 0;
}

int jf_policy_build_index(struct jf_policy *p)
{
	int r;

	for (int z = JF_SAFE; z <= JF_DENIED; z++) {
		r = group_build(p, &p->groups[z], (enum jf_zone)z, SEL_ALL);
		if (r < 0)
			return r;
	}
	r = group_build(p, &p->restricted_except, JF_RESTRICTED, SEL_EXCEPT);
	if (r < 0)
		return r;
	return group_build(p, &p->strict_denied, JF_DENIED, SEL_STRICT);
}

static void group_free(struct jf_group *g)
{
	free(g->slots);
	free(g->generic);
	free(g->root);
	free(g->next);
	g->slots = g->generic = g->root = g->next = NULL;
}

void jf_policy_free_index(struct jf_policy *p)
{
	for (int z = JF_SAFE; z <= JF_DENIED; z++)
		group_free(&p->groups[z]);
	group_free(&p->restricted_except);
	group_free(&p->strict_denied);
}
