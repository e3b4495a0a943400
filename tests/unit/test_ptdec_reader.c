// SPDX-License-Identifier: GPL-2.0
/* The reader's side of the in-process PT decoder (src/ptdec, docs/ptdec.md "The
 * reader"): the locations the decode threads look up and the reader names, the
 * commands' memo, and what a segment's producer fills in for the reader. */
#include <errno.h>
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

/* A reader over the queue of pieces pcs[0..n) (their events set by the caller),
 * with w the reader's context; reader_fini frees what reader_init made. */
struct reader {
	struct snap_ptdec d;
	struct snap_strtab st;
	struct wctx w;
	struct queue q;
	size_t qp[2];
};

static void reader_init(struct reader *t, struct piece *pcs, size_t n)
{
	dec_init(&t->d, &t->st);
	t->d.lead = NO_IDX;
	for (uint32_t f = 0; f < FLTAB_N; f++)
		t->d.fltab[f] = ptd_flags_bytes(f);
	pthread_mutex_init(&t->d.mu, NULL);
	pthread_cond_init(&t->d.cv_work, NULL);
	pthread_cond_init(&t->d.cv_done, NULL);
	pthread_cond_init(&t->d.cv_pub, NULL);
	memset(&t->w, 0, sizeof(t->w));
	t->w.d = &t->d;
	t->w.lcache = snap_calloc((size_t)1 << LCACHE_BITS, sizeof(*t->w.lcache));
	CHECK(t->w.lcache != NULL);
	t->d.rctx = &t->w;
	memset(&t->q, 0, sizeof(t->q));
	for (size_t i = 0; i < n; i++)
		t->qp[i] = i;
	t->q.pieces = t->qp;
	t->q.npieces = n;
	t->q.last_cbr = -1;
	t->d.pieces = pcs;
	t->d.npieces = n;
	t->d.queues = &t->q;
	t->d.nqueues = 1;
	t->d.live = n;
}

static void reader_fini(struct reader *t)
{
	ptd_wctx_fini(&t->w);
	pthread_mutex_destroy(&t->d.mu);
	pthread_cond_destroy(&t->d.cv_work);
	pthread_cond_destroy(&t->d.cv_done);
	pthread_cond_destroy(&t->d.cv_pub);
	dec_fini(&t->d, &t->st);
}

/* A done piece of events ev[0..n) (owned by it from now on). */
static void done_piece(struct piece *pc, struct rawev *ev, size_t n, int raw)
{
	memset(pc, 0, sizeof(*pc));
	pc->state = PIECE_DONE;
	pc->ev = ev;
	pc->nev = pc->cap = n;
	pc->raw = raw;
}

/* A continuation piece's "tr strt" after a piece that ended in perf's error
 * recovery is perf's resync: from nowhere, at the time the piece holds for it
 * (struct piece's strt_time: a raw event has no room for it), not its own; the
 * producer's locations and the reader's (raw) agree. */
static void resync_start_takes_the_pieces_time(void)
{
	for (int raw = 0; raw < 2; raw++) {
		struct reader t;
		struct piece pcs[2];
		struct rawev *e0 = snap_calloc(1, sizeof(*e0)), *e1 = snap_calloc(2, sizeof(*e1));
		struct snap_event out[4];

		CHECK(e0 && e1);
		if (!e0 || !e1)
			return;
		e0[0].kind = RAW_ERROR;
		e0[0].err = ERR_OVR;
		e0[0].est = 1;
		e0[0].time = 100;
		e0[0].pid = e0[0].tid = 9;
		e1[0].kind = RAW_BRANCH; /* the implicit start (machine.c, start_trace) */
		e1[0].implicit = 1;
		e1[0].est = 1;
		e1[0].flags = SNAP_PF_BRANCH | SNAP_PF_TRACE_BEGIN;
		e1[0].addr = 0x401000;
		e1[0].time = 500; /* the TSC's: not perf's time for the resync */
		e1[0].pid = e1[0].tid = 9;
		e1[1] = e1[0];
		e1[1].implicit = 0;
		e1[1].est = 0;
		e1[1].flags = SNAP_PF_BRANCH | SNAP_PF_CALL;
		e1[1].ip = 0x401004;
		e1[1].addr = 0x402000;
		e1[1].time = 600;
		done_piece(&pcs[0], e0, 1, raw);
		pcs[0].run_start = 1;
		pcs[0].err_open = 1;
		done_piece(&pcs[1], e1, 2, raw);
		pcs[1].strt_time = 420;
		reader_init(&t, pcs, 2);
		if (!raw)
			for (int i = 0; i < 2; i++)
				ptd_prep_branch(&t.w, &e1[i]);
		CHECK_INT_EQ(3, snap_ptdec_fill(&t.d, out, 4));
		CHECK_INT_EQ(SNAP_EV_ERROR, out[0].kind);
		CHECK_INT_EQ(SNAP_EV_BRANCH, out[1].kind);
		CHECK_U64_EQ(420, out[1].time);
		CHECK_U64_EQ(0, out[1].src.ip);
		CHECK_U64_EQ(0x401000, out[1].dst.ip);
		CHECK_INT_EQ(SNAP_BR_START, out[1].br_state);
		CHECK_U64_EQ(600, out[2].time);
		CHECK_U64_EQ(0x401004, out[2].src.ip);
		CHECK_INT_EQ(0, snap_ptdec_fill(&t.d, out, 4));
		reader_fini(&t);
	}
}

/* A branch whose producer ran out of memory for a location (d->loom) fails
 * the decode with -ENOMEM there: the events before it first, then the error
 * (nothing is made up for it). */
static void location_out_of_memory_fails_at_its_branch(void)
{
	struct reader t;
	struct piece pc;
	struct rawev *ev = snap_calloc(3, sizeof(*ev));
	struct snap_event out[4];

	CHECK(ev != NULL);
	if (!ev)
		return;
	for (int i = 0; i < 3; i++) {
		ev[i].kind = RAW_BRANCH;
		ev[i].pid = ev[i].tid = 9;
		ev[i].flags = SNAP_PF_BRANCH | SNAP_PF_CALL;
		ev[i].ip = 0x401000 + 16 * (uint64_t)i;
		ev[i].addr = 0x402000;
		ev[i].time = 10 + (uint64_t)i;
	}
	done_piece(&pc, ev, 3, 0);
	pc.run_start = 1;
	reader_init(&t, &pc, 1);
	for (int i = 0; i < 3; i++)
		ptd_prep_branch(&t.w, &ev[i]);
	ev[1].dl = &t.d.loom;
	CHECK_INT_EQ(1, snap_ptdec_fill(&t.d, out, 4));
	CHECK_U64_EQ(0x401000, out[0].src.ip);
	CHECK_INT_EQ(-ENOMEM, snap_ptdec_fill(&t.d, out, 4));
	CHECK_INT_EQ(0, t.d.loom.named);
	t.d.live = 0;
	ptd_release_piece(&t.d, &pc); /* (the reader stopped inside it) */
	reader_fini(&t);
}

/* With $SNAPTRACE_PTDEC_DEBUG the producer hands its branches on raw (the
 * reader describes each raw event before it prepares it, ptdec.c), whole. */
static void debug_leaves_the_branches_raw(void)
{
	struct reader t;
	struct piece pc;
	struct rawev *ev = snap_calloc(1, sizeof(*ev)), want;

	CHECK(ev != NULL);
	if (!ev)
		return;
	ev[0].kind = RAW_BRANCH;
	ev[0].flags = SNAP_PF_BRANCH | SNAP_PF_CALL;
	ev[0].ip = 0x401000;
	ev[0].addr = 0x402000;
	want = ev[0];
	reader_init(&t, &pc, 1);
	t.d.debug = 1;
	memset(&pc, 0, sizeof(pc));
	pc.ev = ev;
	pc.cap = pc.nev = 1;
	pc.w = &t.w;
	t.d.evcap = 1;
	CHECK_INT_EQ(0, ptd_publish(&t.d, &pc, 1));
	CHECK(pc.pub == ev && pc.npub == 1);
	CHECK(!memcmp(&want, ev, sizeof(want)));
	snap_free(pc.pub);
	snap_free(pc.ev);
	reader_fini(&t);
}

int main(void)
{
	RUN(one_location_per_address);
	RUN(names_in_the_readers_order);
	RUN(command_memo_is_the_scan);
	RUN(producer_fills_the_branches);
	RUN(raised_time_takes_the_new_command);
	RUN(resync_start_takes_the_pieces_time);
	RUN(location_out_of_memory_fails_at_its_branch);
	RUN(debug_leaves_the_branches_raw);
	return snap_test_done();
}
