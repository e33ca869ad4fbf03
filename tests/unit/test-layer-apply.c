/* SPDX-License-Identifier: MIT */
/*
 * apply and discard of the changes library over real kernel overlays
 * (layer-util.c plays the daemon): the view written into SOURCE, conflicts
 * and the policy, type changes, kill -9 of apply at random moments and
 * its rerun, and the review commands of the jailfs binary.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "layer-util.h"

static void test_apply(void **state)
{
	char *view, *got;
	struct jf_layer *l;
	void *rep = NULL;
	json_t *a;

	fresh();
	in_overlay(session_one, NULL);
	in_overlay(session_two, &view);
	l = open_layer(false);
	assert_int_equal(jf_layer_apply(l, NULL, 0, false, safe_but_secret, NULL, &rep), 0);
	if (getenv("JF_TEST_KEEP"))
		json_dumpf(rep, stderr, 0);
	assert_string_equal(action_of(rep, "dir/sub/d.txt"), "applied");
	assert_string_equal(action_of(rep, "b2.txt"), "applied");
	json_decref(rep);
	got = tree(src);
	assert_string_equal(view, got);
	free(got);
	a = changes_of(l);
	assert_int_equal(json_array_size(a), 0);
	json_decref(a);
	jf_layer_free(l);
	/* the view over the applied source and the emptied layer is the same */
	free(view);
	in_overlay(NULL, &view);
	got = tree(src);
	assert_string_equal(view, got);
	free(got);
	free(view);
	cleanup();
}

static int session_conflict(struct jf_layer *l)
{
	d_write(l, "a.txt", "mine\n", true);
	d_write(l, "b.txt", "mine too\n", true);
	d_write(l, "secret.txt", "s\n", false);
	return 0;
}

/* A host edit after the copy-up is a conflict, left alone unless forced;
 * a name the policy does not make SAFE is never written. */
static void test_conflict(void **state)
{
	struct jf_layer *l;
	void *rep = NULL;
	char *s;

	fresh();
	in_overlay(session_conflict, NULL);
	put(src, "a.txt", "edited on the host\n", 0644);
	l = open_layer(false);
	assert_int_equal(jf_layer_apply(l, NULL, 0, false, safe_but_secret, NULL, &rep), 0);
	assert_string_equal(action_of(rep, "a.txt"), "conflict");
	assert_string_equal(action_of(rep, "b.txt"), "applied");
	assert_string_equal(action_of(rep, "secret.txt"), "refused");
	json_decref(rep);
	s = slurp(src, "a.txt");
	assert_string_equal(s, "edited on the host\n");
	free(s);
	s = slurp(src, "b.txt");
	assert_string_equal(s, "mine too\n");
	free(s);
	assert_null(slurp(src, "secret.txt"));
	/* still in the layer; --force writes it */
	assert_int_equal(jf_layer_apply(l, (const char *const[]){"a.txt"}, 1, true, safe_but_secret,
					NULL, &rep),
			 0);
	assert_string_equal(action_of(rep, "a.txt"), "applied");
	json_decref(rep);
	s = slurp(src, "a.txt");
	assert_string_equal(s, "mine\n");
	free(s);
	jf_layer_free(l);
	cleanup();
}

static void test_discard(void **state)
{
	char *v0, *v1;
	struct jf_layer *l;
	void *rep = NULL;
	json_t *a;

	fresh();
	in_overlay(NULL, &v0);
	in_overlay(session_one, NULL);
	in_overlay(session_two, NULL);
	l = open_layer(false);
	/* one path: a.txt only */
	assert_int_equal(jf_layer_discard(l, (const char *const[]){"a.txt"}, 1, &rep), 0);
	json_decref(rep);
	a = changes_of(l);
	assert_int_equal(status_of(a, "a.txt"), '-');
	assert_int_equal(status_of(a, "b2.txt"), 'R');
	json_decref(a);
	/* inside the replaced directory: refused, the directory itself works */
	assert_int_equal(jf_layer_discard(l, (const char *const[]){"dir/c.txt"}, 1, &rep), 0);
	assert_string_equal(action_of(rep, "dir/c.txt"), "refused");
	json_decref(rep);
	assert_int_equal(jf_layer_discard(l, NULL, 0, &rep), 0);
	json_decref(rep);
	a = changes_of(l);
	assert_int_equal(json_array_size(a), 0);
	json_decref(a);
	jf_layer_free(l);
	in_overlay(NULL, &v1);
	assert_string_equal(v0, v1);
	free(v0);
	free(v1);
	cleanup();
}

/* A review command's request to a (fake) mounted daemon. */
#define KILL_FILES 12
#define KILL_SIZE (16 << 10)
#define KILL_ROUNDS 20

static char *kill_content(int i, bool new)
{
	char *b = malloc(KILL_SIZE + 1);

	for (size_t k = 0; k < KILL_SIZE; k++)
		b[k] = (char)('a' + (k + (size_t)i * 7 + (new ? 3 : 0)) % 26);
	b[KILL_SIZE] = '\0';
	return b;
}

/* A layer made by hand as the daemon would leave it: KILL_FILES rewritten
 * files, a deletion (a whiteout) and a new directory. */
static void kill_layer(void)
{
	struct jf_layer *l;
	char name[64], up[512];

	fresh();
	for (int i = 0; i < KILL_FILES; i++) {
		char *old = kill_content(i, false);
		snprintf(name, sizeof(name), "k%02d", i);
		put(src, name, old, 0644);
		free(old);
	}
	l = open_layer(false);
	for (int i = 0; i < KILL_FILES; i++) {
		char *new = kill_content(i, true);
		snprintf(name, sizeof(name), "k%02d", i);
		assert_int_equal(jf_layer_note_origin(l, name), 0);
		snprintf(up, sizeof(up), "%s/upper", dir);
		put(up, name, new, 0644);
		free(new);
	}
	assert_int_equal(jf_layer_note_origin(l, "b.txt"), 0);
	assert_int_equal(mknodat(jf_layer_upper_fd(l), "b.txt", S_IFCHR | 0600, makedev(0, 0)), 0);
	sh("mkdir -p %s/upper/newdir/deep && echo n > %s/upper/newdir/deep/n.txt", dir, dir);
	jf_layer_free(l);
}

/* Each file of SOURCE is old or new, nothing else is there but apply's
 * temporary files; with @done, every one is new and no temporary is left. */
static void check_old_or_new(bool done)
{
	char name[64], *got, *b;

	for (int i = 0; i < KILL_FILES; i++) {
		char *old = kill_content(i, false), *new = kill_content(i, true);
		snprintf(name, sizeof(name), "k%02d", i);
		got = slurp(src, name);
		assert_non_null(got);
		if (strcmp(got, new) != 0) {
			assert_false(done);
			assert_string_equal(got, old);
		}
		free(got);
		free(old);
		free(new);
	}
	b = slurp(src, "b.txt");
	if (b)
		assert_string_equal(b, "bee\n");
	assert_true(!done || !b);
	free(b);
	if (done) {
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "test -z \"$(find %s -name '.jailfs-apply-*')\"", src);
		assert_int_equal(system(cmd), 0);
		b = slurp(src, "newdir/deep/n.txt");
		assert_non_null(b);
		assert_string_equal(b, "n\n");
		free(b);
	}
}

static long long now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* kill -9 of an apply at random moments: every file old or new, and a
 * rerun finishes it. */
static void test_apply_killed(void **state)
{
	long long span;
	int killed_midway = 0;

	kill_layer();
	{
		struct jf_layer *l = open_layer(false);
		void *rep = NULL;
		long long t0 = now_us();
		assert_int_equal(jf_layer_apply(l, NULL, 0, false, safe_all, NULL, &rep), 0);
		span = now_us() - t0;
		json_decref(rep);
		jf_layer_free(l);
		check_old_or_new(true);
	}
	cleanup();
	srand((unsigned)now_us());
	for (int round = 0; round < KILL_ROUNDS; round++) {
		struct jf_layer *l;
		void *rep = NULL;
		json_t *a;
		int status;
		pid_t pid;

		kill_layer();
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			l = open_layer(false);
			jf_layer_apply(l, NULL, 0, false, safe_all, NULL, &rep);
			_exit(0);
		}
		usleep((useconds_t)(rand() % (span + 1)));
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		killed_midway += WIFSIGNALED(status);
		check_old_or_new(false);
		l = open_layer(false);
		assert_int_equal(jf_layer_apply(l, NULL, 0, false, safe_all, NULL, &rep), 0);
		for (size_t i = 0; i < json_array_size(rep); i++)
			assert_string_equal(json_string_value(json_object_get(
						    json_array_get(rep, i), "action")),
					    "applied");
		json_decref(rep);
		check_old_or_new(true);
		a = changes_of(l);
		assert_int_equal(json_array_size(a), 0);
		json_decref(a);
		/* no whiteout left to hide a file the host makes later */
		sh("test -z \"$(find %s/upper -type c)\"", dir);
		jf_layer_free(l);
		cleanup();
	}
	fprintf(stderr, "# apply of %d files took %lld us; %d of %d runs killed midway\n",
		KILL_FILES, span, killed_midway, KILL_ROUNDS);
	assert_true(killed_midway > 0);
}

/* Runs "$JAILFS ARGS" and gives its stdout; *@status its exit status. */
static char *jailfs_out(int *status, const char *fmt, ...) _printf_(2, 3);
static char *jailfs_out(int *status, const char *fmt, ...)
{
	char cmd[2048], args[1500], *out = calloc(1, 1 << 16);
	size_t len = 0, n;
	va_list ap;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "\"$JAILFS\" %s", args);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(out + len, 1, (1 << 16) - 1 - len, p)) > 0)
		len += n;
	*status = WEXITSTATUS(pclose(p));
	return out;
}

/* The commands of jailfs(1) over a layer: what they print, their exit
 * status, and the request to a mounted daemon (a fake one on DIR/control
 * while the test holds DIR/lock). */
static void test_commands(void **state)
{
	char *out, lock[400];
	int st, lfd, s, status;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	pid_t pid;

	if (!getenv("JAILFS"))
		skip();
	fresh();
	in_overlay(session_one, NULL);
	in_overlay(session_two, NULL);
	out = jailfs_out(&st, "changes %s", dir);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "R  b.txt -> b2.txt  file\n"));
	assert_non_null(strstr(out, "M  exec.sh  file, mode 0755 -> 0644\n"));
	assert_non_null(strstr(out, "D  dir/sub/d.txt  file, was 2 bytes\n"));
	free(out);
	out = jailfs_out(&st, "changes %s --json dir", dir);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "\"path\":\"dir/x.txt\""));
	assert_null(strstr(out, "a.txt"));
	free(out);
	out = jailfs_out(&st,
			 "diff %s a.txt >%s/a.diff && cd %s && git apply --check %s/a.diff && "
			 "echo checked",
			 dir, base, src, base);
	assert_string_equal(out, "checked\n");
	free(out);
	put(src, ".jailfs.ini", "[options]\ndefault = safe\n[restricted]\nexec.sh\n", 0644);
	out = jailfs_out(&st, "apply %s 2>/dev/null", dir);
	assert_int_equal(st, 1); /* exec.sh is left: RESTRICTED */
	assert_non_null(strstr(out, "refused exec.sh: not SAFE under the policy\n"));
	assert_non_null(strstr(out, "applied b2.txt\n"));
	free(out);
	out = jailfs_out(&st, "checkpoint %s first", dir);
	assert_int_equal(st, 0);
	assert_string_equal(out, "000001-first\n");
	free(out);
	out = jailfs_out(&st, "restore %s nonesuch 2>&1", dir);
	assert_int_equal(st, 1);
	free(out);
	out = jailfs_out(&st, "restore %s 2>&1", dir);
	assert_int_equal(st, 2);
	free(out);
	/* mounted: the lock is held, the request goes to DIR/control */
	snprintf(lock, sizeof(lock), "%s/lock", dir);
	lfd = open(lock, O_RDWR | O_CREAT, 0600);
	assert_int_equal(flock(lfd, LOCK_EX), 0);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	memcpy(sa.sun_path, dir, strlen(dir));
	memcpy(sa.sun_path + strlen(dir), "/control", 9);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(s, 1), 0);
	pid = fork();
	if (pid == 0) { /* the daemon's side, with the library's request handler */
		char buf[512] = "", *reply = NULL;
		struct jf_layer *dl = open_layer(false);
		bool changed = true;
		int c = accept(s, NULL, NULL);
		ssize_t n = 0, got;
		while (!strchr(buf, '\n') &&
		       (got = read(c, buf + n, sizeof(buf) - 1 - (size_t)n)) > 0)
			n += got;
		if (jf_layer_handle_request(dl, buf, safe_all, NULL, &reply, &changed) < 0 ||
		    changed)
			_exit(1);
		_exit(write(c, reply, strlen(reply)) < 0);
	}
	close(s);
	out = jailfs_out(&st, "checkpoint %s second", dir);
	assert_int_equal(st, 0);
	assert_string_equal(out, "000002-second\n");
	free(out);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(lfd);
	cleanup();
}

/* A file becomes a directory, a directory a file. */
static int session_types(struct jf_layer *l)
{
	d_unlink(l, "exec.sh", false);
	d_mkdir(l, "exec.sh");
	d_write(l, "exec.sh/inside.txt", "in\n", false);
	d_unlink(l, "dir/sub/d.txt", false);
	d_unlink(l, "dir/sub", true);
	d_write(l, "dir/sub", "now a file\n", false);
	return 0;
}

static void test_type_change(void **state)
{
	char patch[400], copy[400], *view, *got;
	struct jf_layer *l;
	void *rep = NULL;
	json_t *a;

	fresh();
	in_overlay(session_types, &view);
	l = open_layer(false);
	a = changes_of(l);
	assert_int_equal(status_of(a, "exec.sh"), 'T');
	assert_int_equal(status_of(a, "exec.sh/inside.txt"), 'A');
	assert_int_equal(status_of(a, "dir/sub"), 'T');
	assert_int_equal(status_of(a, "dir/sub/d.txt"), 'D');
	json_decref(a);
	snprintf(patch, sizeof(patch), "%s/t.diff", base);
	snprintf(copy, sizeof(copy), "%s/copy", base);
	diff_to(l, patch, NULL, 0);
	sh("cp -a %s %s && cd %s && rm bin.dat && git apply %s", src, copy, copy, patch);
	sh("cp -a %s/bin.dat %s/", src, copy);
	got = tree(copy);
	assert_string_equal(view, got);
	free(got);
	assert_int_equal(jf_layer_apply(l, NULL, 0, false, safe_all, NULL, &rep), 0);
	for (size_t i = 0; i < json_array_size(rep); i++)
		assert_string_equal(
			json_string_value(json_object_get(json_array_get(rep, i), "action")),
			"applied");
	json_decref(rep);
	got = tree(src);
	assert_string_equal(view, got);
	free(got);
	free(view);
	jf_layer_free(l);
	cleanup();
}

/* A journal line torn by a kill is skipped, and the next one stands alone. */
/* A file of the user's named like apply's temporary is never removed. */
static void test_tmp_name_taken(void **state)
{
	struct jf_layer *l;
	void *rep = NULL;
	char *s;

	fresh();
	in_overlay(session_conflict, NULL);
	put(src, ".jailfs-apply-b.txt", "the user's\n", 0644);
	l = open_layer(false);
	assert_int_equal(
		jf_layer_apply(l, (const char *const[]){"b.txt"}, 1, false, safe_all, NULL, &rep),
		0);
	assert_string_equal(action_of(rep, "b.txt"), "failed");
	json_decref(rep);
	s = slurp(src, ".jailfs-apply-b.txt");
	assert_string_equal(s, "the user's\n");
	free(s);
	s = slurp(src, "b.txt");
	assert_string_equal(s, "bee\n");
	free(s);
	jf_layer_free(l);
	cleanup();
}

/* A symlink of the layer named like apply's temporary of another with the
 * same target: apply never takes it for its own and loses it. */
static void test_tmp_name_in_layer(void **state)
{
	struct jf_layer *l;
	void *rep = NULL;
	char buf[16] = "", path[400];
	ssize_t n;

	fresh();
	l = open_layer(false);
	assert_int_equal(symlinkat("t", jf_layer_upper_fd(l), ".jailfs-apply-l"), 0);
	assert_int_equal(symlinkat("t", jf_layer_upper_fd(l), "l"), 0);
	assert_int_equal(jf_layer_apply(l, NULL, 0, false, safe_all, NULL, &rep), 0);
	assert_string_equal(action_of(rep, "l"), "applied");
	n = readlinkat(jf_layer_upper_fd(l), ".jailfs-apply-l", buf, sizeof(buf) - 1);
	if (n < 0) { /* applied: then SOURCE has it */
		assert_string_equal(action_of(rep, ".jailfs-apply-l"), "applied");
		snprintf(path, sizeof(path), "%s/.jailfs-apply-l", src);
		n = readlink(path, buf, sizeof(buf) - 1);
	} else {
		assert_string_equal(action_of(rep, ".jailfs-apply-l"), "refused");
	}
	assert_int_equal(n, 1);
	json_decref(rep);
	jf_layer_free(l);
	cleanup();
}

/* A deleted directory holding a DENIED file: apply removes the rest, never
 * the secret (the built-in policy's .env), and keeps the directory. */
static void test_denied_below_deleted(void **state)
{
	struct jf_layer *l;
	char *out, *s;
	int st;

	if (!getenv("JAILFS"))
		skip();
	fresh();
	sh("mkdir %s/d2 && echo k > %s/d2/.env && echo x > %s/d2/x", src, src, src);
	l = open_layer(false);
	assert_int_equal(jf_layer_note_origin(l, "d2"), 0);
	assert_int_equal(jf_layer_note_origin(l, "d2/x"), 0);
	assert_int_equal(jf_layer_note_origin(l, "d2/.env"), 0);
	assert_int_equal(mknodat(jf_layer_upper_fd(l), "d2", S_IFCHR | 0600, makedev(0, 0)), 0);
	jf_layer_free(l);
	out = jailfs_out(&st, "apply %s 2>/dev/null", dir);
	assert_int_equal(st, 1);
	assert_non_null(strstr(out, "refused d2/.env: not SAFE under the policy\n"));
	assert_non_null(strstr(out, "applied d2/x\n"));
	assert_non_null(strstr(out, "conflict d2: "));
	free(out);
	s = slurp(src, "d2/.env");
	assert_string_equal(s, "k\n");
	free(s);
	assert_null(slurp(src, "d2/x"));
	cleanup();
}

/* The diff of a deleted directory holding a DENIED file: the diff goes to an
 * agent harness, so the secret's content and name are left out of it (and
 * counted on stderr), while the rest of the directory is shown. */
static void test_diff_hides_denied(void **state)
{
	struct jf_layer *l;
	char *out;
	int st;

	if (!getenv("JAILFS"))
		skip();
	fresh();
	sh("mkdir %s/d2 && echo TOKEN=k9 > %s/d2/.env && echo x > %s/d2/x", src, src, src);
	l = open_layer(false);
	assert_int_equal(mknodat(jf_layer_upper_fd(l), "d2", S_IFCHR | 0600, makedev(0, 0)), 0);
	jf_layer_free(l);
	out = jailfs_out(&st, "diff %s 2>&1", dir);
	assert_int_equal(st, 0);
	assert_null(strstr(out, "TOKEN=k9"));
	assert_null(strstr(out, ".env"));
	assert_non_null(strstr(out, "diff --git a/d2/x b/d2/x\ndeleted file mode 100644\n"));
	assert_non_null(strstr(out, "jailfs diff: 1 entry the policy hides is not shown"));
	free(out);
	out = jailfs_out(&st, "diff %s d2/.env 2>/dev/null", dir);
	assert_int_equal(st, 0);
	assert_string_equal(out, "");
	free(out);
	cleanup();
}

/* A whiteout that hides nothing (its SOURCE entry is gone: an apply killed
 * after removing it) leaves with the next apply. */
static void test_stale_whiteout(void **state)
{
	struct jf_layer *l;
	void *rep = NULL;
	struct stat st;

	fresh();
	l = open_layer(false);
	assert_int_equal(mknodat(jf_layer_upper_fd(l), "gone.txt", S_IFCHR | 0600, makedev(0, 0)),
			 0);
	assert_int_equal(jf_layer_apply(l, NULL, 0, false, safe_all, NULL, &rep), 0);
	assert_int_equal(json_array_size(rep), 0);
	json_decref(rep);
	assert_int_equal(fstatat(jf_layer_upper_fd(l), "gone.txt", &st, AT_SYMLINK_NOFOLLOW), -1);
	jf_layer_free(l);
	cleanup();
}

/*
 * A git config and packed-refs the view let git rename into place are
 * applied when their content passes the daemon's check, and a file named
 * like a key whose content is public; a config with a key that runs a
 * program, a private key and any index are left in DIR.
 */
static void test_git_state(void **state)
{
	static const char oid[] = "0123456789abcdef0123456789abcdef01234567";
	struct jf_layer *l;
	char *out, *s;
	int st, ufd;

	if (!getenv("JAILFS"))
		skip();
	fresh();
	sh("mkdir -p %s/.git/refs && printf '[core]\\n\\tbare = false\\n' >%s/.git/config", src,
	   src);
	l = open_layer(false);
	ufd = jf_layer_upper_fd(l);
	assert_int_equal(jf_layer_note_origin(l, ".git/config"), 0);
	assert_int_equal(mkdirat(ufd, ".git", 0755), 0);
	assert_int_equal(mkdirat(ufd, "sub", 0755), 0);
	assert_int_equal(mkdirat(ufd, "sub/.git", 0755), 0);
	jf_layer_free(l);
	put(dir, "upper/.git/config", "[core]\n\tbare = false\n[remote \"up\"]\n\turl = ../up\n",
	    0644);
	s = NULL;
	assert_true(asprintf(&s, "# pack-refs with: peeled\n%s refs/heads/main\n", oid) > 0);
	put(dir, "upper/.git/packed-refs", s, 0644);
	free(s);
	put(dir, "upper/.git/index", "DIRC", 0644);
	put(dir, "upper/sub/.git/config", "[core]\n\tfsmonitor = ./evil\n", 0644);
	/* named like a key: a certificate bundle is applied, a key is not */
	put(dir, "upper/ca.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
	    0644);
	put(dir, "upper/k.pem", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n",
	    0600);
	out = jailfs_out(&st, "apply %s 2>/dev/null", dir);
	assert_int_equal(st, 1);
	assert_non_null(strstr(out, "applied .git/config\n"));
	assert_non_null(strstr(out, "applied .git/packed-refs\n"));
	assert_non_null(strstr(out, "refused .git/index: "));
	assert_non_null(strstr(out, "refused sub/.git/config: "));
	assert_non_null(strstr(out, "applied ca.pem\n"));
	assert_non_null(strstr(out, "refused k.pem: "));
	free(out);
	s = slurp(src, ".git/config");
	assert_non_null(strstr(s, "url = ../up"));
	free(s);
	assert_null(slurp(src, "sub/.git/config"));
	assert_null(slurp(src, ".git/index"));
	assert_null(slurp(src, "k.pem"));
	cleanup();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_conflict),
		cmocka_unit_test(test_discard),
		cmocka_unit_test(test_apply_killed),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_type_change),
		cmocka_unit_test(test_tmp_name_taken),
		cmocka_unit_test(test_denied_below_deleted),
		cmocka_unit_test(test_stale_whiteout),
		cmocka_unit_test(test_diff_hides_denied),
		cmocka_unit_test(test_tmp_name_in_layer),
		cmocka_unit_test(test_git_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
