/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the command's environment (runner/env.c): values a secret
 * detector flags are left out whatever their name and wherever they come
 * from (jailrun's own allowlisted variables, a [run] env list), and told by
 * name, never by value; an exact --env passes them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "env.h"

/* A classic GitHub token with a valid CRC-32 (made here, never real). */
static void token(char *out)
{
	static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	char ent[31], sum[7];
	unsigned long c;

	for (int i = 0; i < 30; i++)
		ent[i] = b62[(unsigned)rand() % 62];
	ent[30] = '\0';
	c = crc32(0, (const unsigned char *)ent, 30);
	for (int i = 5; i >= 0; i--) {
		sum[i] = b62[c % 62];
		c /= 62;
	}
	sum[6] = '\0';
	sprintf(out, "ghp_%s%s", ent, sum);
}

static bool has(char **v, const char *entry)
{
	for (; *v; v++)
		if (strcmp(*v, entry) == 0)
			return true;
	return false;
}

static void test_secret_values(void **state)
{
	char tok[64], lang[80], run_set[128], pass_set[128];
	char **envp, **dropped;

	(void)state;
	srand(7);
	token(tok);
	snprintf(lang, sizeof(lang), "LANG=%s", tok);
	snprintf(run_set, sizeof(run_set),
		 "DB_URL=postgres://app:Xk3v9qLmT2"
		 "@db.internal/app");
	snprintf(pass_set, sizeof(pass_set), "MINE=%s", tok);
	setenv("LANG", tok, 1);
	setenv("TZ", "UTC", 1);
	setenv("PLAIN", "postgres://localhost/app", 1);
	setenv("OURS", tok, 1);
	{
		const char *run[] = {run_set, "PLAIN", "OURS", NULL};
		const char *opt[] = {pass_set, NULL};
		const char *const *lists[] = {run, opt};

		envp = jr_env_build("/home/jail", lists, 2, 1, 32, &dropped);
	}
	assert_non_null(envp);
	assert_non_null(dropped);
	assert_true(has(envp, "TZ=UTC"));
	assert_true(has(envp, "HOME=/home/jail"));
	assert_true(has(envp, "PLAIN=postgres://localhost/app"));
	assert_true(has(envp, pass_set)); /* --env named it: it passes */
	assert_false(has(envp, lang));
	assert_false(has(envp, run_set));
	for (char **p = envp; *p; p++)
		assert_true(strncmp(*p, "OURS=", 5) != 0);
	assert_string_equal(dropped[0], "LANG (github)");
	assert_string_equal(dropped[1], "DB_URL (connection-string)");
	assert_string_equal(dropped[2], "OURS (github)");
	assert_null(dropped[3]);
	for (char **p = dropped; *p; p++) {
		assert_null(strstr(*p, tok + 4));
		free(*p);
	}
	free(dropped);
	free(envp);
}

/* --env NAME (not NAME=VALUE) passes jailrun's value as named exactly. */
static void test_exact_name(void **state)
{
	char tok[64], want[80];
	char **envp, **dropped;
	const char *opt[] = {"OURS", NULL};
	const char *const *lists[] = {opt};

	(void)state;
	token(tok);
	setenv("OURS", tok, 1);
	unsetenv("LANG");
	snprintf(want, sizeof(want), "OURS=%s", tok);
	envp = jr_env_build("/h", lists, 1, 0, 32, &dropped);
	assert_non_null(envp);
	assert_true(has(envp, want));
	assert_null(dropped[0]);
	free(dropped);
	free(envp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secret_values),
		cmocka_unit_test(test_exact_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
