// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder (ptdec_int.h): cutting AUXTRACE buffers at PSBs into pieces. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ptdec/ptdec_int.h"
#include "util/alloc.h"
#include "util/proc.h"
#include "util/vec.h"

/* ---- pieces ---- */

const uint8_t ptd_psb[16] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
			     0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};

static const uint8_t *find_psb(const uint8_t *b, const uint8_t *e)
{
	if (e - b < 16)
		return NULL;
	return memmem(b, (size_t)(e - b), ptd_psb, sizeof(ptd_psb));
}

/* Reads the PSB+ at b: its TSC and FUP ip. Returns 1 when a packet could not
 * be read before its PSBEND (the end of [b, e), or a bad one), else 0. */
static int psb_info(const uint8_t *b, const uint8_t *e, int *has_tsc, uint64_t *tsc, int *has_fup,
		    uint64_t *fup)
{
	struct pt_config cfg;
	struct pt_packet_decoder *pk;
	struct pt_packet pkt;
	int n = 0, cut = 1;

	*has_tsc = *has_fup = 0;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)b;
	cfg.end = (uint8_t *)e;
	pk = pt_pkt_alloc_decoder(&cfg);
	if (!pk)
		return 0;
	if (pt_pkt_sync_set(pk, 0) >= 0) {
		for (; n < 64 && pt_pkt_next(pk, &pkt, sizeof(pkt)) >= 0; n++) {
			if (pkt.type == ppt_tsc) {
				*has_tsc = 1;
				*tsc = pkt.payload.tsc.tsc;
			} else if (pkt.type == ppt_fup) {
				uint64_t ip = pkt.payload.ip.ip;

				switch (pkt.payload.ip.ipc) {
				case pt_ipc_sext_48:
					*has_fup = 1;
					*fup = (uint64_t)((int64_t)(ip << 16) >> 16);
					break;
				case pt_ipc_full:
				case pt_ipc_update_16:
				case pt_ipc_update_32:
				case pt_ipc_update_48:
					*has_fup = 1;
					*fup = ip;
					break;
				default:
					break;
				}
			} else if (pkt.type == ppt_psbend) {
				cut = 0;
				break;
			}
		}
	}
	pt_pkt_free_decoder(pk);
	return n == 64 ? 0 : cut;
}

/*
 * With the file's descriptor (d->fd) the search reads the bytes it looks at
 * with pread, not through the mapping: a read of the mapping faults in the 64
 * KiB around it (fault-around), which the walk must drop again, for the ~200
 * bytes it reads at each piece's end (the faults were most of the cut's time:
 * docs/ptdec.md, "The start of a decode"). Without it (open_mem, or a read
 * that fails) the mapping is read. The bytes of the PSB+ a search finds are
 * kept for psb_info (two slots: the piece's own and the next one's).
 */
#define CUT_FIRST 1024	/* bytes a search reads first: the next PSB is ~200 bytes on */
#define CUT_CHUNK 65536 /* then at a time */
#define CUT_INFO  512	/* bytes of a PSB+ read for psb_info (the rest from the mapping) */
#define PSB_LEN	  sizeof(ptd_psb)

struct cutbuf {
	uint8_t buf[CUT_CHUNK];
	uint8_t info[2][CUT_INFO];
	const uint8_t *at[2]; /* info[i] holds n[i] bytes of the file from at[i] */
	size_t n[2];
};

/* [p, p + n) of d's file into dst with pread. Returns 0, or -1 if fewer came. */
static int cut_read(const struct snap_ptdec *d, uint8_t *dst, const uint8_t *p, size_t n)
{
	off_t off = (off_t)(p - (const uint8_t *)d->map);

	for (size_t got = 0; got < n;) {
		ssize_t r = pread(d->fd, dst + got, n - got, off + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* The first PSB in [b, e), as find_psb, read with pread when d has the
 * descriptor; what was read from the PSB on is kept in cb's slot s. */
static const uint8_t *search_psb(const struct snap_ptdec *d, struct cutbuf *cb, int s,
				 const uint8_t *b, const uint8_t *e)
{
	size_t want = CUT_FIRST;

	if (d->fd < 0)
		return find_psb(b, e);
	while ((size_t)(e - b) >= PSB_LEN) {
		size_t n = (size_t)(e - b) < want ? (size_t)(e - b) : want, k;
		const uint8_t *hit;

		if (cut_read(d, cb->buf, b, n) < 0)
			return find_psb(b, e);
		if ((hit = memmem(cb->buf, n, ptd_psb, PSB_LEN)) != NULL) {
			k = (size_t)(hit - cb->buf);
			cb->n[s] = n - k < CUT_INFO ? n - k : CUT_INFO;
			cb->at[s] = b + k;
			memcpy(cb->info[s], hit, cb->n[s]);
			return b + k;
		}
		if (n == (size_t)(e - b))
			return NULL;
		b += n - (PSB_LEN - 1); /* a PSB across the end is whole in the next read */
		want = CUT_CHUNK;
	}
	return NULL;
}

/* psb_info of the PSB+ at psb in [psb, e): with the descriptor, of its first
 * CUT_INFO bytes (cb's slot s, read if the search did not keep them), and of
 * the mapping only when the PSB+ goes on past them. */
static void cut_info(const struct snap_ptdec *d, struct cutbuf *cb, int s, const uint8_t *psb,
		     const uint8_t *e, int *has_tsc, uint64_t *tsc, int *has_fup, uint64_t *fup)
{
	size_t n = (size_t)(e - psb) < CUT_INFO ? (size_t)(e - psb) : CUT_INFO;

	if (d->fd >= 0) {
		int have = cb->at[s] == psb && cb->n[s] >= n;

		if (have || cut_read(d, cb->info[s], psb, n) == 0) {
			cb->at[s] = psb;
			cb->n[s] = n;
			if (!psb_info(cb->info[s], cb->info[s] + n, has_tsc, tsc, has_fup, fup) ||
			    n == (size_t)(e - psb))
				return;
		}
	}
	psb_info(psb, e, has_tsc, tsc, has_fup, fup);
}

/* The walks over the whole file below: once one reaches p, the span it was in
 * before leaves memory if p is in another (a read maps at most the span around
 * it: SNAP_PD_DROP_SPAN), so about one span is resident; p NULL: the walk is
 * over. */
static void walk_at(const struct snap_ptdec *d, uintptr_t *span, const uint8_t *p)
{
	const uint8_t *m = d->map;
	uintptr_t s = p ? (uintptr_t)p & ~(uintptr_t)(SNAP_PD_DROP_SPAN - 1) : 0;

	if (!m || s == *span)
		return;
	if (*span) {
		size_t from = *span > (uintptr_t)m ? *span - (uintptr_t)m : 0,
		       to = *span + SNAP_PD_DROP_SPAN - (uintptr_t)m;

		ptd_drop_bytes(d, m + from, m + (to < d->maplen ? to : d->maplen), 0);
	}
	*span = s;
}

static int add_piece(struct snap_ptdec *d, struct queue *q, size_t qi, const uint8_t *b,
		     const uint8_t *e, int run_start, const struct snap_pd_aux *a)
{
	struct piece *pc;
	int err;

	if ((err = snap_vec_reserve(&d->pieces, &d->cappieces, d->npieces + 1,
				    sizeof(*d->pieces))) < 0 ||
	    (err = snap_vec_reserve(&q->pieces, &q->cappieces, q->npieces + 1,
				    sizeof(*q->pieces))) < 0)
		return err;
	pc = &d->pieces[d->npieces];
	memset(pc, 0, sizeof(*pc));
	pc->q = qi;
	pc->b = b;
	pc->e = e;
	pc->run_start = run_start;
	pc->buf_start = b == a->data;
	pc->tid = d->per_cpu ? -1 : a->tid;
	pc->pid = d->per_cpu ? -1 : pid_of(d, a->tid);
	pc->cpu = a->cpu;
	pc->be = a->data + a->size;
	pc->ref = a->ref;
	pc->qpos = q->npieces;
	q->pieces[q->npieces++] = d->npieces++;
	return 0;
}

static struct queue *queue_get(struct snap_ptdec *d, const struct snap_pd_aux *a, size_t *qi)
{
	for (size_t i = 0; i < d->nqueues; i++)
		if (d->queues[i].idx == a->idx) {
			*qi = i;
			return &d->queues[i];
		}
	if (snap_vec_reserve(&d->queues, &d->capqueues, d->nqueues + 1, sizeof(*d->queues)))
		return NULL;
	memset(&d->queues[d->nqueues], 0, sizeof(d->queues[0]));
	d->queues[d->nqueues].idx = a->idx;
	d->queues[d->nqueues].tid = a->tid;
	d->queues[d->nqueues].cpu = a->cpu;
	d->queues[d->nqueues].last_cbr = -1;
	*qi = d->nqueues;
	return &d->queues[d->nqueues++];
}

/*
 * The cut is in two steps. The search (cut_buffer) reads a buffer's bytes: the
 * PSBs it is cut at, and each piece's first PSB+ (its start time, and the FUP
 * where the piece before it stops when it starts with it), while they are in
 * memory. It depends on the buffer's bytes alone, so with -j the buffers are
 * searched by two threads at once, each half of the bytes (the search is most of the
 * serial start of a decode: page faults, docs/ptdec.md "Memory"); each walks
 * its own span of the file. The pieces are then made from the cuts in the
 * buffers' order (add_cuts): the same pieces, in the same order, whatever -j.
 */
#define SPLIT_THREADS 2 /* the caller and one more (ptd_split_buffers) */

struct cut {
	const uint8_t *b, *e;
	uint64_t start_time;
	uint64_t fup;
	uint8_t psb_at_b; /* its first PSB is at b */
	uint8_t has_fup;  /* of that PSB+ */
};

struct cuts {
	struct cut *c;
	size_t n, cap;
	int err;
};

/* The cut of buffer a (pieces from want bytes on, at the next PSB) into *out;
 * cb: the search's buffers (search_psb; NULL without the descriptor). */
static int cut_buffer(const struct snap_ptdec *d, const struct snap_pd_aux *a, size_t want,
		      uintptr_t *span, struct cutbuf *cb, struct cuts *out)
{
	const uint8_t *b = a->data, *e = a->data + a->size, *cur = b, *next;
	int at_psb = 0, s = 0; /* cur is the PSB the search before found (its bytes: slot s) */

	for (;;) {
		/* no pointer past e is formed (cur + want could overflow) */
		const uint8_t *from = want < (size_t)(e - cur) ? cur + want : e, *psb;
		struct cut *c;
		int has_tsc = 0, has_fup = 0;
		uint64_t tsc = 0, fup = 0;

		next = from < e ? search_psb(d, cb, !s, from, e) : NULL;
		if (snap_vec_reserve(&out->c, &out->cap, out->n + 1, sizeof(*out->c)) < 0)
			return -ENOMEM;
		c = &out->c[out->n++];
		memset(c, 0, sizeof(*c));
		c->b = cur;
		c->e = next ? next : e;
		/* (the first PSB in the piece is cur, if the piece holds it whole) */
		if (at_psb)
			psb = (size_t)(c->e - cur) >= PSB_LEN ? cur : NULL;
		else
			psb = search_psb(d, cb, s, c->b, c->e);
		if (psb) {
			cut_info(d, cb, s, psb, c->e, &has_tsc, &tsc, &has_fup, &fup);
			c->start_time = has_tsc ? tsc2perf(d, tsc) : 0;
			c->psb_at_b = psb == c->b;
			c->has_fup = (uint8_t)has_fup;
			c->fup = fup;
		}
		/* the pages looked at (and the kernel's fault-around) leave
		 * memory again: the whole file is never resident at once, and
		 * is read once (with pread the mapping is read only where a
		 * read failed or a PSB+ is long: the drop after the cut) */
		if (d->fd < 0)
			walk_at(d, span, c->e);
		if (!next)
			return 0;
		cur = next;
		at_psb = 1;
		s = !s;
	}
}

/* The pieces of buffer a from its cuts c[0..n), on its queue. */
static int add_cuts(struct snap_ptdec *d, const struct snap_pd_aux *a, const struct cut *c,
		    size_t n)
{
	size_t qi;
	struct queue *q = queue_get(d, a, &qi);
	int run_start = q == NULL || q->npieces == 0, err;

	if (!q)
		return -ENOMEM;
	d->st.buffers++;
	d->st.bytes += a->size;
	for (size_t k = 0; k < n; k++, run_start = 0) {
		struct piece *pc;

		if ((err = add_piece(d, q, qi, c[k].b, c[k].e, run_start, a)) < 0)
			return err;
		pc = &d->pieces[q->pieces[q->npieces - 1]];
		pc->start_time = c[k].start_time;
		/* where the piece before it on its stream stops, at that PSB's FUP
		 * when the piece starts with it (perf decodes successive snapshot
		 * buffers as one stream, but drops the direct branches after the
		 * last packet of each buffer) */
		if (c[k].psb_at_b && q->npieces > 1 && !pc->run_start &&
		    !(d->snapshot && pc->buf_start)) {
			struct piece *prev = &d->pieces[q->pieces[q->npieces - 2]];

			prev->has_stop = c[k].has_fup;
			prev->stop_ip = c[k].fup;
		}
	}
	return 0;
}

struct split_job {
	const struct snap_ptdec *d;
	struct cuts *out; /* one for each buffer */
	size_t want;
	size_t lo, hi; /* the buffers it searches */
};

/* A searching thread: buffers lo..hi, consecutive in the file (so that the
 * spans one thread drops behind it are not those the other reads); the read
 * buffer only with the file's descriptor (a decode from memory reads none). */
static void *split_thread(void *arg)
{
	struct split_job *j = arg;
	uintptr_t span = 0;
	struct cutbuf *cb = j->d->fd >= 0 ? snap_calloc(1, sizeof(*cb)) : NULL;

	for (size_t i = j->lo; i < j->hi; i++)
		if (j->d->pd.aux[i].size)
			j->out[i].err = !cb && j->d->fd >= 0
						? -ENOMEM
						: cut_buffer(j->d, &j->d->pd.aux[i], j->want, &span,
							     cb, &j->out[i]);
	walk_at(j->d, &span, NULL);
	snap_free(cb);
	return NULL;
}

int ptd_split_buffers(struct snap_ptdec *d)
{
	size_t want = d->o.piece_bytes ? d->o.piece_bytes : AUTO_PIECE, total = 0, half = 0;
	int jobs = snap_jobs(d->o.jobs), nthreads = 0, err = 0;
	pthread_t th;
	struct cuts *out = snap_calloc(d->pd.naux ? d->pd.naux : 1, sizeof(*out));
	struct split_job j[SPLIT_THREADS];

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < d->pd.naux; i++)
		total += d->pd.aux[i].size;
	j[0] = (struct split_job){d, out, want, 0, d->pd.naux};
	/* with -j, a second thread takes the buffers of the second half of the
	 * bytes, from the first that starts in it (none: one buffer is most) */
	for (size_t i = 0, sum = 0; jobs > 1 && i < d->pd.naux; sum += d->pd.aux[i++].size)
		if (i && sum >= total / 2 && d->pd.aux[i].size) {
			half = i;
			break;
		}
	if (half) {
		j[1] = (struct split_job){d, out, want, half, d->pd.naux};
		j[0].hi = half;
		if (pthread_create(&th, NULL, split_thread, &j[1]) == 0)
			nthreads = 1;
		else
			j[0].hi = d->pd.naux;
	}
	split_thread(&j[0]);
	if (nthreads)
		pthread_join(th, NULL);
	for (size_t i = 0; i < d->pd.naux && err >= 0; i++)
		if ((err = out[i].err) >= 0)
			err = add_cuts(d, &d->pd.aux[i], out[i].c, out[i].n);
	for (size_t i = 0; i < d->pd.naux; i++)
		snap_free(out[i].c);
	snap_free(out);
	if (err < 0)
		return err;
	d->st.pieces = d->npieces;
	return 0;
}
