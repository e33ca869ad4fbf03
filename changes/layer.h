/* SPDX-License-Identifier: MIT */
/*
 * The changes layer DIR (docs/changes-format.md): its files, its journal,
 * its checkpoints, and the review operations over it. Shared by the daemon
 * (which writes DIR while mounted) and the review commands of jailfs(1).
 *
 * Every function returns 0 or a negative errno unless said otherwise and
 * sets no errno of its own. A struct jf_layer is not thread-safe: the
 * daemon serializes its calls under its own lock. Paths named "path" are
 * view paths: relative to SOURCE's root, no leading slash, canonical
 * (policy/canon.c), never "." or "..".
 */
#ifndef JAILFS_CHANGES_LAYER_H
#define JAILFS_CHANGES_LAYER_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct jf_layer;

/*
 * Opens (with @create, makes) the layer at @dir, a path of the caller's
 * (start-up and command-line only), for SOURCE opened as @source_fd
 * (O_PATH, the daemon's root). Checks what docs/changes-format.md demands:
 * mode 0700 and owned by the caller, outside SOURCE (and outside
 * @mountpoint, NULL for none), layer.json naming this SOURCE. On failure
 * *@ret_err (may be NULL) gets a malloc'd sentence naming the path and the
 * reason, for the user. The layer holds fds on DIR, upper/ and SOURCE (a
 * dup of @source_fd); jf_layer_free() closes them.
 */
int jf_layer_open(const char *dir, int source_fd, const char *mountpoint, bool create,
		  struct jf_layer **ret, char **ret_err);
void jf_layer_free(struct jf_layer *l);

/* DIR/upper/ and DIR/work/ as paths for overlayfs's options, and the fd of
 * DIR/upper/ (owned by the layer). */
const char *jf_layer_upper_path(const struct jf_layer *l);
const char *jf_layer_work_path(const struct jf_layer *l);
int jf_layer_upper_fd(const struct jf_layer *l);

/*
 * DIR/lock: @exclusive LOCK_EX for the mounted daemon's lifetime (the
 * daemon) or for one review command; -EWOULDBLOCK when another holds it
 * (then the layer is mounted, and a command talks to DIR/control).
 */
int jf_layer_lock(struct jf_layer *l);

/*
 * Before a mutation through the view (the daemon, in the order below):
 *  - jf_layer_note_origin(): SOURCE's entry at @path, before the first
 *    mutation that copies it up or deletes it (no-op if already noted or if
 *    SOURCE has no entry there);
 *  - jf_layer_save(): the current checkpoint's pre-image of upper/@path,
 *    @in_place true for a write in place (a clone or copy is kept), false
 *    when the name is replaced or removed (a hard link is kept; for a
 *    directory, each entry below it is saved first); no-op if no
 *    checkpoint exists, or @path (or a directory above it that was absent
 *    then) is already saved in the current one;
 *  - jf_layer_note_rename() for a rename.
 * Each writes its journal line with one write(2) before returning.
 */
int jf_layer_note_origin(struct jf_layer *l, const char *path);
int jf_layer_save(struct jf_layer *l, const char *path, bool in_place);
int jf_layer_note_rename(struct jf_layer *l, const char *from, const char *to);

/*
 * Checkpoints: jf_layer_checkpoint() takes one named @name (NULL: "cpSEQ")
 * and gives its id "SEQ-NAME" in *@ret_id (malloc'd); jf_layer_restore()
 * puts upper/ back to checkpoint @id (an id, a NAME, or a SEQ). The daemon
 * calls both under its namespace lock and then remounts its overlay.
 */
int jf_layer_checkpoint(struct jf_layer *l, const char *name, char **ret_id);
int jf_layer_restore(struct jf_layer *l, const char *id);

/*
 * apply and discard over the @n paths of @paths (n == 0: all changes);
 * apply writes into SOURCE only what @safe(path, @safe_data) allows, leaves
 * conflicts alone unless @force, and reports what it did as a JSON array
 * (jansson's json_t *, cast to void * so that this header needs no jansson)
 * in *@ret_report, owned by the caller: one {"path","action","reason"?} per
 * selected entry, action "applied" or "discarded", "conflict", "refused"
 * (not SAFE; for discard, an entry inside a replaced or deleted directory)
 * or "failed" (reason: strerror). An entry that is not applied stays in
 * DIR; a negative return is a failure of the whole (listing DIR).
 */
typedef bool (*jf_layer_safe_fn)(const char *path, void *safe_data);
/* For a @safe callback's jf_classify(): does @path name a directory in the
 * view or in SOURCE (a deleted directory is a whiteout in upper/)?
 * Resolved below upper/ and SOURCE without following a symlink. */
bool jf_layer_is_dir(struct jf_layer *l, const char *path);
int jf_layer_apply(struct jf_layer *l, const char *const *paths, size_t n, bool force,
		   jf_layer_safe_fn safe, void *safe_data, void **ret_report);
int jf_layer_discard(struct jf_layer *l, const char *const *paths, size_t n, void **ret_report);

/*
 * For the review commands. jf_layer_source(): the SOURCE path that
 * @dir's layer.json names, malloc'd into *@ret (then the caller opens it
 * and calls jf_layer_open()). jf_layer_changes(): the changes of the @n
 * @paths (0: all) as a JSON array (json_t *, owned by the caller) of
 * {"status","path","from"?,"type","old_type"?,"size","old_size",
 * "mode","old_mode","replaced"?,"path_escaped"?,"from_escaped"?} (a path
 * that is not UTF-8 is escaped, jf_escape()). jf_layer_diff(): a unified diff against
 * SOURCE, with a/ and b/ prefixes, that git apply accepts in SOURCE;
 * binary files are "Binary files a/P and b/P differ". An entry whose path
 * (or renamed-from path) @shown refuses is left out, neither its name nor
 * its content printed (SOURCE is read unfiltered, and the diff goes to
 * whoever asked, an agent harness too), and counted in *@ret_hidden (may
 * be NULL); @shown NULL shows all.
 */
int jf_layer_source(const char *dir, char **ret);
int jf_layer_changes(struct jf_layer *l, const char *const *paths, size_t n, void **ret_json);
int jf_layer_diff(struct jf_layer *l, const char *const *paths, size_t n, jf_layer_safe_fn shown,
		  void *shown_data, FILE *out, size_t *ret_hidden);

/*
 * The request of a review command to the mounted daemon over DIR/control
 * (docs/changes-format.md, "control"): @cmd with the @n strings @args and
 * @force (apply), one connection, the reply object (json_t *, owned by
 * the caller) in *@ret_reply. Blocks until the daemon replies; -ECONNREFUSED
 * or -ENOENT when no daemon listens, -EPROTO for a reply that is no JSON
 * object.
 */
int jf_layer_request(struct jf_layer *l, const char *cmd, const char *const *args, size_t n,
		     bool force, void **ret_reply);

/*
 * The daemon's side: runs the request line @line (one JSON object, as
 * jf_layer_request() sends it) with the same library function the
 * unmounted command calls (@safe/@safe_data for apply), and gives the reply
 * line, newline included, in *@ret_reply (malloc'd): {"ok":true} with "id"
 * (checkpoint) or "report" (apply, discard), or {"ok":false,"error":S} for
 * a bad request or a failure. *@ret_changed says whether upper/ changed
 * (restore, apply, discard: remount and invalidate). 0, or -ENOMEM with no
 * reply. The caller holds its namespace lock, as for every call here.
 */
int jf_layer_handle_request(struct jf_layer *l, const char *line, jf_layer_safe_fn safe,
			    void *safe_data, char **ret_reply, bool *ret_changed);

#endif
