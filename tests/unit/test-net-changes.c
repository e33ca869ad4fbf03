/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the net changes (audit/net-changes.c) over synthetic audit
 * records, in the shapes the daemon writes them: the sequences of sed -i,
 * git's objects and index, an editor's save with a backup, builds and
 * rm -rf, directory renames, and logs that lost records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "net-changes.h"

/* Feed one record: "op path [path2]" with decision allow, or a JSON text
 * when @spec starts with '{'. */
static void feed(struct jf_net_changes *n, const char *spec)
{
	char op[32], p1[256], p2[256];
	json_t *o;

	if (spec[0] == '{') {
		o = json_loads(spec, 0, NULL);
	} else {
		int k = sscanf(spec, "%31s %255s %255s", op, p1, p2);

		assert_true(k >= 2);
		o = json_pack("{s:s, s:s, s:s, s:s}", "op", op, "path", p1, "zone", "SAFE",
			      "decision", "allow");
		if (k == 3)
			json_object_set_new(o, "path2", json_string(p2));
		if (strcmp(op, "release") == 0)
			json_object_set_new(o, "bytes_written", json_integer(10));
	}
	assert_non_null(o);
	assert_int_equal(jf_net_add(n, o), 0);
	json_decref(o);
}

/* Run @recs (NULL-terminated) and compare the list with @want, lines of
 * "kind path" or "renamed from path", sorted by path, one string. */
static void expect(const char *const *recs, const char *want)
{
	struct jf_net_changes *n = NULL;
	const struct jf_net_change *c;
	char got[4096] = "";
	size_t k, len = 0;

	assert_int_equal(jf_net_new(&n), 0);
	for (; *recs; recs++)
		feed(n, *recs);
	assert_int_equal(jf_net_list(n, &c, &k), 0);
	for (size_t i = 0; i < k; i++) {
		len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s%s%s %s%s\n",
					jf_net_kind_name(c[i].kind), c[i].from ? " " : "",
					c[i].from ? c[i].from : "", "", c[i].path,
					c[i].modified ? " +" : "");
	}
	assert_string_equal(got, want);
	jf_net_free(n);
}

/* sed -i at level writes: the file's past is unknown, the final name is given. */
static void test_sed_writes_level(void **state)
{
	(void)state;
	static const char *const r[] = {
		"create src/sedZmcUdl",
		"chmod src/sedZmcUdl",
		"release src/sedZmcUdl",
		"rename src/sedZmcUdl src/main.c",
		NULL,
	};
	expect(r, "written src/main.c\n");
}

/* sed -i at level all: the read of the file says it existed. */
static void test_sed_all_level(void **state)
{
	(void)state;
	static const char *const r[] = {
		"lookup src",
		"lookup src/main.c",
		"read src/main.c",
		"create src/sedZmcUdl",
		"write src/sedZmcUdl",
		"rename src/sedZmcUdl src/main.c",
		NULL,
	};
	expect(r, "modified src/main.c\n");
}

/* An editor writing X.new and renaming it over a new name: created. */
static void test_tmp_rename_new_name(void **state)
{
	(void)state;
	static const char *const r[] = {
		"create include/fuse.h.new",
		"release include/fuse.h.new",
		"rename include/fuse.h.new include/fuse.h",
		NULL,
	};
	expect(r, "written include/fuse.h\n");
	static const char *const r2[] = {
		"readdir include",
		"create include/fuse.h",
		"unlink include/fuse.h",
		"create include/fuse.h.new",
		"rename include/fuse.h.new include/fuse.h",
		NULL,
	};
	/* the name was made during the run (absent before) */
	expect(r2, "created include/fuse.h\n");
}

/* git's loose object: tmp_obj, link into place, unlink tmp; the index by
 * index.lock renamed over index. */
static void test_git_commit(void **state)
{
	(void)state;
	static const char *const r[] = {
		"lookup .git/index",
		"create .git/objects/ab/tmp_obj_Xq1",
		"release .git/objects/ab/tmp_obj_Xq1",
		"link .git/objects/ab/tmp_obj_Xq1 .git/objects/ab/cdef01",
		"unlink .git/objects/ab/tmp_obj_Xq1",
		"create .git/index.lock",
		"release .git/index.lock",
		"rename .git/index.lock .git/index",
		NULL,
	};
	expect(r, "modified .git/index\ncreated .git/objects/ab/cdef01\n");
}

/* Created then deleted is nothing; modified then deleted is deleted. */
static void test_create_delete(void **state)
{
	(void)state;
	static const char *const r[] = {
		"create tmp.o", "release tmp.o", "unlink tmp.o", "write old.txt", "unlink old.txt",
		"mkdir t",	"create t/a",	 "unlink t/a",	 "rmdir t",	  NULL,
	};
	expect(r, "deleted old.txt\n");
}

/* rename a -> b, and a rename over an existing file. */
static void test_renames(void **state)
{
	(void)state;
	static const char *const r[] = {
		"rename a b", "lookup d", "rename c d", "write e", "rename e f", NULL,
	};
	/* d existed and is replaced by c: renamed, never "deleted d" */
	expect(r, "renamed a b\nrenamed c d\nrenamed e f +\n");
}

/* vim's save with a backup: X -> X~, write X, remove X~. */
static void test_editor_backup(void **state)
{
	(void)state;
	static const char *const r[] = {
		"rename notes.txt notes.txt~",
		"create notes.txt",
		"release notes.txt",
		"unlink notes.txt~",
		NULL,
	};
	expect(r, "modified notes.txt\n");
}

/* A directory renamed carries what was written below it; a path first seen
 * below it maps back to its original path. */
static void test_dir_rename(void **state)
{
	(void)state;
	static const char *const r[] = {
		"write lib/a.c",  "rename lib src",   "write src/b.c",
		"unlink src/c.c", "create src/new.c", NULL,
	};
	expect(r, "deleted lib/c.c\nrenamed lib src\nmodified src/a.c\nmodified src/b.c\n"
		  "created src/new.c\n");
}

/* rm -rf of a tree that existed: the directory, its entries fold into it. */
static void test_rm_rf(void **state)
{
	(void)state;
	static const char *const r[] = {
		"unlink build/x.o", "unlink build/sub/y.o", "rmdir build/sub",
		"rmdir build",	    "unlink keep/z",	    NULL,
	};
	expect(r, "deleted build\ndeleted keep/z\n");
}

/* A build: new files in a new directory, all listed. */
static void test_build(void **state)
{
	(void)state;
	static const char *const r[] = {
		"mkdir out",
		"create out/a.o",
		"release out/a.o",
		"create out/a.o.tmp",
		"rename out/a.o.tmp out/b.o",
		"symlink out/link a.o",
		NULL,
	};
	expect(r, "created out\ncreated out/a.o\ncreated out/b.o\ncreated out/link\n");
}

/* Refusals and lookups change nothing; bounds make the list incomplete. */
static void test_refusals_and_bounds(void **state)
{
	struct jf_net_changes *n = NULL;
	const struct jf_net_change *c;
	size_t k;

	(void)state;
	assert_int_equal(jf_net_new(&n), 0);
	feed(n, "{\"op\":\"unlink\",\"path\":\"x\",\"decision\":\"deny\",\"errno\":\"EROFS\"}");
	feed(n, "{\"op\":\"lookup\",\"path\":\".env\",\"decision\":\"hide\"}");
	assert_int_equal(jf_net_allowed(n), 0);
	assert_int_equal(jf_net_list(n, &c, &k), 0);
	assert_int_equal(k, 0);
	assert_null(jf_net_incomplete(n));
	feed(n, "{\"op\":\"suppressed\",\"count\":3,\"by_decision\":{\"allow\":0,\"deny\":0,"
		"\"hide\":3}}");
	assert_null(jf_net_incomplete(n));
	feed(n, "{\"op\":\"suppressed\",\"count\":3,\"by_decision\":{\"allow\":2,\"deny\":0,"
		"\"hide\":1}}");
	assert_non_null(jf_net_incomplete(n));
	jf_net_free(n);

	assert_int_equal(jf_net_new(&n), 0);
	feed(n, "{\"op\":\"dropped\",\"count\":5}");
	assert_non_null(strstr(jf_net_incomplete(n), "lost"));
	jf_net_free(n);
}

/* The JSON form and its cap. */
static void test_json(void **state)
{
	struct jf_net_changes *n = NULL;
	size_t omitted = 9;
	json_t *a;
	char *s;

	(void)state;
	assert_int_equal(jf_net_new(&n), 0);
	feed(n, "create a");
	feed(n, "rename x y");
	feed(n, "write z");
	a = jf_net_json(n, 2, &omitted);
	assert_non_null(a);
	assert_int_equal(omitted, 1);
	s = json_dumps(a, JSON_COMPACT);
	assert_string_equal(s, "[{\"change\":\"created\",\"path\":\"a\"},{\"change\":\"renamed\","
			       "\"path\":\"y\",\"from\":\"x\",\"modified\":false}]");
	free(s);
	json_decref(a);
	a = jf_net_json(n, 0, &omitted);
	assert_int_equal(json_array_size(a), 3);
	assert_int_equal(omitted, 0);
	json_decref(a);
	jf_net_free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sed_writes_level),
		cmocka_unit_test(test_sed_all_level),
		cmocka_unit_test(test_tmp_rename_new_name),
		cmocka_unit_test(test_git_commit),
		cmocka_unit_test(test_create_delete),
		cmocka_unit_test(test_renames),
		cmocka_unit_test(test_editor_backup),
		cmocka_unit_test(test_dir_rename),
		cmocka_unit_test(test_rm_rf),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_refusals_and_bounds),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
