#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The limits and refusals a user meets, end to end through real jails, in
# every mode: --source (fast_open, a private log), --source --audit (level
# all), --root on a default mount, --root on a --read-only mount:
#  - argv mode: metacharacters in arguments are text no shell reads (rg 'a|b',
#    grep -- '->', git log '--format=%h <%ae>') and run; a command name
#    holding shell syntax is still refused (metachar)
#  - inline code: the hint names --allow-inline NAME, and following it
#    literally runs the command; so does [run] allow_inline in --policy
#  - the timeout: the message and the result's hint name the limit and how
#    to raise it (--timeout, [run] timeout)
#  - the output cap keeps the head and the tail with a marker between, in
#    the JSON result and live: a command printing 3 MiB and a marker at the
#    end gets that end back
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
F=${JAILFS:?JAILFS not set}

# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "$0")/../lib/lib-mount.sh"

T=$(mktemp -d /tmp/jf-limits.XXXXXX)
P=$T/proj
cleanup() {
	unmount_all
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$P/src"
printf 'a|b here\nx -> y\nplain\n' >"$P/src/notes.txt"
echo 'API_TOKEN=projsecret' >"$P/.env"
git -C "$P" init -q
git -C "$P" -c user.name=Agent -c user.email=agent@example.com commit -q --allow-empty -m first
cat >"$P/big.py" <<'EOF'
import sys
line = "x" * 1023 + "\n"
for i in range(3 * 1024):
    sys.stdout.write(line)
sys.stdout.write("FAILURE-AT-THE-END\n")
EOF
cd "$P" || exit 1

M=$T/all
mount_view "$M" --audit "$T/all.jsonl" --audit-level all "$P" || bad "jailfs --audit-level all did not mount"
R=$T/ro
mount_view "$R" --read-only "$P" || bad "jailfs --read-only did not mount"

for mode in "--source $P" "--source $P --audit $T/src.jsonl" "--root $M" "--root $R"; do
	# ---- argv metacharacters ----
	# shellcheck disable=SC2086
	out=$("$J" $mode -- rg 'here|nowhere' src 2>&1)
	check "$mode: rg 'here|nowhere' runs ($out)" [ "$out" = "src/notes.txt:a|b here" ]
	# shellcheck disable=SC2086
	out=$("$J" $mode -- grep -- '->' src/notes.txt 2>&1)
	check "$mode: grep -- '->' runs ($out)" [ "$out" = "x -> y" ]
	# shellcheck disable=SC2086
	out=$("$J" $mode -- git log '--format=%h <%ae>' 2>&1)
	check "$mode: git log '--format=%h <%ae>' runs ($out)" \
		grep -qx '[0-9a-f]* <agent@example.com>' <<<"$out"
	# shellcheck disable=SC2086
	js=$("$J" $mode --json -- 'make && make test')
	check "$mode: a command name holding shell syntax is refused" \
		[ "$(jq -c '[.denied, .rule, (.hint | test("--shell"))]' <<<"$js")" = '[true,"metachar",true]' ]

	# ---- inline code: the hint names a way that works ----
	# shellcheck disable=SC2086
	js=$("$J" $mode --json -- python3 -c 'print(6 * 7)')
	hint=$(jq -r .hint <<<"$js")
	check "$mode: python3 -c is refused, the hint names --allow-inline python3 ($hint)" \
		[ "$(jq -c .rule <<<"$js")" = '"inline-code"' -a \
			"$(grep -c -- '--allow-inline python3' <<<"$hint")" = 1 ]
	check "$mode: ... and does not send the user to --shell" \
		bash -c '! grep -q -- "--shell" <<<"$1"' _ "$hint"
	# shellcheck disable=SC2086
	js=$("$J" $mode --json --shell -- "python3 -c 'print(6 * 7)'")
	check "$mode: --shell refuses it too, with the same way out" \
		[ "$(jq -r '[.rule, (.hint | test("--allow-inline python3"))] | @tsv' <<<"$js")" = \
			"$(printf 'inline-code\ttrue')" ]
	# shellcheck disable=SC2086
	js=$("$J" $mode --json --allow-inline python3 -- python3 -c 'print(6 * 7)')
	check "$mode: following the hint runs it" \
		[ "$(jq -c '[.denied, .exit_code, .stdout]' <<<"$js")" = '[false,0,"42\n"]' ]
	# shellcheck disable=SC2086
	js=$("$J" $mode --json --allow-inline python3 -- perl -e 'print 1')
	check "$mode: --allow-inline python3 does not lift perl -e" \
		[ "$(jq -c '[.denied, .rule]' <<<"$js")" = '[true,"inline-code"]' ]
	# shellcheck disable=SC2086
	js=$("$J" $mode --json --allow-inline python3 -- python3 -c 'print(open(".env").read())')
	check "$mode: ... and the inline code still meets the view: .env is not there" \
		[ "$(jq -c '[.denied, (.exit_code != 0), (.stdout | contains("projsecret")), (.stderr | contains("FileNotFoundError"))]' <<<"$js")" = '[false,true,false,true]' ]

	# ---- the timeout names the limit and how to raise it ----
	# shellcheck disable=SC2086
	err=$("$J" $mode --timeout 0.5 -- sleep 5 2>&1 >/dev/null); rc=$?
	check "$mode: timeout: exit 124, killed ($err)" \
		[ $rc -eq 124 -a "$(grep -c '^jailrun: timed out after 0.500 s; killed$' <<<"$err")" = 1 ]
	check "$mode: timeout: the hint names the limit and how to raise it" \
		grep -qxF 'jailrun: hint: the command ran past its 0.5 s time limit (default 120 s, 600 s with --shell): raise it with --timeout SECONDS or `timeout = SECONDS` in the policy'"'"'s [run] (0 = none)' <<<"$err"
	# shellcheck disable=SC2086
	js=$("$J" $mode --json --timeout 0.5 -- sleep 5)
	check "$mode: timeout: the result's hint says it too" \
		[ "$(jq -r '[.timed_out, (.hint | startswith("the command ran past its 0.5 s time limit") and contains("--timeout SECONDS"))] | @tsv' <<<"$js")" = \
			"$(printf 'true\ttrue')" ]

	# ---- the output cap keeps the head and the tail ----
	# shellcheck disable=SC2086
	js=$("$J" $mode --json -- python3 big.py)
	check "$mode: 3 MiB: truncated, every byte counted" \
		[ "$(jq -c '[.exit_code, .stdout_truncated, .stdout_bytes]' <<<"$js")" = \
			"[0,true,$((3 * 1024 * 1024 + 19))]" ]
	check "$mode: ... the tail is in the result ($(jq -c '.stdout[-40:]' <<<"$js"))" \
		[ "$(jq -j .stdout <<<"$js" | tail -n 1)" = FAILURE-AT-THE-END ]
	check "$mode: ... so is the head, with a marker between" \
		[ "$(jq -r .stdout <<<"$js" | head -n 1)" = "$(printf 'x%.0s' $(seq 1023))" -a \
			"$(jq -r .stdout <<<"$js" | grep -c '^\[\.\.\. [0-9]* bytes omitted \.\.\.\]$')" = 1 ]
	check "$mode: ... and the result stays within the cap" \
		[ "$(jq -r .stdout <<<"$js" | wc -c)" -le $((1024 * 1024 + 64)) ]
	# shellcheck disable=SC2086
	out=$("$J" $mode -- python3 big.py 2>"$T/err")
	check "$mode: live: the tail reaches stdout after the marker" \
		[ "$(tail -n 1 <<<"$out")" = FAILURE-AT-THE-END -a \
			"$(grep -c '^\[\.\.\. [0-9]* bytes omitted \.\.\.\]$' <<<"$out")" = 1 ]
	check "$mode: live: stderr says what was cut" \
		grep -q 'stdout: kept the first .* and the last .* bytes of' "$T/err"
done

# [run] allow_inline in the policy jailrun is given
printf '[run]\nallow_inline = python3\n' >"$T/inline.ini"
js=$("$J" --source "$P" --policy "$T/inline.ini" --json -- python3 -c 'print(6 * 7)')
check "--policy with [run] allow_inline = python3: python3 -c runs" \
	[ "$(jq -c '[.denied, .exit_code, .stdout]' <<<"$js")" = '[false,0,"42\n"]' ]

tap_done
