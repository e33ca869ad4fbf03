#!/bin/bash
# SPDX-License-Identifier: MIT
#
# jailrun's wall, end to end on a real jailfs mount:
#  - address families: an allowlist (AF_UNIX, AF_INET, AF_INET6, netlink
#    route); AF_VSOCK, AF_PACKET, AF_ALG... answer EAFNOSUPPORT
#  - the caller's terminal: settings restored after the command (also after
#    a timeout), window size, TIOCSTI and TCXONC refused
#  - /tmp and /dev/shm: bounded tmpfs ([run] tmp_size, shm_size), ENOSPC past it
#  - the timeout returns, the view torn down, when the one-shot view's daemon
#    is stopped; a daemon killed under the command is reported
#  - /etc: only the certificate parts of /etc/ssl; an /etc entry holding a
#    file the jailed uid could read but not everyone is left out (root, jftest)
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
F=${JAILFS:?JAILFS not set}
SRC=${JF_SRCDIR:?JF_SRCDIR not set}

# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
require_root_fuse

T=$(mktemp -d /tmp/jf-wall.XXXXXX)
P=$T/proj
M=$T/mnt
KEY=/etc/ssl/private/jf-wall-test.key
SECRET=/etc/ssl/certs/jf-wall-secret.pem
cleanup() {
	fusermount3 -u "$M" 2>/dev/null || umount -l "$M" 2>/dev/null
	stop_persistent
	rm -f "$KEY" "$SECRET"
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$P" "$M"

# ---- probes (scripts: the guardrails refuse python3 -c) ----
cat >"$P/sock.py" <<'EOF'
import errno, socket
def probe(name, fam, typ=socket.SOCK_STREAM, proto=0, pair=False):
    try:
        s = socket.socketpair(fam, typ, proto) if pair else socket.socket(fam, typ, proto)
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
probe("unix", socket.AF_UNIX)
probe("unix-pair", socket.AF_UNIX, pair=True)
probe("inet", socket.AF_INET)
probe("inet6", socket.AF_INET6, socket.SOCK_DGRAM)
probe("netlink-route", socket.AF_NETLINK, socket.SOCK_RAW, 0)
probe("netlink-audit", socket.AF_NETLINK, socket.SOCK_RAW, 9)
probe("netlink-uevent", socket.AF_NETLINK, socket.SOCK_RAW, 15)
probe("vsock", socket.AF_VSOCK)
probe("vsock-pair", socket.AF_VSOCK, pair=True)
probe("packet", socket.AF_PACKET, socket.SOCK_RAW)
probe("alg", socket.AF_ALG, socket.SOCK_SEQPACKET)
probe("key", 15, socket.SOCK_RAW, 2)
probe("xdp", 44, socket.SOCK_RAW)
probe("bluetooth", 31, socket.SOCK_RAW)
probe("unspec", 0)
probe("past-af-max", 200)
print("getaddrinfo", socket.getaddrinfo("localhost", 80, socket.AF_UNSPEC, socket.SOCK_STREAM)[0][4][1])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.sendall(b"hi")
print("loopback", a.recv(2).decode())
EOF
cat >"$P/tty.py" <<'EOF'
import errno, fcntl, struct, termios
def probe(name, req, arg):
    try:
        fcntl.ioctl(0, req, arg); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
probe("tiocsti", termios.TIOCSTI, b"x")
probe("tiocswinsz", termios.TIOCSWINSZ, struct.pack("HHHH", 5, 5, 0, 0))
probe("tcxonc", termios.TCXONC, termios.TCOOFF)
probe("tiocsetd", termios.TIOCSETD, struct.pack("i", 2))
EOF
cat >"$P/tty2.py" <<'EOF'
import errno, fcntl, os, sys, termios
def probe(name, fn):
    try:
        fn(); print(name, "ok")
    except (OSError, termios.error) as e:
        print(name, errno.errorcode.get(e.args[0], e.args[0]))
probe("tiocexcl", lambda: fcntl.ioctl(0, termios.TIOCEXCL))
if sys.argv[1:] == ["excl"]:
    sys.exit(0)
probe("tcflsh", lambda: termios.tcflush(0, termios.TCIFLUSH))
probe("tiocnxcl", lambda: fcntl.ioctl(0, termios.TIOCNXCL))
os.set_blocking(0, False)
print("nonblock set", not os.get_blocking(0))
sys.stdout.flush()
if len(sys.argv) > 1:
    import time; time.sleep(30)
EOF
cat >"$P/esc.sh" <<'EOF'
printf 'A\033]52;c;ZWNobyBvd25lZAo=\007B\033[8;5;5tC\033[31mred\033[0mD\033[8m'
printf 'E\033]0;title\033\\F\033[6nG\033[?1049hH\033[2KI\n' >&2
[ "${1:-}" = hang ] && sleep 30
exit 0
EOF
cat >"$P/esc0.sh" <<'EOF'
printf 'X\033]52;c;AAAA\007Y' >&0
EOF
cat >"$P/stty-hang.sh" <<'EOF'
stty raw -echo
sleep 30
EOF
cat >"$P/fill.py" <<'EOF'
import errno, sys
for d in ("/tmp", "/dev/shm"):
    n = 0
    try:
        with open(d + "/fill", "wb") as f:
            while n < (int(sys.argv[1]) << 20):
                f.write(b"\0" * 65536); f.flush(); n += 65536
        print(d, "ok", n)
    except OSError as e:
        print(d, errno.errorcode.get(e.errno, e.errno), n)
EOF
cat >"$P/mounts.sh" <<'EOF'
grep -E ' (/tmp|/dev/shm) ' /proc/self/mounts | cut -d' ' -f2,4
EOF

if ! "$F" "$P" "$M"; then
	echo "Bail out! jailfs did not mount $P on $M"
	exit 1
fi
cd "$P" || exit 1
R=(--root "$M")

# ---- address families ----
out=$("$J" "${R[@]}" -- python3 sock.py 2>&1)
want="unix ok
unix-pair ok
inet ok
inet6 ok
netlink-route ok
netlink-audit EPROTONOSUPPORT
netlink-uevent EPROTONOSUPPORT
vsock EAFNOSUPPORT
vsock-pair EAFNOSUPPORT
packet EAFNOSUPPORT
alg EAFNOSUPPORT
key EAFNOSUPPORT
xdp EAFNOSUPPORT
bluetooth EAFNOSUPPORT
unspec EAFNOSUPPORT
past-af-max EAFNOSUPPORT
getaddrinfo 80
loopback hi"
check "socket families: allowlist, EAFNOSUPPORT for the rest" [ "$out" = "$want" ]
[ "$out" = "$want" ] || diff <(echo "$want") <(echo "$out")
out=$("$J" "${R[@]}" -- ip -o addr show lo 2>&1)
check "ip addr (netlink route) works: $out" grep -q "inet 127.0.0.1" <<<"$out"
out=$("$J" "${R[@]}" --net -- python3 sock.py 2>&1)
check "--net: the same families" grep -qx "vsock EAFNOSUPPORT" <<<"$out"

# ---- the caller's terminal ----
PTY=("$SRC/tests/mount/jailrun-pty.py")
out=$(python3 "${PTY[@]}" "$J" "${R[@]}" -- stty rows 5 -echo)
check "stty rows 5 -echo: settings and window size unchanged afterwards" \
	eval 'grep -qx "termios same" <<<"$out" && grep -qx "echo on" <<<"$out" && grep -qx "winsize 40x100" <<<"$out"'
out=$(python3 "${PTY[@]}" "$J" "${R[@]}" -- stty -echo)
check "stty -echo (allowed) is undone when the command ends" \
	eval 'grep -qx "exit 0" <<<"$out" && grep -qx "termios same" <<<"$out" && grep -qx "echo on" <<<"$out"'
out=$(python3 "${PTY[@]}" "$J" "${R[@]}" --timeout 1 -- sh stty-hang.sh)
check "stty raw -echo then a timeout: restored too" \
	eval 'grep -qx "exit 124" <<<"$out" && grep -qx "termios same" <<<"$out"'
out=$(python3 "${PTY[@]}" "$J" "${R[@]}" -- python3 tty.py)
check "TIOCSTI, TIOCSWINSZ, TCXONC, TIOCSETD refused (EPERM)" \
	eval '[ "$(grep -oE "(tiocsti|tiocswinsz|tcxonc|tiocsetd) EPERM" <<<"$out" | wc -l)" -eq 4 ] && grep -qx "winsize 40x100" <<<"$out"'

out=$(python3 "${PTY[@]}" "$J" "${R[@]}" -- python3 tty2.py)
check "TIOCEXCL, TIOCNXCL, TCFLSH refused; O_NONBLOCK undone; termios same" \
	eval '[ "$(grep -oE "(tiocexcl|tcflsh|tiocnxcl) EPERM" <<<"$out" | wc -l)" -eq 3 ] && grep -q "nonblock set True" <<<"$out" && grep -qx "exclusive off" <<<"$out" && grep -qx "nonblock off" <<<"$out" && grep -qx "termios same" <<<"$out"'
out=$(python3 "${PTY[@]}" "$J" "${R[@]}" -- python3 tty2.py excl)
check "TIOCEXCL alone: the terminal is not left exclusive" \
	eval 'grep -qx "exit 0" <<<"$out" && grep -qx "exclusive off" <<<"$out"'
out=$(python3 "${PTY[@]}" "$J" --source "$P" --timeout 2 -- python3 tty2.py hang)
check "--source: O_NONBLOCK then a timeout: undone too" \
	eval 'grep -qx "exit 124" <<<"$out" && grep -q "nonblock set True" <<<"$out" && grep -qx "nonblock off" <<<"$out" && grep -qx "exclusive off" <<<"$out"'

# terminal output: what acts on the terminal or the clipboard is dropped
# shellcheck disable=SC2034 # used in the eval strings below
ESC=$'\033'
out=$(python3 "${PTY[@]}" "$J" "${R[@]}" -- sh esc.sh)
check "stdout and stderr on a terminal: OSC 52, CSI t, conceal, OSC 0, CSI 6n, ?1049h dropped; colours and erase kept" \
	eval 'grep -qF "AB" <<<"$out" && grep -qF "C${ESC}[31mred${ESC}[0mD" <<<"$out" && grep -qF "EFGH${ESC}[2KI" <<<"$out" && ! grep -qF "${ESC}]" <<<"$out" && ! grep -qF "${ESC}[8" <<<"$out" && ! grep -qF "${ESC}[6n" <<<"$out" && ! grep -qF "${ESC}[?" <<<"$out"'
out=$(python3 "${PTY[@]}" "$J" "${R[@]}" -- sh esc0.sh)
check "a write to the terminal on stdin does not reach it (stdin is read-only)" \
	eval '! grep -qF "${ESC}]52" <<<"$out" && ! grep -qF "XY" <<<"$out" && grep -qi "printf.*error" <<<"$out"'
out=$(python3 "${PTY[@]}" "$J" --source "$P" --timeout 1 -- sh esc.sh hang)
check "--source: jailrun's own report comes after a reset" \
	eval 'grep -qF "${ESC}[0mjailrun: timed out" <<<"$out" && ! grep -qF "${ESC}[8m" <<<"$out"'
out=$("$J" "${R[@]}" -- sh esc.sh 2>&1 | od -An -c | tr -d " \n")
check "not a terminal: the bytes pass as they are" grep -qF '033]52;c;' <<<"$out"

# ---- /tmp and /dev/shm ----
printf '[options]\ndefault = safe\n[run]\ntmp_size = 1M\nshm_size = 2M\n' >"$T/small.ini"
out=$("$J" "${R[@]}" --policy "$T/small.ini" -- python3 fill.py 8 2>&1)
check "tmp_size = 1M: ENOSPC after 1 MiB in /tmp" grep -qx "/tmp ENOSPC 1048576" <<<"$out"
check "shm_size = 2M: ENOSPC after 2 MiB in /dev/shm" grep -qx "/dev/shm ENOSPC 2097152" <<<"$out"
mem=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024))
def=$((mem / 4 < 1073741824 ? mem / 4 : 1073741824))
# shellcheck disable=SC2017 # whole pages first, then KiB
def_k=$(((def + 4095) / 4096 * 4))
out=$("$J" "${R[@]}" -- sh mounts.sh 2>&1)
check "default: /tmp and /dev/shm hold at most min(1 GiB, RAM/4) (size=${def_k}k)" \
	eval '[ "$(grep -c "size=${def_k}k" <<<"$out")" -eq 2 ]'
printf '[options]\ndefault = safe\n[run]\ntmp_size = unlimited\n' >"$T/unl.ini"
out=$("$J" "${R[@]}" --policy "$T/unl.ini" -- sh mounts.sh 2>&1)
check "tmp_size = unlimited: no size on /tmp, the default on /dev/shm" \
	eval 'grep -qx "/tmp rw,nosuid,nodev,relatime" <<<"$out" && grep -q "/dev/shm .*size=${def_k}k" <<<"$out"'
printf '[options]\ndefault = safe\n[run]\ntmp_size = 0\n' >"$T/zero.ini"
out=$("$J" "${R[@]}" --policy "$T/zero.ini" -- true 2>&1); rc=$?
check "tmp_size = 0 is a policy error (125)" \
	eval '[ $rc -eq 125 ] && grep -q "tmp_size must be above 0" <<<"$out"'
# A file holding only [run] would make the project read-only (a file's
# default zone is restricted, the built-in default's safe): refused, saying
# why; with default = safe the project is as writable as without --policy.
printf '[run]\ntmp_size = 1M\n' >"$T/runonly.ini"
out=$("$J" --source "$P" --policy "$T/runonly.ini" -- touch made-here 2>&1); rc=$?
check "--source, a [run]-only policy file: a policy error (125) that says why" \
	eval '[ $rc -eq 125 ] && grep -q "no rule and no .default. makes anything SAFE" <<<"$out" &&
		[ ! -e "$P/made-here" ]'
out=$("$J" "${R[@]}" --policy "$T/runonly.ini" -- true 2>&1); rc=$?
check "--root, a [run]-only policy file: a policy error (125)" \
	eval '[ $rc -eq 125 ] && grep -q "add .default = safe." <<<"$out"'
printf '[options]\ndefault = safe\n[run]\ntmp_size = 1M\n' >"$T/runsafe.ini"
out=$("$J" --source "$P" --policy "$T/runsafe.ini" -- touch made-here 2>&1); rc=$?
check "--source, [run] with default = safe: the project is writable ($rc)" \
	eval '[ $rc -eq 0 ] && [ -e "$P/made-here" ]'
rm -f "$P/made-here"

# ---- the timeout returns whatever the view's daemon does ----
S=$T/stuck
mkdir -p "$S"
# lookups of fresh names as fast as four processes can: a daemon stopped at
# a random moment is often holding one of them, whose caller then cannot be
# killed until the connection is aborted
cat >"$S/look.py" <<'EOF'
import os
i = 0
while True:
    try:
        os.stat("n%d-%d" % (os.getpid(), i))
    except OSError:
        pass
    i += 1
EOF
cat >"$S/loop.sh" <<'EOF'
for _ in 1 2 3 4; do python3 look.py & done
wait
EOF
chmod -R a+rX "$S"
chmod 755 "$T"
# stuck_run USER SIGNAL ARGS...: as USER, jailrun --json ARGS... -- sh loop.sh
# (or $STUCK_CMD) in $S, the view's daemon sent SIGNAL 1.5 s in; sets js (the result), secs
stuck_run() {
	local user=$1 sig=$2 d start jp
	shift 2
	start=$(date +%s%N)
	# bounded, so that a jailrun that never returns fails instead of hanging
	# shellcheck disable=SC2086 # STUCK_CMD is a command and its words
	(cd "$S" && exec timeout -s KILL 40 setpriv --reuid="$user" --regid="$user" \
		--init-groups -- "$J" --json "$@" -- ${STUCK_CMD:-sh loop.sh} >"$T/stuck.json" 2>"$T/stuck.err") &
	jp=$!
	sleep 1.5
	# every daemon serving $S (pgrep prints one pid a line)
	mapfile -t d < <(pgrep -f -- " $S /")
	[ "${#d[@]}" -gt 0 ] && kill "-$sig" "${d[@]}"
	wait "$jp"
	secs=$((($(date +%s%N) - start) / 1000000000))
	js=$(cat "$T/stuck.json")
	[ "${#d[@]}" -gt 0 ] && kill -CONT "${d[@]}" 2>/dev/null
}
left() { grep -c "fuse.jailfs $S " /proc/self/mountinfo; }
STUCK_RE="did not end 2 s after SIGKILL.*the view was aborted"
old_fuse_mode=$(stat -c %a /dev/fuse)
chmod 0666 /dev/fuse # jftest mounts through fusermount3
# one-shot views (--fresh): a persistent view's daemon is not jailrun's child
# to abort (test-jailrun-persist.sh covers its crash)
for a in "root --source $S --fresh" "root --source $S --audit $T/stuck-audit.log" \
	"jftest --source $S --fresh"; do
	read -r user opts <<<"$a"
	in_time=true stuck_seen=false
	for _ in 1 2 3 4 5; do
		# shellcheck disable=SC2086 # the options are split on purpose
		stuck_run "$user" STOP --timeout 3 --grace 1 $opts
		if ! [ "$secs" -lt 8 ] || [ "$(left)" -ne 0 ] || [ "$(jq -r .timed_out <<<"$js")" != true ]; then
			in_time=false
			echo "# $secs s, $(left) left: $js $(cat "$T/stuck.err")"
			break
		fi
		if jq -e --arg re "$STUCK_RE" '.error | test($re)' <<<"$js" >/dev/null; then
			stuck_seen=true
			break
		fi
	done
	check "$a, daemon stopped: --timeout 3 returns within 8 s, nothing left mounted" $in_time
	check "$a, daemon stopped while holding a request: aborted, the result says so" $stuck_seen
	# shellcheck disable=SC2086
	stuck_run "$user" KILL --timeout 20 $opts
	check "$a, daemon killed: the run ends, the result says so ($secs s)" \
		eval '[ "$secs" -lt 15 ] && [ "$(left)" -eq 0 ] && [ "$(jq -r .exit_code <<<"$js")" = 125 ] && jq -e ".error | test(\"daemon .*exited under the command: killed by SIGKILL\")" <<<"$js" >/dev/null'
done
chmod "$old_fuse_mode" /dev/fuse
# --root: the view is not ours to abort, but jailrun returns all the same
mkdir -p "$T/smnt"
if "$F" --audit "$T/smnt-audit.log" "$S" "$T/smnt"; then
	in_time=true stuck_seen=false
	for _ in 1 2 3 4 5; do
		stuck_run root STOP --timeout 3 --grace 1 --root "$T/smnt"
		sleep 0.5 # the processes the daemon held, now free, end
		if ! [ "$secs" -lt 8 ] || [ "$(jq -r .timed_out <<<"$js")" != true ]; then
			in_time=false
			echo "# $secs s: $js $(cat "$T/stuck.err")"
			break
		fi
		if jq -e '.error | test("stay blocked until the daemon of .* answers")' <<<"$js" >/dev/null; then
			stuck_seen=true
			break
		fi
	done
	check "--root, daemon stopped: --timeout 3 returns within 8 s" $in_time
	check "--root, daemon stopped while holding a request: the result says the processes wait for it" $stuck_seen
	STUCK_CMD="sleep 30" stuck_run root STOP --timeout 3 --root "$T/smnt"
	check "--root, daemon stopped, command not in the view: returns within 8 s ($secs s), refusals unknown" \
		eval '[ "$secs" -lt 8 ] && jq -e ".refusals_unknown | test(\"did not answer within 2 s\")" <<<"$js" >/dev/null'
	fusermount3 -u "$T/smnt" || umount -l "$T/smnt"
else
	bad "jailfs did not mount $S on $T/smnt"
fi

# ---- /etc: nothing the jailed uid could read that everyone could not ----
mkdir -p /etc/ssl/private /etc/ssl/certs
(umask 077 && echo PRIVATE-KEY >"$KEY")
cat >"$P/etc.sh" <<'EOF'
for f in /etc/ssl/private /etc/ssl/private/jf-wall-test.key /etc/ssl/certs \
	/etc/ssl/certs/jf-wall-secret.pem /etc/ssl/openssl.cnf /etc/passwd; do
	if [ -e "$f" ]; then echo "$f present"; else echo "$f absent"; fi
done
cat /etc/ssl/private/jf-wall-test.key /etc/ssl/certs/jf-wall-secret.pem 2>/dev/null
exit 0
EOF
out=$("$J" "${R[@]}" -- sh etc.sh 2>&1)
check "root: /etc/ssl/private is not in the jail, the certificates and openssl.cnf are" \
	eval 'grep -qx "/etc/ssl/private absent" <<<"$out" && grep -qx "/etc/ssl/certs present" <<<"$out" && grep -qx "/etc/ssl/openssl.cnf present" <<<"$out" && ! grep -q PRIVATE-KEY <<<"$out"'
(umask 077 && echo CERT-SECRET >"$SECRET")
out=$("$J" "${R[@]}" -- sh etc.sh 2>&1)
check "root: /etc/ssl/certs holding a root-only file is left out, with a message" \
	eval 'grep -qx "/etc/ssl/certs absent" <<<"$out" && ! grep -q CERT-SECRET <<<"$out" && grep -q "leaving /etc/ssl/certs out of the jail: .*jf-wall-secret.pem" <<<"$out" && grep -qx "/etc/passwd present" <<<"$out"'
mkdir -p "$T/ro"
"$F" --read-only "$P" "$T/ro" || bad "jailfs --read-only did not mount"
for a in "--source $P" "--source $P --audit $T/audit.log" "--root $T/ro"; do
	# shellcheck disable=SC2086 # the options are split on purpose
	out=$("$J" $a -- sh etc.sh 2>&1)
	check "root, $a: neither the key nor the root-only certificate" \
		eval 'grep -qx "/etc/ssl/private absent" <<<"$out" && grep -qx "/etc/ssl/certs absent" <<<"$out" && ! grep -qE "PRIVATE-KEY|CERT-SECRET" <<<"$out"'
done
fusermount3 -u "$T/ro"
if id jftest >/dev/null 2>&1; then
	U=$T/uetc
	mkdir -p "$U"
	cp "$P/etc.sh" "$U/"
	chown -R jftest "$U"
	chmod 755 "$T"
	out=$(su jftest -s /bin/sh -c "cd '$U' && '$J' --root '$U' --test-plain-root -- sh etc.sh" 2>&1)
	check "jftest: root-only files do not matter (unreadable): /etc/ssl/certs stays" \
		eval 'grep -qx "/etc/ssl/certs present" <<<"$out" && grep -qx "/etc/ssl/private absent" <<<"$out" && ! grep -qE "PRIVATE-KEY|CERT-SECRET|leaving" <<<"$out"'
	chown jftest "$SECRET"
	out=$(su jftest -s /bin/sh -c "cd '$U' && '$J' --root '$U' --test-plain-root -- sh etc.sh" 2>&1)
	check "jftest: a jftest-only file in /etc/ssl/certs leaves it out" \
		eval 'grep -qx "/etc/ssl/certs absent" <<<"$out" && ! grep -q CERT-SECRET <<<"$out" && grep -q "leaving /etc/ssl/certs out" <<<"$out"'
else
	bad "/etc as jftest: no jftest user"
fi
rm -f "$KEY" "$SECRET"

tap_done
