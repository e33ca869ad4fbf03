#!/bin/bash
# SPDX-License-Identifier: MIT
#
# SOURCE's git index read at start-up, end to end on real jailfs mounts, in
# every mode (root's default mount, -o fast_open, --read-only, an audit log
# at level all, an ordinary user's mount):
#  - an index written by real git (version 4, path compression) still shows
#    its tracked file with a DENIED name
#  - a hostile 16 MiB version 4 index whose ~240,000 entries expand to
#    3.6 KB paths each (all but 11 bytes shared with the previous one),
#    naming *.pem files in a real directory 1,800 levels deep: the daemon
#    mounts within 5 s (jailrun --source runs within 10 s) with a peak RSS
#    under 100 MiB, says why it ignores the index, and a file the index
#    tracks stays hidden (fail closed)
#  - an entry the agent adds through jailrun --source for a .env it cannot
#    see, with a guessed blob (.env.example's), does not show the .env the
#    host makes later with that content, nor when written again after it;
#    the host's git add -f does; a cp -a copy shows it after git status
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
: "${JAILFS:?JAILFS not set}"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse git python3 jq

# Not under /tmp: the jail has a private /tmp, and jailrun refuses a project there.
work=$(mktemp -d /var/tmp/jf-gitindex.XXXXXX)
old_fuse_mode=$(stat -c %a /dev/fuse)
cleanup() {
	unmount_all
	rm -rf "$work"
	[ "$old_fuse_mode" = 666 ] || chmod "$old_fuse_mode" /dev/fuse
}
trap cleanup EXIT

# Every mount mode: root's default mount (passthrough), zero-message opens,
# --read-only, an audit log at level all, an ordinary user's mount through
# fusermount3 (jftest; /dev/fuse opened to all for the test, as
# run-unprivileged.sh does).
modes="plain fast_open read_only audit_all unprivileged"
[ "$old_fuse_mode" = 666 ] || chmod 0666 /dev/fuse
chmod 0755 "$work"
# mode_args MODE: sets pre (the command before jailfs) and opts for MODE.
mode_args() {
	pre=()
	opts=()
	case $1 in
	fast_open) opts=(-o fast_open) ;;
	read_only) opts=(--read-only) ;;
	audit_all) opts=(--audit "$work/audit.jsonl" --audit-level all) ;;
	unprivileged) pre=(setpriv --reuid=jftest --regid=jftest --clear-groups) ;;
	esac
}

# as_mode COMMAND...: run COMMAND as the user who mounted (the last
# mode_args): an ordinary user's mount is not open to root.
as_mode() { "${pre[@]}" "$@"; }

# mount_timed MODE MNT SOURCE: run the daemon in the foreground, in the
# background; wait up to 60 s for the mount. Sets secs (to mount, with 0.1 s
# steps), hwm_kib (the daemon's peak RSS once mounted) and pid.
mount_timed() {
	local m=$2 i
	mode_args "$1"
	mkdir -p "$m"
	[ "$1" = unprivileged ] && chown jftest: "$m"
	mounts+=("$m")
	"${pre[@]}" "$JAILFS" -f "${opts[@]}" "$3" "$m" 2>"$work/mount.err" &
	pid=$!
	secs=60
	for i in $(seq 600); do
		if mounted "$m"; then
			secs=$(awk -v i="$i" 'BEGIN { printf "%.1f", i / 10 }')
			break
		fi
		sleep 0.1
	done
	hwm_kib=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	: "${hwm_kib:=999999999}"
}
umount_timed() {
	umount_view "$1" || bad "unmount $1"
	wait "$pid" 2>/dev/null
}

# ---------------------------------------------------------------- real git, version 4
repo=$work/repo
mkdir -p "$repo/tests"
printf 'one\n' >"$repo/a.txt"
printf -- '-----BEGIN CERTIFICATE-----\nnot really\n' >"$repo/tests/server.key"
printf 'TOKEN=secret\n' >"$repo/.env"
(
	cd "$repo" && git init -q && git config user.email t@example.invalid &&
		git config user.name test && git add a.txt && git add -f tests/server.key &&
		git update-index --index-version 4 && git commit -qm init
) || { echo "Bail out! git init"; exit 1; }
chown -R jftest: "$repo"
# the chown moved the files' ctimes: the host's git sees them again
git -c safe.directory="$repo" -C "$repo" status --porcelain >/dev/null
for mode in $modes; do
	mnt=$work/mnt-$mode
	mount_timed "$mode" "$mnt" "$repo"
	check "$mode: real git's version 4 index: tracked tests/server.key shown" \
		as_mode cmp -s "$repo/tests/server.key" "$mnt/tests/server.key"
	check "$mode: untracked .env hidden, a.txt shown" \
		as_mode sh -c '[ ! -e "$1/.env" ] && [ -e "$1/a.txt" ]' _ "$mnt"
	umount_timed "$mnt"
done

# ---------------------------------------------------------------- a hostile index
host=$work/hostile
mkdir -p "$host/.git"
deep=$(python3 - "$host" <<-'PY'
	import os, sys
	os.chdir(sys.argv[1])
	for _ in range(1800):
	    os.mkdir("a")
	    os.chdir("a")
	print("/".join(["a"] * 1800))
	PY
)
printf 'TOKEN=secret\n' >"$host/.env"
# write_hostile SOURCE DIR: a 16 MiB version 4, SHA-1 index in SOURCE: its
# first entry is .env, with the blob id of its content, then every entry
# names DIR/kNNNNNN.pem, stripping the few bytes of the counter and adding
# the new ones
write_hostile() {
	python3 - "$1/.git/index" $((16 << 20)) "$2" "$(git hash-object "$1/.env")" <<-'PY'
	import hashlib, struct, sys
	out, size, prefix, oid = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode() + b"/", sys.argv[4]
	def varint(v):
	    b = [v & 127]
	    v >>= 7
	    while v:
	        v -= 1
	        b.insert(0, 128 | (v & 127))
	        v >>= 7
	    return bytes(b)
	def head(blob, size):
	    return struct.pack(">10I", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, size) + blob
	env = b".env"
	entries = [head(bytes.fromhex(oid), 13) + struct.pack(">H", len(env)) + b"\0" + env + b"\0"]
	prev, n, total = None, 0, 12 + 20 + len(entries[0])
	while True:
	    tail = b"k%06x.pem" % n
	    if prev is None:
	        e = head(b"\x11" * 20, 42) + b"\x0f\xff" + varint(len(env)) + prefix + tail + b"\0"
	    else:
	        c = 0
	        while prev[c] == tail[c]:
	            c += 1
	        e = head(b"\x11" * 20, 42) + b"\x0f\xff" + varint(len(tail) - c) + tail[c:] + b"\0"
	    if total + len(e) > size:
	        break
	    entries.append(e)
	    total += len(e)
	    prev = tail
	    n += 1
	body = b"DIRC" + struct.pack(">II", 4, len(entries)) + b"".join(entries)
	open(out, "wb").write(body + hashlib.sha1(body).digest())
	PY
}
write_hostile "$host" "$deep"
size=$(stat -c %s "$host/.git/index")
check "the hostile index is 16 MiB" test "$size" -gt $(((16 << 20) - 64))
chown -R jftest: "$host"
for mode in $modes; do
	mnt=$work/hmnt-$mode
	mount_timed "$mode" "$mnt" "$host"
	check "$mode: mounted within 5 s over the hostile index (took $secs s)" \
		awk -v s="$secs" 'BEGIN { exit !(s < 5) }'
	check "$mode: daemon's peak RSS under 100 MiB ($hwm_kib KiB)" test "$hwm_kib" -lt 102400
	check "$mode: start-up says why the index is ignored" \
		grep -q 'warning: .*/.git/index: more than 65536 entries name files SOURCE does not hold' \
		"$work/mount.err"
	check "$mode: .env, tracked with its blob id in that index, stays hidden" \
		as_mode sh -c '[ ! -e "$1/.env" ] && ls -a "$1" | grep -qx .git &&
			! ls -a "$1" | grep -qx .env' _ "$mnt"
	umount_timed "$mnt"
done
# paths of 251 bytes, classified before they are looked up
host2=$work/hostile2
deep2=$(printf 'a/%.0s' $(seq 119))a
mkdir -p "$host2/.git" "$host2/$deep2"
printf 'TOKEN=secret\n' >"$host2/.env"
write_hostile "$host2" "$deep2"
mount_timed plain "$work/h2mnt" "$host2"
check "251-byte paths: mounted within 5 s over the hostile index (took $secs s)" \
	awk -v s="$secs" 'BEGIN { exit !(s < 5) }'
check "251-byte paths: daemon's peak RSS under 100 MiB ($hwm_kib KiB)" test "$hwm_kib" -lt 102400
check "251-byte paths: start-up says why the index is ignored" \
	grep -q 'warning: .*/.git/index: more than 65536 entries' "$work/mount.err"
umount_timed "$work/h2mnt"

start=$(date +%s.%N)
js=$(cd "$host" && "$J" --source "$host" --json --timeout 60 -- ls -a 2>"$work/jr.err")
took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
check "jailrun --source over the hostile index: ls -a runs, no .env (took $took s)" \
	eval '[ "$(jq -r .exit_code <<<"$js")" = 0 ] && out=$(jq -r .stdout <<<"$js") &&
		grep -qx .git <<<"$out" && ! grep -qx .env <<<"$out"'
check "jailrun --source over the hostile index done within 10 s" \
	awk -v s="$took" 'BEGIN { exit !(s < 10) }'

# ---------------------------------------------------------------- a guessed entry
# Through jailrun --source the agent adds to the index an entry for .env,
# which it cannot see, with the blob of .env.example; later the host copies
# .env.example to .env. A new entry for a DENIED name is refused, before and
# after .env exists (the same answer: it tells nothing of the file), and the
# host's git restore . would otherwise write it; had it been taken, it
# predates the file: a guess, not what git read, so .env stays hidden. Once
# the host's git adds and commits .env, it is shown.
guess=$work/guess
mkdir -p "$guess"
printf 'TOKEN=change-me\n' >"$guess/.env.example"
# the agent's own index writer: git's entries plus one for .env, with the
# size and blob id of .env.example (git update-index --cacheinfo leaves the
# size 0)
cat >"$guess/agent.py" <<-'PY'
	import hashlib, struct, subprocess
	ex = open(".env.example", "rb").read()
	oid = subprocess.run(["git", "hash-object", "-w", ".env.example"], capture_output=True,
	                     check=True).stdout.strip().decode()
	files = subprocess.run(["git", "ls-files", "-s"], capture_output=True,
	                       check=True).stdout.decode().splitlines()
	entries = {}
	for line in files:
	    meta, path = line.split("\t", 1)
	    mode, o, _ = meta.split()
	    try:
	        entries[path.encode()] = (int(mode, 8), o, len(open(path, "rb").read()))
	    except OSError:  # hidden in the view
	        pass
	entries[b"." + b"env"] = (0o100644, oid, len(ex))
	body = b"DIRC" + struct.pack(">II", 2, len(entries))
	for path in sorted(entries):
	    mode, o, size = entries[path]
	    e = struct.pack(">10I", 0, 0, 0, 0, 0, 0, mode, 0, 0, size) + bytes.fromhex(o)
	    e += struct.pack(">H", len(path)) + path + b"\0"
	    e += b"\0" * (-len(e) % 8)
	    body += e
	open(".git/index.lock", "wb").write(body + hashlib.sha1(body).digest())
	import os
	os.rename(".git/index.lock", ".git/index")
	try:
	    os.utime(".git/index")  # its ctime: now
	except OSError:
	    pass  # RESTRICTED: the view replaces it only by a checked rename
	PY
printf '%s\n' 'cat .e""nv 2>/dev/null || echo hidden' >"$guess/show.sh"
(
	cd "$guess" && git init -q && git config user.email t@example.invalid &&
		git config user.name test && git add .env.example agent.py show.sh &&
		git commit -qm init
) || { echo "Bail out! git init"; exit 1; }
# jrs [--fresh] CMD...: CMD through jailrun --source in the repository
jrs() {
	local fresh=()
	[ "$1" = --fresh ] && { fresh=(--fresh); shift; }
	(cd "$guess" && "$J" --source "$guess" "${fresh[@]}" --json --timeout 60 -- "$@" 2>"$work/jr.err")
}
js=$(jrs python3 agent.py)
check "jailrun --source: an index with a new entry for .env is refused" \
	eval '[ "$(jq -r .exit_code <<<"$js")" != 0 ] && ! git -C "$guess" ls-files --stage | grep -q "	.env$"'
sleep 0.1
cp "$guess/.env.example" "$guess/.env"
js=$(jrs sh show.sh)
check "jailrun --source: .env (content = the agent's guess) stays hidden" \
	test "$(jq -r .stdout <<<"$js")" = hidden
mount_view "$work/gmnt" "$guess" 2>"$work/mount.err" || bad "guess: jailfs did not mount"
check "plain mount: .env stays hidden" test ! -e "$work/gmnt/.env"
umount_view "$work/gmnt" || bad "unmount $work/gmnt"
# the same guess written again now that .env exists, and the index touched:
# newer than the file, still not what git read from it
js=$(jrs python3 agent.py)
check "jailrun --source: the guess again, after .env exists, is refused alike" \
	eval '[ "$(jq -r .exit_code <<<"$js")" != 0 ] && ! git -C "$guess" ls-files --stage | grep -q "	.env$"'
js=$(jrs sh show.sh)
check "jailrun --source: .env still hidden" test "$(jq -r .stdout <<<"$js")" = hidden
rm -f "$guess/.git/index.lock" # what the refused rename left
(cd "$guess" && git add -f .env && git commit -qm env) || bad "host git add -f .env"
# A persistent view read the index when it started (jailrun(1), PERSISTENT
# VIEWS): it keeps .env hidden; a fresh view reads the index again.
js=$(jrs sh show.sh)
check "after the host's commit of .env: the persistent view keeps it hidden" \
	test "$(jq -r .stdout <<<"$js")" = hidden
js=$(jrs --fresh sh show.sh)
check "after the host's git add -f .env and commit: jailrun --source --fresh shows .env" \
	test "$(jq -r .stdout <<<"$js")" = TOKEN=change-me
mount_view "$work/gmnt" "$guess" 2>"$work/mount.err" || bad "guess: jailfs did not mount"
check "plain mount: .env shown, read-only" \
	eval 'cmp -s "$guess/.env" "$work/gmnt/.env" && ! printf x >>"$work/gmnt/.env" 2>/dev/null'
umount_view "$work/gmnt" || bad "unmount $work/gmnt"
# a copy of the repository: new inodes and ctimes, hidden until the host's
# git has seen the files again
cp -a "$guess" "$work/copy"
mount_view "$work/cmnt" "$work/copy" 2>"$work/mount.err" || bad "copy: jailfs did not mount"
check "cp -a copy: .env hidden (not the file git saw)" test ! -e "$work/cmnt/.env"
umount_view "$work/cmnt" || bad "unmount $work/cmnt"
git -C "$work/copy" status --porcelain >/dev/null
mount_view "$work/cmnt" "$work/copy" 2>"$work/mount.err" || bad "copy: jailfs did not mount"
check "cp -a copy after the host's git status: .env shown" \
	cmp -s "$work/copy/.env" "$work/cmnt/.env"
umount_view "$work/cmnt" || bad "unmount $work/cmnt"

tap_done || exit 1
echo "all $tap_n passed"
