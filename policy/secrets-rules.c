/* SPDX-License-Identifier: MIT */
/*
 * The secret detectors: for each format, the pattern of a candidate and the
 * check of its parts that tells a real one from text that only looks like
 * it. The source of each format fact is listed in docs/secrets.md.
 *
 * Every PCRE2 pattern is bounded (no unbounded repeat that can backtrack),
 * and armor bodies are matched line by line with possessive repeats, so a
 * confirming pass is linear in the bytes it looks at.
 */
#include <math.h>
#include <nettle/base64.h>
#include <string.h>

#include "policy-internal.h"
#include "secrets.h"

#define B64LINE "[A-Za-z0-9+/=]{4,128}\\r?\\n"
#define HEADER "[A-Za-z0-9-]{1,40}: [^\\r\\n]{0,200}\\r?\\n"

uint32_t jf_crc32(const unsigned char *p, size_t len)
{
	uint32_t c = 0xffffffffu;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

/* Shannon entropy of @len bytes, in bits per byte. */
static double entropy(const unsigned char *p, size_t len)
{
	unsigned counts[256] = {0};
	double h = 0;

	if (len == 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		counts[p[i]]++;
	for (int i = 0; i < 256; i++) {
		if (counts[i]) {
			double f = (double)counts[i] / (double)len;

			h -= f * log2(f);
		}
	}
	return h;
}

/* Does group @g of the match hold bytes with at least @bits of entropy? */
static bool group_random(const unsigned char *buf, const size_t *ov, int g, double bits)
{
	return entropy(buf + ov[2 * g], ov[2 * g + 1] - ov[2 * g]) >= bits;
}

/* Decode the first bytes of base64 text (whitespace skipped, @url: the URL
 * alphabet) into @out (@cap bytes); the count decoded, -1 if not base64. */
static ssize_t b64_head(const unsigned char *s, size_t n, bool url, uint8_t *out, size_t cap)
{
	struct base64_decode_ctx ctx;
	size_t want = cap / 3 * 4, got = 0, len = 0;

	if (url)
		base64url_decode_init(&ctx);
	else
		base64_decode_init(&ctx);
	/* take @want non-whitespace characters at most, in one call */
	while (len < n && got < want) {
		if (s[len] != '\n' && s[len] != '\r')
			got++;
		len++;
	}
	size_t dlen = cap;
	if (!base64_decode_update(&ctx, &dlen, out, len, (const char *)s))
		return -1;
	return (ssize_t)dlen;
}

/* A PEM body (group 3) whose DER starts with a SEQUENCE, or one encrypted
 * the OpenSSL way (Proc-Type and DEK-Info headers, group 2). */
static bool check_pem(const unsigned char *buf, size_t len, const size_t *ov, int n)
{
	uint8_t der[48];
	const unsigned char *hdr = buf + ov[4];
	size_t hlen = ov[5] - ov[4];
	ssize_t d = b64_head(buf + ov[6], ov[7] - ov[6], false, der, sizeof(der));

	/* hdr is never NULL; saying so keeps -Wnonnull quiet under -fsanitize */
	if (hlen && hdr)
		return memmem(hdr, hlen, "Proc-Type: 4,ENCRYPTED", 22) &&
		       memmem(hdr, hlen, "DEK-Info: ", 10) && d >= 16;
	return d >= 16 && der[0] == 0x30 && (der[1] & 0x80 ? der[1] <= 0x84 : der[1] >= 16);
}

/* openssh-key-v1: the body decodes to the format's magic, NUL included. */
static bool check_openssh(const unsigned char *buf, size_t len, const size_t *ov, int n)
{
	static const char magic[] = "openssh-key-v1";
	uint8_t raw[24];
	ssize_t d = b64_head(buf + ov[2], ov[3] - ov[2], false, raw, sizeof(raw));

	return d >= (ssize_t)sizeof(magic) && memcmp(raw, magic, sizeof(magic)) == 0;
}

/* The first packet of the body is a Secret-Key packet (tag 5), in the old
 * or the new packet format (RFC 4880 sections 4.2, 5.5.3). */
static bool check_pgp(const unsigned char *buf, size_t len, const size_t *ov, int n)
{
	uint8_t raw[3];
	ssize_t d = b64_head(buf + ov[4], ov[5] - ov[4], false, raw, sizeof(raw));

	return d >= 1 && ((raw[0] & 0xfc) == 0x94 || raw[0] == 0xc5);
}

static bool check_shape(const unsigned char *buf, size_t len, const size_t *ov, int n)
{
	return true;
}

/* A DER length at @p (@n bytes left): its value, the bytes it takes in *@hl;
 * -1 if not a definite length of at most 4 bytes. */
static long der_len(const unsigned char *p, size_t n, size_t *hl)
{
	long v = 0;
	size_t k;

	if (n < 1)
		return -1;
	if (p[0] < 0x80) {
		*hl = 1;
		return p[0];
	}
	k = p[0] & 0x7f;
	if (k == 0 || k > 3 || n < 1 + k)
		return -1;
	for (size_t i = 1; i <= k; i++)
		v = v << 8 | p[i];
	*hl = 1 + k;
	return v;
}

/*
 * PFX ::= SEQUENCE { version INTEGER (3), authSafe ContentInfo, ... } with
 * authSafe's contentType id-data or id-signedData (RFC 7292 section 4). The
 * outer length must end at the end of the file, unless the bytes stop at the
 * scan bound.
 */
static bool check_pkcs12(const unsigned char *buf, size_t len, const size_t *ov, int n)
{
	static const unsigned char oid[] = {0x06, 0x09, 0x2a, 0x86, 0x48,
					    0x86, 0xf7, 0x0d, 0x01, 0x07};
	size_t hl = 0, hl2 = 0, at;
	long outer, inner;

	if (len < 24 || buf[0] != 0x30)
		return false;
	outer = der_len(buf + 1, len - 1, &hl);
	if (outer < 0 || (len < JF_SECRETS_SCAN_MAX && (size_t)outer + 1 + hl != len))
		return false;
	at = 1 + hl;
	if (len - at < 4 || memcmp(buf + at, "\x02\x01\x03\x30", 4) != 0)
		return false;
	at += 4;
	inner = der_len(buf + at, len - at, &hl2);
	at += hl2;
	if (inner < 12 || len - at < sizeof(oid) + 1 || memcmp(buf + at, oid, sizeof(oid)) != 0)
		return false;
	return buf[at + sizeof(oid)] == 0x01 || buf[at + sizeof(oid)] == 0x02;
}

/* How many of upper case, lower case and digits @p holds. */
static int char_classes(const unsigned char *p, size_t n)
{
	bool u = false, l = false, d = false;

	for (size_t i = 0; i < n; i++) {
		u |= p[i] >= 'A' && p[i] <= 'Z';
		l |= p[i] >= 'a' && p[i] <= 'z';
		d |= p[i] >= '0' && p[i] <= '9';
	}
	return u + l + d;
}

/*
 * Could @n bytes at @p be drawn at random from a token alphabet (about 64
 * characters)? Two classes of characters at least (a placeholder such as
 * "your_token_here" or "XXXX" has one), and an entropy no more than 1.3 bits
 * under the most that @n characters can have (random strings of 20 to 93
 * characters stayed above it in 200,000 draws each).
 */
static bool random_enough(const unsigned char *p, size_t n)
{
	double most = log2((double)(n < 64 ? n : 64));

	return char_classes(p, n) >= 2 && entropy(p, n) >= most - 1.3;
}

static bool b64_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/';
}

/* A secret access key: a run of exactly 40 base64 characters, random
 * enough and above the 4 bits of hex (a SHA-1), within 1 KiB either side of
 * the key id. */
#define AWS_NEAR 1024
static bool check_aws(const unsigned char *buf, size_t len, const size_t *ov, int n)
{
	size_t lo = ov[0] > AWS_NEAR ? ov[0] - AWS_NEAR : 0;
	size_t hi = len - ov[1] > AWS_NEAR ? ov[1] + AWS_NEAR : len;

	if (memmem(buf + ov[0], ov[1] - ov[0], "EXAMPLE", 7))
		return false; /* the documentation's own examples */
	for (size_t i = lo; i < hi;) {
		size_t j = i;

		while (j < hi && b64_char(buf[j]))
			j++;
		if (j - i == 40 && (j == len || buf[j] != '=') && random_enough(buf + i, 40) &&
		    entropy(buf + i, 40) > 4.0 && !memmem(buf + i, 40, "EXAMPLE", 7))
			return true;
		i = j + 1;
	}
	return false;
}

/* Six base62 characters (0-9A-Za-z) of the CRC-32 of @p, zero-padded. */
static bool crc_b62_ok(const unsigned char *p, size_t n, const unsigned char *sum)
{
	static const char digits[] =
		"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	uint32_t c = jf_crc32(p, n);
	char want[6];

	for (int i = 5; i >= 0; i--) {
		want[i] = digits[c % 62];
		c /= 62;
	}
	return memcmp(want, sum, 6) == 0;
}

/* Classic tokens: CRC-32 of the 30 random characters (group 1) in the last
 * six (group 2). Fine-grained github_pat_ tokens (group 3): random enough. */
static bool check_github(const unsigned char *buf, size_t len, const size_t *ov, int n)
{
	if (n > 3 && ov[6] != (size_t)-1)
		return group_random(buf, ov, 3, 4.5);
	return crc_b62_ok(buf + ov[2], 30, buf + ov[4]);
}

static bool check_npm(const unsigned char *buf, size_t len, const size_t *ov, int n)
{
	return crc_b62_ok(buf + ov[2], 30, buf + ov[4]);
}

/* Group 1 random enough to be a key, not a placeholder ("xxxx", "your-key"). */
static bool check_random1(const unsigned char *buf, size_t len, const size_t *ov, int n)
{
	return random_enough(buf + ov[2], ov[3] - ov[2]);
}

static bool check_random1_any(const unsigned char *buf, size_t len, const size_t *ov, int n)
{
	return group_random(buf, ov, 1, 3.0);
}

/* Signatures of the published example tokens, whose keys are public: RFC
 * 7519 section 3.1 (the key of RFC 7515 appendix A.1) and jwt.io's default
 * ("your-256-bit-secret"). Documentation and tests quote them everywhere. */
static bool jwt_example(const unsigned char *sig, size_t n)
{
	static const char *const examples[] = {
		"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
		"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
		NULL,
	};

	for (size_t i = 0; examples[i]; i++)
		if (strlen(examples[i]) == n && memcmp(sig, examples[i], n) == 0)
			return true;
	return false;
}

/* The header (group 1) decodes to JSON naming an HMAC algorithm, and the
 * signature (group 2) has that algorithm's length: 32, 48 or 64 bytes in
 * unpadded base64url (RFC 7515 section 2, RFC 7518 section 3.2). */
static bool check_jwt(const unsigned char *buf, size_t len, const size_t *ov, int n)
{
	static const struct {
		const char *alg;
		size_t sig;
	} hs[] = {{"\"HS256\"", 43}, {"\"HS384\"", 64}, {"\"HS512\"", 86}};
	uint8_t hdr[256];
	size_t glen = ov[3] - ov[2];
	ssize_t d;
	const uint8_t *a, *end;

	if (glen > 340)
		return false;
	d = b64_head(buf + ov[2], glen, true, hdr, sizeof(hdr));
	if (d <= 0 || !(a = memmem(hdr, (size_t)d, "\"alg\"", 5)))
		return false;
	end = hdr + d;
	for (a += 5; a < end && (*a == ' ' || *a == ':' || *a == '\t'); a++)
		;
	for (size_t i = 0; i < sizeof(hs) / sizeof(hs[0]); i++)
		if ((size_t)(end - a) >= 7 && memcmp(a, hs[i].alg, 7) == 0)
			return ov[5] - ov[4] == hs[i].sig &&
			       !jwt_example(buf + ov[4], ov[5] - ov[4]);
	return false;
}

/* Passwords that stand for one in documentation and defaults everyone
 * knows: not a secret of anyone's. */
static const char *const placeholders[] = {
	"password", "passwd", "pass",	  "pwd",	  "secret",	"changeme", "example",
	"test",	    "user",   "username", "pw",		  "guest",	"root",	    "admin",
	"foo",	    "bar",    "postgres", "mysql",	  "redis",	"mongo",    "hunter2",
	"dbpass",   "mypass", "xxx",	  "yourpassword", "mypassword", NULL,
};

static bool placeholder(const unsigned char *p, size_t n, const unsigned char *user, size_t un)
{
	bool upper = true, same = true;

	if (n < 4 || (n == un && memcmp(p, user, n) == 0))
		return true;
	for (size_t i = 0; i < n; i++) {
		if (strchr("${}<>*()[]", p[i]) || (p[i] == '%' && i + 1 < n && p[i + 1] == 's'))
			return true;
		upper &= (p[i] >= 'A' && p[i] <= 'Z') || p[i] == '_';
		same &= p[i] == p[0];
	}
	if (upper || same)
		return true; /* an environment variable's name, "xxxx" */
	for (size_t i = 0; placeholders[i]; i++) {
		size_t k = strlen(placeholders[i]);

		if (n >= k && strncasecmp((const char *)p, placeholders[i], k) == 0 &&
		    (n == k || memchr("0123456789_-!", p[k], 13)))
			return true;
	}
	return false;
}

static bool check_connstr(const unsigned char *buf, size_t len, const size_t *ov, int n)
{
	return !placeholder(buf + ov[6], ov[7] - ov[6], buf + ov[4], ov[5] - ov[4]);
}

/* Tokens end where a character of their alphabet cannot follow. */
#define NB "(?<![A-Za-z0-9_])"
#define NA "(?![A-Za-z0-9_])"
#define NBD "(?<![A-Za-z0-9_-])"
#define NAD "(?![A-Za-z0-9_-])"

const struct jf_det_rule jf_det_rules[JF_DET_COUNT] = {
	[JF_DET_PRIVATE_KEY] = {"private-key",
				"-----BEGIN (RSA |EC |DSA |ENCRYPTED |ANY )?PRIVATE KEY-----",
				"-----BEGIN ((?:RSA |EC |DSA |ENCRYPTED |ANY )?PRIVATE KEY)-----"
				"\\r?\\n((?:" HEADER "){0,8}+)(?:\\r?\\n)?((?:" B64LINE
				")++)-----END \\1-----",
				check_pem},
	[JF_DET_OPENSSH] = {"openssh", "-----BEGIN OPENSSH PRIVATE KEY-----",
			    "-----BEGIN OPENSSH PRIVATE KEY-----\\r?\\n((?:" B64LINE
			    ")++)-----END OPENSSH PRIVATE KEY-----",
			    check_openssh},
	[JF_DET_PGP] = {"pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----",
			"-----BEGIN PGP PRIVATE KEY BLOCK-----\\r?\\n((?:" HEADER
			"){0,8}+)\\r?\\n((?:" B64LINE ")++)-----END PGP PRIVATE KEY BLOCK-----",
			check_pgp},
	[JF_DET_PUTTY] = {"putty", "PuTTY-User-Key-File-[23]: ",
			  "PuTTY-User-Key-File-[23]: [a-z0-9@.-]{3,40}\\r?\\n"
			  "Encryption: [a-z0-9-]{3,20}\\r?\\nComment: [^\\r\\n]{0,500}\\r?\\n"
			  "Public-Lines: [0-9]{1,3}\\r?\\n(?:" B64LINE ")++"
			  "(?:(?!Private-Lines)" HEADER
			  "){0,6}+Private-Lines: [0-9]{1,3}\\r?\\n[A-Za-z0-9+/=]{4}",
			  check_shape},
	[JF_DET_PKCS12] = {"pkcs12", NULL, NULL, check_pkcs12},
	[JF_DET_AWS] = {"aws", "(AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}",
			"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Z0-9])", check_aws},
	[JF_DET_GITHUB] = {"github", "gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9]{22}_",
			   NB "(?:gh[pousr]_([A-Za-z0-9]{30})([A-Za-z0-9]{6})|"
			      "github_pat_([A-Za-z0-9]{22}_[A-Za-z0-9]{59}))" NA,
			   check_github},
	[JF_DET_GITLAB] = {"gitlab", "glpat-[A-Za-z0-9_-]{20}",
			   NBD "glpat-([A-Za-z0-9_-]{20,300})(?:\\.[0-9a-z]{2}\\.[0-9a-z]{9})?" NAD,
			   check_random1},
	[JF_DET_SLACK] = {"slack", "xox[abprs]-[0-9]|hooks\\.slack\\.com/",
			  NBD "xox[abprs]-(?:[0-9]{6,13}-){1,3}([A-Za-z0-9]{10,64})" NAD
			      "|https://hooks\\.slack\\.com/(?:services|workflows|triggers)/"
			      "T[A-Z0-9]{6,12}/[A-Z0-9]{6,12}/([A-Za-z0-9]{16,32})" NAD,
			  check_shape},
	[JF_DET_STRIPE] = {"stripe", "[sr]k_live_[A-Za-z0-9]{24}",
			   NB "[sr]k_live_([A-Za-z0-9]{24,247})" NA, check_random1},
	[JF_DET_GOOGLE] = {"google", "AIza[0-9A-Za-z_-]{35}", NBD "AIza([0-9A-Za-z_-]{35})" NAD,
			   check_random1_any},
	[JF_DET_NPM] = {"npm", "npm_[A-Za-z0-9]{36}", NB "npm_([A-Za-z0-9]{30})([A-Za-z0-9]{6})" NA,
			check_npm},
	[JF_DET_PYPI] = {"pypi", "pypi-AgE(IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)",
			 NBD
			 "pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)([A-Za-z0-9_-]{50,1000})" NAD,
			 check_random1_any},
	[JF_DET_OPENAI] = {"openai", "T3BlbkFJ|sk-(proj|svcacct|admin)-[A-Za-z0-9_-]{40}",
			   NBD "sk-(?:(?:proj|svcacct|admin)-)?(?:[A-Za-z0-9_-]{16,200}T3BlbkFJ"
			       "([A-Za-z0-9_-]{16,200})|(?<=proj-|svcacct-|admin-)"
			       "([A-Za-z0-9_-]{80,300}))" NAD,
			   check_shape},
	[JF_DET_ANTHROPIC] = {"anthropic", "sk-ant-(api|admin)0",
			      NBD "sk-ant-(?:api03|admin01)-([A-Za-z0-9_-]{80,120})AA" NAD,
			      check_random1_any},
	[JF_DET_JWT] = {"jwt", "eyJ[A-Za-z0-9_-]{10}[A-Za-z0-9_-]*\\.eyJ",
			"(?<![A-Za-z0-9_.-])(eyJ[A-Za-z0-9_-]{10,340})\\.eyJ[A-Za-z0-9_-]{2,8000}+"
			"\\.([A-Za-z0-9_-]{43,86})(?![A-Za-z0-9_.=-])",
			check_jwt},
	[JF_DET_CONNSTR] = {"connection-string",
			    "(postgres|postgresql|mysql|mariadb|mongodb|mongodb\\+srv|redis|rediss|"
			    "amqp|amqps)://[^\\s/@:]*:[^\\s/@]+@",
			    "(?<![A-Za-z0-9+.-])(postgres(?:ql)?|mysql|mariadb|mongodb(?:\\+srv)?|"
			    "rediss?|amqps?)://([^:@/\\s'\"<>]{0,128}):([^@/\\s'\"<>]{1,256})@"
			    "[A-Za-z0-9._\\[\\]-]{1,255}",
			    check_connstr},
};
