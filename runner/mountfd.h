/* SPDX-License-Identifier: MIT */
/*
 * Mounts below the jail home, attached through fds without following a
 * symlink (mountfd.c). Run by the jail's pid 1, with the new root as the
 * cwd.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * Open the mount point @path (an absolute jail path, taken below the cwd)
 * O_PATH, making what is missing (directories 0755; the last component an
 * empty file 0644 unless @is_dir), without following a symlink at any
 * component. Returns the fd (O_CLOEXEC, the caller's) or a negative errno:
 * ENOTDIR or ELOOP where a symlink or another type of file stands.
 */
int jr_mountpoint_open(const char *path, bool is_dir);

/* A detached recursive clone of the mount at @src_fd with MOUNT_ATTR_*
 * @attrs set. Returns its fd (O_CLOEXEC) or a negative errno. */
int jr_mount_clone(int src_fd, uint64_t attrs);

/* A detached empty read-only tmpfs (nosuid, nodev, noexec, mode 0555).
 * Returns its fd (O_CLOEXEC) or a negative errno. */
int jr_mount_empty_dir(void);

/* Attach the detached mount @tree at jr_mountpoint_open(@path, @is_dir).
 * Closes @tree. Returns 0 or a negative errno. */
int jr_mount_attach(int tree, const char *path, bool is_dir);
