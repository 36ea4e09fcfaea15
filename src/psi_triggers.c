// SPDX-License-Identifier: GPL-2.0
/*
 * psi_mod: pressure triggers, the kernel's write/poll ABI on the pressure
 * files (psi_write(), psi_trigger_create(), psi_trigger_poll() and the
 * two aggregators of kernel/sched/psi.c, Debian's 6.1.y with the 6.5
 * privilege rules; Documentation/accounting/psi.rst).
 *
 * A write of "some|full <threshold us> <window us>" creates the trigger
 * of that file descriptor (one per descriptor: a second write is EBUSY);
 * poll() then reports EPOLLPRI when the stall time in that state grew by
 * at least the threshold within the last window, at most once per window;
 * the last close destroys it. The parsing is the kernel's: the same
 * sscanf() formats on the same 32-byte buffer; the checks are
 * psim_trigger_check() (psi_mod_logic.h).
 *
 * Two aggregators, as the kernel's:
 *  - unprivileged triggers (the opener lacks CAP_SYS_RESOURCE; windows in
 *    multiples of 2 s only) are evaluated by the averaging work once per
 *    2 s period (psi_aggregate.c calls psim_triggers_avgs_update()), so
 *    they cost no work of their own however many there are;
 *  - privileged ones by the fast path: a SCHED_FIFO kernel thread (the
 *    kernel's psimon, made at the first privileged trigger) woken by a
 *    timer that, once a watched state is in effect on some CPU (the
 *    probes' psim_poll_kick()), collects the per-CPU times ten times per
 *    (smallest) window and keeps doing so for one window after the watched
 *    states last moved; then it stops, and the next such state restarts
 *    it. No privileged trigger since the start: a static branch in the
 *    probes that is never taken; after one, a read of a set's poll_states.
 *
 * Sets. The triggers of one group's files form a set (struct psim_triggers,
 * psi_mod.h), as the kernel keeps them in each psi_group: the system's,
 * static, for <proc_dir>/{cpu,io,memory,irq} and the cgroup tree's top
 * files, and one per cgroup whose files (cgroups=1, psi_cgroup.c) had a
 * trigger written, allocated then (never in a probe) and freed with the
 * group. Each set has its own totals, windows and timer, and the probes
 * kick a group's timer where that group's state changes (the group walk,
 * psim_cgroup_poll_kick()); one thread runs every set whose timer fired,
 * where the kernel has a psimon thread per group with privileged triggers.
 * A cgroup's set dies with its files (rmdir, or the tree going): the same
 * shutdown as the module's stop, for its triggers alone, before
 * proc_remove() closes them; later writes answer ENODEV, as the kernel's
 * file of a removed cgroup.
 *
 * Lifetimes. A trigger lives in kmalloc'ed memory owned by its file: the
 * write creates it, ->proc_release destroys it, exactly once (procfs calls
 * ->proc_release once per open file, at the last close or from
 * proc_remove() for files still open). Pollers sleep on the trigger's
 * wait queue, which is allocated apart (struct psim_waitq). At a normal
 * last close nobody can be sleeping there (select/poll hold a reference
 * to the file while they sleep; epoll drops its entries before
 * ->release), and the queue goes with the trigger. But proc_remove() at
 * unload or enable=0 closes files that are still open, with pollers
 * asleep on them; so psim_triggers_shutdown() runs first, while the files
 * still answer: every later poll answers EPOLLERR | EPOLLPRI and adds no
 * waiter, every waiter is woken with EPOLLERR | EPOLLPRI, epoll (aio,
 * io_uring) entries are detached with POLLFREE, and it waits, at most
 * PSIM_SHUTDOWN_MS in all, for the select/poll waiters to leave the
 * queues. One that stays is stuck elsewhere: select/poll on this file and
 * on another whose ->poll does not return (FUSE's, waiting for its
 * daemon) keeps its entry here until it returns, and its
 * poll_freewait() then takes the queue's lock and unlinks the entry,
 * whenever that is. Such a queue is not freed: it is parked
 * (psim_parked), freed at a later start or stop that finds it empty, and
 * left allocated at unload if it still is not (psim_triggers_exit()). The
 * queue's lock class lives in allocated memory too (struct
 * psim_waitq_class), so that lockdep finds it valid after the module is
 * gone. Nothing else of the module's is reached from such a poller: after
 * proc_remove() procfs answers poll, read, write and release of the file
 * without calling the module.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kmemleak.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "psi_mod.h"

/* A trigger's wait queue, apart from it: it may outlive it (see above). */
struct psim_waitq {
	wait_queue_head_t wait;
	struct list_head parked;	/* on psim_parked */
	bool orphan;			/* parked, its trigger destroyed */
};

struct psim_trigger {
	struct list_head node;
	struct psim_trigger_win w;	/* the window arithmetic */
	enum psim_agg agg;		/* PSIM_POLL if privileged */
	int event;			/* an event poll has not reported */
	bool told;			/* a poll saw the shutdown */
	bool had_waiters;		/* someone slept here at shutdown */
	bool parked;			/* its queue outlives it */
	bool top;			/* written to a top file of the cgroup tree */
	bool dead;			/* ... shut down with the tree */
	struct psim_waitq *wq;
	struct psim_triggers *ts;	/* its file's set */
};

/*
 * The wait queues' lock class (lockdep's key and name), allocated at the
 * first trigger of a load and freed at unload unless a parked queue still
 * uses it.
 */
struct psim_waitq_class {
	struct lock_class_key key;
	char name[32];
};

/* At most this long in all for the woken pollers to leave at a stop. */
#define PSIM_SHUTDOWN_MS	2000

/* The class, and the parked queues: under psim_wq_lock. */
static DEFINE_MUTEX(psim_wq_lock);
static struct psim_waitq_class *psim_wq_class;
static LIST_HEAD(psim_parked);

/*
 * The system's set; and every set, the system's first, for the poll
 * thread and the shutdown.
 */
struct psim_triggers psim_sys_triggers;
static LIST_HEAD(psim_sets);
static DEFINE_MUTEX(psim_sets_lock);
/*
 * The module's stop has begun, or the cgroup tree is going: a set made
 * now (of a cgroup, for the latter) is born dead (sets_lock).
 */
static bool psim_trig_dead;
static bool psim_groups_dead;
/*
 * The triggers of the cgroup tree's top files are the system's (the root
 * cgroup's pressure is the system's), each marked top; they go with the
 * tree, the rest of the system's set stays. Set with psim_groups_dead,
 * under sets_lock and the system set's rwsem: a top trigger written now
 * is refused.
 */
static bool psim_top_dead;

/* Read by the probes (psim_poll_kick()). */
DEFINE_STATIC_KEY_FALSE(psim_poll_key);

/*
 * The fast path's thread (the kernel's psimon: SCHED_FIFO at the lowest
 * priority, so it runs while the CPUs are busy with the tasks it reports
 * on), made at the first privileged trigger and kept
 * until the module is disabled; a set's timer wakes it (the kernel's
 * rtpoll_timer and rtpoll_wakeup), and it runs the sets whose timer fired.
 */
static struct task_struct *psim_poll_task;	/* under psim_task_lock */
static DEFINE_MUTEX(psim_task_lock);
static DECLARE_WAIT_QUEUE_HEAD(psim_poll_wait);
static atomic_t psim_poll_wakeup;

/* debugfs counters, over all sets */
static atomic_long_t psim_trig_nr[PSIM_NR_AGGS];
static atomic_long_t psim_trig_created[PSIM_NR_AGGS];
static atomic_long_t psim_trig_destroyed[PSIM_NR_AGGS];
static atomic_long_t psim_trig_events[PSIM_NR_AGGS];
static atomic_long_t psim_trig_evals[PSIM_NR_AGGS];
static atomic_long_t psim_poll_runs;
static atomic64_t psim_poll_work_ns;
static unsigned long psim_sets_nr;	/* cgroups' sets, under sets_lock */

/* Generate an event: the kernel's update_triggers() tail. */
static void psim_trigger_signal(struct psim_trigger *t)
{
	if (cmpxchg(&t->event, 0, 1) == 0)
		wake_up_interruptible(&t->wq->wait);
	atomic_long_inc(&psim_trig_events[t->agg]);
}

/* Every unprivileged trigger of @ts, with its group's averaging lock held. */
void psim_triggers_avgs_update(struct psim_triggers *ts, u64 now,
			       const u64 *total, const u64 *seen)
{
	struct psim_trigger *t;
	bool update_total = false;

	if (list_empty(&ts->avg_triggers))
		return;
	mutex_lock(&ts->avg_lock);
	list_for_each_entry(t, &ts->avg_triggers, node) {
		atomic_long_inc(&psim_trig_evals[PSIM_AVGS]);
		if (psim_trigger_update(&t->w, now, total, seen,
					&update_total))
			psim_trigger_signal(t);
	}
	mutex_unlock(&ts->avg_lock);
}

/*
 * Queue @ts's fast path unless it is queued already, or @force: re-arm it
 * even so (the kernel's psi_schedule_rtpoll_work()).
 */
static void psim_poll_schedule(struct psim_triggers *ts, unsigned long delay,
			       bool force)
{
	if (atomic_xchg(&ts->poll_scheduled, 1) && !force)
		return;
	mod_timer(&ts->poll_timer, jiffies + delay);
}

static void psim_poll_timer_fn(struct timer_list *timer)
{
	struct psim_triggers *ts = from_timer(ts, timer, poll_timer);

	atomic_set(&ts->poll_wakeup, 1);
	atomic_set(&psim_poll_wakeup, 1);
	wake_up_interruptible(&psim_poll_wait);
}

/* Entering polling mode: every window starts now (init_rtpoll_triggers()). */
static void psim_poll_init_windows(struct psim_triggers *ts, u64 now)
{
	struct psim_trigger *t;

	list_for_each_entry(t, &ts->poll_triggers, node)
		psim_window_reset(&t->w.win, now, ts->poll_total[t->w.state],
				  0);
	memcpy(ts->poll_seen, ts->poll_total, sizeof(ts->poll_seen));
	ts->poll_next_update = now + ts->poll_min_period;
}

/*
 * The fast path of one set (the kernel's psi_rtpoll_work()): collect, and
 * while a watched state's time moves keep updating the triggers every
 * min_period (a tenth of the smallest window), for one window more after
 * the last move; then let the probes restart it.
 */
static void psim_poll_run(struct psim_triggers *ts)
{
	bool force = false, update_total = false;
	struct psim_trigger *t;
	u32 changed;
	u64 now, t0;

	mutex_lock(&ts->poll_lock);
	t0 = sched_clock();
	now = t0;
	atomic_long_inc(&psim_poll_runs);
	if (now > ts->poll_until) {
		/*
		 * About to start, or to stop if nothing moved. Clear the flag
		 * before reading the states: a probe that changes a state
		 * after our read sees it clear and queues us again.
		 */
		atomic_set(&ts->poll_scheduled, 0);
		/* pairs with the probe's atomic_xchg() (a full barrier) */
		smp_mb();
	} else {
		/* inside the polling window: keep going */
		force = true;
	}
	if (list_empty(&ts->poll_triggers)) {
		atomic_set(&ts->poll_scheduled, 0);
		ts->poll_until = 0;
		ts->poll_next_update = U64_MAX;
		goto out;
	}

	changed = psim_collect_poll(ts->cg, ts->poll_total);
	if (changed & ts->poll_states) {
		if (now > ts->poll_until)
			psim_poll_init_windows(ts, now);
		ts->poll_until = now + ts->poll_min_period *
					PSIM_UPDATES_PER_WINDOW;
	}
	if (now > ts->poll_until) {
		ts->poll_next_update = U64_MAX;
		goto out;
	}
	if (now >= ts->poll_next_update) {
		list_for_each_entry(t, &ts->poll_triggers, node) {
			atomic_long_inc(&psim_trig_evals[PSIM_POLL]);
			if (psim_trigger_update(&t->w, now, ts->poll_total,
						ts->poll_seen, &update_total))
				psim_trigger_signal(t);
		}
		ts->poll_next_update = now + ts->poll_min_period;
		if (update_total)
			memcpy(ts->poll_seen, ts->poll_total,
			       sizeof(ts->poll_seen));
	}
	psim_poll_schedule(ts, nsecs_to_jiffies(ts->poll_next_update - now) +
			   1, force);
out:
	atomic64_add(sched_clock() - t0, &psim_poll_work_ns);
	mutex_unlock(&ts->poll_lock);
}

static int psim_poll_thread(void *unused)
{
	struct psim_triggers *ts;

	for (;;) {
		wait_event_interruptible(psim_poll_wait,
					 atomic_cmpxchg(&psim_poll_wakeup, 1, 0) ||
					 kthread_should_stop());
		if (kthread_should_stop())
			return 0;
		/* a set leaves the list (its group's free) under this lock */
		mutex_lock(&psim_sets_lock);
		list_for_each_entry(ts, &psim_sets, sets)
			if (atomic_cmpxchg(&ts->poll_wakeup, 1, 0))
				psim_poll_run(ts);
		mutex_unlock(&psim_sets_lock);
	}
}

/* A set at its start: empty, its fast path idle, alive. */
static void psim_set_init(struct psim_triggers *ts, struct psim_cgroup *cg)
{
	ts->cg = cg;
	mutex_init(&ts->avg_lock);
	INIT_LIST_HEAD(&ts->avg_triggers);
	mutex_init(&ts->poll_lock);
	INIT_LIST_HEAD(&ts->poll_triggers);
	memset(ts->poll_nr, 0, sizeof(ts->poll_nr));
	ts->poll_min_period = U64_MAX;
	ts->poll_until = 0;
	ts->poll_next_update = U64_MAX;
	memset(ts->poll_total, 0, sizeof(ts->poll_total));
	memset(ts->poll_seen, 0, sizeof(ts->poll_seen));
	ts->poll_states = 0;
	atomic_set(&ts->poll_scheduled, 0);
	atomic_set(&ts->poll_wakeup, 0);
	timer_setup(&ts->poll_timer, psim_poll_timer_fn, 0);
	init_rwsem(&ts->rwsem);
	ts->dead = false;
	ts->dead_errno = cg ? -ENODEV : -EIO;
}

/*
 * @cg's set, made at the first trigger written to one of its files (the
 * group outlives its files, and so every write to them); NULL without
 * memory.
 */
static struct psim_triggers *psim_triggers_of(struct psim_cgroup *cg)
{
	struct psim_triggers *ts;

	if (!cg)
		return &psim_sys_triggers;
	/* pairs with the smp_store_release() below */
	ts = smp_load_acquire(&cg->trig);
	if (ts)
		return ts;
	mutex_lock(&psim_sets_lock);
	ts = cg->trig;
	if (!ts) {
		ts = kzalloc(sizeof(*ts), GFP_KERNEL_ACCOUNT);
		if (ts) {
			psim_set_init(ts, cg);
			ts->dead = psim_trig_dead || psim_groups_dead ||
				   cg->trig_gone;
			list_add_tail(&ts->sets, &psim_sets);
			psim_sets_nr++;
			/* set up before the probes and the averaging see it */
			smp_store_release(&cg->trig, ts);
		}
	}
	mutex_unlock(&psim_sets_lock);
	return ts;
}

/*
 * With its group, after its files are gone and an RCU grace period after
 * the group left the probes' reach: no trigger, no probe, and once it is
 * off the list and its timer is dead, no thread run either.
 */
void psim_triggers_free(struct psim_triggers *ts)
{
	if (!ts)
		return;
	WARN_ON_ONCE(!list_empty(&ts->avg_triggers) ||
		     !list_empty(&ts->poll_triggers));
	mutex_lock(&psim_sets_lock);
	list_del(&ts->sets);
	psim_sets_nr--;
	mutex_unlock(&psim_sets_lock);
	psim_timer_shutdown_sync(&ts->poll_timer);
	kfree(ts);
}

/*
 * Add @t to its set's aggregator; returns with it evaluated from now on,
 * or an error if the fast path's thread could not be made (the kernel's
 * psi_trigger_create() fails the write then).
 */
static int psim_trigger_add(struct psim_triggers *ts, struct psim_trigger *t)
{
	bool started = false;

	if (t->agg == PSIM_AVGS) {
		/*
		 * As the kernel's psi_trigger_create(), every window starts
		 * at the fast path's total, also an unprivileged trigger's,
		 * which then grows with the averaging total: the first
		 * update with new stall measures the difference of the two
		 * and usually fires (the fast path's total is zero until a
		 * privileged trigger runs, as at boot).
		 */
		u64 v;

		mutex_lock(&ts->poll_lock);
		v = ts->poll_total[t->w.state];
		mutex_unlock(&ts->poll_lock);
		psim_window_reset(&t->w.win, sched_clock(), v, 0);
		mutex_lock(&ts->avg_lock);
		list_add(&t->node, &ts->avg_triggers);
		mutex_unlock(&ts->avg_lock);
		atomic_long_inc(&psim_trig_nr[PSIM_AVGS]);
		atomic_long_inc(&psim_trig_created[PSIM_AVGS]);
		return 0;
	}

	/* not psim_sets_lock: a shutdown holds it and waits for our rwsem */
	mutex_lock(&psim_task_lock);
	if (!psim_poll_task) {
		struct task_struct *task;

		task = kthread_create(psim_poll_thread, NULL, "psi_mod_poll");
		if (IS_ERR(task)) {
			mutex_unlock(&psim_task_lock);
			return PTR_ERR(task);
		}
		sched_set_fifo_low(task);
		wake_up_process(task);
		psim_poll_task = task;
		started = true;
	}
	mutex_unlock(&psim_task_lock);
	mutex_lock(&ts->poll_lock);
	psim_window_reset(&t->w.win, sched_clock(),
			  ts->poll_total[t->w.state], 0);
	list_add(&t->node, &ts->poll_triggers);
	ts->poll_min_period = min(ts->poll_min_period,
				  div_u64(t->w.win.size,
					  PSIM_UPDATES_PER_WINDOW));
	ts->poll_nr[t->w.state]++;
	WRITE_ONCE(ts->poll_states, ts->poll_states | BIT(t->w.state));
	mutex_unlock(&ts->poll_lock);
	atomic_long_inc(&psim_trig_nr[PSIM_POLL]);
	atomic_long_inc(&psim_trig_created[PSIM_POLL]);
	/*
	 * The probes' key goes on with the thread and off with it at stop,
	 * not per trigger: each flip patches the probes' code on every CPU.
	 * Without a trigger the probes read a set's poll_states, 0.
	 */
	if (started)
		static_branch_enable(&psim_poll_key);
	/*
	 * Look once now: the watched state may be in effect already and
	 * change no CPU's mask for a while (the kernel polls once when its
	 * worker starts).
	 */
	psim_poll_schedule(ts, 1, true);
	return 0;
}

static void psim_trigger_del(struct psim_trigger *t)
{
	struct psim_triggers *ts = t->ts;
	struct psim_trigger *tmp;
	u64 period = U64_MAX;

	if (t->agg == PSIM_AVGS) {
		mutex_lock(&ts->avg_lock);
		list_del(&t->node);
		mutex_unlock(&ts->avg_lock);
		atomic_long_dec(&psim_trig_nr[PSIM_AVGS]);
		atomic_long_inc(&psim_trig_destroyed[PSIM_AVGS]);
		return;
	}

	mutex_lock(&ts->poll_lock);
	list_del(&t->node);
	if (!--ts->poll_nr[t->w.state])
		WRITE_ONCE(ts->poll_states,
			   ts->poll_states & ~BIT(t->w.state));
	list_for_each_entry(tmp, &ts->poll_triggers, node)
		period = min(period, div_u64(tmp->w.win.size,
					     PSIM_UPDATES_PER_WINDOW));
	ts->poll_min_period = period;
	if (!ts->poll_states)
		ts->poll_until = 0;	/* a work still queued finds none */
	mutex_unlock(&ts->poll_lock);
	atomic_long_dec(&psim_trig_nr[PSIM_POLL]);
	atomic_long_inc(&psim_trig_destroyed[PSIM_POLL]);
}

/*
 * A trigger's wait queue, its lock in the class of psim_wq_class (made at
 * the first trigger of a load: lockdep must find the class valid as long
 * as a parked queue may be locked, also after the module is gone).
 */
static struct psim_waitq *psim_waitq_alloc(void)
{
	struct psim_waitq_class *cls;
	struct psim_waitq *wq;

	mutex_lock(&psim_wq_lock);
	if (!psim_wq_class) {
		psim_wq_class = kzalloc(sizeof(*psim_wq_class), GFP_KERNEL);
		if (psim_wq_class) {
			strscpy(psim_wq_class->name, "psi_mod_trigger_wait",
				sizeof(psim_wq_class->name));
			lockdep_register_key(&psim_wq_class->key);
		}
	}
	cls = psim_wq_class;
	mutex_unlock(&psim_wq_lock);
	if (!cls)
		return NULL;
	wq = kzalloc(sizeof(*wq), GFP_KERNEL_ACCOUNT);
	if (wq) {
		__init_waitqueue_head(&wq->wait, cls->name, &cls->key);
		INIT_LIST_HEAD(&wq->parked);
	}
	return wq;
}

/*
 * The trigger @buf (NUL-terminated) asks for, made and published in
 * @slot; the caller serializes the writes to its file (see below).
 */
static ssize_t psim_trigger_add_buf(struct file *file, const char *buf,
				    size_t nbytes, enum psim_res res,
				    struct psim_cgroup *cg, bool top,
				    struct psim_trigger **slot)
{
	u32 threshold_us, window_us;
	struct psim_triggers *ts;
	enum psim_states state;
	struct psim_trigger *t;
	bool privileged, full;
	ssize_t ret;

	if (*slot)
		return -EBUSY;
	if (sscanf(buf, "some %u %u", &threshold_us, &window_us) == 2)
		full = false;
	else if (sscanf(buf, "full %u %u", &threshold_us, &window_us) == 2)
		full = true;
	else
		return -EINVAL;
	privileged = psim_trigger_privileged(PSIM_TRIGGER_RULES,
					     cap_raised(file->f_cred->cap_effective,
							CAP_SYS_RESOURCE));
	ret = psim_trigger_check(PSIM_TRIGGER_RULES, res, full, threshold_us,
				 window_us, privileged, &state);
	if (ret)
		return ret;

	ts = psim_triggers_of(cg);
	t = ts ? kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT) : NULL;
	if (t)
		t->wq = psim_waitq_alloc();
	if (!t || !t->wq) {
		kfree(t);
		return -ENOMEM;
	}
	psim_trigger_init(&t->w, state, threshold_us, window_us, 0, 0);
	t->agg = privileged ? PSIM_POLL : PSIM_AVGS;
	t->ts = ts;
	t->top = top;

	down_read(&ts->rwsem);
	if (ts->dead || (top && psim_top_dead)) {
		/*
		 * The files are going away: as procfs answers after that, or
		 * the kernel's file of a removed cgroup
		 */
		ret = ts->dead ? ts->dead_errno : -ENODEV;
		up_read(&ts->rwsem);
		kfree(t->wq);
		kfree(t);
		return ret;
	}
	ret = psim_trigger_add(ts, t);
	up_read(&ts->rwsem);
	if (ret) {
		kfree(t->wq);
		kfree(t);
		return ret;
	}
	/* a trigger fully set up before poll sees it (smp_load_acquire()) */
	smp_store_release(slot, t);
	return nbytes;
}

/*
 * A write to a pressure file, as the kernel's psi_write(): at most 32
 * bytes copied, the last one replaced by the terminating NUL; an empty
 * write EINVAL; one trigger per descriptor (EBUSY, before any parsing);
 * the same sscanf() formats. The privilege is the opener's (f_cred): a
 * privileged opener may hand the descriptor to anyone. The trigger goes
 * into *@slot (the file's, under the seq_file's lock) and into the set of
 * group @cg (NULL: the system's), @top if written to a top file of the
 * cgroup tree.
 */
static ssize_t psim_trigger_create(struct file *file, const char __user *ubuf,
				   size_t nbytes, enum psim_res res,
				   struct psim_cgroup *cg, bool top,
				   struct psim_trigger **slot)
{
	struct seq_file *seq = file->private_data;
	size_t len = psim_trigger_copy_len(nbytes);
	char buf[PSIM_TRIGGER_BUF];
	ssize_t ret;

	if (!len)
		return -EINVAL;
	ret = psim_copy_from_user(buf, ubuf, len);
	if (ret)
		return ret;
	buf[len - 1] = '\0';

	mutex_lock(&seq->lock);
	ret = psim_trigger_add_buf(file, buf, nbytes, res, cg, top, slot);
	mutex_unlock(&seq->lock);
	return ret;
}

/*
 * A write to a cgroupfs file (psi_cgroupfs.c): @buf is kernfs's copy of
 * the whole write, NUL-terminated, parsed whole as the kernel's cgroup
 * files do; kernfs holds the open file's mutex. @cg NULL: the root
 * cgroup's file, a top file.
 */
ssize_t psim_trigger_write_kbuf(struct file *file, const char *buf,
				size_t nbytes, enum psim_res res,
				struct psim_cgroup *cg, struct psim_trigger **slot)
{
	return psim_trigger_add_buf(file, buf, nbytes, res, cg, !cg, slot);
}

ssize_t psim_trigger_write(struct file *file, const char __user *ubuf,
			   size_t nbytes, enum psim_res res,
			   struct psim_cgroup *cg, struct psim_trigger **slot)
{
	return psim_trigger_create(file, ubuf, nbytes, res, cg, false, slot);
}

/* ... to a top file of the cgroup tree: the system's set, marked top */
ssize_t psim_trigger_write_top(struct file *file, const char __user *ubuf,
			       size_t nbytes, enum psim_res res,
			       struct psim_trigger **slot)
{
	return psim_trigger_create(file, ubuf, nbytes, res, NULL, true, slot);
}

/*
 * poll() as the kernel's psi_trigger_poll(): without a trigger at once
 * DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI; with one, EPOLLPRI once per
 * event. Once the files are going away, EPOLLERR | EPOLLPRI at once and
 * no new waiter.
 */
__poll_t psim_trigger_poll(struct psim_trigger **slot, struct file *file,
			   poll_table *wait)
{
	__poll_t ret = DEFAULT_POLLMASK;
	struct psim_trigger *t;

	/* pairs with the write's smp_store_release() */
	t = smp_load_acquire(slot);
	if (!t)
		return ret | EPOLLERR | EPOLLPRI;
	down_read(&t->ts->rwsem);
	if (t->ts->dead || t->dead) {
		WRITE_ONCE(t->told, true);
		ret |= EPOLLERR | EPOLLPRI;
		goto out;
	}
	poll_wait(file, &t->wq->wait, wait);
	if (cmpxchg(&t->event, 1, 0) == 1)
		ret |= EPOLLPRI;
out:
	up_read(&t->ts->rwsem);
	return ret;
}

/*
 * The file's last close, or proc_remove() closing it: the one place a
 * trigger is destroyed, with its wait queue unless that was parked at the
 * shutdown (see the lifetimes note at the top).
 */
void psim_trigger_release(struct psim_trigger **slot)
{
	struct psim_trigger *t = *slot;

	if (!t)
		return;
	*slot = NULL;
	psim_trigger_del(t);
	/* t->parked is set under the list lock psim_trigger_del() took */
	if (!t->parked) {
		kfree(t->wq);
	} else {
		/* only now may psim_reap_parked() free it */
		mutex_lock(&psim_wq_lock);
		t->wq->orphan = true;
		mutex_unlock(&psim_wq_lock);
	}
	kfree(t);
}

/*
 * Which triggers a shutdown or a walk covers: @one's set alone, or every
 * set (the module's stop), or the cgroup tree's (@groups: the cgroups'
 * sets and the system's top triggers).
 */
struct psim_scope {
	struct psim_triggers *one;
	bool groups;
};

static bool psim_in_scope(const struct psim_scope *sc, struct psim_triggers *ts)
{
	if (sc->one)
		return ts == sc->one;
	return true;
}

/* The set's triggers in @sc: the system's set holds the tree's top ones */
static bool psim_trigger_in_scope(const struct psim_scope *sc,
				  struct psim_triggers *ts,
				  struct psim_trigger *t)
{
	return !sc->groups || ts->cg || t->top;
}

/* Run @fn on every trigger of @ts in @sc, under its list locks. */
static void psim_set_each(const struct psim_scope *sc,
			  struct psim_triggers *ts,
			  void (*fn)(struct psim_trigger *t, void *arg),
			  void *arg)
{
	struct psim_trigger *t;

	mutex_lock(&ts->avg_lock);
	list_for_each_entry(t, &ts->avg_triggers, node)
		if (psim_trigger_in_scope(sc, ts, t))
			fn(t, arg);
	mutex_unlock(&ts->avg_lock);
	mutex_lock(&ts->poll_lock);
	list_for_each_entry(t, &ts->poll_triggers, node)
		if (psim_trigger_in_scope(sc, ts, t))
			fn(t, arg);
	mutex_unlock(&ts->poll_lock);
}

/* ... on every trigger of the sets in @sc: the system's, then the cgroups' */
static void psim_triggers_each(const struct psim_scope *sc,
			       void (*fn)(struct psim_trigger *t, void *arg),
			       void *arg)
{
	struct psim_triggers *ts;

	if (sc->one) {
		psim_set_each(sc, sc->one, fn, arg);
		return;
	}
	mutex_lock(&psim_sets_lock);
	list_for_each_entry(ts, &psim_sets, sets)
		if (psim_in_scope(sc, ts))
			psim_set_each(sc, ts, fn, arg);
	mutex_unlock(&psim_sets_lock);
}

static bool psim_waitq_busy(struct psim_waitq *wq)
{
	bool busy;

	spin_lock_irq(&wq->wait.lock);
	busy = !list_empty(&wq->wait.head);
	spin_unlock_irq(&wq->wait.lock);
	return busy;
}

static bool psim_waiters(struct psim_trigger *t)
{
	return psim_waitq_busy(t->wq);
}

static void psim_wake_dead(struct psim_trigger *t, void *arg)
{
	t->had_waiters = psim_waiters(t);
	wake_up_poll(&t->wq->wait, EPOLLERR | EPOLLPRI);
}

/* Still to re-poll after the wakeup: a waiter that has not seen it. */
static void psim_count_untold(struct psim_trigger *t, void *arg)
{
	if (t->had_waiters && !READ_ONCE(t->told))
		(*(unsigned long *)arg)++;
}

/*
 * Detach the waiters that keep their entry across wakeups (epoll, aio,
 * io_uring): POLLFREE makes them drop it at once (wake_up_pollfree(),
 * without its warning: select/poll entries may still be there, and leave
 * by themselves, see below).
 */
static void psim_pollfree(struct psim_trigger *t, void *arg)
{
	__wake_up(&t->wq->wait, TASK_NORMAL, 0,
		  poll_to_key(EPOLLHUP | POLLFREE));
}

static void psim_count_waiters(struct psim_trigger *t, void *arg)
{
	if (psim_waiters(t))
		(*(unsigned long *)arg)++;
}

/* Triggers with a poller asleep on them now (the fail_start= test aid). */
unsigned long psim_triggers_polled(void)
{
	struct psim_scope all = { NULL, false };
	unsigned long n = 0;

	psim_triggers_each(&all, psim_count_waiters, &n);
	return n;
}

/* A queue with select/poll entries still on it: keep it past its trigger. */
static void psim_park(struct psim_trigger *t, void *arg)
{
	if (!psim_waiters(t))
		return;
	/* a shutdown and a cgroupfs file's release may both come here */
	mutex_lock(&psim_wq_lock);
	if (!t->parked) {
		t->parked = true;
		list_add(&t->wq->parked, &psim_parked);
	}
	mutex_unlock(&psim_wq_lock);
}

/*
 * The release of a cgroupfs file (psi_cgroupfs.c): kernfs calls it at the
 * last close, or at once when the file goes (its cgroup's rmdir, the
 * files' removal) with the descriptor still open, its set maybe live.
 * kernfs lets no poll in after that, so the waiters on the queue now are
 * all there will be: woken with the error, detached as at a shutdown, the
 * queue parked if select() or poll() entries are left on it.
 */
void psim_trigger_release_live(struct psim_trigger **slot)
{
	struct psim_trigger *t = *slot;

	if (t && psim_waiters(t)) {
		wake_up_poll(&t->wq->wait, EPOLLERR | EPOLLPRI);
		psim_pollfree(t, NULL);
		psim_park(t, NULL);
		/* POLLFREE's rule: epoll reads the queue head under RCU */
		synchronize_rcu();
	}
	psim_trigger_release(slot);
}

/* Free the parked queues that are empty now; the count of those still not. */
static unsigned long psim_reap_parked(void)
{
	struct psim_waitq *wq, *tmp;
	unsigned long busy = 0;

	mutex_lock(&psim_wq_lock);
	list_for_each_entry_safe(wq, tmp, &psim_parked, parked) {
		/*
		 * Empty under its lock: the last poller's poll_freewait() has
		 * unlocked it and touches it no more, and nothing adds to it.
		 * A cgroupfs file may outlive its set's shutdown: its trigger
		 * frees nothing before it is destroyed.
		 */
		if (!wq->orphan || psim_waitq_busy(wq)) {
			busy++;
			continue;
		}
		list_del(&wq->parked);
		kfree(wq);
	}
	mutex_unlock(&psim_wq_lock);
	return busy;
}

static void psim_trigger_kill(struct psim_trigger *t, void *arg)
{
	t->dead = true;
}

/*
 * @ts's triggers in @sc dead: the whole set, or in the system's set at
 * the tree's going its top triggers and those written from now on. Polls
 * and writes look under the rwsem.
 */
static void psim_set_dead(const struct psim_scope *sc, struct psim_triggers *ts)
{
	down_write(&ts->rwsem);
	if (sc->groups && !ts->cg) {
		psim_top_dead = true;
		psim_set_each(sc, ts, psim_trigger_kill, NULL);
	} else {
		ts->dead = true;
	}
	up_write(&ts->rwsem);
}

/*
 * Before the files of the sets in @sc go: see the lifetimes note at the
 * top. Afterwards no wait queue of their triggers has a poller on it but
 * the parked ones, which outlive their triggers, and proc_remove() may
 * destroy the triggers through ->proc_release. Bounded: about
 * PSIM_SHUTDOWN_MS, whatever the pollers do.
 */
static void psim_shutdown(const struct psim_scope *sc)
{
	struct psim_triggers *ts;
	unsigned long n, deadline;

	psim_reap_parked();
	mutex_lock(&psim_sets_lock);
	if (!sc->one && !sc->groups)
		psim_trig_dead = true;	/* and every set made from now on */
	list_for_each_entry(ts, &psim_sets, sets)
		if (psim_in_scope(sc, ts))
			psim_set_dead(sc, ts);
	mutex_unlock(&psim_sets_lock);
	/* every poll from here on answers EPOLLERR | EPOLLPRI and adds nothing */
	psim_triggers_each(sc, psim_wake_dead, NULL);
	deadline = jiffies + msecs_to_jiffies(PSIM_SHUTDOWN_MS);

	/*
	 * Give the woken a moment to poll again while the files still answer
	 * (after proc_remove() procfs answers DEFAULT_POLLMASK only, without
	 * the error an epoll consumer waits for). A consumer that is not in
	 * poll now cannot be waited for.
	 */
	for (;;) {
		n = 0;
		psim_triggers_each(sc, psim_count_untold, &n);
		if (!n || time_after(jiffies, deadline))
			break;
		msleep(20);
	}

	psim_triggers_each(sc, psim_pollfree, NULL);
	/*
	 * select() and poll() remove their entries when they return, which
	 * the wakeup above makes them do, unless they are stuck in another
	 * file's ->poll: wait for them within the same time, then park the
	 * queues they are still on.
	 */
	for (;;) {
		n = 0;
		psim_triggers_each(sc, psim_count_waiters, &n);
		if (!n || time_after(jiffies, deadline))
			break;
		msleep(20);
	}
	if (n)
		psim_triggers_each(sc, psim_park, NULL);
	/* POLLFREE's rule: epoll reads the queue head under RCU */
	synchronize_rcu();
}

/* Before the files go at the module's stop (unload, enable=0): every set. */
void psim_triggers_shutdown(void)
{
	struct psim_scope all = { NULL, false };

	psim_shutdown(&all);
}

/*
 * Before one cgroup's files go (its rmdir, its release): its set alone,
 * if it has one that is not dead already (a set shut down with the rest
 * at the stop has nothing left to wait for); a set made after this is
 * born dead. From the files' work.
 */
void psim_triggers_remove(struct psim_cgroup *cg)
{
	struct psim_scope one = { NULL, false };
	bool dead = true;

	mutex_lock(&psim_sets_lock);
	cg->trig_gone = true;
	one.one = cg->trig;
	mutex_unlock(&psim_sets_lock);
	if (one.one) {
		down_read(&one.one->rwsem);
		dead = one.one->dead;
		up_read(&one.one->rwsem);
	}
	if (!dead)
		psim_shutdown(&one);
}

/*
 * ... before the whole cgroup tree goes (cgroups=0, or the files' stop):
 * every cgroup's set, and those made until the tree is back.
 */
void psim_triggers_remove_groups(void)
{
	struct psim_scope groups = { NULL, true };

	bool stopping;

	mutex_lock(&psim_sets_lock);
	psim_groups_dead = true;
	stopping = psim_trig_dead;
	mutex_unlock(&psim_sets_lock);
	/* the module's stop shut every set down already */
	if (!stopping)
		psim_shutdown(&groups);
}

void psim_triggers_revive_groups(void)
{
	mutex_lock(&psim_sets_lock);
	psim_groups_dead = false;
	down_write(&psim_sys_triggers.rwsem);
	psim_top_dead = false;
	up_write(&psim_sys_triggers.rwsem);
	mutex_unlock(&psim_sets_lock);
}

/*
 * A cgroup's files made (again, after the tree went and came back): its
 * set, if it has one, has no trigger (they went with the files) and takes
 * new ones.
 */
void psim_triggers_revive(struct psim_cgroup *cg)
{
	mutex_lock(&psim_sets_lock);
	cg->trig_gone = false;
	if (cg->trig && !psim_trig_dead && !psim_groups_dead) {
		down_write(&cg->trig->rwsem);
		cg->trig->dead = false;
		up_write(&cg->trig->rwsem);
	}
	mutex_unlock(&psim_sets_lock);
}

/*
 * Unload: the lock class and the parked queues go unless a poller is still
 * on one; those stay allocated for good, the class with them, as that
 * poller's poll_freewait() will lock the queue and unlink its entry
 * whenever it returns.
 */
void psim_triggers_exit(void)
{
	struct psim_waitq *wq;
	unsigned long busy = psim_reap_parked();

	if (!busy) {
		if (psim_wq_class) {
			lockdep_unregister_key(&psim_wq_class->key);
			kfree(psim_wq_class);
			psim_wq_class = NULL;
		}
		return;
	}
	list_for_each_entry(wq, &psim_parked, parked)
		kmemleak_not_leak(wq);
	kmemleak_not_leak(psim_wq_class);
	pr_warn("%lu pressure trigger wait queue(s) left allocated at unload (%zu bytes each): a select() or poll() on them is stuck in another file's poll and unlinks itself when it returns\n",
		busy, sizeof(*wq));
}

void psim_triggers_start(void)
{
	int i;

	psim_reap_parked();
	psim_set_init(&psim_sys_triggers, NULL);
	mutex_lock(&psim_sets_lock);
	WARN_ON_ONCE(!list_empty(&psim_sets));
	list_add(&psim_sys_triggers.sets, &psim_sets);
	psim_trig_dead = false;
	psim_groups_dead = false;
	psim_sets_nr = 0;
	mutex_unlock(&psim_sets_lock);
	atomic_set(&psim_poll_wakeup, 0);
	for (i = 0; i < PSIM_NR_AGGS; i++) {
		atomic_long_set(&psim_trig_events[i], 0);
		atomic_long_set(&psim_trig_evals[i], 0);
		atomic_long_set(&psim_trig_created[i], 0);
		atomic_long_set(&psim_trig_destroyed[i], 0);
	}
	atomic_long_set(&psim_poll_runs, 0);
	atomic64_set(&psim_poll_work_ns, 0);
}

/*
 * After the files, the probes and the groups (with their sets) are gone:
 * no trigger is left.
 */
void psim_triggers_stop(void)
{
	struct psim_triggers *ts = &psim_sys_triggers;

	WARN_ON_ONCE(!list_empty(&ts->avg_triggers) ||
		     !list_empty(&ts->poll_triggers));
	mutex_lock(&psim_sets_lock);
	list_del_init(&ts->sets);
	WARN_ON_ONCE(!list_empty(&psim_sets));
	mutex_unlock(&psim_sets_lock);
	/* nothing re-arms the timers once the thread is gone */
	mutex_lock(&psim_task_lock);
	if (psim_poll_task) {
		kthread_stop(psim_poll_task);
		psim_poll_task = NULL;
		static_branch_disable(&psim_poll_key);
	}
	mutex_unlock(&psim_task_lock);
	psim_timer_shutdown_sync(&ts->poll_timer);
}

void psim_triggers_debug(struct psim_triggers_debug *d)
{
	struct psim_triggers *ts = &psim_sys_triggers;
	int i;

	for (i = 0; i < PSIM_NR_AGGS; i++) {
		d->nr[i] = atomic_long_read(&psim_trig_nr[i]);
		d->events[i] = atomic_long_read(&psim_trig_events[i]);
		d->evals[i] = atomic_long_read(&psim_trig_evals[i]);
	}
	d->created = atomic_long_read(&psim_trig_created[PSIM_AVGS]) +
		     atomic_long_read(&psim_trig_created[PSIM_POLL]);
	d->destroyed = atomic_long_read(&psim_trig_destroyed[PSIM_AVGS]) +
		       atomic_long_read(&psim_trig_destroyed[PSIM_POLL]);
	d->poll_runs = atomic_long_read(&psim_poll_runs);
	d->poll_work_ns = atomic64_read(&psim_poll_work_ns);
	mutex_lock(&ts->poll_lock);
	d->poll_states = ts->poll_states;
	d->poll_min_period = ts->poll_min_period;
	mutex_unlock(&ts->poll_lock);
	mutex_lock(&psim_sets_lock);
	d->sets = psim_sets_nr;
	mutex_unlock(&psim_sets_lock);
}
