/* SPDX-License-Identifier: MIT */
/*
 * The directories this mount made (newdirs.c): where a name subject to
 * content (*.pem, *.key, *.asc) may be created, because no hidden object
 * of the user's can hold it there. Elsewhere creating such a name would
 * succeed where it is free and fail where a hidden private key holds it,
 * telling the program what the view hides; see docs/security.md.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* Most directories remembered; past it a new one is not, and creating a
 * name subject to content in it is refused as elsewhere (fails closed). */
#define JF_NEWDIRS_MAX (1u << 20)

/* Remember the directory (@dev, @ino) made through the view (mkdir). No-op
 * past JF_NEWDIRS_MAX or without memory. Thread-safe (one mutex). */
void jf_newdir_add(dev_t dev, ino_t ino);
/* Forget it: removed through the view (rmdir, replaced by a rename), so
 * its inode number may name another directory later. Thread-safe. */
void jf_newdir_forget(dev_t dev, ino_t ino);
/* Was the directory (@dev, @ino) made through this mount and not removed
 * since? Thread-safe. */
bool jf_newdir_is(dev_t dev, ino_t ino);
