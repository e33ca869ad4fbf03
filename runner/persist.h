/* SPDX-License-Identifier: MIT */
/*
 * Persistent views (persist.c): `jailrun --source DIR` runs its command in a
 * live view of the same source, policy content, options and user when there
 * is one, and starts one that outlives the command otherwise. The view
 * unmounts itself once idle (jailfs --idle-exit).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JR_VIEW_IDLE_DEFAULT_MS (10 * 60 * 1000ULL) /* [run] view_idle, --view-idle */

/* One command's hold on a persistent view. */
struct jr_persist {
	char dir[PATH_MAX]; /* the view's private directory (mode 0700), "" when none */
	char mnt[PATH_MAX]; /* its mountpoint, dir/mnt */
	int users_fd;	    /* dir/users.lock, locked shared while attached; -1 when not */
	bool attached;
};

/* What the view shows and how. */
struct jr_persist_args {
	const char *source; /* absolute, canonical */
	const char *policy; /* the policy file, or NULL for the built-in default */
	uint64_t idle_ms;   /* the idle time a view this command starts gets */
};

/*
 * Attach to the persistent view of @a, starting it when there is none or
 * its daemon is gone (said on stderr, the dead mount detached first). The
 * view's directory lies in the user's private runtime directory
 * ($XDG_RUNTIME_DIR/jailrun, else /run/jailrun for root and
 * /run/user/UID/jailrun for others), each level checked with lstat to be a
 * directory of ours that nobody else may enter. Blocks while another jailrun sets the
 * same view up. Returns 1 with @p attached (p->mnt mounted; detach with
 * jr_persist_detach), 0 when there is no private runtime directory (the
 * caller mounts a one-shot view), or a negative errno with
 * a message in @err. Not thread-safe (one call per process).
 */
int jr_persist_attach(struct jr_persist *p, const struct jr_persist_args *a, char *err,
		      size_t errsz);

/* Let go of the view (it idles out once no command holds it). Idempotent;
 * safe on a zeroed struct with users_fd -1. */
void jr_persist_detach(struct jr_persist *p);
