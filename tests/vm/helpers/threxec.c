// threxec: ROUNDS times, fork a child whose second thread calls execve()
// while the thread-group leader is asleep in O_DIRECT reads (iowait).
//
// Why: exec from a non-leader thread makes the kernel kill the other threads
// (de_thread) and swap the pids of the exec'ing thread and the old leader
// (exchange_tids). Per-task state that a tracer keeps by pid or by task has
// to follow that swap, and the old leader dies while it may be counted as
// in iowait. Run under psi_mod, a wrong hand-over shows up as a count that
// never drops (pressure stuck) or as "task count underflows" at unload.
//
// usage: threxec ROUNDS DEVICE|-
//   with "-" the leader spins (stays runnable) instead of reading DEVICE
// Prints "threxec: N rounds, F failures"; exit 0 only if every child ran
// the exec'd program (/bin/true) to a clean exit.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *execer(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 2 * 1000 * 1000 };	// let the leader block first
	nanosleep(&ts, NULL);
	char *argv[] = { "true", NULL };
	execv("/bin/true", argv);
	_exit(99);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: threxec ROUNDS DEVICE|-\n");
		return 2;
	}
	int rounds = atoi(argv[1]), fails = 0;
	for (int i = 0; i < rounds; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			fails++;
			continue;
		}
		if (pid == 0 && strcmp(argv[2], "-") == 0) {
			// variant: the leader stays runnable (spins) instead
			pthread_t t;
			if (pthread_create(&t, NULL, execer, NULL))
				_exit(97);
			for (volatile unsigned long x = 0;; x++)
				;
		}
		if (pid == 0) {
			int fd = open(argv[2], O_RDONLY | O_DIRECT);
			void *buf;
			if (fd < 0 || posix_memalign(&buf, 4096, 4096))
				_exit(98);
			pthread_t t;
			if (pthread_create(&t, NULL, execer, NULL))
				_exit(97);
			// the leader sleeps in io until de_thread() kills it
			for (off_t off = 0;; off = (off + 4096 * 37) % (64 << 20))
				if (pread(fd, buf, 4096, off) < 0)
					_exit(96);
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fails++;
	}
	printf("threxec: %d rounds, %d failures\n", rounds, fails);
	return fails ? 1 : 0;
}
