# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Shell helpers for the mount-suite scripts; source it, do not run it.
# Needs JAILFS set. Every mount made by mount_view is appended to the
# caller's `mounts` array, which unmount_all (call it from an EXIT trap)
# unmounts.

mounts=()

# jailrun --source keeps its views (jailrun(1), PERSISTENT VIEWS): the
# script's go to a runtime directory of its own, which stop_persistent
# (unmount_all calls it) empties. Another user (su jftest) finds it not
# theirs and gets one-shot views.
jf_run_dir=$(mktemp -d /tmp/jf-run.XXXXXX) && export XDG_RUNTIME_DIR=$jf_run_dir

# stop_views_of SRC: stop the persistent views of source SRC (canonical).
stop_views_of() {
	"$JAILFS" --list 2>/dev/null |
		awk -F'\t' -v s="$1" '$2 == s && $4 ~ /persistent/ { print $1 }' |
		while read -r m; do "$JAILFS" --stop "$m" >/dev/null 2>&1; done
}

# stop_persistent: stop every view under $jf_run_dir, remove the directory.
stop_persistent() {
	local m
	[ -n "${jf_run_dir:-}" ] && [ -d "$jf_run_dir" ] || return 0
	awk -v d="$jf_run_dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo |
		while read -r m; do
			"$JAILFS" --stop "$m" >/dev/null 2>&1 || umount -l "$m" 2>/dev/null
		done
	rm -rf "$jf_run_dir"
}

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
	stop_persistent
	return 0
}

# work_dir NAME: a new directory /var/tmp/jf-NAME.XXXXXX in $work, mode 0755
# (jftest and the jails read it; not under /tmp: a jail has a private /tmp,
# and jailrun refuses a project there), and an EXIT trap that unmounts what
# mount_view mounted, puts back the mode /dev/fuse had (a test that mounts
# as jftest makes it 0666 for fusermount3) and removes $work.
work_dir() {
	work=$(mktemp -d "/var/tmp/jf-$1.XXXXXX") || return 1
	chmod 0755 "$work"
	fuse_mode=$(stat -c %a /dev/fuse)
	trap work_dir_cleanup EXIT
}
# shellcheck disable=SC2317 # run by the EXIT trap
work_dir_cleanup() {
	unmount_all
	stop_persistent
	fuse_mode_back
	rm -rf "$work"
}

# fuse_for_users: /dev/fuse mode 0666 (Debian's default; some machines have
# 0600), which fusermount3 needs to mount as jftest. fuse_mode_back, from
# the EXIT trap (work_dir's calls it), puts back the mode it had.
fuse_for_users() {
	fuse_mode=${fuse_mode:-$(stat -c %a /dev/fuse)}
	chmod 0666 /dev/fuse
}
fuse_mode_back() {
	[ -z "${fuse_mode:-}" ] || [ "$fuse_mode" = 666 ] || chmod "$fuse_mode" /dev/fuse
}

# tree_sum DIR [SUBDIR...]: one hash of the metadata of every entry (a
# create, delete, write, chmod or utimens changes it; atime is left out, so
# reads do not), except what lies in each SUBDIR (relative to DIR, "./x").
tree_sum() {
	local d=$1 prune=() p
	shift
	for p in "$@"; do prune+=(-path "$p" -prune -o); done
	(cd "$d" && find . "${prune[@]}" -printf '%p %y %s %m %T@ %C@ %l\n' | LC_ALL=C sort |
		sha256sum)
}

# cargo_jail CARGO POLICY: cargo (the executable CARGO, from rustup) in the
# jail. A rustup toolchain lives in the user's home, which the jail shows
# only where [run] expose names it: writes POLICY ([options] default = safe;
# [run] expose = CARGO's directory and RUSTUP_HOME) and sets cargo_env to
# the jailrun options that use it (--policy, a 600 s timeout, PATH and
# RUSTUP_HOME, CARGO_HOME in the jail's own /tmp).
cargo_jail() {
	local dir rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
	dir=$(dirname "$1")
	printf '[options]\ndefault = safe\n[run]\nexpose = %s\n' "$dir" >"$2"
	[ -d "$rustup_home" ] && printf 'expose = %s\n' "$rustup_home" >>"$2"
	# shellcheck disable=SC2034 # for the caller
	cargo_env=(--policy "$2" --timeout 600 --env "PATH=$dir:/usr/bin:/bin"
		--env "RUSTUP_HOME=$rustup_home" --env CARGO_HOME=/tmp/cargo-home)
}

# The modes of a script that runs one scenario per jail mode. The caller
# sets T (its temporary directory), tmpl (the tree each scenario copies) and
# n (a counter), and sources lib-tap.sh for ok and bad.

# jcheck DESC TEST...: check, with the last jail's output ($out) when it fails
# shellcheck disable=SC2154 # $out is the caller's
jcheck() {
	local d=$1
	shift
	if "$@"; then
		ok "$d"
	else
		bad "$d"
		sed 's/^/# /' <<<"$out"
	fi
}

# fresh MODE: a new copy of $tmpl as $src, mounted at $mnt for the --root
# modes (root: -o nofast_open, opens seen, passthrough; root-fast: root's
# default mount, zero-message opens;
# root-audit: an audit log $audit at level all; read-only: --read-only);
# MODE source mounts nothing (jailrun --source makes its own view)
# shellcheck disable=SC2154 # $tmpl is the caller's
fresh() {
	n=$((n + 1))
	src=$T/src-$1-$n
	cp -a "$tmpl" "$src"
	mnt=$T/mnt-$1-$n
	audit=$T/audit-$n.jsonl
	case $1 in
	root) mount_view "$mnt" -o nofast_open "$src" || bad "$1: mount $mnt" ;;
	root-fast) mount_view "$mnt" "$src" || bad "$1: mount $mnt" ;;
	root-audit)
		mount_view "$mnt" --audit "$audit" --audit-level all "$src" || bad "$1: mount $mnt"
		;;
	read-only) mount_view "$mnt" --read-only "$src" || bad "$1: mount $mnt" ;;
	esac
}

# done_with MODE: unmount the view of $src
done_with() {
	[ "$1" = source ] || umount_view "$mnt" || bad "$1: unmount $mnt"
	return 0
}
