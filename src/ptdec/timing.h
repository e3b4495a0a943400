/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf's PT clock (docs/ptdec.md, "Timestamps"): the timestamp perf 6.1's
 * decoder (tools/perf/util/intel-pt-decoder/intel-pt-decoder.c) keeps while it
 * reads the packets of a stream: TSC, TMA, MTC, CYC and CBR packets, with the
 * AUXTRACE_INFO parameters (MTC period, TSC:CTC ratio, maximum non-turbo
 * ratio). Everything is in TSC ticks; the decoder converts to perf time.
 *
 * The clock depends on the whole stream before a point (a CYC count runs on
 * from the last MTC or CBR change, a TSC is compared with the previous
 * timestamp), so for traces with CYC or MTC packets the state at the start of
 * every piece comes from a sequential scan of the packets before it
 * (ptt_piece_start), which runs ahead of the workers on demand.
 */
#ifndef SNAP_PTDEC_TIMING_H
#define SNAP_PTDEC_TIMING_H

#include <intel-pt.h>
#include <stddef.h>
#include <stdint.h>

/* The recording's timing parameters, as perf gives them to its decoder. */
struct ptt_params {
	int mtc_shift;		 /* MTC period: an MTC every 2^mtc_shift CTC ticks */
	uint32_t ctc_rem_mask;	 /* (1 << mtc_shift) - 1 */
	uint32_t n, d, mult;	 /* TSC:CTC ratio n/d; mult = n/d when exact, else 0 */
	unsigned max_non_turbo;	 /* maximum non-turbo ratio (TSC ticks per bus tick) */
	double max_non_turbo_fp; /* the same as a double */
	uint64_t tsc_slip;	 /* how far back a TSC may slip past MTCs */
};

/* The clock: perf's decoder fields of the same names. */
struct ptt {
	uint64_t timestamp;	    /* the current time */
	uint64_t tsc_timestamp;	    /* the last TSC (full 64 bits) */
	uint64_t ref_timestamp;	    /* a buffer's reference TSC until its first TSC */
	uint64_t buf_timestamp;	    /* the buffer's reference TSC */
	uint64_t ctc_timestamp;	    /* the time of CTC 0 of the last TMA */
	uint64_t ctc_delta;	    /* CTC ticks since then, from MTCs */
	uint64_t cycle_cnt;	    /* CYC cycles since cyc_ref_timestamp */
	uint64_t cyc_ref_timestamp; /* where cycle counting started */
	double cbr_cyc_to_tsc;	    /* TSC ticks per cycle from the CBR */
	double calc_cyc_to_tsc;	    /* TSC ticks per cycle measured between MTCs */
	uint32_t last_mtc, cbr;
	uint8_t have_tma, fixup_last_mtc, have_calc;
	uint8_t last_cyc; /* the previous packet (not PAD) was a CYC */
	uint8_t fresh;	  /* no history: the next TSC is taken as it is */
	uint8_t reset;	  /* perf's timestamp_insn_cnt was reset (cleared by the reader) */
};

/* The timing of one stream as a piece decoder reads it. */
struct ptt_clock {
	struct ptt st;
	const struct ptt_params *p;
	const uint8_t *base, *bend;   /* the AUXTRACE buffer from the piece on (lookahead) */
	struct pt_packet_decoder *la; /* lookahead decoder over [base, bend), lazily */
};

/* The packets ptt_packet acts on (PAD counts as nothing). */
static inline int ptt_is_timing(enum pt_packet_type ty)
{
	return ty == ppt_tsc || ty == ppt_mtc || ty == ppt_cyc || ty == ppt_tma || ty == ppt_cbr ||
	       ty == ppt_stop || ty == ppt_pad;
}

/* Fills *p from the AUXTRACE_INFO: the PT config with its MTC period field
 * (mtc_freq_bits), the TSC:CTC ratio n/d and the maximum non-turbo ratio. */
void ptt_params_init(struct ptt_params *p, uint64_t config, uint64_t mtc_freq_bits, uint64_t n,
		     uint64_t d, unsigned max_non_turbo);

/* A clock with no history (each piece of a TSC-only trace starts so). */
void ptt_init_fresh(struct ptt *t);

/* A new, not consecutive buffer with this reference TSC (perf's reposition). */
void ptt_reposition(struct ptt *t, uint64_t ref);

/* Single packets (the arithmetic, exposed for the unit tests): ptt_tsc, ptt_tma,
 * ptt_cyc and ptt_cbr move clock t as a TSC, TMA, CYC or CBR packet moves perf's. */
void ptt_tsc(struct ptt *t, const struct ptt_params *p, uint64_t tsc);
void ptt_tma(struct ptt *t, const struct ptt_params *p, uint32_t ctc, uint32_t fc);
void ptt_cbr(struct ptt *t, const struct ptt_params *p, uint32_t cbr);

/* ptt_tsc, its usual case here (a TSC at or after the time, in the same 2^56
 * ticks): the most frequent packet of a TSC trace. */
static inline void ptt_tsc_quick(struct ptt *t, const struct ptt_params *p, uint64_t payload)
{
	uint64_t ts = payload | (t->timestamp & (0xffULL << 56));

	if (t->fresh || t->ref_timestamp || !t->timestamp || ts < t->timestamp) {
		ptt_tsc(t, p, payload);
		return;
	}
	t->have_tma = 0;
	t->tsc_timestamp = t->timestamp = ts;
	t->reset = 1;
	if (t->last_cyc) {
		t->cyc_ref_timestamp = ts;
		t->cycle_cnt = 0;
		t->have_calc = 0;
	}
}

/* A double time back to ticks, as C's conversion does for values in range. */
static inline uint64_t ptt_to_ticks(double v)
{
	if (!(v >= 0))
		return 0;
	if (v >= 18446744073709551616.0)
		return UINT64_MAX;
	return (uint64_t)v;
}

/* A CYC (inline: the most frequent packet of a cycle-accurate trace). */
static inline void ptt_cyc(struct ptt *t, uint64_t cyc)
{
	double ts;
	uint64_t v;

	t->cycle_cnt += cyc;
	if (!t->cyc_ref_timestamp)
		return;
	if (t->have_calc)
		ts = (double)t->cyc_ref_timestamp + (double)t->cycle_cnt * t->calc_cyc_to_tsc;
	else if (t->cbr)
		ts = (double)t->cyc_ref_timestamp + (double)t->cycle_cnt * t->cbr_cyc_to_tsc;
	else
		return;
	v = ptt_to_ticks(ts);
	if (v >= t->timestamp)
		t->timestamp = v;
	t->reset = 1;
}

/*
 * An MTC. When a CYC came just before it, perf measures TSC ticks per cycle
 * by looking ahead to the next MTC through the packets at [next, end) (the
 * rest of the AUXTRACE buffer); la is a packet decoder over [base, end) used
 * for that (NULL: the MTC is taken without the measurement).
 */
void ptt_mtc(struct ptt *t, const struct ptt_params *p, uint32_t mtc, struct pt_packet_decoder *la,
	     uint64_t next_off);

/*
 * Any packet read in stream order; next_off is the offset just after it
 * relative to c->base. Returns 1 if it changed the time.
 */
int ptt_packet(struct ptt_clock *c, const struct pt_packet *pkt, uint64_t next_off);

/*
 * A fast reader for the scan: the length of the packet at p (n bytes), with the
 * clock's packets decoded into *pkt (others: ppt_mode, PAD: ppt_pad); 0 for a
 * packet it does not know or that is cut short.
 */
int ptt_walk_packet(const uint8_t *p, size_t n, struct pt_packet *pkt);

/* A damaged packet: perf forgets its TMA. */
void ptt_bad_packet(struct ptt *t);

/* Frees the lookahead decoder of c (owned by c); c->st and c->p are kept. */
void ptt_clock_fini(struct ptt_clock *c);

#endif
