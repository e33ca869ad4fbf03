#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Hard-linked files in real work (docs/threat-model.md, invariant 6). In
# each mode (jailrun --source, one-shot -o fast_open view; jailrun --root on
# a -o nofast_open mount, passthrough; on root's default mount, zero-message
# opens; on a mount with an audit log at level all; on a --read-only mount, where the kernel
# refuses every write and only what is hidden is checked):
#  - clone-out: cloned on the host with git clone --local from a repository
#    outside SOURCE, so its packs have a name the daemon never sees: their
#    content stays read-only, and the refusal, the hint, --check and --scan
#    all name rule hardlink:outside; git gc in the jail still succeeds
#    (removing or renaming that name changes nothing outside) and leaves
#    one pack, not two
#  - clone-in: cloned on the host from inner, both in SOURCE, before the
#    mount: its packs are SAFE, git gc works; clone-late: the same clone made
#    once the view serves (the start-up index never saw its names): git gc
#    works
#  - the rename of a directory holding a file hard-linked in the jail (the
#    pattern of rustc's incremental session directories) and of one holding
#    a file linked on the host with both names in SOURCE
#  - notes.txt, a host link to .env: hidden in the jail, DENIED with rule
#    hardlink:denied for --check and --scan
#  - cargo build (offline, incremental) twice with an edit between: rustc
#    finalizes its session directories (no "-working" one left, no warning)
# Needs root, /dev/fuse, git and cargo; fails (never skips) without them
# when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
: "${JAILFS:?JAILFS not set}"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse git cargo
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"

# Not under /tmp: the jail's /tmp is its own.
T=$(mktemp -d /var/tmp/jf-hardlinks.XXXXXX)
cleanup() {
	unmount_all
	rm -rf "$T"
}
trap cleanup EXIT
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid

# origin: outside every SOURCE, packed
(
	set -e
	git init -q -b main "$T/origin"
	cd "$T/origin"
	for i in 1 2 3; do
		seq "$i" 2000 >"f$i"
		git add "f$i"
		git commit -q -m "c$i"
	done
	git gc -q
) || { echo "Bail out! cannot set up the origin"; exit 1; }

cargo_jail "$(command -v cargo)" "$T/run.ini"

# fresh MODE: a new project as $src (mounted at $mnt for the --root modes)
fresh() {
	n=$((n + 1))
	src=$T/src-$1-$n
	mkdir -p "$src/inc/s-0" "$src/host/d"
	git clone -q --local "$T/origin" "$src/clone-out"
	git clone -q --no-hardlinks "$T/origin" "$src/inner"
	git clone -q --local "$src/inner" "$src/clone-in"
	echo SECRET=1 >"$src/.env"
	ln "$src/.env" "$src/notes.txt"
	echo data >"$src/host/d/a"
	ln "$src/host/d/a" "$src/host/d/b"
	echo obj >"$src/inc/s-0/dep-graph.bin"
	# rename(2) itself: mv(1) would copy on EXDEV
	printf 'import os, sys\nos.rename(sys.argv[1], sys.argv[2])\n' >"$src/ren.py"
	mkdir -p "$src/crate/src"
	printf '[package]\nname = "crate"\nversion = "0.1.0"\nedition = "2021"\n' \
		>"$src/crate/Cargo.toml"
	printf '[profile.dev]\nincremental = true\n' >>"$src/crate/Cargo.toml"
	echo 'fn main() { println!("one"); }' >"$src/crate/src/main.rs"
	mnt=$T/mnt-$1-$n
	case $1 in
	root) mount_view "$mnt" -o nofast_open "$src" || bad "$1: mount $mnt" ;;
	root-fast) mount_view "$mnt" "$src" || bad "$1: mount $mnt" ;;
	read-only) mount_view "$mnt" --read-only "$src" || bad "$1: mount $mnt" ;;
	root-audit)
		mount_view "$mnt" --audit "$T/audit-$n.jsonl" --audit-level all "$src" ||
			bad "$1: mount $mnt"
		;;
	esac
}

# jr MODE SHELL-COMMAND [JAILRUN-OPTION...]: run the command in the jail
# over $src; output in $out, status in $rc
jr() {
	local m=$1 c=$2
	shift 2
	case $m in
	source) out=$(cd "$src" && "$J" --source "$src" "$@" --shell -- "$c" 2>&1) ;;
	*) out=$("$J" --root "$mnt" "$@" --shell -- "$c" 2>&1) ;;
	esac
	rc=$?
}

npacks() { find "$1/.git/objects/pack" -name '*.pack' | wc -l; }

n=0
out=
for mode in source root root-fast root-audit read-only; do
	fresh $mode
	pack=$(cd "$src" && find clone-out/.git/objects/pack -name '*.pack' | head -n1)

	# --check and --scan say what the view does, with the same rule
	out=$("$JAILFS" --check --source "$src" "$pack")
	line=$out
	jcheck "$mode: --check names hardlink:outside for a pack linked outside SOURCE" \
		grep -q "^RESTRICTED	hardlink:outside	$pack\$" <<<"$line"
	out=$("$JAILFS" --check --source "$src" notes.txt)
	line=$out
	jcheck "$mode: --check names hardlink:denied for a link to .env" \
		grep -q "^DENIED	hardlink:denied	notes.txt\$" <<<"$line"
	scan=$("$JAILFS" --scan "$src" 2>&1)
	out=$(grep -e notes.txt -e host/d/a -e "$pack" <<<"$scan")
	jcheck "$mode: --scan agrees on the pack" \
		grep -q "^RESTRICTED	hardlink:outside	$pack\$" <<<"$scan"
	jcheck "$mode: --scan agrees on notes.txt" \
		grep -q "^DENIED	hardlink:denied	notes.txt\$" <<<"$scan"
	jcheck "$mode: --scan leaves host/d/a out (both names in SOURCE, SAFE)" \
		test "${scan#*host/d/}" = "$scan"

	# the link to a secret stays hidden
	jr $mode 'cat notes.txt'
	jcheck "$mode: a link to .env is hidden" test "$rc" -ne 0 -a "${out#*SECRET}" = "$out"

	if [ $mode = read-only ]; then
		jr $mode "chmod u+w '$pack'"
		jcheck "$mode: chmod of a pack is refused" test "$rc" -ne 0
		done_with $mode
		continue
	fi

	# the pack's content is read-only, and the refusal says why
	# (packs are 0444: the write is chmod's, on the inode the origin shares)
	jr $mode "chmod u+w '$pack'"
	jcheck "$mode: chmod of a pack linked outside SOURCE is refused" test "$rc" -ne 0
	jcheck "$mode: its mode is kept" test "$(stat -c %a "$src/$pack")" = 444
	# (jailrun --root lists refusals from the mount's audit log)
	if [ $mode = source ] || [ $mode = root-audit ]; then
		jcheck "$mode: the refusal names hardlink:outside" \
			grep -q "chmod $pack: EROFS (RESTRICTED, hardlink:outside)" <<<"$out"
		jcheck "$mode: the hint names the other name of the file" \
			grep -q 'hint: .*shares its content with another name' <<<"$out"
		jcheck "$mode: the hint does not blame a read-only view" \
			test "${out#*a --read-only view}" = "$out"
	fi

	before=$(du -sk "$src/clone-out/.git" | cut -f1)
	jr $mode 'git -C clone-out gc -q && git -C clone-out fsck >/dev/null'
	jcheck "$mode: git gc of a clone linked outside SOURCE" test "$rc" = 0
	after=$(du -sk "$src/clone-out/.git" | cut -f1)
	jcheck "$mode: one pack after gc ($(npacks "$src/clone-out"))" \
		test "$(npacks "$src/clone-out")" = 1
	jcheck "$mode: .git does not double ($before -> $after KiB)" test "$after" -lt $((before * 3 / 2))
	check "$mode: the origin outside SOURCE is intact" git -C "$T/origin" fsck --no-progress

	jr $mode 'git -C clone-in gc -q && git -C clone-in fsck >/dev/null'
	jcheck "$mode: git gc of a clone linked inside SOURCE" test "$rc" = 0
	jcheck "$mode: one pack in clone-in" test "$(npacks "$src/clone-in")" = 1
	git clone -q --no-hardlinks "$T/origin" "$src/inner2"
	git clone -q --local "$src/inner2" "$src/clone-late"
	jr $mode 'git -C clone-late gc -q && git -C clone-late fsck >/dev/null'
	jcheck "$mode: git gc of a clone made on the host while the view serves" test "$rc" = 0
	jcheck "$mode: one pack in clone-late" test "$(npacks "$src/clone-late")" = 1

	# rustc: link from the last session, then rename the session directory
	jr $mode 'mkdir inc/s-1-working && ln inc/s-0/dep-graph.bin inc/s-1-working/ &&
		python3 ren.py inc/s-1-working inc/s-1-final &&
		echo more >>inc/s-1-final/dep-graph.bin'
	jcheck "$mode: mv of a directory holding a file linked in the jail" test "$rc" = 0
	jcheck "$mode: the session directory moved" test -f "$src/inc/s-1-final/dep-graph.bin"
	jr $mode 'cd crate && cargo build --offline &&
		echo "fn main() { println!(\"two\"); }" >src/main.rs &&
		cargo build --offline && ./target/debug/crate' "${cargo_env[@]}"
	jcheck "$mode: cargo build, incremental, twice" test "$rc" = 0 -a "${out%two}" != "$out"
	jcheck "$mode: rustc finalized its session directories" \
		test "${out#*error finalizing incremental}" = "$out" -a \
		-z "$(find "$src/crate/target/debug/incremental" -name '*-working')"
	jr $mode 'python3 ren.py host/d host/d2 &&
		echo more >>host/d2/a'
	jcheck "$mode: mv of a directory holding a file linked on the host" test "$rc" = 0
	done_with $mode
done
tap_done
