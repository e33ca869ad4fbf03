/* SPDX-License-Identifier: MIT */
/*
 * bench/classify: how fast jf_classify is on a real tree.
 *
 *   classify [--policy FILE] [--rounds N] DIR
 *
 * Walks DIR with nftw(FTW_PHYS) (symlinks are not followed), keeps every
 * entry's view-relative path, then times several rounds of jf_classify over
 * all of them on one core (CPU time of this thread) with the default policy
 * (profiles secrets + project) unless --policy is given. Also times
 * jf_canonicalize + jf_classify, and a baseline that only hashes each path,
 * so the ratio says how far classification is from touching the bytes once.
 *
 * Target (issue 2): >= 1,000,000 paths/s on the Linux source tree, e.g.
 *   build/bench/classify /var/tmp/jf-linux/linux-source-6.1
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy.h"

struct entry {
	size_t off;
	uint16_t len;
	bool is_dir;
};

static char *arena;
static size_t arena_len, arena_cap;
static struct entry *entries;
static size_t nentries, entries_cap;
static size_t root_len;

static int collect(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *rel = path + root_len;
	size_t len;

	(void)st;
	(void)ftw;
	while (*rel == '/')
		rel++;
	len = strlen(rel);
	if (len == 0 || len > JF_PATH_MAX)
		return 0;
	if (arena_len + len + 1 > arena_cap) {
		arena_cap = arena_cap ? 2 * arena_cap : 1 << 20;
		while (arena_len + len + 1 > arena_cap)
			arena_cap *= 2;
		arena = realloc(arena, arena_cap);
	}
	if (nentries == entries_cap) {
		entries_cap = entries_cap ? 2 * entries_cap : 4096;
		entries = realloc(entries, entries_cap * sizeof(*entries));
	}
	if (!arena || !entries) {
		fprintf(stderr, "classify: out of memory\n");
		exit(1);
	}
	memcpy(arena + arena_len, rel, len + 1);
	entries[nentries++] = (struct entry){arena_len, len, type == FTW_D || type == FTW_DP};
	arena_len += len + 1;
	return 0;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

enum mode { BASELINE, CLASSIFY, CANON_CLASSIFY };

/* One round; returns CPU seconds. @sink keeps the work from being elided. */
static double round_once(const struct jf_policy *pol, enum mode m, unsigned long *sink)
{
	static struct jf_canon canon;
	double t0 = cpu_seconds();

	for (size_t i = 0; i < nentries; i++) {
		const char *p = arena + entries[i].off;
		struct jf_verdict v;
		uint32_t h = 2166136261u;

		switch (m) {
		case BASELINE:
			for (size_t j = 0; j < entries[i].len; j++)
				h = (h ^ (unsigned char)p[j]) * 16777619u;
			*sink += h & 1;
			break;
		case CLASSIFY:
			jf_classify(pol, p, entries[i].len, entries[i].is_dir, &v);
			*sink += v.zone;
			break;
		case CANON_CLASSIFY:
			if (jf_canonicalize("/", NULL, p, entries[i].len, &canon) == 0) {
				jf_classify(pol, canon.path, canon.len, entries[i].is_dir, &v);
				*sink += v.zone;
			}
			break;
		}
	}
	return cpu_seconds() - t0;
}

static double best_rate(const struct jf_policy *pol, enum mode m, int rounds, unsigned long *sink)
{
	double best = 0;

	for (int r = 0; r < rounds; r++) {
		double t = round_once(pol, m, sink);
		double rate = t > 0 ? nentries / t : 0;

		if (rate > best)
			best = rate;
	}
	return best;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"policy", required_argument, NULL, 'p'},
					     {"rounds", required_argument, NULL, 'n'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *policy_file = NULL;
	struct jf_policy *pol = NULL;
	unsigned long sink = 0, counts[3] = {0};
	int rounds = 10, c;
	double base, cls, canon;
	char err[512];

	while ((c = getopt_long(argc, argv, "p:n:h", opts, NULL)) != -1) {
		if (c == 'p') {
			policy_file = optarg;
		} else if (c == 'n') {
			rounds = atoi(optarg);
		} else {
			fprintf(c == 'h' ? stdout : stderr,
				"Usage: %s [--policy FILE] [--rounds N] DIR\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind + 1 != argc || rounds < 1) {
		fprintf(stderr, "Usage: %s [--policy FILE] [--rounds N] DIR\n", argv[0]);
		return 2;
	}
	if (policy_file ? jf_policy_load(policy_file, &pol, err, sizeof(err)) < 0
			: jf_policy_default(&pol) < 0) {
		fprintf(stderr, "classify: %s\n", policy_file ? err : "built-in policy failed");
		return 2;
	}
	root_len = strlen(argv[optind]);
	if (nftw(argv[optind], collect, 64, FTW_PHYS) != 0) {
		fprintf(stderr, "classify: walking %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < nentries; i++) {
		struct jf_verdict v;

		jf_classify(pol, arena + entries[i].off, entries[i].len, entries[i].is_dir, &v);
		counts[v.zone]++;
	}
	base = best_rate(pol, BASELINE, rounds, &sink);
	cls = best_rate(pol, CLASSIFY, rounds, &sink);
	canon = best_rate(pol, CANON_CLASSIFY, rounds, &sink);
	printf("tree: %s\npaths: %zu (SAFE %lu, RESTRICTED %lu, DENIED %lu), policy: %s, "
	       "best of %d rounds, one core (thread CPU time)\n",
	       argv[optind], nentries, counts[0], counts[1], counts[2],
	       policy_file ? policy_file : "built-in default (secrets + project)", rounds);
	printf("%-24s%12.0f paths/s %8.1f ns/path\n", "classify:", cls, 1e9 / cls);
	printf("%-24s%12.0f paths/s %8.1f ns/path\n", "canonicalize+classify:", canon, 1e9 / canon);
	printf("%-24s%12.0f paths/s %8.1f ns/path  (classify/baseline %.3f)\n",
	       "baseline (hash bytes):", base, 1e9 / base, cls / base);
	jf_policy_free(pol);
	free(arena);
	free(entries);
	return sink == 42 ? 3 : 0;
}
