/* SPDX-License-Identifier: GPL-2.0 */
/*
 * psi_mod: the pure logic of pressure stall accounting.
 *
 * Everything in this header is arithmetic on plain structures: no locks, no
 * clocks, no kernel objects. The module wraps it with per-CPU locking and the
 * scheduler clock; the user-space unit tests (tests/unit) include it as it is
 * and check it against hand-computed values and a reference model.
 *
 * The reference for every rule here is the kernel's own kernel/sched/psi.c
 * (test_state(), record_times(), get_recent_times(), collect_percpu_times(),
 * update_averages(), calc_avgs()) and include/linux/sched/loadavg.h.
 */
#ifndef PSI_MOD_LOGIC_H
#define PSI_MOD_LOGIC_H

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/types.h>
#include <linux/math64.h>
#include <linux/string.h>
#include <linux/errno.h>
#else
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long s64;
#define BIT(nr)	(1UL << (nr))
static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}
#endif

/* Per-CPU task counts, in the kernel's order (enum psi_task_count). */
enum psim_task_count {
	PSIM_NR_IOWAIT,
	PSIM_NR_MEMSTALL,
	PSIM_NR_RUNNING,
	PSIM_NR_MEMSTALL_RUNNING,
	PSIM_NR_COUNTS,
};

/*
 * Per-task flags: bit n says the task is counted in count n on the CPU it is
 * charged to, so a task's flags are exactly the clear mask that takes it off
 * a CPU. The upper byte of a task word holds its memstall nesting depth.
 */
#define PSIM_TSK_IOWAIT			BIT(PSIM_NR_IOWAIT)
#define PSIM_TSK_MEMSTALL		BIT(PSIM_NR_MEMSTALL)
#define PSIM_TSK_RUNNING		BIT(PSIM_NR_RUNNING)
#define PSIM_TSK_MEMSTALL_RUNNING	BIT(PSIM_NR_MEMSTALL_RUNNING)
#define PSIM_TSK_MASK			((1U << PSIM_NR_COUNTS) - 1)
/*
 * Per-cgroup accounting (cgroups=1): the task's flags are counted in its
 * cgroup's group and every ancestor's too, not only on the CPU. A word
 * without it counts on the CPU alone, until an event of the task adds it
 * to its groups (a task the groups have not seen yet, or one in the middle
 * of a move between cgroups). Every transition below keeps it as it is,
 * but a task's death, which ends all of its counting.
 */
#define PSIM_TSK_GROUPED		BIT(7)
/*
 * With PSIM_TSK_GROUPED: the task is in the root cgroup, so its flags
 * count in no group, and the probes need not look its group up. Set and
 * cleared with PSIM_TSK_GROUPED, kept as it by every transition.
 */
#define PSIM_TSK_TOPCG			BIT(6)
#define PSIM_TSK_GROUP_BITS		(PSIM_TSK_GROUPED | PSIM_TSK_TOPCG)
#define PSIM_DEPTH_SHIFT		8
#define PSIM_DEPTH_MAX			0xffU
#define PSIM_DEPTH_BITS			(PSIM_DEPTH_MAX << PSIM_DEPTH_SHIFT)

/*
 * Pressure states, in the kernel's order (enum psi_states of a kernel
 * with CONFIG_IRQ_TIME_ACCOUNTING). IRQ_FULL is a time only, never in a
 * state mask: interrupt time charged to the CPU while a non-idle task was
 * its current one (psi_irq.c), zero unless psi_mod's irq=1.
 */
enum psim_states {
	PSIM_IO_SOME,
	PSIM_IO_FULL,
	PSIM_MEM_SOME,
	PSIM_MEM_FULL,
	PSIM_CPU_SOME,
	PSIM_CPU_FULL,
	PSIM_IRQ_FULL,
	PSIM_NONIDLE,	/* per-CPU only: weighs the CPU in the average */
	PSIM_NR_STATES,
};

enum psim_res {
	PSIM_IO,
	PSIM_MEM,
	PSIM_CPU,
	PSIM_IRQ,
	PSIM_NR_RES,
};

/*
 * The state of a resource's some (@full 0) or full line, or -1: irq has
 * only a full line (the kernel's res * 2 + full, and for irq the state
 * before it, psi_write()).
 */
static inline int psim_res_state(enum psim_res res, bool full)
{
	if (res == PSIM_IRQ)
		return full ? PSIM_IRQ_FULL : -1;
	if (res >= PSIM_IRQ)
		return -1;
	return res * 2 + (full ? 1 : 0);
}

/* Averaging constants of the kernel's PSI and loadavg. */
#define PSIM_FSHIFT	11
#define PSIM_FIXED_1	BIT(PSIM_FSHIFT)
#define PSIM_EXP_10s	1677	/* 1/exp(2s/10s) as fixed-point */
#define PSIM_EXP_60s	1981	/* 1/exp(2s/60s) */
#define PSIM_EXP_300s	2034	/* 1/exp(2s/300s) */
#define PSIM_LOAD_INT(x)	((x) >> PSIM_FSHIFT)
#define PSIM_LOAD_FRAC(x)	PSIM_LOAD_INT(((x) & (PSIM_FIXED_1 - 1)) * 100)

/* The state of one CPU as the scheduler events leave it. */
struct psim_cpu_state {
	unsigned int tasks[PSIM_NR_COUNTS];
	u32 state_mask;		/* bit s: state s is in effect since state_start */
	u8 oncpu;		/* a non-idle task is running on the CPU */
	u8 curr_memstall;	/* ... and it is itself stalled on memory */
	u64 state_start;
	u64 times[PSIM_NR_STATES];	/* ns spent in each state */
	u32 underflows;		/* clears of a zero count: must stay 0 */
};

/*
 * The kernel's test_state() for all the states at once, written out: it runs
 * on every switch and wakeup, and a loop over the states did not unroll
 * (docs/overhead.md). tests/unit/test_states.c checks it against the
 * kernel's rules for every combination of counts.
 */
static inline u32 psim_state_mask(const struct psim_cpu_state *c)
{
	unsigned int io = c->tasks[PSIM_NR_IOWAIT];
	unsigned int mem = c->tasks[PSIM_NR_MEMSTALL];
	unsigned int run = c->tasks[PSIM_NR_RUNNING];
	u32 mask = 0;

	if (io) {
		mask |= BIT(PSIM_IO_SOME) | BIT(PSIM_NONIDLE);
		if (!run)
			mask |= BIT(PSIM_IO_FULL);
	}
	if (mem) {
		mask |= BIT(PSIM_MEM_SOME) | BIT(PSIM_NONIDLE);
		if (run == c->tasks[PSIM_NR_MEMSTALL_RUNNING])
			mask |= BIT(PSIM_MEM_FULL);
	}
	if (run) {
		mask |= BIT(PSIM_NONIDLE);
		if (run > c->oncpu)
			mask |= BIT(PSIM_CPU_SOME);
		if (!c->oncpu)
			mask |= BIT(PSIM_CPU_FULL);
	}
	/*
	 * As in the kernel: a CPU whose current task is reclaiming is in a
	 * full memory stall, since nothing productive could run there.
	 */
	if (c->oncpu && c->curr_memstall)
		mask |= 1U << PSIM_MEM_FULL;
	return mask;
}

/*
 * Two changes whose effect on the mask is known without computing it (the
 * probes' common wakeup and blocking switch; tests/unit/test_states.c
 * checks them against psim_state_mask() for every combination of counts).
 * With no memory stall on the CPU and more runnable tasks than it runs,
 * one more runnable task (not one leaving iowait) changes no state: CPU
 * some, nonidle and the full states' conditions on the runnable count
 * hold before and after. One runnable task fewer, the CPU still running
 * one, changes none either while at least two stay runnable.
 */
static inline bool psim_run_inc_keeps_mask(const struct psim_cpu_state *c)
{
	return !c->tasks[PSIM_NR_MEMSTALL] &&
	       c->tasks[PSIM_NR_RUNNING] > c->oncpu;
}

static inline bool psim_run_dec_keeps_mask(const struct psim_cpu_state *c)
{
	return !c->tasks[PSIM_NR_MEMSTALL] &&
	       c->tasks[PSIM_NR_RUNNING] > c->oncpu + 1U;
}

/*
 * Time since the current period began. A clock read on another CPU (the
 * aggregator's, a remote wakeup's) may be a hair behind this CPU's period
 * start: that is no time at all, not a wrap.
 */
static inline u64 psim_elapsed(const struct psim_cpu_state *c, u64 now)
{
	return (s64)(now - c->state_start) > 0 ? now - c->state_start : 0;
}

/* Charge the time since state_start to the states that were in effect. */
static inline void psim_record_times(struct psim_cpu_state *c, u64 now)
{
	u64 delta = psim_elapsed(c, now);
	u32 m;

	/* nothing to charge; and an earlier @now must not move the start */
	if (!delta)
		return;
	c->state_start = now;
	/* Usually one or two states are in effect: visit only those. */
	for (m = c->state_mask & (BIT(PSIM_NR_STATES) - 1); m; m &= m - 1)
		c->times[__builtin_ctz(m)] += delta;
}

/*
 * After a change of counts: the CPU's new state mask in *@mask, and whether
 * it differs from the one in effect. Only then does the current period have
 * to end (psim_set_mask(), which needs the time): charging a period in one
 * piece or in several gives the same times, so an event that changes no
 * state needs no clock read. The kernel cuts a period at every task change;
 * psi_mod cuts it where the mask changes, and a reader adds the running
 * period's time to its copy (psim_cpu_recent_times()). The times are
 * 64-bit, so a long period loses nothing; what one collection takes of
 * them is bounded as the kernel's (psim_cpu_recent_times()).
 */
static inline bool psim_mask_changes(const struct psim_cpu_state *c, u32 *mask)
{
	*mask = psim_state_mask(c);
	return *mask != c->state_mask;
}

/* End the current period at @now; @mask is in effect from @now on. */
static inline void psim_set_mask(struct psim_cpu_state *c, u64 now, u32 mask)
{
	psim_record_times(c, now);
	c->state_mask = mask;
}

/*
 * Apply one task's change of counts. A clear of a zero count is refused and
 * remembered in ->underflows (the kernel's "task underflow" check), so a
 * count can never wrap.
 */
static inline void psim_cpu_counts(struct psim_cpu_state *c,
				   unsigned int clear, unsigned int set)
{
	unsigned int t;

	for (; clear; clear &= clear - 1) {
		t = __builtin_ctz(clear);
		if (c->tasks[t])
			c->tasks[t]--;
		else
			c->underflows++;
	}
	for (; set; set &= set - 1)
		c->tasks[__builtin_ctz(set)]++;
}

/*
 * Per-task transitions. Each returns the task's new word and fills the
 * counts to clear and set on the CPU the task is charged to. They are total
 * functions of the task's word: a task the module has not seen yet has
 * word 0 ("not counted"), and every event moves it only between states that
 * keep its CPU's counts consistent, whatever was missed before.
 */
static inline unsigned int psim_depth(u16 w)
{
	return w >> PSIM_DEPTH_SHIFT;
}

/*
 * The task is running or queued to run: make sure it counts as runnable.
 * A task inside a memory stall (depth > 0) also counts as memstall: its
 * MEMSTALL count may have been left behind on the CPU it slept on.
 */
static inline u16 psim_make_runnable(u16 w, unsigned int *clear,
				     unsigned int *set)
{
	unsigned int want = PSIM_TSK_RUNNING;

	if (psim_depth(w))
		want |= PSIM_TSK_MEMSTALL | PSIM_TSK_MEMSTALL_RUNNING;
	*clear = w & PSIM_TSK_IOWAIT;
	*set = want & ~w;
	return (w & ~*clear) | *set;
}

/*
 * Whether psim_make_runnable() would leave @w as it is: the task counts as
 * runnable already, with the memory stall its depth says, and not in
 * iowait.
 */
static inline bool psim_runnable_settled(u16 w)
{
	const unsigned int ms = PSIM_TSK_MEMSTALL | PSIM_TSK_MEMSTALL_RUNNING;

	if ((w & (PSIM_TSK_RUNNING | PSIM_TSK_IOWAIT)) != PSIM_TSK_RUNNING)
		return false;
	return !psim_depth(w) || (w & ms) == ms;
}

/* A wakeup, or the task being switched in. */
static inline u16 psim_task_wakeup(u16 w, unsigned int *clear,
				   unsigned int *set)
{
	return psim_make_runnable(w, clear, set);
}

/*
 * The task leaves the CPU. @sleep: it was dequeued (blocked); otherwise it
 * was preempted and stays runnable. @iowait: it sleeps in io_schedule().
 * @dead: its last switch; all its state goes.
 */
static inline u16 psim_task_switch_out(u16 w, bool sleep, bool iowait,
				       bool dead, unsigned int *clear,
				       unsigned int *set)
{
	if (dead) {
		*clear = w & PSIM_TSK_MASK;
		*set = 0;
		return 0;
	}
	if (!sleep)
		return psim_make_runnable(w, clear, set);
	*clear = w & (PSIM_TSK_RUNNING | PSIM_TSK_MEMSTALL_RUNNING);
	*set = (iowait && !(w & PSIM_TSK_IOWAIT)) ? PSIM_TSK_IOWAIT : 0;
	return (w & ~*clear) | *set;
}

/* psi_memstall_enter() by the running task; these nest. */
static inline u16 psim_task_memstall_enter(u16 w, unsigned int *clear,
					   unsigned int *set)
{
	unsigned int depth = psim_depth(w);

	*clear = 0;
	*set = 0;
	if (depth == PSIM_DEPTH_MAX)
		return w;
	w = (w & ~PSIM_DEPTH_BITS) | ((depth + 1) << PSIM_DEPTH_SHIFT);
	/* It runs, so it is runnable even if we never saw it wake. */
	return psim_make_runnable(w, clear, set);
}

/* psi_memstall_leave(): only the outermost one ends the stall. */
static inline u16 psim_task_memstall_leave(u16 w, unsigned int *clear,
					   unsigned int *set)
{
	unsigned int depth = psim_depth(w);

	*clear = 0;
	*set = 0;
	if (depth == 0)		/* entered before we were loaded */
		return w;
	if (--depth == 0)
		*clear = w & (PSIM_TSK_MEMSTALL | PSIM_TSK_MEMSTALL_RUNNING);
	return (w & ~PSIM_DEPTH_BITS & ~*clear) | (depth << PSIM_DEPTH_SHIFT);
}

/*
 * The task changes CPU; @src_clear comes off the old CPU and @dst_set goes
 * onto the new one. A queued task (RUNNING) takes all its counts along. A
 * waking task only leaves the old CPU: like the kernel's psi_ttwu_dequeue(),
 * its sleep states end there, and the wakeup that follows charges it as
 * runnable (and memstall, by its depth) on the new CPU.
 */
static inline u16 psim_task_migrate(u16 w, unsigned int *src_clear,
				    unsigned int *dst_set)
{
	if (w & PSIM_TSK_RUNNING) {
		*src_clear = w & PSIM_TSK_MASK;
		*dst_set = *src_clear;
		return w;
	}
	*src_clear = w & PSIM_TSK_MASK;
	*dst_set = 0;
	return w & ~PSIM_TSK_MASK;
}

/*
 * Aggregation. One aggregator (the kernel's PSI_AVGS) folds per-CPU state
 * times into system totals, weighting each CPU by its non-idle time, and
 * feeds 2 s samples into exponential moving averages.
 */
struct psim_group {
	u64 total[PSIM_NR_STATES - 1];		/* ns, cumulative */
	u64 avg_total[PSIM_NR_STATES - 1];	/* part of total averaged */
	unsigned long avg[PSIM_NR_STATES - 1][3];
	unsigned long seen[3];			/* warm-up weights, see below */
	unsigned int unfolded;			/* periods to leave out, below */
	u64 avg_last_update;
	u64 avg_next_update;
	u64 period;				/* ns between samples */
};

/*
 * The state times of one CPU since the previous call, given a snapshot of
 * its state taken at @now. Active states are included up to @now, so a long
 * stall shows before it ends. @times_prev is the aggregator's own record.
 * Returns a mask of the states whose time moved.
 *
 * Each time is the growth modulo 2^32 ns, as in the kernel: its per-CPU
 * times, their records and the deltas of get_recent_times() are u32, all
 * wrapping alike, so a collection that comes more than 4.29 s after the
 * previous one (the averaging work starved by realtime tasks, a guest's
 * clock jump) sees the growth modulo 2^32, never more. Carried whole, an
 * hour's growth would read as a full stall for another hour after the
 * stall ended (the averages carry what exceeds a period forward), and
 * times the non-idle weight (psim_accumulate()) overflows u64.
 *
 * A state counted up to an earlier call's @now may since have been ended
 * before it (a wakeup is timed at its enqueue, which can precede that
 * sample): its time then reads less than recorded. That is taken as no
 * growth, and the record kept, so the overlap is counted once.
 */
static inline u32 psim_cpu_recent_times(const struct psim_cpu_state *snap,
					u64 now, u64 *times_prev, u64 *times)
{
	u64 live = psim_elapsed(snap, now);
	u32 changed = 0;
	int s;

	for (s = 0; s < PSIM_NR_STATES; s++) {
		u64 t = snap->times[s];

		if (snap->state_mask & (1U << s))
			t += live;
		if (t < times_prev[s])
			t = times_prev[s];
		times[s] = (u32)(t - times_prev[s]);
		times_prev[s] = t;
		if (times[s])
			changed |= 1U << s;
	}
	return changed;
}

/*
 * Weigh one CPU's recent times by its non-idle time (in jiffies): both are
 * below 2^32 (psim_cpu_recent_times()), so the product fits.
 */
static inline void psim_accumulate(u64 *deltas, const u64 *times,
				   unsigned long nonidle)
{
	int s;

	for (s = 0; s < PSIM_NONIDLE; s++)
		deltas[s] += times[s] * nonidle;
}

/* The weighted deltas of all CPUs into an aggregator's totals. */
static inline void psim_fold_into(u64 *total, const u64 *deltas,
				  unsigned long nonidle_total)
{
	int s;

	if (!nonidle_total)
		nonidle_total = 1;
	for (s = 0; s < PSIM_NR_STATES - 1; s++)
		total[s] += div_u64(deltas[s], nonidle_total);
}

/* include/linux/sched/loadavg.h: calc_load() */
static inline unsigned long psim_calc_load(unsigned long load,
					   unsigned long exp,
					   unsigned long active)
{
	unsigned long newload;

	newload = load * exp + active * (PSIM_FIXED_1 - exp);
	if (active >= load)
		newload += PSIM_FIXED_1 - 1;
	return newload / PSIM_FIXED_1;
}

/* kernel/sched/loadavg.c: fixed_power_int(), x^n in FSHIFT fixed point */
static inline unsigned long psim_fixed_power(unsigned long x, unsigned int n)
{
	unsigned long result = PSIM_FIXED_1;

	while (n) {
		if (n & 1) {
			result *= x;
			result += 1UL << (PSIM_FSHIFT - 1);
			result >>= PSIM_FSHIFT;
		}
		n >>= 1;
		if (!n)
			break;
		x *= x;
		x += 1UL << (PSIM_FSHIFT - 1);
		x >>= PSIM_FSHIFT;
	}
	return result;
}

/* calc_load_n(): n periods of @active at once, for missed periods. */
static inline unsigned long psim_calc_load_n(unsigned long load,
					     unsigned long exp,
					     unsigned long active,
					     unsigned int n)
{
	return psim_calc_load(load, psim_fixed_power(exp, n), active);
}

/*
 * One fold of the three averages, in calc_avgs()'s steps: @missed periods
 * of @missed_active at once, then one period of @active.
 */
static inline void psim_fold3(unsigned long avg[3], unsigned int missed,
			      unsigned long missed_active,
			      unsigned long active)
{
	static const unsigned long exp[3] = {
		PSIM_EXP_10s, PSIM_EXP_60s, PSIM_EXP_300s
	};
	int i;

	for (i = 0; i < 3; i++) {
		if (missed)
			avg[i] = psim_calc_load_n(avg[i], exp[i],
						  missed_active, missed);
		avg[i] = psim_calc_load(avg[i], exp[i], active);
	}
}

static inline void psim_calc_avgs(unsigned long avg[3],
				  unsigned int missed_periods,
				  u64 time, u64 period)
{
	/* zeroes for periods of no activity, then the most recent one */
	psim_fold3(avg, missed_periods, 0,
		   div_u64(time * 100, period) * PSIM_FIXED_1);
}

/*
 * Warm-up (opt-in: the module's warmup=1). The kernel's averages start
 * from zero at boot, as a new cgroup's do at its creation, and so do
 * psi_mod's at its load by default: avg10 shows 63% of a steady stall 10 s
 * after the load and avg300 after 5 minutes. On a machine that has been
 * stalling for hours before the load, a consumer such as oomd may take
 * that for calm. With the warm-up each average is shown divided by the
 * weight of the periods seen so far: @seen is the same
 * moving average fed 100% for every period since the load (periods missed
 * while idle included: they were seen, as zeros), 100% * (1 - exp^n) after
 * n periods, in the averages' own scale so that its rounding stays below
 * the last digit shown. The quotient is the average over the time
 * observed, with the kernel's weights; on a steady load it is the load's
 * share from the first period folded on. calc_load() rounds up while active >=
 * load, so seen reaches 100% exactly (avg10 after 56 periods, 2 minutes;
 * avg60 after 282; avg300 after 1140, 38 minutes; unit-tested), and from
 * then on the shown value is the kernel's own arithmetic, bit for bit.
 */
#define PSIM_AVG_100	(100 * PSIM_FIXED_1)

static inline void psim_calc_seen(unsigned long seen[3],
				  unsigned int missed_periods)
{
	psim_fold3(seen, missed_periods, PSIM_AVG_100, PSIM_AVG_100);
}

/* The value to show for a raw average @avg with warm-up weight @seen. */
static inline unsigned long psim_avg_shown(unsigned long avg,
					   unsigned long seen)
{
	u64 v;

	if (seen >= PSIM_AVG_100)
		return avg;
	if (!seen)
		return 0;
	v = div_u64((u64)avg * PSIM_AVG_100, seen);
	/* rounding may overshoot a 100% average by a hair */
	return v < PSIM_AVG_100 ? v : PSIM_AVG_100;
}

static inline void psim_group_init(struct psim_group *g, u64 now, u64 period)
{
	memset(g, 0, sizeof(*g));
	g->period = period;
	g->avg_last_update = now;
	g->avg_next_update = now + period;
}

/*
 * The group at the module's load. Without the warm-up: the kernel's
 * averages from zero, every period folded from the first on, each shown
 * as it is (a weight of 100% from the start). With it: the first period,
 * which misses what began before the load, goes to the totals only (it
 * would weigh as much as any later period), and the weights start at 0.
 * The trade-off: the warm-up shows a steady stall at once but
 * over-reports a burst right after the load for as long as the weights
 * are low (20 s of a stall read in full by avg300 until far more time
 * has been seen).
 */
static inline void psim_group_start(struct psim_group *g, u64 now,
				    u64 period, bool warmup)
{
	int i;

	psim_group_init(g, now, period);
	if (warmup)
		g->unfolded = 1;
	else
		for (i = 0; i < 3; i++)
			g->seen[i] = PSIM_AVG_100;
}

/*
 * Feed the samples since the last update into the averages; called when
 * @now has reached avg_next_update. Periods missed while the system was idle
 * (the work is not rearmed then) decay the averages in one go. Returns the
 * next update time, on the fixed grid of periods so that late work does not
 * drift.
 */
static inline u64 psim_update_averages(struct psim_group *g, u64 now)
{
	u64 expires = g->avg_next_update;
	unsigned long missed = 0;
	u64 next, period;
	int s;

	/* The kernel divides by a u32 period too: 2 s fits. */
	if (now - expires >= g->period)
		missed = div_u64(now - expires, g->period);

	next = expires + (1 + missed) * g->period;
	period = now - (g->avg_last_update + missed * g->period);
	g->avg_last_update = now;

	/*
	 * A period the averages leave out (the module's first: its start
	 * misses what began before the load), counted in the totals only.
	 */
	if (g->unfolded) {
		g->unfolded--;
		memcpy(g->avg_total, g->total, sizeof(g->avg_total));
		return next;
	}

	for (s = 0; s < PSIM_NR_STATES - 1; s++) {
		/* u32 as the kernel's sample: it truncates alike */
		u32 sample = g->total[s] - g->avg_total[s];

		/*
		 * Time sampled late can slip into the next period; rather
		 * than report more than 100%, carry the excess forward.
		 */
		if (sample > period)
			sample = period;
		g->avg_total[s] += sample;
		psim_calc_avgs(g->avg[s], missed, sample, period);
	}
	psim_calc_seen(g->seen, missed);
	return next;
}

/*
 * Interrupt time of one CPU, from the handlers' entry and exit events
 * (psi_irq.c). A hard interrupt can come inside a softirq, never the
 * other way round; the outermost context is timed, once. An exit whose
 * entry was not seen (it came before the probes were attached) is ignored.
 * @clock is read where a context opens or closes the outermost one, and
 * around a hard interrupt inside a softirq: that time is also kept apart
 * (nested), as the kernel counts it as hard interrupt time, not softirq.
 */
struct psim_irq_time {
	u64 start;		/* of the outermost context open */
	u64 total;		/* ns of interrupt time */
	u64 charged;		/* the part of total charged (or dropped) */
	u64 taken_at;		/* clock at the last charge (PSIM_IRQ_AT_CLOCK) */
	unsigned int hard;	/* hard interrupt contexts open */
	bool soft;		/* a counted softirq is open */
	u64 nested_start;	/* of the hard interrupt inside a softirq */
	u64 nested;		/* ns of hard interrupts inside softirqs */
	unsigned long nested_n;	/* and how many */
};

static inline void psim_irqt_open(struct psim_irq_time *c,
				  u64 (*clock)(void))
{
	if (!c->hard && !c->soft)
		c->start = clock();
}

/* Returns whether the outermost context closed. */
static inline bool psim_irqt_close(struct psim_irq_time *c,
				   u64 (*clock)(void))
{
	if (c->hard || c->soft)
		return false;
	c->total += clock() - c->start;
	return true;
}

static inline void psim_irq_hard_entry(struct psim_irq_time *c,
				       u64 (*clock)(void))
{
	if (c->soft && !c->hard)
		c->nested_start = clock();
	psim_irqt_open(c, clock);
	c->hard++;
}

static inline bool psim_irq_hard_exit(struct psim_irq_time *c,
				      u64 (*clock)(void))
{
	if (!c->hard)
		return false;
	c->hard--;
	if (c->soft && !c->hard) {
		c->nested += clock() - c->nested_start;
		c->nested_n++;
	}
	return psim_irqt_close(c, clock);
}

static inline void psim_irq_soft_entry(struct psim_irq_time *c,
				       u64 (*clock)(void))
{
	if (c->soft)
		return;
	psim_irqt_open(c, clock);
	c->soft = true;
}

static inline bool psim_irq_soft_exit(struct psim_irq_time *c,
				      u64 (*clock)(void))
{
	if (!c->soft)
		return false;
	c->soft = false;
	return psim_irqt_close(c, clock);
}

/*
 * The kernel's two rules for charging interrupt time to IRQ_FULL
 * (psi_account_irqtime(); the running kernel's is PSIM_IRQ_RULE,
 * psi_mod_compat.h):
 *  - AT_TICK (6.10, and 6.1.y from 6.1.100): the tick charges all of it
 *    since the last charge unless the idle task is current; time that
 *    came while the CPU was idle waits for a tick with a task, which gets
 *    it all;
 *  - AT_CLOCK (before): every update of the runqueue clock charges the
 *    interrupt time since the last update to the current task, at most
 *    the clock's own advance (update_rq_clock_task()'s clamp; the rest
 *    is carried), and under the idle task it is consumed and dropped.
 */
enum psim_irq_rule {
	PSIM_IRQ_AT_TICK,
	PSIM_IRQ_AT_CLOCK,
};

/*
 * After an exit that closed the outermost interval (which began when
 * total was @before), with @idle: the idle task current. Under AT_CLOCK
 * the kernel's next clock update, still under the idle task, drops it.
 */
static inline void psim_irq_closed_rule(struct psim_irq_time *c, u64 before,
					bool idle, enum psim_irq_rule rule)
{
	if (rule == PSIM_IRQ_AT_CLOCK && idle)
		c->charged += c->total - before;
}

/*
 * At a tick: the interrupt time to charge to the CPU's IRQ_FULL, what is
 * not charged yet, none while the idle task is current; under AT_CLOCK at
 * most the time since the last charge (@clock is read only then), the
 * rest left for the next.
 */
static inline u64 psim_irq_take(struct psim_irq_time *c, bool idle,
				u64 (*clock)(void), enum psim_irq_rule rule)
{
	u64 d = c->total - c->charged;

	if (idle)
		return 0;
	if (rule == PSIM_IRQ_AT_CLOCK) {
		u64 now = clock();

		if (d > now - c->taken_at)
			d = now - c->taken_at;
		c->taken_at = now;
	}
	c->charged += d;
	return d;
}

/*
 * Pressure triggers: the rules of the kernel's psi_write(),
 * psi_trigger_create(), window_update() and update_triggers() (Debian's
 * 6.1.y, which carries the 6.5 privilege rules; what other kernels check
 * differently is a rule set, PSIM_TRIG_*, below).
 *
 * A write of "some|full <threshold us> <window us>" creates its file
 * descriptor's trigger. The kernel copies at most 32 bytes of it and
 * overwrites the last byte copied with the terminating NUL, so a write
 * without a trailing newline or NUL loses its last character; an empty
 * write is EINVAL.
 */
#define PSIM_TRIGGER_BUF	32
#define PSIM_WINDOW_MIN_US	500000U		/* 500 ms */
#define PSIM_WINDOW_MAX_US	10000000U	/* 10 s */
/* An opener without CAP_SYS_RESOURCE: windows in multiples of 2 s only. */
#define PSIM_WINDOW_UNPRIV_US	2000000U

/*
 * The checks that differ between kernels, as flags of a rule set (the
 * running kernel's is PSIM_TRIGGER_RULES, psi_mod_compat.h):
 *  - CPU_FULL: cpu has a full state (5.13); before, "full" on cpu is
 *    EINVAL;
 *  - UNPRIV: the 6.5 privilege rules (also in 6.1.42 on): the files are
 *    0666, an opener without CAP_SYS_RESOURCE gets windows in multiples
 *    of 2 s only, evaluated by the averaging work. Before, the files are
 *    0444 (writing needs root's DAC override), psi_trigger_create() looks
 *    at no privilege and every trigger is the fast path's;
 *  - ANY_WINDOW: no 500 ms minimum (6.6): a window of 1 us to 10 s, only
 *    0 is EINVAL.
 */
#define PSIM_TRIG_CPU_FULL	BIT(0)
#define PSIM_TRIG_UNPRIV	BIT(1)
#define PSIM_TRIG_ANY_WINDOW	BIT(2)
/* The fast path looks this many times per window while a state stalls. */
#define PSIM_UPDATES_PER_WINDOW	10

/* How many bytes of a write of @nbytes are looked at; 0: EINVAL. */
static inline size_t psim_trigger_copy_len(size_t nbytes)
{
	return nbytes < PSIM_TRIGGER_BUF ? nbytes : PSIM_TRIGGER_BUF;
}

/*
 * Whether a trigger is the fast path's (privileged): with the 6.5 rules
 * if the opener has CAP_SYS_RESOURCE, before them always.
 */
static inline bool psim_trigger_privileged(unsigned int rules, bool cap)
{
	return cap || !(rules & PSIM_TRIG_UNPRIV);
}

/*
 * A parsed request ("some" or "full", the two numbers as sscanf()'s %u
 * left them) checked in the kernel's order under the rule set @rules: the
 * state must exist for the resource (cpu has both some and full from
 * 5.13, and the kernel accepts a cpu full trigger at the system level
 * although the file prints its line as zeros; irq has full only), the
 * window within 500 ms..10 s (1 us..10 s with ANY_WINDOW), a multiple of
 * 2 s for an unprivileged opener (UNPRIV), the threshold neither 0 nor
 * above the window.
 * Returns 0 with the state in *@state, or -EINVAL.
 */
static inline int psim_trigger_check(unsigned int rules, enum psim_res res,
				     bool full, u32 threshold_us,
				     u32 window_us, bool privileged,
				     enum psim_states *state)
{
	u32 min = rules & PSIM_TRIG_ANY_WINDOW ? 1 : PSIM_WINDOW_MIN_US;
	int s = psim_res_state(res, full);

	if (s < 0)
		return -EINVAL;
	if (s == PSIM_CPU_FULL && !(rules & PSIM_TRIG_CPU_FULL))
		return -EINVAL;
	if (window_us < min || window_us > PSIM_WINDOW_MAX_US)
		return -EINVAL;
	if (!psim_trigger_privileged(rules, privileged) &&
	    window_us % PSIM_WINDOW_UNPRIV_US)
		return -EINVAL;
	if (threshold_us == 0 || threshold_us > window_us)
		return -EINVAL;
	*state = (enum psim_states)s;
	return 0;
}

/*
 * The growth of a state's total within a sliding window, approximated as
 * the kernel does: the growth since the window began, plus the previous
 * window's growth in proportion to the part of it that still overlaps the
 * sliding window (stall time only ever grows, and over a few seconds
 * nearly linearly).
 */
struct psim_window {
	u64 size;		/* ns */
	u64 start_time;
	u64 start_value;
	u64 prev_growth;	/* growth over the previous window */
};

static inline void psim_window_reset(struct psim_window *w, u64 now,
				     u64 value, u64 prev_growth)
{
	w->start_time = now;
	w->start_value = value;
	w->prev_growth = prev_growth;
}

static inline u64 psim_window_update(struct psim_window *w, u64 now,
				     u64 value)
{
	u64 elapsed = now - w->start_time;
	u64 growth = value - w->start_value;

	if (elapsed > w->size) {
		psim_window_reset(w, now, value, growth);
	} else {
		/* the kernel's u32: windows are at most 10 s */
		u32 remaining = w->size - elapsed;

		growth += div64_u64(w->prev_growth * remaining, w->size);
	}
	return growth;
}

/* The arithmetic state of one trigger. */
struct psim_trigger_win {
	enum psim_states state;
	u64 threshold;		/* ns */
	struct psim_window win;
	u64 last_event_time;
	bool pending_event;	/* breached, event held back by the rate limit */
};

static inline void psim_trigger_init(struct psim_trigger_win *t,
				     enum psim_states state, u32 threshold_us,
				     u32 window_us, u64 now, u64 value)
{
	t->state = state;
	t->threshold = (u64)threshold_us * 1000;
	t->win.size = (u64)window_us * 1000;
	psim_window_reset(&t->win, now, value, 0);
	t->last_event_time = 0;
	t->pending_event = false;
}

/*
 * One trigger at one update of its aggregator (update_triggers()):
 * @total is the aggregator's totals now, @seen the totals at its previous
 * update. Sets *@update_total when the state's total moved. Returns true
 * if an event is due now: the growth within the window reached the
 * threshold, at most one event per window; a breach inside the rate-limit
 * window is held (pending_event) and delivered by the first update after
 * that window, not dropped.
 */
static inline bool psim_trigger_update(struct psim_trigger_win *t, u64 now,
				       const u64 *total, const u64 *seen,
				       bool *update_total)
{
	bool new_stall = seen[t->state] != total[t->state];

	if (!new_stall && !t->pending_event)
		return false;
	if (new_stall) {
		u64 growth;

		*update_total = true;
		growth = psim_window_update(&t->win, now, total[t->state]);
		if (!t->pending_event) {
			if (growth < t->threshold)
				return false;
			t->pending_event = true;
		}
	}
	/* at most one event per window */
	if (now < t->last_event_time + t->win.size)
		return false;
	t->last_event_time = now;
	t->pending_event = false;
	return true;
}

#endif /* PSI_MOD_LOGIC_H */
