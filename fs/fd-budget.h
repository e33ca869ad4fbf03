/* SPDX-License-Identifier: MIT */
/*
 * The bound on the fds held by open handles (fd-budget.c): EMFILE for the
 * opener, not starvation of every other request or of every other opener.
 */
#pragma once

#include <sys/types.h>

enum jf_fd_kind {
	JF_FD_FILE = 0, /* an open file handle, or a no_open orphan fd */
	JF_FD_DIR = 1,	/* a directory handle */
};

/* Raise the soft RLIMIT_NOFILE to the hard limit and size the budget for
 * @workers worker threads. Start-up only, before serving. */
void jf_fd_budget_init(unsigned workers);
/* Count one fd that will outlive the request (a handle) for the caller @pid
 * (fuse_req_ctx's pid: a thread ID) of @uid. 0, or -EMFILE when the budget
 * of @kind is spent, or the caller's share of it (half of it per pid, three
 * quarters per uid). A 0 is given back with jf_fd_put(@pid, @uid) when the
 * fd is closed. Thread-safe (a mutex held for a table look-up). */
int jf_fd_take(enum jf_fd_kind kind, pid_t pid, uid_t uid);
void jf_fd_put(pid_t pid, uid_t uid);
/* The same without a share: for fds no caller asked for (the fd a no_open
 * file unlinked while open keeps). Thread-safe, lock-free. */
int jf_fd_take_unshared(enum jf_fd_kind kind);
void jf_fd_put_unshared(void);
