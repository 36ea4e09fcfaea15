# Host-side helpers of the VM harness (sourced, not executed): kernel
# lookup, module and helper builds, the qemu command line; with them the
# result bookkeeping of tests/lib/host.sh (pass, fail, finish, log, die...).
# Everything the harness builds goes under $PSI_VM_BUILD (default
# <repo>/build/vm, and /build/ is gitignored).

PSI_VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PSI_REPO=$(cd "$PSI_VM_DIR/../.." && pwd)
PSI_VM_BUILD=${PSI_VM_BUILD:-$PSI_REPO/build/vm}
. "$PSI_REPO/tests/lib/host.sh"

# One harness run at a time per build dir: runs share the initramfs, disk
# image and logs, and two TCG guests on 2 cores would skew each other's
# timing anyway. The lock is released when the process exits.
lock_build_dir() {
	mkdir -p "$PSI_VM_BUILD"
	exec 9> "$PSI_VM_BUILD/.lock"
	if ! flock -n 9; then
		log "another harness run holds $PSI_VM_BUILD/.lock; waiting (up to 15 min)"
		flock -w 900 9 || die "timed out waiting for $PSI_VM_BUILD/.lock"
	fi
}

# The kernel under test: $KVER if given, else the newest installed Debian 6.1
# image. Never a hard-coded ABI number: the archive moves on.
find_kver() {
	if [ -n "${KVER:-}" ]; then
		echo "$KVER"
		return
	fi
	local img
	img=$(ls /boot/vmlinuz-6.1.*-amd64 2>/dev/null | sort -V | tail -1)
	[ -n "$img" ] || die "no /boot/vmlinuz-6.1.*-amd64 installed (run tests/deps.sh)"
	img=${img#/boot/vmlinuz-}
	echo "$img"
}

# Kernel image and module tree for $1; a KVER unpacked elsewhere (see
# docs on dpkg -x) can be pointed at with PSI_VM_KERNEL / PSI_VM_MODDIR.
kernel_image() { echo "${PSI_VM_KERNEL:-/boot/vmlinuz-$1}"; }
# CONFIG_HZ of kernel $1, from the config-<kver> beside its image (Debian
# ships it there): PSI's averaging period is 2*HZ+1 jiffies (2.004 s at
# Debian's HZ=250), which the compare suite must know to find fold times.
kernel_hz() {
	local cfg hz
	cfg=$(dirname "$(kernel_image "$1")")/config-$1
	hz=$(sed -n 's/^CONFIG_HZ=//p' "$cfg" 2>/dev/null)
	echo "${hz:-250}"
}
module_dir() { echo "${PSI_VM_MODDIR:-/lib/modules/$1}"; }

# Build psi_mod.ko from a copy of the sources in the build dir and print
# its path: other builds may run in the repo root at the same time, and two
# kbuilds of the same tree race on the same object files. CC, where given,
# overrides the compiler unpacked Debian headers name (gcc-10 for 5.10).
build_copy() {	# KDIR KVER [CC]
	local kdir=$1 kver=$2 cc=${3:-} d
	mkdir -p "$PSI_VM_BUILD"
	d=$(cd "$PSI_VM_BUILD" && pwd)/mod-$2	# kbuild M= needs an absolute path
	rm -rf "$d"
	mkdir -p "$d"
	cp -r "$PSI_REPO/Kbuild" "$PSI_REPO/dkms.conf" "$PSI_REPO/src" "$PSI_REPO/include" "$d/"
	make -C "$kdir" M="$d" ${cc:+CC="$cc"} modules >&2 || return 1
	[ "$(modinfo -F vermagic "$d/psi_mod.ko" | cut -d' ' -f1)" = "$kver" ] || return 1
	echo "$d/psi_mod.ko"
}

# A test kernel's image and headers .debs under ROOT (dpkg -x, no install),
# once: unpack_kernel DEBDIR KVER ROOT
unpack_kernel() {
	local debs=$1 kver=$2 root=$3 p
	[ -f "$root/boot/vmlinuz-$kver" ] && [ -d "$root/usr/src/linux-headers-$kver" ] && return 0
	rm -rf "$root"
	mkdir -p "$root"
	for p in image headers; do
		dpkg -x "$debs/linux-$p-${kver}_"*_amd64.deb "$root" || die "dpkg -x linux-$p-$kver failed"
	done
}

# Build psi_mod.ko for $1 with the repo's `make module` and print its path.
build_module() {
	local kver=$1 kdir
	kdir=$(module_dir "$kver")/build
	[ -d "$kdir" ] || die "no kernel build tree at $kdir (install linux-headers for $kver)"
	log "building module: make -C $PSI_REPO module KVER=$kver KDIR=$kdir"
	make -C "$PSI_REPO" module KVER="$kver" KDIR="$kdir" >&2 || return 1
	[ -f "$PSI_REPO/psi_mod.ko" ] || { echo "build produced no psi_mod.ko" >&2; return 1; }
	# A module built against other headers would fail in the guest with a
	# confusing ENOEXEC; catch it here with a clear message.
	local vm
	vm=$(modinfo -F vermagic "$PSI_REPO/psi_mod.ko")
	case "$vm" in
	"$kver "*) ;;
	*) echo "psi_mod.ko vermagic '$vm' does not match $kver" >&2; return 1 ;;
	esac
	echo "$PSI_REPO/psi_mod.ko"
}

# prepare_guest KVER: what a lane's guest boots with, in globals: ko (the
# module: $PSI_MOD_KO as it is, or a private copy of a fresh build, since
# other builds in the tree replace psi_mod.ko), initrd, disk; and
# $PSI_VM_BUILD/logs.
prepare_guest() {
	local kver=$1
	ko=${PSI_MOD_KO:-}
	if [ -z "$ko" ]; then
		ko=$(build_module "$kver") || die "module build failed"
		cp "$ko" "$PSI_VM_BUILD/psi_mod.ko"
		ko=$PSI_VM_BUILD/psi_mod.ko
	fi
	mkdir -p "$PSI_VM_BUILD/logs"
	initrd=$PSI_VM_BUILD/initramfs-$kver.cpio
	"$PSI_VM_DIR/mkinitramfs.sh" "$kver" "$initrd" "$ko"
	disk=$(make_disk)
}

# Compile the static guest helpers into $PSI_VM_BUILD/bin (never committed).
build_helpers() {
	local out=$PSI_VM_BUILD/bin src
	mkdir -p "$out"
	for src in "$PSI_VM_DIR"/helpers/*.c; do
		local b
		b=$out/$(basename "$src" .c)
		if [ ! -x "$b" ] || [ "$src" -nt "$b" ]; then
			gcc -static -O2 -Wall -Wextra -pthread -o "$b" "$src" >&2 || return 1
		fi
	done
	echo "$out"
}

# A raw disk for the O_DIRECT cases. Filled with real data (not sparse) so
# that reads hit allocated blocks on the host too.
make_disk() {
	local img=$PSI_VM_BUILD/disk.img
	if [ ! -f "$img" ] || [ "$(stat -c %s "$img")" -ne $((128 << 20)) ]; then
		mkdir -p "$PSI_VM_BUILD"
		dd if=/dev/urandom of="$img.tmp" bs=1M count=128 status=none
		mv "$img.tmp" "$img"
	fi
	echo "$img"
}

# qemu command line for kernel $1, initrd $2, disk $3, psi=$4, extra cmdline $5,
# results channel file $6 (the guest's ttyS1). Serial console (ttyS0) goes to
# stdout, which callers redirect to the log file or a terminal.
#   - TCG by default: KVM in this nested setup hangs after the decompressor.
#     PSI_MOD_ACCEL=kvm opts in.
#   - panic=-1 with -no-reboot: a panic (panic_on_warn/oops=panic) ends qemu
#     at once instead of hanging until the host timeout.
#   - cache=none: the host page cache must not absorb the guest's O_DIRECT.
#   - a second monitor on a socket beside the results file (X.monitor for
#     X.results): when a guest hangs, `info registers -a` and `x/8i` there
#     show where each vCPU is (e.g. python3 -c 'import socket,sys,time;
#     s=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1]);
#     s.send(b"info registers -a\n");time.sleep(1);print(s.recv(65536).decode())' F)
#   - loglevel=5 (not `quiet`): WARNING splats are KERN_WARNING (4) and must
#     reach the serial log; `quiet` would hide them.
#   - slab_nomerge: psi_mod's slab caches (the groups of cgroups=1) stay
#     its own, not aliases of others of their size, so destroying one with
#     objects left warns (a panic with panic_on_warn) and /proc/slabinfo
#     lists them.
#   - run_qemu (tests/lib/host.sh) watches every guest with a monitor
#     socket for the stale-translation hang below (tests/lib/int3watch.py)
#     and ends it early, naming it.
#   - One host thread for both vCPUs (tcg,thread=single) unless
#     PSI_MOD_ACCEL is set: under QEMU's multi-threaded TCG a vCPU now and
#     then keeps executing an int3 that text_poke_bp() had already replaced
#     (docs/evidence/tcg-int3-hang-20261130.txt,
#     rt-int3-oops-20261130.txt; docs/reliability.md, "The TCG int3 hang"),
#     at any static key flip: every load, unload and enable toggle.
#   - PSI_QEMU: another qemu-system-x86_64 (a path), e.g. a newer release
#     unpacked beside the system's to measure that hang.
#   - pci=noacpi on the KASAN/lockdep kernel: under TCG its ACPI
#     interpreter runs the firmware's _PRT (PCI interrupt routing) into
#     AE_AML_LOOP_TIMEOUT for each PCI device, tens of seconds each, and
#     then routes nothing (the devices are left without a GSI and work);
#     with pci=noacpi it does not run _PRT.
qemu_cmd() {
	local kver=$1 initrd=$2 disk=$3 psi=$4 extra=$5 res=$6 accel=${PSI_MOD_ACCEL:-tcg,thread=single}
	case $kver in *-psimod-debug) extra="pci=noacpi $extra" ;; esac
	# for tests/lib/int3watch.py to name a hung vCPU's site (Debian's stock
	# image ships a placeholder map: then the address)
	QEMU_SYSMAP=$(dirname "$(kernel_image "$kver")")/System.map-$kver
	# PSI_VM_SMP and PSI_VM_QEMU_ARGS (extra words, e.g. -icount): for the
	# irq probes' cost (bench/irq.sh)
	# shellcheck disable=SC2206
	QEMU_ARGV=("${PSI_QEMU:-qemu-system-x86_64}" -accel "$accel" -smp "${PSI_VM_SMP:-2}" -m "${PSI_VM_MEM:-512M}"
		${PSI_VM_QEMU_ARGS:-}
		-nographic -no-reboot
		-kernel "$(kernel_image "$kver")" -initrd "$initrd"
		-drive "file=$disk,format=raw,if=virtio,cache=${PSI_VM_DISK_CACHE:-none}"
		-serial mon:stdio -serial "file:$res"
		-monitor "unix:${res%.results}.monitor,server=on,wait=off"
		-append "console=ttyS0 psi=$psi panic_on_warn=1 oops=panic panic=-1 slab_nomerge nokaslr loglevel=${PSI_VM_LOGLEVEL:-5} psitest.hz=$(kernel_hz "$kver") $extra")
}
