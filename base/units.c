/* SPDX-License-Identifier: MIT */
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Leading decimal digits of @s (at most @len), overflow-checked. Returns the
 * number of digits read (0: none), or -ERANGE. */
static int digits(const char *s, size_t len, uint64_t *ret)
{
	uint64_t n = 0;
	size_t i = 0;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (n > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -ERANGE;
		n = n * 10 + (uint64_t)(s[i] - '0');
	}
	*ret = n;
	return (int)i;
}

int jf_parse_count(const char *s, size_t len, uint64_t *ret)
{
	uint64_t n;
	int i = digits(s, len, &n);

	if (i < 0)
		return i;
	if (i == 0 || (size_t)i != len)
		return -EINVAL;
	*ret = n;
	return 0;
}

int jf_parse_size(const char *s, size_t len, bool allow_unlimited, uint64_t *ret_bytes)
{
	static const char suffixes[] = "KMGT";
	unsigned shift = 0;
	uint64_t n;
	int i;

	if (allow_unlimited && len == 9 && memcmp(s, "unlimited", 9) == 0) {
		*ret_bytes = UINT64_MAX;
		return 0;
	}
	i = digits(s, len, &n);
	if (i <= 0)
		return i < 0 ? i : -EINVAL;
	if ((size_t)i < len) {
		const char *suf = s[i] ? strchr(suffixes, s[i] & ~0x20) : NULL;

		if (!suf || (size_t)i + 1 != len)
			return -EINVAL;
		shift = 10 * (unsigned)(suf - suffixes + 1);
	}
	if (shift && n > (UINT64_MAX >> shift))
		return -ERANGE;
	*ret_bytes = n << shift;
	return 0;
}

int jf_parse_duration_ms(const char *s, size_t len, uint64_t *ret_ms)
{
	uint64_t whole, frac = 0;
	int i = digits(s, len, &whole), f = 0;

	if (i <= 0)
		return i < 0 ? i : -EINVAL;
	if ((size_t)i < len) {
		if (s[i] != '.')
			return -EINVAL;
		f = digits(s + i + 1, len - (size_t)i - 1, &frac);
		if (f <= 0 || f > 3 || (size_t)(i + 1 + f) != len)
			return f < 0 ? f : -EINVAL;
		for (int k = f; k < 3; k++)
			frac *= 10;
	}
	if (whole > (UINT64_MAX - frac) / 1000)
		return -ERANGE;
	*ret_ms = whole * 1000 + frac;
	return 0;
}

char *jf_format_duration(uint64_t ms, char *buf, size_t size)
{
	uint64_t frac = ms % 1000;

	if (!frac)
		snprintf(buf, size, "%" PRIu64, ms / 1000);
	else if (frac % 100 == 0)
		snprintf(buf, size, "%" PRIu64 ".%" PRIu64, ms / 1000, frac / 100);
	else if (frac % 10 == 0)
		snprintf(buf, size, "%" PRIu64 ".%02" PRIu64, ms / 1000, frac / 10);
	else
		snprintf(buf, size, "%" PRIu64 ".%03" PRIu64, ms / 1000, frac);
	return buf;
}
