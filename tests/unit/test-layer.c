/* SPDX-License-Identifier: MIT */
/*
 * The changes library (changes/) over real kernel overlays: a child in a
 * user and mount namespace of its own mounts SOURCE with upperdir=DIR/upper
 * and plays the daemon (origin, save and rename notes before each
 * mutation); the test then reads, diffs, applies, discards and restores
 * the layer, and compares trees by a listing of every entry with its type,
 * mode and SHA-256 or target. No mount outlives the child.
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

#include "cleanup.h"
#include "layer-internal.h"

static char base[256], src[300], dir[300], mnt[300];

static void sh(const char *fmt, ...) _printf_(1, 2);
static void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static void put(const char *root, const char *path, const char *content, mode_t mode)
{
	char p[1024];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, path);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
	chmod(p, mode);
}

static char *slurp(const char *root, const char *path)
{
	char p[1024], *buf = calloc(1, 1 << 20);
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, path);
	fd = open(p, O_RDONLY);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	while ((n = read(fd, buf + len, (1 << 20) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	return buf;
}

/* --- tree listings --- */

static char *listing;
static size_t listing_len, root_len;
static bool list_mtime; /* also each file's mtime (restore is exact) */

static int list_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	char extra[4200] = "", line[8400];

	if (ftw->level == 0)
		return 0;
	if (S_ISREG(st->st_mode)) {
		int fd = open(p, O_RDONLY);
		if (fd >= 0) {
			jf_layer_sha256(fd, extra);
			close(fd);
		}
	} else if (S_ISLNK(st->st_mode)) {
		ssize_t n = readlink(p, extra, sizeof(extra) - 1);
		extra[n > 0 ? n : 0] = '\0';
	}
	snprintf(line, sizeof(line), "%s %s %o %s %lld\n", p + root_len, jf_type_name(st->st_mode),
		 st->st_mode & 07777, extra,
		 list_mtime && !S_ISDIR(st->st_mode)
			 ? (long long)st->st_mtim.tv_nsec + st->st_mtim.tv_sec * 1000000000LL
			 : 0LL);
	listing = realloc(listing, listing_len + strlen(line) + 1);
	strcpy(listing + listing_len, line);
	listing_len += strlen(line);
	return 0;
}

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every entry below @root, sorted: "path type mode sha256|target". */
static char *tree(const char *root)
{
	char *lines[4096], *out, *save = NULL, *tok;
	size_t n = 0, len = 0;

	listing = NULL;
	listing_len = 0;
	root_len = strlen(root);
	nftw(root, list_one, 16, FTW_PHYS);
	if (!listing)
		return strdup("");
	for (tok = strtok_r(listing, "\n", &save); tok && n < 4096;
	     tok = strtok_r(NULL, "\n", &save))
		lines[n++] = tok;
	qsort(lines, n, sizeof(*lines), cmp_lines);
	out = calloc(1, listing_len + 2);
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(out + len, "%s\n", lines[i]);
	free(listing);
	return out;
}

/* --- the layer, a fake daemon in a namespace of its own --- */

static struct jf_layer *open_layer(bool create)
{
	struct jf_layer *l = NULL;
	char *err = NULL;
	int fd = open(src, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int r;

	assert_true(fd >= 0);
	r = jf_layer_open(dir, fd, NULL, create, &l, &err);
	if (r < 0)
		fprintf(stderr, "jf_layer_open: %s\n", err ? err : strerror(-r));
	free(err);
	close(fd);
	assert_int_equal(r, 0);
	return l;
}

typedef int (*session_fn)(struct jf_layer *l);

static void write_file(const char *path, const char *text)
{
	char p[1024];
	int fd, w;

	snprintf(p, sizeof(p), "%s/%s", path[0] == '/' ? "" : mnt, path);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	w = fd >= 0 ? (int)write(fd, text, strlen(text)) : -1;
	if (fd < 0 || w < 0)
		fprintf(stderr, "write %s: %s\n", p, strerror(errno)), _exit(3);
	close(fd);
}

/* The daemon's notes before each mutation, then the mutation through the
 * overlay. Each exits the child on failure. */
#define CK(x)                                                                                      \
	do {                                                                                       \
		int _r = (x);                                                                      \
		if (_r < 0) {                                                                      \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                 \
				strerror(_r == -1 ? errno : -_r));                                 \
			_exit(4);                                                                  \
		}                                                                                  \
	} while (0)
#define M(p) (snprintf(mp, sizeof(mp), "%s/%s", mnt, p), mp)
static char mp[1024], mp2[1024];

static void d_write(struct jf_layer *l, const char *p, const char *text, bool exists)
{
	CK(jf_layer_note_origin(l, p));
	CK(jf_layer_save(l, p, exists));
	write_file(p, text);
}

static void d_unlink(struct jf_layer *l, const char *p, bool is_dir)
{
	CK(jf_layer_note_origin(l, p));
	CK(jf_layer_save(l, p, false));
	CK(is_dir ? rmdir(M(p)) : unlink(M(p)));
}

static void d_rename(struct jf_layer *l, const char *a, const char *b)
{
	CK(jf_layer_note_origin(l, a));
	CK(jf_layer_note_origin(l, b));
	CK(jf_layer_save(l, a, false));
	CK(jf_layer_save(l, b, false));
	CK(jf_layer_note_rename(l, a, b));
	snprintf(mp2, sizeof(mp2), "%s/%s", mnt, b);
	CK(rename(M(a), mp2));
}

static void d_mkdir(struct jf_layer *l, const char *p)
{
	CK(jf_layer_note_origin(l, p));
	CK(jf_layer_save(l, p, false));
	CK(mkdir(M(p), 0755));
}

static void d_chmod(struct jf_layer *l, const char *p, mode_t m)
{
	CK(jf_layer_note_origin(l, p));
	CK(jf_layer_save(l, p, true));
	CK(chmod(M(p), m));
}

static void d_symlink(struct jf_layer *l, const char *target, const char *p)
{
	CK(jf_layer_note_origin(l, p));
	CK(jf_layer_save(l, p, false));
	CK(symlink(target, M(p)));
}

static void write_id_map(const char *file, const char *line)
{
	int fd = open(file, O_WRONLY);

	if (fd < 0 || write(fd, line, strlen(line)) < 0)
		_exit(5);
	close(fd);
}

/* Mounts the overlay in a child of its own namespaces, runs @fn there
 * (the layer opened anew in the child), and returns its listing of the
 * view when @view is not NULL. */
static void in_overlay(session_fn fn, char **view)
{
	char opts[1200], map[64], vfile[400];
	uid_t uid = getuid();
	gid_t gid = getgid();
	int status;
	pid_t pid;

	snprintf(vfile, sizeof(vfile), "%s/view.txt", base);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct jf_layer *l;
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			_exit(6);
		write_id_map("/proc/self/setgroups", "deny");
		snprintf(map, sizeof(map), "0 %u 1", uid);
		write_id_map("/proc/self/uid_map", map);
		snprintf(map, sizeof(map), "0 %u 1", gid);
		write_id_map("/proc/self/gid_map", map);
		snprintf(opts, sizeof(opts),
			 "lowerdir=%s,upperdir=%s/upper,workdir=%s/work,userxattr", src, dir, dir);
		if (mount("ov", mnt, "overlay", 0, opts) < 0)
			fprintf(stderr, "mount: %s\n", strerror(errno)), _exit(7);
		l = open_layer(false);
		if (fn && fn(l) != 0)
			_exit(8);
		jf_layer_free(l);
		if (view) {
			char *t = tree(mnt);
			FILE *f = fopen(vfile, "w");
			fputs(t, f);
			fclose(f);
			free(t);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	if (view) {
		*view = slurp(base, "view.txt");
		assert_non_null(*view);
	}
}

static void fresh(void)
{
	snprintf(base, sizeof(base), "%s/jflayer.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(base));
	snprintf(src, sizeof(src), "%s/src", base);
	snprintf(dir, sizeof(dir), "%s/layer", base);
	snprintf(mnt, sizeof(mnt), "%s/mnt", base);
	sh("mkdir -p %s/dir/sub %s && cd %s && printf 'one\\ntwo\\nthree\\n' > a.txt && "
	   "printf 'bee\\n' > b.txt && printf 'c\\n' > dir/c.txt && printf 'd\\n' > dir/sub/d.txt "
	   "&& "
	   "printf '#!/bin/sh\\necho hi\\n' > exec.sh && chmod 755 exec.sh && ln -s a.txt link && "
	   "printf 'x\\0y' > bin.dat",
	   src, mnt, src);
	jf_layer_free(open_layer(true));
}

static void cleanup(void)
{
	if (getenv("JF_TEST_KEEP"))
		return;
	sh("rm -rf %s", base);
}

static int session_one(struct jf_layer *l)
{
	d_write(l, "a.txt", "one\n2\nthree\n", true);
	d_write(l, "new.txt", "new\n", false);
	return 0;
}

/* A command that deletes a tree, renames, rewrites, changes modes,
 * replaces a directory and makes a symlink. */
static int session_two(struct jf_layer *l)
{
	d_unlink(l, "dir/sub/d.txt", false);
	d_unlink(l, "dir/sub", true);
	d_unlink(l, "dir/c.txt", false);
	d_unlink(l, "dir", true);
	d_rename(l, "b.txt", "b2.txt");
	d_rename(l, "new.txt", "new2.txt");
	d_write(l, "new2.txt", "newer\n", true);
	d_write(l, "a.txt", "one\n2\n3\n", true);
	d_chmod(l, "exec.sh", 0644);
	d_mkdir(l, "dir");
	d_write(l, "dir/x.txt", "x\n", false);
	d_symlink(l, "b2.txt", "link2");
	return 0;
}

static void test_restore_exact(void **state)
{
	char *v1, *v2, *v3, *id = NULL;
	struct jf_layer *l;

	fresh();
	list_mtime = true;
	in_overlay(session_one, NULL);
	l = open_layer(false);
	assert_int_equal(jf_layer_checkpoint(l, "before", &id), 0);
	assert_string_equal(id, "000001-before");
	free(id);
	jf_layer_free(l);
	in_overlay(NULL, &v1);
	in_overlay(session_two, &v2);
	assert_string_not_equal(v1, v2);
	l = open_layer(false);
	assert_int_equal(jf_layer_restore(l, "before"), 0);
	jf_layer_free(l);
	in_overlay(NULL, &v3);
	if (strcmp(v1, v3))
		fprintf(stderr, "WANT\n%sGOT\n%s", v1, v3);
	assert_string_equal(v1, v3);
	/* and again, after the same command once more */
	in_overlay(session_two, NULL);
	l = open_layer(false);
	assert_int_equal(jf_layer_restore(l, "000001-before"), 0);
	jf_layer_free(l);
	free(v3);
	in_overlay(NULL, &v3);
	assert_string_equal(v1, v3);
	list_mtime = false;
	free(v1);
	free(v2);
	free(v3);
	cleanup();
}

/* Two checkpoints: restoring the first undoes both commands. */
static void test_restore_two(void **state)
{
	char *v0, *v1, *id = NULL;
	struct jf_layer *l;

	fresh();
	in_overlay(NULL, &v0);
	l = open_layer(false);
	assert_int_equal(jf_layer_checkpoint(l, NULL, &id), 0);
	assert_string_equal(id, "000001-cp000001");
	free(id);
	jf_layer_free(l);
	in_overlay(session_one, NULL);
	l = open_layer(false);
	assert_int_equal(jf_layer_checkpoint(l, NULL, &id), 0);
	free(id);
	jf_layer_free(l);
	in_overlay(session_two, NULL);
	l = open_layer(false);
	assert_int_equal(jf_layer_restore(l, "1"), 0);
	assert_int_equal(jf_layer_restore(l, "2"), -ENOENT); /* removed by the first */
	jf_layer_free(l);
	in_overlay(NULL, &v1);
	assert_string_equal(v0, v1);
	free(v0);
	free(v1);
	cleanup();
}

static json_t *changes_of(struct jf_layer *l)
{
	void *out = NULL;

	assert_int_equal(jf_layer_changes(l, NULL, 0, &out), 0);
	return out;
}

/* The status of @path in a changes array ('-' if absent). */
static char status_of(json_t *a, const char *path)
{
	size_t i;
	json_t *o;

	json_array_foreach(
		a, i,
		o) if (!strcmp(json_string_value(json_object_get(o, "path")),
			       path)) return json_string_value(json_object_get(o, "status"))[0];
	return '-';
}

static void test_changes(void **state)
{
	struct jf_layer *l;
	json_t *a, *o;
	size_t i;

	fresh();
	in_overlay(session_one, NULL);
	in_overlay(session_two, NULL);
	l = open_layer(false);
	a = changes_of(l);
	assert_int_equal(status_of(a, "a.txt"), 'M');
	assert_int_equal(status_of(a, "b2.txt"), 'R');
	assert_int_equal(status_of(a, "b.txt"), '-'); /* paired with its rename */
	assert_int_equal(status_of(a, "new2.txt"), 'A');
	assert_int_equal(status_of(a, "exec.sh"), 'M');
	assert_int_equal(status_of(a, "dir"), 'M'); /* replaced: opaque */
	assert_int_equal(status_of(a, "dir/x.txt"), 'A');
	/* every deletion below the replaced directory is listed */
	assert_int_equal(status_of(a, "dir/c.txt"), 'D');
	assert_int_equal(status_of(a, "dir/sub"), 'D');
	assert_int_equal(status_of(a, "dir/sub/d.txt"), 'D');
	assert_int_equal(status_of(a, "link2"), 'A');
	assert_int_equal(status_of(a, "bin.dat"), '-');
	json_array_foreach(a, i, o)
	{
		if (!strcmp(json_string_value(json_object_get(o, "path")), "exec.sh")) {
			assert_int_equal(json_integer_value(json_object_get(o, "old_mode")), 0755);
			assert_int_equal(json_integer_value(json_object_get(o, "mode")), 0644);
		}
		if (!strcmp(json_string_value(json_object_get(o, "path")), "dir"))
			assert_true(json_is_true(json_object_get(o, "replaced")));
		if (!strcmp(json_string_value(json_object_get(o, "path")), "b2.txt"))
			assert_string_equal(json_string_value(json_object_get(o, "from")), "b.txt");
	}
	json_decref(a);
	jf_layer_free(l);
	cleanup();
}

/* The whiteout of newer kernels: a file with user.overlay.whiteout. */
static void test_xattr_whiteout(void **state)
{
	char p[512];
	struct jf_layer *l;
	json_t *a;
	int fd;

	fresh();
	snprintf(p, sizeof(p), "%s/upper/b.txt", dir);
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(fsetxattr(fd, "user.overlay.whiteout", "", 0, 0), 0);
	close(fd);
	l = open_layer(false);
	a = changes_of(l);
	assert_int_equal(status_of(a, "b.txt"), 'D');
	assert_int_equal(json_array_size(a), 1);
	json_decref(a);
	jf_layer_free(l);
	cleanup();
}

static void diff_to(struct jf_layer *l, const char *file, const char *const *paths, size_t n)
{
	FILE *f = fopen(file, "w");

	assert_non_null(f);
	assert_int_equal(jf_layer_diff(l, paths, n, f), 0);
	fclose(f);
}

/* git apply --check takes the diff in SOURCE, and git apply in a copy
 * gives the view's tree. */
static void test_diff_git_apply(void **state)
{
	char patch[400], copy[400], *view, *got, *bin;
	struct jf_layer *l;
	static const char *const text[] = {"a.txt",   "b.txt", "b2.txt", "new2.txt",
					   "exec.sh", "dir",   "link2",	 "link"};

	fresh();
	in_overlay(session_one, NULL);
	in_overlay(session_two, &view);
	l = open_layer(false);
	snprintf(patch, sizeof(patch), "%s/p.diff", base);
	snprintf(copy, sizeof(copy), "%s/copy", base);
	diff_to(l, patch, text, ARRAY_SIZE(text));
	sh("cd %s && git apply --check %s", src, patch);
	sh("cp -a %s %s && cd %s && git apply %s", src, copy, copy, patch);
	got = tree(copy);
	assert_string_equal(view, got);
	free(got);
	/* a binary file is "differ" */
	jf_layer_free(l);
	put(dir, "upper/bin.dat", "", 0644);
	sh("printf 'z\\0w' > %s/upper/bin.dat", dir);
	l = open_layer(false);
	diff_to(l, patch, (const char *const[]){"bin.dat"}, 1);
	bin = slurp(base, "p.diff");
	assert_non_null(strstr(bin, "Binary files a/bin.dat and b/bin.dat differ\n"));
	free(bin);
	jf_layer_free(l);
	free(view);
	cleanup();
}

static bool safe_but_secret(const char *path, void *data)
{
	(void)data;
	return strcmp(path, "secret.txt") != 0;
}

static const char *action_of(json_t *rep, const char *path)
{
	size_t i;
	json_t *o;

	json_array_foreach(
		rep, i,
		o) if (!strcmp(json_string_value(json_object_get(o, "path")),
			       path)) return json_string_value(json_object_get(o, "action"));
	return "none";
}

/* apply writes the view into SOURCE; what is applied leaves DIR. */
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
static void test_control(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct jf_layer *l;
	void *reply = NULL;
	json_t *j;
	pid_t pid;
	int s, status;

	fresh();
	l = open_layer(false);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(strlen(dir) + 9 < sizeof(sa.sun_path));
	memcpy(sa.sun_path, dir, strlen(dir));
	memcpy(sa.sun_path + strlen(dir), "/control", 9);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(s, 1), 0);
	pid = fork();
	if (pid == 0) {
		char buf[512] = "";
		int c = accept(s, NULL, NULL);
		ssize_t n = 0, got;
		while (!strchr(buf, '\n') &&
		       (got = read(c, buf + n, sizeof(buf) - 1 - (size_t)n)) > 0)
			n += got;
		const char *want = "{\"cmd\":\"apply\",\"args\":[\"a.txt\"],\"force\":true}\n";
		const char *ok =
			"{\"ok\":true,\"report\":[{\"path\":\"a.txt\",\"action\":\"applied\"}]}\n";
		if (n < 0 || strcmp(buf, want))
			_exit(1);
		_exit(write(c, ok, strlen(ok)) < 0);
	}
	close(s);
	assert_int_equal(
		jf_layer_request(l, "apply", (const char *const[]){"a.txt"}, 1, true, &reply), 0);
	j = reply;
	assert_true(json_is_true(json_object_get(j, "ok")));
	assert_string_equal(action_of(json_object_get(j, "report"), "a.txt"), "applied");
	json_decref(j);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	jf_layer_free(l);
	cleanup();
}

/* DIR is refused inside SOURCE, and when another source's. */
static void test_open_checks(void **state)
{
	struct jf_layer *l = NULL;
	char *err = NULL, inside[400];
	int fd;

	fresh();
	fd = open(src, O_PATH | O_DIRECTORY);
	snprintf(inside, sizeof(inside), "%s/dir/layer", src);
	assert_int_equal(jf_layer_open(inside, fd, NULL, true, &l, &err), -EINVAL);
	assert_non_null(strstr(err, "outside"));
	free(err);
	close(fd);
	fd = open(mnt, O_PATH | O_DIRECTORY);
	assert_int_equal(jf_layer_open(dir, fd, NULL, false, &l, &err), -EINVAL);
	assert_non_null(strstr(err, "another source"));
	free(err);
	close(fd);
	chmod(dir, 0755);
	fd = open(src, O_PATH | O_DIRECTORY);
	assert_int_equal(jf_layer_open(dir, fd, NULL, false, &l, &err), -EPERM);
	free(err);
	close(fd);
	cleanup();
}

#define KILL_FILES 12
#define KILL_SIZE (16 << 10)
#define KILL_ROUNDS 20

static bool safe_all(const char *path, void *data)
{
	(void)path;
	(void)data;
	return true;
}

/* The content of kill-test file @i, old or new: KILL_SIZE bytes. */
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
	if (pid == 0) {
		char buf[512] = "";
		const char *ok = "{\"ok\":true,\"id\":\"000002-second\"}\n";
		int c = accept(s, NULL, NULL);
		ssize_t n = 0, got;
		while (!strchr(buf, '\n') &&
		       (got = read(c, buf + n, sizeof(buf) - 1 - (size_t)n)) > 0)
			n += got;
		if (strcmp(buf, "{\"cmd\":\"checkpoint\",\"args\":[\"second\"],\"force\":false}\n"))
			_exit(1);
		_exit(write(c, ok, strlen(ok)) < 0);
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
static void test_torn_journal(void **state)
{
	struct jf_layer *l;
	char p[512];
	FILE *f;

	fresh();
	snprintf(p, sizeof(p), "%s/journal.jsonl", dir);
	f = fopen(p, "a");
	fputs("{\"op\":\"origin\",\"path\":\"b.txt\",\"ty", f);
	fclose(f);
	l = open_layer(false);
	assert_null(jf_layer_origin(l, "b.txt"));
	assert_int_equal(jf_layer_note_origin(l, "a.txt"), 0);
	jf_layer_free(l);
	l = open_layer(false);
	assert_non_null(jf_layer_origin(l, "a.txt"));
	assert_int_equal(jf_layer_note_origin(l, "no/such/file"), 0);
	assert_null(jf_layer_origin(l, "no/such/file"));
	jf_layer_free(l);
	cleanup();
}

/* Random text of lines from a small alphabet: many equal lines, so the
 * diff has to choose. */
static void random_text(char *buf, size_t lines)
{
	static const char *const words[] = {"a\n", "b\n", "c\n", "{\n", "}\n", "x = 1;\n", "\n"};
	size_t len = 0;

	for (size_t i = 0; i < lines; i++)
		len += (size_t)sprintf(buf + len, "%s", words[rand() % ARRAY_SIZE(words)]);
	if (lines && rand() % 4 == 0 && len > 1)
		buf[--len] = '\0'; /* no newline at the end */
}

/* The line diff against git: random pairs of files, the diff applied by
 * git apply gives the new files exactly. */
static void test_diff_random(void **state)
{
	char name[64], up[400], patch[400], copy[400], *a, *b, *got;
	struct jf_layer *l;

	fresh();
	srand(12345);
	a = malloc(1 << 17);
	b = malloc(1 << 17);
	snprintf(up, sizeof(up), "%s/upper", dir);
	l = open_layer(false);
	for (int i = 0; i < 41; i++) {
		/* the last one past JF_MYERS_MAX_D differences: the long script */
		size_t n = i == 40 ? 4 * JF_MYERS_MAX_D : (size_t)(rand() % 60);
		snprintf(name, sizeof(name), "r%02d.txt", i);
		random_text(a, n);
		random_text(b, i == 40 ? n : (size_t)(rand() % 60));
		put(src, name, a, 0644);
		assert_int_equal(jf_layer_note_origin(l, name), 0);
		put(up, name, b, 0644);
	}
	snprintf(patch, sizeof(patch), "%s/r.diff", base);
	snprintf(copy, sizeof(copy), "%s/copy", base);
	diff_to(l, patch, NULL, 0);
	sh("cd %s && git apply --whitespace=nowarn --check %s", src, patch);
	sh("cp -a %s %s && cd %s && git apply --whitespace=nowarn %s", src, copy, copy, patch);
	for (int i = 0; i < 41; i++) {
		snprintf(name, sizeof(name), "r%02d.txt", i);
		got = slurp(copy, name);
		free(a);
		a = slurp(up, name);
		assert_string_equal(got, a);
		free(got);
	}
	free(a);
	free(b);
	jf_layer_free(l);
	cleanup();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_checks),    cmocka_unit_test(test_changes),
		cmocka_unit_test(test_xattr_whiteout), cmocka_unit_test(test_restore_exact),
		cmocka_unit_test(test_restore_two),    cmocka_unit_test(test_diff_git_apply),
		cmocka_unit_test(test_apply),	       cmocka_unit_test(test_conflict),
		cmocka_unit_test(test_discard),	       cmocka_unit_test(test_control),
		cmocka_unit_test(test_apply_killed),   cmocka_unit_test(test_commands),
		cmocka_unit_test(test_type_change),    cmocka_unit_test(test_torn_journal),
		cmocka_unit_test(test_diff_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
