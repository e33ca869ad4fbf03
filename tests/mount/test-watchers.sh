#!/bin/bash
# SPDX-License-Identifier: MIT
#
# File watchers in the jail (README, "File watchers"; jailrun(1)). In each
# mode (jailrun --source; jailrun --root on root's default mount,
# passthrough; on a -o fast_open mount; on a mount with an audit log at
# level all), a watcher runs in the jail (watcher.py) while the host, then
# (--root modes) another jailrun session on the same mount, creates,
# modifies and deletes files:
#  - an inotify watcher sees no host change (the kernel makes no fsnotify
#    event for a FUSE daemon's notifications) and every change of the other
#    session on the same mount (CREATE, MODIFY, DELETE)
#  - a polling watcher (stat and readdir every 100 ms) sees every host
#    change, each within a second
# Needs root, /dev/fuse and python3; fails (never skips) without them when
# CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
: "${JAILFS:?JAILFS not set}"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse python3
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"

T=$(mktemp -d /var/tmp/jf-watchers.XXXXXX)
cleanup() {
	unmount_all
	rm -rf "$T"
}
trap cleanup EXIT

fresh() {
	n=$((n + 1))
	src=$T/src-$1-$n
	mkdir -p "$src/w"
	cp "$(dirname "${BASH_SOURCE[0]}")/watcher.py" "$src/"
	echo old >"$src/w/edit"
	echo bye >"$src/w/gone"
	mnt=$T/mnt-$1-$n
	case $1 in
	root) mount_view "$mnt" "$src" || bad "$1: mount $mnt" ;;
	root-fast) mount_view "$mnt" -o fast_open "$src" || bad "$1: mount $mnt" ;;
	root-audit)
		mount_view "$mnt" --audit "$T/audit-$n.jsonl" --audit-level all "$src" ||
			bad "$1: mount $mnt"
		;;
	esac
}

# start MODE KIND: the watcher in the jail, in the background, output in $log
start() {
	log=$T/log-$1-$2-$n
	if [ "$1" = source ]; then
		(cd "$src" && exec "$J" --source "$src" -- python3 watcher.py "$2" w 6) >"$log" 2>&1 &
	else
		"$J" --root "$mnt" -- python3 watcher.py "$2" w 6 >"$log" 2>&1 &
	fi
	wpid=$!
	for _ in $(seq 100); do grep -q '^ready' "$log" && return 0; sleep 0.05; done
	bad "$1: the $2 watcher did not start"
	sed 's/^/# /' "$log"
}

# host_changes: create, modify, delete on the backing tree
host_changes() {
	echo new >"$src/w/created"
	echo edited on the host >"$src/w/edit"
	rm "$src/w/gone"
}

# seen_within_1s NAME: the watcher printed "changed NAME" within a second
seen_within_1s() {
	for _ in $(seq 20); do grep -qx "changed $1" "$log" && return 0; sleep 0.05; done
	return 1
}

n=0
for mode in source root root-fast root-audit; do
	fresh $mode
	start $mode poll
	host_changes
	for f in created edit gone; do
		check "$mode: a polling watcher sees the host's change of $f within 1 s" \
			seen_within_1s $f
	done
	wait $wpid

	fresh $mode
	start $mode inotify
	host_changes
	sleep 1
	check "$mode: an inotify watcher sees none of the host's changes" \
		test "$(grep -c '^event' "$log")" = 0
	if [ $mode != source ]; then
		"$J" --root "$mnt" --shell -- 'echo v >w/other && echo more >>w/edit && unlink w/created' \
			>/dev/null 2>&1 || bad "$mode: the other session failed"
		sleep 1
		check "$mode: it sees the other session's CREATE" grep -q '^event CREATE other' "$log"
		check "$mode: its MODIFY" grep -q '^event MODIFY edit' "$log"
		check "$mode: its DELETE" grep -q '^event DELETE created' "$log"
	fi
	wait $wpid
	[ $mode = source ] || umount_view "$mnt" || bad "$mode: unmount $mnt"
done
tap_done
