// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder (ptdec_int.h): the worker threads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptdec/ptdec_int.h"
#include "util/alloc.h"

/* ---- the pool ---- */

static void run_piece(struct wctx *w, struct piece *pc)
{
	int err = ptd_decode_piece(w, pc);

	pthread_mutex_lock(&w->d->mu);
	if (err < 0)
		pc->nev = 0; /* out of memory: the piece's events are lost, counted */
	pc->state = PIECE_DONE;
	pthread_cond_broadcast(&w->d->cv_done);
	pthread_mutex_unlock(&w->d->mu);
}

/* Under the lock: piece pc is about to be decoded; it gets the event array of
 * a released piece if there is one (no allocation, no page faults). */
static void start_piece(struct snap_ptdec *d, struct piece *pc)
{
	pc->state = PIECE_RUNNING;
	d->live++;
	if (d->nspare && !pc->ev) {
		d->nspare--;
		pc->ev = d->spare[d->nspare].ev;
		pc->cap = d->spare[d->nspare].cap;
	}
}

static void *worker(void *arg)
{
	struct snap_ptdec *d = arg;
	struct wctx w;

	memset(&w, 0, sizeof(w));
	w.d = d;
	pthread_mutex_lock(&d->mu);
	for (;;) {
		struct piece *pc;

		while (!d->stop && (d->dispatched == d->npieces || d->live >= d->window))
			pthread_cond_wait(&d->cv_work, &d->mu);
		if (d->stop)
			break;
		pc = &d->pieces[d->order[d->dispatched++]];
		if (pc->state != PIECE_WAITING)
			continue; /* the reader decoded it itself */
		start_piece(d, pc);
		pthread_mutex_unlock(&d->mu);
		run_piece(&w, pc);
		pthread_mutex_lock(&d->mu);
	}
	pthread_mutex_unlock(&d->mu);
	ptd_wctx_fini(&w);
	return NULL;
}

/* The reader's own context, for pieces it decodes itself. One decoder is open
 * at a time (successive snapshots are decoded one after the other). */
static struct wctx reader_ctx;

/* Waits until piece i is decoded (decoding it here if no worker took it yet). */
void ptd_need_piece(struct snap_ptdec *d, size_t i)
{
	struct piece *pc = &d->pieces[i];

	pthread_mutex_lock(&d->mu);
	if (pc->state == PIECE_WAITING) {
		start_piece(d, pc);
		pthread_mutex_unlock(&d->mu);
		reader_ctx.d = d;
		run_piece(&reader_ctx, pc);
		pthread_mutex_lock(&d->mu);
	}
	while (pc->state == PIECE_RUNNING)
		pthread_cond_wait(&d->cv_done, &d->mu);
	pthread_mutex_unlock(&d->mu);
}

void ptd_release_piece(struct snap_ptdec *d, struct piece *pc)
{
	pthread_mutex_lock(&d->mu);
	if (d->nspare < d->window) { /* kept for a later piece */
		d->spare[d->nspare].ev = pc->ev;
		d->spare[d->nspare++].cap = pc->cap;
	} else {
		snap_free(pc->ev);
	}
	pc->ev = NULL;
	pc->cap = 0;
	pc->state = PIECE_RELEASED;
	d->live--;
	pthread_cond_broadcast(&d->cv_work);
	pthread_mutex_unlock(&d->mu);
}

static struct snap_ptdec *sort_ctx;

static int cmp_order(const void *x, const void *y)
{
	const struct piece *a = &sort_ctx->pieces[*(const size_t *)x];
	const struct piece *b = &sort_ctx->pieces[*(const size_t *)y];

	if (a->start_time != b->start_time)
		return a->start_time < b->start_time ? -1 : 1;
	if (a->q != b->q)
		return a->q < b->q ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

int ptd_start_pool(struct snap_ptdec *d)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int jobs = d->o.jobs > 0 ? d->o.jobs : (ncpu > 0 ? (int)ncpu : 1);

	if (jobs > 256)
		jobs = 256;
	d->st.jobs = jobs;
	d->order = snap_calloc(d->npieces ? d->npieces : 1, sizeof(*d->order));
	if (!d->order)
		return -ENOMEM;
	for (size_t i = 0; i < d->npieces; i++)
		d->order[i] = i;
	sort_ctx = d;
	qsort(d->order, d->npieces, sizeof(*d->order), cmp_order);
	/* The reader holds a piece of every queue it merges: the workers' window
	 * comes on top of those. */
	d->window = d->nqueues + (size_t)jobs * WINDOW_PER_J;
	d->spare = snap_calloc(d->window, sizeof(*d->spare));
	if (!d->spare)
		return -ENOMEM;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv_work, NULL);
	pthread_cond_init(&d->cv_done, NULL);
	d->threads_started = 1;
	/* With one job the reader decodes every piece itself, in order. */
	if (jobs <= 1)
		return 0;
	d->threads = snap_calloc((size_t)jobs, sizeof(*d->threads));
	if (!d->threads)
		return -ENOMEM;
	for (int i = 0; i < jobs; i++) {
		if (pthread_create(&d->threads[i], NULL, worker, d))
			break;
		d->nthreads++;
	}
	return 0;
}

/* Stops and joins the workers and frees the reader's own context. */
void ptd_stop_pool(struct snap_ptdec *d)
{
	if (d->threads_started) {
		pthread_mutex_lock(&d->mu);
		d->stop = 1;
		pthread_cond_broadcast(&d->cv_work);
		pthread_mutex_unlock(&d->mu);
		for (int i = 0; i < d->nthreads; i++)
			pthread_join(d->threads[i], NULL);
		pthread_mutex_destroy(&d->mu);
		pthread_cond_destroy(&d->cv_work);
		pthread_cond_destroy(&d->cv_done);
	}
	ptd_wctx_fini(&reader_ctx);
	for (size_t i = 0; i < d->nspare; i++)
		snap_free(d->spare[i].ev);
	snap_free(d->spare);
	d->spare = NULL;
	d->nspare = 0;
}
