# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# TAP results for the test scripts; source it, do not run it. The scripts
# are declared protocol: 'tap' in tests/*/meson.build, so meson counts each
# result; anything else a script prints on stdout starts with "# ".
#   require_root_fuse [TOOL...]   before anything else (mount tests)
#   require_tools TOOL...         the same without root and /dev/fuse
#   ok DESC / bad DESC / check DESC COMMAND...   one numbered result each
#   tap_done                      last: the plan line, and the exit status

tap_n=0
tap_fails=0
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }
bad() { tap_n=$((tap_n + 1)); tap_fails=$((tap_fails + 1)); echo "not ok $tap_n - $1"; }
# check DESCRIPTION COMMAND...: the command must succeed
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }

# tap_done: print the plan; status 0 when nothing failed.
tap_done() {
	echo "1..$tap_n"
	[ "$tap_fails" -eq 0 ] || { echo "# $tap_fails of $tap_n failed"; return 1; }
}

# tap_unmet WHAT: a requirement is missing. Exit 1 after "Bail out!" (an
# error) when CI=true, else 0 after an empty plan marked SKIP (a skip; meson
# takes a TAP test's non-zero exit, 77 included, for an error).
tap_unmet() {
	if [ "${CI:-}" = true ]; then
		echo "Bail out! needs $1 (CI=true)"
		exit 1
	fi
	echo "1..0 # SKIP needs $1"
	exit 0
}

# require_root_fuse [TOOL...]: unless running as root with /dev/fuse and
# every TOOL on PATH, tap_unmet: a failure when CI=true, else a skip.
require_root_fuse() {
	local what="root and /dev/fuse" t missing=
	[ $# -gt 0 ] && what="root, /dev/fuse and $*"
	for t in "$@"; do command -v "$t" >/dev/null || missing=1; done
	if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/fuse ] || [ -n "$missing" ]; then
		tap_unmet "$what"
	fi
}

# require_tools TOOL...: unless every TOOL is on PATH, tap_unmet: a failure
# when CI=true, else a skip.
require_tools() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || tap_unmet "$t (Debian package $t)"
	done
}
