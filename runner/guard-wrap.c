/* SPDX-License-Identifier: MIT */
/* Wrappers that run their arguments: the table and its reading. */
#include <fnmatch.h>
#include <stdbool.h>
#include <string.h>

#include "cleanup.h"
#include "guard-lang.h"
#include "guard-wrap.h"

static const char *const long_none[] = {NULL};
static const char *const wl_nice[] = {"adjustment:", NULL};
static const char *const wl_timeout[] = {"signal:", "kill-after:", NULL};
static const char *const wl_stdbuf[] = {"input:", "output:", "error:", NULL};
static const char *const wl_time[] = {"format:", "output:", NULL};
static const char *const wl_xargs[] = {
	"arg-file:",  "delimiter:",	   "max-lines:", "max-args:", "max-procs:",
	"max-chars:", "process-slot-var:", "replace:",	 "eof:",      NULL};
static const char *const wl_strace[] = {
	"output:", "trace:", "signal:", "attach:", "user:", "env:", "string-limit:", NULL};
static const char *const wl_ionice[] = {"class:", "classdata:", "pid:", "pgid:", "uid:", NULL};
static const char *const wl_chrt[] = {"sched-runtime:", "sched-period:", "sched-deadline:", NULL};
static const char *const wl_chroot[] = {"userspec:", "groups:", NULL};
static const char *const wl_flock[] = {
	"timeout:", "wait:", "conflict-exit-code:", "command=", NULL};
static const char *const wl_script[] = {
	"command=",    "echo:",		  "log-in:",	   "log-out:", "log-io:",
	"log-timing:", "logging-format:", "output-limit:", NULL};
static const char *const wl_su[] = {"command=", "session-command=",	  "group:", "supp-group:",
				    "shell:",	"whitelist-environment:", NULL};
static const char *const wl_prlimit[] = {"pid:", "output:", NULL};
static const char *const wl_setpriv[] = {"ruid:",
					 "euid:",
					 "rgid:",
					 "egid:",
					 "reuid:",
					 "regid:",
					 "groups:",
					 "inh-caps:",
					 "ambient-caps:",
					 "bounding-set:",
					 "securebits:",
					 "pdeathsig:",
					 "selinux-label:",
					 "apparmor-profile:",
					 "landlock-access:",
					 "landlock-rule:",
					 "seccomp-filter:",
					 NULL};
static const char *const wl_unshare[] = {
	"setuid:",    "setgid:",   "root:",	 "wd:",	       "propagation:",
	"setgroups:", "map-user:", "map-group:", "map-users:", "map-groups:",
	"monotonic:", "boottime:", NULL};
static const char *const wl_nsenter[] = {"target:", "setuid:", "setgid:", "wdns:", NULL};
static const char *const wl_watch[] = {"interval:", "equexit:", "exec!", NULL};
static const char *const wl_rlwrap[] = {
	"break-chars:", "command-name:",  "histsize:",		"file:",   "history-filename:",
	"logfile:",	"prompt-colour:", "substitute-prompt:", "filter=", NULL};
static const char *const wl_fakeroot[] = {"lib:", "faked:", NULL};
static const char *const wl_gdb[] = {"ex@",
				     "eval-command@",
				     "iex@",
				     "init-eval-command@",
				     "x:",
				     "command:",
				     "ix:",
				     "init-command:",
				     "p:",
				     "pid:",
				     "cd:",
				     "d:",
				     "directory:",
				     "s:",
				     "symbols:",
				     "e:",
				     "exec:",
				     "se:",
				     "c:",
				     "core:",
				     "tty:",
				     "i:",
				     "interpreter:",
				     "b:",
				     "l:",
				     "D:",
				     "data-directory:",
				     "args!",
				     NULL};
static const char *const wl_ld[] = {
	"library-path:",	 "inhibit-rpath:",     "audit:", "preload:", "argv0:",
	"glibc-hwcaps-prepend:", "glibc-hwcaps-mask:", NULL};

static const struct wrapper wrappers[] = {
	{"nice", "n:", wl_nice, 0, 0},
	{"nohup", "", long_none, 0, 0},
	{"timeout", "s:k:", wl_timeout, 1, 0},
	{"stdbuf", "i:o:e:", wl_stdbuf, 0, 0},
	{"setsid", "", long_none, 0, 0},
	{"time", "f:o:", wl_time, 0, 0},
	{"xargs", "a:d:E:I:L:n:P:s:", wl_xargs, 0, 0},
	{"ionice", "c:n:p:P:u:", wl_ionice, 0, 0},
	{"chrt", "T:P:D:", wl_chrt, 1, 0},
	{"taskset", "", long_none, 1, 0},
	{"strace", "e:o:O:p:P:s:S:u:E:X:b:I:", wl_strace, 0, 0},
	{"ltrace", "e:o:p:s:u:n:A:a:D:F:l:x:L:", wl_strace, 0, 0},
	{"valgrind", "", long_none, 0, 0}, /* its options all take --opt=value */
	{"gdb", "", wl_gdb, 0, WR_PERMUTE | WR_LONG_ONLY},
	{"unbuffer", "", long_none, 0, 0},
	{"catchsegv", "", long_none, 0, 0},
	{"fakeroot", "l:s:i:", wl_fakeroot, 0, 0},
	{"chroot", "", wl_chroot, 1, 0},
	{"unshare", "S:G:R:w:", wl_unshare, 0, 0},
	{"nsenter", "t:S:G:W:", wl_nsenter, 0, 0},
	{"prlimit", "p:o:", wl_prlimit, 0, 0},
	{"setpriv", "", wl_setpriv, 0, 0},
	{"rlwrap", "b:C:D:e:f:F:g:H:l:O:P:q:s:S:t:w:z=", wl_rlwrap, 0, 0},
	{"flock", "w:E:c=", wl_flock, 1, 0},
	{"watch", "n:q:x!", wl_watch, 0, WR_SHELL_ARGS},
	{"sg", "c=", long_none, 1, WR_SHELL_ARGS},
	{"script", "c=E:I:O:T:m:o:", wl_script, 0, WR_NO_CMD | WR_PERMUTE},
	{"su", "c=g:G:s:w:", wl_su, 0, WR_NO_CMD | WR_PERMUTE},
	{"runuser", "c=g:G:s:w:", wl_su, 0, WR_NO_CMD | WR_PERMUTE},
	{"busybox", "", long_none, 0, 0},
	{"toybox", "", long_none, 0, 0},
	/* shell builtins */
	{"command", "v~V~", long_none, 0, 0},
	{"builtin", "", long_none, 0, 0},
	{"exec", "a:", long_none, 0, 0},
	{"eval", "", long_none, 0, WR_SHELL_ARGS},
};

const struct wrapper jr_loader = {"ld.so", "", wl_ld, 0, 0};

/* Note option word @a of kind @k with value @val (NULL when none). */
static void wr_note(struct wr_parse *o, char k, const char *a, const char *val)
{
	if (k == '=') {
		o->shell = val ? val : "";
		o->shell_opt = a;
	} else if (k == '@' && val && (o->dbg_what = jr_gdb_runs_code(val))) {
		o->dbg = val;
		o->dbg_opt = a;
	} else if (k == '!') {
		o->direct = true;
	} else if (k == '~') {
		o->nocmd = true;
	}
}

/* Option word argv[i] of wrapper @wr; returns the index of the last word it
 * used (its value may be the next one). */
static int wr_option(const struct wrapper *wr, int argc, char *const argv[], int i,
		     struct wr_parse *o)
{
	const char *a = argv[i], *val;
	char k;

	if (a[1] == '-' || (wr->flags & WR_LONG_ONLY)) {
		const char *name = a + (a[1] == '-' ? 2 : 1);
		size_t n = strcspn(name, "=");

		k = jr_long_kind(wr->longs, name, n);
		val = name[n] ? name + n + 1 : NULL;
		if (k && strchr(OPT_VALUE, k) && !val && i + 1 < argc)
			val = argv[++i];
		wr_note(o, k, a, val);
		return i;
	}
	for (int j = 1; a[j]; j++) {
		k = jr_opt_kind(wr->opts, a[j]);
		if (k && strchr(OPT_VALUE, k)) {
			val = a[j + 1] ? a + j + 1 : (i + 1 < argc ? argv[++i] : NULL);
			wr_note(o, k, a, val);
			break;
		}
		wr_note(o, k, a, NULL);
	}
	return i;
}

void jr_wrapper_parse(const struct wrapper *wr, int argc, char *const argv[], struct wr_parse *o)
{
	int pos = 0;

	*o = (struct wr_parse){.cmd = argc};
	for (int i = 1; i < argc && !o->shell && !o->dbg; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			if (o->cmd == argc && !(wr->flags & WR_NO_CMD))
				o->cmd = i + 1 + (wr->positional - pos);
			break;
		}
		if (a[0] == '-' && a[1]) {
			i = wr_option(wr, argc, argv, i, o);
		} else if (strcmp(a, "-") == 0 || pos++ < wr->positional ||
			   (wr->flags & WR_NO_CMD)) {
			continue; /* su -, timeout DURATION, script FILE */
		} else {
			if (o->cmd == argc)
				o->cmd = i;
			if (!(wr->flags & WR_PERMUTE) || o->direct)
				break;
		}
	}
	if (o->cmd > argc || o->nocmd)
		o->cmd = argc;
}

bool jr_is_loader(const char *name)
{
	return fnmatch("ld-linux*.so*", name, 0) == 0 || fnmatch("ld64.so*", name, 0) == 0 ||
	       fnmatch("ld-musl-*.so*", name, 0) == 0 || strcmp(name, "ld.so") == 0;
}

const struct wrapper *jr_find_wrapper(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(wrappers); i++)
		if (strcmp(wrappers[i].name, name) == 0)
			return &wrappers[i];
	return NULL;
}
