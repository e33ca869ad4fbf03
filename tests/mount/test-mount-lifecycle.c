/* SPDX-License-Identifier: MIT */
/*
 * Mount suite, the daemon's life: a mountpoint inside SOURCE, SIGTERM,
 * SIGINT, SIGKILL (data fsynced before it stays, the stale mountpoint's
 * message), daemonizing, the command line, fstab-style options and the
 * mount(8) helper, where an audit log may be written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "mount-util.h"

static void test_mountpoint_inside_source(void **state)
{
	struct jf_mnt t;
	struct stat st;

	mu_tree_new(&t);
	mu_write(&t, "file", "f");
	mu_mkdir(&t, "view");
	if (snprintf(t.mnt, sizeof(t.mnt), "%s/view", t.src) >= (int)sizeof(t.mnt))
		fail();
	assert_int_equal(mu_mount(&t, NULL, 0), 0);
	assert_false(mu_dir_has(t.mnt, "view"));
	assert_true(mu_dir_has(t.mnt, "file"));
	assert_errno(stat(mu_v(&t, "view"), &st), ENOENT);
	assert_errno(symlink("view", mu_v(&t, "l")), EACCES);
	assert_int_equal(mu_sh("find '%s' >/dev/null", t.mnt), 0);
	mu_umount(&t, SIGTERM);
	assert_false(mu_is_mounted(t.mnt, NULL));
	mu_tree_free(&t);
}

static void lifecycle_signal(int sig)
{
	struct jf_mnt t;
	int status;

	mu_tree_new(&t);
	mu_write(&t, "f", "x");
	assert_int_equal(mu_mount(&t, NULL, 0), 0);
	assert_string_equal(mu_slurp(mu_v(&t, "f")), "x");
	status = mu_umount(&t, sig);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_false(mu_is_mounted(t.mnt, NULL));
	assert_false(mu_daemon_alive_for(t.mnt));
	mu_tree_free(&t);
}

static void test_sigterm(void **state)
{
	lifecycle_signal(SIGTERM);
}

static void test_sigint(void **state)
{
	lifecycle_signal(SIGINT);
}

static void test_sigkill_fsync_and_stale(void **state)
{
	struct jf_mnt t;
	char *big = malloc(300000);
	int fd;

	mu_tree_new(&t);
	assert_int_equal(mu_mount(&t, NULL, 0), 0);
	memset(big, 'k', 300000);
	fd = open(mu_v(&t, "data"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, big, 300000), 300000);
	assert_ok(fsync(fd));
	kill(t.pid, SIGKILL);
	waitpid(t.pid, NULL, 0);
	t.pid = 0;
	close(fd);
	{
		struct stat st;

		assert_ok(stat(mu_s(&t, "data"), &st));
		assert_int_equal(st.st_size, 300000);
	}
	/* The stale mountpoint gets a message that says how to clear it. */
	assert_true(mu_is_mounted(t.mnt, NULL));
	assert_int_equal(
		mu_sh("\"$JAILFS\" '%s' '%s' 2>'%s/err'; test $? -eq 1", t.src, t.mnt, t.dir), 0);
	assert_int_equal(mu_sh("grep -q 'fusermount3 -u %s' '%s/err'", t.mnt, t.dir), 0);
	assert_int_equal(mu_sh("grep -q 'umount -l' '%s/err'", t.dir), 0);
	mu_sh("fusermount3 -uz '%s' 2>/dev/null || umount -l '%s'", t.mnt, t.mnt);
	t.mounted = false;
	mu_forget(&t);
	assert_false(mu_is_mounted(t.mnt, NULL));
	free(big);
	mu_tree_free(&t);
}

static void test_daemonize(void **state)
{
	struct jf_mnt t;

	mu_tree_new(&t);
	mu_write(&t, "f", "bg");
	/* Without -f the parent returns 0 only once the mount is ready. */
	assert_int_equal(mu_sh("\"$JAILFS\" '%s' '%s'", t.src, t.mnt), 0);
	assert_true(mu_is_mounted(t.mnt, "fuse.jailfs"));
	assert_string_equal(mu_slurp(mu_v(&t, "f")), "bg");
	assert_int_equal(mu_sh("fusermount3 -u '%s'", t.mnt), 0);
	for (int i = 0; i < 200 && mu_daemon_alive_for(t.mnt); i++)
		usleep(10000);
	assert_false(mu_daemon_alive_for(t.mnt));
	assert_false(mu_is_mounted(t.mnt, NULL));
	mu_tree_free(&t);
}

static void test_cli(void **state)
{
	assert_int_equal(mu_sh("\"$JAILFS\" --help > /tmp/jf-help.$$ && "
			       "grep -q RESTRICTED /tmp/jf-help.$$ && grep -q 'Exit status' "
			       "/tmp/jf-help.$$ && grep -q fstab /tmp/jf-help.$$; r=$?; "
			       "rm -f /tmp/jf-help.$$; exit $r"),
			 0);
	assert_int_equal(mu_sh("\"$JAILFS\" --version | grep -q '^jailfs '"), 0);
	assert_int_equal(mu_sh("\"$JAILFS\" only-one-arg 2>/dev/null"), 2);
	assert_int_equal(mu_sh("\"$JAILFS\" --bogus a b 2>/dev/null"), 2);
	assert_int_equal(mu_sh("\"$JAILFS\" --policy /nonexistent/p.ini /tmp /mnt 2>/dev/null"), 2);
	assert_int_equal(mu_sh("\"$JAILFS\" /nonexistent/src /tmp 2>&1 | grep -q /nonexistent/src"),
			 0);
}

static void test_fstab_style_options(void **state)
{
	struct jf_mnt t;
	char opt[700];
	const char *args[] = {"-o", opt, NULL};
	struct stat st;

	mu_tree_new(&t);
	mu_write(&t, "f", "x");
	mu_write(&t, ".env", "s");
	snprintf(opt, sizeof(opt),
		 "rw,read_only,entry_timeout=1,attr_timeout=1,"
		 "negative_timeout=1");
	assert_int_equal(mu_mount(&t, args, 0), 0);
	assert_errno(open(mu_v(&t, "f"), O_WRONLY), EROFS);
	assert_errno(stat(mu_v(&t, ".env"), &st), ENOENT);
	mu_umount(&t, SIGTERM);
	mu_tree_free(&t);
}

static void test_fstab_mount_helper(void **state)
{
	struct jf_mnt t;
	struct stat st;

	/* mount(8) -> mount.fuse3 -> "jailfs SOURCE MOUNTPOINT -o opts": root only */
	if (geteuid() != 0)
		skip();
	mu_tree_new(&t);
	mu_write(&t, "f", "x");
	mu_write(&t, "id_rsa", "k");
	/* "PROGRAM#SOURCE" names the program by path (mount(8) resets PATH);
	 * an fstab line with type fuse.jailfs takes the same route. */
	assert_int_equal(
		mu_sh("mount -t fuse -o read_only,nofail \"$JAILFS#%s\" '%s'", t.src, t.mnt), 0);
	assert_true(mu_is_mounted(t.mnt, "fuse.jailfs"));
	assert_errno(open(mu_v(&t, "f"), O_WRONLY), EROFS);
	assert_errno(stat(mu_v(&t, "id_rsa"), &st), ENOENT);
	assert_int_equal(mu_sh("umount '%s'", t.mnt), 0);
	for (int i = 0; i < 200 && mu_daemon_alive_for(t.mnt); i++)
		usleep(10000);
	assert_false(mu_daemon_alive_for(t.mnt));
	assert_false(mu_is_mounted(t.mnt, NULL));
	mu_tree_free(&t);
}

/* Audit file: a relative path survives daemonizing, one inside MOUNTPOINT is
 * refused, one inside SOURCE only where the policy hides it, and a guessed (absent) DENIED name is
 * recorded as hidden. */
static void test_audit_path_and_guesses(void **state)
{
	struct jf_mnt t;
	struct stat st;

	mu_tree_new(&t);
	mu_write(&t, "f", "x");
	(void)unlink("/rel.jsonl"); /* where a relative path used to end up */
	assert_int_equal(mu_sh("cd '%s' && \"$JAILFS\" --audit mnt/a.jsonl src mnt 2>err; "
			       "r=$?; grep -q 'inside MOUNTPOINT' err && test $r -eq 2",
			       t.dir),
			 0);
	assert_false(mu_is_mounted(t.mnt, NULL));
	/* inside SOURCE and visible: the audited program could rewrite it */
	assert_int_equal(mu_sh("cd '%s' && \"$JAILFS\" --audit src/a.jsonl src mnt 2>err; "
			       "r=$?; grep -q 'inside SOURCE' err && test $r -eq 2 && "
			       "test ! -e src/a.jsonl",
			       t.dir),
			 0);
	assert_false(mu_is_mounted(t.mnt, NULL));
	/* ... also when reached through a symlink outside SOURCE, or as a second
	 * hard-link name of a file inside it (red-team findings) */
	assert_int_equal(
		mu_sh("cd '%s' && touch src/b.log && ln -s \"$PWD/src/b.log\" sl.log && "
		      "\"$JAILFS\" --audit sl.log src mnt 2>err; r=$?; "
		      "grep -q 'inside SOURCE' err && test $r -eq 2 && test ! -s src/b.log",
		      t.dir),
		0);
	assert_int_equal(mu_sh("cd '%s' && ln src/b.log hl.log && "
			       "\"$JAILFS\" --audit hl.log src mnt 2>err; r=$?; "
			       "grep -q 'hard links' err && test $r -eq 2 && test ! -s src/b.log",
			       t.dir),
			 0);
	assert_false(mu_is_mounted(t.mnt, NULL));
	/* inside SOURCE but DENIED (a secret's name): hidden from the view, accepted */
	assert_int_equal(mu_sh("cd '%s' && \"$JAILFS\" --audit src/.env.audit src mnt && "
			       "test ! -e mnt/.env.audit && fusermount3 -u mnt",
			       t.dir),
			 0);
	for (int i = 0; i < 200 && mu_daemon_alive_for(t.mnt); i++)
		usleep(10000);
	assert_int_equal(mu_sh("cd '%s' && \"$JAILFS\" --audit rel.jsonl src mnt", t.dir), 0);
	assert_true(mu_is_mounted(t.mnt, "fuse.jailfs"));
	assert_errno(stat(mu_v(&t, ".env.production"), &st), ENOENT);
	assert_errno(stat(mu_v(&t, "id_rsa"), &st), ENOENT);
	assert_int_equal(mu_sh("fusermount3 -u '%s'", t.mnt), 0);
	for (int i = 0; i < 200 && mu_daemon_alive_for(t.mnt); i++)
		usleep(10000);
	assert_int_equal(mu_sh("grep '\"path\":\".env.production\"' '%s/rel.jsonl' | "
			       "grep -q '\"decision\":\"hide\"'",
			       t.dir),
			 0);
	assert_int_equal(mu_sh("grep -q '\"path\":\"id_rsa\"' '%s/rel.jsonl'", t.dir), 0);
	assert_errno(stat("/rel.jsonl", &st), ENOENT);
	mu_tree_free(&t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_audit_path_and_guesses),
		cmocka_unit_test(test_mountpoint_inside_source),
		cmocka_unit_test(test_sigterm),
		cmocka_unit_test(test_sigint),
		cmocka_unit_test(test_sigkill_fsync_and_stale),
		cmocka_unit_test(test_daemonize),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_fstab_style_options),
		cmocka_unit_test(test_fstab_mount_helper),
	};

	return mu_run_tests("mount-lifecycle", tests, argc, argv);
}
