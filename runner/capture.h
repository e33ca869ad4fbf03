/* SPDX-License-Identifier: MIT */
/*
 * One command run in the jail (capture.c): its output captured or
 * forwarded within bounds, its time limit, its outcome.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jr_spawn;

/* Default time limits, in ms: a --shell command line chains steps
 * (configure && make && make test), so it gets longer than one command. */
#define JR_DEFAULT_TIMEOUT_MS 120000ULL
#define JR_DEFAULT_SHELL_TIMEOUT_MS 600000ULL

/* the end of each stream kept: for jr_net_failure(), and after the marker of
 * a stream cut at its limit (where a build says what failed) */
#define JR_TAIL_BYTES 65536

struct jr_stream {
	/* captured bytes (--json), malloc'ed: at most limit; once cut (truncated),
	 * the head, a line "[... N bytes omitted ...]" and the tail */
	char *buf;
	size_t len;
	uint64_t total; /* everything the command wrote */
	bool truncated;
	char last_kept; /* the last byte kept or forwarded before the limit */
	/* once cut: bytes of the command's output kept before and after the
	 * marker (the tail is at most half the limit and JR_TAIL_BYTES) */
	uint64_t head_kept, tail_kept;
	/* the last JR_TAIL_BYTES bytes written (also live, also past the limit):
	 * a ring, tail[(total - k) % JR_TAIL_BYTES] is the k-th byte from the end */
	char tail[JR_TAIL_BYTES];
};

struct jr_outcome {
	int exit_code; /* command's exit status when exited */
	int signal;    /* terminating signal, 0 if exited */
	bool timed_out;
	bool interrupted;  /* jailrun got SIGINT/SIGTERM/SIGHUP */
	int interrupt_sig; /* which one (the exit status is then 128 + it) */
	int64_t duration_ms;
	struct jr_stream out, err;
	char error[256]; /* setup failure reported by the jail, "" if none */
	/* the view failed under the command: its daemon exited, or the jail's
	 * processes wait for a daemon that does not answer (then @stuck: they
	 * may still exist, the caller must abort the view); "" if not */
	char broken[256];
	bool stuck;
	/* without --net: the first connect() out of the jail, "COMM tried to
	 * connect to ADDR:PORT", said on stderr when it happened; "" if none */
	char net_refused[160];
	/* the jail's pid namespace: its inode, and an fd that keeps the number
	 * from being reused until the caller closes it (after reading the
	 * audit log); 0 and -1 when unknown */
	unsigned long long pidns;
	int pidns_fd;
};

/*
 * Run the command in the jail (capture.c): clone the namespaces, build the
 * root, start the command under a small pid 1, capture output into buffers of
 * at most @max_output bytes per stream (or forward at most that much live to
 * our fds 1 and 2 when @live); a stream past the limit keeps its head and its
 * tail with a marker line between (jr_stream). Enforce @timeout_ms (0 = none) with
 * SIGTERM then SIGKILL after @grace_ms. SIGINT/SIGTERM/SIGHUP must be blocked
 * by the caller: they are read from a signalfd and passed on to the jail.
 * Memory: res->out.buf / res->err.buf are malloc'ed (caller frees), at most
 * @max_output bytes each plus the marker. Returns 0 with @res filled (also when the command
 * failed, timed out or was killed), -EIO with res->error set when the jail
 * could not be set up, or another negative errno (pipe2, clone, poll).
 * Not thread-safe (uses static buffers).
 */
int jr_run(const struct jr_spawn *s, uint64_t timeout_ms, uint64_t grace_ms, uint64_t max_output,
	   bool live, struct jr_outcome *res);
