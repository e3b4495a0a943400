/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The decode pipeline shared by decode, run and attach:
 * input (source/source.h: perf.data via ptdec or perf script, perf script
 * text, or stdin) -> events -> call stacks -> FXT written to a temporary file
 * renamed into place.
 */
#ifndef SNAP_CLI_PIPELINE_H
#define SNAP_CLI_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "model/event.h"
#include "model/hit.h"
#include "model/timeline.h"
#include "source/source.h"
#include "stack/builder.h"
#include "stack/thcover.h"
#include "util/strtab.h"

/* A second consumer of the timeline (snaptrace report, -report): open() is
 * called with the decode's string table and returns a timeline that gets
 * every op too; close() is called at the end (err: 0 once the trace is
 * written) while the string table is still alive. */
struct snap_decode_tap {
	struct snap_timeline *(*open)(void *ctx, struct snap_strtab *st);
	void (*close)(void *ctx, int err);
	void *ctx;
	int no_output; /* write no FXT file: the tap is the only consumer */
};

/* What a decode saw, for run/attach's coverage line. */
struct snap_decode_result {
	uint64_t events;
	/* the samples and branches, and the perf times (ns) of the first and last */
	struct snap_feed_count fed;
	int dwarf; /* a perf.data input samples user stack copies (dwarf call graphs) */
	/* what perf lost while recording (parse/perfdata.h, snap_perfdata_lost) */
	uint64_t lost_records, lost_chunks, lost_samples, perf_samples;
	/* in: when not NULL, fed every sample and switch (stack/thcover.h: the
	 * per-thread coverage of run/attach); owned by the caller */
	struct snap_thcover *cover;
};

struct snap_decode_opts {
	const char *input; /* perf.data, perf script text, or "-" (stdin); NULL = "perf.data" */
	const unsigned char *stdin_head; /* "-": its first bytes, already read (<= 8) */
	size_t nstdin_head;
	const char *const *inputs; /* or ninputs inputs: successive snapshots, in time order */
	size_t ninputs;
	const char *output; /* NULL = "trace.fxt.gz"; ".gz" suffix = gzip */
	enum snap_scope scope;
	int strict_scope;	     /* scope violation = error, nothing written */
	int per_call_args;	     /* -per-call-args (snap_builder_opts) */
	int no_dlfilter;	     /* force the text path */
	const char *perf;	     /* perf binary; NULL = snap_caps_perf_path() */
	const char *vmlinux;	     /* kernel image for kernel symbols (perf --vmlinux), or NULL */
	const char *kallsyms;	     /* kernel symbol list (perf --kallsyms), or NULL */
	const struct snap_hit *hits; /* trigger hits to mark on their own track */
	size_t nhits;
	const struct snap_procname *names;
	size_t nnames;
	const char *executable; /* the traced program (OCaml exception notes), or NULL */
	/* -filter: write only from a call to filter_start to the next call to
	 * filter_stop (symbol names; both NULL = no filter) */
	const char *filter_start, *filter_stop;
	int stitch_lbr; /* sampled with stitched LBR call graphs: perf script --stitch-lbr */
	int print_perf_commands;	   /* say (stderr) each perf script command run */
	const char *perf_map_files;	   /* -perf-map-file: comma-separated perf-PID.map files */
	enum snap_pt_decoder decoder;	   /* -decoder; else $SNAPTRACE_DECODER */
	int jobs;			   /* -j: in-process decoder threads, 0 = cores */
	const struct snap_decode_tap *tap; /* or NULL */
	int quiet_empty; /* no sample nor branch, no hits: -ENODATA, no message (the caller
			    says why) */
	struct snap_decode_result *result; /* filled when not NULL */
	int *output_fd; /* when not NULL: the written trace's descriptor (-serve serves it; the
			   caller closes it), -1 when none or not a regular file */
};

/* Runs the whole decode. Prints one-line errors and warnings itself.
 * Returns 0 on success, else a negative error (already reported, except
 * -ENODATA with quiet_empty). A recording with no events but trigger hits
 * still gives a trace: the hits alone. */
int snap_decode_run(const struct snap_decode_opts *o);

#endif
