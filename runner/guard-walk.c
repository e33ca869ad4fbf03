/* SPDX-License-Identifier: MIT */
/* The refusal that ends a walk through a request. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "guard-walk.h"

bool jr_deny(struct walk *w, const char *rule, const char *fmt, ...)
{
	va_list ap;

	w->v->denied = true;
	snprintf(w->v->rule, sizeof(w->v->rule), "%s", rule);
	va_start(ap, fmt);
	vsnprintf(w->v->reason, sizeof(w->v->reason), fmt, ap);
	va_end(ap);
	return true;
}
