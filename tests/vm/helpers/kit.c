// kit: small syscall-level tools the busybox applets cannot give us precisely.
//
//   kit now                      CLOCK_MONOTONIC in microseconds (busybox date
//                                has no sub-second output; PSI totals are in us)
//   kit snap FILE...             print "T <us>" and then every line of every
//                                FILE as "<FILE> <line>", all from one process,
//                                so several pressure files are sampled back to
//                                back (microseconds apart, no fork/exec between)
//   kit load KO [PARAMS...]      finit_module(); prints "ok" or the errno name
//                                and message (busybox insmod only prints text)
//   kit write FILE STRING        open(O_WRONLY)+write(STRING"\n") like `echo`,
//                                prints "ok" or the errno name and message
//   kit readas UID FILE          drop to UID/GID (no groups) and read FILE:
//                                "is it readable by everyone", tested as an
//                                unprivileged user (busybox setpriv cannot
//                                switch uids)
//   kit mkdiras UID DIR          drop to UID/GID (no groups) and mkdir DIR:
//                                a delegated cgroup's owner making a cgroup
//   kit hold FILE SECONDS        open FILE once and pread() it from offset 0 in
//                                a loop for SECONDS through the same fd, the
//                                way a monitoring daemon keeps its fd; prints
//                                counts of good reads and of each errno. Used
//                                to race rmmod against a reader holding an fd.
//   kit poll FILE MS             open FILE read-only, poll() it for every
//                                input/output event with a timeout of MS;
//                                prints the revents bits by name (or
//                                "timeout") and the milliseconds it took
//   kit readers N SECONDS FILE...
//                                N processes as uid/gid 65534, each reading
//                                every FILE in turn (open, read, close) as
//                                fast as it can for SECONDS; each checks
//                                that every total it reads never goes
//                                backwards; prints "reads R errors E
//                                backwards B" summed over the N. SIGTERM
//                                ends them early (the benchmark's runs).
//   kit beneath ROOT FILE...     as opencontainers/cgroups opens a cgroup's
//                                files: ROOT opened O_PATH, each FILE
//                                (relative) with openat2(RESOLVE_BENEATH |
//                                RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS),
//                                fstatfs() == CGROUP2_SUPER_MAGIC, then
//                                read; prints "ok N" (files read) or the
//                                first failure: the file, step and errno
// Exit status: 0 on success, 1 on a failed syscall (after printing it), 2 usage.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case EBUSY: return "EBUSY";
	case ENOMEM: return "ENOMEM";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EIO: return "EIO";
	case ENODEV: return "ENODEV";
	case ENOEXEC: return "ENOEXEC";
	case EFAULT: return "EFAULT";
	case ENOSPC: return "ENOSPC";
	case EAGAIN: return "EAGAIN";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EROFS: return "EROFS";
	case ECANCELED: return "ECANCELED";
	default: return "E?";
	}
}

static void perr(int e)
{
	printf("%s (%d: %s)\n", ename(e), e, strerror(e));
}

static long long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int do_snap(int n, char **files)
{
	// up to 64 files; a file may be long (debugfs psi_mod/cgroup_pressure)
	static char buf[64][65536];
	ssize_t len[64];
	int err = 0;
	if (n > 64) {
		fprintf(stderr, "kit snap: %d files, at most 64\n", n);
		return 2;
	}
	long long t = now_us();
	// read everything first, print afterwards: keeps the reads back to back
	for (int i = 0; i < n; i++) {
		int fd = open(files[i], O_RDONLY);
		ssize_t r = 0;
		len[i] = fd < 0 ? -1 : 0;
		while (fd >= 0 && len[i] < (ssize_t)sizeof(buf[i]) - 1 &&
		       (r = read(fd, buf[i] + len[i], sizeof(buf[i]) - 1 - len[i])) > 0)
			len[i] += r;
		if (r < 0)
			len[i] = -1;
		if (fd >= 0)
			close(fd);
	}
	printf("T %lld\n", t);
	for (int i = 0; i < n; i++) {
		if (len[i] < 0) {
			printf("%s ERROR\n", files[i]);
			err = 1;
			continue;
		}
		buf[i][len[i]] = 0;
		for (char *s = buf[i], *nl; *s; s = nl + 1) {
			nl = strchr(s, '\n');
			if (!nl) {
				printf("%s %s\n", files[i], s);
				break;
			}
			printf("%s %.*s\n", files[i], (int)(nl - s), s);
		}
	}
	return err;
}

static int do_load(const char *ko, int n, char **params)
{
	char p[4096] = "";
	for (int i = 0; i < n; i++) {
		if (i)
			strncat(p, " ", sizeof(p) - strlen(p) - 1);
		strncat(p, params[i], sizeof(p) - strlen(p) - 1);
	}
	int fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("open %s: ", ko);
		perr(errno);
		return 1;
	}
	if (syscall(SYS_finit_module, fd, p, 0) != 0) {
		perr(errno);
		return 1;
	}
	printf("ok\n");
	return 0;
}

static int do_write(const char *file, const char *s)
{
	char b[4096];
	snprintf(b, sizeof(b), "%s\n", s);
	int fd = open(file, O_WRONLY);
	if (fd < 0) {
		printf("open: ");
		perr(errno);
		return 1;
	}
	ssize_t r = write(fd, b, strlen(b));
	int e = errno;
	close(fd);
	if (r < 0) {
		perr(e);
		return 1;
	}
	printf("ok\n");
	return 0;
}

static int do_readas(const char *uid, const char *file)
{
	uid_t u = (uid_t)strtoul(uid, NULL, 0);
	char b[4096];
	if (setgroups(0, NULL) || setgid(u) || setuid(u)) {
		printf("drop privileges: ");
		perr(errno);
		return 1;
	}
	int fd = open(file, O_RDONLY);
	if (fd < 0) {
		perr(errno);
		return 1;
	}
	ssize_t r = read(fd, b, sizeof(b));
	if (r < 0) {
		perr(errno);
		return 1;
	}
	close(fd);
	printf("ok\n");
	return 0;
}

/* mkdir DIR as UID (and gid UID): a delegated cgroup's owner making one */
static int do_mkdiras(const char *uid, const char *dir)
{
	uid_t u = (uid_t)strtoul(uid, NULL, 0);
	if (setgroups(0, NULL) || setgid(u) || setuid(u)) {
		printf("drop privileges: ");
		perr(errno);
		return 1;
	}
	if (mkdir(dir, 0755)) {
		perr(errno);
		return 1;
	}
	printf("ok\n");
	return 0;
}

static int do_hold(const char *file, double secs)
{
	int fd = open(file, O_RDONLY);
	if (fd < 0) {
		printf("open: ");
		perr(errno);
		return 1;
	}
	long long end = now_us() + (long long)(secs * 1e6);
	unsigned long good = 0, bad = 0, empty = 0;
	int last_err = 0;
	char b[4096];
	while (now_us() < end) {
		ssize_t r = pread(fd, b, sizeof(b), 0);
		if (r > 0)
			good++;
		else if (r == 0)
			empty++;
		else {
			bad++;
			last_err = errno;
			usleep(1000);	// the file is gone; do not spin on errors
		}
	}
	printf("hold: %lu good reads, %lu empty, %lu errors", good, empty, bad);
	if (bad)
		printf(" (last %s)", ename(last_err));
	printf("\n");
	return 0;
}

static int do_poll(const char *file, int ms)
{
	static const struct { short bit; const char *name; } bits[] = {
		{ POLLIN, "IN" }, { POLLPRI, "PRI" }, { POLLOUT, "OUT" },
		{ POLLERR, "ERR" }, { POLLHUP, "HUP" }, { POLLNVAL, "NVAL" },
		{ POLLRDNORM, "RDNORM" }, { POLLWRNORM, "WRNORM" },
	};
	struct pollfd p = {
		.events = POLLIN | POLLPRI | POLLOUT | POLLRDNORM | POLLWRNORM,
	};
	const char *sep = "";
	long long t0;
	unsigned int i;
	int r;

	p.fd = open(file, O_RDONLY);
	if (p.fd < 0) {
		printf("open: ");
		perr(errno);
		return 1;
	}
	t0 = now_us();
	r = poll(&p, 1, ms);
	if (r < 0) {
		printf("poll: ");
		perr(errno);
		return 1;
	}
	if (r == 0)
		printf("timeout");
	for (i = 0; r > 0 && i < sizeof(bits) / sizeof(bits[0]); i++) {
		if (p.revents & bits[i].bit) {
			printf("%s%s", sep, bits[i].name);
			sep = " ";
		}
	}
	printf(" %lldms\n", (now_us() - t0) / 1000);
	close(p.fd);
	return 0;
}

/* The totals of a pressure file's lines, in order; how many. */
static int totals(const char *b, unsigned long long *t, int max)
{
	const char *p = b;
	int n = 0;

	while (n < max && (p = strstr(p, "total=")) != NULL) {
		p += 6;
		t[n++] = strtoull(p, NULL, 10);
	}
	return n;
}

#define READERS_MAX_FILES	8
#define READERS_MAX		256

static pid_t readers[READERS_MAX];
static int nreaders;
static volatile sig_atomic_t readers_stop;

static void readers_term(int sig)
{
	int i;

	(void)sig;
	for (i = 0; i < nreaders; i++)
		kill(readers[i], SIGTERM);
}

static void reader_term(int sig)
{
	(void)sig;
	readers_stop = 1;
}

static int do_readers(int n, double secs, int nf, char **files)
{
	unsigned long long reads = 0, errs = 0, back = 0;
	int fds[2], i;
	pid_t pid;

	if (nf > READERS_MAX_FILES || n > READERS_MAX || pipe(fds))
		return 2;
	signal(SIGTERM, readers_term);
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid > 0)
			readers[nreaders++] = pid;
		if (pid == 0) {
			unsigned long long last[READERS_MAX_FILES][2] = { { 0 } };
			unsigned long long r = 0, e = 0, bk = 0, t[2];
			long long end = now_us() + (long long)(secs * 1e6);
			char b[512], line[96];
			int f, k, m, fd;
			ssize_t len;

			signal(SIGTERM, reader_term);
			if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
				_exit(1);
			while (now_us() < end && !readers_stop) {
				for (f = 0; f < nf; f++) {
					fd = open(files[f], O_RDONLY);
					len = fd < 0 ? -1 : read(fd, b, sizeof(b) - 1);
					if (fd >= 0)
						close(fd);
					if (len <= 0) {
						e++;
						continue;
					}
					b[len] = 0;
					r++;
					m = totals(b, t, 2);
					for (k = 0; k < m; k++) {
						bk += t[k] < last[f][k];
						last[f][k] = t[k];
					}
				}
			}
			len = snprintf(line, sizeof(line), "%llu %llu %llu\n", r, e, bk);
			if (write(fds[1], line, len) != len)
				_exit(1);
			_exit(0);
		}
	}
	close(fds[1]);
	{
		FILE *in = fdopen(fds[0], "r");
		unsigned long long r, e, bk;

		while (in && fscanf(in, "%llu %llu %llu", &r, &e, &bk) == 3) {
			reads += r;
			errs += e;
			back += bk;
		}
	}
	while (wait(NULL) > 0 || errno == EINTR)
		;
	printf("reads %llu errors %llu backwards %llu\n", reads, errs, back);
	return 0;
}

/* kit beneath: openat2() beneath a cgroup2 root, as runc's cgroup library */
static int do_beneath(const char *root, int n, char **files)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV |
			   RESOLVE_NO_MAGICLINKS,
	};
	int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), i;
	char b[4096];

	if (dfd < 0) {
		printf("%s open: ", root);
		perr(errno);
		return 1;
	}
	for (i = 0; i < n; i++) {
		struct statfs st;
		int fd = syscall(SYS_openat2, dfd, files[i], &how, sizeof(how));
		ssize_t r;

		if (fd < 0) {
			printf("%s openat2: ", files[i]);
			perr(errno);
			return 1;
		}
		if (fstatfs(fd, &st) || st.f_type != CGROUP2_SUPER_MAGIC) {
			printf("%s fstatfs: not on cgroup2 (type 0x%lx)\n", files[i],
			       (unsigned long)st.f_type);
			return 1;
		}
		r = read(fd, b, sizeof(b));
		if (r <= 0) {
			printf("%s read: ", files[i]);
			perr(r ? errno : ENODATA);
			return 1;
		}
		close(fd);
	}
	printf("ok %d\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "now")) {
		printf("%lld\n", now_us());
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "snap"))
		return do_snap(argc - 2, argv + 2);
	if (argc >= 3 && !strcmp(argv[1], "load"))
		return do_load(argv[2], argc - 3, argv + 3);
	if (argc == 4 && !strcmp(argv[1], "write"))
		return do_write(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "readas"))
		return do_readas(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "mkdiras"))
		return do_mkdiras(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "hold"))
		return do_hold(argv[2], atof(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "poll"))
		return do_poll(argv[2], atoi(argv[3]));
	if (argc >= 5 && !strcmp(argv[1], "readers"))
		return do_readers(atoi(argv[2]), atof(argv[3]), argc - 4, argv + 4);
	if (argc >= 4 && !strcmp(argv[1], "beneath"))
		return do_beneath(argv[2], argc - 3, argv + 3);
	fprintf(stderr, "usage: kit now | snap FILE... | load KO [PARAM...] | write FILE STRING | readas UID FILE | mkdiras UID DIR | hold FILE SECONDS | poll FILE MS | readers N SECONDS FILE... | beneath ROOT FILE...\n");
	return 2;
}
