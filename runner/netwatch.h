/* SPDX-License-Identifier: MIT */
/*
 * The first connect() leaving a jail without --net, reported at once
 * (netwatch.c): a seccomp user-notification filter in the command, whose
 * listener jailrun reads. An observer only: every call goes on unchanged.
 * Not thread-safe.
 */
#pragma once

#include <stddef.h>

/* In the command, before its seccomp filter: install the connect() watch and
 * send its listener fd over the Unix socket @sock (SCM_RIGHTS), then close
 * our copy of it. Returns 0 or a negative errno (the command then runs
 * unwatched). */
int jr_netwatch_install(int sock);

/* In jailrun: receive the listener fd from @sock (non-blocking). Returns the
 * fd (O_CLOEXEC, the caller closes it) or a negative errno. */
int jr_netwatch_recv(int sock);

/* Answer one notification of @listener: the call goes on as it would have.
 * When @what is not NULL and the call connects out of the jail (not
 * loopback, not a Unix socket), writes "COMM tried to connect to ADDR:PORT"
 * to @what (@size bytes) and returns 1; else 0; a negative errno when the
 * listener failed (the caller stops watching). */
int jr_netwatch_handle(int listener, char *what, size_t size);
