#!/bin/bash
# SPDX-License-Identifier: MIT
#
# A name a directory rule protects is protected whatever object holds it
# (jailfs-policy(5), SEMANTICS), and creating a name answers the same
# whether or not a hidden object holds it. On real jailfs mounts of a real
# tree, in each mode (root's default mount: passthrough, sees every open;
# -o fast_open; audit level all; --read-only with an audit log; an ordinary
# user's mount through fusermount3), and through jailrun --source and
# jailrun --root:
#  - a symlink, file, FIFO, socket, hard link or rename named .claude,
#    .vscode, .idea, .cursor, .husky, lib/.git/hooks or lib/.git/modules
#    answers EROFS and the backing tree is unchanged; so does a symlink or
#    file named like a directory above a protected name
#    (lib/.git/objects/info, above objects/info/alternates)
#  - end to end: a hooks symlink planted in a nested repository the host
#    then commits in: host git runs no hook
#  - creating .ssh, secrets, .aws (file, FIFO, symlink, directory) answers
#    EACCES in a directory where hidden ones exist and in one where none do;
#    creating x.pem answers the same beside a hidden private key x.pem as
#    in a directory without one, and succeeds in a directory made through
#    the view (mkdir then create, in one jailrun run too); jailrun's hint
#    says so
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
: "${JAILFS:?JAILFS not set}"
: "${JAILRUN:?JAILRUN not set}"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse git python3 setpriv fusermount3

work_dir dirrules

# The one system call per run, as a file in the tree, so a jail can run it
# too; prints OK or the errno name.
read -r -d '' TRY <<-'PY'
	import errno, os, stat, sys
	# "hex:..." arguments: names jailrun's guardrails would refuse to pass
	op = sys.argv[1]
	a = [bytes.fromhex(x[4:]).decode() if x.startswith("hex:") else x for x in sys.argv[2:]]
	try:
	    if op == "create":
	        os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
	    elif op == "open-creat":
	        os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT, 0o644))
	    elif op == "symlink":
	        os.symlink(a[0], a[1])
	    elif op == "mkfifo":
	        os.mkfifo(a[0])
	    elif op == "mksock":
	        os.mknod(a[0], 0o644 | stat.S_IFSOCK)
	    elif op == "link":
	        os.link(a[0], a[1])
	    elif op == "rename":
	        os.rename(a[0], a[1])
	    elif op == "mkdir":
	        os.mkdir(a[0])
	    elif op == "unlink":
	        os.unlink(a[0])
	    elif op == "rmdir":
	        os.rmdir(a[0])
	    elif op == "lstat":
	        os.lstat(a[0])
	    elif op == "readlink":
	        print(os.readlink(a[0]))
	        sys.exit(0)
	    elif op == "mkdir-create":
	        os.mkdir(os.path.dirname(a[0]))
	        os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
	    print("OK")
	except OSError as e:
	    print(errno.errorcode[e.errno])
PY

# as_user: the prefix that runs a command as the mount's user
as_user=()
# the system python: the user may not reach a python3 under /root
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
try() { "${as_user[@]}" "$py" "$src/t/try.py" "$@" 2>&1; }

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

# same WANT DESC OP NAME [ARG]: OP of a/NAME (hidden objects there) and of
# b/NAME (none) both answer WANT, and nothing on disk changes
same() {
	local want=$1 desc=$2 op=$3 name=$4 ga gb before
	before=$(tree_sum "$src")
	if [ "$op" = symlink ]; then
		ga=$(try symlink x "$mnt/a/$name")
		gb=$(try symlink x "$mnt/b/$name")
	else
		ga=$(try "$op" "$mnt/a/$name")
		gb=$(try "$op" "$mnt/b/$name")
	fi
	if [ "$ga" != "$gb" ]; then
		bad "$desc: $op $name: $ga beside a hidden one, $gb where none is"
	elif [ "$ga" != "$want" ]; then
		bad "$desc: $op $name: $ga in both, want $want"
	elif [ "$(tree_sum "$src")" != "$before" ]; then
		bad "$desc: $op $name: $ga but the backing tree changed"
	else
		ok "$desc: $op $name: $ga with and without a hidden one"
	fi
}

# ---------------------------------------------------------------- the tree
tmpl=$work/tmpl
mkdir -p "$tmpl/t" "$tmpl/agent/claude" "$tmpl/myhooks" "$tmpl/a/.ssh" "$tmpl/a/secrets" \
	"$tmpl/a/.aws" "$tmpl/b"
printf '%s\n' "$TRY" >"$tmpl/t/try.py"
printf 'one\n' >"$tmpl/f"
printf '{"permissions": {"allow": ["Bash(*)"]}}\n' >"$tmpl/agent/claude/settings.json"
printf '#!/bin/sh\ntouch "%s/hook-ran"\n' "$work" >"$tmpl/myhooks/pre-commit"
chmod 0755 "$tmpl/myhooks/pre-commit"
printf 'x\n' >"$tmpl/a/.ssh/id_rsa"
printf 'x\n' >"$tmpl/a/secrets/token"
printf 'x\n' >"$tmpl/a/.aws/credentials"
printf -- '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n' >"$tmpl/a/x.pem"
# what the host made: a symlink .claude and a file secrets
mkdir -p "$tmpl/host"
ln -s ../agent/claude "$tmpl/host/.claude"
printf 'x\n' >"$tmpl/host/secrets"
# a nested repository without hooks/ (git init --template= makes none)
(
	cd "$tmpl" && git init -q --template= lib && cd lib &&
		git config user.email t@example.invalid && git config user.name test &&
		printf 'x\n' >x && git add x && git commit -qm init && test ! -e .git/hooks
) || { echo "Bail out! git init"; exit 1; }

# protected NAME...: the refusals of the directory rules, in mode $mode
protected() {
	expect EROFS "$mode: symlink .claude -> agent/claude" symlink agent/claude "$mnt/.claude"
	expect EROFS "$mode: create file .claude" create "$mnt/.claude"
	expect EROFS "$mode: mkfifo .vscode" mkfifo "$mnt/.vscode"
	expect EROFS "$mode: symlink .vscode -> agent" symlink agent "$mnt/.vscode"
	expect EROFS "$mode: socket .idea" mksock "$mnt/.idea"
	expect EROFS "$mode: link f .cursor" link "$mnt/f" "$mnt/.cursor"
	expect EROFS "$mode: rename f .husky" rename "$mnt/f" "$mnt/.husky"
	expect EROFS "$mode: rename agent/claude .claude" rename "$mnt/agent/claude" "$mnt/.claude"
	expect EROFS "$mode: symlink lib/.git/hooks -> ../../myhooks" \
		symlink ../../myhooks "$mnt/lib/.git/hooks"
	expect EROFS "$mode: mkfifo lib/.git/modules" mkfifo "$mnt/lib/.git/modules"
	check "$mode: no .claude, no lib/.git/hooks in the backing tree" \
		test ! -L "$src/.claude" -a ! -e "$src/.claude" -a ! -L "$src/lib/.git/hooks"
	# the directories above a protected name: objects/info/alternates
	expect EROFS "$mode: create file lib/.git/worktrees" create "$mnt/lib/.git/worktrees"
	[ "$mode" = read-only ] && return
	expect OK "$mode: rmdir lib/.git/objects/info (empty, SAFE)" rmdir "$mnt/lib/.git/objects/info"
	expect EROFS "$mode: symlink lib/.git/objects/info -> ../../../agent" \
		symlink ../../../agent "$mnt/lib/.git/objects/info"
	expect OK "$mode: mkdir lib/.git/objects/info again" mkdir "$mnt/lib/.git/objects/info"
}

# host-made objects: the view, --check and --scan agree
host_made() {
	local out
	expect ../agent/claude "$mode: host/.claude (symlink) reads" readlink "$mnt/host/.claude"
	expect EROFS "$mode: unlink host/.claude" unlink "$mnt/host/.claude"
	expect ENOENT "$mode: host/secrets (a file) is hidden" lstat "$mnt/host/secrets"
	check "$mode: host/secrets not listed" eval '! ls -a "$mnt/host" | grep -qx secrets'
	out=$("$JAILFS" --check --source "$src" host/.claude host/secrets | cut -f1 | tr '\n' ' ')
	check "$mode: --check agrees: $out" [ "$out" = "RESTRICTED DENIED " ]
	out=$("$JAILFS" --scan --all "$src" | grep -c '^RESTRICTED.*host/.claude$\|^DENIED.*host/secrets$')
	check "$mode: --scan agrees" [ "$out" = 2 ]
}

# oracle: creating hidden directories' names and a content-hidden name
oracle() {
	local name op
	for name in .ssh secrets .aws; do
		for op in create mkfifo symlink mkdir; do
			same EACCES "$mode" "$op" "$name"
		done
	done
	same "$1" "$mode" create x.pem
	same "$1" "$mode" open-creat x.pem
	same "$1" "$mode" mkfifo x.pem
}

# host git commits in the nested repository: no hook runs
host_commit() {
	rm -f "$work/hook-ran"
	"${as_user[@]}" git -C "$src/lib" -c user.email=t@example.invalid -c user.name=test \
		commit -q --allow-empty -m host >/dev/null 2>&1
	check "$1: host git commit in lib/ ran no hook" test ! -e "$work/hook-ran"
}

for mode in plain fast_open audit-all read-only unprivileged; do
	src=$work/src-$mode
	mnt=$work/mnt-$mode
	audit=$work/audit-$mode.log
	cp -a "$tmpl" "$src"
	opts=()
	as_user=()
	case $mode in
	fast_open) opts=(-o fast_open) ;;
	audit-all) opts=(--audit "$audit" --audit-level all) ;;
	read-only) opts=(--read-only --audit "$audit") ;;
	unprivileged)
		chmod 0666 /dev/fuse
		chown -R jftest: "$src"
		mkdir -p "$mnt" && chown jftest: "$mnt"
		as_user=(setpriv --reuid=jftest --regid=jftest --init-groups)
		;;
	esac
	mounts+=("$mnt")
	mkdir -p "$mnt"
	if ! "${as_user[@]}" "$JAILFS" "${opts[@]}" "$src" "$mnt"; then
		bad "$mode: mount"
		continue
	fi
	for _ in $(seq 100); do mounted "$mnt" && break; sleep 0.05; done

	protected
	host_made
	host_commit "$mode"
	if [ "$mode" = read-only ]; then
		oracle EACCES
	else
		oracle EACCES
		expect OK "$mode: mkdir c" mkdir "$mnt/c"
		expect OK "$mode: create c/cert.pem in a directory made through the view" \
			create "$mnt/c/cert.pem"
		expect OK "$mode: mkdir -p d/e" mkdir "$mnt/d"
		expect OK "$mode: ... d/e" mkdir "$mnt/d/e"
		expect OK "$mode: rename f d/e/x.key" rename "$mnt/f" "$mnt/d/e/x.key"
	fi
	umount_view "$mnt" || bad "$mode: unmount"
done

# ---------------------------------------------------------------- jailrun
# jr ARGS...: run the one call in a jail; prints what it printed
jr() { "$JAILRUN" "$@" 2>/dev/null | tail -n 1; }
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
src=$work/src-jailrun
cp -a "$tmpl" "$src"
before=$(tree_sum "$src")
got=$(jr --source "$src" -- python3 t/try.py symlink agent/claude .claude)
check "jailrun --source: symlink .claude: $got, want EROFS" [ "$got" = EROFS ]
got=$(jr --source "$src" -- python3 t/try.py symlink "hex:$(hex ../../myhooks)" lib/.git/hooks)
check "jailrun --source: symlink lib/.git/hooks: $got, want EROFS" [ "$got" = EROFS ]
ga=$(jr --source "$src" -- python3 t/try.py create "hex:$(hex a/x.pem)")
gb=$(jr --source "$src" -- python3 t/try.py create "hex:$(hex b/x.pem)")
check "jailrun --source: create x.pem: $ga beside a hidden one, $gb where none is" \
	[ "$ga" = "$gb" -a "$ga" = EACCES ]
ga=$(jr --source "$src" -- python3 t/try.py create "hex:$(hex a/.ssh)")
gb=$(jr --source "$src" -- python3 t/try.py create "hex:$(hex b/.ssh)")
check "jailrun --source: create .ssh: $ga and $gb, want EACCES" [ "$ga" = "$gb" -a "$ga" = EACCES ]
check "jailrun --source: the backing tree is unchanged" [ "$(tree_sum "$src")" = "$before" ]
host_commit "jailrun --source"
hint=$("$JAILRUN" --source "$src" --json -- python3 t/try.py create "hex:$(hex b/x.pem)" \
	2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin).get("hint"))')
check "jailrun --source: the hint says where x.pem can be created: $hint" \
	grep -q "made through the view (mkdir it first" <<<"$hint"
got=$(jr --source "$src" -- python3 t/try.py mkdir-create "hex:$(hex c/x.pem)")
check "jailrun --source: mkdir c, then create c/x.pem in one run: $got, want OK" [ "$got" = OK ]
rm -rf "$src/c"
before=$(tree_sum "$src")

mnt=$work/mnt-jailrun
mount_view "$mnt" "$src" || bad "jailrun --root: mount"
got=$(jr --root "$mnt" -- python3 t/try.py symlink agent/claude .claude)
check "jailrun --root: symlink .claude: $got, want EROFS" [ "$got" = EROFS ]
got=$(jr --root "$mnt" -- python3 t/try.py mkfifo lib/.git/hooks)
check "jailrun --root: mkfifo lib/.git/hooks: $got, want EROFS" [ "$got" = EROFS ]
ga=$(jr --root "$mnt" -- python3 t/try.py create "hex:$(hex a/secrets)")
gb=$(jr --root "$mnt" -- python3 t/try.py create "hex:$(hex b/secrets)")
check "jailrun --root: create secrets: $ga and $gb, want EACCES" \
	[ "$ga" = "$gb" -a "$ga" = EACCES ]
ga=$(jr --root "$mnt" -- python3 t/try.py create "hex:$(hex a/x.pem)")
gb=$(jr --root "$mnt" -- python3 t/try.py create "hex:$(hex b/x.pem)")
check "jailrun --root: create x.pem: $ga beside a hidden one, $gb where none is" \
	[ "$ga" = "$gb" -a "$ga" = EACCES ]
check "jailrun --root: the backing tree is unchanged" [ "$(tree_sum "$src")" = "$before" ]
umount_view "$mnt" || bad "jailrun --root: unmount"
tap_done
