/* SPDX-License-Identifier: MIT */
/*
 * The line diff of `jailfs diff`: Myers's greedy O(ND) algorithm with the
 * common start and end of the two files set aside first, and the path
 * found again from the saved diagonals (memory O(D^2), bounded by
 * JF_MYERS_MAX_D).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "layer-internal.h"

int jf_lines(const char *buf, size_t len, struct jf_line **ret, size_t *ret_n)
{
	size_t n = 0, cap = 0;
	struct jf_line *v = NULL;

	for (size_t i = 0; i < len;) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (buf + i)) + 1 : len - i;
		uint64_t h = 1469598103934665603ull; /* FNV-1a */

		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			struct jf_line *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		for (size_t k = 0; k < l; k++)
			h = (h ^ (unsigned char)buf[i + k]) * 1099511628211ull;
		v[n++] = (struct jf_line){buf + i, l, h};
		i += l;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static bool eq(const struct jf_line *x, const struct jf_line *y)
{
	return x->h == y->h && x->len == y->len && !memcmp(x->p, y->p, x->len);
}

/* The script from the diagonals saved before each step (@trace[d][d + 1 +
 * k] is V[k] before step d) of a search that ended at step @found, into
 * @ops; returns its length. */
static size_t backtrack(long *const *trace, long found, long n, long m, char *ops)
{
	long x = n, y = m;
	size_t k_out = 0;

	for (long d = found; d >= 0; d--) {
		long *t = trace[d] + d + 1;
		long k = x - y, pk, px, py;

		if (d == 0) {
			while (x > 0 && y > 0)
				ops[k_out++] = 'e', x--, y--;
			break;
		}
		pk = (k == -d || (k != d && t[k - 1] < t[k + 1])) ? k + 1 : k - 1;
		px = t[pk];
		py = px - pk;
		while (x > px && y > py)
			ops[k_out++] = 'e', x--, y--;
		ops[k_out++] = x == px ? 'i' : 'd';
		x = px, y = py;
	}
	for (size_t i = 0; i < k_out / 2; i++) {
		char c = ops[i];
		ops[i] = ops[k_out - 1 - i];
		ops[k_out - 1 - i] = c;
	}
	return k_out;
}

/* The middle: a[0..n) against b[0..m), no common start or end. Writes the
 * script into @ops (room for n + m) and its length into *@len. */
static int middle(const struct jf_line *a, long n, const struct jf_line *b, long m, char *ops,
		  size_t *len)
{
	long max = n + m, dmax = max < JF_MYERS_MAX_D ? max : JF_MYERS_MAX_D, d, x = 0, y = 0;
	_cleanup_free_ long *v = calloc((size_t)(2 * max + 3), sizeof(long));
	_cleanup_free_ long **trace = calloc((size_t)dmax + 1, sizeof(long *));
	long off = max + 1, found = -1;
	int r = 0;

	if (!v || !trace)
		return -ENOMEM;
	if (n == 0 || m == 0) /* a file added, deleted or cut: no search */
		dmax = -1;
	for (d = 0; d <= dmax && found < 0; d++) {
		trace[d] = malloc((size_t)(2 * d + 3) * sizeof(long));
		if (!trace[d]) {
			r = -ENOMEM;
			goto out;
		}
		memcpy(trace[d], v + off - d - 1, (size_t)(2 * d + 3) * sizeof(long));
		for (long k = -d; k <= d; k += 2) {
			x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
				    ? v[off + k + 1]
				    : v[off + k - 1] + 1;
			y = x - k;
			while (x < n && y < m && eq(&a[x], &b[y]))
				x++, y++;
			v[off + k] = x;
			if (x >= n && y >= m) {
				found = d;
				break;
			}
		}
	}
	if (found < 0) { /* too many differences: delete all, insert all */
		memset(ops, 'd', (size_t)n);
		memset(ops + n, 'i', (size_t)m);
		*len = (size_t)(n + m);
		goto out;
	}
	*len = backtrack(trace, found, n, m, ops);
out:
	for (d = 0; d <= dmax; d++)
		free(trace[d]);
	return r;
}

int jf_myers(const struct jf_line *a, size_t na, const struct jf_line *b, size_t nb, char **ret_ops,
	     size_t *ret_n)
{
	size_t pre = 0, suf = 0, mid = 0;
	char *ops = malloc(na + nb + 1);
	int r;

	if (!ops)
		return -ENOMEM;
	while (pre < na && pre < nb && eq(&a[pre], &b[pre]))
		pre++;
	while (suf < na - pre && suf < nb - pre && eq(&a[na - 1 - suf], &b[nb - 1 - suf]))
		suf++;
	memset(ops, 'e', pre);
	r = middle(a + pre, (long)(na - pre - suf), b + pre, (long)(nb - pre - suf), ops + pre,
		   &mid);
	if (r < 0) {
		free(ops);
		return r;
	}
	memset(ops + pre + mid, 'e', suf);
	*ret_ops = ops;
	*ret_n = pre + mid + suf;
	return 0;
}
