/* SPDX-License-Identifier: MIT */
/*
 * jailfs SOURCE MOUNTPOINT: start-up of the FUSE daemon.
 *
 * Order matters: parse and load the policy, open SOURCE (the only path ever
 * opened from '/'; everything after is relative to that fd), mount, then
 * detach (fuse_daemonize after fuse_session_mount, like sshfs: the parent
 * exits 0 only once the mount is ready), then start the audit writer thread
 * (threads do not survive the fork), then serve with the multi-threaded loop.
 * SIGINT/SIGTERM end the loop (fuse_set_signal_handlers) and we unmount;
 * SIGHUP reopens the audit file.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "backing.h"
#include "changes.h"
#include "cleanup.h"
#include "fd-budget.h"
#include "fsstate.h"
#include "handler.h"
#include "hardlinks.h"
#include "idle.h"
#include "inode.h"
#include "jailfs.h"
#include "notify.h"
#include "ops.h"
#include "options.h"
#include "passthrough.h"
#include "policy.h"
#include "recent.h"
#include "refine.h"
#include "stats.h"
#include "status.h"
#include "systarget.h"
#include "tracked.h"
#include "uring.h"
#include "watch.h"
#include "zone-name.h"

/* The inode table tells the watch module of its directories. */
static const struct jf_inode_watcher watcher = {
	.dir_ref = jf_watch_dir,
	.forget = jf_watch_forget,
	.own_change = jf_recent_note,
};

static void on_sighup(int sig)
{
	(void)sig;
	jf_audit_request_reopen();
}

/* Escape ',' and '\' for a fuse_opt value. Caller frees. */
static char *opt_escape(const char *s)
{
	char *out = malloc(strlen(s) * 2 + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (*s == ',' || *s == '\\')
			*o++ = '\\';
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

/* @inner relative to @outer when inside it (component-wise), else NULL. */
static char *path_inside(const char *outer, const char *inner)
{
	size_t n = strlen(outer);

	if (strcmp(outer, "/") == 0)
		return strdup(inner + 1);
	if (strncmp(outer, inner, n) != 0 || (inner[n] != '/' && inner[n] != '\0'))
		return NULL;
	return strdup(inner[n] ? inner + n + 1 : "");
}

static int check_mountpoint(const char *mnt)
{
	struct stat st;

	if (stat(mnt, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			fprintf(stderr, "jailfs: %s: mountpoint is not a directory\n", mnt);
			return 1;
		}
		return 0;
	}
	if (errno == ENOTCONN) {
		fprintf(stderr,
			"jailfs: %s: stale FUSE mount (transport endpoint is not connected):\n"
			"  a FUSE daemon serving it died without unmounting. Clear it with\n"
			"    fusermount3 -u %s\n"
			"  or, as root,\n"
			"    umount -l %s\n"
			"  then run jailfs again.\n",
			mnt, mnt, mnt);
		return 1;
	}
	fprintf(stderr, "jailfs: %s: %s\n", mnt, strerror(errno));
	return 1;
}

static int same_mountpoint(const struct jf_mount *m, void *mnt)
{
	return strcmp(m->mountpoint, mnt) == 0;
}

/* Is @mnt (canonical) the mountpoint of a fuse.jailfs mount already? */
static bool is_jailfs_mount(const char *mnt)
{
	return jf_mounts_foreach(same_mountpoint, (void *)mnt) > 0;
}

/* Mounting over files hides them until the unmount: say so. */
static void warn_not_empty(const char *mnt)
{
	_cleanup_closedir_ DIR *d = opendir(mnt);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			fprintf(stderr,
				"jailfs: warning: %s is not empty: what it holds is hidden while "
				"the view is mounted\n",
				mnt);
			return;
		}
}

/* The daemon's tables of its view (jf_fs.view points to them). */
static struct jf_tracked_set tracked;
static struct jf_judged judged;

static int load_policy(struct jf_options *o)
{
	_cleanup_free_ char *found = NULL;
	const char *file = o->policy, *origin;
	char err[512] = "";
	int r = 0;

	if (!file)
		r = jf_policy_locate(o->source, &found, &origin, err, sizeof(err));
	if (!file)
		file = found;
	if (r == 0 && file)
		r = jf_policy_load(file, &jf_fs.view.policy, err, sizeof(err));
	else if (r == 0)
		r = jf_policy_default(&jf_fs.view.policy);
	if (r < 0) {
		if (err[0])
			fprintf(stderr, "jailfs: %s\n", err);
		else
			fprintf(stderr, "jailfs: %s: %s\n", file ? file : "default policy",
				strerror(-r));
		return 2;
	}
	if (file)
		o->policy_abs = realpath(file, NULL); /* NULL: --list names it as given */
	jf_policy_set_read_only(jf_fs.view.policy, o->read_only);
	for (int z = JF_SAFE; z <= JF_DENIED; z++)
		jf_fs.max_size[z] = jf_policy_max_file_size(jf_fs.view.policy, (enum jf_zone)z);
	jf_fs.view.hardlinks = jf_policy_hardlinks(jf_fs.view.policy);
	return 0;
}

/* Resolve SOURCE and MOUNTPOINT, open root_fd and host_root_fd. Returns 0 or an exit
 * status. */
static int open_source(const struct jf_options *o)
{
	char *mnt_abs;
	struct stat st;

	jf_fs.view.source_abs = realpath(o->source, NULL);
	if (!jf_fs.view.source_abs) {
		fprintf(stderr, "jailfs: %s: %s\n", o->source, strerror(errno));
		return 1;
	}
	if (check_mountpoint(o->mountpoint))
		return 1;
	mnt_abs = realpath(o->mountpoint, NULL);
	if (!mnt_abs) {
		fprintf(stderr, "jailfs: %s: %s\n", o->mountpoint, strerror(errno));
		return 1;
	}
	jf_fs.mnt_abs = mnt_abs; /* mount and unmount by absolute path: the
				  * daemon chdirs to / when it detaches */
	if (is_jailfs_mount(mnt_abs)) {
		fprintf(stderr,
			"jailfs: %s is already a jailfs mount; a second one would stack on it\n"
			"  (two entries in findmnt, two unmounts). Unmount it first:\n"
			"    fusermount3 -u '%s'\n",
			mnt_abs, mnt_abs);
		return 1;
	}
	warn_not_empty(mnt_abs);
	jf_fs.view.mnt_rel = path_inside(jf_fs.view.source_abs, mnt_abs);
	if (jf_fs.view.mnt_rel && !jf_fs.view.mnt_rel[0]) {
		fprintf(stderr, "jailfs: %s: MOUNTPOINT must not be SOURCE itself\n",
			o->mountpoint);
		return 2;
	}
	jf_fs.view.host_root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (jf_fs.view.host_root_fd < 0) {
		fprintf(stderr, "jailfs: /: %s\n", strerror(errno));
		return 1;
	}
	jf_fs.view.root_fd = open(jf_fs.view.source_abs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (jf_fs.view.root_fd < 0) {
		fprintf(stderr, "jailfs: %s: %s\n", jf_fs.view.source_abs, strerror(errno));
		return 1;
	}
	/* Overlay mode: the root fd becomes the overlay over SOURCE. */
	if (o->changes) {
		int r = jf_changes_setup(o->changes, &jf_fs.view.root_fd, jf_fs.view.source_abs,
					 mnt_abs);

		if (r)
			return r;
	}
	if (fstat(jf_fs.view.root_fd, &st) < 0) {
		fprintf(stderr, "jailfs: %s: %s\n", jf_fs.view.source_abs, strerror(errno));
		return 1;
	}
	if (jf_inode_init(&jf_fs, &st) < 0) {
		fprintf(stderr, "jailfs: out of memory\n");
		return 1;
	}
	jf_inode_set_watcher(&watcher);
	jf_fs.view.root_dev = st.st_dev;
	jf_fs.view.root_ino = st.st_ino;
	jf_fs.view.host_check = jf_systarget_check;
	jf_fs.view.name_gen = &jf_fs.name_gen;
	jf_fs.view.inode_info = jf_inode_info;
	jf_fs.view.tracked = &tracked;
	if (jf_judged_init(&judged) < 0) {
		fprintf(stderr, "jailfs: out of memory\n");
		return 1;
	}
	jf_fs.view.judged = &judged;
	jf_fs.view.links = jf_hardlinks_new();
	if (!jf_fs.view.links) {
		fprintf(stderr, "jailfs: out of memory\n");
		return 1;
	}
	{
		struct jf_verdict v;

		jf_classify_path(&jf_fs.view, "", 0, true, &v);
		jf_fs.root.zone = v.zone == JF_DENIED ? JF_RESTRICTED : v.zone;
		jf_fs.root.rule = v.rule;
	}
	return 0;
}

/* Is an audit log asked for (a file or syslog, at a level other than off)? */
static bool audit_on(const struct jf_options *o)
{
	return (o->audit.path || o->audit.syslog) && o->audit.level != JF_AUDIT_OFF;
}

static int add_mount_options(struct jf_options *o)
{
	_cleanup_free_ char *fsname = opt_escape(jf_fs.view.source_abs);
	_cleanup_free_ char *opt = NULL;

	/* A read-only view is a read-only mount: the kernel answers EROFS at
	 * open(2) and to every other mutation before any request (no_open mode
	 * would otherwise refuse only at the first write). Not while an audit
	 * log is on: the refusals must reach the daemon to be recorded, and it
	 * then sees every open and refuses each mutation itself (with
	 * read_only every name is RESTRICTED). */
	if (!fsname || asprintf(&opt,
				"fsname=%s,subtype=jailfs,nosuid,nodev,"
				"default_permissions%s",
				fsname, o->read_only && !audit_on(o) ? ",ro" : "") < 0)
		return -ENOMEM;
	if (fuse_opt_add_arg(&o->fuse_args, "-o") < 0 || fuse_opt_add_arg(&o->fuse_args, opt) < 0)
		return -ENOMEM;
	return 0;
}

/*
 * Zero-message opens (FUSE no_open) unless -o fast_open / -o nofast_open
 * says otherwise: on a read-only view (the kernel's MS_RDONLY, or with an
 * audit log the daemon, refuses every mutation), on a view whose policy
 * makes no name SAFE (share.ini: every write meets EROFS at its mutation,
 * so OPEN would only cost a round trip per file) and on every mount that
 * only its user's processes may enter (no allow_other, allow_root), root's
 * too: an OPEN and a RELEASE per file cost more on trees of small files
 * than passthrough saves on large ones (docs/benchmarks.md), and pages one
 * process dirties through a shared writable mapping of a file outside SAFE
 * are then seen only by processes of the same user. A view other users
 * enter keeps OPEN (and passthrough, where the daemon may use it), so no
 * such page reaches them. jf_init still turns it off at the audit levels
 * that record opens.
 */
static void choose_open_mode(struct jf_options *o)
{
	if (!o->fast_open_given)
		o->fast_open =
			o->read_only || !jf_policy_can_write(jf_fs.view.policy) || !o->allow_others;
}

static char *audit_abs; /* absolute audit path, owned here */

/* Absolute form of @path: realpath of its directory + its last name (the file
 * itself may not exist yet). NULL with errno set. Caller frees. */
static char *abs_file_path(const char *path)
{
	_cleanup_free_ char *copy = strdup(path), *dir = NULL;
	const char *base;
	char *slash, *out = NULL;

	if (!copy)
		return NULL;
	slash = strrchr(copy, '/');
	if (slash == copy) {
		dir = strdup("/");
		base = copy + 1;
	} else if (slash) {
		*slash = '\0';
		dir = realpath(copy, NULL);
		base = slash + 1;
	} else {
		dir = realpath(".", NULL);
		base = copy;
	}
	if (!dir)
		return NULL;
	if (!base[0] || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		errno = EISDIR;
		return NULL;
	}
	if (asprintf(&out, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", base) < 0)
		return NULL;
	return out;
}

/*
 * An audit file inside SOURCE would be part of the view: unless the policy
 * hides it, the audited program could read its own record, and in SAFE
 * rewrite or truncate it. Accept it only where the policy makes it DENIED.
 * @target is where records really go (symlinks in the path resolved).
 */
static int check_audit_in_source(const char *given, const char *target)
{
	_cleanup_free_ char *rel = path_inside(jf_fs.view.source_abs, target);
	struct jf_verdict v;

	if (!rel)
		return 0;
	jf_classify(jf_fs.view.policy, rel, strlen(rel), false, &v);
	if (v.zone == JF_DENIED)
		return 0;
	fprintf(stderr,
		"jailfs: --audit %s: the audit file is inside SOURCE %s and would be %s in the "
		"view\n"
		"  (the audited program could read or rewrite its own record); put it outside\n"
		"  SOURCE, or add its name to the policy's [denied] section\n",
		given, jf_fs.view.source_abs, jf_zone_name(v.zone));
	return 2;
}

/* Where records will really be written: audit_abs, or the file a symlink in
 * its last component names (a symlink outside SOURCE may point inside it;
 * red-team finding). A dangling symlink is refused: open(O_CREAT) would
 * create its target wherever it points. Returns a malloc'd path or NULL. */
static char *audit_target(void)
{
	struct stat st;

	if (lstat(audit_abs, &st) < 0 || !S_ISLNK(st.st_mode))
		return strdup(audit_abs);
	return realpath(audit_abs, NULL);
}

/* Refuse a target inside MOUNTPOINT: the writer thread would write through
 * our own mount and deadlock. */
static int check_audit_in_mount(const char *given, const char *target)
{
	_cleanup_free_ char *inside = path_inside(jf_fs.mnt_abs, target);

	if (!inside)
		return 0;
	fprintf(stderr,
		"jailfs: --audit %s: the audit file must not be inside MOUNTPOINT %s\n"
		"  (the daemon would write through its own mount and deadlock);\n"
		"  put it outside the mountpoint, e.g. next to SOURCE\n",
		given, jf_fs.mnt_abs);
	return 2;
}

/*
 * The audit file must be writable before we detach: fail on the terminal.
 * Its path is made absolute now, because fuse_daemonize() chdirs to '/'
 * (a relative path would end up in /). A regular file with a second name is
 * refused: that name may be inside SOURCE, where the view would expose it.
 */
static int precheck_audit(struct jf_options *o)
{
	_cleanup_free_ char *target = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	if (!o->audit.path)
		return 0;
	audit_abs = abs_file_path(o->audit.path);
	if (audit_abs)
		target = audit_target();
	if (!audit_abs || !target) {
		fprintf(stderr, "jailfs: --audit %s: %s%s\n", o->audit.path, strerror(errno),
			audit_abs ? " (a symlink whose target cannot be resolved)" : "");
		return 1;
	}
	r = check_audit_in_mount(o->audit.path, target);
	if (!r)
		r = check_audit_in_source(o->audit.path, target);
	if (r)
		return r;
	fd = open(target, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "jailfs: --audit %s: %s\n", target, strerror(errno));
		return 1;
	}
	if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
		fprintf(stderr,
			"jailfs: --audit %s: the audit file has %ju names (hard links); one may be "
			"inside SOURCE\n  and exposed in the view: give a file with a single "
			"name\n",
			o->audit.path, (uintmax_t)st.st_nlink);
		return 2;
	}
	o->audit.path = audit_abs;
	return 0;
}

/* Index multiply-linked files (hardlinks.c) in the background, after any
 * fork: lookups of such files wait for it. Policy hardlinks = zone or deny
 * need no index. 0 or 1 after an error message. */
static int index_hardlinks(void)
{
	int r;

	if (jf_fs.view.hardlinks != JF_HARDLINKS_RESTRICTED) {
		jf_hardlinks_skip(jf_fs.view.links);
		return 0;
	}
	r = jf_hardlinks_start(jf_fs.view.links, &jf_fs.view, jf_fs.debug);
	if (r < 0)
		fprintf(stderr, "jailfs: cannot start the hard-link index: %s\n", strerror(-r));
	return r < 0;
}

static int serve(struct jf_options *o)
{
	struct fuse_session *se;
	struct fuse_loop_config *cfg;
	struct sigaction sa = {.sa_handler = on_sighup};
	bool audit = audit_on(o);
	unsigned workers = o->max_threads > 10 ? o->max_threads : 10;
	int r, status = 1;

	jf_fd_budget_init(workers);
	/* Before the daemon detaches: a relative FILE is the caller's. */
	if ((r = jf_stats_start(o->stats)) < 0) {
		fprintf(stderr, "jailfs: --stats %s: %s\n", o->stats, strerror(-r));
		return 1;
	}
	if ((r = jf_idle_open(o->idle_lock)) < 0) {
		fprintf(stderr, "jailfs: --idle-lock %s: %s\n", o->idle_lock, strerror(-r));
		jf_stats_stop();
		return 1;
	}
	se = fuse_session_new(&o->fuse_args, &jf_ops, sizeof(jf_ops), &jf_fs);
	if (!se)
		return 2; /* libfuse printed the bad option */
	jf_fs.se = se;
	if (fuse_set_signal_handlers(se) < 0)
		goto out_destroy;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
	if (fuse_session_mount(se, jf_fs.mnt_abs) < 0) {
		fprintf(stderr, "jailfs: cannot mount %s on %s\n", jf_fs.view.source_abs,
			o->mountpoint);
		if (geteuid() != 0 && access("/dev/fuse", R_OK | W_OK) < 0)
			fprintf(stderr, "jailfs: /dev/fuse is not usable by this user; fusermount3 "
					"needs it mode 0666 (Debian's default)\n");
		goto out_signals;
	}
	/* Our own end of /dev/fuse: request counters, passthrough. */
	if ((r = jf_devio_install(se)) < 0) {
		fprintf(stderr, "jailfs: cannot hook /dev/fuse: %s\n", strerror(-r));
		goto out_unmount;
	}
	jf_uring_prepare(se);
	if (fuse_daemonize(o->foreground) < 0)
		goto out_unmount;
	if (index_hardlinks())
		goto out_unmount;
	if (audit && (r = jf_audit_start(&o->audit)) < 0) {
		fprintf(stderr, "jailfs: cannot start the audit log: %s\n", strerror(-r));
		goto out_unmount;
	}
	/* After the fork, like the audit writer; on failure each warned and we
	 * serve without it (the timeouts bound staleness). The watcher pushes
	 * to the notifier. */
	jf_notify_start(se);
	if (!o->no_watch)
		jf_watch_start();
	if (jf_changes_start() < 0)
		goto out_audit;
	if ((r = jf_idle_start(o->idle_exit_ms)) < 0) {
		fprintf(stderr, "jailfs: cannot start the idle watch: %s\n", strerror(-r));
		goto out_audit;
	}
	cfg = fuse_loop_cfg_create();
	if (!cfg)
		goto out_audit;
	fuse_loop_cfg_set_idle_threads(cfg, o->max_threads);
	fuse_loop_cfg_set_max_threads(cfg, workers);
	r = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	status = r < 0 ? 1 : 0;
	/* No ring thread serves past the loop; one waiting for the hard-link
	 * index is woken by stopping the walk first. */
	jf_hardlinks_stop(jf_fs.view.links);
	jf_uring_stop();
	if (o->debug || o->stats)
		jf_stats_report();
out_audit:
	jf_changes_stop(); /* its remount pushes to the notifier */
	jf_watch_stop();   /* no push to the notifier after it */
	if (audit)
		jf_audit_stop();
out_unmount:
	jf_hardlinks_stop(jf_fs.view.links);
	jf_notify_stop(); /* fuse_session_unmount closes the session's fd */
	fuse_session_unmount(se);
	/* after the unmount: a jailrun waiting for the lock finds no view */
	jf_idle_stop();
out_signals:
	fuse_remove_signal_handlers(se);
out_destroy:
	fuse_session_destroy(se);
	jf_idle_stop();
	jf_stats_stop();
	return status;
}

/*
 * libfuse's multi-threaded loop ends its workers with pthread_cancel(3),
 * for which glibc dlopen()s libgcc_s on first use; with every fd in use that
 * fails and glibc aborts ("libgcc_s.so.1 must be installed for
 * pthread_cancel to work"), leaving a dead mount. Load it up front.
 */
static void preload_unwinder(void)
{
	(void)dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NODELETE);
}

int jf_cmd_mount(int argc, char **argv)
{
	struct jf_options o = {.fuse_args = FUSE_ARGS_INIT(0, NULL)};
	int r;

	jf_fs.view.root_fd = -1;
	jf_fs.view.host_root_fd = -1;
	jf_fs.opts = &o;
	preload_unwinder();
	r = jf_options_parse(argc, argv, &o);
	if (r || o.help || o.version) {
		if (o.help)
			jf_options_usage("jailfs");
		if (o.version)
			printf("jailfs %s (libfuse %s)\n", JAILFS_VERSION, fuse_pkgversion());
		jf_options_free(&o);
		return r;
	}
	if (o.audit_level && jf_audit_parse_level(o.audit_level, &o.audit.level) < 0) {
		fprintf(stderr, "jailfs: --audit-level %s: expected denied, writes or all\n",
			o.audit_level);
		r = 2;
	} else if (!o.audit_level) {
		o.audit.level = JF_AUDIT_DENIED;
	}
	if (!r)
		r = load_policy(&o);
	if (!r)
		r = open_source(&o);
	if (!r) /* never fatal: a bad index shows nothing more, with a warning */
		jf_refine_load_tracked(&jf_fs.view, &tracked,
				       o.verbose ? JF_TELL_ALWAYS : JF_TELL_ONCE);
	if (!r)
		r = precheck_audit(&o);
	if (!r)
		choose_open_mode(&o);
	if (!r && add_mount_options(&o) < 0)
		r = 1;
	if (!r) {
		jf_fs.daemon_uid = geteuid();
		umask(0); /* the kernel already applied the caller's umask */
		r = serve(&o);
	}
	jf_options_free(&o);
	jf_ops_cleanup();
	if (jf_fs.table.size)
		jf_inode_free_all();
	if (jf_fs.view.root_fd >= 0)
		close(jf_fs.view.root_fd);
	jf_root_retired_close();
	jf_changes_free();
	if (jf_fs.view.host_root_fd >= 0)
		close(jf_fs.view.host_root_fd);
	if (jf_fs.view.policy)
		jf_policy_free(jf_fs.view.policy);
	free(jf_fs.view.source_abs);
	free(jf_fs.view.mnt_rel);
	free(jf_fs.mnt_abs);
	free(audit_abs);
	jf_hardlinks_free(jf_fs.view.links);
	jf_fs.view.links = NULL;
	jf_tracked_free(&tracked);
	return r;
}
