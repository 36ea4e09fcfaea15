// SPDX-License-Identifier: GPL-2.0
/*
 * Aggregation arithmetic of psi_mod_logic.h against values worked out by
 * hand (and with an independent script) from the kernel's formulas:
 * include/linux/sched/loadavg.h calc_load(), kernel/sched/loadavg.c
 * fixed_power_int()/calc_load_n(), kernel/sched/psi.c calc_avgs(),
 * update_averages(), get_recent_times() and record_times() (Linux 6.1).
 * The collection itself, psi_aggregate.c's, is test_aggregate's.
 *
 * Units: FIXED_1 = 2048, so 100% is 100 * 2048 = 204800 in an average.
 */
#include <math.h>
#include <stdint.h>
#include "psi_mod_logic.h"
#include "tu.h"

#define E10	PSIM_EXP_10s
#define E60	PSIM_EXP_60s
#define E300	PSIM_EXP_300s
#define PCT(p)	((unsigned long)(p) * 2048UL)	/* p% as an average value */

/* Debian's CONFIG_HZ=250: PSI_FREQ = 2*HZ+1 jiffies = 2.004 s. */
#define HZ		250
#define NSEC_PER_JIFFY	(1000000000ULL / HZ)
#define PERIOD		(501ULL * NSEC_PER_JIFFY)	/* 2004000000 ns */

static const char *fmt_avg(char *buf, size_t len, unsigned long avg)
{
	snprintf(buf, len, "%lu.%02lu", PSIM_LOAD_INT(avg),
		 PSIM_LOAD_FRAC(avg));
	return buf;
}

/* ------------------------------------------------------------------ */

static void calc_load_rounds_up_when_active_ge_load(void)
{
	/*
	 * newload = load*exp + active*(2048-exp), + 2047 if active >= load,
	 * then / 2048. With exp = 1677, 2048 - exp = 371.
	 */
	/* 999*1677 + 1000*371 = 2046323; +2047 = 2048370; /2048 = 1000 */
	TU_EQ(psim_calc_load(999, E10, 1000), 1000);
	/* without the round-up it would have stayed at 999 */
	TU_EQ((999UL * 1677 + 1000UL * 371) / 2048, 999);
	/* 1000*1677 + 999*371 = 2047629 < 2048000: floor, 999 */
	TU_EQ(psim_calc_load(1000, E10, 999), 999);
	/* active == load is a fixed point: (1000*2048 + 2047)/2048 */
	TU_EQ(psim_calc_load(1000, E10, 1000), 1000);
	/* (1*1677 + 1*371 + 2047)/2048 = 4095/2048 = 1 */
	TU_EQ(psim_calc_load(1, E10, 1), 1);
	/* 0 stays 0: (0 + 0 + 2047)/2048 */
	TU_EQ(psim_calc_load(0, E10, 0), 0);
	TU_EQ(psim_calc_load(0, E300, 0), 0);
	/* 100% from 0: 204800*371/2048 = 37100 exactly, +2047/2048 drops */
	TU_EQ(psim_calc_load(0, E10, PCT(100)), 37100);
	/* 100% to 0: 204800*1677/2048 = 167700 */
	TU_EQ(psim_calc_load(PCT(100), E10, 0), 167700);
	/* 1 below the target and active above: rounds up onto it */
	TU_EQ(psim_calc_load(PCT(50) - 1, E300, PCT(50)), PCT(50));
	/* 1 above the target: (102401*2034 + 102400*14)/2048 = 102400.99 */
	TU_EQ(psim_calc_load(PCT(50) + 1, E300, PCT(50)), PCT(50));

	/* The new value always lies between load and active. */
	{
		u64 x = 88172645463325252ULL;
		int i;

		for (i = 0; i < 200000 && !TU_FAILED(); i++) {
			unsigned long load, active, r, lo, hi;
			const unsigned long e[3] = { E10, E60, E300 };

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			load = x % (PCT(100) + 1);
			active = (x >> 32) % (PCT(100) + 1);
			r = psim_calc_load(load, e[i % 3], active);
			lo = load < active ? load : active;
			hi = load < active ? active : load;
			TU_CHECK(r >= lo && r <= hi,
				 "calc_load(%lu, %lu, %lu) = %lu outside [%lu, %lu]",
				 load, e[i % 3], active, r, lo, hi);
		}
	}
}

static void fixed_power_int_values(void)
{
	/* x^n in 11-bit fixed point, rounding every multiplication. */
	static const unsigned int n[6] = { 0, 1, 2, 3, 5, 30 };
	static const unsigned long want[3][6] = {
		{ 2048, 1677, 1373, 1124, 753, 5 },	/* 1677 */
		{ 2048, 1981, 1916, 1853, 1734, 756 },	/* 1981 */
		{ 2048, 2034, 2020, 2006, 1978, 1665 },	/* 2034 */
	};
	static const unsigned long e[3] = { E10, E60, E300 };
	int i, j;

	/* 1677^2/2048 = 1373.7 but (2812329 + 1024) >> 11 = 1373 */
	TU_EQ(psim_fixed_power(E10, 2), 1373);
	for (i = 0; i < 3; i++)
		for (j = 0; j < 6; j++)
			TU_EQ(psim_fixed_power(e[i], n[j]), want[i][j]);

	/* 1.0^n = 1.0, 0^n = 0, 0.5^n exact while representable */
	TU_EQ(psim_fixed_power(2048, 30), 2048);
	TU_EQ(psim_fixed_power(0, 3), 0);
	TU_EQ(psim_fixed_power(1024, 1), 1024);
	TU_EQ(psim_fixed_power(1024, 2), 512);
	TU_EQ(psim_fixed_power(1024, 5), 64);
	TU_EQ(psim_fixed_power(1024, 10), 2);
	TU_EQ(psim_fixed_power(1024, 11), 1);
	TU_EQ(psim_fixed_power(1024, 12), 1);	/* 0.5 ulp rounds up */
	TU_EQ(psim_fixed_power(1024, 13), 0);

	/*
	 * Close to the real power, but the rounding errors compound: for
	 * n <= 64 the largest errors are 0.97 (1677), 1.67 (1981) and
	 * 4.39 (2034, at n = 38: 1575 for 1578.08) units of 1/2048.
	 */
	for (i = 0; i < 3; i++) {
		static const long double tol[3] = { 1.0L, 2.0L, 4.4L };

		for (j = 0; j <= 64; j++) {
			long double real = 2048.0L * powl(e[i] / 2048.0L, j);
			long double got = psim_fixed_power(e[i], j);

			TU_CHECK(fabsl(got - real) <= tol[i],
				 "fixed_power(%lu, %d) = %.0Lf, real %.3Lf",
				 e[i], j, got, real);
		}
	}
}

/*
 * calc_load_n(load, exp, 0, n) against n calc_load(load, exp, 0) in a row.
 * They are not equal: calc_load_n rounds exp^n once (fixed_power_int) and
 * floors once, the loop floors n times. What holds, checked exhaustively
 * for every load from 0 to 100% and n from 1 to 64:
 *  - n == 1: identical;
 *  - |difference| <= ceil(load * |exp^n rounding error| / 2048) + n;
 *  - the extreme differences, in 1/2048 of a percent point, are exactly
 *    -96..+43 (EXP_10s), -59..+181 (EXP_60s), -418..+41 (EXP_300s):
 *    at most 0.21 percentage points.
 */
static void calc_load_n_vs_repeated_calc_load(void)
{
	static const unsigned long e[3] = { E10, E60, E300 };
	static const long want_min[3] = { -96, -59, -418 };
	static const long want_max[3] = { 43, 181, 41 };
	int i;

	/* n = 0 leaves the average alone; n = 1 is one calc_load */
	TU_EQ(psim_calc_load_n(12345, E10, 0, 0), 12345);
	TU_EQ(psim_calc_load_n(12345, E10, PCT(100), 0), 12345);
	/* steady state is kept exactly for any n */
	TU_EQ(psim_calc_load_n(PCT(50), E300, PCT(50), 7), PCT(50));
	/* 100% -> 5 empty periods: 204800*753/2048 = 75300; loop: 75394 */
	TU_EQ(psim_calc_load_n(PCT(100), E10, 0, 5), 75300);
	{
		unsigned long r = PCT(100);
		int k;

		for (k = 0; k < 5; k++)
			r = psim_calc_load(r, E10, 0);
		TU_EQ(r, 75394);
	}

	for (i = 0; i < 3; i++) {
		u64 errq[65];	/* |exp^n rounding error| * 2^20, rounded up */
		unsigned long p[65];
		long dmin = 0, dmax = 0;
		unsigned long load;
		int n;

		for (n = 1; n <= 64; n++) {
			p[n] = psim_fixed_power(e[i], n);
			errq[n] = (u64)ceill(fabsl((long double)p[n] -
					2048.0L * powl(e[i] / 2048.0L, n)) *
					(1 << 20));
		}
		for (load = 0; load <= PCT(100) && !TU_FAILED(); load++) {
			unsigned long rep = load;

			for (n = 1; n <= 64; n++) {
				unsigned long one = psim_calc_load_n(load, e[i],
								     0, n);
				long d, bound;

				rep = psim_calc_load(rep, e[i], 0);
				d = (long)one - (long)rep;
				if (n == 1)
					TU_CHECK(d == 0,
						 "calc_load_n(%lu, %lu, 0, 1) = %lu != calc_load %lu",
						 load, e[i], one, rep);
				/* one multiplication by the power, floored */
				TU_CHECK(one == load * p[n] / 2048,
					 "calc_load_n(%lu, %lu, 0, %d) = %lu",
					 load, e[i], n, one);
				bound = (long)((load * errq[n] +
						(2048ULL << 20) - 1) /
					       (2048ULL << 20)) + n;
				TU_CHECK(labs(d) <= bound,
					 "exp %lu load %lu n %d: calc_load_n %lu, repeated %lu, bound %ld",
					 e[i], load, n, one, rep, bound);
				if (d < dmin)
					dmin = d;
				if (d > dmax)
					dmax = d;
			}
		}
		TU_EQS(dmin, want_min[i]);
		TU_EQS(dmax, want_max[i]);
	}
}

static void calc_avgs_full_pressure_5_periods(void)
{
	/* avg10, avg60, avg300 after each of 5 periods at 100% from 0 */
	static const unsigned long want[5][3] = {
		{ 37100, 6700, 1400 },
		{ 67480, 13181, 2791 },
		{ 92356, 19450, 4172 },
		{ 112726, 25514, 5544 },
		{ 129406, 31380, 6907 },
	};
	unsigned long avg[3] = { 0, 0, 0 };
	char b[32];
	int i, k;

	for (i = 0; i < 5; i++) {
		psim_calc_avgs(avg, 0, PERIOD, PERIOD);
		for (k = 0; k < 3; k++)
			TU_EQ(avg[k], want[i][k]);
	}
	/* 10 s of full pressure: avg10 = 1 - 1/e = 63.2%, in fixed point */
	TU_STREQ(fmt_avg(b, sizeof(b), avg[0]), "63.18");
	TU_STREQ(fmt_avg(b, sizeof(b), avg[1]), "15.32");
	TU_STREQ(fmt_avg(b, sizeof(b), avg[2]), "3.37");

	/* the sample is a whole percentage, floored: 49.99999995% -> 49 */
	avg[0] = avg[1] = avg[2] = 0;
	psim_calc_avgs(avg, 0, 999999999, 2000000000);
	TU_EQ(avg[0], 18179);	/* 49*2048*371/2048 = 18179 */
	TU_EQ(avg[1], 3283);
	TU_EQ(avg[2], 686);
}

static void calc_avgs_half_pressure_converges_to_50_00(void)
{
	/*
	 * 50% every period: each average rises monotonically and reaches
	 * exactly 102400 (= 50.00) after 52, 262 and 1039 periods; the
	 * round-up in calc_load makes it land on the target and stay there.
	 * From 100% it comes down to exactly 102400 after the same counts.
	 */
	static const int reach[3] = { 52, 262, 1039 };
	int from;

	for (from = 0; from < 2; from++) {
		unsigned long avg[3], prev[3];
		int first[3] = { 0, 0, 0 };
		char b[32];
		int i, k;

		for (k = 0; k < 3; k++)
			avg[k] = from ? PCT(100) : 0;
		for (i = 1; i <= 2000 && !TU_FAILED(); i++) {
			memcpy(prev, avg, sizeof(avg));
			psim_calc_avgs(avg, 0, PERIOD / 2, PERIOD);
			for (k = 0; k < 3; k++) {
				if (from)
					TU_CHECK(avg[k] <= prev[k] && avg[k] >= PCT(50),
						 "avg[%d] %lu -> %lu at period %d",
						 k, prev[k], avg[k], i);
				else
					TU_CHECK(avg[k] >= prev[k] && avg[k] <= PCT(50),
						 "avg[%d] %lu -> %lu at period %d",
						 k, prev[k], avg[k], i);
				if (avg[k] == PCT(50) && !first[k])
					first[k] = i;
				if (first[k])
					TU_EQ(avg[k], PCT(50));
			}
		}
		for (k = 0; k < 3; k++) {
			TU_EQS(first[k], reach[k]);
			TU_STREQ(fmt_avg(b, sizeof(b), avg[k]), "50.00");
		}
	}
}

static void calc_avgs_missed_periods_decay(void)
{
	unsigned long avg[3] = { 129406, 31380, 6907 };	/* 5 x 100% */
	unsigned long rep[3] = { 129406, 31380, 6907 };
	char b[32];
	int i;

	/*
	 * 3 missed periods then an empty one:
	 * avg10 = calc_load(129406*1124/2048 = 71021, 1677, 0)
	 *       = 71021*1677/2048 = 58155.
	 */
	psim_calc_avgs(avg, 3, 0, PERIOD);
	TU_EQ(avg[0], 58155);
	TU_EQ(avg[1], 27463);
	TU_EQ(avg[2], 6718);
	TU_STREQ(fmt_avg(b, sizeof(b), avg[0]), "28.39");
	/* four empty samples in a row give nearly the same */
	for (i = 0; i < 4; i++)
		psim_calc_avgs(rep, 0, 0, PERIOD);
	TU_EQ(rep[0], 58177);
	TU_EQ(rep[1], 27469);
	TU_EQ(rep[2], 6718);

	/* 2 missed periods then a full one */
	avg[0] = 129406, avg[1] = 31380, avg[2] = 6907;
	psim_calc_avgs(avg, 2, PERIOD, PERIOD);
	TU_EQ(avg[0], 108140);
	TU_EQ(avg[1], 35097);
	TU_EQ(avg[2], 8166);

	/*
	 * 1000 missed periods (33 min) empty avg10 and avg60; avg300 keeps
	 * 0.09%: 2034^1000 in fixed point is 2 (real 2.2), 204800*2/2048 =
	 * 200, then one more empty period: 200*2034/2048 = 198.
	 */
	avg[0] = avg[1] = avg[2] = PCT(100);
	psim_calc_avgs(avg, 1000, 0, PERIOD);
	TU_EQ(avg[0], 0);
	TU_EQ(avg[1], 0);
	TU_EQ(avg[2], 198);
	TU_EQ(psim_fixed_power(E300, 1000), 2);
	/* 10000 empty everything */
	avg[0] = avg[1] = avg[2] = PCT(100);
	psim_calc_avgs(avg, 10000, 0, PERIOD);
	TU_EQ(avg[0], 0);
	TU_EQ(avg[1], 0);
	TU_EQ(avg[2], 0);
}

/* ------------------------------------------------------------------ */

#define T0	1000000000ULL		/* group created at 1 s */

static void update_averages_on_time(void)
{
	struct psim_group g;
	u64 next;
	int s;

	psim_group_init(&g, T0, PERIOD);
	TU_EQ(g.avg_last_update, T0);
	TU_EQ(g.avg_next_update, T0 + PERIOD);
	TU_EQ(g.period, PERIOD);

	g.total[PSIM_IO_SOME] = PERIOD / 2;		/* 50% */
	next = psim_update_averages(&g, T0 + PERIOD);
	TU_EQ(next, T0 + 2 * PERIOD);
	TU_EQ(g.avg_last_update, T0 + PERIOD);
	TU_EQ(g.avg_total[PSIM_IO_SOME], PERIOD / 2);
	TU_EQ(g.avg[PSIM_IO_SOME][0], 18550);	/* (102400*371+2047)/2048 */
	TU_EQ(g.avg[PSIM_IO_SOME][1], 3350);
	TU_EQ(g.avg[PSIM_IO_SOME][2], 700);
	for (s = 0; s < PSIM_NR_STATES - 1; s++) {
		if (s == PSIM_IO_SOME)
			continue;
		TU_EQ(g.avg[s][0], 0);
		TU_EQ(g.avg_total[s], 0);
	}
}

static void update_averages_clamps_and_carries_excess(void)
{
	struct psim_group g;

	psim_group_init(&g, T0, PERIOD);
	g.total[PSIM_MEM_FULL] = PERIOD / 2;
	g.avg_next_update = psim_update_averages(&g, T0 + PERIOD);
	TU_EQ(g.avg[PSIM_MEM_FULL][0], 18550);

	/*
	 * 1.5 periods of stall show up in one period (time that slipped in
	 * from the previous one): report 100%, keep 0.5 period for later.
	 */
	g.total[PSIM_MEM_FULL] += PERIOD + PERIOD / 2;
	g.avg_next_update = psim_update_averages(&g, T0 + 2 * PERIOD);
	TU_EQ(g.avg_total[PSIM_MEM_FULL], PERIOD / 2 + PERIOD);
	TU_EQ(g.total[PSIM_MEM_FULL] - g.avg_total[PSIM_MEM_FULL], PERIOD / 2);
	TU_EQ(g.avg[PSIM_MEM_FULL][0], 52290);	/* calc_load(18550, 1677, 100%) */
	TU_EQ(g.avg[PSIM_MEM_FULL][1], 9941);
	TU_EQ(g.avg[PSIM_MEM_FULL][2], 2096);

	/* no new stall: the carried half period is the next sample (50%) */
	g.avg_next_update = psim_update_averages(&g, T0 + 3 * PERIOD);
	TU_EQ(g.avg_total[PSIM_MEM_FULL], g.total[PSIM_MEM_FULL]);
	TU_EQ(g.avg[PSIM_MEM_FULL][0], 61368);
	TU_EQ(g.avg[PSIM_MEM_FULL][1], 12966);
	TU_EQ(g.avg[PSIM_MEM_FULL][2], 2782);
	TU_EQ(g.avg_next_update, T0 + 4 * PERIOD);
}

static void update_averages_late_work_keeps_fixed_grid(void)
{
	struct psim_group g;
	u64 now, next;

	psim_group_init(&g, T0, PERIOD);
	/* the work runs a quarter period late */
	now = T0 + PERIOD + PERIOD / 4;
	g.total[PSIM_CPU_SOME] = PERIOD / 2;
	next = g.avg_next_update = psim_update_averages(&g, now);
	TU_EQ(next, T0 + 2 * PERIOD);		/* the grid, not now + period */
	TU_EQ(g.avg_last_update, now);
	/* sample over the real 1.25 periods: 50/125 = 40% */
	TU_EQ(g.avg[PSIM_CPU_SOME][0], 14840);	/* calc_load(0, 1677, 40%) */
	TU_EQ(g.avg[PSIM_CPU_SOME][1], 2680);
	TU_EQ(g.avg[PSIM_CPU_SOME][2], 560);

	/* on time again: the period is only the remaining 0.75 */
	g.total[PSIM_CPU_SOME] += PERIOD - PERIOD / 4;	/* 100% of it */
	next = g.avg_next_update = psim_update_averages(&g, next);
	TU_EQ(next, T0 + 3 * PERIOD);
	TU_EQ(g.avg_total[PSIM_CPU_SOME], g.total[PSIM_CPU_SOME]);
	TU_EQ(g.avg[PSIM_CPU_SOME][0], 49252);
	TU_EQ(g.avg[PSIM_CPU_SOME][1], 9293);
	TU_EQ(g.avg[PSIM_CPU_SOME][2], 1957);

	/* just under a period late: still no missed period */
	next = psim_update_averages(&g, T0 + 3 * PERIOD + PERIOD - 1);
	TU_EQ(next, T0 + 4 * PERIOD);
}

static void update_averages_missed_periods(void)
{
	struct psim_group g, h;
	u64 now, next;

	psim_group_init(&g, T0, PERIOD);
	g.total[PSIM_IO_FULL] = PERIOD;			/* 100% */
	g.avg_next_update = psim_update_averages(&g, T0 + PERIOD);
	TU_EQ(g.avg[PSIM_IO_FULL][0], 37100);

	/*
	 * Idle: the work stopped. It runs again at 5.1 periods, 3.1 periods
	 * after the due time T0 + 2P: 3 missed periods, next update on the
	 * grid at T0 + 6P, and the sample covers now - (last + 3P) = 1.1P.
	 */
	now = T0 + 5 * PERIOD + PERIOD / 10;
	g.total[PSIM_IO_FULL] += (PERIOD + PERIOD / 10) / 2;	/* 50% of 1.1P */
	next = psim_update_averages(&g, now);
	TU_EQ(next, T0 + 6 * PERIOD);
	TU_EQ(g.avg_last_update, now);
	TU_EQ(g.avg[PSIM_IO_FULL][0], 35223);	/* decay^3, then 50% */
	TU_EQ(g.avg[PSIM_IO_FULL][1], 9214);
	TU_EQ(g.avg[PSIM_IO_FULL][2], 2062);

	/* exactly one period late counts one missed period */
	psim_group_init(&h, T0, PERIOD);
	h.total[PSIM_IO_SOME] = PERIOD;
	next = psim_update_averages(&h, T0 + 2 * PERIOD);
	TU_EQ(next, T0 + 3 * PERIOD);
	/* missed 1: decay of 0 is 0, then the sample over 1 period: 100% */
	TU_EQ(h.avg[PSIM_IO_SOME][0], 37100);
	psim_group_init(&h, T0, PERIOD);
	next = psim_update_averages(&h, T0 + 2 * PERIOD - 1);
	TU_EQ(next, T0 + 2 * PERIOD);
}

/* ------------------------------------------------------------------ */

static void cpu_recent_times_live_state_and_wrap(void)
{
	struct psim_cpu_state c;
	u64 prev[PSIM_NR_STATES], t[PSIM_NR_STATES];
	u32 changed;

	memset(&c, 0, sizeof(c));
	memset(prev, 0, sizeof(prev));
	c.times[PSIM_CPU_SOME] = 500;
	c.times[PSIM_NONIDLE] = 800;
	c.times[PSIM_IO_SOME] = 40;		/* concluded earlier */
	c.state_mask = (1U << PSIM_CPU_SOME) | (1U << PSIM_NONIDLE);
	c.state_start = 10000;

	/* the live state counts up to now: 500 + 700 */
	changed = psim_cpu_recent_times(&c, 10700, prev, t);
	TU_EQ(t[PSIM_CPU_SOME], 1200);
	TU_EQ(t[PSIM_NONIDLE], 1500);
	TU_EQ(t[PSIM_IO_SOME], 40);
	TU_EQ(t[PSIM_IO_FULL], 0);
	TU_EQ(t[PSIM_MEM_SOME], 0);
	TU_EQ(changed, (1U << PSIM_CPU_SOME) | (1U << PSIM_NONIDLE) |
		       (1U << PSIM_IO_SOME));
	TU_EQ(prev[PSIM_CPU_SOME], 1200);

	/* later: only the growth since the previous call */
	changed = psim_cpu_recent_times(&c, 10900, prev, t);
	TU_EQ(t[PSIM_CPU_SOME], 200);
	TU_EQ(t[PSIM_NONIDLE], 200);
	TU_EQ(t[PSIM_IO_SOME], 0);
	TU_EQ(changed, (1U << PSIM_CPU_SOME) | (1U << PSIM_NONIDLE));
	/* same instant: nothing moved */
	changed = psim_cpu_recent_times(&c, 10900, prev, t);
	TU_EQ(changed, 0);
	TU_EQ(t[PSIM_CPU_SOME], 0);

	/* the state ends at 11000: the live part is not counted twice */
	psim_record_times(&c, 11000);
	TU_EQ(c.times[PSIM_CPU_SOME], 1500);
	TU_EQ(c.state_start, 11000);
	c.state_mask = 0;
	changed = psim_cpu_recent_times(&c, 50000, prev, t);
	TU_EQ(t[PSIM_CPU_SOME], 100);
	TU_EQ(t[PSIM_NONIDLE], 100);
	TU_EQ(changed, (1U << PSIM_CPU_SOME) | (1U << PSIM_NONIDLE));

	/* past 2^32 ns: nothing wraps, 0xffffff00 + 0x300 live */
	memset(&c, 0, sizeof(c));
	c.times[PSIM_MEM_SOME] = 0xffffff00U;
	c.state_mask = 1U << PSIM_MEM_SOME;
	c.state_start = 5ULL << 32;
	prev[PSIM_MEM_SOME] = 0xfffffe00U;
	psim_cpu_recent_times(&c, (5ULL << 32) + 0x300, prev, t);
	TU_EQ(t[PSIM_MEM_SOME], 0x400);
	TU_EQ(prev[PSIM_MEM_SOME], 0x100000200ULL);

	psim_record_times(&c, (5ULL << 32) + 0x300);
	TU_EQ(c.times[PSIM_MEM_SOME], 0x100000200ULL);

	/*
	 * A state span of 2^32 ns (4.29 s) or more, as when a sample comes
	 * late, is charged whole.
	 */
	c.times[PSIM_MEM_SOME] = 0;
	c.state_start = 0;
	psim_record_times(&c, (1ULL << 32) + 5);
	TU_EQ(c.times[PSIM_MEM_SOME], (1ULL << 32) + 5);

	/*
	 * A late sample, 6 s after the previous one, takes the growth
	 * modulo 2^32 ns as the kernel's u32 deltas do; the record keeps
	 * all of it, so the next sample's growth is exact.
	 */
	memset(&c, 0, sizeof(c));
	memset(prev, 0, sizeof(prev));
	c.state_mask = (1U << PSIM_IO_SOME) | (1U << PSIM_NONIDLE);
	c.state_start = 1000;
	psim_cpu_recent_times(&c, 1000 + 6000000000ULL, prev, t);
	TU_EQ(t[PSIM_IO_SOME], 6000000000ULL - (1ULL << 32));
	TU_EQ(t[PSIM_NONIDLE], 6000000000ULL - (1ULL << 32));
	TU_EQ(prev[PSIM_IO_SOME], 6000000000ULL);
	psim_cpu_recent_times(&c, 1000 + 8000000000ULL, prev, t);
	TU_EQ(t[PSIM_IO_SOME], 2000000000ULL);
}

/*
 * Lockless readers: a reader counts the running period up to its sample;
 * a wakeup timed at its enqueue may then end that period before the
 * sample. The state's time reads less than the reader recorded: no growth
 * and no wrap, and the overlap counts once in the end.
 */
static void cpu_recent_times_absorb_a_period_ended_before_the_sample(void)
{
	struct psim_cpu_state c;
	u64 prev[PSIM_NR_STATES] = { 0 }, t[PSIM_NR_STATES], sum = 0;
	u32 changed;

	memset(&c, 0, sizeof(c));
	c.state_mask = (1U << PSIM_CPU_SOME) | (1U << PSIM_NONIDLE);
	c.state_start = 1000;
	psim_cpu_recent_times(&c, 2000, prev, t);	/* the reader: 1000 */
	sum += t[PSIM_CPU_SOME];
	/* the wakeup's enqueue at 1950 ends CPU_SOME; NONIDLE goes on */
	psim_set_mask(&c, 1950, 1U << PSIM_NONIDLE);
	changed = psim_cpu_recent_times(&c, 2100, prev, t);
	TU_EQ(t[PSIM_CPU_SOME], 0);
	TU_EQ(t[PSIM_NONIDLE], 100);
	TU_EQ(changed, 1U << PSIM_NONIDLE);
	TU_EQ(prev[PSIM_CPU_SOME], 1000);
	/* CPU_SOME again from 3000: its growth counts once past the overlap */
	psim_set_mask(&c, 3000, (1U << PSIM_CPU_SOME) | (1U << PSIM_NONIDLE));
	psim_cpu_recent_times(&c, 3500, prev, t);
	sum += t[PSIM_CPU_SOME];
	TU_EQ(t[PSIM_CPU_SOME], 450);
	TU_EQ(sum, c.times[PSIM_CPU_SOME] + 500);
}
/*
 * The kernel's way (psi_group_change()): a change of task counts at @now
 * ends the period there, whether the state changes or not; the time up to
 * @now goes to the old states. The probes' lazy way is
 * psim_mask_changes() + psim_set_mask().
 */
static void cpu_change(struct psim_cpu_state *c, u64 now, unsigned int clear,
		       unsigned int set)
{
	psim_cpu_counts(c, clear, set);
	psim_record_times(c, now);
	c->state_mask = psim_state_mask(c);
}

static void cpu_change_records_old_states_then_recomputes(void)
{
	struct psim_cpu_state c;

	memset(&c, 0, sizeof(c));
	c.state_start = 100;
	/* an iowait sleeper from 100 */
	cpu_change(&c, 100, 0, PSIM_TSK_IOWAIT);
	TU_EQ(c.tasks[PSIM_NR_IOWAIT], 1);
	TU_EQ(c.state_mask, (1U << PSIM_IO_SOME) | (1U << PSIM_IO_FULL) |
			    (1U << PSIM_NONIDLE));
	/* a task wakes at 350: 250 ns of io full went to the old states */
	c.oncpu = 1;
	cpu_change(&c, 350, 0, PSIM_TSK_RUNNING);
	TU_EQ(c.times[PSIM_IO_SOME], 250);
	TU_EQ(c.times[PSIM_IO_FULL], 250);
	TU_EQ(c.times[PSIM_NONIDLE], 250);
	TU_EQ(c.times[PSIM_CPU_SOME], 0);
	TU_EQ(c.state_mask, (1U << PSIM_IO_SOME) | (1U << PSIM_NONIDLE));
	TU_EQ(c.state_start, 350);
	/* the sleeper wakes too at 400; 2 runnable, 1 on the CPU */
	cpu_change(&c, 400, PSIM_TSK_IOWAIT, PSIM_TSK_RUNNING);
	TU_EQ(c.times[PSIM_IO_SOME], 300);
	TU_EQ(c.times[PSIM_IO_FULL], 250);
	TU_EQ(c.state_mask, (1U << PSIM_CPU_SOME) | (1U << PSIM_NONIDLE));
	TU_EQ(c.underflows, 0);
	/* clearing a zero count is refused and counted, never wraps */
	cpu_change(&c, 400, PSIM_TSK_IOWAIT | PSIM_TSK_MEMSTALL, 0);
	TU_EQ(c.tasks[PSIM_NR_IOWAIT], 0);
	TU_EQ(c.tasks[PSIM_NR_MEMSTALL], 0);
	TU_EQ(c.underflows, 2);
	TU_EQ(c.tasks[PSIM_NR_RUNNING], 2);
}

/*
 * The probes end a period only where the state mask changes, the aggregator
 * at every sample (psim_mask_changes(), psim_set_mask()); the kernel ends it
 * at every change. Random count changes and samples applied both ways must
 * give the same recent times at every sample.
 */
static void lazy_periods_equal_eager_periods(void)
{
	struct psim_cpu_state eager, lazy;
	u64 pe[PSIM_NR_STATES] = { 0, }, pl[PSIM_NR_STATES] = { 0, };
	u64 te[PSIM_NR_STATES], tl[PSIM_NR_STATES];
	u32 mask;
	unsigned long cuts = 0, skips = 0, samples = 0;
	unsigned int seed = 12345, clear, set, i;
	u64 now = 1000;
	int s;

	memset(&eager, 0, sizeof(eager));
	memset(&lazy, 0, sizeof(lazy));
	eager.state_start = lazy.state_start = now;
	for (i = 0; i < 200000; i++) {
		seed = seed * 1103515245 + 12345;
		now += (seed >> 8) % 50000;
		if ((seed >> 4) % 64 == 0) {
			/* a sample: the aggregator cuts the lazy period */
			psim_record_times(&lazy, now);
			psim_cpu_recent_times(&eager, now, pe, te);
			psim_cpu_recent_times(&lazy, now, pl, tl);
			for (s = 0; s < PSIM_NR_STATES; s++)
				TU_EQ(tl[s], te[s]);
			samples++;
			continue;
		}
		/* a task change: one count up or down, maybe the CPU's task */
		clear = set = 0;
		if ((seed >> 12) & 1)
			set = 1U << ((seed >> 13) % PSIM_NR_COUNTS);
		else
			clear = 1U << ((seed >> 13) % PSIM_NR_COUNTS);
		if (clear && !eager.tasks[__builtin_ctz(clear)])
			clear = 0;
		if (((seed >> 16) & 7) == 0)
			eager.oncpu = lazy.oncpu = !eager.oncpu;
		cpu_change(&eager, now, clear, set);
		psim_cpu_counts(&lazy, clear, set);
		if (psim_mask_changes(&lazy, &mask)) {
			psim_set_mask(&lazy, now, mask);
			cuts++;
		} else {
			skips++;
		}
		TU_EQ(lazy.state_mask, eager.state_mask);
		if (TU_FAILED())
			return;
	}
	/* both paths were taken often */
	TU_CHECK(cuts > 10000 && skips > 10000 && samples > 1000,
		 "cuts %lu skips %lu samples %lu", cuts, skips, samples);
}

/*
 * A time read on another CPU may be a little ahead of a later local read:
 * the period must not be charged 2^32 - x ns, nor start to run backwards.
 */
static void record_times_ignores_an_earlier_time(void)
{
	struct psim_cpu_state c;

	memset(&c, 0, sizeof(c));
	c.state_mask = (1U << PSIM_CPU_SOME) | (1U << PSIM_NONIDLE);
	c.state_start = 5000;
	psim_record_times(&c, 4990);
	TU_EQ(c.times[PSIM_CPU_SOME], 0);
	TU_EQ(c.state_start, 5000);
	psim_record_times(&c, 5100);
	TU_EQ(c.times[PSIM_CPU_SOME], 100);
	TU_EQ(c.times[PSIM_NONIDLE], 100);
	/* nor does the aggregator's snapshot read a live part below zero */
	{
		u64 prev[PSIM_NR_STATES] = { 0, }, t[PSIM_NR_STATES];

		psim_cpu_recent_times(&c, 5050, prev, t);
		TU_EQ(t[PSIM_CPU_SOME], 100);
		TU_EQ(t[PSIM_NONIDLE], 100);
	}
}

/* ------------------------------------------------------------------ */

/* Warm-up (psim_calc_seen(), psim_avg_shown()): see psi_mod_logic.h. */

/* One period of @pct percent stall on IO SOME, folded on time. */
static void fold_pct(struct psim_group *g, u64 *now, unsigned int pct)
{
	g->total[PSIM_IO_SOME] += PERIOD * pct / 100;
	*now += PERIOD;
	g->avg_next_update = psim_update_averages(g, *now);
}

static void warmup_steady_share_is_shown_from_the_first_period(void)
{
	struct psim_group g;
	u64 now = T0;
	char b[48];
	int n, i;

	psim_group_init(&g, T0, PERIOD);
	/* before the first fold there is nothing to show */
	TU_EQ(psim_avg_shown(g.avg[PSIM_IO_SOME][0], g.seen[0]), 0);
	for (n = 1; n <= 40; n++) {
		fold_pct(&g, &now, 37);
		for (i = 0; i < 3; i++) {
			unsigned long v = psim_avg_shown(g.avg[PSIM_IO_SOME][i],
							 g.seen[i]);

			/*
			 * 37.00 but for rounding: every calc_load() may round
			 * the raw average up by one unit, and one unit of it
			 * is 100% / seen units once divided (0.07 points in
			 * avg300's first period, under 0.05 after 40).
			 */
			unsigned long tol = (n + 1) *
					    (PSIM_AVG_100 / g.seen[i] + 1);

			TU_CHECK(v + tol >= PCT(37) && v <= PCT(37) + tol,
				 "period %d avg[%d] shown %s (raw %lu, seen %lu)",
				 n, i, fmt_avg(b, sizeof(b), v),
				 g.avg[PSIM_IO_SOME][i], g.seen[i]);
		}
	}
	/* the first period by hand: seen (204800*371 + 2047)/2048 = 37100 */
	psim_group_init(&g, T0, PERIOD);
	now = T0;
	fold_pct(&g, &now, 37);
	TU_EQ(g.seen[0], 37100);
	TU_EQ(g.avg[PSIM_IO_SOME][0], 13727);	/* 75776*371 + 2047, /2048 */
	/* 13727 * 204800 / 37100 = 75776 = PCT(37) exactly */
	TU_EQ(psim_avg_shown(13727, 37100), PCT(37));
	TU_STREQ(fmt_avg(b, sizeof(b), psim_avg_shown(13727, 37100)), "37.00");
	/* the kernel's arithmetic from zero would show 6.70 */
	TU_STREQ(fmt_avg(b, sizeof(b), 13727), "6.70");
}

static void warmup_ends_exactly_and_then_is_the_kernels_arithmetic(void)
{
	/* periods until seen reaches FIXED_1 (an independent script agrees) */
	static const int want[3] = { 56, 282, 1140 };
	struct psim_group g;
	u64 now = T0;
	int n, i, done[3] = { 0, 0, 0 };
	unsigned int r = 12345;

	psim_group_init(&g, T0, PERIOD);
	for (n = 1; n <= 1200; n++) {
		r = r * 1103515245 + 12345;
		fold_pct(&g, &now, (r >> 16) % 101);
		for (i = 0; i < 3; i++) {
			TU_CHECK(g.seen[i] <= PSIM_AVG_100, "seen[%d] %lu",
				 i, g.seen[i]);
			if (!done[i] && g.seen[i] == PSIM_AVG_100) {
				done[i] = n;
				TU_EQ(done[i], want[i]);
			}
			/* warmed up: shown is raw, bit for bit, for good */
			if (done[i])
				TU_EQ(psim_avg_shown(g.avg[PSIM_IO_SOME][i],
						     g.seen[i]),
				      g.avg[PSIM_IO_SOME][i]);
		}
	}
	for (i = 0; i < 3; i++)
		TU_CHECK(done[i], "seen[%d] never reached 100%%", i);
	/* never above 100%: a hair of rounding is clamped */
	TU_EQ(psim_avg_shown(PCT(100), PSIM_AVG_100 - 1), PCT(100));
	TU_EQ(psim_avg_shown(PCT(100) - 1, PCT(100) - 2), PCT(100));
}

static void warmup_counts_missed_periods_as_seen(void)
{
	struct psim_group g;
	u64 now = T0;

	psim_group_init(&g, T0, PERIOD);
	fold_pct(&g, &now, 100);
	/* idle: the work comes 3 periods late; the sample is 1 period of 0 */
	now += 4 * PERIOD;
	g.avg_next_update = psim_update_averages(&g, now);
	/* seen: 4 more periods of 100%, the missed 3 at once */
	TU_EQ(g.seen[0], psim_calc_load(psim_calc_load_n(37100, E10,
							  PSIM_AVG_100, 3),
					E10, PSIM_AVG_100));
	/* shown: 100% for 1 of the 5 periods, with the kernel's weights */
	TU_CHECK(psim_avg_shown(g.avg[PSIM_IO_SOME][0], g.seen[0]) <
		 PCT(100) / 2, "avg10 after 1 busy and 4 idle periods: %lu",
		 psim_avg_shown(g.avg[PSIM_IO_SOME][0], g.seen[0]));
}

/*
 * The midload target: a kernel PSI that has seen a steady ~40%
 * stall for a long time, psi_mod loaded into it; both fed the same periods
 * of 35..45%. After 5 periods (10 s) the shown avg10 is within 2 points of
 * the kernel's; the raw average (the kernel's arithmetic from zero) is not.
 */
static void warmup_meets_the_kernel_10s_after_a_midload(void)
{
	struct psim_group g;
	unsigned long k[3] = { PCT(40), PCT(40), PCT(40) };
	u64 now = T0;
	unsigned int r = 777, pct;
	int n;
	long d;

	psim_group_init(&g, T0, PERIOD);
	for (n = 1; n <= 5; n++) {
		r = r * 1103515245 + 12345;
		pct = 35 + (r >> 16) % 11;
		fold_pct(&g, &now, pct);
		psim_calc_avgs(k, 0, PERIOD * pct / 100, PERIOD);
	}
	d = (long)psim_avg_shown(g.avg[PSIM_IO_SOME][0], g.seen[0]) - (long)k[0];
	TU_CHECK(d < (long)PCT(2) && d > -(long)PCT(2),
		 "shown avg10 %ld/2048 points from the kernel's", d);
	d = (long)g.avg[PSIM_IO_SOME][0] - (long)k[0];
	TU_CHECK(d < -(long)PCT(10), "raw avg10 only %ld/2048 below", d);
}

/*
 * The module leaves its first period out of the averages (unfolded = 1):
 * the totals keep it, the averages and the warm-up start with the next
 * period, on the same grid.
 */
static void unfolded_first_period_only_in_the_totals(void)
{
	struct psim_group g, ref;
	u64 now = T0, next;

	psim_group_init(&g, T0, PERIOD);
	g.unfolded = 1;
	psim_group_init(&ref, T0 + PERIOD, PERIOD);
	g.total[PSIM_IO_SOME] = PERIOD / 4;		/* the incomplete one */
	next = psim_update_averages(&g, T0 + PERIOD);
	TU_EQ(next, T0 + 2 * PERIOD);
	TU_EQ(g.unfolded, 0);
	TU_EQ(g.avg[PSIM_IO_SOME][0], 0);
	TU_EQ(g.seen[0], 0);
	TU_EQ(g.total[PSIM_IO_SOME], PERIOD / 4);	/* kept */
	g.avg_next_update = next;
	now = T0 + PERIOD;
	/* from here on exactly a group started one period later */
	ref.total[PSIM_IO_SOME] = 0;
	fold_pct(&g, &now, 60);
	now = T0 + PERIOD;
	fold_pct(&ref, &now, 60);
	TU_EQ(g.avg[PSIM_IO_SOME][0], ref.avg[PSIM_IO_SOME][0]);
	TU_EQ(g.avg[PSIM_IO_SOME][2], ref.avg[PSIM_IO_SOME][2]);
	TU_EQ(g.seen[0], ref.seen[0]);
	TU_EQ(g.total[PSIM_IO_SOME] - PERIOD / 4, ref.total[PSIM_IO_SOME]);
}

/*
 * The module's default (psim_group_start(.., false)): the kernel's averages
 * from zero at the load, the first period folded like every other, shown
 * as they are. 20 s of 80% IO right after the load, then 20 s of none:
 * avg300 at 40 s is what the kernel's arithmetic gives from zero (about
 * 5), bit for bit; with the warm-up it reads several times that.
 */
static void no_warmup_is_the_kernels_arithmetic_from_the_load(void)
{
	struct psim_group g, w;
	unsigned long k[3] = { 0, 0, 0 };
	u64 now = T0, wnow = T0;
	char b[48];
	int n, i;

	psim_group_start(&g, T0, PERIOD, false);
	psim_group_start(&w, T0, PERIOD, true);
	TU_EQ(g.unfolded, 0);
	TU_EQ(w.unfolded, 1);
	TU_EQ(w.seen[2], 0);
	for (n = 1; n <= 20; n++) {
		unsigned int pct = n <= 10 ? 80 : 0;

		fold_pct(&g, &now, pct);
		fold_pct(&w, &wnow, pct);
		psim_calc_avgs(k, 0, PERIOD * pct / 100, PERIOD);
		for (i = 0; i < 3; i++) {
			TU_EQ(g.avg[PSIM_IO_SOME][i], k[i]);
			TU_EQ(psim_avg_shown(g.avg[PSIM_IO_SOME][i], g.seen[i]),
			      k[i]);
		}
	}
	/* 40 s after the load: avg300 reads what the kernel computes */
	TU_STREQ(fmt_avg(b, sizeof(b), psim_avg_shown(g.avg[PSIM_IO_SOME][2],
						       g.seen[2])), "4.95");
	TU_CHECK(psim_avg_shown(w.avg[PSIM_IO_SOME][2], w.seen[2]) >
		 5 * k[2], "avg300 with the warm-up %lu, without %lu",
		 psim_avg_shown(w.avg[PSIM_IO_SOME][2], w.seen[2]), k[2]);
	/* the totals are the same either way */
	TU_EQ(g.total[PSIM_IO_SOME], w.total[PSIM_IO_SOME]);
}

int main(void)
{
	TU_RUN(calc_load_rounds_up_when_active_ge_load);
	TU_RUN(fixed_power_int_values);
	TU_RUN(calc_load_n_vs_repeated_calc_load);
	TU_RUN(calc_avgs_full_pressure_5_periods);
	TU_RUN(calc_avgs_half_pressure_converges_to_50_00);
	TU_RUN(calc_avgs_missed_periods_decay);
	TU_RUN(update_averages_on_time);
	TU_RUN(update_averages_clamps_and_carries_excess);
	TU_RUN(update_averages_late_work_keeps_fixed_grid);
	TU_RUN(update_averages_missed_periods);
	TU_RUN(cpu_recent_times_live_state_and_wrap);
	TU_RUN(cpu_recent_times_absorb_a_period_ended_before_the_sample);
	TU_RUN(cpu_change_records_old_states_then_recomputes);
	TU_RUN(lazy_periods_equal_eager_periods);
	TU_RUN(record_times_ignores_an_earlier_time);
	TU_RUN(warmup_steady_share_is_shown_from_the_first_period);
	TU_RUN(warmup_ends_exactly_and_then_is_the_kernels_arithmetic);
	TU_RUN(warmup_counts_missed_periods_as_seen);
	TU_RUN(warmup_meets_the_kernel_10s_after_a_midload);
	TU_RUN(unfolded_first_period_only_in_the_totals);
	TU_RUN(no_warmup_is_the_kernels_arithmetic_from_the_load);
	return tu_exit();
}
