/* SPDX-License-Identifier: MIT */
/*
 * The wall (sandbox.c): what the jail runs and how it is bounded
 * (jr_spawn), and the clone of its namespaces.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct jr_view;

struct jr_limits {
	uint64_t cpu_s, as_bytes, nproc, fsize_bytes; /* 0 = unlimited */
};

struct jr_spawn {
	const struct jr_view *view; /* host = the mounted view */
	const char *cwd;	    /* absolute jail path */
	const char *exec_path;	    /* resolved jail path to execve, or NULL: execvp */
	char *const *argv;
	char *const *envp;
	bool net;
	/* without @net: the command sends its connect() watch here
	 * (netwatch.h); -1 for none. Set by jr_run, whatever the caller put. */
	int net_watch_fd;
	bool stdin_null;  /* --json: stdin is /dev/null */
	bool pipe_output; /* capture stdout/stderr through pipes */
	struct jr_limits limits;
	/* sizes of the jail's /tmp and /dev/shm tmpfs in bytes ([run] tmp_size,
	 * shm_size): 0 = the default (the smaller of 1 GiB and a quarter of
	 * RAM), UINT64_MAX = unbounded */
	uint64_t tmp_bytes, shm_bytes;
	/* pidfds of the one-shot views' daemons, or -1: their exit ends the
	 * run (jr_outcome.broken). Not owned. */
	int view_pidfds[2];
};

/*
 * Clone the jail (sandbox.c): pid 1 of the new namespaces builds the root and
 * starts the command with @out_fd / @err_fd as its stdout / stderr (the
 * caller keeps and closes its own copies). Returns 0 with *pid (pid 1 as the
 * caller sees it), *pidfd (O_CLOEXEC, from CLONE_PIDFD) and *status_fd (the
 * read end of a pipe carrying struct jr_status_msg records, O_CLOEXEC), all
 * owned by the caller; or a negative errno from pipe2/clone/seccomp.
 * Sources: namespaces(7), pivot_root(2), mount_setattr(2), capabilities(7),
 * seccomp(2), pid_namespaces(7).
 */
int jr_sandbox_spawn(const struct jr_spawn *s, int out_fd, int err_fd, pid_t *pid, int *pidfd,
		     int *status_fd);

/* Status record pid-1 writes to the status pipe. */
struct jr_status_msg {
	int kind;  /* 1 = command ended, 2 = setup error */
	int code;  /* exit code, or errno for errors */
	int signo; /* terminating signal */
	char msg[200];
};
