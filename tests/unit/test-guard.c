/* SPDX-License-Identifier: MIT */
/*
 * Table-driven test of jailrun's guardrails (runner/guard*.c) against the
 * ways around them: each row is a command line (argv, or a --shell string),
 * the environment the command would get where it matters, and the expected
 * verdict: refused by which rule, or allowed. Bypasses and ordinary work sit
 * side by side, so a check that closes a bypass by refusing `make` or
 * `npm test` fails here too. Every refused row's hint (runner/hint.c) must
 * say what was refused, by which rule, and what to do instead. Nothing is
 * spawned: a real temporary project, the real /usr of the machine.
 */
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

#include "guard-walk.h"
#include "guard.h"
#include "hint.h"
#include "policy.h"
#include "resolve.h"

#define MAX_WORDS 16

struct row {
	const char *rule; /* expected rule, NULL: allowed */
	bool shell;	  /* words[0] is a --shell string */
	const char *words[MAX_WORDS];
	const char *env[4]; /* the command's environment (--env, [run] env) */
};

#define DENY(rule, ...)                                                                            \
	{                                                                                          \
		rule, false, {__VA_ARGS__, NULL},                                                  \
		{                                                                                  \
			NULL                                                                       \
		}                                                                                  \
	}
#define DENY_ENV(rule, env, ...)                                                                   \
	{                                                                                          \
		rule, false, {__VA_ARGS__, NULL},                                                  \
		{                                                                                  \
			env, NULL                                                                  \
		}                                                                                  \
	}
#define DENY_SH(rule, cmd)                                                                         \
	{                                                                                          \
		rule, true, {cmd, NULL},                                                           \
		{                                                                                  \
			NULL                                                                       \
		}                                                                                  \
	}
#define ALLOW(...)                                                                                 \
	{                                                                                          \
		NULL, false, {__VA_ARGS__, NULL},                                                  \
		{                                                                                  \
			NULL                                                                       \
		}                                                                                  \
	}
#define ALLOW_ENV(env, ...)                                                                        \
	{                                                                                          \
		NULL, false, {__VA_ARGS__, NULL},                                                  \
		{                                                                                  \
			env, NULL                                                                  \
		}                                                                                  \
	}
#define ALLOW_SH(cmd)                                                                              \
	{                                                                                          \
		NULL, true, {cmd, NULL},                                                           \
		{                                                                                  \
			NULL                                                                       \
		}                                                                                  \
	}

static const struct row rows[] = {
	/* python -m MODULE: modules whose operands are code */
	DENY("inline-code", "python3", "-m", "timeit", "__import__('os').system('id')"),
	DENY("inline-code", "python3", "-mtimeit", "-s", "import os", "pass"),
	DENY("inline-code", "python3", "-m", "pdb", "-c", "import os", "script.py"),
	DENY("inline-code", "python3", "-m", "cProfile", "-m", "timeit", "pass"),
	DENY("inline-code", "python3", "-m", "trace", "--count", "--module", "timeit", "pass"),
	DENY("inline-code", "python3", "-m", "runpy", "timeit", "pass"),
	DENY("inline-code", "python3", "-X", "dev", "-Im", "timeit", "pass"),
	DENY("inline-code", "python3", "-m", "IPython", "-c", "import os"),
	ALLOW("python3", "-m", "runpy", "pytest", "-q"),
	DENY_SH("inline-code", "python3 - <<EOF\nimport os\nEOF"),
	DENY_SH("inline-code", "python3 /dev/stdin <<EOF\nimport os\nEOF"),
	DENY_SH("inline-code", "python3 -m code <<EOF\nimport os\nEOF"),
	ALLOW("python3", "-m", "pytest", "-q"),
	ALLOW("python3", "-m", "venv", ".venv"),
	ALLOW("python3", "-m", "pip", "install", "-e", "."),
	ALLOW("python3", "-m", "cProfile", "-o", "prof.out", "script.py"),
	ALLOW("python3", "-m", "pdb", "script.py"),
	ALLOW("python3", "script.py"),
	/* node: code in a data: URL, NODE_OPTIONS */
	DENY("inline-code", "node", "--import", "data:text/javascript,process.exit(1)", "app.js"),
	DENY("inline-code", "node", "--import=data:text/javascript,1", "app.js"),
	DENY("inline-code", "node", "--loader", "data:text/javascript,1", "app.js"),
	DENY("inline-code", "node", "--experimental-loader=data:text/javascript,1", "app.js"),
	DENY("inline-code", "node", "data:text/javascript,1"),
	DENY("inline-code", "env", "NODE_OPTIONS=--import=data:text/javascript,1", "node",
	     "app.js"),
	DENY_ENV("inline-code", "NODE_OPTIONS=--require ./hook.js", "npm", "test"),
	DENY_SH("inline-code", "NODE_OPTIONS='-e 1' npm test"),
	ALLOW("node", "app.js"),
	ALLOW("node", "--import", "./register.js", "app.js"),
	ALLOW("node", "--test"),
	ALLOW_ENV("NODE_OPTIONS=--max-old-space-size=4096", "npm", "test"),
	/* deno: eval anywhere, data: URLs */
	DENY("inline-code", "deno", "repl", "--eval", "Deno.exit()"),
	DENY("inline-code", "deno", "run", "data:text/javascript,1"),
	ALLOW("deno", "run", "main.ts"),
	ALLOW("deno", "test"),
	/* perl -M text goes into a `use` statement */
	DENY("inline-code", "perl", "-MPOSIX system(q(id))", "script.pl"),
	DENY("inline-code", "perl", "-wmstrict;system(1)", "script.pl"),
	DENY("inline-code", "perl", "-Mstrict;system(1)", "script.pl"),
	DENY("inline-code", "perl", "-d:Trace;system(1)", "script.pl"),
	DENY("inline-code", "perl", "-lne", "print"),
	DENY("inline-code", "perl", "-0777", "-ne", "print"),
	DENY("inline-code", "perl", "-i.bak", "-pe", "s/a/b/", "README"),
	DENY("inline-code", "perl", "-F:", "-lane", "print"),
	ALLOW("perl", "-Mstrict", "-MList::Util=sum,max", "script.pl"),
	ALLOW("perl", "-w", "-Ilib", "-d:NYTProf", "script.pl"),
	ALLOW("perl", "-l", "-0777", "script.pl"),
	ALLOW("perl", "-0xffe", "script.pl"), /* hex digits, not -e */
	/* awk, sed, make: a program file that is stdin or a shell-made fd */
	DENY_SH("inline-code", "awk -f - <<EOF\nBEGIN { system(\"id\") }\nEOF"),
	DENY_SH("inline-code", "awk -f /dev/stdin README <<EOF\nBEGIN { system(\"id\") }\nEOF"),
	DENY_SH("inline-code", "echo 'BEGIN{system(\"id\")}' | gawk --file=/dev/fd/0"),
	DENY_SH("inline-code", "sed -f - README <<EOF\n1e id\nEOF"),
	DENY_SH("inline-code", "make -f - <<EOF\nall:\n\tid\nEOF"),
	ALLOW_SH("awk -f prog.awk README"),
	ALLOW_SH("awk '{print $1}' README | sort"),
	ALLOW("make"),
	ALLOW("make", "-j4", "all"),
	ALLOW("make", "-f", "Makefile", "test"),
	/* argv mode: no shell reads the arguments, so their metacharacters are
	 * text; only where a shell does read them (sh -c, eval, watch, flock -c)
	 * are they shell syntax, refused or checked as such */
	ALLOW("rg", "a|b", "src"),
	ALLOW("grep", "--", "->", "README"),
	ALLOW("git", "log", "--format=%h <%ae>"),
	ALLOW("grep", "-E", "x;y|z&w", "README"),
	ALLOW("echo", "a; rm -rf src", "`id`", "$(id)", "a\nb"),
	ALLOW("find", ".", "-name", "*.c", "-exec", "grep", "-l", "a|b", "{}", ";"),
	DENY("metachar", "make && make test"),
	DENY("metachar", "ls;id"),
	DENY("inline-code", "sh", "-c", "ls | wc -l"),
	DENY("inline-code", "bash", "-c", "ls; id"),
	DENY("inline-code", "eval", "ls;", "id"),
	DENY("inline-code", "watch", "ls | wc -l"),
	DENY("inline-code", "flock", "lock", "-c", "ls; id"),
	DENY("exec-denylist", "xargs", "rm", "a|b"),
	DENY_SH("exec-denylist", "sh -c 'ls | rm x'"),
	DENY_SH("exec-denylist", "eval 'ls; rm x'"),
	ALLOW_SH("rg 'a|b' src"),
	/* cmake -E: rm and the commands it runs */
	DENY("exec-denylist", "cmake", "-E", "rm", "-rf", "build"),
	DENY("exec-denylist", "cmake", "-E", "remove", "x"),
	DENY("exec-denylist", "cmake", "-E", "remove_directory", "build"),
	DENY("exec-denylist", "cmake", "-E", "env", "FOO=1", "rm", "x"),
	DENY("exec-denylist", "cmake", "-E", "chdir", "src", "rm", "x"),
	DENY("exec-denylist", "cmake", "-E", "time", "rm", "x"),
	DENY("inline-code", "cmake", "-E", "env", "python3", "-c", "1"),
	ALLOW("cmake", "-E", "make_directory", "build"),
	ALLOW("cmake", "-E", "copy", "README", "README.bak"),
	ALLOW("cmake", "-S", ".", "-B", "build"),
	ALLOW("cmake", "--build", "build"),
	ALLOW("cmake", "-E", "chdir", "src", "ls"),
	/* sqlite3: dot-commands that run a program or load code */
	DENY("inline-code", "sqlite3", "app.db", ".system rm -rf x"),
	DENY("inline-code", "sqlite3", "app.db", ".shell id"),
	DENY("inline-code", "sqlite3", "-cmd", ".sh id", "app.db"),
	DENY("inline-code", "sqlite3", "app.db", ".once |sh"),
	DENY("inline-code", "sqlite3", "app.db", ".output '|id'"),
	DENY("inline-code", "sqlite3", "app.db", ".load ./evil"),
	DENY("inline-code", "sqlite3", "app.db", "  .sy id"),
	DENY("inline-code", "sqlite3", "app.db", "SELECT EDIT ('x', 'id')"),
	DENY_SH("inline-code", "sqlite3 app.db <<EOF\n.system id\nEOF"),
	ALLOW_SH("sqlite3 app.db 'select 1;'"),
	ALLOW("sqlite3", "app.db", ".tables"),
	ALLOW("sqlite3", "-cmd", ".mode csv", "app.db", "select 1"),
	ALLOW_SH("sqlite3 app.db < schema.sql"),
	/* npx -c, npm exec -c: a shell command string */
	DENY("inline-code", "npx", "-c", "rm -rf x"),
	DENY("inline-code", "npx", "--call=id"),
	DENY("inline-code", "npm", "exec", "-c", "id"),
	DENY("inline-code", "npm", "x", "--call", "id"),
	DENY("inline-code", "npm", "--yes", "exec", "-c", "id"),
	DENY_SH("exec-denylist", "npx -c 'rm -rf x'"),
	ALLOW_SH("npx -c 'eslint .'"),
	ALLOW("npm", "test"),
	ALLOW("npm", "run", "build"),
	ALLOW("npm", "ci"),
	ALLOW("npx", "prettier", "--check", "."),
	ALLOW("npx", "eslint", "-c", ".eslintrc.json", "."),
	ALLOW("npm", "exec", "--", "eslint", "-c", "x.json"),
	/* git: configuration from the environment, and written by git config */
	DENY("git-alias", "env", "GIT_CONFIG_PARAMETERS='alias.x'='!rm -rf .'", "git", "x"),
	DENY_SH("git-alias", "GIT_CONFIG_PARAMETERS=\"'alias.x=!sh'\" git x"),
	DENY_SH("git-alias", "export GIT_CONFIG_PARAMETERS=\"'alias.x'='!id'\"; git x"),
	DENY_ENV("git-alias", "GIT_CONFIG_PARAMETERS='alias.x'='!id'", "git", "x"),
	DENY_ENV("git-config", "GIT_CONFIG_PARAMETERS='user.name'='a' 'core.pager'='id'", "git",
		 "log"),
	DENY("git-alias", "env", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=alias.x",
	     "GIT_CONFIG_VALUE_0=!id", "git", "x"),
	DENY_ENV("git-config", "GIT_CONFIG_KEY_1=core.fsmonitor", "git", "status"),
	DENY_ENV("exec-denylist", "GIT_SSH_COMMAND=rm -rf x", "git", "fetch"),
	DENY_ENV("inline-code", "GIT_SSH_COMMAND=sh -c id", "git", "fetch"),
	DENY("inline-code", "env", "GIT_EXTERNAL_DIFF=id;id", "git", "diff"),
	DENY("inline-code", "env", "GIT_PAGER=sh", "git", "log"),
	DENY_SH("exec-denylist", "GIT_PAGER='sh -c \"rm -rf x\"' git log"),
	ALLOW_ENV("GIT_SSH_COMMAND=ssh -o BatchMode=yes", "git", "fetch"),
	ALLOW("env", "EDITOR=vim", "GIT_EXTERNAL_DIFF=./tools/difftool", "git", "diff"),
	DENY("git-alias", "git", "config", "--global", "alias.x", "!rm -rf ."),
	DENY("git-alias", "git", "config", "--global", "set", "alias.x", "!id"),
	DENY("git-config", "git", "config", "--system", "core.pager", "id"),
	DENY("git-config", "git", "--git-dir=/tmp/g", "config", "core.pager", "id"),
	/* the repository's own config: the view refuses these with EROFS, naming
	 * the key (tests/mount/test-gitconfig.sh) */
	ALLOW("git", "config", "set", "alias.x", "!id"),
	ALLOW("git", "config", "core.pager", "id"),
	DENY("git-config", "git", "config", "--file", "/tmp/home/.gitconfig", "core.hooksPath",
	     "hooks"),
	DENY("git-alias", "git", "-c", "alias.x=!sh", "x"),
	ALLOW("git", "commit", "-m", "fix the build"),
	/* a remote's URL is stored, not opened: the wall has no such path */
	ALLOW("git", "remote", "add", "origin", "../elsewhere.git"),
	ALLOW("git", "remote", "set-url", "--push", "origin", "/srv/git/x.git"),
	DENY("path-outside-view", "git", "add", "../../etc/passwd"),
	ALLOW("git", "config", "user.name", "Agent"),
	ALLOW("git", "config", "alias.st", "status"),
	ALLOW("git", "config", "--get", "alias.st"),
	ALLOW("git", "config", "--list"),
	ALLOW_ENV("GIT_CONFIG_PARAMETERS='user.name'='Agent'", "git", "commit", "-m", "x"),
	ALLOW("env", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.email", "GIT_CONFIG_VALUE_0=a@b",
	      "git", "commit", "-m", "x"),
	ALLOW("env", "GIT_PAGER=cat", "git", "log"),
	/* multi-call binaries and wrappers */
	DENY("exec-denylist", "toybox", "rm", "-rf", "x"),
	DENY("exec-denylist", "busybox", "rm", "-rf", "x"),
	DENY("exec-denylist", "find", ".", "-exec", "rm", "{}", ";"),
	DENY("exec-denylist", "xargs", "rm"),
	DENY("exec-denylist", "env", "rm", "x"),
	DENY("exec-denylist", "timeout", "5", "rm", "x"),
	DENY("exec-denylist", "nice", "rm", "x"),
	DENY("exec-denylist", "nohup", "rm", "x"),
	DENY("exec-denylist", "command", "rm", "x"),
	DENY("exec-denylist", "/usr/bin/../bin/rm", "x"),
	DENY("inline-code", "gdb", "-batch", "-ex", "shell id"),
	DENY("inline-code", "vim", "-c", "!id", "README"),
	DENY("inline-code", "make", "--eval", "x:;id"),
	DENY_SH("inline-code", "tclsh <<EOF\nexec id\nEOF"),
	DENY_SH("inline-code", "awk 'BEGIN{system(\"id\")}'"),
	DENY_SH("inline-code", "sed -n '1e id' README"),
	DENY_SH("exec-denylist", "exec rm x"),
	/* shell spellings of a command name */
	DENY_SH("exec-denylist", "\\rm x"),
	DENY_SH("exec-denylist", "'r'm x"),
	DENY_SH("exec-denylist", "$'\\x72m' x"),
	DENY_SH("exec-denylist", "$'\\162\\155' x"),
	DENY_SH("exec-denylist", "${x}rm x"),
	DENY_SH("exec-denylist", "r${x}m x"),
	DENY_SH("inline-code", "${PY:-python3} -c 1"),
	ALLOW_SH("\"$CC\" -o main src/main.c"),
	ALLOW_SH("for f in src/*.c; do \"$f\" --version; done"),
	ALLOW_SH("echo $'a\\tb'"),
	ALLOW_SH("ln -sf \"$(pwd)/x\" y"),
	/* a link or copy of a denied executable, made and run in one string */
	DENY_SH("exec-denylist", "ln -s /usr/bin/rm x && ./x -rf src"),
	DENY_SH("exec-denylist", "cp /bin/rm ./tool; ./tool x"),
	DENY_SH("exec-denylist", "install -m 755 /usr/bin/shred s"),
	ALLOW_SH("ln -s src/main.c main.c && cp README README.bak"),
	ALLOW_SH("cp /usr/bin/ls ./myls"),
};

static char proj[PATH_MAX / 2];
static struct jf_policy *policy;
static struct jr_view view;
static const char *no_allow[] = {NULL};
static const char *deny_list[64];

static void write_file(const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", proj, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	char p[PATH_MAX];
	int i = 0;

	snprintf(proj, sizeof(proj), "/tmp/jf-guard-XXXXXX");
	assert_non_null(mkdtemp(proj));
	snprintf(p, sizeof(p), "%s/src", proj);
	assert_int_equal(mkdir(p, 0755), 0);
	write_file("README", "hello\n");
	write_file("src/main.c", "int main(void) { return 0; }\n");
	write_file("script.py", "print(1)\n");
	write_file("script.pl", "print 1;\n");
	write_file("prog.awk", "{ print $1 }\n");
	write_file("app.js", "console.log(1)\n");
	write_file("main.ts", "console.log(1)\n");
	write_file("Makefile", "all:\n\ttrue\n");
	write_file("app.db", "");
	write_file("schema.sql", "create table t(x);\n");
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

static struct jr_verdict check_row(const struct row *r)
{
	char *argv[MAX_WORDS + 1] = {0}, *envp[4 + 2] = {0};
	struct jr_verdict v;
	struct jr_guard g = {.view = &view,
			     .cwd = proj,
			     .path_env = "/usr/local/bin:/usr/bin:/bin",
			     .home = "/tmp/home",
			     .envp = envp,
			     .shell = r->shell,
			     .deny = deny_list,
			     .allow = no_allow};
	int argc = 0, n = 0;

	envp[n++] = "PATH=/usr/local/bin:/usr/bin:/bin";
	for (; n - 1 < 4 && r->env[n - 1]; n++)
		envp[n] = (char *)r->env[n - 1];
	while (argc < MAX_WORDS && r->words[argc]) {
		argv[argc] = (char *)r->words[argc];
		argc++;
	}
	if (r->shell)
		assert_int_equal(jr_guard_shell(&g, argv[0], &v), 0);
	else
		assert_int_equal(jr_guard_argv(&g, argc, argv, &v), 0);
	jr_guard_release(&g);
	return v;
}

static void row_name(const struct row *r, char *out, size_t size)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 0; i < 4 && r->env[i] && n < size; i++)
		n += snprintf(out + n, size - n, "[env %s] ", r->env[i]);
	for (int i = 0; r->words[i] && n < size; i++)
		n += snprintf(out + n, size - n, "%s%s", i ? " " : "", r->words[i]);
	for (char *c = out; *c; c++)
		if (*c == '\n')
			*c = '~'; /* one line per row */
}

/* The hint of a refusal: the rule, what was refused, and what to do. */
static bool hint_ok(const struct jr_verdict *v, char *hint, size_t size)
{
	jr_hint_guard(v, false, hint, size);
	return strstr(hint, v->rule) && strstr(hint, v->reason) &&
	       strlen(hint) > strlen(v->rule) + strlen(v->reason) + 20;
}

static void test_table(void **state)
{
	int bad = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct jr_verdict v = check_row(r);
		char name[1024], hint[1024];

		row_name(r, name, sizeof(name));
		if (!r->rule && v.denied) {
			print_error("row %zu: %s: expected allowed, refused [%s] %s\n", i, name,
				    v.rule, v.reason);
			bad++;
		} else if (r->rule && !v.denied) {
			print_error("row %zu: %s: expected refused by %s, allowed\n", i, name,
				    r->rule);
			bad++;
		} else if (r->rule && strcmp(v.rule, r->rule) != 0) {
			print_error("row %zu: %s: expected rule %s, got [%s] %s\n", i, name,
				    r->rule, v.rule, v.reason);
			bad++;
		} else if (r->rule && !hint_ok(&v, hint, sizeof(hint))) {
			print_error("row %zu: %s: hint lacks rule, reason or advice: %s\n", i, name,
				    hint);
			bad++;
		}
	}
	if (bad)
		fail_msg("%d of %zu rows wrong", bad, sizeof(rows) / sizeof(rows[0]));
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
