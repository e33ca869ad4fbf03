#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What each shipped policy hides in real source trees, and that none of it
# is source: every example of mnt-examples/ and the built-in default, over
# the Linux tree (linux-source-6.1, 83,000 entries), a Python tree
# (/usr/lib/python3.11) and a Node tree (/usr/lib/node_modules, npm's own
# node_modules). Each entry of a tree is classified by `jailfs --check
# --stdin --source TREE` (the daemon's zones, the real entry's type); the
# test prints, per policy and tree, the DENIED entries counted by rule, and
# fails for every DENIED source file (.c .h .py .js .ts ..., Makefile,
# Kconfig: which also covers a directory holding source, since its entries
# are DENIED with it) unless its rule is one meant to hide it (share.ini's
# /node_modules/ and /.cache/). system.ini views the whole host: its trees
# are classified at the paths it sees them at (/usr/lib/..., and the Linux
# tree as if under its writable /srv/agent/).
# No FUSE; seconds once the Linux tree is extracted (tests/lib/lib-linux.sh,
# minutes the first time). Environment: JF_LINUX_SRC as test-realtree.sh.
set -uo pipefail
: "${JAILFS:?set by meson}"
SRC=${JF_SRCDIR:?JF_SRCDIR not set}
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=tests/lib/lib-linux.sh
. "$here/../lib/lib-linux.sh"
# shellcheck source=tests/lib/lib-tap.sh
. "$here/../lib/lib-tap.sh"

linux=${JF_LINUX_SRC:-/var/tmp/jf-linux/linux-source-6.1}
why=$(linux_tree "$linux") || { bad "the Linux tree: $why"; tap_done; exit 1; }
trees=("$linux" /usr/lib/python3.11 /usr/lib/node_modules)
for t in "${trees[@]}"; do
	[ -d "$t" ] || bad "tree $t is missing"
done
work=$(mktemp -d /tmp/jf-policy-trees.XXXXXX)
trap 'rm -rf "$work"' EXIT

# A source file by its name: what a code search tool or an uploader of a
# source tree is there for.
is_source='/(Makefile|Kconfig|Kbuild|[^/]*\.(c|h|S|cc|cpp|cxx|hh|hpp|rs|go|py|pyi|pyx|pxd|js|mjs|cjs|ts|tsx|jsx|mts|cts|java|rb|pl|pm|sh|lua|awk|y|l|lds|dts|dtsi))$'
# Rules meant to hide source: POLICY-BASENAME<TAB>PATTERN
meant=$'share.ini\t/node_modules/\nshare.ini\t/.cache/'

# rule_text POLICY RULE: the pattern at FILE:LINE, else RULE itself
rule_text() {
	case $2 in
	"$1":*) sed -n "${2##*:}p" "$1" ;;
	*) echo "$2" ;;
	esac
}

# judge NAME POLICY-ARGS... -- TREE PREFIX: classify every entry of TREE
# (given as PREFIX/path, with --source SRCROOT) and check the DENIED ones.
judge() {
	local name=$1 policy=$2 tree=$3 root=$4 prefix=$5 out=$work/out key
	local args=()
	[ "$policy" = built-in ] || args=(--policy "$policy")
	key="$name $(basename "$tree")"
	(cd "$tree" && find . -mindepth 1 -printf "$prefix%P\n") |
		"$JAILFS" --check --stdin "${args[@]}" --source "$root" >"$out" 2>"$work/err"
	check "$key: every entry classified" test "$(wc -l <"$out")" = "$(cd "$tree" && find . -mindepth 1 | wc -l)"
	echo "# $key: $(awk -F'\t' '$1 == "DENIED"' "$out" | wc -l) DENIED," \
		"$(awk -F'\t' '$1 == "RESTRICTED"' "$out" | wc -l) RESTRICTED," \
		"$(awk -F'\t' '$1 == "SAFE"' "$out" | wc -l) SAFE"
	awk -F'\t' '$1 == "DENIED" { print $2 }' "$out" | sort | uniq -c | sort -rn |
		while read -r n rule; do
			echo "#   DENIED $n by $rule ($(rule_text "$policy" "$rule"))"
		done
	awk -F'\t' '$1 == "DENIED"' "$out" | grep -E "$is_source" >"$work/src" || true
	: >"$work/wrong"
	while IFS=$'\t' read -r _ rule path; do
		grep -qxF "$(basename "$policy")"$'\t'"$(rule_text "$policy" "$rule")" <<<"$meant" ||
			printf '%s\t%s\n' "$rule" "$path" >>"$work/wrong"
	done <"$work/src"
	sed 's/^/#   hidden source: /' "$work/wrong" | head -20
	check "$key: no source file is hidden but by a rule meant for it ($(wc -l <"$work/wrong") are)" \
		test ! -s "$work/wrong"
}

policies=(built-in "$SRC"/mnt-examples/*.ini)
for p in "${policies[@]}"; do
	name=$(basename "$p")
	for t in "${trees[@]}"; do
		[ -d "$t" ] || continue
		if [ "$name" = system.ini ]; then
			case $t in
			/usr/*) judge "$name" "$p" "$t" / "${t#/}/" ;;
			*) judge "$name" "$p" "$t" / "srv/agent/$(basename "$t")/" ;;
			esac
		else
			judge "$name" "$p" "$t" "$t" ""
		fi
	done
done
tap_done
