/* SPDX-License-Identifier: GPL-2.0 */
/*
 * psi_mod: every difference between the kernel versions psi_mod builds on
 * lives here, so that the logic files read the same on all of them.
 */
#ifndef PSI_MOD_COMPAT_H
#define PSI_MOD_COMPAT_H

#include <linux/version.h>
#include <linux/sched.h>
#include <linux/kernfs.h>
#include <linux/uidgid.h>
/*
 * 6.12's trace/events/sched.h pulls in linux/sched/numa_balancing.h, whose
 * prototypes name struct folio without declaring it: declared here, the
 * header builds warning-free whatever a file included before it.
 */
struct folio;
#include <trace/events/sched.h>

/* The one place that compares kernel versions. */
#define PSIM_KERNEL_AT_LEAST(major, minor)				\
	(KERNEL_VERSION(major, minor, 0) <= LINUX_VERSION_CODE)
/* And for what a stable series took in at a given release. */
#define PSIM_KERNEL_AT_LEAST_SUB(major, minor, sub)			\
	(KERNEL_VERSION(major, minor, sub) <= LINUX_VERSION_CODE)

/*
 * sched_switch gained the prev_state argument in 5.18. psi_mod does not
 * use it: the state to read is prev's state *at* the tracepoint (a task
 * with a pending signal was reset to TASK_RUNNING after prev_state was
 * taken, and stays queued), see psim_task_blocked().
 */
#if PSIM_KERNEL_AT_LEAST(5, 18)
#define PSIM_SWITCH_PROTO						\
	void *data, bool preempt, struct task_struct *prev,		\
	struct task_struct *next, unsigned int prev_state
#else
#define PSIM_SWITCH_PROTO						\
	void *data, bool preempt, struct task_struct *prev,		\
	struct task_struct *next
#endif

/* task_struct::state became __state in 5.14. */
#if PSIM_KERNEL_AT_LEAST(5, 14)
#define psim_task_state(p)	READ_ONCE((p)->__state)
#else
#define psim_task_state(p)	READ_ONCE((p)->state)
#endif

/*
 * Where the kernel has no psi_memstall_enter/leave() to kprobe (CONFIG_PSI=n)
 * psi_mod takes memory stalls from the reclaim and compaction tracepoints.
 * mm_compaction_begin/end are passed the compact_control since 5.16.
 */
struct compact_control;
#include <trace/events/compaction.h>
#include <trace/events/vmscan.h>

#if PSIM_KERNEL_AT_LEAST(5, 16)
#define PSIM_COMPACTION_BEGIN_PROTO					\
	void *data, struct compact_control *cc, unsigned long zone_start,	\
	unsigned long zone_end, bool sync
#define PSIM_COMPACTION_END_PROTO					\
	void *data, struct compact_control *cc, unsigned long zone_start,	\
	unsigned long zone_end, bool sync, int status
#else
#define PSIM_COMPACTION_BEGIN_PROTO					\
	void *data, unsigned long zone_start, unsigned long migrate_pfn,	\
	unsigned long free_pfn, unsigned long zone_end, bool sync
#define PSIM_COMPACTION_END_PROTO					\
	void *data, unsigned long zone_start, unsigned long migrate_pfn,	\
	unsigned long free_pfn, unsigned long zone_end, bool sync, int status
#endif

/*
 * When the scheduler enqueued a task that is being woken: the runqueue
 * clock it stamped in sched_info (CONFIG_SCHED_INFO, set in enqueue_task()
 * next to the kernel's psi_enqueue()), or 0 to use the clock at the
 * sched_wakeup tracepoint, which fires later, after the wakeup preemption
 * check. From 6.12 enqueue_task() runs the class's enqueue between that
 * stamp's clock update and psi_enqueue(): the stamp is then further before
 * the kernel's own read than the tracepoint is after it
 * (docs/accuracy.md, "Clock-read order, per event").
 */
#if defined(CONFIG_SCHED_INFO) && !PSIM_KERNEL_AT_LEAST(6, 12)
#define psim_enqueued_at(p)	READ_ONCE((p)->sched_info.last_queued)
#else
#define psim_enqueued_at(p)	0ULL
#endif

/*
 * 6.12 keeps a fair task that blocks while not eligible on its runqueue
 * ("delayed dequeue", se.sched_delayed) though it is asleep; the kernel's
 * PSI counts it asleep at the switch and, if load balancing migrates it,
 * moves its iowait/memstall state to the new CPU (psi_enqueue() in 6.12's
 * kernel/sched/stats.h). Before 6.12 no queued task is asleep.
 */
#if PSIM_KERNEL_AT_LEAST(6, 12)
#define psim_task_sched_delayed(p)	(READ_ONCE((p)->se.sched_delayed) != 0)
#else
#define psim_task_sched_delayed(p)	false
#endif

/*
 * The kernel's own per-task PSI word, task_struct->psi_flags, exists with
 * CONFIG_PSI (zeroed at fork, used only while the kernel's PSI is on). Its
 * type is unsigned int, a u32, on every architecture Linux runs on.
 */
#ifdef CONFIG_PSI
#define psim_have_task_word()	true
#define psim_task_word(p)	((u32 *)&(p)->psi_flags)
#else
#define psim_have_task_word()	false
#define psim_task_word(p)	((void)(p), (u32 *)NULL)
#endif

/*
 * Where the probes find a cgroup's group (psi_cgroup.c) fastest: the
 * kernel's own per-cgroup PSI pointer, which a kernel with CONFIG_PSI
 * whose PSI is off neither allocates nor reads (psi_cgroup_alloc() and
 * psi_cgroup_free() return early, the pressure files are not made or
 * fail with EOPNOTSUPP before they look), as with task_struct->psi_flags.
 * From 6.1 cgroup->psi is a pointer, left NULL; before, struct psi_group
 * is embedded and its pcpu pointer, never allocated, stands in. psi_mod
 * writes it only while its own groups are on, and puts NULL back at a
 * cgroup's release and at its stop. Without CONFIG_PSI, or with the
 * kernel's PSI on, the groups are looked up by cgroup id instead.
 */
struct psim_cgroup;

#ifdef CONFIG_PSI
#define psim_have_cgroup_slot()	true
#if PSIM_KERNEL_AT_LEAST(6, 1)
#define psim_cgroup_slot_get(cgrp)					\
	((struct psim_cgroup *)(void *)READ_ONCE((cgrp)->psi))
#define psim_cgroup_slot_set(cgrp, g)					\
	WRITE_ONCE((cgrp)->psi, (struct psi_group *)(void *)(g))
#else
#define psim_cgroup_slot_get(cgrp)					\
	((struct psim_cgroup *)(__force void *)READ_ONCE((cgrp)->psi.pcpu))
#define psim_cgroup_slot_set(cgrp, g)					\
	WRITE_ONCE((cgrp)->psi.pcpu,					\
		   (struct psi_group_cpu __percpu *)(__force void __percpu *)(g))
#endif
#else
#define psim_have_cgroup_slot()	false
#define psim_cgroup_slot_get(cgrp)	((void)(cgrp), (struct psim_cgroup *)NULL)
#define psim_cgroup_slot_set(cgrp, g)	((void)(cgrp), (void)(g))
#endif

/*
 * The owner kernfs keeps for a node: in its iattrs, made at the first
 * change of owner, mode or times (none: root's, as the inode kernfs
 * would make). struct kernfs_iattrs is private to fs/kernfs
 * (kernfs-internal.h); on 5.10, 6.1 and 6.12 it opens with ia_uid and
 * ia_gid, written under kernfs's own lock: a read without it sees the
 * old owner or the new one, and a new iattrs starts zeroed (root's).
 */
struct psim_kernfs_iattrs_head {
	kuid_t ia_uid;
	kgid_t ia_gid;
};

static inline void psim_kernfs_owner(struct kernfs_node *kn, kuid_t *uid,
				     kgid_t *gid)
{
	const struct psim_kernfs_iattrs_head *ia;

	ia = (const void *)READ_ONCE(kn->iattr);
	/* racy with a chown, which kernfs's lock orders: old or new */
	*uid = ia ? data_race(ia->ia_uid) : GLOBAL_ROOT_UID;
	/* the same */
	*gid = ia ? data_race(ia->ia_gid) : GLOBAL_ROOT_GID;
}

/*
 * Whether the kernel's own PSI is on, from the kernel's state rather than
 * from anything under /proc, which depends on the caller's root, mount
 * namespace and mount options. With it on, psi_enqueue() sets TSK_RUNNING
 * in the psi_flags of every task it queues (5.10 to 6.12), and only a
 * switch-out to sleep or a dequeue for migration clears it: the task that
 * asks, running, has it. With it off nothing sets the kernel's bits.
 * Asked only while psi_mod keeps no word of its own in psi_flags (its stop
 * zeroes them). The psi_disabled static key itself is not exported.
 */
#ifdef CONFIG_PSI
#define psim_kernel_psi_on()	(!!(READ_ONCE(current->psi_flags) & TSK_RUNNING))
#else
#define psim_kernel_psi_on()	false
#endif

/*
 * A timer stopped for good: timer_shutdown_sync() (6.2) also refuses any
 * later re-arm; before it, del_timer_sync() with the arming sources
 * already stopped.
 */
#if PSIM_KERNEL_AT_LEAST(6, 2)
#define psim_timer_shutdown_sync(t)	timer_shutdown_sync(t)
#else
#define psim_timer_shutdown_sync(t)	del_timer_sync(t)
#endif

/* A proc file's private data: PDE_DATA() until 5.17 renamed it. */
#if PSIM_KERNEL_AT_LEAST(5, 17)
#define psim_pde_data(inode)	pde_data(inode)
#else
#define psim_pde_data(inode)	PDE_DATA(inode)
#endif

/*
 * A probe table entry that cannot exist unchecked. The register_trace_<tp>()
 * helper that the trace/events headers declare takes a pointer to exactly the
 * probe type of tracepoint @tp, and the kernel builds with
 * -Werror=incompatible-pointer-types: a probe @fn whose prototype drifts
 * from its tracepoint's breaks the build here instead of the stack at run
 * time. sizeof() keeps the call unevaluated (no reference to the unexported
 * tracepoint symbol is emitted) and the name is offset by zero times it.
 */
#define PSIM_PROBE(tp, fn) {						\
	.name = #tp + 0 * sizeof(register_trace_##tp((typeof(fn) *)NULL, NULL)), \
	.func = fn							\
}

/*
 * The system-wide cpu file has a "full" line (all zeros) from 5.13, with
 * PSI_CPU_FULL; before, only "some" (psi_show()).
 */
#define PSIM_CPU_FULL_LINE	PSIM_KERNEL_AT_LEAST(5, 13)

/*
 * The trigger rules of the running kernel's psi_trigger_create() and
 * psi_proc_init() (psi_mod_logic.h, PSIM_TRIG_*): cpu full from 5.13; the
 * 6.5 privilege rules (0666 files, unprivileged windows in multiples of
 * 2 s), which 6.1.y carries from 6.1.42 on; windows below 500 ms from
 * 6.6 (Debian's 5.10.223 and 6.1.192 have the minimum, 6.12.95 not;
 * docs/triggers.md, "Per kernel").
 */
#if PSIM_KERNEL_AT_LEAST(5, 13)
#define PSIM_TRIG_RULES_CPU	PSIM_TRIG_CPU_FULL
#else
#define PSIM_TRIG_RULES_CPU	0
#endif
#if PSIM_KERNEL_AT_LEAST(6, 5) ||					\
	(PSIM_KERNEL_AT_LEAST_SUB(6, 1, 42) && !PSIM_KERNEL_AT_LEAST(6, 2))
#define PSIM_TRIG_RULES_PRIV	PSIM_TRIG_UNPRIV
#define PSIM_TRIGGER_FILE_MODE	0666
#else
#define PSIM_TRIG_RULES_PRIV	0
#define PSIM_TRIGGER_FILE_MODE	0444
#endif
#if PSIM_KERNEL_AT_LEAST(6, 6)
#define PSIM_TRIG_RULES_WIN	PSIM_TRIG_ANY_WINDOW
#else
#define PSIM_TRIG_RULES_WIN	0
#endif
#define PSIM_TRIGGER_RULES						\
	(PSIM_TRIG_RULES_CPU | PSIM_TRIG_RULES_PRIV | PSIM_TRIG_RULES_WIN)

/*
 * irq pressure's charge rule (psi_mod_logic.h, enum psim_irq_rule): the
 * kernel's psi_account_irqtime() moved from update_rq_clock_task() to the
 * tick and the context switch in 6.10 ("sched: Move psi_account_irqtime()
 * out of update_rq_clock_task() hotpath"); 6.1.y took it in at 6.1.100
 * (Debian's changelog). 6.6.41 and 6.9.10, released with 6.1.100, are
 * taken to carry it too (not checked against their sources). A kernel
 * before 6.0 has no irq pressure of its own: the newer rule.
 */
#if !PSIM_KERNEL_AT_LEAST(6, 0) ||					\
	(PSIM_KERNEL_AT_LEAST_SUB(6, 1, 100) && !PSIM_KERNEL_AT_LEAST(6, 2)) || \
	(PSIM_KERNEL_AT_LEAST_SUB(6, 6, 41) && !PSIM_KERNEL_AT_LEAST(6, 7)) || \
	PSIM_KERNEL_AT_LEAST_SUB(6, 9, 10)
#define PSIM_IRQ_RULE	PSIM_IRQ_AT_TICK
#else
#define PSIM_IRQ_RULE	PSIM_IRQ_AT_CLOCK
#endif

/*
 * Whether a tracepoint probe may take a spinlock_t and allocate (GFP_ATOMIC):
 * not on PREEMPT_RT, where both may sleep and probes run with preemption
 * off (psi_cgroup.c refuses cgroups=1 there).
 */
#define PSIM_PROBE_MAY_ALLOCATE	(!IS_ENABLED(CONFIG_PREEMPT_RT))

/*
 * cgroupfs=1 (psi_cgroupfs.c) adds its files through the perf_event
 * controller, there on the default hierarchy in every cgroup with
 * CONFIG_CGROUP_PERF.
 */
#ifdef CONFIG_CGROUP_PERF
#define PSIM_HAVE_CGROUPFS		1
#define PSIM_CGROUPFS_SSID		perf_event_cgrp_id
#define psim_cgroupfs_ss_enabled()	cgroup_subsys_enabled(perf_event_cgrp_subsys)
#else
#define PSIM_HAVE_CGROUPFS		0
#define PSIM_CGROUPFS_SSID		0
#define psim_cgroupfs_ss_enabled()	false
#endif

/*
 * cgroupfs=1 where the kernel makes its own pressure files (5.10) puts
 * psi_mod's handlers into the kernel's cftypes of them. Taking them back
 * waits for every caller that loaded a handler's address and has not yet
 * entered it: without kernel preemption nothing switches a task out
 * between the load and the call, so a grace period of RCU does; with it,
 * RCU Tasks (a voluntary switch of every task).
 */
#if !defined(CONFIG_PREEMPTION)
#define PSIM_CAN_TAKE_CFTYPES		1
#define psim_sync_callers()		synchronize_rcu()
#elif defined(CONFIG_TASKS_RCU)
#define PSIM_CAN_TAKE_CFTYPES		1
#define psim_sync_callers()		synchronize_rcu_tasks()
#else
#define PSIM_CAN_TAKE_CFTYPES		0
#define psim_sync_callers()		do { } while (0)
#endif

/*
 * A kernel function's start from the address a kprobe on its symbol got:
 * on an IBT kernel that sits after the function's ENDBR instruction.
 */
#ifdef CONFIG_X86_KERNEL_IBT
#include <asm/ibt.h>
#include <linux/uaccess.h>
static inline void *psim_fn_start(void *addr)
{
	u32 insn;

	if (!get_kernel_nofault(insn, (u32 *)(addr - ENDBR_INSN_SIZE)) &&
	    is_endbr(insn))
		return addr - ENDBR_INSN_SIZE;
	return addr;
}
#else
static inline void *psim_fn_start(void *addr)
{
	return addr;
}
#endif

#endif /* PSI_MOD_COMPAT_H */
