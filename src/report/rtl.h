/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report's timeline: a consumer that feeds a struct snap_report (so a
 * decode can be reported on without writing FXT; decode -report puts it
 * beside the FXT writer with model/tlcomb.h's tee).
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

#endif
