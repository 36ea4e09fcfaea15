/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel_ref.h: the kernel's own rules, transcribed from Linux 6.1's
 * kernel/sched/psi.c, that the unit tests check psi_mod against (never
 * psi_mod's code).
 */
#ifndef KERNEL_REF_H
#define KERNEL_REF_H

#include "psi_mod_logic.h"

/* kernel/sched/psi.c test_state(), transcribed */
static inline int kernel_test_state(const unsigned int *tasks, int state, int oncpu)
{
	switch (state) {
	case PSIM_IO_SOME:
		return !!tasks[PSIM_NR_IOWAIT];
	case PSIM_IO_FULL:
		return tasks[PSIM_NR_IOWAIT] && !tasks[PSIM_NR_RUNNING];
	case PSIM_MEM_SOME:
		return !!tasks[PSIM_NR_MEMSTALL];
	case PSIM_MEM_FULL:
		return tasks[PSIM_NR_MEMSTALL] &&
		       tasks[PSIM_NR_RUNNING] == tasks[PSIM_NR_MEMSTALL_RUNNING];
	case PSIM_CPU_SOME:
		return tasks[PSIM_NR_RUNNING] > (unsigned int)oncpu;
	case PSIM_CPU_FULL:
		return tasks[PSIM_NR_RUNNING] && !oncpu;
	case PSIM_NONIDLE:
		return tasks[PSIM_NR_IOWAIT] || tasks[PSIM_NR_MEMSTALL] ||
		       tasks[PSIM_NR_RUNNING];
	}
	return 0;
}

#endif /* KERNEL_REF_H */
