#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Persistent --source views, end to end on real jails:
#  - the first jailrun --source starts a view that outlives it (jailfs --list:
#    mode persistent), in $XDG_RUNTIME_DIR/jailrun, directories 0700 and ours;
#    the next command of the same source, policy and user runs in the same
#    daemon; --fresh and --audit FILE get one-shot views and start none
#  - each command keeps its own timeout (one timed out, the view lives on)
#  - two commands at once on one view, each refusing a different write: each
#    JSON result lists its own refusal only
#  - a policy file changed between two commands applies at the next one (a
#    second view, keyed on the content; the old one idles out)
#  - two concurrent commands appending 2,000 lines each with O_APPEND: 4,000
#    whole lines
#  - kill -9 of the daemon: the next command says so on stderr, detaches the
#    dead mount and starts a fresh view that works
#  - jailfs --stop stops one; --view-idle: an unused view unmounts itself,
#    never under a command that is still running; jailfs --idle-exit keeps a
#    view while a shared flock on its --idle-lock file is held
#  - a source directory removed and made again under its name gets a view
#    of the new directory, not the daemon's of the removed one
#  - unshare -p (to hide refusals from the jail's report) fails in the jail;
#    kill -9 of the daemon under a running command: that command says so,
#    the next one gets a fresh view
#  - a runtime directory inside the source: one-shot views (the shared log
#    would be in the view)
#  - a runtime directory another user owns, or a symlink there, is refused
#  - as jftest: its views in its own runtime directory, reused, listed and
#    stopped by it; root's views not reachable by it
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
F=${JAILFS:?JAILFS not set}

# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse jq
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "$0")/../lib/lib-mount.sh"

T=$(mktemp -d /tmp/jf-persist.XXXXXX)
chmod 0755 "$T"
export XDG_RUNTIME_DIR=$T/run
mkdir -m 0700 "$XDG_RUNTIME_DIR"
P=$T/proj
U=$T/user

# views: the persistent views under $1 (mountpoint, pid), one a line
views() { "$F" --list | awk -F'\t' -v d="$1/" 'index($1, d) == 1 && $4 ~ /persistent/ { print $1, $3 }'; }
stop_views() {
	local m _
	for m in $(views "$1" | awk '{print $1}'); do "$F" --stop "$m" >/dev/null 2>&1; done
}
cleanup() {
	stop_views "$T"
	grep " $T/" /proc/self/mountinfo | awk '{print $5}' | while read -r m; do
		umount -l "$m" 2>/dev/null
	done
	stop_persistent
	rm -rf "$T"
}
trap cleanup EXIT

mkdir -p "$P"
printf '[options]\ndefault = safe\n[restricted]\nro1.txt\nro2.txt\n' >"$T/pol.ini"
echo one >"$P/ro1.txt"
echo two >"$P/ro2.txt"
echo hello >"$P/a.txt"
run() { "$J" --source "$P" --no-git-root --policy "$T/pol.ini" "$@"; }

# --- started, kept, reused ---
out=$(run -- cat a.txt 2>&1)
check "first command runs" test "$out" = hello
v1=$(views "$T")
check "it left one persistent view ($v1)" test "$(wc -l <<<"$v1")" -eq 1 -a -n "$v1"
mnt=${v1% *}
case $mnt in "$XDG_RUNTIME_DIR"/jailrun/*) ok "the view is in \$XDG_RUNTIME_DIR/jailrun" ;;
*) bad "the view is at $mnt" ;; esac
d=$(dirname "$mnt")
check "its directories are 0700 and root's" test "$(stat -c %a:%u "$XDG_RUNTIME_DIR/jailrun" "$d")" \
	= "$(printf '700:0\n700:0')"
out=$(run -- cat a.txt 2>&1)
check "second command runs" test "$out" = hello
check "in the same daemon" test "$(views "$T")" = "$v1"
out=$(run --fresh -- cat a.txt 2>&1)
check "--fresh runs" test "$out" = hello
out=$(run --audit "$T/audit.jsonl" -- cat a.txt 2>&1)
check "--audit FILE runs, one-shot, its log written" test "$out" = hello -a -s "$T/audit.jsonl"
check "neither started a view" test "$(views "$T")" = "$v1"

# --- own timeout ---
js=$(run --json --timeout 1 -- sleep 5 2>/dev/null)
check "a command times out on its own limit" test "$(jq -r .timed_out <<<"$js")" = true
check "the view lives on" test "$(views "$T")" = "$v1"

# --- refusals attributed to their own command ---
# shellcheck disable=SC2016 # the jail's shell expands $f
run --json --shell -- 'sleep 1; f=ro1; echo x >> $f.txt' >"$T/r1.json" 2>/dev/null &
p1=$!
# shellcheck disable=SC2016
run --json --shell -- 'sleep 1; f=ro2; echo x >> $f.txt' >"$T/r2.json" 2>/dev/null &
p2=$!
wait "$p1" "$p2"
r1=$(jq -c '[.refusals[].path]' "$T/r1.json")
r2=$(jq -c '[.refusals[].path]' "$T/r2.json")
check "command 1 lists its refusal only ($r1)" test "$r1" = '["ro1.txt"]'
check "command 2 lists its refusal only ($r2)" test "$r2" = '["ro2.txt"]'
check "both in the same view" test "$(views "$T")" = "$v1"
check "the files kept their bytes" test "$(cat "$P/ro1.txt" "$P/ro2.txt")" = "$(printf 'one\ntwo')"

# --- a changed policy applies at the next command ---
printf '[options]\ndefault = safe\n[restricted]\nro1.txt\nro2.txt\n[denied]\na.txt\n' >"$T/pol.ini"
out=$(run --shell -- 'ls' 2>&1)
case $out in *a.txt*) bad "the changed policy hides a.txt: $out" ;;
*ro1.txt*) ok "the changed policy applies at the next command" ;;
*) bad "ls: $out" ;; esac
check "in a second view; the first still there" test "$(views "$T" | wc -l)" -eq 2
stop_views "$T"
printf '[options]\ndefault = safe\n[restricted]\nro1.txt\nro2.txt\n' >"$T/pol.ini"

# --- O_APPEND from two commands at once ---
app() { run --shell -- "i=0; while [ \$i -lt 2000 ]; do echo $1-\$i-0123456789abcdef >>log.txt; i=\$((i+1)); done"; }
app A >/dev/null 2>&1 &
p1=$!
app B >/dev/null 2>&1 &
p2=$!
wait "$p1" "$p2"
lines=$(wc -l <"$P/log.txt")
whole=$(grep -cE '^[AB]-[0-9]+-0123456789abcdef$' "$P/log.txt")
check "4,000 lines appended ($lines)" test "$lines" -eq 4000
check "all whole ($whole)" test "$whole" -eq 4000
check "one view served both" test "$(views "$T" | wc -l)" -eq 1

# --- a crashed daemon ---
v=$(views "$T")
kill -9 "${v#* }"
sleep 0.2
out=$(run -- cat a.txt 2>"$T/crash.err")
check "after kill -9 the next command runs" test "$out" = hello
check "and says why on stderr" grep -q "persistent view .* is gone" "$T/crash.err"
v2=$(views "$T")
check "a fresh daemon serves it" test -n "$v2" -a "${v2#* }" != "${v#* }"
check "one mount at the mountpoint" test "$(awk -v m="${v2% *}" '$5 == m' /proc/self/mountinfo | wc -l)" -eq 1

# --- jailfs --stop ---
"$F" --stop "${v2% *}" >/dev/null 2>&1
check "jailfs --stop stops it" test -z "$(views "$T")"
out=$(run -- cat a.txt 2>&1)
check "and the next command starts another" test "$out" = hello -a -n "$(views "$T")"
stop_views "$T"
gone_dir=$(dirname "${v2% *}")
check "a stopped view's refusal log stays until another view starts" test -e "$gone_dir/audit.log"
mkdir -p "$T/proj2"
"$J" --source "$T/proj2" --no-git-root --policy "$T/pol.ini" -- true >/dev/null 2>&1
check "... which removes it" test ! -e "$gone_dir/audit.log" -a -e "$gone_dir/users.lock"
stop_views "$T"

# --- idle ---
# mountinfo, not jailfs --list: asking a view is a request, which keeps it
in_use() { grep -q " $XDG_RUNTIME_DIR/jailrun/[^ ]*/mnt .* fuse.jailfs " /proc/self/mountinfo; }
run --view-idle 1 -- true >/dev/null 2>&1
check "--view-idle 1: a view started" in_use
gone=
for _ in $(seq 50); do in_use || { gone=1 && break; }; sleep 0.2; done
check "--view-idle 1: the unused view unmounts itself" test -n "$gone"
run --view-idle 1 -- sleep 3 >/dev/null 2>&1 &
p1=$!
sleep 2.5
check "not while a command is attached" in_use
wait "$p1"
check "that command ended well" test $? -eq 0

# --- the source removed and made again under its name ---
# the first view's daemon holds the old directory: reused, the next command
# would see the removed tree
R=$T/remade
mkdir -p "$R"
echo old >"$R/f.txt"
"$J" --source "$R" --no-git-root --policy "$T/pol.ini" -- cat f.txt >/dev/null 2>&1
rm -rf "$R"
mkdir -p "$R"
echo new >"$R/f.txt"
out=$("$J" --source "$R" --no-git-root --policy "$T/pol.ini" -- cat f.txt 2>&1)
check "a source made again under its name: the command sees the new tree ($out)" test "$out" = new
stop_views "$T"

# --- the runtime directory inside the source ---
# the view's log would be in its own tree (jailfs refuses that): a one-shot view
mkdir -m 0700 "$R/run"
out=$(XDG_RUNTIME_DIR=$R/run "$J" --source "$R" --no-git-root --policy "$T/pol.ini" -- cat f.txt 2>&1)
check "a runtime directory inside the source: the command runs ($out)" test "$out" = new
check "in a one-shot view" test -z "$(views "$R")"
stop_views "$R"

# --- hiding a refusal in a pid namespace of its own ---
# records are matched on the jail's pid namespace: one made inside would leave
# its refusals out, so the jail must not be able to make one
# shellcheck disable=SC2016 # the jail's shell expands $?
js=$(run --json --shell -- 'unshare -p -f sh -c "echo x >> ro1.txt"; echo $?;
	unshare -U -r -p -f sh -c "echo x >> ro1.txt"; echo $?; echo x >> ro2.txt' 2>/dev/null)
check "unshare -p and -U -p fail in the jail ($(jq -c .stdout <<<"$js"))" \
	test "$(jq -r .stdout <<<"$js")" = "$(printf '1\n1')"
check "the jail's own refusal is listed" test "$(jq -c '[.refusals[].path]' <<<"$js")" = '["ro2.txt"]'

# --- kill -9 of the daemon under a running command ---
run -- true >/dev/null 2>&1
v=$(views "$T")
run --json --timeout 20 --shell -- 'sleep 1; cat a.txt' >"$T/mid.json" 2>/dev/null &
p1=$!
sleep 0.5
kill -9 "${v#* }"
wait "$p1"
check "the command under it fails, saying the daemon is gone" \
	grep -q "daemon of the persistent view is gone under the command" "$T/mid.json"
out=$(run -- cat a.txt 2>/dev/null)
check "the next command runs in a fresh view" test "$out" = hello -a "$(views "$T")" != "$v"
check "one mount at its mountpoint" \
	test "$(awk -v m="${v% *}" '$5 == m' /proc/self/mountinfo | wc -l)" -eq 1
stop_views "$T"

# --- jailfs --idle-exit and --idle-lock on their own ---
mkdir -p "$T/im"
: >"$T/im.lock"
flock -s "$T/im.lock" sleep 3 &
p1=$!
sleep 0.3
"$F" --idle-exit 1 --idle-lock "$T/im.lock" "$P" "$T/im"
listed_persistent() { "$F" --list | awk -F'\t' -v m="$1" '$1 == m' | grep -q persistent; }
check "jailfs --idle-exit: --list says persistent" listed_persistent "$T/im"
sleep 2.5
check "jailfs --idle-exit: kept while a shared flock is held" mounted "$T/im"
wait "$p1"
gone=
for _ in $(seq 25); do mounted "$T/im" || { gone=1 && break; }; sleep 0.2; done
check "jailfs --idle-exit: unmounted once the lock is free and no request came" test -n "$gone"

# --- planted runtime directories ---
if id jftest >/dev/null 2>&1; then
	mkdir -m 0700 "$T/run2" "$T/run2/jailrun"
	chown jftest "$T/run2/jailrun"
	out=$(XDG_RUNTIME_DIR=$T/run2 run -- true 2>&1)
	rc=$?
	check "a runtime directory another user owns is refused (rc $rc)" test "$rc" -ne 0
	case $out in *"directory of yours"*) ok "saying why" ;; *) bad "says: $out" ;; esac
else
	bad "no jftest user (.ci/run creates it)"
fi
mkdir -m 0700 "$T/run3" "$T/elsewhere"
ln -s "$T/elsewhere" "$T/run3/jailrun"
out=$(XDG_RUNTIME_DIR=$T/run3 run -- true 2>&1)
check "a symlink as the runtime directory is refused" test $? -ne 0 -a -z "$(ls "$T/elsewhere")"

# --- the unprivileged user ---
if id jftest >/dev/null 2>&1; then
	mkdir -p "$U/proj" "$U/home"
	chmod 0755 "$U"
	echo mine >"$U/proj/f.txt"
	printf '[options]\ndefault = safe\n' >"$U/pol.ini"
	mkdir -m 0700 "$U/run"
	chown -R jftest "$U"
	old_fuse_mode=$(stat -c %a /dev/fuse)
	chmod 0666 /dev/fuse # jftest mounts through fusermount3
	ju() { su jftest -s /bin/bash -c "export XDG_RUNTIME_DIR='$U/run'; cd /; $1"; }
	cmd="'$J' --source '$U/proj' --no-git-root --home '$U/home' --policy '$U/pol.ini' -- cat f.txt"
	out=$(ju "$cmd" 2>&1)
	check "jftest: the first command runs ($out)" test "$out" = mine
	l1=$(ju "'$F' --list" | awk -F'\t' -v d="$U/run/" 'index($1, d) == 1 && $4 ~ /persistent/')
	out=$(ju "$cmd" 2>&1)
	l2=$(ju "'$F' --list" | awk -F'\t' -v d="$U/run/" 'index($1, d) == 1 && $4 ~ /persistent/')
	check "jftest: the second reuses its view" test "$out" = mine -a -n "$l1" -a "$l1" = "$l2"
	m=$(cut -f1 <<<"$l1")
	check "jftest: its view is under its own 0700 directory" \
		test "$(stat -c %a:%U "$U/run/jailrun" "$(dirname "$m")")" = "$(printf '700:jftest\n700:jftest')"
	check "jftest cannot reach root's views" \
		test -n "$(ju "ls '$XDG_RUNTIME_DIR/jailrun/' 2>&1 >/dev/null")"
	# git writes its objects 0444: the user's daemon, which cannot open
	# them again by name, still takes the writes of the fd git made
	ju "cd '$U/proj' && git init -q && git config user.email t@example.com &&
		git config user.name t && git add f.txt && git commit -qm first" >/dev/null 2>&1
	cmd="'$J' --source '$U/proj' --no-git-root --home '$U/home' --policy '$U/pol.ini' --shell --"
	out=$(ju "$cmd 'echo more >>f.txt && git add f.txt && git commit -qm second && git log --format=%s'" 2>&1)
	check "jftest: git add and commit in its view ($out)" test "$out" = "$(printf 'second\nfirst')"
	ju "'$F' --stop '$m'" >/dev/null 2>&1
	check "jftest: jailfs --stop stops its view" \
		test -n "$m" -a -z "$(awk -v m="$m" '$5 == m' /proc/self/mountinfo)"
	chmod "$old_fuse_mode" /dev/fuse
fi

tap_done
