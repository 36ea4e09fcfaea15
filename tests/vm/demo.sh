#!/bin/bash
# `make demo`: psi_mod on a psi=0 Debian kernel in QEMU, narrated.
# Installs missing packages (tests/deps.sh, only if missing), builds the module,
# boots psi=0 and shows: no /proc/pressure; insmod; the files at idle; cpu and
# io every 2 s under spinners + O_DIRECT reads; rmmod; the files gone.
# env: KVER, PSI_MOD_ACCEL=kvm (opt-in).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$PSI_REPO/tests/deps.sh" >&2
lock_build_dir
kver=$(find_kver)
log "kernel $kver"
ko=$(build_module "$kver") || die "module build failed"
initrd=$PSI_VM_BUILD/initramfs-$kver.cpio
"$PSI_VM_DIR/mkinitramfs.sh" "$kver" "$initrd" "$ko"
disk=$(make_disk)
mkdir -p "$PSI_VM_BUILD/logs"
logf=$PSI_VM_BUILD/logs/demo.log
# loglevel=3: keep boot chatter off the console; the demo prints dmesg itself
PSI_VM_LOGLEVEL=3 qemu_cmd "$kver" "$initrd" "$disk" 0 "psitest.suite=demo" "$PSI_VM_BUILD/logs/demo.results"
log "booting $kver with psi=0 under QEMU (${PSI_MOD_ACCEL:-tcg}); full console log: $logf"
rc=0
timeout --kill-after=10 110 "${QEMU_ARGV[@]}" < /dev/null 2>&1 | tee "$logf" | tr -d '\r' |
	awk '/@@DEMO-END/ { p = 0 } p { print; fflush() } /@@DEMO-BEGIN/ { p = 1 }' || rc=$?
if ! grep -aq '@@DEMO-END' "$logf"; then
	echo "demo did not finish (exit $rc); last 30 console lines:" >&2
	tr -d '\r' < "$logf" | tail -30 >&2
	exit 1
fi
