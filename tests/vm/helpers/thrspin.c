// thrspin: one process whose threads spin in different threaded cgroups.
//
// Why: cgroup2's threaded cgroups put the threads of one process in
// different cgroups (cgroup.threads); per-cgroup pressure must count each
// thread in its own cgroup's group, and move it when it moves.
//
// usage: thrspin SECONDS ROOT CPU:DIR...
//   the process moves itself into ROOT (cgroup.procs: a threaded domain,
//   or a threaded cgroup), then starts one thread per CPU:DIR, which pins
//   itself to CPU, writes its own tid into DIR/cgroup.threads and spins
//   until SECONDS have passed since the start. The leader sleeps.
// Prints "thread <tid> <cpu> <dir>" per thread once all are placed (so a
// test can move one), then "thrspin: N threads" at the end; exit 1 on any
// failed write (the reason printed), 2 usage.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAXT 16

struct th {
	pthread_t t;
	int cpu;
	const char *dir;
	pid_t tid;
	int err;		/* errno of a failed step, or 0 */
	const char *what;	/* which step */
};

static double end;
static pthread_barrier_t placed;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* write "<id>\n" into DIR/FILE; 0 or the errno */
static int put_id(const char *dir, const char *file, long id)
{
	char path[4096], buf[32];
	int fd, n, e = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	n = snprintf(buf, sizeof(buf), "%ld\n", id);
	if (write(fd, buf, n) != n)
		e = errno ? errno : EIO;
	close(fd);
	return e;
}

static void *run(void *arg)
{
	struct th *h = arg;
	cpu_set_t set;
	volatile unsigned long x = 0;

	h->tid = (pid_t)syscall(SYS_gettid);
	CPU_ZERO(&set);
	CPU_SET(h->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		h->err = errno;
		h->what = "sched_setaffinity";
	} else if ((h->err = put_id(h->dir, "cgroup.threads", h->tid))) {
		h->what = "cgroup.threads";
	}
	pthread_barrier_wait(&placed);
	while (!h->err && now() < end)
		x++;
	return NULL;
}

int main(int argc, char **argv)
{
	struct th th[MAXT];
	int n = argc - 3, i, e, bad = 0;

	if (argc < 4 || n > MAXT) {
		fprintf(stderr, "usage: thrspin SECONDS ROOT CPU:DIR...\n");
		return 2;
	}
	end = now() + atof(argv[1]);
	e = put_id(argv[2], "cgroup.procs", getpid());
	if (e) {
		printf("thrspin: %s/cgroup.procs: %s\n", argv[2], strerror(e));
		return 1;
	}
	pthread_barrier_init(&placed, NULL, n + 1);
	for (i = 0; i < n; i++) {
		char *colon = strchr(argv[3 + i], ':');

		if (!colon) {
			fprintf(stderr, "thrspin: %s is not CPU:DIR\n", argv[3 + i]);
			return 2;
		}
		memset(&th[i], 0, sizeof(th[i]));
		th[i].cpu = atoi(argv[3 + i]);
		th[i].dir = colon + 1;
		if (pthread_create(&th[i].t, NULL, run, &th[i])) {
			printf("thrspin: pthread_create failed\n");
			return 1;
		}
	}
	pthread_barrier_wait(&placed);
	for (i = 0; i < n; i++) {
		if (th[i].err) {
			printf("thrspin: thread %d: %s: %s\n", i, th[i].what,
			       strerror(th[i].err));
			bad = 1;
		} else {
			printf("thread %d %d %s\n", th[i].tid, th[i].cpu, th[i].dir);
		}
	}
	fflush(stdout);
	for (i = 0; i < n; i++)
		pthread_join(th[i].t, NULL);
	printf("thrspin: %d threads\n", n);
	return bad;
}
