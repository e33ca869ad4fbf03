#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Symlink targets in the system directories, against every symlink under
# /usr /bin /sbin /lib /lib64 of this machine (find -type l): a view accepts
# the absolute target P iff P, resolved on the host as the kernel does,
# stays below the system directories at every step and ends at a regular
# file (the expectation is computed by symtarget.py without jailfs).
#  - symlink(P) on a default mount (root), at audit level all (a deny
#    record each), on a default mount of jftest's (fusermount3), through
#    jailrun --root on a mount and jailrun --source: accepted as expected,
#    refused with EACCES otherwise; /usr/lib/ssl/private,
#    /usr/share/maven/conf and /usr/lib/python3.11/sitecustomize.py refused
#  - links to every P planted in the backing tree of a share view
#    (mnt-examples/share.ini): only the accepted ones are listed, and tar -h
#    over the view archives none of the others (nothing from /etc); a
#    --read-only view lists the same
#  - python3 -m venv in a view, and its python3 runs (default mount,
#    jailrun --source)
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
: "${JAILFS:?JAILFS not set}"
SRC=${JF_SRCDIR:?JF_SRCDIR not set}
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=tests/lib/lib-mount.sh
. "$here/../lib/lib-mount.sh"
# shellcheck source=tests/lib/lib-tap.sh
. "$here/../lib/lib-tap.sh"
require_root_fuse python3 tar jq
helper=$(realpath "$here/symtarget.py")

work_dir symtarget
# The helper where jftest can read it too.
cp "$helper" "$work/symtarget.py" && helper=$work/symtarget.py

# ---------------------------------------------------------------- the expectation
dirs=()
for d in /usr /bin /sbin /lib /lib64; do [ -e "$d" ] && dirs+=("$d"); done
find "${dirs[@]}" -type l -print0 2>/dev/null >"$work/list"
python3 "$helper" expect "$work/list" "$work/expect.json" || { echo "Bail out! expect"; exit 1; }
total=$(jq 'length' "$work/expect.json")
accepted=$(jq '[.[] | select(.)] | length' "$work/expect.json")
echo "# $total symlinks under ${dirs[*]}: $accepted to accept, $((total - accepted)) to refuse"
check "some targets are to be accepted and some refused" \
	test "$accepted" -gt 0 -a "$accepted" -lt "$total"
named=(/usr/lib/ssl/private /usr/share/maven/conf /usr/lib/python3.11/sitecustomize.py)
for p in "${named[@]}"; do
	[ -L "$p" ] || { echo "# $p: not a symlink on this machine"; continue; }
	check "expectation: $p is refused" \
		test "$(jq --arg p "$p" '.[$p]' "$work/expect.json")" = false
done

# judge RESULT WHO: every target accepted (0) iff expected, else EACCES
judge() {
	local bad_n
	bad_n=$(jq -n --slurpfile e "$work/expect.json" --slurpfile r "$1" '
		[$e[0] | to_entries[] | select((.value and $r[0][.key] != 0) or
			((.value | not) and $r[0][.key] != "EACCES"))] | length')
	echo "# $2: $(jq '[.[] | select(. == 0)] | length' "$1") accepted," \
		"$(jq '[.[] | select(. == "EACCES")] | length' "$1") refused (EACCES)," \
		"$bad_n not as expected"
	[ "$bad_n" = 0 ] || jq -n --slurpfile e "$work/expect.json" --slurpfile r "$1" '
		$e[0] | to_entries[] | select((.value and $r[0][.key] != 0) or
			((.value | not) and $r[0][.key] != "EACCES")) |
		"#   \(.key): expected \(.value), got \($r[0][.key])"' -r | head -20
	check "$2: symlink() accepts exactly the targets that stay in the system directories" \
		test "$bad_n" = 0
	for p in "${named[@]}"; do
		[ -L "$p" ] || continue
		check "$2: symlink() to $p is refused with EACCES" \
			test "$(jq -r --arg p "$p" '.[$p]' "$1")" = EACCES
	done
}

# --------------------------------------------------------- symlink() in a view
src=$work/src mnt=$work/mnt
mkdir -p "$src/links"
if mount_view "$mnt" "$src"; then
	python3 "$helper" create "$mnt/links" "$work/expect.json" >"$work/default.json"
	judge "$work/default.json" "default mount"
	check "default mount: every accepted link reads back as its target" \
		test "$(python3 "$helper" readback "$mnt/links" "$work/expect.json")" = 0
	/usr/bin/python3 -m venv "$mnt/venv" 2>"$work/venv.err"
	check "default mount: python3 -m venv in the view" test -L "$mnt/venv/bin/python3"
	check "default mount: the venv's python3 runs" \
		test "$("$mnt/venv/bin/python3" -c 'import sys; print(sys.prefix)')" = "$mnt/venv"
	umount_view "$mnt" || bad "default mount: unmount"
else
	bad "default mount: jailfs did not mount"
fi

# ----------------------------------- audit level all; jailrun --root on a mount
asrc=$work/asrc amnt=$work/amnt
mkdir -p "$asrc/links"
if mount_view "$amnt" --audit "$work/audit.jsonl" --audit-level all "$asrc"; then
	python3 "$helper" create "$amnt/links" "$work/expect.json" >"$work/audit.json"
	judge "$work/audit.json" "audit level all"
	umount_view "$amnt" || bad "audit level all: unmount"
	denied=$(jq -s '[.[] | select(.op == "symlink" and .decision == "deny")] | length' \
		"$work/audit.jsonl")
	check "audit level all: one deny record per refused symlink ($denied)" \
		test "$denied" = $((total - accepted))
else
	bad "audit level all: jailfs did not mount"
fi
rsrc=$work/rsrc rmnt=$work/rmnt
mkdir -p "$rsrc/links"
cp "$helper" "$work/expect.json" "$rsrc/"
printf 'python3 symtarget.py create links expect.json >result.json\n' >"$rsrc/create.sh"
if mount_view "$rmnt" "$rsrc"; then
	js=$(cd "$rsrc" && "$J" --root "$rmnt" --json --timeout 300 -- sh create.sh 2>"$work/jr.err")
	check "jailrun --root: the helper ran" test "$(jq -r .exit_code <<<"$js")" = 0
	judge "$rsrc/result.json" "jailrun --root"
	umount_view "$rmnt" || bad "jailrun --root: unmount"
else
	bad "jailrun --root: jailfs did not mount"
fi

# ------------------------------------------------ unprivileged (fusermount3)
if id jftest >/dev/null 2>&1; then
	usrc=$work/usrc umnt=$work/umnt
	mkdir -p "$usrc/links" "$umnt"
	chown -R jftest "$usrc" "$umnt"
	chmod 0666 /dev/fuse
	if su jftest -s /bin/sh -c "'$JAILFS' '$usrc' '$umnt'" &&
		for _ in $(seq 100); do mounted "$umnt" && break; sleep 0.05; done && mounted "$umnt"; then
		mounts+=("$umnt")
		su jftest -s /bin/sh -c "python3 '$helper' create '$umnt/links' '$work/expect.json'" \
			>"$work/unpriv.json"
		judge "$work/unpriv.json" "unprivileged mount"
		su jftest -s /bin/sh -c "fusermount3 -u '$umnt'" || bad "unprivileged: unmount"
	else
		bad "unprivileged: jailfs as jftest did not mount"
	fi
else
	bad "unprivileged: no jftest user (.ci/run creates it)"
fi

# ------------------------------------------------------------- jailrun --source
proj=$work/proj
mkdir -p "$proj/links"
cp "$helper" "$work/expect.json" "$proj/"
printf 'python3 symtarget.py create links expect.json >result.json\n' >"$proj/create.sh"
js=$(cd "$proj" && "$J" --source "$proj" --json --timeout 300 -- sh create.sh 2>"$work/jr.err")
check "jailrun --source: the helper ran" test "$(jq -r .exit_code <<<"$js")" = 0
judge "$proj/result.json" "jailrun --source"
printf '/usr/bin/python3 -m venv .venv && .venv/bin/python3 -c "print(6 * 7)"\n' >"$proj/venv.sh"
js=$(cd "$proj" && "$J" --source "$proj" --json --timeout 300 -- sh venv.sh 2>"$work/jr.err")
check "jailrun --source: python3 -m venv, and the venv's python3 runs" \
	eval '[ "$(jq -r .exit_code <<<"$js")" = 0 ] && [ "$(jq -r .stdout <<<"$js")" = 42 ]'

# ------------------------------------------------- planted links, a share view
# links/: a link to every path; some/: the refused ones and a few small
# accepted ones, for tar -h (all of them would be gigabytes of /usr).
share=$work/share smnt=$work/smnt
mkdir -p "$share/links" "$share/some"
printf 'readme\n' >"$share/README"
python3 "$helper" plant "$share/links" "$work/expect.json" || bad "planting links"
python3 "$helper" plant-some "$share/some" "$work/expect.json" | sed 's|^|some/|' |
	LC_ALL=C sort >"$work/want-some"
if mount_view "$smnt" --policy "$SRC/mnt-examples/share.ini" "$share"; then
	python3 "$helper" accepted "$work/expect.json" | LC_ALL=C sort >"$work/want"
	(cd "$smnt" && find links -mindepth 1 -maxdepth 1 -printf '%p\n') | LC_ALL=C sort >"$work/listed"
	echo "# share view lists $(wc -l <"$work/listed") of $total planted links," \
		"$(wc -l <"$work/want") expected"
	check "share view: exactly the accepted planted links are listed" \
		cmp -s "$work/want" "$work/listed"
	# A lookup by name (no listing first: a fresh mount's kernel knows none).
	umount_view "$smnt" && mount_view "$smnt" --policy "$SRC/mnt-examples/share.ini" "$share"
	found=$(python3 -c 'import os, sys; print(sum(os.path.lexists(os.path.join(sys.argv[1], str(i)))
		for i in range(int(sys.argv[2]))))' "$smnt/links" "$total")
	check "share view: a lookup finds exactly the accepted planted links ($found)" \
		test "$found" = "$accepted"
	# Streamed, never on disk, and bounded in time and bytes (symtarget.py).
	timeout 120 tar -h -C "$smnt" -cf - some 2>"$work/tar.err" |
		python3 "$helper" archive "$work/expect.json" >"$work/archive.json"
	jq -r '.names[]' "$work/archive.json" | grep -vx some | LC_ALL=C sort >"$work/archived"
	echo "# tar -h over some/: $(wc -l <"$work/archived") members," \
		"$(wc -l <"$work/want-some") accepted links planted"
	check "share view: tar -h archives the accepted links, each one file, nothing else" \
		cmp -s "$work/want-some" "$work/archived"
	hits=$(jq .etc_hits "$work/archive.json") etc_files=$(jq .etc_files "$work/archive.json")
	echo "# files of /etc behind refused links: $etc_files; their content archived: $hits"
	check "share view: tar -h archives nothing from /etc" \
		test "$hits" = 0 -a "$etc_files" -gt 0
	umount_view "$smnt" || bad "share view: unmount"
else
	bad "share view: jailfs did not mount"
fi
# The same planted links in a --read-only view: lookups judge them alike.
if mount_view "$smnt" --read-only "$share"; then
	(cd "$smnt" && find links -mindepth 1 -maxdepth 1 -printf '%p\n') | LC_ALL=C sort >"$work/listed-ro"
	check "--read-only view: exactly the accepted planted links are listed" \
		cmp -s "$work/want" "$work/listed-ro"
	umount_view "$smnt" || bad "--read-only view: unmount"
else
	bad "--read-only view: jailfs did not mount"
fi

tap_done
