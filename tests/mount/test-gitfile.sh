#!/bin/bash
# SPDX-License-Identifier: MIT
#
# A .git that is not a directory (a "gitdir: PATH" file, a symlink) makes
# git take its config and hooks/ from PATH: the project profile makes the
# name RESTRICTED for anything but a directory, and a regular .git may only
# hold nothing or a "gitdir: PATH" naming a git directory of the view (git
# submodule add writes one in place). On real jailfs mounts of a real git
# repository, in each open mode (plain: passthrough as root; -o fast_open:
# writes that reach the daemon as WRITE only):
#  - creating sub/.git as a symlink, a FIFO, by hard link or by rename
#    answers EROFS, is audited with the rule, and the backing tree is
#    unchanged; so is a rename onto a host-made .git file
#  - an empty sub/.git may be created; writing into it "gitdir: ../evil"
#    (a SAFE directory whose config sets core.fsmonitor), an absolute path
#    outside the view or inside it to evil, a ".." after a name, a path
#    leaving the view, or cutting a good one short answers EROFS, audited
#    (rule and reason named), the file unchanged; "gitdir:
#    ../.git/modules/mod" is written, by O_TRUNC and by a plain write, and
#    so is a git directory that does not exist yet, where a symlink to evil
#    is then refused (a directory is not); the file cannot be renamed or
#    linked, and can be removed
#  - a host-made .git file (a submodule's) reads the same through the view,
#    git in the view follows it, and it cannot be made to name evil
#  - mkdir sub/.git still works, with today's rules inside (HEAD writable,
#    config EROFS); a directory holding a config cannot be renamed to .git
#  - end to end: a repository written in the view with core.fsmonitor set,
#    and host git run in sub/ afterwards: the command does not run
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
: "${JAILFS:?JAILFS not set}"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse git python3

work=$(mktemp -d /var/tmp/jf-gitfile.XXXXXX)
cleanup() {
	unmount_all
	rm -rf "$work"
}
trap cleanup EXIT

# try OP ARGS...: do one system call through python3; prints OK or the
# errno name (EROFS, EXDEV...).
try() {
	python3 - "$@" <<-'PY' 2>&1
		import errno, os, sys
		op, a = sys.argv[1], sys.argv[2:]
		try:
		    if op == "create":
		        os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
		    elif op == "write":
		        fd = os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
		        os.write(fd, a[1].encode())
		        os.close(fd)
		    elif op == "put":
		        fd = os.open(a[0], os.O_WRONLY)
		        os.write(fd, a[1].encode())
		        os.close(fd)
		    elif op == "resize":
		        os.truncate(a[0], int(a[1]))
		    elif op == "symlink":
		        os.symlink(a[0], a[1])
		    elif op == "mkfifo":
		        os.mkfifo(a[0])
		    elif op == "link":
		        os.link(a[0], a[1])
		    elif op == "rename":
		        os.rename(a[0], a[1])
		    elif op == "append":
		        fd = os.open(a[0], os.O_WRONLY | os.O_APPEND)
		        os.write(fd, b"gitdir: ../evil.git\n")
		        os.close(fd)
		    elif op == "truncate":
		        os.truncate(a[0], 0)
		    elif op == "unlink":
		        os.unlink(a[0])
		    elif op == "mkdir":
		        os.mkdir(a[0])
		    print("OK")
		except OSError as e:
		    print(errno.errorcode[e.errno])
		PY
}

# expect WANT DESC OP ARGS...: the call answers WANT, and the backing tree
# did not change unless WANT is OK
expect() {
	local want=$1 desc=$2 got before
	shift 2
	before=$(tree_sum "$src")
	got=$(try "$@")
	if [ "$got" != "$want" ]; then
		bad "$desc: $got, want $want"
	elif [ "$want" != OK ] && [ "$(tree_sum "$src")" != "$before" ]; then
		bad "$desc: $want but the backing tree changed"
	else
		ok "$desc: $want"
	fi
}

# audited OP PATH [DETAIL]: the audit log holds a refusal of OP on PATH,
# EROFS, by the project profile (with DETAIL in its detail)
audited() {
	python3 - "$audit" "$1" "$2" "${3:-}" <<-'PY'
		import json, sys
		log, op, path, detail = sys.argv[1:]
		for line in open(log):
		    r = json.loads(line)
		    if (r.get("op"), r.get("path"), r.get("errno"), r.get("rule"),
		            r.get("decision")) == (op, path, "EROFS", "profile:project", "deny") \
		            and detail in r.get("detail", ""):
		        sys.exit(0)
		sys.exit(1)
		PY
}

# ---------------------------------------------------------------- the repository
tmpl=$work/tmpl
mkdir -p "$tmpl/sub" "$tmpl/d/e" "$tmpl/evil"
printf 'one\n' >"$tmpl/f"
printf '[core]\n\tfsmonitor = touch %s/marker\n' "$work" >"$tmpl/evil/config"
(
	cd "$tmpl" && git init -q && git config user.email t@example.invalid &&
		git config user.name test && git add f && git commit -qm init &&
		mkdir .git/modules && git init -q --separate-git-dir "$tmpl/.git/modules/mod" mod &&
		git -c user.email=t@example.invalid -c user.name=test -C mod commit -q --allow-empty \
			-m mod &&
		printf 'gitdir: ../.git/modules/mod\n' >mod/.git &&
		test "$(git -C mod rev-parse --absolute-git-dir)" = "$tmpl/.git/modules/mod"
) || { echo "FAIL: git init"; exit 1; }

for mode in plain fast_open; do
	src=$work/src-$mode
	mnt=$work/mnt-$mode
	audit=$work/audit-$mode.log
	cp -a "$tmpl" "$src"
	opts=()
	[ "$mode" = fast_open ] && opts=(-o fast_open)
	mount_view "$mnt" --audit "$audit" "${opts[@]}" "$src" || {
		bad "$mode: mount"
		continue
	}

	# a planted .git in every form but a regular file: refused, audited,
	# nothing on disk
	expect EROFS "$mode: symlink sub/.git -> ../evil" symlink ../evil "$mnt/sub/.git"
	check "$mode: symlink audited" audited symlink sub/.git
	expect EROFS "$mode: mkfifo sub/.git" mkfifo "$mnt/sub/.git"
	expect EROFS "$mode: link f sub/.git" link "$mnt/f" "$mnt/sub/.git"
	check "$mode: link audited" audited link sub/.git
	expect EROFS "$mode: rename f sub/.git" rename "$mnt/f" "$mnt/sub/.git"
	check "$mode: no sub/.git in the backing tree" test ! -e "$src/sub/.git" -a ! -L "$src/sub/.git"

	# a .git file: only nothing, or a gitdir naming a git directory
	expect OK "$mode: create an empty sub/.git" create "$mnt/sub/.git"
	expect EROFS "$mode: sub/.git naming ../evil" put "$mnt/sub/.git" "gitdir: ../evil"
	check "$mode: ... audited, the reason named" audited write sub/.git "not keep as a git directory"
	expect EROFS "$mode: sub/.git naming $work/evil (outside the view)" \
		put "$mnt/sub/.git" "gitdir: $work/evil"
	check "$mode: ... audited, the reason named" audited write sub/.git "outside the view"
	expect EROFS "$mode: sub/.git naming $src/evil (absolute, in the view)" \
		put "$mnt/sub/.git" "gitdir: $src/evil"
	expect EROFS "$mode: sub/.git naming ../d/../evil" put "$mnt/sub/.git" "gitdir: ../d/../evil"
	expect EROFS "$mode: sub/.git naming ../../x/.git" put "$mnt/sub/.git" "gitdir: ../../x/.git"
	check "$mode: sub/.git still empty" test ! -s "$src/sub/.git"
	expect OK "$mode: sub/.git naming ../.git/modules/mod" \
		put "$mnt/sub/.git" "gitdir: ../.git/modules/mod"
	expect OK "$mode: ... again by O_TRUNC, as git writes it" \
		write "$mnt/sub/.git" "gitdir: ../.git/modules/mod"
	check "$mode: ... on disk as written" \
		test "$(cat "$src/sub/.git")" = "gitdir: ../.git/modules/mod"
	expect EROFS "$mode: cutting sub/.git short" resize "$mnt/sub/.git" 12
	expect EROFS "$mode: rename sub/.git" rename "$mnt/sub/.git" "$mnt/sub/x"
	expect EROFS "$mode: link sub/.git" link "$mnt/sub/.git" "$mnt/sub/y"
	expect OK "$mode: sub/.git naming ../.git/modules/new (not there yet)" \
		write "$mnt/sub/.git" "gitdir: ../.git/modules/new"
	expect EROFS "$mode: symlink .git/modules/new -> ../../evil" \
		symlink ../../evil "$mnt/.git/modules/new"
	check "$mode: ... audited" audited symlink .git/modules/new
	expect OK "$mode: git's probe link in a git directory" \
		symlink testing "$mnt/.git/modules/mod/tprobe"
	rm -f "$src/.git/modules/mod/tprobe"
	expect OK "$mode: mkdir .git/modules/new" mkdir "$mnt/.git/modules/new"
	expect OK "$mode: unlink sub/.git" unlink "$mnt/sub/.git"
	rmdir "$src/.git/modules/new"

	# a host-made .git file: readable, followed by git, not writable
	check "$mode: mod/.git reads as on the host" cmp -s "$src/mod/.git" "$mnt/mod/.git"
	check "$mode: git in the view follows mod/.git" \
		test "$(git -C "$mnt/mod" rev-parse --absolute-git-dir)" = "$mnt/.git/modules/mod"
	expect EROFS "$mode: rename f onto mod/.git" rename "$mnt/f" "$mnt/mod/.git"
	expect EROFS "$mode: append to mod/.git" append "$mnt/mod/.git"
	expect EROFS "$mode: mod/.git made to name ../evil" put "$mnt/mod/.git" "gitdir: ../evil\n\n"

	# a .git directory: today's rules
	expect OK "$mode: mkdir sub/.git" mkdir "$mnt/sub/.git"
	check "$mode: sub/.git is a directory in the backing tree" test -d "$src/sub/.git"
	expect OK "$mode: create sub/.git/HEAD" create "$mnt/sub/.git/HEAD"
	expect EROFS "$mode: create sub/.git/config" create "$mnt/sub/.git/config"
	expect EXDEV "$mode: rename evil/ (holding config) to d/.git" rename "$mnt/evil" "$mnt/d/.git"

	# end to end: a repository with core.fsmonitor written in the view, then
	# host git run in sub2/, as an editor does on finding a nested repository
	mkdir "$mnt/sub2"
	git init -q --bare "$mnt/evil.git" && git --git-dir="$mnt/evil.git" config core.bare false &&
		git --git-dir="$mnt/evil.git" config core.fsmonitor "touch $work/marker"
	check "$mode: the view lets evil.git/config set core.fsmonitor" \
		grep -q fsmonitor "$src/evil.git/config"
	check "$mode: sub2/.git naming it is refused" \
		test "$(try write "$mnt/sub2/.git" "gitdir: ../evil.git")" = EROFS
	check "$mode: ... and sub2/.git holds nothing" test ! -s "$src/sub2/.git"
	(cd "$src/sub2" && git status >/dev/null 2>&1)
	check "$mode: host git in sub2/ ran no command" test ! -e "$work/marker"

	umount_view "$mnt" || bad "$mode: unmount"
done

# a --read-only view (with an audit log, so the daemon, not the kernel,
# answers): no .git file is created or written, good content or not
src=$work/src-ro
mnt=$work/mnt-ro
audit=$work/audit-ro.log
cp -a "$tmpl" "$src"
if mount_view "$mnt" --read-only --audit "$audit" "$src"; then
	expect EROFS "read-only: create sub/.git" write "$mnt/sub/.git" "gitdir: ../.git/modules/mod"
	expect EROFS "read-only: rewrite mod/.git" put "$mnt/mod/.git" "gitdir: ../.git/modules/mod"
	umount_view "$mnt" || bad "read-only: unmount"
else
	bad "read-only: mount"
fi
tap_done
