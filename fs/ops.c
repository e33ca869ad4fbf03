/* SPDX-License-Identifier: MIT */
/*
 * The FUSE low-level operations of the jailed view: init and the ops table.
 * The handlers are in ops-attr.c, ops-names.c, ops-file.c and ops-dir.c
 * (ops.h), what they share below them in handler.c and probe.c.
 *
 * Every handler is thin: resolve the inode(s), call a function that returns
 * a negative errno or a result, reply exactly once. Decisions (invariants
 * 2-6 of docs/threat-model.md):
 *  - lookup and readdir classify parent_path/name before anything reaches
 *    the kernel; DENIED and refused names, the jailfs mountpoint inside
 *    SOURCE, pseudo filesystems and symlinks whose target leaves the view are
 *    answered with a negative entry / left out;
 *  - creating name X in directory D is allowed iff classify(D/X) is SAFE: a
 *    SAFE vendor/patches/new.c inside a RESTRICTED vendor/ works, and a
 *    RESTRICTED name inside a SAFE directory cannot be created. DENIED names
 *    answer EACCES, RESTRICTED ones EROFS;
 *  - every mutation of an existing object needs the object's cached zone to
 *    be SAFE (EROFS otherwise); rename and link check both ends;
 *  - a regular file with st_nlink > 1 (policy default hardlinks =
 *    restricted) is treated by the start-up index (hardlinks.c): hidden when
 *    a name is DENIED, SAFE when all its names are in SOURCE and SAFE,
 *    RESTRICTED otherwise. Links made through the view between SAFE names
 *    stay SAFE while the daemon knows the inode;
 *  - no set-user/group-ID file is made through the view (invariant 8), and
 *    directories report st_nlink 1 (hidden subdirectories are not counted).
 * Ownership: when the daemon runs as root for another uid, new objects are
 * created by root and handed to the caller with fchownat (group: the
 * caller's, unless the directory is set-group-ID, where the backing
 * filesystem already chose it). The kernel checks modes (default_permissions).
 */

#include <stdio.h>

#include "audit.h"
#include "fsstate.h"
#include "ops.h"
#include "options.h"
#include "passthrough.h"

/* ---------- init ---------- */

/*
 * Does the audit level need OPEN requests (no no_open mode)? Only level
 * writes, which records allowed write opens and the byte counts at release.
 * Refusals need no OPEN: in no_open mode every mutation of a file outside
 * SAFE is refused and recorded when it arrives. Level all records a read at
 * the first READ and a write at the first WRITE of an inode (ops-file.c) and
 * lookups at LOOKUP; it is asked for to see what was used, fast.
 */
static bool audit_needs_open(void)
{
	return jf_audit_wants(JF_AUDIT_ALLOW, true) && !jf_audit_wants(JF_AUDIT_ALLOW, false);
}

static void jf_init(void *userdata, struct fuse_conn_info *conn)
{
	/* Symlink text may be cached by the kernel: a symlink whose shown text
	 * depends on its directory (absolute target) never changes directory
	 * (rename answers EXDEV, link EACCES) and is hidden when it has several
	 * names, so a cached text is right wherever the inode is reached. */
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
	/* Every READDIR is a READDIRPLUS: in auto mode the kernel asks for
	 * attributes only at offset 0 or after a LOOKUP in the directory, so
	 * on a cold view each name past a directory's first reply cost one
	 * LOOKUP round trip when opened (rg, find descending). Each probe of a
	 * readdirplus entry stats the name, which a plain listing does only for
	 * directories and unknown types; docs/benchmarks.md measures both. */
	conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
	if (!jf_fs.opts->no_splice && (conn->capable & FUSE_CAP_SPLICE_WRITE))
		conn->want |= FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE;
	/* Writeback cache stays off: with it the kernel would own O_APPEND and
	 * file sizes, and writes could sit in the page cache past our size
	 * limit checks. */
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	conn->want &= ~FUSE_CAP_HANDLE_KILLPRIV;
	/* no_open mode (jf_fs.no_open). O_TRUNC must then reach us as a SETATTR,
	 * where the zone is checked: with atomic_o_trunc the kernel would trust
	 * an OPEN it never sent to have truncated the file. Refusals need no
	 * OPEN (each mutation is refused and recorded when it arrives), but the
	 * allow records of opens and the byte counts at release do: not while
	 * the audit level records those (writes; level all records a read or write per inode at its
	 * first READ or WRITE instead, audit_needs_open). */
	jf_fs.no_open = jf_fs.opts->fast_open && (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT) &&
			!audit_needs_open();
	if (jf_fs.no_open)
		conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	/* With asynchronous direct I/O the kernel sends every WRITE of a large
	 * O_DIRECT write at once, so a write opened without the daemon outside
	 * SAFE would be refused (and recorded) once per request instead of once
	 * per system call: one at a time, it stops at the first refusal. */
	if (jf_fs.no_open)
		conn->want &= ~FUSE_CAP_ASYNC_DIO;
	if (jf_fs.opts->debug)
		fprintf(stderr, "jailfs: fast_open %s\n",
			jf_fs.no_open ? "on"
			: !jf_fs.opts->fast_open
				? "off"
				: "off: the kernel lacks it or the audit level records opens");
	jf_pt_init(conn);
	conn->max_write = 1 << 20;
	conn->max_readahead = 1 << 20;
	conn->time_gran = 1;
}

const struct fuse_lowlevel_ops jf_ops = {
	.init = jf_init,
	.lookup = jf_lookup,
	.forget = jf_forget,
	.forget_multi = jf_forget_multi,
	.getattr = jf_getattr,
	.setattr = jf_setattr,
	.readlink = jf_readlink,
	.mknod = jf_mknod,
	.mkdir = jf_mkdir,
	.unlink = jf_unlink,
	.rmdir = jf_rmdir,
	.symlink = jf_symlink,
	.rename = jf_rename,
	.link = jf_link,
	.open = jf_open,
	.read = jf_read,
	.write_buf = jf_write_buf,
	/* No .flush: nothing is buffered in the daemon, so the kernel learns
	 * from ENOSYS to skip FLUSH, a synchronous round trip on every close(2).
	 * POSIX locks stay local to the kernel (no lock operations either). */
	.release = jf_release,
	.fsync = jf_fsync,
	.opendir = jf_opendir,
	.readdir = jf_readdir,
	.readdirplus = jf_readdirplus,
	.releasedir = jf_releasedir,
	.fsyncdir = jf_fsyncdir,
	.statfs = jf_statfs,
	.setxattr = jf_setxattr,
	.getxattr = jf_getxattr,
	.listxattr = jf_listxattr,
	.removexattr = jf_removexattr,
	.create = jf_create,
	.fallocate = jf_fallocate,
	.lseek = jf_lseek,
	.copy_file_range = jf_copy_file_range,
};
