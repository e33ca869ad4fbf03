/* SPDX-License-Identifier: MIT */
/*
 * The jail's seccomp filter (seccomp-filter.c): syscalls refused with EPERM
 * (mounts, namespaces, tracing, keyrings, BPF, io_uring, modules...),
 * address families outside an allowlist, and terminal ioctls whose effect
 * outlives the command. What each refuses, and why, is said at its rules.
 * Not thread-safe: one filter, built once per process.
 */
#pragma once

/* Compile the filter, once (later calls return 0 at once). jr_sandbox_spawn
 * calls it before the clone, so that the command loads it with one prctl
 * and no libseccomp work between fork and exec. Returns 0, -ENOMEM, -EIO
 * or another negative errno from libseccomp or memfd_create. The filter's
 * memory is kept until exit. */
int jr_seccomp_build(void);

/* Load the filter jr_seccomp_build() compiled into the calling process
 * (no_new_privs must be set). Returns 0 or a negative errno (errno is set
 * too). */
int jr_seccomp_load(void);
