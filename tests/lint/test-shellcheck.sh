#!/usr/bin/env bash
# Runs shellcheck over every shell script of the tree, one TAP result a script.
# The settings (external sources, the checks disabled and why) are in the
# top's .shellcheckrc; a script's own exceptions are directives at the line
# they excuse, each with its reason.
set -uo pipefail
: "${JF_SRCDIR:?set by meson}"
# shellcheck source=tests/lib/lib-tap.sh
. "$JF_SRCDIR/tests/lib/lib-tap.sh"
require_tools shellcheck git
# source= directives name paths from the top of the tree
cd "$JF_SRCDIR" || exit 1

# shell_scripts: the tracked files named *.sh or *.bash, or whose first line
# runs sh or bash (zsh completions are not shell scripts shellcheck knows)
shell_scripts() {
	local f first
	git ls-files -z | while IFS= read -r -d '' f; do
		[ -f "$f" ] || continue
		case $f in
		*.sh | *.bash) echo "$f"; continue ;;
		esac
		IFS= read -r first <"$f" || continue
		case $first in
		'#!'*/sh | '#!'*/bash | '#!'*' sh' | '#!'*' bash' | '#!'*/sh' '* | '#!'*/bash' '*)
			echo "$f" ;;
		esac
	done
}

mapfile -t scripts < <(shell_scripts)
[ "${#scripts[@]}" -gt 0 ] || { echo "no shell scripts found (not a git checkout?)"; exit 1; }
for f in "${scripts[@]}"; do
	if out=$(shellcheck "$f" 2>&1); then
		ok "shellcheck $f"
	else
		bad "shellcheck $f"
		sed 's/^/# /' <<<"$out"
	fi
done
tap_done
