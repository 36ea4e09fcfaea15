// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod_logic.h must compile on its own in user space (it is included
 * first here, before any other header) and give the kernel's fixed-width
 * types their kernel widths.
 *
 * What the compiler can decide is asserted at compile time: a header that
 * breaks it fails the build, and so the unit lane. The one test below runs
 * only what executes: the user-space div_u64() and the fixed-point load
 * macros on values the compiler cannot fold.
 */
#include "psi_mod_logic.h"
#include "psi_mod_logic.h"	/* and be idempotent */
#include "tu.h"

/* the kernel's widths, all unsigned */
_Static_assert(sizeof(u8) == 1 && sizeof(u16) == 2, "u8/u16 widths");
_Static_assert(sizeof(u32) == 4 && sizeof(u64) == 8, "u32/u64 widths");
_Static_assert((u8)-1 > 0 && (u16)-1 > 0 && (u32)-1 > 0 && (u64)-1 > 0,
	       "unsigned types");
/* a task word holds the four flags and the depth byte */
_Static_assert(PSIM_TSK_MASK == 0xf, "task flags mask");
_Static_assert((PSIM_DEPTH_MAX << PSIM_DEPTH_SHIFT) == 0xff00, "depth byte");
_Static_assert((PSIM_TSK_IOWAIT | PSIM_TSK_MEMSTALL | PSIM_TSK_RUNNING |
		PSIM_TSK_MEMSTALL_RUNNING) == PSIM_TSK_MASK, "task flags");
/* the kernel's enum orders (psi_types.h, with CONFIG_IRQ_TIME_ACCOUNTING) */
_Static_assert(PSIM_NR_IOWAIT == 0 && PSIM_NR_MEMSTALL == 1 &&
	       PSIM_NR_RUNNING == 2 && PSIM_NR_MEMSTALL_RUNNING == 3,
	       "enum psi_task_count order");
_Static_assert(PSIM_IO_SOME == 0 && PSIM_IO_FULL == 1 && PSIM_MEM_SOME == 2 &&
	       PSIM_MEM_FULL == 3 && PSIM_CPU_SOME == 4 && PSIM_CPU_FULL == 5 &&
	       PSIM_IRQ_FULL == 6 && PSIM_NONIDLE == 7, "enum psi_states order");
_Static_assert(PSIM_IO == 0 && PSIM_MEM == 1 && PSIM_CPU == 2 && PSIM_IRQ == 3,
	       "enum psi_res order");
/* include/linux/sched/loadavg.h and kernel/sched/psi.c constants */
_Static_assert(PSIM_FSHIFT == 11 && PSIM_FIXED_1 == 2048, "fixed point");
_Static_assert(PSIM_EXP_10s == 1677 && PSIM_EXP_60s == 1981 &&
	       PSIM_EXP_300s == 2034, "decay factors");

/* inputs the compiler must read at run time */
static volatile u64 v_big = 1ULL << 40;
static volatile u32 v_three = 3, v_big_div = 0xfffffffbU;
static volatile unsigned long v_load = 5 * 2048 + 1024, v_frac = 2047;

static void header_runtime(void)
{
	u64 big = v_big;

	TU_EQ(div_u64(big * 3 + 2, v_three), big);	/* truncates */
	TU_EQ(div_u64(~0ULL, v_big_div), 0x100000005ULL);	/* a 64-bit quotient */
	TU_EQ(div_u64(v_three - 1, v_three), 0);
	TU_EQ(PSIM_LOAD_INT(v_load), 5);
	TU_EQ(PSIM_LOAD_FRAC(v_load), 50);
	TU_EQ(PSIM_LOAD_FRAC(v_frac), 99);
}

int main(void)
{
	TU_RUN(header_runtime);
	return tu_exit();
}
