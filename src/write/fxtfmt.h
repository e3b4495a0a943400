/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the writer (write/fxt.c) and the reader (write/fxtread.c) share of the
 * Fuchsia trace format: the type codes (records, metadata, events, arguments,
 * kernel objects) and the packed fields of header words. Each header field
 * is "LO, HI": its first and last bit, so fxt_get(w, FXT_EV_NAME) reads it
 * and fxt_pack(v, FXT_EV_NAME) places v there (the writer passes values that
 * fit).
 */
#ifndef SNAP_WRITE_FXTFMT_H
#define SNAP_WRITE_FXTFMT_H

#include <stdint.h>

/* Record types. */
enum snap_fxt_rec {
	SNAP_FXT_METADATA = 0,
	SNAP_FXT_INIT = 1,
	SNAP_FXT_STRING = 2,
	SNAP_FXT_THREAD = 3,
	SNAP_FXT_EVENT = 4,
	SNAP_FXT_BLOB = 5,
	SNAP_FXT_USEROBJ = 6,
	SNAP_FXT_KOBJ = 7,
	SNAP_FXT_SCHED = 8,
	SNAP_FXT_LOG = 9,
	SNAP_FXT_LARGE = 15,
};

/* Metadata types (rec->sub of a metadata record). */
enum {
	SNAP_FXT_MD_PROVIDER_INFO = 1,
	SNAP_FXT_MD_PROVIDER_SECTION = 2,
	SNAP_FXT_MD_PROVIDER_EVENT = 3,
	SNAP_FXT_MD_TRACE_INFO = 4, /* trace info type 0 is the magic record */
};

/* Event types (rec->sub of an event record). */
enum {
	SNAP_FXT_EV_INSTANT = 0,
	SNAP_FXT_EV_COUNTER = 1,
	SNAP_FXT_EV_BEGIN = 2,
	SNAP_FXT_EV_END = 3,
	SNAP_FXT_EV_COMPLETE = 4,
	SNAP_FXT_EV_ASYNC_BEGIN = 5,
	SNAP_FXT_EV_ASYNC_INSTANT = 6,
	SNAP_FXT_EV_ASYNC_END = 7,
	SNAP_FXT_EV_FLOW_BEGIN = 8,
	SNAP_FXT_EV_FLOW_STEP = 9,
	SNAP_FXT_EV_FLOW_END = 10,
};

/* Argument types. */
enum {
	SNAP_FXT_ARG_NULL = 0,
	SNAP_FXT_ARG_INT32 = 1,
	SNAP_FXT_ARG_UINT32 = 2,
	SNAP_FXT_ARG_INT64 = 3,
	SNAP_FXT_ARG_UINT64 = 4,
	SNAP_FXT_ARG_DOUBLE = 5,
	SNAP_FXT_ARG_STRING = 6,
	SNAP_FXT_ARG_POINTER = 7,
	SNAP_FXT_ARG_KOID = 8,
	SNAP_FXT_ARG_BOOL = 9,
};

/* Kernel object types (rec->sub of a kernel object record). */
enum {
	SNAP_FXT_OBJ_PROCESS = 1,
	SNAP_FXT_OBJ_THREAD = 2,
};

#define FXT_MAGIC 0x0016547846040010ull

/* every record header */
#define FXT_HDR_TYPE	    0, 3
#define FXT_HDR_WORDS	    4, 15 /* size in 8-byte words, header included */
#define FXT_HDR_WORDS_LARGE 4, 35 /* the same, in large records */
/* metadata records */
#define FXT_META_TYPE	    16, 19
#define FXT_META_PROVIDER   20, 51 /* provider info and section: the provider id */
#define FXT_META_NAME_LEN   52, 59 /* provider info: the name's length in bytes */
#define FXT_META_TRACE_INFO 20, 23 /* trace info: its type (0 = magic) */
#define FXT_META_EVENT_TYPE 52, 55 /* provider event: its type */
/* string and thread records */
#define FXT_STR_INDEX	    16, 30
#define FXT_STR_LEN	    32, 46
#define FXT_THREAD_INDEX    16, 23
/* event records */
#define FXT_EV_TYPE	    16, 19
#define FXT_EV_NARGS	    20, 23
#define FXT_EV_THREAD	    24, 31
#define FXT_EV_CAT	    32, 47
#define FXT_EV_NAME	    48, 63
/* kernel object records */
#define FXT_KOBJ_TYPE	    16, 23
#define FXT_KOBJ_NAME	    24, 39
#define FXT_KOBJ_NARGS	    40, 43
/* log records */
#define FXT_LOG_LEN	    16, 30
#define FXT_LOG_THREAD	    32, 39
/* arguments */
#define FXT_ARG_TYPE	    0, 3
#define FXT_ARG_WORDS	    4, 15
#define FXT_ARG_NAME	    16, 31
#define FXT_ARG_VALUE32	    32, 63 /* int32, uint32 */
#define FXT_ARG_STR	    32, 47 /* string ref of a string argument */

/* The field LO, HI of header word w (a field macro gives both). */
static inline uint64_t fxt_get(uint64_t w, unsigned lo, unsigned hi)
{
	return (w >> lo) & ((hi - lo == 63) ? ~0ull : ((1ull << (hi - lo + 1)) - 1));
}

/* v placed in the field LO, HI of a header word (v must fit the field). */
static inline uint64_t fxt_pack(uint64_t v, unsigned lo, unsigned hi)
{
	(void)hi;
	return v << lo;
}

#endif
