/* SPDX-License-Identifier: MIT */
/*
 * Guardrails for particular tools whose arguments or environment say what
 * runs: env and find, git (-c, git config, GIT_CONFIG_PARAMETERS), cmake -E,
 * npm and npx exec, python -m MODULE, the data: URLs of node and deno,
 * renamed copies of a denied binary and ln/cp/install of one, and the
 * environment variables that make a tool run a command (GIT_SSH_COMMAND,
 * pagers, NODE_OPTIONS, PERL5OPT). Best effort by
 * design, like the rest of the guardrails: they catch the spellings that are
 * easy to reach for; the namespace is the wall (docs/threat-model.md).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "gitconfig.h"
#include "guard-path.h"
#include "guard-tools.h"
#include "guard-walk.h"
#include "guard.h"
#include "resolve.h"

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/*
 * jr_deny() for a denied executable @name reached through @how. Declared nonnull: with UBSan,
 * GCC otherwise sees a NULL @name on a path no caller takes (-Wformat-overflow).
 */
static bool deny_exec(struct walk *w, const char *name, const char *how) __attribute__((nonnull));
static bool deny_exec(struct walk *w, const char *name, const char *how)
{
	size_t n = strnlen(name, sizeof(w->v->subject) - 1);

	jr_deny(w, "exec-denylist", "denied executable %s (%s)", name, how);
	memcpy(w->v->subject, name, n);
	w->v->subject[n] = '\0';
	return true;
}

/* ---- git ---- */

/* Does configuration @key (@n bytes) with value @val make git run a program
 * or read another file? The list the view checks a config with, but for an
 * alias: given to one git command in the jail, it overrides no alias of the
 * user's, so only "!command" (sh -c command) is refused. */
static bool git_key_runs_code(const char *key, size_t n, const char *val)
{
	if (n > 6 && strncasecmp(key, "alias.", 6) == 0)
		return val && val[strspn(val, " \t")] == '!';
	return jf_git_config_key_refused(key, n, val);
}

bool jr_git_config_runs_code(const char *kv)
{
	size_t n = strcspn(kv, "=");

	return git_key_runs_code(kv, n, kv[n] ? kv + n + 1 : NULL);
}

static const char *git_rule(const char *key)
{
	return strncasecmp(key, "alias.", 6) == 0 ? "git-alias" : "git-config";
}

/* git [OPTION]... config [OPTION]... [set] KEY VALUE, from argv[i] ("config"):
 * writing an alias or a key that runs a program is refused like git -c,
 * except in the repository's own config (@own_dir: no --git-dir before
 * "config"; no --file, --global, --system after it): the view checks every
 * config written there and refuses such a key with EROFS, naming it
 * (policy/gitconfig.c), which tells more than a refusal here. */
static bool check_git_config(struct walk *w, int argc, char *const argv[], int i, bool own_dir)
{
	static const char *const queries[] = {
		"get",		 "get-all", "get-regexp",     "get-urlmatch",	"get-color",
		"get-colorbool", "unset",   "unset-all",      "list",		"l",
		"edit",		 "e",	    "rename-section", "remove-section", "show-origin",
		"show-scope",	 NULL};
	const char *ops[3];
	int n = 0;
	bool opts = true;

	for (i++; i < argc && n < 3; i++) {
		const char *a = argv[i], *o = a + 1 + (a[1] == '-');

		if (opts && !strcmp(a, "--")) {
			opts = false;
		} else if (opts && a[0] == '-' && a[1]) {
			for (const char *const *q = queries; *q; q++)
				if (!strcmp(o, *q))
					return false; /* reads, removes or renames */
			if (!strcmp(a, "-f") || !strncmp(a, "--file", 6) ||
			    !strcmp(a, "--global") || !strcmp(a, "--system") ||
			    !strncmp(a, "--blob", 6))
				own_dir = false;
			if (!strcmp(a, "-f") || !strcmp(a, "--file") || !strcmp(a, "--blob") ||
			    !strcmp(a, "-t") || !strcmp(a, "--type") || !strcmp(a, "--default") ||
			    !strcmp(a, "--comment") || !strcmp(a, "--value"))
				i++;
		} else if (n == 0 && !strcmp(a, "set")) {
			continue;
		} else {
			ops[n++] = a;
		}
	}
	if (n < 2)
		return false;
	for (const char *const *q = queries; *q; q++)
		if (!strcmp(ops[0], *q))
			return false;
	if (!own_dir && git_key_runs_code(ops[0], strlen(ops[0]), ops[1]))
		return jr_deny(w, git_rule(ops[0]), "git config %s '%s' makes git run a program",
			       ops[0], ops[1]);
	return false;
}

bool jr_check_git(struct walk *w, const char *shown, int argc, char *const argv[])
{
	bool sub = false, own_dir = true, urls = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if ((strcmp(a, "-c") == 0 && i + 1 < argc) || strncmp(a, "--config-env", 12) == 0) {
			const char *kv = a[1] == 'c'	? argv[++i]
					 : a[12] == '=' ? a + 13
							: (i + 1 < argc ? argv[++i] : "");

			if (a[1] != 'c' && strncasecmp(kv, "alias.", 6) == 0)
				return jr_deny(w, "git-config", "git %s %s", a, kv);
			if (jr_git_config_runs_code(kv))
				return jr_deny(w, git_rule(kv), "git -c %s runs a program", kv);
			continue;
		}
		if (!sub && (!strncmp(a, "--git-dir", 9) || !strncmp(a, "--work-tree", 11)))
			own_dir = false;
		if (!sub && strcmp(a, "-C") == 0 && i + 1 < argc) {
			if (jr_check_path_arg(w, argv[++i]))
				return true;
			continue;
		}
		if (!sub && a[0] != '-') {
			sub = true;
			if (!strcmp(a, "config") && check_git_config(w, argc, argv, i, own_dir))
				return true;
			/* git remote stores names and URLs in the config and opens
			 * none of them; a fetch from a path outside the view meets
			 * the wall, which has no such path */
			urls = !strcmp(a, "remote");
		}
		if (!urls && jr_check_path_arg(w, a))
			return true;
	}
	(void)shown;
	return false;
}

/* GIT_CONFIG_PARAMETERS: what git -c puts there, 'key'='value' words quoted
 * as a shell would ('\'' for a quote); each word is KEY=VALUE once unquoted. */
static bool check_git_params(struct walk *w, const char *v)
{
	int n = 0;
	char **words = jr_split_words(v, &n);
	bool r = false;

	if (!words)
		return jr_deny(w, "internal", "out of memory");
	for (int i = 0; i < n && !r; i++)
		if (jr_git_config_runs_code(words[i]))
			r = jr_deny(w, git_rule(words[i]),
				    "environment GIT_CONFIG_PARAMETERS sets %s: git runs a program",
				    words[i]);
	jr_free_words(words, n);
	return r;
}

/* ---- the environment ---- */

/* Variables whose value is a command some tool runs (through sh -c when it
 * has shell syntax); pagers read the tool's output on stdin. */
static const struct {
	const char *name;
	bool pager;
} env_commands[] = {
	{"GIT_SSH_COMMAND", false},
	{"GIT_SSH", false},
	{"GIT_PAGER", true},
	{"PAGER", true},
	{"MANPAGER", true},
	{"GIT_EDITOR", false},
	{"GIT_SEQUENCE_EDITOR", false},
	{"EDITOR", false},
	{"VISUAL", false},
	{"GIT_EXTERNAL_DIFF", false},
	{"GIT_ASKPASS", false},
	{"SSH_ASKPASS", false},
	{"GIT_PROXY_COMMAND", false},
};

/* Refusal by a check of @name's value: say where it came from. */
static bool from_env(struct walk *w, const char *name, size_t n)
{
	char r[sizeof(w->v->reason) + 256];
	size_t len;

	snprintf(r, sizeof(r), "environment %.*s: %s", (int)n, name, w->v->reason);
	len = strnlen(r, sizeof(w->v->reason) - 1);
	memcpy(w->v->reason, r, len);
	w->v->reason[len] = '\0';
	return true;
}

/* The value @v of a command variable, checked as the command it is. */
static bool check_env_command(struct walk *w, const char *name, size_t n, const char *v, bool pager)
{
	struct walk inner = *w;
	int count = 0;
	char **words;
	bool r;

	if (!*v)
		return false;
	inner.depth++;
	inner.stdin_text = pager;
	if (strpbrk(v, ";|&<>`$()\n"))
		return jr_check_shell_string(&inner, "the environment", NULL, v) &&
		       from_env(w, name, n);
	words = jr_split_words(v, &count);
	if (!words)
		return jr_deny(w, "internal", "out of memory");
	r = count > 0 && jr_check_cmd(&inner, count, words);
	jr_free_words(words, count);
	return r && from_env(w, name, n);
}

/* NODE_OPTIONS, PERL5OPT: options of every node or perl started, checked as
 * `@interp OPTIONS`. */
static bool check_env_options(struct walk *w, const char *name, size_t n, const char *interp,
			      const char *v)
{
	struct walk inner = *w;
	int count = 0;
	char **words = jr_split_words(v, &count), **argv;
	bool r;

	if (!words)
		return jr_deny(w, "internal", "out of memory");
	argv = calloc(count + 2, sizeof(char *));
	if (!argv) {
		jr_free_words(words, count);
		return jr_deny(w, "internal", "out of memory");
	}
	argv[0] = (char *)interp;
	memcpy(argv + 1, words, count * sizeof(char *));
	argv[count + 1] = "-"; /* the script: none of ours */
	inner.depth++;
	inner.stdin_text = false;
	r = jr_check_cmd(&inner, count + 1, argv);
	free(argv);
	jr_free_words(words, count);
	return r && from_env(w, name, n);
}

static bool name_is(const char *kv, size_t n, const char *name)
{
	return strlen(name) == n && !strncmp(kv, name, n);
}

bool jr_check_assign(struct walk *w, const char *kv)
{
	size_t n = strcspn(kv, "=");
	const char *v = kv + n + 1;

	if (!kv[n])
		return false;
	if (name_is(kv, n, "GIT_CONFIG_PARAMETERS"))
		return check_git_params(w, v);
	if (n > 15 && !strncmp(kv, "GIT_CONFIG_KEY_", 15) && git_key_runs_code(v, strlen(v), NULL))
		return jr_deny(w, "git-config",
			       "environment %.*s=%s: configuration that makes git run a program",
			       (int)n, kv, v);
	if (n > 17 && !strncmp(kv, "GIT_CONFIG_VALUE_", 17) && v[strspn(v, " \t")] == '!')
		return jr_deny(w, "git-alias",
			       "environment %.*s=%s: an alias value that runs a shell command",
			       (int)n, kv, v);
	if (name_is(kv, n, "NODE_OPTIONS"))
		return check_env_options(w, kv, n, "node", v);
	if (name_is(kv, n, "PERL5OPT"))
		return check_env_options(w, kv, n, "perl", v);
	for (size_t i = 0; i < ARRAY_SIZE(env_commands); i++)
		if (name_is(kv, n, env_commands[i].name))
			return check_env_command(w, kv, n, v, env_commands[i].pager);
	return false;
}

bool jr_check_assigns(struct walk *w, const char *shown, int argc, char *const argv[])
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-' && strchr(a, '=') && jr_check_assign(w, a))
			return true;
	}
	(void)shown;
	return false;
}

/* ---- env, find ---- */

char **jr_split_words(const char *s, int *count)
{
	size_t cap = strlen(s) + 1;
	char **words = calloc(cap + 1, sizeof(char *));
	char *buf = malloc(cap), *o = buf;
	int n = 0;

	if (!words || !buf) {
		free(words);
		free(buf);
		return NULL;
	}
	while (*s) {
		char q = 0;

		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		words[n++] = o;
		for (; *s && (q || !(*s == ' ' || *s == '\t' || *s == '\n')); s++) {
			if (q && *s == q)
				q = 0;
			else if (!q && (*s == '\'' || *s == '"'))
				q = *s;
			else if (*s == '\\' && s[1] && q != '\'')
				*o++ = *++s;
			else
				*o++ = *s;
		}
		*o++ = '\0';
	}
	words[n] = NULL;
	*count = n;
	if (n == 0)
		free(buf);
	return words;
}

void jr_free_words(char **words, int n)
{
	if (words && n > 0)
		free(words[0]);
	free(words);
}

/* One env option at argv[*i]: sets *split for -S/--split-string, *dir for
 * -C/--chdir; a separate value advances *i. */
static void env_option(int argc, char *const argv[], int *i, const char **split, const char **dir)
{
	static const char *const longs[] = {"split-string", "chdir", "unset"};
	const char *a = argv[*i], *v;

	if (a[1] == '-') {
		for (size_t k = 0; k < ARRAY_SIZE(longs); k++) {
			size_t n = strlen(longs[k]);

			size_t m = strcspn(a + 2, "="); /* getopt_long: --spl=X is --split-string */

			if (!m || m > n || strncmp(a + 2, longs[k], m) != 0)
				continue;
			v = a[2 + m] ? a + 3 + m : (*i + 1 < argc ? argv[++*i] : "");
			if (k == 0)
				*split = v;
			else if (k == 1)
				*dir = v;
			return;
		}
		return; /* --ignore-environment, --null, --debug, signal options */
	}
	for (int j = 1; a[j]; j++) {
		if (!strchr("uCS", a[j]))
			continue;
		v = a[j + 1] ? a + j + 1 : (*i + 1 < argc ? argv[++*i] : "");
		if (a[j] == 'S')
			*split = v;
		else if (a[j] == 'C')
			*dir = v;
		return;
	}
}

/* env -S STRING: the words replace the option and the rest follows. */
static bool check_env_split(struct walk *w, int argc, char *const argv[], int i, const char *split)
{
	int n = 0, total;
	char **words = jr_split_words(split, &n);
	char **nargv;
	bool r;

	if (!words)
		return jr_deny(w, "internal", "out of memory");
	total = 1 + n + (argc - i - 1);
	nargv = calloc(total + 1, sizeof(char *));
	if (!nargv) {
		jr_free_words(words, n);
		return jr_deny(w, "internal", "out of memory");
	}
	nargv[0] = argv[0];
	memcpy(nargv + 1, words, n * sizeof(char *));
	memcpy(nargv + 1 + n, argv + i + 1, (argc - i - 1) * sizeof(char *));
	w->depth++;
	r = w->depth > MAX_DEPTH ? jr_deny(w, "nesting", "wrappers nested too deep")
				 : jr_check_env(w, "env", total, nargv);
	free(nargv);
	jr_free_words(words, n);
	return r;
}

bool jr_check_env(struct walk *w, const char *shown, int argc, char *const argv[])
{
	struct walk inner = *w;
	char cwd[PATH_MAX];
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *split = NULL, *dir = NULL;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1]) {
			if (a[0] == '-')
				continue; /* "-": same as -i */
			if (!strchr(a, '='))
				break; /* the command */
			if (strncmp(a, "PATH=", 5) == 0)
				inner.path_env = a + 5; /* the command is looked up there */
			if (jr_check_assign(w, a))
				return true;
			continue;
		}
		env_option(argc, argv, &i, &split, &dir);
		if (dir) {
			if (jr_check_path_arg(w, dir))
				return true;
			if (jr_resolve(w->g->view, inner.cwd, dir, cwd, NULL) < 0)
				return jr_deny(w, "path-refused", "env -C '%s' cannot be resolved",
					       dir);
			inner.cwd = cwd;
		}
		if (split)
			return check_env_split(&inner, argc, argv, i, split);
	}
	if (i >= argc)
		return false;
	inner.depth++;
	return jr_check_cmd(&inner, argc - i, argv + i);
}

bool jr_check_find(struct walk *w, const char *shown, int argc, char *const argv[])
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-delete") == 0)
			return jr_deny(w, "find-delete", "find -delete");
		if (strcmp(a, "-exec") == 0 || strcmp(a, "-execdir") == 0 ||
		    strcmp(a, "-ok") == 0 || strcmp(a, "-okdir") == 0) {
			int s = ++i;
			struct walk inner = *w;

			while (i < argc && strcmp(argv[i], ";") != 0 && strcmp(argv[i], "+") != 0)
				i++;
			if (i == s)
				continue;
			inner.depth++;
			if (jr_check_cmd(&inner, i - s, argv + s))
				return true;
			continue;
		}
		if (jr_check_path_arg(w, a))
			return true;
	}
	return false;
}

/* ---- cmake -E ---- */

bool jr_check_cmake(struct walk *w, const char *shown, int argc, char *const argv[])
{
	struct walk inner = *w;
	char cwd[PATH_MAX];
	const char *sub;

	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-P") && jr_fd_program(w, argv[i + 1]))
			return jr_deny(w, "inline-code",
				       "cmake script read from a pipe or here-document (%s -P %s)",
				       shown, argv[i + 1]);
	if (argc < 3 || strcmp(argv[1], "-E") != 0)
		return jr_check_paths(w, 1, argc, argv);
	sub = argv[2];
	inner.depth++;
	if (!strcmp(sub, "rm") || !strcmp(sub, "remove") || !strcmp(sub, "remove_directory")) {
		char how[64];

		snprintf(how, sizeof(how), "%s -E %s", shown, sub);
		if (jr_denied_name(w->g, "rm"))
			return deny_exec(w, "rm", how);
	} else if (!strcmp(sub, "env")) {
		return jr_check_env(&inner, shown, argc - 2, argv + 2);
	} else if (!strcmp(sub, "time") && argc > 3) {
		return jr_check_cmd(&inner, argc - 3, argv + 3);
	} else if (!strcmp(sub, "chdir") && argc > 4) {
		if (jr_check_path_arg(w, argv[3]))
			return true;
		if (jr_resolve(w->g->view, w->cwd, argv[3], cwd, NULL) < 0)
			return jr_deny(w, "path-refused", "cmake -E chdir '%s' cannot be resolved",
				       argv[3]);
		inner.cwd = cwd;
		return jr_check_cmd(&inner, argc - 4, argv + 4);
	} else if (!strcmp(sub, "copy") || !strcmp(sub, "create_symlink") ||
		   !strcmp(sub, "create_hardlink")) {
		return jr_check_copy(w, shown, argc - 2, argv + 2);
	}
	return jr_check_paths(w, 3, argc, argv);
}

/* ---- npm, npx, pnpm, yarn ---- */

/* npx / npm exec [OPTION]... from argv[i]: -c CMD and --call CMD run sh -c.
 * Options end at the package's name: what follows is its own (eslint -c). */
static bool check_npm_exec(struct walk *w, const char *shown, int argc, char *const argv[], int i)
{
	for (; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0; i++) {
		const char *a = argv[i];

		if ((!strcmp(a, "-c") || !strcmp(a, "--call")) && i + 1 < argc)
			return jr_check_shell_string(w, shown, a, argv[i + 1]);
		if (!strncmp(a, "--call=", 7))
			return jr_check_shell_string(w, shown, "--call", a + 7);
		if (!strcmp(a, "-p") || !strcmp(a, "--package"))
			i++;
	}
	return false;
}

/* pnpm exec / yarn exec [OPTION]... CMD [ARG]...: CMD from PATH and
 * node_modules/.bin; pnpm exec -c (--shell-mode) runs it with sh -c. */
static bool check_pm_exec(struct walk *w, const char *shown, int argc, char *const argv[], int i)
{
	struct walk inner = *w;
	bool shell = false;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		shell |= !strcmp(argv[i], "-c") || !strcmp(argv[i], "--shell-mode");
	}
	if (i >= argc)
		return false;
	inner.depth++;
	if (shell) {
		_cleanup_free_ char *s = NULL;
		size_t len = 1;

		for (int k = i; k < argc; k++)
			len += strlen(argv[k]) + 1;
		s = calloc(len, 1);
		if (!s)
			return jr_deny(w, "internal", "out of memory");
		for (int k = i; k < argc; k++)
			strcat(strcat(s, k > i ? " " : ""), argv[k]);
		return jr_check_shell_string(&inner, shown, "-c", s);
	}
	return jr_check_cmd(&inner, argc - i, argv + i);
}

bool jr_check_npm(struct walk *w, const char *shown, int argc, char *const argv[])
{
	char name[NAME_MAX + 1];
	int i = 1;

	jr_strip_version(shown, name, sizeof(name));
	if (!strcmp(name, "npx")) {
		if (check_npm_exec(w, shown, argc, argv, 1))
			return true;
		return jr_check_paths(w, 1, argc, argv);
	}
	while (i < argc && argv[i][0] == '-')
		i++; /* npm's own options: --yes, --prefix=DIR, -w=WS */
	if (i < argc && !strcmp(name, "npm") && (!strcmp(argv[i], "exec") || !strcmp(argv[i], "x")))
		return check_npm_exec(w, shown, argc, argv, i + 1) ||
		       jr_check_paths(w, 1, argc, argv);
	if (i < argc && strcmp(name, "npm") != 0 && !strcmp(argv[i], "exec"))
		return check_pm_exec(w, shown, argc, argv, i + 1);
	return jr_check_paths(w, 1, argc, argv);
}

/* ---- python -m MODULE ---- */

static bool check_module(struct walk *w, const char *shown, const char *mod, int argc,
			 char *const argv[]);

/* The options of cProfile, profile (-o FILE, -s SORT) and pdb (-c CMD) before
 * the script, from argv[0]; -m MODULE (--module for trace) runs a module. */
static bool check_runner_module(struct walk *w, const char *shown, const char *mod, int argc,
				char *const argv[])
{
	bool trace = !strcmp(mod, "trace"), pdb = !strcmp(mod, "pdb"), as_module = false;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (pdb && (!strcmp(a, "-c") || !strncmp(a, "--command", 9) ||
			    (a[0] == '-' && a[1] == 'c')))
			return jr_deny(w, "inline-code",
				       "interpreter inline code (%s -m pdb %s: debugger commands "
				       "are Python statements)",
				       shown, a);
		if (!trace && !strcmp(a, "-m") && i + 1 < argc)
			return check_module(w, shown, argv[i + 1], argc - i - 2, argv + i + 2);
		if (trace && !strcmp(a, "--module")) {
			as_module = true;
			continue;
		}
		if (a[0] == '-') {
			if (!trace && (!strcmp(a, "-o") || !strcmp(a, "-s")))
				i++;
			continue;
		}
		if (as_module)
			return check_module(w, shown, a, argc - i - 1, argv + i + 1);
		return false; /* the script */
	}
	if (pdb && w->stdin_text)
		return jr_deny(w, "inline-code",
			       "interpreter reads its program from a pipe or here-document (%s -m "
			       "pdb)",
			       shown);
	return false;
}

static bool check_module(struct walk *w, const char *shown, const char *mod, int argc,
			 char *const argv[])
{
	if (++w->depth > MAX_DEPTH)
		return jr_deny(w, "nesting", "modules nested too deep");
	if (!strcmp(mod, "timeit")) {
		for (int i = 0; i < argc; i++)
			if (strcmp(argv[i], "-h") != 0 && strcmp(argv[i], "--help") != 0)
				return jr_deny(
					w, "inline-code",
					"interpreter inline code (%s -m timeit: its operands "
					"and -s are Python statements)",
					shown);
		return false;
	}
	if (!strcmp(mod, "runpy")) /* python -m runpy MODULE ARG...: runs MODULE as __main__ */
		return argc > 0 && check_module(w, shown, argv[0], argc - 1, argv + 1);
	if (!strcmp(mod, "cProfile") || !strcmp(mod, "profile") || !strcmp(mod, "trace") ||
	    !strcmp(mod, "pdb"))
		return check_runner_module(w, shown, mod, argc, argv);
	if (!strcmp(mod, "IPython") || !strcmp(mod, "idlelib")) {
		for (int i = 0; i < argc; i++)
			if (!strcmp(argv[i], "-c"))
				return jr_deny(w, "inline-code",
					       "interpreter inline code (%s -m %s -c)", shown, mod);
	}
	if ((!strcmp(mod, "code") || !strcmp(mod, "asyncio")) && w->stdin_text)
		return jr_deny(
			w, "inline-code",
			"interpreter reads its program from a pipe or here-document (%s -m %s)",
			shown, mod);
	return false;
}

bool jr_check_pymodule(struct walk *w, const char *shown, int argc, char *const argv[], int i)
{
	struct walk inner = *w;
	const char *m = strchr(argv[i] + 1, 'm'), *mod;

	if (!m)
		return false;
	mod = m[1] ? m + 1 : (i + 1 < argc ? argv[++i] : "");
	return check_module(&inner, shown, mod, argc - i - 1, argv + i + 1);
}

/* ---- node, deno, bun ---- */

static bool is_data_url(const char *s)
{
	return strncasecmp(s, "data:", 5) == 0;
}

bool jr_check_js(struct walk *w, const char *name, const char *shown, int argc, char *const argv[])
{
	bool runner = strcmp(name, "deno") == 0 || strcmp(name, "bun") == 0, sub = runner;

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');

		if (a[0] == '-' && a[1]) {
			if (runner && (!strcmp(a, "--eval") || !strncmp(a, "--eval=", 7)))
				return jr_deny(w, "inline-code", "interpreter inline code (%s %s)",
					       shown, a);
			if (eq && is_data_url(eq + 1))
				return jr_deny(w, "inline-code",
					       "interpreter inline code in a data: URL (%s %.*s)",
					       shown, (int)(eq - a), a);
			continue;
		}
		if (is_data_url(a))
			return jr_deny(w, "inline-code",
				       "interpreter inline code in a data: URL (%s %s)", shown,
				       i > 1 && argv[i - 1][0] == '-' ? argv[i - 1] : "script");
		if (sub) {
			sub = false; /* deno run, bun test: the script follows */
			continue;
		}
		if (i > 1 && argv[i - 1][0] == '-' && !strchr(argv[i - 1], '='))
			continue; /* maybe the previous option's value: --import ./x.js */
		break;
	}
	return false;
}

/* ---- copies: renamed ones, and ln, cp, install, link ---- */

/* A binary found in the jail's PATH whose copies we recognise. */
struct jr_ident {
	char name[NAME_MAX + 1]; /* stripped name, e.g. "rm", "python" */
	char host[PATH_MAX];
	off_t size;
};

/* ---- renamed copies ---- */

static int ident_add(struct jr_guard *g, const char *name, const char *host, off_t size)
{
	struct jr_ident *n;

	for (size_t i = 0; i < g->n_idents; i++)
		if (g->idents[i].size == size && strcmp(g->idents[i].name, name) == 0)
			return 0;
	n = realloc(g->idents, (g->n_idents + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	g->idents = n;
	n = &g->idents[g->n_idents++];
	snprintf(n->name, sizeof(n->name), "%s", name);
	snprintf(n->host, sizeof(n->host), "%s", host);
	n->size = size;
	return 0;
}

static int idents_scan_dir(struct jr_guard *g, const char *jdir)
{
	char hdir[PATH_MAX], host[PATH_MAX], s[NAME_MAX + 1];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;

	if (jdir[0] != '/' || jr_map(g->view, jdir, hdir, sizeof(hdir)) < 0)
		return 0;
	if (strncmp(jdir, g->view->project, strlen(g->view->project)) == 0)
		return 0; /* copies in the project are what we look for, not references */
	d = opendir(hdir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct stat st;

		jr_strip_version(de->d_name, s, sizeof(s));
		if (!jr_denied_name(g, de->d_name) && !jr_is_interp(de->d_name))
			continue;
		if ((size_t)snprintf(host, sizeof(host), "%s/%s", hdir, de->d_name) >= sizeof(host))
			continue;
		if (stat(host, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
			continue;
		if (ident_add(g, s, host, st.st_size) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int idents_build(struct jr_guard *g)
{
	const char *p = g->path_env ? g->path_env : "/bin:/usr/bin";
	char dir[PATH_MAX];

	if (g->idents_built)
		return 0;
	g->idents_built = true;
	for (;;) {
		size_t n = strcspn(p, ":");

		if (n < sizeof(dir)) {
			memcpy(dir, p, n);
			dir[n] = '\0';
			if (idents_scan_dir(g, dir) < 0)
				return -ENOMEM;
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	return 0;
}

static bool same_content(const char *a, const char *b)
{
	_cleanup_close_ int fa = open(a, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int fb = open(b, O_RDONLY | O_CLOEXEC);
	static char ba[65536], bb[65536];

	if (fa < 0 || fb < 0)
		return false;
	for (;;) {
		ssize_t na = read(fa, ba, sizeof(ba));
		ssize_t nb = read(fb, bb, sizeof(bb));

		if (na < 0 || nb < 0 || na != nb || memcmp(ba, bb, na) != 0)
			return false;
		if (na == 0)
			return true;
	}
}

const char *jr_copy_of(struct walk *w, const char *jail)
{
	char host[PATH_MAX];
	struct stat st;

	if (strncmp(jail, w->g->view->project, strlen(w->g->view->project)) != 0)
		return NULL;
	if (jr_map(w->g->view, jail, host, sizeof(host)) < 0 || stat(host, &st) < 0)
		return NULL;
	if (idents_build(w->g) < 0)
		return "(out of memory)";
	for (size_t i = 0; i < w->g->n_idents; i++)
		if (w->g->idents[i].size == st.st_size && same_content(host, w->g->idents[i].host))
			return w->g->idents[i].name;
	return NULL;
}

/* ln, cp, install, link */

bool jr_check_copy(struct walk *w, const char *shown, int argc, char *const argv[])
{
	bool opts = true;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *d;
		char name[PATH_MAX], resolved[PATH_MAX];
		struct jr_chain chain = {0};

		if (opts && !strcmp(a, "--")) {
			opts = false;
			continue;
		}
		if (opts && a[0] == '-' && a[1]) {
			if (strlen(a) == 2 && strchr("mogtS", a[1]))
				i++; /* install -m MODE, -o USER, -g GROUP; -t DIR, -S SUFFIX */
			continue;
		}
		if ((size_t)snprintf(name, sizeof(name), "%s%s", strchr(a, '/') ? "" : "./", a) >=
			    sizeof(name) ||
		    jr_find_exec(w->g->view, w->cwd, w->path_env, name, resolved, &chain) < 0)
			continue;
		if ((d = jr_denied_name(w->g, base_name(resolved))))
			return deny_exec(w, base_name(resolved), shown) &&
			       jr_deny(w, "exec-denylist",
				       "link or copy of denied executable %s (%s %s)",
				       base_name(resolved), shown, a);
		for (int k = 0; k < chain.n; k++)
			if (jr_denied_name(w->g, chain.name[k]))
				return deny_exec(w, chain.name[k], shown) &&
				       jr_deny(w, "exec-denylist",
					       "link or copy of denied executable %s (%s %s)",
					       chain.name[k], shown, a);
	}
	return jr_check_paths(w, 1, argc, argv);
}
