/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of policy/gitconfig.c, the check of a git config written in the
 * jail: every refused key, each written in the syntaxes git reads (mixed
 * case, [section "sub"], legacy [section.sub], quoted and escaped values
 * and subsections, continuation lines, comments, CRLF, a BOM, a key on the
 * header's line, a key without a value); the configs git itself writes for
 * everyday work, let through; and configs git would not parse, refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gitconfig.h"

/* A refused key: its documented name (jf_git_config_refused()), its parts,
 * and a value that makes it dangerous. */
static const struct sample {
	const char *name, *section, *sub, *key, *value;
} samples[] = {
	{"core.fsmonitor", "core", NULL, "fsMonitor", "./x"},
	{"core.hooksPath", "core", NULL, "hooksPath", "/tmp/h"},
	{"core.sshCommand", "core", NULL, "sshCommand", "sh -c x"},
	{"core.editor", "core", NULL, "editor", "./x"},
	{"core.pager", "core", NULL, "pager", "./x"},
	{"core.askPass", "core", NULL, "askPass", "./x"},
	{"core.gitProxy", "core", NULL, "gitProxy", "./x"},
	{"core.alternateRefsCommand", "core", NULL, "alternateRefsCommand", "./x"},
	{"core.virtualFilesystem", "core", NULL, "virtualFilesystem", "./x"},
	{"core.attributesFile", "core", NULL, "attributesFile", "/tmp/a"},
	{"core.excludesFile", "core", NULL, "excludesFile", "/tmp/a"},
	{"core.worktree", "core", NULL, "worktree", "/home/user"},
	{"sequence.editor", "sequence", NULL, "editor", "./x"},
	{"diff.external", "diff", NULL, "external", "./x"},
	{"diff.*.textconv", "diff", "Pdf", "textconv", "./x"},
	{"diff.*.command", "diff", "d", "command", "./x"},
	{"diff.orderFile", "diff", NULL, "orderFile", "/tmp/o"},
	{"merge.*.driver", "merge", "m", "driver", "./x %A"},
	{"filter.*", "filter", "lfs", "smudge", "./x"},
	{"credential.*", "credential", NULL, "helper", "./x"},
	{"gpg.program", "gpg", NULL, "program", "./x"},
	{"gpg.*.program", "gpg", "ssh", "program", "./x"},
	{"gpg.ssh.defaultKeyCommand", "gpg", "ssh", "defaultKeyCommand", "./x"},
	{"gpg.ssh.allowedSignersFile", "gpg", "ssh", "allowedSignersFile", "/tmp/a"},
	{"gpg.ssh.revocationFile", "gpg", "ssh", "revocationFile", "/tmp/a"},
	{"uploadpack.packObjectsHook", "uploadpack", NULL, "packObjectsHook", "./x"},
	{"alias.*", "alias", NULL, "st", "!./x"},
	{"include.path", "include", NULL, "path", "/tmp/c"},
	{"includeIf.*", "includeIf", "gitdir:/", "path", "/tmp/c"},
	{"hook.*", "hook", "h", "command", "./x"},
	{"remote.*.uploadpack", "remote", "origin", "uploadpack", "./x"},
	{"remote.*.receivepack", "remote", "origin", "receivepack", "./x"},
	{"remote.*.url (ext::)", "remote", "origin", "url", "ext::sh -c x"},
	{"remote.*.pushurl (ext::)", "remote", "origin", "pushurl", "EXT::sh -c x"},
	{"submodule.*.url (ext::)", "submodule", "s", "url", "ext::sh -c x"},
	{"submodule.*.update (!command)", "submodule", "s", "update", "!./x"},
	{"url.ext::*.insteadOf", "url", "ext::sh -c x", "insteadOf", "https://"},
	{"url.ext::*.pushInsteadOf", "url", "ext::sh -c x", "pushInsteadOf", "https://"},
	{"protocol.allow", "protocol", NULL, "allow", "always"},
	{"protocol.ext.allow", "protocol", "ext", "allow", "user"},
	{"pager.*", "pager", NULL, "log", "./x"},
	{"interactive.diffFilter", "interactive", NULL, "diffFilter", "./x"},
	{"web.browser", "web", NULL, "browser", "x"},
	{"help.browser", "help", NULL, "browser", "x"},
	{"browser.*.cmd", "browser", "b", "cmd", "./x"},
	{"browser.*.path", "browser", "b", "path", "./x"},
	{"man.*.cmd", "man", "m", "cmd", "./x"},
	{"man.*.path", "man", "m", "path", "./x"},
	{"sendemail.*", "sendemail", NULL, "smtpServer", "./x"},
	{"difftool.*.cmd", "difftool", "t", "cmd", "./x"},
	{"difftool.*.path", "difftool", "t", "path", "./x"},
	{"mergetool.*.cmd", "mergetool", "t", "cmd", "./x"},
	{"mergetool.*.path", "mergetool", "t", "path", "./x"},
	{"guitool.*", "guitool", "t", "cmd", "./x"},
	{"instaweb.*", "instaweb", NULL, "httpd", "./x"},
	{"tar.*.command", "tar", "tgz", "command", "./x"},
	{"trailer.*.command", "trailer", "t", "command", "./x"},
	{"trailer.*.cmd", "trailer", "t", "cmd", "./x"},
	{"svn.authorsProg", "svn", NULL, "authorsProg", "./x"},
	{"svn-remote.*.authorsProg", "svn-remote", "svn", "authorsProg", "./x"},
	{"lfs.customtransfer.*", "lfs", "customtransfer.t", "path", "./x"},
	{"lfs.extension.*", "lfs", "extension.e", "clean", "./x"},
	{"init.templateDir", "init", NULL, "templateDir", "/tmp/t"},
	{"commit.template", "commit", NULL, "template", "/etc/shadow"},
	{"format.signatureFile", "format", NULL, "signatureFile", "/tmp/s"},
	{"mailmap.file", "mailmap", NULL, "file", "/tmp/m"},
	{"blame.ignoreRevsFile", "blame", NULL, "ignoreRevsFile", "/tmp/r"},
	{"fsck.skipList", "fsck", NULL, "skipList", "/tmp/s"},
	{"fetch.fsck.skipList", "fetch", "fsck", "skipList", "/tmp/s"},
	{"receive.fsck.skipList", "receive", "fsck", "skipList", "/tmp/s"},
	{"http.*.cookieFile", "http", NULL, "cookieFile", "/tmp/c"},
	{"http.*.sslCert", "http", "https://h/", "sslCert", "/tmp/c"},
	{"http.*.sslKey", "http", NULL, "sslKey", "/tmp/c"},
	{"http.*.sslCAInfo", "http", NULL, "sslCAInfo", "/tmp/c"},
	{"http.*.sslCAPath", "http", NULL, "sslCAPath", "/tmp/c"},
	{"http.*.proxySSLCert", "http", NULL, "proxySSLCert", "/tmp/c"},
	{"http.*.proxySSLKey", "http", NULL, "proxySSLKey", "/tmp/c"},
	{"http.*.proxySSLCAInfo", "http", NULL, "proxySSLCAInfo", "/tmp/c"},
};

#define N_SAMPLES (sizeof(samples) / sizeof(samples[0]))

static int check(const char *text, const char *gitdir, char *key, const char **why)
{
	return jf_git_config_check((const unsigned char *)text, strlen(text), gitdir, key,
				   JF_GIT_KEY_MAX, why);
}

static void expect_refused(const char *text, const char *want_key)
{
	char key[JF_GIT_KEY_MAX];
	const char *why = NULL;

	if (check(text, ".git", key, &why) != -EINVAL || !why || strcmp(key, want_key) != 0)
		fail_msg("not refused as %s (got key \"%s\", %s):\n%s", want_key, key,
			 why ? why : "no reason", text);
}

static void expect_allowed(const char *text, const char *gitdir)
{
	char key[JF_GIT_KEY_MAX];
	const char *why = NULL;
	int r = check(text, gitdir, key, &why);

	if (r != 0)
		fail_msg("refused (%d, key \"%s\", %s):\n%s", r, key, why ? why : "-", text);
}

/* The key as the check names it: section and key lower case, sub as is. */
static void key_name(const struct sample *s, const char *sub, char *out, size_t size)
{
	char lsec[64], lkey[64];
	size_t i;

	for (i = 0; s->section[i] && i < sizeof(lsec) - 1; i++)
		lsec[i] = (char)(s->section[i] |
				 (s->section[i] >= 'A' && s->section[i] <= 'Z' ? 0x20 : 0));
	lsec[i] = '\0';
	for (i = 0; s->key[i] && i < sizeof(lkey) - 1; i++)
		lkey[i] = (char)(s->key[i] | (s->key[i] >= 'A' && s->key[i] <= 'Z' ? 0x20 : 0));
	lkey[i] = '\0';
	if (sub)
		snprintf(out, size, "%s.%s.%s", lsec, sub, lkey);
	else
		snprintf(out, size, "%s.%s", lsec, lkey);
}

/* "[section "sub"]" with every byte of sub escaped, as git reads it. */
static void escaped_header(const struct sample *s, char *out, size_t size)
{
	size_t n = (size_t)snprintf(out, size, "[%s \"", s->section);

	for (const char *p = s->sub; *p && n + 3 < size; p++) {
		if (*p != '\\' && *p != '"' && (p - s->sub) % 2 == 0)
			out[n++] = '\\';
		out[n++] = *p;
	}
	snprintf(out + n, size - n, "\"]");
}

static bool legacy_ok(const char *sub)
{
	for (const char *p = sub; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
		      *p == '.'))
			return false;
	return true;
}

static void one_sample(const struct sample *s)
{
	char text[1024], hdr[256], key[256], cont[128];

	if (s->sub) {
		snprintf(hdr, sizeof(hdr), "[%s \"%s\"]", s->section, s->sub);
	} else {
		snprintf(hdr, sizeof(hdr), "[%s]", s->section);
	}
	key_name(s, s->sub, key, sizeof(key));
	/* plain, after an ordinary section */
	snprintf(text, sizeof(text), "[user]\n\temail = a@b\n%s\n\t%s = %s\n", hdr, s->key,
		 s->value);
	expect_refused(text, key);
	/* the section and key in upper case: both fold */
	snprintf(text, sizeof(text), "%s\n%s=%s", hdr, s->key, s->value);
	for (char *p = text + 1; *p && *p != ' ' && *p != ']'; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 0x20);
	expect_refused(text, key);
	/* quoted, with a continuation line in it, a comment after it, CRLF */
	snprintf(cont, sizeof(cont), "%.1s\\\r\n%s", s->value, s->value + 1);
	snprintf(text, sizeof(text), "%s\r\n  %s = \"%s\" ; comment\r\n", hdr, s->key, cont);
	expect_refused(text, key);
	/* on the header's line, after a BOM, no space */
	snprintf(text, sizeof(text), "\xef\xbb\xbf%s%s=%s", hdr, s->key, s->value);
	expect_refused(text, key);
	/* the subsection escaped byte by byte, and legacy [section.sub] */
	if (s->sub) {
		escaped_header(s, hdr, sizeof(hdr));
		snprintf(text, sizeof(text), "%s\n%s = %s\n", hdr, s->key, s->value);
		expect_refused(text, key);
	}
	if (s->sub && legacy_ok(s->sub)) {
		snprintf(text, sizeof(text), "[%s.%s]\n%s = %s\n", s->section, s->sub, s->key,
			 s->value);
		expect_refused(text, key);
	}
}

static void test_every_key_refused(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_SAMPLES; i++)
		one_sample(&samples[i]);
}

/* Every key of the list has a sample above, and every sample is a key of it. */
static void test_list_covered(void **state)
{
	const char *name;
	size_t i, j;

	(void)state;
	for (i = 0; (name = jf_git_config_refused(i)); i++) {
		for (j = 0; j < N_SAMPLES && strcmp(samples[j].name, name) != 0; j++)
			;
		if (j == N_SAMPLES)
			fail_msg("no test of %s", name);
	}
	assert_int_equal(i, N_SAMPLES);
}

/* Keys without a value mean true: still set. */
static void test_no_value(void **state)
{
	(void)state;
	expect_refused("[core]\n\tfsmonitor\n", "core.fsmonitor");
	expect_refused("[core]\n\tpager", "core.pager");
	expect_refused("[filter \"x\"]\n\trequired\n", "filter.x.required");
}

/* The subsection keeps its case: [gpg "SSH"] is not gpg.ssh, but the legacy
 * form folds it. */
static void test_case_rules(void **state)
{
	(void)state;
	expect_allowed("[gpg \"SSH\"]\n\tdefaultKeyCommand = ./x\n", ".git");
	expect_refused("[gpg.SSH]\n\tdefaultKeyCommand = ./x\n", "gpg.ssh.defaultkeycommand");
	expect_refused("[Diff \"PDF\"]\n\tTextConv = ./x\n", "diff.PDF.textconv");
	expect_refused("[CORE]\n\tFSMONITOR = ./x\n", "core.fsmonitor");
	expect_refused("[url \"Ext::sh\"]\n\tinsteadOf = https://\n", "url.Ext::sh.insteadof");
}

/* Values that make the key harmless, and the configs git writes. */
static void test_allowed(void **state)
{
	(void)state;
	expect_allowed("", ".git");
	expect_allowed("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
		       "\tbare = false\n\tlogallrefupdates = true\n"
		       "[remote \"origin\"]\n\turl = /tmp/bare.git\n"
		       "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
		       "[branch \"x\"]\n\tremote = origin\n\tmerge = refs/heads/x\n"
		       "[user]\n\temail = a@b.c\n\tname = A \"B\" C\n"
		       "[submodule \"sub\"]\n\tactive = true\n\turl = ../sub.git\n"
		       "\tupdate = checkout\n",
		       ".git");
	expect_allowed("[pager]\n\tlog = false\n\tdiff\n\tbranch = 0\n", ".git");
	expect_allowed("[protocol]\n\tallow = never\n[protocol \"ext\"]\n\tallow = never\n",
		       ".git");
	expect_allowed("[protocol \"https\"]\n\tallow = always\n", ".git");
	expect_allowed("[url \"https://mirror/\"]\n\tinsteadOf = https://github.com/\n", ".git");
	expect_allowed("[user]\n\tname = a ; [core] fsmonitor = ./x\n", ".git");
	expect_allowed("[user]\n\tname = a\\\nfsmonitor = ./x\n", ".git");
	expect_allowed("# [core]\n; fsmonitor = x\n[user]\n\tname = \"a # b ; c\"\n", ".git");
	/* a submodule's git directory names its work tree */
	expect_allowed("[core]\n\tworktree = ../../../sub\n", ".git/modules/sub");
	expect_allowed("[core]\n\tworktree = ../../../../a/b\n", "x/.git/modules/sub");
}

static void test_worktree_outside(void **state)
{
	(void)state;
	expect_refused("[core]\n\tworktree = ../../../..\n", "core.worktree");
	expect_refused("[core]\n\tworktree = .\n", "core.worktree");
	expect_refused("[core]\n\tworktree = hooks\n", "core.worktree");
	expect_refused("[core]\n\tworktree = ../x/.GIT/y\n", "core.worktree");
	expect_refused("[core]\n\tworktree = ~/x\n", "core.worktree");
	expect_refused("[core]\n\tworktree\n", "core.worktree");
	expect_refused("[core]\n\tworktree = \"\"\n", "core.worktree");
}

static void expect_unparsed(const char *text, size_t len)
{
	char key[JF_GIT_KEY_MAX];
	const char *why = NULL;
	int r = jf_git_config_check((const unsigned char *)text, len, ".git", key, sizeof(key),
				    &why);

	if (r != -EINVAL || !why || key[0])
		fail_msg("parsed (%d, key \"%s\"): %s", r, key, text);
}

/* What git would not parse is refused: the parser fails closed. */
static void test_syntax_errors(void **state)
{
	static const char *const bad[] = {
		"[user]\n\tname = \"a\n",
		"[user]\n\tname = a\\q\n",
		"[user",
		"[user \"x]\n",
		"[user \"x\"\n",
		"[user \"x\"y]\n",
		"[user x]\n",
		"[]\n",
		"[us_er]\n",
		"[user]\n\tna_me = x\n",
		"[user]\n\tname # c\n",
		"name = x\n",
		"[user]\n\t1name = x\n",
		"\xef\xbbx",
		"[user]\n\tname = \"a\\\n",
		"[user]\f\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_unparsed(bad[i], strlen(bad[i]));
	expect_unparsed("[user]\n\tname = a\0b\n", 17);
}

/* A long key is named cut, not overflowing. */
static void test_long_key(void **state)
{
	char text[600], key[JF_GIT_KEY_MAX];
	const char *why;

	(void)state;
	snprintf(text, sizeof(text), "[filter \"%0400d\"]\n\tsmudge = x\n", 0);
	assert_int_equal(check(text, ".git", key, &why), -EINVAL);
	assert_int_equal(strlen(key), JF_GIT_KEY_MAX - 1);
	assert_string_equal(key + JF_GIT_KEY_MAX - 4, "...");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_key_refused), cmocka_unit_test(test_list_covered),
		cmocka_unit_test(test_no_value),	  cmocka_unit_test(test_case_rules),
		cmocka_unit_test(test_allowed),		  cmocka_unit_test(test_worktree_outside),
		cmocka_unit_test(test_syntax_errors),	  cmocka_unit_test(test_long_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
