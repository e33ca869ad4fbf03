/* SPDX-License-Identifier: MIT */
/*
 * One request under the guardrails' check (guard-walk.c): the request
 * (jr_guard), the verdict it gets (jr_verdict), a walk through its commands
 * (struct walk) and the refusal that ends the walk (jr_deny). Every check of
 * guard*.c returns true when it refused, with the verdict filled by
 * jr_deny(); false when it let the command through.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "cleanup.h"

struct jr_ident;
struct jr_view;

struct jr_verdict {
	bool denied;
	char rule[64];	  /* machine-readable rule id, e.g. "inline-code" */
	char reason[640]; /* human text, e.g. "interpreter inline code (python3 -c)" */
	/* the executable name an allow_exec would lift the rule for ("rm" for
	 * exec-denylist, exec-copy, chmod-recursive...), "" for other rules */
	char subject[NAME_MAX + 1];
	/* inline-code: the interpreter whose inline code allow_inline would let
	 * run (as typed, "python3"), "" for none; @needs_shell: a shell's -c
	 * string, which --shell checks as a command line */
	char interp[NAME_MAX + 1];
	bool needs_shell;
};

struct jr_guard {
	const struct jr_view *view;
	const char *cwd;      /* absolute jail path of the command's working directory */
	const char *path_env; /* PATH as the child will get it */
	const char *home;     /* HOME inside the jail (for "~") */
	/* the environment the command will get (NAME=VALUE, NULL-terminated):
	 * variables that make git or node run code are checked; NULL for none */
	char *const *envp;
	bool shell;	    /* --shell given */
	const char **deny;  /* effective denylist (fnmatch patterns), NULL-terminated */
	const char **allow; /* names exempted from the built-in rules, NULL-terminated */
	/* interpreters whose inline code (-c, -e, -m timeit...) may run:
	 * patterns, NULL-terminated, or NULL for none */
	const char *const *allow_inline;
	/* lazily built table of denied binaries in PATH (renamed-copy check) */
	struct jr_ident *idents;
	size_t n_idents;
	bool idents_built;
};

#define MAX_DEPTH 8 /* wrappers and nested shell strings, before "nesting" refuses */

/* One walk through a request: where the verdict goes, and the context the
 * command being checked will run in. */
struct walk {
	struct jr_guard *g;
	struct jr_verdict *v;
	const char *cwd;      /* may differ from g->cwd under env -C */
	const char *path_env; /* may differ under env PATH=... */
	int depth;
	bool stdin_text; /* --shell: stdin is a pipe or here-document of the string */
};

/* Refuse: fill the verdict with @rule and the formatted reason. Returns true. */
_printf_(3, 4) bool jr_deny(struct walk *w, const char *rule, const char *fmt, ...);
