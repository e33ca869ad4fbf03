/* SPDX-License-Identifier: MIT */
/*
 * Audit log: JSON Lines records of what the view allowed, refused and hid.
 *
 * The FUSE worker threads call jf_audit_emit(); it formats the record and
 * queues it in a bounded in-memory ring drained by one writer thread, so a
 * worker never waits on the disk (unless sync mode was asked for). A full
 * ring counts lost records and the writer records {"op":"dropped","count":N}.
 * Optional bounds (jf_audit_config): a rate per process, beyond which records
 * are counted and summed up in one {"op":"suppressed",...} record per burst,
 * and a size cap on the file, at which detail stops and one final
 * {"op":"capped",...} record keeps counting what was not written.
 *
 * Thread safety: jf_audit_emit() and jf_audit_wants() may be called from any
 * thread at any time between jf_audit_start() and jf_audit_stop(); start,
 * stop and reopen are called from the main thread only.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "policy.h"

enum jf_audit_level {
	JF_AUDIT_OFF = 0,
	JF_AUDIT_DENIED = 1, /* refusals and hidden lookups */
	JF_AUDIT_WRITES = 2, /* + every allowed mutation */
	JF_AUDIT_ALL = 3,    /* + every lookup, open, readdir; byte counts at release */
};

enum jf_audit_decision {
	JF_AUDIT_ALLOW = 0,
	JF_AUDIT_DENY = 1, /* refused with an errno */
	JF_AUDIT_HIDE = 2, /* answered ENOENT / left out because DENIED or refused */
};

struct jf_audit_event {
	const char *op;	   /* "lookup", "open", "create", "unlink", "rename", "release", ... */
	const char *path;  /* view-relative canonical path ("" = root) */
	const char *path2; /* rename/link destination, or NULL */
	enum jf_zone zone;
	enum jf_audit_decision decision;
	bool mutation;		    /* the op changes something (level writes) */
	int err;		    /* positive errno answered, 0 if none */
	const struct jf_rule *rule; /* deciding rule, NULL = default zone */
	const char *refusal;	    /* jf_refusal_reason() when the name was refused, else NULL */
	const char *detail; /* what in the content was refused (a git config key), or NULL */
	pid_t pid;	    /* from fuse_req_ctx(); 0 if unknown */
	uid_t uid;
	int64_t bytes_read;    /* >= 0 only on "release" records */
	int64_t bytes_written; /* >= 0 only on "release" records */
};

struct jf_audit_config {
	const char *path; /* JSON Lines file, appended; NULL = none */
	enum jf_audit_level level;
	bool sync;	   /* --audit-sync: workers wait until the record is written */
	bool syslog;	   /* --audit-syslog: also send each record to syslog(3) */
	size_t queue_len;  /* ring capacity in records; 0 = default (65536) */
	uint64_t max_size; /* bytes the file may reach (the "capped" record
			    * included); 0 = no cap; else >= JF_AUDIT_MAX_SIZE_MIN */
	uint32_t rate;	   /* records per second per process (burst: one second's
			    * worth); 0 = no limit */
};

#define JF_AUDIT_MAX_SIZE_MIN 4096 /* bytes: room for the capped record and some detail */

/* Parse --audit-rate: "N" or "N/s" (a count, base/units.h), N >= 1 and at
 * most 10^9. Returns 0 or -EINVAL / -ERANGE; *out is left alone on error. */
int jf_audit_parse_rate(const char *s, uint32_t *out);

/* Parse "denied" / "writes" / "all" (and "off"); returns 0 or -EINVAL. */
int jf_audit_parse_level(const char *s, enum jf_audit_level *out);

/* The name jf_audit_parse_level() takes for level @l (static string). */
const char *jf_audit_level_name(enum jf_audit_level l);

/*
 * The audit log's address on a view: getxattr of this name on the view's
 * root answers "LEVEL PATH" (level name, one space, the audit file's absolute
 * path) once every record queued before the request is written, or ENODATA
 * when no audit file is written. It cannot be set through the view.
 */
#define JF_AUDIT_XATTR "user.jailfs.audit"

/* Open the file (O_APPEND|O_CLOEXEC) and start the writer thread. Returns 0
 * or a negative errno from open/pthread_create. Call before serving.
 * Also: 0 without starting anything when cfg->level is JF_AUDIT_OFF; -EINVAL
 * when there is neither a file nor syslog; -EBUSY when already started.
 * cfg->path is copied (SIGHUP reopens the same path: make it absolute before
 * a daemon changes directory). */
int jf_audit_start(const struct jf_audit_config *cfg);

/* True when an event of this decision/mutation class would be recorded at the
 * configured level; cheap (one load), use it to skip building an event. */
bool jf_audit_wants(enum jf_audit_decision decision, bool mutation);

/* Record one event (copied; the caller's strings may be freed after). */
void jf_audit_emit(const struct jf_audit_event *ev);

/* Wait until every record accepted before the call is written (or lost to a
 * failing file: the writer retries), at most @timeout_ms milliseconds.
 * Returns 0, or -ETIMEDOUT. Any thread; returns at once when not started. */
int jf_audit_flush(int timeout_ms);

/* Ask the writer to reopen the file (SIGHUP, logrotate). Async-signal-safe. */
void jf_audit_request_reopen(void);

/* Flush every queued record, stop the writer, close the file. Idempotent. */
void jf_audit_stop(void);

/* ---- Helpers beyond the daemon's contract: tests, --audit-report, jailrun ---- */

#define JF_AUDIT_QUEUE_DEFAULT 65536 /* records */
#define JF_AUDIT_COMM_MAX 16	     /* TASK_COMM_LEN, including the NUL (proc(5)) */

/* What the daemon knows of the calling process when it records. */
struct jf_audit_proc {
	const char *comm; /* /proc/PID/comm, NULL to leave the field out */
	const char *exe;  /* readlink /proc/PID/exe, NULL when unknown */
	bool gone;	  /* PID had exited: neither could be read */
	/* inode of /proc/PID/ns/pid (its pid namespace), 0 = unknown or left
	 * out: tells apart commands that share a view, one jail each */
	unsigned long long pidns;
};

/*
 * Format @ev as one JSON Lines record, newline included, exactly as the
 * writer puts it in the file. @ts is the wall-clock time (CLOCK_REALTIME),
 * printed as RFC 3339 UTC with microseconds; @proc (NULL = nothing known)
 * gives "comm", "exe", "gone" and "pidns". Strings that are not valid UTF-8 (paths
 * may hold any byte but NUL) get U+FFFD per bad byte, and "path_hex",
 * "path2_hex", "exe_hex" carry the raw bytes. Returns a malloc'd
 * NUL-terminated line (caller frees) and sets *len (bytes, without the NUL),
 * or NULL on ENOMEM. Thread-safe.
 */
char *jf_audit_format(const struct jf_audit_event *ev, const struct timespec *ts,
		      const struct jf_audit_proc *proc, size_t *len);

/* Records of one process the rate limit left out, by decision. */
struct jf_audit_suppressed {
	pid_t pid;
	uid_t uid;
	struct jf_audit_proc proc;    /* as of the first record left out */
	uint64_t by_decision[3];      /* indexed by enum jf_audit_decision */
	struct timespec since, until; /* first and last record left out */
};

/* The {"ts":..,"op":"suppressed","pid":..,"count":N,"by_decision":{..},
 * "since":..,"until":..} line, same conventions as jf_audit_format(). */
char *jf_audit_format_suppressed(const struct jf_audit_suppressed *s, const struct timespec *ts,
				 size_t *len);

/* Events the capped file does not hold: by decision, and lost to a full ring. */
struct jf_audit_capped {
	uint64_t max_size;	 /* bytes */
	uint64_t by_decision[3]; /* indexed by enum jf_audit_decision */
	uint64_t dropped;
	struct timespec until; /* the last one counted */
};

/* Length in bytes (newline included) of every line jf_audit_format_capped()
 * makes: the writer rewrites the line in place as the counts grow. */
#define JF_AUDIT_CAPPED_LEN 320

/* The {"ts":..,"op":"capped",...} line: numbers padded with spaces (JSON
 * whitespace) to a fixed width, JF_AUDIT_CAPPED_LEN bytes in @buf, no NUL.
 * @ts is when the cap was reached. Thread-safe. */
void jf_audit_format_capped(const struct jf_audit_capped *c, const struct timespec *ts,
			    char buf[JF_AUDIT_CAPPED_LEN]);

/* The {"ts":..,"op":"dropped","count":N} line, same conventions. */
char *jf_audit_format_dropped(uint64_t count, const struct timespec *ts, size_t *len);

/* Symbolic errno ("EACCES") into @buf; "E<number>" for an unknown value. */
const char *jf_audit_errno_name(int err, char *buf, size_t size);

/* True for the op names that change the view ("create", "write", "unlink",
 * "rename", ...): what --audit-report counts as written paths. */
bool jf_audit_op_is_write(const char *op);

/* Counters since the last jf_audit_start(), in records. Thread-safe. */
struct jf_audit_stats {
	uint64_t queued;     /* accepted into the ring */
	uint64_t written;    /* handed to write(2) / syslog(3) completely */
	uint64_t dropped;    /* lost because the ring was full (async mode only) */
	uint64_t suppressed; /* left out by the rate limit (in "suppressed" records) */
	uint64_t capped;     /* records not written because the file reached max_size */
};
void jf_audit_get_stats(struct jf_audit_stats *out);
