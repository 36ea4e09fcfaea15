// fuzz: the reliability suite's guest tools (static, run in the test VM).
//
//   fuzz write SEED COUNT ENABLE DIR
//        COUNT writes of hostile input, seeded, spread over DIR/{cpu,io,memory}
//        and the ENABLE parameter file: random bytes, near-miss booleans,
//        embedded NULs, huge buffers (up to 1 MiB), a write split in pieces,
//        pwrite at an offset, a bad user pointer, zero length, and now and then
//        a valid boolean so the module is switched on and off under the fuzz.
//        Every result is checked against what the interface promises:
//        pressure files take only a trigger definition (the kernel's rules:
//        an empty or unparsable write is EINVAL, a bad pointer EFAULT; a
//        write that happens to define a trigger is accepted whole); enable
//        takes exactly the module's booleans (its parser is mirrored below,
//        with the string cut at the first NUL as the kernel hands it over)
//        and refuses the rest with EINVAL (E2BIG/EFAULT where sysfs answers
//        before the module); after each accepted value enable reads back Y/N
//        accordingly and the files exist iff Y. /dev/kmsg is drained after
//        every write: each EINVAL must have produced exactly one
//        "psi_mod: enable=" line, and no line may look like a kernel report.
//   fuzz watch STOPFILE DIR
//        until STOPFILE exists: hold an fd on each of DIR/{cpu,io,memory} and
//        pread it from offset 0; every good read must be exactly the kernel's
//        two lines, no avg above 100.00, cpu full all zeros, totals never
//        smaller than the previous read through the same fd (one fd lives
//        within one load: after unload or enable=0 it reads EIO and is
//        reopened, which starts a new baseline).
//   fuzz quiet SAMPLES
//        SAMPLES times: read /sys/kernel/debug/psi_mod/state, then count the
//        tasks in state R in /proc/*/task/*/stat; print the sums. The state
//        "running" count includes queued tasks like the R state does.
//   fuzz forks STOPFILE
//        until STOPFILE exists: fork children that exit at once, every 4th
//        execs /bin/true, every 8th creates a thread that exits; prints counts.
//   fuzz as UID read FILE | write FILE STRING | load KO | unload NAME
//        as UID/GID (no groups): the syscall, "ok" or the errno name.
//   fuzz params KO
//        loads KO with each hostile parameter string (long values, bytes the
//        shell cannot pass): each must fail with EINVAL, leave no module
//        loaded, and add only lines naming psi_mod to the kernel log.
// Exit status: 0 if every check held, 1 otherwise, 2 on usage error.
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EIO: return "EIO";
	case EFAULT: return "EFAULT";
	case E2BIG: return "E2BIG";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EEXIST: return "EEXIST";
	case EBUSY: return "EBUSY";
	case ENOMEM: return "ENOMEM";
	case ESPIPE: return "ESPIPE";
	case ENOEXEC: return "ENOEXEC";
	default: return "E?";
	}
}

static uint64_t rs;
static uint64_t rnd(void)
{
	// xorshift64*: reproducible from the seed printed in the output
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 2685821657736338717ULL;
}

// ---- kernel log: drain /dev/kmsg, classify new records
static int kmsg_fd = -1;
static unsigned long km_enable_lines, km_psi_lines, km_other, km_bad, km_lost;
static char km_first_bad[256];

static int is_report(const char *m)
{
	static const char *pat[] = { "WARNING", "BUG", "Oops", "lockdep", "KASAN",
		"underflow", "inconsistent", "kmemleak", "circular locking",
		"sleeping function", "Call Trace", NULL };
	for (int i = 0; pat[i]; i++)
		if (strstr(m, pat[i]))
			return 1;
	return 0;
}

static void kmsg_open(void)
{
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);	// only what happens from now on
}

static void kmsg_drain(void)
{
	char b[8192];
	if (kmsg_fd < 0)
		return;
	for (;;) {
		ssize_t r = read(kmsg_fd, b, sizeof(b) - 1);
		if (r < 0) {
			if (errno == EPIPE) {	// records overwritten before we read them
				km_lost++;
				continue;
			}
			return;	// EAGAIN: nothing new
		}
		b[r] = 0;
		char *msg = strchr(b, ';');
		msg = msg ? msg + 1 : b;
		char *nl = strchr(msg, '\n');
		if (nl)
			*nl = 0;
		if (is_report(msg)) {
			if (!km_bad++)
				snprintf(km_first_bad, sizeof(km_first_bad), "%.200s", msg);
			printf("kmsg report: %s\n", msg);
		} else if (!strncmp(msg, "psi_mod: enable=\"", 17)) {
			km_enable_lines++;
		} else if (strstr(msg, "psi_mod")) {
			km_psi_lines++;
		} else {
			km_other++;
		}
	}
}

// ---- the module's boolean parser, mirrored (src/psi_mod.c psim_parse_bool):
// one trailing newline dropped, then an exact case-insensitive match
static int parse_bool(const char *v, int *on)
{
	static const char *yes[] = { "1", "y", "yes", "on", "true" };
	static const char *no[] = { "0", "n", "no", "off", "false" };
	size_t len = strlen(v);
	if (len && v[len - 1] == '\n')
		len--;
	for (int i = 0; i < 5; i++) {
		if (len == strlen(yes[i]) && !strncasecmp(v, yes[i], len)) {
			*on = 1;
			return 0;
		}
		if (len == strlen(no[i]) && !strncasecmp(v, no[i], len)) {
			*on = 0;
			return 0;
		}
	}
	return -1;
}

static int read_enable(const char *path)
{
	char b[8] = "";
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (r < 1)
		return -1;
	return b[0] == 'Y' ? 1 : b[0] == 'N' ? 0 : -1;
}

static int files_state(const char *dir)	// 1 all present, 0 all absent, -1 mixed
{
	static const char *f[] = { "cpu", "io", "memory" };
	char p[512];
	int n = 0;
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, f[i]);
		n += access(p, F_OK) == 0;
	}
	return n == 3 ? 1 : n == 0 ? 0 : -1;
}

#define POOL (1 << 20)
static unsigned char *pool;
static unsigned long violations;
static void violation(const char *what, size_t len, ssize_t r, int e)
{
	if (violations++ < 10)
		printf("violation: %s (len %zu): returned %zd %s\n", what, len, r,
		       r < 0 ? ename(e) : "");
}

// one hostile buffer into b (size cap), its length returned
static size_t gen(char *b, size_t cap, int *kind)
{
	static const char *valid[] = { "0", "1", "y", "n", "Y", "N", "yes", "no",
		"on", "off", "true", "false", "TRUE", "Off", "1\n", "0\n", "yEs\n" };
	static const char *near[] = { "2", "-1", "10", "01", "yess", "o", "t", " 1",
		"1 ", "1\n\n", "0x1", "enable=1", "", "\n", "\r1", "1\r", "nO0",
		"\xef\xbc\x91", "on\t", "\\x31", "%s%s%n", "1\0junk", "off\0" };
	size_t len;
	int k = (int)(rnd() % 100);
	if (k < 6) {		// a valid boolean: switches the module
		const char *s = valid[rnd() % (sizeof(valid) / sizeof(*valid))];
		len = strlen(s);
		memcpy(b, s, len);
		*kind = 0;
	} else if (k < 25) {	// near misses (some carry an embedded NUL)
		int i = (int)(rnd() % (sizeof(near) / sizeof(*near)));
		const char *s = near[i];
		len = strlen(s);
		if (i >= 21)	// the NUL entries: keep the bytes after the NUL
			len += 1 + strlen(s + len + 1);
		memcpy(b, s, len);
		*kind = 1;
	} else if (k < 70) {	// random bytes
		len = 1 + rnd() % 64;
		for (size_t i = 0; i < len; i++)
			b[i] = (char)rnd();
		*kind = 2;
	} else if (k < 85) {	// long printable
		len = 1 + rnd() % 5000;
		for (size_t i = 0; i < len; i++)
			b[i] = (char)(' ' + rnd() % 95);
		*kind = 3;
	} else {		// huge, from the random pool
		static const size_t sz[] = { 4095, 4096, 4097, 8192, 65536, POOL };
		len = sz[rnd() % 6];
		size_t off = rnd() % (POOL - len + 1);
		memcpy(b, pool + off, len);
		*kind = 4;
	}
	if (len > cap)
		len = cap;
	return len;
}


/*
 * A pressure-file write as the kernel's psi_write() answers it: EINVAL for
 * an empty or unparsable one, EFAULT for a bad pointer, EBUSY for a second
 * trigger on a descriptor, or the whole length for a trigger definition.
 */
static int psi_write_ok(ssize_t r, int e, size_t len)
{
	if (r < 0)
		return e == EINVAL || e == EFAULT || e == EBUSY;
	return (size_t)r == len;
}

static int do_write_fuzz(uint64_t seed, long count, const char *enable, const char *dir)
{
	static const char *f[] = { "cpu", "io", "memory" };
	char path[512];
	char *b = malloc(POOL + 1);
	unsigned long psi_w = 0, psi_refused = 0, psi_espipe = 0, psi_zero = 0, psi_absent = 0;
	unsigned long en_w = 0, en_ok = 0, en_einval = 0, en_other = 0, toggles = 0;
	unsigned long e2big = 0, efault = 0, pieces = 0, pwrites = 0, badptr = 0;
	int state = read_enable(enable);

	pool = malloc(POOL);
	if (!b || !pool)
		return 2;
	rs = seed ? seed : 1;
	for (size_t i = 0; i < POOL; i++)
		pool[i] = (unsigned char)rnd();
	kmsg_open();
	if (kmsg_fd < 0)
		printf("warning: no /dev/kmsg: log not checked\n");
	if (state < 0) {
		printf("enable unreadable at start\n");
		return 1;
	}
	for (long it = 0; it < count; it++) {
		int target = (int)(rnd() % 4);	// 0..2 pressure file, 3 enable
		int kind, mode = (int)(rnd() % 16);
		size_t len = gen(b, POOL, &kind);
		int fd;
		ssize_t r;
		int e;

		if (target < 3)
			snprintf(path, sizeof(path), "%s/%s", dir, f[target]);
		else
			snprintf(path, sizeof(path), "%s", enable);
		fd = open(path, O_WRONLY);
		if (fd < 0) {
			if (target < 3 && errno == ENOENT && state == 0) {
				psi_absent++;	// enable=N: no files, as intended
				continue;
			}
			violation("open", len, -1, errno);
			continue;
		}
		if (mode == 0) {	// zero-length write
			len = 0;
			r = write(fd, b, 0);
		} else if (mode == 1) {	// bad user pointer
			badptr++;
			// raw syscall: the libc wrapper is annotated to read the buffer
			r = syscall(SYS_write, fd, (void *)8, len ? len : 1);
			len = len ? len : 1;
		} else if (mode == 2 && len > 1) {	// pwrite at an offset
			pwrites++;
			r = pwrite(fd, b, len, (off_t)(rnd() % 100000));
		} else if (mode == 3 && len > 1) {	// in pieces: first piece here
			pieces++;
			size_t cut = 1 + rnd() % (len - 1);
			r = write(fd, b, cut);
			e = errno;
			// the first piece is its own write: judge it, then the rest
			if (target < 3) {
				if (!psi_write_ok(r, e, cut))
					violation("pressure piece", cut, r, e);
			} else {
				char t = b[cut];
				int on;
				b[cut] = 0;
				int v = parse_bool(b, &on) == 0;
				b[cut] = t;
				if (v && r == (ssize_t)cut) {
					if (on != state)
						toggles++;
					state = on;
				} else if (r < 0 && (e == EINVAL || e == E2BIG)) {
					if (e == EINVAL)
						en_einval++;
				} else {
					violation("enable piece", cut, r, e);
				}
			}
			memmove(b, b + cut, len - cut);
			len -= cut;
			r = write(fd, b, len);
		} else {
			r = write(fd, b, len);
		}
		e = errno;
		close(fd);

		if (target < 3) {
			psi_w++;
			if (r < 0 && e == EINVAL)
				psi_refused++;
			else if (r < 0 && e == EFAULT && mode == 1)
				psi_refused++;
			else if (r >= 0 && psi_write_ok(r, e, len))
				psi_refused++;	// a trigger it happened to define
			else if (r < 0 && e == ESPIPE && mode == 2 && len > 1)
				psi_espipe++;	// seq_file fds refuse pwrite in the VFS, as the kernel's do
			else if (len == 0 && r == 0)
				psi_zero++;
			else
				violation("pressure file write accepted or odd error", len, r, e);
		} else {
			int on = -1, v;
			en_w++;
			if (mode == 1) {
				v = 0;	// the kernel cannot read it: EFAULT
			} else {
				char t = b[len < 4096 ? len : 4096];
				b[len < 4096 ? len : 4096] = 0;	// sysfs hands over <= a page
				v = parse_bool(b, &on) == 0;
				b[len < 4096 ? len : 4096] = t;
			}
			if (len == 0 && r == 0) {
				;	// sysfs ignores an empty write
			} else if (r >= 0 && v) {
				en_ok++;
				if (on != state)
					toggles++;
				state = on;
			} else if (r < 0 && e == EINVAL && !v) {
				en_einval++;
			} else if (r < 0 && e == E2BIG && len > 4095) {
				e2big++;
			} else if (r < 0 && e == EFAULT && mode == 1) {
				efault++;
			} else {
				en_other++;
				violation("enable write", len, r, e);
			}
			int now = read_enable(enable);
			if (now != state) {
				violation("enable reads back the wrong value", len, now, 0);
				state = now;
			}
		}
		if (it % 64 == 0 || target == 3) {
			int fs = files_state(dir);
			if (fs != state)
				violation("files present != enable", 0, fs, 0);
		}
		kmsg_drain();
	}
	kmsg_drain();
	int fin = read_enable(enable);
	printf("fuzz: seed %llu, %ld writes: pressure files %lu (refused EINVAL/EFAULT or a trigger %lu, pwrite ESPIPE %lu, empty %lu, skipped while off %lu); enable %lu (accepted %lu, EINVAL %lu, E2BIG %lu, EFAULT %lu, other %lu; %lu on/off switches); %lu split writes, %lu pwrites, %lu bad pointers; final enable=%c files=%d\n",
	       (unsigned long long)seed, count, psi_w, psi_refused, psi_espipe, psi_zero, psi_absent,
	       en_w, en_ok, en_einval, e2big, efault, en_other, toggles, pieces, pwrites,
	       badptr, fin == 1 ? 'Y' : fin == 0 ? 'N' : '?', files_state(dir));
	printf("kmsg: %lu enable lines (want %lu), %lu other psi_mod lines, %lu other lines, %lu reports, %lu lost%s%s\n",
	       km_enable_lines, en_einval, km_psi_lines, km_other, km_bad, km_lost,
	       km_bad ? "; first: " : "", km_first_bad);
	int ok = violations == 0 && fin >= 0 && files_state(dir) == fin && km_bad == 0 &&
		 km_lost == 0 && km_enable_lines == en_einval && km_psi_lines <= 1;
	printf("violations %lu: %s\n", violations, ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}

// ---- watch: sanity of every read through held fds
static int check_content(const char *b, int cpu, unsigned long long tot[2], char *why, size_t wl)
{
	static const char *k[] = { "some", "full" };
	const char *p = b;
	for (int l = 0; l < 2; l++) {
		char name[8];
		unsigned a[3][2];
		unsigned long long t;
		int n, used = 0;
		n = sscanf(p, "%4s avg10=%u.%2u avg60=%u.%2u avg300=%u.%2u total=%llu%n", name,
			   &a[0][0], &a[0][1], &a[1][0], &a[1][1], &a[2][0], &a[2][1], &t, &used);
		if (n != 8 || strcmp(name, k[l]) || p[used] != '\n' ||
		    p[used - 1] < '0' || p[used - 1] > '9') {
			snprintf(why, wl, "bad line %d: %.80s", l + 1, p);
			return -1;
		}
		for (int i = 0; i < 3; i++) {
			if (a[i][0] * 100 + a[i][1] > 10000) {
				snprintf(why, wl, "avg above 100: %.80s", p);
				return -1;
			}
		}
		if (cpu && l == 1 && (t || a[0][0] || a[0][1] || a[1][0] || a[1][1] ||
				      a[2][0] || a[2][1])) {
			snprintf(why, wl, "cpu full not zero: %.80s", p);
			return -1;
		}
		tot[l] = t;
		p += used + 1;
	}
	if (*p) {
		snprintf(why, wl, "trailing bytes: %.40s", p);
		return -1;
	}
	return 0;
}

static int do_watch(const char *stop, const char *dir)
{
	static const char *f[] = { "cpu", "io", "memory" };
	int fd[3] = { -1, -1, -1 };
	unsigned long long last[3][2];
	unsigned long good = 0, errs = 0, opens = 0, bad = 0;
	char b[4096], why[200], path[512];

	while (access(stop, F_OK) != 0) {
		for (int i = 0; i < 3; i++) {
			if (fd[i] < 0) {
				snprintf(path, sizeof(path), "%s/%s", dir, f[i]);
				fd[i] = open(path, O_RDONLY);
				if (fd[i] < 0)
					continue;
				opens++;
				last[i][0] = last[i][1] = 0;
			}
			ssize_t r = pread(fd[i], b, sizeof(b) - 1, 0);
			if (r < 0) {	// unloaded or disabled: this fd is dead
				errs++;
				close(fd[i]);
				fd[i] = -1;
				continue;
			}
			b[r] = 0;
			unsigned long long t[2];
			if (check_content(b, i == 0, t, why, sizeof(why))) {
				if (bad++ < 5)
					printf("watch %s: %s\n", f[i], why);
				continue;
			}
			for (int l = 0; l < 2; l++) {
				if (t[l] < last[i][l] && bad++ < 5)
					printf("watch %s: total went back %llu -> %llu\n", f[i],
					       last[i][l], t[l]);
				last[i][l] = t[l];
			}
			good++;
		}
		usleep(2000);
	}
	printf("watch: %lu good reads, %lu opens, %lu dead-fd reads, %lu bad\n", good, opens, errs, bad);
	return bad ? 1 : 0;
}

// ---- quiet: debugfs state against the tasks really runnable
static int do_quiet(int samples)
{
	for (int s = 0; s < samples; s++) {
		char b[8192];
		int fd = open("/sys/kernel/debug/psi_mod/state", O_RDONLY);
		if (fd < 0) {
			printf("quiet: no state file (%s)\n", ename(errno));
			return 1;
		}
		ssize_t r = read(fd, b, sizeof(b) - 1);
		close(fd);
		if (r <= 0)
			return 1;
		b[r] = 0;
		unsigned long run = 0, io = 0, mem = 0, uf = 0, v;
		for (char *p = b; (p = strstr(p, "cpu")); p++) {
			char *q;
			if ((q = strstr(p, "iowait=")) && sscanf(q, "iowait=%lu", &v) == 1)
				io += v;
			if ((q = strstr(p, "memstall=")) && sscanf(q, "memstall=%lu", &v) == 1)
				mem += v;
			if ((q = strstr(p, " running=")) && sscanf(q, " running=%lu", &v) == 1)
				run += v;
			if ((q = strstr(p, "underflows=")) && sscanf(q, "underflows=%lu", &v) == 1)
				uf += v;
			p = strchr(p, '\n');
			if (!p)
				break;
		}
		// tasks in R (runnable or running) right after, threads included
		unsigned long nr = 0;
		DIR *pd = opendir("/proc");
		struct dirent *de;
		while (pd && (de = readdir(pd))) {
			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			char tp[300];
			snprintf(tp, sizeof(tp), "/proc/%s/task", de->d_name);
			DIR *td = opendir(tp);
			struct dirent *te;
			while (td && (te = readdir(td))) {
				if (!isdigit((unsigned char)te->d_name[0]))
					continue;
				char sp[600], sb[512];
				snprintf(sp, sizeof(sp), "%s/%s/stat", tp, te->d_name);
				int sf = open(sp, O_RDONLY);
				if (sf < 0)
					continue;
				ssize_t n = read(sf, sb, sizeof(sb) - 1);
				close(sf);
				if (n <= 0)
					continue;
				sb[n] = 0;
				char *rp = strrchr(sb, ')');
				if (rp && rp[1] == ' ' && rp[2] == 'R')
					nr++;
			}
			if (td)
				closedir(td);
		}
		if (pd)
			closedir(pd);
		printf("sample %d: running=%lu R-tasks=%lu iowait=%lu memstall=%lu underflows=%lu\n",
		       s, run, nr, io, mem, uf);
		usleep(300000);
	}
	return 0;
}

// ---- forks: short-lived tasks by the thousand
static void *thr_exit(void *a)
{
	return a;
}

static int do_forks(const char *stop)
{
	unsigned long forks = 0, execs = 0, threads = 0, bad = 0;
	while (access(stop, F_OK) != 0) {
		pid_t p = fork();
		if (p == 0) {
			if (forks % 8 == 0) {
				pthread_t t;
				if (!pthread_create(&t, NULL, thr_exit, NULL))
					pthread_join(t, NULL);
			}
			if (forks % 4 == 0) {
				char *argv[] = { "true", NULL };
				execv("/bin/true", argv);
			}
			_exit(0);
		}
		if (p < 0) {
			bad++;
			usleep(1000);
			continue;
		}
		int st;
		waitpid(p, &st, 0);
		forks++;
		if (forks % 8 == 1)
			threads++;
		if (forks % 4 == 1)
			execs++;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	printf("forks: %lu tasks (%lu exec'd, %lu with a thread), %lu failures\n", forks, execs, threads, bad);
	return bad ? 1 : 0;
}

// ---- as: unprivileged attempts
static int do_as(int argc, char **argv)
{
	uid_t u = (uid_t)strtoul(argv[0], NULL, 0);
	const char *op = argv[1];
	long r;
	if (setgroups(0, NULL) || setgid(u) || setuid(u)) {
		printf("drop privileges: %s\n", ename(errno));
		return 1;
	}
	if (!strcmp(op, "read") && argc == 3) {
		char b[4096];
		int fd = open(argv[2], O_RDONLY);
		r = fd < 0 ? -1 : read(fd, b, sizeof(b));
	} else if (!strcmp(op, "write") && argc == 4) {
		int fd = open(argv[2], O_WRONLY);
		r = fd < 0 ? -1 : write(fd, argv[3], strlen(argv[3]));
	} else if (!strcmp(op, "load") && argc == 3) {
		int fd = open(argv[2], O_RDONLY);
		r = fd < 0 ? -1 : syscall(SYS_finit_module, fd, "", 0);
	} else if (!strcmp(op, "unload") && argc == 3) {
		r = syscall(SYS_delete_module, argv[2], O_NONBLOCK);
	} else {
		return 2;
	}
	if (r < 0) {
		printf("%s\n", ename(errno));
		return 1;
	}
	printf("ok\n");
	return 0;
}

// ---- params: hostile module parameters at load time
static int do_params(const char *ko)
{
	static char longv[3][5000];
	struct {
		const char *label;
		const char *p;
	} c[16];
	int n = 0, fails = 0;

	memset(longv[0], '1', 4096);
	memcpy(longv[0], "enable=", 7);		// enable=111...: 4 KiB value
	memset(longv[1], 'a', 4096);
	memcpy(longv[1], "proc_dir=", 9);	// proc_dir=aaa...: 4 KiB value
	memset(longv[2], 'b', 9 + 256);
	memcpy(longv[2], "proc_dir=", 9);	// 256 characters
	c[n].label = "enable=2"; c[n++].p = "enable=2";
	c[n].label = "enable="; c[n++].p = "enable=";
	c[n].label = "enable (no value)"; c[n++].p = "enable";
	c[n].label = "enable=<4KiB>"; c[n++].p = longv[0];
	c[n].label = "enable=1\\x01"; c[n++].p = "enable=1\x01";
	c[n].label = "proc_dir=a/b"; c[n++].p = "proc_dir=a/b";
	c[n].label = "proc_dir=/"; c[n++].p = "proc_dir=/";
	c[n].label = "proc_dir=.."; c[n++].p = "proc_dir=..";
	c[n].label = "proc_dir="; c[n++].p = "proc_dir=";
	c[n].label = "proc_dir=<256 chars>"; c[n++].p = longv[2];
	c[n].label = "proc_dir=<4KiB>"; c[n++].p = longv[1];
	c[n].label = "proc_dir=a\\x01b"; c[n++].p = "proc_dir=a\x01b";
	c[n].label = "proc_dir=a\\xffb"; c[n++].p = "proc_dir=a\xff" "b";
	c[n].label = "proc_dir=\"a b\""; c[n++].p = "proc_dir=\"a b\"";
	c[n].label = "proc_dir=12345"; c[n++].p = "proc_dir=12345";
	kmsg_open();
	for (int i = 0; i < n; i++) {
		km_enable_lines = km_psi_lines = km_other = km_bad = 0;
		int fd = open(ko, O_RDONLY);
		long r = fd < 0 ? -1 : syscall(SYS_finit_module, fd, c[i].p, 0);
		int e = errno;
		if (fd >= 0)
			close(fd);
		int loaded = access("/sys/module/psi_mod", F_OK) == 0;
		if (loaded)
			syscall(SYS_delete_module, "psi_mod", O_NONBLOCK);
		usleep(20000);
		kmsg_drain();
		unsigned long lines = km_enable_lines + km_psi_lines;
		int ok = r < 0 && e == EINVAL && !loaded && km_bad == 0 && km_other == 0 && lines >= 1;
		printf("%s %s: %s, %lu psi_mod log lines, %lu other, %lu reports%s\n",
		       ok ? "ok" : "bad", c[i].label, r < 0 ? ename(e) : "loaded", lines,
		       km_other, km_bad, loaded ? ", module was loaded" : "");
		fails += !ok;
	}
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && !strcmp(argv[1], "write"))
		return do_write_fuzz(strtoull(argv[2], NULL, 0), atol(argv[3]), argv[4], argv[5]);
	if (argc == 4 && !strcmp(argv[1], "watch"))
		return do_watch(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "quiet"))
		return do_quiet(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "forks"))
		return do_forks(argv[2]);
	if (argc >= 4 && !strcmp(argv[1], "as"))
		return do_as(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "params"))
		return do_params(argv[2]);
	fprintf(stderr, "usage: fuzz write SEED COUNT ENABLE DIR | watch STOPFILE DIR | quiet N | forks STOPFILE | as UID OP ARGS | params KO\n");
	return 2;
}
