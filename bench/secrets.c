/* SPDX-License-Identifier: MIT */
/*
 * bench/secrets: the secret detectors over a real tree, for false positives
 * and speed.
 *
 *   secrets DIR...
 *
 * Walks each DIR with nftw(FTW_PHYS), reads the first JF_SECRETS_SCAN_MAX
 * bytes of every regular file and scans them with every detector. Prints
 * one line per file found to hold a secret (path, detector, fingerprint),
 * then the files and bytes scanned, the time spent reading them and the CPU
 * time of the scans alone, in MB/s. Exit status 0 when nothing was found,
 * 3 when something was, 1 on an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "secrets.h"

static char *buf;
static unsigned long long files, bytes, hits;
static double read_s, scan_s;

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct jf_secret_hit hit;
	double t0, t1;
	ssize_t n;
	int fd, r;

	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	t0 = now(CLOCK_MONOTONIC);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	n = read(fd, buf, JF_SECRETS_SCAN_MAX);
	close(fd);
	if (n < 0)
		return 0;
	t1 = now(CLOCK_THREAD_CPUTIME_ID);
	read_s += now(CLOCK_MONOTONIC) - t0;
	r = jf_secrets_scan(jf_secrets_default(), buf, (size_t)n, &hit);
	scan_s += now(CLOCK_THREAD_CPUTIME_ID) - t1;
	if (r < 0) {
		fprintf(stderr, "secrets: %s: %s\n", path, strerror(-r));
		return 1;
	}
	if (r == 1) {
		printf("%s\t%s\t%s\n", path, jf_secret_det_name(hit.det), hit.fingerprint);
		hits++;
	}
	files++;
	bytes += (unsigned long long)n;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: secrets DIR...\n");
		return 1;
	}
	buf = malloc(JF_SECRETS_SCAN_MAX);
	if (!buf || !jf_secrets_default())
		return 1;
	for (int i = 1; i < argc; i++)
		if (nftw(argv[i], visit, 64, FTW_PHYS) != 0)
			return 1;
	printf("engine %s: %llu files, %.1f MB (first %u KiB of each), %llu with a secret\n",
	       jf_secrets_engine(), files, (double)bytes / 1e6, JF_SECRETS_SCAN_MAX >> 10, hits);
	printf("read %.2f s (%.0f MB/s), scan %.2f s CPU (%.0f MB/s)\n", read_s,
	       (double)bytes / 1e6 / read_s, scan_s, (double)bytes / 1e6 / scan_s);
	return hits ? 3 : 0;
}
