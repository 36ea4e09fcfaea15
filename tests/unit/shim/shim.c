// SPDX-License-Identifier: GPL-2.0
/* The state and the recording functions of the kernel API shim (shim.h). */
#include <stdarg.h>
#include "shim.h"

int shim_cpu;
bool shim_irqs_off[NR_CPUS];
int shim_nheld;
u64 shim_now;
/* synchronize_rcu() calls (kapi.h), for the tests */
unsigned long shim_rcu_syncs;
struct task_struct *shim_current[NR_CPUS];
jmp_buf shim_jb;
bool shim_jb_armed;
char shim_msg[512];
void (*shim_lock_hook)(raw_spinlock_t *lock, const char *func);
void (*shim_cmpxchg_hook)(void);
int (*shim_cpuhp_teardown)(unsigned int cpu);
struct task_struct *shim_tasks[SHIM_MAX_TASKS];
int shim_ntasks, shim_task_iter;
struct pid_namespace init_pid_ns;

void shim_task_add(struct task_struct *t)
{
	int i;

	for (i = 0; i < shim_ntasks; i++)
		if (shim_tasks[i] == t)
			return;
	if (shim_ntasks == SHIM_MAX_TASKS)
		shim_fail("shim_task_add: more than %d tasks", SHIM_MAX_TASKS);
	shim_tasks[shim_ntasks++] = t;
}

/* release_task(): off the task list (its last switch may still come) */
void shim_task_del(struct task_struct *t)
{
	int i, n = 0;

	for (i = 0; i < shim_ntasks; i++)
		if (shim_tasks[i] != t)
			shim_tasks[n++] = shim_tasks[i];
	shim_ntasks = n;
}

struct pid *find_pid_ns(int nr, struct pid_namespace *ns)
{
	int i;

	(void)ns;
	for (i = 0; i < shim_ntasks; i++)
		if (shim_tasks[i]->pid == nr)
			return (struct pid *)shim_tasks[i];
	return NULL;
}
const char *shim_kprobe_missing[4];

void shim_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(shim_msg, sizeof(shim_msg), fmt, ap);
	va_end(ap);
	if (shim_jb_armed) {
		shim_jb_armed = false;
		longjmp(shim_jb, 1);
	}
	fprintf(stderr, "shim: %s\n", shim_msg);
	abort();
}

/* The locks each CPU took, latest last; an entry no longer held is gone. */
static raw_spinlock_t *shim_held_by[NR_CPUS][8];
static int shim_nheld_by[NR_CPUS];

static void shim_held_prune(int cpu, raw_spinlock_t *drop)
{
	int i, n = 0;

	for (i = 0; i < shim_nheld_by[cpu]; i++) {
		raw_spinlock_t *h = shim_held_by[cpu][i];

		if (h != drop && h->held == 1 + cpu)
			shim_held_by[cpu][n++] = h;
	}
	shim_nheld_by[cpu] = n;
}

void shim_lock_sub(raw_spinlock_t *l, int subclass, const char *func)
{
	static bool in_hook;
	int i;

	if (!shim_irqs_off[shim_cpu])
		shim_fail("%s: raw spinlock taken with interrupts on (cpu%d)",
			  func, shim_cpu);
	if (shim_lock_hook && !in_hook) {
		in_hook = true;
		shim_lock_hook(l, func);
		in_hook = false;
	}
	if (l->held)
		shim_fail("%s: cpu%d takes a lock that cpu%d holds (deadlock)",
			  func, shim_cpu, l->held - 1);
	shim_held_prune(shim_cpu, NULL);
	for (i = 0; i < shim_nheld_by[shim_cpu]; i++)
		if (shim_held_by[shim_cpu][i]->subclass == subclass)
			shim_fail("%s: cpu%d takes a lock at subclass %d holding another of its class at that subclass (lockdep: possible recursive locking)",
				  func, shim_cpu, subclass);
	if (shim_nheld_by[shim_cpu] == 8)
		shim_fail("%s: cpu%d holds 8 locks", func, shim_cpu);
	shim_held_by[shim_cpu][shim_nheld_by[shim_cpu]++] = l;
	l->subclass = subclass;
	l->held = 1 + shim_cpu;
	shim_nheld++;
}

void shim_unlock(raw_spinlock_t *l, const char *func)
{
	if (!l->held)
		shim_fail("%s: cpu%d unlocks a lock that is not held", func,
			  shim_cpu);
	if (l->held != 1 + shim_cpu)
		shim_fail("%s: cpu%d unlocks a lock that cpu%d holds", func,
			  shim_cpu, l->held - 1);
	shim_held_prune(shim_cpu, l);
	l->held = 0;
	shim_nheld--;
}

void shim_seq_write(seqcount_raw_spinlock_t *s, bool begin, const char *func)
{
	if (s->lock->held != 1 + shim_cpu)
		shim_fail("%s: cpu%d writes a seqcount without its lock", func,
			  shim_cpu);
	if (!(s->sequence & 1) != begin)
		shim_fail("%s: seqcount write section %s twice", func,
			  begin ? "begun" : "ended");
	s->sequence++;
}

unsigned int shim_seq_read(const seqcount_raw_spinlock_t *s, const char *func)
{
	if (s->sequence & 1)
		shim_fail("%s: read begins inside a write section", func);
	return s->sequence;
}

/* ---- tracepoints ---- */
struct tracepoint shim_tracepoints[] = {
	{ .name = "sched_kthread_stop" },	/* one psi_mod does not want */
	{ .name = "sched_switch" },
	{ .name = "sched_wakeup" },
	{ .name = "sched_wakeup_new" },
	{ .name = "sched_migrate_task" },
	{ .name = "mm_vmscan_direct_reclaim_begin" },
	{ .name = "mm_vmscan_direct_reclaim_end" },
	{ .name = "mm_vmscan_memcg_reclaim_begin" },
	{ .name = "mm_vmscan_memcg_reclaim_end" },
	{ .name = "mm_compaction_begin" },
	{ .name = "mm_compaction_end" },
	{ .name = "cgroup_release" },
	{ .name = "cgroup_rmdir" },
	{ .name = "cgroup_mkdir" },
};
int shim_ntracepoints = ARRAY_SIZE(shim_tracepoints);

struct tracepoint *shim_tp(const char *name)
{
	int i;

	for (i = 0; i < shim_ntracepoints; i++)
		if (!strcmp(shim_tracepoints[i].name, name))
			return &shim_tracepoints[i];
	return NULL;
}

void for_each_kernel_tracepoint(void (*fct)(struct tracepoint *, void *),
				void *priv)
{
	int i;

	for (i = 0; i < shim_ntracepoints; i++)
		fct(&shim_tracepoints[i], priv);
}

int tracepoint_probe_register(struct tracepoint *tp, void *probe, void *data)
{
	if (tp->func)
		shim_fail("tracepoint %s: a second probe", tp->name);
	tp->func = probe;
	tp->data = data;
	return 0;
}

int tracepoint_probe_unregister(struct tracepoint *tp, void *probe,
				void *data)
{
	(void)data;
	if (tp->func != probe)
		shim_fail("tracepoint %s: unregister of a probe not registered",
			  tp->name);
	tp->func = NULL;
	return 0;
}

/* ---- kprobes: one slot per symbol ---- */
static struct {
	const char *symbol;
	struct kprobe *kp;
	struct kretprobe *rp;
} shim_kps[8];

static int shim_kp_add(const char *sym, struct kprobe *kp,
		       struct kretprobe *rp)
{
	int i;

	for (i = 0; i < 4; i++)
		if (shim_kprobe_missing[i] &&
		    !strcmp(shim_kprobe_missing[i], sym))
			return -ENOENT;
	for (i = 0; i < (int)ARRAY_SIZE(shim_kps); i++) {
		if (shim_kps[i].symbol && !strcmp(shim_kps[i].symbol, sym))
			shim_fail("kprobe on %s: registered twice", sym);
	}
	for (i = 0; i < (int)ARRAY_SIZE(shim_kps); i++) {
		if (!shim_kps[i].symbol) {
			shim_kps[i].symbol = sym;
			shim_kps[i].kp = kp;
			shim_kps[i].rp = rp;
			return 0;
		}
	}
	shim_fail("too many kprobes");
}

static void shim_kp_del(const char *sym)
{
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(shim_kps); i++) {
		if (shim_kps[i].symbol && !strcmp(shim_kps[i].symbol, sym)) {
			memset(&shim_kps[i], 0, sizeof(shim_kps[i]));
			return;
		}
	}
	shim_fail("unregister of kprobe on %s: not registered", sym);
}

struct kprobe *shim_kprobe(const char *symbol)
{
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(shim_kps); i++)
		if (shim_kps[i].symbol && !strcmp(shim_kps[i].symbol, symbol))
			return shim_kps[i].kp;
	return NULL;
}

struct kretprobe *shim_kretprobe(const char *symbol)
{
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(shim_kps); i++)
		if (shim_kps[i].symbol && !strcmp(shim_kps[i].symbol, symbol))
			return shim_kps[i].rp;
	return NULL;
}

int register_kprobe(struct kprobe *kp)
{
	return shim_kp_add(kp->symbol_name, kp, NULL);
}

void unregister_kprobe(struct kprobe *kp)
{
	shim_kp_del(kp->symbol_name);
}

int register_kprobes(struct kprobe **kps, int num)
{
	int i, ret;

	for (i = 0; i < num; i++) {
		ret = register_kprobe(kps[i]);
		if (ret) {
			while (i-- > 0)
				unregister_kprobe(kps[i]);
			return ret;
		}
	}
	return 0;
}

void unregister_kprobes(struct kprobe **kps, int num)
{
	int i;

	for (i = 0; i < num; i++)
		unregister_kprobe(kps[i]);
}

int register_kretprobe(struct kretprobe *rp)
{
	if (rp->data_size > sizeof(((struct kretprobe_instance *)0)->data))
		shim_fail("kretprobe data_size %zu too large", rp->data_size);
	return shim_kp_add(rp->kp.symbol_name, &rp->kp, rp);
}

void unregister_kretprobe(struct kretprobe *rp)
{
	shim_kp_del(rp->kp.symbol_name);
}

/* ---- CPU hotplug ---- */
int cpuhp_setup_state_nocalls(enum cpuhp_state state, const char *name,
			      int (*startup)(unsigned int cpu),
			      int (*teardown)(unsigned int cpu))
{
	(void)name;
	if (state != CPUHP_BP_PREPARE_DYN || startup || shim_cpuhp_teardown)
		shim_fail("cpuhp_setup_state_nocalls: unexpected use");
	shim_cpuhp_teardown = teardown;
	return 100;	/* a dynamic state */
}

void cpuhp_remove_state_nocalls(enum cpuhp_state state)
{
	if (state != 100 || !shim_cpuhp_teardown)
		shim_fail("cpuhp_remove_state_nocalls: unexpected state %d",
			  state);
	shim_cpuhp_teardown = NULL;
}

/* psi_mod.c's: there is no procfs here; the pid table takes the limit */
int psim_proc_read_uint(const char *path, unsigned int *v)
{
	(void)path;
	(void)v;
	return -ENOENT;
}
