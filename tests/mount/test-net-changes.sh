#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The net changes by final path (audit/net-changes.c) from real audit logs
# of real programs on a real mount, at audit levels writes and all, and in
# jailrun's --json result (--audit, level all):
#  - sed -i (a temporary sedXXXXXX renamed over the file) names the file,
#    never the temporary; at level all as "M" (the log saw the file read),
#    at level writes as "W" (the log does not say whether it existed)
#  - an editor's save (write F.new, rename over F) names F
#  - git commit names the commit's loose object as created and .git/index
#    as modified, never a tmp_obj_* or index.lock
#  - rm, mv, and a file created then removed (nothing)
#  - at level denied the section says it holds nothing to go on
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
F=${JAILFS:?JAILFS not set}

# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
require_root_fuse git jq python3 sed
work_dir net || exit 1
T=$work

tmpl=$T/tmpl
mkdir -p "$tmpl/src" "$tmpl/include"
printf 'int main(void) { return 1; }\n' >"$tmpl/src/main.c"
printf '#define FUSE 1\n' >"$tmpl/include/fuse.h"
echo old >"$tmpl/old.txt"
echo doc >"$tmpl/doc.txt"
git -C "$tmpl" init -q
git -C "$tmpl" -c user.name=t -c user.email=t@t add -A
git -C "$tmpl" -c user.name=t -c user.email=t@t commit -qm init
cat >"$T/session.sh" <<'SH'
set -e
sed -i 's/return 1/return 0/' src/main.c
python3 - <<'PY'
import os
old = open("include/fuse.h").read()
with open("include/fuse.h.new", "w") as f:
    f.write(old + "#define FUSE_USE_VERSION 31\n")
    f.flush()
    os.fsync(f.fileno())
os.rename("include/fuse.h.new", "include/fuse.h")
PY
git -c user.name=t -c user.email=t@t add -A
git -c user.name=t -c user.email=t@t commit -qm change
rm old.txt
mv doc.txt doc2.txt
echo scratch >scratch.tmp
rm scratch.tmp
git rev-parse HEAD
SH

# net SECTION: the net changes section of a report on stdin
net() { sed -n '/^Net changes, by final path:/,$p'; }

for level in all writes denied; do
	src=$T/src-$level
	mnt=$T/mnt-$level
	log=$T/audit-$level.jsonl
	cp -a "$tmpl" "$src"
	mount_view "$mnt" --audit "$log" --audit-level "$level" "$src" || bad "$level: mount"
	head=$(cd "$mnt" && bash "$T/session.sh" 2>"$T/err") || bad "$level: the session ran"
	umount_view "$mnt" || bad "$level: unmount"
	rep=$("$F" --audit-report "$log" | net)
	if [ "$level" = denied ]; then
		check "denied: the section says the log holds no allowed record" \
			grep -q 'level denied records none' <<<"$rep"
		continue
	fi
	obj=.git/objects/${head:0:2}/${head:2}
	if [ "$level" = all ]; then
		check "all: sed -i is 'M  src/main.c'" grep -qx '  M  src/main.c' <<<"$rep"
		check "all: the editor's save is 'M  include/fuse.h'" \
			grep -qx '  M  include/fuse.h' <<<"$rep"
	else
		check "writes: sed -i is 'W  src/main.c'" grep -qx '  W  src/main.c' <<<"$rep"
		check "writes: the editor's save is 'W  include/fuse.h'" \
			grep -qx '  W  include/fuse.h' <<<"$rep"
	fi
	check "$level: the commit's object is created ($obj)" grep -qx "  A  $obj" <<<"$rep"
	# git reads the index before it renames index.lock over it: a read the
	# log records at level all only
	if [ "$level" = all ]; then
		check "all: .git/index is modified" grep -qx '  M  .git/index' <<<"$rep"
	else
		check "writes: .git/index is 'W'" grep -qx '  W  .git/index' <<<"$rep"
	fi
	check "$level: rm is 'D  old.txt'" grep -qx '  D  old.txt' <<<"$rep"
	check "$level: mv is 'R  doc.txt -> doc2.txt'" grep -qx '  R  doc.txt -> doc2.txt' <<<"$rep"
	check "$level: the section is there and lists no temporary name" \
		bash -c '[ -n "$1" ] && ! grep -E "sed[A-Za-z0-9]{6}|tmp_obj_|\.lock|fuse\.h\.new|scratch" <<<"$1"' \
		_ "$rep"
	check "$level: the log itself holds the temporary names (the old section)" \
		grep -q 'tmp_obj_' "$log"
	check "$level: the section is there and not marked incomplete" \
		bash -c '[ -n "$1" ] && ! grep -q incomplete <<<"$1"' _ "$rep"
done

# ---- jailrun --audit: the same session, the net changes in its result ----
src=$T/src-jailrun
cp -a "$tmpl" "$src"
cp "$T/session.sh" "$src/.session.sh"
git -C "$src" -c user.name=t -c user.email=t@t add -A
git -C "$src" -c user.name=t -c user.email=t@t commit -qm script
js=$(cd "$src" && "$J" --source "$src" --audit "$T/jr.jsonl" --json -- bash .session.sh)
nc=$(jq -c '.audit.net_changes' <<<"$js")
head=$(jq -r .stdout <<<"$js" | tr -d "\n")
obj=.git/objects/${head:0:2}/${head:2}
# jqe FILTER [ARGS...]: jq -e on stdin, quiet
jqe() { jq -e "$@" >/dev/null; }
has() { jqe --arg c "$1" --arg p "$2" 'any(.[]; .change == $c and .path == $p)' <<<"$nc"; }
check "jailrun: the command ran ($(jq -r .stderr <<<"$js" | head -c 300))" \
	[ "$(jq .exit_code <<<"$js")" = 0 ]
check "jailrun: net_changes has src/main.c modified ($nc)" has modified src/main.c
check "jailrun: net_changes has include/fuse.h modified" has modified include/fuse.h
check "jailrun: net_changes has the commit's object created" has created "$obj"
check "jailrun: net_changes has old.txt deleted" has deleted old.txt
check "jailrun: net_changes has doc.txt renamed to doc2.txt" \
	jqe 'any(.[]; .change == "renamed" and .from == "doc.txt" and .path == "doc2.txt")' \
	<<<"$nc"
check "jailrun: no temporary name in net_changes" \
	jqe 'length > 0 and all(.[]; .path | test("sed[A-Za-z0-9]{6}$|tmp_obj_|[.]lock$|[.]new$|scratch") | not)' \
	<<<"$nc"
check "jailrun: net_changes_omitted is 0 and the list is complete" \
	jqe '.audit.net_changes_omitted == 0 and .audit.net_changes_incomplete == null' <<<"$js"

tap_done
