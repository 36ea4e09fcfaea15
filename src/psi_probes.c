// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod: everything that happens at a scheduler event.
 *
 * The model (the kernel's kernel/sched/psi.c, whose comment this follows)
 * ---------
 * A task is in one or more of four countable conditions: sleeping in
 * iowait, stalled on memory (reclaim, compaction, thrashing), runnable
 * (queued or running), and runnable while itself in a memory stall. Each
 * CPU counts its tasks in each condition (struct psim_cpu_state) and
 * whether a non-idle task runs on it, and from those counts derives its
 * pressure states:
 *
 *   SOME: at least one non-idle task is delayed on the resource
 *         (iowait > 0; memstall > 0; runnable > on-CPU)
 *   FULL: delayed tasks exist and nothing productive runs
 *         (iowait && !runnable; memstall && every runnable task is stalled
 *         or the running one reclaims; runnable && nothing on the CPU)
 *   NONIDLE: any non-idle task, sleepers in iowait or memstall included
 *
 * Each CPU times its states; the aggregation (psi_aggregate.c) weighs every
 * CPU's stall time by its non-idle time and folds the sum into the totals
 * and the 2 s averages.
 *
 * Where the kernel's hooks are, and what psi_mod sees instead
 * -----------------------------------------------------------
 *   kernel (kernel/sched/stats.h)  psi_mod
 *   psi_enqueue (wakeup)           sched_wakeup, timed at the task's enqueue
 *                                  stamp (sched_info.last_queued): the
 *                                  tracepoint comes after the wakeup
 *                                  preemption check
 *   psi_enqueue (new task)         sched_wakeup_new
 *   psi_dequeue (sleep)            sched_switch with !preempt and prev's
 *                                  state not TASK_RUNNING at the tracepoint
 *   psi_sched_switch               sched_switch
 *   psi_ttwu_dequeue               sched_migrate_task of a waking task: its
 *                                  sleep states end on the CPU it slept on
 *   (migration of a queued task)   sched_migrate_task: its counts move
 *   psi_memstall_enter/leave       kprobes on those functions (they return
 *                                  at once when the kernel's PSI is off, but
 *                                  a kprobe on their entry still fires);
 *                                  without CONFIG_PSI the direct reclaim and
 *                                  compaction tracepoints
 *   task_struct->psi_flags         the same field, where the kernel has it
 *                                  and leaves it alone (its PSI off); else a
 *                                  word per pid (psim_tasks), whose owner
 *                                  changes when an exec by a non-leader
 *                                  thread swaps two tasks' pids
 *                                  (exchange_tids(), kretprobe)
 *   (a dying CPU's last switch)    kprobe on cpuhp_report_idle_dead(), the
 *                                  CPU-dead callback as the fallback
 *
 * Locking and the central invariant
 * ---------------------------------
 * Each CPU's counts have a raw spinlock of their own (struct psim_pcpu).
 * Every scheduler probe already runs under the runqueue lock or pi_lock of
 * the task it handles, and the memstall probes run in the task itself, so
 * one task's word is never changed by two probes at once; the per-CPU lock
 * orders the count changes of all tasks on a CPU against each other. It
 * nests inside the runqueue lock. Where two CPUs' locks are held, the
 * lower CPU's is taken first. Readers (the aggregation, for any user who
 * reads a pressure file) take no lock and write nothing here: every
 * locked section is also a write section of the CPU's seqcount, and a
 * reader copies the state and retries if a probe wrote meanwhile, as the
 * kernel's get_recent_times() does.
 *
 * One switch takes no lock: a preemption between two tasks counted
 * runnable on the CPU already changes nothing, and says so from reads that
 * the runqueue lock keeps stable (psim_switch_kind()).
 *
 * Invariant: a task's counted flags (the low bits of its word) are counted
 * exactly once, on the CPU its word names, and a word, flags or not, is
 * changed only under the lock of the CPU it names. Every event first
 * claims a word that names another CPU for its own (psim_word_on(), under
 * both locks, the counts moving along), then changes flags and counts
 * together under its CPU's lock.
 *
 * A task the module has not seen yet (it existed before the load) has word
 * 0, "not counted", and every transition is a total function of the word
 * (psi_mod_logic.h): no count can go negative. The probes are attached in
 * an order in which nothing is counted before the event that undoes it is
 * seen (psim_attach(), the one statement of that rule).
 *
 * Where psi_mod differs from the kernel
 * -------------------------------------
 * - A task asleep in iowait or in a memory stall at load time is counted
 *   from its next such sleep or stall on.
 * - Without CONFIG_PSI, kswapd's reclaim and refaults of thrashing pages
 *   have no tracepoint: those memory stalls are not seen.
 * - The clocks are read at the tracepoints, next to but not at the
 *   kernel's own reads; docs/accuracy.md says what that moves.
 */
#include <linux/cpuhotplug.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/clock.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <linux/threads.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>

#include "psi_mod.h"

struct psim_pcpu {
	raw_spinlock_t lock;
	seqcount_raw_spinlock_t seq;	/* st for lockless readers */
	struct psim_cpu_state st;
	pid_t curr;	/* the task last switched in here, see psim_curr() */
	/*
	 * cgroups=1: the group whose path counts the current task as on
	 * the CPU (NULL: none, the root only): its group if its word is
	 * PSIM_TSK_GROUPED, else NULL.
	 */
	struct psim_cgroup *curr_grp;
	u32 wtag;	/* a word's upper half for this CPU, see psim_tasks */
	u32 relocations;	/* words found elsewhere: slow paths */
	/* offline switches to idle done by the kprobe, by the dead callback */
	u32 dead_kprobe, dead_callback;
} ____cacheline_aligned_in_smp;

static DEFINE_PER_CPU_SHARED_ALIGNED(struct psim_pcpu, psim_pcpu);

/*
 * Per-task state: one u32 word per task. The low 16 bits are the task word
 * of psi_mod_logic.h (counted flags, memstall depth), the high 16 bits say
 * where its flags are counted: the tag of a CPU in this start,
 * psim_gen_base + the CPU's number + 1 (the CPU's wtag); anything else
 * (0, a new task's or one cleared at the start, or a tag of a former
 * start) is counted nowhere. Such a word is claimed by the first event of
 * its task on whatever CPU, without another CPU's lock
 * (psim_relocate_locked_slow()).
 *
 * The start's generation in the tag: the start clears the words of the
 * tasks on the task list, and a thread that reaped itself has left it in
 * release_task() before its last switch; its word from the former start
 * must not take a count off a CPU at that switch. Each start moves the
 * tags on by nr_cpu_ids, over 0xffff / nr_cpu_ids generations (32767 on
 * 2 CPUs, 255 on 256, 7 on 8192, Debian's CONFIG_NR_CPUS): a stale word
 * is mistaken for a counted one only if its thread stays between
 * release_task() and do_task_dead() across that many starts, each of
 * which waits for an RCU grace period at the stop before. The first
 * start of a load takes its generation from the clock, at the load: a
 * reload must not hand out the former load's tags again (left to a 1 in
 * that many chance).
 *
 * Where the kernel is built with CONFIG_PSI and its own PSI is off, the
 * word is task_struct->psi_flags: the kernel zeroes it at fork and, PSI
 * off, never reads or writes it again. No memory, no pid reuse, and an
 * exec's pid swap does not concern it. psi_mod zeroes the words of all
 * tasks before it attaches (a former load's are stale) and after it
 * detaches, and leaves the field as it found it.
 *
 * Otherwise (no CONFIG_PSI, or the kernel's PSI on and owning the field:
 * psi_mod beside it) a table indexed by pid, sized to pid_max at the
 * start. A pid's word is zeroed by its task's last switch (TASK_DEAD) and
 * set afresh by sched_wakeup_new; a pid is only reused after the pid space
 * has wrapped. A pid at or beyond the table's size (pid_max raised after
 * the start) has no word: its task is not counted, and the averaging work
 * says so once in dmesg (psim_probes_check()).
 */
static DEFINE_STATIC_KEY_FALSE(psim_table_key);
static u32 *psim_tasks;
static unsigned int psim_tasks_nr;
static unsigned int psim_pid_beyond;	/* a pid seen beyond the table */
static bool psim_beyond_said;		/* and dmesg told */
static u32 psim_gen_base;		/* this start's tags: see above */
static u32 psim_gen;
#define PSIM_WCPU_SHIFT	16
#define PSIM_WTAG_MASK	(~0U << PSIM_WCPU_SHIFT)

/*
 * A CPU's lock, and its seqcount's write section with it: the state may
 * change anywhere inside. _nested for the second of two CPUs.
 */
static inline void psim_lock(struct psim_pcpu *pc)
	__acquires(pc->lock)
{
	raw_spin_lock(&pc->lock);
	write_seqcount_begin(&pc->seq);
}

static inline void psim_lock_nested(struct psim_pcpu *pc)
	__acquires(pc->lock)
{
	raw_spin_lock_nested(&pc->lock, SINGLE_DEPTH_NESTING);
	write_seqcount_begin_nested(&pc->seq, SINGLE_DEPTH_NESTING);
}

static inline void psim_unlock(struct psim_pcpu *pc)
	__releases(pc->lock)
{
	write_seqcount_end(&pc->seq);
	raw_spin_unlock(&pc->lock);
}

static inline u16 psim_lo(u32 w)
{
	return (u16)w;
}

/* The CPU a word's flags are counted on, or -1: not counted. */
static inline int psim_wcpu(u32 w)
{
	u32 c = (w >> PSIM_WCPU_SHIFT) - 1 - psim_gen_base;

	return c < nr_cpu_ids ? (int)c : -1;
}

/* Whether a word's flags are counted on @pc's CPU. */
static inline bool psim_word_here(u32 w, const struct psim_pcpu *pc)
{
	return (w & PSIM_WTAG_MASK) == pc->wtag;
}

/* Store a task's new word: its flags are now counted on @pc's CPU. */
static inline void psim_store(u32 *w, u16 lo, const struct psim_pcpu *pc)
{
	WRITE_ONCE(*w, lo | pc->wtag);
}

DEFINE_STATIC_KEY_FALSE(psim_cgroup_key);

/* Per-cgroup accounting is on: see "Per-cgroup accounting" below. */
static inline bool psim_groups_on(void)
{
	return static_branch_unlikely(&psim_cgroup_key);
}

/*
 * The word of most tasks that run or wait to run on @pc's CPU: runnable,
 * in no memory stall (and with per-cgroup accounting, @groups, counted in
 * its groups).
 */
static inline u32 psim_word_running(const struct psim_pcpu *pc, bool groups)
{
	return PSIM_TSK_RUNNING | pc->wtag | (groups ? PSIM_TSK_GROUPED : 0);
}

static noinline void psim_note_beyond(unsigned int pid)
{
	if (!READ_ONCE(psim_pid_beyond))
		WRITE_ONCE(psim_pid_beyond, pid);
}

/* The words are in task_struct, not in the pid table. */
static inline bool psim_words_in_tasks(void)
{
	return psim_have_task_word() &&
	       !static_branch_unlikely(&psim_table_key);
}

/* @p's word, or NULL for a pid beyond the table. */
static inline u32 *psim_word_peek(struct task_struct *p)
{
	unsigned int pid = p->pid;

	if (psim_words_in_tasks())
		return psim_task_word(p);
	return likely(pid < psim_tasks_nr) ? &psim_tasks[pid] : NULL;
}

/*
 * @p's word in *@v, or false for a pid beyond the table: psim_word_peek()
 * by value, for the switch test, which may read a reused pid's word that
 * another CPU is changing.
 */
static inline bool psim_word_val(struct task_struct *p, u32 *v)
{
	unsigned int pid = p->pid;

	if (psim_words_in_tasks()) {
		*v = READ_ONCE(*psim_task_word(p));
		return true;
	}
	if (unlikely(pid >= psim_tasks_nr))
		return false;
	*v = READ_ONCE(psim_tasks[pid]);
	return true;
}

/* The same, and a pid beyond the table noted for dmesg. */
static inline u32 *psim_word(struct task_struct *p)
{
	u32 *w = psim_word_peek(p);

	if (unlikely(!w))
		psim_note_beyond(p->pid);
	return w;
}

/*
 * The word of the task with @pid, if it is alive, and in *@pp the task
 * (NULL if it is gone: a pid table's word may outlive it); under
 * rcu_read_lock().
 */
static u32 *psim_word_by_pid(pid_t pid, struct task_struct **pp)
{
	struct task_struct *p;

	*pp = NULL;
	if (pid <= 0)
		return NULL;
	p = pid_task(find_pid_ns(pid, &init_pid_ns), PIDTYPE_PID);
	*pp = p;
	if (static_branch_unlikely(&psim_table_key))
		return (unsigned int)pid < psim_tasks_nr ? &psim_tasks[pid] :
							     NULL;
	return p ? psim_word(p) : NULL;
}

/*
 * After a change of counts: if the CPU's state changed, end the period at
 * the CPU's clock (which the kernel's PSI reads too). Most switches change
 * no state (one runnable task replaces another) and so read no clock (see
 * psim_mask_changes()). A new state a privileged trigger watches starts
 * the trigger fast path (psim_poll_kick(): a static branch, not taken
 * while there is no such trigger); its work keeps going by itself while
 * the state lasts.
 */
static inline void psim_update(struct psim_cpu_state *st, int cpu)
{
	u32 mask;

	if (psim_mask_changes(st, &mask)) {
		psim_set_mask(st, cpu_clock(cpu), mask);
		psim_poll_kick(mask);
	}
}

/* The same with the clock read already, at @now (0: read it here). */
static inline void psim_update_at(struct psim_cpu_state *st, int cpu, u64 now)
{
	u32 mask;

	if (psim_mask_changes(st, &mask)) {
		psim_set_mask(st, now ?: cpu_clock(cpu), mask);
		psim_poll_kick(mask);
	}
}

/*
 * A woken task became runnable when it was enqueued, which the kernel's PSI
 * records; the tracepoint comes later, after the wakeup preemption check.
 * Use the enqueue stamp where the scheduler keeps one, but never before the
 * start of the current period. A reader that sampled between the enqueue
 * and this probe has counted the old states up to its sample: the old
 * states then end earlier than it counted, which the reader absorbs (a
 * state's time never runs backwards for it, psim_cpu_recent_times()).
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
	psim_poll_kick(mask);
}

/*
 * Per-cgroup accounting (cgroups=1)
 * ---------------------------------
 * A task's flags count on its CPU (the root, the system-wide state) and,
 * when its word says PSIM_TSK_GROUPED, in the group of its cgroup
 * (psim_cgroup_of_task()) and every ancestor's, each group with a
 * struct psim_cpu_state per CPU under the same per-CPU lock. The kernel's
 * rules, per group: the same counts and states, a group's oncpu the
 * current task's being in it (pc->curr_grp's path), cpu full real below
 * the root, and a switch changes only the groups below the common
 * ancestor of the two tasks' (psim_groups_oncpu()).
 *
 * A word without PSIM_TSK_GROUPED counts on the CPU alone; the next event
 * of its task that holds the word's lock adds its flags to its groups
 * (psim_settle()): a task not seen since the groups came (the load, or
 * cgroups= turned on at runtime), as a task is not counted before its
 * first event at the load.
 *
 * A move between cgroups changes task->cgroups in css_set_move_task(),
 * under css_set_lock, where the kernel's PSI moves the task's counts
 * (cgroup_move_task()); a kretprobe there does the same in two halves
 * around the change: on entry the flags leave the old groups and the word
 * loses PSIM_TSK_GROUPED, on return they are settled in the new ones.
 * Between the halves the task is psim_moving (css_set_lock makes it one
 * task at a time) and psim_settle() leaves it alone. Each half marks the
 * CPU's ->curr (psim_mark_moved()), for the switches told before the lock
 * (psim_switch_grouped()).
 */
static struct task_struct *psim_moving;

/*
 * Words may be grouped (psim_settle()): set once every probe that saw the
 * groups off has returned, so that no word counts in a group while a
 * probe that changes it without the groups may still run.
 */
static bool psim_settling;

/* One event's time for the groups it changes, read at the first change. */
struct psim_gclk {
	u64 now;	/* 0: not read yet */
	u64 queued;	/* a wakeup's enqueue stamp (psim_update_wakeup()), or 0 */
};

static inline u64 psim_gclk_now(struct psim_gclk *k, int cpu)
{
	if (!k->now) {
		k->now = cpu_clock(cpu);
		if (k->queued && k->queued < k->now)
			k->now = k->queued;
	}
	return k->now;
}

static inline struct psim_cpu_state *psim_gst(struct psim_cgroup *g, int cpu)
{
	return &psim_cgroup_cpu(g, cpu)->st;
}

/*
 * A group's psim_update(): a new state mask ends its period (a time
 * before the period's start charges nothing: the wakeup rule) and keeps
 * the group's averaging going, as the kernel's psi_group_change().
 */
static __always_inline void psim_group_update(struct psim_cgroup *g,
					      struct psim_cpu_state *st,
					      int cpu, struct psim_gclk *k)
{
	u32 mask;

	if (!psim_mask_changes(st, &mask))
		return;
	psim_set_mask(st, psim_gclk_now(k, cpu), mask);
	psim_cgroup_wake_clock(g);
	psim_cgroup_poll_kick(g, mask);
}

/* A task's change of counts on @cpu in group @g and its ancestors. */
static void psim_groups_change(struct psim_cgroup *g, int cpu,
			       unsigned int clear, unsigned int set,
			       struct psim_gclk *k)
{
	struct psim_cpu_state *st;

	if (!(clear | set))
		return;
	for (; g; g = g->parent) {
		st = psim_gst(g, cpu);
		psim_cpu_counts(st, clear, set);
		psim_group_update(g, st, cpu, k);
	}
}

/* The nearest group that has both @a and @b below it, or NULL (the root). */
static struct psim_cgroup *psim_groups_common(struct psim_cgroup *a,
					      struct psim_cgroup *b)
{
	while (a != b) {
		if (!a || !b)
			return NULL;
		if (a->level > b->level) {
			a = a->parent;
		} else if (b->level > a->level) {
			b = b->parent;
		} else {
			a = a->parent;
			b = b->parent;
		}
	}
	return a;
}

/*
 * The CPU's current task counts as on the CPU in @to's path from now on,
 * @ms whether it is in a memory stall (the kernel's TSK_ONCPU and the
 * full-memory rule of a reclaiming current task): the groups of the one
 * before (pc->curr_grp) that are not also @to's lose it, @to's below
 * their common ancestor gain it, and from the common one up only the
 * memory stall can change. With @pc (@cpu's) locked.
 */
static void psim_groups_oncpu(struct psim_pcpu *pc, int cpu,
			      struct psim_cgroup *to, bool ms,
			      struct psim_gclk *k)
{
	struct psim_cgroup *common = psim_groups_common(pc->curr_grp, to);
	struct psim_cpu_state *st;
	struct psim_cgroup *g;

	for (g = pc->curr_grp; g != common; g = g->parent) {
		st = psim_gst(g, cpu);
		st->oncpu = 0;
		st->curr_memstall = 0;
		psim_group_update(g, st, cpu, k);
	}
	for (g = to; g; g = g->parent) {
		st = psim_gst(g, cpu);
		if (g == common && st->curr_memstall == ms)
			break;
		st->oncpu = 1;
		st->curr_memstall = ms;
		psim_group_update(g, st, cpu, k);
	}
	WRITE_ONCE(pc->curr_grp, to);
}

/* The group a word's flags count in: @p's if the word says so, or none. */
static inline struct psim_cgroup *psim_word_group(struct task_struct *p,
						  u16 lo)
{
	return (lo & PSIM_TSK_GROUP_BITS) == PSIM_TSK_GROUPED ?
	       psim_cgroup_of_task(p) : NULL;
}

/*
 * A word that counts on the CPU alone gets its flags counted in its
 * task's groups too, unless the task is between the halves of a move.
 * With @pc (@cpu's, the word's) locked. Returns the word's low half.
 */
static u16 psim_settle(struct psim_pcpu *pc, int cpu, struct task_struct *p,
		       u32 *w, struct psim_gclk *k)
{
	u16 lo = psim_lo(READ_ONCE(*w));

	if ((lo & PSIM_TSK_GROUPED) || READ_ONCE(psim_moving) == p ||
	    !READ_ONCE(psim_settling))
		return lo;
	psim_groups_change(psim_cgroup_of_task(p), cpu, 0, lo & PSIM_TSK_MASK,
			   k);
	lo |= PSIM_TSK_GROUPED;
	if (!cgroup_parent(rcu_dereference_sched(p->cgroups)->dfl_cgrp))
		lo |= PSIM_TSK_TOPCG;
	psim_store(w, lo, pc);
	return lo;
}

/*
 * ->curr as a pid, and its mark: a move has changed a word or a group of
 * the CPU since its last locked switch (psim_switch_grouped()). Set with
 * a full barrier before the move's changes, so that a lockless switch
 * that read any of them sees the mark at its compare-and-exchange.
 */
#define PSIM_CURR_MOVED	0x40000000

static inline pid_t psim_curr(const struct psim_pcpu *pc)
{
	return READ_ONCE(pc->curr) & ~PSIM_CURR_MOVED;
}

static void psim_mark_moved(struct psim_pcpu *pc)
{
	pid_t curr = READ_ONCE(pc->curr);

	BUILD_BUG_ON(PID_MAX_LIMIT > PSIM_CURR_MOVED);
	while (!try_cmpxchg(&pc->curr, &curr, curr | PSIM_CURR_MOVED))
		;
}

/*
 * The halves of a move (@begin: on entry to css_set_move_task(), else on
 * its return, with task->cgroups changed in between), under the lock of
 * the CPU the task's word names, which every change of the word holds.
 * The first half makes every later lock section see psim_moving first:
 * a settle that began before it is over, and its word shows it.
 */
static void psim_move(struct task_struct *p, bool begin)
{
	struct psim_gclk k = { 0 };
	u32 *w = psim_word_peek(p), v;
	struct psim_pcpu *pc;
	unsigned long flags;
	int cpu;
	u16 lo;

	/* a pid beyond the table is counted nowhere */
	if (!w)
		return;
	local_irq_save(flags);
	if (begin) {
		WRITE_ONCE(psim_moving, p);
		for_each_possible_cpu(cpu) {
			pc = per_cpu_ptr(&psim_pcpu, cpu);
			raw_spin_lock(&pc->lock);
			raw_spin_unlock(&pc->lock);
		}
	}
retry:
	v = READ_ONCE(*w);
	cpu = psim_wcpu(v);
	if (cpu < 0) {
		/* counted nowhere yet: its first event settles it */
		if (!begin)
			WRITE_ONCE(psim_moving, NULL);
		goto out;
	}
	pc = per_cpu_ptr(&psim_pcpu, cpu);
	psim_lock(pc);
	if (READ_ONCE(*w) != v) {
		psim_unlock(pc);
		goto retry;
	}
	psim_mark_moved(pc);
	if (begin) {
		if (v & PSIM_TSK_GROUPED) {
			psim_groups_change(psim_cgroup_of_task(p), cpu,
					   v & PSIM_TSK_MASK, 0, &k);
			psim_store(w, psim_lo(v) & ~PSIM_TSK_GROUP_BITS, pc);
			if (psim_curr(pc) == p->pid)
				psim_groups_oncpu(pc, cpu, NULL, false, &k);
		}
	} else {
		WRITE_ONCE(psim_moving, NULL);
		lo = psim_settle(pc, cpu, p, w, &k);
		if (psim_curr(pc) == p->pid)
			psim_groups_oncpu(pc, cpu, psim_word_group(p, lo),
					  lo & PSIM_TSK_MEMSTALL, &k);
	}
	psim_unlock(pc);
out:
	local_irq_restore(flags);
}

/* css_set_move_task(task, from_cset, to_cset, use_mg_tasks) */
static int psim_krp_move_entry(struct kretprobe_instance *ri,
			       struct pt_regs *regs)
{
	struct task_struct *p;
	struct css_set *from, *to;

	p = (struct task_struct *)regs_get_kernel_argument(regs, 0);
	from = (struct css_set *)regs_get_kernel_argument(regs, 1);
	to = (struct css_set *)regs_get_kernel_argument(regs, 2);
	/* a fork (no source), an exit (no destination): task->cgroups stays */
	if (!from || !to || from->dfl_cgrp == to->dfl_cgrp || !p->pid)
		return 1;	/* no return half */
	*(struct task_struct **)ri->data = p;
	psim_move(p, true);
	return 0;
}

static int psim_krp_move_ret(struct kretprobe_instance *ri,
			     struct pt_regs *regs)
{
	psim_move(*(struct task_struct **)ri->data, false);
	return 0;
}

static struct kretprobe psim_krp_move;
static bool psim_krp_move_attached;

/* A word loses PSIM_TSK_GROUPED, under the lock of the CPU it names. */
static void psim_ungroup(struct task_struct *p)
{
	u32 *w = psim_word_peek(p), v;
	struct psim_pcpu *pc;
	unsigned long flags;
	int cpu;

	if (!w)
		return;
	local_irq_save(flags);
retry:
	v = READ_ONCE(*w);
	cpu = psim_wcpu(v);
	if (!(v & PSIM_TSK_GROUPED) || cpu < 0)
		goto out;
	pc = per_cpu_ptr(&psim_pcpu, cpu);
	psim_lock(pc);
	if (READ_ONCE(*w) != v) {
		psim_unlock(pc);
		goto retry;
	}
	WRITE_ONCE(*w, v & ~PSIM_TSK_GROUP_BITS);
	psim_unlock(pc);
out:
	local_irq_restore(flags);
}

/*
 * Per-cgroup accounting on (the groups made, psi_cgroup.c) or off (before
 * the groups go). On: the moves are seen before anything is counted in a
 * group. Off, with the probes attached: nothing counts in a group after
 * this, and no word says it does (a thread that has left the task list on
 * its way to its last switch keeps its word's bit, and its last switch
 * clears the word); with them detached (@words_stay false: the stop
 * clears every word) the words are left alone.
 */
int psim_probes_cgroups(bool on)
{
	struct task_struct *g, *t;
	unsigned long flags;
	int cpu, ret;

	if (on) {
		memset(&psim_krp_move, 0, sizeof(psim_krp_move));
		psim_krp_move.kp.symbol_name = "css_set_move_task";
		psim_krp_move.entry_handler = psim_krp_move_entry;
		psim_krp_move.handler = psim_krp_move_ret;
		psim_krp_move.data_size = sizeof(struct task_struct *);
		ret = register_kretprobe(&psim_krp_move);
		if (ret) {
			pr_err("cgroups=1: cannot probe css_set_move_task(), where tasks move between cgroups: %d\n",
			       ret);
			return ret;
		}
		psim_krp_move_attached = true;
		WRITE_ONCE(psim_moving, NULL);
		static_branch_enable(&psim_cgroup_key);
		/* the probes that saw the key off have returned */
		synchronize_rcu();
		WRITE_ONCE(psim_settling, true);
		return 0;
	}
	if (!psim_krp_move_attached)
		return 0;
	WRITE_ONCE(psim_settling, false);
	static_branch_disable(&psim_cgroup_key);
	unregister_kretprobe(&psim_krp_move);
	psim_krp_move_attached = false;
	/* the probes that saw the key on have returned */
	synchronize_rcu();
	WRITE_ONCE(psim_moving, NULL);
	rcu_read_lock();
	for_each_process_thread(g, t)
		psim_ungroup(t);
	rcu_read_unlock();
	for_each_possible_cpu(cpu) {
		struct psim_pcpu *pc = per_cpu_ptr(&psim_pcpu, cpu);

		raw_spin_lock_irqsave(&pc->lock, flags);
		pc->curr_grp = NULL;
		raw_spin_unlock_irqrestore(&pc->lock, flags);
	}
	return 0;
}

/* A word's flags move from CPU @from's groups to @to's (both locked). */
static void psim_relocate_groups(struct task_struct *p, u32 v,
				 unsigned int from, unsigned int to)
{
	struct psim_cgroup *g = psim_cgroup_of_task(p);
	struct psim_gclk kf = { 0 }, kt = { 0 };

	psim_groups_change(g, from, v & PSIM_TSK_MASK, 0, &kf);
	psim_groups_change(g, to, 0, v & PSIM_TSK_MASK, &kt);
}

/*
 * A task's flags must be counted on the CPU whose event changes them. Where
 * they are counted elsewhere, a move happened that no tracepoint showed:
 * tracepoints are silent on a CPU that is not online, and on 5.10 a dying
 * CPU pushes its queued tasks away in that state (later kernels push them
 * while still online). Move the counts here first. Rare: out of line.
 * Every probe does it under the lock of the CPU it is about to change.
 *
 * Taking the lower CPU's lock first means dropping ours for a moment; an
 * exec's exchange_tids() may swap @p's pid meanwhile, and the word with it.
 * So the word is looked up again from the task after every relock, never
 * kept from before: the caller gets the word that is @p's now.
 */
/* With @pc (@cpu's) locked and interrupts off; returns with it locked. */
static noinline u32 *psim_relocate_locked_slow(struct psim_pcpu *pc,
					       struct task_struct *p,
					       unsigned int cpu)
{
	struct psim_pcpu *opc;
	unsigned int old;
	u32 *w, v;

retry:
	w = psim_word(p);
	if (!w)
		return NULL;
	v = READ_ONCE(*w);
	if (psim_word_here(v, pc))
		return w;
	if (psim_wcpu(v) < 0) {
		/*
		 * Counted nowhere: no other CPU's lock guards it, and the
		 * task's own events do not race. With the pid table the old
		 * owner of a reused pid may claim it on another CPU at the
		 * same time: whoever swaps first has it.
		 */
		if (cmpxchg(w, v, pc->wtag) != v)
			goto retry;
		return w;
	}
	old = psim_wcpu(v);
	opc = per_cpu_ptr(&psim_pcpu, old);
	if (old < cpu) {
		/* Two CPU locks: always the lower CPU's first. */
		psim_unlock(pc);
		psim_lock(opc);
		psim_lock_nested(pc);
		/* the pid swapped, or the word moved, meanwhile */
		if (psim_word(p) != w || READ_ONCE(*w) != v) {
			psim_unlock(opc);
			psim_unlock(pc);
			psim_lock(pc);
			goto retry;
		}
	} else {
		psim_lock_nested(opc);
		/*
		 * The word names @old, whose lock was not held when it was
		 * read: a probe there (the old owner's last switch, after
		 * its pid went to a new task) may have changed it since.
		 */
		if (READ_ONCE(*w) != v) {
			psim_unlock(opc);
			goto retry;
		}
	}
	if (v & PSIM_TSK_MASK) {
		psim_cpu_counts(&opc->st, v & PSIM_TSK_MASK, 0);
		psim_update(&opc->st, old);
		psim_cpu_counts(&pc->st, 0, v & PSIM_TSK_MASK);
		psim_update(&pc->st, cpu);
		if (psim_groups_on() && (v & PSIM_TSK_GROUPED))
			psim_relocate_groups(p, v, old, cpu);
	}
	/* every slow path, flags or not: it took another CPU's lock */
	pc->relocations++;
	/* from here on the word is this CPU's, and so is its lock */
	psim_store(w, psim_lo(v), pc);
	psim_unlock(opc);
	if (old < cpu) {
		/*
		 * Ours is held nested (subclass 1) behind the lower lock just
		 * dropped. Taken again plainly, so that a second relocation
		 * in the same event (the switch's next task, its word on a
		 * higher CPU) can nest that CPU's lock: two of one class at
		 * the same subclass is lockdep's "possible recursive
		 * locking". The word is looked up again, as after every
		 * relock.
		 */
		psim_unlock(pc);
		psim_lock(pc);
		goto retry;
	}
	return w;
}

/*
 * @p's word, naming @cpu: its flags counted there, and guarded by @pc's
 * lock from here on. A word that names another CPU is guarded by that
 * CPU's lock, even with no flag set: a probe there may be setting one
 * right now. So it is claimed under both locks, its counts moved along.
 * NULL for a pid outside the table. With @pc (@cpu's) locked and
 * interrupts off.
 */
static inline u32 *psim_word_on(struct psim_pcpu *pc, struct task_struct *p,
				unsigned int cpu)
{
	u32 *w = psim_word(p);

	if (unlikely(!w))
		return NULL;
	if (unlikely(!psim_word_here(READ_ONCE(*w), pc)))
		w = psim_relocate_locked_slow(pc, p, cpu);
	return w;
}

/*
 * The two switches that make most of a busy CPU's. Both are between two
 * tasks counted runnable here, in no memory stall (psim_word_running()),
 * @next queued already:
 * - settled: @prev stays runnable (preempted, or woken again before it
 *   blocked). The locked path would change no count, word or state: only
 *   ->curr moves.
 * - plain sleep: @prev blocks outside iowait, not dying and not the
 *   averaging worker. Only @prev's RUNNING goes (psim_sleep_commit()).
 * Told without the lock (@locked false): the words of a running task and
 * of a task queued here change only by their own events or under this
 * runqueue's lock, which the scheduler holds, and ->st.oncpu and
 * ->st.curr_memstall only by events on this CPU. A word another CPU may be
 * changing (a reused pid's, in the table) reads as anything, and anything
 * but psim_word_running() is some other switch; for a settled switch that
 * word on both sides writes nothing, as the locked path would. A plain
 * sleep writes @prev's word, which with the table is found by pid, and an
 * exec's pid swap changes that under the CPU's lock: with the table it is
 * told only with @pc locked (psim_switch_locked()).
 */
enum psim_switch_kind {
	PSIM_SW_OTHER, PSIM_SW_SETTLED, PSIM_SW_SLEEP,
	/* both qualify, in a cgroup below the root: the groups to look up */
	PSIM_SW_NESTED,
};

/* Both tasks count in the groups of the one on the CPU, which stay on it. */
static __always_inline bool psim_switch_in_curr_grp(struct psim_pcpu *pc,
						    struct task_struct *prev,
						    struct task_struct *next)
{
	struct psim_cgroup *g = READ_ONCE(pc->curr_grp);

	if (psim_cgroup_of_task(prev) != g)
		return false;
	/* one css_set, one cgroup: the common case needs one lookup */
	return rcu_access_pointer(next->cgroups) ==
	       rcu_access_pointer(prev->cgroups) ||
	       psim_cgroup_of_task(next) == g;
}

/* @prev's part, once both tasks qualify: settled, plain sleep or neither. */
static __always_inline enum psim_switch_kind
psim_switch_prev_kind(struct task_struct *prev, bool preempt, bool locked,
		      bool tasks)
{
	unsigned int state = psim_task_state(prev);

	if (preempt || state == TASK_RUNNING)
		return PSIM_SW_SETTLED;
	if ((!locked && !tasks) || state == TASK_DEAD ||
	    prev->in_iowait || prev == READ_ONCE(psim_avgs_worker))
		return PSIM_SW_OTHER;
	return PSIM_SW_SLEEP;
}

/* Both tasks' words, false for a pid outside the table. */
static __always_inline bool psim_switch_words(struct task_struct *prev,
					      struct task_struct *next,
					      u32 *vp, u32 *vn)
{
	/* the task_struct words written out: one static branch, not two */
	if (psim_words_in_tasks()) {
		*vp = READ_ONCE(*psim_task_word(prev));
		*vn = READ_ONCE(*psim_task_word(next));
		return true;
	}
	return psim_word_val(prev, vp) && psim_word_val(next, vn);
}

/*
 * Inlined in its callers: a call would save registers the quick paths need.
 * With @groups, both tasks in the root cgroup (PSIM_TSK_TOPCG) are in no
 * group and need no look-up: ->curr_grp is NULL while the CPU's task is
 * one of the root's, since a move that changes that task's word or group
 * sets it anew under the lock (psim_move()). Any other two words are
 * PSIM_SW_NESTED, told by the caller (psim_switch_nested_kind()), so that
 * the root cgroup's switches pay for none of its registers.
 */
static __always_inline enum psim_switch_kind
psim_switch_kind(struct psim_pcpu *pc, struct task_struct *prev,
		 struct task_struct *next, bool preempt, bool locked,
		 bool groups, bool tasks)
{
	u32 vp, vn, run;

	if (!prev->pid || !next->pid || !pc->st.oncpu || pc->st.curr_memstall)
		return PSIM_SW_OTHER;
	run = psim_word_running(pc, groups) | (groups ? PSIM_TSK_TOPCG : 0);
	/* with the words in task_struct, each tested as read: fewer registers */
	if (tasks) {
		if (READ_ONCE(*psim_task_word(prev)) != run ||
		    READ_ONCE(*psim_task_word(next)) != run)
			goto other;
	} else if (!psim_switch_words(prev, next, &vp, &vn) || vp != run ||
		   vn != run) {
		goto other;
	}
	return psim_switch_prev_kind(prev, preempt, locked, tasks);
other:
	return groups ? PSIM_SW_NESTED : PSIM_SW_OTHER;
}

/*
 * PSIM_SW_NESTED: both words grouped and running here, and both tasks in
 * the groups of the CPU's task (looked up), then @prev's part.
 */
static __always_inline enum psim_switch_kind
psim_switch_nested_kind(struct psim_pcpu *pc, struct task_struct *prev,
			struct task_struct *next, bool preempt, bool locked)
{
	u32 vp, vn, run = psim_word_running(pc, true);

	/* what differs from the running word may be PSIM_TSK_TOPCG only */
	if (!psim_switch_words(prev, next, &vp, &vn) ||
	    (((vp ^ run) | (vn ^ run)) & ~PSIM_TSK_TOPCG) ||
	    !psim_switch_in_curr_grp(pc, prev, next))
		return PSIM_SW_OTHER;
	return psim_switch_prev_kind(prev, preempt, locked,
				     psim_words_in_tasks());
}

/*
 * The plain sleep's change in the groups of the task on this CPU (@pc's):
 * the CPU found again rather than kept across the caller's calls.
 */
static noinline void psim_groups_sleep(struct psim_pcpu *pc)
{
	struct psim_gclk k = { 0 };

	psim_groups_change(pc->curr_grp, smp_processor_id(), PSIM_TSK_RUNNING,
			   0, &k);
}

/*
 * The plain sleep of psim_switch_kind() with @pc locked, @wp @prev's word:
 * what psim_switch_locked() would do for it, in short. Inlined in its
 * callers, whose registers are saved already. @grp: @prev may count in
 * groups below the root, those of the CPU's task (->curr_grp); without it
 * @prev counts in none (in the root cgroup, or no word is grouped yet).
 */
static __always_inline void psim_sleep_commit(struct psim_pcpu *pc,
					      unsigned int cpu, u32 *wp,
					      bool grp)
{
	bool keep = psim_run_dec_keeps_mask(&pc->st);

	psim_store(wp, psim_lo(READ_ONCE(*wp)) & ~PSIM_TSK_RUNNING, pc);
	psim_cpu_counts(&pc->st, PSIM_TSK_RUNNING, 0);
	if (!keep)
		psim_update(&pc->st, cpu);
	if (grp && pc->curr_grp)
		psim_groups_sleep(pc);
}

/*
 * The plain sleep of this CPU's current task, told before the lock (words
 * in task_struct; ->curr already set), without the groups: no word is
 * grouped until every probe that saw them off has returned
 * (psim_probes_cgroups()). Out of line, as psim_switch_locked(), and it
 * keeps only @pc across the lock: @prev is current until the switch
 * itself, and its word and the CPU are found again from there.
 */
static noinline void psim_switch_sleep(struct psim_pcpu *pc)
{
	psim_lock(pc);
	psim_sleep_commit(pc, smp_processor_id(), psim_task_word(current),
			  false);
	psim_unlock(pc);
	psim_wake_clock();
}

/*
 * Every other switch. Out of line, so that the two switches above do not
 * pay for the registers this one needs.
 */
static noinline void psim_switch_locked(struct psim_pcpu *pc,
					unsigned int cpu, bool preempt,
					struct task_struct *prev,
					struct task_struct *next)
{
	unsigned int clear, set, changed = 0;
	bool groups = psim_groups_on();
	bool wake_clock = true;
	struct psim_gclk k;
	u32 *wp, *wn;
	u8 oncpu;
	u16 nw = 0;
	/*
	 * A switch to or from the idle task changes the CPU's state (almost
	 * always), so does a sleep in iowait (io some begins, unless another
	 * task on this CPU sleeps in iowait already), and with the groups a
	 * switch that comes this way changes the state of a group (almost
	 * always): its time is read first, as near as a probe gets to the
	 * kernel's PSI, which reads its clock just before the tracepoint
	 * (psi_task_switch()), and not after the lock, the words, the counts
	 * and the groups' look-ups. An update under the lock meanwhile with a
	 * later time keeps its start (psim_record_times()).
	 */
	u64 now = (groups || !prev->pid || !next->pid ||
		   (!preempt && prev->in_iowait)) ? cpu_clock(cpu) : 0;

	k.now = now;
	k.queued = 0;
	psim_lock(pc);
	/*
	 * With the pid table the plain sleep is told here, under the lock;
	 * with per-cgroup accounting both short switches are, since a move
	 * between cgroups changes words and groups under this lock only.
	 */
	if (groups || !psim_words_in_tasks()) {
		enum psim_switch_kind kind;

		kind = psim_switch_kind(pc, prev, next, preempt, true, groups,
					false);
		if (kind == PSIM_SW_NESTED)
			kind = psim_switch_nested_kind(pc, prev, next, preempt,
						       true);
		if (kind == PSIM_SW_SLEEP) {
			psim_sleep_commit(pc, cpu, psim_word_peek(prev),
					  groups);
			WRITE_ONCE(pc->curr, next->pid);
			psim_unlock(pc);
			psim_wake_clock();
			return;
		}
		if (groups && kind == PSIM_SW_SETTLED) {
			WRITE_ONCE(pc->curr, next->pid);
			psim_unlock(pc);
			return;
		}
	}
	/*
	 * The pids only under the lock: an exec from a non-leader thread
	 * swaps its pid with the (zombie) leader's, and psim_krp_exchange_ret()
	 * swaps their words under the lock of the leader's CPU, this one if
	 * the leader is switching out here. A pid read before the lock and a
	 * word used after the swap would clear the exec'ing thread's word and
	 * leave the leader's RUNNING counted for good.
	 */
	wp = prev->pid ? psim_word_on(pc, prev, cpu) : NULL;
	oncpu = next->pid != 0;

	if (wp) {
		unsigned int state = psim_task_state(prev);
		/*
		 * prev blocked if it was not preempted and its state is not
		 * TASK_RUNNING now: a pending signal resets it to running
		 * before the switch, and such a task stays queued.
		 */
		bool sleep = !preempt && state != TASK_RUNNING;
		u16 lo = groups ? psim_settle(pc, cpu, prev, wp, &k) :
				  psim_lo(*wp);
		u16 pw;

		pw = psim_task_switch_out(lo, sleep, sleep && prev->in_iowait,
					  sleep && state == TASK_DEAD, &clear,
					  &set);
		/* a preempted task's word stays: no store, no dirty line */
		if (pw != lo)
			psim_store(wp, pw, pc);
		psim_cpu_counts(&pc->st, clear, set);
		if (groups)
			psim_groups_change(psim_word_group(prev, lo), cpu,
					   clear, set, &k);
		changed |= clear | set;
		/*
		 * The aggregation worker going to sleep must not restart
		 * the clock it just let stop (the kernel's ping-pong rule).
		 */
		if (sleep && prev == READ_ONCE(psim_avgs_worker))
			wake_clock = false;
	}

	WRITE_ONCE(pc->curr, next->pid);
	wn = next->pid ? psim_word_on(pc, next, cpu) : NULL;
	if (wn) {
		u16 lo = groups ? psim_settle(pc, cpu, next, wn, &k) :
				  psim_lo(*wn);

		nw = lo;
		/* usually woken (or preempted) and so counted already */
		if (unlikely(!psim_runnable_settled(lo))) {
			nw = psim_task_wakeup(lo, &clear, &set);
			psim_store(wn, nw, pc);
			psim_cpu_counts(&pc->st, clear, set);
			if (groups)
				psim_groups_change(psim_word_group(next, lo),
						   cpu, clear, set, &k);
			changed |= clear | set;
		}
	}
	if (groups)
		psim_groups_oncpu(pc, cpu, wn ? psim_word_group(next, nw) : NULL,
				  nw & PSIM_TSK_MEMSTALL, &k);

	/*
	 * A switch between two runnable tasks changes no state (the common
	 * preemption): then neither the clock nor the state times need
	 * touching.
	 */
	if (changed || pc->st.oncpu != oncpu ||
	    pc->st.curr_memstall != !!(nw & PSIM_TSK_MEMSTALL)) {
		pc->st.oncpu = oncpu;
		pc->st.curr_memstall = !!(nw & PSIM_TSK_MEMSTALL);
		psim_update_at(&pc->st, cpu, k.now);
	} else {
		wake_clock = false;
	}
	psim_unlock(pc);

	if (wake_clock)
		psim_wake_clock();
}

/*
 * The plain sleep of psim_switch_grouped(), committed if no move came since
 * its test: then ->curr_grp and @prev's word are as tested, and @nested
 * says whether @prev counts in groups (those of ->curr_grp) or in the root
 * cgroup only. As psim_switch_sleep(), it keeps little across the lock:
 * @prev is current until the switch itself, and the CPU is this one.
 */
static __always_inline void psim_grouped_sleep(struct psim_pcpu *pc,
					       struct task_struct *next,
					       bool nested)
{
	struct task_struct *prev = current;

	psim_lock(pc);
	if (READ_ONCE(pc->curr) != prev->pid) {
		psim_unlock(pc);
		psim_switch_locked(pc, smp_processor_id(), false, prev, next);
		return;
	}
	psim_sleep_commit(pc, smp_processor_id(), psim_task_word(prev), nested);
	WRITE_ONCE(pc->curr, next->pid);
	psim_unlock(pc);
	psim_wake_clock();
}

static noinline void psim_switch_root_sleep(struct psim_pcpu *pc,
					    struct task_struct *next)
{
	psim_grouped_sleep(pc, next, false);
}

static noinline void psim_switch_nested_sleep(struct psim_pcpu *pc,
					      struct task_struct *next)
{
	psim_grouped_sleep(pc, next, true);
}

/*
 * A switch with per-cgroup accounting, its kind told (@kind). Both short
 * switches are told before the lock as without the groups, and two more
 * things must hold from the test on: ->curr_grp and both tasks' cgroups.
 * Both change only under a move, which marks ->curr first
 * (psim_mark_moved()), and ->curr is @prev's plain pid until this switch
 * writes it unless a move came. So the settled switch writes it by
 * compare-and-exchange from that pid, and the plain sleep commits under the
 * lock only if it still is; a switch whose test may have read what a move
 * changed goes the locked way.
 */
static __always_inline void psim_switch_grouped_kind(struct psim_pcpu *pc,
						     bool preempt,
						     struct task_struct *prev,
						     struct task_struct *next,
						     enum psim_switch_kind kind,
						     bool nested)
{
	pid_t curr = prev->pid;

	switch (kind) {
	case PSIM_SW_SETTLED:
		if (try_cmpxchg(&pc->curr, &curr, next->pid))
			return;
		break;
	case PSIM_SW_SLEEP:
		if (nested)
			psim_switch_nested_sleep(pc, next);
		else
			psim_switch_root_sleep(pc, next);
		return;
	default:
		break;
	}
	psim_switch_locked(pc, smp_processor_id(), preempt, prev, next);
}

/* Two tasks below the root cgroup: the look-up's registers are its own. */
static noinline void psim_switch_nested(struct psim_pcpu *pc, bool preempt,
					struct task_struct *prev,
					struct task_struct *next)
{
	psim_switch_grouped_kind(pc, preempt, prev, next,
				 psim_switch_nested_kind(pc, prev, next,
							 preempt, false),
				 true);
}

/*
 * A switch, the words in task_struct (@tasks) or anywhere: inlined, and
 * the CPU found again on the locked way rather than kept in a register
 * across the test.
 */
static __always_inline void psim_switch(struct psim_pcpu *pc, bool preempt,
					struct task_struct *prev,
					struct task_struct *next, bool tasks)
{
	enum psim_switch_kind kind;

	if (psim_groups_on()) {
		kind = psim_switch_kind(pc, prev, next, preempt, false, true,
					tasks);
		if (kind == PSIM_SW_NESTED)
			psim_switch_nested(pc, preempt, prev, next);
		else
			psim_switch_grouped_kind(pc, preempt, prev, next, kind,
						 false);
		return;
	}
	switch (psim_switch_kind(pc, prev, next, preempt, false, false, tasks)) {
	case PSIM_SW_SETTLED:
		WRITE_ONCE(pc->curr, next->pid);
		break;
	case PSIM_SW_SLEEP:
		WRITE_ONCE(pc->curr, next->pid);
		psim_switch_sleep(pc);
		break;
	default:
		psim_switch_locked(pc, smp_processor_id(), preempt, prev, next);
	}
}

/* The words in the pid table: out of line, its registers its own. */
static noinline void psim_switch_table(struct psim_pcpu *pc, bool preempt,
				       struct task_struct *prev,
				       struct task_struct *next)
{
	psim_switch(pc, preempt, prev, next, false);
}

static void psim_probe_switch(PSIM_SWITCH_PROTO)
{
	struct psim_pcpu *pc = this_cpu_ptr(&psim_pcpu);

	if (!psim_words_in_tasks()) {
		psim_switch_table(pc, preempt, prev, next);
		return;
	}
	psim_switch(pc, preempt, prev, next, true);
}

/*
 * Any other wakeup, with @pc (@cpu's) locked: out of line, so that the
 * common one below keeps fewer registers across its calls.
 */
static noinline void psim_wakeup_other(struct psim_pcpu *pc,
				       struct task_struct *p, u32 *w,
				       unsigned int cpu)
{
	struct psim_gclk k = { .queued = psim_enqueued_at(p) };
	unsigned int clear, set;
	u16 lo;

	if (!psim_word_here(READ_ONCE(*w), pc))
		w = psim_relocate_locked_slow(pc, p, cpu);
	lo = psim_groups_on() ? psim_settle(pc, cpu, p, w, &k) : psim_lo(*w);
	psim_store(w, psim_task_wakeup(lo, &clear, &set), pc);
	psim_cpu_counts(&pc->st, clear, set);
	psim_update_wakeup(&pc->st, p, cpu);
	if (psim_groups_on())
		psim_groups_change(psim_word_group(p, lo), cpu, clear, set, &k);
}

/*
 * The common wakeup, with @pc locked, @v @p's word @w: counted on this CPU
 * (and in its groups, which the caller changes, or in none), in no memory
 * stall, asleep in iowait or not: psim_task_wakeup() in short.
 */
static __always_inline void psim_wakeup_common(struct psim_pcpu *pc,
					       struct task_struct *p, u32 *w,
					       u32 v, unsigned int cpu)
{
	bool keep = !(v & PSIM_TSK_IOWAIT) && psim_run_inc_keeps_mask(&pc->st);

	psim_store(w, PSIM_TSK_RUNNING | (psim_lo(v) & PSIM_TSK_GROUP_BITS),
		   pc);
	if (v & PSIM_TSK_IOWAIT)
		psim_cpu_counts(&pc->st, PSIM_TSK_IOWAIT, 0);
	psim_cpu_counts(&pc->st, 0, PSIM_TSK_RUNNING);
	if (!keep)
		psim_update_wakeup(&pc->st, p, cpu);
}

/*
 * The common wakeup of a task counted in groups below the root: out of
 * line, so that the one in no group keeps fewer registers.
 */
static noinline void psim_wakeup_grouped(struct psim_pcpu *pc,
					 struct task_struct *p, u32 *w, u32 v)
{
	unsigned int cpu = task_cpu(p);
	struct psim_gclk k = { .queued = psim_enqueued_at(p) };

	psim_wakeup_common(pc, p, w, v, cpu);
	psim_groups_change(psim_cgroup_of_task(p), cpu, v & PSIM_TSK_IOWAIT,
			   PSIM_TSK_RUNNING, &k);
}

/* A wakeup that makes @p runnable; @w is its word. Out of line, as above. */
static noinline void psim_wakeup_locked(struct task_struct *p, u32 *w)
{
	struct psim_pcpu *pc = per_cpu_ptr(&psim_pcpu, task_cpu(p));
	unsigned int cpu;
	u32 v, top;

	/*
	 * Every wakeup here fires under the task's runqueue lock, so
	 * interrupts are off already: saving and restoring them is dead work.
	 * No pid race here as in the switch probe: the two tasks of an
	 * exec's pid swap are running, and a running task is not woken here;
	 * so the word looked up before the lock is still @p's
	 * (psim_word_on() in short).
	 */
	lockdep_assert_irqs_disabled();
	psim_lock(pc);
	/*
	 * Again from @p (stable under its runqueue lock) rather than kept
	 * across the lock in a register.
	 */
	cpu = task_cpu(p);
	v = READ_ONCE(*w);
	/* with per-cgroup accounting, a task of the root cgroup: no group */
	top = psim_groups_on() ? PSIM_TSK_GROUP_BITS : 0;
	if (likely((v & ~PSIM_TSK_IOWAIT) == (pc->wtag | top)))
		psim_wakeup_common(pc, p, w, v, cpu);
	else if (psim_groups_on() &&
		 (v & ~PSIM_TSK_IOWAIT) == (pc->wtag | PSIM_TSK_GROUPED))
		psim_wakeup_grouped(pc, p, w, v);
	else
		psim_wakeup_other(pc, p, w, cpu);
	psim_unlock(pc);

	psim_wake_clock();
}

static void psim_probe_wakeup(void *data, struct task_struct *p)
{
	u32 *w = psim_word_peek(p);

	/*
	 * A task woken before it left its runqueue is still counted as
	 * runnable: nothing to do. RUNNING is only ever cleared by the task's
	 * own switch-out, which cannot run concurrently with its wakeup. (A
	 * pid beyond the table is noted by the task's next switch.)
	 */
	if (!p->pid || !w || (READ_ONCE(*w) & PSIM_TSK_RUNNING))
		return;
	/*
	 * A task that wakes itself (try_to_wake_up() of current) is running
	 * and stays queued; the kernel's PSI does nothing. That wakeup fires
	 * without the runqueue lock, maybe with interrupts on: no lock here.
	 * Its next switch counts the task, if it was not counted yet.
	 */
	if (p == current)
		return;
	psim_wakeup_locked(p, w);
}

/*
 * A new task. Whatever its pid's word holds belongs to an earlier owner of
 * the pid: release_task() can free a pid before its task's last switch (a
 * thread reaps itself in exit_notify(), before do_task_dead()), and a pid
 * space that wraps quickly hands it out again meanwhile. Those counts are
 * taken off their CPU here, or they would stay counted for good; the old
 * owner's last switch then finds the new task's word under the same pid
 * and takes it off too, until the new task's next event counts it again.
 */
static void psim_probe_wakeup_new(void *data, struct task_struct *p)
{
	struct psim_pcpu *pc;
	unsigned int cpu;
	u32 *w;

	if (!p->pid)
		return;

	cpu = task_cpu(p);
	pc = per_cpu_ptr(&psim_pcpu, cpu);
	lockdep_assert_irqs_disabled();
	psim_lock(pc);
	w = psim_word_on(pc, p, cpu);
	if (w) {
		u32 left = READ_ONCE(*w) & PSIM_TSK_MASK;

		psim_store(w, PSIM_TSK_RUNNING, pc);
		psim_cpu_counts(&pc->st, left, PSIM_TSK_RUNNING);
		psim_update_wakeup(&pc->st, p, cpu);
		/*
		 * In its groups from the start (a word in task_struct has no
		 * earlier owner's flags: left is none of the groups' concern).
		 */
		if (psim_groups_on()) {
			struct psim_gclk k = { .queued = psim_enqueued_at(p) };

			psim_settle(pc, cpu, p, w, &k);
		}
	}
	psim_unlock(pc);

	psim_wake_clock();
}

/* Two CPUs' states locked, the lower CPU's first (relocation's order). */
static void psim_lock_two(unsigned int a, unsigned int b)
	__acquires(lower_lock) __acquires(higher_lock)
{
	if (a > b)
		swap(a, b);
	psim_lock(per_cpu_ptr(&psim_pcpu, a));
	psim_lock_nested(per_cpu_ptr(&psim_pcpu, b));
}

static void psim_unlock_two(unsigned int a, unsigned int b)
	__releases(lower_lock) __releases(higher_lock)
{
	psim_unlock(per_cpu_ptr(&psim_pcpu, a));
	psim_unlock(per_cpu_ptr(&psim_pcpu, b));
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
	if (!w)
		goto out;
	v = READ_ONCE(*w);
	if (psim_wcpu(v) < 0) {
		/*
		 * Counted nowhere: the destination's from now on, claimed as
		 * in psim_relocate_locked_slow(), no flags to move.
		 */
		if (cmpxchg(w, v, pd->wtag) == v)
			goto out;
		psim_unlock_two(src_cpu, dest_cpu);
		if (retried)
			goto out_unlocked;	/* the next event claims it */
		retried = true;
		goto again;
	}
	/* counts where no tracepoint showed them go (see psim_word_on()) */
	cur = psim_wcpu(v);
	if (cur != src_cpu && cur != dest_cpu) {
		psim_unlock_two(src_cpu, dest_cpu);
		if (retried)
			goto out_unlocked;	/* the next event moves them */
		retried = true;
		pc = per_cpu_ptr(&psim_pcpu, src_cpu);
		psim_lock(pc);
		if (p->pid)
			psim_word_on(pc, p, src_cpu);
		psim_unlock(pc);
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
	/* a word without flags moves too: dest's lock guards it from now on */
	if (clear) {
		pc = per_cpu_ptr(&psim_pcpu, cur);
		psim_cpu_counts(&pc->st, clear, 0);
		psim_update(&pc->st, cur);
	}
	/* a word that moved unseen, flags or not */
	if (cur != src_cpu)
		per_cpu_ptr(&psim_pcpu, cur)->relocations++;
	if (set) {
		psim_cpu_counts(&pd->st, 0, set);
		psim_update(&pd->st, dest_cpu);
	}
	if (psim_groups_on() && (v & PSIM_TSK_GROUPED)) {
		struct psim_cgroup *g = psim_cgroup_of_task(p);
		struct psim_gclk ks = { 0 }, kd = { 0 };

		psim_groups_change(g, cur, clear, 0, &ks);
		psim_groups_change(g, dest_cpu, 0, set, &kd);
	}
	psim_store(w, lo, pd);
out:
	psim_unlock_two(src_cpu, dest_cpu);
out_unlocked:
	local_irq_restore(flags);

	psim_wake_clock();
}

/* The memstall probes run in the stalled task's own context. */
static void psim_memstall(bool enter)
{
	struct task_struct *p = current;
	struct psim_gclk k = { 0 };
	unsigned int clear, set, cpu;
	struct psim_pcpu *pc;
	unsigned long flags;
	u16 lo, nw;
	u32 *w;

	if (!p->pid)
		return;

	local_irq_save(flags);
	cpu = smp_processor_id();
	pc = per_cpu_ptr(&psim_pcpu, cpu);
	psim_lock(pc);
	w = psim_word_on(pc, p, cpu);
	if (!w)
		goto out;
	lo = psim_groups_on() ? psim_settle(pc, cpu, p, w, &k) : psim_lo(*w);
	if (enter)
		nw = psim_task_memstall_enter(lo, &clear, &set);
	else
		nw = psim_task_memstall_leave(lo, &clear, &set);
	psim_store(w, nw, pc);
	if (clear | set) {
		psim_cpu_counts(&pc->st, clear, set);
		pc->st.oncpu = 1;
		pc->st.curr_memstall = !!(nw & PSIM_TSK_MEMSTALL);
		psim_update(&pc->st, cpu);
	}
	if (psim_groups_on()) {
		psim_groups_change(psim_word_group(p, lo), cpu, clear, set, &k);
		psim_groups_oncpu(pc, cpu, psim_word_group(p, nw),
				  nw & PSIM_TSK_MEMSTALL, &k);
	}
out:
	psim_unlock(pc);
	local_irq_restore(flags);

	psim_wake_clock();
}

static int psim_kp_memstall_enter(struct kprobe *kp, struct pt_regs *regs)
{
	psim_memstall(true);
	return 0;
}

static int psim_kp_memstall_leave(struct kprobe *kp, struct pt_regs *regs)
{
	psim_memstall(false);
	return 0;
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

static int psim_krp_exchange_entry(struct kretprobe_instance *ri,
				   struct pt_regs *regs)
{
	struct psim_xtids *x = (struct psim_xtids *)ri->data;

	x->left = (struct task_struct *)regs_get_kernel_argument(regs, 0);
	x->right = (struct task_struct *)regs_get_kernel_argument(regs, 1);
	return 0;
}

static int psim_krp_exchange_ret(struct kretprobe_instance *ri,
				 struct pt_regs *regs)
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
 * A CPU goes offline. Tracepoints stay silent on a CPU that is no longer
 * online (cpu_online() is their condition), and the dying CPU clears its
 * online bit in take_cpu_down() while its stopper thread runs: the
 * stopper's last switch, to the idle task, is never seen. Left alone, the
 * dead CPU would count the stopper as running there until it came back, a
 * non-idle CPU without stall that dilutes every system-wide share. The
 * kernel's PSI sees that switch: do what it does, where it happens. The
 * first thing the idle task does on a CPU that is offline is
 * cpuhp_report_idle_dead(), probed. Without that kprobe, when the control
 * CPU runs the CPU-dead callbacks: after cpu_wait_death(), which sleeps a
 * jiffy or more, so the CPU counts non-idle a little longer (the figures
 * are in docs/accuracy.md). Done twice is done once. The stopper is
 * parked, asleep; when the CPU comes back its unpark is a wakeup, seen as
 * usual.
 */
static enum cpuhp_state psim_hp_state;

static void psim_cpu_gone(unsigned int cpu, bool kprobe)
{
	struct psim_pcpu *pc = per_cpu_ptr(&psim_pcpu, cpu);
	struct psim_gclk k = { 0 };
	unsigned int clear, set;
	struct task_struct *p;
	unsigned long flags;
	u32 *w;

	local_irq_save(flags);
	rcu_read_lock();
	psim_lock(pc);
	w = psim_word_by_pid(psim_curr(pc), &p);
	if (w && psim_word_here(*w, pc)) {
		u16 lo = psim_lo(*w);

		psim_store(w, psim_task_switch_out(lo, true, false, false,
						   &clear, &set), pc);
		psim_cpu_counts(&pc->st, clear, set);
		if (psim_groups_on() && p)
			psim_groups_change(psim_word_group(p, lo), cpu, clear,
					   set, &k);
	}
	if (psim_groups_on())
		psim_groups_oncpu(pc, cpu, NULL, false, &k);
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
	psim_unlock(pc);
	rcu_read_unlock();
	local_irq_restore(flags);
}

/* Interrupts off, on the dying CPU itself (its idle task). */
static int psim_kp_idle_dead(struct kprobe *kp, struct pt_regs *regs)
{
	psim_cpu_gone(smp_processor_id(), true);
	return 0;
}

static int psim_cpu_dead(unsigned int cpu)
{
	psim_cpu_gone(cpu, false);
	return 0;
}

/*
 * The probes. Every probe has a detach, and nothing the probes touch is
 * freed before tracepoint_synchronize_unregister() has waited for the
 * last of them.
 */
/*
 * The attach order, the one rule every table below follows: a task's count
 * must never be set by an event whose undoing event is not attached yet, or
 * a task that exits (or a stall that ends) in between leaves it behind for
 * good. An event whose setting event was not seen is harmless: the
 * transitions ignore what is not counted. So, in psim_attach():
 *  1. exchange_tids() first: it only moves task words, and must be in place
 *     before any task is counted, or an exec meanwhile strands a word;
 *  2. the scheduler tracepoints in psim_sched_probes[] order: RUNNING is set
 *     by wakeups and switches, undone by the switch and moved by
 *     migration: migration, then the switch, then the wakeups (a task woken
 *     unseen meanwhile is counted when it is switched in);
 *  3. the dying CPU's switch to idle, which undoes the switch probe's
 *     counts;
 *  4. the memory stalls last, each stall's end before its begin (the
 *     kprobes in psim_memstall_kps[] order, the tracepoints in (end, begin)
 *     pairs); a memstall probe counts its task as running, which only the
 *     switch probe undoes.
 * Detach in any order: after tracepoint_synchronize_unregister() nothing
 * runs, and the state is thrown away.
 */
static struct psim_probe psim_sched_probes[] = {
	PSIM_PROBE(sched_migrate_task, psim_probe_migrate),
	PSIM_PROBE(sched_switch, psim_probe_switch),
	PSIM_PROBE(sched_wakeup_new, psim_probe_wakeup_new),
	PSIM_PROBE(sched_wakeup, psim_probe_wakeup),
};

/*
 * Memory stalls from mm tracepoints, where psi_memstall_*() do not exist,
 * in (end, begin) pairs; the slots of tracepoints a kernel's config leaves
 * out stay empty.
 */
static struct psim_probe psim_memstall_probes[] = {
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

/* register_kprobes() arms them in array order: the stall's end first. */
static struct kprobe psim_kp_enter, psim_kp_leave;
static struct kprobe *psim_memstall_kps[] = { &psim_kp_leave, &psim_kp_enter };
static bool psim_memstall_kps_attached;

static struct kretprobe psim_krp_xtids;
static bool psim_krp_xtids_attached;

static struct kprobe psim_kp_dead;
static bool psim_kp_dead_attached;

struct psim_probe_table {
	struct psim_probe *probes;
	int n;
};

static void psim_find_tracepoint(struct tracepoint *tp, void *priv)
{
	struct psim_probe_table *t = priv;
	int i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(tp->name, t->probes[i].name))
			t->probes[i].tp = tp;
}

/* Fill in each probe's tracepoint, found by name (they are not exported). */
void psim_probes_lookup(struct psim_probe *probes, int n)
{
	struct psim_probe_table t = { probes, n };

	for_each_kernel_tracepoint(psim_find_tracepoint, &t);
}

/* At module load: every scheduler tracepoint must exist. */
int psim_probes_find(void)
{
	int i;

	/*
	 * The first start's generation, from the clock: see psim_tasks
	 * (get_random_u32() would complain in dmesg before the random pool
	 * is ready, at an early load on 5.10)
	 */
	psim_gen = (u32)(sched_clock() >> 10);
	psim_probes_lookup(psim_sched_probes, ARRAY_SIZE(psim_sched_probes));
	psim_probes_lookup(psim_memstall_probes,
			   ARRAY_SIZE(psim_memstall_probes));
	for (i = 0; i < ARRAY_SIZE(psim_sched_probes); i++) {
		if (!psim_sched_probes[i].tp) {
			pr_err("tracepoint %s not found\n",
			       psim_sched_probes[i].name);
			return -ENOENT;
		}
	}
	return 0;
}

/*
 * Attach what of @probes was found; each one is optional. They come in
 * (end, begin) pairs: a begin is only attached after its end.
 */
int psim_attach_optional(struct psim_probe *probes, int n)
{
	int i, attached = 0;

	for (i = 0; i < n; i++) {
		probes[i].attached = probes[i].tp &&
			(i % 2 == 0 || probes[i - 1].attached) &&
			!tracepoint_probe_register(probes[i].tp,
						   probes[i].func, NULL);
		attached += probes[i].attached;
	}
	return attached;
}

void psim_detach_optional(struct psim_probe *probes, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (probes[i].attached)
			tracepoint_probe_unregister(probes[i].tp,
						    probes[i].func, NULL);
		probes[i].attached = false;
	}
}

static void psim_detach_sched(int n)
{
	while (n-- > 0)
		tracepoint_probe_unregister(psim_sched_probes[n].tp,
					    psim_sched_probes[n].func, NULL);
}

/* The kprobes: each set is optional, and what it costs is said once. */
static void psim_attach_xtids(void)
{
	int ret;

	memset(&psim_krp_xtids, 0, sizeof(psim_krp_xtids));
	psim_krp_xtids.kp.symbol_name = "exchange_tids";
	psim_krp_xtids.entry_handler = psim_krp_exchange_entry;
	psim_krp_xtids.handler = psim_krp_exchange_ret;
	psim_krp_xtids.data_size = sizeof(struct psim_xtids);
	ret = register_kretprobe(&psim_krp_xtids);
	psim_krp_xtids_attached = !ret;
	if (ret)
		pr_warn_once("no kretprobe on exchange_tids (%d): exec from a non-leader thread can leave counts behind\n",
			     ret);
}

static void psim_attach_idle_dead(void)
{
	int ret;

	memset(&psim_kp_dead, 0, sizeof(psim_kp_dead));
	psim_kp_dead.symbol_name = "cpuhp_report_idle_dead";
	psim_kp_dead.pre_handler = psim_kp_idle_dead;
	ret = register_kprobe(&psim_kp_dead);
	psim_kp_dead_attached = !ret;
	if (ret)
		pr_notice_once("no kprobe on cpuhp_report_idle_dead (%d): a CPU going offline counts as busy until its dead callback\n",
			       ret);
}

static void psim_attach_memstall(bool tp_only)
{
	int ret;

	memset(&psim_kp_enter, 0, sizeof(psim_kp_enter));
	psim_kp_enter.symbol_name = "psi_memstall_enter";
	psim_kp_enter.pre_handler = psim_kp_memstall_enter;
	memset(&psim_kp_leave, 0, sizeof(psim_kp_leave));
	psim_kp_leave.symbol_name = "psi_memstall_leave";
	psim_kp_leave.pre_handler = psim_kp_memstall_leave;
	ret = tp_only ? -ENOENT : register_kprobes(psim_memstall_kps,
						   ARRAY_SIZE(psim_memstall_kps));
	psim_memstall_kps_attached = !ret;
	if (ret) {
		int n = psim_attach_optional(psim_memstall_probes,
					     ARRAY_SIZE(psim_memstall_probes));

		if (tp_only)
			pr_notice_once("memstall_tracepoints=1: memory stalls from %d reclaim and compaction tracepoints only\n",
				       n);
		else
			pr_notice_once("no psi_memstall_enter/leave to probe (%d): memory stalls from %d reclaim and compaction tracepoints; kswapd and refaults are not seen\n",
				       ret, n);
	}
}

static void psim_detach_kprobes(void)
{
	psim_detach_optional(psim_memstall_probes,
			     ARRAY_SIZE(psim_memstall_probes));
	if (psim_memstall_kps_attached)
		unregister_kprobes(psim_memstall_kps,
				   ARRAY_SIZE(psim_memstall_kps));
	psim_memstall_kps_attached = false;
	if (psim_kp_dead_attached)
		unregister_kprobe(&psim_kp_dead);
	psim_kp_dead_attached = false;
	if (psim_krp_xtids_attached)
		unregister_kretprobe(&psim_krp_xtids);
	psim_krp_xtids_attached = false;
}

/* In the order stated above psim_sched_probes[]. */
static int psim_attach(bool memstall_tp_only)
{
	int i, ret;

	if (static_branch_unlikely(&psim_table_key))
		psim_attach_xtids();
	for (i = 0; i < ARRAY_SIZE(psim_sched_probes); i++) {
		ret = tracepoint_probe_register(psim_sched_probes[i].tp,
						psim_sched_probes[i].func, NULL);
		if (ret) {
			pr_err("cannot attach to %s: %d\n",
			       psim_sched_probes[i].name, ret);
			psim_detach_sched(i);
			psim_detach_kprobes();
			tracepoint_synchronize_unregister();
			return ret;
		}
	}
	psim_attach_idle_dead();
	psim_attach_memstall(memstall_tp_only);
	return 0;
}

static void psim_detach(void)
{
	psim_detach_sched(ARRAY_SIZE(psim_sched_probes));
	/* unregister_k(ret)probe() waits for running handlers itself. */
	psim_detach_kprobes();
	/* No probe may still be running once the state is freed. */
	tracepoint_synchronize_unregister();
}

/*
 * The table's size: pid_max now. The kernel does not export it; its sysctl
 * file says it, read in procfs itself (not in the loading task's /proc,
 * which a mount namespace may lack or cover). The limit if that fails.
 */
static unsigned int psim_read_pid_max(void)
{
	unsigned int v;

	if (!psim_proc_read_uint("sys/kernel/pid_max", &v) && v > 0 &&
	    v <= PID_MAX_LIMIT)
		return v;
	return PID_MAX_LIMIT;
}

/* Every task's psi_flags to 0; with no probe attached. */
static void psim_task_words_clear(void)
{
	struct task_struct *g, *t;

	if (!psim_have_task_word())
		return;
	rcu_read_lock();
	for_each_process_thread(g, t)
		WRITE_ONCE(*psim_task_word(t), 0);
	rcu_read_unlock();
}

/*
 * Where the words live (see psim_tasks): task_struct->psi_flags where the
 * kernel has it and its PSI is off (@kernel_psi false), else a fresh table.
 */
static int psim_store_start(bool kernel_psi)
{
	/* said once per load, and again when the table's size changes */
	static unsigned int said = UINT_MAX;

	if (psim_have_task_word() && !kernel_psi) {
		static_branch_disable(&psim_table_key);
		psim_task_words_clear();
		if (said)
			pr_info("task states in task_struct (psi_flags)\n");
		said = 0;
		return 0;
	}
	psim_tasks_nr = psim_read_pid_max();
	psim_pid_beyond = 0;
	psim_beyond_said = false;
	psim_tasks = vzalloc(array_size(psim_tasks_nr, sizeof(*psim_tasks)));
	if (!psim_tasks)
		return -ENOMEM;
	static_branch_enable(&psim_table_key);
	if (said != psim_tasks_nr)
		pr_info("task states in a table of %u pids (pid_max; %zu KiB)\n",
			psim_tasks_nr,
			array_size(psim_tasks_nr, sizeof(u32)) / 1024);
	said = psim_tasks_nr;
	return 0;
}

/* With no probe attached any more. */
static void psim_store_stop(void)
{
	if (!psim_tasks) {
		psim_task_words_clear();
		return;
	}
	vfree(psim_tasks);
	psim_tasks = NULL;
	psim_tasks_nr = 0;
}

/*
 * From the averaging work: a task whose pid is beyond the table is not
 * counted. Said once per start; pid_max was raised after it.
 */
void psim_probes_check(void)
{
	unsigned int pid = READ_ONCE(psim_pid_beyond);

	if (pid && !psim_beyond_said) {
		psim_beyond_said = true;
		pr_warn("pid %u is beyond pid_max at the start (%u): tasks with such pids are not counted; set enable=0 then 1, or reload psi_mod, to count them\n",
			pid, psim_tasks_nr);
	}
}

/* The table's entries, 0 where the words are in task_struct. */
unsigned int psim_store_table_size(void)
{
	return psim_tasks ? psim_tasks_nr : 0;
}

/* Fresh state, then the probes. */
int psim_probes_start(bool memstall_tp_only, bool kernel_psi)
{
	int cpu, ret;

	/* a word's upper half holds a CPU number plus one */
	BUILD_BUG_ON(CONFIG_NR_CPUS >= (1UL << (32 - PSIM_WCPU_SHIFT)));
	/* this start's tags: past the former start's (see psim_tasks) */
	psim_gen = (psim_gen + 1) %
		   max(0xffffU / nr_cpu_ids, 1U);
	psim_gen_base = psim_gen * nr_cpu_ids;
	ret = psim_store_start(kernel_psi);
	if (ret)
		return ret;

	for_each_possible_cpu(cpu) {
		struct psim_pcpu *pc = per_cpu_ptr(&psim_pcpu, cpu);

		raw_spin_lock_init(&pc->lock);
		seqcount_raw_spinlock_init(&pc->seq, &pc->lock);
		/*
		 * oncpu starts at 0: what runs on each CPU now is not counted
		 * yet, and a counted task queued behind it is indeed stalled.
		 */
		memset(&pc->st, 0, sizeof(pc->st));
		pc->curr = 0;
		pc->curr_grp = NULL;
		pc->relocations = 0;
		pc->wtag = (psim_gen_base + cpu + 1) << PSIM_WCPU_SHIFT;
		pc->dead_kprobe = 0;
		pc->dead_callback = 0;
		pc->st.state_start = cpu_clock(cpu);
	}

	/* Teardown of a BP state: runs on a control CPU after the death. */
	ret = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "psi_mod:dead",
					NULL, psim_cpu_dead);
	if (ret < 0) {
		pr_err("cannot register for CPU hotplug: %d\n", ret);
		goto err_free;
	}
	psim_hp_state = ret;

	/* moves between cgroups are seen before any task is counted */
	if (psim_cgroups_counting()) {
		ret = psim_probes_cgroups(true);
		if (ret)
			goto err_hp;
	}
	ret = psim_attach(memstall_tp_only);
	if (ret)
		goto err_cg;
	return 0;

err_cg:
	psim_probes_cgroups(false);
err_hp:
	cpuhp_remove_state_nocalls(psim_hp_state);
err_free:
	psim_store_stop();
	return ret;
}

/* Sum of count underflows on all CPUs: nonzero means a model bug. */
static u32 psim_underflows(void)
{
	u32 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(&psim_pcpu, cpu)->st.underflows);
	return sum;
}

/* Every probe detached and finished, then the state goes. */
void psim_probes_stop(void)
{
	u32 underflows;

	psim_detach();
	psim_probes_cgroups(false);
	underflows = psim_underflows();
	if (underflows)
		pr_err("%u task count underflows: accounting bug, please report\n",
		       underflows);
	/* Waits for a running callback: it uses the task words. */
	cpuhp_remove_state_nocalls(psim_hp_state);
	psim_store_stop();
}

/*
 * Interrupt time for @cpu's IRQ_FULL (psi_irq.c), on that CPU with
 * interrupts off: the kernel's psi_account_irqtime(), which also wakes the
 * trigger fast path when a trigger watches irq.
 */
void psim_irq_charge(int cpu, u64 delta)
{
	struct psim_pcpu *pc = per_cpu_ptr(&psim_pcpu, cpu);
	struct psim_cgroup *g;

	psim_lock(pc);
	pc->st.times[PSIM_IRQ_FULL] += delta;
	/* and to the groups of the task it interrupted, as the kernel's */
	for (g = psim_groups_on() ? pc->curr_grp : NULL; g; g = g->parent) {
		psim_gst(g, cpu)->times[PSIM_IRQ_FULL] += delta;
		psim_cgroup_poll_kick(g, BIT(PSIM_IRQ_FULL));
	}
	psim_unlock(pc);
	psim_poll_kick(BIT(PSIM_IRQ_FULL));
}

/*
 * The aggregation's view of a CPU: a consistent copy of its state and the
 * CPU's clock at the copy, which is returned; the time since the state's
 * start is the reader's to add (psim_cpu_recent_times()). No lock and no
 * write: a user looping on a pressure file costs the probes nothing, the
 * reader retries if a probe wrote meanwhile.
 */
static u64 psim_snapshot(int cpu, const struct psim_cpu_state *st,
			 struct psim_cpu_state *snap)
{
	struct psim_pcpu *pc = per_cpu_ptr(&psim_pcpu, cpu);
	unsigned int seq;
	u64 now;

	do {
		seq = read_seqcount_begin(&pc->seq);
		now = cpu_clock(cpu);
		*snap = *st;
	} while (read_seqcount_retry(&pc->seq, seq));
	return now;
}

u64 psim_cpu_snapshot(int cpu, struct psim_cpu_state *snap)
{
	return psim_snapshot(cpu, &per_cpu_ptr(&psim_pcpu, cpu)->st, snap);
}

/* The same for a group's state on @cpu, under the same CPU's seqcount. */
u64 psim_cgroup_snapshot(struct psim_cgroup *g, int cpu,
			 struct psim_cpu_state *snap)
{
	return psim_snapshot(cpu, psim_gst(g, cpu), snap);
}

/* The debug view of a CPU (psi_proc.c's debugfs file). */
void psim_cpu_debug(int cpu, struct psim_cpu_debug *d)
{
	struct psim_pcpu *pc = per_cpu_ptr(&psim_pcpu, cpu);
	unsigned long flags;

	raw_spin_lock_irqsave(&pc->lock, flags);
	d->st = pc->st;
	d->relocations = pc->relocations;
	d->dead_kprobe = pc->dead_kprobe;
	d->dead_callback = pc->dead_callback;
	raw_spin_unlock_irqrestore(&pc->lock, flags);
}
