/* SPDX-License-Identifier: GPL-2.0 */
/*
 * FXT trace -> struct snap_report: walks the records of a trace with
 * write/fxtread's stream mode (the bytes come in pieces, so the whole
 * decompressed trace is never held) and feeds threads' names, duration events (begin, end,
 * complete; a begin's inferred_start_time arg) and the sampling marker
 * counter to the report. Pure: bytes in, report fed.
 */
#ifndef SNAP_REPORT_FXTIN_H
#define SNAP_REPORT_FXTIN_H

#include <stddef.h>
#include <stdint.h>

#include "report/report.h"
#include "write/fxtread.h"

struct snap_report_fxtin {
	uint64_t records;   /* records read */
	uint64_t bad;	    /* malformed records skipped */
	uint64_t first_bad; /* record number of the first */
	char why[192];	    /* what was wrong with it */
	char fatal[256];    /* why the trace could not be read (an error return) */
};

/* A walk over a trace that arrives in pieces: snap_report_fxt_begin, then
 * snap_report_fxt_feed for each piece (copied; any size), then
 * snap_report_fxt_end, always (it releases the walk). Each returns 0 or the
 * error that ended the walk (as snap_report_read_fxt; later feeds are then
 * no-ops). Memory: the reader's string and thread tables and one record. */
struct snap_report_fxtstream {
	struct snap_fxtread rd;
	uint32_t *cache; /* report string id by FXT string index */
	struct snap_report *r;
	struct snap_report_fxtin *in;
	int err, live;
};

/* The walk above: snap_report_fxt_begin, snap_report_fxt_feed (one piece),
 * snap_report_fxt_end. */
int snap_report_fxt_begin(struct snap_report_fxtstream *s, struct snap_report *r,
			  struct snap_report_fxtin *in);
int snap_report_fxt_feed(struct snap_report_fxtstream *s, const void *data, size_t len);
int snap_report_fxt_end(struct snap_report_fxtstream *s);

/* Feeds every record of the FXT trace (data, len) to r. Returns 0, -ENOMEM,
 * or -SNAP_EFORMAT / -SNAP_ETRUNC / -SNAP_EPARSE when the trace cannot be
 * read on (in->fatal says where and why, e.g. "record #3: ..."). Malformed
 * records that can be skipped are counted in in->bad. */
int snap_report_read_fxt(struct snap_report *r, const void *data, size_t len,
			 struct snap_report_fxtin *in);

#endif
