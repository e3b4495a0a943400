// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder (ptdec_int.h): the worker threads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ptdec/ptdec_int.h"
#include "util/alloc.h"
#include "util/proc.h"

/* ---- the pool ---- */

/*
 * Streaming (docs/ptdec.md, "Memory"). A piece's events below its watermark
 * are final (machine.c's top comment); once it has d->evcap of them its
 * producer hands them to the reader as a segment (ptd_publish) and waits
 * while the segment before is not taken, so a piece holds at most three
 * segments (the reader's, the one handed on, the one being filled), however
 * long it is. The reader cannot wait for itself: a piece it was to decode
 * goes to a helper thread of its own, while the reader takes its segments,
 * when its bytes say it is long (READER_EV_BYTES), or else once the reader
 * decoding it holds READER_CAPS segments' worth of events (-EAGAIN: the
 * helper decodes them again, counted in the stats' redone).
 */

/* Of the n events about to be made final in pc, how many to drop: those the
 * fast walk handed on before it gave the piece up (pc->skip). */
static size_t skipped(struct piece *pc, size_t n)
{
	size_t drop = 0;

	if (pc->skip > pc->nfinal)
		drop = pc->skip - pc->nfinal < n ? pc->skip - pc->nfinal : n;
	pc->nfinal += n;
	return drop;
}

struct lent *ptd_wlocate_miss(struct wctx *w, struct lslot *l, int32_t pid, uint64_t ip)
{
	struct lent *e;

	if (!ip)
		return &w->d->lnone;
	if (!(e = ptd_locate(w->d, pid, ip)))
		return &w->d->loom; /* (not cached: the reader fails on it) */
	l->ip = ip;
	l->pid = pid;
	l->e = e;
	return e;
}

int ptd_wctx_lcache(struct wctx *w)
{
	if (!w->lcache)
		w->lcache = snap_calloc((size_t)1 << LCACHE_BITS, sizeof(*w->lcache));
	return w->lcache ? 0 : -ENOMEM;
}

uint32_t ptd_flags_bytes(uint32_t flags)
{
	struct snap_event t;
	uint32_t b;

	memset(&t, 0, sizeof(t));
	t.has_time = 1;
	snap_event_set_branch_flags(&t, flags);
	memcpy(&b, (const char *)&t + PTD_EV_FLAGS_AT, sizeof(b));
	return b;
}

/* The final events ev[0..n) of a piece its thread (context w) hands on: each
 * branch gets its flags' event bytes, its command and its locations, so that the
 * reader, the serial part of a decode, only copies them (docs/ptdec.md,
 * "Joining"). 0, or -ENOMEM. */
static int prep_events(struct wctx *w, struct rawev *ev, size_t n)
{
	struct rawev *r, *e;

	if (!n || w->d->debug)
		return 0; /* (ev may be NULL; with $SNAPTRACE_PTDEC_DEBUG the reader
			   * describes each raw event, then prepares it: ptdec.c) */
	e = ev + n;
	if (ptd_wctx_lcache(w) < 0)
		return -ENOMEM;
	for (r = ev; r < e; r++)
		if (r->kind == RAW_BRANCH)
			ptd_prep_branch(w, r);
	return 0;
}

/* Under the lock: an event array for a piece, from the spare ones. */
static void take_spare(struct snap_ptdec *d, struct rawev **ev, size_t *cap)
{
	if (d->nspare) {
		d->nspare--;
		*ev = d->spare[d->nspare].ev;
		*cap = d->spare[d->nspare].cap;
	}
}

/* Under the lock: array ev (cap events) is free: kept for a later piece or freed. */
static void give_spare(struct snap_ptdec *d, struct rawev *ev, size_t cap)
{
	if (!ev)
		return;
	if (d->nspare < d->window) {
		d->spare[d->nspare].ev = ev;
		d->spare[d->nspare++].cap = cap;
	} else {
		snap_free(ev);
	}
}

int ptd_publish(struct snap_ptdec *d, struct piece *pc, size_t n)
{
	size_t rest = pc->nev - n, drop = skipped(pc, n), cap = 0,
	       want = rest > d->evcap ? rest : d->evcap;
	struct rawev *tail = NULL;
	int wake = 0;

	pthread_mutex_lock(&d->mu);
	take_spare(d, &tail, &cap);
	pthread_mutex_unlock(&d->mu);
	if (cap < want || !tail) {
		struct rawev *t = snap_reallocarray(tail, want ? want : 1, sizeof(*tail));

		if (!t) {
			snap_free(tail);
			return -ENOMEM;
		}
		tail = t;
		cap = want ? want : 1;
	}
	if (rest)
		memcpy(tail, pc->ev + n, rest * sizeof(*tail));
	if (drop && n > drop)
		memmove(pc->ev, pc->ev + drop, (n - drop) * sizeof(*pc->ev));
	if (n > drop && pc->w && !d->prep_emit && prep_events(pc->w, pc->ev, n - drop) < 0) {
		/* (pc->w: set by decode below; a unit test has none) */
		snap_free(tail);
		return -ENOMEM;
	}
	pthread_mutex_lock(&d->mu);
	while (n > drop && pc->pub && !d->stop)
		pthread_cond_wait(&d->cv_pub, &d->mu);
	if (d->stop) {
		pthread_mutex_unlock(&d->mu);
		snap_free(tail);
		return -ECANCELED;
	}
	if (n > drop) {
		pc->pub = pc->ev;
		pc->npub = n - drop;
		pc->cappub = pc->cap;
		wake = d->rwait == pc;
	} else {
		give_spare(d, pc->ev, pc->cap);
	}
	pthread_mutex_unlock(&d->mu);
	if (wake) /* (after the unlock: the reader woken does not wait for the lock) */
		pthread_cond_signal(&d->cv_done);
	pc->ev = tail;
	pc->cap = cap;
	pc->nev = rest;
	return 0;
}

/* The piece is decoded (err: ptd_decode_piece's result): its last events are
 * the reader's. Under the lock; 1 when the reader waits for it: the caller
 * signals cv_done once it has unlocked (a reader woken under the lock would
 * wake only to wait for the lock: two futex calls and a switch more). */
static int piece_done(struct snap_ptdec *d, struct piece *pc, int err)
{
	size_t drop;

	if (err < 0)
		pc->nev = 0; /* out of memory: the piece's events are lost, counted */
	drop = skipped(pc, pc->nev);
	if (drop) {
		memmove(pc->ev, pc->ev + drop, (pc->nev - drop) * sizeof(*pc->ev));
		pc->nev -= drop;
	}
	pc->state = PIECE_DONE;
	/* only the reader waits, for one piece: no wake-up for the others */
	return d->rwait == pc;
}

/* Decodes piece pc with w (the events handed on before the last are prepared
 * by ptd_publish, the last ones here). ptd_decode_piece's result. */
static int decode(struct wctx *w, struct piece *pc)
{
	struct snap_ptdec *d = w->d;
	int err;

	pc->w = w;
	if (d->prep_emit && ptd_wctx_lcache(w) < 0)
		return -ENOMEM;
	err = ptd_decode_piece(w, pc);
	/* prepared as they were emitted; else the reader prepares the events of a
	 * piece it decoded as it reads them: one pass over them (ptdec.c, lead_run) */
	pc->raw = !d->prep_emit && !w->can_block && w->lcache;
	if (err >= 0 && !d->prep_emit && !pc->raw)
		err = prep_events(w, pc->ev, pc->nev);
	return err;
}

static void run_piece(struct wctx *w, struct piece *pc)
{
	int err = decode(w, pc), wake;

	pthread_mutex_lock(&w->d->mu);
	wake = piece_done(w->d, pc, err);
	pthread_mutex_unlock(&w->d->mu);
	if (wake)
		pthread_cond_signal(&w->d->cv_done);
}

/* Under the lock: piece pc is about to be decoded; it gets the event array of
 * a released piece if there is one (no allocation, no page faults). */
static void start_piece(struct snap_ptdec *d, struct piece *pc)
{
	pc->state = PIECE_RUNNING;
	d->live++;
	if (!pc->ev)
		take_spare(d, &pc->ev, &pc->cap);
}

/* Under the lock: the drops left to the workers, into b and e (DROPQ each), and
 * how many. */
static size_t take_drops(struct snap_ptdec *d, const uint8_t **b, const uint8_t **e)
{
	size_t n = d->ndrops;

	for (size_t i = 0; i < n; i++) {
		b[i] = d->drops[i].b;
		e[i] = d->drops[i].e;
	}
	d->ndrops = 0;
	return n;
}

static void *worker(void *arg)
{
	struct snap_ptdec *d = arg;
	struct wctx w;
	const uint8_t *db[DROPQ], *de[DROPQ];
	size_t ndrops;

	memset(&w, 0, sizeof(w));
	w.d = d;
	w.can_block = 1;
	pthread_mutex_lock(&d->mu);
	for (;;) {
		struct piece *pc;

		while (!d->stop && !d->ndrops &&
		       (d->dispatched == d->npieces || d->live >= d->window))
			pthread_cond_wait(&d->cv_work, &d->mu);
		if (d->stop)
			break;
		if (d->ndrops) { /* the reader's drops first */
			ndrops = take_drops(d, db, de);
			pthread_mutex_unlock(&d->mu);
			for (size_t i = 0; i < ndrops; i++)
				ptd_drop_bytes(d, db[i], de[i], 1);
			pthread_mutex_lock(&d->mu);
			continue;
		}
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

struct helper_arg {
	struct snap_ptdec *d;
	struct piece *pc;
	struct wctx *w; /* its queue's last helper's context, or NULL */
};

/* A helper thread's context, freed (NULL: none). */
static void free_ctx(struct wctx *w)
{
	if (w) {
		ptd_wctx_fini(w);
		snap_free(w);
	}
}

/* A big piece's own thread: decodes it, handing its segments on, with the
 * context (image copies, block and run caches) that decoded the piece before
 * it on its queue if a helper did (w), else a new one, which the piece keeps
 * for the next (ptd_release_piece: the same context for the same pieces every
 * run, as the reader's own). */
static void *helper(void *arg)
{
	struct helper_arg a = *(struct helper_arg *)arg;
	struct wctx own, *w = a.w ? a.w : snap_calloc(1, sizeof(*w));

	snap_free(arg);
	if (!w) { /* (out of memory: one of its own, freed here) */
		memset(&own, 0, sizeof(own));
		own.d = a.d;
		own.can_block = 1;
		run_piece(&own, a.pc);
		ptd_wctx_fini(&own);
		return NULL;
	}
	w->d = a.d;
	w->can_block = 1;
	run_piece(w, a.pc);
	a.pc->hctx = w; /* (read by the reader once it joined this thread) */
	return NULL;
}

/* The reader's own context, for pieces it decodes itself. One decoder is open
 * at a time (successive snapshots are decoded one after the other). */
static struct wctx reader_ctx;

/* Piece pc (running, the reader's) gave up on the reader: it starts again on a
 * helper thread, or on the reader without a cap if there is none. */
static void to_helper(struct snap_ptdec *d, struct piece *pc)
{
	struct helper_arg *a = snap_malloc(sizeof(*a));

	pc->nev = 0;
	pc->insns = 0;
	pc->unwalked = 0;
	pc->walked = 0;
	pc->end_clean = 0;
	pc->err_open = 0;
	pc->nfinal = 0;
	pc->skip = 0;
	pc->big = 1;
	if (a) {
		struct queue *q = &d->queues[pc->q];

		a->d = d;
		a->pc = pc;
		a->w = q->hctx;
		q->hctx = NULL;
		if (pthread_create(&pc->helper, NULL, helper, a) == 0) {
			pc->has_helper = 1;
			return;
		}
		q->hctx = a->w;
		snap_free(a);
	}
	run_piece(&reader_ctx, pc); /* big: the whole piece at once */
}

/* Under the lock (dropped while it decodes): the reader decodes piece pc
 * (waiting) itself; or a helper thread does (to_helper), when the piece is
 * so long in bytes that it is likely to reach READER_CAPS segments (and the
 * reader would decode those events only to drop them), or when it reached
 * them (counted: the helper decodes them again). */
static void reader_decode(struct snap_ptdec *d, struct piece *pc)
{
	int err = -EAGAIN;

	start_piece(d, pc);
	pthread_mutex_unlock(&d->mu);
	(void)ptd_wctx_lcache(&reader_ctx); /* (none: the events are prepared by decode) */
	if ((size_t)(pc->e - pc->b) < d->long_bytes) {
		err = decode(&reader_ctx, pc);
		d->st.redone += err == -EAGAIN;
	}
	if (err != -EAGAIN) { /* (the queue's helper context is for a next helper only) */
		free_ctx(d->queues[pc->q].hctx);
		d->queues[pc->q].hctx = NULL;
	}
	if (err == -EAGAIN)
		to_helper(d, pc);
	pthread_mutex_lock(&d->mu);
	if (err != -EAGAIN)
		(void)piece_done(d, pc, err); /* (the reader's own: none waits) */
}

/* Under the lock: the piece a worker would take next, for the reader to decode
 * rather than wait (rahead), or NULL: none, or the window is full. */
static struct piece *ahead_piece(struct snap_ptdec *d)
{
	while (d->dispatched < d->npieces && d->live < d->window) {
		struct piece *pc = &d->pieces[d->order[d->dispatched++]];

		if (pc->state == PIECE_WAITING)
			return pc;
	}
	return NULL;
}

void ptd_next_segment(struct snap_ptdec *d, size_t i, struct rawev **ev, size_t *n, size_t *cap,
		      int *last)
{
	struct piece *pc = &d->pieces[i];
	int wake = 0;

	pthread_mutex_lock(&d->mu);
	if (pc->state == PIECE_WAITING)
		reader_decode(d, pc);
	while (d->rahead && pc->state == PIECE_RUNNING && !pc->pub) {
		struct piece *nx = ahead_piece(d);

		if (!nx)
			break;
		reader_decode(d, nx);
	}
	d->rwait = pc;
	while (pc->state == PIECE_RUNNING && !pc->pub)
		pthread_cond_wait(&d->cv_done, &d->mu);
	d->rwait = NULL;
	if (pc->pub) {
		*ev = pc->pub;
		*n = pc->npub;
		*cap = pc->cappub;
		*last = 0;
		pc->pub = NULL;
		wake = 1;
		/* (which thread decodes a long piece is a race with workers: only
		 * without them is it sure to be a helper, the reader's own) */
		if (d->debug)
			fprintf(stderr, "ptdec: piece %zu: a segment of %zu events%s\n", i, *n,
				pc->big && !d->nthreads ? " (on a helper thread)" : "");
	} else {
		*ev = pc->ev;
		*n = pc->nev;
		*cap = pc->cap;
		*last = 1;
	}
	pthread_mutex_unlock(&d->mu);
	if (wake) /* the producer waiting to hand on its next segment */
		pthread_cond_broadcast(&d->cv_pub);
}

void ptd_drop_bytes(const struct snap_ptdec *d, const uint8_t *b, const uint8_t *e, int whole)
{
	const uint8_t *m = d->map;
	uintptr_t from, to, page = d->pagesz;

	if (!m || !page || b >= e || b < m || e > m + d->maplen)
		return; /* not the file's mapping (open_mem: the caller's memory) */
	/* a fault maps the pages around it that the kernel has: those before b
	 * that a read of b mapped again go too, back to the start of the span it
	 * maps at most (fault-around, 64 KiB, or a large folio of the page cache
	 * mapped whole: up to the 2 MiB-aligned span around the fault) */
	if (whole) {
		uintptr_t lo = (uintptr_t)b & ~(uintptr_t)(SNAP_PD_DROP_SPAN - 1);

		b = lo > (uintptr_t)m ? (const uint8_t *)lo : m;
	}
	/* the page of e stays when the next bytes share it (the next piece reads
	 * them: it goes with the next drop, which goes back to its span's start) */
	from = (uintptr_t)b & ~(page - 1);
	to = e == m + d->maplen ? ((uintptr_t)e + page - 1) & ~(page - 1)
				: (uintptr_t)e & ~(page - 1);
	if (to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
}

/* The areas ptd_slice_map makes: 128 KiB, or more for a file so long that
 * there would be more than MAP_SLICES of them (the kernel's limit on a
 * process's mappings is about 65530). */
#define MAP_SLICE  ((size_t)128 << 10)
#define MAP_SLICES ((size_t)16384)

void ptd_slice_map(struct snap_ptdec *d)
{
	uint8_t *m = (uint8_t *)(uintptr_t)d->map;
	size_t g = MAP_SLICE;

	if (!m)
		return;
	while (d->maplen / g > MAP_SLICES)
		g *= 2;
	/* every other area gets MADV_NOHUGEPAGE (no 2 MiB mappings there either;
	 * nothing else changes): areas of different flags are not merged */
	for (size_t o = 0; o < d->maplen; o += 2 * g)
		if (madvise(m + o, d->maplen - o < g ? d->maplen - o : g, MADV_NOHUGEPAGE))
			break; /* too many mappings: the rest stays whole */
}

void ptd_release_segment(struct snap_ptdec *d, struct rawev *ev, size_t cap)
{
	pthread_mutex_lock(&d->mu);
	give_spare(d, ev, cap);
	pthread_mutex_unlock(&d->mu);
}

/* The bytes of the pieces of a queue leave memory once the reader has them
 * (docs/ptdec.md, "Memory"), DROP_CHUNK at a time: each madvise that unmaps
 * pages makes the kernel flush the TLBs of every CPU running the decode (an
 * interprocessor interrupt), so one a piece of 16 KiB cost 10 % of a -j 2
 * decode's CPU. A queue's pieces are consecutive in the file within a buffer.
 * With workers, a worker drops them (the one woken by the release): the reader,
 * the serial part of the decode, makes no madvise call while they keep up. */
#define DROP_CHUNK ((size_t)128 << 10)

/* A released piece wakes a worker once this many pieces may start: a worker
 * woken decodes them one after the other, and the reader, whose every wake-up
 * of a waiting worker is a futex call, wakes one a WAKE_ROOM pieces, not one a
 * piece (docs/ptdec.md, "Locking"). */
#define WAKE_ROOM 3

/* The bytes of queue q's pieces to drop now that pc is read (*b, *e; NULL: none
 * yet); up to two ranges, when pc does not follow the last one. */
static size_t release_bytes(struct snap_ptdec *d, const struct piece *pc, const uint8_t *b[2],
			    const uint8_t *e[2])
{
	struct queue *q = &d->queues[pc->q];
	size_t n = 0;

	if (q->drop_hi != pc->b) { /* not after the last: a new range */
		if (q->drop_lo) {
			b[n] = q->drop_lo;
			e[n++] = q->drop_hi;
		}
		q->drop_lo = pc->b;
	}
	q->drop_hi = pc->e;
	if ((size_t)(q->drop_hi - q->drop_lo) >= DROP_CHUNK || pc->qpos + 1 == q->npieces) {
		b[n] = q->drop_lo;
		e[n++] = q->drop_hi;
		q->drop_lo = q->drop_hi = NULL;
	}
	return n;
}

void ptd_release_piece(struct snap_ptdec *d, struct piece *pc)
{
	const uint8_t *b[2 + DROPQ], *e[2 + DROPQ];
	size_t n = d->map ? release_bytes(d, pc, b, e) : 0, left = 0;
	int wake;

	pthread_mutex_lock(&d->mu);
	if (d->nthreads && d->dispatched < d->npieces) { /* to a worker (woken below) */
		for (; left < n && d->ndrops < DROPQ; left++) {
			d->drops[d->ndrops].b = b[left];
			d->drops[d->ndrops++].e = e[left];
		}
	} else if (d->ndrops) {
		/* every piece has started: the workers may not wake again, so the
		 * drops left to them are the reader's (none stays undone at the end) */
		n += take_drops(d, b + n, e + n);
	}
	give_spare(d, pc->ev, pc->cap);
	pc->ev = NULL;
	pc->cap = 0;
	pc->state = PIECE_RELEASED;
	d->live--;
	/* pieces may start: one worker, once WAKE_ROOM may (each wake-up of a
	 * worker that waits is a futex call of the reader's); or drops to make */
	wake = d->live + WAKE_ROOM <= d->window || left;
	pthread_mutex_unlock(&d->mu);
	/* after the unlock: a worker woken under it would only wait for the lock
	 * (two futex calls and a switch more for each wake-up) */
	if (wake)
		pthread_cond_signal(&d->cv_work);
	for (; left < n; left++)
		ptd_drop_bytes(d, b[left], e[left], 1);
	/* the last piece read: a worker may still be making a drop it took, so the
	 * whole file goes once more (its pages that are left: none, or a few) */
	if (++d->nreleased == d->npieces && d->nthreads && d->map)
		ptd_drop_bytes(d, d->map, (const uint8_t *)d->map + d->maplen, 1);
	if (pc->has_helper) {
		pthread_join(pc->helper, NULL);
		pc->has_helper = 0;
	}
	if (pc->hctx) { /* its helper's context, to the queue's next helper */
		free_ctx(d->queues[pc->q].hctx);
		d->queues[pc->q].hctx = pc->hctx;
		pc->hctx = NULL;
	}
	if (pc->qpos + 1 == d->queues[pc->q].npieces) { /* the queue's last */
		free_ctx(d->queues[pc->q].hctx);
		d->queues[pc->q].hctx = NULL;
	}
}

#define AHEAD_CPUS  2 /* the reader and one worker on at most this many CPUs */
#define WINDOW_JOBS 2 /* the window ahead of the reader is that of 2 threads (below) */

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

/*
 * Whether the reader decodes the next piece itself rather than wait for the
 * worker's, with one worker (docs/ptdec.md, "The reader and one worker"): on
 * at most 2 CPUs, where the reader and two workers (and the sink's writer)
 * would be three busy threads on two cores, time-sharing them; the reader
 * then decodes what the one worker does not keep up with. More CPUs: the
 * workers of the window (below). $SNAPTRACE_PTDEC_AHEAD=1 or 0 sets it.
 */
static int ahead_wanted(void)
{
	const char *env = getenv("SNAPTRACE_PTDEC_AHEAD");

	if (env && *env)
		return strcmp(env, "0") != 0;
	return snap_cpus_allowed() <= AHEAD_CPUS;
}

int ptd_start_pool(struct snap_ptdec *d)
{
	int jobs = snap_jobs(d->o.jobs), nworkers;

	if (jobs > 256)
		jobs = 256;
	d->st.jobs = jobs;
	nworkers = jobs;
	d->order = snap_calloc(d->npieces ? d->npieces : 1, sizeof(*d->order));
	if (!d->order)
		return -ENOMEM;
	for (size_t i = 0; i < d->npieces; i++)
		d->order[i] = i;
	sort_ctx = d;
	qsort(d->order, d->npieces, sizeof(*d->order), cmp_order);
	reader_ctx.d = d;
	d->rctx = &reader_ctx;
	for (uint32_t f = 0; f < FLTAB_N; f++)
		d->fltab[f] = ptd_flags_bytes(f);
	/* The reader holds a piece of every queue it merges: the workers' window
	 * comes on top of those, WINDOW_PER_J pieces a thread for at most
	 * WINDOW_JOBS threads (the reading and the consumer thread are serial: at
	 * about 250 and 450 instructions a branch against the decode's 500, more
	 * workers have nothing to decode ahead) up to WINDOW_BYTES of events (a
	 * piece holds at most two segments of evcap before the reader takes one),
	 * whatever -j and the number of CPUs are, so the memory is too; no more
	 * workers start than that part of the window has pieces for. */
	{
		const char *env = getenv("SNAPTRACE_PTDEC_CAP");
		size_t extra = (size_t)(jobs < WINDOW_JOBS ? jobs : WINDOW_JOBS) * WINDOW_PER_J,
		       per;

		d->evcap = env ? strtoul(env, NULL, 10) : AUTO_EVCAP;
		if (d->evcap > SIZE_MAX / (2 * sizeof(struct rawev))) /* per and 2 * evcap fit */
			d->evcap = SIZE_MAX / (2 * sizeof(struct rawev));
		if (d->walk == 2)
			d->evcap = 0; /* the self-check compares whole pieces */
		/* (evcap * 2 fits: above; SIZE_MAX: no piece is long) */
		d->long_bytes = d->evcap && READER_CAPS * d->evcap <= SIZE_MAX / READER_EV_BYTES
					? READER_CAPS * d->evcap * READER_EV_BYTES
					: SIZE_MAX;
		per = 2 * (d->evcap ? d->evcap : AUTO_EVCAP) * sizeof(struct rawev);
		if (extra > WINDOW_BYTES / per)
			extra = WINDOW_BYTES / per;
		if (!extra)
			extra = 1;
		d->window = d->nqueues + extra;
		if ((size_t)jobs > extra)
			nworkers = (int)extra;
		d->st.jobs = nworkers;
	}
	d->prep_emit = !d->debug && d->walk != 2;
	d->spare = snap_calloc(d->window, sizeof(*d->spare));
	if (!d->spare)
		return -ENOMEM;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv_work, NULL);
	pthread_cond_init(&d->cv_done, NULL);
	pthread_cond_init(&d->cv_pub, NULL);
	d->threads_started = 1;
	/* With one job the reader decodes every piece itself, in order. */
	if (jobs <= 1)
		return 0;
	if (ahead_wanted()) { /* the reader and one worker (above) */
		d->rahead = 1;
		nworkers = 1;
	}
	d->threads = snap_calloc((size_t)nworkers, sizeof(*d->threads));
	if (!d->threads)
		return -ENOMEM;
	for (int i = 0; i < nworkers; i++) {
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
		pthread_cond_broadcast(&d->cv_pub);
		pthread_mutex_unlock(&d->mu);
		for (int i = 0; i < d->nthreads; i++)
			pthread_join(d->threads[i], NULL);
		for (size_t i = 0; i < d->npieces; i++)
			if (d->pieces[i].has_helper) {
				pthread_join(d->pieces[i].helper, NULL);
				d->pieces[i].has_helper = 0;
			}
		pthread_mutex_destroy(&d->mu);
		pthread_cond_destroy(&d->cv_work);
		pthread_cond_destroy(&d->cv_done);
		pthread_cond_destroy(&d->cv_pub);
	}
	ptd_wctx_fini(&reader_ctx);
	/* (every helper is joined: above) */
	for (size_t i = 0; i < d->npieces; i++) {
		free_ctx(d->pieces[i].hctx);
		d->pieces[i].hctx = NULL;
	}
	for (size_t i = 0; i < d->nqueues; i++) {
		free_ctx(d->queues[i].hctx);
		d->queues[i].hctx = NULL;
	}
	for (size_t i = 0; i < d->nspare; i++)
		snap_free(d->spare[i].ev);
	snap_free(d->spare);
	d->spare = NULL;
	d->nspare = 0;
}
