// SPDX-License-Identifier: GPL-2.0
/* The token reader of the in-process PT decoder (src/ptdec/tokens.c,
 * docs/ptdec.md "perf's clock"): on random streams of the packets it reads
 * straight from the bytes (CYC, MTC, TSC, PAD, TNT-8) mixed with those it
 * leaves to its general path (TMA, CBR, TIP), its tokens and its clock are
 * those of perf's clock fed one packet at a time (ptt_packet, timing.c); so
 * is the clock of the scan's reader (ptd_tok_scan: the same quick loop, which
 * reads on through TNT-8 and the TIP family). */
#include <intel-pt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pt_encode.h"
#include "ptdec/piece.h"
#include "snap_test.h"

static struct snap_ptdec dec; /* timeless: the tokens' times in TSC ticks (kts) only */

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return rnd_state >> 33; /* 31 bits */
}

/* A PSB+ (TSC, TMA, CBR, FUP; bare: FUP only), then random packets: max in
 * all. huge: one CYC in 8 counts up to 2^60 cycles (16 of them wrap perf's
 * 64-bit count). */
static size_t make_stream(struct pt_packet *pk, size_t max, int huge, int bare)
{
	uint64_t tsc = 0x100000 + rnd();
	size_t n = 0;

	memset(pk, 0, max * sizeof(*pk));
	pk[n++].type = ppt_psb;
	pk[n].type = ppt_mode;
	pk[n].payload.mode.leaf = pt_mol_exec;
	pk[n++].payload.mode.bits.exec.csl = 1;
	if (!bare) {
		pk[n].type = ppt_tsc;
		pk[n++].payload.tsc.tsc = tsc;
		pk[n].type = ppt_tma;
		pk[n].payload.tma.ctc = (uint16_t)rnd();
		pk[n++].payload.tma.fc = (uint16_t)(rnd() & 0x1ff);
		pk[n].type = ppt_cbr;
		pk[n++].payload.cbr.ratio = 24;
	}
	pk[n].type = ppt_fup;
	pk[n].payload.ip.ipc = pt_ipc_sext_48;
	pk[n++].payload.ip.ip = 0x401000;
	pk[n++].type = ppt_psbend;
	while (n < max) {
		struct pt_packet *p = &pk[n++];
		unsigned r = (unsigned)(rnd() % 100);

		if (r < 35) {
			p->type = ppt_cyc;
			p->payload.cyc.value =
				huge && rnd() % 8 == 0 ? (rnd() << 29 | rnd()) : rnd() % 300;
		} else if (r < 60) {
			p->type = ppt_mtc;
			p->payload.mtc.ctc = (uint8_t)rnd();
		} else if (r < 64) {
			p->type = ppt_tsc;
			tsc += rnd() % 5000;
			p->payload.tsc.tsc = tsc & ((1ULL << 56) - 1);
		} else if (r < 67) {
			p->type = ppt_tma;
			p->payload.tma.ctc = (uint16_t)rnd();
			p->payload.tma.fc = (uint16_t)(rnd() & 0x1ff);
		} else if (r < 70) {
			p->type = ppt_pad;
		} else if (r < 72) {
			p->type = ppt_cbr;
			p->payload.cbr.ratio = (uint8_t)(20 + rnd() % 3);
		} else if (r < 92) {
			p->type = ppt_tnt_8;
			p->payload.tnt.bit_size = (uint8_t)(1 + rnd() % 6);
			p->payload.tnt.payload = rnd() & ((1u << p->payload.tnt.bit_size) - 1);
		} else {
			p->type = ppt_tip;
			p->payload.ip.ipc = pt_ipc_update_16;
			p->payload.ip.ip = rnd() & 0xffff;
		}
	}
	return n;
}

struct tok {
	int kind, ktsc;
	uint64_t kts, kip;
};

#define MAXTOK 4096

/* The clock a piece starts with says it moved before (as the previous piece
 * or the scan hands it on): the first timing packet read reports it. */
static int start_moved;

/* The reference clock moved (ptt_packet set reset), or start_moved. */
static int ref_moved;

/* A clock with no history over buf[0..len), as a piece of a TSC trace starts. */
static void clock_init(struct ptt_clock *c, const uint8_t *buf, size_t len)
{
	memset(c, 0, sizeof(*c));
	ptt_init_fresh(&c->st);
	c->st.reset = (uint8_t)start_moved;
	c->p = &dec.tparams;
	c->base = buf;
	c->bend = buf + len;
}

/* The token reader over buf[0..len): its tokens into v (their count), its
 * clock after the last into *end; *odd: it met a packet it leaves to libipt. */
static size_t reader_tokens(const uint8_t *buf, size_t len, struct tok *v, struct ptt *end,
			    int *odd)
{
	struct tokr t;
	size_t n = 0;

	memset(&t, 0, sizeof(t));
	dec.timeless = 1;
	t.d = &dec;
	clock_init(&t.clk, buf, len);
	CHECK_INT_EQ(0, ptd_tok_open(&t, buf, buf + len));
	ptd_tok_sync(&t, 0);
	for (;;) {
		ptd_tok_fill(&t);
		if (!t.have || n == MAXTOK)
			break;
		v[n].kind = t.kind;
		v[n].kts = t.kts;
		v[n].ktsc = t.ktsc;
		v[n++].kip = t.has_ip ? t.kip : 0;
		t.have = 0;
	}
	*end = t.clk.st;
	*odd = t.odd;
	pt_pkt_free_decoder(t.pk);
	ptt_clock_fini(&t.clk);
	return n;
}

/* The clock's scan over buf[0..len) (ptd_tok_scan): its clock after the last
 * packet into *end; returns where its reader stopped. */
static size_t scan_clock(const uint8_t *buf, size_t len, struct ptt *end)
{
	struct ptt_clock c;
	size_t at;

	clock_init(&c, buf, len);
	at = ptd_tok_scan(&c, buf, 0, len);
	*end = c.st;
	ptt_clock_fini(&c);
	return at;
}

/* The same read packet by packet with libipt's packet decoder, every timing
 * packet through ptt_packet: perf's decoder as docs/ptdec.md describes it. */
static size_t reference_tokens(const uint8_t *buf, size_t len, struct tok *v, struct ptt *end)
{
	struct pt_config cfg;
	struct pt_packet_decoder *pk;
	struct ptt_clock c;
	struct pt_packet pkt;
	uint64_t off = 0, last_ip = 0, psb_fup = 0;
	uint32_t cbr_seen = 0;
	int in_psb = 0, tsc_seen = 0;
	size_t n = 0;

	clock_init(&c, buf, len);
	ref_moved = start_moved;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	pk = pt_pkt_alloc_decoder(&cfg);
	CHECK(pk != NULL);
	if (!pk)
		return 0;
	CHECK(pt_pkt_sync_set(pk, 0) >= 0);
	while (n + 8 < MAXTOK && pt_pkt_next(pk, &pkt, sizeof(pkt)) >= 0) {
		int kind = TOK_NONE, bits = 1;
		uint64_t ip = 0;

		pt_pkt_get_offset(pk, &off);
		if (c.st.last_cyc && !ptt_is_timing(pkt.type))
			c.st.last_cyc = 0;
		switch (pkt.type) {
		case ppt_psb:
			in_psb = 1;
			psb_fup = 0;
			break;
		case ppt_psbend:
			in_psb = 0;
			kind = TOK_PSB;
			ip = psb_fup;
			break;
		case ppt_tnt_8:
			kind = TOK_TNT;
			bits = pkt.payload.tnt.bit_size;
			break;
		case ppt_tip:
			last_ip = (last_ip & ~0xffffULL) | pkt.payload.ip.ip;
			kind = TOK_TIP;
			ip = last_ip;
			break;
		case ppt_fup: /* in PSB+ (make_stream's one FUP) */
			psb_fup = last_ip = pkt.payload.ip.ip;
			break;
		default: /* PAD is a timing packet to ptt_is_timing, not to tok_time */
			if (!ptt_is_timing(pkt.type) || pkt.type == ppt_pad)
				break;
			ptt_packet(&c, &pkt, off);
			if (c.st.reset) {
				c.st.reset = 0;
				tsc_seen = 1;
				ref_moved = 1;
			}
			if (pkt.type == ppt_cbr && !in_psb && c.st.cbr != cbr_seen)
				kind = TOK_CBR;
			break;
		}
		if (kind == TOK_NONE)
			continue;
		for (int i = 0; i < bits; i++) {
			v[n].kind = kind;
			v[n].kts = c.st.timestamp;
			v[n].ktsc = i ? 0 : tsc_seen;
			v[n++].kip = ip;
		}
		tsc_seen = 0;
		cbr_seen = c.st.cbr;
	}
	*end = c.st;
	end->reset = (uint8_t)ref_moved;
	pt_pkt_free_decoder(pk);
	ptt_clock_fini(&c);
	return n;
}

/* The clock fields perf's decoder keeps. */
static void check_same_clock(const struct ptt *a, const struct ptt *b)
{
	CHECK_U64_EQ(a->timestamp, b->timestamp);
	CHECK_U64_EQ(a->tsc_timestamp, b->tsc_timestamp);
	CHECK_U64_EQ(a->ctc_timestamp, b->ctc_timestamp);
	CHECK_U64_EQ(a->ctc_delta, b->ctc_delta);
	CHECK_U64_EQ(a->cycle_cnt, b->cycle_cnt);
	CHECK_U64_EQ(a->cyc_ref_timestamp, b->cyc_ref_timestamp);
	CHECK(!memcmp(&a->calc_cyc_to_tsc, &b->calc_cyc_to_tsc, sizeof(double)));
	CHECK_INT_EQ((int)a->last_mtc, (int)b->last_mtc);
	CHECK_INT_EQ((int)a->cbr, (int)b->cbr);
	CHECK_INT_EQ(a->have_tma, b->have_tma);
	CHECK_INT_EQ(a->have_calc, b->have_calc);
	CHECK_INT_EQ(a->last_cyc, b->last_cyc);
}

/* Compares the two readers on one stream; returns the tokens compared. */
static size_t compare_on(const uint8_t *buf, size_t len)
{
	static struct tok got[MAXTOK], want[MAXTOK];
	struct ptt gend, wend, send;
	int odd = 0;
	size_t ngot, nwant;

	memset(&wend, 0, sizeof(wend));
	ngot = reader_tokens(buf, len, got, &gend, &odd);
	nwant = reference_tokens(buf, len, want, &wend);

	CHECK(!odd);
	CHECK_U64_EQ(nwant, ngot);
	for (size_t i = 0; i < ngot && i < nwant; i++) {
		CHECK_INT_EQ(want[i].kind, got[i].kind);
		CHECK_U64_EQ(want[i].kts, got[i].kts);
		CHECK_INT_EQ(want[i].ktsc, got[i].ktsc);
		CHECK_U64_EQ(want[i].kip, got[i].kip);
		if (want[i].kts != got[i].kts) {
			fprintf(stderr, "first differing token: %zu of %zu\n", i, nwant);
			break;
		}
	}
	check_same_clock(&wend, &gend);
	/* the scan: the same clock, and perf's "the clock moved" flag kept */
	CHECK_U64_EQ(len, scan_clock(buf, len, &send));
	check_same_clock(&wend, &send);
	CHECK_INT_EQ(wend.reset, send.reset);
	return ngot;
}

/* Random streams with an MTC period of 8 CTC ticks and with none, the CYC
 * counts small (the clock from the CBR, then from the MTCs' ticks per cycle)
 * or now and then huge (the time saturates, the count wraps). */
static void tokens_and_clock_are_perfs_packet_by_packet(void)
{
	static struct pt_packet pk[1200];
	static uint8_t buf[1200 * 8];
	size_t tokens = 0;

	for (unsigned seed = 1; seed <= 40; seed++) {
		size_t n, len;

		rnd_state = seed;
		ptt_params_init(&dec.tparams, seed % 2 ? 3ULL << 14 : 0,
				seed % 2 ? 0xfULL << 14 : 0, 2, 1, 24);
		/* one in five: a bare PSB+ and a start clock that moved before */
		start_moved = seed % 5 == 0;
		n = make_stream(pk, sizeof(pk) / sizeof(pk[0]), seed % 4 == 3, seed % 5 == 0);
		len = pt_encode(buf, sizeof(buf), pk, n);
		CHECK(len > 16);
		tokens += compare_on(buf, len);
	}
	start_moved = 0;
	CHECK(tokens > 40 * 300);
}

/* The old scan, libipt's packet decoder and ptt_packet on every packet, over
 * buf[0..len): its clock into *end. */
static void reference_scan(const uint8_t *buf, size_t len, struct ptt *end)
{
	struct pt_config cfg;
	struct pt_packet_decoder *pk;
	struct ptt_clock c;
	struct pt_packet pkt;
	uint64_t off = 0;

	clock_init(&c, buf, len);
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	pk = pt_pkt_alloc_decoder(&cfg);
	CHECK(pk != NULL);
	if (!pk)
		return;
	CHECK(pt_pkt_sync_set(pk, 0) >= 0);
	while (pt_pkt_next(pk, &pkt, sizeof(pkt)) >= 0) {
		pt_pkt_get_offset(pk, &off);
		ptt_packet(&c, &pkt, off);
	}
	*end = c.st;
	pt_pkt_free_decoder(pk);
	ptt_clock_fini(&c);
}

/* The scan reads the TIP family in its quick loop: on random streams of CYCs
 * and MTCs (a run of CYCs ends at any packet but PAD) between TIP, TIP.PGE,
 * TIP.PGD and FUP packets of every IP compression, TNT-8 and MODE, its clock
 * is the old scan's, and it reads to the end. */
static void the_scan_reads_every_ip_packet(void)
{
	static const enum pt_packet_type ipt[4] = {ppt_tip, ppt_tip_pge, ppt_tip_pgd, ppt_fup};
	static const enum pt_ip_compression ipc[6] = {pt_ipc_suppressed, pt_ipc_update_16,
						      pt_ipc_update_32,	 pt_ipc_update_48,
						      pt_ipc_sext_48,	 pt_ipc_full};
	static struct pt_packet pk[1200];
	static uint8_t buf[1200 * 10];

	for (unsigned seed = 1; seed <= 20; seed++) {
		struct ptt want, got;
		size_t n, len;

		memset(&want, 0, sizeof(want));
		rnd_state = 1000 + seed;
		ptt_params_init(&dec.tparams, 3ULL << 14, 0xfULL << 14, 2, 1, 24);
		n = make_stream(pk, sizeof(pk) / sizeof(pk[0]), 0, 0);
		for (size_t i = 9; i < n; i++) { /* past the PSB+ */
			unsigned r = (unsigned)(rnd() % 100);

			if (pk[i].type != ppt_tip && pk[i].type != ppt_tnt_8)
				continue;
			if (r < 60) {
				memset(&pk[i], 0, sizeof(pk[i]));
				pk[i].type = ipt[rnd() % 4];
				pk[i].payload.ip.ipc = ipc[rnd() % 6];
				pk[i].payload.ip.ip = rnd() << 20 | rnd();
			} else if (r < 65) {
				memset(&pk[i], 0, sizeof(pk[i]));
				pk[i].type = ppt_mode;
				pk[i].payload.mode.leaf = pt_mol_exec;
				pk[i].payload.mode.bits.exec.csl = 1;
			}
		}
		len = pt_encode(buf, sizeof(buf), pk, n);
		CHECK(len > 16);
		reference_scan(buf, len, &want);
		CHECK_U64_EQ(len, scan_clock(buf, len, &got));
		check_same_clock(&want, &got);
		/* a TIP with the reserved IP compression 5, or a TIP cut by the end:
		 * the scan's reader stops at it (timing.c reads on with libipt) */
		buf[len] = 0xad;
		CHECK_U64_EQ(len, scan_clock(buf, len + 1, &got));
		buf[len] = 0x6d; /* a TIP with 6 bytes of IP, 2 of them there */
		CHECK_U64_EQ(len, scan_clock(buf, len + 3, &got));
		check_same_clock(&want, &got);
	}
}

/* perf's cycle count wraps in a run of CYCs with no token between: the time
 * is the largest any of them gave (the one before the wrap), not the last's. */
static void a_wrapping_cycle_count(void)
{
	static struct pt_packet pk[64];
	static uint8_t buf[1024];
	size_t n;

	rnd_state = 11;
	ptt_params_init(&dec.tparams, 0, 0, 2, 1, 24);
	n = make_stream(pk, 7, 0, 0); /* the PSB+ alone */
	for (int i = 0; i < 15; i++) {
		pk[n].type = ppt_cyc;
		pk[n++].payload.cyc.value = 1ULL << 60;
		pk[n].type = ppt_tnt_8;
		pk[n++].payload.tnt.bit_size = 1;
	}
	pk[n].type = ppt_cyc;
	pk[n++].payload.cyc.value = (1ULL << 60) - 1; /* 2^64 - 1 cycles */
	pk[n++].type = ppt_pad;
	pk[n].type = ppt_cyc;
	pk[n++].payload.cyc.value = 2; /* 1 */
	pk[n].type = ppt_tnt_8;
	pk[n++].payload.tnt.bit_size = 1;
	CHECK_U64_EQ(17, compare_on(buf, pt_encode(buf, sizeof(buf), pk, n)));
}

/* A piece whose PSB+ has no timing packet, its start clock moved before: the
 * MTC after it (no TMA: it moves nothing) reports that, so the TNT after it
 * has perf's instruction count reset (ktsc). */
static void a_moved_start_clock_at_an_mtc(void)
{
	static struct pt_packet pk[16];
	static uint8_t buf[256];
	size_t n = 0;

	memset(pk, 0, sizeof(pk));
	pk[n++].type = ppt_psb;
	pk[n].type = ppt_mode;
	pk[n].payload.mode.leaf = pt_mol_exec;
	pk[n++].payload.mode.bits.exec.csl = 1;
	pk[n++].type = ppt_psbend;
	pk[n].type = ppt_mtc;
	pk[n++].payload.mtc.ctc = 3;
	pk[n].type = ppt_tnt_8;
	pk[n++].payload.tnt.bit_size = 1;
	ptt_params_init(&dec.tparams, 0, 0, 2, 1, 24);
	start_moved = 1;
	CHECK_U64_EQ(2, compare_on(buf, pt_encode(buf, sizeof(buf), pk, n)));
	start_moved = 0;
}

/* A CYC cut by the end of the bytes: the quick path leaves it to libipt's
 * packet decoder, which fails: no clean end. The tokens before are perf's. */
static void a_cut_cyc_is_no_clean_end(void)
{
	static struct pt_packet pk[64];
	static struct tok got[MAXTOK];
	uint8_t buf[1024];
	struct ptt end;
	size_t n, len, ntok;
	int odd = 0;

	rnd_state = 7;
	ptt_params_init(&dec.tparams, 0, 0, 2, 1, 24);
	n = make_stream(pk, 63, 0, 0);
	pk[n].type = ppt_cyc;
	pk[n++].payload.cyc.value = 300; /* two bytes */
	len = pt_encode(buf, sizeof(buf), pk, n);
	ntok = reader_tokens(buf, len, got, &end, &odd);
	CHECK(!odd);
	CHECK(ntok > 0);
	CHECK_U64_EQ(ntok, reader_tokens(buf, len - 1, got, &end, &odd));
	CHECK(odd);
	/* the scan's reader stops there too (timing.c reads on with libipt) */
	CHECK_U64_EQ(len - 2, scan_clock(buf, len - 1, &end));
}

int main(void)
{
	RUN(tokens_and_clock_are_perfs_packet_by_packet);
	RUN(the_scan_reads_every_ip_packet);
	RUN(a_wrapping_cycle_count);
	RUN(a_moved_start_clock_at_an_mtc);
	RUN(a_cut_cyc_is_no_clean_end);
	return snap_test_done();
}
