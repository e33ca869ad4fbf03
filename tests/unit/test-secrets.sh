#!/usr/bin/env bash
# test-secrets over key material made for this run only:
#   test-secrets.sh GEN_SCRIPT TEST_BINARY
# the fixtures live in a directory of the build tree, removed at exit.
set -euo pipefail
: "${JF_BUILDDIR:?JF_BUILDDIR must name the build directory}"
gen=$1 bin=$2
D=$(mktemp -d "$JF_BUILDDIR/secrets-fixtures.XXXXXX")
trap 'rm -rf "$D"' EXIT
bash "$gen" "$D"
"$bin" "$D"
