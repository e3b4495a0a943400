// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process PT decoder (ptdec_int.h): the per-piece state machine that
 * reproduces perf's decoder output (piece.h), driven by libipt's decoder
 * (libipt.c) or by the fast walk (walk.c), one instruction or event at a time.
 *
 * The invariant of a piece's events, the confirm/stop watermark. Events are
 * appended to pc->ev[0..nev) as the walk reaches them, but perf reports a
 * direct branch only once a later packet made it walk that far, so they are
 * provisional until confirmed:
 *   - every event in pc->ev[0..confirm) was decided by a packet read; those in
 *     [confirm, nev) may still be dropped (confirm <= nev at every step);
 *   - ptd_confirm_all moves confirm to nev (a token taken, an error, a PSB+
 *     whose FUP the walk passed, a start of tracing); ptd_cbr_change inserts its
 *     event at confirm, moving the provisional events up, and confirms it;
 *   - before an error or an overflow, and at the end of the piece
 *     (ptd_end_piece), nev drops back to confirm: the provisional events are
 *     the ones perf never reports;
 *   - except for a piece with a stop IP (pc->has_stop: the next piece's PSB+
 *     FUP, which perf walks on to in one stream): stop_idx is nev when the walk
 *     first reached that IP (NO_IDX before; confirming resets it), and
 *     ptd_end_piece keeps pc->ev[0..stop_idx) instead.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ptdec/piece.h"
#include "util/vec.h"

static void debug_token(const struct pstate *s, int want)
{
	char buf[160];

	fprintf(stderr, "ptdec: piece %zu take(%d): %s\n", (size_t)(s->pc - s->d->pieces), want,
		ptd_tok_desc(&s->tk, buf, sizeof(buf)));
}

/* Consumes the next token, preferring kind want (0 = any); PSB markers on the
 * way update the sample time. Returns the token's time. */
uint64_t ptd_take(struct pstate *s, int want)
{
	struct tokr *t = &s->tk;

	if (ptd_take_quick(s, want))
		return s->stime;
	for (int guard = 0; guard < 64; guard++) {
		ptd_tok_fill(t);
		if (!t->have)
			return s->stime;
		s->ts_insns = t->ktsc ? s->since_take : s->ts_insns + s->since_take;
		s->since_take = 0;
		s->sample_insns = s->ts_insns;
		if (t->kind == TOK_CBR) {
			t->have = 0;
			ptd_cbr_change(s, t->kcbr, t->ktime, 1);
			continue;
		}
		if (t->kcbrchg) /* perf reports it with this token's sample */
			ptd_cbr_change(s, t->kcbr, t->ktime, t->kind == TOK_PSB ? 0 : 2);
		t->kcbrchg = 0;
		if (t->kind == TOK_PSB && want != TOK_PSB) {
			t->have = 0;
			s->stime = t->ktime;
			s->stsc = t->kts;
			continue;
		}
		if (s->d->debug > 1)
			debug_token(s, want);
		ptd_took(s, t);
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

	ptd_tok_fill(t);
	while (t->have && t->kind == TOK_CBR) {
		t->have = 0;
		ptd_cbr_change(s, t->kcbr, t->ktime, 1);
		ptd_tok_fill(t);
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
			ptd_cbr_change(s, t->kcbr, t->ktime, 0);
		t->kcbrchg = 0;
	}
}

/* How many of the piece's first events are final: those below confirm, but
 * not past stop_idx (ptd_end_piece keeps pc->ev[0..stop_idx) when it is set,
 * and pass_psb moves confirm beyond it). */
static size_t final_events(const struct pstate *s)
{
	return ptd_final_events(s);
}

/* The final events go to the reader as a segment (pool.c); the reader itself
 * holds up to READER_CAPS segments' worth, then gives the piece up to a helper
 * thread (-EAGAIN), unless it is that piece's fallback (pc->big: decoded whole). */
static void publish(struct pstate *s)
{
	size_t n = final_events(s);
	int err;

	if (!s->w->can_block) {
		if (!s->pc->big && n >= READER_CAPS * s->d->evcap)
			s->err = -EAGAIN;
		return;
	}
	if ((err = ptd_publish(s->d, s->pc, n)) < 0) {
		s->err = err;
		return;
	}
	/* the bytes before the token reader are read (libipt's decoder is ahead of
	 * it); a page still needed is read again from the file */
	if (s->tk.buf == s->pc->b && s->pc->b + s->tk.pos > s->pc->dropped) {
		const uint8_t *from =
			s->pc->dropped && (size_t)(s->pc->dropped - s->pc->b) > PTD_FAULT_AROUND
				? s->pc->dropped - PTD_FAULT_AROUND
				: s->pc->b;

		ptd_drop_bytes(s->d, from, s->pc->b + s->tk.pos, 0);
		s->pc->dropped = s->pc->b + s->tk.pos;
	}
	if (s->stop_idx != NO_IDX)
		s->stop_idx -= n;
	s->confirm -= n;
}

static struct rawev *emit(struct pstate *s, uint8_t kind, uint64_t time)
{
	struct piece *pc = s->pc;
	struct rawev *r;

	if (s->d->evcap && !s->err && final_events(s) >= s->d->evcap)
		publish(s);
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

void ptd_emit_branch_slow(struct pstate *s, uint32_t flags, uint64_t ip, uint64_t addr,
			  uint64_t time)
{
	int est = ptd_branch_est(s, ip, addr);
	struct rawev *r = emit(s, RAW_BRANCH, est ? est_time(s) : time);

	if (r) {
		r->est = (uint8_t)est;
		r->flags = flags;
		r->ip = ip;
		r->addr = addr;
		if (s->prep)
			ptd_prep_branch(s->w, r);
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
void ptd_err_at_next_token(struct pstate *s)
{
	struct tokr *t = &s->tk;

	ptd_tok_fill(t);
	while (t->have && t->kind == TOK_CBR) { /* read before the failing walk */
		t->have = 0;
		ptd_cbr_change(s, t->kcbr, t->ktime, 1);
		ptd_tok_fill(t);
	}
	if (!t->have || t->kind == TOK_PSB)
		return;
	s->stime = t->ktime;
	s->stsc = t->kts;
	s->tcbr = t->kcbr;
	if (t->ktsc)
		s->sample_insns = 0;
}

void ptd_emit_error(struct pstate *s, int code, uint64_t ip)
{
	struct rawev *r = emit(s, RAW_ERROR, est_time(s));

	if (r) {
		r->err = (uint8_t)code;
		r->ip = ip;
		r->est = 1;
	}
	ptd_confirm_all(s);
}

/* The core:bus ratio as perf reports it: a cbr event when it changes (the
 * reader drops repeats across pieces). */
static void emit_cbr(struct pstate *s, uint32_t cbr, uint64_t time)
{
	struct rawev *r = emit(s, RAW_POWER, time);

	if (r)
		r->cbr = cbr;
}

/*
 * perf reports a new core:bus ratio with the first sample after it read the
 * CBR packet. how: 1, the CBR packet alone (a sample of its own, whose time the
 * direct branches walked after it take); 2, with the next token, before the
 * direct branches walked to it; 0, with a PSB+ (after them). The direct
 * branches not yet confirmed were walked by perf after the packet.
 */
void ptd_cbr_change(struct pstate *s, uint32_t cbr, uint64_t time, int how)
{
	struct piece *pc = s->pc;
	struct rawev *r = emit(s, RAW_POWER, time), ev;
	size_t at;

	if (!r)
		return;
	at = how ? s->confirm : pc->nev - 1; /* emit may have handed events on */
	r->cbr = cbr;
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
		ptd_dec_set_image(s, img);
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
		if (s->prep)
			ptd_prep_branch(s->w, r);
		if (implicit)
			s->pc->strt_time =
				s->d->timeless
					? 0
					: tsc2perf(s->d, s->tk.clk.st.timestamp + est_ticks(s));
	}
	s->need_strt = 0;
	ptd_confirm_all(s);
}

/* Before an overflow: the branch of the previous instruction (which needs trace)
 * when the next token decides it. */
static void branch_before_ovf(struct pstate *s)
{
	const struct cinsn *p = &s->prev;
	uint64_t to = 0, tt;

	ptd_tok_fill(&s->tk);
	if (!s->tk.have || (s->tk.kind != TOK_TNT && s->tk.kind != TOK_TIP))
		return;
	tt = ptd_take(s, p->cond ? TOK_TNT : TOK_TIP);
	if (s->tok_has_ip)
		to = s->tok_ip;
	else if (p->cond && s->tok_taken == 1)
		to = p->target;
	else if (p->cond && s->tok_taken == 0)
		to = p->ip + p->size;
	else if ((p->flags & SNAP_PF_RETURN) && s->tok_taken == 1)
		to = s->ret_to; /* a compressed return: its call's address */
	if (to && !(p->cond && to == p->ip + p->size))
		ptd_emit_branch(s, p->flags, p->ip, to, tt);
	if (to)
		ptd_confirm_all(s);
}

/* An overflow: perf reports the branch whose packet came before the OVF first,
 * drops what is provisional, and reports the error (and a start at its FUP). */
static void overflow(struct pstate *s, const struct pt_event *ev)
{
	uint64_t t;

	if (s->have_prev && s->prev.trace)
		branch_before_ovf(s);
	s->have_prev = 0;
	s->pc->nev = s->confirm;
	t = ptd_take(s, TOK_OVF);
	s->sample_insns = 0; /* perf's overflow error has the packet's time */
	s->ts_insns = 0;     /* and perf counts instructions afresh from it */
	ptd_emit_error(s, ERR_OVR, 0);
	if (!ev->ip_suppressed) {
		t = ptd_take(s, TOK_FUP);
		start_trace(s, ev->variant.overflow.ip, 0, t);
	}
}

void ptd_handle_event(struct pstate *s, const struct pt_event *ev)
{
	uint64_t t;

	switch (ev->type) {
	case ptev_enabled:
		ptd_resolve_prev(s, ev->variant.enabled.ip);
		t = ptd_take(s, TOK_PGE);
		if (s->need_strt) { /* the first sync: perf's cbr event comes first */
			uint32_t cbr = 0;

			set_task(s, t);
			ptd_dec_cbr(s, &cbr);
			emit_cbr(s, cbr, t);
		}
		start_trace(s, ev->variant.enabled.ip, 0, t);
		break;
	case ptev_cbr:
		s->cbr = ev->variant.cbr.ratio; /* perf's reports come from the packet walk */
		break;
	case ptev_disabled:
		t = ptd_take(s, TOK_PGD);
		if (s->have_prev) {
			const struct cinsn *p = &s->prev;
			uint32_t fl = p->flags;

			s->have_prev = 0;
			ptd_emit_branch(s, fl | SNAP_PF_TRACE_END, p->ip, 0, t);
		}
		ptd_confirm_all(s);
		break;
	case ptev_async_disabled:
		ptd_resolve_prev(s, ev->variant.async_disabled.at);
		ptd_take(s, TOK_FUP);
		t = ptd_take(s, TOK_PGD);
		ptd_emit_branch(s, SNAP_PF_BRANCH | SNAP_PF_ASYNC | SNAP_PF_TRACE_END,
				ev->variant.async_disabled.at, 0, t);
		ptd_confirm_all(s);
		break;
	case ptev_async_branch:
		ptd_resolve_prev(s, ev->variant.async_branch.from);
		ptd_take(s, TOK_FUP);
		t = ptd_take(s, TOK_TIP);
		ptd_emit_branch(s,
				SNAP_PF_BRANCH | SNAP_PF_CALL | SNAP_PF_ASYNC | SNAP_PF_INTERRUPT,
				ev->variant.async_branch.from, ev->variant.async_branch.to, t);
		ptd_confirm_all(s);
		break;
	case ptev_overflow:
		overflow(s, ev);
		break;
	default:
		break;
	}
}

/* Synchronised at a PSB+ (the next token). Per CPU: the task (and image) at
 * the PSB's time, before any code is read. With tracing off (no FUP: a
 * kernel-only trace in user space), perf reports the core:bus ratio at the
 * PSB's time. */
void ptd_synced(struct pstate *s)
{
	uint32_t cbr = 0;

	ptd_tok_fill(&s->tk);
	if (!s->tk.have || s->tk.kind != TOK_PSB)
		return;
	set_task(s, s->tk.ktime);
	if (!s->tk.has_ip) {
		ptd_dec_cbr(s, &cbr);
		emit_cbr(s, cbr, s->tk.ktime);
	}
}

/* libipt's decoder: the return stack follows the calls and returns walked,
 * for a compressed return perf reports before an overflow. */
static void track_return(struct pstate *s, const struct cinsn *in)
{
	uint64_t to;

	if ((in->flags & (SNAP_PF_CALL | SNAP_PF_SYSCALLRET | SNAP_PF_INTERRUPT)) == SNAP_PF_CALL)
		ptd_ret_push(&s->rets, in->ip + in->size);
	else if ((in->flags & (SNAP_PF_RETURN | SNAP_PF_SYSCALLRET | SNAP_PF_INTERRUPT)) ==
		 SNAP_PF_RETURN)
		s->ret_to = ptd_ret_pop(&s->rets, &to) == 0 ? to : 0;
}

/* One instruction reached by the walk (in execution order). */
void ptd_process_insn(struct pstate *s, const struct cinsn *in)
{
	struct piece *pc = s->pc;

	pc->insns++;
	s->errors_in_row = 0;
	if (s->need_strt) {
		uint32_t cbr = 0;

		ptd_take(s, TOK_PSB);
		set_task(s, s->stime);
		ptd_dec_cbr(s, &cbr);
		s->cbr = cbr;
		emit_cbr(s, cbr, s->stime);
		if (s->implicit_ok && pc->nev)
			pc->ev[pc->nev - 1].implicit = 1;
		start_trace(s, in->ip, s->implicit_ok, s->stime);
	}
	s->implicit_ok = 0;
	if (s->have_prev)
		ptd_resolve_prev(s, in->ip);
	s->since_take++;
	pass_psb(s, in->ip);
	if (pc->has_stop && in->ip == pc->stop_ip && s->stop_idx == NO_IDX)
		s->stop_idx = pc->nev;
	if (!s->walk_rets)
		track_return(s, in);
	s->prev = *in;
	s->have_prev = 1;
}

/* The instructions v[0..n), in execution order. */
void ptd_walk_insns(struct pstate *s, const struct cinsn *v, size_t n)
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
		ptd_process_insn(s, in);
	}
}

/* The end of the piece: direct branches after the last packet are only
 * reported up to the next piece's PSB (a continuous stream). */
void ptd_end_piece(struct pstate *s)
{
	if (s->pc->has_stop && s->stop_idx != NO_IDX)
		s->pc->nev = s->stop_idx;
	else
		s->pc->nev = s->confirm;
}

void ptd_pstate_init(struct pstate *s, struct wctx *w, struct piece *pc)
{
	memset(s, 0, sizeof(*s));
	s->d = w->d;
	s->w = w;
	s->pc = pc;
	s->pid = w->d->per_cpu ? -2 : pc->pid; /* per CPU: set_task picks it on the first sync */
	s->tid = w->d->per_cpu ? -2 : pc->tid;
	s->stop_idx = NO_IDX;
	s->evlim = w->d->evcap ? w->d->evcap : SIZE_MAX;
	s->prep = w->d->prep_emit && w->lcache;
	s->tk.d = w->d;
	ptd_piece_clock(w->d, pc, &s->tk.clk.st);
	s->tk.clk.p = &w->d->tparams;
	s->tk.clk.base = pc->b;
	s->tk.clk.bend = pc->be > pc->e ? pc->be : pc->e;
}
