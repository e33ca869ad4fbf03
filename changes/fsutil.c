/* SPDX-License-Identifier: MIT */
/*
 * The file-system helpers of the changes library: every access below DIR
 * and SOURCE goes through an fd and openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), so a symlink in upper/ or SOURCE never leads a
 * review command elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cleanup.h"
#include "layer-internal.h"
#include "text.h"

json_t *jf_layer_path_json(const char *p, bool *escaped)
{
	size_t len = strlen(p);
	json_t *s = json_stringn(p, len);
	_cleanup_free_ char *esc = NULL;

	*escaped = false;
	if (s)
		return s;
	esc = malloc(4 * len + 1);
	if (!esc)
		return NULL;
	jf_escape(esc, 4 * len + 1, p, len);
	*escaped = true;
	return json_string(esc);
}

json_t *jf_layer_rec(json_t *rec, const char *key, const char *p, const char *key2, const char *p2)
{
	const char *keys[2] = {key, key2}, *paths[2] = {p, p2};

	for (int i = 0; rec && i < 2 && keys[i]; i++) {
		size_t len = strlen(paths[i]);
		json_t *s = json_stringn(paths[i], len);
		char hexkey[64] = "", *hex;

		if (!s) { /* not UTF-8: the bytes in hex, under KEY_hex */
			hex = malloc(2 * len + 1);
			for (size_t j = 0; hex && j < len; j++)
				snprintf(hex + 2 * j, 3, "%02x", (unsigned char)paths[i][j]);
			s = hex ? json_string(hex) : NULL;
			free(hex);
			snprintf(hexkey, sizeof(hexkey), "%s_hex", keys[i]);
		}
		if (!s || json_object_set_new(rec, s && hexkey[0] ? hexkey : keys[i], s) < 0) {
			json_decref(rec);
			return NULL;
		}
	}
	return rec;
}

void jf_layer_rec_unhex(json_t *rec)
{
	static const char *const keys[] = {"path", "from", "to"};
	char hexkey[16];

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		const char *hex;
		size_t n;
		char *raw;

		snprintf(hexkey, sizeof(hexkey), "%s_hex", keys[i]);
		hex = json_string_value(json_object_get(rec, hexkey));
		n = hex ? strlen(hex) / 2 : 0;
		raw = hex && n ? malloc(n + 1) : NULL;
		for (size_t j = 0; raw && j < n; j++)
			sscanf(hex + 2 * j, "%2hhx", (unsigned char *)&raw[j]);
		if (raw && memchr(raw, '\0', n) == NULL)
			json_object_set_new_nocheck(rec, keys[i], json_stringn_nocheck(raw, n));
		free(raw);
	}
}

int jf_layer_openat(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (unsigned)(flags | O_CLOEXEC | O_NOFOLLOW),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (!path[0])
		path = ".";
	if (flags & O_PATH)
		how.flags &= ~(unsigned)O_NOFOLLOW; /* O_PATH|O_NOFOLLOW opens the symlink itself */
	if (flags & O_CREAT)
		how.mode = 0600;
	fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	return (int)fd;
}

int jf_layer_parent(int rootfd, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = NULL;

	*name = slash ? slash + 1 : path;
	if (!slash)
		return jf_layer_openat(rootfd, "", O_PATH | O_DIRECTORY);
	dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	return jf_layer_openat(rootfd, dir, O_PATH | O_DIRECTORY);
}

int jf_layer_lstat(int rootfd, const char *path, struct stat *st)
{
	const char *name;
	_cleanup_close_ int dfd = jf_layer_parent(rootfd, path, &name);

	if (dfd < 0)
		return dfd == -ENOTDIR || dfd == -ELOOP ? -ENOENT : dfd;
	if (fstatat(dfd, path[0] ? name : "", st, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

DIR *jf_layer_opendir(int fd)
{
	int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	int e = errno;

	if (!d && dup_fd >= 0) {
		close(dup_fd);
		errno = e;
	}
	return d;
}

/* Empties directory @fd (owned by the caller). */
static int rm_children(int fd)
{
	_cleanup_closedir_ DIR *d = jf_layer_opendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(fd, de->d_name, 0) == 0)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			r = -errno;
			continue;
		}
		_cleanup_close_ int sub =
			openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 || rm_children(sub) < 0 || unlinkat(fd, de->d_name, AT_REMOVEDIR) < 0)
			r = -errno;
	}
	return r;
}

int jf_layer_rm_rf(int rootfd, const char *path)
{
	const char *name;
	_cleanup_close_ int pfd = jf_layer_parent(rootfd, path, &name), wp = -1, dfd = -1;
	struct stat st;
	int r;

	if (pfd == -ENOENT || pfd == -ENOTDIR || pfd == -ELOOP)
		return 0;
	if (pfd < 0)
		return pfd;
	/* an O_PATH fd cannot be given to unlinkat: reopen the parent */
	wp = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (wp < 0)
		return -errno;
	if (fstatat(wp, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(wp, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	dfd = openat(wp, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	r = rm_children(dfd);
	if (r < 0)
		return r;
	return unlinkat(wp, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}

int jf_layer_copy_data(int src_fd, int out)
{
	struct stat st;
	off_t off = 0;

	if (fstat(src_fd, &st) < 0)
		return -errno;
	if (ioctl(out, FICLONE, src_fd) == 0)
		return 0;
	while (off < st.st_size) {
		ssize_t n = copy_file_range(src_fd, &off, out, NULL, (size_t)(st.st_size - off), 0);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
	}
	return 0;
}

int jf_layer_copy_file(int src_fd, int dirfd, const char *name, mode_t mode, bool sync)
{
	_cleanup_close_ int out = openat(
		dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode & 07777);
	int r;

	if (out < 0)
		return -errno;
	r = jf_layer_copy_data(src_fd, out);
	if (r == 0 && (fchmod(out, mode & 07777) < 0 || (sync && fsync(out) < 0)))
		r = -errno;
	if (r < 0)
		unlinkat(dirfd, name, 0);
	return r;
}

int jf_layer_copy_xattrs(int from, int to)
{
	char names[8192], val[65536];
	ssize_t len = flistxattr(from, names, sizeof(names));

	if (len < 0)
		return errno == ENOTSUP ? 0 : -errno;
	for (char *n = names; n < names + len; n += strlen(n) + 1) {
		ssize_t vl;

		if (strncmp(n, "user.", 5) != 0)
			continue;
		vl = fgetxattr(from, n, val, sizeof(val));
		if (vl < 0 || fsetxattr(to, n, val, (size_t)vl, 0) < 0)
			return -errno;
	}
	return 0;
}

int jf_layer_sha256(int fd, char hex[65])
{
	struct sha256_ctx ctx;
	uint8_t dig[SHA256_DIGEST_SIZE], buf[65536];
	off_t off = 0;
	ssize_t n;

	sha256_init(&ctx);
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		sha256_update(&ctx, (size_t)n, buf);
		off += n;
	}
	if (n < 0)
		return -errno;
	sha256_digest(&ctx, sizeof(dig), dig);
	for (size_t i = 0; i < sizeof(dig); i++)
		snprintf(hex + 2 * i, 3, "%02x", dig[i]);
	return 0;
}

int jf_layer_read_file(int rootfd, const char *path, size_t max, char **buf, size_t *len)
{
	/* O_NONBLOCK: a FIFO in place of the file must not hang the reader */
	_cleanup_close_ int fd = jf_layer_openat(rootfd, path, O_RDONLY | O_NONBLOCK);
	_cleanup_free_ char *b = NULL;
	struct stat st;
	size_t got = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((size_t)st.st_size > max)
		return -EFBIG;
	b = malloc((size_t)st.st_size + 1);
	if (!b)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, b + got, (size_t)st.st_size - got);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	b[got] = '\0';
	*len = got;
	*buf = steal_ptr(&b);
	return 0;
}

bool jf_layer_is_whiteout(int dirfd, const char *name, const struct stat *st)
{
	char v[4];
	_cleanup_close_ int fd = -1;

	if (S_ISCHR(st->st_mode))
		return major(st->st_rdev) == 0 && minor(st->st_rdev) == 0;
	if (!S_ISREG(st->st_mode) || st->st_size != 0)
		return false;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	return fd >= 0 && fgetxattr(fd, "user.overlay.whiteout", v, sizeof(v)) >= 0;
}

bool jf_layer_is_opaque(int dirfd, const char *name)
{
	char v[4] = "";
	_cleanup_close_ int fd =
		openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd >= 0 && fgetxattr(fd, "user.overlay.opaque", v, sizeof(v)) == 1 && v[0] == 'y';
}

bool jf_path_within(const char *path, const char *top)
{
	size_t n = strlen(top);

	return !top[0] || (!strncmp(path, top, n) && (path[n] == '\0' || path[n] == '/'));
}

const char *jf_type_name(mode_t mode)
{
	if (S_ISREG(mode))
		return "file";
	if (S_ISDIR(mode))
		return "dir";
	if (S_ISLNK(mode))
		return "symlink";
	return "other";
}

int jf_layer_end_line(int fd)
{
	struct stat st;
	char c;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size == 0)
		return 0;
	_cleanup_close_ int rfd = -1;
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	rfd = open(link, O_RDONLY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	if (pread(rfd, &c, 1, st.st_size - 1) != 1)
		return -EIO;
	return c == '\n' || write(fd, "\n", 1) == 1 ? 0 : -errno;
}
