#!/usr/bin/env bash
# Run the daemon's mount test programs (test-mount*, one per topic) with
# --unprivileged as an ordinary user (jftest), mounting through the set-uid
# fusermount3 like any user would. Every program runs; any failure fails.
# Usage: run-unprivileged.sh TEST-PROGRAM...   (env: JAILFS)
# Needs root to switch users; elsewhere it skips (77), except under CI=true
# where a missing prerequisite is a failure.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: run-unprivileged.sh TEST-PROGRAM..." >&2; exit 2; }
fail_or_skip() {
    echo "run-unprivileged: $*" >&2
    if [ "${CI:-}" = true ]; then exit 1; else exit 77; fi
}
[ "$(id -u)" -eq 0 ] || fail_or_skip "needs root to switch to the test user"
id jftest >/dev/null 2>&1 || useradd -m jftest 2>/dev/null || fail_or_skip "cannot create user jftest"
command -v fusermount3 >/dev/null || fail_or_skip "fusermount3 missing (package fuse3)"
command -v setpriv >/dev/null || fail_or_skip "setpriv missing (package util-linux)"

# fusermount3 opens /dev/fuse with the user's rights: it must be 0666, the
# mode Debian's udev rule gives it. Some containers make it 0600; widen it
# for the run and put the old mode back afterwards.
old_mode=$(stat -c %a /dev/fuse)
[ "$old_mode" = 666 ] || chmod 0666 /dev/fuse

# The build tree may live where jftest cannot read (/root): run copies.
work=$(mktemp -d /tmp/jf-unpriv-XXXXXX)
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
    local status=$?
    set +e
    [ "$old_mode" = 666 ] || chmod "$old_mode" /dev/fuse
    # Unmount anything the user left behind, then remove the copies.
    grep " $work/" /proc/self/mountinfo | awk '{print $5}' | while read -r m; do
        umount -l "$m" 2>/dev/null || true
    done
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
install -m 0755 "$JAILFS" "$work/jailfs"
names=()
for bin in "$@"; do
    install -m 0755 "$bin" "$work/"
    names+=("$(basename "$bin")")
done
mkdir "$work/tmp"
chown -R jftest: "$work"
chmod 0755 "$work"

cd "$work"
status=0
for name in "${names[@]}"; do
    env JAILFS="$work/jailfs" JF_MOUNT_TMPDIR="$work/tmp" HOME="$work" \
        setpriv --reuid=jftest --regid=jftest --init-groups \
        "$work/$name" --unprivileged || { echo "run-unprivileged: $name failed" >&2; status=1; }
done
exit "$status"
