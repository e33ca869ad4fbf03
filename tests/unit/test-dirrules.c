/* SPDX-License-Identifier: MIT */
/*
 * Directory rules protect a name whatever holds it: a [denied] or
 * [restricted] pattern with a trailing '/' matches the name it ends on
 * whether that is a directory, a file, a symlink, a FIFO, a socket or a
 * device node. A host program that reads ".claude/" or "lib/.git/hooks/"
 * follows a symlink of that name, so a rule that only matched directories
 * would let the agent plant the directory's content elsewhere. Exceptions
 * ("!foo/") and [safe] rules keep gitignore's "directories only": they
 * widen access, so they stay as narrow as written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "policy.h"

/* Every type an object of the backing tree can have. */
static const struct {
	mode_t type;
	const char *name;
} types[] = {
	{S_IFDIR, "directory"},	   {S_IFREG, "file"},	 {S_IFLNK, "symlink"},
	{S_IFIFO, "fifo"},	   {S_IFSOCK, "socket"}, {S_IFCHR, "char device"},
	{S_IFBLK, "block device"},
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

static struct jf_policy *parse_ok(const char *text)
{
	struct jf_policy *p = NULL;
	char err[512] = "";

	if (jf_policy_parse("t.ini", text, strlen(text), &p, err, sizeof(err)) != 0)
		fail_msg("parse failed: %s", err);
	return p;
}

/*
 * A path the pattern @pat (a directory rule, without its '!') matches, as
 * its last component: "**" / becomes "a/", '*' becomes "x", other glob
 * characters are not used by the built-in directory rules. 0, or -1 when
 * the pattern holds something this does not instantiate.
 */
static int instantiate(const char *pat, char *out, size_t size)
{
	size_t n = 0;

	if (*pat == '/')
		pat++;
	for (; *pat; pat++) {
		const char *add = NULL;
		char one[2] = {*pat, '\0'};

		if (strncmp(pat, "**/", 3) == 0) {
			add = "a/";
			pat += 2;
		} else if (*pat == '*') {
			add = "x";
		} else if (strchr("?[\\", *pat)) {
			return -1;
		} else {
			add = one;
		}
		if (n + strlen(add) >= size)
			return -1;
		memcpy(out + n, add, strlen(add));
		n += strlen(add);
	}
	if (n == 0 || out[n - 1] != '/')
		return -1;
	out[n - 1] = '\0'; /* the name itself, not a path below it */
	return 0;
}

static enum jf_zone zone_of(const struct jf_policy *p, const char *path, mode_t type,
			    const struct jf_rule **rule)
{
	struct jf_verdict v;

	jf_classify(p, path, strlen(path), S_ISDIR(type), &v);
	*rule = v.rule;
	return v.zone;
}

/*
 * Every directory rule of policy @p that protects (DENIED or RESTRICTED, not
 * an exception): the path it names is, for every object type, in the zone
 * it is in as a directory (by the same rule), or in a stricter one (an
 * exception that re-includes directories only: the system profile
 * hides /var/ entries but "!/var/log/", so a file /var/log stays DENIED). Returns how many rules
 * were checked.
 */
static size_t check_all_types(const struct jf_policy *p, const char *what)
{
	const struct jf_rule *r;
	size_t checked = 0;

	for (size_t i = 0; (r = jf_policy_rule(p, i)); i++) {
		const struct jf_rule *want_rule, *got_rule;
		enum jf_zone want, got;
		char path[512];

		if (r->zone == JF_SAFE || r->negated || instantiate(r->pattern, path, sizeof(path)))
			continue;
		want = zone_of(p, path, S_IFDIR, &want_rule);
		if (want == JF_SAFE)
			fail_msg("%s: rule %s: '%s' as a directory is SAFE", what, r->pattern,
				 path);
		for (size_t t = 0; t < NTYPES; t++) {
			got = zone_of(p, path, types[t].type, &got_rule);
			if (got < want || (got == want && got_rule != want_rule))
				fail_msg("%s: rule %s: '%s' as a %s is %s (%s), as a directory "
					 "%s (%s)",
					 what, r->pattern, path, types[t].name, jf_zone_name(got),
					 got_rule ? got_rule->pattern : "default",
					 jf_zone_name(want),
					 want_rule ? want_rule->pattern : "default");
		}
		checked++;
	}
	return checked;
}

/* Every directory rule of every built-in profile, over every object type. */
static void test_profiles_every_type(void **state)
{
	size_t total = 0;

	(void)state;
	for (size_t i = 0; jf_profile_names[i]; i++) {
		char text[256];
		struct jf_policy *p;

		/* a profile is used only when listed; secrets unless removed */
		snprintf(text, sizeof(text), "[options]\ndefault = safe\nprofiles = %s%s\n",
			 jf_profile_names[i], i ? ", -secrets" : "");
		p = parse_ok(text);
		total += check_all_types(p, jf_profile_names[i]);
		jf_policy_free(p);
	}
	/* secrets: secrets/ .ssh/ .gnupg/ .aws/ gcloud/ .azure/; project and
	 * gitdir: hooks/ (for .git/, worktrees/, modules/) and the editors' directories;
	 * system: /usr/ /opt/ /home/ /var/log/ /etc/ssl/private/ */
	assert_true(total >= 30);
}

/* The names of the issue, in the default policy, as each object type. */
static void test_default_names(void **state)
{
	static const struct {
		const char *path;
		enum jf_zone zone;
	} cases[] = {
		{".claude", JF_RESTRICTED},
		{".vscode", JF_RESTRICTED},
		{".idea", JF_RESTRICTED},
		{".cursor", JF_RESTRICTED},
		{".husky", JF_RESTRICTED},
		{".devcontainer", JF_RESTRICTED},
		{".git/hooks/pre-commit", JF_RESTRICTED},
		{"lib/.git/hooks/post-checkout", JF_RESTRICTED},
		/* a submodule's git directory has the zones of .git/ */
		{"lib/.git/modules/sub/hooks/x", JF_RESTRICTED},
		{"lib/.git/modules/lib/sub/hooks/x", JF_RESTRICTED},
		{".git/modules/a/modules/b/hooks/x", JF_RESTRICTED},
		{"a/b/.claude", JF_RESTRICTED},
		{".ssh", JF_DENIED},
		{"secrets", JF_DENIED},
		{".aws", JF_DENIED},
		{"x/.gnupg", JF_DENIED},
		{".config/gcloud", JF_DENIED},
		{".CLAUDE", JF_RESTRICTED},
		{".ssh.", JF_DENIED},
	};
	struct jf_policy *p = NULL;

	(void)state;
	assert_int_equal(jf_policy_default(&p), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (size_t t = 0; t < NTYPES; t++) {
			const struct jf_rule *rule;
			enum jf_zone z = zone_of(p, cases[i].path, types[t].type, &rule);

			if (z != cases[i].zone)
				fail_msg("'%s' as a %s: %s, want %s", cases[i].path, types[t].name,
					 jf_zone_name(z), jf_zone_name(cases[i].zone));
		}
	}
	jf_policy_free(p);
}

/*
 * A user's policy: [denied] and [restricted] directory rules, anchored and
 * not, cover every type; exceptions and [safe] rules still match
 * directories only, so they never open a non-directory the rules before
 * them closed.
 */
static void test_user_policy(void **state)
{
	struct jf_policy *p = parse_ok("[options]\ndefault = restricted\nprofiles = -secrets\n"
				       "[safe]\n/\nbuild/\n"
				       "[denied]\nprivate/\n/cache/\nout/*\n!out/keep/\n"
				       "[restricted]\nconf/\n**/tools/bin/\n.git\n!.git/\n");
	const struct jf_rule *rule;

	(void)state;
	assert_true(check_all_types(p, "t.ini") >= 4);
	for (size_t t = 0; t < NTYPES; t++) {
		mode_t ty = types[t].type;
		bool dir = S_ISDIR(ty);

		assert_int_equal(zone_of(p, "private", ty, &rule), JF_DENIED);
		assert_int_equal(zone_of(p, "a/private", ty, &rule), JF_DENIED);
		assert_int_equal(zone_of(p, "cache", ty, &rule), JF_DENIED);
		assert_int_equal(zone_of(p, "a/cache", ty, &rule), JF_SAFE);
		assert_int_equal(zone_of(p, "conf", ty, &rule), JF_RESTRICTED);
		assert_int_equal(zone_of(p, "x/tools/bin", ty, &rule), JF_RESTRICTED);
		/* exceptions re-include directories only */
		assert_int_equal(zone_of(p, "out/keep", ty, &rule), dir ? JF_SAFE : JF_DENIED);
		assert_int_equal(zone_of(p, ".git", ty, &rule), dir ? JF_SAFE : JF_RESTRICTED);
		assert_int_equal(zone_of(p, "x/.git", ty, &rule), dir ? JF_SAFE : JF_RESTRICTED);
		/* a [safe] directory rule widens nothing but directories */
		assert_int_equal(zone_of(p, "build", ty, &rule), JF_SAFE); /* "/" covers it */
	}
	jf_policy_free(p);
	p = parse_ok("[options]\ndefault = restricted\nprofiles = -secrets\n[safe]\nsrc/\n");
	for (size_t t = 0; t < NTYPES; t++)
		assert_int_equal(zone_of(p, "src", types[t].type, &rule),
				 S_ISDIR(types[t].type) ? JF_SAFE : JF_RESTRICTED);
	jf_policy_free(p);
}

/*
 * A [restricted] rule's directories above its last name: a symlink, file
 * or FIFO holding one of them would send a host program that reads the
 * protected path to what the agent wrote (a symlink .git/objects/info
 * naming another directory's alternates), so a non-directory there is
 * RESTRICTED too, for every prefix of every built-in [restricted] rule that
 * has one. Directories keep their zone.
 */
static void test_restricted_prefixes(void **state)
{
	size_t checked = 0;

	(void)state;
	for (size_t i = 0; jf_profile_names[i]; i++) {
		char text[256];
		const struct jf_rule *r;
		struct jf_policy *p;

		snprintf(text, sizeof(text), "[options]\ndefault = safe\nprofiles = %s%s\n",
			 jf_profile_names[i], i ? ", -secrets" : "");
		p = parse_ok(text);
		for (size_t k = 0; (r = jf_policy_rule(p, k)); k++) {
			const char *pat = r->pattern;

			if (r->zone != JF_RESTRICTED || r->negated)
				continue;
			for (size_t e = 1; pat[e] && pat[e + 1]; e++) {
				const struct jf_rule *got_rule;
				char prefix[512], path[512];

				if (pat[e] != '/' || (e >= 2 && strncmp(pat + e - 2, "**", 2) == 0))
					continue;
				snprintf(prefix, sizeof(prefix), "%.*s/", (int)e, pat);
				if (instantiate(prefix, path, sizeof(path)))
					continue;
				for (size_t t = 1; t < NTYPES; t++)
					if (zone_of(p, path, types[t].type, &got_rule) <
					    JF_RESTRICTED)
						fail_msg("%s: rule %s: '%s' as a %s is SAFE",
							 jf_profile_names[i], pat, path,
							 types[t].name);
				checked++;
			}
		}
		jf_policy_free(p);
	}
	assert_true(checked >= 20);
}

/* The same in a user's policy; directories, and names elsewhere, keep
 * their zones. */
static void test_restricted_prefixes_user(void **state)
{
	struct jf_policy *p = parse_ok("[options]\ndefault = safe\nprofiles = -secrets\n"
				       "[restricted]\nvendor/patches/x.diff\n**/tools/bin/run\n"
				       "[denied]\n**/.kube/config\n");
	const struct jf_rule *rule;
	struct jf_policy *d = NULL;

	(void)state;
	for (size_t t = 0; t < NTYPES; t++) {
		mode_t ty = types[t].type;
		enum jf_zone want = S_ISDIR(ty) ? JF_SAFE : JF_RESTRICTED;

		assert_int_equal(zone_of(p, "vendor", ty, &rule), want);
		assert_int_equal(zone_of(p, "vendor/patches", ty, &rule), want);
		assert_int_equal(zone_of(p, "a/vendor", ty, &rule), JF_SAFE); /* anchored */
		assert_int_equal(zone_of(p, "x/tools", ty, &rule), want);
		assert_int_equal(zone_of(p, "tools/bin", ty, &rule), want);
		assert_int_equal(zone_of(p, "x/tools/b", ty, &rule), JF_SAFE);
		/* a DENIED rule hides what its path names; a symlink .kube shows
		 * nothing that was hidden, so it keeps its zone */
		assert_int_equal(zone_of(p, ".kube", ty, &rule), JF_SAFE);
	}
	jf_policy_free(p);
	assert_int_equal(jf_policy_default(&d), 0);
	for (size_t t = 0; t < NTYPES; t++) {
		mode_t ty = types[t].type;
		enum jf_zone want = S_ISDIR(ty) ? JF_SAFE : JF_RESTRICTED;

		assert_int_equal(zone_of(d, ".git/objects", ty, &rule), want);
		assert_int_equal(zone_of(d, "lib/.git/objects/info", ty, &rule), want);
		assert_int_equal(zone_of(d, ".git/worktrees/w", ty, &rule), want);
		/* refs/ above refs/replace/ */
		assert_int_equal(zone_of(d, ".git/refs", ty, &rule), want);
		assert_int_equal(zone_of(d, ".git/refs/heads", ty, &rule), JF_SAFE);
		assert_int_equal(zone_of(d, ".git/objects/ab", ty, &rule), JF_SAFE);
	}
	/* what --scan and dumps list: the rules as written, nothing derived */
	for (size_t k = 0; (rule = jf_policy_rule(d, k)); k++)
		assert_true(strcmp(rule->pattern, "**/.git/objects") != 0);
	jf_policy_free(d);
}

/* jf_classify_public (a file whose content is public) keeps directory rules too. */
static void test_public_keeps_dir_rules(void **state)
{
	struct jf_policy *p = NULL;
	struct jf_verdict v;

	(void)state;
	assert_int_equal(jf_policy_default(&p), 0);
	jf_classify_public(p, "secrets", 7, &v);
	assert_int_equal(v.zone, JF_DENIED);
	jf_classify_public(p, ".claude", 7, &v);
	assert_int_equal(v.zone, JF_RESTRICTED);
	jf_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profiles_every_type),
		cmocka_unit_test(test_default_names),
		cmocka_unit_test(test_user_policy),
		cmocka_unit_test(test_restricted_prefixes),
		cmocka_unit_test(test_restricted_prefixes_user),
		cmocka_unit_test(test_public_keeps_dir_rules),
	};

	return cmocka_run_group_tests_name("dirrules", tests, NULL, NULL);
}
