#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# An agent's ordinary session on a real repository, through jailrun, in each
# way a user can run it:
#   oneshot   jailrun --source REPO: every command in the one persistent view
#             the first starts (shared refusal log), stopped afterwards
#   mount     jailfs REPO MNT, then jailrun --root MNT
#   readonly  jailfs --read-only REPO MNT, then jailrun --root MNT: every
#             write must fail cleanly (EROFS, not a guardrail refusal) and
#             the tree must be unchanged (checksum of every entry)
#   audit     jailrun --source REPO --audit LOG (level all)
#   overlay   jailfs --changes DIR REPO MNT, then jailrun --root MNT: the
#             host's checks read the view; REPO must be unchanged (checksum
#             of every entry's metadata and content, less what the host
#             itself adds) until `jailfs apply DIR`, after which REPO must
#             equal mount's tree (diff -r, .git included: see tree_equal)
# The repository: Linux's tools/bootconfig (a make build whose `make test`
# runs 55 tests), tools/lib, lib/bootconfig.c and two x86 defconfigs from
# Debian's linux-source-6.1, with scripts/diffconfig (Python) and npm's own
# copy of the `ini` package as a local package, in a git repository with a
# few commits, an upstream branch to rebase on, the user's uncommitted
# change, and a .env holding a marker that must never come out.
# The session: git status, switch -c, sed -i, add, commit, stash, rebase,
# stash pop, gc, worktree add (refused: see below) and status in a work tree
# the host added; python3 -m venv and the
# venv's python and pip; npm init and npm install ./pkg (offline); make and
# make test; grep -r; a tar round trip; reading /usr/include/stdio.h; a
# `cd sub && ... && cd ..` shell string; git remote add and push -u to a
# local bare repository, a submodule (init, a commit inside it, the
# superproject's commit of it), git init in a subdirectory; and refusals checked for their
# reason (--json `denied`, `rule`, `reason`): cat .env, writing
# .git/hooks/pre-commit, cat ../../etc/passwd, curl denied by the policy;
# then python3's sqlite3 (realwork-sqlite.py): a committed database read
# (every mode, --read-only too), the WAL, DELETE and TRUNCATE journal modes and two processes writing one database at once
# (WAL and DELETE), each database checked by the host's sqlite3 after;
# toolchains with their caches: cargo (rustup's, offline) builds rsapp, a
# binary crate using a crate vendored in vendor/ (.cargo/config.toml),
# twice with an edit between, incrementally (rustc renames its session
# directories), and go builds gohello twice, the second time from the Go
# build cache kept in the jail home (compiling nothing); file watchers
# (watcher.py; README, "File watchers"): an inotify watcher sees the
# jail's own creates, edits and deletes, and a polling one each host edit
# within a second (in readonly too: the host's edits are not the jail's,
# and the tree checksums leave watch-host/ out).
# The jail homes are under the work directory ($XDG_STATE_HOME, one a mode).
# Every step runs in every mode even after a failure; a table of passes and
# failures per mode ends the output, and any failure fails the test.
# mount and overlay work at the same path (absolute paths land in the venv,
# git's work tree files, cargo's target/) and with fixed git dates, so that
# their trees can be compared.
# Environment: JF_REALWORK_MODES (space-separated subset of the modes;
# overlay compares with mount's tree, so it needs mount before it).
# Needs root and /dev/fuse; with CI=true their absence is a failure.
set -uo pipefail

: "${JAILFS:?set by meson}" "${JAILRUN:?set by meson}"
# rustup's cargo, found on the caller's PATH (its home's .cargo/bin)
cargo_bin=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
# Debian's python3, node and git on the host and in the jail alike (a pyenv
# shim earlier in PATH would name a python the jail does not have).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LANG=C.UTF-8 LC_ALL=C.UTF-8
tarball=/usr/src/linux-source-6.1.tar.xz
read -ra modes <<<"${JF_REALWORK_MODES:-oneshot mount readonly audit overlay}"
t0=$(date +%s)

# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"

if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/fuse ]; then
	[ "${CI:-}" = true ] && { echo "FAIL  needs root and /dev/fuse (CI=true)"; exit 1; }
	echo "SKIP  needs root and /dev/fuse"
	exit 77
fi
for tool in git make cc python3 node npm jq tar xz go; do
	command -v "$tool" >/dev/null || { echo "FAIL  $tool is not installed (.ci/run installs it)"; exit 1; }
done
[ -f "$tarball" ] || { echo "FAIL  $tarball missing: apt-get install linux-source-6.1"; exit 1; }
/usr/bin/python3 -c 'import ensurepip' 2>/dev/null ||
	{ echo "FAIL  python3 -m venv needs ensurepip: apt-get install python3-venv"; exit 1; }

sqlite_script=$(dirname "${BASH_SOURCE[0]}")/realwork-sqlite.py
sqlite_script=$(realpath "$sqlite_script")
watcher_script=$(realpath "$(dirname "${BASH_SOURCE[0]}")/watcher.py")
[ -x "$cargo_bin" ] || { echo "FAIL  no cargo (rustup's, in ~/.cargo/bin or on PATH)"; exit 1; }
/usr/bin/python3 -c 'import sqlite3' 2>/dev/null ||
	{ echo "FAIL  python3 has no sqlite3 module"; exit 1; }

# Not under /tmp: the jail has a private /tmp, and jailrun refuses a project there.
work=$(mktemp -d /var/tmp/jf-realwork.XXXXXX)
cleanup() {
	unmount_all
	rm -rf "$work"
}
trap cleanup EXIT
secret=JFREALWORK$RANDOM$RANDOM

# ---------------------------------------------------------------- the repository
tmpl=$work/template
mkdir -p "$tmpl"
lx=linux-source-6.1
tar -C "$work" -xJf "$tarball" $lx/tools/bootconfig $lx/tools/scripts $lx/tools/lib \
	$lx/lib/bootconfig.c $lx/include/linux/bootconfig.h $lx/scripts/diffconfig \
	$lx/arch/x86/configs/i386_defconfig $lx/arch/x86/configs/x86_64_defconfig ||
	{ echo "FAIL  cannot extract from $tarball"; exit 1; }
# npm's own copy of ini, less its devDependencies: npm would fetch those of a
# linked local package, and the session is offline.
cp -a /usr/lib/node_modules/npm/node_modules/ini "$tmpl/pkg" &&
	jq 'del(.devDependencies, .scripts)' "$tmpl/pkg/package.json" >"$work/pkg.json" &&
	mv "$work/pkg.json" "$tmpl/pkg/package.json" ||
	{ echo "FAIL  no /usr/lib/node_modules/npm/node_modules/ini to use as a local package"; exit 1; }
# toolchain_projects: in the current directory, rsapp (a binary crate whose
# dependency tinydep comes from vendor/, as `cargo vendor` leaves it: a
# directory source replacing crates.io in .cargo/config.toml) and gohello
# (a Go module without dependencies)
toolchain_projects() {
	mkdir -p rsapp/src rsapp/.cargo rsapp/vendor/tinydep/src gohello
	printf '[package]\nname = "rsapp"\nversion = "0.1.0"\nedition = "2021"\n\n' >rsapp/Cargo.toml
	printf '[dependencies]\ntinydep = "0.1"\n\n[profile.dev]\nincremental = true\n' \
		>>rsapp/Cargo.toml
	printf 'fn main() {\n    println!("{} one", tinydep::greeting());\n}\n' >rsapp/src/main.rs
	printf '[source.%s]\nreplace-with = "vendored"\n\n[source.vendored]\ndirectory = "vendor"\n' \
		crates-io >rsapp/.cargo/config.toml
	printf '[package]\nname = "tinydep"\nversion = "0.1.0"\nedition = "2021"\n' \
		>rsapp/vendor/tinydep/Cargo.toml
	printf 'pub fn greeting() -> &%sstatic str {\n    "vendored"\n}\n' "'" \
		>rsapp/vendor/tinydep/src/lib.rs
	echo '{"files":{},"package":null}' >rsapp/vendor/tinydep/.cargo-checksum.json
	printf 'module example.invalid/gohello\n\ngo 1.19\n' >gohello/go.mod
	printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("go one") }\n' \
		>gohello/main.go
}
(
	set -e
	cd "$tmpl"
	git init -q -b main
	# An identity in the repository's own config: the jail has no ~/.gitconfig.
	git config user.name "Upstream Dev"
	git config user.email dev@example.invalid
	printf '%s\n' .env .venv/ node_modules/ '*.o' /tools/bootconfig/bootconfig target/ \
		/gohello/hello >.gitignore
	mv "$work/$lx/tools" "$work/$lx/lib" "$work/$lx/include" .
	git add .gitignore tools/lib tools/scripts lib include pkg
	git commit -q -m "import tools/lib and the bootconfig parser"
	mv "$work/$lx/scripts" "$work/$lx/arch" .
	cp "$sqlite_script" scripts/sqlite-session.py
	cp "$watcher_script" scripts/watcher.py
	python3 scripts/sqlite-session.py make scripts/sample.db
	toolchain_projects
	git add tools/bootconfig scripts arch rsapp gohello
	git commit -q -m "import tools/bootconfig, scripts, two defconfigs, rsapp and gohello"
	git switch -q -c upstream-fix
	printf '\n/* upstream: a comment the agent rebases onto */\n' >>lib/bootconfig.c
	git commit -q -am "lib/bootconfig: upstream change"
	git switch -q main
	printf '\n/* the user: work in progress */\n' >>tools/lib/string.c
	echo "API_TOKEN=$secret" >.env
) || { echo "FAIL  cannot build the template repository"; exit 1; }
# git beyond commit: a bare "up.git" to push to, and "nested/", a
# superproject whose submodule "sub" is checked out (its git directory in
# nested/.git/modules/sub); both inside the repository, left out of its git
# status by .git/info/exclude.
git_extras_setup() {
	git init -q --bare -b main "$tmpl/up.git"
	git init -q -b main "$work/sub-origin"
	git -C "$work/sub-origin" -c user.name=u -c user.email=u@example.invalid \
		commit -q --allow-empty -m "sub: first"
	git init -q -b main "$tmpl/nested"
	cd "$tmpl/nested"
	git config user.name "Upstream Dev"
	git config user.email dev@example.invalid
	git -c protocol.file.allow=always submodule -q add "$work/sub-origin" sub
	git commit -q -m "nested: add sub"
	git -C sub config user.name "Upstream Dev"
	git -C sub config user.email dev@example.invalid
	git config --remove-section submodule.sub # the agent's git submodule init writes it
	printf '/up.git/\n/nested/\n' >>"$tmpl/.git/info/exclude"
}
(set -e && git_extras_setup) || { echo "FAIL  cannot set up up.git and nested/"; exit 1; }
# watched directories, out of git status: watch/ for the jail's edits,
# watch-host/ for the host's
mkdir -p "$tmpl/watch" "$tmpl/watch-host"
for d in watch watch-host; do
	echo old >"$tmpl/$d/edit"
	echo bye >"$tmpl/$d/gone"
done
printf '/watch/\n/watch-host/\n' >>"$tmpl/.git/info/exclude"
cargo_jail "$cargo_bin" "$work/cargo.ini"
policy=$work/curl-denied.ini
printf '# the default zones, and no curl or wget in the jail\n[safe]\n/\n[run]\ndeny_exec = curl, wget\n' \
	>"$policy"
echo "repository: $(git -C "$tmpl" ls-files | wc -l) files, $(git -C "$tmpl" rev-list --all | wc -l) commits; $(($(date +%s) - t0)) s"

# ---------------------------------------------------------------- running a step
# The current mode's repository, jailrun options, and results of the last step.
repo="" mode="" mode_args=() js="" rc=0
declare -A npass nfail
failed_steps=()

# field NAME: a field of the last --json result (jq -r).
field() { jq -r ".$1" <<<"$js" 2>/dev/null; }
outputs() { printf '%s\n%s\n' "$(field stdout)" "$(field stderr)"; }
# in_out / in_err / in_any GREP-ARGS...: grep the last result's stdout, stderr
# or both. Here-strings, not pipes: with pipefail, grep -q leaving early can
# fail the writer with SIGPIPE and so the whole test.
in_out() { grep "$@" <<<"$(field stdout)"; }
in_err() { grep "$@" <<<"$(field stderr)"; }
in_any() { grep "$@" <<<"$(outputs)"; }

# jr [jailrun options] -- COMMAND...: run in the current mode, from the
# repository, with --json; sets js and rc.
jr() {
	js=$(cd "$repo" && "$JAILRUN" "${mode_args[@]}" --json --timeout 300 "$@" 2>"$work/jr.err")
	rc=$?
}

ran_ok() { [ "$(field exit_code)" = 0 ] && [ "$(field denied)" = false ]; }
# ran: jailrun ran the command to its end (no refusal, no timeout).
ran() {
	[ "$(field denied)" = false ] && [ -n "$(field exit_code)" ] && [ "$(field exit_code)" != -101 ]
}
# failed_cleanly: the command ran and failed.
failed_cleanly() { ran && [ "$(field exit_code)" != 0 ]; }
erofs() { in_any -qi 'read-only file system'; }
# refused RULE: jailrun refused it before it ran, for RULE, with a reason.
refused() {
	[ "$(field denied)" = true ] && [ "$(field exit_code)" = -100 ] &&
		[ "$(field rule)" = "$1" ] && [ "$(field reason)" != null ] && [ -n "$(field reason)" ]
}

report() { # NAME PASS(0|1) [note]
	if [ "$2" = 0 ]; then
		printf 'PASS  %-9s %-15s %s\n' "$mode" "$1" "${3:-}"
		npass[$mode]=$((${npass[$mode]:-0} + 1))
		return
	fi
	printf 'FAIL  %-9s %-15s %s\n' "$mode" "$1" "${3:-}"
	nfail[$mode]=$((${nfail[$mode]:-0} + 1))
	failed_steps+=("$mode $1")
	{
		echo "jailrun exit $rc; exit_code $(field exit_code) denied $(field denied)" \
			"rule $(field rule) reason $(field reason)"
		echo "stdout:"
		field stdout | tail -n 12
		echo "stderr:"
		field stderr | tail -n 12
		[ -s "$work/jr.err" ] && { echo "jailrun's stderr:"; tail -n 5 "$work/jr.err"; }
	} | sed 's/^/        | /'
}

# step NAME KIND CHECK [jailrun options] -- COMMAND...
# KIND: R reads only: must work in every mode, CHECK too.
#       W writes: must work and pass CHECK (a function run on the host) in
#         the writable modes; in readonly must fail with EROFS in its output.
#       Q as W, for a program that fails without saying why on a read-only
#         file system (git stash exits 1 silently on a native read-only bind
#         mount too): in readonly any failure that is not a refusal passes.
#       D reads, but needs an earlier step's write: as W in the writable
#         modes; in readonly it passes when it ran (not refused, no timeout),
#         whatever its exit status.
#       X a refusal or a hidden file: CHECK decides in every mode.
# In readonly every step must also leave the tree's checksum unchanged.
# view_sum: that checksum, less watch-host/, which the host edits.
view_sum() { tree_sum "$repo" ./watch-host; }
# jail_home: the current mode's jail home on the host (one project a mode)
jail_home() { find "$XDG_STATE_HOME/jailrun/homes" -mindepth 1 -maxdepth 1 -type d | head -n 1; }
step() {
	local name=$1 kind=$2 check=$3 before pass=1 note=""
	shift 3
	[ "$mode" = readonly ] && before=$(view_sum)
	jr "$@"
	if [ "$mode" = readonly ] && [ "$kind" = W ]; then
		failed_cleanly && erofs && pass=0
		note="(expected EROFS: $(in_any -i -m1 'read-only file system' | cut -c1-90))"
	elif [ "$mode" = readonly ] && [ "$kind" = Q ]; then
		failed_cleanly && pass=0
		note="(expected: fails)"
	elif [ "$mode" = readonly ] && [ "$kind" = D ]; then
		ran && pass=0
		note="(expected: runs; exit $(field exit_code))"
	elif [ "$kind" = X ]; then
		$check && pass=0
		if [ "$(field denied)" = true ]; then
			note="(refused [$(field rule)])"
		else
			note="(ran: exit $(field exit_code))"
		fi
	else
		ran_ok && $check && pass=0
	fi
	if [ "$mode" = readonly ] && [ "$(view_sum)" != "$before" ]; then
		pass=1
		note="$note the tree changed"
	fi
	report "$name" $pass "$note"
}

# ---------------------------------------------------------------- host-side checks
# Each runs on the host after the step, in the writable modes only, on
# $view: the repository, or in overlay the view (the repository is not
# written there).
h() { git -C "$view" "$@"; }
chk_none() { :; }
chk_status() { in_out -qx '## main' && in_out -qx ' M tools/lib/string.c'; }
chk_switch() { [ "$(h branch --show-current)" = agent-fix ]; }
chk_sed() { grep -q 'printf("usage: bootconfig' "$view/tools/bootconfig/main.c"; }
chk_add() { [ "$(h diff --cached --name-only)" = tools/bootconfig/main.c ]; }
chk_commit() {
	[ "$(h log -1 --format=%s)" = "bootconfig: lower-case usage" ] && h diff --cached --quiet
}
chk_stash() { [ "$(h stash list | wc -l)" = 1 ] && h diff --quiet; }
chk_rebase() {
	h merge-base --is-ancestor upstream-fix HEAD && [ "$(h branch --show-current)" = agent-fix ] &&
		[ "$(h log -1 --format=%s)" = "bootconfig: lower-case usage" ]
}
chk_pop() { [ -z "$(h stash list)" ] && grep -q 'the user: work in progress' "$view/tools/lib/string.c"; }
chk_gc() { grep -qE '^packs: [1-9]' <<<"$(h count-objects -v)" && h fsck --no-progress >/dev/null 2>&1; }
# git worktree add writes .git/worktrees/<name>/gitdir and commondir, which
# choose what the host's git reads: they are RESTRICTED (README, "Built-in
# profiles"), so the jail's git worktree add fails cleanly and leaves
# nothing; the host adds work trees (in the repository itself, also in
# overlay, where the view shows them through), and git in the jail works in
# them.
chk_wt_add_refused() {
	failed_cleanly && erofs && [ ! -e "$view/.git/worktrees/wt-review" ] &&
		[ ! -e "$view/wt-review/.git" ]
}
# In overlay the kernel overlay below the view keeps the absence of the
# names the refused add looked up (.git/worktrees/, wt-review: jailfs(1),
# OVERLAY MODE), so the host's work tree shows in a view mounted after it,
# as jailrun --changes mounts one per command: mount the view again.
host_wt_add() {
	[ "$mode" = readonly ] || "${git_dates_env[@]}" git -C "$repo" worktree add -q wt-review upstream-fix ||
		report host-wt-add 1 "(git worktree add on the host failed)"
	if [ "$mode" = overlay ]; then
		umount_view "$mnt" && mount_view "$mnt" --changes "$changes" "$repo" ||
			report overlay-remount 1 "(the overlay view did not mount again)"
	fi
}
chk_wt_status() { in_out -qx '## upstream-fix'; }
chk_venv() { [ -x "$view/.venv/bin/python" ] && [ -f "$view/.venv/pyvenv.cfg" ]; }
chk_pip() { in_out -qF "$repo/.venv/lib/python3"; }
chk_diffconfig() { in_out -qE '^[-+ ]?64BIT'; }
chk_npm_init() { [ "$(jq -r .name "$view/package.json")" = "$(basename "$repo")" ]; }
chk_npm_install() {
	[ "$(jq -r '.dependencies.ini' "$view/package.json")" = file:pkg ] &&
		[ "$(jq -r .name "$view/node_modules/ini/package.json")" = ini ]
}
chk_npm_ls() { in_out -q 'ini@.*pkg'; }
chk_make() { [ -x "$view/tools/bootconfig/bootconfig" ]; }
chk_make_test() { in_out -q 'All tests passed'; }
chk_grep() { in_out -q '^lib/bootconfig.c:[0-9]*:.*xbc_node_find_value'; }
chk_tar() {
	in_out -qx round-trip-ok && diff -r "$view/tools/lib" "$view/rt/tools/lib" >/dev/null
}
chk_cd() { in_out -qx string.c && in_out -qx bootconfig; }
chk_stdio() { in_out -q 'extern int printf'; }
# refusals and hiding (every mode)
no_secret() { ! in_any -qF "$secret"; }
# cat .env: refused by the guardrail (which sees the source tree in the
# one-shot modes) or, when it does not name an entry of the view, ENOENT.
chk_env_denied() {
	no_secret && { refused path-denied || in_err -q '^cat: \.env: No such file'; }
}
chk_env_hidden() {
	no_secret && ! in_out -qxF .env && in_out -qxF .gitignore &&
		in_err -q '^cat: \.env: No such file or directory'
}
chk_grep_secret() { [ "$(field exit_code)" = 1 ] && [ -z "$(field stdout)" ] && no_secret; }
chk_hook() { failed_cleanly && erofs && [ ! -e "$view/.git/hooks/pre-commit" ]; }
chk_escape() { refused path-outside-view && ! in_any -q '^root:'; }
chk_curl() { refused exec-denylist && [[ $(field reason) == *curl* ]]; }
# db_ok FILE ROWS: the host's sqlite3 finds FILE intact and holding ROWS rows.
db_ok() {
	[ "$(/usr/bin/python3 - "$view/$1" <<'PY'
import sqlite3, sys
con = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
print(con.execute("PRAGMA integrity_check").fetchone()[0],
      con.execute("SELECT count(*) FROM t").fetchone()[0])
PY
)" = "ok $2" ]
}
chk_sql_read() { in_out -qx 'read ok 150'; }
chk_sql_wal() { in_out -qx 'wal ok 190' && db_ok db/wal.db 190; }
chk_sql_delete() {
	in_out -qx 'delete ok 190' && db_ok db/delete.db 190 && [ ! -e "$view/db/delete.db-journal" ]
}
chk_sql_truncate() { in_out -qx 'truncate ok 190' && db_ok db/truncate.db 190; }
chk_sql_two_wal() { in_out -qx 'two wal ok 200' && db_ok db/two-wal.db 200; }
chk_sql_two_del() { in_out -qx 'two delete ok 200' && db_ok db/two-delete.db 200; }

# git beyond commit (git_extras)
chk_remote_add() { [ "$(h config remote.up.url)" = ./up.git ]; }
chk_push_u() {
	[ "$(h config branch.agent-fix.remote)" = up ] &&
		[ "$(git -C "$view/up.git" rev-parse agent-fix)" = "$(h rev-parse agent-fix)" ]
}
chk_sub_init() { [ "$(git -C "$view/nested" config submodule.sub.url)" = "$work/sub-origin" ]; }
chk_sub_commit() { [ "$(git -C "$view/nested/sub" log -1 --format=%s)" = "sub: agent" ]; }
chk_sub_bump() {
	[ "$(git -C "$view/nested" log -1 --format=%s)" = "nested: bump sub" ] &&
		[ -z "$(git -C "$view/nested" status --porcelain)" ] && ! grep -q . "$work/jr.err"
}
chk_init_sub() {
	[ -d "$view/scratch/.git/objects" ] && [ -z "$(find "$view/scratch/.git/hooks" -perm /111 -type f)" ]
}

# toolchains: cargo's incremental build (the edit renames rustc's session
# directory: finalized, no "-working" one left), Go's build cache
chk_cargo() { in_out -qx 'vendored one' && [ -f "$view/rsapp/Cargo.lock" ]; }
chk_cargo_again() {
	local inc=$view/rsapp/target/debug/incremental
	in_out -qx 'vendored two' && ! in_any -q 'error finalizing incremental' &&
		[ -n "$(find "$inc" -mindepth 2 -maxdepth 2 -name 's-*' -type d)" ] &&
		[ -z "$(find "$inc" -name '*-working')" ]
}
chk_go_build() { in_out -qx 'go one' && [ -x "$view/gohello/hello" ]; }
# the second build compiles nothing: gohello's package comes from the cache
# in the jail home, which the host keeps
chk_go_cached() {
	in_out -qx "$HOME/.cache/go-build" && in_out -qx 'go one' &&
		! in_err -qE '/pkg/tool/[^ ]+/compile ' &&
		in_err -qF "packagefile example.invalid/gohello=$HOME/.cache/go-build/" &&
		[ -n "$(find "$(jail_home)/.cache/go-build" -type f -name '*-d' | head -n 1)" ]
}
# watchers
chk_watch_own() {
	in_out -qx 'event CREATE created' && in_out -qx 'event MODIFY edit' &&
		in_out -qx 'event DELETE gone'
}

# toolchains: cargo (offline, vendored, incremental) twice, go twice
toolchains() {
	step cargo-build W chk_cargo "${cargo_env[@]}" --shell -- \
		'cd rsapp && cargo build --offline && ./target/debug/rsapp'
	step cargo-rebuild W chk_cargo_again "${cargo_env[@]}" --shell -- \
		'cd rsapp && sed -i s/one/two/ src/main.rs && cargo build --offline && ./target/debug/rsapp'
	step go-build W chk_go_build --shell -- 'cd gohello && go build -o hello . && ./hello'
	step go-cached R chk_go_cached --shell -- \
		'cd gohello && go env GOCACHE && go build -x -o /tmp/hello . && /tmp/hello'
}

# host_edits LOG RESULT: once the jail's watcher has written "ready" to LOG
# (in the jail home), create, modify and delete in watch-host/; RESULT gets
# the name of each change LOG reports within a second
host_edits() {
	local f _
	for _ in $(seq 1200); do grep -q '^ready' "$1" 2>/dev/null && break; sleep 0.05; done
	grep -q '^ready' "$1" 2>/dev/null || return 0
	echo new >"$repo/watch-host/created"
	echo edited on the host >"$repo/watch-host/edit"
	unlink "$repo/watch-host/gone"
	for f in created edit gone; do
		for _ in $(seq 20); do grep -qx "changed $f" "$1" && echo "$f" && break; sleep 0.05; done
	done >"$2"
}

# watchers: an inotify watcher sees the jail's own edits; a polling watcher
# sees each host edit within a second (README, "File watchers")
watchers() {
	local home log before seen pass=1 ep
	step watch-own W chk_watch_own --shell -- \
		'python3 scripts/watcher.py inotify watch 2 >/tmp/own.log &
		for i in $(seq 200); do grep -q ready /tmp/own.log && break; sleep 0.05; done
		echo new >watch/created && echo more >>watch/edit && unlink watch/gone; s=$?
		wait; cat /tmp/own.log; exit $s'
	home=$(jail_home)
	log=$home/watch-host.log
	rm -f "$log" "$work/seen"
	[ "$mode" = readonly ] && before=$(view_sum)
	host_edits "$log" "$work/seen" &
	ep=$!
	jr --shell -- 'python3 scripts/watcher.py poll watch-host 3 >"$HOME/watch-host.log"
		cat "$HOME/watch-host.log"'
	wait $ep
	seen=$(tr '\n' ' ' <"$work/seen" 2>/dev/null)
	ran_ok && [ "$seen" = "created edit gone " ] && pass=0
	[ "$mode" = readonly ] && [ "$(view_sum)" != "$before" ] && pass=1 seen="$seen the tree changed"
	report watch-host $pass "(seen within 1 s: $seen)"
}

# git_extras: git config writes (remote add, push -u's tracking), a submodule
# (init, a commit inside it, the superproject's commit of it: no refusal on
# jailrun's stderr) and git init in a subdirectory
git_extras() {
	step git-remote-add W chk_remote_add -- git remote add up ./up.git
	step git-push-u D chk_push_u -- git push -q -u up agent-fix
	step submodule-init W chk_sub_init -- git -C nested submodule init
	step submodule-work W chk_sub_commit --shell -- \
		'cd nested/sub && echo x >agent.txt && git add agent.txt && git commit -q -m "sub: agent"'
	step submodule-bump D chk_sub_bump -- git -C nested commit -q -am "nested: bump sub"
	step git-init-subdir W chk_init_sub -- git init -q scratch
}

session() {
	step git-status R chk_status -- git status --porcelain=v1 -b
	step git-switch W chk_switch -- git switch -c agent-fix
	step sed-i W chk_sed -- sed -i 's/printf("Usage: bootconfig/printf("usage: bootconfig/' \
		tools/bootconfig/main.c
	step git-add W chk_add -- git add tools/bootconfig/main.c
	step git-commit W chk_commit -- git commit -q -m "bootconfig: lower-case usage"
	step git-stash Q chk_stash -- git stash
	step git-rebase D chk_rebase -- git rebase upstream-fix
	step git-stash-pop D chk_pop -- git stash pop
	step git-gc W chk_gc -- git gc --quiet
	step worktree-add X chk_wt_add_refused -- git worktree add wt-review upstream-fix
	host_wt_add
	step worktree-stat D chk_wt_status -- git -C wt-review status --porcelain=v1 -b
	step venv W chk_venv -- python3 -m venv .venv
	step venv-pip D chk_pip -- .venv/bin/pip --version
	step venv-script D chk_diffconfig -- .venv/bin/python scripts/diffconfig \
		arch/x86/configs/i386_defconfig arch/x86/configs/x86_64_defconfig
	step npm-init W chk_npm_init -- npm init -y
	step npm-install D chk_npm_install -- npm install --offline --no-audit --no-fund ./pkg
	step npm-ls D chk_npm_ls -- npm ls --offline
	step make W chk_make -- make -C tools/bootconfig bootconfig
	step make-test D chk_make_test -- make -C tools/bootconfig test
	step grep-r R chk_grep -- grep -rn xbc_node_find_value lib tools/bootconfig
	step tar-roundtrip W chk_tar --shell -- \
		'tar -czf lib.tar.gz tools/lib && mkdir rt && tar -C rt -xzf lib.tar.gz && diff -r tools/lib rt/tools/lib && echo round-trip-ok'
	step cd-chain R chk_cd --shell -- 'cd tools/lib && ls string.c && cd ../.. && ls tools | grep boot'
	step stdio.h R chk_stdio -- cat /usr/include/stdio.h
	step env-denied X chk_env_denied -- cat .env
	step env-hidden X chk_env_hidden --shell -- 'ls -a && v=.en && cat ${v}v'
	step grep-secret X chk_grep_secret -- grep -rl "$secret" .
	step hook-write X chk_hook -- cp tools/bootconfig/Makefile .git/hooks/pre-commit
	step escape X chk_escape -- cat ../../../../../../../../etc/passwd
	step curl X chk_curl --policy "$policy" -- curl -sS http://example.invalid/
	# SQLite fsyncs the database's directory (a FSYNCDIR without a handle
	# in a view's zero-message listings) and locks through the view
	step sqlite-read R chk_sql_read -- python3 scripts/sqlite-session.py read scripts/sample.db
	step sqlite-wal W chk_sql_wal -- python3 scripts/sqlite-session.py wal
	step sqlite-delete W chk_sql_delete -- python3 scripts/sqlite-session.py delete
	step sqlite-trunc W chk_sql_truncate -- python3 scripts/sqlite-session.py truncate
	step sqlite-2-wal W chk_sql_two_wal -- python3 scripts/sqlite-session.py two wal
	step sqlite-2-del W chk_sql_two_del -- python3 scripts/sqlite-session.py two delete
	git_extras
	toolchains
	watchers
}

# ---------------------------------------------------------------- overlay
# The host's own writes to the repository during a session: the polling
# watcher's edits and the work tree git worktree add makes.
host_paths=(./watch-host ./wt-review ./.git/worktrees)
# source_sum: the repository's checksum in overlay: every entry's type,
# mode and symlink target, a file's size and times, a file's content, less
# host_paths. A directory's times are left out: the host's entries change
# its mtime, and its entries are each listed.
source_sum() {
	local args=() p
	for p in "${host_paths[@]}"; do args+=(-path "$p" -prune -o); done
	(
		cd "$repo" || exit 1
		find . "${args[@]}" \( -type d -printf '%p d %m\n' -o -printf '%p %y %s %m %T@ %C@ %l\n' \) |
			LC_ALL=C sort
		find . "${args[@]}" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
	) | sha256sum
}
# Left out of the comparison of the trees, each for a reason that is not
# the view's: the index files hold each entry's stat data (times, device,
# inode) in their bytes; lib.tar.gz holds tools/lib's mtimes (git stash pop
# rewrites string.c), and its round trip rt/ is compared; rustc names its
# incremental session directories after the time (s-TIME-HASH), and cargo's
# fingerprints and .rustc_info.json hold mtimes and hashes of them; a .pyc
# holds its source's mtime (pip's, extracted at venv time); the SQLite
# databases hold rows of random bytes (checked with db_ok after apply).
cmp_excluded=(index lib.tar.gz incremental .fingerprint .rustc_info.json __pycache__ '*.db')
# What apply refuses although the view wrote it: apply writes what the view
# would have let through (SAFE names, a git config or packed-refs that
# passes the view's check, pip's certificate bundle named like a key), but
# no git index (a linked work tree's and a submodule's too). Each is listed
# as refused and stays in DIR; the trees are compared without them.
refused_pat='(.*/)?\.git/(index|worktrees/[^/]+/index)|nested/\.git/modules/sub/index'
# trees_equal A B: diff -r (symlinks compared as links) and every entry's
# type, mode and link target, less cmp_excluded and refused_pat.
trees_equal() {
	local x=() n
	for n in "${cmp_excluded[@]}"; do x+=(-x "$n"); done
	{
		diff -r --no-dereference -q "${x[@]}" "$1" "$2" |
			sed -E "s|^Files $1/(.*) and $2/.* differ$|\1|; s|^Only in ($1\|$2)/?(.*): (.*)$|\2/\3|; s|^/||" |
			grep -vxE "$refused_pat"
		meta() {
			(cd "$1" && find . -mindepth 1 -printf '%P %y %m %l\n' |
				grep -vE '(^|/)(incremental|\.fingerprint|__pycache__)/' |
				grep -vE "^($refused_pat) " | LC_ALL=C sort)
		}
		diff <(meta "$1") <(meta "$2") | grep -E '^[<>]'
	} >"$work/tree.diff"
	[ -s "$work/tree.diff" ] || return 0
	sed 's/^/        | /' "$work/tree.diff" | head -n 40
	return 1
}

# overlay_end: after the session, unmounted: the repository is unchanged,
# jailfs apply writes every change but refused_pat, leaves only those in
# DIR, and the tree equals mount's.
overlay_end() {
	local out left
	[ "$(source_sum)" = "$sum_before" ]
	report source-unchanged $? "(checksum of every entry's metadata and content, before apply)"
	out=$("$JAILFS" apply "$changes" 2>&1)
	left=$(grep -v '^applied ' <<<"$out" | grep -vxE "refused ($refused_pat): not SAFE under the policy")
	[ -z "$left" ] && [ "$(grep -c '^applied ' <<<"$out")" -gt 1000 ]
	report apply $? "($(grep -c '^applied ' <<<"$out") applied, $(grep -c '^refused ' <<<"$out") refused)"
	[ -n "$left" ] && head -n 20 <<<"$left" | sed 's/^/        | /'
	out=$("$JAILFS" changes "$changes" 2>&1 | awk '{print $2}' | grep -vxE "$refused_pat")
	[ -z "$out" ]
	report nothing-left $? "($(head -n 3 <<<"$out"))"
	view=$repo
	db_ok db/wal.db 190 && db_ok db/delete.db 190 && db_ok db/truncate.db 190 &&
		db_ok db/two-wal.db 200 && db_ok db/two-delete.db 200
	report applied-dbs $? "(each database intact, its rows)"
	if [ ! -d "$work/mount-tree" ]; then
		report same-as-mount 1 "(needs the mount mode before overlay)"
		return
	fi
	trees_equal "$work/mount-tree" "$repo"
	report same-as-mount $? "(diff -r, .git included, less ${cmp_excluded[*]} and what apply refused)"
}

# ---------------------------------------------------------------- the modes
# git's dates fixed in mount and overlay, whose trees are compared
git_dates_env=(env GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z)
git_dates=(--env "${git_dates_env[1]}" --env "${git_dates_env[2]}")
for mode in "${modes[@]}"; do
	m0=$(date +%s)
	echo
	echo "== mode $mode"
	repo=$work/$mode/linux-tools
	# one path for both: absolute paths land in the tree (.venv, cargo's
	# target/, the host's work tree)
	[ "$mode" = mount ] || [ "$mode" = overlay ] && repo=$work/session/linux-tools
	view=$repo
	mnt=$work/$mode-mnt
	mkdir -p "$work/$mode" "$(dirname "$repo")"
	cp -a "$tmpl" "$repo"
	export XDG_STATE_HOME=$work/$mode/state
	case $mode in
	oneshot) mode_args=(--source "$repo") ;;
	audit)
		mode_args=(--source "$repo" --audit "$work/audit.jsonl")
		: >"$work/audit.jsonl"
		;;
	mount | readonly)
		opts=()
		[ "$mode" = readonly ] && opts=(--read-only)
		if ! mount_view "$mnt" "${opts[@]}" "$repo"; then
			report "jailfs-mount" 1 "jailfs ${opts[*]} did not mount $repo"
			continue
		fi
		mode_args=(--root "$mnt")
		[ "$mode" = mount ] && mode_args+=("${git_dates[@]}")
		;;
	overlay)
		changes=$work/overlay/changes
		sum_before=$(source_sum)
		if ! mount_view "$mnt" --changes "$changes" "$repo"; then
			report "jailfs-mount" 1 "jailfs --changes did not mount $repo"
			continue
		fi
		view=$mnt
		mode_args=(--root "$mnt" "${git_dates[@]}")
		;;
	*)
		echo "FAIL  unknown mode $mode"
		exit 1
		;;
	esac
	[ "$mode" = readonly ] && sum_before=$(view_sum)
	session
	if [ "$mode" = readonly ]; then
		[ "$(view_sum)" = "$sum_before" ]
		report tree-unchanged $? "(checksum of every entry before and after the session)"
	fi
	if [ "$mode" = audit ]; then
		# sed -i: its temporary file renamed over main.c, allowed; the cat of
		# .en+v: a lookup of .env hidden.
		js='{}'
		jq -e -s 'any(.[]; .op == "rename" and .path2 == "tools/bootconfig/main.c" and
				.comm == "sed" and .decision == "allow")
			and any(.[]; .op == "lookup" and .path == ".env" and .comm == "cat" and
				.decision == "hide" and .errno == "ENOENT")' \
			"$work/audit.jsonl" >/dev/null
		report audit-log $? "($(wc -l <"$work/audit.jsonl") records)"
	fi
	case $mode in
	mount | readonly | overlay) umount_view "$mnt" ;;
	oneshot) stop_views_of "$(realpath "$repo")" ;; # the session's one persistent view
	esac
	if grep -qF " fuse.jailfs $repo " /proc/self/mountinfo; then
		report no-mount-left 1 "(a jailfs view of $repo is still mounted)"
	else
		report no-mount-left 0
	fi
	[ "$mode" = overlay ] && overlay_end
	[ "$mode" = mount ] && mv "$repo" "$work/mount-tree"
	[ "$mode" = overlay ] && mv "$repo" "$work/overlay-tree"
	echo "   mode $mode: $(($(date +%s) - m0)) s"
done

# ---------------------------------------------------------------- summary
echo
printf '%-10s %5s %5s\n' mode pass fail
for mode in "${modes[@]}"; do
	printf '%-10s %5d %5d\n' "$mode" "${npass[$mode]:-0}" "${nfail[$mode]:-0}"
done
if [ ${#failed_steps[@]} -gt 0 ]; then
	echo
	echo "failed:"
	printf '  %s\n' "${failed_steps[@]}"
fi
echo "total: $(($(date +%s) - t0)) s"
[ ${#failed_steps[@]} -eq 0 ]
