# Helpers shared by tests/kernels/run.sh and dkms.sh (sourced after
# tests/vm/lib.sh, which brings tests/lib/host.sh, with $top and $out set).

# The installed Debian 6.1 kernel (what the VM suites boot): no fetch.
env_of() {	# kernel -> sets KVER KDIR IMAGE MODDIR CC
	if [ "$1" = 6.1 ]; then
		KVER=$(KVER= find_kver 2>/dev/null) || return 1
		KDIR=/lib/modules/$KVER/build IMAGE=/boot/vmlinuz-$KVER
		MODDIR=/lib/modules/$KVER CC=gcc
		[ -d "$KDIR" ] && [ -f "$IMAGE" ]
	else
		# shellcheck disable=SC1090
		. "$out/$1/env"
	fi
}

# --- boot: the harness's initramfs for this kernel plus our guest files
# appended as a second cpio archive (the kernel unpacks them in turn), so
# the shared harness needs no change.
# usage: boot KERNEL SUITE-FILE TIMEOUT KO [EXTRA-ROOT]
# env: BOOT_PSI (psi= of the boot, default 0), BOOT_CASES (only these
# cases of the suite, comma-separated)
boot() {
	local k=$1 sfile=$2 limit=$3 ko=$4 extra=${5:-} s psi=${BOOT_PSI:-0}
	local only=${BOOT_CASES:-} initrd res logf
	s=$(basename "$sfile" .sh)
	s=${s#suite-}
	initrd=$PSI_VM_BUILD/initramfs-$k.cpio
	logf=$out/logs/boot-$k-$s.log res=$out/logs/boot-$k-$s.results
	[ "$psi" = 0 ] || logf=$out/logs/boot-$k-$s-psi$psi.log res=$out/logs/boot-$k-$s-psi$psi.results
	rm -f "$logf" "$res"
	local stage
	stage=$(mktemp -d "${TMPDIR:-/tmp}/psi-kernels.XXXXXX")
	# mktemp makes 0700, and the second archive's "." would set the guest's
	# / to that: every non-root user locked out of everything
	chmod 755 "$stage"
	mkdir -p "$stage/tests"
	cp "$sfile" "$stage/tests/"
	[ -z "$extra" ] || cp -a "$extra"/. "$stage/"
	if ! PSI_VM_KERNEL=$IMAGE PSI_VM_MODDIR=$MODDIR \
		"$top/tests/vm/mkinitramfs.sh" "$KVER" "$initrd" $ko 2>>"$out/logs/initramfs-$k.log"; then
		fail "$k/boot" "initramfs build failed (log: $out/logs/initramfs-$k.log)"
		rm -rf "$stage"
		return 1
	fi
	(cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) >> "$initrd"
	rm -rf "$stage"
	# the KASAN/lockdep kernel as reliability.sh --debug-vm runs it: time
	# limits x4 (every case runs several times slower: the limits are
	# there to catch a hang, not to time the case), and for the full suite
	# 1 GiB (KASAN's shadow memory leaves the memory case's hog too little
	# room at 512 MiB)
	local xa= mem=${PSI_VM_MEM:-}
	if [ "$k" = debug ]; then
		xa=" psitest.limitx=4"
		[ "$s" = smoke ] || mem=${PSI_VM_MEM:-1G}
	fi
	# One host thread for both vCPUs on every kernel here, as on
	# PREEMPT_RT: QEMU's multi-threaded TCG can run a stale translation of
	# the int3 that text_poke_bp() puts in a patch site while the load
	# flips the tracepoints' static keys, an Oops on 6.12 and 6.12-rt
	# (docs/reliability.md, "The TCG int3 hang"). PSI_MOD_ACCEL overrides.
	PSI_VM_KERNEL=$IMAGE
	PSI_MOD_ACCEL=${PSI_MOD_ACCEL:-tcg,thread=single} \
		PSI_VM_MEM=$mem qemu_cmd "$KVER" "$initrd" "$(make_disk)" "$psi" "psitest.suite=$s$xa${only:+ psitest.cases=$only}" "$res"
	unset PSI_VM_KERNEL
	log "$k: booting suite $s (${QEMU_ARGV[2]}, timeout ${limit}s), log $logf"
	run_qemu "$k" "$limit" "$logf"
	case_lines "$res" "$logf" "$res.cases"
	# shellcheck disable=SC2046 # one word per case
	collect "$k/$s/" "$res.cases" "$logf" "$limit" $(suite_cases "$sfile" "$only")
}
