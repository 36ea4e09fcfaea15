// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod loaded while the system runs: tasks are in arbitrary states that
 * the module never saw (word 0). Random scheduler events (model.h) run for
 * a while with the module not loaded, then it is loaded and the events go
 * on. After every event:
 *  - no count underflows, and no count exceeds the truth;
 *  - each CPU's counts are exactly the sum of the flags of the tasks
 *    charged to it, and no task has a flag the truth does not have;
 *  - a task the module has heard from is exact, except for the known
 *    limitation: a memory stall entered before the load is invisible
 *    (depth 0, its leave is ignored) until it ends;
 *  - once every task has been switched in or woken since the load, every
 *    pre-load stall has ended and every CPU has switched since the load,
 *    counts, flags, oncpu, curr_memstall, masks and state time growth
 *    equal the kernel's, and stay so.
 *
 * Usage: test_midload [trials per seed]
 */
#include "model.h"

#define LOADED_FLAGS (PSIM_TSK_MEMSTALL | PSIM_TSK_MEMSTALL_RUNNING)

static unsigned long trials_per_seed = 30;
#define PRE_EVENTS_MAX	5000
#define POST_EVENTS	20000

struct midload_stats {
	unsigned long preload_stall, preload_iowait, preload_running;
	unsigned long preload_queued, limitation_seen, converged_events;
	unsigned long max_converge;
};

/* A pre-load stall the module cannot see: real depth, word depth 0. */
static int hidden_stall(const struct mtask *t)
{
	return t->st != T_DEAD && t->depth > 0 && psim_depth(t->w) == 0;
}

static void check_midload(struct model *m, struct midload_stats *ms)
{
	unsigned int truth[NCPU][PSIM_NR_COUNTS];
	unsigned int sum[NCPU][PSIM_NR_COUNTS];
	int cpu, i, k, s, all_seen = 1;

	truth_counts(m, truth);
	memset(sum, 0, sizeof(sum));
	for (i = 0; i < m->ntask; i++) {
		const struct mtask *t = &m->t[i];
		unsigned int wf = t->w & PSIM_TSK_MASK, tf = truth_flags(t);

		for (k = 0; k < PSIM_NR_COUNTS; k++)
			if (wf & (1U << k))
				sum[t->cpu][k]++;
		MCHECK(m, !(wf & ~tf),
		       "t%d (state %d iowait %d depth %d) word %#x has flags the truth %#x has not",
		       i, t->st, t->iowait, t->depth, t->w, tf);
		MCHECK(m, psim_depth(t->w) <= (unsigned int)t->depth,
		       "t%d word depth %u > real depth %d", i,
		       psim_depth(t->w), t->depth);
		if (!t->touched) {
			MCHECK(m, wf == 0, "t%d unseen but word %#x", i, t->w);
		} else if (hidden_stall(t)) {
			/* the known limitation, exactly this and no more */
			MCHECK(m, wf == (tf & ~LOADED_FLAGS),
			       "t%d in a pre-load stall: word %#x, truth %#x",
			       i, t->w, tf);
			ms->limitation_seen++;
		} else {
			MCHECK(m, wf == tf,
			       "t%d (state %d iowait %d depth %d) word %#x, truth %#x",
			       i, t->st, t->iowait, t->depth, t->w, tf);
		}
		/*
		 * A pre-load stall is over only when the depths agree: with
		 * real depth 3 and word depth 2 the flags agree for now, but
		 * two leaves later the module's stall ends and the real one
		 * does not.
		 */
		if (t->st != T_DEAD &&
		    (!t->seen || psim_depth(t->w) != (unsigned int)t->depth))
			all_seen = 0;
	}
	for (cpu = 0; cpu < NCPU; cpu++) {
		const struct psim_cpu_state *st = &m->c[cpu].st;

		MCHECK(m, st->underflows == 0, "cpu%d underflows %u", cpu,
		       st->underflows);
		for (k = 0; k < PSIM_NR_COUNTS; k++) {
			MCHECK(m, st->tasks[k] <= truth[cpu][k],
			       "cpu%d tasks[%d] = %u exceeds the truth %u",
			       cpu, k, st->tasks[k], truth[cpu][k]);
			MCHECK(m, st->tasks[k] == sum[cpu][k],
			       "cpu%d tasks[%d] = %u but its tasks' words sum to %u",
			       cpu, k, st->tasks[k], sum[cpu][k]);
		}
		if (!m->c[cpu].switched)
			all_seen = 0;
	}
	if (TU_FAILED())
		return;

	if (!m->converged && all_seen) {
		/* from here on, the state time grows as the kernel's */
		m->converged = 1;
		for (cpu = 0; cpu < NCPU; cpu++) {
			for (s = 0; s < PSIM_NR_STATES; s++) {
				m->c[cpu].base_mod[s] = mod_live_time(m, cpu, s);
				m->c[cpu].base_truth[s] = m->c[cpu].truth_times[s];
			}
		}
	}
	if (m->converged) {
		check_exact(m, 1);
		ms->converged_events++;
	}
}

static const u64 seeds[] = { 11, 12, 13, 0x10adULL };

static void midload_random_events(void)
{
	static struct model m;
	struct midload_stats ms;
	unsigned int si;
	unsigned long trial;

	memset(&ms, 0, sizeof(ms));
	for (si = 0; si < sizeof(seeds) / sizeof(seeds[0]); si++) {
		for (trial = 0; trial < trials_per_seed; trial++) {
			unsigned long pre, e, conv_at = 0;
			int i;

			model_init(&m, seeds[si] * 1000003 + trial,
				   si & 1 ? NTASK : 10);
			pre = rnd(&m, PRE_EVENTS_MAX + 1);
			for (e = 0; e < pre; e++)
				model_step(&m);
			/* what the module does not know about at load */
			for (i = 0; i < m.ntask; i++) {
				ms.preload_stall += m.t[i].depth > 0;
				ms.preload_iowait += m.t[i].st == T_SLEEP &&
						     m.t[i].iowait;
				ms.preload_running += m.t[i].st == T_RUNNING;
				ms.preload_queued += m.t[i].st == T_QUEUED;
			}
			model_load(&m);
			for (e = 0; e < POST_EVENTS && !TU_FAILED(); e++) {
				model_step(&m);
				check_midload(&m, &ms);
				if (m.converged && !conv_at)
					conv_at = e + 1;
			}
			if (TU_FAILED())
				return;
			MCHECK(&m, m.converged,
			       "trial %lu (%lu events before load): not converged after %d events",
			       trial, pre, POST_EVENTS);
			if (conv_at > ms.max_converge)
				ms.max_converge = conv_at;
		}
	}
	/* the interesting cases must have come up */
	TU_CHECK(ms.preload_stall >= trials_per_seed,
		 "only %lu tasks in a memory stall at load", ms.preload_stall);
	TU_CHECK(ms.preload_iowait >= trials_per_seed,
		 "only %lu iowait sleepers at load", ms.preload_iowait);
	TU_CHECK(ms.preload_running >= trials_per_seed,
		 "only %lu running tasks at load", ms.preload_running);
	TU_CHECK(ms.preload_queued >= trials_per_seed,
		 "only %lu queued tasks at load", ms.preload_queued);
	TU_CHECK(ms.limitation_seen > 0, "the pre-load stall case never came up");
	TU_CHECK(ms.converged_events >= trials_per_seed * POST_EVENTS / 2,
		 "only %lu events checked after convergence (slowest %lu)",
		 ms.converged_events, ms.max_converge);
}

/*
 * The known limitation, step by step: a task entered a memory stall
 * before the load and is still in it.
 */
static void midload_preload_stall_by_hand(void)
{
	static struct model m;
	struct psim_cpu_state *st;
	unsigned int clear, set;
	u16 w;

	model_init(&m, 99, NTASK);
	/* t0 ran on cpu0, entered reclaim (depth 1), then blocked in it */
	m.t[0].st = T_SLEEP;
	m.t[0].cpu = 0;
	m.t[0].depth = 1;
	model_load(&m);
	st = &m.c[0].st;

	/* woken: runnable, but not seen as stalled */
	m.now += 1000;
	mod_wakeup(&m, 0);
	m.t[0].st = T_QUEUED;
	TU_EQ(m.t[0].w, PSIM_TSK_RUNNING);
	TU_EQ(st->tasks[PSIM_NR_RUNNING], 1);
	TU_EQ(st->tasks[PSIM_NR_MEMSTALL], 0);		/* the truth has 1 */
	/* switched in; nested enter: now it is seen as stalled */
	m.now += 1000;
	mod_switch(&m, 0, 1, -1, TASK_RUNNING, 0, 0);
	m.c[0].curr = 0;
	m.t[0].st = T_RUNNING;
	mod_memstall(&m, 0, 0, 1);
	m.t[0].depth = 2;
	TU_EQ(psim_depth(m.t[0].w), 1);
	TU_EQ(st->tasks[PSIM_NR_MEMSTALL], 1);
	TU_EQ(st->tasks[PSIM_NR_MEMSTALL_RUNNING], 1);
	TU_EQ(st->curr_memstall, 1);
	/* the nested leave ends the module's stall, not the real one */
	mod_memstall(&m, 0, 0, 0);
	m.t[0].depth = 1;
	TU_EQ(m.t[0].w, PSIM_TSK_RUNNING);
	TU_EQ(st->tasks[PSIM_NR_MEMSTALL], 0);		/* the truth has 1 */
	TU_EQ(st->curr_memstall, 0);
	/* the outer leave: depth 0, ignored; now module and truth agree */
	w = psim_task_memstall_leave(m.t[0].w, &clear, &set);
	TU_EQ(w, m.t[0].w);
	TU_EQ(clear | set, 0);
	mod_memstall(&m, 0, 0, 0);
	m.t[0].depth = 0;
	TU_EQ(st->tasks[PSIM_NR_MEMSTALL], 0);
	TU_EQ(st->tasks[PSIM_NR_RUNNING], 1);
	TU_EQ(st->underflows, 0);
	m.exact = 1;
	check_exact(&m, 0);
}

/* A sleeper in iowait at load, woken on another CPU: nothing to undo. */
static void midload_iowait_sleeper_by_hand(void)
{
	static struct model m;

	model_init(&m, 98, NTASK);
	m.t[0].st = T_SLEEP;
	m.t[0].cpu = 1;
	m.t[0].iowait = 1;
	model_load(&m);
	m.now += 1000;
	mod_migrate(&m, 0, 2);		/* word 0: ignored */
	m.t[0].cpu = 2;
	TU_EQ(m.c[1].st.tasks[PSIM_NR_IOWAIT], 0);
	TU_EQ(m.c[1].st.underflows, 0);
	mod_wakeup(&m, 0);
	m.t[0].st = T_QUEUED;
	m.t[0].iowait = 0;
	TU_EQ(m.t[0].w, PSIM_TSK_RUNNING);
	TU_EQ(m.c[2].st.tasks[PSIM_NR_RUNNING], 1);
	TU_EQ(m.c[2].st.tasks[PSIM_NR_IOWAIT], 0);
	TU_EQ(m.c[2].st.underflows, 0);
	/* a queued task at load is taken into account when it runs */
	m.t[1].st = T_QUEUED;
	m.t[1].cpu = 2;
	mod_migrate(&m, 1, 0);		/* load balancing, word 0: ignored */
	m.t[1].cpu = 0;
	TU_EQ(m.c[2].st.underflows, 0);
	mod_switch(&m, 0, 1, -1, TASK_RUNNING, 0, 1);
	m.c[0].curr = 1;
	m.t[1].st = T_RUNNING;
	TU_EQ(m.c[0].st.tasks[PSIM_NR_RUNNING], 1);
	TU_EQ(m.c[0].st.oncpu, 1);
	m.exact = 1;
	check_exact(&m, 0);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		trials_per_seed = strtoul(argv[1], NULL, 0);
	TU_RUN(midload_preload_stall_by_hand);
	TU_RUN(midload_iowait_sleeper_by_hand);
	TU_RUN(midload_random_events);
	return tu_exit();
}
