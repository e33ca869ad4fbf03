/* SPDX-License-Identifier: MIT */
/*
 * Mount suite, handles, fds and page cache with and without fast_open: the
 * daemon's fds stay bounded under create and unlink, bytes mapped into a
 * RESTRICTED running executable are never what the view serves, which mount
 * gets zero-message opens, and that they keep the page cache; a listing
 * leaves no LOOKUP for the names it gave.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

/*
 * In no_open mode (fast_open) the kernel sends no RELEASE for a file made
 * with CREATE once the first OPEN was answered ENOSYS; a handle kept for it
 * would leak an fd and, once the file is removed, its disk space (found by
 * the red team: a build creating 1,000 files ran the daemon out of fds).
 * Invariant 9: the daemon's fds stay bounded, with and without fast_open.
 */
static void test_create_fds_bounded(void **state)
{
	struct jf_mnt *m = *state;
	char rel[64];
	int fd, before, i;

	/* An open(2) first: in no_open mode that OPEN is the one answered ENOSYS. */
	fd = open(mu_v(m, "work/f"), O_RDONLY);
	assert_true(fd >= 0);
	close(fd);
	before = mu_count_fds(m->pid);
	for (i = 0; i < 200; i++) {
		snprintf(rel, sizeof(rel), "work/c%d", i);
		fd = open(mu_v(m, rel), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "x", 1), 1);
		close(fd);
		assert_ok(unlink(mu_v(m, rel)));
	}
	/* RELEASE and FORGET are asynchronous; 40 fds of slack for worker
	 * threads' splice pipes. */
	for (i = 0; i < 150 && mu_count_fds(m->pid) > before + 40; i++)
		usleep(20000);
	if (mu_count_fds(m->pid) > before + 40)
		fail_msg("daemon fds grew from %d to %d after 200 create+unlink", before,
			 mu_count_fds(m->pid));
}

/*
 * Child process with CAP_DAC_OVERRIDE over the view: root, or (as an
 * ordinary user) uid 0 of a user namespace of its own, which any user can
 * make with unshare -Ur, and where the file owner's uid is mapped. It opens
 * @path read-write (no OPEN reaches the daemon in no_open mode), writes
 * @bytes through a shared mapping and msyncs. Exit 0: the mapping was
 * written; 2: the open was refused (EACCES/EROFS); 3: anything else.
 */
static int poison_by_mmap(const char *path, const char *bytes)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		uid_t uid = getuid();
		gid_t gid = getgid();
		char map[64];
		int fd;
		char *p;

		if (geteuid() != 0 && unshare(CLONE_NEWUSER) == 0) {
			snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
			fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, map, strlen(map)) < 0)
				_exit(3);
			close(fd);
			fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
			if (fd >= 0 && write(fd, "deny", 4) < 0)
				_exit(3);
			if (fd >= 0)
				close(fd);
			snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
			fd = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, map, strlen(map)) < 0)
				_exit(3);
			close(fd);
		}
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(errno == EACCES || errno == EROFS ? 2 : 3);
		p = mmap(NULL, strlen(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			_exit(3);
		memcpy(p, bytes, strlen(bytes));
		(void)msync(p, strlen(bytes), MS_SYNC); /* EROFS, ETXTBSY... */
		munmap(p, strlen(bytes));
		close(fd);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 3);
	return WEXITSTATUS(status);
}

/*
 * RESTRICTED is read-only "in every way": bytes written into the page cache
 * of a RESTRICTED file through a shared mapping must not be what the view
 * serves. In no_open mode the kernel lets a caller with CAP_DAC_OVERRIDE
 * map it writable; the page is dropped afterwards only because the daemon's
 * open(O_WRONLY) of the backing file (before its zone check) ends in an
 * IN_CLOSE_WRITE that the watcher turns into an invalidation. When that open
 * fails (ETXTBSY: the RESTRICTED file is a running executable) the written
 * page stays, and an exec through the view runs it.
 */
static void test_restricted_mmap_busy(void **state)
{
	struct jf_mnt *m = *state;
	char head[4] = "";
	pid_t runner;
	int fd, r, status;

	assert_int_equal(mu_sh("cp /usr/bin/sleep '%s'", mu_s(m, "ro/busy")), 0);
	runner = fork();
	assert_true(runner >= 0);
	if (runner == 0) {
		execl(mu_s(m, "ro/busy"), "busy", "30", (char *)NULL);
		_exit(127);
	}
	usleep(200000); /* exec'd: the backing file is now write-denied */
	r = poison_by_mmap(mu_v(m, "ro/busy"), "EVIL");
	if (r == 0) {
		bool clean = EVENTUALLY(({
			fd = open(mu_v(m, "ro/busy"), O_RDONLY | O_CLOEXEC);
			head[0] = 0;
			if (fd >= 0) {
				(void)!read(fd, head, 4);
				close(fd);
			}
			memcmp(head, "\177ELF", 4) == 0;
		}));

		kill(runner, SIGKILL);
		waitpid(runner, &status, 0);
		if (!clean)
			fail_msg("the view serves \"%.4s\" for a RESTRICTED executable whose "
				 "disk bytes are \\177ELF",
				 head);
		return;
	}
	kill(runner, SIGKILL);
	waitpid(runner, &status, 0);
}

/*
 * OPEN requests a fresh mount with @extra (NULL-terminated) and, when
 * @audit_level is set, an audit log at that level, got for 5 open(2) and
 * read(2) of one file: at most 1 (the one answered ENOSYS) in no_open mode,
 * at least 5 otherwise.
 */
static uint64_t opens_with(const char *const *extra, const char *audit_level)
{
	char stats[400], audit[400], buf[4];
	const char *args[16] = {"--stats", stats};
	struct jf_mnt m;
	uint64_t n = 0;
	int a = 2, fd;

	mu_tree_new(&m);
	mu_write(&m, "f", "x\n");
	snprintf(stats, sizeof(stats), "%s/stats", m.dir);
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", m.dir);
	if (audit_level) {
		args[a++] = "--audit";
		args[a++] = audit;
		args[a++] = "--audit-level";
		args[a++] = audit_level;
	}
	for (; extra && *extra && a < 15; extra++)
		args[a++] = *extra;
	args[a] = NULL;
	assert_int_equal(mu_mount(&m, args, 0), 0);
	for (int i = 0; i < 5; i++) {
		fd = open(mu_v(&m, "f"), O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(read(fd, buf, sizeof(buf)), 2);
		close(fd);
	}
	assert_int_equal(mu_requests(m.pid, stats, "OPEN", &n), 0);
	mu_tree_free(&m);
	return n;
}

#define NO_OPEN(n) ((n) <= 1)

/*
 * Which mount gets zero-message opens (jailfs(1), "Zero-message opens"):
 * read-only views, and every mount without allow_other, root's too; a mount
 * with allow_other keeps OPEN (passthrough as root); -o nofast_open opts
 * out; the audit level that records opens (writes) turns it off, a log of
 * refusals (denied) and level all do not.
 */
static void test_default_open_mode(void **state)
{
	const char *ro[] = {"--read-only", NULL};
	const char *ro_plain[] = {"--read-only", "-o", "nofast_open", NULL};
	const char *plain[] = {"-o", "nofast_open", NULL};
	const char *fast[] = {"-o", "fast_open", NULL};
	const char *other[] = {"-o", "allow_other", NULL};

	(void)state;
	assert_true(NO_OPEN(opens_with(ro, NULL)));
	assert_true(NO_OPEN(opens_with(ro, "denied")));
	assert_false(NO_OPEN(opens_with(ro, "writes")));
	assert_false(NO_OPEN(opens_with(ro_plain, NULL)));
	assert_false(NO_OPEN(opens_with(plain, NULL)));
	assert_true(NO_OPEN(opens_with(fast, "denied")));
	assert_false(NO_OPEN(opens_with(fast, "writes")));
	assert_true(NO_OPEN(opens_with(fast, "all")));
	assert_true(NO_OPEN(opens_with(ro, "all")));
	assert_true(NO_OPEN(opens_with(NULL, NULL)));
	assert_true(NO_OPEN(opens_with(NULL, "denied")));
	assert_false(NO_OPEN(opens_with(NULL, "writes")));
	/* an ordinary user may pass allow_other only where fuse.conf says so */
	if (geteuid() == 0 || mu_sh("grep -qx user_allow_other /etc/fuse.conf") == 0) {
		assert_false(NO_OPEN(opens_with(other, NULL)));
		assert_false(NO_OPEN(opens_with(other, "denied")));
	}
}

/*
 * A policy under which no name can be SAFE (no [safe] rule, a default that
 * is not safe: mnt-examples/share.ini) makes a view nothing can write, which
 * gets zero-message opens as a --read-only view does, root's default mount
 * included; -o nofast_open and an audit level that records opens still
 * turn it off, and with one SAFE rule a mount other users may enter sees
 * opens again (OPEN, for passthrough).
 */
static void test_read_only_policy_open_mode(void **state)
{
	char share[PATH_MAX], ro[] = "/tmp/jf-handles-ro-XXXXXX.ini",
			      rw[] = "/tmp/jf-handles-rw-XXXXXX.ini";
	const char *src = getenv("JF_SRCDIR");
	const char *with_share[] = {"--policy", share, NULL};
	const char *with_ro[] = {"--policy", ro, NULL};
	const char *with_ro_plain[] = {"--policy", ro, "-o", "nofast_open", NULL};
	const char *with_rw[] = {"--policy", rw, "-o", "allow_other", NULL};
	int fd;

	(void)state;
	assert_non_null(src);
	snprintf(share, sizeof(share), "%s/mnt-examples/share.ini", src);
	fd = mkstemps(ro, 4);
	assert_true(fd >= 0);
	assert_true(dprintf(fd, "[restricted]\n/\n[denied]\n*.log\n[options]\n"
				"default = denied\n") > 0);
	close(fd);
	fd = mkstemps(rw, 4);
	assert_true(fd >= 0);
	assert_true(dprintf(fd, "[safe]\nsrc/\n[restricted]\n/\n[options]\n"
				"default = restricted\n") > 0);
	close(fd);
	assert_true(NO_OPEN(opens_with(with_share, NULL)));
	assert_true(NO_OPEN(opens_with(with_share, "denied")));
	assert_true(NO_OPEN(opens_with(with_share, "all")));
	assert_false(NO_OPEN(opens_with(with_share, "writes")));
	assert_true(NO_OPEN(opens_with(with_ro, NULL)));
	assert_false(NO_OPEN(opens_with(with_ro_plain, NULL)));
	if (geteuid() == 0 || mu_sh("grep -qx user_allow_other /etc/fuse.conf") == 0)
		assert_false(NO_OPEN(opens_with(with_rw, NULL)));
	unlink(ro);
	unlink(rw);
}

/*
 * In no_open mode the kernel keeps a file's page cache across opens
 * (FOPEN_KEEP_CACHE is its default without an OPEN reply): a second read of
 * an unchanged file costs no READ request.
 */
static void test_fast_open_keeps_cache(void **state)
{
	const char *args[] = {"--stats", NULL, "-o", "fast_open", NULL};
	size_t size = 4 << 20;
	char *buf = malloc(size + 1), stats[400];
	uint64_t first, second;
	struct jf_mnt m;
	int fd;

	(void)state;
	assert_non_null(buf);
	mu_tree_new(&m);
	memset(buf, 'c', size);
	buf[size] = '\0';
	mu_write(&m, "f", buf);
	snprintf(stats, sizeof(stats), "%s/stats", m.dir);
	args[1] = stats;
	assert_int_equal(mu_mount(&m, args, 0), 0);
	for (int i = 0; i < 2; i++) {
		fd = open(mu_v(&m, "f"), O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(read(fd, buf, size + 1), (ssize_t)size);
		close(fd);
		assert_int_equal(mu_requests(m.pid, stats, "READ", i ? &second : &first), 0);
	}
	assert_true(first > 0);
	assert_int_equal(second, first);
	free(buf);
	mu_tree_free(&m);
}

/*
 * A held fd on a file shown for its public content never reads what the
 * host writes into it later (jailfs(1), "Content-dependent zones"): a
 * certificate that becomes a private key answers ENOENT at the next read,
 * also on root's default mount, where write opens and large files are FUSE
 * passthrough handles whose reads never reach the daemon. Both kinds: a CA
 * bundle of 2 MiB opened read-only, a small certificate opened read-write.
 */
static void test_content_zone_not_passed(void **state)
{
	static const char block[] = "-----BEGIN CERTIFICATE-----\n"
				    "MIIBszCCAVmgAwIBAgIUJ2n3dGVzdGNlcnRpZmljYXRlMAoGCCqGSM49BAMC\n"
				    "-----END CERTIFICATE-----\n";
	static const char key[] = "-----BEGIN PRIVATE KEY-----\n"
				  "KEYBYTESKEYBYTESKEYBYTESKEYBYTES\n"
				  "-----END PRIVATE KEY-----\n";
	const char *const names[] = {"bundle.pem", "server.pem"};
	const int flags[] = {O_RDONLY, O_RDWR};
	size_t n = 2 << 20;
	char *bundle = malloc(n + 1), buf[256];
	uint64_t passed = 0;
	char stats[400];
	const char *args[] = {"--stats", stats, NULL};
	struct jf_mnt m;
	int fd[2];

	(void)state;
	assert_non_null(bundle);
	for (size_t i = 0; i + sizeof(block) - 1 <= n; i += sizeof(block) - 1)
		memcpy(bundle + i, block, sizeof(block) - 1);
	bundle[n - n % (sizeof(block) - 1)] = '\0';
	mu_tree_new(&m);
	mu_write(&m, names[0], bundle);
	mu_write(&m, names[1], block);
	free(bundle);
	snprintf(stats, sizeof(stats), "%s/stats", m.dir);
	assert_int_equal(mu_mount(&m, args, 0), 0);
	for (int i = 0; i < 2; i++) {
		fd[i] = open(mu_v(&m, names[i]), flags[i] | O_CLOEXEC);
		assert_true(fd[i] >= 0);
		assert_int_equal(pread(fd[i], buf, 27, 0), 27);
		assert_memory_equal(buf, block, 27);
		mu_write(&m, names[i], key); /* the host, in place: same inode */
	}
	for (int i = 0; i < 2; i++) {
		ssize_t r = 0;
		bool hidden = EVENTUALLY(({
			memset(buf, 0, sizeof(buf));
			(void)posix_fadvise(fd[i], 0, 0, POSIX_FADV_DONTNEED);
			r = pread(fd[i], buf, sizeof(buf) - 1, 0);
			if (r > 0 && strstr(buf, "KEYBYTES"))
				fail_msg("%s: a held fd read the private key the host wrote",
					 names[i]);
			r < 0 && errno == ENOENT;
		}));

		if (!hidden)
			fail_msg("%s: the held fd still reads (%zd bytes, not ENOENT)", names[i],
				 r);
		close(fd[i]);
	}
	assert_int_equal(mu_requests(m.pid, stats, "passthrough_opens", &passed), 0);
	assert_int_equal(passed, 0);
	mu_tree_free(&m);
}

/*
 * Every listing is a READDIRPLUS, not only a directory's first reply (the
 * kernel's readdirplus_auto): after one listing of a directory too large
 * for one reply, stat(2) of each name it gave costs no LOOKUP and no
 * GETATTR. In auto mode the names past the first reply each cost a LOOKUP
 * on a new view (rg and find on a fresh jailrun view). Both open modes.
 */
static void test_listing_leaves_no_lookup(void **state)
{
	enum { N = 3000 };
	const char *args[] = {"--stats", NULL, NULL, NULL, NULL};
	char stats[400], name[128];
	uint64_t before[2], after[2];
	struct jf_mnt m;

	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		struct dirent *de;
		unsigned seen = 0;
		DIR *d;

		mu_tree_new(&m);
		mu_mkdir(&m, "big");
		for (int i = 0; i < N; i++) {
			snprintf(name, sizeof(name), "%s/a-name-long-enough-to-fill-replies-%04d.c",
				 mu_s(&m, "big"), i);
			int fd = open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

			assert_true(fd >= 0);
			close(fd);
		}
		snprintf(stats, sizeof(stats), "%s/stats", m.dir);
		args[1] = stats;
		args[2] = mode ? "-o" : NULL;
		args[3] = mode ? "fast_open" : NULL;
		assert_int_equal(mu_mount(&m, args, 0), 0);
		d = opendir(mu_v(&m, "big"));
		assert_non_null(d);
		while ((de = readdir(d)))
			seen++;
		assert_int_equal(seen, N + 2);
		assert_int_equal(mu_requests(m.pid, stats, "LOOKUP", &before[0]), 0);
		assert_int_equal(mu_requests(m.pid, stats, "GETATTR", &before[1]), 0);
		rewinddir(d);
		while ((de = readdir(d))) {
			struct stat st;

			assert_int_equal(fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW),
					 0);
		}
		closedir(d);
		assert_int_equal(mu_requests(m.pid, stats, "LOOKUP", &after[0]), 0);
		assert_int_equal(mu_requests(m.pid, stats, "GETATTR", &after[1]), 0);
		print_message("mode %d: %llu LOOKUP, %llu GETATTR after the listing\n", mode,
			      (unsigned long long)(after[0] - before[0]),
			      (unsigned long long)(after[1] - before[1]));
		assert_int_equal(after[0] - before[0], 0);
		assert_true(after[1] - before[1] <= 2); /* "." and ".." at most */
		mu_tree_free(&m);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		mu_std_test(test_create_fds_bounded),
		mu_std_test(test_restricted_mmap_busy),
		mu_fast_open_test(test_create_fds_bounded),
		mu_fast_open_test(test_restricted_mmap_busy),
		cmocka_unit_test(test_default_open_mode),
		cmocka_unit_test(test_read_only_policy_open_mode),
		cmocka_unit_test(test_fast_open_keeps_cache),
		cmocka_unit_test(test_content_zone_not_passed),
		cmocka_unit_test(test_listing_leaves_no_lookup),
	};

	return mu_run_tests("mount-handles", tests, argc, argv);
}
