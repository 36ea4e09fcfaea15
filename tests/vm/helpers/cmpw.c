// cmpw: tools for the accuracy comparison (tests/vm/compare.sh).
//
//   cmpw phase SECONDS FILE      read FILE every 2 ms for SECONDS and print,
//                                each time its avg fields change (a fold of
//                                the 2 s averages happened between the two
//                                reads), "F <t_prev_us> <t_now_us>" in
//                                CLOCK_MONOTONIC microseconds. The script
//                                takes the fold grid's phase from these.
//   cmpw at PHASE_US CMD ARGS... sleep until CLOCK_MONOTONIC mod the PSI
//                                period ($PSI_PERIOD_US) equals PHASE_US, then
//                                exec CMD. Used to load psi_mod so that its
//                                grid (set at load) falls on the kernel's.
//                                Both run SCHED_FIFO.
//   cmpw until T_US CMD ARGS...  sleep until CLOCK_MONOTONIC reaches T_US
//                                (microseconds), then exec CMD, SCHED_FIFO:
//                                a snapshot at a set time after a load, which
//                                a shell loop under memory thrashing misses
//                                by seconds (each fork and exec stalls)
//   cmpw series MS SECONDS FILE...  every MS milliseconds print a back-to-back
//                                snapshot line "S <t_us> <file> <line>" of
//                                each FILE (investigation of fold timing)
//   cmpw fsync DEVICE SECONDS    buffered 4 KiB writes at random offsets, each
//                                followed by fsync(): the page cache and the
//                                flush path, not O_DIRECT
//   cmpw nap US SECONDS          sleep US microseconds in a loop: timer
//                                wakeups and nothing else
//   cmpw thp MIB SECONDS         allocation bursts: map MIB MiB, ask for
//                                transparent huge pages, touch, unmap, again;
//                                with the page cache full and fragmented this
//                                forces direct reclaim and compaction
//
// Why a C helper: the phase of the fold grid must be found to a few ms and a
// load timed to a few ms; a shell loop forking `cat` under TCG takes tens of
// ms per read and would itself load the CPUs it measures.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/fs.h>
#include <time.h>
#include <unistd.h>

// PSI's averaging period, 2*HZ+1 jiffies (2.004 s at HZ=250): the suite
// exports it from the kernel's CONFIG_HZ. A 2 s circle would drift 4 ms per
// fold against the kernel's grid.
static long long period_us(void)
{
	const char *e = getenv("PSI_PERIOD_US");
	long long p = e ? atoll(e) : 0;

	return p > 0 ? p : 2004000LL;
}

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void sleep_us(long long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

// SCHED_FIFO for the phase poller and the timed load: a poller that waits
// behind the spinners for a time slice (hundreds of ms seen under TCG on a
// shared host) would place the folds only that precisely
static void go_fifo(void)
{
	struct sched_param sp = { .sched_priority = 50 };

	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		perror("cmpw: SCHED_FIFO");
}

static int read_file(const char *f, char *buf, size_t len)
{
	int fd = open(f, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return (int)n;
}

// the avg fields only: cut every line at " total="
static void avgs_of(const char *in, char *out, size_t len)
{
	size_t o = 0;
	const char *p = in;

	while (*p && o + 1 < len) {
		const char *t = strstr(p, " total=");
		const char *nl = strchr(p, '\n');

		if (!t || (nl && t > nl))
			t = nl ? nl : p + strlen(p);
		while (p < t && o + 1 < len)
			out[o++] = *p++;
		out[o++] = '|';
		if (!nl)
			break;
		p = nl + 1;
	}
	out[o] = 0;
}

static int do_phase(double secs, const char *f)
{
	char buf[512], cur[512], prev[512] = "";
	long long end = now_us() + (long long)(secs * 1e6), tp = 0;

	go_fifo();
	while (now_us() < end) {
		long long t = now_us();

		if (read_file(f, buf, sizeof(buf)) < 0) {
			perror(f);
			return 1;
		}
		avgs_of(buf, cur, sizeof(cur));
		if (prev[0] && strcmp(cur, prev))
			printf("F %lld %lld\n", tp, t);
		strcpy(prev, cur);
		tp = t;
		sleep_us(2000);
	}
	return 0;
}

static int do_until(long long t_us, char **argv)
{
	long long t;

	go_fifo();
	t = now_us();
	if (t_us > t)
		sleep_us(t_us - t);
	execvp(argv[0], argv);
	perror(argv[0]);
	return 1;
}

// the next time CLOCK_MONOTONIC mod the period is @phase
static int do_at(long long phase, char **argv)
{
	long long t = now_us(), wait;

	wait = (phase - t % period_us()) % period_us();
	if (wait < 0)
		wait += period_us();
	return do_until(t + wait, argv);
}

static int do_series(int ms, double secs, int n, char **files)
{
	static char buf[16][512];
	long long end = now_us() + (long long)(secs * 1e6);

	if (n > 16)
		n = 16;
	while (now_us() < end) {
		long long t = now_us();

		for (int i = 0; i < n; i++)
			if (read_file(files[i], buf[i], sizeof(buf[i])) < 0)
				strcpy(buf[i], "?\n");
		for (int i = 0; i < n; i++) {
			char *l = buf[i], *nl;

			while (*l && (nl = strchr(l, '\n'))) {
				*nl = 0;
				printf("S %lld %s %s\n", t, files[i], l);
				l = nl + 1;
			}
		}
		fflush(stdout);
		sleep_us(ms * 1000LL);
	}
	return 0;
}

static int do_fsync(const char *dev, double secs)
{
	int fd = open(dev, O_RDWR);
	unsigned long long size = 0, ops = 0, errs = 0;
	unsigned int seed = (unsigned int)getpid();
	char buf[4096];
	long long end;

	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &size) < 0 || size < 8192) {
		fprintf(stderr, "cmpw fsync: %s: %s\n", dev, strerror(errno));
		return 1;
	}
	memset(buf, 0x3c, sizeof(buf));
	end = now_us() + (long long)(secs * 1e6);
	while (now_us() < end) {
		off_t off = (off_t)((rand_r(&seed) * 65536ULL + rand_r(&seed)) %
				    (size / 4096)) * 4096;

		if (pwrite(fd, buf, sizeof(buf), off) != sizeof(buf))
			errs++;
		if (fsync(fd) < 0)
			errs++;
		ops++;
	}
	printf("cmpw fsync: %llu writes+fsync (%llu errors)\n", ops, errs);
	return errs ? 1 : 0;
}

// nap: sleep US microseconds in a loop for SECS: one timer wakeup per
// loop, nothing else (isolates the wakeup-to-run latency in cpu some)
static int do_nap(long long us, double secs)
{
	long long start = now_us(), end = start + (long long)(secs * 1e6);
	long long n = 0, next = start + 1000000, t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((t = now_us()) < end) {
		// the rate so far, once a second: the workload is killed
		if (t >= next) {
			printf("nap: %lld wakeups/s\n", n * 1000000 / (t - start));
			next += 1000000;
		}
		sleep_us(us);
		n++;
	}
	return 0;
}

static int do_thp(size_t mib, double secs)
{
	size_t len = mib << 20;
	long long end = now_us() + (long long)(secs * 1e6);
	unsigned long rounds = 0;

	while (now_us() < end) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("cmpw thp: mmap");
			return 1;
		}
		// MADV_HUGEPAGE: with defrag=madvise (Debian's default) a
		// fault here compacts and reclaims directly to get 2 MiB
		madvise(p, len, MADV_HUGEPAGE);
		for (size_t i = 0; i < len; i += 4096)
			p[i] = (char)i;
		munmap(p, len);
		rounds++;
	}
	printf("cmpw thp: %lu rounds of %zu MiB\n", rounds, mib);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 4 && !strcmp(argv[1], "phase"))
		return do_phase(atof(argv[2]), argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "at"))
		return do_at(atoll(argv[2]), argv + 3);
	if (argc >= 4 && !strcmp(argv[1], "until"))
		return do_until(atoll(argv[2]), argv + 3);
	if (argc >= 5 && !strcmp(argv[1], "series"))
		return do_series(atoi(argv[2]), atof(argv[3]), argc - 4, argv + 4);
	if (argc >= 4 && !strcmp(argv[1], "fsync"))
		return do_fsync(argv[2], atof(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "nap"))
		return do_nap(atoll(argv[2]), atof(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "thp"))
		return do_thp(strtoul(argv[2], NULL, 0), atof(argv[3]));
	fprintf(stderr, "usage: cmpw phase|at|until|series|fsync|nap|thp ... (see source)\n");
	return 2;
}
