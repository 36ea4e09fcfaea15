/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stand-in for linux/cgroup.h: the little of a cgroup hierarchy that
 * src/psi_cgroup.c reads. The test builds the tree itself
 * (shim_cgroup_add()); a css's children are a singly linked list in
 * order, and css_next_descendant_pre() walks them as the kernel's does,
 * skipping released ones, calling shim_css_walk_hook at each step first
 * (where the test plays a mkdir or release on another CPU).
 */
#ifndef SHIM_CGROUP_H
#define SHIM_CGROUP_H
#include "../kapi.h"

#define CSS_ONLINE	(1 << 1)
#define CSS_RELEASED	(1 << 2)
/* the shim is no PREEMPT_RT kernel: every IS_ENABLED() option is off */
#define IS_ENABLED(option)	0
#ifndef EOPNOTSUPP
#define EOPNOTSUPP	95
#endif

struct cgroup;
struct cgroup_root;

struct cgroup_subsys_state {
	struct cgroup *cgroup;
	struct cgroup_subsys_state *parent;
	unsigned int flags;
	struct cgroup_subsys_state *first_child, *next_sibling;	/* shim */
};

struct psi_group;

/* a cgroup's directory: its name is "cg<id>" unless the test names it */
struct kernfs_node {
	struct kernfs_node *parent;
	void *iattr;		/* the kernel's: its owner once set, or NULL */
	u64 id;
	const char *shim_name;
	struct kernfs_node *shim_events;	/* its cgroup.events */
};

/* "/<name>": @to's path from its parent, the only use psi_mod has */
int kernfs_path_from_node(struct kernfs_node *to, struct kernfs_node *from,
			  char *buf, size_t buflen);
/* a cgroup directory's cgroup.events (the only name looked up) */
struct kernfs_node *kernfs_find_and_get(struct kernfs_node *kn,
					const char *name);
extern long shim_kernfs_refs;	/* kernfs_get() and found, less kernfs_put() */
void kernfs_get(struct kernfs_node *kn);
void kernfs_put(struct kernfs_node *kn);

struct cgroup {
	struct cgroup_subsys_state self;
	struct kernfs_node *kn;
	struct kernfs_node shim_kn, shim_events;
	struct cgroup_root *root;
	int level;
	u64 id;
#ifdef CONFIG_PSI
	struct psi_group *psi;	/* 6.1's: the kernel's PSI, off, leaves it NULL */
#endif
};

/* a task's cgroups: its default-hierarchy cgroup is what psi_mod reads */
struct css_set {
	struct cgroup *dfl_cgrp;
};

struct cgroup_root {
	struct cgroup cgrp;
};

extern struct cgroup_root cgrp_dfl_root;

static inline struct cgroup *cgroup_parent(struct cgroup *cgrp)
{
	return cgrp->self.parent ? cgrp->self.parent->cgroup : NULL;
}

static inline u64 cgroup_id(struct cgroup *cgrp)
{
	return cgrp->id;
}

extern void (*shim_css_walk_hook)(struct cgroup_subsys_state *next);
struct cgroup_subsys_state *
css_next_descendant_pre(struct cgroup_subsys_state *pos,
			struct cgroup_subsys_state *root);
#define css_for_each_descendant_pre(pos, css)				\
	for ((pos) = css_next_descendant_pre(NULL, (css)); (pos);	\
	     (pos) = css_next_descendant_pre((pos), (css)))

/* a new cgroup under @parent (in @root's hierarchy), last of its siblings */
void shim_cgroup_add(struct cgroup *c, struct cgroup *parent, u64 id);
/* its release: flagged and unlinked, as css_release_work_fn() does */
void shim_cgroup_unlink(struct cgroup *c);

#endif
