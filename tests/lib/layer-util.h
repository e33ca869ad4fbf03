/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the changes library's tests (layer-util.c). Each fails the
 * running cmocka test (or, in the overlay's child, exits it non-zero).
 * Not thread-safe: one test at a time.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cleanup.h"
#include "layer-internal.h"

/* The current test's directories: base/src (SOURCE), base/layer (DIR),
 * base/mnt (the overlay's mountpoint, in the child's namespace). */
extern char base[256], src[300], dir[300], mnt[300];
/* tree() lists each file's mtime too (restore is exact). */
extern bool list_mtime;

void sh(const char *fmt, ...) _printf_(1, 2);
void put(const char *root, const char *path, const char *content, mode_t mode);
/* @root/@path's content (malloc'd, up to 1 MiB), NULL if it cannot be opened. */
char *slurp(const char *root, const char *path);
/* Every entry below @root, sorted: "path type mode sha256|target [mtime]". */
char *tree(const char *root);
struct jf_layer *open_layer(bool create);

/* The daemon's notes before each mutation, then the mutation through the
 * overlay (in the child: a failure exits it). */
void d_write(struct jf_layer *l, const char *p, const char *text, bool exists);
void d_unlink(struct jf_layer *l, const char *p, bool is_dir);
void d_rename(struct jf_layer *l, const char *a, const char *b);
void d_mkdir(struct jf_layer *l, const char *p);
void d_chmod(struct jf_layer *l, const char *p, mode_t m);
void d_symlink(struct jf_layer *l, const char *target, const char *p);

typedef int (*session_fn)(struct jf_layer *l);
/* Mounts the overlay in a child of its own namespaces, runs @fn there (the
 * layer opened anew in the child), and gives its listing of the view in
 * *@view (malloc'd) when @view is not NULL. */
void in_overlay(session_fn fn, char **view);
/* A new base with a SOURCE of files, a directory tree, an executable, a
 * symlink and a binary file, and an empty layer; cleanup() removes it
 * (kept with JF_TEST_KEEP set). */
void fresh(void);
void cleanup(void);
/* A command that edits and creates; one that deletes a tree, renames,
 * rewrites, changes modes, replaces a directory and makes a symlink. */
int session_one(struct jf_layer *l);
int session_two(struct jf_layer *l);

json_t *changes_of(struct jf_layer *l);
/* The status of @path in a changes array ('-' if absent). */
char status_of(json_t *a, const char *path);
void diff_to(struct jf_layer *l, const char *file, const char *const *paths, size_t n);
/* apply's action for @path in a report, "none" if absent. */
const char *action_of(json_t *rep, const char *path);
/* Safe callbacks: all but "secret.txt"; everything. */
bool safe_but_secret(const char *path, void *data);
bool safe_all(const char *path, void *data);
