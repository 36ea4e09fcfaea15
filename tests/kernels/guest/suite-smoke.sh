# Suite "smoke" (tests/kernels): one boot per kernel, booted psi=0 where the
# kernel has PSI. The module loads, 4 spinners on 2 vCPUs give cpu pressure,
# O_DIRECT reads give io pressure, it unloads leaving nothing, dmesg is clean.
# tests/kernels/run.sh adds this file to the harness's initramfs.
CASES="load store spin io unload dmesg"
. /tests/lib.sh
. /tests/cases.sh
PSI_DIR=/proc/pressure

# What this kernel offers the module, recorded with the load case: the
# kprobe targets (absent: no CONFIG_PSI, or a kernel without exchange_tids)
# and the preemption model.
kernel_facts() {
	local s have=
	for s in psi_memstall_enter exchange_tids change_pid; do
		grep -q " $s\$" /proc/kallsyms && have="$have $s"
	done
	echo "kallsyms has:${have:- none of them}; $(uname -v | grep -o 'PREEMPT[_A-Z]*' | head -1)"
}

case_smoke_load() {
	case_load
	note "$(kernel_facts)"
	note "psi_mod dmesg: $(dmesg | grep psi_mod | sed 's/^\[[^]]*\] //' | head -3 | tr '\n' '|')"
}

# rmmod: the module and its files are gone, no underflow was reported.
case_unload() {
	local r m rc
	m=$(dmesg_mark)
	r=$(mod_unload); rc=$?
	expect "rmmod exit $rc: $r" [ $rc = 0 ]
	expect "/sys/module/psi_mod still there after rmmod" [ ! -d /sys/module/psi_mod ]
	expect "$PSI_DIR still there after rmmod" [ ! -e "$PSI_DIR" ]
	r=$(dmesg_since "$m" | grep -i underflow | head -1)
	expect "rmmod reported: $r" [ -z "$r" ]
	note "rmmod ok, $PSI_DIR removed"
}

suite_begin
run_case load 20 case_smoke_load
run_case store 60 case_store
run_case spin 40 case_spin
run_case io 30 case_io
run_case unload 20 case_unload
run_case dmesg 20 case_dmesg
suite_end
