/* SPDX-License-Identifier: GPL-2.0 */
/*
 * psi_mod: the interfaces between the module's files.
 *
 *   psi_mod.c        the module: parameters, start and stop
 *   psi_probes.c     the scheduler probes and the per-task and per-CPU state
 *   psi_aggregate.c  per-CPU times into totals and averages
 *   psi_proc.c       the files
 */
#ifndef PSI_MOD_H
#define PSI_MOD_H

#include <linux/workqueue.h>
#include "psi_mod_compat.h"
#include "psi_mod_logic.h"

/* psi_probes.c */
int psim_probes_find(void);
int psim_probes_start(bool memstall_tp_only);
void psim_probes_stop(void);
u64 psim_cpu_snapshot(int cpu, struct psim_cpu_state *snap);

struct psim_cpu_debug {
	struct psim_cpu_state st;
	u32 relocations;
	u32 dead_kprobe, dead_callback;
};

void psim_cpu_debug(int cpu, struct psim_cpu_debug *d);

/* psi_aggregate.c */

/* Sampling period of the averages: the kernel's PSI_FREQ, 2 s. */
#define PSIM_FREQ	(2 * HZ + 1)

void psim_aggregate_start(bool warmup);
void psim_aggregate_stop(void);
void psim_aggregate_read(enum psim_res res, unsigned long avg[2][3],
			 u64 total[2]);

#define PSIM_NR_LAGS	16

struct psim_aggregate_debug {
	unsigned long runs, wake_runs;
	u64 lag_max;
	unsigned long lag_folds;
	u32 lags[PSIM_NR_LAGS];
	unsigned long seen[3];
	bool pending;
};

void psim_aggregate_debug(struct psim_aggregate_debug *d);

extern struct delayed_work psim_avgs_work, psim_avgs_work_wake;
extern struct task_struct *psim_avgs_worker;

/*
 * From the probes: start the aggregation clock if it is stopped. It stops
 * by itself when all CPUs are idle; the next task change starts it again,
 * as in the kernel. The deferrable timer goes on this CPU, where a task
 * just ran, and never wakes it if it idles; the work then moves itself to
 * a busy CPU (psi_aggregate.c). Inline: it runs on every state-changing
 * switch.
 */
static inline void psim_wake_clock(void)
{
	if (!delayed_work_pending(&psim_avgs_work) &&
	    !delayed_work_pending(&psim_avgs_work_wake))
		queue_delayed_work(system_unbound_wq, &psim_avgs_work,
				   PSIM_FREQ);
}

/* psi_proc.c */
int psim_proc_create(const char *dir);
void psim_proc_remove(void);

#endif /* PSI_MOD_H */
