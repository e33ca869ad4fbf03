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

#include "guard.h"

struct sh_cmd {
	char **words;
	int n, cap;
	char *redir[64]; /* redirection targets (paths) */
	int nredir;
	bool stdin_text; /* after a '|', or with << / <<< */
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
	c->stdin_text = false;
}

/* Check one simple command collected by check_shell, then forget it. */
static bool sh_run(struct walk *w, struct sh_cmd *c)
{
	int i = 0;
	bool r = false;

	for (int k = 0; k < c->nredir && !r; k++)
		r = jr_check_path_arg(w, c->redir[k]);
	while (!r && i < c->n) {
		const char *a = c->words[i];
		size_t n = strcspn(a, "=");

		if (a[n] == '=' && n > 0 && (isalpha((unsigned char)a[0]) || a[0] == '_')) {
			i++; /* NAME=VALUE prefix */
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
		r = jr_check_cmd(w, c->n - i, c->words + i);
		w->stdin_text = false;
		break;
	}
	sh_clear(c);
	return r;
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

/* The shell string lexer: words, quotes, operators, substitutions. */
struct sh_lex {
	struct walk *w; /* one level deeper than the caller's */
	const char *p;	/* next byte */
	const char *start;
	char *word; /* the word being built (3 x input + 8 bytes) */
	size_t wl;
	bool in_word, want_redir, skip_word;
	bool denied, oom;
	struct sh_cmd c;
};

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
			lex_subst(l, false);
		} else {
			l->word[l->wl++] = *l->p++;
		}
	}
	if (*l->p == '"')
		l->p++;
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
		l->p = p + 2 + (p[2] == '<' || p[2] == '-');
		l->skip_word = true;
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
	} else if (strchr(";&|\n()", ch)) {
		/* a lone '|' or '|&' pipes into the next command; '||' does not */
		bool after_pipe = l->p > l->start && l->p[-1] == '|';
		bool pipe = (ch == '|' && l->p[1] != '|' && !after_pipe) ||
			    (ch == '&' && after_pipe && l->c.stdin_text);

		lex_end_word(l);
		if (!l->oom)
			l->denied = sh_run(l->w, &l->c);
		l->c.stdin_text = pipe;
		l->p++;
	} else if (ch == '\\' && l->p[1]) {
		l->in_word = true;
		if (l->p[1] != '\n')
			l->word[l->wl++] = l->p[1];
		l->p += 2;
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
	struct sh_lex l = {.w = &inner, .p = s, .start = s};

	if (++inner.depth > MAX_DEPTH)
		return jr_deny(w, "nesting", "shell commands nested too deep");
	l.word = malloc(strlen(s) * 3 + 8); /* "``" (2 bytes) becomes "$SUBST" (6) */
	if (!l.word)
		return jr_deny(w, "internal", "out of memory");
	while (*l.p && !l.denied && !l.oom)
		lex_step(&l);
	if (!l.denied && !l.oom) {
		lex_end_word(&l);
		if (!l.oom)
			l.denied = sh_run(&inner, &l.c);
	}
	sh_clear(&l.c);
	free(l.c.words);
	free(l.word);
	if (l.oom && !l.denied)
		return jr_deny(w, "internal", "out of memory");
	return l.denied;
}
