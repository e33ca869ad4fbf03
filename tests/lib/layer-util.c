/* SPDX-License-Identifier: MIT */
/*
 * The changes library's tests (test-layer.c, test-layer-apply.c): a SOURCE
 * and a layer in a temporary directory, a kernel overlay mounted by a
 * child in a user and mount namespace of its own that plays the daemon
 * (origin, save and rename notes before each mutation), and listings of
 * trees by type, mode and SHA-256 or target. No mount outlives the child.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "layer-util.h"

char base[256], src[300], dir[300], mnt[300];

void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

void put(const char *root, const char *path, const char *content, mode_t mode)
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

char *slurp(const char *root, const char *path)
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
bool list_mtime; /* also each file's mtime (restore is exact) */

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
char *tree(const char *root)
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

struct jf_layer *open_layer(bool create)
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

void d_write(struct jf_layer *l, const char *p, const char *text, bool exists)
{
	CK(jf_layer_note_origin(l, p));
	CK(jf_layer_save(l, p, exists));
	write_file(p, text);
}

void d_unlink(struct jf_layer *l, const char *p, bool is_dir)
{
	CK(jf_layer_note_origin(l, p));
	CK(jf_layer_save(l, p, false));
	CK(is_dir ? rmdir(M(p)) : unlink(M(p)));
}

void d_rename(struct jf_layer *l, const char *a, const char *b)
{
	CK(jf_layer_note_origin(l, a));
	CK(jf_layer_note_origin(l, b));
	CK(jf_layer_save(l, a, false));
	CK(jf_layer_save(l, b, false));
	CK(jf_layer_note_rename(l, a, b));
	snprintf(mp2, sizeof(mp2), "%s/%s", mnt, b);
	CK(rename(M(a), mp2));
}

void d_mkdir(struct jf_layer *l, const char *p)
{
	CK(jf_layer_note_origin(l, p));
	CK(jf_layer_save(l, p, false));
	CK(mkdir(M(p), 0755));
}

void d_chmod(struct jf_layer *l, const char *p, mode_t m)
{
	CK(jf_layer_note_origin(l, p));
	CK(jf_layer_save(l, p, true));
	CK(chmod(M(p), m));
}

void d_symlink(struct jf_layer *l, const char *target, const char *p)
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
void in_overlay(session_fn fn, char **view)
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

void fresh(void)
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

void cleanup(void)
{
	if (getenv("JF_TEST_KEEP"))
		return;
	sh("rm -rf %s", base);
}

int session_one(struct jf_layer *l)
{
	d_write(l, "a.txt", "one\n2\nthree\n", true);
	d_write(l, "new.txt", "new\n", false);
	return 0;
}

/* A command that deletes a tree, renames, rewrites, changes modes,
 * replaces a directory and makes a symlink. */
int session_two(struct jf_layer *l)
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

json_t *changes_of(struct jf_layer *l)
{
	void *out = NULL;

	assert_int_equal(jf_layer_changes(l, NULL, 0, &out), 0);
	return out;
}

/* The status of @path in a changes array ('-' if absent). */
char status_of(json_t *a, const char *path)
{
	size_t i;
	json_t *o;

	json_array_foreach(
		a, i,
		o) if (!strcmp(json_string_value(json_object_get(o, "path")),
			       path)) return json_string_value(json_object_get(o, "status"))[0];
	return '-';
}

void diff_to(struct jf_layer *l, const char *file, const char *const *paths, size_t n)
{
	FILE *f = fopen(file, "w");

	assert_non_null(f);
	assert_int_equal(jf_layer_diff(l, paths, n, NULL, NULL, f, NULL), 0);
	fclose(f);
}

/* git apply --check takes the diff in SOURCE, and git apply in a copy
 * gives the view's tree. */
bool safe_but_secret(const char *path, void *data)
{
	(void)data;
	return strcmp(path, "secret.txt") != 0;
}

const char *action_of(json_t *rep, const char *path)
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
bool safe_all(const char *path, void *data)
{
	(void)path;
	(void)data;
	return true;
}

/* The content of kill-test file @i, old or new: KILL_SIZE bytes. */
