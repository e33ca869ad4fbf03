/* SPDX-License-Identifier: MIT */
/*
 * Persistent views: one jailfs daemon serves every `jailrun --source` command
 * of the same key (source, policy content, the jailfs binary, the daemon's
 * options, the user), so that the kernel's caches of names and attributes
 * survive from one command to the next and two commands on one tree see one
 * view (their O_APPEND writes land whole; two views' caches disagree).
 *
 * Layout, in the user's private runtime directory (BASE):
 *   BASE/persist.HASH/          0700, ours: a view (HASH: FNV-1a of the key)
 *     key                        the whole key, compared byte for byte
 *     policy.ini                 the policy the daemon loaded (a copy: a file
 *                                changed later starts another view)
 *     audit.log                  its refusals, level denied, for all commands
 *     users.lock                 flock: shared while a command is attached;
 *                                the daemon takes it exclusive to go idle
 *     setup.lock                 flock: exclusive while one jailrun checks or
 *                                starts the view
 *     mnt/                       the mountpoint
 * Order: users.lock shared first (a daemon that is exiting holds it until
 * unmounted, so we then find no view rather than a dying one), then
 * setup.lock. The daemon is `jailfs --idle-exit T --idle-lock users.lock`,
 * detached (not our child): it outlives us and unmounts itself when idle.
 * Each command reads its own refusals from the shared log, filtered by the
 * pid namespace of its jail (main.c, jr_audit_read_ns).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "view.h"
#include "persist.h"

#define POLICY_MAX (1 << 20)		    /* bytes of a policy file we key on */
#define KEY_MAX (POLICY_MAX + 4 * PATH_MAX) /* the key file */
/* The shared refusal log is bounded as a one-shot's is, but it serves many
 * commands: past the size, commands get counts, not details (jailrun(1)). */
#define LOG_MAX_SIZE "64M"
#define LOG_RATE "100/s"

/* Is @path a directory of ours that nobody else may enter or change? lstat:
 * a symlink planted in its place is refused, not followed. */
static int check_private(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0077))
		return -EPERM;
	return 0;
}

static int make_private(const char *path)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	return check_private(path);
}

/* BASE (PATH_MAX bytes): $XDG_RUNTIME_DIR when private, else /run/jailrun
 * for root and /run/user/UID when private for others, plus /jailrun. Never
 * a directory of /tmp, where another user could have made the name first.
 * 1 when made or checked, 0 when there is none, -EPERM. */
static int runtime_base(char *base)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char user[64];

	snprintf(user, sizeof(user), "/run/user/%u", (unsigned)geteuid());
	if (xdg && xdg[0] == '/' && check_private(xdg) == 0)
		snprintf(base, PATH_MAX, "%s/jailrun", xdg);
	else if (geteuid() == 0)
		snprintf(base, PATH_MAX, "/run/jailrun");
	else if (check_private(user) == 0)
		snprintf(base, PATH_MAX, "%s/jailrun", user);
	else
		return 0;
	return make_private(base) < 0 ? -EPERM : 1;
}

/* Is @base (a runtime directory) in the tree of @source? Then the view's
 * refusal log would be in its own view, which jailfs refuses. */
static bool inside_source(const char *base, const char *source)
{
	char b[PATH_MAX], s[PATH_MAX];
	size_t n;

	if (!realpath(base, b) || !realpath(source, s))
		return false;
	n = strlen(s);
	return strcmp(s, "/") == 0 || (strncmp(b, s, n) == 0 && (b[n] == '/' || b[n] == '\0'));
}

/* The policy file's content (malloc'ed, NUL-terminated) in *@out. */
static int read_policy(const char *path, char **out, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	char *buf = malloc(POLICY_MAX + 1);
	ssize_t n;
	size_t got = 0;

	if (!buf)
		return -ENOMEM;
	while (fd >= 0 && got <= POLICY_MAX && (n = read(fd, buf + got, POLICY_MAX + 1 - got)) > 0)
		got += (size_t)n;
	if (fd < 0 || got > POLICY_MAX) {
		int e = fd < 0 ? -errno : -EFBIG;

		free(buf);
		return e;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

/* The key: everything a view's behaviour depends on, and the policy last.
 * The jailfs binary's identity is in it: a rebuilt daemon is a new view. */
static int make_key(const struct jr_persist_args *a, const char *jailfs, const char *policy,
		    size_t plen, char **out, size_t *len)
{
	struct stat st = {0}, src;
	FILE *f;

	/* the source's identity, not only its name: a daemon holds the
	 * directory it was started on, so a tree removed and made again (or
	 * mounted over) under the same name needs a view of its own */
	if (stat(a->source, &src) < 0)
		return -errno;
	if (!(f = open_memstream(out, len)))
		return -ENOMEM;
	stat(jailfs, &st);
	fprintf(f, "jailrun persistent view 2\nuid %u\nsource %s %llu %llu\njailfs %s %llu %lld\n",
		(unsigned)geteuid(), a->source, (unsigned long long)src.st_dev,
		(unsigned long long)src.st_ino, jailfs, (unsigned long long)st.st_ino,
		(long long)st.st_mtime);
	fprintf(f, "options fast_open audit=denied,%s,%s\npolicy %s\n", LOG_MAX_SIZE, LOG_RATE,
		a->policy ? "file" : "built-in");
	fwrite(policy, 1, plen, f);
	return fclose(f) == 0 ? 0 : -ENOMEM;
}

/* A view's identity, and the policy text it is started with. */
struct key {
	char jailfs[PATH_MAX];
	char *policy; /* the policy file's content, "" for the built-in default */
	size_t plen;
	char *text; /* the key file's content */
	size_t len;
};

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

/* Write @n bytes to @name in @dfd, atomically (a temporary renamed). */
static int write_file(int dfd, const char *name, const char *data, size_t n)
{
	char tmp[64];
	int fd, r = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, data, n) != (ssize_t)n)
		r = -EIO;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	return r;
}

/* Does @dfd's key file hold exactly @key? */
static bool same_key(int dfd, const char *key, size_t len)
{
	_cleanup_close_ int fd = openat(dfd, "key", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *buf = malloc(len + 1);
	size_t got = 0;
	ssize_t n;

	if (fd < 0 || !buf)
		return false;
	while (got <= len && (n = read(fd, buf + got, len + 1 - got)) > 0)
		got += (size_t)n;
	return got == len && memcmp(buf, key, len) == 0;
}

static int lock_at(int dfd, const char *name, int how)
{
	int fd = openat(dfd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	while (flock(fd, how) < 0) {
		if (errno != EINTR) {
			int e = -errno;

			close(fd);
			return e;
		}
	}
	return fd;
}

/* Run @argv (jailfs, which detaches once mounted) and wait for its exit:
 * 0 once the view is mounted, else -EIO (jailfs said why on our stderr). */
static int run_jailfs(const char *const *argv)
{
	pid_t pid = fork();
	int status = 0;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		sigset_t none;

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
		}
		/* the daemon outlives us: none of our caller's pipes may stay open
		 * in it (a harness reading to end of file would wait for it) */
		close_range(3, ~0U, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "jailrun: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* Start the daemon of @p's view: the key and the policy copy first. */
static int start_view(struct jr_persist *p, int dfd, const struct jr_persist_args *a,
		      const struct key *k)
{
	char idle[32], pol[PATH_MAX + 16], lock[PATH_MAX + 16], log[PATH_MAX + 16];
	const char *argv[24];
	int argc = 0, r;

	snprintf(idle, sizeof(idle), "%llu.%03llu", (unsigned long long)a->idle_ms / 1000,
		 (unsigned long long)a->idle_ms % 1000);
	snprintf(pol, sizeof(pol), "%s/policy.ini", p->dir);
	snprintf(lock, sizeof(lock), "%s/users.lock", p->dir);
	snprintf(log, sizeof(log), "%s/audit.log", p->dir);
	/* a new view, a new log: the old one was a dead view's */
	if (unlinkat(dfd, "audit.log", 0) < 0 && errno != ENOENT)
		return -errno;
	if ((r = write_file(dfd, "key", k->text, k->len)) < 0 ||
	    (a->policy && (r = write_file(dfd, "policy.ini", k->policy, k->plen)) < 0))
		return r;
	if (mkdirat(dfd, "mnt", 0700) < 0 && errno != EEXIST)
		return -errno;
	argv[argc++] = k->jailfs;
	argv[argc++] = "-o";
	argv[argc++] = "fast_open";
	if (a->policy) {
		argv[argc++] = "--policy";
		argv[argc++] = pol;
	}
	argv[argc++] = "--audit";
	argv[argc++] = log;
	argv[argc++] = "--audit-level";
	argv[argc++] = "denied";
	argv[argc++] = "--audit-max-size";
	argv[argc++] = LOG_MAX_SIZE;
	argv[argc++] = "--audit-rate";
	argv[argc++] = LOG_RATE;
	argv[argc++] = "--idle-exit";
	argv[argc++] = idle;
	argv[argc++] = "--idle-lock";
	argv[argc++] = lock;
	argv[argc++] = a->source;
	argv[argc++] = p->mnt;
	argv[argc] = NULL;
	return run_jailfs(argv);
}

/*
 * Is the view at p->mnt usable? 1: alive, same key; 0: not mounted (or
 * cleaned up now: daemon gone, not answering, another key). Says on stderr
 * why a mounted one is not used.
 */
static int check_view(struct jr_persist *p, int dfd, const char *key, size_t klen)
{
	char fstype[64], source[PATH_MAX];
	int r;

	if (jr_view_find_mount(p->mnt, fstype, sizeof(fstype), source, sizeof(source)) < 0)
		return 0;
	r = strcmp(fstype, "fuse.jailfs") == 0 ? jr_view_probe(p->mnt) : -EMEDIUMTYPE;
	if (r == 0 && same_key(dfd, key, klen))
		return 1;
	if (r == -ENOTCONN || r == -ECONNABORTED)
		fprintf(stderr,
			"jailrun: the daemon of the persistent view at %s is gone (%s); "
			"unmounting it and starting a fresh view\n",
			p->mnt, strerror(-r));
	else if (r == -ETIMEDOUT)
		fprintf(stderr,
			"jailrun: the daemon of the persistent view at %s does not answer; "
			"detaching it and starting a fresh view\n",
			p->mnt);
	else
		fprintf(stderr, "jailrun: %s is not the view it should be; replacing it\n", p->mnt);
	jr_view_unmount(p->mnt);
	if (jr_view_find_mount(p->mnt, fstype, sizeof(fstype), source, sizeof(source)) == 0)
		return -EBUSY;
	return 0;
}

/* The files of view directory @name in @base that is not mounted and that
 * nobody is attached to or setting up (its users.lock free): its refusal
 * log, up to LOG_MAX_SIZE of RAM in a tmpfs, and its key and policy. The
 * locks, the empty mountpoint and the directory stay (a jailrun may be
 * opening them). */
static void sweep_one(int bfd, const char *base, const char *name)
{
	_cleanup_close_ int dfd =
		openat(bfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int lfd = -1;
	char mnt[PATH_MAX], fstype[64], source[PATH_MAX];

	if (dfd < 0)
		return;
	lfd = openat(dfd, "users.lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0)
		return;
	if ((size_t)snprintf(mnt, sizeof(mnt), "%s/%s/mnt", base, name) >= sizeof(mnt) ||
	    jr_view_find_mount(mnt, fstype, sizeof(fstype), source, sizeof(source)) == 0)
		return;
	unlinkat(dfd, "audit.log", 0);
	unlinkat(dfd, "policy.ini", 0);
	unlinkat(dfd, "key", 0);
}

/* Before a view starts: sweep the other views of @base that are gone. */
static void sweep(const char *base, const char *self)
{
	_cleanup_closedir_ DIR *d = opendir(base);
	const char *own = strrchr(self, '/');
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (strncmp(de->d_name, "persist.", 8) == 0 &&
		    (!own || strcmp(de->d_name, own + 1)))
			sweep_one(dirfd(d), base, de->d_name);
}

/* Under setup.lock: use the live view or start one. */
static int find_or_start(struct jr_persist *p, int dfd, const char *base,
			 const struct jr_persist_args *a, const struct key *k, char *err,
			 size_t errsz)
{
	int r = check_view(p, dfd, k->text, k->len);

	if (r == 1)
		return 0;
	if (r == 0) {
		sweep(base, p->dir);
		r = start_view(p, dfd, a, k);
	}
	if (r < 0)
		snprintf(err, errsz, "cannot start the persistent view of %s at %s: %s", a->source,
			 p->mnt, strerror(-r));
	return r;
}

/* p->dir for @k, made private; its fd in *@dfd. The name hashes the whole
 * key (a rebuilt jailfs gets a directory of its own, and the view of the
 * old one keeps serving its commands); the key file, compared whole, decides. */
static int open_dir(struct jr_persist *p, const struct key *k, const char *base, int *dfd)
{
	uint64_t h = fnv1a(k->text, k->len);
	int r;

	if ((size_t)snprintf(p->dir, sizeof(p->dir), "%s/persist.%016llx", base,
			     (unsigned long long)h) >= sizeof(p->dir) ||
	    (size_t)snprintf(p->mnt, sizeof(p->mnt), "%s/mnt", p->dir) >= sizeof(p->mnt))
		return -ENAMETOOLONG;
	if ((r = make_private(p->dir)) < 0)
		return r;
	*dfd = open(p->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return *dfd < 0 ? -errno : 0;
}

static void key_free(struct key *k)
{
	free(k->text);
	free(k->policy);
}

/* Read the policy and build the key; a message in @err on failure. */
static int key_load(struct key *k, const struct jr_persist_args *a, char *err, size_t errsz)
{
	int r = 0;

	jr_find_jailfs(k->jailfs, sizeof(k->jailfs));
	if (a->policy)
		r = read_policy(a->policy, &k->policy, &k->plen);
	else if (!(k->policy = strdup("")))
		r = -ENOMEM;
	if (r < 0) {
		snprintf(err, errsz, "--policy %s: %s", a->policy, strerror(-r));
		return r;
	}
	r = make_key(a, k->jailfs, k->policy, k->plen, &k->text, &k->len);
	if (r < 0)
		snprintf(err, errsz, "the persistent view's key: %s", strerror(-r));
	return r;
}

int jr_persist_attach(struct jr_persist *p, const struct jr_persist_args *a, char *err,
		      size_t errsz)
{
	_cleanup_close_ int dfd = -1, setup = -1;
	struct key k = {0};
	char base[PATH_MAX];
	int r;

	memset(p, 0, sizeof(*p));
	p->users_fd = -1;
	r = runtime_base(base);
	/* documented (jailrun(1)); said on every command it would be noise */
	if (r == 0 || (r > 0 && inside_source(base, a->source)))
		return 0;
	if (r > 0 && (r = key_load(&k, a, err, errsz)) < 0) {
		key_free(&k);
		return r;
	}
	if (r < 0 || (r = open_dir(p, &k, base, &dfd)) < 0) {
		key_free(&k);
		snprintf(err, errsz,
			 "cannot use the persistent view's directory in %s: %s (it must be a "
			 "directory of yours, mode 0700)",
			 base, strerror(-r));
		return r;
	}
	p->users_fd = lock_at(dfd, "users.lock", LOCK_SH);
	if (p->users_fd < 0 || (setup = lock_at(dfd, "setup.lock", LOCK_EX)) < 0) {
		r = p->users_fd < 0 ? p->users_fd : setup;
		snprintf(err, errsz, "locking %s: %s", p->dir, strerror(-r));
		key_free(&k);
		jr_persist_detach(p);
		return r;
	}
	r = find_or_start(p, dfd, base, a, &k, err, errsz);
	key_free(&k);
	if (r < 0) {
		jr_persist_detach(p);
		return r;
	}
	p->attached = true;
	return 1;
}

void jr_persist_detach(struct jr_persist *p)
{
	if (p->users_fd >= 0)
		close(p->users_fd);
	p->users_fd = -1;
	p->attached = false;
}
