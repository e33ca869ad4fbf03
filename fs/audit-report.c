/* SPDX-License-Identifier: MIT */
/* Placeholder: being written. */
#include <stdio.h>
#include "jailfs.h"
int jf_cmd_audit_report(int argc, char **argv) { (void)argc; (void)argv; return 2; }
