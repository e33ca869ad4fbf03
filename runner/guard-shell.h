/* SPDX-License-Identifier: MIT */
/* --shell strings split into simple commands (guard-shell.c). */
#pragma once

#include <stdbool.h>

#include "guard-walk.h"

/* Check a shell command string (guard-shell.c): split into simple commands,
 * each checked with jr_check_cmd, redirection targets with jr_check_path_arg. */
bool jr_check_shell(struct walk *w, const char *s);
