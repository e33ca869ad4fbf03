/* SPDX-License-Identifier: MIT */
/*
 * Side channels of the view: what a program in it can learn about hidden
 * names without seeing them. A real jailfs daemon on real trees (a tmpfs
 * SOURCE and one on the disk under $JF_MOUNT_TMPDIR or /tmp), in each way
 * the view is mounted: defaults (no OPENDIR, kernel-cached listings),
 * -o fast_open (zero-message opens), --audit-level all (every listing and
 * lookup reaches the daemon), zero cache timeouts, and the overlay mode
 * (--changes DIR: the backing tree is an overlayfs over SOURCE).
 *  - directory offsets, sizes and link counts of a directory with hidden
 *    entries interleaved equal those of one with only its visible names;
 *    seekdir to every telldir position returns the right next entry, also
 *    on a fresh handle the daemon has never listed;
 *  - the same after deletions, renames and a replaced directory made through
 *    the view in both (whiteouts and an opaque directory in overlay mode,
 *    where no whiteout ever names a hidden entry);
 *  - a lookup of a DENIED name makes no backing syscall naming it (strace of
 *    the daemon), so it cannot take longer when the name exists;
 *  - creating a name a hidden object holds answers EACCES whatever the object
 *    (never EISDIR), and nothing on disk changes;
 *  - names with C1 controls or bidi overrides cannot be made through the
 *    view, host files with them are hidden, and --audit-report escapes them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mount-util.h"

static const char policy_ini[] = "[safe]\n"
				 "/\n"
				 "[denied]\n"
				 "*.secret\n"
				 "[options]\n"
				 "profiles = secrets, project\n";

/* How the view is mounted (besides --policy and, with @audit, --audit). */
struct mode {
	const char *name;
	const char *args[4];
	bool audit;
	bool overlay; /* --changes DIR (side.changes) */
};

static const struct mode modes[] = {
	{"defaults", {NULL}, false},
	{"fast_open", {"-o", "fast_open", NULL}, false},
	{"audit-all", {"--audit-level", "all", NULL}, true},
	{"no-cache", {"-o", "entry_timeout=0,attr_timeout=0,negative_timeout=0", NULL}, false},
	{"overlay", {NULL}, false, true},
};

struct side {
	struct jf_mnt m;
	const struct mode *mode;
	bool tmpfs; /* SOURCE is a tmpfs mounted for the test */
	char policy[400], audit[400];
	char changes[300]; /* the overlay's DIR, beside SOURCE */
};

/* The test's tree: static, so the teardown finds it after a failed assert. */
static struct side S;

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/* A new tree (SOURCE on tmpfs when asked) and the policy file beside it. */
static void side_tree(struct side *s, const struct mode *mode, bool tmpfs)
{
	FILE *f;

	memset(s, 0, sizeof(*s));
	s->mode = mode;
	mu_tree_new(&s->m);
	if (tmpfs) {
		if (mount("tmpfs", s->m.src, "tmpfs", 0, "size=64m,mode=0755") < 0)
			fail_msg("mount tmpfs on %s: %s (the test runs as root)", s->m.src,
				 strerror(errno));
		s->tmpfs = true;
	}
	snprintf(s->policy, sizeof(s->policy), "%s/policy.ini", s->m.dir);
	snprintf(s->audit, sizeof(s->audit), "%s/audit.jsonl", s->m.dir);
	snprintf(s->changes, sizeof(s->changes), "%s/changes", s->m.dir);
	f = fopen(s->policy, "we");
	assert_non_null(f);
	fputs(policy_ini, f);
	fclose(f);
}

static void side_mount(struct side *s)
{
	const char *args[12];
	int n = 0;

	args[n++] = "--policy";
	args[n++] = s->policy;
	if (s->mode->audit) {
		args[n++] = "--audit";
		args[n++] = s->audit;
	}
	if (s->mode->overlay) {
		args[n++] = "--changes";
		args[n++] = s->changes;
	}
	for (int i = 0; s->mode->args[i]; i++)
		args[n++] = s->mode->args[i];
	args[n] = NULL;
	assert_int_equal(mu_mount(&s->m, args, 0), 0);
	/* the start-up hard-link index runs in the background: let it end */
	sleep_ms(200);
}

/* Unmount everything the test mounted (the view, a proc below SOURCE, the
 * tmpfs SOURCE) and remove the tree. */
static void side_free(struct side *s)
{
	if (!s->m.dir[0])
		return;
	if (s->m.mounted)
		mu_umount(&s->m, SIGTERM);
	if (mu_is_mounted(mu_s(&s->m, "proc"), "proc") && umount2(mu_s(&s->m, "proc"), 0) < 0)
		fail_msg("umount %s: %s", mu_s(&s->m, "proc"), strerror(errno));
	if (s->tmpfs && umount2(s->m.src, 0) < 0)
		fail_msg("umount %s: %s", s->m.src, strerror(errno));
	mu_tree_free(&s->m);
}

static int teardown(void **state)
{
	(void)state;
	side_free(&S);
	return 0;
}

/* DIR/upper/@rel of the overlay mode, in a static buffer. */
static const char *upper(const struct side *s, const char *rel)
{
	static char p[1024];

	snprintf(p, sizeof(p), "%s/upper/%s", s->changes, rel);
	return p;
}

static void touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

	if (fd < 0)
		fail_msg("create %s: %s", path, strerror(errno));
	close(fd);
}

/* ---------- directory offsets and sizes ---------- */

#define N_VISIBLE 600 /* enough names for an htree (hash-ordered) ext4 directory */
#define MAX_ENTRIES 1000

struct listing {
	size_t n;
	char names[MAX_ENTRIES][24];
	int64_t off[MAX_ENTRIES];
};

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* Every entry from @fd's position on with getdents64 and a @bufsize buffer
 * (small: the kernel then asks again from each returned offset). */
static void read_entries(int fd, struct listing *l, size_t bufsize)
{
	char buf[8192];

	l->n = 0;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, bufsize);

		if (n < 0)
			fail_msg("getdents64: %s", strerror(errno));
		if (n == 0)
			return;
		for (long i = 0; i < n;) {
			struct linux_dirent64 *de = (struct linux_dirent64 *)(buf + i);

			assert_true(l->n < MAX_ENTRIES);
			snprintf(l->names[l->n], sizeof(l->names[0]), "%s", de->d_name);
			l->off[l->n++] = de->d_off;
			i += de->d_reclen;
		}
	}
}

static void list_dir(const char *path, struct listing *l, size_t bufsize)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	read_entries(fd, l, bufsize);
	close(fd);
}

/*
 * SOURCE/clean: N_VISIBLE files and a few directories. SOURCE/mix: the same
 * names created in the same order, with hidden entries between them: DENIED
 * files and directories, symlinks out of the view, names the view refuses.
 */
static void make_dirs(const struct jf_mnt *m)
{
	char p[512];

	mu_mkdir(m, "clean");
	mu_mkdir(m, "mix");
	for (int i = 0; i < N_VISIBLE; i++) {
		for (int d = 0; d < 2; d++) {
			const char *dir = d ? "mix" : "clean";

			snprintf(p, sizeof(p), "%s/v%04d", mu_s(m, dir), i);
			touch(p);
			if (i % 50 == 0) {
				snprintf(p, sizeof(p), "%s/s%04d", mu_s(m, dir), i);
				assert_int_equal(mkdir(p, 0755), 0);
			}
		}
		snprintf(p, sizeof(p), "%s/h%04d.secret", mu_s(m, "mix"), i);
		touch(p);
		if (i % 10 == 0) {
			snprintf(p, sizeof(p), "%s/l%04d", mu_s(m, "mix"), i);
			assert_int_equal(symlink("/etc/passwd", p), 0);
		}
		if (i % 20 == 0) {
			snprintf(p, sizeof(p), "%s/d%04d.secret", mu_s(m, "mix"), i);
			assert_int_equal(mkdir(p, 0755), 0);
		}
		if (i % 30 == 0) {
			snprintf(p, sizeof(p), "%s/c%04d\x1b[2J", mu_s(m, "mix"), i);
			touch(p);
			snprintf(p, sizeof(p), "%s/b%04d\xe2\x80\xae", mu_s(m, "mix"), i);
			touch(p);
		}
	}
}

/* lseek to view offset @k on a fresh handle: the next entry is clean's k-th. */
static void check_seek_fresh(const char *dir, const struct listing *want, size_t k)
{
	struct listing got;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, (off_t)k, SEEK_SET), (off_t)k);
	read_entries(fd, &got, 4096);
	close(fd);
	if (k >= want->n) {
		assert_int_equal(got.n, 0);
		return;
	}
	if (got.n != want->n - k || strcmp(got.names[0], want->names[k]) != 0 ||
	    got.off[0] != (int64_t)k + 1)
		fail_msg("seek to %zu: %zu entries from '%s' (d_off %lld), want %zu from '%s'", k,
			 got.n, got.n ? got.names[0] : "", got.n ? (long long)got.off[0] : -1LL,
			 want->n - k, want->names[k]);
}

/* seekdir(3) to every telldir(3) position of one handle, backwards. */
static void check_telldir(const char *dir, const struct listing *want)
{
	static long pos[MAX_ENTRIES];
	DIR *dp = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(dp);
	for (;;) {
		long t = telldir(dp);

		if (!(de = readdir(dp)))
			break;
		assert_true(n < want->n);
		assert_string_equal(de->d_name, want->names[n]);
		pos[n++] = t;
	}
	assert_int_equal(n, want->n);
	for (size_t i = n; i-- > 0;) {
		seekdir(dp, pos[i]);
		de = readdir(dp);
		assert_non_null(de);
		if (strcmp(de->d_name, want->names[i]) != 0)
			fail_msg("seekdir(%ld): '%s', want '%s'", pos[i], de->d_name,
				 want->names[i]);
	}
	closedir(dp);
}

static void dir_offsets(const struct mode *mode, bool tmpfs)
{
	struct side *s = &S;
	struct listing *clean = calloc(1, sizeof(*clean)), *mix = calloc(1, sizeof(*mix));
	struct stat cst, mst;
	struct statfs sfs;

	assert_true(clean && mix);
	side_tree(s, mode, tmpfs);
	assert_int_equal(statfs(s->m.src, &sfs), 0);
	print_message("SOURCE %s: f_type 0x%lx, mode %s\n", s->m.src, (unsigned long)sfs.f_type,
		      mode->name);
	make_dirs(&s->m);
	side_mount(s);

	/* Offsets are the view's own: 1, 2, 3 ... over the visible entries. */
	list_dir(mu_v(&s->m, "clean"), clean, 1024);
	assert_int_equal(clean->n, N_VISIBLE + N_VISIBLE / 50 + 2);
	for (size_t i = 0; i < clean->n; i++)
		if (clean->off[i] != (int64_t)i + 1)
			fail_msg("clean: entry %zu '%s' has d_off %lld, want %zu", i,
				 clean->names[i], (long long)clean->off[i], i + 1);

	/* Fresh handles seeking in a directory nothing has listed yet: the
	 * daemon finds the position by counting visible entries. */
	for (size_t k = 0; k <= clean->n + 1; k += k < 40 ? 7 : 97)
		check_seek_fresh(mu_v(&s->m, "mix"), clean, k);
	check_seek_fresh(mu_v(&s->m, "mix"), clean, clean->n - 1);
	check_seek_fresh(mu_v(&s->m, "mix"), clean, clean->n);

	/* The whole listing: the same names in the same order, the same offsets. */
	list_dir(mu_v(&s->m, "mix"), mix, 1024);
	assert_int_equal(mix->n, clean->n);
	for (size_t i = 0; i < mix->n; i++) {
		assert_string_equal(mix->names[i], clean->names[i]);
		assert_int_equal(mix->off[i], clean->off[i]);
	}
	/* Same with a buffer the size of the kernel's requests, and readdir(3). */
	list_dir(mu_v(&s->m, "mix"), mix, 4096);
	assert_int_equal(mix->n, clean->n);
	assert_int_equal(mix->off[mix->n - 1], (int64_t)clean->n);
	check_telldir(mu_v(&s->m, "mix"), clean);
	check_telldir(mu_v(&s->m, "clean"), clean);

	/* Size, blocks and link count do not count hidden entries. */
	assert_int_equal(stat(mu_v(&s->m, "clean"), &cst), 0);
	assert_int_equal(stat(mu_v(&s->m, "mix"), &mst), 0);
	assert_int_equal(mst.st_size, cst.st_size);
	assert_int_equal(mst.st_blocks, cst.st_blocks);
	assert_int_equal(mst.st_nlink, 1);
	assert_int_equal(cst.st_nlink, 1);
	assert_int_equal(mst.st_size, 4096);
	/* the backing ones do differ: the check above means something */
	assert_int_equal(stat(mu_s(&s->m, "clean"), &cst), 0);
	assert_int_equal(stat(mu_s(&s->m, "mix"), &mst), 0);
	assert_true(mst.st_size != cst.st_size || mst.st_nlink != cst.st_nlink);
	side_free(s);
	free(clean);
	free(mix);
}

static void test_dir_offsets_tmpfs(void **state)
{
	dir_offsets(*state, true);
}

static void test_dir_offsets_disk(void **state)
{
	dir_offsets(*state, false);
}

/* ---------- whiteouts and opaque directories ---------- */

/* Through the view, the same in clean/ and mix/: deletions, renames, a
 * directory removed and made again, a deleted name created again. */
static void change_twins(const struct jf_mnt *m)
{
	char a[512], b[600];

	for (int d = 0; d < 2; d++) {
		const char *dir = d ? "mix" : "clean";

		for (int i = 1; i < 200; i += 2) {
			snprintf(a, sizeof(a), "%s/v%04d", mu_v(m, dir), i);
			if (unlink(a) < 0)
				fail_msg("unlink %s: %s", a, strerror(errno));
		}
		snprintf(a, sizeof(a), "%s/v0300", mu_v(m, dir));
		snprintf(b, sizeof(b), "%s/r0300", mu_v(m, dir));
		assert_int_equal(rename(a, b), 0);
		snprintf(a, sizeof(a), "%s/s0050", mu_v(m, dir));
		assert_int_equal(rmdir(a), 0);
		assert_int_equal(mkdir(a, 0755), 0);
		snprintf(b, sizeof(b), "%s/y", a);
		touch(b);
		snprintf(a, sizeof(a), "%s/v0001", mu_v(m, dir));
		touch(a);
	}
}

/* overlay: upper/mix has the whiteouts and the opaque directory the
 * changes made, and no entry at a name the view hides. */
static void check_upper(const struct side *s)
{
	char v[8];
	struct stat st;

	assert_int_equal(lstat(upper(s, "mix/v0003"), &st), 0);
	assert_true(S_ISCHR(st.st_mode) && st.st_rdev == 0);
	assert_int_equal(lstat(upper(s, "mix/v0300"), &st), 0);
	assert_true(S_ISCHR(st.st_mode) && st.st_rdev == 0);
	assert_int_equal(lgetxattr(upper(s, "mix/s0050"), "user.overlay.opaque", v, sizeof(v)), 1);
	assert_int_equal(v[0], 'y');
	assert_errno(lgetxattr(upper(s, "mix"), "user.overlay.opaque", v, sizeof(v)), ENODATA);
	assert_int_equal(mu_sh("cd '%s' && test -z \"$(find . -name '*.secret' -o -name 'l*' -o "
			       "-name 'c*' -o -name 'b*')\"",
			       upper(s, "mix")),
			 0);
}

/*
 * After the same changes through the view in clean/ and mix/ (in overlay
 * mode: whiteouts, an opaque directory), mix/ still lists, seeks and
 * stats as clean/ does: neither tells anything about the hidden names.
 */
static void test_whiteouts_tell_nothing(void **state)
{
	const struct mode *mode = *state;
	struct side *s = &S;
	struct listing *clean = calloc(1, sizeof(*clean)), *mix = calloc(1, sizeof(*mix));
	struct stat cst, mst;

	assert_true(clean && mix);
	side_tree(s, mode, false);
	make_dirs(&s->m);
	side_mount(s);
	change_twins(&s->m);
	if (mode->overlay)
		check_upper(s);
	list_dir(mu_v(&s->m, "clean"), clean, 1024);
	/* 600 files less 99 deleted (100, one made again), 12 directories, . and .. */
	assert_int_equal(clean->n, N_VISIBLE - 99 + N_VISIBLE / 50 + 2);
	list_dir(mu_v(&s->m, "mix"), mix, 1024);
	assert_int_equal(mix->n, clean->n);
	for (size_t i = 0; i < mix->n; i++) {
		assert_string_equal(mix->names[i], clean->names[i]);
		assert_int_equal(mix->off[i], clean->off[i]);
	}
	for (size_t k = 0; k <= clean->n; k += 53)
		check_seek_fresh(mu_v(&s->m, "mix"), clean, k);
	check_telldir(mu_v(&s->m, "mix"), clean);
	assert_int_equal(stat(mu_v(&s->m, "clean"), &cst), 0);
	assert_int_equal(stat(mu_v(&s->m, "mix"), &mst), 0);
	assert_int_equal(mst.st_size, cst.st_size);
	assert_int_equal(mst.st_blocks, cst.st_blocks);
	assert_int_equal(mst.st_nlink, cst.st_nlink);
	/* the replaced directory holds only what the view made */
	list_dir(mu_v(&s->m, "mix/s0050"), mix, 4096);
	assert_int_equal(mix->n, 3);
	side_free(s);
	free(clean);
	free(mix);
}

/* ---------- DENIED lookups touch nothing in the backing tree ---------- */

static bool file_has(const char *path, const char *needle)
{
	FILE *f = fopen(path, "re");
	char line[8192];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

/* stat absent names @prefix-N through the view until strace's log shows the
 * daemon looking one up (a new name each time: absent names are cached). */
static void wait_traced(const struct side *s, const char *log, const char *prefix)
{
	struct stat st;
	char name[64];

	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "%s-%d", prefix, i);
		assert_errno(stat(mu_v(&s->m, name), &st), ENOENT);
		sleep_ms(10);
		if (file_has(log, prefix))
			return;
	}
	fail_msg("strace never showed the daemon looking up %s-N", prefix);
}

static void test_denied_lookup_no_backing(void **state)
{
	const struct mode *mode = *state;
	static const char *const denied[] = {
		".env",		 "sub/id_rsa",	   "sub/x.secret",
		"absent.secret", "sub/.env.local", "dir.secret",
	};
	struct side *s = &S;
	char log[PATH_MAX], pid[16];
	pid_t tracer;
	int status;

	side_tree(s, mode, false);
	mu_write(&s->m, ".env", "TOKEN=1\n");
	mu_write(&s->m, "sub/id_rsa", "key\n");
	mu_write(&s->m, "sub/x.secret", "s\n");
	mu_write(&s->m, "visible.txt", "v\n");
	mu_mkdir(&s->m, "dir.secret");
	side_mount(s);
	snprintf(log, sizeof(log), "%s/strace.log", s->m.dir);
	snprintf(pid, sizeof(pid), "%d", (int)s->m.pid);
	tracer = fork();
	assert_true(tracer >= 0);
	if (tracer == 0) {
		execlp("strace", "strace", "-f", "-qq", "-s", "512", "-e", "trace=%file", "-o", log,
		       "-p", pid, (char *)NULL);
		_exit(127);
	}
	wait_traced(s, log, "marker-start");
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
			struct stat st;

			assert_errno(stat(mu_v(&s->m, denied[i]), &st), ENOENT);
			assert_errno(open(mu_v(&s->m, denied[i]), O_RDONLY), ENOENT);
		}
	}
	wait_traced(s, log, "marker-end");
	kill(tracer, SIGINT);
	assert_int_equal(waitpid(tracer, &status, 0), tracer);
	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		const char *base =
			strrchr(denied[i], '/') ? strrchr(denied[i], '/') + 1 : denied[i];

		if (file_has(log, base)) {
			mu_sh("grep -F -- '%s' '%s' >&2", base, log);
			fail_msg("the daemon made a backing syscall naming %s", base);
		}
	}
	side_free(s);
}

/* ---------- creating a name a hidden object holds ---------- */

static void test_create_over_hidden(void **state)
{
	const struct mode *mode = *state;
	struct side *s = &S;
	struct stat st;
	char target[64];
	uint64_t before;
	int fd;

	side_tree(s, mode, false);
	mu_write(&s->m, ".env", "TOKEN=secret\n");
	mu_write(&s->m, "a.txt", "a\n");
	assert_int_equal(link(mu_s(&s->m, ".env"), mu_s(&s->m, "notes.txt")), 0);
	mu_symlink(&s->m, "/etc/passwd", "out");
	mu_mkdir(&s->m, "proc");
	if (mount("proc", mu_s(&s->m, "proc"), "proc", 0, NULL) < 0)
		fail_msg("mount proc: %s (the test runs as root)", strerror(errno));
	side_mount(s);
	before = mu_tree_sum(&s->m, "proc");

	/* every name is hidden; in overlay mode the overlay does not cross the
	 * proc mount: its directory shows, empty (jailfs(1), OVERLAY MODE) */
	assert_errno(stat(mu_v(&s->m, "notes.txt"), &st), ENOENT);
	assert_errno(stat(mu_v(&s->m, "out"), &st), ENOENT);
	if (mode->overlay) {
		assert_int_equal(stat(mu_v(&s->m, "proc"), &st), 0);
		assert_true(S_ISDIR(st.st_mode));
		assert_int_equal(mu_sh("test -z \"$(ls -A '%s')\"", mu_v(&s->m, "proc")), 0);
		assert_errno(mkdir(mu_v(&s->m, "proc"), 0755), EEXIST);
	} else {
		assert_errno(stat(mu_v(&s->m, "proc"), &st), ENOENT);
	}
	/* creating over them answers EACCES, whatever the object and the flags */
	static const char *const names[] = {"notes.txt", "out", "proc"};
	const size_t nnames = mode->overlay ? 2 : 3;
	static const int flags[] = {O_WRONLY | O_CREAT, O_WRONLY | O_CREAT | O_TRUNC,
				    O_RDWR | O_CREAT, O_RDONLY | O_CREAT,
				    O_WRONLY | O_CREAT | O_EXCL};

	for (size_t i = 0; i < nnames; i++) {
		for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
			errno = 0;
			fd = open(mu_v(&s->m, names[i]), flags[f] | O_CLOEXEC, 0644);
			if (fd >= 0 || errno != EACCES)
				fail_msg("open(%s, 0%o): fd %d errno %s, want EACCES", names[i],
					 flags[f], fd, strerror(errno));
		}
		assert_errno(mkdir(mu_v(&s->m, names[i]), 0755), EACCES);
		assert_errno(symlink("a.txt", mu_v(&s->m, names[i])), EACCES);
		assert_errno(mknod(mu_v(&s->m, names[i]), S_IFIFO | 0644, 0), EACCES);
		assert_errno(link(mu_v(&s->m, "a.txt"), mu_v(&s->m, names[i])), EACCES);
	}
	/* nothing on disk moved: the secret, the link, the symlink's target */
	assert_int_equal(mu_tree_sum(&s->m, "proc"), before);
	assert_int_equal(lstat(mu_s(&s->m, "notes.txt"), &st), 0);
	assert_int_equal(st.st_nlink, 2);
	assert_int_equal(st.st_size, 13);
	assert_int_equal(readlink(mu_s(&s->m, "out"), target, sizeof(target)), 11);
	if (mode->overlay) {
		assert_errno(lstat(upper(s, "notes.txt"), &st), ENOENT);
		assert_errno(lstat(upper(s, "out"), &st), ENOENT);
	}
	/* the oracle that stays (README, security model): a free name works */
	fd = open(mu_v(&s->m, "free.txt"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	side_free(s); /* proc first, then rm -rf */
}

/* ---------- names with C1 controls and bidi overrides ---------- */

static void test_c1_bidi_names(void **state)
{
	const struct mode *mode = *state;
	static const char *const bad[] = {
		"csi\xc2\x9b"
		"2J",
		"txt\xe2\x80\xae"
		"exe.sh",
		"iso\xe2\x81\xa6x",
	};
	char cmd[2048], out[8192];
	struct side *s = &S;
	struct stat st;
	FILE *p;
	size_t n;

	side_tree(s, mode, false);
	mu_mkdir(&s->m, "w");
	touch(mu_s(&s->m, "w/ok.txt"));
	touch(mu_s(&s->m, "w/host\xc2\x9d"
			  "0;title\xc2\x9c"));
	side_mount(s);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char v[512];

		snprintf(v, sizeof(v), "w/%s", bad[i]);
		assert_errno(open(mu_v(&s->m, v), O_WRONLY | O_CREAT | O_CLOEXEC, 0644), EACCES);
		assert_errno(mkdir(mu_v(&s->m, v), 0755), EACCES);
		assert_errno(symlink("ok.txt", mu_v(&s->m, v)), EACCES);
		assert_errno(link(mu_v(&s->m, "w/ok.txt"), mu_v(&s->m, v)), EACCES);
		assert_errno(rename(mu_v(&s->m, "w/ok.txt"), mu_v(&s->m, v)), EACCES);
		assert_errno(lstat(mu_s(&s->m, v), &st), ENOENT); /* nothing on disk */
		if (mode->overlay)
			assert_errno(lstat(upper(s, v), &st), ENOENT);
	}
	assert_int_equal(lstat(mu_s(&s->m, "w/ok.txt"), &st), 0);
	/* a host file with such a name is not in the view */
	assert_errno(stat(mu_v(&s->m, "w/host\xc2\x9d"
				      "0;title\xc2\x9c"),
			  &st),
		     ENOENT);
	assert_int_equal(mu_sh("ls -A '%s' | grep -qx ok.txt", mu_v(&s->m, "w")), 0);
	assert_int_equal(mu_sh("test \"$(ls -A '%s' | wc -l)\" -eq 1", mu_v(&s->m, "w")), 0);
	if (!mode->audit) {
		side_free(s);
		return;
	}
	/* the refusals are in the audit log, and the report escapes them */
	mu_umount(&s->m, SIGTERM);
	snprintf(cmd, sizeof(cmd), "'%s' --audit-report '%s' 2>&1", getenv("JAILFS"), s->audit);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	assert_null(strstr(out, "\xc2\x9b"));
	assert_null(strstr(out, "\xe2\x80\xae"));
	assert_null(strstr(out, "\xe2\x81\xa6"));
	assert_non_null(strstr(out, "control"));
	assert_int_equal(mu_sh("grep -q 'csi\\\\u009b2J' '%s'", s->audit), 0);
	side_free(s);
}

#define T(fn, i) cmocka_unit_test_prestate_setup_teardown(fn, NULL, teardown, (void *)&modes[i])
#define FOR_MODES(fn) T(fn, 0), T(fn, 1), T(fn, 2), T(fn, 3), T(fn, 4)

int main(void)
{
	const struct CMUnitTest tests[] = {
		FOR_MODES(test_dir_offsets_tmpfs),	FOR_MODES(test_dir_offsets_disk),
		FOR_MODES(test_whiteouts_tell_nothing), FOR_MODES(test_denied_lookup_no_backing),
		FOR_MODES(test_create_over_hidden),	FOR_MODES(test_c1_bidi_names),
	};

	mu_require_fuse();
	return cmocka_run_group_tests_name("side", tests, NULL, NULL);
}
