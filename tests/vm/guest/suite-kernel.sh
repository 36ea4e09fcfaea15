# Suite "kernel": no module. Boots psi=1 and runs the workload cases against
# the kernel's own /proc/pressure. It checks the harness itself (initramfs,
# helpers, disk, parsing, tolerances) against the reference implementation:
# if a case fails here, the test or its tolerance is wrong, not psi_mod.
# The host reads the case list from the CASES= line below.
CASES="format idle spin io iowrite mem hackbench thread-exec dmesg"
. /tests/lib.sh
. /tests/cases.sh
PSI_DIR=/proc/pressure
NEED_MODULE=0
suite_begin
# The boot itself leaves cpu some avg10 around 4 (decaying with a 10 s time
# constant); psi_mod starts from zero at insmod, the kernel does not. Let the
# boot's share decay first so "idle" measures idle.
sleep 10
run_case format 10 case_format
run_case idle 30 case_idle
run_case spin 40 case_spin
run_case io 30 case_io
run_case iowrite 30 case_iowrite
run_case mem 60 case_mem
run_case hackbench 120 case_hackbench
run_case thread-exec 90 case_thread_exec
run_case dmesg 20 case_dmesg
suite_end
