/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the rules that decide what an agent sees, without a mount:
 * probe.c (is a name visible, in which zone), refine.c (public content,
 * files tracked by git), tracked.c (SOURCE's git index) and hardlinks.c
 * (the index of files with several names), each over a struct jf_view
 * built here over a fake SOURCE in a temporary directory. The races the
 * daemon meets are inputs: a name replaced between the stat and the read,
 * a file rewritten after it was judged, a hard link made on the host after
 * the index was built, an inode number that a judged object had, and what
 * the inode table knows (a fake jf_view.inode_info).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "backing.h"
#include "hardlinks.h"
#include "policy.h"
#include "probe.h"
#include "refine.h"
#include "tracked.h"
#include "zone-name.h"

static const char policy_text[] = "[options]\ndefault = safe\nhardlinks = restricted\n"
				  "[restricted]\nvendor/\n[denied]\nsecrets/\n";

#define CRL "-----BEGIN X509 CRL-----\nMIIB\n-----END X509 CRL-----\n"
#define KEY "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----\n"

static char src[] = "/tmp/jf-test-zone-XXXXXX";		/* SOURCE */
static char outside[] = "/tmp/jf-test-zone-out-XXXXXX"; /* a tree beside it */
static struct jf_policy *policy;
static struct jf_tracked_set tracked;
static struct jf_judged judged;
static struct jf_view view;

/* The fake inode table: one object it knows, when known_ino != 0. */
static struct stat known_st;
static struct jf_inode_info known;

static bool fake_inode_info(dev_t dev, ino_t ino, struct jf_inode_info *out)
{
	if (known_st.st_ino == 0 || dev != known_st.st_dev || ino != known_st.st_ino)
		return false;
	*out = known;
	return true;
}

static void put(const char *path, const char *text)
{
	char full[512], tmp[520];
	FILE *f;

	snprintf(full, sizeof(full), "%s/%s", src, path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", full);
	f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, full), 0); /* a new inode, as editors do */
}

/* Rewrite @path in place (same inode), as a host appending does. */
static void rewrite(const char *path, const char *text)
{
	char full[512];
	FILE *f;

	snprintf(full, sizeof(full), "%s/%s", src, path);
	f = fopen(full, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static void make_tree(void)
{
	sh("cd '%s' && mkdir -p secrets sub vendor && printf 'int x;\\n' > src.c && "
	   "printf 'A=1\\n' > .env && printf 'tracked\\n' > secrets/t.txt && "
	   "printf 'v\\n' > vendor/lib.c && printf 's\\n' > sub/x.c && "
	   "printf 'shared\\n' > shared && ln shared secrets/shared && "
	   "printf 'pair\\n' > pair1 && ln pair1 pair2 && printf 'late\\n' > late && "
	   "printf 'ext\\n' > '%s/ext' && ln '%s/ext' ext",
	   src, outside, outside);
	put("ca.pem", CRL);
	put("key.pem", KEY);
	/* git's own index: .env and secrets/t.txt are tracked, DENIED by name */
	sh("cd '%s' && git init -q && git add .env secrets/t.txt src.c", src);
}

static int setup(void **state)
{
	char err[256];
	struct stat st;

	(void)state;
	if (!mkdtemp(src) || !mkdtemp(outside))
		return -1;
	make_tree();
	if (jf_policy_parse("t.ini", policy_text, strlen(policy_text), &policy, err, sizeof(err)) <
		    0 ||
	    jf_judged_init(&judged) < 0)
		return -1;
	view = (struct jf_view){
		.policy = policy,
		.root_fd = open(src, O_PATH | O_DIRECTORY | O_CLOEXEC),
		.source_abs = src,
		.host_root_fd = -1,
		.hardlinks = jf_policy_hardlinks(policy),
		.tracked = &tracked,
		.judged = &judged,
		.inode_info = fake_inode_info,
	};
	if (view.root_fd < 0 || fstat(view.root_fd, &st) < 0)
		return -1;
	view.root_dev = st.st_dev;
	view.root_ino = st.st_ino;
	if (jf_refine_load_tracked(&view, &tracked, JF_TELL_NEVER) < 0)
		return -1;
	view.links = jf_hardlinks_new();
	return view.links && jf_hardlinks_build(view.links, &view) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	jf_hardlinks_free(view.links);
	jf_tracked_free(&tracked);
	jf_judged_destroy(&judged);
	jf_policy_free(policy);
	close(view.root_fd);
	sh("rm -rf '%s' '%s'", src, outside);
	return 0;
}

/* Probe @name in view directory @dir (""= SOURCE) as a lookup does. */
static int probe(const char *dir, const char *name, struct probe *p)
{
	int dfd = dir[0] ? jf_open_below(view.root_fd, dir, O_PATH | O_DIRECTORY, 0) : view.root_fd;
	struct stat st;
	int r;

	assert_true(dfd >= 0);
	assert_int_equal(fstat(dfd, &st), 0);
	r = jf_probe_child(&view, dfd, dir, st.st_dev, name, DT_UNKNOWN, false, p);
	if (dfd != view.root_fd)
		close(dfd);
	return r;
}

/* The zone a lookup of @path shows, or -1 when hidden, -2 when absent. */
static int zone_of(const char *path, const struct jf_rule **rule)
{
	char dir[256];
	const char *slash = strrchr(path, '/');
	struct probe p;
	int r;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 0, path);
	r = probe(dir, slash ? slash + 1 : path, &p);
	if (rule)
		*rule = p.v.rule;
	return r == 1 ? (int)p.v.zone : r == 0 ? -1 : r == -ENOENT ? -2 : -100 + r;
}

struct row {
	const char *path;
	int zone;		    /* as zone_of() answers */
	const struct jf_rule *rule; /* the verdict's rule, when it matters */
};

#define HIDDEN (-1)
#define ABSENT (-2)

static void test_probe_table(void **state)
{
	const struct row rows[] = {
		{"src.c", JF_SAFE, NULL},
		{"sub/x.c", JF_SAFE, NULL},
		{"vendor/lib.c", JF_RESTRICTED, NULL},
		{"nothing.c", ABSENT, NULL},
		/* a DENIED name is hidden whether or not it exists */
		{"id_rsa", HIDDEN, NULL},
		{"secrets/nothing", HIDDEN, NULL},
		/* tracked by git with its indexed content: read-only, not hidden */
		{".env", JF_RESTRICTED, &jf_git_index_rule},
		{"secrets", JF_RESTRICTED, &jf_git_index_rule},
		{"secrets/t.txt", JF_RESTRICTED, &jf_git_index_rule},
		/* DENIED below a tracked directory, and not tracked itself */
		{"secrets/shared", HIDDEN, NULL},
		/* a public certificate is shown, a private key is not */
		{"ca.pem", JF_SAFE, NULL},
		{"key.pem", HIDDEN, NULL},
		/* hard links: both names SAFE and found; another name DENIED; a
		 * name outside SOURCE */
		{"pair1", JF_SAFE, NULL},
		{"pair2", JF_SAFE, NULL},
		{"shared", HIDDEN, NULL},
		{"ext", JF_RESTRICTED, &jf_hardlink_outside_rule},
		{"late", JF_SAFE, NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct jf_rule *rule;
		int z = zone_of(rows[i].path, &rule);

		if (z != rows[i].zone)
			fail_msg("%s: %d, expected %d", rows[i].path, z, rows[i].zone);
		if (rows[i].rule && rule != rows[i].rule)
			fail_msg("%s: rule %s", rows[i].path, rule ? rule->source : "(none)");
	}
}

/* A name DENIED whatever its object is gets no backing access: no stat
 * whose cost or errno would tell whether it exists. */
static void test_denied_name_not_stated(void **state)
{
	struct probe p;

	(void)state;
	assert_int_equal(probe("", "id_rsa", &p), 0);
	assert_false(p.have_stat);
	assert_int_equal(probe("secrets", "nothing", &p), 0);
	assert_false(p.have_stat);
	/* subject to content: the object decides, so it is stat'ed */
	assert_int_equal(probe("", "key.pem", &p), 0);
	assert_true(p.have_stat);
}

/* The name was replaced between the caller's stat and the read: the
 * refinement reads nothing that is not the object stat'ed, so the verdict
 * stays DENIED and nothing is cached for it. */
static void test_refine_renamed_between_stat_and_read(void **state)
{
	struct jf_verdict v;
	struct stat before;

	(void)state;
	put("new.pem", CRL);
	assert_int_equal(fstatat(view.root_fd, "new.pem", &before, AT_SYMLINK_NOFOLLOW), 0);
	put("new.pem", KEY); /* a private key renamed over the certificate */
	jf_classify_path(&view, "new.pem", 7, false, &v);
	assert_int_equal(v.zone, JF_DENIED);
	jf_refine(&view, view.root_fd, "new.pem", "new.pem", 7, &before, &v);
	assert_int_equal(v.zone, JF_DENIED);
	assert_int_equal(zone_of("new.pem", NULL), HIDDEN);
	put("new.pem", CRL);
	assert_int_equal(zone_of("new.pem", NULL), JF_SAFE);
}

/* Judged public, then filled with a private key in place (same inode):
 * the cached judgement does not answer for the new content. */
static void test_refine_rewritten_in_place(void **state)
{
	(void)state;
	assert_int_equal(zone_of("ca.pem", NULL), JF_SAFE);
	rewrite("ca.pem", KEY);
	assert_int_equal(zone_of("ca.pem", NULL), HIDDEN);
	rewrite("ca.pem", CRL);
	assert_int_equal(zone_of("ca.pem", NULL), JF_SAFE);
}

/* A judgement is keyed by the object as it was stat'ed: another object
 * with the same (dev, ino), as after inode reuse, is not answered from the
 * cache, and the file is read only when it is the object described. */
static void test_refine_inode_reuse(void **state)
{
	struct jf_verdict v;
	struct stat st;

	(void)state;
	assert_int_equal(zone_of("ca.pem", NULL), JF_SAFE); /* judged and cached */
	assert_int_equal(fstatat(view.root_fd, "ca.pem", &st, AT_SYMLINK_NOFOLLOW), 0);
	st.st_ctim.tv_sec--; /* the same number, an earlier object */
	jf_classify_path(&view, "ca.pem", 6, false, &v);
	jf_refine(&view, view.root_fd, "ca.pem", "ca.pem", 6, &st, &v);
	assert_int_equal(v.zone, JF_DENIED);
}

/* A tracked file the host changed after start-up is hidden again; put
 * back as the index has it, it is shown again. */
static void test_tracked_changed_on_host(void **state)
{
	(void)state;
	assert_non_null(jf_tracked_find(&tracked, ".env", 4));
	assert_non_null(jf_tracked_find(&tracked, "secrets", 7));
	assert_null(jf_tracked_find(&tracked, "src.c", 5)); /* tracked, not DENIED */
	assert_null(jf_tracked_find(&tracked, "secrets/shared", 14));
	rewrite(".env", "A=1\nTOKEN=real\n");
	assert_int_equal(zone_of(".env", NULL), HIDDEN);
	rewrite(".env", "A=1\n");
	assert_int_equal(zone_of(".env", NULL), JF_RESTRICTED);
}

/* The index is read before serving: an entry the agent could write later
 * does not count, and a view without a tracked set shows nothing more. */
static void test_tracked_none_without_set(void **state)
{
	struct jf_view bare = view;

	(void)state;
	bare.tracked = NULL;
	bare.judged = NULL; /* and every look reads the file */
	struct probe p;

	assert_int_equal(jf_probe_child(&bare, view.root_fd, "", view.root_dev, ".env", DT_UNKNOWN,
					false, &p),
			 0);
	assert_int_equal(jf_probe_child(&bare, view.root_fd, "", view.root_dev, "ca.pem",
					DT_UNKNOWN, false, &p),
			 1);
	assert_true(p.v.by_content);
}

/* A hard link made on the host after the index was built: the file has a
 * name the daemon did not see, so its content becomes read-only (the name
 * itself stays SAFE for unlink and rename). */
static void test_hardlink_made_on_host(void **state)
{
	const struct jf_rule *rule;
	struct probe p;

	(void)state;
	assert_int_equal(zone_of("late", NULL), JF_SAFE);
	sh("ln '%s/late' '%s/late2'", src, src);
	assert_int_equal(zone_of("late", &rule), JF_RESTRICTED);
	assert_ptr_equal(rule, &jf_hardlink_outside_rule);
	assert_int_equal(jf_probe_existing(&view, view.root_fd, "", view.root_dev, "late", &p), 0);
	assert_true(jf_hardlink_name_only(&p.v));
	sh("rm '%s/late2'", src);
	assert_int_equal(zone_of("late", NULL), JF_SAFE);
}

/* What the inode table knows: a link made through the view between SAFE
 * names keeps a file SAFE; a stricter cached zone wins for a mutation. */
static void test_inode_table_answers(void **state)
{
	struct probe p;

	(void)state;
	assert_int_equal(fstatat(view.root_fd, "ext", &known_st, AT_SYMLINK_NOFOLLOW), 0);
	known = (struct jf_inode_info){.zone = JF_SAFE, .safe_links = true};
	assert_int_equal(zone_of("ext", NULL), JF_SAFE);
	assert_int_equal(fstatat(view.root_fd, "src.c", &known_st, AT_SYMLINK_NOFOLLOW), 0);
	known = (struct jf_inode_info){.zone = JF_RESTRICTED};
	assert_int_equal(jf_probe_existing(&view, view.root_fd, "", view.root_dev, "src.c", &p),
			 -EROFS);
	known_st.st_ino = 0;
	assert_int_equal(jf_probe_existing(&view, view.root_fd, "", view.root_dev, "src.c", &p), 0);
	assert_int_equal(jf_probe_existing(&view, view.root_fd, "", view.root_dev, "gone", &p),
			 -ENOENT);
}

/* An object whose (dev, ino) the index holds is judged by the index: the
 * number of a file with a DENIED name stays DENIED, whatever object holds
 * it now; one the index lacks is at least RESTRICTED. */
static void test_hardlink_zone_by_number(void **state)
{
	struct stat st, other;

	(void)state;
	assert_int_equal(fstatat(view.root_fd, "shared", &st, AT_SYMLINK_NOFOLLOW), 0);
	other = st;
	other.st_size = 12345;
	other.st_nlink = 2;
	assert_int_equal(jf_hardlink_zone(view.links, &other, JF_SAFE), JF_DENIED);
	other.st_ino = st.st_ino + 100000; /* not indexed */
	assert_int_equal(jf_hardlink_zone(view.links, &other, JF_SAFE), JF_RESTRICTED);
	assert_true(jf_hardlink_any_denied(view.links));
	assert_false(jf_hardlinks_empty(view.links));
}

/* hardlinks = deny hides every file with several names; hardlinks = zone
 * judges each name alone; without an index a name's verdict stands. */
static void test_hardlink_policies(void **state)
{
	struct jf_view v2 = view;
	struct jf_verdict v;
	struct stat st;

	(void)state;
	assert_int_equal(fstatat(view.root_fd, "pair1", &st, AT_SYMLINK_NOFOLLOW), 0);
	v2.hardlinks = JF_HARDLINKS_DENY;
	v = (struct jf_verdict){.zone = JF_SAFE};
	jf_effective_zone(&v2, &st, &v, false);
	assert_int_equal(v.zone, JF_DENIED);
	assert_ptr_equal(v.rule, &jf_hardlink_policy_rule);
	v2.hardlinks = JF_HARDLINKS_ZONE;
	assert_int_equal(fstatat(view.root_fd, "shared", &st, AT_SYMLINK_NOFOLLOW), 0);
	v = (struct jf_verdict){.zone = JF_SAFE};
	jf_effective_zone(&v2, &st, &v, false);
	assert_int_equal(v.zone, JF_SAFE);
	v2.hardlinks = JF_HARDLINKS_RESTRICTED;
	v2.links = NULL;
	jf_effective_zone(&v2, &st, &v, false);
	assert_int_equal(v.zone, JF_SAFE);
}

/* A rename the table learned of dates every probe after it. */
static void test_probe_dated(void **state)
{
	_Atomic uint64_t gen = 41;
	struct jf_view v2 = view;
	struct probe p;

	(void)state;
	v2.name_gen = &gen;
	assert_int_equal(jf_probe_child(&v2, view.root_fd, "", view.root_dev, "src.c", DT_UNKNOWN,
					false, &p),
			 1);
	assert_int_equal(p.gen, 41);
}

/* Renames that need not read the file: the same rule at both names. */
static void test_same_either_way(void **state)
{
	struct stat st;

	(void)state;
	assert_int_equal(fstatat(view.root_fd, "src.c", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(jf_refine_same_either_way(&view, "secrets/a", 9, "secrets/b", 9, &st));
	/* .env is tracked: its content decides */
	assert_false(jf_refine_same_either_way(&view, ".env", 4, "id_rsa", 6, &st));
	/* a.pem and b.pem: both SAFE when public, both hidden otherwise */
	assert_true(jf_refine_same_either_way(&view, "a.pem", 5, "b.pem", 5, &st));
	assert_false(jf_refine_same_either_way(&view, "a.pem", 5, "vendor/b.pem", 12, &st));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_table),
		cmocka_unit_test(test_denied_name_not_stated),
		cmocka_unit_test(test_refine_renamed_between_stat_and_read),
		cmocka_unit_test(test_refine_rewritten_in_place),
		cmocka_unit_test(test_refine_inode_reuse),
		cmocka_unit_test(test_tracked_changed_on_host),
		cmocka_unit_test(test_tracked_none_without_set),
		cmocka_unit_test(test_hardlink_made_on_host),
		cmocka_unit_test(test_inode_table_answers),
		cmocka_unit_test(test_hardlink_zone_by_number),
		cmocka_unit_test(test_hardlink_policies),
		cmocka_unit_test(test_probe_dated),
		cmocka_unit_test(test_same_either_way),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
