// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup tree of src/psi_cgroup.c, compiled in user space against the
 * kernel API shim (shim/linux/cgroup.h builds the hierarchy): groups made
 * for the cgroups there at the start and at each mkdir, with their
 * ancestors when those have none (a failed allocation before), none for
 * another hierarchy's cgroups, freed at release and at the stop; the
 * start's walk racing with a mkdir and with releases on another CPU,
 * played from the walk's and the lock's hooks; a start without memory
 * undone. Checked through the module's own debug view
 * (psim_cgroups_show(), psim_cgroups_debug()) and the shim's count of
 * live allocations.
 */
#include "kapi.h"
#include "linux/cgroup.h"
#include "psi_mod.h"
#include "tu.h"

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
	TU_EQS(psim_cgroups_start(true), 0);
	TU_STREQ(groups(), TREE);
	TU_EQ(dbg().on, 1);
	CG_COUNTS(5, 5, 0, 0);
	TU_CHECK(shim_tp("cgroup_mkdir")->func && shim_tp("cgroup_release")->func,
		 "probes not attached");
	TU_EQ(shim_kmalloc_live - live0, 5);
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
	TU_EQS(psim_cgroups_start(false), 0);
	TU_STREQ(groups(), "");
	TU_CHECK(!shim_tp("cgroup_mkdir")->func, "mkdir probe attached");
	stop_clean();
}

static void cgroup_mkdir_release(void)
{
	static struct cgroup_root v1;

	cg_reset();
	build_tree();
	TU_EQS(psim_cgroups_start(true), 0);
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
	TU_EQ(shim_kmalloc_live - live0, 4);
	stop_clean();
}

/*
 * No memory at a mkdir: that cgroup has no group (counted); a mkdir below
 * it later makes its group first, then the child's, parented right.
 */
static void cgroup_mkdir_nomem(void)
{
	cg_reset();
	build_tree();
	TU_EQS(psim_cgroups_start(true), 0);
	shim_kmalloc_fail = 1;
	cg_mkdir(5, &cg[1]);
	TU_STREQ(groups(), TREE);
	TU_EQ(dbg().failed, 1);
	cg_mkdir(6, &cg[5]);
	cg_mkdir(7, &cg[6]);
	TU_STREQ(groups(), TREE "15 11 3 11\n16 15 4 15\n17 16 5 16\n");
	CG_COUNTS(8, 8, 0, 1);
	stop_clean();
}

/* No memory at the start's walk: the start fails and leaves nothing. */
static void cgroup_start_nomem(void)
{
	cg_reset();
	build_tree();
	shim_kmalloc_fail = 1;
	TU_EQS(psim_cgroups_start(true), -ENOMEM);
	TU_EQ(shim_kmalloc_live - live0, 0);
	TU_CHECK(!shim_tp("cgroup_mkdir")->func && !shim_tp("cgroup_release")->func,
		 "probes left attached after a failed start");
	TU_EQ(dbg().on, 0);
	TU_STREQ(groups(), "");
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
	TU_EQS(psim_cgroups_start(true), 0);
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

int main(void)
{
	TU_RUN(cgroup_adopt);
	TU_RUN(cgroup_off);
	TU_RUN(cgroup_mkdir_release);
	TU_RUN(cgroup_mkdir_nomem);
	TU_RUN(cgroup_start_nomem);
	TU_RUN(cgroup_walk_races);
	return tu_exit();
}
