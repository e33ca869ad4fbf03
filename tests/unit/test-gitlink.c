/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of policy/gitlink.c, the reading of a .git file ("gitdir:
 * PATH") written in the jail, and of the policy's zoning of git directories
 * (jf_git_dir_rule(), jf_rule_gitfile()): the forms git writes, taken with
 * the view path they name; every other content, refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gitlink.h"
#include "policy.h"

#define ROOT "/home/u/proj"

/* The view path the .git file in view directory @dir holding @text names,
 * or NULL with the result in *@r. */
static const char *target(const char *text, const char *dir, int *r)
{
	static char out[JF_PATH_MAX + 1];
	const char *why = NULL;

	*r = jf_gitfile_target((const unsigned char *)text, strlen(text), dir, ROOT, out,
			       sizeof(out), &why);
	if (*r < 0)
		assert_non_null(why);
	return *r == 0 ? out : NULL;
}

static void expect_target(const char *text, const char *dir, const char *want)
{
	int r;
	const char *got = target(text, dir, &r);

	if (!got || strcmp(got, want) != 0)
		fail_msg("%s in '%s': got %s (%d), want %s", text, dir, got ? got : "(refused)", r,
			 want);
}

static void expect_refused(const char *text, const char *dir)
{
	int r;
	const char *got = target(text, dir, &r);

	if (r != -EINVAL)
		fail_msg("%s in '%s': got %s (%d), want refused", text, dir, got ? got : "-", r);
}

/* What git submodule add, git submodule update, git worktree add and git
 * clone --separate-git-dir write. */
static void test_forms_git_writes(void **state)
{
	int r;

	(void)state;
	expect_target("gitdir: ../.git/modules/sub\n", "sub", ".git/modules/sub");
	expect_target("gitdir: ../../.git/modules/a/b\n", "a/b", ".git/modules/a/b");
	expect_target("gitdir: ../../../.git/modules/x/modules/y\n", "x/y/z",
		      ".git/modules/x/modules/y");
	expect_target("gitdir: " ROOT "/.git/modules/sub\n", "sub", ".git/modules/sub");
	expect_target("gitdir: " ROOT "/.git/worktrees/wt\n", "wt", ".git/worktrees/wt");
	expect_target("gitdir: ../.git/modules/sub\r\n", "sub", ".git/modules/sub");
	expect_target("gitdir: ../.git/modules/sub", "sub", ".git/modules/sub");
	expect_target("gitdir: ../.git/modules/sub\n\n\r", "sub", ".git/modules/sub");
	expect_target("gitdir: " ROOT "\n", "sub", "");
	assert_null(target("", "sub", &r));
	assert_int_equal(r, 1); /* empty: names nothing */
}

static void test_refused(void **state)
{
	(void)state;
	expect_refused("gitdir: ../../x\n", "sub"); /* leaves the view */
	expect_refused("gitdir: ..\n", "");
	expect_refused("gitdir: /etc\n", "sub");
	expect_refused("gitdir: /home/u/projx/.git\n", "sub"); /* a sibling of the root */
	expect_refused("gitdir: /home/u\n", "sub");
	expect_refused("gitdir: ../a/../.git\n", "sub"); /* ".." after a name */
	expect_refused("gitdir: ./../.git\n", "sub");
	expect_refused("gitdir: ../.git//modules/x\n", "sub");
	expect_refused("gitdir: ../.git/\n", "sub");
	expect_refused("gitdir: " ROOT "/../x\n", "sub");
	expect_refused("gitdir: " ROOT "/./.git\n", "sub");
	expect_refused("gitdir:../.git\n", "sub");
	expect_refused("GITDIR: ../.git\n", "sub");
	expect_refused("gitdir: \n", "sub");
	expect_refused("gitdir: ../.git\nx\n", "sub");
	expect_refused("gitdir: ../.git\rx", "sub");
	expect_refused("\ngitdir: ../.git\n", "sub");
	expect_refused("g", "sub");
	{
		static const char nul[] = "gitdir: ../.git\0/../../x";
		char out[64];
		const char *why;

		assert_int_equal(jf_gitfile_target((const unsigned char *)nul, sizeof(nul) - 1,
						   "sub", ROOT, out, sizeof(out), &why),
				 -EINVAL);
	}
}

static void test_root_is_slash(void **state)
{
	char out[64];
	const char *why;
	const char *t = "gitdir: /p/.git\n";

	(void)state;
	assert_int_equal(jf_gitfile_target((const unsigned char *)t, strlen(t), "p/s", "/", out,
					   sizeof(out), &why),
			 0);
	assert_string_equal(out, "p/.git");
}

/* The built-in profiles zone these as git directories, and not those. */
static void test_git_dir_rule(void **state)
{
	static const char *const zoned[] = {".git",
					    "a/b/.git",
					    ".git/modules/sub",
					    ".git/modules/a/b",
					    ".git/modules/x/modules/y",
					    "sub/.git/modules/m",
					    ".git/worktrees/wt",
					    ".git/worktrees/wt/modules/m"};
	static const char *const not_zoned[] = {"",	     "evil",	     "sub",
						".git/refs", ".git/objects", ".git/worktrees",
						"a/.gitx",   ".git/hooks"};
	struct jf_policy *p;

	(void)state;
	assert_int_equal(jf_policy_default(&p), 0);
	for (size_t i = 0; i < sizeof(zoned) / sizeof(zoned[0]); i++)
		if (!jf_git_dir_rule(p, zoned[i]))
			fail_msg("%s: not zoned as a git directory", zoned[i]);
	for (size_t i = 0; i < sizeof(not_zoned) / sizeof(not_zoned[0]); i++)
		if (jf_git_dir_rule(p, not_zoned[i]))
			fail_msg("%s: zoned as a git directory", not_zoned[i]);
	jf_policy_free(p);
}

/* A non-directory .git is RESTRICTED by a rule jf_rule_gitfile() knows,
 * wherever it lies; other RESTRICTED names are not. */
static void test_rule_gitfile(void **state)
{
	static const char *const gitfiles[] = {"sub/.git", ".git", "a/b/c/.git", ".git/refs/.git"};
	static const char *const others[] = {".git/config", ".gitmodules", ".vscode/x", "sub/git"};
	struct jf_policy *p;
	struct jf_verdict v;

	(void)state;
	assert_int_equal(jf_policy_default(&p), 0);
	for (size_t i = 0; i < sizeof(gitfiles) / sizeof(gitfiles[0]); i++) {
		jf_classify(p, gitfiles[i], strlen(gitfiles[i]), false, &v);
		if (v.zone != JF_RESTRICTED || !jf_rule_gitfile(v.rule, gitfiles[i]))
			fail_msg("%s: not a .git file's rule", gitfiles[i]);
	}
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		jf_classify(p, others[i], strlen(others[i]), false, &v);
		if (jf_rule_gitfile(v.rule, others[i]))
			fail_msg("%s: taken for a .git file", others[i]);
	}
	jf_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms_git_writes), cmocka_unit_test(test_refused),
		cmocka_unit_test(test_root_is_slash),	 cmocka_unit_test(test_git_dir_rule),
		cmocka_unit_test(test_rule_gitfile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
