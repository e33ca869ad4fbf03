#!/usr/bin/env bash
# Run the mount suite's unprivileged subset as an ordinary user (jftest),
# mounting through the set-uid fusermount3 like any user would.
# Usage: run-unprivileged.sh TEST-MOUNT-BINARY   (env: JAILFS)
# Needs root to switch users; elsewhere it skips (77), except under CI=true
# where a missing prerequisite is a failure.
set -euo pipefail
test_bin=$1
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
install -m 0755 "$test_bin" "$work/test-mount"
mkdir "$work/tmp"
chown -R jftest: "$work"
chmod 0755 "$work"

cd "$work"
env JAILFS="$work/jailfs" JF_MOUNT_TMPDIR="$work/tmp" HOME="$work" \
    setpriv --reuid=jftest --regid=jftest --init-groups \
    "$work/test-mount" --unprivileged
