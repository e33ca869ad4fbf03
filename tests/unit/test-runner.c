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
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "capture.h"
#include "gitdir.h"
#include "guard-lang.h"
#include "guard-walk.h"
#include "guard.h"
#include "home.h"
#include "policy.h"
#include "resolve.h"
#include "result-util.h"
#include "result.h"
#include "sysdirs.h"
#include "view.h"

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
	setenv("JF_T", proj, 1);
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

/* Denied by @rule with exactly @reason. */
static void denied_reason_(const char *rule, const char *reason, bool shell, const char *a0, ...)
{
	va_list ap;
	struct jr_verdict v;

	va_start(ap, a0);
	v = run_argv(shell, a0, ap);
	va_end(ap);
	if (!v.denied)
		fail_msg("expected '%s ...' to be denied by %s, it was allowed", a0, rule);
	if (strcmp(v.rule, rule) != 0 || strcmp(v.reason, reason) != 0)
		fail_msg("'%s ...': expected [%s] %s, got [%s] %s", a0, rule, reason, v.rule,
			 v.reason);
}

#define DENIED(rule, ...) denied_(rule, false, __VA_ARGS__, NULL)
#define DENIED_R(rule, reason, ...) denied_reason_(rule, reason, false, __VA_ARGS__, NULL)
#define SH_DENIED_R(rule, reason, cmd) denied_reason_(rule, reason, true, cmd, NULL)
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
	/* no shell reads an argv command's arguments: only the command name */
	DENIED("metachar", "ls;id");
	DENIED("metachar", "make && make test");
	DENIED("metachar", "echo $(id)");
	DENIED("metachar", "ls\nid");
	ALLOWED("ls", ";", "id");
	ALLOWED("echo", "a|b");
	ALLOWED("echo", "a&");
	ALLOWED("echo", "x>out");
	ALLOWED("cat", "<README");
	ALLOWED("echo", "`id`");
	ALLOWED("echo", "$(id)");
	ALLOWED("echo", "a\nb");
	ALLOWED("echo", "$HOME");
	(void)state;
}

static void test_paths(void **state)
{
	DENIED("path-outside-view", "cat", "../../etc/passwd");
	DENIED("path-outside-view", "cat", "/etc/shadow");
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

/* Outside the project, path arguments may name what the jail shows: the
 * system directories and /etc entries it binds read-only (the table in
 * resolve.c that sandbox.c mounts), its own /proc, /tmp and /dev nodes, and
 * [run] expose. Escapes out of the project are still refused, with reasons. */
static void test_paths_system(void **state)
{
	char p[PATH_MAX], reason[PATH_MAX + 64];
	const char *expose[] = {"/opt/sdk", NULL};

	ALLOWED("cat", "/usr/include/stdio.h");
	ALLOWED("head", "/proc/cpuinfo");
	ALLOWED("python3", "/usr/lib/python3.11/this.py");
	ALLOWED("cat", "/etc/os-release"); /* a symlink into /usr/lib */
	ALLOWED("cat", "/etc/passwd");
	ALLOWED("cat", "/proc/self/status");
	ALLOWED("ls", "/");
	ALLOWED("cc", "-I/usr/include/x86_64-linux-gnu", "-o/tmp/a.out", "src/main.c");
	for (const char *const *d = jf_system_dirs; *d; d++)
		ALLOWED("ls", *d);
	DENIED_R("path-outside-view", "path '../../etc/passwd' leaves the project (/etc/passwd)",
		 "cat", "../../etc/passwd");
	DENIED_R("path-outside-view", "path 'escape/passwd' leaves the project (/etc/passwd)",
		 "cat", "escape/passwd");
	snprintf(p, sizeof(p), "%s/../../etc/passwd", proj);
	snprintf(reason, sizeof(reason), "path '%s' leaves the project (/etc/passwd)", p);
	DENIED_R("path-outside-view", reason, "cat", p);
	DENIED_R("path-outside-view",
		 "path '/etc/shadow' is not in the jail (/etc/shadow): outside the project it "
		 "has only the system directories, part of /etc, /proc, /tmp, /dev nodes and "
		 "[run] expose paths",
		 "cat", "/etc/shadow");
	DENIED("path-outside-view", "cat", "/home/user/.ssh/id_rsa");
	DENIED("path-outside-view", "ls", "/run/docker.sock");
	DENIED("path-outside-view", "cat", "/proc/1/environ");
	DENIED("path-outside-view", "cat", "/proc/self/root/etc/shadow");
	DENIED("path-outside-view", "cat", "/opt/sdk/include/x.h");
	view.expose = expose;
	ALLOWED("cat", "/opt/sdk/include/x.h");
	view.expose = NULL;
	(void)state;
}

/* --shell: the walker follows cd (and subshells), reads echo/printf
 * arguments as text, and skips here-document bodies (checking what an
 * unquoted one expands). */
static void test_shell_cwd(void **state)
{
	SH_ALLOWED("echo \"// wip\" >> src/main.c");
	SH_ALLOWED("printf '%s\\n' '../../etc/shadow' >> src/main.c");
	ALLOWED("echo", "// wip");
	SH_ALLOWED("cd src && npm init -y && cd ..");
	SH_ALLOWED("cd src && cat ../README && cd .. && cat README");
	SH_ALLOWED("mkdir -p build && cd build && cat ../README");
	SH_ALLOWED("cd /usr/include && cat stdio.h");
	SH_ALLOWED("cd src; cd -; cat src/main.c");
	SH_ALLOWED("cd; ls");
	SH_DENIED_R("path-outside-view", "path '..' leaves the project (/tmp)", "cd ..");
	SH_DENIED("path-outside-view", "cd src && cat ../../x");
	SH_DENIED("path-outside-view", "cd src && cd .. && cat ../x");
	SH_DENIED("path-outside-view", "(cd src && make) && cat ../x");
	SH_DENIED("path-outside-view", "cd src | true; cat ../x");
	SH_DENIED("path-outside-view", "cd src & cat ../x");
	SH_DENIED("path-outside-view", "cd \"$DIR\" && cat ../../etc/passwd");
	SH_DENIED("path-outside-view", "cd src; cd -; cat ../x");
	SH_DENIED("path-outside-view", "echo x > ../../etc/cron.d/x");
	SH_ALLOWED("cat > notes.txt <<'EOF'\nrm -rf /\n// wip ../../etc/shadow\nEOF\nls");
	SH_ALLOWED("cat <<-EOF >notes.txt\n\tsudo id\n\tEOF\nls");
	SH_ALLOWED("cat <<'EOF'\n$(rm -rf x)\nEOF");
	SH_DENIED("exec-denylist", "cat <<EOF\nsafe $(rm -rf x)\nEOF");
	SH_DENIED("exec-denylist", "cat <<EOF\nhello\nEOF\nrm x");
	SH_DENIED("exec-denylist", "cat <<-EOF\n\thi\n\tEOF\nrm x");
	SH_DENIED("exec-denylist", "cat <<A <<B\na\nA\nb\nB\nrm x");
	SH_DENIED("inline-code", "python3 <<EOF\nimport os\nEOF");
	/* << in arithmetic is a shift: what follows is still commands */
	SH_DENIED("exec-denylist", "(( x = 1 << 2 ))\nrm -rf x\n2");
	SH_DENIED("exec-denylist", "for ((i = 1; i << 2; i++)); do rm x; done");
	SH_DENIED("exec-denylist", "(( $(rm x) ))");
	SH_ALLOWED("echo $((1 << 4)) && (( n = 2 << 1 ))");
	(void)state;
}

/* --source: the view's root is the git work tree holding the directory (a
 * .git directory, or the .git file of a linked work tree), found upwards. */
static void test_git_top(void **state)
{
	char p[PATH_MAX], top[PATH_MAX], want[PATH_MAX];

	snprintf(p, sizeof(p), "%s/repo/src/deep", proj);
	assert_int_equal(system("mkdir -p \"$JF_T\"/repo/.git \"$JF_T\"/repo/src/deep "
				"\"$JF_T\"/wt/sub \"$JF_T\"/plain/x && "
				"echo 'gitdir: /elsewhere' >\"$JF_T\"/wt/.git"),
			 0);
	assert_int_equal(jr_view_git_top(p, top), 0);
	snprintf(want, sizeof(want), "%s/repo", proj);
	assert_string_equal(top, want);
	snprintf(p, sizeof(p), "%s/repo", proj);
	assert_int_equal(jr_view_git_top(p, top), 0); /* the directory itself */
	assert_string_equal(top, want);
	snprintf(p, sizeof(p), "%s/wt/sub", proj);
	snprintf(want, sizeof(want), "%s/wt", proj);
	assert_int_equal(jr_view_git_top(p, top), 0);
	assert_string_equal(top, want);
	snprintf(p, sizeof(p), "%s/plain/x", proj);
	assert_int_equal(jr_view_git_top(p, top), -ENOENT);
	(void)state;
}

/* jr_gitdir_common on the project @rel of $JF_T: its return value, and
 * @common holds what it found. */
static int gitdir_of(const char *rel, char *common)
{
	char p[PATH_MAX], err[PATH_MAX * 2 + 128] = "";
	int r;

	snprintf(p, sizeof(p), "%s/%s", proj, rel);
	common[0] = '\0';
	r = jr_gitdir_common(p, common, err, sizeof(err));
	assert_true(r >= 0 || err[0]); /* a refusal says why */
	return r;
}

/* A linked work tree's main git directory: found only when the .git file,
 * worktrees/<name>/commondir and worktrees/<name>/gitdir agree. */
static void test_gitdir_common(void **state)
{
	char common[PATH_MAX], want[PATH_MAX];

	assert_int_equal(system("cd \"$JF_T\" && mkdir -p gd/main/.git/objects gd/main/.git/refs "
				"gd/main/.git/worktrees/wt gd/main/.git/worktrees/wt2 gd/wt gd/wt2 "
				"gd/main/.git/modules/sub gd/sub gd/fake && "
				"echo ref >gd/main/.git/HEAD && "
				"echo ../.. >gd/main/.git/worktrees/wt/commondir && "
				"echo \"$JF_T/gd/wt/.git\" >gd/main/.git/worktrees/wt/gitdir && "
				"echo \"gitdir: $JF_T/gd/main/.git/worktrees/wt\" >gd/wt/.git && "
				"echo ../.. >gd/main/.git/worktrees/wt2/commondir && "
				"echo ../../../../wt2/.git >gd/main/.git/worktrees/wt2/gitdir && "
				"echo 'gitdir: ../main/.git/worktrees/wt2' >gd/wt2/.git && "
				"echo 'gitdir: ../main/.git/modules/sub' >gd/sub/.git"),
			 0);
	snprintf(want, sizeof(want), "%s/gd/main/.git", proj);
	assert_int_equal(gitdir_of("gd/wt", common), 1);
	assert_string_equal(common, want);
	assert_int_equal(gitdir_of("gd/wt2", common), 1); /* relative paths both ways */
	assert_string_equal(common, want);
	assert_int_equal(gitdir_of("gd/main", common), 0); /* a .git directory */
	assert_int_equal(gitdir_of("gd/sub", common), 0);  /* a submodule's */
	/* another work tree's directory: its gitdir does not name this .git */
	assert_int_equal(system("cd \"$JF_T\" && echo \"gitdir: $JF_T/gd/main/.git/worktrees/wt\" "
				">gd/fake/.git"),
			 0);
	assert_int_equal(gitdir_of("gd/fake", common), -EINVAL);
	assert_int_equal(system("cd \"$JF_T\" && echo 'gitdir: /etc' >gd/fake/.git"), 0);
	assert_int_equal(gitdir_of("gd/fake", common), 0); /* not a worktrees/<name> */
	assert_int_equal(system("cd \"$JF_T\" && printf 'gitdir /x\\n' >gd/fake/.git"), 0);
	assert_int_equal(gitdir_of("gd/fake", common), -EINVAL);
	assert_int_equal(system("cd \"$JF_T\" && echo 'gitdir: nowhere' >gd/fake/.git"), 0);
	assert_int_equal(gitdir_of("gd/fake", common), -EINVAL);
	/* commondir leading elsewhere */
	assert_int_equal(system("cd \"$JF_T\" && echo /tmp >gd/main/.git/worktrees/wt/commondir"),
			 0);
	assert_int_equal(gitdir_of("gd/wt", common), -EINVAL);
	assert_int_equal(system("cd \"$JF_T\" && rm gd/main/.git/worktrees/wt/commondir"), 0);
	assert_int_equal(gitdir_of("gd/wt", common), -EINVAL);
	assert_int_equal(
		system("cd \"$JF_T\" && echo ../.. >gd/main/.git/worktrees/wt/commondir && "
		       "rmdir gd/main/.git/refs"),
		0);
	assert_int_equal(gitdir_of("gd/wt", common), -EINVAL); /* not a git directory */
	assert_int_equal(system("cd \"$JF_T\" && mkdir gd/main/.git/refs"), 0);
	(void)state;
}

/* Placeholders: the other work trees' .git files, not the project's own. */
static void test_gitdir_placeholders(void **state)
{
	struct jr_view v = {.policy = policy, .host_is_source = true};
	struct jr_view gd = {.policy = policy, .host_is_source = true};
	char want[PATH_MAX], **ph;

	snprintf(v.project, sizeof(v.project), "%s/gd/wt", proj);
	snprintf(v.host, sizeof(v.host), "%s", v.project);
	assert_int_equal(gitdir_of("gd/wt", gd.project), 1);
	snprintf(gd.host, sizeof(gd.host), "%s", gd.project);
	v.gitdir = &gd;
	ph = jr_gitdir_placeholders(gd.project, &v);
	assert_non_null(ph);
	/* wt2's gitdir is relative: only plain absolute paths are taken */
	assert_null(ph[0]);
	jr_strv_free(ph);
	assert_int_equal(system("cd \"$JF_T\" && echo \"$JF_T/gd/wt2/.git\" "
				">gd/main/.git/worktrees/wt2/gitdir"),
			 0);
	ph = jr_gitdir_placeholders(gd.project, &v);
	snprintf(want, sizeof(want), "%s/gd/wt2/.git", proj);
	assert_non_null(ph);
	assert_non_null(ph[0]);
	assert_string_equal(ph[0], want);
	assert_null(ph[1]);
	jr_strv_free(ph);
	(void)state;
}

/* --root: the view's [run] rules as the daemon answers getxattr. A plain
 * directory stands in for the view here (the real daemon: test-jailrun.sh). */
static void test_view_run_rules(void **state)
{
	const char *text = "[run]\ndeny_exec = curl, wget\ntimeout = 7\n";
	char p[PATH_MAX], err[512] = "";
	struct jf_policy *r = NULL;

	snprintf(p, sizeof(p), "%s/src", proj);
	assert_int_equal(jr_view_run_rules(p, &r, err, sizeof(err)), 0);
	assert_null(r); /* nothing to carry */
	assert_int_equal(setxattr(p, JF_RUN_XATTR, text, strlen(text), 0), 0);
	assert_int_equal(jr_view_run_rules(p, &r, err, sizeof(err)), 0);
	assert_non_null(r);
	assert_string_equal(jf_policy_run_list(r, "deny_exec")[1], "wget");
	assert_int_equal(jf_policy_run_number(r, "timeout_ms"), 7000);
	jf_policy_free(r);
	assert_int_equal(setxattr(p, JF_RUN_XATTR, "[run]\nbogus = 1\n", 16, 0), 0);
	assert_true(jr_view_run_rules(p, &r, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "(the view's [run] rules):2: unknown key 'bogus'"));
	assert_int_equal(removexattr(p, JF_RUN_XATTR), 0);
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

/* Red-team report: wrappers that were not looked through. The wrapper table
 * (guard.c, struct wrapper) describes each one's options; these pin it. */
static void test_redteam_wrappers(void **state)
{
	DENIED("exec-denylist", "prlimit", "rm", "-rf", "x");
	DENIED("exec-denylist", "prlimit", "--nofile=10", "-p", "1", "rm", "x");
	DENIED("exec-denylist", "setpriv", "rm", "-rf", "x");
	DENIED("exec-denylist", "setpriv", "--reuid", "0", "--groups", "0", "rm", "x");
	DENIED_R("inline-code", "shell command via sg", "sg", "root", "rm -rf x");
	DENIED_R("inline-code", "shell command via sg -c", "sg", "-", "root", "-c", "rm -rf x");
	DENIED("exec-denylist", "rlwrap", "rm", "x");
	DENIED("exec-denylist", "rlwrap", "-f", "words", "-S", "> ", "rm", "x");
	DENIED_R("inline-code", "shell command via rlwrap -z", "rlwrap", "-z", "rm x", "cat");
	DENIED("exec-denylist", "valgrind", "rm", "x");
	DENIED("exec-denylist", "valgrind", "--tool=memcheck", "-q", "rm", "x");
	DENIED_R("inline-code",
		 "debugger command runs a program: shell command (gdb -ex 'shell rm x')", "gdb",
		 "-batch", "-ex", "shell rm x");
	DENIED_R("inline-code", "debugger command runs a program: shell escape (gdb -ex '!rm x')",
		 "gdb", "-batch", "-ex", "!rm x");
	DENIED_R("inline-code",
		 "debugger command runs a program: shell command (gdb --eval-command=shell id)",
		 "gdb", "--eval-command=shell id");
	DENIED("inline-code", "gdb", "README", "-ex", "python import os"); /* after the file */
	DENIED("inline-code", "gdb", "-iex", "pipe bt | sh", "README");
	DENIED("inline-code", "gdb", "-eval-comm", "call (int)system(\"id\")", "README");
	DENIED("exec-denylist", "gdb", "--args", "rm", "-rf", "x");
	DENIED("exec-denylist", "gdb", "-batch", "-ex", "run", "/usr/bin/rm");
	DENIED("exec-denylist", "chroot", "/", "rm", "x");
	DENIED("exec-denylist", "chroot", "--userspec", "0:0", "/", "rm", "x");
	DENIED("exec-denylist", "unshare", "-r", "rm", "x");
	DENIED("exec-denylist", "unshare", "--map-user", "0", "-w", "src", "rm", "x");
	DENIED("exec-denylist", "nsenter", "-t", "1", "-m", "rm", "x");
	DENIED("exec-denylist", "flock", "lockfile", "rm", "x");
	DENIED("exec-denylist", "flock", "-w", "5", "lockfile", "rm", "x");
	DENIED_R("inline-code", "shell command via flock -c", "flock", "lockfile", "-c", "rm x");
	DENIED("exec-denylist", "ionice", "-c", "3", "rm", "x");
	DENIED("exec-denylist", "chrt", "-f", "5", "rm", "x");
	DENIED("exec-denylist", "taskset", "-c", "1", "rm", "x");
	DENIED_R("inline-code", "shell command via watch", "watch", "-n", "1", "rm", "x");
	DENIED("exec-denylist", "watch", "-x", "rm", "x");
	DENIED_R("inline-code", "shell command via script -c", "script", "-q", "-c", "rm x");
	DENIED("inline-code", "script", "log.txt", "--command=rm x"); /* options permute */
	DENIED("exec-denylist", "su", "-c", "rm x");
	DENIED("exec-denylist", "runuser", "-u", "nobody", "rm", "x");
	DENIED("exec-denylist", "strace", "-f", "-o", "log", "rm", "x");
	DENIED("exec-denylist", "strace", "-e", "trace=file", "rm", "x");
	DENIED("exec-denylist", "ltrace", "-n", "2", "rm", "x");
	DENIED("exec-denylist", "sudo", "ls");
	DENIED("exec-denylist", "timeout", "--", "5", "rm", "x");
	DENIED("exec-denylist", "env", "--spl=rm -rf x"); /* getopt_long abbreviation */
	DENIED("exec-denylist", "nice", "--adj", "5", "rm", "x");
	DENIED("exec-denylist", "prlimit", "setpriv", "chrt", "5", "unshare", "rm", "x");
	DENIED_R("inline-code", "shell command via eval", "eval", "ls");
	ALLOWED("prlimit", "--nofile=100", "ls");
	ALLOWED("valgrind", "--leak-check=full", "./tools/myls");
	ALLOWED("gdb", "-batch", "-ex", "run", "-ex", "bt", "./tools/myls");
	ALLOWED("gdb", "-batch", "-ex", "set follow-exec-mode new", "-ex", "catch exec", "README");
	ALLOWED("flock", "lockfile", "ls");
	ALLOWED("watch", "-x", "ls");
	ALLOWED("script", "-q", "log.txt");
	ALLOWED("command", "-v", "rm");
	ALLOWED("strace", "-f", "-e", "trace=file", "ls");
	(void)state;
}

/* With --shell, a wrapper's command string is checked like sh -c's. */
static void test_redteam_wrappers_shell(void **state)
{
	SH_DENIED("exec-denylist", "sg root 'rm -rf x'");
	SH_DENIED("exec-denylist", "watch -n 1 'ls; rm x'");
	SH_DENIED("exec-denylist", "flock lockfile -c 'rm x'");
	SH_DENIED("exec-denylist", "script -q -c 'sudo id' log");
	SH_DENIED_R("inline-code", "shell command from elsewhere (sh -c without a string)",
		    "echo 'rm x' | xargs sh -c");
	SH_ALLOWED("sg root 'ls -la'");
	SH_ALLOWED("flock lockfile -c 'make -j4'");
	(void)state;
}

/* Red-team report: inline code in the languages of awk, vim, sed, tar, gdb,
 * PowerShell and make. */
static void test_redteam_inline(void **state)
{
	DENIED_R("inline-code", "awk program runs a command: system() (awk)", "awk",
		 "BEGIN{system(\"rm x\")}");
	DENIED_R("inline-code", "awk program runs a command: '|' command pipe (gawk)", "gawk",
		 "{print | \"sh\"}", "README");
	DENIED("inline-code", "mawk", "BEGIN{\"id\" | getline x}");
	DENIED("inline-code", "nawk", "-F:", "BEGIN { system (\"id\") }");
	DENIED("inline-code", "gawk", "-e", "BEGIN{system(\"id\")}");
	DENIED("inline-code", "gawk", "--source=BEGIN{system(\"id\")}");
	DENIED_R("inline-code", "interpreter inline code (vim -c)", "vim", "-c", "!rm x", "README");
	DENIED_R("inline-code", "interpreter inline code (vim +!rm x)", "vim", "README", "+!rm x");
	DENIED("inline-code", "vi", "--cmd", "py3 import os");
	DENIED("inline-code", "nvim", "-es", "-c", "q");
	DENIED("inline-code", "ex", "+/x/", "README");
	DENIED_R("inline-code", "sed script runs a command with e (sed 'e rm x')", "sed", "e rm x",
		 "README");
	DENIED("inline-code", "sed", "s/a/rm x/e", "README");
	DENIED("inline-code", "sed", "-n", "1e id", "README");
	DENIED("inline-code", "sed", "-ne", "s/x/y/pe", "README");
	DENIED("inline-code", "sed", "-e", "s/x/y/", "--expression=$e id", "README");
	DENIED("inline-code", "sed", "README", "-e", "/x/e id"); /* options permute */
	DENIED_R("inline-code", "tar runs a command (--to-command=sh)", "tar", "--to-command=sh",
		 "-xf", "x.tar");
	DENIED("inline-code", "tar", "--to-c", "sh", "-xf", "x.tar");
	DENIED("inline-code", "tar", "--checkpoint=1", "--checkpoint-action=exec=id", "-cf",
	       "x.tar", "README");
	DENIED_R("inline-code", "tar runs a command (-I, option I)", "tar", "-I", "sh", "-xf",
		 "x.tar");
	DENIED("inline-code", "tar", "--use-compress-program=sh", "-xf", "x.tar");
	DENIED("inline-code", "tar", "xIf", "sh", "x.tar"); /* old-style options */
	DENIED("inline-code", "tar", "--checkpoint", "-I", "sh", "-cf", "x.tar", "README");
	DENIED_R("inline-code", "interpreter inline code (pwsh -Command)", "pwsh", "-Command", "x");
	DENIED("inline-code", "pwsh", "-c", "x");
	DENIED("inline-code", "pwsh", "-NoProfile", "-EncodedCommand", "eA==");
	DENIED("inline-code", "powershell", "-command", "x");
	DENIED_R("inline-code", "interpreter inline code (make -E)", "make", "-E", "x");
	DENIED("inline-code", "make", "all", "--ev=x");
	ALLOWED("awk", "-F:", "{print $1}", "README");
	ALLOWED("awk", "-f", "prog.awk", "README");
	ALLOWED("vim", "README");
	ALLOWED("vim", "+10", "README");
	ALLOWED("sed", "s/e/x/g", "README");
	ALLOWED("sed", "-i.bak", "/exec/d", "README");
	ALLOWED("sed", "y/abe/xyz/", "README");
	ALLOWED("sed", "--sandbox", "e id", "README");
	ALLOWED("tar", "-czf", "x.tar.gz", "README");
	ALLOWED("tar", "xf", "x.tar");
	ALLOWED("tar", "-C", "src", "-xf", "x.tar");
	ALLOWED("pwsh", "-NoProfile", "-File", "s.ps1", "-c");
	ALLOWED("pwsh", "-ExecutionPolicy", "Bypass", "s.ps1");
	ALLOWED("make", "-j4", "all");
	(void)state;
}

/* In --shell mode awk programs may hold '|' and ';': the scanner decides. */
static void test_redteam_inline_shell(void **state)
{
	SH_ALLOWED("awk '/a|b/ {print}' README");
	SH_ALLOWED("awk '$1 ~ /x|y/ || NR > 1 {print \"a|b\"; n++}' README");
	SH_ALLOWED("awk 'BEGIN{x = 4 / 2; print x}'");
	SH_ALLOWED("sed 'a\\\nexec' README");
	SH_DENIED("inline-code", "awk '{ print | \"sh\" }' README");
	SH_DENIED("inline-code", "ls | awk '{system($0)}'");
	SH_DENIED("inline-code", "sed -n '1e id' README");
	(void)state;
}

/* A program fed to an interpreter on stdin by the string itself (pipe, here-
 * document, here-string) is inline code too. In argv mode stdin is /dev/null
 * (--json) or the caller's own, so `python3 -` alone is allowed. */
static void test_stdin_programs(void **state)
{
	SH_DENIED_R("inline-code",
		    "interpreter reads its program from a pipe or here-document (sh)",
		    "echo 'rm -rf x' | sh");
	SH_DENIED("inline-code", "echo 'import os' | python3 -");
	SH_DENIED("inline-code", "python3 <<EOF\nimport os\nEOF");
	SH_DENIED("inline-code", "perl <<< 'print 1'");
	SH_DENIED("inline-code", "cat x | bash -s arg");
	SH_DENIED("inline-code", "ls |& env python3");
	SH_ALLOWED("cat README | python3 script.py");
	SH_ALLOWED("ls | sh -c 'wc -l'");
	SH_ALLOWED("python3 < script.py");
	SH_ALLOWED("ls || python3 script.py");
	ALLOWED("python3", "-");
	ALLOWED("perl", "-x", "script.py");
	(void)state;
}

static void test_lang_scanners(void **state)
{
	assert_null(jr_awk_runs_code("{ print $1 }"));
	assert_null(jr_awk_runs_code("/sys|tem/ { print \"system(\" } # system("));
	assert_null(jr_awk_runs_code("{ mysystem(1); a = b || c }"));
	assert_string_equal(jr_awk_runs_code("{ print |& \"cmd\" }"), "'|' command pipe");
	assert_string_equal(jr_awk_runs_code("NR==1{ system(\"id\") }"), "system()");
	assert_false(jr_sed_runs_code("s/e/E/g; /e/d; y/e/f/"));
	assert_false(jr_sed_runs_code("s/x/y/w e.txt"));
	assert_false(jr_sed_runs_code("/exec/ { p; }"));
	assert_false(jr_sed_runs_code("a\\\nexec"));
	assert_true(jr_sed_runs_code("$!{ e date\n}"));
	assert_true(jr_sed_runs_code("s|a|b|ge"));
	assert_true(jr_sed_runs_code("0~3 e id"));
	assert_true(jr_sed_runs_code("/a/,/b/ s/x/y/2e"));
	assert_null(jr_gdb_runs_code("bt full"));
	assert_null(jr_gdb_runs_code("show version"));
	assert_non_null(jr_gdb_runs_code("she id"));
	assert_non_null(jr_gdb_runs_code("py import os"));
	assert_non_null(jr_gdb_runs_code("print execve(\"/bin/sh\", 0, 0)"));
	assert_int_equal(jr_pwsh_param("-Command"), JR_PWSH_INLINE);
	assert_int_equal(jr_pwsh_param("-ENC"), JR_PWSH_INLINE);
	assert_int_equal(jr_pwsh_param("--cwa"), JR_PWSH_INLINE);
	assert_int_equal(jr_pwsh_param("-f"), JR_PWSH_FILE);
	assert_int_equal(jr_pwsh_param("-ExecutionPolicy"), JR_PWSH_VALUE);
	assert_int_equal(jr_pwsh_param("-ex"), JR_PWSH_VALUE);
	assert_int_equal(jr_pwsh_param("-NoProfile"), 0);
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

/* The jail home (home.c): where it is, what it refuses, what the jail maps
 * there, the exposed directories' DENIED entries, a command only the host
 * has. */
static void test_home(void **state)
{
	static struct jr_home h;
	struct jr_view v = view;
	char base[] = "/var/tmp/jf-home-unit-XXXXXX", p[PATH_MAX], host[PATH_MAX],
	     err[PATH_MAX * 3];
	const char *extra[3] = {p, NULL, NULL};
	char ssh[PATH_MAX];
	struct stat st;

	assert_non_null(mkdtemp(base));
	setenv("HOME", base, 1);
	/* inside the project: refused */
	snprintf(p, sizeof(p), "%s/h", proj);
	assert_int_equal(jr_home_setup(&h, proj, NULL, p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "inside the project"));
	/* the default: $XDG_STATE_HOME/jailrun/homes/NAME-HASH, 0700; HOME in the
	 * jail is the user's own (outside /tmp, which the jail makes itself) */
	snprintf(p, sizeof(p), "%s/state", base);
	setenv("XDG_STATE_HOME", p, 1);
	assert_int_equal(jr_home_setup(&h, proj, NULL, NULL, err, sizeof(err)), 0);
	unsetenv("XDG_STATE_HOME");
	assert_string_equal(h.jail, base);
	snprintf(p, sizeof(p), "%s/state/jailrun/homes/%s-", base, strrchr(proj, '/') + 1);
	assert_true(strncmp(h.host, p, strlen(p)) == 0 && strlen(h.host) == strlen(p) + 16);
	assert_int_equal(stat(h.host, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* a directory holding a DENIED entry: masked; a DENIED one: left out */
	snprintf(p, sizeof(p), "%s/tool", base);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(ssh, sizeof(ssh), "%s/tool/secrets", base);
	assert_int_equal(mkdir(ssh, 0755), 0);
	snprintf(ssh, sizeof(ssh), "%s/.ssh", base);
	assert_int_equal(mkdir(ssh, 0700), 0);
	extra[1] = ssh;
	assert_int_equal(jr_home_expose(&h, policy, extra), 0);
	assert_int_equal(h.nexpose, 1);
	assert_string_equal(h.expose[0], p);
	assert_int_equal(h.nmasks, 1);
	assert_true(h.masks[0].is_dir);
	v.home = &h;
	v.expose = (const char *const *)h.expose;
	/* what the jail maps: HOME to the home's directory, masks hidden */
	snprintf(err, sizeof(err), "%s/.npm/x", base);
	assert_int_equal(jr_map(&v, err, host, sizeof(host)), 0);
	snprintf(err, sizeof(err), "%s/.npm/x", h.host);
	assert_string_equal(host, err);
	assert_int_equal(jr_map(&v, h.masks[0].path, host, sizeof(host)), -EACCES);
	snprintf(err, sizeof(err), "%s/bin", p);
	assert_int_equal(jr_map(&v, err, host, sizeof(host)), 0);
	assert_string_equal(host, err);
	/* a command only the host has */
	assert_int_equal(jr_home_missing("ls", "rel:/nonexistent:/usr/bin:/bin", p, sizeof(p)), 0);
	assert_string_equal(p, "/usr/bin");
	assert_int_equal(jr_home_missing("./ls", "/usr/bin", p, sizeof(p)), -ENOENT);
	assert_int_equal(jr_home_missing("no-such-cmd-x", "/usr/bin", p, sizeof(p)), -ENOENT);
	jr_home_release(&h);
	snprintf(err, sizeof(err), "rm -rf '%s'", base);
	assert_int_equal(system(err), 0);
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

static void b64_case(const char *in, size_t n, const char *want)
{
	char *out = jr_base64(in, n);

	assert_non_null(out);
	assert_string_equal(out, want);
	free(out);
}

static void test_base64(void **state)
{
	/* RFC 4648 section 10 test vectors */
	b64_case("", 0, "");
	b64_case("f", 1, "Zg==");
	b64_case("fo", 2, "Zm8=");
	b64_case("foo", 3, "Zm9v");
	b64_case("foob", 4, "Zm9vYg==");
	b64_case("fooba", 5, "Zm9vYmE=");
	b64_case("foobar", 6, "Zm9vYmFy");
	b64_case("\xff\x00\xfe", 3, "/wD+");
	assert_true(jr_utf8_clean("\xc3\xa9t\xc3\xa9", 5));
	assert_false(jr_utf8_clean("a\0b", 3));
	assert_false(jr_utf8_clean("a\xff", 2));
	assert_false(jr_utf8_clean("a\xe2\x82", 3));
	(void)state;
}

/* Print a result whose stdout holds an invalid byte and a NUL; return the
 * parsed JSON object (caller decrefs). */
static json_t *print_result(const char *out, size_t n, const char *err, size_t en)
{
	struct jr_outcome oc = {0};
	struct jr_report r = {.outcome = &oc};

	oc.out.buf = (char *)out;
	oc.out.len = n;
	oc.err.buf = (char *)err;
	oc.err.len = en;
	return ru_print_report(&r);
}

/* jailrun's own failures are results too: error, reason, and exit_code 2
 * for a usage error, 125 otherwise. */
static void test_json_error(void **state)
{
	static const int status[] = {JR_EXIT_USAGE, 0};
	static const int want[] = {2, 125};

	for (int i = 0; i < 2; i++) {
		struct jr_report r = {.error = "--timeout: not a number",
				      .error_status = status[i]};
		json_t *o = ru_print_report(&r);

		assert_non_null(o);
		assert_int_equal(json_integer_value(json_object_get(o, "exit_code")), want[i]);
		assert_string_equal(json_string_value(json_object_get(o, "error")),
				    "--timeout: not a number");
		assert_string_equal(json_string_value(json_object_get(o, "reason")),
				    "--timeout: not a number");
		assert_true(json_is_false(json_object_get(o, "denied")));
		json_decref(o);
	}
	(void)state;
}

static void test_json_lossless(void **state)
{
	json_t *o = print_result("a\xff"
				 "b\0c\n",
				 6, "clean \xc3\xa9\n", 9);
	const char *b64;

	assert_non_null(o);
	/* the string stays valid UTF-8: U+FFFD for the bad byte, NUL kept */
	assert_int_equal(json_string_length(json_object_get(o, "stdout")), 8);
	assert_memory_equal(json_string_value(json_object_get(o, "stdout")),
			    "a\xef\xbf\xbd"
			    "b\0c\n",
			    8);
	/* the exact bytes travel in base64 */
	b64 = json_string_value(json_object_get(o, "stdout_b64"));
	assert_non_null(b64);
	assert_string_equal(b64, "Yf9iAGMK");
	/* a clean stream has no base64 copy */
	assert_true(json_is_null(json_object_get(o, "stderr_b64")));
	assert_string_equal(json_string_value(json_object_get(o, "stderr")), "clean \xc3\xa9\n");
	json_decref(o);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strip_version),
		cmocka_unit_test(test_home),
		cmocka_unit_test(test_seed_denylist),
		cmocka_unit_test(test_seed_interpreters),
		cmocka_unit_test(test_metachars),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_paths_system),
		cmocka_unit_test(test_shell_cwd),
		cmocka_unit_test(test_git_top),
		cmocka_unit_test(test_gitdir_common),
		cmocka_unit_test(test_gitdir_placeholders),
		cmocka_unit_test(test_view_run_rules),
		cmocka_unit_test(test_bypass_names),
		cmocka_unit_test(test_bypass_flags),
		cmocka_unit_test(test_bypass_wrappers),
		cmocka_unit_test(test_shell_mode),
		cmocka_unit_test(test_redteam_wrappers),
		cmocka_unit_test(test_redteam_wrappers_shell),
		cmocka_unit_test(test_redteam_inline),
		cmocka_unit_test(test_redteam_inline_shell),
		cmocka_unit_test(test_stdin_programs),
		cmocka_unit_test(test_lang_scanners),
		cmocka_unit_test(test_allow_and_deny_edits),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_json_lossless),
		cmocka_unit_test(test_json_error),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
