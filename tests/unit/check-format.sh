#!/usr/bin/env bash
# Every C source and header of the project is formatted as .clang-format
# says (Linux kernel style, tabs, 100 columns): clang-format --dry-run
# -Werror, so CI fails on a file that `clang-format -i` would change.
set -euo pipefail
: "${JF_SRCDIR:?set by meson}"
cd "$JF_SRCDIR"
if ! command -v clang-format >/dev/null; then
	echo "clang-format is not installed (Debian package clang-format)" >&2
	exit 1
fi
# The demo project is a stand-in for a user's code, not ours.
mapfile -t files < <(git ls-files '*.c' '*.h' ':!mnt-examples/demo-project' 2>/dev/null ||
	find base audit fs policy runner tests bench -name '*.[ch]')
[ "${#files[@]}" -gt 0 ] || { echo "no C files found" >&2; exit 1; }
clang-format --dry-run -Werror "${files[@]}"
echo "${#files[@]} files formatted"
