// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupt time (psi_mod_logic.h's psim_irq_*) against the kernel's
 * irqtime_account_irq() and psi_account_irqtime(): a CPU's interrupt time
 * is the time in hard and soft interrupt context, nested contexts counted
 * once, and the tick charges all of it since the last charge unless the
 * idle task is current (6.10's rule, and 6.1.100's); before, each clock
 * update charged it, at most the clock's advance, and dropped it under
 * the idle task.
 */
#include "psi_mod_logic.h"
#include "tu.h"

static u64 now;
static unsigned int reads;
static unsigned long closed;	/* exits that closed the outermost context */

static u64 clock_now(void)
{
	reads++;
	return now;
}

static void irq_hard_alone(void)
{
	struct psim_irq_time c = { 0 };

	closed = 0;

	now = 1000;
	psim_irq_hard_entry(&c, clock_now);
	now = 1300;
	closed += psim_irq_hard_exit(&c, clock_now);
	TU_EQ(c.total, 300);
	TU_EQ(closed, 1);
	TU_EQ(c.hard, 0);
}

/* A hard interrupt inside a softirq: the softirq's span, once. */
static void irq_nested(void)
{
	struct psim_irq_time c = { 0 };

	closed = 0;

	reads = 0;
	now = 100;
	psim_irq_soft_entry(&c, clock_now);
	now = 150;
	psim_irq_hard_entry(&c, clock_now);
	now = 170;
	closed += psim_irq_hard_exit(&c, clock_now);
	TU_EQ(c.total, 0);
	now = 400;
	closed += psim_irq_soft_exit(&c, clock_now);
	TU_EQ(c.total, 300);
	TU_EQ(closed, 1);
	/* the nested hard interrupt's time kept apart */
	TU_EQ(c.nested, 20);
	TU_EQ(c.nested_n, 1);
	/* the clock is read at the outermost open and close, and around
	 * the nested one
	 */
	TU_EQ(reads, 4);
	/* then a softirq after a hard interrupt's exit (irq_exit()) */
	now = 500;
	psim_irq_hard_entry(&c, clock_now);
	now = 510;
	closed += psim_irq_hard_exit(&c, clock_now);
	psim_irq_soft_entry(&c, clock_now);
	now = 540;
	closed += psim_irq_soft_exit(&c, clock_now);
	TU_EQ(c.total, 340);
	TU_EQ(closed, 3);
	TU_EQ(c.nested_n, 1);
}

/* Exits whose entries came before the probes were attached. */
static void irq_stray_exits(void)
{
	struct psim_irq_time c = { 0 };

	closed = 0;

	now = 10;
	closed += psim_irq_hard_exit(&c, clock_now);
	closed += psim_irq_soft_exit(&c, clock_now);
	TU_EQ(c.total, 0);
	TU_EQ(c.hard, 0);
	TU_EQ(c.soft, 0);
	TU_EQ(closed, 0);
	/* a softirq whose entry was missed, a hard interrupt inside it */
	now = 20;
	psim_irq_hard_entry(&c, clock_now);
	now = 25;
	closed += psim_irq_hard_exit(&c, clock_now);
	now = 90;
	closed += psim_irq_soft_exit(&c, clock_now);
	TU_EQ(c.total, 5);
	TU_EQ(closed, 1);
}

/* Shared interrupt lines: each handler of the line in turn. */
static void irq_shared_line(void)
{
	struct psim_irq_time c = { 0 };

	closed = 0;

	now = 0;
	psim_irq_hard_entry(&c, clock_now);
	now = 7;
	closed += psim_irq_hard_exit(&c, clock_now);
	psim_irq_hard_entry(&c, clock_now);
	now = 10;
	closed += psim_irq_hard_exit(&c, clock_now);
	TU_EQ(c.total, 10);
	TU_EQ(closed, 2);
}

/* A tick at clock @t under the older rule. */
static u64 take_at(struct psim_irq_time *c, bool idle, u64 t)
{
	now = t;
	return psim_irq_take(c, idle, clock_now, PSIM_IRQ_AT_CLOCK);
}

/* One interrupt from @t0 to @t1, closed under the idle task or not. */
static void one_irq(struct psim_irq_time *c, u64 t0, u64 t1, bool idle,
		    enum psim_irq_rule rule)
{
	u64 before = c->total;

	now = t0;
	psim_irq_hard_entry(c, clock_now);
	now = t1;
	if (psim_irq_hard_exit(c, clock_now))
		psim_irq_closed_rule(c, before, idle, rule);
}

/*
 * 6.10's psi_account_irqtime() at the tick: idle ticks keep the time for a
 * task's tick, which gets it all, also what came while the CPU was idle.
 */
static void irq_take(void)
{
	struct psim_irq_time c = { 0 };

	reads = 0;
	c.total = 100;
	TU_EQ(psim_irq_take(&c, false, clock_now, PSIM_IRQ_AT_TICK), 100);
	TU_EQ(psim_irq_take(&c, false, clock_now, PSIM_IRQ_AT_TICK), 0);
	c.total = 250;
	TU_EQ(psim_irq_take(&c, true, clock_now, PSIM_IRQ_AT_TICK), 0);
	c.total = 300;
	TU_EQ(psim_irq_take(&c, true, clock_now, PSIM_IRQ_AT_TICK), 0);
	TU_EQ(c.charged, 100);
	TU_EQ(psim_irq_take(&c, false, clock_now, PSIM_IRQ_AT_TICK), 200);
	TU_EQ(c.charged, 300);
	/* the tick's own probe has read the clock: no second read */
	TU_EQ(reads, 0);
}

/* The same interrupts under both rules: one while idle, one under a task. */
static void irq_rules_idle(void)
{
	struct psim_irq_time a = { 0 }, b = { 0 };

	/* 6.10: the idle interrupt's 40 waits for the task's tick */
	one_irq(&a, 1000, 1040, true, PSIM_IRQ_AT_TICK);
	TU_EQ(psim_irq_take(&a, true, clock_now, PSIM_IRQ_AT_TICK), 0);
	one_irq(&a, 2000, 2010, false, PSIM_IRQ_AT_TICK);
	TU_EQ(psim_irq_take(&a, false, clock_now, PSIM_IRQ_AT_TICK), 50);
	TU_EQ(a.charged, a.total);

	/* before 6.10: it is dropped, the task's tick gets its own 10 */
	one_irq(&b, 1000, 1040, true, PSIM_IRQ_AT_CLOCK);
	TU_EQ(b.charged, 40);
	TU_EQ(take_at(&b, true, 1500), 0);
	one_irq(&b, 2000, 2010, false, PSIM_IRQ_AT_CLOCK);
	TU_EQ(take_at(&b, false, 3000), 10);
	TU_EQ(b.total, 50);
	TU_EQ(b.charged, 50);
	/* under a task's tick with nothing new: nothing */
	TU_EQ(take_at(&b, false, 4000), 0);
	/* an idle tick leaves what came under a task for the next one */
	one_irq(&b, 4100, 4130, false, PSIM_IRQ_AT_CLOCK);
	TU_EQ(take_at(&b, true, 4200), 0);
	TU_EQ(take_at(&b, false, 5000), 30);
}

/*
 * update_rq_clock_task()'s clamp: at most the clock's advance since the
 * last charge, the rest carried to the next; 6.10 charges all at once.
 */
static void irq_rules_clamp(void)
{
	struct psim_irq_time a = { 0 }, b = { 0 };

	b.taken_at = 1000;
	b.total = 300;		/* time counted that the clock has not seen */
	TU_EQ(take_at(&b, false, 1100), 100);
	TU_EQ(take_at(&b, false, 1150), 50);
	TU_EQ(take_at(&b, false, 2000), 150);
	TU_EQ(b.charged, 300);
	TU_EQ(take_at(&b, false, 3000), 0);

	a.total = 300;
	TU_EQ(psim_irq_take(&a, false, clock_now, PSIM_IRQ_AT_TICK), 300);
	TU_EQ(a.taken_at, 0);
}

int main(void)
{
	TU_RUN(irq_hard_alone);
	TU_RUN(irq_nested);
	TU_RUN(irq_stray_exits);
	TU_RUN(irq_shared_line);
	TU_RUN(irq_take);
	TU_RUN(irq_rules_idle);
	TU_RUN(irq_rules_clamp);
	return tu_exit();
}
