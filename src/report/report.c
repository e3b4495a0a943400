// SPDX-License-Identifier: GPL-2.0
#include "report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/names.h"
#include "report/format.h"
#include "util/alloc.h"
#include "util/vec.h"

#define NO_END UINT64_MAX

/* Sums of durations stop at UINT64_MAX ns instead of wrapping (only absurd
 * timestamps get there): a total never drops below one of its calls. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

const char *snap_report_label(const char *s, char *out, size_t cap)
{
	struct snap_unknown_parts u;
	const char *base;

	if (snap_unknown_parse(s, strlen(s), &u) != 2 || !u.dso)
		return s;
	base = memrchr(u.dso, '/', u.dso_len);
	base = base ? base + 1 : u.dso;
	snprintf(out, cap, "%.*s (%.*s)", (int)u.addr_len, u.addr, (int)(u.dso + u.dso_len - base),
		 base);
	return out;
}

int snap_report_init(struct snap_report *r, struct snap_strtab *st,
		     const struct snap_report_opts *o)
{
	memset(r, 0, sizeof(*r));
	r->st = st;
	if (o)
		r->o = *o;
	if (!r->o.exact_limit)
		r->o.exact_limit = SNAP_REPORT_EXACT_LIMIT;
	snap_u64map_init(&r->tmap);
	snap_u64map_init(&r->inl);
	snap_u64map_init(&r->tids);
	snap_u64map_init(&r->nodes);
	if (r->o.folded) {
		/* node 0 is the root */
		if (snap_vec_reserve(&r->node_parent, &r->capnodes, 64, sizeof(uint32_t)) < 0)
			return r->err = -ENOMEM;
		r->node_name = snap_calloc(r->capnodes, sizeof(uint32_t));
		r->node_self = snap_calloc(r->capnodes, sizeof(uint64_t));
		if (!r->node_name || !r->node_self)
			return r->err = -ENOMEM;
		r->node_parent[0] = 0;
		r->nnodes = 1;
	}
	return 0;
}

void snap_report_fini(struct snap_report *r)
{
	for (size_t i = 0; i < r->nth; i++) {
		snap_free(r->th[i].ev);
		snap_free(r->th[i].cx);
	}
	snap_free(r->th);
	for (size_t i = 0; i < r->capfn; i++) {
		snap_free(r->fn[i].dur);
		snap_free(r->fn[i].sketch);
	}
	snap_free(r->fn);
	snap_free(r->kind_of);
	snap_u64map_fini(&r->tmap);
	snap_u64map_fini(&r->inl);
	snap_u64map_fini(&r->tids);
	snap_free(r->other_tid);
	snap_u64map_fini(&r->nodes);
	snap_free(r->node_parent);
	snap_free(r->node_name);
	snap_free(r->node_self);
	memset(r, 0, sizeof(*r));
}

static struct snap_report_thread *thread_get(struct snap_report *r, int32_t pid, int32_t tid)
{
	uint64_t key = (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid, v;
	struct snap_report_thread *t;

	if (r->last_idx && r->last_key == key)
		return &r->th[r->last_idx - 1];
	if (snap_u64map_get(&r->tmap, key, &v)) {
		r->last_key = key;
		r->last_idx = (size_t)v;
		return &r->th[v - 1];
	}
	if (snap_vec_reserve(&r->th, &r->capth, r->nth + 1, sizeof(*r->th)) < 0 ||
	    snap_u64map_put(&r->tmap, key, r->nth + 1) < 0) {
		r->err = -ENOMEM;
		return NULL;
	}
	t = &r->th[r->nth++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	r->last_key = key;
	r->last_idx = r->nth;
	return t;
}

static struct snap_report_fn *fn_get(struct snap_report *r, uint32_t name);

/* -thread: remembers a tid it filtered out, for the close matches of a wrong -thread. */
static int other_tid(struct snap_report *r, int32_t tid)
{
	uint64_t v;

	if (snap_u64map_get(&r->tids, (uint32_t)tid, &v))
		return 0;
	if (snap_vec_reserve(&r->other_tid, &r->capother, r->nother + 1, sizeof(*r->other_tid)) <
		    0 ||
	    snap_u64map_put(&r->tids, (uint32_t)tid, 1) < 0)
		return r->err = -ENOMEM;
	r->other_tid[r->nother++] = tid;
	return 0;
}

/* The id of "NAME [inlined]", the row of name's inlined frames. 0 = out of memory. */
static uint32_t inlined_name(struct snap_report *r, uint32_t name)
{
	const char *s = snap_strtab_get(r->st, name);
	size_t n = strlen(s), k = sizeof(SNAP_REPORT_INLINED_SUFFIX) - 1;
	char *buf;
	uint64_t v;
	int64_t id;

	if (snap_u64map_get(&r->inl, name, &v))
		return (uint32_t)v;
	if (!(buf = snap_malloc(n + k + 1)))
		return 0;
	memcpy(buf, s, n);
	memcpy(buf + n, SNAP_REPORT_INLINED_SUFFIX, k + 1);
	id = snap_strtab_intern(r->st, buf, n + k);
	snap_free(buf);
	if (id < 0 || snap_u64map_put(&r->inl, name, (uint64_t)id) < 0 || !fn_get(r, (uint32_t)id))
		return 0;
	r->fn[id].inlined = 1;
	return (uint32_t)id;
}

int snap_report_thread_name(struct snap_report *r, int32_t pid, int32_t tid, uint32_t name)
{
	struct snap_report_thread *t;

	if (r->o.has_thread && (int64_t)tid != r->o.tid)
		return other_tid(r, tid);
	if (!(t = thread_get(r, pid, tid)))
		return -ENOMEM;
	if (name)
		t->name = name;
	return 0;
}

int snap_report_event(struct snap_report *r, int32_t pid, int32_t tid, uint32_t kind, uint64_t ts,
		      uint64_t end, uint32_t name)
{
	struct snap_report_thread *t;
	struct snap_report_ev *e;
	uint64_t last =
		(kind & SNAP_REPORT_KIND_MASK) == SNAP_REPORT_COMPLETE && end > ts ? end : ts;

	if (r->err)
		return r->err;
	/* the trace's time range counts every thread, filtered or not */
	if (!r->have_time) {
		r->t0 = ts;
		r->t1 = last;
		r->have_time = 1;
	} else {
		if (ts < r->t0)
			r->t0 = ts;
		if (last > r->t1)
			r->t1 = last;
	}
	if (kind & SNAP_REPORT_F_CUT_END)
		r->end_marks = 1; /* for every thread, -thread or not */
	if ((kind & SNAP_REPORT_F_SAMPLED) && !end)
		kind &= ~SNAP_REPORT_F_SAMPLED;
	if (kind & SNAP_REPORT_F_SAMPLED)
		r->has_sampled_ns = 1; /* the same: the rule is the trace's */
	if (r->o.has_thread && (int64_t)tid != r->o.tid)
		return other_tid(r, tid);
	if ((kind & SNAP_REPORT_F_INLINED) && (kind & SNAP_REPORT_KIND_MASK) != SNAP_REPORT_END &&
	    name && !(name = inlined_name(r, name)))
		return r->err = -ENOMEM;
	if (!(t = thread_get(r, pid, tid)))
		return -ENOMEM;
	if (t->nev == t->cap && snap_vec_reserve(&t->ev, &t->cap, t->nev + 1, sizeof(*t->ev)) < 0)
		return r->err = -ENOMEM;
	if ((kind & SNAP_REPORT_KIND_MASK) == SNAP_REPORT_COMPLETE ||
	    (kind & SNAP_REPORT_F_SAMPLED)) { /* an end's sampled_ns is kept aside too */
		if (t->ncx >= UINT32_MAX ||
		    (t->ncx == t->capcx &&
		     snap_vec_reserve(&t->cx, &t->capcx, t->ncx + 1, sizeof(*t->cx)) < 0))
			return r->err = -ENOMEM;
		t->cx[t->ncx].end = end;
		t->cx[t->ncx].name = name;
		name = (uint32_t)t->ncx++;
	}
	if (t->nev && ts < t->ev[t->nev - 1].ts)
		t->unsorted = 1;
	e = &t->ev[t->nev++];
	e->ts = ts;
	e->name = name;
	e->kind = kind;
	return 0;
}

void snap_report_sampled(struct snap_report *r, uint64_t period_ns)
{
	r->sampled = 1;
	if (period_ns && (!r->sample_period || period_ns < r->sample_period))
		r->sample_period = period_ns;
}

/* ---- durations: exact arrays, selection, sketch ---- */

size_t snap_report_bucket(uint64_t v)
{
	unsigned e;

	if (v < 128)
		return (size_t)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	return 128 + (size_t)(e - 7) * 64 + (size_t)((v >> (e - 6)) & 63);
}

uint64_t snap_report_bucket_value(size_t b)
{
	unsigned e, m;
	uint64_t lo;

	if (b < 128)
		return b;
	if (b >= SNAP_REPORT_SKETCH_N)
		b = SNAP_REPORT_SKETCH_N - 1;
	e = (unsigned)((b - 128) / 64) + 7;
	m = (unsigned)((b - 128) % 64);
	lo = (uint64_t)(64 + m) << (e - 6);
	return lo + ((uint64_t)1 << (e - 6)) / 2;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Moves the k-th smallest of v[0..n) to v[k], smaller ones before it,
 * larger after (Hoare selection, median of three). */
static void select_k(uint64_t *v, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
	int rounds = 0;

	while (hi > lo) {
		if (++rounds > 100) {
			/* a pathological order for median of three: sort what is left */
			qsort(v + lo, (size_t)(hi - lo + 1), sizeof(*v), u64_cmp);
			return;
		}
		ptrdiff_t i = lo, j = hi;
		uint64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi], p, x;

		p = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		while (i <= j) {
			while (v[i] < p)
				i++;
			while (v[j] > p)
				j--;
			if (i <= j) {
				x = v[i];
				v[i] = v[j];
				v[j] = x;
				i++;
				j--;
			}
		}
		/* v[lo..j] <= p, v[i..hi] >= p, v[j+1..i-1] == p */
		if (kk <= j)
			hi = j;
		else if (kk >= i)
			lo = i;
		else
			return;
	}
}

static size_t rank_index(size_t n, unsigned pct)
{
	/* nearest rank: the ceil(pct/100 * n)-th smallest, 1-based */
	size_t k = (size_t)(((unsigned __int128)n * pct + 99) / 100);

	return k ? k - 1 : 0;
}

uint64_t snap_report_rank(uint64_t *v, size_t n, unsigned pct)
{
	size_t k = rank_index(n, pct);

	select_k(v, n, k);
	return v[k];
}

static uint64_t sketch_rank(const uint64_t *sk, uint64_t n, unsigned pct, uint64_t max)
{
	uint64_t k = (uint64_t)(((unsigned __int128)n * pct + 99) / 100), seen = 0, v;

	if (!k)
		k = 1;
	for (size_t b = 0; b < SNAP_REPORT_SKETCH_N; b++) {
		seen += sk[b];
		if (seen >= k) {
			v = snap_report_bucket_value(b);
			return v > max ? max : v;
		}
	}
	return max;
}

static struct snap_report_fn *fn_get(struct snap_report *r, uint32_t name)
{
	if (name >= r->capfn) {
		size_t old = r->capfn;

		if (snap_vec_reserve(&r->fn, &r->capfn, (size_t)name + 1, sizeof(*r->fn)) < 0) {
			r->err = -ENOMEM;
			return NULL;
		}
		memset(r->fn + old, 0, (r->capfn - old) * sizeof(*r->fn));
	}
	return &r->fn[name];
}

static int fn_add(struct snap_report *r, struct snap_report_fn *f, uint64_t dur)
{
	if (f->sketch) {
		f->sketch[snap_report_bucket(dur)]++;
		return 0;
	}
	if (f->ndur >= r->o.exact_limit) {
		f->sketch = snap_calloc(SNAP_REPORT_SKETCH_N, sizeof(uint64_t));
		if (!f->sketch)
			return r->err = -ENOMEM;
		for (size_t i = 0; i < f->ndur; i++)
			f->sketch[snap_report_bucket(f->dur[i])]++;
		snap_free(f->dur);
		f->dur = NULL;
		f->ndur = f->capdur = 0;
		f->sketch[snap_report_bucket(dur)]++;
		r->nsketched++;
		return 0;
	}
	if (f->ndur == f->capdur &&
	    snap_vec_reserve(&f->dur, &f->capdur, f->ndur + 1, sizeof(*f->dur)) < 0)
		return r->err = -ENOMEM;
	f->dur[f->ndur++] = dur;
	return 0;
}

/* ---- building slices ---- */

struct frame {
	uint64_t start, end; /* end: NO_END for a begin */
	uint64_t child;	     /* time of child slices inside the window */
	uint64_t child_real; /* of it, the time in real code: an inlined child's own time
				is this frame's (perf's self time) */
	uint64_t same;	     /* time of nested calls of the same function in its total already */
	uint64_t smp_inl;    /* sampled_ns of inlined children: this frame's own (perf's self) */
	uint32_t name, node;
	uint32_t prev_same; /* index + 1 of the next frame of the same name below, 0 = none */
	uint8_t edge;	    /* start cut by the snapshot */
	uint8_t inl;	    /* an inlined frame */
};

struct walk {
	struct snap_report *r;
	struct snap_report_thread *t;
	struct frame *st;
	size_t n, cap;
	uint32_t root; /* folded: the thread's node */
};

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* The class of a name: 1 a decode error, 2 an off-CPU slice, 3 other. */
static int name_class(struct snap_report *r, uint32_t name)
{
	static const char pfx[] = SNAP_NAME_DECODE_ERROR, off[] = SNAP_NAME_OFFCPU_STEM;

	if (name >= r->capkind) {
		size_t old = r->capkind;

		if (snap_vec_reserve(&r->kind_of, &r->capkind, (size_t)name + 1, 1) < 0)
			return 3; /* only a hint: treat as other */
		memset(r->kind_of + old, 0, r->capkind - old);
	}
	if (!r->kind_of[name]) {
		const char *s = snap_strtab_get(r->st, name);

		r->kind_of[name] = strncmp(s, pfx, sizeof(pfx) - 1) == 0   ? 1
				   : strncmp(s, off, sizeof(off) - 1) == 0 ? 2
									   : 3;
	}
	return r->kind_of[name];
}

static int is_decode_error(struct snap_report *r, uint32_t name)
{
	return name_class(r, name) == 1;
}

static uint32_t node_get(struct snap_report *r, uint32_t parent, uint32_t name)
{
	uint64_t key = (uint64_t)parent << 32 | name, v;

	if (snap_u64map_get(&r->nodes, key, &v))
		return (uint32_t)v;
	if (r->nnodes == r->capnodes) {
		size_t c1 = r->capnodes, c2 = r->capnodes, c3 = r->capnodes;

		if (snap_vec_reserve(&r->node_parent, &c1, r->nnodes + 1, sizeof(uint32_t)) < 0 ||
		    snap_vec_reserve(&r->node_name, &c2, r->nnodes + 1, sizeof(uint32_t)) < 0 ||
		    snap_vec_reserve(&r->node_self, &c3, r->nnodes + 1, sizeof(uint64_t)) < 0) {
			r->err = -ENOMEM;
			return 0;
		}
		r->capnodes = c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3);
	}
	if (snap_u64map_put(&r->nodes, key, r->nnodes) < 0) {
		r->err = -ENOMEM;
		return 0;
	}
	r->node_parent[r->nnodes] = parent;
	r->node_name[r->nnodes] = name;
	r->node_self[r->nnodes] = 0;
	return (uint32_t)r->nnodes++;
}

static int push(struct walk *w, uint64_t start, uint64_t end, uint32_t name, int edge)
{
	struct snap_report_fn *fn = fn_get(w->r, name);
	struct frame *f;

	if (!fn)
		return w->r->err;
	if (w->n >= UINT32_MAX - 1 ||
	    (w->n == w->cap && snap_vec_reserve(&w->st, &w->cap, w->n + 1, sizeof(*w->st)) < 0))
		return w->r->err = -ENOMEM;
	f = &w->st[w->n];
	f->start = start;
	f->end = end;
	f->child = f->child_real = f->same = f->smp_inl = 0;
	f->name = name;
	f->edge = (uint8_t)(edge != 0);
	f->inl = fn->inlined;
	f->prev_same = fn->top;
	fn->top = (uint32_t)w->n + 1;
	f->node = 0;
	if (w->r->o.folded)
		f->node = node_get(w->r, w->n ? w->st[w->n - 1].node : w->root, name);
	w->n++;
	return w->r->err;
}

static void keep_slowest(struct snap_report *r, const struct snap_report_thread *t, uint64_t dur,
			 uint64_t start)
{
	size_t i = r->nslow;

	if (i == SNAP_REPORT_SLOWEST) {
		if (dur <= r->slow[i - 1].dur)
			return;
		i--;
	} else {
		r->nslow++;
	}
	/* insertion, slowest first; an equal duration keeps the earlier call first */
	while (i > 0 && r->slow[i - 1].dur < dur) {
		r->slow[i] = r->slow[i - 1];
		i--;
	}
	r->slow[i].dur = dur;
	r->slow[i].start = start - r->t0;
	r->slow[i].pid = t->pid;
	r->slow[i].tid = t->tid;
}

/* Closes the top frame at end; cut: the end is the snapshot's edge; smp: the
 * end's sampled_ns. In a sampled trace whose ends carry sampled_ns, self time
 * is smp (perf report's samples x period, docs/report.md), else the slice's
 * duration less its children's. */
static int pop(struct walk *w, uint64_t end, int cut, uint64_t smp)
{
	struct snap_report *r = w->r;
	struct frame *f = &w->st[--w->n];
	struct frame *up = w->n ? &w->st[w->n - 1] : NULL;
	struct snap_report_fn *fn = fn_get(r, f->name); /* exists: push made it */
	uint64_t cs, ce, cdur, self, own, dur;
	int inside, counted;

	if (!fn)
		return r->err;
	fn->top = f->prev_same;
	if (end < f->start)
		end = f->start;
	dur = end - f->start;
	cs = f->start > r->win0 ? f->start : r->win0;
	ce = end < r->win1 ? end : r->win1;
	cdur = ce > cs ? ce - cs : 0;
	self = cdur > f->child ? cdur - f->child : 0;
	own = cdur > f->child_real ? cdur - f->child_real : 0;
	if (up) {
		up->child = sat_add(up->child, cdur);
		up->child_real = sat_add(up->child_real, f->inl ? f->child_real : cdur);
		if (f->inl)
			own = 0; /* the real function below runs this code: its self time */
	} else {
		w->t->busy_ns = sat_add(w->t->busy_ns, cdur);
	}
	/* off-CPU slices are time off the CPU, exact to the switch records: their
	 * duration stays their self time */
	if (r->sampled && r->has_sampled_ns && name_class(r, f->name) != 2) {
		uint64_t own_s = f->inl ? 0 : sat_add(smp, f->smp_inl);

		if (up && f->inl)
			up->smp_inl = sat_add(up->smp_inl, sat_add(smp, f->smp_inl));
		own = own_s;
		/* folded: the part of the slice's samples inside the window */
		self = dur && cdur < dur ? (uint64_t)((double)smp * (double)cdur / (double)dur)
					 : smp;
		if (end < r->win0 || f->start > r->win1)
			self = 0;
	}
	if (r->o.folded && self)
		r->node_self[f->node] = sat_add(r->node_self[f->node], self);
	inside = f->start >= r->win0 && end <= r->win1;
	counted = inside && !f->edge && !cut;
	/* recursion: the time of this call is now in the function's total, whole
	 * if counted, else only its nested counted calls (f->same) */
	if (f->prev_same)
		w->st[f->prev_same - 1].same =
			sat_add(w->st[f->prev_same - 1].same, counted ? dur : f->same);
	if (!inside && (end < r->win0 || f->start > r->win1))
		return 0; /* outside the window: not seen at all */
	if (!counted) {
		r->open++;
		w->t->open++;
		fn->open++;
		return r->err;
	}
	{
		fn->calls++;
		fn->total = sat_add(fn->total, dur > f->same ? dur - f->same : 0);
		fn->sum = sat_add(fn->sum, dur);
		fn->self = sat_add(fn->self, own);
		if (dur > fn->max)
			fn->max = dur;
		r->slices++;
		w->t->slices++;
		if (r->o.function && f->name == r->o.function) {
			r->hist[dur ? 64 - __builtin_clzll(dur) : 0]++;
			keep_slowest(r, w->t, dur, f->start);
		}
		return fn_add(r, fn, dur);
	}
}

/* Closes the complete slices on top that end by ts. */
static int pop_completes(struct walk *w, uint64_t ts)
{
	while (w->n && w->st[w->n - 1].end != NO_END && w->st[w->n - 1].end <= ts)
		if (pop(w, w->st[w->n - 1].end, 0, 0) < 0)
			return w->r->err;
	return 0;
}

static int ev_cmp_ts(const struct snap_report_ev *a, const struct snap_report_ev *b)
{
	return a->ts < b->ts;
}

/* Stable merge sort by ts (tmp: n elements). */
static void sort_events(struct snap_report_ev *v, struct snap_report_ev *tmp, size_t n)
{
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, k = lo;

			if (mid == hi || !ev_cmp_ts(&v[mid], &v[mid - 1])) {
				memcpy(tmp + lo, v + lo, (hi - lo) * sizeof(*v));
				continue;
			}
			while (i < mid && j < hi)
				tmp[k++] = ev_cmp_ts(&v[j], &v[i]) ? v[j++] : v[i++];
			while (i < mid)
				tmp[k++] = v[i++];
			while (j < hi)
				tmp[k++] = v[j++];
		}
		memcpy(v, tmp, n * sizeof(*v));
	}
}

/* The root of a thread's folded stacks: its command name, as perf script |
 * stackcollapse-perf.pl starts every line with the sample's comm
 * (docs/report.md): the track name "CMD [pid=P] [tid=T]" without the ids, its
 * first word without a directory; an unnamed thread is ":TID" as perf names
 * a thread whose comm it never saw. */
static uint32_t thread_root(struct snap_report *r, const struct snap_report_thread *t)
{
	const char *s = t->name ? snap_strtab_get(r->st, t->name) : "", *e, *b;
	char buf[64];
	int64_t id;

	while (*s == ' ')
		s++;
	e = s;
	while (*e && *e != ' ')
		e++;
	if (*s == '[' || e == s) { /* "[pid=..": no command */
		snprintf(buf, sizeof(buf), ":%" PRId32, t->tid);
		id = snap_strtab_intern_cstr(r->st, buf);
	} else {
		for (b = e; b > s && b[-1] != '/'; b--)
			;
		if (b == e) /* "/dir/": keep it whole */
			b = s;
		id = snap_strtab_intern(r->st, b, (size_t)(e - b));
	}
	if (id < 0) {
		r->err = -ENOMEM;
		return 0;
	}
	return node_get(r, 0, (uint32_t)id);
}

static int walk_thread(struct snap_report *r, struct snap_report_thread *t, struct walk *w)
{
	uint64_t first, last = 0, group = 0;
	int cut = 0;

	if (!t->nev)
		return 0;
	if (t->unsorted) {
		struct snap_report_ev *tmp = snap_reallocarray(NULL, t->nev, sizeof(*tmp));

		if (!tmp)
			return r->err = -ENOMEM;
		sort_events(t->ev, tmp, t->nev);
		snap_free(tmp);
	}
	first = t->ev[0].ts;
	for (size_t i = 0; i < t->nev; i++) {
		const struct snap_report_ev *e = &t->ev[i];
		uint64_t end = (e->kind & SNAP_REPORT_KIND_MASK) == SNAP_REPORT_COMPLETE
				       ? t->cx[e->name].end
				       : 0;

		if (e->ts > last)
			last = e->ts;
		if (end > last)
			last = end;
	}
	w->t = t;
	w->n = 0;
	w->root = r->o.folded ? thread_root(r, t) : 0;
	if (r->err)
		return r->err;
	for (size_t i = 0; i < t->nev; i++) {
		const struct snap_report_ev *e = &t->ev[i];
		uint32_t kind = e->kind & SNAP_REPORT_KIND_MASK;

		if (i == 0 || e->ts != group) {
			/* a new timestamp: is it a snapshot edge (a decode error; in a trace
			 * without inferred_end_time flags, the thread's end)? */
			group = e->ts;
			cut = !r->end_marks && e->ts == last;
			for (size_t j = i; !cut && j < t->nev && t->ev[j].ts == group; j++)
				if ((t->ev[j].kind & SNAP_REPORT_KIND_MASK) ==
					    SNAP_REPORT_COMPLETE &&
				    t->cx[t->ev[j].name].end <= group &&
				    is_decode_error(r, t->cx[t->ev[j].name].name))
					cut = 1;
		}
		if (pop_completes(w, e->ts) < 0)
			return r->err;
		if (kind == SNAP_REPORT_BEGIN) {
			int edge = (e->kind & SNAP_REPORT_F_INFERRED) ||
				   (!r->end_marks && e->ts == first);

			if (push(w, e->ts, NO_END, e->name, edge) < 0)
				return r->err;
		} else if (kind == SNAP_REPORT_COMPLETE) {
			uint64_t end = t->cx[e->name].end;

			if (end <= e->ts)
				continue; /* an instant: not a call */
			if (w->n && w->st[w->n - 1].end != NO_END && end > w->st[w->n - 1].end) {
				r->overlaps++; /* partial overlap: cut to the parent */
				end = w->st[w->n - 1].end;
			}
			if (push(w, e->ts, end, t->cx[e->name].name, 0) < 0)
				return r->err;
		} else if (kind == SNAP_REPORT_END) {
			while (w->n && w->st[w->n - 1].end != NO_END) {
				r->overlaps++; /* a complete slice outlasting its parent */
				if (pop(w, e->ts, 0, 0) < 0)
					return r->err;
			}
			if (!w->n)
				r->unmatched_ends++;
			else if (pop(w, e->ts, cut || (e->kind & SNAP_REPORT_F_CUT_END),
				     (e->kind & SNAP_REPORT_F_SAMPLED) ? t->cx[e->name].end : 0) <
				 0)
				return r->err;
		}
	}
	if (pop_completes(w, NO_END - 1) < 0)
		return r->err;
	/* begins never ended: open at the snapshot's end */
	while (w->n) {
		while (w->n && w->st[w->n - 1].end != NO_END)
			if (pop(w, w->st[w->n - 1].end, 0, 0) < 0)
				return r->err;
		if (w->n && pop(w, last, 1, 0) < 0)
			return r->err;
	}
	return r->err;
}

/* ---- names: which are functions, their table labels, -function ---- */

/* Marks every name a slice of a reported thread carries (instants too). */
static int find_names(struct snap_report *r)
{
	for (size_t i = 0; i < r->nth; i++) {
		const struct snap_report_thread *t = &r->th[i];

		for (size_t j = 0; j < t->nev; j++) {
			uint32_t kind = t->ev[j].kind & SNAP_REPORT_KIND_MASK, name = t->ev[j].name;
			struct snap_report_fn *fn;

			if (kind == SNAP_REPORT_END)
				continue;
			if (kind == SNAP_REPORT_COMPLETE)
				name = t->cx[name].name;
			if (!(fn = fn_get(r, name)))
				return r->err;
			fn->seen = 1;
		}
	}
	return 0;
}

#define LABEL_CAP (SNAP_REPORT_NAME_W + sizeof(SNAP_REPORT_INLINED_SUFFIX) + 8)

/* What a label is made of: the text to shorten (snap_report_label of the
 * name without " [inlined]"), the width it gets, and what follows it. */
struct lab {
	char text[512];
	size_t len, width;
	const char *suffix;
};

/* "{lambda(int, char const*)#2}" -> "{lambda#2}" in place: the number tells
 * g++'s lambdas of one scope apart, the parameters take the column. */
static void compact_lambdas(char *s)
{
	static const char pfx[] = "{lambda(";
	char *p = s;

	while ((p = strstr(p, pfx)) != NULL) {
		char *q = p + sizeof(pfx) - 1;
		int depth = 1;

		for (; *q && depth; q++)
			depth += *q == '(' ? 1 : *q == ')' ? -1 : 0;
		if (depth || *q != '#') {
			p += sizeof(pfx) - 1;
			continue;
		}
		memmove(p + 7, q, strlen(q) + 1); /* keep "{lambda", drop "(...)" */
		p += 7;
	}
}

static void lab_init(const struct snap_report *r, uint32_t id, struct lab *l)
{
	const char *s = snap_strtab_get(r->st, id);
	size_t n = strlen(s), k = sizeof(SNAP_REPORT_INLINED_SUFFIX) - 1;
	char base[512];

	l->suffix = "";
	l->width = SNAP_REPORT_NAME_W;
	if (id < r->capfn && r->fn[id].inlined && n >= k) {
		snprintf(base, sizeof(base), "%.*s", (int)(n - k), s);
		s = base;
		l->suffix = SNAP_REPORT_INLINED_SUFFIX;
		l->width -= k;
	}
	{
		char tmp[512];

		snprintf(l->text, sizeof(l->text), "%s", snap_report_label(s, tmp, sizeof(tmp)));
	}
	if (strlen(l->text) > l->width)
		compact_lambdas(l->text);
	l->len = strlen(l->text);
}

/* The label of cut number step (0 = the middle cut of snap_report_shorten;
 * then the tail grows, then the head) into out (LABEL_CAP). Returns 0, or -1
 * past the last cut. */
static int lab_cut(const struct lab *l, size_t step, char *out)
{
	size_t w = l->width, keep = w - 3, dh = (keep + 1) / 2, dt = keep / 2, head, tail;

	if (step == 0 || l->len <= w) {
		if (step)
			return -1;
		snap_report_shorten(l->text, w, out);
	} else {
		if (step < dh) { /* more of the end: C++ and Rust names differ there most */
			tail = dt + step;
			head = keep - tail;
		} else if (step - dh + 1 + dh < keep) {
			head = dh + (step - dh + 1);
			tail = keep - head;
		} else {
			return -1;
		}
		while (head > 0 && ((unsigned char)l->text[head] & 0xc0) == 0x80)
			head--;
		while (tail > 0 && ((unsigned char)l->text[l->len - tail] & 0xc0) == 0x80)
			tail--;
		memcpy(out, l->text, head);
		memcpy(out + head, "...", 3);
		memcpy(out + head + 3, l->text + l->len - tail, tail);
		out[head + 3 + tail] = '\0';
	}
	strcat(out, l->suffix);
	return 0;
}

/* Is the label text s some function's label already (cnt: label id -> users)? */
static int lab_taken(const struct snap_report *r, const struct snap_u64map *cnt, const char *s)
{
	uint32_t id = snap_strtab_find(r->st, s, strlen(s));
	uint64_t v;

	return id && snap_u64map_get(cnt, id, &v) && v;
}

static int lab_set(struct snap_report *r, struct snap_u64map *cnt, uint32_t fn, const char *s)
{
	int64_t id = snap_strtab_intern_cstr(r->st, s);
	uint64_t v = 0;

	if (id < 0)
		return -ENOMEM;
	snap_u64map_get(cnt, (uint64_t)id, &v);
	if (snap_u64map_put(cnt, (uint64_t)id, v + 1) < 0)
		return -ENOMEM;
	r->fn[fn].label = (uint32_t)id;
	return 0;
}

static const struct snap_report *lab_r;

static int lab_cmp(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = strcmp(snap_strtab_get(lab_r->st, lab_r->fn[a].label),
		       snap_strtab_get(lab_r->st, lab_r->fn[b].label));

	return c ? c : strcmp(snap_strtab_get(lab_r->st, a), snap_strtab_get(lab_r->st, b));
}

/* Names that shorten alike (g[0..n), one default label): each takes the first
 * cut that no other member of the group makes at that step and no other
 * function has; the rest end in "~1", "~2", ... by name order. */
static int lab_group(struct snap_report *r, struct snap_u64map *cnt, const uint32_t *g, size_t n)
{
	struct lab *l = snap_calloc(n, sizeof(*l));
	char(*c)[LABEL_CAP] = snap_calloc(n, LABEL_CAP);
	uint8_t *done = snap_calloc(n, 1);
	size_t left = n, k = 1;
	int err = 0;

	if (!l || !c || !done) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		lab_init(r, g[i], &l[i]);
	for (size_t step = 1; left; step++) {
		int any = 0;

		for (size_t i = 0; i < n; i++)
			if (!done[i] && lab_cut(&l[i], step, c[i]) == 0)
				any = 1;
			else if (!done[i])
				c[i][0] = '\0';
		if (!any)
			break;
		for (size_t i = 0; i < n && !err; i++) {
			int unique = c[i][0] && !lab_taken(r, cnt, c[i]);

			for (size_t j = 0; j < n && unique; j++)
				if (j != i && !strcmp(c[i], c[j]))
					unique = 0;
			if (unique) {
				err = lab_set(r, cnt, g[i], c[i]);
				done[i] = 1;
				left--;
			}
		}
		if (err)
			goto out;
		/* what was chosen stays in c[] (done members keep it) */
	}
	for (size_t i = 0; i < n && left && !err; i++) {
		char mark[24], cut[LABEL_CAP];
		struct lab m;

		if (done[i])
			continue;
		do {
			snprintf(mark, sizeof(mark), "~%zu", k++);
			m = l[i];
			m.width = l[i].width > strlen(mark) + 5 ? l[i].width - strlen(mark) : 5;
			m.suffix = "";
			lab_cut(&m, 0, cut);
			snprintf(c[i], LABEL_CAP, "%s%s%s", cut, mark, l[i].suffix);
		} while (lab_taken(r, cnt, c[i]));
		err = lab_set(r, cnt, g[i], c[i]);
		done[i] = 1;
		left--;
	}
out:
	snap_free(l);
	snap_free(c);
	snap_free(done);
	return err;
}

/* Gives every function its table label (see snap_report_finish). */
static int make_labels(struct snap_report *r)
{
	struct snap_u64map cnt;
	uint32_t *v = NULL;
	size_t n = 0, cap = 0;
	char out[LABEL_CAP];
	int err = 0;

	snap_u64map_init(&cnt);
	for (size_t i = 0; i < r->capfn && !err; i++) {
		struct lab l;

		if (!r->fn[i].seen)
			continue;
		lab_init(r, (uint32_t)i, &l);
		lab_cut(&l, 0, out);
		err = lab_set(r, &cnt, (uint32_t)i, out);
	}
	for (size_t i = 0; i < r->capfn && !err; i++) {
		uint64_t k = 0;

		if (!r->fn[i].seen || !snap_u64map_get(&cnt, r->fn[i].label, &k) || k < 2)
			continue;
		if (snap_vec_reserve(&v, &cap, n + 1, sizeof(*v)) < 0)
			err = -ENOMEM;
		else
			v[n++] = (uint32_t)i;
	}
	if (!err && n) {
		lab_r = r;
		qsort(v, n, sizeof(*v), lab_cmp);
		/* the group's default label is nobody's once they all move */
		for (size_t i = 0; i < n; i++)
			snap_u64map_put(&cnt, r->fn[v[i]].label, 0);
		for (size_t i = 0, j; i < n && !err; i = j) {
			for (j = i + 1; j < n && r->fn[v[j]].label == r->fn[v[i]].label; j++)
				;
			err = lab_group(r, &cnt, v + i, j - i);
		}
	}
	snap_free(v);
	snap_u64map_fini(&cnt);
	return err;
}

/* -function: the trace's name, a table label, or the label before shortening
 * (when one function has it). */
static void resolve_function(struct snap_report *r)
{
	const char *want;
	uint32_t found = 0;
	int many = 0;

	if (!r->o.function || (r->o.function < r->capfn && r->fn[r->o.function].seen))
		return;
	want = snap_strtab_get(r->st, r->o.function);
	for (size_t i = 0; i < r->capfn; i++)
		if (r->fn[i].seen && !strcmp(snap_strtab_get(r->st, r->fn[i].label), want)) {
			r->o.function = (uint32_t)i;
			return;
		}
	for (size_t i = 0; i < r->capfn; i++) {
		struct lab l;

		if (!r->fn[i].seen)
			continue;
		lab_init(r, (uint32_t)i, &l);
		if (!strncmp(l.text, want, l.len) && strlen(want) >= l.len &&
		    !strcmp(want + l.len, l.suffix)) {
			many += found != 0;
			found = (uint32_t)i;
		}
	}
	if (found && !many)
		r->o.function = found;
	else
		r->function_missing = 1;
}

/* Edit distance of a and b, ignoring case (at most 255 bytes of each). */
static size_t edits(const char *a, const char *b)
{
	size_t na = strnlen(a, 255), nb = strnlen(b, 255), row[256];

	for (size_t j = 0; j <= nb; j++)
		row[j] = j;
	for (size_t i = 1; i <= na; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t up = row[j], best = diag + (lower(a[i - 1]) != lower(b[j - 1]));

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[nb];
}

static const char *find_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return hay;
	return n ? NULL : hay;
}

/* How close s is to want: 0 the same but for case, then substrings (the
 * nearer in length the closer), then a few edits; UINT64_MAX = not close. */
static uint64_t closeness(const char *s, const char *want)
{
	size_t ns = strlen(s), nw = strlen(want), d;

	if (!nw)
		return UINT64_MAX;
	if (!strcasecmp(s, want))
		return 0;
	if (find_nocase(s, want) || (nw > 2 && ns > 2 && find_nocase(want, s)))
		return 1 + (ns > nw ? ns - nw : nw - ns);
	d = edits(s, want);
	return d <= (nw < 9 ? 2 : nw / 4) ? (1u << 20) + d : UINT64_MAX;
}

/* Keeps the max closest (lowest scores, at most 8) in score[0..*n) and
 * out[0..*n) (size bytes each): returns the slot c takes, the later ones
 * moved down (out[slot] is the caller's to fill), or max if c is not close
 * or not among them. */
static size_t keep_close(uint64_t *score, void *out, size_t size, size_t *n, size_t max, uint64_t c)
{
	char *o = out;
	size_t k;

	if (!max || c == UINT64_MAX || (*n == max && c >= score[*n - 1]))
		return max;
	k = *n < max ? (*n)++ : *n - 1;
	for (; k > 0 && score[k - 1] > c; k--) {
		score[k] = score[k - 1];
		memcpy(o + k * size, o + (k - 1) * size, size);
	}
	score[k] = c;
	return k;
}

int snap_report_close_functions(const struct snap_report *r, const char *want, uint32_t *out,
				size_t max)
{
	uint64_t score[8];
	size_t n = 0;

	if (max > 8)
		max = 8;
	for (size_t i = 0; i < r->capfn; i++) {
		uint64_t a, b, c;
		size_t k;

		if (!r->fn[i].seen)
			continue;
		a = closeness(snap_strtab_get(r->st, (uint32_t)i), want);
		b = closeness(snap_strtab_get(r->st, r->fn[i].label), want);
		c = a < b ? a : b;
		if ((k = keep_close(score, out, sizeof(*out), &n, max, c)) < max)
			out[k] = (uint32_t)i;
	}
	return (int)n;
}

size_t snap_report_close_threads(const struct snap_report *r, int64_t want, int32_t *out,
				 size_t max)
{
	uint64_t score[8];
	char w[24], t[24];
	size_t n = 0;

	if (max > 8)
		max = 8;
	snprintf(w, sizeof(w), "%" PRId64, want);
	for (int pass = 0; pass < 2 && !n; pass++)
		for (size_t i = 0; i < r->nother; i++) {
			uint64_t c;
			size_t k;

			snprintf(t, sizeof(t), "%" PRId32, r->other_tid[i]);
			c = pass ? i : closeness(t, w);
			if ((k = keep_close(score, out, sizeof(*out), &n, max, c)) < max)
				out[k] = r->other_tid[i];
		}
	return n;
}

int snap_report_finish(struct snap_report *r)
{
	struct walk w;

	if (r->err || r->finished)
		return r->err;
	r->finished = 1;
	r->win0 = 0;
	r->win1 = NO_END;
	if (r->o.has_window) {
		r->win0 = r->t0 + r->o.win_start;
		r->win1 = r->o.win_end > NO_END - r->t0 ? NO_END : r->t0 + r->o.win_end;
	}
	if (r->have_time) {
		uint64_t a = r->t0 > r->win0 ? r->t0 : r->win0,
			 b = r->t1 < r->win1 ? r->t1 : r->win1;

		r->span_ns = b > a ? b - a : 0;
	}
	if (find_names(r) < 0 || make_labels(r) < 0)
		return r->err = -ENOMEM;
	resolve_function(r);
	r->thread_missing = r->o.has_thread;
	for (size_t i = 0; i < r->nth; i++)
		if (r->th[i].nev)
			r->thread_missing = 0;
	memset(&w, 0, sizeof(w));
	w.r = r;
	for (size_t i = 0; i < r->nth && !r->err; i++) {
		walk_thread(r, &r->th[i], &w);
		/* the events are not needed any more */
		snap_free(r->th[i].ev);
		snap_free(r->th[i].cx);
		r->th[i].ev = NULL;
		r->th[i].cx = NULL;
		r->th[i].nev = r->th[i].cap = r->th[i].ncx = r->th[i].capcx = 0;
	}
	snap_free(w.st);
	if (r->err)
		return r->err;
	for (size_t i = 0; i < r->capfn; i++) {
		struct snap_report_fn *f = &r->fn[i];

		if (!f->calls)
			continue;
		f->mean = f->sum / f->calls;
		if (f->sketch) {
			f->p50 = sketch_rank(f->sketch, f->calls, 50, f->max);
			f->p90 = sketch_rank(f->sketch, f->calls, 90, f->max);
			f->p99 = sketch_rank(f->sketch, f->calls, 99, f->max);
		} else {
			size_t k99 = rank_index(f->ndur, 99), k90 = rank_index(f->ndur, 90),
			       k50 = rank_index(f->ndur, 50);

			/* each selection leaves the smaller values in front of it */
			select_k(f->dur, f->ndur, k99);
			f->p99 = f->dur[k99];
			select_k(f->dur, k99 + 1, k90);
			f->p90 = f->dur[k90];
			select_k(f->dur, k90 + 1, k50);
			f->p50 = f->dur[k50];
		}
	}
	return 0;
}

/* ---- ordering ---- */

static const struct snap_report *order_r;
static enum snap_report_sort order_key;

static uint64_t sort_value(const struct snap_report_fn *f, enum snap_report_sort key)
{
	switch (key) {
	case SNAP_REPORT_SORT_TOTAL:
		return f->total;
	case SNAP_REPORT_SORT_CALLS:
		return f->calls;
	case SNAP_REPORT_SORT_MAX:
		return f->max;
	case SNAP_REPORT_SORT_P99:
		return f->p99;
	case SNAP_REPORT_SORT_SELF:
	default:
		return f->self;
	}
}

static int order_cmp(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	uint64_t va = sort_value(&order_r->fn[a], order_key);
	uint64_t vb = sort_value(&order_r->fn[b], order_key);

	if (va != vb)
		return va > vb ? -1 : 1;
	if (order_key != SNAP_REPORT_SORT_TOTAL && order_r->fn[a].total != order_r->fn[b].total)
		return order_r->fn[a].total > order_r->fn[b].total ? -1 : 1;
	return strcmp(snap_strtab_get(order_r->st, a), snap_strtab_get(order_r->st, b));
}

int64_t snap_report_order(const struct snap_report *r, enum snap_report_sort key, uint32_t **out)
{
	size_t n = 0;
	uint32_t *v;

	for (size_t i = 0; i < r->capfn; i++)
		n += r->fn[i].calls != 0;
	v = snap_reallocarray(NULL, n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < r->capfn; i++)
		if (r->fn[i].calls)
			v[n++] = (uint32_t)i;
	order_r = r;
	order_key = key;
	qsort(v, n, sizeof(*v), order_cmp);
	*out = v;
	return (int64_t)n;
}

int snap_report_sort_parse(const char *s, enum snap_report_sort *key)
{
	static const char *const names[] = {"self", "total", "calls", "max", "p99"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*key = (enum snap_report_sort)i;
			return 0;
		}
	return -1;
}
