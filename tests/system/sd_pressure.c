// SPDX-License-Identifier: GPL-2.0
// sd_pressure: a real sd-event program, the consumer systemd's own daemons
// are from systemd 254 on: one sd_event_add_memory_pressure() source with
// its defaults, as systemd's services use it. sd-event itself picks the file
// (the caller's cgroup's memory.pressure, else /proc/pressure/memory) and
// writes its trigger before the first loop iteration.
//
//   sd_pressure SECS
//
// Prints "watching <path>" and "enabled <0|1>" once the loop runs (sd-event
// turns the source off by itself if the trigger write fails), "event <ms>"
// per callback (ms since the start), and "exit <reason>" at the end, after
// SECS or when sd_event_add_memory_pressure() fails ("add-failed <errno>").
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-event.h>

static long long t0;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int on_pressure(sd_event_source *s, void *userdata)
{
	printf("event %lld\n", now_ms() - t0);
	fflush(stdout);
	return 0;
}

// the pressure file sd-event opened: the one of our descriptors that names one
static void print_watched(void)
{
	char link[300], path[PATH_MAX];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	ssize_t n;

	if (!dir)
		return;
	while ((d = readdir(dir))) {
		snprintf(link, sizeof(link), "/proc/self/fd/%s", d->d_name);
		n = readlink(link, path, sizeof(path) - 1);
		if (n <= 0)
			continue;
		path[n] = 0;
		if (strstr(path, "pressure"))
			printf("watching %s\n", path);
	}
	closedir(dir);
}

static int on_started(sd_event_source *t, uint64_t usec, void *userdata)
{
	int on = -1;

	print_watched();
	sd_event_source_get_enabled(userdata, &on);
	printf("enabled %d\n", on);
	fflush(stdout);
	return 0;
}

static int on_end(sd_event_source *t, uint64_t usec, void *userdata)
{
	return sd_event_exit(sd_event_source_get_event(t), 0);
}

int main(int argc, char **argv)
{
	sd_event_source *s = NULL;
	sd_event *e = NULL;
	int r, secs;

	if (argc != 2 || (secs = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: sd_pressure SECS\n");
		return 2;
	}
	t0 = now_ms();
	r = sd_event_default(&e);
	if (r < 0) {
		printf("exit sd_event_default %s\n", strerrorname_np(-r));
		return 1;
	}
	r = sd_event_add_memory_pressure(e, &s, on_pressure, NULL);
	if (r < 0) {
		printf("add-failed %s\n", strerrorname_np(-r));
		return 1;
	}
	if (sd_event_add_time_relative(e, NULL, CLOCK_MONOTONIC, 500000, 0,
				       on_started, s) < 0 ||
	    sd_event_add_time_relative(e, NULL, CLOCK_MONOTONIC,
				       secs * 1000000ULL, 0, on_end, NULL) < 0) {
		printf("exit timer\n");
		return 1;
	}
	r = sd_event_loop(e);
	printf("exit %s\n", r < 0 ? strerrorname_np(-r) : "end");
	sd_event_source_unref(s);
	sd_event_unref(e);
	return r < 0;
}
