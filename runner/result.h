/* SPDX-License-Identifier: MIT */
/* The --json result and audit counts (result.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit statuses (bash and coreutils timeout(1) conventions). */
#define JR_EXIT_TIMEOUT 124 /* the command ran out of time */
#define JR_EXIT_USAGE 2	    /* bad options or request (as bwrap and coreutils) */
#define JR_EXIT_ERROR 125   /* jailrun itself failed (setup) */
#define JR_EXIT_DENIED 126  /* a guardrail refused the command */
#define JR_JSON_DENIED (-100)
#define JR_JSON_TIMEOUT (-101)

#define JR_NET_LISTED 200 /* net changes listed in the result */

struct jr_audit_counts {
	long records;	    /* audit records written during this run */
	long denied;	    /* decision "deny" */
	long hidden;	    /* decision "hide" */
	long written_files; /* distinct paths written, created, removed or renamed */
	/* the net changes by final path (audit/net-changes.h): a jansson array
	 * of at most JR_NET_LISTED entries (json_t *, owned: jr_audit_counts_free),
	 * NULL when they could not be made; how many more; why the list may
	 * miss some (static), or NULL */
	void *net;
	long net_omitted;
	const char *net_incomplete;
};

#define JR_REFUSALS_LISTED 20 /* distinct refusals listed in the result */

/* What the view refused: one audit record, or several alike (same op, paths
 * and errno). Strings are malloc'ed (jr_refusals_free); path2 may be NULL. */
struct jr_refusal {
	char *op, *path, *path2, *zone, *rule, *err;
	char *detail; /* what in the content was refused (audit "detail"), or NULL */
	long count;   /* records alike */
};

/* The view's refusals during one command, from its audit log. */
struct jr_refusals {
	const char *unknown; /* why they are unknown (static or caller-owned), NULL when known */
	struct jr_refusal list[JR_REFUSALS_LISTED]; /* in the order first seen */
	size_t n;				    /* entries of @list in use */
	long omitted;				    /* refusal records not in @list */
};

struct jr_report {
	bool denied;
	const char *rule, *reason;
	const char *error;		     /* jailrun's own failure, or NULL */
	int error_status;		     /* exit_code with @error (0: JR_EXIT_ERROR) */
	const struct jr_outcome *outcome;    /* NULL when nothing ran */
	const struct jr_audit_counts *audit; /* NULL without --audit */
	const struct jr_refusals *refusals;  /* NULL: none (nothing ran) */
	const char *hint;		     /* one line for the caller to act on, or NULL */
	void *changes; /* the "changes" object (json_t *, changes.h), borrowed; NULL: none */
	/* "NAME (DETECTOR)" of environment values left out as secrets
	 * (NULL-terminated), or NULL when the environment was not built */
	char *const *env_dropped;
};

/* Print the one-object JSON result on stdout. Returns 0 or -ENOMEM/-EIO. */
int jr_result_print(const struct jr_report *r);

/*
 * Copy @n bytes replacing every byte that is not part of a valid UTF-8
 * sequence with U+FFFD. Returns a malloc'ed NUL-terminated buffer (caller
 * frees) and its length in @out_len (NUL bytes inside are kept), or NULL.
 */
char *jr_utf8_sanitize(const char *in, size_t n, size_t *out_len);

/* Is @n bytes at @in valid UTF-8 (RFC 3629) without a NUL byte? */
bool jr_utf8_clean(const char *in, size_t n);

/*
 * Base64 of @n bytes at @in (RFC 4648 section 4: standard alphabet, '='
 * padding, no line breaks). Returns a malloc'ed NUL-terminated string (caller
 * frees), or NULL when out of memory.
 */
char *jr_base64(const void *in, size_t n);

/*
 * Read the audit log open at @fd (not moved; jailrun keeps it) from byte
 * @offset on with the audit library's reader (audit-read.h): count its
 * records into @counts (NULL: not wanted) and collect the refusals into
 * @refusals (NULL: not wanted): every "deny" record, and every "hide" record
 * but a lookup's (a probe for a hidden or absent name is what programs do
 * all the time; a hidden name they then use shows as a refused mutation).
 * With @counts, also the net changes by final path (counts->net; free with
 * jr_audit_counts_free, also after an error).
 * Returns 0 or a negative errno (dup, fdopen, fseek, reading).
 */
int jr_audit_read(int fd, long offset, struct jr_audit_counts *counts,
		  struct jr_refusals *refusals);

/*
 * jr_audit_read(), but only the records of processes in the pid namespace
 * whose inode is @pidns (their "pidns" field): one command's records in a
 * log that commands running beside it write to as well. Records without the
 * field (an older daemon, a process gone before it was named) are left out.
 * @pidns 0 reads every record.
 */
int jr_audit_read_ns(int fd, long offset, unsigned long long pidns, struct jr_audit_counts *counts,
		     struct jr_refusals *refusals);

/* Free what @c holds (its net changes); @c may be reused. */
void jr_audit_counts_free(struct jr_audit_counts *c);

/* Free the strings of @r's list; @r may be reused. */
void jr_refusals_free(struct jr_refusals *r);
