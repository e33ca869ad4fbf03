#!/usr/bin/env bash
# jailfs --check and --scan on a real temporary tree: exact output lines,
# exit codes, policy error messages. Needs env JAILFS (tests/unit/meson.build).
# One TAP result per expect (exit code and output), and a failed result for
# each other check that does not hold.
set -euo pipefail
: "${JAILFS:?JAILFS must point to the jailfs binary}"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"

T=$(mktemp -d /tmp/jf-test-check.XXXXXX)
trap 'rm -rf "$T" "$T.err"' EXIT
fail() { bad "$*"; }

# expect NAME WANT_RC WANT_STDOUT -- CMD...: one result; the differences on
# stderr
expect() {
	local name=$1 want_rc=$2 want_out=$3 rc=0 out why=
	shift 4
	out=$("$@" 2>"$T.err") || rc=$?
	if [ "$rc" != "$want_rc" ]; then
		why="exit $rc, want $want_rc (stderr: $(cat "$T.err"))"
	fi
	if [ "$out" != "$want_out" ]; then
		why="${why:+$why; }output differs"
		diff <(printf '%s\n' "$want_out") <(printf '%s\n' "$out") >&2 || true
	fi
	if [ -n "$why" ]; then bad "$name: $why"; else ok "$name"; fi
}

S=$T/src-tree
mkdir -p "$S"/src/sub "$S"/.git/hooks "$S"/.ssh "$S"/secrets "$S"/vendor/patches "$S"/.vscode
touch "$S"/src/main.c "$S"/src/sub/x.h "$S"/.env "$S"/.env.example "$S"/.git/config \
	"$S"/.git/HEAD "$S"/.git/hooks/pre-commit "$S"/.ssh/id_rsa "$S"/secrets/token \
	"$S"/vendor/a.c "$S"/vendor/patches/p.diff "$S"/.vscode/settings.json "$S/ID_RSA " \
	"$S/$(printf 'bad\001name')" "$S"/server.pem.
# a *.pem is judged by its content: this one holds a private key
printf -- '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n' >"$S"/server.pem.
ln -s /etc/passwd "$S"/src/passwd-link
ln -s /etc "$S"/etc-link
ln -s .ssh "$S"/ssh-link

# --- --check with the built-in policy, paths relative, absolute, tricks ---
TAB=$'\t'
want="DENIED${TAB}profile:secrets${TAB}.env
SAFE${TAB}default${TAB}.env.example
SAFE${TAB}default${TAB}src/main.c
RESTRICTED${TAB}profile:project${TAB}.git/config
RESTRICTED${TAB}profile:project${TAB}.git/hooks/pre-commit
SAFE${TAB}default${TAB}.git/HEAD
DENIED${TAB}profile:secrets${TAB}.ssh/id_rsa
DENIED${TAB}profile:secrets${TAB}ID_RSA 
DENIED${TAB}profile:secrets${TAB}server.pem.
RESTRICTED${TAB}profile:project${TAB}.cUrSoR/mcp.json
DENIED${TAB}profile:secrets${TAB}secrets
RESTRICTED${TAB}profile:project${TAB}.vscode
SAFE${TAB}default${TAB}src/sub/x.h
SAFE${TAB}default${TAB}src/passwd-link
SAFE${TAB}default${TAB}.
REFUSED${TAB}dotdot${TAB}../etc/passwd
REFUSED${TAB}encoded${TAB}%2e%2e/etc/passwd
REFUSED${TAB}encoded${TAB}src/%252e
REFUSED${TAB}outside_root${TAB}/etc/passwd
REFUSED${TAB}outside_root${TAB}${S}_x/a
REFUSED${TAB}control${TAB}a\\x0ab
REFUSED${TAB}lookalike${TAB}．．／etc
REFUSED${TAB}empty${TAB}"
expect check-default 0 "$want" -- "$JAILFS" --check --source "$S" .env .env.example \
	src/main.c .git/config "$S/.git/hooks/pre-commit" .git/HEAD .ssh/id_rsa "ID_RSA " \
	server.pem. .cUrSoR/mcp.json secrets .vscode "$S//src/./sub/x.h" src/passwd-link "$S" \
	../etc/passwd %2e%2e/etc/passwd src/%252e /etc/passwd "${S}_x/a" $'a\nb' '．．／etc' ''

# is_dir: with --source from lstat (a symlink to a directory is not one, see
# check-default); without --source only a trailing slash says directory, and
# that matters only for [safe] rules and exceptions: a [denied] or
# [restricted] "secrets/" or ".vscode/" holds whatever object has the name
want="SAFE${TAB}default${TAB}ssh-link
DENIED${TAB}profile:secrets${TAB}secrets
RESTRICTED${TAB}profile:project${TAB}.vscode"
expect check-nosource 0 "$want" -- "$JAILFS" --check ssh-link secrets .vscode
want="DENIED${TAB}profile:secrets${TAB}secrets
RESTRICTED${TAB}profile:project${TAB}.vscode"
expect check-trailing-slash 0 "$want" -- "$JAILFS" --check secrets/ .vscode/

# --stdin
want="DENIED${TAB}profile:secrets${TAB}a/.env
SAFE${TAB}default${TAB}b.c"
expect check-stdin 0 "$want" -- bash -c "printf 'a/.env\nb.c\n' | \"\$JAILFS\" --check --stdin"

# --- a policy file: rules print as FILE:LINE; --read-only ---
P=$T/policy.ini
cat >"$P" <<'POL'
# test policy
[safe]
/
vendor/patches/
[restricted]
vendor/
[denied]
*.log
!keep.log
[options]
default = denied
profiles = secrets
POL
want="SAFE${TAB}$P:3${TAB}src/main.c
RESTRICTED${TAB}$P:6${TAB}vendor/a.c
SAFE${TAB}$P:4${TAB}vendor/patches/p.diff
DENIED${TAB}$P:8${TAB}x/debug.log
SAFE${TAB}$P:3${TAB}x/keep.log
DENIED${TAB}profile:secrets${TAB}.env
SAFE${TAB}$P:3${TAB}.git/config"
expect check-policy 0 "$want" -- "$JAILFS" --check --policy "$P" src/main.c vendor/a.c \
	vendor/patches/p.diff x/debug.log x/keep.log .env .git/config
want="RESTRICTED${TAB}$P:3${TAB}src/main.c
DENIED${TAB}$P:8${TAB}x/debug.log"
expect check-read-only 0 "$want" -- "$JAILFS" --check --read-only -p "$P" src/main.c x/debug.log

# --- errors: exit 2 for usage and policy, 1 for runtime ---
B=$T/bad.ini
printf '[safe]\n/\n[safee]\n' >"$B"
expect check-bad-policy 2 "" -- "$JAILFS" --check --policy "$B" x
grep -qxF "jailfs: $B:3: unknown section [safee] (expected [safe], [restricted], [denied], [limits], [options], [run] or [content])" "$T.err" ||
	fail "bad policy message: $(cat "$T.err")"
printf '[denied]\nfoo[ab\n' >"$B"
expect scan-bad-policy 2 "" -- "$JAILFS" --scan --policy "$B" "$S"
grep -qxF "jailfs: $B:2: invalid pattern 'foo[ab': unclosed or malformed '[' class" "$T.err" ||
	fail "bad glob message: $(cat "$T.err")"
expect check-missing-policy 2 "" -- "$JAILFS" --check --policy "$T/nope.ini" x
grep -qxF "jailfs: $T/nope.ini: No such file or directory" "$T.err" || fail "missing policy message"
# a file that makes nothing SAFE and names no default (written for its
# [run] keys) is refused, saying why; with default = safe it is the built-in
# default plus its lines; default = restricted makes a read-only view
R=$T/run-only.ini
printf '[run]\nexpose = /opt/tool\n' >"$R"
expect check-run-only 2 "" -- "$JAILFS" --check --policy "$R" src/main.c
grep -qxF "jailfs: $R: no rule and no 'default' makes anything SAFE, so the whole project would be read-only (the default zone of a policy file is restricted, that of the built-in default safe): add 'default = safe' under [options] for the built-in default's zones plus this file's rules, or 'default = restricted' for a read-only view" "$T.err" ||
	fail "run-only policy message: $(cat "$T.err")"
expect scan-run-only 2 "" -- "$JAILFS" --scan --policy "$R" "$S"
printf '[denied]\n*.log\n' >"$R"
expect check-denied-only 2 "" -- "$JAILFS" --check --policy "$R" src/main.c
printf '[run]\nexpose = /opt/tool\n[options]\ndefault = safe\n' >"$R"
want="SAFE${TAB}default${TAB}src/main.c
DENIED${TAB}profile:secrets${TAB}.env
RESTRICTED${TAB}profile:project${TAB}.git/config"
expect check-run-default-safe 0 "$want" -- "$JAILFS" --check --policy "$R" --source "$S" \
	src/main.c .env .git/config
expect check-builtin-same 0 "$want" -- "$JAILFS" --check --source "$S" src/main.c .env .git/config
printf '[run]\nexpose = /opt/tool\n[options]\ndefault = restricted\n' >"$R"
expect check-run-default-restricted 0 "RESTRICTED${TAB}default${TAB}src/main.c" -- \
	"$JAILFS" --check --policy "$R" --source "$S" src/main.c
expect check-no-path 2 "" -- "$JAILFS" --check
expect check-bad-option 2 "" -- "$JAILFS" --check --frobnicate x
expect check-bad-source 1 "" -- "$JAILFS" --check --source "$T/nope" x
expect scan-no-source 2 "" -- "$JAILFS" --scan
expect scan-missing-source 1 "" -- "$JAILFS" --scan "$T/nope"
out=$("$JAILFS" --check --help) || fail "check --help exit $?"
[[ $out == *"Usage: jailfs --check"* && $out == *"Exit status"* ]] || fail "check --help text"
out=$("$JAILFS" --scan --help) || fail "scan --help exit $?"
[[ $out == *"Usage: jailfs --scan"* ]] || fail "scan --help text"

# --- --scan: DENIED and REFUSED entries listed, sorted, DENIED dirs not
# entered, no symlink followed; RESTRICTED entries counted by rule ---
want="DENIED${TAB}profile:secrets${TAB}.env
DENIED${TAB}profile:secrets${TAB}.ssh/
DENIED${TAB}profile:secrets${TAB}ID_RSA 
REFUSED${TAB}control${TAB}bad\\x01name
DENIED${TAB}profile:secrets${TAB}secrets/
DENIED${TAB}profile:secrets${TAB}server.pem.
# RESTRICTED 4 by profile:project
# (--all lists each RESTRICTED entry)
# SAFE 15, RESTRICTED 4, DENIED 5 (2 directories not entered), REFUSED 1; 25 entries, 0 pseudo-filesystem mounts skipped, 0 unreadable"
expect scan-summary 0 "$want" -- "$JAILFS" --scan "$S"
# with --all (or -v): every non-SAFE entry
want="DENIED${TAB}profile:secrets${TAB}.env
RESTRICTED${TAB}profile:project${TAB}.git/config
RESTRICTED${TAB}profile:project${TAB}.git/hooks/pre-commit
DENIED${TAB}profile:secrets${TAB}.ssh/
RESTRICTED${TAB}profile:project${TAB}.vscode/
RESTRICTED${TAB}profile:project${TAB}.vscode/settings.json
DENIED${TAB}profile:secrets${TAB}ID_RSA 
REFUSED${TAB}control${TAB}bad\\x01name
DENIED${TAB}profile:secrets${TAB}secrets/
DENIED${TAB}profile:secrets${TAB}server.pem.
# SAFE 15, RESTRICTED 4, DENIED 5 (2 directories not entered), REFUSED 1; 25 entries, 0 pseudo-filesystem mounts skipped, 0 unreadable"
expect scan-all 0 "$want" -- "$JAILFS" --scan --all "$S"
expect scan-v 0 "$want" -- "$JAILFS" --scan -v "$S"
expect check-all 2 "" -- "$JAILFS" --check --all x
# counts by rule: most first, then by rule; a policy file's rules by line
P2=$T/counts.ini
printf '[safe]\n/\n[restricted]\n*.md\ndocs/\n[options]\nprofiles = secrets\n' >"$P2"
mkdir -p "$T/counts/docs"
touch "$T/counts/a.md" "$T/counts/b.md" "$T/counts/docs/x" "$T/counts/.env" "$T/counts/main.c"
want="DENIED${TAB}profile:secrets${TAB}.env
# RESTRICTED 2 by $P2:4
# RESTRICTED 2 by $P2:5
# (--all lists each RESTRICTED entry)
# SAFE 1, RESTRICTED 4, DENIED 1 (0 directories not entered), REFUSED 0; 6 entries, 0 pseudo-filesystem mounts skipped, 0 unreadable"
expect scan-counts 0 "$want" -- "$JAILFS" --scan --policy "$P2" "$T/counts"
touch "$T/counts/docs/y"
want="DENIED${TAB}profile:secrets${TAB}.env
# RESTRICTED 3 by $P2:5
# RESTRICTED 2 by $P2:4
# (--all lists each RESTRICTED entry)
# SAFE 1, RESTRICTED 5, DENIED 1 (0 directories not entered), REFUSED 0; 7 entries, 0 pseudo-filesystem mounts skipped, 0 unreadable"
expect scan-counts-order 0 "$want" -- "$JAILFS" --scan --policy "$P2" "$T/counts"

want="DENIED${TAB}$P:8${TAB}a.log
# SAFE 2, RESTRICTED 0, DENIED 1 (0 directories not entered), REFUSED 0; 3 entries, 0 pseudo-filesystem mounts skipped, 0 unreadable"
mkdir -p "$T/small/d"
touch "$T/small/a.log" "$T/small/d/keep.log"
expect scan-policy 0 "$want" -- "$JAILFS" --scan --policy "$P" "$T/small"

# an unreadable directory is reported and makes the exit status 1 (not as root)
if [ "$(id -u)" != 0 ]; then
	mkdir "$T/small/locked" && chmod 000 "$T/small/locked"
	expect scan-unreadable 1 "$(printf '%s\n%s' "DENIED${TAB}$P:8${TAB}a.log" \
		"# SAFE 3, RESTRICTED 0, DENIED 1 (0 directories not entered), REFUSED 0; 4 entries, 0 pseudo-filesystem mounts skipped, 1 unreadable")" \
		-- "$JAILFS" --scan --policy "$P" "$T/small"
	chmod 700 "$T/small/locked"
fi

# --- directory rules hold a name whatever object has it: a symlink .claude,
# a FIFO .vscode, a file secrets (the view agrees: tests/mount/test-dirrules.sh)
D=$T/dirrules
mkdir -p "$D/agent"
ln -s agent "$D/.claude"
mkfifo "$D/.vscode"
printf 'x\n' >"$D/secrets"
want="RESTRICTED${TAB}profile:project${TAB}.claude
RESTRICTED${TAB}profile:project${TAB}.vscode
DENIED${TAB}profile:secrets${TAB}secrets
SAFE${TAB}default${TAB}agent"
expect check-dir-rules 0 "$want" -- "$JAILFS" --check --source "$D" .claude .vscode secrets agent
want="RESTRICTED${TAB}profile:project${TAB}.claude
RESTRICTED${TAB}profile:project${TAB}.vscode
DENIED${TAB}profile:secrets${TAB}secrets
# SAFE 1, RESTRICTED 2, DENIED 1 (0 directories not entered), REFUSED 0; 4 entries, 0 pseudo-filesystem mounts skipped, 0 unreadable"
expect scan-dir-rules 0 "$want" -- "$JAILFS" --scan --all "$D"

# --- C1 controls and bidi overrides: refused like C0, escaped as \xHH ---
U=$T/unsafe
mkdir -p "$U"
touch "$U/$(printf 'csi\302\2332J')" "$U/$(printf 'txt\342\200\256exe.sh')" \
	"$U/$(printf 'iso\342\201\246x')" "$U/caf$(printf '\303\251')" "$U/$(printf 'raw\377')"
want="REFUSED${TAB}control${TAB}csi\\xc2\\x9b2J
REFUSED${TAB}control${TAB}iso\\xe2\\x81\\xa6x
REFUSED${TAB}control${TAB}txt\\xe2\\x80\\xaeexe.sh
# SAFE 2, RESTRICTED 0, DENIED 0 (0 directories not entered), REFUSED 3; 5 entries, 0 pseudo-filesystem mounts skipped, 0 unreadable"
expect scan-c1-bidi 0 "$want" -- "$JAILFS" --scan "$U"
want="REFUSED${TAB}control${TAB}a\\xc2\\x9bb
REFUSED${TAB}control${TAB}x/\\xe2\\x80\\xae
SAFE${TAB}default${TAB}caf$(printf '\303\251')
SAFE${TAB}default${TAB}raw\\xff
SAFE${TAB}default${TAB}back\\x5cslash"
expect check-c1-bidi 0 "$want" -- "$JAILFS" --check "$(printf 'a\302\233b')" \
	"$(printf 'x/\342\200\256')" "caf$(printf '\303\251')" "$(printf 'raw\377')" 'back\slash'

# --- content and git: the daemon's own judgement (refine.c, tracked.c) ---
# A CA-like *.pem and an AsciiDoc *.asc are public; a *.pem with a private
# key and a *.key holding one stay DENIED; a tracked id_rsa and a tracked
# file under a DENIED .ssh/ are RESTRICTED (git-index), the untracked file
# beside it stays DENIED; without --source the content cannot be judged.
G=$T/git-tree
mkdir -p "$G/tests/.ssh"
CERT='-----BEGIN CERTIFICATE-----
MIIBszCCAVmgAwIBAgIUQ
-----END CERTIFICATE-----'
KEY='-----BEGIN RSA PRIVATE KEY-----
MIIEowIBAAKCAQEA
-----END RSA PRIVATE KEY-----'
printf '# Issuer: CN=Root\n%s\n%s\n' "$CERT" "$CERT" >"$G/cacert.pem"
printf '%s\n' "$KEY" >"$G/priv.pem"
printf '%s\n' "$KEY" >"$G/server.key"
printf '= Guide\nNo armor here.\n' >"$G/guide.asc"
printf '%s\n' "$KEY" >"$G/id_rsa"
printf 'github.com ssh-ed25519 AAAA\n' >"$G/tests/.ssh/known_hosts"
printf '%s\n' "$KEY" >"$G/tests/.ssh/id_ed25519"
printf 'TOKEN=1\n' >"$G/.env"
if command -v git >/dev/null; then
	git -C "$G" init -q && git -C "$G" add id_rsa tests/.ssh/known_hosts &&
		git -C "$G" -c user.email=t@t -c user.name=t commit -qm t ||
		fail "git: cannot make the test repository"
	GI="git-index (tracked by git: shown read-only, hiding it would make git record its deletion)"
	want="SAFE${TAB}default (public content: profile:secrets set aside)${TAB}cacert.pem
DENIED${TAB}profile:secrets${TAB}priv.pem
DENIED${TAB}profile:secrets${TAB}server.key
SAFE${TAB}default (public content: profile:secrets set aside)${TAB}guide.asc
RESTRICTED${TAB}${GI}${TAB}id_rsa
RESTRICTED${TAB}git-index (leads to files tracked by git)${TAB}tests/.ssh
RESTRICTED${TAB}${GI}${TAB}tests/.ssh/known_hosts
DENIED${TAB}profile:secrets${TAB}tests/.ssh/id_ed25519
DENIED${TAB}profile:secrets (unless its content is public)${TAB}absent.pem"
	expect check-content-git 0 "$want" -- "$JAILFS" --check --source "$G" cacert.pem \
		priv.pem server.key guide.asc id_rsa tests/.ssh tests/.ssh/known_hosts \
		tests/.ssh/id_ed25519 absent.pem
	# files shown despite a DENIED name are listed without --all
	scan_out=$("$JAILFS" --scan "$G" 2>&1)
	want="DENIED${TAB}profile:secrets${TAB}.env
SAFE${TAB}default (public content: profile:secrets set aside)${TAB}cacert.pem
SAFE${TAB}default (public content: profile:secrets set aside)${TAB}guide.asc
RESTRICTED${TAB}${GI}${TAB}id_rsa
DENIED${TAB}profile:secrets${TAB}priv.pem
DENIED${TAB}profile:secrets${TAB}server.key
RESTRICTED${TAB}git-index (leads to files tracked by git)${TAB}tests/.ssh/
DENIED${TAB}profile:secrets${TAB}tests/.ssh/id_ed25519
RESTRICTED${TAB}${GI}${TAB}tests/.ssh/known_hosts"
	[ "$(grep -v '^#' <<<"$scan_out")" = "$want" ] ||
		{ fail "scan-content-git: output differs"; diff <(echo "$want") <(echo "$scan_out") >&2; }
	# real git's index version 4 (prefix-compressed paths), and a SHA-256
	# repository: the same files are shown
	git -C "$G" update-index --index-version 4
	expect check-git-v4 0 "RESTRICTED${TAB}${GI}${TAB}tests/.ssh/known_hosts" -- \
		"$JAILFS" --check --source "$G" tests/.ssh/known_hosts
	G2=$T/git-sha256
	mkdir -p "$G2/tests/.ssh"
	cp "$G/id_rsa" "$G/tests/.ssh/known_hosts" "$G2/" 2>/dev/null
	mv "$G2/known_hosts" "$G2/tests/.ssh/"
	if git -C "$G2" init -q --object-format=sha256 2>/dev/null; then
		git -C "$G2" add id_rsa tests/.ssh/known_hosts
		expect check-git-sha256 0 "RESTRICTED${TAB}${GI}${TAB}id_rsa" -- \
			"$JAILFS" --check --source "$G2" id_rsa
	else
		fail "git cannot make a SHA-256 repository"
	fi
	# a policy that hides .git/objects: tracked files stay hidden
	printf '[denied]\n.git/\n[options]\ndefault = safe\n' >"$T/nogit.ini"
	expect check-git-hidden 0 "DENIED${TAB}profile:secrets${TAB}id_rsa" -- \
		"$JAILFS" --check --policy "$T/nogit.ini" --source "$G" id_rsa
	# the tracked file changed since the commit: not the indexed blob, hidden
	printf 'changed\n' >>"$G/id_rsa"
	expect check-git-changed 0 "DENIED${TAB}profile:secrets${TAB}id_rsa" -- \
		"$JAILFS" --check --source "$G" id_rsa
	# a malformed index: one warning, nothing tracked is shown
	printf 'DIRC\0\0\0\2\377\377\377\377%020d' 0 >"$G/.git/index"
	out=$("$JAILFS" --check --source "$G" tests/.ssh/known_hosts 2>"$T.err") || true
	[ "$out" = "DENIED${TAB}profile:secrets${TAB}tests/.ssh/known_hosts" ] &&
		grep -q '\.git/index: .*hidden' "$T.err" ||
		fail "check-git-malformed: $out / $(cat "$T.err")"
else
	fail "git is not installed"
fi

# --- content: secrets under innocent names, listed with detector and
# fingerprint, never the secret; certificates and plain text stay visible ---
require_tools ssh-keygen openssl python3
C=$T/content
mkdir -p "$C/deploy" "$C/test" "$C/certs" "$C/vendor/certifi"
ssh-keygen -q -t ed25519 -N '' -C test -f "$C/deploy/id_deploy"
rm "$C/deploy/id_deploy.pub"
{
	printf 'Fixture data for the parser.\n\n'
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 2>/dev/null |
		openssl rsa -traditional 2>/dev/null
	printf 'end of fixture\n'
} >"$C/test/fixture_data.txt"
# a classic GitHub token synthesized here, its CRC-32 valid
tok=$(python3 "$(dirname "${BASH_SOURCE[0]}")/../lib/fake-token.py")
printf 'export GITHUB_TOKEN=%s\n' "$tok" >"$C/config.local.sh"
openssl req -x509 -newkey rsa:1024 -nodes -keyout "$T/ca.key" -subj /CN=t -days 1 \
	-out "$C/certs/chain.pem" 2>/dev/null
printf '# no key yet\n' >"$C/certs/server.key"
cp "$T/ca.key" "$C/vendor/certifi/cacert.pem"
printf 'hello\n' >"$C/README"
out=$("$JAILFS" --scan "$C" 2>"$T.err") || fail "scan-content: exit $? ($(cat "$T.err"))"
for f in deploy/id_deploy:openssh test/fixture_data.txt:private-key config.local.sh:github; do
	if printf '%s\n' "$out" |
		grep -qE "^DENIED${TAB}content \(secret: ${f#*:}:[^:]{4}:[0-9a-f]{12}\)${TAB}${f%%:*}\$"; then
		ok "scan-content: ${f%%:*} found by ${f#*:}"
	else
		bad "scan-content: ${f%%:*} not found by ${f#*:}: $out"
	fi
done
printf '%s\n' "$out" | grep -qF "${tok:4}" && fail "scan-content: the token is printed"
printf '%s\n' "$out" | grep -q "README" && fail "scan-content: README listed"
want="SAFE${TAB}default (public content: profile:secrets set aside)${TAB}certs/chain.pem
SAFE${TAB}default (not a secret: profile:secrets set aside)${TAB}certs/server.key"
expect check-content-public 0 "$want" -- "$JAILFS" --check --source "$C" certs/chain.pem \
	certs/server.key
out=$("$JAILFS" --check --source "$C" vendor/certifi/cacert.pem)
printf '%s\n' "$out" | grep -qE "^DENIED${TAB}profile:secrets \(secret: private-key:-{4}:[0-9a-f]{12}\)${TAB}vendor/certifi/cacert.pem\$" &&
	ok "check-content-key" || bad "check-content-key: $out"
# a policy's [content]: a name override either way, a detector left out,
# scanning off
printf '[options]\ndefault = safe\n[content]\ndetectors = all, -github\n!vendor/certifi/\nREADME\n' \
	>"$T/content.ini"
want="SAFE${TAB}default (not a secret: profile:secrets set aside)${TAB}vendor/certifi/cacert.pem
DENIED${TAB}content (a secret by its [content] name)${TAB}README
SAFE${TAB}default${TAB}config.local.sh
DENIED${TAB}content (secret: openssh:----:$(
	"$JAILFS" --check --source "$C" deploy/id_deploy | sed -n 's/.*openssh:----:\([0-9a-f]*\).*/\1/p'
))${TAB}deploy/id_deploy"
expect check-content-policy 0 "$want" -- "$JAILFS" --check --policy "$T/content.ini" \
	--source "$C" vendor/certifi/cacert.pem README config.local.sh deploy/id_deploy
printf '[options]\ndefault = safe\nprofiles = project, -secrets\n' >"$T/nosecrets.ini"
want="SAFE${TAB}default${TAB}deploy/id_deploy
SAFE${TAB}default${TAB}config.local.sh"
expect check-content-off 0 "$want" -- "$JAILFS" --check --policy "$T/nosecrets.ini" \
	--source "$C" deploy/id_deploy config.local.sh

tap_done
