/* SPDX-License-Identifier: MIT */
/*
 * /dev/fuse hooks and FUSE passthrough (passthrough.h).
 *
 * The kernel side this relies on (fs/fuse/inode.c, iomode.c, passthrough.c,
 * backing.c, Linux >= 6.9):
 *  - INIT: FUSE_PASSTHROUGH in flags2 is honoured only with 0 <
 *    max_stack_depth <= FILESYSTEM_MAX_STACK_DEPTH, and not together with
 *    FUSE_WRITEBACK_CACHE; the mount's own stack depth becomes
 *    max_stack_depth. We ask for 1: backing files on a stacked filesystem
 *    (overlayfs) are refused with ELOOP and served by the daemon instead;
 *    in overlay mode (changes.h) 2, since every backing file is on our
 *    overlay (the view itself then cannot be an overlay's layer).
 *  - FUSE_DEV_IOC_BACKING_OPEN takes any fd of a regular file and needs
 *    CAP_SYS_ADMIN; the kernel opens a backing file of its own per handle,
 *    with the handle's open flags and the registering daemon's credentials,
 *    so the mode of the fd we register does not matter.
 *  - FOPEN_PASSTHROUGH may only be combined with FOPEN_DIRECT_IO,
 *    FOPEN_PARALLEL_DIRECT_WRITES and FOPEN_NOFLUSH (not FOPEN_KEEP_CACHE);
 *    all open handles of an inode share one backing file.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "audit.h"
#include "changes.h"
#include "cleanup.h"
#include "fsstate.h"
#include "options.h"
#include "passthrough.h"
#include "policy.h"
#include "stats.h"
#include "uring.h"

/* Protocol 7.40 where the system's linux/fuse.h is older. */
#ifndef FUSE_PASSTHROUGH
#define FUSE_PASSTHROUGH (1ULL << 37)
#endif
#ifndef FOPEN_PASSTHROUGH
#define FOPEN_PASSTHROUGH (1 << 7)
#endif
#ifndef FUSE_DEV_IOC_BACKING_OPEN
struct fuse_backing_map {
	int32_t fd;
	uint32_t flags;
	uint64_t padding;
};
#define FUSE_DEV_IOC_BACKING_OPEN _IOW(FUSE_DEV_IOC_MAGIC, 1, struct fuse_backing_map)
#define FUSE_DEV_IOC_BACKING_CLOSE _IOW(FUSE_DEV_IOC_MAGIC, 2, uint32_t)
#endif
/* fuse_init_out.max_stack_depth (7.40) is the word after flags2, unused[0]
 * in 7.38 headers. */
#define JF_INIT_OUT_STACK_DEPTH (offsetof(struct fuse_init_out, flags2) + 4)
#define JF_MAX_STACK_DEPTH 1

static struct {
	int fd;		       /* the session's /dev/fuse */
	uint64_t kernel_flags; /* INIT request: flags | flags2 << 32 */
	uint64_t init_unique;
	uint64_t add_flags; /* bits the INIT reply gets on top of libfuse's */
	atomic_bool init_pending;
	atomic_bool active;
	bool killpriv_v2;
	atomic_bool said_eperm, said_other;
} pt = {.fd = -1};

/* Backing id to put in the OPEN or CREATE reply this thread is sending. */
static __thread int32_t reply_backing_id;

static void note_init_request(const void *buf, size_t len)
{
	const struct fuse_in_header *h = buf;
	struct fuse_init_in in;

	if (len < sizeof(*h) + offsetof(struct fuse_init_in, flags2) + 4)
		return;
	memcpy(&in, (const char *)buf + sizeof(*h), offsetof(struct fuse_init_in, flags2) + 4);
	pt.init_unique = h->unique;
	pt.kernel_flags = in.flags;
	if (in.flags & FUSE_INIT_EXT)
		pt.kernel_flags |= (uint64_t)in.flags2 << 32;
}

static ssize_t dev_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n = read(fd, buf, len);
	const struct fuse_in_header *h = buf;

	if (n >= (ssize_t)sizeof(*h)) {
		jf_stats_count(h->opcode);
		if (h->opcode == FUSE_INIT)
			note_init_request(buf, (size_t)n);
	}
	return n;
}

/* A reply (not a notification) with error 0 and a payload of at least
 * @min bytes in its last iovec. */
static bool reply_ok(const struct iovec *iov, int count, size_t min)
{
	struct fuse_out_header h;

	if (count < 2 || iov[0].iov_len != sizeof(h) || iov[count - 1].iov_len < min)
		return false;
	memcpy(&h, iov[0].iov_base, sizeof(h));
	return h.error == 0 && h.unique != 0;
}

/* Add pt.add_flags to the INIT reply. Was @iov the INIT reply? */
static bool patch_init_reply(struct iovec *iov, int count)
{
	uint32_t flags, flags2,
		depth = jf_changes_on() ? JF_MAX_STACK_DEPTH + 1 : JF_MAX_STACK_DEPTH;
	struct fuse_out_header h;
	char *out;

	if (!reply_ok(iov, count, JF_INIT_OUT_STACK_DEPTH + 4))
		return false;
	memcpy(&h, iov[0].iov_base, sizeof(h));
	if (h.unique != pt.init_unique)
		return false;
	out = iov[1].iov_base;
	atomic_store(&pt.init_pending, false);
	memcpy(&flags, out + offsetof(struct fuse_init_out, flags), 4);
	memcpy(&flags2, out + offsetof(struct fuse_init_out, flags2), 4);
	flags |= (uint32_t)pt.add_flags;
	if (pt.add_flags >> 32)
		flags |= FUSE_INIT_EXT;
	flags2 |= (uint32_t)(pt.add_flags >> 32);
	memcpy(out + offsetof(struct fuse_init_out, flags), &flags, 4);
	memcpy(out + offsetof(struct fuse_init_out, flags2), &flags2, 4);
	if (pt.add_flags & FUSE_PASSTHROUGH)
		memcpy(out + JF_INIT_OUT_STACK_DEPTH, &depth, 4);
	return true;
}

/* OPEN replies end with struct fuse_open_out; CREATE replies with
 * fuse_entry_out followed by it, in one iovec. */
static void patch_open_reply(struct iovec *iov, int count)
{
	struct fuse_open_out o;
	char *p;

	if (!reply_ok(iov, count, sizeof(o)))
		return;
	p = (char *)iov[count - 1].iov_base + iov[count - 1].iov_len - sizeof(o);
	memcpy(&o, p, sizeof(o));
	o.open_flags = (o.open_flags & ~(uint32_t)FOPEN_KEEP_CACHE) | FOPEN_PASSTHROUGH;
	o.padding = (uint32_t)reply_backing_id; /* backing_id in 7.40 */
	memcpy(p, &o, sizeof(o));
}

/* Replies to requests taken from an io_uring queue go back into their ring
 * entry (uring.h), the rest to /dev/fuse. */
static ssize_t dev_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	bool init = false;
	ssize_t n;

	if (reply_backing_id > 0) {
		patch_open_reply(iov, count);
		reply_backing_id = 0;
	}
	if (atomic_load_explicit(&pt.init_pending, memory_order_relaxed))
		init = patch_init_reply(iov, count);
	n = jf_uring_reply(iov, count);
	if (n >= 0)
		return n;
	n = writev(fd, iov, count);
	if (init && n > 0) /* the kernel took it: ring entries may register */
		jf_uring_start();
	return n;
}

/* Read data keeps going to the kernel without a copy (fuse_reply_data);
 * a ring entry's reply is read out of the pipe into the entry. */
static ssize_t dev_splice_send(int fdin, off_t *offin, int fdout, off_t *offout, size_t len,
			       unsigned int flags, void *userdata)
{
	ssize_t n = jf_uring_reply_pipe(fdin, len);

	if (n != -2)
		return n;
	return splice(fdin, offin, fdout, offout, len, flags);
}

int jf_devio_install(struct fuse_session *se)
{
	static const struct fuse_custom_io io = {
		.read = dev_read,
		.writev = dev_writev,
		.splice_send = dev_splice_send,
	};

	pt.fd = fuse_session_fd(se);
	return fuse_session_custom_io(se, &io, pt.fd);
}

bool jf_pt_privileged(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/uid_map", "re");
	unsigned long inner, outer, count;
	cap_flag_value_t v = CAP_CLEAR;
	cap_t caps = cap_get_proc();

	if (caps) {
		cap_get_flag(caps, CAP_SYS_ADMIN, CAP_EFFECTIVE, &v);
		cap_free(caps);
	}
	if (v != CAP_SET || !f || fscanf(f, "%lu %lu %lu", &inner, &outer, &count) != 3)
		return false;
	return inner == 0 && outer == 0 && count == 4294967295UL;
}

/* Why passthrough stays off, or NULL when it may be asked for. */
static const char *passthrough_refusal(void)
{
	if (jf_fs.opts->no_passthrough)
		return "-o nopassthrough";
	if (!(pt.kernel_flags & FUSE_PASSTHROUGH))
		return "the kernel does not offer it (Linux >= 6.9 with CONFIG_FUSE_PASSTHROUGH)";
	if (jf_fs.no_open)
		return "-o fast_open (no OPEN requests, no handles to pass through)";
	if (jf_audit_wants(JF_AUDIT_ALLOW, true))
		return "the audit level records writes and byte counts, which need the daemon";
	if (!jf_pt_privileged())
		return "the daemon lacks CAP_SYS_ADMIN in the initial user namespace";
	return NULL;
}

void jf_pt_init(struct fuse_conn_info *conn)
{
	const char *why = passthrough_refusal();

	pt.add_flags = 0;
	if (pt.kernel_flags & FUSE_HANDLE_KILLPRIV_V2) {
		pt.add_flags |= FUSE_HANDLE_KILLPRIV_V2;
		pt.killpriv_v2 = true;
	}
	pt.add_flags |= jf_uring_init_flags(pt.kernel_flags);
	if (!why) {
		pt.add_flags |= FUSE_PASSTHROUGH;
		conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
		atomic_store(&pt.active, true);
	}
	atomic_store(&pt.init_pending, pt.add_flags != 0);
	if (jf_fs.opts->debug)
		fprintf(stderr, "jailfs: passthrough %s%s%s\n", why ? "off: " : "on",
			why ? why : "", pt.killpriv_v2 ? "; killpriv v2 on" : "");
}

bool jf_pt_active(void)
{
	return atomic_load(&pt.active);
}

bool jf_pt_killpriv_v2(void)
{
	return pt.killpriv_v2;
}

/* Passthrough skips the daemon's per-read and per-write checks: only where
 * none apply. A zone decided by the content (a public certificate, a tracked
 * file) is checked again at every read: the host may have written a private
 * key into the file since the open. */
static bool may_pass(const struct jf_file *f)
{
	if (f->by_content)
		return false;
	if (f->zone == JF_SAFE)
		return jf_fs.max_size[JF_SAFE] == UINT64_MAX;
	return f->zone == JF_RESTRICTED && !f->writable;
}

/*
 * Worth it for this open when no handle of the inode decided yet: every
 * write open, and read opens of files of JF_PT_READ_MIN bytes or more. A
 * read through a passthrough handle marks the FUSE inode's atime stale, so
 * the next stat(2) costs a GETATTR round trip (fuse_invalidate_atime()),
 * where a small file read through the daemon is served from the kernel's
 * kept page cache with no request at all once warm (measured: tar of the
 * Linux tree 2.2x slower with passthrough for every file). Large files win:
 * no READ requests when cold, the backing file's own cache when warm.
 */
#define JF_PT_READ_MIN (1 << 20)
static bool worth_passing(const struct jf_file *f, off_t size)
{
	return f->writable || size >= JF_PT_READ_MIN;
}

int32_t jf_pt_register(const struct jf_file *f)
{
	struct fuse_backing_map map = {.fd = f->fd};
	int id = ioctl(pt.fd, FUSE_DEV_IOC_BACKING_OPEN, &map);

	if (id > 0)
		return id;
	if (errno == EPERM) {
		atomic_store(&pt.active, false);
		if (jf_fs.opts->debug && !atomic_exchange(&pt.said_eperm, true))
			fprintf(stderr, "jailfs: passthrough off: the kernel refused a backing "
					"file (EPERM)\n");
	} else if (jf_fs.opts->debug && !atomic_exchange(&pt.said_other, true)) {
		fprintf(stderr,
			"jailfs: passthrough: a backing file refused (%s); such files "
			"are served by the daemon\n",
			strerror(errno));
	}
	return -1;
}

void jf_pt_unregister(int32_t id)
{
	uint32_t u = (uint32_t)id;

	if (id > 0)
		ioctl(pt.fd, FUSE_DEV_IOC_BACKING_CLOSE, &u);
}

int jf_pt_attach(struct jf_file *f, off_t size, int32_t *reg)
{
	const struct jf_file *o = f->inode->open_files;

	jf_fs_assert_locked();
	f->backing_id = 0;
	if (!atomic_load(&pt.active))
		return 0;
	if (o) { /* the inode's open handles decided */
		if (o->backing_id > 0 && !may_pass(f))
			return -ETXTBSY;
		f->backing_id = o->backing_id;
	} else if (may_pass(f) && worth_passing(f, size)) {
		if (*reg == 0)
			return -EAGAIN; /* the caller registers one, unlocked */
		if (*reg > 0) {
			f->backing_id = *reg;
			*reg = 0;
		}
	}
	if (f->backing_id > 0)
		jf_stats_count_passthrough();
	return 0;
}

int32_t jf_pt_detach(const struct jf_file *f)
{
	jf_fs_assert_locked();
	if (f->backing_id <= 0)
		return 0;
	for (const struct jf_file *o = f->inode->open_files; o; o = o->next_open)
		if (o->backing_id == f->backing_id)
			return 0;
	return f->backing_id;
}

static int32_t backing_of(const struct fuse_file_info *fi)
{
	const struct jf_file *f = (const struct jf_file *)(uintptr_t)fi->fh;

	return f ? f->backing_id : 0;
}

int jf_reply_open(fuse_req_t req, const struct fuse_file_info *fi)
{
	int r;

	reply_backing_id = backing_of(fi);
	r = fuse_reply_open(req, fi);
	reply_backing_id = 0;
	return r;
}

int jf_reply_create(fuse_req_t req, const struct fuse_entry_param *e,
		    const struct fuse_file_info *fi)
{
	int r;

	reply_backing_id = backing_of(fi);
	r = fuse_reply_create(req, e, fi);
	reply_backing_id = 0;
	return r;
}

int jf_kill_setid(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return 0;
	if (((st.st_mode & S_ISUID) || (st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP)) &&
	    fchmod(fd, st.st_mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID)) < 0)
		return -errno;
	/* Best effort, like the kernel's own: a daemon without CAP_SETFCAP
	 * cannot, and most files have none (ENODATA). */
	(void)fremovexattr(fd, "security.capability");
	return 0;
}
