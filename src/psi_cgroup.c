// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod: the cgroup2 tree that per-cgroup pressure hangs on (cgroups=1).
 *
 * One struct psim_cgroup per cgroup of the default hierarchy, its root
 * aside (the root's pressure is the system-wide state). The groups are
 * the tree only, so far: no per-cgroup times are kept yet and no files
 * made (docs/design.md, "Per-cgroup pressure").
 *
 * Lifetime. A group is made for every cgroup that exists at the start (a
 * pre-order walk under RCU) and at each cgroup_mkdir, which fires before
 * the new directory goes live (kernfs_activate() comes after it), so no
 * task can enter a cgroup before its group exists. It is unhashed at
 * cgroup_release, when the cgroup has no task and can never get one again
 * (its children are released before it: each holds a reference on its
 * parent), and freed after an RCU grace period. The stop frees the rest,
 * after the probes are gone.
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
 * with RCU readers.
 */
#include <linux/cgroup.h>
#include <linux/hashtable.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/tracepoint.h>

#include "psi_mod.h"

struct psim_cgroup {
	u64 id;			/* cgroup_id() */
	u64 parent_id;		/* the parent's, 1 for the root's children */
	unsigned int level;	/* cgroup->level: 1 below the root */
	struct psim_cgroup *parent;	/* NULL: the root, the system state */
	struct hlist_node hash;
	struct list_head all;	/* psim_cgroup_list, for the stop and debugfs */
	struct rcu_head rcu;
};

#define PSIM_CGROUP_HASH_BITS	10
static DEFINE_HASHTABLE(psim_cgroup_hash, PSIM_CGROUP_HASH_BITS);
static LIST_HEAD(psim_cgroup_list);
static DEFINE_SPINLOCK(psim_cgroup_lock);
static bool psim_cgroups_on;
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

static bool psim_cgroup_is_root(struct cgroup *cgrp)
{
	return !cgroup_parent(cgrp);
}

/*
 * @cgrp's group, made if it has none, and its ancestors' before it, the
 * highest missing one first; the root's is NULL. With psim_cgroup_lock
 * held and interrupts off. Returns false on an allocation failure (the
 * groups made above it stay).
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
		g = kzalloc(sizeof(*g), GFP_ATOMIC | __GFP_NOWARN);
		if (!g) {
			psim_cgroups_failed++;
			return false;
		}
		c = cgroup_parent(missing);
		g->id = cgroup_id(missing);
		g->parent_id = cgroup_id(c);
		g->level = missing->level;
		g->parent = psim_cgroup_is_root(c) ? NULL :
			    psim_cgroup_find(g->parent_id);
		hash_add_rcu(psim_cgroup_hash, &g->hash, g->id);
		list_add_tail(&g->all, &psim_cgroup_list);
		psim_cgroups_nr++;
		psim_cgroups_made++;
	}
}

static void psim_cgroup_unhash(struct psim_cgroup *g)
{
	lockdep_assert_held(&psim_cgroup_lock);
	hash_del_rcu(&g->hash);
	list_del(&g->all);
	psim_cgroups_nr--;
	psim_cgroups_freed++;
	kfree_rcu(g, rcu);
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

/* All groups go; no probe is attached any more. */
static void psim_cgroup_free_all(void)
{
	struct psim_cgroup *g, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&psim_cgroup_lock, flags);
	list_for_each_entry_safe(g, tmp, &psim_cgroup_list, all)
		psim_cgroup_unhash(g);
	spin_unlock_irqrestore(&psim_cgroup_lock, flags);
}

int psim_cgroups_start(bool on)
{
	int ret;

	psim_cgroups_on = false;
	if (!on)
		return 0;
	/* the mkdir probe allocates, with preemption off */
	if (!PSIM_PROBE_MAY_ALLOCATE) {
		pr_err("cgroups=1: not on a PREEMPT_RT kernel yet (a group is allocated in a probe that runs with preemption off)\n");
		return -EOPNOTSUPP;
	}
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
	return 0;
err:
	psim_cgroups_stop();
	return ret;
}

void psim_cgroups_stop(void)
{
	if (!psim_cgroups_on)
		return;
	psim_detach_optional(psim_cgroup_probes,
			     ARRAY_SIZE(psim_cgroup_probes));
	tracepoint_synchronize_unregister();
	if (psim_cgroups_failed)
		pr_warn("cgroups=1: %lu cgroup(s) went without a group (no memory at their mkdir)\n",
			psim_cgroups_failed);
	psim_cgroup_free_all();
	psim_cgroups_on = false;
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
