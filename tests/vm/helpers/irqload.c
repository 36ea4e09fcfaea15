// irqload: interrupt-heavy loads that land on a running task, for irq
// pressure (time a non-idle task lost to hard and soft interrupts).
//
//   irqload timer SECONDS USEC   spin for SECONDS with an interval timer
//                                (ITIMER_REAL) every USEC microseconds: each
//                                expiry is a local timer interrupt taken
//                                while this task runs; prints "signals N
//                                loops L" (L: iterations of the spin loop,
//                                what the task got done)
//   irqload net SECONDS          UDP datagrams over the loopback device, as
//                                fast as one sender can, to a receiver
//                                thread: each send runs the network receive
//                                softirq in the sender's own context (the
//                                loopback device hands the packet to it), so
//                                the sender loses that time; brings lo up if
//                                it is down; prints "sent N received M"
//
// Exit status: 0 on success, 1 on a failed syscall (after printing it),
// 2 usage.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t signals;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_alarm(int sig)
{
	(void)sig;
	signals++;
}

static int timer_load(double secs, long usec)
{
	struct timeval tv = { usec / 1000000, usec % 1000000 };
	struct itimerval it = { tv, tv };
	struct sigaction sa;
	volatile unsigned long x = 0;
	double end = now() + secs;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL)) {
		perror("irqload: timer");
		return 1;
	}
	while (now() < end)
		x++;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	printf("signals %ld loops %lu\n", (long)signals, (unsigned long)x);
	return 0;
}

static int lo_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr)) {
			close(s);
			return -1;
		}
	}
	close(s);
	return 0;
}

static volatile int stop;
static long received;

static void *receiver(void *arg)
{
	int s = *(int *)arg;
	char buf[2048];

	while (!stop) {
		if (recv(s, buf, sizeof(buf), 0) > 0)
			received++;
	}
	return NULL;
}

static int net_load(double secs)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timeval tv = { 0, 100000 };
	char buf[1024];
	long sent = 0;
	pthread_t th;
	double end;
	int r, s;

	if (lo_up()) {
		perror("irqload: lo up");
		return 1;
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r = socket(AF_INET, SOCK_DGRAM, 0);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (r < 0 || s < 0 || bind(r, (struct sockaddr *)&a, sizeof(a))) {
		perror("irqload: socket");
		return 1;
	}
	socklen_t len = sizeof(a);
	if (getsockname(r, (struct sockaddr *)&a, &len) ||
	    setsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		perror("irqload: getsockname");
		return 1;
	}
	if (pthread_create(&th, NULL, receiver, &r)) {
		fprintf(stderr, "irqload: pthread_create failed\n");
		return 1;
	}
	memset(buf, 'x', sizeof(buf));
	end = now() + secs;
	while (now() < end) {
		if (sendto(s, buf, sizeof(buf), 0, (struct sockaddr *)&a,
			   sizeof(a)) > 0)
			sent++;
		else if (errno != ENOBUFS && errno != EAGAIN) {
			perror("irqload: sendto");
			return 1;
		}
	}
	stop = 1;
	pthread_join(th, NULL);
	printf("sent %ld received %ld\n", sent, received);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "timer") && atol(argv[3]) > 0)
		return timer_load(atof(argv[2]), atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "net"))
		return net_load(atof(argv[2]));
	fprintf(stderr, "usage: irqload timer SECONDS USEC | irqload net SECONDS\n");
	return 2;
}
