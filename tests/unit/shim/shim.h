/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shim.h: the kernel API that src/psi_probes.c uses, in user space, so that
 * the unit tests run the real probe handlers (tests/unit/test_probes.c).
 * Every linux/... and trace/events/... header in this directory includes
 * only this file. It is a stand-in, not a kernel: one thread plays every
 * CPU, and the test says which CPU runs (shim_cpu) and when.
 *
 *  - per-CPU variables are arrays of NR_CPUS; smp_processor_id() is
 *    shim_cpu, set by the test;
 *  - each CPU has an "interrupts off" flag (local_irq_save/restore,
 *    raw_spin_lock_irqsave); lockdep_assert_irqs_disabled() checks it;
 *  - raw spinlocks fail the test (shim_fail(), a longjmp back to the test)
 *    on a double lock, an unlock of a lock not held, and a lock taken with
 *    interrupts on: the module's CPU locks are also taken under runqueue
 *    locks, so taking one with interrupts on can deadlock against an
 *    interrupt's wakeup (lockdep's HARDIRQ-ON-W vs IN-HARDIRQ-W);
 *  - shim_lock_hook, if set, is called before every acquisition with the
 *    number of locks held: the test can run another CPU's event there;
 *  - cpu_clock()/sched_clock() return shim_now;
 *  - registration functions record what was registered so the test calls
 *    the handlers as the kernel would.
 */
#ifndef SHIM_H
#define SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
typedef int pid_t;
typedef unsigned int gfp_t;

/* The version whose code paths are compiled; the Makefile may override. */
#ifndef SHIM_LINUX_VERSION
#define SHIM_LINUX_VERSION	KERNEL_VERSION(6, 1, 0)
#endif
#define KERNEL_VERSION(a, b, c)	(((a) << 16) + ((b) << 8) + ((c) > 255 ? 255 : (c)))
#define LINUX_VERSION_CODE	SHIM_LINUX_VERSION

#define CONFIG_SCHED_INFO	1
/* -DSHIM_CONFIG_PSI: a kernel with CONFIG_PSI (task_struct->psi_flags) */
#ifdef SHIM_CONFIG_PSI
#define CONFIG_PSI		1
#endif
#define CONFIG_MEMCG		1
#define CONFIG_COMPACTION	1
#define NR_CPUS			4
#define CONFIG_NR_CPUS		NR_CPUS
/* the kernel's is 4M on 64 bits; any limit above the test's pids will do */
#define PID_MAX_LIMIT		32768
#define HZ			250

#define BIT(nr)			(1UL << (nr))
#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#define noinline		__attribute__((noinline))
#define __acquires(x)
#define __releases(x)
#define ____cacheline_aligned_in_smp
#define READ_ONCE(x)		(*(volatile __typeof__(x) *)&(x))
#define data_race(x)		(x)
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))
#define cmpxchg(p, o, n)	__sync_val_compare_and_swap(p, o, n)
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define UINT_MAX		(~0U)
#define BUILD_BUG_ON(c)		_Static_assert(!(c), #c)
#define max(a, b)		((a) > (b) ? (a) : (b))
#define swap(a, b)		do { __typeof__(a) t_ = (a); (a) = (b); (b) = t_; } while (0)
#define array_size(a, b)	((size_t)(a) * (size_t)(b))
#define ENOENT			2
#define ENOMEM			12
#define pr_err(...)		fprintf(stderr, "psi_mod: " __VA_ARGS__)
#define pr_warn_once(...)	shim_quiet(__VA_ARGS__)
#define pr_warn(...)		shim_quiet(__VA_ARGS__)
#define pr_info(...)		shim_quiet(__VA_ARGS__)
#define pr_notice_once(...)	shim_quiet(__VA_ARGS__)

/* notices the tests do not want to see, arguments checked all the same */
__attribute__((format(printf, 1, 2)))
static inline void shim_quiet(const char *fmt, ...)
{
	(void)fmt;
}

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

#define EINVAL			22
#define __user
typedef unsigned int __poll_t;
typedef long ssize_t;

/* ---- atomics and static keys (the trigger fast path's kick) ---- */
typedef struct {
	int counter;
} atomic_t;

static inline int atomic_xchg(atomic_t *v, int n)
{
	int o = v->counter;

	v->counter = n;
	return o;
}

struct static_key_false {
	bool enabled;
};
#define DECLARE_STATIC_KEY_FALSE(name)	extern struct static_key_false name
#define DEFINE_STATIC_KEY_FALSE(name)	struct static_key_false name
#define static_branch_unlikely(key)	unlikely((key)->enabled)
#define static_branch_likely(key)	likely((key)->enabled)
#define static_branch_enable(key)	((key)->enabled = true)
#define static_branch_disable(key)	((key)->enabled = false)

/* ---- CPUs, interrupts, failure ---- */
extern int shim_cpu;			/* the CPU the code runs on */
extern bool shim_irqs_off[NR_CPUS];
extern int shim_nheld;			/* raw spinlocks held, all CPUs */
extern u64 shim_now;			/* every CPU's clock */

/*
 * A broken rule (lock misuse, an assertion): the message goes to shim_msg
 * and, if the test armed shim_jb, control goes back to its setjmp();
 * otherwise the program aborts.
 */
#include <setjmp.h>
extern jmp_buf shim_jb;
extern bool shim_jb_armed;
extern char shim_msg[512];
__attribute__((noreturn, format(printf, 1, 2)))
void shim_fail(const char *fmt, ...);

#define smp_processor_id()	(shim_cpu)
#define for_each_possible_cpu(cpu) for ((cpu) = 0; (cpu) < NR_CPUS; (cpu)++)

#define local_irq_save(flags)						\
	do {								\
		(flags) = shim_irqs_off[shim_cpu];			\
		shim_irqs_off[shim_cpu] = true;				\
	} while (0)
#define local_irq_restore(flags)	(shim_irqs_off[shim_cpu] = (flags))
#define lockdep_assert_irqs_disabled()					\
	do {								\
		if (!shim_irqs_off[shim_cpu])				\
			shim_fail("%s:%d: lockdep_assert_irqs_disabled() with interrupts on (cpu%d)", \
				  __func__, __LINE__, shim_cpu);	\
	} while (0)

/* ---- per-CPU data ---- */
#define DEFINE_PER_CPU_SHARED_ALIGNED(type, name)	type name[NR_CPUS]
#define per_cpu_ptr(ptr, cpu)	(&(*(ptr))[(cpu)])
#define this_cpu_ptr(ptr)	per_cpu_ptr(ptr, shim_cpu)

/* ---- raw spinlocks ---- */
typedef struct {
	int held;		/* 1 + the CPU holding it, 0 if free */
	int subclass;		/* lockdep's, while held */
} raw_spinlock_t;

extern void (*shim_lock_hook)(raw_spinlock_t *lock, const char *func);

/* run once, and cleared, at the next try_cmpxchg(): another CPU's turn */
extern void (*shim_cmpxchg_hook)(void);

static inline void shim_cmpxchg_turn(void)
{
	void (*h)(void) = shim_cmpxchg_hook;

	if (h) {
		shim_cmpxchg_hook = NULL;
		h();
	}
}

#define try_cmpxchg(p, po, n)						\
	(shim_cmpxchg_turn(),						\
	 __atomic_compare_exchange_n(p, po, n, 0, __ATOMIC_SEQ_CST,	\
				     __ATOMIC_SEQ_CST))
void shim_lock_sub(raw_spinlock_t *l, int subclass, const char *func);
void shim_unlock(raw_spinlock_t *l, const char *func);
#define shim_lock(l, func)	shim_lock_sub(l, 0, func)

/*
 * Lockdep's rule for the probes' locks, all of one class: a CPU that holds
 * one at a subclass takes no other at the same subclass ("possible
 * recursive locking"; lockdep then switches itself off).
 */
#define SINGLE_DEPTH_NESTING	1
#define raw_spin_lock_init(l)	((l)->held = 0)
#define raw_spin_lock(l)	shim_lock(l, __func__)
#define raw_spin_lock_nested(l, sub)	shim_lock_sub(l, sub, __func__)
#define raw_spin_unlock(l)	shim_unlock(l, __func__)
#define raw_spin_lock_irqsave(l, flags)					\
	do {								\
		local_irq_save(flags);					\
		shim_lock(l, __func__);					\
	} while (0)
#define raw_spin_unlock_irqrestore(l, flags)				\
	do {								\
		shim_unlock(l, __func__);				\
		local_irq_restore(flags);				\
	} while (0)

/*
 * ---- seqcounts: a write section only under its lock and never nested in
 * itself; a read that begins inside a write section fails the test (one
 * thread plays every CPU: it would spin for ever) ----
 */
typedef struct {
	unsigned int sequence;
	raw_spinlock_t *lock;
} seqcount_raw_spinlock_t;

void shim_seq_write(seqcount_raw_spinlock_t *s, bool begin, const char *func);
unsigned int shim_seq_read(const seqcount_raw_spinlock_t *s, const char *func);

#define seqcount_raw_spinlock_init(s, l)				\
	do {								\
		(s)->sequence = 0;					\
		(s)->lock = (l);					\
	} while (0)
#define write_seqcount_begin(s)		shim_seq_write(s, true, __func__)
#define write_seqcount_begin_nested(s, sub) shim_seq_write(s, true, __func__)
#define write_seqcount_end(s)		shim_seq_write(s, false, __func__)
#define read_seqcount_begin(s)		shim_seq_read(s, __func__)
#define read_seqcount_retry(s, seq)	((s)->sequence != (seq))

/* ---- tasks and clocks ---- */
#define TASK_RUNNING		0x0000
#define TASK_INTERRUPTIBLE	0x0001
#define TASK_UNINTERRUPTIBLE	0x0002
#define TASK_PARKED		0x0040
#define TASK_DEAD		0x0080

struct sched_info {
	unsigned long long last_queued;
};

struct sched_entity {
	unsigned char sched_delayed;
};

struct css_set;
struct task_struct {
	pid_t pid;
	unsigned int __state;
	unsigned int state;	/* before 5.14 */
	unsigned in_iowait:1;
	int cpu;		/* task_cpu() */
	struct sched_info sched_info;
	struct sched_entity se;
#ifdef CONFIG_PSI
	unsigned int psi_flags;
#endif
	struct css_set *cgroups;	/* linux/cgroup.h */
};

/*
 * The task list: the tasks the test registered (shim_task_add()), for
 * for_each_process_thread() and the pid lookup; RCU is a no-op here.
 */
#define SHIM_MAX_TASKS		128
extern struct task_struct *shim_tasks[SHIM_MAX_TASKS];
extern int shim_ntasks, shim_task_iter;
void shim_task_add(struct task_struct *t);
void shim_task_del(struct task_struct *t);
#define nr_cpu_ids		NR_CPUS
#define for_each_process_thread(g, t)					\
	for ((g) = NULL, shim_task_iter = 0;				\
	     (void)(g), shim_task_iter < shim_ntasks &&			\
	     ((t) = shim_tasks[shim_task_iter], true);			\
	     shim_task_iter++)
#define rcu_read_lock()		do { } while (0)
#define rcu_read_unlock()	do { } while (0)
#define rcu_dereference_sched(p)	(p)
#define rcu_access_pointer(p)	(p)

/* a struct pid is the task itself here */
struct pid;
struct pid_namespace {
	int level;
};
extern struct pid_namespace init_pid_ns;
enum pid_type { PIDTYPE_PID };
struct pid *find_pid_ns(int nr, struct pid_namespace *ns);

static inline struct task_struct *pid_task(struct pid *pid,
					   enum pid_type type)
{
	(void)type;
	return (struct task_struct *)pid;
}

/* ---- files (the module reads pid_max from procfs: shim.c has none) ---- */
struct file;
#define O_RDONLY		0
#define MAX_ERRNO		4095
#define ERR_PTR(e)		((void *)(long)(e))
#define IS_ERR(p)		((unsigned long)(p) >= (unsigned long)-MAX_ERRNO)

static inline int kstrtouint(const char *s, unsigned int base,
			     unsigned int *res)
{
	char *end;

	*res = strtoul(s, &end, base);
	return end == s ? -EINVAL : 0;
}

extern struct task_struct *shim_current[NR_CPUS];
#define current			(shim_current[shim_cpu])
#define task_cpu(p)		((unsigned int)(p)->cpu)

static inline u64 cpu_clock(int cpu)
{
	(void)cpu;
	return shim_now;
}

static inline u64 sched_clock(void)
{
	return shim_now;
}

/* ---- workqueues ---- */
struct work_struct;
struct delayed_work {
	bool pending;
	unsigned long queued;	/* times queued, for the tests */
	struct { unsigned long expires; } timer;	/* the jiffy set for */
	void (*fn)(struct work_struct *w);	/* INIT_DELAYED_WORK()'s */
};
struct workqueue_struct;
#define system_wq		((struct workqueue_struct *)NULL)
#define system_unbound_wq	((struct workqueue_struct *)NULL)

static inline bool delayed_work_pending(struct delayed_work *dw)
{
	return dw->pending;
}

static inline bool queue_delayed_work(struct workqueue_struct *wq,
				      struct delayed_work *dw,
				      unsigned long delay)
{
	(void)wq;
	if (dw->pending)
		return false;
	dw->pending = true;
	dw->timer.expires = shim_now / (1000000000ULL / HZ) + delay;
	dw->queued++;
	return true;
}

/* ---- timers ---- */
struct timer_list {
	unsigned long expires;
	unsigned long armed;	/* times armed, for the tests */
};
/* the tick count of the one clock, shim_now */
#define jiffies			((unsigned long)(shim_now / (1000000000ULL / HZ)))

#define from_timer(var, t, field)	container_of(t, __typeof__(*var), field)

static inline int mod_timer(struct timer_list *t, unsigned long expires)
{
	t->expires = expires;
	t->armed++;
	return 0;
}

/* ---- memory ---- */
static inline void *vzalloc(size_t n)
{
	return calloc(1, n);
}

static inline void vfree(const void *p)
{
	free((void *)p);
}

/* ---- tracepoints ---- */
struct tracepoint {
	const char *name;
	void *func;		/* the one probe registered, or NULL */
	void *data;
};

/* the fake tracepoints that for_each_kernel_tracepoint() offers */
extern struct tracepoint shim_tracepoints[];
extern int shim_ntracepoints;
struct tracepoint *shim_tp(const char *name);

void for_each_kernel_tracepoint(void (*fct)(struct tracepoint *, void *),
				void *priv);
int tracepoint_probe_register(struct tracepoint *tp, void *probe, void *data);
int tracepoint_probe_unregister(struct tracepoint *tp, void *probe,
				void *data);
static inline void tracepoint_synchronize_unregister(void)
{
}

/* register_trace_<tp>(): declared only, for PSIM_PROBE's type check */
#define SHIM_DECLARE_TRACE(name, ...)					\
	int register_trace_##name(void (*probe)(void *data, ##__VA_ARGS__), \
				  void *data)

/* ---- kprobes ---- */
struct pt_regs {
	unsigned long args[6];
};

static inline unsigned long regs_get_kernel_argument(struct pt_regs *regs,
						     unsigned int n)
{
	return regs->args[n];
}

struct kprobe;
typedef int (*kprobe_pre_handler_t)(struct kprobe *, struct pt_regs *);

struct kprobe {
	const char *symbol_name;
	kprobe_pre_handler_t pre_handler;
};

struct kretprobe_instance {
	char data[64] __attribute__((aligned(16)));
};

typedef int (*kretprobe_handler_t)(struct kretprobe_instance *,
				   struct pt_regs *);

struct kretprobe {
	struct kprobe kp;
	kretprobe_handler_t handler;
	kretprobe_handler_t entry_handler;
	size_t data_size;
};

/* what is registered, by symbol; the test can make a symbol fail */
struct kprobe *shim_kprobe(const char *symbol);
struct kretprobe *shim_kretprobe(const char *symbol);
extern const char *shim_kprobe_missing[4];	/* symbols to refuse */
int register_kprobe(struct kprobe *kp);
void unregister_kprobe(struct kprobe *kp);
int register_kprobes(struct kprobe **kps, int num);
void unregister_kprobes(struct kprobe **kps, int num);
int register_kretprobe(struct kretprobe *rp);
void unregister_kretprobe(struct kretprobe *rp);

/* ---- CPU hotplug ---- */
enum cpuhp_state {
	CPUHP_INVALID = -1,
	CPUHP_BP_PREPARE_DYN = 40,
};

extern int (*shim_cpuhp_teardown)(unsigned int cpu);
int cpuhp_setup_state_nocalls(enum cpuhp_state state, const char *name,
			      int (*startup)(unsigned int cpu),
			      int (*teardown)(unsigned int cpu));
void cpuhp_remove_state_nocalls(enum cpuhp_state state);

#endif /* SHIM_H */
