/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Timelines for the report: a consumer that feeds a struct snap_report
 * (so a decode can be reported on without writing FXT), and a tee that
 * sends every op to two timelines (decode -report: FXT and report).
 */
#ifndef SNAP_REPORT_RTL_H
#define SNAP_REPORT_RTL_H

#include "model/timeline.h"
#include "report/report.h"

struct snap_report_tl {
	struct snap_timeline base;
	struct snap_report *r;			 /* borrowed */
	uint32_t inferred, sampling, period_arg; /* strtab ids of the names it looks for */
	uint32_t inlined, inferred_end, sampled;
};

/* Makes t a timeline feeding r (names are ids of r's strtab). Returns 0 or -ENOMEM. */
int snap_report_tl_init(struct snap_report_tl *t, struct snap_report *r);

struct snap_tee_tl {
	struct snap_timeline base;
	struct snap_timeline *a, *b; /* borrowed */
};

/* Every op goes to a then b; the first error is returned. */
void snap_tee_tl_init(struct snap_tee_tl *t, struct snap_timeline *a, struct snap_timeline *b);

#endif
