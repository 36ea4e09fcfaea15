# Suite "irq": psi_mod's irq pressure side by side with the kernel's, on a
# kernel built with CONFIG_IRQ_TIME_ACCOUNTING (tests/vm/irq-compare.sh
# boots it psi=1). Under interrupt-heavy loads made in the guest, each
# pinned so that the interrupts land on running tasks, the growth of the
# two irq full totals over the same window, psi_mod's interrupt intervals
# and what the difference comes to per interval.
# The host reads the case list from the CASES= line below.
CASES="sbs-irq-load sbs-irq-idle sbs-irq-timer sbs-irq-dio sbs-irq-net sbs-irq-mix sbs-irq-trig dmesg"
. /tests/lib.sh
. /tests/cases.sh
K=/proc/pressure
M=/proc/psi_mod
PSI_DIR=$M

# psi_mod's intervals timed, all CPUs: "device vector soft"
intervals() {
	awk '$2 ~ /^irq_us=/ { for (i = 4; i <= 6; i++) { split($i, a, "="); n[i] += a[2] } }
		END { print n[4] + 0, n[5] + 0, n[6] + 0 }' /sys/kernel/debug/psi_mod/state
}
# the kernel's own interrupt time, all CPUs, from /proc/stat (USER_HZ ticks)
stat_irq() { awk '$1 == "cpu" { print $7 + $8 }' /proc/stat; }

case_sbs_irq_load() {
	local r
	expect "$K/irq missing: not the CONFIG_IRQ_TIME_ACCOUNTING kernel booted psi=1?" [ -f $K/irq ]
	r=$(mod_load proc_dir=psi_mod irq=1 percpu=1)
	expect "insmod proc_dir=psi_mod irq=1 percpu=1: $r" [ "$r" = ok ]
	r=$( (cat $K/irq; cat $M/irq) | grep -Ev "$PSI_RE|^some ")
	expect "irq files not one full line each in the kernel's format: '$r'" eval '[ -z "$r" ] && [ $(wc -l < $K/irq) = 1 ] && [ $(wc -l < $M/irq) = 1 ]'
	r=$(kit write $K/irq "some 50000 1000000")
	expect "some trigger on the kernel's irq: '$r', want EINVAL" [ "${r%% *}" = EINVAL ]
	r=$(kit write $M/irq "some 50000 1000000")
	expect "some trigger on psi_mod's irq: '$r', want EINVAL" [ "${r%% *}" = EINVAL ]
	note "kernel: $(cat $K/irq) | psi_mod: $(cat $M/irq)"
}

# irq_window SECONDS WORKLOAD...: the workload in the background, both
# totals over SECONDS, then wait for it; the verdict against the accuracy
# target (2% + 10 ms per 10 s), the difference per interrupt interval
irq_window() {
	local secs=$1 dk dm wall n0 n1 s0 s1 v per nd nv ns; shift
	"$@" > $C/load 2>&1 &
	sleep 1
	n0=$(intervals) s0=$(stat_irq)
	snap $C/a $K/irq $M/irq $M/percpu/irq
	sleep $secs
	snap $C/b $K/irq $M/irq $M/percpu/irq
	n1=$(intervals) s1=$(stat_irq)
	wait
	wall=$(($(snap_t $C/b) - $(snap_t $C/a)))
	dk=$(snap_delta $C/a $C/b $K/irq full) dm=$(snap_delta $C/a $C/b $M/irq full)
	v=$(total_verdict "$dk" "$dm" "$wall")
	set -- $n0 $n1
	nd=$(($4 - $1)) nv=$(($5 - $2)) ns=$(($6 - $3))
	per=$(awk -v k="$dk" -v m="$dm" -v n=$((nd + nv + ns)) 'BEGIN { if (n > 0) printf "%.2f", (k - m) / n; else print "n/a" }')
	IRQ_DK=$dk IRQ_DM=$dm IRQ_VERDICT=${v%% *}
	note "irq full kernel +${dk}us psi_mod +${dm}us ($(awk -v k="$dk" -v m="$dm" 'BEGIN { if (k > 0) printf "%+.1f%%", 100 * (m - k) / k; else print "n/a" }'), target +-${v#* }us: ${v%% *}) in ${wall}us; psi_mod intervals device $nd vector $nv soft $ns, kernel - psi_mod per interval ${per}us; /proc/stat irq+softirq +$((s1 - s0)) ticks; load: $(tr '\n' ' ' < $C/load)"
}

irq_assert() {
	expect "$1: irq full kernel +${IRQ_DK}us psi_mod +${IRQ_DM}us, outside the target" [ "$IRQ_VERDICT" = ok ]
}

case_sbs_irq_idle() {
	irq_window 10 sleep 11
	expect "idle: irq full kernel +${IRQ_DK}us psi_mod +${IRQ_DM}us, outside the target" [ "$IRQ_VERDICT" = ok ]
}

# a 50 us interval timer on a task spinning on cpu1: a local timer
# interrupt (hrtimer, signal) every 50 us lands on it
case_sbs_irq_timer() {
	irq_window 10 taskset -c 1 irqload timer 12 50
	expect "timer storm: the kernel's irq full grew ${IRQ_DK}us, want >= 1 s" ige "$IRQ_DK" 1000000
	irq_assert timer
}

# O_DIRECT 4 KiB reads of the virtio disk, spinners on both CPUs so the
# completions interrupt running tasks
case_sbs_irq_dio() {
	bg taskset -c 0 spin 13; bg taskset -c 1 spin 13
	irq_window 10 dio read $DISK 12
	expect "dio: the kernel's irq full grew ${IRQ_DK}us, want >= 100 ms" ige "$IRQ_DK" 100000
	irq_assert dio
}

# loopback UDP from a sender on cpu1: the receive softirq runs in it
case_sbs_irq_net() {
	irq_window 10 taskset -c 1 irqload net 12
	expect "net: the kernel's irq full grew ${IRQ_DK}us, want >= 1 s" ige "$IRQ_DK" 1000000
	irq_assert net
}

mix() {
	taskset -c 0 irqload timer 12 100 & taskset -c 1 irqload net 12 & dio read $DISK 12 &
	wait
}
case_sbs_irq_mix() {
	irq_window 10 mix
	expect "mix: the kernel's irq full grew ${IRQ_DK}us, want >= 1 s" ige "$IRQ_DK" 1000000
	irq_assert mix
}

# The same privileged trigger on both irq files under the timer storm.
case_sbs_irq_trig() {
	local r kn mn
	trig pair $K/irq $M/irq 'full 100000 1000000\0' 10 > $C/pair 2>&1 &
	taskset -c 1 irqload timer 10 50 > /dev/null
	wait
	set -- $(awk '$1 == "pair" { print $2, $3, $4, $5 }' $C/pair)
	kn=${1:-?} mn=${2:-?}
	expect "irq full 100 ms / 1 s: no result: $(tail -2 $C/pair | tr '\n' ' ')" isint "$kn"
	expect "irq full 100 ms / 1 s: kernel events $kn, want >= 5" ige "$kn" 5
	expect "irq full 100 ms / 1 s: psi_mod events $mn, want >= 5" ige "$mn" 5
	note "pair: kernel $kn events, psi_mod $mn, first at ${3:-?} / ${4:-?} us; events (ms) kernel: $(awk '$1 == "k" { printf "%d ", $2 / 1000 }' $C/pair)psi_mod: $(awk '$1 == "m" { printf "%d ", $2 / 1000 }' $C/pair)"
}

suite_begin
run_case sbs-irq-load 20 case_sbs_irq_load
run_case sbs-irq-idle 30 case_sbs_irq_idle
run_case sbs-irq-timer 30 case_sbs_irq_timer
run_case sbs-irq-dio 30 case_sbs_irq_dio
run_case sbs-irq-net 30 case_sbs_irq_net
run_case sbs-irq-mix 30 case_sbs_irq_mix
run_case sbs-irq-trig 30 case_sbs_irq_trig
run_case dmesg 20 case_dmesg
suite_end
