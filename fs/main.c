/* SPDX-License-Identifier: MIT */
/*
 * jailfs: dispatch to the mode named on the command line. The mount mode is
 * the default; the others are one-shot tools that never mount anything.
 */
#include <string.h>

#include "audit-report.h"
#include "jailfs.h"
#include "status.h"

int main(int argc, char **argv)
{
	/* a word, not an option: the review commands over a changes directory */
	if (argc > 1 && jf_is_review_cmd(argv[1]))
		return jf_cmd_review(argc, argv);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--check") == 0)
			return jf_cmd_check(argc, argv);
		if (strcmp(argv[i], "--scan") == 0)
			return jf_cmd_scan(argc, argv);
		if (strcmp(argv[i], "--audit-report") == 0)
			return jf_cmd_audit_report(argc, argv);
		if (strcmp(argv[i], "--list") == 0)
			return jf_cmd_list(argc, argv);
		if (strcmp(argv[i], "--stop") == 0)
			return jf_cmd_stop(argc, argv);
	}
	return jf_cmd_mount(argc, argv);
}
