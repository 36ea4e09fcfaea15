/* SPDX-License-Identifier: GPL-2.0 */
/*
 * probes_be.h: the real probes of src/psi_probes.c, compiled against the
 * kernel API shim (shim/), as model.h's backend. The test registers them
 * as the module does (psim_probes_find(), psim_probes_start()) and calls
 * what the shim recorded, on the CPU, with the interrupt state, the kernel
 * would. Included by every test that drives the probes (test_probes.c,
 * test_model.c, test_midload.c), each linked with src/psi_probes.c and
 * shim/shim.c.
 */
#ifndef PROBES_BE_H
#define PROBES_BE_H

#include "model.h"
#include "kcall.h"

/* What psi_aggregate.c and psi_triggers.c would define. */
struct delayed_work psim_avgs_work;
struct task_struct *psim_avgs_worker;
struct static_key_false psim_poll_key;
struct psim_triggers psim_sys_triggers;

#ifdef CONFIG_PSI
static const bool task_store = true;
#define task_word(t)	((t)->psi_flags)
#else
static const bool task_store;
static unsigned int no_word;
#define task_word(t)	(*((void)(t), &no_word))
#endif

/* what a former load left in a word: flags counted on cpu3 (3 + 1) */
#define STALE_WORD	((4U << 16) | PSIM_TSK_RUNNING | PSIM_TSK_IOWAIT)

typedef void (*migrate_fn)(void *, struct task_struct *, int);
typedef void (*reclaim_begin_fn)(void *, int, gfp_t);
typedef void (*reclaim_end_fn)(void *, unsigned long);
typedef void (*compact_begin_fn)(void *, struct compact_control *,
				 unsigned long, unsigned long, bool);
typedef void (*compact_end_fn)(void *, struct compact_control *,
			       unsigned long, unsigned long, bool, int);

static struct task_struct idle_ts[NR_CPUS];

/* ------------------------------------------------------------------ */
/* Calling the probes as the kernel does */

static void call_wakeup_new(int parent_cpu, struct task_struct *p)
{
	struct ctx c = ctx_enter(parent_cpu, true);

	p->__state = TASK_RUNNING;
	p->sched_info.last_queued = shim_now;
	((task_fn)tp_func("sched_wakeup_new"))(NULL, p);
	ctx_leave(c);
}

/* set_task_cpu(): before task_cpu() changes; pi_lock or rq lock held */
static void call_migrate(int on_cpu, struct task_struct *p, int dest)
{
	struct ctx c = ctx_enter(on_cpu, true);

	((migrate_fn)tp_func("sched_migrate_task"))(NULL, p, dest);
	p->cpu = dest;
	ctx_leave(c);
}

/* exchange_tids(left, right): entry, the pid swap, return */
static __attribute__((unused)) void
call_exchange_tids(int cpu, struct task_struct *left,
			       struct task_struct *right)
{
	struct kretprobe *rp = shim_kretprobe("exchange_tids");
	struct kretprobe_instance ri;
	struct pt_regs regs = { { (unsigned long)left, (unsigned long)right } };
	struct ctx c = ctx_enter(cpu, true);	/* write_lock_irq(tasklist) */
	pid_t tmp;

	memset(&ri, 0, sizeof(ri));
	if (rp)
		rp->entry_handler(&ri, &regs);
	tmp = left->pid;
	left->pid = right->pid;
	right->pid = tmp;
	if (rp)
		rp->handler(&ri, &regs);
	ctx_leave(c);
}

/* The last of @cpu: its idle task's cpuhp_report_idle_dead() (kprobe). */
static __attribute__((unused)) void call_idle_dead(int cpu)
{
	struct kprobe *kp = shim_kprobe("cpuhp_report_idle_dead");
	struct pt_regs regs = { { 0 } };
	struct ctx c;

	if (!kp)
		return;
	c = ctx_enter(cpu, true);
	kp->pre_handler(kp, &regs);
	ctx_leave(c);
}

/* The CPU-dead callback, on a control CPU, in a kthread: interrupts on. */
static __attribute__((unused)) void call_cpu_dead(int on_cpu, int cpu)
{
	struct ctx c = ctx_enter(on_cpu, false);

	shim_cpuhp_teardown(cpu);
	ctx_leave(c);
}

enum { MS_KPROBE, MS_RECLAIM, MS_MEMCG, MS_COMPACT };

/* psi_memstall_enter/leave, or a reclaim or compaction tracepoint pair,
 * in the task's own context: interrupts on */
static void call_memstall(int cpu, int how, bool enter)
{
	struct pt_regs regs = { { 0 } };
	struct ctx c = ctx_enter(cpu, false);
	struct kprobe *kp;

	switch (how) {
	case MS_KPROBE:
		kp = shim_kprobe(enter ? "psi_memstall_enter" :
					 "psi_memstall_leave");
		kp->pre_handler(kp, &regs);
		break;
	case MS_RECLAIM:
		if (enter)
			((reclaim_begin_fn)tp_func("mm_vmscan_direct_reclaim_begin"))(NULL, 0, 0);
		else
			((reclaim_end_fn)tp_func("mm_vmscan_direct_reclaim_end"))(NULL, 1);
		break;
	case MS_MEMCG:
		if (enter)
			((reclaim_begin_fn)tp_func("mm_vmscan_memcg_reclaim_begin"))(NULL, 0, 0);
		else
			((reclaim_end_fn)tp_func("mm_vmscan_memcg_reclaim_end"))(NULL, 1);
		break;
	case MS_COMPACT:
		if (enter)
			((compact_begin_fn)tp_func("mm_compaction_begin"))(NULL, NULL, 0, 1, true);
		else
			((compact_end_fn)tp_func("mm_compaction_end"))(NULL, NULL, 0, 1, true, 0);
		break;
	}
	ctx_leave(c);
}

/* A fresh shim and a freshly loaded module. */
static int probes_start(bool memstall_tp_only)
{
	int cpu, i, ret;

	memset(&psim_avgs_work, 0, sizeof(psim_avgs_work));
	psim_avgs_worker = NULL;
	shim_lock_hook = NULL;
	shim_nheld = 0;
	shim_jb_armed = false;
	shim_cpu = 0;
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		shim_irqs_off[cpu] = false;
		memset(&idle_ts[cpu], 0, sizeof(idle_ts[cpu]));
		idle_ts[cpu].cpu = cpu;
		shim_current[cpu] = &idle_ts[cpu];
	}
	for (i = 0; i < shim_ntracepoints; i++)
		shim_tracepoints[i].func = NULL;
	ret = psim_probes_find();
	if (!ret)
		ret = psim_probes_start(memstall_tp_only, false);
	TU_CHECK(!ret, "psim_probes_start: %d", ret);
	TU_CHECK(tp_func("sched_switch") && tp_func("sched_wakeup") &&
		 tp_func("sched_wakeup_new") && tp_func("sched_migrate_task") &&
		 shim_cpuhp_teardown, "a probe is not registered");
	/* the pid swap moves table words; task words stay with their task */
	TU_CHECK(!shim_kretprobe("exchange_tids") == task_store,
		 "exchange_tids kretprobe %s with the words in %s",
		 shim_kretprobe("exchange_tids") ? "registered" : "missing",
		 task_store ? "task_struct" : "the table");
	TU_CHECK(psim_store_table_size() == (task_store ? 0 : PID_MAX_LIMIT),
		 "table of %u pids", psim_store_table_size());
	for (i = 0; task_store && i < shim_ntasks; i++)
		TU_CHECK(!task_word(shim_tasks[i]),
			 "pid %d: word %#x after the start, want 0",
			 shim_tasks[i]->pid, task_word(shim_tasks[i]));
	return ret;
}

/* Unload; the shim checks that everything registered is unregistered. */
static void probes_stop(void)
{
	int i;

	shim_lock_hook = NULL;
	shim_jb_armed = false;
	psim_probes_stop();
	for (i = 0; i < shim_ntracepoints; i++)
		TU_CHECK(!shim_tracepoints[i].func, "%s still registered",
			 shim_tracepoints[i].name);
	TU_CHECK(!shim_kprobe("psi_memstall_enter") &&
		 !shim_kprobe("cpuhp_report_idle_dead") &&
		 !shim_kretprobe("exchange_tids") && !shim_cpuhp_teardown,
		 "a kprobe or the hotplug state is still registered");
	/* psi_flags back as the kernel left it */
	for (i = 0; task_store && i < shim_ntasks; i++)
		TU_CHECK(!task_word(shim_tasks[i]),
			 "pid %d: word %#x after the stop, want 0",
			 shim_tasks[i]->pid, task_word(shim_tasks[i]));
}

/* ------------------------------------------------------------------ */
/* The model's backend: its events go to the real probes */

static struct task_struct ts[NTASK];
static u64 brng;		/* the backend's own choices */
static int ms_how[NTASK][MAXDEPTH + 1];	/* memstall kind per depth */
static bool tp_only;
static unsigned long n_wake_current, n_ms_tp;
static pid_t switched_in_pid[NR_CPUS];	/* next->pid at the last switch */

static unsigned int brnd(unsigned int n)
{
	brng ^= brng >> 12;
	brng ^= brng << 25;
	brng ^= brng >> 27;
	return ((brng * 2685821657736338717ULL) >> 32) % n;
}

static struct task_struct *task_of(int p, int cpu)
{
	return p >= 0 ? &ts[p] : &idle_ts[cpu];
}

static void be_switch(struct model *m, int cpu, int preempt, int prev,
		      unsigned int prev_state, int prev_in_iowait, int next)
{
	shim_now = m->now;
	call_switch(cpu, preempt, task_of(prev, cpu), prev_state,
		    prev_in_iowait, task_of(next, cpu));
	switched_in_pid[cpu] = task_of(next, cpu)->pid;
}

static bool be_wakeup(struct model *m, int p)
{
	const struct mtask *t = &m->t[p];
	int waker = online_cpu(m, brnd(NCPU));
	bool off = true;

	shim_now = m->now;
	ts[p].cpu = t->cpu;
	/* a running task woken by itself: 6.1's p == current path */
	if (t->st == T_RUNNING && brnd(2)) {
		waker = t->cpu;
		off = brnd(2);
		n_wake_current++;
	}
	call_wakeup(waker, &ts[p], off);
	return waker != t->cpu || t->st != T_RUNNING;
}

static void be_wakeup_new(struct model *m, int p)
{
	shim_now = m->now;
	ts[p].cpu = m->t[p].cpu;
	ts[p].se.sched_delayed = 0;
	task_word(&ts[p]) = 0;		/* copy_process() */
	call_wakeup_new(online_cpu(m, brnd(NCPU)), &ts[p]);
}

static void be_migrate(struct model *m, int p, int dest)
{
	shim_now = m->now;
	ts[p].cpu = m->t[p].cpu;
	call_migrate(online_cpu(m, brnd(NCPU)), &ts[p], dest);
}

static void be_memstall(struct model *m, int cpu, int p, int enter)
{
	int d = m->t[p].depth, how;

	shim_now = m->now;
	if (enter) {
		how = tp_only ? MS_RECLAIM + brnd(3) : MS_KPROBE;
		ms_how[p][d + 1] = how;
	} else {
		how = ms_how[p][d];
	}
	n_ms_tp += how != MS_KPROBE;
	call_memstall(cpu, how, enter);
}

static void be_sync(struct model *m)
{
	struct psim_cpu_debug d;
	int cpu;

	for (cpu = 0; cpu < NCPU; cpu++) {
		psim_cpu_debug(cpu, &d);
		m->c[cpu].st = d.st;
	}
}

/* In task_struct the word is the field; the pid table is not visible. */
static bool be_word(struct model *m, int p, u16 *w)
{
	*w = (u16)task_word(&ts[p]);
	return task_store;
}

static const struct model_be real_be = {
	.sw = be_switch,
	.wakeup = be_wakeup,
	.wakeup_new = be_wakeup_new,
	.migrate = be_migrate,
	.memstall = be_memstall,
	.sync = be_sync,
	.word = be_word,
};

/*
 * Load psi_mod into the model's running system: the tasks as the model
 * has them (states, CPUs, what runs where), a fresh shim, the probes
 * started at the model's time. With @stale, every task's word holds what
 * a former load left. Returns nonzero if the start failed.
 */
static int be_load(struct model *m, bool stale)
{
	int cpu, i, d;

	shim_now = m->now;
	for (i = 0; i < NTASK; i++) {
		shim_task_add(&ts[i]);
		task_word(&ts[i]) = stale ? STALE_WORD : 0;
	}
	if (probes_start(tp_only))
		return -1;
	for (i = 0; i < NTASK; i++) {
		const struct mtask *t = &m->t[i];

		if (stale && task_store)
			TU_CHECK(!task_word(&ts[i]),
				 "ts[%d] kept its stale word", i);
		memset(&ts[i], 0, sizeof(ts[i]));
		ts[i].pid = 1000 + i;
		ts[i].cpu = t->cpu;
		ts[i].__state = t->st == T_SLEEP ? (t->iowait ?
			TASK_UNINTERRUPTIBLE : TASK_INTERRUPTIBLE) :
			t->st == T_DEAD ? TASK_DEAD : TASK_RUNNING;
		ts[i].in_iowait = t->st == T_SLEEP && t->iowait;
		/* a stall entered before the load: its kind, for the leave */
		for (d = 0; d <= MAXDEPTH; d++)
			ms_how[i][d] = tp_only ? MS_RECLAIM : MS_KPROBE;
	}
	for (cpu = 0; cpu < NCPU; cpu++)
		shim_current[cpu] = m->c[cpu].curr >= 0 ?
				    &ts[m->c[cpu].curr] : &idle_ts[cpu];
	m->be = &real_be;
	model_load(m);
	be_sync(m);
	return 0;
}

/* Time passes before an event of the test's own. */
static __attribute__((unused)) void tick(struct model *m)
{
	m->ev_kind = EV_NONE;
	m->ev++;
	m->now += 1 + brnd(20000);
	truth_advance(m, m->now);
	shim_now = m->now;
}

#endif /* PROBES_BE_H */
