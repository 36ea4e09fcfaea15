#!/bin/bash
# Static check of a built psi_mod.ko: nothing a probe can reach may sleep,
# allocate or print.
#
# The probes run inside the scheduler with the runqueue lock held and
# interrupts off (sched_switch, sched_wakeup, sched_migrate_task), or in
# kprobe handlers and reclaim/compaction tracepoints that may sit under
# other spinlocks. On PREEMPT_RT a spinlock_t is a sleeping rt_mutex, so
# one taken there is a bug that shows only under contention ("scheduling
# while atomic"), and a printk or an allocation there is a latency spike.
# The kernel cannot tell us this at run time on Debian's RT kernel (no
# CONFIG_DEBUG_ATOMIC_SLEEP, no lockdep), so read it off the object code:
# from every probe entry point, follow the calls and jumps within the
# module (objdump -d), and collect every function outside it that is
# called (its relocations). Each must be on the list below of functions
# that are safe with interrupts off and never sleep.
#
# usage: tests/kernels/atomic-check.sh psi_mod.ko
#        tests/kernels/atomic-check.sh --selftest
# Output: one line, "ok: <n> probe entry points reach only: <functions>",
# or "FAIL: <entry> reaches <function> ..." and exit 1. --selftest checks
# the checker: a probe that reaches mutex_lock() through a helper of its
# own must be caught, its neighbour that takes a raw spinlock must not.
set -uo pipefail
ko=${1:?usage: atomic-check.sh psi_mod.ko | --selftest}

if [ "$ko" = --selftest ]; then
	d=$(mktemp -d) || exit 1
	trap 'rm -rf "$d"' EXIT
	cat > "$d/t.c" <<'EOC'
void mutex_lock(void *m);
void _raw_spin_lock(void *m);
static void __attribute__((noinline)) helper(void *m) { mutex_lock(m); }
void psim_probe_bad(void *m) { _raw_spin_lock(m); helper(m); }
void psim_tp_good(void *m) { _raw_spin_lock(m); }
EOC
	gcc -O2 -c "$d/t.c" -o "$d/t.o" || { echo "FAIL: selftest object did not build"; exit 1; }
	out=$("$0" "$d/t.o")
	if [ "$out" = "FAIL: psim_probe_bad reaches mutex_lock (via helper);" ]; then
		echo "ok: selftest caught mutex_lock two calls down and passed the raw spinlock"
		exit 0
	fi
	echo "FAIL: selftest: got '$out'"
	exit 1
fi

# Probe entry points, by the naming convention of src/psi_probes.c:
# tracepoint probes psim_probe_* and psim_tp_*, kprobe and kretprobe
# handlers psim_kp_* and psim_krp_*; module parameter accessors
# (psim_tp_only_get/set) run in process context and are not probes.
ROOTS='^psim_(probe|tp|kp|krp)_'
NOT_ROOTS='_(get|set)(\.cold)?$'

# Safe in atomic context, on every kernel and on PREEMPT_RT: raw spinlocks,
# the scheduler clock, arming a timer or queueing a work item (irq-safe,
# raw timer base lock), per-CPU and bit helpers, and what the compiler adds
# (ftrace entry, return thunks, stack protector, fortify and BUG traps, and
# on the debug kernel KASAN's checks, the irq-state tracking of lockdep,
# and lockdep's own annotations, which the seqcount write sections and
# lockdep_assert_held() call out of line there). And the RCU lookup of a
# task by pid (idr_find() under rcu_read_lock(): no lock, no sleep), with
# the out-of-line parts of rcu_read_lock/unlock under preemptible RCU and
# PROVE_RCU.
ALLOW='^(_raw_spin_(lock|unlock|trylock)(_irqsave|_irqrestore|_irq|_nested)?|sched_clock(_cpu)?|local_clock|mod_timer|queue_delayed_work_on|queue_work_on|_find_(first|next)_bit|cpumask_next|__fentry__|__x86_return_thunk|__x86_indirect_thunk_[a-z0-9]+|__stack_chk_fail|__fortify_panic|BUG_func|__ubsan_handle_[a-z0-9_]+|__asan_[a-z0-9_]+|__kasan_check_(read|write)|trace_hardirqs_(on|off)|lock_(acquire|release|is_held_type)|find_pid_ns|pid_task|__rcu_read_(lock|unlock)|rcu_read_unlock_strict|rcu_is_watching|debug_lockdep_rcu_enabled|lockdep_rcu_suspicious|rcu_read_lock_sched_held)$'
# Not functions: data the probes read (sections, the initial pid
# namespace, lockdep's RCU map, per-CPU bases, pv_ops
# pointers, the workqueue pointers, before 6.2 current and the CPU
# number, lockdep's state that lockdep_assert_irqs_disabled() reads, and
# the compiler's local constants .LCn and strings, which lockdep's checks
# and a mutex's setup name).
DATA='^(\.[a-z.]+[0-9]*|\.rodata\.str[0-9.]+|\.LC[0-9]+|init_pid_ns|rcu_lock_map|pcpu_hot|const_pcpu_hot|current_task|cpu_number|this_cpu_off|__per_cpu_offset|pv_ops|system_wq|system_unbound_wq|nr_cpu_ids|__cpu_(possible|online)_mask|jiffies|debug_locks|lockdep_recursion|hardirqs_enabled|hardirq_context)$'

# The cgroup probes (psim_cgprobe_*, src/psi_cgroup.c) are not scheduler
# probes: cgroup_mkdir and cgroup_release fire in process context, with
# cgroup_mutex held and inside the tracing path's spinlock_t, interrupts
# off. There a spinlock_t of their own, an allocation that does not sleep
# (from kmalloc or from the groups' own slab caches, and their frees; the
# source asks GFP_ATOMIC: the object code cannot tell the flags), an
# RCU-deferred free or work item, a group's part per CPU allocated on the
# CPU's node without sleeping (GFP_ATOMIC again) and freed if another
# fails, the setup of its mutex and of its works (their timer, and on a
# lockdep kernel their lockdep maps), and the list debug checks are also
# allowed; the hierarchy's root and the CPUs' nodes are data they read.
# On PREEMPT_RT
# (rt_spin_lock, an rt_mutex's setup) none of that is allowed with
# preemption off, as tracepoint probes run: there psim_cgroups_start()
# refuses cgroups=1, so these calls never run.
CGROOTS='^psim_cgprobe_'
CGALLOW='^(kmalloc_trace(_noprof)?|kmalloc_node_trace(_noprof)?|__kmalloc(_cache)?(_node)?(_noprof)?|kfree|kmem_cache_alloc(_node)?(_trace|_noprof)?|kmem_cache_free|kmalloc_caches|kv?free_call_rcu|queue_rcu_work|__mutex_init|init_timer_key|lockdep_init_map_type|delayed_work_timer_fn|__list_(add|del_entry)_valid(_or_report)?|rt_spin_(lock|unlock)|__mutex_rt_init|rt_mutex_base_init)$'
CGDATA='cgrp_dfl_root|numa_node'

# The module's own data objects, which one of its files may share with
# another (the averaging work item the probes queue).
MODDATA=$(nm "$ko" 2>/dev/null | awk '$2 ~ /^[bBdDrR]$/ { print $3 }' | tr '\n' ' ')

# check ROOTS ALLOW DATA WHAT: one line, "ok: ..." or "FAIL: ..."
check() {
objdump -dr "$ko" 2>/dev/null | awk -v roots="$1" -v notroots="$NOT_ROOTS" \
	-v allow="$2" -v data="$3" -v what="$4" -v moddata="$MODDATA" '
BEGIN { n = split(moddata, md, " "); for (i = 1; i <= n; i++) mdata[md[i]] = 1 }
/^[0-9a-f]+ <[^>]+>:$/ {
	f = $2; gsub(/[<>:]/, "", f); funcs[f] = 1; next
}
# relocations: what a function refers to outside itself
/R_X86_64_(PLT32|PC32|32S|64)/ {
	s = $NF; sub(/[-+]0x[0-9a-f]+$/, "", s)
	if (s != f) ext[f, s] = 1
	next
}
# a direct call or jump to another function of the module (no relocation
# when the target is in the same section)
/\t(call|jmp|j[a-z]+) +[0-9a-f]+ <[^>+]+>/ {
	t = $0; sub(/.*</, "", t); sub(/>.*/, "", t)
	if (t != f) loc[f, t] = 1
}
END {
	n = 0
	for (r in funcs) {
		if (r !~ roots || r ~ notroots) continue
		n++
		# everything r reaches inside the module
		delete seen; delete todo; seen[r] = 1; todo[r] = 1; more = 1
		while (more) {
			more = 0
			for (g in todo) {
				delete todo[g]
				for (k in loc) {
					split(k, p, SUBSEP)
					if (p[1] == g && !(p[2] in seen)) { seen[p[2]] = 1; todo[p[2]] = 1; more = 1 }
				}
			}
		}
		for (g in seen) for (k in ext) {
			split(k, p, SUBSEP)
			if (p[1] != g || p[2] in funcs || p[2] in mdata || p[2] ~ data) continue
			if (p[2] ~ allow) { used[p[2]] = 1; continue }
			bad = bad sprintf(" %s reaches %s (via %s);", r, p[2], g)
		}
	}
	if (!n) { printf "FAIL: no %s entry point found (naming convention changed?)\n", what; exit 1 }
	if (bad != "") { print "FAIL:" bad; exit 1 }
	u = ""; for (s in used) u = u " " s
	printf "ok: %d %s entry points reach only:%s\n", n, what, u
}'
}

sched=$(check "$ROOTS" "$ALLOW" "$DATA" probe)
# a module with the cgroup tree (psi_cgroup.c) must have its probes found
if nm "$ko" 2>/dev/null | grep ' psim_cgroups_start$' > /dev/null; then
	cg=$(check "$CGROOTS" "${ALLOW%)\$}|${CGALLOW#^(}" "${DATA%)\$}|$CGDATA)\$" "cgroup probe")
else
	cg="ok: no cgroup probes"
fi
case "$sched" in ok:*) ;; *) echo "$sched"; exit 1 ;; esac
case "$cg" in ok:*) ;; *) echo "$cg"; exit 1 ;; esac
echo "$sched; ${cg#ok: }"
