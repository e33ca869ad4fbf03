/* SPDX-License-Identifier: MIT */
/*
 * Secrets recognized by what a file holds: private keys, API tokens of a
 * checkable shape, connection strings with an inline password. The formats,
 * why each is covered and where each fact comes from: docs/secrets.md.
 *
 * Two stages: a many-pattern first pass (Vectorscan when the build has it)
 * says which detectors have a candidate anywhere in the bytes, then each
 * such detector confirms its candidates with PCRE2 and checks their parts
 * (base64 body and DER tag, CRC32, JWT header, entropy). Without Vectorscan
 * every selected detector runs its PCRE2 pass; the verdicts are the same.
 */
#ifndef JF_SECRETS_H
#define JF_SECRETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most bytes of a file the detectors read: its first 64 KiB. A larger
 * file is judged on those alone (a key block cut by the bound is missed). */
#define JF_SECRETS_SCAN_MAX (64u << 10)

enum jf_secret_det {
	JF_DET_PRIVATE_KEY = 0, /* PEM RSA, EC, DSA, PKCS#8 (encrypted or not) */
	JF_DET_OPENSSH,		/* openssh-key-v1 (every key type) */
	JF_DET_PGP,		/* PGP PRIVATE KEY BLOCK */
	JF_DET_PUTTY,		/* PuTTY .ppk, versions 2 and 3 */
	JF_DET_PKCS12,		/* PKCS#12 (PFX) DER at the start of the file */
	JF_DET_AWS,		/* access key id with a secret access key nearby */
	JF_DET_GITHUB,		/* ghp_ gho_ ghu_ ghs_ ghr_ (CRC32), github_pat_ */
	JF_DET_GITLAB,		/* glpat- */
	JF_DET_SLACK,		/* xox[abprs]- tokens, incoming webhook URLs */
	JF_DET_STRIPE,		/* sk_live_, rk_live_ */
	JF_DET_GOOGLE,		/* AIza API keys */
	JF_DET_NPM,		/* npm_ (CRC32) */
	JF_DET_PYPI,		/* pypi- macaroons for pypi.org and test.pypi.org */
	JF_DET_OPENAI,		/* sk-...T3BlbkFJ..., sk-proj- */
	JF_DET_ANTHROPIC,	/* sk-ant-api03-, sk-ant-admin01- */
	JF_DET_JWT,		/* a JWT whose header says HS256, HS384 or HS512 */
	JF_DET_CONNSTR,		/* postgres, mysql, mongodb, redis, amqp URL with password */
	JF_DET_COUNT,
};

/* Every detector, as a mask of (1u << enum jf_secret_det). */
#define JF_DET_ALL ((1u << JF_DET_COUNT) - 1)

/* What a detector found. The fingerprint names the match without holding
 * it: "<detector>:<first 4 bytes of the match>:<12 hex of its SHA-256>"
 * (the first 4 bytes are a fixed prefix such as "ghp_" or "----", never
 * part of the secret itself). */
struct jf_secret_hit {
	enum jf_secret_det det;
	size_t offset;	      /* of the match in the bytes */
	char fingerprint[48]; /* NUL-terminated */
};

struct jf_secrets;

/*
 * Compile the detectors of @mask (bits of enum jf_secret_det; 0 = none, every
 * scan answers "not a secret") into *@out. Returns 0, -ENOMEM, or -EINVAL if
 * a pattern does not compile (a bug). The result is read-only: one compile,
 * then any number of threads may scan with it at once. Free with
 * jf_secrets_free().
 */
int jf_secrets_new(uint32_t mask, struct jf_secrets **out);

/* Free what jf_secrets_new() made; NULL is a no-op. No scan may be running. */
void jf_secrets_free(struct jf_secrets *s);

/*
 * The detectors of every bit, compiled once for the life of the process (on
 * the first call, under pthread_once). NULL if that failed (out of memory).
 * Never free it.
 */
const struct jf_secrets *jf_secrets_default(void);

/*
 * Do the first min(@len, JF_SECRETS_SCAN_MAX) bytes at @buf hold a secret?
 * 1 with *@hit filled for the first detector (in enum order) that confirmed
 * one, 0 not a secret, -ENOMEM. Thread-safe: the Vectorscan scratch space is
 * per thread (allocated at a thread's first scan, freed at its exit), the
 * PCRE2 match data per call. Does not keep @buf.
 */
int jf_secrets_scan(const struct jf_secrets *s, const void *buf, size_t len,
		    struct jf_secret_hit *hit);

/* The detector's name as docs/secrets.md and policies spell it
 * ("private-key", "github", ...); static storage. */
const char *jf_secret_det_name(enum jf_secret_det det);

/* The detector named @name (@len bytes), or -EINVAL. */
int jf_secret_det_lookup(const char *name, size_t len);

/* The engine this build uses for the first pass: "vectorscan" or "pcre2".
 * A build with Vectorscan on a CPU it cannot run on (x86 without SSSE3)
 * runs PCRE2 alone, with the same verdicts. */
const char *jf_secrets_engine(void);

#endif
