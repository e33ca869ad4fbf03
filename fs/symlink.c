/* SPDX-License-Identifier: MIT */
/*
 * Symlink targets (docs/threat-model.md, invariant 5). Pure but for
 * ctx->host_check: what it needs of the daemon comes in a struct
 * jf_symlink_ctx. The kernel follows a symlink
 * on the caller's side, inside the view, so the daemon never follows one;
 * what it decides is which targets the view may show.
 *
 * Rule: an absolute target inside SOURCE (compared component by component)
 * is rewritten to the equivalent relative target. A relative target is
 * shown only when it has the form (../)*rest, where "rest" has no ".."
 * component, every name in it passes jf_check_name, the leading "../" do not
 * climb above the view's root from the link's directory, and the path it
 * names lexically is not DENIED. An absolute target outside SOURCE below a
 * system directory (sysdirs.h, canonical: no "." or "..") is shown as it
 * is when ctx->host_check says where it leads on the host stays in the
 * system directories and is a regular file (systarget.c): the caller's
 * kernel resolves it in the caller's namespace, a jail's read-only system
 * file or the host's same file. An absolute target naming one of the
 * standard device nodes exactly (device_target) is shown as it is.
 * Everything else is hidden.
 *
 * Why not fold ".." lexically: with s/u -> .. and s/w -> u/../.., folding
 * says s/w stays inside, but the kernel resolves u first (to the root) and
 * the second ".." then climbs out of the mountpoint. With the rule above every
 * "../" is taken from a real directory of the view, whose depth is known, and
 * "rest" only descends through names the view itself classifies.
 */
#include <errno.h>
#include <string.h>

#include "policy.h"
#include "symlink.h"
#include "sysdirs.h"

static size_t path_depth(const char *dir)
{
	size_t d = 0;

	if (!dir[0])
		return 0;
	for (d = 1; *dir; dir++)
		if (*dir == '/')
			d++;
	return d;
}

/* Truncate the view path @buf of @len bytes by @k components. */
static size_t climb(char *buf, size_t len, size_t k)
{
	while (k-- > 0 && len > 0) {
		while (len > 0 && buf[len - 1] != '/')
			len--;
		if (len > 0)
			len--; /* the slash */
	}
	buf[len] = '\0';
	return len;
}

static bool denied(const struct jf_symlink_ctx *ctx, const char *path, size_t len)
{
	struct jf_verdict v;

	jf_classify(ctx->policy, path, len, false, &v);
	if (v.zone == JF_DENIED)
		return true;
	jf_classify(ctx->policy, path, len, true, &v);
	if (v.zone == JF_DENIED)
		return true;
	/* The mountpoint inside SOURCE, and everything below it, is not part
	 * of the view. */
	if (ctx->mnt_rel) {
		size_t m = strlen(ctx->mnt_rel);

		if (len >= m && memcmp(path, ctx->mnt_rel, m) == 0 && (len == m || path[m] == '/'))
			return true;
	}
	return false;
}

/* Check a relative target from view dir @dir; 0 or -ENOENT. */
static int check_relative(const struct jf_symlink_ctx *ctx, const char *dir, const char *target)
{
	char res[JF_PATH_MAX + 1];
	size_t up = 0, len;
	bool in_rest = false, beyond = false;
	const char *p = target;

	len = strlen(dir);
	if (len >= sizeof(res))
		return -ENOENT;
	memcpy(res, dir, len + 1);
	while (*p) {
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);

		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* empty or "." component: no movement */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (in_rest)
				return -ENOENT;
			up++;
		} else {
			if (!in_rest) {
				if (up > path_depth(dir))
					return -ENOENT;
				len = climb(res, len, up);
				in_rest = true;
			}
			if (jf_check_name(p, n) != JF_REFUSE_NONE)
				return -ENOENT;
			if (beyond || len + n + 2 > sizeof(res)) {
				/* Deeper than any view path: the kernel's
				 * walk ends there with ENAMETOOLONG, so what
				 * is reached is at most the prefix in @res,
				 * checked below. */
				beyond = true;
				p = *e ? e + 1 : e;
				continue;
			}
			if (len)
				res[len++] = '/';
			memcpy(res + len, p, n);
			len += n;
			res[len] = '\0';
		}
		p = *e ? e + 1 : e;
	}
	if (!in_rest) {
		if (up > path_depth(dir))
			return -ENOENT;
		len = climb(res, len, up);
	}
	return denied(ctx, res, len) ? -ENOENT : 0;
}

/* Rewrite absolute @target (inside SOURCE) relative to view dir @dir. */
static int rewrite_absolute(const struct jf_symlink_ctx *ctx, const char *dir, const char *target,
			    char *out, size_t size)
{
	struct jf_canon c;
	const char *d = dir, *t;
	size_t o = 0, up, n;

	if (jf_canonicalize(ctx->source_abs, NULL, target, strlen(target), &c) < 0)
		return -ENOENT;
	t = c.path;
	/* Skip the components dir and target have in common. */
	while (*d && *t) {
		size_t dn = strcspn(d, "/"), tn = strcspn(t, "/");

		if (dn != tn || memcmp(d, t, dn) != 0)
			break;
		d += dn + (d[dn] == '/');
		t += tn + (t[tn] == '/');
	}
	up = path_depth(d);
	for (size_t k = 0; k < up; k++) {
		if (o + 4 >= size)
			return -ENOENT;
		memcpy(out + o, "../", 3);
		o += 3;
	}
	n = strlen(t);
	if (o + n + 2 >= size)
		return -ENOENT;
	memcpy(out + o, t, n);
	o += n;
	if (o == 0)
		out[o++] = '.';
	else if (out[o - 1] == '/')
		o--;
	out[o] = '\0';
	return 0;
}

/* An absolute target outside SOURCE below a system directory (jailrun binds
 * them read-only at the same path) that leads to a system file on the host
 * too: shown as it is, so a virtual environment's bin/python3 ->
 * /usr/bin/python3 works in the view. */
static bool system_target(const struct jf_symlink_ctx *ctx, const char *target, char *out,
			  size_t size)
{
	size_t n = strlen(target);

	if (n >= size || !jf_is_system_path(target) || !ctx->host_check ||
	    ctx->host_check(ctx->host_root_fd, target) < 0)
		return false;
	memcpy(out, target, n + 1);
	return true;
}

/*
 * The standard device nodes, by their exact names, so that autoconf's probe
 * (ln -s /dev/null conftest.sym) and its like work. Whoever follows such a
 * link, in a jail or on the host, reaches what it reaches by the name
 * itself: a device that reads nothing or zeroes or random bytes, its own
 * terminal, or its own open fds (/dev/stdin and /dev/fd/N are the
 * follower's fds, nothing the view holds). Nothing below any of them: a
 * component after /dev/fd/N would descend into whatever directory the
 * follower's fd N is, and any other device (/dev/sda, /dev/mem) or name
 * under /dev (/dev/shm) is a different thing entirely.
 */
static bool device_target(const char *target, char *out, size_t size)
{
	static const char *const nodes[] = {"/dev/null",   "/dev/zero",	  "/dev/urandom",
					    "/dev/random", "/dev/tty",	  "/dev/stdin",
					    "/dev/stdout", "/dev/stderr", NULL};
	const char *fd = "/dev/fd/";
	size_t n = strlen(fd);

	bool known = false;

	for (const char *const *d = nodes; *d; d++)
		known = known || strcmp(target, *d) == 0;
	if (!known && strncmp(target, fd, n) == 0 && target[n])
		known = strspn(target + n, "0123456789") == strlen(target + n);
	if (!known || strlen(target) >= size)
		return false;
	memcpy(out, target, strlen(target) + 1);
	return true;
}

int jf_symlink_view(const struct jf_symlink_ctx *ctx, const char *dir, const char *target,
		    char *out, size_t size)
{
	int r;

	if (!target[0])
		return -ENOENT;
	if (target[0] == '/') {
		r = rewrite_absolute(ctx, dir, target, out, size);
		if (r < 0 && system_target(ctx, target, out, size))
			return 0;
		if (r < 0 && device_target(target, out, size))
			return 0;
		if (r < 0)
			return r;
	} else {
		size_t n = strlen(target);

		if (n >= size)
			return -ENOENT;
		memcpy(out, target, n + 1);
	}
	return check_relative(ctx, dir, out);
}

int jf_symlink_check_new(const struct jf_symlink_ctx *ctx, const char *dir, const char *target)
{
	char out[JF_PATH_MAX + 1];

	return jf_symlink_view(ctx, dir, target, out, sizeof(out)) < 0 ? -EACCES : 0;
}
