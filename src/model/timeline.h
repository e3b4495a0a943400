/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The abstract timeline: what stack/ writes and write/ implements (FXT).
 * Times are ns since the start of the trace. Names are strtab ids of the
 * strtab the writer was created with. Tracks are (pid, tid) pairs; a track
 * must be announced with thread() before its first event.
 * Every op returns 0 or a negative error; writers keep a sticky error so a
 * caller may check only finish().
 */
#ifndef SNAP_MODEL_TIMELINE_H
#define SNAP_MODEL_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

/* The deepest nesting a track may have: Perfetto keeps depths 0..511 and
 * silently drops deeper slices. The stack builder caps at it (counted, warned) and
 * `dump -check` warns beyond it: one number for both. */
#define SNAP_MAX_NESTING 512

enum snap_arg_type {
	SNAP_ARG_INT = 1, /* v.i */
	SNAP_ARG_PTR,	  /* v.u, shown as an address */
	SNAP_ARG_STR,	  /* v.str: strtab id */
};

struct snap_arg {
	uint32_t name; /* strtab id of the key, e.g. "address" */
	uint32_t type; /* enum snap_arg_type */
	union {
		int64_t i;
		uint64_t u;
		uint32_t str;
	} v;
};

/* An SNAP_ARG_INT arg named name (a strtab id). */
static inline struct snap_arg snap_arg_int(uint32_t name, int64_t v)
{
	struct snap_arg a = {.name = name, .type = SNAP_ARG_INT, .v.i = v};

	return a;
}

/* An SNAP_ARG_PTR arg (an address) named name. */
static inline struct snap_arg snap_arg_ptr(uint32_t name, uint64_t v)
{
	struct snap_arg a = {.name = name, .type = SNAP_ARG_PTR, .v.u = v};

	return a;
}

/* An SNAP_ARG_STR arg named name whose value is the strtab id v. */
static inline struct snap_arg snap_arg_str(uint32_t name, uint32_t v)
{
	struct snap_arg a = {.name = name, .type = SNAP_ARG_STR, .v.str = v};

	return a;
}

struct snap_timeline;

struct snap_timeline_ops {
	/* Names a track: process pid is called proc_name, thread tid of it thread_name. */
	int (*thread)(struct snap_timeline *tl, int32_t pid, int32_t tid, uint32_t proc_name,
		      uint32_t thread_name);
	/* Opens a slice (duration begin). */
	int (*begin)(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts, uint32_t name,
		     const struct snap_arg *args, size_t nargs);
	/* Closes the innermost open slice of the track (duration end); name is informative. */
	int (*end)(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts, uint32_t name);
	/* The same with args (e.g. inferred_end_time, docs/sampling.md). Optional:
	 * NULL drops the args (snap_timeline_end_args calls end). */
	int (*end_args)(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
			uint32_t name, const struct snap_arg *args, size_t nargs);
	/* A whole slice [ts, end_ts] (duration complete); end_ts == ts for instants. */
	int (*complete)(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
			uint64_t end_ts, uint32_t name, const struct snap_arg *args, size_t nargs);
	/* A counter sample; args must be SNAP_ARG_INT. */
	int (*counter)(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
		       uint32_t name, const struct snap_arg *args, size_t nargs);
	/* Flushes; returns the sticky error. */
	int (*finish)(struct snap_timeline *tl);
};

struct snap_timeline {
	const struct snap_timeline_ops *ops;
};

/* tl->ops->end_args, or tl->ops->end (args dropped) for a timeline without it. */
static inline int snap_timeline_end_args(struct snap_timeline *tl, int32_t pid, int32_t tid,
					 uint64_t ts, uint32_t name, const struct snap_arg *args,
					 size_t nargs)
{
	if (nargs && tl->ops->end_args)
		return tl->ops->end_args(tl, pid, tid, ts, name, args, nargs);
	return tl->ops->end(tl, pid, tid, ts, name);
}

#endif
