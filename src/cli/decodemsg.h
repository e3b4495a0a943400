/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sentences a decode says to the user (decode, run, attach), worded in
 * cli/ from the facts the lower layers return. Each function writes one line
 * (no newline, no "snaptrace: " prefix) into buf and returns 1, or returns 0
 * with buf "" when there is nothing to say (and 0 for size 0).
 */
#ifndef SNAP_CLI_DECODEMSG_H
#define SNAP_CLI_DECODEMSG_H

#include <stddef.h>

/* --- from stack/ (the stack builder's counters, stack/decoder.h) --- */
#include "stack/decoder.h"

/* "stack quality: ..." when snap_decoder_quality finds too many cut chains
 * or frames without a symbol: names the fixes (dwarf call graphs or frame
 * pointers, debug symbols). */
int snap_decodemsg_quality(const struct snap_decoder_stats *s, char *buf, size_t size);
/* "context switches: N out (M preempted), ..." when any switch was seen. */
int snap_decodemsg_switches(const struct snap_decoder_stats *s, char *buf, size_t size);
/* Without switch records: "N gaps of more than ... inferred as off-CPU ..."
 * when any gap was inferred. */
int snap_decodemsg_gaps(const struct snap_decoder_stats *s, char *buf, size_t size);
/* "call chains: N of M user frames without a symbol; K chains cut ..." for
 * traces with samples. */
int snap_decodemsg_chains(const struct snap_decoder_stats *s, char *buf, size_t size);
/* --- end from stack/ --- */

#endif
