/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names layers exchange through the string table and the trace: the
 * parsers and ptdec name the code perf found no symbol for, stack/ writes
 * slices, counters and args that report/ reads back (docs/report.md). One
 * spelling each, so the writer and the readers cannot drift apart.
 */
#ifndef SNAP_MODEL_NAMES_H
#define SNAP_MODEL_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* A DSO (or a return span, stack/cstack) nobody could name. */
#define SNAP_NAME_UNKNOWN      "[unknown]"
/* Every name of code without a symbol starts so ("[unknown]" too). */
#define SNAP_NAME_UNKNOWN_STEM "[unknown"
/* ... and those built by snap_unknown_name start so. */
#define SNAP_NAME_UNKNOWN_AT   "[unknown @ "
/* Slices of decode errors: SNAP_NAME_DECODE_ERROR ": MESSAGE]". */
#define SNAP_NAME_DECODE_ERROR "[decode error"
/* Off-CPU slices: "[off-CPU]" and "[off-CPU: REASON]" (docs/sampling.md). */
#define SNAP_NAME_OFFCPU_STEM  "[off-CPU"
#define SNAP_NAME_OFFCPU       SNAP_NAME_OFFCPU_STEM "]"
/* The counter written on each sampled thread (docs/report.md); its arg
 * SNAP_ARG_PERIOD is the sample period in ns. */
#define SNAP_NAME_SAMPLING     "snaptrace.sampling"
#define SNAP_ARG_PERIOD	       "period_ns"
/* A begin's arg: its start time is inferred (unknown). */
#define SNAP_ARG_INFERRED      "inferred_start_time"
/* An end's arg: snaptrace closed the slice at the end of the data. */
#define SNAP_ARG_INFERRED_END  "inferred_end_time"
/* A frame perf found inlined (docs/report.md). */
#define SNAP_ARG_INLINED       "inlined"
/* An end's arg: ns of the samples whose leaf the slice was (docs/sampling.md). */
#define SNAP_ARG_SAMPLED       "sampled_ns"

/* The size snap_unknown_name needs for a DSO name of dlen bytes. */
#define SNAP_UNKNOWN_NAME_SIZE(dlen) ((size_t)(dlen) + 40)

/* Writes "[unknown @ 0xADDR (DSO)]" (ADDR lower-case hex, DSO the dlen bytes
 * at dso), or "[unknown @ 0xADDR]" when dso is NULL, into buf, which holds at
 * least SNAP_UNKNOWN_NAME_SIZE(dlen) bytes. Returns the length (no NUL written). */
size_t snap_unknown_name(char *buf, uint64_t addr, const char *dso, size_t dlen);

/* The parts of a "[unknown @ ..." name snap_unknown_parse found. */
struct snap_unknown_parts {
	const char *addr; /* after "[unknown @ ": up to " (" with a DSO, else the rest */
	size_t addr_len;
	const char *dso; /* with a DSO (the name ends " (DSO)]", the first " (" after
			    "[unknown @ " opens it): its text, else NULL */
	size_t dso_len;
};

/* What the name s (n bytes) is: 0 a symbol (it does not start with
 * SNAP_NAME_UNKNOWN_STEM), 1 a name of code without a symbol not starting with
 * SNAP_NAME_UNKNOWN_AT ("[unknown]"), 2 one that does (snap_unknown_name's
 * form), *parts filled (parts may be NULL). */
int snap_unknown_parse(const char *s, size_t n, struct snap_unknown_parts *parts);

#endif
