// SPDX-License-Identifier: GPL-2.0
/*
 * The pressure state rules (psim_state_mask) on hand-made
 * task count vectors, and exhaustively against a transcription of the
 * kernel's test_state() and the in_memstall rule of psi_group_change()
 * (kernel/sched/psi.c, Linux 6.1).
 */
#include "psi_mod_logic.h"
#include "tu.h"
#include "kernel_ref.h"

#define IO_SOME		(1U << PSIM_IO_SOME)
#define IO_FULL		(1U << PSIM_IO_FULL)
#define MEM_SOME	(1U << PSIM_MEM_SOME)
#define MEM_FULL	(1U << PSIM_MEM_FULL)
#define CPU_SOME	(1U << PSIM_CPU_SOME)
#define CPU_FULL	(1U << PSIM_CPU_FULL)
#define NONIDLE		(1U << PSIM_NONIDLE)

/* State @s's bit of psim_state_mask() for counts @t (no stalled curr) */
static int mask_bit(const unsigned int *t, int s, int oncpu)
{
	struct psim_cpu_state c;

	memset(&c, 0, sizeof(c));
	memcpy(c.tasks, t, sizeof(c.tasks));
	c.oncpu = oncpu;
	return !!(psim_state_mask(&c) & (1U << s));
}

struct vec {
	const char *what;
	unsigned int io, ms, run, msr;	/* the four task counts */
	int oncpu, curr_ms;
	u32 want;			/* expected state mask */
};

static const struct vec vecs[] = {
	{ "nothing", 0, 0, 0, 0, 0, 0, 0 },
	{ "one task running alone", 0, 0, 1, 0, 1, 0, NONIDLE },
	{ "woken, not yet on the CPU", 0, 0, 1, 0, 0, 0,
	  CPU_SOME | CPU_FULL | NONIDLE },
	{ "two runnable, one on the CPU", 0, 0, 2, 0, 1, 0,
	  CPU_SOME | NONIDLE },
	{ "three runnable, one on the CPU", 0, 0, 3, 0, 1, 0,
	  CPU_SOME | NONIDLE },
	{ "a task runs that nobody counted", 0, 0, 0, 0, 1, 0, 0 },
	{ "iowait sleeper, nothing runs", 1, 0, 0, 0, 0, 0,
	  IO_SOME | IO_FULL | NONIDLE },
	{ "two iowait sleepers, nothing runs", 2, 0, 0, 0, 0, 0,
	  IO_SOME | IO_FULL | NONIDLE },
	{ "iowait sleeper and a running task", 1, 0, 1, 0, 1, 0,
	  IO_SOME | NONIDLE },
	{ "iowait sleeper and a runnable task off the CPU", 1, 0, 1, 0, 0, 0,
	  IO_SOME | CPU_SOME | CPU_FULL | NONIDLE },
	{ "memstall sleeper, nothing runs", 0, 1, 0, 0, 0, 0,
	  MEM_SOME | MEM_FULL | NONIDLE },
	{ "memstall sleeper and a productive task", 0, 1, 1, 0, 1, 0,
	  MEM_SOME | NONIDLE },
	{ "the only runnable task reclaims", 0, 1, 1, 1, 1, 1,
	  MEM_SOME | MEM_FULL | NONIDLE },
	{ "reclaiming task, another one productive, other on CPU", 0, 1, 2, 1,
	  1, 0, MEM_SOME | CPU_SOME | NONIDLE },
	{ "reclaiming task on the CPU, another runnable: curr rule", 0, 1, 2,
	  1, 1, 1, MEM_SOME | MEM_FULL | CPU_SOME | NONIDLE },
	{ "curr_memstall without oncpu does not count", 0, 1, 2, 1, 0, 1,
	  MEM_SOME | CPU_SOME | CPU_FULL | NONIDLE },
	{ "two runnable, both reclaiming", 0, 2, 2, 2, 1, 1,
	  MEM_SOME | MEM_FULL | CPU_SOME | NONIDLE },
	{ "memstall sleeper and a reclaiming runner", 0, 2, 1, 1, 1, 1,
	  MEM_SOME | MEM_FULL | NONIDLE },
	{ "io and memory sleepers, nothing runs", 1, 1, 0, 0, 0, 0,
	  IO_SOME | IO_FULL | MEM_SOME | MEM_FULL | NONIDLE },
	{ "everything at once, curr productive", 3, 2, 3, 1, 1, 0,
	  IO_SOME | MEM_SOME | CPU_SOME | NONIDLE },
	{ "everything at once, curr reclaiming", 3, 2, 3, 1, 1, 1,
	  IO_SOME | MEM_SOME | MEM_FULL | CPU_SOME | NONIDLE },
};

static void state_rules_hand_vectors(void)
{
	unsigned int i;
	int s;

	for (i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++) {
		const struct vec *v = &vecs[i];
		struct psim_cpu_state c;
		u32 got = 0;

		memset(&c, 0, sizeof(c));
		c.tasks[PSIM_NR_IOWAIT] = v->io;
		c.tasks[PSIM_NR_MEMSTALL] = v->ms;
		c.tasks[PSIM_NR_RUNNING] = v->run;
		c.tasks[PSIM_NR_MEMSTALL_RUNNING] = v->msr;
		c.oncpu = v->oncpu;
		c.curr_memstall = v->curr_ms;

		TU_CHECK(psim_state_mask(&c) == v->want,
			 "%s: state mask 0x%x, expected 0x%x", v->what,
			 psim_state_mask(&c), v->want);
		/* the vector agrees with the kernel's rules, curr rule added */
		for (s = 0; s < PSIM_NR_STATES; s++)
			if (kernel_test_state(c.tasks, s, c.oncpu))
				got |= 1U << s;
		if (v->oncpu && v->curr_ms)
			got |= MEM_FULL;
		TU_CHECK(got == v->want, "%s: the kernel's rules give 0x%x, expected 0x%x",
			 v->what, got, v->want);
	}
}

static void state_rules_each_state(void)
{
	unsigned int t[PSIM_NR_COUNTS];

#define SET(a, b, c, d)	(t[0] = (a), t[1] = (b), t[2] = (c), t[3] = (d))
	/* io some: any iowait sleeper */
	SET(0, 0, 5, 0);
	TU_EQ(mask_bit(t, PSIM_IO_SOME, 1), 0);
	SET(1, 0, 5, 0);
	TU_EQ(mask_bit(t, PSIM_IO_SOME, 1), 1);
	/* io full: iowait and nothing runnable */
	TU_EQ(mask_bit(t, PSIM_IO_FULL, 1), 0);
	SET(1, 0, 0, 0);
	TU_EQ(mask_bit(t, PSIM_IO_FULL, 0), 1);
	TU_EQ(mask_bit(t, PSIM_IO_FULL, 1), 1);	/* oncpu is no task */
	/* mem some */
	SET(0, 0, 1, 0);
	TU_EQ(mask_bit(t, PSIM_MEM_SOME, 1), 0);
	SET(0, 1, 1, 0);
	TU_EQ(mask_bit(t, PSIM_MEM_SOME, 1), 1);
	/* mem full: all runnable tasks are stalled ones */
	TU_EQ(mask_bit(t, PSIM_MEM_FULL, 1), 0);
	SET(0, 1, 1, 1);
	TU_EQ(mask_bit(t, PSIM_MEM_FULL, 1), 1);
	SET(0, 3, 2, 2);
	TU_EQ(mask_bit(t, PSIM_MEM_FULL, 1), 1);
	SET(0, 3, 3, 2);
	TU_EQ(mask_bit(t, PSIM_MEM_FULL, 1), 0);
	SET(0, 0, 0, 0);
	TU_EQ(mask_bit(t, PSIM_MEM_FULL, 0), 0);	/* 0 == 0 needs a stall */
	/* cpu some: more runnable than on the CPU */
	SET(0, 0, 1, 0);
	TU_EQ(mask_bit(t, PSIM_CPU_SOME, 1), 0);
	TU_EQ(mask_bit(t, PSIM_CPU_SOME, 0), 1);
	SET(0, 0, 2, 0);
	TU_EQ(mask_bit(t, PSIM_CPU_SOME, 1), 1);
	SET(0, 0, 0, 0);
	TU_EQ(mask_bit(t, PSIM_CPU_SOME, 1), 0);
	/* cpu full: runnable and none on the CPU */
	SET(0, 0, 2, 0);
	TU_EQ(mask_bit(t, PSIM_CPU_FULL, 1), 0);
	TU_EQ(mask_bit(t, PSIM_CPU_FULL, 0), 1);
	SET(0, 0, 0, 0);
	TU_EQ(mask_bit(t, PSIM_CPU_FULL, 0), 0);
	/* nonidle: any of iowait, memstall, running; not msr alone */
	TU_EQ(mask_bit(t, PSIM_NONIDLE, 1), 0);
	SET(1, 0, 0, 0);
	TU_EQ(mask_bit(t, PSIM_NONIDLE, 0), 1);
	SET(0, 1, 0, 0);
	TU_EQ(mask_bit(t, PSIM_NONIDLE, 0), 1);
	SET(0, 0, 1, 0);
	TU_EQ(mask_bit(t, PSIM_NONIDLE, 0), 1);
	SET(0, 0, 0, 1);
	TU_EQ(mask_bit(t, PSIM_NONIDLE, 0), 0);
#undef SET
}

static void state_rules_exhaustive_vs_kernel(void)
{
	unsigned int t[PSIM_NR_COUNTS];
	int oncpu, cm, s;
	unsigned long n = 0;

	for (t[0] = 0; t[0] < 4; t[0]++)
	for (t[1] = 0; t[1] < 4; t[1]++)
	for (t[2] = 0; t[2] < 4; t[2]++)
	for (t[3] = 0; t[3] < 4; t[3]++)
	for (oncpu = 0; oncpu < 2; oncpu++)
	for (cm = 0; cm < 2; cm++) {
		struct psim_cpu_state c;
		u32 want = 0;

		memset(&c, 0, sizeof(c));
		memcpy(c.tasks, t, sizeof(t));
		c.oncpu = oncpu;
		c.curr_memstall = cm;
		for (s = 0; s < PSIM_NR_STATES; s++)
			if (kernel_test_state(t, s, oncpu))
				want |= 1U << s;
		/* psi_group_change(): PSI_ONCPU && cpu_curr->in_memstall */
		if (oncpu && cm)
			want |= MEM_FULL;
		TU_CHECK(psim_state_mask(&c) == want,
			 "tasks [%u %u %u %u] oncpu %d curr_memstall %d: 0x%x, kernel 0x%x",
			 t[0], t[1], t[2], t[3], oncpu, cm,
			 psim_state_mask(&c), want);
		n++;
	}
	TU_EQ(n, 4 * 4 * 4 * 4 * 2 * 2);
}

/*
 * The probes skip the mask after a change that psim_run_inc_keeps_mask()
 * or psim_run_dec_keeps_mask() says keeps it: over every combination of
 * counts, whenever they say so, the mask after the change (one runnable
 * task more; one fewer) must equal the mask before. And they must say so
 * in the case they exist for: several runnable, one running.
 */
static void run_change_keeps_mask_exhaustive(void)
{
	unsigned int t[PSIM_NR_COUNTS];
	unsigned long inc = 0, dec = 0;
	int oncpu, cm;

	for (t[0] = 0; t[0] < 5; t[0]++)
	for (t[1] = 0; t[1] < 5; t[1]++)
	for (t[2] = 0; t[2] < 5; t[2]++)
	for (t[3] = 0; t[3] < 5; t[3]++)
	for (oncpu = 0; oncpu < 2; oncpu++)
	for (cm = 0; cm < 2; cm++) {
		struct psim_cpu_state c, d;
		u32 before;

		memset(&c, 0, sizeof(c));
		memcpy(c.tasks, t, sizeof(t));
		c.oncpu = oncpu;
		c.curr_memstall = cm;
		before = psim_state_mask(&c);
		if (psim_run_inc_keeps_mask(&c)) {
			d = c;
			d.tasks[PSIM_NR_RUNNING]++;
			TU_CHECK(psim_state_mask(&d) == before,
				 "run+1 from [%u %u %u %u] oncpu %d cm %d: 0x%x -> 0x%x",
				 t[0], t[1], t[2], t[3], oncpu, cm, before,
				 psim_state_mask(&d));
			inc++;
		}
		if (psim_run_dec_keeps_mask(&c)) {
			d = c;
			d.tasks[PSIM_NR_RUNNING]--;
			TU_CHECK(psim_state_mask(&d) == before,
				 "run-1 from [%u %u %u %u] oncpu %d cm %d: 0x%x -> 0x%x",
				 t[0], t[1], t[2], t[3], oncpu, cm, before,
				 psim_state_mask(&d));
			dec++;
		}
	}
	TU_CHECK(inc > 0 && dec > 0, "no case taken: inc %lu dec %lu", inc,
		 dec);
	{
		struct psim_cpu_state c;

		memset(&c, 0, sizeof(c));
		c.tasks[PSIM_NR_RUNNING] = 3;
		c.oncpu = 1;
		TU_CHECK(psim_run_inc_keeps_mask(&c), "3 runnable, 1 running: inc");
		TU_CHECK(psim_run_dec_keeps_mask(&c), "3 runnable, 1 running: dec");
		c.tasks[PSIM_NR_RUNNING] = 2;
		TU_CHECK(!psim_run_dec_keeps_mask(&c),
			 "2 runnable, 1 running: dec ends cpu some");
		c.tasks[PSIM_NR_RUNNING] = 1;
		TU_CHECK(!psim_run_inc_keeps_mask(&c),
			 "1 runnable, 1 running: inc starts cpu some");
	}
}

int main(void)
{
	TU_RUN(state_rules_hand_vectors);
	TU_RUN(state_rules_each_state);
	TU_RUN(state_rules_exhaustive_vs_kernel);
	TU_RUN(run_change_keeps_mask_exhaustive);
	return tu_exit();
}
