/* SPDX-License-Identifier: MIT */
/*
 * The view the command runs in: checking that --root is a jailfs mount, and
 * the one-shot mount (--source) that lives exactly as long as one command.
 *
 * The one-shot daemon runs in the foreground (-f) as our child, so we know
 * its pid, can wait for it after the unmount (its audit log is then flushed)
 * and it gets PR_SET_PDEATHSIG=SIGTERM: if jailrun is killed outright the
 * daemon unmounts itself (SIGTERM unmounts cleanly) instead of leaving a
 * dead mount behind.
 *
 * The one-shot daemon always writes an audit log: the caller's --audit file
 * (level all), else a private file at level denied, capped in size and rate
 * (JR_PRIVATE_LOG_*), removed once the daemon is gone (jailrun reads it back
 * through its fd). The daemon opens the file
 * after its mount shows, so the name must stay until it has exited.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "cleanup.h"
#include "policy.h"
#include "result.h"
#include "view.h"

/* Bounds of the private refusal log (jailfs --audit-max-size, --audit-rate):
 * a hidden-name flood costs at most this much RAM, with exact counts. */
#define JR_PRIVATE_LOG_MAX_SIZE "8M"
#define JR_PRIVATE_LOG_RATE "100/s"

/* Undo mountinfo's octal escapes (\040 for space, \011, \012, \134). */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* mountinfo (proc(5)): "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] -
 * FSTYPE SOURCE SUPEROPTS"; the last matching line is the topmost mount. */
int jr_view_find_mount(const char *mnt, char *fstype, size_t fsz, char *source, size_t ssz)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	bool found = false;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *save = NULL, *tok, *mp = NULL, *sep;
		int field = 0;

		line[strcspn(line, "\n")] = '\0';
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			if (++field == 5)
				mp = tok;
		if (!mp)
			continue;
		unescape(mp);
		if (strcmp(mp, mnt) != 0)
			continue;
		save = NULL;
		tok = strtok_r(sep + 3, " ", &save);
		snprintf(fstype, fsz, "%s", tok ? tok : "");
		tok = strtok_r(NULL, " ", &save);
		snprintf(source, ssz, "%s", tok ? tok : "");
		unescape(source);
		found = true;
	}
	return found ? 0 : -ENOENT;
}

int jr_view_check_root(const char *mnt, char *source, char *mnt_out)
{
	char fstype[64];
	int r;

	if (!realpath(mnt, mnt_out))
		return -errno;
	r = jr_view_find_mount(mnt_out, fstype, sizeof(fstype), source, PATH_MAX);
	if (r < 0)
		return r;
	if (strcmp(fstype, "fuse.jailfs") != 0)
		return -EMEDIUMTYPE;
	if (source[0] != '/')
		return -EMEDIUMTYPE; /* fsname must be the absolute source */
	return 0;
}

int jr_view_run_rules(const char *mnt, struct jf_policy **out, char *err, size_t errsz)
{
	char name[PATH_MAX + 32];
	_cleanup_free_ char *text = NULL;
	ssize_t n;

	*out = NULL;
	n = getxattr(mnt, JF_RUN_XATTR, NULL, 0);
	if (n >= 0) {
		text = malloc(n + 1);
		if (!text)
			return -ENOMEM;
		n = getxattr(mnt, JF_RUN_XATTR, text, n);
	}
	if (n < 0 && (errno == ENODATA || errno == ENOTSUP))
		return 0; /* a daemon that does not answer: no rules to carry */
	if (n < 0) {
		int e = errno;

		snprintf(err, errsz, "--root %s: reading its [run] rules: %s", mnt, strerror(e));
		return -e;
	}
	snprintf(name, sizeof(name), "%s (the view's [run] rules)", mnt);
	return jf_policy_parse(name, text, (size_t)n, out, err, errsz);
}

int jr_view_git_top(const char *dir, char *top)
{
	char cur[PATH_MAX], probe[PATH_MAX + 8];
	struct stat start, st;

	if (dir[0] != '/' || stat(dir, &start) < 0)
		return -ENOENT;
	snprintf(cur, sizeof(cur), "%s", dir);
	for (;;) {
		char *slash;

		if ((size_t)snprintf(probe, sizeof(probe), "%s/.git", strcmp(cur, "/") ? cur : "") <
			    sizeof(probe) &&
		    lstat(probe, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
			snprintf(top, PATH_MAX, "%s", cur);
			return 0;
		}
		if (strcmp(cur, "/") == 0)
			return -ENOENT;
		slash = strrchr(cur, '/');
		if (slash == cur)
			slash[1] = '\0';
		else
			*slash = '\0';
		/* like git without GIT_DISCOVERY_ACROSS_FILESYSTEM */
		if (stat(cur, &st) < 0 || st.st_dev != start.st_dev)
			return -ENOENT;
	}
}

/* jailfs: env JAILFS, else next to our own binary (installed side by side),
 * else ../fs/jailfs (the build tree), else PATH. */
void jr_find_jailfs(char *out, size_t size)
{
	const char *env = getenv("JAILFS");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(out, size, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		*strrchr(self, '/') = '\0';
		if ((size_t)snprintf(out, size, "%s/jailfs", self) < size && access(out, X_OK) == 0)
			return;
		if ((size_t)snprintf(out, size, "%s/../fs/jailfs", self) < size &&
		    access(out, X_OK) == 0)
			return;
	}
	snprintf(out, size, "jailfs");
}

/*
 * A jailrun killed with SIGKILL leaves its empty mountpoint behind (the
 * daemon, PR_SET_PDEATHSIG, unmounts itself). Remove such leftovers: not in
 * mountinfo (never stat() a possibly hung FUSE mount) and older than a
 * minute (a concurrent jailrun's directory is young until mounted).
 */
static void remove_stale(const char *base)
{
	_cleanup_closedir_ DIR *d = opendir(base);
	char path[PATH_MAX], fstype[64], source[PATH_MAX];
	struct dirent *de;
	struct stat st;

	while (d && (de = readdir(d))) {
		bool log = strncmp(de->d_name, "audit.", 6) == 0;

		if (strncmp(de->d_name, "view.", 5) != 0 && !log)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", base, de->d_name) >= sizeof(path))
			continue;
		if (!log &&
		    jr_view_find_mount(path, fstype, sizeof(fstype), source, sizeof(source)) == 0)
			continue;
		if (lstat(path, &st) < 0 || st.st_mtime >= time(NULL) - 60)
			continue;
		/* a live one-shot's log is open in its daemon and its jailrun,
		 * which read and write it through their fds: only a jailrun
		 * killed outright leaves a name behind for long */
		if (log && S_ISREG(st.st_mode))
			unlink(path);
		else if (!log && S_ISDIR(st.st_mode))
			rmdir(path);
	}
}

/* The private directory the one-shot mountpoints and refusal logs go in:
 * /run/jailrun (root), $XDG_RUNTIME_DIR/jailrun or /tmp/jailrun-UID, ours
 * and mode 0700. Writes it to @base (PATH_MAX bytes). */
static int private_base(char *base)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;

	/* an $XDG_RUNTIME_DIR that is not ours (kept by su) is not used */
	if (xdg && (xdg[0] != '/' || lstat(xdg, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != geteuid()))
		xdg = NULL;
	if (geteuid() == 0)
		snprintf(base, PATH_MAX, "/run/jailrun");
	else if (xdg)
		snprintf(base, PATH_MAX, "%s/jailrun", xdg);
	else
		snprintf(base, PATH_MAX, "/tmp/jailrun-%u", (unsigned)geteuid());
	if (mkdir(base, 0700) < 0 && errno != EEXIST)
		return -errno;
	/* an existing base must be ours and private (no one else may swap it) */
	if (lstat(base, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0077))
		return -EPERM;
	return 0;
}

/* A fresh mountpoint in the private base, and with @log a fresh empty file
 * for the refusal log (its fd in *@log_fd, O_CLOEXEC). */
static int make_private_dir(char *out, size_t size, char *log, int *log_fd)
{
	char base[PATH_MAX];
	int r = private_base(base);

	if (r < 0)
		return r;
	remove_stale(base);
	if ((size_t)snprintf(out, size, "%s/view.XXXXXX", base) >= size)
		return -ENAMETOOLONG;
	if (!mkdtemp(out))
		return -errno;
	if (!log)
		return 0;
	if ((size_t)snprintf(log, PATH_MAX, "%s/audit.XXXXXX", base) >= PATH_MAX)
		r = -ENAMETOOLONG;
	else if ((*log_fd = mkostemp(log, O_CLOEXEC)) < 0)
		r = -errno;
	if (r < 0) {
		log[0] = '\0';
		rmdir(out);
		out[0] = '\0';
	}
	return r;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until @dir shows as fuse.jailfs, the daemon dies, or 10 s pass. */
static int wait_mounted(struct jr_oneshot *o, char *err, size_t errsz)
{
	_cleanup_close_ int mfd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	int64_t deadline = now_ms() + 10000;
	char fstype[64], source[PATH_MAX];

	for (;;) {
		struct pollfd p[2] = {{.fd = mfd, .events = POLLPRI},
				      {.fd = o->pidfd, .events = POLLIN}};
		int64_t left = deadline - now_ms();
		char buf[4096];

		/* mountinfo signals POLLPRI on every change after a read (proc(5)) */
		if (mfd >= 0) {
			lseek(mfd, 0, SEEK_SET);
			while (read(mfd, buf, sizeof(buf)) > 0)
				;
		}
		if (jr_view_find_mount(o->dir, fstype, sizeof(fstype), source, sizeof(source)) ==
			    0 &&
		    strcmp(fstype, "fuse.jailfs") == 0)
			return 0;
		if (left <= 0) {
			snprintf(err, errsz, "jailfs did not mount %s within 10 s", o->dir);
			return -ETIMEDOUT;
		}
		if (poll(p, 2, left > 50 ? 50 : (int)left) < 0 && errno != EINTR)
			return -errno;
		if (p[1].revents & POLLIN) {
			int status = 0;

			if (jr_view_find_mount(o->dir, fstype, sizeof(fstype), source,
					       sizeof(source)) == 0 &&
			    strcmp(fstype, "fuse.jailfs") == 0)
				return 0;
			waitpid(o->daemon, &status, 0);
			o->daemon = 0;
			snprintf(err, errsz, "jailfs exited (status %d) before mounting %s",
				 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
				 o->dir);
			return -ECHILD;
		}
	}
}

/* A memfd holding @text, for `--policy /proc/self/fd/N`; -errno on failure.
 * Close-on-exec: the daemon's child side clears the flag. */
static int policy_memfd(const char *text)
{
	size_t len = strlen(text);
	int fd = memfd_create("jailrun-policy", MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* The daemon's side of the fork: never returns. */
static _Noreturn void exec_daemon(const char *const *argv, pid_t parent, int policy_fd)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	sigset_t none;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
	}
	if (policy_fd >= 0)
		fcntl(policy_fd, F_SETFD, 0);
	/* an empty set: jailrun may have SIGINT etc. blocked for signalfd */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "jailrun: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int jr_oneshot_start(struct jr_oneshot *o, const struct jr_oneshot_args *a, char *err, size_t errsz)
{
	char jailfs[PATH_MAX], policy_path[64];
	const char *argv[24];
	int argc = 0, r;
	_cleanup_close_ int policy_fd = -1;
	pid_t parent = getpid();
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->pidfd = -1;
	o->log_fd = -1;
	if (a->policy_text && (policy_fd = policy_memfd(a->policy_text)) < 0) {
		snprintf(err, errsz, "cannot hand over the view's policy: %s",
			 strerror(-policy_fd));
		return policy_fd;
	}
	r = make_private_dir(o->dir, sizeof(o->dir), a->refusal_log && !a->audit ? o->log : NULL,
			     &o->log_fd);
	if (r < 0) {
		snprintf(err, errsz, "cannot create a private mountpoint: %s", strerror(-r));
		o->dir[0] = '\0';
		return r;
	}
	jr_find_jailfs(jailfs, sizeof(jailfs));
	argv[argc++] = jailfs;
	argv[argc++] = "-f";
	/* Zero-message opens, also with an audit log: a write open of a file
	 * outside SAFE succeeds in the kernel, and its first mutation reaches
	 * the daemon, which refuses it (EROFS) and records it; at level all
	 * (--audit) a read or write is recorded at an inode's first READ or
	 * WRITE. */
	argv[argc++] = "-o";
	argv[argc++] = "fast_open";
	if (a->read_only)
		argv[argc++] = "--read-only";
	if (a->changes) {
		argv[argc++] = "--changes";
		argv[argc++] = a->changes;
	}
	if (policy_fd >= 0) {
		snprintf(policy_path, sizeof(policy_path), "/proc/self/fd/%d", policy_fd);
		argv[argc++] = "--policy";
		argv[argc++] = policy_path;
	} else if (a->policy) {
		argv[argc++] = "--policy";
		argv[argc++] = a->policy;
	}
	/* An audit log, so the result can say what the view refused: at level
	 * denied the refusals and hidden lookups, not every lookup. */
	if (a->audit || a->refusal_log) {
		argv[argc++] = "--audit";
		argv[argc++] = a->audit ? a->audit : o->log;
		argv[argc++] = "--audit-level";
		argv[argc++] = a->audit ? "all" : "denied";
	}
	/* The private log lives in /run or $XDG_RUNTIME_DIR, RAM on most
	 * systems: bounded, and its counts stay exact (jailrun(1), FILES). */
	if (!a->audit && a->refusal_log) {
		argv[argc++] = "--audit-max-size";
		argv[argc++] = JR_PRIVATE_LOG_MAX_SIZE;
		argv[argc++] = "--audit-rate";
		argv[argc++] = JR_PRIVATE_LOG_RATE;
	}
	argv[argc++] = a->source;
	argv[argc++] = o->dir;
	argv[argc] = NULL;

	o->daemon = fork();
	if (o->daemon < 0) {
		r = -errno;
		snprintf(err, errsz, "fork: %s", strerror(errno));
		jr_oneshot_stop(o);
		return r;
	}
	if (o->daemon == 0)
		exec_daemon(argv, parent, policy_fd);
	o->pidfd = (int)syscall(SYS_pidfd_open, o->daemon, 0);
	r = wait_mounted(o, err, errsz);
	if (r < 0) {
		jr_oneshot_stop(o);
		return r;
	}
	o->mounted = true;
	/* the connection's number, for jr_oneshot_abort (which cannot stat
	 * the view: that would wait for the daemon) */
	if (stat(o->dir, &st) == 0)
		o->dev = st.st_dev;
	return 0;
}

void jr_view_unmount(const char *dir)
{
	pid_t p;

	if (umount2(dir, 0) == 0 || umount2(dir, MNT_DETACH) == 0)
		return;
	p = fork();
	if (p == 0) {
		execlp("fusermount3", "fusermount3", "-u", "-z", dir, (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}

void jr_oneshot_abort(struct jr_oneshot *o)
{
	char path[64];
	int fd;

	if (!o->mounted)
		return;
	/* fusectl ends every wait at once, even while the daemon cannot be
	 * killed (itself blocked in the kernel); only root, where mounted */
	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/abort", minor(o->dev));
	fd = o->dev ? open(path, O_WRONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		if (write(fd, "1", 1) < 0) {
			/* the daemon's death below aborts the connection too */
		}
		close(fd);
	}
	/* the last close of the daemon's /dev/fuse aborts the connection */
	if (o->daemon > 0)
		kill(o->daemon, SIGKILL);
	jr_view_unmount(o->dir);
	o->mounted = false;
}

void jr_oneshot_stop(struct jr_oneshot *o)
{
	if (o->mounted && o->daemon > 0) {
		/* SIGTERM: the daemon unmounts, flushes its audit log, exits;
		 * SIGCONT: a stopped daemon could not */
		kill(o->daemon, SIGTERM);
		kill(o->daemon, SIGCONT);
	} else if (o->mounted) {
		jr_view_unmount(o->dir);
	} else if (o->daemon > 0) {
		kill(o->daemon, SIGTERM);
		kill(o->daemon, SIGCONT);
	}
	if (o->daemon > 0) {
		struct pollfd p = {.fd = o->pidfd, .events = POLLIN};

		/* a daemon stuck on a busy mount gets 5 s, then SIGKILL and a lazy
		 * unmount; one that does not die even then (blocked in the
		 * kernel) is left to init rather than waited for */
		if (o->pidfd >= 0 && poll(&p, 1, 5000) == 0) {
			kill(o->daemon, SIGKILL);
			jr_view_unmount(o->dir);
		}
		if (o->pidfd < 0 || poll(&p, 1, 1000) > 0)
			waitpid(o->daemon, NULL, 0);
		o->daemon = 0;
	}
	o->mounted = false;
	if (o->pidfd >= 0)
		close(o->pidfd);
	o->pidfd = -1;
	if (o->dir[0]) {
		char fstype[64], source[PATH_MAX];

		/* still mounted (daemon died badly)? detach before removing */
		if (jr_view_find_mount(o->dir, fstype, sizeof(fstype), source, sizeof(source)) == 0)
			jr_view_unmount(o->dir);
		rmdir(o->dir);
		o->dir[0] = '\0';
	}
	if (o->log[0]) {
		unlink(o->log);
		o->log[0] = '\0';
	}
}

int jr_view_audit_log(const char *mnt, char *path)
{
	char text[PATH_MAX + 32], *sp;
	ssize_t n = getxattr(mnt, JF_AUDIT_XATTR, text, sizeof(text) - 1);

	if (n < 0)
		return errno == ENOTSUP ? -ENODATA : -errno;
	text[n] = '\0';
	sp = strchr(text, ' ');
	if (!sp || sp[1] != '/')
		return -EBADMSG;
	snprintf(path, PATH_MAX, "%s", sp + 1);
	return 0;
}

void jr_viewlog_root(struct jr_viewlog *l, const char *mnt)
{
	char path[PATH_MAX];
	struct stat st;
	int r = jr_view_audit_log(mnt, path);

	l->fd = -1;
	l->offset = 0;
	l->mnt = mnt;
	l->unknown[0] = '\0';
	if (r == -ENODATA) {
		snprintf(l->unknown, sizeof(l->unknown),
			 "the view at %s keeps no audit log (mount it with --audit FILE to see "
			 "what it refuses)",
			 mnt);
		return;
	}
	if (r < 0) {
		snprintf(l->unknown, sizeof(l->unknown),
			 "asking the view at %s for its audit log: %s", mnt, strerror(-r));
		return;
	}
	l->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (l->fd < 0 || fstat(l->fd, &st) < 0) {
		snprintf(l->unknown, sizeof(l->unknown), "cannot read the view's audit log %s: %s",
			 path, strerror(errno));
		jr_viewlog_close(l);
		return;
	}
	l->offset = (long)st.st_size;
}

#define ASK_MS 2000

/*
 * Run @ask(@mnt) in a child and return its exit status: a daemon that does
 * not answer (stopped, or its threads blocked) would hold us in getxattr(2)
 * for good. Returns -ETIMEDOUT after ASK_MS (the child is killed and left to
 * init); without a child (fork failed), asks in this process.
 */
static int ask_bounded(int (*ask)(const char *mnt), const char *mnt)
{
	pid_t c = fork();
	int fd, st = 0, r;
	struct pollfd p;

	if (c < 0)
		return ask(mnt);
	if (c == 0)
		_exit(ask(mnt));
	fd = (int)syscall(SYS_pidfd_open, c, 0);
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	if (fd >= 0 && poll(&p, 1, ASK_MS) == 0) {
		kill(c, SIGKILL);
		r = -ETIMEDOUT;
	} else {
		waitpid(c, &st, 0);
		r = WIFEXITED(st) ? WEXITSTATUS(st) : -EINTR;
	}
	if (fd >= 0)
		close(fd);
	return r;
}

/* 1 when the daemon of @mnt did not take the flush request (jr_view_audit_log). */
static int ask_flush(const char *mnt)
{
	char path[PATH_MAX];

	return jr_view_audit_log(mnt, path) < 0;
}

/* 1 for ENOTCONN, 2 for ECONNABORTED from the root of @mnt, else 0. */
static int ask_gone(const char *mnt)
{
	if (getxattr(mnt, JF_RUN_XATTR, NULL, 0) == 0)
		return 0;
	return errno == ENOTCONN ? 1 : errno == ECONNABORTED ? 2 : 0;
}

int jr_view_probe(const char *mnt)
{
	int r = ask_bounded(ask_gone, mnt);

	return r == 1 ? -ENOTCONN : r == 2 ? -ECONNABORTED : r == -ETIMEDOUT ? r : 0;
}

int jr_view_gone(const char *mnt)
{
	int r = jr_view_probe(mnt);

	return r == -ETIMEDOUT ? 0 : r;
}

/* Did the log at @fd stop taking records before @offset? Once full, its
 * writer puts a "capped" record last and appends nothing more
 * (docs/audit.md), so a command that started after it has no records in
 * the file at all, and an empty read would claim "no refusals". */
static bool capped_before(int fd, long offset)
{
	char buf[4096 + 1];
	struct stat st;
	ssize_t n;
	off_t from;
	char *line;

	if (fstat(fd, &st) < 0 || st.st_size < 2)
		return false;
	from = st.st_size > (off_t)sizeof(buf) - 1 ? st.st_size - (off_t)sizeof(buf) + 1 : 0;
	n = pread(fd, buf, sizeof(buf) - 1, from);
	if (n < 2 || buf[n - 1] != '\n')
		return false;
	buf[n - 1] = '\0';
	line = strrchr(buf, '\n');
	line = line ? line + 1 : buf;
	if (line == buf && from > 0)
		return false; /* a last line longer than a capped record */
	return strstr(line, "\"op\":\"capped\"") && from + (line - buf) < offset;
}

int jr_viewlog_read(struct jr_viewlog *l, struct jr_audit_counts *counts, struct jr_refusals *rf)
{
	int r;

	memset(rf, 0, sizeof(*rf));
	if (l->fd < 0) {
		rf->unknown = l->unknown[0] ? l->unknown : "the view keeps no audit log";
		return -ENODATA;
	}
	if (l->mnt && ask_bounded(ask_flush, l->mnt) == -ETIMEDOUT) {
		snprintf(l->unknown, sizeof(l->unknown),
			 "the daemon of the view at %s did not answer within %d s", l->mnt,
			 ASK_MS / 1000);
		rf->unknown = l->unknown;
		return -ETIMEDOUT;
	}
	if (capped_before(l->fd, l->offset)) {
		snprintf(
			l->unknown, sizeof(l->unknown),
			"the view's audit log reached its size cap before this command and records "
			"nothing more: stop the view (jailfs --stop) or run with --fresh");
		rf->unknown = l->unknown;
		return -ENOSPC;
	}
	r = jr_audit_read_ns(l->fd, l->offset, l->pidns, counts, rf);
	if (r < 0) {
		jr_refusals_free(rf);
		snprintf(l->unknown, sizeof(l->unknown), "reading the view's audit log: %s",
			 strerror(-r));
		rf->unknown = l->unknown;
	}
	return r;
}

void jr_viewlog_close(struct jr_viewlog *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}
