/* SPDX-License-Identifier: MIT */
/*
 * The handlers of the FUSE low-level ops table (ops.c), by topic:
 * ops-attr.c (lookup, forget, attributes, readlink, statfs, xattrs),
 * ops-names.c (creating, removing, renaming and linking names), ops-file.c
 * (open files) and ops-dir.c (directory handles and readdir). Each is thin:
 * resolve, call a function returning 0 or a negative errno, reply once.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "fsstate.h"

extern const struct fuse_lowlevel_ops jf_ops;
/* Close directory handles the kernel never released (ops-dir.c); at exit
 * only. */
void jf_ops_cleanup(void);

/* ---- lookup and attributes (ops-attr.c) ---- */

void jf_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void jf_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void jf_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets);
void jf_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void jf_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		struct fuse_file_info *fi);
void jf_readlink(fuse_req_t req, fuse_ino_t ino);
void jf_statfs(fuse_req_t req, fuse_ino_t ino);
void jf_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
		 int flags);
void jf_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);
void jf_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void jf_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);

/* ---- names (ops-names.c) ---- */

void jf_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);
void jf_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void jf_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void jf_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void jf_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void jf_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
	       const char *newname, unsigned int flags);
void jf_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);

/* ---- open files (ops-file.c) ---- */

void jf_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void jf_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       struct fuse_file_info *fi);
void jf_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void jf_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
		  struct fuse_file_info *fi);
void jf_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void jf_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void jf_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
		  struct fuse_file_info *fi);
void jf_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi);
void jf_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			struct fuse_file_info *fi_out, size_t len, int flags);
/* fstat(2) through an open handle (or the orphan fd) of @inode, if it has
 * one, into @st: cheaper than reopening the path, and the only way for a
 * file unlinked while open. 0 or -ENOENT. The fstat runs without jf_fs.lock:
 * the handle is pinned (struct jf_file.pins) so that a concurrent release
 * cannot close its fd, and the orphan fd lives as long as @inode, which the
 * caller's request keeps. Thread-safe. */
int jf_fstat_open_file(struct jf_inode *inode, struct stat *st);

/* ---- directories (ops-dir.c) ---- */

void jf_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void jf_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void jf_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void jf_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void jf_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
