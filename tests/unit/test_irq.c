// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupt time (psi_mod_logic.h's psim_irq_*) against the kernel's
 * irqtime_account_irq() and psi_account_irqtime(): a CPU's interrupt time
 * is the time in hard and soft interrupt context, nested contexts counted
 * once, and the tick charges all of it since the last charge unless the
 * idle task is current.
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

/* psi_account_irqtime(): idle ticks keep the time for a task's tick. */
static void irq_take(void)
{
	struct psim_irq_time c = { 0 };

	closed = 0;

	c.total = 100;
	TU_EQ(psim_irq_take(&c, false), 100);
	TU_EQ(psim_irq_take(&c, false), 0);
	c.total = 250;
	TU_EQ(psim_irq_take(&c, true), 0);
	c.total = 300;
	TU_EQ(psim_irq_take(&c, true), 0);
	TU_EQ(c.charged, 100);
	TU_EQ(psim_irq_take(&c, false), 200);
	TU_EQ(c.charged, 300);
}

int main(void)
{
	TU_RUN(irq_hard_alone);
	TU_RUN(irq_nested);
	TU_RUN(irq_stray_exits);
	TU_RUN(irq_shared_line);
	TU_RUN(irq_take);
	return tu_exit();
}
