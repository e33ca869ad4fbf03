/* SPDX-License-Identifier: MIT */
/*
 * Guardrails for --shell strings: a small lexer that splits a shell command
 * into simple commands (lists, pipelines, $(...), `...`, redirections,
 * keywords, quotes) and hands each to jr_check_cmd (guard.c). Best effort by
 * design: variables and globs are not expanded (the namespace is the wall).
 * A command fed a pipe or a here-document is marked (walk.stdin_text) so an
 * interpreter reading its program from there is refused as inline code.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "guard-path.h"
#include "guard-shell.h"
#include "guard-tools.h"
#include "guard-walk.h"
#include "guard.h"
#include "resolve.h"

struct sh_cmd {
	char **words;
	int n, cap;
	char *redir[64]; /* redirection targets (paths) */
	int nredir;
	bool stdin_text; /* after a '|', or with << / <<< */
	bool piped;	 /* after a '|': runs in a subshell of its own */
};

static const char *const sh_keywords[] = {"if", "then", "else",	 "elif",  "fi",
					  "do", "done", "while", "until", "!",
					  "{",	"}",	"time",	 "esac",  NULL};

static bool is_keyword(const char *a)
{
	for (const char *const *k = sh_keywords; *k; k++)
		if (strcmp(*k, a) == 0)
			return true;
	return false;
}

static void sh_clear(struct sh_cmd *c)
{
	for (int k = 0; k < c->n; k++)
		free(c->words[k]);
	for (int k = 0; k < c->nredir; k++)
		free(c->redir[k]);
	c->n = c->nredir = 0;
	c->stdin_text = c->piped = false;
}

static int sh_push(struct sh_cmd *c, char *word, bool redir)
{
	if (redir) {
		if (c->nredir >= (int)ARRAY_SIZE(c->redir)) {
			free(word);
			return 0;
		}
		c->redir[c->nredir++] = word;
		return 0;
	}
	if (c->n + 1 >= c->cap) {
		int cap = c->cap ? c->cap * 2 : 16;
		char **nw = realloc(c->words, (cap + 1) * sizeof(char *));

		if (!nw)
			return -ENOMEM;
		c->words = nw;
		c->cap = cap;
	}
	c->words[c->n++] = word;
	c->words[c->n] = NULL;
	return 0;
}

/* Return the end of a $( ... ) starting after "$(", counting parens and
 * skipping quotes; *inner gets a copy of the inside. */
static const char *sh_subst_end(const char *s, char close, char **inner)
{
	const char *p = s;
	int depth = 1;
	char q = 0;

	for (; *p; p++) {
		if (q) {
			if (*p == q)
				q = 0;
			else if (*p == '\\' && q == '"' && p[1])
				p++;
			continue;
		}
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (close == ')' && (*p == '\'' || *p == '"')) {
			q = *p;
			continue;
		}
		if (close == ')' && *p == '(')
			depth++;
		else if (*p == close && --depth == 0)
			break;
	}
	*inner = strndup(s, p - s);
	return *p ? p + 1 : p;
}

struct heredoc {
	char *delim; /* quotes removed */
	bool dash;   /* <<-: leading tabs of the body and the delimiter line go */
	bool quoted; /* a quoted delimiter: the body is not expanded */
};

/* The shell string lexer: words, quotes, operators, substitutions. */
struct sh_lex {
	struct walk *w; /* one level deeper than the caller's; w->cwd is @cwd */
	const char *p;	/* next byte */
	const char *start;
	char *word; /* the word being built (3 x input + 8 bytes) */
	size_t wl;
	bool in_word, want_redir, skip_word;
	bool denied, oom;
	struct sh_cmd c;
	/* the working directory as cd leaves it, for the commands after it;
	 * each open '(' subshell saves the one to go back to at its ')' */
	char cwd[PATH_MAX], oldcwd[PATH_MAX];
	char *saved[8];
	int nsaved;
	struct heredoc hd[8]; /* here-documents whose bodies start at the next newline */
	int nhd;
};

/* cd [-L|-P|-e|-@]... [DIR]: where the next commands run. An operand only
 * known at run time ($VAR, $(...), a glob) leaves the directory as it was:
 * the commands after it are then judged from there. Symlinks are followed
 * (cd -P); a directory that does not exist yet (mkdir -p x && cd x) is
 * taken as written. */
static void sh_cd(struct sh_lex *l, int argc, char *const argv[])
{
	char dir[PATH_MAX], out[PATH_MAX];
	const char *a;
	int i = 1;

	while (i < argc && argv[i][0] == '-' && argv[i][1] && strcmp(argv[i], "--") != 0)
		i++;
	i += i < argc && strcmp(argv[i], "--") == 0;
	a = i < argc ? argv[i] : "~";
	if (strcmp(a, "-") == 0)
		a = l->oldcwd;
	if (strpbrk(a, "$*?[") || (a[0] == '~' && a[1] && a[1] != '/'))
		return;
	if ((size_t)snprintf(dir, sizeof(dir), "%s%s", a[0] == '~' ? l->w->g->home : "",
			     a + (a[0] == '~')) >= sizeof(dir) ||
	    jr_resolve(l->w->g->view, l->cwd, dir, out, NULL) < 0)
		return;
	memcpy(l->oldcwd, l->cwd, sizeof(l->oldcwd));
	memcpy(l->cwd, out, sizeof(l->cwd));
}

/* Past a parameter expansion at @s (on the '$'), what it is taken to expand
 * to appended at *@o: the WORD of ${NAME:-WORD} and ${NAME-WORD} (and :=, =),
 * nothing for any other (an unset or empty variable, $1, $@, $SUBST). */
static const char *skip_expansion(const char *s, char **o)
{
	const char *e, *w;
	size_t n;

	if (s[1] != '{') {
		n = strspn(s + 1,
			   "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		return s + 1 + (n ? n : (s[1] && strchr("@*#?$!-", s[1]) ? 1 : 0));
	}
	e = strchrnul(s, '}');
	w = s + 2 +
	    strspn(s + 2, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
	w += *w == ':';
	if (w < e && (*w == '-' || *w == '=')) {
		memcpy(*o, w + 1, e - w - 1);
		*o += e - w - 1;
	}
	return *e ? e + 1 : e;
}

/* Check a simple command whose name may hold parameter expansions: ${x}rm
 * and r${x}m run rm when x is empty or unset, ${PY:-python3} runs python3.
 * The name is judged as it reads with each expansion taken that way; a name
 * that is nothing but expansions ("$CC") stays unknown. */
static bool check_name_expanded(struct walk *w, int argc, char *argv[])
{
	const char *a = argv[0];
	_cleanup_free_ char *name = NULL;
	char *o, *saved = argv[0];
	bool r;

	if (!strchr(a, '$'))
		return jr_check_cmd(w, argc, argv);
	name = malloc(strlen(a) + 1);
	if (!name)
		return jr_deny(w, "internal", "out of memory");
	for (o = name; *a;) {
		if (*a == '$')
			a = skip_expansion(a, &o);
		else
			*o++ = *a++;
	}
	*o = '\0';
	if (!*name || name[strlen(name) - 1] == '/')
		return jr_check_cmd(w, argc, argv);
	argv[0] = name;
	r = jr_check_cmd(w, argc, argv);
	argv[0] = saved;
	return r;
}

/* Check the simple command collected so far, then forget it. @forked: it
 * runs in a subshell of its own (a pipeline's part, or backgrounded), so a
 * cd there changes nothing after it. */
static void sh_run(struct sh_lex *l, bool forked)
{
	struct walk *w = l->w;
	struct sh_cmd *c = &l->c;
	int i = 0;
	bool r = false;

	for (int k = 0; k < c->nredir && !r; k++)
		r = jr_check_path_arg(w, c->redir[k]);
	while (!r && i < c->n) {
		const char *a = c->words[i];
		size_t n = strcspn(a, "=");

		if (a[n] == '=' && n > 0 && (isalpha((unsigned char)a[0]) || a[0] == '_')) {
			r = jr_check_assign(w, a); /* NAME=VALUE prefix */
			i++;
			continue;
		}
		if (is_keyword(a)) {
			i++;
			continue;
		}
		if (!strcmp(a, "for") || !strcmp(a, "case") || !strcmp(a, "select") ||
		    !strcmp(a, "[[") || !strcmp(a, "((") || !strcmp(a, "function"))
			break; /* only words, no command in this segment */
		if (!strcmp(a, ".") || !strcmp(a, "source")) {
			r = jr_check_paths(w, i + 1, c->n, c->words);
			break;
		}
		w->stdin_text = c->stdin_text;
		r = check_name_expanded(w, c->n - i, c->words + i);
		w->stdin_text = false;
		if (!r && !forked && (!strcmp(a, "cd") || !strcmp(a, "pushd")))
			sh_cd(l, c->n - i, c->words + i);
		break;
	}
	sh_clear(c);
	l->denied = r;
}

static void lex_heredoc_free(struct sh_lex *l)
{
	while (l->nhd > 0)
		free(l->hd[--l->nhd].delim);
}

/* '(' starts a subshell: a cd inside ends at its ')'. */
static void sh_subshell(struct sh_lex *l, char ch)
{
	if (ch == '(' && l->nsaved < (int)ARRAY_SIZE(l->saved)) {
		l->saved[l->nsaved] = strdup(l->cwd);
		if (!l->saved[l->nsaved])
			l->oom = true;
		else
			l->nsaved++;
	} else if (ch == ')' && l->nsaved > 0) {
		char *s = l->saved[--l->nsaved];

		snprintf(l->cwd, sizeof(l->cwd), "%s", s);
		free(s);
	}
}

static void lex_end_word(struct sh_lex *l)
{
	if (l->in_word) {
		char *d = strndup(l->word, l->wl);

		if (!d) {
			l->oom = true;
		} else if (l->skip_word) {
			free(d);
		} else if (sh_push(&l->c, d, l->want_redir) < 0) {
			free(d);
			l->oom = true;
		}
		l->want_redir = l->skip_word = false;
	}
	l->in_word = false;
	l->wl = 0;
}

/* $( ... ) or ` ... ` at l->p: the inside is a command of its own. */
static void lex_subst(struct sh_lex *l, bool in_word)
{
	bool dollar = *l->p == '$';
	char *sub = NULL;
	const char *e = sh_subst_end(l->p + (dollar ? 2 : 1), dollar ? ')' : '`', &sub);

	if (!sub) {
		l->oom = true;
		return;
	}
	l->denied = jr_check_shell(l->w, sub);
	free(sub);
	if (in_word) {
		memcpy(l->word + l->wl, "$SUBST", 6); /* text unknown until run */
		l->wl += 6;
	}
	l->p = e;
}

static void lex_double_quote(struct sh_lex *l)
{
	for (l->p++; *l->p && *l->p != '"' && !l->denied && !l->oom;) {
		if (*l->p == '\\' && l->p[1]) {
			l->word[l->wl++] = l->p[1];
			l->p += 2;
		} else if ((*l->p == '$' && l->p[1] == '(') || *l->p == '`') {
			lex_subst(l, true); /* "$(pwd)/x": text unknown, not "/x" */
		} else {
			l->word[l->wl++] = *l->p++;
		}
	}
	if (*l->p == '"')
		l->p++;
}

/* << WORD: the delimiter of a here-document whose body starts after the next
 * newline. Quotes in WORD are removed and mean the body is not expanded. */
static void lex_heredoc(struct sh_lex *l, bool dash)
{
	struct heredoc *h;
	size_t n = 0;
	char q = 0, *d;

	if (l->nhd >= (int)ARRAY_SIZE(l->hd)) {
		/* refuse rather than read a body as commands */
		l->denied = jr_deny(l->w, "nesting", "more than %zu here-documents pending",
				    ARRAY_SIZE(l->hd));
		return;
	}
	d = malloc(strlen(l->p) + 1);
	if (!d) {
		l->oom = true;
		return;
	}
	h = &l->hd[l->nhd];
	*h = (struct heredoc){.delim = d, .dash = dash};
	l->p += strspn(l->p, " \t");
	for (; *l->p && (q || !strchr(" \t\n;&|<>()", *l->p)); l->p++) {
		if (q && *l->p == q) {
			q = 0;
		} else if (!q && (*l->p == '\'' || *l->p == '"')) {
			q = *l->p;
			h->quoted = true;
		} else if (q != '\'' && *l->p == '\\' && l->p[1]) {
			h->quoted = true;
			d[n++] = *++l->p;
		} else {
			d[n++] = *l->p;
		}
	}
	d[n] = '\0';
	l->nhd++;
}

/* One line of an expanded here-document body, from l->p to @eol: only its
 * $(...) and `...` run. */
static void lex_body_line(struct sh_lex *l, const char *eol)
{
	while (l->p < eol && !l->denied && !l->oom) {
		if (*l->p == '\\' && l->p[1])
			l->p += 2;
		else if ((*l->p == '$' && l->p[1] == '(') || *l->p == '`')
			lex_subst(l, false);
		else
			l->p++;
	}
}

/* After a newline: skip the bodies of the pending here-documents (text fed
 * to the command, not commands), checking what an unquoted one expands. */
static void lex_heredoc_bodies(struct sh_lex *l)
{
	for (int k = 0; k < l->nhd; k++) {
		const struct heredoc *h = &l->hd[k];

		while (*l->p && !l->denied && !l->oom) {
			const char *eol = strchrnul(l->p, '\n');
			const char *t = l->p + (h->dash ? strspn(l->p, "\t") : 0);
			bool end = (size_t)(eol - t) == strlen(h->delim) &&
				   strncmp(t, h->delim, eol - t) == 0;

			if (!end && !h->quoted)
				lex_body_line(l, eol);
			if (l->p <= eol)
				l->p = *eol ? eol + 1 : eol;
			if (end)
				break;
		}
	}
	lex_heredoc_free(l);
}

/* < > >> >| 2> &> <& >& << <<< : the next word is a path, a fd, or text. */
static void lex_redirect(struct sh_lex *l)
{
	const char *p = l->p;
	size_t digits = 0;

	while (digits < l->wl && l->word[digits] >= '0' && l->word[digits] <= '9')
		digits++;
	if (l->in_word && digits == l->wl) /* "2>": the word was a fd number */
		l->in_word = false, l->wl = 0;
	lex_end_word(l);
	if (*p == '&') /* &> FILE, &>> FILE */
		p++;
	if (p[0] == '<' && p[1] == '<') { /* heredoc delimiter or herestring */
		l->c.stdin_text = true;
		if (p[2] == '<') {
			l->p = p + 3;
			l->skip_word = true;
			return;
		}
		l->p = p + 2 + (p[2] == '-');
		lex_heredoc(l, p[2] == '-');
		return;
	}
	p++;
	if (*p == '>' || *p == '|')
		p++;
	if (*p == '&') { /* >&2, <&- */
		l->p = p + 1;
		l->skip_word = true;
		return;
	}
	l->p = p;
	l->want_redir = true;
}

/* (( EXPR )): arithmetic, where << is a shift, not a here-document. The
 * command before it ends; EXPR is checked for its $(...) like a string of
 * its own (what is left over, "<<" included, runs nothing). */
static void lex_arith(struct sh_lex *l)
{
	char *inner = NULL;
	const char *e;

	lex_end_word(l);
	if (l->oom)
		return;
	sh_run(l, l->c.piped);
	if (l->denied)
		return;
	e = sh_subst_end(l->p + 2, ')', &inner);
	if (!inner) {
		l->oom = true;
		return;
	}
	l->denied = jr_check_shell(l->w, inner);
	free(inner);
	l->p = e;
}

/* One escape of $'...' at @s (after the backslash): the byte it stands for in
 * *@c (0 for one beyond ASCII, which names no command we know). Returns the
 * first byte after it. */
static const char *ansi_c_escape(const char *s, char *c)
{
	static const char from[] = "abefnrtv\\'\"?E", to[] = "\a\b\033\f\n\r\t\v\\'\"?\033";
	const char *k = *s ? strchr(from, *s) : NULL;
	unsigned v = 0;
	int n = 0;

	if (k) {
		*c = to[k - from];
		return s + 1;
	}
	if (*s >= '0' && *s <= '7') {
		for (; n < 3 && *s >= '0' && *s <= '7'; n++)
			v = v * 8 + (unsigned)(*s++ - '0');
	} else if (*s == 'x' || *s == 'u' || *s == 'U') {
		int max = *s == 'x' ? 2 : *s == 'u' ? 4 : 8;

		for (s++; n < max && isxdigit((unsigned char)*s); n++, s++)
			v = v * 16 + (unsigned)(isdigit((unsigned char)*s)
							? *s - '0'
							: (tolower((unsigned char)*s) - 'a' + 10));
	} else if (*s == 'c' && s[1]) {
		*c = (char)(s[1] & 0x1f);
		return s + 2;
	} else {
		*c = '\\'; /* unknown: the backslash stays, the next byte follows */
		return s;
	}
	*c = v && v < 0x80 ? (char)v : 0;
	return s;
}

/* $'...' (bash, zsh, ksh, and POSIX since 2024): backslash escapes decoded,
 * so $'\x72m' is the word rm. */
static void lex_ansi_c(struct sh_lex *l)
{
	const char *s = l->p + 2;

	while (*s && *s != '\'') {
		char c = *s++;

		if (c == '\\' && *s)
			s = ansi_c_escape(s, &c);
		if (c)
			l->word[l->wl++] = c;
	}
	l->p = *s ? s + 1 : s;
}

static void lex_step(struct sh_lex *l)
{
	char ch = *l->p;

	if (ch == '#' && !l->in_word) {
		l->p += strcspn(l->p, "\n");
	} else if (ch == ' ' || ch == '\t') {
		lex_end_word(l);
		l->p++;
	} else if (ch == '<' || ch == '>' || (ch == '&' && l->p[1] == '>')) {
		lex_redirect(l);
	} else if (ch == '(' && l->p[1] == '(' && !l->in_word) {
		lex_arith(l);
	} else if (strchr(";&|\n()", ch)) {
		/* a lone '|' or '|&' pipes into the next command; '||' does not */
		bool after_pipe = l->p > l->start && l->p[-1] == '|';
		bool pipe = (ch == '|' && l->p[1] != '|' && !after_pipe) ||
			    (ch == '&' && after_pipe && l->c.stdin_text);
		bool background = ch == '&' && l->p[1] != '&' && !after_pipe &&
				  !(l->p > l->start && l->p[-1] == '&');

		lex_end_word(l);
		if (!l->oom)
			sh_run(l, pipe || background || l->c.piped);
		l->c.stdin_text = l->c.piped = pipe;
		sh_subshell(l, ch);
		l->p++;
		if (ch == '\n' && l->nhd)
			lex_heredoc_bodies(l);
	} else if (ch == '\\' && l->p[1]) {
		l->in_word = true;
		if (l->p[1] != '\n')
			l->word[l->wl++] = l->p[1];
		l->p += 2;
	} else if (ch == '$' && l->p[1] == '\'') {
		l->in_word = true;
		lex_ansi_c(l);
	} else if (ch == '\'') {
		const char *e = strchrnul(l->p + 1, '\'');

		l->in_word = true;
		memcpy(l->word + l->wl, l->p + 1, e - l->p - 1);
		l->wl += e - l->p - 1;
		l->p = *e ? e + 1 : e;
	} else if ((ch == '$' && l->p[1] == '(') || ch == '`') {
		l->in_word = true;
		lex_subst(l, true);
	} else if (ch == '"') {
		l->in_word = true;
		lex_double_quote(l);
	} else {
		l->in_word = true;
		l->word[l->wl++] = *l->p++;
	}
}

bool jr_check_shell(struct walk *w, const char *s)
{
	struct walk inner = *w;
	_cleanup_free_ struct sh_lex *lp = calloc(1, sizeof(*lp));
	struct sh_lex *l = lp;

	if (!l)
		return jr_deny(w, "internal", "out of memory");
	if (++inner.depth > MAX_DEPTH)
		return jr_deny(w, "nesting", "shell commands nested too deep");
	*l = (struct sh_lex){.w = &inner, .p = s, .start = s};
	snprintf(l->cwd, sizeof(l->cwd), "%s", w->cwd);
	snprintf(l->oldcwd, sizeof(l->oldcwd), "%s", w->cwd);
	inner.cwd = l->cwd;
	l->word = malloc(strlen(s) * 3 + 8); /* "``" (2 bytes) becomes "$SUBST" (6) */
	if (!l->word)
		return jr_deny(w, "internal", "out of memory");
	while (*l->p && !l->denied && !l->oom)
		lex_step(l);
	if (!l->denied && !l->oom) {
		lex_end_word(l);
		if (!l->oom)
			sh_run(l, l->c.piped);
	}
	sh_clear(&l->c);
	lex_heredoc_free(l);
	while (l->nsaved > 0)
		free(l->saved[--l->nsaved]);
	free(l->c.words);
	free(l->word);
	if (l->oom && !l->denied)
		return jr_deny(w, "internal", "out of memory");
	return l->denied;
}
