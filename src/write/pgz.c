// SPDX-License-Identifier: GPL-2.0
/* Parallel gzip (write/pgz.h): blocks deflated by workers, written in order. */
#include "write/pgz.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "util/alloc.h"

#define PGZ_DICT 32768 /* deflate's window: what a block may refer back to */

enum pgz_state { PGZ_FREE = 0, PGZ_QUEUED, PGZ_DONE };

struct pgz_block {
	unsigned char *in, *out;
	size_t in_len, out_len, out_cap;
	unsigned char *dict; /* PGZ_DICT bytes: the previous block's tail */
	size_t dict_len;
	unsigned long crc; /* crc32 of in */
	int last, err;
	enum pgz_state state;
};

struct snap_pgz {
	int level, jobs, err, started, header_done, finished;
	snap_pgz_out_fn out;
	void *ctx;
	size_t nblk;	       /* ring of blocks: block k lives in blk[k % nblk] */
	struct pgz_block *blk; /* nblk */
	uint64_t submitted;    /* blocks handed to the workers (under mu) */
	uint64_t taken;	       /* blocks a worker took (under mu) */
	uint64_t written;      /* blocks written out (caller's thread only) */
	unsigned char *tail;   /* PGZ_DICT bytes: the tail of the last full block */
	size_t tail_len;
	unsigned long crc; /* of everything written */
	uint64_t isize;	   /* bytes written (the trailer keeps them mod 2^32) */
	size_t out_cap;	   /* deflateBound of a block, and a margin */
	z_stream *zs;	   /* nzs: one per worker, or one for the caller */
	int nzs;
	pthread_t *thr; /* nthr threads created */
	int nthr, next_zs, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv_work, cv_done;
};

/* jobs as asked: 0 or less means one per online CPU */
static int pgz_jobs(int jobs)
{
	long n = jobs > 0 ? jobs : sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

static void pgz_set_err(struct snap_pgz *z, int err)
{
	if (!z->err)
		z->err = err;
}

struct snap_pgz *snap_pgz_new(int level, int jobs, snap_pgz_out_fn out, void *ctx)
{
	struct snap_pgz *z;

	if (level < 0 || level > 9)
		return NULL;
	z = snap_calloc(1, sizeof(*z));
	if (!z)
		return NULL;
	z->level = level;
	z->jobs = pgz_jobs(jobs);
	z->out = out;
	z->ctx = ctx;
	z->tail = snap_malloc(PGZ_DICT);
	if (!z->tail) {
		snap_free(z);
		return NULL;
	}
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

static int pgz_zinit(struct snap_pgz *z, z_stream *zs)
{
	memset(zs, 0, sizeof(*zs));
	/* windowBits -15: raw deflate; the gzip wrapper is ours */
	return deflateInit2(zs, z->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK ? 0
											  : -ENOMEM;
}

/* Deflates block b with zs (a worker's own stream). */
static void pgz_deflate(z_stream *zs, struct pgz_block *b)
{
	int zr;

	b->err = 0;
	b->crc = crc32(0L, b->in, (uInt)b->in_len);
	if (deflateReset(zs) != Z_OK ||
	    (b->dict_len && deflateSetDictionary(zs, b->dict, (uInt)b->dict_len) != Z_OK)) {
		b->err = -EIO;
		return;
	}
	zs->next_in = b->in;
	zs->avail_in = (uInt)b->in_len;
	zs->next_out = b->out;
	zs->avail_out = (uInt)b->out_cap;
	zr = deflate(zs, b->last ? Z_FINISH : Z_SYNC_FLUSH);
	/* out_cap is deflateBound plus margin: one call always ends the block */
	if (b->last ? zr != Z_STREAM_END : zr != Z_OK || zs->avail_in || !zs->avail_out)
		b->err = -EIO;
	b->out_len = b->out_cap - zs->avail_out;
}

static void *pgz_worker(void *arg)
{
	struct snap_pgz *z = arg;
	z_stream *zs;

	pthread_mutex_lock(&z->mu);
	zs = &z->zs[z->next_zs++];
	for (;;) {
		struct pgz_block *b;

		while (!z->stop && z->taken == z->submitted)
			pthread_cond_wait(&z->cv_work, &z->mu);
		if (z->stop)
			break;
		b = &z->blk[z->taken++ % z->nblk];
		pthread_mutex_unlock(&z->mu);
		pgz_deflate(zs, b);
		pthread_mutex_lock(&z->mu);
		b->state = PGZ_DONE;
		pthread_cond_broadcast(&z->cv_done);
	}
	pthread_mutex_unlock(&z->mu);
	return NULL;
}

/* First write: the ring, the streams and (jobs > 1) the workers. Fewer
 * threads than asked when pthread_create fails; none means the caller
 * deflates (the output is the same). */
static int pgz_start(struct snap_pgz *z)
{
	int want = z->jobs > SNAP_PGZ_MAX_WORKERS ? SNAP_PGZ_MAX_WORKERS : z->jobs;
	int nzs = want > 1 ? want : 1, err;

	z->started = 1;
	z->nblk = want > 1 ? (size_t)want + 2 : 1; /* filling, deflating, waiting */
	z->blk = snap_calloc(z->nblk, sizeof(*z->blk));
	z->zs = snap_calloc((size_t)nzs, sizeof(*z->zs));
	z->thr = snap_calloc((size_t)nzs, sizeof(*z->thr));
	if (!z->blk || !z->zs || !z->thr)
		return -ENOMEM;
	for (; z->nzs < nzs; z->nzs++)
		if ((err = pgz_zinit(z, &z->zs[z->nzs])) < 0)
			return err;
	z->out_cap = deflateBound(&z->zs[0], SNAP_PGZ_BLOCK) + 1024;
	for (; want > 1 && z->nthr < want; z->nthr++)
		if (pthread_create(&z->thr[z->nthr], NULL, pgz_worker, z) != 0)
			break;
	return 0;
}

/* The number of worker threads (0: the caller deflates). */
static int pgz_nthreads(const struct snap_pgz *z)
{
	return z->nthr;
}

/* The buffers of block b, allocated at its first use. */
static int pgz_block_alloc(struct snap_pgz *z, struct pgz_block *b)
{
	if (b->in)
		return 0;
	b->out_cap = z->out_cap;
	b->in = snap_malloc(SNAP_PGZ_BLOCK);
	b->out = snap_malloc(b->out_cap);
	b->dict = snap_malloc(PGZ_DICT);
	return b->in && b->out && b->dict ? 0 : -ENOMEM;
}

static int pgz_emit(struct snap_pgz *z, const unsigned char *p, size_t len)
{
	int err = z->out(z->ctx, p, len);

	if (err < 0)
		pgz_set_err(z, err);
	return z->err;
}

/* Writes the oldest block out once it is deflated (waiting for it if wait).
 * Returns 1 when written, 0 when not ready, or the sticky error. */
static int pgz_write_one(struct snap_pgz *z, int wait)
{
	struct pgz_block *b = &z->blk[z->written % z->nblk];

	if (pgz_nthreads(z)) {
		enum pgz_state st;

		pthread_mutex_lock(&z->mu);
		while (b->state != PGZ_DONE && wait)
			pthread_cond_wait(&z->cv_done, &z->mu);
		st = b->state;
		pthread_mutex_unlock(&z->mu);
		if (st != PGZ_DONE)
			return 0;
	}
	if (!z->header_done) {
		/* RFC 1952: deflate, no flags, no time, XFL as zlib sets it, OS Unix */
		unsigned char h[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};

		h[8] = z->level == 9 ? 2 : z->level < 2 ? 4 : 0;
		z->header_done = 1;
		if (pgz_emit(z, h, sizeof(h)) < 0)
			return z->err;
	}
	if (b->err < 0) {
		pgz_set_err(z, b->err);
		return z->err;
	}
	if (pgz_emit(z, b->out, b->out_len) < 0)
		return z->err;
	z->crc = crc32_combine(z->crc, b->crc, (z_off_t)b->in_len);
	z->isize += b->in_len;
	b->in_len = 0;
	b->state = PGZ_FREE;
	z->written++;
	return 1;
}

/* Hands the filling block (the next to submit) to the workers, or deflates
 * it here; then makes the next slot free. */
static int pgz_submit(struct snap_pgz *z, int last)
{
	/* (submitted changes on this thread only: read without the lock) */
	struct pgz_block *b = &z->blk[z->submitted % z->nblk];
	int r;

	b->last = last;
	b->dict_len = z->tail_len;
	memcpy(b->dict, z->tail, z->tail_len);
	if (b->in_len >= PGZ_DICT) {
		z->tail_len = PGZ_DICT;
		memcpy(z->tail, b->in + b->in_len - PGZ_DICT, PGZ_DICT);
	}
	if (!pgz_nthreads(z)) {
		pgz_deflate(&z->zs[0], b);
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
		if (b->in_len == SNAP_PGZ_BLOCK && pgz_submit(z, 0) < 0)
			return z->err;
	}
	return 0;
}

int snap_pgz_finish(struct snap_pgz *z)
{
	unsigned char t[8];

	if (z->err)
		return z->err;
	if (z->finished)
		return -EINVAL;
	if (!z->started && (z->err = pgz_start(z)) < 0)
		return z->err;
	z->finished = 1;
	if (pgz_block_alloc(z, &z->blk[z->submitted % z->nblk]) < 0) {
		pgz_set_err(z, -ENOMEM);
		return z->err;
	}
	if (pgz_submit(z, 1) < 0)
		return z->err;
	while (z->written < z->submitted)
		if (pgz_write_one(z, 1) < 0)
			return z->err;
	for (int i = 0; i < 4; i++) {
		t[i] = (unsigned char)(z->crc >> (8 * i));
		t[4 + i] = (unsigned char)(z->isize >> (8 * i));
	}
	return pgz_emit(z, t, sizeof(t));
}

void snap_pgz_free(struct snap_pgz *z)
{
	int n;

	if (!z)
		return;
	n = pgz_nthreads(z);
	pthread_mutex_lock(&z->mu);
	z->stop = 1;
	pthread_cond_broadcast(&z->cv_work);
	pthread_mutex_unlock(&z->mu);
	for (int i = 0; i < n; i++)
		pthread_join(z->thr[i], NULL);
	for (int i = 0; i < z->nzs; i++)
		deflateEnd(&z->zs[i]);
	for (size_t i = 0; z->blk && i < z->nblk; i++) {
		snap_free(z->blk[i].in);
		snap_free(z->blk[i].out);
		snap_free(z->blk[i].dict);
	}
	snap_free(z->blk);
	snap_free(z->zs);
	snap_free(z->thr);
	snap_free(z->tail);
	pthread_cond_destroy(&z->cv_work);
	pthread_cond_destroy(&z->cv_done);
	pthread_mutex_destroy(&z->mu);
	snap_free(z);
}
