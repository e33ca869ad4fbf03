/* SPDX-License-Identifier: MIT */
/*
 * jailrun's options (options.c): the command line, and the request a
 * --request file gives instead. A wrong option is a usage error (exit 2,
 * fail.h); nothing here returns an error.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "sandbox.h"

#define MAX_LIST 256

/* What the command line and the request asked for. The strings point into
 * argv or into the request's JSON (kept by the caller), or are small
 * allocations kept until jailrun exits. */
struct opts {
	const char *root, *source, *policy_file, *cwd, *audit, *request, *home;
	const char *changes; /* --changes DIR */
	bool shell, net, json, check_only, plain_root, no_git_root, fresh;
	bool changes_temp, apply;				 /* --changes-temp, --apply */
	uint64_t timeout_ms, max_output, grace_ms, view_idle_ms; /* view_idle_ms 0: unset */
	bool timeout_set, max_output_set;
	const char *env[MAX_LIST];
	int n_env;
	const char *deny[MAX_LIST], *allow[MAX_LIST], *allow_inline[MAX_LIST];
	int n_deny, n_allow, n_allow_inline;
	struct jr_limits limits;
	char **argv;
	int argc;
	char *shell_cmd; /* --shell or request "command" */
};

/* Parse the command line into @o (its defaults set by the caller);
 * --help and --version print and exit. */
void jr_parse_args(struct opts *o, int argc, char **argv);

/* Read the --request file o->request ("-": stdin) into @o; *@keep is the
 * parsed JSON, which @o's strings point into (the caller keeps it). */
void jr_load_request(struct opts *o, json_t **keep);
