// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process PT decoder (ptdec_int.h): perf's PT clock (timing.h,
 * docs/ptdec.md "Timestamps"). The arithmetic follows perf 6.1's decoder
 * (intel-pt-decoder.c: intel_pt_calc_tsc_timestamp, intel_pt_calc_tma,
 * intel_pt_calc_mtc_timestamp, intel_pt_calc_cyc_timestamp, intel_pt_calc_cbr,
 * intel_pt_calc_cyc_to_tsc) type for type, so that every rounding is the same.
 */
#include "ptdec/timing.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptdec/piece.h"
#include "ptdec/ptdec_int.h"

#define TSC_TOP (0xffULL << 56) /* TSC packets carry 56 bits */

void ptt_params_init(struct ptt_params *p, uint64_t config, uint64_t mtc_freq_bits, uint64_t n,
		     uint64_t d, unsigned max_non_turbo)
{
	int shift = 0;

	memset(p, 0, sizeof(*p));
	if (mtc_freq_bits) {
		uint64_t bits = mtc_freq_bits;

		while (!(bits & 1)) {
			bits >>= 1;
			shift++;
		}
		uint64_t v = (config & mtc_freq_bits) >> shift;

		/* the field has 4 bits; keep the shifts defined (a crafted file's
		 * mask may be wider: no int conversion of a wider value) */
		p->mtc_shift = v > 15 ? 15 : (int)v;
	}
	p->ctc_rem_mask = (uint32_t)((1ULL << p->mtc_shift) - 1);
	p->n = (uint32_t)n;
	p->d = (uint32_t)d;
	if (!p->n)
		p->d = 0;
	if (p->d && !(p->n % p->d))
		p->mult = p->n / p->d;
	p->max_non_turbo = max_non_turbo;
	p->max_non_turbo_fp = max_non_turbo;
	p->tsc_slip = 0x10000;
}

void ptt_init_fresh(struct ptt *t)
{
	memset(t, 0, sizeof(*t));
	t->fresh = 1;
}

void ptt_reposition(struct ptt *t, uint64_t ref)
{
	t->timestamp = 0;
	t->have_tma = 0;
	t->ref_timestamp = ref;
	t->buf_timestamp = ref;
	t->fresh = 0;
}

void ptt_bad_packet(struct ptt *t)
{
	t->have_tma = 0;
	t->last_cyc = 0;
}

/* perf's multdiv: t * n / d without overflow, 0 when d is 0. */
static uint64_t multdiv(uint64_t t, uint32_t n, uint32_t d)
{
	if (!d)
		return 0;
	return (t / d) * n + ((t % d) * n) / d;
}

static uint64_t ctc_to_tsc(const struct ptt_params *p, uint64_t ctc)
{
	return p->mult ? ctc * p->mult : multdiv(ctc, p->n, p->d);
}

/* A 7-byte TSC near a reference (perf's intel_pt_8b_tsc). */
static uint64_t tsc_near(uint64_t tsc, uint64_t ref)
{
	tsc |= ref & TSC_TOP;
	if (tsc < ref) {
		if (ref - tsc > (1ULL << 55))
			tsc += 1ULL << 56;
	} else if (tsc - ref > (1ULL << 55)) {
		tsc -= 1ULL << 56;
	}
	return tsc;
}

void ptt_tsc(struct ptt *t, const struct ptt_params *p, uint64_t payload)
{
	uint64_t ts;

	t->have_tma = 0;
	if (t->fresh) {
		t->fresh = 0;
		t->tsc_timestamp = t->timestamp = payload;
		t->reset = 1;
	} else if (t->ref_timestamp) {
		ts = tsc_near(payload, t->ref_timestamp);
		t->tsc_timestamp = t->timestamp = ts;
		t->ref_timestamp = 0;
		t->reset = 1;
	} else if (t->timestamp) {
		ts = payload | (t->timestamp & TSC_TOP);
		t->tsc_timestamp = ts;
		if (ts < t->timestamp && t->timestamp - ts < p->tsc_slip)
			ts = t->timestamp; /* slipped back past MTCs */
		if (ts < t->timestamp) {
			if (!t->buf_timestamp || ts + (1ULL << 56) < t->buf_timestamp) {
				ts += 1ULL << 56; /* wrapped */
				t->tsc_timestamp = ts;
			} else {
				ts = t->timestamp; /* bad: keep the time */
			}
		}
		t->timestamp = ts;
		t->reset = 1;
	}
	if (t->last_cyc) {
		t->cyc_ref_timestamp = t->timestamp;
		t->cycle_cnt = 0;
		t->have_calc = 0;
	}
}

void ptt_tma(struct ptt *t, const struct ptt_params *p, uint32_t ctc, uint32_t fc)
{
	uint32_t ctc_rem = ctc & p->ctc_rem_mask;

	if (!p->d)
		return;
	t->last_mtc = (ctc >> p->mtc_shift) & 0xff;
	t->ctc_timestamp = t->tsc_timestamp - fc;
	if (p->mult)
		t->ctc_timestamp -= (uint32_t)(ctc_rem * p->mult);
	else
		t->ctc_timestamp -= multdiv(ctc_rem, p->n, p->d);
	t->ctc_delta = 0;
	t->have_tma = 1;
	t->fixup_last_mtc = 1;
}

/*
 * The TMA gives 16 bits of CTC; with an MTC period over 8 some bits of the
 * first MTC are not in it: copy them from that MTC, assuming it comes after.
 */
static void fixup_last_mtc(uint32_t mtc, int mtc_shift, uint32_t *last_mtc)
{
	uint32_t first_missing_bit = 1U << (16 - mtc_shift);
	uint32_t mask = ~(first_missing_bit - 1);

	*last_mtc |= mtc & mask;
	if (*last_mtc >= mtc) {
		*last_mtc -= first_missing_bit;
		*last_mtc &= 0xff;
	}
}

/* The time of an MTC, from the TMA and the MTCs since (state in *last_mtc,
 * *ctc_delta and *fixup). */
static uint64_t mtc_time(const struct ptt_params *p, uint32_t mtc, uint32_t *last_mtc,
			 uint64_t *ctc_delta, uint8_t *fixup, uint64_t ctc_timestamp)
{
	uint32_t mtc_delta;

	if (p->mtc_shift > 8 && *fixup) {
		*fixup = 0;
		fixup_last_mtc(mtc, p->mtc_shift, last_mtc);
	}
	if (mtc > *last_mtc)
		mtc_delta = mtc - *last_mtc;
	else
		mtc_delta = mtc + 256 - *last_mtc;
	*ctc_delta += (uint32_t)(mtc_delta << p->mtc_shift);
	return ctc_timestamp + ctc_to_tsc(p, *ctc_delta);
}

/*
 * perf's intel_pt_calc_cyc_to_tsc after an MTC that followed a CYC: TSC ticks
 * per cycle over the packets up to the next MTC that follows a CYC, unless a
 * TSC, TMA, CBR change, the end of tracing or of the buffer comes first.
 */
static void calc_cyc_to_tsc(struct ptt *t, const struct ptt_params *p, struct pt_packet_decoder *la,
			    uint64_t off)
{
	uint64_t cycle_cnt = 0, ctc_delta = t->ctc_delta, timestamp = t->timestamp, ts = 0;
	uint32_t cbr = 0, last_mtc = t->last_mtc;
	uint8_t fixup = t->fixup_last_mtc;
	double cbr_cyc_to_tsc = 0, cyc_to_tsc;
	int prev_cyc = 1; /* perf starts with the type of the packet before the MTC */
	struct pt_packet pkt;

	if (!la || pt_pkt_sync_set(la, off) < 0)
		return;
	for (;;) {
		if (pt_pkt_next(la, &pkt, sizeof(pkt)) < 0)
			return; /* the end of the buffer, or a bad packet */
		switch (pkt.type) {
		case ppt_pad:
			continue;
		case ppt_mtc:
			if (!t->have_tma)
				break;
			ts = mtc_time(p, pkt.payload.mtc.ctc, &last_mtc, &ctc_delta, &fixup,
				      t->ctc_timestamp);
			last_mtc = pkt.payload.mtc.ctc;
			if (ts < timestamp)
				return;
			if (prev_cyc)
				goto calc;
			timestamp = ts;
			break;
		case ppt_cyc:
			cycle_cnt += pkt.payload.cyc.value;
			break;
		case ppt_cbr:
			if (cbr && cbr != pkt.payload.cbr.ratio)
				return;
			cbr = pkt.payload.cbr.ratio;
			cbr_cyc_to_tsc = cbr ? p->max_non_turbo_fp / cbr : 0;
			break;
		case ppt_tsc:
		case ppt_tma:
		case ppt_tip_pgd:
		case ppt_stop:
		case ppt_ovf:
		case ppt_exstop:
		case ppt_mwait:
		case ppt_pwre:
		case ppt_pwrx:
		case ppt_unknown:
		case ppt_invalid:
			return;
		default:
			break;
		}
		prev_cyc = pkt.type == ppt_cyc;
	}
calc:
	if (!cbr && t->cbr) {
		cbr = t->cbr;
		cbr_cyc_to_tsc = t->cbr_cyc_to_tsc;
	}
	if (!cycle_cnt)
		return;
	cyc_to_tsc = (double)(ts - t->timestamp) / (double)cycle_cnt;
	if (cbr && cyc_to_tsc > cbr_cyc_to_tsc &&
	    (cbr_cyc_to_tsc == 0 || cyc_to_tsc / cbr_cyc_to_tsc > 1.25))
		return; /* too far from the CBR's value: not believed */
	t->calc_cyc_to_tsc = cyc_to_tsc;
	t->have_calc = 1;
}

void ptt_mtc(struct ptt *t, const struct ptt_params *p, uint32_t mtc, struct pt_packet_decoder *la,
	     uint64_t next_off)
{
	uint64_t ts;

	if (!t->have_tma)
		return;
	ts = mtc_time(p, mtc, &t->last_mtc, &t->ctc_delta, &t->fixup_last_mtc, t->ctc_timestamp);
	if (ts >= t->timestamp)
		t->timestamp = ts;
	t->reset = 1;
	t->last_mtc = mtc;
	if (t->last_cyc) {
		t->cyc_ref_timestamp = t->timestamp;
		t->cycle_cnt = 0;
		t->have_calc = 0;
		calc_cyc_to_tsc(t, p, la, next_off);
	}
}

void ptt_cbr(struct ptt *t, const struct ptt_params *p, uint32_t cbr)
{
	cbr &= 0xff;
	if (t->cbr == cbr)
		return;
	t->cbr = cbr;
	t->cbr_cyc_to_tsc = cbr ? p->max_non_turbo_fp / cbr : 0;
	t->cyc_ref_timestamp = t->timestamp;
	t->cycle_cnt = 0;
}

int ptt_packet(struct ptt_clock *c, const struct pt_packet *pkt, uint64_t next_off)
{
	struct ptt *t = &c->st;
	int timed = 1;

	switch (pkt->type) {
	case ppt_pad:
		return 0;
	case ppt_tsc:
		ptt_tsc(t, c->p, pkt->payload.tsc.tsc);
		break;
	case ppt_tma:
		ptt_tma(t, c->p, pkt->payload.tma.ctc, pkt->payload.tma.fc);
		break;
	case ppt_mtc:
		if (!c->la && t->last_cyc && t->have_tma && c->base < c->bend) {
			struct pt_config cfg;

			pt_config_init(&cfg);
			cfg.begin = (uint8_t *)c->base;
			cfg.end = (uint8_t *)c->bend;
			c->la = pt_pkt_alloc_decoder(&cfg);
		}
		ptt_mtc(t, c->p, pkt->payload.mtc.ctc, c->la, next_off);
		break;
	case ppt_cyc:
		ptt_cyc(t, pkt->payload.cyc.value);
		break;
	case ppt_cbr:
		ptt_cbr(t, c->p, pkt->payload.cbr.ratio);
		break;
	case ppt_stop:
		t->have_tma = 0;
		timed = 0;
		break;
	default:
		timed = 0;
		break;
	}
	t->last_cyc = pkt->type == ppt_cyc;
	return timed;
}

void ptt_clock_fini(struct ptt_clock *c)
{
	if (c->la)
		pt_pkt_free_decoder(c->la);
	c->la = NULL;
}

/* ---- the state at each piece's start: a scan of the packets before it ---- */

/*
 * The scan's own packet reader: the length of the packet at p (n bytes left)
 * and, for the packets the clock reads, its payload in *pkt (any other packet
 * becomes ppt_mode, PAD ppt_pad). 0 for what it does not know (the scan then
 * reads on with libipt). Lengths from the Intel SDM (32.4, packet formats).
 */
int ptt_walk_packet(const uint8_t *p, size_t n, struct pt_packet *pkt)
{
	static const uint8_t ipbytes[8] = {0, 2, 4, 6, 6, 0xff, 8, 0xff};
	uint8_t b0;
	size_t len;

	if (!n)
		return 0;
	b0 = p[0];
	pkt->type = ppt_mode;
	if (!b0) {
		pkt->type = ppt_pad;
		return 1;
	}
	if (!(b0 & 1)) {
		if (b0 != 0x02)
			return 1; /* short TNT */
		if (n < 2)
			return 0;
		switch (p[1]) {
		case 0x82: /* PSB */
			if (n < 16)
				return 0;
			for (int i = 2; i < 16; i += 2)
				if (p[i] != 0x02 || p[i + 1] != 0x82)
					return 0;
			return 16;
		case 0x23: /* PSBEND */
		case 0xf3: /* OVF */
		case 0x62: /* EXSTOP */
		case 0xe2: /* EXSTOP.IP */
			return 2;
		case 0x83:
			pkt->type = ppt_stop;
			return 2;
		case 0x03:
			if (n < 4)
				return 0;
			pkt->type = ppt_cbr;
			pkt->payload.cbr.ratio = p[2];
			return 4;
		case 0x73:
			if (n < 7 || (p[6] & 0xfe))
				return 0; /* FC has 9 bits: libipt's bad packet */
			pkt->type = ppt_tma;
			pkt->payload.tma.ctc = (uint16_t)(p[2] | p[3] << 8);
			pkt->payload.tma.fc = (uint16_t)(p[5] | (p[6] & 1) << 8);
			return 7;
		case 0x43: /* PIP */
		case 0xa3: /* long TNT */
			len = 8;
			break;
		case 0xc8: /* VMCS */
		case 0xa2: /* PWRX */
			len = 7;
			break;
		case 0xc2: /* MWAIT */
			len = 10;
			break;
		case 0x22: /* PWRE */
			len = 4;
			break;
		case 0xc3: /* MNT */
			if (n < 3 || p[2] != 0x88)
				return 0;
			len = 11;
			break;
		default:
			if ((p[1] & 0x1f) != 0x12 || (p[1] & 0x60) > 0x20)
				return 0;
			len = 2 + ((p[1] & 0x60) ? 8 : 4); /* PTWRITE */
			break;
		}
		return n < len ? 0 : (int)len;
	}
	if ((b0 & 3) == 3) { /* CYC: 5 bits, then 7 a byte while bit 0 says more */
		uint64_t v = b0 >> 3;
		int shift = 5;

		len = 1;
		if (b0 & 4) {
			for (;;) {
				if (len == n || shift > 57)
					return 0;
				v |= (uint64_t)(p[len] >> 1) << shift;
				shift += 7;
				if (!(p[len++] & 1))
					break;
			}
		}
		pkt->type = ppt_cyc;
		pkt->payload.cyc.value = v;
		return (int)len;
	}
	switch (b0 & 0x1f) {
	case 0x01: /* TIP.PGD */
	case 0x0d: /* TIP */
	case 0x11: /* TIP.PGE */
	case 0x1d: /* FUP */
		len = ipbytes[b0 >> 5];
		if (len == 0xff || n < 1 + len)
			return 0;
		return (int)(1 + len);
	default:
		break;
	}
	if (b0 == 0x19) {
		if (n < 8)
			return 0;
		pkt->type = ppt_tsc;
		pkt->payload.tsc.tsc = 0;
		for (int i = 7; i >= 1; i--)
			pkt->payload.tsc.tsc = pkt->payload.tsc.tsc << 8 | p[i];
		return 8;
	}
	if (b0 == 0x59 || b0 == 0x99) {
		if (n < 2)
			return 0;
		if (b0 == 0x59) {
			pkt->type = ppt_mtc;
			pkt->payload.mtc.ctc = p[1];
		}
		return 2;
	}
	return 0;
}

/* Runs a clock over piece pc (from its first PSB when the buffer starts afresh):
 * the token reader's quick loop and ptt_walk_packet while they know the
 * packets (ptd_tok_scan), else libipt's reader. */
static void scan_piece(struct snap_ptdec *d, struct piece *pc, struct ptt_clock *c)
{
	struct pt_config cfg;
	struct pt_packet_decoder *pk = NULL;
	struct pt_packet pkt;
	uint64_t off = 0;
	size_t len = (size_t)(pc->e - pc->b), at = 0;
	int status = 0;

	if (pc->buf_start && (pc->run_start || d->snapshot)) {
		/* perf looks for the buffer's first PSB */
		const uint8_t *psb = memmem(pc->b, len,
					    "\x02\x82\x02\x82\x02\x82\x02\x82"
					    "\x02\x82\x02\x82\x02\x82\x02\x82",
					    16);

		if (!psb)
			return;
		at = (size_t)(psb - pc->b);
	}
	at = ptd_tok_scan(c, pc->b, at, len);
	if (at >= len)
		return;
	/* the rest with libipt: what the workers' readers make of it */
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)pc->b;
	cfg.end = (uint8_t *)pc->e; /* the piece; perf's lookahead goes on to c->bend */
	pk = pt_pkt_alloc_decoder(&cfg);
	if (!pk)
		return;
	status = pt_pkt_sync_set(pk, at);
	while (status >= 0) {
		status = pt_pkt_next(pk, &pkt, sizeof(pkt));
		if (status == -pte_eos)
			break;
		if (status < 0) {
			/* a damaged packet: perf drops its TMA; go on at the next PSB */
			ptt_bad_packet(&c->st);
			status = pt_pkt_sync_forward(pk);
			continue;
		}
		/* the offset only matters to an MTC that perf looks ahead from */
		if (pkt.type == ppt_mtc && c->st.last_cyc && pt_pkt_get_offset(pk, &off) < 0)
			break;
		ptt_packet(c, &pkt, off);
	}
	pt_pkt_free_decoder(pk);
}

/* Piece p is the next one of queue q: its clock at the start is q->tcur once
 * a new buffer's reference is applied. */
static void enter_piece(struct snap_ptdec *d, struct queue *q, struct piece *p)
{
	if (p->tin_set)
		return;
	if (p->buf_start) {
		q->tcur.buf_timestamp = p->ref;
		if (p->run_start || d->snapshot)
			ptt_reposition(&q->tcur, p->ref);
	}
	p->tin = q->tcur;
	p->tin_set = 1;
}

/* The clock after piece p, from its start (p->tin), by the scan. */
static void scan_after(struct snap_ptdec *d, struct piece *p, struct ptt *out)
{
	struct ptt_clock c;

	memset(&c, 0, sizeof(c));
	c.st = p->tin;
	c.p = &d->tparams;
	c.base = p->b;
	c.bend = p->be;
	scan_piece(d, p, &c);
	ptt_clock_fini(&c);
	*out = c.st;
}

void ptd_piece_clock(struct snap_ptdec *d, struct piece *pc, struct ptt *out)
{
	struct queue *q;

	if (!d->tscan) {
		ptt_init_fresh(out);
		return;
	}
	q = &d->queues[pc->q];
	pthread_mutex_lock(&d->tmu);
	while (q->tnext < q->npieces) {
		struct piece *p = &d->pieces[q->pieces[q->tnext]];

		enter_piece(d, q, p);
		if (q->tnext >= pc->qpos)
			break;
		scan_after(d, p, &q->tcur);
		q->tnext++;
	}
	*out = pc->tin;
	pthread_mutex_unlock(&d->tmu);
}

/* Whether two clocks are the same, field by field. */
static int same_clock(const struct ptt *a, const struct ptt *b)
{
	return a->timestamp == b->timestamp && a->tsc_timestamp == b->tsc_timestamp &&
	       a->ref_timestamp == b->ref_timestamp && a->buf_timestamp == b->buf_timestamp &&
	       a->ctc_timestamp == b->ctc_timestamp && a->ctc_delta == b->ctc_delta &&
	       a->cycle_cnt == b->cycle_cnt && a->cyc_ref_timestamp == b->cyc_ref_timestamp &&
	       !memcmp(&a->cbr_cyc_to_tsc, &b->cbr_cyc_to_tsc, sizeof(double)) &&
	       !memcmp(&a->calc_cyc_to_tsc, &b->calc_cyc_to_tsc, sizeof(double)) &&
	       a->last_mtc == b->last_mtc && a->cbr == b->cbr && a->have_tma == b->have_tma &&
	       a->fixup_last_mtc == b->fixup_last_mtc && a->have_calc == b->have_calc &&
	       a->last_cyc == b->last_cyc && a->fresh == b->fresh && a->reset == b->reset;
}

void ptd_piece_clock_end(struct snap_ptdec *d, const struct piece *pc, const struct ptt *end)
{
	struct queue *q;
	struct ptt want;

	if (!d->tscan)
		return;
	q = &d->queues[pc->q];
	pthread_mutex_lock(&d->tmu);
	if (q->tnext == pc->qpos) { /* no scan went past it */
		struct piece *p = &d->pieces[q->pieces[q->tnext]];

		if (d->walk == 2) {
			scan_after(d, p, &want);
			if (!same_clock(&want, end)) {
				fprintf(stderr,
					"ptdec: the fast walk's clock after piece %zu of queue %zu "
					"differs from the scan's (time %llu/%llu)\n",
					pc->qpos, pc->q, (unsigned long long)end->timestamp,
					(unsigned long long)want.timestamp);
				abort();
			}
		}
		q->tcur = *end;
		q->tnext++;
	}
	pthread_mutex_unlock(&d->tmu);
}
