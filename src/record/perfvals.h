/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The values of the recording flags that shape the perf record command
 * (record/perfargs): -timer-resolution, -callgraph-mode, -snapshot-size and
 * -events, with pure parsers (no I/O) for snaptrace's and magic-trace's spellings.
 */
#ifndef SNAP_RECORD_PERFVALS_H
#define SNAP_RECORD_PERFVALS_H

#include <stddef.h>
#include <stdint.h>

/* -timer-resolution */
enum snap_res_kind {
	SNAP_RES_LOW = 0,
	SNAP_RES_NORMAL,
	SNAP_RES_HIGH,
	SNAP_RES_SAMPLE, /* sampling only: an explicit frequency */
	SNAP_RES_CUSTOM, /* Intel PT only: explicit intel_pt config terms */
};

/* Custom intel_pt fields, in the fixed output order of docs/behaviour.md §2.3. */
enum snap_res_field {
	SNAP_RES_CYC = 0,
	SNAP_RES_CYC_THRESH,
	SNAP_RES_MTC,
	SNAP_RES_MTC_PERIOD,
	SNAP_RES_NORETCOMP,
	SNAP_RES_PSB_PERIOD,
	SNAP_RES_NFIELDS,
};

/* The intel_pt config term of each field ("cyc", "mtc_period", ...). */
extern const char *const snap_res_field_names[SNAP_RES_NFIELDS];

struct snap_res {
	enum snap_res_kind kind;
	uint64_t freq;			/* SAMPLE */
	uint8_t has[SNAP_RES_NFIELDS];	/* CUSTOM: which fields were given */
	uint64_t val[SNAP_RES_NFIELDS]; /* CUSTOM: booleans are 0/1 */
};

/* Parses "Low", "Normal", "High" (any case), magic-trace's sexps
 * "(Sample (freq N))" and "(Custom (cyc true) (mtc_period 0) ...)", and the
 * friendlier "Sample:N" and "Custom:cyc=1,mtc_period=0". Returns 0, or
 * -SNAP_EUSAGE for anything else (out is then unspecified). */
int snap_res_parse(const char *s, struct snap_res *out);

/* -callgraph-mode (sampling only) */
enum snap_cg {
	SNAP_CG_AUTO = 0, /* lbr where the CPU has it, else fp (see perfargs.c) */
	SNAP_CG_LBR,	  /* stitched LBR (perf script --stitch-lbr) */
	SNAP_CG_LBR_NOSTITCH,
	SNAP_CG_FP,
	SNAP_CG_DWARF,
};

/* Parses auto, lbr, lbr-no-stitch, fp, dwarf, Frame_pointers, Dwarf,
 * "(Last_branch_record (stitched true|false))", "(Last_branch_record)" (stitched).
 * Returns 0 or -SNAP_EUSAGE. */
int snap_cg_parse(const char *s, enum snap_cg *out);
/* Returns the perf --call-graph word: "lbr", "fp", "dwarf" (never NULL). */
const char *snap_cg_name(enum snap_cg cg);

/* Parses a size: a number (fractions allowed) and a unit B/K/M/G/T (binary
 * multiples; "KB", "KiB" and lower case accepted). Returns 0 and *bytes, or
 * -SNAP_EUSAGE (also for values >= 2^63). */
int snap_size_parse(const char *s, uint64_t *bytes);

/* Snapshot size to pages (docs/behaviour.md §2.3): < 4096 bytes -> 1 page, > 2^48 bytes ->
 * 2^36 pages, else ceil(bytes / 4096) rounded up to a power of two.
 * *inexact (may be NULL) is set when the result differs from bytes/4096. */
uint64_t snap_size_pages(uint64_t bytes, int *inexact);

/* -events entries (extra sampled events) */
enum snap_xev_name { SNAP_XEV_BRANCH_MISSES = 0, SNAP_XEV_CACHE_MISSES };
enum snap_xev_prec {
	SNAP_PREC_ARBITRARY = 0, /* "" */
	SNAP_PREC_CONSTANT,	 /* p */
	SNAP_PREC_REQ_ZERO,	 /* pp */
	SNAP_PREC_ZERO,		 /* ppp */
	SNAP_PREC_MAX,		 /* P */
};
struct snap_xev {
	enum snap_xev_name name;
	int by_freq; /* 1: freq=N, 0: period=N */
	uint64_t n;
	enum snap_xev_prec prec;
};
#define SNAP_XEV_MAX 2

/* perf's event name of each snap_xev_name, and the modifier of each precision. */
extern const char *const snap_xev_names[];
extern const char *const snap_xev_prec_mods[];

/* Parses a comma list of branch-misses, cache-misses or record sexps
 * "((when_to_sample (Period N)) (name Branch_misses) (precision Zero_skid))".
 * Duplicated names are an error. Returns 0 with *n set, or -SNAP_EUSAGE. */
int snap_xev_parse(const char *s, struct snap_xev *out, size_t *n);

#endif
