// SPDX-License-Identifier: GPL-2.0
/* The reader's side of the in-process PT decoder (src/ptdec, docs/ptdec.md "The
 * reader"): the locations the decode threads look up and the reader names, the
 * commands' memo, and what a segment's producer fills in for the reader. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/event.h"
#include "ptdec/ptdec_int.h"
#include "snap_test.h"
#include "util/alloc.h"
#include "util/strtab.h"

/* A decoder with no mappings (every address is "[unknown @ ...]"), its
 * locations' table, its names in st. */
static void dec_init(struct snap_ptdec *d, struct snap_strtab *st)
{
	memset(d, 0, sizeof(*d));
	snap_strtab_init(st);
	d->names = st;
	d->acache = snap_calloc((size_t)1 << ACACHE_BITS, sizeof(*d->acache));
	d->abits = ACACHE_BITS;
	d->lnone.named = 1;
	CHECK(d->acache != NULL);
	pthread_mutex_init(&d->symu, NULL);
}

static void dec_fini(struct snap_ptdec *d, struct snap_strtab *st)
{
	while (d->lblocks) {
		struct lblock *b = d->lblocks;

		d->lblocks = b->next;
		snap_free(b);
	}
	snap_free(d->acache);
	pthread_mutex_destroy(&d->symu);
	snap_strtab_fini(st);
}

/* One location per process and address, however many there are: the table
 * grows (a cache that evicted made a new location at every miss, so memory grew
 * with the misses, not the addresses, and two threads could get two). */
static void one_location_per_address(void)
{
	enum { N = 5000 };
	static struct lent *first[N];
	struct snap_ptdec d;
	struct snap_strtab st;
	size_t same = 0, distinct = 1;

	dec_init(&d, &st);
	for (size_t i = 0; i < N; i++)
		first[i] = ptd_locate(&d, (int32_t)(i % 3), 0x400000 + 16 * (uint64_t)i);
	for (size_t i = 0; i < N; i++)
		same += ptd_locate(&d, (int32_t)(i % 3), 0x400000 + 16 * (uint64_t)i) == first[i];
	CHECK_INT_EQ(N, (int)same);
	CHECK_INT_EQ(N, (int)d.nalocs);
	CHECK(d.abits > ACACHE_BITS);
	for (size_t i = 1; i < N; i++)
		distinct += first[i] != first[i - 1];
	CHECK_INT_EQ(N, (int)distinct);
	/* another process, same address: another location */
	CHECK(ptd_locate(&d, 7, 0x400000) != first[0]);
	CHECK_U64_EQ(0x400010, first[1]->loc.ip);
	CHECK_INT_EQ(0, first[1]->named);
	dec_fini(&d, &st);
}

/* A location's name gets its id when the reader names it, not when a decode
 * thread made it: ids follow the events, whatever thread looked them up first. */
static void names_in_the_readers_order(void)
{
	struct snap_ptdec d;
	struct snap_strtab st;
	struct lent *a, *b;

	dec_init(&d, &st);
	a = ptd_locate(&d, 1, 0x1000);
	b = ptd_locate(&d, 1, 0x2000);
	CHECK(a && b);
	if (!a || !b)
		return;
	CHECK_INT_EQ(0, (int)a->loc.sym);
	CHECK_INT_EQ(0, ptd_name_loc(&d, b));
	CHECK_INT_EQ(0, ptd_name_loc(&d, a));
	CHECK_INT_EQ(1, a->named);
	CHECK_INT_EQ(1, (int)b->loc.sym); /* the first named, the first id */
	CHECK_INT_EQ(2, (int)a->loc.sym);
	CHECK_STR_EQ("[unknown @ 0x1000 ([unknown])]", snap_strtab_get(&st, a->loc.sym));
	CHECK_INT_EQ(0, ptd_name_loc(&d, a)); /* named once */
	CHECK_INT_EQ(2, (int)a->loc.sym);
	dec_fini(&d, &st);
}

/* The commands' memo gives what a scan of the COMMs gives, at every time, in
 * any order of the lookups; a thread without COMMs has none. */
static void command_memo_is_the_scan(void)
{
	struct comm comms[] = {{100, 5, 11}, {150, 6, 21}, {200, 5, 12}, {300, 5, 13}};
	static const uint64_t times[] = {0,   99,  100,	       101, 199, 200, 250, 299,
					 300, 301, UINT64_MAX, 150, 5,	 200, 1000};
	struct snap_ptdec d;
	struct cmemo m, fresh;

	memset(&d, 0, sizeof(d));
	memset(&m, 0, sizeof(m));
	d.comms = comms;
	d.ncomms = sizeof(comms) / sizeof(comms[0]);
	for (int tid = 4; tid <= 6; tid++)
		for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
			uint64_t t = times[i];
			uint32_t want = tid == 6   ? 21
					: tid == 4 ? 0
					: t < 200  ? 11
					: t < 300  ? 12
						   : 13;

			memset(&fresh, 0, sizeof(fresh));
			CHECK_INT_EQ((int)want, (int)ptd_comm_at(&d, &m, tid, t));
			CHECK_INT_EQ((int)want, (int)ptd_comm_at(&d, &fresh, tid, t));
		}
	memset(&m, 0, sizeof(m));
	CHECK_INT_EQ(0, (int)ptd_comm_at(&d, &m, 0, 0)); /* a zeroed memo holds nothing */
	d.timeless = 1;					 /* timeless: the last COMM */
	memset(&m, 0, sizeof(m));
	CHECK_INT_EQ(13, (int)ptd_comm_at(&d, &m, 5, 0));
}

/* What the producer of a segment fills in for the reader (pool.c, prep_events,
 * from ptd_publish): each branch's flags' event bytes, its command at its time
 * and its two locations; address 0 is the location of nothing. */
static void producer_fills_the_branches(void)
{
	struct comm comms[] = {{50, 9, 77}};
	struct snap_ptdec d;
	struct snap_strtab st;
	struct wctx w;
	struct piece pc;
	struct rawev *ev;
	struct snap_event want;
	uint32_t flags[3];

	dec_init(&d, &st);
	d.comms = comms;
	d.ncomms = 1;
	d.evcap = 1;
	pthread_mutex_init(&d.mu, NULL);
	pthread_cond_init(&d.cv_pub, NULL);
	pthread_cond_init(&d.cv_done, NULL);
	memset(&w, 0, sizeof(w));
	w.d = &d;
	memset(&pc, 0, sizeof(pc));
	pc.w = &w;
	ev = snap_calloc(3, sizeof(*ev));
	CHECK(ev != NULL);
	if (!ev)
		return;
	for (int i = 0; i < 3; i++) {
		ev[i].kind = RAW_BRANCH;
		ev[i].pid = ev[i].tid = 9;
		ev[i].time = 60;
		ev[i].ip = 0x401000;
		ev[i].addr = 0x402000;
	}
	ev[0].flags = flags[0] = SNAP_PF_BRANCH | SNAP_PF_CALL;	  /* below FLTAB_N: the table */
	ev[1].flags = flags[1] = SNAP_PF_BRANCH | SNAP_PF_VMEXIT; /* above: worked out */
	ev[2].flags = flags[2] = SNAP_PF_BRANCH | SNAP_PF_TRACE_BEGIN; /* "tr strt": from nowhere */
	ev[2].ip = 0;
	ev[1].time = 40; /* before the thread's COMM: its first one still */
	for (uint32_t f = 0; f < FLTAB_N; f++) {
		memset(&want, 0, sizeof(want));
		want.has_time = 1;
		snap_event_set_branch_flags(&want, f);
		memcpy(&d.fltab[f], &want.has_time, 4);
	}
	pc.ev = ev;
	pc.cap = pc.nev = 3;
	CHECK_INT_EQ(0, ptd_publish(&d, &pc, 3));
	CHECK(pc.pub == ev && pc.npub == 3);
	for (int i = 0; i < 3; i++) {
		memset(&want, 0, sizeof(want));
		want.has_time = 1;
		snap_event_set_branch_flags(&want, flags[i]); /* (evfl is over flags) */
		CHECK(!memcmp(ev[i].evfl, &want.has_time, 4));
		CHECK(ev[i].dl && ev[i].dl->loc.ip == 0x402000);
	}
	CHECK_INT_EQ(SNAP_BR_VMEXIT, ev[1].evfl[1]);
	CHECK(ev[0].sl && ev[0].sl == ev[1].sl && ev[0].sl->loc.ip == 0x401000);
	CHECK(ev[0].dl == ev[2].dl);
	CHECK(ev[2].sl == &d.lnone && d.lnone.named);
	snap_free(pc.pub);
	snap_free(pc.ev);
	ptd_wctx_fini(&w);
	pthread_mutex_destroy(&d.mu);
	pthread_cond_destroy(&d.cv_pub);
	pthread_cond_destroy(&d.cv_done);
	d.comms = NULL;
	dec_fini(&d, &st);
}

/* A branch whose time perf's queue time rule raises past a COMM of its thread
 * gets the command at its new time, not the one its producer saw at its own
 * (the reader looks it up again), whether the producer or the reader (a piece
 * it decoded itself: raw) prepared the branch. */
static void raised_time_takes_the_new_command(void)
{
	struct comm comms[] = {{0, 9, 11}, {100, 9, 12}};

	for (int raw = 0; raw < 2; raw++) {
		struct snap_ptdec d;
		struct snap_strtab st;
		struct wctx w;
		struct queue q;
		struct piece pc;
		size_t qp = 0;
		struct rawev *ev = snap_calloc(2, sizeof(*ev));
		struct snap_event out[4];

		dec_init(&d, &st);
		CHECK(ev != NULL);
		if (!ev)
			return;
		d.comms = comms;
		d.ncomms = 2;
		d.lead = NO_IDX;
		for (uint32_t f = 0; f < FLTAB_N; f++)
			d.fltab[f] = ptd_flags_bytes(f);
		pthread_mutex_init(&d.mu, NULL);
		pthread_cond_init(&d.cv_work, NULL);
		pthread_cond_init(&d.cv_done, NULL);
		pthread_cond_init(&d.cv_pub, NULL);
		memset(&w, 0, sizeof(w));
		w.d = &d;
		w.lcache = snap_calloc((size_t)1 << LCACHE_BITS, sizeof(*w.lcache));
		CHECK(w.lcache != NULL);
		d.rctx = &w;
		for (int i = 0; i < 2; i++) {
			ev[i].kind = RAW_BRANCH;
			ev[i].pid = ev[i].tid = 9;
			ev[i].flags = SNAP_PF_BRANCH | SNAP_PF_CALL;
			ev[i].ip = 0x401000 + (uint64_t)i;
			ev[i].addr = 0x402000;
		}
		ev[0].time = 150; /* estimated: the queue's time is 150 from it on */
		ev[0].est = 1;
		ev[1].time = 50; /* before the second COMM: raised to 150, after it */
		if (!raw)
			for (int i = 0; i < 2; i++)
				ptd_prep_branch(&w, &ev[i]);
		memset(&pc, 0, sizeof(pc));
		pc.state = PIECE_DONE;
		pc.run_start = 1;
		pc.ev = ev;
		pc.nev = pc.cap = 2;
		pc.raw = raw;
		memset(&q, 0, sizeof(q));
		q.pieces = &qp;
		q.npieces = 1;
		q.last_cbr = -1;
		d.pieces = &pc;
		d.npieces = 1;
		d.queues = &q;
		d.nqueues = 1;
		d.live = 1;
		CHECK_INT_EQ(2, snap_ptdec_fill(&d, out, 4));
		CHECK_U64_EQ(150, out[1].time);
		CHECK_INT_EQ(12, (int)out[0].comm);
		CHECK_INT_EQ(12, (int)out[1].comm);
		CHECK_INT_EQ(SNAP_BR_CALL, out[1].br_kind);
		CHECK_INT_EQ(1, out[1].has_time);
		CHECK_U64_EQ(0x401001, out[1].src.ip);
		CHECK_STR_EQ("[unknown @ 0x402000 ([unknown])]",
			     snap_strtab_get(&st, out[1].dst.sym));
		CHECK_INT_EQ(0, snap_ptdec_fill(&d, out, 4));
		CHECK(pc.state == PIECE_RELEASED);
		ptd_wctx_fini(&w);
		pthread_mutex_destroy(&d.mu);
		pthread_cond_destroy(&d.cv_work);
		pthread_cond_destroy(&d.cv_done);
		pthread_cond_destroy(&d.cv_pub);
		d.comms = NULL;
		dec_fini(&d, &st);
	}
}

int main(void)
{
	RUN(one_location_per_address);
	RUN(names_in_the_readers_order);
	RUN(command_memo_is_the_scan);
	RUN(producer_fills_the_branches);
	RUN(raised_time_takes_the_new_command);
	return snap_test_done();
}
