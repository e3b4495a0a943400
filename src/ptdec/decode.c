// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder (ptdec_int.h): decoding one piece into raw events (workers). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptdec/ptdec_int.h"
#include "util/alloc.h"
#include "util/vec.h"

/* ---- decoding one piece (workers) ---- */

/*
 * perf's timestamps. perf gives a branch the time of the last TSC before the
 * packet that decided it (the TNT bit or TIP), and a direct branch the time of
 * the last packet consumed before it; libipt reads ahead through timing
 * packets, so its own time is often later. A second, lazy packet decoder on
 * the piece walks the trace packets in step with the instructions: each
 * trace-consuming instruction or event takes its token (a TNT bit, a TIP, a
 * PGE/PGD, a FUP, an OVF) and perf's clock just before it (timing.c: TSC, MTC,
 * CYC, TMA and CBR packets move it as they move perf's).
 */
enum { TOK_NONE = 0, TOK_TNT, TOK_TIP, TOK_PGE, TOK_PGD, TOK_FUP, TOK_OVF, TOK_PSB, TOK_CBR };

struct tokr {
	struct snap_ptdec *d;
	struct pt_packet_decoder *pk;
	uint64_t time, tsc; /* perf time and raw value of the last TSC read */
	uint64_t last_ip;   /* IP decompression state */
	int tsc_seen;	    /* a TSC was read since the last token */
	int tnt_left;
	uint64_t tnt_bits; /* the TNT packet's payload, the next bit at bit tnt_left - 1 */
	int in_psb, psb_has_fup;
	uint64_t psb_fup;
	int have;   /* a peeked token */
	int ktaken; /* a TNT token's bit */
	int kind, has_ip, ktsc;
	uint64_t ktime, kip, kend; /* kend: offset just after the token's packet */
	uint64_t kts;		   /* ktime in TSC ticks (perf's estimates add to it) */
	uint64_t psb_off;	   /* offset of the last PSB read */
	int odd;		   /* read a packet the fast walk leaves to libipt (or a bad one) */
	int mode64;		   /* read a MODE.exec of 64-bit code */
	const uint8_t *buf;	   /* the bytes read, and the offset of the next packet */
	size_t len, pos;
	/* perf's clock (timing.c): fed the timing packets in stream order */
	struct ptt_clock clk;
	uint32_t kcbr;	     /* the core:bus ratio perf knows at the token */
	uint32_t cbr_seen;   /* the ratio perf last reported */
	uint8_t kcbrchg;     /* perf reports a new ratio with this token */
	uint64_t skip_until; /* packets ending at or before: made up (perf_resync) */
	uint64_t oadj;	     /* packet offset + oadj = offset from the piece's start */
	uint8_t time_stale;  /* time lags the clock */
};

static uint64_t ip_update(uint64_t last, const struct pt_packet_ip *p, int *ok)
{
	*ok = 1;
	switch (p->ipc) {
	case pt_ipc_update_16:
		return (last & ~0xffffull) | (p->ip & 0xffff);
	case pt_ipc_update_32:
		return (last & ~0xffffffffull) | (p->ip & 0xffffffff);
	case pt_ipc_update_48:
		return (last & ~0xffffffffffffull) | (p->ip & 0xffffffffffffull);
	case pt_ipc_sext_48:
		return (uint64_t)((int64_t)(p->ip << 16) >> 16);
	case pt_ipc_full:
		return p->ip;
	default:
		*ok = 0;
		return last;
	}
}

/* The size of the IP payload by IP compression (-1: reserved). */
static const int8_t ip_bytes[8] = {0, 2, 4, 6, 6, -1, 8, -1};

/*
 * The next packet, at t->pos: the common ones (PAD, short TNT, TIP, TIP.PGE,
 * TIP.PGD, FUP, TSC, PSB, PSBEND) decoded here as libipt's packet decoder
 * would, the others by it. Returns 0 and *p, or libipt's error.
 */
static int tok_packet(struct tokr *t, struct pt_packet *p)
{
	const uint8_t *b = t->buf + t->pos;
	size_t left = t->len - t->pos;
	uint64_t v = 0;
	int n, st;

	if (!left)
		return -pte_eos;
	if (b[0] == 0x00) {
		p->type = ppt_pad;
		p->size = 1;
	} else if (!(b[0] & 1) && b[0] != 0x02) { /* TNT-8: payload bits, then a stop bit */
		unsigned bits = b[0] >> 1;

		p->type = ppt_tnt_8;
		p->size = 1;
		p->payload.tnt.bit_size = (uint8_t)(31 - __builtin_clz(bits));
		p->payload.tnt.payload = bits & ~(1u << p->payload.tnt.bit_size);
	} else if (b[0] == 0x02 && left >= 2 && b[1] == 0x23) {
		p->type = ppt_psbend;
		p->size = 2;
	} else if (b[0] == 0x02 && left >= 16 && !memcmp(b, ptd_psb, 16)) {
		p->type = ppt_psb;
		p->size = 16;
	} else if (b[0] == 0x19 && left >= 8) {
		for (int i = 7; i >= 1; i--)
			v = v << 8 | b[i];
		p->type = ppt_tsc;
		p->size = 8;
		p->payload.tsc.tsc = v;
	} else if (((b[0] & 0x1f) == 0x0d || (b[0] & 0x1f) == 0x11 || (b[0] & 0x1f) == 0x01 ||
		    (b[0] & 0x1f) == 0x1d) &&
		   (n = ip_bytes[b[0] >> 5]) >= 0 && left >= (size_t)n + 1) {
		for (int i = n; i >= 1; i--)
			v = v << 8 | b[i];
		p->type = (b[0] & 0x1f) == 0x0d	  ? ppt_tip
			  : (b[0] & 0x1f) == 0x11 ? ppt_tip_pge
			  : (b[0] & 0x1f) == 0x01 ? ppt_tip_pgd
						  : ppt_fup;
		p->size = (uint8_t)(n + 1);
		p->payload.ip.ipc = (enum pt_ip_compression)(b[0] >> 5);
		p->payload.ip.ip = v;
	} else {
		if ((st = pt_pkt_sync_set(t->pk, t->pos)) < 0 ||
		    (st = pt_pkt_next(t->pk, p, sizeof(*p))) < 0)
			return st;
	}
	t->pos += p->size;
	return 0;
}

/* A timing packet: perf's clock moves (timing.c). */
static void tok_time(struct tokr *t, const struct pt_packet *pkt, uint64_t end)
{
	uint64_t off = 0;

	/* the offset only for a made-up prefix, or an MTC perf looks ahead from */
	if (t->skip_until || (pkt->type == ppt_mtc && t->clk.st.last_cyc)) {
		if (end <= t->skip_until)
			return; /* made up by perf_resync: perf never saw it */
		off = end;
	}
	ptt_packet(&t->clk, pkt, off + t->oadj);
	if (t->clk.st.reset) {
		t->clk.st.reset = 0;
		t->tsc_seen = 1;
	}
	t->time_stale = 1; /* converted to perf time at the next token */
}

static void tok_fill(struct tokr *t)
{
	struct pt_packet pkt;

	if (t->have || !t->pk)
		return;
	if (t->tnt_left) {
		t->tnt_left--;
		t->ktaken = (t->tnt_bits >> t->tnt_left) & 1;
		t->have = 1;
		t->kind = TOK_TNT;
		t->ktime = t->time;
		t->kts = t->clk.st.timestamp;
		t->has_ip = 0;
		t->ktsc = 0;
		return;
	}
	for (;;) {
		uint64_t ip = 0, at = t->pos, off;
		int k = TOK_NONE, ok = 0, st = tok_packet(t, &pkt);

		if (st < 0) { /* a packet cut by the end is no clean end */
			t->odd |= st != -pte_eos || t->pos < t->len;
			break;
		}
		off = t->pos; /* just after the packet */
		if (t->clk.st.last_cyc && !ptt_is_timing(pkt.type) &&
		    (!t->skip_until || off > t->skip_until))
			t->clk.st.last_cyc = 0; /* perf asks whether a CYC came just before */
		switch (pkt.type) {
		case ppt_tsc:
			t->tsc = pkt.payload.tsc.tsc;
			tok_time(t, &pkt, off);
			continue;
		case ppt_mtc:
		case ppt_cyc:
		case ppt_tma:
		case ppt_stop:
			t->odd = 1; /* the fast walk leaves perf's finer clock to libipt */
			tok_time(t, &pkt, off);
			continue;
		case ppt_cbr:
			t->odd = 1;
			tok_time(t, &pkt, off);
			/* outside PSB+, a new ratio is a sample of its own for perf */
			if (t->in_psb || t->clk.st.cbr == t->cbr_seen || off <= t->skip_until)
				continue;
			k = TOK_CBR;
			break;
		case ppt_psb:
			t->psb_off = at;
			t->in_psb = 1;
			t->psb_has_fup = 0;
			t->last_ip = 0;
			continue;
		case ppt_psbend:
			t->in_psb = 0;
			k = TOK_PSB;
			ok = t->psb_has_fup;
			ip = t->psb_fup;
			break;
		case ppt_tnt_8:
		case ppt_tnt_64:
			if (!pkt.payload.tnt.bit_size)
				continue;
			t->tnt_bits = pkt.payload.tnt.payload;
			t->tnt_left = pkt.payload.tnt.bit_size - 1;
			t->ktaken = (t->tnt_bits >> t->tnt_left) & 1;
			k = TOK_TNT;
			break;
		case ppt_tip:
		case ppt_tip_pge:
		case ppt_tip_pgd:
		case ppt_fup:
			ip = ip_update(t->last_ip, &pkt.payload.ip, &ok);
			if (ok)
				t->last_ip = ip;
			if (pkt.type == ppt_fup && t->in_psb) {
				t->psb_has_fup = ok;
				t->psb_fup = ip;
				continue;
			}
			k = pkt.type == ppt_tip	      ? TOK_TIP
			    : pkt.type == ppt_tip_pge ? TOK_PGE
			    : pkt.type == ppt_tip_pgd ? TOK_PGD
						      : TOK_FUP;
			break;
		case ppt_ovf:
			k = TOK_OVF;
			break;
		case ppt_pad:
			continue;
		case ppt_mode: /* 64-bit code changes nothing for the walk */
			t->odd |= pkt.payload.mode.leaf != pt_mol_exec ||
				  !pkt.payload.mode.bits.exec.csl || pkt.payload.mode.bits.exec.csd;
			t->mode64 = 1;
			continue;
		default:
			t->odd = 1;
			continue;
		}
		t->have = 1;
		t->kind = k;
		if (t->time_stale && !t->d->timeless)
			t->time = tsc2perf(t->d, t->clk.st.timestamp);
		t->time_stale = 0;
		t->ktime = t->time;
		t->kts = t->clk.st.timestamp;
		t->has_ip = ok;
		t->kip = ip;
		t->ktsc = t->tsc_seen;
		t->tsc_seen = 0;
		t->kend = t->pos;
		t->kcbr = t->clk.st.cbr;
		t->kcbrchg = t->clk.st.cbr != t->cbr_seen && t->kend > t->skip_until;
		if (t->kcbrchg)
			t->cbr_seen = t->clk.st.cbr;
		/* perf gives a PSB the time of its TSC */
		if (k == TOK_PSB && t->clk.st.tsc_timestamp && !t->d->timeless &&
		    t->kend > t->skip_until) {
			t->ktime = tsc2perf(t->d, t->clk.st.tsc_timestamp);
			t->kts = t->clk.st.tsc_timestamp;
		}
		return;
	}
}

/* Repositions at the PSB at off (after libipt synchronised there). */
static void tok_sync(struct tokr *t, uint64_t off)
{
	t->have = 0;
	t->tnt_left = 0;
	t->in_psb = 0;
	if (t->pk && off > t->len) {
		pt_pkt_free_decoder(t->pk);
		t->pk = NULL;
	}
	t->pos = off;
}

/* Reads the bytes b..e (from their start). 0, or -ENOMEM. */
static int tok_open(struct tokr *t, const uint8_t *b, const uint8_t *e)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)b;
	cfg.end = (uint8_t *)e;
	t->pk = pt_pkt_alloc_decoder(&cfg);
	t->buf = b;
	t->len = (size_t)(e - b);
	t->pos = 0;
	return t->pk ? 0 : -ENOMEM;
}

struct pstate {
	struct snap_ptdec *d;
	struct wctx *w;
	struct piece *pc;
	struct pt_insn_decoder *dec;
	struct pt_block_decoder *bdec; /* the block decoder (else dec) */
	struct tokr tk;
	uint64_t stime; /* perf's sample time: the time of the last token consumed */
	uint64_t stsc;	/* the same in TSC ticks */
	uint64_t ts_insns, since_take, sample_insns; /* perf's instruction counts for estimates */
	uint64_t tok_ip;			     /* the IP of the last token taken, if any */
	int tok_has_ip, tok_taken;		     /* tok_taken: its TNT bit, -1 if no TNT */
	uint8_t *rebuf;		   /* a resynchronised copy of the piece (owned) */
	size_t reblen, prefix;	   /* its length, and that of its made-up PSB+ and TIP.PGE */
	const uint8_t *resync_buf; /* the last PSB perf_resync synchronised at */
	uint64_t resync_psb;
	int resync_psb_set;
	unsigned errors_in_row;
	int have_prev;
	struct cinsn prev;
	size_t confirm, stop_idx;
	int need_strt, implicit_ok, err;
	uint32_t cbr;
	uint32_t tcbr; /* the core:bus ratio perf knew at the last token taken */
	int32_t pid, tid;
	uint64_t rets[64]; /* return addresses of the calls seen (compressed returns) */
	unsigned nrets;
	uint64_t ret_to; /* what the last return popped */
};

/* The two libipt decoders behind one face. */
static int dec_sync_forward(struct pstate *s)
{
	return s->bdec ? pt_blk_sync_forward(s->bdec) : pt_insn_sync_forward(s->dec);
}

static int dec_sync_set(struct pstate *s, uint64_t off)
{
	return s->bdec ? pt_blk_sync_set(s->bdec, off) : pt_insn_sync_set(s->dec, off);
}

static int dec_sync_offset(struct pstate *s, uint64_t *off)
{
	return s->bdec ? pt_blk_get_sync_offset(s->bdec, off)
		       : pt_insn_get_sync_offset(s->dec, off);
}

static int dec_event(struct pstate *s, struct pt_event *ev)
{
	return s->bdec ? pt_blk_event(s->bdec, ev, sizeof(*ev))
		       : pt_insn_event(s->dec, ev, sizeof(*ev));
}

static void dec_cbr(struct pstate *s, uint32_t *cbr)
{
	*cbr = 0; /* the fast walk (no libipt decoder) has seen no CBR */
	if (s->bdec)
		pt_blk_core_bus_ratio(s->bdec, cbr);
	else if (s->dec)
		pt_insn_core_bus_ratio(s->dec, cbr);
}

static void dec_set_image(struct pstate *s, struct pt_image *img)
{
	if (s->bdec)
		pt_blk_set_image(s->bdec, img);
	else if (s->dec)
		pt_insn_set_image(s->dec, img);
}

static void cbr_change(struct pstate *s, uint32_t cbr, uint64_t time, int how);

/* Consumes the next token, preferring kind want (0 = any); PSB markers on the
 * way update the sample time. Returns the token's time. */
static uint64_t take(struct pstate *s, int want)
{
	struct tokr *t = &s->tk;

	for (int guard = 0; guard < 64; guard++) {
		tok_fill(t);
		if (!t->have)
			return s->stime;
		s->ts_insns = t->ktsc ? s->since_take : s->ts_insns + s->since_take;
		s->since_take = 0;
		s->sample_insns = s->ts_insns;
		if (t->kind == TOK_CBR) {
			t->have = 0;
			cbr_change(s, t->kcbr, t->ktime, 1);
			continue;
		}
		if (t->kcbrchg) /* perf reports it with this token's sample */
			cbr_change(s, t->kcbr, t->ktime, t->kind == TOK_PSB ? 0 : 2);
		t->kcbrchg = 0;
		if (t->kind == TOK_PSB && want != TOK_PSB) {
			t->have = 0;
			s->stime = t->ktime;
			s->stsc = t->kts;
			continue;
		}
		t->have = 0;
		s->stime = t->ktime;
		s->stsc = t->kts;
		s->tcbr = t->kcbr;
		s->tok_ip = t->kip;
		s->tok_has_ip = t->has_ip;
		s->tok_taken = t->kind == TOK_TNT ? t->ktaken : -1;
		if (!want || t->kind == want || want == TOK_PSB)
			return t->ktime;
		/* A return served by a TNT bit (compressed) or a TIP: either is fine. */
		if (want == TOK_TIP && t->kind == TOK_TNT)
			return t->ktime;
		if (want == TOK_TNT && t->kind == TOK_TIP)
			return t->ktime;
	}
	return s->stime;
}

/* Before instruction ip: a pending PSB+ whose FUP is ip (or without FUP) is passed. */
static void pass_psb(struct pstate *s, uint64_t ip)
{
	struct tokr *t = &s->tk;

	tok_fill(t);
	while (t->have && t->kind == TOK_CBR) {
		t->have = 0;
		cbr_change(s, t->kcbr, t->ktime, 1);
		tok_fill(t);
	}
	if (t->have && t->kind == TOK_PSB && (!t->has_ip || t->kip == ip)) {
		t->have = 0;
		s->stime = t->ktime;
		s->stsc = t->kts;
		if (t->ktsc) { /* perf counts instructions from the PSB's TSC: this one on */
			s->ts_insns = s->sample_insns = 0;
			s->since_take = 1;
		}
		if (t->has_ip) /* perf walked up to the FUP: what came before is reported */
			s->confirm = s->pc->nev;
		if (t->kcbrchg)
			cbr_change(s, t->kcbr, t->ktime, 0);
		t->kcbrchg = 0;
	}
}

/* Everything so far was determined by packets the decoder had read. */
static void confirm_all(struct pstate *s)
{
	s->confirm = s->pc->nev;
	s->stop_idx = NO_IDX;
}

static struct rawev *emit(struct pstate *s, uint8_t kind, uint64_t time)
{
	struct piece *pc = s->pc;
	struct rawev *r;

	if (s->err)
		return NULL;
	if (snap_vec_reserve(&pc->ev, &pc->cap, pc->nev + 1, sizeof(*pc->ev))) {
		s->err = -ENOMEM;
		return NULL;
	}
	r = &pc->ev[pc->nev++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->time = time;
	r->pid = s->pid;
	r->tid = s->tid;
	return r;
}

static uint64_t est_time(const struct pstate *s);

static void emit_branch(struct pstate *s, uint32_t flags, uint64_t ip, uint64_t addr, uint64_t time)
{
	/* perf times a branch from the kernel (or from nowhere) into user space
	 * with its estimate: the last timestamp plus the instructions since */
	int est = (ip >> 63 || !ip) && addr && !(addr >> 63) && !s->d->timeless;
	struct rawev *r = emit(s, RAW_BRANCH, est ? est_time(s) : time);

	if (r) {
		r->est = (uint8_t)est;
		r->flags = flags;
		r->ip = ip;
		r->addr = addr;
	}
}

/* perf's estimated time of an error or a start of tracing: the sample time
 * plus two TSC ticks per instruction walked since the clock moved, at the
 * CBR's speed (intel_pt_est_timestamp). */
static uint64_t est_ticks(const struct pstate *s)
{
	uint64_t est = s->sample_insns << 1;

	if (s->tcbr && s->d->max_non_turbo)
		est = est * s->d->max_non_turbo / s->tcbr;
	return est;
}

static uint64_t est_time(const struct pstate *s)
{
	if (s->d->timeless)
		return 0;
	return tsc2perf(s->d, s->stsc + est_ticks(s));
}

/* perf fails walking on from a branch target it cannot read when it reads the
 * next packet that needs a walk: its error has the time perf has there. */
static void err_at_next_token(struct pstate *s)
{
	struct tokr *t = &s->tk;

	tok_fill(t);
	while (t->have && t->kind == TOK_CBR) { /* read before the failing walk */
		t->have = 0;
		cbr_change(s, t->kcbr, t->ktime, 1);
		tok_fill(t);
	}
	if (!t->have || t->kind == TOK_PSB)
		return;
	s->stime = t->ktime;
	s->stsc = t->kts;
	s->tcbr = t->kcbr;
	if (t->ktsc)
		s->sample_insns = 0;
}

static void emit_error(struct pstate *s, int code, uint64_t ip)
{
	struct rawev *r = emit(s, RAW_ERROR, est_time(s));

	if (r) {
		r->err = (uint8_t)code;
		r->ip = ip;
		r->est = 1;
	}
	confirm_all(s);
}

/* The core:bus ratio as perf reports it: a cbr event when it changes (the
 * reader drops repeats across pieces). */
static void emit_cbr(struct pstate *s, uint32_t cbr, uint64_t time)
{
	struct rawev *r = emit(s, RAW_POWER, time);

	if (r)
		r->addr = cbr;
}

/*
 * perf reports a new core:bus ratio with the first sample after it read the
 * CBR packet. how: 1, the CBR packet alone (a sample of its own, whose time the
 * direct branches walked after it take); 2, with the next token, before the
 * direct branches walked to it; 0, with a PSB+ (after them). The direct
 * branches not yet confirmed were walked by perf after the packet.
 */
static void cbr_change(struct pstate *s, uint32_t cbr, uint64_t time, int how)
{
	struct piece *pc = s->pc;
	size_t at = how ? s->confirm : pc->nev;
	struct rawev *r = emit(s, RAW_POWER, time), ev;

	if (!r)
		return;
	r->addr = cbr;
	if (at + 1 < pc->nev) {
		ev = *r;
		memmove(&pc->ev[at + 1], &pc->ev[at], (pc->nev - 1 - at) * sizeof(*pc->ev));
		pc->ev[at] = ev;
		if (how == 1)
			for (size_t i = at + 1; i < pc->nev; i++)
				pc->ev[i].time = time;
		if (s->stop_idx != NO_IDX && s->stop_idx >= at)
			s->stop_idx++;
	}
	if (how)
		s->confirm++;
	else
		s->confirm = pc->nev;
	if (how == 1) {
		s->stime = time;
		s->stsc = s->tk.kts; /* the CBR's token */
	}
}

/* Per-CPU streams: the task at the current time, and its image. */
static void set_task(struct pstate *s, uint64_t time)
{
	const struct sw *t;
	struct pt_image *img;

	if (!s->d->per_cpu)
		return;
	t = ptd_task_at(s->d, s->pc->cpu, time);
	if (!t || (t->tid == s->tid && t->pid == s->pid))
		return;
	s->pid = t->pid;
	s->tid = t->tid;
	img = ptd_wimage(s->w, s->pid);
	if (img)
		dec_set_image(s, img);
}

/* The previous instruction went on to next_ip: report its branch if it took one.
 * tok: the previous instruction's token was already taken (by an event). */
static void resolve_prev(struct pstate *s, uint64_t next_ip, int tok)
{
	const struct cinsn *p = &s->prev;
	uint64_t time = s->stime;
	uint32_t fl;
	int q;

	if (!s->have_prev)
		return;
	s->have_prev = 0;
	q = p->trace;
	if (q && !tok)
		time = take(s, p->cond ? TOK_TNT : TOK_TIP);
	fl = p->flags;
	if (fl && !(p->cond && next_ip == p->ip + p->size))
		emit_branch(s, fl, p->ip, next_ip, time);
	if (q || tok)
		confirm_all(s);
}

static void start_trace(struct pstate *s, uint64_t ip, int implicit, uint64_t time)
{
	struct rawev *r;

	set_task(s, time);
	/* perf times a start of tracing in user space with its estimate */
	r = emit(s, RAW_BRANCH, s->d->timeless ? time : est_time(s));
	if (r) {
		r->flags = SNAP_PF_BRANCH | SNAP_PF_TRACE_BEGIN;
		r->addr = ip;
		r->implicit = (uint8_t)implicit;
		r->est = 1;
		/* after an error at the end of the last piece, perf resyncs at
		 * this FUP, with its clock inside the PSB+ (not the TSC's time) */
		if (implicit && !s->d->timeless)
			r->ip = tsc2perf(s->d, s->tk.clk.st.timestamp + est_ticks(s));
	}
	s->need_strt = 0;
	confirm_all(s);
}

static void handle_event(struct pstate *s, const struct pt_event *ev)
{
	uint64_t t;

	switch (ev->type) {
	case ptev_enabled:
		resolve_prev(s, ev->variant.enabled.ip, 0);
		t = take(s, TOK_PGE);
		if (s->need_strt) { /* the first sync: perf's cbr event comes first */
			uint32_t cbr = 0;

			set_task(s, t);
			dec_cbr(s, &cbr);
			emit_cbr(s, cbr, t);
		}
		start_trace(s, ev->variant.enabled.ip, 0, t);
		break;
	case ptev_cbr:
		s->cbr = ev->variant.cbr.ratio; /* perf's reports come from the packet walk */
		break;
	case ptev_disabled:
		t = take(s, TOK_PGD);
		if (s->have_prev) {
			const struct cinsn *p = &s->prev;
			uint32_t fl = p->flags;

			s->have_prev = 0;
			emit_branch(s, fl | SNAP_PF_TRACE_END, p->ip, 0, t);
		}
		confirm_all(s);
		break;
	case ptev_async_disabled:
		resolve_prev(s, ev->variant.async_disabled.at, 0);
		take(s, TOK_FUP);
		t = take(s, TOK_PGD);
		emit_branch(s, SNAP_PF_BRANCH | SNAP_PF_ASYNC | SNAP_PF_TRACE_END,
			    ev->variant.async_disabled.at, 0, t);
		confirm_all(s);
		break;
	case ptev_async_branch:
		resolve_prev(s, ev->variant.async_branch.from, 0);
		take(s, TOK_FUP);
		t = take(s, TOK_TIP);
		emit_branch(s, SNAP_PF_BRANCH | SNAP_PF_CALL | SNAP_PF_ASYNC | SNAP_PF_INTERRUPT,
			    ev->variant.async_branch.from, ev->variant.async_branch.to, t);
		confirm_all(s);
		break;
	case ptev_overflow:
		/* perf reports the branch whose packet came before the OVF first. */
		if (s->have_prev && s->prev.trace) {
			const struct cinsn *p = &s->prev;
			uint64_t to = 0, tt;

			tok_fill(&s->tk);
			if (s->tk.have && (s->tk.kind == TOK_TNT || s->tk.kind == TOK_TIP)) {
				tt = take(s, p->cond ? TOK_TNT : TOK_TIP);
				if (s->tok_has_ip)
					to = s->tok_ip;
				else if (p->cond && s->tok_taken == 1)
					to = p->target;
				else if (p->cond && s->tok_taken == 0)
					to = p->ip + p->size;
				else if ((p->flags & SNAP_PF_RETURN) && s->tok_taken == 1)
					to = s->ret_to; /* a compressed return: its call's address */
				if (to && !(p->cond && to == p->ip + p->size))
					emit_branch(s, p->flags, p->ip, to, tt);
				if (to)
					confirm_all(s);
			}
		}
		s->have_prev = 0;
		s->pc->nev = s->confirm;
		t = take(s, TOK_OVF);
		s->sample_insns = 0; /* perf's overflow error has the packet's time */
		s->ts_insns = 0;     /* and perf counts instructions afresh from it */
		emit_error(s, ERR_OVR, 0);
		if (!ev->ip_suppressed) {
			t = take(s, TOK_FUP);
			start_trace(s, ev->variant.overflow.ip, 0, t);
		}
		break;
	default:
		break;
	}
}

static int map_err(int status)
{
	switch (pt_errcode(status)) {
	case pte_nomap:
		return ERR_NOINSN;
	case pte_bad_opc:
	case pte_bad_packet:
		return ERR_BADPKT;
	case pte_bad_query:
	case pte_bad_context:
		return ERR_MISMAT;
	case pte_eos:
		return ERR_NODATA;
	default:
		return ERR_INTERN;
	}
}

/* Synchronised at a PSB+ (the next token). Per CPU: the task (and image) at
 * the PSB's time, before any code is read. With tracing off (no FUP: a
 * kernel-only trace in user space), perf reports the core:bus ratio at the
 * PSB's time. */
static void synced(struct pstate *s)
{
	uint32_t cbr = 0;

	tok_fill(&s->tk);
	if (!s->tk.have || s->tk.kind != TOK_PSB)
		return;
	set_task(s, s->tk.ktime);
	if (!s->tk.has_ip) {
		dec_cbr(s, &cbr);
		emit_cbr(s, cbr, s->tk.ktime);
	}
}

static int resync(struct pstate *s)
{
	uint64_t off;
	int status = dec_sync_forward(s);

	if (status >= 0 && dec_sync_offset(s, &off) >= 0) {
		tok_sync(&s->tk, off);
		synced(s);
	}
	s->need_strt = 1;
	return status;
}

static int new_decoders(struct pstate *s, const uint8_t *b, const uint8_t *e)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)b;
	cfg.end = (uint8_t *)e;
	if (s->d->use_blocks)
		s->bdec = pt_blk_alloc_decoder(&cfg);
	else
		s->dec = pt_insn_alloc_decoder(&cfg);
	if (tok_open(&s->tk, b, e) < 0 || (!s->dec && !s->bdec))
		return -ENOMEM;
	if (s->pid != -2) {
		struct pt_image *img = ptd_wimage(s->w, s->pid);

		if (img)
			dec_set_image(s, img);
	}
	return 0;
}

static void free_decoders(struct pstate *s)
{
	pt_insn_free_decoder(s->dec);
	pt_blk_free_decoder(s->bdec);
	pt_pkt_free_decoder(s->tk.pk);
	s->dec = NULL;
	s->bdec = NULL;
	s->tk.pk = NULL;
}

/*
 * perf's recovery from an error: it drops the packet it was walking to, then
 * resynchronises at the next packet that carries an IP ("tr strt" there), or
 * silently at a PSB+. libipt only synchronises at PSBs, so for an IP packet
 * the rest of the piece is decoded from a copy that starts with a made-up
 * PSB+ (the last TSC) and a TIP.PGE to that IP. Returns the new status.
 */
static int perf_resync(struct pstate *s, const uint8_t *b, const uint8_t *e)
{
	struct tokr *t = &s->tk;
	int eaten = 0;

	t->tnt_left = 0; /* the rest of a TNT packet goes with it */
	for (;;) {
		tok_fill(t);
		if (!t->have) {
			if (!eaten) /* the failing walk goes on into the next piece */
				s->pc->err_open = 1;
			return -pte_eos;
		}
		if (!eaten && t->kind == TOK_PSB && t->has_ip &&
		    !(s->rebuf && t->kend <= s->prefix)) {
			/* The failing walk was to this PSB's FUP: perf resyncs at the
			 * FUP, inside the PSB+ ("tr strt" there, at the clock's time). */
			t->have = 0;
			if (t->ktsc)
				t->tsc_seen = 1;
			if (t->kcbrchg)
				cbr_change(s, t->kcbr, t->time, 2);
			t->kcbrchg = 0;
			break;
		}
		if (t->kind == TOK_PSB &&
		    !(s->resync_psb_set && t->psb_off == s->resync_psb && b == s->resync_buf)) {
			uint64_t off = t->psb_off;
			int status;

			s->resync_psb_set = 1; /* never this PSB again: progress */
			s->resync_psb = off;
			s->resync_buf = b;
			free_decoders(s);
			if (new_decoders(s, b, e) < 0)
				return -pte_nomem;
			s->need_strt = 0;
			status = dec_sync_set(s, off);
			if (status < 0)
				return -pte_eos; /* a damaged PSB+: nothing more to decode here */
			tok_sync(t, off);
			s->need_strt = 0;
			return status;
		}
		t->have = 0;
		if (t->ktsc)
			t->tsc_seen = 1;  /* perf's timestamp_insn_cnt was reset on the way */
		if (t->kind == TOK_CBR) { /* no walk: perf reports it with its next sample */
			cbr_change(s, t->kcbr, t->ktime, 2);
			continue;
		}
		if (s->rebuf && t->kend <= s->prefix)
			continue; /* never the made-up packets again: progress */
		if (!eaten++) {
			t->tnt_left = 0;
			continue;
		}
		if ((t->kind == TOK_TIP || t->kind == TOK_PGE || t->kind == TOK_FUP) && t->has_ip)
			break;
		t->tnt_left = 0;
	}
	{
		size_t rest = (size_t)(e - b) > t->kend ? (size_t)(e - b) - t->kend : 0;
		uint8_t *nb = snap_malloc(64 + rest);
		int n, status;
		size_t off;

		if (!nb)
			return -pte_nomem;
		n = ptd_encode_sync(nb, 64, t->kip, &t->tsc);
		if (n < 0) {
			snap_free(nb);
			return -pte_internal;
		}
		off = (size_t)n;
		memcpy(nb + off, b + t->kend, rest);
		/* perf's clock ignores the made-up packets; offsets map back to the piece */
		t->oadj = t->oadj + t->kend - off;
		t->skip_until = off;
		free_decoders(s);
		snap_free(s->rebuf);
		s->rebuf = nb;
		s->reblen = off + rest;
		s->prefix = off;
		if (new_decoders(s, nb, nb + off + rest) < 0)
			return -pte_nomem;
		s->tk.have = 0;
		s->tk.tnt_left = 0;
		status = dec_sync_forward(s);
		tok_sync(&s->tk, 0);
		s->need_strt = 0;
		s->since_take = 0;
		return status;
	}
}

/* One instruction reached by the walk (in execution order). */
static void process_insn(struct pstate *s, const struct cinsn *in)
{
	struct piece *pc = s->pc;

	pc->insns++;
	s->errors_in_row = 0;
	if (s->need_strt) {
		uint32_t cbr = 0;

		take(s, TOK_PSB);
		set_task(s, s->stime);
		dec_cbr(s, &cbr);
		s->cbr = cbr;
		emit_cbr(s, cbr, s->stime);
		if (s->implicit_ok && pc->nev)
			pc->ev[pc->nev - 1].implicit = 1;
		start_trace(s, in->ip, s->implicit_ok, s->stime);
	}
	s->implicit_ok = 0;
	if (s->have_prev)
		resolve_prev(s, in->ip, 0);
	s->since_take++;
	pass_psb(s, in->ip);
	if (pc->has_stop && in->ip == pc->stop_ip && s->stop_idx == NO_IDX)
		s->stop_idx = pc->nev;
	if ((in->flags & (SNAP_PF_CALL | SNAP_PF_SYSCALLRET | SNAP_PF_INTERRUPT)) == SNAP_PF_CALL)
		s->rets[s->nrets++ % 64] = in->ip + in->size;
	else if ((in->flags & (SNAP_PF_RETURN | SNAP_PF_SYSCALLRET | SNAP_PF_INTERRUPT)) ==
		 SNAP_PF_RETURN)
		s->ret_to = s->nrets ? s->rets[--s->nrets % 64] : 0;
	s->prev = *in;
	s->have_prev = 1;
}

/* Instructions walked without a packet before a piece gives up: no real code
 * runs this long on direct branches alone (perf stops after 100000 loops). */
#define NELOOP_INSNS (1u << 20)

/* The instructions v[0..n), in execution order. */
static void walk_insns(struct pstate *s, const struct cinsn *v, size_t n)
{
	struct piece *pc = s->pc;

	for (size_t i = 0; i < n; i++) {
		const struct cinsn *in = &v[i];

		/* Fast path: a plain instruction after a plain one, nothing to
		 * start, no stop here, and the next token is known not to be a
		 * PSB+ (whose FUP this could be). */
		if (s->have_prev && !s->prev.flags && !s->prev.trace && !in->flags && !in->trace &&
		    !s->need_strt && s->tk.have && s->tk.kind != TOK_PSB &&
		    !(pc->has_stop && in->ip == pc->stop_ip)) {
			pc->insns++;
			s->since_take++;
			s->prev = *in;
			continue;
		}
		process_insn(s, in);
	}
}

/* The next instructions: one (instruction decoder) or a block's. Returns the
 * libipt status; *v and *n are what to process. */
static int next_insns(struct pstate *s, struct cinsn *one, const struct cinsn **v, size_t *n,
		      uint64_t *eos_ip)
{
	int status;

	*n = 0;
	*eos_ip = 0;
	if (!s->bdec) {
		struct pt_insn insn;

		memset(&insn, 0, sizeof(insn));
		status = pt_insn_next(s->dec, &insn, sizeof(insn));
		if (status < 0) {
			if (status == -pte_eos && insn.size)
				*eos_ip = insn.ip;
			return status;
		}
		ptd_cinsn_of(one, &insn);
		*v = one;
		*n = 1;
		return status;
	}
	{
		struct pt_block blk;

		memset(&blk, 0, sizeof(blk));
		status = pt_blk_next(s->bdec, &blk, sizeof(blk));
		if (!blk.ninsn)
			return status;
		/* A block cut short by an error still holds what was walked. */
		*v = ptd_bcache_get(s->w, s->pid, &blk);
		if (*v) {
			*n = blk.ninsn;
			return status;
		}
		/* Not expandable (it should not happen): its last instruction only. */
		s->pc->unwalked++;
		one->ip = blk.end_ip;
		one->target = 0;
		one->size = 0;
		one->flags = 0;
		one->cond = 0;
		one->trace = 0;
		one->cls = ptic_other;
		*v = one;
		*n = 1;
		return status;
	}
}

/* The end of the piece: direct branches after the last packet are only
 * reported up to the next piece's PSB (a continuous stream). */
static void end_piece(struct pstate *s)
{
	if (s->pc->has_stop && s->stop_idx != NO_IDX)
		s->pc->nev = s->stop_idx;
	else
		s->pc->nev = s->confirm;
}

static void pstate_init(struct pstate *s, struct wctx *w, struct piece *pc)
{
	memset(s, 0, sizeof(*s));
	s->d = w->d;
	s->w = w;
	s->pc = pc;
	s->pid = w->d->per_cpu ? -2 : pc->pid; /* per CPU: set_task picks it on the first sync */
	s->tid = w->d->per_cpu ? -2 : pc->tid;
	s->stop_idx = NO_IDX;
	s->tk.d = w->d;
	ptd_piece_clock(w->d, pc, &s->tk.clk.st);
	s->tk.clk.p = &w->d->tparams;
	s->tk.clk.base = pc->b;
	s->tk.clk.bend = pc->be > pc->e ? pc->be : pc->e;
}

/* The libipt path: libipt's block (or instruction) decoder drives the walk. */
static int libipt_piece(struct wctx *w, struct piece *pc)
{
	struct pstate s;
	struct cinsn one;
	const struct cinsn *v = NULL;
	struct pt_event ev;
	const uint8_t *cb = pc->b, *ce = pc->e; /* the bytes the decoders read */
	int status;

	pstate_init(&s, w, pc);
	if (new_decoders(&s, cb, ce) < 0) {
		free_decoders(&s);
		ptt_clock_fini(&s.tk.clk);
		return -ENOMEM;
	}
	status = resync(&s);
	s.implicit_ok = 1;
	while (status != -pte_eos && !s.err) {
		size_t n;
		uint64_t eos_ip;

		if (status < 0) {
			uint64_t ip = 0;

			if (pt_errcode(status) == pte_nomap && s.have_prev && s.prev.trace) {
				/* perf reports the branch to the unreadable address first */
				const struct cinsn *p = &s.prev;
				uint64_t t = take(&s, p->cond ? TOK_TNT : TOK_TIP);

				s.have_prev = 0;
				if (s.tok_has_ip) {
					emit_branch(&s, p->flags, p->ip, s.tok_ip, t);
					ip = s.tok_ip;
				}
				confirm_all(&s);
				err_at_next_token(&s);
			} else {
				ip = s.have_prev ? s.prev.ip : 0;
				s.have_prev = 0;
			}
			pc->nev = s.confirm;
			emit_error(&s, map_err(status), ip);
			pc->end_clean = 0;
			if (++s.errors_in_row > 100)
				break; /* no progress: give up the rest of this piece */
			if (s.rebuf) {
				cb = s.rebuf;
				ce = s.rebuf + s.reblen;
			}
			status = perf_resync(&s, cb, ce);
			s.implicit_ok = 0;
			continue;
		}
		pc->end_clean = 1;
		while (status & pts_event_pending) {
			status = dec_event(&s, &ev);
			if (status < 0)
				break;
			handle_event(&s, &ev);
		}
		if (status < 0)
			continue;
		status = next_insns(&s, &one, &v, &n, &eos_ip);
		walk_insns(&s, v, n);
		if (s.since_take > NELOOP_INSNS) {
			/* libipt follows direct branches for ever (a `jmp .`, or code
			 * reached after damage): perf gives up such a walk too */
			pc->nev = s.confirm;
			emit_error(&s, ERR_NELOOP, s.have_prev ? s.prev.ip : 0);
			pc->end_clean = 0;
			break;
		}
		if (status < 0) {
			/* libipt stops at the instruction that needs the next packet:
			 * the walk got that far (the next piece's PSB FUP, say). */
			if (status == -pte_eos && eos_ip && pc->has_stop && eos_ip == pc->stop_ip &&
			    s.stop_idx == NO_IDX) {
				/* a branch that took a packet to get here too (the
				 * instruction decoder stops at the next one) */
				if (s.have_prev)
					resolve_prev(&s, eos_ip, 0);
				s.stop_idx = pc->nev;
			}
			if (status == -pte_eos)
				break;
			continue;
		}
	}
	end_piece(&s);
	free_decoders(&s);
	ptt_clock_fini(&s.tk.clk);
	snap_free(s.rebuf);
	return s.err;
}

/*
 * The fast walk: the same state machine (process_insn, handle_event, the
 * tokens) driven by ptdec's own flow instead of libipt's block decoder, for
 * the pieces made only of what it knows: a piece that starts with a PSB+ (with
 * or without a FUP), TNT, TIP, TIP.PGE, a TIP.PGD without an IP after a far
 * branch (a syscall), a FUP and TIP.PGD or TIP (an interrupt), TSC,
 * MODE.exec of 64-bit code, PAD. After each instruction that needs trace the next IP comes
 * from the next token (a TNT bit: a conditional's direction or a compressed
 * return; a TIP: the target); the instructions in between come from the run
 * cache (insn.c). libipt's return stack is mirrored (64 entries, the oldest
 * dropped). Anything else -- an error, an overflow, a CBR, MTC/CYC, code that
 * cannot be read, a call to the next instruction -- returns 0 and the piece is
 * decoded again by libipt's decoder, which knows every case: the walk only has
 * to be right for what it takes ($SNAPTRACE_PTDEC_WALK=check compares the two
 * on every piece).
 */

#define RET_MAX 64

struct retstack {
	uint64_t v[RET_MAX];
	unsigned top, n;
};

static void ret_push(struct retstack *r, uint64_t ip)
{
	r->v[r->top++ % RET_MAX] = ip;
	if (r->n < RET_MAX)
		r->n++;
}

static int ret_pop(struct retstack *r, uint64_t *ip)
{
	if (!r->n)
		return -1;
	r->n--;
	*ip = r->v[--r->top % RET_MAX];
	return 0;
}

/*
 * A run: what walk_insns does, in one step when nothing is watched for. Its
 * first instruction resolves the previous run's last one (taking its token);
 * then, unless a trace is yet to start, or the rest of the run holds the FUP
 * of a PSB+ that is the next token or the stop IP yet to be reached, its
 * direct branches are reported at the same time and its other instructions
 * only counted. The calls push their return addresses.
 */
static void walk_run(struct pstate *s, struct retstack *rs, struct run *r)
{
	struct piece *pc = s->pc;
	const struct tokr *t = &s->tk;
	const struct cinsn *v = &s->w->rinsns[r->first];
	const uint32_t *br = r->nbr ? &s->w->rbr[r->br] : NULL;

	for (uint32_t k = 0; k < r->nbr; k++)
		if (v[br[k]].cls == ptic_call)
			ret_push(rs, v[br[k]].ip + v[br[k]].size);
	if (s->need_strt) {
		walk_insns(s, v, r->n);
		return;
	}
	process_insn(s, &v[0]);
	tok_fill(&s->tk);
	if ((t->have && t->kind == TOK_PSB && (!t->has_ip || ptd_run_has(s->w, r, t->kip))) ||
	    (pc->has_stop && s->stop_idx == NO_IDX && ptd_run_has(s->w, r, pc->stop_ip))) {
		walk_insns(s, v + 1, r->n - 1);
		return;
	}
	for (uint32_t k = 0; k < r->nbr; k++)
		emit_branch(s, v[br[k]].flags, v[br[k]].ip, v[br[k] + 1].ip, s->stime);
	pc->insns += r->n - 1;
	s->since_take += r->n - 1;
	s->prev = v[r->n - 1];
	s->have_prev = 1;
}

/* Peeks the next token past PSB+ markers (taken as take() would skip them).
 * 1: a token, 0: the end of the piece, -1: a packet the walk leaves to libipt.
 * A PSB+ with a FUP is passed where the walk reaches its IP (pass_psb): one
 * still there is off the path the trace took, which libipt reports. */
static int next_token(struct pstate *s)
{
	for (;;) {
		tok_fill(&s->tk);
		if (s->tk.odd)
			return -1;
		if (!s->tk.have)
			return 0;
		if (s->tk.kind != TOK_PSB)
			return 1;
		if (s->tk.has_ip)
			return -1;
		take(s, TOK_PSB);
	}
}

/* The next IP after the run's last instruction (which needs trace), from the
 * next token. 1: *ip, 0: tracing stopped (a syscall), -1: left to libipt. */
static int walk_branch(struct pstate *s, struct retstack *rs, const struct cinsn *in, uint64_t *ip)
{
	const struct tokr *t = &s->tk;
	struct pt_event ev;

	switch (in->cls) {
	case ptic_cond_jump:
		if (t->kind != TOK_TNT || (t->ktaken && !in->target))
			return -1;
		*ip = t->ktaken ? in->target : in->ip + in->size;
		return 1;
	case ptic_return:
		if (t->kind == TOK_TNT) /* a compressed return */
			return t->ktaken && ret_pop(rs, ip) == 0 ? 1 : -1;
		if (t->kind != TOK_TIP || !t->has_ip)
			return -1;
		*ip = t->kip;
		return 1;
	case ptic_call:
	case ptic_jump:
		if (t->kind != TOK_TIP || !t->has_ip)
			return -1;
		if (in->cls == ptic_call)
			ret_push(rs, in->ip + in->size);
		*ip = t->kip;
		return 1;
	case ptic_far_call:
	case ptic_far_return:
	case ptic_far_jump:
		if (t->kind == TOK_TIP && t->has_ip) { /* to or from traced kernel code */
			*ip = t->kip;
			return 1;
		}
		if (t->kind != TOK_PGD || t->has_ip)
			return -1;
		memset(&ev, 0, sizeof(ev));
		ev.type = ptev_disabled;
		handle_event(s, &ev);
		return 0;
	default:
		return -1;
	}
}

/* The token after the next one (a look ahead: nothing is taken): its kind,
 * and its IP in *ip (0 if none). */
static int second_token(const struct tokr *t, uint64_t *ip)
{
	struct tokr c = *t;

	c.have = 0;
	tok_fill(&c);
	*ip = c.have && c.has_ip ? c.kip : 0;
	return c.have ? c.kind : TOK_NONE;
}

/*
 * An interrupt or a fault in run r, its FUP the next token: libipt walks to
 * the FUP's IP, the first instruction there not executed. With a TIP.PGD next
 * tracing stops there (perf's "tr end async": returns 0); with a TIP it goes
 * on at the TIP's IP (traced kernel code: "hw int", returns 1 and *ip).
 * Returns -1 to leave the piece to libipt.
 */
static int walk_async(struct pstate *s, struct retstack *rs, struct run *r, uint64_t *ip)
{
	const struct cinsn *v = &s->w->rinsns[r->first];
	uint64_t at = s->tk.kip, to;
	int kind = second_token(&s->tk, &to);
	struct pt_event ev;
	uint32_t k = 0;

	if (!s->tk.has_ip || !(kind == TOK_PGD || (kind == TOK_TIP && to)))
		return -1;
	while (k < r->n && v[k].ip != at)
		k++;
	if (k == r->n)
		return -1; /* past an instruction that needs trace */
	for (uint32_t i = 0; i < k; i++)
		if (v[i].cls == ptic_call)
			ret_push(rs, v[i].ip + v[i].size);
	walk_insns(s, v, k);
	memset(&ev, 0, sizeof(ev));
	if (kind == TOK_PGD) {
		ev.type = ptev_async_disabled;
		ev.variant.async_disabled.at = at;
	} else {
		ev.type = ptev_async_branch;
		ev.variant.async_branch.from = at;
		ev.variant.async_branch.to = *ip = to;
	}
	handle_event(s, &ev);
	return kind == TOK_TIP;
}

/* 1: the piece is decoded, 0: left to libipt, <0: out of memory. */
static int walk_piece(struct wctx *w, struct piece *pc)
{
	struct pstate s;
	struct pt_event ev;
	struct retstack rs;
	uint64_t ip;
	int enabled, got = 0, done = 0;

	pstate_init(&s, w, pc);
	rs.top = rs.n = 0;
	if (tok_open(&s.tk, pc->b, pc->e) < 0) {
		ptt_clock_fini(&s.tk.clk);
		return -ENOMEM;
	}
	tok_sync(&s.tk, 0);
	tok_fill(&s.tk);
	/* A PSB+ at the start that says the code is 64-bit (libipt decodes
	 * differently while the mode is unknown). */
	if (!s.tk.have || s.tk.kind != TOK_PSB || s.tk.psb_off != 0 || s.tk.odd || !s.tk.mode64)
		goto out;
	synced(&s);
	s.need_strt = 1;
	s.implicit_ok = 1;
	pc->end_clean = 1;
	enabled = s.tk.has_ip;
	ip = s.tk.kip;
	while (!s.err) {
		const struct cinsn *last;
		struct run *r;

		if (!enabled) {
			if ((got = next_token(&s)) <= 0)
				break;
			if (s.tk.kind != TOK_PGE || !s.tk.has_ip)
				goto out;
			memset(&ev, 0, sizeof(ev));
			ev.type = ptev_enabled;
			ev.variant.enabled.ip = ip = s.tk.kip;
			handle_event(&s, &ev);
			enabled = 1;
			continue;
		}
		if (!(r = ptd_run_get(w, s.pid, ip)) || r->callnext)
			goto out;
		tok_fill(&s.tk);
		if (s.tk.have && s.tk.kind == TOK_FUP) { /* an interrupt in this run */
			if ((got = walk_async(&s, &rs, r, &ip)) < 0)
				goto out;
			enabled = got;
			continue;
		}
		walk_run(&s, &rs, r);
		last = &w->rinsns[r->first + r->n - 1];
		/* At the end of the piece the last instruction waits for a packet. */
		if ((got = next_token(&s)) <= 0 || (got = walk_branch(&s, &rs, last, &ip)) < 0)
			break;
		enabled = got;
		/* The run's last instruction went to ip (its token is taken): the next
		 * token may be an interrupt's FUP in the next run. */
		if (got)
			resolve_prev(&s, ip, 0);
	}
	if (got < 0 || s.err)
		goto out;
	end_piece(&s);
	done = 1;
out:
	pt_pkt_free_decoder(s.tk.pk);
	ptt_clock_fini(&s.tk.clk);
	return s.err ? s.err : done;
}

/* Whether libipt's decoder failed in itself on the piece (ERR_INTERN: an
 * internal error or an instruction it could not decode): no reference there. */
static int libipt_failed(const struct piece *pc)
{
	for (size_t i = 0; i < pc->nev; i++)
		if (pc->ev[i].kind == RAW_ERROR && pc->ev[i].err == ERR_INTERN)
			return 1;
	return 0;
}

/* Runs the fast walk and libipt's decoder on the same piece and aborts if
 * their events differ ($SNAPTRACE_PTDEC_WALK=check, for the tests). */
static int check_piece(struct wctx *w, struct piece *pc)
{
	struct rawev *ev;
	size_t nev = pc->nev;
	uint64_t insns = pc->insns;
	int clean = pc->end_clean, err;

	ev = snap_malloc((nev ? nev : 1) * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	if (nev)
		memcpy(ev, pc->ev, nev * sizeof(*ev));
	pc->nev = 0;
	pc->insns = 0;
	pc->end_clean = 0;
	err = libipt_piece(w, pc);
	if (!err && !libipt_failed(pc) &&
	    (nev != pc->nev || insns != pc->insns || clean != pc->end_clean ||
	     (nev && memcmp(ev, pc->ev, nev * sizeof(*ev))))) {
		fprintf(stderr,
			"ptdec: the fast walk differs from libipt's decoder on the piece at offset "
			"%zu of queue %zu (%zu/%zu events, %llu/%llu instructions)\n",
			(size_t)(pc->b - w->d->pieces[w->d->queues[pc->q].pieces[0]].b), pc->q, nev,
			pc->nev, (unsigned long long)insns, (unsigned long long)pc->insns);
		abort();
	}
	snap_free(ev);
	return err;
}

int ptd_decode_piece(struct wctx *w, struct piece *pc)
{
	int r = w->d->walk ? walk_piece(w, pc) : 0;

	if (r < 0)
		return r;
	if (r > 0) {
		pc->walked = 1;
		return w->d->walk == 2 ? check_piece(w, pc) : 0;
	}
	pc->nev = 0;
	pc->insns = 0;
	pc->end_clean = 0;
	return libipt_piece(w, pc);
}
