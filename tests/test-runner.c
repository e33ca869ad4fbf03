/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of jailrun's guardrails (runner/guard.c, runner/resolve.c):
 * every example of the seed and every bypass of the threat model's "Runner
 * guardrail bypasses to expect" list, against a real temporary project and
 * the real /usr of the machine. Nothing is spawned: guardrails are decided
 * before any process exists, so these hold whether or not node or perl are
 * installed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "jailrun.h"
#include "result.h"

static char proj[PATH_MAX / 2];
static struct jf_policy *policy;
static struct jr_view view;
static const char *no_allow[] = {NULL};
static const char **allow_list = no_allow;
static const char *deny_list[64];

static void write_file(const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	assert_true(strlen(rel) < 256);

	snprintf(p, sizeof(p), "%s/%s", proj, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void copy_file(const char *from, const char *rel)
{
	char p[PATH_MAX], buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	snprintf(p, sizeof(p), "%s/%s", proj, rel);
	out = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, n), n);
	close(in);
	close(out);
}

static int setup(void **state)
{
	char p[PATH_MAX];
	int i = 0;

	snprintf(proj, sizeof(proj), "/tmp/jf-runner-XXXXXX");
	assert_non_null(mkdtemp(proj));
	snprintf(p, sizeof(p), "%s/src", proj);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/tools", proj);
	mkdir(p, 0755);
	write_file("README", "hello\n");
	write_file("src/main.c", "int main(void) { return 0; }\n");
	write_file(".env", "API_TOKEN=secret\n");
	write_file("script.py", "print(1)\n");
	write_file("build.sh", "echo hi\n");
	copy_file("/usr/bin/rm", "tools/notrm");
	copy_file("/usr/bin/ls", "tools/myls");
	snprintf(p, sizeof(p), "%s/myrm", proj);
	assert_int_equal(symlink("/usr/bin/rm", p), 0);
	snprintf(p, sizeof(p), "%s/escape", proj);
	assert_int_equal(symlink("/etc", p), 0);

	assert_int_equal(jf_policy_default(&policy), 0);
	snprintf(view.project, sizeof(view.project), "%s", proj);
	snprintf(view.host, sizeof(view.host), "%s", proj);
	view.policy = policy;
	view.host_is_source = true;
	for (const char *const *d = jr_default_denylist; *d; d++)
		deny_list[i++] = *d;
	deny_list[i] = NULL;
	(void)state;
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", proj);
	assert_int_equal(system(cmd), 0);
	jf_policy_free(policy);
	(void)state;
	return 0;
}

static void init_guard(struct jr_guard *g, bool shell)
{
	*g = (struct jr_guard){.view = &view,
			       .cwd = proj,
			       .path_env = "/usr/local/bin:/usr/bin:/bin",
			       .home = "/tmp/home",
			       .shell = shell,
			       .deny = deny_list,
			       .allow = allow_list};
}

/* Check a NULL-terminated argv; returns the verdict. */
static struct jr_verdict run_argv(bool shell, const char *a0, va_list ap)
{
	char *argv[64];
	int argc = 0;
	struct jr_guard g;
	struct jr_verdict v;
	const char *a;

	argv[argc++] = (char *)a0;
	while ((a = va_arg(ap, const char *)))
		argv[argc++] = (char *)a;
	argv[argc] = NULL;
	init_guard(&g, shell);
	assert_int_equal(jr_guard_argv(&g, argc, argv, &v), 0);
	jr_guard_release(&g);
	return v;
}

static void denied_(const char *rule, bool shell, const char *a0, ...)
{
	va_list ap;
	struct jr_verdict v;

	va_start(ap, a0);
	v = run_argv(shell, a0, ap);
	va_end(ap);
	if (!v.denied)
		fail_msg("expected '%s ...' to be denied by %s, it was allowed", a0, rule);
	if (strcmp(v.rule, rule) != 0)
		fail_msg("'%s ...': expected rule %s, got %s (%s)", a0, rule, v.rule, v.reason);
}

static void allowed_(bool shell, const char *a0, ...)
{
	va_list ap;
	struct jr_verdict v;

	va_start(ap, a0);
	v = run_argv(shell, a0, ap);
	va_end(ap);
	if (v.denied)
		fail_msg("expected '%s ...' to be allowed, denied: %s [%s]", a0, v.reason, v.rule);
}

#define DENIED(rule, ...) denied_(rule, false, __VA_ARGS__, NULL)
#define ALLOWED(...) allowed_(false, __VA_ARGS__, NULL)
#define SH_DENIED(rule, cmd) denied_(rule, true, cmd, NULL)
#define SH_ALLOWED(cmd) allowed_(true, cmd, NULL)

static void test_strip_version(void **state)
{
	char out[64];

	jr_strip_version("python3.11", out, sizeof(out));
	assert_string_equal(out, "python");
	jr_strip_version("perl5.36", out, sizeof(out));
	assert_string_equal(out, "perl");
	jr_strip_version("lua5.4", out, sizeof(out));
	assert_string_equal(out, "lua");
	jr_strip_version("node", out, sizeof(out));
	assert_string_equal(out, "node");
	jr_strip_version("gcc-12", out, sizeof(out));
	assert_string_equal(out, "gcc");
	(void)state;
}

static void test_seed_denylist(void **state)
{
	DENIED("exec-denylist", "sudo", "ls");
	DENIED("exec-denylist", "su", "-");
	DENIED("exec-denylist", "doas", "ls");
	DENIED("exec-denylist", "rm", "-rf", "src");
	DENIED("exec-denylist", "/bin/rm", "-rf", "src");
	DENIED("exec-denylist", "/usr/bin/rm", "-rf", "src");
	DENIED("exec-denylist", "mkfs", "/dev/sda");
	DENIED("exec-denylist", "mkfs.ext4", "-F", "img");
	DENIED("exec-denylist", "dd", "if=/dev/zero", "of=x");
	DENIED("exec-denylist", "shred", "README");
	DENIED("exec-denylist", "mount", "--bind", "a", "b");
	DENIED("exec-denylist", "umount", "x");
	DENIED("exec-denylist", "reboot");
	DENIED("exec-denylist", "shutdown", "-h", "now");
	DENIED("chmod-recursive", "chmod", "-R", "777", "src");
	DENIED("chmod-recursive", "chmod", "-R", "0777", "src");
	DENIED("chmod-recursive", "chmod", "--recursive", "a+rwx", "src");
	DENIED("chmod-recursive", "chmod", "-vR", "o+w", "src");
	DENIED("chown-recursive", "chown", "-R", "nobody", "src");
	DENIED("mass-kill", "kill", "-9", "-1");
	DENIED("mass-kill", "kill", "-s", "KILL", "-1");
	DENIED("mass-kill", "kill", "--", "-1");
	ALLOWED("chmod", "777", "README");
	ALLOWED("chmod", "-R", "755", "src");
	ALLOWED("chmod", "-R", "go-w", "src");
	ALLOWED("kill", "-9", "12345");
	ALLOWED("kill", "-1", "12345"); /* SIGHUP to one process */
	(void)state;
}

static void test_seed_interpreters(void **state)
{
	DENIED("inline-code", "python3", "-c", "import os; os.system('rm -rf /')");
	DENIED("inline-code", "bash", "-c", "echo x");
	DENIED("inline-code", "sh", "-c", "echo x");
	DENIED("inline-code", "node", "-e", "1");
	DENIED("inline-code", "node", "--eval", "1");
	DENIED("inline-code", "node", "-p", "1");
	DENIED("inline-code", "perl", "-e", "1");
	DENIED("inline-code", "perl", "-E", "say 1");
	DENIED("inline-code", "ruby", "-e", "1");
	DENIED("inline-code", "php", "-r", "echo 1;");
	DENIED("inline-code", "lua", "-e", "x=1");
	DENIED("inline-code", "Rscript", "-e", "1");
	DENIED("inline-code", "osascript", "-e", "1");
	DENIED("inline-code", "deno", "eval", "1");
	DENIED("inline-code", "fish", "--command", "echo");
	DENIED("inline-code", "zsh", "-c", "echo");
	ALLOWED("python3", "script.py", "-c", "passed to the script");
	ALLOWED("sh", "build.sh");
	ALLOWED("bash", "-x", "build.sh");
	(void)state;
}

static void test_metachars(void **state)
{
	DENIED("metachar", "ls", ";", "id");
	DENIED("metachar", "echo", "a|b");
	DENIED("metachar", "echo", "a&");
	DENIED("metachar", "echo", "x>out");
	DENIED("metachar", "cat", "<README");
	DENIED("metachar", "echo", "`id`");
	DENIED("metachar", "echo", "$(id)");
	DENIED("metachar", "echo", "a\nb");
	ALLOWED("echo", "$HOME");
	(void)state;
}

static void test_paths(void **state)
{
	DENIED("path-outside-view", "cat", "../../etc/passwd");
	DENIED("path-outside-view", "cat", "/etc/passwd");
	DENIED("path-outside-view", "cat", "/root/.ssh/id_rsa");
	DENIED("path-outside-view", "cat", "escape/passwd"); /* symlink out of the view */
	DENIED("path-outside-view", "grep", "--file=../../etc/shadow", "x");
	DENIED("path-outside-view", "cc", "-I../../usr/include", "src/main.c");
	DENIED("path-outside-view", "ls", "~root/");
	DENIED("path-outside-view", "cat", "/proc/1/environ");
	DENIED("path-denied", "cat", ".env");
	DENIED("path-denied", "cat", "./src/../.env");
	DENIED("path-refused", "cat", "%2e%2e/x");
	ALLOWED("cat", "README");
	ALLOWED("cat", "src/main.c");
	ALLOWED("cat", "src/../README");
	ALLOWED("cat", proj); /* the project's own absolute path */
	ALLOWED("ls", "/tmp");
	ALLOWED("cp", "README", "/dev/null");
	ALLOWED("ls", "~/x");
	(void)state;
}

static void test_bypass_names(void **state)
{
	DENIED("inline-code", "python3.11", "-c", "1");
	DENIED("inline-code", "/usr/bin/python3.11", "-c", "1");
	DENIED("inline-code", "perl5.36", "-e", "1");
	DENIED("exec-denylist", "/proc/self/root/usr/bin/rm", "x");
	DENIED("exec-denylist", "/proc/1/root/bin/rm", "x");
	DENIED("exec-denylist", "./../../bin/rm", "x");
	DENIED("exec-denylist", "/usr/bin/../bin/./rm", "x");
	DENIED("exec-denylist", "./myrm", "x");	   /* symlink to rm */
	DENIED("exec-copy", "./tools/notrm", "x"); /* renamed copy */
	DENIED("exec-copy", "tools/notrm", "x");
	ALLOWED("./tools/myls", "-la"); /* copy of a harmless one */
	(void)state;
}

static void test_bypass_flags(void **state)
{
	DENIED("inline-code", "bash", "-ce", "echo");
	DENIED("inline-code", "bash", "-xc", "echo");
	DENIED("inline-code", "sh", "-o", "posix", "-c", "echo");
	DENIED("inline-code", "python3", "-W", "ignore", "-c", "1");
	DENIED("inline-code", "python3", "-Bc", "1");
	DENIED("inline-code", "perl", "-I", "lib", "-e", "1");
	DENIED("inline-code", "perl", "-ne", "print");
	DENIED("inline-code", "node", "--eval=1");
	DENIED("inline-code", "node", "-r", "./x.js");
	DENIED("inline-code", "bash", "--command", "echo");
	(void)state;
}

static void test_bypass_wrappers(void **state)
{
	DENIED("exec-denylist", "env", "rm", "x");
	DENIED("exec-denylist", "env", "-i", "PATH=/usr/bin", "rm", "x");
	DENIED("exec-denylist", "env", "-S", "rm -rf x");
	DENIED("exec-denylist", "env", "-Srm -rf x");
	DENIED("exec-denylist", "env", "--split-string=sudo ls");
	DENIED("exec-denylist", "env", "-u", "HOME", "--", "rm", "x");
	DENIED("inline-code", "env", "python3", "-c", "1");
	DENIED("exec-denylist", "nice", "rm", "x");
	DENIED("exec-denylist", "nice", "-n", "5", "rm", "x");
	DENIED("exec-denylist", "nohup", "rm", "x");
	DENIED("exec-denylist", "timeout", "5", "rm", "x");
	DENIED("exec-denylist", "timeout", "-s", "KILL", "-k", "1", "5", "rm", "x");
	DENIED("exec-denylist", "stdbuf", "-oL", "rm", "x");
	DENIED("exec-denylist", "stdbuf", "-o", "L", "rm", "x");
	DENIED("exec-denylist", "setsid", "-f", "rm", "x");
	DENIED("exec-denylist", "time", "-o", "t", "rm", "x");
	DENIED("exec-denylist", "xargs", "rm");
	DENIED("exec-denylist", "xargs", "-n", "1", "-P", "4", "rm", "-f");
	DENIED("exec-denylist", "find", ".", "-name", "*.o", "-exec", "rm", "{}", ";");
	DENIED("exec-denylist", "find", ".", "-execdir", "rm", "{}", "+");
	DENIED("exec-denylist", "find", ".", "-ok", "rm", "{}", ";");
	DENIED("find-delete", "find", ".", "-name", "*.o", "-delete");
	DENIED("exec-denylist", "busybox", "rm", "-rf", "x");
	DENIED("inline-code", "busybox", "sh", "-c", "echo");
	DENIED("git-alias", "git", "-c", "alias.x=!rm -rf .", "x");
	DENIED("git-alias", "git", "-c", "ALIAS.x= !sh", "x");
	DENIED("git-config", "git", "-c", "core.fsmonitor=./evil", "status");
	DENIED("git-config", "git", "-c", "core.sshCommand=evil", "fetch");
	DENIED("exec-denylist", "/lib64/ld-linux-x86-64.so.2", "/bin/rm", "x");
	DENIED("exec-denylist", "/lib64/ld-linux-x86-64.so.2", "--library-path", "/usr/lib",
	       "/usr/bin/rm", "x");
	DENIED("exec-denylist", "command", "rm", "x");
	DENIED("exec-denylist", "exec", "-a", "foo", "rm", "x");
	DENIED("exec-denylist", "nice", "env", "timeout", "5", "nohup", "rm", "x");
	DENIED("exec-denylist", "doas", "rm");
	ALLOWED("git", "-c", "alias.st=status", "st");
	ALLOWED("git", "log", "--oneline");
	ALLOWED("find", ".", "-name", "*.c", "-exec", "grep", "-l", "main", "{}", ";");
	ALLOWED("env", "FOO=bar", "ls");
	ALLOWED("timeout", "5", "ls", "-la");
	ALLOWED("xargs", "-n", "1", "echo");
	(void)state;
}

static void test_shell_mode(void **state)
{
	SH_ALLOWED("echo a | wc -c > /tmp/out; ls -la src 2>&1");
	SH_ALLOWED("bash -c 'echo hi'");
	SH_ALLOWED("for f in src/*.c; do wc -l \"$f\"; done");
	SH_DENIED("exec-denylist", "ls; rm -rf src");
	SH_DENIED("exec-denylist", "echo $(rm -rf src)");
	SH_DENIED("exec-denylist", "echo \"`sudo id`\"");
	SH_DENIED("exec-denylist", "true && r\\m -rf x");
	SH_DENIED("exec-denylist", "FOO=1 'rm' x");
	SH_DENIED("exec-denylist", "bash -c 'rm -rf x'");
	SH_DENIED("exec-denylist", "sh -c \"sh -c 'rm x'\"");
	SH_DENIED("exec-denylist", "eval rm -rf x");
	SH_DENIED("exec-denylist", "for f in *; do rm $f; done");
	SH_DENIED("inline-code", "python3 -c 'print(1)'");
	SH_DENIED("path-outside-view", "cat < /etc/shadow");
	SH_DENIED("path-outside-view", "echo x > ../../etc/cron.d/x");
	SH_DENIED("path-denied", "cat .env | head");
	SH_DENIED("mass-kill", "kill -9 -1");
	SH_DENIED("path-outside-view", "ls &> /etc/x");
	SH_DENIED("path-outside-view", "ls 2>>../../x");
	SH_DENIED("exec-denylist", "echo \"$(echo $(rm x))\"");
	SH_DENIED("exec-denylist", "x=1; (cd src && shred main.c)");
	SH_ALLOWED("ls 2>&1 >/dev/null | wc -l");
	SH_ALLOWED("cat <<EOF\nhello\nEOF");
	SH_ALLOWED("echo 'rm -rf /' # rm in a string and a comment");
	(void)state;
}

static void test_allow_and_deny_edits(void **state)
{
	const char *allow[] = {"rm", NULL};
	int i;

	allow_list = allow;
	ALLOWED("rm", "-f", "README");
	ALLOWED("env", "rm", "x");
	allow_list = no_allow;
	for (i = 0; deny_list[i]; i++)
		;
	deny_list[i] = "curl";
	deny_list[i + 1] = NULL;
	DENIED("exec-denylist", "curl", "http://example.com");
	DENIED("exec-denylist", "env", "curl", "x");
	deny_list[i] = NULL;
	ALLOWED("curl", "--version");
	(void)state;
}

static void test_resolve(void **state)
{
	char out[PATH_MAX];
	struct jr_chain ch;

	assert_int_equal(jr_resolve(&view, proj, "/proc/self/root/usr/bin", out, NULL), 0);
	assert_string_equal(out, "/usr/bin");
	assert_int_equal(jr_resolve(&view, proj, "/proc/self/cwd/src", out, NULL), 0);
	assert_true(strncmp(out, proj, strlen(proj)) == 0 && !strcmp(out + strlen(proj), "/src"));
	assert_int_equal(jr_find_exec(&view, proj, "/usr/bin:/bin", "python3", out, &ch), 0);
	assert_true(ch.n >= 1);
	/* .env is hidden while the raw source stands in for the view */
	snprintf(out, sizeof(out), "%s/.env", proj);
	{
		char host[PATH_MAX];

		assert_int_equal(jr_map(&view, out, host, sizeof(host)), -EACCES);
		assert_int_equal(jr_map(&view, "/home", host, sizeof(host)), -ENOENT);
		assert_int_equal(jr_map(&view, "/etc/shadow", host, sizeof(host)), -ENOENT);
		assert_int_equal(jr_map(&view, "/etc/passwd", host, sizeof(host)), 0);
	}
	(void)state;
}

static void utf8_case(const char *in, size_t n, const char *want)
{
	size_t len = 0;
	char *out = jr_utf8_sanitize(in, n, &len);

	assert_non_null(out);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(out, want, len);
	free(out);
}

static void test_utf8(void **state)
{
	utf8_case("plain", 5, "plain");
	utf8_case("\xc3\xa9t\xc3\xa9", 5, "\xc3\xa9t\xc3\xa9");		      /* été */
	utf8_case("\xff\xfeok", 4, "\xef\xbf\xbd\xef\xbf\xbdok");	      /* invalid bytes */
	utf8_case("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd");		      /* overlong '/' */
	utf8_case("\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* surrogate */
	utf8_case("\xf4\x90\x80\x80", 4,
		  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* > U+10FFFF */
	utf8_case("a\xe2\x82", 3, "a\xef\xbf\xbd\xef\xbf\xbd");	       /* cut by truncation */
	utf8_case("\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80");	       /* emoji */
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strip_version),
		cmocka_unit_test(test_seed_denylist),
		cmocka_unit_test(test_seed_interpreters),
		cmocka_unit_test(test_metachars),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_bypass_names),
		cmocka_unit_test(test_bypass_flags),
		cmocka_unit_test(test_bypass_wrappers),
		cmocka_unit_test(test_shell_mode),
		cmocka_unit_test(test_allow_and_deny_edits),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_utf8),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
