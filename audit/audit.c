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
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "audit.h"

#define BATCH_MAX 1023	    /* records per writev(2), + 1 "dropped" line <= IOV_MAX (1024) */
#define RETRY_NS 100000000L /* 100 ms between attempts when write(2) fails */
#define STOP_RETRIES 10	    /* then jf_audit_stop() gives up on a broken file */
#define COMM_CACHE 8	    /* /proc/PID/comm fds kept per worker thread */
#define LINGER_NS 1000000L  /* async: gather records this long after an idle wake-up */

struct slot {
	char *line;
	size_t len;
	int prio; /* syslog priority: info (allow), notice (deny, hide), warning (dropped) */
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
	int fd, efd;
	char *path;
	pthread_t writer;
} A = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.progress = PTHREAD_COND_INITIALIZER,
	.fd = -1,
	.efd = -1,
};

static atomic_int level;	/* enum jf_audit_level; OFF when not running */
static atomic_int reopen_req;	/* set by jf_audit_request_reopen() */
static atomic_int wake_fd = -1; /* A.efd for the signal handler */

static const char *const level_names[] = {"off", "denied", "writes", "all"};

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

/* ---- process names ---- */

struct comm_ent {
	pid_t pid;
	int fd; /* /proc/PID/comm, read again on each use: exec changes it */
};

struct comm_cache {
	struct comm_ent e[COMM_CACHE];
	unsigned next;
};

static pthread_key_t comm_key;
static pthread_once_t comm_once = PTHREAD_ONCE_INIT;
static __thread struct comm_cache *comm_tls;

static void comm_cache_free(void *p)
{
	struct comm_cache *c = p;

	for (int i = 0; i < COMM_CACHE; i++)
		if (c->e[i].fd >= 0)
			close(c->e[i].fd);
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

/*
 * Name of process (thread) @pid as /proc/PID/comm says now. One pread(2) on a
 * cached fd (~0.6 us here) instead of open+read+close (~4 us); the fd belongs
 * to the task, so a reused pid makes the read fail and the file is reopened.
 * Per-thread cache: no lock, at most COMM_CACHE fds per worker thread.
 */
static bool comm_lookup(pid_t pid, char out[JF_AUDIT_COMM_MAX])
{
	struct comm_cache *c;
	struct comm_ent *e = NULL;
	char p[32];

	if (pid <= 0 || !(c = comm_cache_get()))
		return false;
	for (int i = 0; i < COMM_CACHE; i++) {
		if (c->e[i].pid == pid && c->e[i].fd >= 0) {
			if (comm_read(c->e[i].fd, out))
				return true;
			e = &c->e[i];
			break;
		}
	}
	if (!e)
		e = &c->e[c->next++ % COMM_CACHE];
	if (e->fd >= 0)
		close(e->fd);
	snprintf(p, sizeof(p), "/proc/%d/comm", (int)pid);
	e->pid = pid;
	e->fd = open(p, O_RDONLY | O_CLOEXEC);
	return e->fd >= 0 && comm_read(e->fd, out);
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

static void push(char *line, size_t len, int prio)
{
	uint64_t seq;
	bool wake;

	pthread_mutex_lock(&A.lock);
	if (A.sync) {
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
	A.ring[(A.head + A.count++) % A.cap] =
		(struct slot){.line = line, .len = len, .prio = prio};
	seq = ++A.pushed;
	wake = A.writer_sleeping;
	A.writer_sleeping = false;
	if (A.sync) {
		if (wake)
			wake_writer();
		wake = false;
		wait_written(seq);
	}
	pthread_mutex_unlock(&A.lock);
	if (wake)
		wake_writer();
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
	struct timespec ts;
	size_t len;
	char *line;

	if (!ev || !jf_audit_wants(ev->decision, ev->mutation))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	line = jf_audit_format(ev, &ts, comm_lookup(ev->pid, comm) ? comm : NULL, &len);
	if (!line) {
		/* Out of memory: still counted, never silent. */
		pthread_mutex_lock(&A.lock);
		if (A.running && !A.stopping) {
			A.dropped++;
			A.dropped_pend++;
		}
		pthread_mutex_unlock(&A.lock);
		return;
	}
	push(line, len, ev->decision == JF_AUDIT_ALLOW ? LOG_INFO : LOG_NOTICE);
}

void jf_audit_get_stats(struct jf_audit_stats *out)
{
	pthread_mutex_lock(&A.lock);
	out->queued = A.pushed;
	out->written = A.written;
	out->dropped = A.dropped;
	pthread_mutex_unlock(&A.lock);
}

/* ---- the writer thread ---- */

static int open_log(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);

	return fd >= 0 ? fd : -errno;
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

/* Write one batch to the file (retrying while it fails) and to syslog. */
static void write_batch(struct slot *s, int n)
{
	struct iovec iov[BATCH_MAX + 1];
	struct iovec *v = iov;
	int left = n, tries = 0, r;

	for (int i = 0; i < n; i++)
		iov[i] = (struct iovec){.iov_base = s[i].line, .iov_len = s[i].len};
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
		A.writer_sleeping = true;
		slept = true;
		pthread_mutex_unlock(&A.lock);
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
	struct timespec ts;
	int n, records;
	bool done;

	(void)arg;
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
	if (cfg->level > JF_AUDIT_ALL || (!cfg->path && !cfg->syslog))
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
	atomic_store(&level, JF_AUDIT_OFF);
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
