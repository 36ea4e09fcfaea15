// dio: synchronous O_DIRECT I/O against a block device for SECONDS.
//
// Why: io pressure needs tasks that sleep in io_schedule() (in_iowait set).
// O_DIRECT bypasses the guest page cache, so every request really goes to the
// virtio disk and the task blocks until it completes; one request at a time
// (synchronous) means that while it waits, nothing else on the system is
// productive -> both io "some" and io "full" must grow.
// The host side opens the disk image with cache=none as well, so the host page
// cache does not turn the reads into memcpy's.
//
// usage: dio read|write DEVICE SECONDS [BLOCKSIZE]
//   read : random aligned reads across the device
//   write: random aligned writes, each followed by fsync() (a cache flush the
//          task also waits for)
// Prints one summary line: "dio <mode>: N ops in S s (E errors)".
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
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
	if (argc < 4) {
		fprintf(stderr, "usage: dio read|write DEVICE SECONDS [BLOCKSIZE]\n");
		return 2;
	}
	int wr = strcmp(argv[1], "write") == 0;
	if (!wr && strcmp(argv[1], "read") != 0) {
		fprintf(stderr, "dio: mode must be read or write\n");
		return 2;
	}
	double secs = atof(argv[3]);
	size_t bs = argc > 4 ? strtoul(argv[4], NULL, 0) : 4096;
	int fd = open(argv[2], (wr ? O_RDWR : O_RDONLY) | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "dio: open %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	unsigned long long size = 0;
	if (ioctl(fd, BLKGETSIZE64, &size) < 0 || size < bs) {
		// not a block device: fall back to the file size
		off_t end = lseek(fd, 0, SEEK_END);
		size = end > 0 ? (unsigned long long)end : 0;
	}
	if (size < bs) {
		fprintf(stderr, "dio: %s too small\n", argv[2]);
		return 1;
	}
	void *buf;
	// O_DIRECT needs a buffer aligned to the logical block size; 4096 covers it.
	if (posix_memalign(&buf, 4096, bs)) {
		fprintf(stderr, "dio: no memory\n");
		return 1;
	}
	memset(buf, 0x5a, bs);
	unsigned long long blocks = size / bs, ops = 0, errs = 0;
	unsigned int seed = (unsigned int)getpid();
	double start = now(), end = start + secs;
	while (now() < end) {
		off_t off = (off_t)((rand_r(&seed) * 65536ULL + rand_r(&seed)) % blocks) * bs;
		ssize_t r = wr ? pwrite(fd, buf, bs, off) : pread(fd, buf, bs, off);
		if (r != (ssize_t)bs)
			errs++;
		if (wr && fsync(fd) < 0)
			errs++;
		ops++;
	}
	printf("dio %s: %llu ops in %.1f s (%llu errors)\n", argv[1], ops, now() - start, errs);
	return errs ? 1 : 0;
}
