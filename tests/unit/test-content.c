/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the [denied] rules subject to content: which profile rules
 * carry a content kind (policy/profiles.c), jf_classify_public (those rules
 * set aside, nothing else), and the content judge jf_content_public over
 * sample texts: CA bundles, certificates, public keys, every private key
 * armor, binary data, AsciiDoc, files cut while being written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy.h"

#define CERT                                                                                       \
	"-----BEGIN CERTIFICATE-----\n"                                                            \
	"MIIBszCCAVmgAwIBAgIUQ0123456789abcdefABCDEF\n"                                            \
	"-----END CERTIFICATE-----\n"
#define PUB                                                                                        \
	"-----BEGIN PUBLIC KEY-----\n"                                                             \
	"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n"                                                   \
	"-----END PUBLIC KEY-----\n"

static bool pub(enum jf_content kind, const char *text)
{
	return jf_content_public(kind, text, strlen(text));
}

static void test_public_pem(void **state)
{
	/* certifi's cacert.pem: comments, then certificates */
	static const char bundle[] =
		"\n# Issuer: CN=GlobalSign Root CA O=GlobalSign nv-sa\n"
		"# Label: \"GlobalSign Root CA\"\n" CERT "\n# Issuer: CN=x\n" CERT;

	(void)state;
	assert_true(pub(JF_CONTENT_PEM, bundle));
	assert_true(pub(JF_CONTENT_PEM, CERT));
	assert_true(pub(JF_CONTENT_PEM, PUB));
	assert_true(pub(JF_CONTENT_PEM, "Certificate:\n    Data:\n        Version: 3\n" CERT));
	assert_true(
		pub(JF_CONTENT_PEM, "-----BEGIN X509 CRL-----\nMIIB\n-----END X509 CRL-----\n"));
	assert_true(pub(JF_CONTENT_PEM, "-----BEGIN CERTIFICATE REQUEST-----\nMII\n"
					"-----END CERTIFICATE REQUEST-----\n"));
	assert_true(pub(JF_CONTENT_PEM, "-----BEGIN TRUSTED CERTIFICATE-----\nMII\n"));
	assert_true(pub(JF_CONTENT_PEM, "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQIN\n"));
	assert_true(pub(JF_CONTENT_PEM, ""));	      /* empty: just created */
	assert_false(pub(JF_CONTENT_PEM, "hello\n")); /* no armor: not a certificate */
	assert_false(pub(JF_CONTENT_NONE, CERT));
}

static void test_private_keys(void **state)
{
	static const char *const keys[] = {
		"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n",
		"-----BEGIN EC PRIVATE KEY-----\nMHcC\n",
		"-----BEGIN DSA PRIVATE KEY-----\nMIIB\n",
		"-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n",
		"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIF\n",
		"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQdG\n",
		"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nP2/5\n",
		/* a certificate and its key in one file (haproxy, nginx) */
		CERT "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n",
		/* the words anywhere, even outside armor */
		CERT "# PRIVATE KEY follows elsewhere\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		assert_false(pub(JF_CONTENT_PEM, keys[i]));
		assert_false(pub(JF_CONTENT_PUBKEY, keys[i]));
		assert_false(pub(JF_CONTENT_ASC, keys[i]));
	}
}

static void test_other_armor(void **state)
{
	(void)state;
	/* kinds that are not known public: encrypted messages, parameters,
	 * lowercase labels, a BEGIN without a proper label */
	assert_false(pub(JF_CONTENT_PEM, "-----BEGIN PGP MESSAGE-----\n\nhQEM\n"));
	assert_false(pub(JF_CONTENT_ASC, "-----BEGIN PGP MESSAGE-----\n\nhQEM\n"));
	assert_false(pub(JF_CONTENT_PEM, CERT "-----BEGIN EC PARAMETERS-----\nBggq\n"));
	assert_false(pub(JF_CONTENT_PEM, "-----BEGIN certificate-----\nMII\n"));
	assert_false(pub(JF_CONTENT_PEM, "-----BEGIN CERTIFICATE\nMII\n"));
	assert_false(pub(JF_CONTENT_PEM, "-----BEGIN-----\n"));
	assert_false(pub(JF_CONTENT_PEM, "-----BEGINCERTIFICATE-----\n"));
}

static void test_binary(void **state)
{
	static const char der[] = "\x30\x82\x01\x0a\x02\x82\x01\x01\x00\xc3";

	(void)state;
	assert_false(jf_content_public(JF_CONTENT_PEM, der, sizeof(der) - 1));
	assert_false(jf_content_public(JF_CONTENT_ASC, "text\0more", 9));
	assert_false(jf_content_public(JF_CONTENT_PEM, CERT "\0", sizeof(CERT)));
}

static void test_key_files(void **state)
{
	(void)state;
	/* *.key: PEM with PUBLIC KEY blocks only */
	assert_true(pub(JF_CONTENT_PUBKEY, PUB));
	assert_true(pub(JF_CONTENT_PUBKEY, "-----BEGIN RSA PUBLIC KEY-----\nMIIB\n"));
	assert_false(pub(JF_CONTENT_PUBKEY, CERT));
	assert_false(pub(JF_CONTENT_PUBKEY, PUB CERT));
	assert_false(pub(JF_CONTENT_PUBKEY, "c2VjcmV0LXRva2Vu\n")); /* a raw token */
	assert_false(pub(JF_CONTENT_PUBKEY, "-----BEGIN PGP PUBLIC KEY BLOCK-----\n"));
}

static void test_asc_files(void **state)
{
	(void)state;
	assert_true(pub(JF_CONTENT_ASC, "= Title\n:toc:\n\nSome AsciiDoc.\n"));
	assert_true(pub(JF_CONTENT_ASC, "-----BEGIN PGP SIGNATURE-----\n\niQIz\n"
					"-----END PGP SIGNATURE-----\n"));
	assert_true(pub(JF_CONTENT_ASC, "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n"
					"text\n-----BEGIN PGP SIGNATURE-----\n\niQIz\n"));
	assert_true(pub(JF_CONTENT_ASC, "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQIN\n"));
	assert_false(pub(JF_CONTENT_ASC, "= Doc\n\n-----BEGIN PGP MESSAGE-----\n"));
}

static void test_cut_while_written(void **state)
{
	(void)state;
	/* a bundle being written can end anywhere in a BEGIN line of a public
	 * kind; it is not private for that */
	assert_true(pub(JF_CONTENT_PEM, CERT "-----BEGIN"));
	assert_true(pub(JF_CONTENT_PEM, CERT "-----BEGIN CERTIF"));
	assert_true(pub(JF_CONTENT_PEM, CERT "-----BEGIN CERTIFICATE----"));
	/* a cut that can only become a private kind is not public */
	assert_false(pub(JF_CONTENT_PEM, CERT "-----BEGIN RSA PRIV"));
	assert_false(pub(JF_CONTENT_PEM, CERT "-----BEGIN EC"));
}

static void test_size_bound(void **state)
{
	size_t n = JF_CONTENT_MAX_SIZE + 1;
	char *big = malloc(n);

	(void)state;
	assert_non_null(big);
	memset(big, 'A', n);
	memcpy(big, CERT, sizeof(CERT) - 1);
	assert_false(jf_content_public(JF_CONTENT_PEM, big, n));
	assert_true(jf_content_public(JF_CONTENT_PEM, big, n - 1));
	free(big);
}

static struct jf_policy *parse_ok(const char *text)
{
	struct jf_policy *p = NULL;
	char err[256];

	assert_int_equal(jf_policy_parse("t.ini", text, strlen(text), &p, err, sizeof(err)), 0);
	return p;
}

static void test_rules_subject_to_content(void **state)
{
	struct jf_policy *p = parse_ok("[options]\ndefault = safe\n[denied]\n*.crt\n");
	static const struct {
		const char *pattern;
		enum jf_content kind;
	} want[] = {
		{"*.pem", JF_CONTENT_PEM},	 {"*.key", JF_CONTENT_PUBKEY},
		{"*.asc", JF_CONTENT_ASC},	 {"*.p12", JF_CONTENT_NONE},
		{"*.pfx", JF_CONTENT_NONE},	 {"*.jks", JF_CONTENT_NONE},
		{"*.keystore", JF_CONTENT_NONE}, {"*.kdbx", JF_CONTENT_NONE},
		{"*.ppk", JF_CONTENT_NONE},	 {".env", JF_CONTENT_NONE},
		{"id_rsa*", JF_CONTENT_NONE},
	};
	const struct jf_rule *r;

	(void)state;
	for (size_t i = 0; (r = jf_policy_rule(p, i)); i++) {
		enum jf_content expect = JF_CONTENT_NONE;

		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			if (r->builtin && strcmp(r->source, "secrets") == 0 &&
			    strcmp(r->pattern, want[k].pattern) == 0)
				expect = want[k].kind;
		assert_int_equal(r->content, expect);
	}
	jf_policy_free(p);
}

static void expect_public(const struct jf_policy *p, const char *path, enum jf_zone zone,
			  const char *rule)
{
	struct jf_verdict v;
	char buf[128];

	jf_classify_public(p, path, strlen(path), &v);
	jf_rule_format(v.rule, buf, sizeof(buf));
	assert_int_equal(v.zone, zone);
	assert_string_equal(buf, rule);
	assert_false(v.by_content);
}

static void test_classify_public(void **state)
{
	/* the user's own *.crt and secret/ stay strict; vendor/ is RESTRICTED */
	struct jf_policy *p = parse_ok("[options]\ndefault = safe\n[restricted]\nvendor/\n"
				       "[denied]\n*.crt\nsecret/\nmine.pem\n");
	struct jf_verdict v;

	(void)state;
	jf_classify(p, "certifi/cacert.pem", 18, false, &v);
	assert_int_equal(v.zone, JF_DENIED);
	assert_int_equal(v.rule->content, JF_CONTENT_PEM);
	expect_public(p, "certifi/cacert.pem", JF_SAFE, "default");
	expect_public(p, "vendor/ca.pem", JF_RESTRICTED, "t.ini:4");
	expect_public(p, "doc/guide.asc", JF_SAFE, "default");
	/* DENIED by another rule too: no content lets it through */
	expect_public(p, "secret/ca.pem", JF_DENIED, "t.ini:7");
	expect_public(p, "id_rsa.pem", JF_DENIED, "profile:secrets");
	expect_public(p, "mine.pem", JF_DENIED, "t.ini:8");
	expect_public(p, "x.crt", JF_DENIED, "t.ini:6");
	expect_public(p, "a.p12", JF_DENIED, "profile:secrets");
	jf_policy_set_read_only(p, true);
	expect_public(p, "certifi/cacert.pem", JF_RESTRICTED, "default");
	jf_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_public_pem),
		cmocka_unit_test(test_private_keys),
		cmocka_unit_test(test_other_armor),
		cmocka_unit_test(test_binary),
		cmocka_unit_test(test_key_files),
		cmocka_unit_test(test_asc_files),
		cmocka_unit_test(test_cut_while_written),
		cmocka_unit_test(test_size_bound),
		cmocka_unit_test(test_rules_subject_to_content),
		cmocka_unit_test(test_classify_public),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
