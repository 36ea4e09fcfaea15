// SPDX-License-Identifier: GPL-2.0
/*
 * Pressure triggers (psi_mod_logic.h) against the kernel's rules, Debian's
 * 6.1.y kernel/sched/psi.c: psi_write()'s buffer, psi_trigger_create()'s
 * checks, window_update() and update_triggers(). The numbers are worked
 * out by hand from those functions.
 *
 * The parse itself is sscanf() with the kernel's formats; here that is
 * glibc's, which agrees with the kernel's vsscanf() on every input below
 * (the rows where the two differ, such as a "+5" or "-1", are checked on
 * the kernel itself, side by side, in the VM suite psi1).
 */
#include <stdio.h>
#include "psi_mod_logic.h"
#include "tu.h"

#define MS	1000000ULL	/* ns */

/* The rule sets of the kernels psi_mod is checked on (psi_mod_compat.h). */
#define RULES_5_10	0U
#define RULES_6_1	(PSIM_TRIG_CPU_FULL | PSIM_TRIG_UNPRIV)
#define RULES_6_12	(PSIM_TRIG_CPU_FULL | PSIM_TRIG_UNPRIV | \
			 PSIM_TRIG_ANY_WINDOW)

/* write_as_kernel()'s rule set: Debian 6.1's unless a test says. */
static unsigned int rules = RULES_6_1;

/*
 * What psim_trigger_write() does with a write of @s (@n bytes): the
 * errno, 0 if a trigger is created (its state and numbers out).
 */
static int write_as_kernel(const char *s, size_t n, enum psim_res res,
			   bool privileged, enum psim_states *state,
			   unsigned int *thr, unsigned int *win)
{
	size_t len = psim_trigger_copy_len(n);
	char buf[PSIM_TRIGGER_BUF];
	bool full;

	if (!len)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len - 1] = '\0';
	if (sscanf(buf, "some %u %u", thr, win) == 2)
		full = false;
	else if (sscanf(buf, "full %u %u", thr, win) == 2)
		full = true;
	else
		return -EINVAL;
	return psim_trigger_check(rules, res, full, *thr, *win, privileged,
				  state);
}

static int w(const char *s, enum psim_res res, bool privileged)
{
	enum psim_states st;
	unsigned int t, v;

	return write_as_kernel(s, strlen(s), res, privileged, &st, &t, &v);
}

static void trigger_buffer(void)
{
	TU_EQ(psim_trigger_copy_len(0), 0);
	TU_EQ(psim_trigger_copy_len(1), 1);
	TU_EQ(psim_trigger_copy_len(31), 31);
	TU_EQ(psim_trigger_copy_len(32), 32);
	TU_EQ(psim_trigger_copy_len(4096), 32);
}

static void trigger_parse_rows(void)
{
	enum psim_states st = PSIM_NONIDLE;
	unsigned int t = 0, v = 0;
	int r;

	/* the documentation's example, with echo's newline */
	r = write_as_kernel("some 150000 1000000\n", 20, PSIM_MEM, true, &st,
			    &t, &v);
	TU_EQ(r, 0);
	TU_EQ(st, PSIM_MEM_SOME);
	TU_EQ(t, 150000);
	TU_EQ(v, 1000000);
	/* without it the last digit goes: a 100 ms window, EINVAL */
	r = write_as_kernel("some 150000 1000000", 19, PSIM_MEM, true, &st,
			    &t, &v);
	TU_EQ(r, -EINVAL);
	TU_EQ(v, 100000);
	/* with a trailing NUL counted in the length: fine */
	TU_EQ(write_as_kernel("some 150000 1000000", 20, PSIM_MEM, true, &st,
			      &t, &v), 0);
	/* an empty write */
	TU_EQ(write_as_kernel("", 0, PSIM_MEM, true, &st, &t, &v), -EINVAL);
	/* a window that ends past the 32 bytes copied loses digits */
	r = write_as_kernel("some      150000         1000000\n", 33, PSIM_CPU,
			    true, &st, &t, &v);
	TU_EQ(r, -EINVAL);	/* byte 32, the last 0, became the NUL */
	TU_EQ(v, 100000);
	/* states per resource; cpu full is accepted at the system level */
	TU_EQ(w("full 150000 1000000\n", PSIM_IO, true), 0);
	TU_EQ(write_as_kernel("full 1 500000\n", 15, PSIM_CPU, true, &st, &t,
			      &v), 0);
	TU_EQ(st, PSIM_CPU_FULL);
	TU_EQ(write_as_kernel("some 1 500000\n", 15, PSIM_CPU, true, &st, &t,
			      &v), 0);
	TU_EQ(st, PSIM_CPU_SOME);
	TU_EQ(write_as_kernel("some 1 500000\n", 15, PSIM_IO, true, &st, &t,
			      &v), 0);
	TU_EQ(st, PSIM_IO_SOME);
	/* unparsable */
	TU_EQ(w("bogus 1 500000\n", PSIM_IO, true), -EINVAL);
	TU_EQ(w("some\n", PSIM_IO, true), -EINVAL);
	TU_EQ(w("some 1\n", PSIM_IO, true), -EINVAL);
	TU_EQ(w(" some 1 500000\n", PSIM_IO, true), -EINVAL);
	TU_EQ(w("SOME 1 500000\n", PSIM_IO, true), -EINVAL);
	TU_EQ(w("some x 500000\n", PSIM_IO, true), -EINVAL);
	/* window limits: 500 ms .. 10 s inclusive */
	TU_EQ(w("some 1 499999\n", PSIM_IO, true), -EINVAL);
	TU_EQ(w("some 1 500000\n", PSIM_IO, true), 0);
	TU_EQ(w("some 1 10000000\n", PSIM_IO, true), 0);
	TU_EQ(w("some 1 10000001\n", PSIM_IO, true), -EINVAL);
	/* threshold: not 0, not above the window */
	TU_EQ(w("some 0 1000000\n", PSIM_IO, true), -EINVAL);
	TU_EQ(w("some 1000000 1000000\n", PSIM_IO, true), 0);
	TU_EQ(w("some 1000001 1000000\n", PSIM_IO, true), -EINVAL);
	/* trailing junk after the two numbers is ignored, as sscanf() does */
	TU_EQ(w("some 1 500000 junk\n", PSIM_IO, true), 0);
	/* irq: full only (psi_write()'s --state), some is EINVAL */
	TU_EQ(write_as_kernel("full 1 500000\n", 15, PSIM_IRQ, true, &st, &t,
			      &v), 0);
	TU_EQ(st, PSIM_IRQ_FULL);
	TU_EQ(w("some 1 500000\n", PSIM_IRQ, true), -EINVAL);
	TU_EQ(w("some 150000 2000000\n", PSIM_IRQ, false), -EINVAL);
	TU_EQ(w("full 150000 2000000\n", PSIM_IRQ, false), 0);
	TU_EQ(w("full 150000 1000000\n", PSIM_IRQ, false), -EINVAL);
	TU_EQ(w("full 0 1000000\n", PSIM_IRQ, true), -EINVAL);
	/* and no resource past irq */
	TU_EQ(w("some 1 500000\n", PSIM_NR_RES, true), -EINVAL);
	TU_EQ(w("full 1 500000\n", PSIM_NR_RES, true), -EINVAL);
}

/* Each line of each file shows the kernel's state: res * 2 + full. */
static void trigger_res_states(void)
{
	TU_EQ(psim_res_state(PSIM_IO, false), PSIM_IO_SOME);
	TU_EQ(psim_res_state(PSIM_IO, true), PSIM_IO_FULL);
	TU_EQ(psim_res_state(PSIM_MEM, false), PSIM_MEM_SOME);
	TU_EQ(psim_res_state(PSIM_MEM, true), PSIM_MEM_FULL);
	TU_EQ(psim_res_state(PSIM_CPU, false), PSIM_CPU_SOME);
	TU_EQ(psim_res_state(PSIM_CPU, true), PSIM_CPU_FULL);
	TU_EQ(psim_res_state(PSIM_IRQ, false), -1);
	TU_EQ(psim_res_state(PSIM_IRQ, true), PSIM_IRQ_FULL);
	TU_EQ(psim_res_state(PSIM_NR_RES, true), -1);
}

static void trigger_privilege(void)
{
	/* unprivileged: windows in multiples of 2 s only */
	TU_EQ(w("some 150000 1000000\n", PSIM_MEM, false), -EINVAL);
	TU_EQ(w("some 150000 500000\n", PSIM_MEM, false), -EINVAL);
	TU_EQ(w("some 150000 2000000\n", PSIM_MEM, false), 0);
	TU_EQ(w("some 150000 4000000\n", PSIM_MEM, false), 0);
	TU_EQ(w("some 150000 3000000\n", PSIM_MEM, false), -EINVAL);
	TU_EQ(w("some 150000 10000000\n", PSIM_MEM, false), 0);
	TU_EQ(w("full 150000 2000001\n", PSIM_MEM, false), -EINVAL);
	/* and the other rules still hold */
	TU_EQ(w("some 0 2000000\n", PSIM_MEM, false), -EINVAL);
	TU_EQ(w("some 150000 12000000\n", PSIM_MEM, false), -EINVAL);
	/* privileged: any window in range */
	TU_EQ(w("some 150000 1000000\n", PSIM_MEM, true), 0);
	TU_EQ(w("some 150000 3000000\n", PSIM_MEM, true), 0);
}

/* window_update(): the growth within the window, interpolated. */
static void trigger_window(void)
{
	struct psim_window win = { .size = 1000 * MS };
	u64 g;

	psim_window_reset(&win, 0, 5000, 0);
	/* half way, 100 ms grown: no previous window, 100 ms */
	g = psim_window_update(&win, 500 * MS, 5000 + 100 * MS);
	TU_EQ(g, 100 * MS);
	TU_EQ(win.start_time, 0);
	/* at exactly the window's end it does not reset yet */
	g = psim_window_update(&win, 1000 * MS, 5000 + 200 * MS);
	TU_EQ(g, 200 * MS);
	TU_EQ(win.start_time, 0);
	/* past it: reset, the growth becomes the previous window's */
	g = psim_window_update(&win, 1100 * MS, 5000 + 300 * MS);
	TU_EQ(g, 300 * MS);
	TU_EQ(win.start_time, 1100 * MS);
	TU_EQ(win.start_value, 5000 + 300 * MS);
	TU_EQ(win.prev_growth, 300 * MS);
	/*
	 * 400 ms later, 40 ms more: 40 ms plus the previous window's 300 ms
	 * times the 600 ms of it still inside the window: 220 ms.
	 */
	g = psim_window_update(&win, 1500 * MS, 5000 + 340 * MS);
	TU_EQ(g, 40 * MS + 180 * MS);
}

/*
 * update_triggers(): at most one event per window; a breach inside the
 * rate-limit window is held and delivered by the first update after it.
 */
static void trigger_rate_limit(void)
{
	u64 total[PSIM_NR_STATES - 1] = { 0 }, seen[PSIM_NR_STATES - 1] = { 0 };
	struct psim_trigger_win t;
	bool upd;

	psim_trigger_init(&t, PSIM_IO_SOME, 100000, 1000000, 0, 0);
	TU_EQ(t.threshold, 100 * MS);
	TU_EQ(t.win.size, 1000 * MS);

	/* nothing moved: no event, no update of the totals */
	upd = false;
	TU_EQ(psim_trigger_update(&t, 100 * MS, total, seen, &upd), 0);
	TU_EQ(upd, 0);
	/* 50 ms: below the threshold */
	total[PSIM_IO_SOME] = 50 * MS;
	TU_EQ(psim_trigger_update(&t, 200 * MS, total, seen, &upd), 0);
	TU_EQ(upd, 1);
	memcpy(seen, total, sizeof(seen));
	/* 120 ms within the window: an event; 1 s since the last (at 0)? */
	total[PSIM_IO_SOME] = 120 * MS;
	TU_EQ(psim_trigger_update(&t, 1000 * MS, total, seen, &upd), 1);
	TU_EQ(t.last_event_time, 1000 * MS);
	memcpy(seen, total, sizeof(seen));
	/*
	 * 150 ms more by 1.3 s: a breach, but within a window of the last
	 * event: held, not dropped
	 */
	total[PSIM_IO_SOME] = 270 * MS;
	TU_EQ(psim_trigger_update(&t, 1300 * MS, total, seen, &upd), 0);
	TU_EQ(t.pending_event, 1);
	memcpy(seen, total, sizeof(seen));
	/* no new stall, still inside the rate-limit window: still held */
	TU_EQ(psim_trigger_update(&t, 1900 * MS, total, seen, &upd), 0);
	TU_EQ(t.pending_event, 1);
	/* the first update once the window has passed delivers it */
	TU_EQ(psim_trigger_update(&t, 2000 * MS, total, seen, &upd), 1);
	TU_EQ(t.pending_event, 0);
	TU_EQ(t.last_event_time, 2000 * MS);
	/* and then nothing, with nothing new */
	TU_EQ(psim_trigger_update(&t, 3100 * MS, total, seen, &upd), 0);
	/* the other states' totals are none of this trigger's business */
	total[PSIM_CPU_SOME] = 900 * MS;
	upd = false;
	TU_EQ(psim_trigger_update(&t, 3200 * MS, total, seen, &upd), 0);
	TU_EQ(upd, 0);
}

/*
 * 6.12's psi_trigger_create(): no 500 ms minimum, "window_us == 0 ||
 * window_us > WINDOW_MAX_US" is EINVAL; the privilege rules as 6.1's.
 */
static void trigger_rules_6_12(void)
{
	rules = RULES_6_12;
	TU_EQ(w("some 10000 100000\n", PSIM_MEM, true), 0);
	TU_EQ(w("some 1 499999\n", PSIM_IO, true), 0);
	TU_EQ(w("some 1 1\n", PSIM_IO, true), 0);
	TU_EQ(w("some 1 0\n", PSIM_IO, true), -EINVAL);
	TU_EQ(w("some 0 0\n", PSIM_IO, true), -EINVAL);
	TU_EQ(w("some 1 10000000\n", PSIM_IO, true), 0);
	TU_EQ(w("some 1 10000001\n", PSIM_IO, true), -EINVAL);
	TU_EQ(w("some 2 1\n", PSIM_IO, true), -EINVAL);
	/* the last byte still becomes the NUL: window 100000 us, now fine */
	TU_EQ(w("some 50000 1000000", PSIM_MEM, true), 0);
	/* unprivileged: multiples of 2 s, as on 6.1 */
	TU_EQ(w("some 10000 100000\n", PSIM_MEM, false), -EINVAL);
	TU_EQ(w("some 150000 2000000\n", PSIM_MEM, false), 0);
	TU_EQ(psim_trigger_privileged(rules, false), false);
	TU_EQ(w("full 150000 1000000\n", PSIM_CPU, true), 0);
	rules = RULES_6_1;
	/* the same writes on 6.1: the 500 ms minimum */
	TU_EQ(w("some 10000 100000\n", PSIM_MEM, true), -EINVAL);
	TU_EQ(w("some 1 1\n", PSIM_IO, true), -EINVAL);
}

/*
 * 5.10's psi_trigger_create(): 500 ms..10 s, no privilege rule (the files
 * are 0444: whoever could open one for writing may set any window, and
 * every trigger is the fast path's), and no cpu full state.
 */
static void trigger_rules_5_10(void)
{
	rules = RULES_5_10;
	TU_EQ(w("some 150000 1000000\n", PSIM_MEM, false), 0);
	TU_EQ(w("some 150000 500000\n", PSIM_MEM, false), 0);
	TU_EQ(w("some 150000 3000000\n", PSIM_MEM, false), 0);
	TU_EQ(psim_trigger_privileged(rules, false), true);
	TU_EQ(psim_trigger_privileged(rules, true), true);
	TU_EQ(w("some 1 499999\n", PSIM_IO, true), -EINVAL);
	TU_EQ(w("some 10000 100000\n", PSIM_MEM, true), -EINVAL);
	TU_EQ(w("some 1 10000001\n", PSIM_IO, true), -EINVAL);
	TU_EQ(w("some 0 1000000\n", PSIM_IO, true), -EINVAL);
	TU_EQ(w("full 150000 1000000\n", PSIM_CPU, true), -EINVAL);
	TU_EQ(w("some 150000 1000000\n", PSIM_CPU, true), 0);
	TU_EQ(w("full 150000 1000000\n", PSIM_IO, true), 0);
	TU_EQ(w("full 150000 1000000\n", PSIM_IRQ, true), 0);
	rules = RULES_6_1;
	TU_EQ(psim_trigger_privileged(rules, false), false);
	TU_EQ(psim_trigger_privileged(rules, true), true);
}

int main(void)
{
	TU_RUN(trigger_buffer);
	TU_RUN(trigger_parse_rows);
	TU_RUN(trigger_privilege);
	TU_RUN(trigger_res_states);
	TU_RUN(trigger_rules_6_12);
	TU_RUN(trigger_rules_5_10);
	TU_RUN(trigger_window);
	TU_RUN(trigger_rate_limit);
	return tu_exit();
}
