#!/usr/bin/env bash
# The command line as a user meets it, without a mount:
#   - a mistyped option (long, short, -o, a missing argument) is reported
#     exactly once, with one "Try ... --help" line, exit status 2, by jailfs
#     (mount, --check, --scan) and jailrun (also as a JSON result);
# Suite 'unit'.
set -uo pipefail

: "${JAILFS:?set by meson}" "${JAILRUN:?set by meson}" "${JF_SRCDIR:?set by meson}"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/jfcli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src" "$tmp/mnt"

# ------------------------------------------------------- mistyped options
# once REGEX PROG ARG...: exactly one line of stderr matches REGEX (the
# option as getopt(3) spells it), exit 2.
once() {
	local word=$1 out rc n
	shift
	out=$("$@" 2>&1 </dev/null >/dev/null)
	rc=$?
	n=$(grep -cE -- "$word" <<<"$out")
	if [ "$rc" -eq 2 ] && [ "$n" -eq 1 ]; then
		ok "${*##*/}: '$word' reported once, exit 2"
	else
		bad "${*##*/}: '$word' reported on $n lines, exit $rc: $out"
	fi
}
once --bogus "$JAILFS" --bogus "$tmp/src" "$tmp/mnt"
once "'x'|-x" "$JAILFS" -x "$tmp/src" "$tmp/mnt"
once bogus "$JAILFS" -o bogus "$tmp/src" "$tmp/mnt"
once --bogus "$JAILFS" --check --bogus "$tmp/src"
once --bogus "$JAILFS" --scan --bogus "$tmp/src"
once --bogus "$JAILRUN" --bogus -- true
once "'o'|-o" "$JAILRUN" -o bogus -- true
once "--timeout" "$JAILRUN" --check --timeout
out=$("$JAILRUN" --json --bogus -- true 2>/dev/null)
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert "--bogus" in r["error"], r' \
	"$out" 2>/dev/null && ok "jailrun --json --bogus: the JSON error names --bogus" ||
	bad "jailrun --json --bogus: $out"

tap_done
