// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder (ptdec_int.h): perf's recovery from a decode error (piece.h). */
#include <string.h>

#include "ptdec/piece.h"
#include "util/alloc.h"

/* Resynchronises silently at the PSB+ just read (never the same one twice). */
static int resync_at_psb(struct pstate *s, const uint8_t *b, const uint8_t *e)
{
	struct tokr *t = &s->tk;
	uint64_t off = t->psb_off;
	int status;

	s->resync_psb_set = 1; /* never this PSB again: progress */
	s->resync_psb = off;
	s->resync_buf = b;
	ptd_free_decoders(s);
	if (ptd_new_decoders(s, b, e) < 0)
		return -pte_nomem;
	s->need_strt = 0;
	status = ptd_dec_sync_set(s, off);
	if (status < 0)
		return -pte_eos; /* a damaged PSB+: nothing more to decode here */
	ptd_tok_sync(t, off);
	return status;
}

/* Resynchronises at the IP of the token just read: the rest of the piece from a
 * copy (owned by s->rebuf) that starts with a made-up PSB+ and TIP.PGE to it. */
static int resync_at_ip(struct pstate *s, const uint8_t *b, const uint8_t *e)
{
	struct tokr *t = &s->tk;
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
	ptd_free_decoders(s);
	snap_free(s->rebuf);
	s->rebuf = nb;
	s->reblen = off + rest;
	s->prefix = off;
	if (ptd_new_decoders(s, nb, nb + off + rest) < 0)
		return -pte_nomem;
	s->tk.have = 0;
	s->tk.tnt_left = 0;
	status = ptd_dec_sync_forward(s);
	ptd_tok_sync(&s->tk, 0);
	s->need_strt = 0;
	s->since_take = 0;
	return status;
}

/*
 * perf's recovery from an error: it drops the packet it was walking to, then
 * resynchronises at the next packet that carries an IP ("tr strt" there), or
 * silently at a PSB+. libipt only synchronises at PSBs, so for an IP packet
 * the rest of the piece is decoded from a copy that starts with a made-up
 * PSB+ (the last TSC) and a TIP.PGE to that IP. Returns the new status.
 */
int ptd_perf_resync(struct pstate *s, const uint8_t *b, const uint8_t *e)
{
	struct tokr *t = &s->tk;
	int eaten = 0;

	t->tnt_left = 0; /* the rest of a TNT packet goes with it */
	for (;;) {
		ptd_tok_fill(t);
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
				ptd_cbr_change(s, t->kcbr, t->time, 2);
			t->kcbrchg = 0;
			break;
		}
		if (t->kind == TOK_PSB &&
		    !(s->resync_psb_set && t->psb_off == s->resync_psb && b == s->resync_buf)) {
			return resync_at_psb(s, b, e);
		}
		t->have = 0;
		if (t->ktsc)
			t->tsc_seen = 1;  /* perf's timestamp_insn_cnt was reset on the way */
		if (t->kind == TOK_CBR) { /* no walk: perf reports it with its next sample */
			ptd_cbr_change(s, t->kcbr, t->ktime, 2);
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
	return resync_at_ip(s, b, e);
}
