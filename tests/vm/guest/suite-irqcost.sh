# Suite "irqcost" (bench/irq.sh): what psi_mod's interrupt probes (irq=1)
# cost per interrupt, in guest instructions. The guest runs on one vCPU
# under -icount shift=0: its clock advances one nanosecond per instruction,
# so a task that spins for S seconds executes S * 1e9 instructions less
# whatever the interrupts took. A spinner under a 50 us interval timer
# gets fewer loop iterations done with irq=1 than with irq=0 (the module
# loaded either way): the difference times the instructions per iteration
# (measured with no timer) over the local timer interrupts taken is what
# the probes cost per interrupt. Likewise for loopback traffic: the
# instructions per datagram with and without the probes, per NET_RX
# softirq. Three rounds, modes alternating.
# The host reads the case list from the CASES= line below.
CASES="timer net dmesg"
. /tests/lib.sh
. /tests/cases.sh
PSI_DIR=/proc/pressure
SECS=2

set_mode() {
	ensure_unloaded || return 1
	case $1 in
	irq0) [ "$(mod_load)" = ok ] ;;
	irq1) [ "$(mod_load irq=1)" = ok ] ;;
	esac
}
loc() { awk '$1 == "LOC:" { print $2 }' /proc/interrupts; }
net_rx() { awk '$1 == "NET_RX:" { print $2 }' /proc/softirqs; }
field() { echo "$1" | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'; }

case_timer() {
	local r c round m l0 l1 t0 n cost all=""
	r=$(irqload timer $SECS 10000000)
	c=$(awk -v l=$(field "$r" loops) -v s=$SECS 'BEGIN { printf "%.3f", s * 1e9 / l }')
	note "no timer: $r, $c instructions per iteration"
	for round in 1 2 3; do
		for m in irq0 irq1; do
			set_mode $m || { bad "module not loaded as $m"; return; }
			t0=$(loc)
			r=$(irqload timer $SECS 50)
			eval "l_$m=$(field "$r" loops) n_$m=$(($(loc) - t0))"
		done
		cost=$(awk -v a=$l_irq0 -v b=$l_irq1 -v c=$c -v n=$n_irq1 'BEGIN { printf "%.0f", (a - b) * c / n }')
		all="$all $cost"
		note "round $round: loops irq=0 $l_irq0 irq=1 $l_irq1, local timer interrupts $n_irq0 / $n_irq1: $cost instructions per interrupt"
		expect "round $round: $cost instructions per timer interrupt, want 1..5000" eval "[ $cost -ge 1 ] && [ $cost -le 5000 ]"
	done
	note "instructions per local timer interrupt:$all"
	ensure_unloaded
}

case_net() {
	local r round m t0 s0 s c=0 all="" cost
	for round in 1 2 3; do
		for m in irq0 irq1; do
			set_mode $m || { bad "module not loaded as $m"; return; }
			s0=$(net_rx) t0=$(kit now)
			r=$(irqload net $SECS)
			eval "t_$m=$(($(kit now) - t0)) s_$m=$(field "$r" sent) x_$m=$(($(net_rx) - s0))"
		done
		# instructions (guest ns) per datagram, with and without; the
		# difference per NET_RX softirq
		cost=$(awk -v ta=$t_irq0 -v sa=$s_irq0 -v tb=$t_irq1 -v sb=$s_irq1 -v x=$x_irq1 \
			'BEGIN { printf "%.0f", (tb * 1000 / sb - ta * 1000 / sa) * sb / x }')
		all="$all $cost"
		note "round $round: datagrams irq=0 $s_irq0 in ${t_irq0}us, irq=1 $s_irq1 in ${t_irq1}us, NET_RX softirqs $x_irq0 / $x_irq1: $cost instructions per softirq"
		expect "round $round: $cost instructions per softirq, want 1..5000" eval "[ $cost -ge 1 ] && [ $cost -le 5000 ]"
	done
	note "instructions per NET_RX softirq:$all"
	ensure_unloaded
}

suite_begin
run_case timer 120 case_timer
run_case net 120 case_net
run_case dmesg 20 case_dmesg
suite_end
