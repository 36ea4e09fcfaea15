#!/bin/bash
# psi_mod's irq pressure side by side with the kernel's own: the guest
# suite "irq" (tests/vm/guest/suite-irq.sh) on a kernel built with
# CONFIG_IRQ_TIME_ACCOUNTING=y and CONFIG_PSI=y, booted psi=1, the module
# loaded beside it (proc_dir=psi_mod irq=1).
#
# usage: tests/vm/irq-compare.sh [--kernels DIR] [run.sh options, e.g. --cases a,b]
#   --kernels DIR  where linux-image-*-psimod-irq_*.deb and its headers are
#                  (default: build/kernels-irq, which tests/kernels/build-irq.sh
#                  fills; `make check` does not run this: that kernel is
#                  built, not downloaded)
# Output: the PASS/FAIL lines of tests/vm/run.sh, "N passed, N failed" last.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
kdir=$repo/build/kernels-irq
if [ "${1:-}" = --kernels ]; then
	kdir=$2
	shift 2
fi
. "$here/lib.sh"

kver=$(ls "$kdir" 2>/dev/null | sed -n 's/^linux-image-\(.*-psimod-irq\)_.*\.deb$/\1/p' | sort -V | tail -1)
[ -n "$kver" ] || die "no linux-image-*-psimod-irq deb in $kdir (tests/kernels/build-irq.sh makes one)"
root=$PSI_VM_BUILD/irqroot
unpack_kernel "$kdir" "$kver" "$root"
grep -q '^CONFIG_IRQ_TIME_ACCOUNTING=y' "$root/boot/config-$kver" || die "$kver is not built with CONFIG_IRQ_TIME_ACCOUNTING"
ko=$(build_copy "$root/usr/src/linux-headers-$kver" "$kver") || die "module build against $kver failed"
export KVER=$kver PSI_VM_KERNEL=$root/boot/vmlinuz-$kver PSI_VM_MODDIR=$root/lib/modules/$kver
export PSI_MOD_KO=$ko
# The kernel times interrupts only while it trusts the TSC: TCG's virtual
# CPU has no constant_tsc, so on two CPUs the kernel marks it unstable at
# boot and turns its interrupt time accounting off (mark_tsc_unstable():
# disable_sched_clock_irqtime()), and its irq pressure stays 0. QEMU's TSC
# is one clock for all vCPUs: tell the kernel so.
export PSI_VM_APPEND="${PSI_VM_APPEND:-} tsc=reliable"
exec "$here/run.sh" --suite irq "$@"
