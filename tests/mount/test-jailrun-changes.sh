#!/bin/bash
# SPDX-License-Identifier: MIT
#
# jailrun --changes DIR, --changes-temp and --apply, through real jailrun
# runs on real overlay views (jailfs --changes DIR) and jailfs's review
# commands:
#  - the usage errors (no overlay needed)
#  - --changes DIR: SOURCE is unchanged after sed -i, rm and a new file;
#    the result names DIR and the checkpoint taken before the command, and
#    its change list names the three paths
#  - one checkpoint per command: a second command's rm is undone by
#    jailfs restore DIR to the checkpoint named in its result, and a third
#    command sees the first command's change again
#  - jailfs apply DIR then writes them into SOURCE
#  - --changes-temp: reported, SOURCE unchanged, the layer removed; with
#    --apply, applied to SOURCE
# Suite "changes" as well as "mount": `meson test --suite changes` runs the
# overlay's tests. Needs root and /dev/fuse; fails (never skips) without
# them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
F=${JAILFS:?JAILFS not set}

# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
require_root_fuse jq
work_dir jrchanges || exit 1
T=$work
export TMPDIR=$T # where --changes-temp makes its layer

# ---- usage errors ----
"$J" --source "$T" --apply -- true 2>/dev/null
check "--apply without a layer is a usage error" [ $? -eq 2 ]
"$J" --source "$T" --changes "$T/L" --changes-temp -- true 2>/dev/null
check "--changes DIR with --changes-temp is a usage error" [ $? -eq 2 ]
"$J" --root "$T" --changes "$T/L" -- true 2>/dev/null
check "--changes with --root is a usage error" [ $? -eq 2 ]

if ! "$F" --help 2>&1 | grep -q -- '--changes'; then
	bad "this jailfs has no overlay mode (jailfs --changes): the rest needs it"
	tap_done
	exit
fi

P=$T/proj
mkdir -p "$P"
echo 1 >"$P/a.txt"
echo b >"$P/b.txt"
before=$(tree_sum "$P")
L=$T/layer
# jqe FILTER [ARGS...]: jq -e on stdin, quiet
jqe() { jq -e "$@" >/dev/null; }
# in_list PATH: the result's change list names PATH (whatever its shape)
in_list() { jqe --arg p "$1" '[.changes.list | .. | strings] | any(. == $p or endswith("/" + $p))'; }

js=$("$J" --source "$P" --no-git-root --allow-exec rm --changes "$L" --json --shell -- \
	'sed -i s/1/2/ a.txt && rm b.txt && echo new >c.txt')
check "--changes: the command ran ($(jq -c '{exit_code, error, changes}' <<<"$js"))" \
	jqe '.exit_code == 0' <<<"$js"
check "--changes: SOURCE is unchanged" [ "$(tree_sum "$P")" = "$before" ]
check "--changes: the result names the layer" jqe --arg d "$L" '.changes.dir == $d' <<<"$js"
check "--changes: the result names a checkpoint" jqe '.changes.checkpoint | type == "string"' \
	<<<"$js"
check "--changes: not applied" jqe '.changes.applied == false and .changes.temporary == false' \
	<<<"$js"
for p in a.txt b.txt c.txt; do
	check "--changes: the change list names $p" in_list "$p" <<<"$js"
done
cp1=$(jq -r .changes.checkpoint <<<"$js")

js=$("$J" --source "$P" --no-git-root --allow-exec rm --changes "$L" --json -- rm a.txt)
cp2=$(jq -r .changes.checkpoint <<<"$js")
check "each command has its own checkpoint ($cp1, $cp2)" [ "$cp2" != "$cp1" ] && [ "$cp2" != null ]
"$F" restore "$L" "$cp2" >/dev/null 2>&1
check "jailfs restore DIR $cp2 succeeds" [ $? -eq 0 ]
js=$("$J" --source "$P" --no-git-root --allow-exec rm --changes "$L" --json -- cat a.txt)
check "after the restore, the view shows the first command's a.txt ($(jq -c .stdout <<<"$js"))" \
	jqe '.stdout == "2\n"' <<<"$js"
check "SOURCE is still unchanged" [ "$(tree_sum "$P")" = "$before" ]
"$F" apply "$L" >/dev/null 2>&1
check "jailfs apply DIR succeeds" [ $? -eq 0 ]
check "applied: a.txt is 2, b.txt gone, c.txt new" \
	bash -c '[ "$(cat "$1/a.txt")" = 2 ] && [ ! -e "$1/b.txt" ] && [ "$(cat "$1/c.txt")" = new ]' \
	_ "$P"

# ---- --changes-temp ----
before=$(tree_sum "$P")
js=$("$J" --source "$P" --no-git-root --allow-exec rm --changes-temp --json -- rm c.txt)
tdir=$(jq -r .changes.dir <<<"$js")
check "--changes-temp: the command ran" jqe '.exit_code == 0 and .changes.temporary' <<<"$js"
check "--changes-temp: the change list names c.txt" in_list c.txt <<<"$js"
check "--changes-temp: SOURCE is unchanged" [ "$(tree_sum "$P")" = "$before" ]
check "--changes-temp: the layer $tdir is removed" [ ! -e "$tdir" ]
js=$("$J" --source "$P" --no-git-root --allow-exec rm --changes-temp --apply --json -- rm c.txt)
check "--changes-temp --apply: applied" jqe '.changes.applied' <<<"$js"
check "--changes-temp --apply: c.txt is gone from SOURCE" [ ! -e "$P/c.txt" ]
check "no temporary layer is left" bash -c '! ls -d "$1"/jailrun-changes.* 2>/dev/null' _ "$T"
check "no view is left mounted" bash -c '! grep -q " fuse.jailfs $1" /proc/self/mountinfo' _ "$P"

tap_done
