/* SPDX-License-Identifier: MIT */
/* The command's environment (env.c). */
#pragma once

#include <stddef.h>

/*
 * The command's environment: jailrun's PATH LANG LC_* TERM TZ USER (names
 * holding TOKEN SECRET KEY PASSWORD CREDENTIAL or starting AWS_ GITHUB_
 * SSH_AUTH_SOCK left out), PATH when unset, HOME=@home, then each of the
 * @nlists NULL-terminated lists in order: NAME passes jailrun's value,
 * NAME=VALUE sets (a later value wins). At most @max entries.
 *
 * Then every value the secret detectors flag (policy/secrets.h) is left
 * out, unless its entry came from list @exact (the caller's own --env:
 * named exactly, it passes whatever it holds). The names left out, each as
 * "NAME (DETECTOR)" and never with the value, go into *@dropped: a malloc'ed
 * NULL-terminated array (possibly empty) of malloc'ed strings.
 *
 * Returns a malloc'ed NULL-terminated array whose strings point into
 * environ, the lists or small allocations (jailrun keeps them until it
 * exits), or NULL when out of memory.
 */
char **jr_env_build(const char *home, const char *const *const lists[], size_t nlists, size_t exact,
		    int max, char ***dropped);

/* The value of @name in @envp, or NULL. */
const char *jr_env_get(char *const *envp, const char *name);
