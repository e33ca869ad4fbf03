#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The audit log's bounds and the executable's path, through real jailrun
# runs on real one-shot views:
#  - the private refusal log (no --audit) is started with its bounds
#    (--audit-max-size 8M --audit-rate 100/s, jailrun(1) FILES); a flood of
#    300 refused writes from one process is cut by the rate, and the result
#    still counts all 300: the listed count plus refusals_omitted
#  - --audit FILE: a copy of python3 named ./git is recorded as comm "git"
#    with its real path as "exe"; the result's hidden count is exact;
#    jailfs --audit-report names the executable
# Needs root and /dev/fuse; fails (never skips) without them when CI=true.
set -u
J=${JAILRUN:?JAILRUN not set}
F=${JAILFS:?JAILFS not set}

# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
require_root_fuse python3 jq

T=$(mktemp -d /tmp/jf-jr-audit.XXXXXX)
P=$T/proj
trap 'stop_persistent; rm -rf "$T"' EXIT
mkdir -p "$P"
git -C "$P" init -q
chmod 0644 "$P/.git/config"
cat >"$P/wflood.py" <<'PY'
import os, sys
fd = os.open(".git/config", os.O_WRONLY | os.O_APPEND)
refused = 0
for i in range(int(sys.argv[1])):
    try:
        os.write(fd, b"x")
    except OSError:
        refused += 1
print(refused)
PY
cat >"$P/hflood.py" <<'PY'
import os, sys
for i in range(int(sys.argv[1])):
    try:
        os.stat(".env.%d" % i)
    except OSError:
        pass
PY
cd "$P" || exit 1

# ---- the private log: started with its bounds ----
"$J" --source "$P" --fresh -- sleep 3 &
jpid=$!
dpid=
for _ in $(seq 50); do
	dpid=$(pgrep -P $jpid -x jailfs) && break
	sleep 0.1
done
args=$(tr '\0' ' ' <"/proc/$dpid/cmdline" 2>/dev/null)
check "the private log's daemon has --audit-max-size 8M --audit-rate 100/s ($args)" \
	grep -q -- '--audit-level denied --audit-max-size 8M --audit-rate 100/s ' <<<"$args"
wait $jpid

# ---- a flood of refusals from one process: cut, and counted exactly ----
js=$("$J" --source "$P" --json -- python3 wflood.py 300 2>/dev/null)
listed=$(jq '[.refusals[].count] | add' <<<"$js")
omitted=$(jq .refusals_omitted <<<"$js")
check "the command saw 300 refused writes ($(jq -r .stdout <<<"$js" | tr -d '\n'))" \
	[ "$(jq -r .stdout <<<"$js")" = 300 ]
check "the rate limit cut the log: $listed listed" [ "$listed" -lt 300 ]
check "listed + omitted = 300 ($listed + $omitted)" [ $((listed + omitted)) -eq 300 ]
out=$("$J" --source "$P" -- python3 wflood.py 300 2>&1)
check "stderr says 300 operations were refused" grep -q 'the view refused 300 operations' <<<"$out"

# ---- --audit FILE: a program named git, recorded with its real path ----
cp "$(readlink -f /usr/bin/python3)" "$P/git" # the real binary, not a shim
js=$("$J" --source "$P" --audit "$T/a.jsonl" --json -- ./git hflood.py 50)
check "the result counts 50 hidden lookups ($(jq -c .audit <<<"$js"))" \
	[ "$(jq .audit.hidden <<<"$js")" -eq 50 ]
check "each hidden lookup names comm git and exe $P/git" \
	[ "$(jq -c 'select(.decision == "hide" and (.path | startswith(".env.")))
		| [.comm, .exe]' "$T/a.jsonl" | sort | uniq -c | tr -s ' ')" = " 50 [\"git\",\"$P/git\"]" ]
check "jailfs --audit-report names the executable" \
	grep -qF "git (pid" <<<"$("$F" --audit-report "$T/a.jsonl" | grep -F " $P/git")"

tap_done
