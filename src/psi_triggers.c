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
 *    probes that is never taken; after one, a read of psim_poll_states.
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
};

struct psim_trigger {
	struct list_head node;
	struct psim_trigger_win w;	/* the window arithmetic */
	enum psim_agg agg;		/* PSIM_POLL if privileged */
	int event;			/* an event poll has not reported */
	bool told;			/* a poll saw the shutdown */
	bool had_waiters;		/* someone slept here at shutdown */
	bool parked;			/* its queue outlives it */
	struct psim_waitq *wq;
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
 * Unprivileged triggers: evaluated under the averaging lock (psi_aggregate.c)
 * and this one inside it.
 */
static LIST_HEAD(psim_avg_triggers);
static DEFINE_MUTEX(psim_avg_lock);

/*
 * Privileged triggers and the fast path's state: its list, totals, windows
 * and schedule, all under psim_poll_lock (the kernel's
 * rtpoll_trigger_lock).
 */
static LIST_HEAD(psim_poll_triggers);
static DEFINE_MUTEX(psim_poll_lock);
static unsigned int psim_poll_nr[PSIM_NR_STATES];
static u64 psim_poll_min_period = U64_MAX;
static u64 psim_poll_until;
static u64 psim_poll_next_update = U64_MAX;
static u64 psim_poll_total[PSIM_NR_STATES - 1];	/* group->total[PSI_POLL] */
static u64 psim_poll_seen[PSIM_NR_STATES - 1];	/* group->rtpoll_total */

/* Read by the probes (psim_poll_kick()). */
DEFINE_STATIC_KEY_FALSE(psim_poll_key);
u32 psim_poll_states;
atomic_t psim_poll_scheduled;
struct timer_list psim_poll_timer;

/*
 * The fast path's thread (the kernel's psimon: SCHED_FIFO at the lowest
 * priority, so it runs while the CPUs are busy with the tasks it reports
 * on), made under psim_poll_lock at the first privileged trigger and kept
 * until the module is disabled; the timer wakes it (the kernel's
 * rtpoll_timer and rtpoll_wakeup).
 */
static struct task_struct *psim_poll_task;
static DECLARE_WAIT_QUEUE_HEAD(psim_poll_wait);
static atomic_t psim_poll_wakeup;

/*
 * Shutdown: set under the write side, read by every poll and write under
 * the read side, so that once it is set no poll is left that missed it.
 */
static DECLARE_RWSEM(psim_trig_rwsem);
static bool psim_trig_dead;

/* debugfs counters (under the list locks, or atomic enough for a view) */
static unsigned long psim_trig_nr[PSIM_NR_AGGS];
static unsigned long psim_trig_created[PSIM_NR_AGGS];
static unsigned long psim_trig_destroyed[PSIM_NR_AGGS];
static unsigned long psim_trig_events[PSIM_NR_AGGS];
static unsigned long psim_trig_evals[PSIM_NR_AGGS];
static unsigned long psim_poll_runs;
static u64 psim_poll_work_ns;

/* Generate an event: the kernel's update_triggers() tail. */
static void psim_trigger_signal(struct psim_trigger *t)
{
	if (cmpxchg(&t->event, 0, 1) == 0)
		wake_up_interruptible(&t->wq->wait);
	psim_trig_events[t->agg]++;
}

/* Every unprivileged trigger, with the averaging lock held. */
void psim_triggers_avgs_update(u64 now, const u64 *total, const u64 *seen)
{
	struct psim_trigger *t;
	bool update_total = false;

	if (list_empty(&psim_avg_triggers))
		return;
	mutex_lock(&psim_avg_lock);
	list_for_each_entry(t, &psim_avg_triggers, node) {
		psim_trig_evals[PSIM_AVGS]++;
		if (psim_trigger_update(&t->w, now, total, seen,
					&update_total))
			psim_trigger_signal(t);
	}
	mutex_unlock(&psim_avg_lock);
}

/*
 * Queue the fast path unless it is queued already, or @force: re-arm it
 * even so (the kernel's psi_schedule_rtpoll_work()).
 */
static void psim_poll_schedule(unsigned long delay, bool force)
{
	if (atomic_xchg(&psim_poll_scheduled, 1) && !force)
		return;
	mod_timer(&psim_poll_timer, jiffies + delay);
}

static void psim_poll_timer_fn(struct timer_list *timer)
{
	atomic_set(&psim_poll_wakeup, 1);
	wake_up_interruptible(&psim_poll_wait);
}

/* Entering polling mode: every window starts now (init_rtpoll_triggers()). */
static void psim_poll_init_windows(u64 now)
{
	struct psim_trigger *t;

	list_for_each_entry(t, &psim_poll_triggers, node)
		psim_window_reset(&t->w.win, now, psim_poll_total[t->w.state],
				  0);
	memcpy(psim_poll_seen, psim_poll_total, sizeof(psim_poll_seen));
	psim_poll_next_update = now + psim_poll_min_period;
}

/*
 * The fast path (the kernel's psi_rtpoll_work()): collect, and while a
 * watched state's time moves keep updating the triggers every
 * min_period (a tenth of the smallest window), for one window more after
 * the last move; then let the probes restart it.
 */
static void psim_poll_run(void)
{
	bool force = false, update_total = false;
	struct psim_trigger *t;
	u32 changed;
	u64 now, t0;

	mutex_lock(&psim_poll_lock);
	t0 = sched_clock();
	now = t0;
	psim_poll_runs++;
	if (now > psim_poll_until) {
		/*
		 * About to start, or to stop if nothing moved. Clear the flag
		 * before reading the states: a probe that changes a state
		 * after our read sees it clear and queues us again.
		 */
		atomic_set(&psim_poll_scheduled, 0);
		/* pairs with the probe's atomic_xchg() (a full barrier) */
		smp_mb();
	} else {
		/* inside the polling window: keep going */
		force = true;
	}
	if (list_empty(&psim_poll_triggers)) {
		atomic_set(&psim_poll_scheduled, 0);
		psim_poll_until = 0;
		psim_poll_next_update = U64_MAX;
		goto out;
	}

	changed = psim_collect_poll(psim_poll_total);
	if (changed & psim_poll_states) {
		if (now > psim_poll_until)
			psim_poll_init_windows(now);
		psim_poll_until = now + psim_poll_min_period *
					PSIM_UPDATES_PER_WINDOW;
	}
	if (now > psim_poll_until) {
		psim_poll_next_update = U64_MAX;
		goto out;
	}
	if (now >= psim_poll_next_update) {
		list_for_each_entry(t, &psim_poll_triggers, node) {
			psim_trig_evals[PSIM_POLL]++;
			if (psim_trigger_update(&t->w, now, psim_poll_total,
						psim_poll_seen, &update_total))
				psim_trigger_signal(t);
		}
		psim_poll_next_update = now + psim_poll_min_period;
		if (update_total)
			memcpy(psim_poll_seen, psim_poll_total,
			       sizeof(psim_poll_seen));
	}
	psim_poll_schedule(nsecs_to_jiffies(psim_poll_next_update - now) + 1,
			   force);
out:
	psim_poll_work_ns += sched_clock() - t0;
	mutex_unlock(&psim_poll_lock);
}

static int psim_poll_thread(void *unused)
{
	for (;;) {
		wait_event_interruptible(psim_poll_wait,
					 atomic_cmpxchg(&psim_poll_wakeup, 1, 0) ||
					 kthread_should_stop());
		if (kthread_should_stop())
			return 0;
		psim_poll_run();
	}
}

/*
 * Add @t to its aggregator; returns with it evaluated from now on, or an
 * error if the fast path's thread could not be made (the kernel's
 * psi_trigger_create() fails the write then).
 */
static int psim_trigger_add(struct psim_trigger *t)
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

		mutex_lock(&psim_poll_lock);
		v = psim_poll_total[t->w.state];
		mutex_unlock(&psim_poll_lock);
		psim_window_reset(&t->w.win, sched_clock(), v, 0);
		mutex_lock(&psim_avg_lock);
		list_add(&t->node, &psim_avg_triggers);
		psim_trig_nr[PSIM_AVGS]++;
		psim_trig_created[PSIM_AVGS]++;
		mutex_unlock(&psim_avg_lock);
		return 0;
	}

	mutex_lock(&psim_poll_lock);
	if (!psim_poll_task) {
		struct task_struct *task;

		task = kthread_create(psim_poll_thread, NULL, "psi_mod_poll");
		if (IS_ERR(task)) {
			mutex_unlock(&psim_poll_lock);
			return PTR_ERR(task);
		}
		sched_set_fifo_low(task);
		wake_up_process(task);
		psim_poll_task = task;
		started = true;
	}
	psim_window_reset(&t->w.win, sched_clock(),
			  psim_poll_total[t->w.state], 0);
	list_add(&t->node, &psim_poll_triggers);
	psim_poll_min_period = min(psim_poll_min_period,
				   div_u64(t->w.win.size,
					   PSIM_UPDATES_PER_WINDOW));
	psim_poll_nr[t->w.state]++;
	WRITE_ONCE(psim_poll_states, psim_poll_states | BIT(t->w.state));
	psim_trig_nr[PSIM_POLL]++;
	psim_trig_created[PSIM_POLL]++;
	mutex_unlock(&psim_poll_lock);
	/*
	 * The probes' key goes on with the thread and off with it at stop,
	 * not per trigger: each flip patches the probes' code on every CPU.
	 * Without a trigger the probes read psim_poll_states, 0.
	 */
	if (started)
		static_branch_enable(&psim_poll_key);
	/*
	 * Look once now: the watched state may be in effect already and
	 * change no CPU's mask for a while (the kernel polls once when its
	 * worker starts).
	 */
	psim_poll_schedule(1, true);
	return 0;
}

static void psim_trigger_del(struct psim_trigger *t)
{
	struct psim_trigger *tmp;
	u64 period = U64_MAX;

	if (t->agg == PSIM_AVGS) {
		mutex_lock(&psim_avg_lock);
		list_del(&t->node);
		psim_trig_nr[PSIM_AVGS]--;
		psim_trig_destroyed[PSIM_AVGS]++;
		mutex_unlock(&psim_avg_lock);
		return;
	}

	mutex_lock(&psim_poll_lock);
	list_del(&t->node);
	if (!--psim_poll_nr[t->w.state])
		WRITE_ONCE(psim_poll_states,
			   psim_poll_states & ~BIT(t->w.state));
	list_for_each_entry(tmp, &psim_poll_triggers, node)
		period = min(period, div_u64(tmp->w.win.size,
					     PSIM_UPDATES_PER_WINDOW));
	psim_poll_min_period = period;
	if (!psim_poll_states)
		psim_poll_until = 0;	/* a work still queued finds none */
	psim_trig_nr[PSIM_POLL]--;
	psim_trig_destroyed[PSIM_POLL]++;
	mutex_unlock(&psim_poll_lock);
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
 * A write to a pressure file, as the kernel's psi_write(): at most 32
 * bytes copied, the last one replaced by the terminating NUL; an empty
 * write EINVAL; one trigger per descriptor (EBUSY, before any parsing);
 * the same sscanf() formats. The privilege is the opener's (f_cred): a
 * privileged opener may hand the descriptor to anyone.
 */
ssize_t psim_trigger_write(struct file *file, const char __user *ubuf,
			   size_t nbytes, enum psim_res res)
{
	struct seq_file *seq = file->private_data;
	size_t len = psim_trigger_copy_len(nbytes);
	char buf[PSIM_TRIGGER_BUF];
	u32 threshold_us, window_us;
	enum psim_states state;
	struct psim_trigger *t;
	bool privileged, full;
	int ret;

	if (!len)
		return -EINVAL;
	ret = psim_copy_from_user(buf, ubuf, len);
	if (ret)
		return ret;
	buf[len - 1] = '\0';

	mutex_lock(&seq->lock);
	if (seq->private) {
		ret = -EBUSY;
		goto out;
	}
	if (sscanf(buf, "some %u %u", &threshold_us, &window_us) == 2) {
		full = false;
	} else if (sscanf(buf, "full %u %u", &threshold_us, &window_us) == 2) {
		full = true;
	} else {
		ret = -EINVAL;
		goto out;
	}
	privileged = psim_trigger_privileged(PSIM_TRIGGER_RULES,
					     cap_raised(file->f_cred->cap_effective,
							CAP_SYS_RESOURCE));
	ret = psim_trigger_check(PSIM_TRIGGER_RULES, res, full, threshold_us,
				 window_us, privileged, &state);
	if (ret)
		goto out;

	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (t)
		t->wq = psim_waitq_alloc();
	if (!t || !t->wq) {
		kfree(t);
		ret = -ENOMEM;
		goto out;
	}
	psim_trigger_init(&t->w, state, threshold_us, window_us, 0, 0);
	t->agg = privileged ? PSIM_POLL : PSIM_AVGS;

	down_read(&psim_trig_rwsem);
	if (psim_trig_dead) {
		/* the files are going away: as procfs answers after that */
		up_read(&psim_trig_rwsem);
		kfree(t->wq);
		kfree(t);
		ret = -EIO;
		goto out;
	}
	ret = psim_trigger_add(t);
	up_read(&psim_trig_rwsem);
	if (ret) {
		kfree(t->wq);
		kfree(t);
		goto out;
	}
	/* a trigger fully set up before poll sees it (smp_load_acquire()) */
	smp_store_release(&seq->private, t);
	ret = nbytes;
out:
	mutex_unlock(&seq->lock);
	return ret;
}

/*
 * poll() as the kernel's psi_trigger_poll(): without a trigger at once
 * DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI; with one, EPOLLPRI once per
 * event. Once the files are going away, EPOLLERR | EPOLLPRI at once and
 * no new waiter.
 */
__poll_t psim_trigger_poll(struct file *file, poll_table *wait)
{
	struct seq_file *seq = file->private_data;
	__poll_t ret = DEFAULT_POLLMASK;
	struct psim_trigger *t;

	/* pairs with the write's smp_store_release() */
	t = smp_load_acquire(&seq->private);
	down_read(&psim_trig_rwsem);
	if (!t || psim_trig_dead) {
		if (t)
			WRITE_ONCE(t->told, true);
		ret |= EPOLLERR | EPOLLPRI;
		goto out;
	}
	poll_wait(file, &t->wq->wait, wait);
	if (cmpxchg(&t->event, 1, 0) == 1)
		ret |= EPOLLPRI;
out:
	up_read(&psim_trig_rwsem);
	return ret;
}

/*
 * The file's last close, or proc_remove() closing it: the one place a
 * trigger is destroyed, with its wait queue unless that was parked at the
 * shutdown (see the lifetimes note at the top).
 */
void psim_trigger_release(struct file *file)
{
	struct seq_file *seq = file->private_data;
	struct psim_trigger *t = seq->private;

	if (!t)
		return;
	seq->private = NULL;
	psim_trigger_del(t);
	/* t->parked is set under the list lock psim_trigger_del() took */
	if (!t->parked)
		kfree(t->wq);
	kfree(t);
}

/* Run @fn on every trigger, under the list locks. */
static void psim_triggers_each(void (*fn)(struct psim_trigger *t, void *arg),
			       void *arg)
{
	struct psim_trigger *t;

	mutex_lock(&psim_avg_lock);
	list_for_each_entry(t, &psim_avg_triggers, node)
		fn(t, arg);
	mutex_unlock(&psim_avg_lock);
	mutex_lock(&psim_poll_lock);
	list_for_each_entry(t, &psim_poll_triggers, node)
		fn(t, arg);
	mutex_unlock(&psim_poll_lock);
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
	unsigned long n = 0;

	psim_triggers_each(psim_count_waiters, &n);
	return n;
}

/* A queue with select/poll entries still on it: keep it past its trigger. */
static void psim_park(struct psim_trigger *t, void *arg)
{
	if (!psim_waiters(t))
		return;
	t->parked = true;
	mutex_lock(&psim_wq_lock);
	list_add(&t->wq->parked, &psim_parked);
	mutex_unlock(&psim_wq_lock);
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
		 */
		if (psim_waitq_busy(wq)) {
			busy++;
			continue;
		}
		list_del(&wq->parked);
		kfree(wq);
	}
	mutex_unlock(&psim_wq_lock);
	return busy;
}

/*
 * Before the files go (unload, enable=0): see the lifetimes note at the
 * top. Afterwards no wait queue of a trigger has a poller on it but the
 * parked ones, which outlive their triggers, and proc_remove() may
 * destroy the triggers through ->proc_release. Bounded: about
 * PSIM_SHUTDOWN_MS, whatever the pollers do.
 */
void psim_triggers_shutdown(void)
{
	unsigned long n, deadline;

	psim_reap_parked();
	down_write(&psim_trig_rwsem);
	psim_trig_dead = true;
	up_write(&psim_trig_rwsem);
	/* every poll from here on answers EPOLLERR | EPOLLPRI and adds nothing */
	psim_triggers_each(psim_wake_dead, NULL);
	deadline = jiffies + msecs_to_jiffies(PSIM_SHUTDOWN_MS);

	/*
	 * Give the woken a moment to poll again while the files still answer
	 * (after proc_remove() procfs answers DEFAULT_POLLMASK only, without
	 * the error an epoll consumer waits for). A consumer that is not in
	 * poll now cannot be waited for.
	 */
	for (;;) {
		n = 0;
		psim_triggers_each(psim_count_untold, &n);
		if (!n || time_after(jiffies, deadline))
			break;
		msleep(20);
	}

	psim_triggers_each(psim_pollfree, NULL);
	/*
	 * select() and poll() remove their entries when they return, which
	 * the wakeup above makes them do, unless they are stuck in another
	 * file's ->poll: wait for them within the same time, then park the
	 * queues they are still on.
	 */
	for (;;) {
		n = 0;
		psim_triggers_each(psim_count_waiters, &n);
		if (!n || time_after(jiffies, deadline))
			break;
		msleep(20);
	}
	if (n)
		psim_triggers_each(psim_park, NULL);
	/* POLLFREE's rule: epoll reads the queue head under RCU */
	synchronize_rcu();
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
	psim_reap_parked();
	timer_setup(&psim_poll_timer, psim_poll_timer_fn, 0);
	psim_trig_dead = false;
	atomic_set(&psim_poll_scheduled, 0);
	atomic_set(&psim_poll_wakeup, 0);
	psim_poll_min_period = U64_MAX;
	psim_poll_until = 0;
	psim_poll_next_update = U64_MAX;
	memset(psim_poll_total, 0, sizeof(psim_poll_total));
	memset(psim_poll_seen, 0, sizeof(psim_poll_seen));
	memset(psim_trig_events, 0, sizeof(psim_trig_events));
	memset(psim_trig_evals, 0, sizeof(psim_trig_evals));
	memset(psim_trig_created, 0, sizeof(psim_trig_created));
	memset(psim_trig_destroyed, 0, sizeof(psim_trig_destroyed));
	psim_poll_runs = 0;
	psim_poll_work_ns = 0;
}

/* After the files and the probes are gone: no trigger is left. */
void psim_triggers_stop(void)
{
	WARN_ON_ONCE(!list_empty(&psim_avg_triggers) ||
		     !list_empty(&psim_poll_triggers));
	/* nothing re-arms the timer once the thread is gone */
	if (psim_poll_task) {
		kthread_stop(psim_poll_task);
		psim_poll_task = NULL;
		static_branch_disable(&psim_poll_key);
	}
	psim_timer_shutdown_sync(&psim_poll_timer);
}

void psim_triggers_debug(struct psim_triggers_debug *d)
{
	mutex_lock(&psim_avg_lock);
	d->nr[PSIM_AVGS] = psim_trig_nr[PSIM_AVGS];
	d->events[PSIM_AVGS] = psim_trig_events[PSIM_AVGS];
	d->evals[PSIM_AVGS] = psim_trig_evals[PSIM_AVGS];
	d->created = psim_trig_created[PSIM_AVGS];
	d->destroyed = psim_trig_destroyed[PSIM_AVGS];
	mutex_unlock(&psim_avg_lock);
	mutex_lock(&psim_poll_lock);
	d->nr[PSIM_POLL] = psim_trig_nr[PSIM_POLL];
	d->events[PSIM_POLL] = psim_trig_events[PSIM_POLL];
	d->evals[PSIM_POLL] = psim_trig_evals[PSIM_POLL];
	d->created += psim_trig_created[PSIM_POLL];
	d->destroyed += psim_trig_destroyed[PSIM_POLL];
	d->poll_runs = psim_poll_runs;
	d->poll_work_ns = psim_poll_work_ns;
	d->poll_states = psim_poll_states;
	d->poll_min_period = psim_poll_min_period;
	mutex_unlock(&psim_poll_lock);
}
