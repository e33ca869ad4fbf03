/* SPDX-License-Identifier: MIT */
/*
 * Command line of the mount mode: getopt_long for jailfs's own options, and
 * -o OPT[,OPT] split between jailfs's keys (policy=, read_only, audit=, ...)
 * and the FUSE options handed to fuse_session_new(). The -o form makes an
 * fstab line work: mount.fuse3 runs "jailfs SOURCE MOUNTPOINT -o opts".
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "options.h"
#include "units.h"

void jf_options_usage(const char *prog)
{
	printf("Usage: %s [OPTION]... SOURCE MOUNTPOINT\n"
	       "Mount a jailed view of the directory SOURCE on MOUNTPOINT (FUSE).\n"
	       "\n"
	       "Every name in the view is classified by the policy into a zone:\n"
	       "  SAFE        read and write, full POSIX behaviour\n"
	       "  RESTRICTED  read-only: every mutation (write, truncate, create, mkdir,\n"
	       "              unlink, rename, link, chmod, chown, utimens, xattrs,\n"
	       "              fallocate) answers EROFS and nothing on disk changes\n"
	       "  DENIED      invisible: lookup answers ENOENT, readdir leaves it out,\n"
	       "              creating that name answers EACCES\n"
	       "Without --policy: SOURCE/.jailfs.ini, else ~/.config/jailfs/policy.ini\n"
	       "($XDG_CONFIG_HOME), each only if yours and writable by nobody else (a\n"
	       ".jailfs.ini is read-only in every view), else the built-in default:\n"
	       "profiles 'secrets' (keys, .env files, cloud credentials: DENIED) and\n"
	       "'project' (.git/hooks, .git/config, editor and agent config: RESTRICTED),\n"
	       "everything else SAFE. jailfs --check names the file it finds.\n"
	       "Preview a policy without mounting: jailfs --check / jailfs --scan.\n"
	       "\n"
	       "Options:\n"
	       "  --policy FILE        policy file (INI with gitignore-style patterns)\n"
	       "  --read-only          every visible name is RESTRICTED (an ro mount unless\n"
	       "                       an audit log is on: then jailfs refuses each write)\n"
	       "  --changes DIR        overlay mode: SOURCE is never written; every change\n"
	       "                       goes to the changes directory DIR (made 0700 if\n"
	       "                       missing; outside SOURCE and MOUNTPOINT), where\n"
	       "                       jailfs changes|diff|apply|discard review it\n"
	       "  -f                   stay in the foreground (default: detach once the\n"
	       "                       mount is ready; the parent exits 0 only then)\n"
	       "  -d                   debug: foreground, print every FUSE request\n"
	       "  -v, --verbose        start-up notices on every mount (otherwise the\n"
	       "                       line on files tracked by git shown read-only is\n"
	       "                       said once per SOURCE, and again when it changes)\n"
	       "  --audit FILE         append a JSON Lines audit record per decision\n"
	       "  --audit-level LEVEL  denied (default): refusals and hidden lookups;\n"
	       "                       writes: + every mutation; all: + lookups, opens,\n"
	       "                       readdirs and byte counts at release\n"
	       "  --audit-sync         workers wait until each record is written\n"
	       "  --audit-syslog       also send audit records to syslog\n"
	       "  --audit-max-size SIZE  the file stops at SIZE bytes (K, M, G): detail\n"
	       "                       stops, one last \"capped\" record counts the rest\n"
	       "  --audit-rate N[/s]   at most N records a second per process (burst N);\n"
	       "                       the rest are counted in \"suppressed\" records\n"
	       "  --stats FILE         append the count of FUSE requests of each kind\n"
	       "                       to FILE at exit and on SIGUSR1 (without it:\n"
	       "                       stderr, at exit only with -d)\n"
	       "  --idle-exit SECONDS  unmount and exit once no request came for SECONDS\n"
	       "                       and nobody holds the --idle-lock file;\n"
	       "                       --list shows the view as persistent\n"
	       "  --idle-lock FILE     a process holding a shared flock(2) on FILE keeps\n"
	       "                       the view alive (jailrun's commands do)\n"
	       "  -o OPT[,OPT...]      mount options, jailfs's own or FUSE's:\n"
	       "       policy=FILE, read_only (or ro), audit=FILE, audit_level=LEVEL,\n"
	       "       audit_sync, audit_syslog, audit_max_size=SIZE, audit_rate=N,\n"
	       "       stats=FILE, changes=DIR\n"
	       "       entry_timeout=SEC    kernel caches names this long (default 300)\n"
	       "       attr_timeout=SEC     kernel caches attributes this long (default 300)\n"
	       "       negative_timeout=SEC kernel caches absent/DENIED names (default 300)\n"
	       "       max_threads=N        FUSE worker threads (default 10)\n"
	       "       no_splice            copy read data instead of splicing it\n"
	       "       nowatch              do not watch SOURCE with inotify (see Caching)\n"
	       "       fast_open            open(2) and close(2) without asking the daemon\n"
	       "                            (FUSE no_open). A write open of a file outside\n"
	       "                            SAFE then succeeds and its first write,\n"
	       "                            truncate, fallocate or chmod fails with EROFS\n"
	       "                            (audited); access(W_OK) says yes, as without\n"
	       "                            fast_open. The default\n"
	       "                            of --read-only views, of a policy that makes\n"
	       "                            no name SAFE (share.ini) and of every mount\n"
	       "                            without allow_other or allow_root, root's too;\n"
	       "                            a mount other users enter keeps OPEN. Off at\n"
	       "                            audit level writes (it records opens)\n"
	       "       nofast_open          every open(2) asks the daemon (and FUSE\n"
	       "                            passthrough serves large reads and writes)\n"
	       "       nopassthrough        serve every read and write from the daemon.\n"
	       "                            Otherwise, as root on Linux >= 6.9, the kernel\n"
	       "                            reads and writes open files directly (FUSE\n"
	       "                            passthrough), except with fast_open, at audit\n"
	       "                            levels writes and all, and where a zone's\n"
	       "                            max_file_size applies\n"
	       "       io_uring             take requests from per-CPU io_uring queues\n"
	       "                            instead of reading /dev/fuse (FUSE over\n"
	       "                            io_uring: as root, Linux >= 6.14 with the fuse\n"
	       "                            module parameter enable_uring=Y); otherwise\n"
	       "                            /dev/fuse as usual, and stderr says why\n"
	       "       allow_other, allow_root, auto_unmount, max_read=N ... (FUSE, see\n"
	       "       mount.fuse3(8)); suid and dev are ignored: the view is always\n"
	       "       nosuid,nodev\n"
	       "  --list               list the live views (yours; root's: all) and exit\n"
	       "  --stop MOUNTPOINT    unmount a view and wait until its daemon has exited\n"
	       "  -h, --help           show this help and exit\n"
	       "  -V, --version        show the version and exit\n"
	       "\n"
	       "Caching: changes made through the view are seen at once. Changes made to\n"
	       "SOURCE directly (an editor or git outside the jail) are reported by\n"
	       "inotify on every directory the kernel has cached, and the daemon drops\n"
	       "the stale names, attributes and pages within milliseconds. Exceptions:\n"
	       "a change to a name the view itself changed less than 1 s before, more\n"
	       "directories than fs.inotify.max_user_watches (a warning says so), mounts\n"
	       "made or removed below SOURCE, network filesystems: there, and with\n"
	       "-o nowatch, a host change shows after at most attr_timeout/entry_timeout\n"
	       "seconds; use -o attr_timeout=0,entry_timeout=0,negative_timeout=0 when\n"
	       "that matters more than speed.\n"
	       "\n"
	       "Symlinks: absolute targets inside SOURCE are shown rewritten as relative\n"
	       "ones; a symlink whose target leaves the view or names a DENIED path is\n"
	       "hidden, and symlink() refuses (EACCES) to create one; renaming or\n"
	       "linking a symlink to where it would leave the view is refused too.\n"
	       "Hard links: link() works only between SAFE names. At start-up SOURCE is\n"
	       "walked once to index files with several names: one with a DENIED name\n"
	       "is hidden under every name, one whose names are all in SOURCE and SAFE\n"
	       "stays SAFE, any other is served read-only (its other name may be a\n"
	       "secret); the policy's [options] hardlinks = zone | deny changes this.\n"
	       "No set-user/group-ID file can be made through the view. Mounts below\n"
	       "SOURCE are crossed, except pseudo filesystems (proc, sysfs, devtmpfs,\n"
	       "...) and MOUNTPOINT itself, which are hidden.\n"
	       "\n"
	       "Stop: jailfs --stop MOUNTPOINT, fusermount3 -u MOUNTPOINT (or umount as\n"
	       "root), or SIGINT/SIGTERM to the daemon. SIGHUP reopens the audit file\n"
	       "(logrotate).\n"
	       "\n"
	       "Examples:\n"
	       "  jailfs ~/proj /mnt/proj\n"
	       "  jailfs --policy proj.ini --audit /var/log/jailfs.jsonl ~/proj /mnt/proj\n"
	       "  jailfs --read-only -f ~/proj /mnt/proj\n"
	       "  jailfs --changes ~/proj.changes ~/proj /mnt/proj\n"
	       "  fstab: /home/me/proj /mnt/proj fuse.jailfs policy=/etc/jailfs/proj.ini 0 0\n"
	       "\n"
	       "Exit status: 0 the mount was made (and, with -f, cleanly unmounted);\n"
	       "1 a runtime failure (cannot mount, stale mountpoint, MOUNTPOINT already a\n"
	       "jailfs mount, FUSE error); 2 a usage or policy error. MOUNTPOINT should be\n"
	       "empty: what it holds is hidden while mounted (a warning says so).\n",
	       prog);
}

/* --audit-max-size and --audit-rate (or their -o forms, named by @opt): 0,
 * or -1 with a message. */
static int audit_bound(struct jf_options *o, const char *opt, bool size, const char *val)
{
	uint64_t bytes;
	int r;

	if (size) {
		r = jf_parse_size(val, strlen(val), false, &bytes);
		if (r == 0 && bytes < JF_AUDIT_MAX_SIZE_MIN)
			r = -ERANGE;
		if (r == 0)
			o->audit.max_size = bytes;
	} else {
		r = jf_audit_parse_rate(val, &o->audit.rate);
	}
	if (r == 0)
		return 0;
	if (size)
		fprintf(stderr, "jailfs: %s: not a size of at least %d bytes: '%s'\n", opt,
			JF_AUDIT_MAX_SIZE_MIN, val);
	else
		fprintf(stderr, "jailfs: %s: not a rate (N or N/s, 1 to 10^9): '%s'\n", opt, val);
	return -1;
}

/* jailfs's own -o keys; everything else goes to FUSE. Returns 1 if handled,
 * 0 if not ours, -1 on a bad value (message printed). */
static int own_option(struct jf_options *o, char *opt)
{
	char *eq = strchr(opt, '=');
	const char *val = eq ? eq + 1 : NULL;
	size_t klen = eq ? (size_t)(eq - opt) : strlen(opt);

#define KEY(k) (klen == strlen(k) && strncmp(opt, k, klen) == 0)
	if (KEY("policy") && val) {
		o->policy = val;
	} else if (KEY("read_only") || KEY("ro")) {
		o->read_only = true;
	} else if (KEY("rw") || KEY("suid") || KEY("dev") || KEY("nosuid") || KEY("nodev") ||
		   KEY("exec") || KEY("defaults") || KEY("auto") || KEY("noauto") || KEY("user") ||
		   KEY("nouser") || KEY("users") || KEY("_netdev") || KEY("nofail")) {
		/* fstab noise; nosuid,nodev are always set */
	} else if (KEY("audit") && val) {
		o->audit.path = val;
	} else if (KEY("audit_level") && val) {
		o->audit_level = val;
	} else if (KEY("audit_sync")) {
		o->audit.sync = true;
	} else if (KEY("audit_syslog")) {
		o->audit.syslog = true;
	} else if ((KEY("audit_max_size") || KEY("audit_rate")) && val) {
		if (audit_bound(o, KEY("audit_rate") ? "-o audit_rate" : "-o audit_max_size",
				KEY("audit_max_size"), val) < 0)
			return -1;
	} else if ((KEY("entry_timeout") || KEY("attr_timeout") || KEY("negative_timeout")) &&
		   val) {
		char *end;
		double d = strtod(val, &end);

		if (*end || d < 0) {
			fprintf(stderr, "jailfs: -o %.*s: not a number of seconds: '%s'\n",
				(int)klen, opt, val);
			return -1;
		}
		if (KEY("entry_timeout"))
			o->entry_timeout = d;
		else if (KEY("attr_timeout"))
			o->attr_timeout = d;
		else
			o->negative_timeout = d;
	} else if (KEY("max_threads") && val) {
		o->max_threads = (unsigned)strtoul(val, NULL, 10);
	} else if (KEY("no_splice")) {
		o->no_splice = true;
	} else if (KEY("nowatch")) {
		o->no_watch = true;
	} else if (KEY("fast_open") || KEY("nofast_open")) {
		o->fast_open = KEY("fast_open");
		o->fast_open_given = true;
	} else if (KEY("nopassthrough")) {
		o->no_passthrough = true;
	} else if (KEY("io_uring")) {
		o->io_uring = true;
	} else if (KEY("stats") && val) {
		o->stats = val;
	} else if (KEY("changes") && val) {
		o->changes = val;
	} else {
		/* FUSE's; these decide the default open mode too (mount.c) */
		if (KEY("allow_other") || KEY("allow_root"))
			o->allow_others = true;
		return 0;
	}
#undef KEY
	return 1;
}

/* Split one -o argument; FUSE's options are appended to @fuse (comma list). */
static int parse_o(struct jf_options *o, const char *arg, char **fuse)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int r = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int own = own_option(o, tok);

		if (own < 0) {
			r = -1;
			break;
		}
		if (own == 0) {
			size_t old = *fuse ? strlen(*fuse) : 0;
			char *n = realloc(*fuse, old + strlen(tok) + 2);

			if (!n) {
				r = -1;
				break;
			}
			if (old)
				n[old++] = ',';
			strcpy(n + old, tok);
			*fuse = n;
		}
	}
	/* own_option() kept pointers into the copy: it lives as long as @o. */
	char **n = realloc(o->o_copies, (o->n_o_copies + 1) * sizeof(*n));

	if (!n) {
		free(copy);
		return -1;
	}
	n[o->n_o_copies++] = copy;
	o->o_copies = n;
	return r;
}

void jf_options_free(struct jf_options *o)
{
	fuse_opt_free_args(&o->fuse_args);
	for (size_t i = 0; i < o->n_o_copies; i++)
		free(o->o_copies[i]);
	free(o->o_copies);
	free(o->policy_abs);
	o->policy_abs = NULL;
	o->o_copies = NULL;
	o->n_o_copies = 0;
}

int jf_options_parse(int argc, char **argv, struct jf_options *o)
{
	enum {
		OPT_POLICY = 256,
		OPT_RO,
		OPT_AUDIT,
		OPT_LEVEL,
		OPT_SYNC,
		OPT_SYSLOG,
		OPT_MAX_SIZE,
		OPT_RATE,
		OPT_STATS,
		OPT_IDLE_EXIT,
		OPT_IDLE_LOCK,
		OPT_CHANGES,
	};
	static const struct option longopts[] = {
		{"policy", required_argument, NULL, OPT_POLICY},
		{"read-only", no_argument, NULL, OPT_RO},
		{"audit", required_argument, NULL, OPT_AUDIT},
		{"audit-level", required_argument, NULL, OPT_LEVEL},
		{"audit-sync", no_argument, NULL, OPT_SYNC},
		{"audit-syslog", no_argument, NULL, OPT_SYSLOG},
		{"audit-max-size", required_argument, NULL, OPT_MAX_SIZE},
		{"audit-rate", required_argument, NULL, OPT_RATE},
		{"stats", required_argument, NULL, OPT_STATS},
		{"idle-exit", required_argument, NULL, OPT_IDLE_EXIT},
		{"idle-lock", required_argument, NULL, OPT_IDLE_LOCK},
		{"changes", required_argument, NULL, OPT_CHANGES},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	char *fuse = NULL;
	int c;

	o->entry_timeout = o->attr_timeout = o->negative_timeout = 300.0;
	o->max_threads = 10;
	optind = 1;
	while ((c = getopt_long(argc, argv, "fdvo:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->foreground = true;
			break;
		case 'd':
			o->debug = o->foreground = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'o':
			if (parse_o(o, optarg, &fuse) < 0)
				goto usage;
			break;
		case 'h':
			o->help = true;
			return 0;
		case 'V':
			o->version = true;
			return 0;
		case OPT_POLICY:
			o->policy = optarg;
			break;
		case OPT_RO:
			o->read_only = true;
			break;
		case OPT_AUDIT:
			o->audit.path = optarg;
			break;
		case OPT_LEVEL:
			o->audit_level = optarg;
			break;
		case OPT_SYNC:
			o->audit.sync = true;
			break;
		case OPT_SYSLOG:
			o->audit.syslog = true;
			break;
		case OPT_MAX_SIZE:
		case OPT_RATE:
			if (audit_bound(o, c == OPT_RATE ? "--audit-rate" : "--audit-max-size",
					c == OPT_MAX_SIZE, optarg) < 0)
				goto usage;
			break;
		case OPT_STATS:
			o->stats = optarg;
			break;
		case OPT_IDLE_EXIT:
			if (jf_parse_duration_ms(optarg, strlen(optarg), &o->idle_exit_ms) < 0 ||
			    !o->idle_exit_ms) {
				fprintf(stderr, "jailfs: --idle-exit %s: expected seconds > 0\n",
					optarg);
				goto usage;
			}
			break;
		case OPT_IDLE_LOCK:
			o->idle_lock = optarg;
			break;
		case OPT_CHANGES:
			o->changes = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "jailfs: expected SOURCE and MOUNTPOINT, got %d argument%s\n",
			argc - optind, argc - optind == 1 ? "" : "s");
		goto usage;
	}
	o->source = argv[optind];
	o->mountpoint = argv[optind + 1];
	if (fuse_opt_add_arg(&o->fuse_args, argv[0]) < 0)
		goto usage;
	if (fuse) {
		if (fuse_opt_add_arg(&o->fuse_args, "-o") < 0 ||
		    fuse_opt_add_arg(&o->fuse_args, fuse) < 0)
			goto usage;
	}
	if (o->debug && fuse_opt_add_arg(&o->fuse_args, "-d") < 0)
		goto usage;
	free(fuse);
	return 0;
usage:
	free(fuse);
	fprintf(stderr, "Try 'jailfs --help' for more information.\n");
	return 2;
}
