// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder (ptdec_int.h): the fast walk, ptdec's own flow through a piece (piece.h). */
#include <errno.h>
#include <string.h>

#include "ptdec/piece.h"

/*
 * The fast walk: the same state machine (machine.c: ptd_process_insn,
 * ptd_handle_event, the tokens) driven by ptdec's own flow instead of libipt's
 * block decoder, for the pieces made only of what it knows: a piece that
 * starts with a PSB+ (with or without a FUP), TNT, TIP, TIP.PGE, a TIP.PGD
 * without an IP after a far branch (a syscall), a FUP and TIP.PGD or TIP (an
 * interrupt), the timing packets (TSC, MTC, CYC, TMA, CBR: the token reader
 * moves perf's clock, and hands it on after the piece, docs/ptdec.md),
 * MODE.exec of 64-bit code, PAD. After each instruction that
 * needs trace the next IP comes from the next token (a TNT bit: a
 * conditional's direction or a compressed return; a TIP: the target); the
 * instructions in between come from the run cache (insn.c). libipt's return
 * stack is mirrored (s->rets, piece.h). Anything else -- an error, an
 * overflow, a STOP, code that cannot be read, a call to the next
 * instruction -- returns 0 and the piece is decoded again by libipt's
 * decoder, which knows every case: the walk only has to be right for what it
 * takes ($SNAPTRACE_PTDEC_WALK=check compares the two on every piece).
 */

/* ptd_run_has (insn.c) with its memo looked at here first: the stop IP is
 * asked of nearly every run. */
static inline int run_has(const struct wctx *w, struct run *r, uint64_t ip)
{
	return r->asked && r->asked_ip == ip ? r->has : ptd_run_has(w, r, ip);
}

/* The direct branches v[br[0..nbr)] of a run whose rest holds the stop IP yet
 * to be reached: ptd_process_insn notes there the events before it, those of
 * the branches before it (stop_idx). */
static void branches_to_stop(struct pstate *s, const struct cinsn *v, const uint32_t *br,
			     uint32_t nbr)
{
	uint32_t stop = 1;

	while (v[stop].ip != s->pc->stop_ip)
		stop++;
	for (uint32_t k = 0; k < nbr; k++) {
		if (br[k] >= stop && s->stop_idx == NO_IDX)
			s->stop_idx = s->pc->nev;
		ptd_emit_branch(s, v[br[k]].flags, v[br[k]].ip, v[br[k] + 1].ip, s->stime);
	}
	if (s->stop_idx == NO_IDX)
		s->stop_idx = s->pc->nev;
}

/*
 * A run: what walk_insns does, in one step when nothing is watched for. Its
 * first instruction resolves the previous run's last one (taking its token);
 * then, unless a trace is yet to start, or the rest of the run holds the FUP
 * of a PSB+ that is the next token, its direct branches are reported at the
 * same time and its other instructions only counted; the stop IP yet to be
 * reached marks the events of the branches before it (stop_idx). The calls
 * push their return addresses.
 */
static void walk_run(struct pstate *s, struct run *r)
{
	struct piece *pc = s->pc;
	const struct tokr *t = &s->tk;
	const struct cinsn *v = &s->w->rinsns[r->first];
	const uint32_t *br = r->nbr ? &s->w->rbr[r->br] : NULL;

	for (uint32_t k = 0; k < r->nbr; k++)
		if (v[br[k]].cls == ptic_call)
			ptd_ret_push(&s->rets, v[br[k]].ip + v[br[k]].size);
	if (s->need_strt) {
		ptd_walk_insns(s, v, r->n);
		return;
	}
	ptd_tok_fill(&s->tk);
	if (!s->have_prev && t->have && t->kind != TOK_PSB && t->kind != TOK_CBR &&
	    !(pc->has_stop && s->stop_idx == NO_IDX && v[0].ip == pc->stop_ip)) {
		/* ptd_process_insn of the first, in short: nothing to resolve, no
		 * token to take before it, not the stop IP */
		pc->insns++;
		s->errors_in_row = 0;
		s->implicit_ok = 0;
		s->since_take++;
	} else {
		ptd_process_insn(s, &v[0]);
		ptd_tok_fill(&s->tk);
		if (t->have && t->kind == TOK_PSB && (!t->has_ip || run_has(s->w, r, t->kip))) {
			ptd_walk_insns(s, v + 1, r->n - 1);
			return;
		}
	}
	if (pc->has_stop && s->stop_idx == NO_IDX && run_has(s->w, r, pc->stop_ip))
		branches_to_stop(s, v, br, r->nbr);
	else
		for (uint32_t k = 0; k < r->nbr; k++)
			ptd_emit_branch(s, v[br[k]].flags, v[br[k]].ip, v[br[k] + 1].ip, s->stime);
	pc->insns += r->n - 1;
	s->since_take += r->n - 1;
	s->prev = v[r->n - 1];
	s->have_prev = 1;
}

/* Whether the peeked PSB+ is followed by nothing but CBR tokens: libipt's
 * decoder then never takes it (no event after it), so its new ratio is never
 * reported; the walk leaves such a piece to libipt (found by fuzzing). */
static int psb_is_last(const struct tokr *t)
{
	struct tokr c = *t;

	do {
		c.have = 0;
		ptd_tok_fill(&c);
	} while (c.have && c.kind == TOK_CBR);
	if (c.clk.la != t->clk.la) /* the copy's own lookahead decoder */
		ptt_clock_fini(&c.clk);
	return !c.have;
}

/* Peeks the next token past PSB+ markers (taken as ptd_take() would skip them).
 * 1: a token, 0: the end of the piece, -1: a packet the walk leaves to libipt.
 * A PSB+ with a FUP is passed where the walk reaches its IP (pass_psb): one
 * still there is off the path the trace took, which libipt reports. */
static inline int next_token(struct pstate *s)
{
	for (;;) {
		ptd_tok_fill(&s->tk);
		if (s->tk.odd)
			return -1;
		if (!s->tk.have)
			return 0;
		if (s->tk.kind == TOK_CBR) { /* a sample of its own (as ptd_take) */
			s->tk.have = 0;
			ptd_cbr_change(s, s->tk.kcbr, s->tk.ktime, 1);
			continue;
		}
		if (s->tk.kind != TOK_PSB)
			return 1;
		if (s->tk.has_ip || psb_is_last(&s->tk))
			return -1;
		ptd_take(s, TOK_PSB);
	}
}

/* The next IP after the run's last instruction (which needs trace), from the
 * next token. 1: *ip, 0: tracing stopped (a syscall), -1: left to libipt. */
static int walk_branch(struct pstate *s, const struct cinsn *in, uint64_t *ip)
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
			return t->ktaken && ptd_ret_pop(&s->rets, ip) == 0 ? 1 : -1;
		if (t->kind != TOK_TIP || !t->has_ip)
			return -1;
		*ip = t->kip;
		return 1;
	case ptic_call:
	case ptic_jump:
		if (t->kind != TOK_TIP || !t->has_ip)
			return -1;
		if (in->cls == ptic_call)
			ptd_ret_push(&s->rets, in->ip + in->size);
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
		ptd_handle_event(s, &ev);
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
	ptd_tok_fill(&c);
	if (c.clk.la != t->clk.la) /* the copy's own lookahead decoder */
		ptt_clock_fini(&c.clk);
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
static int walk_async(struct pstate *s, struct run *r, uint64_t *ip)
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
			ptd_ret_push(&s->rets, v[i].ip + v[i].size);
	ptd_walk_insns(s, v, k);
	memset(&ev, 0, sizeof(ev));
	if (kind == TOK_PGD) {
		ev.type = ptev_async_disabled;
		ev.variant.async_disabled.at = at;
	} else {
		ev.type = ptev_async_branch;
		ev.variant.async_branch.from = at;
		ev.variant.async_branch.to = *ip = to;
	}
	ptd_handle_event(s, &ev);
	return kind == TOK_TIP;
}

/* 1: the piece is decoded, 0: left to libipt, <0: out of memory. */
int ptd_walk_piece(struct wctx *w, struct piece *pc)
{
	struct pstate s;
	struct pt_event ev;
	uint64_t ip;
	int enabled, got = 0, done = 0;

	ptd_pstate_init(&s, w, pc);
	s.walk_rets = 1;
	if (ptd_tok_open(&s.tk, pc->b, pc->e) < 0) {
		ptt_clock_fini(&s.tk.clk);
		return -ENOMEM;
	}
	ptd_tok_sync(&s.tk, 0);
	ptd_tok_fill(&s.tk);
	/* A PSB+ at the start that says the code is 64-bit (libipt decodes
	 * differently while the mode is unknown). */
	if (!s.tk.have || s.tk.kind != TOK_PSB || s.tk.psb_off != 0 || s.tk.odd || !s.tk.mode64)
		goto out;
	ptd_synced(&s);
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
			ptd_handle_event(&s, &ev);
			enabled = 1;
			continue;
		}
		if (!(r = ptd_run_find(w, s.pid, ip)) || r->callnext)
			goto out;
		ptd_tok_fill(&s.tk);
		if (s.tk.have && s.tk.kind == TOK_FUP) { /* an interrupt in this run */
			if ((got = walk_async(&s, r, &ip)) < 0)
				goto out;
			enabled = got;
			continue;
		}
		walk_run(&s, r);
		last = &w->rinsns[r->first + r->n - 1];
		/* At the end of the piece the last instruction waits for a packet. */
		if ((got = next_token(&s)) <= 0 || (got = walk_branch(&s, last, &ip)) < 0)
			break;
		enabled = got;
		/* The run's last instruction went to ip (its token is taken): the next
		 * token may be an interrupt's FUP in the next run. */
		if (got)
			ptd_resolve_prev(&s, ip);
	}
	if (got < 0 || s.err)
		goto out;
	ptd_end_piece(&s);
	done = 1;
	/* every packet was read: the clock after the piece is the next one's start
	 * (the scan keeps perf's reset flag from the start of the stream) */
	s.tk.clk.st.reset |= s.tk.reset_any;
	ptd_piece_clock_end(w->d, pc, &s.tk.clk.st);
out:
	pt_pkt_free_decoder(s.tk.pk);
	ptt_clock_fini(&s.tk.clk);
	return s.err ? s.err : done;
}
