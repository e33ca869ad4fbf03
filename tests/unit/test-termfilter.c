/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the terminal output filter (runner/termfilter.c): a table of
 * what the command writes and what may reach the caller's terminal, each
 * row fed whole, byte by byte and in two halves at every cut (a sequence
 * split across reads must be decided the same way).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "termfilter.h"

struct row {
	const char *what, *in, *out;
};

static const struct row rows[] = {
	{"plain text", "hello, world\n", "hello, world\n"},
	{"tab cr bs bel", "a\tb\rc\bd\a\n", "a\tb\rc\bd\a\n"},
	{"UTF-8 text", "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0.",
	 "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0."},
	{"SGR colours", "\033[1;31mred\033[0m \033[38;5;208mo\033[m",
	 "\033[1;31mred\033[0m \033[38;5;208mo\033[m"},
	{"SGR truecolour", "\033[38;2;8;8;8mx\033[48:2::1:2:3my",
	 "\033[38;2;8;8;8mx\033[48:2::1:2:3my"},
	{"SGR colour 8 is not conceal", "\033[38;5;8mgrey", "\033[38;5;8mgrey"},
	{"SGR conceal", "a\033[8mhidden\033[0m", "ahidden\033[0m"},
	{"SGR conceal among others", "\033[1;8;31mx", "x"},
	{"SGR conceal after a colour", "\033[38;5;1;8mx", "x"},
	{"cursor movement and erase", "\033[2K\r\033[1A\033[10;20H\033[3G\033[J\033[5X.",
	 "\033[2K\r\033[1A\033[10;20H\033[3G\033[J\033[5X."},
	{"OSC 52 clipboard (BEL)", "a\033]52;c;ZWNobyBwd25lZAo=\007b", "ab"},
	{"OSC 52 clipboard (ST)", "a\033]52;c;ZWNobw==\033\\b", "ab"},
	{"OSC 0 title", "\033]0;title\007x", "x"},
	{"OSC 8 link", "\033]8;;http://x/\033\\text\033]8;;\033\\", "text"},
	{"DCS", "a\033P+q544e\033\\b", "ab"},
	{"APC PM SOS", "\033_apc\033\\\033^pm\033\\\033Xsos\033\\.", "."},
	{"window resize CSI t", "\033[8;100;300tx", "x"},
	{"report requests", "\033[6n\033[c\033[>c\033[21tx", "x"},
	{"private modes", "\033[?1049h\033[?25l\033[?2004hx", "x"},
	{"scroll region, insert line", "\033[1;5r\033[2L\033[4hx", "x"},
	{"CSI with intermediates", "\033[2 qx\033[0\"px", "xx"},
	{"xterm modifyOtherKeys (SGR with >)", "\033[>4;2mx", "x"},
	{"RIS and charsets", "\033c\033(0q\033(B\033)0\016\017x", "qx"},
	{"DECALN, keypad, save cursor", "\033#8\033=\0337\0338x", "x"},
	{"ENQ and other C0", "a\005\001b\x1c", "ab"},
	{"ESC ESC: the second one starts the sequence", "a\033\033bc", "ac"},
	{"8-bit CSI",
	 "\x9b"
	 "8;1;1tx\x9b"
	 "31mr",
	 "x\033[31mr"},
	{"8-bit OSC ST",
	 "\x9d"
	 "52;c;eA==\x9cok",
	 "ok"},
	{"UTF-8 C1 CSI",
	 "\xc2\x9b"
	 "8;1;1tx",
	 "x"},
	{"UTF-8 C1 OSC",
	 "\xc2\x9d"
	 "52;c;eA==\007ok",
	 "ok"},
	{"UTF-8 C1 NEL",
	 "a\xc2\x85"
	 "b",
	 "ab"},
	{"stray 8-bit C1",
	 "a\x84\x8d"
	 "b",
	 "ab"},
	{"C0 inside CSI ends it", "\033[1\n2Ax", "\n2Ax"},
	{"CAN aborts CSI", "\033[31\030mx", "mx"},
	{"ESC in OSC starts a new sequence", "\033]0;t\033[31mx", "\033[31mx"},
	{"unterminated OSC swallows the rest", "a\033]52;c;AAAA", "a"},
	{"unterminated CSI is held, not shown", "a\033[31", "a"},
	{"overlong CSI dropped",
	 "\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1mx", "x"},
	{"DEL kept", "a\177b", "a\177b"},
};

/* Feed @r->in to a fresh filter in pieces of at most @chunk bytes (0: one
 * cut at @cut) and compare. */
static void run_row(const struct row *r, size_t chunk, size_t cut)
{
	struct jr_termfilter f = {0};
	char out[4096];
	size_t n = strlen(r->in), o = 0;

	if (!chunk) {
		o = jr_termfilter(&f, r->in, cut, out);
		o += jr_termfilter(&f, r->in + cut, n - cut, out + o);
	}
	for (size_t i = 0; chunk && i < n;) {
		size_t k = n - i < chunk ? n - i : chunk;

		o += jr_termfilter(&f, r->in + i, k, out + o);
		i += k;
	}
	if (o != strlen(r->out) || memcmp(out, r->out, o) != 0) {
		print_error("%s (chunk %zu cut %zu): got %zu bytes \"%.*s\"\n", r->what, chunk, cut,
			    o, (int)o, out);
		fail();
	}
}

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		run_row(&rows[i], 1 << 20, 0);
		run_row(&rows[i], 1, 0);
		for (size_t cut = 0; cut <= strlen(rows[i].in); cut++)
			run_row(&rows[i], 0, cut);
	}
}

/* Output never exceeds the input plus what was held from before. */
static void test_bound(void **state)
{
	struct jr_termfilter f = {0};
	char in[JR_TF_HOLD], out[2 * JR_TF_HOLD + 1];
	size_t o;

	(void)state;
	in[0] = '\033';
	in[1] = '[';
	memset(in + 2, '1', sizeof(in) - 2);
	assert_int_equal(jr_termfilter(&f, in, sizeof(in), out), 0);
	o = jr_termfilter(&f, "m", 1, out);
	assert_int_equal(o, JR_TF_HOLD + 1);
	assert_memory_equal(out, in, JR_TF_HOLD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
