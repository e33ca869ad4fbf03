/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the policy file parser (jf_policy_parse).
 *
 * On success, every rule must format and every accessor must answer; a few
 * fixed paths are classified. On failure, the message must name the file
 * ("fuzz.ini:LINE: problem" or "fuzz.ini: ...") and nothing may leak.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const char *const paths[] = {
	"",
	".env",
	"src/main.c",
	".git/config",
	"vendor/patches/x",
	"a/b/c/d/e/f.pem",
	"etc/passwd",
	"home/u/.ssh/id_rsa",
	"logs/keep",
	"ID_RSA. ",
};

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct jf_policy *p = NULL;
	char err[256], buf[64];
	int r = jf_policy_parse("fuzz.ini", (const char *)data, size, &p, err, sizeof(err));

	if (r < 0) {
		if (p || strncmp(err, "fuzz.ini:", 9) != 0 || strlen(err) < 12)
			abort();
		return 0;
	}
	for (size_t i = 0; jf_policy_rule(p, i); i++) {
		const struct jf_rule *rule = jf_policy_rule(p, i);

		if (jf_rule_format(rule, buf, sizeof(buf)) <= 0 || !rule->pattern[0] ||
		    (rule->negated && rule->zone == JF_SAFE))
			abort();
	}
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct jf_verdict v;

		jf_classify(p, paths[i], strlen(paths[i]), i % 2, &v);
		if (v.zone > JF_DENIED)
			abort();
	}
	for (const char *const *l = jf_policy_run_list(p, "env"); *l; l++)
		if (!**l)
			abort();
	(void)jf_policy_max_file_size(p, JF_SAFE);
	(void)jf_policy_run_number(p, "timeout");
	(void)jf_policy_hardlinks(p);
	jf_policy_free(p);
	return 0;
}
