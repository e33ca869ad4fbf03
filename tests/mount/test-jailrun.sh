#!/bin/bash
# SPDX-License-Identifier: MIT
#
# jailrun end to end: real jailfs mounts, real jails, real commands.
#  - the seed's examples and sentinel codes through the CLI (--json and not)
#  - through the wall: host secrets by absolute path, /proc/1/environ, setsid
#    and double-forked grandchildren after return and after a timeout, 5 GB of
#    output under 64 MiB RSS, no network, seccomp, no leaked fd, env scrub
#  - --request, --cwd, one-shot --source (cleanup on success, on Ctrl-C), --audit
#  - the wall as an unprivileged user (jftest) through a user namespace
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
F=${JAILFS:?JAILFS not set}

# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
require_root_fuse

T=$(mktemp -d /tmp/jf-jailrun.XXXXXX)
P=$T/proj
M=$T/mnt
cleanup() {
	local d
	for d in "$M" "$T/mnt2" "$T/full" "$T/stale" "$T/repo/sub"; do
		mountpoint -q "$d" 2>/dev/null && { fusermount3 -u "$d" 2>/dev/null || umount -l "$d"; }
	done
	pkill -f "sleep 60[0-9]" 2>/dev/null
	stop_persistent
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$P/src" "$M"
echo hello >"$P/README"
echo 'int main(void) { return 0; }' >"$P/src/main.c"
echo 'API_TOKEN=projsecret' >"$P/.env"
echo HOSTSECRET42 >"$T/host-secret"
# probes: what a determined program would do (scripts get past any name list)
cat >"$P/exit3.sh" <<'EOF'
echo out; echo err >&2; exit 3
EOF
cat >"$P/selfkill.sh" <<'EOF'
kill -TERM $$
EOF
printf 'printf "\\377\\376ok"\n' >"$P/badutf8.sh"
cat >"$P/secret.sh" <<EOF
cat "$T/host-secret"; cat /proc/1/environ; ls -A /root /home /run 2>&1; echo; ls /proc | grep -c '^[0-9]'
EOF
cat >"$P/spawn.sh" <<'EOF'
setsid sleep 601 >/dev/null 2>&1 &
( setsid sh -c 'sleep 602' >/dev/null 2>&1 & ) &
nohup sleep 603 >/dev/null 2>&1 &
echo spawned
EOF
cat >"$P/spawn-hang.sh" <<'EOF'
setsid sleep 604 >/dev/null 2>&1 &
( ( sleep 605 >/dev/null 2>&1 & ) & )
trap '' TERM
sleep 606
EOF
cat >"$P/wall.sh" <<'EOF'
touch /usr/jf-x 2>/dev/null && echo "WROTE /usr"
touch /jf-x 2>/dev/null && echo "WROTE /"
unshare -U true 2>/dev/null && echo "UNSHARE OK"
mount -t tmpfs x /tmp 2>/dev/null && echo "MOUNT OK"
{ echo 1 > /proc/sys/kernel/sysrq; } 2>/dev/null && echo "SYSCTL OK"
test -e /etc/shadow && echo "SHADOW VISIBLE"
test -e /var/run/docker.sock && echo "DOCKER SOCK"
ls /proc/self/fd | tr '\n' ' '
grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status | tr '\n' ' '
cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' ' | tr '\n' ' '
echo
EOF
cat >"$P/write.sh" <<'EOF'
echo new >written.txt; cat .env 2>/dev/null; echo done
EOF
cat >"$P/net.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.settimeout(2)
try:
    s.connect(("1.1.1.1", 53)); print("CONNECTED")
except OSError as e:
    print("refused", e.errno)
EOF
cat >"$P/env.sh" <<'EOF'
env | sort
EOF

if ! "$F" "$P" "$M"; then
	echo "Bail out! jailfs did not mount $P on $M"
	exit 1
fi
grep -q " $M .* fuse.jailfs " /proc/self/mountinfo || { echo "Bail out! no fuse.jailfs at $M"; exit 1; }
cd "$P" || exit 1
R=(--root "$M")

# ---- --root must be a jailfs mount ----
out=$("$J" --root "$T" -- true 2>&1); rc=$?
check "--root on a plain directory is refused (125)" [ $rc -eq 125 ]
check "... naming mountinfo" grep -q "not a jailfs mount" <<<"$out"

# ---- basics ----
out=$("$J" "${R[@]}" -- cat README); rc=$?
check "cat README through the view" [ $rc -eq 0 -a "$out" = hello ]
out=$("$J" "${R[@]}" -- pwd)
check "cwd is the project's own path" [ "$out" = "$P" ]
out=$("$J" "${R[@]}" --cwd src -- pwd)
check "--cwd src" [ "$out" = "$P/src" ]
"$J" "${R[@]}" --cwd ../.. -- pwd >/dev/null 2>&1
check "--cwd leaving the view is an error" [ $? -eq 125 ]
"$J" "${R[@]}" -- sh exit3.sh >/dev/null 2>&1
check "exit status is the command's (3)" [ $? -eq 3 ]
"$J" "${R[@]}" -- sh selfkill.sh >/dev/null 2>&1
check "killed by SIGTERM: 143" [ $? -eq 143 ]

# ---- seed examples: refused before anything runs ----
deny_case() { # RULE ARGV...
	local rule=$1; shift
	local err js
	err=$("$J" "${R[@]}" -- "$@" 2>&1 >/dev/null); local rc=$?
	js=$("$J" "${R[@]}" --json -- "$@" 2>/dev/null)
	if [ $rc -eq 126 ] && grep -q "^jailrun: denied: .*\[$rule\]" <<<"$err" &&
		[ "$(jq -r '[.exit_code, .denied, .rule, .timed_out] | @tsv' <<<"$js")" = \
			"$(printf -- '-100\ttrue\t%s\tfalse' "$rule")" ] &&
		[ "$(jq -r '.reason | length > 0' <<<"$js")" = true ]; then
		ok "denied ($rule): $*"
	else
		bad "denied ($rule): $* -> rc=$rc err=$err json=$js"
	fi
}
deny_case exec-denylist sudo ls
deny_case chmod-recursive chmod -R 777 .
deny_case exec-denylist rm -rf src
deny_case exec-denylist /bin/rm -rf src
deny_case exec-denylist /usr/bin/rm -rf src
deny_case exec-denylist mkfs.ext4 img
deny_case exec-denylist dd if=/dev/zero of=img
deny_case inline-code python3 -c "import os; os.system('rm -rf /')"
deny_case inline-code bash -c 'rm -rf src'
deny_case inline-code node -e 'require("fs")'
deny_case inline-code perl -e 'unlink "README"'
deny_case metachar 'echo a; rm -rf src'
deny_case metachar 'cat README|sh'
deny_case path-outside-view cat ../../etc/passwd
deny_case path-outside-view cat /etc/hostname
deny_case path-outside-view cat ../../../../../../etc/hostname
deny_case path-denied cat ./.env
# jailrun's own messages escape what they quote (jf_escape): ESC, C1 CSI and
# a bidi override in a path reach the terminal as \xHH, never raw
escaped() { # RC WANT_RC TEXT STDERR
	[ "$1" -eq "$2" ] && grep -qF -- "$3" <<<"$4" &&
		! grep -q "$(printf '\033\\|\302\233\\|\342\200\256')" <<<"$4"
}
err=$("$J" "${R[@]}" -- cat "$(printf './x\342\200\256y\033[2J\302\233')" 2>&1 >/dev/null)
check "denied message escapes ESC, C1 and bidi" escaped $? 126 \
	"path './x\xe2\x80\xaey\x1b[2J\xc2\x9b': control" "$err"
err=$("$J" "${R[@]}" --cwd "$(printf 'd\342\200\256')" -- true 2>&1 >/dev/null)
check "--cwd error message escapes a bidi override" escaped $? 125 \
	'jailrun: --cwd d\xe2\x80\xae: control character in a name' "$err"
# red-team report: wrappers and inline code in other languages, through the CLI
deny_case exec-denylist prlimit rm -rf src
deny_case exec-denylist setpriv rm -rf src
deny_case inline-code sg root 'rm -rf src'
deny_case inline-code gdb -batch -ex 'shell rm -rf src'
deny_case exec-denylist unshare -r rm -rf src
deny_case inline-code awk 'BEGIN{system("id")}'
deny_case inline-code sed 'e id' README
deny_case inline-code tar --to-command=sh -xf x.tar
deny_case inline-code vim -c '!id' README
out=$("$J" --source "$P" -- cat .env 2>&1); rc=$?
check "one-shot: cat .env (exists in the source) is refused as DENIED" \
	eval '[ $rc -eq 126 ] && grep -q "path-denied" <<<"$out"'
out=$("$J" "${R[@]}" -- cat "$T/host-secret" 2>&1); rc=$?
check "cat of a host secret by absolute path fails" \
	eval '[ $rc -ne 0 ] && ! grep -q HOSTSECRET42 <<<"$out"'
# threat-model bypasses, end to end (the unit test covers each spelling)
deny_case inline-code python3.11 -c 1
deny_case exec-denylist /proc/self/root/usr/bin/rm -rf src
deny_case exec-denylist ./../../../bin/rm -rf src
deny_case exec-denylist env -S 'rm -rf src'
deny_case exec-denylist nice nohup timeout 5 stdbuf -oL setsid xargs rm
deny_case exec-denylist find . -exec rm '{}' ';'
deny_case find-delete find . -delete
deny_case exec-denylist busybox rm -rf src
deny_case git-alias git -c 'alias.x=!rm -rf src' x
deny_case inline-code bash -xc 'id'
cp /usr/bin/rm "$P/tool"
deny_case exec-copy ./tool -rf src
rm -f "$P/tool"
check "nothing was removed by the refused commands" [ -f "$P/src/main.c" -a -f README ]
"$J" "${R[@]}" --allow-exec rm -- rm -f "$P/nonexistent" 2>/dev/null
check "--allow-exec rm lets rm run" [ $? -eq 0 ]
"$J" "${R[@]}" --deny-exec cat -- cat README >/dev/null 2>&1
check "--deny-exec cat refuses cat" [ $? -eq 126 ]
out=$("$J" "${R[@]}" --shell -- 'echo a | tr a b; echo c > /dev/null')
check "--shell runs a pipeline" [ "$out" = b ]
"$J" "${R[@]}" --shell -- 'ls; rm -rf src' >/dev/null 2>&1
check "--shell still refuses rm inside the string" [ $? -eq 126 ]

# ---- result fields ----
js=$("$J" "${R[@]}" --json -- sh exit3.sh)
check "json exit_code/stdout/stderr" [ "$(jq -r '[.exit_code, .signal, .stdout, .stderr, .denied, .timed_out, .stdout_truncated] | @json' <<<"$js")" = '[3,0,"out\n","err\n",false,false,false]' ]
check "json duration_ms and null reason/rule" [ "$(jq -r '(.duration_ms >= 0) and (.reason == null) and (.rule == null)' <<<"$js")" = true ]
js=$("$J" "${R[@]}" --json -- sh selfkill.sh)
check "json signal 15, exit_code 143" [ "$(jq -c '[.exit_code, .signal]' <<<"$js")" = '[143,15]' ]
js=$("$J" "${R[@]}" --json -- sh badutf8.sh)
check "invalid UTF-8 becomes U+FFFD" [ "$(jq -r .stdout <<<"$js")" = $'\uFFFD\uFFFDok' ]
check "invalid UTF-8: stdout_b64 has the exact bytes" \
	[ "$(jq -r .stdout_b64 <<<"$js" | base64 -d | od -An -tx1 | tr -d ' \n')" = fffe6f6b ]
check "valid UTF-8: stdout_b64 is null" [ "$("$J" "${R[@]}" --json -- echo hi | jq -c .stdout_b64)" = null ]

# ---- timeout ----
start=$(date +%s%N)
"$J" "${R[@]}" --timeout 1 -- sleep 30
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
check "timeout: exit 124 within 5 s (took ${ms} ms)" [ $rc -eq 124 -a $ms -lt 5000 ]
js=$("$J" "${R[@]}" --json --timeout 0.5 -- sleep 30)
check "timeout json: -101, timed_out" [ "$(jq -c '[.exit_code, .timed_out, .denied]' <<<"$js")" = '[-101,true,false]' ]
"$J" "${R[@]}" --timeout 1 --grace 0.5 -- sh spawn-hang.sh
check "a command ignoring SIGTERM is killed after the grace period (124)" [ $? -eq 124 ]
sleep 0.2
check "... and its setsid/double-forked children are gone" [ -z "$(pgrep -f 'sleep 60[456]')" ]

# ---- grandchildren die with the jail ----
out=$("$J" "${R[@]}" -- sh spawn.sh)
sleep 0.2
check "setsid sleep 600 etc. are gone when jailrun returns" [ "$out" = spawned -a -z "$(pgrep -f 'sleep 60[123]')" ]

# ---- truncation and bounded memory ----
js=$("$J" "${R[@]}" --json --max-output 1000 -- head -c 100000 /dev/zero)
# 500 bytes of head, the marker line (NULs end no line: a newline first),
# 500 of tail
mark=$'\n[... 99000 bytes omitted ...]\n'
check "json truncation: head and tail of 100000 kept, the marker between" \
	[ "$(jq -c '[(.stdout | length), .stdout_truncated, .stdout_bytes, .exit_code, .stdout[500:'$((500 + ${#mark}))']]' <<<"$js")" = \
		"[$((1000 + ${#mark})),true,100000,0,$(jq -Rsc . <<<"${mark%$'\n'}")]" ]
# shellcheck disable=SC2034 # read by the eval below
cnt=$("$J" "${R[@]}" --max-output 1000 -- head -c 100000 /dev/zero 2>"$T/err" | wc -c)
check "live truncation: 1000 bytes through, then the marker and 500 of tail, note on stderr" \
	eval '[ "$cnt" -eq $((1000 + ${#mark} + 500)) ] && grep -q "stdout: kept the first 1000 and the last 500 bytes of 100000" "$T/err"'
rss=$(python3 - "$J" "$M" <<'EOF'
import resource, subprocess, sys
r = subprocess.run([sys.argv[1], "--root", sys.argv[2], "--json", "--", "head", "-c", "5G", "/dev/zero"],
                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
import json
res = json.loads(r.stdout)
ok = res["stdout_bytes"] == 5 << 30 and res["stdout_truncated"]
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if ok else -1)
EOF
)
check "5 GB of output: all drained, jailrun's max RSS ${rss} KiB < 64 MiB" [ "$rss" -gt 0 -a "$rss" -lt 65536 ]

# ---- the wall ----
out=$("$J" "${R[@]}" -- sh secret.sh 2>&1)
check "a host secret by absolute path is unreachable" bash -c '! grep -q HOSTSECRET42 <<<"$1"' _ "$out"
export JF_HOST_MARKER=hostmarker1234
out=$("$J" "${R[@]}" -- sh secret.sh 2>&1)
check "the host's /proc/1/environ is unreachable" bash -c '! grep -q hostmarker1234 <<<"$1"' _ "$out"
nproc=$(grep -E '^[0-9]+$' <<<"$out" | tail -n 1)
check "only the jail's processes are visible ($nproc)" eval '[ -n "$nproc" ] && [ "$nproc" -lt 10 ]'
check "no /home, /run; /root is the jail home, not the host's" eval '[ $(grep -cE "access .(/home|/run).: No such file" <<<"$out") -eq 2 ] && ! grep -qx ".ssh" <<<"$out"'
out=$("$J" "${R[@]}" -- sh wall.sh 9</etc/hostname 2>/dev/null)
check "read-only system, no unshare/mount/sysctl, no shadow, no docker.sock" bash -c '! grep -qE "WROTE|UNSHARE OK|MOUNT OK|SYSCTL OK|SHADOW|DOCKER" <<<"$1"' _ "$out"
check "no leaked fd (only 0 1 2 and ls's own)" grep -q "^0 1 2 3 CapEff" <<<"$out"
check "no capabilities, no_new_privs, seccomp filter" grep -q "CapEff:	0000000000000000 CapBnd:	0000000000000000 NoNewPrivs:	1 Seccomp:	2" <<<"$out"
check "no network by default: only lo" grep -q "Seccomp:	2 lo $" <<<"$out"
out=$("$J" "${R[@]}" -- python3 net.py 2>&1)
check "no network by default: connect fails ($out)" grep -q "^refused" <<<"$out"
out=$("$J" "${R[@]}" --net -- sh wall.sh 2>&1)
check "--net keeps the host's interfaces" bash -c '[ "$(tail -n 1 <<<"$1" | wc -w)" -gt 1 ]' _ "$(grep -o 'Seccomp:	2 .*' <<<"$out")"

# ---- environment ----
out=$(MY_API_TOKEN=t1 AWS_REGION=x LC_SECRET_KEY=z FOO=1 LANG=C.UTF-8 "$J" "${R[@]}" -- sh env.sh)
check "env: allowlist only, HOME the jail home at the user's path" bash -c 'grep -q "^LANG=C.UTF-8" <<<"$1" && grep -qx "HOME=$(realpath ~)" <<<"$1" && ! grep -qE "^(MY_API_TOKEN|AWS_REGION|LC_SECRET_KEY|FOO)=" <<<"$1"' _ "$out"
out=$(MY_API_TOKEN=t1 "$J" "${R[@]}" --env MY_API_TOKEN --env FOO=bar -- sh env.sh)
check "--env NAME passes a secret-looking name named exactly; NAME=VALUE sets" bash -c 'grep -q "^MY_API_TOKEN=t1" <<<"$1" && grep -q "^FOO=bar" <<<"$1"' _ "$out"
# a value that holds a secret is left out whatever its name, and said so
tok=$(python3 "$(dirname "${BASH_SOURCE[0]}")/../lib/fake-token.py")
js=$(LANG=$tok TZ="postgres://app:Xk3v9qLmT2""@db.internal/app" "$J" "${R[@]}" --json -- sh env.sh)
check "env: values holding a secret left out, named in env_dropped" bash -c '[ "$(jq -c ".env_dropped | sort" <<<"$1")" = "[\"LANG (github)\",\"TZ (connection-string)\"]" ] && ! grep -qE "LANG=|TZ=" <<<"$(jq -r .stdout <<<"$1")" && ! grep -qF "${2:4}" <<<"$1"' _ "$js" "$tok"
js=$(LANG=$tok "$J" "${R[@]}" --env LANG --json -- sh env.sh)
check "env: an exact --env passes a value holding a secret" bash -c '[ "$(jq -c .env_dropped <<<"$1")" = "[]" ] && grep -qx "LANG=$2" <<<"$(jq -r .stdout <<<"$1")"' _ "$js" "$tok"
out=$(LANG=$tok "$J" "${R[@]}" -- sh env.sh 2>&1 >/dev/null)
check "env: without --json, stderr names what was left out" grep -q "^jailrun: LANG (github) left out of the command's environment" <<<"$out"

# ---- --request ----
js=$(echo '{"argv": ["cat", "README"], "timeout_ms": 5000, "max_output_bytes": 3, "env": {"X": "1"}}' |
	"$J" "${R[@]}" --json --request -)
# 3 bytes of "hello\n": the head (2), the marker, the tail (1)
check "--request argv, max_output_bytes" [ "$(jq -c '[.stdout, .stdout_truncated, .exit_code]' <<<"$js")" = '["he\n[... 3 bytes omitted ...]\n\n",true,0]' ]
js=$(echo '{"command": "echo $((1+2)) | cat", "shell": true, "cwd": "src"}' | "$J" "${R[@]}" --json --request -)
check "--request command+shell, cwd" [ "$(jq -c '.stdout' <<<"$js")" = '"3\n"' ]
js=$(echo '{"argv": ["python3", "-c", "1"]}' | "$J" "${R[@]}" --json --request -)
check "--request refusal has the sentinel" [ "$(jq -c '[.exit_code, .rule]' <<<"$js")" = '[-100,"inline-code"]' ]
echo '{"argv": "ls"}' | "$J" "${R[@]}" --json --request - >/dev/null 2>&1
check "--request with a bad field is a usage error (2)" [ $? -eq 2 ]

# ---- one-shot --source --fresh (persistent views: test-jailrun-persist.sh) ----
out=$("$J" --source "$P" --fresh -- sh write.sh 2>&1)
check "one-shot: runs, .env invisible in the view" [ "$out" = "done" ]
check "one-shot: the write reached the source" [ "$(cat "$P/written.txt" 2>/dev/null)" = new ]
mounts_of_p() { grep -c " fuse.jailfs $P " /proc/self/mountinfo; }
# leftover private mountpoints: directories that are not mounted (other
# jailrun users may be running at the same time: theirs are mounted)
leftovers() {
	local d
	for d in /run/jailrun/view.*; do
		[ -d "$d" ] && ! mountpoint -q "$d" && echo "$d"
	done
}
check "one-shot: no jailfs mount left behind" [ "$(mounts_of_p)" -eq 1 ]
check "one-shot: private mountpoint removed" [ -z "$(leftovers)" ]
out=$(cd "$P/src" && "$J" --fresh -- cat main.c)
check "one-shot default --source . (from src/)" grep -q "int main" <<<"$out"
"$J" --source "$P" --fresh -- sleep 30 &
pid=$!
sleep 1
kill -INT $pid
wait $pid
rc=$?
check "one-shot: Ctrl-C stops it (130)" [ $rc -eq 130 ]
check "one-shot: ... and leaves no mount" [ "$(mounts_of_p)" -eq 1 -a -z "$(leftovers)" ]
rm -f "$P/written.txt"
js=$("$J" --source "$P" --audit "$T/audit.jsonl" --json -- sh write.sh)
check "--audit: result has audit counts" [ "$(jq -r '.audit | (.records > 0) and (.written_files >= 1)' <<<"$js")" = true ]
check "--audit: the file holds JSON Lines" bash -c 'jq -e . "$1" >/dev/null' _ "$T/audit.jsonl"

# ---- system files: what the jail shows read-only may be read ----
out=$("$J" "${R[@]}" -- head -n 40 /usr/include/stdio.h); rc=$?
check "cat /usr/include/stdio.h runs" eval '[ $rc -eq 0 ] && grep -q "stdio.h" <<<"$out"'
out=$("$J" "${R[@]}" -- head -n 3 /proc/cpuinfo); rc=$?
check "head /proc/cpuinfo runs (the jail's /proc)" eval '[ $rc -eq 0 ] && grep -q "^processor" <<<"$out"'
out=$("$J" "${R[@]}" -- cat /etc/os-release); rc=$?
check "cat /etc/os-release runs" eval '[ $rc -eq 0 ] && grep -q "^ID=" <<<"$out"'
out=$("$J" "${R[@]}" -- python3 /usr/lib/python3.11/this.py); rc=$?
check "python3 /usr/lib/python3.11/this.py runs" eval '[ $rc -eq 0 ] && grep -q "Beautiful is better" <<<"$out"'
deny_case path-outside-view cat /etc/shadow
err=$("$J" "${R[@]}" -- cat ../../../etc/passwd 2>&1 >/dev/null)
check "../../../etc/passwd: refused as leaving the project" grep -q "leaves the project (/etc/passwd) \[path-outside-view\]" <<<"$err"

# ---- --shell: cd is followed, data is not a path ----
"$J" "${R[@]}" --shell -- 'echo "// wip" >> src/main.c'
check "echo \"// wip\" >> src/main.c runs" [ "$(tail -n 1 "$P/src/main.c")" = "// wip" ]
out=$("$J" "${R[@]}" --shell -- 'mkdir -p jsdemo/pkg && cd jsdemo/pkg && npm init -y >/dev/null && cd .. && ls pkg' 2>&1); rc=$?
check "cd jsdemo/pkg && npm init -y && cd .. runs ($rc)" eval '[ $rc -eq 0 ] && grep -q package.json <<<"$out"'
check "... and npm wrote jsdemo/pkg/package.json" [ -f "$P/jsdemo/pkg/package.json" ]
rm -rf "$P/jsdemo"
"$J" "${R[@]}" --shell -- 'cd src && cat ../../x' >/dev/null 2>&1
check "cd src && cat ../../x is refused (126)" [ $? -eq 126 ]
"$J" "${R[@]}" --shell -- "cat > notes.txt <<'EOF'
rm -rf /
EOF"
check "a here-document body is text, not a command" [ "$(cat "$P/notes.txt" 2>/dev/null)" = "rm -rf /" ]
rm -f "$P/notes.txt"

# ---- --source in a git work tree: the view is the top, the command starts here ----
G=$T/repo
mkdir -p "$G/src" "$G/sub"
echo top >"$G/README"
git -C "$G" init -q && git -C "$G" add README && git -C "$G" -c user.email=t@t -c user.name=t commit -qm init
out=$(cd "$G/src" && "$J" --source . -- pwd)
check "--source . in src/ of a repo starts in src/ ($out)" [ "$out" = "$G/src" ]
out=$(cd "$G/src" && "$J" --source . -- git status --porcelain 2>&1); rc=$?
check "... and git status works ($rc: $out)" [ $rc -eq 0 ]
out=$(cd "$G/src" && "$J" -- cat ../README 2>&1)
check "... and ../README is in the view" [ "$out" = top ]
out=$(cd "$G/src" && "$J" --no-git-root -- git status 2>&1); rc=$?
check "--no-git-root: the view is src/ only (git: $rc)" eval '[ $rc -ne 0 ] && grep -q "not a git repository" <<<"$out"'
out=$(cd "$T" && "$J" --source "$G/src" -- pwd)
check "--source repo/src run from outside the view starts in repo/src" [ "$out" = "$G/src" ]
out=$(cd "$G" && "$J" --source src -- pwd)
check "--source src run from the top starts in src" [ "$out" = "$G/src" ]
out=$(cd "$G" && "$J" --source src -- cat ../README)
check "... in the work tree's view" [ "$out" = top ]
mount -t tmpfs jf-boundary "$G/sub" && echo inner >"$G/sub/f"
out=$(cd "$G/sub" && "$J" -- cat ../README 2>&1); rc=$?
check "the .git search stops at a filesystem boundary (view = sub/: $rc)" [ $rc -eq 126 ]
umount "$G/sub"
"$J" --help | grep -q -- "--no-git-root"
check "--help names --no-git-root" [ $? -eq 0 ]

# ---- --root carries the view's [run] rules ----
P2=$T/proj2
M2=$T/mnt2
mkdir -p "$P2" "$M2"
printf '[options]\ndefault = safe\n[run]\ndeny_exec = curl, wget, scp, ssh\ntimeout = 2\nenv = VIEWVAR=1\n' >"$T/view.ini"
if "$F" --policy "$T/view.ini" "$P2" "$M2"; then
	printf '[run]\n' >"$T/view.ini" # the view keeps the rules it was started with
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.jailfs.run", b"[run]\n")' "$P2"
	out=$(cd "$P2" && "$J" --root "$M2" -- curl --version 2>&1); rc=$?
	check "--root: the view's deny_exec refuses curl ($rc)" eval '[ $rc -eq 126 ] && grep -q "exec-denylist" <<<"$out"'
	(cd "$P2" && "$J" --root "$M2" --allow-exec curl -- curl --version >/dev/null 2>&1)
	check "--allow-exec does not lift the view's deny_exec" [ $? -eq 126 ]
	start=$(date +%s%N)
	(cd "$P2" && "$J" --root "$M2" -- sleep 30)
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	check "--root: the view's timeout (2 s) applies: 124 after ${ms} ms" [ $rc -eq 124 -a $ms -ge 1900 -a $ms -lt 6000 ]
	(cd "$P2" && "$J" --root "$M2" --timeout 60 -- sleep 30)
	check "--timeout 60 does not loosen the view's 2 s" [ $? -eq 124 ]
	js=$(cd "$P2" && "$J" --root "$M2" --json --timeout 0.3 -- sleep 30)
	check "--timeout 0.3 (stricter) wins" [ "$(jq -c '[.timed_out, .duration_ms < 1900]' <<<"$js")" = '[true,true]' ]
	out=$(cd "$P2" && "$J" --root "$M2" -- env)
	check "--root: the view's env" grep -q "^VIEWVAR=1$" <<<"$out"
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.jailfs.run", b"[run]\n")' "$M2" 2>/dev/null
	check "setting user.jailfs.run through the view is refused" [ $? -ne 0 ]
	fusermount3 -u "$M2"
else
	bad "jailfs --policy view.ini did not mount"
fi

# ---- jailfs: no second mount on a jailfs mountpoint; non-empty warns ----
err=$("$F" "$P" "$M" 2>&1); rc=$?
check "jailfs on a jailfs mountpoint is refused ($rc)" eval '[ $rc -eq 1 ] && grep -q "already a jailfs mount" <<<"$err"'
check "... and nothing stacked" [ "$(findmnt -n "$M" | wc -l)" -eq 1 ]
mkdir -p "$T/full" && touch "$T/full/x"
err=$("$F" "$P2" "$T/full" 2>&1); rc=$?
check "jailfs over a non-empty directory mounts with a warning" eval '[ $rc -eq 0 ] && grep -q "warning: .* is not empty" <<<"$err"'
fusermount3 -u "$T/full" 2>/dev/null

# ---- failures say why; usage errors exit 2; --json always prints a result ----
S=$T/stale
mkdir -p "$S"
"$F" -f "$P2" "$S" &
spid=$!
for _ in $(seq 50); do mountpoint -q "$S" && break; sleep 0.1; done
kill -KILL $spid
wait $spid 2>/dev/null
err=$("$J" --root "$S" -- true 2>&1 >/dev/null); rc=$?
check "--root on a stale mount: 125 with a reason ($err)" eval '[ $rc -eq 125 ] && grep -q "daemon of this mount is gone" <<<"$err"'
js=$("$J" --json --root "$S" -- true 2>/dev/null)
check "... and under --json a result with error" [ "$(jq -c '[.exit_code, (.error | test("gone"))]' <<<"$js")" = '[125,true]' ]
umount -l "$S"
# a --root view whose daemon dies under the command: the result says so
D=$T/dies
mkdir -p "$D"
"$F" -f "$P2" "$D" &
dpid=$!
for _ in $(seq 50); do mountpoint -q "$D" && break; sleep 0.1; done
printf 'sleep 2\nls >/dev/null 2>&1\ntrue\n' >"$P2/dies.sh"
(cd "$P2" && "$J" --root "$D" --json -- sh dies.sh >"$T/dies.json" 2>/dev/null; echo $? >"$T/dies.rc") &
jpid=$!
sleep 1
kill -KILL $dpid
wait $dpid 2>/dev/null
wait $jpid
js=$(cat "$T/dies.json")
check "--root, its daemon killed under the command: exit 125, error names ENOTCONN ($js)" \
	[ "$(cat "$T/dies.rc")" = 125 -a "$(jq -c '[.exit_code, (.error // "" | test("gone.*not connected"))]' <<<"$js")" = '[125,true]' ]
(cd "$P2" && "$J" --root "$D" -- true) 2>"$T/dies.err"
check "... and --root on it afterwards says the daemon is gone" grep -q "daemon of this mount is gone" "$T/dies.err"
umount -l "$D"
"$J" --bogus -- true >/dev/null 2>&1
check "an unknown option exits 2" [ $? -eq 2 ]
js=$("$J" --json --timeout x -- true 2>/dev/null); rc=$?
check "--json with a bad option: exit 2, a JSON result with error" [ $rc -eq 2 -a "$(jq -c '[.exit_code, (.error | length > 0)]' <<<"$js")" = '[2,true]' ]

# ---- unprivileged: the wall through a user namespace ----
if id jftest >/dev/null 2>&1; then
	U=$T/uproj
	mkdir -p "$U"
	cp "$P/wall.sh" "$P/spawn.sh" "$U/"
	echo hi >"$U/README"
	chown -R jftest "$U"
	chmod 755 "$T"
	out=$(su jftest -s /bin/sh -c "cd '$U' && '$J' --root '$U' --test-plain-root -- sh wall.sh" 2>&1)
	check "unprivileged: wall holds (no caps, seccomp, no unshare/mount)" bash -c 'grep -q "CapEff:	0000000000000000" <<<"$1" && ! grep -qE "WROTE|UNSHARE OK|MOUNT OK|SYSCTL OK" <<<"$1"' _ "$out"
	out=$(su jftest -s /bin/sh -c "cd '$U' && '$J' --root '$U' --test-plain-root -- sh spawn.sh" 2>"$T/spawn.err")
	sleep 0.2
	check "unprivileged: grandchildren gone" [ "$out" = spawned -a -z "$(pgrep -f 'sleep 60[123]')" ]
	out=$(su jftest -s /bin/sh -c "cd '$U' && '$J' --root '$U' --test-plain-root -- rm README" 2>&1)
	check "unprivileged: guardrails too" grep -q "denied" <<<"$out"
	out=$(su jftest -s /bin/sh -c "cd /tmp && '$J' --root '$M' -- true" 2>&1); rc=$?
	check "another user's mount without allow_other: 125 with a reason" \
		eval '[ $rc -eq 125 ] && grep -q "allow_other" <<<"$out"'
	js=$(su jftest -s /bin/sh -c "cd /tmp && '$J' --json --root '$M' -- true" 2>/dev/null)
	check "... and under --json a result with error" [ "$(jq -r '.error | test("allow_other")' <<<"$js")" = true ]
	mkdir -p "$T/closed" && chmod 700 "$T/closed"
	out=$(su jftest -s /bin/sh -c "cd /tmp && '$J' --root '$T/closed' --test-plain-root -- true" 2>&1); rc=$?
	check "a jail setup failure (chdir) says why: 125 ($out)" \
		eval '[ $rc -eq 125 ] && grep -q "cannot run the jail: chdir .*Permission denied" <<<"$out"'
else
	bad "unprivileged: no jftest user (.ci/run creates it)"
fi

tap_done
