// SPDX-License-Identifier: GPL-2.0
/* Unit tests: the -filter argument and the START -> STOP pairing (stack/filter.c). */
#include <errno.h>
#include <stdlib.h>

#include "snap_test.h"
#include "stack/filter.h"
#include "util/alloc.h"

static void parse_arg(void)
{
	static const struct {
		const char *in, *start, *stop; /* start NULL: rejected */
	} cases[] = {
		{"(a b)", "a", "b"},
		{"  ( foo   bar )  ", "foo", "bar"},
		{"(symbol:foo symbol:bar)", "foo", "bar"},
		{"(\"operator()\" \"x \\\"y\\\"\")", "operator()", "x \"y\""},
		{"(Foo::bar<int> baz.qux)", "Foo::bar<int>", "baz.qux"},
		{"(a)", NULL, NULL},
		{"(a b c)", NULL, NULL},
		{"a b", NULL, NULL},
		{"(a b", NULL, NULL},
		{"(a b) x", NULL, NULL},
		{"()", NULL, NULL},
		{"(\"\" b)", NULL, NULL},
		{"(symbol: b)", NULL, NULL},
		{"(\"a b)", NULL, NULL},
		{"", NULL, NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *a = NULL, *b = NULL;
		int r = snap_filter_parse_arg(cases[i].in, &a, &b);

		if (cases[i].start) {
			CHECK_INT_EQ(0, r);
			CHECK_STR_EQ(cases[i].start, a);
			CHECK_STR_EQ(cases[i].stop, b);
		} else {
			CHECK_INT_EQ(-EINVAL, r);
			CHECK(a == NULL && b == NULL);
		}
		snap_free(a);
		snap_free(b);
	}
}

/* Feeds calls to START (1) / STOP (2) / other (3) at times 1, 2, ... and
 * returns the kept hits as a string like "1+2-" (time, + start, - stop). */
static void pairs(const char *seq, const char *want, size_t npairs)
{
	struct snap_filter f;
	struct snap_event ev;
	char got[64] = "";
	size_t n = 0;

	snap_filter_init(&f, 1, 2);
	memset(&ev, 0, sizeof(ev));
	ev.kind = SNAP_EV_BRANCH;
	ev.br_kind = SNAP_BR_CALL;
	ev.has_time = 1;
	for (size_t i = 0; seq[i]; i++) {
		ev.time = i + 1;
		ev.dst.sym = (uint32_t)(seq[i] == 'S' ? 1 : seq[i] == 'T' ? 2 : 3);
		CHECK_INT_EQ(0, snap_filter_scan(&f, &ev));
	}
	CHECK_INT_EQ(npairs, snap_filter_pair(&f));
	for (size_t i = 0; i < f.nhits; i++)
		n += (size_t)snprintf(got + n, sizeof(got) - n, "%d%c", (int)f.hits[i].time,
				      f.hits[i].stop ? '-' : '+');
	CHECK_STR_EQ(want, got);
	snap_filter_fini(&f);
}

static void pairing(void)
{
	pairs("STxST", "1+2-4+5-", 2);
	pairs("SST", "2+3-", 1);  /* of STARTs in a row the last counts */
	pairs("TST", "2+3-", 1);  /* a STOP before any START vanishes */
	pairs("STT", "1+2-", 1);  /* read left to right: S T pairs, the last T is unpaired */
	pairs("TTST", "3+4-", 1); /* two STOPs in a row both go */
	pairs("STTST", "1+2-4+5-", 2);
	pairs("S", "", 0); /* trailing, unpaired */
	pairs("STS", "1+2-", 1);
	pairs("xxx", "", 0);
}

/* Pass 2: the START call is written, events up to the STOP call too, the
 * STOP call and what follows are not. */
static void step(void)
{
	struct snap_filter f;
	struct snap_event ev;
	static const char seq[] = "xSxxTxSx";
	static const int want[] = {0, 1, 1, 1, 0, 0, 0, 0}; /* the last S is unpaired */

	snap_filter_init(&f, 1, 2);
	memset(&ev, 0, sizeof(ev));
	ev.kind = SNAP_EV_BRANCH;
	ev.br_kind = SNAP_BR_CALL;
	ev.has_time = 1;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; seq[i]; i++) {
			ev.time = i + 1;
			ev.dst.sym = (uint32_t)(seq[i] == 'S' ? 1 : seq[i] == 'T' ? 2 : 3);
			if (!pass)
				CHECK_INT_EQ(0, snap_filter_scan(&f, &ev));
			else
				CHECK_INT_EQ(want[i], snap_filter_step(&f, &ev));
		}
		if (!pass)
			CHECK_INT_EQ(1, snap_filter_pair(&f));
	}
	snap_filter_fini(&f);
}

/* Samples: the innermost frame that is START or STOP decides. */
static void samples(void)
{
	struct snap_filter f;
	struct snap_event ev;
	struct snap_loc fr[3];

	memset(fr, 0, sizeof(fr));
	fr[0].sym = 1; /* outermost: START */
	fr[1].sym = 2; /* STOP, inner: wins */
	fr[2].sym = 3;
	snap_filter_init(&f, 1, 2);
	memset(&ev, 0, sizeof(ev));
	ev.kind = SNAP_EV_SAMPLE;
	ev.has_time = 1;
	ev.time = 5;
	ev.frames = fr;
	ev.nframes = 3;
	CHECK_INT_EQ(0, snap_filter_scan(&f, &ev));
	CHECK_INT_EQ(1, f.nhits);
	CHECK_INT_EQ(1, f.hits[0].stop);
	snap_filter_fini(&f);
}

/* Samples: START/STOP anywhere in the stack; a call is the first sample of
 * the thread whose stack holds it (filter.h). Pass 2 toggles at those. */
static void sample_calls(void)
{
	/* per sample: syms outermost first (0 ends), thread, want hit (0 none, 1 START, 2 STOP) */
	static const struct {
		uint32_t sym[3];
		int32_t tid;
		int hit, open;
	} s[] = {
		{{9, 1, 8}, 1, 1, 0}, /* START (1) in the middle: a new call (then dropped:
				       * another START follows) */
		{{9, 1, 8}, 1, 0, 0}, /* the same call */
		{{9, 1, 0}, 2, 1, 1}, /* another thread: its own call */
		{{9, 2, 7}, 1, 2, 0}, /* STOP (2) */
		{{9, 2, 1}, 1, 1, 1}, /* START called inside STOP: only START is new */
		{{9, 2, 0}, 1, 0, 1}, /* START returned: no hit */
		{{9, 0, 0}, 1, 0, 1}, {{9, 2, 0}, 1, 2, 0}, /* STOP again */
	};
	struct snap_filter f;
	struct snap_event ev;
	struct snap_loc fr[3];

	snap_filter_init(&f, 1, 2);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
			uint32_t n = 0;

			memset(fr, 0, sizeof(fr));
			while (n < 3 && s[i].sym[n]) {
				fr[n].sym = s[i].sym[n];
				fr[n].ip = 0x1000 + n;
				n++;
			}
			memset(&ev, 0, sizeof(ev));
			ev.kind = SNAP_EV_SAMPLE;
			ev.has_time = 1;
			ev.time = 10 + i;
			ev.pid = 1;
			ev.tid = s[i].tid;
			ev.frames = fr;
			ev.nframes = n;
			if (!pass) {
				size_t before = f.nhits;

				CHECK_INT_EQ(0, snap_filter_scan(&f, &ev));
				CHECK_INT_EQ(s[i].hit != 0, f.nhits - before);
				if (s[i].hit && f.nhits > before)
					CHECK_INT_EQ(s[i].hit == 2, f.hits[before].stop);
			} else {
				CHECK_INT_EQ(s[i].open, snap_filter_step(&f, &ev));
			}
		}
		if (!pass)
			CHECK_INT_EQ(2, snap_filter_pair(&f));
	}
	snap_filter_fini(&f);
}

int main(void)
{
	RUN(parse_arg);
	RUN(pairing);
	RUN(step);
	RUN(samples);
	RUN(sample_calls);
	return snap_test_done();
}
