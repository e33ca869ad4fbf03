/* SPDX-License-Identifier: MIT */
/*
 * The wall (docs/threat-model.md, invariant 10): the command runs in new mount, PID,
 * IPC and UTS namespaces, a new user namespace when jailrun is not root, and
 * a new network namespace unless --net. Its root is a fresh tmpfs holding:
 *
 *   /usr /bin /sbin /lib*   read-only, nosuid, nodev binds of the host's
 *                           (or the same symlinks when the host has them)
 *   /etc                    tmpfs with jr_etc_entries bound read-only, but
 *                           for those holding a file the command could read
 *                           and everyone could not (etc_private)
 *   /dev                    tmpfs: null zero full random urandom tty bound
 *                           from the host, fd/std* symlinks, /dev/shm tmpfs
 *                           (bounded like /tmp, by shm_size)
 *   /proc                   a fresh proc of the new PID namespace; /proc/sys,
 *                           sysrq-trigger, irq, bus, fs read-only
 *   /tmp                    private tmpfs of at most tmp_size bytes
 *                           (tmpfs_options)
 *   HOME                    the jail home (home.c), read-write, nosuid,nodev,
 *                           at the user's own home path (or /tmp/home)
 *   PROJECT                 the jailfs view at the project's own path, nosuid,nodev
 *   COMMON                  when the project is a linked work tree: the view of
 *                           the main repository's git directory at its own path
 *   other work trees' .git  empty files in the read-only root (placeholders)
 *   toolchains, [run] expose  read-only binds at the same path, their DENIED
 *                           entries covered by an empty read-only tmpfs (a
 *                           directory) or /dev/null (a file)
 *
 * What is mounted below HOME (the project, toolchains, placeholders...)
 * lands in a directory the command writes to and that outlives it: those
 * mounts go through mountfd.c, never a path that could follow a symlink the
 * command left there.
 *
 * The tmpfs root is made read-only at the end. Binds take their source from
 * O_PATH fds opened before anything is mounted, so a project or mountpoint
 * below /tmp stays reachable after the private /tmp covers it.
 *
 * Why binds and not a jailfs view of / for system dirs: see
 * docs/benchmarks.md ("jailrun"). In short, binds cost nothing per file
 * access, the policy has nothing to say about /usr, and the numbers say so.
 *
 * Process layout: jailrun -> pid 1 of the new PID namespace (sets the jail
 * up, then only reaps and forwards SIGTERM/SIGINT/SIGHUP to every process in
 * the namespace) -> the command (no_new_privs, no capabilities, seccomp,
 * rlimits, every fd above 2 closed; without --net also a connect() watch
 * that jailrun only reads, netwatch.h). When pid 1 exits the kernel kills every
 * process left in the namespace: a setsid or double-forked grandchild
 * cannot outlive the command's pid 1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/securebits.h>

#include "cleanup.h"
#include "home.h"
#include "mountfd.h"
#include "netwatch.h"
#include "resolve.h"
#include "result.h"
#include "sandbox.h"
#include "seccomp-filter.h"
#include "sysdirs.h"
#include "text.h"

#define NEWROOT "/tmp" /* mount point of the new root in our private namespace */

struct bind {
	char path[PATH_MAX]; /* jail path */
	int fd;		     /* O_PATH fd of the host source, -1 if absent */
	bool is_dir;
	bool ro;
	bool copy;	     /* small /etc file: copied into the tmpfs root, no mount */
	char link[PATH_MAX]; /* host has a symlink here: recreate it */
};

#define ETC_MAX 32 /* entries of jr_etc_entries */

struct plan {
	struct bind b[64];
	int n;
	/* the home first, then the exposed paths: opened before anything is
	 * mounted, bound after the project */
	struct bind late[JR_HOME_EXPOSE + 1];
	int nlate;
	int status_fd;
	int gitdir_fd; /* O_PATH fd of the git directory's view, or -1 */
};

static void report(int fd, int kind, int code, const char *what)
{
	struct jr_status_msg m = {.kind = kind, .code = code};

	snprintf(m.msg, sizeof(m.msg), "%s", what);
	if (write(fd, &m, sizeof(m)) < 0) {
		/* nothing left to tell anyone */
	}
}

_printf_(2, 3) static _Noreturn void fail(int fd, const char *fmt, ...)
{
	char buf[200];
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ": %s", strerror(e));
	report(fd, 2, e, buf);
	_exit(JR_EXIT_ERROR);
}

/* Add a bind of @host at @jail to @v (@n entries of at most @max). */
static void bind_add(struct bind *v, int *n, int max, const char *jail, const char *host, bool ro)
{
	struct bind *b;
	struct stat st;

	if (*n >= max || lstat(host, &st) < 0)
		return;
	b = &v[(*n)++];
	memset(b, 0, sizeof(*b));
	snprintf(b->path, sizeof(b->path), "%s", jail);
	b->ro = ro;
	b->fd = -1;
	if (S_ISLNK(st.st_mode) && strncmp(jail, "/etc/", 5) != 0) {
		ssize_t len = readlink(host, b->link, sizeof(b->link) - 1);

		b->link[len > 0 ? len : 0] = '\0';
		return;
	}
	b->fd = open(host, O_PATH | O_CLOEXEC);
	if (b->fd < 0 || fstat(b->fd, &st) < 0) {
		(*n)--;
		return;
	}
	b->is_dir = S_ISDIR(st.st_mode);
	/* a copy costs less than a mount and a remount; the tmpfs root is made
	 * read-only at the end, so the copy is as read-only as a bind */
	if (strncmp(jail, "/etc/", 5) == 0 && S_ISREG(st.st_mode) && st.st_size <= (1 << 20)) {
		int fd = open(host, O_RDONLY | O_CLOEXEC | O_NOCTTY);

		if (fd >= 0) {
			close(b->fd);
			b->fd = fd;
			b->copy = true;
		}
	}
}

static void plan_add(struct plan *p, const char *jail, const char *host, bool ro)
{
	bind_add(p->b, &p->n, ARRAY_SIZE(p->b), jail, host, ro);
}

static void mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(buf, mode);
		*s = '/';
	}
	mkdir(buf, mode);
}

static int set_attr(const char *path, uint64_t set, bool recursive)
{
	struct mount_attr a = {.attr_set = set};

	return mount_setattr(AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &a, sizeof(a));
}

/* Mount one planned bind below the new root (cwd is the new root). */
static void do_bind(const struct plan *p, const struct bind *b, uint64_t attrs)
{
	char target[PATH_MAX + 2], src[64];

	snprintf(target, sizeof(target), ".%s", b->path);
	if (b->link[0]) {
		if (symlink(b->link, target) < 0 && errno != EEXIST)
			fail(p->status_fd, "symlink %s", b->path);
		return;
	}
	if (b->copy) {
		char parent[PATH_MAX + 2];
		ssize_t n;
		int fd;

		snprintf(parent, sizeof(parent), "%s", target);
		*strrchr(parent, '/') = '\0';
		mkdir_p(parent, 0755);
		fd = open(target, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			fail(p->status_fd, "create %s", b->path);
		while ((n = copy_file_range(b->fd, NULL, fd, NULL, 1 << 20, 0)) > 0)
			;
		if (n < 0) {
			char buf[8192];

			lseek(b->fd, 0, SEEK_SET);
			while ((n = read(b->fd, buf, sizeof(buf))) > 0)
				if (write(fd, buf, n) != n)
					fail(p->status_fd, "copy %s", b->path);
		}
		close(fd);
		return;
	}
	if (b->is_dir) {
		mkdir_p(target, 0755);
	} else {
		char parent[PATH_MAX + 2];
		int fd;

		snprintf(parent, sizeof(parent), "%s", target);
		*strrchr(parent, '/') = '\0';
		mkdir_p(parent, 0755);
		fd = open(target, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd >= 0)
			close(fd);
	}
	snprintf(src, sizeof(src), "/proc/self/fd/%d", b->fd);
	if (mount(src, target, NULL, MS_BIND | MS_REC, NULL) < 0)
		fail(p->status_fd, "bind %s", b->path);
	if (!strncmp(b->path, "/dev/", 5))
		return; /* device nodes: flags of a bound node change nothing */
	if (set_attr(target, attrs | (b->ro ? MOUNT_ATTR_RDONLY : 0), true) < 0)
		fail(p->status_fd, "remount %s", b->path);
}

/* Bind @b below the jail home (mountfd.c): the mount point found without
 * following a symlink, the attributes set before the mount is attached. */
static void bind_below_home(const struct plan *p, const struct bind *b, uint64_t attrs)
{
	int tree, e;

	if (b->link[0] || b->copy)
		return; /* a symlink would be left in the home for good: not shown */
	tree = jr_mount_clone(b->fd, attrs | (b->ro ? MOUNT_ATTR_RDONLY : 0));
	if (tree < 0) {
		errno = -tree;
		fail(p->status_fd, "clone %s", b->path);
	}
	e = jr_mount_attach(tree, b->path, b->is_dir);
	if (e < 0) {
		errno = -e;
		fail(p->status_fd, "mount point %s (a symlink or another type of file there?)",
		     b->path);
	}
}

/* Cover the DENIED entry @m of an exposed directory: an empty read-only
 * tmpfs over a directory, the jail's /dev/null over a file. */
static void mask(const struct plan *p, const struct jr_mask *m)
{
	struct bind null = {.fd = -1, .ro = true};
	int tree, e;

	if (!m->is_dir) {
		null.fd = open("./dev/null", O_PATH | O_CLOEXEC);
		snprintf(null.path, sizeof(null.path), "%s", m->path);
		if (null.fd < 0)
			fail(p->status_fd, "open /dev/null");
		bind_below_home(p, &null, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
		close(null.fd);
		return;
	}
	tree = jr_mount_empty_dir();
	if (tree < 0) {
		errno = -tree;
		fail(p->status_fd, "tmpfs over %s", m->path);
	}
	e = jr_mount_attach(tree, m->path, true);
	if (e < 0) {
		errno = -e;
		fail(p->status_fd, "mount point %s (a symlink or another type of file there?)",
		     m->path);
	}
}

/* Is a directory of the host bound as the jail home (plan.late[0])? */
static bool home_bound(const struct jr_spawn *s)
{
	return s->view->home && s->view->home->host[0];
}

/* Does the jail path @path lie below the jail home (where the command
 * writes)? */
static bool below_home(const struct jr_spawn *s, const char *path)
{
	return s->view->home && jr_path_under(path, s->view->home->jail) &&
	       strcmp(path, s->view->home->jail) != 0;
}

/* Could a process of our uid and groups, without capabilities, read @st?
 * The owner's bits decide for the owner, the group's for a member. */
static bool readable_by_us(const struct stat *st)
{
	gid_t groups[256];
	int n;

	if (st->st_uid == geteuid())
		return st->st_mode & S_IRUSR;
	if (!(st->st_mode & S_IRGRP))
		return false;
	if (st->st_gid == getegid())
		return true;
	n = getgroups(ARRAY_SIZE(groups), groups);
	if (n < 0)
		return true; /* more groups than we can tell apart: fail closed */
	for (int i = 0; i < n; i++)
		if (groups[i] == st->st_gid)
			return true;
	return false;
}

/* Below the directory @fd (@path on the host, @depth levels under the
 * entry): see etc_private(). Closes @fd. */
static bool etc_private_dir(int fd, char *path, size_t size, int depth)
{
	_cleanup_closedir_ DIR *d = fdopendir(fd);
	size_t len = strlen(path);
	struct dirent *de;

	if (!d) {
		close(fd);
		return false;
	}
	while ((de = readdir(d))) {
		struct stat st;
		int sub;

		/* most of /etc/ssl/certs and all of /etc/alternatives: no stat */
		if (de->d_type == DT_LNK || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path + len, size - len, "/%s", de->d_name);
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    S_ISLNK(st.st_mode))
			continue;
		if (!(st.st_mode & S_IROTH) && readable_by_us(&st))
			return true;
		if (!S_ISDIR(st.st_mode))
			continue;
		if (depth >= 16)
			return true; /* too deep to judge: fail closed */
		/* a directory we cannot open, the command cannot either */
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0 && etc_private_dir(sub, path, size, depth + 1))
			return true;
	}
	path[len] = '\0';
	return false;
}

/*
 * Does the /etc entry at @host (followed if a symlink, as its bind is) hold a
 * file or directory the command could read that not everyone can? The
 * command keeps jailrun's uid and groups without capabilities, so under root
 * it owns root's files: a private key the entry holds would be the
 * command's to read. Symlinks below it are not followed: their targets are
 * judged where the jail shows them. Writes the first such path to @path
 * (@size bytes). Runs as jailrun, before the namespaces (real ids).
 */
static bool etc_private(const char *host, char *path, size_t size)
{
	struct stat st;
	int fd;

	snprintf(path, size, "%s", host);
	if (stat(host, &st) < 0)
		return false; /* absent: nothing is bound */
	if (!(st.st_mode & S_IROTH) && readable_by_us(&st))
		return true;
	if (!S_ISDIR(st.st_mode))
		return false;
	fd = open(host, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 && etc_private_dir(fd, path, size, 0);
}

/* Which /etc entries to leave out (etc_private), with a message each. */
static void etc_check(bool *left_out)
{
	char host[PATH_MAX], what[PATH_MAX];

	for (int i = 0; jr_etc_entries[i] && i < ETC_MAX; i++) {
		snprintf(host, sizeof(host), "/etc/%s", jr_etc_entries[i]);
		left_out[i] = etc_private(host, what, sizeof(what));
		if (left_out[i])
			fprintf(stderr,
				"jailrun: leaving %s out of the jail: %s is readable by uid %u "
				"but not by everyone\n",
				host, what, (unsigned)geteuid());
	}
}

static void plan_build(struct plan *p, const struct jr_spawn *s, const bool *etc_left_out)
{
	const struct jr_home *h = s->view->home;
	char jail[PATH_MAX];

	for (const char *const *d = jf_system_dirs; *d; d++)
		plan_add(p, *d, *d, true);
	for (int i = 0; jr_etc_entries[i] && i < ETC_MAX; i++) {
		if (etc_left_out[i])
			continue;
		snprintf(jail, sizeof(jail), "/etc/%s", jr_etc_entries[i]);
		plan_add(p, jail, jail, true);
	}
	for (const char *const *e = (const char *const[]){"null", "zero", "full", "random",
							  "urandom", "tty", NULL};
	     *e; e++) {
		snprintf(jail, sizeof(jail), "/dev/%s", *e);
		plan_add(p, jail, jail, false);
	}
	if (h && h->host[0]) {
		bind_add(p->late, &p->nlate, ARRAY_SIZE(p->late), h->jail, h->host, false);
		if (p->nlate != 1 || !p->late[0].is_dir)
			fail(p->status_fd, "open the jail home %s", h->host);
	}
	for (const char *const *x = s->view->expose; x && *x; x++)
		bind_add(p->late, &p->nlate, ARRAY_SIZE(p->late), *x, *x, true);
}

/*
 * Options of a writable tmpfs of the jail (/tmp, /dev/shm) holding at most
 * @bytes (0: the default, UINT64_MAX: no bound). Without a size a tmpfs may
 * grow to half of RAM, each of them, and its pages are only reclaimed by
 * swapping: a command filling /tmp would take the host's memory with it.
 */
#define JR_TMPFS_DEFAULT_MAX (1ULL << 30)

static void tmpfs_options(char *buf, size_t size, uint64_t bytes)
{
	struct sysinfo si;

	if (bytes == 0) {
		bytes = JR_TMPFS_DEFAULT_MAX;
		if (sysinfo(&si) == 0 && (uint64_t)si.totalram * si.mem_unit / 4 < bytes)
			bytes = (uint64_t)si.totalram * si.mem_unit / 4;
	}
	if (bytes == UINT64_MAX)
		snprintf(buf, size, "mode=1777");
	else
		snprintf(buf, size, "mode=1777,size=%llu", (unsigned long long)bytes);
}

static void mount_dev(const struct plan *p, const struct jr_spawn *s)
{
	char opts[64];

	if (mount("tmpfs", "./dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m") < 0)
		fail(p->status_fd, "tmpfs /dev");
	for (int i = 0; i < p->n; i++)
		if (strncmp(p->b[i].path, "/dev/", 5) == 0)
			do_bind(p, &p->b[i], MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	symlink("/proc/self/fd", "./dev/fd");
	symlink("/proc/self/fd/0", "./dev/stdin");
	symlink("/proc/self/fd/1", "./dev/stdout");
	symlink("/proc/self/fd/2", "./dev/stderr");
	mkdir("./dev/shm", 01777);
	tmpfs_options(opts, sizeof(opts), s->shm_bytes);
	if (mount("tmpfs", "./dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		fail(p->status_fd, "tmpfs /dev/shm");
	mkdir("./dev/pts", 0755);
}

static void mount_proc(const struct plan *p)
{
	static const char *const ro[] = {"sys", "sysrq-trigger", "irq", "bus", "fs", NULL};
	char path[64];

	mkdir("./proc", 0555);
	if (mount("proc", "./proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		fail(p->status_fd, "mount /proc");
	/* uid 0 without capabilities could still write root-owned sysctls */
	for (const char *const *r = ro; *r; r++) {
		snprintf(path, sizeof(path), "./proc/%s", *r);
		if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) == 0)
			set_attr(path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
				 true);
	}
}

/* Empty files at @paths (best effort: a path the root cannot hold is left
 * out; git then only takes that work tree for a deleted one). */
static void make_placeholders(const struct jr_spawn *s)
{
	char target[PATH_MAX + 2];

	for (char *const *paths = s->view->placeholders; paths && *paths; paths++) {
		char *slash;
		int fd;

		if (below_home(s, *paths)) {
			/* the file stays in the home: made like a mount point */
			fd = jr_mountpoint_open(*paths, false);
			if (fd >= 0)
				close(fd);
			continue;
		}
		snprintf(target, sizeof(target), ".%s", *paths);
		slash = strrchr(target, '/');
		*slash = '\0';
		mkdir_p(target, 0755);
		*slash = '/';
		fd = open(target, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444);
		if (fd >= 0)
			close(fd);
	}
}

static void build_root(struct plan *p, const struct jr_spawn *s, int view_fd)
{
	const uint64_t sys_attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	char opts[64];
	struct bind proj = {.fd = view_fd, .is_dir = true, .ro = false};

	/* nothing we do below may propagate back to the host */
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		fail(p->status_fd, "make / slave");
	if (mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m") < 0)
		fail(p->status_fd, "tmpfs root");
	if (chdir(NEWROOT) < 0)
		fail(p->status_fd, "chdir new root");
	for (int i = 0; i < p->n; i++)
		if (strncmp(p->b[i].path, "/dev/", 5) != 0 &&
		    strncmp(p->b[i].path, "/etc/", 5) != 0)
			do_bind(p, &p->b[i], sys_attrs);
	mkdir("./etc", 0755);
	for (int i = 0; i < p->n; i++)
		if (strncmp(p->b[i].path, "/etc/", 5) == 0)
			do_bind(p, &p->b[i], sys_attrs);
	symlink("/proc/self/mounts", "./etc/mtab");
	mkdir("./dev", 0755);
	mount_dev(p, s);
	mount_proc(p);
	mkdir("./tmp", 01777);
	tmpfs_options(opts, sizeof(opts), s->tmp_bytes);
	if (mount("tmpfs", "./tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		fail(p->status_fd, "tmpfs /tmp");
	mkdir("./tmp/home", 0700);
	if (home_bound(s))
		do_bind(p, &p->late[0], sys_attrs);
	snprintf(proj.path, sizeof(proj.path), "%s", s->view->project);
	(below_home(s, proj.path) ? bind_below_home : do_bind)(p, &proj, sys_attrs);
	if (p->gitdir_fd >= 0) {
		struct bind gd = {.fd = p->gitdir_fd, .is_dir = true, .ro = false};

		snprintf(gd.path, sizeof(gd.path), "%s", s->view->gitdir->project);
		(below_home(s, gd.path) ? bind_below_home : do_bind)(p, &gd, sys_attrs);
	}
	make_placeholders(s);
	for (int i = home_bound(s) ? 1 : 0; i < p->nlate; i++)
		(below_home(s, p->late[i].path) ? bind_below_home : do_bind)(p, &p->late[i],
									     sys_attrs);
	for (int i = 0; s->view->home && i < s->view->home->nmasks; i++)
		mask(p, &s->view->home->masks[i]);
	/* pivot_root(".", "."): the old root ends up on top, detach it */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		fail(p->status_fd, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		fail(p->status_fd, "detach old root");
	if (chdir("/") < 0)
		fail(p->status_fd, "chdir /");
	if (mount(NULL, "/", NULL, MS_PRIVATE | MS_REC, NULL) < 0)
		fail(p->status_fd, "make / private");
	if (set_attr("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false) < 0)
		fail(p->status_fd, "read-only root");
}

static void write_file(int status_fd, const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		fail(status_fd, "write %s", path);
	close(fd);
}

static void setup_userns(int status_fd, uid_t uid, gid_t gid)
{
	char map[64];

	write_file(status_fd, "/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	write_file(status_fd, "/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	write_file(status_fd, "/proc/self/gid_map", map);
}

static void loopback_up(int status_fd)
{
	struct ifreq ifr = {0};
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		fail(status_fd, "lo");
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		fail(status_fd, "bring up lo");
}

/* ---- the command's own restrictions ---- */

static void drop_caps(int status_fd)
{
	cap_t none;

	for (int c = 0; c <= CAP_LAST_CAP; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			fail(status_fd, "drop capability %d from the bounding set", c);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	/* uid 0 must not regain capabilities at execve (capabilities(7)) */
	if (prctl(PR_SET_SECUREBITS,
		  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			  SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
			  SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		  0, 0, 0) < 0)
		fail(status_fd, "securebits");
	none = cap_init();
	if (!none || cap_set_proc(none) < 0)
		fail(status_fd, "drop capabilities");
	cap_free(none);
}

static void load_seccomp(int status_fd)
{
	if (jr_seccomp_load() < 0)
		fail(status_fd, "seccomp");
}

static void set_limit(int status_fd, int res, uint64_t v, const char *name)
{
	struct rlimit rl = {.rlim_cur = v ? v : RLIM_INFINITY, .rlim_max = v ? v : RLIM_INFINITY};
	struct rlimit old;

	if (!v)
		return;
	/* never raise a hard limit we were given (that would fail anyway) */
	if (getrlimit(res, &old) == 0 && old.rlim_max != RLIM_INFINITY && old.rlim_max < v)
		rl.rlim_cur = rl.rlim_max = old.rlim_max;
	if (setrlimit(res, &rl) < 0)
		fail(status_fd, "setrlimit %s", name);
}

static _Noreturn void exec_command(const struct jr_spawn *s, int status_fd)
{
	sigset_t none;

	set_limit(status_fd, RLIMIT_CPU, s->limits.cpu_s, "cpu");
	set_limit(status_fd, RLIMIT_AS, s->limits.as_bytes, "as");
	set_limit(status_fd, RLIMIT_NPROC, s->limits.nproc, "nproc");
	set_limit(status_fd, RLIMIT_FSIZE, s->limits.fsize_bytes, "fsize");
	if (chdir(s->cwd) < 0)
		fail(status_fd, "chdir %s", s->cwd);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail(status_fd, "no_new_privs");
	drop_caps(status_fd);
	/* before our filter, which refuses what the watch needs */
	if (s->net_watch_fd >= 0 && jr_netwatch_install(s->net_watch_fd) < 0) {
		/* best effort: the command runs, only the early note is lost */
	}
	load_seccomp(status_fd);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* no fd but 0, 1, 2 reaches the command (runc CVE-2024-21626) */
	close_range(3, ~0U, 0);
	environ = (char **)s->envp;
	if (s->exec_path)
		execve(s->exec_path, s->argv, s->envp);
	execvp(s->argv[0], s->argv);
	int e = errno;

	fputs("jailrun: ", stderr);
	jf_fput_escaped(stderr, s->argv[0], strlen(s->argv[0]));
	fprintf(stderr, ": %s\n", strerror(e));
	errno = e;
	_exit(errno == ENOENT ? 127 : 126);
}

static volatile sig_atomic_t forward_sig;

static void on_forward(int sig)
{
	forward_sig = sig;
	kill(-1, sig); /* every process of the namespace but pid 1 itself */
}

/*
 * A terminal on stdin becomes a read-only open file of its own: the caller's
 * is often opened for reading and writing and shared with its stdout, so
 * the command could write escape sequences to the terminal through fd 0,
 * past jailrun's output filter, and a flag it sets on it (O_NONBLOCK) would
 * be the caller's. termios ioctls work on a read-only fd. Best effort: the
 * inherited fd stays when the reopen fails.
 */
static void stdin_read_only(void)
{
	int fd;

	if (!isatty(0))
		return;
	fd = open("/proc/self/fd/0", O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	dup2(fd, 0);
	close(fd);
}

/* pid 1 of the jail: set up, start the command, reap, report, exit. */
/* Close pid 1's copies of the plan's fds once the root is built. */
static void close_plan_fds(const struct plan *p, int view_fd)
{
	for (int i = 0; i < p->n; i++)
		if (p->b[i].fd >= 0)
			close(p->b[i].fd);
	for (int i = 0; i < p->nlate; i++)
		if (p->late[i].fd >= 0)
			close(p->late[i].fd);
	close(view_fd);
	if (p->gitdir_fd >= 0)
		close(p->gitdir_fd);
}

/* The command's stdin, stdout and stderr, and pid 1's signals: SIGTERM,
 * SIGINT and SIGHUP passed on to the command. Returns an fd of /dev/null
 * (O_CLOEXEC) or -1. */
static int jail_stdio(const struct jr_spawn *s, int out_fd, int err_fd)
{
	struct sigaction sa = {.sa_handler = on_forward};
	sigset_t none;
	int null;

	setsid();
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (s->stdin_null && null >= 0)
		dup2(null, 0);
	else
		stdin_read_only();
	if (out_fd >= 0)
		dup2(out_fd, 1);
	if (err_fd >= 0)
		dup2(err_fd, 2);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	return null;
}

/* Reap children until the command @cmd ends, report how, and exit. */
static _Noreturn void wait_command(const struct plan *p, pid_t cmd)
{
	for (;;) {
		int status;
		pid_t r = waitpid(-1, &status, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			_exit(JR_EXIT_ERROR);
		if (r != cmd)
			continue;
		struct jr_status_msg m = {.kind = 1};

		if (WIFEXITED(status))
			m.code = WEXITSTATUS(status);
		else
			m.signo = WTERMSIG(status);
		if (write(p->status_fd, &m, sizeof(m)) < 0) {
			/* the parent is gone; nothing to report to */
		}
		_exit(0); /* the kernel now kills whatever is left in the namespace */
	}
}

static _Noreturn void jail_init(const struct jr_spawn *s, struct plan *p, int view_fd, int out_fd,
				int err_fd)
{
	pid_t cmd;
	int null;

	build_root(p, s, view_fd);
	close_plan_fds(p, view_fd);
	sethostname("jailrun", 7);
	if (!s->net)
		loopback_up(p->status_fd);
	null = jail_stdio(s, out_fd, err_fd);

	cmd = fork();
	if (cmd < 0)
		fail(p->status_fd, "fork");
	if (cmd == 0)
		exec_command(s, p->status_fd);
	if (s->net_watch_fd >= 0)
		close(s->net_watch_fd);
	/* our copies of the output pipes must not keep them open */
	if (null >= 0) {
		dup2(null, 1);
		dup2(null, 2);
	}
	wait_command(p, cmd);
}

/* jailrun's ids, mapped in the jail's new user namespace. */
struct jail_ids {
	uid_t uid;
	gid_t gid;
};

/* Pid 1 of the new namespaces: @status_fd is its end of the status pipe,
 * @ids NULL without a new user namespace. Builds the plan and runs
 * jail_init(). */
static _Noreturn void jail_pid1(const struct jr_spawn *s, int status_fd, const struct jail_ids *ids,
				const bool *etc_left_out, int out_fd, int err_fd)
{
	static struct plan plan; /* large: keep it off the stack */
	int view_fd;

	/* O_PATH sources must be opened in the new mount namespace: a
	 * bind from a mount of another namespace fails with EINVAL */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* pid 1 is a copy of jailrun: its memory holds jailrun's unscrubbed
	 * environment. Not dumpable: /proc/1/environ, mem, maps are closed
	 * to the command (which also lacks pid 1's capabilities). */
	if (ids)
		setup_userns(status_fd, ids->uid, ids->gid); /* needs a dumpable /proc/self */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	memset(&plan, 0, sizeof(plan));
	plan.status_fd = status_fd;
	view_fd = open(s->view->host, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (view_fd < 0)
		fail(status_fd, "open the view %s", s->view->host);
	plan.gitdir_fd = -1;
	if (s->view->gitdir) {
		plan.gitdir_fd = open(s->view->gitdir->host, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (plan.gitdir_fd < 0)
			fail(status_fd, "open the view %s", s->view->gitdir->host);
	}
	plan_build(&plan, s, etc_left_out);
	jail_init(s, &plan, view_fd, out_fd, err_fd);
}

int jr_sandbox_spawn(const struct jr_spawn *s, int out_fd, int err_fd, pid_t *pid, int *pidfd,
		     int *status_fd)
{
	bool etc_left_out[ETC_MAX] = {0};
	int sp[2], pfd = -1;
	unsigned long flags =
		CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_PIDFD | SIGCHLD;
	bool userns = geteuid() != 0;
	struct jail_ids ids = {.uid = geteuid(), .gid = getegid()};
	pid_t child;
	int r;

	if (!s->net)
		flags |= CLONE_NEWNET;
	if (userns)
		flags |= CLONE_NEWUSER;
	r = jr_seccomp_build();
	if (r < 0)
		return r;
	etc_check(etc_left_out);
	if (pipe2(sp, O_CLOEXEC) < 0)
		return -errno;
	child = (pid_t)syscall(SYS_clone, flags, NULL, &pfd, NULL, NULL);
	if (child == 0) {
		close(sp[0]);
		jail_pid1(s, sp[1], userns ? &ids : NULL, etc_left_out, out_fd, err_fd);
	}
	int e = errno;
	close(sp[1]);
	if (child < 0) {
		close(sp[0]);
		return -e;
	}
	*pid = child;
	*pidfd = pfd;
	*status_fd = sp[0];
	return 0;
}
