/* SPDX-License-Identifier: MIT */
/* The --json result and audit counts (result.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "jailrun.h"

struct jr_audit_counts {
	long records;	    /* audit records written during this run */
	long denied;	    /* decision "deny" */
	long hidden;	    /* decision "hide" */
	long written_files; /* distinct paths written, created, removed or renamed */
};

struct jr_report {
	bool denied;
	const char *rule, *reason;
	const char *error;		     /* jailrun's own failure, or NULL */
	int error_status;		     /* exit_code with @error (0: JR_EXIT_ERROR) */
	const struct jr_outcome *outcome;    /* NULL when nothing ran */
	const struct jr_audit_counts *audit; /* NULL without --audit */
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

/* Count the JSON Lines audit records of @file from byte @offset on. Returns 0
 * or a negative errno from fopen/fseek. */
int jr_audit_count(const char *file, long offset, struct jr_audit_counts *out);
