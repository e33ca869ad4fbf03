#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The jail's home directory through real jailrun runs, as root and as jftest:
#  - a per-project home that persists between commands, at the user's own
#    $HOME path in the jail, kept outside SOURCE and outside the view (mode
#    0700, owned by the user; the default location, --home, [run] home)
#  - the user's toolchains read-only at their own paths: rustup's cargo,
#    a pyenv Python chosen by PATH (where the host has them)
#  - npm's and pip's caches in the home, kept; the host's ~/go/pkg/mod read-only,
#    GOMODCACHE in the home and GOPROXY reading the host's cache
#  - a DENIED entry of an exposed directory is not exposed
#  - a command the jail lacks but the host has: the message says so
# Modes: --source (fast_open), --root on a default mount, --root on a
# --read-only mount, --source --audit, and jftest's --source.
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
F=${JAILFS:?JAILFS not set}

# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
require_root_fuse
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"

T=$(mktemp -d /tmp/jf-home.XXXXXX)
chmod 755 "$T"
P=$T/proj
M=$T/mnt
M2=$T/mnt-ro
cleanup() {
	local d
	for d in "$M" "$M2"; do
		mountpoint -q "$d" 2>/dev/null && { fusermount3 -u "$d" 2>/dev/null || umount -l "$d"; }
	done
	stop_persistent
	fuse_mode_back
	rm -rf "$T"
}
trap cleanup EXIT
fuse_for_users
mkdir -p "$P" "$M" "$M2" "$T/state" "$T/hostbin" "$T/tool/bin" "$T/tool/secrets"
echo hello >"$P/README"
cat >"$P/write.sh" <<'EOF'
echo "$1" >"$HOME/persist"; echo "HOME=$HOME"
EOF
cat >"$P/read.sh" <<'EOF'
cat "$HOME/persist"
EOF
cat >"$P/exe.py" <<'EOF'
import sys
print(sys.executable)
EOF
printf '#!/bin/sh\necho onlyhost\n' >"$T/hostbin/onlyhost-cmd"
chmod +x "$T/hostbin/onlyhost-cmd"
printf '#!/bin/sh\necho tool-ok\n' >"$T/tool/bin/mytool"
chmod +x "$T/tool/bin/mytool"
echo TOOLSECRET >"$T/tool/secrets/token"
printf '[options]\ndefault = safe\n[run]\nexpose = %s\n' "$T/tool" >"$T/expose.ini"
export XDG_STATE_HOME=$T/state
homes=$T/state/jailrun/homes

# ---- persistence in each mode ----
"$F" "$P" "$M" || bad "mount $P"
"$F" --read-only "$P" "$M2" || bad "mount --read-only $P"
for mode in source root root-ro audit; do
	case $mode in
	source) R=(--source "$P") ;;
	root) R=(--root "$M") ;;
	root-ro) R=(--root "$M2") ;;
	audit) R=(--source "$P" --audit "$T/audit.log") ;;
	esac
	out=$(cd "$P" && "$J" "${R[@]}" -- sh write.sh "v-$mode" 2>&1)
	check "$mode: HOME is the user's own path ($out)" grep -qx "HOME=$HOME" <<<"$out"
	out=$(cd "$P" && "$J" "${R[@]}" -- sh read.sh 2>&1)
	check "$mode: a file written in HOME is there in the next command ($out)" \
		grep -qx "v-$mode" <<<"$out"
done
home=$(find "$homes" -mindepth 1 -maxdepth 1 -type d | head -n 1)
check "the home lies in \$XDG_STATE_HOME/jailrun/homes ($home)" test -f "$home/persist"
check "one home per project (all modes share it)" \
	[ "$(find "$homes" -mindepth 1 -maxdepth 1 | wc -l)" -eq 1 ]
check "the home is mode 0700, owned by the user" \
	[ "$(stat -c %a:%u "$home")" = "700:$(id -u)" ]
check "the home is not in SOURCE or the view" \
	bash -c '! find "$1" "$2" -name persist | grep -q .' _ "$P" "$M"
(cd "$P" && "$J" --source "$P" --home "$T/other" -- sh write.sh v-other >/dev/null 2>&1)
out=$(cd "$P" && "$J" --source "$P" --home "$T/other" -- sh read.sh 2>&1)
check "--home DIR: that directory is the home ($out)" grep -qx v-other <<<"$out"
check "--home DIR is created 0700" [ "$(stat -c %a "$T/other" 2>/dev/null)" = 700 ]
check "the default home is not that one" grep -qx v-audit "$home/persist"
printf '[options]\ndefault = safe\n[run]\nhome = %s\n' "$T/other" >"$T/home.ini"
out=$(cd "$P" && "$J" --source "$P" --policy "$T/home.ini" -- sh read.sh 2>&1)
check "[run] home: that directory is the home ($out)" grep -qx v-other <<<"$out"
out=$(cd "$P" && "$J" --source "$P" --home "$P/h" -- true 2>&1)
rc=$?
check "--home inside SOURCE is refused (rc $rc: $out)" \
	bash -c '[ "$1" -eq 125 ] && grep -q "inside the project" <<<"$2"' _ "$rc" "$out"

# a project inside the user's home: the view is mounted on top of the jail
# home, in every mode (outside /tmp: the jail's /tmp is its own)
VH=$(mktemp -d /var/tmp/jf-home-user.XXXXXX)
mkdir -p "$VH/src/proj" "$VH/mnt"
cp "$P/write.sh" "$P/read.sh" "$VH/src/proj/"
"$F" "$VH/src/proj" "$VH/mnt" || bad "mount $VH/src/proj"
for mode in source root; do
	[ $mode = source ] && R=(--source "$VH/src/proj") || R=(--root "$VH/mnt")
	out=$(cd "$VH/src/proj" && HOME=$VH "$J" "${R[@]}" -- sh write.sh "in-$mode" 2>&1 &&
		cd "$VH/src/proj" && HOME=$VH "$J" "${R[@]}" --shell -- 'sh read.sh; pwd; ls' 2>&1)
	check "$mode: a project inside HOME is shown there, the home around it ($out)" \
		bash -c '[ "$1" = "$(printf "HOME=%s\nin-%s\n%s/src/proj\nread.sh\nwrite.sh" "$2" "$3" "$2")" ]' \
		_ "$out" "$VH" "$mode"
done
fusermount3 -u "$VH/mnt"
rm -rf "$VH"

# ---- toolchains ----
if [ -d "$HOME/.rustup" ] && [ -x "$HOME/.cargo/bin/cargo" ]; then
	for mode in source root; do
		[ $mode = source ] && R=(--source "$P") || R=(--root "$M")
		out=$(cd "$P" && PATH=$HOME/.cargo/bin:$PATH "$J" "${R[@]}" -- cargo --version 2>&1)
		check "$mode: rustup's cargo runs ($out)" grep -q "^cargo [0-9]" <<<"$out"
	done
else
	bad "no ~/.rustup with ~/.cargo/bin/cargo on this machine"
fi
if [ -d "$HOME/.pyenv/shims" ]; then
	want=$(cd "$P" && PATH=$HOME/.pyenv/shims:$PATH python3 exe.py)
	for mode in source root audit; do
		case $mode in
		source) R=(--source "$P") ;;
		root) R=(--root "$M") ;;
		audit) R=(--source "$P" --audit "$T/audit.log") ;;
		esac
		out=$(cd "$P" && PATH=$HOME/.pyenv/shims:$PATH "$J" "${R[@]}" -- python3 exe.py 2>&1)
		check "$mode: pyenv's python is the one PATH names ($out, host: $want)" \
			bash -c '[ "$1" = "$2" ] && case "$1" in "$HOME"/.pyenv/*) ;; *) exit 1 ;; esac' \
			_ "$out" "$want"
	done
else
	bad "no ~/.pyenv on this machine"
fi
out=$(cd "$P" && "$J" --source "$P" -- cat "$HOME/.ssh/x" 2>&1; \
	"$J" --source "$P" --shell -- 'ls -A "$HOME"' 2>&1)
check "the host's ~/.ssh is not in the jail" bash -c '! grep -q "^\.ssh$" <<<"$1"' _ "$out"

# a symlink left in the home where the jail mounts a toolchain sends
# neither the mount nor a mkdir anywhere: the run fails and says where
if [ -d "$HOME/.cargo/bin" ]; then
	# outside /tmp: the jail's new root covers the host's /tmp while it is built
	VT=$(mktemp -d /var/tmp/jf-home-target.XXXXXX)
	mkdir -p "$T/evil"
	ln -s "$VT" "$T/evil/.cargo"
	out=$(cd "$P" && "$J" --source "$P" --home "$T/evil" -- true 2>&1)
	rc=$?
	check "a symlink in the home at a mount point: refused (rc $rc: $out)" \
		bash -c '[ "$1" -eq 125 ] && grep -q "mount point $2/.cargo/bin" <<<"$3"' _ "$rc" "$HOME" "$out"
	check "... and nothing made through it" [ -z "$(ls -A "$VT")" ]
	rm -rf "$VT"
fi

# ---- caches ----
out=$(cd "$P" && "$J" --source "$P" -- npm config get cache 2>&1)
check "npm's cache is in the jail home ($out)" grep -qx "$HOME/.npm" <<<"$out"
(cd "$P" && "$J" --source "$P" -- npm cache verify >/dev/null 2>&1)
check "npm's cache is kept in the home" test -d "$home/.npm/_cacache"
check "npm's debug logs are kept in the home" test -d "$home/.npm/_logs"
out=$(cd "$P" && PATH=$HOME/.pyenv/shims:$PATH "$J" --source "$P" -- pip cache dir 2>&1)
check "pip's cache is in the jail home ($out)" grep -qx "$HOME/.cache/pip" <<<"$out"

# ---- Go's module cache: the host's read-only, a writable one in the home ----
# not under /tmp: the jail has its own /tmp, so a HOME there is not shown
GH=$(mktemp -d /var/tmp/jf-gohome.XXXXXX)
mkdir -p "$GH/go/pkg/mod/cache/download"
echo hostmod >"$GH/go/pkg/mod/marker"
cat >"$P/gomod.sh" <<'EOF'
go env GOMODCACHE GOPROXY
cat "$HOME/go/pkg/mod/marker"
touch "$HOME/go/pkg/mod/new" 2>/dev/null || echo read-only
EOF
out=$(cd "$P" && HOME=$GH "$J" --source "$P" -- bash gomod.sh 2>&1)
check "the host's go/pkg/mod is shown ($out)" grep -qx hostmod <<<"$out"
check "the host's go/pkg/mod is read-only ($out)" grep -qx read-only <<<"$out"
check "GOMODCACHE is in the jail home ($out)" grep -qx "$GH/.cache/go-mod" <<<"$out"
check "GOPROXY reads the host's cache first ($out)" \
	grep -qx "file://$GH/go/pkg/mod/cache/download,https://proxy.golang.org,direct" <<<"$out"
check "... and nothing was written there" test ! -e "$GH/go/pkg/mod/new"
out=$(cd "$P" && HOME=$GH "$J" --source "$P" --env GOPROXY=off -- go env GOPROXY 2>&1)
check "--env overrides the default ($out)" grep -qx off <<<"$out"
rm -rf "$GH"

# ---- exposed directories and DENIED entries ----
out=$(cd "$P" && "$J" --source "$P" --policy "$T/expose.ini" -- "$T/tool/bin/mytool" 2>&1)
check "an exposed directory is shown ($out)" grep -q tool-ok <<<"$out"
out=$(cd "$P" && "$J" --source "$P" --policy "$T/expose.ini" -- cat "$T/tool/secrets/token" 2>&1)
check "a DENIED entry of an exposed directory is not readable ($out)" \
	bash -c '! grep -q TOOLSECRET <<<"$1"' _ "$out"
check "and jailrun says why it is not exposed" grep -q "not exposing" <<<"$out"

# ---- a command only the host has ----
for mode in source root; do
	[ $mode = source ] && R=(--source "$P") || R=(--root "$M")
	out=$(cd "$P" && PATH=$T/hostbin:$PATH "$J" "${R[@]}" -- onlyhost-cmd 2>&1)
	rc=$?
	check "$mode: a command the jail lacks: exit 127, the host's path and how to expose it ($rc: $out)" \
		bash -c '[ "$1" -eq 127 ] && grep -q "not in the jail" <<<"$2" && grep -q "$3" <<<"$2" && grep -q "expose" <<<"$2"' \
		_ "$rc" "$out" "$T/hostbin"
done
js=$(cd "$P" && PATH=$T/hostbin:$PATH "$J" --json --source "$P" -- onlyhost-cmd 2>/dev/null)
check "--json: the result's error says so" \
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); sys.exit("not in the jail" not in (r.get("error") or ""))' "$js"

# ---- the unprivileged run ----
if id jftest >/dev/null 2>&1; then
	U=$T/uproj
	mkdir -p "$U"
	cp "$P/write.sh" "$P/read.sh" "$U/"
	chown -R jftest "$U"
	uh=$(su jftest -s /bin/sh -c 'echo $HOME')
	us="env XDG_STATE_HOME= HOME=$uh"
	out=$(su jftest -s /bin/sh -c "cd '$U' && $us '$J' --source '$U' -- sh write.sh u1" 2>&1)
	check "jftest: HOME is jftest's own path ($out)" grep -qx "HOME=$uh" <<<"$out"
	out=$(su jftest -s /bin/sh -c "cd '$U' && $us '$J' --source '$U' -- sh read.sh" 2>&1)
	check "jftest: the home persists ($out)" grep -qx u1 <<<"$out"
	uhome=$(find "$uh/.local/state/jailrun/homes" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -n 1)
	check "jftest: the home is ~/.local/state/jailrun/homes/..., 0700, jftest's" \
		[ "$(stat -c %a:%U "$uhome" 2>/dev/null)" = "700:jftest" ]
	out=$(su jftest -s /bin/sh -c "cd '$U' && PATH='$T/hostbin':\$PATH $us '$J' --source '$U' -- onlyhost-cmd" 2>&1)
	rc=$?
	check "jftest: a command the jail lacks: exit 127 and how to expose it ($rc: $out)" \
		bash -c '[ "$1" -eq 127 ] && grep -q "not in the jail" <<<"$2" && grep -q "expose = $3" <<<"$2"' \
		_ "$rc" "$out" "$T/hostbin"
	rm -rf "$uh/.local"
	# a project in jftest's home, through a user namespace
	su jftest -s /bin/sh -c "mkdir -p '$uh/jf-home-proj' && cp '$U/write.sh' '$U/read.sh' '$uh/jf-home-proj/'"
	out=$(su jftest -s /bin/sh -c "cd '$uh/jf-home-proj' && $us '$J' --source . -- sh write.sh u2 &&
		$us '$J' --source . --shell -- 'sh read.sh; pwd'" 2>&1)
	check "jftest: a project inside HOME is shown there, the home around it ($out)" \
		[ "$out" = "$(printf 'HOME=%s\nu2\n%s/jf-home-proj' "$uh" "$uh")" ]
	rm -rf "$uh/jf-home-proj" "$uh/.local"
else
	bad "unprivileged: no jftest user (.ci/run creates it)"
fi
tap_done
