// SPDX-License-Identifier: GPL-2.0
/*
 * Pressure triggers: src/psi_triggers.c itself, included below and
 * compiled against the kernel API shim with the aggregation and the
 * probes linked in (kmod.h), so that the checks see its triggers. Against
 * the kernel's rules, Debian's 6.1.y kernel/sched/psi.c: psi_write()'s
 * buffer, psi_trigger_create()'s checks, window_update(),
 * update_triggers() and psi_rtpoll_work(). The numbers are worked out by
 * hand from those functions.
 *
 *  - the table of writes goes through psim_trigger_write() on a file of
 *    the shim (its seq_file, the opener's credentials): the errno, or the
 *    trigger it made (state, threshold, window, aggregator), under the
 *    rules of the kernel the binary is built for (PSIM_TRIGGER_RULES):
 *    Debian 12's 6.1.y by default, 6.12 (test_triggers_612) and 5.10
 *    (test_triggers_510);
 *  - the fast path: its timer and thread run psim_poll_run() as the
 *    probes' kick and its own schedule arm them, on stalls made by
 *    scheduler events through the probes; the unprivileged triggers on
 *    the averaging work;
 *  - the shutdown: pollers woken with EPOLLERR | EPOLLPRI, epoll entries
 *    detached, a select() stuck elsewhere waited for within the bound and
 *    its queue parked, freed later, a second start, the unload;
 *  - the window and rate-limit arithmetic of psi_mod_logic.h directly.
 *
 * The parse itself is sscanf() with the kernel's formats; here that is
 * glibc's, which agrees with the kernel's vsscanf() on every input below
 * (the rows where the two differ, such as a "+5" or "-1", are checked on
 * the kernel itself, side by side, in the VM suite psi1).
 */
#include <sys/wait.h>
#include <unistd.h>
#include "../../src/psi_triggers.c"
#include "kmod.h"

/* each kernel's build runs its own tests of those below (main()) */
#pragma GCC diagnostic ignored "-Wunused-function"

#define T0		(100 * NSEC_PER_SEC)	/* the load, past boot */
#define RULES_6_1	(PSIM_TRIG_CPU_FULL | PSIM_TRIG_UNPRIV)
#define RULES_6_12	(PSIM_TRIG_CPU_FULL | PSIM_TRIG_UNPRIV | \
			 PSIM_TRIG_ANY_WINDOW)
#define RULES_5_10	0U

/* A pressure file opened, its opener with CAP_SYS_RESOURCE or not. */
struct tfile {
	struct file f;
	struct seq_file seq;
	struct cred cred;
	struct psim_trigger *t;	/* the file's trigger slot */
};

static void topen(struct tfile *tf, bool cap)
{
	memset(tf, 0, sizeof(*tf));
	tf->cred.cap_effective = cap ? 1ULL << CAP_SYS_RESOURCE : 0;
	tf->f.f_cred = &tf->cred;
	tf->f.private_data = &tf->seq;
}

static struct psim_trigger *trig(struct tfile *tf)
{
	return tf->t;
}

static ssize_t twrite(struct tfile *tf, const char *s, size_t n,
		      enum psim_res res)
{
	return psim_trigger_write(&tf->f, (const char __user *)s, n, res, NULL,
				  &tf->t);
}

/* What a write made. */
struct made {
	enum psim_states state;
	unsigned int threshold_us, window_us;
	enum psim_agg agg;
};

/*
 * The write of @n bytes of @s to a fresh file of @res, opened with
 * CAP_SYS_RESOURCE if @cap: the errno, or 0 and the trigger's numbers in
 * *@m; the file is then closed.
 */
static int write_n(const char *s, size_t n, enum psim_res res, bool cap,
		   struct made *m)
{
	struct psim_trigger *t;
	struct tfile tf;
	ssize_t r;

	topen(&tf, cap);
	r = twrite(&tf, s, n, res);
	t = trig(&tf);
	if (r < 0) {
		TU_CHECK(!t, "\"%s\": a trigger after error %zd", s, r);
		return r;
	}
	TU_CHECK(r == (ssize_t)n && t, "\"%s\": %zd, trigger %p", s, r, t);
	if (!t)
		return -1000;
	if (m) {
		m->state = t->w.state;
		m->threshold_us = t->w.threshold / 1000;
		m->window_us = t->w.win.size / 1000;
		m->agg = t->agg;
	}
	psim_trigger_release(&tf.t);
	TU_CHECK(!trig(&tf), "\"%s\": still a trigger after the release", s);
	return 0;
}

static int w(const char *s, enum psim_res res, bool cap)
{
	return write_n(s, strlen(s), res, cap, NULL);
}

static void trigger_buffer(void)
{
	TU_EQ(psim_trigger_copy_len(0), 0);
	TU_EQ(psim_trigger_copy_len(1), 1);
	TU_EQ(psim_trigger_copy_len(31), 31);
	TU_EQ(psim_trigger_copy_len(32), 32);
	TU_EQ(psim_trigger_copy_len(4096), 32);
}

/* Debian 12's 6.1.y: cpu full, the 6.5 privilege rules, the 500 ms minimum */
static void trigger_parse_rows(void)
{
	/* the last byte copied ends where a 33-byte write's 32nd is */
	static const char long_ok[] = "some 150000              5000000\n";
	struct made m = { 0 };

	kmod_start();
	TU_EQ(PSIM_TRIGGER_RULES, RULES_6_1);
	/* the documentation's example, with echo's newline */
	TU_EQS(write_n("some 150000 1000000\n", 20, PSIM_MEM, true, &m), 0);
	TU_EQ(m.state, PSIM_MEM_SOME);
	TU_EQ(m.threshold_us, 150000);
	TU_EQ(m.window_us, 1000000);
	TU_EQ(m.agg, PSIM_POLL);
	/* without it the last digit goes: a 100 ms window, EINVAL */
	TU_EQS(write_n("some 150000 1000000", 19, PSIM_MEM, true, &m),
	       -EINVAL);
	/* so a window of 5 s written so becomes 500 ms */
	TU_EQS(write_n("some 150000 5000000", 19, PSIM_MEM, true, &m), 0);
	TU_EQ(m.window_us, 500000);
	/* with a trailing NUL counted in the length: fine */
	TU_EQS(write_n("some 150000 1000000", 20, PSIM_MEM, true, &m), 0);
	TU_EQ(m.window_us, 1000000);
	/* an empty write */
	TU_EQS(write_n("", 0, PSIM_MEM, true, &m), -EINVAL);
	/* a window that ends past the 32 bytes copied loses digits */
	TU_EQS(w("some      150000         1000000\n", PSIM_CPU, true),
	       -EINVAL);	/* byte 32, the last 0, became the NUL */
	TU_EQ(sizeof(long_ok) - 1, 33);
	TU_EQS(write_n(long_ok, 33, PSIM_CPU, true, &m), 0);
	TU_EQ(m.window_us, 500000);
	TU_EQ(m.state, PSIM_CPU_SOME);
	/* states per resource; cpu full is accepted at the system level */
	TU_EQS(write_n("full 150000 1000000\n", 20, PSIM_IO, true, &m), 0);
	TU_EQ(m.state, PSIM_IO_FULL);
	TU_EQS(write_n("full 1 500000\n", 14, PSIM_CPU, true, &m), 0);
	TU_EQ(m.state, PSIM_CPU_FULL);
	TU_EQ(m.threshold_us, 1);
	TU_EQ(m.window_us, 500000);
	TU_EQS(write_n("some 1 500000\n", 14, PSIM_CPU, true, &m), 0);
	TU_EQ(m.state, PSIM_CPU_SOME);
	TU_EQS(write_n("some 1 500000\n", 14, PSIM_IO, true, &m), 0);
	TU_EQ(m.state, PSIM_IO_SOME);
	/* unparsable */
	TU_EQS(w("bogus 1 500000\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w("some\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w("some 1\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w(" some 1 500000\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w("SOME 1 500000\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w("some x 500000\n", PSIM_IO, true), -EINVAL);
	/* window limits: 500 ms .. 10 s inclusive */
	TU_EQS(w("some 1 499999\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w("some 1 500000\n", PSIM_IO, true), 0);
	TU_EQS(w("some 1 10000000\n", PSIM_IO, true), 0);
	TU_EQS(w("some 1 10000001\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w("some 10000 100000\n", PSIM_MEM, true), -EINVAL);
	TU_EQS(w("some 1 1\n", PSIM_IO, true), -EINVAL);
	/* threshold: not 0, not above the window */
	TU_EQS(w("some 0 1000000\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w("some 1000000 1000000\n", PSIM_IO, true), 0);
	TU_EQS(w("some 1000001 1000000\n", PSIM_IO, true), -EINVAL);
	/* trailing junk after the two numbers is ignored, as sscanf() does */
	TU_EQS(write_n("some 1 500000 junk\n", 19, PSIM_IO, true, &m), 0);
	TU_EQ(m.window_us, 500000);
	/* irq: full only (psi_write()'s --state), some is EINVAL */
	TU_EQS(write_n("full 1 500000\n", 14, PSIM_IRQ, true, &m), 0);
	TU_EQ(m.state, PSIM_IRQ_FULL);
	TU_EQS(w("some 1 500000\n", PSIM_IRQ, true), -EINVAL);
	TU_EQS(w("some 150000 2000000\n", PSIM_IRQ, false), -EINVAL);
	TU_EQS(w("full 150000 2000000\n", PSIM_IRQ, false), 0);
	TU_EQS(w("full 150000 1000000\n", PSIM_IRQ, false), -EINVAL);
	TU_EQS(w("full 0 1000000\n", PSIM_IRQ, true), -EINVAL);
	/* and no resource past irq */
	TU_EQS(w("some 1 500000\n", PSIM_NR_RES, true), -EINVAL);
	TU_EQS(w("full 1 500000\n", PSIM_NR_RES, true), -EINVAL);
	kmod_stop();
}

/* Each line of each file shows the kernel's state: res * 2 + full. */
static void trigger_res_states(void)
{
	TU_EQ(psim_res_state(PSIM_IO, false), PSIM_IO_SOME);
	TU_EQ(psim_res_state(PSIM_IO, true), PSIM_IO_FULL);
	TU_EQ(psim_res_state(PSIM_MEM, false), PSIM_MEM_SOME);
	TU_EQ(psim_res_state(PSIM_MEM, true), PSIM_MEM_FULL);
	TU_EQ(psim_res_state(PSIM_CPU, false), PSIM_CPU_SOME);
	TU_EQ(psim_res_state(PSIM_CPU, true), PSIM_CPU_FULL);
	TU_EQ(psim_res_state(PSIM_IRQ, false), -1);
	TU_EQ(psim_res_state(PSIM_IRQ, true), PSIM_IRQ_FULL);
	TU_EQ(psim_res_state(PSIM_NR_RES, true), -1);
}

/* The opener's privilege decides the aggregator and the windows allowed. */
static void trigger_privilege(void)
{
	struct made m = { 0 };

	kmod_start();
	/* unprivileged: windows in multiples of 2 s only */
	TU_EQS(w("some 150000 1000000\n", PSIM_MEM, false), -EINVAL);
	TU_EQS(w("some 150000 500000\n", PSIM_MEM, false), -EINVAL);
	TU_EQS(write_n("some 150000 2000000\n", 20, PSIM_MEM, false, &m), 0);
	TU_EQ(m.agg, PSIM_AVGS);
	TU_EQ(m.window_us, 2000000);
	TU_EQS(w("some 150000 4000000\n", PSIM_MEM, false), 0);
	TU_EQS(w("some 150000 3000000\n", PSIM_MEM, false), -EINVAL);
	TU_EQS(w("some 150000 10000000\n", PSIM_MEM, false), 0);
	TU_EQS(w("full 150000 2000001\n", PSIM_MEM, false), -EINVAL);
	/* and the other rules still hold */
	TU_EQS(w("some 0 2000000\n", PSIM_MEM, false), -EINVAL);
	TU_EQS(w("some 150000 12000000\n", PSIM_MEM, false), -EINVAL);
	/* privileged: any window in range, the fast path's */
	TU_EQS(write_n("some 150000 1000000\n", 20, PSIM_MEM, true, &m), 0);
	TU_EQ(m.agg, PSIM_POLL);
	TU_EQS(w("some 150000 3000000\n", PSIM_MEM, true), 0);
	/* a privileged opener's 2 s window is the fast path's too */
	TU_EQS(write_n("some 150000 2000000\n", 20, PSIM_MEM, true, &m), 0);
	TU_EQ(m.agg, PSIM_POLL);
	kmod_stop();
}

/*
 * 6.12's psi_trigger_create(): no 500 ms minimum, "window_us == 0 ||
 * window_us > WINDOW_MAX_US" is EINVAL; the privilege rules as 6.1's.
 */
static void trigger_rules_6_12(void)
{
	struct made m = { 0 };

	kmod_start();
	TU_EQ(PSIM_TRIGGER_RULES, RULES_6_12);
	TU_EQS(w("some 10000 100000\n", PSIM_MEM, true), 0);
	TU_EQS(w("some 1 499999\n", PSIM_IO, true), 0);
	TU_EQS(write_n("some 1 1\n", 9, PSIM_IO, true, &m), 0);
	TU_EQ(m.window_us, 1);
	TU_EQS(w("some 1 0\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w("some 0 0\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w("some 1 10000000\n", PSIM_IO, true), 0);
	TU_EQS(w("some 1 10000001\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w("some 2 1\n", PSIM_IO, true), -EINVAL);
	/* the last byte still becomes the NUL: window 100000 us, now fine */
	TU_EQS(write_n("some 50000 1000000", 18, PSIM_MEM, true, &m), 0);
	TU_EQ(m.window_us, 100000);
	/* unprivileged: multiples of 2 s, as on 6.1 */
	TU_EQS(w("some 10000 100000\n", PSIM_MEM, false), -EINVAL);
	TU_EQS(write_n("some 150000 2000000\n", 20, PSIM_MEM, false, &m), 0);
	TU_EQ(m.agg, PSIM_AVGS);
	TU_EQS(w("full 150000 1000000\n", PSIM_CPU, true), 0);
	kmod_stop();
}

/*
 * 5.10's psi_trigger_create(): 500 ms..10 s, no privilege rule (the files
 * are 0444: whoever could open one for writing may set any window, and
 * every trigger is the fast path's), and no cpu full state.
 */
static void trigger_rules_5_10(void)
{
	struct made m = { 0 };

	kmod_start();
	TU_EQ(PSIM_TRIGGER_RULES, RULES_5_10);
	TU_EQ(PSIM_TRIGGER_FILE_MODE, 0444);
	TU_EQS(write_n("some 150000 1000000\n", 20, PSIM_MEM, false, &m), 0);
	TU_EQ(m.agg, PSIM_POLL);
	TU_EQS(w("some 150000 500000\n", PSIM_MEM, false), 0);
	TU_EQS(w("some 150000 3000000\n", PSIM_MEM, false), 0);
	TU_EQS(w("some 1 499999\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w("some 10000 100000\n", PSIM_MEM, true), -EINVAL);
	TU_EQS(w("some 1 10000001\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w("some 0 1000000\n", PSIM_IO, true), -EINVAL);
	TU_EQS(w("full 150000 1000000\n", PSIM_CPU, true), -EINVAL);
	TU_EQS(w("some 150000 1000000\n", PSIM_CPU, true), 0);
	TU_EQS(w("full 150000 1000000\n", PSIM_IO, true), 0);
	TU_EQS(w("full 150000 1000000\n", PSIM_IRQ, true), 0);
	kmod_stop();
}

/* window_update(): the growth within the window, interpolated. */
static void trigger_window(void)
{
	struct psim_window win = { .size = 1000 * MS };
	u64 g;

	psim_window_reset(&win, 0, 5000, 0);
	/* half way, 100 ms grown: no previous window, 100 ms */
	g = psim_window_update(&win, 500 * MS, 5000 + 100 * MS);
	TU_EQ(g, 100 * MS);
	TU_EQ(win.start_time, 0);
	/* at exactly the window's end it does not reset yet */
	g = psim_window_update(&win, 1000 * MS, 5000 + 200 * MS);
	TU_EQ(g, 200 * MS);
	TU_EQ(win.start_time, 0);
	/* past it: reset, the growth becomes the previous window's */
	g = psim_window_update(&win, 1100 * MS, 5000 + 300 * MS);
	TU_EQ(g, 300 * MS);
	TU_EQ(win.start_time, 1100 * MS);
	TU_EQ(win.start_value, 5000 + 300 * MS);
	TU_EQ(win.prev_growth, 300 * MS);
	/*
	 * 400 ms later, 40 ms more: 40 ms plus the previous window's 300 ms
	 * times the 600 ms of it still inside the window: 220 ms.
	 */
	g = psim_window_update(&win, 1500 * MS, 5000 + 340 * MS);
	TU_EQ(g, 40 * MS + 180 * MS);
}

/*
 * update_triggers(): at most one event per window; a breach inside the
 * rate-limit window is held and delivered by the first update after it.
 */
static void trigger_rate_limit(void)
{
	u64 total[PSIM_NR_STATES - 1] = { 0 }, seen[PSIM_NR_STATES - 1] = { 0 };
	struct psim_trigger_win t;
	bool upd;

	psim_trigger_init(&t, PSIM_IO_SOME, 100000, 1000000, 0, 0);
	TU_EQ(t.threshold, 100 * MS);
	TU_EQ(t.win.size, 1000 * MS);

	/* nothing moved: no event, no update of the totals */
	upd = false;
	TU_EQ(psim_trigger_update(&t, 100 * MS, total, seen, &upd), 0);
	TU_EQ(upd, 0);
	/* 50 ms: below the threshold */
	total[PSIM_IO_SOME] = 50 * MS;
	TU_EQ(psim_trigger_update(&t, 200 * MS, total, seen, &upd), 0);
	TU_EQ(upd, 1);
	memcpy(seen, total, sizeof(seen));
	/* 120 ms within the window: an event; 1 s since the last (at 0)? */
	total[PSIM_IO_SOME] = 120 * MS;
	TU_EQ(psim_trigger_update(&t, 1000 * MS, total, seen, &upd), 1);
	TU_EQ(t.last_event_time, 1000 * MS);
	memcpy(seen, total, sizeof(seen));
	/*
	 * 150 ms more by 1.3 s: a breach, but within a window of the last
	 * event: held, not dropped
	 */
	total[PSIM_IO_SOME] = 270 * MS;
	TU_EQ(psim_trigger_update(&t, 1300 * MS, total, seen, &upd), 0);
	TU_EQ(t.pending_event, 1);
	memcpy(seen, total, sizeof(seen));
	/* no new stall, still inside the rate-limit window: still held */
	TU_EQ(psim_trigger_update(&t, 1900 * MS, total, seen, &upd), 0);
	TU_EQ(t.pending_event, 1);
	/* the first update once the window has passed delivers it */
	TU_EQ(psim_trigger_update(&t, 2000 * MS, total, seen, &upd), 1);
	TU_EQ(t.pending_event, 0);
	TU_EQ(t.last_event_time, 2000 * MS);
	/* and then nothing, with nothing new */
	TU_EQ(psim_trigger_update(&t, 3100 * MS, total, seen, &upd), 0);
	/* the other states' totals are none of this trigger's business */
	total[PSIM_CPU_SOME] = 900 * MS;
	upd = false;
	TU_EQ(psim_trigger_update(&t, 3200 * MS, total, seen, &upd), 0);
	TU_EQ(upd, 0);
}

/* What fails a write, and that it leaves nothing behind. */
static void trigger_write_errors(void)
{
	struct tfile tf;
	long live;

	kmod_start();
	/* the first trigger of the load makes the queues' lock class */
	TU_EQS(w("some 150000 2000000\n", PSIM_IO, false), 0);
	live = shim_kmalloc_live;
	/* one trigger per file, before any parsing */
	topen(&tf, true);
	TU_EQS(twrite(&tf, "some 150000 1000000\n", 20, PSIM_IO), 20);
	TU_EQS(twrite(&tf, "some 150000 1000000\n", 20, PSIM_IO), -EBUSY);
	TU_EQS(twrite(&tf, "bogus\n", 6, PSIM_IO), -EBUSY);
	TU_EQ(trig(&tf)->w.state, PSIM_IO_SOME);
	psim_trigger_release(&tf.t);
	TU_EQ(shim_kmalloc_live, live);
	/* a buffer that is not there */
	shim_uaccess_fault = true;
	TU_EQS(w("some 150000 1000000\n", PSIM_IO, true), -EFAULT);
	shim_uaccess_fault = false;
	/* no memory for the trigger */
	shim_kmalloc_fail = 1;
	TU_EQS(w("some 150000 1000000\n", PSIM_IO, true), -ENOMEM);
	TU_EQ(shim_kmalloc_fail, 0);
	TU_EQ(shim_kmalloc_live, live);
	kmod_stop();

	/* the fast path's thread cannot be made: the write fails */
	kmod_start();
	shim_kthread_create_err = -ENOMEM;
	TU_EQS(w("some 150000 1000000\n", PSIM_IO, true), -ENOMEM);
	TU_EQ(shim_kmalloc_live, live);
	TU_EQ(shim_kthreads_live, 0);
	TU_EQ(psim_poll_key.enabled, false);
	TU_EQ(psim_sys_triggers.poll_states, 0);
	/* and the next one makes it */
	topen(&tf, true);
	TU_EQS(twrite(&tf, "some 150000 1000000\n", 20, PSIM_IO), 20);
	TU_EQ(shim_kthreads_live, 1);
	TU_EQ(psim_poll_key.enabled, true);
	TU_EQ(psim_sys_triggers.poll_states, BIT(PSIM_IO_SOME));
	psim_trigger_release(&tf.t);
	TU_EQ(psim_sys_triggers.poll_states, 0);
	kmod_stop();
	TU_EQ(shim_kthreads_live, 0);
	TU_EQ(psim_poll_key.enabled, false);
	TU_EQ(shim_kmalloc_live, live);
	TU_EQ(shim_warnings, 0);
}

static struct task_struct ta = { .pid = 201 };

/*
 * Fire the fast path's timer at its due times up to @end and run its
 * thread: each run that leaves an event on @tf (poll() answers EPOLLPRI)
 * is noted in @ev, in ms since T0. The clock is then at @end.
 */
static int fast_path_until(u64 end, struct tfile *tf, unsigned long *ev,
			   int max, int *runs, unsigned long *last_ms)
{
	int n = 0;

	while (shim_timer_pending(&psim_sys_triggers.poll_timer) && *runs < 10000) {
		u64 due = jiffies_to_nsecs(psim_sys_triggers.poll_timer.expires);

		if (due < shim_now)
			due = shim_now;
		if (due > end)
			break;
		shim_now = due;
		shim_timer_fire(&psim_sys_triggers.poll_timer);
		/* it runs psim_poll_run() once and sleeps again */
		TU_EQ(shim_kthread_run(psim_poll_task), 0);
		(*runs)++;
		*last_ms = (shim_now - T0) / MS;
		if (psim_trigger_poll(&tf->t, &tf->f, NULL) & EPOLLPRI) {
			if (n < max)
				ev[n] = *last_ms;
			n++;
		}
	}
	if (shim_now < end)
		shim_now = end;
	return n;
}

/*
 * psim_poll_run(): a privileged io trigger, 100 ms in a 1 s window. The
 * probes' kick arms the timer when the watched state begins; the fast path
 * then updates the trigger every 100 ms (a tenth of the window; the timer
 * rounds to 26 jiffies, 104 ms) and keeps polling for one window after the
 * state last moved. A 50 ms stall makes no event; a long one an event
 * when the growth within the window reaches 100 ms, then one per window
 * at most: a breach inside the window of the last event is held and
 * delivered by the first update after it, also once the stall is over.
 * A memory trigger beside it sees nothing.
 */
static void trigger_fast_path(void)
{
	struct psim_triggers_debug d;
	unsigned long ev[8], last = 0;
	struct tfile tf, tm;
	int n, runs = 0;

	shim_now = T0;
	kmod_start();
	topen(&tf, true);
	topen(&tm, true);
	TU_EQS(twrite(&tf, "some 100000 1000000\n", 20, PSIM_IO), 20);
	TU_EQS(twrite(&tm, "some 100000 1000000\n", 20, PSIM_MEM), 20);
	TU_EQ(psim_poll_key.enabled, true);
	TU_EQ(psim_sys_triggers.poll_states, BIT(PSIM_IO_SOME) | BIT(PSIM_MEM_SOME));
	/* the look at the start: nothing stalls, no more polling */
	TU_EQ(shim_timer_pending(&psim_sys_triggers.poll_timer), 1);
	n = fast_path_until(T0 + 50 * MS, &tf, ev, 8, &runs, &last);
	TU_EQ(n, 0);
	TU_EQ(runs, 1);
	TU_EQ(last, 4);
	TU_EQ(shim_timer_pending(&psim_sys_triggers.poll_timer), 0);
	/* a task runs: nothing watched, no kick */
	kmod_run(0, &ta);
	TU_EQ(shim_timer_pending(&psim_sys_triggers.poll_timer), 0);

	/* 50 ms of iowait from 100 ms: polled for a window, no event */
	shim_now = T0 + 100 * MS;
	kmod_sleep(0, true, NULL);
	TU_EQ(shim_timer_pending(&psim_sys_triggers.poll_timer), 1);
	n = fast_path_until(T0 + 150 * MS, &tf, ev, 8, &runs, &last);
	kmod_run(0, &ta);
	shim_now = T0 + 160 * MS;
	kmod_sleep(0, false, NULL);
	n += fast_path_until(T0 + 3000 * MS, &tf, ev + n, 8 - n, &runs,
			     &last);
	TU_EQ(n, 0);
	/* 104, 208, .. 1248 ms: the first past 1 s after the last move */
	TU_EQ(runs, 1 + 12);
	TU_EQ(last, 1248);
	TU_EQ(shim_timer_pending(&psim_sys_triggers.poll_timer), 0);

	/* iowait from 3 s to 5.5 s */
	kmod_run(0, &ta);
	kmod_sleep(0, true, NULL);
	n = fast_path_until(T0 + 5500 * MS, &tf, ev, 8, &runs, &last);
	kmod_run(0, &ta);
	n += fast_path_until(T0 + 9000 * MS, &tf, ev + n, 8 - n, &runs,
			     &last);
	TU_EQ(n, 4);
	TU_EQ(ev[0], 3108);	/* 104 ms grown since the window began */
	TU_EQ(ev[1], 4148);	/* each the first update a window later */
	TU_EQ(ev[2], 5188);
	TU_EQ(ev[3], 6228);	/* held from 5292 ms, after the stall */
	TU_EQ(last, 6540);	/* polling ends a window after 5.5 s */
	TU_EQ(shim_timer_pending(&psim_sys_triggers.poll_timer), 0);
	TU_EQ(psim_trigger_poll(&tm.t, &tm.f, NULL) & EPOLLPRI, 0);
	psim_triggers_debug(&d);
	TU_EQ(d.nr[PSIM_POLL], 2);
	TU_EQ(d.events[PSIM_POLL], 4);
	TU_EQ(d.poll_min_period, 100 * MS);
	psim_trigger_release(&tf.t);
	psim_trigger_release(&tm.t);
	psim_triggers_debug(&d);
	TU_EQ(d.nr[PSIM_POLL], 0);
	TU_EQ(d.poll_states, 0);
	kmod_stop();
	TU_EQ(shim_kthreads_live, 0);
}

/*
 * An unprivileged io trigger, 150 ms in 4 s, on the averaging work's
 * folds every 2.004 s: iowait from 1 s after the load on, an event at the
 * first fold (1.004 s grown), the next breach held for the window and
 * delivered at the third fold (4.008 s after the first).
 */
static void trigger_avgs(void)
{
	struct psim_triggers_debug d;
	struct tfile tf;
	int k;

	shim_now = T0;
	kmod_start();
	topen(&tf, false);
	TU_EQS(twrite(&tf, "some 150000 4000000\n", 20, PSIM_IO), 20);
	TU_EQ(trig(&tf)->agg, PSIM_AVGS);
	TU_EQ(psim_poll_key.enabled, false);
	kmod_run(0, &ta);
	shim_now = T0 + 1000 * MS;
	kmod_sleep(0, true, NULL);
	for (k = 1; k <= 4; k++) {
		shim_now = T0 + k * PERIOD;
		TU_EQ(kmod_work(1), 1);
		TU_EQ(psim_trigger_poll(&tf.t, &tf.f, NULL) & EPOLLPRI,
		      k == 1 || k == 3 ? EPOLLPRI : 0);
	}
	psim_triggers_debug(&d);
	TU_EQ(d.events[PSIM_AVGS], 2);
	TU_EQ(d.evals[PSIM_AVGS], 4);
	TU_EQ(d.poll_runs, 0);
	psim_trigger_release(&tf.t);
	kmod_run(0, &ta);
	kmod_stop();
}

/*
 * A poller of a trigger's file, as fs/select.c and fs/eventpoll.c are to
 * ->poll: its entry goes on the queue at the first poll; a wakeup makes
 * it poll again (no new entry); select/poll then take their entry off
 * under the queue's lock (poll_freewait()), epoll keeps it until POLLFREE
 * (ep_poll_callback()). A select stuck in another file's ->poll neither
 * polls again nor leaves, until the test lets it return.
 */
struct poller {
	poll_table pt;
	struct wait_queue_entry e;
	struct wait_queue_head *wq;
	struct tfile *tf;
	bool epoll, stuck, queued, repolled;
	__poll_t woken;		/* the keys of its wakeups */
	__poll_t again;		/* what its poll after the wakeup answered */
};

static struct poller *pollers[8];
static int npollers;

static int poller_wake(struct wait_queue_entry *e, unsigned int mode,
		       int flags, void *key)
{
	struct poller *p = container_of(e, struct poller, e);

	p->woken |= key_to_poll(key);
	if (p->epoll && (key_to_poll(key) & POLLFREE)) {
		list_del_init(&e->entry);
		p->queued = false;
	}
	return 1;
}

static void poller_queue(struct file *f, struct wait_queue_head *wq,
			 poll_table *pt)
{
	struct poller *p = container_of(pt, struct poller, pt);

	p->wq = wq;
	p->e.func = poller_wake;
	add_wait_queue(wq, &p->e);
	p->queued = true;
}

/* select(), poll() or epoll_ctl(ADD) on @tf: the first poll */
static __poll_t poller_add(struct poller *p, struct tfile *tf, bool epoll,
			   bool stuck)
{
	memset(p, 0, sizeof(*p));
	p->pt._qproc = poller_queue;
	p->tf = tf;
	p->epoll = epoll;
	p->stuck = stuck;
	pollers[npollers++] = p;
	return psim_trigger_poll(&tf->t, &tf->f, &p->pt);
}

/* the stuck select() returns at last: poll_freewait() */
static void poller_return(struct poller *p)
{
	if (p->queued)
		remove_wait_queue(p->wq, &p->e);
	p->queued = false;
	p->stuck = false;
}

/* While the shutdown sleeps, the woken pollers run. */
static void pollers_run(unsigned int ms)
{
	int i;

	for (i = 0; i < npollers; i++) {
		struct poller *p = pollers[i];

		if (!p->woken || p->stuck || p->repolled)
			continue;
		/* an epoll item detached by POLLFREE is gone: no more polls */
		if (p->epoll && !p->queued)
			continue;
		p->again = psim_trigger_poll(&p->tf->t, &p->tf->f, NULL);
		p->repolled = true;
		if (!p->epoll && p->queued) {
			remove_wait_queue(p->wq, &p->e);
			p->queued = false;
		}
	}
}

/*
 * psim_triggers_shutdown() with a select() poller, an epoll one, and a
 * select() stuck elsewhere; the files then closed (proc_remove()), the
 * stop, a second start that works while the stuck one's queue stays
 * parked, its return, and the unload: with it stuck (the child process)
 * the queue and the lock class stay allocated and marked as no leak,
 * without it everything is freed.
 */
static void trigger_shutdown(void)
{
	struct poller ps, pe, pstuck, p2;
	struct tfile ta_f, tb_f, tc_f, td_f, tx_f, t2_f;
	struct psim_trigger *tc;
	unsigned long ev[2], last = 0;
	int runs = 0, status = -1;
	u64 t;
	pid_t child;

	shim_now = T0;
	npollers = 0;
	shim_msleep_hook = NULL;
	kmod_start();
	topen(&ta_f, true);
	topen(&tb_f, false);
	topen(&tc_f, true);
	topen(&td_f, true);
	TU_EQS(twrite(&ta_f, "some 100000 1000000\n", 20, PSIM_IO), 20);
	TU_EQS(twrite(&tb_f, "some 150000 2000000\n", 20, PSIM_MEM), 20);
	TU_EQS(twrite(&tc_f, "full 100000 1000000\n", 20, PSIM_CPU), 20);
	TU_EQS(twrite(&td_f, "some 100000 1000000\n", 20, PSIM_CPU), 20);
	TU_EQ(shim_kmalloc_live, 1 + 2 * 4);	/* the class, 4 triggers */
	TU_EQ(poller_add(&ps, &ta_f, false, false), DEFAULT_POLLMASK);
	TU_EQ(poller_add(&pe, &tb_f, true, false), DEFAULT_POLLMASK);
	TU_EQ(poller_add(&pstuck, &tc_f, false, true), DEFAULT_POLLMASK);
	TU_EQ(psim_triggers_polled(), 3);
	tc = trig(&tc_f);

	shim_msleep_hook = pollers_run;
	t = shim_now;
	psim_triggers_shutdown();
	shim_msleep_hook = NULL;
	/* every poller woken with the error */
	TU_EQ(ps.woken & (EPOLLERR | EPOLLPRI), EPOLLERR | EPOLLPRI);
	TU_EQ(pe.woken & (EPOLLERR | EPOLLPRI), EPOLLERR | EPOLLPRI);
	TU_EQ(pstuck.woken & (EPOLLERR | EPOLLPRI), EPOLLERR | EPOLLPRI);
	/* the select and epoll consumers saw it on polling again */
	TU_EQ(ps.again, DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI);
	TU_EQ(pe.again, DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI);
	TU_EQ(ps.queued, 0);
	/* epoll's entry detached by POLLFREE; select's ignores it */
	TU_EQ(pe.woken & POLLFREE, POLLFREE);
	TU_EQ(pe.queued, 0);
	TU_EQ(pstuck.queued, 1);
	/* waited for the stuck one within the bound, then parked its queue */
	TU_CHECK(shim_now - t >= 2000 * MS && shim_now - t <= 2100 * MS,
		 "shutdown took %llu ms",
		 (unsigned long long)((shim_now - t) / MS));
	TU_EQ(tc->parked, 1);
	TU_EQ(trig(&ta_f)->parked, 0);
	TU_EQ(trig(&td_f)->parked, 0);
	TU_CHECK(shim_rcu_syncs > 0, "no synchronize_rcu() for POLLFREE");
	/* from now on: the error at once, no new waiter, writes EIO */
	TU_EQ(poller_add(&p2, &ta_f, false, false),
	      DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI);
	TU_EQ(p2.queued, 0);
	topen(&tx_f, true);
	TU_EQS(twrite(&tx_f, "some 100000 1000000\n", 20, PSIM_IO), -EIO);
	TU_EQ(shim_kmalloc_live, 1 + 2 * 4);

	/* proc_remove() closes the files; the stuck one's queue stays */
	psim_trigger_release(&ta_f.t);
	psim_trigger_release(&tb_f.t);
	psim_trigger_release(&tc_f.t);
	psim_trigger_release(&td_f.t);
	TU_EQ(shim_kmalloc_live, 1 + 1);
	kmod_stop();
	TU_EQ(shim_kthreads_live, 0);

	/* a second start: the parked queue is busy still, kept */
	shim_now += 10 * NSEC_PER_SEC;
	kmod_start();
	TU_EQ(shim_kmalloc_live, 1 + 1);
	/* and triggers work again: an event from the fast path */
	topen(&t2_f, true);
	TU_EQS(twrite(&t2_f, "some 100000 1000000\n", 20, PSIM_IO), 20);
	TU_EQ(poller_add(&p2, &t2_f, false, false), DEFAULT_POLLMASK);
	kmod_run(0, &ta);
	kmod_sleep(0, true, NULL);
	TU_EQ(fast_path_until(shim_now + 1000 * MS, &t2_f, ev, 2, &runs,
			      &last), 1);
	TU_EQ(p2.woken, 0);	/* wake_up_interruptible(): no key */
	TU_EQ(p2.queued, 1);
	poller_return(&p2);
	kmod_run(0, &ta);
	psim_triggers_shutdown();
	psim_trigger_release(&t2_f.t);
	TU_EQ(shim_kmalloc_live, 1 + 1);
	kmod_stop();

	/* a queue freed under the stuck select: do not touch it */
	if (TU_FAILED())
		return;

	/* unloaded with the stuck select still there: nothing freed */
	fflush(stdout);
	child = fork();
	if (!child) {
		psim_triggers_exit();
		_exit(shim_kmalloc_live == 2 && shim_lockdep_keys == 1 &&
		      shim_kmemleak_not_leak == 2 ? 0 : 1);
	}
	TU_CHECK(child > 0 && waitpid(child, &status, 0) == child &&
		 WIFEXITED(status) && !WEXITSTATUS(status),
		 "the unload with a busy queue: status %#x", status);

	/* it returns, unlinking itself from the parked queue; the unload */
	poller_return(&pstuck);
	psim_triggers_exit();
	TU_EQ(shim_kmalloc_live, 0);
	TU_EQ(shim_lockdep_keys, 0);
	TU_EQ(shim_kmemleak_not_leak, 0);
	TU_EQ(shim_warnings, 0);
}


/*
 * The cgroup tree's top files: their triggers are the system's set's, and
 * go with the tree (psim_triggers_remove_groups()) while the system-wide
 * files' stay: a poller of each, the top's woken with EPOLLERR, the
 * other left asleep; a top write then ENODEV, a system-wide one still
 * taken; the tree back, a top write taken again; the stop takes the rest.
 */
static void trigger_top_files(void)
{
	struct tfile tt_f, ts_f, tn_f, tr_f;
	struct poller pt, ps;

	shim_now = T0;
	npollers = 0;
	shim_msleep_hook = NULL;
	kmod_start();
	psim_triggers_revive_groups();
	topen(&tt_f, true);
	topen(&ts_f, true);
	topen(&tn_f, true);
	topen(&tr_f, false);
	TU_EQS(psim_trigger_write_top(&tt_f.f, "some 100000 1000000\n", 20,
				      PSIM_CPU, &tt_f.t), 20);
	TU_CHECK(tt_f.t && trig(&tt_f)->ts == &psim_sys_triggers,
		 "a top trigger outside the system's set");
	if (TU_FAILED())
		return;
	TU_EQS(twrite(&ts_f, "some 100000 1000000\n", 20, PSIM_CPU), 20);
	TU_EQ(psim_sys_triggers.poll_nr[PSIM_CPU_SOME], 2);
	/* unprivileged, on the averaging: the same set */
	TU_EQS(psim_trigger_write_top(&tr_f.f, "some 100000 2000000\n", 20,
				      PSIM_MEM, &tr_f.t), 20);
	TU_EQ(trig(&tr_f)->agg, PSIM_AVGS);
	/* the tree goes: the top's triggers alone */
	TU_EQ(poller_add(&pt, &tt_f, true, false), DEFAULT_POLLMASK);
	TU_EQ(poller_add(&ps, &ts_f, true, false), DEFAULT_POLLMASK);
	shim_msleep_hook = pollers_run;
	psim_triggers_remove_groups();
	shim_msleep_hook = NULL;
	TU_EQ(pt.woken & (EPOLLERR | EPOLLPRI), EPOLLERR | EPOLLPRI);
	TU_EQ(pt.again, DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI);
	TU_EQ(pt.queued, 0);
	TU_EQ(ps.woken, 0);
	TU_EQ(ps.queued, 1);
	TU_EQ(psim_trigger_poll(&tr_f.t, &tr_f.f, NULL),
	      DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI);
	TU_EQ(psim_trigger_poll(&ts_f.t, &ts_f.f, NULL), DEFAULT_POLLMASK);
	TU_EQS(psim_trigger_write_top(&tn_f.f, "some 100000 1000000\n", 20,
				      PSIM_IO, &tn_f.t), -ENODEV);
	TU_EQS(twrite(&tn_f, "some 100000 1000000\n", 20, PSIM_IO), 20);
	/* procfs closes the top's files */
	psim_trigger_release(&tt_f.t);
	psim_trigger_release(&tr_f.t);
	TU_EQ(psim_sys_triggers.poll_nr[PSIM_CPU_SOME], 1);
	/* the tree back: the top's files take triggers */
	psim_triggers_revive_groups();
	TU_EQS(psim_trigger_write_top(&tt_f.f, "full 100000 1000000\n", 20,
				      PSIM_MEM, &tt_f.t), 20);
	TU_EQ(psim_trigger_poll(&tt_f.t, &tt_f.f, NULL), DEFAULT_POLLMASK);
	/* the module's stop: every trigger, the sleeping poller woken */
	shim_msleep_hook = pollers_run;
	psim_triggers_shutdown();
	shim_msleep_hook = NULL;
	TU_EQ(ps.woken & (EPOLLERR | EPOLLPRI), EPOLLERR | EPOLLPRI);
	TU_EQ(ps.queued, 0);
	psim_trigger_release(&tt_f.t);
	psim_trigger_release(&ts_f.t);
	psim_trigger_release(&tn_f.t);
	kmod_stop();
	psim_triggers_exit();
	TU_EQ(shim_kmalloc_live, 0);
}

/*
 * A cgroup's trigger set (psim_triggers_of()): made at the first trigger
 * written to one of its group's files, apart from the system's; its
 * unprivileged triggers evaluated on the group's totals, not the
 * system's; its own shutdown (the cgroup's files going) wakes its
 * pollers with the error and answers its writes ENODEV while the
 * system's set goes on; a set made after that is born dead until the
 * files come back; freed with its group; the module's stop covers it.
 */
static void trigger_cgroup_sets(void)
{
	static struct {
		struct psim_cgroup g;
		struct psim_cgroup_cpu *cpus[NR_CPUS];
	} cgm;
	u64 total[PSIM_NR_STATES - 1] = { 0 }, seen[PSIM_NR_STATES - 1] = { 0 };
	struct psim_cgroup *cg = &cgm.g;
	struct tfile ta_f, tb_f, tc_f, ts_f;
	struct psim_triggers_debug d;
	struct poller ps, pc;

	shim_now = T0;
	npollers = 0;
	shim_msleep_hook = NULL;
	memset(&cgm, 0, sizeof(cgm));
	kmod_start();
	topen(&ta_f, true);
	topen(&tb_f, false);
	topen(&tc_f, true);
	topen(&ts_f, true);
	TU_EQS(psim_trigger_write(&ta_f.f, "some 100000 1000000\n", 20,
				  PSIM_CPU, cg, &ta_f.t), 20);
	TU_CHECK(cg->trig && cg->trig != &psim_sys_triggers,
		 "the group's set: %p", (void *)cg->trig);
	if (TU_FAILED())
		return;
	TU_EQ(trig(&ta_f)->ts == cg->trig, 1);
	TU_EQ(cg->trig->cg == cg, 1);
	TU_EQ(cg->trig->poll_states, BIT(PSIM_CPU_SOME));
	TU_EQ(psim_sys_triggers.poll_states, 0);
	psim_triggers_debug(&d);
	TU_EQ(d.sets, 1);
	TU_EQ(d.nr[PSIM_POLL], 1);
	/* an unprivileged one on the same group: its averaging */
	TU_EQS(psim_trigger_write(&tb_f.f, "some 100000 2000000\n", 20,
				  PSIM_MEM, cg, &tb_f.t), 20);
	TU_EQ(trig(&tb_f)->agg, PSIM_AVGS);
	TU_EQ(trig(&tb_f)->ts == cg->trig, 1);
	psim_triggers_debug(&d);
	TU_EQ(d.sets, 1);
	total[PSIM_MEM_SOME] = 300 * MS;
	shim_now += 2 * NSEC_PER_SEC;
	psim_triggers_avgs_update(&psim_sys_triggers, shim_now, total, seen);
	TU_EQ(psim_trigger_poll(&tb_f.t, &tb_f.f, NULL) & EPOLLPRI, 0);
	psim_triggers_avgs_update(cg->trig, shim_now, total, seen);
	TU_EQ(psim_trigger_poll(&tb_f.t, &tb_f.f, NULL) & EPOLLPRI, EPOLLPRI);

	/* the cgroup's files go: its set alone */
	TU_EQ(poller_add(&ps, &ta_f, false, false), DEFAULT_POLLMASK);
	TU_EQS(twrite(&ts_f, "some 100000 1000000\n", 20, PSIM_IO), 20);
	shim_msleep_hook = pollers_run;
	psim_triggers_remove(cg);
	shim_msleep_hook = NULL;
	TU_EQ(ps.woken & (EPOLLERR | EPOLLPRI), EPOLLERR | EPOLLPRI);
	TU_EQ(ps.again, DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI);
	TU_EQ(ps.queued, 0);
	TU_EQS(psim_trigger_write(&tc_f.f, "some 100000 1000000\n", 20,
				  PSIM_IO, cg, &tc_f.t), -ENODEV);
	TU_EQ(psim_trigger_poll(&ts_f.t, &ts_f.f, NULL), DEFAULT_POLLMASK);
	/* procfs closes them; the group is freed with its set */
	psim_trigger_release(&ta_f.t);
	psim_trigger_release(&tb_f.t);
	psim_triggers_free(cg->trig);
	cg->trig = NULL;
	psim_triggers_debug(&d);
	TU_EQ(d.sets, 0);
	TU_EQ(d.nr[PSIM_POLL], 1);	/* the system's */
	/* a write racing with the files' removal: a set born dead */
	TU_EQS(psim_trigger_write(&tc_f.f, "some 100000 1000000\n", 20,
				  PSIM_IO, cg, &tc_f.t), -ENODEV);
	TU_CHECK(cg->trig && cg->trig->dead, "a set born dead: %p",
		 (void *)cg->trig);
	/* the files made again: it takes triggers */
	psim_triggers_revive(cg);
	TU_EQS(psim_trigger_write(&tc_f.f, "some 100000 1000000\n", 20,
				  PSIM_IO, cg, &tc_f.t), 20);
	/* the module's stop: every set */
	TU_EQ(poller_add(&pc, &tc_f, true, false), DEFAULT_POLLMASK);
	shim_msleep_hook = pollers_run;
	psim_triggers_shutdown();
	shim_msleep_hook = NULL;
	TU_EQ(pc.woken & (EPOLLERR | EPOLLPRI), EPOLLERR | EPOLLPRI);
	TU_EQ(pc.queued, 0);
	psim_trigger_release(&tc_f.t);
	psim_trigger_release(&ts_f.t);
	psim_triggers_free(cg->trig);
	cg->trig = NULL;
	kmod_stop();
	psim_triggers_exit();
	TU_EQ(shim_kmalloc_live, 0);
	TU_EQ(shim_warnings, 0);
}

int main(void)
{
	TU_RUN(trigger_buffer);
	TU_RUN(trigger_res_states);
	TU_RUN(trigger_window);
	TU_RUN(trigger_rate_limit);
#if PSIM_KERNEL_AT_LEAST(6, 12)
	TU_RUN(trigger_rules_6_12);
#elif PSIM_KERNEL_AT_LEAST(6, 1)
	TU_RUN(trigger_parse_rows);
	TU_RUN(trigger_privilege);
	TU_RUN(trigger_write_errors);
	TU_RUN(trigger_fast_path);
	TU_RUN(trigger_avgs);
	/* the unload: last */
	TU_RUN(trigger_shutdown);
	TU_RUN(trigger_cgroup_sets);
	TU_RUN(trigger_top_files);
#else
	TU_RUN(trigger_rules_5_10);
#endif
	return tu_exit();
}
