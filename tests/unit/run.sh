#!/bin/bash
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
. "$(dirname "${BASH_SOURCE[0]}")/../lib/host.sh"
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT

# Arguments of the sanitized runs: events per seed / trials per seed.
san_args() {
	case $1 in
	test_midload | test_midload_task) echo 10 ;;
	test_probes | test_probes_task) echo 50000 ;;
	esac
}

run() {	# name exe args...
	local name=$1 exe=$2 p=$passed f=$failed rc
	shift 2
	if [ ! -x "$exe" ]; then
		fail "$name" "not built (see the compiler output above)"
		return
	fi
	"$exe" "$@" >"$out" 2>&1
	rc=$?
	relay <"$out"
	if [ "$rc" -ne 0 ] && [ "$failed" = "$f" ]; then
		fail "$name" "exited with status $rc"
	elif [ "$passed" = "$p" ] && [ "$failed" = "$f" ]; then
		fail "$name" "reported no test"
	fi
}

for t in "$@"; do
	run "$t" "$bin/$t"
done
# Built plain only: the same source as a test that has a sanitized build.
PLAIN_ONLY=" test_probes_612 "
for t in "$@"; do
	case $PLAIN_ONLY in *" $t "*) continue ;; esac
	# shellcheck disable=SC2046 # word splitting of the arguments is wanted
	run "$t@san" "$bin/san/$t" $(san_args "$t")
done

finish
