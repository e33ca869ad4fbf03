/* SPDX-License-Identifier: MIT */
/*
 * The engine of the secret detectors (secrets.h): one Vectorscan database of
 * every selected detector's first pattern says which detectors have a
 * candidate; PCRE2 then confirms each of those and hands its groups to the
 * detector's check (secrets-rules.c). Without Vectorscan (JF_HAVE_HS unset
 * at build time), every selected detector runs its PCRE2 pass.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <nettle/sha2.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef JF_HAVE_HS
#include <hs.h>
#endif

#include "policy-internal.h"
#include "secrets.h"

struct jf_secrets {
	uint32_t mask;
	pcre2_code *re[JF_DET_COUNT];
#ifdef JF_HAVE_HS
	hs_database_t *db; /* NULL when no selected detector has a first pattern */
	bool no_first;	   /* this CPU cannot run Vectorscan: PCRE2 alone */
#endif
};

const char *jf_secret_det_name(enum jf_secret_det det)
{
	return (unsigned)det < JF_DET_COUNT ? jf_det_rules[det].name : "?";
}

int jf_secret_det_lookup(const char *name, size_t len)
{
	for (int i = 0; i < JF_DET_COUNT; i++)
		if (strlen(jf_det_rules[i].name) == len &&
		    memcmp(jf_det_rules[i].name, name, len) == 0)
			return i;
	return -EINVAL;
}

const char *jf_secrets_engine(void)
{
#ifdef JF_HAVE_HS
	return "vectorscan";
#else
	return "pcre2";
#endif
}

void jf_secrets_free(struct jf_secrets *s)
{
	if (!s)
		return;
	for (int i = 0; i < JF_DET_COUNT; i++)
		pcre2_code_free(s->re[i]);
#ifdef JF_HAVE_HS
	hs_free_database(s->db);
#endif
	free(s);
}

#ifdef JF_HAVE_HS
static int compile_first(struct jf_secrets *s)
{
	const char *pats[JF_DET_COUNT];
	unsigned flags[JF_DET_COUNT], ids[JF_DET_COUNT], n = 0;
	hs_compile_error_t *err = NULL;

	for (unsigned i = 0; i < JF_DET_COUNT; i++) {
		if (!(s->mask & (1u << i)) || !jf_det_rules[i].first)
			continue;
		pats[n] = jf_det_rules[i].first;
		flags[n] = HS_FLAG_SINGLEMATCH;
		ids[n++] = i;
	}
	if (n == 0)
		return 0;
	if (hs_valid_platform() != HS_SUCCESS) {
		s->no_first = true; /* Vectorscan needs SSSE3 on x86 */
		return 0;
	}
	if (hs_compile_multi(pats, flags, ids, n, HS_MODE_BLOCK, NULL, &s->db, &err) !=
	    HS_SUCCESS) {
		fprintf(stderr, "jailfs: secret pattern %d: %s\n", err ? err->expression : -1,
			err ? err->message : "?");
		hs_free_compile_error(err);
		return -EINVAL;
	}
	return 0;
}
#endif

static int compile_confirm(struct jf_secrets *s, unsigned i)
{
	int ec;
	PCRE2_SIZE at;

	if (!jf_det_rules[i].confirm)
		return 0;
	s->re[i] = pcre2_compile((PCRE2_SPTR)jf_det_rules[i].confirm, PCRE2_ZERO_TERMINATED, 0, &ec,
				 &at, NULL);
	if (!s->re[i]) {
		PCRE2_UCHAR msg[160];

		pcre2_get_error_message(ec, msg, sizeof(msg));
		fprintf(stderr, "jailfs: secret pattern %s at %zu: %s\n", jf_det_rules[i].name,
			(size_t)at, (char *)msg);
		return ec == PCRE2_ERROR_NOMEMORY ? -ENOMEM : -EINVAL;
	}
	/* JIT is an optimisation: a machine without it matches interpreted */
	(void)pcre2_jit_compile(s->re[i], PCRE2_JIT_COMPLETE);
	return 0;
}

int jf_secrets_new(uint32_t mask, struct jf_secrets **out)
{
	struct jf_secrets *s = calloc(1, sizeof(*s));
	int r = 0;

	if (!s)
		return -ENOMEM;
	s->mask = mask & JF_DET_ALL;
	for (unsigned i = 0; i < JF_DET_COUNT && r == 0; i++)
		if (s->mask & (1u << i))
			r = compile_confirm(s, i);
#ifdef JF_HAVE_HS
	if (r == 0)
		r = compile_first(s);
#endif
	if (r < 0) {
		jf_secrets_free(s);
		return r;
	}
	*out = s;
	return 0;
}

static struct jf_secrets *default_set;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void default_init(void)
{
	if (jf_secrets_new(JF_DET_ALL, &default_set) < 0)
		default_set = NULL;
}

const struct jf_secrets *jf_secrets_default(void)
{
	pthread_once(&default_once, default_init);
	return default_set;
}

#ifdef JF_HAVE_HS
/*
 * One scratch space per thread, grown by hs_alloc_scratch() for whichever
 * database the thread scans with (a no-op once it is large enough), freed
 * by the key's destructor when the thread exits.
 */
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static int scratch_key_err;

static void scratch_free(void *p)
{
	hs_free_scratch(p);
}

static void scratch_init(void)
{
	scratch_key_err = pthread_key_create(&scratch_key, scratch_free);
}

static int on_first(unsigned id, unsigned long long from, unsigned long long to, unsigned flags,
		    void *ctx)
{
	*(uint32_t *)ctx |= 1u << id;
	return 0;
}

/* The detectors of @s with a candidate in the bytes, in *@cand. */
static int first_pass(const struct jf_secrets *s, const char *buf, size_t len, uint32_t *cand)
{
	hs_scratch_t *scr;

	*cand = s->no_first ? s->mask : 0;
	if (!s->db)
		return 0;
	pthread_once(&scratch_once, scratch_init);
	if (scratch_key_err)
		return -scratch_key_err;
	scr = pthread_getspecific(scratch_key);
	if (hs_alloc_scratch(s->db, &scr) != HS_SUCCESS)
		return -ENOMEM;
	pthread_setspecific(scratch_key, scr);
	if (hs_scan(s->db, buf, (unsigned)len, 0, scr, on_first, cand) != HS_SUCCESS)
		return -ENOMEM;
	return 0;
}
#else
static int first_pass(const struct jf_secrets *s, const char *buf, size_t len, uint32_t *cand)
{
	*cand = s->mask;
	return 0;
}
#endif

static void fingerprint(struct jf_secret_hit *hit, const unsigned char *m, size_t n)
{
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];
	char head[5];

	sha256_init(&ctx);
	sha256_update(&ctx, n, m);
	sha256_digest(&ctx, sizeof(d), d);
	for (size_t i = 0; i < 4; i++)
		head[i] = i < n && m[i] > 0x20 && m[i] < 0x7f ? (char)m[i] : '.';
	head[4] = '\0';
	snprintf(hit->fingerprint, sizeof(hit->fingerprint), "%s:%s:%02x%02x%02x%02x%02x%02x",
		 jf_det_rules[hit->det].name, head, d[0], d[1], d[2], d[3], d[4], d[5]);
}

/* Confirm detector @i over the bytes: 1 (and *@hit) at its first real match. */
static int confirm(const struct jf_secrets *s, unsigned i, const unsigned char *buf, size_t len,
		   pcre2_match_data *md, struct jf_secret_hit *hit)
{
	const struct jf_det_rule *d = &jf_det_rules[i];
	PCRE2_SIZE at = 0, *ov;
	int n;

	hit->det = i;
	if (!s->re[i]) {
		if (!d->check(buf, len, NULL, 0))
			return 0;
		hit->offset = 0;
		fingerprint(hit, buf, len < 64 ? len : 64);
		return 1;
	}
	while (at < len && (n = pcre2_match(s->re[i], buf, len, at, 0, md, NULL)) > 0) {
		ov = pcre2_get_ovector_pointer(md);
		if (d->check(buf, len, ov, n)) {
			hit->offset = ov[0];
			fingerprint(hit, buf + ov[0], ov[1] - ov[0]);
			return 1;
		}
		at = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
	}
	return 0;
}

/* The confirming stage of the detectors in @cand. */
static int confirm_all(const struct jf_secrets *s, uint32_t cand, const void *buf, size_t len,
		       struct jf_secret_hit *hit)
{
	pcre2_match_data *md;
	int r;

	if (!cand)
		return 0;
	md = pcre2_match_data_create(16, NULL);
	if (!md)
		return -ENOMEM;
	r = 0;
	for (unsigned i = 0; i < JF_DET_COUNT && r == 0; i++)
		if (cand & (1u << i))
			r = confirm(s, i, buf, len, md, hit);
	pcre2_match_data_free(md);
	return r;
}

int jf_secrets_scan(const struct jf_secrets *s, const void *buf, size_t len,
		    struct jf_secret_hit *hit)
{
	uint32_t cand;
	int r;

	if (len > JF_SECRETS_SCAN_MAX)
		len = JF_SECRETS_SCAN_MAX;
	r = first_pass(s, buf, len, &cand);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < JF_DET_COUNT; i++)
		if ((s->mask & (1u << i)) && !jf_det_rules[i].first)
			cand |= 1u << i;
	return confirm_all(s, cand, buf, len, hit);
}

int jf_secrets_scan_confirm_only(const struct jf_secrets *s, const void *buf, size_t len,
				 struct jf_secret_hit *hit)
{
	if (len > JF_SECRETS_SCAN_MAX)
		len = JF_SECRETS_SCAN_MAX;
	return confirm_all(s, s->mask, buf, len, hit);
}
