/* SPDX-License-Identifier: MIT */
/*
 * The default policy location: the project's file, the user's, the built-in
 * one. A policy the jail can edit is no policy: the project's file is
 * RESTRICTED in every view (classify.c), the user's is not used from inside
 * SOURCE, and either is used only when nobody but its owner, the user
 * running jailfs, can change it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "policy.h"

/* 0 if @path cannot be looked at (absent, or in a directory we may not
 * search: such a file cannot be ours to read either), 1 if it may be used,
 * -EPERM with a message otherwise. */
static int usable(const char *path, char *err, size_t errsize)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISREG(st.st_mode))
		snprintf(err, errsize,
			 "%s: not a regular file (a symlink?): not used as the policy; "
			 "pass --policy",
			 path);
	else if (st.st_uid != geteuid())
		snprintf(err, errsize,
			 "%s: owned by uid %ld, not by you: not used as the policy; "
			 "pass --policy, or chown it",
			 path, (long)st.st_uid);
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		snprintf(err, errsize,
			 "%s: writable by others: not used as the policy; "
			 "chmod go-w it",
			 path);
	else
		return 1;
	return -EPERM;
}

/* Is @path (existing) inside directory @source? */
static bool inside(const char *path, const char *source)
{
	_cleanup_free_ char *p = realpath(path, NULL), *s = realpath(source, NULL);
	size_t n = s ? strlen(s) : 0;

	return p && s && strncmp(p, s, n) == 0 && (p[n] == '/' || p[n] == '\0' || n == 1);
}

int jf_policy_locate(const char *source, char **path, const char **origin, char *err,
		     size_t errsize)
{
	const char *cfg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char *p = NULL;
	int r;

	*path = NULL;
	*origin = "built-in";
	if (asprintf(&p, "%s/%s", source, JF_PROJECT_POLICY) < 0)
		return -ENOMEM;
	r = usable(p, err, errsize);
	if (r != 0) {
		if (r > 0) {
			*path = p;
			*origin = "project";
			return 0;
		}
		free(p);
		return r;
	}
	free(p);
	p = NULL;
	if (cfg && cfg[0] == '/')
		r = asprintf(&p, "%s/jailfs/policy.ini", cfg);
	else if (home && home[0] == '/')
		r = asprintf(&p, "%s/.config/jailfs/policy.ini", home);
	else
		return 0;
	if (r < 0)
		return -ENOMEM;
	r = usable(p, err, errsize);
	if (r > 0 && inside(p, source)) {
		snprintf(err, errsize,
			 "%s: inside SOURCE %s, where the jail could change it: "
			 "not used as the policy; pass --policy",
			 p, source);
		r = -EPERM;
	}
	if (r > 0) {
		*path = p;
		*origin = "user";
		return 0;
	}
	free(p);
	return r;
}
