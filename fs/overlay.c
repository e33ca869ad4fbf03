/* SPDX-License-Identifier: MIT */
/*
 * The overlayfs mount of the overlay mode (overlay.h). The kernel does the
 * copy-up (a clone where the filesystem can, a copy otherwise), the
 * whiteouts and the opaque directories; "userxattr" keeps them in user.*
 * attributes, so the mount works in a user namespace and the review
 * commands read DIR/upper without privilege. The mount is detached: it is
 * reached only through its fd, never by a path.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "overlay.h"

/* The mount in the current namespaces: the fd, or -errno and *@why. */
static int mount_here(const char *lower, const char *upper, const char *work, const char **why)
{
	_cleanup_close_ int fs = fsopen("overlay", FSOPEN_CLOEXEC);
	int fd;

	*why = "fsopen(overlay)";
	if (fs < 0)
		return -errno;
	*why = "overlay lowerdir (SOURCE)";
	if (fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", lower, 0) < 0)
		return -errno;
	*why = "overlay upperdir";
	if (fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", upper, 0) < 0)
		return -errno;
	*why = "overlay workdir";
	if (fsconfig(fs, FSCONFIG_SET_STRING, "workdir", work, 0) < 0)
		return -errno;
	*why = "overlay userxattr";
	if (fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0)
		return -errno;
	*why = "overlay mount (upper/ on a filesystem without user xattrs, or in use?)";
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -errno;
	*why = "fsmount(overlay)";
	fd = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	return fd < 0 ? -errno : fd;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

static int send_fd(int sock, int fd, int err)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;

	if (fd >= 0) {
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* The child's error (0, or -errno with the index of its step in @step),
 * and the fd it sent. */
static int recv_fd(int sock, int *err)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = err, .iov_len = sizeof(*err)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm;
	int fd = -1;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(*err))
		return -EIO;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	return fd;
}

/* The steps of the child, for *why: its error is -(errno * 8 + step). */
static const char *const child_steps[] = {
	"unshare(CLONE_NEWUSER | CLONE_NEWNS) (user namespaces disabled?)",
	"/proc/self/uid_map",
	"/proc/self/setgroups",
	"/proc/self/gid_map",
	"the overlay mount in a user namespace",
};

/* In the child: only system calls (the parent may have threads). */
static _Noreturn void child(int sock, const char *uid_map, const char *gid_map, const char *lower,
			    const char *upper, const char *work)
{
	const char *why;
	int step = 0, r, fd = -1;

	r = unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 ? -errno : 0;
	if (r == 0 && (step = 1, r = write_file("/proc/self/uid_map", uid_map)) == 0 &&
	    (step = 2, r = write_file("/proc/self/setgroups", "deny")) == 0 &&
	    (step = 3, r = write_file("/proc/self/gid_map", gid_map)) == 0) {
		step = 4;
		fd = mount_here(lower, upper, work, &why);
		r = fd < 0 ? fd : 0;
	}
	send_fd(sock, fd, r < 0 ? r * 8 - step : 0);
	_exit(0);
}

static int mount_in_userns(const char *lower, const char *upper, const char *work, const char **why)
{
	char uid_map[64], gid_map[64];
	int sv[2], err = 0, fd, status;
	pid_t pid;

	snprintf(uid_map, sizeof(uid_map), "%u %u 1", (unsigned)geteuid(), (unsigned)geteuid());
	snprintf(gid_map, sizeof(gid_map), "%u %u 1", (unsigned)getegid(), (unsigned)getegid());
	*why = "socketpair";
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	*why = "fork";
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (pid == 0) {
		close(sv[0]);
		child(sv[1], uid_map, gid_map, lower, upper, work);
	}
	close(sv[1]);
	fd = recv_fd(sv[0], &err);
	close(sv[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (fd >= 0 && err == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	if (err == 0) {
		*why = "the overlay mount in a user namespace (child died)";
		return -EIO;
	}
	*why = child_steps[(-err) % 8];
	return -((-err) / 8);
}

int jf_overlay_mount(const char *lower, const char *upper, const char *work, const char **why)
{
	const char *w = NULL;
	int fd = mount_here(lower, upper, work, &w);

	if (fd == -EPERM)
		fd = mount_in_userns(lower, upper, work, &w);
	if (fd < 0 && why)
		*why = w;
	return fd;
}
