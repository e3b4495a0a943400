/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The allocation-failure sweep of the unit tests: alloc_sweep(run, arg, max)
 * calls run(arg) with the allocation after n successful ones failing
 * (util/alloc.h), for n = 0, 1, ... below max, and stops at the first run
 * that succeeds. Every run must give 0 or -ENOMEM and free what it took
 * (ASan sees a leak); at least one must fail and one succeed.
 */
#ifndef SNAP_TEST_ALLOC_SWEEP_H
#define SNAP_TEST_ALLOC_SWEEP_H

#include <errno.h>

#include "snap_test.h"
#include "util/alloc.h"

static void alloc_sweep(int (*run)(const void *arg), const void *arg, long max)
{
	int saw_enomem = 0, saw_ok = 0;

	for (long n = 0; n < max; n++) {
		int err;

		snap_alloc_fail_after(n);
		err = run(arg);
		snap_alloc_fail_after(-1);
		CHECK(err == 0 || err == -ENOMEM);
		saw_enomem |= err == -ENOMEM;
		saw_ok |= err == 0;
		if (err == 0)
			break;
	}
	CHECK(saw_enomem);
	CHECK(saw_ok);
}

#endif
