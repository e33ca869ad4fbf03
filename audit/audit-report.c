/* SPDX-License-Identifier: MIT */
/*
 * jailfs --audit-report FILE: a human summary of an audit log (JSON Lines,
 * schema in docs/audit.md). Each line is parsed with jansson; lines
 * that do not parse (a torn last line after a crash, a hand-edited file) are
 * counted and reported, never fatal. Counts are kept in jansson objects used
 * as string maps.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "audit-read.h"
#include "audit-report.h"
#include "audit.h"
#include "cleanup.h"
#include "net-changes.h"
#include "text.h"

#define TOP_DEFAULT 20

enum { COL_ALLOW, COL_DENY, COL_HIDE, COL_N };

struct report {
	size_t records, bad, first_bad, lines;
	bool torn;
	size_t torn_line;
	uint64_t dropped, dropped_lines;
	uint64_t suppressed, suppressed_lines; /* the rate limit's summaries */
	bool capped;			       /* the file reached its size cap */
	json_int_t cap_max, cap_count, cap_by[COL_N], cap_dropped;
	char *first_ts, *last_ts;
	json_t *ops;	 /* op -> [allow, deny, hide] */
	json_t *rules;	 /* rule -> count of deny + hide */
	json_t *procs;	 /* "comm (pid N) EXE" -> count of deny + hide */
	json_t *written; /* path -> [ops, bytes_written] */
	struct jf_net_changes *net;
	int net_err; /* the first error of jf_net_add, or 0 */
};

static void usage(FILE *out)
{
	fputs("Usage: jailfs --audit-report [--top N] FILE\n"
	      "\n"
	      "Summarize an audit log written by `jailfs --audit FILE` (JSON Lines):\n"
	      "  - records per op and decision (allow, deny, hide);\n"
	      "  - denied and hidden attempts grouped by the deciding rule, and by\n"
	      "    process (comm, pid and the executable's path; the name alone is the\n"
	      "    process's own claim);\n"
	      "  - the most written paths: allowed create, write, unlink, rename, setattr...\n"
	      "    records (both names of a rename) and bytes_written from release records;\n"
	      "  - the net changes by final path, renames and unlinks followed: A created,\n"
	      "    M modified, D deleted, R renamed, W put in place by a rename over a name\n"
	      "    the log says nothing else of (needs audit level writes or all);\n"
	      "  - records the daemon dropped (queue full), left out by the rate limit\n"
	      "    (counted in suppressed records) or did not write because the file\n"
	      "    reached its size cap (counted in the capped record), lines that are\n"
	      "    not valid records, and a torn last line (the daemon was killed\n"
	      "    mid-write).\n"
	      "\n"
	      "FILE may be - for standard input. For anything finer, use jq on the file:\n"
	      "see docs/audit.md (installed in share/doc/jailfs).\n"
	      "\n"
	      "Options:\n"
	      "  --top N     show N rows in each ranking (default 20, 0 = all)\n"
	      "  -h, --help  show this help\n"
	      "\n"
	      "Exit status: 0 report printed (even with bad lines), 2 usage error or\n"
	      "FILE unreadable.\n",
	      out);
}

/* map[key] += by, for a map of integers. */
static void bump(json_t *map, const char *key, json_int_t by)
{
	json_t *v = json_object_get(map, key);

	if (v)
		json_integer_set(v, json_integer_value(v) + by);
	else
		json_object_set_new(map, key, json_integer(by));
}

/* map[key][col] += by, for a map of fixed-size integer arrays. */
static void bump_col(json_t *map, const char *key, size_t ncols, size_t col, json_int_t by)
{
	json_t *a = json_object_get(map, key);
	json_t *v;

	if (!a) {
		a = json_array();
		for (size_t i = 0; i < ncols; i++)
			json_array_append_new(a, json_integer(0));
		json_object_set_new(map, key, a);
	}
	v = json_array_get(a, col);
	json_integer_set(v, json_integer_value(v) + by);
}

static void note_ts(struct report *r, const char *ts)
{
	if (!ts)
		return;
	if (!r->first_ts || strcmp(ts, r->first_ts) < 0) {
		free(r->first_ts);
		r->first_ts = strdup(ts);
	}
	if (!r->last_ts || strcmp(ts, r->last_ts) > 0) {
		free(r->last_ts);
		r->last_ts = strdup(ts);
	}
}

static void note_written(struct report *r, json_t *o, const char *op)
{
	const char *path = jf_audit_str(o, "path"), *path2 = jf_audit_str(o, "path2");

	if (strcmp(op, "release") == 0) {
		if (path && jf_audit_num(o, "bytes_written") > 0)
			bump_col(r->written, path, 2, 1, jf_audit_num(o, "bytes_written"));
		return;
	}
	if (!jf_audit_op_is_write(op))
		return;
	/* link: the new name is written; the source only gains a link count. */
	if (path && strcmp(op, "link") != 0)
		bump_col(r->written, path, 2, 0, 1);
	if (path2)
		bump_col(r->written, path2, 2, 0, 1);
}

/* The by_decision counts of a summary record into @n (absent: 0). */
static void by_decision(json_t *o, json_int_t n[COL_N])
{
	json_t *b = json_object_get(o, "by_decision");

	n[COL_ALLOW] = jf_audit_num(b, "allow");
	n[COL_DENY] = jf_audit_num(b, "deny");
	n[COL_HIDE] = jf_audit_num(b, "hide");
}

/* map[who asked] += by: "comm (pid N)", then the executable when recorded
 * (the name is the process's own claim, the path is the kernel's). */
static void bump_proc(struct report *r, json_t *o, json_int_t by)
{
	const char *comm = jf_audit_str(o, "comm"), *exe = jf_audit_str(o, "exe");
	char proc[PATH_MAX + 64];

	snprintf(proc, sizeof(proc), "%s (pid %lld)%s%s", comm ? comm : "?",
		 (long long)jf_audit_num(o, "pid"), exe ? " " : "",
		 exe					    ? exe
		 : json_is_true(json_object_get(o, "gone")) ? " [exited]"
							    : "");
	bump(r->procs, proc, by);
}

/* The bounds' records: "suppressed" (rate limit) and "capped" (size cap).
 * False when @op is neither. */
static bool add_bound(struct report *r, json_t *o, const char *op)
{
	json_int_t n[COL_N];

	if (strcmp(op, "suppressed") == 0) {
		by_decision(o, n);
		r->suppressed += (uint64_t)jf_audit_num(o, "count");
		r->suppressed_lines++;
		if (n[COL_DENY] + n[COL_HIDE])
			bump_proc(r, o, n[COL_DENY] + n[COL_HIDE]);
		return true;
	}
	if (strcmp(op, "capped") == 0) {
		/* rewritten in place as it counts: one per file, the last wins */
		r->capped = true;
		r->cap_max = jf_audit_num(o, "max_size");
		r->cap_count = jf_audit_num(o, "count");
		r->cap_dropped = jf_audit_num(o, "dropped");
		by_decision(o, r->cap_by);
		return true;
	}
	return false;
}

/* Account one parsed line; false when it is not an audit record. */
static bool add_record(struct report *r, json_t *o)
{
	const char *op = jf_audit_str(o, "op"), *decision = jf_audit_str(o, "decision");
	int col;

	if (!json_is_object(o) || !op)
		return false;
	note_ts(r, jf_audit_str(o, "ts"));
	if (!r->net_err)
		r->net_err = jf_net_add(r->net, o);
	if (strcmp(op, "dropped") == 0) {
		r->dropped += (uint64_t)jf_audit_num(o, "count");
		r->dropped_lines++;
		return true;
	}
	if (add_bound(r, o, op))
		return true;
	if (!decision)
		return false;
	if (strcmp(decision, "allow") == 0)
		col = COL_ALLOW;
	else if (strcmp(decision, "deny") == 0)
		col = COL_DENY;
	else if (strcmp(decision, "hide") == 0)
		col = COL_HIDE;
	else
		return false;
	r->records++;
	bump_col(r->ops, op, COL_N, (size_t)col, 1);
	if (col == COL_ALLOW) {
		note_written(r, o, op);
		return true;
	}
	bump(r->rules, jf_audit_str(o, "rule") ? jf_audit_str(o, "rule") : "(none)", 1);
	bump_proc(r, o, 1);
	return true;
}

static int take_line(const struct jf_audit_line *l, void *arg)
{
	struct report *r = arg;

	r->lines++;
	if (l->rec && add_record(r, l->rec))
		return 0;
	if (!l->complete) {
		r->torn = true;
		r->torn_line = r->lines;
	} else if (!l->blank) {
		if (!r->bad)
			r->first_bad = r->lines;
		r->bad++;
	}
	return 0;
}

/* Print @s for a terminal (jf_escape): a file name or a process name cannot
 * carry escape sequences or reordering to the reader's terminal. */
static void print_safe(const char *s)
{
	jf_fput_escaped(stdout, s, strlen(s));
}

struct row {
	const char *key;
	json_int_t a, b;
};

static int row_cmp(const void *x, const void *y)
{
	const struct row *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? 1 : -1;
	if (p->b != q->b)
		return p->b < q->b ? 1 : -1;
	return strcmp(p->key, q->key);
}

/* Rows of @map sorted by count descending, then key. A value may be a count,
 * [ops, bytes] (sorted by ops, then bytes) or, with @sum, an array whose total
 * is the count. */
static struct row *sorted_rows(json_t *map, bool sum, size_t *n)
{
	struct row *rows = calloc(json_object_size(map) + 1, sizeof(*rows));
	const char *key;
	json_t *v;

	*n = 0;
	if (!rows)
		return NULL;
	json_object_foreach(map, key, v)
	{
		struct row *w = &rows[(*n)++];

		w->key = key;
		if (sum) {
			for (size_t k = 0; k < json_array_size(v); k++)
				w->a += json_integer_value(json_array_get(v, k));
		} else if (json_is_array(v)) {
			w->a = json_integer_value(json_array_get(v, 0));
			w->b = json_integer_value(json_array_get(v, 1));
		} else {
			w->a = json_integer_value(v);
		}
	}
	qsort(rows, *n, sizeof(*rows), row_cmp);
	return rows;
}

static void print_ranking(const char *title, json_t *map, size_t top, bool two_cols)
{
	size_t n, shown;
	_cleanup_free_ struct row *rows = sorted_rows(map, false, &n);

	printf("\n%s:\n", title);
	if (!rows || n == 0) {
		printf("  (none)\n");
		return;
	}
	if (two_cols)
		printf("%7s %11s  %s\n", "ops", "bytes", "path");
	shown = top && top < n ? top : n;
	for (size_t i = 0; i < shown; i++) {
		if (two_cols)
			printf("%7lld %11lld  ", (long long)rows[i].a, (long long)rows[i].b);
		else
			printf("%7lld  ", (long long)rows[i].a);
		print_safe(rows[i].key);
		putchar('\n');
	}
	if (shown < n)
		printf("  ... %zu more\n", n - shown);
}

static void print_ops(struct report *r)
{
	json_int_t tot[COL_N] = {0};
	size_t n;
	_cleanup_free_ struct row *rows = sorted_rows(r->ops, true, &n);

	printf("\nRecords by op and decision:\n");
	printf("  %-16s %7s %6s %6s %6s\n", "op", "allow", "deny", "hide", "total");
	for (size_t i = 0; rows && i < n; i++) {
		json_t *a = json_object_get(r->ops, rows[i].key);
		json_int_t c[COL_N], sum = 0;

		for (int k = 0; k < COL_N; k++) {
			c[k] = json_integer_value(json_array_get(a, (size_t)k));
			tot[k] += c[k];
			sum += c[k];
		}
		char op[17];

		/* ops come from the file: escaped like paths, cut to the column */
		jf_escape(op, sizeof(op), rows[i].key, strlen(rows[i].key));
		printf("  %-16s %7lld %6lld %6lld %6lld\n", op, (long long)c[0], (long long)c[1],
		       (long long)c[2], (long long)sum);
	}
	printf("  %-16s %7lld %6lld %6lld %6lld\n", "total", (long long)tot[0], (long long)tot[1],
	       (long long)tot[2], (long long)(tot[0] + tot[1] + tot[2]));
}

/* "A  path", "R  from -> path": git status --short's letters, plus W. */
static void print_net(struct report *r)
{
	static const char letter[] = {
		[JF_NET_CREATED] = 'A', [JF_NET_MODIFIED] = 'M', [JF_NET_DELETED] = 'D',
		[JF_NET_RENAMED] = 'R', [JF_NET_WRITTEN] = 'W',
	};
	const struct jf_net_change *c = NULL;
	size_t n = 0;
	int err = r->net_err ? r->net_err : jf_net_list(r->net, &c, &n);

	printf("\nNet changes, by final path:\n");
	if (err < 0) {
		printf("  (unknown: %s)\n", strerror(-err));
		return;
	}
	if (jf_net_incomplete(r->net))
		printf("  incomplete: %s\n", jf_net_incomplete(r->net));
	if (!jf_net_allowed(r->net)) {
		printf("  (none: the log holds no allowed record; level denied records none)\n");
		return;
	}
	if (n == 0)
		printf("  (none)\n");
	for (size_t i = 0; i < n; i++) {
		printf("  %c%c ", letter[c[i].kind], c[i].modified ? 'M' : ' ');
		if (c[i].from) {
			print_safe(c[i].from);
			printf(" -> ");
		}
		print_safe(c[i].path);
		putchar('\n');
	}
}

static void print_report(const char *name, struct report *r, size_t top)
{
	printf("jailfs audit report: ");
	print_safe(name);
	printf("\nrecords: %zu\n", r->records);
	printf("time span: %s .. %s\n", r->first_ts ? r->first_ts : "-",
	       r->last_ts ? r->last_ts : "-");
	printf("dropped by the daemon (queue full): %llu", (unsigned long long)r->dropped);
	if (r->dropped_lines)
		printf(" (in %llu dropped records)", (unsigned long long)r->dropped_lines);
	printf("\nsuppressed by the rate limit: %llu", (unsigned long long)r->suppressed);
	if (r->suppressed_lines)
		printf(" (in %llu suppressed records)", (unsigned long long)r->suppressed_lines);
	printf("\nsize cap reached: ");
	if (r->capped)
		printf("yes, at %lld bytes: %lld not written (allow %lld, deny %lld, hide %lld, "
		       "dropped %lld)",
		       (long long)r->cap_max, (long long)r->cap_count,
		       (long long)r->cap_by[COL_ALLOW], (long long)r->cap_by[COL_DENY],
		       (long long)r->cap_by[COL_HIDE], (long long)r->cap_dropped);
	else
		printf("no");
	printf("\nbad lines: %zu", r->bad);
	if (r->bad)
		printf(" (first at line %zu)", r->first_bad);
	printf("\ntorn last line: ");
	if (r->torn)
		printf("yes (line %zu)\n", r->torn_line);
	else
		printf("no\n");
	print_ops(r);
	print_ranking("Denied and hidden, by rule", r->rules, top, false);
	print_ranking("Denied and hidden, by process", r->procs, top, false);
	print_ranking("Most written paths", r->written, top, true);
	print_net(r);
}

int jf_cmd_audit_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"audit-report", no_argument, NULL, 'R'},
		{"top", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct report r = {0};
	size_t top = TOP_DEFAULT;
	const char *file;
	FILE *in;
	char *end;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'R':
			break;
		case 't':
			errno = 0;
			top = strtoul(optarg, &end, 10);
			if (errno || *end || optarg[0] == '-' || !optarg[0]) {
				fprintf(stderr, "jailfs: --top: not a count: '%s'\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr,
			"jailfs: --audit-report takes one FILE (try --audit-report --help)\n");
		return 2;
	}
	file = argv[optind];
	in = strcmp(file, "-") == 0 ? stdin : fopen(file, "re");
	if (!in) {
		fprintf(stderr, "jailfs: --audit-report: cannot open '%s': %s\n", file,
			strerror(errno));
		return 2;
	}
	r.ops = json_object();
	r.rules = json_object();
	r.procs = json_object();
	r.written = json_object();
	err = jf_net_new(&r.net);
	if (err == 0)
		err = jf_audit_read(in, take_line, &r);
	if (in != stdin)
		fclose(in);
	if (err < 0) {
		fprintf(stderr, "jailfs: --audit-report: cannot read '%s': %s\n", file,
			strerror(-err));
	} else {
		print_report(file, &r, top);
	}
	json_decref(r.ops);
	json_decref(r.rules);
	json_decref(r.procs);
	json_decref(r.written);
	jf_net_free(r.net);
	free(r.first_ts);
	free(r.last_ts);
	return err < 0 ? 2 : 0;
}
