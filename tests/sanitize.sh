#!/usr/bin/env bash
# Run the mount tests against a daemon (and test programs) built with a
# sanitizer, in a build directory nested in the main one:
#   sanitize.sh NAME B_SANITIZE    e.g.  sanitize.sh tsan thread
# configures (first time) and builds $JF_BUILDDIR/sanitize-NAME from
# $JF_SRCDIR with -Db_sanitize=B_SANITIZE, runs its tests 'mount' (and the
# other topics of tests/mount/test-mount-*.c), 'race', 'mount-audit' and the
# notifier's queue ('notifyq', a unit test whose threads are the point), and
# fails if any of them fails or if any process wrote a
# sanitizer report. The daemon is a separate (often daemonized) process, so
# its reports are caught through log_path files, not through exit codes.
# Environment: JF_SANITIZE_TESTS overrides the list of tests.
set -euo pipefail

name=$1
sanitize=$2
: "${JF_SRCDIR:?}" "${JF_BUILDDIR:?}"
dir=$JF_BUILDDIR/sanitize-$name
reports=$dir/sanitizer-reports
tests=${JF_SANITIZE_TESTS:-mount mount-posix-safe mount-escape mount-lifecycle mount-bigtree mount-watch mount-handles mount-nullfh race mount-audit notifyq}
start=$SECONDS

if [ -n "${JF_SANITIZE_NESTED:-}" ]; then
	echo "sanitize.sh: already inside a sanitizer run" >&2
	exit 1
fi
export JF_SANITIZE_NESTED=1

if [ ! -f "$dir/build.ninja" ]; then
	rm -rf "$dir"
	meson setup "$dir" "$JF_SRCDIR" -Dwerror=true -Db_sanitize="$sanitize" >"$dir.setup.log" 2>&1 ||
		{ cat "$dir.setup.log"; exit 1; }
fi
ninja -C "$dir" >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; exit 1; }
echo "sanitize-$name: built in $((SECONDS - start)) s"

rm -rf "$reports"
mkdir -p "$reports"
export TSAN_OPTIONS="log_path=$reports/tsan halt_on_error=0 second_deadlock_stack=1 suppressions=$JF_SRCDIR/tests/tsan.supp"
export ASAN_OPTIONS="log_path=$reports/asan detect_leaks=1 quarantine_size_mb=32"
export UBSAN_OPTIONS="log_path=$reports/ubsan print_stacktrace=1 halt_on_error=0"
# The big-tree test measures the daemon's peak RSS against a bound made for
# an uninstrumented build: a smaller tree keeps it meaningful here.
export JF_BIGTREE_FILES=${JF_BIGTREE_FILES:-20000}

status=0
# shellcheck disable=SC2086
meson test -C "$dir" --print-errorlogs --no-rebuild --timeout-multiplier 3 $tests || status=$?

shopt -s nullglob
found=("$reports"/*)
for f in "${found[@]}"; do
	echo "=============== $f"
	cat "$f"
done
echo "sanitize-$name: tests exit $status, ${#found[@]} report file(s), $((SECONDS - start)) s"
if [ "${#found[@]}" -gt 0 ] || [ "$status" -ne 0 ]; then
	exit 1
fi
