// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod: the aggregation of per-CPU state times into system-wide pressure.
 *
 * As the kernel's PSI_AVGS aggregator (collect_percpu_times(),
 * update_averages() and psi_avgs_work() in kernel/sched/psi.c): each CPU's
 * state times since the last sample are weighed by that CPU's non-idle
 * time, summed into the totals, and every 2 s folded into the 10 s, 60 s
 * and 300 s averages (the arithmetic is in psi_mod_logic.h). The work
 * stops when nothing but itself ran, and the next task change restarts
 * it; where its timer sits is below. A read folds in what is pending
 * first, so no reader sees stale numbers. With percpu=1 each CPU's own
 * times are kept and averaged beside, unweighted.
 */
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/workqueue.h>

#include "psi_mod.h"

/* Aggregator-only flag in the changed-states mask: keep the clock going. */
#define PSIM_STATE_RESCHEDULE	BIT(31)

static struct psim_group psim_group;
static DEFINE_MUTEX(psim_avgs_lock);
/*
 * The per-CPU view (percpu=1): each CPU's own state times as totals and
 * averages, on the system group's grid. Nothing the kernel shows: its
 * per-CPU times only ever enter the weighted system-wide figure.
 */
static bool psim_percpu;
static DEFINE_PER_CPU(struct psim_group, psim_cpu_group);
/* each CPU's non-idle time, ns: its weight in the system-wide figure */
static DEFINE_PER_CPU(u64, psim_cpu_nonidle);
/*
 * What each aggregator saw last of each CPU, touched by it alone (under
 * its own lock): the averaging one, and the trigger fast path
 * (psi_triggers.c), as the kernel's PSI_AVGS and PSI_POLL.
 */
static DEFINE_PER_CPU(u64 [PSIM_NR_AGGS][PSIM_NR_STATES], psim_times_prev);
/* Time spent in the averaging work, ns (debugfs: the cost of triggers). */
static u64 psim_avgs_work_ns;

/*
 * The averaging work, on the kernel's clock (psi_avgs_work() and
 * psi_group_change()): a plain timer, queued by the work itself for the
 * jiffy after the next grid point while there is task activity, and by
 * the probes at a task change while it is not pending (psim_wake_clock()),
 * a period from then. When all is idle it is not queued; the next task
 * change restarts it. It runs on any CPU (an unbound workqueue).
 */
static void psim_avgs_work_fn(struct work_struct *work);
DECLARE_DELAYED_WORK(psim_avgs_work, psim_avgs_work_fn);
/* The kworker that last ran the aggregation (see psim_probe_switch()). */
struct task_struct *psim_avgs_worker;
/* How often the periodic work ran. */
static unsigned long psim_avgs_runs;
/*
 * How late the work folded, after the grid point it was queued for (not
 * after a stop while idle, when it was queued for none): the largest
 * delay since the load, and how many folds were timed.
 */
static u64 psim_avgs_lag_max;
static unsigned long psim_avgs_lag_folds;
static u32 psim_avgs_lags[PSIM_NR_LAGS];	/* the latest, in us */
static bool psim_avgs_chained;
/* Runs whose next fold a task change had queued already, a period out. */
static unsigned long psim_avgs_restarts;
/* How late the work ran after the jiffy its timer was set for, and how often. */
static unsigned long psim_avgs_late_max;
static unsigned long psim_avgs_late_runs;

/*
 * Fold the per-CPU state times since aggregator @agg's last call into its
 * @total. Returns the states that changed, with PSIM_STATE_RESCHEDULE when
 * there is task activity that the averaging clock should keep sampling
 * (only @from_work).
 */
static u32 psim_collect(struct psim_cgroup *cg, enum psim_agg agg,
			u64 *total, bool from_work)
{
	u64 deltas[PSIM_NR_STATES - 1] = { 0, };
	int this_cpu = raw_smp_processor_id();
	unsigned long nonidle_total = 0;
	u32 changed_all = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		u64 times[PSIM_NR_STATES];
		u32 changed;
		struct psim_cpu_state snap;
		unsigned long nonidle;
		bool resched;
		u64 now, *prev;

		if (cg) {
			now = psim_cgroup_snapshot(cg, cpu, &snap);
			prev = psim_cgroup_cpu(cg, cpu)->times_prev[agg];
		} else {
			now = psim_cpu_snapshot(cpu, &snap);
			prev = per_cpu(psim_times_prev, cpu)[agg];
		}
		changed = psim_cpu_recent_times(&snap, now, prev, times);
		nonidle = nsecs_to_jiffies(times[PSIM_NONIDLE]);
		nonidle_total += nonidle;
		psim_accumulate(deltas, times, nonidle);
		changed_all |= changed;
		if (!cg && agg == PSIM_AVGS && psim_percpu) {
			struct psim_group *g = &per_cpu(psim_cpu_group, cpu);
			int s;

			for (s = 0; s < PSIM_NONIDLE; s++)
				g->total[s] += times[s];
			per_cpu(psim_cpu_nonidle, cpu) += times[PSIM_NONIDLE];
		}

		if (!from_work)
			continue;
		/*
		 * The CPU running this work is never idle: the worker itself
		 * counts as running there. Keep sampling only if something
		 * else is (the kernel's rule in get_recent_times(), which it
		 * applies to a cgroup's work as well).
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

	psim_fold_into(total, deltas, nonidle_total);
	return changed_all;
}

/*
 * The trigger fast path's collection into its own totals; the caller
 * serializes (psi_triggers.c's poll lock). Returns the states whose time
 * moved.
 */
u32 psim_collect_poll(struct psim_cgroup *cg, u64 *total)
{
	return psim_collect(cg, PSIM_POLL, total, false);
}

/* Collect, and fold the averages if a period is due. */
static u32 psim_aggregate(bool from_work, u64 *now)
{
	u32 changed;

	lockdep_assert_held(&psim_avgs_lock);
	*now = sched_clock();
	changed = psim_collect(NULL, PSIM_AVGS, psim_group.total, from_work);
	if (*now >= psim_group.avg_next_update) {
		/*
		 * The unprivileged triggers, once per period, on the totals
		 * not yet averaged (the kernel's update_triggers(PSI_AVGS)).
		 * Unlike the kernel, a fold by a reader evaluates them too,
		 * so a read cannot hide a period's growth from them.
		 */
		psim_triggers_avgs_update(&psim_sys_triggers, *now,
					  psim_group.total,
					  psim_group.avg_total);
		psim_group.avg_next_update = psim_update_averages(&psim_group,
								  *now);
		if (psim_percpu) {
			struct psim_group *g;
			int cpu;

			for_each_possible_cpu(cpu) {
				g = &per_cpu(psim_cpu_group, cpu);
				g->avg_next_update = psim_update_averages(g,
									  *now);
			}
		}
	}
	return changed;
}

static void psim_avgs_work_fn(struct work_struct *work)
{
	/*
	 * The jiffy its timer was set for, whoever set it (this work or a
	 * task change): read racily, as a task change that queued the work
	 * again already since it began to run moves it into the future.
	 */
	unsigned long set_for = data_race(psim_avgs_work.timer.expires);
	unsigned long j = jiffies;
	u64 now, due, t0;
	u32 changed;

	mutex_lock(&psim_avgs_lock);
	if (time_after_eq(j, set_for)) {
		psim_avgs_late_max = max(psim_avgs_late_max, j - set_for);
		psim_avgs_late_runs++;
	}
	t0 = sched_clock();
	due = psim_group.avg_next_update;
	changed = psim_aggregate(true, &now);
	if (psim_avgs_chained && now >= due) {
		psim_avgs_lag_max = max(psim_avgs_lag_max, now - due);
		psim_avgs_lags[psim_avgs_lag_folds % PSIM_NR_LAGS] =
			min_t(u64, div_u64(now - due, NSEC_PER_USEC), U32_MAX);
		psim_avgs_lag_folds++;
	}
	/*
	 * With task activity, sample every period; when everything is idle
	 * let the clock stop. The next task change restarts it and the
	 * missed periods are caught up in one go. If a task change since
	 * this run began has restarted it already, a period from then, that
	 * time stands (queue_delayed_work() of a pending work does nothing),
	 * as in the kernel: a trigger's wakeup from this run is such a
	 * change, so after an event the next fold is a full period later.
	 */
	psim_avgs_chained = changed & PSIM_STATE_RESCHEDULE;
	if (psim_avgs_chained &&
	    !queue_delayed_work(system_unbound_wq, &psim_avgs_work,
				nsecs_to_jiffies(psim_group.avg_next_update -
						 now) + 1)) {
		/* queued for no grid point: the next fold is not timed */
		psim_avgs_chained = false;
		psim_avgs_restarts++;
	}
	WRITE_ONCE(psim_avgs_worker, current);
	psim_probes_check();
	psim_avgs_runs++;
	psim_avgs_work_ns += sched_clock() - t0;
	mutex_unlock(&psim_avgs_lock);
}

/* A group's figures of one resource as shown: see psim_aggregate_read(). */
static void psim_group_shown(const struct psim_group *g, enum psim_res res,
			     unsigned long avg[2][3], u64 total[2])
{
	int full, i, s;

	for (full = 0; full < 2; full++) {
		s = psim_res_state(res, full);
		for (i = 0; i < 3; i++)
			avg[full][i] = s < 0 ? 0 :
				psim_avg_shown(g->avg[s][i], g->seen[i]);
		total[full] = s < 0 ? 0 : g->total[s];
	}
}

/*
 * One resource's averages as shown (avg[some/full][10s/60s/300s]) and its
 * totals in ns, up to date: a read folds in what is pending first.
 */
void psim_aggregate_read(enum psim_res res, unsigned long avg[2][3],
			 u64 total[2])
{
	u64 now;

	mutex_lock(&psim_avgs_lock);
	psim_aggregate(false, &now);
	psim_group_shown(&psim_group, res, avg, total);
	mutex_unlock(&psim_avgs_lock);
}

/*
 * The per-CPU view of one resource: @show(@arg, cpu, avg, total) for each
 * online CPU, all from one collection (the averaging lock held).
 */
void psim_aggregate_read_percpu(enum psim_res res,
				void (*show)(void *arg, int cpu,
					     unsigned long avg[2][3],
					     u64 total[2]),
				void *arg)
{
	unsigned long avg[2][3];
	u64 now, total[2];
	int cpu;

	mutex_lock(&psim_avgs_lock);
	psim_aggregate(false, &now);
	for_each_online_cpu(cpu) {
		psim_group_shown(&per_cpu(psim_cpu_group, cpu), res, avg,
				 total);
		show(arg, cpu, avg, total);
	}
	mutex_unlock(&psim_avgs_lock);
}

/* Each CPU's non-idle time (ns) so far, for the debugfs view. */
u64 psim_aggregate_cpu_nonidle(int cpu)
{
	u64 v;

	mutex_lock(&psim_avgs_lock);
	v = per_cpu(psim_cpu_nonidle, cpu);
	mutex_unlock(&psim_avgs_lock);
	return v;
}

/* The aggregation's own figures, for the debugfs view. */
void psim_aggregate_debug(struct psim_aggregate_debug *d)
{
	mutex_lock(&psim_avgs_lock);
	d->runs = psim_avgs_runs;
	d->work_ns = psim_avgs_work_ns;
	d->lag_max = psim_avgs_lag_max;
	d->lag_folds = psim_avgs_lag_folds;
	d->restarts = psim_avgs_restarts;
	d->late_max = psim_avgs_late_max;
	d->late_runs = psim_avgs_late_runs;
	memcpy(d->lags, psim_avgs_lags, sizeof(d->lags));
	memcpy(d->seen, psim_group.seen, sizeof(d->seen));
	mutex_unlock(&psim_avgs_lock);
	d->pending = delayed_work_pending(&psim_avgs_work);
}

/*
 * A cgroup's group (psi_cgroup.c), with its avgs_lock held: the
 * collection and, when a period is due, the averages, as the system's
 * (the kernel's psi_avgs_work() of a cgroup). Returns how long until the
 * next period is due while there is task activity (>= 1 ns), 0 when the
 * group's clock may stop.
 */
u64 psim_cgroup_aggregate(struct psim_cgroup *cg, bool from_work)
{
	struct psim_group *g = &cg->agg;
	u64 now = sched_clock();
	u32 changed;

	lockdep_assert_held(&cg->avgs_lock);
	changed = psim_collect(cg, PSIM_AVGS, g->total, from_work);
	if (now >= g->avg_next_update) {
		/* its files' unprivileged triggers, as the system's */
		struct psim_triggers *ts = READ_ONCE(cg->trig);

		if (ts)
			psim_triggers_avgs_update(ts, now, g->total,
						  g->avg_total);
		g->avg_next_update = psim_update_averages(g, now);
	}
	if (!(changed & PSIM_STATE_RESCHEDULE))
		return 0;
	return max(g->avg_next_update - now, 1ULL);
}

/* Fresh totals and averages for a new group: from zero, as the kernel's. */
void psim_cgroup_start(struct psim_cgroup *cg)
{
	psim_group_start(&cg->agg, sched_clock(), jiffies_to_nsecs(PSIM_FREQ),
			 false);
}

/* A group's figures of @res as shown, up to date: psim_aggregate_read(). */
void psim_cgroup_read(struct psim_cgroup *cg, enum psim_res res,
		      unsigned long avg[2][3], u64 total[2])
{
	mutex_lock(&cg->avgs_lock);
	psim_cgroup_aggregate(cg, false);
	psim_group_shown(&cg->agg, res, avg, total);
	mutex_unlock(&cg->avgs_lock);
}

/*
 * Fresh totals and averages, before any probe is attached: from zero, as
 * the kernel's at boot, or with the warm-up (psi_mod_logic.h).
 */
void psim_aggregate_start(bool warmup, bool percpu)
{
	u64 now = sched_clock();
	int cpu;

	for_each_possible_cpu(cpu) {
		memset(per_cpu(psim_times_prev, cpu), 0,
		       sizeof(per_cpu(psim_times_prev, cpu)));
		psim_group_start(&per_cpu(psim_cpu_group, cpu), now,
				 jiffies_to_nsecs(PSIM_FREQ), warmup);
		per_cpu(psim_cpu_nonidle, cpu) = 0;
	}
	psim_percpu = percpu;
	psim_group_start(&psim_group, now, jiffies_to_nsecs(PSIM_FREQ),
			 warmup);
	psim_avgs_worker = NULL;
	psim_avgs_runs = 0;
	psim_avgs_work_ns = 0;
	psim_avgs_lag_max = 0;
	psim_avgs_lag_folds = 0;
	psim_avgs_restarts = 0;
	psim_avgs_late_max = 0;
	psim_avgs_late_runs = 0;
	memset(psim_avgs_lags, 0, sizeof(psim_avgs_lags));
	psim_avgs_chained = false;
}

/* After the probes are gone: the last of them may have armed the work. */
void psim_aggregate_stop(void)
{
	cancel_delayed_work_sync(&psim_avgs_work);
}
