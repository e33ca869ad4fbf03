/* SPDX-License-Identifier: MIT */
/*
 * Reading an audit log back (audit-read.c): JSON Lines records as the writer
 * (audit.c) puts them in the file, one jansson object per line. Used by
 * jailfs --audit-report and by jailrun (the refusals and counts of its
 * result). Not thread-safe per FILE; no global state.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

struct jf_audit_line {
	json_t *rec;   /* the parsed line when it is a JSON object with a string "op",
			* else NULL; owned by the reader, valid during the call */
	size_t lineno; /* 1-based, counted from where reading started */
	bool complete; /* ends with a newline; false only for a torn last line */
	bool blank;    /* an empty line */
};

/* Called once per line; returns 0 to go on or a negative errno to stop. */
typedef int (*jf_audit_line_fn)(const struct jf_audit_line *line, void *arg);

/*
 * Call @fn for every line of @in from its current position on. Lines that
 * are not records (a torn last line after a crash, a hand-edited line) come
 * with rec == NULL, never stop the reading. Returns 0, the negative value
 * @fn returned, or -errno when reading failed (ENOMEM from getline).
 */
int jf_audit_read(FILE *in, jf_audit_line_fn fn, void *arg);

/* The string field @key of record @rec, or NULL when absent or not a string. */
const char *jf_audit_str(json_t *rec, const char *key);

/* The integer field @key of record @rec, or 0 when absent or not an integer. */
json_int_t jf_audit_num(json_t *rec, const char *key);
