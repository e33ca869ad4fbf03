#!/bin/bash
# SPDX-License-Identifier: MIT
#
# git work trees through jailrun --source (one-shot views, -o fast_open):
#  - a linked work tree (git worktree add ../wt): git status and git commit
#    in the jail work through a second view of the main repository's git
#    directory, and the commit is the host's; what makes git run code or
#    read elsewhere (hooks/, config, worktrees/*/commondir, gitdir, a new
#    worktrees/evil/commondir) cannot be written, the disk keeps its bytes;
#    the main repository's work tree is not in the jail
#  - the .git file is checked, not followed: one naming another work tree's
#    directory, or a directory that is not a work tree's, shows nothing
#  - the project's policy decides for the git directory too: .git RESTRICTED
#    makes its view read-only, DENIED hides it
#  - the main repository: git gc works with a work tree elsewhere; git
#    worktree prune in the jail leaves an idle work tree it cannot see alone
#    (placeholders); git worktree add in the jail is refused at
#    worktrees/<name>/gitdir and leaves nothing behind; the host's git
#    worktree add works afterwards
# Needs root, /dev/fuse and git; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}

# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
require_root_fuse git

# has PATTERN: the last output ($out) holds a line matching PATTERN (grep -E)
has() { grep -qE -- "$1" <<<"$out"; }

# Not under /tmp: the jail's /tmp is its own.
T=$(mktemp -d /var/tmp/jf-worktree.XXXXXX)
cleanup() {
	stop_persistent
	rm -rf "$T"
}
trap cleanup EXIT
M=$T/main
W=$T/wt
C=$M/.git
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
(
	set -e
	git init -q -b main "$M"
	# an identity in the repository's config: the jail has no ~/.gitconfig
	git -C "$M" config user.name t
	git -C "$M" config user.email t@example.invalid
	echo main-only >"$M/main-file"
	git -C "$M" add main-file
	git -C "$M" commit -q -m one
	git -C "$M" worktree add -q "$W"
) || { echo "Bail out! cannot set up the repository"; exit 1; }

# jr DIR ARGS...: jailrun --source DIR from DIR; output in $out, status in $rc
jr() {
	local d=$1
	shift
	out=$(cd "$d" && "$J" --source "$d" "$@" 2>&1)
	rc=$?
}
# sums: a fingerprint of the files that make git run code or read elsewhere
# (names, sizes, mtimes and the redirecting files' bytes; not directories'
# mtimes: HEAD.lock comes and goes in worktrees/wt)
sums() {
	(cd "$C" && find hooks config objects/info worktrees/wt \( -type d -printf '%p d\n' \) -o \
		-printf '%p %y %s %T@\n' | grep -v '^worktrees/wt/HEAD.lock ' | LC_ALL=C sort &&
		cat config worktrees/*/commondir worktrees/*/gitdir) | sha256sum
}

# ---- the linked work tree ----
jr "$W" -- git status --porcelain=v1 -b
check "git status in a linked work tree runs (exit $rc)" [ "$rc" = 0 ]
check "git status shows the work tree's branch" has '^## wt$'

echo two >"$W/two"
jr "$W" -- git add two
check "git add in the work tree (exit $rc)" [ "$rc" = 0 ]
jr "$W" -- git commit -q -m two
check "git commit in the work tree (exit $rc)" [ "$rc" = 0 ]
check "the commit is on the host's branch wt" [ "$(git -C "$M" log -1 --format=%s wt)" = two ]
check "the host's work tree is clean after it" [ -z "$(git -C "$W" status --porcelain)" ]
check "the host's git finds the repository sound" git -C "$M" fsck --no-progress

# writes into the main git directory, errno by errno
cat >"$W/probe.py" <<EOF
import errno, os
C = "$C"
def probe(name, fn):
    try:
        fn(); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
def create(p, text="x"):
    with open(p, "w") as f: f.write(text)
def append(p):
    with open(p, "a") as f: f.write("[core]\n\tfsmonitor = touch /tmp/pwned\n")
probe("hook", lambda: create(C + "/hooks/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n"))
probe("config", lambda: append(C + "/config"))
probe("config-rename", lambda: os.rename(C + "/HEAD", C + "/config"))
probe("mkdir-evil", lambda: os.mkdir(C + "/worktrees/evil"))
probe("evil-commondir", lambda: create(C + "/worktrees/evil/commondir", "/var/tmp\n"))
probe("evil-gitdir", lambda: create(C + "/worktrees/evil/gitdir", "/x/.git\n"))
probe("evil-config", lambda: create(C + "/worktrees/evil/config"))
probe("evil-symlink", lambda: os.symlink("/var/tmp", C + "/worktrees/evil/commondir"))
probe("wt-commondir", lambda: create(C + "/worktrees/wt/commondir", "/var/tmp\n"))
probe("wt-commondir-unlink", lambda: os.unlink(C + "/worktrees/wt/commondir"))
probe("wt-gitdir-unlink", lambda: os.unlink(C + "/worktrees/wt/gitdir"))
probe("wt-config-worktree", lambda: create(C + "/worktrees/wt/config.worktree"))
probe("wt-rename", lambda: os.rename(C + "/worktrees/wt", C + "/worktrees/wt-old"))
probe("alternates", lambda: create(C + "/objects/info/alternates", "/var/tmp\n"))
probe("head-lock", lambda: (create(C + "/worktrees/wt/HEAD.lock", "x"), os.unlink(C + "/worktrees/wt/HEAD.lock")))
print("main-tree", sorted(os.listdir("$M")))
probe("main-file", lambda: open("$M/main-file").read())
EOF
before=$(sums)
jr "$W" -- python3 probe.py
check "the probe ran (exit $rc)" [ "$rc" = 0 ]
check "creating hooks/pre-commit: EROFS" has '^hook EROFS$'
# fast_open: a write open of a file outside SAFE meets the kernel's mode check
check "appending to config: refused (EACCES or EROFS)" has '^config (EACCES|EROFS)$'
check "renaming over config: EROFS" has '^config-rename EROFS$'
check "a new worktrees/evil/ directory may be made" has '^mkdir-evil ok$'
check "creating worktrees/evil/commondir: EROFS" has '^evil-commondir EROFS$'
check "creating worktrees/evil/gitdir: EROFS" has '^evil-gitdir EROFS$'
check "creating worktrees/evil/config: EROFS" has '^evil-config EROFS$'
check "a symlink named worktrees/evil/commondir: refused" has '^evil-symlink (EROFS|EACCES)$'
check "rewriting worktrees/wt/commondir: refused" has '^wt-commondir (EACCES|EROFS)$'
check "unlinking worktrees/wt/commondir: EROFS" has '^wt-commondir-unlink EROFS$'
check "unlinking worktrees/wt/gitdir: EROFS" has '^wt-gitdir-unlink EROFS$'
check "creating worktrees/wt/config.worktree: EROFS" has '^wt-config-worktree EROFS$'
check "renaming worktrees/wt away: refused (EXDEV)" has '^wt-rename EXDEV$'
check "creating objects/info/alternates: EROFS" has '^alternates EROFS$'
check "worktrees/wt/HEAD.lock can be written and removed" has '^head-lock ok$'
check "the main work tree shows only .git in the jail" has "^main-tree \['.git'\]$"
check "the main work tree's files are not in the jail" has '^main-file ENOENT$'
check "nothing that makes git run code changed on disk" [ "$(sums)" = "$before" ]
check "worktrees/evil/ is empty on disk" rmdir "$C/worktrees/evil"
rm -f "$W/probe.py"

# ---- the .git file is checked, not followed ----
mkdir -p "$T/fake"
echo "gitdir: $C/worktrees/wt" >"$T/fake/.git"
jr "$T/fake" -- git status
check "a .git file naming another work tree's directory: not shown (exit $rc)" \
	[ "$rc" != 0 ]
check "... and jailrun says why" has "not showing the main repository's git directory: .*does not name $T/fake/.git"
echo "gitdir: $T/main/.git" >"$T/fake/.git"
jr "$T/fake" -- git status
check "a .git file naming the main git directory itself: not shown (exit $rc)" \
	[ "$rc" != 0 ]

# ---- the project's policy decides for the git directory too ----
printf '[safe]\n/\n[restricted]\n.git/\n' >"$T/ro.ini"
echo three >"$W/three"
jr "$W" --policy "$T/ro.ini" -- git add three
check ".git RESTRICTED: the git directory's view is read-only" has 'Read-only file system'
check "... and the index did not change" [ -z "$(git -C "$W" diff --cached --name-only)" ]
rm -f "$W/three"
printf '[safe]\n/\n[denied]\n.git/\n' >"$T/hidden.ini"
jr "$W" --policy "$T/hidden.ini" -- git status
check ".git DENIED: the git directory is not shown (exit $rc)" [ "$rc" != 0 ]

# ---- the main repository ----
jr "$M" -- git gc --quiet
check "git gc in a repository with a work tree elsewhere (exit $rc)" [ "$rc" = 0 ]
check "git gc packed the objects" grep -qE '^packs: [1-9]' <<<"$(git -C "$M" count-objects -v)"
# an idle work tree the jail cannot see: git would take it for deleted
touch -d '4 months ago' "$C/worktrees/wt/index" "$C/worktrees/wt/gitdir"
jr "$M" -- git worktree list --porcelain
check "git in the jail does not take the idle work tree for a deleted one" \
	eval "has '^worktree $W\$' && ! has '^prunable'"
jr "$M" -- git worktree prune -v
check "git worktree prune in the jail (exit $rc)" [ "$rc" = 0 ]
check "... removes nothing" eval "! has 'Removing worktrees/wt'"
jr "$M" -- git gc --quiet
check "git gc again, with the work tree idle (exit $rc)" [ "$rc" = 0 ]
check "the idle work tree keeps its HEAD and index" \
	[ -f "$C/worktrees/wt/HEAD" ] && [ -f "$C/worktrees/wt/index" ]
check "the host's git status in it still works" git -C "$W" status --porcelain
jr "$M" -- git worktree add inner
check "git worktree add in the jail: refused at worktrees/inner/gitdir" \
	has "worktrees/inner/gitdir.*Read-only file system"
check "... and nothing of it is left" [ ! -e "$C/worktrees/inner" ] && [ ! -e "$M/inner/.git" ]
check "the host's git worktree add works afterwards" git -C "$M" worktree add -q "$T/wt2"
jr "$T/wt2" -- git status --porcelain=v1 -b
check "git status in the new work tree (exit $rc)" has '^## wt2$'

tap_done
