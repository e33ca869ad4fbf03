/* SPDX-License-Identifier: MIT */
/*
 * The daemon's overlay mode (--changes DIR, changes.c): the changes layer
 * (changes/layer.h) opened and locked for the daemon's life, the overlayfs
 * mount that is the daemon's root fd (overlay.h), the notes each mutation
 * writes before it runs, and DIR/control, where the review commands ask a
 * mounted daemon to checkpoint, restore, apply or discard
 * (docs/changes-format.md). Without --changes every function is a no-op
 * that returns 0.
 *
 * Conventions: fsstate.h's. The notes are thread-safe (one mutex of this
 * module serializes every call into the layer, a leaf taken under
 * jf_fs.ns_lock, never with jf_fs.lock held).
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "fsstate.h"

/*
 * Start-up, before the mount: open and lock the layer at @dir for SOURCE
 * (*@root_fd, its O_PATH fd, at @source_abs), refuse a DIR inside SOURCE or
 * @mnt_abs, mount the overlay, make DIR/control. On success *@root_fd is
 * the overlay's root and SOURCE's fd stays with this module (the watcher
 * watches SOURCE itself, jf_changes_lower_fd()). Returns 0, or an exit
 * status (1, 2) after a message on stderr naming the path and the rule.
 */
int jf_changes_setup(const char *dir, int *root_fd, const char *source_abs, const char *mnt_abs);
/* Is the overlay mode on? */
bool jf_changes_on(void);
/* SOURCE's own O_PATH fd in overlay mode, else -1 (owned by this module). */
int jf_changes_lower_fd(void);
/* Do devices @a and @b hold the same objects? Equal, or two overlays this
 * daemon mounted over the same layers, whose objects keep their inode
 * numbers (DIR on SOURCE's filesystem). Lock-free. */
bool jf_changes_same_dev(dev_t a, dev_t b);

/*
 * Before a mutation of view path @path through the view (caller holds
 * jf_fs.ns_lock, shared or exclusive; @path "" is the root, never noted):
 * the origin of SOURCE's entry and the checkpoint's pre-image of its copy
 * (jf_layer_note_origin, jf_layer_save: @in_place for a write in place,
 * false when the name is made, replaced or removed). 0 or -errno: the
 * mutation must then not run.
 */
int jf_changes_note(const char *path, bool in_place);
/* jf_changes_note() of @inode's current view path, for a caller that holds
 * no jf_fs.ns_lock (open for writing, a write without a handle): it takes
 * it shared. */
int jf_changes_note_inode(struct jf_inode *inode, bool in_place);
/* Before renameat2(@from, @to): both names noted, then the rename (both
 * ways for RENAME_EXCHANGE, @exchange). */
int jf_changes_note_rename(const char *from, const char *to, bool exchange);

/* Serve DIR/control from a thread of its own: after fuse_daemonize(), once
 * the notifier runs. 0 or -errno after a warning. */
int jf_changes_start(void);
/* Stop serving DIR/control (before the session ends), join the thread. */
void jf_changes_stop(void);
/* Release the layer, DIR/lock and the fds, at exit. */
void jf_changes_free(void);
