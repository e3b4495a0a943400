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

int main(void)
{
	RUN(parse_arg);
	RUN(pairing);
	RUN(step);
	RUN(samples);
	return snap_test_done();
}
