/* SPDX-License-Identifier: MIT */
/*
 * The state every part of the FUSE daemon shares: struct jf_fs (the one
 * instance jf_fs, defined in fsstate.c), the inode (struct jf_inode, kept by
 * the inode table, inode.c) and the open file handle (struct jf_file).
 *
 * Error convention of the whole daemon: every internal function returns 0
 * (or a value >= 0) on success and a negative errno on failure; the sign is
 * flipped once, at the FUSE reply.
 */
#pragma once

#define FUSE_USE_VERSION 314

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "hash.h"
#include "policy.h"

struct jf_options;

struct jf_file;

struct jf_inode {
	struct jf_hnode hnode;	 /* in jf_fs.table by (dev, ino), or in jf_fs.unhashed */
	struct jf_inode *parent; /* holds a reference; NULL for root or when unlinked */
	char *name;		 /* last name in parent (malloc'd); NULL when unlinked */
	dev_t dev;
	ino_t ino;
	uint64_t view_ino; /* st_ino shown in the view (unique across devices) */
	uint64_t nlookup;  /* kernel references (lookup count) */
	unsigned refs;	   /* children pointing at us + 1 while nlookup > 0 */
	mode_t type;	   /* S_IFMT bits */
	enum jf_zone zone; /* effective zone, cached; see jf_zone_of() */
	const struct jf_rule *rule;
	bool by_content; /* the zone depends on the content (jf_verdict.by_content) */
	/* Name generations (jf_fs.name_gen), under jf_fs.lock: @moved_gen is
	 * the generation of the last rename that gave this inode a new parent
	 * or name, @zone_gen the one @zone was computed at. @zone is stale when
	 * the inode or any ancestor moved after it was computed. */
	uint64_t moved_gen, zone_gen;
	bool safe_links; /* hard links made through the view between SAFE names */
	/* Last seen at open, for FOPEN_KEEP_CACHE. */
	struct timespec open_mtime;
	off_t open_size;
	/* length of the (rewritten) symlink target; set by each lookup that
	 * finds the inode, read by getattr: an atomic, no lock */
	_Atomic uint32_t symlink_len;
	struct jf_file *open_files; /* open handles (for fstat of unlinked files) */
	/* no_open mode (ops-file.c): an fd on a regular file unlinked or replaced
	 * through the view while the kernel still held it, so a process that
	 * has it open keeps reading and writing it, as POSIX says; -1 when none.
	 * Closed when the inode is freed. */
	int orphan_fd;
	struct timespec btime; /* birth time, {0, 0} when unknown */
	bool unhashed;	       /* replaced by a newer object with the same (dev, ino) */
	/* CLOCK_MONOTONIC ms of the last readdirplus from offset 0 (ops-dir.c):
	 * the kernel's dentries of the children are fresh until entry_timeout
	 * after it, so its readdir cache may be kept. */
	atomic_uint_fast64_t listed_ms;
	/* no_open mode at audit level all (ops-file.c): JF_SEEN_READ and
	 * JF_SEEN_WRITE once this inode's first READ / WRITE was recorded. */
	atomic_uint audit_seen;
};

struct jf_fs {
	struct jf_policy *policy;
	const struct jf_options *opts;
	int root_fd;	  /* O_PATH fd of SOURCE: every backing access is below it */
	char *source_abs; /* realpath(SOURCE) */
	/* O_PATH fd of the host's "/": only for judging where a symlink target
	 * below a system directory leads (systarget.c), never for the backing
	 * tree. */
	int host_root_fd;
	char *mnt_rel; /* MOUNTPOINT relative to SOURCE if inside it, else NULL */
	char *mnt_abs; /* realpath(MOUNTPOINT) */
	dev_t root_dev;
	uid_t daemon_uid;
	struct jf_inode root;
	uint64_t max_size[3]; /* jf_policy_max_file_size per zone */
	/* Answer the first OPEN with ENOSYS, so the kernel stops sending OPEN and
	 * RELEASE (FUSE no_open, Linux >= 4.19): reads and writes arrive with
	 * fh == 0 and open the backing file per request. Set at init: with
	 * -o fast_open (the default of read-only and unprivileged mounts,
	 * mount.c), not while the audit level records allowed opens and
	 * release byte counts (writes). A write open outside SAFE then
	 * succeeds in the kernel and the first mutation (WRITE, SETATTR,
	 * FALLOCATE) is refused with EROFS and recorded. */
	bool no_open;
	struct fuse_session *se; /* for notifications from helper threads */
	enum jf_hardlinks hardlinks;

	pthread_mutex_t lock; /* guards the table, parent/name/nlookup/refs */
	/* The namespace lock. Every request that checks a name and then
	 * creates, removes or changes it through the view (create, mknod,
	 * mkdir, symlink, link, unlink, rmdir, rename of a non-directory,
	 * setattr, setxattr) holds it shared from the check to the table
	 * update; a rename that moves a directory holds it exclusive, so no
	 * path computed for a check can change under the operation it allows.
	 * Writer-preferring; never taken twice by one thread. Taken before
	 * jf_fs.lock, never while holding it. */
	pthread_rwlock_t ns_lock;
	/* Bumped (under lock) by every rename the table learns of; read
	 * atomically by probes to date the zone they compute. */
	_Atomic uint64_t name_gen;
	struct jf_htab table;	 /* struct jf_inode by (dev, ino), not the root */
	struct jf_htab unhashed; /* replaced inodes the kernel still holds */
	uint64_t next_view_ino;
	bool debug;
};

extern struct jf_fs jf_fs;

/* Open file handle (fi->fh). */
struct jf_file {
	int fd;
	struct jf_inode *inode;
	enum jf_zone zone;
	bool by_content; /* zone decided by the content: checked at each read */
	bool writable;
	atomic_int_fast64_t bytes_read;
	atomic_int_fast64_t bytes_written;
	struct jf_file *next_open; /* inode->open_files list, under jf_fs.lock */
	pid_t pid;		   /* opener, for the release record (release has no caller) and
				    * the share of the fd budget the handle is charged to */
	uid_t uid;
	/* > 0: the kernel serves reads and writes from this backing file id
	 * (passthrough.h), shared by all open handles of the inode. */
	int32_t backing_id;
};

/* Take and release jf_fs.lock. Debug builds remember that this thread holds
 * it, for jf_fs_assert_locked(). Never taken twice by one thread. */
void jf_fs_lock(void);
void jf_fs_unlock(void);
/* The calling thread holds jf_fs.lock: the precondition of every function
 * documented "caller holds jf_fs.lock", checked in debug builds only. */
void jf_fs_assert_locked(void);
