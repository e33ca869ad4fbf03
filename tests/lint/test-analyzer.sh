#!/usr/bin/env bash
# The programs and libraries built with clang (-Werror) under clang's static
# analyzer (scan-build), in a build directory nested in the main one
# ($JF_BUILDDIR/lint-clang). One TAP result for the build and one per
# report: a report that tests/lint/analyzer-known.txt lists (with the reason
# it stands) passes, any other fails. A rerun analyzes only what ninja
# rebuilds (the files changed since, and those including a changed header),
# which is where a new report can come from; CI's build is always fresh.
# The tests are left out: they are built with the compiler of the main
# build, and analyzing them would double the time.
set -uo pipefail
: "${JF_SRCDIR:?set by meson}" "${JF_BUILDDIR:?set by meson}"
# shellcheck source=tests/lib/lib-tap.sh
. "$JF_SRCDIR/tests/lib/lib-tap.sh"
require_tools clang scan-build
dir=$JF_BUILDDIR/lint-clang
known=$JF_SRCDIR/tests/lint/analyzer-known.txt
start=$SECONDS
# clang 14's analyzer does not model __attribute__((cleanup)) (base/cleanup.h):
# every _cleanup_free_ variable reads as a leak, so unix.Malloc is off.
sb=(scan-build --use-cc=clang -disable-checker unix.Malloc -o "$dir-reports")

if [ ! -f "$dir/build.ninja" ]; then
	rm -rf "$dir"
	if ! "${sb[@]}" meson setup "$dir" "$JF_SRCDIR" -Dwerror=true -Dtests=false \
		>"$dir.setup.log" 2>&1; then
		bad "clang: meson setup"
		tail -n 20 "$dir.setup.log" | sed 's/^/# /'
		tap_done
		exit 1
	fi
fi
if "${sb[@]}" ninja -C "$dir" >"$dir.build.log" 2>&1; then
	ok "clang -Werror build of the programs and libraries"
else
	bad "clang -Werror build of the programs and libraries"
	grep -E 'error' "$dir.build.log" | head -n 20 | sed 's/^/# /'
fi
echo "# built and analyzed in $((SECONDS - start)) s"

# reports: "FILE: MESSAGE [CHECKER]", the file from the top of the tree, no
# line numbers (they move with every edit above them)
reports() {
	sed 's/\x1b\[[0-9;]*m//g' "$dir.build.log" |
		sed -nE 's|^([^ ]*/)?([a-z]+/[A-Za-z0-9_.-]+\.[ch]):[0-9]+:[0-9]+: warning: (.*\[[a-z]+\.[A-Za-z.]+\])$|\2: \3|p' |
		sort
}
mapfile -t found < <(reports)
declare -A left=()
while IFS= read -r line; do
	case $line in '' | '#'*) continue ;; esac
	left[$line]=$((${left[$line]:-0} + 1))
done <"$known"
for r in "${found[@]}"; do
	if [ "${left[$r]:-0}" -gt 0 ]; then
		left[$r]=$((left[$r] - 1))
		ok "known: $r"
	else
		bad "new analyzer report: $r"
	fi
done
echo "# ${#found[@]} report(s); the HTML ones in $dir-reports"
tap_done
