/* SPDX-License-Identifier: MIT */
/*
 * deniedstat: is a DENIED name that exists slower to look up than one that
 * does not? COUNT rounds, each one stat(2) of PRESENT and one of ABSENT (the
 * order alternating), timed one by one with CLOCK_MONOTONIC. Run it in a
 * view mounted with an audit log (jailfs --audit FILE): hidden names are then
 * never cached by the kernel, so every call is a FUSE LOOKUP.
 *
 * Usage: deniedstat COUNT PRESENT ABSENT
 * Prints the 10th, 50th and 90th percentile of each, in microseconds, and
 * the differences. Exits 0, 1 when a stat did not fail with ENOENT (a name
 * is visible: not a DENIED name), 2 on bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One timed stat of @path: its duration in us, or -1 unless it was ENOENT. */
static double timed_stat(const char *path)
{
	struct stat st;
	double t = now_us();
	int r = stat(path, &st);
	double d = now_us() - t;

	return r < 0 && errno == ENOENT ? d : -1;
}

int main(int argc, char **argv)
{
	long count = argc == 4 ? strtol(argv[1], NULL, 10) : 0;
	double *t[2];

	if (count <= 0) {
		fprintf(stderr, "usage: deniedstat COUNT PRESENT ABSENT\n");
		return 2;
	}
	t[0] = malloc((size_t)count * sizeof(double));
	t[1] = malloc((size_t)count * sizeof(double));
	if (!t[0] || !t[1])
		return 2;
	for (long i = 0; i < count; i++) {
		for (int k = 0; k < 2; k++) {
			int which = (int)(i & 1) ^ k;

			t[which][i] = timed_stat(argv[2 + which]);
			if (t[which][i] < 0) {
				fprintf(stderr, "deniedstat: %s: not ENOENT\n", argv[2 + which]);
				return 1;
			}
		}
	}
	qsort(t[0], (size_t)count, sizeof(double), cmp);
	qsort(t[1], (size_t)count, sizeof(double), cmp);
	printf("%-8s %9s %9s %9s  (us, %ld calls each)\n", "", "p10", "p50", "p90", count);
	for (int k = 0; k < 2; k++)
		printf("%-8s %9.2f %9.2f %9.2f\n", k ? "absent" : "present", t[k][count / 10],
		       t[k][count / 2], t[k][count * 9 / 10]);
	printf("%-8s %9.2f %9.2f %9.2f\n", "diff", t[0][count / 10] - t[1][count / 10],
	       t[0][count / 2] - t[1][count / 2], t[0][count * 9 / 10] - t[1][count * 9 / 10]);
	return 0;
}
