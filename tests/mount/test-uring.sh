#!/bin/bash
# SPDX-License-Identifier: MIT
#
# FUSE over io_uring (-o io_uring) on real mounts, the fuse module's
# enable_uring turned on for the run and put back at the end:
#  - with it Y, on the default mount (FUSE passthrough on as well) and with
#    -o nopassthrough (every read and write a request): one thread per
#    possible CPU, pinned to it; 300 files created, written, read, renamed,
#    listed and unlinked, a tar x of 600 files and 3 MiB and its rm -rf, an
#    8 MiB dd both ways, each checked against the backing tree; every
#    request but INIT, FORGET and INTERRUPT (which the kernel sends through
#    /dev/fuse) counted as taken from a ring; fusermount3 -u and SIGTERM end
#    the daemon cleanly (status 0, no mount left)
#  - with it N: the mount works from /dev/fuse, says why on stderr (also
#    when the daemon detaches), and no request comes from a ring
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
: "${JAILFS:?JAILFS not set}"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse tar fusermount3

param=/sys/module/fuse/parameters/enable_uring
if [ ! -w "$param" ]; then
	tap_unmet "$param: FUSE over io_uring in this kernel"
fi
old=$(cat "$param")
work=$(mktemp -d /var/tmp/jf-uring.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
	local p
	unmount_all
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	wait
	echo "$old" >"$param"
	rm -rf "$work"
}
trap cleanup EXIT

# Queues the kernel makes: one per possible CPU.
ncpu=$(($(sed 's/.*[-,]//' /sys/devices/system/cpu/possible) + 1))

# daemon MNT LOG [jailfs options...] SOURCE: jailfs -f in the background,
# stderr to LOG; waits up to 5 s for the mount. Sets dpid.
daemon() {
	local m=$1 log=$2 _
	shift 2
	mkdir -p "$m"
	mounts+=("$m")
	"$JAILFS" -f "$@" "$m" 2>"$log" &
	dpid=$!
	pids+=("$dpid")
	for _ in $(seq 100); do mounted "$m" && return 0; sleep 0.05; done
	return 1
}

# counters PID STATS: make the daemon append its request counters to STATS
# (SIGUSR1) and print that line's KIND=N pairs, one a line.
counters() {
	local n0 _
	n0=$(wc -l <"$2" 2>/dev/null || echo 0)
	kill -USR1 "$1" || return 1
	for _ in $(seq 200); do
		[ "$(wc -l <"$2" 2>/dev/null || echo 0)" -gt "$n0" ] && break
		sleep 0.01
	done
	tail -n1 "$2" | cut -d: -f3- | tr ' ' '\n' | grep '='
}
# count KIND: from counters' output on stdin, N (0 when absent)
count() { awk -F= -v k="$1" '$1 == k { n = $2 } END { print n + 0 }'; }

# rings_pinned PID: a thread jailfs-ringQ for every queue Q, allowed only on CPU Q
rings_pinned() {
	local q t found
	for ((q = 0; q < ncpu; q++)); do
		found=
		for t in /proc/"$1"/task/*; do
			[ "$(cat "$t/comm")" = "jailfs-ring$q" ] || continue
			grep -q "^Cpus_allowed_list:[[:space:]]*$q\$" "$t/status" && found=1
		done
		[ -n "$found" ] || { echo "no thread jailfs-ring$q pinned to CPU $q"; return 1; }
	done
}
unmounted() { ! mounted "$1"; }
no_rings() { ! cat /proc/"$1"/task/*/comm | grep -q '^jailfs-ring'; }

# files VIEW SRC N: create, write, read, rename, list and unlink N files
files() {
	local v=$1 s=$2 n=$3 i
	mkdir "$v/many" || return 1
	for ((i = 0; i < n; i++)); do printf 'file %d\n' "$i" >"$v/many/f$i" || return 1; done
	for ((i = 0; i < n; i++)); do
		[ "$(cat "$v/many/f$i")" = "file $i" ] || { echo "f$i reads wrong"; return 1; }
		mv "$v/many/f$i" "$v/many/g$i" || return 1
	done
	[ "$(find "$v/many" -mindepth 1 | wc -l)" -eq "$n" ] || { echo "readdir: not $n names"; return 1; }
	[ "$(cat "$s/many/g$((n - 1))")" = "file $((n - 1))" ] || { echo "backing differs"; return 1; }
	for ((i = 0; i < n; i++)); do rm "$v/many/g$i" || return 1; done
	rmdir "$v/many" && [ ! -e "$s/many" ]
}

# The tarball: 20 directories of 30 small files, and one of 3 MiB.
mkdir -p "$work/tree/t"
for d in $(seq 20); do
	mkdir "$work/tree/t/d$d"
	for f in $(seq 30); do printf '%s/%s\n' "$d" "$f" >"$work/tree/t/d$d/f$f"; done
done
head -c $((3 << 20)) /dev/urandom >"$work/tree/t/big"
tar cf "$work/t.tar" -C "$work/tree" t

# untar VIEW SRC: tar x into the view, compare with the original, rm -rf
untar() {
	tar xf "$work/t.tar" -C "$1" || return 1
	diff -r "$work/tree/t" "$2/t" || { echo "tar x: backing differs"; return 1; }
	diff -r "$work/tree/t" "$1/t" || { echo "tar x: view differs"; return 1; }
	rm -rf "$1/t" && [ ! -e "$2/t" ]
}

# dd_both VIEW SRC: 8 MiB written and read back through the view
dd_both() {
	dd if=/dev/urandom of="$1/dd" bs=1M count=8 status=none || return 1
	cmp "$1/dd" "$2/dd" || return 1
	dd if="$1/dd" of="$work/dd.back" bs=1M status=none && cmp "$work/dd.back" "$2/dd" &&
		rm "$1/dd"
}

# ring_mount NAME [options...]: mount with -o io_uring, run everything,
# check the counters. Leaves the daemon in dpid and the view in $work/NAME.
ring_mount() {
	local name=$1 c uring total direct
	shift
	mkdir -p "$work/$name.src"
	if ! daemon "$work/$name" "$work/$name.log" -o io_uring --stats "$work/$name.stats" "$@" \
		"$work/$name.src"; then
		bad "$name: mounted with -o io_uring"
		cat "$work/$name.log"
		return 1
	fi
	ok "$name: mounted with -o io_uring"
	check "$name: 300 files created, read, renamed, listed, unlinked" \
		files "$work/$name" "$work/$name.src" 300
	# The threads start at INIT, after the mount shows.
	check "$name: a ring thread pinned to each of $ncpu CPUs" rings_pinned "$dpid"
	check "$name: tar x of 601 files, rm -rf" untar "$work/$name" "$work/$name.src"
	check "$name: 8 MiB written and read back" dd_both "$work/$name" "$work/$name.src"
	c=$(counters "$dpid" "$work/$name.stats")
	uring=$(count uring <<<"$c")
	total=$(count total <<<"$c")
	direct=$(($(count INIT <<<"$c") + $(count FORGET <<<"$c") + $(count BATCH_FORGET <<<"$c") +
		$(count INTERRUPT <<<"$c")))
	if [ "$uring" -gt 3000 ] && [ "$uring" -eq $((total - direct)) ]; then
		ok "$name: every request but INIT/FORGET/INTERRUPT from a ring ($uring of $total)"
	else
		bad "$name: every request but INIT/FORGET/INTERRUPT from a ring ($uring of $total)"
		echo "$c" | tr '\n' ' '
		echo
	fi
	counts=$c
}

# ---------------------------------------------------------------- enable_uring=Y
echo Y >"$param"
ring_mount pt -o nofast_open # opens seen: passthrough is possible
pt=$(count passthrough_opens <<<"$counts")
check "pt: FUSE passthrough on beside the rings ($pt passthrough opens)" [ "$pt" -gt 0 ]
fusermount3 -u "$work/pt"
wait "$dpid"
rc=$?
check "pt: fusermount3 -u ends the daemon with status 0" [ "$rc" -eq 0 ]
check "pt: no mount left" unmounted "$work/pt"
check "pt: exit report counts the rings" grep -q ' uring=[1-9]' "$work/pt.stats"

ring_mount nopt -o nopassthrough
reads=$(count READ <<<"$counts")
writes=$(count WRITE <<<"$counts")
check "nopt: READ ($reads) and WRITE ($writes) reach the daemon (no passthrough)" \
	[ "$reads" -gt 0 -a "$writes" -gt 0 ]
kill -TERM "$dpid"
wait "$dpid"
rc=$?
check "nopt: SIGTERM ends the daemon with status 0" [ "$rc" -eq 0 ]
check "nopt: no mount left" unmounted "$work/nopt"

# ---------------------------------------------------------------- enable_uring=N
echo N >"$param"
mkdir -p "$work/off.src"
if daemon "$work/off" "$work/off.log" -o io_uring --stats "$work/off.stats" "$work/off.src"; then
	ok "off: mounted with -o io_uring and enable_uring=N"
	check "off: stderr says why" grep -q 'io_uring off: the fuse module parameter enable_uring is N' \
		"$work/off.log"
	check "off: 50 files through /dev/fuse" files "$work/off" "$work/off.src" 50
	c=$(counters "$dpid" "$work/off.stats")
	total=$(count total <<<"$c")
	check "off: no request from a ring, $total from /dev/fuse" \
		[ "$(count uring <<<"$c")" -eq 0 -a "$total" -gt 100 ]
	check "off: no ring thread" no_rings "$dpid"
	umount_view "$work/off"
	wait "$dpid"
else
	bad "off: mounted with -o io_uring and enable_uring=N"
	cat "$work/off.log"
fi
# Detached, the reason is said before the daemon leaves the terminal.
mkdir -p "$work/bg"
if mount_view "$work/bg" -o io_uring "$work/off.src" 2>"$work/bg.log"; then
	check "bg: the detaching daemon says why on the terminal" \
		grep -q 'io_uring off: the fuse module parameter' "$work/bg.log"
	umount_view "$work/bg"
else
	bad "bg: mounted with -o io_uring and enable_uring=N"
fi

echo "$old" >"$param"
check "enable_uring put back to $old" [ "$(cat "$param")" = "$old" ]
tap_done
