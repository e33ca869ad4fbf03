/* SPDX-License-Identifier: MIT */
/*
 * jailrun --changes DIR and --changes-temp (changes.c): the command runs on
 * an overlay view (jailfs --changes DIR, docs/changes-format.md), whose
 * layer is reviewed and checkpointed with the jailfs(1) review commands,
 * run as programs: `jailfs checkpoint DIR NAME` once the view is mounted
 * and before the command, `jailfs changes DIR --json` after it, and with
 * --apply `jailfs apply DIR --json`. A temporary layer lives in a private
 * directory of its own and is removed after the command, once applied (with
 * --apply) or reported. Not thread-safe; main thread only.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>

#include <jansson.h>

struct jr_changes {
	char dir[PATH_MAX];   /* the layer, absolute; "" when none */
	char tmp[PATH_MAX];   /* a temporary layer's private parent, "" when none */
	char checkpoint[160]; /* the id of the checkpoint taken before the command */
	json_t *list;	      /* `jailfs changes DIR --json` after the command, or NULL */
	bool applied;	      /* `jailfs apply DIR` succeeded: nothing left in DIR */
	json_t *apply_report; /* `jailfs apply DIR --json`'s report, or NULL */
	char error[1024];     /* what of the review failed, "" when nothing */
};

/*
 * Set @c up for @dir (NULL: a temporary layer in a new private directory
 * under $TMPDIR or /var/tmp, on disk, mode 0700). @dir is made absolute:
 * its parent must exist; the daemon makes DIR itself when it does not.
 * Returns 0 or a negative errno with a message in @err.
 */
int jr_changes_prepare(struct jr_changes *c, const char *dir, char *err, size_t errsz);

/*
 * Take the checkpoint of this command (`jailfs checkpoint DIR NAME`, NAME
 * jailrun-SECONDS-PID), the view mounted; its id to c->checkpoint (what
 * the command printed, else NAME). 0 or a negative errno with a message
 * in @err.
 */
int jr_changes_checkpoint(struct jr_changes *c, char *err, size_t errsz);

/*
 * After the view is unmounted: read the change list into c->list, and with
 * @apply apply the layer to SOURCE (c->applied, c->apply_report), under
 * @policy (the view's policy file; NULL: the one jailfs finds for SOURCE).
 * Failures go to c->error; returns 0 when every step succeeded, else a
 * negative errno.
 */
int jr_changes_collect(struct jr_changes *c, bool apply, const char *policy);

/* The "changes" object of the --json result (new reference), or NULL
 * for a run without a layer. */
json_t *jr_changes_json(const struct jr_changes *c);

/* One line for stderr without --json: where the changes are, and how to
 * review them. */
void jr_changes_say(const struct jr_changes *c);

/* Free c->list; remove a temporary layer. Idempotent. */
void jr_changes_release(struct jr_changes *c);
