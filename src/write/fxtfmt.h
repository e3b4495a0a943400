/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The packed fields of FXT header words, shared by the writer (write/fxt.c)
 * and the reader (write/fxtread.c). Each field is "LO, HI": its first and
 * last bit, so fxt_get(w, FXT_EV_NAME) reads it and fxt_pack(v, FXT_EV_NAME)
 * places v there (the writer passes values that fit).
 */
#ifndef SNAP_WRITE_FXTFMT_H
#define SNAP_WRITE_FXTFMT_H

#include <stdint.h>

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
