/* SPDX-License-Identifier: MIT */
/* Wrappers that run their arguments (guard-wrap.c): the table, and how a
 * wrapper's command line reads. Pure. */
#pragma once

#include <stdbool.h>

/*
 * Wrappers that run their arguments, described the way getopt(3) would see
 * them. @opts lists the short options and @longs the long ones, each name
 * followed by what it takes:
 *   ':'  a value (attached, or the next word)
 *   '='  a shell command string, run with sh -c (flock -c, su -c, script -c)
 *   '@'  a debugger command (gdb -ex): refused when it runs a program
 *   '!'  nothing; the operands are then an argv run as is, not a shell string
 *        (watch -x), and options end at the first operand (gdb --args)
 *   '~'  nothing; the operands are then not run at all (command -v)
 * Long options also match by unambiguous prefix, as getopt_long allows; a
 * prefix we take for the wrong option at worst refuses. @positional operands
 * (timeout DURATION, flock FILE, chroot NEWROOT, sg GROUP) come before the
 * command; a lone "-" (su -, sg -) is skipped.
 */
struct wrapper {
	const char *name;
	const char *opts;
	const char *const *longs;
	int positional;
	unsigned flags;
};

enum {
	WR_SHELL_ARGS =
		1,	  /* the command words are joined into one sh -c string (watch, sg, eval) */
	WR_NO_CMD = 2,	  /* the operands are files or a user, never a command (script, su) */
	WR_PERMUTE = 4,	  /* options may follow operands (getopt permutation): look at all */
	WR_LONG_ONLY = 8, /* -word is a long option (getopt_long_only: gdb) */
};

/* What a wrapper's command line says. */
struct wr_parse {
	int cmd;	       /* first word of the command, argc when none */
	const char *shell;     /* a '=' option's shell command string, or NULL */
	const char *shell_opt; /* the word that carried it */
	const char *dbg;       /* a '@' value that runs a program, or NULL */
	const char *dbg_what, *dbg_opt;
	bool direct; /* a '!' flag: argv, not a shell string */
	bool nocmd;  /* a '~' flag: the operands do not run */
};

/* Read wrapper @wr's command line @argv (argv[0] the wrapper) into @o. */
void jr_wrapper_parse(const struct wrapper *wr, int argc, char *const argv[], struct wr_parse *o);

/* Is @name the dynamic loader (ld-linux*.so*, ld64.so*, ld-musl-*.so*,
 * ld.so)? */
bool jr_is_loader(const char *name);

/* The dynamic loader run as a program: ld-linux-x86-64.so.2 [OPTION]... PROGRAM */
extern const struct wrapper jr_loader;

/* The wrapper named @name (version-stripped) in the table, or NULL. */
const struct wrapper *jr_find_wrapper(const char *name);
