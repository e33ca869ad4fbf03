#!/usr/bin/env bash
# Runs every example in mnt-examples/ so none rots:
#   - each policy file, through `jailfs --check` (zones asserted) and --scan;
#   - the quick-start demo (mnt-examples/demo.sh) end to end, asserting every
#     refusal and that the demo tree is left unchanged;
#   - the Python agent harness against jailrun --request -;
#   - the review loop (review-loop.py) on an overlay view: a failed step
#     undone by restore, the project untouched until --apply;
#   - the fstab line, mounted for real by `mount -T FILE` (mount(8) ->
#     mount.fuse3 -> jailfs) in a private mount namespace;
#   - the systemd unit: `systemd-analyze verify` (its Documentation= man
#     pages included), then its ExecStart run as systemd would run it, and
#     stopped the way systemd stops it (SIGTERM);
#   - README.md's four uses and docs/audit.md's jq recipes, as written.
# Suite 'mount' (real FUSE mounts, not parallel). Needs /dev/fuse: with
# CI=true a missing /dev/fuse or a non-root run is a failure, never a skip.
set -uo pipefail

: "${JAILFS:?set by meson}" "${JAILRUN:?set by meson}" "${JF_SRCDIR:?set by meson}"
ex=$JF_SRCDIR/mnt-examples
tmp=$(mktemp -d "${TMPDIR:-/tmp}/jfexamples.XXXXXX")
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
# The fstab and systemd parts mount as root, as they would on a host.
require_root_fuse

cleanup() {
	unmount_all
	rm -rf "$tmp"
}
trap cleanup EXIT

# A copy of the demo project with its fake secrets planted, as demo.sh makes.
demo_copy() { cp -a "$ex/demo-project" "$1" && bash "$ex/demo-secrets.sh" "$1"; }
wait_mount() { # MNT want(1|0)
	local _
	for _ in $(seq 100); do
		if mounted "$1"; then [ "$2" = 1 ] && return 0; else [ "$2" = 0 ] && return 0; fi
		sleep 0.05
	done
	return 1
}

# ---------------------------------------------------------------- policies
# A tree holding every kind of name the policies talk about.
t=$tmp/tree
demo_copy "$t"
mkdir -p "$t/.git/hooks" "$t/vendor/patches" "$t/.vscode" "$t/node_modules/x"
: >"$t/.git/config"; : >"$t/.git/HEAD"; : >"$t/.git/hooks/pre-commit"
: >"$t/vendor/lib.c"; : >"$t/vendor/patches/fix.patch"; : >"$t/.vscode/settings.json"
: >"$t/node_modules/x/index.js"; : >"$t/build.log"; : >"$t/db.sqlite3"
# core dumps, and directories named core holding source (net/core in Linux)
mkdir -p "$t/net/core" "$t/sound/core.d"
: >"$t/net/core/dev.c"; : >"$t/core"; : >"$t/core.1234"; : >"$t/sound/core.d/pcm.c"

expect_zones() { # POLICY(or -) SOURCE ZONE:PATH...
	local pol=$1 src=$2 want path got args=()
	shift 2
	[ "$pol" != - ] && args=(--policy "$pol")
	for spec in "$@"; do
		want=${spec%%:*}
		path=${spec#*:}
		got=$("$JAILFS" --check "${args[@]}" --source "$src" "$path" 2>&1 | head -n1)
		if [ "${got%%$'\t'*}" = "$want" ]; then
			ok "$(basename "$pol") $path -> $want (${got#*$'\t'})"
		else
			bad "$(basename "$pol") $path: want $want, got '$got'"
		fi
	done
}

expect_zones - "$t" \
	SAFE:src/main.c SAFE:.env.example DENIED:.env DENIED:config/.env.production \
	DENIED:keys/server.pem DENIED:.aws/credentials DENIED:home/.ssh/id_ed25519 \
	RESTRICTED:.git/hooks/pre-commit RESTRICTED:.git/config RESTRICTED:.vscode/settings.json

expect_zones "$ex/project.ini" "$t" \
	SAFE:src/main.c SAFE:.env.example SAFE:config/settings.ini DENIED:.env \
	DENIED:config/.env.production DENIED:keys/server.pem DENIED:.aws/credentials \
	DENIED:home/.ssh/id_ed25519 DENIED:db.sqlite3 RESTRICTED:.git/hooks/pre-commit \
	RESTRICTED:.git/config RESTRICTED:.vscode/settings.json RESTRICTED:vendor/lib.c \
	SAFE:vendor/patches/fix.patch REFUSED:../etc/passwd

expect_zones "$ex/share.ini" "$t" \
	RESTRICTED:src/main.c RESTRICTED:.env.example RESTRICTED:Makefile DENIED:.env \
	DENIED:keys/server.pem DENIED:home/.ssh/id_ed25519 DENIED:.git/HEAD \
	DENIED:.git/config DENIED:node_modules/x/index.js DENIED:build.log
expect_zones "$ex/share.ini" "$t" \
	DENIED:core DENIED:core.1234 RESTRICTED:net/core RESTRICTED:net/core/dev.c \
	RESTRICTED:sound/core.d/pcm.c
# The same through a mount of share.ini: a directory named core is listed
# and read, a core dump is not.
if mount_view "$tmp/share-mnt" --policy "$ex/share.ini" "$t"; then
	# shellcheck disable=SC2010 # the listing is what is tested
	if [ "$(cat "$tmp/share-mnt/net/core/dev.c" 2>&1)" = "" ] &&
		ls "$tmp/share-mnt/net" | grep -qx core && ! ls "$tmp/share-mnt" | grep -qx core &&
		[ ! -e "$tmp/share-mnt/core" ] && [ ! -e "$tmp/share-mnt/core.1234" ]; then
		ok "share.ini mount: net/core/ listed and read, core and core.1234 hidden"
	else
		# shellcheck disable=SC2012 # for a human
		bad "share.ini mount: net/core/ hidden or a core dump shown: $(ls "$tmp/share-mnt" "$tmp/share-mnt/net" 2>&1 | tr '\n' ' ')"
	fi
	umount_view "$tmp/share-mnt" || bad "share.ini mount: unmount"
else
	bad "share.ini mount: jailfs did not mount"
fi

expect_zones "$ex/audit.ini" "$t" \
	SAFE:src/main.c SAFE:.env.example SAFE:.git/hooks/pre-commit SAFE:.vscode/settings.json \
	DENIED:.env DENIED:.aws/credentials DENIED:home/.ssh/id_ed25519

expect_zones "$ex/system.ini" / \
	RESTRICTED:/usr/bin/make RESTRICTED:/usr/lib RESTRICTED:/etc/passwd SAFE:/srv/agent/main.c \
	RESTRICTED:/srv/other/file DENIED:/etc/shadow DENIED:/root/.ssh/id_rsa \
	DENIED:/proc/1/environ DENIED:/home/me/notes.txt DENIED:/srv/agent/.env

for pol in "$ex"/*.ini; do
	if out=$("$JAILFS" --scan --policy "$pol" "$t" 2>&1); then
		if grep -q 'home/.ssh' <<<"$out"; then
			ok "--scan --policy $(basename "$pol") lists home/.ssh"
		else
			bad "--scan --policy $(basename "$pol") does not list home/.ssh: $out"
		fi
	else
		bad "--scan --policy $(basename "$pol") failed: $out"
	fi
	head -n1 "$pol" | grep -q "^# $(basename "$pol"): " && ok "$(basename "$pol") has its header" ||
		bad "$(basename "$pol") lacks the '# NAME: purpose' header"
done

# ---------------------------------------------------------------- the demo
sum_demo() { (cd "$ex/demo-project" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum); }
before=$(sum_demo)
out=$(JAILFS=$JAILFS JAILRUN=$JAILRUN TMPDIR=$tmp bash "$ex/demo.sh" 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/# demo| /'
[ $rc -eq 0 ] && ok "demo.sh exited 0" || bad "demo.sh exited $rc"
row() { # LABEL RESULT
	grep -E "^ *[0-9]+  $1 .* $2 " <<<"$out" >/dev/null && ok "demo: '$1' $2" ||
		bad "demo: no table row '$1' with $2"
}
for l in "list the tree" "read a source file" "edit a source file" "build it" "test it" \
	"commit with git"; do
	row "$l" ALLOWED
done
for l in "read .env" "read config/.env.production" "read the SSH key in the tree" \
	"secrets via obfuscated shell" "read ~/.ssh/id_rsa" "inline Python to read .env" \
	"symlink to /etc/passwd" "symlink out, obfuscated" "write .git/hooks/pre-commit" \
	"rm -rf the tree" "outlive a 2 s timeout"; do
	row "$l" REFUSED
done
grep -q 'jailrun refused it' <<<"$out" && ok "demo: a refusal names jailrun's reason" ||
	bad "demo: no jailrun reason in the table"
grep -qi 'pre-commit: Read-only file system' <<<"$out" && ok "demo: the hook write got EROFS" ||
	bad "demo: no 'Read-only file system' for the hook write"
grep -q "path '.env' is DENIED by the policy" <<<"$out" && ok "demo: cat .env refused with its rule" ||
	bad "demo: cat .env was not refused with its rule"
grep -q "cat: 'keys/server.pe\[m\]': No such file or directory" <<<"$out" &&
	ok "demo: the obfuscated names do not exist in the view" ||
	bad "demo: the obfuscated cat did not get ENOENT"
grep -q "symbolic link 'passwd': Permission denied" <<<"$out" &&
	ok "demo: jailfs refused the symlink out (EACCES)" || bad "demo: no EACCES for the symlink"
grep -q "timed out after" <<<"$out" && ok "demo: the timeout fired" || bad "demo: no timeout"
grep -q '^  FAIL' <<<"$out" && bad "demo: a disk check failed" || ok "demo: every disk check ok"
[ "$(sum_demo)" = "$before" ] && ok "demo-project unchanged" || bad "demo-project changed"
grep -q "jailfs-demo" /proc/self/mountinfo && bad "demo left a mount behind" ||
	ok "demo left no mount"
ls -d "$tmp"/jailfs-demo.* >/dev/null 2>&1 && bad "demo left its temp dir" || ok "demo cleaned up"

# ---------------------------------------------------------------- harness
h=$tmp/harness
demo_copy "$h"
harness() { python3 "$ex/agent-harness.py" --jailrun "$JAILRUN" --source "$h" "$@"; }
field() { python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; print(json.dumps(r.get(sys.argv[1])))' "$1"; }
out=$(harness --timeout 60 -- make test 2>"$tmp/h.err"); rc=$?
if [ $rc -eq 0 ] && [ "$(field exit_code <<<"$out")" = 0 ] &&
	field stdout <<<"$out" | grep -q 'all tests passed'; then
	ok "harness: make test ran, exit_code 0, stdout has 'all tests passed'"
else
	bad "harness make test: rc $rc $(cat "$tmp/h.err") $out"
fi
out=$(harness -- python3 -c 'print(1)' 2>"$tmp/h.err"); rc=$?
[ $rc -eq 2 ] && [ "$(field exit_code <<<"$out")" = -100 ] && [ "$(field denied <<<"$out")" = true ] &&
	ok "harness: python3 -c refused, exit_code -100, reason $(field reason <<<"$out")" ||
	bad "harness python3 -c: rc $rc $out"
out=$(harness --timeout 1 -- sleep 30 2>"$tmp/h.err"); rc=$?
[ $rc -eq 2 ] && [ "$(field exit_code <<<"$out")" = -101 ] && [ "$(field timed_out <<<"$out")" = true ] &&
	ok "harness: sleep 30 timed out, exit_code -101" || bad "harness timeout: rc $rc $out"
# Refused by jailrun's path check, or run and not found: either way no secret.
out=$(harness -- cat .env 2>"$tmp/h.err"); rc=$?
if [ $rc -eq 2 ] && [ "$(field denied <<<"$out")" = true ]; then
	ok "harness: cat .env refused: $(field reason <<<"$out")"
elif [ $rc -eq 1 ] && field stderr <<<"$out" | grep -q 'No such file'; then
	ok "harness: cat .env -> No such file or directory"
else
	bad "harness cat .env: rc $rc $out"
fi
out=$(harness --shell --env TALLY_GREETING=hello -- 'cat .e[n]v; echo "$TALLY_GREETING"; ls -A' 2>"$tmp/h.err"); rc=$?
field stdout <<<"$out" | grep -q 'hello' && field stdout <<<"$out" | grep -q '.env.example' &&
	! field stdout <<<"$out" | grep -q 'FAKE-JAILFS-DEMO' && field stderr <<<"$out" | grep -q 'No such file' &&
	ok "harness: --shell request with env; .env not in the view, .env.example is" ||
	bad "harness --shell: rc $rc $out"

# ---------------------------------------------------------------- review loop
# Needs the overlay mode (jailfs --changes DIR).
rv=$tmp/review
demo_copy "$rv"
echo 'first line' >"$rv/notes.txt"
review() { JAILFS=$JAILFS python3 "$ex/review-loop.py" --source "$rv" "$@"; }
steps=('echo second line >>notes.txt' 'unlink notes.txt && false')
sum_rv() { (cd "$rv" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum); }
before=$(sum_rv)
out=$(review --changes "$tmp/layer-a" "${steps[@]}" 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# review| /'
[ $rc -eq 1 ] && grep -q '^step 2: undone' <<<"$out" && grep -q 'second line' <<<"$out" &&
	ok "review loop: step 1 kept (its diff shown), the failed step 2 undone" ||
	bad "review loop without --apply: rc $rc"
[ "$(sum_rv)" = "$before" ] && ok "review loop: the project is untouched without --apply" ||
	bad "review loop: the project changed without --apply"
out=$(review --changes "$tmp/layer-b" --apply "${steps[@]}" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q '^applied' <<<"$out" &&
	[ "$(cat "$rv/notes.txt" 2>/dev/null)" = "$(printf 'first line\nsecond line')" ] &&
	ok "review loop --apply: notes.txt has step 1's line and survived step 2's unlink" ||
	bad "review loop --apply: rc $rc, notes.txt: $(cat "$rv/notes.txt" 2>&1)"

# ---------------------------------------------------------------- fstab
line=$(grep -vE '^[[:space:]]*(#|$)' "$ex/fstab.example")
read -r _ _ f_type f_opts f_dump f_pass <<<"$line"
if [ "$f_type" = fuse.jailfs ] && [[ $f_opts == *policy=* ]] && [ -n "$f_pass" ]; then
	ok "fstab.example: one line, type $f_type, options $f_opts"
else
	bad "fstab.example: unexpected line '$line'"
fi
fs_src=$tmp/fstab-src
fs_mnt=$tmp/fstab-mnt
demo_copy "$fs_src"
mkdir -p "$fs_mnt" "$tmp/bin"
ln -s "$JAILFS" "$tmp/bin/jailfs"
# The same line, with this machine's paths (the policy from mnt-examples/).
pol=$(sed -E 's/.*policy=([^,]*).*/\1/' <<<"$f_opts")
printf '%s %s %s %s %s %s\n' "$fs_src" "$fs_mnt" "$f_type" \
	"${f_opts/policy=$pol/policy=$ex/$(basename "$pol")}" "$f_dump" "$f_pass" >"$tmp/fstab"
# mount(8) runs helpers with PATH=/usr/local/sbin:/usr/local/bin:..., where
# `meson install` puts jailfs; a private mount namespace stands that in.
out=$(unshare -m --propagation private bash -c '
	set -e
	mount --bind "$1" /usr/local/bin
	mount -T "$2" "$3"
	grep " $3 " /proc/self/mountinfo
	(cd "$3" && find . | LC_ALL=C sort)
	umount "$3"
	for _ in $(seq 100); do grep -q " $3 " /proc/self/mountinfo || break; sleep 0.05; done
	grep -q " $3 " /proc/self/mountinfo && echo STILL-MOUNTED || echo UNMOUNTED
' _ "$tmp/bin" "$tmp/fstab" "$fs_mnt" 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/# fstab| /'
mi=$(grep " $fs_mnt " <<<"$out" || true)
[ $rc -eq 0 ] && [[ $mi == *" - fuse.jailfs $fs_src "* ]] &&
	ok "mount -T: fuse.jailfs mounted, fsname $fs_src" || bad "mount -T failed (rc $rc)"
[[ $mi == *nosuid* && $mi == *nodev* ]] && ok "mount -T: nosuid,nodev" || bad "mount -T: not nosuid,nodev"
grep -qxF './.env.example' <<<"$out" && grep -qxF './keys' <<<"$out" &&
	! grep -qxF './.env' <<<"$out" && ! grep -qxF './keys/server.pem' <<<"$out" &&
	! grep -qF './home/.ssh' <<<"$out" &&
	ok "mount -T: .env, keys/server.pem, home/.ssh hidden, .env.example shown" ||
	bad "mount -T: wrong listing"
grep -qx UNMOUNTED <<<"$out" && ok "mount -T: umount clean" || bad "mount -T: umount"

# ---------------------------------------------------------------- systemd unit
unit=$ex/jailfs@.service
u_src=$tmp/unitsrc
demo_copy "$u_src"
inst=$(systemd-escape --path "$u_src" 2>/dev/null || python3 -c '
import sys; p = sys.argv[1].strip("/")
print("".join(c if c.isalnum() or c in "_." else "-" if c == "/" else "\\x%02x" % ord(c) for c in p))' "$u_src")
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$tmp/units"
	sed "s|/usr/local/bin/jailfs|$JAILFS|" "$unit" >"$tmp/units/jailfs@$inst.service"
	# verify runs man(1) on each Documentation=man: page: give it the built
	# pages, laid out as `meson install` lays them out.
	mkdir -p "$tmp/man/man1" "$tmp/man/man5"
	for p in "${JF_BUILDDIR:-/nonexistent}"/man/*.[15]; do
		[ -f "$p" ] && ln -sf "$p" "$tmp/man/man${p##*.}/"
	done
	if v=$(MANPATH=$tmp/man systemd-analyze verify "$tmp/units/jailfs@$inst.service" 2>&1) &&
		[ -z "$v" ]; then
		ok "systemd-analyze verify jailfs@$inst.service: clean"
	else
		bad "systemd-analyze verify: $v"
	fi
elif [ "${CI:-}" = true ]; then
	bad "systemd-analyze missing"
fi
grep -q '^Type=forking' "$unit" || bad "unit: expected Type=forking (jailfs detaches when mounted)"
exec_line=$(sed -n 's/^ExecStart=//p' "$unit")
u_run=$tmp/run
conf_opts="--policy $ex/project.ini"
# systemd: %f = unescaped path, %i = instance, $JAILFS_OPTS from EnvironmentFile,
# /run/jailfs/%i made by RuntimeDirectory= (here under $tmp).
cmd=${exec_line//\/usr\/local\/bin\/jailfs/$JAILFS}
cmd=${cmd//\/run\/jailfs\//$u_run/}
cmd=${cmd//%f/$u_src}
cmd=${cmd//%i/$inst}
cmd=${cmd//\$JAILFS_OPTS/$conf_opts}
u_mnt=$u_run/$inst
mkdir -p "$u_mnt"
mounts+=("$u_mnt" "$fs_mnt")
read -ra argv <<<"$cmd"
echo "# unit| ${argv[*]}"
if timeout 20 "${argv[@]}" && wait_mount "$u_mnt" 1; then
	ok "unit ExecStart returned with the view mounted at $u_mnt"
	[ -e "$u_mnt/.env.example" ] && [ ! -e "$u_mnt/.env" ] && [ -f "$u_mnt/src/main.c" ] &&
		ok "unit view hides .env, shows .env.example and src/" || bad "unit view listing wrong"
	pid=""
	for p in /proc/[0-9]*; do
		c=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
		[ "$c" = "${argv[*]} " ] && pid=${p#/proc/}
	done
	if [ -n "$pid" ]; then
		kill -TERM "$pid"
		wait_mount "$u_mnt" 0 && ok "unit stop (SIGTERM to $pid) unmounted" ||
			bad "still mounted after SIGTERM"
		for _ in $(seq 100); do [ -d "/proc/$pid" ] || break; sleep 0.05; done
		[ -d "/proc/$pid" ] && bad "daemon $pid alive 5 s after SIGTERM" || ok "daemon exited"
	else
		bad "no daemon process with argv '${argv[*]}'"
	fi
else
	bad "unit ExecStart did not mount"
fi

# ---------------------------------------------------------------- README
# The "Four uses" blocks of README.md, run as written, with temporary
# paths for ~/src/myproject, /mnt/ and /tmp/, from the source root.
r=$tmp/readme
mkdir -p "$r/bin" "$r/mnt" "$r/out"
ln -s "$JAILFS" "$r/bin/jailfs"
ln -s "$JAILRUN" "$r/bin/jailrun"
doc_block() { # FILE TAG: the fenced block after the line <!-- TAG -->
	awk -v tag="<!-- $2 -->" '
		$0 == tag { armed = 1; next }
		armed && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }' "$JF_SRCDIR/$1"
}
readme_block() { doc_block README.md "readme-test: $1"; }
for use in agent share audit review; do
	block=$(readme_block "$use")
	if [ -z "$block" ]; then
		bad "README: no block for <!-- readme-test: $use -->"
		continue
	fi
	rm -rf "$r/proj"
	demo_copy "$r/proj"     # a fresh project for each use
	block=${block//\~\/src\/myproject/@PROJ@}
	block=${block//\/mnt\//@MNT@/}
	block=${block//\/tmp\//@OUT@/}
	block=${block//@PROJ@/$r/proj}
	block=${block//@MNT@/$r/mnt}
	block=${block//@OUT@/$r/out}
	mounts+=("$r/mnt/$use")
	out=$(cd "$JF_SRCDIR" && PATH=$r/bin:$PATH bash -e -o pipefail -x -c "$block" 2>&1)
	rc=$?
	printf '%s\n' "$out" | tail -n 25 | sed "s/^/# readme-$use| /"
	[ $rc -eq 0 ] && ok "README use '$use' ran as written" || bad "README use '$use' failed (rc $rc)"
	if mounted "$r/mnt/$use"; then
		bad "README use '$use' left $r/mnt/$use mounted"
		fusermount3 -u "$r/mnt/$use"
	fi
done
main_c=$(cat "$r/proj/src/main.c" 2>&1)
check "README review: the first command's edit applied, the second undone" \
	test "$(tail -n 1 <<<"$main_c")" = "/* reviewed */" -a "$(wc -l <<<"$main_c")" -gt 1
check "README review: nothing left in the layer after apply" \
	test -z "$(PATH=$r/bin:$PATH jailfs changes "$r/out/review" 2>&1)"
if [ -f "$r/out/myproject-shared.tar.gz" ]; then
	list=$(tar -tzf "$r/out/myproject-shared.tar.gz")
	grep -qx './.env.example' <<<"$list" && grep -qx './src/main.c' <<<"$list" &&
		! grep -qE '^\./(\.env|keys/.+|\.aws(/.*)?|home/\.ssh(/.*)?)$' <<<"$list" &&
		ok "README share: tarball has src/ and .env.example, no secret" ||
		bad "README share: tarball content wrong: $(tr '\n' ' ' <<<"$list")"
else
	bad "README share: no tarball"
fi
if [ -s "$r/out/audit.jsonl" ]; then
	jq -r 'select(.bytes_written > 0) | .path' "$r/out/audit.jsonl" | grep -qx tally &&
		ok "README audit: the audit log shows make writing 'tally'" ||
		bad "README audit: no write of 'tally' in the audit log"
	# docs/audit.md's jq recipes, run as written on that log.
	block=$(doc_block docs/audit.md "doc-test: audit-jq")
	if [ -z "$block" ]; then
		bad "docs/audit.md: no block for <!-- doc-test: audit-jq -->"
	elif out=$(cd "$r/out" && bash -e -c "$block" 2>&1); then
		grep -qE '^[0-9]+'$'\t''tally$' <<<"$out" &&
			ok "docs/audit.md: the jq recipes ran; bytes written per file lists 'tally'" ||
			bad "docs/audit.md: no '<bytes><TAB>tally' line in the recipes' output: $out"
	else
		bad "docs/audit.md: a jq recipe failed: $out"
	fi
else
	bad "README audit: no audit log"
fi

# ---------------------------------------------------------------- install
# `meson install` (README, Install) into a staging dir: binaries and the
# examples land where README says, and the installed demo runs from there
# with the installed binaries on PATH.
if [ -n "${JF_BUILDDIR:-}" ] && command -v meson >/dev/null; then
	dest=$tmp/dest
	if meson install -C "$JF_BUILDDIR" --no-rebuild --destdir "$dest" >"$tmp/install.log" 2>&1; then
		exdir=$(find "$dest" -type d -path '*/share/doc/jailfs/examples' | head -n1)
		bindir=$(dirname "$(find "$dest" -type f -name jailfs -perm -u+x | head -n1)")
		missing=""
		for f in project.ini share.ini audit.ini system.ini fstab.example jailfs@.service \
			agent-harness.py review-loop.py demo.sh demo-secrets.sh demo-project/Makefile demo-project/.env.example; do
			[ -e "$exdir/$f" ] || missing+=" $f"
		done
		[ -n "$exdir" ] && [ -z "$missing" ] && [ -x "$bindir/jailrun" ] &&
			ok "meson install: jailfs, jailrun in ${bindir#"$dest"}, examples in ${exdir#"$dest"}" ||
			bad "meson install: missing${missing:- binaries or examples dir}"
		if [ -n "$exdir" ]; then
			out=$(cd "$tmp" && env -u JAILFS -u JAILRUN PATH="$bindir:$PATH" TMPDIR="$tmp" \
				bash "$exdir/demo.sh" 2>&1)
			rc=$?
			[ $rc -eq 0 ] && grep -q 'every step ended as expected' <<<"$out" &&
				ok "the installed demo.sh ran with the installed binaries" ||
				bad "installed demo.sh: rc $rc $(tail -n 5 <<<"$out")"
		fi
	else
		bad "meson install failed: $(tail -n 5 "$tmp/install.log")"
	fi
elif [ "${CI:-}" = true ]; then
	bad "JF_BUILDDIR or meson missing"
fi

tap_done
