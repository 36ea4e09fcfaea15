// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod: Pressure Stall Information as a loadable module.
 *
 * On kernels whose own PSI is off (psi=0, CONFIG_PSI_DEFAULT_DISABLED) or
 * not built, psi_mod provides /proc/pressure/{cpu,io,memory} from scheduler
 * tracepoints, with the kernel's format and semantics. This file holds the
 * module: its parameters, and the attach and detach of every probe.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kernel.h>
#include <linux/ctype.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "psi_mod.h"

#define PSIM_DIR_MAX	64

static bool psim_enable = true;
static char psim_proc_dir[PSIM_DIR_MAX + 1] = "pressure";

/* Serializes enable/disable; psim_ready is set once init has run. */
static DEFINE_MUTEX(psim_ctl_lock);
static bool psim_ready;
static bool psim_active;

/*
 * Memory stalls are bracketed by psi_memstall_enter/leave(), which return
 * at once when the kernel's PSI is off; a kprobe on their entry still
 * fires. They do not exist when CONFIG_PSI=n.
 * register_kprobes() arms them in array order: leave first. A stall whose
 * enter was seen while its leave was not yet armed would stay counted for
 * good (memory some +21..+33% after loading under a zram hog); a leave
 * without a seen enter is ignored.
 */
static struct kprobe psim_kp_enter, psim_kp_leave;
static bool psim_memstall_tp_only;	/* memstall_tracepoints= */
static struct kprobe *psim_kps[] = { &psim_kp_leave, &psim_kp_enter };
static bool psim_kps_attached;

/* exec by a non-leader thread swaps two tasks' pids (see psi_aggregate.c) */
static struct kretprobe psim_krp_xtids;
static bool psim_krp_attached;

/* a dying CPU's switch to idle, which no tracepoint shows (psi_aggregate.c) */
static struct kprobe psim_kp_dead;
static bool psim_kp_dead_attached;

static void psim_detach_tracepoints(int n)
{
	while (n-- > 0)
		tracepoint_probe_unregister(psim_probes[n].tp, psim_probes[n].func,
					    NULL);
}

/*
 * Attach what of @probes was found; each one is optional. They come in
 * (end, begin) pairs: a begin is only attached after its end, or a stall
 * could begin counted and end unseen.
 */
static int psim_attach_optional(struct psim_probe *probes, int n)
{
	int i, attached = 0;

	for (i = 0; i < n; i++) {
		probes[i].attached = probes[i].tp &&
			(i % 2 == 0 || probes[i - 1].attached) &&
			!tracepoint_probe_register(probes[i].tp,
						   probes[i].func, NULL);
		attached += probes[i].attached;
	}
	return attached;
}

static void psim_detach_optional(struct psim_probe *probes, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (probes[i].attached)
			tracepoint_probe_unregister(probes[i].tp,
						    probes[i].func, NULL);
		probes[i].attached = false;
	}
}

/*
 * The kprobes: each set is optional, what it costs is said once.
 * exchange_tids() first: it only moves task words, and must be in place
 * before any task is counted, or an exec meanwhile strands a word.
 */
static void psim_attach_xtids(void)
{
	int ret;

	memset(&psim_krp_xtids, 0, sizeof(psim_krp_xtids));
	psim_krp_xtids.kp.symbol_name = "exchange_tids";
	psim_krp_xtids.entry_handler = psim_krp_exchange_entry;
	psim_krp_xtids.handler = psim_krp_exchange_ret;
	psim_krp_xtids.data_size = PSIM_XTIDS_DATA_SIZE;
	ret = register_kretprobe(&psim_krp_xtids);
	psim_krp_attached = !ret;
	if (ret)
		pr_warn_once("psi_mod: no kretprobe on exchange_tids (%d): exec from a non-leader thread can leave counts behind\n",
			     ret);
}

/*
 * After the switch probe, whose counts it undoes. Without it the CPU-dead
 * callback does the same, later (psi_aggregate.c).
 */
static void psim_attach_idle_dead(void)
{
	int ret;

	memset(&psim_kp_dead, 0, sizeof(psim_kp_dead));
	psim_kp_dead.symbol_name = "cpuhp_report_idle_dead";
	psim_kp_dead.pre_handler = psim_kp_idle_dead;
	ret = register_kprobe(&psim_kp_dead);
	psim_kp_dead_attached = !ret;
	if (ret)
		pr_notice_once("psi_mod: no kprobe on cpuhp_report_idle_dead (%d): a CPU going offline counts as busy until its dead callback\n",
			       ret);
}

/* Last: a memstall probe counts its task as running (see psim_attach()). */
static void psim_attach_memstall(void)
{
	int ret;

	memset(&psim_kp_enter, 0, sizeof(psim_kp_enter));
	psim_kp_enter.symbol_name = "psi_memstall_enter";
	psim_kp_enter.pre_handler = psim_kp_memstall_enter;
	memset(&psim_kp_leave, 0, sizeof(psim_kp_leave));
	psim_kp_leave.symbol_name = "psi_memstall_leave";
	psim_kp_leave.pre_handler = psim_kp_memstall_leave;
	ret = psim_memstall_tp_only ? -ENOENT :
		register_kprobes(psim_kps, ARRAY_SIZE(psim_kps));
	psim_kps_attached = !ret;
	if (ret) {
		int n = psim_attach_optional(psim_memstall_probes,
					     ARRAY_SIZE(psim_memstall_probes));

		if (psim_memstall_tp_only)
			pr_notice_once("psi_mod: memstall_tracepoints=1: memory stalls from %d reclaim and compaction tracepoints only\n",
				       n);
		else
			pr_notice_once("psi_mod: no psi_memstall_enter/leave to probe (%d): memory stalls from %d reclaim and compaction tracepoints; kswapd and refaults are not seen\n",
				       ret, n);
	}
}

static void psim_detach_kprobes(void)
{
	psim_detach_optional(psim_memstall_probes,
			     ARRAY_SIZE(psim_memstall_probes));
	if (psim_kps_attached)
		unregister_kprobes(psim_kps, ARRAY_SIZE(psim_kps));
	psim_kps_attached = false;
	if (psim_kp_dead_attached)
		unregister_kprobe(&psim_kp_dead);
	psim_kp_dead_attached = false;
	if (psim_krp_attached)
		unregister_kretprobe(&psim_krp_xtids);
	psim_krp_attached = false;
}

static int psim_attach(void)
{
	int i, ret;

	/*
	 * Nothing may be counted before the event that undoes it is seen
	 * (see psim_probes[]): word moves first, then the tracepoints in
	 * their order, then the dying CPU's switch to idle, then the memstall
	 * probes, whose counts only the switch probe undoes.
	 */
	psim_attach_xtids();
	for (i = 0; i < ARRAY_SIZE(psim_probes); i++) {
		ret = tracepoint_probe_register(psim_probes[i].tp,
						psim_probes[i].func, NULL);
		if (ret) {
			pr_err("psi_mod: cannot attach to %s: %d\n",
			       psim_probes[i].name, ret);
			psim_detach_tracepoints(i);
			psim_detach_kprobes();
			tracepoint_synchronize_unregister();
			return ret;
		}
	}
	psim_attach_idle_dead();
	psim_attach_memstall();
	return 0;
}

static void psim_detach(void)
{
	psim_detach_tracepoints(ARRAY_SIZE(psim_probes));
	/* unregister_k(ret)probe() waits for running handlers itself. */
	psim_detach_kprobes();
	/* No probe may still be running once the state is freed. */
	tracepoint_synchronize_unregister();
}

/*
 * procfs warns when a name is registered twice, so look first: the kernel's
 * own PSI, when on, owns /proc/pressure.
 */
static int psim_check_dir_free(void)
{
	char path[sizeof("/proc/") + PSIM_DIR_MAX];
	struct path p;

	snprintf(path, sizeof(path), "/proc/%s", psim_proc_dir);
	if (kern_path(path, 0, &p))
		return 0;
	path_put(&p);
	pr_err("psi_mod: %s already exists (is the kernel's own PSI on?); load with proc_dir=<name> to run beside it\n",
	       path);
	return -EEXIST;
}

static int psim_start(void)
{
	int ret;

	if (psim_active)
		return 0;
	ret = psim_check_dir_free();
	if (ret)
		return ret;
	ret = psim_state_start();
	if (ret)
		return ret;
	ret = psim_attach();
	if (ret)
		goto err_state;
	ret = psim_proc_create(psim_proc_dir);
	if (ret)
		goto err_detach;
	psim_active = true;
	return 0;

err_detach:
	psim_detach();
err_state:
	psim_state_stop();
	return ret;
}

/* Files first, so no reader runs; then probes; then the state goes. */
static void psim_stop(void)
{
	u32 underflows;

	if (!psim_active)
		return;
	psim_proc_remove();
	psim_detach();
	underflows = psim_underflows();
	if (underflows)
		pr_err("psi_mod: %u task count underflows: accounting bug, please report\n",
		       underflows);
	psim_state_stop();
	psim_active = false;
}

/*
 * Parameters. A bool that accepts exactly the usual spellings, with the
 * newline that "echo" adds; anything else is refused with a reason.
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

static int psim_enable_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = 0;

	if (psim_parse_bool(val, &on)) {
		pr_err("psi_mod: enable=\"%*pE\": not a boolean, use 1 or 0\n",
		       (int)min_t(size_t, strlen(val), 32), val);
		return -EINVAL;
	}

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

/*
 * memstall_tracepoints=1: take memory stalls from the reclaim and
 * compaction tracepoints even where psi_memstall_enter/leave() exist, as
 * on a CONFIG_PSI=n kernel. For measuring, beside the kernel's own PSI,
 * what such kernels lose (docs/accuracy.md); not for production.
 */
static int psim_tp_only_set(const char *val, const struct kernel_param *kp)
{
	bool on;

	if (psim_parse_bool(val, &on)) {
		pr_err("psi_mod: memstall_tracepoints=\"%*pE\": not a boolean, use 1 or 0\n",
		       (int)min_t(size_t, strlen(val), 32), val);
		return -EINVAL;
	}
	psim_memstall_tp_only = on;
	return 0;
}

static int psim_tp_only_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%c\n", psim_memstall_tp_only ? 'Y' : 'N');
}

static const struct kernel_param_ops psim_tp_only_ops = {
	.set = psim_tp_only_set,
	.get = psim_tp_only_get,
};
module_param_cb(memstall_tracepoints, &psim_tp_only_ops, NULL, 0444);
MODULE_PARM_DESC(memstall_tracepoints, "Take memory stalls from the reclaim/compaction tracepoints only, as on CONFIG_PSI=n (a measuring aid)");

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
		pr_err("psi_mod: proc_dir must be 1 to %d characters long\n",
		       PSIM_DIR_MAX);
		return -EINVAL;
	}
	for (i = 0; i < len; i++) {
		/* isalnum() takes Latin-1 letters too: ASCII only */
		if (!isascii(val[i]) ||
		    (!isalnum(val[i]) && !strchr("._-", val[i]))) {
			pr_err("psi_mod: proc_dir=\"%*pE\": only letters, digits, '.', '-' and '_' are allowed\n",
			       (int)min_t(size_t, len, 32), val);
			return -EINVAL;
		}
		digits &= !!isdigit(val[i]);
	}
	if (!strcmp(val, ".") || !strcmp(val, "..") || digits) {
		pr_err("psi_mod: proc_dir=\"%s\" is not a usable directory name\n",
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

static void psim_find_tracepoint(struct tracepoint *tp, void *priv)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(psim_probes); i++)
		if (!strcmp(tp->name, psim_probes[i].name))
			psim_probes[i].tp = tp;
	/* Unused slots (no memcg, no compaction in this kernel) are empty. */
	for (i = 0; i < ARRAY_SIZE(psim_memstall_probes); i++)
		if (psim_memstall_probes[i].name &&
		    !strcmp(tp->name, psim_memstall_probes[i].name))
			psim_memstall_probes[i].tp = tp;
}

static int __init psim_init(void)
{
	int i, ret = 0;

	for_each_kernel_tracepoint(psim_find_tracepoint, NULL);
	for (i = 0; i < ARRAY_SIZE(psim_probes); i++) {
		if (!psim_probes[i].tp) {
			pr_err("psi_mod: tracepoint %s not found\n",
			       psim_probes[i].name);
			return -ENOENT;
		}
	}

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
MODULE_VERSION("0.1.0");
