#!/usr/bin/env bash
# Real input: the Linux source from Debian's linux-source-6.1 (83,000
# entries), a copy of it with fake secrets planted at random depths, checked
# through a jailfs view and through jailrun:
#   1. a secret scanner's view: `grep -rl` for the planted markers finds none
#      through the view and all of them natively (and a visible control
#      marker is found through the view, so the grep did look);
#   2. `find | wc -l` through the view = native count minus exactly the
#      hidden entries `jailfs --scan` lists (entries under a hidden
#      directory counted);
#   3. `make defconfig && make -j2 prepare && make -j2 fs/ext4/` inside
#      jailrun fails cleanly with the tree RESTRICTED (jailfs --read-only:
#      a read-only error from the build, nothing modified, checked by a
#      checksum of the whole tree), then succeeds with the tree SAFE.
# Slow (minutes: the kernel build); suite 'realtree'. Prints the time of
# each phase. Environment: JF_LINUX_SRC (an extracted tree, default
# /var/tmp/jf-linux/linux-source-6.1; installed and extracted if missing),
# JF_SEED (random seed for the planting; printed so a failure can be rerun).
set -uo pipefail

: "${JAILFS:?set by meson}" "${JAILRUN:?set by meson}"
linux=${JF_LINUX_SRC:-/var/tmp/jf-linux/linux-source-6.1}
seed=${JF_SEED:-$RANDOM$RANDOM}
t0=$(date +%s)
phase_t=$t0
work=""
# shellcheck source=tests/lib/lib-mount.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-mount.sh"
# shellcheck source=tests/lib/lib-linux.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-linux.sh"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_root_fuse
phase() {
	local now
	now=$(date +%s)
	printf '# == %s   (+%ds, %ds total)\n' "$*" $((now - phase_t)) $((now - t0))
	phase_t=$now
}
cleanup() {
	unmount_all
	[ -n "$work" ] || return 0
	if [ "${work_tmpfs:-0}" = 1 ]; then
		umount "$work" || umount -l "$work"
		rmdir "$work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT


# ---------------------------------------------------------------- input
phase "input: $linux"
why=$(linux_tree "$linux") || { echo "Bail out! $why"; exit 1; }

# As root with memory to spare, the copy goes to a tmpfs of its own (a copy
# and removal of 1.5 GB take 12 s there against 90 s on this disk). Not
# /dev/shm or /tmp: jailrun's jail replaces those, so it refuses a project
# there. JF_REALTREE_TMP overrides the parent directory.
work=$(mktemp -d "${JF_REALTREE_TMP:-/var/tmp}/jf-realtree.XXXXXX")
avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
if [ "$(id -u)" -eq 0 ] && [ "${avail_kb:-0}" -gt $((8 * 1024 * 1024)) ] &&
	mount -t tmpfs -o size=5g,mode=0755 jf-realtree "$work"; then
	work_tmpfs=1
	echo "# working copy on a tmpfs at $work"
fi
src=$work/linux
cp -a "$linux" "$src" || { echo "Bail out! cannot copy $linux"; exit 1; }
native_before=$(find "$src" | wc -l)
ok "copied $linux: $native_before entries"

# ---------------------------------------------------------------- plant
phase "planting fake secrets (JF_SEED=$seed)"
# Every planted file carries a unique marker; secret files hold real key
# headers with plainly fake bodies. A visible control file (.env.example,
# kept visible by the secrets profile) carries a marker that MUST be found.
python3 - "$src" "$seed" "$work/markers" "$work/planted" "$work/control" <<'EOF'
import os, random, sys
root, seed, markers_f, planted_f, control_f = sys.argv[1:]
rnd = random.Random(int(seed))
dirs = []
for d, subdirs, _ in os.walk(root):
    subdirs.sort()
    dirs.append(d)
by_depth = {}
for d in dirs:
    by_depth.setdefault(d[len(root):].count("/"), []).append(d)
depths = sorted(by_depth)

def pick():
    return rnd.choice(by_depth[rnd.choice(depths)])

def body(kind, marker):
    fake = "FAKE-NOT-A-REAL-KEY-" + marker
    if kind == "openssh":
        return "-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----\n" % fake
    if kind == "rsa":
        return "-----BEGIN RSA PRIVATE KEY-----\n%s\n-----END RSA PRIVATE KEY-----\n" % fake
    if kind == "ec":
        return "-----BEGIN EC PRIVATE KEY-----\n%s\n-----END EC PRIVATE KEY-----\n" % fake
    if kind == "pkcs8":
        return "-----BEGIN PRIVATE KEY-----\n%s\n-----END PRIVATE KEY-----\n" % fake
    if kind == "pgp":
        return ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n%s\n"
                "-----END PGP PRIVATE KEY BLOCK-----\n" % fake)
    if kind == "env":
        return "# fake\nDATABASE_URL=postgres://u:%s@db.invalid/x\nAPI_TOKEN=%s\n" % (fake, fake)
    if kind == "aws":
        return ("[default]\naws_access_key_id = FAKEKEYID%s\n"
                "aws_secret_access_key = %s\n" % (marker[-6:], fake))
    if kind == "gcp":
        return ('{"type": "service_account", "project_id": "fake", "private_key": '
                '"-----BEGIN PRIVATE KEY-----\\n%s\\n-----END PRIVATE KEY-----\\n"}\n' % fake)
    if kind == "kube":
        return "apiVersion: v1\nkind: Config\nusers:\n- name: fake\n  user:\n    token: %s\n" % fake
    if kind == "netrc":
        return "machine example.invalid login fake password %s\n" % fake
    if kind == "npmrc":
        return "//registry.npmjs.org/:_authToken=%s\n" % fake
    if kind == "gitcred":
        return "https://fake:%s@example.invalid\n" % fake
    return fake + "\n"

# (relative path under a random directory, kind)
plants = [
    ("id_rsa", "openssh"), ("id_ed25519", "openssh"), (".ssh/id_ecdsa", "openssh"),
    ("server.key", "rsa"), ("tls.pem", "ec"), ("client.PEM", "pkcs8"),
    ("private.asc", "pgp"), (".env", "env"), (".env.production", "env"),
    (".ENV.local", "env"), (".aws/credentials", "aws"), ("credentials.json", "gcp"),
    ("service-account-prod.json", "gcp"), (".kube/config", "kube"), (".netrc", "netrc"),
    (".npmrc", "npmrc"), (".git-credentials", "gitcred"), ("secrets/db.txt", "env"),
    ("terraform.tfvars", "env"), (".pgpass", "netrc"), (".config/gcloud/creds.db", "gcp"),
    ("Id_Rsa.bak", "openssh"), (".bash_history", "env"),
]
used = set()
dirs_planted_into = set()
with open(markers_f, "w") as mf, open(planted_f, "w") as pf:
    for i, (rel, kind) in enumerate(plants * 2):
        while True:
            d = pick()
            path = os.path.join(d, rel)
            top = os.path.join(d, rel.split("/")[0])
            # A .config/ directory at the top would take the name of the
            # kernel's own .config, and the build would fail for that.
            if top == os.path.join(root, ".config"):
                continue
            if top not in used and not os.path.lexists(top):
                break
        used.add(top)
        dirs_planted_into.add(d)
        marker = "JFMARK%08x%03d" % (rnd.getrandbits(32), i)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(body(kind, marker))
        mf.write(marker + "\n")
        pf.write("%d\t%s\n" % (path[len(root):].count("/"), path[len(root) + 1:]))
    d = pick()
    while "secrets" in d.split("/") or d in dirs_planted_into:
        d = pick()
    marker = "JFVISIBLE%08x" % rnd.getrandbits(32)
    with open(os.path.join(d, ".env.example"), "w") as f:
        f.write("# template, no secret: %s\nAPI_TOKEN=\n" % marker)
    with open(control_f, "w") as f:
        f.write("%s\t%s\n" % (marker, os.path.join(d, ".env.example")[len(root) + 1:]))
EOF
[ -s "$work/markers" ] || { echo "Bail out! planting failed"; exit 1; }
nmark=$(wc -l <"$work/markers")
read -r control_marker control_path <"$work/control"
ok "planted $nmark fake secrets at depths $(cut -f1 "$work/planted" | sort -n | uniq | tr '\n' ' ')"
sed 's/^/#       /' "$work/planted" | head -n 60

# ---------------------------------------------------------------- scan
phase "jailfs --scan"
"$JAILFS" --scan "$src" >"$work/scan" 2>"$work/scan.err" ||
	bad "jailfs --scan failed: $(head -c 300 "$work/scan.err")"
# --scan lists every DENIED path with its rule (RESTRICTED ones counted), one per
# line: ZONE<TAB>RULE<TAB>PATH (the --check format). Hidden = DENIED paths
# and, for a DENIED directory, everything under it (--scan may list a
# hidden directory alone or with its contents: count each entry once).
awk -F'\t' '$1 == "DENIED" { print $NF }' "$work/scan" | sed 's|^\./||; s|/$||' |
	LC_ALL=C sort -u >"$work/denied"
python3 - "$src" "$work/denied" >"$work/hidden-count" <<'EOF'
import os, sys
root, listed = sys.argv[1], [l.rstrip("\n") for l in open(sys.argv[2]) if l.strip()]
listed_set = set(listed)
def under_listed(p):
    parts = p.split("/")
    return any("/".join(parts[:i]) in listed_set for i in range(1, len(parts)))
total = 0
for p in listed:
    if under_listed(p):
        continue
    full = os.path.join(root, p)
    total += 1
    if os.path.isdir(full) and not os.path.islink(full):
        for d, subdirs, files in os.walk(full):
            total += len(subdirs) + len(files)
print(total)
EOF
hidden=$(cat "$work/hidden-count")
ndenied=$(wc -l <"$work/denied")
[ "$ndenied" -gt 0 ] && ok "--scan listed $ndenied DENIED paths covering $hidden entries" ||
	bad "--scan listed no DENIED path: $(head -c 300 "$work/scan")"
# Every planted secret is under a path --scan listed.
missing=0
while IFS=$'\t' read -r _ p; do
	covered=0
	q=$p
	while :; do
		grep -qxF "$q" "$work/denied" && { covered=1; break; }
		[[ $q == */* ]] || break
		q=${q%/*}
	done
	[ $covered = 1 ] || { missing=$((missing + 1)); echo "        not in --scan: $p"; }
done <"$work/planted"
[ $missing -eq 0 ] && ok "--scan lists all $nmark planted secrets (or their directory)" ||
	bad "--scan misses $missing planted secrets"
grep -qxF "$control_path" "$work/denied" && bad "--scan hides the control $control_path" ||
	ok "--scan leaves $control_path visible"

# ---------------------------------------------------------------- view
phase "mount the view (default policy) and grep for the markers"
view=$work/view
mount_view "$view" "$src" || { bad "jailfs did not mount $src"; exit 1; }
# One pass each: the planted markers plus the control marker.
cp "$work/markers" "$work/patterns"
echo "$control_marker" >>"$work/patterns"
native_hits=$(grep -rlF -f "$work/patterns" "$src" | grep -vcxF "$src/$control_path")
[ "$native_hits" -eq "$nmark" ] && ok "natively grep -rl finds all $nmark planted secrets" ||
	bad "natively grep -rl finds $native_hits of $nmark"
view_hits=$(grep -rlF -f "$work/patterns" "$view" 2>"$work/grep.err")
if ! grep -vxF "$view/$control_path" <<<"$view_hits" | grep -q .; then
	ok "through the view grep -rl finds none of the $nmark markers"
else
	bad "through the view grep -rl finds: $(grep -vxF "$view/$control_path" <<<"$view_hits" | head -n 5)"
fi
grep -qxF "$view/$control_path" <<<"$view_hits" &&
	ok "through the view grep -rl finds the control marker ($control_path)" ||
	bad "through the view the control marker in $control_path is not found"

phase "count entries: find | wc -l"
native_count=$(find "$src" | wc -l)
view_count=$(find "$view" 2>"$work/find.err" | wc -l)
echo "# native $native_count, view $view_count, hidden per --scan $hidden"
if [ "$view_count" -eq $((native_count - hidden)) ]; then
	ok "view count $view_count = native $native_count - hidden $hidden"
else
	bad "view count $view_count != native $native_count - hidden $hidden (diff $((native_count - hidden - view_count)))"
	# Show what differs, to tell a daemon bug from a --scan bug.
	(cd "$src" && find . | sed 's|^\./||' | LC_ALL=C sort) >"$work/n.lst"
	(cd "$view" && find . | sed 's|^\./||' | LC_ALL=C sort) >"$work/v.lst"
	LC_ALL=C comm -23 "$work/n.lst" "$work/v.lst" >"$work/gone.lst"
	python3 - "$work/gone.lst" "$work/denied" <<'EOF'
import sys
gone = [l.rstrip("\n") for l in open(sys.argv[1])]
den = set(l.rstrip("\n") for l in open(sys.argv[2]))
def cov(p):
    parts = p.split("/")
    return any("/".join(parts[:i]) in den for i in range(1, len(parts) + 1))
extra = [p for p in gone if not cov(p)]
print("        hidden by the view but not listed by --scan (%d):" % len(extra))
for p in extra[:15]:
    print("          " + p)
EOF
fi
umount_view "$view" || bad "view would not unmount"

# ---------------------------------------------------------------- build
build='make defconfig && make -j2 prepare && make -j2 fs/ext4/'

phase "kernel build with the tree RESTRICTED (jailfs --read-only, jailrun --root)"
ro=$work/ro
sum_before=$(tree_sum "$src")
mount_view "$ro" --read-only "$src" || { bad "jailfs --read-only did not mount"; exit 1; }
"$JAILRUN" --root "$ro" --timeout 600 --shell -- "$build" >"$work/ro.log" 2>&1
rc=$?
{ grep -m 3 -i 'read-only file system' "$work/ro.log"; tail -n 2 "$work/ro.log"; } | sed 's/^/        /'
[ $rc -ne 0 ] && ok "the build failed (exit $rc)" || bad "the build succeeded on a read-only tree"
grep -qiE 'read-only file system' "$work/ro.log" && ok "with a read-only error from the build" ||
	bad "no 'Read-only file system' in the build's output"
umount_view "$ro" || bad "read-only view would not unmount"
[ "$(tree_sum "$src")" = "$sum_before" ] && ok "nothing modified (checksum of every entry)" ||
	bad "the tree changed under a read-only view"

phase "kernel build with the tree SAFE (jailrun --source, one-shot view, default policy)"
"$JAILRUN" --source "$src" --fresh --timeout 1200 --shell -- "$build" >"$work/rw.log" 2>&1
rc=$?
tail -n 5 "$work/rw.log" | sed 's/^/        /'
[ $rc -eq 0 ] && ok "the build succeeded" || bad "the build failed (exit $rc)"
[ -f "$src/.config" ] && [ -f "$src/fs/ext4/inode.o" ] && ok "fs/ext4/inode.o and .config on disk" ||
	bad "no fs/ext4/inode.o or .config on disk"
mounted "$view" && bad "a view is still mounted"
grep -qF " - fuse.jailfs $src " /proc/self/mountinfo && bad "a jailfs view of $src is still mounted" ||
	ok "no jailfs mount of $src left behind"

phase "done"
echo "# real-tree test: $(( $(date +%s) - t0 )) s"
tap_done
