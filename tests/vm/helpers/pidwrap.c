// pidwrap: for SECONDS, WORKERS threads each create threads that exit at
// once, and fork children that exit at once with SIGCHLD ignored, as fast
// as the pid space allows, so that with a small kernel.pid_max the same
// pids are handed out again and again.
//
// Why: a thread (and a child whose parent ignores SIGCHLD) reaps itself in
// exit_notify(), which frees its pid before the task's last context switch.
// If the pid space wraps in that window, the pid's next owner is created
// (sched_wakeup_new) while the old one still runs. Per-task state kept by
// pid must not lose the old owner's counts there, or they stay counted for
// good: an idle CPU then shows pressure for as long as the module runs.
//
// To make that window wide, every new thread and child moves itself to
// CPU 0 at nice 19 before it exits, where a spinner of this program runs
// at nice 0: an exiting task is then often preempted between freeing its
// pid and its last switch, while the workers, on the last CPU, create
// the pid's next owner.
//
// usage: pidwrap SECONDS WORKERS [PID_MAX]
// With PID_MAX, kernel.pid_max is set to it for the storm and restored
// after (by this process: with a tiny pid space no shell could fork).
// Prints "pidwrap: T threads, F forks, E EAGAIN, R pid reuses, max pid M";
// exit 0 if some pid was handed out at least twice (the storm wrapped).
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAXPID 4194304

static unsigned char *seen;
static atomic_ulong threads, forks, eagain, reuses, maxpid;
static double end;
static atomic_int go;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void note_pid(long pid)
{
	unsigned long m;

	if (pid <= 0 || pid >= MAXPID)
		return;
	if (__atomic_exchange_n(&seen[pid], 1, __ATOMIC_RELAXED))
		atomic_fetch_add(&reuses, 1);
	m = atomic_load(&maxpid);
	while ((unsigned long)pid > m &&
	       !atomic_compare_exchange_weak(&maxpid, &m, pid))
		;
}

static int ncpu;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

// a new thread or child: to CPU 0, behind the spinner, and exit
static void weak_exit_prep(void)
{
	setpriority(PRIO_PROCESS, syscall(SYS_gettid), 19);
	pin(0);
}

static void *child(void *arg)
{
	(void)arg;
	note_pid(syscall(SYS_gettid));
	weak_exit_prep();
	return NULL;
}

static void *spinner(void *arg)
{
	(void)arg;
	pin(0);
	while (now() < end || !atomic_load(&go))
		;
	return NULL;
}

static void *worker(void *arg)
{
	unsigned long n = 0;
	pthread_t t;
	pid_t p;
	int r;

	(void)arg;
	pin(ncpu - 1);
	while (!atomic_load(&go))
		usleep(1000);
	while (now() < end) {
		if (n++ % 4 == 3) {
			p = fork();
			if (p == 0) {
				weak_exit_prep();
				_exit(0);
			}
			if (p > 0) {
				note_pid(p);
				atomic_fetch_add(&forks, 1);
			} else if (errno == EAGAIN) {
				atomic_fetch_add(&eagain, 1);
			}
			continue;
		}
		r = pthread_create(&t, NULL, child, NULL);
		if (r == EAGAIN) {
			atomic_fetch_add(&eagain, 1);
			continue;
		}
		if (r == 0) {
			atomic_fetch_add(&threads, 1);
			pthread_join(t, NULL);
		}
	}
	return NULL;
}

static int write_pid_max(const char *v)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "w");
	int r;

	if (!f)
		return -1;
	r = fputs(v, f) < 0;
	return fclose(f) || r ? -1 : 0;
}

int main(int argc, char **argv)
{
	char old[32] = "";
	pthread_t w[64], sp;
	FILE *f;
	int i, n;

	if (argc < 3 || argc > 4 || (n = atoi(argv[2])) < 1 || n > 64) {
		fprintf(stderr, "usage: pidwrap SECONDS WORKERS(1-64) [PID_MAX]\n");
		return 2;
	}
	seen = calloc(MAXPID, 1);
	if (!seen)
		return 1;
	signal(SIGCHLD, SIG_IGN);	// children reap themselves
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	// the threads first: once pid_max is small they could not be made
	if (pthread_create(&sp, NULL, spinner, NULL))
		return 1;
	for (i = 0; i < n; i++)
		if (pthread_create(&w[i], NULL, worker, NULL))
			return 1;
	if (argc == 4) {
		f = fopen("/proc/sys/kernel/pid_max", "r");
		if (!f || !fgets(old, sizeof(old), f)) {
			perror("pidwrap: read pid_max");
			return 1;
		}
		fclose(f);
		if (write_pid_max(argv[3])) {
			perror("pidwrap: write pid_max");
			return 1;
		}
	}
	end = now() + atof(argv[1]);
	atomic_store(&go, 1);
	for (i = 0; i < n; i++)
		pthread_join(w[i], NULL);
	pthread_join(sp, NULL);
	if (old[0] && write_pid_max(old)) {
		perror("pidwrap: restore pid_max");
		return 1;
	}
	printf("pidwrap: %lu threads, %lu forks, %lu EAGAIN, %lu pid reuses, max pid %lu\n",
	       atomic_load(&threads), atomic_load(&forks), atomic_load(&eagain),
	       atomic_load(&reuses), atomic_load(&maxpid));
	return atomic_load(&reuses) ? 0 : 1;
}
