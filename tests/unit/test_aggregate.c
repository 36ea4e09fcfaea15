// SPDX-License-Identifier: GPL-2.0
/*
 * The aggregation of src/psi_aggregate.c, compiled in user space against
 * the kernel API shim with the real probes (src/psi_probes.c) and
 * triggers (src/psi_triggers.c) linked in (kmod.h): the per-CPU states it
 * collects are set up by scheduler events through the probes, its numbers
 * are read through its own entry points (psim_aggregate_read(), the
 * averaging work, psim_collect_poll(), psim_aggregate_debug()). Expected
 * values are worked out by hand from the kernel's collect_percpu_times(),
 * get_recent_times(), update_averages() and calc_avgs() (Linux 6.1, at
 * HZ=250: PSI_FREQ is 501 jiffies, 2.004 s).
 */
#include "kmod.h"

static struct task_struct tk[16];
static int ntk;

static struct task_struct *new_task(void)
{
	struct task_struct *t = &tk[ntk];

	memset(t, 0, sizeof(*t));
	t->pid = 101 + ntk++;
	return t;
}

/* A fresh load at time @at, no task yet. */
static void start_at(u64 at)
{
	shim_now = at;
	ntk = 0;
	kmod_start();
}

/* @running runnable tasks on @cpu (one of them on it), @iowait sleepers */
static void setup_cpu(int cpu, int running, int iowait)
{
	int i;

	for (i = 0; i < iowait; i++) {
		kmod_run(cpu, new_task());
		kmod_sleep(cpu, true, NULL);
	}
	for (i = 0; i < running; i++) {
		if (!i)
			kmod_run(cpu, new_task());
		else
			kmod_wake(cpu, new_task());
	}
}

static u64 read_total(enum psim_res res, int full, unsigned long avg[2][3])
{
	unsigned long a[2][3];
	u64 total[2];

	psim_aggregate_read(res, avg ? avg : a, total);
	return total[full];
}

/* System pressure over [0, @end] with 2 CPUs in given loads. */
static u64 two_cpu_total(int run0, int io0, int run1, int io1,
			 enum psim_res res, int full, u64 end)
{
	u64 v;

	start_at(0);
	setup_cpu(0, run0, io0);
	setup_cpu(1, run1, io1);
	shim_now = end;
	v = read_total(res, full, NULL);
	kmod_stop();
	return v;
}

static void aggregate_weights_cpus_by_nonidle_time(void)
{
	const u64 T = 2000000000ULL;	/* 2 s = 500 jiffies */
	struct psim_cpu_debug d;
	int ns;

	/* 4 spinners on 2 CPUs: each CPU some 100%: system some 100% */
	TU_EQ(two_cpu_total(2, 0, 2, 0, PSIM_CPU, 0, T), T);
	TU_EQ(two_cpu_total(2, 0, 2, 0, PSIM_CPU, 1, T), 0);
	/* 3 spinners: (2 s * 500 + 0 * 500) / 1000 = 1 s: 50% */
	TU_EQ(two_cpu_total(2, 0, 1, 0, PSIM_CPU, 0, T), T / 2);
	/* 2 spinners on one CPU, the others idle: idle does not dilute */
	TU_EQ(two_cpu_total(0, 0, 2, 0, PSIM_CPU, 0, T), T);
	TU_EQ(two_cpu_total(2, 0, 0, 0, PSIM_CPU, 0, T), T);
	/* 1 spinner per CPU: no pressure */
	TU_EQ(two_cpu_total(1, 0, 1, 0, PSIM_CPU, 0, T), 0);
	/*
	 * an iowait sleeper alone on CPU 0, a spinner on CPU 1: io 50%,
	 * full too (nothing runs where the sleeper is charged)
	 */
	TU_EQ(two_cpu_total(0, 1, 1, 0, PSIM_IO, 0, T), T / 2);
	TU_EQ(two_cpu_total(0, 1, 1, 0, PSIM_IO, 1, T), T / 2);
	/* the sleeper's CPU also runs a task: some, not full */
	TU_EQ(two_cpu_total(1, 1, 0, 0, PSIM_IO, 0, T), T);
	TU_EQ(two_cpu_total(1, 1, 0, 0, PSIM_IO, 1, T), 0);
	/* all idle: nothing, and no division by zero */
	TU_EQ(two_cpu_total(0, 0, 0, 0, PSIM_CPU, 0, T), 0);

	/*
	 * Weights are whole jiffies (nsecs_to_jiffies): a CPU non-idle for
	 * 3.999999 ms weighs 0 and its stall vanishes; at 4 ms it weighs
	 * 1 jiffy against 500: 4000000 * 1 / 501 = 7984 ns.
	 */
	for (ns = 0; ns < 2; ns++) {
		u64 busy = ns ? 4000000 : 3999999;
		struct task_struct *b;

		start_at(0);
		setup_cpu(0, 2, 0);
		b = &tk[1];
		setup_cpu(1, 1, 0);
		shim_now = busy;
		kmod_sleep(0, false, b);
		kmod_sleep(0, false, NULL);
		shim_now = T;
		TU_EQ(read_total(PSIM_CPU, 0, NULL), ns ? 7984 : 0);
		psim_cpu_debug(0, &d);
		TU_EQ(d.st.times[PSIM_CPU_SOME], busy);
		kmod_stop();
	}
}

/*
 * The averaging work starved for an hour (realtime tasks hogging every
 * CPU, a guest's clock jump) while a CPU stalled: the collection at the
 * end sees the kernel's u32 growth, 3600 s mod 2^32 ns = 817405952 ns,
 * not the hour, and once the stall is over the averages decay at once as
 * the kernel's do, instead of reading 100 for another hour. Values from
 * the kernel's get_recent_times(), collect_percpu_times(),
 * update_averages() and calc_avgs() at HZ=250.
 */
static void aggregate_starved_collection_is_bounded_as_the_kernels(void)
{
	static const unsigned long want[2][6][3] = {
		{	/* 3600 s: 1795 periods missed, 28% over 2.82 s */
			{ 10388, 1876, 392 }, { 8506, 1814, 389 },
			{ 6965, 1754, 386 }, { 5703, 1696, 383 },
			{ 4669, 1640, 380 }, { 3823, 1586, 377 },
		}, {	/* 10800 s: 2452217856 ns over 2.448 s, 100% */
			{ 37100, 6700, 1400 }, { 30379, 6480, 1390 },
			{ 24875, 6268, 1380 }, { 20368, 6062, 1370 },
			{ 16678, 5863, 1360 }, { 13656, 5671, 1350 },
		},
	};
	static const u64 gap[2] = { 3600ULL * 1000000000, 10800ULL * 1000000000 };
	static const u64 got[2] = { 817405952, 2452217856ULL };
	unsigned long avg[2][3];
	int k, i, n;

	for (k = 0; k < 2; k++) {
		struct task_struct *b;

		start_at(0);
		/* two runnable tasks, one on the CPU, from 0: CPU some */
		setup_cpu(0, 2, 0);
		b = &tk[1];
		shim_now = gap[k];
		/* the kernel's total; an hour times its weight would wrap */
		TU_EQ(read_total(PSIM_CPU, 0, avg), got[k]);
		TU_EQ(read_total(PSIM_CPU, 1, NULL), 0);
		for (i = 0; i < 3; i++)
			TU_EQ(avg[0][i], want[k][0][i]);
		/* the stall ends; idle periods fold, on the 2.004 s grid */
		kmod_sleep(0, false, b);
		kmod_sleep(0, false, NULL);
		for (n = 1; n < 6; n++) {
			shim_now = (shim_now / PERIOD + 1) * PERIOD;
			TU_EQ(read_total(PSIM_CPU, 0, avg), got[k]);
			for (i = 0; i < 3; i++)
				TU_EQ(avg[0][i], want[k][n][i]);
		}
		kmod_stop();
	}
}

/*
 * psim_aggregate() from the work: the totals, the averages folded once per
 * period on the grid of the load (a read between two runs folds nothing
 * early and counts nothing twice), the lag of a late run, and what it
 * returns: with task activity the work queues itself again, once all is
 * idle it lets the clock stop, and the next task change restarts it.
 */
static void aggregate_work_folds_on_the_grid(void)
{
	struct psim_aggregate_debug d;
	unsigned long avg[2][3];
	u64 ptotal[PSIM_NR_STATES - 1] = { 0 };
	struct task_struct *b;
	u32 changed;

	start_at(0);
	setup_cpu(0, 2, 0);		/* CPU some 100% from 0 */
	b = &tk[1];
	psim_aggregate_debug(&d);
	TU_EQ(d.pending, 1);		/* the task change woke the clock */
	TU_EQ(d.runs, 0);

	/* the first grid point: 100% over the period */
	shim_now = PERIOD;
	TU_EQ(kmod_work(1), 1);
	TU_EQ(read_total(PSIM_CPU, 0, avg), PERIOD);
	TU_EQ(avg[0][0], 37100);
	TU_EQ(avg[0][1], 6700);
	TU_EQ(avg[0][2], 1400);
	TU_EQ(avg[1][0], 0);
	psim_aggregate_debug(&d);
	TU_EQ(d.runs, 1);
	TU_EQ(d.pending, 1);		/* CPU 0 is busy: again */

	/* a read half way: the totals to date, the averages as they were */
	shim_now = PERIOD + 500 * MS;
	TU_EQ(read_total(PSIM_CPU, 0, avg), PERIOD + 500 * MS);
	TU_EQ(avg[0][0], 37100);

	/* the fast path's aggregator has its own record: all since the load */
	changed = psim_collect_poll(NULL, ptotal);
	TU_EQ(ptotal[PSIM_CPU_SOME], PERIOD + 500 * MS);
	TU_EQ(ptotal[PSIM_CPU_FULL], 0);
	TU_EQ(changed, BIT(PSIM_CPU_SOME) | BIT(PSIM_NONIDLE));

	/* the stall ends half way through the second period: 50% */
	shim_now = PERIOD + PERIOD / 2;
	kmod_sleep(0, false, b);
	kmod_sleep(0, false, NULL);
	shim_now = 2 * PERIOD;
	TU_EQ(kmod_work(1), 1);
	TU_EQ(read_total(PSIM_CPU, 0, avg), PERIOD + PERIOD / 2);
	/* calc_load(37100, 1677, 50 * 2048) and so on */
	TU_EQ(avg[0][0], 48930);
	TU_EQ(avg[0][1], 9831);
	TU_EQ(avg[0][2], 2091);
	psim_aggregate_debug(&d);
	/* CPU 0 was busy during the period: one more */
	TU_EQ(d.pending, 1);
	TU_EQ(d.lag_folds, 1);		/* on time */
	TU_EQ(d.lags[0], 0);

	/* a period of nothing, the work 2 ms late: decay, and the clock stops */
	shim_now = 3 * PERIOD + 2 * MS;
	TU_EQ(kmod_work(1), 1);
	TU_EQ(read_total(PSIM_CPU, 0, avg), PERIOD + PERIOD / 2);
	TU_EQ(avg[0][0], 40066);	/* 48930 * 1677 / 2048 */
	TU_EQ(avg[0][1], 9509);
	TU_EQ(avg[0][2], 2076);
	psim_aggregate_debug(&d);
	TU_EQ(d.pending, 0);
	TU_EQ(d.runs, 3);
	TU_EQ(d.lag_folds, 2);
	TU_EQ(d.lags[1], 2000);		/* us */
	TU_EQ(d.lag_max, 2 * MS);

	/* a task change restarts the clock */
	shim_now = 4 * PERIOD;
	setup_cpu(2, 1, 0);
	psim_aggregate_debug(&d);
	TU_EQ(d.pending, 1);
	/*
	 * Its run 3 jiffies after the jiffy that change set its timer for.
	 * Of the runs before, the first came on its timer's jiffy (the load's
	 * task change set it a period out), the others on their grid points,
	 * a jiffy before theirs: not timed.
	 */
	shim_now = 4 * PERIOD + jiffies_to_nsecs(PSIM_FREQ + 3);
	TU_EQ(kmod_work(1), 1);
	psim_aggregate_debug(&d);
	TU_EQ(d.late_runs, 2);
	TU_EQ(d.late_max, 3);
	TU_EQ(d.restarts, 0);
	kmod_stop();
	psim_aggregate_debug(&d);
	TU_EQ(d.pending, 0);		/* psim_aggregate_stop() cancels it */
}

/* what psim_aggregate_read_percpu() showed of each CPU */
struct percpu_seen {
	int calls, cpus[NR_CPUS];
	unsigned long avg[NR_CPUS][2][3];
	u64 total[NR_CPUS][2];
};

static void percpu_show(void *arg, int cpu, unsigned long avg[2][3],
			u64 total[2])
{
	struct percpu_seen *s = arg;

	s->cpus[s->calls++] = cpu;
	memcpy(s->avg[cpu], avg, sizeof(s->avg[cpu]));
	memcpy(s->total[cpu], total, sizeof(s->total[cpu]));
}

static void percpu_read(enum psim_res res, struct percpu_seen *s)
{
	memset(s, 0, sizeof(*s));
	psim_aggregate_read_percpu(res, percpu_show, s);
}

/*
 * The per-CPU view (percpu=1): each CPU's own times, unweighted, and
 * averages on the system group's grid. CPU 0 has two spinners (cpu some
 * 100%), CPU 1 a spinner and an iowait sleeper (io some 100%, not full),
 * CPU 2 an iowait sleeper alone (io some and full), CPU 3 is idle. After
 * one period each CPU's averages are those of a system whose every CPU
 * did the same: the system-wide figures of such a run.
 */
static void aggregate_percpu_view(void)
{
	unsigned long one[2][3];
	struct percpu_seen s;
	int cpu;

	/* a reference: both CPUs 100% cpu some for a period */
	kmod_percpu = false;
	start_at(0);
	setup_cpu(0, 2, 0);
	setup_cpu(1, 2, 0);
	shim_now = PERIOD;
	kmod_work(3);
	read_total(PSIM_CPU, 0, one);
	kmod_stop();
	TU_EQ(one[0][0], 37100);

	kmod_percpu = true;
	start_at(0);
	setup_cpu(0, 2, 0);
	setup_cpu(1, 1, 1);
	setup_cpu(2, 0, 1);
	shim_now = PERIOD;
	kmod_work(3);
	percpu_read(PSIM_CPU, &s);
	TU_EQ(s.calls, NR_CPUS);
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		TU_EQ(s.cpus[cpu], cpu);
	TU_EQ(s.total[0][0], PERIOD);
	TU_EQ(s.total[0][1], 0);
	TU_EQ(s.avg[0][0][0], one[0][0]);
	TU_EQ(s.avg[0][0][1], one[0][1]);
	TU_EQ(s.avg[0][0][2], one[0][2]);
	TU_EQ(s.total[1][0], 0);
	TU_EQ(s.avg[1][0][0], 0);
	TU_EQ(s.total[2][0], 0);
	/* the worker ran there at the fold: its own run is no stall */
	TU_EQ(s.total[3][0], 0);
	percpu_read(PSIM_IO, &s);
	TU_EQ(s.total[0][0], 0);
	TU_EQ(s.total[1][0], PERIOD);
	TU_EQ(s.total[1][1], 0);
	TU_EQ(s.avg[1][0][0], one[0][0]);
	TU_EQ(s.avg[1][1][0], 0);
	TU_EQ(s.total[2][0], PERIOD);
	TU_EQ(s.total[2][1], PERIOD);
	TU_EQ(s.avg[2][1][0], one[0][0]);
	TU_EQ(s.total[3][0], 0);
	/* a read between folds: totals to date, averages as folded */
	shim_now = PERIOD + PERIOD / 2;
	percpu_read(PSIM_CPU, &s);
	TU_EQ(s.total[0][0], PERIOD + PERIOD / 2);
	TU_EQ(s.avg[0][0][0], one[0][0]);
	kmod_stop();
	kmod_percpu = false;
}

int main(void)
{
	TU_RUN(aggregate_weights_cpus_by_nonidle_time);
	TU_RUN(aggregate_starved_collection_is_bounded_as_the_kernels);
	TU_RUN(aggregate_work_folds_on_the_grid);
	TU_RUN(aggregate_percpu_view);
	return tu_exit();
}
