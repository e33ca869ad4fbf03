#!/usr/bin/env bash
# Every C source and header of the project is formatted as .clang-format
# says (Linux kernel style, tabs, 100 columns): clang-format --dry-run
# -Werror, one TAP result a file, so CI fails on a file that
# `clang-format -i` would change.
set -uo pipefail
: "${JF_SRCDIR:?set by meson}"
# shellcheck source=tests/lib/lib-tap.sh
. "$JF_SRCDIR/tests/lib/lib-tap.sh"
require_tools clang-format
cd "$JF_SRCDIR" || exit 1
# The demo project is a stand-in for a user's code, not ours.
mapfile -t files < <(git ls-files '*.c' '*.h' ':!mnt-examples/demo-project' 2>/dev/null ||
	find base audit changes fs policy runner tests bench -name '*.[ch]')
[ "${#files[@]}" -gt 0 ] || { echo "Bail out! no C files found"; exit 1; }
# One run over all files (one process per file is slow); its complaints
# name the file first ("FILE:LINE:COL: error: ...").
out=$(clang-format --dry-run -Werror "${files[@]}" 2>&1)
status=$?
declare -A unformatted=()
while IFS= read -r line; do
	case $line in
	*": error: "*) unformatted[${line%%:*}]=1 ;;
	esac
done <<<"$out"
for f in "${files[@]}"; do
	if [ -n "${unformatted[$f]:-}" ]; then
		bad "$f (clang-format -i $f)"
		grep -F -A3 "$f:" <<<"$out" | head -n 20 | sed 's/^/# /'
	else
		ok "$f"
	fi
done
# a failure no file was named in (clang-format itself)
[ "$status" -eq 0 ] || [ "${#unformatted[@]}" -gt 0 ] || bad "clang-format: $out"
tap_done
