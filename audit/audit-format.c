/* SPDX-License-Identifier: MIT */
/*
 * Audit record formatting: one event -> one JSON Lines record.
 *
 * Hand-written rather than built with jansson: this runs on every FUSE
 * request at level "all", and building a json_t object and dumping it costs
 * about 2.1 us per record here against about 0.2 us for this code
 * (docs/benchmarks.md, "Audit log"). Every record it makes is parsed back with
 * jansson in tests/unit/test-audit.c, including paths with quotes, control bytes
 * and invalid UTF-8. Sources: RFC 8259 (JSON strings), RFC 3629 (UTF-8
 * well-formedness, table 3-7 of the Unicode standard), RFC 3339 (time).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "text.h"

/* An output buffer sized from an upper bound computed before formatting. */
struct jbuf {
	char *p;
	size_t len, cap;
	bool overflow; /* the bound was wrong: a bug, never a torn record */
};

static void put(struct jbuf *b, const void *s, size_t n)
{
	if (b->len + n > b->cap) {
		b->overflow = true;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void puts_(struct jbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void put_u64(struct jbuf *b, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(b, tmp + i, sizeof(tmp) - i);
}

static void put_i64(struct jbuf *b, int64_t v)
{
	if (v < 0) {
		put(b, "-", 1);
		put_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(b, (uint64_t)v);
	}
}

static bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/*
 * A JSON string of @n bytes: quotes, backslashes and control bytes escaped
 * (RFC 8259 section 7; DEL, C1 and bidi controls too, for terminals:
 * jf_unsafe_char_len), each byte that is not part of well-formed UTF-8
 * replaced by U+FFFD. Returns false when one was replaced. Worst case 6
 * output bytes per input byte, plus the quotes.
 */
static bool put_str(struct jbuf *b, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	bool valid = true;
	size_t i = 0;

	put(b, "\"", 1);
	while (i < n) {
		unsigned char c = s[i];
		size_t j = i;

		while (j < n && plain(s[j]))
			j++;
		if (j > i) {
			put(b, s + i, j - i);
			i = j;
			continue;
		}
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			put(b, e, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};

			if (c == '\n')
				put(b, "\\n", 2);
			else if (c == '\t')
				put(b, "\\t", 2);
			else if (c == '\r')
				put(b, "\\r", 2);
			else
				put(b, e, 6);
			i++;
		} else {
			size_t l = jf_utf8_len(s + i, n - i);

			if (l > 1 && jf_unsafe_char_len(s + i, n - i) == l) {
				/* C1 and bidi controls as \uXXXX: the same string
				 * to a parser, inert in a terminal (cat, grep) */
				unsigned cp = l == 2 ? (c & 0x1fu) << 6 | (s[i + 1] & 0x3fu)
						     : (c & 0x0fu) << 12 | (s[i + 1] & 0x3fu) << 6 |
							       (s[i + 2] & 0x3fu);
				char e[6] = {'\\',
					     'u',
					     hex[cp >> 12],
					     hex[cp >> 8 & 15],
					     hex[cp >> 4 & 15],
					     hex[cp & 15]};

				put(b, e, 6);
				i += l;
			} else if (l) {
				put(b, s + i, l);
				i += l;
			} else {
				put(b, "\xef\xbf\xbd", 3);
				valid = false;
				i++;
			}
		}
	}
	put(b, "\"", 1);
	return valid;
}

static void put_hex(struct jbuf *b, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;

	put(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		char e[2] = {hex[s[i] >> 4], hex[s[i] & 15]};
		put(b, e, 2);
	}
	put(b, "\"", 1);
}

/* ,"key":"value" with the _hex twin when the value is not UTF-8. */
static void put_field(struct jbuf *b, const char *key, const char *val, bool with_hex)
{
	size_t n = strlen(val);

	puts_(b, ",\"");
	puts_(b, key);
	puts_(b, "\":");
	if (!put_str(b, val, n) && with_hex) {
		puts_(b, ",\"");
		puts_(b, key);
		puts_(b, "_hex\":");
		put_hex(b, val, n);
	}
}

static void put_2digits(char *p, unsigned v)
{
	p[0] = (char)('0' + v / 10 % 10);
	p[1] = (char)('0' + v % 10);
}

/*
 * {"ts":"2026-11-30T05:50:01.123456Z" -- RFC 3339 UTC. gmtime_r() runs once
 * per second per thread: the date part is cached.
 */
static void put_ts(struct jbuf *b, const struct timespec *ts)
{
	static __thread time_t cached_sec = (time_t)-1;
	static __thread char cached[20]; /* "YYYY-MM-DDTHH:MM:SS" */
	char frac[9] = {'.'};
	unsigned us = (unsigned)(ts->tv_nsec / 1000);

	if (ts->tv_sec != cached_sec) {
		struct tm tm;

		if (!gmtime_r(&ts->tv_sec, &tm))
			memset(&tm, 0, sizeof(tm));
		/* strftime: the compiler cannot prove snprintf's fields fit. */
		if (strftime(cached, sizeof(cached), "%Y-%m-%dT%H:%M:%S", &tm) != 19)
			memcpy(cached, "0000-00-00T00:00:00", 20);
		cached_sec = ts->tv_sec;
	}
	for (int i = 6; i >= 1; i -= 2, us /= 100)
		put_2digits(frac + i - 1, us % 100);
	frac[7] = 'Z';
	frac[8] = '"';
	puts_(b, "{\"ts\":\"");
	put(b, cached, 19);
	put(b, frac, 9);
}

const char *jf_audit_errno_name(int err, char *buf, size_t size)
{
	const char *name = strerrorname_np(err);

	if (name)
		return name;
	snprintf(buf, size, "E%d", err);
	return buf;
}

static const char *decision_name(enum jf_audit_decision d)
{
	switch (d) {
	case JF_AUDIT_ALLOW:
		return "allow";
	case JF_AUDIT_DENY:
		return "deny";
	case JF_AUDIT_HIDE:
		return "hide";
	}
	return "unknown";
}

static size_t slen(const char *s)
{
	return s ? strlen(s) : 0;
}

/* Everything but the strings' escaped bytes fits in this. */
#define FIXED_BOUND 512

/* ,"comm":..,"exe":..,"pidns":N or ,"gone":true: who asked, as far as known. */
static void put_proc(struct jbuf *b, const struct jf_audit_proc *proc)
{
	if (!proc)
		return;
	if (proc->comm)
		put_field(b, "comm", proc->comm, false);
	if (proc->exe)
		put_field(b, "exe", proc->exe, true);
	if (proc->gone)
		puts_(b, ",\"gone\":true");
	if (proc->pidns) {
		puts_(b, ",\"pidns\":");
		put_u64(b, proc->pidns);
	}
}

static void put_body(struct jbuf *b, const struct jf_audit_event *ev, const char *rule,
		     const struct jf_audit_proc *proc)
{
	char ebuf[16];

	put_field(b, "op", ev->op ? ev->op : "unknown", false);
	/* The root is "" in the policy library; printed as "." as --check does. */
	put_field(b, "path", ev->path && ev->path[0] ? ev->path : ".", true);
	if (ev->path2)
		put_field(b, "path2", ev->path2[0] ? ev->path2 : ".", true);
	put_field(b, "zone", jf_zone_name(ev->zone), false);
	put_field(b, "decision", decision_name(ev->decision), false);
	if (ev->err)
		put_field(b, "errno", jf_audit_errno_name(ev->err, ebuf, sizeof(ebuf)), false);
	put_field(b, "rule", rule, false);
	if (ev->detail)
		put_field(b, "detail", ev->detail, false);
	puts_(b, ",\"pid\":");
	put_i64(b, ev->pid);
	puts_(b, ",\"uid\":");
	put_u64(b, ev->uid);
	put_proc(b, proc);
	if ((ev->op && strcmp(ev->op, "release") == 0) || ev->bytes_read > 0 ||
	    ev->bytes_written > 0) {
		puts_(b, ",\"bytes_read\":");
		put_i64(b, ev->bytes_read > 0 ? ev->bytes_read : 0);
		puts_(b, ",\"bytes_written\":");
		put_i64(b, ev->bytes_written > 0 ? ev->bytes_written : 0);
	}
	puts_(b, "}\n");
}

static size_t proc_len(const struct jf_audit_proc *proc)
{
	return proc ? 6 * slen(proc->comm) + 8 * slen(proc->exe) : 0;
}

char *jf_audit_format(const struct jf_audit_event *ev, const struct timespec *ts,
		      const struct jf_audit_proc *proc, size_t *len)
{
	char rbuf[256], *rule = rbuf, *heap_rule = NULL;
	struct jbuf b = {0};
	int n;

	/* The refusal reason stands in for the rule, as jailfs --check prints it. */
	if (ev->refusal) {
		rule = (char *)ev->refusal;
	} else {
		n = jf_rule_format(ev->rule, rbuf, sizeof(rbuf));
		if (n < 0)
			rbuf[0] = '\0';
		else if ((size_t)n >= sizeof(rbuf)) {
			heap_rule = malloc((size_t)n + 1);
			if (!heap_rule)
				return NULL;
			jf_rule_format(ev->rule, heap_rule, (size_t)n + 1);
			rule = heap_rule;
		}
	}
	b.cap = FIXED_BOUND + 8 * (slen(ev->path) + slen(ev->path2)) +
		6 * (slen(ev->op) + slen(rule) + slen(ev->detail)) + proc_len(proc);
	b.p = malloc(b.cap + 1);
	if (b.p) {
		put_ts(&b, ts);
		put_body(&b, ev, rule, proc);
	}
	free(heap_rule);
	if (!b.p || b.overflow) {
		free(b.p);
		errno = ENOMEM;
		return NULL;
	}
	b.p[b.len] = '\0';
	*len = b.len;
	return b.p;
}

char *jf_audit_format_dropped(uint64_t count, const struct timespec *ts, size_t *len)
{
	struct jbuf b = {.cap = 128};

	b.p = malloc(b.cap + 1);
	if (!b.p)
		return NULL;
	put_ts(&b, ts);
	puts_(&b, ",\"op\":\"dropped\",\"count\":");
	put_u64(&b, count);
	puts_(&b, "}\n");
	b.p[b.len] = '\0';
	*len = b.len;
	return b.p;
}

/* "key":"2026-11-30T05:50:01.123456Z" (no leading comma) */
static void put_ts_field(struct jbuf *b, const char *key, const struct timespec *ts)
{
	struct jbuf t = {.p = (char[40]){0}, .cap = 40};

	put_ts(&t, ts); /* {"ts":"...Z" */
	puts_(b, "\"");
	puts_(b, key);
	puts_(b, "\":");
	put(b, t.p + 6, t.len - 6);
}

static void put_by_decision(struct jbuf *b, const uint64_t n[3])
{
	puts_(b, ",\"by_decision\":{\"allow\":");
	put_u64(b, n[JF_AUDIT_ALLOW]);
	puts_(b, ",\"deny\":");
	put_u64(b, n[JF_AUDIT_DENY]);
	puts_(b, ",\"hide\":");
	put_u64(b, n[JF_AUDIT_HIDE]);
	puts_(b, "}");
}

char *jf_audit_format_suppressed(const struct jf_audit_suppressed *s, const struct timespec *ts,
				 size_t *len)
{
	struct jbuf b = {.cap = FIXED_BOUND + proc_len(&s->proc)};
	const uint64_t *n = s->by_decision;

	b.p = malloc(b.cap + 1);
	if (!b.p)
		return NULL;
	put_ts(&b, ts);
	puts_(&b, ",\"op\":\"suppressed\",\"pid\":");
	put_i64(&b, s->pid);
	puts_(&b, ",\"uid\":");
	put_u64(&b, s->uid);
	put_proc(&b, &s->proc);
	puts_(&b, ",\"count\":");
	put_u64(&b, n[0] + n[1] + n[2]);
	put_by_decision(&b, n);
	puts_(&b, ",");
	put_ts_field(&b, "since", &s->since);
	puts_(&b, ",");
	put_ts_field(&b, "until", &s->until);
	puts_(&b, "}\n");
	if (b.overflow) {
		free(b.p);
		return NULL;
	}
	b.p[b.len] = '\0';
	*len = b.len;
	return b.p;
}

/* A number padded with spaces to 20 characters (UINT64_MAX has 20 digits). */
static void put_u64_padded(struct jbuf *b, uint64_t v)
{
	size_t start = b->len;

	put_u64(b, v);
	while (b->len - start < 20)
		put(b, " ", 1);
}

void jf_audit_format_capped(const struct jf_audit_capped *c, const struct timespec *ts,
			    char buf[JF_AUDIT_CAPPED_LEN])
{
	const uint64_t *n = c->by_decision;
	struct jbuf b = {.p = buf, .cap = JF_AUDIT_CAPPED_LEN};

	put_ts(&b, ts);
	puts_(&b, ",\"op\":\"capped\",\"max_size\":");
	put_u64_padded(&b, c->max_size);
	puts_(&b, ",\"count\":");
	put_u64_padded(&b, n[0] + n[1] + n[2] + c->dropped);
	puts_(&b, ",\"by_decision\":{\"allow\":");
	put_u64_padded(&b, n[JF_AUDIT_ALLOW]);
	puts_(&b, ",\"deny\":");
	put_u64_padded(&b, n[JF_AUDIT_DENY]);
	puts_(&b, ",\"hide\":");
	put_u64_padded(&b, n[JF_AUDIT_HIDE]);
	puts_(&b, "},\"dropped\":");
	put_u64_padded(&b, c->dropped);
	puts_(&b, ",");
	put_ts_field(&b, "until", &c->until);
	/* pad to the fixed length: the line is rewritten in place */
	while (b.len < JF_AUDIT_CAPPED_LEN - 2)
		put(&b, " ", 1);
	put(&b, "}\n", 2);
}

bool jf_audit_op_is_write(const char *op)
{
	static const char *const ops[] = {
		"create",   "mkdir",   "mknod",	   "symlink",	  "link",      "unlink",
		"rmdir",    "rename",  "write",	   "setattr",	  "chmod",     "chown",
		"truncate", "utimens", "setxattr", "removexattr", "fallocate", "copy_file_range",
	};

	if (!op)
		return false;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(op, ops[i]) == 0)
			return true;
	return false;
}
