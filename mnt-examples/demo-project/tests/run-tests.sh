#!/bin/sh
# Tests for tally: known inputs, expected counts. Usage: run-tests.sh ./tally
tally=${1:-./tally}
dir=$(dirname "$0")
fail=0

check() {
	expected=$1
	shift
	got=$("$tally" "$@")
	if [ "$got" = "$expected" ]; then
		echo "ok   tally $*"
	else
		echo "FAIL tally $*: expected '$expected', got '$got'"
		fail=1
	fi
}

check "3 9 44 $dir/fixtures/three-lines.txt" "$dir/fixtures/three-lines.txt"
check "0 0 0 $dir/fixtures/empty.txt" "$dir/fixtures/empty.txt"
got=$(printf 'one two\nthree\n' | "$tally")
if [ "$got" = "2 3 14 -" ]; then echo "ok   tally < stdin"; else echo "FAIL stdin: '$got'"; fail=1; fi
"$tally" --version | grep -q '^tally [0-9]' && echo "ok   tally --version" || { echo "FAIL --version"; fail=1; }

[ "$fail" -eq 0 ] && echo "all tests passed"
exit "$fail"
