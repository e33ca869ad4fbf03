#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What a user sees around the views, on real mounts:
#  - the start-up line "N files tracked by git shown read-only" is said on
#    the first mount of a SOURCE, not on the next ones, again with -v and
#    again once it changes (another tracked file); the record is kept in
#    $XDG_STATE_HOME/jailfs, never in SOURCE; as root (plain, -o fast_open,
#    --read-only, audit level all), through jailrun --source, and as jftest
#    (fusermount3).
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
	for m in "$work"/u/mnt*; do
		[ -d "$m" ] && mounted "$m" && umount -l "$m"
	done
	rm -rf "$work"
}
trap cleanup EXIT
export XDG_STATE_HOME=$work/state

# a repository whose tracked id_rsa the policy DENIES
mkrepo() {
	mkdir -p "$1" && (cd "$1" && git init -q && echo key >id_rsa && echo a >a.txt &&
		git add id_rsa a.txt &&
		git -c user.email=t@e -c user.name=t commit -qm init) ||
		{ echo "FAIL: git init $1"; exit 1; }
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

tap_done
