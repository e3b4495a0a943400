// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>

#include "report/format.h"
#include "report/report.h"
#include "report/rtl.h"
#include "snap_test.h"
#include "util/alloc.h"

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank against a full sort, on sizes 1..300 with few and many distinct values. */
static void rank_matches_sorting(void)
{
	static uint64_t v[300], s[300];
	static const unsigned pct[] = {1, 50, 90, 99, 100};

	for (size_t n = 1; n <= 300; n += (n < 20 ? 1 : 37)) {
		for (int distinct = 0; distinct < 2; distinct++) {
			for (size_t i = 0; i < n; i++)
				s[i] = distinct ? rng() % 1000000 : rng() % 3;
			qsort(s, n, sizeof(*s), u64_cmp);
			for (size_t k = 0; k < sizeof(pct) / sizeof(pct[0]); k++) {
				size_t rank = (n * pct[k] + 99) / 100; /* 1-based */

				memcpy(v, s, n * sizeof(*v));
				for (size_t i = n; i > 1; i--) {
					size_t j = rng() % i;
					uint64_t x = v[i - 1];

					v[i - 1] = v[j];
					v[j] = x;
				}
				CHECK_U64_EQ(s[rank - 1], snap_report_rank(v, n, pct[k]));
			}
		}
	}
}

/* The sketch stands for every value within 1 % (0.8 % by construction). */
static void sketch_error_under_one_percent(void)
{
	size_t last = 0;

	for (uint64_t v = 0; v < 5000; v++) {
		size_t b = snap_report_bucket(v);
		uint64_t r = snap_report_bucket_value(b);

		CHECK(b >= last); /* monotonic */
		last = b;
		CHECK(r * 1000 <= v * 1008 + 0 && r * 1000 >= v * 992);
	}
	for (int i = 0; i < 100000; i++) {
		uint64_t v = rng() >> (rng() % 60);
		uint64_t r = snap_report_bucket_value(snap_report_bucket(v));
		double err = v ? ((double)r - (double)v) / (double)v : 0;

		CHECK(snap_report_bucket(v) < SNAP_REPORT_SKETCH_N);
		CHECK(err <= 0.01 && err >= -0.01);
	}
	CHECK(snap_report_bucket(UINT64_MAX) < SNAP_REPORT_SKETCH_N);
}

static void human_and_shorten(void)
{
	char h[16], s[64];

	CHECK_STR_EQ("0 ns", snap_report_human(0, h));
	CHECK_STR_EQ("999 ns", snap_report_human(999, h));
	CHECK_STR_EQ("1.00 us", snap_report_human(1000, h));
	CHECK_STR_EQ("1.23 us", snap_report_human(1234, h));
	CHECK_STR_EQ("45.7 ms", snap_report_human(45678901, h));
	CHECK_STR_EQ("100 us", snap_report_human(99999, h)); /* rounds up a digit */
	CHECK_STR_EQ("1.00 ms", snap_report_human(999999, h));
	CHECK_STR_EQ("2.00 s", snap_report_human(2000000000, h));
	CHECK_STR_EQ("1234 s", snap_report_human(1234000000000ull, h));
	CHECK_STR_EQ("short", snap_report_shorten("short", 10, s));
	CHECK_STR_EQ("abcd...wxyz", snap_report_shorten("abcdefghijklmnopqrstuvwxyz", 11, s));
	CHECK_INT_EQ(11, strlen(snap_report_shorten("abcdefghijklmnopqrstuvwxyz", 11, s)));
	/* never cut inside a UTF-8 sequence: "é" is 2 bytes */
	snap_report_shorten("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8, s);
	CHECK(strlen(s) <= 8);
	for (size_t i = 0; s[i]; i++)
		if (s[i] == '.')
			CHECK(i == 0 || ((unsigned char)s[i - 1] & 0xc0) != 0xc0);
}

struct fixture {
	struct snap_strtab st;
	struct snap_report r;
	uint32_t f, g, h;
};

static int fixture_init(struct fixture *x, const struct snap_report_opts *o)
{
	snap_strtab_init(&x->st);
	x->f = (uint32_t)snap_strtab_intern_cstr(&x->st, "f");
	x->g = (uint32_t)snap_strtab_intern_cstr(&x->st, "g");
	x->h = (uint32_t)snap_strtab_intern_cstr(&x->st, "h");
	return snap_report_init(&x->r, &x->st, o);
}

static void fixture_fini(struct fixture *x)
{
	snap_report_fini(&x->r);
	snap_strtab_fini(&x->st);
}

/*
 * One thread: f [0, 1000] (the first timestamp: cut) holds g [100, 400] holding
 * h [200, 250]; g [500, 600]; then an instant; the trace ends at 1000. Fed in
 * the order given by perm (begins of later-known slices may come last, as
 * deferred begins do), the figures must not change.
 */
static int feed_may_fail; /* allocation failure tests */

static void feed_nested(struct fixture *x, const int *perm)
{
	struct ev {
		uint32_t kind;
		uint64_t ts, end;
		uint32_t name;
	} evs[] = {
		{SNAP_REPORT_BEGIN, 0, 0, x->f},	{SNAP_REPORT_BEGIN, 100, 0, x->g},
		{SNAP_REPORT_BEGIN, 200, 0, x->h},	{SNAP_REPORT_END, 250, 0, 0},
		{SNAP_REPORT_END, 400, 0, 0},		{SNAP_REPORT_COMPLETE, 500, 600, x->g},
		{SNAP_REPORT_COMPLETE, 700, 700, x->h}, {SNAP_REPORT_END, 1000, 0, 0},
	};

	for (int i = 0; i < 8; i++) {
		const struct ev *e = &evs[perm ? perm[i] : i];

		int err = snap_report_event(&x->r, 1, 2, e->kind, e->ts, e->end, e->name);

		CHECK(err == 0 || (feed_may_fail && err == -ENOMEM));
	}
}

static void check_nested(struct fixture *x)
{
	CHECK_INT_EQ(0, snap_report_finish(&x->r));
	CHECK_U64_EQ(3, x->r.slices);
	CHECK_U64_EQ(1, x->r.open); /* f */
	CHECK_U64_EQ(1000, x->r.span_ns);
	CHECK_U64_EQ(2, x->r.fn[x->g].calls);
	CHECK_U64_EQ(400, x->r.fn[x->g].total);
	CHECK_U64_EQ(350, x->r.fn[x->g].self);
	CHECK_U64_EQ(300, x->r.fn[x->g].max);
	CHECK_U64_EQ(100, x->r.fn[x->g].p50);
	CHECK_U64_EQ(1, x->r.fn[x->h].calls); /* the instant is no call */
	CHECK_U64_EQ(50, x->r.fn[x->h].total);
	CHECK_U64_EQ(0, x->r.fn[x->f].calls);
	CHECK_U64_EQ(1, x->r.fn[x->f].open);
	CHECK_U64_EQ(1000, x->r.th[0].busy_ns);
}

static void slices_any_file_order(void)
{
	/* in order; the outer begin last (a deferred begin); ends before their begins */
	static const int perms[][8] = {
		{0, 1, 2, 3, 4, 5, 6, 7},
		{1, 2, 3, 4, 5, 6, 7, 0},
		{5, 6, 7, 3, 4, 2, 1, 0},
	};

	for (size_t p = 0; p < sizeof(perms) / sizeof(perms[0]); p++) {
		struct fixture x;

		CHECK_INT_EQ(0, fixture_init(&x, NULL));
		feed_nested(&x, perms[p]);
		check_nested(&x);
		fixture_fini(&x);
	}
}

static void folded_and_function(void)
{
	struct snap_report_opts o = {0};
	struct fixture x;
	struct snap_rbuf b = {0};

	o.folded = 1;
	fixture_init(&x, &o);
	x.r.o.function = x.g;
	feed_nested(&x, NULL);
	CHECK_INT_EQ(0, snap_report_finish(&x.r));
	snap_report_folded(&x.r, &b);
	/* the root is the thread's comm, as stackcollapse-perf.pl writes it (":TID" unnamed) */
	CHECK_STR_EQ(":2;f 600\n:2;f;g 350\n:2;f;g;h 50\n", b.p);
	CHECK_INT_EQ(2, x.r.nslow);
	CHECK_U64_EQ(300, x.r.slow[0].dur);
	CHECK_U64_EQ(100, x.r.slow[0].start);
	CHECK_U64_EQ(100, x.r.slow[1].dur);
	CHECK_U64_EQ(1, x.r.hist[7]); /* 100 ns: [64, 128) */
	CHECK_U64_EQ(1, x.r.hist[9]); /* 300 ns: [256, 512) */
	snap_rbuf_fini(&b);
	fixture_fini(&x);
}

/*
 * Sums saturate instead of wrapping: g calls itself twice, each call lasting
 * almost the whole 64-bit clock, so the calls' durations add up past
 * UINT64_MAX (the mean's sum adds the nested calls' time again; the total
 * counts it once). The total must stay >= every call.
 */
static void huge_durations_saturate(void)
{
	const uint64_t t = UINT64_MAX - 1;
	struct snap_report_opts o = {0};
	struct fixture x;
	struct snap_report_fn *g;

	o.folded = 1;
	CHECK_INT_EQ(0, fixture_init(&x, &o));
	CHECK_INT_EQ(0, snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 0, 0, x.h));
	CHECK_INT_EQ(0, snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 1, t - 1, x.g));
	CHECK_INT_EQ(0, snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 2, t - 2, x.g));
	CHECK_INT_EQ(0, snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 3, t - 3, x.g));
	CHECK_INT_EQ(0, snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, t, t, x.h));
	CHECK_INT_EQ(0, snap_report_finish(&x.r));
	g = &x.r.fn[x.g];
	CHECK_U64_EQ(3, g->calls);
	CHECK_U64_EQ(3, x.r.slices);
	CHECK_U64_EQ(t - 2, g->max);
	CHECK_U64_EQ(t - 2, g->total); /* the outer call: recursion counts once */
	CHECK_U64_EQ(UINT64_MAX, g->sum);
	CHECK_U64_EQ(UINT64_MAX / 3, g->mean);
	CHECK_U64_EQ(t - 6 + 2 + 2, g->self); /* the inner call, 2 ns in each outer one */
	CHECK(g->self <= g->total && g->max <= g->total);
	CHECK(g->p50 <= g->p90 && g->p90 <= g->p99 && g->p99 <= g->max);
	CHECK_U64_EQ(t - 2, x.r.th[0].busy_ns);
	fixture_fini(&x);
}

static void anomalies_counted(void)
{
	struct fixture x;

	fixture_init(&x, NULL);
	/* an end with nothing open; a begin never ended; a complete outlasting its parent */
	snap_report_event(&x.r, 1, 1, SNAP_REPORT_BEGIN, 0, 0, x.f);
	snap_report_event(&x.r, 1, 1, SNAP_REPORT_END, 10, 0, 0);
	snap_report_event(&x.r, 1, 1, SNAP_REPORT_END, 20, 0, 0);
	snap_report_event(&x.r, 1, 1, SNAP_REPORT_COMPLETE, 30, 100, x.g);
	snap_report_event(&x.r, 1, 1, SNAP_REPORT_COMPLETE, 40, 150, x.h);
	snap_report_event(&x.r, 1, 1, SNAP_REPORT_BEGIN, 200, 0, x.f);
	snap_report_event(&x.r, 1, 1, SNAP_REPORT_COMPLETE, 300, 301, x.h);
	CHECK_INT_EQ(0, snap_report_finish(&x.r));
	CHECK_U64_EQ(1, x.r.unmatched_ends);
	CHECK_U64_EQ(1, x.r.overlaps);
	CHECK_U64_EQ(60, x.r.fn[x.h].max); /* cut to its parent's end */
	CHECK_U64_EQ(2, x.r.fn[x.h].calls);
	CHECK_U64_EQ(2, x.r.fn[x.f].open); /* at the first timestamp; never ended */
	fixture_fini(&x);
}

static void sketch_past_the_limit(void)
{
	struct snap_report_opts o = {0};
	struct fixture x;
	uint64_t t = 1000;

	o.exact_limit = 100;
	fixture_init(&x, &o);
	snap_report_event(&x.r, 1, 1, SNAP_REPORT_BEGIN, 0, 0, x.f);
	for (uint64_t i = 1; i <= 1000; i++) {
		snap_report_event(&x.r, 1, 1, SNAP_REPORT_COMPLETE, t, t + i * 1000, x.g);
		t += i * 1000 + 1;
	}
	snap_report_event(&x.r, 1, 1, SNAP_REPORT_END, t + 1, 0, 0);
	CHECK_INT_EQ(0, snap_report_finish(&x.r));
	CHECK(x.r.fn[x.g].sketch != NULL);
	CHECK_INT_EQ(1, x.r.nsketched);
	CHECK_U64_EQ(1000, x.r.fn[x.g].calls);
	CHECK_U64_EQ(1000000, x.r.fn[x.g].max);
	CHECK(x.r.fn[x.g].p50 >= 495000 && x.r.fn[x.g].p50 <= 505000);
	CHECK(x.r.fn[x.g].p99 >= 980100 && x.r.fn[x.g].p99 <= 999900);
	fixture_fini(&x);
}

static void thread_filter_and_window(void)
{
	struct snap_report_opts o = {0};
	struct fixture x;

	o.has_thread = 1;
	o.tid = 2;
	o.has_window = 1;
	o.win_start = 150;
	o.win_end = 650;
	fixture_init(&x, &o);
	feed_nested(&x, NULL);
	snap_report_event(&x.r, 1, 3, SNAP_REPORT_COMPLETE, 5000, 6000, x.h); /* other thread */
	CHECK_INT_EQ(0, snap_report_finish(&x.r));
	CHECK_INT_EQ(1, x.r.nth);
	CHECK_U64_EQ(500, x.r.span_ns);
	CHECK_U64_EQ(2, x.r.slices); /* h [200,250], g [500,600] */
	CHECK_U64_EQ(2, x.r.open);   /* f, g [100,400] cross the edges */
	CHECK_U64_EQ(500, x.r.th[0].busy_ns);
	fixture_fini(&x);
}

/* The timeline consumer: the inferred flag and the sampling counter. */
static void timeline_consumer(void)
{
	struct fixture x;
	struct snap_report_tl tl;
	struct snap_arg a[2];

	fixture_init(&x, NULL);
	CHECK_INT_EQ(0, snap_report_tl_init(&tl, &x.r));
	tl.base.ops->thread(&tl.base, 1, 2, 0, x.h);
	a[0].name = tl.inferred;
	a[0].type = SNAP_ARG_STR;
	a[0].v.str = x.h;
	tl.base.ops->begin(&tl.base, 1, 2, 50, x.f, a, 1);
	tl.base.ops->begin(&tl.base, 1, 2, 10, x.g, NULL, 0); /* the first timestamp */
	tl.base.ops->begin(&tl.base, 1, 2, 60, x.h, NULL, 0);
	tl.base.ops->end(&tl.base, 1, 2, 70, x.h);
	tl.base.ops->end(&tl.base, 1, 2, 80, x.f);
	tl.base.ops->end(&tl.base, 1, 2, 90, x.g);
	tl.base.ops->begin(&tl.base, 1, 2, 95, x.h, NULL, 0);
	a[0].name = tl.period_arg;
	a[0].type = SNAP_ARG_INT;
	a[0].v.i = 1000;
	tl.base.ops->counter(&tl.base, 1, 2, 0, tl.sampling, a, 1);
	CHECK_INT_EQ(0, tl.base.ops->finish(&tl.base));
	CHECK_INT_EQ(0, snap_report_finish(&x.r));
	CHECK(x.r.sampled);
	CHECK_U64_EQ(1000, x.r.sample_period);
	CHECK_U64_EQ(1, x.r.fn[x.h].calls);
	CHECK_U64_EQ(1, x.r.fn[x.f].open); /* inferred start */
	CHECK_U64_EQ(1, x.r.fn[x.g].open); /* began at the first timestamp */
	CHECK_INT_EQ(x.h, x.r.th[0].name);
	fixture_fini(&x);
}

static void out_of_memory(void)
{
	for (long n = 0; n < 400; n++) {
		struct snap_report_opts o = {0};
		struct fixture x;
		struct snap_rbuf b = {0};
		int err;

		o.folded = 1;
		o.exact_limit = 2;
		snap_strtab_init(&x.st);
		x.f = (uint32_t)snap_strtab_intern_cstr(&x.st, "f");
		x.g = (uint32_t)snap_strtab_intern_cstr(&x.st, "g");
		x.h = (uint32_t)snap_strtab_intern_cstr(&x.st, "h");
		feed_may_fail = 1;
		snap_alloc_fail_after(n);
		err = snap_report_init(&x.r, &x.st, &o);
		if (!err) {
			feed_nested(&x, (const int[]){1, 2, 3, 4, 5, 6, 7, 0});
			snap_report_event(&x.r, 1, 9, SNAP_REPORT_COMPLETE, 1, 5, x.g);
			snap_report_event(&x.r, 1, 9, SNAP_REPORT_COMPLETE, 6, 9, x.g);
			snap_report_event(&x.r, 1, 9, SNAP_REPORT_COMPLETE, 10, 19, x.g);
			snap_report_event(&x.r, 1, 9, SNAP_REPORT_COMPLETE, 20, 29, x.g);
			err = snap_report_finish(&x.r);
		}
		if (!err) {
			snap_report_text(&x.r, &(struct snap_report_fmt){"t", 20, 0}, &b);
			snap_report_json(&x.r, &(struct snap_report_fmt){"t", 0, 0}, &b);
			snap_report_folded(&x.r, &b);
			err = b.err;
		}
		snap_alloc_fail_after(-1);
		feed_may_fail = 0;
		CHECK(err == 0 || err == -ENOMEM);
		snap_rbuf_fini(&b);
		snap_report_fini(&x.r);
		snap_strtab_fini(&x.st);
		if (!err)
			return;
	}
	CHECK(0); /* never succeeded */
}

/* Unknown code keeps its address in the table: "0xADDR (DSO base name)". */
static void table_labels(void)
{
	struct fixture x;
	struct snap_report_opts o = {0};
	struct snap_rbuf b = {0};
	uint32_t u[3];

	CHECK_INT_EQ(0, fixture_init(&x, &o));
	u[0] = (uint32_t)snap_strtab_intern_cstr(&x.st, "[unknown @ 0x4883 (/usr/bin/gzip)]");
	u[1] = (uint32_t)snap_strtab_intern_cstr(
		&x.st, "[unknown @ 0x7f12a4b3c0de (/usr/lib/x86_64-linux-gnu/libc.so.6)]");
	u[2] = (uint32_t)snap_strtab_intern_cstr(&x.st, "[unknown @ 0x10 ([unknown])]");
	for (int i = 0; i < 3; i++)
		CHECK_INT_EQ(0, snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE,
						  10u * (unsigned)i, 10u * (unsigned)i + 5, u[i]));
	CHECK_INT_EQ(0, snap_report_finish(&x.r));
	snap_report_text(&x.r, &(struct snap_report_fmt){"t", 0, 0}, &b);
	CHECK_INT_EQ(0, b.err);
	CHECK(b.p && strstr(b.p, "\n0x4883 (gzip)                      1 ") != NULL);
	CHECK(b.p && strstr(b.p, "\n0x7f12a4b3c0de (libc.so.6)         1 ") != NULL);
	CHECK(b.p && strstr(b.p, "\n0x10 ([unknown])                   1 ") != NULL);
	snap_rbuf_fini(&b);
	fixture_fini(&x);

	/* -function takes the label too: the trace's name is adopted at its first call */
	snap_strtab_init(&x.st);
	o.function = (uint32_t)snap_strtab_intern_cstr(&x.st, "0x4883 (gzip)");
	u[0] = (uint32_t)snap_strtab_intern_cstr(&x.st, "[unknown @ 0x4883 (/usr/bin/gzip)]");
	u[1] = (uint32_t)snap_strtab_intern_cstr(&x.st, "[unknown @ 0x4883 (/usr/bin/gzip2)]");
	CHECK_INT_EQ(0, snap_report_init(&x.r, &x.st, &o));
	CHECK_INT_EQ(0, snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 0, 2, u[1]));
	CHECK_INT_EQ(0, snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 10, 15, u[0]));
	CHECK_INT_EQ(0, snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 20, 27, u[0]));
	CHECK_INT_EQ(0, snap_report_finish(&x.r));
	CHECK_INT_EQ((int)u[0], (int)x.r.o.function);
	CHECK_U64_EQ(2, x.r.hist[3]); /* 5 and 7 ns: [4, 8) */
	CHECK_U64_EQ(0, x.r.hist[2]); /* not gzip2's 2 ns */
	fixture_fini(&x);
}

/*
 * Recursion counts once in the total (perf's children): r [100, 1100] calls r
 * [200, 700] calling r [300, 400]; a second r [1200, 1300]; an r whose outer
 * call is cut (it begins at the thread's first timestamp) still counts its
 * nested complete call. Calls and percentiles count every call.
 */
static void recursion_total_once(void)
{
	struct fixture x;
	struct snap_report_fn *f;

	CHECK_INT_EQ(0, fixture_init(&x, NULL));
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_BEGIN, 0, 0, x.g); /* cut: first timestamp */
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 10, 60, x.g);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 20, 30, x.g);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_END, 90, 0, 0);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_BEGIN, 100, 0, x.f);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_BEGIN, 200, 0, x.f);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 300, 400, x.f);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_END, 700, 0, 0);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_END, 1100, 0, 0);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 1200, 1300, x.f);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 2000, 2000, x.h);
	CHECK_INT_EQ(0, snap_report_finish(&x.r));
	f = &x.r.fn[x.f];
	CHECK_U64_EQ(4, f->calls);
	CHECK_U64_EQ(1100, f->total); /* 1000 + 100, not 1000 + 500 + 100 + 100 */
	CHECK_U64_EQ(1700, f->sum);
	CHECK_U64_EQ(425, f->mean); /* of the calls' durations */
	CHECK_U64_EQ(1100, f->self);
	CHECK_U64_EQ(1000, f->max);
	CHECK(f->total <= x.r.span_ns);
	f = &x.r.fn[x.g];
	CHECK_U64_EQ(2, f->calls); /* [10, 60] and [20, 30] inside the cut outer call */
	CHECK_U64_EQ(50, f->total);
	CHECK_U64_EQ(1, f->open);
	fixture_fini(&x);
}

/*
 * Inlined frames (perf's "(inlined)"): f [0, 1000] holds g [100, 900] holding
 * the inlined h [200, 800], which calls g again [300, 400]; h's own 500 ns go
 * to g's self (the real function it was inlined into, as perf report does),
 * h is its own row "h [inlined]" with self 0; a real h stays apart.
 */
static void inlined_self_stays_with_the_real_function(void)
{
	struct snap_report_opts o = {0};
	struct fixture x;
	struct snap_rbuf b = {0};
	uint32_t hi;

	o.folded = 1;
	CHECK_INT_EQ(0, fixture_init(&x, &o));
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_BEGIN, 0, 0, x.f);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_BEGIN, 100, 0, x.g);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_BEGIN | SNAP_REPORT_F_INLINED, 200, 0, x.h);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 300, 400, x.g);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_END, 800, 0, 0);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_END, 900, 0, 0);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 950, 960, x.h);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_END, 1000, 0, 0);
	CHECK_INT_EQ(0, snap_report_finish(&x.r));
	hi = snap_strtab_find(&x.st, "h [inlined]", 11);
	CHECK(hi != 0);
	CHECK(x.r.fn[hi].inlined);
	CHECK_U64_EQ(1, x.r.fn[hi].calls);
	CHECK_U64_EQ(600, x.r.fn[hi].total);
	CHECK_U64_EQ(0, x.r.fn[hi].self);
	CHECK_U64_EQ(1, x.r.fn[x.h].calls); /* the real h */
	CHECK_U64_EQ(10, x.r.fn[x.h].self);
	CHECK_U64_EQ(2, x.r.fn[x.g].calls);
	CHECK_U64_EQ(800, x.r.fn[x.g].total); /* the nested g counts once */
	CHECK_U64_EQ(100 + 100 + 500 + 100, x.r.fn[x.g].self);
	snap_report_folded(&x.r, &b);
	CHECK_STR_EQ(":2;f 190\n:2;f;g 200\n:2;f;g;h_[i] 500\n:2;f;g;h_[i];g 100\n:2;f;h 10\n",
		     b.p);
	snap_rbuf_fini(&b);
	snap_report_json(&x.r, &(struct snap_report_fmt){"t", 0, 0}, &b);
	CHECK(b.p && strstr(b.p, "{\"name\": \"h [inlined]\", \"calls\": 1, \"total_ns\": 600, "
				 "\"self_ns\": 0,") != NULL);
	CHECK(b.p && strstr(b.p, "\"inlined\": true}") != NULL);
	snap_rbuf_fini(&b);
	fixture_fini(&x);
}

/* docs/report.md: in a sampled trace whose ends carry sampled_ns, self time is
 * samples x period (an inlined frame's goes to the real function below it),
 * [off-CPU] slices keep their durations, folded stacks use the same values; the
 * same events without the sampling marker keep the duration rule. */
static void sampled_self_is_samples_times_period(void)
{
	for (int sampled = 0; sampled < 2; sampled++) {
		struct snap_report_opts o = {0};
		struct fixture x;
		struct snap_rbuf b = {0};
		uint32_t off, gi;

		o.folded = 1;
		CHECK_INT_EQ(0, fixture_init(&x, &o));
		off = (uint32_t)snap_strtab_intern_cstr(&x.st, "[off-CPU]");
		if (sampled)
			snap_report_sampled(&x.r, 250);
		snap_report_event(&x.r, 1, 2, SNAP_REPORT_BEGIN, 0, 0, x.f);
		snap_report_event(&x.r, 1, 2, SNAP_REPORT_BEGIN, 100, 0, x.g);
		snap_report_event(&x.r, 1, 2, SNAP_REPORT_END | SNAP_REPORT_F_SAMPLED, 160, 250, 0);
		snap_report_event(&x.r, 1, 2, SNAP_REPORT_BEGIN, 200, 0, x.h);
		snap_report_event(&x.r, 1, 2, SNAP_REPORT_BEGIN | SNAP_REPORT_F_INLINED, 300, 0,
				  x.g);
		snap_report_event(&x.r, 1, 2, SNAP_REPORT_END | SNAP_REPORT_F_SAMPLED, 400, 250, 0);
		snap_report_event(&x.r, 1, 2, SNAP_REPORT_END | SNAP_REPORT_F_SAMPLED, 1000, 500,
				  0);
		snap_report_event(&x.r, 1, 2, SNAP_REPORT_BEGIN, 1000, 0, off);
		snap_report_event(&x.r, 1, 2, SNAP_REPORT_END, 1500, 0, 0);
		snap_report_event(&x.r, 1, 2, SNAP_REPORT_END | SNAP_REPORT_F_SAMPLED, 2000, 0, 0);
		CHECK_INT_EQ(0, snap_report_finish(&x.r));
		gi = snap_strtab_find(&x.st, "g [inlined]", 11);
		CHECK(gi != 0);
		CHECK_U64_EQ(1, x.r.fn[x.g].calls);
		CHECK_U64_EQ(60, x.r.fn[x.g].total);
		CHECK_U64_EQ(sampled ? 250 : 60, x.r.fn[x.g].self);
		CHECK_U64_EQ(0, x.r.fn[gi].self);
		CHECK_U64_EQ(800, x.r.fn[x.h].total);
		CHECK_U64_EQ(sampled ? 750 : 800, x.r.fn[x.h].self);
		CHECK_U64_EQ(500, x.r.fn[off].self);
		CHECK_U64_EQ(1, x.r.fn[x.f].open); /* the first and last timestamps: cut */
		snap_report_folded(&x.r, &b);
		CHECK_STR_EQ(
			sampled ? ":2;f;g 250\n:2;f;h 500\n:2;f;h;g_[i] 250\n:2;f;[off-CPU] 500\n"
				: ":2;f 640\n:2;f;g 60\n:2;f;h 700\n:2;f;h;g_[i] 100\n"
				  ":2;f;[off-CPU] 500\n",
			b.p);
		snap_rbuf_fini(&b);
		fixture_fini(&x);
	}
}

/* Names that shorten alike keep what tells them apart; -function takes the label. */
static void labels_never_collide(void)
{
	static const char *const names[] = {
		"main::{lambda(int)#1}::operator()",
		"main::{lambda(int)#2}::operator()",
		"[unknown @ 0x4883 (/usr/bin/gzip)]",
		"[unknown @ 0x4883 (/opt/bin/gzip)]",
		"app::detail::handler::kind_A::process_request",
		"app::detail::handler::kind_B::process_request",
		"a_very_long_prefix_that_is_the_same_X_and_a_very_long_suffix_the_same",
		"a_very_long_prefix_that_is_the_same_Y_and_a_very_long_suffix_the_same",
		"short",
	};
	enum { N = sizeof(names) / sizeof(names[0]) };
	struct snap_report_opts o = {0};
	struct fixture x;
	uint32_t id[N];

	snap_strtab_init(&x.st);
	o.function = (uint32_t)snap_strtab_intern_cstr(&x.st, "app::de...B::process_request");
	for (size_t i = 0; i < N; i++)
		id[i] = (uint32_t)snap_strtab_intern_cstr(&x.st, names[i]);
	CHECK_INT_EQ(0, snap_report_init(&x.r, &x.st, &o));
	for (size_t i = 0; i < N; i++)
		CHECK_INT_EQ(0, snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 10 * i + 1,
						  10 * i + 2 + i, id[i]));
	CHECK_INT_EQ(0, snap_report_finish(&x.r));
	for (size_t i = 0; i < N; i++) {
		const char *li = snap_strtab_get(&x.st, x.r.fn[id[i]].label);

		CHECK(strlen(li) <= SNAP_REPORT_NAME_W);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(li, snap_strtab_get(&x.st, x.r.fn[id[j]].label)) != 0);
	}
	/* g++'s lambdas: the parameters go, the number stays */
	CHECK_STR_EQ("main::{lambda#1}::operator()", snap_strtab_get(&x.st, x.r.fn[id[0]].label));
	/* the same head and tail: the cut moves right (the tail grows) ... */
	CHECK_STR_EQ("app::de...A::process_request", snap_strtab_get(&x.st, x.r.fn[id[4]].label));
	CHECK_STR_EQ("app::de...B::process_request", snap_strtab_get(&x.st, x.r.fn[id[5]].label));
	/* ... no cut tells them apart: "~N" by name order */
	CHECK_STR_EQ("a_very_long_...ix_the_same~1", snap_strtab_get(&x.st, x.r.fn[id[6]].label));
	CHECK_STR_EQ("a_very_long_...ix_the_same~2", snap_strtab_get(&x.st, x.r.fn[id[7]].label));
	CHECK_STR_EQ("0x4883 (gzip)~1", snap_strtab_get(&x.st, x.r.fn[id[3]].label));
	CHECK_STR_EQ("0x4883 (gzip)~2", snap_strtab_get(&x.st, x.r.fn[id[2]].label));
	CHECK_STR_EQ("short", snap_strtab_get(&x.st, x.r.fn[id[8]].label));
	CHECK_INT_EQ((int)id[5], (int)x.r.o.function); /* -function by the label */
	CHECK_INT_EQ(0, x.r.function_missing);
	CHECK_U64_EQ(1, x.r.hist[3]); /* its one call of 6 ns: [4, 8) */
	fixture_fini(&x);
}

/* An unknown -function or -thread: flagged, with close matches. */
static void unknown_names_have_close_matches(void)
{
	struct snap_report_opts o = {0};
	struct fixture x;
	uint32_t out[5], parse;
	int32_t tids[5];

	snap_strtab_init(&x.st);
	o.function = (uint32_t)snap_strtab_intern_cstr(&x.st, "Parse");
	parse = (uint32_t)snap_strtab_intern_cstr(&x.st, "parse_line");
	x.f = (uint32_t)snap_strtab_intern_cstr(&x.st, "prase");
	x.g = (uint32_t)snap_strtab_intern_cstr(&x.st, "main");
	CHECK_INT_EQ(0, snap_report_init(&x.r, &x.st, &o));
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 1, 5, parse);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 6, 9, x.f);
	snap_report_event(&x.r, 1, 2, SNAP_REPORT_COMPLETE, 10, 19, x.g);
	CHECK_INT_EQ(0, snap_report_finish(&x.r));
	CHECK_INT_EQ(1, x.r.function_missing);
	CHECK_INT_EQ(2, snap_report_close_functions(&x.r, "Parse", out, 5));
	CHECK_INT_EQ((int)parse, (int)out[0]); /* a substring first, then 2 edits */
	CHECK_INT_EQ((int)x.f, (int)out[1]);
	CHECK_INT_EQ(0, snap_report_close_functions(&x.r, "zzz", out, 5));
	fixture_fini(&x);

	memset(&o, 0, sizeof(o));
	o.has_thread = 1;
	o.tid = 1235;
	CHECK_INT_EQ(0, fixture_init(&x, &o));
	snap_report_event(&x.r, 1, 1234, SNAP_REPORT_COMPLETE, 1, 5, x.f);
	snap_report_event(&x.r, 1, 77, SNAP_REPORT_COMPLETE, 1, 5, x.f);
	snap_report_thread_name(&x.r, 1, 1236, x.g);
	CHECK_INT_EQ(0, snap_report_finish(&x.r));
	CHECK_INT_EQ(1, x.r.thread_missing);
	CHECK_INT_EQ(2, (int)snap_report_close_threads(&x.r, 1235, tids, 5));
	CHECK_INT_EQ(1234, tids[0]);
	CHECK_INT_EQ(1236, tids[1]);
	/* none close: the first seen */
	CHECK_INT_EQ(2, (int)snap_report_close_threads(&x.r, 5555, tids, 2));
	CHECK_INT_EQ(1234, tids[0]);
	CHECK_INT_EQ(77, tids[1]);
	fixture_fini(&x);
}

int main(void)
{
	RUN(rank_matches_sorting);
	RUN(sketch_error_under_one_percent);
	RUN(human_and_shorten);
	RUN(table_labels);
	RUN(recursion_total_once);
	RUN(inlined_self_stays_with_the_real_function);
	RUN(sampled_self_is_samples_times_period);
	RUN(labels_never_collide);
	RUN(unknown_names_have_close_matches);
	RUN(slices_any_file_order);
	RUN(folded_and_function);
	RUN(anomalies_counted);
	RUN(huge_durations_saturate);
	RUN(sketch_past_the_limit);
	RUN(thread_filter_and_window);
	RUN(timeline_consumer);
	RUN(out_of_memory);
	return snap_test_done();
}
