/* SPDX-License-Identifier: MIT */
/*
 * Mounts attached through file descriptors, for what the jail mounts below
 * its home (sandbox.c): that directory is the command's to write and
 * outlives it, so a symlink left there by an earlier command (or placed by
 * another command of the same project meanwhile) must not send a mount, or
 * a mkdir run by the jail's pid 1, anywhere else. The mount point is made
 * and opened component by component without following a symlink, and the
 * mount, cloned and given its attributes while detached, is attached to
 * that fd (open_tree, mount_setattr, move_mount; mount(2) of a path would
 * resolve it again). Sources: open_tree(2), move_mount(2), fsopen(2).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mountfd.h"

int jr_mountpoint_open(const char *path, bool is_dir)
{
	char buf[PATH_MAX];
	int fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf)) {
		if (fd >= 0)
			close(fd);
		return -ENAMETOOLONG;
	}
	for (char *s = buf, *next; fd >= 0 && *s; s = next) {
		bool last;
		int sub, e;

		next = strchrnul(s, '/');
		last = !*next;
		if (*next)
			*next++ = '\0';
		if (!*s)
			continue;
		if (last && !is_dir) {
			sub = openat(fd, s, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0 && errno == ENOENT) {
				sub = openat(fd, s,
					     O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC |
						     O_NOCTTY,
					     0644);
				if (sub >= 0)
					close(sub);
				sub = openat(fd, s, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			}
			if (sub >= 0 &&
			    (fstat(sub, &st) < 0 || S_ISLNK(st.st_mode) || S_ISDIR(st.st_mode))) {
				close(sub);
				errno = ELOOP;
				sub = -1;
			}
		} else {
			sub = openat(fd, s, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0 && errno == ENOENT &&
			    (mkdirat(fd, s, 0755) == 0 || errno == EEXIST))
				sub = openat(fd, s, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		e = errno;
		close(fd);
		fd = sub;
		errno = e;
	}
	return fd >= 0 ? fd : -errno;
}

int jr_mount_clone(int src_fd, uint64_t attrs)
{
	struct mount_attr a = {.attr_set = attrs};
	int tree = open_tree(src_fd, "",
			     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
	int e;

	if (tree < 0)
		return -errno;
	if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0) {
		e = -errno;
		close(tree);
		return e;
	}
	return tree;
}

int jr_mount_empty_dir(void)
{
	const unsigned flags =
		MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	int fs = fsopen("tmpfs", FSOPEN_CLOEXEC), tree, e;

	if (fs < 0)
		return -errno;
	if (fsconfig(fs, FSCONFIG_SET_STRING, "size", "4k", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0555", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		e = -errno;
		close(fs);
		return e;
	}
	tree = fsmount(fs, FSMOUNT_CLOEXEC, flags);
	e = -errno;
	close(fs);
	return tree >= 0 ? tree : e;
}

int jr_mount_attach(int tree, const char *path, bool is_dir)
{
	int t = jr_mountpoint_open(path, is_dir), e = 0;

	if (t >= 0 &&
	    move_mount(tree, "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		e = -errno;
	if (t >= 0)
		close(t);
	close(tree);
	return t < 0 ? t : e;
}
