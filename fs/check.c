/* SPDX-License-Identifier: MIT */
/* Placeholder: being written. */
#include <stdio.h>
#include "jailfs.h"
int jf_cmd_check(int argc, char **argv) { (void)argc; (void)argv; fputs("jailfs: --check not built yet\n", stderr); return 2; }
int jf_cmd_scan(int argc, char **argv) { (void)argc; (void)argv; fputs("jailfs: --scan not built yet\n", stderr); return 2; }
