/* SPDX-License-Identifier: MIT */
/*
 * Reading an audit log back: getline(3) and jansson, one record per line
 * (schema in docs/audit.md).
 */
#include <errno.h>
#include <stdlib.h>

#include "audit-read.h"
#include "cleanup.h"

int jf_audit_read(FILE *in, jf_audit_line_fn fn, void *arg)
{
	_cleanup_free_ char *buf = NULL;
	struct jf_audit_line l = {0};
	size_t cap = 0;
	ssize_t n;
	int r = 0;

	errno = 0;
	while (r == 0 && (n = getline(&buf, &cap, in)) > 0) {
		json_t *o = json_loadb(buf, (size_t)n, 0, NULL);

		l.lineno++;
		l.complete = buf[n - 1] == '\n';
		l.blank = n == 1 && l.complete;
		l.rec = json_is_object(o) && jf_audit_str(o, "op") ? o : NULL;
		r = fn(&l, arg);
		json_decref(o);
		errno = 0;
	}
	if (r == 0 && ferror(in))
		r = errno ? -errno : -EIO;
	return r;
}

const char *jf_audit_str(json_t *rec, const char *key)
{
	json_t *v = json_object_get(rec, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

json_int_t jf_audit_num(json_t *rec, const char *key)
{
	json_t *v = json_object_get(rec, key);

	return json_is_integer(v) ? json_integer_value(v) : 0;
}
