/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unit-test framework: one header. A test file defines static void
 * functions and a main() that RUNs them and returns snap_test_done().
 * Each test prints "PASS file:name" or "FAIL file:name"; check.sh counts them.
 * A test of a rule of docs/behaviour.md starts its name with the section,
 * "b4_5_4_" for §4.5.4 (golden cases cite "§4.5.4" in their purpose line), so
 * `grep -r 'b4_5_4_\|§4.5.4' tests` finds the tests of a rule.
 */
#ifndef SNAP_TEST_H
#define SNAP_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int snap_test_cur_failed;
static int snap_test_nfail;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);   \
			snap_test_cur_failed = 1;                                                  \
		}                                                                                  \
	} while (0)

#define CHECK_INT_EQ(exp, act)                                                                     \
	do {                                                                                       \
		long long e_ = (long long)(exp), a_ = (long long)(act);                            \
		if (e_ != a_) {                                                                    \
			fprintf(stderr, "%s:%d: %s == %s: expected %lld, got %lld\n", __FILE__,    \
				__LINE__, #exp, #act, e_, a_);                                     \
			snap_test_cur_failed = 1;                                                  \
		}                                                                                  \
	} while (0)

#define CHECK_U64_EQ(exp, act)                                                                     \
	do {                                                                                       \
		uint64_t e_ = (uint64_t)(exp), a_ = (uint64_t)(act);                               \
		if (e_ != a_) {                                                                    \
			fprintf(stderr,                                                            \
				"%s:%d: %s == %s: expected 0x%" PRIx64 ", got 0x%" PRIx64 "\n",    \
				__FILE__, __LINE__, #exp, #act, e_, a_);                           \
			snap_test_cur_failed = 1;                                                  \
		}                                                                                  \
	} while (0)

#define CHECK_STR_EQ(exp, act)                                                                     \
	do {                                                                                       \
		const char *e_ = (exp), *a_ = (act);                                               \
		if (!a_ || strcmp(e_, a_)) {                                                       \
			fprintf(stderr, "%s:%d: %s == %s: expected \"%s\", got \"%s\"\n",          \
				__FILE__, __LINE__, #exp, #act, e_, a_ ? a_ : "(null)");           \
			snap_test_cur_failed = 1;                                                  \
		}                                                                                  \
	} while (0)

static inline void snap_test_run(const char *file, const char *name, void (*fn)(void))
{
	const char *base = strrchr(file, '/');

	snap_test_cur_failed = 0;
	fn();
	printf("%s %s:%s\n", snap_test_cur_failed ? "FAIL" : "PASS", base ? base + 1 : file, name);
	fflush(stdout);
	snap_test_nfail += snap_test_cur_failed;
}

#define RUN(fn) snap_test_run(__FILE__, #fn, fn)

static inline int snap_test_done(void)
{
	return snap_test_nfail ? 1 : 0;
}

#endif
