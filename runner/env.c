/* SPDX-License-Identifier: MIT */
/*
 * The command's environment: an allowlist of jailrun's own (PATH LANG LC_*
 * TERM TZ USER), never a secret-looking name unless named exactly, HOME
 * (the jail home, home.c), then what the view's and the policy's [run] env
 * and --env add. PATH passes as it is: its entries in the user's toolchain
 * directories lead to the same paths in the jail. A value that holds a
 * secret (a token, a key, a URL with a password) is left out whatever its
 * name, unless --env named it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "secrets.h"

static bool secretish(const char *name, size_t n)
{
	static const char *const parts[] = {"TOKEN",	"SECRET",     "KEY",
					    "PASSWORD", "CREDENTIAL", NULL};
	char up[256];

	if (n >= sizeof(up))
		return true;
	for (size_t i = 0; i < n; i++)
		up[i] = (char)toupper((unsigned char)name[i]);
	up[n] = '\0';
	for (const char *const *p = parts; *p; p++)
		if (strstr(up, *p))
			return true;
	return !strncmp(up, "AWS_", 4) || !strncmp(up, "GITHUB_", 7) ||
	       !strncmp(up, "SSH_AUTH_SOCK", 13);
}

static bool allowlisted(const char *name, size_t n)
{
	static const char *const exact[] = {"PATH", "LANG", "TERM", "TZ", "USER", NULL};

	if (secretish(name, n))
		return false;
	for (const char *const *e = exact; *e; e++)
		if (strlen(*e) == n && !strncmp(*e, name, n))
			return true;
	return n > 3 && !strncmp(name, "LC_", 3);
}

struct env {
	char **v;
	bool *pinned; /* by entry: from the exact list, never dropped */
	int n, cap;   /* entries, and room for them without the final NULL */
	bool pin;     /* entries set now are pinned */
};

static void env_set(struct env *e, const char *entry)
{
	size_t len = strcspn(entry, "=");

	for (int i = 0; i < e->n; i++)
		if (!strncmp(e->v[i], entry, len) && e->v[i][len] == '=') {
			e->v[i] = (char *)entry;
			e->pinned[i] = e->pin;
			return;
		}
	if (e->n < e->cap) {
		e->pinned[e->n] = e->pin;
		e->v[e->n++] = (char *)entry;
	}
}

/* Leave out the values a detector flags; their names in *@dropped. */
static int env_drop_secrets(struct env *e, char ***dropped)
{
	const struct jf_secrets *set = jf_secrets_default();
	char **out = calloc(e->n + 1, sizeof(char *));
	int kept = 0, nd = 0;

	*dropped = out;
	if (!out || !set)
		return -1;
	for (int i = 0; i < e->n; i++) {
		const char *val = strchr(e->v[i], '=') + 1;
		struct jf_secret_hit hit;

		if (e->pinned[i] || jf_secrets_scan(set, val, strlen(val), &hit) != 1) {
			e->v[kept++] = e->v[i];
			continue;
		}
		if (asprintf(&out[nd], "%.*s (%s)", (int)(val - 1 - e->v[i]), e->v[i],
			     jf_secret_det_name(hit.det)) < 0)
			return -1;
		nd++;
	}
	e->n = kept;
	return 0;
}

/* NAME passes jailrun's value (if set), NAME=VALUE sets. */
static int env_pass(struct env *e, const char *item)
{
	const char *v;
	char *s;

	if (strchr(item, '=')) {
		env_set(e, item);
		return 0;
	}
	v = getenv(item);
	if (!v)
		return 0;
	if (asprintf(&s, "%s=%s", item, v) < 0)
		return -1;
	env_set(e, s);
	return 0;
}

char **jr_env_build(const char *home, const char *const *const lists[], size_t nlists, size_t exact,
		    int max, char ***dropped)
{
	extern char **environ;
	struct env e = {
		.v = calloc(max + 1, sizeof(char *)), .pinned = calloc(max + 1, 1), .cap = max};
	char *h;

	*dropped = NULL;
	if (!e.v || !e.pinned || asprintf(&h, "HOME=%s", home) < 0)
		return NULL;
	for (char **p = environ; *p; p++) {
		size_t len = strcspn(*p, "=");

		if ((*p)[len] == '=' && allowlisted(*p, len))
			env_set(&e, *p);
	}
	if (!getenv("PATH"))
		env_set(&e, "PATH=/usr/local/bin:/usr/bin:/bin");
	env_set(&e, h);
	for (size_t k = 0; k < nlists; k++) {
		e.pin = k == exact;
		for (const char *const *p = lists[k]; p && *p; p++)
			if (env_pass(&e, *p) < 0)
				return NULL;
	}
	if (env_drop_secrets(&e, dropped) < 0)
		return NULL;
	free(e.pinned);
	e.v[e.n] = NULL;
	return e.v;
}

const char *jr_env_get(char *const *envp, const char *name)
{
	size_t len = strlen(name);

	for (; *envp; envp++)
		if (!strncmp(*envp, name, len) && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}
