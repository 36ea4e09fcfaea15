// SPDX-License-Identifier: GPL-2.0
/*
 * cgroupfs=1: the pressure files in cgroupfs itself, where systemd-oomd,
 * oomd and the container stacks open them: {io,memory,cpu}.pressure (and
 * irq.pressure with irq=1) in every cgroup2 cgroup, the root's the
 * system-wide figures, as the kernel's with its PSI on.
 *
 * Where the kernel has no such files of its own (6.1 and later with psi=0,
 * CONFIG_PSI=n), nothing of the kernel is patched. The files are cftypes
 * of psi_mod's on
 * the perf_event controller, which is on the default hierarchy implicitly,
 * with a css in every cgroup, threaded ones and the root included; named
 * without the controller's prefix. cgroup_add_dfl_cftypes() makes them in
 * every cgroup there is and, from then on, in each new cgroup at its mkdir
 * before the directory goes live; cgroup_rm_cftypes() takes them all away,
 * kernfs waiting for the handlers running and releasing the open files.
 * A cgroup made after that has them owned by its maker, as the kernel's
 * own files; one made before gets its maker's owner on them then
 * (kernfs_setattr(), as cgroup_kn_set_ugid() at its mkdir). None of the
 * three functions is exported: their addresses come from a kprobe on each
 * name, taken and let go at once. Without the controller or the functions
 * the files are refused with one line in dmesg and the /proc tree stays.
 *
 * After the removal kernfs answers an open file itself: reads and writes
 * ENODEV, poll DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI, as the kernel's
 * file of a removed cgroup; nothing of the module is reached from it.
 *
 * 5.10 makes its own {io,memory,cpu}.pressure in every cgroup whatever
 * psi= says, and with psi=0 fails each read and trigger with EOPNOTSUPP.
 * There psi_mod answers those files: the four handlers of the kernel's
 * three cftypes (one each, shared by every cgroup's file, found through
 * the root's files) become psi_mod's, after their names were checked to
 * be the kernel's. Taking them back restores the kernel's pointers, waits
 * for the callers that may still have psi_mod's (psim_sync_callers()) and
 * for the handlers running, and then ends psi_mod's triggers, pollers
 * woken with the error: the kernel's handlers then answer as before the
 * load. psi_mod never touches the kernel's file context, whose trigger
 * slot stays NULL, so the kernel's release of any file is a no-op. With
 * the kernel's PSI on (psi=1) the files are its own: refused.
 */
#include <linux/cgroup.h>
#include <linux/hashtable.h>
#include <linux/kallsyms.h>
#include <linux/kernfs.h>
#include <linux/kprobes.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/wait_bit.h>

#include "psi_mod.h"

/* An open file: its trigger (the kernel keeps it in the file's context) */
struct psim_cgfs_open {
	struct hlist_node node;
	struct kernfs_open_file *of;
	struct psim_trigger *t;
};

#define PSIM_CGFS_HASH_BITS	8
static DEFINE_HASHTABLE(psim_cgfs_opens, PSIM_CGFS_HASH_BITS);
static DEFINE_SPINLOCK(psim_cgfs_lock);

typedef int (*psim_add_cftypes_fn)(struct cgroup_subsys *ss,
				   struct cftype *cfts);
typedef int (*psim_rm_cftypes_fn)(struct cftype *cfts);
typedef int (*psim_setattr_fn)(struct kernfs_node *kn,
			       const struct iattr *iattr);

/* The kernel's cftype of one of its files, and its own handlers */
struct psim_cgfs_taken {
	struct cftype *cft;
	int (*seq_show)(struct seq_file *m, void *v);
	ssize_t (*write)(struct kernfs_open_file *of, char *buf,
			 size_t nbytes, loff_t off);
	__poll_t (*poll)(struct kernfs_open_file *of,
			 struct poll_table_struct *pt);
	void (*release)(struct kernfs_open_file *of);
	unsigned long private;
};

enum psim_cgfs_mode { PSIM_CGFS_NONE, PSIM_CGFS_ADDED, PSIM_CGFS_TAKEN };

/*
 * The files, and the functions (looked up once a load): under
 * psi_cgroup.c's files lock
 */
static struct cftype psim_cgfs_files[PSIM_NR_RES + 1];
static struct psim_cgfs_taken psim_cgfs_taken[PSIM_IRQ];
static psim_add_cftypes_fn psim_cgfs_addfn;
static psim_rm_cftypes_fn psim_cgfs_rm;
static psim_setattr_fn psim_cgfs_setattr;
static enum psim_cgfs_mode psim_cgfs_mode;

/* psi_mod's handlers running, for the kernel's files taken back */
static atomic_t psim_cgfs_running = ATOMIC_INIT(0);

static void psim_cgfs_enter(void)
{
	atomic_inc(&psim_cgfs_running);
}

static void psim_cgfs_exit(void)
{
	if (atomic_dec_and_test(&psim_cgfs_running))
		wake_up_var(&psim_cgfs_running);
}

static const char * const psim_cgfs_names[PSIM_NR_RES] = {
	[PSIM_IO] = "io.pressure", [PSIM_MEM] = "memory.pressure",
	[PSIM_CPU] = "cpu.pressure", [PSIM_IRQ] = "irq.pressure",
};

/* @of's record or NULL, with psim_cgfs_lock held */
static struct psim_cgfs_open *psim_cgfs_open_of(struct kernfs_open_file *of)
{
	struct psim_cgfs_open *o;

	hash_for_each_possible(psim_cgfs_opens, o, node, (unsigned long)of)
		if (o->of == of)
			return o;
	return NULL;
}

static struct psim_cgfs_open *psim_cgfs_find(struct kernfs_open_file *of)
{
	struct psim_cgfs_open *o;

	spin_lock(&psim_cgfs_lock);
	o = psim_cgfs_open_of(of);
	spin_unlock(&psim_cgfs_lock);
	return o;
}

/*
 * The file's cgroup and its group (NULL for the root's). kernfs runs the
 * handlers only while the file is there, so the cgroup is not released,
 * nor its group freed (at the release, or after the files went).
 */
static int psim_cgfs_group(struct kernfs_open_file *of,
			   struct psim_cgroup **g)
{
	struct cgroup *cgrp = of_css(of)->cgroup;

	*g = NULL;
	if (!cgroup_parent(cgrp))
		return 0;
	rcu_read_lock();
	*g = psim_cgroup_get(cgrp);
	rcu_read_unlock();
	/* no memory at its mkdir: it counts in its parent's group */
	return *g ? 0 : -ENOMEM;
}

static int psim_cgfs_show(struct seq_file *m, void *v)
{
	struct kernfs_open_file *of = m->private;
	struct psim_cgroup *g;
	int ret;

	psim_cgfs_enter();
	ret = psim_cgfs_group(of, &g);
	if (!ret)
		ret = psim_group_show(m, g, of_cft(of)->private);
	psim_cgfs_exit();
	return ret;
}

/*
 * An open file's record, made at its first write: a file opened before
 * the kernel's files were taken has none. kernfs holds the file's mutex
 * over a write, so two writes of one file do not both make one.
 */
static struct psim_cgfs_open *psim_cgfs_record(struct kernfs_open_file *of)
{
	struct psim_cgfs_open *o = psim_cgfs_find(of);

	if (o)
		return o;
	o = kzalloc(sizeof(*o), GFP_KERNEL_ACCOUNT);
	if (!o)
		return NULL;
	o->of = of;
	spin_lock(&psim_cgfs_lock);
	hash_add(psim_cgfs_opens, &o->node, (unsigned long)of);
	spin_unlock(&psim_cgfs_lock);
	return o;
}

/*
 * The kernel's pressure_write(): the whole write parsed (kernfs copied it
 * and holds the file's mutex), one trigger per descriptor; on the root's
 * file into the system's set, marked to go with the cgroup files.
 */
static ssize_t psim_cgfs_write(struct kernfs_open_file *of, char *buf,
			       size_t nbytes, loff_t off)
{
	struct psim_cgfs_open *o;
	struct psim_cgroup *g;
	ssize_t ret;

	psim_cgfs_enter();
	ret = psim_cgfs_group(of, &g);
	if (ret)
		goto out;
	o = psim_cgfs_record(of);
	ret = o ? psim_trigger_write_kbuf(of->file, buf, nbytes,
					  of_cft(of)->private, g, &o->t) :
		  -ENOMEM;
out:
	psim_cgfs_exit();
	return ret;
}

static __poll_t psim_cgfs_poll(struct kernfs_open_file *of,
			       struct poll_table_struct *pt)
{
	struct psim_cgfs_open *o;
	__poll_t ret;

	psim_cgfs_enter();
	o = psim_cgfs_find(of);
	/* no trigger written: the kernel's answer */
	ret = o ? psim_trigger_poll(&o->t, of->file, pt) :
		  DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI;
	psim_cgfs_exit();
	return ret;
}

/* A record out of the table (any, with @of NULL; NULL if none) */
static struct psim_cgfs_open *psim_cgfs_unhash(struct kernfs_open_file *of)
{
	struct psim_cgfs_open *o;
	int bkt;

	spin_lock(&psim_cgfs_lock);
	if (of) {
		o = psim_cgfs_open_of(of);
	} else {
		hash_for_each(psim_cgfs_opens, bkt, o, node)
			break;
	}
	if (o)
		hash_del(&o->node);
	spin_unlock(&psim_cgfs_lock);
	return o;
}

static void psim_cgfs_end(struct psim_cgfs_open *o)
{
	psim_trigger_release_live(&o->t);
	kfree(o);
}

/* The last close, or the file's removal with the descriptor still open */
static void psim_cgfs_release(struct kernfs_open_file *of)
{
	struct psim_cgfs_open *o;

	psim_cgfs_enter();
	o = psim_cgfs_unhash(of);
	if (o)
		psim_cgfs_end(o);
	psim_cgfs_exit();
}

/* A kernel function's address, from a kprobe on its name; NULL if none */
static void *psim_cgfs_lookup(const char *name)
{
	struct kprobe kp = { .symbol_name = name };
	void *addr;

	if (register_kprobe(&kp))
		return NULL;
	addr = kp.addr;
	unregister_kprobe(&kp);
	return psim_fn_start(addr);
}

/*
 * The files of a cgroup made before them: its maker's, as the kernel's
 * own at its mkdir (the maker owns its cgroup.events, which delegation
 * leaves alone).
 */
static void psim_cgfs_chown(struct cgroup *cgrp, psim_setattr_fn setattr,
			    int nr)
{
	struct iattr ia = { .ia_valid = ATTR_UID | ATTR_GID };
	struct kernfs_node *kn;
	int res;

	kn = kernfs_find_and_get(cgrp->kn, "cgroup.events");
	if (!kn)
		return;		/* the root */
	psim_kernfs_owner(kn, &ia.ia_uid, &ia.ia_gid);
	kernfs_put(kn);
	if (uid_eq(ia.ia_uid, GLOBAL_ROOT_UID) &&
	    gid_eq(ia.ia_gid, GLOBAL_ROOT_GID))
		return;
	for (res = 0; res < nr; res++) {
		kn = kernfs_find_and_get(cgrp->kn, psim_cgfs_names[res]);
		if (kn) {
			setattr(kn, &ia);
			kernfs_put(kn);
		}
	}
}

/*
 * Every cgroup2 cgroup there was at the add. A cgroup held (a reference)
 * while the walk sleeps stays a valid place to go on from.
 */
static void psim_cgfs_chown_all(psim_setattr_fn setattr, int nr)
{
	struct cgroup_subsys_state *css, *held = NULL;

	rcu_read_lock();
	css_for_each_descendant_pre(css, &cgrp_dfl_root.cgrp.self) {
		if (!css_tryget_online(css))
			continue;
		rcu_read_unlock();
		if (held)
			css_put(held);
		held = css;
		psim_cgfs_chown(css->cgroup, setattr, nr);
		cond_resched();
		rcu_read_lock();
	}
	rcu_read_unlock();
	if (held)
		css_put(held);
}

/* Why the files cannot be made here, or NULL; the controller in @ss */
static const char *psim_cgfs_refusal(struct cgroup_subsys **ss)
{
	struct cgroup_subsys_state *css;

	if (!PSIM_HAVE_CGROUPFS)
		return "no perf_event controller (CONFIG_CGROUP_PERF) to add them with";
	if (!psim_cgroupfs_ss_enabled())
		return "the perf_event controller is disabled (cgroup_disable=)";
	rcu_read_lock();
	css = rcu_dereference(cgrp_dfl_root.cgrp.subsys[PSIM_CGROUPFS_SSID]);
	*ss = css ? css->ss : NULL;
	rcu_read_unlock();
	if (!*ss || !(*ss)->implicit_on_dfl)
		return "the perf_event controller is not on cgroup2 implicitly";
	/*
	 * The root's children get the implicit controllers' csses once its
	 * subtree mask is worked out, at the first change of its
	 * cgroup.subtree_control (an init system's at boot); till then the
	 * files would be the root's alone.
	 */
	if (!(READ_ONCE(cgrp_dfl_root.cgrp.subtree_ss_mask) &
	      BIT(PSIM_CGROUPFS_SSID)))
		return "the root's cgroup.subtree_control never changed: no perf_event css below";
	return NULL;
}

/* The kernel's cftype of the root's file of @res, or NULL */
static struct cftype *psim_cgfs_kernel_cft(int res)
{
	struct kernfs_node *kn;
	struct cftype *cft = NULL;

	kn = kernfs_find_and_get(cgrp_dfl_root.cgrp.kn, psim_cgfs_names[res]);
	if (!kn)
		return NULL;
	if (kernfs_type(kn) == KERNFS_FILE)
		cft = kn->priv;
	kernfs_put(kn);
	return cft;
}

/*
 * Whether @fn is the kernel's function cgroup_<@res's name><@suffix>, or
 * cgroup<@suffix> with @res negative
 */
static bool psim_cgfs_is(void *fn, int res, const char *suffix)
{
	char sym[KSYM_SYMBOL_LEN], want[KSYM_NAME_LEN];
	const char *name;

	if (!fn)
		return false;
	sprint_symbol_no_offset(sym, (unsigned long)fn);
	if (res < 0) {
		snprintf(want, sizeof(want), "cgroup%s", suffix);
	} else {
		name = psim_cgfs_names[res];
		snprintf(want, sizeof(want), "cgroup_%.*s%s",
			 (int)(strchr(name, '.') - name), name, suffix);
	}
	return !strcmp(sym, want);
}

/* Why the kernel's file of @res cannot be answered by psi_mod, or NULL */
static const char *psim_cgfs_check(int res, struct psim_cgfs_taken *tk)
{
	struct cftype *cft = psim_cgfs_kernel_cft(res);

	if (!cft)
		return "the kernel makes some of its cgroup pressure files, not all";
	if (cft->ss || strcmp(cft->name, psim_cgfs_names[res]) ||
	    cft->open || cft->seq_start ||
	    !psim_cgfs_is(cft->seq_show, res, "_pressure_show") ||
	    !psim_cgfs_is(cft->write, res, "_pressure_write") ||
	    !psim_cgfs_is(cft->poll, -1, "_pressure_poll") ||
	    !psim_cgfs_is(cft->release, -1, "_pressure_release"))
		return "the kernel's cgroup pressure files have handlers not its own";
	tk->cft = cft;
	tk->seq_show = cft->seq_show;
	tk->write = cft->write;
	tk->poll = cft->poll;
	tk->release = cft->release;
	tk->private = cft->private;
	return NULL;
}

/* The kernel's own files (5.10) answered by psi_mod's handlers */
static int psim_cgfs_take(void)
{
	const char *why = NULL;
	int res;

	if (!PSIM_CAN_TAKE_CFTYPES)
		why = "the kernel's own cgroup files: no RCU Tasks to give them back";
	for (res = 0; !why && res < PSIM_IRQ; res++)
		why = psim_cgfs_check(res, &psim_cgfs_taken[res]);
	if (why) {
		pr_err("cgroupfs=1 refused: %s; the per-cgroup files are in the /proc tree\n",
		       why);
		return -EOPNOTSUPP;
	}
	for (res = 0; res < PSIM_IRQ; res++) {
		struct cftype *cft = psim_cgfs_taken[res].cft;

		WRITE_ONCE(cft->private, res);
		/* ->private, which psi_mod's handlers read, before them */
		smp_wmb();
		WRITE_ONCE(cft->release, psim_cgfs_release);
		WRITE_ONCE(cft->poll, psim_cgfs_poll);
		WRITE_ONCE(cft->write, psim_cgfs_write);
		WRITE_ONCE(cft->seq_show, psim_cgfs_show);
	}
	psim_cgfs_mode = PSIM_CGFS_TAKEN;
	pr_info("cgroupfs=1: the kernel's own pressure files in every cgroup2 cgroup, answered by psi_mod\n");
	return 0;
}

/*
 * The kernel's handlers back in its files, once nothing can be running
 * psi_mod's; then psi_mod's triggers end. A release that comes after
 * the write went back and the release not yet leaves its record here.
 */
static void psim_cgfs_give_back(void)
{
	struct psim_cgfs_open *o;
	int res;

	for (res = 0; res < PSIM_IRQ; res++) {
		struct psim_cgfs_taken *tk = &psim_cgfs_taken[res];

		WRITE_ONCE(tk->cft->write, tk->write);
		WRITE_ONCE(tk->cft->poll, tk->poll);
		WRITE_ONCE(tk->cft->seq_show, tk->seq_show);
		WRITE_ONCE(tk->cft->release, tk->release);
	}
	psim_sync_callers();
	wait_var_event(&psim_cgfs_running, !atomic_read(&psim_cgfs_running));
	for (res = 0; res < PSIM_IRQ; res++)
		WRITE_ONCE(psim_cgfs_taken[res].cft->private,
			   psim_cgfs_taken[res].private);
	while ((o = psim_cgfs_unhash(NULL)))
		psim_cgfs_end(o);
	/* the last handler past its exit's wakeup, off psi_mod's code */
	psim_sync_callers();
}

/*
 * The add watched from its first file (psim_cgfs_first_file()): by the
 * task adding, the names of its @nr files, and a cgroup named like one.
 */
static struct task_struct *psim_cgfs_adder;
static int psim_cgfs_adding_nr;
static bool psim_cgfs_checked;
static const char *psim_cgfs_clash;

/*
 * A kprobe on __kernfs_create_file(), there only while the files are
 * added: the first file the add makes, in the root, with cgroup_mutex
 * held since before the add's walk, so that no cgroup comes or goes till
 * the add ends. A cgroup named like one of the files would make the add
 * fail, and the kernel undoes an add by removing every node of the files'
 * names from every cgroup, that cgroup's own directory with them (its
 * cgroup then lingers without one). So, if there is such a cgroup, every
 * file is marked to be made nowhere (on the root only, and not on it)
 * before the walk goes on: the add makes no more than this first file
 * (which the caller removes again), and an undoing removes nothing.
 */
static int psim_cgfs_first_file(struct kprobe *kp, struct pt_regs *regs)
{
	struct cgroup_subsys_state *css, *top = &cgrp_dfl_root.cgrp.self;
	int res;

	if (current != READ_ONCE(psim_cgfs_adder) || psim_cgfs_checked)
		return 0;
	psim_cgfs_checked = true;
	rcu_read_lock();
	css_for_each_descendant_pre(css, top) {
		if (css == top || !(css->flags & CSS_ONLINE))
			continue;
		for (res = 0; res < psim_cgfs_adding_nr; res++)
			if (!strcmp(css->cgroup->kn->name, psim_cgfs_names[res]))
				psim_cgfs_clash = psim_cgfs_names[res];
		if (psim_cgfs_clash)
			break;
	}
	rcu_read_unlock();
	if (psim_cgfs_clash)
		for (res = 0; res < psim_cgfs_adding_nr; res++)
			psim_cgfs_files[res].flags |= CFTYPE_ONLY_ON_ROOT |
						      CFTYPE_NOT_ON_ROOT;
	return 0;
}

/*
 * cgroup_add_dfl_cftypes() of the @nr files, refused without a change if
 * a cgroup is named like one of them
 */
static int psim_cgfs_add(struct cgroup_subsys *ss, int nr)
{
	struct kprobe kp = {
		.symbol_name = "__kernfs_create_file",
		.pre_handler = psim_cgfs_first_file,
	};
	int ret;

	psim_cgfs_adding_nr = nr;
	psim_cgfs_checked = false;
	psim_cgfs_clash = NULL;
	WRITE_ONCE(psim_cgfs_adder, current);
	ret = register_kprobe(&kp);
	if (ret) {
		pr_err("cgroupfs=1 refused: no kprobe on __kernfs_create_file() (%d); the per-cgroup files are in the /proc tree\n",
		       ret);
		WRITE_ONCE(psim_cgfs_adder, NULL);
		return ret;
	}
	ret = psim_cgfs_addfn(ss, psim_cgfs_files);
	unregister_kprobe(&kp);
	WRITE_ONCE(psim_cgfs_adder, NULL);
	if (psim_cgfs_clash) {
		if (!ret && psim_cgfs_files[0].ss) {
			/* only the root's first file was made: it goes */
			psim_cgfs_files[0].flags &= ~CFTYPE_NOT_ON_ROOT;
			psim_cgfs_rm(psim_cgfs_files);
		}
		pr_err("cgroupfs=1 refused: a cgroup is named %s, as one of the files; the per-cgroup files are in the /proc tree\n",
		       psim_cgfs_clash);
		return -EEXIST;
	}
	if (!ret && !psim_cgfs_files[0].ss)
		ret = -EOPNOTSUPP;	/* the controller went disabled */
	if (ret)
		pr_err("cgroupfs=1 refused: the files could not be added (%d); the per-cgroup files are in the /proc tree\n",
		       ret);
	return ret;
}

/*
 * The files in every cgroup (psi_cgroup.c, with the groups there and its
 * files lock held); an error with the reason in dmesg if they cannot be.
 */
int psim_cgroupfs_up(bool kernel_psi, bool irq)
{
	struct cgroup_subsys *ss = NULL;
	const char *why;
	int res, ret;

	if (psim_cgfs_mode != PSIM_CGFS_NONE)
		return 0;
	if (!kernel_psi && psim_cgfs_kernel_cft(PSIM_CPU))
		return psim_cgfs_take();
	why = kernel_psi ? "the kernel's own PSI is on, with its own cgroup files" :
			   psim_cgfs_refusal(&ss);
	if (why) {
		pr_err("cgroupfs=1 refused: %s; the per-cgroup files are in the /proc tree\n",
		       why);
		return -EOPNOTSUPP;
	}
	if (!psim_cgfs_addfn || !psim_cgfs_rm || !psim_cgfs_setattr) {
		psim_cgfs_addfn = psim_cgfs_lookup("cgroup_add_dfl_cftypes");
		psim_cgfs_rm = psim_cgfs_lookup("cgroup_rm_cftypes");
		psim_cgfs_setattr = psim_cgfs_lookup("kernfs_setattr");
	}
	if (!psim_cgfs_addfn || !psim_cgfs_rm || !psim_cgfs_setattr) {
		pr_err("cgroupfs=1 refused: cgroup_add_dfl_cftypes(), cgroup_rm_cftypes() or kernfs_setattr() not found; the per-cgroup files are in the /proc tree\n");
		return -ENOENT;
	}
	/* the kernel's teardown cleared what its setup filled in */
	memset(psim_cgfs_files, 0, sizeof(psim_cgfs_files));
	for (res = 0; res < (irq ? PSIM_NR_RES : PSIM_IRQ); res++) {
		struct cftype *cft = &psim_cgfs_files[res];

		strscpy(cft->name, psim_cgfs_names[res], sizeof(cft->name));
		cft->flags = CFTYPE_NO_PREFIX;
		cft->private = res;
		cft->seq_show = psim_cgfs_show;
		cft->write = psim_cgfs_write;
		cft->poll = psim_cgfs_poll;
		cft->release = psim_cgfs_release;
	}
	ret = psim_cgfs_add(ss, res);
	if (ret)
		return ret;
	psim_cgfs_mode = PSIM_CGFS_ADDED;
	psim_cgfs_chown_all(psim_cgfs_setattr, res);
	pr_info("cgroupfs=1: pressure files in every cgroup2 cgroup\n");
	return 0;
}

/*
 * The files out of every cgroup, before their groups and triggers go: open
 * ones are released here, pollers woken with the error.
 */
void psim_cgroupfs_down(void)
{
	if (psim_cgfs_mode == PSIM_CGFS_TAKEN)
		psim_cgfs_give_back();
	else if (psim_cgfs_mode == PSIM_CGFS_ADDED)
		psim_cgfs_rm(psim_cgfs_files);
	psim_cgfs_mode = PSIM_CGFS_NONE;
	WARN_ON_ONCE(!hash_empty(psim_cgfs_opens));
}
