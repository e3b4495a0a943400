// SPDX-License-Identifier: GPL-2.0
/* The cut of AUXTRACE buffers into pieces (src/ptdec/split.c, docs/ptdec.md
 * "Memory"): with -j two threads search the buffers, each half of the bytes;
 * the pieces are those of one search, in the same order, whatever -j. */
#include <stdint.h>
#include <string.h>

#include "pt_encode.h"
#include "ptdec/ptdec_int.h"
#include "snap_test.h"
#include "util/alloc.h"

enum { NBUF = 7, BUFSZ = 160 << 10 };

static uint8_t bufs[NBUF][BUFSZ];
static const size_t sizes[NBUF] = {40 << 10, 100 << 10, 0, 70 << 10, 30 << 10, 150 << 10, 90 << 10};

/* A PSB+ (TSC tsc, FUP ip) every 3000 bytes from byte lead on, pads between. */
static void fill(uint8_t *b, size_t size, size_t lead, uint64_t tsc, uint64_t ip)
{
	memset(b, 0, size); /* PAD */
	for (size_t at = lead; at + 64 <= size; at += 3000, tsc += 1000, ip += 16) {
		struct pt_packet pk[4];

		memset(pk, 0, sizeof(pk));
		pk[0].type = ppt_psb;
		pk[1].type = ppt_tsc;
		pk[1].payload.tsc.tsc = tsc;
		pk[2].type = ppt_fup;
		pk[2].payload.ip.ipc = pt_ipc_sext_48;
		pk[2].payload.ip.ip = ip;
		pk[3].type = ppt_psbend;
		CHECK(pt_encode(b + at, 64, pk, 4) > 16);
	}
}

static void dec_init(struct snap_ptdec *d, struct snap_pd_aux *aux, int jobs)
{
	memset(d, 0, sizeof(*d));
	d->pd.aux = aux;
	d->pd.naux = NBUF;
	d->pd.tc.time_mult = 1;
	d->o.jobs = jobs;
	d->o.piece_bytes = 16 << 10;
}

static void dec_fini(struct snap_ptdec *d)
{
	for (size_t i = 0; i < d->nqueues; i++)
		snap_free(d->queues[i].pieces);
	snap_free(d->queues);
	snap_free(d->pieces);
}

static void same_pieces_whatever_jobs(void)
{
	struct snap_pd_aux aux[NBUF];
	struct snap_ptdec d1, d2;
	size_t stops = 0, cross = 0;

	memset(aux, 0, sizeof(aux));
	for (int i = 0; i < NBUF; i++) {
		/* buffers 1 and 4 start inside a packet stream: their first piece
		 * starts without a PSB */
		fill(bufs[i], sizes[i], i == 1 || i == 4 ? 700 : 0, 100000 * (uint64_t)(i + 1),
		     0x400000 + 0x10000 * (uint64_t)i);
		aux[i].data = bufs[i];
		aux[i].size = sizes[i];
		aux[i].idx = (uint32_t)(i % 2);
		aux[i].tid = 40 + i % 2;
		aux[i].cpu = -1;
	}
	dec_init(&d1, aux, 1);
	dec_init(&d2, aux, 2);
	CHECK_INT_EQ(0, ptd_split_buffers(&d1));
	CHECK_INT_EQ(0, ptd_split_buffers(&d2));
	CHECK(d1.npieces > 20);
	CHECK_U64_EQ(d1.npieces, d2.npieces);
	CHECK_U64_EQ(NBUF, d2.st.buffers);
	CHECK_U64_EQ(d1.st.bytes, d2.st.bytes);
	CHECK_U64_EQ(d1.npieces, d2.st.pieces);
	CHECK_U64_EQ(2, d2.nqueues);
	for (size_t i = 0; i < d1.npieces && i < d2.npieces; i++) {
		const struct piece *a = &d1.pieces[i], *b = &d2.pieces[i];

		CHECK(a->b == b->b && a->e == b->e);
		CHECK_U64_EQ(a->q, b->q);
		CHECK_U64_EQ(a->qpos, b->qpos);
		CHECK_U64_EQ(a->start_time, b->start_time);
		CHECK_INT_EQ(a->run_start, b->run_start);
		CHECK_INT_EQ(a->buf_start, b->buf_start);
		CHECK_INT_EQ(a->has_stop, b->has_stop);
		CHECK_U64_EQ(a->stop_ip, b->stop_ip);
		CHECK_INT_EQ(a->tid, b->tid);
	}
	/* what the cut is: a piece stops at the FUP of the next on its queue,
	 * also across its buffer's end (a buffer that starts with a PSB) */
	for (size_t qi = 0; qi < d2.nqueues; qi++) {
		const struct queue *q = &d2.queues[qi];

		for (size_t k = 0; k + 1 < q->npieces; k++) {
			const struct piece *a = &d2.pieces[q->pieces[k]],
					   *n = &d2.pieces[q->pieces[k + 1]];

			CHECK(n->start_time > a->start_time || !n->start_time);
			if (n->b[0] == 0x02 && n->b[1] == 0x82) {
				CHECK_INT_EQ(1, a->has_stop);
				stops++;
				cross += n->buf_start;
				{
					size_t bi = (size_t)(n->b - bufs[0]) / BUFSZ,
					       off = (size_t)(n->b - bufs[bi]),
					       lead = bi == 1 || bi == 4 ? 700 : 0;

					CHECK_U64_EQ(0x400000 + 0x10000 * (uint64_t)bi +
							     16 * (uint64_t)((off - lead) / 3000),
						     a->stop_ip);
				}
			} else {
				CHECK_INT_EQ(0, a->has_stop);
			}
		}
	}
	CHECK(stops > 20);
	CHECK(cross >= 2);
	dec_fini(&d1);
	dec_fini(&d2);
}

int main(void)
{
	RUN(same_pieces_whatever_jobs);
	return snap_test_done();
}
