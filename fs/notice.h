/* SPDX-License-Identifier: MIT */
/*
 * Start-up notices said once per SOURCE (notice.c): a line the user has read
 * need not be repeated on every mount; it is said again when it changes.
 */
#ifndef JAILFS_NOTICE_H
#define JAILFS_NOTICE_H

#include <stdbool.h>

/* Was @text (one line, no newline) the last notice of kind @kind ("tracked")
 * said for the source directory @source (an absolute path)? Records @text as
 * said when it was not. The record is a file per kind and SOURCE under
 * $XDG_STATE_HOME/jailfs (default ~/.local/state/jailfs), named by the
 * SHA-256 of @source. Anything that fails (no HOME, a read-only home)
 * answers false: the notice is then said on every mount, never lost.
 * Start-up only; not thread-safe (one caller). */
bool jf_notice_said(const char *kind, const char *source, const char *text);

#endif
