// trig: the pressure-trigger client of the VM tests (static, run in the guest).
//
//   trig [-u UID] [-U UID] [-w] CMD ...
//     -u UID   drop to UID/GID (no groups, so no capability) before opening:
//              an unprivileged opener
//     -U UID   drop after opening, before writing: the privilege is the
//              opener's (file->f_cred), so this one stays privileged
//     -w       open the file write-only (O_WRONLY, as lmkd does) instead of
//              O_RDWR (as sd-event and the kernel's example do)
//
//   write FILE STR [LEN]   open O_RDWR, one write() of STR (C escapes \n \0
//                          \t \\ allowed) of LEN bytes (default: its length);
//                          prints "ok" or the errno name
//   twice FILE STR1 STR2   two writes on the same descriptor: "R1 R2"
//   ro FILE STR            open O_RDONLY and write STR: the errno name
//   late FILE STR GO       open O_RDWR, wait (up to 60 s) until the file GO
//                          exists, then one write() of STR: the errno name,
//                          or "nogo" if GO never came; a write on a
//                          descriptor opened before its file went
//   watch FILE STR SECS MODE
//                          write the trigger, then wait for events for SECS
//                          with MODE poll, epoll or select (exceptfds);
//                          prints "event <ms>" per event and, last,
//                          "events N" (or "gone <ms> <bits>" if the file
//                          answered EPOLLERR: the module went away)
//   wait FILE STR SECS MODE
//                          write the trigger and wait ONE poll/epoll/select
//                          call of up to SECS: "woke <bits> <ms>" or
//                          "timeout"; used to race unload against a poller
//   pair KFILE MFILE STR SECS
//                          the same trigger STR written to two files back to
//                          back (the kernel's and psi_mod's), then one epoll
//                          on both for SECS; prints "k <us>" or "m <us>" per
//                          event (microseconds since the second write) and,
//                          last, "pair <k events> <m events> <k first us>
//                          <m first us>" (-1: no event)
//   many FILE STR N SECS   open N descriptors each with the trigger STR,
//                          hold them SECS, close; "many <ok> ok[ <errno> at
//                          <i>]" (stops at the first failure)
//   cycle FILE STR N       N times: open, write the trigger STR, close;
//                          "cycle <ok> ok[ <errno> at <i>]" (stops at the
//                          first failure)
// Exit status: 0 if the command ran (whatever the kernel answered), 1 on a
// failure of the tool itself, 2 usage.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case 0: return "ok";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case EBADF: return "EBADF";
	case EFAULT: return "EFAULT";
	case EIO: return "EIO";
	case ENOENT: return "ENOENT";
	case ENOMEM: return "ENOMEM";
	case EMFILE: return "EMFILE";
	case ENFILE: return "ENFILE";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENODEV: return "ENODEV";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	default: return "E?";
	}
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int drop(const char *uid)
{
	uid_t u = (uid_t)strtoul(uid, NULL, 0);

	if (setgroups(0, NULL) || setgid(u) || setuid(u)) {
		printf("drop privileges: %s\n", ename(errno));
		return -1;
	}
	return 0;
}

/* C escapes into @out; returns the length. */
static size_t unescape(const char *s, char *out)
{
	size_t n = 0;

	for (; *s; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			switch (*s) {
			case 'n': out[n++] = '\n'; break;
			case 't': out[n++] = '\t'; break;
			case '0': out[n++] = '\0'; break;
			default: out[n++] = *s; break;
			}
		} else {
			out[n++] = *s;
		}
	}
	out[n] = '\0';
	return n;
}

static const char *drop_after;
static int wronly;

static int open_file(const char *file, int flags)
{
	int fd;

	if (wronly && (flags & O_ACCMODE) == O_RDWR)
		flags = (flags & ~O_ACCMODE) | O_WRONLY;
	fd = open(file, flags);

	if (fd < 0) {
		printf("open %s: %s\n", file, ename(errno));
		exit(1);
	}
	if (drop_after && drop(drop_after))
		exit(1);
	return fd;
}

/* One write; returns 0 or the errno. */
static int wr(int fd, const char *str, long len)
{
	char buf[4096];
	size_t n = unescape(str, buf);

	if (len >= 0)
		n = (size_t)len;
	return write(fd, buf, n) < 0 ? errno : 0;
}

static const char *bits(unsigned int ev)
{
	static char b[64];

	b[0] = '\0';
	if (ev & POLLIN) strcat(b, "IN,");
	if (ev & POLLPRI) strcat(b, "PRI,");
	if (ev & POLLOUT) strcat(b, "OUT,");
	if (ev & POLLERR) strcat(b, "ERR,");
	if (ev & POLLHUP) strcat(b, "HUP,");
	if (ev & POLLNVAL) strcat(b, "NVAL,");
	if (b[0])
		b[strlen(b) - 1] = '\0';
	else
		strcpy(b, "none");
	return b;
}

/*
 * One wait of up to @ms for an event: returns the events seen (0 on
 * timeout), with select() mapped to PRI (exceptfds) and IN (readfds,
 * which EPOLLERR also marks).
 */
static int wait_one(int fd, int ep, const char *mode, int ms)
{
	if (!strcmp(mode, "poll")) {
		struct pollfd p = { .fd = fd, .events = POLLPRI };
		int r = poll(&p, 1, ms);

		return r > 0 ? p.revents : r;
	}
	if (!strcmp(mode, "epoll")) {
		struct epoll_event e;
		int r = epoll_wait(ep, &e, 1, ms);

		return r > 0 ? (int)e.events : r;
	}
	if (!strcmp(mode, "select")) {
		fd_set ex;
		struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
		int r;

		FD_ZERO(&ex);
		FD_SET(fd, &ex);
		r = select(fd + 1, NULL, NULL, &ex, &tv);
		return r > 0 ? (FD_ISSET(fd, &ex) ? POLLPRI : 0) : r;
	}
	fprintf(stderr, "trig: mode poll, epoll or select\n");
	exit(2);
}

static int setup(const char *file, const char *str, const char *mode,
		 int *ep)
{
	int fd = open_file(file, O_RDWR | O_NONBLOCK);
	int e = wr(fd, str, -1);

	if (e) {
		printf("write: %s\n", ename(e));
		exit(0);
	}
	*ep = -1;
	if (!strcmp(mode, "epoll")) {
		struct epoll_event ev = { .events = EPOLLPRI, .data.fd = fd };

		*ep = epoll_create1(0);
		if (*ep < 0 || epoll_ctl(*ep, EPOLL_CTL_ADD, fd, &ev)) {
			printf("epoll: %s\n", ename(errno));
			exit(1);
		}
	}
	return fd;
}

static int do_watch(const char *file, const char *str, double secs,
		    const char *mode)
{
	long long t0 = now_ms(), end = t0 + (long long)(secs * 1000);
	unsigned long events = 0;
	int ep, fd = setup(file, str, mode, &ep);

	for (long long now = t0; now < end; now = now_ms()) {
		int r = wait_one(fd, ep, mode, (int)(end - now));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			printf("wait: %s\n", ename(errno));
			return 1;
		}
		if (r & POLLERR) {
			printf("gone %lld %s\n", now_ms() - t0, bits(r));
			printf("events %lu\n", events);
			return 0;
		}
		if (r & POLLPRI) {
			events++;
			printf("event %lld\n", now_ms() - t0);
			fflush(stdout);
		}
	}
	printf("events %lu\n", events);
	return 0;
}

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int do_pair(const char *kfile, const char *mfile, const char *str,
		   double secs)
{
	int fd[2] = { open_file(kfile, O_RDWR | O_NONBLOCK),
		      open_file(mfile, O_RDWR | O_NONBLOCK) };
	long long first[2] = { -1, -1 }, t0, end;
	unsigned long n[2] = { 0, 0 };
	int ep = epoll_create1(0);

	for (int i = 0; i < 2; i++) {
		struct epoll_event ev = { .events = EPOLLPRI, .data.u32 = i };
		int e = wr(fd[i], str, -1);

		if (e) {
			printf("write %s: %s\n", i ? mfile : kfile, ename(e));
			return 1;
		}
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &ev)) {
			printf("epoll: %s\n", ename(errno));
			return 1;
		}
	}
	t0 = now_us();
	end = t0 + (long long)(secs * 1e6);
	for (long long now = t0; now < end; now = now_us()) {
		struct epoll_event e[2];
		int r = epoll_wait(ep, e, 2, (int)((end - now + 999) / 1000));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			printf("wait: %s\n", ename(errno));
			return 1;
		}
		for (int j = 0; j < r; j++) {
			int i = (int)e[j].data.u32;
			long long t = now_us() - t0;

			if (e[j].events & EPOLLERR) {
				printf("gone %c %s\n", "km"[i], bits(e[j].events));
				return 1;
			}
			if (first[i] < 0)
				first[i] = t;
			n[i]++;
			printf("%c %lld\n", "km"[i], t);
		}
	}
	printf("pair %lu %lu %lld %lld\n", n[0], n[1], first[0], first[1]);
	return 0;
}

static int do_wait(const char *file, const char *str, double secs,
		   const char *mode)
{
	int ep, fd = setup(file, str, mode, &ep);
	long long t0;
	int r;

	printf("waiting\n");
	fflush(stdout);
	t0 = now_ms();
	r = wait_one(fd, ep, mode, (int)(secs * 1000));
	if (r < 0)
		printf("wait: %s\n", ename(errno));
	else if (!r)
		printf("timeout\n");
	else
		printf("woke %s %lld\n", bits(r), now_ms() - t0);
	return 0;
}

static int do_many(const char *file, const char *str, long n, double secs)
{
	struct rlimit rl = { n + 64, n + 64 };
	long i;
	int e = 0;

	/* as root, raise the limit first; an unprivileged caller keeps its own */
	setrlimit(RLIMIT_NOFILE, &rl);
	for (i = 0; i < n; i++) {
		int fd = open(file, O_RDWR);

		if (fd < 0) {
			e = errno;
			break;
		}
		e = wr(fd, str, -1);
		if (e)
			break;
	}
	printf("many %ld ok", i);
	if (e)
		printf(" %s at %ld", ename(e), i);
	printf("\n");
	fflush(stdout);
	usleep((useconds_t)(secs * 1e6));
	return 0;
}

static int do_cycle(const char *file, const char *str, long n)
{
	long i;
	int e = 0;

	for (i = 0; i < n; i++) {
		int fd = open(file, O_RDWR);

		if (fd < 0) {
			e = errno;
			break;
		}
		e = wr(fd, str, -1);
		close(fd);
		if (e)
			break;
	}
	printf("cycle %ld ok", i);
	if (e)
		printf(" %s at %ld", ename(e), i);
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1;

	while (i + 1 < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "-u")) {
			if (drop(argv[i + 1]))
				return 1;
		} else if (!strcmp(argv[i], "-U")) {
			drop_after = argv[i + 1];
		} else if (!strcmp(argv[i], "-w")) {
			wronly = 1;
			i++;
			continue;
		} else {
			break;
		}
		i += 2;
	}
	argc -= i - 1;
	argv += i - 1;
	if (argc >= 4 && argc <= 5 && !strcmp(argv[1], "write")) {
		int fd = open_file(argv[2], O_RDWR);

		printf("%s\n", ename(wr(fd, argv[3], argc == 5 ? atol(argv[4]) : -1)));
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "twice")) {
		int fd = open_file(argv[2], O_RDWR);
		int a = wr(fd, argv[3], -1);

		printf("%s ", ename(a));
		printf("%s\n", ename(wr(fd, argv[4], -1)));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "ro")) {
		int fd = open_file(argv[2], O_RDONLY);

		printf("%s\n", ename(wr(fd, argv[3], -1)));
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "late")) {
		int fd = open_file(argv[2], O_RDWR);
		int i;

		for (i = 0; i < 6000 && access(argv[4], F_OK); i++)
			usleep(10000);
		if (i == 6000) {
			printf("nogo\n");
			return 0;
		}
		printf("%s\n", ename(wr(fd, argv[3], -1)));
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "watch"))
		return do_watch(argv[2], argv[3], atof(argv[4]), argv[5]);
	if (argc == 6 && !strcmp(argv[1], "wait"))
		return do_wait(argv[2], argv[3], atof(argv[4]), argv[5]);
	if (argc == 6 && !strcmp(argv[1], "pair"))
		return do_pair(argv[2], argv[3], argv[4], atof(argv[5]));
	if (argc == 6 && !strcmp(argv[1], "many"))
		return do_many(argv[2], argv[3], atol(argv[4]), atof(argv[5]));
	if (argc == 5 && !strcmp(argv[1], "cycle"))
		return do_cycle(argv[2], argv[3], atol(argv[4]));
	fprintf(stderr, "usage: trig [-u UID] [-U UID] [-w] write FILE STR [LEN] | twice FILE S1 S2 | ro FILE STR | late FILE STR GO | watch FILE STR SECS MODE | wait FILE STR SECS MODE | pair KFILE MFILE STR SECS | many FILE STR N SECS | cycle FILE STR N\n");
	return 2;
}
