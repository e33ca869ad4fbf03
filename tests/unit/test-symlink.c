/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the symlink target rule (fs/symlink.c): a table of link
 * directories and targets, each with the view target the daemon shows or
 * -ENOENT (hidden). SOURCE is /src, the mountpoint /src/mnt is inside it,
 * and the policy denies secrets/ and .env.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "policy.h"
#include "symlink.h"

static const char policy_text[] = "[options]\ndefault = safe\n[denied]\nsecrets/\n.env\n";

struct row {
	const char *dir;    /* view directory of the link, "" for the root */
	const char *target; /* the link's text on disk */
	int ret;	    /* 0 or -ENOENT */
	const char *shown;  /* the text the view shows when ret is 0 */
};

static const struct row rows[] = {
	/* relative targets: (../)*rest, climbing from a real directory */
	{"", "a/b", 0, "a/b"},
	{"", "./a//b", 0, "./a//b"},
	{"a/b", "../../x", 0, "../../x"},
	{"a/b/c", "../../..", 0, "../../.."},
	{"a/b", "../../../x", -ENOENT, NULL},
	{"", "..", -ENOENT, NULL},
	/* s/u -> .. is fine: one level up from s is the view's root... */
	{"s", "..", 0, ".."},
	/* ...but s/w -> u/../.. is not, though folding ".." lexically says it
	 * stays inside: the kernel resolves u (to the root) before the second
	 * "..", which then leaves the mountpoint. ".." after a name is refused. */
	{"s", "u/../..", -ENOENT, NULL},
	{"s", "u/..", -ENOENT, NULL},
	{"s", "../..", -ENOENT, NULL},
	/* absolute targets inside SOURCE become relative to the link's directory */
	{"a/b", "/src/c/d", 0, "../../c/d"},
	{"a", "/src/a/x", 0, "x"},
	{"a", "/src/a", 0, "."},
	{"", "/src", 0, "."},
	{"a/b", "/src/a/c/", 0, "../c"},
	{"", "/srcx/a", -ENOENT, NULL}, /* SOURCE is compared by component */
	/* system targets outside SOURCE are shown as they are, if canonical */
	{"venv/bin", "/usr/bin/python3", 0, "/usr/bin/python3"},
	{"venv/bin", "/usr/../etc/passwd", -ENOENT, NULL},
	{"", "/etc/shadow", -ENOENT, NULL},
	{"", "/usr", -ENOENT, NULL},
	/* DENIED targets, by any route */
	{"", "secrets/key", -ENOENT, NULL},
	{"", "secrets", -ENOENT, NULL},
	{"", ".env", -ENOENT, NULL},
	{"a", "../.env", -ENOENT, NULL},
	{"a/b", "/src/secrets/key", -ENOENT, NULL},
	{"secrets", "x", -ENOENT, NULL},
	/* the mountpoint inside SOURCE and everything below it */
	{"", "mnt", -ENOENT, NULL},
	{"", "mnt/x", -ENOENT, NULL},
	{"a", "../mnt/x", -ENOENT, NULL},
	{"a", "/src/mnt/x", -ENOENT, NULL},
	{"", "mntx", 0, "mntx"},
	/* nothing to show */
	{"", "", -ENOENT, NULL},
};

static struct jf_policy *policy;

static int setup(void **state)
{
	char err[256];

	(void)state;
	return jf_policy_parse("t.ini", policy_text, strlen(policy_text), &policy, err,
			       sizeof(err));
}

static int teardown(void **state)
{
	(void)state;
	jf_policy_free(policy);
	return 0;
}

static void test_table(void **state)
{
	const struct jf_symlink_ctx ctx = {
		.source_abs = "/src", .mnt_rel = "mnt", .policy = policy};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		char out[JF_PATH_MAX + 1] = "";
		int ret = jf_symlink_view(&ctx, r->dir, r->target, out, sizeof(out));

		print_message("%s -> %s: %d %s\n", r->dir, r->target, ret, ret == 0 ? out : "");
		assert_int_equal(ret, r->ret);
		if (r->ret == 0)
			assert_string_equal(out, r->shown);
		/* a target the view would hide may not be created either */
		assert_int_equal(jf_symlink_check_new(&ctx, r->dir, r->target),
				 r->ret == 0 ? 0 : -EACCES);
	}
}

/* With the mountpoint outside SOURCE no view path is special. */
static void test_mountpoint_outside(void **state)
{
	const struct jf_symlink_ctx ctx = {.source_abs = "/src", .mnt_rel = NULL, .policy = policy};
	char out[JF_PATH_MAX + 1];

	(void)state;
	assert_int_equal(jf_symlink_view(&ctx, "", "mnt/x", out, sizeof(out)), 0);
	assert_string_equal(out, "mnt/x");
}

/* A rewritten target that does not fit @out is hidden, never cut short. */
static void test_small_buffer(void **state)
{
	const struct jf_symlink_ctx ctx = {
		.source_abs = "/src", .mnt_rel = "mnt", .policy = policy};
	char out[8];

	(void)state;
	assert_int_equal(jf_symlink_view(&ctx, "a/b/c", "/src/x/y", out, sizeof(out)), -ENOENT);
	assert_int_equal(jf_symlink_view(&ctx, "", "abcdefgh", out, sizeof(out)), -ENOENT);
	assert_int_equal(jf_symlink_view(&ctx, "", "abcdefg", out, sizeof(out)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_mountpoint_outside),
		cmocka_unit_test(test_small_buffer),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
