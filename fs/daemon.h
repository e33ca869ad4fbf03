/* SPDX-License-Identifier: MIT */
/*
 * Internals of the jailfs FUSE daemon, shared by mount.c (start-up and the
 * session loop), options.c (command line), inode.c (inode table), backing.c
 * (the *at() access layer), symlink.c (symlink target checks) and ops.c (the
 * low-level operations).
 *
 * Error convention: every internal function returns 0 (or a value >= 0) on
 * success and a negative errno on failure; the sign is flipped once, at the
 * FUSE reply.
 */
#pragma once

#define FUSE_USE_VERSION 314

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "audit.h"
#include "policy.h"

/* ---- options (options.c) ---- */

struct jf_options {
	const char *source;	/* SOURCE as given */
	const char *mountpoint; /* MOUNTPOINT as given */
	const char *policy;	/* --policy / -o policy=, NULL = built-in default */
	bool foreground;	/* -f */
	bool debug;		/* -d */
	bool read_only;		/* --read-only / -o read_only / -o ro */
	bool help, version;
	double entry_timeout;	 /* seconds, -o entry_timeout= */
	double attr_timeout;	 /* seconds, -o attr_timeout= */
	double negative_timeout; /* seconds, -o negative_timeout= */
	unsigned max_threads;	 /* -o max_threads= (idle worker threads kept) */
	bool no_splice;		 /* -o no_splice */
	bool no_watch;		 /* -o nowatch: no inotify invalidation (watch.c) */
	bool fast_open;		 /* -o fast_open: zero-message opens (FUSE no_open) */
	bool no_passthrough;	 /* -o nopassthrough: every read and write through the daemon */
	const char *stats;	 /* --stats FILE / -o stats=FILE: request counts (stats.h) */
	struct jf_audit_config audit;
	const char *audit_level;    /* as given, parsed in mount.c */
	struct fuse_args fuse_args; /* argv for fuse_session_new (argv[0] + -o ...) */
	char **o_copies;	    /* the split -o strings: policy=, audit= ... point into them */
	size_t n_o_copies;
};

/* Parse argv into @opts. Returns 0, or 2 after printing a usage error to
 * stderr. @opts->fuse_args is owned by the caller (fuse_opt_free_args). */
int jf_options_parse(int argc, char **argv, struct jf_options *opts);
void jf_options_usage(const char *prog);
/* Free what jf_options_parse allocated (fuse_args and the -o copies). */
void jf_options_free(struct jf_options *opts);

/* ---- the filesystem ---- */

struct jf_file;

struct jf_inode {
	struct jf_inode *hnext;	 /* hash chain by (dev, ino) */
	struct jf_inode *parent; /* holds a reference; NULL for root or when unlinked */
	char *name;		 /* last name in parent (malloc'd); NULL when unlinked */
	dev_t dev;
	ino_t ino;
	uint64_t view_ino; /* st_ino shown in the view (unique across devices) */
	uint64_t nlookup;  /* kernel references (lookup count) */
	unsigned refs;	   /* children pointing at us + 1 while nlookup > 0 */
	mode_t type;	   /* S_IFMT bits */
	enum jf_zone zone; /* effective zone, cached; see jf_zone_of() */
	const struct jf_rule *rule;
	bool by_content; /* the zone depends on the content (jf_verdict.by_content) */
	/* Name generations (jf_fs.name_gen), under jf_fs.lock: @moved_gen is
	 * the generation of the last rename that gave this inode a new parent
	 * or name, @zone_gen the one @zone was computed at. @zone is stale when
	 * the inode or any ancestor moved after it was computed. */
	uint64_t moved_gen, zone_gen;
	bool safe_links; /* hard links made through the view between SAFE names */
	/* Last seen at open, for FOPEN_KEEP_CACHE. */
	struct timespec open_mtime;
	off_t open_size;
	/* length of the (rewritten) symlink target; set by each lookup that
	 * finds the inode, read by getattr: an atomic, no lock */
	_Atomic uint32_t symlink_len;
	struct jf_file *open_files; /* open handles (for fstat of unlinked files) */
	/* no_open mode (ops-file.c): an fd on a regular file unlinked or replaced
	 * through the view while the kernel still held it, so a process that
	 * has it open keeps reading and writing it, as POSIX says; -1 when none.
	 * Closed when the inode is freed. */
	int orphan_fd;
	struct timespec btime; /* birth time, {0, 0} when unknown */
	bool unhashed;	       /* replaced by a newer object with the same (dev, ino) */
	/* CLOCK_MONOTONIC ms of the last readdirplus from offset 0 (ops-dir.c):
	 * the kernel's dentries of the children are fresh until entry_timeout
	 * after it, so its readdir cache may be kept. */
	atomic_uint_fast64_t listed_ms;
};

struct jf_fs {
	struct jf_policy *policy;
	const struct jf_options *opts;
	int root_fd;	  /* O_PATH fd of SOURCE: every backing access is below it */
	char *source_abs; /* realpath(SOURCE) */
	char *mnt_rel;	  /* MOUNTPOINT relative to SOURCE if inside it, else NULL */
	char *mnt_abs;	  /* realpath(MOUNTPOINT) */
	dev_t root_dev;
	uid_t daemon_uid;
	struct jf_inode root;
	uint64_t max_size[3]; /* jf_policy_max_file_size per zone */
	/* Answer the first OPEN with ENOSYS, so the kernel stops sending OPEN and
	 * RELEASE (FUSE no_open, Linux >= 4.19): reads and writes arrive with
	 * fh == 0 and open the backing file per request. Set at init: only with
	 * -o fast_open, and not while an audit log is on (at every level a
	 * refused write open must reach the log). Files outside SAFE are then
	 * shown without write bits (jf_fill_attr). */
	bool no_open;
	struct fuse_session *se; /* for notifications from helper threads */
	enum jf_hardlinks hardlinks;

	pthread_mutex_t lock; /* guards the table, parent/name/nlookup/refs */
	/* The namespace lock. Every request that checks a name and then
	 * creates, removes or changes it through the view (create, mknod,
	 * mkdir, symlink, link, unlink, rmdir, rename of a non-directory,
	 * setattr, setxattr) holds it shared from the check to the table
	 * update; a rename that moves a directory holds it exclusive, so no
	 * path computed for a check can change under the operation it allows.
	 * Writer-preferring; never taken twice by one thread. Taken before
	 * jf_fs.lock, never while holding it. */
	pthread_rwlock_t ns_lock;
	/* Bumped (under lock) by every rename the table learns of; read
	 * atomically by probes to date the zone they compute. */
	_Atomic uint64_t name_gen;
	struct jf_inode **table;
	struct jf_inode *unhashed; /* replaced inodes the kernel still holds (hnext) */
	size_t table_size, count;
	uint64_t next_view_ino;
	bool debug;
};

extern struct jf_fs jf_fs;

struct jf_file;

/* Open file handle (fi->fh). */
struct jf_file {
	int fd;
	struct jf_inode *inode;
	enum jf_zone zone;
	bool by_content; /* zone decided by the content: checked at each read */
	bool writable;
	atomic_int_fast64_t bytes_read;
	atomic_int_fast64_t bytes_written;
	struct jf_file *next_open; /* inode->open_files list, under jf_fs.lock */
	pid_t pid;		   /* opener, for the release record (release has no caller) */
	uid_t uid;
	/* > 0: the kernel serves reads and writes from this backing file id
	 * (passthrough.h), shared by all open handles of the inode. */
	int32_t backing_id;
};

/* ---- inode table (inode.c); all functions take jf_fs.lock themselves ---- */

int jf_inode_init(struct jf_fs *fs, const struct stat *root_st);
struct jf_inode *jf_inode_get(fuse_ino_t ino);
/* Find or create the inode for @st reached as @name in @parent, add one
 * lookup reference. @btime is the birth time (NULL when the filesystem has
 * none): an inode number the filesystem reused for a new object (a different
 * type or birth time, or an entry we saw removed) gets a fresh inode, so the
 * kernel never mistakes the new object for the old one. @v is the zone
 * computed at name generation @gen (read before the probe). An inode that
 * gets a new parent or name here counts as moved. NULL on ENOMEM. */
struct jf_inode *jf_inode_ref(struct jf_inode *parent, const char *name, const struct stat *st,
			      const struct timespec *btime, const struct jf_verdict *v,
			      uint64_t gen, bool *created);
/* What the table knows about (dev, ino), copied under the lock (no pointer
 * escapes: a concurrent forget may free the inode). */
struct jf_inode_info {
	enum jf_zone zone;
	bool safe_links;
	uint64_t view_ino;
};
/* True and fills @out when (dev, ino) is in the table. */
bool jf_inode_info(dev_t dev, ino_t ino, struct jf_inode_info *out);
void jf_inode_forget(struct jf_inode *inode, uint64_t n);
/* View-relative path of @inode into @buf (JF_PATH_MAX+1 bytes). Returns the
 * length, -ENOENT when the inode was unlinked, -ENAMETOOLONG. */
int jf_inode_path(struct jf_inode *inode, char *buf, size_t size);
/* After a rename or unlink: if (dev, ino) is in the table attached as
 * @parent/@name, re-attach it as @nparent/@nname (NULL, NULL detaches it).
 * Check and move happen under one lock hold. */
void jf_inode_rename(dev_t dev, ino_t ino, struct jf_inode *parent, const char *name,
		     struct jf_inode *nparent, const char *nname);
/* no_open mode: keep @fd (O_RDWR on a regular file about to lose its last
 * name) on the inode (dev, ino), which then owns it; closes @fd when the
 * inode is not in the table or has one already. */
void jf_inode_set_orphan(dev_t dev, ino_t ino, int fd);
/* A new fd (F_DUPFD_CLOEXEC, caller closes it) on @inode's orphan fd, or
 * -ENOENT when it has none, -EMFILE... from fcntl(2). */
int jf_inode_orphan_fd(struct jf_inode *inode);
/* @inode's parent nodeid and a malloc'd copy of its name (caller frees),
 * read under one lock hold. 0, -ENOENT (root or detached), -ENOMEM. */
int jf_inode_parent_name(struct jf_inode *inode, fuse_ino_t *parent, char **name);
/* Cached zone of @inode into @v when it is fresh (no rename moved the inode
 * or an ancestor since it was computed, and not @reread of a zone that
 * depends on the content): returns 1. Else returns 0 with the current
 * generation in @gen and the view path in @path (JF_PATH_MAX + 1 bytes), for
 * jf_zone_of() to recompute; -ESTALE (detached), -ENAMETOOLONG. @v always
 * gets the cached zone. One hold of jf_fs.lock. */
int jf_inode_zone_get(struct jf_inode *inode, struct jf_verdict *v, uint64_t *gen, char *path,
		      size_t size, bool reread);
/* Store a zone computed at generation @gen. Takes jf_fs.lock. */
void jf_inode_zone_set(struct jf_inode *inode, const struct jf_verdict *v, uint64_t gen);
/* Set @inode's safe_links flag (a hard link made through the view between
 * SAFE names); returns the previous value. Takes jf_fs.lock. */
bool jf_inode_set_safe_links(struct jf_inode *inode, bool on);
/* Give @inode the name @name in @parent (a hard link made through the view:
 * its newest name is the one its path is built from), counting as a move.
 * Takes jf_fs.lock. */
void jf_inode_attach(struct jf_inode *inode, struct jf_inode *parent, const char *name);
/* The caller holds jf_fs.ns_lock (shared or exclusive), checked in debug
 * builds only. */
void jf_ns_assert_held(void);
/* Take and release jf_fs.ns_lock: shared for requests that check and then
 * make, remove or change one name, exclusive for renames of directories. */
void jf_ns_lock(bool exclusive);
void jf_ns_unlock(void);
uint64_t jf_view_ino(const struct jf_inode *inode);
void jf_inode_free_all(void);

/* ---- backing access (backing.c) ---- */

/* "" -> "." for openat2. */
static inline const char *jf_rel(const char *path)
{
	return path[0] ? path : ".";
}

/* openat2(dirfd, path, flags, RESOLVE_BENEATH|NO_SYMLINKS|NO_MAGICLINKS);
 * O_CLOEXEC|O_NOFOLLOW always added. Returns fd or -errno (-ENOENT for a
 * symlink on the way). */
int jf_open_below(int dirfd, const char *path, int flags, mode_t mode);
/* jf_open_below() from root_fd. */
int jf_open_beneath(const char *path, int flags, mode_t mode);
/* Open the inode by its path and check (dev, ino): -ESTALE on mismatch. */
int jf_open_inode(struct jf_inode *inode, int flags, struct stat *st);
/* Open the parent directory of @inode's path; *name gets the last component
 * (points into @buf). For creating names in dir inodes use jf_open_inode. */
int jf_join(char *buf, size_t size, const char *dir, const char *name);
/* Is the mount at @fd a pseudo filesystem (proc, sysfs...)? True when
 * fstatfs fails (fails closed). Used by the daemon and by --scan alike. */
bool jf_is_pseudo_fs(int fd);
/* Apply a per-fd op that needs a path: "/proc/self/fd/N". */
void jf_proc_fd_path(char *buf, size_t size, int fd);

/* ---- the fd budget (fd-budget.c) ---- */

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

/* ---- symlinks (symlink.c) ---- */

/* Decide how the symlink at view dir @dir with raw backing target @target is
 * shown: returns 0 with the view target in @out (rewritten when absolute
 * inside SOURCE), or -ENOENT when it must be hidden. */
int jf_symlink_view(const char *dir, const char *target, char *out, size_t size);
/* Check a target the agent wants to create in view dir @dir: 0 or -EACCES. */
int jf_symlink_check_new(const char *dir, const char *target);

/* ---- hard-link index (hardlinks.c) ---- */

struct jf_hardlink_stats {
	uint64_t entries; /* names stat'ed */
	uint64_t dirs;	  /* directories read */
	uint64_t files;	  /* regular files with st_nlink > 1 indexed */
	uint64_t bytes;	  /* memory of the index */
	uint64_t ms;	  /* wall time of the walk, milliseconds */
};

/* Walk SOURCE (below jf_fs.root_fd, never following symlinks, skipping
 * pseudo filesystems and MOUNTPOINT) and index every regular file with
 * st_nlink > 1: the most restrictive zone of its names and how many were
 * found. Start-up only, single-threaded, before the mount. 0 or -ENOMEM. */
int jf_hardlinks_index(struct jf_hardlink_stats *stats);
/* Run jf_hardlinks_index() in a thread of its own (start after any fork):
 * 0 or -EAGAIN... from pthread_create(3). Main thread only. */
int jf_hardlinks_start(void);
/* No walk (policy hardlinks = zone or deny): mark the index complete. */
void jf_hardlinks_skip(void);
/* Block until the walk ended (at once once it has, or after
 * jf_hardlinks_skip). Any thread. */
void jf_hardlinks_wait(void);
/* Stop the walk early (at exit) and join it. Main thread only; idempotent. */
void jf_hardlinks_stop(void);
/* Effective zone of a regular file with st_nlink > 1 reached by a name of
 * zone @zone (policy hardlinks = restricted): DENIED when a known name is
 * DENIED, SAFE when all st_nlink names were found and are SAFE, else at
 * least RESTRICTED. Lock-free (the index is read-only once serving). */
enum jf_zone jf_hardlink_zone(const struct stat *st, enum jf_zone zone);
/* Does the index hold a file with a DENIED name (readdir must stat files)? */
bool jf_hardlink_any_denied(void);
void jf_hardlinks_free(void);

/* ---- files tracked by git (tracked.c) ---- */

/* A regular file tracked in SOURCE's git index whose path the policy DENIES
 * and whose content was the indexed blob at start-up, or (dir) a DENIED
 * directory leading to one. */
struct jf_tracked {
	const char *path; /* view path, @len bytes, NUL-terminated */
	uint32_t len;
	bool dir;
	uint32_t id;   /* unique among the files */
	uint32_t size; /* as the index has it, truncated to 32 bits */
	size_t hashsz; /* 20 (SHA-1) or 32 (SHA-256) */
	unsigned char oid[32];
};

/* The rule of such files' verdicts: prints as "git-index", zone RESTRICTED. */
extern const struct jf_rule jf_git_index_rule;

/* Read SOURCE's .git/index below @rootfd once, keep the tracked files with
 * DENIED names whose content matches (see tracked.c), and unless @quiet say
 * on stderr how many are shown. @source names SOURCE in messages. Needs jf_fs.policy. Start-up
 * only, one thread, before serving. Returns 0 (also without a repository, or when the policy hides
 * .git/objects) or a negative errno after one warning; then nothing is shown (fail closed). */
int jf_tracked_load(int rootfd, const char *source, bool quiet);
/* The entry for view path @path (@len bytes), or NULL. Lock-free. */
const struct jf_tracked *jf_tracked_find(const char *path, size_t len);
void jf_tracked_free(void);

/* ---- what a name cannot tell (zones.c) ---- */

/* May jf_zone_refine() change verdict @v of @path (DENIED by a rule subject
 * to content, or a tracked path)? No backing access; thread-safe. */
bool jf_zone_may_refine(const char *path, size_t len, const struct jf_verdict *v);
/*
 * Refine the DENIED verdict @v of the existing object @name below directory
 * @dirfd (view path @path, @len bytes; @st its lstat): a regular file whose
 * content is public gets the zone of jf_classify_public(), a tracked file
 * whose content is its indexed blob and a tracked directory get RESTRICTED
 * with rule jf_git_index_rule; by_content is set for files. Otherwise @v
 * stays. Reads the file through openat2 below @dirfd (never a symlink),
 * only when it still matches @st; results cached by (dev, ino, size, mtime,
 * ctime). Needs jf_fs.policy. Thread-safe.
 */
void jf_zone_refine(int dirfd, const char *name, const char *path, size_t len,
		    const struct stat *st, struct jf_verdict *v);
/* Is the regular file @name below @dirfd (@st) the blob of tracked entry @t?
 * Cached like jf_zone_refine(). */
bool jf_zone_tracked_ok(int dirfd, const char *name, const struct stat *st,
			const struct jf_tracked *t);

/* ---- classification helpers (ops.c) ---- */

/* Classify view path @path; names refused by jf_check_name are DENIED. */
void jf_classify_path(const char *path, size_t len, bool is_dir, struct jf_verdict *v);
/* Effective zone of an existing backing object (hard links, pseudo fs). */
enum jf_zone jf_effective_zone(const struct stat *st, enum jf_zone zone, bool safe_links);

extern const struct fuse_lowlevel_ops jf_ops;
/* Close directory handles the kernel never released; at exit only. */
void jf_ops_cleanup(void);
