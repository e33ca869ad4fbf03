/* SPDX-License-Identifier: MIT */
/*
 * Entry points of the jailfs binary's sub-commands (--audit-report is the
 * audit library's, audit-report.h). Each takes the whole
 * argv (it parses its own options with getopt_long) and returns the process
 * exit status: 0 success, 1 a runtime failure, 2 a usage or policy error.
 */
#pragma once

int jf_cmd_check(int argc, char **argv); /* check.c: jailfs --check */
int jf_cmd_scan(int argc, char **argv);	 /* check.c: jailfs --scan */
int jf_cmd_mount(int argc, char **argv); /* mount.c: jailfs SOURCE MOUNTPOINT */
