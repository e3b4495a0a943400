// SPDX-License-Identifier: GPL-2.0
/* Per-thread coverage (stack/thcover.c): on-CPU time before a thread's first
 * sample, from switch records, and which threads lost their start. */
#include <stdint.h>
#include <string.h>

#include "snap_test.h"
#include "stack/thcover.h"

static struct snap_event ev(enum snap_ev_kind k, int tid, uint64_t t, int out)
{
	struct snap_event e;

	memset(&e, 0, sizeof(e));
	e.kind = k;
	e.pid = 10;
	e.tid = tid;
	e.time = t;
	e.has_time = 1;
	e.sw_out = (uint8_t)out;
	return e;
}

/* Feeds one event of ev's making. */
static int feed(struct snap_thcover *c, const struct snap_strtab *st, enum snap_ev_kind k, int tid,
		uint64_t t, int out)
{
	struct snap_event e = ev(k, tid, t, out);

	return snap_thcover_feed(c, &e, st);
}

#define MS 1000000ull

/* xz -T2 with -multi-thread: the worker (11) ran from 0 to 6300 ms with its
 * samples overwritten; the main thread (10) was sampled from the start; a
 * short thread (12) ran 3 ms and exited, every sample overwritten. */
static void overwritten_starts(void)
{
	struct snap_thcover c;
	struct snap_strtab st;
	struct snap_event e;
	size_t idx[3];
	int64_t name;

	snap_strtab_init(&st);
	name = snap_strtab_intern_cstr(&st, "xz");
	CHECK(name > 0);
	snap_thcover_init(&c);
	CHECK_INT_EQ(0, feed(&c, &st, SNAP_EV_SWITCH, 10, 1, 0)); /* (perf times are never 0) */
	e = ev(SNAP_EV_SAMPLE, 10, 1 * MS, 0);
	e.comm = (uint32_t)name;
	CHECK_INT_EQ(0, snap_thcover_feed(&c, &e, &st));
	/* the worker: in at 2 ms, out/in a few times, first sample at 6300 ms */
	CHECK_INT_EQ(0, feed(&c, &st, SNAP_EV_SWITCH, 11, 2 * MS, 0));
	CHECK_INT_EQ(0, feed(&c, &st, SNAP_EV_SWITCH, 11, 3002 * MS, 1));
	CHECK_INT_EQ(0, feed(&c, &st, SNAP_EV_SWITCH, 11, 3100 * MS, 0));
	CHECK_INT_EQ(0, feed(&c, &st, SNAP_EV_SWITCH, 12, 4000 * MS, 0));
	CHECK_INT_EQ(0, feed(&c, &st, SNAP_EV_SWITCH, 12, 4003 * MS, 1));
	e = ev(SNAP_EV_SAMPLE, 11, 6300 * MS, 0);
	e.comm = (uint32_t)name;
	CHECK_INT_EQ(0, snap_thcover_feed(&c, &e, &st));
	CHECK_INT_EQ(0, feed(&c, &st, SNAP_EV_SAMPLE, 10, 8400 * MS, 0));
	/* a later switch of the worker does not count: it has samples by then */
	CHECK_INT_EQ(0, feed(&c, &st, SNAP_EV_SWITCH, 11, 8401 * MS, 1));
	CHECK_INT_EQ(3, (int)c.n);
	CHECK_STR_EQ("xz", c.th[1].name);
	CHECK_U64_EQ(6300 * MS, c.th[1].first_sample);
	CHECK_U64_EQ((3000 + 3200) * MS, snap_thcover_lost_ns(&c, &c.th[1]));
	CHECK_U64_EQ(3 * MS, snap_thcover_lost_ns(&c, &c.th[2]));
	CHECK_U64_EQ(1 * MS - 1, snap_thcover_lost_ns(&c, &c.th[0]));
	/* 10 periods at 4 kHz: the worker and the short thread, longest first */
	CHECK_INT_EQ(2, (int)snap_thcover_lost(&c, 2500000, idx, 3));
	CHECK_INT_EQ(1, (int)idx[0]);
	CHECK_INT_EQ(2, (int)idx[1]);
	/* only the longest fits */
	CHECK_INT_EQ(2, (int)snap_thcover_lost(&c, 2500000, idx, 1));
	CHECK_INT_EQ(1, (int)idx[0]);
	CHECK_INT_EQ(1, (int)snap_thcover_lost(&c, 10 * MS, idx, 3));
	snap_thcover_fini(&c);
	snap_strtab_fini(&st);
}

/* A thread already running when the recording began (its first record is a
 * switch-out) counts from the first record of all; one still on a CPU at the
 * end without a sample counts until the last record; PT branches, events
 * without a time or thread are ignored. */
static void edges(void)
{
	struct snap_thcover c;
	struct snap_event e;
	size_t idx[2];

	snap_thcover_init(&c);
	CHECK_INT_EQ(0, feed(&c, NULL, SNAP_EV_SAMPLE, 20, 100 * MS, 0));
	CHECK_INT_EQ(0, feed(&c, NULL, SNAP_EV_SWITCH, 21, 150 * MS, 1));
	CHECK_INT_EQ(0, feed(&c, NULL, SNAP_EV_SWITCH, 22, 160 * MS, 0));
	CHECK_INT_EQ(0, feed(&c, NULL, SNAP_EV_BRANCH, 23, 170 * MS, 0));
	CHECK_INT_EQ(0, feed(&c, NULL, SNAP_EV_SAMPLE, 0, 175 * MS, 0));
	e = ev(SNAP_EV_SAMPLE, 20, 180 * MS, 0);
	e.has_time = 0;
	CHECK_INT_EQ(0, snap_thcover_feed(&c, &e, NULL));
	CHECK_INT_EQ(0, feed(&c, NULL, SNAP_EV_SAMPLE, 20, 200 * MS, 0));
	CHECK_INT_EQ(3, (int)c.n);
	CHECK_U64_EQ(2, c.th[0].samples);
	CHECK_U64_EQ(0, snap_thcover_lost_ns(&c, &c.th[0]));
	CHECK_U64_EQ(50 * MS, snap_thcover_lost_ns(&c, &c.th[1]));
	CHECK_U64_EQ(40 * MS, snap_thcover_lost_ns(&c, &c.th[2]));
	CHECK_STR_EQ("", c.th[1].name);
	CHECK_INT_EQ(2, (int)snap_thcover_lost(&c, 1 * MS, idx, 2));
	CHECK_INT_EQ(0, (int)snap_thcover_lost(&c, 0, idx, 2));
	snap_thcover_fini(&c);
	snap_thcover_fini(&c);
}

/* A thread per request (python3's http.server): switched in, never sampled, then
 * its exit record and no switch-out (perf closes an exiting task's events before
 * its last switch): it was on a CPU until its exit, not until the end of the data. */
static void exit_ends_oncpu(void)
{
	struct snap_thcover c;
	struct snap_event e;
	size_t idx[2];

	snap_thcover_init(&c);
	CHECK_INT_EQ(0, feed(&c, NULL, SNAP_EV_SAMPLE, 30, 1 * MS, 0));
	CHECK_INT_EQ(0, feed(&c, NULL, SNAP_EV_SWITCH, 31, 10 * MS, 0));
	e = ev(SNAP_EV_TASK, 31, 10 * MS + 200000, 0);
	e.task_exit = 1;
	CHECK_INT_EQ(0, snap_thcover_feed(&c, &e, NULL));
	CHECK_INT_EQ(0, feed(&c, NULL, SNAP_EV_SAMPLE, 30, 900 * MS, 0));
	CHECK_U64_EQ(200000, snap_thcover_lost_ns(&c, &c.th[1]));
	CHECK_INT_EQ(0, (int)snap_thcover_lost(&c, 2500000, idx, 2));
	snap_thcover_fini(&c);
}

int main(void)
{
	RUN(overwritten_starts);
	RUN(edges);
	RUN(exit_ends_oncpu);
	return snap_test_done();
}
