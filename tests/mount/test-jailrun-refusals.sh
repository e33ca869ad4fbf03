#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Honest refusals, end to end on real jailfs mounts and real jails:
#  - `echo x >> .git/config` and `true > .vscode/settings.json` are refused
#    with EROFS in every mode: at open(2) ("Read-only file system") where
#    the daemon sees opens (--source --audit and --root on a mount at level
#    all); at the first mutation where it does not (-o fast_open: one-shot
#    --source with its private log at level denied, --root on a fast_open
#    mount with an audit log): the open succeeds, the write answers EROFS
#    (dash says "I/O error" for any failed write), O_TRUNC answers EROFS
#    at open; either way they are in the audit log and in the result's
#    refusals (zone RESTRICTED, rule profile:project, EROFS, op open or
#    write/truncate), the backing files keep their bytes and show their
#    write bits
#  - --root on a mount without audit log: EROFS, refusals unknown (null, and
#    why); -o fast_open without audit log: EROFS at the write, not recorded
#  - --read-only: an MS_RDONLY mount without an audit log; with one, jailfs
#    refuses each mutation itself (EROFS), listed and in the log: at the
#    first write by default (fast_open), at open with -o nofast_open
#  - hidden lookups (probes) are not listed as refusals, but are in the log
#  - the no-network hint for a failed getaddrinfo, not with --net, not for a
#    command that succeeded; the allow_exec hint for a refused rm
#  - guardrail bypasses (python3 -m timeit, cmake -E rm, git aliases through
#    GIT_CONFIG_PARAMETERS, sqlite3 .system, awk -f - <<EOF) refused in every
#    mode (--source, --source --audit at level all, --root on a mount at
#    level all, --root on a --read-only mount) with the rule, the reason and
#    a hint naming both and what to do instead, the planted command not run;
#    ordinary commands of those tools still run
#  - every --json result parses, has the refusal and hint fields, and a
#    reason whenever denied is true
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
: "${JAILFS:?JAILFS not set}" # lib-mount.sh mounts with it

# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "$0")/../lib/lib-mount.sh"

T=$(mktemp -d /tmp/jf-refusals.XXXXXX)
P=$T/proj
cleanup() {
	unmount_all
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$P/.vscode" "$P/build"
git -C "$P" init -q
echo '{"editor.fontSize": 12}' >"$P/.vscode/settings.json"
echo obj >"$P/build/main.o"
echo 'API_TOKEN=projsecret' >"$P/.env"
cat >"$P/net.py" <<'EOF'
import socket
socket.getaddrinfo('example.com', 80)
EOF
cat >"$P/probe.py" <<'EOF'
import os
for name in (".env", ".env.missing", "secrets/.env"):
    try:
        os.stat(name)
        print("VISIBLE", name)
    except OSError:
        pass
EOF
cd "$P" || exit 1
sums() { sha256sum "$P/.git/config" "$P/.vscode/settings.json"; }
before=$(sums)
JSONS=$T/results.jsonl # every --json result of this script, one per line
json() { "$J" "$@" | tee -a "$JSONS"; }

# refusals_ok DESC JSON AT: .git/config twice, .vscode/settings.json once,
# EROFS; refused at open (AT=open) or at the first mutation (AT=write)
refusals_ok() {
	local op1=open op2=open eio=0 want
	[ "$3" = write ] && op1=write op2=truncate eio=2
	want='[{"op":"'$op1'","path":".git/config","zone":"RESTRICTED","rule":"profile:project","errno":"EROFS","count":2},{"op":"'$op2'","path":".vscode/settings.json","zone":"RESTRICTED","rule":"profile:project","errno":"EROFS","count":1}]'
	check "$1: refusals list both files, RESTRICTED, profile:project, EROFS" \
		[ "$(jq -c .refusals <<<"$2")" = "$want" ]
	check "$1: ... none omitted, known" \
		[ "$(jq -c '[.refusals_omitted, .refusals_unknown]' <<<"$2")" = '[0,null]' ]
	check "$1: the hint names .git/config and says why" \
		grep -q '^the view refused writing .git/config (RESTRICTED by profile:project, EROFS): files that make git or editors run code' \
		<<<"$(jq -r .hint <<<"$2")"
	check "$1: the command saw EROFS for each" \
		[ "$(jq -r .stderr <<<"$2" | grep -c 'Read-only file system')" -eq $((3 - eio)) -a \
			"$(jq -r .stderr <<<"$2" | grep -c 'echo: I/O error')" -eq $eio ]
}

# in_log DESC FILE AT: the log holds the refused open (AT=open) or write
# (AT=write) of .git/config
in_log() {
	check "$1: the audit log records the refused $3 of .git/config" \
		[ "$(jq -c --arg op "$3" 'select(.op == $op and .path == ".git/config" and .decision == "deny")
			| [.zone, .rule, .errno]' "$2" | sort -u)" = '["RESTRICTED","profile:project","EROFS"]' ]
}

# echo_refused DESC AT OUT RC: `echo x >> .git/config` failed with EROFS, at
# open(2) (AT=open: the shell says so) or at write(2) (AT=write: dash says
# "I/O error" for any failed write; the errno is the refusal's, below)
echo_refused() {
	local want="cannot create .git/config: Read-only file system" said=0
	[ "$2" = write ] && want="echo: echo: I/O error"
	grep -qF "$want" <<<"$3" && said=1
	check "$1: echo x >> .git/config fails with EROFS at $2 ($4)" [ "$4" -ne 0 -a $said = 1 ]
}

# overwrite DESC [LOG] AT -- JAILRUN-ARGS...: the RESTRICTED overwrites, live
# and --json, refused at open or at the first write (AT)
overwrite() {
	local d=$1 log=$2 at=$3 out js rc
	shift 4
	out=$("$J" "$@" --shell -- 'echo x >> .git/config' 2>&1); rc=$?
	echo_refused "$d" "$at" "$out" "$rc"
	check "$d: stderr lists the refusal" \
		grep -qxF "jailrun:   $at .git/config: EROFS (RESTRICTED, profile:project)" <<<"$out"
	check "$d: ... and the hint" grep -q '^jailrun: hint: the view refused writing .git/config' <<<"$out"
	js=$(json "$@" --json --shell -- 'echo x >> .git/config; true > .vscode/settings.json; echo x >> .git/config')
	refusals_ok "$d" "$js" "$at"
	check "$d: the backing files keep their bytes" [ "$(sums)" = "$before" ]
	[ -n "$log" ] && in_log "$d" "$log" "$at"
	out=$("$J" "$@" -- stat -c %A .git/config 2>&1)
	check "$d: .git/config shows its write bit ($out)" [ "$out" = "-rw-r--r--" ]
	js=$(json "$@" --json -- python3 probe.py)
	check "$d: hidden lookups are not listed ($(jq -c .refusals <<<"$js"))" \
		[ "$(jq -c '[.exit_code, .stdout, .refusals, .hint]' <<<"$js")" = '[0,"",[],null]' ]
	[ -n "$log" ] && check "$d: ... though the log has them" \
		[ "$(jq -r 'select(.op == "lookup" and .decision == "hide") | .path' "$log" | grep -c '^\.env')" -ge 2 ]
}

chmod 0644 "$P/.git/config" "$P/.vscode/settings.json"

# ---- one-shot --source: a private audit log at level denied ----
overwrite "--source" "" write -- --source "$P"
"$J" --source "$P" --fresh -- sleep 3 &
jpid=$!
dpid=
for _ in $(seq 50); do
	dpid=$(pgrep -P $jpid -x jailfs) && break
	sleep 0.1
done
log=
for _ in $(seq 50); do
	# shellcheck disable=SC2010 # the targets of the fd links
	log=$(ls -l "/proc/$dpid/fd" 2>/dev/null | grep -o "/run/jailrun/audit\.[A-Za-z0-9]*$") && break
	sleep 0.1
done
check "--source: the daemon writes a private log ($log)" [ -n "$log" ]
check "--source: ... at level denied" \
	eval 'tr "\0" " " </proc/$dpid/cmdline | grep -q -- "--audit-level denied"'
check "--source: ... with -o fast_open" \
	eval 'tr "\0" " " </proc/$dpid/cmdline | grep -q -- "-o fast_open"'
wait $jpid
check "--source: ... removed afterwards" [ -n "$log" -a ! -e "$log" ]

# ---- one-shot --source --audit FILE: level all, the caller's file ----
overwrite "--source --audit" "$T/src.jsonl" write -- --source "$P" --audit "$T/src.jsonl"
js=$(json --source "$P" --audit "$T/src.jsonl" --json -- cat .vscode/settings.json)
check "--source --audit: counts and refusals of this run only" \
	[ "$(jq -c '[.refusals, (.audit.records > 0)]' <<<"$js")" = '[[],true]' ]

# ---- --root on a mount that sees opens, without an audit log ----
M=$T/plain
mount_view "$M" -o nofast_open "$P" || bad "jailfs -o nofast_open $P $M did not mount"
out=$("$J" --root "$M" --shell -- 'echo x >> .git/config' 2>&1); rc=$?
check "--root, no log: EROFS ($rc)" grep -q "Read-only file system" <<<"$out"
check "--root, no log: nothing claimed on stderr" bash -c '! grep -q "the view refused" <<<"$1"' _ "$out"
js=$(json --root "$M" --json --shell -- 'echo x >> .git/config')
check "--root, no log: refusals null, and why" \
	[ "$(jq -c '[.refusals, (.refusals_unknown | test("keeps no audit log")), .hint]' <<<"$js")" = '[null,true,null]' ]
check "--root, no log: backing unchanged" [ "$(sums)" = "$before" ]
umount_view "$M"

# ---- --root on a mount that sees opens, with --audit-level all ----
M=$T/all
mount_view "$M" -o nofast_open --audit "$T/all.jsonl" --audit-level all "$P" ||
	bad "jailfs -o nofast_open --audit-level all did not mount"
overwrite "--root, level all" "$T/all.jsonl" open -- --root "$M"
umount_view "$M"

# ---- --root on a -o fast_open mount with an audit log: refused at the first write ----
M=$T/fast
mount_view "$M" -o fast_open --audit "$T/fast.jsonl" "$P" || bad "jailfs -o fast_open --audit did not mount"
overwrite "--root, fast_open + audit" "$T/fast.jsonl" write -- --root "$M"
umount_view "$M"

# ---- --root on a -o fast_open mount without an audit log: EROFS at the write ----
M=$T/fastplain
mount_view "$M" -o fast_open "$P" || bad "jailfs -o fast_open did not mount"
out=$("$J" --root "$M" --shell -- 'echo x >> .git/config' 2>&1); rc=$?
echo_refused "fast_open, no log" write "$out" "$rc"
out=$("$J" --root "$M" --shell -- '/bin/echo x >> .git/config' 2>&1)
check "fast_open, no log: ... EROFS, says coreutils ($out)" grep -q "write error: Read-only file system" <<<"$out"
out=$("$J" --root "$M" -- stat -c %A .git/config 2>&1)
check "fast_open, no log: the real write bits shown ($out)" [ "$out" = "-rw-r--r--" ]
check "fast_open, no log: backing unchanged" [ "$(sums)" = "$before" ]
umount_view "$M"

# ---- --read-only: a read-only mount, unless an audit log is on ----
M=$T/ro
mount_view "$M" --read-only "$P" || bad "jailfs --read-only did not mount"
check "--read-only, no log: an MS_RDONLY mount" \
	eval 'findmnt -no OPTIONS "$M" | grep -qE "(^|,)ro(,|$)"'
out=$("$J" --root "$M" --shell -- 'echo x >> build/main.o' 2>&1)
check "--read-only, no log: EROFS" grep -q "Read-only file system" <<<"$out"
umount_view "$M"
M=$T/roaudit
mount_view "$M" --read-only --audit "$T/ro.jsonl" "$P" || bad "jailfs --read-only --audit did not mount"
check "--read-only with a log: not an MS_RDONLY mount (jailfs refuses)" \
	eval 'findmnt -no OPTIONS "$M" | grep -qE "(^|,)rw(,|$)"'
# read_only_logged DESC AT LOG: a write to and a mkdir in the --read-only
# view at $M are refused (the write at open or at write(2): AT), listed and
# in LOG, and the backing tree is unchanged
read_only_logged() {
	local js
	js=$(json --root "$M" --json --shell -- '/bin/echo x >> build/main.o; mkdir build/d')
	check "$1: EROFS for both" [ "$(jq -r .stderr <<<"$js" | grep -c 'Read-only file system')" -eq 2 ]
	check "$1: both listed, RESTRICTED by default" \
		[ "$(jq -c '[.refusals[] | [.op, .path, .zone, .rule, .errno]]' <<<"$js")" = \
			'[["'"$2"'","build/main.o","RESTRICTED","default","EROFS"],["mkdir","build/d","RESTRICTED","default","EROFS"]]' ]
	check "$1: ... and in the log" \
		[ "$(jq -r 'select(.decision == "deny") | .op' "$3" | sort | tr '\n' ' ')" = "$(printf '%s\n' mkdir "$2" | sort | tr '\n' ' ')" ]
	check "$1: the backing tree unchanged" \
		[ "$(cat "$P/build/main.o")" = obj -a ! -e "$P/build/d" ]
}
read_only_logged "--read-only with a log" write "$T/ro.jsonl"
umount_view "$M"
M=$T/roaudit2
mount_view "$M" --read-only -o nofast_open --audit "$T/ro2.jsonl" "$P" ||
	bad "jailfs --read-only -o nofast_open --audit did not mount"
read_only_logged "--read-only -o nofast_open with a log" open "$T/ro2.jsonl"
umount_view "$M"

# ---- no network ----
M=$T/net
mount_view "$M" --audit "$T/net.jsonl" "$P" || bad "jailfs for the network case did not mount"
for mode in "--source $P" "--root $M"; do
	# shellcheck disable=SC2086
	js=$(json $mode --json -- python3 net.py)
	check "$mode: getaddrinfo fails: the no-network hint" \
		[ "$(jq -c '[(.exit_code != 0), (.stderr | test("name resolution")), .hint]' <<<"$js")" = \
			'[true,true,"no network in the jail: pass --net or vendor the dependency; see jailrun(1), THE WALL"]' ]
	# shellcheck disable=SC2086
	out=$("$J" $mode -- python3 net.py 2>&1)
	check "$mode: ... on stderr too" \
		grep -qx 'jailrun: hint: no network in the jail: pass --net or vendor the dependency; see jailrun(1), THE WALL' <<<"$out"
	# shellcheck disable=SC2086
	js=$(json $mode --json --net -- python3 net.py)
	check "$mode: with --net no such hint (whatever the host's network)" [ "$(jq -c .hint <<<"$js")" = null ]
	# shellcheck disable=SC2086
	js=$(json $mode --json -- echo EAI_AGAIN)
	check "$mode: a command that succeeded gets no hint" [ "$(jq -c '[.exit_code, .hint]' <<<"$js")" = '[0,null]' ]
done

# ---- rm: the guardrail, and what lifts it ----
for mode in "--source $P" "--root $M"; do
	# shellcheck disable=SC2086
	js=$(json $mode --json -- rm -rf build)
	check "$mode: rm -rf build refused with the allow_exec hint" \
		[ "$(jq -c '[.denied, .rule, (.reason | length > 0), (.hint | test("add `allow_exec = rm` to the policy.s \\[run\\], or delete files with unlink or git clean"))]' <<<"$js")" = \
			'[true,"exec-denylist",true,true]' ]
	# shellcheck disable=SC2086
	out=$("$J" $mode -- rm -rf build 2>&1)
	check "$mode: ... and on stderr" grep -q "^jailrun: hint: refused by the exec-denylist guardrail (denied executable rm .*): rm is on jailrun's executable denylist" <<<"$out"
	check "$mode: build/ is still there" [ -f "$P/build/main.o" ]
done
umount_view "$M"
printf '[options]\ndefault = safe\n[run]\ndeny_exec = rm\n' >"$T/deny-rm.ini"
M=$T/denyrm
mount_view "$M" --policy "$T/deny-rm.ini" "$P" || bad "jailfs --policy deny-rm.ini did not mount"
js=$(json --root "$M" --allow-exec rm --json -- rm -rf build)
check "the view's own deny_exec: the hint does not offer --allow-exec" \
	[ "$(jq -r '.hint | test("the view.s own \\[run\\] deny_exec")' <<<"$js")" = true ]
umount_view "$M"

# ---- guardrail bypasses: refused with the rule, the reason and a hint ----
# refused MODE DESC RULE REASON-PREFIX ADVICE ARGS...: refused by RULE, the
# reason starts with REASON-PREFIX, the hint says "refused by the RULE
# guardrail (REASON): ADVICE..." and nothing ran (no file pwned)
refused() {
	local mode=$1 desc=$2 rule=$3 reason=$4 advice=$5 js
	shift 5
	rm -f "$P/pwned"
	# shellcheck disable=SC2086
	js=$(json $mode --json "$@")
	check "$mode: $desc: refused by $rule" \
		[ "$(jq -c '[.denied, .rule, (.reason | startswith($r))]' --arg r "$reason" <<<"$js")" = \
			'[true,"'"$rule"'",true]' ]
	check "$mode: $desc: the hint names the rule, the reason and what to do" \
		[ "$(jq -r '.hint | startswith("refused by the " + $u + " guardrail (") and
			contains($r) and contains($a)' --arg u "$rule" --arg r "$reason" --arg a "$advice" \
			<<<"$js")" = true ]
	check "$mode: $desc: nothing ran" [ ! -e "$P/pwned" ]
}
M=$T/guards
mount_view "$M" --audit "$T/guards.jsonl" --audit-level all "$P" || bad "jailfs --audit-level all for the guardrails did not mount"
R=$T/guardsro
mount_view "$R" --read-only "$P" || bad "jailfs --read-only for the guardrails did not mount"
echo 'BEGIN { system("touch pwned") }' >"$P/prog.awk"
for mode in "--source $P" "--source $P --audit $T/guards-src.jsonl" "--root $M" "--root $R"; do
	refused "$mode" "python3 -m timeit" inline-code "interpreter inline code (python3 -m timeit" \
		"write the program to a file" -- python3 -m timeit "open('pwned', 'w')"
	refused "$mode" "cmake -E rm" exec-denylist "denied executable rm (cmake -E rm)" \
		"--allow-exec rm" -- cmake -E rm -rf build
	check "$mode: ... build/ is still there" [ -f "$P/build/main.o" ]
	refused "$mode" "a git alias through GIT_CONFIG_PARAMETERS" git-alias \
		"environment GIT_CONFIG_PARAMETERS sets alias.x=!touch pwned" "run the command itself" \
		--env "GIT_CONFIG_PARAMETERS='alias.x'='!touch pwned'" -- git x
	refused "$mode" "sqlite3 .system" inline-code "sqlite3 text runs a program: shell command" \
		"write the program to a file" --shell -- "sqlite3 :memory: '.system touch pwned'"
	refused "$mode" "awk -f - <<EOF" inline-code "awk program read from a pipe or here-document" \
		"write the program to a file" --shell -- "awk -f - <<EOF
$(cat "$P/prog.awk")
EOF"
	# shellcheck disable=SC2086
	js=$(json $mode --json --allow-exec rm --check -- cmake -E rm -rf build)
	check "$mode: cmake -E rm with --allow-exec rm: allowed" [ "$(jq -c .denied <<<"$js")" = false ]
	# shellcheck disable=SC2086
	js=$(json $mode --json -- cmake -E echo made)
	check "$mode: ordinary cmake -E echo runs" [ "$(jq -c '[.exit_code, .stdout]' <<<"$js")" = '[0,"made\n"]' ]
	# shellcheck disable=SC2086
	js=$(json $mode --json --shell -- "sqlite3 :memory: 'select 1+1;'")
	check "$mode: ordinary sqlite3 SQL runs" [ "$(jq -c '[.exit_code, .stdout]' <<<"$js")" = '[0,"2\n"]' ]
	# shellcheck disable=SC2086
	js=$(json $mode --json -- python3 -m timeit -h)
	check "$mode: python3 -m timeit -h runs" [ "$(jq -c '[.denied, .exit_code]' <<<"$js")" = '[false,0]' ]
	# shellcheck disable=SC2086
	js=$(json $mode --json --env "GIT_CONFIG_PARAMETERS='user.name'='Agent'" -- git config user.name)
	check "$mode: harmless GIT_CONFIG_PARAMETERS reaches git" \
		[ "$(jq -c '[.exit_code, .stdout]' <<<"$js")" = '[0,"Agent\n"]' ]
done
rm -f "$P/prog.awk"
umount_view "$R"
umount_view "$M"

# ---- every result is JSON; denied has a reason ----
json --json --timeout x -- true >/dev/null 2>&1          # usage error
json --json --root "$T/nowhere" -- true >/dev/null 2>&1  # setup error
json --json --source "$P" --check -- ls >/dev/null 2>&1  # --check
json --json --source "$P" -- python3 -c 1 >/dev/null 2>&1 # refused
lines=$(wc -l <"$JSONS")
check "every --json result ($lines) is one JSON object with the new fields" \
	[ "$(jq -s '[.[] | select(has("refusals") and has("refusals_omitted") and has("refusals_unknown") and has("hint"))] | length' "$JSONS")" -eq "$lines" ]
check "... and reason is non-null whenever denied is true" \
	[ "$(jq -s '[.[] | select(.denied and .reason == null)] | length' "$JSONS")" -eq 0 ]
check "... usage, setup errors and refusals among them" \
	[ "$(jq -s '[.[] | .exit_code] | (index(2) != null) and (index(125) != null) and (index(-100) != null)' "$JSONS")" = true ]

tap_done
