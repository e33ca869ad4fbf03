/* SPDX-License-Identifier: MIT */
/*
 * jailrun internals shared between the runner's source files.
 *
 * Topics and files:
 *   resolve.c  the jail's file namespace as seen from jailrun (jr_map) and
 *              exec-style path resolution inside it (jr_resolve)
 *   guard.c    the guardrails: pure checks of a request, decided before any
 *              process is spawned (jr_guard_*); the wrapper table
 *   guard-path.c   path arguments: where they lead, what may be named
 *   guard-shell.c  --shell strings split into simple commands
 *   guard-lang.c   inline programs of awk, sed, gdb, tar, pwsh, sqlite3 (jr_*_runs_code)
 *   guard-tools.c  env, find, git, cmake, npm, python -m, node data: URLs, copies of
 *                  denied binaries, and environment variables that make tools run code
 *   guard.h    internals shared by the guard*.c files
 *   view.c     --root mountinfo check, the one-shot jailfs mount
 *   gitdir.c   the main repository's git directory of a linked work tree
 *   home.c     the jail's home directory, the toolchains exposed in it
 *   sandbox.c  namespaces, mounts, pivot_root, caps, seccomp, rlimits
 *   mountfd.c  mounts attached through fds, without following a symlink
 *   capture.c  bounded output capture, timeout, tree kill
 *   termfilter.c  terminal escape sequences kept or dropped (termfilter.h)
 *   result.c   exit statuses and the --json result
 *   env.c      the command's environment (allowlist, [run] env, --env)
 *   main.c     options, --request JSON, the flow
 *
 * Conventions: functions return 0 or a negative errno; nothing here is
 * thread-safe unless said (jailrun is single-threaded).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"

/* Exit statuses (bash and coreutils timeout(1) conventions). */
#define JR_EXIT_TIMEOUT 124 /* the command ran out of time */
#define JR_EXIT_USAGE 2	    /* bad options or request (as bwrap and coreutils) */
#define JR_EXIT_ERROR 125   /* jailrun itself failed (setup) */
#define JR_EXIT_DENIED 126  /* a guardrail refused the command */
#define JR_JSON_DENIED (-100)
#define JR_JSON_TIMEOUT (-101)

/* Default time limits, in ms: a --shell command line chains steps
 * (configure && make && make test), so it gets longer than one command. */
#define JR_DEFAULT_TIMEOUT_MS 120000ULL
#define JR_DEFAULT_SHELL_TIMEOUT_MS 600000ULL

struct jr_home;

/*
 * The project as the jail shows it. The child sees the view at @project (the
 * project's own absolute path, i.e. the jailfs SOURCE); jailrun reaches the
 * same files at @host (the jailfs mountpoint, or the source directory itself
 * while guardrails run before a one-shot mount exists).
 */
struct jr_view {
	char project[PATH_MAX];		/* absolute, no trailing slash ("/" never allowed) */
	char host[PATH_MAX];		/* absolute path jailrun uses to reach the files */
	const struct jf_policy *policy; /* classifies view-relative paths; not owned */
	bool host_is_source;		/* @host is the raw source: hide DENIED names ourselves */
	const char *const *expose;	/* extra host paths bound read-only, NULL-terminated */
	/* the main repository's git directory when the project is a linked
	 * work tree (gitdir.c): a second view, shown at its own path, or NULL */
	const struct jr_view *gitdir;
	/* paths where the jail's read-only root holds an empty file: the .git
	 * files of the repository's other work trees, NULL-terminated or NULL */
	char *const *placeholders;
	/* the jail's home and what it masks (home.c), or NULL for none */
	const struct jr_home *home;
};

/* ---- resolve.c ---- */

/* Paths below /etc (files or dirs, one or more components) bound or copied
 * into the jail's reduced /etc. */
extern const char *const jr_etc_entries[];

/* Is @path equal to @prefix or below it, component-wise ("/usr" is under
 * "/usr", "/usrx" is not)? Both absolute, without a trailing slash. Pure. */
bool jr_path_under(const char *path, const char *prefix);

/*
 * Map the absolute jail path @jail to the host path jailrun can lstat() to see
 * what the child would see. Returns 0 and writes @host (@size bytes), -ENOENT
 * when the path is not visible in the jail at all (home, /run, host /tmp...),
 * -EACCES when it is a DENIED name of the project, -ENAMETOOLONG.
 */
int jr_map(const struct jr_view *v, const char *jail, char *host, size_t size);

/* Names met while resolving the last component (each symlink hop). */
struct jr_chain {
	int n;
	char name[8][NAME_MAX + 1];
};

/*
 * Resolve @in the way the kernel would inside the jail: relative to @cwd (an
 * absolute jail path), "." and ".." folded, symlinks followed (at most 40),
 * /proc/self/root, /proc/thread-self/root and /proc/PID/root folded to "/",
 * /proc/self/cwd and /proc/PID/cwd to @cwd. Components that do not exist are
 * kept lexically. Writes the absolute jail path to @out (PATH_MAX bytes) and,
 * when @chain is not NULL, the last component's name at every symlink hop.
 * Returns 0 or -ELOOP / -ENAMETOOLONG.
 */
int jr_resolve(const struct jr_view *v, const char *cwd, const char *in, char *out,
	       struct jr_chain *chain);

/*
 * Find the executable exec(3)/execvp would run for @name: a name with a '/'
 * is resolved against @cwd, otherwise each entry of @path_env (":"-separated,
 * empty entries mean the cwd) is tried in order for a regular file with an
 * execute bit. Writes the absolute jail path to @out (PATH_MAX bytes).
 * Returns 0, or -ENOENT when nothing was found.
 */
int jr_find_exec(const struct jr_view *v, const char *cwd, const char *path_env, const char *name,
		 char *out, struct jr_chain *chain);

/* ---- guard.c ---- */

struct jr_verdict {
	bool denied;
	char rule[64];	  /* machine-readable rule id, e.g. "inline-code" */
	char reason[640]; /* human text, e.g. "interpreter inline code (python3 -c)" */
	/* the executable name an allow_exec would lift the rule for ("rm" for
	 * exec-denylist, exec-copy, chmod-recursive...), "" for other rules */
	char subject[NAME_MAX + 1];
	/* inline-code: the interpreter whose inline code allow_inline would let
	 * run (as typed, "python3"), "" for none; @needs_shell: a shell's -c
	 * string, which --shell checks as a command line */
	char interp[NAME_MAX + 1];
	bool needs_shell;
};

struct jr_guard {
	const struct jr_view *view;
	const char *cwd;      /* absolute jail path of the command's working directory */
	const char *path_env; /* PATH as the child will get it */
	const char *home;     /* HOME inside the jail (for "~") */
	/* the environment the command will get (NAME=VALUE, NULL-terminated):
	 * variables that make git or node run code are checked; NULL for none */
	char *const *envp;
	bool shell;	    /* --shell given */
	const char **deny;  /* effective denylist (fnmatch patterns), NULL-terminated */
	const char **allow; /* names exempted from the built-in rules, NULL-terminated */
	/* interpreters whose inline code (-c, -e, -m timeit...) may run:
	 * patterns, NULL-terminated, or NULL for none */
	const char *const *allow_inline;
	/* lazily built table of denied binaries in PATH (renamed-copy check) */
	struct jr_ident *idents;
	size_t n_idents;
	bool idents_built;
};

/* The built-in executable denylist (fnmatch patterns), NULL-terminated. */
extern const char *const jr_default_denylist[];

/*
 * Strip a version suffix from an executable basename: "python3.11" ->
 * "python", "perl5.36" -> "perl", "lua5.4" -> "lua", "node" unchanged.
 * Writes at most @size bytes to @out.
 */
void jr_strip_version(const char *name, char *out, size_t size);

/*
 * Check @argc arguments (argv mode) and fill @out. With g->shell, argv is
 * joined with spaces into one shell command and checked as jr_guard_shell
 * would. Never spawns anything; reads the filesystem only through jr_map.
 * Returns 0 (the answer is in out->denied) or -ENOMEM.
 */
int jr_guard_argv(struct jr_guard *g, int argc, char *const argv[], struct jr_verdict *out);

/* Check a shell command string (best effort: simple commands, pipelines,
 * lists, redirections, $(...) and `...` are split out and checked one by one).
 * Same return convention as jr_guard_argv. */
int jr_guard_shell(struct jr_guard *g, const char *cmd, struct jr_verdict *out);

/* Release the lazily built tables. The struct may be reused. */
void jr_guard_release(struct jr_guard *g);

/* ---- guard-lang.c: inline programs in other tools' languages ---- */

/*
 * Does awk program text @prog run a command? Returns what does ("system()",
 * "'|' command pipe": print | "cmd", "cmd" | getline, |&) or NULL. String
 * literals, regular expressions (where an operand is expected) and comments
 * are skipped. Best effort; pure.
 */
const char *jr_awk_runs_code(const char *prog);

/* Does sed script @script use GNU sed's 'e' command or the s///e flag (both
 * run sh -c)? Addresses, regexes, replacements and text arguments are
 * skipped. Best effort; pure. */
bool jr_sed_runs_code(const char *script);

/* Does gdb command @cmd (-ex, -iex, --eval-command) run a program: shell, !,
 * pipe, python, guile, compile, eval (abbreviations too), or a call of
 * system/exec.../popen/dlopen/posix_spawn in the debugged program? Returns
 * what, or NULL. Source: gdb(1), "Shell Commands" in the GDB manual. */
const char *jr_gdb_runs_code(const char *cmd);

/* What PowerShell parameter @word ("-Command", "-c", "--file", "-ep:x";
 * case-insensitive, abbreviations) is. Source: about_Pwsh. */
enum { JR_PWSH_INLINE = 1, JR_PWSH_FILE = 2, JR_PWSH_VALUE = 3 };
int jr_pwsh_param(const char *word);

/* ---- env.c ---- */

/*
 * The command's environment: jailrun's PATH LANG LC_* TERM TZ USER (names
 * holding TOKEN SECRET KEY PASSWORD CREDENTIAL or starting AWS_ GITHUB_
 * SSH_AUTH_SOCK left out), PATH when unset, HOME=@home, then each of the
 * @nlists NULL-terminated lists in order: NAME passes jailrun's value,
 * NAME=VALUE sets (a later value wins). At most @max entries. Returns a
 * malloc'ed NULL-terminated array whose strings point into environ, the
 * lists or small allocations (jailrun keeps them until it exits), or NULL
 * when out of memory.
 */
char **jr_env_build(const char *home, const char *const *const lists[], size_t nlists, int max);

/* The value of @name in @envp, or NULL. */
const char *jr_env_get(char *const *envp, const char *name);

/* ---- home.c ---- */

#define JR_HOME_EXPOSE 64 /* exposed directories: toolchains and [run] expose */
#define JR_HOME_MASKS 64  /* DENIED entries masked in them */

/* An entry of an exposed directory the jail shows empty (DENIED). */
struct jr_mask {
	char path[PATH_MAX]; /* absolute, the same in the jail and on the host */
	bool is_dir;
};

struct jr_home {
	char user[PATH_MAX]; /* the user's home on the host (canonical) */
	char jail[PATH_MAX]; /* HOME in the jail: @user, or /tmp/home where @user cannot be */
	/* the directory on the host bound at @jail (canonical); "" when the
	 * default place could not be made: @jail is then the jail's own /tmp/home */
	char host[PATH_MAX];
	/* what the jail binds read-only at the same path: the toolchains that
	 * exist, then [run] expose; NULL-terminated, malloc'ed strings */
	char *expose[JR_HOME_EXPOSE + 1];
	int nexpose;
	struct jr_mask masks[JR_HOME_MASKS];
	int nmasks;
};

/*
 * Choose and make the jail home of @project (absolute, canonical): @dir
 * (--home or [run] home) or the default, $XDG_STATE_HOME/jailrun/homes/
 * NAME-HASH (~/.local/state/... without it; NAME the project's last
 * component, HASH of its path). Created with mode 0700 where missing; it
 * must be a directory of the caller's uid, not a symlink, and lie neither
 * inside nor around @project or @mnt (the view's mountpoint, or NULL); its
 * mode is set to 0700. Fills h->user, h->jail, h->host. Returns 0, or
 * -EINVAL with a message in @err. When the default place fails, says so on
 * stderr and returns 0 with h->host "" (a home emptied after the command).
 * Not thread-safe (getpwuid).
 */
int jr_home_setup(struct jr_home *h, const char *project, const char *mnt, const char *dir,
		  char *err, size_t errsz);

/*
 * Fill h->expose with the user's toolchain directories that exist
 * (~/.rustup ~/.cargo/bin ~/.pyenv ~/.nvm ~/.local/bin) and then @extra
 * ([run] expose; NULL-terminated, or NULL), leaving out each that the
 * secrets profile or @policy (or NULL) makes DENIED, and h->masks with the
 * DENIED entries found in the two levels below each (more than
 * JR_HOME_MASKS: that directory is left out). Says what it leaves out on
 * stderr. Returns 0 or -ENOMEM. Free with jr_home_release().
 */
int jr_home_expose(struct jr_home *h, const struct jf_policy *policy, const char *const *extra);

/* Free what jr_home_expose() allocated. Idempotent. */
void jr_home_release(struct jr_home *h);

/*
 * A command @name (no '/') the jail does not have: is it in a directory of
 * @host_path (jailrun's own PATH, ':'-separated; relative entries are
 * skipped) as an executable? Writes that directory to @dir (@size bytes).
 * Returns 0, or -ENOENT.
 */
int jr_home_missing(const char *name, const char *host_path, char *dir, size_t size);

/* ---- view.c ---- */

/*
 * Look @mnt up in /proc/self/mountinfo: it must be the mountpoint of a
 * fuse.jailfs filesystem. Writes the mount's source (the project's absolute
 * path, from the fsname) to @source (PATH_MAX bytes) and the canonical
 * mountpoint to @mnt_out. Returns 0, -ENOENT (no such mount), -EMEDIUMTYPE
 * (mounted, but not fuse.jailfs), or another negative errno.
 */
int jr_view_check_root(const char *mnt, char *source, char *mnt_out);

/*
 * The [run] rules of the jailfs view mounted at @mnt, as its daemon answers
 * getxattr(JF_RUN_XATTR) on the view's root (the policy the daemon was
 * started with, not the file as it is now). Returns 0 with *out a policy
 * holding only [run] (caller frees with jf_policy_free), or NULL when the
 * daemon has none to give (ENODATA, ENOTSUP); or a negative errno with a
 * message in @err (ENOTCONN: the daemon is gone; EACCES: a mount of another
 * user without allow_other).
 */
int jr_view_run_rules(const char *mnt, struct jf_policy **out, char *err, size_t errsz);

/*
 * Is the daemon of the jailfs view mounted at @mnt gone? Asks getxattr on the
 * view's root, which always reaches the daemon (stat may be answered from the
 * kernel's cache). Returns -ENOTCONN or -ECONNABORTED when the daemon is gone
 * (its mount answers so from then on), else 0, also when the daemon does
 * not answer within 2 s (a stopped daemon is not gone). Asks from a child
 * process, so a daemon that never answers holds no thread of ours.
 */
int jr_view_gone(const char *mnt);

/* jr_view_gone(), but -ETIMEDOUT when the daemon did not answer in 2 s. */
int jr_view_probe(const char *mnt);

/*
 * The topmost mount at @mnt (canonical path) in /proc/self/mountinfo: fills
 * @fstype and @source (octal escapes undone). Returns 0, -ENOENT when nothing
 * is mounted there, or a negative errno from fopen. Never touches the mount.
 */
int jr_view_find_mount(const char *mnt, char *fstype, size_t fsz, char *source, size_t ssz);

/* Unmount @dir now or lazily; fusermount3 -u -z where we may not
 * (unprivileged). Errors are ignored: mountinfo tells what is left. */
void jr_view_unmount(const char *dir);

/* The jailfs binary to run (PATH_MAX bytes to @out): env JAILFS, else next
 * to jailrun's own binary, else ../fs/jailfs of the build tree, else
 * "jailfs" from PATH. */
void jr_find_jailfs(char *out, size_t size);

/*
 * The git work tree holding @dir (absolute, canonical): the nearest directory
 * from @dir upwards, @dir itself included, that has a .git entry (directory,
 * or the file of a linked work tree or submodule), without crossing into
 * another filesystem (as git does by default). git is not run. Writes it to
 * @top (PATH_MAX bytes). Returns 0, or -ENOENT when there is none.
 */
int jr_view_git_top(const char *dir, char *top);

/* ---- gitdir.c ---- */

/* The policy of the view of a linked work tree's main git directory: the
 * built-in profiles secrets and gitdir, everything else SAFE. */
extern const char jr_gitdir_policy[];

/*
 * Is @project (absolute, canonical) a linked work tree of a repository whose
 * git directory lies outside it? Its .git must be a file "gitdir: X" (X
 * absolute, or relative to @project) naming a directory <common>/worktrees/
 * <name> whose commondir file leads back to <common> and whose gitdir file
 * names @project/.git (both after realpath), and <common> must hold HEAD,
 * objects/ and refs/. Writes <common> (canonical) to @common (PATH_MAX
 * bytes). Returns 1 when all of that holds and <common> can be shown at its
 * own path (not /, not around @project, not where the jail binds or
 * replaces directories); 0 when @project has no .git file, or its git
 * directory is not a work tree's (a submodule's) or lies inside @project;
 * -EINVAL with a message in @err when the files do not
 * check out. Reads files only; git is not run.
 */
int jr_gitdir_common(const char *project, char *common, char *err, size_t errsz);

/* At most this many placeholders (other work trees of one repository). */
#define JR_MAX_PLACEHOLDERS 64

/*
 * The .git files of the work trees linked to the git directory @common
 * (canonical) that the jail of @v does not show: each <common>/worktrees/
 * <name>/gitdir naming, as a plain absolute path, a .git file that exists on
 * the host at a path where the jail shows nothing. The jail holds an empty
 * file there, so that git in the jail does not take those work trees for
 * deleted ones (`git worktree prune`, `git gc` would remove their HEAD,
 * index and logs). Returns a malloc'ed NULL-terminated array of malloc'ed
 * strings (free with jr_strv_free), at most JR_MAX_PLACEHOLDERS; NULL when
 * out of memory.
 */
char **jr_gitdir_placeholders(const char *common, const struct jr_view *v);

/* Free a NULL-terminated array of malloc'ed strings and the array. NULL is a
 * no-op. */
void jr_strv_free(char **v);

/* What --source shows of a repository beyond the project. */
struct jr_gitdir {
	struct jr_view view;	  /* the main git directory's view (project = its path) */
	struct jf_policy *policy; /* jr_gitdir_policy, parsed; NULL when not shown */
	bool read_only;		  /* the project's policy makes .git RESTRICTED */
	char **placeholders;	  /* jr_gitdir_placeholders(), or NULL */
};

/*
 * For the --source view @v (project, host = the source and policy set): when
 * the project is a linked work tree (jr_gitdir_common), fill @g->view with
 * the main git directory, shown as the project's policy would treat a
 * repository's .git directory (DENIED: not shown; RESTRICTED: read-only),
 * and point v->gitdir at it; with it, or with the project's own .git
 * directory, list the other work trees' placeholders in v->placeholders.
 * A .git file that does not check out leaves the git directory unshown,
 * with the reason in @warn ("" otherwise). @g owns what it holds until
 * jr_gitdir_release(). Returns 0, or -ENOMEM.
 */
int jr_gitdir_setup(struct jr_gitdir *g, struct jr_view *v, char *warn, size_t warnsz);

/* Free what @g holds (not the views pointing at it). Idempotent. */
void jr_gitdir_release(struct jr_gitdir *g);

struct jr_oneshot {
	char dir[PATH_MAX]; /* private mountpoint (mode 0700), "" when none */
	pid_t daemon;	    /* jailfs -f, our child; 0 when none */
	int pidfd;
	bool mounted;
	dev_t dev;	    /* the mount's st_dev: the FUSE connection's number */
	char log[PATH_MAX]; /* the private refusal log's name until stopped, else "" */
	int log_fd;	    /* that log, read-write, O_CLOEXEC; -1 when none. Owned by
			     * the caller once started (jr_oneshot_stop leaves it open) */
};

/* What a one-shot view shows and how. */
struct jr_oneshot_args {
	const char *source;	 /* the directory the view shows */
	const char *policy;	 /* policy file, or NULL */
	const char *policy_text; /* or the policy as text (handed over in a memfd), or NULL */
	const char *audit;	 /* audit file (level all), or NULL */
	bool refusal_log;	 /* without @audit: a private log of refusals (level denied) */
	bool read_only;		 /* jailfs --read-only */
};

/*
 * Start `jailfs -f [-o fast_open] [--read-only] [--policy P] [--audit LOG
 * --audit-level L] SOURCE DIR` on a fresh private directory and wait (at
 * most 10 s) until the mount shows in mountinfo. LOG is @a->audit at level
 * all, or with @a->refusal_log a fresh private file at level denied (its fd
 * in o->log_fd, its name removed by jr_oneshot_stop); without either the
 * view gets zero-message opens (fast_open). On failure everything started
 * is torn down (o->log_fd may still need a close). Returns 0 or a negative
 * errno with a message in @err.
 */
int jr_oneshot_start(struct jr_oneshot *o, const struct jr_oneshot_args *a, char *err,
		     size_t errsz);

/*
 * Tear a view down whatever its daemon does (stopped, or a thread blocked):
 * abort its FUSE connection (fusectl's abort file where there is one, and
 * SIGKILL to the daemon), so that every request waiting on it fails, and
 * unmount it lazily. The audit records the daemon had not written are lost.
 * jr_oneshot_stop() still has to follow. No-op when not mounted.
 */
void jr_oneshot_abort(struct jr_oneshot *o);

/* Unmount, stop the daemon (SIGTERM, waits so the audit log is flushed),
 * remove the directory (and the log's name if still there; o->log_fd stays
 * open). Idempotent; safe on a zeroed struct. */
void jr_oneshot_stop(struct jr_oneshot *o);

/*
 * The audit file of the jailfs view mounted at @mnt: getxattr
 * JF_AUDIT_XATTR on its root, which the daemon answers once the records
 * queued so far are written. Writes its absolute path to @path (PATH_MAX
 * bytes). Returns 0, -ENODATA when the view writes no audit file, or another
 * negative errno (ENOTCONN: the daemon is gone).
 */
int jr_view_audit_log(const char *mnt, char *path);

/* Where jailrun reads the view's refusals during one command from. */
struct jr_viewlog {
	int fd;		 /* the audit log, O_RDONLY or the private log's fd; -1 none */
	long offset;	 /* where this command's records start, bytes */
	const char *mnt; /* --root: the mountpoint, asked again (a flush) before reading */
	/* a view other commands share: only the records of this pid namespace
	 * (the command's jail, jr_outcome.pidns) are its own; 0 = all */
	unsigned long long pidns;
	char unknown[PATH_MAX + 160]; /* why the refusals are unknown; "" when known */
};

/*
 * --root MNT: find the view's audit log (jr_view_audit_log), open it and
 * note its current end. When there is none or it cannot be read, @l->unknown
 * says why (the command runs all the same). Never fails.
 */
void jr_viewlog_root(struct jr_viewlog *l, const char *mnt);

struct jr_audit_counts;
struct jr_refusals;

/*
 * After the command: read its records from @l (jr_audit_read), under --root
 * once the daemon has written what it queued. Fills @rf (rf->unknown points
 * into @l when they are unknown) and, when @counts is not NULL, the counts;
 * returns 0, or a negative errno when the counts could not be read.
 */
int jr_viewlog_read(struct jr_viewlog *l, struct jr_audit_counts *counts, struct jr_refusals *rf);

/* Close @l's fd (if any). Idempotent. */
void jr_viewlog_close(struct jr_viewlog *l);

/* ---- sandbox.c / capture.c ---- */

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

/* the end of each stream kept: for jr_net_failure(), and after the marker of
 * a stream cut at its limit (where a build says what failed) */
#define JR_TAIL_BYTES 65536

struct jr_stream {
	/* captured bytes (--json), malloc'ed: at most limit; once cut (truncated),
	 * the head, a line "[... N bytes omitted ...]" and the tail */
	char *buf;
	size_t len;
	uint64_t total; /* everything the command wrote */
	bool truncated;
	char last_kept; /* the last byte kept or forwarded before the limit */
	/* once cut: bytes of the command's output kept before and after the
	 * marker (the tail is at most half the limit and JR_TAIL_BYTES) */
	uint64_t head_kept, tail_kept;
	/* the last JR_TAIL_BYTES bytes written (also live, also past the limit):
	 * a ring, tail[(total - k) % JR_TAIL_BYTES] is the k-th byte from the end */
	char tail[JR_TAIL_BYTES];
};

struct jr_outcome {
	int exit_code; /* command's exit status when exited */
	int signal;    /* terminating signal, 0 if exited */
	bool timed_out;
	bool interrupted;  /* jailrun got SIGINT/SIGTERM/SIGHUP */
	int interrupt_sig; /* which one (the exit status is then 128 + it) */
	int64_t duration_ms;
	struct jr_stream out, err;
	char error[256]; /* setup failure reported by the jail, "" if none */
	/* the view failed under the command: its daemon exited, or the jail's
	 * processes wait for a daemon that does not answer (then @stuck: they
	 * may still exist, the caller must abort the view); "" if not */
	char broken[256];
	bool stuck;
	/* without --net: the first connect() out of the jail, "COMM tried to
	 * connect to ADDR:PORT", said on stderr when it happened; "" if none */
	char net_refused[160];
	/* the jail's pid namespace: its inode, and an fd that keeps the number
	 * from being reused until the caller closes it (after reading the
	 * audit log); 0 and -1 when unknown */
	unsigned long long pidns;
	int pidns_fd;
};

/*
 * Run the command in the jail (capture.c): clone the namespaces, build the
 * root, start the command under a small pid 1, capture output into buffers of
 * at most @max_output bytes per stream (or forward at most that much live to
 * our fds 1 and 2 when @live); a stream past the limit keeps its head and its
 * tail with a marker line between (jr_stream). Enforce @timeout_ms (0 = none) with
 * SIGTERM then SIGKILL after @grace_ms. SIGINT/SIGTERM/SIGHUP must be blocked
 * by the caller: they are read from a signalfd and passed on to the jail.
 * Memory: res->out.buf / res->err.buf are malloc'ed (caller frees), at most
 * @max_output bytes each plus the marker. Returns 0 with @res filled (also when the command
 * failed, timed out or was killed), -EIO with res->error set when the jail
 * could not be set up, or another negative errno (pipe2, clone, poll).
 * Not thread-safe (uses static buffers).
 */
int jr_run(const struct jr_spawn *s, uint64_t timeout_ms, uint64_t grace_ms, uint64_t max_output,
	   bool live, struct jr_outcome *res);

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

/* ---- mountfd.c: mounts below the jail home (run by the jail's pid 1,
 * with the new root as the cwd) ---- */

/*
 * Open the mount point @path (an absolute jail path, taken below the cwd)
 * O_PATH, making what is missing (directories 0755; the last component an
 * empty file 0644 unless @is_dir), without following a symlink at any
 * component. Returns the fd (O_CLOEXEC, the caller's) or a negative errno:
 * ENOTDIR or ELOOP where a symlink or another type of file stands.
 */
int jr_mountpoint_open(const char *path, bool is_dir);

/* A detached recursive clone of the mount at @src_fd with MOUNT_ATTR_*
 * @attrs set. Returns its fd (O_CLOEXEC) or a negative errno. */
int jr_mount_clone(int src_fd, uint64_t attrs);

/* A detached empty read-only tmpfs (nosuid, nodev, noexec, mode 0555).
 * Returns its fd (O_CLOEXEC) or a negative errno. */
int jr_mount_empty_dir(void);

/* Attach the detached mount @tree at jr_mountpoint_open(@path, @is_dir).
 * Closes @tree. Returns 0 or a negative errno. */
int jr_mount_attach(int tree, const char *path, bool is_dir);

/* Status record pid-1 writes to the status pipe. */
struct jr_status_msg {
	int kind;  /* 1 = command ended, 2 = setup error */
	int code;  /* exit code, or errno for errors */
	int signo; /* terminating signal */
	char msg[200];
};
