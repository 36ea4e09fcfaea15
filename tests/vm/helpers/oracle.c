// oracle: per-task scheduler and delay-accounting counters, the reference
// psi_mod's totals are measured against without any kernel PSI
// (tests/vm/oracle.sh, docs/accuracy.md "Oracle").
//
//   oracle task PID...           print one "P" line per PID (below), now
//   oracle measure SECONDS FILE... [-- PID...]
//                                freeze the PIDs (SIGSTOP, then wait until
//                                each is stopped), read every FILE and the
//                                PIDs' counters back to back, resume them
//                                (SIGCONT); sleep SECONDS; the same again.
//                                Prints the differences:
//     W <wall_us>                between the two reads of the FILEs
//     F <file> <some_us> <full_us>   growth of the "total=" of each line
//     P <pid> <run_delay_ns> <pcount> <cpu_delay_ns> <cpu_count> <blkio_delay_ns> <blkio_count>
//     V <taskstats version> <taskstats length>
//   run_delay and pcount: /proc/<pid>/schedstat fields 2 and 3 (the wait
//   for a CPU while runnable, and how many times the task ran); the other
//   four from taskstats (delay accounting: boot with `delayacct`), asked
//   for over generic netlink (TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_PID).
//
// Why freeze: a wait is added to run_delay when it ends (the switch-in) and
// to blkio_delay when the IO wakeup comes, while a pressure total read in
// the middle of a wait already holds its part. A task stopped by SIGSTOP has
// finished its wait (it had to run to stop) and has none open, so both sides
// are read at a moment where they count the same waits; a CPU whose tasks
// are all stopped is idle and adds nothing while the files are read.
//
// Run it on the CPU that is not measured (taskset -c 0): its own waits
// then are not the measured CPU's.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#define MAXP 8
#define MAXF 8

struct tcount {
	unsigned long long rd, pc, cpud, cpuc, blkd, blkc;
};

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void die(const char *what)
{
	fprintf(stderr, "oracle: %s: %s\n", what, strerror(errno));
	exit(1);
}

// --- generic netlink, by hand: a request is nlmsghdr + genlmsghdr + one
// attribute; an answer is the same with nested attributes
static int nl_fd = -1;
static int ts_family;
static unsigned ts_version, ts_len;

struct req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char attrs[64];
};

static void nl_send(int type, int cmd, int attr, const void *val, int len)
{
	struct req r;
	struct nlattr *a = (struct nlattr *)r.attrs;
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };

	memset(&r, 0, sizeof(r));
	a->nla_type = attr;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, val, len);
	r.n.nlmsg_type = type;
	r.n.nlmsg_flags = NLM_F_REQUEST;
	r.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + NLA_ALIGN(a->nla_len);
	r.g.cmd = cmd;
	r.g.version = 1;
	if (sendto(nl_fd, &r, r.n.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		die("netlink send");
}

// receive one answer into buf; returns the attributes after the genl header
static char *nl_recv(char *buf, int size, int *alen)
{
	int n = recv(nl_fd, buf, size, 0);
	struct nlmsghdr *h = (struct nlmsghdr *)buf;

	if (n < 0)
		die("netlink recv");
	if (!NLMSG_OK(h, (unsigned)n)) {
		fprintf(stderr, "oracle: short netlink answer (%d bytes)\n", n);
		exit(1);
	}
	if (h->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *e = NLMSG_DATA(h);

		errno = -e->error;
		die("netlink request");
	}
	*alen = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	return (char *)NLMSG_DATA(h) + GENL_HDRLEN;
}

// find attribute TYPE among LEN bytes of attributes at P
static struct nlattr *nla_find(char *p, int len, int type)
{
	while (len >= NLA_HDRLEN) {
		struct nlattr *a = (struct nlattr *)p;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return NULL;
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		len -= NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

static void nl_open(void)
{
	static char buf[8192];
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	struct nlattr *a;
	char *p;
	int len;

	nl_fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (nl_fd < 0)
		die("socket(NETLINK_GENERIC)");
	if (bind(nl_fd, (struct sockaddr *)&me, sizeof(me)) < 0)
		die("bind");
	nl_send(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME,
		TASKSTATS_GENL_NAME, sizeof(TASKSTATS_GENL_NAME));
	p = nl_recv(buf, sizeof(buf), &len);
	a = nla_find(p, len, CTRL_ATTR_FAMILY_ID);
	if (!a) {
		fprintf(stderr, "oracle: no %s family id\n", TASKSTATS_GENL_NAME);
		exit(1);
	}
	ts_family = *(unsigned short *)((char *)a + NLA_HDRLEN);
}

// the four delay-accounting counters of one task (a thread: ATTR_PID)
static void taskstats_of(int pid, struct tcount *c)
{
	static char buf[8192];
	struct nlattr *agg, *st;
	struct taskstats t;
	__u32 v = pid;
	char *p;
	int len, slen;

	nl_send(ts_family, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_PID, &v, sizeof(v));
	p = nl_recv(buf, sizeof(buf), &len);
	agg = nla_find(p, len, TASKSTATS_TYPE_AGGR_PID);
	st = agg ? nla_find((char *)agg + NLA_HDRLEN, agg->nla_len - NLA_HDRLEN, TASKSTATS_TYPE_STATS) : NULL;
	if (!st) {
		fprintf(stderr, "oracle: no taskstats in the answer for %d\n", pid);
		exit(1);
	}
	// the kernel's struct may be shorter or longer than this header's: the
	// fields used here are version 1's, at the same offsets in every version
	slen = st->nla_len - NLA_HDRLEN;
	if (slen < (int)(offsetof(struct taskstats, blkio_delay_total) + 8)) {
		fprintf(stderr, "oracle: taskstats of %d bytes is too short\n", slen);
		exit(1);
	}
	memset(&t, 0, sizeof(t));
	memcpy(&t, (char *)st + NLA_HDRLEN, slen < (int)sizeof(t) ? slen : (int)sizeof(t));
	ts_version = t.version;
	ts_len = slen;
	c->cpuc = t.cpu_count;
	c->cpud = t.cpu_delay_total;
	c->blkc = t.blkio_count;
	c->blkd = t.blkio_delay_total;
}

static void schedstat_of(int pid, struct tcount *c)
{
	char path[64];
	unsigned long long run;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	f = fopen(path, "r");
	if (!f)
		die(path);
	if (fscanf(f, "%llu %llu %llu", &run, &c->rd, &c->pc) != 3) {
		fprintf(stderr, "oracle: cannot parse %s\n", path);
		exit(1);
	}
	fclose(f);
}

static char task_state(int pid)
{
	char path[64], buf[512], *p;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');	// the name may hold spaces and parentheses
	return p && p[1] == ' ' ? p[2] : 0;
}

// --- freeze, read, resume
static void freeze(int n, int *pids)
{
	struct timespec ms = { 0, 1000000 };
	long long end = now_us() + 5000000;

	for (int i = 0; i < n; i++)
		if (kill(pids[i], SIGSTOP))
			die("SIGSTOP");
	for (int i = 0; i < n; i++) {
		while (task_state(pids[i]) != 'T') {
			if (now_us() > end) {
				fprintf(stderr, "oracle: %d did not stop in 5 s (state %c)\n",
					pids[i], task_state(pids[i]));
				exit(1);
			}
			nanosleep(&ms, NULL);
		}
	}
}

static void thaw(int n, int *pids)
{
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGCONT);
}

// the "total=" of the some and full lines of a pressure file
static void totals_of(const char *file, long long *some, long long *full)
{
	char buf[512], *l;
	int fd = open(file, O_RDONLY), n;

	*some = *full = -1;
	if (fd < 0)
		die(file);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		die(file);
	buf[n] = 0;
	for (l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char *t = strstr(l, "total=");
		char *nl = strchr(l, '\n');

		if (!t || (nl && t > nl))
			continue;
		if (!strncmp(l, "some ", 5))
			*some = atoll(t + 6);
		else if (!strncmp(l, "full ", 5))
			*full = atoll(t + 6);
	}
}

struct snap {
	long long t;
	long long some[MAXF], full[MAXF];
	struct tcount c[MAXP];
};

static void take(struct snap *s, int nf, char **files, int np, int *pids)
{
	freeze(np, pids);
	s->t = now_us();
	for (int i = 0; i < nf; i++)
		totals_of(files[i], &s->some[i], &s->full[i]);
	for (int i = 0; i < np; i++) {
		schedstat_of(pids[i], &s->c[i]);
		taskstats_of(pids[i], &s->c[i]);
	}
	thaw(np, pids);
}

static void print_task(int pid, const struct tcount *c)
{
	printf("P %d %llu %llu %llu %llu %llu %llu\n", pid, c->rd, c->pc, c->cpud, c->cpuc, c->blkd, c->blkc);
}

int main(int argc, char **argv)
{
	static struct snap a, b;
	int pids[MAXP], np = 0, nf = 0, i = 2;
	char *files[MAXF];

	if (argc >= 3 && !strcmp(argv[1], "task")) {
		nl_open();
		for (i = 2; i < argc; i++) {
			struct tcount c;

			schedstat_of(atoi(argv[i]), &c);
			taskstats_of(atoi(argv[i]), &c);
			print_task(atoi(argv[i]), &c);
		}
		printf("V %u %u\n", ts_version, ts_len);
		return 0;
	}
	if (argc < 4 || strcmp(argv[1], "measure")) {
		fprintf(stderr, "usage: oracle task PID... | oracle measure SECONDS FILE... [-- PID...]\n");
		return 2;
	}
	double secs = atof(argv[2]);
	for (i = 3; i < argc && strcmp(argv[i], "--"); i++)
		if (nf < MAXF)
			files[nf++] = argv[i];
	for (i++; i < argc; i++)
		if (np < MAXP)
			pids[np++] = atoi(argv[i]);
	if (np)
		nl_open();
	take(&a, nf, files, np, pids);
	long long us = (long long)(secs * 1e6);
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	take(&b, nf, files, np, pids);
	printf("W %lld\n", b.t - a.t);
	for (i = 0; i < nf; i++)
		printf("F %s %lld %lld\n", files[i], b.some[i] - a.some[i], b.full[i] - a.full[i]);
	for (i = 0; i < np; i++) {
		struct tcount d = {
			b.c[i].rd - a.c[i].rd, b.c[i].pc - a.c[i].pc,
			b.c[i].cpud - a.c[i].cpud, b.c[i].cpuc - a.c[i].cpuc,
			b.c[i].blkd - a.c[i].blkd, b.c[i].blkc - a.c[i].blkc,
		};
		print_task(pids[i], &d);
	}
	if (np)
		printf("V %u %u\n", ts_version, ts_len);
	return 0;
}
