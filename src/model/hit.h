/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What run and attach know about the traced processes besides perf's data:
 * the trigger hits (record/trigger reads them, parse/hitsfile keeps them for a
 * later decode, stack/builder marks them on a "Snapshot symbol hits" track)
 * and the command lines they started or found.
 */
#ifndef SNAP_MODEL_HIT_H
#define SNAP_MODEL_HIT_H

#include <stdint.h>

/* A trigger hit, in perf time. */
struct snap_hit {
	uint64_t time; /* perf clock, ns (same clock as perf record's default) */
	int32_t pid, tid;
	uint64_t ip;
	const char *symbol; /* the function hit (borrowed; parse/hitsfile owns its copies) */
	/* a stop indicator's payload and the perf time of the TSC it passed
	 * (0 = none): the hit slice then starts at that time and carries them */
	int has_arg;
	int64_t arg;
	uint64_t passed_time;
};

/* A known process name (run/attach know the command line). born: the
 * recording began at the process's first instruction (run's program with
 * -full-execution, sampling), so its main thread (tid = pid) is born at the
 * data's start (docs/sampling.md "Threads born and exiting"). */
struct snap_procname {
	int32_t pid;
	const char *name; /* borrowed, or NULL */
	int born;
};

#endif
