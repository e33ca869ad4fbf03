/* SPDX-License-Identifier: MIT */
/* The one grammar of sizes, durations and counts (base/units.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "units.h"

static int size_of(const char *s, bool unlimited, uint64_t *v)
{
	return jf_parse_size(s, strlen(s), unlimited, v);
}

static void test_sizes(void **state)
{
	uint64_t v = 7;

	assert_int_equal(size_of("0", false, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(size_of("512", false, &v), 0);
	assert_int_equal(v, 512);
	assert_int_equal(size_of("4k", false, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(size_of("64M", false, &v), 0);
	assert_int_equal(v, 64ULL << 20);
	assert_int_equal(size_of("3G", false, &v), 0);
	assert_int_equal(v, 3ULL << 30);
	assert_int_equal(size_of("2t", false, &v), 0);
	assert_int_equal(v, 2ULL << 40);
	assert_int_equal(size_of("unlimited", true, &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_int_equal(size_of("unlimited", false, &v), -EINVAL);
	assert_int_equal(v, 7);
	/* not of the grammar */
	assert_int_equal(size_of("", false, &v), -EINVAL);
	assert_int_equal(size_of("-1", false, &v), -EINVAL);
	assert_int_equal(size_of("1.5G", false, &v), -EINVAL);
	assert_int_equal(size_of("1GB", false, &v), -EINVAL);
	assert_int_equal(size_of("1P", false, &v), -EINVAL);
	assert_int_equal(size_of(" 1", false, &v), -EINVAL);
	assert_int_equal(jf_parse_size("1\0K", 3, false, &v), -EINVAL);
	/* overflow is refused, never wrapped (a shifted 2^34 G wrapped to 0) */
	assert_int_equal(size_of("17179869184G", false, &v), -ERANGE);
	assert_int_equal(size_of("16777216T", false, &v), -ERANGE);
	assert_int_equal(size_of("18446744073709551616", false, &v), -ERANGE);
	assert_int_equal(size_of("18446744073709551615", false, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(size_of("16777215T", false, &v), 0);
	assert_true(v == 16777215ULL << 40);
}

static int ms_of(const char *s, uint64_t *v)
{
	return jf_parse_duration_ms(s, strlen(s), v);
}

static void test_durations(void **state)
{
	uint64_t v = 7;
	char buf[24];

	assert_int_equal(ms_of("300", &v), 0);
	assert_int_equal(v, 300000);
	assert_int_equal(ms_of("0.25", &v), 0);
	assert_int_equal(v, 250);
	assert_int_equal(ms_of("2.5", &v), 0);
	assert_int_equal(v, 2500);
	assert_int_equal(ms_of("0.001", &v), 0);
	assert_int_equal(v, 1);
	v = 7;
	assert_int_equal(ms_of("0.0001", &v), -EINVAL); /* no silent rounding */
	assert_int_equal(ms_of("1.", &v), -EINVAL);
	assert_int_equal(ms_of(".5", &v), -EINVAL);
	assert_int_equal(ms_of("1e3", &v), -EINVAL);
	assert_int_equal(ms_of("1s", &v), -EINVAL);
	assert_int_equal(ms_of("-1", &v), -EINVAL);
	assert_int_equal(ms_of("", &v), -EINVAL);
	assert_int_equal(v, 7);
	assert_int_equal(ms_of("18446744073709552", &v), -ERANGE);
	assert_int_equal(ms_of("18446744073709551.616", &v), -ERANGE);
	assert_int_equal(ms_of("18446744073709551.615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(ms_of("18446744073709550", &v), 0);
	assert_string_equal(jf_format_duration(300000, buf, sizeof(buf)), "300");
	assert_string_equal(jf_format_duration(2500, buf, sizeof(buf)), "2.5");
	assert_string_equal(jf_format_duration(250, buf, sizeof(buf)), "0.25");
	assert_string_equal(jf_format_duration(1, buf, sizeof(buf)), "0.001");
	/* formatted durations parse back to the same value */
	for (uint64_t ms = 0; ms < 5000; ms += 7) {
		assert_int_equal(ms_of(jf_format_duration(ms, buf, sizeof(buf)), &v), 0);
		assert_true(v == ms);
	}
}

static void test_counts(void **state)
{
	uint64_t v = 7;

	assert_int_equal(jf_parse_count("64", 2, &v), 0);
	assert_int_equal(v, 64);
	assert_int_equal(jf_parse_count("64K", 3, &v), -EINVAL);
	assert_int_equal(jf_parse_count("", 0, &v), -EINVAL);
	assert_int_equal(jf_parse_count("99999999999999999999", 20, &v), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
