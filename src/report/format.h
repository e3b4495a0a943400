/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `snaptrace report` prints, built as text in memory (cli/ writes it
 * out): the terminal tables (100 columns), -json (a stable schema, see
 * docs/report.md), -function's histogram and slowest calls, and -folded
 * stacks. All take a finished struct snap_report.
 */
#ifndef SNAP_REPORT_FORMAT_H
#define SNAP_REPORT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "report/report.h"

/* A growable text buffer with a sticky error (-ENOMEM). */
struct snap_rbuf {
	char *p; /* NUL-terminated when len > 0 */
	size_t len, cap;
	int err;
};

/* Frees the text; b is left zeroed (an empty buffer, as {0} starts). */
void snap_rbuf_fini(struct snap_rbuf *b);
/* put appends s[0..n), printf formatted text; after a failure (b->err =
 * -ENOMEM) both do nothing. */
void snap_rbuf_put(struct snap_rbuf *b, const char *s, size_t n);
void snap_rbuf_printf(struct snap_rbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define SNAP_REPORT_WIDTH 100 /* the tables fit in this many columns */

struct snap_report_fmt {
	const char *source; /* what was reported on, for the header */
	size_t top;	    /* functions shown; 0 = all */
	enum snap_report_sort sort;
};

/* "812 ns", "1.23 us", "45.6 ms", "2.00 s" into out (16 bytes). */
const char *snap_report_human(uint64_t ns, char out[16]);
/* Shortens s to at most width bytes by cutting its middle ("ab...yz"), never
 * inside a UTF-8 sequence, after escaping what a terminal would obey
 * (util/esc.h: a program named "\e]0;X\a" cannot set the title). out has
 * width + 1 bytes. */
const char *snap_report_shorten(const char *s, size_t width, char *out);

/* After snap_report_finish: append the report to b, as text tables
 * (snap_report_text) or as JSON (snap_report_json, docs/report.md); an
 * allocation failure sets b->err. */
void snap_report_text(const struct snap_report *r, const struct snap_report_fmt *f,
		      struct snap_rbuf *b);
void snap_report_json(const struct snap_report *r, const struct snap_report_fmt *f,
		      struct snap_rbuf *b);
/* -function: the function's figures, its duration histogram (power-of-two
 * buckets) and its slowest calls. */
void snap_report_function(const struct snap_report *r, struct snap_rbuf *b);
/* One line per call stack with self time: "outer;inner;leaf SELF_NS". */
void snap_report_folded(const struct snap_report *r, struct snap_rbuf *b);

#endif
