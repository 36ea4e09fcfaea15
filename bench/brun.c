// SPDX-License-Identifier: GPL-2.0
/*
 * Guest helper of the overhead benchmark: runs one command (hackbench) between
 * two instruction-count markers and reports what it cost.
 *
 * usage: brun [-c CGROUP_DIR] [-o OUTFILE] -- command args...
 *   -c  move this process (and so the command) into that cgroup2 directory
 *       first
 *   -o  the command's stdout and stderr go there (default /dev/null)
 * prints: wall_ns=<ns> ctxt=<context switches, /proc/stat> status=<exit status>
 *
 * The marker is `nopl 0x4d495350(%rax)`, a no-op that bench/insncount.c
 * recognises; the guest instructions between the two markers are the run's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static inline void marker(void)
{
	asm volatile(".byte 0x0f, 0x1f, 0x80, 0x50, 0x53, 0x49, 0x4d" ::: "memory");
}

static unsigned long long ctxt(void)
{
	char line[256];
	unsigned long long v = 0;
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ctxt %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *cg = NULL, *out = "/dev/null";
	unsigned long long c0, c1, t0, t1;
	int opt, status, fd;
	pid_t pid;

	while ((opt = getopt(argc, argv, "c:o:")) != -1) {
		switch (opt) {
		case 'c': cg = optarg; break;
		case 'o': out = optarg; break;
		default: return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: brun [-c CGROUP] [-o OUT] -- cmd args...\n");
		return 2;
	}
	if (cg) {
		char path[512], pid_s[32];

		snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
		fd = open(path, O_WRONLY);
		snprintf(pid_s, sizeof(pid_s), "%d\n", getpid());
		if (fd < 0 || write(fd, pid_s, strlen(pid_s)) < 0) {
			fprintf(stderr, "brun: cannot join %s: %s\n", cg, strerror(errno));
			return 2;
		}
		close(fd);
	}
	c0 = ctxt();
	t0 = now_ns();
	marker();
	pid = fork();
	if (pid == 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[optind], argv + optind);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		status = -1;
	marker();
	t1 = now_ns();
	c1 = ctxt();
	printf("wall_ns=%llu ctxt=%llu status=%d\n", t1 - t0, c1 - c0,
	       status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
