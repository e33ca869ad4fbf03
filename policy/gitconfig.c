/* SPDX-License-Identifier: MIT */
/*
 * git's config syntax, parsed as git parses it (config.c), and the keys the
 * host's git must not find in a config an agent wrote (policy/gitconfig.h says
 * why).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "gitconfig.h"

/* When a key of the list is refused: always, or for some values only. */
enum when {
	ALWAYS,
	NOT_BOOL,     /* pager.<cmd>: a value that is not a boolean is a pager command */
	BANG,	      /* submodule.<name>.update: "!command" runs the command */
	EXT_URL,      /* a URL of git's ext:: transport, which runs a command */
	NOT_NEVER,    /* protocol.allow, protocol.ext.allow: anything but "never" */
	OUTSIDE_TREE, /* core.worktree: a work tree outside the view or in a git directory */
};

static const char runs[] = "a key that makes git run a program";
static const char reads[] = "a key that makes git read another file";

/*
 * The refused keys, from git-config(1). @sub: NULL for a key without a
 * subsection, "*" for any subsection or none, else an fnmatch(3) pattern a
 * subsection must match (subsections keep their case). @key "*" for every
 * key of the section. Sections and keys in lower case, as git folds them.
 */
static const struct refused {
	const char *name; /* as documented */
	const char *section, *sub, *key;
	enum when when;
	const char *why;
} refused[] = {
	{"core.fsmonitor", "core", NULL, "fsmonitor", ALWAYS, runs},
	{"core.hooksPath", "core", NULL, "hookspath", ALWAYS, runs},
	{"core.sshCommand", "core", NULL, "sshcommand", ALWAYS, runs},
	{"core.editor", "core", NULL, "editor", ALWAYS, runs},
	{"core.pager", "core", NULL, "pager", ALWAYS, runs},
	{"core.askPass", "core", NULL, "askpass", ALWAYS, runs},
	{"core.gitProxy", "core", NULL, "gitproxy", ALWAYS, runs},
	{"core.alternateRefsCommand", "core", NULL, "alternaterefscommand", ALWAYS, runs},
	{"core.virtualFilesystem", "core", NULL, "virtualfilesystem", ALWAYS, runs},
	{"core.attributesFile", "core", NULL, "attributesfile", ALWAYS, reads},
	{"core.excludesFile", "core", NULL, "excludesfile", ALWAYS, reads},
	{"core.worktree", "core", NULL, "worktree", OUTSIDE_TREE,
	 "a work tree outside the view or inside a git directory"},
	{"sequence.editor", "sequence", NULL, "editor", ALWAYS, runs},
	{"diff.external", "diff", NULL, "external", ALWAYS, runs},
	{"diff.*.textconv", "diff", "*", "textconv", ALWAYS, runs},
	{"diff.*.command", "diff", "*", "command", ALWAYS, runs},
	{"diff.orderFile", "diff", NULL, "orderfile", ALWAYS, reads},
	{"merge.*.driver", "merge", "*", "driver", ALWAYS, runs},
	{"filter.*", "filter", "*", "*", ALWAYS, runs},
	{"credential.*", "credential", "*", "*", ALWAYS, runs},
	{"gpg.program", "gpg", NULL, "program", ALWAYS, runs},
	{"gpg.*.program", "gpg", "*", "program", ALWAYS, runs},
	{"gpg.ssh.defaultKeyCommand", "gpg", "ssh", "defaultkeycommand", ALWAYS, runs},
	{"gpg.ssh.allowedSignersFile", "gpg", "ssh", "allowedsignersfile", ALWAYS, reads},
	{"gpg.ssh.revocationFile", "gpg", "ssh", "revocationfile", ALWAYS, reads},
	{"uploadpack.packObjectsHook", "uploadpack", NULL, "packobjectshook", ALWAYS, runs},
	/* Every alias, not only "!command": a repository's alias overrides the
	 * user's own of the same name, and git's options run programs too
	 * (-c core.pager=..., fetch --upload-pack=..., grep -O...). */
	{"alias.*", "alias", "*", "*", ALWAYS, runs},
	{"include.path", "include", "*", "*", ALWAYS, reads},
	{"includeIf.*", "includeif", "*", "*", ALWAYS, reads},
	{"hook.*", "hook", "*", "*", ALWAYS, runs},
	{"remote.*.uploadpack", "remote", "*", "uploadpack", ALWAYS, runs},
	{"remote.*.receivepack", "remote", "*", "receivepack", ALWAYS, runs},
	{"remote.*.url (ext::)", "remote", "*", "url", EXT_URL, runs},
	{"remote.*.pushurl (ext::)", "remote", "*", "pushurl", EXT_URL, runs},
	{"submodule.*.url (ext::)", "submodule", "*", "url", EXT_URL, runs},
	{"submodule.*.update (!command)", "submodule", "*", "update", BANG, runs},
	{"url.ext::*.insteadOf", "url", "[eE][xX][tT]::*", "insteadof", ALWAYS, runs},
	{"url.ext::*.pushInsteadOf", "url", "[eE][xX][tT]::*", "pushinsteadof", ALWAYS, runs},
	{"protocol.allow", "protocol", NULL, "allow", NOT_NEVER, runs},
	{"protocol.ext.allow", "protocol", "[eE][xX][tT]", "allow", NOT_NEVER, runs},
	{"pager.*", "pager", "*", "*", NOT_BOOL, runs},
	{"interactive.diffFilter", "interactive", NULL, "difffilter", ALWAYS, runs},
	{"web.browser", "web", NULL, "browser", ALWAYS, runs},
	{"help.browser", "help", NULL, "browser", ALWAYS, runs},
	{"browser.*.cmd", "browser", "*", "cmd", ALWAYS, runs},
	{"browser.*.path", "browser", "*", "path", ALWAYS, runs},
	{"man.*.cmd", "man", "*", "cmd", ALWAYS, runs},
	{"man.*.path", "man", "*", "path", ALWAYS, runs},
	{"sendemail.*", "sendemail", "*", "*", ALWAYS, runs},
	{"difftool.*.cmd", "difftool", "*", "cmd", ALWAYS, runs},
	{"difftool.*.path", "difftool", "*", "path", ALWAYS, runs},
	{"mergetool.*.cmd", "mergetool", "*", "cmd", ALWAYS, runs},
	{"mergetool.*.path", "mergetool", "*", "path", ALWAYS, runs},
	{"guitool.*", "guitool", "*", "*", ALWAYS, runs},
	{"instaweb.*", "instaweb", "*", "*", ALWAYS, runs},
	{"tar.*.command", "tar", "*", "command", ALWAYS, runs},
	{"trailer.*.command", "trailer", "*", "command", ALWAYS, runs},
	{"trailer.*.cmd", "trailer", "*", "cmd", ALWAYS, runs},
	{"svn.authorsProg", "svn", "*", "authorsprog", ALWAYS, runs},
	{"svn-remote.*.authorsProg", "svn-remote", "*", "authorsprog", ALWAYS, runs},
	{"lfs.customtransfer.*", "lfs", "customtransfer.*", "*", ALWAYS, runs},
	{"lfs.extension.*", "lfs", "extension.*", "*", ALWAYS, runs},
	{"init.templateDir", "init", NULL, "templatedir", ALWAYS, reads},
	{"commit.template", "commit", NULL, "template", ALWAYS, reads},
	{"format.signatureFile", "format", NULL, "signaturefile", ALWAYS, reads},
	{"mailmap.file", "mailmap", NULL, "file", ALWAYS, reads},
	{"blame.ignoreRevsFile", "blame", NULL, "ignorerevsfile", ALWAYS, reads},
	{"fsck.skipList", "fsck", NULL, "skiplist", ALWAYS, reads},
	{"fetch.fsck.skipList", "fetch", "fsck", "skiplist", ALWAYS, reads},
	{"receive.fsck.skipList", "receive", "fsck", "skiplist", ALWAYS, reads},
	{"http.*.cookieFile", "http", "*", "cookiefile", ALWAYS, reads},
	{"http.*.sslCert", "http", "*", "sslcert", ALWAYS, reads},
	{"http.*.sslKey", "http", "*", "sslkey", ALWAYS, reads},
	{"http.*.sslCAInfo", "http", "*", "sslcainfo", ALWAYS, reads},
	{"http.*.sslCAPath", "http", "*", "sslcapath", ALWAYS, reads},
	{"http.*.proxySSLCert", "http", "*", "proxysslcert", ALWAYS, reads},
	{"http.*.proxySSLKey", "http", "*", "proxysslkey", ALWAYS, reads},
	{"http.*.proxySSLCAInfo", "http", "*", "proxysslcainfo", ALWAYS, reads},
};

#define N_REFUSED (sizeof(refused) / sizeof(refused[0]))

const char *jf_git_config_refused(size_t i)
{
	return i < N_REFUSED ? refused[i].name : NULL;
}

/* git's own ctype (git-compat-util.h), ASCII whatever the locale: only
 * space, tab, newline and carriage return are spaces. */
static bool g_space(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static bool g_alpha(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static bool iskeychar(int ch)
{
	return g_alpha(ch) || (ch >= '0' && ch <= '9') || ch == '-';
}

static char g_lower(int ch)
{
	return (char)(ch >= 'A' && ch <= 'Z' ? ch + 'a' - 'A' : ch);
}

/* The parts of a key "section[.subsection].name" (git's var). */
struct key {
	const char *full;
	size_t sect_len;
	const char *sub; /* NUL-terminated copy, NULL when there is none */
	const char *name;
};

/* git_parse_maybe_bool_text(), and an integer (git takes it as a bool). */
static bool is_bool(const char *v)
{
	static const char *const words[] = {"true", "yes", "on", "false", "no", "off", ""};
	char *end;

	if (!v)
		return true;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasecmp(v, words[i]) == 0)
			return true;
	(void)strtol(v, &end, 0);
	return end != v && *end == '\0';
}

static const char *skip_space(const char *v)
{
	while (v && g_space(*v))
		v++;
	return v;
}

/* Is @c (@n bytes) a component git takes for its own directory (".git" in
 * any case, with trailing dots or spaces, "git~1")? */
static bool dotgit(const char *c, size_t n)
{
	size_t i = 4;

	if (n == 5 && strncasecmp(c, "git~1", 5) == 0)
		return true;
	if (n < 4 || strncasecmp(c, ".git", 4) != 0)
		return false;
	while (i < n && (c[i] == '.' || c[i] == ' '))
		i++;
	return i == n;
}

/* Push the components of @p onto the @depth components of @stack (each
 * dotgit() flag kept); false when ".." leaves the view. */
static bool walk(const char *p, bool *stack, size_t *depth, size_t max)
{
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (*depth == 0)
				return false;
			(*depth)--;
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			if (*depth == max)
				return false;
			stack[(*depth)++] = dotgit(p, n);
		}
		p += n + (p[n] == '/');
	}
	return true;
}

/* Does core.worktree @v, from git directory @gitdir, name a directory of the
 * view outside every git directory? Lexical: symlinks are the view's own. */
static bool tree_inside(const char *gitdir, const char *v)
{
	bool stack[512];
	size_t depth = 0;

	if (!v || !*v || v[0] == '/' || v[0] == '~')
		return false;
	if (!walk(gitdir, stack, &depth, sizeof(stack)) || !walk(v, stack, &depth, sizeof(stack)))
		return false;
	for (size_t i = 0; i < depth; i++)
		if (stack[i])
			return false;
	return true;
}

static bool value_refused(enum when when, const char *v, const char *gitdir)
{
	switch (when) {
	case ALWAYS:
		return true;
	case NOT_BOOL:
		return !is_bool(v);
	case BANG:
		return v && *skip_space(v) == '!';
	case EXT_URL:
		return v && strncasecmp(skip_space(v), "ext::", 5) == 0;
	case NOT_NEVER:
		return !v || strcasecmp(v, "never") != 0;
	case OUTSIDE_TREE:
		return !tree_inside(gitdir, v);
	}
	return true;
}

static bool key_matches(const struct refused *r, const struct key *k)
{
	if (strlen(r->section) != k->sect_len || strncmp(r->section, k->full, k->sect_len) != 0)
		return false;
	if (strcmp(r->key, "*") != 0 && strcmp(r->key, k->name) != 0)
		return false;
	if (!r->sub)
		return !k->sub;
	return fnmatch(r->sub, k->sub ? k->sub : "", 0) == 0;
}

bool jf_git_config_key_refused(const char *key, size_t n, const char *value)
{
	char k[256], sub[256];
	const char *first, *last;
	struct key parts = {.full = k};

	if (n >= sizeof(k))
		return true;
	memcpy(k, key, n);
	k[n] = '\0';
	first = strchr(k, '.');
	last = strrchr(k, '.');
	if (!first || first == k || last[1] == '\0')
		return false; /* not a key git takes */
	for (char *p = k; p < first; p++)
		*p = g_lower(*p);
	for (char *p = k + (last + 1 - k); *p; p++)
		*p = g_lower(*p);
	parts.sect_len = (size_t)(first - k);
	parts.name = last + 1;
	if (first != last) {
		memcpy(sub, first + 1, (size_t)(last - first - 1));
		sub[last - first - 1] = '\0';
		parts.sub = sub;
	}
	for (size_t i = 0; i < N_REFUSED; i++)
		if (refused[i].when != OUTSIDE_TREE && key_matches(&refused[i], &parts) &&
		    value_refused(refused[i].when, value, ""))
			return true;
	return false;
}

/* ---- the parser: git's config.c, git_parse_source() ---- */

/* What the parser's steps return for a syntax git refuses; a check of a key
 * returns 0 or a negative errno (never this one). */
#define SYNTAX (-1)

struct cursor {
	const unsigned char *p, *end;
	bool eof;
	char *var; /* section[.subsection]. then the key: at most len + 2 bytes */
	size_t varlen, baselen;
	char *value; /* at most len + 1 bytes */
	const char *gitdir;
	char *key;
	size_t keysz;
	const char **why;
};

/* get_next_char(): "\r\n" reads as '\n', and the end as '\n' with @eof. */
static int next(struct cursor *c)
{
	int ch;

	if (c->p == c->end) {
		c->eof = true;
		return '\n';
	}
	ch = *c->p++;
	if (ch == '\r' && c->p < c->end && *c->p == '\n')
		ch = *c->p++;
	return ch;
}

/* get_extended_base_var(): [section "subsection"], @ch the space read. */
static int extended_base(struct cursor *c, int ch)
{
	do {
		if (ch == '\n')
			return SYNTAX;
		ch = next(c);
	} while (g_space(ch));
	if (ch != '"')
		return SYNTAX;
	c->var[c->varlen++] = '.';
	for (;;) {
		ch = next(c);
		if (ch == '\n')
			return SYNTAX;
		if (ch == '"')
			break;
		if (ch == '\\') {
			ch = next(c);
			if (ch == '\n')
				return SYNTAX;
		}
		c->var[c->varlen++] = (char)ch;
	}
	return next(c) == ']' ? 0 : SYNTAX;
}

/* get_base_var(): after '[', up to ']'. The legacy [section.subsection]
 * is folded to lower case whole, as git does. */
static int base_var(struct cursor *c)
{
	for (;;) {
		int ch = next(c);

		if (c->eof)
			return SYNTAX;
		if (ch == ']')
			return 0;
		if (g_space(ch))
			return extended_base(c, ch);
		if (!iskeychar(ch) && ch != '.')
			return SYNTAX;
		c->var[c->varlen++] = g_lower(ch);
	}
}

/* parse_value(): up to the end of the line; NULL when git would fail. */
static const char *parse_value(struct cursor *c)
{
	bool quote = false, comment = false;
	size_t len = 0, trim = 0;

	for (;;) {
		int ch = next(c);

		if (ch == '\n') {
			if (quote)
				return NULL;
			c->value[trim ? trim : len] = '\0';
			return c->value;
		}
		if (comment)
			continue;
		if (g_space(ch) && !quote) {
			if (!trim)
				trim = len;
			if (len)
				c->value[len++] = (char)ch;
			continue;
		}
		if (!quote && (ch == ';' || ch == '#')) {
			comment = true;
			continue;
		}
		trim = 0;
		if (ch == '\\') {
			ch = next(c);
			if (ch == '\n')
				continue; /* a continuation line */
			if (ch == 't')
				ch = '\t';
			else if (ch == 'b')
				ch = '\b';
			else if (ch == 'n')
				ch = '\n';
			else if (ch != '\\' && ch != '"')
				return NULL; /* git refuses an unknown escape */
		} else if (ch == '"') {
			quote = !quote;
			continue;
		}
		c->value[len++] = (char)ch;
	}
}

static void name_key(struct cursor *c)
{
	size_t n = c->varlen < c->keysz ? c->varlen : c->keysz - 1;

	memcpy(c->key, c->var, n);
	c->key[n] = '\0';
	if (n < c->varlen && c->keysz > 4)
		memcpy(c->key + c->keysz - 4, "...", 4);
}

/* One key and its value (NULL: none, which git takes as true). */
static int check_key(struct cursor *c, const char *value)
{
	_cleanup_free_ char *sub = NULL;
	const char *first, *last;
	struct key k = {.full = c->var};

	c->var[c->varlen] = '\0';
	first = strchr(c->var, '.');
	last = strrchr(c->var, '.');
	if (!first || first == c->var) {
		*c->why = "a key outside a section";
		return -EINVAL;
	}
	k.sect_len = (size_t)(first - c->var);
	k.name = last + 1;
	if (first != last) {
		sub = strndup(first + 1, (size_t)(last - first - 1));
		if (!sub)
			return -ENOMEM;
		k.sub = sub;
	}
	for (size_t i = 0; i < N_REFUSED; i++) {
		if (key_matches(&refused[i], &k) &&
		    value_refused(refused[i].when, value, c->gitdir)) {
			name_key(c);
			*c->why = refused[i].why;
			return -EINVAL;
		}
	}
	return 0;
}

/* get_value(): a key whose first letter @ch was read, then "= value". */
static int get_value(struct cursor *c, int ch)
{
	const char *value = NULL;

	c->varlen = c->baselen;
	c->var[c->varlen++] = g_lower(ch);
	for (;;) {
		ch = next(c);
		if (c->eof || !iskeychar(ch))
			break;
		c->var[c->varlen++] = g_lower(ch);
	}
	while (ch == ' ' || ch == '\t')
		ch = next(c);
	if (ch != '\n') {
		if (ch != '=')
			return SYNTAX;
		value = parse_value(c);
		if (!value)
			return SYNTAX;
	}
	return check_key(c, value);
}

static int parse(struct cursor *c)
{
	static const unsigned char bom[] = {0xef, 0xbb, 0xbf};
	bool comment = false;

	if ((size_t)(c->end - c->p) >= 3 && memcmp(c->p, bom, 3) == 0)
		c->p += 3;
	for (;;) {
		int ch = next(c), r;

		if (ch == '\n') {
			if (c->eof)
				return 0;
			comment = false;
			continue;
		}
		if (comment || g_space(ch))
			continue;
		if (ch == '#' || ch == ';') {
			comment = true;
			continue;
		}
		if (ch == '[') {
			c->varlen = 0;
			if (base_var(c) < 0 || c->varlen == 0)
				return SYNTAX;
			c->var[c->varlen++] = '.';
			c->baselen = c->varlen;
			continue;
		}
		if (!g_alpha(ch))
			return SYNTAX;
		r = get_value(c, ch);
		if (r != 0)
			return r;
	}
}

int jf_git_config_check(const unsigned char *buf, size_t len, const char *gitdir, char *key,
			size_t keysz, const char **why)
{
	_cleanup_free_ char *var = malloc(len + 3), *value = malloc(len + 2);
	struct cursor c = {.p = buf,
			   .end = buf + len,
			   .var = var,
			   .value = value,
			   .gitdir = gitdir,
			   .key = key,
			   .keysz = keysz,
			   .why = why};
	int r;

	*why = NULL;
	if (keysz)
		key[0] = '\0';
	if (!var || !value)
		return -ENOMEM;
	if (memchr(buf, '\0', len)) {
		*why = "a NUL byte in a git config"; /* git would cut the string there */
		return -EINVAL;
	}
	r = parse(&c);
	if (r == SYNTAX) {
		*why = "a git config git would not parse";
		return -EINVAL;
	}
	return r;
}
