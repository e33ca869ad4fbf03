/* SPDX-License-Identifier: MIT */
/*
 * negstat: COUNT stat(2) calls on names that do not exist, spread over the
 * directories listed in DIRFILE: the agent's "ls .env" probe, repeated the
 * way a harness repeats it. Half the names look like secrets (the policy's
 * DENIED patterns), half are ordinary absent names that reach the source.
 *
 * Usage: negstat COUNT DIRFILE
 *   DIRFILE holds one directory a line, relative to the current directory.
 *   Call i stats DIR[i % ndirs] "/" NAME[(i / ndirs) % nnames], so every
 *   path is looked up several times (negative-entry caching pays) and the
 *   first lookup of each goes to the filesystem.
 * Prints "COUNT stat calls, N ENOENT" and exits 0 when every call failed
 * with ENOENT; exits 1 naming the path when one did not (a name exists in
 * the tree or the view answered another errno), 2 on bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DIRS 4096

static const char *const names[] = {
	".env",		 ".env.local",	     ".npmrc",	     "id_rsa",
	".netrc",	 "credentials.json", "secrets.yaml", ".aws",
	"Makefile.orig", "README.bak",	     "config.local", "jf-absent-1",
	"jf-absent-2",	 "package.json",     "Cargo.toml",   "pyproject.toml",
};

static char *dirs[MAX_DIRS];

/* Read DIRFILE into dirs[]; returns the count, 0 on error (message printed). */
static size_t read_dirs(const char *file)
{
	FILE *f = fopen(file, "re");
	char line[4096];
	size_t n = 0;

	if (!f) {
		fprintf(stderr, "negstat: %s: %s\n", file, strerror(errno));
		return 0;
	}
	while (n < MAX_DIRS && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '\0')
			continue;
		dirs[n] = strdup(line);
		if (!dirs[n])
			break;
		n++;
	}
	fclose(f);
	if (n == 0)
		fprintf(stderr, "negstat: %s: no directories\n", file);
	return n;
}

int main(int argc, char **argv)
{
	const size_t nnames = sizeof(names) / sizeof(names[0]);
	size_t ndirs, enoent = 0;
	long count;
	char path[8192];
	struct stat st;

	if (argc != 3 || (count = strtol(argv[1], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: negstat COUNT DIRFILE\n");
		return 2;
	}
	ndirs = read_dirs(argv[2]);
	if (ndirs == 0)
		return 2;
	for (long i = 0; i < count; i++) {
		const char *dir = dirs[(size_t)i % ndirs];
		const char *name = names[((size_t)i / ndirs) % nnames];

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (stat(path, &st) == 0) {
			fprintf(stderr, "negstat: %s exists; pick a tree without it\n", path);
			return 1;
		}
		if (errno != ENOENT) {
			fprintf(stderr, "negstat: stat %s: %s (expected ENOENT)\n", path,
				strerror(errno));
			return 1;
		}
		enoent++;
	}
	printf("%ld stat calls, %zu ENOENT\n", count, enoent);
	return 0;
}
