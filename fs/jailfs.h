/* SPDX-License-Identifier: MIT */
/*
 * Entry points of the jailfs binary's sub-commands (--audit-report is the
 * audit library's, audit-report.h). Each takes the whole
 * argv (it parses its own options with getopt_long) and returns the process
 * exit status: 0 success, 1 a runtime failure, 2 a usage or policy error.
 */
#pragma once

#include <stdbool.h>

int jf_cmd_check(int argc, char **argv); /* check.c: jailfs --check */
int jf_cmd_scan(int argc, char **argv);	 /* check.c: jailfs --scan */
int jf_cmd_mount(int argc, char **argv); /* mount.c: jailfs SOURCE MOUNTPOINT */
/* review.c: jailfs changes|diff|apply|discard|checkpoint|restore DIR ... */
int jf_cmd_review(int argc, char **argv);
/* Is argv[1] one of the review commands? */
bool jf_is_review_cmd(const char *word);

struct jf_policy;
/* check.c: the policy of @policy (a --policy file; NULL: the one a mount of
 * @source would use, jf_policy_locate, named on stderr), made read-only with
 * @read_only. 0 or -errno, the message on stderr; *@out is the caller's
 * (jf_policy_free). */
int jf_load_policy(const char *policy, const char *source, bool read_only, struct jf_policy **out);
