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
#include <linux/ctype.h>
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

/* Whether /proc/<name> exists. */
static bool psim_proc_exists(const char *name)
{
	char path[sizeof("/proc/") + PSIM_DIR_MAX];
	struct path p;

	snprintf(path, sizeof(path), "/proc/%s", name);
	if (kern_path(path, 0, &p))
		return false;
	path_put(&p);
	return true;
}

/*
 * procfs warns when a name is registered twice, so look first: the kernel's
 * own PSI, when on, owns /proc/pressure.
 */
static int psim_check_dir_free(void)
{
	if (!psim_proc_exists(psim_proc_dir))
		return 0;
	pr_err("/proc/%s already exists (is the kernel's own PSI on?); load with proc_dir=<name> to run beside it\n",
	       psim_proc_dir);
	return -EEXIST;
}

/*
 * Fresh totals first (the probes start the averaging work), then the state
 * and the probes, then the files.
 */
static int psim_start(void)
{
	int ret;

	if (psim_active)
		return 0;
	ret = psim_check_dir_free();
	if (ret)
		return ret;
	psim_aggregate_start(psim_warmup, psim_percpu);
	psim_triggers_start();
	/*
	 * With psi_mod's own files absent, /proc/pressure is the kernel's: its
	 * PSI is on and owns the per-task word.
	 */
	ret = psim_probes_start(psim_memstall_tp_only,
				psim_proc_exists("pressure"));
	if (ret)
		goto err_triggers;
	if (psim_irq) {
		ret = psim_irq_start();
		if (ret)
			goto err_probes;
	}
	ret = psim_proc_create(psim_proc_dir, psim_percpu, psim_irq);
	if (ret)
		goto err_probes;
	psim_active = true;
	return 0;

err_probes:
	psim_irq_stop();
	psim_probes_stop();
err_triggers:
	/* probes that were attached for a while may have armed it */
	psim_aggregate_stop();
	psim_triggers_stop();
	return ret;
}

/*
 * Pollers of triggers woken and gone, then the files, so no reader runs
 * and every trigger is destroyed; then the probes; then the works.
 */
static void psim_stop(void)
{
	if (!psim_active)
		return;
	psim_triggers_shutdown();
	psim_proc_remove();
	psim_irq_stop();
	psim_probes_stop();
	psim_aggregate_stop();
	psim_triggers_stop();
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
	mutex_unlock(&psim_ctl_lock);
	return ret;
}

static void __exit psim_exit(void)
{
	mutex_lock(&psim_ctl_lock);
	psim_ready = false;
	psim_stop();
	mutex_unlock(&psim_ctl_lock);
}

module_init(psim_init);
module_exit(psim_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Pressure Stall Information from scheduler tracepoints");
MODULE_AUTHOR("psi_mod developers");
MODULE_VERSION(PSIM_VERSION);
