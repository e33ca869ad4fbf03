/* SPDX-License-Identifier: MIT */
/*
 * The --json result object and the audit counts.
 *
 * Output bytes that are not valid UTF-8 (RFC 3629: overlongs, surrogates,
 * code points past U+10FFFF, truncated sequences) are replaced one byte at a
 * time with U+FFFD, so the result is always valid JSON text and the number
 * of replacement characters equals the number of bad bytes (simpler to
 * reason about than Unicode's "maximal subpart" practice, which may fold a
 * truncated sequence into one U+FFFD). NUL bytes are kept (as \u0000).
 *
 * That string is for reading; the escape is made lossless by a second field:
 * whenever a stream was not valid UTF-8 or held a NUL byte (which C
 * consumers of the string lose), stdout_b64 / stderr_b64 carry the exact
 * captured bytes in base64 (RFC 4648 section 4, with padding); otherwise
 * they are null. Base64 rather than a textual \xNN escape inside the string:
 * no escape of the escape character is needed and no text is ambiguous.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "jailrun.h"
#include "result.h"

char *jr_utf8_sanitize(const char *in, size_t n, size_t *out_len)
{
	const unsigned char *p = (const unsigned char *)in;
	char *out = malloc(n * 3 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t l = jf_utf8_len(p + i, n - i);

		if (l == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(o, p + i, l);
		o += l;
		i += l;
	}
	*o = '\0';
	*out_len = o - out;
	return out;
}

bool jr_utf8_clean(const char *in, size_t n)
{
	const unsigned char *p = (const unsigned char *)in;

	for (size_t i = 0, l; i < n; i += l)
		if (p[i] == 0 || (l = jf_utf8_len(p + i, n - i)) == 0)
			return false;
	return true;
}

char *jr_base64(const void *in, size_t n)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = in;
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		*o++ = abc[v >> 18 & 63];
		*o++ = abc[v >> 12 & 63];
		*o++ = i + 1 < n ? abc[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? abc[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

/* The raw bytes of a stream in base64 when its string lost something. */
static json_t *stream_b64(const struct jr_stream *st)
{
	_cleanup_free_ char *s = NULL;

	if (!st->buf || jr_utf8_clean(st->buf, st->len))
		return json_null();
	s = jr_base64(st->buf, st->len);
	return s ? json_string(s) : json_null();
}

static json_t *stream_json(const struct jr_stream *st)
{
	size_t len = 0;
	_cleanup_free_ char *s = jr_utf8_sanitize(st->buf ? st->buf : "", st->len, &len);

	return s ? json_stringn(s, len) : json_null();
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

int jr_result_print(const struct jr_report *r)
{
	json_t *o = json_object();
	const struct jr_outcome *oc = r->outcome;
	char *text;
	int exit_code;

	if (!o)
		return -ENOMEM;
	if (r->denied)
		exit_code = JR_JSON_DENIED;
	else if (oc && oc->timed_out)
		exit_code = JR_JSON_TIMEOUT;
	else if (r->error && *r->error)
		exit_code = r->error_status ? r->error_status : JR_EXIT_ERROR;
	else if (oc && oc->signal)
		exit_code = 128 + oc->signal;
	else
		exit_code = oc ? oc->exit_code : 0;
	json_object_set_new(o, "exit_code", json_integer(exit_code));
	json_object_set_new(o, "signal", json_integer(oc ? oc->signal : 0));
	json_object_set_new(o, "stdout", oc ? stream_json(&oc->out) : json_string(""));
	json_object_set_new(o, "stderr", oc ? stream_json(&oc->err) : json_string(""));
	json_object_set_new(o, "stdout_b64", oc ? stream_b64(&oc->out) : json_null());
	json_object_set_new(o, "stderr_b64", oc ? stream_b64(&oc->err) : json_null());
	json_object_set_new(o, "stdout_truncated", json_boolean(oc && oc->out.truncated));
	json_object_set_new(o, "stderr_truncated", json_boolean(oc && oc->err.truncated));
	json_object_set_new(o, "stdout_bytes", json_integer(oc ? (json_int_t)oc->out.total : 0));
	json_object_set_new(o, "stderr_bytes", json_integer(oc ? (json_int_t)oc->err.total : 0));
	json_object_set_new(o, "timed_out", json_boolean(oc && oc->timed_out));
	json_object_set_new(o, "denied", json_boolean(r->denied));
	json_object_set_new(o, "reason", str_or_null(r->denied ? r->reason : r->error));
	json_object_set_new(o, "rule", str_or_null(r->denied ? r->rule : NULL));
	json_object_set_new(o, "duration_ms", json_integer(oc ? oc->duration_ms : 0));
	if (r->error && *r->error)
		json_object_set_new(o, "error", json_string(r->error));
	if (r->audit) {
		json_t *a = json_object();

		json_object_set_new(a, "denied", json_integer(r->audit->denied));
		json_object_set_new(a, "hidden", json_integer(r->audit->hidden));
		json_object_set_new(a, "written_files", json_integer(r->audit->written_files));
		json_object_set_new(a, "records", json_integer(r->audit->records));
		json_object_set_new(o, "audit", a);
	}
	text = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	if (!text)
		return -ENOMEM;
	fputs(text, stdout);
	fputc('\n', stdout);
	free(text);
	return fflush(stdout) == 0 ? 0 : -errno;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_write_op(const char *op)
{
	static const char *const ops[] = {"create",   "mknod",	     "mkdir",		"symlink",
					  "link",     "unlink",	     "rmdir",		"rename",
					  "write",    "truncate",    "setattr",		"fallocate",
					  "setxattr", "removexattr", "copy_file_range", NULL};

	for (const char *const *p = ops; *p; p++)
		if (strcmp(*p, op) == 0)
			return true;
	return false;
}

int jr_audit_count(const char *file, long offset, struct jr_audit_counts *out)
{
	_cleanup_fclose_ FILE *f = fopen(file, "re");
	_cleanup_free_ char *line = NULL;
	char **paths = NULL;
	size_t cap = 0, np = 0, pcap = 0;

	memset(out, 0, sizeof(*out));
	if (!f)
		return -errno;
	if (offset > 0 && fseek(f, offset, SEEK_SET) < 0)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		const char *op, *dec, *path;
		json_int_t wb;

		if (!o)
			continue;
		out->records++;
		op = json_string_value(json_object_get(o, "op"));
		dec = json_string_value(json_object_get(o, "decision"));
		path = json_string_value(json_object_get(o, "path"));
		wb = json_integer_value(json_object_get(o, "bytes_written"));
		if (dec && strcmp(dec, "deny") == 0)
			out->denied++;
		else if (dec && strcmp(dec, "hide") == 0)
			out->hidden++;
		else if (path && op &&
			 (wb > 0 || (is_write_op(op) && !json_object_get(o, "bytes_written")))) {
			if (np == pcap) {
				size_t nc = pcap ? pcap * 2 : 64;
				char **n = realloc(paths, nc * sizeof(char *));

				if (!n) {
					json_decref(o);
					break;
				}
				paths = n;
				pcap = nc;
			}
			paths[np] = strdup(path);
			if (paths[np])
				np++;
		}
		json_decref(o);
	}
	if (np)
		qsort(paths, np, sizeof(char *), cmp_str);
	for (size_t i = 0; i < np; i++) {
		if (i == 0 || strcmp(paths[i], paths[i - 1]) != 0)
			out->written_files++;
	}
	for (size_t i = 0; i < np; i++)
		free(paths[i]);
	free(paths);
	return 0;
}
