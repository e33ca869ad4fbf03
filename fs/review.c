/* SPDX-License-Identifier: MIT */
/*
 * The review commands over a changes directory DIR (docs/changes-format.md):
 * changes and diff read it; checkpoint, restore, apply and discard change
 * it, or, while a mounted daemon holds DIR/lock, ask that daemon through
 * DIR/control. Exit status: 0 done, 1 a failure or entries left (apply's
 * conflicts and refusals), 2 a usage or policy error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "apply-rule.h"
#include "jailfs.h"
#include "layer.h"
#include "policy.h"
#include "text.h"

static const char usage[] =
	"Usage: jailfs changes DIR [--all] [--policy FILE] [--json] [PATH...]\n"
	"       jailfs diff DIR [--policy FILE] [PATH...]\n"
	"       jailfs apply DIR [--force] [--policy FILE] [--json] [PATH...]\n"
	"       jailfs discard DIR [--json] [PATH...]\n"
	"       jailfs checkpoint DIR [NAME]\n"
	"       jailfs restore DIR CHECKPOINT\n"
	"\n"
	"Review the changes directory DIR of an overlay view (jailfs --changes DIR):\n"
	"list its changes against the source, show them as a unified diff, write\n"
	"them into the source, drop them, or take and restore checkpoints. PATHs\n"
	"are relative to the source's root and select those entries and what lies\n"
	"below them. While DIR is mounted, apply, discard, checkpoint and restore\n"
	"are done by the mounted daemon.\n"
	"\n"
	"Options:\n"
	"  --json              changes, apply, discard: one JSON array on stdout\n"
	"  --all               changes: also the entries whose names the policy\n"
	"                      hides (left out by default, and counted)\n"
	"  --force             apply: also the files changed in the source since\n"
	"                      their copy (conflicts)\n"
	"  -p, --policy FILE   apply: the policy whose SAFE names may be written;\n"
	"                      changes, diff: whose hidden names they leave out (default:\n"
	"                      the one a mount of the source would use)\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 done; 1 a failure, or entries left (conflicts, refusals);\n"
	"2 usage or policy error.\n";

static const char *const commands[] = {"changes", "diff",	"apply",
				       "discard", "checkpoint", "restore"};

bool jf_is_review_cmd(const char *word)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(word, commands[i]))
			return true;
	return false;
}

struct ropts {
	const char *cmd, *dir, *policy;
	bool json, force, all;
	const char *const *args; /* after DIR */
	size_t nargs;
};

/* Options anywhere after the command word (getopt permutes), then DIR
 * and the arguments. */
static int parse(int argc, char **argv, struct ropts *o)
{
	static const struct option longs[] = {
		{"json", no_argument, NULL, 'j'}, {"force", no_argument, NULL, 'f'},
		{"all", no_argument, NULL, 'a'},  {"policy", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'}, {0},
	};
	int c, n = argc - 1;
	char **v = argv + 1;

	o->cmd = argv[1];
	optind = 1;
	while ((c = getopt_long(n, v, "p:h", longs, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = true;
			break;
		case 'f':
			o->force = true;
			break;
		case 'a':
			o->all = true;
			break;
		case 'p':
			o->policy = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			fprintf(stderr, "Try 'jailfs %s --help'.\n", o->cmd);
			return -EINVAL;
		}
	}
	if (optind >= n) {
		fprintf(stderr, "jailfs %s: DIR missing\nTry 'jailfs %s --help'.\n", o->cmd,
			o->cmd);
		return -EINVAL;
	}
	o->dir = v[optind++];
	o->args = (const char *const *)v + optind;
	o->nargs = (size_t)(n - optind);
	return 0;
}

/* Canonical view paths: no leading "./" or "/", no trailing "/". */
static void clean_paths(struct ropts *o)
{
	for (size_t i = 0; i < o->nargs; i++) {
		char *p = (char *)o->args[i];
		size_t n;

		while (p[0] == '.' && p[1] == '/')
			p += 2;
		while (p[0] == '/')
			p++;
		n = strlen(p);
		while (n > 0 && p[n - 1] == '/')
			p[--n] = '\0';
		((const char **)o->args)[i] = p;
	}
}

/* Member @key of @o, a path from the jail, escaped for the terminal: the
 * library escaped it already when it is not UTF-8 (@key_escaped). */
static void put_path(json_t *o, const char *key, const char *key_escaped)
{
	const char *p = json_string_value(json_object_get(o, key));

	if (json_is_true(json_object_get(o, key_escaped)))
		fputs(p, stdout);
	else
		jf_fput_escaped(stdout, p, strlen(p));
}

static void print_change(json_t *o)
{
	const char *st = json_string_value(json_object_get(o, "status"));
	const char *from = json_string_value(json_object_get(o, "from"));
	const char *type = json_string_value(json_object_get(o, "type"));
	const char *otype = json_string_value(json_object_get(o, "old_type"));
	json_int_t size = json_integer_value(json_object_get(o, "size"));
	json_int_t osize = json_integer_value(json_object_get(o, "old_size"));
	json_int_t mode = json_integer_value(json_object_get(o, "mode"));
	json_int_t omode = json_integer_value(json_object_get(o, "old_mode"));
	bool dir = !strcmp(type, "dir");

	/* names come from the jail: escaped for the terminal */
	printf("%s  ", st);
	if (from) {
		put_path(o, "from", "from_escaped");
		fputs(" -> ", stdout);
	}
	put_path(o, "path", "path_escaped");
	printf("%s  %s", dir ? "/" : "", type);
	if (!strcmp(st, "A"))
		printf(", %lld bytes, mode %04llo", (long long)size, (long long)mode);
	else if (!strcmp(st, "D"))
		printf(", was %lld bytes", (long long)osize);
	else if (!strcmp(st, "T"))
		printf(", was %s", otype);
	else if (!dir && (size != osize || json_is_true(json_object_get(o, "content"))))
		printf(", %lld -> %lld bytes", (long long)osize, (long long)size);
	if (strcmp(st, "A") && strcmp(st, "D") && mode != omode)
		printf(", mode %04llo -> %04llo", (long long)omode, (long long)mode);
	if (json_is_true(json_object_get(o, "replaced")))
		fputs(", replaced: the source's entries below are hidden", stdout);
	putchar('\n');
}

/* Prints apply's or discard's report; 1 if anything was left. */
static int print_report(json_t *rep, bool as_json)
{
	size_t i;
	json_t *o;
	int left = 0;

	json_array_foreach(rep, i, o)
	{
		const char *a = json_string_value(json_object_get(o, "action"));
		const char *why = json_string_value(json_object_get(o, "reason"));
		if (strcmp(a, "applied") && strcmp(a, "discarded"))
			left = 1;
		if (!as_json) {
			printf("%s ", a);
			put_path(o, "path", "path_escaped");
			printf("%s%s\n", why ? ": " : "", why ? why : "");
		}
	}
	if (as_json) {
		json_dumpf(rep, stdout, JSON_COMPACT);
		putchar('\n');
	}
	return left;
}

struct safe_ctx {
	struct jf_policy *pol;
	struct jf_layer *l;
};

static bool is_safe(const char *path, void *data)
{
	struct safe_ctx *c = data;
	struct jf_verdict v;

	jf_classify(c->pol, path, strlen(path), jf_layer_is_dir(c->l, path), &v);
	return jf_apply_allowed(c->pol, &v, jf_layer_upper_fd(c->l), path);
}

/* What diff may print: a name the policy does not hide. */
static bool is_shown(const char *path, void *data)
{
	struct safe_ctx *c = data;
	struct jf_verdict v;

	jf_classify(c->pol, path, strlen(path), jf_layer_is_dir(c->l, path), &v);
	return v.zone != JF_DENIED;
}

/* The diff, without what the policy hides: it goes to an agent harness too. */
static int run_diff(struct jf_layer *l, const struct ropts *o, const char *source)
{
	struct safe_ctx c = {NULL, l};
	size_t hidden = 0;
	int r;

	if (jf_load_policy(o->policy, source, false, &c.pol) < 0)
		return 2;
	r = jf_layer_diff(l, o->args, o->nargs, is_shown, &c, stdout, &hidden);
	jf_policy_free(c.pol);
	if (r < 0) {
		fprintf(stderr, "jailfs diff: %s: %s\n", o->dir, strerror(-r));
		return 1;
	}
	if (hidden)
		fprintf(stderr,
			"jailfs diff: %zu %s the policy hides %s not shown (jailfs changes lists "
			"them)\n",
			hidden, hidden == 1 ? "entry" : "entries", hidden == 1 ? "is" : "are");
	return 0;
}

/* The daemon's answer to a request while DIR is mounted: its exit status,
 * or -errno when no daemon answers. */
static int ask_daemon(struct jf_layer *l, const struct ropts *o)
{
	void *reply = NULL;
	int r = jf_layer_request(l, o->cmd, o->args, o->nargs, o->force, &reply);
	json_t *j = reply, *rep;

	if (r < 0)
		return r;
	if (!json_is_true(json_object_get(j, "ok"))) {
		fprintf(stderr, "jailfs %s: %s\n", o->cmd,
			json_string_value(json_object_get(j, "error"))
				? json_string_value(json_object_get(j, "error"))
				: "the daemon refused");
		json_decref(j);
		return 1;
	}
	rep = json_object_get(j, "report");
	r = 0;
	if (json_is_array(rep))
		r = print_report(rep, o->json);
	else if (json_string_value(json_object_get(j, "id")))
		printf("%s\n", json_string_value(json_object_get(j, "id")));
	json_decref(j);
	return r;
}

/*
 * Takes DIR's lock (0), or has the daemon that holds it run the command
 * (*asked, its exit status). A daemon exiting after an unmount still holds
 * the lock for a moment but no longer answers: then the lock is tried again,
 * for up to 5 s. -errno when the lock cannot be taken.
 */
static int lock_or_ask(struct jf_layer *l, const struct ropts *o, bool *asked)
{
	int r = 0;

	*asked = false;
	for (int i = 0; i < 100; i++) {
		r = jf_layer_lock(l);
		if (r != -EWOULDBLOCK)
			return r;
		r = ask_daemon(l, o);
		if (r >= 0) {
			*asked = true;
			return r;
		}
		usleep(50 * 1000);
	}
	fprintf(stderr,
		"jailfs %s: %s is locked (mounted, or another command runs), and no daemon "
		"answers on its control socket: %s\n",
		o->cmd, o->dir, strerror(-r));
	*asked = true;
	return 1;
}

/* Drops from @a the entries whose path or renamed-from path the policy
 * hides; returns how many it dropped. */
static size_t drop_hidden(json_t *a, struct safe_ctx *c)
{
	size_t hidden = 0;

	for (size_t i = 0; i < json_array_size(a);) {
		json_t *e = json_array_get(a, i);
		const char *p = json_string_value(json_object_get(e, "path"));
		const char *from = json_string_value(json_object_get(e, "from"));

		if ((p && !is_shown(p, c)) || (from && !is_shown(from, c))) {
			json_array_remove(a, i);
			hidden++;
		} else {
			i++;
		}
	}
	return hidden;
}

/* The list, without what the policy hides unless --all: jailrun puts it
 * in its result, which the agent reads. */
static int run_changes(struct jf_layer *l, const struct ropts *o, const char *source)
{
	struct safe_ctx c = {NULL, l};
	void *out = NULL;
	size_t i, hidden = 0;
	json_t *a, *e;
	int r;

	if (!o->all && jf_load_policy(o->policy, source, false, &c.pol) < 0)
		return 2;
	r = jf_layer_changes(l, o->args, o->nargs, &out);
	a = out;
	if (r < 0) {
		jf_policy_free(c.pol);
		fprintf(stderr, "jailfs changes: %s: %s\n", o->dir, strerror(-r));
		return 1;
	}
	if (c.pol)
		hidden = drop_hidden(a, &c);
	jf_policy_free(c.pol);
	if (o->json) {
		json_dumpf(a, stdout, JSON_COMPACT);
		putchar('\n');
	} else {
		json_array_foreach(a, i, e) print_change(e);
	}
	json_decref(a);
	if (hidden)
		fprintf(stderr,
			"jailfs changes: %zu %s the policy hides %s not listed (--all lists "
			"them)\n",
			hidden, hidden == 1 ? "entry" : "entries", hidden == 1 ? "is" : "are");
	return 0;
}

static int run_change_cmd(struct jf_layer *l, const struct ropts *o, const char *source)
{
	void *out = NULL;
	char *id = NULL;
	int r;

	if (!strcmp(o->cmd, "checkpoint")) {
		if (o->nargs > 1)
			return -EINVAL;
		r = jf_layer_checkpoint(l, o->nargs ? o->args[0] : NULL, &id);
		if (r == 0)
			printf("%s\n", id);
		free(id);
	} else if (!strcmp(o->cmd, "restore")) {
		if (o->nargs != 1)
			return -EINVAL;
		r = jf_layer_restore(l, o->args[0]);
	} else if (!strcmp(o->cmd, "discard")) {
		r = jf_layer_discard(l, o->args, o->nargs, &out);
	} else {
		struct safe_ctx c = {NULL, l};
		if (jf_load_policy(o->policy, source, false, &c.pol) < 0)
			return 2;
		r = jf_layer_apply(l, o->args, o->nargs, o->force, is_safe, &c, &out);
		jf_policy_free(c.pol);
	}
	if (r < 0) {
		fprintf(stderr, "jailfs %s: %s: %s\n", o->cmd, o->dir, strerror(-r));
		return 1;
	}
	if (out) {
		r = print_report(out, o->json);
		json_decref(out);
	}
	return r;
}

int jf_cmd_review(int argc, char **argv)
{
	struct ropts o = {0};
	_cleanup_free_ char *source = NULL, *err = NULL;
	_cleanup_close_ int srcfd = -1;
	struct jf_layer *l = NULL;
	bool asked = false;
	int r;

	if (parse(argc, argv, &o) < 0)
		return 2;
	clean_paths(&o);
	r = jf_layer_source(o.dir, &source);
	if (r < 0) {
		fprintf(stderr, "jailfs %s: %s: not a changes directory (no readable layer.json)\n",
			o.cmd, o.dir);
		return 1;
	}
	srcfd = open(source, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (srcfd < 0) {
		fprintf(stderr, "jailfs %s: the source %s: %s\n", o.cmd, source, strerror(errno));
		return 1;
	}
	r = jf_layer_open(o.dir, srcfd, NULL, false, &l, &err);
	if (r < 0) {
		fprintf(stderr, "jailfs %s: %s\n", o.cmd, err ? err : strerror(-r));
		return 1;
	}
	if (!strcmp(o.cmd, "changes")) {
		r = run_changes(l, &o, source);
	} else if (!strcmp(o.cmd, "diff")) {
		r = run_diff(l, &o, source);
	} else if ((r = lock_or_ask(l, &o, &asked)) >= 0 && asked) {
		/* the daemon ran it, or did not answer: r is the exit status */
	} else if (r < 0) {
		fprintf(stderr, "jailfs %s: %s/lock: %s\n", o.cmd, o.dir, strerror(-r));
		r = 1;
	} else {
		r = run_change_cmd(l, &o, source);
		if (r == -EINVAL) {
			fprintf(stderr, "jailfs %s: wrong arguments\nTry 'jailfs %s --help'.\n",
				o.cmd, o.cmd);
			r = 2;
		}
	}
	jf_layer_free(l);
	return r;
}
