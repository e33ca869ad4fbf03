#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The overlay mode (jailfs --changes DIR, docs/changes-format.md) in each
# mode: root's default mount (OPEN, passthrough), root with -o fast_open,
# and an ordinary user (jftest, whose overlay is mounted in a user
# namespace) with its default fast_open and with -o nofast_open; root with an
# audit log at level all:
#  - SOURCE stays byte-for-byte unchanged (content and metadata of every
#    entry) across a session: git commit, make of a C file, rm -rf of a
#    directory, a python venv, plus hard links, symlinks, renames over a
#    name, RENAME_EXCHANGE, mmap writes, chmod, times, xattrs;
#  - what was written is in the view and in DIR/upper, a deletion is a
#    whiteout (character device 0:0), a rename of a directory of SOURCE
#    answers EXDEV and mv copies;
#  - DENIED names stay hidden, a host hard link to one too, a RESTRICTED one
#    stays read-only, and DIR/upper gets no entry for either;
#  - the agent cannot set user.overlay.* or user.jailfs.* attributes;
#  - DIR inside SOURCE or inside the mountpoint, or held by another
#    daemon, is refused with a message naming the rule;
#  - DIR/control answers; after the daemon mounts its overlay again the
#    view serves, hides what it hid, and writes land in DIR/upper;
#  - a host edit of a file with no copy in DIR shows in the view;
#  - kill -9 of the daemon after an fsync loses no byte (DIR/upper has it).
# Needs root, /dev/fuse, git, make, cc, python3, setfattr, setpriv.
set -u
: "${JAILFS:?JAILFS not set}"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse git make cc setfattr getfattr setpriv fusermount3
PY=/usr/bin/python3 # the system's: the user jftest runs it too
[ -x "$PY" ] || tap_unmet "python3 (Debian package python3)"
id jftest >/dev/null 2>&1 || useradd -m jftest 2>/dev/null || tap_unmet "the user jftest"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"

work_dir changes || { echo "Bail out! no work directory"; exit 1; }
T=$work
fuse_for_users
install -m 0755 "$JAILFS" "$T/jailfs" # the build tree may be unreadable by jftest
JAILFS=$T/jailfs
mkdir "$T/home" && chown jftest: "$T/home"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid GIT_CONFIG_NOSYSTEM=1

# The tree every scenario copies: a git repository with a C program, a
# build directory, a secret and a host hard link to it, a RESTRICTED file.
tmpl=$T/tmpl
(
	set -e
	mkdir -p "$tmpl/build" "$tmpl/sub/deep" "$tmpl/mvdir"
	cd "$tmpl"
	git init -q -b main .
	printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' >hello.c
	printf 'hello: hello.c\n\tcc -o hello hello.c\n' >Makefile
	seq 1 1000 >numbers.txt
	echo keep >keep.txt
	echo host >host.txt
	echo a >a.txt
	echo b >b.txt
	echo old >over.txt
	echo mapped-aaaaaaaaaaaa >mmap.bin
	echo x >mvdir/x
	echo o >build/out.o
	echo deep >sub/deep/f
	echo 'TOKEN=secret' >.env
	mkdir sec && echo s >sec/safe && echo k >sec/.env
	ln .env notes.txt # a host hard link to a DENIED name
	git add hello.c Makefile numbers.txt keep.txt a.txt b.txt over.txt sub
	git commit -q -m init
) || { echo "Bail out! cannot make the tree"; exit 1; }

# src_sum DIR: content and metadata of every entry (not atime): any write,
# create, delete, chmod, utimens or xattr change in DIR changes it.
src_sum() {
	(cd "$1" && find . -printf '%p %y %s %m %u %g %T@ %C@ %i %n %l\n' | LC_ALL=C sort &&
		find . -type f -exec sha256sum {} + | LC_ALL=C sort &&
		getfattr -R -d -m - --absolute-names . 2>/dev/null | LC_ALL=C sort) | sha256sum
}

# as_user CMD...: run CMD as the scenario's user (root or jftest).
as_user() {
	if [ "$user" = root ]; then
		"$@"
	else
		setpriv --reuid=jftest --regid=jftest --init-groups env HOME="$T/home" "$@"
	fi
}

# view_pid MNT: the daemon's pid, from the view's info attribute.
view_pid() {
	as_user getfattr --only-values -n user.jailfs.info "$1" 2>/dev/null | awk '$1 == "pid" { print $2 }'
}

# control DIR JSON: DIR/control's reply to one request.
control() {
	as_user "$PY" - "$1/control" "$2" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip())
EOF
}

# session git|nogit: an agent's session in the view $mnt, each step must
# succeed.
session() {
	as_user bash -euc '
		cd "$1"
		echo more >>numbers.txt
		if [ "$3" = git ]; then
			git add numbers.txt
			git commit -q -m "more numbers"
		fi
		make -s hello && ./hello >/dev/null
		rm -rf build
		"$2" -m venv --without-pip venv && venv/bin/python -c "print(1)" >/dev/null
		ln a.txt a-link.txt && ln -s a.txt a-sym
		echo new >new.txt && mv new.txt over.txt
		chmod 600 keep.txt && touch -d 2001-01-01 b.txt
		setfattr -n user.note -v 1 b.txt
		mkdir made && echo m >made/file
		' _ "$mnt" "$PY" "$1"
}

# Rename exchange, mmap and O_TMPFILE through the view, as the user; prints
# the outcome of each ("ok" or the errno's name).
posix_bits() {
	as_user "$PY" - "$mnt" <<'EOF'
import ctypes, errno, mmap, os, sys
d = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
r = libc.renameat2(AT_FDCWD, f"{d}/a.txt".encode(), AT_FDCWD, f"{d}/b.txt".encode(),
                   RENAME_EXCHANGE)
print("exchange", "ok" if r == 0 else errno.errorcode[ctypes.get_errno()])
with open(f"{d}/mmap.bin", "r+b") as f:
    m = mmap.mmap(f.fileno(), 0)
    m[0:6] = b"MAPPED"
    m.flush()
    m.close()
print("mmap", open(f"{d}/mmap.bin", "rb").read(6).decode())
try:
    fd = os.open(d, os.O_TMPFILE | os.O_WRONLY, 0o600)
    os.write(fd, b"t")
    os.close(fd)
    print("tmpfile ok")
except OSError as e:
    print("tmpfile", errno.errorcode[e.errno])
EOF
}

# scenario USER [jailfs options...]
scenario() {
	user=$1
	shift
	local tag="$user${*:+ $*}" base src mnt chg before out pid
	n=$((n + 1))
	base=$T/s-$n
	src=$base/src mnt=$base/mnt chg=$base/chg
	mkdir -p "$mnt" "$base/mnt-other"
	cp -a "$tmpl" "$src"
	[ "$user" = root ] || chown -R jftest: "$base"
	before=$(src_sum "$src")

	# refusals before any mount
	out=$(as_user "$JAILFS" "$@" --changes "$src/chg" "$src" "$mnt" 2>&1)
	check "$tag: DIR inside SOURCE refused (status 2, says why)" \
		test $? = 2 -a -n "$(echo "$out" | grep 'outside SOURCE')"
	out=$(as_user "$JAILFS" "$@" --changes "$mnt/chg" "$src" "$mnt" 2>&1)
	check "$tag: DIR inside MOUNTPOINT refused (status 2, says why)" \
		test $? = 2 -a -n "$(echo "$out" | grep 'outside MOUNTPOINT')"
	check "$tag: SOURCE untouched by the refusals" test ! -e "$src/chg"

	mounts+=("$mnt")
	if ! as_user "$JAILFS" "$@" --changes "$chg" "$src" "$mnt"; then
		bad "$tag: mount with --changes"
		return
	fi
	ok "$tag: mount with --changes"
	check "$tag: DIR is 0700" test "$(stat -c %a "$chg")" = 700
	out=$(as_user "$JAILFS" "$@" --changes "$chg" "$src" "$base/mnt-other" 2>&1)
	check "$tag: a second daemon on DIR refused" \
		test -n "$(echo "$out" | grep 'another jailfs serves')"

	# As an ordinary user with fast_open, git cannot write a loose object
	# in the default mode either (it writes through a 0444 file it created,
	# which the daemon opens again per request): no git there.
	local git=git
	[ "$user" != root ] && [ "$*" != "-o nofast_open" ] && git=nogit
	if session $git; then ok "$tag: session ($git, make, rm -rf, venv)"; else
		bad "$tag: session ($git, make, rm -rf, venv)"; fi
	out=$(posix_bits)
	echo "$out" | sed 's/^/# /'
	check "$tag: RENAME_EXCHANGE of two SOURCE files" \
		grep -qx "exchange ok" <<<"$out"
	check "$tag: mmap write shows" grep -qx "mmap MAPPED" <<<"$out"
	check "$tag: O_TMPFILE as in SAFE (EOPNOTSUPP: no tmpfile op)" \
		grep -qxE "tmpfile (EOPNOTSUPP|ENOTSUP)" <<<"$out"
	check "$tag: exchanged in the view" test "$(as_user cat "$mnt/a.txt")" = b
	check "$tag: rename over in the view" test "$(as_user cat "$mnt/over.txt")" = new
	as_user mv "$mnt/mvdir" "$mnt/mvdir2" 2>/dev/null
	check "$tag: mv of a SOURCE directory works (copies)" as_user test -f "$mnt/mvdir2/x"
	as_user "$PY" -c 'import os,sys; os.rename(sys.argv[1], sys.argv[2])' \
		"$mnt/sub" "$mnt/sub2" 2>"$T/err"
	check "$tag: rename(2) of a SOURCE directory answers EXDEV" grep -q 'Errno 18' "$T/err"

	# what DIR/upper holds
	check "$tag: a write lands in upper/" grep -qx more "$chg/upper/numbers.txt"
	check "$tag: view has the write" test "$(as_user tail -1 "$mnt/numbers.txt")" = more
	check "$tag: rm -rf left a whiteout" \
		test "$(stat -c '%F %t:%T' "$chg/upper/build" 2>&1)" = "character special file 0:0"
	check "$tag: build gone from the view" as_user test ! -e "$mnt/build"
	check "$tag: a new directory is in upper/" test -f "$chg/upper/made/file"
	if [ $git = git ]; then
		check "$tag: git's new commit is in upper/" test -n "$(ls "$chg/upper/.git/objects")"
		check "$tag: git log in the view" \
			test "$(as_user git -C "$mnt" log --format=%s -1)" = "more numbers"
	fi

	# hidden and read-only names
	check "$tag: .env hidden" as_user test ! -e "$mnt/.env" -a -e "$mnt/keep.txt"
	check "$tag: host hard link to .env hidden" as_user test ! -e "$mnt/notes.txt"
	as_user sh -c "echo x >'$mnt/.env'" 2>/dev/null
	check "$tag: creating .env refused" test ! -e "$chg/upper/.env"
	as_user sh -c "echo x >>'$mnt/.git/config'" 2>/dev/null
	check "$tag: .git/config (RESTRICTED) not written" test ! -e "$chg/upper/.git/config"
	check "$tag: no entry of upper/ names a hidden or read-only name" \
		test -z "$(cd "$chg/upper" && find . \( -name .env -o -name notes.txt -o \
			-path ./.git/config \) -print)"
	as_user rm -rf "$mnt/sec" 2>/dev/null
	check "$tag: rm -rf of a directory holding a hidden name: ENOTEMPTY, as in SAFE" \
		as_user test -d "$mnt/sec" -a ! -e "$mnt/sec/safe"
	check "$tag: ... the hidden name has no whiteout, its directory no opaque mark" \
		test ! -e "$chg/upper/sec/.env" -a -z "$(getfattr -n user.overlay.opaque \
			--only-values "$chg/upper/sec" 2>/dev/null)"
	as_user setfattr -n user.overlay.opaque -v y "$mnt/sub" 2>/dev/null
	check "$tag: user.overlay.* refused" test $? != 0
	as_user setfattr -n user.jailfs.x -v y "$mnt/sub" 2>/dev/null
	check "$tag: user.jailfs.* refused" test $? != 0

	# control, and the view on a fresh overlay: upper/ changed as a restore
	# changes it (a copy removed), a process in the view keeps its working
	# directory and its open file
	cp=$(control "$chg" '{"cmd":"checkpoint","args":["before"]}')
	check "$tag: a checkpoint through DIR/control ($cp)" \
		"$PY" -c 'import json,sys; assert json.loads(sys.argv[1])["ok"]' "$cp"
	as_user sh -c "echo changed >'$mnt/sub/deep/f'"
	as_user bash -c 'cd "$1/sub" && exec 3<deep/f && sleep 1 && cat deep/f && cat <&3' \
		_ "$mnt" >"$T/held" 2>&1 &
	sleep 0.3
	out=$(control "$chg" '{"cmd":"restore","args":["before"]}')
	echo "# control: $out"
	check "$tag: the restore gives back the file as it was at the checkpoint" \
		test "$(as_user cat "$mnt/sub/deep/f")" = deep
	wait
	# with OPEN the handle keeps the file it opened; with fast_open each
	# read opens the name, which now holds the restored file
	local held=deep
	case " $* " in *" -o nofast_open "*) held=changed ;; esac
	check "$tag: a working directory and an open file ($held) survive it" \
		test "$(cat "$T/held")" = "deep
$held"
	check "$tag: DIR/control restores the checkpoint ($out)" \
		"$PY" -c 'import json,sys; assert json.loads(sys.argv[1])["ok"]' "$out"
	check "$tag: view serves after the remount" test "$(as_user tail -1 "$mnt/numbers.txt")" = more
	check "$tag: .env and its hard link still hidden" \
		as_user test ! -e "$mnt/.env" -a ! -e "$mnt/notes.txt" -a -e "$mnt/keep.txt"
	as_user sh -c "echo after >'$mnt/after.txt'"
	check "$tag: a write after the remount lands in upper/" grep -qx after "$chg/upper/after.txt"

	# kill -9 after fsync
	as_user "$PY" -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"x" * 100000)
os.fsync(fd)' "$mnt/synced.bin"
	pid=$(view_pid "$mnt")
	check "$tag: daemon pid from the view" test -n "$pid"
	[ -n "$pid" ] && kill -9 "$pid"
	sleep 0.3
	umount_view "$mnt" || umount -l "$mnt"
	check "$tag: kill -9 after fsync lost no byte" \
		test "$(stat -c %s "$chg/upper/synced.bin" 2>&1)" = 100000
	check "$tag: SOURCE byte-for-byte unchanged" test "$(src_sum "$src")" = "$before"

	# a host edit of a file with no copy shows through (this changes SOURCE)
	mount_again "$chg" "$src" "$mnt" "$@" || bad "$tag: mount again"
	check "$tag: a mount with -o changes=DIR shows the first's changes" \
		as_user test -e "$mnt/synced.bin"
	as_user cat "$mnt/host.txt" >/dev/null
	echo edited >"$src/host.txt"
	sleep 0.3
	check "$tag: host edit of a file with no copy shows" test "$(as_user cat "$mnt/host.txt")" = edited
	umount_view "$mnt"

	# a DENIED name the host put below a directory the view deleted: the
	# list jailrun hands an agent must not name it
	echo SECRET=1 >"$src/build/.env"
	out=$(as_user "$JAILFS" changes "$chg" --json 2>"$T/err")
	check "$tag: changes leaves out a hidden name below a deleted directory" \
		test -n "$out" -a -z "$(echo "$out" | grep 'build/\.env')"
	check "$tag: ... and says how many it left out" grep -qE '[0-9]+ entr(y|ies) the policy hides' "$T/err"
	out=$(as_user "$JAILFS" changes "$chg" --all 2>&1)
	check "$tag: changes --all lists it" grep -q 'build/\.env' <<<"$out"
	[ "$user" = root ] && [ $# = 0 ] && passthrough_check "$src" "$mnt" "$chg"
}

# mount_again DIR SRC MNT [options...]: mount with -o changes=DIR (the fstab
# form) once the last daemon on DIR has gone (it lets DIR/lock go as it
# exits, after the unmount).
mount_again() {
	local d=$1 s=$2 m=$3 _
	shift 3
	for _ in $(seq 50); do
		as_user "$JAILFS" "$@" -o "changes=$d" "$s" "$m" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# passthrough_check SRC MNT DIR: root's mount with OPEN passes reads of an
# overlay file through to the kernel (FUSE's stack depth 2).
passthrough_check() {
	mount_again "$3" "$1" "$2" -o nofast_open --stats "$T/stats" ||
		{ bad "root: mount with --stats"; return; }
	echo pass >>"$2/keep.txt" # a write open passes through (passthrough.c)
	umount_view "$2"
	sed 's/^/# /' "$T/stats" | grep passthrough
	check "root: reads of overlay files pass through" \
		test "$(grep -o 'passthrough_opens[^0-9]*[0-9]*' "$T/stats" | grep -o '[0-9]*$')" -ge 1
}

n=0
scenario root
scenario root -o nofast_open
scenario root --audit "$T/audit.jsonl" --audit-level all
check "root --audit: the overlay's mutations are recorded by their view paths" \
	grep -q '"op":"rename","path":"new.txt","path2":"over.txt","zone":"SAFE","decision":"allow"' \
	"$T/audit.jsonl"
check "root --audit: a refusal is recorded" \
	grep -q '"path":".env","zone":"DENIED","decision":"deny"' "$T/audit.jsonl"
scenario jftest
scenario jftest -o nofast_open
tap_done
