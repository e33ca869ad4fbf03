/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the symlink target rule (fs/symlink.c): a table of link
 * directories and targets, each with the view target the daemon shows or
 * -ENOENT (hidden). SOURCE is /src, the mountpoint /src/mnt is inside it,
 * and the policy denies secrets/ and .env. System targets are resolved in a
 * fake host tree (a temporary directory as "/", made by setup) whose /usr
 * has links into /etc as Debian's has.
 */
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

#include "policy.h"
#include "symlink.h"
#include "systarget.h"

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
	/* system targets outside SOURCE are shown as they are, if canonical and
	 * if, resolved on the host, every step stays in the system directories
	 * and the end is a regular file */
	{"venv/bin", "/usr/bin/python3", 0, "/usr/bin/python3"},
	{"venv/bin", "/bin/python3", 0, "/bin/python3"}, /* /bin -> usr/bin */
	{"venv/bin", "/usr/bin/python3.11", 0, "/usr/bin/python3.11"},
	{"venv/bin", "/usr/../etc/passwd", -ENOENT, NULL},
	{"", "/etc/shadow", -ENOENT, NULL},
	{"", "/usr", -ENOENT, NULL},
	{"", "/usr/lib/ssl/private", -ENOENT, NULL},
	{"", "/usr/lib/ssl/private/key.pem", -ENOENT, NULL},
	{"", "/usr/share/maven/conf", -ENOENT, NULL},
	{"", "/usr/share/maven/conf/settings.xml", -ENOENT, NULL},
	{"", "/usr/lib/python3.11/sitecustomize.py", -ENOENT, NULL},
	/* through /etc/alternatives and back into /usr: refused, see systarget.c */
	{"", "/usr/bin/java", -ENOENT, NULL},
	{"", "/usr/lib/jvm/bin/java", 0, "/usr/lib/jvm/bin/java"},
	/* a directory hands a recursive follower its links (conf -> /etc/java) */
	{"", "/usr/lib/jvm", -ENOENT, NULL},
	{"", "/usr/lib/jvm/conf", -ENOENT, NULL},
	{"", "/usr/lib/jvm/bin", -ENOENT, NULL},
	/* ".." in link texts: physical, never above "/", never through /etc */
	{"", "/usr/lib/esc", 0, "/usr/lib/esc"},
	{"", "/usr/lib/rel", 0, "/usr/lib/rel"},
	{"", "/usr/lib/viassl", -ENOENT, NULL}, /* ".." after the link's end */
	{"", "/usr/lib/back", -ENOENT, NULL},
	{"", "/usr/lib/round", -ENOENT, NULL},
	{"", "/usr/lib/toroot/usr/bin/python3", 0, "/usr/lib/toroot/usr/bin/python3"},
	{"", "/usr/lib/toroot/etc/maven/settings.xml", -ENOENT, NULL},
	/* 41 links are one too many, 40 are fine; a loop; missing names */
	{"", "/usr/lib/chain/l0", -ENOENT, NULL},
	{"", "/usr/lib/chain/l1", 0, "/usr/lib/chain/l1"},
	{"", "/usr/lib/loop1", -ENOENT, NULL},
	{"", "/usr/bin/missing", -ENOENT, NULL},
	{"", "/usr/bin/python3.11/x", -ENOENT, NULL},
	{"", "/lib32/x", -ENOENT, NULL},
	/* the standard device nodes, by their exact names: whoever follows one
	 * reads or writes that device or one of their own fds */
	{"", "/dev/null", 0, "/dev/null"},
	{"a", "/dev/zero", 0, "/dev/zero"},
	{"", "/dev/urandom", 0, "/dev/urandom"},
	{"", "/dev/random", 0, "/dev/random"},
	{"", "/dev/tty", 0, "/dev/tty"},
	{"", "/dev/stdin", 0, "/dev/stdin"},
	{"", "/dev/stdout", 0, "/dev/stdout"},
	{"", "/dev/stderr", 0, "/dev/stderr"},
	{"", "/dev/fd/0", 0, "/dev/fd/0"},
	{"", "/dev/fd/255", 0, "/dev/fd/255"},
	/* every other device, and every other spelling, stays hidden */
	{"", "/dev/sda", -ENOENT, NULL},
	{"", "/dev/mem", -ENOENT, NULL},
	{"", "/dev/kmem", -ENOENT, NULL},
	{"", "/dev/shm/x", -ENOENT, NULL},
	{"", "/dev/shm", -ENOENT, NULL},
	{"", "/dev", -ENOENT, NULL},
	{"", "/dev/", -ENOENT, NULL},
	{"", "/dev/fd", -ENOENT, NULL},
	{"", "/dev/fd/", -ENOENT, NULL},
	{"", "/dev/fd/x", -ENOENT, NULL},
	{"", "/dev/fd/3/x", -ENOENT, NULL},
	{"", "/dev/fd/3/", -ENOENT, NULL},
	{"", "/dev/fd/../sda", -ENOENT, NULL},
	{"", "/dev/null/", -ENOENT, NULL},
	{"", "/dev/null/x", -ENOENT, NULL},
	{"", "/dev//null", -ENOENT, NULL},
	{"", "/dev/./null", -ENOENT, NULL},
	{"", "//dev/null", -ENOENT, NULL},
	{"", "/dev/nullx", -ENOENT, NULL},
	{"", "/dev/../dev/null", -ENOENT, NULL},
	{"", "dev/null", 0, "dev/null"}, /* relative: a name of the view */
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
static char host[] = "/tmp/jf-test-symlink.XXXXXX";
static int host_fd = -1;

/* The fake host: a file where @text is NULL, else a link with that text. */
static void put(const char *path, const char *text)
{
	char p[4096], *s;

	snprintf(p, sizeof(p), "%s/%s", host, path);
	for (s = p + strlen(host) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	unlink(p);
	if (text)
		assert_int_equal(symlink(text, p), 0);
	else
		assert_int_equal(close(open(p, O_WRONLY | O_CREAT, 0644)), 0);
}

static void make_host(void)
{
	char name[64], text[64];

	put("usr/bin/python3.11", NULL);
	put("usr/bin/python3", "python3.11");
	put("bin", "usr/bin");
	put("etc/ssl/private/key.pem", NULL);
	put("usr/lib/ssl/private", "/etc/ssl/private");
	put("etc/maven/settings.xml", NULL);
	put("usr/share/maven/conf", "/etc/maven");
	put("etc/python3.11/sitecustomize.py", NULL);
	put("usr/lib/python3.11/sitecustomize.py", "/etc/python3.11/sitecustomize.py");
	put("usr/lib/jvm/bin/java", NULL);
	put("etc/alternatives/java", "/usr/lib/jvm/bin/java");
	put("usr/bin/java", "/etc/alternatives/java");
	put("etc/java/security", NULL);
	put("usr/lib/jvm/conf", "/etc/java");
	put("usr/lib/esc", "../../../../../usr/bin/python3");
	put("usr/lib/rel", "../bin/python3");
	put("usr/lib/viassl", "ssl/private/../../../bin/python3");
	put("usr/lib/back", "../../etc/maven/settings.xml");
	put("usr/lib/round", "../../etc/../usr/bin/python3");
	put("usr/lib/toroot", "/");
	put("usr/lib/loop1", "loop2");
	put("usr/lib/loop2", "loop1");
	for (int i = 0; i < JF_SYSTARGET_MAX_HOPS; i++) {
		snprintf(name, sizeof(name), "usr/lib/chain/l%d", i);
		snprintf(text, sizeof(text), "l%d", i + 1);
		put(name, text);
	}
	put("usr/lib/chain/l40", "/usr/bin/python3.11");
}

static int setup(void **state)
{
	char err[256];

	(void)state;
	if (!mkdtemp(host))
		return -1;
	make_host();
	host_fd = open(host, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (host_fd < 0)
		return -1;
	return jf_policy_parse("t.ini", policy_text, strlen(policy_text), &policy, err,
			       sizeof(err));
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	jf_policy_free(policy);
	close(host_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", host);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_table(void **state)
{
	const struct jf_symlink_ctx ctx = {.source_abs = "/src",
					   .mnt_rel = "mnt",
					   .policy = policy,
					   .host_check = jf_systarget_resolve,
					   .host_root_fd = host_fd};

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

/* What the walk answers, beyond shown or hidden. */
static void test_resolve_errors(void **state)
{
	(void)state;
	assert_int_equal(jf_systarget_resolve(host_fd, "/usr/bin/python3"), 0);
	assert_int_equal(jf_systarget_resolve(host_fd, "/usr/lib/ssl/private"), -EACCES);
	assert_int_equal(jf_systarget_resolve(host_fd, "/usr/lib/chain/l0"), -ELOOP);
	assert_int_equal(jf_systarget_resolve(host_fd, "/usr/lib/loop1"), -ELOOP);
	assert_int_equal(jf_systarget_resolve(host_fd, "/usr/bin/missing"), -ENOENT);
	assert_int_equal(jf_systarget_resolve(host_fd, "/usr/bin/python3.11/x"), -ENOTDIR);
	assert_int_equal(jf_systarget_resolve(host_fd, "/usr/bin"), -EACCES);
	assert_int_equal(jf_systarget_resolve(host_fd, "usr/bin/python3"), -EACCES);
	assert_int_equal(jf_systarget_resolve(-1, "/usr/bin/python3"), -EBADF);
}

/* Without a host to ask, every system target is hidden. */
static void test_no_host_check(void **state)
{
	const struct jf_symlink_ctx ctx = {.source_abs = "/src", .policy = policy};
	char out[JF_PATH_MAX + 1];

	(void)state;
	assert_int_equal(jf_symlink_view(&ctx, "", "/usr/bin/python3", out, sizeof(out)), -ENOENT);
}

/* The host's /usr changes after a link was judged: each judgement walks
 * again (jf_systarget_resolve), the daemon's cache after its TTL. */
static void test_host_changes(void **state)
{
	const struct jf_symlink_ctx ctx = {.source_abs = "/src",
					   .policy = policy,
					   .host_check = jf_systarget_resolve,
					   .host_root_fd = host_fd};
	char out[JF_PATH_MAX + 1];

	(void)state;
	put("usr/bin/tool", "python3.11");
	assert_int_equal(jf_symlink_view(&ctx, "", "/usr/bin/tool", out, sizeof(out)), 0);
	assert_int_equal(jf_systarget_check(host_fd, "/usr/bin/tool"), 0);
	put("usr/bin/tool", "/etc/maven/settings.xml");
	assert_int_equal(jf_symlink_view(&ctx, "", "/usr/bin/tool", out, sizeof(out)), -ENOENT);
	assert_int_equal(jf_systarget_check(host_fd, "/usr/bin/tool"), 0); /* cached */
	usleep((JF_SYSTARGET_TTL_MS + 50) * 1000);
	assert_int_equal(jf_systarget_check(host_fd, "/usr/bin/tool"), -EACCES);
	assert_int_equal(jf_systarget_check(host_fd, "/usr/bin/python3"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_resolve_errors),
		cmocka_unit_test(test_no_host_check),
		cmocka_unit_test(test_host_changes),
		cmocka_unit_test(test_mountpoint_outside),
		cmocka_unit_test(test_small_buffer),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
