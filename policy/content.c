/* SPDX-License-Identifier: MIT */
/*
 * Is a file's content public? The judge of the [denied] rules subject to
 * content (enum jf_content): a CA bundle, a certificate, a public key or an
 * AsciiDoc file named like a key holds nothing secret; anything that says
 * PRIVATE KEY, holds a NUL byte (a binary key format), or carries armor of
 * another kind does. Labels from RFC 7468 (textual encodings of PKIX
 * structures) and RFC 4880 section 6.2 (OpenPGP armor).
 */
#include <stdio.h>
#include <string.h>

#include "policy-internal.h"

#define BEGIN "-----BEGIN"
#define BEGIN_LEN (sizeof(BEGIN) - 1)
#define DASHES "-----"

/* Armor of public kinds (RFC 7468 sections 5-7, 13; RFC 4880 section 6.2). */
static const char *const public_labels[] = {
	"CERTIFICATE",		"TRUSTED CERTIFICATE",	   "X509 CERTIFICATE",	 "X509 CRL",
	"CERTIFICATE REQUEST",	"NEW CERTIFICATE REQUEST", "PUBLIC KEY",	 "RSA PUBLIC KEY",
	"PGP PUBLIC KEY BLOCK", "PGP SIGNATURE",	   "PGP SIGNED MESSAGE", NULL,
};

/* What a *.key file may hold. */
static const char *const pubkey_labels[] = {"PUBLIC KEY", "RSA PUBLIC KEY", NULL};

/*
 * The text after "-----BEGIN" at @s (@n bytes up to the end of the buffer)
 * against " LABEL-----" for each label of @labels: 1 a complete match, 0 no
 * label fits, -1 the buffer ends inside what may still become one.
 */
static int label_match(const char *const *labels, const char *s, size_t n)
{
	char want[64];
	bool cut = false;

	for (size_t i = 0; labels[i]; i++) {
		size_t w = (size_t)snprintf(want, sizeof(want), " %s%s", labels[i], DASHES);

		if (n >= w && memcmp(s, want, w) == 0)
			return 1;
		if (n < w && memcmp(s, want, n) == 0)
			cut = true;
	}
	return cut ? -1 : 0;
}

bool jf_content_public(enum jf_content kind, const char *buf, size_t len)
{
	const char *const *labels = kind == JF_CONTENT_PUBKEY ? pubkey_labels : public_labels;
	const char *p = buf, *end = buf + len;
	size_t blocks = 0;

	if (kind == JF_CONTENT_NONE || len > JF_CONTENT_MAX_SIZE)
		return false;
	if (len == 0)
		return true; /* holds nothing: a file just created */
	if (memchr(buf, '\0', len) || memmem(buf, len, "PRIVATE KEY", 11))
		return false;
	while ((p = memmem(p, (size_t)(end - p), BEGIN, BEGIN_LEN))) {
		int m = label_match(labels, p + BEGIN_LEN, (size_t)(end - p) - BEGIN_LEN);

		if (m == 0)
			return false;
		blocks++;
		p += BEGIN_LEN;
	}
	return blocks > 0 || kind == JF_CONTENT_ASC;
}
