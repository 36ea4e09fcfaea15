// spin: burn CPU in a tight loop for SECONDS, then exit 0.
//
// Why a C helper and not `while :; do :; done` in ash: the shell loop forks
// nothing but still spends its time in the interpreter and can be starved or
// slowed unpredictably; a pure user-space loop is the cleanest "always
// runnable, never sleeps" task, which is exactly what cpu pressure measures.
// The deadline is built in so a spinner can never outlive its test case even
// if the shell that started it is killed.
//
// usage: spin SECONDS
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: spin SECONDS\n");
		return 2;
	}
	double end = now() + atof(argv[1]);
	volatile unsigned long x = 0;
	while (now() < end) {
		// clock_gettime is a vDSO call (no syscall, no sleep); the inner
		// loop keeps the clock reads cheap relative to the spinning.
		for (int i = 0; i < 100000; i++)
			x++;
	}
	return 0;
}
