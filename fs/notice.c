/* SPDX-License-Identifier: MIT */
/*
 * Start-up notices said once per SOURCE. The record lives in the daemon
 * user's own state directory (XDG Base Directory: $XDG_STATE_HOME, else
 * ~/.local/state), never in SOURCE or the view: the agent in the jail must
 * not be able to silence a notice meant for the user. The file holds the
 * notice itself, so a changed notice (another file now shown) is said again.
 */
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "notice.h"

/* mkdir -p of @path's directories (mode 0700), @path itself included. */
static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return mkdir(path, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

/* The record's path for @kind and @source, or NULL (no home, no memory). */
static char *record_path(const char *kind, const char *source, char **dir)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	uint8_t digest[SHA256_DIGEST_SIZE];
	char hex[2 * SHA256_DIGEST_SIZE + 1];
	struct sha256_ctx h;
	char *path = NULL;

	if (!state || state[0] != '/') {
		if (!home || home[0] != '/')
			return NULL;
		if (asprintf(dir, "%s/.local/state/jailfs/%s", home, kind) < 0)
			return NULL;
	} else if (asprintf(dir, "%s/jailfs/%s", state, kind) < 0) {
		return NULL;
	}
	sha256_init(&h);
	sha256_update(&h, strlen(source), (const uint8_t *)source);
	sha256_digest(&h, sizeof(digest), digest);
	for (size_t i = 0; i < sizeof(digest); i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
	if (asprintf(&path, "%s/%s", *dir, hex) < 0) {
		free(*dir);
		*dir = NULL;
		return NULL;
	}
	return path;
}

/* Does file @path hold exactly @text and a newline? */
static bool holds(const char *path, const char *text)
{
	size_t n = strlen(text);
	_cleanup_free_ char *buf = malloc(n + 2);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	ssize_t got;

	if (fd < 0 || !buf)
		return false;
	got = read(fd, buf, n + 2);
	return got == (ssize_t)n + 1 && memcmp(buf, text, n) == 0 && buf[n] == '\n';
}

/* Write @text and a newline to @path, atomically (a temporary file renamed). */
static void record(const char *dir, const char *path, const char *text)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	size_t n = strlen(text);

	if (asprintf(&tmp, "%s/.tmp.XXXXXX", dir) < 0)
		return;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, text, n) != (ssize_t)n || write(fd, "\n", 1) != 1 || rename(tmp, path) < 0)
		unlink(tmp);
}

bool jf_notice_said(const char *kind, const char *source, const char *text)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_free_ char *path = record_path(kind, source, &dir);

	if (!path)
		return false;
	if (holds(path, text))
		return true;
	if (mkdirs(dir) == 0)
		record(dir, path, text);
	return false;
}
