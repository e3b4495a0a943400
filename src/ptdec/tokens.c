// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder (ptdec_int.h): the token reader, perf's view of the packets (piece.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ptdec/piece.h"

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

/* The 8 bytes at p as a little-endian number. */
static inline uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/*
 * The next packet, at t->pos: the common ones (PAD, short TNT, TIP, TIP.PGE,
 * TIP.PGD, FUP, TSC, PSB, PSBEND) decoded here as libipt's packet decoder
 * would, MTC, CYC, CBR and TMA by the scan's reader (timing.c, held to libipt
 * by the unit tests), the others by libipt's. Returns 0 and *p, or libipt's error.
 */
static int tok_packet(struct tokr *t, struct pt_packet *p)
{
	const uint8_t *b = t->buf + t->pos;
	size_t left = t->len - t->pos;
	uint64_t v = 0;
	int n, st;

	if (!left)
		return -pte_eos;
	if ((b[0] & 3) == 3 && (n = ptt_walk_packet(b, left, p)) > 0) {
		p->size = (uint8_t)n; /* CYC: most packets of a cycle-accurate trace */
	} else if (b[0] == 0x00) {
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
		if (left >= 9) /* the payload's n bytes in one read */
			v = n ? le64(b + 1) & (~0ULL >> (64 - 8 * n)) : 0;
		else
			for (int i = n; i >= 1; i--)
				v = v << 8 | b[i];
		p->type = (b[0] & 0x1f) == 0x0d	  ? ppt_tip
			  : (b[0] & 0x1f) == 0x11 ? ppt_tip_pge
			  : (b[0] & 0x1f) == 0x01 ? ppt_tip_pgd
						  : ppt_fup;
		p->size = (uint8_t)(n + 1);
		p->payload.ip.ipc = (enum pt_ip_compression)(b[0] >> 5);
		p->payload.ip.ip = v;
	} else if ((n = ptt_walk_packet(b, left, p)) > 0 &&
		   (p->type == ppt_mtc || p->type == ppt_cyc || p->type == ppt_cbr ||
		    p->type == ppt_tma)) { /* the clock's packets, as the scan reads them */
		p->size = (uint8_t)n;
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
			return; /* made up by ptd_perf_resync: perf never saw it */
		off = end;
	}
	ptt_packet(&t->clk, pkt, off + t->oadj);
	if (t->clk.st.reset) {
		t->reset_any = 1;
		t->clk.st.reset = 0;
		t->tsc_seen = 1;
	}
	t->time_stale = 1; /* converted to perf time at the next token */
}

/* A TIP, TIP.PGE, TIP.PGD or FUP: its token kind and IP (*ok: it has one), or
 * TOK_NONE for the FUP of a PSB+ (its IP goes with the PSBEND's token). */
static int tok_ip_packet(struct tokr *t, const struct pt_packet *pkt, uint64_t *ip, int *ok)
{
	*ip = ip_update(t->last_ip, &pkt->payload.ip, ok);
	if (*ok)
		t->last_ip = *ip;
	if (pkt->type == ppt_fup && t->in_psb) {
		t->psb_has_fup = *ok;
		t->psb_fup = *ip;
		return TOK_NONE;
	}
	return pkt->type == ppt_tip	  ? TOK_TIP
	       : pkt->type == ppt_tip_pge ? TOK_PGE
	       : pkt->type == ppt_tip_pgd ? TOK_PGD
					  : TOK_FUP;
}

/* A timing packet ending at off: perf's clock moves. TOK_CBR when it is a new
 * core:bus ratio outside PSB+ (a sample of its own for perf), else TOK_NONE. */
static int tok_timing_packet(struct tokr *t, const struct pt_packet *pkt, uint64_t off)
{
	if (pkt->type == ppt_tsc)
		t->tsc = pkt->payload.tsc.tsc;
	else if (pkt->type == ppt_stop)
		t->odd = 1; /* the fast walk leaves a STOP to libipt */
	else if (pkt->type == ppt_cbr && off > t->skip_until)
		t->ipt_cbr = pkt->payload.cbr.ratio;
	tok_time(t, pkt, off);
	if (pkt->type != ppt_cbr || t->in_psb || t->clk.st.cbr == t->cbr_seen ||
	    off <= t->skip_until)
		return TOK_NONE;
	return TOK_CBR;
}

/* The token of kind k just read (ip when ok), with perf's clock at it. */
static void tok_found(struct tokr *t, int k, uint64_t ip, int ok)
{
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
	if (k == TOK_PSB && t->clk.st.tsc_timestamp && !t->d->timeless && t->kend > t->skip_until) {
		t->ktime = tsc2perf(t->d, t->clk.st.tsc_timestamp);
		t->kts = t->clk.st.tsc_timestamp;
	}
}

/* perf's clock took a CYC (or several, added to cycle_cnt already): the time
 * they give, and what the reader notes of a moved clock (tok_time). */
static inline __attribute__((always_inline)) void tok_cyc_time(struct tokr *t)
{
	ptt_cyc(&t->clk.st, 0);
	if (t->clk.st.reset) {
		t->reset_any = 1;
		t->clk.st.reset = 0;
		t->tsc_seen = 1;
	}
}

/*
 * The packets most of a trace is made of, outside a PSB+ and past a made-up
 * prefix, read straight from the bytes with what ptd_tok_fill's general path
 * does for them (docs/ptdec.md, "perf's clock"): CYC, an MTC while perf has no
 * TMA (it moves nothing but ends a run of CYCs), TSC, PAD and TNT-8. A run of
 * CYCs is added up and its time taken once, before anything that reads the
 * clock: perf takes the time of every one, but each is the larger of the
 * time before and a non-decreasing function of the cycle count (ptt_cyc), so
 * the last one decides. Returns 1 with a TNT token, 0 at a packet for the
 * general path (or the end).
 *
 * With scan set it is the clock's scan (ptd_tok_scan): no tokens, so a TNT-8
 * and the TIP family only end a run of CYCs for perf's "a CYC came just
 * before" (they read no time), and are read on. The compiler makes two loops
 * of it (always inline, scan a constant).
 */
static inline __attribute__((always_inline)) int quick_loop(struct tokr *t, const int scan)
{
	const uint8_t *b = t->buf;
	size_t pos = t->pos, len = t->len;
	struct ptt *c = &t->clk.st;
	/* c's cycle count, last_cyc, have_tma and t's time_stale, kept here
	 * (stores through t or c could alias b); cyc: CYCs added to cnt whose
	 * time is not taken yet (without, cnt is c->cycle_cnt) */
	uint64_t cnt = c->cycle_cnt;
	uint8_t last_cyc = c->last_cyc, tma = c->have_tma, stale = 0;
	int cyc = 0;

	while (pos < len) {
		uint8_t b0 = b[pos];

		if ((b0 & 3) == 3) { /* CYC: 5 bits, then 7 a byte while bit 0 says more */
			uint64_t v = b0 >> 3;
			size_t n = 1;

			if (b0 & 4) {
				for (int shift = 5;; shift += 7) {
					if (pos + n == len || shift > 57)
						goto out; /* cut short, or libipt's bad packet */
					v |= (uint64_t)(b[pos + n] >> 1) << shift;
					if (!(b[pos + n++] & 1))
						break;
				}
			}
			if (cyc && cnt + v < cnt) { /* the count wraps: not monotonic */
				c->cycle_cnt = cnt;
				tok_cyc_time(t);
			}
			cnt += v;
			last_cyc = stale = 1;
			cyc = 1;
			pos += n;
		} else if (!(b0 & 1)) {
			unsigned bits = b0 >> 1, size;

			if (b0 == 0x00) { /* PAD */
				pos++;
				continue;
			}
			if (b0 == 0x02)
				break; /* an extended opcode */
			if (scan) {    /* TNT-8 */
				last_cyc = 0;
				pos++;
				continue;
			}
			/* TNT-8: payload bits, then a stop bit */
			size = 31 - (unsigned)__builtin_clz(bits);
			if (cyc) {
				c->cycle_cnt = cnt;
				tok_cyc_time(t);
			}
			c->last_cyc = 0;
			t->time_stale |= stale;
			t->pos = pos + 1;
			t->tnt_bits = bits & ~(1u << size);
			t->tnt_left = (int)size - 1;
			t->ktaken = (t->tnt_bits >> t->tnt_left) & 1;
			tok_found(t, TOK_TNT, 0, 0);
			return 1;
		} else if (b0 == 0x59) { /* MTCs without TMA (ptt_mtc), often several */
			if (tma)
				break;
			if (c->reset) { /* the piece's start clock had moved (tok_time) */
				t->reset_any = 1;
				c->reset = 0;
				t->tsc_seen = 1;
			}
			do {
				if (len - pos < 2)
					goto out;
				pos += 2;
				last_cyc = 0;
				stale = 1;
			} while (pos < len && b[pos] == 0x59);
		} else if (b0 == 0x19 && len - pos >= 8) {
			uint64_t v = le64(b + pos) >> 8;

			if (cyc) {
				c->cycle_cnt = cnt;
				tok_cyc_time(t);
			}
			cyc = 0;
			t->tsc = v;
			c->last_cyc = last_cyc;
			ptt_tsc_quick(c, t->clk.p, v);
			last_cyc = 0;
			tma = c->have_tma;
			cnt = c->cycle_cnt;
			if (c->reset) {
				t->reset_any = 1;
				c->reset = 0;
				t->tsc_seen = 1;
			}
			stale = 1;
			pos += 8;
		} else if (scan && ((b0 & 0x1f) == 0x0d || (b0 & 0x1f) == 0x11 ||
				    (b0 & 0x1f) == 0x01 || (b0 & 0x1f) == 0x1d)) {
			/* TIP, TIP.PGE, TIP.PGD, FUP (reserved or cut: the general path's) */
			int n = ip_bytes[b0 >> 5];

			if (n < 0 || len - pos < 1 + (size_t)n)
				break;
			last_cyc = 0;
			pos += 1 + (size_t)n;
		} else {
			break;
		}
	}
out:
	if (cyc) {
		c->cycle_cnt = cnt;
		tok_cyc_time(t);
	}
	c->last_cyc = last_cyc;
	t->time_stale |= stale;
	t->pos = pos;
	return 0;
}

/* The token reader's quick loop. */
static int tok_quick(struct tokr *t)
{
	return quick_loop(t, 0);
}

size_t ptd_tok_scan(struct ptt_clock *c, const uint8_t *b, size_t at, size_t len)
{
	struct tokr t;
	struct pt_packet pkt;
	int n;

	memset(&t, 0, sizeof(t));
	t.buf = b;
	t.len = len;
	t.pos = at;
	t.clk = *c;
	for (;;) {
		quick_loop(&t, 1);
		if (t.pos >= len || !(n = ptt_walk_packet(b + t.pos, len - t.pos, &pkt)))
			break;
		t.pos += (size_t)n;
		ptt_packet(&t.clk, &pkt, t.pos);
	}
	t.clk.st.reset |= t.reset_any;
	*c = t.clk;
	return t.pos;
}

/* One packet of the general path (ptd_tok_read): 1 with a token found, 0
 * to read on, -1 at the end (or a packet that cannot be read). Out of line:
 * the quick loop keeps its registers. */
static __attribute__((noinline)) int tok_general(struct tokr *t)
{
	struct pt_packet pkt;
	uint64_t ip = 0, at = t->pos, off;
	int k = TOK_NONE, ok = 0, st = tok_packet(t, &pkt);

	if (st < 0) { /* a packet cut by the end is no clean end */
		t->odd |= st != -pte_eos || t->pos < t->len;
		return -1;
	}
	off = t->pos; /* just after the packet */
	/* PSB+ holds only timing packets, MODE and FUP (libipt's header);
	 * anything else there (an unterminated PSB+, found by differential
	 * fuzzing) is libipt's */
	if (t->in_psb && !ptt_is_timing(pkt.type) && pkt.type != ppt_mode && pkt.type != ppt_fup &&
	    pkt.type != ppt_psbend)
		t->odd = 1;
	if (t->clk.st.last_cyc && !ptt_is_timing(pkt.type) &&
	    (!t->skip_until || off > t->skip_until))
		t->clk.st.last_cyc = 0; /* perf asks whether a CYC came just before */
	switch (pkt.type) {
	case ppt_tsc:
	case ppt_mtc:
	case ppt_cyc:
	case ppt_tma:
	case ppt_stop:
	case ppt_cbr:
		if ((k = tok_timing_packet(t, &pkt, off)) == TOK_NONE)
			return 0;
		break;
	case ppt_psb:
		t->psb_off = at;
		t->in_psb = 1;
		t->psb_has_fup = 0;
		t->last_ip = 0;
		return 0;
	case ppt_psbend:
		t->in_psb = 0;
		k = TOK_PSB;
		ok = t->psb_has_fup;
		ip = t->psb_fup;
		break;
	case ppt_tnt_8:
	case ppt_tnt_64:
		if (!pkt.payload.tnt.bit_size)
			return 0;
		t->tnt_bits = pkt.payload.tnt.payload;
		t->tnt_left = pkt.payload.tnt.bit_size - 1;
		t->ktaken = (t->tnt_bits >> t->tnt_left) & 1;
		k = TOK_TNT;
		break;
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
	case ppt_fup:
		if ((k = tok_ip_packet(t, &pkt, &ip, &ok)) == TOK_NONE)
			return 0;
		break;
	case ppt_ovf:
		k = TOK_OVF;
		break;
	case ppt_pad:
		return 0;
	case ppt_mode: /* 64-bit code changes nothing for the walk */
		t->odd |= pkt.payload.mode.leaf != pt_mol_exec || !pkt.payload.mode.bits.exec.csl ||
			  pkt.payload.mode.bits.exec.csd;
		t->mode64 = 1;
		return 0;
	default:
		t->odd = 1;
		return 0;
	}
	tok_found(t, k, ip, ok);
	return 1;
}

void ptd_tok_read(struct tokr *t)
{
	if (t->have || !t->pk)
		return;
	if (t->tnt_left) {
		ptd_tok_next_bit(t);
		return;
	}
	for (;;) {
		if (t->pos >= t->skip_until && !t->in_psb && tok_quick(t))
			return;
		if (tok_general(t))
			return;
	}
}

uint32_t ptd_tok_ipt_cbr(const struct tokr *t)
{
	struct tokr c = *t;
	uint32_t cbr = t->ipt_cbr;

	if (c.have && c.kind != TOK_CBR)
		return cbr;
	for (;;) {
		ptd_tok_fill(&c);
		if (!c.have || c.kind != TOK_CBR)
			break;
		cbr = c.ipt_cbr;
		c.have = 0;
	}
	if (c.clk.la != t->clk.la) /* the copy's own lookahead decoder */
		ptt_clock_fini(&c.clk);
	return cbr;
}

/* Repositions at the PSB at off (after libipt synchronised there). */
void ptd_tok_sync(struct tokr *t, uint64_t off)
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
int ptd_tok_open(struct tokr *t, const uint8_t *b, const uint8_t *e)
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

static const char *const tok_names[] = {
	[TOK_NONE] = "none",   [TOK_TNT] = "TNT",     [TOK_TIP] = "TIP",
	[TOK_PGE] = "TIP.PGE", [TOK_PGD] = "TIP.PGD", [TOK_FUP] = "FUP",
	[TOK_OVF] = "OVF",     [TOK_PSB] = "PSB+",    [TOK_CBR] = "CBR",
};

const char *ptd_tok_desc(const struct tokr *t, char *buf, size_t len)
{
	const char *name = t->kind >= 0 && t->kind <= TOK_CBR ? tok_names[t->kind] : "?";
	int n;

	if (!t->have)
		n = snprintf(buf, len, "no token");
	else if (t->kind == TOK_TNT)
		n = snprintf(buf, len, "TNT %s", t->ktaken ? "taken" : "not taken");
	else if (t->kind == TOK_CBR)
		n = snprintf(buf, len, "CBR %u", t->kcbr);
	else if (t->has_ip)
		n = snprintf(buf, len, "%s%s 0x%llx", name, t->kind == TOK_PSB ? " FUP" : "",
			     (unsigned long long)t->kip);
	else
		n = snprintf(buf, len, "%s", name);
	if (n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " t=%llu tsc=%llu end=%llu%s%s",
			 (unsigned long long)t->ktime, (unsigned long long)t->kts,
			 (unsigned long long)(t->kend + t->oadj), t->ktsc ? " after-tsc" : "",
			 t->kcbrchg ? " new-cbr" : "");
	return buf;
}
