/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the audit log (fs/audit.c, fs/audit-format.c) and of
 * jailfs --audit-report: real files, FIFOs and threads, and a real SIGKILL.
 * Every record written is parsed back with jansson.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "audit.h"
#include "cleanup.h"
#include "text.h"

#include "test-util.h"

static char tmpdir[] = "/tmp/jf-test-audit.XXXXXX";

static char *tpath(const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", tmpdir, name);
	return p;
}

/* Parse every line of @text (must end in '\n'); calls @fn on each object. */
typedef void (*line_fn)(json_t *obj, void *ctx);

static size_t parse_lines(const char *text, size_t len, line_fn fn, void *ctx)
{
	size_t lines = 0;
	const char *p = text, *end = text + len;

	if (len)
		assert_int_equal(end[-1], '\n');
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		json_error_t jerr;
		json_t *o;

		assert_non_null(nl);
		o = json_loadb(p, (size_t)(nl - p), 0, &jerr);
		if (!o)
			fail_msg("line %zu does not parse: %s: %.*s", lines + 1, jerr.text,
				 (int)(nl - p), p);
		assert_true(json_is_object(o));
		if (fn)
			fn(o, ctx);
		json_decref(o);
		lines++;
		p = nl + 1;
	}
	return lines;
}

static const char *sget(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static json_int_t iget(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static struct jf_audit_event ev_simple(const char *op, const char *path)
{
	return (struct jf_audit_event){
		.op = op,
		.path = path,
		.zone = JF_SAFE,
		.decision = JF_AUDIT_ALLOW,
		.pid = 0,
		.uid = 1000,
	};
}

static void start_or_fail(const char *path, enum jf_audit_level level, bool sync, size_t qlen)
{
	struct jf_audit_config cfg = {
		.path = path, .level = level, .sync = sync, .queue_len = qlen};

	assert_int_equal(jf_audit_start(&cfg), 0);
}

/* ---- levels ---- */

static void test_parse_level(void **state)
{
	enum jf_audit_level l = JF_AUDIT_OFF;

	assert_int_equal(jf_audit_parse_level("denied", &l), 0);
	assert_int_equal(l, JF_AUDIT_DENIED);
	assert_int_equal(jf_audit_parse_level("writes", &l), 0);
	assert_int_equal(l, JF_AUDIT_WRITES);
	assert_int_equal(jf_audit_parse_level("all", &l), 0);
	assert_int_equal(l, JF_AUDIT_ALL);
	assert_int_equal(jf_audit_parse_level("ALL", &l), -EINVAL);
	assert_int_equal(jf_audit_parse_level("", &l), -EINVAL);
	assert_int_equal(jf_audit_parse_level("deny", &l), -EINVAL);
	assert_int_equal(jf_audit_parse_level(NULL, &l), -EINVAL);
}

static void test_wants_per_level(void **state)
{
	/* [level][decision allow/deny/hide][mutation] */
	static const bool want[4][3][2] = {
		{{0, 0}, {0, 0}, {0, 0}},
		{{0, 0}, {1, 1}, {1, 1}},
		{{0, 1}, {1, 1}, {1, 1}},
		{{1, 1}, {1, 1}, {1, 1}},
	};

	for (int l = JF_AUDIT_OFF; l <= JF_AUDIT_ALL; l++) {
		start_or_fail(tpath("wants.jsonl"), (enum jf_audit_level)l, false, 0);
		for (int d = 0; d < 3; d++)
			for (int m = 0; m < 2; m++)
				assert_int_equal(jf_audit_wants((enum jf_audit_decision)d, m),
						 want[l][d][m]);
		jf_audit_stop();
		/* Stopped: nothing is wanted any more. */
		assert_false(jf_audit_wants(JF_AUDIT_DENY, true));
	}
}

/* Emit one event per class at each level: the file holds exactly the wanted. */
static void test_level_filtering_in_file(void **state)
{
	static const size_t expect[] = {0, 2, 3, 4};

	for (int l = JF_AUDIT_DENIED; l <= JF_AUDIT_ALL; l++) {
		char *f = tpath("levels.jsonl");
		struct jf_audit_event ev = ev_simple("lookup", "src/a.c");
		_cleanup_free_ char *text = NULL;
		size_t len;

		unlink(f);
		start_or_fail(f, (enum jf_audit_level)l, false, 0);
		jf_audit_emit(&ev); /* allow, read: all only */
		ev.op = "write";
		ev.mutation = true;
		jf_audit_emit(&ev); /* allow, mutation: writes+ */
		ev = ev_simple("lookup", ".env");
		ev.decision = JF_AUDIT_HIDE;
		ev.zone = JF_DENIED;
		ev.err = ENOENT;
		jf_audit_emit(&ev);
		ev = ev_simple("unlink", "README");
		ev.decision = JF_AUDIT_DENY;
		ev.zone = JF_RESTRICTED;
		ev.mutation = true;
		ev.err = EROFS;
		jf_audit_emit(&ev);
		jf_audit_stop();
		text = tu_slurp(f, &len);
		assert_int_equal(parse_lines(text, len, NULL, NULL), expect[l]);
	}
}

/* ---- formatting ---- */

/* 2026-11-30T05:50:01.123456Z */
static const struct timespec known_ts = {.tv_sec = 1796017801, .tv_nsec = 123456789};

static char *fmt(const struct jf_audit_event *ev, const char *comm)
{
	struct jf_audit_proc proc = {.comm = comm};
	size_t len;
	char *line = jf_audit_format(ev, &known_ts, &proc, &len);

	assert_non_null(line);
	assert_int_equal(strlen(line), len);
	assert_int_equal(line[len - 1], '\n');
	assert_null(memchr(line, '\n', len - 1)); /* one line */
	return line;
}

static json_t *fmt_parse(const struct jf_audit_event *ev, const char *comm)
{
	_cleanup_free_ char *line = fmt(ev, comm);
	json_error_t jerr;
	json_t *o = json_loads(line, 0, &jerr);

	if (!o)
		fail_msg("does not parse: %s: %s", jerr.text, line);
	return o;
}

static void test_format_exact_line(void **state)
{
	struct jf_rule rule = {
		.source = "policy.ini", .line = 7, .pattern = "*.pem", .zone = JF_DENIED};
	struct jf_audit_event ev = {
		.op = "lookup",
		.path = "keys/server.pem",
		.zone = JF_DENIED,
		.decision = JF_AUDIT_HIDE,
		.err = ENOENT,
		.rule = &rule,
		.pid = 4242,
		.uid = 1000,
	};
	_cleanup_free_ char *line = fmt(&ev, "cat");

	assert_string_equal(
		line, "{\"ts\":\"2026-11-30T05:50:01.123456Z\",\"op\":\"lookup\","
		      "\"path\":\"keys/server.pem\",\"zone\":\"DENIED\",\"decision\":\"hide\","
		      "\"errno\":\"ENOENT\",\"rule\":\"policy.ini:7\",\"pid\":4242,"
		      "\"uid\":1000,\"comm\":\"cat\"}\n");
}

static void test_format_fields(void **state)
{
	struct jf_rule prof = {.source = "secrets", .builtin = true, .line = 3, .zone = JF_DENIED};
	struct jf_audit_event ev = ev_simple("rename", "a/b.txt");
	json_t *o;

	/* Root is printed as "."; rename has path2; rule NULL is "default"; no errno. */
	ev.path = "";
	ev.path2 = "c.txt";
	ev.mutation = true;
	o = fmt_parse(&ev, NULL);
	assert_string_equal(sget(o, "path"), ".");
	assert_string_equal(sget(o, "path2"), "c.txt");
	assert_string_equal(sget(o, "rule"), "default");
	assert_string_equal(sget(o, "zone"), "SAFE");
	assert_string_equal(sget(o, "decision"), "allow");
	assert_null(json_object_get(o, "errno"));
	assert_null(json_object_get(o, "comm"));
	assert_null(json_object_get(o, "bytes_read"));
	assert_null(json_object_get(o, "path_hex"));
	assert_int_equal(iget(o, "uid"), 1000);
	json_decref(o);

	/* A built-in profile rule, deny with EROFS. */
	ev = ev_simple("unlink", "Makefile");
	ev.decision = JF_AUDIT_DENY;
	ev.zone = JF_RESTRICTED;
	ev.err = EROFS;
	ev.rule = &prof;
	ev.uid = 4294967294u; /* (uid_t)-2: unsigned, not negative */
	o = fmt_parse(&ev, NULL);
	assert_string_equal(sget(o, "rule"), "profile:secrets");
	assert_string_equal(sget(o, "errno"), "EROFS");
	assert_string_equal(sget(o, "decision"), "deny");
	assert_string_equal(sget(o, "zone"), "RESTRICTED");
	assert_int_equal(iget(o, "uid"), 4294967294LL);
	json_decref(o);

	/* A refused name: the reason stands in for the rule. */
	ev = ev_simple("lookup", "%2e%2e");
	ev.decision = JF_AUDIT_HIDE;
	ev.zone = JF_DENIED;
	ev.err = ENOENT;
	ev.refusal = "encoded";
	o = fmt_parse(&ev, NULL);
	assert_string_equal(sget(o, "rule"), "encoded");
	assert_string_equal(sget(o, "path"), "%2e%2e");
	json_decref(o);

	/* Release carries both byte counts, even when 0; other ops do not. */
	ev = ev_simple("release", "out.bin");
	ev.bytes_read = 0;
	ev.bytes_written = 5000000000LL;
	o = fmt_parse(&ev, "tar");
	assert_int_equal(iget(o, "bytes_read"), 0);
	assert_int_equal(iget(o, "bytes_written"), 5000000000LL);
	assert_string_equal(sget(o, "comm"), "tar");
	json_decref(o);

	/* An errno without a name still gives a string. */
	ev = ev_simple("open", "x");
	ev.err = 4000;
	o = fmt_parse(&ev, NULL);
	assert_string_equal(sget(o, "errno"), "E4000");
	json_decref(o);
}

static void test_format_ts(void **state)
{
	static const struct {
		struct timespec ts;
		const char *want;
	} cases[] = {
		{{0, 0}, "1970-01-01T00:00:00.000000Z"},
		{{1796017801, 999999999}, "2026-11-30T05:50:01.999999Z"},
		{{1796017801, 1000}, "2026-11-30T05:50:01.000001Z"},
		{{951782400, 500000}, "2000-02-29T00:00:00.000500Z"},
	};
	struct jf_audit_event ev = ev_simple("lookup", "a");

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t len;
		_cleanup_free_ char *line = jf_audit_format(&ev, &cases[i].ts, NULL, &len);
		json_t *o = json_loads(line, 0, NULL);

		assert_non_null(o);
		assert_string_equal(sget(o, "ts"), cases[i].want);
		json_decref(o);
	}
	/* The dropped line. */
	{
		size_t len;
		_cleanup_free_ char *line = jf_audit_format_dropped(17, &known_ts, &len);

		assert_string_equal(line, "{\"ts\":\"2026-11-30T05:50:01.123456Z\","
					  "\"op\":\"dropped\",\"count\":17}\n");
	}
}

static void test_format_escaping(void **state)
{
	static const struct {
		const char *raw;
		const char *want; /* decoded "path" */
		const char *hex;  /* "path_hex", NULL when absent */
	} cases[] = {
		{"quote\"back\\slash", "quote\"back\\slash", NULL},
		{"nl\ntab\tcr\rbell\a", "nl\ntab\tcr\rbell\a", NULL},
		{"ctl\x01\x1f\x7f", "ctl\x01\x1f\x7f", NULL},
		{"caf\xc3\xa9/\xf0\x9f\x98\x80", "caf\xc3\xa9/\xf0\x9f\x98\x80", NULL},
		{"bad\xff", "bad\xef\xbf\xbd", "626164ff"},
		{"over\xc0\xaf", "over\xef\xbf\xbd\xef\xbf\xbd", "6f766572c0af"},
		{"surr\xed\xa0\x80", "surr\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "73757272eda080"},
		{"cut\xe2\x82", "cut\xef\xbf\xbd\xef\xbf\xbd", "637574e282"},
		{"big\xf4\x90\x80\x80", "big\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
		 "626967f4908080"},
		{"\x80", "\xef\xbf\xbd", "80"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct jf_audit_event ev = ev_simple("lookup", cases[i].raw);
		json_t *o;

		ev.path2 = cases[i].raw;
		o = fmt_parse(&ev, cases[i].raw); /* comm gets the same bytes */
		assert_string_equal(sget(o, "path"), cases[i].want);
		assert_string_equal(sget(o, "path2"), cases[i].want);
		assert_string_equal(sget(o, "comm"), cases[i].want);
		if (cases[i].hex) {
			assert_string_equal(sget(o, "path_hex"), cases[i].hex);
			assert_string_equal(sget(o, "path2_hex"), cases[i].hex);
		} else {
			assert_null(json_object_get(o, "path_hex"));
		}
		json_decref(o);
	}
}

/* Worst case sizes: a 4096-byte path of control bytes and one of bad bytes. */
static void test_format_worst_case(void **state)
{
	char *p1 = malloc(4097), *p2 = malloc(4097), *src = malloc(5000);
	struct jf_rule rule = {.source = src, .line = 1};
	struct jf_audit_event ev = ev_simple("rename", p1);
	json_t *o;

	memset(p1, 0x01, 4096);
	memset(p2, 0xfe, 4096);
	memset(src, '"', 4999);
	p1[4096] = p2[4096] = src[4999] = '\0';
	ev.path2 = p2;
	ev.rule = &rule;
	o = fmt_parse(&ev, "\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01");
	assert_int_equal(strlen(sget(o, "path")), 4096);
	assert_int_equal(strlen(sget(o, "path2")), 3 * 4096);
	assert_int_equal(strlen(sget(o, "path2_hex")), 2 * 4096);
	assert_int_equal(strlen(sget(o, "rule")), 4999 + 2);
	json_decref(o);
	free(p1);
	free(p2);
	free(src);
}

static void test_op_is_write(void **state)
{
	assert_true(jf_audit_op_is_write("create"));
	assert_true(jf_audit_op_is_write("rename"));
	assert_true(jf_audit_op_is_write("setattr"));
	assert_false(jf_audit_op_is_write("lookup"));
	assert_false(jf_audit_op_is_write("release"));
	assert_false(jf_audit_op_is_write(NULL));
}

/* ---- comm ---- */

static void *named_thread(void *arg)
{
	struct jf_audit_event ev = ev_simple("lookup", "from-thread");

	prctl(PR_SET_NAME, "we\"ird\\name");
	ev.pid = (pid_t)gettid();
	jf_audit_emit(&ev);
	/* Renamed (exec does the same): the next record has the new name. */
	prctl(PR_SET_NAME, "renamed");
	jf_audit_emit(&ev);
	return arg;
}

static void test_comm(void **state)
{
	char *f = tpath("comm.jsonl");
	struct jf_audit_event ev = ev_simple("lookup", "self");
	_cleanup_free_ char *text = NULL;
	char self[32] = "";
	pthread_t t;
	size_t len;
	json_t *o;
	FILE *c;

	c = fopen("/proc/self/comm", "re");
	assert_non_null(c);
	assert_non_null(fgets(self, sizeof(self), c));
	fclose(c);
	self[strcspn(self, "\n")] = '\0';

	unlink(f);
	start_or_fail(f, JF_AUDIT_ALL, true, 0);
	ev.pid = getpid();
	jf_audit_emit(&ev);
	assert_int_equal(pthread_create(&t, NULL, named_thread, NULL), 0);
	pthread_join(t, NULL);
	ev.pid = 0; /* kernel-internal request: no comm */
	jf_audit_emit(&ev);
	ev.pid = 999999999; /* no such process */
	jf_audit_emit(&ev);
	jf_audit_stop();

	text = tu_slurp(f, &len);
	{
		char *l1 = text, *l2 = strchr(l1, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
		char *l4 = strchr(l3, '\n') + 1, *l5 = strchr(l4, '\n') + 1;

		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		struct stat ns;

		assert_true(n > 0);
		exe[n] = '\0';
		o = json_loadb(l1, (size_t)(l2 - l1), 0, NULL);
		assert_string_equal(sget(o, "comm"), self);
		assert_int_equal(iget(o, "pid"), getpid());
		assert_non_null(sget(o, "exe"));
		assert_string_equal(sget(o, "exe"), exe);
		/* the pid namespace, which tells commands sharing a view apart */
		assert_int_equal(stat("/proc/self/ns/pid", &ns), 0);
		assert_int_equal(iget(o, "pidns"), (json_int_t)ns.st_ino);
		json_decref(o);
		/* A renamed thread: its own name, the real executable. */
		o = json_loadb(l2, (size_t)(l3 - l2), 0, NULL);
		assert_string_equal(sget(o, "comm"), "we\"ird\\name");
		assert_non_null(sget(o, "exe"));
		assert_string_equal(sget(o, "exe"), exe);
		json_decref(o);
		o = json_loadb(l3, (size_t)(l4 - l3), 0, NULL);
		assert_string_equal(sget(o, "comm"), "renamed");
		assert_non_null(sget(o, "exe"));
		assert_string_equal(sget(o, "exe"), exe);
		json_decref(o);
		o = json_loadb(l4, (size_t)(l5 - l4), 0, NULL);
		assert_null(json_object_get(o, "comm"));
		assert_null(json_object_get(o, "exe"));
		assert_null(json_object_get(o, "gone"));
		assert_null(json_object_get(o, "pidns"));
		json_decref(o);
		/* No such process: said so. */
		o = json_loads(l5, 0, NULL);
		assert_null(json_object_get(o, "comm"));
		assert_null(json_object_get(o, "exe"));
		assert_true(json_is_true(json_object_get(o, "gone")));
		assert_null(json_object_get(o, "pidns"));
		json_decref(o);
	}
}

/* ---- bounds: rate per process, size cap ---- */

/* The exe field takes any bytes (a hex twin), the suppressed and capped
 * lines are exact and parse. */
static void test_format_bounds(void **state)
{
	struct jf_audit_event ev = ev_simple("lookup", "a");
	struct jf_audit_proc proc = {.comm = "git", .exe = "/tmp/g\xffit"};
	struct jf_audit_suppressed sup = {
		.pid = 42,
		.uid = 1000,
		.proc = {.comm = "git", .exe = "/usr/bin/git"},
		.by_decision = {1, 2, 30},
		.since = {1796017801, 0},
		.until = {1796017802, 500000000},
	};
	struct jf_audit_capped cap = {
		.max_size = 16384, .by_decision = {5, 6, 7}, .dropped = 8, .until = known_ts};
	char buf[JF_AUDIT_CAPPED_LEN + 1] = "";
	size_t len;
	char *line = jf_audit_format(&ev, &known_ts, &proc, &len);
	json_t *o = json_loads(line, 0, NULL);

	assert_non_null(o);
	assert_string_equal(sget(o, "exe"), "/tmp/g\xef\xbf\xbdit");
	assert_string_equal(sget(o, "exe_hex"), "2f746d702f67ff6974");
	assert_null(json_object_get(o, "gone"));
	json_decref(o);
	free(line);

	line = jf_audit_format_suppressed(&sup, &known_ts, &len);
	assert_string_equal(line,
			    "{\"ts\":\"2026-11-30T05:50:01.123456Z\",\"op\":\"suppressed\","
			    "\"pid\":42,\"uid\":1000,\"comm\":\"git\",\"exe\":\"/usr/bin/git\","
			    "\"count\":33,\"by_decision\":{\"allow\":1,\"deny\":2,\"hide\":30},"
			    "\"since\":\"2026-11-30T05:50:01.000000Z\","
			    "\"until\":\"2026-11-30T05:50:02.500000Z\"}\n");
	free(line);

	jf_audit_format_capped(&cap, &known_ts, buf);
	assert_int_equal(strlen(buf), JF_AUDIT_CAPPED_LEN);
	assert_int_equal(buf[JF_AUDIT_CAPPED_LEN - 1], '\n');
	o = json_loads(buf, 0, NULL);
	assert_non_null(o);
	assert_string_equal(sget(o, "op"), "capped");
	assert_int_equal(iget(o, "max_size"), 16384);
	assert_int_equal(iget(o, "count"), 26);
	assert_int_equal(iget(o, "dropped"), 8);
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(o, "by_decision"), "hide")), 7);
	json_decref(o);
	/* the widest counts still fit the fixed length */
	cap = (struct jf_audit_capped){.max_size = INT64_MAX,
				       .by_decision = {INT64_MAX / 4, INT64_MAX / 4, INT64_MAX / 4},
				       .dropped = INT64_MAX / 4};
	jf_audit_format_capped(&cap, &known_ts, buf);
	assert_int_equal(strlen(buf), JF_AUDIT_CAPPED_LEN);
	o = json_loads(buf, 0, NULL);
	assert_non_null(o);
	json_decref(o);
}

static void test_parse_rate(void **state)
{
	uint32_t r = 7;

	assert_int_equal(jf_audit_parse_rate("100", &r), 0);
	assert_int_equal(r, 100);
	assert_int_equal(jf_audit_parse_rate("5/s", &r), 0);
	assert_int_equal(r, 5);
	assert_int_equal(jf_audit_parse_rate("0", &r), -EINVAL);
	assert_int_equal(jf_audit_parse_rate("/s", &r), -EINVAL);
	assert_int_equal(jf_audit_parse_rate("5/m", &r), -EINVAL);
	assert_int_equal(jf_audit_parse_rate("-1", &r), -EINVAL);
	assert_int_equal(jf_audit_parse_rate("2000000000", &r), -ERANGE);
	assert_int_equal(r, 5);
}

struct bound_count {
	pid_t pid;
	size_t records;	       /* detail records of pid */
	json_int_t suppressed; /* by_decision.hide of its suppressed records */
	size_t summaries;
	json_t *last; /* the last record (a reference) */
	size_t lines;
};

static void count_bound(json_t *o, void *ctx)
{
	struct bound_count *c = ctx;
	json_t *v = json_object_get(o, "pid");

	c->lines++;
	json_decref(c->last);
	c->last = json_incref(o);
	if (!json_is_integer(v) || json_integer_value(v) != c->pid)
		return;
	if (strcmp(sget(o, "op"), "suppressed") == 0) {
		json_t *b = json_object_get(o, "by_decision");

		assert_int_equal(iget(o, "count"),
				 iget(b, "allow") + iget(b, "deny") + iget(b, "hide"));
		c->suppressed += iget(b, "hide");
		c->summaries++;
	} else {
		c->records++;
	}
}

static struct bound_count count_pid(const char *f, pid_t pid)
{
	struct bound_count c = {.pid = pid};
	_cleanup_free_ char *text = NULL;
	size_t len;

	text = tu_slurp(f, &len);
	parse_lines(text, len, count_bound, &c);
	return c;
}

/* @n hidden lookups by @pid. */
static void emit_hidden(pid_t pid, int n)
{
	for (int i = 0; i < n; i++) {
		struct jf_audit_event ev = ev_simple("lookup", ".env");

		ev.decision = JF_AUDIT_HIDE;
		ev.zone = JF_DENIED;
		ev.err = ENOENT;
		ev.pid = pid;
		jf_audit_emit(&ev);
	}
}

/* A flood from one process is cut to the rate and counted exactly; another
 * process in the same second is not touched; both modes. */
static void test_rate_limit(void **state)
{
	enum { FLOOD = 5000, OTHER = 80, RATE = 100 };
	const pid_t a = 3999991, b = 3999992; /* no such processes: "gone" */

	for (int sync = 0; sync <= 1; sync++) {
		char *f = tpath("rate.jsonl");
		struct jf_audit_config cfg = {
			.path = f, .level = JF_AUDIT_DENIED, .sync = sync, .rate = RATE};
		struct jf_audit_stats st;
		struct bound_count ca, cb;
		struct timespec t0, t1;
		double secs;

		unlink(f);
		assert_int_equal(jf_audit_start(&cfg), 0);
		clock_gettime(CLOCK_REALTIME, &t0);
		emit_hidden(a, FLOOD / 2);
		emit_hidden(b, OTHER);
		emit_hidden(a, FLOOD / 2);
		clock_gettime(CLOCK_REALTIME, &t1);
		jf_audit_stop();
		secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		jf_audit_get_stats(&st);
		ca = count_pid(f, a);
		cb = count_pid(f, b);
		print_message("sync %d, %.3f s: %zu written, %lld suppressed in %zu records\n",
			      sync, secs, ca.records, (long long)ca.suppressed, ca.summaries);
		/* a second's burst, plus what the time taken refilled */
		assert_true(ca.records >= RATE && (double)ca.records <= RATE + RATE * secs + 1);
		assert_int_equal(ca.records + (size_t)ca.suppressed, FLOOD);
		assert_true(ca.summaries >= 1);
		assert_int_equal(st.suppressed, (uint64_t)ca.suppressed);
		assert_int_equal(cb.records, OTHER);
		assert_int_equal(cb.summaries, 0);
		json_decref(ca.last);
		json_decref(cb.last);
	}
}

struct flood_thread {
	pid_t tid;
	int n;
};

/* @n hidden lookups by the calling thread, as FUSE reports it (its ID). */
static void *flood_as_thread(void *arg)
{
	struct flood_thread *ft = arg;

	ft->tid = (pid_t)syscall(SYS_gettid);
	emit_hidden(ft->tid, ft->n);
	return NULL;
}

/* The threads of one process share its rate: FUSE reports each thread's ID,
 * and 64 threads got 53 times the rate of one. */
static void test_rate_per_process(void **state)
{
	enum { THREADS = 8, EACH = 600, RATE = 100 };
	char *f = tpath("rate-threads.jsonl");
	struct jf_audit_config cfg = {.path = f, .level = JF_AUDIT_DENIED, .rate = RATE};
	struct flood_thread ft[THREADS];
	pthread_t t[THREADS];
	struct timespec t0, t1;
	struct bound_count c;
	size_t records = 0;
	json_int_t suppressed = 0;
	double secs;

	(void)state;
	unlink(f);
	assert_int_equal(jf_audit_start(&cfg), 0);
	clock_gettime(CLOCK_REALTIME, &t0);
	for (int i = 0; i < THREADS; i++) {
		ft[i].n = EACH;
		assert_int_equal(pthread_create(&t[i], NULL, flood_as_thread, &ft[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_REALTIME, &t1);
	jf_audit_stop();
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	for (int i = 0; i < THREADS; i++) {
		c = count_pid(f, ft[i].tid);
		records += c.records;
		json_decref(c.last);
	}
	c = count_pid(f, getpid()); /* the summaries name the process */
	suppressed = c.suppressed;
	json_decref(c.last);
	print_message("%d threads, %.3f s: %zu written, %lld suppressed\n", THREADS, secs, records,
		      (long long)suppressed);
	assert_true(records >= RATE && (double)records <= RATE + RATE * secs + 1);
	assert_int_equal(records + (size_t)suppressed, THREADS * EACH);
}

/* A burst that ended is summed up within about a second, without a stop. */
static void test_rate_summary_in_time(void **state)
{
	char *f = tpath("rate-live.jsonl");
	struct jf_audit_config cfg = {.path = f, .level = JF_AUDIT_DENIED, .rate = 10};
	struct bound_count c = {0};

	unlink(f);
	assert_int_equal(jf_audit_start(&cfg), 0);
	emit_hidden(3999993, 50);
	for (int i = 0; i < 40 && c.summaries == 0; i++) {
		usleep(100000);
		json_decref(c.last);
		c = count_pid(f, 3999993);
	}
	assert_int_equal(c.summaries, 1);
	assert_int_equal(c.records + (size_t)c.suppressed, 50);
	json_decref(c.last);
	jf_audit_stop();
}

/* The file never grows past max_size; the capped line, last, counts the
 * rest, and keeps counting in place after a flush; both modes. */
static void test_size_cap(void **state)
{
	enum { MAX = 8192, N = 600, MORE = 100 };

	for (int sync = 0; sync <= 1; sync++) {
		char *f = tpath("cap.jsonl");
		struct jf_audit_config cfg = {
			.path = f, .level = JF_AUDIT_DENIED, .sync = sync, .max_size = MAX};
		struct bound_count c;
		struct jf_audit_stats st;
		struct stat sb;
		json_int_t first;

		unlink(f);
		assert_int_equal(jf_audit_start(&cfg), 0);
		emit_hidden(3999994, N);
		assert_int_equal(jf_audit_flush(5000), 0);
		c = count_pid(f, 3999994);
		assert_string_equal(sget(c.last, "op"), "capped");
		first = iget(c.last, "count");
		assert_int_equal(c.records - 0 + (size_t)first, N);
		assert_int_equal(stat(f, &sb), 0);
		assert_true(sb.st_size <= MAX);
		json_decref(c.last);

		emit_hidden(3999994, MORE);
		jf_audit_stop();
		jf_audit_get_stats(&st);
		assert_int_equal(st.capped, (uint64_t)first + MORE);
		c = count_pid(f, 3999994);
		assert_string_equal(sget(c.last, "op"), "capped");
		assert_int_equal(iget(c.last, "count"), first + MORE);
		assert_int_equal(iget(json_object_get(c.last, "by_decision"), "hide"),
				 first + MORE);
		assert_int_equal(c.records + (size_t)iget(c.last, "count"), N + MORE);
		assert_int_equal(stat(f, &sb), 0);
		assert_true(sb.st_size <= MAX);
		json_decref(c.last);
	}
	/* too small a cap is refused */
	{
		struct jf_audit_config cfg = {.path = tpath("cap2.jsonl"),
					      .level = JF_AUDIT_DENIED,
					      .max_size = JF_AUDIT_MAX_SIZE_MIN - 1};

		assert_int_equal(jf_audit_start(&cfg), -EINVAL);
	}
}

/* ---- the writer ---- */

struct emitter {
	int id, n;
};

static void *emit_many(void *arg)
{
	struct emitter *e = arg;
	char path[64];

	for (int i = 0; i < e->n; i++) {
		struct jf_audit_event ev = ev_simple("lookup", path);

		snprintf(path, sizeof(path), "t%d/file-%d \"q\"\x01\xff", e->id, i);
		ev.pid = getpid();
		jf_audit_emit(&ev);
	}
	return NULL;
}

struct seen {
	int threads, per_thread;
	unsigned char *mark; /* threads * per_thread */
	size_t dropped, records;
};

static void mark_seen(json_t *o, void *ctx)
{
	struct seen *s = ctx;
	int t, i;

	if (strcmp(sget(o, "op"), "dropped") == 0) {
		s->dropped += (size_t)iget(o, "count");
		return;
	}
	assert_int_equal(sscanf(sget(o, "path"), "t%d/file-%d", &t, &i), 2);
	assert_true(t >= 0 && t < s->threads && i >= 0 && i < s->per_thread);
	assert_int_equal(s->mark[t * s->per_thread + i], 0); /* no duplicate */
	s->mark[t * s->per_thread + i] = 1;
	s->records++;
}

/* Many records from several threads: every line parses, none lost, order per thread. */
static void test_many_records(void **state)
{
	enum { THREADS = 4, PER = 25000 };
	char *f = tpath("many.jsonl");
	struct emitter e[THREADS];
	struct seen s = {.threads = THREADS, .per_thread = PER};
	struct jf_audit_stats st;
	pthread_t t[THREADS];
	_cleanup_free_ char *text = NULL;
	size_t len;

	unlink(f);
	start_or_fail(f, JF_AUDIT_ALL, false, 1u << 20);
	for (int i = 0; i < THREADS; i++) {
		e[i] = (struct emitter){.id = i, .n = PER};
		assert_int_equal(pthread_create(&t[i], NULL, emit_many, &e[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	jf_audit_stop(); /* flushes everything */
	jf_audit_get_stats(&st);
	assert_int_equal(st.queued, THREADS * PER);
	assert_int_equal(st.written, THREADS * PER);
	assert_int_equal(st.dropped, 0);

	text = tu_slurp(f, &len);
	s.mark = calloc(THREADS * PER, 1);
	assert_int_equal(parse_lines(text, len, mark_seen, &s), THREADS * PER);
	assert_int_equal(s.records, THREADS * PER);
	assert_int_equal(s.dropped, 0);
	free(s.mark);
}

struct fifo_reader {
	int fd;
	char *buf;
	size_t len, cap;
};

static void *drain_fifo(void *arg)
{
	struct fifo_reader *r = arg;
	ssize_t n;

	for (;;) {
		if (r->len + 65536 > r->cap) {
			r->cap = (r->cap + 65536) * 2;
			r->buf = realloc(r->buf, r->cap);
		}
		n = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (n <= 0)
			break;
		r->len += (size_t)n;
	}
	return NULL;
}

/*
 * Forced overflow: the file is a FIFO nobody reads, so the writer blocks in
 * write(2) once the pipe buffer is full; a ring of 8 records then overflows.
 * Records in the file plus the "dropped" counts must equal what was emitted.
 */
static void test_overflow_exact_count(void **state)
{
	enum { N = 3000 };
	char *f = tpath("fifo");
	struct fifo_reader r = {0};
	struct seen s = {.threads = 1, .per_thread = N};
	struct emitter e = {.id = 0, .n = N};
	struct jf_audit_stats st;
	pthread_t t;

	unlink(f);
	assert_int_equal(mkfifo(f, 0600), 0);
	r.fd = open(f, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(r.fd >= 0);
	assert_true(fcntl(r.fd, F_SETPIPE_SZ, 4096) >= 4096);
	start_or_fail(f, JF_AUDIT_ALL, false, 8);
	emit_many(&e); /* the ring fills while the writer is stuck */
	jf_audit_get_stats(&st);
	assert_true(st.dropped > 0);
	assert_int_equal(st.queued + st.dropped, N);

	assert_int_equal(fcntl(r.fd, F_SETFL, 0), 0); /* blocking reads until EOF */
	assert_int_equal(pthread_create(&t, NULL, drain_fifo, &r), 0);
	jf_audit_stop();
	pthread_join(t, NULL);
	close(r.fd);

	s.mark = calloc(N, 1);
	parse_lines(r.buf, r.len, mark_seen, &s);
	assert_int_equal(s.dropped, st.dropped);
	assert_int_equal(s.records + s.dropped, N);
	free(s.mark);
	free(r.buf);
}

static void wait_written(uint64_t n)
{
	struct jf_audit_stats st;

	for (int i = 0; i < 5000; i++) {
		jf_audit_get_stats(&st);
		if (st.written >= n)
			return;
		usleep(1000);
	}
	fail_msg("writer did not write %llu records", (unsigned long long)n);
}

static void count_lines_with(json_t *o, void *ctx)
{
	int *range = ctx; /* [lo, hi): records of that range; range[2] counts */
	int t, i;

	assert_int_equal(sscanf(sget(o, "path"), "t%d/file-%d", &t, &i), 2);
	assert_true(i >= range[0] && i < range[1]);
	range[2]++;
}

/* logrotate: rename the file, SIGHUP (here: the call the handler makes). */
static void test_reopen_after_rename(void **state)
{
	enum { N = 1000 };
	char *f = tpath("rot.jsonl"), *f1 = tpath("rot.jsonl.1");
	struct emitter e = {.id = 0, .n = N};
	_cleanup_free_ char *old = NULL, *cur = NULL;
	struct seen s = {.threads = 1, .per_thread = 2 * N};
	size_t lo, lc;
	int r_old[3] = {0, N, 0}, r_new[3] = {N, 2 * N, 0};

	unlink(f);
	unlink(f1);
	start_or_fail(f, JF_AUDIT_ALL, false, 0);
	emit_many(&e);
	wait_written(N);
	assert_int_equal(rename(f, f1), 0);
	jf_audit_request_reopen();
	for (int i = N; i < 2 * N; i++) {
		char path[64];
		struct jf_audit_event ev = ev_simple("lookup", path);

		snprintf(path, sizeof(path), "t0/file-%d", i);
		jf_audit_emit(&ev);
	}
	jf_audit_stop();

	old = tu_slurp(f1, &lo);
	cur = tu_slurp(f, &lc);
	assert_int_equal(parse_lines(old, lo, count_lines_with, r_old), N);
	assert_int_equal(parse_lines(cur, lc, count_lines_with, r_new), N);
	s.mark = calloc(2 * N, 1);
	parse_lines(old, lo, mark_seen, &s);
	parse_lines(cur, lc, mark_seen, &s);
	assert_int_equal(s.records, 2 * N);
	free(s.mark);
}

/* Reopen requested from a real signal handler while threads emit. */
static void on_hup(int sig)
{
	(void)sig;
	jf_audit_request_reopen();
}

static void test_reopen_signal_under_load(void **state)
{
	enum { THREADS = 2, PER = 20000 };
	char *f = tpath("hup.jsonl"), *f1 = tpath("hup.jsonl.1"), *f2 = tpath("hup.jsonl.2");
	struct emitter e[THREADS];
	struct seen s = {.threads = THREADS, .per_thread = PER};
	struct sigaction sa = {.sa_handler = on_hup}, old_sa;
	pthread_t t[THREADS];
	char *files[3] = {f2, f1, f};

	unlink(f);
	unlink(f1);
	unlink(f2);
	sigaction(SIGHUP, &sa, &old_sa);
	start_or_fail(f, JF_AUDIT_ALL, false, 1u << 20);
	for (int i = 0; i < THREADS; i++) {
		e[i] = (struct emitter){.id = i, .n = PER};
		assert_int_equal(pthread_create(&t[i], NULL, emit_many, &e[i]), 0);
	}
	usleep(2000);
	assert_int_equal(rename(f, f1), 0);
	raise(SIGHUP);
	usleep(2000);
	assert_int_equal(rename(f, f2) == 0 || errno == ENOENT, 1);
	raise(SIGHUP);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	jf_audit_stop();
	sigaction(SIGHUP, &old_sa, NULL);

	s.mark = calloc(THREADS * PER, 1);
	for (int i = 0; i < 3; i++) {
		size_t len;
		_cleanup_free_ char *text = NULL;

		if (access(files[i], F_OK) != 0)
			continue;
		text = tu_slurp(files[i], &len);
		parse_lines(text, len, mark_seen, &s);
	}
	assert_int_equal(s.records, THREADS * PER);
	assert_int_equal(s.dropped, 0);
	free(s.mark);
}

/* --audit-sync: when emit returns, the record is in the file. */
static void test_sync_written_on_return(void **state)
{
	char *f = tpath("sync.jsonl");
	char path[64];
	struct stat st;
	off_t size = 0;

	unlink(f);
	start_or_fail(f, JF_AUDIT_DENIED, true, 4);
	for (int i = 0; i < 300; i++) {
		struct jf_audit_event ev = ev_simple("lookup", path);
		_cleanup_free_ char *text = NULL;
		size_t len;

		snprintf(path, sizeof(path), "secret-%d.pem", i);
		ev.decision = JF_AUDIT_HIDE;
		jf_audit_emit(&ev);
		assert_int_equal(stat(f, &st), 0);
		assert_true(st.st_size > size);
		size = st.st_size;
		if (i % 50 == 0) {
			text = tu_slurp(f, &len);
			assert_int_equal(parse_lines(text, len, NULL, NULL), i + 1);
			assert_non_null(strstr(text, path));
		}
	}
	jf_audit_stop();
}

/*
 * SIGKILL: a child emits in sync mode from 3 threads and acknowledges each
 * record through a pipe once emit returned (as the daemon replies to FUSE).
 * After SIGKILL every acknowledged record is in the file, every line whole.
 */
static int ack_fd;

static void *sync_emitter(void *arg)
{
	int id = (int)(intptr_t)arg;
	char path[64];

	for (int i = 0;; i++) {
		struct jf_audit_event ev = ev_simple("create", path);
		int32_t ack = id * 1000000 + i;

		snprintf(path, sizeof(path), "t%d/file-%d", id, i);
		ev.mutation = true;
		jf_audit_emit(&ev);
		if (write(ack_fd, &ack, sizeof(ack)) != sizeof(ack))
			_exit(3);
	}
	return NULL;
}

static void run_kill_test(bool sync)
{
	enum { THREADS = 3, MAXPER = 1000000 };
	char *f = tpath(sync ? "kill-sync.jsonl" : "kill-async.jsonl");
	struct seen s = {.threads = THREADS, .per_thread = MAXPER};
	_cleanup_free_ char *text = NULL;
	int pfd[2], status;
	size_t acks = 0, len, missing = 0;
	int32_t ack;
	pid_t pid;

	unlink(f);
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pthread_t t;

		close(pfd[0]);
		ack_fd = pfd[1];
		start_or_fail(f, JF_AUDIT_ALL, sync, 64);
		for (intptr_t i = 0; i < THREADS; i++)
			pthread_create(&t, NULL, sync_emitter, (void *)i);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	s.mark = calloc((size_t)THREADS * MAXPER, 1);
	unsigned char *acked = calloc((size_t)THREADS * MAXPER, 1);
	while (read(pfd[0], &ack, sizeof(ack)) == sizeof(ack)) {
		acked[(ack / 1000000) * MAXPER + ack % 1000000] = 1;
		if (++acks == 20000)
			kill(pid, SIGKILL);
	}
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	text = tu_slurp(f, &len);
	parse_lines(text, len, mark_seen, &s); /* fails on a torn line */
	for (size_t i = 0; i < (size_t)THREADS * MAXPER; i++)
		if (acked[i] && !s.mark[i])
			missing++;
	if (sync)
		assert_int_equal(missing, 0);
	assert_true(acks >= 20000);
	print_message("kill %s: %zu acknowledged, %zu lines, %zu acknowledged not in file\n",
		      sync ? "sync" : "async", acks, s.records, missing);
	free(acked);
	free(s.mark);
}

static void test_sigkill_sync_loses_no_ack(void **state)
{
	run_kill_test(true);
}

static void test_sigkill_async_no_torn_line(void **state)
{
	run_kill_test(false);
}

static void test_start_errors(void **state)
{
	struct jf_audit_config cfg = {.path = "/nonexistent-dir/x.jsonl", .level = JF_AUDIT_ALL};

	assert_int_equal(jf_audit_start(&cfg), -ENOENT);
	assert_false(jf_audit_wants(JF_AUDIT_DENY, false));
	cfg.path = NULL;
	assert_int_equal(jf_audit_start(&cfg), -EINVAL); /* no file, no syslog */
	cfg.path = tpath("busy.jsonl");
	assert_int_equal(jf_audit_start(&cfg), 0);
	assert_int_equal(jf_audit_start(&cfg), -EBUSY);
	jf_audit_stop();
	jf_audit_stop(); /* idempotent */
	cfg.level = JF_AUDIT_OFF;
	assert_int_equal(jf_audit_start(&cfg), 0); /* off: nothing started */
	assert_false(jf_audit_wants(JF_AUDIT_DENY, true));
	jf_audit_stop();
}

/* Syslog only (no file): records go out, nothing is dropped. Whether they
 * reach a journal depends on the host; the counters say they were sent. */
static void test_syslog_only(void **state)
{
	struct jf_audit_config cfg = {.level = JF_AUDIT_DENIED, .syslog = true, .sync = true};
	struct jf_audit_event ev = ev_simple("lookup", "test-audit/syslog-probe.pem");
	struct jf_audit_stats st;

	ev.decision = JF_AUDIT_HIDE;
	assert_int_equal(jf_audit_start(&cfg), 0);
	for (int i = 0; i < 3; i++)
		jf_audit_emit(&ev);
	jf_audit_get_stats(&st);
	assert_int_equal(st.written, 3); /* sync: sent before emit returned */
	jf_audit_stop();
	jf_audit_get_stats(&st);
	assert_int_equal(st.queued, 3);
	assert_int_equal(st.dropped, 0);
}

/* The file is created 0600 and appended to, never truncated. */
static void test_append_mode(void **state)
{
	char *f = tpath("append.jsonl");
	struct jf_audit_event ev = ev_simple("lookup", "x");
	_cleanup_free_ char *text = NULL;
	struct stat st;
	size_t len;

	unlink(f);
	for (int round = 0; round < 2; round++) {
		start_or_fail(f, JF_AUDIT_ALL, false, 0);
		jf_audit_emit(&ev);
		jf_audit_stop();
	}
	assert_int_equal(stat(f, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	text = tu_slurp(f, &len);
	assert_int_equal(parse_lines(text, len, NULL, NULL), 2);
}

/* ---- jailfs --audit-report ---- */

static int run_capture(const char *cmd, char **out)
{
	FILE *p = popen(cmd, "r");
	size_t cap = 65536, n = 0, r;
	int status;

	assert_non_null(p);
	*out = malloc(cap);
	while ((r = fread(*out + n, 1, cap - n - 1, p)) > 0) {
		n += r;
		if (n + 1 == cap)
			*out = realloc(*out, cap *= 2);
	}
	(*out)[n] = '\0';
	status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* `jailfs --audit-report` over a log file @name of the temporary directory
 * holding @log: its output (stdout and stderr; the caller frees it), after
 * asserting exit status 0. */
static char *report_of(const char *name, const char *log)
{
	const char *jailfs = getenv("JAILFS");
	char *f = tpath(name), *out = NULL;
	char cmd[PATH_MAX * 2];
	FILE *w;

	assert_non_null(jailfs);
	w = fopen(f, "we");
	assert_non_null(w);
	fputs(log, w);
	fclose(w);
	snprintf(cmd, sizeof(cmd), "'%s' --audit-report '%s' 2>&1", jailfs, f);
	assert_int_equal(run_capture(cmd, &out), 0);
	print_message("%s", out);
	return out;
}

/* 11 lines: 8 records, 1 "dropped", 1 bad line (4), a torn last line (11). */
static const char report_input[] =
	"{\"ts\":\"2026-11-30T05:50:01.000001Z\",\"op\":\"lookup\",\"path\":\".env\","
	"\"zone\":\"DENIED\",\"decision\":\"hide\",\"errno\":\"ENOENT\","
	"\"rule\":\"profile:secrets\",\"pid\":10,\"uid\":1,\"comm\":\"cat\"}\n"
	"{\"ts\":\"2026-11-30T05:50:01.000002Z\",\"op\":\"lookup\",\"path\":\"id_rsa\","
	"\"zone\":\"DENIED\",\"decision\":\"hide\",\"errno\":\"ENOENT\","
	"\"rule\":\"profile:secrets\",\"pid\":10,\"uid\":1,\"comm\":\"cat\"}\n"
	"{\"ts\":\"2026-11-30T05:50:01.000003Z\",\"op\":\"unlink\",\"path\":\"Makefile\","
	"\"zone\":\"RESTRICTED\",\"decision\":\"deny\",\"errno\":\"EROFS\","
	"\"rule\":\"policy.ini:4\",\"pid\":11,\"uid\":1,\"comm\":\"rm\"}\n"
	"this is not json\n"
	"{\"ts\":\"2026-11-30T05:50:01.000004Z\",\"op\":\"create\",\"path\":\"out.o\","
	"\"zone\":\"SAFE\",\"decision\":\"allow\",\"rule\":\"default\",\"pid\":12,\"uid\":1,"
	"\"comm\":\"cc\"}\n"
	"{\"ts\":\"2026-11-30T05:50:01.000005Z\",\"op\":\"release\",\"path\":\"out.o\","
	"\"zone\":\"SAFE\",\"decision\":\"allow\",\"rule\":\"default\",\"pid\":0,\"uid\":1,"
	"\"bytes_read\":0,\"bytes_written\":4096}\n"
	"{\"ts\":\"2026-11-30T05:50:01.000006Z\",\"op\":\"rename\",\"path\":\"a.tmp\","
	"\"path2\":\"a.txt\",\"zone\":\"SAFE\",\"decision\":\"allow\",\"rule\":\"default\","
	"\"pid\":13,\"uid\":1,\"comm\":\"mv\"}\n"
	"{\"ts\":\"2026-11-30T05:50:01.000007Z\",\"op\":\"create\",\"path\":\"out.o\","
	"\"zone\":\"SAFE\",\"decision\":\"allow\",\"rule\":\"default\",\"pid\":12,\"uid\":1,"
	"\"comm\":\"cc\"}\n"
	"{\"ts\":\"2026-11-30T05:50:01.000008Z\",\"op\":\"dropped\",\"count\":5}\n"
	"{\"ts\":\"2026-11-30T05:50:01.000009Z\",\"op\":\"lookup\",\"path\":\"src\","
	"\"zone\":\"SAFE\",\"decision\":\"allow\",\"rule\":\"default\",\"pid\":12,\"uid\":1,"
	"\"comm\":\"cc\"}\n"
	"{\"ts\":\"2026-11-30T05:50:01.000010Z\",\"op\":\"look"; /* torn last line */

static void test_report_known_file(void **state)
{
	_cleanup_free_ char *out = report_of("report.jsonl", report_input);

	/* Records, bad and torn lines, dropped. */
	assert_non_null(strstr(out, "records: 8\n"));
	assert_non_null(strstr(out, "time span: 2026-11-30T05:50:01.000001Z .. "
				    "2026-11-30T05:50:01.000009Z\n"));
	assert_non_null(strstr(out, "bad lines: 1 (first at line 4)\n"));
	assert_non_null(strstr(out, "torn last line: yes (line 11)\n"));
	assert_non_null(strstr(out, "dropped by the daemon (queue full): 5 (in 1 dropped "
				    "records)\n"));
	/* Per op and decision. */
	assert_non_null(strstr(out, "  lookup                 1      0      2      3\n"
				    "  create                 2      0      0      2\n"
				    "  release                1      0      0      1\n"
				    "  rename                 1      0      0      1\n"
				    "  unlink                 0      1      0      1\n"
				    "  total                  5      1      2      8\n"));
	/* Denied and hidden, by rule and by process. */
	assert_non_null(strstr(out, "by rule:\n      2  profile:secrets\n      1  policy.ini:4\n"));
	assert_non_null(strstr(out, "by process:\n      2  cat (pid 10)\n      1  rm (pid 11)\n"));
	/* Written paths: out.o two creates and 4096 bytes; rename counts both names. */
	assert_non_null(strstr(out, "      2        4096  out.o\n"
				    "      1           0  a.tmp\n"
				    "      1           0  a.txt\n"));
	/* lookup of src (allowed, not a write) is in no ranking. */
	assert_null(strstr(out, "  src\n"));
}

/* Paths, process names and ops from the log reach the terminal escaped
 * (jf_escape): C0, C1 (U+009B CSI) and bidi overrides (U+202E) as \xHH. */
static void test_report_escapes(void **state)
{
	static const char in[] =
		"{\"ts\":\"2026-11-30T05:50:01.000001Z\",\"op\":\"create\","
		"\"path\":\"w/a\\u001b[2Jb\\u009b31mc\\u202etxt.exe\\u2066d\\\\e\","
		"\"zone\":\"SAFE\",\"decision\":\"allow\",\"rule\":\"default\",\"pid\":10,"
		"\"uid\":1,\"comm\":\"cc\"}\n"
		"{\"ts\":\"2026-11-30T05:50:01.000002Z\",\"op\":\"mk\\u009bdir\","
		"\"path\":\"x\",\"zone\":\"DENIED\",\"decision\":\"deny\",\"errno\":\"EACCES\","
		"\"rule\":\"r\\u202e1\",\"pid\":11,\"uid\":1,\"comm\":\"ev\\u202eil\"}\n";
	_cleanup_free_ char *out = report_of("report-esc.jsonl", in);

	assert_non_null(strstr(out, "records: 2\n"));
	assert_non_null(strstr(out, "  w/a\\x1b[2Jb\\xc2\\x9b31mc\\xe2\\x80\\xaetxt.exe"
				    "\\xe2\\x81\\xa6d\\x5ce\n"));
	assert_non_null(strstr(out, "      1  ev\\xe2\\x80\\xaeil (pid 11)\n"));
	assert_non_null(strstr(out, "      1  r\\xe2\\x80\\xae1\n"));
	assert_non_null(strstr(out, "  mk\\xc2\\x9bdir  "));
	/* nothing unsafe reaches the terminal raw */
	assert_null(strchr(out, '\x1b'));
	assert_null(strstr(out, "\xc2\x9b"));
	assert_null(strstr(out, "\xe2\x80\xae"));
	assert_null(strstr(out, "\xe2\x81\xa6"));
}

/* The bounds' records: suppressed counts per process, the capped record's
 * counts (the last, rewritten in place), the executable beside the name. */
static void test_report_bounds(void **state)
{
	static const char in[] =
		"{\"ts\":\"2026-11-30T05:50:01.000001Z\",\"op\":\"lookup\",\"path\":\".env\","
		"\"zone\":\"DENIED\",\"decision\":\"hide\",\"errno\":\"ENOENT\","
		"\"rule\":\"profile:secrets\",\"pid\":10,\"uid\":1,\"comm\":\"git\","
		"\"exe\":\"/tmp/x/git\"}\n"
		"{\"ts\":\"2026-11-30T05:50:01.000002Z\",\"op\":\"suppressed\",\"pid\":10,"
		"\"uid\":1,\"comm\":\"git\",\"exe\":\"/tmp/x/git\",\"count\":41,"
		"\"by_decision\":{\"allow\":1,\"deny\":0,\"hide\":40},"
		"\"since\":\"2026-11-30T05:50:01.000001Z\","
		"\"until\":\"2026-11-30T05:50:01.000002Z\"}\n"
		"{\"ts\":\"2026-11-30T05:50:01.000003Z\",\"op\":\"lookup\",\"path\":\".ssh\","
		"\"zone\":\"DENIED\",\"decision\":\"hide\",\"errno\":\"ENOENT\","
		"\"rule\":\"profile:secrets\",\"pid\":11,\"uid\":1,\"gone\":true}\n"
		"{\"ts\":\"2026-11-30T05:50:01.000004Z\",\"op\":\"capped\",\"max_size\":4096    ,"
		"\"count\":9   ,\"by_decision\":{\"allow\":2 ,\"deny\":3 ,\"hide\":4 },"
		"\"dropped\":0 ,\"until\":\"2026-11-30T05:50:01.000004Z\"  }\n";
	_cleanup_free_ char *out = report_of("report-bounds.jsonl", in);

	assert_non_null(strstr(out, "records: 2\n"));
	assert_non_null(strstr(out, "bad lines: 0\n"));
	assert_non_null(
		strstr(out, "suppressed by the rate limit: 41 (in 1 suppressed records)\n"));
	assert_non_null(strstr(out, "size cap reached: yes, at 4096 bytes: 9 not written (allow 2, "
				    "deny 3, hide 4, dropped 0)\n"));
	assert_non_null(strstr(out, "     41  git (pid 10) /tmp/x/git\n"));
	assert_non_null(strstr(out, "      1  ? (pid 11) [exited]\n"));
}

static void test_report_errors(void **state)
{
	const char *jailfs = getenv("JAILFS");
	char cmd[PATH_MAX * 2];
	_cleanup_free_ char *out = NULL, *out2 = NULL, *out3 = NULL;

	assert_non_null(jailfs);
	snprintf(cmd, sizeof(cmd), "'%s' --audit-report '%s' 2>&1", jailfs,
		 tpath("does-not-exist.jsonl"));
	assert_int_equal(run_capture(cmd, &out), 2);
	assert_non_null(strstr(out, tpath("does-not-exist.jsonl")));
	assert_non_null(strstr(out, "No such file or directory"));

	snprintf(cmd, sizeof(cmd), "'%s' --audit-report --help 2>&1", jailfs);
	assert_int_equal(run_capture(cmd, &out2), 0);
	assert_non_null(strstr(out2, "--audit-report"));

	snprintf(cmd, sizeof(cmd), "'%s' --audit-report 2>&1", jailfs);
	assert_int_equal(run_capture(cmd, &out3), 2);
}

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_level),
		cmocka_unit_test(test_wants_per_level),
		cmocka_unit_test(test_level_filtering_in_file),
		cmocka_unit_test(test_format_exact_line),
		cmocka_unit_test(test_format_fields),
		cmocka_unit_test(test_format_ts),
		cmocka_unit_test(test_format_escaping),
		cmocka_unit_test(test_format_worst_case),
		cmocka_unit_test(test_op_is_write),
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_format_bounds),
		cmocka_unit_test(test_parse_rate),
		cmocka_unit_test(test_rate_limit),
		cmocka_unit_test(test_rate_per_process),
		cmocka_unit_test(test_rate_summary_in_time),
		cmocka_unit_test(test_size_cap),
		cmocka_unit_test(test_many_records),
		cmocka_unit_test(test_overflow_exact_count),
		cmocka_unit_test(test_reopen_after_rename),
		cmocka_unit_test(test_reopen_signal_under_load),
		cmocka_unit_test(test_sync_written_on_return),
		cmocka_unit_test(test_sigkill_sync_loses_no_ack),
		cmocka_unit_test(test_sigkill_async_no_torn_line),
		cmocka_unit_test(test_start_errors),
		cmocka_unit_test(test_append_mode),
		cmocka_unit_test(test_syslog_only),
		cmocka_unit_test(test_report_known_file),
		cmocka_unit_test(test_report_escapes),
		cmocka_unit_test(test_report_bounds),
		cmocka_unit_test(test_report_errors),
	};

	return cmocka_run_group_tests_name("audit", tests, setup, teardown);
}
