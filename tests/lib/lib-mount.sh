# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Shell helpers for the mount-suite scripts; source it, do not run it.
# Needs JAILFS set. Every mount made by mount_view is appended to the
# caller's `mounts` array, which unmount_all (call it from an EXIT trap)
# unmounts.

mounts=()

# mounted MNT: is MNT a mountpoint in this mount namespace? Field 5 of
# mountinfo is the mountpoint (proc(5)).
mounted() { awk -v m="$1" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }

# mount_view MNT [jailfs options...] SOURCE: mount with $JAILFS, wait up to
# 5 s for the mount to show. Returns 0 when mounted, 1 otherwise.
mount_view() {
	local m=$1 _
	shift
	mkdir -p "$m"
	mounts+=("$m")
	"$JAILFS" "$@" "$m" || return 1
	for _ in $(seq 100); do mounted "$m" && return 0; sleep 0.05; done
	return 1
}

# umount_view MNT: unmount and wait up to 5 s for it to go. Returns 0 or 1.
umount_view() {
	local _
	fusermount3 -u "$1" 2>/dev/null || umount "$1"
	for _ in $(seq 100); do mounted "$1" || return 0; sleep 0.05; done
	return 1
}

# unmount_all: lazily unmount whatever of `mounts` is still mounted.
unmount_all() {
	local m
	for m in "${mounts[@]}"; do
		mounted "$m" && { fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; }
	done
	return 0
}

# tree_sum DIR: one hash of the metadata of every entry (a create, delete,
# write, chmod or utimens changes it; atime is left out, so reads do not).
tree_sum() {
	(cd "$1" && find . -printf '%p %y %s %m %T@ %C@ %l\n' | LC_ALL=C sort | sha256sum)
}
