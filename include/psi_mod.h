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
#include <linux/cgroup.h>
#include <linux/jump_label.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
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
struct psim_cgroup;
u64 psim_cgroup_snapshot(struct psim_cgroup *g, int cpu,
			 struct psim_cpu_state *snap);
int psim_probes_cgroups(bool on);

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
u32 psim_collect_poll(struct psim_cgroup *cg, u64 *total);
u64 psim_cgroup_aggregate(struct psim_cgroup *cg, bool from_work);
void psim_cgroup_start(struct psim_cgroup *cg);
void psim_cgroup_read(struct psim_cgroup *cg, enum psim_res res,
		      unsigned long avg[2][3], u64 total[2]);

#define PSIM_NR_LAGS	16

struct psim_aggregate_debug {
	unsigned long runs;
	u64 work_ns;
	u64 lag_max;
	unsigned long lag_folds;
	unsigned long restarts;
	unsigned long late_max;
	unsigned long late_runs;
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

/*
 * A trigger set: the triggers of one group's files, the system's
 * (psim_sys_triggers, the files in <proc_dir> and the cgroup tree's top)
 * or a cgroup's (made at the first trigger written to one of its files,
 * freed with its group), as the kernel keeps them in each psi_group: the
 * unprivileged ones, evaluated by that group's averaging; the privileged
 * ones and that group's fast path (its totals, windows and timer), run by
 * the one poll thread of the module (psi_triggers.c).
 */
struct psim_cgroup;
struct psim_triggers {
	struct list_head sets;		/* psim_sets, under its lock */
	struct psim_cgroup *cg;		/* NULL: the system's */
	struct mutex avg_lock;
	struct list_head avg_triggers;
	/* the fast path's, under poll_lock (the kernel's rtpoll_trigger_lock) */
	struct mutex poll_lock;
	struct list_head poll_triggers;
	unsigned int poll_nr[PSIM_NR_STATES];
	u64 poll_min_period;
	u64 poll_until;
	u64 poll_next_update;
	u64 poll_total[PSIM_NR_STATES - 1];	/* group->total[PSI_POLL] */
	u64 poll_seen[PSIM_NR_STATES - 1];	/* group->rtpoll_total */
	u32 poll_states;		/* watched: read by the probes */
	atomic_t poll_scheduled;
	atomic_t poll_wakeup;		/* for the thread: run this set */
	struct timer_list poll_timer;
	/*
	 * Shutdown (the module's stop, or the cgroup's files going): set
	 * under the write side, read by every poll and write under the
	 * read side; then writes fail with dead_errno.
	 */
	struct rw_semaphore rwsem;
	bool dead;
	int dead_errno;
};

extern struct psim_triggers psim_sys_triggers;

struct psim_trigger;
void psim_triggers_start(void);
void psim_triggers_shutdown(void);
void psim_triggers_stop(void);
void psim_triggers_exit(void);
ssize_t psim_trigger_write(struct file *file, const char __user *buf,
			   size_t nbytes, enum psim_res res,
			   struct psim_cgroup *cg, struct psim_trigger **slot);
ssize_t psim_trigger_write_top(struct file *file, const char __user *buf,
			       size_t nbytes, enum psim_res res,
			       struct psim_trigger **slot);
__poll_t psim_trigger_poll(struct psim_trigger **slot,
			   struct file *file, struct poll_table_struct *wait);
void psim_trigger_release(struct psim_trigger **slot);
ssize_t psim_trigger_write_kbuf(struct file *file, const char *buf,
				size_t nbytes, enum psim_res res,
				struct psim_cgroup *cg, struct psim_trigger **slot);
void psim_trigger_release_live(struct psim_trigger **slot);
void psim_triggers_avgs_update(struct psim_triggers *ts, u64 now,
			       const u64 *total, const u64 *seen);
unsigned long psim_triggers_polled(void);
void psim_triggers_remove(struct psim_cgroup *cg);
void psim_triggers_revive(struct psim_cgroup *cg);
void psim_triggers_remove_groups(void);
void psim_triggers_revive_groups(void);
void psim_triggers_free(struct psim_triggers *ts);

struct psim_triggers_debug {
	unsigned long nr[PSIM_NR_AGGS];		/* triggers now */
	unsigned long created, destroyed;
	unsigned long events[PSIM_NR_AGGS];	/* signalled */
	unsigned long evals[PSIM_NR_AGGS];	/* trigger updates */
	unsigned long poll_runs;		/* fast-path work runs */
	u64 poll_work_ns;			/* and its time */
	u32 poll_states;			/* the system's set */
	u64 poll_min_period;
	unsigned long sets;			/* cgroups' sets now */
};

void psim_triggers_debug(struct psim_triggers_debug *d);

/*
 * The fast path's wakeup, from the probes: when a new state mask of a
 * group (a CPU's: the system's) holds a state a privileged trigger of
 * that group watches, make sure its timer is armed (the kernel's
 * psi_schedule_rtpoll_work() from psi_group_change()). Until the first
 * privileged trigger since the start it is a static branch that is never
 * taken (the key goes on with the poll thread and off when the thread
 * goes at stop, never per trigger: a flip patches code on every CPU);
 * then a read of the watched states, and while one of them is in the
 * mask an atomic exchange and at most a timer (a delay of one jiffy: no
 * wakeup under the runqueue lock). The thread itself decides how long to
 * keep polling.
 */
DECLARE_STATIC_KEY_FALSE(psim_poll_key);

static inline void psim_triggers_kick(struct psim_triggers *ts, u32 mask)
{
	if ((mask & READ_ONCE(ts->poll_states)) &&
	    !atomic_xchg(&ts->poll_scheduled, 1))
		mod_timer(&ts->poll_timer, jiffies + 1);
}

static inline void psim_poll_kick(u32 mask)
{
#ifndef PSIM_BENCH_NO_POLL_KICK	/* bench/run.sh --triggers: the hook's cost */
	if (static_branch_unlikely(&psim_poll_key))
		psim_triggers_kick(&psim_sys_triggers, mask);
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
struct cgroup;

/*
 * A group's state on one CPU: a small object of its own on the CPU's node
 * (psi_cgroup.c), since a group is made where nothing may sleep and the
 * per-CPU allocator serves such requests only from what it has ready.
 */
struct psim_cgroup_cpu {
	/* the probes', under the CPU's lock (struct psim_pcpu in psi_probes.c) */
	struct psim_cpu_state st;
	/* what each aggregator saw last of it, under the group's avgs_lock */
	u64 times_prev[PSIM_NR_AGGS][PSIM_NR_STATES];
};

/*
 * The group of a cgroup2 cgroup other than the root (whose pressure is
 * the system's): its place in the tree, its per-CPU state and its totals
 * and averages, as the kernel's struct psi_group.
 */
struct psim_cgroup {
	struct psim_cgroup *parent;	/* NULL: a child of the root */
	unsigned int level;		/* cgroup->level: 1 below the root */
	struct cgroup *cgrp;		/* valid until its release */
	u64 id;				/* cgroup_id() */
	u64 parent_id;			/* the parent's, 1 for the root's children */
	struct mutex avgs_lock;
	struct psim_group agg;		/* under avgs_lock */
	struct delayed_work avgs_work;	/* the kernel's group->avgs_work */
	struct hlist_node hash;
	struct list_head all;		/* psim_cgroup_list */
	struct rcu_work free_work;
	/*
	 * Its files (psi_cgroup.c, "Files"): its directory under its
	 * parent's, the name it was made with.
	 * dir and the flags under psim_cgroup_lock.
	 */
	struct proc_dir_entry *dir;
	char *dir_name;
	struct list_head files;		/* queued for the files' work */
	bool removed;			/* its cgroup's rmdir */
	bool freeing;			/* its cgroup's release */
	bool no_files;			/* none could be made */
	/*
	 * Its files' triggers: made at the first, then until it is freed;
	 * trig_gone: its files are going, a set made now is born dead
	 * (both under psim_sets_lock, psi_triggers.c)
	 */
	struct psim_triggers *trig;
	bool trig_gone;
	struct psim_cgroup_cpu *cpus[];	/* by CPU, every possible one */
};

static inline struct psim_cgroup_cpu *psim_cgroup_cpu(struct psim_cgroup *g,
						      int cpu)
{
	return g->cpus[cpu];
}

/*
 * On while the probes count tasks in their cgroups' groups (cgroups=1):
 * see psi_probes.c, "Per-cgroup accounting".
 */
DECLARE_STATIC_KEY_FALSE(psim_cgroup_key);
/* On while the groups hang on their cgroups' slots (psim_cgroup_slot_get) */
DECLARE_STATIC_KEY_FALSE(psim_cgroup_slot_key);

struct psim_cgroup *psim_cgroup_lookup(struct cgroup *cgrp);

/* @cgrp's own group, or NULL (the root, or none could be made). */
static inline struct psim_cgroup *psim_cgroup_get(struct cgroup *cgrp)
{
	if (static_branch_likely(&psim_cgroup_slot_key))
		return psim_cgroup_slot_get(cgrp);
	return psim_cgroup_lookup(cgrp);
}

/*
 * The group @p's flags count in: its default-hierarchy cgroup's, or the
 * nearest ancestor's that has one (a cgroup whose group could not be made
 * counts in its parent's); NULL for the root. Under the task's runqueue
 * lock or with preemption off otherwise (an RCU-sched reader: a css_set is
 * freed after a grace period), as the kernel's task_psi_group().
 */
static inline struct psim_cgroup *psim_cgroup_of_task(struct task_struct *p)
{
	struct cgroup *cgrp = rcu_dereference_sched(p->cgroups)->dfl_cgrp;
	struct psim_cgroup *g;

	while (!(g = psim_cgroup_get(cgrp))) {
		cgrp = cgroup_parent(cgrp);
		if (!cgrp)
			break;
	}
	return g;
}

/*
 * A group's fast-path wakeup, as psim_poll_kick(): where its files have a
 * trigger set (read once; it stays until the group is freed, after an
 * RCU grace period).
 */
static inline void psim_cgroup_poll_kick(struct psim_cgroup *g, u32 mask)
{
#ifndef PSIM_BENCH_NO_POLL_KICK
	struct psim_triggers *ts;

	if (!static_branch_unlikely(&psim_poll_key))
		return;
	ts = READ_ONCE(g->trig);
	if (ts)
		psim_triggers_kick(ts, mask);
#endif
}

/* The averaging of a group with activity, as psim_wake_clock() */
static inline void psim_cgroup_wake_clock(struct psim_cgroup *g)
{
	if (!delayed_work_pending(&g->avgs_work))
		queue_delayed_work(system_unbound_wq, &g->avgs_work,
				   PSIM_FREQ);
}

int psim_cgroups_start(bool on, bool kernel_psi);
void psim_cgroups_stop(void);
int psim_cgroups_cgroupfs(bool on);
bool psim_cgroups_cgroupfs_wanted(void);
bool psim_cgroups_counting(void);

struct psim_cgroups_debug {
	bool on;
	unsigned long nr;		/* groups now */
	unsigned long made, freed;	/* since the start */
	unsigned long failed;		/* cgroups left without one */
	unsigned long files_failed;	/* cgroups left without files */
};

void psim_cgroups_debug(struct psim_cgroups_debug *d);
void psim_cgroups_show(struct seq_file *m);
void psim_cgroups_show_pressure(struct seq_file *m,
				void (*show)(struct seq_file *m, u64 id,
					     enum psim_res res,
					     unsigned long avg[2][3],
					     u64 total[2]));

struct proc_dir_entry;
void psim_cgroups_files_start(struct proc_dir_entry *procdir);
void psim_cgroups_files_stop(void);

/* psi_proc.c */
int psim_proc_create(const char *dir, bool percpu, bool irq);
void psim_proc_remove(void);
struct proc_dir_entry *psim_proc_cgroup_dir(const char *name,
					    struct proc_dir_entry *parent,
					    struct psim_cgroup *g, kuid_t uid,
					    kgid_t gid);
bool psim_proc_cgroup_file_name(const char *name);
int psim_group_show(struct seq_file *m, struct psim_cgroup *g,
		    enum psim_res res);
bool psim_proc_has_irq(void);

/* psi_cgroupfs.c */
int psim_cgroupfs_up(bool kernel_psi, bool irq);
void psim_cgroupfs_down(void);
int psim_copy_from_user(void *dst, const void __user *src, size_t len);

#endif /* PSI_MOD_H */
