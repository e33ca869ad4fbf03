/* SPDX-License-Identifier: MIT */
/*
 * Net changes from audit records (net-changes.h).
 *
 * Two namespaces are kept apart. "cur" maps each path of the view as it is
 * now (as far as the records tell) to the object there, a node; "orig" maps
 * each path of the tree as it was before the first record to what the
 * records say was there: EXISTED, ABSENT or UNKNOWN (a rename landed on it
 * before anything else said). A node remembers the original path of the
 * object it stands for (NULL for an object made during the run), whether
 * it was written and whether it was renamed by name. A directory renamed
 * carries the nodes below it; a path first seen below a renamed directory
 * is mapped back to its original path through its nearest known ancestor.
 * Both maps are jansson objects used as string maps, as in the report.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "audit-read.h"
#include "cleanup.h"
#include "net-changes.h"

enum { ST_EXISTED = 1, ST_ABSENT, ST_UNKNOWN };

struct node {
	char *origin; /* original path, NULL: made during the run */
	bool modified, moved, alive;
};

struct jf_net_changes {
	json_t *cur;   /* path now -> node index */
	json_t *below; /* path now -> how many entries of cur lie below it (> 0) */
	json_t *orig;  /* path before -> ST_* */
	struct node *nodes;
	size_t n, cap;
	size_t allowed;
	const char *incomplete;
	struct jf_net_change *list; /* the last jf_net_list() */
	char **strs;		    /* its strings */
	size_t nlist, nstrs, lcap, scap;
};

int jf_net_new(struct jf_net_changes **ret)
{
	struct jf_net_changes *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	n->cur = json_object();
	n->below = json_object();
	n->orig = json_object();
	if (!n->cur || !n->below || !n->orig) {
		jf_net_free(n);
		return -ENOMEM;
	}
	*ret = n;
	return 0;
}

static void drop_list(struct jf_net_changes *n)
{
	for (size_t i = 0; i < n->nstrs; i++)
		free(n->strs[i]);
	free(n->strs);
	free(n->list);
	n->strs = NULL;
	n->list = NULL;
	n->nstrs = n->nlist = n->lcap = n->scap = 0;
}

void jf_net_free(struct jf_net_changes *n)
{
	if (!n)
		return;
	drop_list(n);
	for (size_t i = 0; i < n->n; i++)
		free(n->nodes[i].origin);
	free(n->nodes);
	json_decref(n->cur);
	json_decref(n->below);
	json_decref(n->orig);
	free(n);
}

static int cur_get(struct jf_net_changes *n, const char *path)
{
	json_t *v = json_object_get(n->cur, path);

	return v ? (int)json_integer_value(v) : -1;
}

static int orig_get(struct jf_net_changes *n, const char *path)
{
	return (int)json_integer_value(json_object_get(n->orig, path));
}

static int set_int(json_t *map, const char *key, long v)
{
	return json_object_set_new(map, key, json_integer(v)) ? -ENOMEM : 0;
}

/* Add @by to the count of entries below each ancestor of @path: a path
 * with nothing below it is unlinked or renamed without a walk of "cur". */
static int count_below(struct jf_net_changes *n, const char *path, long by)
{
	_cleanup_free_ char *dir = strdup(path);
	char *slash;

	if (!dir)
		return -ENOMEM;
	while ((slash = strrchr(dir, '/'))) {
		long c;

		*slash = '\0';
		c = (long)json_integer_value(json_object_get(n->below, dir)) + by;
		if (c <= 0)
			json_object_del(n->below, dir);
		else if (set_int(n->below, dir, c) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int cur_set(struct jf_net_changes *n, const char *path, long i)
{
	bool had = json_object_get(n->cur, path) != NULL;

	if (set_int(n->cur, path, i) < 0)
		return -ENOMEM;
	return had ? 0 : count_below(n, path, 1);
}

static void cur_del(struct jf_net_changes *n, const char *path)
{
	if (!json_object_get(n->cur, path))
		return;
	count_below(n, path, -1); /* ENOMEM: a count too high costs a walk */
	json_object_del(n->cur, path);
}

static bool has_below(struct jf_net_changes *n, const char *path)
{
	return json_object_get(n->below, path) != NULL;
}

/* A new live node at @path, standing for the original object at @origin
 * (copied; NULL: a new object). Its index, or -ENOMEM. */
static int new_node(struct jf_net_changes *n, const char *path, const char *origin)
{
	struct node *d;

	if (n->n == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 64;
		struct node *p = realloc(n->nodes, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		n->nodes = p;
		n->cap = cap;
	}
	d = &n->nodes[n->n];
	*d = (struct node){.alive = true};
	if (origin && !(d->origin = strdup(origin)))
		return -ENOMEM;
	if (cur_set(n, path, (long)n->n) < 0) {
		free(d->origin);
		return -ENOMEM;
	}
	return (int)n->n++;
}

/* The original path of the current path @path (malloc'd into *@ret), from
 * its nearest ancestor the records know: NULL in *@ret when that ancestor
 * was made during the run (nothing below it existed before). */
static int orig_of(struct jf_net_changes *n, const char *path, char **ret)
{
	size_t len = strlen(path);
	_cleanup_free_ char *dir = strdup(path);
	char *slash;

	*ret = NULL;
	if (!dir)
		return -ENOMEM;
	while ((slash = strrchr(dir, '/'))) {
		int i;

		*slash = '\0';
		i = cur_get(n, dir);
		if (i < 0)
			continue;
		if (!n->nodes[i].origin)
			return 0;
		*ret = malloc(strlen(n->nodes[i].origin) + len - strlen(dir) + 1);
		if (!*ret)
			return -ENOMEM;
		strcpy(*ret, n->nodes[i].origin);
		strcat(*ret, path + strlen(dir));
		return 0;
	}
	*ret = strdup(path);
	return *ret ? 0 : -ENOMEM;
}

/* Mark the original path of @path @st unless the records said already. */
static int note_orig(struct jf_net_changes *n, const char *path, int st)
{
	_cleanup_free_ char *o = NULL;
	int r = orig_of(n, path, &o);

	if (r == 0 && o && !orig_get(n, o))
		r = set_int(n->orig, o, st);
	return r;
}

/* The node at @path, which a record shows existing: the original object
 * when the records knew nothing of its path, else one from outside the
 * records (a process the log does not show). Its index or -ENOMEM. */
static int touch(struct jf_net_changes *n, const char *path)
{
	_cleanup_free_ char *o = NULL;
	int i = cur_get(n, path), r;

	if (i >= 0)
		return i;
	r = orig_of(n, path, &o);
	if (r < 0)
		return r;
	if (o && !orig_get(n, o)) {
		if (set_int(n->orig, o, ST_EXISTED) < 0)
			return -ENOMEM;
		return new_node(n, path, o);
	}
	return new_node(n, path, NULL);
}

/* A name made: a new object at @path (an existing one is written). */
static int make(struct jf_net_changes *n, const char *path)
{
	int i = cur_get(n, path), r;

	if (i >= 0) {
		n->nodes[i].modified = true;
		return 0;
	}
	r = note_orig(n, path, ST_ABSENT);
	if (r == 0)
		r = new_node(n, path, NULL);
	return r < 0 ? r : 0;
}

static int modify(struct jf_net_changes *n, const char *path)
{
	int i = touch(n, path);

	if (i >= 0)
		n->nodes[i].modified = true;
	return i < 0 ? i : 0;
}

static bool below(const char *path, const char *dir, size_t dlen)
{
	return strncmp(path, dir, dlen) == 0 && path[dlen] == '/';
}

/* Drop the node at @path, and every node below it, from "cur". */
static void unplace(struct jf_net_changes *n, const char *path)
{
	size_t len = strlen(path);
	const char *key;
	json_t *v, *tmp;
	int i = cur_get(n, path);

	if (i >= 0) {
		n->nodes[i].alive = false;
		cur_del(n, path);
	}
	if (!has_below(n, path))
		return;
	json_object_foreach_safe(n->cur, tmp, key, v)
	{
		if (below(key, path, len)) {
			n->nodes[json_integer_value(v)].alive = false;
			cur_del(n, key);
		}
	}
}

/* Re-key the nodes below @from to below @to (a directory renamed). */
static int carry(struct jf_net_changes *n, const char *from, const char *to)
{
	size_t flen = strlen(from);
	json_t *moved, *v, *tmp;
	const char *key;
	int r;

	if (!has_below(n, from))
		return 0;
	moved = json_object();
	r = moved ? 0 : -ENOMEM;
	json_object_foreach_safe(n->cur, tmp, key, v)
	{
		_cleanup_free_ char *nk = NULL;

		if (r < 0 || !below(key, from, flen))
			continue;
		if (asprintf(&nk, "%s%s", to, key + flen) < 0)
			r = -ENOMEM;
		else if (json_object_set(moved, nk, v) < 0)
			r = -ENOMEM;
		else
			cur_del(n, key);
	}
	json_object_foreach(moved, key, v)
	{
		if (r == 0)
			r = cur_set(n, key, (long)json_integer_value(v));
	}
	json_decref(moved);
	return r;
}

static int do_rename(struct jf_net_changes *n, const char *from, const char *to)
{
	int i, r;

	if (strcmp(from, to) == 0)
		return 0;
	i = touch(n, from);
	if (i < 0)
		return i;
	r = note_orig(n, to, ST_UNKNOWN);
	if (r < 0)
		return r;
	cur_del(n, from);
	unplace(n, to);
	r = carry(n, from, to);
	if (r == 0)
		r = cur_set(n, to, i);
	n->nodes[i].moved = true;
	n->nodes[i].alive = true;
	return r;
}

static int do_unlink(struct jf_net_changes *n, const char *path)
{
	int i = touch(n, path);

	if (i < 0)
		return i;
	unplace(n, path);
	return 0;
}

/* Records that may hold allowed records the file does not. */
static void note_bounds(struct jf_net_changes *n, json_t *rec, const char *op)
{
	if (strcmp(op, "dropped") == 0 && jf_audit_num(rec, "count") > 0)
		n->incomplete = "records were lost to a full queue (dropped records)";
	else if (strcmp(op, "capped") == 0)
		n->incomplete = "the log reached its size cap (capped record)";
	else if (strcmp(op, "suppressed") == 0 &&
		 jf_audit_num(json_object_get(rec, "by_decision"), "allow") > 0)
		n->incomplete = "the rate limit left out allowed records (suppressed records)";
}

static bool is_op(const char *op, const char *const *ops)
{
	for (; *ops; ops++)
		if (strcmp(op, *ops) == 0)
			return true;
	return false;
}

int jf_net_add(struct jf_net_changes *n, json_t *rec)
{
	static const char *const makes[] = {"create", "mkdir", "mknod", "symlink", NULL};
	static const char *const writes[] = {
		"write",    "truncate",	   "setattr",	"chmod",	   "chown", "utimens",
		"setxattr", "removexattr", "fallocate", "copy_file_range", NULL,
	};
	const char *op = jf_audit_str(rec, "op"), *dec = jf_audit_str(rec, "decision");
	const char *path = jf_audit_str(rec, "path"), *path2 = jf_audit_str(rec, "path2");
	int r;

	if (!op)
		return 0;
	if (!dec) {
		note_bounds(n, rec, op);
		return 0;
	}
	if (strcmp(dec, "allow") != 0 || !path)
		return 0;
	n->allowed++;
	drop_list(n);
	if (is_op(op, makes))
		return make(n, path);
	if (is_op(op, writes))
		return modify(n, path);
	if (strcmp(op, "unlink") == 0 || strcmp(op, "rmdir") == 0)
		return do_unlink(n, path);
	if (strcmp(op, "rename") == 0 && path2)
		return do_rename(n, path, path2);
	if (strcmp(op, "link") == 0 && path2) {
		r = touch(n, path);
		return r < 0 ? r : make(n, path2);
	}
	if (strcmp(op, "release") == 0 && jf_audit_num(rec, "bytes_written") > 0)
		return modify(n, path);
	/* lookup, open, read, readdir, a release without bytes written */
	r = touch(n, path);
	return r < 0 ? r : 0;
}

const char *jf_net_incomplete(const struct jf_net_changes *n)
{
	return n->incomplete;
}

size_t jf_net_allowed(const struct jf_net_changes *n)
{
	return n->allowed;
}

const char *jf_net_kind_name(enum jf_net_kind k)
{
	switch (k) {
	case JF_NET_CREATED:
		return "created";
	case JF_NET_MODIFIED:
		return "modified";
	case JF_NET_DELETED:
		return "deleted";
	case JF_NET_RENAMED:
		return "renamed";
	case JF_NET_WRITTEN:
		return "written";
	}
	return "?";
}

/* Keep @s (malloc'd) with the list; NULL on ENOMEM (and @s freed). */
static const char *keep(struct jf_net_changes *n, char *s)
{
	if (s && n->nstrs == n->scap) {
		size_t cap = n->scap ? n->scap * 2 : 64;
		char **p = realloc(n->strs, cap * sizeof(*p));

		if (p) {
			n->strs = p;
			n->scap = cap;
		}
	}
	if (!s || n->nstrs == n->scap) {
		free(s);
		return NULL;
	}
	n->strs[n->nstrs++] = s;
	return s;
}

static int push(struct jf_net_changes *n, enum jf_net_kind kind, const char *path,
		const struct node *d)
{
	struct jf_net_change *c;

	if (n->nlist == n->lcap) {
		size_t cap = n->lcap ? n->lcap * 2 : 64;
		struct jf_net_change *p = realloc(n->list, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		n->list = p;
		n->lcap = cap;
	}
	c = &n->list[n->nlist];
	*c = (struct jf_net_change){.kind = kind, .path = keep(n, strdup(path))};
	if (kind == JF_NET_RENAMED) {
		c->from = keep(n, strdup(d->origin));
		c->modified = d->modified;
	}
	if (!c->path || (kind == JF_NET_RENAMED && !c->from))
		return -ENOMEM;
	n->nlist++;
	return 0;
}

/* The entry of the live node @d at @path, if it is a change. @live: the
 * original paths of live nodes; @taken gets each original path a new or
 * renamed object now fills (which is then not deleted). */
static int node_change(struct jf_net_changes *n, const char *path, const struct node *d,
		       json_t *live, json_t *taken)
{
	_cleanup_free_ char *o = NULL;
	int r = orig_of(n, path, &o), st;

	if (r < 0)
		return r;
	if (d->origin && !(d->moved && strcmp(d->origin, path) != 0))
		return d->modified ? push(n, JF_NET_MODIFIED, path, d) : 0;
	if (o && json_object_set_new(taken, o, json_true()) < 0)
		return -ENOMEM;
	if (d->origin)
		return push(n, JF_NET_RENAMED, path, d);
	st = o ? orig_get(n, o) : 0;
	if (st == ST_EXISTED && !json_object_get(live, o))
		return push(n, JF_NET_MODIFIED, path, d);
	return push(n, st == ST_UNKNOWN ? JF_NET_WRITTEN : JF_NET_CREATED, path, d);
}

/* Is @path's parent directory deleted too (then @path folds into it)? */
static bool parent_deleted(json_t *orig, json_t *live, json_t *taken, const char *path)
{
	const char *slash = strrchr(path, '/');
	char parent[4096];

	if (!slash || (size_t)(slash - path) >= sizeof(parent))
		return false;
	memcpy(parent, path, (size_t)(slash - path));
	parent[slash - path] = '\0';
	return json_integer_value(json_object_get(orig, parent)) == ST_EXISTED &&
	       !json_object_get(live, parent) && !json_object_get(taken, parent);
}

static int cmp_change(const void *a, const void *b)
{
	return strcmp(((const struct jf_net_change *)a)->path,
		      ((const struct jf_net_change *)b)->path);
}

static int build(struct jf_net_changes *n, json_t *live, json_t *taken)
{
	const char *key;
	json_t *v;
	int r = 0;

	for (size_t i = 0; i < n->n; i++) {
		if (n->nodes[i].alive && n->nodes[i].origin &&
		    json_object_set_new(live, n->nodes[i].origin, json_true()) < 0)
			return -ENOMEM;
	}
	json_object_foreach(n->cur, key, v)
	{
		r = node_change(n, key, &n->nodes[json_integer_value(v)], live, taken);
		if (r < 0)
			return r;
	}
	json_object_foreach(n->orig, key, v)
	{
		if (json_integer_value(v) != ST_EXISTED || json_object_get(live, key) ||
		    json_object_get(taken, key) || parent_deleted(n->orig, live, taken, key))
			continue;
		r = push(n, JF_NET_DELETED, key, NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

int jf_net_list(struct jf_net_changes *n, const struct jf_net_change **ret, size_t *count)
{
	json_t *live = json_object(), *taken = json_object();
	int r = live && taken ? 0 : -ENOMEM;

	drop_list(n);
	if (r == 0)
		r = build(n, live, taken);
	json_decref(live);
	json_decref(taken);
	if (r < 0) {
		drop_list(n);
		return r;
	}
	if (n->nlist)
		qsort(n->list, n->nlist, sizeof(*n->list), cmp_change);
	*ret = n->list;
	*count = n->nlist;
	return 0;
}

json_t *jf_net_json(struct jf_net_changes *n, size_t max, size_t *omitted)
{
	const struct jf_net_change *c;
	json_t *a = json_array();
	size_t k;

	if (!a || jf_net_list(n, &c, &k) < 0) {
		json_decref(a);
		return NULL;
	}
	if (omitted)
		*omitted = max && k > max ? k - max : 0;
	for (size_t i = 0; i < k && (!max || i < max); i++) {
		json_t *o = json_pack("{s:s, s:s}", "change", jf_net_kind_name(c[i].kind), "path",
				      c[i].path);

		if (o && c[i].from) {
			json_object_set_new(o, "from", json_string(c[i].from));
			json_object_set_new(o, "modified", json_boolean(c[i].modified));
		}
		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}
