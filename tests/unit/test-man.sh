#!/usr/bin/env bash
# The manual pages (man/*.scd) against the programs they describe:
#   - each page converts with scdoc and renders with man(1) without a troff
#     warning;
#   - every long option that `--help` of jailfs (mount, --check, --scan,
#     --audit-report) and jailrun lists, and every -o key jailfs --help
#     names, is in the page, so a new option cannot go undocumented;
#   - every option the page describes is one the program accepts (getopt
#     answers "unrecognized option" otherwise), so a removed one cannot
#     stay documented;
#   - every manual section a hint of jailrun points at (runner/hint.c:
#     "PAGE(N), SECTION") is a heading (# or ##) of that page.
# Suite 'unit'. Needs scdoc: with CI=true a missing scdoc is a failure.
set -uo pipefail

: "${JAILFS:?set by meson}" "${JAILRUN:?set by meson}" "${JF_SRCDIR:?set by meson}"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_tools scdoc
tmp=$(mktemp -d "${TMPDIR:-/tmp}/jfman.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for page in jailfs.1 jailfs-changes.1 jailrun.1 jailfs-policy.5; do
	if scdoc <"$JF_SRCDIR/man/$page.scd" >"$tmp/$page" 2>"$tmp/err"; then
		warn=$(MANWIDTH=80 man --warnings -l "$tmp/$page" 2>&1 >/dev/null)
		[ -z "$warn" ] && ok "$page: scdoc and man render it without a warning" ||
			bad "$page: man --warnings: $warn"
	else
		bad "$page: scdoc: $(cat "$tmp/err")"
	fi
done

# Options a --help text lists: the --long names on the lines that start an
# entry (two blanks, then an option), as getopt_long spells them.
help_opts() { grep -E '^  (-[a-zA-Z], )?--[a-z]' | grep -oE '(^|[ ,])--[a-z][a-z-]+' |
	sed 's/^[ ,]//' | sort -u; }
covers() { # PAGE LABEL OPTION...
	local page=$1 label=$2 o missing=""
	shift 2
	for o in "$@"; do
		grep -qF -- "*$o*" "$JF_SRCDIR/man/$page.scd" || missing+=" $o"
	done
	[ -z "$missing" ] && ok "$page documents every option of $label ($#)" ||
		bad "$page lacks options of $label:$missing"
}
mapfile -t o < <("$JAILFS" --help | help_opts)
covers jailfs.1 "jailfs --help" "${o[@]}"
mapfile -t o < <("$JAILFS" --check --help | help_opts)
covers jailfs.1 "jailfs --check --help" "${o[@]}"
mapfile -t o < <("$JAILFS" --scan --help | help_opts)
covers jailfs.1 "jailfs --scan --help" "${o[@]}"
mapfile -t o < <("$JAILFS" --audit-report --help | help_opts)
covers jailfs.1 "jailfs --audit-report --help" "${o[@]}"
mapfile -t o < <("$JAILFS" changes --help | help_opts)
covers jailfs-changes.1 "jailfs changes --help" "${o[@]}"
mapfile -t o < <("$JAILRUN" --help | help_opts)
covers jailrun.1 "jailrun --help" "${o[@]}"
# -o keys: the -o block of jailfs --help lists them on lines indented by 7
# blanks, comma-separated, each up to its '=' or a blank; the description
# starts after two blanks or a parenthesis.
mapfile -t o < <("$JAILFS" --help | sed -n '/^  -o OPT/,/^  -h, --help/p' |
	grep -E '^       [a-z]' | grep -v ';' | sed -E 's/^ +//; s/ \([^)]*\)//g; s/(  | \(| \.\.\.).*//' |
	tr ',' '\n' | sed -E 's/^ +//; s/[= ].*//' | grep -E '^[a-z_]+$' | sort -u)
missing=""
for k in "${o[@]}"; do
	grep -qw -- "$k" "$JF_SRCDIR/man/jailfs.1.scd" || missing+=" $k"
done
[ ${#o[@]} -ge 10 ] && [ -z "$missing" ] && ok "jailfs.1 documents every -o key of --help (${#o[@]})" ||
	bad "jailfs.1 lacks -o keys:$missing (found ${#o[@]} in --help)"

# The other way: each option a page's OPTIONS describes must be accepted.
accepts() { # PROG OPTION [ARG]: exit status is not getopt's "unrecognized"
	local out
	out=$("$@" </dev/null 2>&1)
	! grep -qE 'unrecognized option|invalid option|unknown option' <<<"$out"
}
documented() { # PAGE: --options that start a definition-list entry
	grep -oE '^\*--[a-z][a-z-]+\*' "$JF_SRCDIR/man/$1.scd" | tr -d '*' | sort -u
}
missing=""
for opt in $(documented jailrun.1); do
	accepts "$JAILRUN" --check "$opt" x -- true || missing+=" $opt"
done
[ -z "$missing" ] && ok "jailrun accepts every option jailrun.1 describes" ||
	bad "jailrun.1 describes options jailrun refuses:$missing"
missing=""
for opt in $(documented jailfs.1); do
	case $opt in
	--check | --scan | --audit-report) continue ;;
	esac
	accepts "$JAILFS" "$opt" x y z || accepts "$JAILFS" --check "$opt" x y ||
		accepts "$JAILFS" --audit-report "$opt" 1 /dev/null || missing+=" $opt"
done
[ -z "$missing" ] && ok "jailfs accepts every option jailfs.1 describes" ||
	bad "jailfs.1 describes options jailfs refuses:$missing"

missing=""
for opt in $(documented jailfs-changes.1); do
	accepts "$JAILFS" apply "$opt" x /nonexistent || missing+=" $opt"
done
[ -z "$missing" ] && ok "jailfs accepts every option jailfs-changes.1 describes" ||
	bad "jailfs-changes.1 describes options jailfs refuses:$missing"

# The hints' pointers: "jailrun(1), GUARDRAILS" names a heading of man/jailrun.1.scd.
mapfile -t o < <(grep -ohE '(jailfs|jailrun|jailfs-policy)\([15]\), [A-Z][A-Za-z'"'"' ]*[A-Za-z]' \
	"$JF_SRCDIR/runner/hint.c" | sort -u)
missing=""
for p in "${o[@]}"; do
	page=${p%%(*}
	sec=${p#*(}
	sec=${sec%%)*}
	head=${p#*, }
	grep -qxE "##? $head" "$JF_SRCDIR/man/$page.$sec.scd" || missing+=" '$p'"
done
[ ${#o[@]} -ge 6 ] && [ -z "$missing" ] && ok "every section the hints name exists (${#o[@]})" ||
	bad "hints name sections the pages lack:$missing (found ${#o[@]} pointers)"

tap_done
