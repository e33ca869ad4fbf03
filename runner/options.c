/* SPDX-License-Identifier: MIT */
/* jailrun's options: the command line and the --request JSON. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "options.h"
#include "units.h"

static const char usage_text[] =
	"Usage: jailrun [OPTIONS] -- COMMAND [ARG...]\n"
	"       jailrun [OPTIONS] --shell -- 'COMMAND STRING'\n"
	"       jailrun [OPTIONS] --request FILE|-\n"
	"\n"
	"Run COMMAND with a jailfs view of a project as its only view of the project,\n"
	"in its own mount, PID, IPC, UTS (and network, user) namespaces, after refusing\n"
	"the obviously dangerous. The guardrails are decided before anything starts;\n"
	"the namespace is what actually holds.\n"
	"\n"
	"Where it runs:\n"
	"  --root MOUNTPOINT   run in an existing jailfs mount (checked in\n"
	"                      /proc/self/mountinfo to be fuse.jailfs; anything else is\n"
	"                      refused). The jail shows it at the project's own path\n"
	"                      (the mount's source) and starts there. The view's own\n"
	"                      [run] rules apply too (its daemon hands them over);\n"
	"                      where they and the command line disagree the stricter\n"
	"                      wins: deny_exec of both, the smaller timeout and\n"
	"                      max_output, no allow lifts the other side's deny\n"
	"  --source DIR        run in a private jailfs view of DIR (default:\n"
	"                      --source .), kept for the next command of the same\n"
	"                      source, policy content and user, and unmounted once\n"
	"                      idle (--view-idle); jailfs --list shows it as\n"
	"                      persistent, jailfs --stop stops it. When DIR lies in a git work\n"
	"                      tree (a .git found upwards, on the same filesystem),\n"
	"                      the view is the work tree's top level, so that git and\n"
	"                      paths like ../include work as outside the jail; the\n"
	"                      command still starts in the directory jailrun was run\n"
	"                      from when that is DIR or below it, else in DIR. A work\n"
	"                      tree at / or at or above $HOME is not widened to.\n"
	"                      A linked work tree (git worktree add; its .git is a\n"
	"                      file) also gets the main repository's git directory\n"
	"                      at its own path, in a second view, once its\n"
	"                      worktrees/NAME/commondir and gitdir are checked to\n"
	"                      lead back: objects, refs, logs, HEAD, index and the\n"
	"                      work tree's own files writable (git status and commit\n"
	"                      work), hooks/, config, config.worktree, commondir,\n"
	"                      gitdir, modules/, objects/info/alternates (and those\n"
	"                      of worktrees/*/) read-only, so the host's git cannot\n"
	"                      be made to run code; the main work tree's files are\n"
	"                      not shown. Other work trees' .git files show as empty\n"
	"                      files (git in the jail must not prune them)\n"
	"  --no-git-root       the view is DIR itself, git work tree or not\n"
	"  --fresh             with --source: a one-shot view for this command only,\n"
	"                      unmounted when it ends (also with --audit FILE)\n"
	"  --view-idle SECONDS with --source: a view this command starts unmounts\n"
	"                      itself after SECONDS with no command in it and no\n"
	"                      request (default: [run] view_idle, else 600)\n"
	"  --changes DIR       with --source: a one-shot overlay view (jailfs --changes\n"
	"                      DIR): SOURCE is not written, every change lands in the\n"
	"                      layer DIR (made when absent). A checkpoint is taken\n"
	"                      before the command (--json: changes.checkpoint; undo\n"
	"                      with jailfs restore DIR ID), and the layer's change\n"
	"                      list is in the result (changes.list)\n"
	"  --changes-temp      the same on a temporary layer, removed after the\n"
	"                      command: its changes are reported and applied to\n"
	"                      SOURCE only with --apply\n"
	"  --apply             after the command, apply the layer to SOURCE (jailfs\n"
	"                      apply DIR: conflicts are left alone)\n"
	"  --policy FILE       policy for the one-shot view and the path guardrail\n"
	"                      (default: the project's .jailfs.ini, else\n"
	"                      ~/.config/jailfs/policy.ini, as jailfs; else the\n"
	"                      built-in profiles secrets + project; --check names it);\n"
	"                      its [run] section adds deny_exec, allow_exec, env,\n"
	"                      expose, home, timeout, max_output\n"
	"  --home DIR          the host directory shown as HOME (default: [run] home,\n"
	"                      else one per project, kept between commands, in\n"
	"                      $XDG_STATE_HOME/jailrun/homes/ or ~/.local/state/...)\n"
	"  --cwd DIR           working directory inside the view (relative to the\n"
	"                      view's root, or absolute under the project path);\n"
	"                      default: see --source, or the root with --root\n"
	"\n"
	"What it runs:\n"
	"  --shell             COMMAND is one string for /bin/sh -c; metacharacters\n"
	"                      are then allowed and `sh -c` itself too (the string is\n"
	"                      still split into simple commands and each is checked)\n"
	"  --request FILE|-    the request as one JSON object: {\"argv\": [...]} or\n"
	"                      {\"command\": \"...\", \"shell\": true}, and optional \"cwd\",\n"
	"                      \"timeout_ms\", \"max_output_bytes\", \"env\" (object or\n"
	"                      array of NAME / NAME=VALUE). Its fields override options.\n"
	"  --env NAME          pass NAME from jailrun's environment (also secret-looking\n"
	"                      names: only an exact --env passes those)\n"
	"  --env NAME=VALUE    set NAME in the command's environment\n"
	"  --net               keep the host network, and with it the host's abstract\n"
	"                      Unix sockets (default: a private network namespace\n"
	"                      with only loopback)\n"
	"\n"
	"Limits:\n"
	"  --timeout SECONDS   wall-clock limit, fractions allowed (default 120, 600 with\n"
	"                      --shell; 0 = none; [run] timeout in the policy).\n"
	"                      Then SIGTERM to every process of the jail, SIGKILL after\n"
	"                      --grace SECONDS (default 2). Grandchildren that called\n"
	"                      setsid or double-forked die too (PID namespace).\n"
	"  --max-output BYTES  per stream, suffixes K M G T (default 1M). Output\n"
	"                      beyond is drained, never blocking the command; the\n"
	"                      head and the tail (up to 64 KiB) are kept, with\n"
	"                      [... N bytes omitted ...] between them.\n"
	"  --rlimit-cpu SEC, --rlimit-as BYTES, --rlimit-nproc N, --rlimit-fsize BYTES\n"
	"                      resource limits of the command (defaults: cpu 3600 s,\n"
	"                      as 16G, nproc 4096, fsize 16G; 0 = unlimited;\n"
	"                      AddressSanitizer builds need --rlimit-as 0)\n"
	"\n"
	"Guardrails (refusal: exit 126, \"jailrun: denied: REASON [rule]\" on stderr):\n"
	"  - executable denylist, after resolving the command like exec would (PATH in\n"
	"    the jail, symlinks, ../ and /proc/self/root spellings, version suffixes:\n"
	"    python3.11 is python; renamed copies found by content). Default:\n"
	"    rm sudo su doas pkexec runuser mkfs* mke2fs mkswap wipefs dd shred mount\n"
	"    umount reboot halt poweroff shutdown killall5; plus chmod -R to a\n"
	"    world-writable mode, chown/chgrp -R, kill ... -1.\n"
	"  --deny-exec NAME    add a name or fnmatch pattern to the denylist\n"
	"  --allow-exec NAME   take a name off (also lifts its chmod/chown/kill rule)\n"
	"  --allow-inline NAME let interpreter NAME run inline code (python3 -c ...);\n"
	"                      also [run] allow_inline. Not for shells: --shell checks\n"
	"                      a shell's -c string instead\n"
	"  - interpreter inline code: sh bash dash zsh ksh fish python* node deno perl*\n"
	"    ruby* php* lua* Rscript osascript with -c -e -E -r --eval --command or a\n"
	"    cluster holding them (-ce, -xc); shells are allowed with --shell\n"
	"  - wrappers are looked through: env (-S too), nice, nohup, timeout, stdbuf,\n"
	"    setsid, time, xargs, busybox, find -exec/-ok/-delete, git -c alias.x=!...,\n"
	"    ld-linux*.so, command, exec, strace, flock -c, watch\n"
	"  - shell metacharacters ; | & > < ` $( newline in the command name without\n"
	"    --shell (arguments are text: no shell reads them)\n"
	"  - path arguments (containing /, starting with ~, naming an existing entry,\n"
	"    --opt=VALUE) must not be DENIED; written from inside the project they\n"
	"    must stay in it (../../etc/passwd leaves it); otherwise they may name what\n"
	"    the jail shows read-only (/usr /bin /lib*, its /etc entries, [run] expose)\n"
	"    and its own /proc, /tmp and /dev nodes. echo/printf arguments are text.\n"
	"    --shell follows cd (not out of a ( ) subshell) and skips here-documents\n"
	"  --check             only decide: print the verdict, run nothing (exit 0 or 126)\n"
	"\n"
	"Output and status:\n"
	"  Without --json, output streams through live; past the limit a note goes to\n"
	"  stderr. Exit status: the command's, 128+N when killed by signal N, 124 timed\n"
	"  out, 126 refused, 125 jailrun itself failed, 2 a usage error (options,\n"
	"  --request). Every failure says why on stderr (and, with --json, in the\n"
	"  result's \"error\").\n"
	"  --json              one JSON object on stdout: exit_code (the command's; -100\n"
	"                      denied, -101 timed out; 128+N for a signal), signal,\n"
	"                      stdout, stderr (invalid UTF-8 bytes become U+FFFD),\n"
	"                      stdout_truncated, stderr_truncated, stdout_bytes,\n"
	"                      stderr_bytes, timed_out, network_refused, denied,\n"
	"                      reason, rule,\n"
	"                      duration_ms, refusals (what the view refused: op,\n"
	"                      path, zone, rule, errno, count; null when unknown),\n"
	"                      refusals_omitted, refusals_unknown, hint (+ audit).\n"
	"                      stdin is /dev/null.\n"
	"  --audit FILE        one-shot only: jailfs records everything the command did\n"
	"                      (JSON Lines, level all) and the result gains\n"
	"                      \"audit\": {denied, hidden, written_files, records}.\n"
	"                      Without it the one-shot view logs its refusals to a\n"
	"                      private file; --root reads the mount's own log\n"
	"  After the command, what the view refused and a hint (what to do) go to\n"
	"  stderr too, when there is any.\n"
	"\n"
	"The jail: the project at its own path (rw per the policy, nosuid, nodev),\n"
	"a linked work tree's main git directory (see --source),\n"
	"/usr /bin /sbin /lib* read-only, a reduced /etc, fresh /proc, minimal /dev,\n"
	"private /tmp, no host sockets. HOME is the project's own jail home, at the\n"
	"user's home path, kept between commands (caches, logs); of the host's home\n"
	"only ~/.rustup ~/.cargo/bin ~/.pyenv ~/.nvm ~/.local/bin, read-only, and\n"
	"never a DENIED entry. A command only the host has: exit 127, and how to\n"
	"expose it.\n"
	"no_new_privs, no capabilities, seccomp (mount, unshare, setns, ptrace, bpf,\n"
	"keyctl, io_uring, kexec, modules, open_by_handle_at... fail with EPERM).\n"
	"Environment: only PATH LANG LC_* TERM TZ USER, HOME, and --env / [run] env;\n"
	"names holding TOKEN SECRET KEY PASSWORD CREDENTIAL or starting AWS_ GITHUB_\n"
	"SSH_AUTH_SOCK pass only when named exactly. A value that holds a secret (a\n"
	"token, a key, a URL with a password) is left out unless --env names it;\n"
	"the result's env_dropped lists those names.\n"
	"\n"
	"Environment of jailrun: JAILFS overrides the jailfs binary used for --source.\n"
	"\n"
	"  -h, --help          this text\n"
	"  -V, --version       print the version\n";

static uint64_t parse_size(const char *s, const char *opt)
{
	uint64_t v;
	int r = jf_parse_size(s, strlen(s), false, &v);

	if (r == -ERANGE)
		usage_error("%s: too large: '%s'", opt, s);
	if (r < 0)
		usage_error("%s: not a size: '%s' (bytes, or with K M G T)", opt, s);
	return v;
}

static uint64_t parse_seconds_ms(const char *s, const char *opt)
{
	uint64_t v;
	int r = jf_parse_duration_ms(s, strlen(s), &v);

	if (r == -ERANGE)
		usage_error("%s: too large: '%s'", opt, s);
	if (r < 0)
		usage_error("%s: not a number of seconds: '%s' (at most 3 decimals)", opt, s);
	return v;
}

static uint64_t parse_count(const char *s, const char *opt)
{
	uint64_t v;
	int r = jf_parse_count(s, strlen(s), &v);

	if (r == -ERANGE)
		usage_error("%s: too large: '%s'", opt, s);
	if (r < 0)
		usage_error("%s: not a number: '%s'", opt, s);
	return v;
}

static void push(const char **list, int *n, const char *v, const char *opt)
{
	if (*n >= MAX_LIST - 1)
		usage_error("too many %s options", opt);
	list[(*n)++] = v;
}

enum {
	OPT_ROOT = 256,
	OPT_SOURCE,
	OPT_POLICY,
	OPT_SHELL,
	OPT_CWD,
	OPT_TIMEOUT,
	OPT_MAX_OUTPUT,
	OPT_NET,
	OPT_ENV,
	OPT_JSON,
	OPT_REQUEST,
	OPT_DENY,
	OPT_ALLOW,
	OPT_ALLOW_INLINE,
	OPT_AUDIT,
	OPT_CHECK,
	OPT_GRACE,
	OPT_RL_CPU,
	OPT_RL_AS,
	OPT_RL_NPROC,
	OPT_RL_FSIZE,
	OPT_PLAIN_ROOT,
	OPT_NO_GIT_ROOT,
	OPT_HOME,
	OPT_FRESH,
	OPT_VIEW_IDLE,
	OPT_CHANGES,
	OPT_CHANGES_TEMP,
	OPT_APPLY,
};

/* --changes DIR, --changes-temp and --apply: an overlay one-shot view of
 * --source, one layer. */
static void check_changes(const struct opts *o)
{
	if (o->changes && o->changes_temp)
		usage_error("--changes DIR and --changes-temp exclude each other");
	if (o->apply && !o->changes && !o->changes_temp)
		usage_error("--apply needs --changes DIR or --changes-temp");
	if ((o->changes || o->changes_temp) && o->root)
		usage_error("--changes needs a --source view: a running jailfs writes SOURCE "
			    "(mount it with jailfs --changes DIR instead)");
	if (o->changes && !*o->changes)
		usage_error("--changes: an empty DIR");
}

void jr_parse_args(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"root", required_argument, NULL, OPT_ROOT},
		{"source", required_argument, NULL, OPT_SOURCE},
		{"no-git-root", no_argument, NULL, OPT_NO_GIT_ROOT},
		{"home", required_argument, NULL, OPT_HOME},
		{"fresh", no_argument, NULL, OPT_FRESH},
		{"view-idle", required_argument, NULL, OPT_VIEW_IDLE},
		{"changes", required_argument, NULL, OPT_CHANGES},
		{"changes-temp", no_argument, NULL, OPT_CHANGES_TEMP},
		{"apply", no_argument, NULL, OPT_APPLY},
		{"policy", required_argument, NULL, OPT_POLICY},
		{"shell", no_argument, NULL, OPT_SHELL},
		{"cwd", required_argument, NULL, OPT_CWD},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"max-output", required_argument, NULL, OPT_MAX_OUTPUT},
		{"net", no_argument, NULL, OPT_NET},
		{"env", required_argument, NULL, OPT_ENV},
		{"json", no_argument, NULL, OPT_JSON},
		{"request", required_argument, NULL, OPT_REQUEST},
		{"deny-exec", required_argument, NULL, OPT_DENY},
		{"allow-exec", required_argument, NULL, OPT_ALLOW},
		{"allow-inline", required_argument, NULL, OPT_ALLOW_INLINE},
		{"audit", required_argument, NULL, OPT_AUDIT},
		{"check", no_argument, NULL, OPT_CHECK},
		{"grace", required_argument, NULL, OPT_GRACE},
		{"rlimit-cpu", required_argument, NULL, OPT_RL_CPU},
		{"rlimit-as", required_argument, NULL, OPT_RL_AS},
		{"rlimit-nproc", required_argument, NULL, OPT_RL_NPROC},
		{"rlimit-fsize", required_argument, NULL, OPT_RL_FSIZE},
		/* hidden, for the test suite only: accept a plain directory as --root */
		{"test-plain-root", no_argument, NULL, OPT_PLAIN_ROOT},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int c;

	/* a first pass finds --json (also abbreviated), so that an error in an
	 * option before it is a JSON result too */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1)
		jr_fail_json |= c == OPT_JSON;
	/* getopt stays quiet: usage_error() says it once, as JSON with --json */
	optind = 0;
	while ((c = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_ROOT:
			o->root = optarg;
			break;
		case OPT_SOURCE:
			o->source = optarg;
			break;
		case OPT_POLICY:
			o->policy_file = optarg;
			break;
		case OPT_SHELL:
			o->shell = true;
			break;
		case OPT_CWD:
			o->cwd = optarg;
			break;
		case OPT_TIMEOUT:
			o->timeout_ms = parse_seconds_ms(optarg, "--timeout");
			o->timeout_set = true;
			break;
		case OPT_MAX_OUTPUT:
			o->max_output = parse_size(optarg, "--max-output");
			o->max_output_set = true;
			break;
		case OPT_NET:
			o->net = true;
			break;
		case OPT_ENV:
			push(o->env, &o->n_env, optarg, "--env");
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_REQUEST:
			o->request = optarg;
			break;
		case OPT_DENY:
			push(o->deny, &o->n_deny, optarg, "--deny-exec");
			break;
		case OPT_ALLOW:
			push(o->allow, &o->n_allow, optarg, "--allow-exec");
			break;
		case OPT_ALLOW_INLINE:
			push(o->allow_inline, &o->n_allow_inline, optarg, "--allow-inline");
			break;
		case OPT_AUDIT:
			o->audit = optarg;
			break;
		case OPT_CHECK:
			o->check_only = true;
			break;
		case OPT_GRACE:
			o->grace_ms = parse_seconds_ms(optarg, "--grace");
			break;
		case OPT_RL_CPU:
			o->limits.cpu_s = (parse_seconds_ms(optarg, "--rlimit-cpu") + 999) / 1000;
			break;
		case OPT_RL_AS:
			o->limits.as_bytes = parse_size(optarg, "--rlimit-as");
			break;
		case OPT_RL_NPROC:
			o->limits.nproc = parse_count(optarg, "--rlimit-nproc");
			break;
		case OPT_RL_FSIZE:
			o->limits.fsize_bytes = parse_size(optarg, "--rlimit-fsize");
			break;
		case OPT_PLAIN_ROOT:
			o->plain_root = true;
			break;
		case OPT_NO_GIT_ROOT:
			o->no_git_root = true;
			break;
		case OPT_HOME:
			o->home = optarg;
			break;
		case OPT_FRESH:
			o->fresh = true;
			break;
		case OPT_VIEW_IDLE:
			o->view_idle_ms = parse_seconds_ms(optarg, "--view-idle");
			if (!o->view_idle_ms)
				usage_error(
					"--view-idle must be more than 0 (--fresh: no view kept)");
			break;
		case OPT_CHANGES:
			o->changes = optarg;
			break;
		case OPT_CHANGES_TEMP:
			o->changes_temp = true;
			break;
		case OPT_APPLY:
			o->apply = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case 'V':
			printf("jailrun %s\n", JAILFS_VERSION);
			exit(0);
		case ':':
			usage_error("option %s needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				usage_error("invalid option -%c", optopt);
			usage_error("unrecognized option %s", argv[optind - 1]);
		}
	}
	o->argv = argv + optind;
	o->argc = argc - optind;
	if (o->root && o->source)
		usage_error("--root and --source exclude each other");
	if (o->root && (o->fresh || o->view_idle_ms))
		usage_error("--fresh and --view-idle are for --source views, not --root");
	if (o->audit && o->root)
		usage_error(
			"--audit needs the one-shot view (--source): a running jailfs has its own "
			"--audit");
	check_changes(o);
}

/* --request: the whole request as one JSON object. */
/* --request "argv": a non-empty array of strings (borrowed from @v). */
static void request_argv(struct opts *o, json_t *v)
{
	size_t n = json_array_size(v);

	if (!json_is_array(v) || n == 0)
		usage_error("--request: \"argv\" must be a non-empty array of strings");
	o->argv = calloc(n + 1, sizeof(char *));
	if (!o->argv)
		die("out of memory");
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(v, i));

		if (!s)
			usage_error("--request: \"argv\"[%zu] is not a string", i);
		o->argv[i] = (char *)s;
	}
	o->argc = (int)n;
}

/* --request "env": {"NAME": "VALUE"} or ["NAME", "NAME=VALUE"]. */
static void request_env(struct opts *o, json_t *v)
{
	const char *name;
	json_t *val;
	size_t i;

	if (json_is_object(v)) {
		json_object_foreach(v, name, val)
		{
			char *s;

			if (!json_is_string(val))
				usage_error("--request: \"env\".%s must be a string", name);
			if (asprintf(&s, "%s=%s", name, json_string_value(val)) < 0)
				die("out of memory");
			push(o->env, &o->n_env, s, "env");
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, val)
		{
			if (!json_is_string(val))
				usage_error("--request: \"env\"[%zu] must be a string", i);
			push(o->env, &o->n_env, json_string_value(val), "env");
		}
	} else {
		usage_error("--request: \"env\" must be an object or an array");
	}
}

void jr_load_request(struct opts *o, json_t **keep)
{
	json_error_t jerr;
	json_t *r, *v;
	const char *key;

	r = strcmp(o->request, "-") == 0 ? json_loadf(stdin, 0, &jerr)
					 : json_load_file(o->request, 0, &jerr);
	if (!r)
		usage_error("--request %s:%d: %s", o->request, jerr.line, jerr.text);
	if (!json_is_object(r))
		usage_error("--request %s: not a JSON object", o->request);
	*keep = r;
	if (o->argc > 0)
		usage_error("--request and a COMMAND after -- exclude each other");
	json_object_foreach(r, key, v)
	{
		if (!strcmp(key, "argv")) {
			request_argv(o, v);
		} else if (!strcmp(key, "command")) {
			if (!json_is_string(v))
				usage_error("--request: \"command\" must be a string");
			o->shell_cmd = (char *)json_string_value(v);
		} else if (!strcmp(key, "shell")) {
			if (!json_is_boolean(v))
				usage_error("--request: \"shell\" must be true or false");
			o->shell = json_is_true(v);
		} else if (!strcmp(key, "cwd")) {
			if (!json_is_string(v))
				usage_error("--request: \"cwd\" must be a string");
			o->cwd = json_string_value(v);
		} else if (!strcmp(key, "timeout_ms")) {
			if (!json_is_integer(v) || json_integer_value(v) < 0)
				usage_error(
					"--request: \"timeout_ms\" must be a non-negative integer");
			o->timeout_ms = json_integer_value(v);
			o->timeout_set = true;
		} else if (!strcmp(key, "max_output_bytes")) {
			if (!json_is_integer(v) || json_integer_value(v) < 0)
				usage_error(
					"--request: \"max_output_bytes\" must be a non-negative "
					"integer");
			o->max_output = json_integer_value(v);
			o->max_output_set = true;
		} else if (!strcmp(key, "env")) {
			request_env(o, v);
		} else {
			usage_error("--request: unknown field \"%s\"", key);
		}
	}
	if (o->shell_cmd && o->argc > 0)
		usage_error("--request: give \"argv\" or \"command\", not both");
	if (o->shell_cmd && !o->shell)
		usage_error("--request: \"command\" needs \"shell\": true (or give \"argv\")");
}
