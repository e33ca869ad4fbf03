/* SPDX-License-Identifier: MIT */
/*
 * Hints: one line saying why a command did not get what it wanted and what
 * the caller can do instead, for a guardrail refusal, a refusal of the view,
 * or a known failure pattern in the output (no network). The texts say what
 * each mechanism is and no more: the guardrails are a check against mistakes
 * (`mv f /tmp/x` removes a file as surely as rm does), the view's zones are
 * what holds.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "capture.h"
#include "cleanup.h"
#include "guard-walk.h"
#include "hint.h"
#include "policy.h"
#include "result.h"
#include "text.h"

/* Each hint ends with "; see PAGE(N), SECTION", the heading of the manual
 * that covers its case (tests/unit/test-man.sh checks that each exists). */
const char jr_hint_no_net[] =
	"no network in the jail: pass --net or vendor the dependency; see jailrun(1), THE WALL";

void jr_hint_timeout(uint64_t limit_ms, bool by_view, char *out, size_t size)
{
	int n = snprintf(out, size,
			 "the command ran past its %g s time limit (default %llu s, %llu s with "
			 "--shell): ",
			 (double)limit_ms / 1000, JR_DEFAULT_TIMEOUT_MS / 1000,
			 JR_DEFAULT_SHELL_TIMEOUT_MS / 1000);

	if (n < 0 || (size_t)n >= size)
		return;
	if (by_view)
		snprintf(out + n, size - n,
			 "it is the view's own [run] timeout, which --timeout cannot raise; "
			 "mount the view with a larger one");
	else
		snprintf(out + n, size - n,
			 "raise it with --timeout SECONDS or `timeout = SECONDS` in the policy's "
			 "[run] (0 = none)");
}

/* ---- guardrail refusals ---- */

static const struct {
	const char *rule, *hint;
} rule_hints[] = {
	{"inline-code", "inline code is refused: write the program to a file in the project and "
			"run the file (python3 script.py)"},
	{"metachar", "shell syntax needs --shell: jailrun --shell -- 'CMD1 | CMD2'"},
	{"path-outside-view",
	 "name only paths in the project and what the jail shows read-only (/usr, /bin, /lib*, "
	 "its /etc entries) or its own /tmp, /proc and /dev; copy what is needed into the "
	 "project"},
	{"path-denied", "that name is DENIED by the policy: it does not exist inside the jail; "
			"leave it alone"},
	{"path-refused", "use a plain path: no '..' out of the project, control characters or "
			 "encoded separators"},
	{"find-delete", "find -delete is refused by a guardrail; delete the files with unlink, "
			"or with git clean"},
	{"git-config", "git options that make git run another program are refused; run that "
		       "program directly"},
	{"git-alias", "git aliases that run a shell command (!CMD) are refused; run the command "
		      "itself, or use an alias to a git subcommand (alias.st=status)"},
	{"nesting", "split the command: fewer wrappers, nested shell strings or here-documents "
		    "at once"},
	{"internal", "jailrun ran out of memory checking the command; retry, or shorten it"},
};

/* What the caller can do instead, for a refusal by rule @v->rule. */
static void advice(const struct jr_verdict *v, bool view_denies, char *out, size_t size)
{
	const char *s = v->subject;

	out[0] = '\0';
	if (*s && view_denies) {
		snprintf(out, size,
			 "%s is denied by the view's own [run] deny_exec, which no --allow-exec "
			 "lifts; do it another way",
			 s);
	} else if (*s && strcmp(s, "rm") == 0) {
		snprintf(
			out, size,
			"rm is on jailrun's executable denylist (a guardrail against mistakes, not "
			"a wall): pass --allow-exec rm or add `allow_exec = rm` to the policy's "
			"[run], or delete files with unlink or git clean");
	} else if (*s) {
		snprintf(out, size,
			 "%s%s is refused by jailrun's guardrails (a check against mistakes, not a "
			 "wall): pass --allow-exec %s or add `allow_exec = %s` to the policy's "
			 "[run] if it is meant to run",
			 strcmp(v->rule, "exec-copy") == 0 ? "a renamed copy of " : "", s, s, s);
	} else if (v->interp[0]) {
		snprintf(out, size,
			 "%s's inline code is refused by jailrun's guardrails (a check against "
			 "mistakes, not a wall): pass --allow-inline %s or add `allow_inline = %s` "
			 "to "
			 "the policy's [run] if it is meant to run, or write the program to a file "
			 "in the project and run the file",
			 v->interp, v->interp, v->interp);
	} else if (v->needs_shell) {
		snprintf(out, size,
			 "a shell command string needs --shell: jailrun --shell -- 'CMD1 && CMD2' "
			 "checks each simple command in it");
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(rule_hints); i++)
			if (strcmp(v->rule, rule_hints[i].rule) == 0)
				snprintf(out, size, "%s", rule_hints[i].hint);
	}
}

void jr_hint_guard(const struct jr_verdict *v, bool view_denies, char *out, size_t size)
{
	char what[1536];

	out[0] = '\0';
	if (!v->denied)
		return;
	advice(v, view_denies, what, sizeof(what));
	snprintf(out, size, "refused by the %s guardrail (%s): %s%ssee jailrun(1), %s", v->rule,
		 v->reason, what, *what ? "; " : "",
		 view_denies && *v->subject ? "A VIEW'S RULES" : "GUARDRAILS");
}

/* ---- refusals of the view ---- */

static const struct {
	const char *op, *verb;
} verbs[] = {
	{"create", "creating"},
	{"mkdir", "creating the directory"},
	{"mknod", "creating"},
	{"symlink", "creating the symlink"},
	{"link", "linking"},
	{"unlink", "deleting"},
	{"rmdir", "removing the directory"},
	{"rename", "renaming"},
	{"write", "writing"},
	{"copy_file_range", "writing"},
	{"truncate", "truncating"},
	{"chmod", "changing the mode of"},
	{"chown", "changing the owner of"},
	{"utimens", "changing the times of"},
	{"setxattr", "setting an attribute of"},
	{"removexattr", "removing an attribute of"},
	{"fallocate", "allocating space in"},
};

static const char *verb_of(const struct jr_refusal *f)
{
	if (strcmp(f->op, "open") == 0)
		return f->err && strcmp(f->err, "EFBIG") == 0 ? "opening" : "writing";
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		if (strcmp(f->op, verbs[i].op) == 0)
			return verbs[i].verb;
	return f->op;
}

/* The message of a refused name's reason ("control"), or NULL for a rule. */
static const char *name_refusal(const char *rule)
{
	for (int r = JF_REFUSE_NONE + 1; rule; r++) {
		const char *reason = jf_refusal_reason((enum jf_refusal)r);

		if (strcmp(reason, "unknown") == 0)
			break;
		if (strcmp(reason, rule) == 0)
			return jf_refusal_message((enum jf_refusal)r);
	}
	return NULL;
}

static bool is(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

/* Does @path end in a name a rule subject to content judges (*.pem, *.key,
 * *.asc; jailfs-policy(5), NAMES SUBJECT TO CONTENT)? */
static bool content_name(const char *path)
{
	static const char *const ext[] = {".pem", ".key", ".asc"};
	size_t n = path ? strlen(path) : 0;

	for (size_t i = 0; i < ARRAY_SIZE(ext); i++)
		if (n > 4 && strcasecmp(path + n - 4, ext[i]) == 0)
			return true;
	return false;
}

/* Does @path name a git config (config, config.worktree)? */
static bool git_config_path(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	return base && (strcmp(base, "config") == 0 || strcmp(base, "config.worktree") == 0);
}

/* Does @path name a .git (a .git file, when written)? */
static bool git_file_path(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	return base && strcmp(base, ".git") == 0;
}

/* Did @f refuse to give a new name (create, mknod, link, rename)? */
static bool new_name(const struct jr_refusal *f)
{
	return is(f->op, "create") || is(f->op, "mknod") || is(f->op, "link") ||
	       is(f->op, "rename");
}

/* What the refusal means and what to do instead. */
static const char *why(const struct jr_refusal *f)
{
	if (is(f->err, "EFBIG"))
		return "the file is larger than the policy's max_file_size for its zone";
	if (is(f->err, "EPERM"))
		return "trusted.* attributes, file capabilities and jailfs's own attributes are "
		       "never set through the view";
	if (f->detail && (is(f->op, "write") || is(f->op, "truncate")) && git_file_path(f->path))
		return "a .git file sends git to the directory it names, so jailfs lets it hold "
		       "only nothing or \"gitdir: PATH\" naming a git directory of the view "
		       "(../.git/modules/NAME, what git submodule writes), relative or below the "
		       "project's path, through no symlink";
	if (f->detail && is(f->op, "rename"))
		return "git writes its index, packed-refs and config by renaming a new file "
		       "onto them, and jailfs lets one through only when its content is safe "
		       "for the host's git; keys that make git run a program or read another "
		       "file are set on the host, not in the jail";
	if (is(f->zone, "RESTRICTED") && is(f->rule, "profile:project"))
		return "files that make git or editors run code (.git/config, hooks, .vscode...) "
		       "are read-only in the jail; write elsewhere";
	if (is(f->rule, "hardlink:outside"))
		return "the file shares its content with another name, which the view does not "
		       "show (outside the project, or linked on the host since the view "
		       "started): its content, mode and times are read-only, while this name "
		       "may be removed, renamed or replaced; to change the file, copy it "
		       "(cp F F.new && mv F.new F) (jailfs(1), \"Hard links\")";
	if (is(f->rule, "hardlink:denied"))
		return "another name of this file is hidden by the policy, so this one is hidden "
		       "too (jailfs(1), \"Hard links\")";
	if (is(f->rule, "hardlink:policy"))
		return "the policy hides every file with several names (hardlinks = deny, "
		       "jailfs-policy(5))";
	if (is(f->zone, "RESTRICTED") && is(f->rule, "default"))
		return "the view is read-only there (a --read-only view, or a read-only default "
		       "zone); write elsewhere, e.g. under /tmp";
	if (is(f->zone, "RESTRICTED"))
		return "the policy makes it read-only; write elsewhere";
	if (is(f->zone, "DENIED") && is(f->rule, "profile:secrets") && new_name(f) &&
	    content_name(f->path2 ? f->path2 : f->path))
		return "a new *.pem, *.key or *.asc file is created only in a directory made "
		       "through the view (mkdir it first, in the same run) or where the view "
		       "shows that name: elsewhere a hidden private key may hold it, and the "
		       "view does not tell; or use another name (.crt for a certificate)";
	if (is(f->zone, "DENIED") && is(f->rule, "profile:secrets"))
		return "names that look like secrets (.env, keys, credentials) are hidden in the "
		       "jail and cannot be created or used; pick another name";
	if (is(f->zone, "DENIED"))
		return "the policy hides that name: it cannot be created or used; pick another "
		       "name";
	return "the policy refused it";
}

/* The section of the manual that covers why(@f)'s case. */
static const char *why_see(const struct jr_refusal *f)
{
	if (is(f->err, "EFBIG"))
		return "jailfs-policy(5), SECTIONS AND KEYS";
	if (is(f->err, "EPERM"))
		return "jailfs(1), THE VIEW";
	if (f->detail && is(f->op, "rename") && git_config_path(f->path2))
		return "jailfs-policy(5), GIT CONFIG";
	if (f->rule && strncmp(f->rule, "profile:", 8) == 0)
		return is(f->zone, "DENIED") && new_name(f) &&
				       content_name(f->path2 ? f->path2 : f->path)
			       ? "jailfs-policy(5), NAMES SUBJECT TO CONTENT"
			       : "jailfs-policy(5), PROFILES";
	return "jailfs-policy(5), SEMANTICS";
}

void jr_hint_refusal(const struct jr_refusal *f, char *out, size_t size)
{
	const char *refused = name_refusal(f->rule);
	char target[1024], cause[512];

	if (f->path2)
		snprintf(target, sizeof(target), "%s to %s", f->path, f->path2);
	else
		snprintf(target, sizeof(target), "%s", f->path[0] ? f->path : ".");
	if (refused)
		snprintf(cause, sizeof(cause), "refused name: %s", refused);
	else if (f->detail)
		snprintf(cause, sizeof(cause), "%s by %s, %s: %s", f->zone ? f->zone : "?",
			 f->rule ? f->rule : "default", f->err ? f->err : "refused", f->detail);
	else
		snprintf(cause, sizeof(cause), "%s by %s, %s", f->zone ? f->zone : "?",
			 f->rule ? f->rule : "default", f->err ? f->err : "refused");
	snprintf(out, size, "the view refused %s %s (%s): %s; see %s", verb_of(f), target, cause,
		 refused ? "use a plain name" : why(f), why_see(f));
}

/* ---- known failure patterns in the output ---- */

static bool says_no_net(const char *p, size_t n)
{
	static const char *const pats[] = {
		"EAI_AGAIN",
		"ENETUNREACH",
		"Could not resolve host",
		"Temporary failure in name resolution",
		"Network is unreachable",
	};

	for (size_t i = 0; p && i < ARRAY_SIZE(pats); i++)
		if (memmem(p, n, pats[i], strlen(pats[i])))
			return true;
	return false;
}

/* The stream's tail ring in order, into @buf (JR_TAIL_BYTES). Returns its length. */
static size_t tail_of(const struct jr_stream *st, char *buf)
{
	size_t start;

	if (st->total <= JR_TAIL_BYTES) {
		memcpy(buf, st->tail, (size_t)st->total);
		return (size_t)st->total;
	}
	start = (size_t)(st->total % JR_TAIL_BYTES);
	memcpy(buf, st->tail + start, JR_TAIL_BYTES - start);
	memcpy(buf + JR_TAIL_BYTES - start, st->tail, start);
	return JR_TAIL_BYTES;
}

bool jr_net_failure(const struct jr_outcome *oc)
{
	char buf[JR_TAIL_BYTES];
	const struct jr_stream *s[] = {&oc->out, &oc->err};

	for (size_t i = 0; i < ARRAY_SIZE(s); i++) {
		if (says_no_net(s[i]->buf, s[i]->len))
			return true;
		if (says_no_net(buf, tail_of(s[i], buf)))
			return true;
	}
	return false;
}

/* ---- the run's hint, and the block on stderr ---- */

void jr_hint_run(const struct jr_refusals *rf, bool net_failed, char *out, size_t size)
{
	size_t n;

	out[0] = '\0';
	if (rf && !rf->unknown && rf->n)
		jr_hint_refusal(&rf->list[0], out, size);
	n = strlen(out);
	if (net_failed && n + 2 < size)
		snprintf(out + n, size - n, "%s%s", n ? "; " : "", jr_hint_no_net);
}

/* "jailrun: " and @s escaped, a newline. */
static void line(FILE *f, const char *s)
{
	fputs("jailrun: ", f);
	jf_fput_escaped(f, s, strlen(s));
	fputc('\n', f);
}

void jr_refusals_print(FILE *f, const struct jr_refusals *rf, const char *hint)
{
	size_t shown = 0;
	long total = 0, rest;
	char buf[2048];

	if (rf && !rf->unknown) {
		total = rf->omitted;
		for (size_t i = 0; i < rf->n; i++)
			total += rf->list[i].count;
	}
	if (total) {
		snprintf(buf, sizeof(buf), "the view refused %ld operation%s:", total,
			 total == 1 ? "" : "s");
		line(f, buf);
	}
	rest = total;
	for (; total && shown < rf->n && shown < JR_REFUSALS_PRINTED; shown++) {
		const struct jr_refusal *x = &rf->list[shown];
		char times[32] = "";

		if (x->count > 1)
			snprintf(times, sizeof(times), " (x%ld)", x->count);
		snprintf(buf, sizeof(buf), "  %s %s%s%s: %s (%s, %s)%s", x->op, x->path,
			 x->path2 ? " -> " : "", x->path2 ? x->path2 : "", x->err ? x->err : "?",
			 x->zone ? x->zone : "?", x->rule ? x->rule : "default", times);
		line(f, buf);
		rest -= x->count;
	}
	if (total && rest > 0) {
		snprintf(buf, sizeof(buf), "  ... and %ld more", rest);
		line(f, buf);
	}
	if (hint && *hint) {
		snprintf(buf, sizeof(buf), "hint: %s", hint);
		line(f, buf);
	}
}
