/* SPDX-License-Identifier: MIT */
/*
 * FUSE over io_uring (uring.h), on raw io_uring syscalls.
 *
 * The kernel side (fs/fuse/dev_uring.c, include/uapi/linux/fuse.h 7.42):
 *  - the INIT reply asks for FUSE_OVER_IO_URING (flags2); from then on every
 *    new request waits until each queue 0..num_possible_cpus()-1 has a
 *    registered entry, or until a registration fails (fc->io_uring is
 *    cleared, /dev/fuse serves). A registration refused before it reaches
 *    the ring code (enable_uring turned off meanwhile: EOPNOTSUPP) leaves
 *    requests waiting for good: we end the daemon then;
 *  - REGISTER (IORING_OP_URING_CMD on /dev/fuse, SQE128, the 80-byte
 *    command area a struct fuse_uring_cmd_req with the qid) hands the entry's
 *    header and payload buffers (iovecs in addr/len = 2), accepted only after
 *    the INIT reply; the payload buffer must hold max(8 KiB, max_write,
 *    max_pages pages). It completes when a request is put in the entry;
 *  - the request: fuse_in_header in in_out, the first argument (the
 *    per-opcode struct, possibly empty) in op_in, the other arguments in the
 *    payload, ring_ent_in_out.payload_sz bytes of it, and commit_id;
 *  - COMMIT_AND_FETCH with that commit_id sends the reply (fuse_out_header
 *    in in_out, payload_sz bytes of payload) and waits for the next request;
 *  - when the connection ends, waiting entries complete with -ENOTCONN.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsstate.h"
#include "stats.h"
#include "uring.h"

/* Protocol 7.42 where the system's linux/fuse.h is older. */
#define JF_FUSE_OVER_IO_URING (1ULL << 41)
#define JF_URING_CMD_REGISTER 1
#define JF_URING_CMD_COMMIT_AND_FETCH 2

struct jf_uring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id; /* the request's unique, echoed in the commit */
	uint32_t payload_sz;
	uint32_t padding;
	uint64_t reserved;
};

struct jf_uring_req_header {
	char in_out[128]; /* fuse_in_header in, fuse_out_header out */
	char op_in[128];  /* the per-opcode struct (the request's first argument) */
	struct jf_uring_ent_in_out ring_ent_in_out;
};

struct jf_uring_cmd_req {
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};

/* Entries per queue: one thread serves them in turn; more than one lets
 * requests that arrive meanwhile wait in userspace buffers and be taken in
 * one io_uring_enter(2). */
#define JF_URING_DEPTH 4
/*
 * The payload buffer: at least what the kernel asks, max(8 KiB, max_write,
 * max_pages pages). libfuse 3.14 caps max_write at its buffer size less a
 * page (1 MiB) and derives max_pages from it. Buffers are anonymous memory,
 * touched only as far as requests fill them. A page in front of the payload
 * holds the ring header and, just before the payload, the request's headers
 * copied there to make it contiguous without moving the payload.
 */
#define JF_URING_PAYLOAD (1U << 20)
#define JF_URING_FRONT 4096U
#define JF_URING_POLL_TAG 1 /* user_data of the stop eventfd's poll */

struct jf_ring {
	int fd;
	unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
	char *sqes; /* 128-byte entries (IORING_SETUP_SQE128) */
	void *sq_map, *cq_map;
	size_t sq_len, cq_len, sqes_len;
	unsigned sq_entries, sq_local_tail, pending;
};

struct jf_uring_queue;

struct jf_uring_ent {
	struct jf_uring_queue *q;
	char *buf; /* JF_URING_FRONT + JF_URING_PAYLOAD bytes */
	struct jf_uring_req_header *hdr;
	char *payload;
	struct iovec iov[2];
	uint64_t unique;
	uint32_t op; /* the last command sent: JF_URING_CMD_* */
	bool replied, dead;
};

struct jf_uring_queue {
	int qid;
	int evfd;
	bool thread_started;
	pthread_t thread;
	struct jf_ring ring;
	struct jf_uring_ent ent[JF_URING_DEPTH];
};

static struct {
	struct fuse_session *se;
	int fuse_fd;
	int nq;
	struct jf_uring_queue *q;
	bool asked; /* the INIT reply asks for it */
	bool go, stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_bool said_refused;
} U = {.fuse_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

/* The ring request this thread is serving, for the reply hooks. */
static __thread struct jf_uring_ent *cur;

static void say_off(const char *why, int err)
{
	if (err)
		fprintf(stderr, "jailfs: io_uring off: %s (%s); requests go through /dev/fuse\n",
			why, strerror(err));
	else
		fprintf(stderr, "jailfs: io_uring off: %s; requests go through /dev/fuse\n", why);
}

/* ---------- a minimal io_uring ---------- */

static int ring_map(struct jf_ring *r, const struct io_uring_params *p)
{
	r->sq_len = p->sq_off.array + p->sq_entries * sizeof(unsigned);
	r->cq_len = p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
	if (p->features & IORING_FEAT_SINGLE_MMAP)
		r->sq_len = r->cq_len = r->sq_len > r->cq_len ? r->sq_len : r->cq_len;
	r->sq_map = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
			 IORING_OFF_SQ_RING);
	if (r->sq_map == MAP_FAILED)
		return -errno;
	r->cq_map = r->sq_map;
	if (!(p->features & IORING_FEAT_SINGLE_MMAP)) {
		r->cq_map = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
				 r->fd, IORING_OFF_CQ_RING);
		if (r->cq_map == MAP_FAILED)
			return -errno;
	}
	r->sqes_len = p->sq_entries * 2 * sizeof(struct io_uring_sqe);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		       IORING_OFF_SQES);
	if (r->sqes == MAP_FAILED)
		return -errno;
	return 0;
}

static void ring_unmap(struct jf_ring *r)
{
	if (r->sqes && r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_len);
	if (r->cq_map && r->cq_map != MAP_FAILED && r->cq_map != r->sq_map)
		munmap(r->cq_map, r->cq_len);
	if (r->sq_map && r->sq_map != MAP_FAILED)
		munmap(r->sq_map, r->sq_len);
	if (r->fd >= 0)
		close(r->fd);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/* A ring of @entries 128-byte SQEs. 0 or a negative errno. */
static int ring_init(struct jf_ring *r, unsigned entries)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE,
		.cq_entries = entries * 2,
	};
	char *sq, *cq;
	int err;

	r->fd = (int)syscall(__NR_io_uring_setup, entries, &p);
	if (r->fd < 0)
		return -errno;
	err = ring_map(r, &p);
	if (err < 0) {
		ring_unmap(r);
		return err;
	}
	sq = r->sq_map;
	cq = r->cq_map;
	r->sq_head = (unsigned *)(sq + p.sq_off.head);
	r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p.sq_off.array);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	r->sq_entries = p.sq_entries;
	r->sq_local_tail = *r->sq_tail;
	return 0;
}

/* The next free SQE, zeroed, or NULL when the ring is full (it never is:
 * each entry has at most one command under way). Published by ring_enter. */
static struct io_uring_sqe *ring_sqe(struct jf_ring *r)
{
	unsigned head = __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
	unsigned idx = r->sq_local_tail & *r->sq_mask;
	struct io_uring_sqe *sqe;

	if (r->sq_local_tail - head >= r->sq_entries)
		return NULL;
	sqe = (struct io_uring_sqe *)(r->sqes + idx * 2 * sizeof(*sqe));
	memset(sqe, 0, 2 * sizeof(*sqe));
	r->sq_array[idx] = idx;
	r->sq_local_tail++;
	r->pending++;
	return sqe;
}

/* Submit what ring_sqe() queued and wait for at least one completion.
 * 0 or a negative errno (-EINTR: call again). */
static int ring_enter(struct jf_ring *r)
{
	int n;

	__atomic_store_n(r->sq_tail, r->sq_local_tail, __ATOMIC_RELEASE);
	n = (int)syscall(__NR_io_uring_enter, r->fd, r->pending, 1, IORING_ENTER_GETEVENTS, NULL,
			 0);
	if (n < 0)
		return -errno;
	r->pending -= (unsigned)n;
	return 0;
}

/* ---------- ring entries ---------- */

static void sqe_cmd(struct io_uring_sqe *sqe, struct jf_uring_ent *e, uint32_t op, uint64_t id)
{
	struct jf_uring_cmd_req req = {.commit_id = id, .qid = (uint16_t)e->q->qid};

	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = U.fuse_fd;
	sqe->cmd_op = op;
	sqe->user_data = (uint64_t)(uintptr_t)e;
	if (op == JF_URING_CMD_REGISTER) {
		sqe->addr = (uint64_t)(uintptr_t)e->iov;
		sqe->len = 2;
	}
	memcpy(sqe->cmd, &req, sizeof(req));
}

static int queue_cmd(struct jf_uring_ent *e, uint32_t op)
{
	struct io_uring_sqe *sqe = ring_sqe(&e->q->ring);

	if (!sqe)
		return -EBUSY;
	e->op = op;
	sqe_cmd(sqe, e, op, op == JF_URING_CMD_REGISTER ? 0 : e->unique);
	return 0;
}

static int ent_alloc(struct jf_uring_queue *q, struct jf_uring_ent *e)
{
	e->q = q;
	e->buf = mmap(NULL, JF_URING_FRONT + JF_URING_PAYLOAD, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e->buf == MAP_FAILED) {
		e->buf = NULL;
		return -errno;
	}
	e->hdr = (struct jf_uring_req_header *)e->buf;
	e->payload = e->buf + JF_URING_FRONT;
	e->iov[0] = (struct iovec){e->hdr, sizeof(*e->hdr)};
	e->iov[1] = (struct iovec){e->payload, JF_URING_PAYLOAD};
	return 0;
}

/* Answer the ring request of @e with -@err and nothing else. */
static void ent_fail(struct jf_uring_ent *e, int err)
{
	struct fuse_out_header oh = {.len = sizeof(oh), .error = -err, .unique = e->unique};

	memcpy(e->hdr->in_out, &oh, sizeof(oh));
	e->hdr->ring_ent_in_out.payload_sz = 0;
	e->replied = true;
}

/*
 * Serve the request in @e: lay it out as /dev/fuse delivers it (in_header,
 * the first argument, the rest) in the bytes just before the payload, give
 * it to libfuse, and queue the commit of the reply the handler sent.
 */
static void ent_serve(struct jf_uring_ent *e)
{
	struct fuse_in_header in;
	uint32_t psz = e->hdr->ring_ent_in_out.payload_sz;
	size_t opsz;
	struct fuse_buf fb = {0};

	memcpy(&in, e->hdr->in_out, sizeof(in));
	e->unique = e->hdr->ring_ent_in_out.commit_id;
	e->replied = false;
	jf_stats_count(in.opcode);
	jf_stats_count_uring();
	if (psz > JF_URING_PAYLOAD || in.len < sizeof(in) + psz ||
	    in.len - sizeof(in) - psz > sizeof(e->hdr->op_in)) {
		ent_fail(e, EIO);
	} else {
		opsz = in.len - sizeof(in) - psz;
		fb.mem = e->payload - opsz - sizeof(in);
		fb.size = in.len;
		memcpy(fb.mem, &in, sizeof(in));
		memcpy((char *)fb.mem + sizeof(in), e->hdr->op_in, opsz);
		cur = e;
		fuse_session_process_buf(U.se, &fb);
		cur = NULL;
		if (!e->replied) /* no handler returns without replying */
			ent_fail(e, EIO);
	}
	queue_cmd(e, JF_URING_CMD_COMMIT_AND_FETCH);
}

ssize_t jf_uring_reply(const struct iovec *iov, int count)
{
	struct jf_uring_ent *e = cur;
	struct fuse_out_header oh;
	size_t n = 0;

	if (!e || e->replied || count < 1 || iov[0].iov_len != sizeof(oh))
		return -1;
	memcpy(&oh, iov[0].iov_base, sizeof(oh));
	if (oh.unique != e->unique)
		return -1;
	for (int i = 1; i < count; i++) {
		if (iov[i].iov_len > JF_URING_PAYLOAD - n) {
			ent_fail(e, EIO);
			return (ssize_t)oh.len;
		}
		memmove(e->payload + n, iov[i].iov_base, iov[i].iov_len);
		n += iov[i].iov_len;
	}
	memcpy(e->hdr->in_out, &oh, sizeof(oh));
	e->hdr->ring_ent_in_out.payload_sz = (uint32_t)n;
	e->replied = true;
	return (ssize_t)(sizeof(oh) + n);
}

/* Read exactly @len bytes from @fd into @buf. 0 or -1 with errno set. */
static int read_full(int fd, void *buf, size_t len)
{
	while (len) {
		ssize_t n = read(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		buf = (char *)buf + n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t jf_uring_reply_pipe(int fd, size_t len)
{
	struct jf_uring_ent *e = cur;
	struct fuse_out_header oh;
	size_t n = len - sizeof(oh);

	if (!e || e->replied || len < sizeof(oh))
		return -2;
	if (read_full(fd, &oh, sizeof(oh)) < 0)
		return -1;
	if (oh.unique != e->unique || n > JF_URING_PAYLOAD) {
		errno = EIO;
		return -1;
	}
	if (read_full(fd, e->payload, n) < 0)
		return -1;
	memcpy(e->hdr->in_out, &oh, sizeof(oh));
	e->hdr->ring_ent_in_out.payload_sz = (uint32_t)n;
	e->replied = true;
	return (ssize_t)len;
}

/* ---------- queue threads ---------- */

/* The ring cannot serve queue @q any more: requests made on its CPU would
 * wait for good, so end the daemon (SIGTERM: the session loop ends, the view
 * is unmounted) rather than leave a hung mount. */
static void queue_fatal(struct jf_uring_queue *q, const char *what, int err)
{
	fprintf(stderr, "jailfs: io_uring queue %d: %s: %s; exiting\n", q->qid, what,
		strerror(err));
	kill(getpid(), SIGTERM);
}

/* A registration or commit of @e completed with -@err. */
static void ent_error(struct jf_uring_ent *e, int err)
{
	struct jf_uring_queue *q = e->q;
	int alive = 0;

	e->dead = true;
	if (err == ENOTCONN || err == ECANCELED)
		return; /* the connection ended */
	if (e->op == JF_URING_CMD_REGISTER && err != EOPNOTSUPP) {
		/* The kernel cleared fc->io_uring: /dev/fuse serves. */
		if (!atomic_exchange(&U.said_refused, true))
			say_off("the kernel refused to register a ring entry", err);
		return;
	}
	for (int i = 0; i < JF_URING_DEPTH; i++)
		alive += !q->ent[i].dead;
	if (e->op == JF_URING_CMD_REGISTER || !alive)
		queue_fatal(q, e->op == JF_URING_CMD_REGISTER ? "register" : "commit", err);
}

/* Handle one completion. False when the thread is to stop. */
static bool queue_cqe(struct jf_uring_queue *q, const struct io_uring_cqe *c)
{
	struct jf_uring_ent *e = (struct jf_uring_ent *)(uintptr_t)c->user_data;

	if (c->user_data == JF_URING_POLL_TAG)
		return false;
	if (c->res == 0) {
		ent_serve(e);
	} else if (c->res == -EINTR || c->res == -EAGAIN) {
		if (c->res == -EAGAIN)
			usleep(1000); /* the INIT reply not processed yet */
		queue_cmd(e, e->op);
	} else {
		ent_error(e, -c->res);
	}
	return true;
}

/* Take every completion there is. False when the thread is to stop. */
static bool queue_drain(struct jf_uring_queue *q)
{
	struct jf_ring *r = &q->ring;
	unsigned head = *r->cq_head;
	unsigned tail = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE);
	bool run = true;

	for (; head != tail; head++) {
		struct io_uring_cqe c = r->cqes[head & *r->cq_mask];

		__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
		if (!queue_cqe(q, &c))
			run = false;
	}
	return run;
}

static void queue_run(struct jf_uring_queue *q)
{
	struct io_uring_sqe *sqe;
	int r;

	for (int i = 0; i < JF_URING_DEPTH; i++)
		queue_cmd(&q->ent[i], JF_URING_CMD_REGISTER);
	sqe = ring_sqe(&q->ring);
	sqe->opcode = IORING_OP_POLL_ADD;
	sqe->fd = q->evfd;
	sqe->poll32_events = POLLIN;
	sqe->user_data = JF_URING_POLL_TAG;
	do {
		r = ring_enter(&q->ring);
		if (r < 0 && r != -EINTR) {
			queue_fatal(q, "io_uring_enter", -r);
			return;
		}
	} while (queue_drain(q));
}

static void *queue_main(void *arg)
{
	struct jf_uring_queue *q = arg;
	char name[16];
	cpu_set_t cpus;
	bool run;

	snprintf(name, sizeof(name), "jailfs-ring%u", (unsigned)q->qid % 10000U);
	pthread_setname_np(pthread_self(), name);
	/* Requests made on CPU qid come to this queue: serve them there. Best
	 * effort (the CPU may be offline). */
	CPU_ZERO(&cpus);
	CPU_SET(q->qid, &cpus);
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	pthread_mutex_lock(&U.lock);
	while (!U.go && !U.stop)
		pthread_cond_wait(&U.cond, &U.lock);
	run = !U.stop;
	pthread_mutex_unlock(&U.lock);
	if (run)
		queue_run(q);
	return NULL;
}

/* ---------- set-up and tear-down ---------- */

/* Queues the kernel makes: num_possible_cpus(), the highest CPU in
 * /sys/devices/system/cpu/possible ("0-3", "0,2-5") plus one. -errno. */
static int possible_cpus(void)
{
	char text[256], *p = text;
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);
	long last = -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	text[n] = '\0';
	while (*p >= '0' && *p <= '9') {
		last = strtol(p, &p, 10);
		if (*p == '-' || *p == ',')
			p++;
	}
	return last >= 0 && last < 4096 ? (int)last + 1 : -EIO;
}

/* The fuse module's enable_uring: 1 (Y), 0 (N), -ENOENT (no such
 * parameter: a kernel without FUSE over io_uring). */
static int module_enabled(void)
{
	char c = 0;
	int fd = open("/sys/module/fuse/parameters/enable_uring", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == 'Y' || c == 'y' || c == '1';
}

void jf_uring_prepare(struct fuse_session *se)
{
	int on;

	if (!jf_fs.opts->io_uring)
		return;
	if (geteuid() != 0) {
		say_off("the daemon is not root", 0);
		return;
	}
	on = module_enabled();
	if (on < 0) {
		say_off("this kernel has no FUSE over io_uring (Linux >= 6.14 with "
			"CONFIG_FUSE_IO_URING)",
			0);
		return;
	}
	if (!on) {
		say_off("the fuse module parameter enable_uring is N "
			"(/sys/module/fuse/parameters/enable_uring)",
			0);
		return;
	}
	U.se = se;
	U.fuse_fd = fuse_session_fd(se);
}

static int queue_init(struct jf_uring_queue *q, int qid)
{
	int err;

	q->qid = qid;
	q->evfd = eventfd(0, EFD_CLOEXEC);
	if (q->evfd < 0)
		return -errno;
	err = ring_init(&q->ring, JF_URING_DEPTH + 1);
	for (int i = 0; i < JF_URING_DEPTH && !err; i++)
		err = ent_alloc(q, &q->ent[i]);
	return err;
}

/* Rings, buffers and (waiting) threads for every queue. 0 or -errno, after
 * saying what failed. */
static int queues_make(void)
{
	sigset_t all, old;
	int n = possible_cpus(), err = 0;

	if (n < 0) {
		say_off("cannot read /sys/devices/system/cpu/possible", -n);
		return n;
	}
	U.q = calloc((size_t)n, sizeof(*U.q));
	if (!U.q) {
		say_off("out of memory", ENOMEM);
		return -ENOMEM;
	}
	U.nq = n;
	for (int i = 0; i < n; i++) {
		U.q[i].evfd = -1;
		U.q[i].ring.fd = -1;
	}
	for (int i = 0; i < n && !err; i++)
		err = queue_init(&U.q[i], i);
	if (err) {
		say_off("cannot set up an io_uring", -err);
		return err;
	}
	/* Signals go to the main thread (SIGINT, SIGTERM end the loop). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (int i = 0; i < n && !err; i++) {
		err = -pthread_create(&U.q[i].thread, NULL, queue_main, &U.q[i]);
		U.q[i].thread_started = !err;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		say_off("cannot start the queue threads", -err);
	return err;
}

uint64_t jf_uring_init_flags(uint64_t kernel_flags)
{
	if (!U.se)
		return 0;
	if (!(kernel_flags & JF_FUSE_OVER_IO_URING)) {
		say_off("the kernel did not offer it at INIT", 0);
		return 0;
	}
	if (queues_make() < 0) {
		jf_uring_stop();
		return 0;
	}
	U.asked = true;
	if (jf_fs.opts->debug)
		fprintf(stderr,
			"jailfs: io_uring on: %d queues of %d entries, one thread per CPU\n", U.nq,
			JF_URING_DEPTH);
	return JF_FUSE_OVER_IO_URING;
}

void jf_uring_start(void)
{
	if (!U.asked)
		return;
	pthread_mutex_lock(&U.lock);
	U.go = true;
	pthread_cond_broadcast(&U.cond);
	pthread_mutex_unlock(&U.lock);
}

static void queue_free(struct jf_uring_queue *q)
{
	uint64_t one = 1;

	if (q->thread_started) {
		if (write(q->evfd, &one, sizeof(one)) < 0)
			fprintf(stderr, "jailfs: io_uring queue %d: %s\n", q->qid, strerror(errno));
		pthread_join(q->thread, NULL);
	}
	if (q->ring.fd >= 0 || q->ring.sq_map)
		ring_unmap(&q->ring);
	for (int i = 0; i < JF_URING_DEPTH; i++)
		if (q->ent[i].buf)
			munmap(q->ent[i].buf, JF_URING_FRONT + JF_URING_PAYLOAD);
	if (q->evfd >= 0)
		close(q->evfd);
}

void jf_uring_stop(void)
{
	pthread_mutex_lock(&U.lock);
	U.stop = true;
	pthread_cond_broadcast(&U.cond);
	pthread_mutex_unlock(&U.lock);
	for (int i = 0; i < U.nq; i++)
		queue_free(&U.q[i]);
	free(U.q);
	U.q = NULL;
	U.nq = 0;
	U.asked = false;
}
