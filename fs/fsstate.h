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
#include "zone-name.h"

struct jf_options;

struct jf_file;

/*
 * Lock rules, written at each field:
 *  [lock]   read and written under jf_fs.lock only.
 *  [const]  set before the object is published (in the table, on a list,
 *           or before serving starts) and never written again: read freely.
 *  [atomic] an atomic, no lock.
 * jf_fs.lock is held for memory work only: no system call runs under it,
 * so a slow backing filesystem (NFS, FUSE) or the FUSE device never stalls
 * the requests of other threads. What a hold would close is closed after it
 * (jf_fs_close_unlocked()); an fd used outside the lock is kept open by a
 * rule at its field. The watch module's forget callback (inode.h) is the one
 * exception: it may write its eventfd, which never blocks.
 */
struct jf_inode {
	struct jf_hnode hnode;	 /* [lock] in jf_fs.table by (dev, ino), or in jf_fs.unhashed */
	struct jf_inode *parent; /* [lock] holds a reference; NULL for root or when unlinked */
	char *name;		 /* [lock] last name in parent (malloc'd); NULL when unlinked */
	dev_t dev;		 /* [const] */
	ino_t ino;		 /* [const] */
	uint64_t view_ino;	 /* [const] st_ino shown in the view (unique across devices) */
	uint64_t nlookup;	 /* [lock] kernel references (lookup count) */
	unsigned refs;		 /* [lock] children pointing at us + 1 while nlookup > 0 */
	mode_t type;		 /* [const] S_IFMT bits */
	/* [lock] effective zone, its rule and by_content, cached; see
	 * jf_zone_of() */
	enum jf_zone zone;
	const struct jf_rule *rule;
	bool by_content; /* the zone depends on the content (jf_verdict.by_content) */
	/* [lock] Name generations (jf_fs.name_gen): @moved_gen is the
	 * generation of the last rename that gave this inode a new parent or
	 * name, @zone_gen the one @zone was computed at. @zone is stale when
	 * the inode or any ancestor moved after it was computed. */
	uint64_t moved_gen, zone_gen;
	bool safe_links; /* [lock] hard links made through the view between SAFE names */
	/* [lock] Last seen at open, for FOPEN_KEEP_CACHE. */
	struct timespec open_mtime;
	off_t open_size;
	/* [atomic] length of the (rewritten) symlink target; set by each
	 * lookup that finds the inode, read by getattr */
	_Atomic uint32_t symlink_len;
	/* [lock] open handles (for fstat of unlinked files), linked through
	 * jf_file.next_open */
	struct jf_file *open_files;
	/* no_open mode (ops-file.c): an fd on a regular file unlinked or replaced
	 * through the view while the kernel still held it, so a process that
	 * has it open keeps reading and writing it, as POSIX says; or one made
	 * or chmod'ed without its owner's write bit, which a daemon that is not
	 * root could not open again for the caller's writes
	 * (jf_inode_hold_writer()); -1 when none. Written once under jf_fs.lock
	 * (from -1), closed when the inode is freed: a request on the inode
	 * (which keeps it from being freed) reads it under the lock and may then
	 * use it without. */
	int orphan_fd;
	struct timespec btime; /* [const] birth time, {0, 0} when unknown */
	bool unhashed;	       /* [lock] replaced by a newer object with the same (dev, ino) */
	/* [atomic] CLOCK_MONOTONIC ms of the last readdirplus from offset 0
	 * (ops-dir.c): the kernel's dentries of the children are fresh until
	 * entry_timeout after it, so its readdir cache may be kept. */
	atomic_uint_fast64_t listed_ms;
	/* [atomic] no_open mode at audit level all (ops-file.c): JF_SEEN_READ
	 * and JF_SEEN_WRITE once this inode's first READ / WRITE was recorded. */
	atomic_uint audit_seen;
};

/* The fields up to @lock are [const]: set at start-up (or at INIT, before
 * any other request) and read-only while serving. */
struct jf_fs {
	/* What the visibility rules take (zone-name.h): policy, SOURCE's fd
	 * and names, the mountpoint, the tables. Built at start-up (mount.c),
	 * read-only while serving; handlers reach it through jf_req_view(). */
	struct jf_view view;
	const struct jf_options *opts;
	char *mnt_abs; /* realpath(MOUNTPOINT) */
	dev_t root_dev;
	uid_t daemon_uid;
	struct jf_inode root; /* its fields as any inode's; never freed */
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

	/* Guards every field marked [lock] here and in struct jf_file, and the
	 * directory handles' list (ops-dir.c). A plain mutex, never taken twice
	 * by one thread; see the rules above struct jf_inode. */
	pthread_mutex_t lock;
	/* The namespace lock. Every request that checks a name and then
	 * creates, removes or changes it through the view (create, mknod,
	 * mkdir, symlink, link, unlink, rmdir, rename of a non-directory,
	 * setattr, setxattr) holds it shared from the check to the table
	 * update; a rename that moves a directory holds it exclusive, so no
	 * path computed for a check can change under the operation it allows.
	 * Writer-preferring; never taken twice by one thread. Taken before
	 * jf_fs.lock, never while holding it. */
	pthread_rwlock_t ns_lock;
	/* [atomic] Bumped (under lock) by every rename the table learns of;
	 * read by probes to date the zone they compute. */
	_Atomic uint64_t name_gen;
	struct jf_htab table;	 /* [lock] struct jf_inode by (dev, ino), not the root */
	struct jf_htab unhashed; /* [lock] replaced inodes the kernel still holds */
	uint64_t next_view_ino;	 /* [lock] */
	bool debug;		 /* [const] */
};

extern struct jf_fs jf_fs;

/* The view of the session serving @req: its userdata is the daemon's
 * struct jf_fs (mount.c), as libfuse's examples reach their state. */
static inline const struct jf_view *jf_req_view(fuse_req_t req)
{
	return &((const struct jf_fs *)fuse_req_userdata(req))->view;
}

/* Open file handle (fi->fh). Published by linking it on its inode's
 * open_files; the kernel's RELEASE unlinks it, and it is freed then or,
 * when pinned, by the last unpin. */
struct jf_file {
	int fd;			/* [const] open until the handle is freed */
	struct jf_inode *inode; /* [const] */
	enum jf_zone zone;	/* [const] */
	bool by_content;	/* [const] zone decided by the content: checked at each read */
	bool writable;		/* [const] */
	atomic_int_fast64_t bytes_read;	   /* [atomic] */
	atomic_int_fast64_t bytes_written; /* [atomic] */
	struct jf_file *next_open;	   /* [lock] inode->open_files list */
	/* [const] opener, for the release record (release has no caller) and
	 * the share of the fd budget the handle is charged to */
	pid_t pid;
	uid_t uid;
	/* [const] > 0: the kernel serves reads and writes from this backing
	 * file id (passthrough.h), shared by all open handles of the inode;
	 * unregistered (outside the lock) by the last of them to go. */
	int32_t backing_id;
	/* [lock] Threads using @fd without the lock (jf_fstat_open_file()),
	 * and whether RELEASE unlinked the handle: the last of the two to
	 * finish frees it. */
	unsigned pins;
	bool released;
};

/* Take and release jf_fs.lock. Debug builds remember that this thread holds
 * it, for jf_fs_assert_locked(). Never taken twice by one thread. */
void jf_fs_lock(void);
void jf_fs_unlock(void);
/* Close @fd once this thread releases jf_fs.lock, in jf_fs_unlock(): the
 * last close(2) of a file may write its data back (NFS), and no system call
 * runs under the lock. The caller holds jf_fs.lock and gives up @fd. */
void jf_fs_close_unlocked(int fd);
/* The calling thread holds jf_fs.lock: the precondition of every function
 * documented "caller holds jf_fs.lock", checked in debug builds only. */
void jf_fs_assert_locked(void);
