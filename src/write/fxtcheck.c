// SPDX-License-Identifier: GPL-2.0
/*
 * The FXT checker for `dump -check`: records read by write/fxtread are
 * checked as they come; duration events are kept (spilled to a temporary
 * file beyond run_max) and matched per thread at finish, as Perfetto builds
 * slices.
 */
#include "write/fxtcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/err.h"
#include "util/vec.h"

void snap_fxtcheck_init(struct snap_fxtcheck *c)
{
	memset(c, 0, sizeof(*c));
	snap_u64map_init(&c->map);
	snap_strtab_init(&c->names);
	c->tps = 1000000000ull;
	c->spill_fd = -1;
	c->run_max = SNAP_FXTCHECK_RUN;
}

void snap_fxtcheck_fini(struct snap_fxtcheck *c)
{
	snap_free(c->tracks);
	snap_free(c->ev);
	snap_u64map_fini(&c->map);
	snap_strtab_fini(&c->names);
	if (c->spill_fd >= 0)
		close(c->spill_fd);
	snap_free(c->runs);
	memset(c, 0, sizeof(*c));
	c->spill_fd = -1;
}

static int check_fail(struct snap_fxtcheck *c, uint64_t index, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int check_fail(struct snap_fxtcheck *c, uint64_t index, const char *fmt, ...)
{
	va_list ap;

	c->bad_index = index;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	return -SNAP_EPARSE;
}

/* The first undefined string ref of rec, or 0. */
static unsigned check_undef_ref(const struct snap_fxtread_rec *rec)
{
	if (!rec->name.s)
		return rec->name.ref;
	if (!rec->cat.s)
		return rec->cat.ref;
	for (uint32_t i = 0; i < rec->nargs; i++) {
		if (!rec->args[i].name.s)
			return rec->args[i].name.ref;
		if (rec->args[i].type == SNAP_FXT_ARG_STRING && !rec->args[i].v.str.s)
			return rec->args[i].v.str.ref;
	}
	return 0;
}

static int check_flags(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec)
{
	uint32_t f = rec->flags;

	if (f & SNAP_FXTREAD_F_UNDEF_STRING)
		return check_fail(c, rec->index, "undefined string index %u", check_undef_ref(rec));
	if (f & SNAP_FXTREAD_F_UNDEF_THREAD)
		return check_fail(c, rec->index, "undefined thread index");
	if (f & SNAP_FXTREAD_F_UNDEF_PROVIDER)
		return check_fail(c, rec->index, "section of provider %" PRIu64 ", never announced",
				  rec->id);
	if (f & SNAP_FXTREAD_F_INDEX_ZERO)
		return check_fail(c, rec->index, "%s record for index 0",
				  rec->type == SNAP_FXT_STRING ? "string" : "thread");
	if (f & SNAP_FXTREAD_F_ZERO_TICKS)
		return check_fail(c, rec->index, "0 ticks per second");
	if (f & SNAP_FXTREAD_F_BAD_MAGIC)
		return check_fail(c, rec->index, "bad magic record");
	return 0;
}

/* ticks must convert to ns below 2^63 (Perfetto drops the event otherwise). */
static int check_time(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec, uint64_t ticks)
{
	unsigned __int128 ns = (unsigned __int128)ticks * 1000000000u / c->tps;

	if (ns >> 63)
		return check_fail(c, rec->index, "timestamp %" PRIu64 " ticks overflows int64 ns",
				  ticks);
	return 0;
}

/* Returns the track index of rec's thread, adding it, or -ENOMEM. */
static int64_t check_track(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec)
{
	uint64_t key = (rec->pid & 0xffffffffu) << 32 | (rec->tid & 0xffffffffu), v;

	if (snap_u64map_get(&c->map, key, &v))
		return (int64_t)v;
	if (c->ntracks >= (1u << 27) ||
	    snap_vec_reserve(&c->tracks, &c->cap, c->ntracks + 1, sizeof(*c->tracks)) < 0)
		return -ENOMEM;
	v = c->ntracks++;
	c->tracks[v][0] = rec->pid;
	c->tracks[v][1] = rec->tid;
	if (snap_u64map_put(&c->map, key, v) < 0)
		return -ENOMEM;
	return (int64_t)v;
}

static int check_spill(struct snap_fxtcheck *c);

/* Keeps a duration event for finish. */
static int check_keep(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec)
{
	struct snap_fxtcheck_ev *e;
	int64_t t = check_track(c, rec);

	if (t < 0)
		return (int)t;
	if (c->nev >= c->run_max && c->spill_fd != -2) {
		/* no temporary file: the events stay in memory; one that cannot be
		 * written (a full $TMPDIR) fails the check once (c->why) */
		int err = check_spill(c);

		if (err < 0 && err != -ENOMEM && c->spill_fd != -2)
			return err;
	}
	if (snap_vec_reserve(&c->ev, &c->evcap, c->nev + 1, sizeof(*c->ev)) < 0)
		return -ENOMEM;
	e = &c->ev[c->nev];
	e->name = "";
	e->name_len = 0;
	if (rec->name.s && rec->name.len) {
		int64_t id = snap_strtab_intern(&c->names, rec->name.s, rec->name.len);

		if (id < 0)
			return -ENOMEM;
		e->name = snap_strtab_get(&c->names, (uint32_t)id);
		e->name_len = rec->name.len;
	}
	c->nev++;
	e->ts = rec->ts;
	e->end = rec->end;
	e->index = rec->index;
	e->track_sub = (uint32_t)t << 4 | rec->sub;
	return 0;
}

static int check_event(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec)
{
	int err = check_time(c, rec, rec->ts);

	c->events++;
	if (err < 0)
		return err;
	switch (rec->sub) {
	case SNAP_FXT_EV_COMPLETE:
		c->completes++;
		if (rec->end < rec->ts)
			return check_fail(c, rec->index,
					  "complete event ends (%" PRIu64
					  ") before it starts (%" PRIu64 ")",
					  rec->end, rec->ts);
		err = check_time(c, rec, rec->end);
		return err < 0 ? err : check_keep(c, rec);
	case SNAP_FXT_EV_BEGIN:
		c->begins++;
		return check_keep(c, rec);
	case SNAP_FXT_EV_END:
		c->ends++;
		return check_keep(c, rec);
	case SNAP_FXT_EV_COUNTER:
		c->counters++;
		for (uint32_t i = 0; i < rec->nargs; i++)
			if (rec->args[i].type < SNAP_FXT_ARG_INT32 ||
			    rec->args[i].type > SNAP_FXT_ARG_DOUBLE)
				return check_fail(c, rec->index,
						  "counter argument #%u is not numeric", i);
		return 0;
	case SNAP_FXT_EV_INSTANT:
	case SNAP_FXT_EV_ASYNC_BEGIN:
	case SNAP_FXT_EV_ASYNC_INSTANT:
	case SNAP_FXT_EV_ASYNC_END:
	case SNAP_FXT_EV_FLOW_BEGIN:
	case SNAP_FXT_EV_FLOW_STEP:
	case SNAP_FXT_EV_FLOW_END:
		return 0;
	default: /* 11..15: FXT defines no such event; damage, not a trace we write */
		return check_fail(c, rec->index, "undefined event type %u", rec->sub);
	}
}

static int check_kobj(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec)
{
	c->kobjs++;
	if (rec->sub != SNAP_FXT_OBJ_THREAD)
		return 0;
	for (uint32_t i = 0; i < rec->nargs; i++) {
		const struct snap_fxtread_arg *a = &rec->args[i];

		if (a->name.len == 7 && !memcmp(a->name.s, "process", 7)) {
			if (a->type != SNAP_FXT_ARG_KOID)
				return check_fail(c, rec->index,
						  "thread %" PRIu64
						  " name: 'process' argument is not a koid",
						  rec->tid);
			return 0;
		}
	}
	return check_fail(c, rec->index,
			  "thread %" PRIu64 " name without a 'process' koid argument", rec->tid);
}

int snap_fxtcheck_feed(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec)
{
	int err = check_flags(c, rec);

	c->records++;
	if (err < 0)
		return err;
	switch (rec->type) {
	case SNAP_FXT_INIT:
		c->tps = rec->ts;
		return 0;
	case SNAP_FXT_EVENT:
		return check_event(c, rec);
	case SNAP_FXT_KOBJ:
		return check_kobj(c, rec);
	default:
		return 0;
	}
}

/* Track, then time, then file order: Perfetto's order on each thread. */
static int check_cmp(const void *pa, const void *pb)
{
	const struct snap_fxtcheck_ev *a = pa, *b = pb;
	uint32_t ta = a->track_sub >> 4, tb = b->track_sub >> 4;

	if (ta != tb)
		return ta < tb ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* An open slice while checking (a copy: the events may be streamed from
 * spilled runs): a begin (end unknown) or a complete event. */
struct check_open {
	struct snap_fxtcheck_ev ev;
	int is_begin;
	long anc; /* stack index of the nearest complete event below, or -1 */
};

/* The slice stack of the track being checked: memory bounded by its depth. */
struct check_trk {
	struct check_open *st;
	size_t cap, depth;
	uint32_t track; /* track index, UINT32_MAX before the first event */
};

#define CHECK_NAME(e) (int)((e)->name_len > 80 ? 80 : (e)->name_len), (e)->name

/* Checks that the track's stack is fully closed (at its last event). */
static int check_track_end(struct snap_fxtcheck *c, struct check_trk *k)
{
	const uint64_t *pt;

	if (k->track == UINT32_MAX)
		return 0;
	pt = c->tracks[k->track];
	while (k->depth && !k->st[k->depth - 1].is_begin)
		k->depth--;
	for (size_t i = 0; i < k->depth; i++)
		if (k->st[i].is_begin)
			return check_fail(c, k->st[i].ev.index,
					  "begin \"%.*s\" at %" PRIu64 " on pid %" PRIu64
					  " tid %" PRIu64 " never ended",
					  CHECK_NAME(&k->st[i].ev), k->st[i].ev.ts, pt[0], pt[1]);
	k->depth = 0;
	return 0;
}

/* Checks the next event in (track, time, file) order. */
static int check_step(struct snap_fxtcheck *c, struct check_trk *k,
		      const struct snap_fxtcheck_ev *e)
{
	const uint64_t *pt;
	unsigned sub = e->track_sub & 15;
	struct check_open *st;
	size_t depth;
	int err;

	if (e->track_sub >> 4 != k->track) {
		err = check_track_end(c, k);
		if (err < 0)
			return err;
		k->track = e->track_sub >> 4;
	}
	pt = c->tracks[k->track];
	st = k->st;
	depth = k->depth;
	/* complete events that are over by now */
	while (depth && !st[depth - 1].is_begin && st[depth - 1].ev.end <= e->ts &&
	       !(sub == SNAP_FXT_EV_COMPLETE && st[depth - 1].ev.end == e->ts &&
		 st[depth - 1].ev.ts == e->ts && e->end == e->ts))
		depth--;
	k->depth = depth;
	if (sub == SNAP_FXT_EV_END) {
		const struct snap_fxtcheck_ev *top;

		if (!depth)
			return check_fail(c, e->index,
					  "end at %" PRIu64 " on pid %" PRIu64 " tid %" PRIu64
					  " with no open begin",
					  e->ts, pt[0], pt[1]);
		top = &st[depth - 1].ev;
		if (!st[depth - 1].is_begin)
			return check_fail(c, e->index,
					  "end at %" PRIu64
					  " closes a begin while its child, complete "
					  "event \"%.*s\" [%" PRIu64 ", %" PRIu64
					  "], is still open (the child outlasts its parent)",
					  e->ts, CHECK_NAME(top), top->ts, top->end);
		if (e->name_len &&
		    (e->name_len != top->name_len || memcmp(e->name, top->name, e->name_len)))
			return check_fail(c, e->index,
					  "end \"%.*s\" closes \"%.*s\" (not in stack order)",
					  CHECK_NAME(e), CHECK_NAME(top));
		if (st[depth - 1].anc >= 0 && st[st[depth - 1].anc].ev.end < e->ts) {
			const struct snap_fxtcheck_ev *p = &st[st[depth - 1].anc].ev;

			return check_fail(c, e->index,
					  "end at %" PRIu64 " closes \"%.*s\", which began inside "
					  "complete event \"%.*s\" [%" PRIu64 ", %" PRIu64
					  "] (it outlasts its parent)",
					  e->ts, CHECK_NAME(top), CHECK_NAME(p), p->ts, p->end);
		}
		k->depth = depth - 1;
		return 0;
	}
	if (sub == SNAP_FXT_EV_COMPLETE && depth && !st[depth - 1].is_begin &&
	    e->end > st[depth - 1].ev.end)
		return check_fail(c, e->index,
				  "complete event \"%.*s\" [%" PRIu64 ", %" PRIu64
				  "] partially overlaps \"%.*s\" [%" PRIu64 ", %" PRIu64 "]",
				  CHECK_NAME(e), e->ts, e->end, CHECK_NAME(&st[depth - 1].ev),
				  st[depth - 1].ev.ts, st[depth - 1].ev.end);
	if (depth >= SNAP_FXTCHECK_MAX_DEPTH && !c->deep++) {
		c->deep_index = e->index;
		snprintf(c->warning, sizeof(c->warning),
			 "slice \"%.*s\" at depth %zu on pid %" PRIu64 " tid %" PRIu64
			 ": Perfetto drops slices deeper than %d",
			 CHECK_NAME(e), depth, pt[0], pt[1], SNAP_FXTCHECK_MAX_DEPTH - 1);
	}
	if (depth == k->cap) {
		if (snap_vec_reserve(&k->st, &k->cap, depth + 1, sizeof(*k->st)) < 0)
			return -ENOMEM;
		st = k->st;
	}
	st[depth].ev = *e;
	st[depth].is_begin = sub == SNAP_FXT_EV_BEGIN;
	st[depth].anc = !depth ? -1 : st[depth - 1].is_begin ? st[depth - 1].anc : (long)depth - 1;
	k->depth = depth + 1;
	return 0;
}

/* Writes the kept events, sorted, as one run to the spill file (created on
 * first use, unnamed, in $TMPDIR). Returns 0, or <0: with spill_fd -2 (no
 * temporary file) to keep them in memory, else a write error, said in c->why. */
static int check_spill(struct snap_fxtcheck *c)
{
	size_t bytes = c->nev * sizeof(*c->ev);
	const char *tmp = getenv("TMPDIR");
	const unsigned char *p = (const unsigned char *)c->ev;
	off_t off;

	if (c->spill_fd < 0) {
		c->spill_fd =
			open(tmp && *tmp ? tmp : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (c->spill_fd < 0)
			c->spill_fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (c->spill_fd < 0) {
			c->spill_fd = -2; /* never again: keep everything in memory */
			return -errno;
		}
	}
	if (c->spill_fd == -2 ||
	    snap_vec_reserve(&c->runs, &c->runcap, c->nruns + 1, sizeof(*c->runs)) < 0)
		return -ENOMEM;
	qsort(c->ev, c->nev, sizeof(*c->ev), check_cmp);
	off = (off_t)(c->spilled * sizeof(*c->ev));
	for (size_t done = 0; done < bytes;) {
		ssize_t n = pwrite(c->spill_fd, p + done, bytes - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;

			snprintf(c->why, sizeof(c->why),
				 "cannot write the temporary file in %s that sorts the trace's "
				 "events: %s",
				 tmp && *tmp ? tmp : "/tmp", snap_strerror(err));
			return err;
		}
		done += (size_t)n;
	}
	c->runs[c->nruns].first = c->spilled;
	c->runs[c->nruns].n = c->nev;
	c->nruns++;
	c->spilled += c->nev;
	c->nev = 0;
	return 0;
}

/* One run being merged: a window of its events. */
struct check_run_rd {
	uint64_t next, left; /* next event index in the spill file, events left after buf */
	struct snap_fxtcheck_ev *buf;
	size_t pos, n;
};

#define CHECK_MERGE_BUF 2048 /* events read at a time per run */

static int check_run_fill(struct snap_fxtcheck *c, struct check_run_rd *r)
{
	size_t want = r->left < CHECK_MERGE_BUF ? (size_t)r->left : CHECK_MERGE_BUF;
	size_t bytes = want * sizeof(*r->buf), got = 0;

	while (got < bytes) {
		ssize_t n = pread(c->spill_fd, (unsigned char *)r->buf + got, bytes - got,
				  (off_t)(r->next * sizeof(*r->buf) + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;

			snprintf(c->why, sizeof(c->why),
				 "cannot read back the temporary file that sorts the trace's "
				 "events: %s",
				 snap_strerror(err));
			return err;
		}
		got += (size_t)n;
	}
	r->pos = 0;
	r->n = want;
	r->next += want;
	r->left -= want;
	return 0;
}

/* Merges the sorted runs (k-way) into the checker: memory is one window per
 * run and the slice stack. */
static int check_merge(struct snap_fxtcheck *c, struct check_trk *k)
{
	struct check_run_rd *rd = snap_calloc(c->nruns, sizeof(*rd));
	int err = rd ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < c->nruns; i++) {
		rd[i].next = c->runs[i].first;
		rd[i].left = c->runs[i].n;
		rd[i].buf = snap_malloc(CHECK_MERGE_BUF * sizeof(*rd[i].buf));
		err = rd[i].buf ? check_run_fill(c, &rd[i]) : -ENOMEM;
	}
	while (!err) {
		size_t best = c->nruns;

		for (size_t i = 0; i < c->nruns; i++) {
			if (rd[i].pos == rd[i].n)
				continue;
			if (best == c->nruns ||
			    check_cmp(&rd[i].buf[rd[i].pos], &rd[best].buf[rd[best].pos]) < 0)
				best = i;
		}
		if (best == c->nruns)
			break;
		err = check_step(c, k, &rd[best].buf[rd[best].pos++]);
		if (!err && rd[best].pos == rd[best].n && rd[best].left)
			err = check_run_fill(c, &rd[best]);
	}
	for (size_t i = 0; rd && i < c->nruns; i++)
		snap_free(rd[i].buf);
	snap_free(rd);
	return err;
}

int snap_fxtcheck_finish(struct snap_fxtcheck *c)
{
	struct check_trk k = {NULL, 0, 0, UINT32_MAX};
	int err = 0;

	if (c->nruns && c->nev)
		err = check_spill(c);
	if (!err && c->nruns) {
		err = check_merge(c, &k);
	} else if (c->nev) {
		err = 0;
		qsort(c->ev, c->nev, sizeof(*c->ev), check_cmp);
		for (size_t i = 0; !err && i < c->nev; i++)
			err = check_step(c, &k, &c->ev[i]);
	}
	if (!err)
		err = check_track_end(c, &k);
	snap_free(k.st);
	return err;
}
