/* SPDX-License-Identifier: MIT */
/* Path arguments of a checked command: where they lead, what they may name
 * (guard-path.c). */
#pragma once

#include <stdbool.h>

#include "guard-walk.h"

/* Check argument @a as a path if it looks like one (see path_candidate). */
bool jr_check_path_arg(struct walk *w, const char *a);

/* jr_check_path_arg on argv[from..to). */
bool jr_check_paths(struct walk *w, int from, int to, char *const argv[]);

/* A program file that is the command's stdin fed by the string itself (a
 * pipe or here-document: "-", /dev/stdin, /dev/fd/0), or in --shell mode
 * any /dev/fd/N or /proc/self/fd/N the string opened: inline code. */
bool jr_fd_program(const struct walk *w, const char *path);
