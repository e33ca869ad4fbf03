#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Symlinks to the standard device nodes (/dev/null, /dev/zero, /dev/urandom,
# /dev/random, /dev/tty, /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N):
# autoconf's probe `ln -s /dev/null conftest.sym && test -h conftest.sym`
# succeeds, and symlink() to each of those names is accepted, while
# /dev/sda, /dev/mem, /dev/shm/x and other spellings are refused (EACCES):
#  - on a default mount (root), at audit level all (a deny record per
#    refusal), on jftest's mount (fusermount3), through jailrun --root on a
#    mount and through jailrun --source
#  - links planted in SOURCE are listed exactly for the accepted names, in a
#    default and in a --read-only view
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
: "${JAILFS:?JAILFS not set}"
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=tests/lib/lib-mount.sh
. "$here/../lib/lib-mount.sh"
# shellcheck source=tests/lib/lib-tap.sh
. "$here/../lib/lib-tap.sh"
require_root_fuse

good=(/dev/null /dev/zero /dev/urandom /dev/random /dev/tty /dev/stdin /dev/stdout /dev/stderr
	/dev/fd/0 /dev/fd/1 /dev/fd/2 /dev/fd/9)
refused=(/dev/sda /dev/mem /dev/shm/x /dev/shm /dev/full /dev/fd /dev/fd/x /dev/fd/3/x
	/dev//null /dev/./null /dev/null/x)

work_dir devlinks

# The probe and every name of file $2 (jailrun's guardrails refuse paths
# outside the jail in argv), in directory $1; one line per name: "NAME ok"
# or "NAME refused", as a shell inside or outside a jail sees it.
cat >"$work/probe.sh" <<'SH'
list=$(cat "$2") || exit 1
cd "$1" || exit 1
if ln -s /dev/null conftest.sym && test -h conftest.sym &&
	[ "$(readlink conftest.sym)" = /dev/null ] && [ -z "$(cat conftest.sym)" ]; then
	echo "probe ok"
else
	echo "probe refused"
fi
i=0
for t in $list; do
	i=$((i + 1))
	if ln -s "$t" "l$i" 2>/dev/null && [ "$(readlink "l$i")" = "$t" ]; then
		echo "$t ok"
	else
		echo "$t refused"
	fi
done
SH
want() {
	echo "probe ok"
	for t in "${good[@]}"; do echo "$t ok"; done
	for t in "${refused[@]}"; do echo "$t refused"; done
}
want >"$work/want"
printf '%s\n' "${good[@]}" "${refused[@]}" >"$work/targets"
# judge OUTPUT WHO
judge() {
	diff "$work/want" "$1" | sed 's/^/#   /'
	check "$2: ln -s /dev/null conftest.sym && test -h conftest.sym" grep -qx "probe ok" "$1"
	check "$2: every standard device node accepted, /dev/sda /dev/mem /dev/shm/x ... refused" \
		cmp -s "$work/want" "$1"
}

# ------------------------------------------------------------ default mount
src=$work/src mnt=$work/mnt
mkdir -p "$src/d"
if mount_view "$mnt" "$src"; then
	sh "$work/probe.sh" "$mnt/d" "$work/targets" >"$work/default.out"
	judge "$work/default.out" "default mount"
	check "default mount: the link is in SOURCE as made" \
		test "$(readlink "$src/d/conftest.sym")" = /dev/null
	umount_view "$mnt" || bad "default mount: unmount"
else
	bad "default mount: jailfs did not mount"
fi

# ------------------------------------------------------------ audit level all
asrc=$work/asrc amnt=$work/amnt
mkdir -p "$asrc/d"
if mount_view "$amnt" --audit "$work/audit.jsonl" --audit-level all "$asrc"; then
	sh "$work/probe.sh" "$amnt/d" "$work/targets" >"$work/audit.out"
	judge "$work/audit.out" "audit level all"
	umount_view "$amnt" || bad "audit level all: unmount"
	denied=$(jq -s '[.[] | select(.op == "symlink" and .decision == "deny")] | length' \
		"$work/audit.jsonl")
	check "audit level all: one deny record per refused target ($denied)" \
		test "$denied" = "${#refused[@]}"
else
	bad "audit level all: jailfs did not mount"
fi

# ---------------------------------------------------- jailrun --root on a mount
rsrc=$work/rsrc rmnt=$work/rmnt
mkdir -p "$rsrc/d"
cp "$work/probe.sh" "$work/targets" "$rsrc/"
if mount_view "$rmnt" "$rsrc"; then
	(cd "$rsrc" && "$J" --root "$rmnt" -- sh probe.sh d targets) \
		>"$work/root.out" 2>"$work/root.err"
	judge "$work/root.out" "jailrun --root"
	umount_view "$rmnt" || bad "jailrun --root: unmount"
else
	bad "jailrun --root: jailfs did not mount"
fi

# ------------------------------------------------------------ jailrun --source
proj=$work/proj
mkdir -p "$proj/d"
cp "$work/probe.sh" "$work/targets" "$proj/"
(cd "$proj" && "$J" --source "$proj" -- sh probe.sh d targets) \
	>"$work/source.out" 2>"$work/source.err"
judge "$work/source.out" "jailrun --source"

# ------------------------------------------------ unprivileged (fusermount3)
if id jftest >/dev/null 2>&1; then
	usrc=$work/usrc umnt=$work/umnt
	mkdir -p "$usrc/d" "$umnt"
	chown -R jftest "$usrc" "$umnt"
	chmod 0666 /dev/fuse
	if su jftest -s /bin/sh -c "'$JAILFS' '$usrc' '$umnt'" &&
		for _ in $(seq 100); do mounted "$umnt" && break; sleep 0.05; done && mounted "$umnt"; then
		mounts+=("$umnt")
		# shellcheck disable=SC2016
		su jftest -s /bin/sh -c 'sh "$0" "$@"' "$work/probe.sh" "$umnt/d" \
			"$work/targets" >"$work/unpriv.out"
		judge "$work/unpriv.out" "unprivileged mount"
		su jftest -s /bin/sh -c "fusermount3 -u '$umnt'" || bad "unprivileged: unmount"
	else
		bad "unprivileged: jailfs as jftest did not mount"
	fi
else
	bad "unprivileged: no jftest user (.ci/run creates it)"
fi

# ------------------------------------ planted in SOURCE: default, --read-only
psrc=$work/psrc pmnt=$work/pmnt
mkdir -p "$psrc"
i=0
for t in "${good[@]}" "${refused[@]}"; do
	i=$((i + 1))
	ln -s "$t" "$psrc/l$i"
done
for t in "${good[@]}"; do echo "$t"; done | LC_ALL=C sort >"$work/want-planted"
for mode in default --read-only; do
	opt=()
	[ "$mode" = default ] || opt=("$mode")
	if mount_view "$pmnt" "${opt[@]}" "$psrc"; then
		for l in "$pmnt"/l*; do readlink "$l"; done | LC_ALL=C sort >"$work/listed"
		check "$mode view: planted links listed exactly for the standard device nodes" \
			cmp -s "$work/want-planted" "$work/listed"
		umount_view "$pmnt" || bad "$mode view: unmount"
	else
		bad "$mode view: jailfs did not mount"
	fi
done

tap_done
