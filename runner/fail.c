/* SPDX-License-Identifier: MIT */
/* jailrun's own messages and failures. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cleanup.h"
#include "fail.h"
#include "result.h"
#include "text.h"

bool jr_fail_json;

/* "jailrun: MESSAGE" on stderr. Messages quote paths, names and reasons
 * taken from the command line, the request and the policy: the whole text
 * goes through jf_escape, so none can drive the reader's terminal. */
_printf_(1, 2) void say(const char *fmt, ...)
{
	char buf[8192];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	fputs("jailrun: ", stderr);
	jf_fput_escaped(stderr, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	fputc('\n', stderr);
}

/* Report a failure (stderr, and the JSON result under --json) and exit. */
_printf_(2, 0) static _Noreturn void vfail(int status, const char *fmt, va_list ap)
{
	char msg[8192];
	struct jr_report rep = {.error = msg, .error_status = status};

	vsnprintf(msg, sizeof(msg), fmt, ap);
	say("%s", msg);
	if (status == JR_EXIT_USAGE)
		fputs("Try 'jailrun --help'.\n", stderr);
	if (jr_fail_json)
		jr_result_print(&rep);
	exit(status);
}

/* jailrun itself failed: exit 125. */
_printf_(1, 2) _Noreturn void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(JR_EXIT_ERROR, fmt, ap);
}

/* The command line or the request is wrong: exit 2. */
_printf_(1, 2) _Noreturn void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(JR_EXIT_USAGE, fmt, ap);
}
