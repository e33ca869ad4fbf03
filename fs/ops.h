/* SPDX-License-Identifier: MIT */
/*
 * Shared by the files holding the FUSE low-level operations: ops.c (helpers,
 * lookup, attributes, xattrs, the ops table), ops-names.c (creating,
 * removing, renaming and linking names), ops-file.c (open files) and
 * ops-dir.c (directory handles and readdir). Not a public API: every function
 * follows daemon.h's conventions (0 or a negative errno) and is thread-safe
 * unless it says otherwise.
 */
#pragma once

#include "daemon.h"

/* What jf_probe_child() found out about one name. */
struct probe {
	char path[JF_PATH_MAX + 1]; /* view path of the child */
	size_t len;
	struct stat st;
	bool have_stat;
	struct jf_verdict v;
	uint32_t symlink_len;
	enum jf_refusal refusal;
	struct timespec btime; /* birth time, {0, 0} when the filesystem has none */
	uint64_t gen;	       /* jf_fs.name_gen when the probe began */
};

/* ---- helpers (ops.c) ---- */

/* st_size of every directory in the view, bytes (st_blocks: this / 512). */
#define JF_DIR_SIZE 4096

/* Close @fd unless it is root_fd (which jf_dir_fd() hands out uncopied). */
void jf_put_fd(int fd);
struct jf_file *jf_file_of(struct fuse_file_info *fi);
bool jf_is_mnt_path(const char *path);
int jf_refuse(fuse_req_t req, const char *op, const char *path, const char *path2,
	      enum jf_zone zone, const struct jf_rule *rule, int err);
/* Fill the view's attributes of @inode into @st (a backing stat), for an
 * inode of zone @zone. */
void jf_fill_attr(struct stat *st, const struct jf_inode *inode, enum jf_zone zone);
/* The zone of @inode at its current name into @v: the cached one, or, when
 * a rename moved the inode or an ancestor since it was computed, one
 * recomputed from the name (classification, hard links, symlink target)
 * and cached again. Returns 0; a negative errno when the name could not be
 * probed (renamed on the host and not yet seen), in which case @v holds the
 * last cached zone. A hidden name gives JF_DENIED. Thread-safe; takes
 * jf_fs.lock briefly, never across a system call. */
int jf_zone_of(struct jf_inode *inode, struct jf_verdict *v);
/* jf_zone_of() for reading the content: a zone that depends on what the file
 * holds (by_content: a public certificate, a tracked file) is computed again
 * from the file as it is now (cheap while it is unchanged), so a file the
 * host filled with a private key since it was looked up is not read. */
int jf_zone_read(struct jf_inode *inode, struct jf_verdict *v);
int jf_dir_fd(struct jf_inode *dir, char *path, size_t size);
int jf_probe_child(int dirfd, const char *dirpath, dev_t dir_dev, const char *name,
		   unsigned char dtype, bool want_stat, struct probe *p);
int jf_make_entry(struct jf_inode *parent, const char *name, struct probe *p,
		  struct fuse_entry_param *e);
int jf_entry_for_new(struct jf_inode *parent, int dirfd, const char *dirpath, const char *name,
		     struct fuse_entry_param *e);
/* Record an audit event when the configured level wants it (cheap when not). */
void jf_audit_op(fuse_req_t req, const char *op, const char *path, const char *path2,
		 enum jf_zone zone, const struct jf_rule *rule, enum jf_audit_decision d,
		 bool mutation, int err);

/* Drop the kernel's dentry of @inode's name from a short-lived thread
 * (ops-file.c): after ESTALE on an fd-based request. Best effort. */
void jf_forget_name_later(struct jf_inode *inode);

/* ---- names (ops-names.c), also used by create ---- */

int jf_check_new_name(fuse_req_t req, const char *op, const char *dpath, const char *name,
		      mode_t type, char *path, size_t size, struct jf_verdict *v);
void jf_give_to_caller(fuse_req_t req, int dirfd, const char *name);
int jf_hide_eexist(int r, int dirfd, const char *dpath, dev_t dev, const char *name);
int jf_probe_existing(int fd, const char *dpath, dev_t dev, const char *name, struct probe *p);
void jf_detach_name(struct jf_inode *pi, const char *name, const struct stat *st);
/* A name we just created failed a later check: remove it again, so no
 * refused name is left on disk. With @fd >= 0 only when @name is still the
 * object @fd refers to; @dir removes an (empty) directory. */
void jf_unlink_created(int dirfd, const char *name, int fd, bool dir);

/* ---- handlers of the ops table (ops-names.c, ops-file.c, ops-dir.c) ---- */

void jf_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);
void jf_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void jf_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void jf_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void jf_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void jf_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
	       const char *newname, unsigned int flags);
void jf_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
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
void jf_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void jf_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void jf_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void jf_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void jf_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
