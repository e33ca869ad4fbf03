/* SPDX-License-Identifier: MIT */
/*
 * The daemon's one notifier: the sink of the queue (notifyq.c) over the
 * FUSE session, and the stop that unblocks it.
 *
 * Why one thread: invalidations used to go out from the watcher's thread
 * and from one detached thread per handler notification, and each kind had
 * to be ordered against the unmount on its own (the session's fd must
 * outlive every sender). Now the unmount drains and joins one thread.
 *
 * Once the session loop has ended no request is answered any more, and a
 * notification could wait forever for a directory lock held by one: the
 * sink then sends nothing, and the drain only frees what is queued.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "fsstate.h"
#include "inode.h"
#include "notify.h"
#include "notifyq.h"
#include "options.h"

#define NOTIFY_STR2(x) #x
#define NOTIFY_STR(x) NOTIFY_STR2(x)
#define NOTIFY_STOP_WAIT_S 2

static struct {
	struct fuse_session *se;
	struct jf_notifyq *q; /* NULL when not running (written only without workers) */
	/* counters for -d, written by the notifier thread only */
	uint64_t n_entry, n_inode, n_epoch;
} N;

static void sink_entry(void *ctx, uint64_t parent, const char *name)
{
	int r;

	(void)ctx;
	if (fuse_session_exited(N.se))
		return;
	r = fuse_lowlevel_notify_inval_entry(N.se, parent, name, strlen(name));
	N.n_entry++;
	if (jf_fs.opts->debug && r < 0 && r != -ENOENT)
		fprintf(stderr, "jailfs: notify: inval_entry %llu/%s: %s\n",
			(unsigned long long)parent, name, strerror(-r));
}

static void sink_inode(void *ctx, uint64_t ino)
{
	int r;

	(void)ctx;
	if (fuse_session_exited(N.se))
		return;
	r = fuse_lowlevel_notify_inval_inode(N.se, ino, 0, 0);
	N.n_inode++;
	if (jf_fs.opts->debug && r < 0 && r != -ENOENT)
		fprintf(stderr, "jailfs: notify: inval_inode %llu: %s\n", (unsigned long long)ino,
			strerror(-r));
}

/*
 * FUSE_NOTIFY_INC_EPOCH (Linux 6.16, protocol 7.44; libfuse 3.18 has
 * fuse_lowlevel_notify_increment_epoch, 3.14 does not): every dentry of the
 * connection, negative ones included, is looked up again at its next use.
 * Sent as a raw notification (out header only, unique 0) on the session fd,
 * one write(2), as libfuse sends its own. 0, or -EINVAL from older kernels.
 */
#define JF_NOTIFY_INC_EPOCH 8
static int notify_inc_epoch(void)
{
	struct fuse_out_header oh = {.len = sizeof(oh), .error = JF_NOTIFY_INC_EPOCH};

	if (fuse_session_exited(N.se))
		return -ENOTCONN;
	return write(fuse_session_fd(N.se), &oh, sizeof(oh)) < 0 ? -errno : 0;
}

/* Everything: the epoch, then every inode the table holds (attributes,
 * pages of open files); without the epoch each name too. Negative dentries
 * cannot be listed: on kernels before 6.16 those cached before expire only
 * after negative_timeout. */
static void sink_all(void *ctx)
{
	struct jf_inode_ent *list;
	bool epoch = notify_inc_epoch() == 0;
	ssize_t n = jf_inode_list(&list);

	if (epoch)
		N.n_epoch++;
	if (jf_fs.opts->debug)
		fprintf(stderr, "jailfs: notify: invalidating %zd inodes%s\n", n,
			epoch ? " and every dentry (epoch)" : "");
	sink_inode(ctx, FUSE_ROOT_ID);
	if (n < 0) {
		fprintf(stderr, "jailfs: cannot list the inodes to invalidate (out of memory): "
				"cached entries expire only after the timeouts\n");
		return;
	}
	for (ssize_t i = 0; i < n && !fuse_session_exited(N.se); i++) {
		if (list[i].name && !epoch)
			sink_entry(ctx, list[i].parent, list[i].name);
		sink_inode(ctx, list[i].ino);
	}
	jf_inode_list_free(list, (size_t)n);
}

/* Minor device number of the FUSE mount on MOUNTPOINT (the fusectl
 * connection number), from /proc/self/mountinfo: no request to ourselves.
 * -1 when not found. */
static long mount_minor(void)
{
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	long minor = -1;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		unsigned maj, min;
		char mnt[PATH_MAX + 1];

		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ..."; a mountpoint with a
		 * space is escaped (\040) and simply not found. */
		if (sscanf(line, "%*d %*d %u:%u %*s %" NOTIFY_STR(PATH_MAX) "s", &maj, &min, mnt) ==
			    3 &&
		    strcmp(mnt, jf_fs.mnt_abs) == 0 && strstr(line, " - fuse"))
			minor = (long)min; /* the last one is the newest */
	}
	fclose(f);
	return minor;
}

/* Abort our FUSE connection (/sys/fs/fuse/connections/N/abort, writable by
 * the mounting user): every request still pending fails with ENOTCONN and
 * releases the directory lock a notification waits for. 0 or -errno. */
static int sink_unblock(void *ctx)
{
	char path[96];
	long minor = mount_minor();
	int fd, r = 0;

	(void)ctx;
	if (minor < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%ld/abort", minor);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) < 0)
		r = -errno;
	close(fd);
	return r;
}

int jf_notify_start(struct fuse_session *se)
{
	static const struct jf_nq_sink sink = {
		.entry = sink_entry,
		.inode = sink_inode,
		.all = sink_all,
		.unblock = sink_unblock,
	};
	int r;

	N.se = se;
	r = jf_nq_start(&N.q, JF_NOTIFY_QUEUE, &sink);
	if (r < 0)
		fprintf(stderr,
			"jailfs: cannot start the notifier thread: %s; changes the kernel "
			"caches show only after entry_timeout/attr_timeout\n",
			strerror(-r));
	return r;
}

void jf_notify_stop(void)
{
	struct jf_nq_stats st;
	int r;

	if (!N.q)
		return;
	/* A notification sent just before the session loop ended can wait for
	 * a directory lock held by a request nobody will answer now, and that
	 * request ends only when /dev/fuse is released, which the blocked
	 * thread prevents: the stop aborts the connection. If even that fails,
	 * the thread and its memory are left behind. */
	r = jf_nq_stop(N.q, NOTIFY_STOP_WAIT_S, &st);
	N.q = NULL;
	if (r < 0)
		fprintf(stderr, "jailfs: notifier thread blocked in the kernel; not waiting "
				"for it\n");
	if (jf_fs.opts->debug)
		fprintf(stderr,
			"jailfs: notify: %llu queued, %llu coalesced, %llu times full, %llu "
			"refused\n",
			(unsigned long long)st.pushed, (unsigned long long)st.coalesced,
			(unsigned long long)st.full, (unsigned long long)st.refused);
	if (jf_fs.opts->debug && r == 0)
		fprintf(stderr, "jailfs: notify: %llu inval_entry, %llu inval_inode, %llu epochs\n",
			(unsigned long long)N.n_entry, (unsigned long long)N.n_inode,
			(unsigned long long)N.n_epoch);
}

void jf_notify_entry(fuse_ino_t parent, const char *name)
{
	if (N.q)
		(void)jf_nq_entry(N.q, parent, name);
}

void jf_notify_inode(fuse_ino_t ino)
{
	if (N.q)
		(void)jf_nq_inode(N.q, ino);
}

void jf_notify_all(void)
{
	if (N.q)
		(void)jf_nq_all(N.q);
}
