/* SPDX-License-Identifier: MIT */
/*
 * The daemon's command line and -o options (options.c).
 */
#pragma once

#define FUSE_USE_VERSION 314

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit.h"

struct jf_options {
	const char *source;	/* SOURCE as given */
	const char *mountpoint; /* MOUNTPOINT as given */
	const char *policy;	/* --policy / -o policy=, NULL = built-in default */
	char *policy_abs;	/* realpath of policy once loaded (owned), for --list */
	bool foreground;	/* -f */
	bool debug;		/* -d */
	bool verbose;		/* -v: start-up notices on every mount */
	bool read_only;		/* --read-only / -o read_only / -o ro */
	bool help, version;
	double entry_timeout;	 /* seconds, -o entry_timeout= */
	double attr_timeout;	 /* seconds, -o attr_timeout= */
	double negative_timeout; /* seconds, -o negative_timeout= */
	unsigned max_threads;	 /* -o max_threads= (idle worker threads kept) */
	bool no_splice;		 /* -o no_splice */
	bool no_watch;		 /* -o nowatch: no inotify invalidation (watch.c) */
	bool fast_open;		 /* zero-message opens (FUSE no_open), as chosen by mount.c */
	bool fast_open_given;	 /* -o fast_open / -o nofast_open said which */
	bool allow_others;	 /* -o allow_other or allow_root (also passed to FUSE) */
	bool no_passthrough;	 /* -o nopassthrough: every read and write through the daemon */
	bool io_uring;		 /* -o io_uring: FUSE over io_uring where the kernel allows */
	const char *stats;	 /* --stats FILE / -o stats=FILE: request counts (stats.h) */
	uint64_t idle_exit_ms;	 /* --idle-exit: ms without a request to exit after, 0 = never */
	const char *idle_lock;	 /* --idle-lock FILE: a shared flock on it keeps us (idle.h) */
	const char *changes;	 /* --changes DIR / -o changes=DIR: overlay mode (changes.h) */
	struct jf_audit_config audit;
	const char *audit_level;    /* as given, parsed in mount.c */
	struct fuse_args fuse_args; /* argv for fuse_session_new (argv[0] + -o ...) */
	char **o_copies;	    /* the split -o strings: policy=, audit= ... point into them */
	size_t n_o_copies;
};

/* Parse argv into @opts. Returns 0, or 2 after printing a usage error to
 * stderr. @opts->fuse_args is owned by the caller (fuse_opt_free_args). */
int jf_options_parse(int argc, char **argv, struct jf_options *opts);
void jf_options_usage(const char *prog);
/* Free what jf_options_parse allocated (fuse_args and the -o copies). */
void jf_options_free(struct jf_options *opts);
