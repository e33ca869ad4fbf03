/* SPDX-License-Identifier: MIT */
/*
 * Live views, for the user who wonders what is mounted: jailfs --list reads
 * the fuse.jailfs lines of /proc/self/mountinfo and asks each view's root
 * for JF_INFO_XATTR, which its daemon answers itself (a backing attribute of
 * that name is never seen, and none can be set); jailfs --stop unmounts one
 * (umount2 as root, fusermount3 -u otherwise) and waits for its daemon to
 * exit. An ordinary user sees and stops only the views they mounted (the
 * mount's user_id=); root sees all. A request to a hung daemon would block
 * forever, so it is made in a child that is killed after a second.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "cleanup.h"
#include "fsstate.h"
#include "options.h"
#include "passthrough.h"
#include "status.h"

#define ASK_TIMEOUT_MS 1000
#define STOP_WAIT_MS 10000

int jf_status_info(char *buf, size_t size)
{
	const struct jf_options *o = jf_fs.opts;
	int n;

	n = snprintf(buf, size, "pid %ld\nsource %s\npolicy %s\nmode %s%s%s%s\naudit %s%s%s\n",
		     (long)getpid(), jf_fs.view.source_abs,
		     o->policy_abs ? o->policy_abs
		     : o->policy   ? o->policy
				   : "built-in",
		     o->read_only ? "read-only" : "read-write", jf_fs.no_open ? ",fast_open" : "",
		     jf_pt_active() ? ",passthrough" : "", o->idle_exit_ms ? ",persistent" : "",
		     o->audit.path ? jf_audit_level_name(o->audit.level) : "none",
		     o->audit.path ? " " : "", o->audit.path ? o->audit.path : "");
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : n;
}

/* Undo mountinfo's octal escapes in place (space, tab, newline and
 * backslash are written as \ooo, proc(5)). */
static void unescape_octal(char *s)
{
	char *o = s;

	for (; *s; s++, o++) {
		if (s[0] == '\\' && strspn(s + 1, "01234567") >= 3) {
			*o = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o = *s;
		}
	}
	*o = '\0';
}

/* Split one mountinfo @line ("ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS
 * [TAGS...] - FSTYPE SOURCE SUPEROPTS", proc(5)) into @m if it is a
 * fuse.jailfs mount. */
static bool parse_line(char *line, struct jf_mount *m)
{
	char *sep = strstr(line, " - "), *mp = line, *src, *super, *uid;

	for (int field = 1; field < 5 && mp; field++)
		mp = strchr(mp, ' ') ? strchr(mp, ' ') + 1 : NULL;
	if (!sep || !mp || mp > sep || strncmp(sep + 3, "fuse.jailfs ", 12) != 0)
		return false;
	mp[strcspn(mp, " ")] = '\0';
	src = sep + 3 + 12;
	super = strchr(src, ' ');
	if (!super)
		return false;
	*super++ = '\0';
	super[strcspn(super, "\n")] = '\0';
	uid = strstr(super, "user_id=");
	unescape_octal(mp);
	unescape_octal(src);
	m->mountpoint = mp;
	m->source = src;
	m->uid = uid ? (uid_t)strtoul(uid + 8, NULL, 10) : 0;
	return true;
}

int jf_mounts_foreach(int (*fn)(const struct jf_mount *m, void *arg), void *arg)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	struct jf_mount m;
	int r;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0)
		if (parse_line(line, &m) && (r = fn(&m, arg)) != 0)
			return r;
	return 0;
}

/* getxattr(@mnt, JF_INFO_XATTR) in a child killed after ASK_TIMEOUT_MS, so a
 * hung daemon cannot hang us. Returns the length read into @buf (NUL
 * terminated) or -errno (-ETIMEDOUT, -ENOTCONN for a dead daemon...). */
static int ask_info(const char *mnt, char *buf, size_t size)
{
	int p[2], status;
	ssize_t n = 0, got;
	struct pollfd pfd;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		ssize_t k = getxattr(mnt, JF_INFO_XATTR, buf, size - 1);
		int e = k < 0 ? errno : 0;

		if (k < 0 && write(p[1], &e, sizeof(e)) < 0)
			_exit(1);
		if (k >= 0 && write(p[1], buf, (size_t)k) < 0)
			_exit(1);
		_exit(k < 0 ? 2 : 0);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -errno;
	}
	pfd = (struct pollfd){.fd = p[0], .events = POLLIN};
	while (n < (ssize_t)size - 1 && poll(&pfd, 1, ASK_TIMEOUT_MS) == 1 &&
	       (got = read(p[0], buf + n, size - 1 - (size_t)n)) > 0)
		n += got;
	close(p[0]);
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -ETIMEDOUT;
	if (WEXITSTATUS(status) == 2) {
		int e = EIO;

		memcpy(&e, buf, n >= (ssize_t)sizeof(e) ? sizeof(e) : 0);
		return -e;
	}
	buf[n] = '\0';
	return WEXITSTATUS(status) == 0 ? (int)n : -EIO;
}

/* The value of "KEY value" line @key of an info text, copied into @out. */
static const char *info_field(const char *info, const char *key, char *out, size_t size)
{
	size_t k = strlen(key);

	for (const char *l = info; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, k) == 0 && l[k] == ' ') {
			snprintf(out, size, "%.*s", (int)strcspn(l + k + 1, "\n"), l + k + 1);
			return out;
		}
	snprintf(out, size, "-");
	return out;
}

/* May the caller see and stop mount @m? Root: any; others: their own. */
static bool mine(const struct jf_mount *m)
{
	return getuid() == 0 || m->uid == getuid();
}

static int list_one(const struct jf_mount *m, void *arg)
{
	char info[PATH_MAX * 3], pid[32], mode[64], policy[PATH_MAX], audit[PATH_MAX + 16];
	int r;

	if (!mine(m))
		return 0;
	r = ask_info(m->mountpoint, info, sizeof(info));
	if (r < 0) {
		printf("%s\t%s\t-\t%s\t-\t-\n", m->mountpoint, m->source,
		       r == -ENOTCONN  ? "stale (daemon gone)"
		       : r == -ENODATA ? "unknown (an older jailfs)"
				       : strerror(-r));
	} else {
		printf("%s\t%s\t%s\t%s\t%s\t%s\n", m->mountpoint, m->source,
		       info_field(info, "pid", pid, sizeof(pid)),
		       info_field(info, "mode", mode, sizeof(mode)),
		       info_field(info, "policy", policy, sizeof(policy)),
		       info_field(info, "audit", audit, sizeof(audit)));
	}
	++*(int *)arg;
	return 0;
}

int jf_cmd_list(int argc, char **argv)
{
	int n = 0, r;

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--list") != 0)) {
		bool help = argc == 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"));

		fprintf(help ? stdout : stderr,
			"Usage: jailfs --list\n"
			"List the live jailfs views (yours; root: all), one a line, "
			"tab-separated:\n"
			"MOUNTPOINT SOURCE PID MODE POLICY AUDIT. A view whose daemon is gone\n"
			"shows as stale. Stop one with jailfs --stop MOUNTPOINT.\n");
		return help ? 0 : 2;
	}
	printf("MOUNTPOINT\tSOURCE\tPID\tMODE\tPOLICY\tAUDIT\n");
	r = jf_mounts_foreach(list_one, &n);
	if (r < 0) {
		fprintf(stderr, "jailfs: /proc/self/mountinfo: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}

struct find {
	const char *mnt;
	uid_t uid;
	bool found;
};

static int find_one(const struct jf_mount *m, void *arg)
{
	struct find *f = arg;

	if (strcmp(m->mountpoint, f->mnt) != 0)
		return 0;
	f->found = true;
	f->uid = m->uid;
	return 1;
}

/* @path made absolute without asking the mount itself (a dead daemon answers
 * ENOTCONN): realpath of its directory, then its last name. Caller frees. */
static char *mount_path(const char *path)
{
	_cleanup_free_ char *copy = strdup(path), *dir = NULL;
	char *slash, *out = NULL;
	const char *base;

	if (!copy)
		return NULL;
	while (strlen(copy) > 1 && copy[strlen(copy) - 1] == '/')
		copy[strlen(copy) - 1] = '\0';
	slash = strrchr(copy, '/');
	if (slash == copy) {
		dir = strdup("");
		base = copy + 1;
	} else if (slash) {
		*slash = '\0';
		dir = realpath(copy, NULL);
		base = slash + 1;
	} else {
		dir = realpath(".", NULL);
		base = copy;
	}
	if (dir && asprintf(&out, "%s/%s", strcmp(dir, "/") ? dir : "", base) < 0)
		out = NULL;
	return out;
}

/* Unmount @mnt as the daemon's owner would: umount2 as root, else the
 * set-uid fusermount3 -u. 0 or -errno (-EBUSY: in use). */
static int unmount(const char *mnt)
{
	int status;
	pid_t pid;

	if (geteuid() == 0)
		return umount2(mnt, 0) < 0 ? -errno : 0;
	pid = fork();
	if (pid == 0) {
		execlp("fusermount3", "fusermount3", "-u", "--", mnt, (char *)NULL);
		fprintf(stderr, "jailfs: cannot run fusermount3: %s\n", strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EBUSY;
}

/* Is @pid (from the view's own answer) a jailfs daemon still running? A
 * zombie is not (a container's init may be slow to reap, or never). */
static bool daemon_alive(long pid)
{
	char path[64], stat[64] = "";
	_cleanup_fclose_ FILE *f = NULL;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "re");
	/* "PID (jailfs) S ...": comm is at most 15 bytes, no ')' in "jailfs" */
	return f && fgets(stat, sizeof(stat), f) && strstr(stat, " (jailfs) ") &&
	       !strstr(stat, " (jailfs) Z") && !strstr(stat, " (jailfs) X");
}

/* Wait up to STOP_WAIT_MS for daemon @pid to exit. True once it has. */
static bool wait_exit(long pid)
{
	for (int ms = 0; daemon_alive(pid); ms += 20) {
		if (ms >= STOP_WAIT_MS)
			return false;
		nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
	}
	return true;
}

static int stop_usage(bool help)
{
	fprintf(help ? stdout : stderr,
		"Usage: jailfs --stop MOUNTPOINT\n"
		"Unmount the jailfs view on MOUNTPOINT (yours; root: any) and wait until\n"
		"its daemon has exited. A view in use is not forced: the processes that\n"
		"use it are named by fuser -vm MOUNTPOINT.\n");
	return help ? 0 : 2;
}

int jf_cmd_stop(int argc, char **argv)
{
	char info[PATH_MAX * 3], pidtext[32];
	_cleanup_free_ char *mnt = NULL;
	struct find f = {0};
	long pid = 0;
	int r;

	if (argc == 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")))
		return stop_usage(true);
	if (argc != 3 || strcmp(argv[1], "--stop") != 0)
		return stop_usage(false);
	mnt = mount_path(argv[2]);
	f.mnt = mnt;
	if (!mnt || jf_mounts_foreach(find_one, &f) < 0 || !f.found) {
		fprintf(stderr, "jailfs: %s is not a jailfs mount (jailfs --list shows them)\n",
			argv[2]);
		return 1;
	}
	if (getuid() != 0 && f.uid != getuid()) {
		fprintf(stderr, "jailfs: %s was mounted by uid %ld: only they or root stop it\n",
			mnt, (long)f.uid);
		return 1;
	}
	if (ask_info(mnt, info, sizeof(info)) >= 0)
		pid = strtol(info_field(info, "pid", pidtext, sizeof(pidtext)), NULL, 10);
	r = unmount(mnt);
	if (r == -EBUSY) {
		fprintf(stderr, "jailfs: %s is in use (fuser -vm %s names who uses it)\n", mnt,
			mnt);
		return 1;
	}
	if (r < 0) {
		fprintf(stderr, "jailfs: cannot unmount %s: %s\n", mnt, strerror(-r));
		return 1;
	}
	if (pid > 0 && !wait_exit(pid)) {
		fprintf(stderr, "jailfs: %s unmounted, but its daemon (pid %ld) still runs\n", mnt,
			pid);
		return 1;
	}
	if (pid > 0)
		printf("jailfs: stopped %s (daemon pid %ld)\n", mnt, pid);
	else
		printf("jailfs: unmounted %s (its daemon was gone)\n", mnt);
	return 0;
}
