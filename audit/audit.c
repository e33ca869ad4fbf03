/* SPDX-License-Identifier: MIT */
/*
 * Audit log writer: a bounded ring of formatted records, one writer thread.
 *
 * Workers (FUSE threads) format their record (audit-format.c), take the lock
 * for a few pointer moves, and return; the writer takes whole batches out of
 * the ring and hands them to one writev(2) each on an O_APPEND fd, so every
 * write(2) holds only complete lines and a SIGKILL never leaves a torn line
 * behind (data in the page cache survives the death of the process).
 *
 * Wake-ups go through an eventfd: a worker writes it only when the writer said
 * it was going to sleep, and the SIGHUP handler may write it at any time
 * (write(2) is async-signal-safe, pthread_cond_signal() is not).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "audit.h"
#include "units.h"

#define BATCH_MAX 1023	    /* records per writev(2), + 1 "dropped" line <= IOV_MAX (1024) */
#define RETRY_NS 100000000L /* 100 ms between attempts when write(2) fails */
#define STOP_RETRIES 10	    /* then jf_audit_stop() gives up on a broken file */
#define COMM_CACHE 8	    /* /proc/PID/comm fds kept per worker thread */
#define LINGER_NS 1000000L  /* async: gather records this long after an idle wake-up */
#define EXE_TTL_S 1	    /* seconds a cached /proc/PID/exe stays trusted */
#define RATE_SLOTS 1024	    /* processes the rate limit tells apart at once (power of 2) */
#define SWEEP_MS 1000	    /* pending "suppressed" counts are written at least this often */
#define TS_PREFIX 35	    /* bytes of {"ts":"2026-11-30T05:50:01.123456Z" */

enum { N_DROPPED = 3 }; /* after the three decisions in struct slot's counts */

struct slot {
	char *line;
	size_t len;
	int prio;      /* syslog priority: info (allow), notice (deny, hide), warning (dropped) */
	uint64_t n[4]; /* events the line stands for, by decision, then lost to a full ring */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t progress; /* broadcast: room in the ring, or records written */
	struct slot *ring;
	size_t cap, head, count;
	uint64_t pushed;       /* records accepted; the last one has sequence number pushed */
	uint64_t written;      /* records 1..written are written */
	uint64_t dropped;      /* total lost to a full ring */
	uint64_t dropped_pend; /* lost and not yet recorded in a "dropped" line */
	unsigned waiters;      /* workers in pthread_cond_wait(progress) */
	bool running, stopping, writer_sleeping;
	bool sync, syslog;
	uint64_t suppressed; /* events left out by the rate limit, in "suppressed" lines */
	/* The size cap, the writer's own (no lock): */
	uint64_t max_size, size; /* bytes; size: what the file held plus what we wrote */
	bool cappable;		 /* a regular file: a FIFO or a tty has no size to cap */
	bool capped;		 /* the capped line is in the file at cap_off */
	bool cap_failed;	 /* its update failed once: said so */
	off_t cap_off;
	int cap_fd; /* the file again, without O_APPEND: pwrite(2) of the capped line */
	struct jf_audit_capped capc;
	atomic_uint_fast64_t capped_events; /* for jf_audit_get_stats() */
	int fd, efd;
	char *path;
	pthread_t writer;
} A = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.progress = PTHREAD_COND_INITIALIZER,
	.fd = -1,
	.efd = -1,
	.cap_fd = -1,
};

static atomic_int level;	/* enum jf_audit_level; OFF when not running */
static atomic_int reopen_req;	/* set by jf_audit_request_reopen() */
static atomic_int wake_fd = -1; /* A.efd for the signal handler */

static const char *const level_names[] = {"off", "denied", "writes", "all"};

int jf_audit_parse_rate(const char *s, uint32_t *out)
{
	size_t len = s ? strlen(s) : 0;
	uint64_t v;
	int r;

	if (len > 2 && strcmp(s + len - 2, "/s") == 0)
		len -= 2;
	r = s ? jf_parse_count(s, len, &v) : -EINVAL;
	if (r < 0)
		return r;
	if (v == 0)
		return -EINVAL;
	if (v > 1000000000u)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}

int jf_audit_parse_level(const char *s, enum jf_audit_level *out)
{
	for (int i = 0; i < 4; i++) {
		if (s && strcmp(s, level_names[i]) == 0) {
			*out = (enum jf_audit_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *jf_audit_level_name(enum jf_audit_level l)
{
	return l >= JF_AUDIT_OFF && l <= JF_AUDIT_ALL ? level_names[l] : "off";
}

bool jf_audit_wants(enum jf_audit_decision decision, bool mutation)
{
	int l = atomic_load_explicit(&level, memory_order_relaxed);

	if (l >= JF_AUDIT_ALL)
		return true;
	if (decision != JF_AUDIT_ALLOW)
		return l >= JF_AUDIT_DENIED;
	return mutation && l >= JF_AUDIT_WRITES;
}

/* ---- the calling process ---- */

struct comm_ent {
	pid_t pid;
	int fd;			      /* /proc/PID/comm, read again on each use: exec changes it */
	char comm[JF_AUDIT_COMM_MAX]; /* the name exe was read with */
	char *exe;		      /* readlink /proc/PID/exe, NULL = unreadable */
	time_t exe_at;		      /* CLOCK_REALTIME second exe was read */
	pid_t tgid;		      /* its process (thread group), 0 = not read yet */
	unsigned long long pidns;     /* its pid namespace's inode, 0 = unreadable */
};

struct comm_cache {
	struct comm_ent e[COMM_CACHE];
	unsigned next;
};

static pthread_key_t comm_key;
static pthread_once_t comm_once = PTHREAD_ONCE_INIT;
static __thread struct comm_cache *comm_tls;

static void comm_ent_clear(struct comm_ent *e)
{
	if (e->fd >= 0)
		close(e->fd);
	free(e->exe);
	*e = (struct comm_ent){.pid = 0, .fd = -1};
}

static void comm_cache_free(void *p)
{
	struct comm_cache *c = p;

	for (int i = 0; i < COMM_CACHE; i++)
		comm_ent_clear(&c->e[i]);
	free(c);
}

static void comm_key_init(void)
{
	pthread_key_create(&comm_key, comm_cache_free);
}

static struct comm_cache *comm_cache_get(void)
{
	if (comm_tls)
		return comm_tls;
	pthread_once(&comm_once, comm_key_init);
	comm_tls = malloc(sizeof(*comm_tls));
	if (!comm_tls)
		return NULL;
	comm_tls->next = 0;
	for (int i = 0; i < COMM_CACHE; i++)
		comm_tls->e[i] = (struct comm_ent){.pid = 0, .fd = -1};
	pthread_setspecific(comm_key, comm_tls);
	return comm_tls;
}

static bool comm_read(int fd, char out[JF_AUDIT_COMM_MAX])
{
	ssize_t n = pread(fd, out, JF_AUDIT_COMM_MAX - 1, 0);

	if (n <= 0)
		return false;
	if (out[n - 1] == '\n')
		n--;
	out[n] = '\0';
	return true;
}

/* readlink /proc/PID/exe into a malloc'd string; NULL when unreadable (gone,
 * a kernel thread, not ours to read). */
static char *exe_read(pid_t pid)
{
	char p[32], buf[PATH_MAX];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	n = readlink(p, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	return strndup(buf, (size_t)n);
}

/*
 * The executable of @e's process, read again (readlink, ~2.5 us here) only
 * when the name changed (exec sets it), the entry is new, or EXE_TTL_S passed:
 * an exec to a program of the same name inside one pid shows within that.
 */
static void exe_refresh(struct comm_ent *e, const char *comm, time_t now)
{
	if (e->exe && strcmp(e->comm, comm) == 0 && now - e->exe_at < EXE_TTL_S)
		return;
	free(e->exe);
	e->exe = exe_read(e->pid);
	e->exe_at = now;
	memcpy(e->comm, comm, JF_AUDIT_COMM_MAX);
}

/* The inode of @pid's pid namespace, 0 when unreadable. A task never
 * changes its own pid namespace (setns and unshare move only its children),
 * so it is read once per cache entry, and the entry's fd pins the task. */
static unsigned long long pidns_read(pid_t pid)
{
	char p[32];
	struct stat st;

	snprintf(p, sizeof(p), "/proc/%d/ns/pid", (int)pid);
	return stat(p, &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

/*
 * Name and executable of process (thread) @pid now. One pread(2) of
 * /proc/PID/comm on a cached fd (~0.6 us here) instead of open+read+close
 * (~4 us); the fd belongs to the task, so a reused pid makes the read fail
 * and the entry is started again (the executable read again with it). A pid
 * whose /proc entry is gone sets out->gone. Per-thread cache: no lock, at
 * most COMM_CACHE fds per worker thread. @comm and @out->exe point into the
 * cache or @comm, valid until the next call on this thread.
 */
static void proc_lookup(pid_t pid, time_t now, char comm[JF_AUDIT_COMM_MAX],
			struct jf_audit_proc *out)
{
	struct comm_cache *c;
	struct comm_ent *e = NULL;
	char p[32];

	*out = (struct jf_audit_proc){0};
	if (pid <= 0 || !(c = comm_cache_get()))
		return;
	for (int i = 0; i < COMM_CACHE; i++) {
		if (c->e[i].pid == pid && c->e[i].fd >= 0) {
			e = &c->e[i];
			break;
		}
	}
	if (e && comm_read(e->fd, comm))
		goto found;
	if (!e)
		e = &c->e[c->next++ % COMM_CACHE];
	comm_ent_clear(e);
	snprintf(p, sizeof(p), "/proc/%d/comm", (int)pid);
	e->pid = pid;
	e->fd = open(p, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0 || !comm_read(e->fd, comm)) {
		out->gone = errno == ENOENT || errno == ESRCH;
		comm_ent_clear(e);
		return;
	}
	e->pidns = pidns_read(pid);
found:
	exe_refresh(e, comm, now);
	out->comm = comm;
	out->exe = e->exe;
	out->pidns = e->pidns;
}

/* The thread group of thread @tid from /proc/TID/status; @tid when
 * unreadable (gone: a reused number then counts as its own process). */
static pid_t tgid_read(pid_t tid)
{
	char p[32], buf[512];
	const char *t;
	ssize_t n;
	long v;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/status", (int)tid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tid;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return tid;
	buf[n] = '\0';
	t = strstr(buf, "\nTgid:");
	if (!t)
		return tid;
	v = strtol(t + 6, NULL, 10);
	return v > 0 && v <= INT_MAX ? (pid_t)v : tid;
}

/*
 * The process of thread @tid, for the rate limit: FUSE reports the calling
 * thread, and a process must not get a rate for each thread it starts (64
 * threads got 53 times the rate). Read once per entry of the per-thread
 * cache that proc_lookup() filled (call it first); @tid when unknown.
 */
static pid_t proc_tgid(pid_t tid)
{
	struct comm_cache *c = comm_cache_get();
	struct comm_ent *e = NULL;

	for (int i = 0; c && i < COMM_CACHE; i++)
		if (c->e[i].pid == tid && c->e[i].fd >= 0)
			e = &c->e[i];
	if (e && e->tgid > 0)
		return e->tgid;
	if (tid <= 0)
		return tid;
	if (!e)
		return tgid_read(tid);
	return e->tgid = tgid_read(tid);
}

/* ---- the ring ---- */

static void wake_writer(void)
{
	uint64_t one = 1;
	int fd = atomic_load(&wake_fd);

	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, the writer is awake anyway. */
	}
}

void jf_audit_request_reopen(void)
{
	int saved = errno;

	atomic_store(&reopen_req, 1);
	wake_writer();
	errno = saved;
}

/* Wait (sync mode) until record @seq is written or the writer is gone. */
static void wait_written(uint64_t seq)
{
	A.waiters++;
	while (A.written < seq && A.running)
		pthread_cond_wait(&A.progress, &A.lock);
	A.waiters--;
}

/* A line that could not be made or queued: counted, never silent. */
static void count_lost(void)
{
	pthread_mutex_lock(&A.lock);
	if (A.running && !A.stopping) {
		A.dropped++;
		A.dropped_pend++;
	}
	pthread_mutex_unlock(&A.lock);
}

/* Queue @line (taken over), standing for the events @n (struct slot). With
 * @may_wait (a worker's record in sync mode) wait for room and for the write;
 * the writer's own lines never wait on it. */
static void push(char *line, size_t len, int prio, const uint64_t n[4], bool may_wait)
{
	bool wait = A.sync && may_wait;
	uint64_t seq;
	bool wake;

	pthread_mutex_lock(&A.lock);
	if (wait) {
		A.waiters++;
		while (A.count == A.cap && A.running && !A.stopping)
			pthread_cond_wait(&A.progress, &A.lock);
		A.waiters--;
	}
	if (!A.running || A.stopping || A.count == A.cap) {
		if (A.running && !A.stopping) {
			A.dropped++;
			A.dropped_pend++;
		}
		pthread_mutex_unlock(&A.lock);
		free(line);
		return;
	}
	A.ring[(A.head + A.count++) % A.cap] = (struct slot){
		.line = line, .len = len, .prio = prio, .n = {n[0], n[1], n[2], n[3]}};
	seq = ++A.pushed;
	wake = A.writer_sleeping;
	A.writer_sleeping = false;
	if (wait) {
		if (wake)
			wake_writer();
		wake = false;
		wait_written(seq);
	}
	pthread_mutex_unlock(&A.lock);
	if (wake)
		wake_writer();
}

/* ---- the rate limit per process ---- */

/*
 * One entry per process, found by hashing its pid into RATE_SLOTS entries,
 * each with its own lock: O(1) per record, and workers serving different
 * processes seldom share a lock. A process that takes another's entry first
 * writes the other's pending summary, so a collision costs a summary line,
 * never a count. GCRA (a token bucket with one number): a record passes when
 * the process's theoretical arrival time is at most one second ahead.
 */
struct rate_src {
	pthread_mutex_t lock;
	pid_t pid;		      /* 0: free */
	int64_t tat;		      /* ns, CLOCK_REALTIME */
	struct jf_audit_suppressed s; /* pending when a count is not 0 */
	char comm[JF_AUDIT_COMM_MAX];
	char *exe; /* s.proc.exe, owned */
};

static struct rate_src *rates;	 /* RATE_SLOTS of them when a rate is set, else NULL */
static int64_t rate_interval;	 /* ns between records at the rate */
static atomic_uint rate_pending; /* entries holding a pending summary */

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static bool pending(const struct rate_src *r)
{
	const uint64_t *n = r->s.by_decision;

	return n[0] || n[1] || n[2];
}

/* The summary line of @r's pending counts (NULL if none or no memory, which
 * counts as one lost record), the counts reset. Called with r->lock held. */
static char *take_summary(struct rate_src *r, size_t *len, uint64_t n[4])
{
	struct timespec now;
	char *line;

	if (!pending(r))
		return NULL;
	clock_gettime(CLOCK_REALTIME, &now);
	line = jf_audit_format_suppressed(&r->s, &now, len);
	for (int i = 0; i < 3; i++)
		n[i] = r->s.by_decision[i];
	n[N_DROPPED] = 0;
	if (!line)
		count_lost();
	memset(r->s.by_decision, 0, sizeof(r->s.by_decision));
	free(r->exe);
	r->exe = NULL;
	atomic_fetch_sub(&rate_pending, 1);
	return line;
}

static void push_summary(char *line, size_t len, const uint64_t n[4])
{
	if (!line)
		return;
	pthread_mutex_lock(&A.lock);
	A.suppressed += n[0] + n[1] + n[2];
	pthread_mutex_unlock(&A.lock);
	push(line, len, LOG_NOTICE, n, false);
}

/* Count @ev as left out: the first of a burst takes the process's name. */
static void suppress(struct rate_src *r, const struct jf_audit_event *ev, const struct timespec *ts)
{
	char comm[JF_AUDIT_COMM_MAX];

	if (!pending(r)) {
		proc_lookup(r->pid, ts->tv_sec, comm, &r->s.proc);
		memcpy(r->comm, comm, sizeof(comm));
		r->exe = r->s.proc.exe ? strdup(r->s.proc.exe) : NULL;
		r->s.proc.comm = r->s.proc.comm ? r->comm : NULL;
		r->s.proc.exe = r->exe;
		r->s.pid = r->pid;
		r->s.uid = ev->uid;
		r->s.since = *ts;
		/* a writer asleep without a timeout sets one now */
		if (atomic_fetch_add(&rate_pending, 1) == 0)
			wake_writer();
	}
	r->s.until = *ts;
	r->s.by_decision[ev->decision <= JF_AUDIT_HIDE ? ev->decision : JF_AUDIT_DENY]++;
}

/* Does @ev pass the rate limit? A pending summary of the entry (this process
 * at the end of its burst, or another that had the entry) is queued first. */
static bool rate_admit(const struct jf_audit_event *ev, const struct timespec *ts)
{
	pid_t key = proc_tgid(ev->pid);
	struct rate_src *r = &rates[((uint32_t)key * 2654435761u) >> 22 & (RATE_SLOTS - 1)];
	int64_t now = ts_ns(ts);
	uint64_t n[4];
	char *line = NULL;
	size_t len = 0;
	bool pass;

	pthread_mutex_lock(&r->lock);
	if (r->pid != key) {
		line = take_summary(r, &len, n);
		r->pid = key;
		r->tat = now;
	}
	if (r->tat < now)
		r->tat = now;
	pass = r->tat - now <= 1000000000 - rate_interval;
	if (pass) {
		r->tat += rate_interval;
		if (!line)
			line = take_summary(r, &len, n);
	} else {
		suppress(r, ev, ts);
	}
	pthread_mutex_unlock(&r->lock);
	push_summary(line, len, n);
	return pass;
}

/* Queue every pending summary (the writer each SWEEP_MS, flush, stop). */
static void rate_sweep(void)
{
	if (!rates || atomic_load(&rate_pending) == 0)
		return;
	for (int i = 0; i < RATE_SLOTS; i++) {
		struct rate_src *r = &rates[i];
		uint64_t n[4];
		char *line;
		size_t len = 0;

		pthread_mutex_lock(&r->lock);
		line = take_summary(r, &len, n);
		pthread_mutex_unlock(&r->lock);
		push_summary(line, len, n);
	}
}

static int rate_start(uint32_t rate)
{
	if (!rate)
		return 0;
	rates = calloc(RATE_SLOTS, sizeof(*rates));
	if (!rates)
		return -ENOMEM;
	for (int i = 0; i < RATE_SLOTS; i++)
		pthread_mutex_init(&rates[i].lock, NULL);
	rate_interval = 1000000000 / rate;
	atomic_store(&rate_pending, 0);
	return 0;
}

/* After the writer stopped: nothing uses the entries any more. */
static void rate_stop(void)
{
	if (!rates)
		return;
	for (int i = 0; i < RATE_SLOTS; i++) {
		free(rates[i].exe);
		pthread_mutex_destroy(&rates[i].lock);
	}
	free(rates);
	rates = NULL;
}

int jf_audit_flush(int timeout_ms)
{
	struct timespec until;
	uint64_t seq;
	int r = 0;

	/* the condition variable measures time on CLOCK_REALTIME (its default) */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	rate_sweep();
	pthread_mutex_lock(&A.lock);
	seq = A.pushed;
	A.waiters++;
	while (A.written < seq && A.running && r == 0)
		r = pthread_cond_timedwait(&A.progress, &A.lock, &until);
	A.waiters--;
	pthread_mutex_unlock(&A.lock);
	return r == ETIMEDOUT ? -ETIMEDOUT : 0;
}

void jf_audit_emit(const struct jf_audit_event *ev)
{
	char comm[JF_AUDIT_COMM_MAX];
	struct jf_audit_proc proc;
	uint64_t n[4] = {0};
	struct timespec ts;
	size_t len;
	char *line;

	if (!ev || !jf_audit_wants(ev->decision, ev->mutation))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	/* First: the rate limit takes the process from the entry this fills;
	 * a record it admits does not look up another (@proc stays valid). */
	proc_lookup(ev->pid, ts.tv_sec, comm, &proc);
	if (rates && !rate_admit(ev, &ts))
		return;
	line = jf_audit_format(ev, &ts, &proc, &len);
	if (!line) {
		count_lost();
		return;
	}
	n[ev->decision <= JF_AUDIT_HIDE ? ev->decision : JF_AUDIT_DENY] = 1;
	push(line, len, ev->decision == JF_AUDIT_ALLOW ? LOG_INFO : LOG_NOTICE, n, true);
}

void jf_audit_get_stats(struct jf_audit_stats *out)
{
	pthread_mutex_lock(&A.lock);
	out->queued = A.pushed;
	out->written = A.written;
	out->dropped = A.dropped;
	out->suppressed = A.suppressed;
	pthread_mutex_unlock(&A.lock);
	out->capped = atomic_load(&A.capped_events);
}

/* ---- the writer thread ---- */

static int open_log(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);

	return fd >= 0 ? fd : -errno;
}

/* A new file (start, SIGHUP): its size so far, not capped yet. */
static void cap_reset(void)
{
	struct stat st;

	if (A.cap_fd >= 0)
		close(A.cap_fd);
	A.cap_fd = -1;
	A.capped = A.cap_failed = false;
	A.cappable = A.fd >= 0 && fstat(A.fd, &st) == 0 && S_ISREG(st.st_mode);
	A.size = A.cappable ? (uint64_t)st.st_size : 0;
	memset(&A.capc, 0, sizeof(A.capc));
	A.capc.max_size = A.max_size;
}

/* logrotate renamed (or removed) the file: continue in a new one at the path.
 * On failure keep the old fd: records still land somewhere, nothing lost. */
static void reopen_log(void)
{
	int fd;

	if (!A.path)
		return;
	fd = open_log(A.path);
	if (fd < 0) {
		syslog(LOG_AUTHPRIV | LOG_ERR,
		       "audit: cannot reopen %s: %s; still writing the old file", A.path,
		       strerror(-fd));
		return;
	}
	close(A.fd);
	A.fd = fd;
	cap_reset();
}

/* writev(2) all of *@iov; a short write (ENOSPC, EFBIG) continues with the
 * rest. Returns 0, or -errno with *@iov / *@n advanced past what was written. */
static int writev_all(int fd, struct iovec **iov, int *n)
{
	while (*n > 0) {
		ssize_t w = writev(fd, *iov, *n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (*n > 0 && (size_t)w >= (*iov)->iov_len) {
			w -= (ssize_t)(*iov)->iov_len;
			(*iov)++;
			(*n)--;
		}
		if (*n > 0) {
			(*iov)->iov_base = (char *)(*iov)->iov_base + w;
			(*iov)->iov_len -= (size_t)w;
		}
	}
	return 0;
}

static void send_syslog(struct slot *s, int n)
{
	/* The JSON line without its newline; authpriv: access decisions and
	 * private path names stay out of world-readable logs. */
	for (int i = 0; i < n; i++)
		syslog(LOG_AUTHPRIV | s[i].prio, "%.*s", (int)s[i].len - 1, s[i].line);
}

/*
 * The size cap: how many of the @n lines at @s go to the file. The rest are
 * counted in the capped line, which the first line that does not fit puts
 * in the file (*@add_capped); from then on the file takes nothing else.
 * Room for the capped line is kept below max_size, so the file never exceeds
 * it (unless it was larger before we started).
 */
static int cap_batch(struct slot *s, int n, bool *add_capped)
{
	uint64_t room = A.max_size - JF_AUDIT_CAPPED_LEN;
	int k = 0;

	*add_capped = false;
	if (!A.max_size || !A.cappable)
		return n;
	while (!A.capped && k < n && A.size <= room && s[k].len <= room - A.size)
		A.size += s[k++].len;
	if (k == n)
		return n;
	for (int i = k; i < n; i++) {
		for (int d = 0; d < 3; d++)
			A.capc.by_decision[d] += s[i].n[d];
		A.capc.dropped += s[i].n[N_DROPPED];
		atomic_fetch_add(&A.capped_events,
				 s[i].n[0] + s[i].n[1] + s[i].n[2] + s[i].n[N_DROPPED]);
	}
	clock_gettime(CLOCK_REALTIME, &A.capc.until);
	*add_capped = !A.capped;
	return k;
}

/*
 * Rewrite the capped line in place with the counts now. Its numbers are
 * padded to a fixed width, so a reader sees one whole line before and after;
 * the counts are final once the daemon has stopped or answered a flush.
 */
static void cap_update(void)
{
	static char buf[JF_AUDIT_CAPPED_LEN];
	char p[32];

	if (A.cap_fd < 0) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", A.fd);
		A.cap_fd = open(p, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (A.cap_fd < 0)
			return;
	}
	jf_audit_format_capped(&A.capc, &A.capc.until, buf);
	/* keep the first line's time: when the cap was reached */
	if (pwrite(A.cap_fd, buf + TS_PREFIX, sizeof(buf) - TS_PREFIX, A.cap_off + TS_PREFIX) < 0 &&
	    !A.cap_failed) {
		syslog(LOG_AUTHPRIV | LOG_ERR, "audit: updating the capped record of %s: %m",
		       A.path);
		A.cap_failed = true; /* once per file */
	}
}

/* Write one batch to the file (retrying while it fails) and to syslog. */
static void write_batch(struct slot *s, int n)
{
	static char capped_line[JF_AUDIT_CAPPED_LEN];
	struct iovec iov[BATCH_MAX + 2];
	struct iovec *v = iov;
	bool add_capped, had_capped = A.capped;
	int left = cap_batch(s, n, &add_capped), tries = 0, r;

	for (int i = 0; i < left; i++)
		iov[i] = (struct iovec){.iov_base = s[i].line, .iov_len = s[i].len};
	if (add_capped) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		jf_audit_format_capped(&A.capc, &now, capped_line);
		iov[left++] =
			(struct iovec){.iov_base = capped_line, .iov_len = sizeof(capped_line)};
		A.capped = true;
	}
	while (A.fd >= 0 && left > 0) {
		r = writev_all(A.fd, &v, &left);
		if (r == 0)
			break;
		if (++tries == 1 || tries % 600 == 0)
			syslog(LOG_AUTHPRIV | LOG_ERR, "audit: writing %s: %s (retrying)", A.path,
			       strerror(-r));
		if (atomic_load(&level) == JF_AUDIT_OFF && tries >= STOP_RETRIES) {
			fprintf(stderr, "jailfs: audit: lost %d records writing %s: %s\n", left,
				A.path, strerror(-r));
			break;
		}
		nanosleep(&(struct timespec){.tv_nsec = RETRY_NS}, NULL);
		if (atomic_exchange(&reopen_req, 0))
			reopen_log();
	}
	if (add_capped && A.capped) {
		off_t end = lseek(A.fd, 0, SEEK_CUR);

		A.cap_off = end - (off_t)JF_AUDIT_CAPPED_LEN;
		A.size = (uint64_t)end;
	} else if (had_capped && A.capped && n > 0) {
		cap_update();
	}
	if (A.syslog)
		send_syslog(s, n);
}

/* Sleep until there is work. Called and returns with A.lock held; true when
 * it had to sleep (the ring was empty). */
static bool writer_wait(void)
{
	bool slept = false;
	uint64_t v;

	while (A.count == 0 && !A.stopping && !A.dropped_pend && !atomic_load(&reopen_req)) {
		/* pending summaries: wake up in time to write them */
		int timeout = rates && atomic_load(&rate_pending) ? SWEEP_MS : -1;
		struct pollfd p = {.fd = A.efd, .events = POLLIN};

		A.writer_sleeping = true;
		slept = true;
		pthread_mutex_unlock(&A.lock);
		if (poll(&p, 1, timeout) == 0) {
			pthread_mutex_lock(&A.lock);
			break;
		}
		if (read(A.efd, &v, sizeof(v)) < 0) {
			/* EINTR: signals are blocked in this thread; loop anyway. */
		}
		pthread_mutex_lock(&A.lock);
	}
	A.writer_sleeping = false;
	return slept;
}

/*
 * Woken from idle by the first record of a burst: in async mode wait a little
 * so that the burst goes out in one write(2) and the workers, who see the
 * writer awake, skip the eventfd write. Costs at most LINGER_NS of records on
 * SIGKILL; sync mode never lingers (a worker is waiting).
 */
static void writer_linger(void)
{
	if (A.sync || A.stopping || A.count >= A.cap / 2)
		return;
	pthread_mutex_unlock(&A.lock);
	nanosleep(&(struct timespec){.tv_nsec = LINGER_NS}, NULL);
	pthread_mutex_lock(&A.lock);
}

static void *writer_main(void *arg)
{
	static struct slot batch[BATCH_MAX + 1];
	struct timespec ts, swept;
	int n, records;
	bool done;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &swept);
	pthread_mutex_lock(&A.lock);
	for (;;) {
		if (writer_wait())
			writer_linger();
		for (n = 0; n < BATCH_MAX && A.count; n++, A.count--) {
			batch[n] = A.ring[A.head];
			A.head = (A.head + 1) % A.cap;
		}
		records = n;
		/* Lost records come after everything that was in the ring with them. */
		if (A.dropped_pend) {
			clock_gettime(CLOCK_REALTIME, &ts);
			batch[n].line = jf_audit_format_dropped(A.dropped_pend, &ts, &batch[n].len);
			batch[n].prio = LOG_WARNING;
			memset(batch[n].n, 0, sizeof(batch[n].n));
			batch[n].n[N_DROPPED] = A.dropped_pend;
			if (batch[n].line) {
				A.dropped_pend = 0;
				n++;
			}
		}
		done = A.stopping && A.count == 0 && !A.dropped_pend;
		if (A.waiters)
			pthread_cond_broadcast(&A.progress); /* room in the ring */
		pthread_mutex_unlock(&A.lock);

		if (atomic_exchange(&reopen_req, 0))
			reopen_log();
		write_batch(batch, n);
		for (int i = 0; i < n; i++)
			free(batch[i].line);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ts_ns(&ts) - ts_ns(&swept) >= (int64_t)SWEEP_MS * 1000000) {
			rate_sweep();
			swept = ts;
		}

		pthread_mutex_lock(&A.lock);
		A.written += (uint64_t)records;
		if (A.waiters)
			pthread_cond_broadcast(&A.progress);
		if (done)
			break;
	}
	pthread_mutex_unlock(&A.lock);
	return NULL;
}

/* ---- start and stop ---- */

static void reset_state(void)
{
	free(A.ring);
	free(A.path);
	A.ring = NULL;
	A.path = NULL;
	if (A.fd >= 0)
		close(A.fd);
	if (A.cap_fd >= 0)
		close(A.cap_fd);
	A.cap_fd = -1;
	rate_stop();
	if (A.efd >= 0)
		close(A.efd);
	A.fd = A.efd = -1;
	atomic_store(&wake_fd, -1);
}

static int start_writer(void)
{
	sigset_t all, old;
	int r;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&A.writer, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

int jf_audit_start(const struct jf_audit_config *cfg)
{
	int r;

	if (cfg->level == JF_AUDIT_OFF)
		return 0;
	if (cfg->level > JF_AUDIT_ALL || (!cfg->path && !cfg->syslog) ||
	    (cfg->max_size && cfg->max_size < JF_AUDIT_MAX_SIZE_MIN))
		return -EINVAL;
	pthread_mutex_lock(&A.lock);
	if (A.running) {
		pthread_mutex_unlock(&A.lock);
		return -EBUSY;
	}
	A.cap = cfg->queue_len ? cfg->queue_len : JF_AUDIT_QUEUE_DEFAULT;
	A.head = A.count = 0;
	A.pushed = A.written = A.dropped = A.dropped_pend = 0;
	A.sync = cfg->sync;
	A.syslog = cfg->syslog;
	A.stopping = A.writer_sleeping = false;
	A.ring = calloc(A.cap, sizeof(*A.ring));
	A.path = cfg->path ? strdup(cfg->path) : NULL;
	A.efd = eventfd(0, EFD_CLOEXEC);
	r = !A.ring || (cfg->path && !A.path) ? -ENOMEM : A.efd < 0 ? -errno : 0;
	if (r == 0 && A.path && (A.fd = open_log(A.path)) < 0)
		r = A.fd;
	A.max_size = cfg->max_size;
	cap_reset();
	atomic_store(&A.capped_events, 0);
	A.suppressed = 0;
	if (r == 0)
		r = rate_start(cfg->rate);
	if (r == 0 && cfg->syslog)
		openlog("jailfs", LOG_PID | LOG_NDELAY, LOG_AUTHPRIV);
	atomic_store(&wake_fd, A.efd);
	atomic_store(&reopen_req, 0);
	if (r == 0)
		r = start_writer();
	if (r < 0) {
		reset_state();
	} else {
		A.running = true;
		atomic_store(&level, cfg->level);
	}
	pthread_mutex_unlock(&A.lock);
	return r;
}

void jf_audit_stop(void)
{
	pthread_mutex_lock(&A.lock);
	if (!A.running || A.stopping) {
		pthread_mutex_unlock(&A.lock);
		return;
	}
	pthread_mutex_unlock(&A.lock);
	/* the last summaries, while the writer still takes lines */
	atomic_store(&level, JF_AUDIT_OFF);
	rate_sweep();
	pthread_mutex_lock(&A.lock);
	A.stopping = true;
	pthread_cond_broadcast(&A.progress);
	pthread_mutex_unlock(&A.lock);
	wake_writer();
	pthread_join(A.writer, NULL);

	pthread_mutex_lock(&A.lock);
	A.running = false;
	pthread_cond_broadcast(&A.progress);
	if (A.fd >= 0)
		fdatasync(A.fd); /* a clean stop also survives a power cut */
	reset_state();
	pthread_mutex_unlock(&A.lock);
}
