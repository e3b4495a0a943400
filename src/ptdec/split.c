// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder (ptdec_int.h): cutting AUXTRACE buffers at PSBs into pieces. */
#include <errno.h>
#include <string.h>

#include "ptdec/ptdec_int.h"
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

/* Reads the PSB+ at b: its TSC and FUP ip. */
static void psb_info(const uint8_t *b, const uint8_t *e, int *has_tsc, uint64_t *tsc, int *has_fup,
		     uint64_t *fup)
{
	struct pt_config cfg;
	struct pt_packet_decoder *pk;
	struct pt_packet pkt;

	*has_tsc = *has_fup = 0;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)b;
	cfg.end = (uint8_t *)e;
	pk = pt_pkt_alloc_decoder(&cfg);
	if (!pk)
		return;
	if (pt_pkt_sync_set(pk, 0) >= 0) {
		for (int n = 0; n < 64 && pt_pkt_next(pk, &pkt, sizeof(pkt)) >= 0; n++) {
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
				break;
			}
		}
	}
	pt_pkt_free_decoder(pk);
}

/* The walks over the whole file below: once one reaches p, the span it was in
 * before leaves memory if p is in another (a read maps at most the span around
 * it: SNAP_PD_DROP_SPAN), so about one span is resident; p NULL: the walk is
 * over. */
static void walk_at(struct snap_ptdec *d, uintptr_t *span, const uint8_t *p)
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

/* The piece just cut (the last of queue q): its start time from its first PSB+,
 * and where the piece before it on its stream stops, at that PSB's FUP when the
 * piece starts with it (perf decodes successive snapshot buffers as one stream,
 * but drops the direct branches after the last packet of each buffer). Read as
 * the piece is cut, while its first bytes are in memory. */
static void piece_psb(struct snap_ptdec *d, const struct queue *q)
{
	struct piece *pc = &d->pieces[q->pieces[q->npieces - 1]];
	const uint8_t *psb = find_psb(pc->b, pc->e);
	int has_tsc, has_fup;
	uint64_t tsc = 0, fup = 0;

	if (!psb)
		return;
	psb_info(psb, pc->e, &has_tsc, &tsc, &has_fup, &fup);
	pc->start_time = has_tsc ? tsc2perf(d, tsc) : 0;
	if (psb == pc->b && q->npieces > 1 && !pc->run_start && !(d->snapshot && pc->buf_start)) {
		struct piece *prev = &d->pieces[q->pieces[q->npieces - 2]];

		prev->has_stop = has_fup;
		prev->stop_ip = fup;
	}
}

int ptd_split_buffers(struct snap_ptdec *d)
{
	size_t want = d->o.piece_bytes ? d->o.piece_bytes : AUTO_PIECE;
	uintptr_t span = 0;
	int err;

	for (size_t i = 0; i < d->pd.naux; i++) {
		const struct snap_pd_aux *a = &d->pd.aux[i];
		const uint8_t *b = a->data, *e = a->data + a->size, *cur = b, *next;
		size_t qi;
		struct queue *q = queue_get(d, a, &qi);
		int run_start = q == NULL || q->npieces == 0;

		if (!q)
			return -ENOMEM;
		d->st.buffers++;
		d->st.bytes += a->size;
		if (!a->size)
			continue;
		for (;;) {
			/* no pointer past e is formed (cur + want could overflow) */
			const uint8_t *from = want < (size_t)(e - cur) ? cur + want : e;

			next = from < e ? find_psb(from, e) : NULL;
			if ((err = add_piece(d, q, qi, cur, next ? next : e, run_start, a)) < 0)
				return err;
			piece_psb(d, q);
			/* the pages looked at (and the kernel's fault-around) leave
			 * memory again: the whole file is never resident at once, and
			 * is read once */
			walk_at(d, &span, next ? next : e);
			run_start = 0;
			if (!next)
				break;
			cur = next;
		}
	}
	walk_at(d, &span, NULL);
	d->st.pieces = d->npieces;
	return 0;
}
