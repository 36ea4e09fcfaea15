// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod: irq pressure from the interrupt tracepoints (irq=1).
 *
 * The kernel's /proc/pressure/irq exists only with CONFIG_IRQ_TIME_ACCOUNTING.
 * It has one line, full: time in which a CPU ran hard and soft interrupts
 * while a non-idle task was its current task, time that task lost. The
 * kernel measures each CPU's interrupt time from irq_enter() to irq_exit()
 * and around __do_softirq() (irqtime_account_irq(); softirqs run by the
 * CPU's ksoftirqd are that thread's own time and left out), and
 * psi_account_irqtime() charges what accumulated since its last charge to
 * the CPU's IRQ_FULL time at every scheduler tick, unless the idle task is
 * current: then the time waits for a tick with a task, which gets it all.
 * So since 6.10 (and 6.1.100); before, every runqueue clock update
 * charged it, at most the clock's advance, and dropped what came under
 * the idle task (psim_irq_rule, psi_mod_logic.h; PSIM_IRQ_RULE is the
 * running kernel's).
 *
 * psi_mod measures the same time from the tracepoints around the handlers:
 * irq_handler_entry/exit (each irqaction of a device interrupt),
 * softirq_entry/exit (each softirq vector) and, on x86, the system vectors'
 * entry/exit events (the local timer, IPIs, irq work, ...), all of those
 * that run inside irq_enter()/irq_exit(): not the reschedule IPI, which the
 * kernel does not count either. A hard interrupt inside a softirq is
 * counted once, in the softirq's interval. It charges at the local timer's
 * exit, the interrupt the tick runs in, with the kernel's rule for the idle
 * task; without that tracepoint (no CONFIG_X86_LOCAL_APIC) nothing would
 * ever be charged, and irq=1 is refused.
 *
 * The tracepoints do not see the code around the handlers: the vector
 * entry, irq_enter()/irq_exit() themselves, the interrupt controller's
 * acknowledgment, the flow handler, __do_softirq()'s own loop. psi_mod's
 * irq time is lower than the kernel's by that much per interrupt
 * (docs/accuracy.md measures it).
 *
 * Cost: every interrupt runs an entry and an exit probe, each reading the
 * CPU's clock and a few per-CPU words; the tick's exit also takes the CPU's
 * lock to charge. With irq=0 nothing is attached.
 *
 * Locking: the per-CPU words below are only touched on their CPU with
 * interrupts off (hard interrupt probes run so; the softirq probes disable
 * them), so they need no lock. The charge takes the CPU's probe lock,
 * which every holder takes with interrupts off.
 */
#include <linux/interrupt.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/string.h>
#include <asm/byteorder.h>
#include <linux/tracepoint.h>
#include <trace/events/irq.h>
#ifdef CONFIG_X86
#include <asm/trace/irq_vectors.h>
#endif

#include "psi_mod.h"

/* What closed an outermost interval: docs/accuracy.md weighs them. */
enum psim_irq_kind {
	PSIM_IRQ_DEVICE,	/* a device interrupt's handlers */
	PSIM_IRQ_VECTOR,	/* a system vector (the timer, IPIs) */
	PSIM_IRQ_SOFT,		/* a softirq, and what came inside it */
	PSIM_IRQ_NR_KINDS,
};

struct psim_irq_cpu {
	struct psim_irq_time t;
	/* this CPU's ksoftirqd, once seen: compared, never dereferenced */
	struct task_struct *ksoftirqd;
	unsigned long closed[PSIM_IRQ_NR_KINDS];
	u64 time[PSIM_IRQ_NR_KINDS];	/* ns of the intervals they closed */
};

/*
 * After an exit: count what closed the outermost interval, and its time;
 * under the older rule drop it if it came under the idle task.
 */
static inline void psim_irq_closed(struct psim_irq_cpu *ic, bool closed,
				   u64 before, enum psim_irq_kind kind)
{
	if (closed) {
		ic->closed[kind]++;
		ic->time[kind] += ic->t.total - before;
		psim_irq_closed_rule(&ic->t, before, !current->pid,
				     PSIM_IRQ_RULE);
	}
}

static DEFINE_PER_CPU(struct psim_irq_cpu, psim_irq_cpu);

static void psim_tp_handler_entry(void *data, int irq,
				  struct irqaction *action)
{
	psim_irq_hard_entry(this_cpu_ptr(&psim_irq_cpu.t), local_clock);
}

static void psim_tp_handler_exit(void *data, int irq,
				 struct irqaction *action, int ret)
{
	struct psim_irq_cpu *ic = this_cpu_ptr(&psim_irq_cpu);
	u64 before = ic->t.total;

	psim_irq_closed(ic, psim_irq_hard_exit(&ic->t, local_clock), before,
			PSIM_IRQ_DEVICE);
}

static void __maybe_unused psim_tp_vector_entry(void *data, int vector)
{
	psim_irq_hard_entry(this_cpu_ptr(&psim_irq_cpu.t), local_clock);
}

static void __maybe_unused psim_tp_vector_exit(void *data, int vector)
{
	struct psim_irq_cpu *ic = this_cpu_ptr(&psim_irq_cpu);
	u64 before = ic->t.total;

	psim_irq_closed(ic, psim_irq_hard_exit(&ic->t, local_clock), before,
			PSIM_IRQ_VECTOR);
}

/* The tick: charge unless the idle task is current. */
static void __maybe_unused psim_tp_timer_exit(void *data, int vector)
{
	struct psim_irq_cpu *ic = this_cpu_ptr(&psim_irq_cpu);
	u64 before = ic->t.total, d;

	psim_irq_closed(ic, psim_irq_hard_exit(&ic->t, local_clock), before,
			PSIM_IRQ_VECTOR);
	d = psim_irq_take(&ic->t, !current->pid, local_clock, PSIM_IRQ_RULE);
	if (d)
		psim_irq_charge(smp_processor_id(), d);
}

/*
 * Whether a kernel thread's name starts with "ksoftirqd/": compared as
 * two little-endian words, no string call in a probe.
 */
static bool psim_ksoftirqd_comm(const char *comm)
{
	__le64 a;
	__le16 b;

	memcpy(&a, comm, sizeof(a));
	memcpy(&b, comm + sizeof(a), sizeof(b));
	return le64_to_cpu(a) == 0x71726974666f736bULL &&	/* "ksoftirq" */
	       le16_to_cpu(b) == 0x2f64;			/* "d/" */
}

/* Softirqs run by the CPU's ksoftirqd are that thread's time. */
static bool psim_in_ksoftirqd(struct psim_irq_cpu *ic)
{
	struct task_struct *p = current;

	if (!(p->flags & PF_KTHREAD))
		return false;
	if (ic->ksoftirqd)
		return p == ic->ksoftirqd;
	/* a per-CPU thread: the one running softirqs here is this CPU's */
	if (!psim_ksoftirqd_comm(p->comm))
		return false;
	ic->ksoftirqd = p;
	return true;
}

static void psim_tp_softirq_entry(void *data, unsigned int vec_nr)
{
	struct psim_irq_cpu *ic;
	unsigned long flags;

	local_irq_save(flags);
	ic = this_cpu_ptr(&psim_irq_cpu);
	if (!psim_in_ksoftirqd(ic))
		psim_irq_soft_entry(&ic->t, local_clock);
	local_irq_restore(flags);
}

static void psim_tp_softirq_exit(void *data, unsigned int vec_nr)
{
	struct psim_irq_cpu *ic;
	unsigned long flags;

	u64 before;

	local_irq_save(flags);
	ic = this_cpu_ptr(&psim_irq_cpu);
	before = ic->t.total;
	psim_irq_closed(ic, psim_irq_soft_exit(&ic->t, local_clock), before,
			PSIM_IRQ_SOFT);
	local_irq_restore(flags);
}

/*
 * In (exit, entry) pairs, each entry attached only after its exit: an exit
 * without its entry is ignored, an entry without its exit would leave a
 * context open. The slots a kernel's config leaves out stay empty.
 */
static struct psim_probe psim_irq_probes[] = {
	PSIM_PROBE(irq_handler_exit, psim_tp_handler_exit),
	PSIM_PROBE(irq_handler_entry, psim_tp_handler_entry),
	PSIM_PROBE(softirq_exit, psim_tp_softirq_exit),
	PSIM_PROBE(softirq_entry, psim_tp_softirq_entry),
#ifdef CONFIG_X86_LOCAL_APIC
	PSIM_PROBE(local_timer_exit, psim_tp_timer_exit),
	PSIM_PROBE(local_timer_entry, psim_tp_vector_entry),
	PSIM_PROBE(spurious_apic_exit, psim_tp_vector_exit),
	PSIM_PROBE(spurious_apic_entry, psim_tp_vector_entry),
	PSIM_PROBE(error_apic_exit, psim_tp_vector_exit),
	PSIM_PROBE(error_apic_entry, psim_tp_vector_entry),
	PSIM_PROBE(x86_platform_ipi_exit, psim_tp_vector_exit),
	PSIM_PROBE(x86_platform_ipi_entry, psim_tp_vector_entry),
#ifdef CONFIG_IRQ_WORK
	PSIM_PROBE(irq_work_exit, psim_tp_vector_exit),
	PSIM_PROBE(irq_work_entry, psim_tp_vector_entry),
#endif
#ifdef CONFIG_SMP
	PSIM_PROBE(call_function_exit, psim_tp_vector_exit),
	PSIM_PROBE(call_function_entry, psim_tp_vector_entry),
	PSIM_PROBE(call_function_single_exit, psim_tp_vector_exit),
	PSIM_PROBE(call_function_single_entry, psim_tp_vector_entry),
#endif
#ifdef CONFIG_X86_MCE_THRESHOLD
	PSIM_PROBE(threshold_apic_exit, psim_tp_vector_exit),
	PSIM_PROBE(threshold_apic_entry, psim_tp_vector_entry),
#endif
#ifdef CONFIG_X86_MCE_AMD
	PSIM_PROBE(deferred_error_apic_exit, psim_tp_vector_exit),
	PSIM_PROBE(deferred_error_apic_entry, psim_tp_vector_entry),
#endif
#ifdef CONFIG_X86_THERMAL_VECTOR
	PSIM_PROBE(thermal_apic_exit, psim_tp_vector_exit),
	PSIM_PROBE(thermal_apic_entry, psim_tp_vector_entry),
#endif
#endif
};

static bool psim_irq_on;

/* Whether the probe that charges, at the tick, is attached. */
static bool psim_irq_tick_attached(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(psim_irq_probes); i++)
		if (psim_irq_probes[i].func == (void *)psim_tp_timer_exit)
			return psim_irq_probes[i].attached;
	return false;
}

/*
 * Attach the interrupt probes, on fresh per-CPU state. Without the local
 * timer's tracepoint no interrupt time would ever be charged: irq=1 is
 * refused (-EOPNOTSUPP, one line in dmesg) rather than showing zeros.
 */
int psim_irq_start(void)
{
	int cpu, n;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(&psim_irq_cpu, cpu), 0,
		       sizeof(struct psim_irq_cpu));
	psim_probes_lookup(psim_irq_probes, ARRAY_SIZE(psim_irq_probes));
	n = psim_attach_optional(psim_irq_probes, ARRAY_SIZE(psim_irq_probes));
	if (!psim_irq_tick_attached()) {
		psim_detach_optional(psim_irq_probes,
				     ARRAY_SIZE(psim_irq_probes));
		tracepoint_synchronize_unregister();
		pr_err("irq=1: no local_timer_exit tracepoint (CONFIG_X86_LOCAL_APIC) to charge interrupt time at the tick; irq pressure is not available on this kernel\n");
		return -EOPNOTSUPP;
	}
	psim_irq_on = true;
	pr_info("irq=1: irq pressure from %d interrupt tracepoints\n", n);
	return 0;
}

void psim_irq_stop(void)
{
	if (!psim_irq_on)
		return;
	psim_detach_optional(psim_irq_probes, ARRAY_SIZE(psim_irq_probes));
	tracepoint_synchronize_unregister();
	psim_irq_on = false;
}

/*
 * The debug view: a CPU's counted interrupt time, its charged part, and
 * the intervals timed and their time by what closed them: a device
 * interrupt, a system vector, a softirq; last the hard interrupts inside
 * softirqs (part of the softirqs' time).
 */
void psim_irq_debug(int cpu, u64 *total, u64 *charged,
		    unsigned long n[PSIM_IRQ_DEBUG_KINDS],
		    u64 time[PSIM_IRQ_DEBUG_KINDS])
{
	struct psim_irq_cpu *ic = per_cpu_ptr(&psim_irq_cpu, cpu);
	int i;

	BUILD_BUG_ON(PSIM_IRQ_NR_KINDS + 1 != PSIM_IRQ_DEBUG_KINDS);
	*total = READ_ONCE(ic->t.total);
	*charged = READ_ONCE(ic->t.charged);
	for (i = 0; i < PSIM_IRQ_NR_KINDS; i++) {
		n[i] = READ_ONCE(ic->closed[i]);
		time[i] = READ_ONCE(ic->time[i]);
	}
	n[i] = READ_ONCE(ic->t.nested_n);
	time[i] = READ_ONCE(ic->t.nested);
}
