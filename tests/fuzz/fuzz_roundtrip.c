// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: random thread/begin/end/complete/counter sequences built from
 * the input are written with the FXT writer (over tiny string and thread
 * tables, so indexes are re-used constantly) into a memory sink, read back
 * with fxtread and compared event by event; the trace must also pass the
 * validator (the sequence keeps begin/end balanced, times monotonic, and
 * starts nothing inside a complete event).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strtab.h"
#include "write/fxt.h"
#include "write/fxtcheck.h"
#include "write/fxtdesc.h"
#include "write/fxtread.h"
#include "write/sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RT_THREADS 6
#define RT_DEPTH   32
#define RT_MAXEV   2048

struct rt_in {
	const uint8_t *p;
	size_t n;
};

static unsigned rt_byte(struct rt_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

/* What an event should read back as. */
struct rt_ev {
	unsigned type; /* SNAP_FXT_EV_* */
	int32_t pid, tid;
	uint64_t ts, extra;
	uint32_t name;
	size_t nargs;
	struct snap_arg args[SNAP_FXT_MAX_ARGS];
};

struct rt {
	struct snap_strtab st;
	struct rt_ev ev[RT_MAXEV];
	size_t nev;
	uint32_t counter_names[RT_MAXEV];
	size_t ncounters;
};

static const int32_t rt_pids[RT_THREADS] = {1, 1, 2, 70000, -1, 0};
static const int32_t rt_tids[RT_THREADS] = {1, 2, 3, 70001, -1, 5};

/* A name: mostly from a pool of 300 (more than the 64-entry table), sometimes raw bytes. */
static uint32_t rt_name(struct rt *t, struct rt_in *in)
{
	unsigned b = rt_byte(in);
	char buf[32];

	if (b < 16) {
		size_t len = b < in->n ? b : in->n;
		int64_t id = snap_strtab_intern(&t->st, (const char *)in->p, len);

		in->p += len;
		in->n -= len;
		return id < 0 ? 0 : (uint32_t)id;
	}
	snprintf(buf, sizeof(buf), "name_%u", (b << 8 | rt_byte(in)) % 300);
	return (uint32_t)snap_strtab_intern_cstr(&t->st, buf);
}

static size_t rt_args(struct rt *t, struct rt_in *in, struct snap_arg *a, int ints_only)
{
	size_t n = rt_byte(in) % 5;

	for (size_t i = 0; i < n; i++) {
		unsigned k = rt_byte(in);
		uint64_t v = 0;

		for (int j = 0; j < (int)(k >> 5); j++)
			v = v << 8 | rt_byte(in);
		a[i].name = rt_name(t, in);
		a[i].type = ints_only ? SNAP_ARG_INT : 1 + k % 3;
		if (a[i].type == SNAP_ARG_INT)
			a[i].v.i = (k & 16) ? -(int64_t)v : (int64_t)v;
		else if (a[i].type == SNAP_ARG_PTR)
			a[i].v.u = v;
		else
			a[i].v.str = rt_name(t, in);
	}
	return n;
}

/* The writer's UTF-8 repair, written independently: each byte that does not
 * start a well-formed sequence becomes U+FFFD. Returns the length in out. */
static size_t rt_utf8_fix(const unsigned char *p, size_t n, unsigned char *out)
{
	size_t i = 0, o = 0;

	while (i < n) {
		unsigned c = p[i];
		size_t k = c < 0x80		    ? 1
			   : c >= 0xc2 && c <= 0xdf ? 2
			   : c >= 0xe0 && c <= 0xef ? 3
			   : c >= 0xf0 && c <= 0xf4 ? 4
						    : 0;
		int ok = k && i + k <= n;

		for (size_t j = 1; ok && j < k; j++)
			ok = (p[i + j] & 0xc0) == 0x80;
		if (ok && k == 3) {
			unsigned v =
				(c & 0x0f) << 12 | (p[i + 1] & 0x3fu) << 6 | (p[i + 2] & 0x3fu);

			ok = v >= 0x800 && (v < 0xd800 || v > 0xdfff);
		}
		if (ok && k == 4) {
			unsigned v = (c & 0x07) << 18 | (p[i + 1] & 0x3fu) << 12 |
				     (p[i + 2] & 0x3fu) << 6 | (p[i + 3] & 0x3fu);

			ok = v >= 0x10000 && v <= 0x10ffff;
		}
		if (ok) {
			memcpy(out + o, p + i, k);
			o += k;
			i += k;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	return o;
}

static int rt_str_eq(const struct snap_strtab *st, uint32_t id, const struct snap_fxt_str *s)
{
	static unsigned char want[3 * 4096];
	size_t n = snap_strtab_len(st, id);

	if (n > sizeof(want) / 3)
		abort(); /* the names made here are short */
	n = rt_utf8_fix((const unsigned char *)snap_strtab_get(st, id), n, want);
	return s->s && s->len == n && !memcmp(s->s, want, n);
}

static void rt_check_event(const struct rt *t, const struct rt_ev *e,
			   const struct snap_fxtread_rec *rec)
{
	if (rec->sub != e->type || rec->ts != e->ts || rec->pid != (uint32_t)e->pid ||
	    rec->tid != (uint32_t)e->tid || !rt_str_eq(&t->st, e->name, &rec->name) ||
	    rec->nargs != e->nargs || rec->cat.len != 0)
		abort();
	if ((e->type == SNAP_FXT_EV_COMPLETE && rec->end != e->extra) ||
	    (e->type == SNAP_FXT_EV_COUNTER && rec->id != e->extra))
		abort();
	for (size_t i = 0; i < e->nargs; i++) {
		const struct snap_arg *a = &e->args[i];
		const struct snap_fxtread_arg *b = &rec->args[i];

		if (!rt_str_eq(&t->st, a->name, &b->name))
			abort();
		if (a->type == SNAP_ARG_INT &&
		    !((b->type == SNAP_FXT_ARG_INT32 || b->type == SNAP_FXT_ARG_INT64) &&
		      b->v.i == a->v.i))
			abort();
		if (a->type == SNAP_ARG_PTR &&
		    !(b->type == SNAP_FXT_ARG_POINTER && b->v.u == a->v.u))
			abort();
		if (a->type == SNAP_ARG_STR &&
		    !(b->type == SNAP_FXT_ARG_STRING && rt_str_eq(&t->st, a->v.str, &b->v.str)))
			abort();
	}
}

static void rt_read_back(struct rt *t, const unsigned char *buf, size_t len)
{
	struct snap_fxtread r;
	struct snap_fxtread_rec rec;
	struct snap_fxtcheck c;
	size_t k = 0;
	char line[128];
	int err;

	if (snap_fxtread_init(&r, buf, len) < 0)
		return;
	snap_fxtcheck_init(&c);
	while ((err = snap_fxtread_next(&r, &rec)) != 0) {
		if (err < 0 || rec.flags || snap_fxtcheck_feed(&c, &rec) < 0) {
			fprintf(stderr, "roundtrip: record %llu: %s / %s\n",
				(unsigned long long)rec.index, snap_fxtread_why(&r), c.why);
			abort();
		}
		snap_fxtread_desc(&rec, line, sizeof(line));
		if (rec.type != SNAP_FXT_EVENT)
			continue;
		if (k >= t->nev)
			abort();
		rt_check_event(t, &t->ev[k++], &rec);
	}
	if (k != t->nev)
		abort();
	if (snap_fxtcheck_finish(&c) < 0) {
		fprintf(stderr, "roundtrip: check: record %llu: %s\n",
			(unsigned long long)c.bad_index, c.why);
		abort();
	}
	snap_fxtcheck_fini(&c);
	snap_fxtread_fini(&r);
}

static uint64_t rt_counter_id(struct rt *t, uint32_t name)
{
	for (size_t i = 0; i < t->ncounters; i++)
		if (t->counter_names[i] == name)
			return i + 1;
	t->counter_names[t->ncounters++] = name;
	return t->ncounters;
}

/* Runs the ops encoded in the input; returns 0 if the writer reported no error. */
static int rt_play(struct rt *t, struct snap_timeline *tl, struct rt_in *in)
{
	uint32_t stack[RT_THREADS][RT_DEPTH];
	size_t depth[RT_THREADS] = {0};
	uint64_t ts[RT_THREADS] = {0};

	while (in->n && t->nev + RT_THREADS * RT_DEPTH < RT_MAXEV) {
		unsigned op = rt_byte(in), th = rt_byte(in) % RT_THREADS;
		int32_t pid = rt_pids[th], tid = rt_tids[th];
		struct rt_ev *e = &t->ev[t->nev];

		ts[th] += rt_byte(in);
		memset(e, 0, sizeof(*e));
		e->pid = pid;
		e->tid = tid;
		e->ts = ts[th];
		switch (op % 6) {
		case 0: {
			uint32_t p = rt_name(t, in), n = rt_name(t, in);

			tl->ops->thread(tl, pid, tid, p, n);
			continue;
		}
		case 1:
		case 2:
			if (depth[th] == RT_DEPTH)
				continue;
			e->type = SNAP_FXT_EV_BEGIN;
			e->name = rt_name(t, in);
			e->nargs = rt_args(t, in, e->args, 0);
			stack[th][depth[th]++] = e->name;
			tl->ops->begin(tl, pid, tid, e->ts, e->name, e->args, e->nargs);
			break;
		case 3:
			if (!depth[th])
				continue;
			e->type = SNAP_FXT_EV_END;
			e->name = (op & 64) ? stack[th][depth[th] - 1] : 0;
			depth[th]--;
			tl->ops->end(tl, pid, tid, e->ts, e->name);
			break;
		case 4: {
			uint64_t end = e->ts + rt_byte(in);

			e->type = SNAP_FXT_EV_COMPLETE;
			e->name = rt_name(t, in);
			e->nargs = rt_args(t, in, e->args, 0);
			e->extra = end;
			ts[th] = end; /* nothing starts inside it: Perfetto would mis-nest it */
			tl->ops->complete(tl, pid, tid, e->ts, end, e->name, e->args, e->nargs);
			break;
		}
		default:
			e->type = SNAP_FXT_EV_COUNTER;
			e->name = rt_name(t, in);
			e->nargs = rt_args(t, in, e->args, 1);
			e->extra = rt_counter_id(t, e->name);
			tl->ops->counter(tl, pid, tid, e->ts, e->name, e->args, e->nargs);
			break;
		}
		t->nev++;
	}
	for (unsigned th = 0; th < RT_THREADS; th++)
		while (depth[th]) {
			struct rt_ev *e = &t->ev[t->nev++];

			memset(e, 0, sizeof(*e));
			e->type = SNAP_FXT_EV_END;
			e->pid = rt_pids[th];
			e->tid = rt_tids[th];
			e->ts = ts[th];
			depth[th]--;
			tl->ops->end(tl, e->pid, e->tid, e->ts, 0);
		}
	return tl->ops->finish(tl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rt t;
	struct rt_in in = {data, size};
	struct snap_sink sink;
	struct snap_fxt fx;
	const unsigned char *buf;
	size_t len;
	unsigned cfg = rt_byte(&in);

	t.nev = 0;
	t.ncounters = 0;
	snap_strtab_init(&t.st);
	if (snap_sink_init_mem(&sink) < 0 || snap_fxt_init(&fx, &sink, &t.st) < 0)
		abort();
	if (snap_fxt_set_limits(&fx, 64 + cfg % 64, 1 + (cfg >> 6)) < 0)
		abort();
	if (rt_play(&t, &fx.base, &in) < 0)
		abort();
	buf = snap_sink_mem_data(&sink, &len);
	rt_read_back(&t, buf, len);
	snap_fxt_fini(&fx);
	snap_sink_fini(&sink);
	snap_strtab_fini(&t.st);
	return 0;
}
