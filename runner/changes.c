/* SPDX-License-Identifier: MIT */
/*
 * The overlay layer of jailrun --changes (changes.h).
 *
 * The review commands are jailfs's own (jailfs(1)): jailrun runs them as
 * programs, so that one implementation reads and changes DIR and jailrun
 * needs no copy of the layer's format. Their output goes to memfds read
 * after they exit: no pipe to drain while waiting.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "changes.h"
#include "cleanup.h"
#include "view.h"

#define TOOL_OUT_MAX (64u << 20) /* bytes of a review command's output kept */

/* The whole of memfd @fd (from its start) as a malloc'd string, at most
 * TOOL_OUT_MAX bytes; NULL on ENOMEM. */
static char *slurp(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END);
	size_t n = end > 0 ? (size_t)end : 0, got = 0;
	char *buf;

	if (n > TOOL_OUT_MAX)
		n = TOOL_OUT_MAX;
	buf = malloc(n + 1);
	if (!buf)
		return NULL;
	while (got < n) {
		ssize_t k = pread(fd, buf + got, n - got, (off_t)got);

		if (k <= 0)
			break;
		got += (size_t)k;
	}
	buf[got] = '\0';
	return buf;
}

/*
 * Run `jailfs ARGS...` (@args NULL-terminated, without the program) and
 * wait. Its stdout in *@out (malloc'd, may be NULL when not wanted), its
 * stderr's first line in @err. Returns its exit status, or a negative
 * errno when it could not run.
 */
static int run_jailfs(const char *const *args, char **out, char *err, size_t errsz)
{
	char jailfs[PATH_MAX];
	const char *argv[8];
	_cleanup_close_ int ofd = memfd_create("jailrun-out", MFD_CLOEXEC);
	_cleanup_close_ int efd = memfd_create("jailrun-err", MFD_CLOEXEC);
	_cleanup_free_ char *e = NULL;
	int argc = 0, status;
	pid_t pid;

	if (ofd < 0 || efd < 0)
		return -errno;
	jr_find_jailfs(jailfs, sizeof(jailfs));
	argv[argc++] = jailfs;
	while (*args && argc < 7)
		argv[argc++] = *args++;
	argv[argc] = NULL;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(ofd, 1) < 0 || dup2(efd, 2) < 0)
			_exit(127);
		execvp(argv[0], (char *const *)argv);
		dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	e = slurp(efd);
	snprintf(err, errsz, "%.*s", e ? (int)strcspn(e, "\n") : 0, e ? e : "");
	if (out)
		*out = slurp(ofd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int jr_changes_prepare(struct jr_changes *c, const char *dir, char *err, size_t errsz)
{
	const char *tmpdir = getenv("TMPDIR");
	char parent[PATH_MAX], *slash;
	_cleanup_free_ char *copy = NULL;

	memset(c, 0, sizeof(*c));
	if (!dir) {
		/* on disk: a layer holds whole copies of the files written */
		if ((size_t)snprintf(c->tmp, sizeof(c->tmp), "%s/jailrun-changes.XXXXXX",
				     tmpdir && *tmpdir ? tmpdir : "/var/tmp") >= sizeof(c->tmp) ||
		    !mkdtemp(c->tmp)) {
			snprintf(err, errsz, "cannot make a temporary changes layer in %s: %s",
				 tmpdir && *tmpdir ? tmpdir : "/var/tmp", strerror(errno));
			c->tmp[0] = '\0';
			return -errno;
		}
		if ((size_t)snprintf(c->dir, sizeof(c->dir), "%s/layer", c->tmp) >=
		    sizeof(c->dir)) {
			snprintf(err, errsz, "the temporary changes layer's path is too long");
			c->dir[0] = '\0';
			return -ENAMETOOLONG;
		}
		return 0;
	}
	copy = strdup(dir);
	if (!copy)
		return -ENOMEM;
	while ((slash = strrchr(copy, '/')) && slash != copy && !slash[1])
		*slash = '\0'; /* trailing slashes */
	slash = strrchr(copy, '/');
	if (slash)
		*slash = '\0';
	if (!realpath(slash ? (*copy ? copy : "/") : ".", parent)) {
		snprintf(err, errsz, "--changes %s: %s", dir, strerror(errno));
		return -errno;
	}
	if ((size_t)snprintf(c->dir, sizeof(c->dir), "%s/%s", strcmp(parent, "/") ? parent : "",
			     slash ? slash + 1 : copy) >= sizeof(c->dir)) {
		snprintf(err, errsz, "--changes %s: path too long", dir);
		return -ENAMETOOLONG;
	}
	return 0;
}

int jr_changes_checkpoint(struct jr_changes *c, char *err, size_t errsz)
{
	char name[64], msg[512];
	_cleanup_free_ char *out = NULL;
	const char *args[] = {"checkpoint", c->dir, name, NULL};
	const char *p;
	int r, seq;

	snprintf(name, sizeof(name), "jailrun-%lld-%d", (long long)time(NULL), (int)getpid());
	r = run_jailfs(args, &out, msg, sizeof(msg));
	if (r != 0) {
		snprintf(err, errsz, "jailfs checkpoint %s %s: %s", c->dir, name,
			 r < 0	  ? strerror(-r)
			 : msg[0] ? msg
				  : "failed");
		return r < 0 ? r : -EIO;
	}
	/* the id it printed (SEQ-NAME), else the name, which restore takes too */
	p = out ? strstr(out, name) : NULL;
	for (seq = 0; p && seq < 6 && p - out > 1 + seq && isdigit((unsigned char)p[-2 - seq]);)
		seq++;
	if (seq == 6 && p[-1] == '-')
		snprintf(c->checkpoint, sizeof(c->checkpoint), "%.7s%s", p - 7, name);
	else
		snprintf(c->checkpoint, sizeof(c->checkpoint), "%s", name);
	return 0;
}

static void note_error(struct jr_changes *c, const char *what, int r, const char *msg)
{
	size_t n = strlen(c->error);

	snprintf(c->error + n, sizeof(c->error) - n, "%s%s %s: %s", n ? "; " : "", what, c->dir,
		 r < 0	  ? strerror(-r)
		 : msg[0] ? msg
			  : "failed");
}

/* `jailfs changes|apply DIR --json [--policy P]`:
 * its JSON output into *@ret (NULL when none). Its exit status, or a
 * negative errno; failures go to c->error. */
static int run_json(struct jr_changes *c, const char *const *args, const char *what, json_t **ret)
{
	_cleanup_free_ char *out = NULL;
	json_error_t jerr;
	char msg[512] = "";
	int r = run_jailfs(args, &out, msg, sizeof(msg));

	*ret = out && *out ? json_loads(out, JSON_DECODE_ANY, &jerr) : NULL;
	if (r == 0 && !*ret) {
		snprintf(msg, sizeof(msg), "not JSON: %s", out && *out ? jerr.text : "no output");
		r = 1;
	}
	if (r != 0)
		note_error(c, what, r, msg);
	return r;
}

int jr_changes_collect(struct jr_changes *c, bool apply, const char *policy)
{
	const char *list[] = {"changes", c->dir, "--json", policy ? "--policy" : NULL,
			      policy,	 NULL};
	const char *app[] = {"apply", c->dir, "--json", policy ? "--policy" : NULL, policy, NULL};
	int r = run_json(c, list, "jailfs changes", &c->list);

	if (!apply)
		return r == 0 ? 0 : -EIO;
	/* its report lists the conflicts and refusals it left in DIR (exit 1) */
	c->applied = run_json(c, app, "jailfs apply", &c->apply_report) == 0;
	return r == 0 && c->applied ? 0 : -EIO;
}

json_t *jr_changes_json(const struct jr_changes *c)
{
	json_t *o;

	if (!c->dir[0])
		return NULL;
	o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "dir", json_string(c->dir));
	json_object_set_new(o, "temporary", json_boolean(c->tmp[0]));
	json_object_set_new(o, "checkpoint",
			    c->checkpoint[0] ? json_string(c->checkpoint) : json_null());
	json_object_set_new(o, "list", c->list ? json_incref(c->list) : json_null());
	json_object_set_new(o, "applied", json_boolean(c->applied));
	json_object_set_new(o, "apply_report",
			    c->apply_report ? json_incref(c->apply_report) : json_null());
	json_object_set_new(o, "error", c->error[0] ? json_string(c->error) : json_null());
	return o;
}

void jr_changes_say(const struct jr_changes *c)
{
	if (!c->dir[0])
		return;
	if (c->error[0])
		fprintf(stderr, "jailrun: changes: %s\n", c->error);
	if (c->tmp[0])
		fprintf(stderr, "jailrun: changes %s (temporary layer, removed)\n",
			c->applied ? "applied to the source" : "not applied (no --apply)");
	else
		fprintf(stderr,
			"jailrun: changes in %s, checkpoint %s: jailfs changes|diff|apply %s, "
			"jailfs restore %s %s\n",
			c->dir, c->checkpoint[0] ? c->checkpoint : "(none)", c->dir, c->dir,
			c->checkpoint[0] ? c->checkpoint : "CHECKPOINT");
}

/* nftw: make every directory searchable and writable (overlayfs leaves its
 * work directory's entries mode 0), then remove, children first. */
static int open_up(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)f;
	if (type == FTW_D || type == FTW_DNR)
		chmod(path, (st->st_mode & 07777) | S_IRWXU);
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)type;
	(void)f;
	remove(path);
	return 0;
}

void jr_changes_release(struct jr_changes *c)
{
	json_decref(c->list);
	json_decref(c->apply_report);
	c->list = c->apply_report = NULL;
	if (c->tmp[0]) {
		nftw(c->tmp, open_up, 16, FTW_PHYS);
		nftw(c->tmp, remove_one, 16, FTW_PHYS | FTW_DEPTH);
		c->tmp[0] = '\0';
	}
}
