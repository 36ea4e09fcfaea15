/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmod.h: the module's own files (src/psi_probes.c, psi_aggregate.c,
 * psi_triggers.c) loaded into the kernel API shim (shim/shim.h,
 * shim/kapi.h), started and stopped in psi_mod.c's order, and the kernel
 * events that drive them: tasks woken onto a CPU, switched in, put to
 * sleep, by the real probes' tracepoint handlers. Shared by test_aggregate
 * and test_triggers; the times are shim_now, which the test advances.
 */
#ifndef KMOD_H
#define KMOD_H

#include "kapi.h"
#include "kcall.h"

#define MS		1000000ULL	/* ns */
/* PSIM_FREQ in ns: 501 jiffies at HZ=250, 2.004 s */
#define PERIOD		(501ULL * SHIM_NSEC_PER_JIFFY)

static struct task_struct kmod_idle[NR_CPUS];
/* the per-CPU view (percpu=1) at the next kmod_start() */
static bool kmod_percpu;
/* the kworker that runs the averaging work */
static struct task_struct kmod_kworker;
/*
 * The cgroup groups' start and stop (test_cgroup: psim_cgroups_start() and
 * psim_cgroups_stop()), between the triggers and the probes as in
 * psi_mod.c; NULL for the tests that link no src/psi_cgroup.c.
 */
static int (*kmod_cgroups_start)(void);
static void (*kmod_cgroups_stop)(void);

/*
 * The module loaded at shim_now: psi_mod.c's start order (the aggregation,
 * the triggers, the probes), every CPU running its idle task.
 */
static void kmod_start(void)
{
	int cpu, i, ret;

	shim_lock_hook = NULL;
	shim_nheld = 0;
	shim_jb_armed = false;
	shim_cpu = 0;
	shim_msleep_hook = NULL;
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		shim_irqs_off[cpu] = false;
		memset(&kmod_idle[cpu], 0, sizeof(kmod_idle[cpu]));
		kmod_idle[cpu].cpu = cpu;
		shim_current[cpu] = &kmod_idle[cpu];
	}
	memset(&kmod_kworker, 0, sizeof(kmod_kworker));
	kmod_kworker.pid = 50;
	for (i = 0; i < shim_ntracepoints; i++)
		shim_tracepoints[i].func = NULL;
	psim_aggregate_start(false, kmod_percpu);
	psim_triggers_start();
	ret = kmod_cgroups_start ? kmod_cgroups_start() : 0;
	TU_CHECK(!ret, "psim_cgroups_start: %d", ret);
	ret = psim_probes_find();
	if (!ret)
		ret = psim_probes_start(false, false);
	TU_CHECK(!ret, "psim_probes_start: %d", ret);
}

/* psi_mod.c's stop, but for the files (the test releases its own). */
static void kmod_stop(void)
{
	psim_probes_stop();
	if (kmod_cgroups_stop)
		kmod_cgroups_stop();
	psim_triggers_stop();
	psim_aggregate_stop();
}

/* sched_switch on @cpu from current to @next, @prev_state for current */
static void kmod_switch(int cpu, unsigned int prev_state, bool iowait,
			struct task_struct *next)
{
	call_switch(cpu, !prev_state, shim_current[cpu], prev_state, iowait,
		    next);
}

/* sched_wakeup of @p onto @cpu, under its runqueue lock */
static void kmod_wake(int cpu, struct task_struct *p)
{
	p->cpu = cpu;
	call_wakeup(cpu, p, true);
}

static void kmod_run(int cpu, struct task_struct *p)
{
	kmod_wake(cpu, p);
	kmod_switch(cpu, TASK_RUNNING, false, p);
}

/* current on @cpu goes to sleep (in iowait if @iowait), @next runs */
static void kmod_sleep(int cpu, bool iowait, struct task_struct *next)
{
	kmod_switch(cpu, TASK_UNINTERRUPTIBLE, iowait,
		    next ? next : &kmod_idle[cpu]);
}

/*
 * The averaging work, if queued, run by a kworker on @cpu: it is woken
 * there, preempts what runs, runs the work and sleeps again. Returns
 * whether the work was queued.
 */
static bool kmod_work(int cpu)
{
	struct task_struct *was = shim_current[cpu];
	int was_cpu = shim_cpu;
	bool ran;

	kmod_run(cpu, &kmod_kworker);
	shim_cpu = cpu;
	ran = shim_work_run(&psim_avgs_work);
	shim_cpu = was_cpu;
	kmod_sleep(cpu, false, was);
	return ran;
}

#endif /* KMOD_H */
