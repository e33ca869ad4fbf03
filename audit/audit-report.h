/* SPDX-License-Identifier: MIT */
/*
 * jailfs --audit-report FILE (audit-report.c): a human summary of an audit
 * log. Takes the whole argv (parses its own options with getopt_long) and
 * returns the process exit status: 0 success, 1 a runtime failure, 2 a usage
 * error.
 */
#pragma once

int jf_cmd_audit_report(int argc, char **argv);
