#!/bin/bash
# SPDX-License-Identifier: MIT
#
# .git/config and config.worktree written through the validator
# (docs/threat-model.md, "Git state files"). In each mode (jailrun --source,
# one-shot -o fast_open view; jailrun --root on a -o nofast_open mount
# (opens seen, passthrough), on root's default mount (zero-message opens),
# on a mount with an audit log at level all; a --read-only mount):
#  - git's everyday writes of its config work in the jail: git config
#    user.email, git remote add, git checkout -b x origin/x (tracking),
#    git push -u to a local bare repository, git config --worktree
#  - a key that makes git run a program or read another file is refused
#    with EROFS, by git config (core.fsmonitor, core.hooksPath, an alias,
#    include.path, config.worktree's core.pager) and by a config.lock written
#    by hand in another syntax (legacy [diff.x], a continuation line, a
#    quoted subsection) renamed over .git/config; the refusal names the key
#    in jailrun's hint, its JSON result and the audit log
#  - afterwards the host's git status, diff, an alias and git log run none
#    of the payloads (marker files), and .git/config is the last good one
#  - a direct write to .git/config stays refused (EROFS)
#  - submodules: git submodule init, a commit inside the submodule, the
#    superproject's commit of it without a refusal block, git submodule
#    update; the submodule's config is validated too; git submodule add of
#    a local repository and git submodule update --init in a fresh clone
#    (both write the submodule's .git file in place), after which the
#    host's git status works in the superproject and in the submodule
#  - git init and git clone into a subdirectory: hook samples without exec
#    bits, no refusal; no hook planted (created, renamed from a sample, a
#    directory moved onto hooks/, a clone's template: refused, the clone
#    leaving nothing; git init with a template holding a hook, by
#    --template and by GIT_TEMPLATE_DIR: refused, no .git left), the new
#    config validated, host git commit runs no hook
# A --read-only view refuses every write, the good ones too.
# Needs root, /dev/fuse and git; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
: "${JAILFS:?JAILFS not set}"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse git jq
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"

# Not under /tmp: the jail's /tmp is its own.
T=$(mktemp -d /var/tmp/jf-gitconfig.XXXXXX)
cleanup() {
	unmount_all
	rm -rf "$T"
}
trap cleanup EXIT
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid

# The repository, with a bare "origin" inside the project holding branch x.
tmpl=$T/tmpl
(
	set -e
	git init -q -b main "$tmpl"
	cd "$tmpl"
	git config user.name t
	echo a >f
	git add f
	git commit -q -m a
	git init -q --bare origin.git
	git push -q origin.git main main:refs/heads/x
	printf 'origin.git/\nup.git/\n' >.git/info/exclude
	git init -q --bare up.git
) || { echo "FAIL: cannot set up the repository"; exit 1; }

# jr MODE ARGS...: jailrun over $src in MODE with ARGS; output in $out,
# status in $rc
jr() {
	local m=$1
	shift
	if [ "$m" = source ]; then
		out=$(cd "$src" && "$J" --source "$src" "$@" 2>&1)
	else
		out=$("$J" --root "$mnt" "$@" 2>&1)
	fi
	rc=$?
}

# refused_key MODE KEY SHELL-COMMAND: the command fails, jailrun's hint and
# its JSON result name KEY with EROFS, .git/config keeps its bytes
refused_key() {
	local m=$1 key=$2 cmd=$3 sum js
	sum=$(sha256sum <"$src/.git/config")
	jr "$m" --shell -- "$cmd"
	jcheck "$m: $key: refused (exit $rc)" test "$rc" != 0
	jcheck "$m: $key: the command meets EROFS" grep -q "Read-only file system" <<<"$out"
	# a --root view without an audit log keeps no record of what it refused
	if [ "$m" = root ] || [ "$m" = root-fast ]; then
		check "$m: $key: .git/config keeps its bytes" \
			test "$(sha256sum <"$src/.git/config")" = "$sum"
		return
	fi
	jcheck "$m: $key: the hint names the key" \
		grep -q "^jailrun: hint: the view refused renaming .*EROFS: .*$key" <<<"$out"
	jr "$m" --json --shell -- "$cmd"
	js=$out
	jcheck "$m: $key: the JSON refusal says EROFS and names the key" \
		test "$(jq -r --arg k "$key" '[.refusals[] | select(.errno == "EROFS" and
			(.detail // "" | endswith(": " + $k)))] | length' <<<"$js" 2>/dev/null)" -ge 1
	check "$m: $key: .git/config keeps its bytes" \
		test "$(sha256sum <"$src/.git/config")" = "$sum"
	return 0
}

# host_runs_nothing MODE: the host's git, on the backing tree, runs none of
# the payloads the refused keys named
host_runs_nothing() {
	(cd "$src" && git status && git diff HEAD && git log -1 && git st) >/dev/null 2>&1
	check "$1: host git status, diff, log and an alias ran no payload" \
		bash -c '! ls "$1"/marker-* 2>/dev/null | grep -q .' _ "$T"
}

# ---- submodules: .git/modules/<name>/ has the zones of .git/ ----
# A superproject with the submodule "sub" checked out (its git directory in
# .git/modules/sub, its config naming core.worktree = ../../../sub).
super=$T/super
(
	set -e
	git init -q -b main "$T/subrepo"
	git -C "$T/subrepo" commit -q --allow-empty -m s1
	git init -q -b main "$super"
	cd "$super"
	git config user.name t
	git -c protocol.file.allow=always submodule -q add "$T/subrepo" sub
	git commit -q -m "add sub"
	git config user.email t@example.invalid
	git -C sub config user.name t
	git -C sub config user.email t@example.invalid
	git config --remove-section submodule.sub # init, in the jail, writes it again
) || { echo "FAIL: cannot set up the superproject"; exit 1; }

# submodules MODE: git submodule init, a commit inside the submodule, the
# superproject's commit of it (no refusal block on stderr), git submodule
# update; a key that runs a program refused in the submodule's config
submodules() {
	local m=$1 before
	n=$((n + 1))
	src=$T/super-$m-$n
	cp -a "$super" "$src"
	mnt=$T/mnt-super-$m-$n
	case $m in
	root) mount_view "$mnt" -o nofast_open "$src" || bad "$m: mount $mnt" ;;
	root-fast) mount_view "$mnt" "$src" || bad "$m: mount $mnt" ;;
	root-audit)
		mount_view "$mnt" --audit "$T/audit-super-$n.jsonl" --audit-level all "$src" ||
			bad "$m: mount $mnt"
		;;
	esac
	jr "$m" -- git submodule init
	jcheck "$m: git submodule init (exit $rc)" \
		test "$rc" = 0 -a "$(git -C "$src" config submodule.sub.url)" = "$T/subrepo"
	before=$(git -C "$src/sub" rev-parse HEAD)
	jr "$m" --shell -- 'cd sub && echo x >y && git add y && git commit -q -m s2 &&
git status --porcelain'
	jcheck "$m: a commit inside the submodule (exit $rc)" \
		test "$rc" = 0 -a "$(git -C "$src/sub" log -1 --format=%s)" = s2
	jr "$m" --shell -- 'git add sub && git commit -q -m bump'
	jcheck "$m: the superproject commits the submodule (exit $rc)" \
		test "$rc" = 0 -a "$(git -C "$src" log -1 --format=%s)" = bump
	jcheck "$m: ... and jailrun prints no refusal block" \
		bash -c '! grep -q "^jailrun:" <<<"$1"' _ "$out"
	jr "$m" --shell -- "git -C sub checkout -q $before && git submodule -q update &&
git -C sub log -1 --format=%s"
	jcheck "$m: git submodule update checks out the recorded commit (exit $rc)" \
		test "$rc" = 0 -a "$(git -C "$src/sub" log -1 --format=%s)" = s2
	jr "$m" --shell -- 'git -C sub config core.fsmonitor ./x'
	jcheck "$m: core.fsmonitor in the submodule's config is refused (exit $rc)" \
		test "$rc" != 0 -a -z "$(git -C "$src/sub" config core.fsmonitor)"
	jcheck "$m: ... with EROFS" grep -q "Read-only file system" <<<"$out"
	check "$m: the host's git finds the submodule sound" git -C "$src/sub" fsck --no-progress
	done_with "$m"
}

# ---- git submodule add, and git submodule update --init of a fresh clone ----
# Both write <path>/.git ("gitdir: ...") in place, which the view checks.
# addtmpl: a project with a bare repository subrepo.git inside (one commit
# "s1") and no remote, so that ./subrepo.git is relative to its top.
# clonetmpl: a fresh clone of it made on the host after adding the
# submodule "sub" there, the submodule not initialized.
addtmpl=$T/addtmpl
clonetmpl=$T/clonetmpl
(
	set -e
	git init -q -b main "$addtmpl"
	git -C "$addtmpl" commit -q --allow-empty -m a
	git -C "$addtmpl" config user.name t
	git -C "$addtmpl" config user.email t@example.invalid
	git init -q -b main "$T/s1"
	git -C "$T/s1" commit -q --allow-empty -m s1
	git clone -q --bare "$T/s1" "$addtmpl/subrepo.git"
	printf 'subrepo.git/\n' >"$addtmpl/.git/info/exclude"
	cp -a "$addtmpl" "$T/superhost"
	cd "$T/superhost"
	git -c protocol.file.allow=always submodule -q add ./subrepo.git sub
	git commit -q -m addsub
	git clone -q "$T/superhost" "$clonetmpl"
	git -C "$clonetmpl" remote remove origin
	cp -a subrepo.git "$clonetmpl/"
	printf 'subrepo.git/\n' >"$clonetmpl/.git/info/exclude"
) || { echo "FAIL: cannot set up the submodule templates"; exit 1; }

# host_git_ok MODE WHAT: the host's git status in $src and in $src/sub
# works, both clean, and the submodule's HEAD is s1
host_git_ok() {
	check "$1: $2: host git status in the superproject works, clean" \
		test -z "$(git -C "$src" status --porcelain 2>&1)" -a "$(git -C "$src" status >/dev/null 2>&1; echo $?)" = 0
	check "$1: $2: host git status in the submodule works, clean" \
		test -z "$(git -C "$src/sub" status --porcelain 2>&1)" -a "$(git -C "$src/sub" status >/dev/null 2>&1; echo $?)" = 0
	check "$1: $2: the submodule's .git file names its git directory" \
		test "$(cat "$src/sub/.git")" = "gitdir: ../.git/modules/sub" -a \
		"$(git -C "$src/sub" rev-parse --absolute-git-dir)" = "$src/.git/modules/sub"
	check "$1: $2: the submodule is at s1" test "$(git -C "$src/sub" log -1 --format=%s)" = s1
}

# no_refusal: jailrun printed no refusal block (its network note aside)
no_refusal() {
	! grep -v "^jailrun: network is off in the jail" <<<"$out" | grep -q "^jailrun:"
}

# submodule_add MODE: git submodule add of a local repository, then git
# submodule update --init in a fresh clone; the host's git works in both
submodule_add() {
	local m=$1 t
	for t in add clone; do
		n=$((n + 1))
		src=$T/sm$t-$m-$n
		if [ $t = add ]; then cp -a "$addtmpl" "$src"; else cp -a "$clonetmpl" "$src"; fi
		mnt=$T/mnt-sm$t-$m-$n
		case $m in
		root) mount_view "$mnt" -o nofast_open "$src" || bad "$m: mount $mnt" ;;
		root-fast) mount_view "$mnt" "$src" || bad "$m: mount $mnt" ;;
		root-audit)
			mount_view "$mnt" --audit "$T/audit-sm-$n.jsonl" --audit-level all "$src" ||
				bad "$m: mount $mnt"
			;;
		esac
		if [ $t = add ]; then
			jr "$m" --shell -- 'git -c protocol.file.allow=always submodule -q add ./subrepo.git sub &&
git commit -q -m addsub'
			jcheck "$m: git submodule add ./subrepo.git sub (exit $rc)" \
				test "$rc" = 0 -a "$(git -C "$src" log -1 --format=%s)" = addsub
			jcheck "$m: $t: ... and jailrun prints no refusal block" no_refusal
			# .gitmodules goes through the config validator
			jr "$m" --shell -- "cp .gitmodules .gitmodules.lock &&
printf '\tupdate = !touch $T/marker-sm\n' >>.gitmodules.lock && mv .gitmodules.lock .gitmodules"
			jcheck "$m: submodule.sub.update = !command in .gitmodules is refused (exit $rc)" \
				test "$rc" != 0 -a -z "$(git -C "$src" config -f .gitmodules submodule.sub.update)"
			jcheck "$m: ... with EROFS" grep -q "Read-only file system" <<<"$out"
			rm -f "$src/.gitmodules.lock"
		else
			jr "$m" -- git -c protocol.file.allow=always submodule -q update --init
			jcheck "$m: git submodule update --init in a fresh clone (exit $rc)" \
				test "$rc" = 0 -a -d "$src/.git/modules/sub/objects"
			jcheck "$m: $t: ... and jailrun prints no refusal block" no_refusal
		fi
		host_git_ok "$m" "$t"
		done_with "$m"
	done
}

# init_clone MODE: git init and git clone into subdirectories work (hook
# samples without exec bits, core.fileMode probed); no hook can be planted
# in the new git directories; their config goes through the validator; the
# host's git commit there runs no hook
init_clone() {
	local m=$1 hook
	fresh "$m"
	rm -f "$T"/marker-*
	jr "$m" --shell -- 'git init -q sub && git clone -q . clone 2>&1 && git -C clone log -1 --format=%s'
	jcheck "$m: git init sub and git clone . clone (exit $rc)" \
		test "$rc" = 0 -a -d "$src/sub/.git/objects" -a "$(git -C "$src/clone" log -1 --format=%s)" = a
	# (git's clone asks the resolver for the host's name, for its reflog's
	# identity: jailrun's network note is not a refusal of the view)
	jcheck "$m: ... and jailrun prints no refusal block" \
		bash -c '! grep -v "^jailrun: network is off in the jail" <<<"$1" | grep -q "^jailrun:"' \
		_ "$out"
	check "$m: the hook samples are there, none executable" \
		bash -c 'ls "$1"/*.sample >/dev/null && ! find "$1" -type f -perm /111 | grep -q .' \
		_ "$src/sub/.git/hooks"
	check "$m: git init found the exec bit kept (core.fileMode)" \
		test "$(git config -f "$src/sub/.git/config" core.filemode)" = true
	hook='printf "#!/bin/sh\ntouch '"$T"'/marker-hook\n"'
	jr "$m" --shell -- "$hook >sub/.git/hooks/pre-commit"
	check "$m: creating sub/.git/hooks/pre-commit is refused" test "$rc" != 0
	jr "$m" --shell -- "$hook >sub/.git/hooks/x.sample && chmod +x sub/.git/hooks/x.sample &&
mv sub/.git/hooks/x.sample sub/.git/hooks/pre-commit"
	check "$m: a sample renamed to pre-commit is refused" test "$rc" != 0
	check "$m: chmod +x leaves a sample without exec bits" \
		test -f "$src/sub/.git/hooks/x.sample" -a ! -x "$src/sub/.git/hooks/x.sample"
	jr "$m" --shell -- "mkdir myhooks && $hook >myhooks/pre-commit && chmod +x myhooks/pre-commit &&
mv clone/.git/hooks clone/.git/old-hooks && mv myhooks clone/.git/hooks"
	check "$m: a directory holding pre-commit moved to clone/.git/hooks is refused" \
		test "$rc" != 0 -a ! -e "$src/clone/.git/hooks/pre-commit"
	jr "$m" --shell -- "mkdir -p tpl/hooks && $hook >tpl/hooks/pre-commit && chmod +x tpl/hooks/pre-commit &&
git clone -q --template=./tpl . dst"
	check "$m: a clone whose template holds a hook is refused and leaves nothing" \
		test "$rc" != 0 -a ! -e "$src/dst"
	jr "$m" --shell -- 'git init -q --template=./tpl sub3'
	check "$m: git init whose template holds a hook is refused" test "$rc" != 0
	check "$m: ... and sub3/ holds no .git" test -d "$src/sub3" -a ! -e "$src/sub3/.git"
	jr "$m" --shell -- 'mkdir sub4 && cd sub4 && GIT_TEMPLATE_DIR=../tpl git init -q'
	check "$m: git init with GIT_TEMPLATE_DIR holding a hook is refused" test "$rc" != 0
	check "$m: ... and sub4/ holds no .git" test -d "$src/sub4" -a ! -e "$src/sub4/.git"
	jr "$m" -- git -C sub config core.hooksPath ../myhooks
	check "$m: core.hooksPath in the new repository's config is refused" \
		test "$rc" != 0 -a -z "$(git -C "$src/sub" config core.hookspath)"
	for r in sub clone; do
		(cd "$src/$r" && git -c user.name=t -c user.email=t@example.invalid \
			commit -q --allow-empty -m host) >/dev/null 2>&1
	done
	check "$m: host git commit in sub and clone ran no hook" test ! -e "$T/marker-hook"
	done_with "$m"
}

n=0
for mode in source root root-fast root-audit; do
	submodules $mode
	submodule_add $mode
	init_clone $mode
done

for mode in source root root-fast root-audit read-only; do
	fresh $mode
	rm -f "$T"/marker-*
	if [ $mode = read-only ]; then
		jr $mode -- git config user.email a@b.c
		check "$mode: git config user.email is refused" test "$rc" != 0
		check "$mode: .git/config unchanged" \
			bash -c '! grep -q a@b.c "$1"' _ "$src/.git/config"
		done_with $mode
		continue
	fi

	# ---- everyday writes ----
	jr $mode -- git config user.email a@b.c
	jcheck "$mode: git config user.email (exit $rc)" \
		test "$rc" = 0 -a "$(git -C "$src" config user.email)" = a@b.c
	jr $mode -- git remote add origin ./origin.git
	jcheck "$mode: git remote add (exit $rc)" \
		test "$rc" = 0 -a "$(git -C "$src" config remote.origin.url)" = ./origin.git
	jr $mode --shell -- 'git fetch -q origin && git checkout -q -b x origin/x'
	jcheck "$mode: git checkout -b x origin/x tracks origin/x (exit $rc)" \
		test "$rc" = 0 -a "$(git -C "$src" config branch.x.merge)" = refs/heads/x
	jr $mode --shell -- 'git remote add up ./up.git && echo b >f && git commit -qam b &&
git push -q -u up x'
	jcheck "$mode: git push -u to a local bare repository (exit $rc)" \
		test "$rc" = 0 -a "$(git -C "$src" config branch.x.remote)" = up -a \
		"$(git -C "$src/up.git" rev-parse x 2>/dev/null)" = "$(git -C "$src" rev-parse x)"
	jr $mode --shell -- 'git config extensions.worktreeConfig true &&
git config --worktree user.name wt'
	jcheck "$mode: git config --worktree (exit $rc)" \
		test "$rc" = 0 -a "$(git -C "$src" config --worktree user.name)" = wt
	check "$mode: no config.lock left" test ! -e "$src/.git/config.lock"

	# ---- keys that run a program or read another file ----
	printf '#!/bin/sh\ntouch %s/marker-"$(basename "$0")"\n' "$T" >"$src/payload"
	chmod +x "$src/payload"
	refused_key $mode core.fsmonitor "git config core.fsmonitor $src/payload"
	refused_key $mode core.hookspath 'git config core.hooksPath .'
	refused_key $mode alias.st "git config alias.st '!$src/payload'"
	refused_key $mode include.path 'git config include.path payload.cfg'
	refused_key $mode core.pager "git config --worktree core.pager $src/payload"
	refused_key $mode diff.x.textconv \
		"cp .git/config .git/config.lock &&
printf '[diff.X]\n\ttextconv = \"$src/pay\\\\\nload\"\n' >>.git/config.lock &&
mv .git/config.lock .git/config"
	rm -f "$src/.git/config.lock"
	refused_key $mode 'url.ext::sh -c x.insteadof' \
		"cp .git/config .git/config.lock &&
printf '[URL \"ext::sh -c x\"] InsteadOf = ./origin.git\n' >>.git/config.lock &&
mv .git/config.lock .git/config"
	rm -f "$src/.git/config.lock"
	printf '[diff "x"]\n\ttextconv = %s\n' "$src/payload" >"$src/.git/payload.cfg"
	echo '*.txt diff=x' >"$src/.gitattributes"
	echo y >"$src/a.txt"
	host_runs_nothing $mode
	if [ $mode = root-audit ]; then
		check "$mode: the audit log records the refused rename and its key" \
			test "$(jq -sr '[.[] | select(.op == "rename" and .decision == "deny" and
				.path2 == ".git/config" and (.detail // "" | endswith("core.fsmonitor")))] |
				length' "$audit")" -ge 1
	fi

	# ---- a direct write stays refused ----
	sum=$(sha256sum <"$src/.git/config")
	jr $mode --shell -- 'echo "[core] fsmonitor = x" >>.git/config'
	jcheck "$mode: a direct write to .git/config is refused" \
		test "$rc" != 0 -a "$(sha256sum <"$src/.git/config")" = "$sum"
	check "$mode: the host's git finds the repository sound" git -C "$src" fsck --no-progress
	done_with $mode
done
tap_done
