# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# TAP-style results for the test scripts; source it, do not run it.
#   require_root_fuse [TOOL...]   before anything else
#   ok DESC / bad DESC / check DESC COMMAND...   one numbered result each
#   tap_done                      last: the plan line, and the exit status

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
# check DESCRIPTION COMMAND...: the command must succeed
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }

# tap_done: print the plan; status 0 when nothing failed.
tap_done() {
	echo "1..$n"
	[ "$fails" -eq 0 ] || { echo "$fails of $n failed"; return 1; }
}

# require_root_fuse [TOOL...]: unless running as root with /dev/fuse and
# every TOOL on PATH, exit: 1 (a failure) when CI=true, else 77 (a skip).
require_root_fuse() {
	local what="root and /dev/fuse" t missing=
	[ $# -gt 0 ] && what="root, /dev/fuse and $*"
	for t in "$@"; do command -v "$t" >/dev/null || missing=1; done
	if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/fuse ] || [ -n "$missing" ]; then
		if [ "${CI:-}" = true ]; then
			echo "FAIL: needs $what (CI=true)"
			exit 1
		fi
		echo "SKIP: needs $what"
		exit 77
	fi
}
