/* SPDX-License-Identifier: MIT */
/*
 * The daemon's overlay mode (changes.h). The root fd is an overlayfs mount
 * over SOURCE with DIR/upper as its upper layer, so every check, handler
 * and *at() call works unchanged and the kernel makes the copies, the
 * whiteouts and the opaque directories; SOURCE cannot be written through
 * it. This module writes what the layer's readers need before each
 * mutation (the journal's origins and renames, the checkpoint's
 * pre-images), and serves DIR/control: a review command that finds DIR
 * locked asks the daemon, which runs the library's operation with every
 * name operation held back, mounts a fresh overlay over the changed upper
 * layer (overlayfs does not allow its layers to change under it), makes it
 * the root and has the kernel drop everything it cached.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "apply-rule.h"
#include "backing.h"
#include "changes.h"
#include "cleanup.h"
#include "hardlinks.h"
#include "inode.h"
#include "layer.h"
#include "notify.h"
#include "overlay.h"
#include "zone-name.h"

/* A request's bound: one JSON line, its paths included. */
#define CONTROL_MAX (256 * 1024)

static struct {
	struct jf_layer *layer; /* [const] once set up; calls under mu */
	pthread_mutex_t mu;	/* serializes every call into the layer */
	int lower_fd;		/* [const] SOURCE itself (O_PATH) */
	int dir_fd;		/* [const] DIR (O_PATH) */
	int listen_fd;		/* DIR/control */
	int stop_pipe[2];	/* written by jf_changes_stop() */
	char *source_abs;	/* [const] lowerdir= of every mount */
	/* [const] SOURCE and upper/ on one filesystem: every object of an
	 * overlay mount has the mount's device, first_dev for the first. */
	bool samefs;
	dev_t first_dev;
	/* The devices of every overlay mounted, first_dev first: written
	 * before @n_devs counts them (read without a lock). */
	dev_t devs[JF_ROOT_SWAPS_MAX + 1];
	_Atomic unsigned n_devs;
	pthread_t thread;
	bool running;
} C = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.lower_fd = -1,
	.dir_fd = -1,
	.listen_fd = -1,
	.stop_pipe = {-1, -1},
};

bool jf_changes_on(void)
{
	return C.layer != NULL;
}

int jf_changes_lower_fd(void)
{
	return C.lower_fd;
}

/* DIR/control, bound through /proc/self/fd (sun_path is short) after a
 * stale socket of a dead daemon is removed: DIR/lock says we own DIR. */
static int control_bind(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/control", C.dir_fd);
	if (unlinkat(C.dir_fd, "control", 0) < 0 && errno != ENOENT)
		return -errno;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 8) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	C.listen_fd = fd;
	return 0;
}

/* The view's root shows upper/'s mode and owner (overlayfs takes a merged
 * directory's attributes from its upper layer): make them SOURCE's. */
static int root_like_source(int source_fd)
{
	char proc[64];
	struct stat src, up;
	int ufd = jf_layer_upper_fd(C.layer);

	if (fstat(source_fd, &src) < 0 || fstat(ufd, &up) < 0)
		return -errno;
	jf_proc_fd_path(proc, sizeof(proc), ufd);
	if ((up.st_mode & 07777) != (src.st_mode & 07777) && chmod(proc, src.st_mode & 07777) < 0)
		return -errno;
	if (geteuid() == 0 && (up.st_uid != src.st_uid || up.st_gid != src.st_gid) &&
	    fchownat(ufd, "", src.st_uid, src.st_gid, AT_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

static int same_fs(int source_fd, int overlay_fd)
{
	struct stat src, up, ovl;

	if (fstat(source_fd, &src) < 0 || fstat(jf_layer_upper_fd(C.layer), &up) < 0 ||
	    fstat(overlay_fd, &ovl) < 0)
		return -errno;
	C.samefs = src.st_dev == up.st_dev;
	C.first_dev = ovl.st_dev;
	C.devs[0] = ovl.st_dev;
	atomic_store(&C.n_devs, 1);
	return 0;
}

static int setup_fail(int status, const char *dir, const char *what, int err)
{
	fprintf(stderr, "jailfs: --changes %s: %s: %s\n", dir, what, strerror(err));
	return status;
}

int jf_changes_setup(const char *dir, int *root_fd, const char *source_abs, const char *mnt_abs)
{
	_cleanup_free_ char *err = NULL, *abs = NULL;
	const char *why = NULL;
	int r, fd;

	r = jf_layer_open(dir, *root_fd, mnt_abs, true, &C.layer, &err);
	if (r < 0) {
		if (err)
			fprintf(stderr, "jailfs: %s\n", err);
		else
			setup_fail(0, dir, "cannot open the changes directory", -r);
		return 2;
	}
	/* A view just unmounted lets DIR/lock go only as its daemon exits. */
	for (int i = 0; (r = jf_layer_lock(C.layer)) == -EWOULDBLOCK && i < 100; i++)
		usleep(50 * 1000);
	if (r == -EWOULDBLOCK) {
		fprintf(stderr,
			"jailfs: --changes %s: another jailfs serves this changes directory (its "
			"lock is held)\n",
			dir);
		return 1;
	}
	if (r < 0)
		return setup_fail(1, dir, "lock", -r);
	abs = realpath(dir, NULL);
	C.dir_fd = abs ? open(abs, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (C.dir_fd < 0)
		return setup_fail(1, dir, "cannot open it", errno);
	C.source_abs = strdup(source_abs);
	if (!C.source_abs)
		return setup_fail(1, dir, "out of memory", ENOMEM);
	r = root_like_source(*root_fd);
	if (r < 0)
		return setup_fail(1, dir, "upper/", -r);
	fd = jf_overlay_mount(source_abs, jf_layer_upper_path(C.layer), jf_layer_work_path(C.layer),
			      &why);
	if (fd < 0)
		return setup_fail(1, dir, why ? why : "overlay mount", -fd);
	r = same_fs(*root_fd, fd);
	if (r == 0)
		r = control_bind();
	if (r < 0) {
		close(fd);
		return setup_fail(1, dir, "cannot make its control socket", -r);
	}
	C.lower_fd = *root_fd;
	*root_fd = fd;
	return 0;
}

static bool is_overlay_dev(dev_t dev)
{
	unsigned n = atomic_load(&C.n_devs);

	for (unsigned i = 0; i < n; i++)
		if (C.devs[i] == dev)
			return true;
	return false;
}

bool jf_changes_same_dev(dev_t a, dev_t b)
{
	return a == b || (C.samefs && is_overlay_dev(a) && is_overlay_dev(b));
}

/* ---------- notes before mutations ---------- */

int jf_changes_note(const char *path, bool in_place)
{
	int r;

	if (!C.layer || !path[0])
		return 0;
	jf_ns_assert_held();
	pthread_mutex_lock(&C.mu);
	r = jf_layer_note_origin(C.layer, path);
	if (r == 0)
		r = jf_layer_save(C.layer, path, in_place);
	pthread_mutex_unlock(&C.mu);
	return r;
}

int jf_changes_note_inode(struct jf_inode *inode, bool in_place)
{
	char path[JF_PATH_MAX + 1];
	int r;

	if (!C.layer || inode == &jf_fs.root)
		return 0;
	jf_ns_lock(false);
	r = jf_inode_path(inode, path, sizeof(path));
	if (r >= 0)
		r = jf_changes_note(path, in_place);
	jf_ns_unlock();
	return r;
}

int jf_changes_note_rename(const char *from, const char *to, bool exchange)
{
	int r;

	if (!C.layer)
		return 0;
	r = jf_changes_note(from, false);
	if (r == 0)
		r = jf_changes_note(to, false);
	pthread_mutex_lock(&C.mu);
	if (r == 0)
		r = jf_layer_note_rename(C.layer, from, to);
	if (r == 0 && exchange)
		r = jf_layer_note_rename(C.layer, to, from);
	pthread_mutex_unlock(&C.mu);
	return r;
}

/* ---------- DIR/control ---------- */

/* A fresh overlay over the changed upper layer, made the root. Caller holds
 * jf_fs.ns_lock exclusive. */
static int remount(void)
{
	const char *why = NULL;
	struct stat st;
	int fd, r;

	fd = jf_overlay_mount(C.source_abs, jf_layer_upper_path(C.layer),
			      jf_layer_work_path(C.layer), &why);
	if (fd < 0) {
		fprintf(stderr, "jailfs: changes: cannot mount the overlay again (%s): %s\n",
			why ? why : "mount", strerror(-fd));
		return fd;
	}
	r = fstat(fd, &st) < 0 ? -errno : 0;
	/* The hard-link index keeps its meaning: same inode numbers. */
	if (r == 0)
		r = jf_hardlinks_alias_dev(jf_fs.view.links, st.st_dev, C.first_dev);
	if (r == 0)
		r = jf_root_swap(fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	C.devs[atomic_load(&C.n_devs)] = st.st_dev;
	atomic_fetch_add(&C.n_devs, 1);
	jf_inode_root_replaced(&st);
	return 0;
}

/* What apply may write: a name the policy makes SAFE (jf_layer_safe_fn). */
static bool safe_path(const char *path, void *data)
{
	struct jf_verdict v;
	struct stat st;
	int fd;

	(void)data;
	fd = jf_open_below(C.lower_fd, path, O_PATH, 0);
	if (fd < 0)
		fd = jf_open_beneath(path, O_PATH, 0);
	st.st_mode = 0;
	if (fd >= 0) {
		if (fstat(fd, &st) < 0)
			st.st_mode = 0;
		close(fd);
	}
	jf_classify_path(&jf_fs.view, path, strlen(path), S_ISDIR(st.st_mode), &v);
	return jf_apply_allowed(jf_fs.view.policy, &v, jf_layer_upper_fd(C.layer), path);
}

/* Does request @line (@len bytes) name a command that changes upper/? Only
 * for the refusal below: the library parses and runs it. */
static bool changes_upper(const char *line, size_t len)
{
	json_t *req = json_loadb(line, len, 0, NULL);
	const char *cmd = json_string_value(json_object_get(req, "cmd"));
	bool r = !cmd || strcmp(cmd, "checkpoint") != 0;

	json_decref(req);
	return r;
}

/*
 * One request (@line, NUL-terminated, @len bytes): run by the library with
 * every name operation held back, then a remount when upper/ changed, and
 * the invalidation. The reply line (malloc'd, newline included), or NULL.
 */
static char *ctl_request(const char *line, size_t len)
{
	char *reply = NULL;
	bool changed = false;
	int m = 0;

	if (!C.samefs && changes_upper(line, len))
		/* Objects of a fresh overlay would get other devices, which the
		 * hard-link index could not follow. */
		return strdup("{\"ok\":false,\"error\":\"the changes directory is on another "
			      "filesystem than SOURCE: unmount the view first\"}\n");
	jf_ns_lock(true);
	pthread_mutex_lock(&C.mu);
	if (jf_layer_handle_request(C.layer, line, safe_path, NULL, &reply, &changed) < 0)
		reply = NULL;
	pthread_mutex_unlock(&C.mu);
	if (changed)
		m = remount();
	jf_ns_unlock();
	if (changed && m == 0)
		jf_notify_all();
	if (m < 0) {
		free(reply);
		return strdup("{\"ok\":false,\"error\":\"the changes were made, but the view "
			      "could not mount the changed layer: unmount it and mount it "
			      "again\"}\n");
	}
	return reply;
}

/* Read one line from @fd (bounded, with the socket's timeout): its length. */
static ssize_t read_line(int fd, char *buf, size_t size)
{
	size_t got = 0;

	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n <= 0)
			return n < 0 ? -errno : (ssize_t)got;
		got += (size_t)n;
		if (memchr(buf + got - n, '\n', (size_t)n))
			return (ssize_t)got;
	}
	return -EMSGSIZE;
}

/* Only the daemon's own user (or root) may ask; DIR is 0700 as well. */
static void ctl_serve(int fd)
{
	struct timeval tv = {.tv_sec = 5};
	struct ucred uc;
	socklen_t len = sizeof(uc);
	_cleanup_free_ char *buf = malloc(CONTROL_MAX + 1), *reply = NULL;
	ssize_t n;

	if (!buf || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0 ||
	    (uc.uid != geteuid() && uc.uid != 0))
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = read_line(fd, buf, CONTROL_MAX);
	if (n <= 0)
		return;
	buf[n] = '\0';
	reply = ctl_request(buf, (size_t)n);
	if (reply && write(fd, reply, strlen(reply)) < 0)
		return;
}

static void *ctl_main(void *arg)
{
	struct pollfd p[2] = {{.fd = C.listen_fd, .events = POLLIN},
			      {.fd = C.stop_pipe[0], .events = POLLIN}};

	(void)arg;
	while (poll(p, 2, -1) >= 0 || errno == EINTR) {
		if (p[1].revents)
			break;
		if (p[0].revents & POLLIN) {
			int fd = accept4(C.listen_fd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0) {
				ctl_serve(fd);
				close(fd);
			}
		}
	}
	return NULL;
}

int jf_changes_start(void)
{
	sigset_t all, old;
	int r;

	if (!C.layer)
		return 0;
	if (pipe2(C.stop_pipe, O_CLOEXEC) < 0)
		return -errno;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&C.thread, NULL, ctl_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		fprintf(stderr, "jailfs: changes: cannot serve the control socket: %s\n",
			strerror(-r));
		return r;
	}
	pthread_setname_np(C.thread, "jailfs-changes");
	C.running = true;
	return 0;
}

void jf_changes_stop(void)
{
	if (!C.running)
		return;
	if (write(C.stop_pipe[1], "x", 1) < 0)
		return; /* cannot happen: a pipe with room */
	pthread_join(C.thread, NULL);
	C.running = false;
}

void jf_changes_free(void)
{
	int *fds[] = {&C.lower_fd, &C.listen_fd, &C.stop_pipe[0], &C.stop_pipe[1]};

	if (C.dir_fd >= 0)
		(void)unlinkat(C.dir_fd, "control", 0);
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	if (C.dir_fd >= 0)
		close(C.dir_fd);
	C.dir_fd = -1;
	jf_layer_free(C.layer); /* closes DIR/lock: a review command may take it */
	C.layer = NULL;
	free(C.source_abs);
	C.source_abs = NULL;
}
