#!/bin/bash
# The whole test suite behind `make check`: static checks, user-space unit
# tests, then the VM tests in QEMU. Every suite prints one `PASS name` or
# `FAIL name: why` line per case; this script counts them all and ends with
# the summary line `N passed, N failed`. Exit status: 0 only if all passed.
#
# Usage: tests/check.sh KDIR [suite...]
#   suites: lint unit vm compare reliability kernels system bench
#   default: the ones CI runs (DEFAULT_SUITES below), scheduled as the
#   comment above the schedule says; tests/README.md says
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

# lane NAME[:PART] OUT: a lane by name, or one part of it
lane() {
	local out=$2
	case $1 in
	lint) run_suite lint "$out" tests/lint.sh "$kdir" ;;
	unit) run_suite unit "$out" make -s -C tests/unit check ;;
	vm) run_suite vm "$out" tests/vm/run.sh ;;
	# the vm lane without, then with only, the cases that time the guest
	# against its own clock (see the schedule)
	vm:untimed) run_suite vm "$out" tests/vm/run.sh --skip "$VM_TIMED" ;;
	vm:timed) run_suite vm-timed "$out" tests/vm/run.sh --suite psi0,psi1 --cases "$VM_TIMED,sbs-load,dmesg" --tag -timed ;;
	# the short variants of the lanes behind make compare / check-debug /
	# check-kernels / bench
	compare) run_suite compare "$out" tests/vm/compare.sh --short ;;
	reliability) run_suite reliability "$out" tests/vm/reliability.sh --short ;;
	kernels) run_suite kernels "$out" tests/kernels/run.sh --smoke ;;
	kernels:*) run_suite kernels "$out" tests/kernels/run.sh --smoke --compare "${1#kernels:}" ;;
	system) run_suite system "$out" tests/system/run.sh ;;
	bench) run_suite bench "$out" bench/run.sh --smoke ;;
	irqcost) run_suite irqcost "$out" bench/irq.sh ;;
	*) say "$out" "FAIL $1: unknown suite" ;;
	esac
}

# The schedule. On a machine with two CPUs or more (PSI_CHECK_PARALLEL=0:
# one stream, every lane in the order given), two streams first, each
# guest with a host CPU of its own: in the background, after the
# downloads, reliability (storms with generous bounds), the system lane
# (host builds and long guests) and irqcost (guest instructions, not
# times), each with a build dir of its own; every other lane in the
# foreground, in order (bench's figures are guest instructions too). Then, with nothing else running, the
# checks that hold psi_mod to the kernel's PSI in the same guest within
# microseconds per wakeup, an allowance that assumes the host does not
# stop the guest between the two clock reads: the compare lane and the
# kernels lane's 6.12 comparison; and the vm lane's cases that bound how
# late the guest's own timers and clock reads may come (VM_TIMED: a fold
# within a timer-wheel bucket of its grid point, interrupt time on an idle
# guest within 1% of the wall clock), which a host that stops the guest's
# vCPU for tens of milliseconds breaks, and psi1's sbs-mixed: an io
# sleeper among spinners, whose vCPUs never idle, so that the host
# preempts them, and a stop between the kernel's clock read and psi_mod's
# at an io wait's start or end shortens psi_mod's io some by the stop
# (docs/accuracy.md, "Under a loaded host"). The background lanes' output
# is in build/check-<lane>.log while they run and is added to this log,
# in full, when the foreground is done.
VM_TIMED=worklag,irq,sbs-mixed
fg=() bg=() quiet=()
if [ "${PSI_CHECK_PARALLEL:-1}" != 0 ] && [ "$(nproc)" -ge 2 ]; then
	for s in "${suites[@]}"; do
		case $s in
		system | reliability | irqcost) bg+=("$s") ;;
		kernels) fg+=(kernels:no) quiet+=(kernels:only) ;;
		compare) quiet+=("$s") ;;
		vm) fg+=(vm:untimed) quiet+=(vm:timed) ;;
		*) fg+=("$s") ;;
		esac
	done
fi
# nothing for the foreground (make check-system): one stream, its output
# as it comes
[ ${#fg[@]} != 0 ] || fg=("${suites[@]}") bg=() quiet=()

# Downloads, in the background from the start: the kernels lane's Debian
# kernels and, beside them, the system lane's image (network and
# unpacking, a few minutes, little CPU); each lane fetches again whatever
# this did not (and reports a failure there). The background lanes follow
# them.
fetched=build/.check-kernels-fetched
rm -f "$fetched"
(
	(
		case " ${suites[*]} " in *" kernels "*) tests/kernels/fetch.sh ;; esac >build/prefetch.log 2>&1 </dev/null
		touch "$fetched"
	) &
	case " ${suites[*]} " in *" system "*) tests/system/image.sh ;; esac >build/prefetch-image.log 2>&1 </dev/null
	wait
	for s in "${bg[@]}"; do
		t=$SECONDS
		lane "$s" "build/check-$s.log"
		echo "== $s (background) done in $((SECONDS - t)) s: $(grep -c '^PASS ' "build/check-$s.log") passed, $(grep -c '^FAIL ' "build/check-$s.log") failed"
	done
) &
bgpid=$!
[ ${#bg[@]} = 0 ] || echo "== in the background: ${bg[*]} (build/check-<lane>.log)" | tee -a "$log"
for s in "${fg[@]}"; do
	case $s in
	kernels*) while [ ! -e "$fetched" ] && kill -0 "$bgpid" 2>/dev/null; do sleep 2; done ;;
	system) wait "$bgpid" ;;
	esac
	lane "$s" "$log"
done
wait "$bgpid"
for s in "${bg[@]}"; do cat "build/check-$s.log"; done | tee -a "$log"
[ ${#quiet[@]} = 0 ] || echo "== with nothing else running: ${quiet[*]}" | tee -a "$log"
for s in "${quiet[@]}"; do lane "$s" "$log"; done

pass=$(grep -c '^PASS ' "$log")
fail=$(grep -c '^FAIL ' "$log")
echo
echo "check: $pass passed, $fail failed (log: $log)"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
