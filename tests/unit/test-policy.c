/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the policy library (policy/): canonicalization, gitignore
 * matching, classification, policy files, built-in profiles.
 * Cases from the threat model and the seed write-ups
 * (shared/seeds/, shared/docs/threat-model.md).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy-internal.h"
#include "policy.h"
#include "text.h"

/* ---- helpers ---- */

static struct jf_policy *parse_ok(const char *text)
{
	struct jf_policy *p = NULL;
	char err[512] = "";
	int r = jf_policy_parse("t.ini", text, strlen(text), &p, err, sizeof(err));

	if (r != 0)
		fail_msg("parse failed: %d %s", r, err);
	assert_non_null(p);
	return p;
}

static void parse_err(const char *text, size_t len, const char *message)
{
	struct jf_policy *p = (struct jf_policy *)0x1;
	char err[512] = "";
	int r = jf_policy_parse("t.ini", text, len, &p, err, sizeof(err));

	assert_int_equal(r, -EINVAL);
	assert_null(p);
	assert_string_equal(err, message);
}

#define PARSE_ERR(text, message) parse_err(text, sizeof(text) - 1, message)

/* Classify @path and check zone and formatted rule ("t.ini:3", "profile:x"). */
static void expect_at(const struct jf_policy *p, const char *path, bool dir, enum jf_zone zone,
		      const char *rule, int line)
{
	struct jf_verdict v;
	char buf[256];

	jf_classify(p, path, strlen(path), dir, &v);
	jf_rule_format(v.rule, buf, sizeof(buf));
	if (v.zone != zone || strcmp(buf, rule) != 0)
		fail_msg("line %d: '%s'%s: got %s %s, want %s %s", line, path, dir ? " (dir)" : "",
			 jf_zone_name(v.zone), buf, jf_zone_name(zone), rule);
}

#define EXPECT(p, path, dir, zone, rule) expect_at(p, path, dir, zone, rule, __LINE__)
#define SAFE_(p, path, rule) EXPECT(p, path, false, JF_SAFE, rule)
#define RESTRICTED_(p, path, rule) EXPECT(p, path, false, JF_RESTRICTED, rule)
#define DENIED_(p, path, rule) EXPECT(p, path, false, JF_DENIED, rule)

static void canon_ok_at(const char *root, const char *base, const char *in, size_t len,
			const char *want, int line)
{
	struct jf_canon c;
	int r = jf_canonicalize(root, base, in, len, &c);

	if (r != 0 || strcmp(c.path, want) != 0 || c.len != strlen(want) ||
	    c.refusal != JF_REFUSE_NONE)
		fail_msg("line %d: canonicalize '%s': r=%d refusal=%s path='%s', want '%s'", line,
			 in, r, jf_refusal_reason(c.refusal), c.path, want);
}

static void canon_refused_at(const char *root, const char *base, const char *in, size_t len,
			     enum jf_refusal want, int line)
{
	struct jf_canon c;
	int r = jf_canonicalize(root, base, in, len, &c);

	if (r != -EINVAL || c.refusal != want)
		fail_msg("line %d: canonicalize '%.60s': r=%d refusal=%s, want %s", line, in, r,
			 jf_refusal_reason(c.refusal), jf_refusal_reason(want));
}

#define CANON_OK(root, in, want) canon_ok_at(root, NULL, in, strlen(in), want, __LINE__)
#define CANON_NO(root, in, why) canon_refused_at(root, NULL, in, strlen(in), why, __LINE__)

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* ---- canonicalization ---- */

/* A name spelled .jailfs.ini (the project's policy, jf_policy_locate) is
 * never SAFE, whatever the policy: RESTRICTED at any depth by rule
 * "policy-file", unless DENIED; other names ending so are not touched. */
static void test_policy_file_protected(void **state)
{
	struct jf_policy *p = parse_ok("[safe]\n/\n*.ini\n");
	struct jf_policy *d = parse_ok("[safe]\n/\n[denied]\n.jailfs.ini\n");
	struct jf_policy *b = NULL;
	struct jf_verdict v;

	RESTRICTED_(p, ".jailfs.ini", "policy-file");
	RESTRICTED_(p, "a/b/.jailfs.ini", "policy-file");
	EXPECT(p, "sub/.jailfs.ini", true, JF_RESTRICTED, "policy-file");
	SAFE_(p, "x.jailfs.ini", "t.ini:3");
	SAFE_(p, ".jailfs.ini.bak", "t.ini:2");
	DENIED_(d, ".jailfs.ini", "t.ini:4");
	assert_int_equal(jf_policy_default(&b), 0);
	RESTRICTED_(b, ".jailfs.ini", "policy-file");
	jf_classify_public(b, "k/.jailfs.ini", strlen("k/.jailfs.ini"), &v);
	assert_int_equal(v.zone, JF_RESTRICTED);
	jf_policy_free(p);
	jf_policy_free(d);
	jf_policy_free(b);
	(void)state;
}

static void test_canon_basic(void **state)
{
	(void)state;
	CANON_OK("/work/proj", "src/main.c", "src/main.c");
	CANON_OK("/work/proj", "a//b/./c/", "a/b/c");
	CANON_OK("/work/proj", "./", "");
	CANON_OK("/work/proj", ".", "");
	CANON_OK("/work/proj", "/work/proj", "");
	CANON_OK("/work/proj", "/work/proj/", "");
	CANON_OK("/work/proj/", "//work//proj//a/./b", "a/b");
	CANON_OK("/work/./proj", "/work/proj/x", "x");
	CANON_OK("/", "/etc/passwd", "etc/passwd");
	CANON_OK("/", "/", "");
	/* names that look odd but are legal */
	CANON_OK("/r", "...", "...");
	CANON_OK("/r", "a..b/..c/d..", "a..b/..c/d..");
	CANON_OK("/r", "100%/%41%2", "100%/%41%2");
	CANON_OK("/r", "a%25b", "a%25b");
	CANON_OK("/r", "caf\xc3\xa9/\xef\xbc\x8d", "caf\xc3\xa9/\xef\xbc\x8d"); /* U+FF0D is fine */
	CANON_OK("/r", ".env. ", ".env. ");
	/* relative to a base directory */
	canon_ok_at("/r", "src", "x/y", 3, "src/x/y", __LINE__);
	canon_ok_at("/r", "src", ".", 1, "src", __LINE__);
	canon_ok_at("/r", "", "x", 1, "x", __LINE__);
	canon_ok_at("/r", "src", "/r/abs", 6, "abs", __LINE__); /* absolute ignores base */
}

static void test_canon_root_componentwise(void **state)
{
	(void)state;
	/* CVE-2025-54794, CVE-2025-53110: prefix check on strings */
	CANON_NO("/work/proj", "/work/proj_x/secret", JF_REFUSE_OUTSIDE_ROOT);
	CANON_NO("/work/proj", "/work/proj_x", JF_REFUSE_OUTSIDE_ROOT);
	CANON_NO("/work/proj", "/work/pro", JF_REFUSE_OUTSIDE_ROOT);
	CANON_NO("/work/proj", "/work", JF_REFUSE_OUTSIDE_ROOT);
	CANON_NO("/work/proj", "/etc/passwd", JF_REFUSE_OUTSIDE_ROOT);
	CANON_NO("/work/proj", "/workproj/a", JF_REFUSE_OUTSIDE_ROOT);
	CANON_NO(NULL, "/work/proj/a", JF_REFUSE_OUTSIDE_ROOT);
	CANON_NO("relative", "/relative/a", JF_REFUSE_OUTSIDE_ROOT);
	CANON_OK("/work/proj", "/work/proj/x", "x");
}

static void test_canon_dotdot(void **state)
{
	(void)state;
	CANON_NO("/r", "../etc/passwd", JF_REFUSE_DOTDOT);
	CANON_NO("/r", "a/../../etc/passwd", JF_REFUSE_DOTDOT);
	CANON_NO("/r", "a/b/..", JF_REFUSE_DOTDOT);
	CANON_NO("/r", "..", JF_REFUSE_DOTDOT);
	CANON_NO("/r", "a/../b", JF_REFUSE_DOTDOT); /* even one that stays inside */
	CANON_NO("/r", "/r/../r/x", JF_REFUSE_DOTDOT);
	CANON_NO("/r", "/../r/x", JF_REFUSE_DOTDOT);
	CANON_NO("/r", "./..//x", JF_REFUSE_DOTDOT);
}

static void test_canon_encoded(void **state)
{
	static const char *const bad[] = {
		"%2e%2e/etc/passwd",
		"%2E%2E/x",
		"a%2fb",
		"a%2Fb",
		"a%5cb",
		"a%5Cb",
		"x/%2e",
		"%252e%252e/x",
		"%252E",
		"%252f",
		"%255c",
		"%25252e",
		"%2525252F",
		"ok/%2e%2E",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CANON_NO("/r", bad[i], JF_REFUSE_ENCODED);
	/* encoding wins over the '..' it hides next to a real one */
	CANON_NO("/r", "../%2e", JF_REFUSE_ENCODED);
	CANON_OK("/r", "%25", "%25");
	CANON_OK("/r", "%2", "%2");
	CANON_OK("/r", "%2g%e2", "%2g%e2");
	CANON_OK("/r", "%252g", "%252g");
}

static void test_canon_nul(void **state)
{
	(void)state;
	canon_refused_at("/r", NULL, "a\0b", 3, JF_REFUSE_NUL, __LINE__);
	canon_refused_at("/r", NULL, "safe.txt\0../../etc/passwd", 25, JF_REFUSE_NUL, __LINE__);
	canon_refused_at("/r", NULL, "\0", 1, JF_REFUSE_NUL, __LINE__);
	/* the length decides, not the C string */
	canon_ok_at("/r", NULL, "ab\0c", 2, "ab", __LINE__);
}

static void test_canon_lengths(void **state)
{
	char *name255 = repeat('n', 255), *name256 = repeat('n', 256);
	char *p4096 = malloc(JF_PATH_MAX + 2), *too_long;

	(void)state;
	/* "a/a/.../a/bc": exactly 4096 bytes (PATH_MAX) is accepted */
	for (size_t i = 0; i < JF_PATH_MAX - 2; i += 2)
		memcpy(p4096 + i, "a/", 2);
	memcpy(p4096 + JF_PATH_MAX - 2, "bc", 3);
	assert_int_equal(strlen(p4096), 4096);
	canon_ok_at("/r", NULL, p4096, JF_PATH_MAX, p4096, __LINE__);
	/* seed case "path too long (>4096)": 4097 bytes, with and without slashes */
	too_long = repeat('a', JF_PATH_MAX + 1);
	canon_refused_at("/r", NULL, too_long, JF_PATH_MAX + 1, JF_REFUSE_PATH_TOO_LONG, __LINE__);
	for (size_t i = 1; i < JF_PATH_MAX; i += 2)
		too_long[i] = '/';
	canon_refused_at("/r", NULL, too_long, JF_PATH_MAX + 1, JF_REFUSE_PATH_TOO_LONG, __LINE__);
	/* 4097 bytes that fold to less ("./" runs) are still refused: the input counts */
	for (size_t i = 0; i + 1 < JF_PATH_MAX + 1; i += 2)
		memcpy(too_long + i, "./", 2);
	canon_refused_at("/r", NULL, too_long, JF_PATH_MAX + 1, JF_REFUSE_PATH_TOO_LONG, __LINE__);
	/* base + relative path over 4096 */
	canon_refused_at("/r", p4096, "x", 1, JF_REFUSE_PATH_TOO_LONG, __LINE__);
	canon_ok_at("/r", "a", p4096 + 2, JF_PATH_MAX - 2, p4096, __LINE__);
	CANON_OK("/r", name255, name255);
	CANON_NO("/r", name256, JF_REFUSE_NAME_TOO_LONG);
	free(name255);
	free(name256);
	free(p4096);
	free(too_long);
}

static void test_canon_control_lookalike_empty(void **state)
{
	(void)state;
	CANON_NO("/r",
		 "a\x01"
		 "b",
		 JF_REFUSE_CONTROL);
	CANON_NO("/r", "a\nb", JF_REFUSE_CONTROL);
	CANON_NO("/r", "a\tb", JF_REFUSE_CONTROL);
	CANON_NO("/r", "x/\x1b[31m", JF_REFUSE_CONTROL);
	CANON_NO("/r", "del\x7f", JF_REFUSE_CONTROL);
	/* fullwidth full stop and solidus U+FF0E U+FF0F: decided lookalikes */
	CANON_NO("/r",
		 "\xef\xbc\x8e\xef\xbc\x8e\xef\xbc\x8f"
		 "etc/passwd",
		 JF_REFUSE_LOOKALIKE);
	CANON_NO("/r",
		 "a\xef\xbc\x8f"
		 "b",
		 JF_REFUSE_LOOKALIKE);
	CANON_NO("/r", "a\xef\xbc\x8e", JF_REFUSE_LOOKALIKE);
	CANON_NO("/r", "\xef\xbc\xbc", JF_REFUSE_LOOKALIKE);  /* U+FF3C fullwidth '\' */
	CANON_NO("/r", "x\xef\xb9\x92", JF_REFUSE_LOOKALIKE); /* U+FE52 small full stop */
	CANON_NO("/r", "\xe2\x80\xa5", JF_REFUSE_LOOKALIKE);  /* U+2025 two dot leader */
	CANON_NO("/r", "\xe2\x80\xa4x", JF_REFUSE_LOOKALIKE); /* U+2024 one dot leader */
	CANON_OK("/r", "\xe2\x80\xa6", "\xe2\x80\xa6");	      /* U+2026 ellipsis: fine */
	canon_refused_at("/r", NULL, "", 0, JF_REFUSE_EMPTY, __LINE__);
	/* precedence: NUL beats control, control beats '..' */
	canon_refused_at("/r", NULL, "..\x01\0", 4, JF_REFUSE_NUL, __LINE__);
	CANON_NO("/r", "../\x01", JF_REFUSE_CONTROL);
}

static void test_refusal_strings(void **state)
{
	(void)state;
	assert_string_equal(jf_refusal_reason(JF_REFUSE_DOTDOT), "dotdot");
	assert_string_equal(jf_refusal_reason(JF_REFUSE_ENCODED), "encoded");
	assert_string_equal(jf_refusal_reason(JF_REFUSE_NUL), "nul");
	assert_string_equal(jf_refusal_reason(JF_REFUSE_PATH_TOO_LONG), "path_too_long");
	assert_string_equal(jf_refusal_reason(JF_REFUSE_NAME_TOO_LONG), "name_too_long");
	assert_string_equal(jf_refusal_reason(JF_REFUSE_OUTSIDE_ROOT), "outside_root");
	assert_string_equal(jf_refusal_reason(JF_REFUSE_CONTROL), "control");
	assert_string_equal(jf_refusal_reason(JF_REFUSE_LOOKALIKE), "lookalike");
	assert_string_equal(jf_refusal_reason(JF_REFUSE_EMPTY), "empty");
	assert_string_equal(jf_refusal_reason((enum jf_refusal)99), "unknown");
	assert_string_equal(jf_refusal_message(JF_REFUSE_DOTDOT), "'..' component leaves the view");
	for (int r = JF_REFUSE_DOTDOT; r <= JF_REFUSE_EMPTY; r++)
		for (int q = r + 1; q <= JF_REFUSE_EMPTY; q++)
			assert_string_not_equal(jf_refusal_message(r), jf_refusal_message(q));
	assert_string_equal(jf_zone_name(JF_SAFE), "SAFE");
	assert_string_equal(jf_zone_name(JF_RESTRICTED), "RESTRICTED");
	assert_string_equal(jf_zone_name(JF_DENIED), "DENIED");
}

static void test_check_name(void **state)
{
	char *n256 = repeat('x', 256);

	(void)state;
	assert_int_equal(jf_check_name(".env", 4), JF_REFUSE_NONE);
	assert_int_equal(jf_check_name(".", 1), JF_REFUSE_DOTDOT);
	assert_int_equal(jf_check_name("..", 2), JF_REFUSE_DOTDOT);
	assert_int_equal(jf_check_name("...", 3), JF_REFUSE_NONE);
	assert_int_equal(jf_check_name("", 0), JF_REFUSE_EMPTY);
	assert_int_equal(jf_check_name("a/b", 3), JF_REFUSE_OUTSIDE_ROOT);
	assert_int_equal(jf_check_name("a\nb", 3), JF_REFUSE_CONTROL);
	assert_int_equal(jf_check_name("a\0b", 3), JF_REFUSE_NUL);
	assert_int_equal(jf_check_name("%2e%2e", 6), JF_REFUSE_ENCODED);
	assert_int_equal(jf_check_name("\xef\xbc\x8e\xef\xbc\x8e", 6), JF_REFUSE_LOOKALIKE);
	assert_int_equal(jf_check_name(n256, 255), JF_REFUSE_NONE);
	assert_int_equal(jf_check_name(n256, 256), JF_REFUSE_NAME_TOO_LONG);
	free(n256);
}

/* C1 controls and bidirectional controls are refused like C0 (text.c);
 * their neighbours in the same UTF-8 blocks are ordinary characters. */
static void test_canon_c1_bidi(void **state)
{
	static const char *const refused[] = {
		"a\xc2\x80",
		"\xc2\x9b[2J",
		"x\xc2\x9d"
		"0;t\xc2\x9c",	/* U+0080, CSI, OSC ... ST */
		"\xc2\x9f",	/* U+009F */
		"\xe2\x80\xaa", /* U+202A LRE */
		"txt\xe2\x80\xae"
		"exe.sh",	     /* U+202E RLO: shows "hs.exetxt" */
		"\xe2\x81\xa6",	     /* U+2066 LRI */
		"a\xe2\x81\xa9",     /* U+2069 PDI */
		"\xe2\x80\xabz",     /* U+202B RLE */
		"dir/\xe2\x80\xadx", /* U+202D LRO in a later component */
	};
	static const char *const accepted[] = {
		"\xc2\xa0",			/* U+00A0 no-break space */
		"caf\xc3\xa9",	"\xe2\x80\xa9", /* U+2029 paragraph separator */
		"\xe2\x80\xaf",			/* U+202F narrow no-break space */
		"\xe2\x81\xa5", "\xe2\x81\xaa", /* U+2065, U+206A */
		"\xc2",		"\x80\x9b",	/* invalid UTF-8: bytes, not C1 */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		CANON_NO("/r", refused[i], JF_REFUSE_CONTROL);
		if (!strchr(refused[i], '/'))
			assert_int_equal(jf_check_name(refused[i], strlen(refused[i])),
					 JF_REFUSE_CONTROL);
	}
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
		CANON_OK("/r", accepted[i], accepted[i]);
		assert_int_equal(jf_check_name(accepted[i], strlen(accepted[i])), JF_REFUSE_NONE);
	}
	/* precedence unchanged: encoded beats control, control beats lookalike */
	CANON_NO("/r", "%2e\xe2\x80\xae", JF_REFUSE_ENCODED);
	CANON_NO("/r", "\xef\xbc\x8e\xe2\x80\xae", JF_REFUSE_CONTROL);
}

static void esc_case(const char *in, size_t n, const char *want, int line)
{
	char out[256];
	size_t len = jf_escape(out, sizeof(out), in, n);

	if (len != strlen(want) || strcmp(out, want) != 0)
		fail_msg("line %d: escape gave '%s' (%zu), want '%s'", line, out, len, want);
}

#define ESC(in, want) esc_case(in, sizeof(in) - 1, want, __LINE__)

/* The one escape of human-readable output: unsafe characters, invalid UTF-8
 * and backslash as \xHH, other UTF-8 kept; truncation never cuts a piece. */
static void test_escape(void **state)
{
	char small[8];
	FILE *f;
	char *buf = NULL;
	size_t blen = 0;

	(void)state;
	ESC("plain name.c", "plain name.c");
	ESC("caf\xc3\xa9 \xe2\x80\xa6", "caf\xc3\xa9 \xe2\x80\xa6");
	ESC("a\x1b[31mred", "a\\x1b[31mred");
	ESC("nl\nend\x7f", "nl\\x0aend\\x7f");
	ESC("back\\slash", "back\\x5cslash");
	ESC("csi\xc2\x9b"
	    "2J",
	    "csi\\xc2\\x9b2J");
	ESC("txt\xe2\x80\xae"
	    "exe",
	    "txt\\xe2\\x80\\xaeexe");
	ESC("\xe2\x81\xa6x\xe2\x81\xa9", "\\xe2\\x81\\xa6x\\xe2\\x81\\xa9");
	ESC("bad\xff\xc0\xaf", "bad\\xff\\xc0\\xaf");
	ESC("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* surrogate */
	ESC("cut\xe2\x80", "cut\\xe2\\x80");	/* truncated sequence */
	ESC("\xc2\xa0", "\xc2\xa0");
	/* truncation: whole pieces only, NUL-terminated, full length returned */
	assert_int_equal(jf_escape(small, sizeof(small),
				   "ab\x1b"
				   "cdef",
				   7),
			 10);
	assert_string_equal(small, "ab\\x1bc"); /* 7 bytes and the NUL */
	assert_int_equal(jf_escape(small, sizeof(small), "abcd\x1b", 5), 8);
	assert_string_equal(small, "abcd"); /* the escape does not fit: not cut */
	assert_int_equal(jf_escape(small, sizeof(small), "ab\xc3\xa9\xc3\xa9\xc3\xa9", 8), 8);
	assert_string_equal(small, "ab\xc3\xa9\xc3\xa9");
	assert_int_equal(jf_escape(small, 0, "abc", 3), 3);
	/* the FILE variant writes the same bytes, also past its buffer size */
	f = open_memstream(&buf, &blen);
	assert_non_null(f);
	for (int i = 0; i < 600; i++)
		jf_fput_escaped(f, "\xe2\x80\xae\xc3\xa9\x1b", 6);
	fclose(f);
	assert_int_equal(blen, 600 * strlen("\\xe2\\x80\\xae\xc3\xa9\\x1b"));
	assert_memory_equal(buf, "\\xe2\\x80\\xae\xc3\xa9\\x1b",
			    strlen("\\xe2\\x80\\xae\xc3\xa9\\x1b"));
	free(buf);
	{
		char *big = repeat('x', 3000);

		big[1000] = '\x1b';
		memcpy(big + 1274, "\xe2\x80\xae", 3); /* across a 255-byte round */
		memcpy(big + 1500, "\xc3\xa9", 2);
		f = open_memstream(&buf, &blen);
		jf_fput_escaped(f, big, 3000);
		fclose(f);
		assert_int_equal(blen, 3000 + 3 + 9);
		assert_memory_equal(buf + 1000, "\\x1b", 4);
		assert_memory_equal(buf + 1277, "\\xe2\\x80\\xae", 12);
		assert_memory_equal(buf + 1500 + 12, "\xc3\xa9", 2);
		free(buf);
		free(big);
	}
}

/* ---- glob matcher ---- */

static bool gm(const char *p, const char *s)
{
	return jf_glob_match(p, strlen(p), s, strlen(s));
}

static void test_glob_match(void **state)
{
	(void)state;
	assert_true(gm("*.c", "main.c"));
	assert_true(gm("*.c", ".c"));
	assert_false(gm("*.c", "main.h"));
	assert_false(gm("*.c", "main.cc"));
	assert_true(gm("a*b*c", "aXXbYYbc"));
	assert_false(gm("a*b*c", "aXXbYYbd"));
	assert_true(gm("?", "x"));
	assert_false(gm("?", ""));
	assert_false(gm("?", "xy"));
	assert_true(gm("[a-c]x", "bx"));
	assert_false(gm("[a-c]x", "dx"));
	assert_true(gm("[!a-c]x", "dx"));
	assert_false(gm("[!a-c]x", "ax"));
	assert_true(gm("[^a]x", "bx"));
	assert_false(gm("[^a]x", "ax"));
	assert_true(gm("[]]", "]"));
	assert_true(gm("[!]]", "a"));
	assert_false(gm("[!]]", "]"));
	assert_true(gm("\\*", "*"));
	assert_false(gm("\\*", "a"));
	assert_true(gm("[[:digit:]]*", "7up"));
	assert_false(gm("[[:digit:]]*", "up"));
	assert_true(gm("[a\\]]", "]"));
	assert_true(gm("**", "anything"));
	assert_true(gm("*", ""));
	assert_true(gm("***x", "abcx"));
	/* pathological backtracking stays linear-ish */
	assert_false(gm("*a*a*a*a*a*a*a*a*b",
			"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	assert_null(jf_glob_check("a[bc]d", 6));
	assert_string_equal(jf_glob_check("a[bc", 4), "unclosed or malformed '[' class");
	assert_string_equal(jf_glob_check("a\\", 2), "trailing backslash");
	assert_string_equal(jf_glob_check("[[:nope:]]", 10), "unclosed or malformed '[' class");
}

/* ---- the seed scenario: view of "/", three zones ---- */

static const char seed_policy[] = "# like the seed's Hybrid Sandbox, for a view of /\n"
				  "[safe]\n"
				  "/home/u/proj/\n" /* 3 */
				  "[restricted]\n"
				  "/home/u/\n" /* 5 */
				  "/data/\n"   /* 6 */
				  "[denied]\n"
				  ".ssh/\n" /* 8 */
				  ".git/\n" /* 9 */
				  "*.key\n" /* 10 */
				  "*.pem\n" /* 11 */
				  ".env*\n" /* 12 */
				  "/etc/\n" /* 13 */
				  "/sys/\n" /* 14 */
				  "[limits]\n"
				  "safe.max_file_size = 500M\n"
				  "restricted.max_file_size = 100M\n"
				  "[options]\n"
				  "default = denied\n"
				  "profiles = -secrets\n";

static void test_seed_cases(void **state)
{
	struct jf_policy *p = parse_ok(seed_policy);
	struct jf_canon c;

	(void)state;
	/* read and write in SAFE, nested files */
	SAFE_(p, "home/u/proj/main.py", "t.ini:3");
	SAFE_(p, "home/u/proj/src/pkg/deep/nested/file.txt", "t.ini:3");
	EXPECT(p, "home/u/proj", true, JF_SAFE, "t.ini:3");
	/* write in RESTRICTED: the zone is RESTRICTED, the daemon refuses writes */
	RESTRICTED_(p, "home/u/notes.txt", "t.ini:5");
	RESTRICTED_(p, "data/big/set.csv", "t.ini:6");
	/* .git/config and SSH keys DENIED, even inside SAFE and RESTRICTED */
	DENIED_(p, "home/u/proj/.git/config", "t.ini:9");
	DENIED_(p, "home/u/.ssh/id_rsa", "t.ini:8");
	DENIED_(p, "home/u/proj/deploy/server.key", "t.ini:10");
	DENIED_(p, "home/u/proj/certs/ca.PEM", "t.ini:11");
	DENIED_(p, "home/u/proj/.env.local", "t.ini:12");
	EXPECT(p, "home/u/.ssh", true, JF_DENIED, "t.ini:8");
	/* an absolute path through canonicalization, then classification */
	assert_int_equal(jf_canonicalize("/", NULL, "/etc/passwd", 11, &c), 0);
	DENIED_(p, c.path, "t.ini:13");
	DENIED_(p, "sys/kernel/x", "t.ini:14");
	/* not covered by any rule: default zone */
	DENIED_(p, "opt/tool", "default");
	/* the traversal tricks never reach classification */
	CANON_NO("/", "home/u/proj/../../../etc/passwd", JF_REFUSE_DOTDOT);
	CANON_NO("/", "home/u/proj/%2e%2e/%2e%2e/etc/passwd", JF_REFUSE_ENCODED);
	canon_refused_at("/", NULL, "home/u/proj/a.txt\0.key", 22, JF_REFUSE_NUL, __LINE__);
	assert_int_equal(jf_policy_max_file_size(p, JF_SAFE), 500ull << 20);
	assert_int_equal(jf_policy_max_file_size(p, JF_RESTRICTED), 100ull << 20);
	assert_int_equal(jf_policy_default_zone(p), JF_DENIED);
	jf_policy_free(p);
}

/* ---- the built-in default and the profiles ---- */

static void test_default_policy(void **state)
{
	struct jf_policy *p = NULL;

	(void)state;
	assert_int_equal(jf_policy_default(&p), 0);
	SAFE_(p, "src/main.c", "default");
	EXPECT(p, "", true, JF_SAFE, "default");
	DENIED_(p, ".env", "profile:secrets");
	DENIED_(p, "app/.env.production", "profile:secrets");
	SAFE_(p, ".env.example", "default");
	SAFE_(p, "app/.env.sample", "default");
	SAFE_(p, ".env.template", "default");
	/* case variants on a case-sensitive filesystem (threat model) */
	DENIED_(p, ".ENV", "profile:secrets");
	DENIED_(p, "ID_RSA", "profile:secrets");
	DENIED_(p, "keys/Id_Rsa.pub", "profile:secrets");
	DENIED_(p, "Server.PEM", "profile:secrets");
	EXPECT(p, ".SSH", true, JF_DENIED, "profile:secrets");
	/* Cursor CVE-2025-59944 */
	RESTRICTED_(p, ".cUrSoR/mcp.json", "profile:project");
	RESTRICTED_(p, ".VSCode/settings.json", "profile:project");
	/* .git: config and hooks RESTRICTED, the rest SAFE */
	RESTRICTED_(p, ".git/config", "profile:project");
	RESTRICTED_(p, ".git/hooks/pre-commit", "profile:project");
	/* hooks/ itself may be made (git init), its entries are RESTRICTED but
	 * the samples of git's template */
	EXPECT(p, ".git/hooks", true, JF_SAFE, "default");
	EXPECT(p, ".git/hooks", false, JF_RESTRICTED, "profile:project");
	SAFE_(p, ".git/hooks/pre-commit.sample", "profile:project");
	SAFE_(p, "sub/.git/modules/m/hooks/update.sample", "profile:project");
	SAFE_(p, ".git/worktrees/w/hooks/update.sample", "profile:project");
	RESTRICTED_(p, ".git/hooks/pre-commit.SAMPLE", "profile:project");
	RESTRICTED_(p, ".git/hooks/pre-commit.sample.x", "profile:project");
	EXPECT(p, ".git/hooks/d", true, JF_RESTRICTED, "profile:project");
	SAFE_(p, ".git/HEAD", "default");
	SAFE_(p, ".git/objects/ab/cdef", "default");
	/* .envrc is in both profiles: DENIED wins */
	DENIED_(p, ".envrc", "profile:secrets");
	assert_int_equal(jf_policy_default_zone(p), JF_SAFE);
	assert_int_equal(jf_policy_max_file_size(p, JF_SAFE), UINT64_MAX);
	assert_int_equal(jf_policy_hardlinks(p), JF_HARDLINKS_RESTRICTED);
	jf_policy_free(p);
}

static void test_trailing_dots_spaces(void **state)
{
	struct jf_policy *p = NULL;

	(void)state;
	assert_int_equal(jf_policy_default(&p), 0);
	DENIED_(p, ".env.", "profile:secrets");
	DENIED_(p, ".env ", "profile:secrets");
	DENIED_(p, ".env. . ", "profile:secrets");
	DENIED_(p, "id_rsa ", "profile:secrets");
	DENIED_(p, "server.pem...", "profile:secrets");
	DENIED_(p, ".ssh./id", "profile:secrets");
	DENIED_(p, ".kube. /config", "profile:secrets");
	RESTRICTED_(p, ".mcp.json.", "profile:project");
	RESTRICTED_(p, ".git /config", "profile:project");
	SAFE_(p, ".env.example.", "default");
	SAFE_(p, "notes.txt.", "default");
	SAFE_(p, "...", "default");
	jf_policy_free(p);
}

static void test_profile_secrets(void **state)
{
	static const char *const denied[] = {
		".env",
		"a/.env.local",
		".envrc",
		"prod.tfvars",
		"terraform.tfstate",
		"x/secrets/api.txt",
		"credentials.json",
		"credentials-prod.json",
		"service-account.json",
		"service-account-ci.json",
		".htpasswd",
		".pgpass",
		".my.cnf",
		".ssh/config",
		"home/.ssh/authorized_keys",
		"id_rsa",
		"id_rsa.pub",
		"id_dsa",
		"id_ecdsa",
		"id_ed25519",
		"id_ed25519.pub",
		"putty.ppk",
		".gnupg/pubring.kbx",
		"tls.pem",
		"tls.key",
		"cert.p12",
		"cert.pfx",
		"store.jks",
		"app.keystore",
		"db.kdbx",
		"private.asc",
		".aws/credentials",
		".config/gcloud/adc.json",
		"home/u/.config/gcloud/x/y",
		".azure/accessTokens.json",
		".kube/config",
		"home/u/.kube/config",
		".boto",
		".s3cfg",
		".docker/config.json",
		".netrc",
		"_netrc",
		".npmrc",
		".pypirc",
		".cargo/credentials",
		".cargo/credentials.toml",
		"home/u/.gem/credentials",
		".git-credentials",
		".config/gh/hosts.yml",
		".bash_history",
		".zsh_history",
		".python_history",
		".lesshst",
	};
	static const char *const visible[] = {
		".env.example",
		".env.sample",
		".env.template",
		"environment.c",
		"envrc",
		"secret/x",
		"credentials.yaml",
		"id_rsa_helper.c.orig.txt.x",
		"my.cnf",
		".kube/cache/x",
		".docker/daemon.json",
		".config/gh/config.yml",
		".cargo/config",
		".config/other",
		"history",
		"main.c",
		"Makefile",
	};
	struct jf_policy *p = parse_ok("[options]\nprofiles = secrets\ndefault = safe\n");

	(void)state;
	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++)
		DENIED_(p, denied[i], "profile:secrets");
	for (size_t i = 0; i < sizeof(visible) / sizeof(visible[0]); i++) {
		/* id_rsa* covers the helper name: check it separately below */
		if (strncmp(visible[i], "id_rsa", 6) == 0)
			continue;
		SAFE_(p, visible[i], "default");
	}
	DENIED_(p, "id_rsa_helper.c", "profile:secrets");
	EXPECT(p, "secrets", true, JF_DENIED, "profile:secrets");
	DENIED_(p, "secrets", "profile:secrets"); /* a directory rule: any object */
	/* the deciding rule is the pattern as written, in profile order */
	{
		struct jf_verdict v;

		jf_classify(p, "a/b.pem", 7, false, &v);
		assert_non_null(v.rule);
		assert_string_equal(v.rule->pattern, "*.pem");
		assert_true(v.rule->builtin);
		assert_string_equal(v.rule->source, "secrets");
		jf_classify(p, ".kube/config", 12, false, &v);
		assert_string_equal(v.rule->pattern, "**/.kube/config");
		assert_int_equal(jf_policy_rule(p, 0)->line, 1);
		assert_string_equal(jf_policy_rule(p, 0)->pattern, ".env");
		assert_string_equal(jf_policy_rule(p, 2)->pattern, "!.env.example");
		assert_true(jf_policy_rule(p, 2)->negated);
	}
	jf_policy_free(p);
}

static void test_profile_project(void **state)
{
	static const char *const restricted[] = {
		".git/hooks/pre-commit",
		"sub/.git/hooks/post-checkout",
		".git/config",
		"vendor/lib/.git/config",
		".gitmodules",
		".vscode/settings.json",
		".vscode/tasks.json",
		".idea/workspace.xml",
		".claude/settings.json",
		".claude/settings.local.json",
		".cursor/mcp.json",
		".cursor/rules/x.mdc",
		".mcp.json",
		"pkg/.mcp.json",
		".devcontainer/devcontainer.json",
		/* git files that choose what git runs on the host (red-team finding) */
		".git/commondir",
		".git/config.worktree",
		".git/modules/sub/config",
		".git/modules/sub/hooks/post-checkout",
		".git/worktrees/wt/commondir",
		".git/worktrees/wt/gitdir",
		".git/worktrees/wt/config.worktree",
		".git/worktrees/evil/commondir",
		".git/worktrees/evil/config",
		".git/worktrees/evil/hooks/pre-commit",
		".git/worktrees/wt/modules/sub/config",
		".git/worktrees/wt/objects/info/alternates",
		"sub/.git/worktrees/WT/CommonDir",
		".git/objects/info/alternates",
		/* state files whose keys choose a program or a signing key for a
		 * host git command that continues the operation */
		".git/sequencer/opts",
		".git/rebase-merge/strategy",
		".git/rebase-merge/strategy_opts",
		".git/rebase-merge/gpg_sign_opt",
		".git/rebase-apply/gpg_sign_opt",
		".git/info/grafts",
		".git/remotes/origin",
		".git/branches/origin",
		".git/worktrees/wt/sequencer/opts",
		".git/worktrees/wt/rebase-merge/strategy",
		"sub/.git/rebase-merge/gpg_sign_opt",
		".git/index",
		"sub/.git/index",
		".git/packed-refs",
		".git/refs/replace/0123abcd",
		".claude.json",
		".gemini/settings.json",
		".codex/config.toml",
		".windsurf/rules.md",
		".zed/settings.json",
		".continue/config.json",
		".husky/pre-commit",
		".pre-commit-config.yaml",
		".yarnrc.yml",
	};
	struct jf_policy *p = parse_ok("[options]\nprofiles = -secrets, project\ndefault = safe\n");

	(void)state;
	for (size_t i = 0; i < sizeof(restricted) / sizeof(restricted[0]); i++)
		RESTRICTED_(p, restricted[i], "profile:project");
	/* without secrets, .envrc is only RESTRICTED */
	RESTRICTED_(p, ".envrc", "profile:project");
	EXPECT(p, ".vscode", true, JF_RESTRICTED, "profile:project");
	RESTRICTED_(p, ".vscode", "profile:project"); /* a directory rule: any object */
	SAFE_(p, ".git/description", "default");
	/* what git commit writes stays SAFE, so an agent can commit */
	SAFE_(p, ".git/objects/ab/cdef0123", "default");
	SAFE_(p, ".git/refs/heads/main.lock", "default");
	SAFE_(p, ".git/index.lock", "default");
	SAFE_(p, ".git/logs/HEAD", "default");
	SAFE_(p, ".git/COMMIT_EDITMSG", "default");
	/* a submodule's git directory has the zones of .git/: work in it is SAFE */
	SAFE_(p, ".git/modules/sub/HEAD", "default");
	SAFE_(p, ".git/modules/sub/objects/ab/cdef0123", "default");
	SAFE_(p, ".git/modules/sub/refs/heads/main", "default");
	SAFE_(p, ".git/modules/lib/foo/index.lock", "default");
	SAFE_(p, ".git/modules/a/modules/b/logs/HEAD", "default");
	SAFE_(p, ".git/modules/sub/config.lock", "default");
	RESTRICTED_(p, ".git/modules/lib/foo/hooks/post-checkout", "profile:project");
	RESTRICTED_(p, ".git/modules/a/modules/b/config", "profile:project");
	RESTRICTED_(p, ".git/modules/sub/index", "profile:project");
	RESTRICTED_(p, ".git/modules/sub/commondir", "profile:project");
	RESTRICTED_(p, ".git/modules/sub/objects/info/alternates", "profile:project");
	RESTRICTED_(p, ".git/modules/sub/info/grafts", "profile:project");
	/* the state git writes in every cherry-pick, rebase, am, merge, bisect */
	SAFE_(p, ".git/sequencer/todo", "default");
	SAFE_(p, ".git/sequencer/head", "default");
	SAFE_(p, ".git/sequencer/opts.lock", "default");
	SAFE_(p, ".git/rebase-merge/git-rebase-todo", "default");
	SAFE_(p, ".git/rebase-merge/done", "default");
	SAFE_(p, ".git/rebase-merge/author-script", "default");
	SAFE_(p, ".git/rebase-apply/0001", "default");
	SAFE_(p, ".git/rebase-apply/apply-opt", "default");
	SAFE_(p, ".git/MERGE_HEAD", "default");
	SAFE_(p, ".git/MERGE_MSG", "default");
	SAFE_(p, ".git/BISECT_LOG", "default");
	SAFE_(p, ".git/FETCH_HEAD", "default");
	SAFE_(p, ".git/packed-refs.lock", "default");
	SAFE_(p, ".git/refs/tags/replace", "default");
	SAFE_(p, ".git/info/exclude", "default");
	/* and what git writes in a linked work tree's own directory: git gc,
	 * commits in the work tree, git worktree lock */
	SAFE_(p, ".git/worktrees/wt/HEAD", "default");
	SAFE_(p, ".git/worktrees/wt/HEAD.lock", "default");
	RESTRICTED_(p, ".git/worktrees/wt/index", "profile:project");
	SAFE_(p, ".git/worktrees/wt/ORIG_HEAD", "default");
	SAFE_(p, ".git/worktrees/wt/logs/HEAD", "default");
	SAFE_(p, ".git/worktrees/wt/locked", "default");
	EXPECT(p, ".git/worktrees/evil", true, JF_SAFE, "default");
	SAFE_(p, "gitmodules", "default");
	SAFE_(p, ".env", "default"); /* secrets removed */
	jf_policy_free(p);
}

/* The gitdir profile: the project profile's git entries, from the root of a
 * git directory (the main repository's, shown to a linked work tree). */
static void test_profile_gitdir(void **state)
{
	static const char *const restricted[] = {
		"hooks/pre-commit",
		"config",
		"config.worktree",
		"commondir",
		"modules/sub/config",
		"objects/info/alternates",
		"worktrees/wt/commondir",
		"worktrees/wt/gitdir",
		"worktrees/wt/config.worktree",
		"worktrees/evil/commondir",
		"worktrees/evil/config",
		"worktrees/evil/hooks/post-checkout",
		"worktrees/wt/modules/sub/hooks/x",
		"sequencer/opts",
		"rebase-merge/strategy",
		"rebase-merge/strategy_opts",
		"rebase-merge/gpg_sign_opt",
		"rebase-apply/gpg_sign_opt",
		"info/grafts",
		"remotes/origin",
		"branches/origin",
		"worktrees/wt/rebase-merge/strategy",
		"worktrees/wt/sequencer/opts",
		"index",
		"worktrees/wt/index",
		"packed-refs",
		"refs/replace/0123abcd",
	};
	static const char *const safe[] = {
		"HEAD",
		"objects/ab/cdef0123",
		"refs/heads/main.lock",
		"logs/refs/heads/main",
		"packed-refs.lock",
		"refs/heads/replace",
		"worktrees/wt/HEAD",
		"worktrees/wt/HEAD.lock",
		"worktrees/wt/index.lock",
		"worktrees/wt/ORIG_HEAD",
		"worktrees/wt/logs/HEAD",
		"sequencer/todo",
		"rebase-merge/git-rebase-todo",
		"worktrees/wt/rebase-merge/done",
		"sub/config", /* anchored: only the root's config */
		"sub/hooks/x",
	};
	struct jf_policy *p = parse_ok("[options]\nprofiles = gitdir\ndefault = safe\n");

	(void)state;
	for (size_t i = 0; i < sizeof(restricted) / sizeof(restricted[0]); i++)
		RESTRICTED_(p, restricted[i], "profile:gitdir");
	for (size_t i = 0; i < sizeof(safe) / sizeof(safe[0]); i++)
		SAFE_(p, safe[i], "default");
	EXPECT(p, "hooks", true, JF_SAFE, "default");
	EXPECT(p, "hooks", false, JF_RESTRICTED, "profile:gitdir");
	SAFE_(p, "hooks/pre-commit.sample", "profile:gitdir");
	EXPECT(p, "worktrees/wt", true, JF_SAFE, "default");
	jf_policy_free(p);
}

/* A .git that is not a directory (a "gitdir: PATH" file, a symlink) sends
 * git elsewhere for its config and hooks/: RESTRICTED at any depth, while a
 * .git directory keeps its parent's zone and its ordinary entries. */
static void test_profile_gitfile(void **state)
{
	static const char *const gitfile[] = {
		".git", "sub/.git", "a/b/c/.git", ".GIT", ".git.", ".git/.git", "sub/.git/x/.git",
	};
	static const char *const safe[] = {
		".git/HEAD.lock",	  ".git/HEAD",	".git/objects/ab/cdef0123",
		"sub/.git/index.lock",	  ".gitignore", ".gitattributes",
		".github/x.yml",	  "x.git",	"proj.git/config",
		".git-blame-ignore-revs",
	};
	struct jf_policy *p = parse_ok("[options]\nprofiles = -secrets, project\ndefault = safe\n");
	const struct jf_rule *r;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(gitfile) / sizeof(gitfile[0]); i++)
		RESTRICTED_(p, gitfile[i], "profile:project");
	for (size_t i = 0; i < sizeof(safe) / sizeof(safe[0]); i++)
		SAFE_(p, safe[i], "default");
	EXPECT(p, ".git", true, JF_SAFE, "default");
	EXPECT(p, "sub/.git", true, JF_SAFE, "default");
	EXPECT(p, "sub/.GIT. ", true, JF_SAFE, "default");
	EXPECT(p, ".github", true, JF_SAFE, "default");
	EXPECT(p, ".github/workflows", true, JF_SAFE, "default");
	RESTRICTED_(p, ".git/config", "profile:project");
	RESTRICTED_(p, "sub/.git/config", "profile:project");
	RESTRICTED_(p, ".git/hooks/pre-commit", "profile:project");
	/* the two rules, in this order, at the end of the profile */
	while (jf_policy_rule(p, n + 1) && jf_policy_rule(p, n + 1)->builtin)
		n++;
	r = jf_policy_rule(p, n - 1);
	assert_string_equal(r->pattern, ".git");
	assert_false(r->negated);
	r = jf_policy_rule(p, n);
	assert_string_equal(r->pattern, "!.git/");
	assert_true(r->negated);
	assert_int_equal(r->zone, JF_RESTRICTED);
	jf_policy_free(p);

	/* a .git directory gets its parent's zone, whatever decides that */
	p = parse_ok("[options]\ndefault = restricted\n[safe]\n/\n");
	EXPECT(p, ".git", true, JF_SAFE, "t.ini:4");
	SAFE_(p, ".git/HEAD", "t.ini:4");
	RESTRICTED_(p, ".git/index", "profile:project");
	RESTRICTED_(p, ".git", "profile:project");
	jf_policy_free(p);
	p = parse_ok("[options]\ndefault = restricted\n");
	EXPECT(p, ".git", true, JF_RESTRICTED, "default");
	jf_policy_free(p);

	/* a later rule of the file undoes the exception: .git/ all read-only */
	p = parse_ok("[options]\ndefault = safe\n[restricted]\n.git/\n");
	EXPECT(p, ".git", true, JF_RESTRICTED, "t.ini:4");
	/* the index by the profile's own rule, but its index.lock, the only
	 * file jailfs lets be renamed onto it, is read-only too */
	RESTRICTED_(p, ".git/index", "profile:project");
	RESTRICTED_(p, ".git/index.lock", "t.ini:4");
	/* a file .git is held by ".git/" and by the git rules' directory
	 * ".git" above their names, the longer */
	RESTRICTED_(p, "sub/.git", "profile:project");
	jf_policy_free(p);

	/* the view of a linked work tree's main git directory */
	p = parse_ok("[options]\nprofiles = gitdir\ndefault = safe\n");
	RESTRICTED_(p, ".git", "profile:gitdir");
	RESTRICTED_(p, "refs/.git", "profile:gitdir");
	EXPECT(p, "refs/.git", true, JF_SAFE, "default");
	jf_policy_free(p);
}

static void test_profile_system(void **state)
{
	struct jf_policy *p = parse_ok("[options]\nprofiles = system\ndefault = denied\n"
				       "[safe]\n/home/u/proj/\n/tmp/\n");

	(void)state;
	RESTRICTED_(p, "etc/passwd", "profile:system");
	RESTRICTED_(p, "etc/group", "profile:system");
	RESTRICTED_(p, "etc/nsswitch.conf", "profile:system");
	RESTRICTED_(p, "etc/hosts", "profile:system");
	RESTRICTED_(p, "etc/resolv.conf", "profile:system");
	RESTRICTED_(p, "etc/ld.so.cache", "profile:system");
	RESTRICTED_(p, "etc/ld.so.conf.d/x.conf", "profile:system");
	RESTRICTED_(p, "etc/ssl/certs/ca-certificates.crt", "profile:system");
	RESTRICTED_(p, "etc/ca-certificates.conf", "profile:system");
	RESTRICTED_(p, "etc/alternatives/editor", "profile:system");
	RESTRICTED_(p, "etc/localtime", "profile:system");
	EXPECT(p, "etc", true, JF_RESTRICTED, "profile:system");
	DENIED_(p, "etc/shadow", "profile:system");
	DENIED_(p, "etc/sudoers", "profile:system");
	DENIED_(p, "etc/ssl/private/server.crt", "profile:system");
	DENIED_(p, "proc/self/environ", "profile:system");
	DENIED_(p, "sys/kernel/notes", "profile:system");
	DENIED_(p, "dev/sda", "profile:system");
	DENIED_(p, "boot/vmlinuz", "profile:system");
	DENIED_(p, "root/.bashrc", "profile:system");
	DENIED_(p, "run/user/1000/bus", "profile:system");
	DENIED_(p, "var/lib/dpkg/status", "profile:system");
	DENIED_(p, "var/run/docker.sock", "profile:system");
	RESTRICTED_(p, "var/log/syslog", "profile:system");
	RESTRICTED_(p, "usr/bin/ls", "profile:system");
	RESTRICTED_(p, "bin", "profile:system");
	RESTRICTED_(p, "lib64/ld-linux-x86-64.so.2", "profile:system");
	RESTRICTED_(p, "opt/tool/bin/x", "profile:system");
	RESTRICTED_(p, "home/u/.bashrc", "profile:system");
	SAFE_(p, "home/u/proj/src/a.c", "t.ini:5");
	SAFE_(p, "tmp/scratch", "t.ini:6");
	RESTRICTED_(p, "srv/www", "profile:system"); /* the profile's root rule */
	/* secrets is implied, and comes first */
	DENIED_(p, "home/u/.ssh/id_ed25519", "profile:secrets");
	assert_string_equal(jf_policy_rule(p, 0)->source, "secrets");
	jf_policy_free(p);
}

/* ---- gitignore semantics ---- */

static void test_starstar(void **state)
{
	struct jf_policy *p = parse_ok("[options]\ndefault = safe\nprofiles = -secrets\n"
				       "[restricted]\n"
				       "a/**/b\n"  /* 5 */
				       "docs/**\n" /* 6 */
				       "**/gen\n"  /* 7 */
				       "**/x/**/y.c\n" /* 8 */);

	(void)state;
	RESTRICTED_(p, "a/b", "t.ini:5");
	RESTRICTED_(p, "a/x/b", "t.ini:5");
	RESTRICTED_(p, "a/x/y/z/b", "t.ini:5");
	RESTRICTED_(p, "a/x/b/inside", "t.ini:5");
	SAFE_(p, "z/a/b", "default");
	SAFE_(p, "a/bb", "default");
	RESTRICTED_(p, "docs/index.md", "t.ini:6");
	RESTRICTED_(p, "docs/a/b/c", "t.ini:6");
	EXPECT(p, "docs", true, JF_SAFE, "default"); /* the pattern covers what is inside docs */
	RESTRICTED_(p, "gen", "t.ini:7");
	RESTRICTED_(p, "src/gen/out.c", "t.ini:7");
	RESTRICTED_(p, "x/y.c", "t.ini:8");
	RESTRICTED_(p, "q/x/r/s/y.c", "t.ini:8");
	SAFE_(p, "x/y.h", "default");
	jf_policy_free(p);
}

static void test_anchoring(void **state)
{
	struct jf_policy *p = parse_ok("[options]\ndefault = safe\nprofiles = -secrets\n"
				       "[denied]\n"
				       "/build\n"    /* 5: anchored by the leading slash */
				       "doc/frotz\n" /* 6: anchored by the middle slash */
				       "tmp\n"	     /* 7: any depth */
				       "[restricted]\n"
				       "/Make*\n");

	(void)state;
	DENIED_(p, "build", "t.ini:5");
	DENIED_(p, "build/obj/x.o", "t.ini:5");
	SAFE_(p, "src/build", "default");
	DENIED_(p, "doc/frotz", "t.ini:6");
	DENIED_(p, "doc/frotz/x", "t.ini:6");
	SAFE_(p, "a/doc/frotz", "default");
	DENIED_(p, "tmp", "t.ini:7");
	DENIED_(p, "a/b/tmp/c", "t.ini:7");
	SAFE_(p, "tmpx", "default");
	RESTRICTED_(p, "Makefile", "t.ini:9");
	SAFE_(p, "sub/Makefile", "default");
	jf_policy_free(p);
}

static void test_negation(void **state)
{
	struct jf_policy *p = parse_ok("[options]\ndefault = safe\nprofiles = -secrets\n"
				       "[denied]\n"
				       "*.log\n"	  /* 5 */
				       "!keep.log\n"	  /* 6 */
				       "!early.txt\n"	  /* 7 */
				       "early.*\n"	  /* 8: later rule wins */
				       "logs/\n"	  /* 9 */
				       "!logs/keep.log\n" /* 10: parent excluded: no effect */
				       "out/*\n"	  /* 11 */
				       "!out/keep\n"	  /* 12: re-included */
				       "!/out/x/*.c\n");

	(void)state;
	DENIED_(p, "a.log", "t.ini:5");
	DENIED_(p, "x/a.LOG", "t.ini:5");
	SAFE_(p, "keep.log", "default");
	SAFE_(p, "x/KEEP.log", "default"); /* exceptions fold case too */
	DENIED_(p, "early.txt", "t.ini:8");
	DENIED_(p, "logs/keep.log", "t.ini:9");
	EXPECT(p, "logs", true, JF_DENIED, "t.ini:9");
	DENIED_(p, "out/a", "t.ini:11");
	SAFE_(p, "out/keep", "default");
	SAFE_(p, "out/keep/deeper/file", "default");
	EXPECT(p, "out/x", true, JF_DENIED, "t.ini:11"); /* cannot re-include below it */
	DENIED_(p, "out/x/a.c", "t.ini:11");
	jf_policy_free(p);
}

/* '!' in [restricted]: sets aside the earlier [restricted] rules matching the
 * same prefix, nothing else. */
static void test_restricted_exception(void **state)
{
	struct jf_policy *p = parse_ok("[options]\ndefault = safe\nprofiles = -secrets\n"
				       "[restricted]\n"
				       "*.lock\n"	 /* 5 */
				       "!Cargo.lock\n"	 /* 6 */
				       "!early.lock\n"	 /* 7 */
				       "early.*\n"	 /* 8: a later rule undoes it */
				       "vendor/\n"	 /* 9 */
				       "!vendor/keep/\n" /* 10: other prefix: no effect */
				       "gen/\n"		 /* 11 */
				       "!gen/\n"	 /* 12 */
				       "[safe]\n"
				       "build/\n" /* 14 */
				       "[restricted]\n"
				       "!build/\n" /* 16: [safe] rules stay */
				       "/\n"	   /* 17 */
				       "!/\n");	   /* 18 */

	(void)state;
	RESTRICTED_(p, "x.lock", "t.ini:5");
	SAFE_(p, "Cargo.lock", "default");
	SAFE_(p, "sub/CARGO.LOCK", "default"); /* exceptions fold case too */
	RESTRICTED_(p, "early.lock", "t.ini:8");
	RESTRICTED_(p, "vendor/keep/x", "t.ini:9");
	EXPECT(p, "vendor/keep", true, JF_RESTRICTED, "t.ini:9");
	EXPECT(p, "gen", true, JF_SAFE, "default");
	RESTRICTED_(p, "gen", "t.ini:11"); /* "!gen/" re-includes a directory only */
	SAFE_(p, "gen/x.c", "default");
	RESTRICTED_(p, "gen/x.lock", "t.ini:5");
	EXPECT(p, "build", true, JF_SAFE, "t.ini:14");
	EXPECT(p, "", true, JF_SAFE, "default");
	assert_true(jf_policy_rule(p, 1)->negated);
	jf_policy_free(p);
}

static void test_longest_match(void **state)
{
	struct jf_policy *p = parse_ok("[safe]\n"
				       "/\n"		   /* 2 */
				       "vendor/patches/\n" /* 3 */
				       "[restricted]\n"
				       "vendor/\n" /* 5 */
				       "src/*.c\n" /* 6 */
				       "*.h\n"	   /* 7 */
				       "[safe]\n"
				       "*.c\n" /* 9 */
				       "*.h\n" /* 10: same depth, same length: later */
				       "[options]\n"
				       "profiles = -secrets\n");

	(void)state;
	SAFE_(p, "README", "t.ini:2");
	EXPECT(p, "", true, JF_SAFE, "t.ini:2");
	RESTRICTED_(p, "vendor/lib/x.go", "t.ini:5");
	EXPECT(p, "vendor", true, JF_RESTRICTED, "t.ini:5");
	SAFE_(p, "vendor/patches/fix.diff", "t.ini:3");
	EXPECT(p, "vendor/patches", true, JF_SAFE, "t.ini:3");
	/* a/vendor: "vendor/" has no slash in the middle, matches at any depth */
	RESTRICTED_(p, "a/vendor/x", "t.ini:5");
	/* src/a.c: lines 6 and 9 both match at depth 2: the longer pattern wins */
	RESTRICTED_(p, "src/a.c", "t.ini:6");
	SAFE_(p, "lib/a.c", "t.ini:9");
	SAFE_(p, "lib/a.h", "t.ini:10");
	/* deeper beats longer: vendor/patches/a.h: *.h at depth 3 */
	SAFE_(p, "vendor/patches/a.h", "t.ini:10");
	jf_policy_free(p);
}

static void test_dir_only(void **state)
{
	struct jf_policy *p = parse_ok("[options]\ndefault = safe\nprofiles = -secrets\n"
				       "[denied]\nbuild/\n/cache/\n[restricted]\nconf/\n");

	(void)state;
	EXPECT(p, "build", true, JF_DENIED, "t.ini:5");
	DENIED_(p, "build", "t.ini:5");	    /* [denied] "build/" holds any object */
	DENIED_(p, "build/x.o", "t.ini:5"); /* a parent is always a directory */
	DENIED_(p, "a/build/x.o", "t.ini:5");
	EXPECT(p, "cache", true, JF_DENIED, "t.ini:6");
	EXPECT(p, "a/cache", true, JF_SAFE, "default");
	EXPECT(p, "conf", true, JF_RESTRICTED, "t.ini:8");
	RESTRICTED_(p, "conf", "t.ini:8");
	RESTRICTED_(p, "conf/a", "t.ini:8");
	jf_policy_free(p);
}

static void test_case_sensitivity(void **state)
{
	struct jf_policy *p = parse_ok("[options]\ndefault = restricted\nprofiles = -secrets\n"
				       "[safe]\n/Src/\n[denied]\nTOKEN.txt\n[restricted]\nDocs/\n");

	(void)state;
	SAFE_(p, "Src/a.c", "t.ini:5");
	RESTRICTED_(p, "src/a.c", "default"); /* SAFE patterns match exactly */
	DENIED_(p, "token.TXT", "t.ini:7");
	DENIED_(p, "Src/token.txt", "t.ini:7");
	RESTRICTED_(p, "docs/x", "t.ini:9");
	jf_policy_free(p);
}

static void test_read_only(void **state)
{
	struct jf_policy *p = NULL;

	(void)state;
	assert_int_equal(jf_policy_default(&p), 0);
	jf_policy_set_read_only(p, true);
	RESTRICTED_(p, "src/main.c", "default");
	RESTRICTED_(p, ".git/config", "profile:project");
	DENIED_(p, ".env", "profile:secrets");
	jf_policy_set_read_only(p, false);
	SAFE_(p, "src/main.c", "default");
	jf_policy_free(p);
}

static void test_escapes_and_specials(void **state)
{
	struct jf_policy *p = parse_ok("[options]\ndefault = safe\nprofiles = -secrets\n"
				       "[denied]\n"
				       "\\!important\n"	     /* 5: literal '!' */
				       "\\#hash\n"	     /* 6: literal '#' */
				       "sp\\ \n"	     /* 7: escaped trailing space kept */
				       "star\\*\n"	     /* 8 */
				       "[abc]x\n"	     /* 9 */
				       "  indented.txt   \n" /* 10: blanks trimmed */
				       "[restricted]\n"
				       "*\n");

	(void)state;
	DENIED_(p, "!important", "t.ini:5");
	DENIED_(p, "#hash", "t.ini:6");
	DENIED_(p, "sp ", "t.ini:7");
	RESTRICTED_(p, "sp", "t.ini:12");
	DENIED_(p, "star*", "t.ini:8");
	RESTRICTED_(p, "starx", "t.ini:12");
	DENIED_(p, "bx", "t.ini:9");
	DENIED_(p, "indented.txt", "t.ini:10");
	EXPECT(p, "", true, JF_SAFE, "default");
	jf_policy_free(p);
}

/* ---- policy files ---- */

static void test_parse_errors(void **state)
{
	char *big;
	size_t n;

	(void)state;
	PARSE_ERR("[safe]\n/\n\n# x\n[denied]\n.env\n[safee]\n",
		  "t.ini:7: unknown section [safee] (expected [safe], [restricted], [denied], "
		  "[limits], [options], [run] or [content])");
	PARSE_ERR("# header\n/src/\n",
		  "t.ini:2: '/src/' outside a section (start with [safe], [restricted], [denied], "
		  "[limits], [options], [run] or [content])");
	PARSE_ERR("[safe]\n/\n!foo\n", "t.ini:3: '!' exception '!foo' in [safe] (only denied "
				       "and restricted rules have exceptions)");
	PARSE_ERR("[denied]\nok\nfoo[ab\n",
		  "t.ini:3: invalid pattern 'foo[ab': unclosed or malformed '[' class");
	PARSE_ERR("[denied]\n!\n", "t.ini:2: invalid pattern '!': empty pattern");
	PARSE_ERR("[denied]\n//\n", "t.ini:2: invalid pattern '//': empty pattern");
	PARSE_ERR("[denied]\na//b\n", "t.ini:2: invalid pattern 'a//b': empty path component "
				      "in pattern");
	PARSE_ERR("[denied]\n../x\n", "t.ini:2: invalid pattern '../x': '.' or '..' component "
				      "in pattern");
	PARSE_ERR("[denied]\nfoo\\\n", "t.ini:2: invalid pattern 'foo\\': trailing backslash");
	PARSE_ERR("[limits]\nsafe.max_file_size = 5X\n",
		  "t.ini:2: invalid size '5X' for safe.max_file_size (expected a number with "
		  "optional K, M, G or T)");
	PARSE_ERR("[limits]\nrestricted.max_file_size = 99999999999999999999\n",
		  "t.ini:2: invalid size '99999999999999999999' for restricted.max_file_size "
		  "(expected a number with optional K, M, G or T)");
	PARSE_ERR("[limits]\nsafe.max_file_size = 20000000000000T\n",
		  "t.ini:2: invalid size '20000000000000T' for safe.max_file_size (expected a "
		  "number with optional K, M, G or T)");
	PARSE_ERR("[limits]\ndenied.max_file_size = 1\n",
		  "t.ini:2: unknown key 'denied.max_file_size' in [limits] (expected "
		  "safe.max_file_size or restricted.max_file_size)");
	PARSE_ERR("[limits]\nsafe.max_file_size = 1\nsafe.max_file_size = 2\n",
		  "t.ini:3: duplicate key 'safe.max_file_size' in [limits]");
	PARSE_ERR("[options]\ndefault = maybe\n",
		  "t.ini:2: invalid default 'maybe' (expected safe, restricted or denied)");
	PARSE_ERR("[options]\ndefault = safe\ndefault = denied\n",
		  "t.ini:3: duplicate key 'default' in [options]");
	PARSE_ERR("[options]\nprofiles = secrets, nope\n",
		  "t.ini:2: unknown profile 'nope' (expected secrets, project, system, gitdir or "
		  "-secrets)");
	PARSE_ERR("[options]\nprofiles = -project\n",
		  "t.ini:2: only 'secrets' can be removed, not 'project' (the others are used "
		  "only when listed)");
	PARSE_ERR("[options]\nprofiles = secrets, -secrets\n",
		  "t.ini:2: profile 'secrets' both listed and removed");
	PARSE_ERR("[options]\nhardlinks = maybe\n",
		  "t.ini:2: invalid hardlinks 'maybe' (expected restricted, zone or deny)");
	PARSE_ERR("[options]\ncolour = red\n",
		  "t.ini:2: unknown key 'colour' in [options] (expected default, profiles or "
		  "hardlinks)");
	PARSE_ERR("[options]\nnoequals\n",
		  "t.ini:2: expected 'key = value' in [options], got 'noequals'");
	PARSE_ERR("[options]\n= x\n", "t.ini:2: missing key before '=' in [options]");
	PARSE_ERR("[options]\ndefault =\n", "t.ini:2: empty value for 'default'");
	PARSE_ERR("[run]\ntimeout = 10s\n", "t.ini:2: invalid number of seconds '10s' for timeout");
	PARSE_ERR("[run]\nexpose = /ok, rel/path\n",
		  "t.ini:2: expose entry 'rel/path' is not an absolute path");
	PARSE_ERR("[run]\nenv = 1BAD\n", "t.ini:2: invalid env entry '1BAD' (expected NAME or "
					 "NAME=VALUE)");
	PARSE_ERR("[run]\ndeny_exec = a,,b\n", "t.ini:2: empty item in deny_exec list");
	PARSE_ERR("[run]\nshell = yes\n",
		  "t.ini:2: unknown key 'shell' in [run] (expected deny_exec, allow_exec, "
		  "allow_inline, env, expose, home, timeout, view_idle, max_output, tmp_size or "
		  "shm_size)");
	PARSE_ERR("[run]\nhome = rel\n", "t.ini:2: home entry 'rel' is not an absolute path");
	PARSE_ERR("[run]\nhome = /a, /b\n", "t.ini:2: home takes one path");
	PARSE_ERR("[run]\nhome = /a\nhome = /b\n", "t.ini:3: home takes one path");
	PARSE_ERR("[run]\ntmp_size = 0\n", "t.ini:2: tmp_size must be above 0 (or unlimited)");
	PARSE_ERR("[run]\nshm_size = 1G\nshm_size = 2G\n",
		  "t.ini:3: duplicate key 'shm_size' in [run]");
	PARSE_ERR("[run]\ntmp_size = 1X\n", "t.ini:2: invalid size '1X' for tmp_size (expected a "
					    "number with optional K, M, G or T)");
	PARSE_ERR("[run]\ntimeout = 1\ntimeout = 2\n", "t.ini:3: duplicate key 'timeout' in [run]");
	PARSE_ERR("[safe]\n/\n[denied]\na\0b\n", "t.ini:4: NUL byte in line");
	PARSE_ERR("[safe]\r\n/\r\n[bogus]\r\n",
		  "t.ini:3: unknown section [bogus] (expected [safe], [restricted], [denied], "
		  "[limits], [options], [run] or [content])");
	/* a pattern longer than PATH_MAX */
	n = strlen("[denied]\n");
	big = malloc(n + JF_PATH_MAX + 3);
	memcpy(big, "[denied]\n", n);
	memset(big + n, 'a', JF_PATH_MAX + 1);
	big[n + JF_PATH_MAX + 1] = '\n';
	parse_err(big, n + JF_PATH_MAX + 2, "t.ini:2: pattern longer than 4096 bytes");
	free(big);
}

/* jf_policy_run_format: the text jailfs hands to jailrun reads back to the
 * same [run] lists and numbers; a policy without [run] gives "[run]\n". */
static void test_run_format(void **state)
{
	struct jf_policy *p =
		parse_ok("[safe]\nsrc/\n[run]\ndeny_exec = curl, wget\n"
			 "deny_exec = scp\nallow_exec = rm\nenv = A, B=x y#z\n"
			 "expose = /opt/sdk\nhome = /var/h\ntimeout = 300\nview_idle = 60\n"
			 "max_output = unlimited\n");
	struct jf_policy *q;
	char *text = NULL;
	int n;

	(void)state;
	n = jf_policy_run_format(p, &text);
	assert_true(n > 0);
	assert_int_equal(n, strlen(text));
	assert_string_equal(text,
			    "[run]\ndeny_exec = curl, wget, scp\nallow_exec = rm\n"
			    "env = A, B=x y#z\nexpose = /opt/sdk\nhome = /var/h\ntimeout = 300\n"
			    "view_idle = 60\nmax_output = unlimited\n");
	q = parse_ok(text);
	assert_string_equal(jf_policy_run_list(q, "deny_exec")[2], "scp");
	assert_string_equal(jf_policy_run_list(q, "env")[1], "B=x y#z");
	assert_string_equal(jf_policy_run_list(q, "home")[0], "/var/h");
	assert_int_equal(jf_policy_run_number(q, "timeout_ms"), 300000);
	assert_int_equal(jf_policy_run_number(q, "view_idle_ms"), 60000);
	assert_int_equal(jf_policy_run_number(q, "max_output"), UINT64_MAX);
	free(text);
	jf_policy_free(q);
	jf_policy_free(p);
	p = parse_ok("[safe]\nsrc/\n");
	assert_int_equal(jf_policy_run_format(p, &text), 6);
	assert_string_equal(text, "[run]\n");
	free(text);
	jf_policy_free(p);
}

static void test_parse_values(void **state)
{
	struct jf_policy *p = parse_ok("# full example\n"
				       "[limits]\n"
				       "safe.max_file_size = 500M\n"
				       "restricted.max_file_size = 7\n"
				       "[options]\n"
				       "default = denied\n"
				       "hardlinks = zone\n"
				       "profiles = project\n"
				       "[run]\n"
				       "deny_exec = curl, wget\n"
				       "deny_exec = nc\n"
				       "allow_exec=rm\n"
				       "env = PATH, LANG=C.UTF-8\n"
				       "expose = /usr/share/zoneinfo\n"
				       "timeout = 300\n"
				       "view_idle = 90\n"
				       "max_output = 1G\n"
				       "tmp_size = 64M\n"
				       "shm_size = unlimited\n");
	const char *const *l;

	(void)state;
	assert_int_equal(jf_policy_max_file_size(p, JF_SAFE), 500ull << 20);
	assert_int_equal(jf_policy_max_file_size(p, JF_RESTRICTED), 7);
	assert_int_equal(jf_policy_max_file_size(p, JF_DENIED), UINT64_MAX);
	assert_int_equal(jf_policy_default_zone(p), JF_DENIED);
	assert_int_equal(jf_policy_hardlinks(p), JF_HARDLINKS_ZONE);
	l = jf_policy_run_list(p, "deny_exec");
	assert_non_null(l);
	assert_string_equal(l[0], "curl");
	assert_string_equal(l[1], "wget");
	assert_string_equal(l[2], "nc");
	assert_null(l[3]);
	l = jf_policy_run_list(p, "allow_exec");
	assert_string_equal(l[0], "rm");
	assert_null(l[1]);
	l = jf_policy_run_list(p, "env");
	assert_string_equal(l[0], "PATH");
	assert_string_equal(l[1], "LANG=C.UTF-8");
	assert_null(l[2]);
	l = jf_policy_run_list(p, "expose");
	assert_string_equal(l[0], "/usr/share/zoneinfo");
	assert_null(jf_policy_run_list(p, "nope"));
	assert_int_equal(jf_policy_run_number(p, "timeout_ms"), 300000);
	assert_int_equal(jf_policy_run_number(p, "view_idle_ms"), 90000);
	assert_int_equal(jf_policy_run_number(p, "max_output"), 1ull << 30);
	assert_int_equal(jf_policy_run_number(p, "tmp_size"), 64ull << 20);
	assert_int_equal(jf_policy_run_number(p, "shm_size"), UINT64_MAX);
	assert_int_equal(jf_policy_run_number(p, "nope"), 0);
	/* profiles = project: secrets implied and first */
	assert_string_equal(jf_policy_rule(p, 0)->source, "secrets");
	DENIED_(p, ".env", "profile:secrets");
	RESTRICTED_(p, ".vscode/x", "profile:project");
	DENIED_(p, "src/main.c", "default");
	jf_policy_free(p);

	p = parse_ok("[limits]\nsafe.max_file_size = unlimited\nrestricted.max_file_size = 2k\n"
		     "[options]\nhardlinks = deny\n");
	assert_int_equal(jf_policy_max_file_size(p, JF_SAFE), UINT64_MAX);
	assert_int_equal(jf_policy_max_file_size(p, JF_RESTRICTED), 2048);
	assert_int_equal(jf_policy_hardlinks(p), JF_HARDLINKS_DENY);
	assert_int_equal(jf_policy_default_zone(p), JF_RESTRICTED); /* file default */
	l = jf_policy_run_list(p, "env");
	assert_non_null(l);
	assert_null(l[0]);
	assert_int_equal(jf_policy_run_number(p, "timeout_ms"), 0);
	jf_policy_free(p);

	/* listed order: project before secrets */
	p = parse_ok("[options]\nprofiles = project, secrets\n");
	assert_string_equal(jf_policy_rule(p, 0)->source, "project");
	jf_policy_free(p);
	/* -secrets and nothing else: no rules at all */
	p = parse_ok("[options]\nprofiles = -secrets\n");
	assert_null(jf_policy_rule(p, 0));
	RESTRICTED_(p, ".env", "default");
	jf_policy_free(p);
}

/* jf_policy_load of @text written to a file t.ini of a new directory. */
static int load_text(const char *text, struct jf_policy **p, char *err, size_t errsz)
{
	char dir[] = "/tmp/jf-test-policy-XXXXXX", path[64];
	FILE *f;
	int r;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.ini", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	r = jf_policy_load(path, p, err, errsz);
	unlink(path);
	rmdir(dir);
	/* messages name the file: keep only what follows the directory */
	if (r < 0 && strncmp(err, dir, strlen(dir)) == 0)
		memmove(err, err + strlen(dir) + 1, strlen(err + strlen(dir) + 1) + 1);
	return r;
}

static void load_err(const char *text, const char *message)
{
	struct jf_policy *p = (struct jf_policy *)0x1;
	char err[512] = "";

	assert_int_equal(load_text(text, &p, err, sizeof(err)), -EINVAL);
	assert_null(p);
	assert_string_equal(err, message);
}

static struct jf_policy *load_ok(const char *text)
{
	struct jf_policy *p = NULL;
	char err[512] = "";

	if (load_text(text, &p, err, sizeof(err)) != 0)
		fail_msg("load failed: %s", err);
	return p;
}

/*
 * A file whose rules make nothing SAFE and that names no default would make
 * the whole project read-only, while the built-in default makes it SAFE:
 * such a file is refused, saying why; with "default =" it is taken, and
 * "default = safe" gives the built-in default's zones plus the file's lines.
 * A text parsed from a buffer (a view's [run] rules) is not a file.
 */
static void test_no_default(void **state)
{
	static const char why[] =
		"t.ini: no rule and no 'default' makes anything SAFE, so the whole project "
		"would be read-only (the default zone of a policy file is restricted, that of "
		"the built-in default safe): add 'default = safe' under [options] for the "
		"built-in default's zones plus this file's rules, or 'default = restricted' "
		"for a read-only view";
	struct jf_policy *p, *builtin;
	const char *paths[] = {"src/main.c", ".env",	    ".git/config",
			       ".git/HEAD",  ".ssh/id_rsa", ".vscode/settings.json",
			       "README"};

	(void)state;
	load_err("[run]\nexpose = /opt/tool\n", why);
	load_err("", why);
	load_err("# nothing\n", why);
	load_err("[denied]\n.env\n", why);
	load_err("[restricted]\nvendor/\n[run]\ndeny_exec = curl\n", why);
	load_err("[limits]\nsafe.max_file_size = 1M\n[options]\nprofiles = secrets\n", why);
	/* a syntax error is told first */
	load_err("[run]\nexpose = /opt/tool\n[options]\nprofiles = nope\n",
		 "t.ini:4: unknown profile 'nope' (expected secrets, project, system, gitdir or "
		 "-secrets)");

	/* default = safe: the built-in default's verdicts, plus [run] */
	p = load_ok("[run]\nexpose = /opt/tool\n[options]\ndefault = safe\n");
	assert_int_equal(jf_policy_default(&builtin), 0);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct jf_verdict a, b;
		char ra[64], rb[64];

		jf_classify(p, paths[i], strlen(paths[i]), false, &a);
		jf_classify(builtin, paths[i], strlen(paths[i]), false, &b);
		jf_rule_format(a.rule, ra, sizeof(ra));
		jf_rule_format(b.rule, rb, sizeof(rb));
		print_message("%s: %s %s / %s %s\n", paths[i], jf_zone_name(a.zone), ra,
			      jf_zone_name(b.zone), rb);
		assert_int_equal(a.zone, b.zone);
		assert_string_equal(ra, rb);
	}
	SAFE_(p, "src/main.c", "default");
	assert_string_equal(jf_policy_run_list(p, "expose")[0], "/opt/tool");
	jf_policy_free(builtin);
	jf_policy_free(p);

	/* default = restricted, said: a read-only view, as asked */
	p = load_ok("[run]\nexpose = /opt/tool\n[options]\ndefault = restricted\n");
	RESTRICTED_(p, "src/main.c", "default");
	jf_policy_free(p);
	p = load_ok("[denied]\n.env\n[options]\ndefault = denied\n");
	DENIED_(p, "README", "default");
	jf_policy_free(p);
	/* a [safe] rule says it: the file's default covers only the rest */
	p = load_ok("[safe]\nsrc/\n[run]\ndeny_exec = curl\n");
	assert_int_equal(jf_policy_default_zone(p), JF_RESTRICTED);
	jf_policy_free(p);
	/* a view nothing can write: no [safe] rule, a default that is not safe */
	p = load_ok("[restricted]\n/\n[denied]\ncore\n[options]\ndefault = restricted\n"
		    "profiles = secrets\n");
	assert_false(jf_policy_can_write(p));
	jf_policy_free(p);
	/* the project profile's [safe] rule for git's hook samples alone writes nothing */
	p = load_ok("[restricted]\n/\n[options]\ndefault = restricted\n");
	assert_false(jf_policy_can_write(p));
	jf_policy_free(p);
	p = load_ok("[options]\ndefault = denied\nprofiles = secrets, system\n");
	assert_false(jf_policy_can_write(p));
	jf_policy_free(p);
	p = load_ok("[safe]\nsrc/\n[options]\ndefault = denied\n");
	assert_true(jf_policy_can_write(p));
	jf_policy_set_read_only(p, true);
	assert_false(jf_policy_can_write(p));
	jf_policy_free(p);
	assert_int_equal(jf_policy_default(&builtin), 0);
	assert_true(jf_policy_can_write(builtin));
	jf_policy_free(builtin);
	/* a buffer is not a file: the [run] rules a view answers parse alone */
	p = parse_ok("[run]\ndeny_exec = curl\n");
	jf_policy_free(p);
}

static void test_rule_format(void **state)
{
	struct jf_policy *p = parse_ok("[options]\nprofiles = -secrets\n[denied]\n\n# c\n"
				       "x.txt\n");
	const struct jf_rule *r = jf_policy_rule(p, 0);
	char buf[64];

	(void)state;
	assert_non_null(r);
	assert_int_equal(jf_rule_format(r, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "t.ini:6");
	assert_int_equal(r->line, 6);
	assert_int_equal(r->zone, JF_DENIED);
	assert_false(r->builtin);
	assert_string_equal(r->pattern, "x.txt");
	assert_int_equal(jf_rule_format(NULL, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "default");
	assert_int_equal(jf_rule_format(r, buf, 4), 7); /* truncated, snprintf-style */
	assert_string_equal(buf, "t.i");
	assert_null(jf_policy_rule(p, 1));
	jf_policy_free(p);
}

static void test_policy_load(void **state)
{
	char dir[] = "/tmp/jf-test-policy-XXXXXX", path[128], err[512];
	struct jf_policy *p = NULL;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/policy.ini", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[safe]\n/\n[restricted]\n/vendor/\n.git/hooks/\n[denied]\n.env*\n"
	      "!.env.example\n[limits]\nsafe.max_file_size = 500M\n[options]\ndefault = denied\n"
	      "profiles = secrets, project\n",
	      f);
	fclose(f);
	assert_int_equal(jf_policy_load(path, &p, err, sizeof(err)), 0);
	{
		char want[160];
		struct jf_verdict v;
		char buf[160];

		jf_classify(p, "vendor/a", 8, false, &v);
		jf_rule_format(v.rule, buf, sizeof(buf));
		snprintf(want, sizeof(want), "%s:4", path);
		assert_string_equal(buf, want);
		assert_int_equal(v.zone, JF_RESTRICTED);
	}
	{
		/* the file's ".env*" (line 7) re-denies what secrets excepted; its own
		 * "!.env.example" (line 8) re-allows it; "/" (line 2) makes it SAFE */
		struct jf_verdict v;
		char buf[160], want[160];

		jf_classify(p, ".env.example", 12, false, &v);
		jf_rule_format(v.rule, buf, sizeof(buf));
		snprintf(want, sizeof(want), "%s:2", path);
		assert_string_equal(buf, want);
		assert_int_equal(v.zone, JF_SAFE);
		jf_classify(p, ".env.local", 10, false, &v);
		jf_rule_format(v.rule, buf, sizeof(buf));
		snprintf(want, sizeof(want), "%s:7", path);
		assert_string_equal(buf, want);
		assert_int_equal(v.zone, JF_DENIED);
		assert_int_equal(jf_policy_default_zone(p), JF_DENIED);
	}
	jf_policy_free(p);
	/* errors name the file */
	snprintf(path, sizeof(path), "%s/missing.ini", dir);
	assert_int_equal(jf_policy_load(path, &p, err, sizeof(err)), -ENOENT);
	assert_null(p);
	{
		char want[256];

		snprintf(want, sizeof(want), "%s: No such file or directory", path);
		assert_string_equal(err, want);
	}
	assert_int_equal(jf_policy_load(dir, &p, err, sizeof(err)), -EISDIR);
	snprintf(path, sizeof(path), "%s/bad.ini", dir);
	f = fopen(path, "w");
	fputs("[safe]\n/\n[safee]\n", f);
	fclose(f);
	assert_int_equal(jf_policy_load(path, &p, err, sizeof(err)), -EINVAL);
	{
		char want[256];

		snprintf(want, sizeof(want), "%s:3: unknown section [safee]", path);
		assert_memory_equal(err, want, strlen(want));
	}
	unlink(path);
	snprintf(path, sizeof(path), "%s/policy.ini", dir);
	unlink(path);
	rmdir(dir);
}

/* The rules of a git index, packed-refs and config, which jailfs lets a checked
 * file be renamed onto: the profiles' own, not another rule naming the same
 * file. */
static void test_rule_git_check(void **state)
{
	struct jf_policy *p = parse_ok("[options]\nprofiles = project, gitdir\ndefault = safe\n"
				       "[restricted]\n/a/index\n");
	static const char *const index[] = {
		".git/index", "sub/.git/index",	  ".git/modules/s/index", ".git/worktrees/wt/index",
		"index",      "worktrees/x/index"};
	static const char *const refs[] = {".git/packed-refs", "packed-refs",
					   "sub/.git/packed-refs"};
	static const char *const configs[] = {".git/config",
					      "sub/.git/config",
					      ".git/config.worktree",
					      ".git/worktrees/wt/config.worktree",
					      "config",
					      "worktrees/x/config.worktree"};
	struct jf_verdict v;

	(void)state;
	for (size_t i = 0; i < sizeof(index) / sizeof(index[0]); i++) {
		jf_classify(p, index[i], strlen(index[i]), false, &v);
		if (v.zone != JF_RESTRICTED || jf_rule_git_check(v.rule) != JF_GIT_CHECK_INDEX)
			fail_msg("'%s': not a git index rule", index[i]);
	}
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		jf_classify(p, refs[i], strlen(refs[i]), false, &v);
		if (v.zone != JF_RESTRICTED ||
		    jf_rule_git_check(v.rule) != JF_GIT_CHECK_PACKED_REFS)
			fail_msg("'%s': not a packed-refs rule", refs[i]);
	}
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		jf_classify(p, configs[i], strlen(configs[i]), false, &v);
		if (v.zone != JF_RESTRICTED || jf_rule_git_check(v.rule) != JF_GIT_CHECK_CONFIG)
			fail_msg("'%s': not a git config rule", configs[i]);
	}
	/* config stays RESTRICTED: only a checked rename replaces it */
	jf_classify(p, ".git/config", strlen(".git/config"), false, &v);
	assert_int_equal(v.zone, JF_RESTRICTED);
	jf_classify(p, "a/config", strlen("a/config"), false, &v);
	assert_int_equal(jf_rule_git_check(v.rule), JF_GIT_CHECK_NONE);
	jf_classify(p, ".git/hooks/config", strlen(".git/hooks/config"), false, &v);
	assert_int_equal(jf_rule_git_check(v.rule), JF_GIT_CHECK_NONE);
	jf_classify(p, ".git/refs/replace/ab", strlen(".git/refs/replace/ab"), false, &v);
	assert_int_equal(v.zone, JF_RESTRICTED);
	assert_int_equal(jf_rule_git_check(v.rule), JF_GIT_CHECK_NONE);
	jf_classify(p, "a/index", strlen("a/index"), false, &v);
	assert_int_equal(v.zone, JF_RESTRICTED);
	assert_int_equal(jf_rule_git_check(v.rule), JF_GIT_CHECK_NONE);
	assert_int_equal(jf_rule_git_check(NULL), JF_GIT_CHECK_NONE);
	jf_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_file_protected),
		cmocka_unit_test(test_canon_basic),
		cmocka_unit_test(test_canon_root_componentwise),
		cmocka_unit_test(test_canon_dotdot),
		cmocka_unit_test(test_canon_encoded),
		cmocka_unit_test(test_canon_nul),
		cmocka_unit_test(test_canon_lengths),
		cmocka_unit_test(test_canon_control_lookalike_empty),
		cmocka_unit_test(test_refusal_strings),
		cmocka_unit_test(test_check_name),
		cmocka_unit_test(test_canon_c1_bidi),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_glob_match),
		cmocka_unit_test(test_seed_cases),
		cmocka_unit_test(test_default_policy),
		cmocka_unit_test(test_trailing_dots_spaces),
		cmocka_unit_test(test_profile_secrets),
		cmocka_unit_test(test_profile_project),
		cmocka_unit_test(test_profile_gitdir),
		cmocka_unit_test(test_rule_git_check),
		cmocka_unit_test(test_profile_gitfile),
		cmocka_unit_test(test_profile_system),
		cmocka_unit_test(test_starstar),
		cmocka_unit_test(test_anchoring),
		cmocka_unit_test(test_negation),
		cmocka_unit_test(test_restricted_exception),
		cmocka_unit_test(test_longest_match),
		cmocka_unit_test(test_dir_only),
		cmocka_unit_test(test_case_sensitivity),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_escapes_and_specials),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_values),
		cmocka_unit_test(test_run_format),
		cmocka_unit_test(test_no_default),
		cmocka_unit_test(test_rule_format),
		cmocka_unit_test(test_policy_load),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
