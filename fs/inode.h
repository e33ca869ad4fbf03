/* SPDX-License-Identifier: MIT */
/*
 * The inode table (inode.c): no fd per inode, a dentry-like parent + name,
 * from which every backing access opens the object again below SOURCE.
 * Every function takes jf_fs.lock itself unless it says otherwise.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "fsstate.h"

/* Who hears of the table's directories (the watch module): installed once
 * by jf_inode_set_watcher() at start-up, before serving. */
struct jf_inode_watcher {
	/* A reference to the directory @inode was handed out; jf_fs.lock is
	 * not held. */
	void (*dir_ref)(struct jf_inode *inode);
	/* The directory @inode is being freed; jf_fs.lock is held, so no
	 * system call that can block (fsstate.h, the lock rules). */
	void (*forget)(const struct jf_inode *inode);
	/* The daemon itself changed @name in @dir; any lock may be held. */
	void (*own_change)(const struct jf_inode *dir, const char *name);
};
/* Install @w (static storage, not copied). Start-up only, one thread. */
void jf_inode_set_watcher(const struct jf_inode_watcher *w);

int jf_inode_init(struct jf_fs *fs, const struct stat *root_st);
struct jf_inode *jf_inode_get(fuse_ino_t ino);
/* The overlay mode mounted a fresh overlay as the root (jf_root_swap()):
 * the root's (dev, ino) and the view's root device become @root_st's. The
 * inodes of the old mount stay in the table until the kernel forgets them;
 * their opens answer ESTALE. Caller holds jf_fs.ns_lock exclusive. */
void jf_inode_root_replaced(const struct stat *root_st);
/* Find or create the inode for @st reached as @name in @parent, add one
 * lookup reference. @btime is the birth time (NULL when the filesystem has
 * none): an inode number the filesystem reused for a new object (a different
 * type or birth time, or an entry we saw removed) gets a fresh inode, so the
 * kernel never mistakes the new object for the old one. @v is the zone
 * computed at name generation @gen (read before the probe). An inode that
 * gets a new parent or name here counts as moved. NULL on ENOMEM. */
struct jf_inode *jf_inode_ref(struct jf_inode *parent, const char *name, const struct stat *st,
			      const struct timespec *btime, const struct jf_verdict *v,
			      uint64_t gen, bool *created);
/* What the table knows about (dev, ino), copied under the lock (no pointer
 * escapes: a concurrent forget may free the inode). */
/* True and fills @out when (dev, ino) is in the table. */
bool jf_inode_info(dev_t dev, ino_t ino, struct jf_inode_info *out);
void jf_inode_forget(struct jf_inode *inode, uint64_t n);
/* View-relative path of @inode into @buf (JF_PATH_MAX+1 bytes). Returns the
 * length, -ENOENT when the inode was unlinked, -ENAMETOOLONG. */
int jf_inode_path(struct jf_inode *inode, char *buf, size_t size);
/* After a rename or unlink: if (dev, ino) is in the table attached as
 * @parent/@name, re-attach it as @nparent/@nname (NULL, NULL detaches it).
 * Check and move happen under one lock hold. */
void jf_inode_rename(dev_t dev, ino_t ino, struct jf_inode *parent, const char *name,
		     struct jf_inode *nparent, const char *nname);
/* no_open mode: keep @fd (O_RDWR on a regular file about to lose its last
 * name) on the inode (dev, ino), which then owns it; closes @fd when the
 * inode is not in the table or has one already. */
void jf_inode_set_orphan(dev_t dev, ino_t ino, int fd);
/* no_open mode: keep @fd, open for writing on a regular file its caller
 * may write but the daemon could not open again by name (made or chmod'ed
 * without its owner's write bit), as the orphan fd of its inode; closes @fd
 * when the daemon runs as root (which can reopen it) or the inode cannot
 * take it. Takes ownership of @fd. */
void jf_inode_hold_writer(int fd);
/* A new fd (F_DUPFD_CLOEXEC, caller closes it) on @inode's orphan fd, or
 * -ENOENT when it has none, -EMFILE... from fcntl(2). */
int jf_inode_orphan_fd(struct jf_inode *inode);
/* @inode's parent nodeid and a malloc'd copy of its name (caller frees),
 * read under one lock hold. 0, -ENOENT (root or detached), -ENOMEM. */
int jf_inode_parent_name(struct jf_inode *inode, fuse_ino_t *parent, char **name);
/* Cached zone of @inode into @v when it is fresh (no rename moved the inode
 * or an ancestor since it was computed, and not @reread of a zone that
 * depends on the content): returns 1. Else returns 0 with the current
 * generation in @gen and the view path in @path (JF_PATH_MAX + 1 bytes), for
 * jf_zone_of() to recompute; -ESTALE (detached), -ENAMETOOLONG. @v always
 * gets the cached zone. One hold of jf_fs.lock. */
int jf_inode_zone_get(struct jf_inode *inode, struct jf_verdict *v, uint64_t *gen, char *path,
		      size_t size, bool reread);
/* Store a zone computed at generation @gen. Takes jf_fs.lock. */
void jf_inode_zone_set(struct jf_inode *inode, const struct jf_verdict *v, uint64_t gen);
/* Set @inode's safe_links flag (a hard link made through the view between
 * SAFE names); returns the previous value. Takes jf_fs.lock. */
bool jf_inode_set_safe_links(struct jf_inode *inode, bool on);
/* Give @inode the name @name in @parent (a hard link made through the view:
 * its newest name is the one its path is built from), counting as a move.
 * Takes jf_fs.lock. */
void jf_inode_attach(struct jf_inode *inode, struct jf_inode *parent, const char *name);
/* The caller holds jf_fs.ns_lock (shared or exclusive), checked in debug
 * builds only. */
void jf_ns_assert_held(void);
/* Take and release jf_fs.ns_lock: shared for requests that check and then
 * make, remove or change one name, exclusive for renames of directories. */
void jf_ns_lock(bool exclusive);
void jf_ns_unlock(void);
uint64_t jf_view_ino(const struct jf_inode *inode);
void jf_inode_free_all(void);

/* Open the inode by its path and check (dev, ino): -ESTALE on mismatch.
 * Without O_PATH or O_DIRECTORY in @flags the inode is a regular file, and
 * a name that holds anything else now answers -ESTALE without being opened
 * (jf_open_file_below: no FIFO's or device's open runs). Returns the fd
 * (caller closes it); fills @st when not NULL. Thread-safe. */
int jf_open_inode(struct jf_inode *inode, int flags, struct stat *st);

/* ---- for the watch thread (watch.c) ---- */

/* Nodeid (FUSE_ROOT_ID for SOURCE) of the table's inode (dev, ino) and, when
 * @path is not NULL, its view path (@size >= JF_PATH_MAX + 1), copied under
 * one hold of jf_fs.lock: no pointer escapes. Returns 0, -ENOENT when the
 * table does not hold (dev, ino), -ESTALE when it is detached (removed),
 * -ENAMETOOLONG. */
int jf_inode_find(dev_t dev, ino_t ino, fuse_ino_t *nodeid, char *path, size_t size);

/* The object (dev, ino) was moved on the host to @name in the directory
 * (pdev, pino): when the table holds both, the inode takes its new place and
 * counts as moved, so the zones below it are recomputed before their next
 * use (jf_zone_of). Takes jf_fs.lock. */
void jf_inode_moved(dev_t dev, ino_t ino, dev_t pdev, ino_t pino, const char *name);

/* One inode the kernel may know, as copied by jf_inode_list(). */
struct jf_inode_ent {
	fuse_ino_t ino;
	fuse_ino_t parent; /* 0 when detached or the root */
	char *name;	   /* malloc'd, NULL when detached or the root */
};
/* Snapshot of the whole table (hashed and unhashed inodes, not the root)
 * into a malloc'd array; the caller frees it with jf_inode_list_free().
 * Returns the count or -ENOMEM. Holds jf_fs.lock for the copy (tens of ms
 * for 100,000 inodes): for the inotify queue-overflow fallback only. */
ssize_t jf_inode_list(struct jf_inode_ent **out);
void jf_inode_list_free(struct jf_inode_ent *list, size_t n);
