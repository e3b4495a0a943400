// SPDX-License-Identifier: GPL-2.0
/* source/batch: the bounded queue of event batches of the decode's consumer thread. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "snap_test.h"
#include "source/batch.h"
#include "util/alloc.h"

#define N_EVENTS 1000

/* What the taking thread saw. */
struct taker {
	struct snap_batchq *q;
	long stop_after; /* >= 0: stop q with -EIO after this many events */
	long n;		 /* events taken */
	int bad;	 /* out of order, or frames not what was put */
	size_t max_batch;
};

/* Event i: tid i, i % 5 frames whose ips are i * 100 + the frame's index. */
static void make_event(struct snap_event *ev, struct snap_loc *frames, long i)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = i % 5 ? SNAP_EV_SAMPLE : SNAP_EV_BRANCH;
	ev->tid = (int32_t)i;
	ev->nframes = (uint32_t)(i % 5);
	for (uint32_t k = 0; k < ev->nframes; k++) {
		memset(&frames[k], 0, sizeof(frames[k]));
		frames[k].ip = (uint64_t)i * 100 + k;
	}
	ev->frames = ev->nframes ? frames : NULL;
}

static void *take_all(void *p)
{
	struct taker *t = p;
	struct snap_batch *b;

	while ((b = snap_batchq_get(t->q))) {
		if (b->n > t->max_batch)
			t->max_batch = b->n;
		for (size_t i = 0; i < b->n; i++, t->n++) {
			const struct snap_event *ev = &b->ev[i];

			t->bad += ev->tid != t->n || ev->nframes != (uint32_t)(t->n % 5);
			for (uint32_t k = 0; k < ev->nframes; k++)
				t->bad += ev->frames[k].ip != (uint64_t)t->n * 100 + k;
			if (t->stop_after >= 0 && t->n == t->stop_after)
				snap_batchq_stop(t->q, -EIO);
		}
		snap_batchq_done(t->q, b);
	}
	return NULL;
}

/* Every event arrives once, in order, with copies of its frames (the putter
 * reuses its frame buffer at once), in batches of at most the size asked for;
 * the frame arena grows for an event bigger than it. */
static void keeps_order(size_t nbatches)
{
	struct snap_batchq q;
	struct taker t = {.q = &q, .stop_after = -1};
	struct snap_loc frames[8];
	struct snap_event ev;
	pthread_t thr;
	int err = 0;

	/* 3 frames to start with: events of 4 frames make the arena grow */
	CHECK_INT_EQ(0, snap_batchq_init(&q, nbatches, 7, 3));
	CHECK_INT_EQ(0, pthread_create(&thr, NULL, take_all, &t));
	for (long i = 0; i < N_EVENTS && !err; i++) {
		make_event(&ev, frames, i);
		err = snap_batchq_put(&q, &ev);
		memset(frames, 0xff, sizeof(frames)); /* the source's next event */
	}
	CHECK_INT_EQ(0, err);
	CHECK_INT_EQ(0, snap_batchq_close(&q));
	pthread_join(thr, NULL);
	CHECK_INT_EQ(N_EVENTS, t.n);
	CHECK_INT_EQ(0, t.bad);
	CHECK(t.max_batch <= 7 && t.max_batch > 1);
	CHECK_INT_EQ(0, snap_batchq_error(&q));
	snap_batchq_fini(&q);
}

static void batchq_keeps_order_and_owns_frames(void)
{
	keeps_order(2);
	keeps_order(3);
	keeps_order(8); /* the sides wake when 4 are ready */
}

/* The same through the slots (no copy: the source fills the batch in place):
 * runs of events without frames committed at once, an event with frames one at a
 * time; an event whose frames do not fit beside its batch's events moves, frames
 * and all, to the next batch. */
static void slots_keep_order(size_t nbatches)
{
	struct snap_batchq q;
	struct taker t = {.q = &q, .stop_after = -1};
	struct snap_loc frames[8];
	struct snap_event *ev;
	size_t room;
	pthread_t thr;
	long i = 0;
	int err = 0;

	CHECK_INT_EQ(0, snap_batchq_init(&q, nbatches, 7, 3));
	CHECK_INT_EQ(0, pthread_create(&thr, NULL, take_all, &t));
	while (i < N_EVENTS && !err && !(err = snap_batchq_slots(&q, &ev, &room))) {
		size_t k = 0;

		CHECK(room >= 1 && room <= 7);
		/* a run of events without frames (every fifth), else one with frames */
		while (k < room && i + (long)k < N_EVENTS && (i + (long)k) % 5 == 0) {
			make_event(&ev[k], frames, i + (long)k);
			k++;
		}
		if (k) {
			snap_batchq_commit_n(&q, k);
			i += (long)k;
			continue;
		}
		make_event(ev, frames, i++);
		err = snap_batchq_commit(&q, ev);
		memset(frames, 0xff, sizeof(frames)); /* the source's next event */
	}
	CHECK_INT_EQ(0, err);
	CHECK_INT_EQ(0, snap_batchq_close(&q));
	pthread_join(thr, NULL);
	CHECK_INT_EQ(N_EVENTS, t.n);
	CHECK_INT_EQ(0, t.bad);
	CHECK(t.max_batch <= 7 && t.max_batch > 1);
	snap_batchq_fini(&q);
}

static void batchq_slots_fill_in_place(void)
{
	slots_keep_order(2);
	slots_keep_order(8);
}

/* The taking side stops (the builder failed): put returns its error within
 * the batches in flight, close returns it too, and nothing hangs. */
static void batchq_stop_by_taker_reaches_putter(void)
{
	struct snap_batchq q;
	struct taker t = {.q = &q, .stop_after = 10};
	struct snap_loc frames[8];
	struct snap_event ev;
	pthread_t thr;
	long i;
	int err = 0;

	CHECK_INT_EQ(0, snap_batchq_init(&q, 3, 4, 16));
	CHECK_INT_EQ(0, pthread_create(&thr, NULL, take_all, &t));
	for (i = 0; i < N_EVENTS && !err; i++) {
		make_event(&ev, frames, i);
		err = snap_batchq_put(&q, &ev);
	}
	CHECK_INT_EQ(-EIO, err);
	CHECK(i < N_EVENTS);
	CHECK_INT_EQ(-EIO, snap_batchq_close(&q));
	pthread_join(thr, NULL);
	CHECK_INT_EQ(0, t.bad);
	CHECK(t.n >= 11 && t.n <= 14); /* the rest of the batch it stopped in (<= 4) */
	CHECK_INT_EQ(-EIO, snap_batchq_error(&q));
	snap_batchq_fini(&q);
}

/* The putting side stops (the source failed, Ctrl-C): the taker gets NULL
 * at once, even with full batches queued; a second stop keeps the first error. */
static void batchq_stop_by_putter_ends_taker(void)
{
	struct snap_batchq q;
	struct snap_loc frames[8];
	struct snap_event ev;

	CHECK_INT_EQ(0, snap_batchq_init(&q, 3, 2, 0));
	for (long i = 0; i < 4; i++) { /* two full batches, queued; no taker yet */
		make_event(&ev, frames, i);
		CHECK_INT_EQ(0, snap_batchq_put(&q, &ev));
	}
	make_event(&ev, frames, 4);
	CHECK_INT_EQ(0, snap_batchq_put(&q, &ev)); /* hands the second over */
	snap_batchq_stop(&q, -EINTR);
	snap_batchq_stop(&q, -EIO);
	CHECK(snap_batchq_get(&q) == NULL);
	CHECK_INT_EQ(-EINTR, snap_batchq_error(&q));
	snap_batchq_fini(&q);
}

/* A putter waiting for an empty batch is woken by a stop. */
static void *stop_later(void *p)
{
	struct snap_batchq *q = p;
	struct snap_batch *b = snap_batchq_get(q); /* the putter is at work */

	CHECK(b != NULL);
	snap_batchq_stop(q, -ENOSPC); /* (b never given back) */
	return NULL;
}

static void batchq_stop_wakes_waiting_putter(void)
{
	struct snap_batchq q;
	struct snap_loc frames[8];
	struct snap_event ev;
	pthread_t thr;
	int err = 0;

	CHECK_INT_EQ(0, snap_batchq_init(&q, 2, 1, 0));
	CHECK_INT_EQ(0, pthread_create(&thr, NULL, stop_later, &q));
	for (long i = 0; i < N_EVENTS && !err; i++) {
		make_event(&ev, frames, i * 5); /* no frames */
		err = snap_batchq_put(&q, &ev);
	}
	CHECK_INT_EQ(-ENOSPC, err);
	pthread_join(thr, NULL);
	snap_batchq_fini(&q);
}

/* Nothing put: the taker gets NULL at close. */
static void batchq_empty_input(void)
{
	struct snap_batchq q;

	CHECK_INT_EQ(0, snap_batchq_init(&q, 2, 8, 8));
	CHECK_INT_EQ(0, snap_batchq_close(&q));
	CHECK(snap_batchq_get(&q) == NULL);
	CHECK_INT_EQ(0, snap_batchq_error(&q));
	snap_batchq_fini(&q);
}

/* Every allocation of init, and the growth of the frame arena, may fail:
 * -ENOMEM, nothing leaked (ASan). */
static void batchq_alloc_failures(void)
{
	struct snap_batchq q;
	struct snap_loc frames[8];
	struct snap_event ev;
	struct snap_batch *b;
	int ok = 0;

	for (long n = 0; n < 40 && !ok; n++) {
		snap_alloc_fail_after(n);
		if (snap_batchq_init(&q, 3, 4, 2) == 0) {
			ok = 1;
			snap_batchq_fini(&q);
		}
		snap_alloc_fail_after(-1);
	}
	CHECK(ok);
	CHECK_INT_EQ(0, snap_batchq_init(&q, 2, 4, 2));
	make_event(&ev, frames, 4); /* 4 frames: the arena of 2 grows */
	snap_alloc_fail_after(0);
	CHECK_INT_EQ(-ENOMEM, snap_batchq_put(&q, &ev));
	snap_alloc_fail_after(-1);
	CHECK_INT_EQ(0, snap_batchq_put(&q, &ev));
	CHECK_INT_EQ(0, snap_batchq_close(&q));
	b = snap_batchq_get(&q);
	CHECK(b && b->n == 1 && b->ev[0].frames[3].ip == 403);
	snap_batchq_fini(&q);
}

int main(void)
{
	RUN(batchq_keeps_order_and_owns_frames);
	RUN(batchq_slots_fill_in_place);
	RUN(batchq_stop_by_taker_reaches_putter);
	RUN(batchq_stop_by_putter_ends_taker);
	RUN(batchq_stop_wakes_waiting_putter);
	RUN(batchq_empty_input);
	RUN(batchq_alloc_failures);
	return snap_test_done();
}
