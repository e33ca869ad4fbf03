/* SPDX-License-Identifier: MIT */
/*
 * What the FUSE handlers share (handler.c), below every handler file
 * (ops-attr.c, ops-names.c, ops-file.c, ops-dir.c): audit records and
 * refusals, the view's attributes, kernel entries for probed and new names,
 * the checks and clean-up around creating a name, and notifications queued
 * for the notifier thread (notify.h). Every function follows fsstate.h's convention
 * (0 or a negative errno) and is thread-safe.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "audit.h"
#include "fsstate.h"
#include "probe.h"

/* st_size of every directory in the view, bytes (st_blocks: this / 512). */
#define JF_DIR_SIZE 4096

/* The open file handle of @fi (fi->fh). */
struct jf_file *jf_file_of(struct fuse_file_info *fi);
/* Record an audit event when the configured level wants it (cheap when not). */
void jf_audit_op(fuse_req_t req, const char *op, const char *path, const char *path2,
		 enum jf_zone zone, const struct jf_rule *rule, enum jf_audit_decision d,
		 bool mutation, int err);
/* Refusal of a mutation on an existing object: audit it and return @err. */
int jf_refuse(fuse_req_t req, const char *op, const char *path, const char *path2,
	      enum jf_zone zone, const struct jf_rule *rule, int err);
/* jf_refuse(), the record's "detail" saying what in the content was refused
 * (@detail, copied; NULL for none). */
int jf_refuse_detail(fuse_req_t req, const char *op, const char *path, const char *path2,
		     enum jf_zone zone, const struct jf_rule *rule, int err, const char *detail);
/* Fill the view's attributes of @inode into @st (a backing stat). The mode
 * bits are the backing file's in every zone and open mode: a write outside
 * SAFE is refused by the daemon (EROFS), never by the kernel's mode check. */
void jf_fill_attr(struct stat *st, const struct jf_inode *inode);
/* Open @dir's directory (root_fd for the root; release with jf_put_fd());
 * fills @path (@size >= JF_PATH_MAX + 1) with its view path. */
int jf_dir_fd(struct jf_inode *dir, char *path, size_t size);
/* Register a probed child in the table (one lookup reference) and fill @e. */
int jf_make_entry(struct jf_inode *parent, const char *name, struct probe *p,
		  struct fuse_entry_param *e);
/* Stat @name in @dirfd after we created it and fill its entry @e. */
int jf_entry_for_new(struct jf_inode *parent, int dirfd, const char *dirpath, const char *name,
		     struct fuse_entry_param *e);

/* ---- creating names (mknod, mkdir, symlink, link, create) ---- */

/* May @name be created in directory @pi (@dirfd from jf_dir_fd(), view
 * path @dpath) as an object of type @type (S_IFREG, S_IFDIR...)? 0, -EACCES
 * (DENIED or refused name), -EROFS (RESTRICTED), -ENAMETOOLONG. A regular
 * file named by a rule subject to content (*.pem) is let through only where
 * the view shows that name or in a directory this mount made (newdirs.h),
 * so the answer never tells whether a hidden object holds it. A .git
 * regular file made by a create (@op "create") is let through with
 * its RESTRICTED verdict, its content checked at each write (gitfile.h).
 * A hook refused in a new git directory git init is filling
 * removes that directory (gitinit.h).
 * Fills @path (@size bytes) and @v. Audits refusals. */
int jf_check_new_name(fuse_req_t req, const char *op, struct jf_inode *pi, int dirfd,
		      const char *dpath, const char *name, mode_t type, char *path, size_t size,
		      struct jf_verdict *v);
/* Hand a new object to the calling user when we run as root for someone else. */
void jf_give_to_caller(fuse_req_t req, int dirfd, const char *name);
/* A create that failed with @r == -EEXIST must not reveal a hidden name:
 * -EACCES then, as for a DENIED name; else @r. */
int jf_hide_eexist(int r, int dirfd, const char *dpath, dev_t dev, const char *name);
/* A name we just created failed a later check: remove it again, so no
 * refused name is left on disk. With @fd >= 0 only when @name is still the
 * object @fd refers to; @dir removes an (empty) directory. */
void jf_unlink_created(int dirfd, const char *name, int fd, bool dir);
/* Forget the table's name for a removed @name in @pi. */
void jf_detach_name(struct jf_inode *pi, const char *name, const struct stat *st);

/* ---- notifications, queued for the notifier thread (notify.h): a handler
 * may ask for them about the very inode it answers ---- */

/* Drop the kernel's dentry of @inode's name: after ESTALE on an fd-based
 * request. Best effort. */
void jf_forget_name_later(struct jf_inode *inode);
/* Drop the kernel's cached attributes and pages of @ino. Best effort. */
void jf_drop_pages_later(fuse_ino_t ino);
