#!/usr/bin/env bash
# `meson install` into a staging directory (DESTDIR), then:
#   - the manual pages are where man(1) finds them: MANPATH=<stage>/man
#     `man -w jailfs` (and jailrun, jailfs-policy(5)) names the staged file,
#     and each renders;
#   - nothing under share/doc/jailfs looks like a credential: no file holds
#     "PRIVATE KEY" or one of the demo's fake secret values (demo-secrets.sh
#     plants them at run time), and no secret's file name is installed;
#   - every Documentation= target of the installed jailfs@.service exists
#     in the stage (man: pages through man -w, file: URLs as files);
#   - LICENSE is installed beside the documentation;
#   - shell completion: bash's in bash-completion's completionsdir (its
#     pkg-config file, else share/bash-completion/completions), each
#     defining its function and `complete` for the program when bash sources
#     it; zsh's _jailfs and _jailrun in share/zsh/site-functions.
# Suite 'unit'. Needs scdoc (the pages are built only with it): with
# CI=true a missing scdoc is a failure, never a skip.
set -uo pipefail

: "${JF_SRCDIR:?set by meson}" "${JF_BUILDDIR:?set by meson}"
# shellcheck source=tests/lib/lib-tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib-tap.sh"
require_tools scdoc
tmp=$(mktemp -d "${TMPDIR:-/tmp}/jfinstall.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
if ! meson install -C "$JF_BUILDDIR" --no-rebuild --destdir "$dest" >"$tmp/install.log" 2>&1; then
	echo "Bail out! meson install failed"
	tail -n 5 "$tmp/install.log" | sed 's/^/# /'
	exit 1
fi
prefix=$(meson introspect "$JF_BUILDDIR" --buildoptions |
	python3 -c 'import json,sys; print({o["name"]: o["value"] for o in json.load(sys.stdin)}["prefix"])')
mandir=$dest$prefix/share/man
docdir=$dest$prefix/share/doc/jailfs

# ---------------------------------------------------------------- man pages
for spec in 1:jailfs 1:jailfs-changes 1:jailrun 5:jailfs-policy; do
	sec=${spec%%:*}
	name=${spec#*:}
	where=$(MANPATH=$mandir man -w "$sec" "$name" 2>&1)
	if [ "$where" = "$mandir/man$sec/$name.$sec" ]; then
		ok "man -w $sec $name: $where"
	else
		bad "man -w $sec $name: '$where' (want $mandir/man$sec/$name.$sec)"
		continue
	fi
	text=$(MANPATH=$mandir MANWIDTH=80 man "$sec" "$name" 2>/dev/null | col -b)
	grep -q '^NAME' <<<"$text" && grep -q "^ *$name - " <<<"$text" &&
		grep -q '^SEE ALSO' <<<"$text" &&
		ok "man $sec $name renders (NAME, SEE ALSO)" || bad "man $sec $name does not render"
done

# ---------------------------------------------------------------- no secrets
if [ -d "$docdir" ]; then
	bash "$JF_SRCDIR/mnt-examples/demo-secrets.sh" "$tmp" # a failure leaves too few values
	mapfile -t values < <(grep -rhoE 'FAKE-JAILFS-DEMO-[A-Za-z0-9-]+' "$tmp/.env" \
		"$tmp/config" "$tmp/keys" "$tmp/.aws" "$tmp/home" 2>/dev/null | sort -u)
	[ ${#values[@]} -ge 8 ] && ok "demo-secrets.sh plants ${#values[@]} fake values" ||
		bad "demo-secrets.sh planted only ${#values[@]} fake values"
	hits=$(grep -rlF 'PRIVATE KEY' "$docdir" | tr '\n' ' ')
	[ -z "$hits" ] && ok "no file under share/doc/jailfs holds 'PRIVATE KEY'" ||
		bad "'PRIVATE KEY' in: $hits"
	hits=$(for v in "${values[@]}"; do grep -rlF -- "$v" "$docdir"; done | sort -u | tr '\n' ' ')
	[ -z "$hits" ] && ok "no file under share/doc/jailfs holds a fake secret value" ||
		bad "fake secret values in: $hits"
	names=$(cd "$docdir" && find . \( -name .env -o -name .aws -o -name id_ed25519 \
		-o -name '*.pem' -o -name credentials -o -name .env.production \) -print)
	[ -z "$names" ] && ok "no secret's file name under share/doc/jailfs" ||
		bad "secret files installed: $names"
	[ -s "$docdir/LICENSE" ] && grep -q 'MIT License' "$docdir/LICENSE" &&
		ok "LICENSE installed in share/doc/jailfs" || bad "no LICENSE in $docdir"
else
	bad "no $docdir"
fi

# ---------------------------------------------------------------- Documentation=
unit=$(find "$dest" -name 'jailfs@.service' | head -n1)
if [ -z "$unit" ]; then
	bad "jailfs@.service is not installed"
else
	docs=$(sed -n 's/^Documentation=//p' "$unit")
	[ -n "$docs" ] || bad "jailfs@.service has no Documentation="
	for d in $docs; do
		case $d in
		man:*\(*\))
			n=${d#man:}
			n=${n%%(*}
			s=${d##*(}
			s=${s%)}
			MANPATH=$mandir man -w "$s" "$n" >/dev/null 2>&1 &&
				ok "Documentation=$d is installed" || bad "Documentation=$d: no such page"
			;;
		file://*)
			[ -e "$dest${d#file://}" ] && ok "Documentation=$d is installed" ||
				bad "Documentation=$d: not installed"
			;;
		*) bad "Documentation=$d: neither man: nor file:, cannot be checked offline" ;;
		esac
	done
fi

# ---------------------------------------------------------------- completion
bashdir=$(pkg-config --define-variable=datadir="$prefix/share" --variable=completionsdir \
	bash-completion 2>/dev/null)
[ -n "$bashdir" ] || bashdir=$prefix/share/bash-completion/completions
for p in jailfs jailrun; do
	f=$dest$bashdir/$p
	if [ -s "$f" ] && bash -c '. "$1" && complete -p "$2" | grep -q -- "-F _$2 $2\$"' _ "$f" "$p"; then
		ok "bash completion for $p installed in $bashdir, complete -F _$p"
	else
		bad "no bash completion for $p in $dest$bashdir"
	fi
	f=$dest$prefix/share/zsh/site-functions/_$p
	[ -s "$f" ] && head -n1 "$f" | grep -qx "#compdef $p" &&
		ok "zsh completion _$p installed in share/zsh/site-functions" ||
		bad "no zsh completion $f"
done

tap_done
