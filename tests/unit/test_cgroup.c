// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup groups of src/psi_cgroup.c, compiled in user space against
 * the kernel API shim (shim/linux/cgroup.h builds the hierarchy): groups
 * made for the cgroups there at the start and at each mkdir (with their
 * ancestors when a mkdir runs ahead of the start's walk), none below a
 * cgroup left without one, none for another hierarchy's cgroups, freed
 * after a grace period from their release and at the stop; the start's
 * walk racing with a mkdir and with releases on another CPU, played from
 * the walk's and the lock's hooks; a start without memory undone. Checked
 * through the module's own debug view (psim_cgroups_show(),
 * psim_cgroups_debug()) and the shim's count of live allocations. Then
 * the accounting with the real probes and aggregation (kmod.h): tasks
 * competing across sibling cgroups, cpu some and full per group against
 * hand-worked times, a move between cgroups through the probes' own
 * kretprobe handlers, and the stop with tasks still counted.
 */
#include "kmod.h"
#include "linux/cgroup.h"

typedef void (*cg_probe_t)(void *data, struct cgroup *cgrp, const char *path);

static struct cgroup cg[16];
static long live0;

/* a fresh hierarchy: the default root and nothing below */
static void cg_reset(void)
{
	int i;

	cgrp_dfl_root.cgrp.self.first_child = NULL;
	shim_css_walk_hook = NULL;
	shim_spin_hook = NULL;
	shim_kmalloc_fail = 0;
	shim_kmem_cache_fail = 0;
	for (i = 0; i < shim_ntracepoints; i++)
		shim_tracepoints[i].func = NULL;
	live0 = shim_kmalloc_live;
}

static struct cgroup *root(void)
{
	return &cgrp_dfl_root.cgrp;
}

/* a probe, called as the tracepoint would */
static void cg_fire(const char *tp, struct cgroup *c)
{
	struct tracepoint *t = shim_tp(tp);

	TU_CHECK(t && t->func, "no probe on %s", tp);
	if (t && t->func)
		((cg_probe_t)t->func)(t->data, c, "/path");
}

/* cgroup @i (id 10 + @i) made under @parent by mkdir */
static struct cgroup *cg_mkdir(int i, struct cgroup *parent)
{
	shim_cgroup_add(&cg[i], parent, 10 + i);
	cg_fire("cgroup_mkdir", &cg[i]);
	return &cg[i];
}

static void cg_release(int i)
{
	shim_cgroup_unlink(&cg[i]);
	cg_fire("cgroup_release", &cg[i]);
}

/* the groups as the debug view lists them, sorted by the test's order */
static const char *groups(void)
{
	static char buf[2048];
	struct seq_file m = { .buf = buf, .size = sizeof(buf) };

	buf[0] = '\0';
	psim_cgroups_show(&m);
	return buf;
}

static struct psim_cgroups_debug dbg(void)
{
	struct psim_cgroups_debug d;

	psim_cgroups_debug(&d);
	return d;
}

/* the debug view's counts: groups now, made, freed, cgroups without one */
#define CG_COUNTS(nr_, made_, freed_, failed_)				\
	do {								\
		struct psim_cgroups_debug d_ = dbg();			\
		TU_EQ(d_.nr, nr_);					\
		TU_EQ(d_.made, made_);					\
		TU_EQ(d_.freed, freed_);				\
		TU_EQ(d_.failed, failed_);				\
	} while (0)

/* the stop: every group freed */
static void stop_clean(void)
{
	psim_cgroups_stop();
	TU_EQ(shim_kmalloc_live - live0, 0);
	TU_EQ(shim_kmem_caches, 0);
}

/*
 * A tree before the start: 10 and 13 under the root, 11 under 10, 12
 * under 11, 14 under 13. Each is adopted, parented, in pre-order.
 */
static void build_tree(void)
{
	shim_cgroup_add(&cg[0], root(), 10);
	shim_cgroup_add(&cg[1], &cg[0], 11);
	shim_cgroup_add(&cg[2], &cg[1], 12);
	shim_cgroup_add(&cg[3], root(), 13);
	shim_cgroup_add(&cg[4], &cg[3], 14);
}

#define TREE	"10 1 1 0\n11 10 2 10\n12 11 3 11\n13 1 1 0\n14 13 2 13\n"

static void cgroup_adopt(void)
{
	cg_reset();
	build_tree();
	TU_EQS(psim_cgroups_start(true, false), 0);
	TU_STREQ(groups(), TREE);
	TU_EQ(dbg().on, 1);
	CG_COUNTS(5, 5, 0, 0);
	TU_CHECK(shim_tp("cgroup_mkdir")->func && shim_tp("cgroup_release")->func,
		 "probes not attached");
	/* each group and its part on each of the NR_CPUS CPUs */
	TU_EQ(shim_kmalloc_live - live0, 5 * (1 + NR_CPUS));
	stop_clean();
	TU_CHECK(!shim_tp("cgroup_mkdir")->func && !shim_tp("cgroup_release")->func,
		 "probes left attached");
	TU_EQ(dbg().on, 0);
}

/* cgroups=0: nothing attached, nothing made */
static void cgroup_off(void)
{
	cg_reset();
	build_tree();
	TU_EQS(psim_cgroups_start(false, false), 0);
	TU_STREQ(groups(), "");
	TU_CHECK(!shim_tp("cgroup_mkdir")->func, "mkdir probe attached");
	stop_clean();
}

static void cgroup_mkdir_release(void)
{
	static struct cgroup_root v1;

	cg_reset();
	build_tree();
	TU_EQS(psim_cgroups_start(true, false), 0);
	cg_mkdir(5, &cg[2]);
	TU_STREQ(groups(), TREE "15 12 4 12\n");
	/* a cgroup of another hierarchy (cgroup v1) gets none */
	memset(&v1, 0, sizeof(v1));
	v1.cgrp.self.cgroup = &v1.cgrp;
	v1.cgrp.root = &v1;
	v1.cgrp.id = 1;
	cg_mkdir(6, &v1.cgrp);
	cg_release(6);
	/* a release: its group goes, the others stay */
	cg_release(5);
	cg_release(4);
	TU_STREQ(groups(), "10 1 1 0\n11 10 2 10\n12 11 3 11\n13 1 1 0\n");
	CG_COUNTS(4, 6, 2, 0);
	/* freed after a grace period */
	TU_EQ(shim_kmalloc_live - live0, 6 * (1 + NR_CPUS));
	TU_EQ(shim_rcu_works_run(), 2);
	TU_EQ(shim_kmalloc_live - live0, 4 * (1 + NR_CPUS));
	stop_clean();
}

/*
 * No memory at a mkdir: that cgroup has no group (counted), nor do the
 * cgroups made below it later: their tasks count in the nearest group
 * above (psim_cgroup_of_task()), and a group made for it later would
 * take over tasks counted there.
 */
static void cgroup_mkdir_nomem(void)
{
	cg_reset();
	build_tree();
	TU_EQS(psim_cgroups_start(true, false), 0);
	shim_kmalloc_fail = 1;
	cg_mkdir(5, &cg[1]);
	TU_STREQ(groups(), TREE);
	TU_EQ(dbg().failed, 1);
	cg_mkdir(6, &cg[5]);
	cg_mkdir(7, &cg[6]);
	TU_STREQ(groups(), TREE);
	CG_COUNTS(5, 5, 0, 3);
	TU_CHECK(psim_cgroup_lookup(&cg[7]) == NULL &&
		 psim_cgroup_lookup(&cg[1]) != NULL, "lookups");
	stop_clean();
}

/* the files' directory of cgroup @i under @parent's (NULL if none) */
static struct proc_dir_entry *cg_dir(struct proc_dir_entry *parent, int i)
{
	char name[16];

	snprintf(name, sizeof(name), "cg%d", 10 + i);
	return parent ? shim_proc_find(parent, name) : NULL;
}

static void cg_rmdir(int i)
{
	cg[i].self.flags &= ~CSS_ONLINE;
	cg_fire("cgroup_rmdir", &cg[i]);
}

/*
 * As the work makes cgroup 9's directory (cg19), another CPU removes that
 * cgroup and makes one of the same name (cgroup 10) at once.
 */
static void remake_hook(const char *name)
{
	if (strcmp(name, "cg19"))
		return;
	shim_proc_hook = NULL;
	cg_rmdir(9);
	shim_cgroup_add(&cg[10], &cg[2], 20);
	cg[10].shim_kn.shim_name = "cg19";
	cg_fire("cgroup_mkdir", &cg[10]);
}

/*
 * The files (psi_cgroup.c, "Files"): made by the work for the cgroups
 * there once the proc directory is, parent before child, each group's
 * directory holding its group; at a mkdir; none for a cgroup named after
 * a pressure file, nor below it; removed at rmdir, the group staying till
 * its release; a release before the work ran frees the group only after
 * its files; no memory for a directory counted; a cgroup removed while its
 * directory is being made and one of its name made at once; the whole tree gone when
 * the proc directory goes, and at cgroups=0 with a release still queued.
 */
static void cgroup_files(void)
{
	/* the head of the kernel's struct kernfs_iattrs, as kernfs has it */
	static struct { kuid_t uid; kgid_t gid; } maker = { { 65534 }, { 65534 } },
		chowned = { { 65534 }, { 65534 } }, user = { { 1000 }, { 1000 } };
	struct proc_dir_entry *top, *t, *d10, *d11, *d12, *d13;
	int live = shim_proc_live;

	cg_reset();
	build_tree();
	/* made by uid 65534 before the start, its directory chowned since */
	cg[3].shim_events.iattr = &maker;
	cg[4].shim_kn.iattr = &chowned;
	TU_EQS(psim_cgroups_start(true, false), 0);
	top = psim_proc_cgroup_dir("pressure", NULL, NULL, GLOBAL_ROOT_UID,
				   GLOBAL_ROOT_GID);
	psim_cgroups_files_start(top);
	t = shim_proc_find(top, "cgroup");
	TU_CHECK(t != NULL, "no cgroup directory");
	TU_EQ(shim_plain_works_run(), 1);
	d10 = cg_dir(t, 0);
	d11 = cg_dir(d10, 1);
	d12 = cg_dir(d11, 2);
	d13 = cg_dir(t, 3);
	TU_CHECK(d10 && d11 && d12 && d13 && cg_dir(d13, 4), "the tree");
	TU_CHECK(d12 && shim_proc_group(d12) == psim_cgroup_lookup(&cg[2]),
		 "a directory's group");
	TU_EQ(shim_proc_live - live, 2 + 5);
	/* owners: the maker's, from cgroup.events, not the directory's */
	TU_EQ(shim_proc_uid(d13), 65534);
	TU_EQ(shim_proc_uid(cg_dir(d13, 4)), 0);
	TU_EQ(shim_proc_uid(d12), 0);
	/* a mkdir by uid 1000 */
	shim_cgroup_add(&cg[5], &cg[2], 15);
	cg[5].shim_events.iattr = &user;
	cg_fire("cgroup_mkdir", &cg[5]);
	TU_EQ(shim_plain_works_run(), 1);
	TU_CHECK(cg_dir(d12, 5) != NULL, "no directory for a new cgroup");
	TU_EQ(shim_proc_uid(cg_dir(d12, 5)), 1000);
	TU_EQ(shim_kernfs_refs, 0);
	/* a pressure file's name: no files, nor below it */
	shim_cgroup_add(&cg[6], &cg[0], 16);
	cg[6].shim_kn.shim_name = "memory.pressure";
	cg_fire("cgroup_mkdir", &cg[6]);
	cg_mkdir(7, &cg[6]);
	TU_EQ(shim_plain_works_run(), 1);
	TU_CHECK(!shim_proc_find(d10, "memory.pressure") && !cg_dir(d10, 7),
		 "files for a cgroup named memory.pressure");
	TU_EQ(dbg().files_failed, 1);
	TU_EQ(dbg().nr, 8);
	/* rmdir: the files go, the group stays till the release */
	cg_rmdir(5);
	TU_EQ(shim_plain_works_run(), 1);
	TU_CHECK(!cg_dir(d12, 5), "files after rmdir");
	TU_CHECK(psim_cgroup_lookup(&cg[5]) != NULL, "group gone at rmdir");
	cg_release(5);
	TU_EQ(shim_rcu_works_run(), 1);
	/* rmdir and release before the work: freed after its files */
	cg_rmdir(4);
	cg_release(4);
	TU_EQ(shim_rcu_works_run(), 0);
	TU_EQ(shim_plain_works_run(), 1);
	TU_CHECK(!cg_dir(d13, 4), "files of a released cgroup");
	TU_EQ(shim_rcu_works_run(), 1);
	/* no memory for a directory */
	shim_proc_fail = 1;
	cg_mkdir(8, root());
	TU_EQ(shim_plain_works_run(), 1);
	TU_CHECK(!cg_dir(t, 8), "a directory that failed");
	TU_EQ(dbg().files_failed, 2);
	TU_EQ(shim_proc_live - live, 2 + 4);
	/*
	 * A cgroup removed while its directory is being made, and another
	 * of its name made: the removal is seen first, the name then the
	 * new cgroup's.
	 */
	cg_mkdir(9, &cg[2]);
	shim_proc_hook = remake_hook;
	TU_EQ(shim_plain_works_run(), 1);
	TU_CHECK(shim_proc_hook == NULL, "the hook did not fire");
	TU_CHECK(cg_dir(d12, 9) &&
		 shim_proc_group(cg_dir(d12, 9)) == psim_cgroup_lookup(&cg[10]),
		 "cg19 is not the new cgroup's");
	cg_rmdir(10);
	cg_release(10);
	cg_release(9);
	TU_EQ(shim_plain_works_run(), 1);
	TU_EQ(shim_rcu_works_run(), 2);
	TU_EQ(shim_proc_live - live, 2 + 4);
	/* the proc directory goes: the whole tree with it, the groups stay */
	psim_cgroups_files_stop();
	TU_EQ(shim_proc_live - live, 1);
	TU_EQ(dbg().nr, 7);
	/* back, then cgroups=0 with a release queued for the work */
	psim_cgroups_files_start(top);
	TU_EQ(shim_plain_works_run(), 1);
	t = shim_proc_find(top, "cgroup");
	TU_CHECK(t && cg_dir(t, 3), "the tree again");
	cg_rmdir(3);
	psim_cgroups_stop();
	TU_EQ(shim_proc_live - live, 1);
	TU_EQ(shim_kmalloc_live - live0, 0);
	psim_cgroups_files_stop();
	proc_remove(top);
	TU_EQ(shim_proc_live - live, 0);
}

/*
 * cgroupfs=: the cgroupfs files come with the tree when wanted, go before
 * it (and before the groups), follow a runtime switch, and a refusal
 * leaves them unwanted with the tree standing.
 */
static void cgroup_cgroupfs(void)
{
	struct proc_dir_entry *top;
	int live = shim_proc_live;

	cg_reset();
	build_tree();
	TU_EQS(psim_cgroups_cgroupfs(true), 0);
	TU_EQ(shim_cgroupfs_live, 0);
	TU_EQS(psim_cgroups_start(true, false), 0);
	top = psim_proc_cgroup_dir("pressure", NULL, NULL, GLOBAL_ROOT_UID,
				   GLOBAL_ROOT_GID);
	psim_cgroups_files_start(top);
	TU_EQ(shim_cgroupfs_live, 1);
	TU_EQ(psim_cgroups_cgroupfs_wanted(), 1);
	/* off and on at runtime, the tree staying */
	TU_EQS(psim_cgroups_cgroupfs(false), 0);
	TU_EQ(shim_cgroupfs_live, 0);
	TU_CHECK(shim_proc_find(top, "cgroup") != NULL, "the tree went too");
	TU_EQS(psim_cgroups_cgroupfs(true), 0);
	TU_EQ(shim_cgroupfs_live, 1);
	/* the tree goes: they go first; it comes back: they too */
	psim_cgroups_files_stop();
	TU_EQ(shim_cgroupfs_live, 0);
	psim_cgroups_files_start(top);
	TU_EQ(shim_cgroupfs_live, 1);
	/* cgroups=0 */
	psim_cgroups_stop();
	TU_EQ(shim_cgroupfs_live, 0);
	/* refused: unwanted, an error, the tree standing */
	shim_cgroupfs_fail = 1;
	TU_EQ(psim_cgroups_cgroupfs_wanted(), 1);
	TU_EQS(psim_cgroups_start(true, false), 0);
	TU_EQ(shim_cgroupfs_live, 0);
	TU_EQ(psim_cgroups_cgroupfs_wanted(), 0);
	TU_CHECK(shim_proc_find(top, "cgroup") != NULL, "no tree after a refusal");
	TU_EQS(psim_cgroups_cgroupfs(true), -EOPNOTSUPP);
	TU_EQ(psim_cgroups_cgroupfs_wanted(), 0);
	shim_cgroupfs_fail = 0;
	psim_cgroups_stop();
	psim_cgroups_files_stop();
	proc_remove(top);
	TU_EQ(shim_proc_live - live, 0);
	TU_EQ(shim_kmalloc_live - live0, 0);
}

/* No memory at the start's walk: the start fails and leaves nothing. */
static void cgroup_start_nomem(void)
{
	cg_reset();
	build_tree();
	shim_kmalloc_fail = 1;
	TU_EQS(psim_cgroups_start(true, false), -ENOMEM);
	TU_EQ(shim_kmalloc_live - live0, 0);
	TU_EQ(shim_kmem_caches, 0);
	TU_CHECK(!shim_tp("cgroup_mkdir")->func && !shim_tp("cgroup_release")->func,
		 "probes left attached after a failed start");
	TU_EQ(dbg().on, 0);
	TU_STREQ(groups(), "");
}

/*
 * Either slab cache not made: the start fails before it attaches or
 * walks anything, and the cache it made goes.
 */
static void cgroup_start_nocache(void)
{
	int n;

	for (n = 1; n <= 2; n++) {
		cg_reset();
		build_tree();
		shim_kmem_cache_fail = n;
		TU_EQS(psim_cgroups_start(true, false), -ENOMEM);
		TU_EQ(shim_kmem_cache_fail, 0);
		TU_EQ(shim_kmem_caches, 0);
		TU_EQ(shim_kmalloc_live - live0, 0);
		TU_CHECK(!shim_tp("cgroup_mkdir")->func,
			 "probes attached after a failed start");
		TU_EQ(dbg().on, 0);
		TU_STREQ(groups(), "");
	}
	/* and the next start makes both */
	cg_reset();
	build_tree();
	TU_EQS(psim_cgroups_start(true, false), 0);
	TU_EQ(shim_kmem_caches, 2);
	TU_STREQ(groups(), TREE);
	stop_clean();
}

/*
 * The walk races with other CPUs: as it reaches 11, a mkdir of 16 below
 * 12 (neither walked yet) makes the groups of 11, 12 and 16, which the
 * walk then finds made; as it reaches 13, 14 is released before the walk
 * gets to it (never made); and 15, made before the start, is released
 * between the walk's test of its flag and the walk's taking of the lock,
 * so the walk makes its group and must take it out again itself.
 */
static struct cgroup_subsys_state *race_next;
static bool race_done_mkdir, race_done_release, race_done_lock;

static void race_walk_hook(struct cgroup_subsys_state *next)
{
	race_next = next;
	if (next == &cg[1].self && !race_done_mkdir) {
		race_done_mkdir = true;
		cg_mkdir(6, &cg[2]);
	}
	if (next == &cg[3].self && !race_done_release) {
		race_done_release = true;
		cg_release(4);
	}
}

static void race_spin_hook(spinlock_t *l)
{
	if (race_next == &cg[5].self && !race_done_lock) {
		race_done_lock = true;
		/* the release probe takes this lock itself, before the walk */
		cg_release(5);
	}
	(void)l;
}

static void cgroup_walk_races(void)
{
	cg_reset();
	build_tree();
	shim_cgroup_add(&cg[5], root(), 15);
	race_next = NULL;
	race_done_mkdir = race_done_release = race_done_lock = false;
	shim_css_walk_hook = race_walk_hook;
	shim_spin_hook = race_spin_hook;
	TU_EQS(psim_cgroups_start(true, false), 0);
	shim_css_walk_hook = NULL;
	shim_spin_hook = NULL;
	TU_CHECK(race_done_mkdir && race_done_release && race_done_lock,
		 "a race not played: %d %d %d", race_done_mkdir,
		 race_done_release, race_done_lock);
	/* made by the mkdir: 11's walk order puts 12 and 16 first */
	TU_STREQ(groups(),
		 "10 1 1 0\n11 10 2 10\n12 11 3 11\n16 12 4 12\n13 1 1 0\n");
	/* 15 made by the walk and taken out by it */
	CG_COUNTS(5, 6, 1, 0);
	stop_clean();
}

/* ---- accounting ---- */

static int start_groups(void)
{
	return psim_cgroups_start(true, false);
}

static struct css_set cs_root, cs[16];
static struct task_struct acct_tk[4];

/* a task of pid @pid whose default-hierarchy cgroup is cg[@i] (-1: root) */
static struct task_struct *acct_task(int n, pid_t pid, int i)
{
	struct task_struct *t = &acct_tk[n];

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->cgroups = i < 0 ? &cs_root : &cs[i];
	return t;
}

/* the module started with the groups on, cgroups 10-14 under the root */
static void acct_start(void)
{
	int i;

	cg_reset();
	build_tree();
	cs_root.dfl_cgrp = root();
	for (i = 0; i < 5; i++)
		cs[i].dfl_cgrp = &cg[i];
	shim_now = 1000 * 1000000000ULL;
	kmod_cgroups_start = start_groups;
	kmod_cgroups_stop = psim_cgroups_stop;
	kmod_start();
	kmod_kworker.cgroups = &cs_root;
}

/* the stop, with tasks still counted: nothing left allocated */
static void acct_stop(void)
{
	kmod_stop();
	kmod_cgroups_start = NULL;
	kmod_cgroups_stop = NULL;
	TU_EQ(shim_kmalloc_live - live0, 0);
}

/* group totals in ns of cg[@i] for @res: [0] some, [1] full */
static u64 group_total(int i, enum psim_res res, int full)
{
	struct psim_cgroup *g = psim_cgroup_lookup(&cg[i]);
	unsigned long avg[2][3];
	u64 total[2];

	TU_CHECK(g, "no group for cgroup %d", i);
	if (!g)
		return ~0ULL;
	psim_cgroup_read(g, res, avg, total);
	return total[full];
}

/* @p moves to cg[@to] (-1: the root), through the probes' kretprobe */
static void acct_move(struct task_struct *p, int to)
{
	struct kretprobe *rp = shim_kretprobe("css_set_move_task");
	struct kretprobe_instance ri;
	struct pt_regs regs;
	struct css_set *from = p->cgroups;
	struct ctx c;

	TU_CHECK(rp && rp->entry_handler && rp->handler,
		 "no kretprobe on css_set_move_task");
	if (!rp)
		return;
	memset(&ri, 0, sizeof(ri));
	memset(&regs, 0, sizeof(regs));
	regs.args[0] = (unsigned long)p;
	regs.args[1] = (unsigned long)from;
	regs.args[2] = (unsigned long)(to < 0 ? &cs_root : &cs[to]);
	/* under css_set_lock, interrupts off, on CPU 1 */
	c = ctx_enter(1, true);
	TU_EQS(rp->entry_handler(&ri, &regs), 0);
	p->cgroups = (struct css_set *)regs.args[2];
	rp->handler(&ri, &regs);
	ctx_leave(c);
}

/*
 * CPU 0 runs a1 and a2 of cgroup 11 (below 10) and b of cgroup 13, each
 * runnable all along. 1 s with b on the CPU: 11 and 10 have both their
 * tasks waiting (cpu some and full), 13 none; 1 s with a1 on it: 11 some
 * (a2 waits), not full, 13 some and full (b waits); then a2 moves to 13
 * and 1 s more: 11 has a1 alone and running, 13 both of its waiting.
 */
static void cgroup_accounting(void)
{
	const u64 S = 1000000000ULL;
	struct task_struct *a1, *a2, *b;

	acct_start();
	TU_CHECK(psim_cgroups_counting(), "groups not counting");
	a1 = acct_task(0, 101, 1);
	a2 = acct_task(1, 102, 1);
	b = acct_task(2, 103, 3);
	kmod_wake(0, a1);
	kmod_wake(0, a2);
	kmod_run(0, b);
	shim_now += S;
	TU_EQ(group_total(1, PSIM_CPU, 0), S);
	TU_EQ(group_total(1, PSIM_CPU, 1), S);
	TU_EQ(group_total(0, PSIM_CPU, 0), S);
	TU_EQ(group_total(0, PSIM_CPU, 1), S);
	TU_EQ(group_total(3, PSIM_CPU, 0), 0);
	TU_EQ(group_total(2, PSIM_CPU, 0), 0);
	/* b preempted by a1 */
	kmod_switch(0, TASK_RUNNING, false, a1);
	shim_now += S;
	TU_EQ(group_total(1, PSIM_CPU, 0), 2 * S);
	TU_EQ(group_total(1, PSIM_CPU, 1), S);
	TU_EQ(group_total(3, PSIM_CPU, 0), S);
	TU_EQ(group_total(3, PSIM_CPU, 1), S);
	acct_move(a2, 3);
	shim_now += S;
	TU_EQ(group_total(1, PSIM_CPU, 0), 2 * S);
	TU_EQ(group_total(1, PSIM_CPU, 1), S);
	TU_EQ(group_total(0, PSIM_CPU, 0), 2 * S);
	TU_EQ(group_total(3, PSIM_CPU, 0), 2 * S);
	TU_EQ(group_total(3, PSIM_CPU, 1), 2 * S);
	/* nothing else stalled in any group */
	TU_EQ(group_total(1, PSIM_IO, 0), 0);
	TU_EQ(group_total(3, PSIM_MEM, 0), 0);
	/* the move back, with a2 the one on the CPU */
	kmod_switch(0, TASK_RUNNING, false, a2);
	acct_move(a2, 1);
	shim_now += S;
	/* 11: a1 waits, a2 runs; 13: b waits alone: some and full */
	TU_EQ(group_total(1, PSIM_CPU, 0), 3 * S);
	TU_EQ(group_total(1, PSIM_CPU, 1), S);
	TU_EQ(group_total(3, PSIM_CPU, 0), 3 * S);
	TU_EQ(group_total(3, PSIM_CPU, 1), 3 * S);
	/* each group's averaging queued by the probes, the system's too */
	TU_CHECK(psim_cgroup_lookup(&cg[3])->avgs_work.pending,
		 "the averaging of group 13 not queued");
	TU_CHECK(kmod_work(1), "the system's averaging work not queued");
	TU_EQ(group_total(3, PSIM_CPU, 0), 3 * S);
	/* the stop with every task still counted: nothing left behind */
	acct_stop();
	TU_EQ(shim_wq_live, 0);
}

static struct task_struct *race_b;

/* another CPU moves the task on CPU 0 to cgroup 13, mid-switch */
static void move_mid_switch(void)
{
	acct_move(race_b, 3);
}

/*
 * CPU 0 runs b, a waits, both of cgroup 11: the switch to a is the
 * settled one, told without the lock. Then, with b back on the CPU,
 * another CPU moves b to cgroup 13 between that switch's test and its
 * write of ->curr: the move takes the CPU's oncpu from 11 to 13 (b is
 * current), and the switch must not leave it there. 11 then has a on
 * the CPU and no one waiting, 13 has b waiting: some and full.
 */
static void cgroup_move_mid_switch(void)
{
	const u64 S = 1000000000ULL;
	struct task_struct *a, *b;
	u64 s10, s11, f13;

	acct_start();
	a = acct_task(0, 101, 1);
	b = acct_task(1, 102, 1);
	kmod_wake(0, a);
	kmod_run(0, b);
	/* b preempted by a and back: settled switches, no move */
	shim_cmpxchg_hook = NULL;
	kmod_switch(0, TASK_RUNNING, false, a);
	kmod_switch(0, TASK_RUNNING, false, b);
	shim_now += S;
	s10 = group_total(0, PSIM_CPU, 0);
	s11 = group_total(1, PSIM_CPU, 0);
	f13 = group_total(3, PSIM_CPU, 1);
	TU_EQ(s11, S);
	TU_EQ(group_total(1, PSIM_CPU, 1), 0);
	race_b = b;
	shim_cmpxchg_hook = move_mid_switch;
	kmod_switch(0, TASK_RUNNING, false, a);
	TU_CHECK(!shim_cmpxchg_hook, "the switch took no compare-and-exchange");
	shim_cmpxchg_hook = NULL;
	TU_CHECK(b->cgroups == &cs[3], "b not moved");
	shim_now += S;
	TU_EQ(group_total(1, PSIM_CPU, 0) - s11, 0);
	TU_EQ(group_total(0, PSIM_CPU, 0) - s10, 0);
	TU_EQ(group_total(3, PSIM_CPU, 0), S);
	TU_EQ(group_total(3, PSIM_CPU, 1) - f13, S);
	acct_stop();
}

static int sleep_locks;

/* at the switch's first lock, another CPU moves the task on CPU 0 */
static void move_at_lock(raw_spinlock_t *l, const char *func)
{
	if (!sleep_locks++)
		acct_move(race_b, 3);
	(void)l;
	(void)func;
}

/*
 * The same move in the plain sleep's window: b, on CPU 0 in cgroup 11
 * with a waiting there, blocks; the move to 13 comes as the switch takes
 * the lock, after its test. The sleep must go the locked way (a second
 * lock): 11 then has a on the CPU, nothing waiting, and 13 nothing.
 */
static void cgroup_move_mid_sleep(void)
{
	const u64 S = 1000000000ULL;
	struct task_struct *a, *b;
	u64 s11, s13;

	acct_start();
	a = acct_task(0, 101, 1);
	b = acct_task(1, 102, 1);
	kmod_wake(0, a);
	kmod_run(0, b);
	shim_now += S;
	s11 = group_total(1, PSIM_CPU, 0);
	s13 = group_total(3, PSIM_CPU, 0);
	race_b = b;
	sleep_locks = 0;
	shim_lock_hook = move_at_lock;
	kmod_sleep(0, false, a);
	shim_lock_hook = NULL;
#ifdef SHIM_CONFIG_PSI
	/* told before the lock, then the locked way after the move */
	TU_EQ(sleep_locks, 2);
#else
	/* with the pid table the plain sleep is told under the lock */
	TU_EQ(sleep_locks, 1);
#endif
	TU_CHECK(b->cgroups == &cs[3], "b not moved");
	shim_now += S;
	TU_EQ(group_total(1, PSIM_CPU, 0) - s11, 0);
	TU_EQ(group_total(1, PSIM_CPU, 1), 0);
	TU_EQ(group_total(3, PSIM_CPU, 0) - s13, 0);
	acct_stop();
}

/* Two tasks of the root cgroup on CPU 0: *@r1 runs, *@r2 waits. */
static void root_pair(struct task_struct **r1, struct task_struct **r2)
{
	acct_start();
	*r1 = acct_task(0, 101, -1);
	*r2 = acct_task(1, 102, -1);
	kmod_wake(0, *r2);
	kmod_run(0, *r1);
}

/*
 * The plain sleep of a root-cgroup task with a root-cgroup task waiting:
 * r1 on CPU 0 blocks, and as the switch takes the lock, after its test,
 * another CPU moves r2, the next, into cgroup 13. The sleep must go the
 * locked way (a second lock), so that r2 counts as on the CPU in 13:
 * 13 then has nothing waiting.
 */
static void cgroup_root_sleep_move(void)
{
	const u64 S = 1000000000ULL;
	struct task_struct *r1, *r2;

	root_pair(&r1, &r2);
	race_b = r2;
	sleep_locks = 0;
	shim_lock_hook = move_at_lock;
	kmod_sleep(0, false, r2);
	shim_lock_hook = NULL;
	TU_CHECK(r2->cgroups == &cs[3], "r2 not moved");
	shim_now += S;
	TU_EQ(group_total(3, PSIM_CPU, 0), 0);
	TU_EQ(group_total(3, PSIM_CPU, 1), 0);
#ifdef SHIM_CONFIG_PSI
	TU_EQ(sleep_locks, 2);
#else
	TU_EQ(sleep_locks, 1);
#endif
	acct_stop();
}

static int locks_taken;

static void count_lock(raw_spinlock_t *l, const char *func)
{
	locks_taken++;
	(void)l;
	(void)func;
}

/* kmod_switch() on CPU 0 to @next, preempting; whether it took no lock */
static bool switch_lockless(struct task_struct *next)
{
	locks_taken = 0;
	shim_lock_hook = count_lock;
	kmod_switch(0, TASK_RUNNING, false, next);
	shim_lock_hook = NULL;
	return !locks_taken;
}

/*
 * Tasks of the root cgroup count in no group, and the switches between
 * them skip the groups: r1 and r2 of the root and the groups of cgroup
 * 11. r1 moves into 11 while it waits (11: some and full), runs there
 * (11: nothing), and moves back to the root while it runs.
 */
static void cgroup_top_tasks(void)
{
	const u64 S = 1000000000ULL;
	struct task_struct *r1, *r2;

	root_pair(&r1, &r2);
	TU_CHECK(switch_lockless(r2), "root to root: not the settled switch");
	TU_CHECK(switch_lockless(r1), "root to root: not the settled switch");
	shim_now += S;
	TU_EQ(group_total(1, PSIM_CPU, 0), 0);
	/* r2 runs, r1 waits in 11 */
	TU_CHECK(switch_lockless(r2), "root to root: not the settled switch");
	acct_move(r1, 1);
	shim_now += S;
	TU_EQ(group_total(1, PSIM_CPU, 0), S);
	TU_EQ(group_total(1, PSIM_CPU, 1), S);
	TU_EQ(group_total(0, PSIM_CPU, 1), S);
	/* r1 runs in 11: the CPU's task changes groups, under the lock */
	TU_CHECK(!switch_lockless(r1), "root to 11 told without the lock");
	shim_now += S;
	TU_EQ(group_total(1, PSIM_CPU, 0), S);
	/* back to the root while it runs; 11 empty, nothing on its CPU */
	acct_move(r1, -1);
	TU_CHECK(r1->cgroups == &cs_root, "r1 not moved");
	shim_now += S;
	TU_EQ(group_total(1, PSIM_CPU, 0), S);
	TU_EQ(group_total(1, PSIM_CPU, 1), S);
	/* the first switch after a move takes the lock, the next do not */
	TU_CHECK(!switch_lockless(r2), "a switch after a move told without the lock");
	TU_CHECK(switch_lockless(r1), "root to root: not the settled switch");
	shim_now += S;
	TU_EQ(group_total(1, PSIM_CPU, 0), S);
	TU_EQ(group_total(0, PSIM_CPU, 0), S);
	acct_stop();
}

int main(void)
{
	TU_RUN(cgroup_adopt);
	TU_RUN(cgroup_off);
	TU_RUN(cgroup_mkdir_release);
	TU_RUN(cgroup_mkdir_nomem);
	TU_RUN(cgroup_files);
	TU_RUN(cgroup_cgroupfs);
	TU_RUN(cgroup_start_nomem);
	TU_RUN(cgroup_start_nocache);
	TU_RUN(cgroup_walk_races);
	TU_RUN(cgroup_accounting);
	TU_RUN(cgroup_move_mid_switch);
	TU_RUN(cgroup_move_mid_sleep);
	TU_RUN(cgroup_root_sleep_move);
	TU_RUN(cgroup_top_tasks);
	return tu_exit();
}
