/* SPDX-License-Identifier: MIT */
/*
 * jailfs --check and --scan: preview what a policy does, without mounting.
 *
 * --check classifies paths given on the command line (or stdin), like
 * `git check-ignore -v`: one tab-separated line per path, zone, deciding
 * rule, canonical path. --scan walks a real tree the way the daemon would
 * see it: relative to directory fds, O_NOFOLLOW, never into a DENIED
 * directory, never into a pseudo filesystem (proc, sysfs, ...).
 *
 * Exit status (both): 0 every path was classified (whatever its zone),
 * 1 a runtime failure (source unreadable, an entry could not be read),
 * 2 a usage or policy error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backing.h"
#include "cleanup.h"
#include "gitindex.h"
#include "hardlinks.h"
#include "jailfs.h"
#include "policy.h"
#include "refine.h"
#include "secrets.h"
#include "text.h"
#include "tracked.h"
#include "zone-name.h"

static const char check_usage[] =
	"Usage: jailfs --check [--policy FILE] [--source DIR] [--read-only] PATH...\n"
	"       jailfs --check [--policy FILE] [--source DIR] --stdin < paths\n"
	"\n"
	"Print how the policy classifies each PATH, one tab-separated line per path:\n"
	"  ZONE  RULE  CANONICAL-PATH\n"
	"ZONE is SAFE (read-write), RESTRICTED (read-only), DENIED (invisible) or\n"
	"REFUSED (the path itself is rejected: '..', %2e, NUL, control or lookalike\n"
	"characters, too long, outside the source). RULE is the deciding rule:\n"
	"FILE:LINE, profile:NAME, 'default' (no rule matched: the policy's default\n"
	"zone), or for REFUSED the reason (dotdot, encoded, nul, control, lookalike,\n"
	"path_too_long, name_too_long, outside_root, empty). The root prints as '.'.\n"
	"\n"
	"Relative PATHs are relative to the view's root. Absolute PATHs must lie\n"
	"inside the source directory (compared component by component).\n"
	"\n"
	"Options:\n"
	"  -p, --policy FILE   policy file (default: the source's .jailfs.ini, else\n"
	"                      ~/.config/jailfs/policy.ini, as a mount would, named on\n"
	"                      stderr; else built-in: profiles secrets + project,\n"
	"                      everything else SAFE)\n"
	"  -s, --source DIR    source directory (default: the current directory).\n"
	"                      With --source, whether a path is a directory comes from\n"
	"                      the real entry (lstat, symlinks not followed); without\n"
	"                      it, or if the entry does not exist, a trailing '/' means\n"
	"                      directory.\n"
	"  -r, --read-only     preview a read-only mount (SAFE becomes RESTRICTED)\n"
	"      --stdin         read paths from standard input, one per line\n"
	"  -h, --help          this help\n"
	"\n"
	"A file DENIED only by a rule subject to content (*.pem, *.key, *.asc of the\n"
	"secrets profile) is judged by its content when --source has it; without it\n"
	"RULE says '(unless its content is public)'. With --source, a regular\n"
	"file holding a secret is DENIED by rule 'content', as jailfs --scan says.\n"
	"Files tracked by SOURCE's git\n"
	"index with DENIED names print RESTRICTED, rule git-index. With --source, a\n"
	"file with several names is judged as the view judges it after the daemon's\n"
	"walk of SOURCE: DENIED, rule hardlink:denied, when another name is DENIED;\n"
	"RESTRICTED, rule hardlink:outside (content read-only, the name may be\n"
	"removed or renamed), when a name lies outside SOURCE.\n"
	"\n"
	"Exit status: 0 all paths classified (whatever their zone), 1 runtime error,\n"
	"2 usage or policy error (message: jailfs: FILE:LINE: problem).\n"
	"Example:\n"
	"  $ jailfs --check --source ~/proj .env src/main.c .git/config\n"
	"  DENIED\tprofile:secrets\t.env\n"
	"  SAFE\tdefault\tsrc/main.c\n"
	"  RESTRICTED\tprofile:project\t.git/config\n";

static const char scan_usage[] =
	"Usage: jailfs --scan [--policy FILE] [--read-only] [--all] SOURCE\n"
	"\n"
	"Walk SOURCE as an agent would see it and list what it does not see: every\n"
	"DENIED and REFUSED entry, one tab-separated line each, sorted by path within\n"
	"each directory:\n"
	"  ZONE  RULE  PATH\n"
	"(PATH relative to SOURCE, directories with a trailing '/'; REFUSED lines are\n"
	"names the view never shows, RULE is then the reason.) A DENIED directory is\n"
	"listed once and not entered: it and everything in it is hidden. Files shown\n"
	"despite a DENIED name are listed with the reason after their rule: a public\n"
	"content (a certificate named *.pem), or tracked by git (rule git-index,\n"
	"RESTRICTED). Files with several names are judged as the view judges them\n"
	"(rules hardlink:denied and hardlink:outside, see jailfs --check --help).\n"
	"Regular files are judged by their first 64 KiB too ([content] of\n"
	"jailfs-policy(5)): one holding a secret is DENIED, rule 'content', noted\n"
	"(secret: DETECTOR:PREFIX:HASH), never the secret itself.\n"
	"Other RESTRICTED (read-only) entries, judged by their name alone, are\n"
	"counted by rule, most first, in lines starting with '#':\n"
	"  # RESTRICTED n by RULE\n"
	"and listed one by one with --all. The last line is a summary:\n"
	"  # SAFE n, RESTRICTED n, DENIED n (n directories not entered), REFUSED n,\n"
	"  # ... n entries, n pseudo-filesystem mounts skipped, n unreadable\n"
	"\n"
	"Symlinks are never followed; mounts inside SOURCE are entered, except\n"
	"pseudo filesystems (proc, sysfs, devpts, cgroup, debugfs, ...).\n"
	"\n"
	"Options:\n"
	"  -p, --policy FILE   policy file (default: built-in, see jailfs --check --help)\n"
	"  -r, --read-only     preview a read-only mount (SAFE becomes RESTRICTED)\n"
	"  -a, --all, -v       list every RESTRICTED entry too, not only their counts\n"
	"  -h, --help          this help\n"
	"\n"
	"Exit status: 0 scan complete, 1 SOURCE or some entry could not be read,\n"
	"2 usage or policy error.\n";

enum { OPT_STDIN = 0x100, OPT_MODE };

static const struct option long_opts[] = {
	{"check", no_argument, NULL, OPT_MODE},	  {"scan", no_argument, NULL, OPT_MODE},
	{"policy", required_argument, NULL, 'p'}, {"source", required_argument, NULL, 's'},
	{"read-only", no_argument, NULL, 'r'},	  {"stdin", no_argument, NULL, OPT_STDIN},
	{"help", no_argument, NULL, 'h'},	  {"all", no_argument, NULL, 'a'},
	{"verbose", no_argument, NULL, 'v'},	  {NULL, 0, NULL, 0},
};

struct opts {
	const char *policy;
	const char *source;
	bool read_only;
	bool use_stdin;
	bool all; /* --scan: list RESTRICTED entries, not only count them */
};

static void policy_freep(struct jf_policy **p)
{
	jf_policy_free(*p);
}
#define _cleanup_policy_ _cleanup_(policy_freep)

/* Returns the first non-option index, or -1 after printing help (exit 0),
 * or -2 on a usage error (message printed). */
static int parse_opts(int argc, char **argv, bool scan, struct opts *o)
{
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:s:rhav", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_MODE:
			break;
		case 'p':
			o->policy = optarg;
			break;
		case 's':
			if (scan)
				goto bad;
			o->source = optarg;
			break;
		case 'r':
			o->read_only = true;
			break;
		case OPT_STDIN:
			if (scan)
				goto bad;
			o->use_stdin = true;
			break;
		case 'a':
		case 'v':
			if (!scan)
				goto bad;
			o->all = true;
			break;
		case 'h':
			fputs(scan ? scan_usage : check_usage, stdout);
			return -1;
		default:
			goto bad;
		}
	}
	return optind;
bad:
	if (c != '?')
		fprintf(stderr, "jailfs: option not valid with %s\n", scan ? "--scan" : "--check");
	fprintf(stderr, "Try 'jailfs %s --help'.\n", scan ? "--scan" : "--check");
	return -2;
}

int jf_load_policy(const char *policy, const char *source, bool read_only, struct jf_policy **out)
{
	_cleanup_free_ char *found = NULL;
	const char *file = policy, *origin = "--policy";
	char err[512] = "";
	int r = 0;

	if (!file)
		r = jf_policy_locate(source, &found, &origin, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "jailfs: %s\n", err[0] ? err : strerror(-r));
		return r;
	}
	if (!file)
		file = found;
	if (!policy && file) /* a file not named on the command line: say which */
		fprintf(stderr, "jailfs: policy: %s (the %s's policy file)\n", file, origin);
	if (!file) {
		r = jf_policy_default(out);
		if (r < 0)
			fprintf(stderr, "jailfs: built-in policy: %s\n", strerror(-r));
	} else {
		r = jf_policy_load(file, out, err, sizeof(err));
		if (r < 0)
			fprintf(stderr, "jailfs: %s\n", err);
	}
	if (r < 0)
		return r;
	jf_policy_set_read_only(*out, read_only);
	return 0;
}

static int load_policy(const struct opts *o, const char *source, struct jf_policy **out)
{
	return jf_load_policy(o->policy, source, o->read_only, out);
}

/*
 * Why a verdict differs from what the name alone says, for the rule column
 * (NULL: nothing to add). @named is the verdict of the name, @v the one of
 * the object (jf_refine, the daemon's own code); @looked: the object
 * exists and was examined.
 */
static const char *verdict_note(const struct jf_verdict *named, const struct jf_verdict *v,
				bool looked, char *buf, size_t size)
{
	char rule[PATH_MAX + 32];

	if (v->rule == &jf_git_index_rule && !v->by_content)
		return "leads to files tracked by git";
	if (v->rule == &jf_git_index_rule)
		return "tracked by git: shown read-only, hiding it would make git record its "
		       "deletion";
	if (v->by_content) {
		jf_rule_format(named->rule, rule, sizeof(rule));
		snprintf(buf, size, "public content: %s set aside", rule);
		return buf;
	}
	if (!looked && v->zone == JF_DENIED && v->rule && v->rule->content != JF_CONTENT_NONE)
		return "unless its content is public";
	return NULL;
}

static void put_verdict(FILE *f, const struct jf_verdict *v, const char *note, const char *path,
			size_t len, bool dir_slash)
{
	char rule[PATH_MAX + 32];

	jf_rule_format(v->rule, rule, sizeof(rule));
	fprintf(f, "%s\t", jf_zone_name(v->zone));
	jf_fput_escaped(f, rule, strlen(rule));
	if (note)
		fprintf(f, " (%s)", note);
	putc('\t', f);
	if (len == 0)
		putc('.', f);
	else
		jf_fput_escaped(f, path, len);
	if (dir_slash && len > 0)
		putc('/', f);
	putc('\n', f);
}

/* lstat of @path (canonical, non-empty) below @srcfd without following a
 * symlink on the way: 0 with @st and an fd of its directory in *pfd (the
 * caller closes it), -1 when it does not exist or cannot be reached. */
static int real_entry(int srcfd, const char *path, size_t len, int *pfd, struct stat *st)
{
	_cleanup_free_ char *parent = NULL;
	const char *slash = memrchr(path, '/', len);

	*pfd = -1;
	if (slash) {
		parent = strndup(path, slash - path);
		if (!parent)
			return -1;
		*pfd = jf_open_below(srcfd, parent, O_PATH | O_DIRECTORY, 0);
		if (*pfd < 0)
			*pfd = -1;
	} else {
		*pfd = dup(srcfd);
	}
	if (*pfd >= 0 && fstatat(*pfd, slash ? slash + 1 : path, st, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (*pfd >= 0)
		close(*pfd);
	*pfd = -1;
	return -1;
}

/*
 * --check and --scan judge objects with the daemon's own code (refine.c,
 * tracked.c, hardlinks.c) over a view of their own: @pol, and with a
 * source (@srcfd >= 0, named @source) the files git tracks there and the
 * index of files with several names. The daemon's state is not touched.
 */
static struct jf_view cview = {.root_fd = -1, .host_root_fd = -1};
static struct jf_tracked_set check_tracked;
static struct jf_judged check_judged;

static void daemon_view(struct jf_policy *pol, int srcfd, const char *source)
{
	struct stat st;
	int r;

	cview.policy = pol;
	cview.hardlinks = jf_policy_hardlinks(pol);
	if (jf_judged_init(&check_judged) == 0)
		cview.judged = &check_judged;
	if (srcfd < 0)
		return;
	cview.root_fd = srcfd;
	cview.source_abs = (char *)source;
	cview.tracked = &check_tracked;
	jf_refine_load_tracked(&cview, &check_tracked, JF_TELL_NEVER);
	if (cview.hardlinks != JF_HARDLINKS_RESTRICTED || fstat(srcfd, &st) < 0)
		return;
	/* the daemon's start-up walk of files with several names */
	cview.root_dev = st.st_dev;
	cview.root_ino = st.st_ino;
	cview.links = jf_hardlinks_new();
	r = cview.links ? jf_hardlinks_build(cview.links, &cview) : -ENOMEM;
	if (r < 0)
		fprintf(stderr,
			"jailfs: %s: indexing hard links: %s; files with several names "
			"are hidden\n",
			source, strerror(-r));
}

static void daemon_view_end(void)
{
	jf_hardlinks_free(cview.links);
	jf_tracked_free(&check_tracked);
	if (cview.judged)
		jf_judged_destroy(&check_judged);
	cview = (struct jf_view){.root_fd = -1, .host_root_fd = -1};
}

/* Does a regular file need its stat for links_verdict()? */
static bool links_matter(void)
{
	if (cview.hardlinks == JF_HARDLINKS_RESTRICTED)
		return cview.links && !jf_hardlinks_empty(cview.links);
	return cview.hardlinks == JF_HARDLINKS_DENY;
}

/* What the view makes of a name of the existing object @st (hard links,
 * jf_effective_zone), with the daemon's index of SOURCE; without one
 * (--check without --source) the name's own verdict stands. */
static void links_verdict(const struct stat *st, struct jf_verdict *v)
{
	jf_effective_zone(&cview, st, v, false);
}

/*
 * What the bytes say (secrets.h), as a mount with [content] scanning on
 * would judge the file: the detectors compiled once for the policy's
 * selection, the first JF_SECRETS_SCAN_MAX bytes read.
 */
static const struct jf_secrets *cset;
static struct jf_secrets *cset_owned;
static char *cbuf;

static void content_init(const struct jf_policy *pol)
{
	uint32_t mask;

	if (!jf_policy_content_scan(pol, &mask))
		return;
	cbuf = malloc(JF_SECRETS_SCAN_MAX);
	if (mask == JF_DET_ALL)
		cset = jf_secrets_default();
	else if (jf_secrets_new(mask, &cset_owned) == 0)
		cset = cset_owned;
	if (!cset || !cbuf)
		fprintf(stderr, "jailfs: content scanning: %s; files are judged by name only\n",
			strerror(ENOMEM));
}

static void content_end(void)
{
	jf_secrets_free(cset_owned);
	cset_owned = NULL;
	cset = NULL;
	free(cbuf);
	cbuf = NULL;
}

/* The first bytes of regular file @name of @dfd into cbuf: their count, or
 * -1 when it cannot be read (not a regular file: nothing to judge). */
static ssize_t content_read(int dfd, const char *name)
{
	_cleanup_close_ int fd =
		openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	while (got < JF_SECRETS_SCAN_MAX) {
		ssize_t n = read(fd, cbuf + got, JF_SECRETS_SCAN_MAX - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : (ssize_t)got;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/*
 * Judge regular file @name of @dfd (view path @path, @len bytes) by its
 * content (jf_classify_content) on top of @v, the verdict of its name and
 * what refine.c made of it. Returns the note to print (in @buf) when the
 * content changed or explains the verdict, else NULL. A file whose name
 * alone hides it is not read.
 */
static const char *content_judge(int dfd, const char *name, const char *path, size_t len,
				 const struct jf_verdict *named, struct jf_verdict *v, char *buf,
				 size_t size)
{
	bool by_ext =
		named->zone == JF_DENIED && named->rule && named->rule->content != JF_CONTENT_NONE;
	struct jf_secret_hit hit;
	struct jf_verdict cv;
	char rule[PATH_MAX + 32];
	ssize_t n;
	int secret;

	if (!cset || !cbuf || (v->zone == JF_DENIED && !by_ext))
		return NULL;
	n = content_read(dfd, name);
	if (n < 0)
		return NULL;
	secret = jf_secrets_scan(cset, cbuf, (size_t)n, &hit);
	if (secret < 0)
		return NULL;
	jf_classify_content(cview.policy, path, len, secret, cbuf, (size_t)n, &cv);
	if (cv.zone == JF_DENIED &&
	    (secret || jf_policy_content_name(cview.policy, path, len) == 1)) {
		if (v->zone != JF_DENIED)
			*v = cv;
		if (secret)
			snprintf(buf, size, "secret: %s", hit.fingerprint);
		else
			snprintf(buf, size, "a secret by its [content] name");
		return buf;
	}
	if (v->zone == JF_DENIED && by_ext && cv.zone != JF_DENIED) {
		*v = cv;
		jf_rule_format(named->rule, rule, sizeof(rule));
		snprintf(buf, size, "not a secret: %s set aside", rule);
		return buf;
	}
	return NULL;
}

struct checker {
	const struct jf_policy *pol;
	int srcfd; /* -1 without --source */
	char *root_lex, *root_real;
};

static void check_one(const struct checker *ck, const char *arg, size_t len)
{
	_cleanup_close_ int pfd = -1;
	struct jf_verdict v, named;
	struct jf_canon c;
	struct stat st;
	char note[PATH_MAX + 64];
	const char *why = NULL;
	int dir = -1;

	if (jf_canonicalize(ck->root_lex, NULL, arg, len, &c) < 0 &&
	    c.refusal == JF_REFUSE_OUTSIDE_ROOT && ck->root_real)
		jf_canonicalize(ck->root_real, NULL, arg, len, &c);
	if (c.refusal != JF_REFUSE_NONE) {
		printf("REFUSED\t%s\t", jf_refusal_reason(c.refusal));
		jf_fput_escaped(stdout, arg, len);
		putc('\n', stdout);
		return;
	}
	if (ck->srcfd >= 0 && c.len > 0 && real_entry(ck->srcfd, c.path, c.len, &pfd, &st) == 0)
		dir = S_ISDIR(st.st_mode);
	else if (ck->srcfd >= 0 && c.len == 0)
		dir = 1;
	if (dir < 0)
		dir = c.len == 0 || arg[len - 1] == '/';
	jf_classify(ck->pol, c.path, c.len, dir, &v);
	named = v;
	if (pfd >= 0) {
		const char *slash = memrchr(c.path, '/', c.len);
		const char *base = slash ? slash + 1 : c.path;

		jf_refine(&cview, pfd, base, c.path, c.len, &st, &v);
		links_verdict(&st, &v);
		why = S_ISREG(st.st_mode) ? content_judge(pfd, base, c.path, c.len, &named, &v,
							  note, sizeof(note))
					  : NULL;
	}
	if (!why)
		why = verdict_note(&named, &v, pfd >= 0, note, sizeof(note));
	put_verdict(stdout, &v, why, c.path, c.len, false);
}

static char *absolute(const char *dir)
{
	_cleanup_free_ char *cwd = NULL;
	char *out = NULL;

	if (dir[0] == '/')
		return strdup(dir);
	cwd = getcwd(NULL, 0);
	if (!cwd || asprintf(&out, "%s/%s", cwd, dir) < 0)
		return NULL;
	return out;
}

static int check_stdin(const struct checker *ck)
{
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, stdin)) > 0) {
		if (line[n - 1] == '\n')
			n--;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		check_one(ck, line, n);
	}
	return ferror(stdin) ? -EIO : 0;
}

int jf_cmd_check(int argc, char **argv)
{
	_cleanup_policy_ struct jf_policy *pol = NULL;
	_cleanup_free_ char *root_lex = NULL, *root_real = NULL;
	_cleanup_close_ int srcfd = -1;
	struct opts o = {0};
	struct checker ck;
	int first = parse_opts(argc, argv, false, &o), r = 0;

	if (first < 0)
		return first == -1 ? 0 : 2;
	if (first >= argc && !o.use_stdin) {
		fprintf(stderr, "jailfs: --check needs at least one PATH\n"
				"Try 'jailfs --check --help'.\n");
		return 2;
	}
	if (load_policy(&o, o.source ? o.source : ".", &pol) < 0)
		return 2;
	if (o.source) {
		srcfd = open(o.source, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (srcfd < 0) {
			fprintf(stderr, "jailfs: source %s: %s\n", o.source, strerror(errno));
			return 1;
		}
	}
	root_lex = absolute(o.source ? o.source : ".");
	root_real = realpath(o.source ? o.source : ".", NULL);
	if (!root_lex) {
		fprintf(stderr, "jailfs: cannot resolve the source directory: %s\n",
			strerror(errno));
		return 1;
	}
	ck = (struct checker){pol, srcfd, root_lex, root_real};
	daemon_view(pol, srcfd, o.source);
	if (srcfd >= 0)
		content_init(pol);
	for (int i = first; i < argc; i++)
		check_one(&ck, argv[i], strlen(argv[i]));
	if (o.use_stdin && check_stdin(&ck) < 0) {
		fprintf(stderr, "jailfs: reading standard input: %s\n", strerror(EIO));
		r = 1;
	} else if (fflush(stdout) != 0) {
		fprintf(stderr, "jailfs: writing output: %s\n", strerror(errno));
		r = 1;
	}
	content_end();
	daemon_view_end();
	return r;
}

/* ---- --scan ---- */

/* RESTRICTED entries not listed, by the deciding rule as printed (rules of
 * one profile print alike: they are counted together). */
struct rule_count {
	char *rule;
	uint64_t n;
};

struct scan {
	const struct jf_policy *pol;
	bool all;
	char path[JF_PATH_MAX + 1];
	size_t len;
	uint64_t zone[3], refused, not_entered, skipped, unreadable, entries;
	struct rule_count *counts;
	size_t ncounts, capcounts;
	uint64_t uncounted; /* past an allocation failure of counts */
};

static void count_rule(struct scan *s, const struct jf_rule *rule)
{
	char text[PATH_MAX + 32];
	struct rule_count *nc;

	jf_rule_format(rule, text, sizeof(text));
	for (size_t i = 0; i < s->ncounts; i++)
		if (strcmp(s->counts[i].rule, text) == 0) {
			s->counts[i].n++;
			return;
		}
	if (s->ncounts == s->capcounts) {
		size_t cap = s->capcounts ? 2 * s->capcounts : 16;

		nc = realloc(s->counts, cap * sizeof(*nc));
		if (!nc) {
			s->uncounted++;
			return;
		}
		s->counts = nc;
		s->capcounts = cap;
	}
	s->counts[s->ncounts].rule = strdup(text);
	if (!s->counts[s->ncounts].rule) {
		s->uncounted++;
		return;
	}
	s->counts[s->ncounts++].n = 1;
}

/* Most first, then by the rule's text, so the order is the same every run. */
static int cmp_counts(const void *a, const void *b)
{
	const struct rule_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->rule, y->rule);
}

/* Prints the counts, most first, and frees them. */
static void put_counts(struct scan *s)
{
	if (s->ncounts) /* counts is NULL then, and qsort's pointer may not be */
		qsort(s->counts, s->ncounts, sizeof(*s->counts), cmp_counts);
	for (size_t i = 0; i < s->ncounts; i++) {
		printf("# RESTRICTED %llu by ", (unsigned long long)s->counts[i].n);
		jf_fput_escaped(stdout, s->counts[i].rule, strlen(s->counts[i].rule));
		putc('\n', stdout);
		free(s->counts[i].rule);
	}
	if (s->uncounted)
		printf("# RESTRICTED %llu by rules not counted (out of memory)\n",
		       (unsigned long long)s->uncounted);
	if (s->ncounts || s->uncounted)
		printf("# (--all lists each RESTRICTED entry)\n");
	free(s->counts);
	s->counts = NULL;
	s->ncounts = s->capcounts = 0;
}

/* Names are stored as one byte of d_type followed by the NUL-terminated name. */
static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a + 1, *(char *const *)b + 1);
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Reads and sorts the entries of @d (without "." and ".."); NULL on error. */
static char **read_names(DIR *d, size_t *n)
{
	char **v = NULL;
	size_t cap = 0;
	struct dirent *e;

	*n = 0;
	errno = 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (*n + 1 >= cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 32) * sizeof(*v));

			if (!nv)
				goto fail;
			v = nv;
		}
		v[*n] = malloc(len + 2);
		if (!v[*n])
			goto fail;
		v[*n][0] = (char)e->d_type;
		memcpy(v[*n] + 1, e->d_name, len + 1);
		(*n)++;
		errno = 0;
	}
	if (errno)
		goto fail;
	if (!v)
		return calloc(1, sizeof(*v));
	qsort(v, *n, sizeof(*v), cmp_names);
	return v;
fail:
	free_names(v, *n);
	return NULL;
}

static void scan_warn(struct scan *s, const char *what)
{
	fprintf(stderr, "jailfs: %s ", what);
	jf_fput_escaped(stderr, s->path, s->len);
	fprintf(stderr, ": %s\n", strerror(errno));
	s->unreadable++;
}

static void scan_dir(struct scan *s, int fd, dev_t dev);

/* Enters directory @name of @dfd (s->path already names it). */
static void scan_subdir(struct scan *s, int dfd, const char *name, dev_t dev)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0) {
		scan_warn(s, "cannot open directory");
		if (fd >= 0)
			close(fd);
		return;
	}
	if (st.st_dev != dev && jf_is_pseudo_fs(fd)) {
		fprintf(stderr, "jailfs: not entering pseudo filesystem at ");
		jf_fput_escaped(stderr, s->path, s->len);
		putc('\n', stderr);
		s->skipped++;
		close(fd);
		return;
	}
	scan_dir(s, fd, st.st_dev);
}

static void scan_entry(struct scan *s, int dfd, dev_t dev, const char *name, unsigned char type)
{
	size_t nlen = strlen(name), saved = s->len;
	enum jf_refusal ref = jf_check_name(name, nlen);
	struct jf_verdict v, named;
	bool dir = type == DT_DIR;
	char note[PATH_MAX + 64];
	const char *why;
	struct stat st;

	s->entries++;
	if (ref == JF_REFUSE_NONE && saved + (saved > 0) + nlen > JF_PATH_MAX)
		ref = JF_REFUSE_PATH_TOO_LONG;
	if (ref != JF_REFUSE_NONE) {
		s->refused++;
		printf("REFUSED\t%s\t", jf_refusal_reason(ref));
		jf_fput_escaped(stdout, s->path, s->len);
		if (saved > 0)
			putc('/', stdout);
		jf_fput_escaped(stdout, name, nlen);
		putc('\n', stdout);
		return;
	}
	if (saved > 0)
		s->path[s->len++] = '/';
	memcpy(s->path + s->len, name, nlen);
	s->len += nlen;
	if (type == DT_UNKNOWN) {
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			scan_warn(s, "cannot stat");
			s->len = saved;
			return;
		}
		dir = S_ISDIR(st.st_mode);
	}
	jf_classify(s->pol, s->path, s->len, dir, &v);
	named = v;
	/* what the object holds may decide, as in the daemon */
	if (jf_refine_may(&cview, s->path, s->len, &v) &&
	    (type == DT_UNKNOWN || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)) {
		jf_refine(&cview, dfd, name, s->path, s->len, &st, &v);
		type = DT_UNKNOWN; /* st is filled */
	}
	if (v.zone != JF_DENIED && (type == DT_REG || type == DT_UNKNOWN) && links_matter() &&
	    (type == DT_UNKNOWN || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0))
		links_verdict(&st, &v);
	why = !dir && (type == DT_REG || (type == DT_UNKNOWN && S_ISREG(st.st_mode)))
		      ? content_judge(dfd, name, s->path, s->len, &named, &v, note, sizeof(note))
		      : NULL;
	s->zone[v.zone]++;
	if (!why)
		why = verdict_note(&named, &v, true, note, sizeof(note));
	/* Counted only where the name alone decided: what the object holds (a
	 * public content, git's index, its other names) is told per file. */
	if (v.zone == JF_RESTRICTED && !why && v.rule == named.rule && !s->all)
		count_rule(s, v.rule);
	else if (v.zone != JF_SAFE || v.by_content)
		put_verdict(stdout, &v, why, s->path, s->len, dir);
	if (v.zone == JF_DENIED && dir)
		s->not_entered++;
	else if (dir)
		scan_subdir(s, dfd, name, dev);
	s->len = saved;
}

/* Takes ownership of @fd. */
static void scan_dir(struct scan *s, int fd, dev_t dev)
{
	_cleanup_closedir_ DIR *d = fdopendir(fd);
	char **names;
	size_t n;

	if (!d) {
		close(fd);
		scan_warn(s, "cannot read directory");
		return;
	}
	names = read_names(d, &n);
	if (!names) {
		scan_warn(s, "cannot read directory");
		return;
	}
	for (size_t i = 0; i < n; i++)
		scan_entry(s, dirfd(d), dev, names[i] + 1, (unsigned char)names[i][0]);
	free_names(names, n);
}

int jf_cmd_scan(int argc, char **argv)
{
	_cleanup_policy_ struct jf_policy *pol = NULL;
	struct opts o = {0};
	struct scan *s;
	struct jf_verdict v;
	struct stat st;
	int first = parse_opts(argc, argv, true, &o), fd, r = 0;

	if (first < 0)
		return first == -1 ? 0 : 2;
	if (argc - first != 1) {
		fprintf(stderr, "jailfs: --scan needs exactly one SOURCE directory\n"
				"Try 'jailfs --scan --help'.\n");
		return 2;
	}
	if (load_policy(&o, argv[first], &pol) < 0)
		return 2;
	fd = open(argv[first], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || jf_is_pseudo_fs(fd)) {
		fprintf(stderr, "jailfs: source %s: %s\n", argv[first],
			fd < 0 ? strerror(errno) : "a pseudo filesystem (proc, sysfs...)");
		if (fd >= 0)
			close(fd);
		return 1;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return 1;
	}
	s->pol = pol;
	s->all = o.all;
	jf_classify(pol, "", 0, true, &v);
	if (v.zone != JF_SAFE)
		put_verdict(stdout, &v, NULL, "", 0, true);
	daemon_view(pol, fd, argv[first]);
	content_init(pol);
	if (v.zone == JF_DENIED)
		close(fd);
	else
		scan_dir(s, fd, st.st_dev);
	content_end();
	daemon_view_end();
	put_counts(s);
	printf("# SAFE %llu, RESTRICTED %llu, DENIED %llu (%llu %s not entered), REFUSED %llu; "
	       "%llu entries, %llu pseudo-filesystem mounts skipped, %llu unreadable\n",
	       (unsigned long long)s->zone[JF_SAFE], (unsigned long long)s->zone[JF_RESTRICTED],
	       (unsigned long long)s->zone[JF_DENIED], (unsigned long long)s->not_entered,
	       s->not_entered == 1 ? "directory" : "directories", (unsigned long long)s->refused,
	       (unsigned long long)s->entries, (unsigned long long)s->skipped,
	       (unsigned long long)s->unreadable);
	if (s->unreadable || fflush(stdout) != 0)
		r = 1;
	free(s);
	return r;
}
