/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The decode's sentences to the user, in one place: the warnings and -v lines
 * a decode ends with (what was dropped, lost or skipped, and where the trace
 * was written), worded in cli/ from the facts and counters the lower layers
 * return. The snap_decodemsg_quality/switches/gaps/chains functions write one
 * line (no newline, no "snaptrace: " prefix) into buf and return 1, or return
 * 0 with buf "" when there is nothing to say (and 0 for size 0); the others
 * print.
 */
#ifndef SNAP_CLI_DECODEMSG_H
#define SNAP_CLI_DECODEMSG_H

#include <stddef.h>

#include "cli/pipeline.h"
#include "model/timeline.h"
#include "parse/perfscript.h"
#include "stack/builder.h"
#include "write/fxt.h"

/* --- from stack/ (the stack builder's counters, stack/builder.h) --- */

/* "stack quality: ..." when snap_builder_quality finds too many cut chains
 * or frames without a symbol: names the fixes (dwarf call graphs or frame
 * pointers, debug symbols). */
int snap_decodemsg_quality(const struct snap_builder_stats *s, char *buf, size_t size);
/* "context switches: N out (M preempted), ..." when any switch was seen. */
int snap_decodemsg_switches(const struct snap_builder_stats *s, char *buf, size_t size);
/* Without switch records: "N gaps of more than ... inferred as off-CPU ..."
 * when any gap was inferred. */
int snap_decodemsg_gaps(const struct snap_builder_stats *s, char *buf, size_t size);
/* "call chains: N of M user frames without a symbol; K chains cut ..." for
 * traces with samples. */
int snap_decodemsg_chains(const struct snap_builder_stats *s, char *buf, size_t size);
/* --- end from stack/ --- */

/* --- from cli/pipeline.c --- */

/* Perfetto keeps 512 levels of nesting on a track and silently drops deeper
 * slices: the decode drops them instead, and says so. */
#define SNAP_DECODE_MAX_DEPTH SNAP_MAX_NESTING

/* The lines of input name its parser did not understand, and the call-chain
 * frames it dropped (ps: snap_source_stats; NULL = no text parsed: nothing). */
void snap_decodemsg_unknown(const char *name, const struct snap_perfscript_stats *ps);

/* What perf lost while recording (its PERF_RECORD_LOST and LOST_SAMPLES
 * records), in our words; run/attach add the flag that loses less. */
void snap_decodemsg_lost(const struct snap_decode_result *r);

/* The decode's end: what stack/builder dropped or clamped (scope: the trace
 * scope, who: the decode errors' reporter), its -v figures, and "wrote OUTPUT"
 * (output NULL: no file written, no such line). */
void snap_decodemsg_stats(const struct snap_builder_stats *s, enum snap_scope scope,
			  const char *output, const char *who);

/* What the FXT writer clamped or replaced (timestamps, names not UTF-8). */
void snap_decodemsg_fxt(const struct snap_fxt_stats *s);

#endif
