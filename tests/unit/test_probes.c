// SPDX-License-Identifier: GPL-2.0
/*
 * The real probe handlers of src/psi_probes.c, compiled in user space
 * against the kernel API shim (shim/shim.h) and linked into this test: no
 * copy of their logic here. The test registers them as the module does
 * (psim_probes_find(), psim_probes_start()) and calls what the shim
 * recorded, on the CPU, with the interrupt state, the kernel would.
 *
 *  probes_random_events   model.h's ground-truth scheduler drives the
 *                         real probes (m->be): switch (preempt, sleep,
 *                         iowait sleep, exit), wakeups (of tasks unseen
 *                         since the load too, and of current), wakeup_new,
 *                         migration of queued and waking tasks, memstall
 *                         nesting (kprobes, or the tracepoints), plus
 *                         exec by a non-leader thread (exchange_tids
 *                         kretprobe), CPU offline (idle_dead kprobe and
 *                         dead callback) with its queued tasks pushed
 *                         seen or unseen (relocation). After every event
 *                         each CPU's counts, oncpu, curr_memstall, state
 *                         mask and state times (psim_cpu_debug()) equal
 *                         the truth's; then every task exits, every CPU
 *                         goes idle, and every count must be 0.
 *  probes_wakeup_current_irqs_on, probes_relocate_stale_word,
 *  probes_pid_reuse_no_leak
 *                         three scenarios of real kernel event orders
 *                         that once left a count behind or took a lock
 *                         wrongly (the FAIL line says what went wrong).
 *
 * Built twice over the same probes: as on a kernel without CONFIG_PSI (the
 * words in the pid table; the pid swap and pid reuse scenarios are about
 * it), and with -DSHIM_CONFIG_PSI as on a psi=0 kernel that has it (the
 * words in task_struct->psi_flags: stale words from before the start must
 * be cleared, a pid reused while its old task still runs changes nothing;
 * probes_task_words).
 *
 * Usage: test_probes [events per seed]
 */
#include "probes_be.h"

static unsigned long events_per_seed = 1000000;

static unsigned long n_exec, n_offline, n_offline_kprobe, n_push_silent;

/*
 * A thread execs: the one running on a CPU (left) takes the pid of its
 * leader (right), a task on its way to its last switch, running or
 * preempted (queued), that exits at its next switch-out. The counts of
 * the truth do not change.
 */
static void ev_exec(struct model *m)
{
	int b = online_cpu(m, brnd(NCPU)), l = m->c[b].curr, r, i;

	if (l < 0 || m->t[l].zombie)
		return;
	r = brnd(m->ntask);
	for (i = 0; i < m->ntask; i++, r = (r + 1) % m->ntask) {
		const struct mtask *t = &m->t[r];

		if (r != l && !t->zombie && !t->depth &&
		    (t->st == T_QUEUED || t->st == T_RUNNING))
			break;
	}
	if (i == m->ntask)
		return;
	tick(m);
	m->ev_p = l;
	m->ev_q = r;
	m->ev_cpu = b;
	if (getenv("TP_DEBUG"))
		fprintf(stderr, "ev %lu exec t%d (cpu%d) leader t%d (st %d cpu%d)\n", m->ev, l, b, r, m->t[r].st, m->t[r].cpu);
	call_exchange_tids(b, &ts[l], &ts[r]);
	m->t[r].zombie = 1;
	n_exec++;
	be_sync(m);
}

/*
 * CPU @b goes offline. Its queued tasks are pushed away: while it is
 * online (6.1's balance_push, seen), or after (5.10, unseen: psi_mod finds
 * their counts on @b at their next event and relocates them). Its last
 * task, the stopper, parks on a switch nobody sees; the idle task's
 * cpuhp_report_idle_dead() (kprobe, if attached) and the dead callback on
 * another CPU take it off.
 */
static void ev_offline(struct model *m)
{
	int b = brnd(NCPU), s = m->c[b].curr, silent = brnd(2), i, ctl;

	for (i = 0; i < NCPU; i++) {
		if (m->c[i].offline) {	/* one at a time: it comes back */
			tick(m);
			m->c[i].offline = 0;
			return;
		}
	}
	/*
	 * The last task is the CPU's stopper: no stall, and (a kthread) no
	 * exec since it was switched in, so psim_cpu_gone() finds it by the
	 * pid it was switched in with.
	 */
	if (s < 0 || m->t[s].depth || m->t[s].zombie ||
	    ts[s].pid != switched_in_pid[b])
		return;
	tick(m);
	if (getenv("TP_DEBUG"))
		fprintf(stderr, "ev %lu offline cpu%d stopper t%d silent %d\n", m->ev, b, s, silent);
	n_offline++;
	if (silent)
		m->c[b].offline = 1;
	for (i = 0; i < m->ntask; i++) {
		struct mtask *t = &m->t[i];
		int dest = (b + 1 + brnd(NCPU - 1)) % NCPU;

		if (t->st != T_QUEUED || t->cpu != b)
			continue;
		if (!silent) {
			ev_migrate_queued(m, i, dest);
			continue;
		}
		if (!t->lagged) {
			t->lagged = 1;
			t->lag_cpu = b;
		}
		t->cpu = dest;
		ts[i].cpu = dest;
		n_push_silent++;
	}
	m->c[b].offline = 1;
	/* the stopper's switch to idle, unseen */
	m->t[s].st = T_SLEEP;
	m->t[s].iowait = 0;
	ts[s].__state = TASK_PARKED;
	m->c[b].curr = -1;
	shim_current[b] = &idle_ts[b];
	if (brnd(2)) {
		call_idle_dead(b);
		n_offline_kprobe++;
	}
	ctl = online_cpu(m, brnd(NCPU));
	call_cpu_dead(ctl, b);
	be_sync(m);
}

/* Every task exits and every CPU switches to idle; counts must be 0. */
static void drain(struct model *m)
{
	int cpu, i, round;

	for (cpu = 0; cpu < NCPU; cpu++)
		m->c[cpu].offline = 0;
	for (round = 0; round < 4 && !TU_FAILED(); round++) {
		for (i = 0; i < m->ntask; i++) {
			if (m->t[i].st == T_SLEEP) {
				tick(m);
				ev_wakeup(m, i);
			}
		}
		for (cpu = 0; cpu < NCPU && !TU_FAILED(); cpu++) {
			for (;;) {
				int p = m->c[cpu].curr, next = -1;

				for (i = 0; i < m->ntask; i++)
					if (m->t[i].st == T_QUEUED &&
					    m->t[i].cpu == cpu)
						next = i;
				if (p < 0 && next < 0)
					break;
				while (p >= 0 && m->t[p].depth) {
					tick(m);
					mod_memstall(m, cpu, p, 0);
					m->t[p].depth--;
					check_exact(m, 1);
				}
				tick(m);
				if (p >= 0)
					model_do_switch(m, cpu, PREV_EXIT, 0,
							TASK_DEAD, 0, next);
				else
					model_do_switch(m, cpu, PREV_IDLE, 1,
							TASK_RUNNING, 0, next);
				check_exact(m, 1);
			}
		}
	}
	for (i = 0; i < m->ntask; i++)
		MCHECK(m, m->t[i].st == T_DEAD, "drain: t%d state %d", i,
		       m->t[i].st);
}

/* Every CPU idle, every count 0, no underflow: what the final state is. */
static void check_all_zero(const char *when)
{
	struct psim_cpu_debug d;
	char buf[400] = "";
	int cpu, k, n = 0;

	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		psim_cpu_debug(cpu, &d);
		for (k = 0; k < PSIM_NR_COUNTS; k++)
			if (d.st.tasks[k])
				n += snprintf(buf + n, sizeof(buf) - n,
					      " cpu%d %s=%u", cpu,
					      k == PSIM_NR_IOWAIT ? "iowait" :
					      k == PSIM_NR_MEMSTALL ? "memstall" :
					      k == PSIM_NR_RUNNING ? "running" :
					      "memstall_running",
					      d.st.tasks[k]);
		if (d.st.underflows)
			n += snprintf(buf + n, sizeof(buf) - n,
				      " cpu%d underflows=%u", cpu,
				      d.st.underflows);
		if (d.st.oncpu)
			n += snprintf(buf + n, sizeof(buf) - n,
				      " cpu%d oncpu=1", cpu);
	}
	TU_CHECK(!n, "%s, counts left:%s", when, buf);
}

static const u64 seeds[] = { 1, 2, 3, 0x5eed5eedULL };
static const int ntasks[] = { NTASK, NTASK, 12, 5 };

static void probes_random_events(void)
{
	static struct model m;
	/* static: kept across the longjmp of a shim failure */
	static unsigned long n_reloc, n_dead_kp, n_dead_cb, n_wake_mig, n_ms;
	static unsigned int si;
	int cpu;

	n_reloc = n_dead_kp = n_dead_cb = n_wake_mig = n_ms = 0;
	n_wake_current = n_ms_tp = n_exec = n_offline = 0;
	n_offline_kprobe = n_push_silent = 0;
	for (si = 0; si < ARRAY_SIZE(seeds) && !TU_FAILED(); si++) {
		unsigned long e;

		brng = seeds[si] * 0x2545f4914f6cdd1dULL + 1;
		/* the memstall tracepoints instead of the kprobes; no
		 * idle_dead kprobe (only the dead callback) */
		tp_only = si & 1;
		memset(shim_kprobe_missing, 0, sizeof(shim_kprobe_missing));
		if (si & 2)
			shim_kprobe_missing[0] = "cpuhp_report_idle_dead";
		model_init(&m, seeds[si], ntasks[si]);
		/* the tasks exist, with what a former load left */
		if (be_load(&m, true))
			return;
		m.exact = 1;
		if (setjmp(shim_jb)) {
			TU_CHECK(0, "seed %#llx event %lu (%s): %s",
				 (unsigned long long)m.seed, m.ev,
				 model_event(&m), shim_msg);
			probes_stop();
			return;
		}
		shim_jb_armed = true;
		for (e = 0; e < events_per_seed && !TU_FAILED(); e++) {
			unsigned int r = brnd(1000);

			if (r < 5)
				ev_exec(&m);
			else if (r < 8)
				ev_offline(&m);
			else
				model_step(&m);
			check_exact(&m, 1);
			if ((e & 1023) == 1023)
				check_aggregator(&m);
		}
		if (!TU_FAILED())
			drain(&m);
		shim_jb_armed = false;
		if (!TU_FAILED())
			check_all_zero("every task exited, every CPU idle");
		for (cpu = 0; cpu < NCPU; cpu++) {
			struct psim_cpu_debug d;

			psim_cpu_debug(cpu, &d);
			n_reloc += d.relocations;
			n_dead_kp += d.dead_kprobe;
			n_dead_cb += d.dead_callback;
		}
		n_wake_mig += m.n_wake_migrated;
		n_ms += m.n_ev[EV_MS_ENTER];
		probes_stop();
	}
	if (TU_FAILED())
		return;
	/* everything must have happened, many times */
	TU_CHECK(n_exec >= events_per_seed / 1000, "only %lu execs", n_exec);
	TU_CHECK(n_offline >= events_per_seed / 10000,
		 "only %lu CPU offlines", n_offline);
	TU_CHECK(n_offline_kprobe >= 2 && n_dead_kp >= 2 && n_dead_cb >= 2,
		 "offline: %lu kprobe calls, %lu by the kprobe, %lu by the callback",
		 n_offline_kprobe, n_dead_kp, n_dead_cb);
	TU_CHECK(n_push_silent >= 10 && n_reloc >= 10,
		 "only %lu unseen pushes, %lu relocations", n_push_silent,
		 n_reloc);
	TU_CHECK(n_wake_current >= events_per_seed / 1000,
		 "only %lu wakeups of current", n_wake_current);
	TU_CHECK(n_wake_mig >= events_per_seed / 100,
		 "only %lu wakeups with migration", n_wake_mig);
	TU_CHECK(n_ms >= events_per_seed / 100 && n_ms_tp >= events_per_seed / 100,
		 "only %lu memstalls, %lu by tracepoints", n_ms, n_ms_tp);
}

/* ------------------------------------------------------------------ */
/* Scenarios */

/*
 * Every CPU's counts against @running (the other counts 0); a mismatch is
 * added to bug_report, which the test checks at its end: the FAIL line
 * then shows every step that went wrong, the final state included.
 */
static char bug_report[1500];

static void expect_running(const char *when, const unsigned int *running)
{
	struct psim_cpu_debug d;
	char buf[400] = "";
	int cpu, n = 0;

	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		psim_cpu_debug(cpu, &d);
		if (d.st.tasks[PSIM_NR_RUNNING] != running[cpu] ||
		    d.st.tasks[PSIM_NR_IOWAIT] || d.st.tasks[PSIM_NR_MEMSTALL] ||
		    d.st.underflows)
			n += snprintf(buf + n, sizeof(buf) - n,
				      " cpu%d running=%u (want %u) iowait=%u memstall=%u underflows=%u;",
				      cpu, d.st.tasks[PSIM_NR_RUNNING],
				      running[cpu], d.st.tasks[PSIM_NR_IOWAIT],
				      d.st.tasks[PSIM_NR_MEMSTALL],
				      d.st.underflows);
	}
	if (n)
		snprintf(bug_report + strlen(bug_report),
			 sizeof(bug_report) - strlen(bug_report), "[%s:%s] ",
			 when, buf);
}

/*
 * The start of a scenario: a freshly loaded module, and a shim failure
 * (a lock misuse, an assertion) ends the scenario with what went wrong.
 * A macro: setjmp() must be called in the scenario's own frame.
 */
#define SCENARIO_BEGIN() do {						\
	bug_report[0] = '\0';						\
	if (probes_start(false))					\
		return;							\
	if (setjmp(shim_jb)) {						\
		TU_CHECK(0, "%s%s", bug_report, shim_msg);		\
		probes_stop();						\
		return;							\
	}								\
	shim_jb_armed = true;						\
	shim_now = 1000;						\
} while (0)

/* A new task: copy_process() zeroes psi_flags. */
static struct task_struct *new_task(struct task_struct *t, pid_t pid,
				    int cpu)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->cpu = cpu;
	shim_task_add(t);
	return t;
}

/*
 * Wakeup of current. In 6.1's try_to_wake_up(), p == current fires
 * sched_wakeup with only preemption off: no runqueue lock, interrupts as
 * they are (on, for a task that wakes itself from a wait loop). For a task
 * not seen since the load (word 0) the probe must take no lock (an
 * interrupt's wakeup on this CPU may take the same one). The kernel's PSI
 * does nothing there (current is not enqueued); nor does psi_mod: the
 * task runs, its next switch counts it. With interrupts off
 * (the same path in an interrupt), it must not count it either: the CPU's
 * oncpu is 0 (its current task was never switched in), and a RUNNING count
 * there would be a full CPU stall on a CPU that runs its only task.
 */
static void probes_wakeup_current_irqs_on(void)
{
	static struct task_struct a;
	static const unsigned int none[NR_CPUS];
	/* static: kept across the longjmp of a shim failure */
	static char on_msg[600], off_msg[600];
	static int pass;
	struct psim_cpu_debug d;

	on_msg[0] = off_msg[0] = '\0';
	for (pass = 0; pass < 2; pass++) {
		bool irqs_off = pass;
		char *msg = pass ? off_msg : on_msg;

		if (probes_start(false))
			return;
		/* a running since before the load, on cpu1 */
		new_task(&a, 100, 1);
		shim_current[1] = &a;
		shim_now = 1000;
		if (setjmp(shim_jb)) {
			snprintf(msg, 600, "%s", shim_msg);
			probes_stop();
			continue;
		}
		shim_jb_armed = true;
		/* prepare_to_wait(); the condition is true: wake_up(current) */
		a.__state = TASK_INTERRUPTIBLE;
		call_wakeup(1, &a, irqs_off);
		psim_cpu_debug(1, &d);
		if (d.st.tasks[PSIM_NR_RUNNING] || d.st.state_mask)
			snprintf(msg, 600,
				 "cpu1 running=%u oncpu=%u state mask %#x (cpu full %s) for a task running there",
				 d.st.tasks[PSIM_NR_RUNNING], d.st.oncpu,
				 d.st.state_mask,
				 d.st.state_mask & BIT(PSIM_CPU_FULL) ?
				 "on" : "off");
		/* it goes on running, then sleeps */
		shim_now += 1000;
		call_switch(1, false, &a, TASK_INTERRUPTIBLE, false,
			    &idle_ts[1]);
		shim_jb_armed = false;
		bug_report[0] = '\0';
		expect_running("then a slept, every CPU idle", none);
		if (bug_report[0])
			snprintf(msg, 600, "%.590s", bug_report);
		probes_stop();
	}
	TU_CHECK(!on_msg[0] && !off_msg[0],
		 "wakeup of current (unseen since load): interrupts on: %s; interrupts off: %s",
		 on_msg[0] ? on_msg : "ok", off_msg[0] ? off_msg : "ok");
}

/*
 * A pid swap in the relocation window. psim_relocate_locked_slow() drops
 * this CPU's lock to take a lower CPU's first; exchange_tids() can swap
 * the pids in that window, and a word pointer taken from prev's pid before
 * would then be the exec'ing thread's. Kernel order, 6.1:
 *  1. leader A (pid 300) runs on cpu0, thread B (301) on cpu1;
 *  2. A exits (a zombie on its way to its last switch); B execs:
 *     exchange_tids(B, A), and A's last switch on cpu0 comes between the
 *     pid swap and the kretprobe (the race psim_krp_exchange_ret() is
 *     written for): B's word is left naming cpu0 while B runs on cpu1,
 *     to be moved at B's next event;
 *  3. B (now the leader, 300) forks C (302), which runs on cpu2;
 *  4. B exits; C execs. B's last switch on cpu1 reads B's word (pid 300,
 *     naming cpu0), drops cpu1's lock to take cpu0's, and in that window
 *     (the shim's lock hook) exchange_tids(C, B) runs on cpu2: pid 300 is
 *     C's now, and so is the word. Retrying on the same pointer would
 *     relocate C's word to cpu1 and clear it as B's last switch, leaving
 *     B's RUNNING counted on cpu0 for good; the word must be looked up
 *     again from B.
 *  5. C sleeps, every CPU is idle.
 * Correct: after 4, only C runs (cpu2 running=1); after 5, nothing.
 */
static struct task_struct xa, xb, xc;
static int hook_cpu = -1, hook_done;
static raw_spinlock_t *hook_first;

static void hook_exec_in_window(raw_spinlock_t *lock, const char *func)
{
	(void)func;
	if (hook_done || shim_cpu != hook_cpu || shim_nheld)
		return;
	if (!hook_first) {		/* the probe's own CPU lock */
		hook_first = lock;
		return;
	}
	if (lock == hook_first)
		return;
	/* the window: this CPU's lock dropped for a lower CPU's */
	hook_done = 1;
	call_exchange_tids(2, &xc, &xb);
}

static void probes_relocate_stale_word(void)
{
	static const unsigned int after4[NR_CPUS] = { 0, 0, 1, 0 };
	static const unsigned int none[NR_CPUS];

	SCENARIO_BEGIN();
	/* 1 */
	call_wakeup_new(0, new_task(&xa, 300, 0));
	call_switch(0, false, &idle_ts[0], TASK_RUNNING, false, &xa);
	call_wakeup_new(0, new_task(&xb, 301, 1));
	call_switch(1, false, &idle_ts[1], TASK_RUNNING, false, &xb);
	/* 2: the pid swap, A's last switch, then the kretprobe's return */
	{
		struct kretprobe *rp = shim_kretprobe("exchange_tids");
		struct kretprobe_instance ri;
		struct pt_regs regs = { { (unsigned long)&xb,
					  (unsigned long)&xa } };
		struct ctx c = ctx_enter(1, true);

		memset(&ri, 0, sizeof(ri));
		rp->entry_handler(&ri, &regs);
		xb.pid = 300;
		xa.pid = 301;
		ctx_leave(c);
		shim_now += 1000;
		call_switch(0, false, &xa, TASK_DEAD, false, &idle_ts[0]);
		c = ctx_enter(1, true);
		rp->handler(&ri, &regs);
		ctx_leave(c);
	}
	/* 3 */
	shim_now += 1000;
	call_wakeup_new(1, new_task(&xc, 302, 2));
	call_switch(2, false, &idle_ts[2], TASK_RUNNING, false, &xc);
	/* 4: B's last switch, C's exec in its lock window */
	shim_now += 1000;
	hook_cpu = 1;
	hook_first = NULL;
	hook_done = 0;
	shim_lock_hook = hook_exec_in_window;
	call_switch(1, false, &xb, TASK_DEAD, false, &idle_ts[1]);
	shim_lock_hook = NULL;
	TU_CHECK(hook_done, "the switch probe never dropped its lock");
	expect_running("after the old leader's last switch (exec in its relocation window)",
		       after4);
	/* 5 */
	shim_now += 1000;
	call_switch(2, false, &xc, TASK_INTERRUPTIBLE, false, &idle_ts[2]);
	shim_jb_armed = false;
	expect_running("C slept, every CPU idle", none);
	TU_CHECK(!bug_report[0], "%s", bug_report);
	check_all_zero("every task exited or slept, every CPU idle");
	probes_stop();
}

/*
 * D (pid 400) runs on cpu0; N gets pid 400 on cpu1 while D is on its way
 * out; D's last switch; N is switched in; N exits. The running counts per
 * CPU after N's creation, after D's last switch and after N's switch-in
 * are the store's to say. Ends the scenario.
 */
static void pid_reuse_steps(const unsigned int *new_pid,
			    const unsigned int *old_gone,
			    const unsigned int *new_in)
{
	static struct task_struct td, tn;
	static const unsigned int none[NR_CPUS];

	call_wakeup_new(0, new_task(&td, 400, 0));
	call_switch(0, false, &idle_ts[0], TASK_RUNNING, false, &td);
	shim_now += 1000;
	call_wakeup_new(1, new_task(&tn, 400, 1));
	expect_running("after the new task got the pid of the old one", new_pid);
	shim_now += 1000;
	call_switch(0, false, &td, TASK_DEAD, false, &idle_ts[0]);
	expect_running("after the old owner's last switch", old_gone);
	shim_now += 1000;
	call_switch(1, false, &idle_ts[1], TASK_RUNNING, false, &tn);
	expect_running("after the new task is switched in", new_in);
	shim_now += 1000;
	call_switch(1, false, &tn, TASK_DEAD, false, &idle_ts[1]);
	shim_jb_armed = false;
	expect_running("both exited, every CPU idle", none);
	TU_CHECK(!bug_report[0], "%s", bug_report);
	check_all_zero("both exited, every CPU idle");
	probes_stop();
}

/*
 * Pid reuse. A thread that reaps itself (exit_notify() -> release_task())
 * frees its pid before its last switch (do_task_dead()). A new task that
 * gets the same pid meanwhile: sched_wakeup_new overwrites the word, which
 * still holds the dying task's RUNNING count on its CPU. Kernel order:
 *  1. D (pid 400) runs on cpu0;
 *  2. D exits and is released; N is forked with pid 400 onto cpu1;
 *  3. D's last switch on cpu0;
 *  4. N runs on cpu1 and exits.
 * The word cannot tell D from N, so psi_mod gives up on exactness for this
 * one window and keeps the counts consistent: at 2, D's count leaves cpu0
 * (D is on its way out) and N is counted on cpu1; D's last switch at 3
 * then takes N's word for its own and clears it, so N is counted again
 * only from its next event, its switch-in at 4. Nothing stays behind.
 */
/*
 * One switch, two relocations: prev's word names a lower CPU, next's a
 * higher one (both moved unseen, as a dying CPU's pushed tasks on 5.10).
 * The first takes the lower CPU's lock first and this CPU's nested; the
 * second must find this CPU's held as the only one, at subclass 0, or
 * lockdep reports "possible recursive locking" for the higher CPU's lock
 * taken nested beside it, and switches itself off.
 */
static void probes_relocate_twice_in_one_switch(void)
{
	static const unsigned int both[NR_CPUS] = { 0, 2, 0, 0 };
	static const unsigned int none[NR_CPUS];

	SCENARIO_BEGIN();
	/* A runs on cpu0, B is queued on cpu2 */
	call_wakeup_new(0, new_task(&xa, 300, 0));
	call_switch(0, false, &idle_ts[0], TASK_RUNNING, false, &xa);
	call_wakeup_new(2, new_task(&xb, 301, 2));
	/* both pushed to cpu1 unseen: A runs there, B is queued there */
	shim_now += 1000;
	call_switch(0, true, &xa, TASK_RUNNING, false, &idle_ts[0]);
	xa.cpu = 1;
	xb.cpu = 1;
	shim_current[1] = &xa;
	/* A preempted by B on cpu1 */
	shim_now += 1000;
	call_switch(1, true, &xa, TASK_RUNNING, false, &xb);
	expect_running("A preempted by B on cpu1, both moved there unseen",
		       both);
	shim_now += 1000;
	call_switch(1, false, &xb, TASK_DEAD, false, &xa);
	call_switch(1, false, &xa, TASK_DEAD, false, &idle_ts[1]);
	shim_jb_armed = false;
	expect_running("both exited", none);
	TU_CHECK(!bug_report[0], "%s", bug_report);
	check_all_zero("every task exited, every CPU idle");
	probes_stop();
}

/*
 * A quick enable=0, enable=1 beside an exiting thread. The stop and the
 * start clear the words of the tasks on the task list; a thread that
 * reaped itself left it in release_task(), before its last switch
 * (do_task_dead()), and keeps the word of the former start: RUNNING,
 * counted on cpu1. Its last switch, after the new start, must not take
 * from cpu1 a count the new start never set there (B's).
 */
static void probes_stale_word_across_restart(void)
{
	static const unsigned int one[NR_CPUS] = { 0, 1, 0, 0 };
	static const unsigned int none[NR_CPUS];
	int i;

	SCENARIO_BEGIN();
	/* T runs on cpu1 */
	call_wakeup_new(1, new_task(&xa, 300, 1));
	call_switch(1, false, &idle_ts[1], TASK_RUNNING, false, &xa);
	/* T reaps itself: off the task list, still running */
	shim_task_del(&xa);
	/*
	 * enable=0, then enable=1, while T is on its way to do_task_dead():
	 * psi_mod.c's stop and start, no new lookup (that is a reload)
	 */
	shim_jb_armed = false;
	psim_probes_stop();
	i = psim_probes_start(false, false);
	TU_CHECK(!i, "psim_probes_start: %d", i);
	if (i)
		return;
	if (setjmp(shim_jb)) {
		TU_CHECK(0, "%s%s", bug_report, shim_msg);
		probes_stop();
		return;
	}
	shim_jb_armed = true;
	shim_current[1] = &xa;
	/* B, new, queued on cpu1 behind T: counted there */
	shim_now += 1000;
	call_wakeup_new(1, new_task(&xb, 301, 1));
	expect_running("B queued on cpu1 after the restart", one);
	/* T's last switch, to B */
	shim_now += 1000;
	call_switch(1, false, &xa, TASK_DEAD, false, &xb);
	expect_running("T's last switch after the restart, B runs", one);
	call_switch(1, false, &xb, TASK_DEAD, false, &idle_ts[1]);
	shim_jb_armed = false;
	expect_running("B exited", none);
	for (i = 0; i < NR_CPUS; i++) {
		struct psim_cpu_debug d;

		psim_cpu_debug(i, &d);
		TU_CHECK(!d.st.underflows, "cpu%d: %u underflows", i,
			 d.st.underflows);
	}
	TU_CHECK(!bug_report[0], "%s", bug_report);
	check_all_zero("every task exited, every CPU idle");
	probes_stop();
}

static void probes_pid_reuse_no_leak(void)
{
	static const unsigned int after2[NR_CPUS] = { 0, 1, 0, 0 };
	static const unsigned int after3[NR_CPUS] = { 0, 0, 0, 0 };
	static const unsigned int after4[NR_CPUS] = { 0, 1, 0, 0 };

	SCENARIO_BEGIN();
	pid_reuse_steps(after2, after3, after4);
}

/*
 * A word read under one CPU's lock names a higher CPU, whose lock is
 * taken next: a probe there may change the word first. D (pid 500) runs
 * on cpu1 and has reaped itself; N gets pid 500 on cpu0, and its
 * sched_wakeup_new finds D's RUNNING counted on cpu1. While it takes
 * cpu1's lock, D's last switch there clears that count (the shim's lock
 * hook). The relocation must read the word again, not move the count it
 * saw before: afterwards cpu0 running=1 (N), cpu1 nothing, no underflow.
 */
static struct task_struct yd, yn;
static int hook_switch_state;

static void hook_last_switch_in_window(raw_spinlock_t *lock, const char *func)
{
	(void)lock;
	(void)func;
	if (hook_switch_state != 1 || shim_cpu != 0 || shim_nheld != 1)
		return;
	hook_switch_state = 2;
	shim_now += 500;
	call_switch(1, false, &yd, TASK_DEAD, false, &idle_ts[1]);
}

static void probes_relocate_word_changed(void)
{
	static const unsigned int after[NR_CPUS] = { 1, 0, 0, 0 };

	SCENARIO_BEGIN();
	call_wakeup_new(1, new_task(&yd, 500, 1));
	call_switch(1, false, &idle_ts[1], TASK_RUNNING, false, &yd);
	hook_switch_state = 1;
	shim_lock_hook = hook_last_switch_in_window;
	shim_now += 1000;
	call_wakeup_new(0, new_task(&yn, 500, 0));
	shim_lock_hook = NULL;
	TU_CHECK(hook_switch_state == 2, "the window was not reached");
	expect_running("after N's creation, D's last switch in its window",
		       after);
	shim_now += 1000;
	call_switch(0, false, &idle_ts[0], TASK_RUNNING, false, &yn);
	shim_now += 1000;
	call_switch(0, false, &yn, TASK_DEAD, false, &idle_ts[0]);
	shim_jb_armed = false;
	TU_CHECK(!bug_report[0], "%s", bug_report);
	check_all_zero("both exited, every CPU idle");
	probes_stop();
}

/*
 * Random interleavings around one pid shared by two tasks: D, an old owner
 * that has reaped itself and runs on to its last switch (preempted,
 * migrated and switched back in on the way), and N, created with the same
 * pid meanwhile, which runs, sleeps (in iowait too), is woken on either
 * CPU, migrates and exits; beside them X and Y with pids of their own.
 * While both live the word cannot follow both, but no count may ever
 * underflow, and once every task has exited nothing may be left.
 */
enum { PR_NEW, PR_RUN, PR_QUEUED, PR_SLEEP, PR_DEAD };
#define PR_CPUS	2
#define PR_T	4	/* D, N, X, Y */

static struct pr_task {
	struct task_struct t;
	int st;
} pr[PR_T];
static int pr_curr[PR_CPUS];

static struct task_struct *pr_task_on(int cpu)
{
	return pr_curr[cpu] < 0 ? &idle_ts[cpu] : &pr[pr_curr[cpu]].t;
}

/* a queued task of @cpu, at random, or -1 */
static int pr_queued_on(int cpu)
{
	int i, n = 0, pick = -1;

	for (i = 0; i < PR_T; i++)
		if (pr[i].st == PR_QUEUED && pr[i].t.cpu == cpu &&
		    brnd(++n) == 0)
			pick = i;
	return pick;
}

/* @how: 0 preempt, 1 sleep, 2 sleep in iowait, 3 exit */
static void pr_switch(int cpu, int how)
{
	int prev = pr_curr[cpu], next = pr_queued_on(cpu);
	struct task_struct *pt = pr_task_on(cpu);

	if (prev < 0 && next < 0)
		return;
	if (prev >= 0)
		pr[prev].st = how == 0 ? PR_QUEUED : how == 3 ? PR_DEAD :
			      PR_SLEEP;
	if (next >= 0)
		pr[next].st = PR_RUN;
	pr_curr[cpu] = next;
	shim_now += 1000;
	call_switch(cpu, prev >= 0 && how == 0, pt,
		    prev < 0 || how == 0 ? TASK_RUNNING :
		    how == 3 ? TASK_DEAD : TASK_UNINTERRUPTIBLE,
		    how == 2, pr_task_on(cpu));
}

static void pr_check(const char *when, unsigned long step)
{
	struct psim_cpu_debug d;
	int cpu;

	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		psim_cpu_debug(cpu, &d);
		TU_CHECK(!d.st.underflows, "%s, step %lu: cpu%d underflows=%u",
			 when, step, cpu, d.st.underflows);
	}
}

static void probes_pid_reuse_random(void)
{
	static unsigned long step, seed;
	int i, cpu, ev, dest;

	for (seed = 1; seed <= 2000; seed++) {
		if (probes_start(false))
			return;
		brng = seed * 0x9e3779b97f4a7c15ULL;
		shim_now = 1000;
		for (i = 0; i < PR_T; i++) {
			memset(&pr[i], 0, sizeof(pr[i]));
			pr[i].t.pid = i == 1 ? 400 : 400 + i;
			pr[i].st = PR_NEW;
		}
		for (cpu = 0; cpu < PR_CPUS; cpu++)
			pr_curr[cpu] = -1;
		/* D, X and Y exist; D runs on cpu0 and has reaped itself */
		for (i = 0; i < PR_T; i++) {
			if (i == 1)
				continue;
			pr[i].t.cpu = i == 0 ? 0 : brnd(PR_CPUS);
			call_wakeup_new(pr[i].t.cpu, &pr[i].t);
			pr[i].st = PR_QUEUED;
		}
		pr_curr[0] = -1;
		pr[0].st = PR_QUEUED;
		while (pr_curr[0] != 0) {
			pr[0].st = PR_QUEUED;
			pr_switch(0, 0);
		}
		for (step = 0; step < 60; step++) {
			ev = brnd(6);
			cpu = brnd(PR_CPUS);
			i = brnd(PR_T);
			switch (ev) {
			case 0:		/* a switch on @cpu */
				if (pr_curr[cpu] == 0)	/* D: on, or gone */
					pr_switch(cpu, brnd(4) ? 0 : 3);
				else if (pr_curr[cpu] == 1)
					pr_switch(cpu, brnd(8) ? brnd(3) : 3);
				else
					pr_switch(cpu, brnd(3));
				break;
			case 1:		/* a wakeup, maybe onto the other CPU */
				if (pr[i].st != PR_SLEEP)
					break;
				dest = brnd(PR_CPUS);
				if (dest != pr[i].t.cpu)
					call_migrate(cpu, &pr[i].t, dest);
				call_wakeup(cpu, &pr[i].t, true);
				pr[i].st = PR_QUEUED;
				break;
			case 2:		/* N, created with D's pid */
				if (pr[1].st != PR_NEW)
					break;
				pr[1].t.cpu = brnd(PR_CPUS);
				call_wakeup_new(cpu, &pr[1].t);
				pr[1].st = PR_QUEUED;
				break;
			case 3:		/* load balancing moves a queued task */
				if (pr[i].st != PR_QUEUED)
					break;
				dest = 1 - pr[i].t.cpu;
				call_migrate(pr[i].t.cpu, &pr[i].t, dest);
				break;
			default:	/* a preemption */
				pr_switch(cpu, 0);
				break;
			}
			pr_check("during", step);
		}
		/* everybody wakes, runs and exits; then every CPU idles */
		for (step = 0; step < 1000; step++) {
			int alive = 0;

			for (i = 0; i < PR_T; i++) {
				if (pr[i].st == PR_NEW && i == 1) {
					pr[1].t.cpu = 0;
					call_wakeup_new(0, &pr[1].t);
					pr[1].st = PR_QUEUED;
				}
				if (pr[i].st == PR_SLEEP) {
					call_wakeup(0, &pr[i].t, true);
					pr[i].st = PR_QUEUED;
				}
				alive += pr[i].st != PR_DEAD;
			}
			if (!alive && pr_curr[0] < 0 && pr_curr[1] < 0)
				break;
			for (cpu = 0; cpu < PR_CPUS; cpu++)
				pr_switch(cpu, 3);
			pr_check("at the end", step);
		}
		check_all_zero("after every task exited");
		probes_stop();
		if (TU_FAILED())
			return;
	}
}

#if SHIM_LINUX_VERSION >= KERNEL_VERSION(6, 12, 0)
/* @cpu's iowait and running counts against the expected ones */
static void expect_counts(const char *when, int cpu, unsigned int iowait,
			  unsigned int running)
{
	struct psim_cpu_debug d;

	psim_cpu_debug(cpu, &d);
	TU_CHECK(d.st.tasks[PSIM_NR_IOWAIT] == iowait &&
		 d.st.tasks[PSIM_NR_RUNNING] == running && !d.st.underflows,
		 "%s: cpu%d iowait=%u (want %u) running=%u (want %u) underflows=%u",
		 when, cpu, d.st.tasks[PSIM_NR_IOWAIT], iowait,
		 d.st.tasks[PSIM_NR_RUNNING], running, d.st.underflows);
}

/*
 * 6.12's delayed dequeue: a fair task that blocks while not eligible stays
 * on its runqueue (se.sched_delayed) though asleep. The kernel's PSI counts
 * it asleep at the switch and, if load balancing migrates it, moves its
 * iowait along (psi_enqueue()/psi_dequeue() in 6.12's stats.h). T sleeps
 * in iowait on cpu0, delayed; cpu1 pulls it; it is woken there.
 */
static void probes_delayed_dequeue_moves_sleep_state(void)
{
	static struct task_struct t;

	SCENARIO_BEGIN();
	call_wakeup_new(0, new_task(&t, 600, 0));
	call_switch(0, false, &idle_ts[0], TASK_RUNNING, false, &t);
	t.se.sched_delayed = 1;
	shim_now += 1000;
	call_switch(0, false, &t, TASK_UNINTERRUPTIBLE, true, &idle_ts[0]);
	expect_counts("asleep in iowait, delayed, on cpu0", 0, 1, 0);
	shim_now += 1000;
	call_migrate(1, &t, 1);
	expect_counts("migrated while delayed: off cpu0", 0, 0, 0);
	expect_counts("migrated while delayed: onto cpu1", 1, 1, 0);
	t.se.sched_delayed = 0;
	shim_now += 1000;
	call_wakeup(1, &t, true);
	expect_counts("woken on cpu1", 1, 0, 1);
	call_switch(1, false, &idle_ts[1], TASK_RUNNING, false, &t);
	shim_now += 1000;
	call_switch(1, false, &t, TASK_DEAD, false, &idle_ts[1]);
	shim_jb_armed = false;
	check_all_zero("exited, every CPU idle");
	probes_stop();
}
#endif

/*
 * The trigger fast path's kick (psim_poll_kick()): with no privileged
 * trigger (the static key off) a state change queues nothing; with one
 * watching cpu some, the change that starts cpu some arms the poll
 * thread's timer once, a second one while it is armed does not, and a
 * state nobody watches does not.
 */
static void probes_poll_kick(void)
{
	static struct task_struct a, b, c;

	if (probes_start(false))
		return;
	memset(&psim_sys_triggers.poll_timer, 0, sizeof(psim_sys_triggers.poll_timer));
	psim_poll_key.enabled = false;
	psim_sys_triggers.poll_states = BIT(PSIM_CPU_SOME);
	psim_sys_triggers.poll_scheduled.counter = 0;
	shim_now = 1000;
	new_task(&a, 100, 0);
	new_task(&b, 101, 0);
	new_task(&c, 102, 0);
	/* a runs on cpu0, b is woken behind it: cpu some, key off */
	call_wakeup_new(0, &a);
	call_switch(0, false, &idle_ts[0], TASK_RUNNING, false, &a);
	call_wakeup_new(0, &b);
	TU_EQ(psim_sys_triggers.poll_timer.armed, 0);
	TU_EQ(psim_sys_triggers.poll_scheduled.counter, 0);
	/* b goes to sleep: cpu some ends; then the key is on */
	call_switch(0, false, &a, TASK_RUNNING, false, &b);
	call_switch(0, false, &b, TASK_INTERRUPTIBLE, false, &a);
	psim_poll_key.enabled = true;
	shim_now += 1000;
	call_wakeup(0, &b, true);
	TU_EQ(psim_sys_triggers.poll_timer.armed, 1);
	TU_EQ(psim_sys_triggers.poll_scheduled.counter, 1);
	/* queued already: c adds to cpu some, no second queueing */
	call_wakeup_new(0, &c);
	TU_EQ(psim_sys_triggers.poll_timer.armed, 1);
	/* nobody watches io: io some on an idle CPU1 queues nothing */
	psim_sys_triggers.poll_scheduled.counter = 0;
	psim_sys_triggers.poll_states = BIT(PSIM_MEM_SOME);
	call_switch(0, true, &a, TASK_RUNNING, false, &b);
	call_switch(0, false, &b, TASK_UNINTERRUPTIBLE, true, &c);
	TU_EQ(psim_sys_triggers.poll_timer.armed, 1);
	psim_poll_key.enabled = false;
	psim_sys_triggers.poll_states = 0;
	probes_stop();
}

/*
 * The words in task_struct: a task running since before the start keeps
 * whatever a former load left in its psi_flags (a stale RUNNING|IOWAIT
 * "counted on cpu3"); the start clears it, so the task's events count it
 * from nothing, as a word 0. And the pid reuse that the table cannot tell
 * apart (probes_pid_reuse_no_leak): D (pid 400) has reaped itself and
 * still runs on cpu0, N gets pid 400 on cpu1. Each has its own word: both
 * are counted, exactly, throughout; D's last switch takes D off cpu0 only.
 */
static void probes_task_words(void)
{
	static struct task_struct old;
	static const unsigned int old_in[NR_CPUS] = { 0, 0, 1, 0 };
	static const unsigned int both[NR_CPUS] = { 1, 1, 0, 0 };
	static const unsigned int n_only[NR_CPUS] = { 0, 1, 0, 0 };

	new_task(&old, 390, 2);
	task_word(&old) = STALE_WORD;
	SCENARIO_BEGIN();
	TU_CHECK(!task_word(&old), "stale word %#x kept after the start",
		 task_word(&old));
	/* the old task wakes on cpu2 and runs: counted there only */
	old.__state = TASK_INTERRUPTIBLE;
	call_wakeup(0, &old, true);
	call_switch(2, false, &idle_ts[2], TASK_RUNNING, false, &old);
	expect_running("a task from before the start woke on cpu2", old_in);
	call_switch(2, false, &old, TASK_INTERRUPTIBLE, false, &idle_ts[2]);
	pid_reuse_steps(both, n_only, n_only);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		events_per_seed = strtoul(argv[1], NULL, 0);
	TU_RUN(probes_random_events);
	TU_RUN(probes_poll_kick);
	TU_RUN(probes_wakeup_current_irqs_on);
	TU_RUN(probes_relocate_twice_in_one_switch);
	TU_RUN(probes_stale_word_across_restart);
	if (task_store) {
		TU_RUN(probes_task_words);
		return tu_exit();
	}
	TU_RUN(probes_relocate_stale_word);
	TU_RUN(probes_pid_reuse_no_leak);
	TU_RUN(probes_relocate_word_changed);
	TU_RUN(probes_pid_reuse_random);
#if SHIM_LINUX_VERSION >= KERNEL_VERSION(6, 12, 0)
	TU_RUN(probes_delayed_dequeue_moves_sleep_state);
#endif
	return tu_exit();
}
