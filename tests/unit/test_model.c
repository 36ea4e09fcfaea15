// SPDX-License-Identifier: GPL-2.0
/*
 * The per-task state machine of psi_mod_logic.h, by hand: literal words
 * and masks for each transition the probes make. The same functions under
 * millions of random scheduler events, through the real probes, are
 * test_probes.c's probes_random_events (model.h).
 */
#include <stdlib.h>
#include "psi_mod_logic.h"
#include "tu.h"

#define IO	PSIM_TSK_IOWAIT
#define MS	PSIM_TSK_MEMSTALL
#define RUN	PSIM_TSK_RUNNING
#define MSR	PSIM_TSK_MEMSTALL_RUNNING
#define D(n)	((n) << PSIM_DEPTH_SHIFT)

static void task_transitions_by_hand(void)
{
	unsigned int clear, set, src, dst;
	u16 w;

	/* a running task blocks in io_schedule(): RUNNING -> IOWAIT */
	w = psim_task_switch_out(RUN, true, true, false, &clear, &set);
	TU_EQ(w, IO);
	TU_EQ(clear, RUN);
	TU_EQ(set, IO);
	/* woken on another CPU: the iowait ends on the old one ... */
	w = psim_task_migrate(w, &src, &dst);
	TU_EQ(w, 0);
	TU_EQ(src, IO);
	TU_EQ(dst, 0);
	/* ... and the wakeup makes it runnable on the new one */
	w = psim_task_wakeup(w, &clear, &set);
	TU_EQ(w, RUN);
	TU_EQ(clear, 0);
	TU_EQ(set, RUN);
	/* woken where it slept: iowait off, running on, same CPU */
	w = psim_task_wakeup(IO, &clear, &set);
	TU_EQ(w, RUN);
	TU_EQ(clear, IO);
	TU_EQ(set, RUN);
	/* blocking without iowait */
	w = psim_task_switch_out(RUN, true, false, false, &clear, &set);
	TU_EQ(w, 0);
	TU_EQ(clear, RUN);
	TU_EQ(set, 0);
	/* preempted: stays runnable, nothing changes */
	w = psim_task_switch_out(RUN, false, false, false, &clear, &set);
	TU_EQ(w, RUN);
	TU_EQ(clear | set, 0);
	/* switched in while queued: nothing changes */
	w = psim_task_wakeup(RUN | MS | MSR | D(2), &clear, &set);
	TU_EQ(w, RUN | MS | MSR | D(2));
	TU_EQ(clear | set, 0);

	/* memstall: enter, nested enter, nested leave, leave */
	w = psim_task_memstall_enter(RUN, &clear, &set);
	TU_EQ(w, RUN | MS | MSR | D(1));
	TU_EQ(clear, 0);
	TU_EQ(set, MS | MSR);
	w = psim_task_memstall_enter(w, &clear, &set);
	TU_EQ(w, RUN | MS | MSR | D(2));
	TU_EQ(clear | set, 0);
	w = psim_task_memstall_leave(w, &clear, &set);
	TU_EQ(w, RUN | MS | MSR | D(1));
	TU_EQ(clear | set, 0);
	w = psim_task_memstall_leave(w, &clear, &set);
	TU_EQ(w, RUN);
	TU_EQ(clear, MS | MSR);
	TU_EQ(set, 0);

	/* a stalled task sleeps: MEMSTALL stays on the CPU it slept on */
	w = psim_task_switch_out(RUN | MS | MSR | D(1), true, true, false,
				 &clear, &set);
	TU_EQ(w, IO | MS | D(1));
	TU_EQ(clear, RUN | MSR);
	TU_EQ(set, IO);
	/* woken elsewhere: all of it leaves the old CPU, depth stays */
	w = psim_task_migrate(w, &src, &dst);
	TU_EQ(w, D(1));
	TU_EQ(src, IO | MS);
	TU_EQ(dst, 0);
	/* and comes back whole on the new one */
	w = psim_task_wakeup(w, &clear, &set);
	TU_EQ(w, RUN | MS | MSR | D(1));
	TU_EQ(clear, 0);
	TU_EQ(set, RUN | MS | MSR);
	/* woken where it slept: MEMSTALL was never cleared */
	w = psim_task_wakeup(IO | MS | D(1), &clear, &set);
	TU_EQ(w, RUN | MS | MSR | D(1));
	TU_EQ(clear, IO);
	TU_EQ(set, RUN | MSR);

	/* a queued task moves with everything it has */
	w = psim_task_migrate(RUN | MS | MSR | D(3), &src, &dst);
	TU_EQ(w, RUN | MS | MSR | D(3));
	TU_EQ(src, RUN | MS | MSR);
	TU_EQ(dst, RUN | MS | MSR);

	/* the last switch clears everything */
	w = psim_task_switch_out(RUN | MS | MSR | D(1), true, false, true,
				 &clear, &set);
	TU_EQ(w, 0);
	TU_EQ(clear, RUN | MS | MSR);
	TU_EQ(set, 0);

	/* depth saturates at 255 instead of wrapping into the flags */
	w = psim_task_memstall_enter(RUN | MS | MSR | D(255), &clear, &set);
	TU_EQ(w, RUN | MS | MSR | D(255));
	TU_EQ(clear | set, 0);
}

/*
 * psim_runnable_settled() is the switch probe's test for "nothing to do":
 * it must say true for exactly the words psim_make_runnable() leaves alone.
 */
static void runnable_settled_matches_make_runnable(void)
{
	unsigned int clear, set, w, settled = 0;

	for (w = 0; w <= 0xffff; w++) {
		u16 nw = psim_make_runnable(w, &clear, &set);
		bool same = nw == w && !(clear | set);

		TU_CHECK(psim_runnable_settled(w) == same,
			 "word %#x: settled %d, make_runnable changes %s", w,
			 psim_runnable_settled(w), same ? "nothing" : "it");
		settled += same;
	}
	/*
	 * For each of the 16 values of the unused bits 4..7: depth 0 with
	 * RUNNING and any memstall bits (4), each depth 1..255 with RUNNING
	 * and both memstall bits (1 each).
	 */
	TU_EQ(settled, 16 * (4 + PSIM_DEPTH_MAX));
}

int main(void)
{
	TU_RUN(task_transitions_by_hand);
	TU_RUN(runnable_settled_matches_make_runnable);
	return tu_exit();
}
