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
};

/* A known process name (from run/attach: the command line). */
struct snap_procname {
	int32_t pid;
	const char *name; /* borrowed */
};

/* Which Intel PT decoder (docs/ptdec.md). */
enum snap_decoder_kind {
	SNAP_DECODER_PERF = 0, /* perf script (plugin or text) */
	SNAP_DECODER_IPT,      /* in-process libipt decoder; perf when it cannot */
	SNAP_DECODER_AUTO,     /* the in-process one when it supports the recording */
};

/* "perf", "ipt", "auto" (or $SNAPTRACE_DECODER's value). Returns 0 or -1. */
int snap_decoder_kind_parse(const char *s, enum snap_decoder_kind *k);

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
	enum snap_decoder_kind decoder; /* -decoder; else $SNAPTRACE_DECODER */
	int jobs;			/* -j: in-process decoder threads, 0 = cores */
};

/* Runs the whole decode. Prints one-line errors and warnings itself.
 * Returns 0 on success, else a negative error (already reported). */
int snap_decode_run(const struct snap_decode_opts *o);

#endif
