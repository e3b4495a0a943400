// SPDX-License-Identifier: GPL-2.0
/* Parallel gzip (write/pgz.h): blocks compressed by workers, written in order. */
#include "write/pgz.h"

#include <errno.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "util/alloc.h"
#include "util/proc.h"

enum pgz_state { PGZ_FREE = 0, PGZ_QUEUED, PGZ_DONE };

struct pgz_block {
	unsigned char *in, *out; /* SNAP_PGZ_BLOCK, out_cap */
	size_t in_len, out_len;
	int err;
	enum pgz_state state;
};

struct snap_pgz {
	int level, jobs, err, started, finished;
	snap_pgz_out_fn out;
	void *ctx;
	size_t nblk;			   /* ring of blocks: block k lives in blk[k % nblk] */
	struct pgz_block *blk;		   /* nblk */
	uint64_t submitted;		   /* blocks handed to the workers (under mu) */
	uint64_t taken;			   /* blocks a worker took (under mu) */
	uint64_t written;		   /* blocks written out (caller's thread only) */
	size_t out_cap;			   /* libdeflate_gzip_compress_bound of a block */
	struct libdeflate_compressor **dc; /* ndc: one per worker, or one for the caller */
	int ndc;
	pthread_t *thr; /* nthr threads created */
	int nthr, next_dc, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv_work, cv_done;
};

/* jobs as asked (snap_jobs), at most 1024 */
static int pgz_jobs(int jobs)
{
	int n = snap_jobs(jobs);

	return n > 1024 ? 1024 : n;
}

static void pgz_set_err(struct snap_pgz *z, int err)
{
	if (!z->err)
		z->err = err;
}

/* libdeflate allocates (its compressors only) through util/alloc, so the
 * tests' allocation failures reach it too. */
static void pgz_alloc_init(void)
{
	libdeflate_set_memory_allocator(snap_malloc, snap_free);
}

struct snap_pgz *snap_pgz_new(int level, int jobs, snap_pgz_out_fn out, void *ctx)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct snap_pgz *z;

	if (level < 0 || level > 9)
		return NULL;
	pthread_once(&once, pgz_alloc_init);
	z = snap_calloc(1, sizeof(*z));
	if (!z)
		return NULL;
	z->level = level;
	z->jobs = pgz_jobs(jobs);
	z->out = out;
	z->ctx = ctx;
	pthread_mutex_init(&z->mu, NULL);
	pthread_cond_init(&z->cv_work, NULL);
	pthread_cond_init(&z->cv_done, NULL);
	return z;
}

int snap_pgz_set_level(struct snap_pgz *z, int level)
{
	if (level < 0 || level > 9 || z->started)
		return -EINVAL;
	z->level = level;
	return 0;
}

int snap_pgz_set_jobs(struct snap_pgz *z, int jobs)
{
	if (z->started)
		return -EINVAL;
	z->jobs = pgz_jobs(jobs);
	return 0;
}

/* Compresses block b into one gzip member with c (a worker's own). */
static void pgz_deflate(struct libdeflate_compressor *c, size_t out_cap, struct pgz_block *b)
{
	/* out_cap is the bound of a block: 0 (does not fit) cannot happen */
	b->out_len = libdeflate_gzip_compress(c, b->in, b->in_len, b->out, out_cap);
	b->err = b->out_len ? 0 : -EIO;
}

static void *pgz_worker(void *arg)
{
	struct snap_pgz *z = arg;
	struct libdeflate_compressor *c;

	pthread_mutex_lock(&z->mu);
	c = z->dc[z->next_dc++];
	for (;;) {
		struct pgz_block *b;

		while (!z->stop && z->taken == z->submitted)
			pthread_cond_wait(&z->cv_work, &z->mu);
		if (z->stop)
			break;
		b = &z->blk[z->taken++ % z->nblk];
		pthread_mutex_unlock(&z->mu);
		pgz_deflate(c, z->out_cap, b);
		pthread_mutex_lock(&z->mu);
		b->state = PGZ_DONE;
		pthread_cond_broadcast(&z->cv_done);
	}
	pthread_mutex_unlock(&z->mu);
	return NULL;
}

/* First write: the ring, the compressors and (more than one thread) the
 * workers: min(jobs, the CPUs we may use, SNAP_PGZ_MAX_WORKERS). Fewer
 * threads than asked when pthread_create fails; none means the caller
 * compresses (the output is the same). */
static int pgz_start(struct snap_pgz *z)
{
	int cpus = snap_cpus_allowed();
	int want = z->jobs < cpus ? z->jobs : cpus;
	int ndc;

	if (want > SNAP_PGZ_MAX_WORKERS)
		want = SNAP_PGZ_MAX_WORKERS;
	ndc = want > 1 ? want : 1;
	z->started = 1;
	z->nblk = want > 1 ? (size_t)want + 2 : 1; /* filling, compressing, waiting */
	z->blk = snap_calloc(z->nblk, sizeof(*z->blk));
	z->dc = snap_calloc((size_t)ndc, sizeof(*z->dc));
	z->thr = snap_calloc((size_t)ndc, sizeof(*z->thr));
	if (!z->blk || !z->dc || !z->thr)
		return -ENOMEM;
	for (; z->ndc < ndc; z->ndc++)
		if (!(z->dc[z->ndc] = libdeflate_alloc_compressor(z->level)))
			return -ENOMEM;
	z->out_cap = libdeflate_gzip_compress_bound(z->dc[0], SNAP_PGZ_BLOCK);
	for (; want > 1 && z->nthr < want; z->nthr++)
		if (pthread_create(&z->thr[z->nthr], NULL, pgz_worker, z) != 0)
			break;
	return 0;
}

int snap_pgz_threads(const struct snap_pgz *z)
{
	return z->nthr;
}

/* The buffers of block b, allocated at its first use. */
static int pgz_block_alloc(struct snap_pgz *z, struct pgz_block *b)
{
	if (b->in)
		return 0;
	b->in = snap_malloc(SNAP_PGZ_BLOCK);
	b->out = snap_malloc(z->out_cap);
	return b->in && b->out ? 0 : -ENOMEM;
}

static int pgz_emit(struct snap_pgz *z, const unsigned char *p, size_t len)
{
	int err = z->out(z->ctx, p, len);

	if (err < 0)
		pgz_set_err(z, err);
	return z->err;
}

/* Writes the oldest block out once it is compressed (waiting for it if wait).
 * Returns 1 when written, 0 when not ready, or the sticky error. */
static int pgz_write_one(struct snap_pgz *z, int wait)
{
	struct pgz_block *b = &z->blk[z->written % z->nblk];

	if (z->nthr) {
		enum pgz_state st;

		pthread_mutex_lock(&z->mu);
		while (b->state != PGZ_DONE && wait)
			pthread_cond_wait(&z->cv_done, &z->mu);
		st = b->state;
		pthread_mutex_unlock(&z->mu);
		if (st != PGZ_DONE)
			return 0;
	}
	if (b->err < 0) {
		pgz_set_err(z, b->err);
		return z->err;
	}
	if (pgz_emit(z, b->out, b->out_len) < 0)
		return z->err;
	b->in_len = 0;
	b->state = PGZ_FREE;
	z->written++;
	return 1;
}

/* Hands the filling block (the next to submit) to the workers, or
 * compresses it here; then makes the next slot free. */
static int pgz_submit(struct snap_pgz *z)
{
	/* (submitted changes on this thread only: read without the lock) */
	struct pgz_block *b = &z->blk[z->submitted % z->nblk];
	int r;

	if (!z->nthr) {
		pgz_deflate(z->dc[0], z->out_cap, b);
		b->state = PGZ_DONE;
		z->submitted++;
		r = pgz_write_one(z, 1);
		return r < 0 ? r : 0;
	}
	pthread_mutex_lock(&z->mu);
	b->state = PGZ_QUEUED;
	z->submitted++;
	pthread_cond_signal(&z->cv_work);
	pthread_mutex_unlock(&z->mu);
	/* whatever is done, in order; then wait only if the ring is full */
	while ((r = pgz_write_one(z, 0)) == 1)
		;
	while (r >= 0 && z->submitted - z->written >= z->nblk)
		r = pgz_write_one(z, 1);
	return r < 0 ? r : 0;
}

int snap_pgz_write(struct snap_pgz *z, const void *p, size_t len)
{
	const unsigned char *s = p;

	if (z->err || !len)
		return z->err;
	if (z->finished)
		return z->err = -EINVAL;
	if (!z->started && (z->err = pgz_start(z)) < 0)
		return z->err;
	while (len) {
		struct pgz_block *b = &z->blk[z->submitted % z->nblk];
		size_t n;

		if (pgz_block_alloc(z, b) < 0) {
			pgz_set_err(z, -ENOMEM);
			return z->err;
		}
		n = SNAP_PGZ_BLOCK - b->in_len;
		if (n > len)
			n = len;
		memcpy(b->in + b->in_len, s, n);
		b->in_len += n;
		s += n;
		len -= n;
		if (b->in_len == SNAP_PGZ_BLOCK && pgz_submit(z) < 0)
			return z->err;
	}
	return 0;
}

int snap_pgz_finish(struct snap_pgz *z)
{
	struct pgz_block *b;

	if (z->err)
		return z->err;
	if (z->finished)
		return -EINVAL;
	if (!z->started && (z->err = pgz_start(z)) < 0)
		return z->err;
	z->finished = 1;
	b = &z->blk[z->submitted % z->nblk];
	/* the partial last block; an empty input still makes one (empty) member */
	if (b->in_len || !z->submitted) {
		if (pgz_block_alloc(z, b) < 0) {
			pgz_set_err(z, -ENOMEM);
			return z->err;
		}
		if (pgz_submit(z) < 0)
			return z->err;
	}
	while (z->written < z->submitted)
		if (pgz_write_one(z, 1) < 0)
			return z->err;
	return 0;
}

void snap_pgz_free(struct snap_pgz *z)
{
	if (!z)
		return;
	pthread_mutex_lock(&z->mu);
	z->stop = 1;
	pthread_cond_broadcast(&z->cv_work);
	pthread_mutex_unlock(&z->mu);
	for (int i = 0; i < z->nthr; i++)
		pthread_join(z->thr[i], NULL);
	for (int i = 0; i < z->ndc; i++)
		libdeflate_free_compressor(z->dc[i]);
	for (size_t i = 0; z->blk && i < z->nblk; i++) {
		snap_free(z->blk[i].in);
		snap_free(z->blk[i].out);
	}
	snap_free(z->blk);
	snap_free(z->dc);
	snap_free(z->thr);
	pthread_cond_destroy(&z->cv_work);
	pthread_cond_destroy(&z->cv_done);
	pthread_mutex_destroy(&z->mu);
	snap_free(z);
}
