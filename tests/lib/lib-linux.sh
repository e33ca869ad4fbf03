# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# The Linux source tree of Debian's linux-source-6.1, extracted once and
# cached; source it, do not run it.

# linux_tree DIR: make DIR (…/linux-source-6.1) hold the extracted tree,
# installing the package when root and it is missing. Extracts beside the
# target and renames, so a concurrent reader (bench/) never sees half a
# tree; flock keeps two extractions from racing. Prints the reason and
# returns 1 on failure.
linux_tree() {
	local linux=$1 tarball=/usr/src/linux-source-6.1.tar.xz parent tmpx
	[ -f "$linux/Makefile" ] && return 0
	if [ ! -f "$tarball" ]; then
		[ "$(id -u)" -eq 0 ] || { echo "$tarball missing; apt-get install linux-source-6.1"; return 1; }
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			linux-source-6.1 xz-utils >/dev/null || { echo "cannot install linux-source-6.1"; return 1; }
	fi
	parent=$(dirname "$linux")
	mkdir -p "$parent"
	(
		flock 9
		if [ ! -f "$linux/Makefile" ]; then
			tmpx=$(mktemp -d "$parent/.extract.XXXXXX")
			tar -C "$tmpx" -xJf "$tarball" && mv "$tmpx/$(basename "$linux")" "$linux"
			rm -rf "$tmpx"
		fi
	) 9>"$parent/.extract.lock"
	[ -f "$linux/Makefile" ] || { echo "could not extract $tarball to $parent"; return 1; }
}
