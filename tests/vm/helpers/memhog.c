// memhog: allocate MIB MiB of anonymous memory, touch every page, and keep
// re-touching it until SECONDS have passed.
//
// Why: memory pressure only appears when the kernel has to reclaim (tasks
// stall in direct reclaim / compaction, bracketed by psi_memstall_enter/leave).
// In the initramfs guest there is no swap and almost no reclaimable page
// cache, so two hogs that together exceed RAM force reclaim and, in the end,
// the OOM killer. The hog volunteers to be the OOM victim (oom_score_adj
// 1000) so the test shell, which sets itself to -1000, survives.
// Being OOM-killed is an expected outcome (exit by SIGKILL).
//
// usage: memhog MIB SECONDS
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: memhog MIB SECONDS\n");
		return 2;
	}
	int fd = open("/proc/self/oom_score_adj", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1000", 4) < 0)
			perror("memhog: oom_score_adj");
		close(fd);
	}
	size_t len = strtoul(argv[1], NULL, 0) << 20;
	double end = now() + atof(argv[2]);
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("memhog: mmap");
		return 1;
	}
	unsigned long passes = 0;
	do {
		for (size_t i = 0; i < len; i += pg)
			p[i] = (char)(i + passes + 1);	// a write: every page must be backed
		passes++;
	} while (now() < end);
	printf("memhog: %lu passes over %s MiB\n", passes, argv[1]);
	return 0;
}
