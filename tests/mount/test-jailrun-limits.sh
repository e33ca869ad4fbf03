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
#  - without --net, the first connect out of the jail is said on stderr at
#    once (within 2 s of the attempt, while the command still runs) and named
#    in the result (network_refused); loopback is not; npm install too
#  - the unprivileged run (jftest) for the connect note, --allow-inline and
#    the output tail
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
: "${JAILFS:?JAILFS not set}" # lib-mount.sh mounts with it

# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "$0")/../lib/lib-mount.sh"

T=$(mktemp -d /tmp/jf-limits.XXXXXX)
P=$T/proj
cleanup() {
	unmount_all
	fuse_mode_back
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
cat >"$P/connect.py" <<'EOF'
import socket, sys, time
s = socket.socket()
print(f"{time.time():.3f}", flush=True)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
except OSError as e:
    print(e.errno, flush=True)
time.sleep(3)
EOF
mkdir -p "$P/npmproj"
echo '{"name": "t", "version": "1.0.0", "dependencies": {"left-pad": "1.3.0"}}' >"$P/npmproj/package.json"
cd "$P" || exit 1

# stamped CMD...: CMD's stderr lines, each after the time it arrived (s since
# the epoch); its stdout to $T/stamped.out
stamped() {
	"$@" 2>&1 >"$T/stamped.out" | while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done
}

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
	js=$("$J" $mode --json --allow-inline python3 --shell -- "python3 -c 'print(6 * 7)' | cat")
	check "$mode: ... with --shell too" \
		[ "$(jq -c '[.denied, .exit_code, .stdout]' <<<"$js")" = '[false,0,"42\n"]' ]
	# shellcheck disable=SC2086
	js=$("$J" $mode --json -- sh -c 'echo $((6 * 7))')
	check "$mode: sh -c without --shell: the hint names --shell" \
		[ "$(jq -r '[.rule, (.hint | contains("needs --shell"))] | @tsv' <<<"$js")" = "$(printf 'inline-code\ttrue')" ]
	# shellcheck disable=SC2086
	js=$("$J" $mode --json --shell -- "sh -c 'echo \$((6 * 7))'")
	check "$mode: ... and following it runs the string, checked" \
		[ "$(jq -c '[.denied, .exit_code, .stdout]' <<<"$js")" = '[false,0,"42\n"]' ]
	# shellcheck disable=SC2086
	js=$("$J" $mode --json --allow-inline sh -- sh -c 'echo 42')
	check "$mode: --allow-inline does not let a shell's -c string through unchecked" \
		[ "$(jq -c '[.denied, .rule]' <<<"$js")" = '[true,"inline-code"]' ]
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

	# ---- the first connect out of the jail, said at once ----
	# shellcheck disable=SC2086
	err=$(stamped "$J" $mode -- python3 connect.py 192.0.2.1 80)
	tried=$(head -n 1 "$T/stamped.out")
	said=$(grep 'jailrun: network is off in the jail (python3[.0-9]* tried to connect to 192\.0\.2\.1:80); use --net$' <<<"$err" | cut -d' ' -f1)
	check "$mode: connect: the note on stderr within 2 s of the attempt, not at the end ($tried, $said)" \
		[ -n "$said" ] && python3 -c 'import sys; sys.exit(not (0 <= float(sys.argv[2]) - float(sys.argv[1]) < 2))' "$tried" "$said"
	check "$mode: connect: the command still saw ENETUNREACH (101)" [ "$(sed -n 2p "$T/stamped.out")" = 101 ]
	# shellcheck disable=SC2086
	js=$("$J" $mode --json -- python3 connect.py 192.0.2.1 80 2>/dev/null)
	check "$mode: connect: the result names it" \
		[ "$(jq -r '.network_refused | test("^python3[.0-9]* tried to connect to 192\\.0\\.2\\.1:80$")' <<<"$js")" = true ]
	# shellcheck disable=SC2086
	js=$("$J" $mode --json -- python3 connect.py 127.0.0.1 1 2>"$T/err")
	check "$mode: connect to loopback: no note, ECONNREFUSED (111)" \
		[ "$(jq -c '[.network_refused, (.stdout | split("\n")[1])]' <<<"$js")" = '[null,"111"]' -a ! -s "$T/err" ]
	# shellcheck disable=SC2086
	js=$("$J" $mode --json --net -- python3 connect.py 192.0.2.1 80 2>"$T/err")
	check "$mode: with --net: no note (whatever the host's network)" \
		[ "$(jq -c .network_refused <<<"$js")" = null ] && ! grep -q "network is off" "$T/err"
done

# npm install without --net: said within 4 s of jailrun's start (npm's own
# start-up included), not at the timeout
start=$(date +%s.%N)
err=$(stamped "$J" --source "$P" --cwd npmproj --timeout 10 --json -- npm install --cache /tmp/npm-cache)
said=$(grep 'jailrun: network is off in the jail (npm tried to connect to .*); use --net$' <<<"$err" | cut -d' ' -f1)
check "npm install: the note on stderr at once ($start, $said)" \
	[ -n "$said" ] && python3 -c 'import sys; sys.exit(not (float(sys.argv[2]) - float(sys.argv[1]) < 4))' "$start" "$said"
check "npm install: the result names it, the hint says --net" \
	[ "$(jq -c '[(.network_refused | startswith("npm tried to connect to")), (.hint | contains("pass --net"))]' "$T/stamped.out")" = '[true,true]' ]

# ---- unprivileged (jftest: a user namespace, a view through fusermount3) ----
if id jftest >/dev/null 2>&1; then
	U=$T/uproj
	mkdir -p "$U"
	cp "$P/connect.py" "$P/big.py" "$U/"
	chown -R jftest "$U"
	chmod 755 "$T"
	fuse_for_users
	js=$(su jftest -s /bin/sh -c "cd '$U' && '$J' --source '$U' --json -- python3 connect.py 192.0.2.1 80" 2>"$T/err")
	check "unprivileged: connect: the result and stderr name it" \
		[ "$(jq -r '.network_refused | test("tried to connect to 192\\.0\\.2\\.1:80$")' <<<"$js")" = true ] && grep -q "network is off in the jail" "$T/err"
	js=$(su jftest -s /bin/sh -c "cd '$U' && '$J' --source '$U' --json --allow-inline python3 -- python3 -c 'print(6 * 7)'" 2>/dev/null)
	check "unprivileged: --allow-inline python3 runs python3 -c" \
		[ "$(jq -c '[.denied, .stdout]' <<<"$js")" = '[false,"42\n"]' ]
	js=$(su jftest -s /bin/sh -c "cd '$U' && '$J' --source '$U' --json -- python3 big.py" 2>/dev/null)
	check "unprivileged: 3 MiB: the tail is in the result" \
		[ "$(jq -j .stdout <<<"$js" | tail -n 1)" = FAILURE-AT-THE-END ]
else
	bad "unprivileged: no jftest user (.ci/run creates it)"
fi

# [run] allow_inline in the policy jailrun is given
printf '[options]\ndefault = safe\n[run]\nallow_inline = python3\n' >"$T/inline.ini"
js=$("$J" --source "$P" --policy "$T/inline.ini" --json -- python3 -c 'print(6 * 7)')
check "--policy with [run] allow_inline = python3: python3 -c runs" \
	[ "$(jq -c '[.denied, .exit_code, .stdout]' <<<"$js")" = '[false,0,"42\n"]' ]

tap_done
