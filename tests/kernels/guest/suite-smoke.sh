# Suite "smoke" (tests/kernels): one boot per kernel, booted psi=0 where the
# kernel has PSI. The module loads (its files in the running kernel's
# format), 4 spinners on 2 vCPUs give cpu pressure,
# O_DIRECT reads give io pressure, the cgroup tree (cgroups=1) follows the
# cgroup2 hierarchy with its files, their owners and triggers, it unloads leaving
# nothing, dmesg is clean.
# tests/kernels/run.sh adds this file to the harness's initramfs.
CASES="load store spin io irq cgroups cgroup-acct cgroup-files cgroup-trig cgroupfs unload dmesg"
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
	case_format
	note "$(kernel_facts)"
	note "psi_mod dmesg: $(dmesg | grep psi_mod | sed 's/^\[[^]]*\] //' | head -3 | tr '\n' '|')"
}

# irq=1: the irq file, growing under a 50 us interval timer on a spinner
# (the interrupt tracepoints this kernel has: dmesg says how many)
case_smoke_irq() {
	local f=$PSI_DIR/irq r a t0 g wall
	ensure_unloaded || { bad "cannot unload the module first"; return; }
	r=$(mod_load irq=1)
	expect "insmod irq=1: $r" [ "$r" = ok ]
	expect_irq_file $f
	t0=$(kit now) a=$(irq_total $f)
	r=$(taskset -c 1 irqload timer 4 50)
	g=$(($(irq_total $f) - a)) wall=$(($(kit now) - t0))
	expect "timer storm: irq +$g us in $wall us, want >= 1%" ige $g $((wall / 100))
	note "timer storm ($r): irq full +$g us in $wall us; $(dmesg | grep -o 'irq=1: .*' | tail -1)"
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
run_case irq 30 case_smoke_irq
# the cgroup tree (cgroups=1) on this kernel's cgroups, a shorter storm
CG_ROUNDS=50 CG_CYCLES=3
run_case cgroups 120 case_cgroup_tree
run_case cgroup-acct 60 case_cgroup_acct
run_case cgroup-files 60 case_cgroup_files
run_case cgroup-trig 90 case_cgroup_trig
run_case cgroupfs 120 case_cgroupfs
run_case unload 20 case_unload
run_case dmesg 20 case_dmesg
suite_end
