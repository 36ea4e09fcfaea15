#!/bin/bash
# The whole test suite behind `make check`: static checks, user-space unit
# tests, then the VM tests in QEMU. Every suite prints one `PASS name` or
# `FAIL name: why` line per case; this script counts them all and ends with
# the summary line `N passed, N failed`. Exit status: 0 only if all passed.
#
# Usage: tests/check.sh KDIR [suite...]
#   suites: lint unit vm compare reliability kernels system bench
#   default: the ones CI runs (DEFAULT_SUITES below); tests/README.md says
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

run_suite() {	# name command...
	local name=$1
	shift
	echo "== $name: $*" | tee -a "$log"
	"$@" 2>&1 | tee -a "$log"
	local rc=${PIPESTATUS[0]}
	# A suite that dies without reporting a failure still fails.
	if [ "$rc" != 0 ] && ! grep -q "^FAIL " <(sed -n "/^== $name:/,\$p" "$log"); then
		echo "FAIL $name: exited $rc without a FAIL line" | tee -a "$log"
	fi
}

# Downloads first, in the background while the early lanes run: the
# kernels lane's Debian kernels and the system lane's image are fetched
# from the archive (network and unpacking, a few minutes, little CPU).
# Each lane fetches again whatever this did not (and reports a failure
# there); it waits for this to end before it starts.
prefetch=
case " ${suites[*]} " in *" kernels "*|*" system "*)
	( case " ${suites[*]} " in *" kernels "*) tests/kernels/fetch.sh ;; esac
	  case " ${suites[*]} " in *" system "*) tests/system/image.sh ;; esac
	) >build/prefetch.log 2>&1 </dev/null &
	prefetch=$!
	;;
esac
prefetch_wait() {
	[ -n "$prefetch" ] || return 0
	wait "$prefetch"
	prefetch=
}

for s in "${suites[@]}"; do
	case $s in kernels|system) prefetch_wait ;; esac
	case $s in
	lint) run_suite lint tests/lint.sh "$kdir" ;;
	unit) run_suite unit make -s -C tests/unit check ;;
	vm) run_suite vm tests/vm/run.sh ;;
	# the short variants of the lanes behind make compare / check-debug /
	# check-kernels / bench
	compare) run_suite compare tests/vm/compare.sh --short ;;
	reliability) run_suite reliability tests/vm/reliability.sh --short ;;
	kernels) run_suite kernels tests/kernels/run.sh --smoke ;;
	system) run_suite system tests/system/run.sh ;;
	bench) run_suite bench bench/run.sh --smoke ;;
	irqcost) run_suite irqcost bench/irq.sh ;;
	*) echo "FAIL $s: unknown suite" | tee -a "$log" ;;
	esac
done

prefetch_wait
pass=$(grep -c '^PASS ' "$log")
fail=$(grep -c '^FAIL ' "$log")
echo
echo "check: $pass passed, $fail failed (log: $log)"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
