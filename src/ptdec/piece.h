/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to the piece decoder of src/ptdec (docs/ptdec.md): what decoding one
 * piece into raw events shares between its files, one job each:
 *   tokens.c   the token reader: perf's view of the packets, in step with the walk
 *   machine.c  the state machine that turns instructions and tokens into perf's events
 *   resync.c   perf's recovery after an error (resynchronisation at the next IP)
 *   libipt.c   libipt's block (or instruction) decoder driving the state machine
 *   walk.c     the fast walk: ptdec's own flow driving it (the run cache, insn.c)
 *   decode.c   which of the two decodes a piece, and the self-check of the fast walk
 */
#ifndef SNAP_PTDEC_PIECE_H
#define SNAP_PTDEC_PIECE_H

#include <intel-pt.h>
#include <stddef.h>
#include <stdint.h>

#include "ptdec/ptdec_int.h"
#include "ptdec/timing.h"

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
enum tok_kind {
	TOK_NONE = 0,
	TOK_TNT,
	TOK_TIP,
	TOK_PGE,
	TOK_PGD,
	TOK_FUP,
	TOK_OVF,
	TOK_PSB,
	TOK_CBR
};

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
	uint64_t skip_until; /* packets ending at or before: made up (resync.c) */
	uint64_t oadj;	     /* packet offset + oadj = offset from the piece's start */
	uint8_t time_stale;  /* time lags the clock */
	uint32_t ipt_cbr;    /* the last CBR packet read in the piece (0: none) */
	uint8_t reset_any;   /* clk.st.reset was set since the piece's start */
};

/*
 * The return stack, as libipt's pt_retstack and the hardware's return
 * compression keep it: the return addresses of the last RET_MAX calls. A call
 * past RET_MAX drops the oldest entry; a return finds nothing once the stack is
 * empty (never an entry a later call overwrote).
 */
#define RET_MAX 64

struct retstack {
	uint64_t v[RET_MAX];
	unsigned top, n; /* the next slot is v[top % RET_MAX]; n entries (<= RET_MAX) */
};

/* A call: its return address ip on top (the oldest dropped past RET_MAX). */
static inline void ptd_ret_push(struct retstack *r, uint64_t ip)
{
	r->v[r->top++ % RET_MAX] = ip;
	if (r->n < RET_MAX)
		r->n++;
}

/* The return address of the latest call in *ip: 0, or -1 when the stack is empty. */
static inline int ptd_ret_pop(struct retstack *r, uint64_t *ip)
{
	if (!r->n)
		return -1;
	r->n--;
	*ip = r->v[--r->top % RET_MAX];
	return 0;
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
	const uint8_t *resync_buf; /* the last PSB ptd_perf_resync synchronised at */
	uint64_t resync_psb;
	int resync_psb_set;
	unsigned errors_in_row;
	int have_prev;
	struct cinsn prev;
	size_t confirm, stop_idx; /* the watermark: machine.c's top comment */
	int need_strt, implicit_ok, err;
	uint32_t cbr;
	uint32_t tcbr; /* the core:bus ratio perf knew at the last token taken */
	int32_t pid, tid;
	struct retstack rets; /* the calls' return addresses (compressed returns) */
	int walk_rets;	      /* the fast walk keeps rets itself (walk.c), else ptd_process_insn */
	uint64_t ret_to;      /* what the last return popped (0: nothing) */
	size_t evlim;	      /* d->evcap, SIZE_MAX without: ptd_emit_branch's quick bound */
	int prep;	      /* branches are prepared as they are emitted (d->prep_emit: pool.c) */
};

/* ---- tokens.c ---- */

/* Opens the reader on the bytes b..e (borrowed, read from their start). 0, or -ENOMEM. */
int ptd_tok_open(struct tokr *t, const uint8_t *b, const uint8_t *e);
/* Repositions the reader at the PSB at offset off (after libipt synchronised there). */
void ptd_tok_sync(struct tokr *t, uint64_t off);
/* Reads the next token into t (t->have): ptd_tok_fill without a peeked one. */
void ptd_tok_read(struct tokr *t);
/* The next bit of the TNT packet being read: a token of its own. */
static inline void ptd_tok_next_bit(struct tokr *t)
{
	t->tnt_left--;
	t->ktaken = (t->tnt_bits >> t->tnt_left) & 1;
	t->have = 1;
	t->kind = TOK_TNT;
	t->ktime = t->time;
	t->kts = t->clk.st.timestamp;
	t->has_ip = 0;
	t->ktsc = 0;
}
/* Peeks the next token into t (t->have), unless one is peeked already. */
static inline void ptd_tok_fill(struct tokr *t)
{
	if (t->have)
		return;
	if (t->tnt_left && t->pk)
		ptd_tok_next_bit(t);
	else
		ptd_tok_read(t);
}
/* perf's clock c over the bytes b[at..len) (c->base is b): the clock's scan
 * (timing.c) with the token reader's quick loop, no tokens made. Returns the
 * offset of the first packet its reader does not know, or len. */
size_t ptd_tok_scan(struct ptt_clock *c, const uint8_t *b, size_t at, size_t len);
/* Describes the token t has peeked in buf (len bytes, NUL-terminated), as
 * perf's intel_pt_pkt_desc describes a packet: its kind ("TNT taken", "TIP
 * 0x401000", "PSB+ FUP 0x401000", "CBR 23"), perf's time and TSC at it and the
 * offset after its packet in the piece. For $SNAPTRACE_PTDEC_DEBUG=2. Returns buf. */
const char *ptd_tok_desc(const struct tokr *t, char *buf, size_t len);
/* The core:bus ratio libipt's decoder would know here, for the fast walk: the
 * last CBR packet read in the piece, and those of the CBR tokens next (libipt
 * takes their events before it walks on). 0 without one. */
uint32_t ptd_tok_ipt_cbr(const struct tokr *t);

/* ---- machine.c ---- */

/* Sets up s for decoding piece pc with worker context w (both borrowed). */
void ptd_pstate_init(struct pstate *s, struct wctx *w, struct piece *pc);
/* Consumes the next token, preferring kind want (0 = any); PSB markers on the
 * way update the sample time. Returns the token's time. */
uint64_t ptd_take(struct pstate *s, int want);
/* The token t holds is taken: its time, clock, IP and direction are s's. */
static inline void ptd_took(struct pstate *s, struct tokr *t)
{
	t->have = 0;
	s->stime = t->ktime;
	s->stsc = t->kts;
	s->tcbr = t->kcbr;
	s->tok_ip = t->kip;
	s->tok_has_ip = t->has_ip;
	s->tok_taken = t->kind == TOK_TNT ? t->ktaken : -1;
}
/* The token wanted is next, with no new ratio and nothing to print: ptd_take
 * of it, in short (1), else 0 and nothing done. */
static inline int ptd_take_quick(struct pstate *s, int want)
{
	struct tokr *t = &s->tk;

	ptd_tok_fill(t);
	if (!t->have || t->kind == TOK_CBR ||
	    !(t->kind == want || (want == TOK_TIP && t->kind == TOK_TNT) ||
	      (want == TOK_TNT && t->kind == TOK_TIP)) ||
	    t->kcbrchg || s->d->debug > 1)
		return 0;
	s->ts_insns = t->ktsc ? s->since_take : s->ts_insns + s->since_take;
	s->since_take = 0;
	s->sample_insns = s->ts_insns;
	ptd_took(s, t);
	return 1;
}
/* Everything so far was determined by packets read: the watermark moves to the end. */
static inline void ptd_confirm_all(struct pstate *s)
{
	s->confirm = s->pc->nev;
	s->stop_idx = NO_IDX;
}
/* How many of the piece's first events are final: those below confirm, but
 * not past stop_idx (ptd_end_piece keeps pc->ev[0..stop_idx) when it is set,
 * and pass_psb moves confirm beyond it). */
static inline size_t ptd_final_events(const struct pstate *s)
{
	return s->stop_idx < s->confirm ? s->stop_idx : s->confirm;
}
/* Whether perf times the branch ip -> addr with its estimate: one from the
 * kernel (or from nowhere) into user space. */
static inline int ptd_branch_est(const struct pstate *s, uint64_t ip, uint64_t addr)
{
	return (ip >> 63 || !ip) && addr && !(addr >> 63) && !s->d->timeless;
}
/* ptd_emit_branch when the event cannot simply be appended. */
void ptd_emit_branch_slow(struct pstate *s, uint32_t flags, uint64_t ip, uint64_t addr,
			  uint64_t time);
/* A provisional branch event (kept once confirmed): appended in place when
 * there is room, nothing can be handed on and its time is the one given. */
__attribute__((always_inline)) static inline void
ptd_emit_branch(struct pstate *s, uint32_t flags, uint64_t ip, uint64_t addr, uint64_t time)
{
	struct piece *pc = s->pc;

	/* below evlim the final events (at most nev) are below the segment's
	 * size: nothing is handed on */
	if (pc->nev < pc->cap && pc->nev < s->evlim && !s->err && !ptd_branch_est(s, ip, addr)) {
		/* prepared: ptd_prep_branch's fields written at once (writing the raw
		 * event, then preparing it over them, is +1.8 M instructions of the
		 * bench's 1x recordings' 140-170 M) */
		if (s->prep)
			pc->ev[pc->nev++] = (struct rawev){.time = time,
							   .sl = ptd_wlocate(s->w, s->pid, ip),
							   .dl = ptd_wlocate(s->w, s->pid, addr),
							   .flags = ptd_evfl(s->d, flags),
							   .pid = s->pid,
							   .tid = s->tid,
							   .kind = RAW_BRANCH};
		else
			pc->ev[pc->nev++] = (struct rawev){.time = time,
							   .ip = ip,
							   .addr = addr,
							   .flags = flags,
							   .pid = s->pid,
							   .tid = s->tid,
							   .kind = RAW_BRANCH};
		return;
	}
	ptd_emit_branch_slow(s, flags, ip, addr, time);
}
/* The previous instruction went on to next_ip: its branch, if it took one
 * (taking its token when it needed trace). */
static inline void ptd_resolve_prev(struct pstate *s, uint64_t next_ip)
{
	const struct cinsn *p = &s->prev;
	uint64_t time = s->stime;
	uint32_t fl;
	int q;

	if (!s->have_prev)
		return;
	s->have_prev = 0;
	q = p->trace;
	if (q)
		time = ptd_take_quick(s, p->cond ? TOK_TNT : TOK_TIP)
			       ? s->stime
			       : ptd_take(s, p->cond ? TOK_TNT : TOK_TIP);
	fl = p->flags;
	if (fl && !(p->cond && next_ip == p->ip + p->size))
		ptd_emit_branch(s, fl, p->ip, next_ip, time);
	if (q)
		ptd_confirm_all(s);
}
/* An error event (perf's code ERR_*) at ip; it confirms everything before it. */
void ptd_emit_error(struct pstate *s, int code, uint64_t ip);
/* perf reports a new core:bus ratio (how: see machine.c). */
void ptd_cbr_change(struct pstate *s, uint32_t cbr, uint64_t time, int how);
/* perf fails walking on from an unreadable branch target at the next packet
 * that needs a walk: the error gets the time perf has there. */
void ptd_err_at_next_token(struct pstate *s);
/* An event of libipt's decoder (or one the fast walk makes up). */
void ptd_handle_event(struct pstate *s, const struct pt_event *ev);
/* Synchronised at a PSB+ (the next token): the task, and a cbr event when tracing is off. */
void ptd_synced(struct pstate *s);
/* One instruction reached by the walk (in execution order). */
void ptd_process_insn(struct pstate *s, const struct cinsn *in);
/* The instructions v[0..n) (borrowed), in execution order. */
void ptd_walk_insns(struct pstate *s, const struct cinsn *v, size_t n);
/* The end of the piece: drops the events past the watermark (machine.c's top comment). */
void ptd_end_piece(struct pstate *s);

/* ---- libipt.c ---- */

/* The core:bus ratio libipt's decoder knows (0 without one: the fast walk). */
void ptd_dec_cbr(struct pstate *s, uint32_t *cbr);
/* The process image (borrowed) the decoder reads code from, when one is open. */
void ptd_dec_set_image(struct pstate *s, struct pt_image *img);
/* libipt's decoder synchronises at the next PSB+: libipt's status. */
int ptd_dec_sync_forward(struct pstate *s);
/* libipt's decoder synchronises at the PSB+ at offset off: libipt's status. */
int ptd_dec_sync_set(struct pstate *s, uint64_t off);
/* Opens libipt's decoder and the token reader on b..e (borrowed). 0, or -ENOMEM
 * (then ptd_free_decoders frees what was opened). */
int ptd_new_decoders(struct pstate *s, const uint8_t *b, const uint8_t *e);
/* Frees libipt's decoder and the token reader's packet decoder (NULL after). */
void ptd_free_decoders(struct pstate *s);
/* Decodes piece pc with libipt's decoder. 0, or -ENOMEM. */
int ptd_libipt_piece(struct wctx *w, struct piece *pc);

/* ---- resync.c ---- */

/* After an error: perf's resynchronisation in the bytes b..e (borrowed; the
 * piece, or s->rebuf). Returns libipt's new status (-pte_eos: nothing more). */
int ptd_perf_resync(struct pstate *s, const uint8_t *b, const uint8_t *e);

/* ---- walk.c ---- */

/* Decodes piece pc by the fast walk. 1: decoded, 0: left to libipt, -ENOMEM. */
int ptd_walk_piece(struct wctx *w, struct piece *pc);

#endif
