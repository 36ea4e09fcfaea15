// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod_logic.h must compile on its own in user space (it is included
 * first here, before any other header) and give the kernel's fixed-width
 * types their kernel widths.
 */
#include "psi_mod_logic.h"
#include "psi_mod_logic.h"	/* and be idempotent */
#include "tu.h"

static void header_compiles_alone(void)
{
	u64 big = 1ULL << 40;

	TU_EQ(sizeof(u8), 1);
	TU_EQ(sizeof(u16), 2);
	TU_EQ(sizeof(u32), 4);
	TU_EQ(sizeof(u64), 8);
	TU_EQ((u8)-1 > 0, 1);		/* all unsigned */
	TU_EQ((u16)-1 > 0, 1);
	TU_EQ((u32)-1 > 0, 1);
	TU_EQ((u64)-1 > 0, 1);
	TU_EQ(div_u64(big * 3 + 2, 3), big);
	/* a task word holds the four flags and the depth byte */
	TU_EQ(PSIM_TSK_MASK, 0xf);
	TU_EQ(PSIM_DEPTH_MAX << PSIM_DEPTH_SHIFT, 0xff00);
	TU_EQ(PSIM_TSK_IOWAIT | PSIM_TSK_MEMSTALL | PSIM_TSK_RUNNING |
	      PSIM_TSK_MEMSTALL_RUNNING, PSIM_TSK_MASK);
	/* the kernel's enum orders (psi_types.h, no irq) */
	TU_EQ(PSIM_NR_IOWAIT, 0);
	TU_EQ(PSIM_NR_MEMSTALL, 1);
	TU_EQ(PSIM_NR_RUNNING, 2);
	TU_EQ(PSIM_NR_MEMSTALL_RUNNING, 3);
	TU_EQ(PSIM_IO_SOME, 0);
	TU_EQ(PSIM_IO_FULL, 1);
	TU_EQ(PSIM_MEM_SOME, 2);
	TU_EQ(PSIM_MEM_FULL, 3);
	TU_EQ(PSIM_CPU_SOME, 4);
	TU_EQ(PSIM_CPU_FULL, 5);
	TU_EQ(PSIM_NONIDLE, 6);
	/* include/linux/sched/loadavg.h and kernel/sched/psi.c constants */
	TU_EQ(PSIM_FSHIFT, 11);
	TU_EQ(PSIM_FIXED_1, 2048);
	TU_EQ(PSIM_EXP_10s, 1677);
	TU_EQ(PSIM_EXP_60s, 1981);
	TU_EQ(PSIM_EXP_300s, 2034);
	TU_EQ(PSIM_LOAD_INT(5 * 2048 + 1024), 5);
	TU_EQ(PSIM_LOAD_FRAC(5 * 2048 + 1024), 50);
	TU_EQ(PSIM_LOAD_FRAC(2047), 99);
}

int main(void)
{
	TU_RUN(header_compiles_alone);
	return tu_exit();
}
