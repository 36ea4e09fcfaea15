// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod: the groups of per-cgroup pressure (cgroups=1).
 *
 * One struct psim_cgroup per cgroup of the default hierarchy, its root
 * aside (the root's pressure is the system-wide state): its place in the
 * tree, its state per CPU, which the probes change (psi_probes.c,
 * "Per-cgroup accounting"), and its totals and averages, folded by its
 * own averaging work (docs/design.md, "Per-cgroup pressure").
 *
 * Lifetime. A group is made for every cgroup that exists at the start (a
 * pre-order walk under RCU) and at each cgroup_mkdir, which fires before
 * the new directory goes live (kernfs_activate() comes after it), so no
 * task can enter a cgroup before its group exists. It is unhashed at
 * cgroup_release, when the cgroup has no task and can never get one again
 * (its children are released before it: each holds a reference on its
 * parent), and freed from a work item after an RCU grace period, its
 * averaging work cancelled first. The stop unhashes the rest once the
 * probes count in no group, with the cgroup probes still attached (so
 * every group's cgroup is still there), and waits for the frees.
 *
 * Both tracepoints fire with cgroup_mutex held, and with the tracing
 * path's spinlock held and interrupts off (TRACE_CGROUP_PATH formats the
 * cgroup's path while a probe is attached to it: a cost at mkdir and
 * release only, never per context switch). So a group is allocated without
 * sleeping there; a failure leaves that cgroup without a group, counted
 * (debugfs) and said once in dmesg at the stop.
 *
 * A walk at the start races with mkdir and release: a cgroup made during
 * it may be seen by both (the second finds it hashed), and one released
 * during it may be reached by the walk after its release probe ran; the
 * release sets CSS_RELEASED before its tracepoint, so the walk, looking
 * again under the hash lock after inserting, takes such a group out
 * itself.
 *
 * Groups are found by cgroup id (cgroup_id(): the kernfs node's, never
 * handed out twice while the system runs), in a hash under one spinlock,
 * with RCU readers; the probes find them faster through the cgroup's own
 * PSI pointer where the kernel leaves it unused (psim_cgroup_get()).
 */
#include <linux/cgroup.h>
#include <linux/hashtable.h>
#include <linux/overflow.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/topology.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>

#include "psi_mod.h"

#define PSIM_CGROUP_HASH_BITS	10
static DEFINE_HASHTABLE(psim_cgroup_hash, PSIM_CGROUP_HASH_BITS);
static LIST_HEAD(psim_cgroup_list);
static DEFINE_SPINLOCK(psim_cgroup_lock);
static bool psim_cgroups_on;
/*
 * Each group's cgroup slot points to it (psim_cgroup_slot_get()): a
 * kernel with CONFIG_PSI whose own PSI is off. Elsewhere the probes find
 * a group by cgroup id in the hash. Set at the start, before any group.
 */
static bool psim_cgroups_slot;
DEFINE_STATIC_KEY_FALSE(psim_cgroup_slot_key);
/*
 * Set once the start's walk is done (under the lock): from then on a
 * cgroup whose parent has no group gets none either. Its parent's tasks
 * count in the nearest ancestor that has one, and a group made later
 * would take over a cgroup with tasks counted elsewhere.
 */
static bool psim_cgroups_adopted;
/* the groups' release: an RCU grace period, then a sleeping context */
static struct workqueue_struct *psim_cgroup_wq;
/* under psim_cgroup_lock */
static unsigned long psim_cgroups_nr, psim_cgroups_made, psim_cgroups_freed;
static unsigned long psim_cgroups_failed;

static struct psim_cgroup *psim_cgroup_find(u64 id)
{
	struct psim_cgroup *g;

	hash_for_each_possible_rcu(psim_cgroup_hash, g, hash, id)
		if (g->id == id)
			return g;
	return NULL;
}

/*
 * @cgrp's group by its id, for the probes where the cgroup has no slot
 * for it; preemption off (an RCU reader: a group is freed after a grace
 * period).
 */
struct psim_cgroup *psim_cgroup_lookup(struct cgroup *cgrp)
{
	return psim_cgroup_find(cgroup_id(cgrp));
}

static bool psim_cgroup_is_root(struct cgroup *cgrp)
{
	return !cgroup_parent(cgrp);
}

static void psim_cgroup_avgs_work(struct work_struct *work);

static void psim_cgroup_kfree(struct psim_cgroup *g)
{
	int cpu;

	for_each_possible_cpu(cpu)
		kfree(g->cpus[cpu]);
	kfree(g);
}

/*
 * A group of its own for @cgrp, with its state per CPU and its averages;
 * without sleeping (see psim_cgroup_make()), each CPU's part on its node.
 */
static struct psim_cgroup *psim_cgroup_alloc(struct cgroup *cgrp)
{
	const gfp_t gfp = GFP_ATOMIC | __GFP_NOWARN;
	struct psim_cgroup *g;
	int cpu;

	g = kzalloc(struct_size(g, cpus, nr_cpu_ids), gfp);
	if (!g)
		return NULL;
	for_each_possible_cpu(cpu) {
		g->cpus[cpu] = kzalloc_node(sizeof(*g->cpus[cpu]), gfp,
					    cpu_to_node(cpu));
		if (!g->cpus[cpu]) {
			psim_cgroup_kfree(g);
			return NULL;
		}
	}
	psim_cgroup_start(g);
	mutex_init(&g->avgs_lock);
	INIT_DELAYED_WORK(&g->avgs_work, psim_cgroup_avgs_work);
	g->cgrp = cgrp;
	g->id = cgroup_id(cgrp);
	g->level = cgrp->level;
	return g;
}

/*
 * @cgrp's group, made if it has none; the root's is NULL. With
 * psim_cgroup_lock held and interrupts off. While the start's walk is
 * going on, a missing ancestor is made first, the highest one first (a
 * mkdir below a cgroup the walk has not reached yet); after it, a cgroup
 * whose parent has no group (no memory at its mkdir) gets none either.
 * Returns false if @cgrp is left without a group (the groups made above
 * it stay).
 */
static bool psim_cgroup_make(struct cgroup *cgrp)
{
	struct cgroup *c, *missing;
	struct psim_cgroup *g;

	lockdep_assert_held(&psim_cgroup_lock);
	for (;;) {
		if (psim_cgroup_find(cgroup_id(cgrp)))
			return true;
		/* the highest ancestor (or @cgrp) without a group */
		missing = cgrp;
		for (c = cgroup_parent(cgrp); c && !psim_cgroup_is_root(c);
		     c = cgroup_parent(c))
			if (!psim_cgroup_find(cgroup_id(c)))
				missing = c;
		if (missing != cgrp && psim_cgroups_adopted) {
			psim_cgroups_failed++;
			return false;
		}
		g = psim_cgroup_alloc(missing);
		if (!g) {
			psim_cgroups_failed++;
			return false;
		}
		c = cgroup_parent(missing);
		g->parent_id = cgroup_id(c);
		g->parent = psim_cgroup_is_root(c) ? NULL :
			    psim_cgroup_find(g->parent_id);
		hash_add_rcu(psim_cgroup_hash, &g->hash, g->id);
		list_add_tail(&g->all, &psim_cgroup_list);
		/* the probes find it from here on: see psim_cgroup_of_task() */
		if (psim_cgroups_slot)
			psim_cgroup_slot_set(missing, g);
		psim_cgroups_nr++;
		psim_cgroups_made++;
	}
}

/*
 * Held by a reader of the groups' figures (psim_cgroups_show_pressure())
 * and by each group's free: a reader walks the hash without its
 * spinlock, and a group it finds, unhashed or not, is not freed under it.
 */
static DEFINE_MUTEX(psim_cgroup_free_lock);

/* After an RCU grace period: no probe holds the group. */
static void psim_cgroup_free_work(struct work_struct *work)
{
	struct psim_cgroup *g = container_of(to_rcu_work(work),
					     struct psim_cgroup, free_work);

	mutex_lock(&psim_cgroup_free_lock);
	cancel_delayed_work_sync(&g->avgs_work);
	psim_cgroup_kfree(g);
	mutex_unlock(&psim_cgroup_free_lock);
}

/*
 * The group leaves the hash and its cgroup; freed after a grace period
 * (its averaging work, which the probes may have queued, cancelled
 * first). Its cgroup is released or the probes are gone: no task counts
 * in it any more.
 */
static void psim_cgroup_unhash(struct psim_cgroup *g)
{
	lockdep_assert_held(&psim_cgroup_lock);
	if (psim_cgroups_slot)
		psim_cgroup_slot_set(g->cgrp, NULL);
	g->cgrp = NULL;
	hash_del_rcu(&g->hash);
	list_del(&g->all);
	psim_cgroups_nr--;
	psim_cgroups_freed++;
	INIT_RCU_WORK(&g->free_work, psim_cgroup_free_work);
	queue_rcu_work(psim_cgroup_wq, &g->free_work);
}

static bool psim_cgroup_dfl(struct cgroup *cgrp)
{
	return cgrp->root == &cgrp_dfl_root;
}

static void psim_cgprobe_mkdir(void *data, struct cgroup *cgrp,
			       const char *path)
{
	unsigned long flags;

	if (!psim_cgroup_dfl(cgrp))
		return;
	spin_lock_irqsave(&psim_cgroup_lock, flags);
	if (psim_cgroups_on)
		psim_cgroup_make(cgrp);
	spin_unlock_irqrestore(&psim_cgroup_lock, flags);
}

static void psim_cgprobe_release(void *data, struct cgroup *cgrp,
				 const char *path)
{
	struct psim_cgroup *g;
	unsigned long flags;

	if (!psim_cgroup_dfl(cgrp))
		return;
	spin_lock_irqsave(&psim_cgroup_lock, flags);
	g = psim_cgroup_find(cgroup_id(cgrp));
	if (g)
		psim_cgroup_unhash(g);
	spin_unlock_irqrestore(&psim_cgroup_lock, flags);
}

/* (end, begin), as psim_attach_optional() wants them */
static struct psim_probe psim_cgroup_probes[] = {
	{ .name = "cgroup_release", .func = psim_cgprobe_release },
	{ .name = "cgroup_mkdir", .func = psim_cgprobe_mkdir },
};

/* Every cgroup that exists now gets its group; with the probes attached. */
static int psim_cgroup_adopt(void)
{
	struct cgroup_subsys_state *css;
	unsigned long flags;
	bool ok = true;

	rcu_read_lock();
	css_for_each_descendant_pre(css, &cgrp_dfl_root.cgrp.self) {
		if (psim_cgroup_is_root(css->cgroup) ||
		    (READ_ONCE(css->flags) & CSS_RELEASED))
			continue;
		spin_lock_irqsave(&psim_cgroup_lock, flags);
		ok = psim_cgroup_make(css->cgroup);
		/* released since the test above: see the top of this file */
		if (ok && (READ_ONCE(css->flags) & CSS_RELEASED)) {
			struct psim_cgroup *g;

			g = psim_cgroup_find(cgroup_id(css->cgroup));
			if (g)
				psim_cgroup_unhash(g);
		}
		spin_unlock_irqrestore(&psim_cgroup_lock, flags);
		if (!ok)
			break;
	}
	rcu_read_unlock();
	return ok ? 0 : -ENOMEM;
}

/*
 * All groups go. The cgroup probes are still attached, so every group's
 * cgroup is still there (its release would have taken the group out under
 * the same lock), and no group is made after this (psim_cgroups_on off).
 */
static void psim_cgroup_free_all(void)
{
	struct psim_cgroup *g, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&psim_cgroup_lock, flags);
	psim_cgroups_on = false;
	list_for_each_entry_safe(g, tmp, &psim_cgroup_list, all)
		psim_cgroup_unhash(g);
	spin_unlock_irqrestore(&psim_cgroup_lock, flags);
}

/*
 * The groups (@on), before the probes count in them (psim_probes_cgroups());
 * @kernel_psi: the kernel's own PSI is on, and its cgroup slots its own.
 */
int psim_cgroups_start(bool on, bool kernel_psi)
{
	unsigned long flags;
	int ret;

	psim_cgroups_on = false;
	if (!on)
		return 0;
	/* the mkdir probe allocates, with preemption off */
	if (!PSIM_PROBE_MAY_ALLOCATE) {
		pr_err("cgroups=1: not on a PREEMPT_RT kernel yet (a group is allocated in a probe that runs with preemption off)\n");
		return -EOPNOTSUPP;
	}
	psim_cgroup_wq = alloc_workqueue("psi_mod_cgroups", WQ_UNBOUND, 0);
	if (!psim_cgroup_wq)
		return -ENOMEM;
	psim_cgroups_slot = psim_have_cgroup_slot() && !kernel_psi;
	psim_cgroups_adopted = false;
	psim_cgroups_on = true;
	psim_cgroups_made = 0;
	psim_cgroups_freed = 0;
	psim_cgroups_failed = 0;
	psim_probes_lookup(psim_cgroup_probes, ARRAY_SIZE(psim_cgroup_probes));
	if (psim_attach_optional(psim_cgroup_probes,
				 ARRAY_SIZE(psim_cgroup_probes)) !=
	    ARRAY_SIZE(psim_cgroup_probes)) {
		pr_err("cgroups=1: the cgroup_mkdir and cgroup_release tracepoints are needed\n");
		ret = -ENOENT;
		goto err;
	}
	ret = psim_cgroup_adopt();
	if (ret) {
		pr_err("cgroups=1: out of memory for the groups of the existing cgroups\n");
		goto err;
	}
	spin_lock_irqsave(&psim_cgroup_lock, flags);
	psim_cgroups_adopted = true;
	spin_unlock_irqrestore(&psim_cgroup_lock, flags);
	if (psim_cgroups_slot)
		static_branch_enable(&psim_cgroup_slot_key);
	return 0;
err:
	psim_cgroups_stop();
	return ret;
}

/*
 * No probe counts in a group any more (psim_probes_stop() or
 * psim_probes_cgroups(false) came first): the groups go, then the cgroup
 * probes, then the releases in flight.
 */
void psim_cgroups_stop(void)
{
	if (!psim_cgroup_wq)
		return;
	psim_cgroup_free_all();
	static_branch_disable(&psim_cgroup_slot_key);
	psim_detach_optional(psim_cgroup_probes,
			     ARRAY_SIZE(psim_cgroup_probes));
	tracepoint_synchronize_unregister();
	if (psim_cgroups_failed)
		pr_warn("cgroups=1: %lu cgroup(s) went without a group (no memory at their mkdir)\n",
			psim_cgroups_failed);
	/* the frees queued after a grace period, then run */
	rcu_barrier();
	destroy_workqueue(psim_cgroup_wq);
	psim_cgroup_wq = NULL;
}

/* Whether there are groups for the probes to count tasks in. */
bool psim_cgroups_counting(void)
{
	return psim_cgroups_on;
}

/*
 * A group's averaging, as the kernel's psi_avgs_work() for a cgroup: on
 * while its tasks do anything, queued again by the probes' next change
 * after it let the clock stop.
 */
static void psim_cgroup_avgs_work(struct work_struct *work)
{
	struct psim_cgroup *g = container_of(to_delayed_work(work),
					     struct psim_cgroup, avgs_work);
	u64 next;

	mutex_lock(&g->avgs_lock);
	next = psim_cgroup_aggregate(g, true);
	if (next)
		queue_delayed_work(system_unbound_wq, &g->avgs_work,
				   nsecs_to_jiffies(next) + 1);
	mutex_unlock(&g->avgs_lock);
}

void psim_cgroups_debug(struct psim_cgroups_debug *d)
{
	unsigned long flags;

	spin_lock_irqsave(&psim_cgroup_lock, flags);
	d->on = psim_cgroups_on;
	d->nr = psim_cgroups_nr;
	d->made = psim_cgroups_made;
	d->freed = psim_cgroups_freed;
	d->failed = psim_cgroups_failed;
	spin_unlock_irqrestore(&psim_cgroup_lock, flags);
}

/*
 * The groups, one line each, for the debugfs view: "<id> <parent's
 * cgroup id> <level> <parent group's id, 0 for the root>". Under the
 * lock, which a mkdir or release then waits for: root-only, a debug aid.
 */
void psim_cgroups_show(struct seq_file *m)
{
	struct psim_cgroup *g;
	unsigned long flags;

	spin_lock_irqsave(&psim_cgroup_lock, flags);
	list_for_each_entry(g, &psim_cgroup_list, all)
		seq_printf(m, "%llu %llu %u %llu\n", g->id, g->parent_id,
			   g->level, g->parent ? g->parent->id : 0);
	spin_unlock_irqrestore(&psim_cgroup_lock, flags);
}

/*
 * Every group's figures, @show(@m, its cgroup id, resource, averages,
 * totals) per resource: the debugfs view of per-cgroup pressure.
 */
void psim_cgroups_show_pressure(struct seq_file *m,
				void (*show)(struct seq_file *m, u64 id,
					     enum psim_res res,
					     unsigned long avg[2][3],
					     u64 total[2]))
{
	unsigned long avg[2][3];
	struct psim_cgroup *g;
	u64 total[2];
	int bkt, res;

	mutex_lock(&psim_cgroup_free_lock);
	for (bkt = 0; bkt < HASH_SIZE(psim_cgroup_hash); bkt++) {
		hlist_for_each_entry_rcu(g, &psim_cgroup_hash[bkt], hash,
					 lockdep_is_held(&psim_cgroup_free_lock)) {
			for (res = 0; res < PSIM_NR_RES; res++) {
				psim_cgroup_read(g, res, avg, total);
				show(m, g->id, res, avg, total);
			}
		}
	}
	mutex_unlock(&psim_cgroup_free_lock);
}
