/* SPDX-License-Identifier: MIT */
/*
 * jailrun: run one command with a jailfs view as its working root, behind
 * guardrails (guard.c) and a namespace wall (sandbox.c), and report what it
 * did. This file is the flow: options (options.c) -> decide -> mount
 * (one-shot) -> run -> unmount -> report.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "changes.h"
#include "cleanup.h"
#include "env.h"
#include "fail.h"
#include "gitdir.h"
#include "guard-walk.h"
#include "guard.h"
#include "hint.h"
#include "home.h"
#include "options.h"
#include "persist.h"
#include "policy.h"
#include "resolve.h"
#include "result.h"
#include "sandbox.h"
#include "sysdirs.h"
#include "view.h"

#define DEFAULT_MAX_OUTPUT (1ULL << 20)
#define DEFAULT_GRACE_MS 2000ULL

/* [run] list @key of @policy; an empty list when @policy is NULL. */
static const char *const *run_list(const struct jf_policy *policy, const char *key)
{
	static const char *const empty[] = {NULL};

	return policy ? jf_policy_run_list(policy, key) : empty;
}

/* The command's environment (env.c); the names of the values left out as
 * secrets in *@dropped, also told on stderr without --json. */
static char **build_env(const struct opts *o, const struct jf_policy *mount_run,
			const struct jf_policy *policy, const struct jr_home *home, char ***dropped)
{
	const char *const *lists[] = {(const char *const *)home->env, run_list(mount_run, "env"),
				      run_list(policy, "env"), o->env};
	char **envp = jr_env_build(home->jail, lists, ARRAY_SIZE(lists), ARRAY_SIZE(lists) - 1,
				   MAX_LIST * 3, dropped);

	if (!envp)
		die("out of memory");
	for (char **d = *dropped; !o->json && *d; d++)
		fprintf(stderr,
			"jailrun: %s left out of the command's environment: its value holds a "
			"secret (pass it with --env NAME)\n",
			*d);
	return envp;
}

/* ---- the flow ---- */

struct run {
	struct opts o;
	struct jf_policy *policy;
	struct jr_view view;
	char start[PATH_MAX]; /* where the command starts without --cwd (jail path) */
	char cwd[PATH_MAX];
	char **envp;
	char **env_dropped; /* "NAME (DETECTOR)" of the values left out as secrets */
	const char *deny[MAX_LIST * 2], *allow[MAX_LIST * 2];
	const char *allow_inline[MAX_LIST * 3 + 1]; /* the view's, --policy's, --allow-inline */
	char *const *argv;			    /* what is executed */
	int argc;
	struct jr_oneshot oneshot;
	struct jr_persist persist;    /* --source without --fresh: the shared view */
	struct jr_viewlog log;	      /* where the view's refusals are read from */
	struct jf_policy *mount_run;  /* --root: the view's own [run] rules, or NULL */
	const char *expose[MAX_LIST]; /* [run] expose of the view and of --policy */
	struct jr_gitdir gitdir;      /* --source: a linked work tree's main git directory */
	struct jr_oneshot gitdir_oneshot;
	struct jr_home home;	   /* the jail home, the toolchains and [run] expose */
	struct jr_changes changes; /* --changes DIR, --changes-temp: the overlay's layer */
	bool timeout_by_view; /* the view's [run] timeout is the limit (no --timeout raises it) */
};

/* Is the git work tree @top too wide to become the view: / or the home
 * directory (a dotfiles repository) or one of its parents? */
static bool too_wide(const char *top)
{
	const char *h = getenv("HOME");
	char home[PATH_MAX];

	return strcmp(top, "/") == 0 || (h && realpath(h, home) && jr_path_under(home, top));
}

/* --source DIR: the view's root is DIR, or the top of the git work tree that
 * holds it (so that git works in the jail); the command starts in the
 * directory jailrun was run from when that is DIR or below it, else in DIR. */
static void setup_source(struct run *r)
{
	const char *src = r->o.source ? r->o.source : ".";
	char dir[PATH_MAX], top[PATH_MAX], here[PATH_MAX];
	struct stat st;

	if (!realpath(src, dir))
		die("--source %s: %s", src, strerror(errno));
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		die("--source %s: not a directory", src);
	snprintf(r->view.project, sizeof(r->view.project), "%s", dir);
	if (!r->o.no_git_root && jr_view_git_top(dir, top) == 0 && !too_wide(top))
		snprintf(r->view.project, sizeof(r->view.project), "%s", top);
	if (getcwd(here, sizeof(here)) && jr_path_under(here, dir))
		snprintf(r->start, sizeof(r->start), "%s", here);
	else
		snprintf(r->start, sizeof(r->start), "%s", dir);
	snprintf(r->view.host, sizeof(r->view.host), "%s", r->view.project);
	r->view.host_is_source = true;
}

/* [run] expose of the view (--root) and of --policy, one list. */
static void merge_expose(struct run *r)
{
	const char *const *lists[] = {run_list(r->mount_run, "expose"),
				      run_list(r->policy, "expose")};
	int n = 0;

	for (size_t k = 0; k < ARRAY_SIZE(lists); k++)
		for (const char *const *x = lists[k]; *x && n < MAX_LIST - 1; x++)
			r->expose[n++] = *x;
	r->expose[n] = NULL;
	r->view.expose = r->expose;
}

/* --source without --policy: the policy a jailfs mount of the project would
 * use (jf_policy_locate: the project's .jailfs.ini, the user's policy.ini),
 * loaded here for the guardrails and handed to the one-shot daemon, so both
 * apply the same file. --check names it. */
static void load_policy(struct run *r);

static void locate_policy(struct run *r)
{
	const char *origin;
	char err[512] = "", *found = NULL;
	int e;

	if (r->o.policy_file)
		return;
	e = jf_policy_locate(r->view.project, &found, &origin, err, sizeof(err));
	if (e < 0)
		usage_error("%s", err[0] ? err : strerror(-e));
	if (!found)
		return;
	jf_policy_free(r->policy);
	r->policy = NULL;
	r->o.policy_file = found; /* lives as long as the run */
	load_policy(r);
	if (r->o.check_only && !r->o.json)
		fprintf(stderr, "jailrun: policy: %s (the %s's policy file)\n", found, origin);
}

/* --root: the view's [run] rules come along. Asking for them is also the
 * check that the mount answers at all (getxattr always reaches the daemon;
 * stat may be served from the kernel's cache): a daemon killed outright
 * leaves a mount that answers ENOTCONN, and a FUSE mount without allow_other
 * answers EACCES to everyone but the user who mounted it. */
static void setup_root_view(struct run *r, const char *mnt)
{
	char err[768];
	int e = jr_view_run_rules(mnt, &r->mount_run, err, sizeof(err));

	if (e == -ENOTCONN)
		die("--root %s: the jailfs daemon of this mount is gone (%s); unmount it with "
		    "'fusermount3 -u %s' and mount it again",
		    r->o.root, strerror(-e), mnt);
	if (e == -EACCES)
		die("--root %s: %s (a FUSE mount answers only the user who mounted it unless "
		    "jailfs was started with -o allow_other)",
		    r->o.root, strerror(-e));
	if (e < 0)
		die("%s", err);
}

/* --source: a linked work tree's main git directory gets a view of its own;
 * the repository's other work trees get placeholders (gitdir.c). */
static void setup_gitdir(struct run *r)
{
	char warn[PATH_MAX * 2 + 128] = "";
	int e = jr_gitdir_setup(&r->gitdir, &r->view, warn, sizeof(warn));

	if (warn[0])
		say("not showing the main repository's git directory: %s", warn);
	if (e < 0)
		die("the main repository's git directory: %s", strerror(-e));
}

static void setup_view(struct run *r)
{
	char mnt[PATH_MAX];
	int e;

	if (r->o.root) {
		e = jr_view_check_root(r->o.root, r->view.project, mnt);
		if (e == -EMEDIUMTYPE || (e == -ENOENT && realpath(r->o.root, mnt))) {
			if (!r->o.plain_root)
				die("--root %s: not a jailfs mount (no fuse.jailfs mount there in "
				    "/proc/self/mountinfo); refusing to run in it",
				    r->o.root);
			/* test-only: a plain directory stands for the view of itself */
			snprintf(r->view.project, sizeof(r->view.project), "%s", mnt);
		} else if (e < 0) {
			die("--root %s: %s", r->o.root, strerror(-e));
		} else {
			setup_root_view(r, mnt);
		}
		snprintf(r->view.host, sizeof(r->view.host), "%s", mnt);
	} else {
		setup_source(r);
		locate_policy(r);
	}
	if (!r->start[0])
		snprintf(r->start, sizeof(r->start), "%s", r->view.project);
	if (strcmp(r->view.project, "/") == 0)
		die("the project cannot be / (the jail needs its own root)");
	for (const char *const *d = jf_system_dirs; *d; d++)
		if (jr_path_under(r->view.project, *d))
			die("project %s lies in %s, which the jail mounts read-only from the host",
			    r->view.project, *d);
	if (!strncmp(r->view.project, "/proc/", 6) || !strncmp(r->view.project, "/dev/", 5) ||
	    !strncmp(r->view.project, "/etc/", 5))
		die("project %s lies in a directory the jail replaces", r->view.project);
	r->view.policy = r->policy;
	merge_expose(r);
	if (!r->o.root)
		setup_gitdir(r);
}

/* The jail home: --home, else [run] home of --policy, else of the view
 * (--root), else the default; the toolchains and [run] expose on top. */
static void setup_home(struct run *r)
{
	const char *dir = r->o.home;
	char err[PATH_MAX * 2 + 160];

	if (!dir)
		dir = run_list(r->policy, "home")[0];
	if (!dir)
		dir = run_list(r->mount_run, "home")[0];
	if (jr_home_setup(&r->home, r->view.project, r->o.root ? r->view.host : NULL, dir, err,
			  sizeof(err)) < 0)
		die("%s", err);
	if (jr_home_expose(&r->home, r->policy, r->expose) < 0)
		die("out of memory");
	r->view.home = &r->home;
	r->view.expose = (const char *const *)r->home.expose;
}

static void setup_cwd(struct run *r)
{
	char host[PATH_MAX];
	struct jf_canon c;
	struct stat st;
	const char *in = r->o.cwd;
	size_t plen = strlen(r->view.project);

	if (!in || !*in) {
		snprintf(r->cwd, sizeof(r->cwd), "%s", r->start);
		return;
	}
	if (jr_resolve(&r->view, r->view.project, in, r->cwd, NULL) < 0)
		die("--cwd %s: cannot be resolved", in);
	if (strncmp(r->cwd, r->view.project, plen) || (r->cwd[plen] && r->cwd[plen] != '/'))
		die("--cwd %s: leaves the view (%s)", in, r->cwd);
	if (jf_canonicalize(r->view.project, NULL, r->cwd, strlen(r->cwd), &c) < 0)
		die("--cwd %s: %s", in, jf_refusal_message(c.refusal));
	if (jr_map(&r->view, r->cwd, host, sizeof(host)) < 0 || stat(host, &st) < 0 ||
	    !S_ISDIR(st.st_mode))
		die("--cwd %s: no such directory in the view", in);
}

/* Do a deny pattern and an allow pattern name the same executable? */
static bool overlaps(const char *deny, const char *allow)
{
	return fnmatch(deny, allow, 0) == 0 || fnmatch(allow, deny, 0) == 0;
}

static bool overlaps_any(const char *const *denies, const char *allow)
{
	for (; denies && *denies; denies++)
		if (overlaps(*denies, allow))
			return true;
	return false;
}

/* The denylist: built-in, the view's [run] deny_exec (--root), --policy's,
 * --deny-exec. Allows lift names, but never one the other side denies: the
 * command line cannot lift the view's deny_exec, nor the view's allow_exec
 * what the command line denies (the stricter wins). */
static void build_lists(struct run *r)
{
	const char *const *p, *const *md = run_list(r->mount_run, "deny_exec");
	const char *cli_deny[MAX_LIST * 2];
	int nd = 0, na = 0, nc = 0;

	for (p = jr_default_denylist; *p; p++)
		r->deny[nd++] = *p;
	for (p = md; *p && nd < MAX_LIST; p++)
		r->deny[nd++] = *p;
	for (p = run_list(r->policy, "deny_exec"); *p && nc < MAX_LIST; p++)
		r->deny[nd++] = cli_deny[nc++] = *p;
	for (int i = 0; i < r->o.n_deny; i++)
		r->deny[nd++] = cli_deny[nc++] = r->o.deny[i];
	cli_deny[nc] = NULL;
	for (p = run_list(r->mount_run, "allow_exec"); *p && na < MAX_LIST / 2; p++)
		if (!overlaps_any(cli_deny, *p))
			r->allow[na++] = *p;
	for (p = run_list(r->policy, "allow_exec"); *p && na < MAX_LIST; p++)
		if (!overlaps_any(md, *p))
			r->allow[na++] = *p;
	for (int i = 0; i < r->o.n_allow; i++)
		if (!overlaps_any(md, r->o.allow[i]))
			r->allow[na++] = r->o.allow[i];
	r->deny[nd] = NULL;
	r->allow[na] = NULL;
	na = 0;
	for (p = run_list(r->mount_run, "allow_inline"); *p && na < MAX_LIST; p++)
		r->allow_inline[na++] = *p;
	for (p = run_list(r->policy, "allow_inline"); *p && na < MAX_LIST * 2; p++)
		r->allow_inline[na++] = *p;
	for (int i = 0; i < r->o.n_allow_inline; i++)
		r->allow_inline[na++] = r->o.allow_inline[i];
	r->allow_inline[na] = NULL;
}

static int report_denied(const struct run *r, const struct jr_verdict *v)
{
	char hint[2048];

	jr_hint_guard(
		v, v->subject[0] && overlaps_any(run_list(r->mount_run, "deny_exec"), v->subject),
		hint, sizeof(hint));
	if (r->o.json) {
		struct jr_report rep = {
			.denied = true, .rule = v->rule, .reason = v->reason, .hint = hint};

		jr_result_print(&rep);
	} else {
		say("denied: %s [%s]", v->reason, v->rule);
	}
	jr_refusals_print(stderr, NULL, hint);
	return JR_EXIT_DENIED;
}

static int report_error(const struct run *r, const char *msg)
{
	say("%s", msg);
	if (r->o.json) {
		struct jr_report rep = {.error = msg};

		jr_result_print(&rep);
	}
	return JR_EXIT_ERROR;
}

static void note_truncation(const char *name, const struct jr_stream *st, uint64_t limit)
{
	if (st->truncated)
		fprintf(stderr,
			"jailrun: %s: kept the first %llu and the last %llu bytes of %llu (raise "
			"--max-output)\n",
			name, (unsigned long long)st->head_kept, (unsigned long long)st->tail_kept,
			(unsigned long long)st->total);
}

/* Did the command fail (exit status, signal, timeout, interruption)? */
static bool failed(const struct jr_outcome *oc)
{
	return oc->exit_code != 0 || oc->signal || oc->timed_out || oc->interrupted;
}

/*
 * The jail's processes wait for a view that does not answer (jr_run gave up
 * on them): abort the one-shot views, which ends those waits and so the
 * processes. A --root view is not ours to abort: its other users would lose
 * it. Its audit log is not asked for again (that would wait too).
 */
static void abort_views(struct run *r, struct jr_outcome *oc)
{
	size_t n = strlen(oc->broken);

	if (r->o.root || r->persist.attached) {
		snprintf(oc->broken + n, sizeof(oc->broken) - n,
			 "; they stay blocked until the daemon of %s answers", r->view.host);
		r->log.mnt = NULL;
		return;
	}
	jr_oneshot_abort(&r->gitdir_oneshot);
	jr_oneshot_abort(&r->oneshot);
	snprintf(oc->broken + n, sizeof(oc->broken) - n, "; the view was aborted");
}

/*
 * --root: the view's daemon is not our child, so its death does not end the
 * run (a one-shot's does, jr_spawn.view_pidfds); once the command has ended,
 * a mount that answers ENOTCONN says the daemon died under it, and whatever
 * the command did since then failed for that reason. The daemon is not asked
 * to flush its audit log (nothing answers); what it wrote is still read.
 */
static void check_root_view(struct run *r, struct jr_outcome *oc)
{
	int e;

	if ((!r->o.root && !r->persist.attached) || oc->broken[0] || oc->stuck)
		return;
	e = jr_view_gone(r->view.host);
	if (e == 0)
		return;
	/* the reason first: a long mountpoint is cut, not the reason */
	if (r->persist.attached)
		snprintf(oc->broken, sizeof(oc->broken),
			 "the jailfs daemon of the persistent view is gone under the command "
			 "(%s); the next command starts a fresh view",
			 strerror(-e));
	else
		snprintf(oc->broken, sizeof(oc->broken),
			 "the jailfs daemon of the --root view is gone under the command (%s); "
			 "unmount %.120s and mount it again",
			 strerror(-e), r->view.host);
	r->log.mnt = NULL;
}

static int finish(struct run *r, const struct jr_outcome *oc, int err)
{
	struct jr_refusals refusals;
	struct jr_audit_counts counts = {0};
	struct jr_report rep = {
		.outcome = oc, .refusals = &refusals, .env_dropped = r->env_dropped};
	char msg[512], hint[2048], more[2048];
	size_t n;
	int status;

	if (err < 0) {
		snprintf(msg, sizeof(msg), "cannot run the jail: %s",
			 oc->error[0] ? oc->error : strerror(-err));
		return report_error(r, msg);
	}
	if (jr_viewlog_read(&r->log, r->o.audit ? &counts : NULL, &refusals) == 0 && r->o.audit)
		rep.audit = &counts;
	jr_hint_run(&refusals,
		    failed(oc) && !r->o.net && (oc->net_refused[0] || jr_net_failure(oc)), more,
		    sizeof(more));
	hint[0] = '\0';
	if (oc->timed_out)
		jr_hint_timeout(r->o.timeout_ms, r->timeout_by_view, hint, sizeof(hint));
	n = strlen(hint);
	if (more[0] && n)
		n += snprintf(hint + n, sizeof(hint) - n, "; ");
	if (more[0] && n < sizeof(hint))
		snprintf(hint + n, sizeof(hint) - n, "%.*s", (int)(sizeof(hint) - n - 1), more);
	rep.hint = hint;
	if (oc->timed_out)
		status = JR_EXIT_TIMEOUT;
	else if (oc->interrupted)
		status = 128 + oc->interrupt_sig;
	else if (oc->signal)
		status = 128 + oc->signal;
	else
		status = oc->exit_code;
	/* whatever attributes the command's output left set (colour on the
	 * same colour; conceal on a terminal that keeps it) must not hide
	 * what we say now */
	if (!r->o.json && isatty(2))
		fputs("\033[0m", stderr);
	if (oc->broken[0]) {
		/* the view failed under the command: whatever it then did is not
		 * its own doing, unless the time ran out or we were told to stop */
		rep.error = oc->broken;
		if (!oc->timed_out && !oc->interrupted)
			status = rep.error_status = JR_EXIT_ERROR;
		if (!r->o.json)
			say("%s", oc->broken);
	}
	rep.changes = jr_changes_json(&r->changes);
	if (r->o.json) {
		jr_result_print(&rep);
	} else {
		jr_changes_say(&r->changes);
		note_truncation("stdout", &oc->out, r->o.max_output);
		note_truncation("stderr", &oc->err, r->o.max_output);
		if (oc->timed_out)
			fprintf(stderr, "jailrun: timed out after %.3f s; killed\n",
				(double)r->o.timeout_ms / 1000);
	}
	jr_refusals_print(stderr, &refusals, hint);
	jr_refusals_free(&refusals);
	jr_audit_counts_free(&counts);
	json_decref(rep.changes);
	return status;
}

static void load_policy(struct run *r)
{
	char err[512];
	int e;

	if (r->o.policy_file)
		e = jf_policy_load(r->o.policy_file, &r->policy, err, sizeof(err));
	else
		e = jf_policy_default(&r->policy);
	if (e < 0)
		die("%s", r->o.policy_file ? err : strerror(-e));
}

/* The smaller of two limits where 0 means unset. */
static uint64_t stricter(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

/* Timeout and output limit: --timeout / --max-output, else --policy's
 * [run]; with --root the view's [run] values too, and the smaller wins.
 * --timeout 0 (none) gives way to the view's timeout. */
static void apply_defaults(struct run *r)
{
	uint64_t mt = r->mount_run ? jf_policy_run_number(r->mount_run, "timeout_ms") : 0;
	uint64_t mo = r->mount_run ? jf_policy_run_number(r->mount_run, "max_output") : 0;
	uint64_t pt = jf_policy_run_number(r->policy, "timeout_ms");
	uint64_t po = jf_policy_run_number(r->policy, "max_output");
	uint64_t v;

	v = stricter(r->o.timeout_set ? r->o.timeout_ms : pt, mt);
	if (v || !r->o.timeout_set)
		r->o.timeout_ms = v	       ? v
				  : r->o.shell ? JR_DEFAULT_SHELL_TIMEOUT_MS
					       : JR_DEFAULT_TIMEOUT_MS;
	r->timeout_by_view = mt && r->o.timeout_ms == mt;
	if (r->o.max_output_set)
		r->o.max_output =
			mo ? (r->o.max_output < mo ? r->o.max_output : mo) : r->o.max_output;
	else
		r->o.max_output = (v = stricter(po, mo)) ? v : DEFAULT_MAX_OUTPUT;
}

static void setup_command(struct run *r)
{
	static char *sh_argv[4];

	if (r->o.shell) {
		size_t len = 1;
		char *s;

		if (!r->o.shell_cmd) {
			if (r->o.argc == 0)
				usage_error("--shell needs a command string after --");
			for (int i = 0; i < r->o.argc; i++)
				len += strlen(r->o.argv[i]) + 1;
			s = calloc(len, 1);
			if (!s)
				die("out of memory");
			for (int i = 0; i < r->o.argc; i++) {
				if (i)
					strcat(s, " ");
				strcat(s, r->o.argv[i]);
			}
			r->o.shell_cmd = s;
		}
		sh_argv[0] = "/bin/sh";
		sh_argv[1] = "-c";
		sh_argv[2] = r->o.shell_cmd;
		sh_argv[3] = NULL;
		r->argv = sh_argv;
		r->argc = 3;
		return;
	}
	if (r->o.argc == 0)
		usage_error("no command given (jailrun [OPTIONS] -- COMMAND [ARG...]; see --help)");
	r->argv = r->o.argv;
	r->argc = r->o.argc;
}

/* The command is nowhere in the jail's PATH: when the host has it, say where
 * and how to show it (exit 127, as a shell's "not found"); -1 to go on
 * otherwise (exec then reports it). */
static int report_missing(const struct run *r, const char *name)
{
	char dir[PATH_MAX], msg[PATH_MAX * 2 + 512];
	struct jr_report rep = {.error = msg, .error_status = 127};

	if (jr_home_missing(name, getenv("PATH"), dir, sizeof(dir)) < 0 ||
	    jr_map(&r->view, dir, msg, sizeof(msg)) == 0)
		return -1;
	snprintf(msg, sizeof(msg),
		 "%s: not in the jail: the host has it in %s, which the jail does not show; "
		 "to run it there, expose that directory read-only with 'expose = %s' in the "
		 "[run] section of the policy (jailfs-policy(5), [run])",
		 name, dir, dir);
	say("%s", msg);
	if (r->o.json)
		jr_result_print(&rep);
	return 127;
}

/* Run the guardrails; fills @exec_path with the file the jail will execve
 * ("" when not found: execvp reports it). Returns -1 to go on, else the exit
 * status to return (refused, or --check). */
static int decide(struct run *r, char *exec_path)
{
	struct jr_guard g = {.view = &r->view,
			     .cwd = r->cwd,
			     .path_env = jr_env_get(r->envp, "PATH"),
			     .home = r->home.jail,
			     .envp = r->envp,
			     .shell = r->o.shell,
			     .deny = r->deny,
			     .allow = r->allow,
			     .allow_inline = r->allow_inline};
	struct jr_verdict v;
	int e;

	if (r->o.shell)
		e = jr_guard_shell(&g, r->o.shell_cmd, &v);
	else
		e = jr_guard_argv(&g, r->argc, r->argv, &v);
	jr_guard_release(&g);
	if (e < 0)
		die("guardrails: %s", strerror(-e));
	if (v.denied)
		return report_denied(r, &v);
	if (r->o.check_only) {
		struct jr_report rep = {0};

		if (r->o.json)
			jr_result_print(&rep);
		else
			fprintf(stderr, "jailrun: allowed\n");
		return 0;
	}
	if (jr_find_exec(&r->view, r->cwd, g.path_env, r->argv[0], exec_path, NULL) < 0) {
		exec_path[0] = '\0';
		if (!r->o.shell)
			return report_missing(r, r->argv[0]);
	}
	return -1;
}

/* --source without --fresh or --audit (a log of this command's own): attach
 * to the persistent view, its refusals read from its shared log. 1 when
 * attached, 0 to mount a one-shot view, or a negative errno (@err says). */
static int mount_persistent(struct run *r, char *err, size_t errsz)
{
	uint64_t idle = r->o.view_idle_ms ? r->o.view_idle_ms
					  : jf_policy_run_number(r->policy, "view_idle_ms");
	struct jr_persist_args a = {.source = r->view.project,
				    .policy = r->o.policy_file,
				    .idle_ms = idle ? idle : JR_VIEW_IDLE_DEFAULT_MS};
	int e;

	/* an overlay view is one-shot: DIR is locked by its daemon while
	 * mounted, and free for jailfs diff, apply and restore once the
	 * command is done */
	if (r->o.fresh || r->o.audit || r->changes.dir[0])
		return 0;
	e = jr_persist_attach(&r->persist, &a, err, errsz);
	if (e <= 0)
		return e;
	snprintf(r->view.host, sizeof(r->view.host), "%s", r->persist.mnt);
	jr_viewlog_root(&r->log, r->persist.mnt);
	return 1;
}

/* --source: mount the private view; afterwards the jail binds it. */
static int mount_oneshot(struct run *r)
{
	char err[512], audit_abs[PATH_MAX];
	int e;

	if (r->o.audit) {
		/* the daemon appends: read from the current end on */
		struct stat st;

		r->log.fd = open(r->o.audit, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
		if (r->log.fd < 0 || fstat(r->log.fd, &st) < 0)
			die("--audit %s: %s", r->o.audit, strerror(errno));
		r->log.offset = (long)st.st_size;
		if (!realpath(r->o.audit, audit_abs))
			die("--audit %s: %s", r->o.audit, strerror(errno));
	}
	if ((r->o.changes || r->o.changes_temp) &&
	    jr_changes_prepare(&r->changes, r->o.changes, err, sizeof(err)) < 0)
		return report_error(r, err);
	if (r->changes.dir[0] && r->view.gitdir)
		return report_error(r, "--changes: this linked work tree's git directory is a "
				       "second view, which the layer would not cover");
	struct jr_oneshot_args a = {.source = r->view.project,
				    .policy = r->o.policy_file,
				    .audit = r->o.audit ? audit_abs : NULL,
				    .refusal_log = true,
				    .changes = r->changes.dir[0] ? r->changes.dir : NULL};
	e = mount_persistent(r, err, sizeof(err));
	if (e < 0)
		return report_error(r, err);
	if (e == 0) {
		e = jr_oneshot_start(&r->oneshot, &a, err, sizeof(err));
		if (!r->o.audit)
			r->log.fd = r->oneshot.log_fd; /* the private log, ours to close */
		if (e < 0)
			return report_error(r, err);
		snprintf(r->view.host, sizeof(r->view.host), "%s", r->oneshot.dir);
	}
	if (r->changes.dir[0] && jr_changes_checkpoint(&r->changes, err, sizeof(err)) < 0) {
		jr_oneshot_stop(&r->oneshot);
		return report_error(r, err);
	}
	r->view.host_is_source = false;
	if (!r->view.gitdir)
		return 0;
	a = (struct jr_oneshot_args){.source = r->gitdir.view.project,
				     .policy_text = jr_gitdir_policy,
				     .read_only = r->gitdir.read_only};
	e = jr_oneshot_start(&r->gitdir_oneshot, &a, err, sizeof(err));
	if (e < 0) {
		jr_oneshot_stop(&r->oneshot);
		return report_error(r, err);
	}
	snprintf(r->gitdir.view.host, sizeof(r->gitdir.view.host), "%s", r->gitdir_oneshot.dir);
	r->gitdir.view.host_is_source = false;
	return 0;
}

int main(int argc, char **argv)
{
	static struct run r = {.log = {.fd = -1},
			       .persist = {.users_fd = -1},
			       .o = {.grace_ms = DEFAULT_GRACE_MS,
				     .limits = {.cpu_s = 3600,
						.as_bytes = 16ULL << 30,
						.nproc = 4096,
						.fsize_bytes = 16ULL << 30}}};
	_cleanup_free_ struct jr_outcome *oc = calloc(1, sizeof(*oc));
	char exec_path[PATH_MAX];
	json_t *request = NULL;
	sigset_t mask;
	int e;

	if (!oc)
		die("out of memory");
	jr_parse_args(&r.o, argc, argv);
	if (r.o.request)
		jr_load_request(&r.o, &request);
	load_policy(&r);
	setup_command(&r);
	setup_view(&r);
	setup_home(&r);
	apply_defaults(&r);
	setup_cwd(&r);
	r.envp = build_env(&r.o, r.mount_run, r.policy, &r.home, &r.env_dropped);
	build_lists(&r);
	e = decide(&r, exec_path);
	if (e >= 0)
		return e;

	/* From here on Ctrl-C, SIGTERM and SIGHUP are read from a signalfd so
	 * that the mount is always removed. SIGPIPE: a closed stdout must not
	 * kill us before cleanup. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (!r.o.root && (e = mount_oneshot(&r)) != 0) {
		jr_changes_release(&r.changes);
		return e;
	}
	if (r.o.root)
		jr_viewlog_root(&r.log, r.view.host);

	struct jr_spawn s = {
		.view = &r.view,
		.cwd = r.cwd,
		.exec_path = exec_path[0] ? exec_path : NULL,
		.argv = r.argv,
		.envp = r.envp,
		.net = r.o.net,
		.stdin_null = r.o.json,
		.pipe_output = true,
		.limits = r.o.limits,
		.tmp_bytes =
			stricter(jf_policy_run_number(r.policy, "tmp_size"),
				 r.mount_run ? jf_policy_run_number(r.mount_run, "tmp_size") : 0),
		.shm_bytes =
			stricter(jf_policy_run_number(r.policy, "shm_size"),
				 r.mount_run ? jf_policy_run_number(r.mount_run, "shm_size") : 0),
		.view_pidfds = {r.oneshot.daemon > 0 ? r.oneshot.pidfd : -1,
				r.gitdir_oneshot.daemon > 0 ? r.gitdir_oneshot.pidfd : -1},
	};
	e = jr_run(&s, r.o.timeout_ms, r.o.grace_ms, r.o.max_output, !r.o.json, oc);
	if (oc->stuck)
		abort_views(&r, oc);
	check_root_view(&r, oc);
	jr_oneshot_stop(&r.gitdir_oneshot);
	jr_oneshot_stop(&r.oneshot);
	if (r.changes.dir[0])
		jr_changes_collect(&r.changes, r.o.apply, r.o.policy_file);
	if (r.persist.attached) /* a shared log: only this jail's records */
		r.log.pidns = oc->pidns;
	e = finish(&r, oc, e);
	jr_changes_release(&r.changes);
	jr_viewlog_close(&r.log);
	jr_persist_detach(&r.persist);
	if (oc->pidns_fd >= 0)
		close(oc->pidns_fd);
	free(oc->out.buf);
	free(oc->err.buf);
	jf_policy_free(r.policy);
	jf_policy_free(r.mount_run);
	jr_gitdir_release(&r.gitdir);
	jr_home_release(&r.home);
	json_decref(request);
	return e;
}
