#!/bin/bash
# What psi_mod's interrupt probes (irq=1) cost per interrupt, in guest
# instructions: the guest suite tests/vm/guest/suite-irqcost.sh (its
# comment says how) on the installed Debian 6.1 kernel booted psi=0, one
# vCPU under -icount shift=0,sleep=off (the guest clock counts
# instructions), a 50 us interval timer on a spinner and loopback UDP
# traffic, irq=0 and irq=1 alternating, three rounds.
#
# The module is built from a copy of the sources in its own build dir
# (PSI_VM_BUILD, default build/irqcost), so this can run beside other
# lanes that build in the repo root.
#
# usage: bench/irq.sh [--save]
#   --save  also write the output to bench/results/irqcost-<UTC stamp>.txt
# Output: the PASS/FAIL lines of tests/vm/run.sh (each round's figure in the
# notes), "N passed, N failed" last.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
save=
[ "${1:-}" = --save ] && save=$repo/bench/results/irqcost-$(date -u +%Y%m%dT%H%M%SZ).txt
export PSI_VM_SMP=1 PSI_VM_QEMU_ARGS="-icount shift=0,sleep=off"
export PSI_VM_BUILD=${PSI_VM_BUILD:-$repo/build/irqcost}
. "$repo/tests/vm/lib.sh"
if [ -z "${PSI_MOD_KO:-}" ]; then
	kver=$(find_kver)
	PSI_MOD_KO=$(build_copy "$(module_dir "$kver")/build" "$kver") || die "module build against $kver failed"
	export PSI_MOD_KO
fi
if [ -n "$save" ]; then
	{
		echo "# bench/irq.sh --save, module $(git -C "$repo" describe --always --dirty 2>/dev/null), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		"$repo/tests/vm/run.sh" --suite irqcost 2>&1
	} | tee "$save"
	exit "${PIPESTATUS[0]}"
fi
exec "$repo/tests/vm/run.sh" --suite irqcost
