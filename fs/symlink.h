/* SPDX-License-Identifier: MIT */
/*
 * Symlink targets (symlink.c): which targets the view shows, rewritten or
 * as they are, and which an agent may create. No backing access, no global
 * state: what a system target leads to is asked of ctx->host_check;
 * thread-safe when host_check is.
 */
#pragma once

#include <stddef.h>

struct jf_policy;

/* What the rule needs to know of the view. */
struct jf_symlink_ctx {
	const char *source_abs;		/* realpath(SOURCE) */
	const char *mnt_rel;		/* MOUNTPOINT relative to SOURCE if inside it, else NULL */
	const struct jf_policy *policy; /* classifies view paths (jf_classify) */
	/* Judges an absolute target outside SOURCE below a system directory
	 * by where it leads on the host (systarget.h): 0 shows it, a negative
	 * errno hides it. NULL hides every such target. */
	int (*host_check)(int root_fd, const char *target);
	int host_root_fd; /* O_PATH fd of the host's "/", for host_check */
};

/* Decide how the symlink at view dir @dir with raw backing target @target is
 * shown: returns 0 with the view target in @out (@size bytes; rewritten when
 * absolute inside SOURCE), or -ENOENT when it must be hidden. */
int jf_symlink_view(const struct jf_symlink_ctx *ctx, const char *dir, const char *target,
		    char *out, size_t size);
/* Check a target the agent wants to create in view dir @dir: 0 or -EACCES. */
int jf_symlink_check_new(const struct jf_symlink_ctx *ctx, const char *dir, const char *target);
