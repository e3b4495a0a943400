/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader of the dlfilter record stream (model/dlrec.h), the fast path's
 * counterpart of parse/perfscript: bytes in (any chunking), struct snap_event
 * out, with the same events, names and addresses the text parser produces for
 * the same perf data (parse/perfscript.h): "[unknown @ 0xADDR (DSO)]" names
 * ("[unknown]" as DSO when there is none; no name at all for ip 0), SAMPLE for
 * the primary sampled event and EXTRA for any other (parse/primary.h),
 * frames outermost first, a sample without a call chain as one frame (its ip),
 * sched:sched_switch samples as SNAP_EV_SWITCH (out, with their chain).
 * Pure (no I/O) unless given a parse/cfi cache (snap_dlrec_set_cfi), which reads
 * the DSO files named to give stripped code of call chains the name of its
 * function's start: "[unknown @ 0xSTART (DSO)]", off = ADDR - START.
 *
 *   snap_dlrec_init(&r, names);
 *   while (read(fd, buf, n) > 0) {
 *           snap_dlrec_feed(&r, buf, n);
 *           while ((err = snap_dlrec_next(&r, &ev)) > 0) use(&ev);
 *           if (err < 0) fail(snap_dlrec_offset(&r));
 *   }
 *   err = snap_dlrec_finish(&r);   // -SNAP_ETRUNC without an END record
 *   snap_dlrec_fini(&r);
 */
#ifndef SNAP_PARSE_DLREC_H
#define SNAP_PARSE_DLREC_H

#include <stddef.h>
#include <stdint.h>

#include "model/event.h"
#include "parse/cfi.h"
#include "parse/primary.h"
#include "util/strtab.h"
#include "util/u64map.h"

/* What the plugin reported in its END record, and what the reader counted. */
struct snap_dlrec_stats {
	uint64_t records;  /* records read (END excluded) */
	uint64_t branches; /* BRANCH records */
	uint64_t samples;  /* SAMPLE + EXTRA records */
	uint64_t powers;   /* POWER records */
	uint64_t texts;	   /* TEXT records */
	uint64_t skipped;  /* records of unknown kinds, skipped */
	uint64_t dropped;  /* from END: branches the plugin did not send */
	uint64_t errors;   /* from END: samples the plugin could not encode */
};

struct snap_dlrec {
	struct snap_strtab *names; /* borrowed */
	uint8_t *buf;		   /* unconsumed input is buf[pos..len) */
	size_t len, cap, pos;
	uint64_t base;	 /* stream offset of buf[0] */
	uint64_t recpos; /* stream offset of the record being (or last) decoded */
	uint32_t *ids;	 /* plugin string id -> strtab id; ids[0] = 0 */
	size_t nids, idcap;
	struct snap_loc *frames;
	size_t fcap;
	struct snap_u64map unknown; /* addr -> (strtab id << 32 | dso) for "[unknown @ ...]" */
	struct snap_u64map comms;   /* pid << 32 | tid -> comm strtab id */
	uint64_t last_key;	    /* the last thread looked up in comms, and its comm */
	uint32_t last_comm;
	struct snap_dlrec_stats st;
	struct snap_primary prim; /* which sampled event builds stacks */
	uint32_t switch_id;	  /* strtab id of "sched:sched_switch" once seen, else 0 */
	struct snap_cfi *cfi;	  /* borrowed; NULL: unknown code named per address */
	const uint8_t *text;	  /* the last TEXT record's bytes, in buf */
	uint32_t textlen;
	int have_header, have_end;
	int err; /* sticky */
};

/* Initialises r; names is borrowed and must outlive r. */
void snap_dlrec_init(struct snap_dlrec *r, struct snap_strtab *names);
/* Frees everything r owns; r is left zeroed (a second fini is harmless). */
void snap_dlrec_fini(struct snap_dlrec *r);
/* Appends (buf, len) to the input (copied). Returns 0, -ENOMEM, or the sticky error. */
int snap_dlrec_feed(struct snap_dlrec *r, const void *buf, size_t len);
/* snap_dlrec_next() result: a TEXT record (model/dlrec.h), perf's stdout text
 * at this point of the stream; get it with snap_dlrec_text() and feed it to a
 * perf script text parser before taking the next event. */
#define SNAP_DLREC_TEXT_POINT 2

/*
 * Decodes the next event into *ev (every field set). Returns 1 with an event,
 * SNAP_DLREC_TEXT_POINT (2, *ev untouched) at a TEXT record, 0 if more input is
 * needed (or the stream has ended), or a negative error:
 * -SNAP_EPLUGIN for a malformed stream (bad magic or version, a record too
 * short for its kind, an undefined string id, counts in END that do not match,
 * data after END), -ENOMEM. Errors are sticky; snap_dlrec_offset() tells where.
 * ev->frames is borrowed from r until the next call.
 */
int snap_dlrec_next(struct snap_dlrec *r, struct snap_event *ev);
/* Call at end of input. Returns 0 if the stream ended with a valid END record
 * and nothing after it, -SNAP_ETRUNC if it was cut short, or the sticky error. */
int snap_dlrec_finish(struct snap_dlrec *r);
/* Returns the stream byte offset of the record last decoded (or that failed). */
uint64_t snap_dlrec_offset(const struct snap_dlrec *r);
/* Returns the counters (borrowed; valid until fini). */
const struct snap_dlrec_stats *snap_dlrec_stats(const struct snap_dlrec *r);
/* Tells the reader what the trace is (the perf.data header): SNAP_TRACE_PT or
 * SNAP_TRACE_SAMPLES (parse/primary.h). */
void snap_dlrec_set_mode(struct snap_dlrec *r, enum snap_trace_mode mode);
/* Names unknown call-chain code after its function's start, from the CFI of
 * the DSO files (parse/cfi.h; borrowed, must outlive r; NULL = per address). */
void snap_dlrec_set_cfi(struct snap_dlrec *r, struct snap_cfi *cfi);
/* After SNAP_DLREC_TEXT_POINT: sets *len and returns the text (borrowed until the
 * next next() or feed() call; not NUL-terminated). Else returns NULL, *len 0. */
const char *snap_dlrec_text(const struct snap_dlrec *r, size_t *len);
/* Returns 1 once the END record has been read. */
int snap_dlrec_ended(const struct snap_dlrec *r);

#endif
