/* SPDX-License-Identifier: MIT */
/*
 * The bound on the fds held by open handles (fd-budget.c): EMFILE for the
 * opener, not starvation of every other request.
 */
#pragma once

enum jf_fd_kind {
	JF_FD_FILE = 0, /* an open file handle, or a no_open orphan fd */
	JF_FD_DIR = 1,	/* a directory handle */
};

/* Raise the soft RLIMIT_NOFILE to the hard limit and size the budget for
 * @workers worker threads. Start-up only, before serving. */
void jf_fd_budget_init(unsigned workers);
/* Count one fd that will outlive the request (a handle). 0, or -EMFILE when
 * the budget of @kind is spent; a 0 is given back with jf_fd_put() when the
 * fd is closed. Thread-safe, lock-free. */
int jf_fd_take(enum jf_fd_kind kind);
void jf_fd_put(void);
