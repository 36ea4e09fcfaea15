# Suite "demo" (for `make demo`, not a test): a narrated run on a psi=0
# boot. The host prints only what lies between @@DEMO-BEGIN and @@DEMO-END.
KO=/psi_mod.ko
echo -1000 > /proc/self/oom_score_adj
say() { echo; echo "### $*"; }
run() { echo "# $*"; "$@" 2>&1; }
show() {	# the some/full lines of cpu and io, with a timestamp
	printf '[t=%3ss] cpu %s\n' "$1" "$(head -1 /proc/pressure/cpu)"
	printf '         io  %s\n' "$(head -1 /proc/pressure/io)"
	printf '         io  %s\n' "$(tail -1 /proc/pressure/io)"
}

echo "@@DEMO-BEGIN"
say "Kernel $(uname -r), booted with: $(tr ' ' '\n' < /proc/cmdline | grep '^psi=')  ($(nproc) vCPUs, QEMU TCG)"
say "The kernel's own PSI is off, so there is no /proc/pressure:"
run ls /proc/pressure
say "Load psi_mod (percpu=1 adds /proc/pressure/percpu/: each CPU's own pressure):"
run insmod $KO percpu=1 && echo "(loaded)"
run ls -l /proc/pressure
say "Idle for 4 s, then all three files:"
sleep 4
for f in cpu io memory; do echo "# cat /proc/pressure/$f"; cat /proc/pressure/$f; done
say "Workload for 12 s: 4 CPU spinners on 2 vCPUs + synchronous O_DIRECT reads of /dev/vda"
echo "(cpu some: 2 tasks always wait for a CPU, so total grows ~1 s per second and avg10 climbs"
echo " towards 100; io some grows while the reader waits for the disk; io full stays near 0"
echo " because the spinners keep the CPUs productive meanwhile)"
echo "A trigger waits beside it, as systemd-oomd or lmkd would: 'some 500000 2000000' written"
echo "to /proc/pressure/cpu, then poll(): POLLPRI once tasks waited 0.5 s for a CPU within a"
echo "2 s window, at most once per window."
trig watch /proc/pressure/cpu 'some 500000 2000000\n' 13 poll > /tmp/trig.out &
for i in 1 2 3 4; do spin 13 & done
dio read /dev/vda 13 > /tmp/dio.out &
t0=$(kit now)
show 0
for i in 1 2 3 4 5 6; do
	sleep 2
	show $((($(kit now) - t0) / 1000000))
done
wait
echo "$(cat /tmp/dio.out)"
say "The trigger's events (ms after its write):"
tr '\n' ' ' < /tmp/trig.out; echo
say "Each CPU's own cpu pressure, then the system-wide line, their mean weighted by non-idle time:"
run cat /proc/pressure/percpu/cpu
run head -1 /proc/pressure/cpu
say "Unload psi_mod: the files go away again"
run rmmod psi_mod && echo "(unloaded)"
run ls /proc/pressure
say "Kernel messages from psi_mod:"
dmesg | grep psi_mod
echo "@@DEMO-END"
