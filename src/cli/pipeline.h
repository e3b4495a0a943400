/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The decode pipeline shared by decode, run and attach:
 * input (perf.data via perf script, perf script text, or stdin) -> events ->
 * call stacks -> FXT written to a temporary file renamed into place.
 */
#ifndef SNAP_CLI_PIPELINE_H
#define SNAP_CLI_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "model/event.h"

/* A trigger hit to mark on its own track. */
struct snap_hit {
	uint64_t time; /* perf time, ns */
	int32_t pid, tid;
	uint64_t ip;
	const char *symbol; /* borrowed */
	/* a stop indicator's arguments: payload, and the perf time of the TSC it
	 * passed (0 = none) */
	int has_arg;
	int64_t arg;
	uint64_t passed_time;
};

/* A known process name (from run/attach: the command line). */
struct snap_procname {
	int32_t pid;
	const char *name; /* borrowed */
};

struct snap_decode_opts {
	const char *input; /* perf.data, perf script text, or "-" (stdin); NULL = "perf.data" */
	const char *const *inputs; /* or ninputs inputs: successive snapshots, in time order */
	size_t ninputs;
	const char *output; /* NULL = "trace.fxt.gz"; ".gz" suffix = gzip */
	enum snap_scope scope;
	int strict_scope;     /* scope violation = error, nothing written */
	int no_dlfilter;      /* force the text path */
	const char *perf;     /* perf binary; NULL = snap_caps_perf_path() */
	const char *vmlinux;  /* kernel image for kernel symbols (perf --vmlinux), or NULL */
	const char *kallsyms; /* kernel symbol list (perf --kallsyms), or NULL */
	const struct snap_hit *hits;
	size_t nhits;
	const struct snap_procname *names;
	size_t nnames;
	const char *executable; /* the traced program (OCaml exception notes), or NULL */
	/* -filter: write only from a call to filter_start to the next call to
	 * filter_stop (symbol names; both NULL = no filter) */
	const char *filter_start, *filter_stop;
	int stitch_lbr; /* sampled with stitched LBR call graphs: perf script --stitch-lbr */
	int print_perf_commands;    /* say (stderr) each perf script command run */
	const char *perf_map_files; /* -perf-map-file: comma-separated perf-PID.map files */
};

/* Runs the whole decode. Prints one-line errors and warnings itself.
 * Returns 0 on success, else a negative error (already reported). */
int snap_decode_run(const struct snap_decode_opts *o);

#endif
