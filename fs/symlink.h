/* SPDX-License-Identifier: MIT */
/*
 * Symlink targets (symlink.c): which targets the view shows, rewritten or
 * as they are, and which an agent may create.
 */
#pragma once

#include <stddef.h>

/* Decide how the symlink at view dir @dir with raw backing target @target is
 * shown: returns 0 with the view target in @out (rewritten when absolute
 * inside SOURCE), or -ENOENT when it must be hidden. */
int jf_symlink_view(const char *dir, const char *target, char *out, size_t size);
/* Check a target the agent wants to create in view dir @dir: 0 or -EACCES. */
int jf_symlink_check_new(const char *dir, const char *target);
