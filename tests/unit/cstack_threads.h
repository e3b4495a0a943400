/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test helper shared by test_cstack.c and test_sampdiff.c: a small fixed
 * table of per-thread cstacks, created on a thread's first event.
 */
#ifndef SNAP_TEST_CSTACK_THREADS_H
#define SNAP_TEST_CSTACK_THREADS_H

#include <stddef.h>

#include "model/event.h"
#include "stack/cstack.h"
#include "util/err.h"

/* Sets *out to ev's thread in cs[0..*n), creating it (if fewer than max exist).
 * Returns 0, -SNAP_ELIMIT when the table is full, or snap_cstack_init's error. */
static inline int cstack_threads_get(struct snap_cstack *cs, size_t *n, size_t max,
				     struct snap_cstack_ctx *ctx, const struct snap_event *ev,
				     struct snap_cstack **out)
{
	int err;

	for (size_t i = 0; i < *n; i++) {
		if (cs[i].tid == ev->tid) {
			*out = &cs[i];
			return 0;
		}
	}
	if (*n == max)
		return -SNAP_ELIMIT;
	err = snap_cstack_init(&cs[*n], ctx, ev->pid, ev->tid, ev->has_time ? ev->time : 0);
	if (err < 0) {
		snap_cstack_fini(&cs[*n]);
		return err;
	}
	*out = &cs[(*n)++];
	return 0;
}

/* Ends every thread at its last event time; returns 0 or the first error. */
static inline int cstack_threads_end(struct snap_cstack *cs, size_t n)
{
	int err = 0, e;

	for (size_t i = 0; i < n; i++) {
		e = snap_cstack_end_thread(&cs[i], cs[i].last_event_time);
		if (e < 0 && !err)
			err = e;
	}
	return err;
}

#endif
