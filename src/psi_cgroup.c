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
#include <linux/kernfs.h>
#include <linux/overflow.h>
#include <linux/proc_fs.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/topology.h>
#include <linux/string.h>
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

static bool psim_cgroup_files_on;		/* under psim_cgroup_lock */
static void psim_cgroup_files_queue(struct psim_cgroup *g);
static bool psim_cgroup_files_hold(struct psim_cgroup *g);

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

/*
 * The groups and their per-CPU parts come from caches of their own, made
 * with the groups and destroyed after the last group's free: a group left
 * behind is then the slab allocator's warning at the destroy, and
 * /proc/slabinfo counts them (unless the caches are merged with others of
 * their size, which the slab_nomerge boot parameter stops).
 */
static struct kmem_cache *psim_group_cache, *psim_group_cpu_cache;

static void psim_cgroup_kfree(struct psim_cgroup *g)
{
	int cpu;

	psim_triggers_free(g->trig);
	for_each_possible_cpu(cpu)
		if (g->cpus[cpu])
			kmem_cache_free(psim_group_cpu_cache, g->cpus[cpu]);
	kfree(g->dir_name);
	kmem_cache_free(psim_group_cache, g);
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

	g = kmem_cache_zalloc(psim_group_cache, gfp);
	if (!g)
		return NULL;
	for_each_possible_cpu(cpu) {
		g->cpus[cpu] = kmem_cache_alloc_node(psim_group_cpu_cache,
						     gfp | __GFP_ZERO,
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
	INIT_LIST_HEAD(&g->files);
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
		if (psim_cgroup_files_on)
			psim_cgroup_files_queue(g);
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
	g->freeing = true;
	/* its files go first: the files' work frees it then */
	if (psim_cgroup_files_hold(g))
		return;
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

/* The cgroup's directory is gone (it may linger, dying, till its release) */
static void psim_cgprobe_rmdir(void *data, struct cgroup *cgrp,
			       const char *path)
{
	struct psim_cgroup *g;
	unsigned long flags;

	if (!psim_cgroup_dfl(cgrp))
		return;
	spin_lock_irqsave(&psim_cgroup_lock, flags);
	g = psim_cgroup_find(cgroup_id(cgrp));
	if (g) {
		g->removed = true;
		if (g->dir || psim_cgroup_files_on)
			psim_cgroup_files_queue(g);
	}
	spin_unlock_irqrestore(&psim_cgroup_lock, flags);
}

/* (end, begin), as psim_attach_optional() wants them */
static struct psim_probe psim_cgroup_probes[] = {
	{ .name = "cgroup_rmdir", .func = psim_cgprobe_rmdir },
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
		if (ok) {
			struct psim_cgroup *g;

			g = psim_cgroup_find(cgroup_id(css->cgroup));
			if (g && (READ_ONCE(css->flags) & CSS_RELEASED))
				psim_cgroup_unhash(g);
			else if (g && !(READ_ONCE(css->flags) & CSS_ONLINE))
				g->removed = true;	/* dying: no files */
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
	list_for_each_entry_safe_reverse(g, tmp, &psim_cgroup_list, all)
		psim_cgroup_unhash(g);
	spin_unlock_irqrestore(&psim_cgroup_lock, flags);
}

/*
 * Files: <proc_dir>/cgroup/<path>/{cpu,io,memory[,irq]}.pressure, the
 * cgroup2 tree path for path, the root's being the system-wide files.
 * procfs sleeps and the probes cannot, so one work item makes and removes
 * them, group by group in the order the probes queued them: a parent's
 * before its children's (a cgroup's mkdir after its parent's, the start's
 * walk in pre-order), and a child's gone before its parent's (a cgroup's
 * rmdir and release after its children's). A group's files go at its
 * cgroup's rmdir, as the kernel's; the group, which counts its dying
 * cgroup's last tasks, at the release, after its files: proc_remove()
 * waits for every operation on them in progress, and a file still open
 * gets -EIO from then on without entering the module.
 *
 * The default hierarchy refuses renames, so a cgroup's path is fixed. A
 * name the files cannot take (that of a pressure file, which the kernel
 * allows where its own pressure files are not made) leaves the cgroup
 * without files, and its descendants too, counted and said once.
 */
static LIST_HEAD(psim_cgroup_files_q);		/* under psim_cgroup_lock */
/* the group the work has in hand, off the queue (psim_cgroup_lock) */
static struct psim_cgroup *psim_cgroup_files_busy;
static struct proc_dir_entry *psim_cgroup_top;	/* <proc_dir>/cgroup, ditto */
static unsigned long psim_cgroups_files_failed;	/* ditto */
/* the work, and the tree's making and removal as a whole */
static DEFINE_MUTEX(psim_cgroup_files_lock);
static struct proc_dir_entry *psim_cgroup_procdir;	/* files_lock */
static char psim_cgroup_name[NAME_MAX + 2];		/* files_lock */
/* cgroupfs=1: the files in cgroupfs too, with the tree (files_lock) */
static bool psim_cgroupfs_want;
static bool psim_cgroups_kernel_psi;
static void psim_cgroup_files_fn(struct work_struct *work);
static DECLARE_WORK(psim_cgroup_files_work, psim_cgroup_files_fn);

/*
 * @g's files are to be made or removed: the work looks at it, in its
 * turn. A group the work has in hand is queued again all the same: an
 * event on it (its rmdir) must be seen before any queued after it (a new
 * cgroup of the same name, whose files take the place of its own).
 */
static void psim_cgroup_files_queue(struct psim_cgroup *g)
{
	lockdep_assert_held(&psim_cgroup_lock);
	if (list_empty(&g->files))
		list_add_tail(&g->files, &psim_cgroup_files_q);
	queue_work(psim_cgroup_wq, &psim_cgroup_files_work);
}

/*
 * At @g's unhashing: whether the files' work has it or its files still
 * exist; then the work frees it once they are gone.
 */
static bool psim_cgroup_files_hold(struct psim_cgroup *g)
{
	lockdep_assert_held(&psim_cgroup_lock);
	if (g != psim_cgroup_files_busy && !g->dir && list_empty(&g->files))
		return false;
	psim_cgroup_files_queue(g);
	return true;
}

static bool psim_cgroup_files_want(struct psim_cgroup *g)
{
	return psim_cgroup_files_on && !g->freeing && !g->removed &&
	       !g->no_files;
}

/* @g's files forgotten: to be removed, or removed with the whole tree */
static struct proc_dir_entry *psim_cgroup_files_forget(struct psim_cgroup *g)
{
	struct proc_dir_entry *dir = g->dir;

	g->dir = NULL;
	kfree(g->dir_name);
	g->dir_name = NULL;
	return dir;
}

/*
 * With psim_cgroup_lock held: where @g's files are to be made, its name
 * in psim_cgroup_name; NULL if nowhere (its parent has none, or the name
 * cannot be had).
 */
static struct proc_dir_entry *psim_cgroup_files_where(struct psim_cgroup *g)
{
	struct proc_dir_entry *parent;
	int len;

	parent = g->parent ? g->parent->dir : psim_cgroup_top;
	if (!parent)
		return NULL;
	/* "/<name>", its path from its parent */
	len = kernfs_path_from_node(g->cgrp->kn, g->cgrp->kn->parent,
				    psim_cgroup_name, sizeof(psim_cgroup_name));
	if (len >= 2 && len < sizeof(psim_cgroup_name) &&
	    !psim_proc_cgroup_file_name(psim_cgroup_name + 1))
		return parent;
	pr_warn_once("cgroups=1: a cgroup named %s gets no files (the name of a pressure file)\n",
		     psim_cgroup_name + 1);
	g->no_files = true;
	psim_cgroups_files_failed++;
	return NULL;
}

/*
 * Who the kernel's pressure files of the cgroup of @kn would belong to:
 * whoever made the cgroup (cgroup_kn_set_ugid() at its mkdir gives its
 * directory and every file in it the maker's fsuid and fsgid). The
 * directory may have changed hands since (delegation chowns it and the
 * files the kernel lists in /sys/kernel/cgroup/delegate): cgroup.events,
 * not among them, keeps the maker's. Kernel state, for
 * a cgroup made before the load as for one made since.
 */
static void psim_cgroup_owner(struct kernfs_node *kn, kuid_t *uid,
			      kgid_t *gid)
{
	struct kernfs_node *ev = kernfs_find_and_get(kn, "cgroup.events");

	*uid = GLOBAL_ROOT_UID;
	*gid = GLOBAL_ROOT_GID;
	if (ev) {
		psim_kernfs_owner(ev, uid, gid);
		kernfs_put(ev);
	}
}

/* One group's turn: its files made, removed or moved; or it is freed. */
static void psim_cgroup_files_one(struct psim_cgroup *g)
{
	struct proc_dir_entry *dir = NULL, *parent = NULL;
	struct kernfs_node *kn = NULL;
	char *name = NULL;
	kuid_t uid;
	kgid_t gid;

	spin_lock_irq(&psim_cgroup_lock);
	if (g->dir && !psim_cgroup_files_want(g))
		dir = psim_cgroup_files_forget(g);
	if (!g->dir && psim_cgroup_files_want(g))
		parent = psim_cgroup_files_where(g);
	/* not released (files_want): its directory's node is still there */
	if (parent) {
		kn = g->cgrp->kn;
		kernfs_get(kn);
	}
	spin_unlock_irq(&psim_cgroup_lock);

	/* its triggers' pollers let go before procfs closes their files */
	if (dir)
		psim_triggers_remove(g);
	proc_remove(dir);
	if (parent) {
		psim_cgroup_owner(kn, &uid, &gid);
		kernfs_put(kn);
		psim_triggers_revive(g);
		name = kstrdup(psim_cgroup_name + 1, GFP_KERNEL);
		dir = name ? psim_proc_cgroup_dir(name, parent, g, uid, gid) :
			     NULL;
	}

	spin_lock_irq(&psim_cgroup_lock);
	psim_cgroup_files_busy = NULL;
	if (parent && dir) {
		g->dir = dir;
		g->dir_name = name;
	} else if (parent) {
		kfree(name);
		g->no_files = true;
		psim_cgroups_files_failed++;
	}
	/*
	 * Released before this turn: its files are gone, it can go. What
	 * came while it was in hand queued it again, and is for that turn.
	 */
	if (g->freeing && list_empty(&g->files)) {
		INIT_RCU_WORK(&g->free_work, psim_cgroup_free_work);
		queue_rcu_work(psim_cgroup_wq, &g->free_work);
	}
	spin_unlock_irq(&psim_cgroup_lock);
}

static void psim_cgroup_files_fn(struct work_struct *work)
{
	struct psim_cgroup *g;

	mutex_lock(&psim_cgroup_files_lock);
	for (;;) {
		spin_lock_irq(&psim_cgroup_lock);
		g = list_first_entry_or_null(&psim_cgroup_files_q,
					     struct psim_cgroup, files);
		/* the tree's removal waits: it takes what is left at once */
		if (g && !psim_cgroup_files_on && psim_cgroup_top)
			g = NULL;
		if (g) {
			list_del_init(&g->files);
			psim_cgroup_files_busy = g;
		}
		spin_unlock_irq(&psim_cgroup_lock);
		if (!g)
			break;
		psim_cgroup_files_one(g);
		cond_resched();
	}
	mutex_unlock(&psim_cgroup_files_lock);
}

/* The tree's top and the root's files, then every group's (files_lock). */
static void psim_cgroup_files_up(void)
{
	struct proc_dir_entry *top;
	struct psim_cgroup *g;

	lockdep_assert_held(&psim_cgroup_files_lock);
	if (!psim_cgroup_procdir || !psim_cgroup_wq || psim_cgroup_top)
		return;
	top = psim_proc_cgroup_dir("cgroup", psim_cgroup_procdir, NULL,
				   GLOBAL_ROOT_UID, GLOBAL_ROOT_GID);
	if (!top) {
		pr_warn("cgroups=1: no memory for <proc_dir>/cgroup: no per-cgroup files\n");
		return;
	}
	psim_triggers_revive_groups();
	spin_lock_irq(&psim_cgroup_lock);
	psim_cgroup_top = top;
	psim_cgroup_files_on = true;
	psim_cgroups_files_failed = 0;
	list_for_each_entry(g, &psim_cgroup_list, all) {
		g->no_files = false;
		psim_cgroup_files_queue(g);
	}
	spin_unlock_irq(&psim_cgroup_lock);
	/* the groups are all there: the files may find theirs */
	if (psim_cgroupfs_want &&
	    psim_cgroupfs_up(psim_cgroups_kernel_psi, psim_proc_has_irq()))
		psim_cgroupfs_want = false;
}

/*
 * The whole tree at once. The groups still queued are freed by the work
 * after it, if they are to be.
 */
static void psim_cgroup_files_down(void)
{
	struct proc_dir_entry *top;
	struct psim_cgroup *g;

	if (!psim_cgroup_wq)
		return;
	spin_lock_irq(&psim_cgroup_lock);
	psim_cgroup_files_on = false;
	spin_unlock_irq(&psim_cgroup_lock);
	mutex_lock(&psim_cgroup_files_lock);
	/* first: their triggers are in the groups' sets, still live */
	psim_cgroupfs_down();
	spin_lock_irq(&psim_cgroup_lock);
	top = psim_cgroup_top;
	psim_cgroup_top = NULL;
	list_for_each_entry(g, &psim_cgroup_list, all)
		psim_cgroup_files_forget(g);
	list_for_each_entry(g, &psim_cgroup_files_q, files)
		psim_cgroup_files_forget(g);
	if (!list_empty(&psim_cgroup_files_q))
		queue_work(psim_cgroup_wq, &psim_cgroup_files_work);
	spin_unlock_irq(&psim_cgroup_lock);
	/* every group's triggers, before procfs closes their files */
	psim_triggers_remove_groups();
	proc_remove(top);
	mutex_unlock(&psim_cgroup_files_lock);
}

/* The module's proc directory is there (psim_proc_create()) */
void psim_cgroups_files_start(struct proc_dir_entry *procdir)
{
	mutex_lock(&psim_cgroup_files_lock);
	psim_cgroup_procdir = procdir;
	psim_cgroup_files_up();
	mutex_unlock(&psim_cgroup_files_lock);
}

/* ... and is about to go (psim_proc_remove()) */
void psim_cgroups_files_stop(void)
{
	psim_cgroup_files_down();
	mutex_lock(&psim_cgroup_files_lock);
	psim_cgroup_procdir = NULL;
	mutex_unlock(&psim_cgroup_files_lock);
}

/*
 * cgroupfs=: whether the files are wanted in cgroupfs too; at once if the
 * tree is there. An error if they were wanted and could not be made.
 */
int psim_cgroups_cgroupfs(bool on)
{
	int ret = 0;

	mutex_lock(&psim_cgroup_files_lock);
	psim_cgroupfs_want = on;
	if (!on) {
		psim_cgroupfs_down();
	} else if (psim_cgroup_top) {
		ret = psim_cgroupfs_up(psim_cgroups_kernel_psi,
				       psim_proc_has_irq());
		if (ret)
			psim_cgroupfs_want = false;
	}
	mutex_unlock(&psim_cgroup_files_lock);
	return ret;
}

bool psim_cgroups_cgroupfs_wanted(void)
{
	return READ_ONCE(psim_cgroupfs_want);
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
	psim_group_cache = kmem_cache_create("psi_mod_group",
					     struct_size((struct psim_cgroup *)NULL,
							 cpus, nr_cpu_ids),
					     0, SLAB_HWCACHE_ALIGN, NULL);
	psim_group_cpu_cache = kmem_cache_create("psi_mod_group_cpu",
						 sizeof(struct psim_cgroup_cpu),
						 0, SLAB_HWCACHE_ALIGN, NULL);
	if (!psim_group_cache || !psim_group_cpu_cache) {
		pr_err("cgroups=1: out of memory for the groups' slab caches\n");
		ret = -ENOMEM;
		goto err;
	}
	psim_cgroups_slot = psim_have_cgroup_slot() && !kernel_psi;
	mutex_lock(&psim_cgroup_files_lock);
	psim_cgroups_kernel_psi = kernel_psi;
	mutex_unlock(&psim_cgroup_files_lock);
	psim_cgroups_adopted = false;
	psim_cgroups_on = true;
	psim_cgroups_made = 0;
	psim_cgroups_freed = 0;
	psim_cgroups_failed = 0;
	psim_probes_lookup(psim_cgroup_probes, ARRAY_SIZE(psim_cgroup_probes));
	if (psim_attach_optional(psim_cgroup_probes,
				 ARRAY_SIZE(psim_cgroup_probes)) !=
	    ARRAY_SIZE(psim_cgroup_probes)) {
		pr_err("cgroups=1: the cgroup_mkdir, _release and _rmdir tracepoints are needed\n");
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
	mutex_lock(&psim_cgroup_files_lock);
	psim_cgroup_files_up();
	mutex_unlock(&psim_cgroup_files_lock);
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
	psim_cgroup_files_down();
	psim_cgroup_free_all();
	static_branch_disable(&psim_cgroup_slot_key);
	psim_detach_optional(psim_cgroup_probes,
			     ARRAY_SIZE(psim_cgroup_probes));
	tracepoint_synchronize_unregister();
	if (psim_cgroups_failed)
		pr_warn("cgroups=1: %lu cgroup(s) went without a group (no memory at their mkdir)\n",
			psim_cgroups_failed);
	if (psim_cgroups_files_failed)
		pr_warn("cgroups=1: %lu cgroup(s) went without files\n",
			psim_cgroups_files_failed);
	/* the groups the files' work had, then the frees after a grace period */
	flush_work(&psim_cgroup_files_work);
	rcu_barrier();
	destroy_workqueue(psim_cgroup_wq);
	psim_cgroup_wq = NULL;
	kmem_cache_destroy(psim_group_cpu_cache);
	kmem_cache_destroy(psim_group_cache);
	psim_group_cpu_cache = NULL;
	psim_group_cache = NULL;
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
	d->files_failed = psim_cgroups_files_failed;
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
