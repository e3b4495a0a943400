/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A pure FXT (Fuchsia Trace Format) reader over (buf, len), written from the
 * format specification, for `snaptrace dump` and the tests. It walks the
 * records in file order, resolving string and thread refs as it goes (an
 * index may be redefined later: later records see the new value), and
 * returns one decoded record per snap_fxtread_next() call.
 *
 * Three levels of trouble:
 *  - framing errors (no magic, size 0, a record running past the end, a
 *    partial trailing word): next() returns the error and then 0 (end);
 *  - a malformed record (content or an argument overrunning its declared
 *    size): next() returns -SNAP_EPARSE, skips the record by its size, and
 *    the caller may continue;
 *  - semantic problems (undefined string/thread index, index 0 defined,
 *    section of an unknown provider, zero ticks/s): the record is returned
 *    with rec->flags set and the problem described by snap_fxtread_why().
 * Strings point into buf (not NUL-terminated) and stay valid as long as buf.
 * One string/thread table is kept for all providers (snaptrace writes one).
 *
 * write/fxtdesc.h prints a record as one line; write/fxtcheck.h validates a
 * stream of records for `dump -check`.
 */
#ifndef SNAP_WRITE_FXTREAD_H
#define SNAP_WRITE_FXTREAD_H

#include <stddef.h>
#include <stdint.h>

#include "util/u64map.h"
#include "write/fxtfmt.h"

/* rec->flags: semantic problems of the record. */
#define SNAP_FXTREAD_F_UNDEF_STRING   0x01u /* a string ref names an undefined index */
#define SNAP_FXTREAD_F_UNDEF_THREAD   0x02u /* a thread ref names an undefined index */
#define SNAP_FXTREAD_F_UNDEF_PROVIDER 0x04u /* section for a provider never announced */
#define SNAP_FXTREAD_F_INDEX_ZERO     0x08u /* string/thread record for index 0 */
#define SNAP_FXTREAD_F_ZERO_TICKS     0x10u /* initialization with 0 ticks/s */
#define SNAP_FXTREAD_F_BAD_MAGIC      0x20u /* trace info type 0 that is not the magic word */

/* A string inside the trace buffer; s == NULL means undefined (ref kept in ref). */
struct snap_fxt_str {
	const char *s;
	uint32_t len;
	uint16_t ref; /* the 16-bit ref it came from */
};

struct snap_fxtread_arg {
	uint32_t type; /* SNAP_FXT_ARG_* (other values: unknown, skipped by size) */
	struct snap_fxt_str name;
	union {
		int64_t i;		 /* INT32, INT64 */
		uint64_t u;		 /* UINT32, UINT64, POINTER, KOID, BOOL */
		double d;		 /* DOUBLE */
		struct snap_fxt_str str; /* STRING */
	} v;
};

#define SNAP_FXTREAD_MAX_ARGS 15

/* One decoded record. Which fields mean something depends on type/sub. */
struct snap_fxtread_rec {
	uint64_t index;		  /* record number, from 0 */
	uint64_t off;		  /* byte offset in buf */
	uint32_t type;		  /* enum snap_fxt_rec (any 0..15) */
	uint32_t words;		  /* size in 64-bit words, header included */
	uint32_t sub;		  /* metadata type, event type, kernel object type, ... */
	uint32_t flags;		  /* SNAP_FXTREAD_F_* */
	uint64_t id;		  /* provider id; string/thread index; counter/async/flow id */
	struct snap_fxt_str name; /* provider name, string value, event/object name */
	struct snap_fxt_str cat;  /* event category */
	uint64_t ts;		  /* event timestamp (ticks); init: ticks per second */
	uint64_t end;		  /* complete event: end timestamp (ticks) */
	uint64_t pid;		  /* event/thread record: process koid */
	uint64_t tid;		  /* event/thread record: thread koid; kernel object: koid */
	uint32_t nargs;
	struct snap_fxtread_arg args[SNAP_FXTREAD_MAX_ARGS];
};

struct snap_fxtread {
	const unsigned char *buf; /* borrowed */
	size_t len;
	size_t off;		      /* next record */
	uint64_t nrec;		      /* records returned so far */
	struct snap_fxt_str *strings; /* the string table (owned), grown to the highest index */
	size_t str_cap;
	uint64_t threads[256][2]; /* thread table: pid, tid */
	uint8_t thread_def[256];
	struct snap_u64map providers; /* provider ids announced */
	char why[192];		      /* the last problem, for messages */
	/* stream mode (snap_fxtread_init_stream): buf is owned, holds the bytes
	 * from stream offset base on, and strings are owned copies */
	int stream, eof;
	unsigned char *sbuf;
	size_t scap;
	uint64_t base;
	char **owned; /* owned[i]: the copy behind strings[i] (str_cap entries) */
};

/* The largest record a stream reader buffers (a record may announce up to
 * 32 GiB): beyond it, -SNAP_ELIMIT. */
#define SNAP_FXTREAD_MAX_STREAM_REC (64u << 20)

/* Returned by snap_fxtread_next in stream mode: feed more bytes. */
#define SNAP_FXTREAD_MORE 2

/* Prepares r to read (buf, len) (borrowed; must outlive r and the records).
 * Returns 0 or -ENOMEM. Release with snap_fxtread_fini. */
int snap_fxtread_init(struct snap_fxtread *r, const void *buf, size_t len);
void snap_fxtread_fini(struct snap_fxtread *r);

/* Stream mode, for traces that do not fit in memory: bytes come in pieces
 * through snap_fxtread_feed (copied), snap_fxtread_next returns records as
 * they complete and SNAP_FXTREAD_MORE when it needs more bytes; after
 * snap_fxtread_feed_end, it reports what is left as usual (0 at a clean
 * end, -SNAP_ETRUNC for a cut record). Memory: the string table (owned
 * copies), the thread table and one record (at most
 * SNAP_FXTREAD_MAX_STREAM_REC). The magic is checked with the first 8 bytes.
 * Records and their strings are borrowed until the next feed or next call. */
int snap_fxtread_init_stream(struct snap_fxtread *r);
int snap_fxtread_feed(struct snap_fxtread *r, const void *buf, size_t len);
void snap_fxtread_feed_end(struct snap_fxtread *r);

/* Decodes the next record into *rec. Returns 1 (a record), 0 (end of
 * trace), -SNAP_EFORMAT (the buffer does not start with the FXT magic),
 * -SNAP_ETRUNC (a record runs past the end, or a partial trailing word),
 * -SNAP_EPARSE (a zero-size record: fatal; or a malformed record, skipped:
 * calling next() again continues after it). rec->index/off are set even on
 * errors. Strings in rec are borrowed from buf. */
int snap_fxtread_next(struct snap_fxtread *r, struct snap_fxtread_rec *rec);

/* The last problem (error return or rec->flags) as a phrase without the
 * record position, e.g. "undefined string index 12". Borrowed from r. */
const char *snap_fxtread_why(const struct snap_fxtread *r);

/* 1 if the record is shown by default in dumps (events, kernel objects). */
int snap_fxtread_is_default(const struct snap_fxtread_rec *rec);

#endif
