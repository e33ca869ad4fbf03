/* SPDX-License-Identifier: MIT */
/*
 * The host's system directories: what jailrun binds read-only into every
 * jail (same path inside and out), and so what a symlink in the view may
 * point at by absolute path (a virtual environment's bin/python3 ->
 * /usr/bin/python3). One list for both binaries.
 */
#pragma once

#include <stdbool.h>

/* NULL-terminated list of absolute directory paths, no trailing slash. */
extern const char *const jf_system_dirs[];

/*
 * Is @path an absolute path strictly below one of jf_system_dirs, written
 * canonically (no empty, "." or ".." component, no trailing slash)? Pure
 * string check: it says nothing about what the path resolves to on the
 * host (the jail's own /usr is the host's, read-only). Thread-safe.
 */
bool jf_is_system_path(const char *path);

/* Is @path exactly one of jf_system_dirs? Thread-safe. */
bool jf_is_system_dir(const char *path);
