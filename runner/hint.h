/* SPDX-License-Identifier: MIT */
/* What a refusal or failure means and what to do about it (hint.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct jr_outcome;
struct jr_refusal;
struct jr_refusals;
struct jr_verdict;

/* The hint for a guardrail refusal @v, or "" when there is none: "refused by
 * the RULE guardrail (REASON): " and what to do instead. @view_denies:
 * the executable is denied by the view's own [run] deny_exec (--root), which
 * no allow on the command line lifts. Writes at most @size bytes to @out. */
void jr_hint_guard(const struct jr_verdict *v, bool view_denies, char *out, size_t size);

/* The hint for refusal @f of the view, e.g. "the view refused writing
 * .git/config (RESTRICTED by profile:project): ...". Writes @out. */
void jr_hint_refusal(const struct jr_refusal *f, char *out, size_t size);

/* Does the end of the command's output (@oc's captured buffers and stream
 * tails) say that a name could not be resolved or a network was unreachable
 * (EAI_AGAIN, ENETUNREACH, "Could not resolve host", "Temporary failure in
 * name resolution", "Network is unreachable")? Pure. */
bool jr_net_failure(const struct jr_outcome *oc);

/* The hint jr_net_failure() leads to (static string). */
extern const char jr_hint_no_net[];

/* The hint for a command that ran: the first refusal's (jr_hint_refusal),
 * then, when @net_failed, jr_hint_no_net, joined by "; ". Writes @out, ""
 * when neither applies. */
void jr_hint_run(const struct jr_refusals *rf, bool net_failed, char *out, size_t size);

/* The hint for a command killed by its time limit of @limit_ms, naming the
 * limit, the defaults and how to raise it; @by_view: the limit is the view's
 * own [run] timeout, which no --timeout raises. Writes at most @size bytes
 * to @out. */
void jr_hint_timeout(uint64_t limit_ms, bool by_view, char *out, size_t size);

#define JR_REFUSALS_PRINTED 5 /* refusals listed on stderr */

/* On @f, as "jailrun: " lines escaped with jf_escape: the refusals (at most
 * JR_REFUSALS_PRINTED, then how many more) and "hint: @hint". Nothing when
 * @rf lists none (or is NULL) and @hint is empty (or NULL). */
void jr_refusals_print(FILE *f, const struct jr_refusals *rf, const char *hint);
