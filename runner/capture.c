/* SPDX-License-Identifier: MIT */
/*
 * Output capture and the timeout. One poll(2) loop watches the two output
 * pipes, the jail's status pipe, its pid-1 (pidfd) and a signalfd for
 * SIGINT/SIGTERM/SIGHUP. Pipes are always drained, so the command never
 * blocks on a full pipe; what is kept is bounded: at most max_output bytes
 * per stream (--json), or forwarded live up to that many bytes. Memory stays
 * at the limit plus one 64 KiB read buffer whatever the command prints.
 * Live output to a terminal is filtered (termfilter.h): the command's bytes
 * must not act on the user's terminal or clipboard.
 *
 * Timeout and interruption: SIGTERM to the jail's pid 1, which forwards it to
 * every process of the namespace; after the grace period SIGKILL to pid 1,
 * whose death makes the kernel kill everything left (pid_namespaces(7)).
 * A process waiting for a FUSE request its daemon has already read cannot be
 * killed (the wait is uninterruptible until the daemon answers or the
 * connection is aborted), and pid 1 only exits once every process of its
 * namespace has: when the jail is still there JR_STUCK_MS after SIGKILL, the
 * loop gives up on it and says so (res->stuck); the caller aborts the
 * view's connection. The one-shot views' daemons are watched too: one that
 * exits under the command ends the run, with the reason in res->broken.
 *
 * The terminal: when jailrun's stdin is a terminal the command gets it as
 * its stdin, and may change its settings (stty -echo, raw mode) or be killed
 * before it puts them back. They are saved before the jail starts and
 * restored once it is over, however it ended (exit, timeout, signal, setup
 * failure); so are the file status flags of fds 0-2 (the command shares
 * their open file descriptions: O_NONBLOCK would stay for the caller's next
 * programs, and for our own writes to fd 1) and the terminal's exclusive
 * flag. The ioctls that cannot be undone this way are refused by the
 * seccomp filter (sandbox.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "cleanup.h"
#include "netwatch.h"
#include "sandbox.h"
#include "termfilter.h"
#include "text.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		struct pollfd out = {.fd = fd, .events = POLLOUT};

		if (w < 0 && errno == EINTR)
			continue;
		/* the command may have made our shared stdout non-blocking */
		if (w < 0 && errno == EAGAIN && poll(&out, 1, 10000) > 0)
			continue;
		if (w <= 0)
			return; /* our reader went away: keep draining, drop the bytes */
		p += w;
		n -= w;
	}
}

/* Put the end of @n bytes in the stream's tail ring (before st->total grows). */
static void tail_take(struct jr_stream *st, const char *data, size_t n)
{
	size_t skip = n > JR_TAIL_BYTES ? n - JR_TAIL_BYTES : 0;
	size_t pos = (size_t)((st->total + skip) % JR_TAIL_BYTES);

	for (data += skip, n -= skip; n > 0;) {
		size_t k = JR_TAIL_BYTES - pos < n ? JR_TAIL_BYTES - pos : n;

		memcpy(st->tail + pos, data, k);
		data += k;
		n -= k;
		pos = 0;
	}
}

/* Forward @n bytes to @fd, through @tf when @fd is a terminal (not NULL). */
static void forward(int fd, struct jr_termfilter *tf, const char *data, size_t n)
{
	static char shown[65536 + JR_TF_HOLD];

	while (tf && n > 0) {
		size_t k = n < 65536 ? n : 65536;

		write_all(fd, shown, jr_termfilter(tf, data, k, shown));
		data += k;
		n -= k;
	}
	if (!tf)
		write_all(fd, data, n);
}

/* Account @n bytes read from a stream: keep or forward up to @limit (live:
 * to @live_fd, through @tf unless NULL). */
static int stream_take(struct jr_stream *st, const char *data, size_t n, uint64_t limit, bool live,
		       int live_fd, struct jr_termfilter *tf)
{
	size_t keep = 0;

	tail_take(st, data, n);
	if (st->total < limit)
		keep = limit - st->total < n ? limit - st->total : n;
	st->total += n;
	if (keep < n)
		st->truncated = true;
	if (!keep)
		return 0;
	st->last_kept = data[keep - 1];
	if (live) {
		forward(live_fd, tf, data, keep);
		return 0;
	}
	if (!st->buf) {
		st->buf = malloc(limit ? limit : 1);
		if (!st->buf)
			return -ENOMEM;
	}
	memcpy(st->buf + st->len, data, keep);
	st->len += keep;
	return 0;
}

/* Bytes of a stream cut at @limit kept after the marker: half the limit, at
 * most the tail ring. */
static size_t tail_size(uint64_t limit)
{
	return limit / 2 < JR_TAIL_BYTES ? (size_t)(limit / 2) : JR_TAIL_BYTES;
}

/* Copy the last @n bytes the command wrote (@n <= JR_TAIL_BYTES and <= the
 * total) from the ring to @out. */
static void tail_copy(const struct jr_stream *st, size_t n, char *out)
{
	size_t pos = (size_t)((st->total - n) % JR_TAIL_BYTES);
	size_t k = JR_TAIL_BYTES - pos < n ? JR_TAIL_BYTES - pos : n;

	memcpy(out, st->tail + pos, k);
	memcpy(out + k, st->tail, n - k);
}

/* The marker between head and tail, on a line of its own, into @out. */
static size_t marker(const struct jr_stream *st, char *out, size_t size)
{
	uint64_t omitted = st->total - st->head_kept - st->tail_kept;
	int n = snprintf(out, size, "%s[... %llu bytes omitted ...]\n",
			 st->head_kept && st->last_kept != '\n' ? "\n" : "",
			 (unsigned long long)omitted);

	return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

/*
 * A stream past its limit @limit, once the command is over: the failure a
 * build prints is at its end. Captured (!@live): the buffer becomes the head
 * (the limit less the tail), the marker and the tail. Live, the limit's worth
 * was forwarded: the marker and the tail of what followed go to @fd (through
 * @tf, restarted, unless NULL). Returns 0, or -ENOMEM (the buffer is then
 * left as it was: the head).
 */
static int stream_cut(struct jr_stream *st, uint64_t limit, bool live, int fd,
		      struct jr_termfilter *tf)
{
	size_t t = tail_size(limit), n;
	char mark[96], *p;
	static char tail[JR_TAIL_BYTES];

	if (!st->truncated || !t)
		return 0;
	if (live) {
		st->head_kept = limit;
		st->tail_kept = st->total - limit < t ? st->total - limit : t;
		n = marker(st, mark, sizeof(mark));
		tail_copy(st, (size_t)st->tail_kept, tail);
		if (tf)
			*tf = (struct jr_termfilter){0};
		forward(fd, tf, mark, n);
		forward(fd, tf, tail, (size_t)st->tail_kept);
		return 0;
	}
	if (!st->buf)
		return 0;
	st->head_kept = limit - t;
	st->tail_kept = t;
	st->last_kept = st->buf[st->head_kept - 1];
	n = marker(st, mark, sizeof(mark));
	p = realloc(st->buf, (size_t)st->head_kept + n + t);
	if (!p)
		return -ENOMEM;
	st->buf = p;
	memcpy(p + st->head_kept, mark, n);
	tail_copy(st, t, p + st->head_kept + n);
	st->len = (size_t)st->head_kept + n + t;
	return 0;
}

#ifndef TIOCGEXCL
#define TIOCGEXCL _IOR('T', 0x40, int)
#endif

struct tty_saved {
	bool saved; /* @t holds fd 0's termios */
	struct termios t;
	int fl[3]; /* file status flags of fds 0-2, -1 when closed */
	int excl;  /* fd 0's terminal is exclusive (TIOCGEXCL), -1 unknown */
};

static void tty_save(const struct jr_spawn *s, struct tty_saved *ts)
{
	ts->saved = !s->stdin_null && tcgetattr(0, &ts->t) == 0;
	for (int fd = 0; fd < 3; fd++)
		ts->fl[fd] = fcntl(fd, F_GETFL);
	if (!ts->saved || ioctl(0, TIOCGEXCL, &ts->excl) < 0)
		ts->excl = -1;
}

/* The file status flags and the exclusive flag, as they were. */
static void flags_restore(const struct tty_saved *ts)
{
	int excl;

	for (int fd = 0; fd < 3; fd++)
		if (ts->fl[fd] >= 0 && fcntl(fd, F_GETFL) != ts->fl[fd])
			fcntl(fd, F_SETFL, ts->fl[fd]);
	if (ts->excl >= 0 && ioctl(0, TIOCGEXCL, &excl) == 0 && !excl != !ts->excl)
		ioctl(0, ts->excl ? TIOCEXCL : TIOCNXCL);
}

static bool termios_equal(const struct termios *a, const struct termios *b)
{
	return a->c_iflag == b->c_iflag && a->c_oflag == b->c_oflag && a->c_cflag == b->c_cflag &&
	       a->c_lflag == b->c_lflag && !memcmp(a->c_cc, b->c_cc, sizeof(a->c_cc)) &&
	       cfgetispeed(a) == cfgetispeed(b) && cfgetospeed(a) == cfgetospeed(b);
}

/* Put the saved settings back if the command changed them. SIGTTOU is
 * blocked meanwhile: from a background process group tcsetattr(3) would
 * otherwise stop jailrun. */
static void tty_restore(const struct tty_saved *ts)
{
	struct termios now;
	sigset_t ttou, old;

	flags_restore(ts);
	if (!ts->saved || (tcgetattr(0, &now) == 0 && termios_equal(&now, &ts->t)))
		return;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	if (tcsetattr(0, TCSANOW, &ts->t) < 0)
		fprintf(stderr, "jailrun: cannot restore the terminal settings: %s\n",
			strerror(errno));
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void kill_jail(pid_t pid, int pidfd, int sig)
{
	if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) == 0)
		return;
	kill(pid, sig);
}

#define JR_STUCK_MS 2000 /* after SIGKILL: the jail is blocked in a view */
#define NPOLL 9	     /* out, err, status, pidfd, signalfd, the views' daemons (5, 6), netwatch */
#define P_NETSOCK 7  /* the socket the command's connect() watch comes over */
#define P_NETWATCH 8 /* that watch's seccomp listener */

struct loop {
	struct pollfd p[NPOLL];
	struct jr_outcome *res;
	pid_t pid;
	int64_t deadline, kill_at, killed_at;
	bool exited;
	/* live output to a terminal goes through a filter (termfilter.h) */
	struct jr_termfilter tf[2];
	bool tty[2];
};

static void kill_hard(struct loop *l)
{
	kill_jail(l->pid, l->p[3].fd, SIGKILL);
	if (!l->killed_at)
		l->killed_at = now_ms();
}

static void escalate(struct loop *l, uint64_t grace_ms)
{
	if (l->kill_at) {
		kill_hard(l);
		return;
	}
	kill_jail(l->pid, l->p[3].fd, SIGTERM);
	l->kill_at = now_ms() + (int64_t)grace_ms;
}

static void read_status(struct loop *l)
{
	struct jr_status_msg m;
	ssize_t n = read(l->p[2].fd, &m, sizeof(m));

	if (n != (ssize_t)sizeof(m)) {
		l->p[2].fd = -1; /* EOF (pid 1 gone) */
		return;
	}
	if (m.kind == 1) {
		l->res->exit_code = m.code;
		l->res->signal = m.signo;
	} else {
		snprintf(l->res->error, sizeof(l->res->error), "%s", m.msg);
	}
}

static int handle_signal(struct loop *l, uint64_t grace_ms)
{
	struct signalfd_siginfo si;

	if (read(l->p[4].fd, &si, sizeof(si)) != sizeof(si))
		return 0;
	if (!l->res->interrupted && !l->kill_at) {
		/* first: pass the same signal on (Ctrl-C stays Ctrl-C), SIGKILL later */
		l->res->interrupted = true;
		l->res->interrupt_sig = (int)si.ssi_signo;
		kill_jail(l->pid, l->p[3].fd, (int)si.ssi_signo);
		l->kill_at = now_ms() + (int64_t)grace_ms;
		return 0;
	}
	l->res->interrupted = true;
	if (!l->res->interrupt_sig)
		l->res->interrupt_sig = (int)si.ssi_signo;
	escalate(l, grace_ms);
	return 0;
}

static int loop_timeout(struct loop *l)
{
	int64_t now = now_ms(), t = -1;

	if (l->exited)
		return 200; /* only draining is left; pipes close momentarily */
	if (l->deadline && !l->kill_at)
		t = l->deadline - now;
	if (l->kill_at)
		t = l->kill_at - now;
	if (l->killed_at && (t < 0 || l->killed_at + JR_STUCK_MS - now < t))
		t = l->killed_at + JR_STUCK_MS - now;
	if (t < 0 && (l->deadline || l->kill_at || l->killed_at))
		t = 0;
	return (int)(t > 1000000 ? 1000000 : t);
}

/* Read what is ready on the two output pipes; a pipe at EOF is closed.
 * Returns 0, or -ENOMEM when a capture buffer could not be allocated (the
 * jail is then killed). */
static int drain_ready(struct loop *l, uint64_t max_output, bool live)
{
	static char chunk[65536];
	int r = 0;

	for (int i = 0; i < 2; i++) {
		ssize_t got;

		if (!(l->p[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		got = read(l->p[i].fd, chunk, sizeof(chunk));
		if (got > 0) {
			struct jr_stream *st = i == 0 ? &l->res->out : &l->res->err;

			if (stream_take(st, chunk, got, max_output, live, i + 1,
					l->tty[i] ? &l->tf[i] : NULL) < 0) {
				r = -ENOMEM;
				escalate(l, 0);
			}
		} else if (got == 0 || errno != EINTR) {
			close(l->p[i].fd);
			l->p[i].fd = -1;
		}
	}
	return r;
}

/* The timeout (SIGTERM) and the end of the grace period (SIGKILL). */
static void check_deadlines(struct loop *l, uint64_t grace_ms)
{
	if (l->exited)
		return;
	if (l->deadline && !l->kill_at && now_ms() >= l->deadline) {
		l->res->timed_out = true;
		escalate(l, grace_ms);
	} else if (l->kill_at && now_ms() >= l->kill_at) {
		kill_hard(l);
		l->kill_at = now_ms() + 1000000;
	}
	if (l->killed_at && now_ms() >= l->killed_at + JR_STUCK_MS) {
		l->res->stuck = true;
		if (!l->res->broken[0])
			snprintf(l->res->broken, sizeof(l->res->broken),
				 "the command's processes did not end %d s after SIGKILL: they "
				 "wait for the view's daemon, which does not answer",
				 JR_STUCK_MS / 1000);
	}
}

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* The daemon of a one-shot view (poll slot @i) has exited: say how, and end
 * the run (nothing in the view works any more). */
static void daemon_gone(struct loop *l, int i, uint64_t grace_ms)
{
	siginfo_t si = {0};
	char how[64] = "";

	if (waitid(P_PIDFD, l->p[i].fd, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid) {
		if (si.si_code == CLD_EXITED)
			snprintf(how, sizeof(how), ": exit status %d", si.si_status);
		else
			snprintf(how, sizeof(how), ": killed by SIG%s", sigabbrev_np(si.si_status));
	}
	l->p[i].fd = -1;
	if (!l->res->broken[0])
		snprintf(l->res->broken, sizeof(l->res->broken),
			 "the view's daemon (jailfs) exited under the command%s", how);
	if (!l->exited && !l->kill_at)
		escalate(l, grace_ms);
}

/* The connect() watch: take its listener when it comes, answer what it
 * reports, and say at once when the first connect leaves the jail. */
static void netwatch_ready(struct loop *l)
{
	struct pollfd *s = &l->p[P_NETSOCK], *w = &l->p[P_NETWATCH];
	char *what = l->res->net_refused;
	int fd;

	if (s->fd >= 0 && (s->revents & (POLLIN | POLLHUP | POLLERR))) {
		fd = jr_netwatch_recv(s->fd);
		close(s->fd);
		s->fd = -1;
		if (fd >= 0)
			*w = (struct pollfd){.fd = fd, .events = POLLIN};
	}
	if (w->fd < 0)
		return;
	if (w->revents & POLLIN) {
		int r = jr_netwatch_handle(w->fd, what[0] ? NULL : what,
					   sizeof(l->res->net_refused));

		if (r > 0) {
			fputs("jailrun: network is off in the jail (", stderr);
			jf_fput_escaped(stderr, what, strlen(what));
			fputs("); use --net\n", stderr);
		}
		if (r >= 0)
			return;
	} else if (!(w->revents & (POLLHUP | POLLERR))) {
		return;
	}
	close(w->fd); /* every process under the watch is gone, or it failed */
	w->fd = -1;
}

/* Poll until pid 1 has exited and both output pipes are at EOF, then read
 * the status records left. Returns 0, -ENOMEM or poll's negative errno. */
static int run_loop(struct loop *l, int64_t start, uint64_t grace_ms, uint64_t max_output,
		    bool live)
{
	int r = 0;

	while ((l->p[0].fd >= 0 || l->p[1].fd >= 0 || !l->exited) && !l->res->stuck) {
		int n = poll(l->p, NPOLL, loop_timeout(l));

		if (n < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		if (drain_ready(l, max_output, live) < 0)
			r = -ENOMEM;
		if (l->p[2].fd >= 0 && (l->p[2].revents & (POLLIN | POLLHUP)))
			read_status(l);
		if (l->p[4].revents & POLLIN)
			handle_signal(l, grace_ms);
		for (int i = 5; i < P_NETSOCK; i++)
			if (l->p[i].fd >= 0 && (l->p[i].revents & POLLIN))
				daemon_gone(l, i, grace_ms);
		netwatch_ready(l);
		if (!l->exited && (l->p[3].revents & POLLIN)) {
			l->exited = true;
			l->res->duration_ms = now_ms() - start;
			l->p[3].events = 0;
			l->p[4].events = 0;
		}
		check_deadlines(l, grace_ms);
	}
	while (l->p[2].fd >= 0 && !l->res->stuck)
		read_status(l);
	return r;
}

/* The pid namespace of the jail's pid 1 (@pid, our child, not yet reaped),
 * which every process of the command lives in: its records in a shared
 * view's audit log carry that inode. */
static void note_pidns(pid_t pid, struct jr_outcome *res)
{
	char p[32];
	struct stat st;

	snprintf(p, sizeof(p), "/proc/%d/ns/pid", (int)pid);
	res->pidns_fd = open(p, O_RDONLY | O_CLOEXEC);
	if (res->pidns_fd >= 0 && fstat(res->pidns_fd, &st) == 0)
		res->pidns = (unsigned long long)st.st_ino;
}

int jr_run(const struct jr_spawn *s, uint64_t timeout_ms, uint64_t grace_ms, uint64_t max_output,
	   bool live, struct jr_outcome *res)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, nw[2] = {-1, -1}, status_fd = -1, pidfd = -1, r;
	struct jr_spawn sc;
	_cleanup_close_ int sfd = -1;
	struct loop l = {.res = res};
	struct tty_saved tty;
	sigset_t mask;
	int64_t start;

	memset(res, 0, sizeof(*res));
	res->pidns_fd = -1;
	for (int i = 0; i < NPOLL; i++)
		l.p[i].fd = -1;
	for (int i = 0; i < 2; i++)
		l.tty[i] = live && isatty(i + 1);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return -errno;
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		r = -errno;
		if (po[0] >= 0) {
			close(po[0]);
			close(po[1]);
		}
		return r;
	}
	l.p[0].fd = po[0];
	l.p[1].fd = pe[0];
	/* bigger pipes: fewer wakeups when a command prints a lot */
	fcntl(po[0], F_SETPIPE_SZ, 1 << 20);
	fcntl(pe[0], F_SETPIPE_SZ, 1 << 20);
	sc = *s;
	sc.net_watch_fd = -1;
	if (!s->net && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, nw) == 0)
		sc.net_watch_fd = nw[1];
	tty_save(s, &tty);
	start = now_ms();
	r = jr_sandbox_spawn(&sc, po[1], pe[1], &l.pid, &pidfd, &status_fd);
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	if (nw[1] >= 0)
		close(nw[1]);
	l.p[P_NETSOCK] = (struct pollfd){.fd = nw[0], .events = POLLIN};
	if (r < 0)
		goto out;
	note_pidns(l.pid, res);
	l.p[0] = (struct pollfd){.fd = po[0], .events = POLLIN};
	l.p[1] = (struct pollfd){.fd = pe[0], .events = POLLIN};
	l.p[2] = (struct pollfd){.fd = status_fd, .events = POLLIN};
	l.p[3] = (struct pollfd){.fd = pidfd, .events = POLLIN};
	l.p[4] = (struct pollfd){.fd = sfd, .events = POLLIN};
	for (int i = 0; i < 2; i++)
		l.p[5 + i] = (struct pollfd){.fd = s->view_pidfds[i], .events = POLLIN};
	l.deadline = timeout_ms ? start + (int64_t)timeout_ms : 0;

	r = run_loop(&l, start, grace_ms, max_output, live);
	for (int i = 0; i < 2; i++)
		if (stream_cut(i ? &res->err : &res->out, max_output, live, i + 1,
			       l.tty[i] ? &l.tf[i] : NULL) < 0 &&
		    r == 0)
			r = -ENOMEM;
	/* a stuck jail is left to the kernel: pid 1 is reaped when it exits */
	waitpid(l.pid, NULL, res->stuck ? WNOHANG : 0);
	if (!res->duration_ms)
		res->duration_ms = now_ms() - start;
	/* a setup error comes before the command's execve: whatever status
	 * follows it is jailrun's, not the command's */
	if (r == 0 && res->error[0])
		r = -EIO;
out:
	tty_restore(&tty);
	for (int i = 0; i < 2; i++) {
		if (l.p[i].fd >= 0)
			close(l.p[i].fd);
	}
	for (int i = P_NETSOCK; i <= P_NETWATCH; i++)
		if (l.p[i].fd >= 0)
			close(l.p[i].fd);
	if (po[1] >= 0)
		close(po[1]);
	if (pe[1] >= 0)
		close(pe[1]);
	if (status_fd >= 0)
		close(status_fd);
	if (pidfd >= 0)
		close(pidfd);
	return r;
}
