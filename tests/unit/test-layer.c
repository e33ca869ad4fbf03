/* SPDX-License-Identifier: MIT */
/*
 * The changes library (changes/) over real kernel overlays (layer-util.c
 * plays the daemon): the changes listed, the diff that git apply takes,
 * checkpoints and an exact restore, the journal, the control client.
 * apply and discard are in test-layer-apply.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "layer-util.h"

static void test_restore_exact(void **state)
{
	char *v1, *v2, *v3, *id = NULL;
	struct jf_layer *l;

	fresh();
	list_mtime = true;
	in_overlay(session_one, NULL);
	l = open_layer(false);
	assert_int_equal(jf_layer_checkpoint(l, "before", &id), 0);
	assert_string_equal(id, "000001-before");
	free(id);
	jf_layer_free(l);
	in_overlay(NULL, &v1);
	in_overlay(session_two, &v2);
	assert_string_not_equal(v1, v2);
	l = open_layer(false);
	assert_int_equal(jf_layer_restore(l, "before"), 0);
	jf_layer_free(l);
	in_overlay(NULL, &v3);
	if (strcmp(v1, v3))
		fprintf(stderr, "WANT\n%sGOT\n%s", v1, v3);
	assert_string_equal(v1, v3);
	/* and again, after the same command once more */
	in_overlay(session_two, NULL);
	l = open_layer(false);
	assert_int_equal(jf_layer_restore(l, "000001-before"), 0);
	jf_layer_free(l);
	free(v3);
	in_overlay(NULL, &v3);
	assert_string_equal(v1, v3);
	list_mtime = false;
	free(v1);
	free(v2);
	free(v3);
	cleanup();
}

/* Two checkpoints: restoring the first undoes both commands. */
static void test_restore_two(void **state)
{
	char *v0, *v1, *id = NULL;
	struct jf_layer *l;

	fresh();
	in_overlay(NULL, &v0);
	l = open_layer(false);
	assert_int_equal(jf_layer_checkpoint(l, NULL, &id), 0);
	assert_string_equal(id, "000001-cp000001");
	free(id);
	jf_layer_free(l);
	in_overlay(session_one, NULL);
	l = open_layer(false);
	assert_int_equal(jf_layer_checkpoint(l, NULL, &id), 0);
	free(id);
	jf_layer_free(l);
	in_overlay(session_two, NULL);
	l = open_layer(false);
	assert_int_equal(jf_layer_restore(l, "1"), 0);
	assert_int_equal(jf_layer_restore(l, "2"), -ENOENT); /* removed by the first */
	jf_layer_free(l);
	in_overlay(NULL, &v1);
	assert_string_equal(v0, v1);
	free(v0);
	free(v1);
	cleanup();
}

static void test_changes(void **state)
{
	struct jf_layer *l;
	json_t *a, *o;
	size_t i;

	fresh();
	in_overlay(session_one, NULL);
	in_overlay(session_two, NULL);
	l = open_layer(false);
	a = changes_of(l);
	assert_int_equal(status_of(a, "a.txt"), 'M');
	assert_int_equal(status_of(a, "b2.txt"), 'R');
	assert_int_equal(status_of(a, "b.txt"), '-'); /* paired with its rename */
	assert_int_equal(status_of(a, "new2.txt"), 'A');
	assert_int_equal(status_of(a, "exec.sh"), 'M');
	assert_int_equal(status_of(a, "dir"), 'M'); /* replaced: opaque */
	assert_int_equal(status_of(a, "dir/x.txt"), 'A');
	/* every deletion below the replaced directory is listed */
	assert_int_equal(status_of(a, "dir/c.txt"), 'D');
	assert_int_equal(status_of(a, "dir/sub"), 'D');
	assert_int_equal(status_of(a, "dir/sub/d.txt"), 'D');
	assert_int_equal(status_of(a, "link2"), 'A');
	assert_int_equal(status_of(a, "bin.dat"), '-');
	json_array_foreach(a, i, o)
	{
		if (!strcmp(json_string_value(json_object_get(o, "path")), "exec.sh")) {
			assert_int_equal(json_integer_value(json_object_get(o, "old_mode")), 0755);
			assert_int_equal(json_integer_value(json_object_get(o, "mode")), 0644);
		}
		if (!strcmp(json_string_value(json_object_get(o, "path")), "dir"))
			assert_true(json_is_true(json_object_get(o, "replaced")));
		if (!strcmp(json_string_value(json_object_get(o, "path")), "b2.txt"))
			assert_string_equal(json_string_value(json_object_get(o, "from")), "b.txt");
	}
	json_decref(a);
	jf_layer_free(l);
	cleanup();
}

/* The whiteout of newer kernels: a file with user.overlay.whiteout. */
static void test_xattr_whiteout(void **state)
{
	char p[512];
	struct jf_layer *l;
	json_t *a;
	int fd;

	fresh();
	snprintf(p, sizeof(p), "%s/upper/b.txt", dir);
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(fsetxattr(fd, "user.overlay.whiteout", "", 0, 0), 0);
	close(fd);
	l = open_layer(false);
	a = changes_of(l);
	assert_int_equal(status_of(a, "b.txt"), 'D');
	assert_int_equal(json_array_size(a), 1);
	json_decref(a);
	jf_layer_free(l);
	cleanup();
}

static void test_diff_git_apply(void **state)
{
	char patch[400], copy[400], *view, *got, *bin;
	struct jf_layer *l;
	static const char *const text[] = {"a.txt",   "b.txt", "b2.txt", "new2.txt",
					   "exec.sh", "dir",   "link2",	 "link"};

	fresh();
	in_overlay(session_one, NULL);
	in_overlay(session_two, &view);
	l = open_layer(false);
	snprintf(patch, sizeof(patch), "%s/p.diff", base);
	snprintf(copy, sizeof(copy), "%s/copy", base);
	diff_to(l, patch, text, ARRAY_SIZE(text));
	sh("cd %s && git apply --check %s", src, patch);
	sh("cp -a %s %s && cd %s && git apply %s", src, copy, copy, patch);
	got = tree(copy);
	assert_string_equal(view, got);
	free(got);
	/* a binary file is "differ" */
	jf_layer_free(l);
	put(dir, "upper/bin.dat", "", 0644);
	sh("printf 'z\\0w' > %s/upper/bin.dat", dir);
	l = open_layer(false);
	diff_to(l, patch, (const char *const[]){"bin.dat"}, 1);
	bin = slurp(base, "p.diff");
	assert_non_null(strstr(bin, "Binary files a/bin.dat and b/bin.dat differ\n"));
	free(bin);
	jf_layer_free(l);
	free(view);
	cleanup();
}

static void test_control(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct jf_layer *l;
	void *reply = NULL;
	json_t *j;
	pid_t pid;
	int s, status;

	fresh();
	l = open_layer(false);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(strlen(dir) + 9 < sizeof(sa.sun_path));
	memcpy(sa.sun_path, dir, strlen(dir));
	memcpy(sa.sun_path + strlen(dir), "/control", 9);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(s, 1), 0);
	pid = fork();
	if (pid == 0) {
		char buf[512] = "";
		int c = accept(s, NULL, NULL);
		ssize_t n = 0, got;
		while (!strchr(buf, '\n') &&
		       (got = read(c, buf + n, sizeof(buf) - 1 - (size_t)n)) > 0)
			n += got;
		const char *want = "{\"cmd\":\"apply\",\"args\":[\"a.txt\"],\"force\":true}\n";
		const char *ok =
			"{\"ok\":true,\"report\":[{\"path\":\"a.txt\",\"action\":\"applied\"}]}\n";
		if (n < 0 || strcmp(buf, want))
			_exit(1);
		_exit(write(c, ok, strlen(ok)) < 0);
	}
	close(s);
	assert_int_equal(
		jf_layer_request(l, "apply", (const char *const[]){"a.txt"}, 1, true, &reply), 0);
	j = reply;
	assert_true(json_is_true(json_object_get(j, "ok")));
	assert_string_equal(action_of(json_object_get(j, "report"), "a.txt"), "applied");
	json_decref(j);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the handler: a bad request, a restore that changes upper/, a checkpoint */
	{
		char *line = NULL;
		bool changed = true;
		assert_int_equal(jf_layer_handle_request(l, "{\"cmd\":\"nonesuch\"}", safe_all,
							 NULL, &line, &changed),
				 0);
		assert_string_equal(line, "{\"ok\":false,\"error\":\"bad request\"}\n");
		assert_false(changed);
		free(line);
		assert_int_equal(
			jf_layer_handle_request(l, "{\"cmd\":\"checkpoint\",\"args\":[\"x\"]}\n",
						safe_all, NULL, &line, &changed),
			0);
		assert_string_equal(line, "{\"ok\":true,\"id\":\"000001-x\"}\n");
		assert_false(changed);
		free(line);
		assert_int_equal(jf_layer_handle_request(l,
							 "{\"cmd\":\"restore\",\"args\":[\"x\"]}",
							 safe_all, NULL, &line, &changed),
				 0);
		assert_string_equal(line, "{\"ok\":true}\n");
		assert_true(changed);
		free(line);
	}
	jf_layer_free(l);
	cleanup();
}

/* DIR is refused inside SOURCE, and when another source's. */
static void test_open_checks(void **state)
{
	struct jf_layer *l = NULL;
	char *err = NULL, inside[400];
	int fd;

	fresh();
	fd = open(src, O_PATH | O_DIRECTORY);
	snprintf(inside, sizeof(inside), "%s/dir/layer", src);
	assert_int_equal(jf_layer_open(inside, fd, NULL, true, &l, &err), -EINVAL);
	assert_non_null(strstr(err, "outside"));
	free(err);
	close(fd);
	fd = open(mnt, O_PATH | O_DIRECTORY);
	assert_int_equal(jf_layer_open(dir, fd, NULL, false, &l, &err), -EINVAL);
	assert_non_null(strstr(err, "another source"));
	free(err);
	close(fd);
	chmod(dir, 0755);
	fd = open(src, O_PATH | O_DIRECTORY);
	assert_int_equal(jf_layer_open(dir, fd, NULL, false, &l, &err), -EPERM);
	free(err);
	close(fd);
	cleanup();
}

static void test_torn_journal(void **state)
{
	struct jf_layer *l;
	char p[512];
	FILE *f;

	fresh();
	snprintf(p, sizeof(p), "%s/journal.jsonl", dir);
	f = fopen(p, "a");
	fputs("{\"op\":\"origin\",\"path\":\"b.txt\",\"ty", f);
	fclose(f);
	l = open_layer(false);
	assert_null(jf_layer_origin(l, "b.txt"));
	assert_int_equal(jf_layer_note_origin(l, "a.txt"), 0);
	jf_layer_free(l);
	l = open_layer(false);
	assert_non_null(jf_layer_origin(l, "a.txt"));
	assert_int_equal(jf_layer_note_origin(l, "no/such/file"), 0);
	assert_null(jf_layer_origin(l, "no/such/file"));
	jf_layer_free(l);
	cleanup();
}

/* Random text of lines from a small alphabet: many equal lines, so the
 * diff has to choose. */
static void random_text(char *buf, size_t lines)
{
	static const char *const words[] = {"a\n", "b\n", "c\n", "{\n", "}\n", "x = 1;\n", "\n"};
	size_t len = 0;

	for (size_t i = 0; i < lines; i++)
		len += (size_t)sprintf(buf + len, "%s", words[rand() % ARRAY_SIZE(words)]);
	if (lines && rand() % 4 == 0 && len > 1)
		buf[--len] = '\0'; /* no newline at the end */
}

/* The line diff against git: random pairs of files, the diff applied by
 * git apply gives the new files exactly. */
static void test_diff_random(void **state)
{
	char name[64], up[400], patch[400], copy[400], *a, *b, *got;
	struct jf_layer *l;

	fresh();
	srand(12345);
	a = malloc(1 << 17);
	b = malloc(1 << 17);
	snprintf(up, sizeof(up), "%s/upper", dir);
	l = open_layer(false);
	for (int i = 0; i < 41; i++) {
		/* the last one past JF_MYERS_MAX_D differences: the long script */
		size_t n = i == 40 ? 4 * JF_MYERS_MAX_D : (size_t)(rand() % 60);
		snprintf(name, sizeof(name), "r%02d.txt", i);
		random_text(a, n);
		random_text(b, i == 40 ? n : (size_t)(rand() % 60));
		put(src, name, a, 0644);
		assert_int_equal(jf_layer_note_origin(l, name), 0);
		put(up, name, b, 0644);
	}
	snprintf(patch, sizeof(patch), "%s/r.diff", base);
	snprintf(copy, sizeof(copy), "%s/copy", base);
	diff_to(l, patch, NULL, 0);
	sh("cd %s && git apply --whitespace=nowarn --check %s", src, patch);
	sh("cp -a %s %s && cd %s && git apply --whitespace=nowarn %s", src, copy, copy, patch);
	for (int i = 0; i < 41; i++) {
		snprintf(name, sizeof(name), "r%02d.txt", i);
		got = slurp(copy, name);
		free(a);
		a = slurp(up, name);
		assert_string_equal(got, a);
		free(got);
	}
	free(a);
	free(b);
	jf_layer_free(l);
	cleanup();
}

/* A name that is not UTF-8 (the agent chooses its names) neither cuts the
 * list short nor drops out of it or out of apply's report: every change
 * after it is listed too. */
static void test_changes_not_utf8(void **state)
{
	struct jf_layer *l;
	json_t *a;
	size_t i;
	json_t *o;
	bool seen = false;
	char from[400], to[400];

	fresh();
	l = open_layer(false);
	put(src, "z.txt", "zed\n", 0644);
	assert_int_equal(jf_layer_note_origin(l, "z.txt"), 0);
	assert_int_equal(mknodat(jf_layer_upper_fd(l), "z.txt", S_IFCHR | 0600, makedev(0, 0)), 0);
	put(src, "\001\377", "hidden change\n", 0644); /* sorts first */
	snprintf(from, sizeof(from), "%s/\001\377", src);
	snprintf(to, sizeof(to), "%s/upper/\001\377", dir);
	assert_int_equal(rename(from, to), 0);
	a = changes_of(l);
	assert_int_equal(status_of(a, "z.txt"), 'D');
	json_array_foreach(a, i, o)
	{
		const char *p = json_string_value(json_object_get(o, "path"));
		if (p && !strcmp(p, "\\x01\\xff"))
			seen = json_is_true(json_object_get(o, "path_escaped"));
	}
	assert_true(seen);
	json_decref(a);
	assert_int_equal(jf_layer_apply(l, NULL, 0, false, safe_all, NULL, (void **)&a), 0);
	assert_string_equal(action_of(a, "z.txt"), "applied");
	/* applied: the journal keeps a name that is not UTF-8 in hex */
	assert_string_equal(action_of(a, "\\x01\\xff"), "applied");
	json_decref(a);
	jf_layer_free(l);
	cleanup();
}

/*
 * Names that are not UTF-8 in the journal and a checkpoint: each record
 * keeps the name's bytes (KEY_hex), read back the same, and a restore puts
 * such a name back.
 */
static void test_journal_not_utf8(void **state)
{
	struct jf_layer *l;
	char *id = NULL, *from = NULL, *s;

	fresh();
	put(src, "h\376", "one\n", 0644);
	l = open_layer(false);
	assert_int_equal(jf_layer_checkpoint(l, "c", &id), 0);
	free(id);
	assert_int_equal(jf_layer_note_origin(l, "h\376"), 0);
	assert_int_equal(jf_layer_save(l, "h\376", false), 0);
	assert_int_equal(jf_layer_save(l, "g\377", false), 0);
	assert_int_equal(jf_layer_note_rename(l, "h\376", "g\377"), 0);
	put(dir, "upper/g\377", "one\n", 0644);
	assert_int_equal(mknodat(jf_layer_upper_fd(l), "h\376", S_IFCHR | 0600, makedev(0, 0)), 0);
	jf_layer_free(l);
	l = open_layer(false); /* the journal and the checkpoint read back */
	assert_non_null(jf_layer_origin(l, "h\376"));
	assert_int_equal(jf_layer_renamed_from(l, "g\377", &from), 0);
	assert_non_null(from);
	assert_string_equal(from, "h\376");
	free(from);
	assert_int_equal(jf_layer_restore(l, "c"), 0);
	s = slurp(dir, "upper/g\377");
	assert_null(s);
	jf_layer_free(l);
	cleanup();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_checks),	 cmocka_unit_test(test_changes),
		cmocka_unit_test(test_xattr_whiteout),	 cmocka_unit_test(test_restore_exact),
		cmocka_unit_test(test_restore_two),	 cmocka_unit_test(test_diff_git_apply),
		cmocka_unit_test(test_control),		 cmocka_unit_test(test_torn_journal),
		cmocka_unit_test(test_diff_random),	 cmocka_unit_test(test_changes_not_utf8),
		cmocka_unit_test(test_journal_not_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
