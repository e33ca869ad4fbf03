/* SPDX-License-Identifier: MIT */
#include "sysdirs.h"

#include <string.h>

const char *const jf_system_dirs[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", NULL,
};

static bool canonical_rest(const char *p)
{
	/* @p is "/name/name..." after the directory. */
	while (*p == '/') {
		const char *e = strchrnul(p + 1, '/');
		size_t n = (size_t)(e - p - 1);

		if (n == 0 || (n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.'))
			return false;
		p = e;
	}
	return *p == '\0';
}

bool jf_is_system_path(const char *path)
{
	for (const char *const *d = jf_system_dirs; *d; d++) {
		size_t n = strlen(*d);

		if (strncmp(path, *d, n) == 0 && path[n] == '/' && path[n + 1] &&
		    canonical_rest(path + n))
			return true;
	}
	return false;
}

bool jf_is_system_dir(const char *path)
{
	for (const char *const *d = jf_system_dirs; *d; d++)
		if (strcmp(path, *d) == 0)
			return true;
	return false;
}
