// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod loaded while the system runs: tasks are in arbitrary states that
 * the module never saw (word 0). Random scheduler events (model.h) run for
 * a while with the module not loaded, then the real probes are started
 * (probes_be.h) and the events go on through them. After every event:
 *  - no count underflows, and no count exceeds the truth;
 *  - each CPU's counts are exactly the sum of what its tasks should
 *    have: nothing for a task the module has not heard from; the truth
 *    for one it has, except for the known limitation: a memory stall
 *    entered before the load is invisible (depth 0, its leave is
 *    ignored) until it ends;
 *  - where the words are visible (built with -DSHIM_CONFIG_PSI: in
 *    task_struct), each task's word is that too;
 *  - once every task has been switched in or woken since the load, every
 *    pre-load stall has ended and every CPU has switched since the load,
 *    counts, flags, oncpu, curr_memstall, masks and state time growth
 *    equal the kernel's, and stay so.
 *
 * Usage: test_midload [trials per seed]
 */
#include "probes_be.h"

#define LOADED_FLAGS (PSIM_TSK_MEMSTALL | PSIM_TSK_MEMSTALL_RUNNING)

static unsigned long trials_per_seed = 30;
#define PRE_EVENTS_MAX	5000
#define POST_EVENTS	20000

struct midload_stats {
	unsigned long preload_stall, preload_iowait, preload_running;
	unsigned long preload_queued, limitation_seen, converged_events;
	unsigned long max_converge;
};

/*
 * The flags psi_mod should have for @t: none before it heard from the
 * task; then the truth, without the stall if none of it was entered since
 * the load.
 */
static unsigned int expected_flags(const struct mtask *t)
{
	unsigned int f = truth_flags(t);

	if (!t->touched)
		return 0;
	return t->vdepth ? f : f & ~LOADED_FLAGS;
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
		unsigned int ef = expected_flags(t);
		u16 w;

		for (k = 0; k < PSIM_NR_COUNTS; k++)
			if (ef & (1U << k))
				sum[t->cpu][k]++;
		if (t->touched && t->depth && !t->vdepth)
			ms->limitation_seen++;
		if (mod_word(m, i, &w)) {
			MCHECK(m, (w & PSIM_TSK_MASK) == ef,
			       "t%d (state %d iowait %d depth %d, %d since the load%s) word %#x, want flags %#x",
			       i, t->st, t->iowait, t->depth, t->vdepth,
			       t->touched ? "" : ", unseen", w, ef);
			MCHECK(m, psim_depth(w) == (unsigned int)t->vdepth,
			       "t%d word depth %u, %d entered since the load",
			       i, psim_depth(w), t->vdepth);
		}
		/*
		 * A pre-load stall is over only when the depths agree: with
		 * real depth 3 and 2 seen the flags agree for now, but two
		 * leaves later the module's stall ends and the real one
		 * does not.
		 */
		if (t->st != T_DEAD && (!t->seen || t->vdepth != t->depth))
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
			       "cpu%d tasks[%d] = %u but its tasks should sum to %u",
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
			if (be_load(&m, true))
				return;
			for (e = 0; e < POST_EVENTS && !TU_FAILED(); e++) {
				model_step(&m);
				check_midload(&m, &ms);
				if (m.converged && !conv_at)
					conv_at = e + 1;
			}
			probes_stop();
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

/* Task @p's word is @want, where the words are visible. */
#define WORD_IS(m, p, want)						\
	do {								\
		u16 w_;							\
		if (mod_word(m, p, &w_))				\
			TU_EQ(w_, want);				\
	} while (0)

/*
 * The known limitation, step by step: a task entered a memory stall
 * before the load and is still in it.
 */
static void midload_preload_stall_by_hand(void)
{
	static struct model m;
	struct psim_cpu_state *st;

	model_init(&m, 99, NTASK);
	/* t0 ran on cpu0, entered reclaim (depth 1), then blocked in it */
	m.t[0].st = T_SLEEP;
	m.t[0].cpu = 0;
	m.t[0].depth = 1;
	if (be_load(&m, true))
		return;
	st = &m.c[0].st;

	/* woken: runnable, but not seen as stalled */
	m.now += 1000;
	mod_wakeup(&m, 0);
	m.t[0].st = T_QUEUED;
	WORD_IS(&m, 0, PSIM_TSK_RUNNING);
	TU_EQ(st->tasks[PSIM_NR_RUNNING], 1);
	TU_EQ(st->tasks[PSIM_NR_MEMSTALL], 0);		/* the truth has 1 */
	/* switched in; nested enter: now it is seen as stalled */
	m.now += 1000;
	mod_switch(&m, 0, 1, -1, TASK_RUNNING, 0, 0);
	m.c[0].curr = 0;
	m.t[0].st = T_RUNNING;
	mod_memstall(&m, 0, 0, 1);
	m.t[0].depth = 2;
	WORD_IS(&m, 0, PSIM_TSK_RUNNING | PSIM_TSK_MEMSTALL |
		       PSIM_TSK_MEMSTALL_RUNNING | (1 << PSIM_DEPTH_SHIFT));
	TU_EQ(st->tasks[PSIM_NR_MEMSTALL], 1);
	TU_EQ(st->tasks[PSIM_NR_MEMSTALL_RUNNING], 1);
	TU_EQ(st->curr_memstall, 1);
	/* the nested leave ends the module's stall, not the real one */
	mod_memstall(&m, 0, 0, 0);
	m.t[0].depth = 1;
	WORD_IS(&m, 0, PSIM_TSK_RUNNING);
	TU_EQ(st->tasks[PSIM_NR_MEMSTALL], 0);		/* the truth has 1 */
	TU_EQ(st->curr_memstall, 0);
	/* the outer leave: depth 0, ignored; now module and truth agree */
	mod_memstall(&m, 0, 0, 0);
	m.t[0].depth = 0;
	WORD_IS(&m, 0, PSIM_TSK_RUNNING);
	TU_EQ(st->tasks[PSIM_NR_MEMSTALL], 0);
	TU_EQ(st->tasks[PSIM_NR_RUNNING], 1);
	TU_EQ(st->underflows, 0);
	m.exact = 1;
	check_exact(&m, 0);
	probes_stop();
}

/* A sleeper in iowait at load, woken on another CPU: nothing to undo. */
static void midload_iowait_sleeper_by_hand(void)
{
	static struct model m;

	model_init(&m, 98, NTASK);
	m.t[0].st = T_SLEEP;
	m.t[0].cpu = 1;
	m.t[0].iowait = 1;
	/* t1 queued on cpu2 */
	m.t[1].st = T_QUEUED;
	m.t[1].cpu = 2;
	if (be_load(&m, true))
		return;
	m.now += 1000;
	mod_migrate(&m, 0, 2);		/* word 0: ignored */
	m.t[0].cpu = 2;
	TU_EQ(m.c[1].st.tasks[PSIM_NR_IOWAIT], 0);
	TU_EQ(m.c[1].st.underflows, 0);
	mod_wakeup(&m, 0);
	m.t[0].st = T_QUEUED;
	m.t[0].iowait = 0;
	WORD_IS(&m, 0, PSIM_TSK_RUNNING);
	TU_EQ(m.c[2].st.tasks[PSIM_NR_RUNNING], 1);
	TU_EQ(m.c[2].st.tasks[PSIM_NR_IOWAIT], 0);
	TU_EQ(m.c[2].st.underflows, 0);
	/* a queued task at load is taken into account when it runs */
	mod_migrate(&m, 1, 0);		/* load balancing, word 0: ignored */
	m.t[1].cpu = 0;
	TU_EQ(m.c[2].st.tasks[PSIM_NR_RUNNING], 1);
	TU_EQ(m.c[2].st.underflows, 0);
	mod_switch(&m, 0, 1, -1, TASK_RUNNING, 0, 1);
	m.c[0].curr = 1;
	m.t[1].st = T_RUNNING;
	m.t[1].touched = 1;
	TU_EQ(m.c[0].st.tasks[PSIM_NR_RUNNING], 1);
	TU_EQ(m.c[0].st.oncpu, 1);
	m.exact = 1;
	check_exact(&m, 0);
	probes_stop();
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
