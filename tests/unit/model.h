/* SPDX-License-Identifier: GPL-2.0 */
/*
 * model.h: a small scheduler with ground truth, driving psi_mod's real
 * probes (src/psi_probes.c, through probes_be.h).
 *
 * The ground truth is what each task really is: dead, asleep (maybe in
 * iowait) on the CPU it slept on, queued on a runqueue, or running; and its
 * real memstall nesting depth. From it the kernel's semantics give each
 * CPU's counts (kernel/sched/psi.c, kernel/sched/stats.h, Linux 6.1):
 *   NR_IOWAIT            sleepers in iowait, on the CPU they slept on
 *   NR_MEMSTALL          tasks with depth > 0: runnable ones on their CPU,
 *                        sleeping ones on the CPU they slept on
 *   NR_RUNNING           queued + running tasks
 *   NR_MEMSTALL_RUNNING  runnable tasks with depth > 0
 * and the state masks (test_state() and the cpu_curr()->in_memstall rule).
 *
 * The module side is the real probes of src/psi_probes.c (probes_be.h,
 * the backend m->be): each event goes to them, and their CPU states are
 * copied into m->c[].st after it. Where the words are visible (in
 * task_struct, the backend's word()), each task's word is checked too.
 *
 * Events of test_probes.c's own (it sets the fields below): a zombie (an exec'ing thread's old leader) that exits at its
 * next switch-out; an offline CPU, where no event happens and no task
 * goes; a task moved without a tracepoint (5.10 pushes a dying CPU's tasks
 * after it is offline), whose counts psi_mod keeps on the old CPU until the
 * task's next event: the expected counts follow psi_mod there.
 */
#ifndef MODEL_H
#define MODEL_H

#include <stdint.h>
#include "psi_mod_logic.h"
#include "tu.h"
#include "kernel_ref.h"

#define NCPU		3
#define NTASK		50
#define MAXDEPTH	3	/* memstall nesting in the model */

/* task->__state values the switch tracepoint can see */
#define TASK_RUNNING		0x0000
#define TASK_INTERRUPTIBLE	0x0001
#define TASK_UNINTERRUPTIBLE	0x0002
#define TASK_DEAD		0x0080

enum { T_DEAD, T_SLEEP, T_QUEUED, T_RUNNING };

struct mtask {
	int st;		/* T_* */
	int cpu;	/* runnable: its runqueue; asleep: the CPU it slept on */
	int iowait;	/* asleep in io_schedule() */
	int depth;	/* real memstall nesting depth */
	int vdepth;	/* the part of it entered since the load: all that
			 * psi_mod can see (a stall entered before the load
			 * is invisible to it until it ends) */
	/* since psi_mod was loaded: */
	int seen;	/* switched in, woken or forked */
	int touched;	/* any event that sets the whole word */
	int zombie;	/* exits at its next switch-out that is not a preemption */
	int lagged;	/* moved unseen: psi_mod counts it on lag_cpu */
	int lag_cpu;
};

struct mcpu {
	int curr;				/* -1: the idle task */
	struct psim_cpu_state st;		/* psi_mod's */
	u64 truth_times[PSIM_NR_STATES];	/* kernel semantics, ns */
	u64 agg_prev[PSIM_NR_STATES];		/* aggregator's times_prev */
	u64 agg_truth_prev[PSIM_NR_STATES];
	u64 base_truth[PSIM_NR_STATES];		/* at convergence */
	u64 base_mod[PSIM_NR_STATES];
	int switched;				/* a switch since load */
	int offline;				/* no events, no tasks go there */
};

enum { EV_NONE, EV_SWITCH, EV_WAKEUP, EV_SPURIOUS, EV_MIGRATE, EV_MS_ENTER,
       EV_MS_LEAVE, EV_FORK, EV_NR };

static const char *const ev_names[EV_NR] = {
	"none", "switch", "wakeup", "spurious-wakeup", "migrate-queued",
	"memstall-enter", "memstall-leave", "fork",
};

/* what happened to prev in a switch */
enum { PREV_IDLE, PREV_PREEMPT, PREV_SIGNAL, PREV_BLOCK, PREV_BLOCK_IO,
       PREV_EXIT, PREV_NR };

static const char *const prev_names[PREV_NR] = {
	"idle", "preempted", "signal/yield", "blocks", "blocks-in-iowait",
	"exits",
};

struct model;

/* The probes the events go to (probes_be.h). */
struct model_be {
	void (*sw)(struct model *m, int cpu, int preempt, int prev,
		   unsigned int prev_state, int prev_in_iowait, int next);
	/* false: @p woke itself (try_to_wake_up() of current) */
	bool (*wakeup)(struct model *m, int p);
	void (*wakeup_new)(struct model *m, int p);
	void (*migrate)(struct model *m, int p, int dest);
	void (*memstall)(struct model *m, int cpu, int p, int enter);
	/* copy the probes' CPU states into m->c[].st */
	void (*sync)(struct model *m);
	/* task @p's word into *@w; false where the words are not visible */
	bool (*word)(struct model *m, int p, u16 *w);
};

struct model {
	const struct model_be *be;	/* the probes, once loaded */
	struct mtask t[NTASK];
	struct mcpu c[NCPU];
	u64 now, last_now;
	u64 seed, rng;
	int ntask;		/* tasks in use: t[ntask..] stay dead */
	int loaded;		/* psi_mod sees the events */
	int exact;		/* test 3: everything must match at all times */
	int converged;		/* test 4: all seen since load */
	unsigned long ev;	/* events so far */
	/* the last event, for failure messages */
	int ev_kind, ev_cpu, ev_p, ev_q, ev_a, ev_b;
	/* how often each thing happened: the test must have exercised it */
	unsigned long n_ev[EV_NR], n_prev[PREV_NR];
	unsigned long n_wake_migrated, n_depth_max, n_spurious_checked;
	unsigned long n_time_jumps, n_agg;
};

static const char *model_event(const struct model *m)
{
	static char buf[200];

	if (m->ev_kind == EV_SWITCH)
		snprintf(buf, sizeof(buf), "switch cpu%d prev=%d %s next=%d",
			 m->ev_cpu, m->ev_p, prev_names[m->ev_a], m->ev_q);
	else if (m->ev_kind == EV_WAKEUP)
		snprintf(buf, sizeof(buf), "wakeup t%d cpu%d -> cpu%d",
			 m->ev_p, m->ev_a, m->ev_cpu);
	else if (m->ev_kind == EV_MIGRATE)
		snprintf(buf, sizeof(buf), "migrate queued t%d cpu%d -> cpu%d",
			 m->ev_p, m->ev_a, m->ev_cpu);
	else
		snprintf(buf, sizeof(buf), "%s t%d cpu%d",
			 ev_names[m->ev_kind], m->ev_p, m->ev_cpu);
	return buf;
}

/* Checks carry the seed and the event: enough to replay a failure. */
#define MCHECK(m, cond, fmt, ...)					\
	TU_CHECK(cond, "seed %#llx event %lu (%s): " fmt,		\
		 (unsigned long long)(m)->seed, (m)->ev, model_event(m),	\
		 ##__VA_ARGS__)

static u64 model_rand(struct model *m)
{
	/* xorshift64* */
	m->rng ^= m->rng >> 12;
	m->rng ^= m->rng << 25;
	m->rng ^= m->rng >> 27;
	return m->rng * 2685821657736338717ULL;
}

static unsigned int rnd(struct model *m, unsigned int n)
{
	return (model_rand(m) >> 32) % n;
}

/* ------------------------------------------------------------------ */
/* Ground truth */

static unsigned int truth_flags(const struct mtask *t)
{
	switch (t->st) {
	case T_SLEEP:
		return (t->iowait ? PSIM_TSK_IOWAIT : 0) |
		       (t->depth ? PSIM_TSK_MEMSTALL : 0);
	case T_QUEUED:
	case T_RUNNING:
		return PSIM_TSK_RUNNING |
		       (t->depth ? PSIM_TSK_MEMSTALL |
				   PSIM_TSK_MEMSTALL_RUNNING : 0);
	}
	return 0;
}

/* The true counts of every CPU, in one pass over the tasks. */
static void truth_counts(const struct model *m,
			 unsigned int n[NCPU][PSIM_NR_COUNTS])
{
	int i, k;

	memset(n, 0, sizeof(unsigned int) * NCPU * PSIM_NR_COUNTS);
	for (i = 0; i < m->ntask; i++) {
		unsigned int f = truth_flags(&m->t[i]);
		int cpu = m->t[i].lagged ? m->t[i].lag_cpu : m->t[i].cpu;

		for (k = 0; k < PSIM_NR_COUNTS; k++)
			if (f & (1U << k))
				n[cpu][k]++;
	}
}

static int truth_oncpu(const struct model *m, int cpu)
{
	return m->c[cpu].curr >= 0;
}

static int truth_curr_memstall(const struct model *m, int cpu)
{
	return m->c[cpu].curr >= 0 && m->t[m->c[cpu].curr].depth > 0;
}

/* psi_group_change()'s state mask from the true counts @n of @cpu */
static u32 truth_mask(const struct model *m, int cpu, const unsigned int *n)
{
	u32 mask = 0;
	int s;

	for (s = 0; s < PSIM_NR_STATES; s++)
		if (kernel_test_state(n, s, truth_oncpu(m, cpu)))
			mask |= 1U << s;
	if (truth_oncpu(m, cpu) && truth_curr_memstall(m, cpu))
		mask |= 1U << PSIM_MEM_FULL;
	return mask;
}

/* record_times() of the kernel: FULL only inside SOME */
static void truth_advance(struct model *m, u64 now)
{
	unsigned int n[NCPU][PSIM_NR_COUNTS];
	u64 delta = now - m->last_now;
	int cpu;

	truth_counts(m, n);
	for (cpu = 0; cpu < NCPU; cpu++) {
		u32 mask = truth_mask(m, cpu, n[cpu]);
		u64 *tt = m->c[cpu].truth_times;
		int r;

		for (r = PSIM_IO_SOME; r <= PSIM_CPU_SOME; r += 2) {
			if (mask & (1U << r)) {
				tt[r] += delta;
				if (mask & (1U << (r + 1)))
					tt[r + 1] += delta;
			}
		}
		if (mask & (1U << PSIM_NONIDLE))
			tt[PSIM_NONIDLE] += delta;
	}
	m->last_now = now;
}

/* ------------------------------------------------------------------ */
/* psi_mod: the events go to the real probes */

/* psim_probe_switch(); p < 0 is the idle task (pid 0) */
static void mod_switch(struct model *m, int cpu, int preempt, int prev,
		       unsigned int prev_state, int prev_in_iowait, int next)
{
	if (!m->loaded)
		return;
	m->be->sw(m, cpu, preempt, prev, prev_state, prev_in_iowait, next);
	m->be->sync(m);
}

/*
 * psim_probe_wakeup(): task_cpu(p) is already the wakeup CPU. Whether psi_mod
 * heard of @p: not from a task that wakes itself (it is running and stays
 * so; the kernel's PSI does nothing either).
 */
static bool mod_wakeup(struct model *m, int p)
{
	bool heard;

	if (!m->loaded)
		return false;
	heard = m->be->wakeup(m, p);
	m->be->sync(m);
	return heard;
}

/* psim_probe_wakeup_new() */
static void mod_wakeup_new(struct model *m, int p)
{
	if (!m->loaded)
		return;
	m->be->wakeup_new(m, p);
	m->be->sync(m);
}

/* psim_probe_migrate(): fires before task_cpu() changes */
static void mod_migrate(struct model *m, int p, int dest)
{
	if (!m->loaded)
		return;
	m->be->migrate(m, p, dest);
	m->be->sync(m);
}

/* psim_memstall(): current task of @cpu */
static void mod_memstall(struct model *m, int cpu, int p, int enter)
{
	struct mtask *t = &m->t[p];

	if (!m->loaded)
		return;
	m->be->memstall(m, cpu, p, enter);
	m->be->sync(m);
	if (enter && t->vdepth < PSIM_DEPTH_MAX)
		t->vdepth++;
	else if (!enter && t->vdepth)
		t->vdepth--;
}

/* Task @p's word, if the backend can see it. */
static bool mod_word(struct model *m, int p, u16 *w)
{
	return m->be && m->be->word && m->be->word(m, p, w);
}

/* ------------------------------------------------------------------ */
/* Events: ground truth and psi_mod together */

static void model_init(struct model *m, u64 seed, int ntask)
{
	int i;

	memset(m, 0, sizeof(*m));
	m->seed = seed;
	m->ntask = ntask;
	m->rng = seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
	if (!m->rng)
		m->rng = 1;
	m->now = m->last_now = 1000000;
	for (i = 0; i < NCPU; i++) {
		m->c[i].curr = -1;
		m->c[i].st.state_start = m->now;
	}
	/* plain sleepers (nothing to count) and a few free pids */
	for (i = 0; i < m->ntask; i++) {
		m->t[i].st = i < ntask - ntask / 10 ? T_SLEEP : T_DEAD;
		m->t[i].cpu = i % NCPU;
	}
}

/* psi_mod is loaded now: it knows nothing, every word and CPU is fresh */
static void model_load(struct model *m)
{
	int i;

	m->loaded = 1;
	for (i = 0; i < NCPU; i++) {
		memset(&m->c[i].st, 0, sizeof(m->c[i].st));
		m->c[i].st.state_start = m->now;
		memset(m->c[i].agg_prev, 0, sizeof(m->c[i].agg_prev));
		m->c[i].switched = 0;
	}
	for (i = 0; i < m->ntask; i++) {
		m->t[i].vdepth = 0;
		m->t[i].seen = 0;
		m->t[i].touched = 0;
	}
}

/* @c if it is online, else the next CPU that is */
static int online_cpu(const struct model *m, int c)
{
	while (m->c[c].offline)
		c = (c + 1) % NCPU;
	return c;
}

/* A switch on @cpu: @prev (or -1) does @what, @next (or -1) runs. */
static void model_do_switch(struct model *m, int cpu, int what, int preempt,
			    unsigned int state, int in_iowait, int next)
{
	int prev = m->c[cpu].curr;

	m->ev_kind = EV_SWITCH;
	m->ev_cpu = cpu;
	m->ev_p = prev;
	m->ev_q = next;
	m->ev_a = what;
	m->n_ev[EV_SWITCH]++;
	m->n_prev[what]++;

	mod_switch(m, cpu, preempt, prev, state, in_iowait, next);

	if (prev >= 0) {
		struct mtask *t = &m->t[prev];

		switch (what) {
		case PREV_PREEMPT:
		case PREV_SIGNAL:
			t->st = T_QUEUED;
			break;
		case PREV_BLOCK:
		case PREV_BLOCK_IO:
			t->st = T_SLEEP;
			t->iowait = in_iowait;
			break;
		case PREV_EXIT:
			t->st = T_DEAD;
			t->iowait = 0;
			t->zombie = 0;
			break;
		}
		t->touched = 1;
		t->lagged = 0;
	}
	if (next >= 0) {
		m->t[next].st = T_RUNNING;
		m->t[next].seen = m->t[next].touched = 1;
		m->t[next].lagged = 0;
	}
	m->c[cpu].curr = next;
	m->c[cpu].switched = 1;
}

static void ev_switch(struct model *m, int cpu)
{
	int cand[NTASK], ncand = 0, prev = m->c[cpu].curr, next = -1;
	int i, what = PREV_IDLE, preempt = 0, in_iowait = 0;
	unsigned int state = TASK_RUNNING;

	if (m->c[cpu].offline)
		return;
	for (i = 0; i < m->ntask; i++)
		if (m->t[i].st == T_QUEUED && m->t[i].cpu == cpu)
			cand[ncand++] = i;

	if (prev >= 0) {
		unsigned int r = rnd(m, 100);

		if (r < 30) {
			what = PREV_PREEMPT;
			preempt = 1;
			/* maybe preempted in io_schedule() before it slept */
			if (rnd(m, 2)) {
				state = TASK_UNINTERRUPTIBLE;
				in_iowait = rnd(m, 2);
			}
		} else if (r < 35) {
			/* signal pending: state reset to running; or yield */
			what = PREV_SIGNAL;
			in_iowait = rnd(m, 2);
		} else if (r < 95 || m->t[prev].depth) {
			in_iowait = rnd(m, 2);
			what = in_iowait ? PREV_BLOCK_IO : PREV_BLOCK;
			state = in_iowait || rnd(m, 2) ? TASK_UNINTERRUPTIBLE :
							 TASK_INTERRUPTIBLE;
		} else {
			what = PREV_EXIT;
			state = TASK_DEAD;
		}
		/* a zombie is preempted or does its last switch */
		if (m->t[prev].zombie && what != PREV_PREEMPT) {
			what = PREV_EXIT;
			state = TASK_DEAD;
			in_iowait = 0;
		}
		/* prev stays runnable and nothing else is queued: no switch */
		if ((what == PREV_PREEMPT || what == PREV_SIGNAL) && !ncand)
			return;
		preempt = what == PREV_PREEMPT;
	} else {
		if (!ncand)
			return;
		preempt = rnd(m, 2);
	}
	if (ncand)
		next = cand[rnd(m, ncand)];
	model_do_switch(m, cpu, what, preempt, state, in_iowait, next);
}

static void ev_fork(struct model *m, int p, int cpu)
{
	struct mtask *t = &m->t[p];

	m->ev_kind = EV_FORK;
	m->ev_p = p;
	m->ev_cpu = cpu;
	m->n_ev[EV_FORK]++;
	u16 w;

	/* the pid's word was cleared by its last owner's final switch */
	if (m->exact && mod_word(m, p, &w))
		MCHECK(m, w == 0, "a free pid has word %#x", w);
	t->st = T_QUEUED;
	t->cpu = cpu;
	t->iowait = 0;
	t->depth = 0;
	t->vdepth = 0;
	mod_wakeup_new(m, p);
	t->seen = t->touched = 1;
}

static void ev_wakeup(struct model *m, int p)
{
	struct mtask *t = &m->t[p];
	bool visible;
	u16 w0, w1;

	if (t->st == T_DEAD) {
		ev_fork(m, p, online_cpu(m, rnd(m, NCPU)));
		return;
	}
	m->ev_p = p;
	if (t->st == T_SLEEP) {
		int dest = online_cpu(m, rnd(m, NCPU));

		m->ev_kind = EV_WAKEUP;
		m->ev_a = t->cpu;
		m->ev_cpu = dest;
		m->n_ev[EV_WAKEUP]++;
		if (dest != t->cpu) {
			/* sched_migrate_task first, then sched_wakeup */
			mod_migrate(m, p, dest);
			t->cpu = dest;
			m->n_wake_migrated++;
		}
		mod_wakeup(m, p);
		t->st = T_QUEUED;
		t->iowait = 0;
	} else {
		/*
		 * It set a sleeping state but was woken before it switched
		 * out (or was preempted in it): still on its runqueue.
		 */
		m->ev_kind = EV_SPURIOUS;
		m->ev_cpu = t->cpu;
		m->n_ev[EV_SPURIOUS]++;
		visible = m->exact && mod_word(m, p, &w0);
		if (mod_wakeup(m, p))
			t->seen = t->touched = 1;
		if (visible && mod_word(m, p, &w1)) {
			MCHECK(m, w1 == w0,
			       "wakeup of a queued task: word %#x -> %#x",
			       w0, w1);
			m->n_spurious_checked++;
		}
		return;
	}
	t->seen = t->touched = 1;
}

static void ev_migrate_queued(struct model *m, int p, int dest)
{
	struct mtask *t = &m->t[p];

	m->ev_kind = EV_MIGRATE;
	m->ev_p = p;
	m->ev_a = t->cpu;
	m->ev_cpu = dest;
	m->n_ev[EV_MIGRATE]++;
	mod_migrate(m, p, dest);
	t->cpu = dest;
	t->lagged = 0;
}

static void ev_memstall(struct model *m, int cpu)
{
	int p = m->c[cpu].curr, enter;
	struct mtask *t;

	if (p < 0 || m->t[p].zombie)
		return;
	t = &m->t[p];
	/*
	 * Stalls are rarer than other events and short, but nest now and
	 * then: outside, enter one time in four; inside, leave two times
	 * in three (always at the maximum depth).
	 */
	if (!t->depth && rnd(m, 4))
		return;
	enter = !t->depth || (t->depth < MAXDEPTH && !rnd(m, 3));
	m->ev_kind = enter ? EV_MS_ENTER : EV_MS_LEAVE;
	m->ev_p = p;
	m->ev_cpu = cpu;
	m->n_ev[m->ev_kind]++;
	mod_memstall(m, cpu, p, enter);
	t->lagged = 0;
	if (enter) {
		t->depth++;
		t->touched = 1;
		if (t->depth == MAXDEPTH)
			m->n_depth_max++;
	} else {
		t->depth--;
	}
}

/* One random event at a later time. */
static void model_step(struct model *m)
{
	unsigned int r = rnd(m, 1000);
	int i;

	m->ev_kind = EV_NONE;
	m->ev++;
	if (rnd(m, 20000) == 0) {
		/* a CPU quiet for longer than a u32 of ns */
		m->now += 4000000000ULL + rnd(m, 2000000000);
		m->n_time_jumps++;
	} else {
		m->now += 1 + rnd(m, 20000);
	}
	/* the time up to now belongs to the states before the event */
	truth_advance(m, m->now);

	if (r < 350) {
		ev_switch(m, rnd(m, NCPU));
	} else if (r < 600) {
		ev_wakeup(m, rnd(m, m->ntask));
	} else if (r < 700) {
		int p = rnd(m, m->ntask);

		if (m->t[p].st == T_QUEUED) {
			int dest = (m->t[p].cpu + 1 + rnd(m, NCPU - 1)) % NCPU;

			dest = online_cpu(m, dest);
			if (dest != m->t[p].cpu)
				ev_migrate_queued(m, p, dest);
		}
	} else if (r < 950) {
		ev_memstall(m, rnd(m, NCPU));
	} else {
		for (i = 0; i < m->ntask; i++)
			if (m->t[i].st == T_DEAD)
				break;
		if (i < m->ntask)
			ev_fork(m, i, online_cpu(m, rnd(m, NCPU)));
		else
			ev_switch(m, rnd(m, NCPU));
	}
}

/* psi_mod's view of a CPU's state times, live part included */
static u64 mod_live_time(const struct model *m, int cpu, int s)
{
	const struct psim_cpu_state *st = &m->c[cpu].st;
	u64 t = st->times[s];

	if (st->state_mask & (1U << s))
		t += m->now - st->state_start;
	return t;
}

/* Counts, flags, masks and (if @times) state times must equal the truth. */
static void check_exact(struct model *m, int times)
{
	unsigned int nn[NCPU][PSIM_NR_COUNTS];
	int cpu, i, k, s;

	truth_counts(m, nn);
	for (cpu = 0; cpu < NCPU; cpu++) {
		const struct psim_cpu_state *st = &m->c[cpu].st;
		const unsigned int *n = nn[cpu];
		u32 tmask = truth_mask(m, cpu, n);

		for (k = 0; k < PSIM_NR_COUNTS; k++)
			MCHECK(m, st->tasks[k] == n[k],
			       "cpu%d tasks[%d] = %u, truth %u", cpu, k,
			       st->tasks[k], n[k]);
		MCHECK(m, st->underflows == 0, "cpu%d underflows %u", cpu,
		       st->underflows);
		MCHECK(m, st->oncpu == truth_oncpu(m, cpu),
		       "cpu%d oncpu %u, truth %d", cpu, st->oncpu,
		       truth_oncpu(m, cpu));
		MCHECK(m, st->curr_memstall == truth_curr_memstall(m, cpu),
		       "cpu%d curr_memstall %u, truth %d", cpu,
		       st->curr_memstall, truth_curr_memstall(m, cpu));
		MCHECK(m, st->state_mask == tmask,
		       "cpu%d state mask %#x, kernel's %#x", cpu,
		       st->state_mask, tmask);
		if (!times)
			continue;
		for (s = 0; s < PSIM_NR_STATES; s++) {
			u64 got = mod_live_time(m, cpu, s) - m->c[cpu].base_mod[s];
			u64 want = m->c[cpu].truth_times[s] -
				   m->c[cpu].base_truth[s];

			MCHECK(m, got == want,
			       "cpu%d state %d time %llu ns, kernel's %llu ns",
			       cpu, s, (unsigned long long)got,
			       (unsigned long long)want);
		}
	}
	/* the words, where the backend sees them */
	for (i = 0; i < m->ntask; i++) {
		const struct mtask *t = &m->t[i];
		u16 w;

		if (!mod_word(m, i, &w))
			break;
		MCHECK(m, (w & PSIM_TSK_MASK) == truth_flags(t),
		       "t%d (state %d cpu%d iowait %d depth %d) word %#x, truth flags %#x",
		       i, t->st, t->cpu, t->iowait, t->depth, w,
		       truth_flags(t));
		MCHECK(m, psim_depth(w) == (unsigned int)t->depth,
		       "t%d word depth %u, truth %d", i, psim_depth(w),
		       t->depth);
	}
}

/*
 * The aggregator's recent times equal the truth's state time deltas, in
 * the kernel's u32 (its per-CPU times and deltas wrap at 2^32 ns).
 */
static __attribute__((unused)) void check_aggregator(struct model *m)
{
	int cpu, s;

	m->n_agg++;
	for (cpu = 0; cpu < NCPU; cpu++) {
		struct mcpu *c = &m->c[cpu];
		u64 times[PSIM_NR_STATES];
		u32 changed, want_changed = 0;

		changed = psim_cpu_recent_times(&c->st, m->now, c->agg_prev,
						times);
		for (s = 0; s < PSIM_NR_STATES; s++) {
			u32 want = c->truth_times[s] - c->agg_truth_prev[s];

			MCHECK(m, times[s] == want,
			       "aggregator: cpu%d state %d %llu ns, kernel's %llu ns",
			       cpu, s, (unsigned long long)times[s],
			       (unsigned long long)want);
			if (want)
				want_changed |= 1U << s;
			c->agg_truth_prev[s] = c->truth_times[s];
		}
		MCHECK(m, changed == want_changed,
		       "aggregator: cpu%d changed %#x, expected %#x", cpu,
		       changed, want_changed);
	}
}

#endif /* MODEL_H */
