// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder (ptdec_int.h): decoding one piece into raw events (workers). */
#include <errno.h>
#include <string.h>

#include "ptdec/ptdec_int.h"
#include "util/alloc.h"
#include "util/vec.h"

/* ---- decoding one piece (workers) ---- */

static struct pt_image *wimage(struct wctx *w, int32_t pid)
{
	struct proc *src = NULL;

	for (size_t i = 0; i < w->nimgs; i++)
		if (w->imgs[i].pid == pid)
			return w->imgs[i].img;
	for (size_t i = 0; i < w->d->nprocs; i++)
		if (w->d->procs[i].pid == pid)
			src = &w->d->procs[i];
	if (snap_vec_reserve(&w->imgs, &w->capimgs, w->nimgs + 1, sizeof(*w->imgs)))
		return NULL;
	w->imgs[w->nimgs].pid = pid;
	w->imgs[w->nimgs].img = pt_image_alloc(NULL);
	if (!w->imgs[w->nimgs].img)
		return NULL;
	if (src)
		pt_image_copy(w->imgs[w->nimgs].img, src->img);
	else if (w->d->kimg) /* a task without user mappings: the kernel's code */
		pt_image_copy(w->imgs[w->nimgs].img, w->d->kimg);
	return w->imgs[w->nimgs++].img;
}

void ptd_wctx_fini(struct wctx *w)
{
	for (size_t i = 0; i < w->nimgs; i++)
		pt_image_free(w->imgs[i].img);
	snap_free(w->imgs);
	w->imgs = NULL;
	w->nimgs = w->capimgs = 0;
	snap_free(w->bcache);
	snap_free(w->binsns);
	w->bcache = NULL;
	w->binsns = NULL;
	w->nbinsns = w->capbinsns = 0;
}

/* The flags perf gives a branch by the class of its instruction. */
static uint32_t class_flags(enum pt_insn_class c, const struct pt_insn *in)
{
	switch (c) {
	case ptic_call:
		return SNAP_PF_BRANCH | SNAP_PF_CALL;
	case ptic_return:
		return SNAP_PF_BRANCH | SNAP_PF_RETURN;
	case ptic_jump:
		return SNAP_PF_BRANCH;
	case ptic_cond_jump:
		return SNAP_PF_BRANCH | SNAP_PF_CONDITIONAL;
	case ptic_far_call:
		/* syscall 0f 05, sysenter 0f 34; int n cd, int3 cc, into ce */
		if (in->size >= 2 && in->raw[0] == 0x0f &&
		    (in->raw[1] == 0x05 || in->raw[1] == 0x34))
			return SNAP_PF_BRANCH | SNAP_PF_CALL | SNAP_PF_SYSCALLRET;
		if (in->raw[0] == 0xcd || in->raw[0] == 0xcc || in->raw[0] == 0xce)
			return SNAP_PF_BRANCH | SNAP_PF_CALL | SNAP_PF_INTERRUPT;
		return SNAP_PF_BRANCH | SNAP_PF_CALL;
	case ptic_far_return: {
		/* sysret/sysexit 0f 07 / 0f 35, also after a REX prefix (sysretq 48 0f 07) */
		uint8_t r = in->size >= 3 && (in->raw[0] & 0xf0) == 0x40 ? 1 : 0;

		if (in->size >= r + 2 && in->raw[r] == 0x0f &&
		    (in->raw[r + 1] == 0x07 || in->raw[r + 1] == 0x35))
			return SNAP_PF_BRANCH | SNAP_PF_RETURN | SNAP_PF_SYSCALLRET;
		if (in->raw[0] == 0xcf || (in->size >= 2 && in->raw[1] == 0xcf))
			return SNAP_PF_BRANCH | SNAP_PF_RETURN | SNAP_PF_INTERRUPT;
		return SNAP_PF_BRANCH | SNAP_PF_RETURN;
	}
	case ptic_far_jump:
		return SNAP_PF_BRANCH;
	default:
		return 0;
	}
}

/* 1 for a near call or jump through a register or memory (ff /2 /3 /4 /5). */
static int is_indirect(const struct pt_insn *in)
{
	uint8_t i = 0;

	while (i < in->size && (in->raw[i] == 0x66 || in->raw[i] == 0x67 || in->raw[i] == 0x2e ||
				in->raw[i] == 0x3e || in->raw[i] == 0x26 || in->raw[i] == 0x64 ||
				in->raw[i] == 0x65 || in->raw[i] == 0x36 || in->raw[i] == 0xf0 ||
				in->raw[i] == 0xf2 || in->raw[i] == 0xf3))
		i++;
	if (i < in->size && (in->raw[i] & 0xf0) == 0x40)
		i++;
	return i < in->size && in->raw[i] == 0xff;
}

/* Whether libipt needed trace to get past this instruction. */
static int needs_trace(const struct pt_insn *in)
{
	switch (in->iclass) {
	case ptic_cond_jump:
	case ptic_return:
	case ptic_far_call:
	case ptic_far_return:
	case ptic_far_jump:
		return 1;
	case ptic_call:
	case ptic_jump:
		return is_indirect(in);
	default:
		return 0;
	}
}

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

/* A timing packet: perf's clock moves (timing.c). */
static void tok_time(struct tokr *t, const struct pt_packet *pkt)
{
	uint64_t off = 0;

	/* the offset only for a made-up prefix, or an MTC perf looks ahead from */
	if ((t->skip_until || (pkt->type == ppt_mtc && t->clk.st.last_cyc)) &&
	    (pt_pkt_get_offset(t->pk, &off) < 0 || off <= t->skip_until))
		return; /* made up by perf_resync: perf never saw it */
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
	uint64_t off;

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
	while (pt_pkt_next(t->pk, &pkt, sizeof(pkt)) >= 0) {
		int k = TOK_NONE, ok = 0;
		uint64_t ip = 0;

		if (t->clk.st.last_cyc && !ptt_is_timing(pkt.type) &&
		    (!t->skip_until ||
		     (pt_pkt_get_offset(t->pk, &off) >= 0 && off > t->skip_until)))
			t->clk.st.last_cyc = 0; /* perf asks whether a CYC came just before */
		switch (pkt.type) {
		case ppt_tsc:
			t->tsc = pkt.payload.tsc.tsc;
			tok_time(t, &pkt);
			continue;
		case ppt_mtc:
		case ppt_cyc:
		case ppt_tma:
		case ppt_stop:
			tok_time(t, &pkt);
			continue;
		case ppt_cbr:
			tok_time(t, &pkt);
			/* outside PSB+, a new ratio is a sample of its own for perf */
			if (t->in_psb || t->clk.st.cbr == t->cbr_seen ||
			    pt_pkt_get_offset(t->pk, &off) < 0 || off <= t->skip_until)
				continue;
			k = TOK_CBR;
			break;
		case ppt_pad:
			continue;
		case ppt_psb:
			if (pt_pkt_get_offset(t->pk, &off) >= 0)
				t->psb_off = off >= 16 ? off - 16 : 0;
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
		default:
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
		t->kend = pt_pkt_get_offset(t->pk, &off) >= 0 ? off : 0;
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
	if (t->pk && pt_pkt_sync_set(t->pk, off) < 0) {
		pt_pkt_free_decoder(t->pk);
		t->pk = NULL;
	}
}

/* An instruction as the piece decoder needs it (from libipt's instruction
 * decoder, or replayed from the block cache). */
struct cinsn {
	uint64_t ip;
	uint64_t target; /* a direct branch's target, 0 if none or not direct */
	uint32_t flags;	 /* perf's branch flags for its class, 0 = not a branch */
	uint8_t size;
	uint8_t cond;  /* a conditional jump */
	uint8_t trace; /* libipt needed trace to get past it */
	uint8_t pad;
};

/* The target of a direct jump, call or jcc (rel8/rel32), or 0. */
static uint64_t direct_target(const struct pt_insn *in)
{
	uint8_t i = 0, op;
	int64_t rel;

	while (i < in->size && (in->raw[i] == 0x66 || in->raw[i] == 0x67 || in->raw[i] == 0x2e ||
				in->raw[i] == 0x3e || in->raw[i] == 0xf2 || in->raw[i] == 0xf3))
		i++;
	if (i < in->size && (in->raw[i] & 0xf0) == 0x40)
		i++;
	if (i >= in->size)
		return 0;
	op = in->raw[i];
	if ((op >= 0x70 && op <= 0x7f) || op == 0xeb || (op >= 0xe0 && op <= 0xe3)) {
		if (i + 2 != in->size)
			return 0;
		rel = (int8_t)in->raw[i + 1];
	} else if (op == 0xe8 || op == 0xe9 ||
		   (op == 0x0f && i + 1 < in->size && (in->raw[i + 1] & 0xf0) == 0x80)) {
		int32_t r32;
		uint8_t at = (uint8_t)(op == 0x0f ? i + 2 : i + 1);

		if (at + 4 != in->size)
			return 0;
		memcpy(&r32, in->raw + at, 4);
		rel = r32;
	} else {
		return 0;
	}
	return in->ip + in->size + (uint64_t)rel;
}

static void cinsn_of(struct cinsn *c, const struct pt_insn *in)
{
	c->ip = in->ip;
	c->target = direct_target(in);
	c->flags = class_flags(in->iclass, in);
	c->size = in->size;
	c->cond = in->iclass == ptic_cond_jump;
	c->trace = (uint8_t)needs_trace(in);
	c->pad = 0;
}

/* The block cache: each libipt block (image, first ip, instruction count)
 * expanded once into its instructions, following direct jumps and calls. */
struct bentry {
	uint64_t ip;
	int32_t pid;
	uint16_t ninsn;
	uint8_t used, ok;
	uint32_t first; /* index in wctx.binsns */
};

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
	*cbr = 0;
	if (s->bdec)
		pt_blk_core_bus_ratio(s->bdec, cbr);
	else
		pt_insn_core_bus_ratio(s->dec, cbr);
}

static void dec_set_image(struct pstate *s, struct pt_image *img)
{
	if (s->bdec)
		pt_blk_set_image(s->bdec, img);
	else
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
	img = wimage(s->w, s->pid);
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

static int resync(struct pstate *s)
{
	uint64_t off;
	int status = dec_sync_forward(s);

	if (status >= 0 && dec_sync_offset(s, &off) >= 0) {
		tok_sync(&s->tk, off);
		/* Per CPU: the task (and image) at the PSB's time, before any code is read. */
		tok_fill(&s->tk);
		if (s->tk.have && s->tk.kind == TOK_PSB)
			set_task(s, s->tk.ktime);
		/* A PSB+ with tracing off (no FUP: a kernel-only trace in user
		 * space): perf reports the core:bus ratio at the PSB's time. */
		if (s->tk.have && s->tk.kind == TOK_PSB && !s->tk.has_ip) {
			uint32_t cbr = 0;

			dec_cbr(s, &cbr);
			emit_cbr(s, cbr, s->tk.ktime);
		}
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
	s->tk.pk = pt_pkt_alloc_decoder(&cfg);
	if ((!s->dec && !s->bdec) || !s->tk.pk)
		return -ENOMEM;
	if (s->pid != -2) {
		struct pt_image *img = wimage(s->w, s->pid);

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
		struct pt_config cfg;
		struct pt_encoder *enc;
		struct pt_packet pk[5];
		size_t rest = (size_t)(e - b) > t->kend ? (size_t)(e - b) - t->kend : 0;
		uint8_t *nb = snap_malloc(64 + rest);
		int n = 0, status;
		uint64_t off = 0, ip = t->kip, tsc = t->tsc;

		if (!nb)
			return -pte_nomem;
		memset(pk, 0, sizeof(pk));
		pk[0].type = ppt_psb;
		pk[1].type = ppt_mode;
		pk[1].payload.mode.leaf = pt_mol_exec;
		pk[1].payload.mode.bits.exec.csl = 1;
		pk[2].type = ppt_tsc;
		pk[2].payload.tsc.tsc = tsc;
		pk[3].type = ppt_psbend;
		pk[4].type = ppt_tip_pge;
		pk[4].payload.ip.ipc = pt_ipc_full;
		pk[4].payload.ip.ip = ip;
		pt_config_init(&cfg);
		cfg.begin = nb;
		cfg.end = nb + 64;
		enc = pt_alloc_encoder(&cfg);
		if (!enc) {
			snap_free(nb);
			return -pte_nomem;
		}
		for (int i = 0; i < 5; i++)
			if (pt_enc_next(enc, &pk[i]) < 0)
				n = -1;
		pt_enc_get_offset(enc, &off);
		pt_free_encoder(enc);
		if (n < 0 || off > 64) {
			snap_free(nb);
			return -pte_internal;
		}
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

#define BCACHE_BITS 14

/* Instructions walked without a packet before a piece gives up: no real code
 * runs this long on direct branches alone (perf stops after 100000 loops). */
#define NELOOP_INSNS (1u << 20)

/* Expands a block into its instructions: libipt's instruction decoder walks it
 * on a made-up trace (PSB+, TIP.PGE to the block's first ip) that ends where
 * the walk would need a packet, which is where libipt ends a block. */
static int bcache_fill(struct wctx *w, int32_t pid, const struct pt_block *blk, uint32_t *first)
{
	uint8_t buf[64];
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_insn_decoder *dec;
	struct pt_packet pk[4];
	struct pt_insn insn;
	struct pt_event ev;
	struct pt_image *img = wimage(w, pid);
	uint64_t off = 0;
	size_t n = 0;
	int status, err = 0;

	if (!img || blk->mode != ptem_64bit)
		return -1;
	memset(pk, 0, sizeof(pk));
	pk[0].type = ppt_psb;
	pk[1].type = ppt_mode;
	pk[1].payload.mode.leaf = pt_mol_exec;
	pk[1].payload.mode.bits.exec.csl = 1;
	pk[2].type = ppt_psbend;
	pk[3].type = ppt_tip_pge;
	pk[3].payload.ip.ipc = pt_ipc_full;
	pk[3].payload.ip.ip = blk->ip;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + sizeof(buf);
	enc = pt_alloc_encoder(&cfg);
	if (!enc)
		return -1;
	for (int i = 0; i < 4; i++)
		if (pt_enc_next(enc, &pk[i]) < 0)
			err = -1;
	pt_enc_get_offset(enc, &off);
	pt_free_encoder(enc);
	if (err)
		return -1;
	cfg.end = buf + off;
	dec = pt_insn_alloc_decoder(&cfg);
	if (!dec)
		return -1;
	pt_insn_set_image(dec, img);
	if (snap_vec_reserve(&w->binsns, &w->capbinsns, w->nbinsns + blk->ninsn,
			     sizeof(*w->binsns))) {
		pt_insn_free_decoder(dec);
		return -1;
	}
	status = pt_insn_sync_forward(dec);
	while (status >= 0 && n < blk->ninsn) {
		while (status & pts_event_pending) {
			status = pt_insn_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
		}
		if (status < 0)
			break;
		memset(&insn, 0, sizeof(insn));
		status = pt_insn_next(dec, &insn, sizeof(insn));
		if (status < 0 && !(status == -pte_eos && insn.ip && insn.size))
			break;
		cinsn_of(&w->binsns[w->nbinsns + n], &insn);
		n++;
	}
	pt_insn_free_decoder(dec);
	if (n != blk->ninsn || w->binsns[w->nbinsns + n - 1].ip != blk->end_ip)
		return -1;
	*first = (uint32_t)w->nbinsns;
	w->nbinsns += n;
	return 0;
}

/* The instructions of a block (cached), or NULL. */
static const struct cinsn *bcache_get(struct wctx *w, int32_t pid, const struct pt_block *blk)
{
	struct bentry *e;
	uint64_t h =
		(blk->ip * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(uint32_t)pid << 17) ^ blk->ninsn;

	if (!w->bcache) {
		w->bcache = snap_calloc((size_t)1 << BCACHE_BITS, sizeof(*w->bcache));
		if (!w->bcache)
			return NULL;
	}
	e = &w->bcache[(h * 0x9e3779b97f4a7c15ull) >> (64 - BCACHE_BITS)];
	if (e->used && e->ip == blk->ip && e->pid == pid && e->ninsn == blk->ninsn)
		return e->ok ? &w->binsns[e->first] : NULL;
	if (w->nbinsns > (8u << 20)) { /* bounded: start again */
		memset(w->bcache, 0, sizeof(*w->bcache) << BCACHE_BITS);
		w->nbinsns = 0;
	}
	e->used = 1;
	e->ip = blk->ip;
	e->pid = pid;
	e->ninsn = blk->ninsn;
	e->ok = bcache_fill(w, pid, blk, &e->first) == 0;
	return e->ok ? &w->binsns[e->first] : NULL;
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
		cinsn_of(one, &insn);
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
		*v = bcache_get(s->w, s->pid, &blk);
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
		*v = one;
		*n = 1;
		return status;
	}
}

int ptd_decode_piece(struct wctx *w, struct piece *pc)
{
	struct snap_ptdec *d = w->d;
	struct pstate s;
	struct cinsn one;
	const struct cinsn *v;
	struct pt_event ev;
	const uint8_t *cb = pc->b, *ce = pc->e; /* the bytes the decoders read */
	int status;

	memset(&s, 0, sizeof(s));
	s.d = d;
	s.w = w;
	s.pc = pc;
	s.pid = d->per_cpu ? -2 : pc->pid; /* per CPU: set_task picks it on the first sync */
	s.tid = d->per_cpu ? -2 : pc->tid;
	s.stop_idx = NO_IDX;
	s.tk.d = d;
	ptd_piece_clock(d, pc, &s.tk.clk.st);
	s.tk.clk.p = &d->tparams;
	s.tk.clk.base = pc->b;
	s.tk.clk.bend = pc->be > pc->e ? pc->be : pc->e;
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
		for (size_t i = 0; i < n; i++) {
			const struct cinsn *in = &v[i];

			/* Fast path: a plain instruction after a plain one, nothing to
			 * start, no stop here, and the next token is known not to be a
			 * PSB+ (whose FUP this could be). */
			if (s.have_prev && !s.prev.flags && !s.prev.trace && !in->flags &&
			    !in->trace && !s.need_strt && s.tk.have && s.tk.kind != TOK_PSB &&
			    !(pc->has_stop && in->ip == pc->stop_ip)) {
				pc->insns++;
				s.since_take++;
				s.prev = *in;
				continue;
			}
			process_insn(&s, in);
		}
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
	/* The end of the piece: direct branches after the last packet are only
	 * reported up to the next piece's PSB (a continuous stream). */
	if (pc->has_stop && s.stop_idx != NO_IDX)
		pc->nev = s.stop_idx;
	else
		pc->nev = s.confirm;
	free_decoders(&s);
	ptt_clock_fini(&s.tk.clk);
	snap_free(s.rebuf);
	return s.err;
}
