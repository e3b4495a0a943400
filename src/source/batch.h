/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Events in batches from one thread to another (the decode's pipeline,
 * docs/design.md "The consumer thread"): the reading thread puts the events of
 * a source in, in order; a consumer thread takes them out as batches, in the
 * same order. A batch owns what its events point to (the sample frames a
 * source lends until its next event are copied into the batch), so an event
 * stays valid until its batch is given back. The queue is bounded: nbatches
 * batches of at most `events` events, reused, so memory stays flat whatever
 * the input's length; the reading thread waits while all are full. A side that
 * waits sleeps until half the batches are ready for it (full ones for the
 * taker, empty ones for the putter), not just one: the two threads run about
 * as fast, and waking at every batch cost a futex wake-up and a sleep a batch
 * (docs/design.md, "The consumer thread").
 *
 * Stopping: either side calls snap_batchq_stop with an error (the first one
 * is kept); every wait ends, put and close return it, get returns NULL. The
 * end of the input is snap_batchq_close: get returns the rest, then NULL.
 */
#ifndef SNAP_SOURCE_BATCH_H
#define SNAP_SOURCE_BATCH_H

#include <pthread.h>
#include <stddef.h>

#include "model/event.h"

/* A run of events, with the frames they point to. */
struct snap_batch {
	struct snap_event *ev; /* ev[0..n) */
	size_t n, cap;
	struct snap_loc *frames; /* ev[i].frames point in here */
	size_t nframes, fcap;	 /* allocated for the first event with frames; grows */
};

struct snap_batchq {
	pthread_mutex_t mu;
	pthread_cond_t can_get, can_put;
	struct snap_batch *all; /* nall batches */
	size_t nall;
	struct snap_batch **full; /* ring of nfull from full_head: filled, in order */
	size_t full_head, nfull;
	struct snap_batch **free; /* nfree empty ones */
	size_t nfree;
	struct snap_batch *cur;	    /* the one being filled (the putting thread's) */
	size_t frames0;		    /* a batch's first frame arena */
	size_t wake;		    /* a waiting side wakes when this many are ready (nall / 2) */
	int get_asleep, put_asleep; /* a side waits */
	int closed;		    /* the putting thread is done */
	int err;		    /* stopped: the first error (< 0), else 0 */
};

/* nbatches (>= 2) batches of events events (>= 1), with room for frames
 * frames once an event has some. Returns 0 or -ENOMEM (q is then as after fini). */
int snap_batchq_init(struct snap_batchq *q, size_t nbatches, size_t events, size_t frames);
/* Releases q (both threads done with it). */
void snap_batchq_fini(struct snap_batchq *q);

/* snap_batchq_put's slow path: frames to copy, or a full batch to hand over. */
int snap_batchq_put_slow(struct snap_batchq *q, const struct snap_event *ev);
/* The putting side: copies ev (and its frames, when nframes and frames are
 * set) into the current batch, handing the batch over when it is full (and
 * waiting for an empty one). Returns 0, -ENOMEM, or the error q was stopped
 * with (noticed when a batch is handed over). */
static inline int snap_batchq_put(struct snap_batchq *q, const struct snap_event *ev)
{
	struct snap_batch *b = q->cur;

	if (b && b->n < b->cap && !(ev->nframes && ev->frames)) {
		b->ev[b->n++] = *ev;
		return 0;
	}
	return snap_batchq_put_slow(q, ev);
}
/* snap_batchq_slot's slow path: hands the full batch over, takes an empty one. */
int snap_batchq_slot_slow(struct snap_batchq *q, struct snap_event **ev);
/* The putting side without a copy: *ev is the slot the next event goes in, in the
 * current batch (a full one is handed over first, waiting for an empty one), for
 * the source to fill; snap_batchq_commit puts it in, a slot never committed is
 * left (the next call returns it again). Its old contents are stale: the filler
 * sets every field. Returns 0, or the error q was stopped with (*ev unset). */
static inline int snap_batchq_slot(struct snap_batchq *q, struct snap_event **ev)
{
	struct snap_batch *b = q->cur;

	if (b && b->n < b->cap) {
		*ev = &b->ev[b->n];
		return 0;
	}
	return snap_batchq_slot_slow(q, ev);
}
/* snap_batchq_slot for several events: *ev, *room slots (>= 1), the rest of the
 * current batch, for events without frames (snap_batchq_commit_n). */
static inline int snap_batchq_slots(struct snap_batchq *q, struct snap_event **ev, size_t *room)
{
	int err = snap_batchq_slot(q, ev);

	*room = err < 0 ? 0 : q->cur->cap - q->cur->n;
	return err;
}
/* Puts the first n of the slots snap_batchq_slots gave (filled, none with
 * frames) into their batch. */
static inline void snap_batchq_commit_n(struct snap_batchq *q, size_t n)
{
	q->cur->n += n;
}
/* snap_batchq_commit's slow path: an event with frames. */
int snap_batchq_commit_slow(struct snap_batchq *q, struct snap_event *ev);
/* Puts the event filled in the slot ev (from snap_batchq_slot, nothing put
 * since) into its batch, copying the frames it borrows into the batch (moved
 * with them to the next batch when this one's arena is too small). Returns 0,
 * -ENOMEM, or the error q was stopped with (noticed when a batch is handed over). */
static inline int snap_batchq_commit(struct snap_batchq *q, struct snap_event *ev)
{
	if (!(ev->nframes && ev->frames)) {
		q->cur->n++;
		return 0;
	}
	return snap_batchq_commit_slow(q, ev);
}
/* The end of the events: hands over the last batch. Returns 0 or the error q
 * was stopped with. */
int snap_batchq_close(struct snap_batchq *q);

/* Either side: stops q with err (< 0; a second stop keeps the first error). */
void snap_batchq_stop(struct snap_batchq *q, int err);
/* The error q was stopped with, or 0. */
int snap_batchq_error(struct snap_batchq *q);

/* The taking side: the next batch, in order (waits for one), or NULL at the
 * end: closed and every batch taken, or stopped. */
struct snap_batch *snap_batchq_get(struct snap_batchq *q);
/* b (from get) is consumed: its events and frames may be reused. */
void snap_batchq_done(struct snap_batchq *q, struct snap_batch *b);

#endif
