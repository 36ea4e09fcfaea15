// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod: per-task and per-CPU state, driven by the scheduler probes, and
 * the aggregation of per-CPU state times into system-wide pressure.
 *
 * The kernel's PSI changes its counts inside enqueue/dequeue and the context
 * switch, under the runqueue lock. psi_mod sees the tracepoints next to those
 * places instead, and keeps the same counts:
 *
 *   sched_switch        prev leaves the CPU (blocked or preempted), next runs
 *   sched_wakeup(_new)  a blocked (or new) task becomes runnable
 *   sched_migrate_task  a queued or waking task changes CPU
 *   psi_memstall_*      kprobes: the current task enters/leaves a memory stall
 *                       (without CONFIG_PSI: reclaim/compaction tracepoints)
 *   exchange_tids       kretprobe: an exec swaps two tasks' pids
 *
 * Locking: each CPU's counts have a raw spinlock of their own. Every
 * scheduler probe already runs under the runqueue lock or pi_lock of the
 * task it handles, and the memstall probes run in the task itself, so one
 * task's word is never changed by two probes at once; the per-CPU lock
 * orders the count changes of all tasks on a CPU against each other and
 * against the aggregator's snapshot. It nests inside the runqueue lock and
 * nothing nests inside it.
 */
#include <linux/cpuhotplug.h>
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/spinlock.h>
#include <linux/threads.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <linux/mutex.h>
#include <linux/jiffies.h>

#include "psi_mod.h"

/* Sampling period of the averages: the kernel's PSI_FREQ, 2 s. */
#define PSIM_FREQ	(2 * HZ + 1)

/* Aggregator-only flag in the changed-states mask: keep the clock going. */
#define PSIM_STATE_RESCHEDULE	BIT(31)

struct psim_pcpu {
	raw_spinlock_t lock;
	struct psim_cpu_state st;
	pid_t curr;	/* the task last switched in here */
	u32 relocations;	/* tasks found here that moved unseen */
	/* offline switches to idle done by the kprobe, by the dead callback */
	u32 dead_kprobe, dead_callback;
} ____cacheline_aligned_in_smp;

static DEFINE_PER_CPU_SHARED_ALIGNED(struct psim_pcpu, psim_pcpu);
/* What the aggregator saw last of each CPU; touched by it alone. */
static DEFINE_PER_CPU(u32 [PSIM_NR_STATES], psim_times_prev);

/*
 * Per-task state: one u32 word per pid. The low 16 bits are the task word
 * of psi_mod_logic.h (counted flags, memstall depth), the high 16 bits the
 * CPU its flags are counted on. Indexed by pid rather than kept in
 * task_struct because the kernel's own psi fields are in use when its PSI
 * is on and absent when it is not built. A pid's word is zeroed by its
 * task's last switch (TASK_DEAD) and set afresh by sched_wakeup_new; a pid
 * is only reused after the pid space has wrapped.
 */
static u32 *psim_tasks;
#define PSIM_WCPU_SHIFT	16

static inline u16 psim_lo(u32 w)
{
	return (u16)w;
}

static inline unsigned int psim_wcpu(u32 w)
{
	return w >> PSIM_WCPU_SHIFT;
}

/* Store a task's new word: its flags are now counted on @cpu. */
static inline void psim_store(u32 *w, u16 lo, unsigned int cpu)
{
	WRITE_ONCE(*w, lo | (u32)cpu << PSIM_WCPU_SHIFT);
}

static struct psim_group psim_group;
static DEFINE_MUTEX(psim_avgs_lock);
static void psim_avgs_work_fn(struct work_struct *work);
static DECLARE_DEFERRABLE_WORK(psim_avgs_work, psim_avgs_work_fn);
/* The kworker that last ran the aggregation (see psim_probe_switch). */
static struct task_struct *psim_avgs_worker;
/* How often the periodic work ran: shows that it stops when idle. */
static unsigned long psim_avgs_runs;

static inline u32 *psim_word(struct task_struct *p)
{
	unsigned int pid = p->pid;

	return likely(pid < PID_MAX_LIMIT) ? &psim_tasks[pid] : NULL;
}

/*
 * Start the aggregation clock if it is stopped. It stops by itself when all
 * CPUs are idle; the next task change starts it again, as in the kernel.
 * The work is deferrable, so a pending period never wakes an idle CPU.
 */
static inline void psim_wake_clock(void)
{
	if (!delayed_work_pending(&psim_avgs_work))
		queue_delayed_work(system_wq, &psim_avgs_work, PSIM_FREQ);
}

/*
 * After a change of counts: if the CPU's state changed, end the period at
 * the CPU's clock (which the kernel's PSI reads too). Most switches change
 * no state (hackbench: one runnable task replaces another) and so read no
 * clock (see psim_mask_changes()).
 */
static inline void psim_update(struct psim_cpu_state *st, int cpu)
{
	u32 mask;

	if (psim_mask_changes(st, &mask))
		psim_set_mask(st, cpu_clock(cpu), mask);
}

/*
 * A woken task became runnable when it was enqueued, which the kernel's PSI
 * records; the tracepoint comes later, after the wakeup preemption check
 * (timed there, io some read 2-4% above the kernel's side by side under
 * TCG). Use the enqueue stamp where the scheduler keeps one, but never
 * before the start of the current period: the aggregator may have ended it
 * (and reported the old states up to then) between the enqueue and this
 * probe, and time charged before that would make those states' times run
 * backwards.
 */
static inline void psim_update_wakeup(struct psim_cpu_state *st,
				      struct task_struct *p, int cpu)
{
	u64 now, queued;
	u32 mask;

	if (!psim_mask_changes(st, &mask))
		return;
	now = cpu_clock(cpu);
	queued = psim_enqueued_at(p);
	if (queued && queued < now)
		now = max(queued, st->state_start);
	psim_set_mask(st, now, mask);
}

/*
 * A task's flags must be counted on the CPU whose event changes them. Where
 * they are counted elsewhere, a move happened that no tracepoint showed:
 * tracepoints are silent on a CPU that is not online, and on 5.10 a dying
 * CPU pushes its queued tasks away in that state (later kernels push them
 * while still online). Move the counts here first. Rare: out of line.
 * Every probe does it under the lock of the CPU it is about to change
 * (exchange_tids() may move an old leader's word under that lock).
 */
/* With @pc (@cpu's) locked and interrupts off; returns with it locked. */
static noinline void psim_relocate_locked_slow(struct psim_pcpu *pc, u32 *w,
					       unsigned int cpu)
{
	struct psim_pcpu *opc;
	unsigned int old;
	u32 v;

retry:
	v = READ_ONCE(*w);
	old = psim_wcpu(v);
	if (old == cpu || !(v & PSIM_TSK_MASK))
		return;
	opc = per_cpu_ptr(&psim_pcpu, old);
	if (old < cpu) {
		/* Two CPU locks: always the lower CPU's first. */
		raw_spin_unlock(&pc->lock);
		raw_spin_lock(&opc->lock);
		raw_spin_lock_nested(&pc->lock, SINGLE_DEPTH_NESTING);
		/* exchange_tids() may have moved the word meanwhile */
		if (READ_ONCE(*w) != v) {
			raw_spin_unlock(&opc->lock);
			raw_spin_unlock(&pc->lock);
			raw_spin_lock(&pc->lock);
			goto retry;
		}
	} else {
		raw_spin_lock_nested(&opc->lock, SINGLE_DEPTH_NESTING);
	}
	psim_cpu_counts(&opc->st, v & PSIM_TSK_MASK, 0);
	psim_update(&opc->st, old);
	raw_spin_unlock(&opc->lock);
	psim_cpu_counts(&pc->st, 0, v & PSIM_TSK_MASK);
	psim_update(&pc->st, cpu);
	pc->relocations++;
	psim_store(w, psim_lo(v), cpu);
}

static inline void psim_relocate_locked(struct psim_pcpu *pc, u32 *w,
					unsigned int cpu)
{
	u32 v = READ_ONCE(*w);

	if (unlikely(psim_wcpu(v) != cpu && (v & PSIM_TSK_MASK)))
		psim_relocate_locked_slow(pc, w, cpu);
}

static void psim_probe_switch(PSIM_SWITCH_PROTO)
{
	struct psim_pcpu *pc = this_cpu_ptr(&psim_pcpu);
	unsigned int clear, set, changed = 0, cpu = smp_processor_id();
	bool wake_clock = true;
	u32 *wp, *wn;
	u8 oncpu;
	u16 nw = 0;

	raw_spin_lock(&pc->lock);
	/*
	 * The pids only under the lock: an exec from a non-leader thread
	 * swaps its pid with the (zombie) leader's, and psim_krp_exchange_ret()
	 * swaps their words under the lock of the leader's CPU, this one if
	 * the leader is switching out here. A pid read before the lock and a
	 * word used after the swap cleared the exec'ing thread's word and left
	 * the leader's RUNNING counted for good (the debug kernel's psi1
	 * thread-exec case: running=1 on an idle CPU).
	 */
	wp = prev->pid ? psim_word(prev) : NULL;
	wn = next->pid ? psim_word(next) : NULL;
	oncpu = next->pid != 0;

	if (wp) {
		unsigned int state = psim_task_state(prev);
		/*
		 * prev blocked if it was not preempted and its state is not
		 * TASK_RUNNING now: a pending signal resets it to running
		 * before the switch, and such a task stays queued.
		 */
		bool sleep = !preempt && state != TASK_RUNNING;

		psim_relocate_locked(pc, wp, cpu);
		psim_store(wp, psim_task_switch_out(psim_lo(*wp), sleep,
						    sleep && prev->in_iowait,
						    sleep && state == TASK_DEAD,
						    &clear, &set), cpu);
		psim_cpu_counts(&pc->st, clear, set);
		changed |= clear | set;
		/*
		 * The aggregation worker going to sleep must not restart
		 * the clock it just let stop (the kernel's ping-pong rule).
		 */
		if (sleep && prev == READ_ONCE(psim_avgs_worker))
			wake_clock = false;
	}

	pc->curr = next->pid;
	if (wn) {
		psim_relocate_locked(pc, wn, cpu);
		nw = psim_task_wakeup(psim_lo(*wn), &clear, &set);
		psim_store(wn, nw, cpu);
		psim_cpu_counts(&pc->st, clear, set);
		changed |= clear | set;
	}

	/*
	 * A switch between two runnable tasks changes no state (the common
	 * preemption): then neither the clock nor the state times need
	 * touching.
	 */
	if (changed || pc->st.oncpu != oncpu ||
	    pc->st.curr_memstall != !!(nw & PSIM_TSK_MEMSTALL)) {
		pc->st.oncpu = oncpu;
		pc->st.curr_memstall = !!(nw & PSIM_TSK_MEMSTALL);
		psim_update(&pc->st, cpu);
	} else {
		wake_clock = false;
	}
	raw_spin_unlock(&pc->lock);

	if (wake_clock)
		psim_wake_clock();
}

static void psim_probe_wakeup(void *data, struct task_struct *p)
{
	unsigned int clear, set;
	struct psim_pcpu *pc;
	unsigned int cpu;
	u32 *w;

	w = psim_word(p);
	/*
	 * A task woken before it left its runqueue is still counted as
	 * runnable: nothing to do. RUNNING is only ever cleared by the task's
	 * own switch-out, which cannot run concurrently with its wakeup.
	 */
	if (!p->pid || !w || (READ_ONCE(*w) & PSIM_TSK_RUNNING))
		return;

	cpu = task_cpu(p);
	pc = per_cpu_ptr(&psim_pcpu, cpu);
	/*
	 * Both wakeup tracepoints fire under the task's runqueue lock, so
	 * interrupts are off already: saving and restoring them is dead work.
	 * (No pid race here as in the switch probe: the two tasks of an
	 * exec's pid swap are running, and a running task returned above.)
	 */
	lockdep_assert_irqs_disabled();
	raw_spin_lock(&pc->lock);
	psim_relocate_locked(pc, w, cpu);
	psim_store(w, psim_task_wakeup(psim_lo(*w), &clear, &set), cpu);
	psim_cpu_counts(&pc->st, clear, set);
	psim_update_wakeup(&pc->st, p, cpu);
	raw_spin_unlock(&pc->lock);

	psim_wake_clock();
}

static void psim_probe_wakeup_new(void *data, struct task_struct *p)
{
	struct psim_pcpu *pc;
	unsigned int cpu;
	u32 *w;

	w = psim_word(p);
	if (!p->pid || !w)
		return;

	cpu = task_cpu(p);
	pc = per_cpu_ptr(&psim_pcpu, cpu);
	lockdep_assert_irqs_disabled();
	raw_spin_lock(&pc->lock);
	/* A new task: whatever the word held belonged to a dead pid owner. */
	psim_store(w, PSIM_TSK_RUNNING, cpu);
	psim_cpu_counts(&pc->st, 0, PSIM_TSK_RUNNING);
	psim_update_wakeup(&pc->st, p, cpu);
	raw_spin_unlock(&pc->lock);

	psim_wake_clock();
}

/* Two CPUs' states locked, the lower CPU's first (relocation's order). */
static void psim_lock_two(unsigned int a, unsigned int b)
	__acquires(lower_lock) __acquires(higher_lock)
{
	if (a > b)
		swap(a, b);
	raw_spin_lock(&per_cpu_ptr(&psim_pcpu, a)->lock);
	raw_spin_lock_nested(&per_cpu_ptr(&psim_pcpu, b)->lock,
			     SINGLE_DEPTH_NESTING);
}

static void psim_unlock_two(unsigned int a, unsigned int b)
	__releases(lower_lock) __releases(higher_lock)
{
	raw_spin_unlock(&per_cpu_ptr(&psim_pcpu, a)->lock);
	raw_spin_unlock(&per_cpu_ptr(&psim_pcpu, b)->lock);
}

/*
 * A queued task moves its runnable state; a waking task moves the state it
 * slept with (iowait, memstall), which was charged to the CPU it slept on.
 * The tracepoint fires before task_cpu() changes. Both CPUs are locked for
 * the whole move, the source's before the pid is read: an old leader that
 * is migrated while a thread's exec swaps their pids has its word swapped
 * under the source's lock (psim_krp_exchange_ret()).
 */
static void psim_probe_migrate(void *data, struct task_struct *p, int dest_cpu)
{
	unsigned int src_cpu = task_cpu(p), cur, clear, set;
	struct psim_pcpu *pc, *pd;
	bool retried = false;
	unsigned long flags;
	u32 *w, v;
	u16 lo;

	if (src_cpu == dest_cpu)
		return;
	pd = per_cpu_ptr(&psim_pcpu, dest_cpu);
	local_irq_save(flags);
again:
	psim_lock_two(src_cpu, dest_cpu);
	w = p->pid ? psim_word(p) : NULL;
	v = w ? READ_ONCE(*w) : 0;
	if (!(v & PSIM_TSK_MASK))
		goto out;
	/* counts where no tracepoint showed them go (see psim_relocate_locked) */
	cur = psim_wcpu(v);
	if (cur != src_cpu && cur != dest_cpu) {
		psim_unlock_two(src_cpu, dest_cpu);
		if (retried)
			goto out_unlocked;	/* the next event moves them */
		retried = true;
		pc = per_cpu_ptr(&psim_pcpu, src_cpu);
		raw_spin_lock(&pc->lock);
		w = p->pid ? psim_word(p) : NULL;
		if (w)
			psim_relocate_locked(pc, w, src_cpu);
		raw_spin_unlock(&pc->lock);
		goto again;
	}
	if (psim_task_sched_delayed(p)) {
		/*
		 * Asleep but still queued (6.12's delayed dequeue): like the
		 * kernel's PSI, its sleep states move along with it.
		 */
		clear = v & PSIM_TSK_MASK;
		set = clear;
		lo = psim_lo(v);
	} else {
		lo = psim_task_migrate(psim_lo(v), &clear, &set);
	}
	pc = per_cpu_ptr(&psim_pcpu, cur);
	psim_cpu_counts(&pc->st, clear, 0);
	psim_update(&pc->st, cur);
	if (set) {
		psim_cpu_counts(&pd->st, 0, set);
		psim_update(&pd->st, dest_cpu);
	}
	if (cur != src_cpu)
		pc->relocations++;
	psim_store(w, lo, dest_cpu);
out:
	psim_unlock_two(src_cpu, dest_cpu);
out_unlocked:
	local_irq_restore(flags);

	psim_wake_clock();
}

/*
 * In attach order. A task's count must never be set by an event whose
 * undoing event is not attached yet, or a task that exits in between leaves
 * it behind for good. RUNNING is set by wakeups and switches and undone by
 * the switch (and moved by migration), so: migration, then the switch,
 * then the wakeups. A task woken unseen meanwhile is counted when it is
 * switched in. (The memstall kprobes come after all of these.)
 */
struct psim_probe psim_probes[PSIM_NR_PROBES] = {
	PSIM_PROBE(sched_migrate_task, psim_probe_migrate),
	PSIM_PROBE(sched_switch, psim_probe_switch),
	PSIM_PROBE(sched_wakeup_new, psim_probe_wakeup_new),
	PSIM_PROBE(sched_wakeup, psim_probe_wakeup),
};

/* The memstall probes run in the stalled task's own context. */
static void psim_memstall(bool enter)
{
	struct task_struct *p = current;
	unsigned int clear, set, cpu;
	struct psim_pcpu *pc;
	unsigned long flags;
	u32 *w;

	w = psim_word(p);
	if (!p->pid || !w)
		return;

	local_irq_save(flags);
	cpu = smp_processor_id();
	pc = per_cpu_ptr(&psim_pcpu, cpu);
	raw_spin_lock(&pc->lock);
	psim_relocate_locked(pc, w, cpu);
	if (enter)
		psim_store(w, psim_task_memstall_enter(psim_lo(*w), &clear,
						       &set), cpu);
	else
		psim_store(w, psim_task_memstall_leave(psim_lo(*w), &clear,
						       &set), cpu);
	if (clear | set) {
		psim_cpu_counts(&pc->st, clear, set);
		pc->st.oncpu = 1;
		pc->st.curr_memstall = !!(*w & PSIM_TSK_MEMSTALL);
		psim_update(&pc->st, cpu);
	}
	raw_spin_unlock(&pc->lock);
	local_irq_restore(flags);

	psim_wake_clock();
}

/*
 * Without psi_memstall_enter/leave() (CONFIG_PSI=n), the stalls that the
 * mm tracepoints bracket in the stalled task's own context: direct reclaim
 * (global and memcg) and compaction (direct, and kcompactd's). kswapd's
 * reclaim and refaults of thrashing pages have no such tracepoints.
 */
static void psim_tp_reclaim_begin(void *data, int order, gfp_t gfp_flags)
{
	psim_memstall(true);
}

static void psim_tp_reclaim_end(void *data, unsigned long nr_reclaimed)
{
	psim_memstall(false);
}

static void psim_tp_compaction_begin(PSIM_COMPACTION_BEGIN_PROTO)
{
	psim_memstall(true);
}

static void psim_tp_compaction_end(PSIM_COMPACTION_END_PROTO)
{
	psim_memstall(false);
}

/*
 * In attach order: each end before its begin, so that no stall is counted
 * whose end could still go unseen (see psim_kps in psi_mod.c).
 */
struct psim_probe psim_memstall_probes[PSIM_NR_MEMSTALL_PROBES] = {
	PSIM_PROBE(mm_vmscan_direct_reclaim_end, psim_tp_reclaim_end),
	PSIM_PROBE(mm_vmscan_direct_reclaim_begin, psim_tp_reclaim_begin),
#ifdef CONFIG_MEMCG
	PSIM_PROBE(mm_vmscan_memcg_reclaim_end, psim_tp_reclaim_end),
	PSIM_PROBE(mm_vmscan_memcg_reclaim_begin, psim_tp_reclaim_begin),
#endif
#ifdef CONFIG_COMPACTION
	PSIM_PROBE(mm_compaction_end, psim_tp_compaction_end),
	PSIM_PROBE(mm_compaction_begin, psim_tp_compaction_begin),
#endif
};

int psim_kp_memstall_enter(struct kprobe *kp, struct pt_regs *regs)
{
	psim_memstall(true);
	return 0;
}

int psim_kp_memstall_leave(struct kprobe *kp, struct pt_regs *regs)
{
	psim_memstall(false);
	return 0;
}

/*
 * A thread other than the leader that execs takes over the leader's pid:
 * de_thread() swaps the two tasks' pids with exchange_tids(), so their
 * words must swap with them. This runs as exchange_tids() returns. The
 * exec'ing thread (left) runs it with interrupts off, so no event of its
 * own comes between the pid swap and ours. The old leader (right), a
 * zombie by now, may still be on its way to its last switch on another
 * CPU: hold that CPU's lock, which its switch takes. If that switch (or a
 * sleep on the way) came between the pid swap and us, it used the word at
 * its new pid, the thread's old one, as its own: the thread's word then
 * lacks RUNNING, which a running thread always has, and the words are
 * already where they belong (the leader's old word, which the thread now
 * uses, holds RUNNING as a running thread's must).
 */
struct psim_xtids {
	struct task_struct *left, *right;
};

int psim_krp_exchange_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct psim_xtids *x = (struct psim_xtids *)ri->data;

	x->left = (struct task_struct *)regs_get_kernel_argument(regs, 0);
	x->right = (struct task_struct *)regs_get_kernel_argument(regs, 1);
	return 0;
}

int psim_krp_exchange_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct psim_xtids *x = (struct psim_xtids *)ri->data;
	u32 *wl = psim_word(x->left), *wr = psim_word(x->right), tmp;
	struct psim_pcpu *pc;
	unsigned long flags;

	if (!wl || !wr)
		return 0;
	pc = per_cpu_ptr(&psim_pcpu, task_cpu(x->right));
	raw_spin_lock_irqsave(&pc->lock, flags);
	tmp = READ_ONCE(*wr);
	if (tmp & PSIM_TSK_RUNNING) {
		WRITE_ONCE(*wr, READ_ONCE(*wl));
		WRITE_ONCE(*wl, tmp);
	}
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	return 0;
}

/*
 * Fold the per-CPU state times since the last call into the totals.
 * Returns the states that changed, with PSIM_STATE_RESCHEDULE when there is
 * task activity that the averaging clock should keep sampling.
 */
static u32 psim_collect(bool from_work)
{
	u64 deltas[PSIM_NR_STATES - 1] = { 0, };
	int this_cpu = raw_smp_processor_id();
	unsigned long nonidle_total = 0;
	u32 changed_all = 0;
	int cpu;

	lockdep_assert_held(&psim_avgs_lock);

	for_each_possible_cpu(cpu) {
		struct psim_pcpu *pc = per_cpu_ptr(&psim_pcpu, cpu);
		u32 times[PSIM_NR_STATES], changed;
		struct psim_cpu_state snap;
		unsigned long flags, nonidle;
		bool resched;
		u64 now;

		raw_spin_lock_irqsave(&pc->lock, flags);
		now = cpu_clock(cpu);
		/* end the period here: probes only do where states change */
		psim_record_times(&pc->st, now);
		snap = pc->st;
		raw_spin_unlock_irqrestore(&pc->lock, flags);

		changed = psim_cpu_recent_times(&snap, now,
						per_cpu(psim_times_prev, cpu),
						times);
		nonidle = nsecs_to_jiffies(times[PSIM_NONIDLE]);
		nonidle_total += nonidle;
		psim_accumulate(deltas, times, nonidle);
		changed_all |= changed;

		if (!from_work)
			continue;
		/*
		 * The CPU running this work is never idle: the worker itself
		 * counts as running there. Keep sampling only if something
		 * else is (the kernel's rule in get_recent_times()).
		 */
		if (cpu == this_cpu)
			resched = snap.tasks[PSIM_NR_RUNNING] +
				  snap.tasks[PSIM_NR_IOWAIT] +
				  snap.tasks[PSIM_NR_MEMSTALL] > 1;
		else
			resched = changed & (1U << PSIM_NONIDLE);
		if (resched)
			changed_all |= PSIM_STATE_RESCHEDULE;
	}

	psim_fold_totals(&psim_group, deltas, nonidle_total);
	return changed_all;
}

static void psim_avgs_work_fn(struct work_struct *work)
{
	u32 changed;
	u64 now;

	mutex_lock(&psim_avgs_lock);
	now = sched_clock();
	changed = psim_collect(true);
	/*
	 * With task activity, sample every period; when everything is idle
	 * let the clock stop. The next task change restarts it and the
	 * missed periods are caught up in one go.
	 */
	if (now >= psim_group.avg_next_update)
		psim_group.avg_next_update = psim_update_averages(&psim_group,
								  now);
	if (changed & PSIM_STATE_RESCHEDULE)
		queue_delayed_work(system_wq, &psim_avgs_work,
				   nsecs_to_jiffies(psim_group.avg_next_update -
						    now) + 1);
	WRITE_ONCE(psim_avgs_worker, current);
	psim_avgs_runs++;
	mutex_unlock(&psim_avgs_lock);
}

int psim_show(struct seq_file *m, enum psim_res res)
{
	unsigned long avg[2][3];
	u64 total[2];
	int full, i;
	u64 now;

	/* A read folds in what is pending first: never stale numbers. */
	mutex_lock(&psim_avgs_lock);
	now = sched_clock();
	psim_collect(false);
	if (now >= psim_group.avg_next_update)
		psim_group.avg_next_update = psim_update_averages(&psim_group,
								  now);
	for (full = 0; full < 2; full++) {
		for (i = 0; i < 3; i++)
			avg[full][i] = psim_avg_shown(psim_group.avg[res * 2 + full][i],
						      psim_group.seen[i]);
		total[full] = psim_group.total[res * 2 + full];
	}
	mutex_unlock(&psim_avgs_lock);

	for (full = 0; full < 2; full++) {
		/* CPU FULL is undefined at the system level: zeros. */
		if (res == PSIM_CPU && full) {
			memset(avg[full], 0, sizeof(avg[full]));
			total[full] = 0;
		}
		seq_printf(m, "%s avg10=%lu.%02lu avg60=%lu.%02lu avg300=%lu.%02lu total=%llu\n",
			   full ? "full" : "some",
			   PSIM_LOAD_INT(avg[full][0]),
			   PSIM_LOAD_FRAC(avg[full][0]),
			   PSIM_LOAD_INT(avg[full][1]),
			   PSIM_LOAD_FRAC(avg[full][1]),
			   PSIM_LOAD_INT(avg[full][2]),
			   PSIM_LOAD_FRAC(avg[full][2]),
			   div_u64(total[full], NSEC_PER_USEC));
	}
	return 0;
}

/* Sum of count underflows on all CPUs: nonzero means a model bug. */
u32 psim_underflows(void)
{
	u32 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(&psim_pcpu, cpu)->st.underflows);
	return sum;
}

/*
 * The raw state, for tests and for debugging (debugfs psi_mod/state): the
 * task counts of every CPU, the underflow count, and how often the
 * periodic aggregation ran.
 */
int psim_show_state(struct seq_file *m)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct psim_pcpu *pc = per_cpu_ptr(&psim_pcpu, cpu);
		struct psim_cpu_state st;
		unsigned long flags;

		raw_spin_lock_irqsave(&pc->lock, flags);
		st = pc->st;
		raw_spin_unlock_irqrestore(&pc->lock, flags);
		seq_printf(m, "cpu%d iowait=%u memstall=%u running=%u memstall_running=%u oncpu=%u curr_memstall=%u states=0x%02x underflows=%u relocations=%u dead_kprobe=%u dead_callback=%u\n",
			   cpu, st.tasks[PSIM_NR_IOWAIT],
			   st.tasks[PSIM_NR_MEMSTALL], st.tasks[PSIM_NR_RUNNING],
			   st.tasks[PSIM_NR_MEMSTALL_RUNNING], st.oncpu,
			   st.curr_memstall, st.state_mask, st.underflows,
			   READ_ONCE(pc->relocations),
			   READ_ONCE(pc->dead_kprobe),
			   READ_ONCE(pc->dead_callback));
	}
	mutex_lock(&psim_avgs_lock);
	seq_printf(m, "avgs_work_runs %lu\n", psim_avgs_runs);
	/* warm-up weights (204800 = 100%: the kernel's arithmetic) */
	seq_printf(m, "avg_seen %lu %lu %lu\n", psim_group.seen[0],
		   psim_group.seen[1], psim_group.seen[2]);
	mutex_unlock(&psim_avgs_lock);
	seq_printf(m, "avgs_work_pending %d\n",
		   delayed_work_pending(&psim_avgs_work));
	return 0;
}

/*
 * A CPU goes offline. Tracepoints stay silent on a CPU that is no longer
 * online (cpu_online() is their condition), and the dying CPU clears its
 * online bit in take_cpu_down() while its stopper thread runs: the
 * stopper's last switch, to the idle task, is never seen. Left alone, the
 * dead CPU would count the stopper as running there until it came back,
 * a non-idle CPU without stall that dilutes every system-wide share (cpu
 * some -11%, io some -19% over 20 offline/online cycles before this).
 * The kernel's PSI sees that switch: do what it does. Where it happens:
 * the first thing the idle task does on a CPU that is offline is
 * cpuhp_report_idle_dead(), probed (psi_mod.c). Otherwise when the control
 * CPU runs the CPU-dead callbacks: after cpu_wait_death(), which sleeps a
 * jiffy or more, the CPU counted non-idle meanwhile (io some -2.0% on
 * average over 20 cycles under TCG, -1.6% with the kprobe, -0.9% for the
 * same load without hotplug: docs/accuracy.md). Done twice is done once.
 * The stopper is parked, asleep; when the CPU comes back its unpark is a
 * wakeup, seen as usual.
 */
static enum cpuhp_state psim_hp_state;

static void psim_cpu_gone(unsigned int cpu, bool kprobe)
{
	struct psim_pcpu *pc = per_cpu_ptr(&psim_pcpu, cpu);
	unsigned int clear, set;
	unsigned long flags;
	u32 *w;

	raw_spin_lock_irqsave(&pc->lock, flags);
	w = pc->curr > 0 && pc->curr < PID_MAX_LIMIT ? &psim_tasks[pc->curr] :
						     NULL;
	if (w && psim_wcpu(*w) == cpu) {
		psim_store(w, psim_task_switch_out(psim_lo(*w), true, false,
						   false, &clear, &set), cpu);
		psim_cpu_counts(&pc->st, clear, set);
	}
	if (pc->curr || pc->st.oncpu) {
		if (kprobe)
			pc->dead_kprobe++;
		else
			pc->dead_callback++;
	}
	pc->curr = 0;
	pc->st.oncpu = 0;
	pc->st.curr_memstall = 0;
	psim_update(&pc->st, cpu);
	raw_spin_unlock_irqrestore(&pc->lock, flags);
}

/* Interrupts off, on the dying CPU itself (its idle task). */
int psim_kp_idle_dead(struct kprobe *kp, struct pt_regs *regs)
{
	psim_cpu_gone(smp_processor_id(), true);
	return 0;
}

static int psim_cpu_dead(unsigned int cpu)
{
	psim_cpu_gone(cpu, false);
	return 0;
}

/* Fresh state, before any probe is attached. */
int psim_state_start(void)
{
	int ret;

	u64 now;
	int cpu;

	/* a word's upper half holds a CPU number */
	BUILD_BUG_ON(CONFIG_NR_CPUS > (1UL << (32 - PSIM_WCPU_SHIFT)));
	psim_tasks = vzalloc(array_size(PID_MAX_LIMIT, sizeof(*psim_tasks)));
	if (!psim_tasks)
		return -ENOMEM;

	for_each_possible_cpu(cpu) {
		struct psim_pcpu *pc = per_cpu_ptr(&psim_pcpu, cpu);

		raw_spin_lock_init(&pc->lock);
		/*
		 * oncpu starts at 0: what runs on each CPU now is not counted
		 * yet, and a counted task queued behind it is indeed stalled.
		 */
		memset(&pc->st, 0, sizeof(pc->st));
		pc->curr = 0;
		pc->relocations = 0;
		pc->dead_kprobe = 0;
		pc->dead_callback = 0;
		pc->st.state_start = cpu_clock(cpu);
		memset(per_cpu(psim_times_prev, cpu), 0,
		       sizeof(per_cpu(psim_times_prev, cpu)));
	}
	now = sched_clock();
	psim_group_init(&psim_group, now, jiffies_to_nsecs(PSIM_FREQ));
	/*
	 * The first period is incomplete: the probes are attached after
	 * this (hundreds of ms under load in TCG), and a task's state that
	 * began before the load counts only from its next event (a memory
	 * stall in progress: from the next one). Its time goes to the
	 * totals, which must grow from the load on, but not to the averages:
	 * with the warm-up it would weigh as much as any later period (a
	 * memory stall 3.7 points low 11 s after a load into a zram hog).
	 */
	psim_group.unfolded = 1;
	psim_avgs_worker = NULL;
	psim_avgs_runs = 0;

	/* Teardown of a BP state: runs on a control CPU after the death. */
	ret = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "psi_mod:dead",
					NULL, psim_cpu_dead);
	if (ret < 0) {
		pr_err("psi_mod: cannot register for CPU hotplug: %d\n", ret);
		vfree(psim_tasks);
		psim_tasks = NULL;
		return ret;
	}
	psim_hp_state = ret;
	return 0;
}

/* After every probe is detached and no probe runs any more. */
void psim_state_stop(void)
{
	/* Waits for a running callback: it uses the task table. */
	cpuhp_remove_state_nocalls(psim_hp_state);
	/* The work may have been armed by the last probes: stop it. */
	cancel_delayed_work_sync(&psim_avgs_work);
	vfree(psim_tasks);
	psim_tasks = NULL;
}
