// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder (ptdec_int.h): libipt's decoder driving the piece's state machine (piece.h). */
#include <errno.h>
#include <string.h>

#include "ptdec/piece.h"
#include "util/alloc.h"

/* The two libipt decoders behind one face. */
int ptd_dec_sync_forward(struct pstate *s)
{
	return s->bdec ? pt_blk_sync_forward(s->bdec) : pt_insn_sync_forward(s->dec);
}

int ptd_dec_sync_set(struct pstate *s, uint64_t off)
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

void ptd_dec_cbr(struct pstate *s, uint32_t *cbr)
{
	*cbr = 0;
	if (s->bdec)
		pt_blk_core_bus_ratio(s->bdec, cbr);
	else if (s->dec)
		pt_insn_core_bus_ratio(s->dec, cbr);
	else /* the fast walk: the ratio its token reader read */
		*cbr = ptd_tok_ipt_cbr(&s->tk);
}

void ptd_dec_set_image(struct pstate *s, struct pt_image *img)
{
	if (s->bdec)
		pt_blk_set_image(s->bdec, img);
	else if (s->dec)
		pt_insn_set_image(s->dec, img);
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
	int status = ptd_dec_sync_forward(s);

	if (status >= 0 && dec_sync_offset(s, &off) >= 0) {
		ptd_tok_sync(&s->tk, off);
		ptd_synced(s);
	}
	s->need_strt = 1;
	return status;
}

int ptd_new_decoders(struct pstate *s, const uint8_t *b, const uint8_t *e)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)b;
	cfg.end = (uint8_t *)e;
	if (s->d->use_blocks)
		s->bdec = pt_blk_alloc_decoder(&cfg);
	else
		s->dec = pt_insn_alloc_decoder(&cfg);
	if (ptd_tok_open(&s->tk, b, e) < 0 || (!s->dec && !s->bdec))
		return -ENOMEM;
	if (s->pid != -2) {
		struct pt_image *img = ptd_wimage(s->w, s->pid);

		if (img)
			ptd_dec_set_image(s, img);
	}
	return 0;
}

void ptd_free_decoders(struct pstate *s)
{
	pt_insn_free_decoder(s->dec);
	pt_blk_free_decoder(s->bdec);
	pt_pkt_free_decoder(s->tk.pk);
	s->dec = NULL;
	s->bdec = NULL;
	s->tk.pk = NULL;
}

/* Instructions walked without a packet before a piece gives up: no real code
 * runs this long on direct branches alone (perf stops after 100000 loops). */
#define NELOOP_INSNS (1u << 20)

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

/* libipt's decoder failed with status: the error as perf reports it (after the
 * branch to an unreadable address, when that is what failed). */
static void decode_error(struct pstate *s, int status)
{
	uint64_t ip = 0;

	if (pt_errcode(status) == pte_nomap && s->have_prev && s->prev.trace) {
		/* perf reports the branch to the unreadable address first */
		const struct cinsn *p = &s->prev;
		uint64_t t = ptd_take(s, p->cond ? TOK_TNT : TOK_TIP);

		s->have_prev = 0;
		if (s->tok_has_ip) {
			ptd_emit_branch(s, p->flags, p->ip, s->tok_ip, t);
			ip = s->tok_ip;
		}
		ptd_confirm_all(s);
		ptd_err_at_next_token(s);
	} else {
		ip = s->have_prev ? s->prev.ip : 0;
		s->have_prev = 0;
	}
	s->pc->nev = s->confirm;
	ptd_emit_error(s, map_err(status), ip);
	s->pc->end_clean = 0;
}

/* The libipt path: libipt's block (or instruction) decoder drives the walk. */
int ptd_libipt_piece(struct wctx *w, struct piece *pc)
{
	struct pstate s;
	struct cinsn one;
	const struct cinsn *v = NULL;
	struct pt_event ev;
	const uint8_t *cb = pc->b, *ce = pc->e; /* the bytes the decoders read */
	int status;

	ptd_pstate_init(&s, w, pc);
	if (ptd_new_decoders(&s, cb, ce) < 0) {
		ptd_free_decoders(&s);
		ptt_clock_fini(&s.tk.clk);
		return -ENOMEM;
	}
	status = resync(&s);
	s.implicit_ok = 1;
	while (status != -pte_eos && !s.err) {
		size_t n;
		uint64_t eos_ip;

		if (status < 0) {
			decode_error(&s, status);
			if (++s.errors_in_row > 100)
				break; /* no progress: give up the rest of this piece */
			if (s.rebuf) {
				cb = s.rebuf;
				ce = s.rebuf + s.reblen;
			}
			status = ptd_perf_resync(&s, cb, ce);
			s.implicit_ok = 0;
			continue;
		}
		pc->end_clean = 1;
		while (status & pts_event_pending) {
			status = dec_event(&s, &ev);
			if (status < 0)
				break;
			ptd_handle_event(&s, &ev);
		}
		if (status < 0)
			continue;
		status = next_insns(&s, &one, &v, &n, &eos_ip);
		ptd_walk_insns(&s, v, n);
		if (s.since_take > NELOOP_INSNS) {
			/* libipt follows direct branches for ever (a `jmp .`, or code
			 * reached after damage): perf gives up such a walk too */
			pc->nev = s.confirm;
			ptd_emit_error(&s, ERR_NELOOP, s.have_prev ? s.prev.ip : 0);
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
					ptd_resolve_prev(&s, eos_ip);
				s.stop_idx = pc->nev;
			}
			if (status == -pte_eos)
				break;
			continue;
		}
	}
	ptd_end_piece(&s);
	ptd_free_decoders(&s);
	ptt_clock_fini(&s.tk.clk);
	snap_free(s.rebuf);
	return s.err;
}
