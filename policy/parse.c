/* SPDX-License-Identifier: MIT */
/*
 * Policy files: INI sections holding gitignore(5) lines.
 *
 *   [safe] [restricted] [denied]   one pattern per line ('!' not in safe)
 *   [limits]   safe.max_file_size, restricted.max_file_size = SIZE
 *   [options]  default = safe|restricted|denied
 *              profiles = NAME, NAME, -secrets
 *              hardlinks = restricted|zone|deny
 *   [run]      deny_exec, allow_exec, allow_inline, env, expose = a, b, c   (lists)
 *              home = /path (one item)
 *              timeout = SECONDS (units.h duration), max_output, tmp_size, shm_size = SIZE
 *   [content]  scan = on|off, detectors = all|NAME, ...; PATTERN, !PATTERN (content-conf.c)
 *
 * Lines: leading blanks ignored, '#' starts a comment line, trailing blanks
 * ignored unless escaped ("\ "), a CR before the LF ignored. Sections may
 * repeat; list keys may repeat (they append); other keys may not. SIZE is a
 * number with an optional binary suffix K, M, G or T (500M = 500 * 2^20
 * bytes) or "unlimited". Anything unknown is an error naming FILE:LINE.
 *
 * Rule order (it matters for '!' exceptions and ties): the profiles in the
 * order listed, "secrets" first when it is implied, then the file's lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "policy-internal.h"
#include "units.h"

#define JF_POLICY_FILE_MAX (16u << 20) /* bytes: a policy is hand-written */

enum section {
	SEC_NONE = -1,
	SEC_SAFE = JF_SAFE,
	SEC_RESTRICTED = JF_RESTRICTED,
	SEC_DENIED = JF_DENIED,
	SEC_LIMITS,
	SEC_OPTIONS,
	SEC_RUN,
	SEC_CONTENT,
};

static const char *const section_names[] = {
	[SEC_SAFE] = "safe",	   [SEC_RESTRICTED] = "restricted", [SEC_DENIED] = "denied",
	[SEC_LIMITS] = "limits",   [SEC_OPTIONS] = "options",	    [SEC_RUN] = "run",
	[SEC_CONTENT] = "content",
};

static const char *const run_list_keys[JF_RUN_NLISTS] = {"deny_exec", "allow_exec", "env",
							 "expose",    "home",	    "allow_inline"};
/* [run] keys holding a size; tmp_size and shm_size bound tmpfs mounts, so 0
 * is refused there (a tmpfs of size 0 would be unbounded) */
static const char *const run_size_keys[JF_RUN_NSIZES] = {"max_output", "tmp_size", "shm_size"};

struct spec {
	const char *source;
	bool builtin;
	unsigned line;
	char *pattern;
	enum jf_zone zone;
	struct jf_cpat cp;
};

struct specs {
	struct spec *v;
	size_t n, cap;
};

struct pstate {
	const char *name; /* file or profile name, for messages and rules */
	bool builtin;
	enum section sec;
	unsigned line;
	unsigned entry; /* pattern count, the "line" of a profile rule */
	struct specs *out;
	char *err;
	size_t errsz;
	/* [options], [limits], [run] */
	bool seen_default, seen_profiles, seen_hardlinks, seen_timeout, seen_view_idle;
	bool seen_safe_rule;
	bool seen_max[3], seen_run_size[JF_RUN_NSIZES];
	enum jf_zone def;
	enum jf_hardlinks hardlinks;
	uint64_t max_file_size[3];
	char *profiles;
	unsigned profiles_line;
	char **lists[JF_RUN_NLISTS];
	size_t nlists[JF_RUN_NLISTS];
	uint64_t timeout_ms, view_idle_ms, run_sizes[JF_RUN_NSIZES];
	struct jf_content_conf content;
	bool secrets_removed;
};

_printf_(2, 3) static int perr(struct pstate *st, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	if (!st->err || st->errsz == 0)
		return -EINVAL;
	n = snprintf(st->err, st->errsz, "%s:%u: ", st->name, st->line);
	if (n < st->errsz) {
		va_start(ap, fmt);
		vsnprintf(st->err + n, st->errsz - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A printable, bounded copy of untrusted text for an error message. */
static const char *shown(char *buf, size_t size, const char *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 4 < size; i++)
		buf[o++] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	if (len > 0 && o + 4 >= size) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static void trim(const char **s, size_t *len)
{
	while (*len && is_blank(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && is_blank((*s)[*len - 1]))
		(*len)--;
}

static int specs_push(struct specs *sv, struct spec *s)
{
	if (sv->n == sv->cap) {
		size_t cap = sv->cap ? 2 * sv->cap : 64;
		struct spec *v = realloc(sv->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		sv->v = v;
		sv->cap = cap;
	}
	sv->v[sv->n++] = *s;
	return 0;
}

static void specs_free(struct specs *sv)
{
	for (size_t i = 0; i < sv->n; i++) {
		free(sv->v[i].pattern);
		jf_cpat_free(&sv->v[i].cp);
	}
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

static int parse_pattern(struct pstate *st, const char *s, size_t len)
{
	struct spec sp = {
		.source = st->name, .builtin = st->builtin, .zone = (enum jf_zone)st->sec};
	const char *why;
	char q[96];
	int r;

	if (len > JF_PATH_MAX)
		return perr(st, "pattern longer than %d bytes", JF_PATH_MAX);
	/* an exception in [safe] would have nothing to undo but write access */
	if (s[0] == '!' && st->sec == SEC_SAFE)
		return perr(st,
			    "'!' exception '%s' in [safe] (only denied and restricted rules "
			    "have exceptions)",
			    shown(q, sizeof(q), s, len));
	r = jf_cpat_compile(s, len, st->sec != SEC_SAFE, &sp.cp, &why);
	if (r == -EINVAL)
		return perr(st, "invalid pattern '%s': %s", shown(q, sizeof(q), s, len), why);
	if (r < 0)
		return r;
	st->seen_safe_rule = st->seen_safe_rule || st->sec == SEC_SAFE;
	sp.pattern = strndup(s, len);
	sp.line = st->builtin ? ++st->entry : st->line;
	if (!sp.pattern || specs_push(st->out, &sp) < 0) {
		free(sp.pattern);
		jf_cpat_free(&sp.cp);
		return -ENOMEM;
	}
	return 0;
}

static int parse_size(struct pstate *st, const char *key, const char *v, size_t len, uint64_t *out)
{
	char q[96];

	if (jf_parse_size(v, len, true, out) == 0)
		return 0;
	return perr(st, "invalid size '%s' for %s (expected a number with optional K, M, G or T)",
		    shown(q, sizeof(q), v, len), key);
}

static int parse_duration(struct pstate *st, const char *key, const char *v, size_t len,
			  uint64_t *out_ms)
{
	char q[96];

	if (jf_parse_duration_ms(v, len, out_ms) == 0)
		return 0;
	return perr(st, "invalid number of seconds '%s' for %s", shown(q, sizeof(q), v, len), key);
}

static bool value_is(const char *v, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(v, word, len) == 0;
}

static int parse_limits(struct pstate *st, const char *k, size_t klen, const char *v, size_t vlen)
{
	static const char *const keys[] = {"safe.max_file_size", "restricted.max_file_size"};
	char q[96];

	for (int z = JF_SAFE; z <= JF_RESTRICTED; z++) {
		if (!value_is(k, klen, keys[z]))
			continue;
		if (st->seen_max[z])
			return perr(st, "duplicate key '%s' in [limits]", keys[z]);
		st->seen_max[z] = true;
		return parse_size(st, keys[z], v, vlen, &st->max_file_size[z]);
	}
	return perr(st,
		    "unknown key '%s' in [limits] (expected safe.max_file_size or "
		    "restricted.max_file_size)",
		    shown(q, sizeof(q), k, klen));
}

static int parse_options(struct pstate *st, const char *k, size_t klen, const char *v, size_t vlen)
{
	char q[96];

	if (value_is(k, klen, "default")) {
		if (st->seen_default)
			return perr(st, "duplicate key 'default' in [options]");
		st->seen_default = true;
		for (int z = JF_SAFE; z <= JF_DENIED; z++)
			if (value_is(v, vlen, section_names[z])) {
				st->def = z;
				return 0;
			}
		return perr(st, "invalid default '%s' (expected safe, restricted or denied)",
			    shown(q, sizeof(q), v, vlen));
	}
	if (value_is(k, klen, "hardlinks")) {
		static const char *const modes[] = {"restricted", "zone", "deny"};

		if (st->seen_hardlinks)
			return perr(st, "duplicate key 'hardlinks' in [options]");
		st->seen_hardlinks = true;
		for (int m = 0; m < 3; m++)
			if (value_is(v, vlen, modes[m])) {
				st->hardlinks = m;
				return 0;
			}
		return perr(st, "invalid hardlinks '%s' (expected restricted, zone or deny)",
			    shown(q, sizeof(q), v, vlen));
	}
	if (value_is(k, klen, "profiles")) {
		if (st->seen_profiles)
			return perr(st, "duplicate key 'profiles' in [options]");
		st->seen_profiles = true;
		st->profiles_line = st->line;
		st->profiles = strndup(v, vlen);
		return st->profiles ? 0 : -ENOMEM;
	}
	return perr(st, "unknown key '%s' in [options] (expected default, profiles or hardlinks)",
		    shown(q, sizeof(q), k, klen));
}

static bool env_name_ok(const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len);
	size_t n = eq ? (size_t)(eq - s) : len;

	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') ||
		      ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z')))
			return false;
	return true;
}

static int list_add(struct pstate *st, int li, const char *item, size_t len)
{
	char **v = realloc(st->lists[li], (st->nlists[li] + 2) * sizeof(*v));
	char q[96];

	if (!v)
		return -ENOMEM;
	st->lists[li] = v;
	if (li == 2 && !env_name_ok(item, len))
		return perr(st, "invalid env entry '%s' (expected NAME or NAME=VALUE)",
			    shown(q, sizeof(q), item, len));
	if ((li == 3 || li == 4) && item[0] != '/')
		return perr(st, "%s entry '%s' is not an absolute path", run_list_keys[li],
			    shown(q, sizeof(q), item, len));
	/* one jail home: a second would silently win or lose */
	if (li == 4 && st->nlists[li] > 0)
		return perr(st, "home takes one path");
	v[st->nlists[li]] = strndup(item, len);
	if (!v[st->nlists[li]])
		return -ENOMEM;
	v[++st->nlists[li]] = NULL;
	return 0;
}

static int parse_run_size(struct pstate *st, int si, const char *v, size_t vlen)
{
	int r;

	if (st->seen_run_size[si])
		return perr(st, "duplicate key '%s' in [run]", run_size_keys[si]);
	st->seen_run_size[si] = true;
	r = parse_size(st, run_size_keys[si], v, vlen, &st->run_sizes[si]);
	if (r == 0 && si > 0 && st->run_sizes[si] == 0)
		return perr(st, "%s must be above 0 (or unlimited)", run_size_keys[si]);
	return r;
}

static int parse_run(struct pstate *st, const char *k, size_t klen, const char *v, size_t vlen)
{
	char q[96];

	for (int li = 0; li < JF_RUN_NLISTS; li++) {
		if (!value_is(k, klen, run_list_keys[li]))
			continue;
		for (size_t i = 0; i <= vlen;) {
			const char *c = memchr(v + i, ',', vlen - i);
			const char *item = v + i;
			size_t n = (c ? (size_t)(c - v) : vlen) - i;
			int r;

			i += n + 1;
			trim(&item, &n);
			if (n == 0)
				return perr(st, "empty item in %s list", run_list_keys[li]);
			r = list_add(st, li, item, n);
			if (r < 0)
				return r;
		}
		return 0;
	}
	if (value_is(k, klen, "timeout")) {
		if (st->seen_timeout)
			return perr(st, "duplicate key 'timeout' in [run]");
		st->seen_timeout = true;
		return parse_duration(st, "timeout", v, vlen, &st->timeout_ms);
	}
	if (value_is(k, klen, "view_idle")) {
		if (st->seen_view_idle)
			return perr(st, "duplicate key 'view_idle' in [run]");
		st->seen_view_idle = true;
		return parse_duration(st, "view_idle", v, vlen, &st->view_idle_ms);
	}
	for (int si = 0; si < JF_RUN_NSIZES; si++)
		if (value_is(k, klen, run_size_keys[si]))
			return parse_run_size(st, si, v, vlen);
	return perr(st,
		    "unknown key '%s' in [run] (expected deny_exec, allow_exec, allow_inline, env, "
		    "expose, home, timeout, view_idle, max_output, tmp_size or shm_size)",
		    shown(q, sizeof(q), k, klen));
}

static int parse_keyval(struct pstate *st, const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len), *k = s, *v;
	size_t klen, vlen;
	char q[96];

	if (!eq)
		return perr(st, "expected 'key = value' in [%s], got '%s'", section_names[st->sec],
			    shown(q, sizeof(q), s, len));
	klen = eq - s;
	v = eq + 1;
	vlen = len - klen - 1;
	trim(&k, &klen);
	trim(&v, &vlen);
	if (klen == 0)
		return perr(st, "missing key before '=' in [%s]", section_names[st->sec]);
	if (vlen == 0)
		return perr(st, "empty value for '%s'", shown(q, sizeof(q), k, klen));
	if (st->sec == SEC_LIMITS)
		return parse_limits(st, k, klen, v, vlen);
	if (st->sec == SEC_OPTIONS)
		return parse_options(st, k, klen, v, vlen);
	return parse_run(st, k, klen, v, vlen);
}

/* "[name]" with a name of letters, digits, '_', '.', '-': a section header. */
static bool is_header(const char *s, size_t len)
{
	if (len < 3 || s[0] != '[' || s[len - 1] != ']')
		return false;
	for (size_t i = 1; i + 1 < len; i++) {
		char c = s[i] | 0x20;

		if (!((c >= 'a' && c <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '.' || s[i] == '-'))
			return false;
	}
	return true;
}

static int parse_header(struct pstate *st, const char *s, size_t len)
{
	char q[96];

	for (int i = SEC_SAFE; i <= SEC_CONTENT; i++) {
		if (value_is(s + 1, len - 2, section_names[i])) {
			if (st->builtin && i > SEC_DENIED)
				break;
			st->sec = i;
			return 0;
		}
	}
	return perr(st,
		    "unknown section %s (expected [safe], [restricted], [denied], [limits], "
		    "[options], [run] or [content])",
		    shown(q, sizeof(q), s, len));
}

static int parse_line(struct pstate *st, const char *s, size_t len)
{
	const char *line = s;
	size_t full;
	char q[96];

	if (len && s[len - 1] == '\r')
		len--;
	if (memchr(s, '\0', len))
		return perr(st, "NUL byte in line");
	full = len;
	trim(&s, &len);
	/* gitignore(5): trailing blanks are ignored unless escaped ("a\ ") */
	if (len && s[len - 1] == '\\' && (size_t)(s - line) + len < full)
		len++;
	if (len == 0 || s[0] == '#')
		return 0;
	if (is_header(s, len))
		return parse_header(st, s, len);
	if (st->sec == SEC_NONE)
		return perr(st,
			    "'%s' outside a section (start with [safe], [restricted], "
			    "[denied], [limits], [options], [run] or [content])",
			    shown(q, sizeof(q), s, len));
	if (st->sec <= SEC_DENIED)
		return parse_pattern(st, s, len);
	if (st->sec == SEC_CONTENT) {
		char why[160];
		int r = jf_content_conf_line(&st->content, s, len, why, sizeof(why));

		return r == -EINVAL ? perr(st, "%s", why) : r;
	}
	return parse_keyval(st, s, len);
}

static int parse_text(struct pstate *st, const char *buf, size_t len)
{
	st->sec = SEC_NONE;
	st->line = 0;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = (nl ? (size_t)(nl - buf) : len) - i;
		int r;

		st->line++;
		r = parse_line(st, buf + i, n);
		if (r < 0)
			return r;
		i += n + 1;
	}
	return 0;
}

/* Decides the profile list from "profiles = ..."; secrets is implied (first)
 * unless listed at another position or removed with "-secrets". */
static int resolve_profiles(struct pstate *st, const char **names, size_t *n)
{
	bool listed[JF_PROFILE_COUNT] = {false}, removed = false;
	char q[96];

	*n = 0;
	st->line = st->profiles_line;
	for (char *save = NULL, *tok = st->profiles ? strtok_r(st->profiles, ",", &save) : NULL;
	     tok; tok = strtok_r(NULL, ",", &save)) {
		const char *t = tok;
		size_t len = strlen(tok);
		bool minus;
		int p;

		trim(&t, &len);
		if (len == 0)
			continue;
		minus = t[0] == '-';
		for (p = 0; jf_profile_names[p]; p++)
			if (value_is(t + minus, len - minus, jf_profile_names[p]))
				break;
		if (!jf_profile_names[p])
			return perr(
				st,
				"unknown profile '%s' (expected secrets, project, system, gitdir "
				"or -secrets)",
				shown(q, sizeof(q), t, len));
		if (minus && p != 0)
			return perr(st,
				    "only 'secrets' can be removed, not '%s' (the others are "
				    "used only when listed)",
				    jf_profile_names[p]);
		if ((minus && listed[0]) || (!minus && p == 0 && removed))
			return perr(st, "profile 'secrets' both listed and removed");
		if (minus)
			removed = st->secrets_removed = true;
		else if (!listed[p])
			names[(*n)++] = jf_profile_names[p];
		listed[p] = listed[p] || !minus;
	}
	if (!st->profiles) {
		names[(*n)++] = jf_profile_names[1]; /* no "profiles" key: secrets + project */
	}
	if (!listed[0] && !removed) {
		memmove(names + 1, names, *n * sizeof(*names));
		names[0] = jf_profile_names[0];
		(*n)++;
	}
	return 0;
}

static int load_profiles(struct pstate *st, struct specs *all)
{
	const char *names[JF_PROFILE_COUNT];
	size_t n;
	int r = resolve_profiles(st, names, &n);

	for (size_t i = 0; r == 0 && i < n; i++) {
		const char *text = jf_profile_text(names[i]);
		struct pstate ps = {.name = names[i],
				    .builtin = true,
				    .out = all,
				    .err = st->err,
				    .errsz = st->errsz};

		r = parse_text(&ps, text, strlen(text));
	}
	return r;
}

static void state_free(struct pstate *st)
{
	free(st->profiles);
	jf_content_conf_free(&st->content);
	for (int li = 0; li < JF_RUN_NLISTS; li++) {
		for (size_t i = 0; i < st->nlists[li]; i++)
			free(st->lists[li][i]);
		free(st->lists[li]);
	}
}

void jf_policy_free(struct jf_policy *p)
{
	if (!p)
		return;
	jf_policy_free_index(p);
	for (size_t i = 0; i < p->nrules; i++)
		free((char *)p->rules[i].pattern);
	for (size_t i = 0; i < p->nindexed; i++)
		jf_cpat_free(&p->cpats[i]);
	for (int li = 0; li < JF_RUN_NLISTS; li++) {
		for (size_t i = 0; p->run_lists[li] && p->run_lists[li][i]; i++)
			free(p->run_lists[li][i]);
		free(p->run_lists[li]);
	}
	free(p->rules);
	free(p->cpats);
	free(p->file);
	jf_policy_free(p->content_secret);
	jf_policy_free(p->content_public);
	free(p);
}

/*
 * Does a rule of @zone with pattern text @t, compiled @c, get derived rules
 * for the directories above its last name? A [restricted] rule, not an
 * exception, whose pattern has a '/' before its last name. Returns how many
 * '/' separate its names (the most derived rules it gets).
 */
static size_t derivable(enum jf_zone zone, const struct jf_cpat *c, const char *t)
{
	size_t len = strlen(t), n = 0;

	if (zone != JF_RESTRICTED || c->negated || !c->anchored)
		return 0;
	for (size_t i = 1; i + 1 < len; i++)
		n += t[i] == '/';
	return n;
}

/* Do compiled patterns @a and @b match the same names (same segments)? */
static bool same_segs(const struct jf_cpat *a, const struct jf_cpat *b)
{
	if (a->nseg != b->nseg || a->anchored != b->anchored)
		return false;
	for (size_t i = 0; i < a->nseg; i++)
		if (a->segs[i].kind != b->segs[i].kind || a->segs[i].len != b->segs[i].len ||
		    memcmp(a->segs[i].s, b->segs[i].s, a->segs[i].len) != 0)
			return false;
	return true;
}

/* Was a rule matching what @cp matches derived already? (The git rules
 * share their ".git" and "worktrees" directories: one rule each is enough,
 * the first, so it reports the first rule that needs it.) */
static bool derived_before(const struct jf_policy *p, const struct jf_cpat *cp)
{
	for (size_t i = p->nrules; i < p->nindexed; i++)
		if (same_segs(&p->cpats[i], cp))
			return true;
	return false;
}

/*
 * Append to @p the rules derived from rule @r (see derivable()): for each
 * directory above its last name that is not a "**", that prefix of the
 * pattern, anchored like the rule ("vendor/patches/x.diff" gives "/vendor"
 * and "vendor/patches"), matching a non-directory only (nondir_only), with
 * the rule's zone and origin. 0 or -ENOMEM; a prefix that does not compile
 * is skipped (it cannot happen for a prefix of a valid pattern).
 */
static int derive(struct jf_policy *p, size_t r)
{
	const char *t = p->rules[r].pattern;
	size_t len = strlen(t);
	char buf[JF_PATH_MAX + 2];

	for (size_t e = 1; e + 1 < len; e++) {
		struct jf_cpat cp;
		const char *why;
		int n, rc;

		if (t[e] != '/' ||
		    (e >= 2 && t[e - 1] == '*' && t[e - 2] == '*' && (e == 2 || t[e - 3] == '/')))
			continue;
		n = snprintf(buf, sizeof(buf), "%s%.*s", memchr(t, '/', e) ? "" : "/", (int)e, t);
		rc = jf_cpat_compile(buf, (size_t)n, true, &cp, &why);
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0)
			continue;
		cp.nondir_only = true;
		if (derived_before(p, &cp)) {
			jf_cpat_free(&cp);
			continue;
		}
		p->rules[p->nindexed] = p->rules[r];
		p->cpats[p->nindexed++] = cp;
	}
	return 0;
}

/* Moves the specs and options into a new policy and builds its index. */
static int assemble(struct pstate *st, struct specs *all, struct jf_policy **out)
{
	struct jf_policy *p = calloc(1, sizeof(*p));
	size_t extra = 0;

	for (size_t i = 0; i < all->n; i++)
		extra += derivable(all->v[i].zone, &all->v[i].cp, all->v[i].pattern);
	if (!p || !(p->file = strdup(st->name)))
		goto oom;
	p->rules = calloc(all->n + extra + 1, sizeof(*p->rules));
	p->cpats = calloc(all->n + extra + 1, sizeof(*p->cpats));
	if (!p->rules || !p->cpats)
		goto oom;
	for (size_t i = 0; i < all->n; i++) {
		struct spec *s = &all->v[i];

		p->rules[i] = (struct jf_rule){.source = s->builtin ? s->source : p->file,
					       .builtin = s->builtin,
					       .line = s->line,
					       .pattern = s->pattern,
					       .zone = s->zone,
					       .negated = s->cp.negated};
		if (s->builtin && s->zone == JF_DENIED)
			p->rules[i].content = jf_profile_content(s->source, s->pattern);
		p->cpats[i] = s->cp;
		p->cpats[i].any_type = s->cp.dir_only && s->zone != JF_SAFE && !s->cp.negated;
		s->pattern = NULL;
		memset(&s->cp, 0, sizeof(s->cp));
		p->nindexed = ++p->nrules;
	}
	for (size_t i = 0; i < p->nrules; i++)
		if (derivable(p->rules[i].zone, &p->cpats[i], p->rules[i].pattern) &&
		    derive(p, i) < 0)
			goto oom;
	p->def = st->def;
	p->hardlinks = st->hardlinks;
	for (int z = 0; z < 3; z++)
		p->max_file_size[z] = st->seen_max[z] ? st->max_file_size[z] : UINT64_MAX;
	for (int li = 0; li < JF_RUN_NLISTS; li++) {
		p->run_lists[li] = st->lists[li];
		st->lists[li] = NULL;
		st->nlists[li] = 0;
	}
	p->timeout_ms = st->timeout_ms;
	p->view_idle_ms = st->view_idle_ms;
	memcpy(p->run_sizes, st->run_sizes, sizeof(p->run_sizes));
	if (jf_content_conf_apply(&st->content, st->secrets_removed, p) < 0 ||
	    jf_policy_build_index(p) < 0)
		goto oom;
	*out = p;
	return 0;
oom:
	jf_policy_free(p);
	return -ENOMEM;
}

/*
 * A policy file's default zone is restricted and the built-in default's is
 * safe: a file written only to add [run] keys (expose) or a [denied] line would
 * silently make the whole project read-only. Such a file must say which it
 * means; one with a [safe] rule has said it (the rest is read-only).
 */
static int check_says_default(struct pstate *st)
{
	if (st->seen_default || st->seen_safe_rule)
		return 0;
	if (st->err && st->errsz)
		snprintf(st->err, st->errsz,
			 "%s: no rule and no 'default' makes anything SAFE, so the whole project "
			 "would be read-only (the default zone of a policy file is restricted, "
			 "that of the built-in default safe): add 'default = safe' under "
			 "[options] for the built-in default's zones plus this file's rules, or "
			 "'default = restricted' for a read-only view",
			 st->name);
	return -EINVAL;
}

/* jf_policy_parse, and with @is_file a policy file's check (check_says_default). */
static int parse_policy(const char *name, const char *buf, size_t len, bool is_file,
			struct jf_policy **out, char *err, size_t errsz)
{
	struct specs file = {0}, all = {0};
	struct pstate st = {.name = name,
			    .out = &file,
			    .err = err,
			    .errsz = errsz,
			    .def = JF_RESTRICTED,
			    .hardlinks = JF_HARDLINKS_RESTRICTED};
	int r;

	*out = NULL;
	if (err && errsz)
		err[0] = '\0';
	r = parse_text(&st, buf, len);
	if (r == 0)
		r = load_profiles(&st, &all);
	if (r == 0 && is_file)
		r = check_says_default(&st);
	for (size_t i = 0; r == 0 && i < file.n; i++) {
		r = specs_push(&all, &file.v[i]);
		if (r == 0) {
			file.v[i].pattern = NULL;
			memset(&file.v[i].cp, 0, sizeof(file.v[i].cp));
		}
	}
	if (r == 0)
		r = assemble(&st, &all, out);
	if (r == -ENOMEM && err && errsz)
		snprintf(err, errsz, "%s: out of memory", name);
	specs_free(&file);
	specs_free(&all);
	state_free(&st);
	return r;
}

int jf_policy_parse(const char *name, const char *buf, size_t len, struct jf_policy **out,
		    char *err, size_t errsz)
{
	return parse_policy(name, buf, len, false, out, err, errsz);
}

int jf_policy_load(const char *file, struct jf_policy **out, char *err, size_t errsz)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat stb;
	size_t got = 0;
	int r;

	*out = NULL;
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &stb) < 0)
		goto sys;
	if (!S_ISREG(stb.st_mode)) {
		errno = S_ISDIR(stb.st_mode) ? EISDIR : EINVAL;
		goto sys;
	}
	if ((uint64_t)stb.st_size > JF_POLICY_FILE_MAX) {
		if (err && errsz)
			snprintf(err, errsz, "%s: policy file larger than %u bytes", file,
				 JF_POLICY_FILE_MAX);
		return -EFBIG;
	}
	buf = malloc(stb.st_size + 1);
	if (!buf)
		goto sys;
	while (got < (size_t)stb.st_size) {
		ssize_t n = read(fd, buf + got, stb.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto sys;
		if (n == 0)
			break;
		got += n;
	}
	return parse_policy(file, buf, got, true, out, err, errsz);
sys:
	r = -errno;
	if (err && errsz)
		snprintf(err, errsz, "%s: %s", file, strerror(-r));
	return r;
}

int jf_policy_default(struct jf_policy **out)
{
	static const char text[] = "[options]\ndefault = safe\n";

	return jf_policy_parse("built-in default", text, sizeof(text) - 1, out, NULL, 0);
}

int jf_rule_format(const struct jf_rule *rule, char *buf, size_t size)
{
	if (!rule)
		return snprintf(buf, size, "default");
	if (rule->builtin)
		return snprintf(buf, size, "profile:%s", rule->source);
	if (rule->line == 0)
		return snprintf(buf, size, "%s", rule->source);
	return snprintf(buf, size, "%s:%u", rule->source, rule->line);
}

void jf_policy_set_read_only(struct jf_policy *policy, bool read_only)
{
	policy->read_only = read_only;
}

bool jf_policy_can_write(const struct jf_policy *policy)
{
	if (policy->read_only)
		return false;
	if (policy->def == JF_SAFE)
		return true;
	/* the profiles' hook samples: git init's templates, not a place to work */
	for (size_t i = 0; i < policy->nrules; i++)
		if (policy->rules[i].zone == JF_SAFE && !jf_rule_git_sample(&policy->rules[i]))
			return true;
	return false;
}

enum jf_zone jf_policy_default_zone(const struct jf_policy *policy)
{
	return policy->def;
}

uint64_t jf_policy_max_file_size(const struct jf_policy *policy, enum jf_zone zone)
{
	if ((unsigned)zone > JF_DENIED)
		return 0;
	return policy->max_file_size[zone];
}

enum jf_hardlinks jf_policy_hardlinks(const struct jf_policy *policy)
{
	return policy->hardlinks;
}

const char *const *jf_policy_run_list(const struct jf_policy *policy, const char *key)
{
	static const char *const empty[] = {NULL};

	for (int li = 0; li < JF_RUN_NLISTS; li++)
		if (strcmp(key, run_list_keys[li]) == 0)
			return policy->run_lists[li] ? (const char *const *)policy->run_lists[li]
						     : empty;
	return NULL;
}

uint64_t jf_policy_run_number(const struct jf_policy *policy, const char *key)
{
	if (strcmp(key, "timeout_ms") == 0)
		return policy->timeout_ms;
	if (strcmp(key, "view_idle_ms") == 0)
		return policy->view_idle_ms;
	for (int si = 0; si < JF_RUN_NSIZES; si++)
		if (strcmp(key, run_size_keys[si]) == 0)
			return policy->run_sizes[si];
	return 0;
}

int jf_policy_run_format(const struct jf_policy *policy, char **out)
{
	size_t len = 0;
	FILE *f = open_memstream(out, &len);

	if (!f)
		return -ENOMEM;
	fputs("[run]\n", f);
	for (int li = 0; li < JF_RUN_NLISTS; li++) {
		char **v = policy->run_lists[li];

		if (!v || !v[0])
			continue;
		fprintf(f, "%s = ", run_list_keys[li]);
		for (size_t i = 0; v[i]; i++)
			fprintf(f, "%s%s", i ? ", " : "", v[i]);
		fputc('\n', f);
	}
	if (policy->timeout_ms) {
		char d[24];

		fprintf(f, "timeout = %s\n", jf_format_duration(policy->timeout_ms, d, sizeof(d)));
	}
	if (policy->view_idle_ms) {
		char d[24];

		fprintf(f, "view_idle = %s\n",
			jf_format_duration(policy->view_idle_ms, d, sizeof(d)));
	}
	for (int si = 0; si < JF_RUN_NSIZES; si++) {
		uint64_t v = policy->run_sizes[si];

		if (v == UINT64_MAX)
			fprintf(f, "%s = unlimited\n", run_size_keys[si]);
		else if (v)
			fprintf(f, "%s = %llu\n", run_size_keys[si], (unsigned long long)v);
	}
	if (fclose(f) != 0) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return (int)len;
}

const struct jf_rule *jf_policy_rule(const struct jf_policy *policy, size_t index)
{
	return index < policy->nrules ? &policy->rules[index] : NULL;
}
