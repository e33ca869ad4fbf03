/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the secret detectors (jf_secrets_scan).
 *
 * Input: the bytes of a file's start. Checks, beyond the sanitizers:
 *  - the two stages agree with the confirming stage alone: the first pass
 *    (Vectorscan in builds that have it) never drops a candidate PCRE2 and
 *    the checks would confirm, so both builds give the same verdict;
 *  - a hit lies inside the bytes, and its fingerprint names its detector
 *    and is NUL-terminated within its array;
 *  - bytes past JF_SECRETS_SCAN_MAX change nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-internal.h"
#include "secrets.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const struct jf_secrets *s = jf_secrets_default();
	struct jf_secret_hit a, b;
	int ra, rb;

	if (!s)
		abort();
	ra = jf_secrets_scan(s, data, size, &a);
	rb = jf_secrets_scan_confirm_only(s, data, size, &b);
	if (ra < 0 || rb < 0)
		return 0; /* out of memory under the fuzzer's limit */
	if (ra != rb || (ra == 1 && (a.det != b.det || a.offset != b.offset))) {
		fprintf(stderr, "first pass %d (%s), confirm only %d (%s)\n", ra,
			ra ? a.fingerprint : "-", rb, rb ? b.fingerprint : "-");
		abort();
	}
	if (ra == 1) {
		const char *name = jf_secret_det_name(a.det);

		if (a.offset >= size || !memchr(a.fingerprint, '\0', sizeof(a.fingerprint)) ||
		    strncmp(a.fingerprint, name, strlen(name)) != 0)
			abort();
	}
	if (size > JF_SECRETS_SCAN_MAX) {
		rb = jf_secrets_scan(s, data, JF_SECRETS_SCAN_MAX, &b);
		if (rb >= 0 && rb != ra)
			abort();
	}
	return 0;
}
