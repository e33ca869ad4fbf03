/* SPDX-License-Identifier: MIT */
/* Helpers for the mount suite; see mount-util.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mount-util.h"

/* Copies, not pointers: a failed test may leave a struct jf_mnt on a stack
 * that is gone by the time the exit handler runs. */
#define MAX_MOUNTS 32
static struct {
	char mnt[300];
	pid_t pid;
} live[MAX_MOUNTS];
static bool atexit_done;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void live_add(const struct jf_mnt *m)
{
	for (int i = 0; i < MAX_MOUNTS; i++) {
		if (!live[i].mnt[0]) {
			memcpy(live[i].mnt, m->mnt, sizeof(live[i].mnt));
			live[i].pid = m->pid;
			return;
		}
	}
}

void mu_forget(const struct jf_mnt *m)
{
	for (int i = 0; i < MAX_MOUNTS; i++)
		if (live[i].mnt[0] && strcmp(live[i].mnt, m->mnt) == 0)
			live[i].mnt[0] = '\0';
}

static void cleanup_all(void)
{
	for (int i = 0; i < MAX_MOUNTS; i++) {
		struct jf_mnt m = {.pid = live[i].pid, .mounted = true};

		if (!live[i].mnt[0])
			continue;
		memcpy(m.mnt, live[i].mnt, sizeof(m.mnt));
		fprintf(stderr, "cleanup: unmounting %s\n", m.mnt);
		mu_umount(&m, SIGTERM);
	}
}

void mu_require_fuse(void)
{
	const char *ci = getenv("CI");
	struct stat st;
	const char *why = NULL;

	if (stat("/dev/fuse", &st) < 0 || !S_ISCHR(st.st_mode))
		why = "/dev/fuse is missing";
	else if (geteuid() == 0 && access("/dev/fuse", R_OK | W_OK) < 0)
		why = "/dev/fuse is not usable";
	else if (geteuid() != 0 && mu_sh("command -v fusermount3 >/dev/null") != 0)
		why = "fusermount3 is missing (package fuse3)";
	if (!why)
		return;
	fprintf(stderr, "mount tests need FUSE: %s\n", why);
	exit(ci && strcmp(ci, "true") == 0 ? 1 : 77);
}

void mu_tree_new(struct jf_mnt *m)
{
	const char *tmp = getenv("JF_MOUNT_TMPDIR");

	if (!tmp)
		tmp = "/tmp";
	memset(m, 0, sizeof(*m));
	snprintf(m->dir, sizeof(m->dir), "%s/jf-mount-XXXXXX", tmp);
	if (!mkdtemp(m->dir))
		die("mkdtemp %s: %s", m->dir, strerror(errno));
	chmod(m->dir, 0755);
	snprintf(m->src, sizeof(m->src), "%s/src", m->dir);
	snprintf(m->mnt, sizeof(m->mnt), "%s/mnt", m->dir);
	if (mkdir(m->src, 0755) < 0 || mkdir(m->mnt, 0755) < 0)
		die("mkdir: %s", strerror(errno));
	if (!atexit_done) {
		atexit(cleanup_all);
		atexit_done = true;
	}
}

void mu_tree_free(struct jf_mnt *m)
{
	if (m->mounted)
		mu_umount(m, SIGTERM);
	if (m->dir[0] && !mu_is_mounted(m->mnt, NULL))
		mu_sh("rm -rf '%s'", m->dir);
	m->dir[0] = '\0';
}

static char *rot(void)
{
	static __thread char bufs[8][4200];
	static __thread int i;

	return bufs[i++ & 7];
}

const char *mu_v(const struct jf_mnt *m, const char *rel)
{
	char *b = rot();

	snprintf(b, 4200, "%s/%s", m->mnt, rel);
	return b;
}

const char *mu_s(const struct jf_mnt *m, const char *rel)
{
	char *b = rot();

	snprintf(b, 4200, "%s/%s", m->src, rel);
	return b;
}

void mu_mkdir(const struct jf_mnt *m, const char *rel)
{
	if (mu_sh("mkdir -p '%s'", mu_s(m, rel)) != 0)
		die("mkdir -p %s failed", rel);
}

void mu_write(const struct jf_mnt *m, const char *rel, const char *content)
{
	char dir[4200];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", mu_s(m, rel));
	*strrchr(dir, '/') = '\0';
	mu_sh("mkdir -p '%s'", dir);
	f = fopen(mu_s(m, rel), "we");
	if (!f)
		die("fopen %s: %s", rel, strerror(errno));
	fputs(content, f);
	fclose(f);
}

void mu_symlink(const struct jf_mnt *m, const char *target, const char *rel)
{
	if (symlink(target, mu_s(m, rel)) < 0)
		die("symlink %s: %s", rel, strerror(errno));
}

bool mu_is_mounted(const char *path, const char *type)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192];
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char mp[4096], fstype[256];

		/* id parent maj:min root mountpoint opts ... - fstype source */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1)
			continue;
		char *dash = strstr(line, " - ");

		if (!dash || sscanf(dash + 3, "%255s", fstype) != 1)
			continue;
		if (strcmp(mp, path) == 0 && (!type || strcmp(fstype, type) == 0))
			found = true;
	}
	fclose(f);
	return found;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int mu_mount(struct jf_mnt *m, const char *const *args, long nofile)
{
	const char *jailfs = getenv("JAILFS");
	const char *argv[32];
	int n = 0, status;

	if (!jailfs)
		die("JAILFS not set");
	argv[n++] = jailfs;
	argv[n++] = "-f";
	for (; args && *args && n < 28; args++)
		argv[n++] = *args;
	argv[n++] = m->src;
	argv[n++] = m->mnt;
	argv[n] = NULL;
	m->pid = fork();
	if (m->pid < 0)
		die("fork: %s", strerror(errno));
	if (m->pid == 0) {
		if (nofile > 0) {
			struct rlimit rl = {(rlim_t)nofile, (rlim_t)nofile};

			setrlimit(RLIMIT_NOFILE, &rl);
		}
		execv(jailfs, (char *const *)argv);
		_exit(127);
	}
	for (int i = 0; i < 1000; i++) {
		if (mu_is_mounted(m->mnt, "fuse.jailfs")) {
			m->mounted = true;
			live_add(m);
			return 0;
		}
		if (waitpid(m->pid, &status, WNOHANG) == m->pid) {
			m->pid = 0;
			return -1;
		}
		sleep_ms(10);
	}
	kill(m->pid, SIGKILL);
	waitpid(m->pid, &status, 0);
	m->pid = 0;
	return -1;
}

int mu_umount(struct jf_mnt *m, int sig)
{
	int status = -1;

	/* Signal only a child of ours that still runs: never a reused pid. */
	if (m->pid > 0 && waitpid(m->pid, &status, WNOHANG) != 0)
		m->pid = 0;
	if (m->pid > 0) {
		kill(m->pid, sig);
		for (int i = 0; i < 500; i++) {
			if (waitpid(m->pid, &status, WNOHANG) == m->pid) {
				m->pid = 0;
				break;
			}
			sleep_ms(10);
		}
		if (m->pid > 0) {
			kill(m->pid, SIGKILL);
			waitpid(m->pid, &status, 0);
			m->pid = 0;
		}
	}
	if (mu_is_mounted(m->mnt, NULL) && sig != SIGKILL)
		umount2(m->mnt, MNT_DETACH) < 0 ? (void)mu_sh("fusermount3 -uz '%s'", m->mnt)
						: (void)0;
	m->mounted = mu_is_mounted(m->mnt, NULL);
	if (!m->mounted)
		mu_forget(m);
	return status;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t sum_at(int at, const char *rel, const char *skip, uint64_t h)
{
	DIR *dp;
	struct dirent *de;
	int fd = openat(at, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *names[4096];
	int n = 0;

	if (fd < 0 || !(dp = fdopendir(fd)))
		return h;
	while ((de = readdir(dp)) && n < 4096)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			names[n++] = strdup(de->d_name);
	/* Sort for a stable order. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];

			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	for (int i = 0; i < n; i++) {
		char path[4200], buf[8192];
		struct stat st;

		snprintf(path, sizeof(path), "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
		if (skip && strncmp(path, skip, strlen(skip)) == 0)
			goto next;
		if (fstatat(dirfd(dp), names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto next;
		h = fnv(h, path, strlen(path) + 1);
		h = fnv(h, &st.st_mode, sizeof(st.st_mode));
		h = fnv(h, &st.st_uid, sizeof(st.st_uid));
		h = fnv(h, &st.st_nlink, sizeof(st.st_nlink));
		h = fnv(h, &st.st_mtim, sizeof(st.st_mtim));
		if (S_ISREG(st.st_mode)) {
			int f = openat(dirfd(dp), names[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
			ssize_t k;

			h = fnv(h, &st.st_size, sizeof(st.st_size));
			while (f >= 0 && (k = read(f, buf, sizeof(buf))) > 0)
				h = fnv(h, buf, (size_t)k);
			if (f >= 0) {
				char px[64];
				ssize_t x;

				snprintf(px, sizeof(px), "/proc/self/fd/%d", f);
				x = listxattr(px, buf, sizeof(buf));
				if (x > 0)
					h = fnv(h, buf, (size_t)x);
				close(f);
			}
		} else if (S_ISLNK(st.st_mode)) {
			ssize_t k = readlinkat(dirfd(dp), names[i], buf, sizeof(buf));

			if (k > 0)
				h = fnv(h, buf, (size_t)k);
		} else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(dp), names[i], O_PATH | O_DIRECTORY | O_NOFOLLOW);

			if (sub >= 0) {
				h = sum_at(sub, path, skip, h);
				close(sub);
			}
		}
next:
		free(names[i]);
	}
	closedir(dp);
	return h;
}

uint64_t mu_tree_sum(const struct jf_mnt *m, const char *skip_prefix)
{
	int fd = open(m->src, O_PATH | O_DIRECTORY | O_CLOEXEC);
	uint64_t h = sum_at(fd, "", skip_prefix, 0xcbf29ce484222325ULL);

	close(fd);
	return h;
}

uint64_t mu_file_sum(const struct jf_mnt *m, const char *rel)
{
	int fd = open(mu_s(m, rel), O_RDONLY | O_CLOEXEC);
	char buf[8192];
	uint64_t h = 0xcbf29ce484222325ULL;
	ssize_t k;

	if (fd < 0)
		return 0;
	while ((k = read(fd, buf, sizeof(buf))) > 0)
		h = fnv(h, buf, (size_t)k);
	close(fd);
	return h;
}

int mu_write_refused(const char *path, int flags, bool fast_open, char *why, size_t size)
{
	int fd, e;
	long w;

	errno = 0;
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == EROFS && (!fast_open || (flags & O_TRUNC)))
			return 0;
		snprintf(why, size, "open %s: expected %s, got errno=%d (%s)", path,
			 fast_open ? "success (no_open), then EROFS at write(2)" : "EROFS", e,
			 strerror(e));
		return -1;
	}
	if (!fast_open || (flags & O_TRUNC)) {
		close(fd);
		snprintf(why, size, "open %s for writing%s succeeded%s", path,
			 flags & O_TRUNC ? " with O_TRUNC" : "",
			 fast_open ? "" : " without fast_open");
		return -1;
	}
	errno = 0;
	w = (long)write(fd, "x", 1);
	e = errno;
	close(fd);
	if (w < 0 && e == EROFS)
		return 0;
	snprintf(why, size, "write to %s: expected EROFS, got r=%ld errno=%d (%s)", path, w, e,
		 strerror(e));
	return -1;
}

int mu_sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -1;
	r = system(cmd);
	free(cmd);
	if (r == -1 || !WIFEXITED(r))
		return -1;
	return WEXITSTATUS(r);
}

int mu_count_fds(pid_t pid)
{
	char path[64];
	DIR *dp;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dp = opendir(path);
	if (!dp)
		return -1;
	while (readdir(dp))
		n++;
	closedir(dp);
	return n - 2;
}

long mu_peak_rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* Read what @path holds from offset @from into @buf (NUL-terminated). */
static ssize_t read_from(const char *path, off_t from, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, size - 1, from);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

int mu_requests(pid_t pid, const char *stats, const char *kind, uint64_t *out)
{
	char buf[4096], key[64];
	struct stat st;
	off_t from = stat(stats, &st) == 0 ? st.st_size : 0;
	size_t klen = (size_t)snprintf(key, sizeof(key), " %s=", kind);

	if (kill(pid, SIGUSR1) < 0)
		return -1;
	for (int i = 0; i < 200; i++) {
		ssize_t n = read_from(stats, from, buf, sizeof(buf));
		const char *p;

		if (n > 0 && buf[n - 1] == '\n') {
			p = strstr(buf, key);
			*out = p ? strtoull(p + klen, NULL, 10) : 0;
			return 0;
		}
		sleep_ms(10);
	}
	return -1;
}

char *mu_slurp(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

bool mu_dir_has(const char *dir, const char *name)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	bool found = false;

	assert_non_null(dp);
	while ((de = readdir(dp)))
		if (strcmp(de->d_name, name) == 0)
			found = true;
	closedir(dp);
	return found;
}

bool mu_daemon_alive_for(const char *mnt)
{
	return mu_sh("{ for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; "
		     "echo; done; } 2>/dev/null | grep -v grep | grep -q -- 'jailfs.* %s'",
		     mnt) == 0;
}

static const char *policy_text = "[safe]\n"
				 "/\n"
				 "/ro/patches/\n"
				 "[restricted]\n"
				 "/ro/\n"
				 "[denied]\n"
				 "/secret/\n"
				 "[limits]\n"
				 "safe.max_file_size = 1M\n"
				 "restricted.max_file_size = 64K\n";

char mu_policy_path[512];
bool mu_fast_open_mount;

static void std_tree(struct jf_mnt *m)
{
	char big[100 * 1024 + 1];

	mu_write(m, "work/f", "safe\n");
	mu_mkdir(m, "work/d");
	mu_symlink(m, "f", "work/l");
	mu_write(m, "work/.env", "WORK_SECRET\n");
	mu_write(m, "work/id_rsa", "KEY\n");
	mu_write(m, "ro/f", "ro\n");
	mu_mkdir(m, "ro/d");
	mu_symlink(m, "f", "ro/l");
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	mu_write(m, "ro/big", big);
	mu_write(m, "ro/patches/p.c", "patch\n");
	mu_write(m, "secret/token", "TOKEN\n");
	mu_write(m, ".env", "TOP_SECRET\n");
	mu_write(m, ".git/hooks/pre-commit", "#!/bin/sh\n");
	mu_write(m, ".git/HEAD", "ref: refs/heads/main\n");
	/* escapes planted in SOURCE */
	mu_symlink(m, "/etc/passwd", "work/pw");
	mu_symlink(m, "../../..", "work/up");
	mu_symlink(m, ".env", "work/toenv");
	mu_symlink(m, "../secret/token", "work/totoken");
	{
		char abs[600];

		snprintf(abs, sizeof(abs), "%s/work/f", m->src);
		mu_symlink(m, abs, "work/abs");
		mu_symlink(m, abs, "absroot");
	}
	mu_mkdir(m, "work/s");
	mu_symlink(m, "..", "work/s/u");
	mu_symlink(m, "u/../..", "work/s/w");
	if (link(mu_s(m, "secret/token"), mu_s(m, "work/hl")) < 0)
		fail_msg("link: %s", strerror(errno));
}

int mu_setup_with(void **state, const char *const *args, void (*extra)(struct jf_mnt *m))
{
	struct jf_mnt *m = calloc(1, sizeof(*m));
	FILE *f;

	mu_tree_new(m);
	snprintf(mu_policy_path, sizeof(mu_policy_path), "%s/policy.ini", m->dir);
	f = fopen(mu_policy_path, "we");
	fputs(policy_text, f);
	fclose(f);
	std_tree(m);
	if (extra)
		extra(m);
	if (mu_mount(m, args, 0) < 0) {
		fprintf(stderr, "jailfs did not mount %s\n", m->mnt);
		mu_tree_free(m);
		free(m);
		return -1;
	}
	*state = m;
	return 0;
}

int mu_setup_mode(void **state, bool fast_open, void (*extra)(struct jf_mnt *m))
{
	const char *args[] = {"--policy", mu_policy_path, "-o",
			      fast_open ? "fast_open" : "nofast_open", NULL};

	mu_fast_open_mount = fast_open;
	return mu_setup_with(state, args, extra);
}

int mu_std_setup(void **state)
{
	return mu_setup_mode(state, false, NULL);
}

int mu_fast_setup(void **state)
{
	return mu_setup_mode(state, true, NULL);
}

int mu_std_teardown(void **state)
{
	struct jf_mnt *m = *state;

	mu_fast_open_mount = false; /* tests with mounts of their own use the defaults */
	mu_tree_free(m);
	free(m);
	return 0;
}

void assert_write_refused(const char *path, int flags)
{
	char why[512];

	if (mu_write_refused(path, flags, mu_fast_open_mount, why, sizeof(why)) < 0)
		fail_msg("%s", why);
}

int mu_run_group(const char *name, const struct CMUnitTest *tests, size_t count, int argc,
		 char **argv)
{
	char group[128];

	mu_require_fuse();
	if (argc > 1 && strcmp(argv[1], "--unprivileged") == 0) {
		/* As an ordinary user through fusermount3: everything; the
		 * root-only tests (pseudo-fs mount, mount(8) helper) skip
		 * themselves, and the big tree is smaller. */
		if (!getenv("JF_BIGTREE_FILES"))
			setenv("JF_BIGTREE_FILES", "5000", 1);
	} else if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	snprintf(group, sizeof(group), "%s%s", name, geteuid() == 0 ? "" : "-unprivileged");
	return _cmocka_run_group_tests(group, tests, count, NULL, NULL);
}
