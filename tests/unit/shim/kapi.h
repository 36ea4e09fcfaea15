/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kapi.h: the rest of the kernel API shim (shim.h), what src/psi_aggregate.c
 * and src/psi_triggers.c use besides the probes' part: mutexes, an rwsem,
 * lists, wait queues, timers, delayed work, a kernel thread, kmalloc, file
 * credentials, jiffies. The linux/... headers that only these files
 * include come here. Still one thread plays everything, and the test says
 * what runs when:
 *
 *  - sleeping locks fail the test (shim_fail()) on a double lock, an
 *    unlock of a lock not held, and a lock taken with interrupts off (a
 *    sleep in atomic context: the probes' side takes none);
 *  - jiffies follows the one clock, shim_now (shim.h); msleep()
 *    advances it and first calls shim_msleep_hook, where the test plays
 *    what other tasks do meanwhile (a woken poller polling again, leaving
 *    its queue);
 *  - a timer fires, and a delayed work runs, when the test says
 *    (shim_timer_fire(), shim_work_run());
 *  - a kernel thread runs when the test says (shim_kthread_run()) until
 *    it would sleep in wait_event_interruptible(): that returns to the
 *    test, and its next run starts the thread function over. That is
 *    the thread's own behaviour only for a function that keeps nothing
 *    across its sleeps, a loop around wait_event_interruptible() (the
 *    fast path's thread is one); sleeping with a mutex held fails;
 *  - kzalloc/kfree count what is live (shim_kmalloc_live), and
 *    shim_kmalloc_fail makes the next allocations fail.
 */
#ifndef SHIM_KAPI_H
#define SHIM_KAPI_H

#include "shim.h"

#define NSEC_PER_USEC		1000ULL
#define NSEC_PER_MSEC		1000000ULL
#define NSEC_PER_SEC		1000000000ULL
#define U32_MAX			((u32)~0U)
#define U64_MAX			((u64)~0ULL)
#define EIO			5
#define EINTR			4
#define EFAULT			14
#define EBUSY			16
#define ENODEV			19
#define EPERM			1

#define min(a, b)		((a) < (b) ? (a) : (b))
#define min_t(type, a, b)	min((type)(a), (type)(b))
#define container_of(ptr, type, member)					\
	((type *)((char *)(ptr) - offsetof(type, member)))

/* the type may be an array type: u64 [2][8] */
#define DEFINE_PER_CPU(type, name)	__typeof__(type) name[NR_CPUS]
#define per_cpu(var, cpu)		((var)[(cpu)])
#define raw_smp_processor_id()	(shim_cpu)
#define for_each_online_cpu(cpu) for_each_possible_cpu(cpu)
#define smp_mb()		__sync_synchronize()
#define smp_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)
#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define cond_resched()		do { } while (0)
#define synchronize_rcu()	(shim_rcu_syncs++)
extern unsigned long shim_rcu_syncs;

/* a warning the kernel would print with a backtrace: counted */
extern unsigned long shim_warnings;
#define WARN_ON_ONCE(c)		({ bool w_ = !!(c); if (w_) shim_warnings++; w_; })

static inline void atomic_set(atomic_t *v, int n)
{
	v->counter = n;
}

static inline int atomic_read(const atomic_t *v)
{
	return v->counter;
}

/* the counters' atomics: single-threaded here, so plain arithmetic */
typedef struct {
	long counter;
} atomic_long_t;
typedef struct {
	long long counter;
} atomic64_t;
#define atomic_long_inc(v)	((void)((v)->counter++))
#define atomic_long_dec(v)	((void)((v)->counter--))
#define atomic_long_set(v, n)	((void)((v)->counter = (n)))
#define atomic_long_read(v)	((v)->counter)
#define atomic64_add(n, v)	((void)((v)->counter += (n)))
#define atomic64_set(v, n)	((void)((v)->counter = (n)))
#define atomic64_read(v)	((v)->counter)

static inline int atomic_cmpxchg(atomic_t *v, int o, int n)
{
	int c = v->counter;

	if (c == o)
		v->counter = n;
	return c;
}

/* ---- time: jiffies is shim_now in ticks ---- */
#define SHIM_NSEC_PER_JIFFY	(NSEC_PER_SEC / HZ)
#define time_after(a, b)	((long)((b) - (a)) < 0)
#define time_after_eq(a, b)	((long)((a) - (b)) >= 0)

static inline unsigned long nsecs_to_jiffies(u64 n)
{
	return n / SHIM_NSEC_PER_JIFFY;
}

static inline u64 jiffies_to_nsecs(unsigned long j)
{
	return (u64)j * SHIM_NSEC_PER_JIFFY;
}

static inline unsigned long msecs_to_jiffies(unsigned int m)
{
	return (m + 1000 / HZ - 1) / (1000 / HZ);
}

extern void (*shim_msleep_hook)(unsigned int ms);
void msleep(unsigned int ms);

/* ---- sleeping locks ---- */
struct mutex {
	int held;
};

#define DEFINE_MUTEX(n)		struct mutex n = { 0 }
#define mutex_init(m)		((m)->held = 0)
extern int shim_mutexes_held;
void shim_mutex(struct mutex *m, bool lock, const char *func);
#define mutex_lock(m)		shim_mutex(m, true, __func__)
#define mutex_unlock(m)		shim_mutex(m, false, __func__)
#define lockdep_is_held(m)	((m)->held)
#define lockdep_assert_held(m)						\
	do {								\
		if (!(m)->held)						\
			shim_fail("%s: lock not held", __func__);	\
	} while (0)

struct rw_semaphore {
	int readers;
	bool writer;
};

#define DECLARE_RWSEM(n)	struct rw_semaphore n = { 0, false }
#define init_rwsem(s)		((s)->readers = 0, (s)->writer = false)
void shim_rwsem(struct rw_semaphore *s, bool write, bool lock,
		const char *func);
#define down_read(s)		shim_rwsem(s, false, true, __func__)
#define up_read(s)		shim_rwsem(s, false, false, __func__)
#define down_write(s)		shim_rwsem(s, true, true, __func__)
#define up_write(s)		shim_rwsem(s, true, false, __func__)

/* a wait queue's lock: a plain spinlock, checked for double locking */
typedef struct {
	int held;
} spinlock_t;

void shim_spin(spinlock_t *l, bool lock, const char *func);
#define DEFINE_SPINLOCK(n)	spinlock_t n = { 0 }
#define spin_lock_init(l)	((l)->held = 0)
#define spin_lock_irq(l)	shim_spin(l, true, __func__)
#define spin_unlock_irq(l)	shim_spin(l, false, __func__)
#define spin_lock_irqsave(l, flags)	((flags) = 0, shim_spin(l, true, __func__))
#define spin_unlock_irqrestore(l, flags) ((void)(flags), shim_spin(l, false, __func__))
/*
 * Called as a spinlock is about to be taken, before the double-lock
 * check: the test plays there what another CPU does just before (a
 * cgroup's release probe while the load's walk is about to take the lock).
 */
extern void (*shim_spin_hook)(spinlock_t *l);

/* ---- lists ---- */
struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(n)	{ &(n), &(n) }
#define LIST_HEAD(n)		struct list_head n = LIST_HEAD_INIT(n)

static inline void INIT_LIST_HEAD(struct list_head *l)
{
	l->next = l;
	l->prev = l;
}

static inline void list_add(struct list_head *n, struct list_head *head)
{
	n->next = head->next;
	n->prev = head;
	head->next->prev = n;
	head->next = n;
}

static inline void list_add_tail(struct list_head *n, struct list_head *head)
{
	list_add(n, head->prev);
}

static inline void list_del(struct list_head *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	e->next = (struct list_head *)0x100;	/* LIST_POISON1 */
	e->prev = (struct list_head *)0x122;	/* LIST_POISON2 */
}

static inline void list_del_init(struct list_head *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	INIT_LIST_HEAD(e);
}

static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

/* hlists, as the kernel's; no RCU in one thread */
struct hlist_node {
	struct hlist_node *next, **pprev;
};

struct hlist_head {
	struct hlist_node *first;
};

static inline void hlist_add_head(struct hlist_node *n, struct hlist_head *h)
{
	n->next = h->first;
	if (h->first)
		h->first->pprev = &n->next;
	h->first = n;
	n->pprev = &h->first;
}

static inline void hlist_del(struct hlist_node *n)
{
	*n->pprev = n->next;
	if (n->next)
		n->next->pprev = n->pprev;
	n->next = (struct hlist_node *)0x100;
	n->pprev = (struct hlist_node **)0x122;
}

/* one thread: the _rcu walk is the plain one; its lockdep condition unused */
#define hlist_for_each_entry_rcu(pos, head, member, ...)			\
	for ((pos) = (head)->first ?					\
		     container_of((head)->first, __typeof__(*(pos)), member) : NULL; \
	     (pos);							\
	     (pos) = (pos)->member.next ?				\
		     container_of((pos)->member.next, __typeof__(*(pos)), member) : NULL)
#define list_entry(p, type, member)	container_of(p, type, member)
#define list_for_each_entry(pos, head, member)				\
	for ((pos) = list_entry((head)->next, __typeof__(*(pos)), member); \
	     &(pos)->member != (head);					\
	     (pos) = list_entry((pos)->member.next, __typeof__(*(pos)), member))
#define list_first_entry_or_null(head, type, member)			\
	((head)->next != (head) ? list_entry((head)->next, type, member) : NULL)
#define list_for_each_entry_safe_reverse(pos, n, head, member)		\
	for ((pos) = list_entry((head)->prev, __typeof__(*(pos)), member), \
	     (n) = list_entry((pos)->member.prev, __typeof__(*(pos)), member); \
	     &(pos)->member != (head);					\
	     (pos) = (n),						\
	     (n) = list_entry((n)->member.prev, __typeof__(*(n)), member))
#define list_for_each_entry_safe(pos, n, head, member)			\
	for ((pos) = list_entry((head)->next, __typeof__(*(pos)), member), \
	     (n) = list_entry((pos)->member.next, __typeof__(*(pos)), member); \
	     &(pos)->member != (head);					\
	     (pos) = (n),						\
	     (n) = list_entry((n)->member.next, __typeof__(*(n)), member))

/* ---- lockdep keys, kmemleak ---- */
struct lock_class_key {
	int registered;
};

void lockdep_register_key(struct lock_class_key *key);
void lockdep_unregister_key(struct lock_class_key *key);
extern int shim_lockdep_keys;		/* registered now */
extern unsigned long shim_kmemleak_not_leak;
#define kmemleak_not_leak(p)	((void)(p), shim_kmemleak_not_leak++)

/* ---- memory ---- */
#define GFP_KERNEL		0x1u
#define GFP_KERNEL_ACCOUNT	0x2u
#define GFP_ATOMIC		0x4u
#define __GFP_NOWARN		0x8u
extern long shim_kmalloc_live;		/* allocated and not freed */
extern int shim_kmalloc_fail;		/* fail this many next ones */
void *kzalloc(size_t n, gfp_t gfp);
void kfree(const void *p);
#define kzalloc_node(n, gfp, node)	((void)(node), kzalloc((n), (gfp)))
/*
 * Slab caches: their objects are kzalloc()'s (counted and failed as
 * those); a cache counts its own, and destroying one that has any left
 * fails the test, as the kernel warns. shim_kmem_cache_fail = n makes
 * the n-th creation from now fail; the caches made and not destroyed are
 * shim_kmem_caches.
 */
#define __GFP_ZERO		0x10u
#define SLAB_HWCACHE_ALIGN	0x1u
struct kmem_cache {
	const char *name;
	size_t size;
	long live;
};
extern int shim_kmem_cache_fail;
extern int shim_kmem_caches;
struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
				     unsigned int align, unsigned long flags,
				     void (*ctor)(void *));
void kmem_cache_destroy(struct kmem_cache *s);
void *kmem_cache_alloc_node(struct kmem_cache *s, gfp_t gfp, int node);
#define kmem_cache_zalloc(s, gfp)	kmem_cache_alloc_node((s), (gfp) | __GFP_ZERO, 0)
void kmem_cache_free(struct kmem_cache *s, void *p);
#define cpu_to_node(cpu)	((void)(cpu), 0)
#define struct_size(p, member, n)					\
	(sizeof(*(p)) + (size_t)(n) * sizeof((p)->member[0]))
struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
};

/* one thread, no reader left: the grace period is over at once */
#define kfree_rcu(p, field)	kfree(p)

static inline size_t strscpy(char *dst, const char *src, size_t n)
{
	size_t len = strnlen(src, n - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
	return len;
}

/* ---- poll and wait queues ---- */
#define EPOLLIN			0x0001u
#define EPOLLPRI		0x0002u
#define EPOLLOUT		0x0004u
#define EPOLLERR		0x0008u
#define EPOLLHUP		0x0010u
#define EPOLLRDNORM		0x0040u
#define EPOLLWRNORM		0x0100u
#define POLLFREE		0x4000u
#define DEFAULT_POLLMASK	(EPOLLIN | EPOLLOUT | EPOLLRDNORM | EPOLLWRNORM)
#define poll_to_key(m)		((void *)(uintptr_t)(m))
#define key_to_poll(k)		((__poll_t)(uintptr_t)(k))
#define TASK_NORMAL		(TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE)

struct wait_queue_entry;
typedef int (*wait_queue_func_t)(struct wait_queue_entry *e,
				 unsigned int mode, int flags, void *key);

struct wait_queue_entry {
	unsigned int flags;
	void *private;
	wait_queue_func_t func;
	struct list_head entry;
};

struct wait_queue_head {
	spinlock_t lock;
	struct list_head head;
};
typedef struct wait_queue_head wait_queue_head_t;

#define DECLARE_WAIT_QUEUE_HEAD(n)					\
	struct wait_queue_head n = { { 0 }, LIST_HEAD_INIT(n.head) }

void __init_waitqueue_head(struct wait_queue_head *wq, const char *name,
			   struct lock_class_key *key);
void add_wait_queue(struct wait_queue_head *wq, struct wait_queue_entry *e);
void remove_wait_queue(struct wait_queue_head *wq,
		       struct wait_queue_entry *e);
void __wake_up(struct wait_queue_head *wq, unsigned int mode, int nr,
	       void *key);
#define wake_up_interruptible(wq) __wake_up(wq, TASK_INTERRUPTIBLE, 1, NULL)
#define wake_up_poll(wq, m)	__wake_up(wq, TASK_NORMAL, 1, poll_to_key(m))

struct file;
struct poll_table_struct;
typedef void (*poll_queue_proc)(struct file *f, struct wait_queue_head *wq,
				struct poll_table_struct *pt);
typedef struct poll_table_struct {
	poll_queue_proc _qproc;
	__poll_t _key;
} poll_table;

static inline void poll_wait(struct file *f, struct wait_queue_head *wq,
			     poll_table *p)
{
	if (p && p->_qproc && wq)
		p->_qproc(f, wq, p);
}

/* ---- kernel threads ---- */
struct task_struct *kthread_create(int (*fn)(void *data), void *data,
				   const char *name);
void sched_set_fifo_low(struct task_struct *p);
int wake_up_process(struct task_struct *p);
bool kthread_should_stop(void);
int kthread_stop(struct task_struct *p);
#define PTR_ERR(p)		((long)(p))
extern long shim_kthread_create_err;	/* the next kthread_create() fails */
extern int shim_kthreads_live;
/* run @p until it sleeps (0) or returns (1) */
int shim_kthread_run(struct task_struct *p);
__attribute__((noreturn)) void shim_kthread_sleep(const char *func);
#define wait_event_interruptible(wq, cond)				\
	({								\
		(void)(wq);						\
		if (!(cond))						\
			shim_kthread_sleep(__func__);			\
		0;							\
	})

/* ---- timers and delayed work, run when the test says ---- */
void timer_setup(struct timer_list *t, void (*fn)(struct timer_list *t),
		 unsigned int flags);
int del_timer_sync(struct timer_list *t);
int timer_shutdown_sync(struct timer_list *t);
bool shim_timer_pending(struct timer_list *t);
bool shim_timer_fire(struct timer_list *t);

struct work_struct;
void shim_work_register(struct delayed_work *dw,
			void (*fn)(struct work_struct *w));
#define DECLARE_DELAYED_WORK(n, fn)					\
	extern struct delayed_work n;					\
	static void __attribute__((constructor)) shim_work_init_##n(void) \
	{								\
		shim_work_register(&n, fn);				\
	}								\
	struct delayed_work n
bool cancel_delayed_work_sync(struct delayed_work *dw);
bool shim_work_run(struct delayed_work *dw);
#define INIT_DELAYED_WORK(dw, f)					\
	do {								\
		(dw)->pending = false;					\
		(dw)->fn = (f);						\
	} while (0)
#define to_delayed_work(w)	((struct delayed_work *)(w))

/*
 * Work after a grace period (queue_rcu_work()): queued here, run by
 * rcu_barrier() (destroy_workqueue() finds nothing left) or when the test
 * says (shim_rcu_works_run()), as a grace period and a kworker would.
 */
struct rcu_work {
	void (*fn)(struct work_struct *w);
	struct rcu_work *next;
};
#define WQ_UNBOUND		0x2u
#define INIT_RCU_WORK(rw, f)	((rw)->fn = (f))
#define to_rcu_work(w)		((struct rcu_work *)(w))
struct workqueue_struct *alloc_workqueue(const char *name, unsigned int flags,
					 int max_active);
void destroy_workqueue(struct workqueue_struct *wq);
bool queue_rcu_work(struct workqueue_struct *wq, struct rcu_work *rw);
void rcu_barrier(void);
int shim_rcu_works_run(void);	/* returns how many ran */
extern int shim_wq_live;	/* workqueues not destroyed */

/*
 * Plain work (DECLARE_WORK()): queued here, run when the test says
 * (shim_plain_works_run()) or by flush_work(), as a kworker would.
 */
struct work_struct {
	bool pending;
	void (*fn)(struct work_struct *w);
};
#define DECLARE_WORK(n, f)	struct work_struct n = { .fn = (f) }
bool queue_work(struct workqueue_struct *wq, struct work_struct *w);
bool flush_work(struct work_struct *w);
int shim_plain_works_run(void);	/* returns how many ran */
char *kstrdup(const char *s, gfp_t gfp);
#define NAME_MAX		255

/*
 * procfs as the cgroup files' code uses it (psi_cgroup.c): directories
 * made by the stand-in psim_proc_cgroup_dir() (kapi.c), a registry that
 * fails the test on a removal of what is gone already.
 */
struct proc_dir_entry;
void proc_remove(struct proc_dir_entry *de);
extern int shim_proc_live;		/* directories not removed */
extern int shim_cgroupfs_live, shim_cgroupfs_fail;	/* psim_cgroupfs_up/down() */
extern int shim_proc_fail;		/* fail the next directories */
/* called as a directory is made, before anything else */
extern void (*shim_proc_hook)(const char *name);
/* the live directory @name under @parent (NULL: the top), or NULL */
struct proc_dir_entry *shim_proc_find(struct proc_dir_entry *parent,
				      const char *name);
void *shim_proc_group(struct proc_dir_entry *de);	/* its group */
unsigned int shim_proc_uid(struct proc_dir_entry *de);	/* its owner */

/* ---- files and credentials ---- */
typedef struct { unsigned int val; } kuid_t;
typedef struct { unsigned int val; } kgid_t;
#define GLOBAL_ROOT_UID		((kuid_t){ 0 })
#define GLOBAL_ROOT_GID		((kgid_t){ 0 })
extern kuid_t shim_fsuid;		/* current_fsuid() */
extern kgid_t shim_fsgid;
#define current_fsuid()		(shim_fsuid)
#define current_fsgid()		(shim_fsgid)
#define CAP_SYS_RESOURCE	24
typedef u64 kernel_cap_t;
#define cap_raised(c, flag)	(((c) & (1ULL << (flag))) != 0)

struct cred {
	kernel_cap_t cap_effective;
};

struct seq_file {
	struct mutex lock;
	void *private;
	char *buf;		/* seq_printf() appends here, NUL-terminated */
	size_t size, count;
};

/* no format check: the shim's u64 is unsigned long, the kernel's %llu's */
void seq_printf(struct seq_file *m, const char *fmt, ...);

struct file {
	void *private_data;
	const struct cred *f_cred;
};

/* ---- user copies (psi_proc.c is not linked: see kapi.c) ---- */
extern bool shim_uaccess_fault;		/* the user's buffer is not there */

#endif /* SHIM_KAPI_H */
