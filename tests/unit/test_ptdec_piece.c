// SPDX-License-Identifier: GPL-2.0
/* The piece decoder's parts of the in-process PT decoder (src/ptdec/piece.h,
 * docs/ptdec.md): the return stack, the token reader on packets libipt writes,
 * the describe-printers of tokens and raw events, the section bounds the
 * run cache checks instructions against, and the segments a piece hands on. */
#include <intel-pt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pt_encode.h"
#include "ptdec/piece.h"
#include "snap_test.h"
#include "util/alloc.h"

/* libipt's return stack: the last 64 calls; once they are popped a compressed
 * return finds nothing (the old stack, indexed % 64 without a bound, gave back
 * the addresses later calls had overwritten). */
static void return_stack_keeps_the_last_64_calls(void)
{
	struct retstack r;
	uint64_t ip = 0;

	memset(&r, 0, sizeof(r));
	CHECK_INT_EQ(-1, ptd_ret_pop(&r, &ip));
	for (uint64_t i = 1; i <= 70; i++)
		ptd_ret_push(&r, 0x1000 + i);
	for (uint64_t i = 70; i > 6; i--) {
		CHECK_INT_EQ(0, ptd_ret_pop(&r, &ip));
		CHECK_U64_EQ(0x1000 + i, ip);
	}
	ip = 7;
	CHECK_INT_EQ(-1, ptd_ret_pop(&r, &ip)); /* calls 1..6 were dropped */
	CHECK_U64_EQ(7, ip);
	/* it fills again after running empty */
	ptd_ret_push(&r, 0x2000);
	ptd_ret_push(&r, 0x2001);
	CHECK_INT_EQ(0, ptd_ret_pop(&r, &ip));
	CHECK_U64_EQ(0x2001, ip);
	CHECK_INT_EQ(0, ptd_ret_pop(&r, &ip));
	CHECK_U64_EQ(0x2000, ip);
	CHECK_INT_EQ(-1, ptd_ret_pop(&r, &ip));
}

static struct snap_ptdec dec; /* timeless: the reader's times stay 0 */

/* The token reader t over the n packets encoded into buf (size bytes),
 * synced at the first PSB; dec's times (timeless) stay 0. */
static void open_tokens(struct tokr *t, uint8_t *buf, size_t size, const struct pt_packet *pk,
			size_t n)
{
	size_t len = pt_encode(buf, size, pk, n);

	CHECK(len > 16);
	memset(t, 0, sizeof(*t));
	dec.timeless = 1;
	t->d = &dec;
	t->clk.p = &dec.tparams;
	t->clk.base = buf;
	t->clk.bend = buf + len;
	CHECK_INT_EQ(0, ptd_tok_open(t, buf, buf + len));
	ptd_tok_sync(t, 0);
}

static void close_tokens(struct tokr *t)
{
	pt_pkt_free_decoder(t->pk);
	ptt_clock_fini(&t->clk);
}

/* The next token's description, taken. */
static const char *next_desc(struct tokr *t, char *buf, size_t len)
{
	ptd_tok_fill(t);
	ptd_tok_desc(t, buf, len);
	t->have = 0;
	return buf;
}

/* The tokens perf's decoder walks to, described as SNAPTRACE_PTDEC_DEBUG=2 prints them. */
static void tokens_of_libipts_packets(void)
{
	struct pt_packet pk[12];
	uint8_t buf[256];
	char d[160];
	struct tokr t;
	size_t n = 0;

	memset(pk, 0, sizeof(pk));
	pk[n++].type = ppt_psb;
	pk[n].type = ppt_mode;
	pk[n].payload.mode.leaf = pt_mol_exec;
	pk[n++].payload.mode.bits.exec.csl = 1;
	pk[n].type = ppt_fup;
	pk[n].payload.ip.ipc = pt_ipc_sext_48;
	pk[n++].payload.ip.ip = 0x401000;
	pk[n++].type = ppt_psbend;
	pk[n].type = ppt_tnt_8;
	pk[n].payload.tnt.bit_size = 2;
	pk[n++].payload.tnt.payload = 0x2; /* taken, then not taken */
	pk[n].type = ppt_tip;
	pk[n].payload.ip.ipc = pt_ipc_update_16;
	pk[n++].payload.ip.ip = 0x1234;
	pk[n].type = ppt_tip_pgd;
	pk[n++].payload.ip.ipc = pt_ipc_suppressed;
	pk[n].type = ppt_ovf;
	n++;
	open_tokens(&t, buf, sizeof(buf), pk, n);
	/* PSB 16 bytes, MODE.exec 2, FUP 7, PSBEND 2; TNT 1, TIP 3, TIP.PGD 1, OVF 2 */
	CHECK_STR_EQ("PSB+ FUP 0x401000 t=0 tsc=0 end=27", next_desc(&t, d, sizeof(d)));
	CHECK(t.mode64 && !t.odd);
	CHECK_STR_EQ("TNT taken t=0 tsc=0 end=28", next_desc(&t, d, sizeof(d)));
	CHECK_STR_EQ("TNT not taken t=0 tsc=0 end=28", next_desc(&t, d, sizeof(d)));
	CHECK_STR_EQ("TIP 0x401234 t=0 tsc=0 end=31", next_desc(&t, d, sizeof(d)));
	CHECK_STR_EQ("TIP.PGD t=0 tsc=0 end=32", next_desc(&t, d, sizeof(d)));
	CHECK_STR_EQ("OVF t=0 tsc=0 end=34", next_desc(&t, d, sizeof(d)));
	CHECK_STR_EQ("no token t=0 tsc=0 end=34", next_desc(&t, d, sizeof(d)));
	CHECK(!t.odd);
	close_tokens(&t);
}

/* Whether s starts with prefix. */
static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The timing packets of a cycle-accurate trace: read by the token reader (the
 * fast walk takes the piece, no packet it leaves to libipt), a CBR outside PSB+
 * a token of its own, a repeated one none; the ratio libipt's decoder knows at
 * the start of tracing includes the CBR right after PSB+ (docs/ptdec.md). */
static void tokens_of_a_cycle_accurate_trace(void)
{
	struct pt_packet pk[16];
	uint8_t buf[256];
	char d[160];
	struct tokr t;
	size_t n = 0;

	memset(pk, 0, sizeof(pk));
	pk[n++].type = ppt_psb;
	pk[n].type = ppt_mode;
	pk[n].payload.mode.leaf = pt_mol_exec;
	pk[n++].payload.mode.bits.exec.csl = 1;
	pk[n].type = ppt_cbr;
	pk[n++].payload.cbr.ratio = 24;
	pk[n].type = ppt_tma;
	pk[n++].payload.tma.ctc = 0x10;
	pk[n].type = ppt_fup;
	pk[n].payload.ip.ipc = pt_ipc_sext_48;
	pk[n++].payload.ip.ip = 0x401000;
	pk[n++].type = ppt_psbend;
	pk[n].type = ppt_cyc;
	pk[n++].payload.cyc.value = 5;
	pk[n].type = ppt_cbr;
	pk[n++].payload.cbr.ratio = 28;
	pk[n].type = ppt_mtc;
	pk[n++].payload.mtc.ctc = 0x11;
	pk[n].type = ppt_cyc;
	pk[n++].payload.cyc.value = 300; /* two bytes */
	pk[n].type = ppt_tnt_8;
	pk[n].payload.tnt.bit_size = 1;
	pk[n++].payload.tnt.payload = 0x1;
	pk[n].type = ppt_cbr;
	pk[n++].payload.cbr.ratio = 28; /* no change: no token */
	pk[n].type = ppt_tip_pgd;
	pk[n++].payload.ip.ipc = pt_ipc_suppressed;
	ptt_params_init(&dec.tparams, 0, 0, 2, 1, 24);
	open_tokens(&t, buf, sizeof(buf), pk, n);
	/* PSB 16, MODE.exec 2, CBR 4, TMA 7, FUP 7, PSBEND 2 */
	CHECK(starts(next_desc(&t, d, sizeof(d)), "PSB+ FUP 0x401000 "));
	CHECK(strstr(d, " end=38") != NULL);
	CHECK(t.mode64 && !t.odd);
	CHECK_INT_EQ(24, (int)t.ipt_cbr);
	CHECK_INT_EQ(28, (int)ptd_tok_ipt_cbr(&t)); /* the CBR token next */
	CHECK(!t.have);				    /* nothing taken from t */
	/* CYC 1, CBR 4 */
	CHECK(starts(next_desc(&t, d, sizeof(d)), "CBR 28 "));
	CHECK(strstr(d, " end=43") != NULL);
	CHECK_INT_EQ(28, (int)ptd_tok_ipt_cbr(&t));
	/* MTC 2, CYC 2, TNT 1 */
	CHECK(starts(next_desc(&t, d, sizeof(d)), "TNT taken "));
	CHECK(strstr(d, " end=48") != NULL);
	/* CBR 4, TIP.PGD 1 */
	CHECK(starts(next_desc(&t, d, sizeof(d)), "TIP.PGD "));
	CHECK(strstr(d, " end=53") != NULL);
	CHECK(starts(next_desc(&t, d, sizeof(d)), "no token "));
	CHECK(!t.odd);
	CHECK_INT_EQ(28, (int)t.clk.st.cbr);
	close_tokens(&t);
}

static void describes_raw_events(void)
{
	struct rawev r;
	char d[160];

	memset(&r, 0, sizeof(r));
	r.kind = RAW_BRANCH;
	r.ip = 0x401000;
	r.addr = 0x401020;
	r.flags = SNAP_PF_BRANCH | SNAP_PF_CALL;
	r.time = 1000;
	r.pid = r.tid = 7;
	r.est = 1;
	CHECK_STR_EQ("branch 0x401000 -> 0x401020 flags 0x3 t=1000 7/7 estimated",
		     ptd_rawev_desc(&r, d, sizeof(d)));
	r.kind = RAW_ERROR;
	r.err = ERR_OVR;
	r.ip = 0;
	r.est = 0;
	r.implicit = 1;
	CHECK_STR_EQ("error at 0x0: Overflow packet t=1000 7/7 implicit",
		     ptd_rawev_desc(&r, d, sizeof(d)));
	memset(&r, 0, sizeof(r));
	r.kind = RAW_POWER;
	r.cbr = 23;
	CHECK_STR_EQ("cbr 23 t=0 0/0", ptd_rawev_desc(&r, d, sizeof(d)));
	CHECK_STR_EQ("cbr 2", ptd_rawev_desc(&r, d, 6)); /* cut, NUL-terminated */
}

/* The run cache checks an instruction's bytes against its section's bounds,
 * noted when the section was added, instead of reading them through libipt's
 * image-section cache (and its locks): the answer must be libipt's, also for a
 * section that the end of its file cuts short. */
static void section_bounds_are_libipts(void)
{
	static const uint64_t ips[] = {0xfff,  0x1000, 0x1001, 0x1040, 0x1052, 0x1053,
				       0x1054, 0x1060, 0x13e7, 0x2000, 0x2050, 0x2063};
	static const uint64_t sizes[] = {1, 2, 15};
	char path[] = "/tmp/test_ptdec_piece.XXXXXX";
	uint8_t bytes[100], raw[16];
	struct snap_ptdec d;
	int fd = mkstemp(path), cut, whole;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)i;
	CHECK(write(fd, bytes, sizeof(bytes)) == (ssize_t)sizeof(bytes));
	close(fd);
	memset(&d, 0, sizeof(d));
	d.iscache = pt_iscache_alloc(NULL);
	CHECK(d.iscache != NULL);
	cut = ptd_add_section(&d, path, 16, 1000, 0x1000); /* 84 bytes are there */
	whole = ptd_add_section(&d, path, 0, 0x40, 0x2000);
	CHECK(cut > 0);
	CHECK(whole > 0);
	for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++)
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
			for (int s = 0; s < 2; s++) {
				int isid = s ? whole : cut;
				int got = pt_iscache_read(d.iscache, raw, (uint64_t)sizes[k], isid,
							  ips[i]);

				CHECK_INT_EQ(got == (int)sizes[k],
					     ptd_in_section(&d, isid, ips[i], sizes[k]));
			}
	CHECK_INT_EQ(1, ptd_in_section(&d, cut, 0x1053, 1)); /* the file's last byte */
	CHECK_INT_EQ(0, ptd_in_section(&d, cut, 0x1053, 2));
	CHECK_INT_EQ(0, ptd_in_section(&d, 0, 0x1000, 1));
	CHECK_INT_EQ(0, ptd_in_section(&d, whole + 1, 0x1000, 1));
	pt_iscache_free(d.iscache);
	snap_free(d.secs);
	unlink(path);
}

/* One piece's events, a producer thread's way (machine.c's watermark): two
 * confirmed, the stop IP reached, three more walked, a PSB+ whose FUP they
 * reach confirms them (pass_psb: past the stop), one more, the end. With a cap
 * (evcap) the reader takes each segment handed on; out gets every event the
 * reader sees, in order. */
static size_t stream_piece(size_t evcap, uint64_t *out, size_t max)
{
	static struct snap_ptdec d;
	struct wctx w;
	struct piece pc;
	struct pstate s;
	size_t nout = 0;

	memset(&d, 0, sizeof(d));
	memset(&w, 0, sizeof(w));
	memset(&pc, 0, sizeof(pc));
	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&d.mu, NULL);
	pthread_cond_init(&d.cv_pub, NULL);
	pthread_cond_init(&d.cv_done, NULL);
	d.evcap = evcap;
	w.d = &d;
	w.can_block = 1;
	pc.has_stop = 1;
	s.d = &d;
	s.w = &w;
	s.pc = &pc;
	s.stop_idx = NO_IDX;
	for (uint64_t t = 1; t <= 6; t++) {
		if (t == 3) {
			ptd_confirm_all(&s);
			s.stop_idx = pc.nev; /* the walk is at the stop IP */
		}
		if (t == 6)
			s.confirm = pc.nev; /* a PSB+ whose FUP the walk reached */
		ptd_emit_branch(&s, 0, 0x401000 + t, 0x402000 + t, t);
		if (pc.pub) { /* the reader takes the segment */
			for (size_t i = 0; i < pc.npub && nout < max; i++)
				out[nout++] = pc.pub[i].time;
			snap_free(pc.pub);
			pc.pub = NULL;
		}
	}
	CHECK_INT_EQ(0, s.err);
	ptd_end_piece(&s);
	CHECK(pc.nev <= 6);
	for (size_t i = 0; i < pc.nev && i < 6 && nout < max; i++)
		out[nout++] = pc.ev[i].time;
	snap_free(pc.ev);
	pthread_mutex_destroy(&d.mu);
	pthread_cond_destroy(&d.cv_pub);
	pthread_cond_destroy(&d.cv_done);
	return nout;
}

/* A piece's events are the same in segments as whole, also when a PSB+ moved
 * the watermark past the stop IP (only the events before the stop are final:
 * the segment handed on then stopped short of them, it once took them all
 * and left the stop index wrapped below zero). */
static void segments_stop_at_the_stop_ip(void)
{
	uint64_t whole[8], capped[8];
	size_t nwhole = stream_piece(0, whole, 8);

	CHECK_INT_EQ(2, nwhole);
	for (size_t cap = 1; cap <= 3; cap++) {
		size_t n = stream_piece(cap, capped, 8);

		CHECK_INT_EQ(nwhole, n);
		CHECK(n == nwhole && !memcmp(whole, capped, n * sizeof(*whole)));
	}
}

int main(void)
{
	RUN(return_stack_keeps_the_last_64_calls);
	RUN(tokens_of_libipts_packets);
	RUN(tokens_of_a_cycle_accurate_trace);
	RUN(describes_raw_events);
	RUN(section_bounds_are_libipts);
	RUN(segments_stop_at_the_stop_ip);
	return snap_test_done();
}
