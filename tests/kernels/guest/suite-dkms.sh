# Suite "dkms" (tests/kernels/dkms.sh): the initramfs holds no /psi_mod.ko,
# only the DKMS-built module at /lib/modules/KVER/updates/dkms with a
# modules.dep from depmod; `modprobe psi_mod` must find and load exactly that
# build (its srcversion is in /etc/psi-dkms-srcversion), it must work, and
# `modprobe -r` must unload it.
CASES="modprobe spin remove dmesg"
. /tests/lib.sh
. /tests/cases.sh
PSI_DIR=/proc/pressure

case_modprobe() {
	local kver want got out rc
	kver=$(uname -r)
	want=$(cat /etc/psi-dkms-srcversion)
	expect "/psi_mod.ko is in the initramfs: this test must load the DKMS build" [ ! -e /psi_mod.ko ]
	expect "no /lib/modules/$kver/updates/dkms/psi_mod.ko" [ -f /lib/modules/$kver/updates/dkms/psi_mod.ko ]
	expect "$PSI_DIR exists before modprobe (booted psi=0?)" [ ! -e "$PSI_DIR" ]
	out=$(modprobe psi_mod 2>&1); rc=$?
	expect "modprobe psi_mod exit $rc: $out" [ $rc = 0 ]
	got=$(cat /sys/module/psi_mod/srcversion 2>/dev/null)
	expect "loaded srcversion '$got', DKMS built '$want'" [ -n "$want" -a "$got" = "$want" ]
	expect "files missing after modprobe" files_exist
	note "modprobe psi_mod loaded srcversion $got from updates/dkms"
}

case_remove() {
	local out rc
	out=$(modprobe -r psi_mod 2>&1); rc=$?
	expect "modprobe -r psi_mod exit $rc: $out" [ $rc = 0 ]
	expect "/sys/module/psi_mod still there" [ ! -d /sys/module/psi_mod ]
	expect "$PSI_DIR still there after modprobe -r" [ ! -e "$PSI_DIR" ]
	note "modprobe -r ok"
}

suite_begin
run_case modprobe 20 case_modprobe
run_case spin 40 case_spin
run_case remove 20 case_remove
run_case dmesg 20 case_dmesg
suite_end
