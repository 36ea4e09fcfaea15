/* SPDX-License-Identifier: GPL-2.0 */
/*
 * psi_mod: the interfaces between the module's files.
 *
 *   psi_mod.c        the module: parameters, start and stop
 *   psi_probes.c     the scheduler probes and the per-task and per-CPU state
 *   psi_irq.c        the interrupt probes (irq=1)
 *   psi_aggregate.c  per-CPU times into totals and averages
 *   psi_triggers.c   pressure triggers
 *   psi_cgroup.c     the cgroup2 tree (cgroups=1)
 *   psi_proc.c       the files
 */
#ifndef PSI_MOD_H
#define PSI_MOD_H

#include <linux/atomic.h>
#include <linux/jump_label.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include "psi_mod_compat.h"
#include "psi_mod_logic.h"

/* psi_mod.c */

/* The steps of the start, in their order (the fail_start= test aid). */
enum psim_start_step {
	PSIM_STEP_NONE,
	PSIM_STEP_AGGREGATE,
	PSIM_STEP_TRIGGERS,
	PSIM_STEP_CGROUPS,
	PSIM_STEP_PROBES,
	PSIM_STEP_IRQ,
	PSIM_STEP_FILES,
	PSIM_NR_STEPS,
};

int psim_start_fault(enum psim_start_step step);
int psim_proc_read_uint(const char *path, unsigned int *v);

/* psi_probes.c */

/* A tracepoint probe, its tracepoint looked up by name at load. */
struct psim_probe {
	const char *name;
	void *func;
	struct tracepoint *tp;
	bool attached;
};

void psim_probes_lookup(struct psim_probe *probes, int n);
int psim_attach_optional(struct psim_probe *probes, int n);
void psim_detach_optional(struct psim_probe *probes, int n);
void psim_irq_charge(int cpu, u64 delta);
int psim_probes_find(void);
int psim_probes_start(bool memstall_tp_only, bool kernel_psi);
void psim_probes_check(void);
unsigned int psim_store_table_size(void);
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

/* The aggregators, as the kernel's enum psi_aggregators. */
enum psim_agg {
	PSIM_AVGS,	/* the averaging work, every 2 s */
	PSIM_POLL,	/* the trigger fast path (psi_triggers.c) */
	PSIM_NR_AGGS,
};

void psim_aggregate_start(bool warmup, bool percpu);
void psim_aggregate_stop(void);
void psim_aggregate_read(enum psim_res res, unsigned long avg[2][3],
			 u64 total[2]);
void psim_aggregate_read_percpu(enum psim_res res,
				void (*show)(void *arg, int cpu,
					     unsigned long avg[2][3],
					     u64 total[2]),
				void *arg);
u64 psim_aggregate_cpu_nonidle(int cpu);
u32 psim_collect_poll(u64 *total);

#define PSIM_NR_LAGS	16

struct psim_aggregate_debug {
	unsigned long runs;
	u64 work_ns;
	u64 lag_max;
	unsigned long lag_folds;
	u32 lags[PSIM_NR_LAGS];
	unsigned long seen[3];
	bool pending;
};

void psim_aggregate_debug(struct psim_aggregate_debug *d);

extern struct delayed_work psim_avgs_work;
extern struct task_struct *psim_avgs_worker;

/*
 * From the probes: start the aggregation clock if it is not pending, a
 * period from now. It stops by itself when all CPUs are idle; the next
 * task change starts it again, as in the kernel's psi_group_change().
 * Inline: it runs on every state-changing switch.
 */
static inline void psim_wake_clock(void)
{
	if (!delayed_work_pending(&psim_avgs_work))
		queue_delayed_work(system_unbound_wq, &psim_avgs_work,
				   PSIM_FREQ);
}

/* psi_triggers.c */
struct file;
struct poll_table_struct;

void psim_triggers_start(void);
void psim_triggers_shutdown(void);
void psim_triggers_stop(void);
void psim_triggers_exit(void);
ssize_t psim_trigger_write(struct file *file, const char __user *buf,
			   size_t nbytes, enum psim_res res);
__poll_t psim_trigger_poll(struct file *file, struct poll_table_struct *wait);
void psim_trigger_release(struct file *file);
void psim_triggers_avgs_update(u64 now, const u64 *total, const u64 *seen);
unsigned long psim_triggers_polled(void);

struct psim_triggers_debug {
	unsigned long nr[PSIM_NR_AGGS];		/* triggers now */
	unsigned long created, destroyed;
	unsigned long events[PSIM_NR_AGGS];	/* signalled */
	unsigned long evals[PSIM_NR_AGGS];	/* trigger updates */
	unsigned long poll_runs;		/* fast-path work runs */
	u64 poll_work_ns;			/* and its time */
	u32 poll_states;
	u64 poll_min_period;
};

void psim_triggers_debug(struct psim_triggers_debug *d);

/*
 * The fast path's wakeup, from the probes: when a CPU's new state mask
 * holds a state a privileged trigger watches, make sure the poll thread's
 * timer is armed (the kernel's psi_schedule_rtpoll_work() from
 * psi_group_change()). Until the first privileged trigger since the start
 * it is a static branch that is never taken (the key goes on with the
 * fast path's thread and off when the thread goes at stop, never per
 * trigger: a flip patches code on every CPU); then a read of the watched
 * states, and while one of them is in the mask an atomic exchange and at
 * most a timer (a delay of one jiffy: no wakeup under the runqueue lock).
 * The thread itself decides how long to keep polling.
 */
DECLARE_STATIC_KEY_FALSE(psim_poll_key);
extern u32 psim_poll_states;
extern atomic_t psim_poll_scheduled;
extern struct timer_list psim_poll_timer;

static inline void psim_poll_kick(u32 mask)
{
#ifndef PSIM_BENCH_NO_POLL_KICK	/* bench/run.sh --triggers: the hook's cost */
	if (static_branch_unlikely(&psim_poll_key) &&
	    (mask & READ_ONCE(psim_poll_states)) &&
	    !atomic_xchg(&psim_poll_scheduled, 1))
		mod_timer(&psim_poll_timer, jiffies + 1);
#endif
}

/* psi_irq.c */
int psim_irq_start(void);
void psim_irq_stop(void);
#define PSIM_IRQ_DEBUG_KINDS	4	/* device, vector, softirq, nested */
void psim_irq_debug(int cpu, u64 *total, u64 *charged,
		    unsigned long n[PSIM_IRQ_DEBUG_KINDS],
		    u64 time[PSIM_IRQ_DEBUG_KINDS]);

/* psi_cgroup.c */
struct seq_file;

int psim_cgroups_start(bool on);
void psim_cgroups_stop(void);

struct psim_cgroups_debug {
	bool on;
	unsigned long nr;		/* groups now */
	unsigned long made, freed;	/* since the start */
	unsigned long failed;		/* cgroups left without one */
};

void psim_cgroups_debug(struct psim_cgroups_debug *d);
void psim_cgroups_show(struct seq_file *m);

/* psi_proc.c */
int psim_proc_create(const char *dir, bool percpu, bool irq);
void psim_proc_remove(void);
int psim_copy_from_user(void *dst, const void __user *src, size_t len);

#endif /* PSI_MOD_H */
