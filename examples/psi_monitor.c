// SPDX-License-Identifier: GPL-2.0
/*
 * psi_monitor: wait for pressure events on a pressure file, the way
 * Documentation/accounting/psi.rst's example does, on psi_mod's files or
 * the kernel's own.
 *
 *   cc -O2 -o psi_monitor examples/psi_monitor.c
 *   psi_monitor [FILE [TRIGGER [SECONDS]]]
 *
 * FILE     default /proc/pressure/memory (psi_mod loaded with
 *          proc_dir=NAME: /proc/NAME/memory)
 * TRIGGER  default "some 150000 1000000": an event whenever the tasks
 *          were stalled on the resource for 150 ms or more within a
 *          1 s window. As a user without CAP_SYS_RESOURCE the window
 *          must be a multiple of 2 s, e.g. "some 300000 2000000".
 * SECONDS  stop after this long (default: run until interrupted)
 *
 * Prints one line per event with the time and the file's current "some"
 * line; exits 0 at the end, 1 on an error, 3 if the file went away (the
 * module was unloaded or disabled: poll reports POLLERR).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The file's first line ("some avg10=..."), read through the same fd. */
static void some_line(int fd, char *out, size_t n)
{
	ssize_t r = pread(fd, out, n - 1, 0);
	char *nl;

	if (r < 0)
		r = 0;
	out[r] = '\0';
	nl = strchr(out, '\n');
	if (nl)
		*nl = '\0';
}

int main(int argc, char **argv)
{
	const char *file = argc > 1 ? argv[1] : "/proc/pressure/memory";
	const char *trig = argc > 2 ? argv[2] : "some 150000 1000000";
	double secs = argc > 3 ? atof(argv[3]) : 0, t0 = now();
	struct pollfd fds;
	unsigned long events = 0;
	char line[256];

	fds.fd = open(file, O_RDWR | O_NONBLOCK);
	if (fds.fd < 0) {
		fprintf(stderr, "open %s: %s\n", file, strerror(errno));
		return 1;
	}
	/* the kernel overwrites the last byte written with a NUL: send it */
	if (write(fds.fd, trig, strlen(trig) + 1) < 0) {
		fprintf(stderr, "write \"%s\" to %s: %s%s\n", trig, file,
			strerror(errno),
			errno == EINVAL ? " (unprivileged: windows in multiples of 2 s)" : "");
		return 1;
	}
	fds.events = POLLPRI;
	printf("waiting for \"%s\" on %s\n", trig, file);
	fflush(stdout);

	for (;;) {
		int left = -1, n;

		if (secs > 0) {
			double rest = secs - (now() - t0);

			if (rest <= 0)
				break;
			left = (int)(rest * 1000) + 1;
		}
		n = poll(&fds, 1, left);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "poll: %s\n", strerror(errno));
			return 1;
		}
		if (n == 0)
			break;
		if (fds.revents & POLLERR) {
			printf("%.3f s: %s went away\n", now() - t0, file);
			return 3;
		}
		if (fds.revents & POLLPRI) {
			events++;
			some_line(fds.fd, line, sizeof(line));
			printf("%.3f s: event %lu: %s\n", now() - t0, events,
			       line);
			fflush(stdout);
		}
	}
	printf("%lu events in %.1f s\n", events, now() - t0);
	close(fds.fd);
	return 0;
}
