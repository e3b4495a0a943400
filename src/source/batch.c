// SPDX-License-Identifier: GPL-2.0
/*
 * The bounded queue of event batches between the reading thread and the
 * consumer thread (source/batch.h).
 */
#include "source/batch.h"

#include <errno.h>
#include <string.h>

#include "util/alloc.h"
#include "util/vec.h"

int snap_batchq_init(struct snap_batchq *q, size_t nbatches, size_t events, size_t frames)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->can_get, NULL);
	pthread_cond_init(&q->can_put, NULL);
	if (nbatches < 2)
		nbatches = 2;
	if (!events)
		events = 1;
	q->all = snap_calloc(nbatches, sizeof(*q->all));
	q->full = snap_calloc(nbatches, sizeof(*q->full));
	q->free = snap_calloc(nbatches, sizeof(*q->free));
	if (!q->all || !q->full || !q->free)
		goto nomem;
	q->nall = nbatches;
	q->wake = nbatches / 2;
	q->frames0 = frames;
	for (size_t i = 0; i < nbatches; i++) {
		struct snap_batch *b = &q->all[i];

		b->ev = snap_reallocarray(NULL, events, sizeof(*b->ev));
		if (!b->ev)
			goto nomem;
		b->cap = events;
		q->free[q->nfree++] = b;
	}
	return 0;
nomem:
	snap_batchq_fini(q);
	return -ENOMEM;
}

void snap_batchq_fini(struct snap_batchq *q)
{
	for (size_t i = 0; q->all && i < q->nall; i++) {
		snap_free(q->all[i].ev);
		snap_free(q->all[i].frames);
	}
	snap_free(q->all);
	snap_free(q->full);
	snap_free(q->free);
	pthread_cond_destroy(&q->can_get);
	pthread_cond_destroy(&q->can_put);
	pthread_mutex_destroy(&q->mu);
	memset(q, 0, sizeof(*q));
}

/* Hands the current batch (if it holds events) over and takes an empty one,
 * waiting for it. Returns 0 or the error q was stopped with. */
static int batchq_next(struct snap_batchq *q)
{
	struct snap_batch *b = q->cur;
	int err, wake = 0;

	pthread_mutex_lock(&q->mu);
	if (b && b->n) {
		q->full[(q->full_head + q->nfull++) % q->nall] = b;
		q->cur = b = NULL;
		wake = q->get_asleep && q->nfull >= q->wake;
	}
	if (wake && !q->nfree) {
		/* (signalled with the lock held, as this thread is about to
		 * wait: the wait releases it) */
		pthread_cond_signal(&q->can_get);
		wake = 0;
	}
	if (!b && !q->nfree && !q->err) {
		/* (until half the batches are free: fewer wake-ups, source/batch.h) */
		q->put_asleep = 1;
		while (q->nfree < q->wake && !q->err)
			pthread_cond_wait(&q->can_put, &q->mu);
		q->put_asleep = 0;
	}
	if (!b && !q->err) {
		b = q->cur = q->free[--q->nfree];
		b->n = 0;
		b->nframes = 0;
	}
	err = q->err;
	pthread_mutex_unlock(&q->mu);
	if (wake) /* after the unlock: the taker does not wake into a held lock */
		pthread_cond_signal(&q->can_get);
	return err;
}

int snap_batchq_slot_slow(struct snap_batchq *q, struct snap_event **ev)
{
	int err;

	if ((err = batchq_next(q)) < 0)
		return err;
	*ev = &q->cur->ev[0];
	return 0;
}

/* Copies the nf frames ev borrows into b's arena (room for them, or b empty)
 * and points ev there. 0 or -ENOMEM. */
static int batch_frames(struct snap_batchq *q, struct snap_batch *b, struct snap_event *ev,
			size_t nf)
{
	/* only an empty batch grows (its events point into frames), to frames0 at
	 * first: no arena for inputs without frames */
	if (nf > b->fcap - b->nframes &&
	    snap_vec_reserve(&b->frames, &b->fcap, nf > q->frames0 ? nf : q->frames0,
			     sizeof(*b->frames)) < 0)
		return -ENOMEM;
	memcpy(b->frames + b->nframes, ev->frames, nf * sizeof(*b->frames));
	ev->frames = b->frames + b->nframes;
	b->nframes += nf;
	return 0;
}

int snap_batchq_commit_slow(struct snap_batchq *q, struct snap_event *ev)
{
	size_t nf = ev->nframes;
	struct snap_batch *b = q->cur;
	int err;

	if (b->n && nf > b->fcap - b->nframes) {
		/* the frames do not fit beside the batch's events: the event goes
		 * first in the next batch */
		struct snap_event tmp = *ev;

		if ((err = batchq_next(q)) < 0)
			return err;
		b = q->cur;
		ev = &b->ev[0];
		*ev = tmp;
	}
	if ((err = batch_frames(q, b, ev, nf)) < 0)
		return err;
	b->n++;
	return 0;
}

int snap_batchq_put_slow(struct snap_batchq *q, const struct snap_event *ev)
{
	size_t nf = ev->frames ? ev->nframes : 0;
	struct snap_batch *b = q->cur;
	int err;

	if (!b || b->n == b->cap || (b->n && nf > b->fcap - b->nframes)) {
		if ((err = batchq_next(q)) < 0)
			return err;
		b = q->cur;
	}
	b->ev[b->n] = *ev;
	if (nf && (err = batch_frames(q, b, &b->ev[b->n], nf)) < 0)
		return err;
	b->n++;
	return 0;
}

int snap_batchq_close(struct snap_batchq *q)
{
	struct snap_batch *b = q->cur;
	int err;

	pthread_mutex_lock(&q->mu);
	if (b && b->n && !q->err)
		q->full[(q->full_head + q->nfull++) % q->nall] = b;
	q->cur = NULL;
	q->closed = 1;
	pthread_cond_signal(&q->can_get);
	err = q->err;
	pthread_mutex_unlock(&q->mu);
	return err;
}

void snap_batchq_stop(struct snap_batchq *q, int err)
{
	pthread_mutex_lock(&q->mu);
	if (!q->err)
		q->err = err < 0 ? err : -EINTR;
	pthread_cond_broadcast(&q->can_get);
	pthread_cond_broadcast(&q->can_put);
	pthread_mutex_unlock(&q->mu);
}

int snap_batchq_error(struct snap_batchq *q)
{
	int err;

	pthread_mutex_lock(&q->mu);
	err = q->err;
	pthread_mutex_unlock(&q->mu);
	return err;
}

struct snap_batch *snap_batchq_get(struct snap_batchq *q)
{
	struct snap_batch *b = NULL;

	pthread_mutex_lock(&q->mu);
	if (!q->nfull && !q->closed && !q->err) {
		/* (until half the batches are full: fewer wake-ups, source/batch.h) */
		q->get_asleep = 1;
		while (q->nfull < q->wake && !q->closed && !q->err)
			pthread_cond_wait(&q->can_get, &q->mu);
		q->get_asleep = 0;
	}
	if (!q->err && q->nfull) {
		b = q->full[q->full_head];
		q->full_head = (q->full_head + 1) % q->nall;
		q->nfull--;
	}
	pthread_mutex_unlock(&q->mu);
	return b;
}

void snap_batchq_done(struct snap_batchq *q, struct snap_batch *b)
{
	int wake;

	pthread_mutex_lock(&q->mu);
	q->free[q->nfree++] = b;
	wake = q->put_asleep && q->nfree >= q->wake;
	pthread_mutex_unlock(&q->mu);
	/* after the unlock: the putter does not wake into a held lock (its wait
	 * loop checks again; q lives until both threads are done with it) */
	if (wake)
		pthread_cond_signal(&q->can_put);
}
