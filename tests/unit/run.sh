#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run the unit test binaries: BIN/<test> (plain build), then BIN/san/<test>
# (ASan+UBSan build, fewer random events). Every binary prints one
# "PASS name" or "FAIL name: why" line per test; a binary that is missing
# (did not build) or exits nonzero without a FAIL line (crash, sanitizer
# report) counts as one more failure. Last line: "N passed, N failed".
# Exit status 0 only if nothing failed.
#
# Usage: run.sh BIN test...
bin=$1
shift
pass=0
fail=0
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT

# Arguments of the sanitized runs: events per seed / trials per seed.
san_args() {
	case $1 in
	test_model) echo 400000 ;;
	test_midload) echo 10 ;;
	test_probes) echo 50000 ;;
	esac
}

run() {	# name exe args...
	name=$1
	exe=$2
	shift 2
	if [ ! -x "$exe" ]; then
		echo "FAIL $name: not built (see the compiler output above)"
		fail=$((fail + 1))
		return
	fi
	"$exe" "$@" >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$(grep -c '^PASS ' "$out")
	f=$(grep -c '^FAIL ' "$out")
	pass=$((pass + p))
	fail=$((fail + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $name: exited with status $rc"
		fail=$((fail + 1))
	elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $name: reported no test"
		fail=$((fail + 1))
	fi
}

for t in "$@"; do
	run "$t" "$bin/$t"
done
for t in "$@"; do
	# shellcheck disable=SC2046 # word splitting of the arguments is wanted
	run "$t@san" "$bin/san/$t" $(san_args "$t")
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
