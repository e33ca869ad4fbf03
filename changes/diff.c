/* SPDX-License-Identifier: MIT */
/*
 * `jailfs diff`: the layer's changes as a git-style unified diff from
 * SOURCE's root (a/ and b/ prefixes, git's mode, rename and quoting
 * lines), so that `git apply` takes it in SOURCE. A file with a NUL byte
 * in its first 8000 (git's test) or over JF_LAYER_HASH_MAX is binary.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "layer-internal.h"

#define CONTEXT 3

struct side {
	char *buf; /* content, or a symlink's target */
	size_t len;
	bool binary, present;
	mode_t mode;
};

/* Writes "PREFIX" @path as git does: C-quoted when it holds a byte git
 * quotes (core.quotePath). */
static void put_name(FILE *out, const char *prefix, const char *path)
{
	bool quote = false;

	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
			quote = true;
	if (!quote) {
		fprintf(out, "%s%s", prefix, path);
		return;
	}
	fprintf(out, "\"%s", prefix);
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		const char *esc = strchr("\a\b\t\n\v\f\r", *p) && *p ? "abtnvfr" : NULL;
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (esc)
			fprintf(out, "\\%c", esc[strchr("\a\b\t\n\v\f\r", *p) - "\a\b\t\n\v\f\r"]);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(out, "\\%03o", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static unsigned git_mode(mode_t m)
{
	if (S_ISLNK(m))
		return 0120000;
	return (m & S_IXUSR) ? 0100755 : 0100644;
}

/* Reads @path below @rootfd (regular file or symlink) into @s. */
static int load(int rootfd, const char *path, const struct stat *st, struct side *s)
{
	int r;

	*s = (struct side){.present = true, .mode = st->st_mode};
	if (S_ISLNK(st->st_mode)) {
		const char *name;
		_cleanup_close_ int pfd = jf_layer_parent(rootfd, path, &name);
		s->buf = malloc(4097);
		ssize_t n = s->buf && pfd >= 0 ? readlinkat(pfd, name, s->buf, 4096) : -1;
		if (n < 0)
			return pfd < 0 ? pfd : -errno;
		s->buf[n] = '\0';
		s->len = (size_t)n;
		return 0;
	}
	r = jf_layer_read_file(rootfd, path, JF_LAYER_HASH_MAX, &s->buf, &s->len);
	if (r == -EFBIG) {
		s->binary = true;
		return 0;
	}
	if (r < 0)
		return r;
	s->binary = memchr(s->buf, '\0', s->len < 8000 ? s->len : 8000) != NULL;
	return 0;
}

static void put_line(FILE *out, char tag, const struct jf_line *ln)
{
	fputc(tag, out);
	fwrite(ln->p, 1, ln->len, out);
	if (!ln->len || ln->p[ln->len - 1] != '\n')
		fputs("\n\\ No newline at end of file\n", out);
}

/* Where the hunk whose first change is at @i of the script ends: after
 * CONTEXT equal lines that more than 2 * CONTEXT equal lines follow. */
static size_t hunk_end(const char *ops, size_t n, size_t i)
{
	size_t e = i;

	while (e < n) {
		size_t run = 0;
		while (e + run < n && ops[e + run] == 'e')
			run++;
		if (e + run == n || run > 2 * CONTEXT)
			return e + (run < CONTEXT ? run : CONTEXT);
		e += run;
		while (e < n && ops[e] != 'e')
			e++;
	}
	return e;
}

/* Prints the hunk of script lines [@s, @e), which start at line @x of @la
 * and @y of @lb (0-based). */
static void hunk_print(FILE *out, const char *ops, size_t s, size_t e, size_t x, size_t y,
		       const struct jf_line *la, const struct jf_line *lb)
{
	size_t cx = 0, cy = 0;

	for (size_t j = s; j < e; j++) {
		cx += ops[j] != 'i';
		cy += ops[j] != 'd';
	}
	/* an empty side names the line before it, as diff(1) does */
	fprintf(out, "@@ -%zu", cx ? x + 1 : x);
	if (cx != 1)
		fprintf(out, ",%zu", cx);
	fprintf(out, " +%zu", cy ? y + 1 : y);
	if (cy != 1)
		fprintf(out, ",%zu", cy);
	fputs(" @@\n", out);
	for (size_t j = s; j < e; j++) {
		if (ops[j] == 'e')
			put_line(out, ' ', &la[x++]), y++;
		else if (ops[j] == 'd')
			put_line(out, '-', &la[x++]);
		else
			put_line(out, '+', &lb[y++]);
	}
}

/* The hunks of @a against @b. */
static int hunks(FILE *out, const struct side *a, const struct side *b)
{
	_cleanup_free_ struct jf_line *la = NULL, *lb = NULL;
	_cleanup_free_ char *ops = NULL;
	size_t na = 0, nb = 0, n = 0;
	int r = jf_lines(a->buf, a->len, &la, &na);

	if (r == 0)
		r = jf_lines(b->buf, b->len, &lb, &nb);
	if (r == 0)
		r = jf_myers(la, na, lb, nb, &ops, &n);
	if (r < 0)
		return r;
	for (size_t i = 0, x = 0, y = 0; i < n;) {
		size_t s = i, ax = x, by = y, e;

		if (ops[i] != 'e') {
			/* back up CONTEXT equal lines */
			for (size_t c = 0; c < CONTEXT && s > 0 && ops[s - 1] == 'e'; c++)
				s--, ax--, by--;
			e = hunk_end(ops, n, i);
			hunk_print(out, ops, s, e, ax, by, la, lb);
		} else {
			e = i + 1;
		}
		for (; i < e; i++) {
			x += ops[i] != 'i';
			y += ops[i] != 'd';
		}
	}
	return 0;
}

/* One file's diff: @a at @apath (absent: added), @b at @bpath (absent:
 * deleted). */
static int file_diff(FILE *out, const char *apath, const struct side *a, const char *bpath,
		     const struct side *b)
{
	bool rename = a->present && b->present && strcmp(apath, bpath);
	bool same = a->present && b->present && a->len == b->len && !a->binary && !b->binary &&
		    !memcmp(a->buf, b->buf, a->len);

	fputs("diff --git ", out);
	put_name(out, "a/", a->present ? apath : bpath);
	fputc(' ', out);
	put_name(out, "b/", b->present ? bpath : apath);
	fputc('\n', out);
	if (!a->present)
		fprintf(out, "new file mode %06o\n", git_mode(b->mode));
	else if (!b->present)
		fprintf(out, "deleted file mode %06o\n", git_mode(a->mode));
	else if (git_mode(a->mode) != git_mode(b->mode))
		fprintf(out, "old mode %06o\nnew mode %06o\n", git_mode(a->mode),
			git_mode(b->mode));
	if (rename) {
		if (same) /* git computes a similarity for the rest; apply needs none */
			fputs("similarity index 100%\n", out);
		fputs("rename from ", out);
		put_name(out, "", apath);
		fputs("\nrename to ", out);
		put_name(out, "", bpath);
		fputc('\n', out);
	}
	if (same || (!a->len && !b->len && !a->binary && !b->binary))
		return 0;
	if (a->binary || b->binary) {
		fputs("Binary files ", out);
		a->present ? put_name(out, "a/", apath) : (void)fputs("/dev/null", out);
		fputs(" and ", out);
		b->present ? put_name(out, "b/", bpath) : (void)fputs("/dev/null", out);
		fputs(" differ\n", out);
		return 0;
	}
	fputs("--- ", out);
	a->present ? put_name(out, "a/", apath) : (void)fputs("/dev/null", out);
	fputs("\n+++ ", out);
	b->present ? put_name(out, "b/", bpath) : (void)fputs("/dev/null", out);
	fputc('\n', out);
	return hunks(out, a, b);
}

static int change_diff(struct jf_layer *l, FILE *out, const struct jf_change *e)
{
	struct side a = {0}, b = {0};
	const char *apath = e->from ? e->from : e->path;
	bool old_file = e->kind != JF_CH_ADDED && !S_ISDIR(e->old.st_mode);
	bool new_file = e->kind != JF_CH_DELETED && !S_ISDIR(e->new.st_mode);
	int r = 0;

	if (old_file && (S_ISREG(e->old.st_mode) || S_ISLNK(e->old.st_mode)))
		r = load(l->srcfd, apath, &e->old, &a);
	if (r == 0 && new_file && (S_ISREG(e->new.st_mode) || S_ISLNK(e->new.st_mode)))
		r = load(l->upperfd, e->path, &e->new, &b);
	if (r == 0 && a.present && b.present &&
	    (a.mode & S_IFMT) != (b.mode & S_IFMT)) { /* git: a deletion, then an addition */
		struct side none = {0};
		r = file_diff(out, apath, &a, e->path, &none);
		if (r == 0)
			r = file_diff(out, apath, &none, e->path, &b);
	} else if (r == 0 && (a.present || b.present)) {
		r = file_diff(out, apath, &a, e->path, &b);
	}
	free(a.buf);
	free(b.buf);
	return r;
}

int jf_layer_diff(struct jf_layer *l, const char *const *paths, size_t n, jf_layer_safe_fn shown,
		  void *shown_data, FILE *out, size_t *ret_hidden)
{
	struct jf_changes c = {0};
	int r = jf_layer_list(l, paths, n, &c);
	size_t hidden = 0;

	for (size_t i = 0; r == 0 && i < c.n; i++) {
		const struct jf_change *e = &c.v[i];

		if (shown &&
		    (!shown(e->path, shown_data) || (e->from && !shown(e->from, shown_data)))) {
			hidden++;
			continue;
		}
		r = change_diff(l, out, e);
	}
	jf_change_list_free(&c);
	if (ret_hidden)
		*ret_hidden = hidden;
	return r;
}
