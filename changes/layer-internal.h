/* SPDX-License-Identifier: MIT */
/*
 * What the files of the changes library share (not for its users, who
 * have layer.h): the layer's state, the fd helpers below DIR and SOURCE,
 * the journal, and the list of changes that changes.c computes for
 * apply.c and diff.c.
 */
#pragma once

#include <jansson.h>
#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "layer.h"

/* The most bytes of a file whose SHA-256 an origin records, and the most a
 * diff or a content comparison reads. */
#define JF_LAYER_HASH_MAX (64ull << 20)

struct jf_layer {
	int dirfd;   /* DIR */
	int upperfd; /* DIR/upper */
	int srcfd;   /* SOURCE (O_PATH), a dup of the caller's */
	int lockfd;  /* DIR/lock, -1 until jf_layer_lock() */
	int jfd;     /* DIR/journal.jsonl, O_APPEND */
	char *dir, *upper_path, *work_path;
	json_t *origins; /* path -> its origin record, as the journal holds them */
	json_t *renames; /* array of [from, to], in journal order */
	/* The newest checkpoint (cpfd -1: none) and its saved paths. */
	int cpfd, cpsfd, cpjfd; /* its directory, saved/ and saved.jsonl (O_APPEND) */
	long cpseq;
	json_t *saved; /* path -> saved.jsonl record of the newest checkpoint */
	size_t nsaved; /* lines of its saved.jsonl */
};

/* Opens @path (relative, canonical, "" for the root) below @rootfd without
 * following a symlink or leaving it, with @flags (O_PATH, O_RDONLY...).
 * Returns the fd or -errno. */
int jf_layer_openat(int rootfd, const char *path, int flags);
/* The parent directory of @path below @rootfd (O_PATH | O_DIRECTORY) and,
 * in *@name, a pointer into @path to its last name. Returns the fd or -errno. */
int jf_layer_parent(int rootfd, const char *path, const char **name);
/* fstatat of @path below @rootfd, not following its last name. 0 or -errno
 * (-ENOENT when a component is missing or not a directory). */
int jf_layer_lstat(int rootfd, const char *path, struct stat *st);
/* Removes @path below @rootfd and everything below it. 0 (also when absent)
 * or -errno. */
int jf_layer_rm_rf(int rootfd, const char *path);
/* A directory stream over directory @fd (borrowed) with its own offset, or
 * NULL with errno: readdir(3) of it moves no offset of @fd. */
DIR *jf_layer_opendir(int fd);
/* Copies regular file @src_fd (read from its start) into the new file
 * @name of @dirfd, created with @mode, by FICLONE where the filesystem can
 * and copy_file_range otherwise; fsync's it when @sync. 0 or -errno. */
int jf_layer_copy_file(int src_fd, int dirfd, const char *name, mode_t mode, bool sync);
/* The bytes of regular file @src_fd into the empty file @out, the same way. */
int jf_layer_copy_data(int src_fd, int out);
/* Copies the user.* extended attributes of @from to @to (fds). 0 or -errno. */
int jf_layer_copy_xattrs(int from, int to);
/* SHA-256 of an open regular file's content, as 64 hex digits into @hex. */
int jf_layer_sha256(int fd, char hex[65]);
/* Reads up to @max bytes of regular file @path below @rootfd into *@buf
 * (malloc'd, NUL-terminated) and its length into *@len. 0 or -errno
 * (-EFBIG over @max). */
int jf_layer_read_file(int rootfd, const char *path, size_t max, char **buf, size_t *len);

/* Ends the JSON-lines file open for appending as @fd with a newline if a
 * writer killed mid-line left none, so the next line starts on its own. */
int jf_layer_end_line(int fd);

/* Is this upper entry a whiteout (a character device 0:0, or a file with
 * user.overlay.whiteout)? Is this upper directory opaque? @dirfd/@name:
 * the entry, @st its lstat. */
bool jf_layer_is_whiteout(int dirfd, const char *name, const struct stat *st);
bool jf_layer_is_opaque(int dirfd, const char *name);

/* View path @p as a JSON string (new reference, NULL without memory): @p
 * itself when it is UTF-8, else its jf_escape() (each byte outside UTF-8
 * as \xHH) with *@escaped set, since jansson holds only UTF-8 and a name
 * from the jail may be any bytes. */
json_t *jf_layer_path_json(const char *p, bool *escaped);
/*
 * Sets path @p under @key of record @rec (and @p2 under @key2 unless @key2
 * is NULL), as a string when it is UTF-8 and else as its bytes in hex under
 * KEY_hex, so that journal.jsonl and saved.jsonl stay JSON and keep every
 * name. Returns @rec, or NULL (@rec released) without memory.
 * jf_layer_rec_unhex() sets "path", "from" and "to" of a record read back
 * from their KEY_hex form (strings that are not UTF-8, for the tables in
 * memory only: never written again).
 */
json_t *jf_layer_rec(json_t *rec, const char *key, const char *p, const char *key2, const char *p2);
void jf_layer_rec_unhex(json_t *rec);

/* Appends @rec (a JSON object, consumed) to the journal with one write(2),
 * and applies it to the in-memory tables. 0 or -errno. */
int jf_layer_journal(struct jf_layer *l, json_t *rec);
/* The origin record of @path, or NULL (borrowed). */
json_t *jf_layer_origin(const struct jf_layer *l, const char *path);
/* The SOURCE path that upper @path came from by the recorded renames,
 * malloc'd into *@ret (NULL when it was never renamed). 0 or -ENOMEM. */
int jf_layer_renamed_from(const struct jf_layer *l, const char *path, char **ret);
/* Before apply or discard removes @path from upper/: the drop record that
 * voids the origins and renames of @path and below, and the pre-image kept
 * for the newest checkpoint. 0 or -errno. */
int jf_layer_drop(struct jf_layer *l, const char *path);

/* One change of the merged view against SOURCE. */
enum jf_change_kind {
	JF_CH_ADDED = 'A',
	JF_CH_MODIFIED = 'M',
	JF_CH_DELETED = 'D',
	JF_CH_RENAMED = 'R',
	JF_CH_TYPE = 'T', /* the name holds another type of object */
};

struct jf_change {
	enum jf_change_kind kind;
	char *path;	      /* the view path (for R, the new name) */
	char *from;	      /* R: the SOURCE path it came from; else NULL */
	struct stat old, new; /* SOURCE's (zero for A) and upper's (zero for D) */
	bool content;	      /* the bytes or the target differ (M, R) */
	bool opaque;	      /* a directory that replaces SOURCE's (contents hidden) */
	bool whiteout;	      /* D by a whiteout in upper/ (not below a replaced dir) */
};

struct jf_changes {
	struct jf_change *v;
	size_t n, cap;
};

/* The changes of upper/ against SOURCE, in path order (a directory before
 * its entries), limited to the @n @paths (and below; 0: all). Each
 * deletion is listed, also every entry below a deleted or replaced
 * directory. 0 or -errno; free with jf_change_list_free(). */
int jf_layer_list(struct jf_layer *l, const char *const *paths, size_t n, struct jf_changes *out);
void jf_change_list_free(struct jf_changes *c);
/* Is @path equal to or below @top? */
bool jf_path_within(const char *path, const char *top);
/* "file", "dir", "symlink", "other" for a st_mode. */
const char *jf_type_name(mode_t mode);

/* checkpoint.c: loads the newest checkpoint at open; after a rename of
 * @from, makes the newest checkpoint's hard-link saves of @from and below
 * copies of their own (the name lives on, and a write in place to it must
 * not change the pre-image). */
int jf_layer_cp_load(struct jf_layer *l);
/* layer.c: reads journal.jsonl into the (emptied) tables again. */
int jf_layer_journal_reload(struct jf_layer *l);
int jf_layer_saved_moved(struct jf_layer *l, const char *from);

/* myers.c: a line of a file, and the shortest edit script from @a to @b
 * (Myers 1986, "An O(ND) Difference Algorithm"), as *@ret_n bytes 'e'
 * (a line of both), 'd' (a line of @a only) and 'i' (a line of @b only) in
 * order, malloc'd into *@ret_ops. Over JF_MYERS_MAX_D differences it gives
 * a valid but longer script (every line of @a deleted, every line of @b
 * inserted, the common start and end kept). 0 or -ENOMEM. */
struct jf_line {
	const char *p;
	size_t len; /* with its '\n', if it has one */
	uint64_t h;
};
#define JF_MYERS_MAX_D 1000
int jf_myers(const struct jf_line *a, size_t na, const struct jf_line *b, size_t nb, char **ret_ops,
	     size_t *ret_n);
/* Splits @buf (@len bytes) into lines, malloc'd into *@ret. */
int jf_lines(const char *buf, size_t len, struct jf_line **ret, size_t *ret_n);
