#!/bin/bash
# SPDX-License-Identifier: MIT
#
# git state files that a later host git command reads as instructions
# (docs/threat-model.md, "Git state files"). In each mode (jailrun --source,
# one-shot -o fast_open view; jailrun --root on root's default mount,
# passthrough, on a -o fast_open mount, and on a mount with an audit log at
# level all), the agent starts an operation in the jail and plants its
# payload; then the user goes on with host git, outside the jail, on the
# backing tree:
#  - sequencer/opts "strategy = x/../payload": host git cherry-pick
#    --continue must not run the work tree's script
#  - rebase-merge/strategy: the same with git rebase --continue
#  - rebase-merge/gpg_sign_opt: host git rebase --continue must not sign
#    with a key the agent chose (gpg.program is a marker script)
#  - rebase-apply/gpg_sign_opt, info/grafts, remotes/origin, branches/origin:
#    the write is refused; host git log keeps the history, host git push
#    origin does not reach a repository the agent named
#  - an index with entries .git/hooks/pre-commit and ../outside: written,
#    renamed onto .git/index or through index.lock, it is refused; host git
#    restore . writes neither, host git commit runs no hook; an index.lock
#    kept open across its rename cannot change the index afterwards, nor can
#    a second name of it (a hard link made before the rename); entries
#    staged for .claude/settings.json, the tracked .vscode/settings.json or
#    the hidden, untracked deploy.key are refused, host git restore . writes
#    none, git add of a public certificate and git add -A and commit of the
#    rest work; one
#    whose cache-tree names a tree of the agent's goes in, but the host's
#    next commit records the tree of the entries
#  - a replace ref for main, loose (git replace) or in packed-refs (renamed
#    onto it, appended): refused, host git log shows main's commit; git
#    pack-refs, branch -D of a packed branch and tag work in the jail
# Each planted write answers an error in the jail and leaves no file behind.
# And git keeps working in the jail: cherry-pick of a range with a conflict
# then --continue, rebase -i with an edited todo and an exec line, merge with
# a conflict, am, bisect run, stash, fetch from a local remote.
# Needs root, /dev/fuse and git; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
: "${JAILFS:?JAILFS not set}"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse git
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"

# Not under /tmp: the jail's /tmp is its own.
T=$(mktemp -d /var/tmp/jf-gitstate.XXXXXX)
cleanup() {
	unmount_all
	rm -rf "$T"
}
trap cleanup EXIT
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
export GIT_EDITOR=true

# The repository: main and side both change f (a conflict), side adds g;
# up.git, a local remote inside the project; no remote "origin".
tmpl=$T/tmpl
(
	set -e
	git init -q -b main "$tmpl"
	cd "$tmpl"
	# an identity in the repository's config: the jail has no ~/.gitconfig
	git config user.name t
	git config user.email t@example.invalid
	echo a >f
	mkdir .vscode
	echo '{}' >.vscode/settings.json
	git add f .vscode/settings.json
	git commit -q -m a
	git checkout -q -b side
	echo b >f
	git commit -q -am b
	echo c >g
	git add g
	git commit -q -m c
	git checkout -q main
	echo z >f
	git commit -q -am z
	# the user's key, untracked, hidden in the view by its content
	printf -- '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIUSER\n-----END PRIVATE KEY-----\n' \
		>deploy.key
	# the agent's certificate, empty so far: public (the command line may
	# not name it, jailrun's guardrail refuses a *.pem name it cannot judge)
	printf 'mkdir certs && : >certs/agent.pem && git add certs/agent.pem\n' >.git/add-cert.sh
	# the agent stages its own key for the user's deploy.key
	cat >.git/stage-key.sh <<-'SH'
		b=$(printf -- "-----BEGIN PRIVATE KEY-----\nAGENT\n-----END PRIVATE KEY-----\n" |
			git hash-object -w --stdin) &&
			git update-index --add --cacheinfo "100644,$b,deploy.key"
	SH
	git init -q --bare up.git
	git push -q up.git main:refs/heads/up
	git remote add up ./up.git
	git pack-refs --all
	printf 'up.git/\n' >.git/info/exclude
	# rebase -i's editor of the todo: reword the first, run a command last
	printf '#!/bin/sh\nsed -i 1s/^pick/reword/ "$1"\necho "exec touch exec-ran" >>"$1"\n' \
		>.git/seq-editor
	chmod +x .git/seq-editor
	# the agent's tool: an index whose entries git itself would not add
	cat >.git/craft-index.py <<-'PY'
		import hashlib, os, subprocess, sys
		# craft-index.py OUT: stage the hook and the outside file under names of
		# the same length, then rename the entries in the index bytes
		os.makedirs("xgit/hooks", exist_ok=True)
		with open("xgit/hooks/pre-commit", "w") as f:
		    f.write("#!/bin/sh\ntouch " + os.environ["MARKER"] + "\n")
		os.chmod("xgit/hooks/pre-commit", 0o755)
		with open("xx-outside", "w") as f:
		    f.write("outside\n")
		env = dict(os.environ, GIT_INDEX_FILE=".git/craft.tmp")
		subprocess.run(["git", "add", "xgit/hooks/pre-commit", "xx-outside"], env=env, check=True)
		b = open(".git/craft.tmp", "rb").read()[:-20]
		b = b.replace(b"xgit/hooks/pre-commit", b".git/hooks/pre-commit")
		b = b.replace(b"xx-outside", b"../outside")
		b += hashlib.sha1(b).digest()
		with open(sys.argv[1], "wb") as f:
		    f.write(b)
		PY
	# the agent's other tool: an index whose cache-tree names a tree of its
	# own for the root, which the host's next commit would take as it is
	cat >.git/craft-tree.py <<-'PY'
		import hashlib, struct, subprocess
		def git(*a, data=None):
		    return subprocess.run(["git"] + list(a), input=data, capture_output=True,
		                          check=True).stdout.strip()
		blob = git("hash-object", "-w", "--stdin", data=b"backdoor\n").decode()
		tree = git("mktree", data=("100644 blob %s\tbackdoor\n" % blob).encode())
		b = open(".git/index", "rb").read()
		n = struct.unpack(">I", b[8:12])[0]
		p = 12
		for _ in range(n):  # version 2 entries: 62 bytes, the path, NUL padding
		    plen = struct.unpack(">H", b[p + 60:p + 62])[0] & 0xfff
		    p += (62 + plen + 8) & ~7
		ext = b"\0" + b"%d 0\n" % n + bytes.fromhex(tree.decode())
		out = b[:p] + b"TREE" + struct.pack(">I", len(ext)) + ext
		out += hashlib.sha1(out).digest()
		open(".git/index.lock", "wb").write(out)
		PY
	# the agent keeps index.lock open, renames it onto the index, then writes
	# through the fd it kept
	cat >.git/held-index.py <<-'PY'
		import errno, os, shutil
		shutil.copy(".git/index", ".git/index.lock")
		fd = os.open(".git/index.lock", os.O_WRONLY)
		def tell(what, fn):
		    try:
		        fn()
		        print(what, "OK")
		    except OSError as e:
		        print(what, errno.errorcode[e.errno])
		tell("rename", lambda: os.rename(".git/index.lock", ".git/index"))
		tell("write", lambda: os.pwrite(fd, b"\0" * 64, 12))
		os.close(fd)
		PY
) || { echo "Bail out! cannot set up the repository"; exit 1; }
# the marker scripts of the host side: a gpg that records its call
printf '#!/bin/sh\ntouch "%s"\nexit 1\n' "$T/gpg-ran" >"$T/fakegpg"
chmod +x "$T/fakegpg"

# jr MODE SHELL-COMMAND: run the command in the jail over $src (whose
# environment has no GIT_EDITOR); output in $out, status in $rc
jr() {
	local cmd="export GIT_EDITOR=true; $2"
	if [ "$1" = source ]; then
		out=$(cd "$src" && "$J" --source "$src" --shell -- "$cmd" 2>&1)
	else
		out=$("$J" --root "$mnt" --shell -- "$cmd" 2>&1)
	fi
	rc=$?
}

# refused MODE DESC FILE SHELL-COMMAND: the command, run in the jail, fails
# and FILE (below $src) does not exist afterwards
refused() {
	jr "$1" "$4"
	if [ "$rc" = 0 ]; then
		bad "$1: $2: the write succeeded"
	elif [ -e "$src/$3" ]; then
		bad "$1: $2: $3 exists in the backing tree"
	else
		ok "$1: $2: refused (exit $rc)"
	fi
}

# The payload: git runs "git merge-<strategy>", and a strategy with a '/'
# is a path from the top of the work tree.
plant_payload='mkdir -p git-merge-x && printf "#!/bin/sh\ntouch %s\nexit 1\n" >payload &&
chmod +x payload'

n=0
for mode in source root root-fast root-audit; do
	# ---- sequencer/opts: strategy ----
	fresh $mode
	marker=$T/ran-opts-$mode
	# shellcheck disable=SC2059 # the payload is a format: %s is the marker
	jr $mode "$(printf "$plant_payload" "$marker"); git cherry-pick side~1 side"
	check "$mode: cherry-pick of a range stops at the conflict" \
		test "$rc" != 0 -a -d "$src/.git/sequencer"
	refused $mode "git config --file sequencer/opts options.strategy" .git/sequencer/opts \
		'git config --file .git/sequencer/opts options.strategy x/../payload'
	refused $mode "printf >sequencer/opts" .git/sequencer/opts \
		'printf "[options]\n\tstrategy = x/../payload\n" >.git/sequencer/opts'
	(cd "$src" && echo resolved >f && git add f && git cherry-pick --continue) >/dev/null 2>&1
	check "$mode: host git cherry-pick --continue ran no payload" test ! -e "$marker"
	check "$mode: host git cherry-pick --continue picked the range" \
		test "$(git -C "$src" log -1 --format=%s)" = c
	done_with $mode

	# ---- rebase-merge/strategy ----
	fresh $mode
	marker=$T/ran-rebase-$mode
	# shellcheck disable=SC2059 # the payload is a format: %s is the marker
	jr $mode "$(printf "$plant_payload" "$marker"); git checkout -q side && git rebase main"
	check "$mode: rebase stops at the conflict" test "$rc" != 0 -a -d "$src/.git/rebase-merge"
	refused $mode "rebase-merge/strategy" .git/rebase-merge/strategy \
		'echo x/../payload >.git/rebase-merge/strategy'
	refused $mode "rebase-merge/strategy_opts" .git/rebase-merge/strategy_opts \
		"echo \"'--theirs'\" >.git/rebase-merge/strategy_opts"
	(cd "$src" && echo resolved >f && git add f && git rebase --continue) >/dev/null 2>&1
	check "$mode: host git rebase --continue ran no payload" test ! -e "$marker"
	check "$mode: host git rebase --continue finished" \
		test "$(git -C "$src" log -1 --format=%s)" = c -a ! -d "$src/.git/rebase-merge"
	done_with $mode

	# ---- rebase-merge/gpg_sign_opt ----
	fresh $mode
	rm -f "$T/gpg-ran"
	jr $mode 'git checkout -q side && git rebase main'
	check "$mode: rebase stops at the conflict" test "$rc" != 0 -a -d "$src/.git/rebase-merge"
	refused $mode "rebase-merge/gpg_sign_opt" .git/rebase-merge/gpg_sign_opt \
		'echo -Sdeadbeef >.git/rebase-merge/gpg_sign_opt'
	(cd "$src" && echo resolved >f && git add f &&
		git -c gpg.program="$T/fakegpg" rebase --continue) >/dev/null 2>&1
	check "$mode: host git rebase --continue signed nothing" test ! -e "$T/gpg-ran"
	check "$mode: host git rebase --continue finished" \
		test "$(git -C "$src" log -1 --format=%s)" = c -a ! -d "$src/.git/rebase-merge"
	done_with $mode

	# ---- rebase-apply/gpg_sign_opt ----
	fresh $mode
	jr $mode 'git checkout -q side && git rebase --apply main'
	check "$mode: rebase --apply stops at the conflict" \
		test "$rc" != 0 -a -d "$src/.git/rebase-apply"
	refused $mode "rebase-apply/gpg_sign_opt" .git/rebase-apply/gpg_sign_opt \
		'echo -Sdeadbeef >.git/rebase-apply/gpg_sign_opt'
	check "$mode: host git rebase --abort" git -C "$src" rebase --abort
	done_with $mode

	# ---- info/grafts; remotes/ and branches/ ----
	fresh $mode
	count=$(git -C "$src" rev-list --count HEAD)
	refused $mode "a directory holding opts renamed to sequencer/" .git/sequencer/opts \
		'mkdir q && echo "[options]" >q/opts && mv q .git/sequencer'
	refused $mode "info/grafts" .git/info/grafts 'git rev-parse HEAD >.git/info/grafts'
	check "$mode: host git rev-list keeps the history" \
		test "$(git -C "$src" rev-list --count HEAD 2>/dev/null)" = "$count"
	done_with $mode
	fresh $mode
	git init -q --bare "$T/exfil-$mode.git"
	refused $mode "remotes/origin" .git/remotes/origin \
		"mkdir -p .git/remotes && printf 'URL: $T/exfil-$mode.git\n' >.git/remotes/origin"
	refused $mode "branches/origin" .git/branches/origin \
		"mkdir -p .git/branches && printf '$T/exfil-$mode.git\n' >.git/branches/origin"
	out=$(git -C "$src" push origin main:refs/heads/stolen 2>&1)
	jcheck "$mode: host git push origin reached no repository the agent named" \
		test -z "$(git -C "$T/exfil-$mode.git" for-each-ref)"
	done_with $mode

	# ---- index: entries git would not add ----
	fresh $mode
	marker=$T/ran-index-$mode
	outside=$(dirname "$src")/outside
	rm -f "$outside"
	jr $mode "MARKER=$marker python3 .git/craft-index.py .git/evil-index"
	check "$mode: the agent crafts an index (exit $rc)" test "$rc" = 0 -a -s "$src/.git/evil-index"
	sum=$(sha256sum <"$src/.git/index")
	refused $mode "cat >.git/index" .git/xx-none 'cat .git/evil-index >.git/index'
	refused $mode "mv onto .git/index" .git/xx-none 'mv .git/evil-index .git/index'
	refused $mode "cp to index.lock, mv onto .git/index" .git/xx-none \
		'cp .git/evil-index .git/index.lock && mv .git/index.lock .git/index'
	check "$mode: .git/index keeps its bytes" test "$(sha256sum <"$src/.git/index")" = "$sum"
	refused $mode "index.lock with a second name, renamed, written by that name" .git/xx-none \
		'cp .git/index .git/index.lock && ln .git/index.lock .git/idx-link &&
mv .git/index.lock .git/index && cat .git/evil-index >.git/idx-link'
	rm -f "$src/.git/idx-link" "$src/.git/index.lock"
	check "$mode: .git/index names no hook" \
		bash -c '! git -C "$1" ls-files | grep -q hooks' _ "$src"
	(cd "$src" && git restore . && git checkout -- . && git checkout-index -a) >/dev/null 2>&1
	check "$mode: host git restore . wrote no hook" test ! -e "$src/.git/hooks/pre-commit"
	check "$mode: host git restore . wrote nothing outside" test ! -e "$outside"
	(cd "$src" && git commit -q --allow-empty -m x) >/dev/null 2>&1
	check "$mode: host git commit ran no hook" test ! -e "$marker"
	check "$mode: host git status reads the index" git -C "$src" status --porcelain
	# entries for names the view keeps read-only (.claude/settings.json, its
	# hooks run commands; .vscode/settings.json, tracked): host git restore .
	# would write them
	refused $mode "an index entry staged for .claude/settings.json" .git/xx-none \
		'b=$(echo "{\"hooks\":1}" | git hash-object -w --stdin) &&
git update-index --add --cacheinfo "100644,$b,.claude/settings.json"'
	refused $mode "an index entry staged for the tracked .vscode/settings.json" .git/xx-none \
		'b=$(echo "{\"evil\":1}" | git hash-object -w --stdin) &&
git update-index --cacheinfo "100644,$b,.vscode/settings.json"'
	refused $mode "an index entry staged for the hidden deploy.key" .git/xx-none \
		'sh .git/stage-key.sh'
	rm -f "$src/.git/index.lock"
	key=$(sha256sum <"$src/deploy.key")
	(cd "$src" && git restore .) >/dev/null 2>&1
	check "$mode: host git restore . kept deploy.key" test "$(sha256sum <"$src/deploy.key")" = "$key"
	jr $mode 'sh .git/add-cert.sh'
	jcheck "$mode: jail: git add of a public certs/agent.pem it made (exit $rc)" \
		test "$rc" = 0 -a -n "$(git -C "$src" ls-files certs/agent.pem)"
	check "$mode: host git restore . wrote no .claude/settings.json" \
		test ! -e "$src/.claude/settings.json"
	check "$mode: host git restore . kept .vscode/settings.json" \
		test "$(cat "$src/.vscode/settings.json")" = "{}"
	jr $mode 'git add -A && git commit -q -m jail-add'
	jcheck "$mode: jail: git add -A and commit keep the tracked .vscode/settings.json (exit $rc)" \
		test "$rc" = 0 -a -n "$(git -C "$src" ls-files .vscode/settings.json)"
	tree=$(git -C "$src" rev-parse 'HEAD^{tree}')
	jr $mode 'python3 .git/craft-tree.py && mv .git/index.lock .git/index'
	jcheck "$mode: an index with its own cache-tree is renamed into place (exit $rc)" \
		test "$rc" = 0
	(cd "$src" && git commit -q --allow-empty -m tree) >/dev/null 2>&1
	check "$mode: host git commit records the index's tree, not the cache-tree's" \
		test "$(git -C "$src" rev-parse 'HEAD^{tree}')" = "$tree"
	entries=$(git -C "$src" ls-files -s)
	jr $mode 'python3 .git/held-index.py'
	# where the daemon sees opens, the rename waits for the handle, then is
	# refused; under fast_open it goes through and the write meets EROFS
	if grep -q '^rename OK$' <<<"$out"; then
		jcheck "$mode: a write through a handle kept across the rename is refused" \
			grep -qE '^write (EROFS|EIO)$' <<<"$out"
	else
		jcheck "$mode: a rename while a handle may write is refused" \
			grep -q '^rename EROFS$' <<<"$out"
	fi
	check "$mode: .git/index still passes host git fsck" git -C "$src" fsck --no-progress
	check "$mode: .git/index still holds its entries" \
		test "$(git -C "$src" ls-files -s 2>&1)" = "$entries"
	done_with $mode

	# ---- replace refs, loose and in packed-refs ----
	fresh $mode
	jr $mode 'git commit-tree -m evil HEAD^{tree} >.git/evil-id'
	check "$mode: the agent makes a commit object (exit $rc)" test "$rc" = 0
	good=$(git -C "$src" rev-parse main)
	refused $mode "git replace" ".git/refs/replace/$good" \
		"git replace -f $good \$(cat .git/evil-id)"
	refused $mode "a replace ref in packed-refs" .git/xx-none \
		"cp .git/packed-refs .git/packed-refs.lock &&
echo \"\$(cat .git/evil-id) refs/replace/$good\" >>.git/packed-refs.lock &&
mv .git/packed-refs.lock .git/packed-refs"
	refused $mode "append to packed-refs" .git/xx-none \
		"echo \"\$(cat .git/evil-id) refs/replace/$good\" >>.git/packed-refs"
	check "$mode: host git log shows main's own commit" \
		test "$(git -C "$src" log -1 --format=%s main)" = z
	check "$mode: no replace ref in packed-refs" \
		bash -c '! grep -q refs/replace/ "$1"' _ "$src/.git/packed-refs"
	rm -f "$src/.git/packed-refs.lock" # what the refused rename left
	jr $mode 'git pack-refs --all && git branch -q tmp side && git pack-refs --all &&
git branch -q -D tmp && git tag -a -m t v1 && git pack-refs --all && git show-ref -q v1'
	jcheck "$mode: jail: pack-refs, branch -D of a packed branch, tag (exit $rc)" \
		test "$rc" = 0 -a -z "$(git -C "$src" branch --list tmp)"
	done_with $mode

	# ---- ordinary git in the jail ----
	fresh $mode
	jr $mode 'git cherry-pick side~1 side; echo resolved >f && git add f &&
git cherry-pick --continue'
	jcheck "$mode: jail: cherry-pick of a range, conflict, --continue (exit $rc)" \
		test "$rc" = 0 -a "$(git -C "$src" log -1 --format=%s)" = c
	jr $mode 'git reset -q --hard HEAD~2 && git cherry-pick side~1; echo r >f && git add f &&
git cherry-pick --continue'
	jcheck "$mode: jail: cherry-pick of one commit, conflict, --continue (exit $rc)" \
		test "$rc" = 0 -a "$(git -C "$src" log -1 --format=%s)" = b
	jr $mode 'git reset -q --hard main && git checkout -q -b work side &&
GIT_SEQUENCE_EDITOR=.git/seq-editor git rebase -i HEAD~2 && test -e exec-ran'
	jcheck "$mode: jail: rebase -i with an edited todo and an exec line (exit $rc)" \
		test "$rc" = 0 -a ! -d "$src/.git/rebase-merge"
	jr $mode 'unlink exec-ran && git rebase main; echo m >f && git add f && git rebase --continue'
	jcheck "$mode: jail: rebase with a conflict, --continue (exit $rc)" \
		test "$rc" = 0 -a "$(git -C "$src" rev-list --count main..work)" = 2
	jr $mode 'git checkout -q main && git merge side; echo m >f && git add f && git commit -q --no-edit'
	jcheck "$mode: jail: merge with a conflict, commit (exit $rc)" \
		test "$rc" = 0 -a "$(git -C "$src" rev-list --count --merges -1 HEAD)" = 1
	jr $mode 'git checkout -q -b am side~2 && git format-patch -q -o .git/pt side~2..side &&
git am -q .git/pt/*.patch'
	jcheck "$mode: jail: am (exit $rc)" test "$rc" = 0 -a "$(git -C "$src" log -1 --format=%s)" = c
	jr $mode 'git bisect start side main~1 && git bisect run sh -c "! test -e g" >/dev/null &&
git bisect reset >/dev/null'
	jcheck "$mode: jail: bisect run (exit $rc)" test "$rc" = 0 -a ! -e "$src/.git/BISECT_LOG"
	jr $mode 'echo s >>f && git stash -q && git stash pop -q && git diff --quiet; test $? = 1'
	jcheck "$mode: jail: stash and stash pop (exit $rc)" test "$rc" = 0
	git -C "$src/up.git" update-ref refs/heads/up2 up
	jr $mode 'git fetch -q up && git rev-parse -q --verify refs/remotes/up/up2'
	jcheck "$mode: jail: fetch from a local remote (exit $rc)" test "$rc" = 0
	check "$mode: the host's git finds the repository sound" git -C "$src" fsck --no-progress
	done_with $mode
done
tap_done
