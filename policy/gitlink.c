/* SPDX-License-Identifier: MIT */
/*
 * The path a .git file names, read as git reads it (policy/gitlink.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "gitlink.h"

static const char prefix[] = "gitdir: ";
#define PREFIX_LEN (sizeof(prefix) - 1)

static int bad(const char **why, const char *text)
{
	*why = text;
	return -EINVAL;
}

/* Append component @c (@n bytes) to the path @out (@len bytes so far). */
static int push(char *out, size_t size, size_t *len, const char *c, size_t n)
{
	size_t sep = *len ? 1 : 0;

	if (*len + sep + n + 1 > size)
		return -ENAMETOOLONG;
	if (sep)
		out[(*len)++] = '/';
	memcpy(out + *len, c, n);
	*len += n;
	out[*len] = '\0';
	return 0;
}

/* Drop the last component of @out; false at the top. */
static bool pop(char *out, size_t *len)
{
	char *slash;

	if (*len == 0)
		return false;
	slash = memrchr(out, '/', *len);
	*len = slash ? (size_t)(slash - out) : 0;
	out[*len] = '\0';
	return true;
}

/* The components of @p (@n bytes): ".." only at the start, when @ups. */
static int walk(const char *p, size_t n, bool ups, char *out, size_t size, size_t *len,
		const char **why)
{
	const char *end = p + n;
	bool down = !ups;

	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		size_t c = (size_t)((slash ? slash : end) - p);
		int r;

		if (c == 0 || (c == 1 && p[0] == '.'))
			return bad(why, "a .git file naming a path git would not write");
		if (c == 2 && p[0] == '.' && p[1] == '.') {
			if (down)
				return bad(why, "a .git file naming a path git would not write");
			if (!pop(out, len))
				return bad(why, "a .git file naming a directory outside the view");
		} else {
			down = true;
			r = push(out, size, len, p, c);
			if (r < 0)
				return r;
		}
		if (!slash)
			break;
		p = slash + 1;
		if (p == end)
			return bad(why, "a .git file naming a path git would not write");
	}
	return 0;
}

int jf_gitfile_target(const unsigned char *buf, size_t len, const char *dir, const char *root_abs,
		      char *out, size_t size, const char **why)
{
	const char *path = (const char *)buf + PREFIX_LEN;
	size_t n = len, root = strlen(root_abs), olen = 0;

	*why = NULL;
	if (size == 0)
		return -ENAMETOOLONG;
	out[0] = '\0';
	if (len == 0)
		return 1;
	if (memchr(buf, '\0', len))
		return bad(why, "a NUL byte in a .git file");
	if (len < PREFIX_LEN || memcmp(buf, prefix, PREFIX_LEN) != 0)
		return bad(why, "a .git file that is not \"gitdir: PATH\"");
	while (n > PREFIX_LEN && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	n -= PREFIX_LEN;
	if (n == 0 || memchr(path, '\n', n) || memchr(path, '\r', n))
		return bad(why, "a .git file that is not \"gitdir: PATH\"");
	if (path[0] != '/') {
		int r = walk(dir, strlen(dir), false, out, size, &olen, why);

		return r < 0 ? r : walk(path, n, true, out, size, &olen, why);
	}
	while (root > 0 && root_abs[root - 1] == '/')
		root--; /* "/" itself */
	if (n < root || memcmp(path, root_abs, root) != 0 || (n > root && path[root] != '/'))
		return bad(why, "a .git file naming a directory outside the view");
	if (n == root)
		return 0;
	return walk(path + root + 1, n - root - 1, false, out, size, &olen, why);
}
