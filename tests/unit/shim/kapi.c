// SPDX-License-Identifier: GPL-2.0
/* The state and the functions of the rest of the kernel API shim (kapi.h). */
#include <stdarg.h>
#include <stdio.h>

#include "kapi.h"
#include "linux/cgroup.h"
#include "psi_mod.h"

unsigned long shim_warnings;
void (*shim_msleep_hook)(unsigned int ms);
int shim_mutexes_held;
int shim_lockdep_keys;
unsigned long shim_kmemleak_not_leak;
long shim_kmalloc_live;
int shim_kmalloc_fail;
long shim_kthread_create_err;
int shim_kthreads_live;
bool shim_uaccess_fault;

void msleep(unsigned int ms)
{
	if (shim_irqs_off[shim_cpu] || shim_nheld)
		shim_fail("msleep(%u) in atomic context", ms);
	if (shim_msleep_hook)
		shim_msleep_hook(ms);
	shim_now += ms * NSEC_PER_MSEC;
}

/* ---- locks ---- */
void shim_mutex(struct mutex *m, bool lock, const char *func)
{
	if (lock) {
		if (shim_irqs_off[shim_cpu] || shim_nheld)
			shim_fail("%s: mutex taken in atomic context", func);
		if (m->held)
			shim_fail("%s: mutex taken twice (deadlock)", func);
		m->held = 1;
		shim_mutexes_held++;
	} else {
		if (!m->held)
			shim_fail("%s: unlock of a mutex not held", func);
		m->held = 0;
		shim_mutexes_held--;
	}
}

void shim_rwsem(struct rw_semaphore *s, bool write, bool lock,
		const char *func)
{
	if (lock && (shim_irqs_off[shim_cpu] || shim_nheld))
		shim_fail("%s: rwsem taken in atomic context", func);
	if (lock && s->writer)
		shim_fail("%s: rwsem taken while written (deadlock)", func);
	if (write) {
		if (lock && s->readers)
			shim_fail("%s: rwsem written while read (deadlock)",
				  func);
		if (!lock && !s->writer)
			shim_fail("%s: up_write() without down_write()", func);
		s->writer = lock;
	} else {
		if (!lock && !s->readers)
			shim_fail("%s: up_read() without down_read()", func);
		s->readers += lock ? 1 : -1;
	}
}

void (*shim_spin_hook)(spinlock_t *l);

void shim_spin(spinlock_t *l, bool lock, const char *func)
{
	if (lock && shim_spin_hook)
		shim_spin_hook(l);
	if (lock == !!l->held)
		shim_fail("%s: spinlock %s twice", func,
			  lock ? "locked" : "unlocked");
	l->held = lock;
}

/* ---- lockdep keys, memory ---- */
void lockdep_register_key(struct lock_class_key *key)
{
	if (key->registered)
		shim_fail("lockdep key registered twice");
	key->registered = 1;
	shim_lockdep_keys++;
}

void lockdep_unregister_key(struct lock_class_key *key)
{
	if (!key->registered)
		shim_fail("lockdep key unregistered but not registered");
	key->registered = 0;
	shim_lockdep_keys--;
}

void *kzalloc(size_t n, gfp_t gfp)
{
	void *p;

	(void)gfp;
	if (shim_kmalloc_fail > 0) {
		shim_kmalloc_fail--;
		return NULL;
	}
	p = calloc(1, n);
	if (p)
		shim_kmalloc_live++;
	return p;
}

void kfree(const void *p)
{
	if (!p)
		return;
	shim_kmalloc_live--;
	free((void *)p);
}

int shim_kmem_cache_fail;
int shim_kmem_caches;

struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
				     unsigned int align, unsigned long flags,
				     void (*ctor)(void *))
{
	struct kmem_cache *s;

	(void)align;
	(void)flags;
	if (ctor)
		shim_fail("kmem_cache_create(%s): a constructor", name);
	if (shim_kmem_cache_fail > 0 && --shim_kmem_cache_fail == 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		abort();
	s->name = name;
	s->size = size;
	shim_kmem_caches++;
	return s;
}

void kmem_cache_destroy(struct kmem_cache *s)
{
	if (!s)
		return;
	if (s->live)
		shim_fail("kmem_cache_destroy(%s): %ld object(s) left", s->name,
			  s->live);
	shim_kmem_caches--;
	free(s);
}

void *kmem_cache_alloc_node(struct kmem_cache *s, gfp_t gfp, int node)
{
	void *p;

	(void)node;
	if (!(gfp & __GFP_ZERO))
		shim_fail("kmem_cache_alloc(%s) without __GFP_ZERO: the shim zeroes",
			  s->name);
	p = kzalloc(s->size, gfp);
	if (p)
		s->live++;
	return p;
}

void kmem_cache_free(struct kmem_cache *s, void *p)
{
	if (!p)
		shim_fail("kmem_cache_free(%s, NULL)", s->name);
	if (s->live <= 0)
		shim_fail("kmem_cache_free(%s): more frees than allocations",
			  s->name);
	s->live--;
	kfree(p);
}

/* ---- wait queues ---- */
void __init_waitqueue_head(struct wait_queue_head *wq, const char *name,
			   struct lock_class_key *key)
{
	(void)name;
	if (!key || !key->registered)
		shim_fail("wait queue initialised with an unregistered key");
	spin_lock_init(&wq->lock);
	INIT_LIST_HEAD(&wq->head);
}

void add_wait_queue(struct wait_queue_head *wq, struct wait_queue_entry *e)
{
	spin_lock_irq(&wq->lock);
	list_add_tail(&e->entry, &wq->head);
	spin_unlock_irq(&wq->lock);
}

void remove_wait_queue(struct wait_queue_head *wq, struct wait_queue_entry *e)
{
	spin_lock_irq(&wq->lock);
	list_del(&e->entry);
	spin_unlock_irq(&wq->lock);
}

/* Every entry's function, under the queue's lock (no exclusive waiters). */
void __wake_up(struct wait_queue_head *wq, unsigned int mode, int nr,
	       void *key)
{
	struct wait_queue_entry *e, *n;

	(void)nr;
	spin_lock_irq(&wq->lock);
	list_for_each_entry_safe(e, n, &wq->head, entry)
		e->func(e, mode, 0, key);
	spin_unlock_irq(&wq->lock);
}

/* ---- kernel threads ---- */
struct shim_kthread {
	struct task_struct task;	/* first: what the caller sees */
	int (*fn)(void *data);
	void *data;
	bool started, should_stop, exited;
	int ret;
};

static struct shim_kthread *shim_kt_cur;
static jmp_buf shim_kt_jb;
static int shim_kt_pid = 30000;

struct task_struct *kthread_create(int (*fn)(void *data), void *data,
				   const char *name)
{
	struct shim_kthread *k;

	(void)name;
	if (shim_kthread_create_err) {
		long err = shim_kthread_create_err;

		shim_kthread_create_err = 0;
		return ERR_PTR(err);
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return ERR_PTR(-ENOMEM);
	k->task.pid = shim_kt_pid++;
	k->fn = fn;
	k->data = data;
	shim_kthreads_live++;
	return &k->task;
}

void sched_set_fifo_low(struct task_struct *p)
{
	(void)p;
}

int wake_up_process(struct task_struct *p)
{
	struct shim_kthread *k = container_of(p, struct shim_kthread, task);

	k->started = true;
	return 1;
}

bool kthread_should_stop(void)
{
	if (!shim_kt_cur)
		shim_fail("kthread_should_stop() outside a kernel thread");
	return shim_kt_cur->should_stop;
}

int shim_kthread_run(struct task_struct *p)
{
	static struct task_struct *was;
	struct shim_kthread *k = container_of(p, struct shim_kthread, task);

	if (shim_kt_cur)
		shim_fail("a kernel thread runs another");
	if (!k->started || k->exited)
		return k->exited;
	shim_kt_cur = k;
	was = shim_current[shim_cpu];
	shim_current[shim_cpu] = p;
	if (!setjmp(shim_kt_jb)) {
		k->ret = k->fn(k->data);
		k->exited = true;
	}
	shim_current[shim_cpu] = was;
	shim_kt_cur = NULL;
	return k->exited;
}

void shim_kthread_sleep(const char *func)
{
	if (!shim_kt_cur)
		shim_fail("%s: waits outside a kernel thread (for ever)", func);
	if (shim_mutexes_held)
		shim_fail("%s: the kernel thread sleeps holding a mutex", func);
	longjmp(shim_kt_jb, 1);
}

int kthread_stop(struct task_struct *p)
{
	struct shim_kthread *k = container_of(p, struct shim_kthread, task);
	int ret;

	k->should_stop = true;
	k->started = true;
	if (!shim_kthread_run(p))
		shim_fail("kthread_stop(): the thread did not return");
	ret = k->ret;
	free(k);
	shim_kthreads_live--;
	return ret;
}

/* ---- timers: armed if mod_timer() ran since the last fire or delete ---- */
static struct {
	struct timer_list *t;
	void (*fn)(struct timer_list *t);
	unsigned long done;		/* t->armed at the last fire/delete */
} shim_timers[8];

static int shim_timer_slot(struct timer_list *t, bool add)
{
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(shim_timers); i++)
		if (shim_timers[i].t == t)
			return i;
	if (!add)
		shim_fail("a timer that was never set up");
	for (i = 0; i < (int)ARRAY_SIZE(shim_timers); i++)
		if (!shim_timers[i].t)
			return i;
	shim_fail("too many timers");
}

void timer_setup(struct timer_list *t, void (*fn)(struct timer_list *t),
		 unsigned int flags)
{
	int i = shim_timer_slot(t, true);

	(void)flags;
	memset(t, 0, sizeof(*t));
	shim_timers[i].t = t;
	shim_timers[i].fn = fn;
	shim_timers[i].done = 0;
}

bool shim_timer_pending(struct timer_list *t)
{
	return t->armed != shim_timers[shim_timer_slot(t, false)].done;
}

int del_timer_sync(struct timer_list *t)
{
	int i = shim_timer_slot(t, false);
	bool was = shim_timer_pending(t);

	shim_timers[i].done = t->armed;
	return was;
}

/* the timer is dead for good: its slot is free for another one */
int timer_shutdown_sync(struct timer_list *t)
{
	int was = del_timer_sync(t);

	shim_timers[shim_timer_slot(t, false)].t = NULL;
	return was;
}

/* In softirq context: interrupts on, on the current CPU. */
bool shim_timer_fire(struct timer_list *t)
{
	int i = shim_timer_slot(t, false);

	if (!shim_timer_pending(t))
		return false;
	shim_timers[i].done = t->armed;
	shim_timers[i].fn(t);
	return true;
}

/* ---- delayed work ---- */
static struct {
	struct delayed_work *dw;
	void (*fn)(struct work_struct *w);
} shim_works[4];

void shim_work_register(struct delayed_work *dw,
			void (*fn)(struct work_struct *w))
{
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(shim_works); i++) {
		if (!shim_works[i].dw) {
			shim_works[i].dw = dw;
			shim_works[i].fn = fn;
			return;
		}
	}
	abort();
}

bool cancel_delayed_work_sync(struct delayed_work *dw)
{
	bool was = dw->pending;

	dw->pending = false;
	return was;
}

/* Run @dw's function if it is queued, as a kworker does. */
bool shim_work_run(struct delayed_work *dw)
{
	int i;

	if (!dw->pending)
		return false;
	if (dw->fn) {
		dw->pending = false;
		dw->fn((struct work_struct *)dw);
		return true;
	}
	for (i = 0; i < (int)ARRAY_SIZE(shim_works); i++) {
		if (shim_works[i].dw == dw) {
			dw->pending = false;
			shim_works[i].fn((struct work_struct *)dw);
			return true;
		}
	}
	shim_fail("a delayed work that was never declared");
}

/*
 * psi_proc.c's copy of a write's buffer, which is not linked (its page
 * fault handling needs the mm): the user's bytes as copy_from_user() with
 * page faults disabled gives them, or -EFAULT when the test says the
 * buffer is not there.
 */
int psim_copy_from_user(void *dst, const void __user *src, size_t len)
{
	if (shim_irqs_off[shim_cpu] || shim_nheld)
		shim_fail("copy from user space in atomic context");
	if (shim_uaccess_fault)
		return -EFAULT;
	memcpy(dst, (const void *)src, len);
	return 0;
}

/* ---- seq_file ---- */
void seq_printf(struct seq_file *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (m->count >= m->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(m->buf + m->count, m->size - m->count, fmt, ap);
	va_end(ap);
	if (n > 0)
		m->count = m->count + n < m->size ? m->count + n : m->size;
}

/* ---- plain work ---- */
static struct work_struct *shim_plain_works[4];

bool queue_work(struct workqueue_struct *wq, struct work_struct *w)
{
	int i, free = -1;

	(void)wq;
	if (w->pending)
		return false;
	for (i = 0; i < (int)ARRAY_SIZE(shim_plain_works); i++) {
		if (shim_plain_works[i] == w)
			free = i;
		else if (!shim_plain_works[i] && free < 0)
			free = i;
	}
	if (free < 0)
		shim_fail("too many plain works");
	shim_plain_works[free] = w;
	w->pending = true;
	return true;
}

bool flush_work(struct work_struct *w)
{
	bool ran = false;

	while (w->pending) {
		w->pending = false;
		w->fn(w);
		ran = true;
	}
	return ran;
}

int shim_plain_works_run(void)
{
	int i, n = 0;

	for (i = 0; i < (int)ARRAY_SIZE(shim_plain_works); i++)
		if (shim_plain_works[i] && flush_work(shim_plain_works[i]))
			n++;
	return n;
}

char *kstrdup(const char *s, gfp_t gfp)
{
	char *p = kzalloc(strlen(s) + 1, gfp);

	if (p)
		strcpy(p, s);
	return p;
}

/* ---- procfs: the cgroup files' directories ---- */
struct proc_dir_entry {
	char name[NAME_MAX + 1];
	struct proc_dir_entry *parent;
	void *group;
	kuid_t uid;		/* its owner */
	bool live;
	struct proc_dir_entry *next;	/* every one made, for the lookups */
};
static struct proc_dir_entry *shim_pdes;
int shim_proc_live, shim_proc_fail;
void (*shim_proc_hook)(const char *name);
kuid_t shim_fsuid;
kgid_t shim_fsgid;

/* stand-in of psi_proc.c's: a directory (its files are not played) */
struct proc_dir_entry *psim_proc_cgroup_dir(const char *name,
					    struct proc_dir_entry *parent,
					    struct psim_cgroup *g, kuid_t uid,
					    kgid_t gid)
{
	struct proc_dir_entry *de;

	(void)gid;
	/* another CPU's probes, while the work is in procfs */
	if (shim_proc_hook)
		shim_proc_hook(name);
	if (parent && !parent->live)
		shim_fail("a directory made under a removed one");
	if (shim_proc_find(parent, name))
		shim_fail("a directory made twice");
	if (shim_proc_fail > 0) {
		shim_proc_fail--;
		return NULL;
	}
	de = calloc(1, sizeof(*de));
	snprintf(de->name, sizeof(de->name), "%s", name);
	de->parent = parent;
	de->group = g;
	de->uid = uid;
	de->live = true;
	de->next = shim_pdes;
	shim_pdes = de;
	shim_proc_live++;
	return de;
}

/* stand-ins of psi_proc.c's and psi_cgroupfs.c's (a booted kernel's) */
bool psim_proc_has_irq(void)
{
	return false;
}

int shim_cgroupfs_live, shim_cgroupfs_fail;

int psim_cgroupfs_up(bool kernel_psi, bool irq)
{
	(void)irq;
	if (kernel_psi || shim_cgroupfs_fail)
		return -EOPNOTSUPP;
	shim_cgroupfs_live = 1;
	return 0;
}

void psim_cgroupfs_down(void)
{
	shim_cgroupfs_live = 0;
}

bool psim_proc_cgroup_file_name(const char *name)
{
	return !strcmp(name, "cpu.pressure") || !strcmp(name, "io.pressure") ||
	       !strcmp(name, "memory.pressure") || !strcmp(name, "irq.pressure");
}

static bool shim_proc_below(struct proc_dir_entry *de,
			    struct proc_dir_entry *top)
{
	for (; de; de = de->parent)
		if (de == top)
			return true;
	return false;
}

/* @de and all below it, as procfs's */
void proc_remove(struct proc_dir_entry *de)
{
	struct proc_dir_entry *p;

	if (!de)
		return;
	if (!de->live)
		shim_fail("a directory removed twice");
	for (p = shim_pdes; p; p = p->next) {
		if (p->live && shim_proc_below(p, de)) {
			p->live = false;
			shim_proc_live--;
		}
	}
}

struct proc_dir_entry *shim_proc_find(struct proc_dir_entry *parent,
				      const char *name)
{
	struct proc_dir_entry *p;

	for (p = shim_pdes; p; p = p->next)
		if (p->live && p->parent == parent && !strcmp(p->name, name))
			return p;
	return NULL;
}

void *shim_proc_group(struct proc_dir_entry *de)
{
	return de->group;
}

unsigned int shim_proc_uid(struct proc_dir_entry *de)
{
	return de->uid.val;
}

/* ---- a cgroup hierarchy (linux/cgroup.h) ---- */
struct cgroup_root cgrp_dfl_root = {
	.cgrp = { .self = { .cgroup = &cgrp_dfl_root.cgrp },
		  .root = &cgrp_dfl_root, .id = 1,
		  .kn = &cgrp_dfl_root.cgrp.shim_kn, .shim_kn = { .id = 1 } },
};

int kernfs_path_from_node(struct kernfs_node *to, struct kernfs_node *from,
			  char *buf, size_t buflen)
{
	if (from != to->parent)
		shim_fail("a path from elsewhere than the parent");
	if (to->shim_name)
		return snprintf(buf, buflen, "/%s", to->shim_name);
	return snprintf(buf, buflen, "/cg%llu", (unsigned long long)to->id);
}

long shim_kernfs_refs;

struct kernfs_node *kernfs_find_and_get(struct kernfs_node *kn,
					const char *name)
{
	if (strcmp(name, "cgroup.events"))
		shim_fail("a lookup of something else than cgroup.events");
	if (kn->shim_events)
		shim_kernfs_refs++;
	return kn->shim_events;
}

void kernfs_get(struct kernfs_node *kn)
{
	(void)kn;
	shim_kernfs_refs++;
}

void kernfs_put(struct kernfs_node *kn)
{
	(void)kn;
	shim_kernfs_refs--;
}
void (*shim_css_walk_hook)(struct cgroup_subsys_state *next);

void shim_cgroup_add(struct cgroup *c, struct cgroup *parent, u64 id)
{
	struct cgroup_subsys_state **pp = &parent->self.first_child;

	memset(c, 0, sizeof(*c));
	c->self.cgroup = c;
	c->self.parent = &parent->self;
	c->root = parent->root;
	c->level = parent->level + 1;
	c->id = id;
	c->self.flags = CSS_ONLINE;
	c->shim_kn.id = id;
	c->shim_kn.parent = parent->kn;
	c->kn = &c->shim_kn;
	c->shim_kn.shim_events = &c->shim_events;
	c->shim_events.parent = c->kn;
	while (*pp)
		pp = &(*pp)->next_sibling;
	*pp = &c->self;
}

void shim_cgroup_unlink(struct cgroup *c)
{
	struct cgroup_subsys_state **pp = &c->self.parent->first_child;

	c->self.flags |= CSS_RELEASED;
	while (*pp && *pp != &c->self)
		pp = &(*pp)->next_sibling;
	if (*pp)
		*pp = c->self.next_sibling;
}

static struct cgroup_subsys_state *
shim_css_walk(struct cgroup_subsys_state *pos,
	      struct cgroup_subsys_state *root)
{
	if (!pos)
		return root;
	if (pos->first_child)
		return pos->first_child;
	while (pos != root) {
		if (pos->next_sibling)
			return pos->next_sibling;
		pos = pos->parent;
	}
	return NULL;
}

struct cgroup_subsys_state *
css_next_descendant_pre(struct cgroup_subsys_state *pos,
			struct cgroup_subsys_state *root)
{
	struct cgroup_subsys_state *next = shim_css_walk(pos, root);

	if (next && shim_css_walk_hook)
		shim_css_walk_hook(next);
	return next;
}

/* ---- workqueues and work after a grace period ---- */
int shim_wq_live;
static struct rcu_work *shim_rcu_works;
static char shim_wq_dummy;

struct workqueue_struct *alloc_workqueue(const char *name, unsigned int flags,
					 int max_active)
{
	(void)name;
	(void)flags;
	(void)max_active;
	shim_wq_live++;
	return (struct workqueue_struct *)&shim_wq_dummy;
}

void destroy_workqueue(struct workqueue_struct *wq)
{
	(void)wq;
	if (shim_rcu_works)
		shim_fail("destroy_workqueue() with work after a grace period still queued");
	shim_wq_live--;
}

bool queue_rcu_work(struct workqueue_struct *wq, struct rcu_work *rw)
{
	(void)wq;
	rw->next = shim_rcu_works;
	shim_rcu_works = rw;
	return true;
}

int shim_rcu_works_run(void)
{
	struct rcu_work *rw;
	int n = 0;

	while ((rw = shim_rcu_works)) {
		shim_rcu_works = rw->next;
		rw->fn((struct work_struct *)rw);
		n++;
	}
	return n;
}

void rcu_barrier(void)
{
	shim_rcu_works_run();
}
