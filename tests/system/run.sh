#!/bin/bash
# The Debian system lane (`make check-system`): psi_mod installed the way a
# user installs it, loaded at boot, read by the programs users already run.
#
#   1. image     tests/system/image.sh: Debian 12 with systemd, udev, D-Bus
#                and the consumers (cached in build/system/base)
#   2. install   into a copy of it (chroot, as root): `apt-get install
#                ./psi-mod-dkms_<v>_all.deb` (DKMS builds for the image's
#                6.1 kernel), the package's modules-load.d example copied to
#                /etc/modules-load.d/ and its systemd-oomd.socket drop-in to
#                /etc/systemd/system/, its example program built with gcc;
#                then the kernel upgrade: the 6.12 kernel and headers from
#                bookworm-backports, for which DKMS must build psi_mod;
#                then apt-get remove, and the package installed again
#                (DKMS builds for both kernels)
#   3. boot a    Debian's 6.1 with psi=0 under QEMU (TCG, 2 vCPUs, 1 GiB),
#                node_exporter forwarded to 127.0.0.1 and scraped by a real
#                Prometheus server on the host; the guest suite
#                (guest/suite.sh, phase a)
#   4. boot c    the same 6.1 with psi=1, the kernel's own PSI: psi_mod's
#                boot-time load refused (EEXIST), the same memory load
#                heard by the same clients, systemd-oomd watching cgroups
#   5. boot d    bullseye's 5.10 installed in the same image, psi=0: the
#                kernel makes cgroup pressure files that fail every read;
#                what systemd-oomd and sd-event do with psi_mod's defaults,
#                and with cgroupfs=1, where psi_mod answers those files
#   6. boot b    the same disk with the 6.12 kernel: the module DKMS built,
#                apt-get purge under the loaded module
#
# usage: tests/system/run.sh [--phases a,c,d,b] [--keep]
#   --phases  boot only these, in this order (default a,c,d,b)
#   --keep    keep build/system/run (the disk, the logs) after a pass
# env: PSI_SYSTEM_DIR (default build/system), PSI_MOD_ACCEL (tcg; the 6.12
#      boot tcg,thread=single)
# Output: "PASS system/<check>" / "FAIL system/<check>: why", the times of
# the steps, last "N passed, N failed". Runs as root.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${PSI_SYSTEM_DIR:-$top/build/system}
export PSI_VM_BUILD=$out/vm
. "$top/tests/vm/lib.sh"
RESULT_PREFIX=system/

phases=a,c,d,b keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--phases) phases=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	-h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
	*) die "unknown option $1" ;;
	esac
done
[ "$(id -u)" = 0 ] || die "must run as root (chroot, apt-get in the image)"
results_guard setup "the lane stopped before its end"
mkdir -p "$out"
exec 7>"$out/.lock"
flock -w 900 7 || die "another tests/system/run.sh holds $out/.lock"
command -v prometheus >/dev/null && command -v mmdebstrap >/dev/null || "$top/tests/deps.sh" >&2
command -v prometheus >/dev/null || die "prometheus not installed and tests/deps.sh could not install it"

T0=$SECONDS
times=()
timed() { times+=("$1 $((SECONDS - $2))s"); }

# --- 1. the image
t=$SECONDS
had=$(cat "$out/base/.psi-system-key" 2>/dev/null)
base=$("$here/image.sh" | tail -1) || die "image build failed (log: $out/image.log)"
[ "$had" = "$(cat "$base/.psi-system-key")" ] && timed "image (cached)" $t || timed "image build" $t

# --- 2. install into a copy
t=$SECONDS
run=$out/run
rm -rf "$run"
mkdir -p "$run/logs"
root=$run/root
cp -a --reflink=auto "$base" "$root" || die "copy of $base failed"
deb=$("$top/packaging/build-deb.sh" 2>"$run/logs/deb.log" | tail -1)
[ -f "$deb" ] || die "packaging/build-deb.sh failed (log: $run/logs/deb.log)"
bin=$(build_helpers) || die "helper build failed"

# in_root CMD...: run CMD chrooted in the image, with /proc, /sys and /dev
# (mounts private to this command)
in_root() {
	unshare -m sh -c 'r=$1; shift
		for d in proc sys dev dev/pts; do mount --bind /$d "$r/$d" || exit 1; done
		exec chroot "$r" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"' sh "$root" "$@"
}
kver_of() { ls "$root/boot" | sed -n "s/^vmlinuz-\($1\)$/\1/p" | sort -V | tail -1; }
k61=$(kver_of '6\.1\..*-amd64')
[ -n "$k61" ] || die "no 6.1 kernel in the image"

cp "$deb" "$root/tmp/"
if in_root apt-get install -y -q "/tmp/$(basename "$deb")" >"$run/logs/install.log" 2>&1; then
	ko=$(ls "$root/lib/modules/$k61/updates/dkms/psi_mod.ko"* 2>/dev/null | head -1)
	if [ -n "$ko" ]; then pass install "apt-get install ./$(basename "$deb"): DKMS built ${ko#$root} ($(in_root dkms status 2>/dev/null | tr '\n' ' '))"
	else fail install "apt-get install succeeded but no psi_mod.ko for $k61 (log: $run/logs/install.log)"; fi
else
	fail install "apt-get install failed: $(tail -3 "$run/logs/install.log" | tr '\n' ' ')"
fi
# kept for the install again after the remove (below); a name
# no leftover check would take for psi_mod's
mkdir -p "$root/var/cache/psi-system"
mv "$root/tmp/$(basename "$deb")" "$root/var/cache/psi-system/package.deb"
# as the README says: load at boot with the package's example, and order
# systemd-oomd's socket after the load
ex=$root/usr/share/doc/psi-mod-dkms/examples
cp "$ex/modules-load.d/psi_mod.conf" "$root/etc/modules-load.d/" ||
	fail install "no modules-load.d example in the package"
mkdir -p "$root/etc/systemd/system/systemd-oomd.socket.d"
cp "$ex/systemd/systemd-oomd.socket.d/psi_mod.conf" "$root/etc/systemd/system/systemd-oomd.socket.d/" ||
	fail install "no systemd-oomd.socket.d example in the package"
if ! in_root gcc -O2 -Wall -o /usr/local/bin/psi_monitor /usr/share/doc/psi-mod-dkms/examples/psi_monitor.c >"$run/logs/example.log" 2>&1; then
	fail example "gcc of the package's psi_monitor.c failed: $(head -3 "$run/logs/example.log" | tr '\n' ' ')"
elif [ -s "$run/logs/example.log" ]; then
	fail example "gcc -Wall warned on the package's psi_monitor.c: $(head -3 "$run/logs/example.log" | tr '\n' ' ')"
else
	pass example "the package's psi_monitor.c builds in the image with gcc -Wall, silently"
fi
# the kernel documentation's own example program, verbatim from Debian's
# linux-source-6.1 (Documentation/accounting/psi.rst, "Userspace monitor
# usage example"): root, O_RDWR | O_NONBLOCK, "some 150000 1000000" with
# its NUL, poll() for POLLPRI until POLLERR
doc=$(tar xOf /usr/src/linux-source-6.1.tar.xz linux-source-6.1/Documentation/accounting/psi.rst 2>/dev/null |
	awk '/^Userspace monitor usage example/ { u = 1; next }
		u && /^::/ { c = 1; next }
		c && /^[A-Za-z]/ { exit }
		c { sub(/^  /, ""); print }')
mkdir -p "$root/usr/local/src"
printf '%s\n' "$doc" > "$root/usr/local/src/psi_doc_example.c"
if ! grep -q 'some 150000 1000000' "$root/usr/local/src/psi_doc_example.c"; then
	fail doc-example "no example program found in linux-source-6.1's Documentation/accounting/psi.rst"
elif ! in_root gcc -O2 -o /usr/local/bin/psi_doc_example /usr/local/src/psi_doc_example.c >"$run/logs/doc-example.log" 2>&1; then
	fail doc-example "gcc of psi.rst's example failed: $(head -3 "$run/logs/doc-example.log" | tr '\n' ' ')"
else
	pass doc-example "Documentation/accounting/psi.rst's example ($(grep -c '' "$root/usr/local/src/psi_doc_example.c") lines) builds in the image"
fi
# a real sd-event program: sd_event_add_memory_pressure() is systemd 254's
# (Debian 12 has 252); bookworm-backports' libsystemd0 and libsystemd-dev
# are unpacked beside the image's own systemd (not installed: that would
# upgrade systemd itself) and the program runs against that library
sd=/opt/libsystemd-bpo
cp "$here/sd_pressure.c" "$root/usr/local/src/"
if ! in_root sh -c "mkdir -p /tmp/sd && cd /tmp/sd && apt-get download -q libsystemd0/bookworm-backports libsystemd-dev/bookworm-backports &&
		for d in *.deb; do dpkg -x \$d $sd || exit 1; done && rm -rf /tmp/sd" >"$run/logs/sd-event.log" 2>&1; then
	fail sd-event "libsystemd from bookworm-backports: $(tail -2 "$run/logs/sd-event.log" | tr '\n' ' ')"
elif ! in_root gcc -O2 -Wall -I$sd/usr/include -o /usr/local/bin/sd_pressure /usr/local/src/sd_pressure.c \
		-L$sd/usr/lib/x86_64-linux-gnu -Wl,-rpath,$sd/usr/lib/x86_64-linux-gnu -lsystemd >>"$run/logs/sd-event.log" 2>&1; then
	fail sd-event "gcc of sd_pressure.c against libsystemd $(ls "$root$sd"/usr/lib/x86_64-linux-gnu/ | grep -m1 'libsystemd.so.0.') failed: $(tail -3 "$run/logs/sd-event.log" | tr '\n' ' ')"
else
	pass sd-event "sd_pressure.c (sd_event_add_memory_pressure) builds against bookworm-backports' $(ls "$root$sd"/usr/lib/x86_64-linux-gnu/ | grep -m1 'libsystemd.so.0.')"
fi
# the kernel upgrade: DKMS's kernel hook must build psi_mod for the new one
if in_root apt-get install -y -q -t bookworm-backports linux-image-amd64 linux-headers-amd64 >"$run/logs/upgrade.log" 2>&1; then
	k612=$(kver_of '6\.12\..*-amd64')
	ko=$(ls "$root/lib/modules/$k612/updates/dkms/psi_mod.ko"* 2>/dev/null | head -1)
	if [ -n "$k612" ] && [ -n "$ko" ]; then pass upgrade "6.12 from bookworm-backports: DKMS built ${ko#$root} on the kernel's install"
	else fail upgrade "no psi_mod.ko for ${k612:-the 6.12 kernel} after its install (log: $run/logs/upgrade.log)"; fi
else
	k612=
	fail upgrade "apt-get install -t bookworm-backports linux-image-amd64 failed: $(tail -3 "$run/logs/upgrade.log" | tr '\n' ' ')"
fi

# apt-get remove and the install after it, with both kernels in place:
# neither needs a running kernel, and here DKMS builds natively (under
# single-threaded TCG a build takes minutes); the guest keeps the README's
# purge under the loaded module (boot b)
if in_root apt-get remove -y -q psi-mod-dkms >"$run/logs/remove.log" 2>&1; then
	left=$(find "$root/lib/modules" "$root/usr/src" "$root/var/lib/dkms" -name '*psi_mod*' -o -name '*psi-mod*' 2>/dev/null | tr '\n' ' ')
	st=$(in_root dkms status 2>/dev/null)
	if [ -n "$left" ] || [ -n "$st" ]; then
		fail remove "apt-get remove left: ${left:-no file} (dkms status: ${st:-empty})"
	elif in_root apt-get install -y -q /var/cache/psi-system/package.deb >>"$run/logs/remove.log" 2>&1; then
		built=
		for k in $k61 $k612; do
			ls "$root/lib/modules/$k/updates/dkms/psi_mod.ko"* >/dev/null 2>&1 && built="$built $k"
		done
		if [ "$built" = "$(printf ' %s' $k61 $k612)" ]; then
			rm -rf "$root/var/cache/psi-system"
			pass remove "apt-get remove: no build under /lib/modules, no sources, dkms status empty; apt-get install again: DKMS built for$built"
		else
			fail remove "apt-get install after the remove: DKMS built for${built:- none} of $k61 $k612 (log: $run/logs/remove.log)"
		fi
	else
		fail remove "apt-get install after the remove failed: $(tail -3 "$run/logs/remove.log" | tr '\n' ' ')"
	fi
else
	fail remove "apt-get remove failed: $(tail -3 "$run/logs/remove.log" | tr '\n' ' ')"
fi

lib=$root/usr/local/lib/psi-system
mkdir -p "$lib"

# bullseye's 5.10 in the same image (boot d): its image package, as the
# kernels lane downloads it (tests/kernels/fetch.sh), installed with
# apt-get. Its headers need bullseye's gcc-10, which bookworm has not, so
# DKMS's kernel hook skips it (checked: it says so); psi_mod is built on the
# host against the unpacked headers, as the kernels lane builds it, and put
# in the kernel's extra/ for modprobe. That one file is the lane's own, not
# the package's: the guest's purge check leaves it out (listed in
# $lib/own-files).
k510=
case ",$phases," in
*,d,*)
	t5=$SECONDS
	kd=${PSI_KERNELS_DIR:-$top/build/kernels}/5.10
	if ! "$top/tests/kernels/fetch.sh" 5.10 >"$run/logs/fetch-5.10.log" 2>&1 ||
	   ! read -r k5 k5dir k5cc < <(. "$kd/env" && echo "$KVER $KDIR $CC"); then
		fail 5.10/install "tests/kernels/fetch.sh 5.10: $(grep -m1 FAIL "$run/logs/fetch-5.10.log")"
	else
		img=$(ls "$kd"/debs/linux-image-"$k5"-unsigned_*.deb 2>/dev/null | head -1)
		cp "$img" "$root/tmp/" 2>/dev/null
		if [ -z "$img" ] || ! in_root apt-get install -y -q --no-install-recommends "/tmp/$(basename "$img")" >"$run/logs/install-5.10.log" 2>&1; then
			fail 5.10/install "apt-get install ./linux-image-$k5-unsigned: $(tail -3 "$run/logs/install-5.10.log" 2>/dev/null | tr '\n' ' ')"
		elif ! grep -q "dkms: autoinstall for kernel $k5 was skipped since the kernel headers" "$run/logs/install-5.10.log"; then
			fail 5.10/install "DKMS's kernel hook did not say it skipped $k5 without headers: $(grep -A2 postinst.d/dkms "$run/logs/install-5.10.log" | tr '\n' ' ')"
		elif ! ko=$(PSI_VM_BUILD=$run/k510 build_copy "$k5dir" "$k5" "$k5cc" 2>"$run/logs/build-5.10.log"); then
			fail 5.10/install "psi_mod build against $k5 failed (log: $run/logs/build-5.10.log)"
		else
			install -D -m 644 "$ko" "$root/lib/modules/$k5/extra/psi_mod.ko"
			echo "/lib/modules/$k5/extra/psi_mod.ko" >"$lib/own-files"
			if in_root depmod "$k5" && [ -f "$root/boot/initrd.img-$k5" ]; then
				k510=$k5
				pass 5.10/install "bullseye's $k5 installed with apt-get beside 6.1 and 6.12 (DKMS skipped it: no headers); psi_mod built on the host for it, in /lib/modules/$k5/extra"
			else
				fail 5.10/install "depmod $k5 or its initramfs failed"
			fi
		fi
		rm -f "$root/tmp/$(basename "$img")"
	fi
	timed "5.10 install" $t5
	;;
esac

# the guest suite, its helpers, the unit that starts it
cp "$top/tests/vm/guest/lib.sh" "$here/guest/suite.sh" "$lib/"
for h in spin memhog dio trig; do cp "$bin/$h" "$root/usr/local/bin/"; done
cp "$here/guest/psi-system-test.service" "$root/etc/systemd/system/"
in_root systemctl enable -q psi-system-test.service || die "systemctl enable psi-system-test.service failed"
install -d -o 1000 -g 1000 "$root/home/user/.config" "$root/home/user/.config/htop"
install -o 1000 -g 1000 -m 644 "$here/guest/htoprc" "$root/home/user/.config/htop/htoprc"
disk=$run/disk.img
mkfs.ext4 -q -F -L root -d "$root" "$disk" 4G >"$run/logs/mkfs.log" 2>&1 || die "mkfs.ext4 -d failed (log: $run/logs/mkfs.log)"
data=$(make_disk)
timed "install + image copy + disk" $t

# --- Prometheus on the host, scraping the guest's node_exporter (every
# 10 s: under TCG, with the guest's CPUs loaded, one scrape can take seconds)
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
nport=$(free_port) pport=$(free_port)
prom=$run/prometheus
mkdir -p "$prom/data"
cat >"$prom/prometheus.yml" <<-EOF
global:
  scrape_interval: 10s
  scrape_timeout: 9s
  evaluation_interval: 10s
scrape_configs:
  - job_name: psi-system
    static_configs:
      - targets: ['127.0.0.1:$nport']
EOF
prometheus --config.file="$prom/prometheus.yml" --storage.tsdb.path="$prom/data" \
	--web.listen-address="127.0.0.1:$pport" >"$run/logs/prometheus.log" 2>&1 &
prom_pid=$!
trap 'kill $prom_pid 2>/dev/null' EXIT
for _ in $(seq 60); do curl -sf "http://127.0.0.1:$pport/-/ready" >/dev/null && break; sleep 1; done
curl -sf "http://127.0.0.1:$pport/-/ready" >/dev/null || fail prometheus "the Prometheus server did not get ready (log: $run/logs/prometheus.log)"

# promql QUERY: the values of an instant query, one per line
promql() {
	curl -sf --data-urlencode "query=$1" "http://127.0.0.1:$pport/api/v1/query" |
		python3 -c 'import json, sys
for r in json.load(sys.stdin)["data"]["result"]: print(r["value"][1])'
}
# prom_watch RES OUT: when the guest says its 90-s cpu load started, wait
# 75 s and ask Prometheus for the growth of the counter over the last
# minute, per second of the guest's own clock (node_time_seconds, read in
# the same scrapes). rate() divides by the scrape timestamps, which are
# taken before the request: a guest slow to answer one scrape under TCG
# (seconds, up to the timeout) moves its value but not its timestamp, so
# rate() is reported and not held to the bounds.
prom_watch() {
	local res=$1 o=$2 i
	for i in $(seq 900); do
		grep -aq '^@@SYNC cpu-load 90' "$res" 2>/dev/null && break
		sleep 1
	done
	grep -aq '^@@SYNC cpu-load 90' "$res" 2>/dev/null || { echo "none" >"$o"; return; }
	sleep 75
	{
		echo "guest $(promql '(max_over_time(node_pressure_cpu_waiting_seconds_total{job="psi-system"}[1m]) - min_over_time(node_pressure_cpu_waiting_seconds_total{job="psi-system"}[1m])) / (max_over_time(node_time_seconds{job="psi-system"}[1m]) - min_over_time(node_time_seconds{job="psi-system"}[1m]))' | tr '\n' ' ')"
		echo "rate $(promql 'rate(node_pressure_cpu_waiting_seconds_total{job="psi-system"}[1m])' | tr '\n' ' ')"
		echo "up $(promql 'sum_over_time(up{job="psi-system"}[1m])' | tr -d '\n') of $(promql 'count_over_time(up{job="psi-system"}[1m])' | tr -d '\n')"
		echo "series $(promql 'count({__name__=~"node_pressure_.*"})' | tr '\n' ' ')"
	} >"$o"
}

# boot PHASE KVER PSI LIMIT NAME: one boot of the disk, the guest suite's
# phase, its checks named system/NAME/<case>
boot() {
	local ph=$1 k=$2 psi=$3 limit=$4 name=$5 res log cases tag
	tag=$ph-${k%%-*}
	res=$run/logs/boot-$tag.results log=$run/logs/boot-$tag.log
	: >"$res"
	QEMU_SYSMAP=$root/boot/System.map-$k
	# 6.12 single-threaded, as the kernels lane boots it: under
	# multi-threaded TCG its unload can run QEMU's stale int3
	# (docs/reliability.md, "The TCG int3 hang")
	local accel=${PSI_MOD_ACCEL:-tcg}
	case $k in 6.12*) accel=${PSI_MOD_ACCEL:-tcg,thread=single} ;; esac
	QEMU_ARGV=("${PSI_QEMU:-qemu-system-x86_64}" -accel "$accel" -smp 2 -m 1G -nographic -no-reboot
		-kernel "$root/boot/vmlinuz-$k" -initrd "$root/boot/initrd.img-$k"
		-drive "file=$disk,format=raw,if=virtio,cache=unsafe"
		-drive "file=$data,format=raw,if=virtio,cache=none"
		-netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$nport-:9100" -device virtio-net-pci,netdev=n0
		-serial mon:stdio -serial "file:$res"
		-monitor "unix:$run/logs/boot-$tag.monitor,server=on,wait=off"
		-append "root=/dev/vda rw console=ttyS0 psi=$psi panic=-1 loglevel=5 psisys.phase=$ph")
	log "boot $ph: $k psi=$psi (console: $log)"
	local t=$SECONDS wpid=
	if [ "$ph" = a ]; then
		prom_watch "$res" "$run/prom-a.txt" &
		wpid=$!
	fi
	run_qemu "boot-$tag" "$limit" "$log"
	[ -z "$wpid" ] || wait "$wpid"
	timed "boot $ph ($k)" $t
	case_lines "$res" "$log" "$run/logs/boot-$tag.lines"
	cases=$(sed -n "s/^CASES_$(echo "$ph" | tr a-z A-Z)=\"\(.*\)\"$/\1/p" "$here/guest/suite.sh")
	# shellcheck disable=SC2086
	collect "$name/" "$run/logs/boot-$tag.lines" "$log" "$limit" -x $cases
}

for ph in ${phases//,/ }; do
	case $ph in
	a)
		boot a "$k61" 0 900 6.1
		read -r _ v _ < <(grep '^guest ' "$run/prom-a.txt" 2>/dev/null)
		read -r _ r _ < <(grep '^rate ' "$run/prom-a.txt" 2>/dev/null)
		u=$(sed -n 's/^up //p' "$run/prom-a.txt" 2>/dev/null)
		w="node_pressure_cpu_waiting_seconds_total per second of node_time_seconds over [1m] = ${v:-none}"
		if [ -z "${v:-}" ]; then
			fail prometheus "no $w from the host's Prometheus ($(tr '\n' ' ' <"$run/prom-a.txt" 2>/dev/null))"
		elif awk -v v="$v" 'BEGIN { exit !(v >= 0.85 && v <= 1.02) }'; then
			pass prometheus "$w with 4 spinners on 2 vCPUs (rate() ${r:-none}; $u scrapes up in that minute), scraped through 127.0.0.1:$nport"
		else
			fail prometheus "$w with 4 spinners on 2 vCPUs, want 0.85..1.02 (rate() ${r:-none}; $u scrapes up in that minute)"
		fi
		;;
	c) boot c "$k61" 1 600 6.1-psi1 ;;
	d)
		if [ -n "$k510" ]; then boot d "$k510" 0 600 5.10
		else fail 5.10/boot "no 5.10 kernel in the image: its install failed above"; fi
		;;
	b)
		# room for every case's own limit (single-threaded TCG: depmod
		# in the guest is slow), so that a case that times out
		# is reported as such and the ones after it still run
		if [ -n "$k612" ]; then boot b "$k612" 0 1100 6.12
		else fail 6.12/boot "no 6.12 kernel in the image: the upgrade failed above"; fi
		;;
	*) fail setup "unknown phase $ph (a, b, c, d)" ;;
	esac
done
kill $prom_pid 2>/dev/null
echo "times: ${times[*]}; total $((SECONDS - T0))s"
[ "$failed" != 0 ] || [ "$keep" = 1 ] || rm -rf "$root" "$disk"
finish
