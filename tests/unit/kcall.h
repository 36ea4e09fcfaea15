/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcall.h: calling the real probes' tracepoint handlers as the kernel
 * does: on the CPU, with the interrupt state, the kernel would, after the
 * task fields the handlers read are set. For the tests that link
 * src/psi_probes.c with the shim (probes_be.h, kmod.h).
 */
#ifndef KCALL_H
#define KCALL_H

#include "psi_mod.h"
#include "tu.h"

typedef void (*switch_fn)(PSIM_SWITCH_PROTO);
typedef void (*task_fn)(void *, struct task_struct *);

/* Run on @cpu with interrupts @off; returns the state to restore. */
struct ctx {
	int cpu;
	bool irqs_off;
};

static struct ctx ctx_enter(int cpu, bool off)
{
	struct ctx c = { shim_cpu, shim_irqs_off[cpu] };

	shim_cpu = cpu;
	shim_irqs_off[cpu] = off;
	return c;
}

static void ctx_leave(struct ctx c)
{
	shim_irqs_off[shim_cpu] = c.irqs_off;
	shim_cpu = c.cpu;
}

static void *tp_func(const char *name)
{
	struct tracepoint *tp = shim_tp(name);

	return tp ? tp->func : NULL;
}

/* sched_switch on @cpu: under the runqueue lock, interrupts off */
static void call_switch(int cpu, bool preempt, struct task_struct *prev,
			unsigned int prev_state, bool in_iowait,
			struct task_struct *next)
{
	struct ctx c = ctx_enter(cpu, true);

	/* the tracepoint fires before the switch: prev is still current */
	TU_CHECK(shim_current[cpu] == prev, "switch on cpu %d from pid %d, current is pid %d",
		 cpu, prev->pid, shim_current[cpu]->pid);
	prev->__state = prev_state;
	prev->state = prev_state;
	prev->in_iowait = in_iowait;
	next->cpu = cpu;
#if PSIM_KERNEL_AT_LEAST(5, 18)
	((switch_fn)tp_func("sched_switch"))(NULL, preempt, prev, next,
					     prev_state);
#else
	((switch_fn)tp_func("sched_switch"))(NULL, preempt, prev, next);
#endif
	shim_current[cpu] = next;
	ctx_leave(c);
}

/*
 * sched_wakeup of @p (task_cpu(p) set by the caller), run by @waker_cpu
 * with interrupts @off: under p's runqueue lock they are; 6.1's
 * try_to_wake_up() of current takes no lock and leaves them as they are.
 */
static void call_wakeup(int waker_cpu, struct task_struct *p, bool off)
{
	struct ctx c = ctx_enter(waker_cpu, off);

	p->__state = TASK_RUNNING;
	p->state = TASK_RUNNING;
	p->sched_info.last_queued = shim_now;
	((task_fn)tp_func("sched_wakeup"))(NULL, p);
	ctx_leave(c);
}

#endif /* KCALL_H */
