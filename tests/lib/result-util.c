/* SPDX-License-Identifier: MIT */
/* Helpers for the tests of jailrun's result (result-util.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "result-util.h"

json_t *ru_print_report(const struct jr_report *r)
{
	char path[] = "/tmp/jf-result-XXXXXX", text[8192];
	int fd = mkstemp(path), saved = dup(1);
	ssize_t len;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stdout);
	assert_int_equal(dup2(fd, 1), 1);
	assert_int_equal(jr_result_print(r), 0);
	assert_int_equal(dup2(saved, 1), 1);
	close(saved);
	len = pread(fd, text, sizeof(text) - 1, 0);
	assert_true(len > 0);
	text[len] = '\0';
	close(fd);
	unlink(path);
	return json_loads(text, JSON_ALLOW_NUL, NULL); /* jansson refuses \u0000 without it */
}
