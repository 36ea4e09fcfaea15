// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod: Pressure Stall Information as a loadable module.
 *
 * On kernels whose own PSI is off (psi=0, CONFIG_PSI_DEFAULT_DISABLED) or
 * not built, psi_mod provides /proc/pressure/{cpu,io,memory} from scheduler
 * tracepoints, with the kernel's format and semantics, and with irq=1
 * /proc/pressure/irq from the interrupt tracepoints. This file holds the
 * module: its parameters, and the order in which the parts start and stop.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kernel.h>
#include <linux/cred.h>
#include <linux/ctype.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/string.h>

#include "psi_mod.h"

#define PSIM_DIR_MAX	64

static bool psim_enable = true;
static char psim_proc_dir[PSIM_DIR_MAX + 1] = "pressure";

/* Serializes enable/disable; psim_ready is set once init has run. */
static DEFINE_MUTEX(psim_ctl_lock);
static bool psim_ready;
static bool psim_active;

static bool psim_memstall_tp_only;	/* memstall_tracepoints= */
static bool psim_warmup;		/* warmup= */
static bool psim_percpu;		/* percpu= */
static bool psim_irq;			/* irq= */
static bool psim_cgroups;		/* cgroups= */
static bool psim_kernel_psi;		/* the kernel's own PSI on, at the start */
static unsigned int psim_fail_start;	/* fail_start= */

/*
 * A private mount of procfs: what a lookup in it finds, the caller's root,
 * mount namespace and the options of its /proc (subset=pid, hidepid, a
 * file mounted over one of procfs's) do not affect. psim_proc_put() ends it.
 */
static struct vfsmount *psim_proc_get(struct file_system_type **proc)
{
	struct vfsmount *mnt;

	*proc = get_fs_type("proc");
	if (!*proc)
		return ERR_PTR(-ENOENT);
	mnt = kern_mount(*proc);
	if (IS_ERR(mnt))
		module_put((*proc)->owner);
	return mnt;
}

static void psim_proc_put(struct file_system_type *proc, struct vfsmount *mnt)
{
	kern_unmount(mnt);
	/* put_filesystem(), not exported; procfs is built in */
	module_put(proc->owner);
}

/* Whether /proc/<name> is registered, asked of procfs itself. */
static int psim_proc_taken(const char *name, bool *taken)
{
	struct file_system_type *proc;
	struct vfsmount *mnt;
	struct dentry *d;
	int ret = 0;

	mnt = psim_proc_get(&proc);
	if (IS_ERR(mnt))
		return PTR_ERR(mnt);
	/* one name: psim_dir_set() allows no '/' */
	d = lookup_positive_unlocked(name, mnt->mnt_root, strlen(name));
	if (IS_ERR(d))
		ret = PTR_ERR(d);
	else
		dput(d);
	psim_proc_put(proc, mnt);
	*taken = !ret;
	return ret == -ENOENT ? 0 : ret;
}

/* One step down from @p's dentry, to its child @name (@len bytes). */
static int psim_proc_step(struct path *p, const char *name, size_t len)
{
	struct dentry *d = lookup_positive_unlocked(name, p->dentry, len);

	if (IS_ERR(d))
		return PTR_ERR(d);
	dput(p->dentry);
	p->dentry = d;
	return 0;
}

/*
 * The unsigned number in procfs's file @path (e.g. "sys/kernel/pid_max"),
 * read from a private mount: the value the kernel has, whatever the
 * loading task's /proc shows.
 */
int psim_proc_read_uint(const char *path, unsigned int *v)
{
	struct file_system_type *proc;
	char buf[24] = "";
	struct path p;
	struct file *f;
	loff_t pos = 0;
	size_t len;
	ssize_t n;
	int ret = 0;

	p.mnt = psim_proc_get(&proc);
	if (IS_ERR(p.mnt))
		return PTR_ERR(p.mnt);
	p.dentry = dget(p.mnt->mnt_root);
	for (; *path && !ret; path += len + !!path[len]) {
		len = strcspn(path, "/");
		ret = psim_proc_step(&p, path, len);
	}
	if (!ret) {
		f = dentry_open(&p, O_RDONLY, current_cred());
		if (IS_ERR(f)) {
			ret = PTR_ERR(f);
		} else {
			n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
			fput(f);
			ret = n < 0 ? n : kstrtouint(strim(buf), 10, v);
		}
	}
	dput(p.dentry);
	psim_proc_put(proc, p.mnt);
	return ret;
}

/*
 * procfs warns when a name is registered twice, so look first: the kernel's
 * own PSI, when on, owns /proc/pressure.
 */
static int psim_check_dir_free(bool kernel_psi)
{
	bool taken = kernel_psi && !strcmp(psim_proc_dir, "pressure");
	int ret;

	if (!taken) {
		ret = psim_proc_taken(psim_proc_dir, &taken);
		if (ret) {
			pr_err("cannot look up /proc/%s in procfs: %d\n",
			       psim_proc_dir, ret);
			return ret;
		}
	}
	if (!taken)
		return 0;
	pr_err("/proc/%s already exists (is the kernel's own PSI on?); load with proc_dir=<name> to run beside it\n",
	       psim_proc_dir);
	return -EEXIST;
}

/*
 * fail_start=N, a test aid: the start fails with -ECANCELED right after its
 * step N (enum psim_start_step: 1 aggregation, 2 triggers, 3 cgroups,
 * 4 probes, 5 irq, 6 files) has done its work, so that a test sees each
 * step's unwinding. At step 6 the first files are live: it waits up to
 * 10 s for a trigger with a poller on one of them, which the unwinding
 * must wake and free safely. 0, the default, fails nothing.
 */
int psim_start_fault(enum psim_start_step step)
{
	unsigned int waited_ms;

	if (step != psim_fail_start)
		return 0;
	if (step == PSIM_STEP_FILES)
		for (waited_ms = 0; waited_ms < 10000 && !psim_triggers_polled();
		     waited_ms += 20)
			msleep(20);
	pr_info("fail_start=%u: the start fails after this step, as asked\n",
		step);
	return -ECANCELED;
}

static int psim_fail_start_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;

	if (kstrtouint(val, 10, &n) || n >= PSIM_NR_STEPS) {
		pr_err("fail_start=\"%*pE\": want a start step from 1 to %d, or 0\n",
		       (int)min_t(size_t, strlen(val), 32), val,
		       PSIM_NR_STEPS - 1);
		return -EINVAL;
	}
	psim_fail_start = n;
	return 0;
}

static const struct kernel_param_ops psim_fail_start_ops = {
	.set = psim_fail_start_set,
	.get = param_get_uint,
};
module_param_cb(fail_start, &psim_fail_start_ops, &psim_fail_start, 0444);
MODULE_PARM_DESC(fail_start, "Test aid: make the start fail after step N (1 aggregation, 2 triggers, 3 cgroups, 4 probes, 5 irq, 6 files); 0, the default, fails nothing");

/*
 * Undo the start's steps from @done back to the first, the last first:
 * the stop (@done PSIM_STEP_FILES) and the start's error paths. A step
 * that failed has undone its own part. The pollers of triggers are woken
 * and gone before the files (a file may be open with a polled trigger,
 * psi_triggers.c), so no reader runs and every trigger is destroyed; then
 * the probes; then the works they may have armed.
 */
static void psim_undo(enum psim_start_step done)
{
	switch (done) {
	case PSIM_STEP_FILES:
		psim_triggers_shutdown();
		psim_proc_remove();
		fallthrough;
	case PSIM_STEP_IRQ:
		psim_irq_stop();
		fallthrough;
	case PSIM_STEP_PROBES:
		psim_probes_stop();
		fallthrough;
	case PSIM_STEP_CGROUPS:
		psim_cgroups_stop();
		fallthrough;
	case PSIM_STEP_TRIGGERS:
		psim_triggers_stop();
		fallthrough;
	case PSIM_STEP_AGGREGATE:
		psim_aggregate_stop();
		fallthrough;
	default:
		break;
	}
}

/*
 * Fresh totals first (the probes start the averaging work), then the state
 * and the probes, then the files. A failing step undoes its own part, and
 * psim_undo() the steps before it; the files are the exception: those
 * created before a failure stay live, and psim_undo() removes them after
 * the triggers' shutdown, as at the stop.
 */
static int psim_start(void)
{
	enum psim_start_step done = PSIM_STEP_NONE;
	bool kernel_psi;
	int ret;

	if (psim_active)
		return 0;
	/* with the kernel's PSI on, psi_flags is its own (psim_probes_start) */
	kernel_psi = psim_kernel_psi_on();
	ret = psim_check_dir_free(kernel_psi);
	if (ret)
		return ret;
	psim_aggregate_start(psim_warmup, psim_percpu);
	done = PSIM_STEP_AGGREGATE;
	ret = psim_start_fault(done);
	if (ret)
		goto err;
	psim_triggers_start();
	done = PSIM_STEP_TRIGGERS;
	ret = psim_start_fault(done);
	if (ret)
		goto err;
	/* the groups before the probes that will charge them */
	psim_kernel_psi = kernel_psi;
	ret = psim_cgroups_start(psim_cgroups, kernel_psi);
	if (ret)
		goto err;
	done = PSIM_STEP_CGROUPS;
	ret = psim_start_fault(done);
	if (ret)
		goto err;
	ret = psim_probes_start(psim_memstall_tp_only, kernel_psi);
	if (ret)
		goto err;
	done = PSIM_STEP_PROBES;
	ret = psim_start_fault(done);
	if (ret)
		goto err;
	if (psim_irq) {
		ret = psim_irq_start();
		if (ret)
			goto err;
	}
	done = PSIM_STEP_IRQ;
	ret = psim_start_fault(done);
	if (ret)
		goto err;
	/* what it created before a failure stays for psim_undo() */
	done = PSIM_STEP_FILES;
	ret = psim_proc_create(psim_proc_dir, psim_percpu, psim_irq);
	if (ret)
		goto err;
	psim_active = true;
	return 0;

err:
	psim_undo(done);
	return ret;
}

static void psim_stop(void)
{
	if (!psim_active)
		return;
	psim_undo(PSIM_STEP_FILES);
	psim_active = false;
}

/*
 * Parameters. A bool that accepts exactly the usual spellings, with the
 * newline that "echo" adds; anything else is refused with a reason.
 * kstrtobool() (and so param_set_bool()) decides on the first one or two
 * characters and would take "yoyo", "1x" or "nonsense" without a word.
 */
static int psim_parse_bool(const char *val, bool *res)
{
	static const char * const yes[] = { "1", "y", "yes", "on", "true" };
	static const char * const no[] = { "0", "n", "no", "off", "false" };
	size_t len;
	int i;

	if (!val) {		/* a bare "enable", as for any bool param */
		*res = true;
		return 0;
	}
	len = strlen(val);
	if (len && val[len - 1] == '\n')
		len--;
	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		if (len == strlen(yes[i]) && !strncasecmp(val, yes[i], len)) {
			*res = true;
			return 0;
		}
		if (len == strlen(no[i]) && !strncasecmp(val, no[i], len)) {
			*res = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* A boolean parameter's value, or -EINVAL with the reason in dmesg. */
static int psim_param_bool(const struct kernel_param *kp, const char *val,
			   bool *res)
{
	if (!psim_parse_bool(val, res))
		return 0;
	pr_err("%s=\"%*pE\": not a boolean, use 1 or 0\n", kp->name,
	       (int)min_t(size_t, strlen(val), 32), val);
	return -EINVAL;
}

static int psim_enable_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = 0;

	if (psim_param_bool(kp, val, &on))
		return -EINVAL;

	mutex_lock(&psim_ctl_lock);
	if (psim_ready) {
		if (on)
			ret = psim_start();
		else
			psim_stop();
	}
	if (!ret)
		psim_enable = on;
	mutex_unlock(&psim_ctl_lock);
	return ret;
}

static int psim_enable_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%c\n", READ_ONCE(psim_enable) ? 'Y' : 'N');
}

static const struct kernel_param_ops psim_enable_ops = {
	.set = psim_enable_set,
	.get = psim_enable_get,
};
module_param_cb(enable, &psim_enable_ops, NULL, 0644);
MODULE_PARM_DESC(enable, "Provide pressure files and account (1, default) or stay inert (0); writable at runtime");

/* The load-time booleans. */
static int psim_bool_set(const char *val, const struct kernel_param *kp)
{
	return psim_param_bool(kp, val, kp->arg);
}

static int psim_bool_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%c\n", *(bool *)kp->arg ? 'Y' : 'N');
}

static const struct kernel_param_ops psim_bool_ops = {
	.set = psim_bool_set,
	.get = psim_bool_get,
};

/*
 * memstall_tracepoints=1: take memory stalls from the reclaim and
 * compaction tracepoints even where psi_memstall_enter/leave() exist, as
 * on a CONFIG_PSI=n kernel. For measuring, beside the kernel's own PSI,
 * what such kernels lose (docs/accuracy.md); not for production.
 */
module_param_cb(memstall_tracepoints, &psim_bool_ops, &psim_memstall_tp_only,
		0444);
MODULE_PARM_DESC(memstall_tracepoints, "Take memory stalls from the reclaim/compaction tracepoints only, as on CONFIG_PSI=n (a measuring aid)");

/*
 * warmup=1: show each average divided by the weight of the time seen since
 * the load (psi_mod_logic.h), instead of the kernel's averages from zero.
 */
module_param_cb(warmup, &psim_bool_ops, &psim_warmup, 0444);
MODULE_PARM_DESC(warmup, "Show averages over the time seen since the load (1) instead of from zero at the load, as the kernel at boot (0, default)");

/*
 * percpu=1: also <proc_dir>/percpu/{cpu,io,memory}, each CPU's own
 * pressure (psi_proc.c). Off, the module shows only what the kernel does
 * and keeps no per-CPU averages.
 */
module_param_cb(percpu, &psim_bool_ops, &psim_percpu, 0444);
MODULE_PARM_DESC(percpu, "Also show each CPU's own pressure in <proc_dir>/percpu/ (1), or only the kernel's files (0, default)");

/*
 * irq=1: also <proc_dir>/irq, the kernel's irq pressure (one full line),
 * from the interrupt tracepoints (psi_irq.c). It costs a little on every
 * interrupt, so it is off unless asked for.
 */
module_param_cb(irq, &psim_bool_ops, &psim_irq, 0444);
MODULE_PARM_DESC(irq, "Also provide <proc_dir>/irq, irq pressure from the interrupt tracepoints (1), at a cost on every interrupt; off by default (0)");

/*
 * cgroups=1: per-cgroup pressure, a group for every cgroup2 cgroup
 * (psi_cgroup.c) in which the probes count its tasks, as the kernel's
 * per-cgroup PSI, shown in <proc_dir>/cgroup/. Writable at runtime: while
 * the module is active the groups and their files are made (every cgroup
 * there adopted, its tasks counted from their next event) or removed at
 * once; otherwise the next start follows it.
 */
static int psim_cgroups_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = 0;

	if (psim_param_bool(kp, val, &on))
		return -EINVAL;

	mutex_lock(&psim_ctl_lock);
	if (psim_active && on != psim_cgroups) {
		if (on) {
			ret = psim_cgroups_start(true, psim_kernel_psi);
			if (!ret && psim_cgroups_counting()) {
				ret = psim_probes_cgroups(true);
				if (ret)
					psim_cgroups_stop();
			}
		} else {
			psim_probes_cgroups(false);
			psim_cgroups_stop();
		}
	}
	if (!ret)
		psim_cgroups = on;
	mutex_unlock(&psim_ctl_lock);
	return ret;
}

static const struct kernel_param_ops psim_cgroups_ops = {
	.set = psim_cgroups_set,
	.get = psim_bool_get,
};
module_param_cb(cgroups, &psim_cgroups_ops, &psim_cgroups, 0644);
MODULE_PARM_DESC(cgroups, "Per-cgroup pressure for every cgroup2 cgroup (1; files and triggers in <proc_dir>/cgroup/<path>/), or not (0, default); writable at runtime");

/*
 * cgroupfs=1: with cgroups=1, the pressure files in cgroupfs too, in every
 * cgroup2 cgroup (psi_cgroupfs.c). Writable at runtime; refused with the
 * reason in dmesg where the kernel cannot take them (the parameter then
 * reads N, the /proc tree stays); at the load that fails nothing else.
 */
static int psim_cgroupfs_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret;

	if (psim_param_bool(kp, val, &on))
		return -EINVAL;
	mutex_lock(&psim_ctl_lock);
	ret = psim_cgroups_cgroupfs(on);
	mutex_unlock(&psim_ctl_lock);
	return ret;
}

static int psim_cgroupfs_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%c\n", psim_cgroups_cgroupfs_wanted() ? 'Y' : 'N');
}

static const struct kernel_param_ops psim_cgroupfs_ops = {
	.set = psim_cgroupfs_set,
	.get = psim_cgroupfs_get,
};
module_param_cb(cgroupfs, &psim_cgroupfs_ops, NULL, 0644);
MODULE_PARM_DESC(cgroupfs, "With cgroups=1, also the pressure files in cgroupfs, {io,memory,cpu}.pressure in every cgroup2 cgroup (1), where the kernel's PSI is off; or not (0, default); writable at runtime");

/*
 * proc_dir names one directory under /proc: letters, digits, '.', '-' and
 * '_' only (no '/', no control bytes), not '.' or '..', not all digits (a
 * pid directory would hide it), at most PSIM_DIR_MAX characters.
 */
static int psim_dir_set(const char *val, const struct kernel_param *kp)
{
	size_t len = strlen(val), i;
	bool digits = true;

	if (len == 0 || len > PSIM_DIR_MAX) {
		pr_err("proc_dir must be 1 to %d characters long\n",
		       PSIM_DIR_MAX);
		return -EINVAL;
	}
	for (i = 0; i < len; i++) {
		/* isalnum() takes Latin-1 letters too: ASCII only */
		if (!isascii(val[i]) ||
		    (!isalnum(val[i]) && !strchr("._-", val[i]))) {
			pr_err("proc_dir=\"%*pE\": only letters, digits, '.', '-' and '_' are allowed\n",
			       (int)min_t(size_t, len, 32), val);
			return -EINVAL;
		}
		digits &= !!isdigit(val[i]);
	}
	if (!strcmp(val, ".") || !strcmp(val, "..") || digits) {
		pr_err("proc_dir=\"%s\" is not a usable directory name\n",
		       val);
		return -EINVAL;
	}
	strscpy(psim_proc_dir, val, sizeof(psim_proc_dir));
	return 0;
}

static int psim_dir_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", psim_proc_dir);
}

static const struct kernel_param_ops psim_dir_ops = {
	.set = psim_dir_set,
	.get = psim_dir_get,
};
module_param_cb(proc_dir, &psim_dir_ops, NULL, 0444);
MODULE_PARM_DESC(proc_dir, "Directory under /proc for the pressure files (default: pressure)");

static int __init psim_init(void)
{
	int ret;

	ret = psim_probes_find();
	if (ret)
		return ret;

	mutex_lock(&psim_ctl_lock);
	if (psim_enable)
		ret = psim_start();
	psim_ready = !ret;
	/* a failed start may have parked trigger queues: as at unload */
	if (ret)
		psim_triggers_exit();
	mutex_unlock(&psim_ctl_lock);
	return ret;
}

static void __exit psim_exit(void)
{
	mutex_lock(&psim_ctl_lock);
	psim_ready = false;
	psim_stop();
	psim_triggers_exit();
	mutex_unlock(&psim_ctl_lock);
}

module_init(psim_init);
module_exit(psim_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Pressure Stall Information from scheduler tracepoints");
MODULE_AUTHOR("psi_mod developers");
MODULE_VERSION(PSIM_VERSION);
