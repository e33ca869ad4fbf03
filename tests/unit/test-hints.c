/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of what jailrun tells the caller after a refusal or a failure
 * (runner/hint.c, and the refusals of runner/result.c): the audit log read
 * back into the result's refusals (deny records, hide records but lookups,
 * records alike folded, the list capped), the result's refusal fields, the
 * hints for guardrail refusals and the view's refusals, and the no-network
 * pattern found at the end of a stream that was not captured.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "capture.h"
#include "guard-walk.h"
#include "hint.h"
#include "result-util.h"
#include "result.h"
#include "view.h"

/* A temporary file holding @text; returns its fd (read-write), unlinked. */
static int temp_log(const char *text)
{
	char path[] = "/tmp/jf-hints-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	return fd;
}

#define REC(op, path, zone, decision, err, rule)                                                   \
	"{\"ts\":\"2026-12-01T00:00:00.000000Z\",\"op\":\"" op "\",\"path\":\"" path               \
	"\",\"zone\":\"" zone "\",\"decision\":\"" decision "\",\"errno\":\"" err                  \
	"\",\"rule\":\"" rule "\",\"pid\":1,\"uid\":0}\n"

/* before the offset: not this command's */
#define FIRST REC("open", "old", "RESTRICTED", "deny", "EROFS", "profile:project")

static const char log_text[] = FIRST
	/* a hidden lookup (a probe) is not a refusal to list */
	REC("lookup", ".env", "DENIED", "hide", "ENOENT", "profile:secrets")
		REC("open", ".git/config", "RESTRICTED", "deny", "EROFS", "profile:project") REC(
			"open", ".git/config", "RESTRICTED", "deny", "EROFS", "profile:project")
			REC("create", ".env.local", "DENIED", "deny", "EACCES", "profile:secrets")
	/* a mutation of a hidden object is */
	REC("unlink", "secret/k", "DENIED", "hide", "ENOENT",
	    "policy.ini:3") "{\"ts\":\"x\",\"op\":\"rename\",\"path\":\"a\",\"path2\":\".git/"
			    "HEAD\",\"zone\":"
			    "\"RESTRICTED\",\"decision\":\"deny\",\"errno\":\"EROFS\",\"rule\":"
			    "\"profile:project\"}\n" REC(
				    "create", "src/x.c", "SAFE", "allow", "",
				    "default") "not json\n"
					       "{\"op\":\"open\",\"path\":\"torn";

static void test_read_refusals(void **state)
{
	int fd = temp_log(log_text);
	long offset = (long)strlen(FIRST);
	struct jr_audit_counts c;
	struct jr_refusals rf;

	assert_int_equal(jr_audit_read(fd, offset, &c, &rf), 0);
	assert_null(rf.unknown);
	assert_int_equal(rf.n, 4);
	assert_string_equal(rf.list[0].op, "open");
	assert_string_equal(rf.list[0].path, ".git/config");
	assert_string_equal(rf.list[0].zone, "RESTRICTED");
	assert_string_equal(rf.list[0].rule, "profile:project");
	assert_string_equal(rf.list[0].err, "EROFS");
	assert_int_equal(rf.list[0].count, 2);
	assert_string_equal(rf.list[1].path, ".env.local");
	assert_string_equal(rf.list[1].err, "EACCES");
	assert_string_equal(rf.list[2].op, "unlink");
	assert_string_equal(rf.list[3].path2, ".git/HEAD");
	assert_int_equal(rf.omitted, 0);
	/* the counts come from the same pass: 7 records, 1 written path */
	assert_int_equal(c.records, 7);
	assert_int_equal(c.denied, 4);
	assert_int_equal(c.hidden, 2);
	assert_int_equal(c.written_files, 1);
	/* the descriptor was not moved: a second read sees the same */
	jr_refusals_free(&rf);
	assert_int_equal(jr_audit_read(fd, offset, NULL, &rf), 0);
	assert_int_equal(rf.n, 4);
	jr_refusals_free(&rf);
	assert_int_equal(jr_audit_read(fd, 0, NULL, &rf), 0);
	assert_int_equal(rf.n, 5);
	assert_string_equal(rf.list[0].path, "old");
	jr_refusals_free(&rf);
	close(fd);
	(void)state;
}

/* A log two jails share: each reads only its own pid namespace's records;
 * 0 reads all, and a record without the field is nobody's. */
static void test_read_by_pidns(void **state)
{
	int fd = temp_log("{\"op\":\"write\",\"path\":\"a\",\"zone\":\"RESTRICTED\","
			  "\"decision\":\"deny\",\"errno\":\"EROFS\",\"rule\":\"r\",\"pidns\":7}\n"
			  "{\"op\":\"write\",\"path\":\"b\",\"zone\":\"RESTRICTED\","
			  "\"decision\":\"deny\",\"errno\":\"EROFS\",\"rule\":\"r\",\"pidns\":8}\n"
			  "{\"op\":\"write\",\"path\":\"c\",\"zone\":\"RESTRICTED\","
			  "\"decision\":\"deny\",\"errno\":\"EROFS\",\"rule\":\"r\"}\n");
	struct jr_audit_counts c;
	struct jr_refusals rf;

	assert_int_equal(jr_audit_read_ns(fd, 0, 8, &c, &rf), 0);
	assert_int_equal(rf.n, 1);
	assert_string_equal(rf.list[0].path, "b");
	assert_int_equal(c.denied, 1);
	jr_refusals_free(&rf);
	assert_int_equal(jr_audit_read_ns(fd, 0, 7, NULL, &rf), 0);
	assert_int_equal(rf.n, 1);
	assert_string_equal(rf.list[0].path, "a");
	jr_refusals_free(&rf);
	assert_int_equal(jr_audit_read_ns(fd, 0, 0, NULL, &rf), 0);
	assert_int_equal(rf.n, 3);
	jr_refusals_free(&rf);
	close(fd);
	(void)state;
}

/* A log that was full before the command started holds none of its
 * records: its refusals are unknown, not "none". */
static void test_viewlog_capped_before(void **state)
{
	static const char full[] = "{\"op\":\"write\",\"path\":\"a\",\"zone\":\"RESTRICTED\","
				   "\"decision\":\"deny\",\"errno\":\"EROFS\",\"rule\":\"r\"}\n"
				   "{\"op\":\"capped\",\"max_size\":100,\"count\":5}\n";
	struct jr_viewlog l = {.fd = temp_log(full), .offset = sizeof(full) - 1};
	struct jr_refusals rf;

	assert_int_equal(jr_viewlog_read(&l, NULL, &rf), -ENOSPC);
	assert_non_null(rf.unknown);
	assert_non_null(strstr(rf.unknown, "size cap"));
	/* a command that started before the cap reads its records and the
	 * capped record's counts */
	l.offset = 0;
	assert_int_equal(jr_viewlog_read(&l, NULL, &rf), 0);
	assert_null(rf.unknown);
	assert_int_equal(rf.n, 1);
	jr_refusals_free(&rf);
	jr_viewlog_close(&l);
	(void)state;
}

/* More distinct refusals than the result lists: the rest are counted. */
static void test_read_refusals_capped(void **state)
{
	size_t cap = (JR_REFUSALS_LISTED + 10) * 200 + 1;
	char *text = calloc(1, cap), *p = text;
	struct jr_refusals rf;
	int fd;

	assert_non_null(text);
	for (int i = 0; i < JR_REFUSALS_LISTED + 10; i++)
		p += sprintf(p,
			     "{\"op\":\"create\",\"path\":\".env.%d\",\"zone\":\"DENIED\","
			     "\"decision\":\"deny\",\"errno\":\"EACCES\",\"rule\":\"r\"}\n",
			     i);
	/* one more alike a listed entry: counted there, not omitted */
	p += sprintf(p, "{\"op\":\"create\",\"path\":\".env.0\",\"zone\":\"DENIED\","
			"\"decision\":\"deny\",\"errno\":\"EACCES\",\"rule\":\"r\"}\n");
	fd = temp_log(text);
	free(text);
	assert_int_equal(jr_audit_read(fd, 0, NULL, &rf), 0);
	assert_int_equal(rf.n, JR_REFUSALS_LISTED);
	assert_int_equal(rf.list[0].count, 2);
	assert_int_equal(rf.omitted, 10);
	jr_refusals_free(&rf);
	close(fd);
	(void)state;
}

static void test_result_fields(void **state)
{
	struct jr_outcome *oc = calloc(1, sizeof(*oc));
	struct jr_refusals rf = {0};
	struct jr_report r = {.outcome = oc, .refusals = &rf, .hint = "do this"};
	json_t *o, *e;
	int fd = temp_log(REC("open", ".git/config", "RESTRICTED", "deny", "EROFS", "p"));

	assert_non_null(oc);
	assert_int_equal(jr_audit_read(fd, 0, NULL, &rf), 0);
	rf.omitted = 3;
	o = ru_print_report(&r);
	assert_non_null(o);
	e = json_array_get(json_object_get(o, "refusals"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "path")), ".git/config");
	assert_string_equal(json_string_value(json_object_get(e, "errno")), "EROFS");
	assert_null(json_object_get(e, "path2"));
	assert_int_equal(json_integer_value(json_object_get(o, "refusals_omitted")), 3);
	assert_true(json_is_null(json_object_get(o, "refusals_unknown")));
	assert_string_equal(json_string_value(json_object_get(o, "hint")), "do this");
	json_decref(o);
	/* unknown: refusals null, the reason given */
	jr_refusals_free(&rf);
	rf = (struct jr_refusals){.unknown = "the view keeps no audit log"};
	r.hint = NULL;
	o = ru_print_report(&r);
	assert_true(json_is_null(json_object_get(o, "refusals")));
	assert_string_equal(json_string_value(json_object_get(o, "refusals_unknown")),
			    "the view keeps no audit log");
	assert_true(json_is_null(json_object_get(o, "hint")));
	json_decref(o);
	/* nothing ran (a guardrail refusal): an empty list */
	o = ru_print_report(&(struct jr_report){.denied = true, .reason = "r", .rule = "x"});
	assert_int_equal(json_array_size(json_object_get(o, "refusals")), 0);
	assert_true(json_is_array(json_object_get(o, "refusals")));
	json_decref(o);
	close(fd);
	free(oc);
	(void)state;
}

/* @hint ends with "; see @section" (the manual section that covers it,
 * test-man.sh checks that each exists), and names no other. */
static void see_at_end(const char *hint, const char *section)
{
	char want[256];
	size_t n = strlen(hint), w;

	snprintf(want, sizeof(want), "see %s", section);
	w = strlen(want);
	if (n < w || strcmp(hint + n - w, want) != 0 || strstr(hint, "see ") != hint + n - w)
		fail_msg("hint '%s' does not end with the one pointer '%s'", hint, want);
}

static void guard_hint(const char *rule, const char *subject, bool view_denies, const char *want)
{
	struct jr_verdict v = {.denied = true};
	char out[1024];

	snprintf(v.rule, sizeof(v.rule), "%s", rule);
	snprintf(v.subject, sizeof(v.subject), "%s", subject);
	jr_hint_guard(&v, view_denies, out, sizeof(out));
	if (!strstr(out, want))
		fail_msg("hint for %s/%s: '%s' lacks '%s'", rule, subject, out, want);
}

static void test_guard_hints(void **state)
{
	struct jr_verdict none = {0};
	char out[64] = "x";

	guard_hint("exec-denylist", "rm", false, "add `allow_exec = rm` to the policy's [run]");
	guard_hint("exec-denylist", "rm", false, "unlink or git clean");
	guard_hint("exec-denylist", "rm", false, "not a wall");
	guard_hint("exec-denylist", "sudo", false, "--allow-exec sudo");
	guard_hint("exec-copy", "rm", false, "rm");
	guard_hint("exec-copy", "shred", false, "a renamed copy of shred");
	guard_hint("exec-denylist", "curl", true, "the view's own [run] deny_exec");
	guard_hint("exec-denylist", "curl", true, "; see jailrun(1), A VIEW'S RULES");
	guard_hint("inline-code", "", false, "write the program to a file");
	guard_hint("metachar", "", false, "--shell");
	guard_hint("git-alias", "", false, "run the command itself");
	guard_hint("nesting", "", false, "split the command");
	jr_hint_guard(&none, false, out, sizeof(out));
	assert_string_equal(out, "");
	(void)state;
}

/* inline code: the way out the hint names must be one that works for that
 * command (--allow-inline for a language, --shell for a shell's -c string),
 * never --shell for a language, which --shell refuses too; a timeout names
 * its limit and how to raise it, or that the view's limit is not raised. */
static void test_inline_and_timeout_hints(void **state)
{
	struct jr_verdict v = {.denied = true, .rule = "inline-code", .interp = "python3"};
	char out[1024];

	jr_hint_guard(&v, false, out, sizeof(out));
	assert_non_null(strstr(out, "pass --allow-inline python3 or add `allow_inline = python3`"));
	assert_null(strstr(out, "--shell"));
	v.interp[0] = '\0';
	v.needs_shell = true;
	jr_hint_guard(&v, false, out, sizeof(out));
	assert_non_null(strstr(out, "needs --shell"));
	assert_null(strstr(out, "--allow-inline"));
	v.needs_shell = false;
	jr_hint_guard(&v, false, out, sizeof(out));
	assert_null(strstr(out, "--shell"));
	jr_hint_timeout(1500, false, out, sizeof(out));
	assert_string_equal(out, "the command ran past its 1.5 s time limit (default 120 s, 600 s "
				 "with --shell): raise it with --timeout SECONDS or `timeout = "
				 "SECONDS` in the policy's [run] (0 = none)");
	jr_hint_timeout(300000, true, out, sizeof(out));
	assert_non_null(strstr(out, "its 300 s time limit"));
	assert_non_null(strstr(out, "the view's own [run] timeout, which --timeout cannot raise"));
	(void)state;
}

/* Every rule a guardrail refuses by: the hint says what was refused (the
 * reason), by which rule, and what to do instead (@advice, a fragment). */
static void test_guard_hint_rules(void **state)
{
	static const struct {
		const char *rule, *subject, *reason, *advice;
	} rows[] = {
		{"exec-denylist", "rm", "denied executable rm (cmake -E rm)", "--allow-exec rm"},
		{"exec-denylist", "shred", "denied executable shred", "--allow-exec shred"},
		{"exec-copy", "rm", "renamed copy of denied executable rm (/p/x)",
		 "--allow-exec rm"},
		{"exec-copy", "dd", "renamed copy of denied executable dd (/p/x)",
		 "a renamed copy of dd"},
		{"chmod-recursive", "chmod",
		 "recursive chmod to a world-writable mode (chmod -R 777)", "--allow-exec chmod"},
		{"chown-recursive", "chown", "recursive chown (chown -R)", "--allow-exec chown"},
		{"mass-kill", "kill", "kill of every process (kill ... -1)", "--allow-exec kill"},
		{"inline-code", "", "interpreter inline code (python3 -m timeit: ...)",
		 "write the program to a file in the project"},
		{"metachar", "", "shell metacharacter '&' in the command name without --shell",
		 "--shell"},
		{"path-outside-view", "", "path /etc/shadow is outside the view", "in the project"},
		{"path-denied", "", "path .env is DENIED", "leave it alone"},
		{"path-refused", "", "path '..' refused", "use a plain path"},
		{"find-delete", "", "find -delete", "unlink"},
		{"git-config", "", "git config core.pager 'id' makes git run a program",
		 "run that program directly"},
		{"git-alias", "",
		 "environment GIT_CONFIG_PARAMETERS sets alias.x=!id: git runs a program",
		 "alias to a git subcommand"},
		{"nesting", "", "wrappers nested too deep", "fewer wrappers"},
		{"internal", "", "out of memory", "retry"},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct jr_verdict v = {.denied = true};
		char out[2048], want[1024];

		snprintf(v.rule, sizeof(v.rule), "%s", rows[i].rule);
		snprintf(v.reason, sizeof(v.reason), "%s", rows[i].reason);
		snprintf(v.subject, sizeof(v.subject), "%s", rows[i].subject);
		jr_hint_guard(&v, false, out, sizeof(out));
		snprintf(want, sizeof(want), "refused by the %s guardrail (%s): ", rows[i].rule,
			 rows[i].reason);
		if (strncmp(out, want, strlen(want)) != 0)
			fail_msg("hint for %s: '%s' does not start with '%s'", rows[i].rule, out,
				 want);
		if (!strstr(out + strlen(want), rows[i].advice))
			fail_msg("hint for %s: '%s' lacks '%s'", rows[i].rule, out, rows[i].advice);
		see_at_end(out, "jailrun(1), GUARDRAILS");
	}
	(void)state;
}

static void refusal_hint(const char *op, const char *path, const char *path2, const char *zone,
			 const char *rule, const char *err, const char *want)
{
	struct jr_refusal f = {.op = (char *)op,
			       .path = (char *)path,
			       .path2 = (char *)path2,
			       .zone = (char *)zone,
			       .rule = (char *)rule,
			       .err = (char *)err,
			       .count = 1};
	char out[1024];

	jr_hint_refusal(&f, out, sizeof(out));
	if (!strstr(out, want))
		fail_msg("hint for %s %s: '%s' lacks '%s'", op, path, out, want);
}

/* The refusal's hint points at @section, the one that documents its case. */
static void refusal_see(const char *op, const char *path, const char *zone, const char *rule,
			const char *err, const char *section)
{
	struct jr_refusal f = {.op = (char *)op,
			       .path = (char *)path,
			       .zone = (char *)zone,
			       .rule = (char *)rule,
			       .err = (char *)err,
			       .count = 1};
	char out[1024];

	jr_hint_refusal(&f, out, sizeof(out));
	see_at_end(out, section);
}

/* A refused rename of a checked git file: the hint names what the content
 * held (the key), and the section that lists the keys. */
static void test_refusal_git_config_key(void **state)
{
	struct jr_refusal f = {.op = "rename",
			       .path = "sub/.git/config.lock",
			       .path2 = "sub/.git/config",
			       .zone = "RESTRICTED",
			       .rule = "profile:project",
			       .err = "EROFS",
			       .detail = "a key that makes git run a program: core.fsmonitor",
			       .count = 1};
	char out[1024];

	(void)state;
	jr_hint_refusal(&f, out, sizeof(out));
	assert_non_null(strstr(out, "EROFS: a key that makes git run a program: core.fsmonitor)"));
	see_at_end(out, "jailfs-policy(5), GIT CONFIG");
	f.path = ".git/index.lock";
	f.path2 = ".git/index";
	f.detail = "an entry whose path git would not add";
	jr_hint_refusal(&f, out, sizeof(out));
	assert_non_null(strstr(out, "EROFS: an entry whose path git would not add)"));
	see_at_end(out, "jailfs-policy(5), PROFILES");
}

/* A refused write of a .git file: the hint says what it may hold. */
static void test_refusal_git_file(void **state)
{
	struct jr_refusal f = {.op = "write",
			       .path = "sub/.git",
			       .zone = "RESTRICTED",
			       .rule = "profile:project",
			       .err = "EROFS",
			       .detail = "a .git file naming a directory outside the view",
			       .count = 1};
	char out[1024];

	(void)state;
	jr_hint_refusal(&f, out, sizeof(out));
	assert_non_null(strstr(out, "EROFS: a .git file naming a directory outside the view)"));
	assert_non_null(strstr(out, "naming a git directory of the view"));
	assert_null(strstr(out, "read-only in the jail"));
	see_at_end(out, "jailfs-policy(5), PROFILES");
}

static void test_refusal_sections(void **state)
{
	char out[1024];

	refusal_see("open", ".git/config", "RESTRICTED", "profile:project", "EROFS",
		    "jailfs-policy(5), PROFILES");
	refusal_see("create", ".env", "DENIED", "profile:secrets", "EACCES",
		    "jailfs-policy(5), PROFILES");
	refusal_see("create", "ca.pem", "DENIED", "profile:secrets", "EACCES",
		    "jailfs-policy(5), NAMES SUBJECT TO CONTENT");
	refusal_see("unlink", "docs/a", "RESTRICTED", "p.ini:4", "EROFS",
		    "jailfs-policy(5), SEMANTICS");
	refusal_see("open", "src/a.c", "RESTRICTED", "default", "EROFS",
		    "jailfs-policy(5), SEMANTICS");
	refusal_see("create", "x", "DENIED", "p.ini:2", "EACCES", "jailfs-policy(5), SEMANTICS");
	refusal_see("create", "x\\u001b", "DENIED", "control", "EACCES",
		    "jailfs-policy(5), SEMANTICS");
	refusal_see("open", "big.bin", "SAFE", "default", "EFBIG",
		    "jailfs-policy(5), SECTIONS AND KEYS");
	refusal_see("setxattr", "a", "SAFE", "default", "EPERM", "jailfs(1), THE VIEW");
	jr_hint_run(NULL, true, out, sizeof(out));
	see_at_end(out, "jailrun(1), THE WALL");
	(void)state;
}

static void test_refusal_hints(void **state)
{
	refusal_hint("open", ".git/config", NULL, "RESTRICTED", "profile:project", "EROFS",
		     "the view refused writing .git/config (RESTRICTED by profile:project");
	refusal_hint("open", ".git/config", NULL, "RESTRICTED", "profile:project", "EROFS",
		     "files that make git or editors run code");
	refusal_hint(
		"unlink", "docs/a", NULL, "RESTRICTED", "p.ini:4", "EROFS",
		"deleting docs/a (RESTRICTED by p.ini:4, EROFS): the policy makes it read-only");
	refusal_hint("open", "src/a.c", NULL, "RESTRICTED", "default", "EROFS",
		     "the view is read-only there (a --read-only view");
	refusal_hint("create", ".env", NULL, "DENIED", "profile:secrets", "EACCES",
		     "look like secrets");
	refusal_hint("rename", "a", "b/.env", "DENIED", "x.ini:1", "EACCES",
		     "renaming a to b/.env");
	/* a name subject to content: where it can be created */
	refusal_hint("create", "certs/ca.pem", NULL, "DENIED", "profile:secrets", "EACCES",
		     "created only in a directory made through the view (mkdir it first");
	refusal_hint("rename", "certs/ca.tmp", "certs/CA.PEM", "DENIED", "profile:secrets",
		     "EACCES", "a hidden private key may hold it");
	refusal_hint("create", "server.key", NULL, "DENIED", "profile:secrets", "EACCES",
		     "or use another name (.crt for a certificate)");
	refusal_hint("create", "id_rsa.key.txt", NULL, "DENIED", "profile:secrets", "EACCES",
		     "look like secrets");
	refusal_hint("create", "x\\u001b", NULL, "DENIED", "control", "EACCES",
		     "refused name: control character in a name");
	refusal_hint("open", "big.bin", NULL, "SAFE", "default", "EFBIG", "opening big.bin");
	refusal_hint("open", "big.bin", NULL, "SAFE", "default", "EFBIG", "max_file_size");
	(void)state;
}

static void test_run_hint(void **state)
{
	struct jr_refusals rf = {.n = 1};
	char out[2048];

	rf.list[0] = (struct jr_refusal){.op = "open",
					 .path = ".git/config",
					 .zone = "RESTRICTED",
					 .rule = "profile:project",
					 .err = "EROFS",
					 .count = 1};
	jr_hint_run(&rf, true, out, sizeof(out));
	assert_non_null(strstr(out, "refused writing .git/config"));
	assert_non_null(strstr(out, "; no network in the jail: pass --net"));
	jr_hint_run(&(struct jr_refusals){.unknown = "x"}, false, out, sizeof(out));
	assert_string_equal(out, "");
	jr_hint_run(NULL, true, out, sizeof(out));
	assert_string_equal(out, jr_hint_no_net);
	(void)state;
}

/* Feed @text to the stream's tail ring as capture.c does after @skip bytes. */
static void feed_tail(struct jr_stream *st, uint64_t skip, const char *text)
{
	st->total = skip;
	for (const char *p = text; *p; p++)
		st->tail[st->total++ % JR_TAIL_BYTES] = *p;
}

static void test_net_failure(void **state)
{
	struct jr_outcome *oc = calloc(1, sizeof(*oc));
	static const char *const says[] = {
		"npm ERR! request to https://registry.npmjs.org/x failed, reason: getaddrinfo "
		"EAI_AGAIN registry.npmjs.org",
		"fatal: unable to access 'https://github.com/x/': Could not resolve host: "
		"github.com",
		"socket.gaierror: [Errno -3] Temporary failure in name resolution",
		"connect ENETUNREACH 1.1.1.1:443",
		"curl: (7) Failed to connect: Network is unreachable",
	};

	assert_non_null(oc);
	assert_false(jr_net_failure(oc));
	for (size_t i = 0; i < sizeof(says) / sizeof(says[0]); i++) {
		memset(oc, 0, sizeof(*oc));
		/* past the capture, across the ring's wrap */
		feed_tail(&oc->err, 5 * JR_TAIL_BYTES - 20, says[i]);
		assert_true(jr_net_failure(oc));
	}
	memset(oc, 0, sizeof(*oc));
	oc->out.buf = "ok: resolved example.com";
	oc->out.len = strlen(oc->out.buf);
	feed_tail(&oc->err, 0, "error: no such file");
	assert_false(jr_net_failure(oc));
	oc->out.buf = "x EAI_AGAIN y";
	oc->out.len = strlen(oc->out.buf);
	assert_true(jr_net_failure(oc));
	free(oc);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_refusals),
		cmocka_unit_test(test_read_refusals_capped),
		cmocka_unit_test(test_viewlog_capped_before),
		cmocka_unit_test(test_read_by_pidns),
		cmocka_unit_test(test_result_fields),
		cmocka_unit_test(test_guard_hints),
		cmocka_unit_test(test_inline_and_timeout_hints),
		cmocka_unit_test(test_guard_hint_rules),
		cmocka_unit_test(test_refusal_hints),
		cmocka_unit_test(test_refusal_sections),
		cmocka_unit_test(test_refusal_git_config_key),
		cmocka_unit_test(test_refusal_git_file),
		cmocka_unit_test(test_run_hint),
		cmocka_unit_test(test_net_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
