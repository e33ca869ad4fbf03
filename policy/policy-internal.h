/* SPDX-License-Identifier: MIT */
/*
 * Internals of the policy library shared by glob.c, classify.c, parse.c and
 * profiles.c. Not part of the API: other modules use policy.h only.
 *
 * A rule's pattern is compiled once, at load time, into a list of path
 * segments. Classification never runs a general matcher over every rule:
 * each rule is filed in an index by the shape of its last segment (a literal
 * name goes into a hash table, "*.pem" into a table keyed by the last byte,
 * ".env.*" into one keyed by the first byte, the few real globs into a short
 * list with a first/last byte prefilter), so looking up one path component
 * costs a hash probe and a handful of byte compares.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

#define JF_NONE UINT32_MAX
/* Most components a canonical path can have ("a/b/..." with 1-byte names). */
#define JF_MAX_COMPONENTS (JF_PATH_MAX / 2 + 1)

enum jf_seg_kind {
	JF_SEG_LIT,	 /* literal name (escapes removed) */
	JF_SEG_GLOB,	 /* one component glob: * ? [...] \x */
	JF_SEG_STARSTAR, /* "**": zero or more whole components */
	JF_SEG_ANY1,	 /* exactly one component, any name (from a trailing "/" "**") */
};

enum jf_last_kind {
	JF_LAST_LIT,	 /* hash table on the literal */
	JF_LAST_SUFFIX,	 /* "*LIT": bucket by last byte of LIT */
	JF_LAST_PREFIX,	 /* "LIT*": bucket by first byte of LIT */
	JF_LAST_GENERIC, /* anything else: list with prefilter */
	JF_LAST_ROOT,	 /* the pattern "/": the view's root itself */
};

struct jf_seg {
	const char *s; /* points into jf_cpat.buf */
	uint16_t len;
	uint8_t kind; /* enum jf_seg_kind */
};

/* A compiled pattern. */
struct jf_cpat {
	struct jf_seg *segs;
	uint16_t nseg;
	bool anchored; /* matched against the whole path prefix, not one name */
	bool dir_only; /* trailing '/' */
	/* A dir_only rule that protects ([denied], [restricted], not '!'): it
	 * matches the name it ends on whatever the object is (classify.c). */
	bool any_type;
	/* Derived from a [restricted] rule (parse.c): the directory above its
	 * last name, matched only by a non-directory there (classify.c). */
	bool nondir_only;
	bool negated; /* leading '!' */
	bool fold;    /* ASCII case folding (patterns stored lowercase) */
	uint8_t last_kind;
	const char *lit; /* JF_LAST_LIT/SUFFIX/PREFIX: the literal part (unescaped) */
	uint16_t litlen;
	int16_t first, last; /* JF_LAST_GENERIC prefilter bytes, -1 = any */
	uint16_t speclen;    /* pattern length as written: second specificity key */
	char *buf;	     /* owned storage for segs and their text */
};

/* The index of the rules of one zone. */
struct jf_group {
	uint32_t *slots; /* hash table: first rule index of a literal, JF_NONE empty */
	uint32_t hmask;	 /* table size - 1; 0 with slots == NULL when empty */
	uint32_t suffix[256];
	uint32_t prefix[256];
	uint32_t *generic;
	uint32_t ngeneric;
	uint32_t *root;
	uint32_t nroot;
	uint32_t *next; /* by rule index: the next rule in the same bucket, JF_NONE ends */
	bool fold;	/* DENIED and RESTRICTED fold case and trailing dots/spaces */
	bool nonempty;	/* any rule at all */
	bool chained;	/* any rule in suffix[] or prefix[] */
};

#define JF_RUN_NLISTS 6 /* deny_exec, allow_exec, env, expose, home, allow_inline */
#define JF_RUN_NSIZES 3 /* max_output, tmp_size, shm_size */

struct jf_policy {
	struct jf_rule *rules; /* evaluation order: profiles, then the file */
	struct jf_cpat *cpats; /* parallel to rules */
	size_t nrules;
	/* nrules plus the derived rules after them (cpats[i].nondir_only,
	 * rules[i] a copy of the rule they come from); only the index sees
	 * them, jf_policy_rule() does not */
	size_t nindexed;
	struct jf_group groups[3]; /* by enum jf_zone; [restricted] without its '!' rules */
	/* The '!' exceptions of [restricted] (classify.c) */
	struct jf_group restricted_except;
	/* The [denied] rules without jf_rule.content, for jf_classify_public() */
	struct jf_group strict_denied;
	enum jf_zone def;
	bool read_only;
	enum jf_hardlinks hardlinks;
	uint64_t max_file_size[3];
	char **run_lists[JF_RUN_NLISTS];   /* NULL-terminated; NULL = empty */
	uint64_t timeout_ms;		   /* [run] timeout, 0 = unset */
	uint64_t view_idle_ms;		   /* [run] view_idle, 0 = unset */
	uint64_t run_sizes[JF_RUN_NSIZES]; /* bytes, 0 = unset */
	char *file;			   /* source name of file rules */
	/* [content] (content-conf.c) */
	bool content_scan;
	uint32_t content_detectors;	  /* mask of enum jf_secret_det */
	struct jf_policy *content_secret; /* names a secret whatever the bytes; or NULL */
	struct jf_policy *content_public; /* names never a secret by content; or NULL */
};

/* glob.c */

/* Compile @len bytes of pattern text (trimmed, may begin with '!'). @fold
 * lowercases it for case-insensitive matching. Returns 0, or -EINVAL with
 * *why set to a static problem description, or -ENOMEM. On success the caller
 * owns out->buf and out->segs (free with jf_cpat_free). */
int jf_cpat_compile(const char *text, size_t len, bool fold, struct jf_cpat *out, const char **why);
void jf_cpat_free(struct jf_cpat *c);

/* One-component glob match, gitignore(5)/fnmatch(3) rules without FNM_PATHNAME
 * concerns (names hold no '/'): * ? [abc] [a-z] [!x] [^x] [[:alpha:]] \x.
 * Iterative, O(plen * slen) worst case, no recursion. */
bool jf_glob_match(const char *p, size_t plen, const char *s, size_t slen);

/* Checks a glob for syntax errors; returns NULL or a static problem. */
const char *jf_glob_check(const char *p, size_t plen);

/* classify.c */
int jf_policy_build_index(struct jf_policy *p);
void jf_policy_free_index(struct jf_policy *p);

/* profiles.c */
/* Text of a built-in profile in policy-file syntax, or NULL if unknown. */
const char *jf_profile_text(const char *name);
/* Whether the entry @pattern of built-in profile @profile is subject to
 * content (enum jf_content), JF_CONTENT_NONE for every other. */
enum jf_content jf_profile_content(const char *profile, const char *pattern);

/* secrets-rules.c: the detectors, indexed by enum jf_secret_det (secrets.h). */
struct jf_det_rule {
	const char *name;
	/* Vectorscan pattern that finds a candidate anywhere; NULL: the
	 * confirming stage always runs (a check of the file's first bytes). */
	const char *first;
	/* PCRE2 pattern of one candidate; NULL: check() judges the buffer. */
	const char *confirm;
	/* Is the match a secret? @ov holds @n (start, end) pairs into @buf
	 * (@len bytes) as pcre2_get_ovector_pointer() gives them; with no
	 * confirm pattern, @n is 0. */
	bool (*check)(const unsigned char *buf, size_t len, const size_t *ov, int n);
};
extern const struct jf_det_rule jf_det_rules[];

/* The CRC-32 of ISO 3309 / ITU-T V.42 (zlib's crc32()) of @len bytes. */
uint32_t jf_crc32(const unsigned char *p, size_t len);

/* jf_secrets_scan() without the first pass: every selected detector
 * confirms (what a build without Vectorscan does). Same verdicts by design;
 * the fuzzer holds the two to it. */
struct jf_secrets;
struct jf_secret_hit;
int jf_secrets_scan_confirm_only(const struct jf_secrets *s, const void *buf, size_t len,
				 struct jf_secret_hit *hit);

/* content-conf.c: the [content] section while a policy file is read. */
struct jf_content_conf {
	bool seen_scan, scan, seen_detectors;
	uint32_t detectors;
	char *secret_text, *public_text; /* pattern lines, '\n'-separated; or NULL */
	size_t secret_len, public_len;
};
/* One trimmed, non-empty line of [content]: 0, -ENOMEM, or -EINVAL with the
 * problem in @why (@wsz bytes). */
int jf_content_conf_line(struct jf_content_conf *c, const char *s, size_t len, char *why,
			 size_t wsz);
/* Set @p's [content] fields from @c; @secrets_removed: "profiles = -secrets". */
int jf_content_conf_apply(struct jf_content_conf *c, bool secrets_removed, struct jf_policy *p);
void jf_content_conf_free(struct jf_content_conf *c);
