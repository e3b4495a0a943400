/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The decode's sentences to the user, in one place: the warnings and -v lines
 * a decode ends with (what was dropped, lost or skipped, and where the trace
 * was written). cli/pipeline.c says them, from the counters the layers below
 * keep.
 */
#ifndef SNAP_CLI_DECODEMSG_H
#define SNAP_CLI_DECODEMSG_H

#include "cli/pipeline.h"
#include "model/timeline.h"
#include "parse/perfscript.h"
#include "stack/decoder.h"
#include "write/fxt.h"

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

/* The decode's end: what stack/decoder dropped or clamped (scope: the trace
 * scope, who: the decode errors' reporter), its -v figures, and "wrote OUTPUT"
 * (output NULL: no file written, no such line). */
void snap_decodemsg_stats(const struct snap_decoder_stats *s, enum snap_scope scope,
			  const char *output, const char *who);

/* What the FXT writer clamped or replaced (timestamps, names not UTF-8). */
void snap_decodemsg_fxt(const struct snap_fxt_stats *s);

#endif
