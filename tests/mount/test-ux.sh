#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What a user sees around the views, on real mounts:
#  - the start-up line "N files tracked by git shown read-only" is said on
#    the first mount of a SOURCE, not on the next ones, again with -v and
#    again once it changes (another tracked file); the record is kept in
#    $XDG_STATE_HOME/jailfs, never in SOURCE; as root (plain, -o fast_open,
#    --read-only, audit level all), through jailrun --source, and as jftest
#    (fusermount3);
#  - jailfs --list names each live view (mountpoint, source, daemon pid,
#    mode, policy, audit log) in every mode, as root (all views) and as
#    jftest (only theirs); a view whose daemon died shows as stale;
#  - jailfs --stop MOUNTPOINT unmounts one and waits for its daemon, refuses
#    a view in use (still mounted) and another user's view, and clears a
#    stale one; user.jailfs.info cannot be set through the view;
#  - without --policy, SOURCE/.jailfs.ini applies, else the user's
#    $XDG_CONFIG_HOME/jailfs/policy.ini, else the built-in one (jailfs and
#    jailrun, --check names the file); a .jailfs.ini is read-only in every
#    view at every depth and cannot be created through one (every mode,
#    jailrun --source and --root, jftest); one owned by another user or
#    writable by others is refused, never silently skipped.
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
: "${JAILFS:?JAILFS not set}" "${JAILRUN:?JAILRUN not set}"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse git fusermount3 setpriv

work=$(mktemp -d /var/tmp/jf-ux.XXXXXX)
chmod 755 "$work"
cleanup() {
	unmount_all
	# root may not stat jftest's views (no allow_other): ask mountinfo only
	for m in "$work"/u/mnt "$work"/u/m2 "$work"/u/mp2 "$work"/defpol/mx; do
		mounted "$m" && umount -l "$m"
	done
	fuse_mode_back
	rm -rf "$work"
}
trap cleanup EXIT
fuse_for_users
export XDG_STATE_HOME=$work/state

# a repository whose tracked id_rsa the policy DENIES
mkrepo() {
	mkdir -p "$1" && (cd "$1" && git init -q && echo key >id_rsa && echo a >a.txt &&
		git add id_rsa a.txt &&
		git -c user.email=t@e -c user.name=t commit -qm init) ||
		{ echo "Bail out! git init $1"; exit 1; }
}
# said MNT OPTS...: mount, unmount; was the tracked line said on stderr?
said() {
	local m=$1 err
	shift
	err=$(mount_view "$m" "$@" 2>&1 >/dev/null) || { echo "mount failed: $err" >&2; return 2; }
	umount_view "$m"
	grep -q 'tracked by git shown read-only' <<<"$err"
}
# ---------------------------------------------------------------- the tracked line
n=0
for mode in plain fast_open read-only audit-all; do
	n=$((n + 1))
	repo=$work/r$n
	mkrepo "$repo"
	case $mode in
	plain) opts=() ;;
	fast_open) opts=(-o fast_open) ;;
	read-only) opts=(--read-only) ;;
	audit-all) opts=(--audit "$work/audit$n.jsonl" --audit-level all) ;;
	esac
	m=$work/mnt$n
	said "$m" "${opts[@]}" "$repo"
	check "$mode: first mount: the tracked line is said" [ $? -eq 0 ]
	said "$m" "${opts[@]}" "$repo"
	check "$mode: second mount: not said again" [ $? -eq 1 ]
	said "$m" -v "${opts[@]}" "$repo"
	check "$mode: with -v: said" [ $? -eq 0 ]
	said "$m" --verbose "${opts[@]}" "$repo"
	check "$mode: with --verbose: said" [ $? -eq 0 ]
	(cd "$repo" && echo k2 >.env && git add -f .env &&
		git -c user.email=t@e -c user.name=t commit -qm env)
	said "$m" "${opts[@]}" "$repo"
	check "$mode: a second tracked file: said again" [ $? -eq 0 ]
	said "$m" "${opts[@]}" "$repo"
	check "$mode: ... then not again" [ $? -eq 1 ]
	check "$mode: the record is not in SOURCE" \
		[ -z "$(git -C "$repo" status --porcelain --ignored)" ]
done
check "the record is under \$XDG_STATE_HOME/jailfs/tracked" \
	[ "$(find "$XDG_STATE_HOME/jailfs/tracked" -type f | wc -l)" -eq 4 ]

# jailrun --source: its one-shot view's daemon says it the first time only
mkrepo "$work/jr"
err1=$(cd "$work/jr" && "$JAILRUN" --source . -- true 2>&1)
err2=$(cd "$work/jr" && "$JAILRUN" --source . -- true 2>&1)
check "jailrun --source: first run: the tracked line is said" \
	grep -q 'tracked by git shown read-only' <<<"$err1"
check "jailrun --source: second run: not said ($err2)" [ -z "$err2" ]

# as jftest, through fusermount3, with its own state directory
u=$work/u
mkdir -p "$u" && chown jftest "$u"
setpriv --reuid=jftest --regid="$(id -g jftest)" --init-groups bash -c '
	cd "$1" && git init -q r && cd r && echo key >id_rsa && git add id_rsa &&
	git -c user.email=t@e -c user.name=t commit -qm init && mkdir -p "$1/mnt"' _ "$u"
cp "$JAILFS" "$u/jailfs" && chmod 755 "$u/jailfs"
asuser() {
	setpriv --reuid=jftest --regid="$(id -g jftest)" --init-groups \
		env HOME="$u" XDG_STATE_HOME="$u/state" "$@"
}
usaid() {
	local err
	err=$(asuser "$u/jailfs" "$@" "$u/r" "$u/mnt" 2>&1)
	for _ in $(seq 100); do mounted "$u/mnt" && break; sleep 0.05; done
	asuser fusermount3 -u "$u/mnt"
	for _ in $(seq 100); do mounted "$u/mnt" || break; sleep 0.05; done
	grep -q 'tracked by git shown read-only' <<<"$err"
}
usaid
check "jftest: first mount: said" [ $? -eq 0 ]
usaid
check "jftest: second mount: not said" [ $? -eq 1 ]
usaid -v
check "jftest: with -v: said" [ $? -eq 0 ]
check "jftest: the record is in jftest's state directory" \
	[ "$(stat -c %U "$u/state/jailfs/tracked")" = jftest ]

# ---------------------------------------------------------------- --list, --stop
L=$work/list
mkdir -p "$L/src" && echo x >"$L/src/f" && printf '[safe]\n*\n' >"$L/p.ini"
row() { "$JAILFS" --list | awk -F'\t' -v m="$1" '$1 == m'; }
field() { row "$1" | cut -f"$2"; }
n=0
# root's plain mount: zero-message opens; passthrough is -o nofast_open away,
# and a mount other users may enter (allow_other) keeps OPEN by default
for mode in plain nofast_open allow_other read-only audit-all; do
	n=$((n + 1))
	m=$L/mnt$n
	case $mode in
	plain) opts=() want=read-write,fast_open ;;
	nofast_open) opts=(-o nofast_open) want=read-write ;;
	allow_other) opts=(-o allow_other) want=read-write ;;
	read-only) opts=(--read-only) want=read-only,fast_open ;;
	audit-all)
		opts=(--audit "$L/a.jsonl" --audit-level all --policy "$L/p.ini")
		want=read-write,fast_open
		;;
	esac
	mount_view "$m" "${opts[@]}" "$L/src" || { bad "$mode: did not mount"; continue; }
	pid=$(field "$m" 3)
	check "$mode: --list names the view and its source" [ "$(field "$m" 2)" = "$L/src" ]
	check "$mode: --list names the daemon's pid ($pid)" \
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = jailfs ]
	got=$(field "$m" 4)
	check "$mode: --list mode '$got' is $want (passthrough where the kernel has it)" \
		eval '[ "$got" = "$want" ] || { [ "$want" = read-write ] && [ "$got" = "$want,passthrough" ]; }'
	case $mode in
	audit-all)
		check "$mode: --list names the policy file" [ "$(field "$m" 5)" = "$L/p.ini" ]
		check "$mode: --list names the audit log" [ "$(field "$m" 6)" = "all $L/a.jsonl" ]
		;;
	*)
		check "$mode: --list: built-in policy, no audit" \
			[ "$(field "$m" 5) $(field "$m" 6)" = "built-in none" ]
		;;
	esac
	out=$("$JAILFS" --stop "$m")
	check "$mode: --stop: exit 0, says so ($out)" [ $? -eq 0 ]
	check "$mode: --stop: unmounted" eval '! mounted "$m"'
	# exited: gone, or a zombie until init reaps it
	check "$mode: --stop: the daemon has exited" \
		eval '! grep -qE "^[0-9]+ \(jailfs\) [^ZX]" "/proc/$pid/stat" 2>/dev/null'
	check "$mode: --list no longer names it" [ -z "$(row "$m")" ]
done
# in use: refused, still mounted
m=$L/busy
mount_view "$m" "$L/src" || bad "busy: did not mount"
(cd "$m" && sleep 30) &
holder=$!
sleep 0.2
err=$("$JAILFS" --stop "$m" 2>&1)
# shellcheck disable=SC2034 # read by the eval below
rc=$?
check "in use: --stop fails and says so ($err)" eval '[ $rc -eq 1 ] && grep -q "in use" <<<"$err"'
check "in use: still mounted" mounted "$m"
kill "$holder"
wait "$holder" 2>/dev/null
check "then: --stop works" "$JAILFS" --stop "$m"
# user.jailfs.info is the daemon's, never set through the view
m=$L/xattr
mount_view "$m" "$L/src" || bad "xattr: did not mount"
check "user.jailfs.info is read on the root" eval 'getfattr --only-values -n user.jailfs.info "$m" | grep -q "^pid "'
check "user.jailfs.info cannot be set" eval '! setfattr -n user.jailfs.info -v x "$m" 2>/dev/null'
# a dead daemon: stale, and --stop clears it
pid=$(field "$m" 3)
kill -9 "$pid"
sleep 0.2
check "stale: --list says so" eval 'field "$m" 4 | grep -q stale'
check "stale: --stop unmounts it" "$JAILFS" --stop "$m"
check "stale: gone" eval '! mounted "$m"'
check "--stop of a directory that is no jailfs mount: exit 1" eval '! "$JAILFS" --stop "$L/src" 2>/dev/null'
# jftest: sees and stops only its own views
mkdir -p "$u/src2" "$u/m2" && chown jftest "$u/src2" "$u/m2"
asuser "$u/jailfs" "$u/src2" "$u/m2"
for _ in $(seq 100); do mounted "$u/m2" && break; sleep 0.05; done
m=$L/root-view
mount_view "$m" "$L/src" || bad "root view: did not mount"
# shellcheck disable=SC2034 # read by the evals below
ulist=$(asuser "$u/jailfs" --list)
check "jftest: --list names its view and source" \
	eval '[ "$(awk -F"\t" -v m="$u/m2" "\$1 == m { print \$2 }" <<<"$ulist")" = "$u/src2" ]'
check "jftest: --list names its view with a pid" \
	eval '[ -n "$(awk -F"\t" -v m="$u/m2" "\$1 == m { print \$3 }" <<<"$ulist" | grep -E "^[0-9]+$")" ]'
check "jftest: --list does not name root's view" eval '! grep -qF "$m" <<<"$ulist"'
check "root: --list names jftest's view" eval '[ -n "$(row "$u/m2")" ]'
check "jftest: --stop of root's view refused" eval '! asuser "$u/jailfs" --stop "$m" 2>/dev/null'
check "... still mounted" mounted "$m"
check "jftest: --stop of its own view" asuser "$u/jailfs" --stop "$u/m2"
check "... unmounted" eval '! mounted "$u/m2"'
"$JAILFS" --stop "$m" >/dev/null

# ---------------------------------------------------------------- default policy
D=$work/defpol
P=$D/proj
Q=$D/plain
mkdir -p "$P/sub" "$Q/sub" "$D/cfg/jailfs"
echo s >"$P/secret.txt" && echo a >"$P/a.txt" && echo u >"$Q/user-secret.txt" && echo a >"$Q/a.txt"
printf '[denied]\nsecret.txt\n[options]\ndefault = safe\n' >"$P/.jailfs.ini"
printf '[options]\ndefault = safe\n[denied]\nuser-secret.txt\n' >"$D/cfg/jailfs/policy.ini"
chmod 644 "$P/.jailfs.ini" "$D/cfg/jailfs/policy.ini"
orig=$(sha256sum <"$P/.jailfs.ini")
export XDG_CONFIG_HOME=$D/cfg
out=$("$JAILFS" --check -s "$P" secret.txt 2>&1)
check "--check: the project's file decides (DENIED by .jailfs.ini:2)" \
	grep -qP '^DENIED\t\S*\.jailfs\.ini:2\tsecret.txt$' <<<"$out"
check "--check names the project's file" grep -qF "policy: $P/.jailfs.ini (the project's" <<<"$out"
out=$("$JAILFS" --check -s "$Q" user-secret.txt 2>&1)
check "--check: without a project file the user's decides" \
	grep -qP '^DENIED\t\S*policy\.ini:4\tuser-secret.txt$' <<<"$out"
check "--check names the user's file" grep -qF "policy: $D/cfg/jailfs/policy.ini (the user's" <<<"$out"
out=$(XDG_CONFIG_HOME=$D/none HOME=$D/none "$JAILFS" --check -s "$Q" user-secret.txt 2>&1)
check "--check: neither: the built-in policy (SAFE)" grep -qP '^SAFE\tdefault\tuser-secret.txt$' <<<"$out"
check "--check .jailfs.ini: RESTRICTED by policy-file" \
	eval '"$JAILFS" --check -s "$Q" .jailfs.ini sub/.jailfs.ini 2>/dev/null | grep -cP "^RESTRICTED\tpolicy-file\t" | grep -qx 2'
# wr FILE: appending to FILE through a view fails, and nothing on disk changes
n=0
for mode in plain fast_open read-only audit-all; do
	n=$((n + 1))
	case $mode in
	plain) opts=() ;;
	fast_open) opts=(-o fast_open) ;;
	read-only) opts=(--read-only) ;;
	audit-all) opts=(--audit "$D/a$n.jsonl" --audit-level all) ;;
	esac
	m=$D/mp$n
	mount_view "$m" "${opts[@]}" "$P" || { bad "$mode: did not mount"; continue; }
	check "$mode: the project's policy applies (secret.txt hidden)" [ ! -e "$m/secret.txt" ]
	check "$mode: --list names the project's file" [ "$(field "$m" 5)" = "$P/.jailfs.ini" ]
	check "$mode: .jailfs.ini is readable" cmp -s "$m/.jailfs.ini" "$P/.jailfs.ini"
	check "$mode: .jailfs.ini cannot be changed" eval '! { echo "[safe]" >>"$m/.jailfs.ini"; } 2>/dev/null'
	check "$mode: ... nor removed or renamed away" \
		eval '! rm -f "$m/.jailfs.ini" 2>/dev/null && ! mv "$m/.jailfs.ini" "$m/x" 2>/dev/null'
	check "$mode: the backing file is unchanged" [ "$(sha256sum <"$P/.jailfs.ini")" = "$orig" ]
	umount_view "$m"
	m=$D/mq$n
	mount_view "$m" "${opts[@]}" "$Q" || { bad "$mode: did not mount"; continue; }
	check "$mode: the user's policy applies (user-secret.txt hidden)" [ ! -e "$m/user-secret.txt" ]
	if [ $mode != read-only ]; then
		check "$mode: a file can be written (a.txt)" eval 'echo b >>"$m/a.txt"'
	fi
	check "$mode: no .jailfs.ini can be created" eval '! { echo x >"$m/.jailfs.ini"; } 2>/dev/null'
	check "$mode: ... nor in a subdirectory" eval '! { echo x >"$m/sub/.jailfs.ini"; } 2>/dev/null'
	check "$mode: ... nor renamed into place" \
		eval '! mv "$m/a.txt" "$m/sub/.jailfs.ini" 2>/dev/null'
	check "$mode: nothing was created" [ ! -e "$Q/.jailfs.ini" ] && [ ! -e "$Q/sub/.jailfs.ini" ]
	umount_view "$m"
done
# jailrun: the same file for its one-shot view, and --check names it
out=$(cd "$P" && "$JAILRUN" --no-git-root --check -- true 2>&1)
check "jailrun --check names the project's file" grep -qF "policy: $P/.jailfs.ini (the project's" <<<"$out"
out=$("$JAILRUN" --source "$P" --no-git-root -- cat secret.txt 2>&1)
check "jailrun --source: the project's policy hides secret.txt" eval '! grep -qx s <<<"$out"'
"$JAILRUN" --source "$P" --no-git-root --shell -- 'echo "[safe]" >> .jailfs.ini' >/dev/null 2>&1
check "jailrun --source: .jailfs.ini cannot be changed" [ "$(sha256sum <"$P/.jailfs.ini")" = "$orig" ]
"$JAILRUN" --source "$Q" --no-git-root --shell -- 'echo x > sub/.jailfs.ini' >/dev/null 2>&1
check "jailrun --source: no .jailfs.ini can be created" [ ! -e "$Q/sub/.jailfs.ini" ]
m=$D/root
mount_view "$m" "$Q" || bad "root view: did not mount"
(cd "$Q" && "$JAILRUN" --root "$m" --shell -- 'echo x > .jailfs.ini') >/dev/null 2>&1
check "jailrun --root: no .jailfs.ini can be created" [ ! -e "$Q/.jailfs.ini" ]
umount_view "$m"
# a file someone else controls is refused, loudly
chown jftest "$P/.jailfs.ini"
mount_view "$D/mx" "$P" 2>"$D/err"
err=$(cat "$D/err")
check "owned by another user: jailfs refuses ($err)" eval '! mounted "$D/mx" && grep -q "owned by uid" <<<"$err"'
out=$("$JAILRUN" --source "$P" --no-git-root -- true 2>&1)
check "owned by another user: jailrun refuses" grep -q "owned by uid" <<<"$out"
chown root "$P/.jailfs.ini" && chmod 666 "$P/.jailfs.ini"
mount_view "$D/mx" "$P" 2>"$D/err"
err=$(cat "$D/err")
check "writable by others: jailfs refuses ($err)" eval '! mounted "$D/mx" && grep -q "writable by others" <<<"$err"'
chmod 644 "$P/.jailfs.ini"
# jftest: its own project's file, through fusermount3
mkdir -p "$u/p2" "$u/mp2" && echo s >"$u/p2/secret.txt" && printf '[denied]\nsecret.txt\n[options]\ndefault = safe\n' >"$u/p2/.jailfs.ini"
chown -R jftest "$u/p2" "$u/mp2" && chmod 644 "$u/p2/.jailfs.ini"
asuser "$u/jailfs" "$u/p2" "$u/mp2"
for _ in $(seq 100); do mounted "$u/mp2" && break; sleep 0.05; done
check "jftest: its project's policy applies" asuser test ! -e "$u/mp2/secret.txt"
check "jftest: its .jailfs.ini cannot be changed" \
	eval '! asuser sh -c "echo x >> \"$u/mp2/.jailfs.ini\"" 2>/dev/null'
asuser fusermount3 -u "$u/mp2"

tap_done
