/* SPDX-License-Identifier: MIT */
/*
 * The backing access layer (backing.c): every path the daemon opens is
 * resolved by openat2(2) below an fd it holds, never from '/'. A leaf: it
 * knows jf_fs.view.root_fd and nothing of inodes or the policy.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* "" -> "." for openat2. */
static inline const char *jf_rel(const char *path)
{
	return path[0] ? path : ".";
}

/* openat2(dirfd, path, flags, RESOLVE_BENEATH|NO_SYMLINKS|NO_MAGICLINKS);
 * O_CLOEXEC|O_NOFOLLOW always added. With O_PATH, O_DIRECTORY or O_EXCL
 * (an open that cannot run a FIFO's or a device's open), as is; any other
 * open is jf_open_file_below()'s, and O_CREAT without O_EXCL answers
 * -EINVAL. Returns the fd (caller closes it) or -errno (-ENOENT for a
 * symlink on the way). Thread-safe. */
int jf_open_below(int dirfd, const char *path, int flags, mode_t mode);
/* Open the regular file @path below @dirfd with @flags (O_CREAT, O_EXCL
 * ignored) so that it cannot block: resolved to an O_PATH fd first, opened
 * only if regular (its fstat in @st, if not NULL). Returns the fd (caller
 * closes it), -ENXIO when @path is not a regular file (a FIFO, a device, a
 * socket, a directory), or another -errno as jf_open_below(). Thread-safe. */
int jf_open_file_below(int dirfd, const char *path, int flags, struct stat *st);
/* jf_open_below() from root_fd. */
int jf_open_beneath(const char *path, int flags, mode_t mode);
/* Join view path @dir and @name into @buf ("" + name = name): the length,
 * or -ENAMETOOLONG. */
int jf_join(char *buf, size_t size, const char *dir, const char *name);
/* Is the mount at @fd a pseudo filesystem (proc, sysfs...)? True when
 * fstatfs fails (fails closed). Used by the daemon and by --scan alike. */
bool jf_is_pseudo_fs(int fd);
/* Apply a per-fd op that needs a path: "/proc/self/fd/N". */
void jf_proc_fd_path(char *buf, size_t size, int fd);

/* Close @fd unless it is root_fd (which jf_dir_fd() hands out uncopied) or a
 * root fd jf_root_swap() replaced. */
void jf_put_fd(int fd);
/* Is @fd the root fd, or one jf_root_swap() replaced? Thread-safe. */
bool jf_is_root_fd(int fd);

/* How many times the overlay mode may replace the root fd in one run. */
#define JF_ROOT_SWAPS_MAX 4096
/* Make @fd (given up by the caller) the root fd: the overlay mode after a
 * restore, apply or discard. The old one stays open, for requests that read
 * it before, until jf_root_retired_close() at exit. 0 or -EMFILE (the
 * bound above). Caller holds jf_fs.ns_lock exclusive; one caller at a time. */
int jf_root_swap(int fd);
/* Close the root fds jf_root_swap() replaced. Only once serving ended. */
void jf_root_retired_close(void);
