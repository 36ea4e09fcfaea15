/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tu.h: the smallest test harness that does the job.
 *
 * A test is a void function that makes checks with TU_CHECK/TU_EQ. tu_run()
 * prints "PASS <name>" or "FAIL <name>: <first failed check>" for it. A test
 * that made no check at all fails: every test must assert something real.
 * The binary's exit status is nonzero if any test failed (tu_exit()).
 *
 * The sanitizer build defines TU_VARIANT (e.g. "@san"): it is appended to
 * every test name so that both builds report distinct lines.
 */
#ifndef TU_H
#define TU_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TU_VARIANT
#define TU_VARIANT ""
#endif

static int tu_failed;		/* the current test has failed */
static unsigned long tu_checks;	/* checks made by the current test */
static char tu_msg[1024];
static int tu_npass, tu_nfail;

__attribute__((format(printf, 3, 4), unused))
static void tu_failf(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (tu_failed)		/* keep the first failure: it is the cause */
		return;
	tu_failed = 1;
	n = snprintf(tu_msg, sizeof(tu_msg), "%s:%d: ", file, line);
	va_start(ap, fmt);
	vsnprintf(tu_msg + n, sizeof(tu_msg) - n, fmt, ap);
	va_end(ap);
}

/* Print a note (seed, context) only if the current test has failed. */
#define TU_FAILED()	(tu_failed)

#define TU_CHECK(cond, ...)						\
	do {								\
		tu_checks++;						\
		if (!(cond))						\
			tu_failf(__FILE__, __LINE__, __VA_ARGS__);	\
	} while (0)

/* Unsigned equality; both sides evaluated once. */
#define TU_EQ(actual, expected)						\
	do {								\
		unsigned long long tu_a_ = (actual);			\
		unsigned long long tu_e_ = (expected);			\
		tu_checks++;						\
		if (tu_a_ != tu_e_)					\
			tu_failf(__FILE__, __LINE__,			\
				 "%s = %llu (0x%llx), expected %llu (0x%llx)", \
				 #actual, tu_a_, tu_a_, tu_e_, tu_e_);	\
	} while (0)

/* Signed equality. */
#define TU_EQS(actual, expected)					\
	do {								\
		long long tu_a_ = (actual);				\
		long long tu_e_ = (expected);				\
		tu_checks++;						\
		if (tu_a_ != tu_e_)					\
			tu_failf(__FILE__, __LINE__,			\
				 "%s = %lld, expected %lld",		\
				 #actual, tu_a_, tu_e_);		\
	} while (0)

#define TU_STREQ(actual, expected)					\
	do {								\
		const char *tu_a_ = (actual), *tu_e_ = (expected);	\
		tu_checks++;						\
		if (strcmp(tu_a_, tu_e_))				\
			tu_failf(__FILE__, __LINE__,			\
				 "%s = \"%s\", expected \"%s\"",	\
				 #actual, tu_a_, tu_e_);		\
	} while (0)

__attribute__((unused))
static void tu_run(const char *name, void (*fn)(void))
{
	tu_failed = 0;
	tu_checks = 0;
	tu_msg[0] = '\0';
	fn();
	if (!tu_failed && !tu_checks)
		tu_failf(__FILE__, __LINE__, "the test made no check");
	if (tu_failed) {
		printf("FAIL %s%s: %s\n", name, TU_VARIANT, tu_msg);
		tu_nfail++;
	} else {
		printf("PASS %s%s\n", name, TU_VARIANT);
		tu_npass++;
	}
	fflush(stdout);
}

#define TU_RUN(fn)	tu_run(#fn, fn)

__attribute__((unused))
static int tu_exit(void)
{
	return tu_nfail ? 1 : 0;
}

#endif /* TU_H */
