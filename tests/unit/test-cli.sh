#!/usr/bin/env bash
# The command line as a user meets it, without a mount:
#   - a mistyped option (long, short, -o, a missing argument) is reported
#     exactly once, with one "Try ... --help" line, exit status 2, by jailfs
#     (mount, --check, --scan) and jailrun (also as a JSON result);
#   - bash completion (completions/*.bash) run as bash runs it (COMP_WORDS,
#     COMP_CWORD): every option --help lists, per mode, is offered; policy
#     files after --policy, directories for SOURCE, -o keys after a comma,
#     commands after jailrun's --;
#   - zsh completion (completions/_jailfs, _jailrun) in an interactive
#     zsh -f with compinit (zsh-complete.zsh): every option --help lists,
#     per mode, is offered after --.
# Suite 'unit'.
set -uo pipefail

: "${JAILFS:?set by meson}" "${JAILRUN:?set by meson}" "${JF_SRCDIR:?set by meson}"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/jfcli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src" "$tmp/mnt"

# ------------------------------------------------------- mistyped options
# once REGEX PROG ARG...: exactly one line of stderr matches REGEX (the
# option as getopt(3) spells it), exit 2.
once() {
	local word=$1 out rc n
	shift
	out=$("$@" 2>&1 </dev/null >/dev/null)
	rc=$?
	n=$(grep -cE -- "$word" <<<"$out")
	if [ "$rc" -eq 2 ] && [ "$n" -eq 1 ]; then
		ok "${*##*/}: '$word' reported once, exit 2"
	else
		bad "${*##*/}: '$word' reported on $n lines, exit $rc: $out"
	fi
}
once --bogus "$JAILFS" --bogus "$tmp/src" "$tmp/mnt"
once "'x'|-x" "$JAILFS" -x "$tmp/src" "$tmp/mnt"
once bogus "$JAILFS" -o bogus "$tmp/src" "$tmp/mnt"
once --bogus "$JAILFS" --check --bogus "$tmp/src"
once --bogus "$JAILFS" --scan --bogus "$tmp/src"
once --bogus "$JAILRUN" --bogus -- true
once "'o'|-o" "$JAILRUN" -o bogus -- true
once "--timeout" "$JAILRUN" --check --timeout
out=$("$JAILRUN" --json --bogus -- true 2>/dev/null)
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert "--bogus" in r["error"], r' \
	"$out" 2>/dev/null && ok "jailrun --json --bogus: the JSON error names --bogus" ||
	bad "jailrun --json --bogus: $out"

# ------------------------------------------------------- bash completion
for f in jailfs jailrun; do
	# shellcheck disable=SC1090
	. "$JF_SRCDIR/completions/$f.bash" 2>/dev/null || bad "completions/$f.bash does not load"
done
# comp FUNC WORD...: the candidates FUNC offers for the last WORD, one a line
comp() {
	local f=$1
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	declare -F "$f" >/dev/null || return 1
	"$f" 2>/dev/null
	printf '%s\n' "${COMPREPLY[@]}" | sort -u
}
# offers DESC CANDIDATE... -- FUNC WORD...: each CANDIDATE is offered
offers() {
	local d=$1 want=() got c missing=""
	shift
	while [ "$1" != -- ]; do want+=("$1"); shift; done
	shift
	got=$(comp "$@")
	for c in "${want[@]}"; do grep -qxF -- "$c" <<<"$got" || missing+=" $c"; done
	[ -n "$got" ] && [ -z "$missing" ] && ok "completion: $d" ||
		bad "completion: $d: lacks$missing (offered: $(tr '\n' ' ' <<<"$got"))"
}
# lacks DESC CANDIDATE -- FUNC WORD...: CANDIDATE is not offered
lacks() {
	local d=$1 c=$2
	shift 3
	comp "$@" | grep -qxF -- "$c" && bad "completion: $d: offers $c" || ok "completion: $d"
}
help_opts() { grep -E '^  (-[a-zA-Z], )?--[a-z]' | grep -oE '(^|[ ,])--[a-z][a-z-]+' |
	sed 's/^[ ,]//' | sort -u; }
mapfile -t o < <("$JAILFS" --help | help_opts)
offers "jailfs -- offers every option of --help (${#o[@]})" "${o[@]}" -- _jailfs jailfs --
for m in --check --scan --audit-report; do
	# a mode's help names the other modes in its text, not as its options
	mapfile -t o < <("$JAILFS" $m --help | help_opts | grep -vxE -- '--(check|scan|audit-report)')
	offers "jailfs $m -- offers every option of $m --help (${#o[@]})" "${o[@]}" -- \
		_jailfs jailfs $m --
done
mapfile -t o < <("$JAILFS" changes --help | help_opts)
offers "jailfs apply DIR -- offers every option of changes --help (${#o[@]})" "${o[@]}" -- \
	_jailfs jailfs apply "$tmp" --
offers "jailfs ch: the review commands" changes checkpoint -- _jailfs jailfs ch
lacks "jailfs --check -- does not offer the mount's --audit-sync" --audit-sync -- \
	_jailfs jailfs --check --
mapfile -t o < <("$JAILRUN" --help | help_opts)
offers "jailrun -- offers every option of --help (${#o[@]})" "${o[@]}" -- _jailrun jailrun --
mkdir -p "$tmp/c/pol/sub" "$tmp/c/src/dir"
touch "$tmp/c/pol/a.ini" "$tmp/c/pol/notes.txt" "$tmp/c/src/file"
offers "jailfs --policy DIR/: *.ini files and directories" "$tmp/c/pol/a.ini" "$tmp/c/pol/sub" -- \
	_jailfs jailfs --policy "$tmp/c/pol/"
lacks "jailfs --policy DIR/: not notes.txt" "$tmp/c/pol/notes.txt" -- \
	_jailfs jailfs --policy "$tmp/c/pol/"
offers "jailrun --policy DIR/: *.ini files" "$tmp/c/pol/a.ini" -- \
	_jailrun jailrun --policy "$tmp/c/pol/"
lacks "jailrun --policy DIR/: not notes.txt" "$tmp/c/pol/notes.txt" -- \
	_jailrun jailrun --policy "$tmp/c/pol/"
offers "jailfs SOURCE: directories" "$tmp/c/src/dir" -- _jailfs jailfs "$tmp/c/src/"
lacks "jailfs SOURCE: no plain file" "$tmp/c/src/file" -- _jailfs jailfs "$tmp/c/src/"
offers "jailfs -o fast_o" fast_open -- _jailfs jailfs -o fast_o
offers "jailfs -o ro,no: after the comma" ro,nowatch ro,nofast_open -- _jailfs jailfs -o ro,no
offers "jailfs --audit-level" denied writes all -- _jailfs jailfs --audit-level ""
offers "jailrun --source: directories" "$tmp/c/src/dir" -- _jailrun jailrun --source "$tmp/c/src/"
offers "jailrun -- pyth: commands" python3 -- _jailrun jailrun --json -- pyth
offers "jailrun -- CMD ARG: files" "$tmp/c/src/file" -- _jailrun jailrun -- cat "$tmp/c/src/"

# ------------------------------------------------------- zsh completion
# zoffers PROG [MODE]: candidate file N offers every option of PROG [MODE] --help
zoffers() {
	local f=$tmp/z/$1 prog=$2 bin missing=""
	shift 2
	[ "$prog" = jailfs ] && bin=$JAILFS || bin=$JAILRUN
	# a mode's help names the other modes in its text, not as its options
	mapfile -t o < <("$bin" "$@" --help | help_opts |
		{ [ $# -gt 0 ] && grep -vxE -- '--(check|scan|audit-report)' || cat; })
	for c in "${o[@]}"; do grep -qxF -- "$c" "$f" || missing+=" $c"; done
	[ -s "$f" ] && [ -z "$missing" ] &&
		ok "zsh completion: $prog${*:+ $*} -- offers every option of --help (${#o[@]})" ||
		bad "zsh completion: $prog${*:+ $*} --: lacks$missing (offered: $(tr '\n' ' ' <"$f"))"
}
if command -v zsh >/dev/null; then
	mkdir -p "$tmp/z"
	zsh -f "$JF_SRCDIR/tests/unit/zsh-complete.zsh" "$JF_SRCDIR/completions" "$tmp/z" \
		"jailfs --" "jailfs --check --" "jailfs --scan --" "jailfs --audit-report --" \
		"jailrun --" "jailfs apply $tmp --" 2>"$tmp/zsh.err" ||
		bad "zsh completion: a completion did not finish in 30 s: $(<"$tmp/zsh.err")"
	zoffers 1 jailfs
	zoffers 2 jailfs --check
	zoffers 3 jailfs --scan
	zoffers 4 jailfs --audit-report
	zoffers 5 jailrun
	zoffers 6 jailfs changes
elif [ "${CI:-}" = true ]; then
	bad "zsh completion: zsh is not installed (CI=true; Debian package zsh)"
else
	ok "zsh completion # SKIP zsh is not installed"
fi

tap_done
