/* SPDX-License-Identifier: MIT */
/*
 * The zone of a view path by its name (zone-name.c): the policy applied to
 * paths of the view. Lock-free, no backing access.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "symlink.h"

/* Classify view path @path (@len bytes, @is_dir: as a directory) with
 * jf_fs.policy into @v; names refused by jf_check_name are DENIED. */
void jf_classify_path(const char *path, size_t len, bool is_dir, struct jf_verdict *v);
/* Is view path @path the jailfs mountpoint (MOUNTPOINT inside SOURCE)? */
bool jf_is_mnt_path(const char *path);
/* The symlink rule's view of the daemon (jf_fs's SOURCE, mountpoint and
 * policy), for jf_symlink_view() and jf_symlink_check_new(). */
struct jf_symlink_ctx jf_view_symlink_ctx(void);
