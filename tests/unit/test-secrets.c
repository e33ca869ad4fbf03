/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the secret detectors (policy/secrets.c): key files made at
 * test time by gen-secrets.sh (every ssh-keygen type, openssl's PEM and
 * PKCS#12 forms, a gpg secret key) and their public halves; tokens
 * synthesized here with valid checksums (zlib's crc32() as the reference);
 * text that looks close and holds no secret; the scan bound; concurrent
 * scans. Usage: test-secrets FIXTURE_DIR.
 *
 * This file must hold no secret itself (jailfs --scan of the repository
 * finds none): tokens are made at run time, and connection strings are
 * split where '@' follows the password.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "policy-internal.h"
#include "policy.h"
#include "secrets.h"

static const char *fixture_dir;
static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* @n random characters of @alpha into @out (NUL-terminated). */
static void rnd(char *out, size_t n, const char *alpha)
{
	unsigned char r[512];
	size_t k = strlen(alpha);

	assert_true(n < sizeof(r));
	assert_int_equal(getrandom(r, n, 0), (ssize_t)n);
	for (size_t i = 0; i < n; i++)
		out[i] = alpha[r[i] % k];
	out[n] = '\0';
}

/* The scan of @text: the detector's name, or NULL for "not a secret". */
static const char *det_of(const char *text, size_t len)
{
	struct jf_secret_hit hit;
	int r = jf_secrets_scan(jf_secrets_default(), text, len, &hit);

	assert_true(r == 0 || r == 1);
	if (r == 0)
		return NULL;
	/* the fingerprint names the detector, never more than 4 bytes of it */
	assert_true(strncmp(hit.fingerprint, jf_secret_det_name(hit.det),
			    strlen(jf_secret_det_name(hit.det))) == 0);
	assert_true(hit.offset < len);
	return jf_secret_det_name(hit.det);
}

static void expect(const char *text, const char *want)
{
	const char *got = det_of(text, strlen(text));

	if (!want && got)
		fail_msg("%s flagged by %s", text, got);
	if (want && (!got || strcmp(got, want) != 0))
		fail_msg("%s: want %s, got %s", text, want, got ? got : "none");
}

/* A GitHub or npm style token: prefix, 30 random base62, their CRC-32 in
 * 6 base62 digits (wrong by one when @bad). */
static void crc_token(char *out, const char *prefix, bool bad)
{
	char ent[31];
	unsigned long c;
	char sum[7];

	rnd(ent, 30, b62);
	c = crc32(0, (const unsigned char *)ent, 30);
	if (bad)
		c ^= 1;
	for (int i = 5; i >= 0; i--) {
		sum[i] = b62[c % 62];
		c /= 62;
	}
	sum[6] = '\0';
	sprintf(out, "%s%s%s", prefix, ent, sum);
}

static void test_crc_tokens(void **state)
{
	static const char *const gh[] = {"ghp_", "gho_", "ghu_", "ghs_", "ghr_"};
	char tok[64], line[128];

	(void)state;
	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < 5; i++) {
			crc_token(tok, gh[i], false);
			snprintf(line, sizeof(line), "export GITHUB_TOKEN=%s\n", tok);
			expect(line, "github");
			crc_token(tok, gh[i], true);
			expect(tok, NULL); /* the checksum does not hold */
		}
		crc_token(tok, "npm_", false);
		snprintf(line, sizeof(line), "//registry.npmjs.org/:_authToken=%s\n", tok);
		expect(line, "npm");
		crc_token(tok, "npm_", true);
		expect(tok, NULL);
		crc_token(tok, "ghx_", false);
		expect(tok, NULL); /* no such prefix */
	}
}

static void test_shaped_tokens(void **state)
{
	char a[400], b[400], line[1024];

	(void)state;
	rnd(a, 22, b62);
	rnd(b, 59, b62);
	snprintf(line, sizeof(line), "token: github_pat_%s_%s\n", a, b);
	expect(line, "github");
	rnd(a, 20, b64url);
	snprintf(line, sizeof(line), "GITLAB_TOKEN=glpat-%s", a);
	expect(line, "gitlab");
	expect("glpat-xxxxxxxxxxxxxxxxxxxx", NULL);
	expect("GITLAB_TOKEN=glpat-your_gitlab_token_here", NULL);
	expect("sk_live_YOUR_SECRET_KEY_HERE_XXXXXXXX", NULL);
	rnd(a, 24, b62);
	snprintf(line, sizeof(line), "xoxb-123456789012-1234567890123-%s", a);
	expect(line, "slack");
	snprintf(line, sizeof(line),
		 "url = \"https://hooks.slack.com/services/T0123ABCD/B0123ABCDE/%s\"", a);
	expect(line, "slack");
	snprintf(line, sizeof(line), "STRIPE=sk_live_%s", a);
	expect(line, "stripe");
	snprintf(line, sizeof(line), "rk_live_%s", a);
	expect(line, "stripe");
	snprintf(line, sizeof(line), "sk_test_%s", a);
	expect(line, NULL); /* test mode keys move no money */
	rnd(a, 35, b64url);
	snprintf(line, sizeof(line), "key=AIza%s&q=1", a);
	expect(line, "google");
	rnd(a, 120, b64url);
	snprintf(line, sizeof(line), "password = pypi-AgEIcHlwaS5vcmc%s\n", a);
	expect(line, "pypi");
	rnd(a, 20, b64url);
	rnd(b, 20, b64url);
	snprintf(line, sizeof(line), "OPENAI_API_KEY=sk-%sT3BlbkFJ%s", a, b);
	expect(line, "openai");
	rnd(a, 150, b64url);
	snprintf(line, sizeof(line), "OPENAI_API_KEY=sk-proj-%s", a);
	expect(line, "openai");
	rnd(a, 93, b64url);
	snprintf(line, sizeof(line), "ANTHROPIC_API_KEY=sk-ant-api03-%sAA\n", a);
	expect(line, "anthropic");
	expect("sk-ant-api03-...", NULL);
	expect("the sk-proj- prefix marks project keys", NULL);
}

static void test_aws(void **state)
{
	char id[17], key[41], line[512];

	(void)state;
	rnd(id, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567");
	do
		rnd(key, 40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
	while (!strpbrk(key, "0123456789") || !strpbrk(key, "abcdefghijklmnopqrstuvwxyz") ||
	       !strpbrk(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"));
	snprintf(line, sizeof(line),
		 "[default]\naws_access_key_id = AKIA%s\naws_secret_access_key = %s\n", id, key);
	expect(line, "aws");
	snprintf(line, sizeof(line), "aws_secret_access_key = %s\nregion=x\nkey_id: ASIA%s\n", key,
		 id);
	expect(line, "aws");
	snprintf(line, sizeof(line), "aws_access_key_id = AKIA%s\n", id);
	expect(line, NULL); /* an id alone grants nothing */
	/* the documentation's own pair */
	expect("aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
	       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
	       NULL);
	/* a SHA-1 next to an id is not its secret */
	snprintf(line, sizeof(line), "AKIA%s da39a3ee5e6b4b0d3255bfef95601890afd80709\n", id);
	expect(line, NULL);
}

/* base64url of @n bytes (no padding) into @out. */
static void b64url_of(char *out, const unsigned char *in, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = in[i] << 16 | (i + 1 < n ? in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);

		out[o++] = b64url[v >> 18 & 63];
		out[o++] = b64url[v >> 12 & 63];
		if (i + 1 < n)
			out[o++] = b64url[v >> 6 & 63];
		if (i + 2 < n)
			out[o++] = b64url[v & 63];
	}
	out[o] = '\0';
}

static void jwt(char *out, const char *header, size_t siglen)
{
	char h[200], p[200], s[200];
	unsigned char sig[64];
	const char *payload = "{\"sub\":\"1234567890\",\"name\":\"A\",\"iat\":1516239022}";

	assert_int_equal(getrandom(sig, siglen, 0), (ssize_t)siglen);
	b64url_of(h, (const unsigned char *)header, strlen(header));
	b64url_of(p, (const unsigned char *)payload, strlen(payload));
	b64url_of(s, sig, siglen);
	sprintf(out, "Authorization: Bearer %s.%s.%s\n", h, p, s);
}

static void test_jwt(void **state)
{
	char line[1024];

	(void)state;
	jwt(line, "{\"alg\":\"HS256\",\"typ\":\"JWT\"}", 32);
	expect(line, "jwt");
	jwt(line, "{\"typ\":\"JWT\", \"alg\": \"HS384\"}", 48);
	expect(line, "jwt");
	jwt(line, "{\"alg\":\"HS512\"}", 64);
	expect(line, "jwt");
	jwt(line, "{\"alg\":\"HS256\"}", 48); /* a signature of the wrong length */
	expect(line, NULL);
	jwt(line, "{\"alg\":\"RS256\",\"typ\":\"JWT\"}", 64); /* signed with a public key pair */
	expect(line, NULL);
	jwt(line, "{\"alg\":\"none\"}", 32);
	expect(line, NULL);
	/* the published examples, their keys public: RFC 7519 section 3.1, jwt.io */
	expect("eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkz"
	       "ODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ."
	       "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
	       NULL);
	expect("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4g"
	       "RG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
	       NULL);
	/* the same header and payload with another signature: a real token */
	expect("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4g"
	       "RG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.Q2xvc2UgdG8gdGhlIGV4YW1wbGUgYnV0IG5vdCBpdCE",
	       "jwt");
}

static void test_connstr(void **state)
{
	(void)state;
	/* split where '@' follows the password, so this file holds none */
	expect("DATABASE_URL=postgres://app:Xk3v9qLmT2"
	       "@db.internal:5432/app",
	       "connection-string");
	expect("postgresql://app:Xk3v9qLmT2"
	       "@10.0.0.5/app",
	       "connection-string");
	expect("mysql://root:9fj2K!x8"
	       "@localhost/db",
	       "connection-string");
	expect("mongodb+srv://svc:Tr0ub4dor3"
	       "@cluster0.abcd.mongodb.net/",
	       "connection-string");
	expect("REDIS_URL=redis://:Qw8zPl2m"
	       "@cache:6379/0",
	       "connection-string");
	expect("amqps://svc:Lk29xQpa"
	       "@mq.example.org/vhost",
	       "connection-string");
	/* what documentation writes instead of a password */
	expect("postgres://user:password@localhost/db", NULL);
	expect("postgres://postgres:postgres@localhost/db", NULL);
	expect("mysql://user:${DB_PASSWORD}@localhost/db", NULL);
	expect("mongodb://<user>:<password>@host/db", NULL);
	expect("amqp://guest:guest@localhost:5672/", NULL);
	expect("redis://:%s@%s:%d", NULL);
	expect("postgres://u:****@host/db", NULL);
	expect("postgres://app:DB_PASSWORD@host/db", NULL);
	expect("postgres://localhost:5432/db", NULL); /* no password at all */
	expect("https://user:Xk3v9qLmT2@example.org/", NULL);
}

static void test_putty(void **state)
{
	char pub[80], priv[80], text[1024];

	(void)state;
	rnd(pub, 64, b62);
	rnd(priv, 64, b62);
	snprintf(text, sizeof(text),
		 "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: rsa-key\n"
		 "Public-Lines: 2\n%s\n%s\nPrivate-Lines: 1\n%s\nPrivate-MAC: 00ff\n",
		 pub, pub, priv);
	expect(text, "putty");
	snprintf(text, sizeof(text),
		 "PuTTY-User-Key-File-3: ssh-ed25519\r\nEncryption: aes256-cbc\r\n"
		 "Comment: ed\r\nPublic-Lines: 1\r\n%s\r\nKey-Derivation: Argon2id\r\n"
		 "Argon2-Memory: 8192\r\nArgon2-Passes: 13\r\nArgon2-Parallelism: 1\r\n"
		 "Argon2-Salt: 0011\r\nPrivate-Lines: 1\r\n%s\r\n",
		 pub, priv);
	expect(text, "putty");
	expect("A PuTTY key starts with PuTTY-User-Key-File-3: and a key type.\n", NULL);
}

static void test_armor_prose(void **state)
{
	(void)state;
	expect("-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----\n", NULL);
	expect("-----BEGIN PRIVATE KEY-----\n<your key here>\n-----END PRIVATE KEY-----\n", NULL);
	/* base64, but not DER: a test string */
	expect("-----BEGIN PRIVATE KEY-----\nSGVsbG8gd29ybGQgdGhpcyBpcyBub3QgYSBrZXkgYXQgYWxs\n"
	       "-----END PRIVATE KEY-----\n",
	       NULL);
	/* no END line: cut prose, not a key */
	expect("-----BEGIN EC PRIVATE "
	       "KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yBy3aQ0Jp0SQoYvjZ0RnQHXb8KhoAoGCCqG\n",
	       NULL);
	/* END of another label */
	expect("-----BEGIN EC PRIVATE "
	       "KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yBy3aQ0Jp0SQoYvjZ0RnQHXb8KhoAoGCCqG\n"
	       "-----END RSA PRIVATE KEY-----\n",
	       NULL);
	expect("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAB3NzaC1yc2EAAAADAQABAAABAQC7\n"
	       "-----END OPENSSH PRIVATE KEY-----\n",
	       NULL); /* base64 of an ssh public key, not openssh-key-v1 */
	expect("", NULL);
	expect("0123456789abcdef0123456789abcdef01234567", NULL);
	expect("f47ac10b-58cc-4372-a567-0e02b2c3d479", NULL);
}

static char *slurp(int dfd, const char *name, size_t *len)
{
	char *buf = malloc(JF_SECRETS_SCAN_MAX);
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	assert_non_null(buf);
	assert_true(fd >= 0);
	n = read(fd, buf, JF_SECRETS_SCAN_MAX);
	assert_true(n >= 0);
	close(fd);
	*len = (size_t)n;
	return buf;
}

/* Does the confirming stage alone (a build without Vectorscan) give the
 * same verdict as both stages? */
static bool same_without_first_pass(const char *buf, size_t len)
{
	struct jf_secret_hit a, b;
	int ra = jf_secrets_scan(jf_secrets_default(), buf, len, &a);
	int rb = jf_secrets_scan_confirm_only(jf_secrets_default(), buf, len, &b);

	return ra == rb && (ra != 1 || (a.det == b.det && a.offset == b.offset));
}

/* Every fixture: pos-<detector>-* found by that detector, neg-* by none,
 * with and without the first pass. */
static void test_fixtures(void **state)
{
	DIR *d = opendir(fixture_dir);
	struct dirent *e;
	unsigned pos = 0, neg = 0, bad = 0;

	(void)state;
	assert_non_null(d);
	while ((e = readdir(d))) {
		const char *name = e->d_name, *got;
		size_t len;
		char *buf;

		if (strncmp(name, "pos-", 4) != 0 && strncmp(name, "neg-", 4) != 0)
			continue;
		buf = slurp(dirfd(d), name, &len);
		got = det_of(buf, len);
		if (!same_without_first_pass(buf, len)) {
			print_error("%s: the first pass dropped a candidate\n", name);
			bad++;
		}
		free(buf);
		if (name[0] == 'n') {
			neg++;
			if (got) {
				print_error("%s: flagged by %s\n", name, got);
				bad++;
			}
			continue;
		}
		pos++;
		if (!got || strncmp(name + 4, got, strlen(got)) != 0 ||
		    name[4 + strlen(got)] != '-') {
			print_error("%s: got %s\n", name, got ? got : "none");
			bad++;
		}
	}
	closedir(d);
	print_message("fixtures: %u with a secret, %u without\n", pos, neg);
	assert_true(pos >= 25 && neg >= 20);
	assert_int_equal(bad, 0);
}

/* A key past the bound is not seen; one inside it is, whatever precedes it. */
static void test_bound(void **state)
{
	size_t len;
	int dfd = open(fixture_dir, O_RDONLY | O_DIRECTORY);
	char *key = slurp(dfd, "pos-openssh-ed25519", &len);
	size_t total = JF_SECRETS_SCAN_MAX + len + 16;
	char *big = malloc(total);

	(void)state;
	close(dfd);
	assert_non_null(big);
	memset(big, 'a', total);
	for (size_t i = 80; i < total; i += 81)
		big[i] = '\n';
	memcpy(big + JF_SECRETS_SCAN_MAX - len - 1, key, len);
	assert_string_equal(det_of(big, total), "openssh");
	memset(big, 'a', JF_SECRETS_SCAN_MAX);
	memcpy(big + JF_SECRETS_SCAN_MAX + 8, key, len);
	assert_null(det_of(big, total));
	free(big);
	free(key);
}

/* A set compiled for one detector finds that one only; none finds nothing. */
static void test_selection(void **state)
{
	struct jf_secrets *only, *none;
	struct jf_secret_hit hit;
	char tok[64];

	(void)state;
	crc_token(tok, "ghp_", false);
	assert_int_equal(jf_secrets_new(1u << JF_DET_NPM, &only), 0);
	assert_int_equal(jf_secrets_new(0, &none), 0);
	assert_int_equal(jf_secrets_scan(only, tok, strlen(tok), &hit), 0);
	assert_int_equal(jf_secrets_scan(none, tok, strlen(tok), &hit), 0);
	crc_token(tok, "npm_", false);
	assert_int_equal(jf_secrets_scan(only, tok, strlen(tok), &hit), 1);
	assert_int_equal(hit.det, JF_DET_NPM);
	/* the fingerprint holds the prefix and a hash, not the token */
	assert_null(strstr(hit.fingerprint, tok + 4));
	assert_int_equal(strncmp(hit.fingerprint, "npm:npm_:", 9), 0);
	jf_secrets_free(only);
	jf_secrets_free(none);
	for (int i = 0; i < JF_DET_COUNT; i++) {
		const char *n = jf_secret_det_name(i);

		assert_int_equal(jf_secret_det_lookup(n, strlen(n)), i);
	}
	assert_true(jf_secret_det_lookup("nope", 4) < 0);
}

static void *scan_many(void *arg)
{
	const char *tok = arg;
	struct jf_secret_hit hit;
	long bad = 0;

	for (int i = 0; i < 2000; i++)
		bad += jf_secrets_scan(jf_secrets_default(), tok, strlen(tok), &hit) != 1 ||
		       hit.det != JF_DET_GITHUB;
	return (void *)bad;
}

/* Threads share one compiled set; each gets its own scratch. */
static void test_threads(void **state)
{
	pthread_t t[4];
	char tok[64];
	void *bad;

	(void)state;
	crc_token(tok, "ghs_", false);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, scan_many, tok), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_null(bad);
	}
}

static struct jf_policy *parse(const char *text)
{
	struct jf_policy *p;
	char err[256];

	if (jf_policy_parse("t.ini", text, strlen(text), &p, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return p;
}

static void parse_err(const char *text, const char *want)
{
	struct jf_policy *p;
	char err[256];

	assert_true(jf_policy_parse("t.ini", text, strlen(text), &p, err, sizeof(err)) < 0);
	assert_string_equal(err, want);
}

/* [content]: on by default, off with -secrets, detectors chosen by name. */
static void test_policy_section(void **state)
{
	struct jf_policy *p;
	uint32_t m;

	(void)state;
	assert_int_equal(jf_policy_default(&p), 0);
	assert_true(jf_policy_content_scan(p, &m));
	assert_int_equal(m, JF_DET_ALL);
	jf_policy_free(p);
	p = parse("[options]\ndefault = safe\nprofiles = project, -secrets\n");
	assert_false(jf_policy_content_scan(p, &m));
	assert_int_equal(m, 0);
	jf_policy_free(p);
	p = parse("[options]\ndefault = safe\nprofiles = -secrets\n[content]\nscan = on\n");
	assert_true(jf_policy_content_scan(p, NULL));
	jf_policy_free(p);
	p = parse("[options]\ndefault = safe\n[content]\nscan = off\n");
	assert_false(jf_policy_content_scan(p, NULL));
	jf_policy_free(p);
	p = parse("[options]\ndefault = safe\n[content]\ndetectors = all, -jwt, "
		  "-connection-string\n");
	assert_true(jf_policy_content_scan(p, &m));
	assert_int_equal(m, JF_DET_ALL & ~(1u << JF_DET_JWT) & ~(1u << JF_DET_CONNSTR));
	jf_policy_free(p);
	p = parse("[options]\ndefault = safe\n[content]\ndetectors = github, npm\n");
	assert_true(jf_policy_content_scan(p, &m));
	assert_int_equal(m, (1u << JF_DET_GITHUB) | (1u << JF_DET_NPM));
	jf_policy_free(p);
	parse_err("[options]\ndefault = safe\n[content]\ndetectors = all, -nope\n",
		  "t.ini:4: unknown detector '-nope' (docs/secrets.md lists them)");
	parse_err("[options]\ndefault = safe\n[content]\nscan = maybe\n",
		  "t.ini:4: scan must be on or off");
	parse_err("[options]\ndefault = safe\n[content]\ncolour = red\n",
		  "t.ini:4: unknown key 'colour' in [content] (expected scan or detectors)");
}

static void zone_of(const struct jf_policy *p, const char *path, int secret, const char *bytes,
		    size_t n, enum jf_zone want, const char *source)
{
	struct jf_verdict v;

	jf_classify_content(p, path, strlen(path), secret, bytes, n, &v);
	if (v.zone != want)
		fail_msg("%s (secret %d): zone %d, want %d", path, secret, v.zone, want);
	if (source && (!v.rule || strcmp(v.rule->source, source) != 0))
		fail_msg("%s: rule %s, want %s", path, v.rule ? v.rule->source : "default", source);
}

#define Z(p, path, secret, text, want, src) zone_of(p, path, secret, text, strlen(text), want, src)

/* Name and content combine to the stricter zone; "not a secret" lifts only
 * the built-in extension rules; name overrides either way. */
static void test_policy_combine(void **state)
{
	static const char bin[] = "\x30\x82\x01\x00\x00\x02";
	struct jf_policy *p, *off;

	(void)state;
	p = parse("[options]\ndefault = safe\n[restricted]\ndocs/\n[content]\n"
		  "!vendor/certifi/\nnotes/keys.txt\n");
	Z(p, "src/notes.txt", 1, "x", JF_DENIED, "content");
	Z(p, "src/notes.txt", 0, "x", JF_SAFE, NULL);
	Z(p, "docs/a.md", 1, "x", JF_DENIED, "content");
	Z(p, "docs/a.md", 0, "x", JF_RESTRICTED, "t.ini");
	Z(p, ".env", 0, "A=1\n", JF_DENIED, "secrets"); /* the name alone hides it */
	Z(p, ".env", 1, "A=1\n", JF_DENIED, "secrets");
	/* the built-in extension rules: lifted by "not a secret" on plain text */
	Z(p, "conf/server.pem", 0, "# empty for now\n", JF_SAFE, NULL);
	Z(p, "conf/license.key", 0, "ABCD-EFGH-IJKL\n", JF_SAFE, NULL);
	Z(p, "conf/server.key", 0, "-----BEGIN FOO KEY-----\nAAAA\n-----END FOO KEY-----\n",
	  JF_DENIED, "secrets"); /* armor of a kind not known public */
	zone_of(p, "conf/server.key", 0, bin, sizeof(bin) - 1, JF_DENIED, "secrets"); /* DER */
	Z(p, "conf/server.pem", 1, "x", JF_DENIED, "secrets");
	/* overrides */
	zone_of(p, "vendor/certifi/cacert.pem", 1, bin, sizeof(bin) - 1, JF_SAFE, NULL);
	Z(p, "vendor/certifi/x.txt", 1, "x", JF_SAFE, NULL);
	Z(p, "notes/keys.txt", 0, "x", JF_DENIED, "content");
	Z(p, "Notes/Keys.TXT", 0, "x", JF_DENIED, "content");
	assert_int_equal(jf_policy_content_name(p, "vendor/certifi/a", 16), 0);
	assert_int_equal(jf_policy_content_name(p, "notes/keys.txt", 14), 1);
	assert_int_equal(jf_policy_content_name(p, "src/a", 5), -1);
	/* scanning off: the names alone, as before */
	off = parse("[options]\ndefault = safe\n[content]\nscan = off\n");
	Z(off, "src/notes.txt", 1, "x", JF_SAFE, NULL);
	Z(off, "conf/server.pem", 0, "# empty\n", JF_DENIED, "secrets");
	jf_policy_free(off);
	jf_policy_free(p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc_tokens),
		cmocka_unit_test(test_shaped_tokens),
		cmocka_unit_test(test_aws),
		cmocka_unit_test(test_jwt),
		cmocka_unit_test(test_connstr),
		cmocka_unit_test(test_putty),
		cmocka_unit_test(test_armor_prose),
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_selection),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_policy_section),
		cmocka_unit_test(test_policy_combine),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: test-secrets FIXTURE_DIR\n");
		return 2;
	}
	fixture_dir = argv[1];
	if (!jf_secrets_default()) {
		fprintf(stderr, "test-secrets: the detectors do not compile\n");
		return 1;
	}
	print_message("engine: %s\n", jf_secrets_engine());
	return cmocka_run_group_tests(tests, NULL, NULL);
}
