#!/bin/bash
# The whole test suite behind `make check`: static checks, user-space unit
# tests, then the VM tests in QEMU. Every suite prints one `PASS name` or
# `FAIL name: why` line per case; this script counts them all and ends with
# the summary line `N passed, N failed`. Exit status: 0 only if all passed.
#
# Usage: tests/check.sh KDIR [suite...]
#   suites: lint unit vm compare reliability kernels system bench
#   default: the ones CI runs (DEFAULT_SUITES below), kernels and system
#   beside the others (below); tests/README.md says
#   what each proves, how long it takes and what its full variant is.
set -uo pipefail
DEFAULT_SUITES="lint unit vm compare reliability kernels system bench irqcost"
kdir=$1
shift
suites=("$@")
# shellcheck disable=SC2206
[ ${#suites[@]} -gt 0 ] || suites=($DEFAULT_SUITES)
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
mkdir -p build
log=build/check.log
: >"$log"

# run_suite NAME OUT command...: run a lane, its output into OUT (and on
# the terminal if OUT is the main log)
run_suite() {
	local name=$1 out=$2 rc
	shift 2
	if [ "$out" = "$log" ]; then
		echo "== $name: $*" | tee -a "$out"
		"$@" 2>&1 | tee -a "$out"
		rc=${PIPESTATUS[0]}
	else
		echo "== $name: $*" >"$out"
		"$@" >>"$out" 2>&1 </dev/null
		rc=$?
	fi
	# A suite that dies without reporting a failure still fails.
	if [ "$rc" != 0 ] && ! grep -q "^FAIL " <(sed -n "/^== $name:/,\$p" "$out"); then
		say "$out" "FAIL $name: exited $rc without a FAIL line"
	fi
}
say() {	# OUT LINE: a line into OUT, and on the terminal if OUT is the main log
	echo "$2" >>"$1"
	[ "$1" != "$log" ] || echo "$2"
}

lane() {	# NAME OUT: one lane by name
	local out=$2
	case $1 in
	lint) run_suite lint "$out" tests/lint.sh "$kdir" ;;
	unit) run_suite unit "$out" make -s -C tests/unit check ;;
	vm) run_suite vm "$out" tests/vm/run.sh ;;
	# the short variants of the lanes behind make compare / check-debug /
	# check-kernels / bench
	compare) run_suite compare "$out" tests/vm/compare.sh --short ;;
	reliability) run_suite reliability "$out" tests/vm/reliability.sh --short ;;
	kernels) run_suite kernels "$out" tests/kernels/run.sh --smoke ;;
	system) run_suite system "$out" tests/system/run.sh ;;
	bench) run_suite bench "$out" bench/run.sh --smoke ;;
	irqcost) run_suite irqcost "$out" bench/irq.sh ;;
	*) say "$out" "FAIL $1: unknown suite" ;;
	esac
}

# Downloads: the kernels lane's Debian kernels and the system lane's image
# from the archive (network and unpacking, a few minutes, little CPU).
# Each lane fetches again whatever this did not (and reports a failure
# there).
prefetch() {
	case " ${suites[*]} " in *" kernels "*) tests/kernels/fetch.sh ;; esac
	case " ${suites[*]} " in *" system "*) tests/system/image.sh ;; esac
} >build/prefetch.log 2>&1 </dev/null

# Two streams on a machine with two CPUs or more (PSI_CHECK_PARALLEL=0: one,
# in the order given). The kernels and system lanes, which start with
# downloads and spend most of their time in host builds and in long guests
# that emulate both vCPUs on one host thread, run one after the other in
# the background, after the downloads; every other lane runs in the
# foreground, in order, each guest with a host CPU of its own. The
# background lanes' output is in build/check-<lane>.log while they run and
# is added to this log, in full, when the foreground is done. With one
# stream the downloads run in the background while the first lanes run.
bg_lanes=()
fg_lanes=()
for s in "${suites[@]}"; do
	case $s in
	kernels|system)
		if [ "${PSI_CHECK_PARALLEL:-1}" != 0 ] && [ "$(nproc)" -ge 2 ]; then
			bg_lanes+=("$s")
			continue
		fi ;;
	esac
	fg_lanes+=("$s")
done
bg='' prefetch=''
if [ ${#bg_lanes[@]} -gt 0 ]; then
	echo "== in the background: ${bg_lanes[*]} (logs: build/check-<lane>.log)" | tee -a "$log"
	(
		prefetch
		for s in "${bg_lanes[@]}"; do
			t=$SECONDS
			lane "$s" "build/check-$s.log"
			echo "== $s (background) done in $((SECONDS - t)) s: $(grep -c '^PASS ' "build/check-$s.log") passed, $(grep -c '^FAIL ' "build/check-$s.log") failed"
		done
	) &
	bg=$!
else
	case " ${suites[*]} " in *" kernels "*|*" system "*)
		prefetch &
		prefetch=$!
		;;
	esac
fi
for s in "${fg_lanes[@]}"; do
	case $s in kernels|system) [ -z "$prefetch" ] || wait "$prefetch"; prefetch= ;; esac
	lane "$s" "$log"
done
[ -z "$prefetch" ] || wait "$prefetch"
if [ -n "$bg" ]; then
	wait "$bg"
	for s in "${bg_lanes[@]}"; do cat "build/check-$s.log"; done | tee -a "$log"
fi

pass=$(grep -c '^PASS ' "$log")
fail=$(grep -c '^FAIL ' "$log")
echo
echo "check: $pass passed, $fail failed (log: $log)"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
