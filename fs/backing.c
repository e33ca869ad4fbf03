/* SPDX-License-Identifier: MIT */
/*
 * The backing access layer: every path the daemon opens is relative to
 * root_fd and resolved by openat2(2) with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, so a symlink or a ".."
 * planted in SOURCE (or a directory swapped for a symlink while we walk)
 * cannot lead outside it (docs/threat-model.md, invariant 1; util-linux
 * CVE-2026-27456 moved to the same call because O_NOFOLLOW guards only the
 * last component). After opening an inode by its path, (st_dev, st_ino) is
 * compared with the inode's: a different object answers -ESTALE, never
 * another file. Nothing is opened for reading or writing before its type is
 * known: a FIFO or a device put where a file was expected is never opened.
 */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backing.h"
#include "fsstate.h"

/*
 * openat2(2) answers EINVAL for any flag bit it does not know, where open(2)
 * ignores them; the kernel's FUSE_OPEN carries internal bits such as
 * __FMODE_EXEC (0x20) for execve(2). Keep only the documented open(2) flags.
 */
#define JF_OPEN_FLAGS                                                                              \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC |     \
	 O_SYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC |      \
	 O_PATH | O_TMPFILE | FASYNC)

static int openat2_beneath(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)((flags & JF_OPEN_FLAGS) | O_CLOEXEC | O_NOFOLLOW),
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	do {
		fd = syscall(SYS_openat2, dirfd, jf_rel(path), &how, sizeof(how));
	} while (fd < 0 && errno == EAGAIN);
	if (fd < 0)
		return errno == ELOOP ? -ENOENT : -errno;
	return (int)fd;
}

/*
 * Opening a FIFO without O_NONBLOCK sleeps until its other end is opened, and
 * opening a device runs its driver: the name is resolved to an O_PATH fd
 * first, which opens nothing, and only a regular file is then opened for
 * real, through that fd's /proc/self/fd link, which names the object already
 * resolved, whatever the path holds by then.
 */
int jf_open_file_below(int dirfd, const char *path, int flags, struct stat *st)
{
	char proc[64];
	struct stat tmp;
	int pfd, fd;

	if (!st)
		st = &tmp;
	pfd = openat2_beneath(dirfd, path, O_PATH, 0);
	if (pfd < 0)
		return pfd;
	fd = fstat(pfd, st) < 0 ? -errno : S_ISREG(st->st_mode) ? 0 : -ENXIO;
	if (fd < 0) {
		close(pfd);
		return fd;
	}
	jf_proc_fd_path(proc, sizeof(proc), pfd);
	fd = open(proc, (flags & JF_OPEN_FLAGS & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	close(pfd);
	return fd;
}

int jf_open_below(int dirfd, const char *path, int flags, mode_t mode)
{
	if (flags & (O_PATH | O_DIRECTORY | O_EXCL))
		return openat2_beneath(dirfd, path, flags, mode);
	if (flags & O_CREAT)
		return -EINVAL; /* would open an existing object, whatever it is */
	return jf_open_file_below(dirfd, path, flags, NULL);
}

int jf_open_beneath(const char *path, int flags, mode_t mode)
{
	return jf_open_below(jf_fs.view.root_fd, path, flags, mode);
}

int jf_join(char *buf, size_t size, const char *dir, const char *name)
{
	int n = dir[0] ? snprintf(buf, size, "%s/%s", dir, name) : snprintf(buf, size, "%s", name);

	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return n;
}

/* Pseudo filesystems the view never shows and --scan never enters: reading
 * them is slow, endless, has side effects or reaches outside SOURCE (proc's
 * magic links). f_type values from <linux/magic.h>, plus those it lacks. */
static const unsigned long pseudo_magic[] = {
	PROC_SUPER_MAGIC,    SYSFS_MAGIC,    DEVPTS_SUPER_MAGIC, CGROUP_SUPER_MAGIC,
	CGROUP2_SUPER_MAGIC, DEBUGFS_MAGIC,  TRACEFS_MAGIC,	 SECURITYFS_MAGIC,
	BPF_FS_MAGIC,	     PSTOREFS_MAGIC, BINFMTFS_MAGIC,	 EFIVARFS_MAGIC,
	SELINUX_MAGIC,	     SMACK_MAGIC,    NSFS_MAGIC,	 AUTOFS_SUPER_MAGIC,
	HUGETLBFS_MAGIC,     0x1373, /* devtmpfs reports DEVFS_SUPER_MAGIC on old kernels */
	0x65735543,		     /* fusectl */
	0x62656570,		     /* configfs */
	0x19800202,		     /* mqueue */
};

bool jf_is_pseudo_fs(int fd)
{
	struct statfs sfs;
	struct stat st;

	if (fstatfs(fd, &sfs) < 0)
		return true; /* cannot tell: do not expose */
	for (size_t i = 0; i < sizeof(pseudo_magic) / sizeof(pseudo_magic[0]); i++)
		if ((unsigned long)sfs.f_type == pseudo_magic[i])
			return true;
	/* devtmpfs says TMPFS_MAGIC: recognise /dev by a char device null. */
	return (unsigned long)sfs.f_type == TMPFS_MAGIC &&
	       fstatat(fd, "null", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR(st.st_mode);
}

void jf_proc_fd_path(char *buf, size_t size, int fd)
{
	snprintf(buf, size, "/proc/self/fd/%d", fd);
}

/* Root fds replaced by jf_root_swap(), kept open until jf_root_retired_close():
 * a request may still hold one it read before the swap. */
static int retired[JF_ROOT_SWAPS_MAX];
static _Atomic unsigned n_retired;

bool jf_is_root_fd(int fd)
{
	unsigned n = atomic_load(&n_retired);

	if (fd == jf_fs.view.root_fd)
		return true;
	for (unsigned i = 0; i < n; i++)
		if (retired[i] == fd)
			return true;
	return false;
}

int jf_root_swap(int fd)
{
	unsigned n = atomic_load(&n_retired);

	if (n == JF_ROOT_SWAPS_MAX)
		return -EMFILE;
	retired[n] = jf_fs.view.root_fd;
	atomic_store(&n_retired, n + 1);
	/* Readers load it without a lock: they get the old fd or the new one,
	 * and both stay open. */
	jf_fs.view.root_fd = fd;
	return 0;
}

void jf_root_retired_close(void)
{
	unsigned n = atomic_exchange(&n_retired, 0);

	for (unsigned i = 0; i < n; i++)
		close(retired[i]);
}

void jf_put_fd(int fd)
{
	if (fd >= 0 && !jf_is_root_fd(fd))
		close(fd);
}
