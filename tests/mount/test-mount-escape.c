/* SPDX-License-Identifier: MIT */
/*
 * Mount suite, escapes from the view on the standard tree (mount-util.h):
 * "..", symlinks planted in SOURCE or made through the view (relative,
 * absolute, moved, linked), hard links to hidden files, renames and mkdir
 * onto DENIED or RESTRICTED names, a directory swapped under the daemon,
 * pseudo-filesystems inside SOURCE, set-id bits, link counts that would
 * reveal hidden directories. Every refusal checks the exact errno and the
 * backing tree.
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

static void test_escape_dotdot(void **state)
{
	struct jf_mnt *m = *state;
	char *r = realpath(mu_v(m, "work/.."), NULL);
	struct stat st;

	/* ".." of the view root is the kernel's business: the mountpoint's parent
	 * on the host side, never SOURCE's parent through the daemon. */
	assert_string_equal(r, m->mnt);
	free(r);
	assert_errno(stat(mu_v(m, "work/up/etc/passwd"), &st), ENOENT);
	assert_false(mu_dir_has(mu_v(m, "work"), "up"));
}

static void test_escape_planted_symlink(void **state)
{
	struct jf_mnt *m = *state;
	struct stat st;

	assert_errno(lstat(mu_v(m, "work/pw"), &st), ENOENT);
	assert_errno(open(mu_v(m, "work/pw"), O_RDONLY), ENOENT);
	assert_false(mu_dir_has(mu_v(m, "work"), "pw"));
	/* symlinks onto DENIED names are hidden too */
	assert_errno(lstat(mu_v(m, "work/toenv"), &st), ENOENT);
	assert_errno(lstat(mu_v(m, "work/totoken"), &st), ENOENT);
	assert_false(mu_dir_has(mu_v(m, "work"), "toenv"));
	assert_false(mu_dir_has(mu_v(m, "work"), "totoken"));
	/* s/u -> .. is fine, s/w -> u/../.. climbs out and is hidden */
	assert_ok(lstat(mu_v(m, "work/s/u"), &st));
	assert_errno(lstat(mu_v(m, "work/s/w"), &st), ENOENT);
	assert_false(mu_dir_has(mu_v(m, "work/s"), "w"));
}

static void test_escape_agent_symlink(void **state)
{
	struct jf_mnt *m = *state;
	uint64_t before = mu_tree_sum(m, NULL);

	assert_errno(symlink("/etc/passwd", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("../../../../../etc", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("../.env", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("../secret/token", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("s/u/../..", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink(m->mnt, mu_v(m, "work/x")), EACCES);
	/* system paths only when written canonically */
	assert_errno(symlink("/usr/../etc/passwd", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("/usr/bin/./../../etc/passwd", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("/usr", mu_v(m, "work/x")), EACCES);
	assert_errno(symlink("/usrx/bin/sh", mu_v(m, "work/x")), EACCES);
	assert_true(mu_tree_sum(m, NULL) == before);
}

/* A virtual environment links bin/python3 to the system's interpreter: an
 * absolute target below a system directory (read-only in every jail) is
 * created and shown as it is. */
static void test_symlink_system_target(void **state)
{
	struct jf_mnt *m = *state;
	char buf[256];
	ssize_t n;

	assert_ok(mkdir(mu_v(m, "work/venv"), 0755));
	assert_ok(symlink("/usr/bin/python3", mu_v(m, "work/venv/python3")));
	n = readlink(mu_v(m, "work/venv/python3"), buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "/usr/bin/python3");
	n = readlink(mu_s(m, "work/venv/python3"), buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "/usr/bin/python3");
	assert_true(mu_dir_has(mu_v(m, "work/venv"), "python3"));
	/* such a link never changes directory (its text is not relative) */
	assert_errno(rename(mu_v(m, "work/venv"), mu_v(m, "work/venv2")), EXDEV);
}

static void test_escape_absolute_rewritten(void **state)
{
	struct jf_mnt *m = *state;
	char buf[256];
	ssize_t n;

	n = readlink(mu_v(m, "work/abs"), buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "f");
	n = readlink(mu_v(m, "absroot"), buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "work/f");
	assert_string_equal(mu_slurp(mu_v(m, "absroot")), "safe\n");
	{
		struct stat st;

		assert_ok(lstat(mu_v(m, "absroot"), &st));
		assert_int_equal(st.st_size, 6);
	}
}

static void test_escape_planted_hardlink(void **state)
{
	struct jf_mnt *m = *state;
	uint64_t before = mu_file_sum(m, "secret/token");
	struct stat st;

	/* work/hl is a second name of secret/token: the start-up hard-link
	 * index knows its DENIED name, so it is hidden like the secret itself */
	assert_errno(stat(mu_v(m, "work/hl"), &st), ENOENT);
	assert_errno(open(mu_v(m, "work/hl"), O_RDONLY), ENOENT);
	assert_errno(open(mu_v(m, "work/hl"), O_RDWR | O_TRUNC), ENOENT);
	assert_errno(unlink(mu_v(m, "work/hl")), ENOENT);
	assert_errno(link(mu_v(m, "work/hl"), mu_v(m, "work/hl2")), ENOENT);
	assert_false(mu_dir_has(mu_v(m, "work"), "hl"));
	assert_int_equal(mu_sh("ls -la '%s' | grep -q ' hl$'", mu_v(m, "work")), 1);
	assert_true(mu_file_sum(m, "secret/token") == before);
}

/* Invariant 6 with the start-up index: SECRET=1 in .env, linked as notes.txt. */
static void test_hardlink_index(void **state)
{
	struct jf_mnt t;
	struct stat st;
	char pol[600];
	const char *zone_args[] = {"--policy", pol, NULL};
	const char *plain[] = {"-o", "nofast_open", NULL}; /* refused at open */
	int fd;

	mu_tree_new(&t);
	mu_write(&t, ".env", "SECRET=1\n");
	assert_ok(link(mu_s(&t, ".env"), mu_s(&t, "notes.txt")));
	mu_write(&t, "store/a/x", "pkg\n"); /* pnpm-style: both names SAFE, in SOURCE */
	mu_mkdir(&t, "node_modules/a");
	assert_ok(link(mu_s(&t, "store/a/x"), mu_s(&t, "node_modules/a/x")));
	mu_write(&t, "ext", "ext\n"); /* second name outside SOURCE: unknown */
	snprintf(pol, sizeof(pol), "%s/ext-name", t.dir);
	assert_ok(link(mu_s(&t, "ext"), pol));
	assert_int_equal(mu_mount(&t, plain, 0), 0);
	assert_errno(stat(mu_v(&t, "notes.txt"), &st), ENOENT);
	assert_null(mu_slurp(mu_v(&t, "notes.txt")));
	assert_false(mu_dir_has(t.mnt, "notes.txt"));
	assert_errno(open(mu_v(&t, "notes.txt"), O_CREAT | O_WRONLY, 0644), EACCES);
	fd = open(mu_v(&t, "node_modules/a/x"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "w", 1), 1);
	close(fd);
	assert_string_equal(mu_slurp(mu_s(&t, "store/a/x")), "pkg\nw");
	assert_string_equal(mu_slurp(mu_v(&t, "ext")), "ext\n");
	assert_write_refused(mu_v(&t, "ext"), O_WRONLY);
	/* its inode is shared with the name outside SOURCE: read-only; its
	 * name in SOURCE is SAFE and may go (git gc of a local clone) */
	assert_errno(chmod(mu_v(&t, "ext"), 0666), EROFS);
	assert_errno(truncate(mu_v(&t, "ext"), 0), EROFS);
	assert_ok(rename(mu_v(&t, "ext"), mu_v(&t, "ext2")));
	mu_write(&t, "repl", "new\n");
	assert_ok(rename(mu_v(&t, "repl"), mu_v(&t, "ext2")));
	assert_string_equal(mu_slurp(mu_v(&t, "ext2")), "new\n");
	assert_string_equal(mu_slurp(pol), "ext\n");
	assert_ok(link(pol, mu_s(&t, "ext")));
	assert_ok(unlink(mu_v(&t, "ext")));
	assert_ok(stat(pol, &st));
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* rustc's incremental cache: a file linked through the view into a
	 * session directory, which is then renamed (mv would copy on EXDEV) */
	assert_ok(mkdir(mu_v(&t, "s0"), 0755));
	assert_ok(mkdir(mu_v(&t, "s1-working"), 0755));
	assert_ok(mu_sh("echo obj > '%s'", mu_v(&t, "s0/dep-graph.bin")));
	assert_ok(link(mu_v(&t, "s0/dep-graph.bin"), mu_v(&t, "s1-working/dep-graph.bin")));
	assert_ok(rename(mu_v(&t, "s1-working"), mu_v(&t, "s1")));
	assert_string_equal(mu_slurp(mu_v(&t, "s1/dep-graph.bin")), "obj\n");
	/* a directory holding a file linked outside SOURCE moves too */
	assert_ok(mkdir(mu_v(&t, "d"), 0755));
	assert_ok(link(pol, mu_s(&t, "d/ext")));
	assert_ok(rename(mu_v(&t, "d"), mu_v(&t, "d2")));
	assert_write_refused(mu_v(&t, "d2/ext"), O_WRONLY);
	mu_umount(&t, SIGTERM);
	/* hardlinks = zone keeps its meaning: no index, the name's own zone */
	snprintf(pol, sizeof(pol), "%s/zone.ini", t.dir);
	assert_int_equal(
		mu_sh("printf '[options]\\ndefault = safe\\nhardlinks = zone\\n' > '%s'", pol), 0);
	assert_int_equal(mu_mount(&t, zone_args, 0), 0);
	assert_string_equal(mu_slurp(mu_v(&t, "notes.txt")), "SECRET=1\n");
	mu_umount(&t, SIGTERM);
	/* hardlinks = deny hides every multiply-linked file */
	assert_int_equal(
		mu_sh("printf '[options]\\ndefault = safe\\nhardlinks = deny\\n' > '%s'", pol), 0);
	assert_int_equal(mu_mount(&t, zone_args, 0), 0);
	assert_errno(stat(mu_v(&t, "node_modules/a/x"), &st), ENOENT);
	assert_false(mu_dir_has(mu_v(&t, "node_modules/a"), "x"));
	mu_umount(&t, SIGTERM);
	mu_tree_free(&t);
}

/* A symlink harmless where it is climbs out of the view once moved. */
static void test_symlink_rename_and_link(void **state)
{
	struct jf_mnt *m = *state;
	char buf[512], abs[600];
	struct stat st;
	ssize_t n;

	assert_int_equal(mu_sh("mkdir -p '%s'", mu_v(m, "work/a/b/c/d")), 0);
	assert_ok(symlink("../../../../../etc/passwd", mu_v(m, "work/a/b/c/d/l")));
	n = readlink(mu_v(m, "work/a/b/c/d/l"), buf, sizeof(buf) - 1);
	assert_int_equal(n, 25);
	/* the link itself, to a shallower directory: refused, nothing moves */
	assert_errno(rename(mu_v(m, "work/a/b/c/d/l"), mu_v(m, "work/l9")), EACCES);
	assert_errno(lstat(mu_s(m, "work/l9"), &st), ENOENT);
	assert_ok(lstat(mu_s(m, "work/a/b/c/d/l"), &st));
	assert_errno(stat(mu_v(m, "work/l9"), &st), ENOENT);
	/* a directory holding it: EXDEV (mv copies, symlink() checks each) */
	assert_errno(rename(mu_v(m, "work/a/b/c"), mu_v(m, "work/c2")), EXDEV);
	assert_ok(lstat(mu_s(m, "work/a/b/c/d/l"), &st));
	assert_int_equal(
		mu_sh("mv '%s' '%s' 2>/dev/null", mu_v(m, "work/a/b/c"), mu_v(m, "work/c2")), 1);
	assert_errno(lstat(mu_s(m, "work/c2/d/l"), &st), ENOENT);
	/* a second name elsewhere: refused before linkat, nothing on disk */
	assert_errno(link(mu_v(m, "work/a/b/c/d/l"), mu_v(m, "work/l2")), EACCES);
	assert_errno(lstat(mu_s(m, "work/l2"), &st), ENOENT);
	assert_errno(link(mu_v(m, "work/a/b/c/d/l"), mu_v(m, "l3")), EACCES);
	assert_errno(lstat(mu_s(m, "l3"), &st), ENOENT);
	/* in the same directory it is the same link: allowed */
	assert_ok(link(mu_v(m, "work/a/b/c/d/l"), mu_v(m, "work/a/b/c/d/l4")));
	/* an absolute target is shown relative to the link's directory, and the
	 * kernel caches that text: such a link never changes directory */
	mu_sh("rm -rf '%s' '%s'", mu_s(m, "work/a/b/c/d/l"), mu_s(m, "work/a/b/c/d/l4"));
	mu_sh("rm -rf '%s'", mu_s(m, "work/c2"));
	snprintf(abs, sizeof(abs), "%s/work/f", m->src);
	assert_ok(symlink(abs, mu_s(m, "work/a/b/c/d/abs")));
	n = readlink(mu_v(m, "work/a/b/c/d/abs"), buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "../../../../f");
	assert_string_equal(mu_slurp(mu_v(m, "work/a/b/c/d/abs")), "safe\n");
	assert_errno(rename(mu_v(m, "work/a/b/c"), mu_v(m, "work/c3")), EXDEV);
	assert_errno(rename(mu_v(m, "work/a/b/c/d/abs"), mu_v(m, "work/abs2")), EXDEV);
	assert_errno(link(mu_v(m, "work/a/b/c/d/abs"), mu_v(m, "work/abs3")), EACCES);
	assert_errno(lstat(mu_s(m, "work/abs3"), &st), ENOENT);
	assert_ok(rename(mu_v(m, "work/a/b/c/d/abs"), mu_v(m, "work/a/b/c/d/abs4")));
	assert_string_equal(mu_slurp(mu_v(m, "work/a/b/c/d/abs4")), "safe\n");
	/* planted: one absolute symlink with names in two directories: hidden */
	assert_ok(link(mu_s(m, "work/a/b/c/d/abs4"), mu_s(m, "abs5")));
	assert_errno(lstat(mu_v(m, "abs5"), &st), ENOENT);
	assert_errno(open(mu_v(m, "abs5"), O_RDONLY), ENOENT);
}

/* Invariant 8: no set-user/group-ID regular file through the view. */
static void test_no_setid_files(void **state)
{
	struct jf_mnt *m = *state;
	struct stat st;
	int fd;

	assert_ok(chmod(mu_v(m, "work/f"), 04755));
	assert_ok(stat(mu_s(m, "work/f"), &st));
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_ok(chmod(mu_v(m, "work/f"), 02755));
	assert_ok(stat(mu_s(m, "work/f"), &st));
	assert_int_equal(st.st_mode & 07777, 0755);
	fd = open(mu_v(m, "work/su"), O_CREAT | O_WRONLY, 06755);
	assert_true(fd >= 0);
	assert_ok(fchmod(fd, 04755));
	close(fd);
	assert_ok(stat(mu_s(m, "work/su"), &st));
	assert_int_equal(st.st_mode & (S_ISUID | S_ISGID), 0);
	assert_ok(mknod(mu_v(m, "work/su2"), S_IFREG | 04755, 0));
	assert_ok(stat(mu_s(m, "work/su2"), &st));
	assert_int_equal(st.st_mode & (S_ISUID | S_ISGID), 0);
	/* set-group-ID directories stay (group inheritance, no privilege) */
	assert_ok(mkdir(mu_v(m, "work/g"), 0755));
	assert_ok(chmod(mu_v(m, "work/g"), 02755));
	assert_ok(stat(mu_s(m, "work/g"), &st));
	assert_int_equal(st.st_mode & 07777, 02755);
}

/* Invariant 3: a directory's link count does not count hidden subdirectories. */
static void test_dir_nlink_hides(void **state)
{
	struct jf_mnt *m = *state;
	struct stat st;

	mu_mkdir(m, "work/h/.ssh");
	mu_mkdir(m, "work/h/secrets");
	assert_ok(stat(mu_s(m, "work/h"), &st));
	assert_int_equal(st.st_nlink, 4);
	assert_ok(stat(mu_v(m, "work/h"), &st));
	assert_int_equal(st.st_nlink, 1);
	assert_ok(stat(m->mnt, &st));
	assert_int_equal(st.st_nlink, 1);
	/* find(1) copes with nlink 1 (no leaf optimization) */
	assert_int_equal(mu_sh("test $(find '%s' -type d | wc -l) -eq 1", mu_v(m, "work/h")), 0);
}

static void test_escape_link_restricted_then_write(void **state)
{
	struct jf_mnt *m = *state;

	assert_errno(link(mu_v(m, "ro/f"), mu_v(m, "work/rof")), EROFS);
	assert_errno(open(mu_v(m, "work/rof"), O_WRONLY), ENOENT);
	assert_string_equal(mu_slurp(mu_s(m, "ro/f")), "ro\n");
}

static void test_escape_rename_to_env(void **state)
{
	struct jf_mnt *m = *state;

	assert_errno(rename(mu_v(m, "work/f"), mu_v(m, "work/.env")), EACCES);
	assert_errno(rename(mu_v(m, "work/f"), mu_v(m, "work/.ENV")), EACCES);
	assert_string_equal(mu_slurp(mu_s(m, "work/f")), "safe\n");
	assert_string_equal(mu_slurp(mu_s(m, "work/.env")), "WORK_SECRET\n");
}

static void test_escape_mkdir_ssh(void **state)
{
	struct jf_mnt *m = *state;
	struct stat st;

	assert_errno(mkdir(mu_v(m, ".ssh"), 0700), EACCES);
	assert_errno(mkdir(mu_v(m, "work/.ssh"), 0700), EACCES);
	assert_errno(stat(mu_s(m, ".ssh"), &st), ENOENT);
}

static void test_escape_git_hooks(void **state)
{
	struct jf_mnt *m = *state;

	assert_write_refused(mu_v(m, ".git/hooks/pre-commit"), O_WRONLY | O_TRUNC);
	assert_write_refused(mu_v(m, ".git/hooks/pre-commit"), O_WRONLY | O_APPEND);
	assert_errno(unlink(mu_v(m, ".git/hooks/pre-commit")), EROFS);
	assert_errno(chmod(mu_v(m, ".git/hooks/pre-commit"), 0755), EROFS);
	assert_string_equal(mu_slurp(mu_s(m, ".git/hooks/pre-commit")), "#!/bin/sh\n");
}

/* Write @content to @rel through the view (a new file, as git's .lock). */
static void view_write(const struct jf_mnt *m, const char *rel, const char *content, mode_t mode)
{
	int fd = open(mu_v(m, rel), O_CREAT | O_WRONLY | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	assert_int_equal(close(fd), 0);
}

/* .git/config: replaced only by a rename of config.lock whose content sets
 * no key that runs a program; hooks/: samples only, never executable. */
static void test_escape_git_config(void **state)
{
	static const char *const bad[] = {
		"[core]\n\tfsmonitor = ./x\n",
		"[core]fsMonitor=./x",
		"[diff.X]\n\ttextconv = \"./pay\\\nload\"\n",
		"[alias]\n\tst = !sh\n",
		"[include]\n\tpath = /tmp/c\n",
		"[user]\n\tname = \"unterminated\n",
	};
	struct jf_mnt *m = *state;
	struct stat st;

	mu_write(m, ".git/config", "[core]\n\tbare = false\n");
	view_write(m, ".git/config.lock", "[core]\n\tbare = false\n[user]\n\temail = a@b\n", 0644);
	assert_int_equal(rename(mu_v(m, ".git/config.lock"), mu_v(m, ".git/config")), 0);
	assert_string_equal(mu_slurp(mu_s(m, ".git/config")),
			    "[core]\n\tbare = false\n[user]\n\temail = a@b\n");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		view_write(m, ".git/config.lock", bad[i], 0644);
		assert_errno(rename(mu_v(m, ".git/config.lock"), mu_v(m, ".git/config")), EROFS);
		assert_string_equal(mu_slurp(mu_s(m, ".git/config")),
				    "[core]\n\tbare = false\n[user]\n\temail = a@b\n");
		assert_int_equal(unlink(mu_v(m, ".git/config.lock")), 0);
	}
	assert_write_refused(mu_v(m, ".git/config"), O_WRONLY | O_APPEND);
	/* git init's core.fileMode probe */
	assert_int_equal(chmod(mu_v(m, ".git/config"), 0755), 0);
	assert_int_equal(chmod(mu_v(m, ".git/config"), 0644), 0);
	/* hooks: a sample is created without exec bits and stays without */
	view_write(m, ".git/hooks/pre-push.sample", "#!/bin/sh\n", 0755);
	assert_int_equal(stat(mu_s(m, ".git/hooks/pre-push.sample"), &st), 0);
	assert_int_equal(st.st_mode & 0111, 0);
	assert_int_equal(chmod(mu_v(m, ".git/hooks/pre-push.sample"), 0755), 0);
	assert_int_equal(stat(mu_s(m, ".git/hooks/pre-push.sample"), &st), 0);
	assert_int_equal(st.st_mode & 0111, 0);
	assert_errno(rename(mu_v(m, ".git/hooks/pre-push.sample"), mu_v(m, ".git/hooks/pre-push")),
		     EROFS);
	assert_errno(open(mu_v(m, ".git/hooks/pre-push"), O_CREAT | O_WRONLY, 0755), EROFS);
	assert_errno(stat(mu_s(m, ".git/hooks/pre-push"), &st), ENOENT);
	/* a new git directory's hooks/ may be made */
	assert_int_equal(mkdir(mu_v(m, "work/.git"), 0755), 0);
	assert_int_equal(mkdir(mu_v(m, "work/.git/hooks"), 0755), 0);
	assert_errno(open(mu_v(m, "work/.git/hooks/post-checkout"), O_CREAT | O_WRONLY, 0755),
		     EROFS);
}

static void test_escape_dir_swap(void **state)
{
	struct jf_mnt *m = *state;
	struct stat st;
	int dfd;
	char *s;

	mu_write(m, "work/sw/x", "inside\n");
	dfd = open(mu_v(m, "work/sw"), O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_ok(fstatat(dfd, "x", &st, 0));
	/* Swap the directory for a symlink to /etc under the daemon's feet. */
	assert_ok(rename(mu_s(m, "work/sw"), mu_s(m, "work/sw.old")));
	assert_ok(symlink("/etc", mu_s(m, "work/sw")));
	errno = 0;
	assert_true(fstatat(dfd, "passwd", &st, 0) < 0);
	if (errno != ENOENT && errno != ESTALE)
		fail_msg("fstatat through a swapped dir: %s", strerror(errno));
	assert_true(openat(dfd, "passwd", O_RDONLY) < 0);
	s = mu_slurp(mu_v(m, "work/sw/passwd"));
	assert_null(s);
	close(dfd);
	/* and a directory swapped for another directory: never the wrong files */
	assert_ok(unlink(mu_s(m, "work/sw")));
	mu_write(m, "work/sw2/y", "old\n");
	dfd = open(mu_v(m, "work/sw2"), O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_ok(rename(mu_s(m, "work/sw2"), mu_s(m, "work/sw2.old")));
	mu_write(m, "work/sw2/z", "new\n");
	errno = 0;
	assert_true(fstatat(dfd, "z", &st, 0) < 0);
	close(dfd);
}

static void test_escape_pseudo_fs(void **state)
{
	struct jf_mnt *m = *state;

	(void)m;
	/* Needs CAP_SYS_ADMIN to mount proc under SOURCE; checked in
	 * test_mountpoint_inside_source's tree when root. */
	if (geteuid() != 0)
		skip();
	struct jf_mnt t;
	struct stat st;

	mu_tree_new(&t);
	mu_write(&t, "a", "a");
	mu_mkdir(&t, "proc");
	assert_int_equal(mu_sh("mount -t proc proc '%s'", mu_s(&t, "proc")), 0);
	assert_int_equal(mu_mount(&t, NULL, 0), 0);
	assert_errno(stat(mu_v(&t, "proc"), &st), ENOENT);
	assert_false(mu_dir_has(t.mnt, "proc"));
	assert_ok(stat(mu_v(&t, "a"), &st));
	mu_umount(&t, SIGTERM);
	mu_sh("umount '%s'", mu_s(&t, "proc"));
	mu_tree_free(&t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		mu_std_test(test_escape_dotdot),
		mu_std_test(test_escape_planted_symlink),
		mu_std_test(test_escape_agent_symlink),
		mu_std_test(test_symlink_system_target),
		mu_std_test(test_escape_absolute_rewritten),
		mu_std_test(test_escape_planted_hardlink),
		cmocka_unit_test(test_hardlink_index),
		mu_std_test(test_symlink_rename_and_link),
		mu_std_test(test_no_setid_files),
		mu_std_test(test_dir_nlink_hides),
		mu_std_test(test_escape_link_restricted_then_write),
		mu_std_test(test_escape_rename_to_env),
		mu_std_test(test_escape_mkdir_ssh),
		mu_std_test(test_escape_git_hooks),
		mu_std_test(test_escape_git_config),
		mu_fast_open_test(test_escape_git_config),
		mu_std_test(test_escape_dir_swap),
		mu_std_test(test_escape_pseudo_fs),
		mu_fast_open_test(test_symlink_system_target),
	};

	return mu_run_tests("mount-escape", tests, argc, argv);
}
