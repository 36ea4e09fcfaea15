// fusehang: a FUSE file server that never answers, and the clients that get
// stuck on it, for the tests that a stop of psi_mod ends in bounded time
// whatever user space does (docs/design.md, "The module"). Raw /dev/fuse
// protocol, no libfuse (the guest is a busybox initramfs).
//
//   fusehang serve MNT          as root: mount a FUSE file system on MNT
//                               (user_id/group_id 65534), drop to uid 65534
//                               and serve one file, MNT/f (4096 bytes): INIT,
//                               LOOKUP, GETATTR, OPEN (page cache, no
//                               direct I/O, so it can be mapped shared),
//                               FLUSH, RELEASE answered; READ and POLL read
//                               and never answered. Prints "ready" once
//                               mounted; runs until killed (the kernel then
//                               ends every request still waiting).
//   fusehang poll UID TRIG F    as UID: a trigger on the pressure file TRIG
//                               ("some 500000 2000000"), then one poll() of
//                               the trigger fd (POLLPRI) and of F (POLLIN),
//                               in that order: the poll sleeps in F's ->poll
//                               with its entry on the trigger's wait queue.
//                               Prints "polling", then "returned RC REVENTS
//                               MS" when the poll returns.
//   fusehang read UID FILE F    as UID: map F shared and writable, read()
//                               FILE into the mapping (whose page only a
//                               READ of F could bring in). Prints "reading",
//                               then "read RESULT MS" (a count or an errno
//                               name).
//   fusehang write UID FILE F   the same with write() of 32 bytes from the
//                               mapping to FILE.
//   fusehang readinto UID FILE anon|shared:PATH|private:PATH
//                               as UID: read() FILE into a fresh mapping
//                               never touched before: anonymous, or of the
//                               file PATH (created, 4096 bytes). Prints
//                               "read RESULT MS: <first line>".
// Exit status: 0, or 1 on a failed setup step (after printing it), 2 usage.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/fuse.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FH_UID		65534
#define FH_SIZE		4096
#define FH_INO		2

static const char *ename(int e)
{
	switch (e) {
	case EFAULT: return "EFAULT";
	case EIO: return "EIO";
	case EINTR: return "EINTR";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENODEV: return "ENODEV";
	case ENOTCONN: return "ENOTCONN";
	case ECONNABORTED: return "ECONNABORTED";
	default: return "E?";
	}
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int drop(uid_t u)
{
	if (setgroups(0, NULL) || setgid(u) || setuid(u)) {
		printf("drop privileges: %s\n", ename(errno));
		return -1;
	}
	return 0;
}

static void fill_attr(struct fuse_attr *a, uint64_t nodeid)
{
	memset(a, 0, sizeof(*a));
	a->ino = nodeid;
	a->nlink = 1;
	a->uid = FH_UID;
	a->gid = FH_UID;
	a->blksize = FH_SIZE;
	if (nodeid == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	} else {
		a->mode = S_IFREG | 0666;
		a->size = FH_SIZE;
		a->blocks = FH_SIZE / 512;
	}
}

static void reply(int fd, uint64_t unique, int error, const void *arg,
		  size_t len)
{
	char buf[sizeof(struct fuse_out_header) + 256];
	struct fuse_out_header *oh = (void *)buf;

	oh->len = sizeof(*oh) + len;
	oh->error = error;
	oh->unique = unique;
	if (len)
		memcpy(buf + sizeof(*oh), arg, len);
	if (write(fd, buf, oh->len) < 0 && errno != ENOENT)
		perror("fusehang: reply");
}

static int serve(const char *mnt)
{
	static char buf[FUSE_MIN_READ_BUFFER + (1 << 20)];
	char opts[128];
	int fd;

	fd = open("/dev/fuse", O_RDWR);
	if (fd < 0) {
		printf("open /dev/fuse: %s\n", ename(errno));
		return 1;
	}
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=%d,group_id=%d", fd, FH_UID,
		 FH_UID);
	if (mount("fusehang", mnt, "fuse", MS_NOSUID | MS_NODEV, opts)) {
		printf("mount %s: %s\n", mnt, ename(errno));
		return 1;
	}
	if (drop(FH_UID))
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		struct fuse_in_header *ih = (void *)buf;
		void *in = buf + sizeof(*ih);
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			/* ENODEV: unmounted */
			return 0;
		}
		switch (ih->opcode) {
		case FUSE_INIT: {
			struct fuse_init_in *ii = in;
			struct fuse_init_out o;

			memset(&o, 0, sizeof(o));
			o.major = FUSE_KERNEL_VERSION;
			o.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ?
				  ii->minor : FUSE_KERNEL_MINOR_VERSION;
			/* no FUSE_ASYNC_READ: the page reads are synchronous */
			o.max_readahead = ii->max_readahead;
			o.max_write = FH_SIZE;
			o.time_gran = 1;
			reply(fd, ih->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out o;

			if (ih->nodeid != FUSE_ROOT_ID || strcmp(in, "f")) {
				reply(fd, ih->unique, -ENOENT, NULL, 0);
				break;
			}
			memset(&o, 0, sizeof(o));
			o.nodeid = FH_INO;
			o.entry_valid = 3600;
			o.attr_valid = 3600;
			fill_attr(&o.attr, FH_INO);
			reply(fd, ih->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out o;

			memset(&o, 0, sizeof(o));
			o.attr_valid = 3600;
			fill_attr(&o.attr, ih->nodeid);
			reply(fd, ih->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_OPEN:
		case FUSE_OPENDIR: {
			struct fuse_open_out o;

			memset(&o, 0, sizeof(o));
			o.fh = 1;
			reply(fd, ih->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_FLUSH:
		case FUSE_RELEASE:
		case FUSE_RELEASEDIR:
			reply(fd, ih->unique, 0, NULL, 0);
			break;
		case FUSE_READ:
		case FUSE_POLL:
			/* never answered: the caller waits until we die */
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			/* no reply */
			break;
		default:
			reply(fd, ih->unique, -ENOSYS, NULL, 0);
			break;
		}
	}
}

static int open_as(const char *uid, const char *path, int flags)
{
	int fd;

	if (drop((uid_t)strtoul(uid, NULL, 0)))
		exit(1);
	fd = open(path, flags);
	if (fd < 0) {
		printf("open %s: %s\n", path, ename(errno));
		exit(1);
	}
	return fd;
}

static void *map_fuse(const char *path)
{
	int fd = open(path, O_RDWR);
	void *p;

	if (fd < 0) {
		printf("open %s: %s\n", path, ename(errno));
		exit(1);
	}
	p = mmap(NULL, FH_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		printf("mmap %s: %s\n", path, ename(errno));
		exit(1);
	}
	return p;
}

static void result(const char *what, ssize_t n, long long t0)
{
	if (n < 0)
		printf("%s %s %lld\n", what, ename(errno), now_ms() - t0);
	else
		printf("%s %zd %lld\n", what, n, now_ms() - t0);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const char trig[] = "some 500000 2000000";
	long long t0;
	ssize_t n;
	void *p;
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "poll")) {
		struct pollfd pf[2];
		int rc;

		fd = open_as(argv[2], argv[3], O_RDWR);
		if (write(fd, trig, sizeof(trig)) < 0) {
			printf("trigger write: %s\n", ename(errno));
			return 1;
		}
		pf[0].fd = fd;
		pf[0].events = POLLPRI;
		pf[1].fd = open(argv[4], O_RDONLY);
		pf[1].events = POLLIN;
		if (pf[1].fd < 0) {
			printf("open %s: %s\n", argv[4], ename(errno));
			return 1;
		}
		printf("polling\n");
		t0 = now_ms();
		rc = poll(pf, 2, 600000);
		printf("returned %d 0x%x %lld\n", rc, pf[0].revents,
		       now_ms() - t0);
		return 0;
	}
	if (argc == 5 && (!strcmp(argv[1], "read") ||
			  !strcmp(argv[1], "write"))) {
		int rd = argv[1][0] == 'r';

		fd = open_as(argv[2], argv[3], rd ? O_RDONLY : O_WRONLY);
		p = map_fuse(argv[4]);
		printf("%s\n", rd ? "reading" : "writing");
		t0 = now_ms();
		n = rd ? read(fd, p, FH_SIZE) : write(fd, p, 32);
		result(argv[1], n, t0);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "readinto")) {
		const char *how = argv[4];
		char line[256];

		fd = open_as(argv[2], argv[3], O_RDONLY);
		if (!strcmp(how, "anon")) {
			p = mmap(NULL, FH_SIZE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		} else {
			const char *path = strchr(how, ':');
			int shared = !strncmp(how, "shared:", 7);
			int mfd;

			if (!path) {
				fprintf(stderr, "bad mapping %s\n", how);
				return 2;
			}
			mfd = open(path + 1, O_RDWR | O_CREAT | O_TRUNC, 0600);
			if (mfd < 0 || ftruncate(mfd, FH_SIZE)) {
				printf("create %s: %s\n", path + 1,
				       ename(errno));
				return 1;
			}
			p = mmap(NULL, FH_SIZE, PROT_READ | PROT_WRITE,
				 shared ? MAP_SHARED : MAP_PRIVATE, mfd, 0);
		}
		if (p == MAP_FAILED) {
			printf("mmap: %s\n", ename(errno));
			return 1;
		}
		t0 = now_ms();
		n = read(fd, p, FH_SIZE);
		if (n < 0) {
			result("read", n, t0);
			return 0;
		}
		snprintf(line, sizeof(line), "%.*s", (int)n, (char *)p);
		line[strcspn(line, "\n")] = '\0';
		printf("read %zd %lld: %s\n", n, now_ms() - t0, line);
		return 0;
	}
	fprintf(stderr, "usage: fusehang serve MNT | poll UID TRIG F | read|write UID FILE F | readinto UID FILE anon|shared:PATH|private:PATH\n");
	return 2;
}
