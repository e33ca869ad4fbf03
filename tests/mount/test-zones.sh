#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Zones decided by what a file holds, end to end on real jailfs mounts, with
# real git: in each open mode (plain, -o fast_open)
#  - a CA bundle named *.pem and an AsciiDoc *.asc are shown (public
#    content); a *.pem holding a private key is not, and a certificate into
#    which the host writes a private key disappears from the next open on;
#    a *.pem created through the view is shown until it holds a private key;
#    an fd held on a certificate, read-only or read-write, reads ENOENT once
#    the host wrote a private key into it (never passthrough)
#  - files tracked by git with DENIED names (id_rsa and secret.key holding
#    private keys, tests/.ssh/known_hosts under a DENIED .ssh/) are shown
#    read-only (EROFS, backing unchanged); untracked neighbours stay hidden
#  - through jailrun --root on that mount: git status is clean and
#    git commit -a records no deletion
# and python3 -m venv (Debian's /usr/bin/python3, pip's cacert.pem) through
# jailrun --source. Needs root and /dev/fuse; fails (never skips) without
# them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
: "${JAILFS:?JAILFS not set}"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"

# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse
for tool in git openssl; do
	command -v "$tool" >/dev/null || { echo "Bail out! $tool is not installed"; exit 1; }
done

# Not under /tmp: the jail has a private /tmp, and jailrun refuses a project there.
work=$(mktemp -d /var/tmp/jf-zones.XXXXXX)
cleanup() {
	unmount_all
	rm -rf "$work"
}
trap cleanup EXIT

# ---------------------------------------------------------------- the repository
tmpl=$work/tmpl
mkdir -p "$tmpl/tests/.ssh" "$tmpl/keys" "$tmpl/certifi"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
	-days 2 -subj /CN=jailfs-test 2>/dev/null || { echo "Bail out! openssl req"; exit 1; }
{ printf '\n# Issuer: CN=jailfs-test\n# Label: "test"\n'; cat "$work/cert.pem" "$work/cert.pem"; } \
	>"$tmpl/certifi/cacert.pem"
cp "$work/cert.pem" "$tmpl/tests/server.pem"
cp "$work/key.pem" "$tmpl/id_rsa"
cp "$work/key.pem" "$tmpl/secret.key"
cp "$work/key.pem" "$tmpl/keys/priv.pem"
cp "$work/key.pem" "$tmpl/tests/.ssh/id_ed25519"
printf 'github.com ssh-ed25519 AAAAC3Nz\n' >"$tmpl/tests/.ssh/known_hosts"
printf '= Guide\n\nAn AsciiDoc file.\n' >"$tmpl/guide.asc"
printf 'TOKEN=secret\n' >"$tmpl/.env"
printf 'one\n' >"$tmpl/a.txt"
printf 'scratch/\n' >"$tmpl/.gitignore"
(
	cd "$tmpl" && git init -q && git config user.email t@example.invalid &&
		git config user.name test &&
		git add .gitignore a.txt guide.asc certifi/cacert.pem tests/server.pem id_rsa \
			secret.key tests/.ssh/known_hosts && git commit -qm init
) || { echo "Bail out! git init"; exit 1; }

# in_view FILE: is FILE's content (backing) what the view shows at the same path
same() { cmp -s "$repo/$1" "$mnt/$1"; }
# shellcheck disable=SC2010 # the listing is what is tested
hidden() { [ ! -e "$mnt/$1" ] && ! ls -a "$mnt/$(dirname "$1")" | grep -qxF "$(basename "$1")"; }
# erofs_append FILE: open for appending and write one byte; EROFS (at the
# open, or at the write with -o fast_open), the backing file unchanged
erofs_append() {
	local before after err
	before=$(sha256sum <"$repo/$1")
	err=$(python3 - "$mnt/$1" <<-'PY' 2>&1
		import errno, os, sys
		try:
		    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
		    os.write(fd, b"x")
		except OSError as e:
		    print(errno.errorcode[e.errno])
		PY
	)
	after=$(sha256sum <"$repo/$1")
	[ "$err" = EROFS ] && [ "$before" = "$after" ]
}
jr() { (cd "$repo" && "$J" --root "$mnt" --json --timeout 120 "$@" 2>"$work/jr.err"); }
stdout_of() { jq -r .stdout <<<"$1"; }

# ---------------------------------------------------------------- each open mode
for mode in plain fast_open; do
	echo "# mode $mode"
	repo=$work/$mode/repo
	mnt=$work/$mode/mnt
	mkdir -p "$work/$mode"
	cp -a "$tmpl" "$repo"
	# the copies have new inodes and ctimes: tracked files are shown only
	# once the host's git has seen them again and rewritten the index
	git -C "$repo" status --porcelain >/dev/null
	opts=()
	[ "$mode" = fast_open ] && opts=(-o fast_open)
	if ! mount_view "$mnt" "${opts[@]}" "$repo" 2>"$work/mount.err"; then
		bad "$mode: jailfs did not mount ($(cat "$work/mount.err"))"
		continue
	fi
	check "$mode: start-up line names the 3 tracked files shown read-only" \
		grep -q '^jailfs: 3 files tracked by git shown read-only.*id_rsa, secret.key, tests/.ssh/known_hosts$' \
		"$work/mount.err"

	# public content
	check "$mode: CA bundle certifi/cacert.pem readable, same bytes" same certifi/cacert.pem
	check "$mode: guide.asc (AsciiDoc) readable" same guide.asc
	check "$mode: tracked tests/server.pem (a certificate) readable" same tests/server.pem
	check "$mode: keys/priv.pem (private key) hidden from lookup and listing" hidden keys/priv.pem
	check "$mode: .env hidden" hidden .env

	# tracked files with DENIED names: read-only
	check "$mode: tracked id_rsa readable" same id_rsa
	check "$mode: tracked secret.key readable" same secret.key
	check "$mode: tracked tests/.ssh/known_hosts readable" same tests/.ssh/known_hosts
	check "$mode: untracked tests/.ssh/id_ed25519 hidden" hidden tests/.ssh/id_ed25519
	check "$mode: tests/.ssh lists known_hosts only" \
		test "$(ls -A "$mnt/tests/.ssh")" = known_hosts
	check "$mode: write to tracked id_rsa: EROFS, backing unchanged" erofs_append id_rsa
	check "$mode: write to tracked secret.key: EROFS, backing unchanged" erofs_append secret.key
	# the real mode bits in every open mode: the daemon refuses the write
	check "$mode: id_rsa shown with its own bits" \
		test "$(stat -c %a "$mnt/id_rsa")" = "$(stat -c %a "$repo/id_rsa")"
	err=$(touch "$mnt/tests/.ssh/new" 2>&1)
	check "$mode: no new name in the tracked .ssh/ (EACCES, nothing created)" \
		eval 'grep -q "Permission denied" <<<"$err" && [ ! -e "$repo/tests/.ssh/new" ]'

	# git in the jail: clean, and commit -a records no deletion
	js=$(jr -- git status --porcelain)
	check "$mode: git status in jailrun --root: clean tree" \
		eval '[ "$(jq -r .exit_code <<<"$js")" = 0 ] && [ -z "$(stdout_of "$js")" ]'
	printf 'two\n' >>"$mnt/a.txt"
	js=$(jr -- git commit -qam change)
	check "$mode: git commit -a in jailrun --root succeeds" \
		test "$(jq -r .exit_code <<<"$js")" = 0
	check "$mode: the commit changed a.txt only, no deletion" \
		test "$(git -C "$repo" show --name-status --format= HEAD)" = "$(printf 'M\ta.txt')"
	check "$mode: id_rsa, secret.key, known_hosts still tracked" \
		test "$(git -C "$repo" ls-files id_rsa secret.key tests/.ssh | wc -l)" = 3

	# names subject to content created through the view
	mkdir -p "$mnt/scratch"
	check "$mode: create scratch/ca.pem with a certificate through the view" \
		cp "$work/cert.pem" "$mnt/scratch/ca.pem"
	check "$mode: scratch/ca.pem reads back" cmp -s "$work/cert.pem" "$mnt/scratch/ca.pem"
	cp "$work/key.pem" "$mnt/scratch/my.pem" 2>/dev/null
	check "$mode: scratch/my.pem written with a private key exists on disk" \
		cmp -s "$work/key.pem" "$repo/scratch/my.pem"
	check "$mode: ... and is hidden from the view from then on" \
		eval '! cat "$mnt/scratch/my.pem" >/dev/null 2>&1 && hidden scratch/my.pem'

	# the host writes a private key into a certificate the view showed
	cp "$work/cert.pem" "$repo/scratch/later.pem"
	check "$mode: scratch/later.pem (certificate) visible" test -e "$mnt/scratch/later.pem"
	exec 7<"$mnt/scratch/later.pem"
	cp "$work/key.pem" "$repo/scratch/later.pem"
	check "$mode: after the host wrote a key into it: open refused" \
		eval '! cat "$mnt/scratch/later.pem" >/dev/null 2>&1'
	check "$mode: ... and reading the fd opened before fails too" \
		eval '! cat <&7 >/dev/null 2>&1'
	exec 7<&-
	# the same through an fd opened read-write: on root's default mount a
	# write open is a passthrough handle, unless the zone depends on content
	cp "$work/cert.pem" "$repo/scratch/rw.pem"
	exec 8<>"$mnt/scratch/rw.pem"
	cp "$work/key.pem" "$repo/scratch/rw.pem"
	out=$(cat <&8 2>&1)
	check "$mode: a read-write fd on a certificate turned key reads no key (ENOENT)" \
		eval '! grep -q "PRIVATE KEY" <<<"$out" && grep -q "No such file" <<<"$out"'
	exec 8<&-
	umount_view "$mnt" || bad "$mode: unmount"
done

# ---------------------------------------------------------------- venv and pip
# Debian's python3: ensurepip writes pip's certifi/cacert.pem through the view
venv=$work/venv
mkdir -p "$venv"
printf 'x\n' >"$venv/main.py"
js=$(cd "$venv" && "$J" --source "$venv" --json --timeout 300 -- /usr/bin/python3 -m venv .venv 2>"$work/jr.err")
check "python3 -m venv .venv through jailrun --source" \
	eval '[ "$(jq -r .exit_code <<<"$js")" = 0 ] && [ -x "$venv/.venv/bin/pip" ]'
check "pip's cacert.pem written in the backing tree" \
	eval 'ls "$venv"/.venv/lib/python3*/site-packages/pip/_vendor/certifi/cacert.pem >/dev/null'
printf 'import pip._vendor.certifi as c\nprint(len(open(c.where()).read()) > 100000)\n' \
	>"$venv/where.py"
js=$(cd "$venv" && "$J" --source "$venv" --json --timeout 300 -- .venv/bin/python where.py 2>"$work/jr.err")
check "the venv's python reads pip's cacert.pem through the view" \
	test "$(stdout_of "$js")" = True
js=$(cd "$venv" && "$J" --source "$venv" --json --timeout 300 -- .venv/bin/pip --version 2>"$work/jr.err")
check "the venv's pip runs" eval '[ "$(jq -r .exit_code <<<"$js")" = 0 ] && grep -q "^pip " <<<"$(stdout_of "$js")"'

tap_done || exit 1
echo "all $tap_n passed"
