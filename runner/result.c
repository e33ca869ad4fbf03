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
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit-read.h"
#include "audit.h"
#include "capture.h"
#include "net-changes.h"
#include "cleanup.h"
#include "result.h"
#include "text.h"

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

static json_t *refusal_json(const struct jr_refusal *f)
{
	json_t *o = json_object();

	json_object_set_new(o, "op", json_string(f->op));
	json_object_set_new(o, "path", json_string(f->path));
	if (f->path2)
		json_object_set_new(o, "path2", json_string(f->path2));
	json_object_set_new(o, "zone", str_or_null(f->zone));
	json_object_set_new(o, "rule", str_or_null(f->rule));
	json_object_set_new(o, "errno", str_or_null(f->err));
	if (f->detail)
		json_object_set_new(o, "detail", json_string(f->detail));
	json_object_set_new(o, "count", json_integer(f->count));
	return o;
}

/* "refusals": [...] (null when unknown), "refusals_omitted", "refusals_unknown". */
static void set_refusals(json_t *o, const struct jr_refusals *rf)
{
	json_t *list = json_array();

	for (size_t i = 0; rf && !rf->unknown && i < rf->n; i++)
		json_array_append_new(list, refusal_json(&rf->list[i]));
	if (rf && rf->unknown) {
		json_decref(list);
		list = json_null();
	}
	json_object_set_new(o, "refusals", list);
	json_object_set_new(o, "refusals_omitted", json_integer(rf ? rf->omitted : 0));
	json_object_set_new(o, "refusals_unknown", str_or_null(rf ? rf->unknown : NULL));
}

/* "env_dropped": the names (and detectors) of values left out as secrets. */
static void set_env_dropped(json_t *o, char *const *names)
{
	json_t *dropped = json_array();

	for (char *const *p = names; p && *p; p++)
		json_array_append_new(dropped, json_string(*p));
	json_object_set_new(o, "env_dropped", dropped);
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
	json_object_set_new(o, "network_refused",
			    str_or_null(oc && oc->net_refused[0] ? oc->net_refused : NULL));
	json_object_set_new(o, "denied", json_boolean(r->denied));
	json_object_set_new(o, "reason", str_or_null(r->denied ? r->reason : r->error));
	json_object_set_new(o, "rule", str_or_null(r->denied ? r->rule : NULL));
	json_object_set_new(o, "duration_ms", json_integer(oc ? oc->duration_ms : 0));
	if (r->error && *r->error)
		json_object_set_new(o, "error", json_string(r->error));
	set_refusals(o, r->refusals);
	json_object_set_new(o, "hint", str_or_null(r->hint));
	if (r->changes)
		json_object_set(o, "changes", r->changes);
	set_env_dropped(o, r->env_dropped);
	if (r->audit) {
		json_t *a = json_object();

		json_object_set_new(a, "denied", json_integer(r->audit->denied));
		json_object_set_new(a, "hidden", json_integer(r->audit->hidden));
		json_object_set_new(a, "written_files", json_integer(r->audit->written_files));
		json_object_set_new(a, "records", json_integer(r->audit->records));
		json_object_set_new(a, "net_changes",
				    r->audit->net ? json_incref(r->audit->net) : json_null());
		json_object_set_new(a, "net_changes_omitted", json_integer(r->audit->net_omitted));
		json_object_set_new(a, "net_changes_incomplete",
				    str_or_null(r->audit->net_incomplete));
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

struct reading {
	struct jr_audit_counts *counts;
	struct jr_refusals *refusals;
	char **paths; /* written paths, for counts->written_files */
	size_t np, pcap;
	struct jf_net_changes *net; /* with counts: the net changes */
	int net_err;
	unsigned long long pidns; /* only records of this pid namespace; 0 = all */
};

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Add one refusal record to the list, or to an entry alike, or to omitted. */
static void note_refusal(struct jr_refusals *rf, json_t *o)
{
	const char *op = jf_audit_str(o, "op"), *path = jf_audit_str(o, "path");
	const char *path2 = jf_audit_str(o, "path2"), *err = jf_audit_str(o, "errno");
	struct jr_refusal *f;

	for (size_t i = 0; i < rf->n; i++) {
		f = &rf->list[i];
		if (same(f->op, op) && same(f->path, path) && same(f->path2, path2) &&
		    same(f->err, err)) {
			f->count++;
			return;
		}
	}
	if (rf->n == JR_REFUSALS_LISTED) {
		rf->omitted++;
		return;
	}
	f = &rf->list[rf->n];
	*f = (struct jr_refusal){
		.op = dup_or_null(op),
		.path = dup_or_null(path),
		.path2 = dup_or_null(path2),
		.zone = dup_or_null(jf_audit_str(o, "zone")),
		.rule = dup_or_null(jf_audit_str(o, "rule")),
		.err = dup_or_null(err),
		.detail = dup_or_null(jf_audit_str(o, "detail")),
		.count = 1,
	};
	if (!f->op || !f->path) {
		free(f->op);
		free(f->path);
		free(f->path2);
		free(f->zone);
		free(f->rule);
		free(f->err);
		free(f->detail);
		rf->omitted++;
		return;
	}
	rf->n++;
}

static int note_written(struct reading *rd, const char *path)
{
	if (rd->np == rd->pcap) {
		size_t nc = rd->pcap ? rd->pcap * 2 : 64;
		char **n = realloc(rd->paths, nc * sizeof(char *));

		if (!n)
			return -ENOMEM;
		rd->paths = n;
		rd->pcap = nc;
	}
	rd->paths[rd->np] = strdup(path);
	if (rd->paths[rd->np])
		rd->np++;
	return 0;
}

static int take_record(const struct jf_audit_line *l, void *arg)
{
	struct reading *rd = arg;
	const char *op, *dec, *path;
	json_t *o = l->rec;

	if (!o)
		return 0;
	if (rd->pidns && (unsigned long long)jf_audit_num(o, "pidns") != rd->pidns)
		return 0;
	op = jf_audit_str(o, "op");
	dec = jf_audit_str(o, "decision");
	path = jf_audit_str(o, "path");
	if (rd->refusals && dec &&
	    (strcmp(dec, "deny") == 0 || (strcmp(dec, "hide") == 0 && strcmp(op, "lookup") != 0)))
		note_refusal(rd->refusals, o);
	/* the bounds' records stand for many (docs/audit.md): their refusals
	 * are counted, not listed */
	if (strcmp(op, "suppressed") == 0 || strcmp(op, "capped") == 0) {
		json_t *b = json_object_get(o, "by_decision");

		if (rd->net && !rd->net_err)
			rd->net_err = jf_net_add(rd->net, o);
		if (rd->refusals)
			rd->refusals->omitted += (long)jf_audit_num(b, "deny");
		if (!rd->counts)
			return 0;
		rd->counts->records += (long)jf_audit_num(o, "count");
		rd->counts->denied += (long)jf_audit_num(b, "deny");
		rd->counts->hidden += (long)jf_audit_num(b, "hide");
		return 0;
	}
	if (!rd->counts)
		return 0;
	if (rd->net && !rd->net_err)
		rd->net_err = jf_net_add(rd->net, o);
	rd->counts->records++;
	if (dec && strcmp(dec, "deny") == 0)
		rd->counts->denied++;
	else if (dec && strcmp(dec, "hide") == 0)
		rd->counts->hidden++;
	else if (path && (jf_audit_num(o, "bytes_written") > 0 ||
			  (jf_audit_op_is_write(op) && !json_object_get(o, "bytes_written"))))
		return note_written(rd, path);
	return 0;
}

static void count_written(struct reading *rd)
{
	if (rd->np)
		qsort(rd->paths, rd->np, sizeof(char *), cmp_str);
	for (size_t i = 0; i < rd->np; i++) {
		if (i == 0 || strcmp(rd->paths[i], rd->paths[i - 1]) != 0)
			rd->counts->written_files++;
	}
	for (size_t i = 0; i < rd->np; i++)
		free(rd->paths[i]);
	free(rd->paths);
}

/* counts->net and its companions from @rd's tracker. */
static void net_result(struct reading *rd)
{
	size_t omitted = 0;

	if (!rd->net || rd->net_err)
		return;
	rd->counts->net = jf_net_json(rd->net, JR_NET_LISTED, &omitted);
	rd->counts->net_omitted = (long)omitted;
	rd->counts->net_incomplete = jf_net_incomplete(rd->net);
	if (!jf_net_allowed(rd->net) && rd->counts->records)
		rd->counts->net_incomplete = "the log holds no allowed record (audit level denied)";
}

void jr_audit_counts_free(struct jr_audit_counts *c)
{
	json_decref(c->net);
	c->net = NULL;
}

int jr_audit_read(int fd, long offset, struct jr_audit_counts *counts, struct jr_refusals *refusals)
{
	return jr_audit_read_ns(fd, offset, 0, counts, refusals);
}

int jr_audit_read_ns(int fd, long offset, unsigned long long pidns, struct jr_audit_counts *counts,
		     struct jr_refusals *refusals)
{
	struct reading rd = {.counts = counts, .refusals = refusals, .pidns = pidns};
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0), r;
	_cleanup_fclose_ FILE *f = dfd >= 0 ? fdopen(dfd, "r") : NULL;

	if (counts)
		memset(counts, 0, sizeof(*counts));
	if (refusals)
		memset(refusals, 0, sizeof(*refusals));
	if (counts && jf_net_new(&rd.net) < 0)
		rd.net = NULL;
	if (!f) {
		r = -errno;
		if (dfd >= 0)
			close(dfd);
		jf_net_free(rd.net);
		return r;
	}
	if (fseek(f, offset, SEEK_SET) < 0) {
		r = -errno;
		jf_net_free(rd.net);
		return r;
	}
	r = jf_audit_read(f, take_record, &rd);
	if (counts) {
		count_written(&rd);
		net_result(&rd);
	}
	jf_net_free(rd.net);
	return r;
}

void jr_refusals_free(struct jr_refusals *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct jr_refusal *f = &r->list[i];

		free(f->op);
		free(f->path);
		free(f->path2);
		free(f->zone);
		free(f->rule);
		free(f->err);
		free(f->detail);
	}
	r->n = 0;
}
