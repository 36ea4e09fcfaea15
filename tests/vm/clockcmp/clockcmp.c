// SPDX-License-Identifier: GPL-2.0
/*
 * clockcmp: a measuring module for tests/vm/clockcmp.sh, never shipped.
 *
 * For the events of one task (pid=) it records the timestamp the kernel's
 * own PSI gave the event (the root group's per-CPU state_start, which
 * psi_group_change() sets to its cpu_clock() read on every change) beside
 * the one psi_mod gave it (its per-CPU state_start, set only when its state
 * mask changed), and the candidates psi_mod could use: the sched_info
 * enqueue stamp and a clock read at the tracepoint before psi_mod's probe.
 * It hooks sched_wakeup and sched_switch twice, before psi_mod's probes
 * (priority 11) and after them (priority 9), so the kernel's PSI has run
 * and psi_mod's probe runs in between.
 *
 * psi_system and psim_pcpu are not exported: their addresses come from
 * /proc/kallsyms, the offsets of psim_pcpu's state fields from psi_mod.ko's
 * debug info (the host script), as parameters.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/percpu.h>
#include <linux/psi_types.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>
#include <trace/events/sched.h>

static int pid;
module_param(pid, int, 0444);
static unsigned long psi_system;
module_param(psi_system, ulong, 0444);
static unsigned long psim_pcpu;
module_param(psim_pcpu, ulong, 0444);
static unsigned int ss_off, mask_off;
module_param(ss_off, uint, 0444);
module_param(mask_off, uint, 0444);
static unsigned int nr = 1 << 18;
module_param(nr, uint, 0444);

enum { EV_WAKE = 'W', EV_IN = 'I', EV_OUT = 'O', EV_SLEEP = 'S' };

struct rec {
	u64 k;		/* the kernel's stamp: psi_system's state_start */
	u64 mb, ma;	/* psi_mod's state_start before and after its probe */
	u64 q;		/* sched_info.last_queued (wakeups) */
	u64 tpre;	/* cpu_clock() at the tracepoint, before psi_mod */
	u64 tpre2;	/* cpu_clock() at the end of that probe */
	u64 tpost;	/* cpu_clock() after psi_mod's probe */
	u32 mmb, mma;	/* psi_mod's state mask before and after */
	u32 kmask;
	u8 type, cpu, here;
};

struct pre {
	u64 mb, tpre, tpre2;
	u32 mmb;
};

static struct rec *recs;
static atomic_t nrecs = ATOMIC_INIT(0);
static DEFINE_PER_CPU(struct pre, pres);
static struct tracepoint *tp_wakeup, *tp_switch;
static struct dentry *dir;

static u64 m_ss(int cpu)
{
	return *(u64 *)((char *)per_cpu_ptr((void __percpu *)psim_pcpu, cpu) +
			ss_off);
}

static u32 m_mask(int cpu)
{
	return *(u32 *)((char *)per_cpu_ptr((void __percpu *)psim_pcpu, cpu) +
			mask_off);
}

static struct psi_group_cpu *k_gc(int cpu)
{
	return per_cpu_ptr(((struct psi_group *)psi_system)->pcpu, cpu);
}

static void pre_at(int cpu)
{
	struct pre *pr = this_cpu_ptr(&pres);

	pr->tpre = cpu_clock(cpu);
	pr->mb = m_ss(cpu);
	pr->mmb = m_mask(cpu);
	pr->tpre2 = cpu_clock(cpu);
}

static void post_at(int cpu, u8 type, u64 q)
{
	struct pre *pr = this_cpu_ptr(&pres);
	int i = atomic_inc_return(&nrecs) - 1;
	struct rec *r;

	if (i >= nr)
		return;
	r = &recs[i];
	r->tpost = cpu_clock(cpu);
	r->k = READ_ONCE(k_gc(cpu)->state_start);
	r->kmask = READ_ONCE(k_gc(cpu)->state_mask);
	r->mb = pr->mb;
	r->tpre = pr->tpre;
	r->tpre2 = pr->tpre2;
	r->mmb = pr->mmb;
	r->ma = m_ss(cpu);
	r->mma = m_mask(cpu);
	r->q = q;
	r->type = type;
	r->cpu = cpu;
	r->here = smp_processor_id();
}

static void wake_pre(void *data, struct task_struct *p)
{
	if (p->pid == pid)
		pre_at(task_cpu(p));
}

static void wake_post(void *data, struct task_struct *p)
{
	if (p->pid == pid)
		post_at(task_cpu(p), EV_WAKE, p->sched_info.last_queued);
}

static void switch_pre(void *data, bool preempt, struct task_struct *prev,
		       struct task_struct *next, unsigned int prev_state)
{
	if (next->pid == pid || prev->pid == pid)
		pre_at(smp_processor_id());
}

static void switch_post(void *data, bool preempt, struct task_struct *prev,
			struct task_struct *next, unsigned int prev_state)
{
	int cpu = smp_processor_id();

	if (next->pid == pid)
		post_at(cpu, EV_IN, 0);
	else if (prev->pid == pid && !preempt &&
		 READ_ONCE(prev->__state) != TASK_RUNNING)
		post_at(cpu, prev->in_iowait ? EV_OUT : EV_SLEEP, 0);
}

static int events_show(struct seq_file *m, void *v)
{
	int i, n = min_t(int, atomic_read(&nrecs), nr);

	for (i = 0; i < n; i++) {
		struct rec *r = &recs[i];

		seq_printf(m, "%c %u %u %llu %llu %llu %llu %llu %llu %x %x %x %llu\n",
			   r->type, r->cpu, r->here, r->k, r->mb, r->ma, r->q,
			   r->tpre, r->tpost, r->mmb, r->mma, r->kmask,
			   r->tpre2);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(events);

static void find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_wakeup"))
		tp_wakeup = tp;
	else if (!strcmp(tp->name, "sched_switch"))
		tp_switch = tp;
}

/* Every probe off (one never registered: -ENOENT, harmless), the state. */
static void clockcmp_detach(void)
{
	tracepoint_probe_unregister(tp_wakeup, wake_pre, NULL);
	tracepoint_probe_unregister(tp_wakeup, wake_post, NULL);
	tracepoint_probe_unregister(tp_switch, switch_pre, NULL);
	tracepoint_probe_unregister(tp_switch, switch_post, NULL);
	tracepoint_synchronize_unregister();
	debugfs_remove_recursive(dir);
	vfree(recs);
}

static int __init clockcmp_init(void)
{
	int ret;

	if (!pid || !psi_system || !psim_pcpu || !ss_off || !mask_off)
		return -EINVAL;
	for_each_kernel_tracepoint(find_tp, NULL);
	if (!tp_wakeup || !tp_switch)
		return -ENOENT;
	recs = vzalloc(array_size(nr, sizeof(*recs)));
	if (!recs)
		return -ENOMEM;
	dir = debugfs_create_dir("clockcmp", NULL);
	debugfs_create_file("events", 0400, dir, NULL, &events_fops);
	ret = tracepoint_probe_register_prio(tp_wakeup, wake_pre, NULL, 11);
	if (!ret)
		ret = tracepoint_probe_register_prio(tp_wakeup, wake_post, NULL, 9);
	if (!ret)
		ret = tracepoint_probe_register_prio(tp_switch, switch_pre, NULL, 11);
	if (!ret)
		ret = tracepoint_probe_register_prio(tp_switch, switch_post, NULL, 9);
	if (ret)
		clockcmp_detach();
	return ret;
}

static void __exit clockcmp_exit(void)
{
	clockcmp_detach();
}

module_init(clockcmp_init);
module_exit(clockcmp_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("psi_mod test tool: both PSIs' timestamps per event");
