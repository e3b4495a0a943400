// SPDX-License-Identifier: GPL-2.0
/*
 * mkptdata: writes an Intel PT perf.data that perf decodes with its real PT
 * decoder, from a single-step trace (sstep) and its instruction map (insnmap).
 * docs/pt-testing.md explains the file and lists what perf needs in it.
 *
 *   mkptdata -p PREFIX -o OUT.data [-e EXPECT] [options]
 *
 * Reads PREFIX.steps, PREFIX.maps and PREFIX.insn. With -e, also writes the
 * branch list perf must decode from OUT.data, one line per branch sample or
 * decode error, "TID NAME IP ADDR" (NAME as perf script prints the flags, with
 * single spaces; IP and ADDR in hex) or "TID error", in each thread's order.
 * That list comes straight from the executed instruction sequence.
 *
 * Options:
 *   -r        return compression (perf's default); otherwise every RET is a TIP
 *   -T        timeless: no TSC packets
 *   -k N      a TSC packet every N instructions of a thread (default 16, 0: none)
 *   -P N      a PSB+ about every N bytes of a stream (default 4096)
 *   -S        AUXTRACE_INFO says snapshot mode
 *   -g N      N junk bytes before the first PSB of each stream (wrapped snapshot)
 *   -I N      an asynchronous interrupt after every N-th instruction
 *   -c N      the N-th branch TIP of each stream gets a bogus target: a decode error
 *             (not with -I or the kernel scopes: perf's resync there is not modelled)
 *   -O N      an overflow after instruction N of each thread: OVF, 20 instructions lost
 *   -C        per-CPU recording: one stream per CPU, context switch records; a
 *             thread runs until a syscall, the pieces go to the CPUs in turn
 *   -n N      per-CPU recording on N CPUs (default 1)
 *   -s SCOPE  u (default), k or uk; k and uk need -K
 *   -K PREFIX kernel image: PREFIX.kimg and PREFIX.insn from insnmap -k
 *   -V        map the kernel image as [kernel.kallsyms] (perf script --vmlinux IMAGE)
 *   -b HOME   as -V, and record build ids (HEADER_BUILD_ID) for the kernel image and
 *             the vdso (sstep -d's PREFIX.vdso, mapped as [vdso]), with copies in
 *             perf's build-id cache HOME/.debug/.build-id/XX/REST/{elf,vdso}
 *   -D        as -V, and write OUT as perf record --kcore does: a directory with
 *             OUT/data and OUT/kcore_dir/{kcore,kallsyms,modules}, the kcore made
 *             from the kernel image's loadable segments (perf then needs no option)
 *   -B N      cut each stream into several AUXTRACE records of about N bytes, at PSBs
 *   -Y        cycle-accurate mode as magic-trace records by default (cyc=1,cyc_thresh=1,
 *             mtc_period=0): CYC before every packet, MTC, TMA in PSB+
 *   -m        MTC timing without CYC (mtc=1, cyc=0): MTC, TMA and CBR in PSB+
 *   -M N      with -Y or -m: the MTC period, an MTC every 2^N crystal clock ticks (0-15)
 *   -R N:D    with -Y or -m: N/D TSC ticks per crystal clock tick (default 4000:1)
 *   -F        with -Y or -m: clock-like timing: 50 cycles per instruction and CBR unit
 *             (+-10 %), a CYC before MTCs too, and the frequency changing every 211
 *             instructions, its CBR packet 37 instructions later (PSB+ repeats the CBR);
 *             perf's time then runs ahead of the TSC and stays there
 *   -G        like -F, but perf's time never runs ahead of the TSC (so per-CPU threads
 *             keep their switch times): at most 100 % of the cycles, the CBR packet 37
 *             instructions before a rise and after a fall, no CYC before an MTC
 *   -t M:S:Z  perf time = Z + TSC * M / 2^S (perf's conversion; default 1:0:0, time = TSC)
 *   -w A:B    a snapshot: only steps A to B-1 of the run (sstep's global order); each
 *             thread starts with TIP.PGE and, if it runs on, ends without a packet
 *   -f        the traced process is a fork: the mmaps belong to its parent (pid
 *             FORK_PARENT), then a FORK record; the code is the parent's (perf's thread__fork)
 *   -x        after the last step, the executable's first mapping is mapped again one
 *             page further into its file: other code at the same addresses
 */
#include <elf.h>
#include <errno.h>
#include <intel-pt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptsynth.h"

#define PT_PMU_TYPE   8 /* any value: perf matches attr.type with AUXTRACE_INFO priv[0] */
#define CFG_TSC	      (1ULL << 10)
#define CFG_NORETCMP  (1ULL << 11)
#define CFG_CYC	      (1ULL << 1)
#define CFG_MTC	      (1ULL << 9)
#define CFG_CYC_THR1  (1ULL << 19) /* cyc_thresh=1 */
#define CTC_TICK      4000ULL	   /* default TSC ticks per crystal clock tick, with -Y */
#define CFG_MTC_SHIFT 14	   /* mtc_period=config:14-17 */
#define FREQ_EVERY    211	   /* -F: instructions between frequency changes */
#define CBR_LAG	      37	   /* -F: instructions before the CBR packet says so */
#define EVT_ID	      1ULL
#define TSC_START     1000000ULL
#define TSC_PER_INSN  1000ULL	/* room for syscall/irq/switch time between steps */
#define BOGUS_IP      0x1000ULL /* never mapped: perf fails to read code there */
#define OVF_LOST      20
#define MAX_THREADS   64

#ifndef PERF_RECORD_AUXTRACE_INFO
#define PERF_RECORD_AUXTRACE_INFO 70
#define PERF_RECORD_AUXTRACE	  71
#endif

enum scope { SCOPE_U, SCOPE_K, SCOPE_UK };
enum { LOST_WALK = 1, LOST_SYNC };

struct opts {
	int retcomp, timeless, tsc_every, psb_every, snapshot, garbage;
	int irq_every, corrupt_at, ovf_at, vmlinux, kcore;
	const char *bidhome;   /* -b: perf's build-id cache goes to HOME/.debug */
	int percpu;	       /* -C: number of CPUs, 0 = per-thread buffers */
	size_t piece;	       /* -B: bytes per AUXTRACE record, 0 = one record per stream */
	int cyc;	       /* -Y: cycle-accurate mode, CYC + MTC + TMA packets */
	int mtc;	       /* -Y or -m: MTC + TMA packets */
	int mtc_period;	       /* -M */
	uint64_t ctc_n, ctc_d; /* -R: TSC:CTC ratio */
	int fine;	       /* -F (1) or -G (2): clock-like cycle counts, frequency changes */
	uint64_t tmult, tshift, tzero; /* -t: TSC to perf time */
	size_t win_from, win_to;       /* -w: only these global steps, [from, to) */
	int fork;		       /* -f */
	int remap;		       /* -x */
	enum scope scope;
	const char *kprefix;
};

#define FORK_PARENT 3999999u /* -f: the parent's pid (none of sstep's) */

/* The kernel image: where syscalls and interrupts go, and the path through it. */
struct kimage {
	char path[PATH_MAX];
	uint64_t start, end, pgoff;
	uint64_t *sys_path, *irq_path; /* executed kernel instructions, owned */
	size_t nsys, nirq;
	struct ptsynth_imap imap;
};

/* One PT stream being written. */
struct stream {
	struct pt_encoder *enc;
	uint8_t *buf;
	size_t cap, junk;
	uint64_t tnt;
	int ntnt;
	uint64_t *rs; /* return-compression stack */
	size_t nrs, caprs;
	uint64_t last_psb;
	size_t *psbs; /* -B: offsets in buf of the PSBs that start a new AUXTRACE record */
	size_t npsb, cappsb, last_cut;
	int ntip;
	int lost;	  /* LOST_*: after a corruption, until perf resyncs */
	size_t last_line; /* where the last expected line starts in pend */
	int in_psb;
	char *pend; /* expected lines not yet decodable */
	size_t npend, cappend, tnt_mark;
	int ovf_skip;		   /* instructions still lost in an overflow */
	uint64_t cycles, last_ctc; /* -Y */
	unsigned ncbr;
	unsigned freq, cbr; /* -F: the core:bus ratio running, and the one last announced */
	uint64_t ninsn;	    /* -F: instructions so far */
	uint64_t freq_at;   /* -F: when the running ratio changed */
	int err;	    /* sticky libipt error */
	uint32_t tid;	    /* thread whose expectations are written */
	FILE *exp;	    /* expected branches, or NULL */
	uint64_t size;	    /* bytes, after fini */
};

struct counts {
	size_t insns, branches, syscalls, irqs, kernel_insns;
};

static const struct opts *O;
static struct counts C;

/* ------------------------------------------------------------------ expectations */

/*
 * Expected lines wait in s->pend until a packet makes perf's decoder walk the
 * code up to them: a direct jump or call produces no packet, and perf only
 * reports it when a later packet (TNT, TIP, FUP, PGD) is decoded. An overflow
 * loses the pending lines after the last TNT bit.
 */
static void pend_add(struct stream *s, const char *line)
{
	size_t l = strlen(line);

	if (!s->exp || s->err)
		return;
	if (s->npend + l + 1 > s->cappend) {
		size_t cap = (s->npend + l + 1) * 2;
		char *p = realloc(s->pend, cap);
		if (!p) {
			s->err = -ENOMEM;
			return;
		}
		s->pend = p;
		s->cappend = cap;
	}
	memcpy(s->pend + s->npend, line, l + 1);
	s->npend += l;
}

/* Writes the first upto bytes of pending lines and drops the rest if drop. */
static void pend_commit(struct stream *s, size_t upto, int drop)
{
	if (!s->exp || !s->pend)
		return;
	fwrite(s->pend, 1, upto, s->exp);
	size_t rest = drop ? 0 : s->npend - upto;
	memmove(s->pend, s->pend + upto, rest);
	s->npend = rest;
	s->tnt_mark = 0;
}

static void expect(struct stream *s, const char *name, uint64_t ip, uint64_t addr)
{
	char line[128];

	if (!s->exp || s->lost)
		return;
	s->last_line = s->npend;
	snprintf(line, sizeof line, "%" PRIu32 " %s %" PRIx64 " %" PRIx64 "\n", s->tid, name, ip,
		 addr);
	pend_add(s, line);
}

/*
 * A packet goes out. A TNT commits the lines up to its last bit's branch,
 * anything else all of them. After a corruption, the first packet is eaten by
 * perf's failing walk, and perf resyncs at the next packet with an IP.
 */
static void on_packet(struct stream *s, enum pt_packet_type t, uint64_t ip)
{
	int is_tnt = t == ppt_tnt_8 || t == ppt_tnt_64;

	if (s->lost == LOST_WALK) {
		s->lost = LOST_SYNC;
		return;
	}
	if (s->lost == LOST_SYNC) {
		if (!is_tnt && ip) {
			s->lost = 0;
			/* a resync at a PSB+ is silent, anywhere else it is a "tr strt" */
			if (!s->in_psb)
				expect(s, "tr strt", 0, ip);
		}
		return;
	}
	pend_commit(s, is_tnt ? s->tnt_mark : s->npend, 0);
}

/* ------------------------------------------------------------------ packets */

static void put(struct stream *s, const struct pt_packet *p)
{
	if (s->err)
		return;
	if (O->cyc && s->cycles &&
	    (p->type == ppt_tnt_8 || p->type == ppt_tnt_64 || p->type == ppt_tip ||
	     p->type == ppt_tip_pge || p->type == ppt_tip_pgd || p->type == ppt_fup ||
	     p->type == ppt_ovf || (O->fine == 1 && p->type == ppt_mtc))) {
		/* cycle-accurate mode: a CYC with the cycles since the last one */
		struct pt_packet c;
		memset(&c, 0, sizeof c);
		c.type = ppt_cyc;
		c.payload.cyc.value = s->cycles;
		s->cycles = 0;
		put(s, &c);
	}
	int r = pt_enc_next(s->enc, p);
	if (r < 0)
		s->err = r;
}

static void put0(struct stream *s, enum pt_packet_type t)
{
	struct pt_packet p;

	memset(&p, 0, sizeof p);
	p.type = t;
	put(s, &p);
}

static void flush_tnt(struct stream *s)
{
	struct pt_packet p;

	if (!s->ntnt)
		return;
	memset(&p, 0, sizeof p);
	p.type = s->ntnt <= 6 ? ppt_tnt_8 : ppt_tnt_64;
	p.payload.tnt.bit_size = (uint8_t)s->ntnt;
	p.payload.tnt.payload = s->tnt;
	put(s, &p);
	on_packet(s, p.type, 0);
	s->ntnt = 0;
	s->tnt = 0;
}

static void tnt(struct stream *s, int taken)
{
	s->tnt = (s->tnt << 1) | (taken ? 1 : 0); /* the oldest branch ends up in the MSB */
	s->tnt_mark = s->npend;
	if (++s->ntnt == 6)
		flush_tnt(s);
}

static void ip_pkt(struct stream *s, enum pt_packet_type t, uint64_t ip)
{
	struct pt_packet p;

	flush_tnt(s);
	memset(&p, 0, sizeof p);
	p.type = t;
	p.payload.ip.ipc = t == ppt_tip_pgd && !ip ? pt_ipc_suppressed : pt_ipc_sext_48;
	p.payload.ip.ip = ip;
	put(s, &p);
	on_packet(s, t, t == ppt_tip_pgd ? 0 : ip);
}

static void tsc_pkt(struct stream *s, uint64_t tsc)
{
	struct pt_packet p;

	if (O->timeless)
		return;
	flush_tnt(s);
	memset(&p, 0, sizeof p);
	p.type = ppt_tsc;
	p.payload.tsc.tsc = tsc;
	put(s, &p);
	s->last_ctc = (tsc * O->ctc_d / O->ctc_n) >> O->mtc_period;
}

/* -F: the CBR packet that announces the running ratio. */
static void cbr_pkt(struct stream *s, unsigned ratio)
{
	struct pt_packet p;

	memset(&p, 0, sizeof p);
	p.type = ppt_cbr;
	p.payload.cbr.ratio = (uint8_t)ratio;
	put(s, &p);
	s->cbr = ratio;
}

/* TMA: where the crystal clock was at the last TSC (cycle-accurate mode, in PSB+). */
static void tma_pkt(struct stream *s, uint64_t tsc)
{
	struct pt_packet p;

	if (!O->mtc || O->timeless)
		return;
	if (O->fine) {
		cbr_pkt(s, s->cbr); /* the ratio last announced */
	} else {
		memset(&p, 0, sizeof p);
		p.type = ppt_cbr; /* core:bus ratio: the frequency changes from PSB to PSB */
		p.payload.cbr.ratio = (uint8_t)(20 + 4 * (s->ncbr++ % 3));
		put(s, &p);
	}
	uint64_t ctc = tsc * O->ctc_d / O->ctc_n;
	memset(&p, 0, sizeof p);
	p.type = ppt_tma;
	p.payload.tma.ctc = (uint16_t)ctc;
	p.payload.tma.fc = (uint16_t)(tsc - ctc * O->ctc_n / O->ctc_d) & 0x1ff;
	put(s, &p);
}

/* One instruction's time passes: cycles, and an MTC at each crystal clock tick. */
static void tick(struct stream *s, uint64_t tsc)
{
	struct pt_packet p;

	if (!O->mtc)
		return;
	if (O->fine) {
		/* the frequency changes, and the CBR packet says so a little later */
		static const unsigned ratios[] = {20, 28, 24, 32, 16};
		static const unsigned jitter[2][4] = {{110, 90, 105, 95}, {100, 92, 97, 89}};
		unsigned next = ratios[(s->ninsn / FREQ_EVERY + 1) % 5];

		++s->ninsn;
		if (O->fine == 2 && next > s->freq &&
		    s->ninsn % FREQ_EVERY == FREQ_EVERY - CBR_LAG && !O->timeless) {
			flush_tnt(s); /* -G: a rise is announced before it happens */
			cbr_pkt(s, next);
		}
		if (s->ninsn % FREQ_EVERY == 0) {
			s->freq = ratios[(s->ninsn / FREQ_EVERY) % 5];
			s->freq_at = s->ninsn;
		}
		if (s->freq != s->cbr && s->ninsn == s->freq_at + CBR_LAG && !O->timeless) {
			flush_tnt(s);
			cbr_pkt(s, s->freq);
		}
		if (O->cyc)
			s->cycles += 50 * s->freq * jitter[O->fine - 1][s->ninsn % 4] / 100;
	} else if (O->cyc) {
		s->cycles += 3;
	}
	uint64_t ctc = (tsc * O->ctc_d / O->ctc_n) >> O->mtc_period;
	if (O->timeless || ctc == s->last_ctc)
		return;
	s->last_ctc = ctc;
	flush_tnt(s);
	memset(&p, 0, sizeof p);
	p.type = ppt_mtc;
	p.payload.mtc.ctc = (uint8_t)ctc;
	put(s, &p);
}

static void mode_exec64(struct stream *s)
{
	struct pt_packet p;

	memset(&p, 0, sizeof p);
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	put(s, &p);
}

static uint64_t stream_offset(struct stream *s)
{
	uint64_t off = 0;

	pt_enc_get_offset(s->enc, &off);
	return off;
}

/* PSB+; fup is the current IP when tracing is enabled, else 0. */
static void psb_plus(struct stream *s, uint64_t tsc, uint64_t fup)
{
	flush_tnt(s);
	size_t at = s->junk + stream_offset(s);
	if (O->piece && at > 0 && at - s->last_cut >= O->piece) {
		/* -B: a new AUXTRACE record starts at this PSB. In snapshot mode
		 * perf decodes each record on its own: the direct branches after
		 * the last packet of the previous one are never reported. */
		if (O->snapshot)
			pend_commit(s, 0, 1);
		s->last_cut = at;
	} else {
		goto psb;
	}
	if (s->npsb == s->cappsb) {
		size_t cap = s->cappsb ? s->cappsb * 2 : 64;
		void *v = reallocarray(s->psbs, cap, sizeof *s->psbs);
		if (!v) {
			s->err = -ENOMEM;
			return;
		}
		s->psbs = v;
		s->cappsb = cap;
	}
	s->psbs[s->npsb++] = at;
psb:
	put0(s, ppt_psb);
	mode_exec64(s);
	tsc_pkt(s, tsc);
	tma_pkt(s, tsc);
	if (fup) {
		struct pt_packet p;
		memset(&p, 0, sizeof p);
		p.type = ppt_fup;
		p.payload.ip.ipc = pt_ipc_sext_48;
		p.payload.ip.ip = fup;
		put(s, &p);
		s->in_psb = 1;
		on_packet(s, ppt_fup, fup);
		s->in_psb = 0;
	}
	put0(s, ppt_psbend);
	s->nrs = 0; /* be conservative: no compressed return across a PSB */
	s->last_psb = stream_offset(s);
}

static void tip(struct stream *s, uint64_t ip)
{
	if (++s->ntip == O->corrupt_at && !s->lost) {
		/* perf reports the branch to the bogus target, then the error */
		char line[128];
		uint64_t from = 0;
		if (s->exp && s->npend > s->last_line) {
			char name[64] = "";
			uint32_t tid;
			if (sscanf(s->pend + s->last_line, "%" SCNu32 " %63[a-z ] %" SCNx64, &tid,
				   name, &from) == 3) {
				size_t l = strlen(name);
				while (l && name[l - 1] == ' ')
					name[--l] = '\0';
				s->npend = s->last_line;
				snprintf(line, sizeof line,
					 "%" PRIu32 " %s %" PRIx64 " %" PRIx64 "\n%" PRIu32
					 " error\n",
					 s->tid, name, from, (uint64_t)BOGUS_IP, s->tid);
				pend_add(s, line);
			}
		}
		ip_pkt(s, ppt_tip, BOGUS_IP); /* commits the lines */
		s->lost = LOST_WALK;
		s->nrs = 0; /* perf's return stack is gone too */
		return;
	}
	ip_pkt(s, ppt_tip, ip);
}

static int rs_push(struct stream *s, uint64_t ret)
{
	if (s->nrs == s->caprs) {
		size_t cap = s->caprs ? s->caprs * 2 : 64;
		void *v = reallocarray(s->rs, cap, sizeof *s->rs);
		if (!v)
			return -ENOMEM;
		s->rs = v;
		s->caprs = cap;
	}
	s->rs[s->nrs++] = ret;
	return 0;
}

static int stream_init(struct stream *s, size_t insns, size_t nsyscalls, uint32_t tid, FILE *exp)
{
	struct pt_config cfg;

	memset(s, 0, sizeof *s);
	s->tid = tid;
	s->exp = exp;
	s->junk = (size_t)O->garbage;
	s->freq = s->cbr = 20; /* -F: the first ratio */
	/* Worst cases: a TIP (7) + TSC (8) per instruction, PSB+ every psb_every
	 * bytes, and about 512 bytes per syscall or interrupt with its kernel part. */
	size_t events = O->irq_every ? insns / (size_t)O->irq_every + 1 : 0;
	s->cap = s->junk + 64 * 1024 + insns * 32 + (events + nsyscalls) * 512;
	s->buf = calloc(1, s->cap);
	if (!s->buf)
		return -ENOMEM;
	for (size_t i = 0; i < s->junk; i++)
		s->buf[i] = (uint8_t)(0x5a ^ (i * 37)); /* junk before the first PSB */
	memset(&cfg, 0, sizeof cfg);
	cfg.size = sizeof cfg;
	cfg.begin = s->buf + s->junk;
	cfg.end = s->buf + s->cap;
	s->enc = pt_alloc_encoder(&cfg);
	return s->enc ? 0 : -ENOMEM;
}

static int stream_fini(struct stream *s)
{
	flush_tnt(s);
	s->size = s->junk + stream_offset(s);
	pend_commit(s, s->npend, 0);
	pt_free_encoder(s->enc);
	s->enc = NULL;
	free(s->rs);
	s->rs = NULL;
	free(s->pend);
	s->pend = NULL;
	if (s->err == -ENOMEM)
		return -ENOMEM;
	return s->err < 0 ? -ENOSPC : 0; /* the only libipt error here: the buffer is full */
}

/* ------------------------------------------------------------------ control flow */

/* The kernel path of a syscall or an interrupt in scopes k and uk. */
static void kernel_path(struct stream *s, const struct kimage *k, const uint64_t *path, size_t n,
			uint64_t *tsc)
{
	for (size_t j = 0; j + 1 < n; j++) {
		const struct ptsynth_insn *in = ptsynth_imap_find(&k->imap, path[j]);
		uint64_t next = path[j + 1];
		C.kernel_insns++;
		*tsc += 7;
		tick(s, *tsc);
		if (stream_offset(s) - s->last_psb >= (uint64_t)O->psb_every)
			psb_plus(s, *tsc, path[j]); /* a PSB+ in kernel code (FUP = this insn) */
		switch (in ? in->kind : PTSYNTH_OTHER) {
		case PTSYNTH_JCC:
			if (next != path[j] + in->len)
				expect(s, "jcc", path[j], next);
			tnt(s, next != path[j] + in->len);
			break;
		case PTSYNTH_JMP:
			expect(s, "jmp", path[j], next);
			break;
		case PTSYNTH_CALL:
			/* kernel calls and returns use the return stack as user ones do
			 * (a decoder pops only on a compressed return) */
			if (rs_push(s, path[j] + in->len) < 0)
				s->err = -ENOMEM;
			expect(s, "call", path[j], next);
			break;
		case PTSYNTH_RET:
			expect(s, "return", path[j], next);
			if (O->retcomp && s->nrs && s->rs[s->nrs - 1] == next) {
				s->nrs--;
				tnt(s, 1);
			} else {
				s->nrs -= s->nrs > 0;
				tip(s, next);
			}
			break;
		default:
			break;
		}
	}
}

/* A run of one thread's instructions, ending at a syscall or at the thread's end. */
struct chunk {
	uint32_t tid;
	uint32_t cpu; /* per-CPU mode */
	size_t *idx;  /* global step indexes, borrowed */
	size_t n;
	size_t tpos;   /* index of the first instruction within its thread */
	int first;     /* the thread's first chunk */
	int last;      /* the thread's last chunk: ends with its exit */
	int cut;       /* with last: the window (-w) ends before the thread does */
	uint64_t next; /* if !last, the thread's next instruction after the chunk */
};

/* The time slot of each global step (per-CPU mode re-orders the steps). */
static size_t *TIX;

static uint64_t step_tsc(size_t g)
{
	return TSC_START + TIX[g] * TSC_PER_INSN;
}

/*
 * Encodes one chunk. stream_start: the first chunk written to this stream.
 * Returns 0, -ENOENT for an address with no instruction, -EPROTO when the
 * trace does not follow the instruction map, -ENOMEM.
 */
static int encode_chunk(struct stream *s, const struct ptsynth_imap *imap, const struct kimage *k,
			const struct ptsynth_step *steps, const struct chunk *c, int stream_start)
{
	int user = O->scope != SCOPE_K;
	uint64_t tsc = step_tsc(c->idx[0]);
	uint64_t ip0 = steps[c->idx[0]].ip;

	s->tid = c->tid;
	if (stream_start)
		psb_plus(s, tsc, 0);
	else
		tsc_pkt(s, tsc);
	if (O->percpu)
		s->nrs = 0; /* another thread may have run: no compressed returns across */
	if (user && (c->first || O->percpu)) {
		/* the thread starts, or is switched in after its syscall */
		expect(s, "tr strt", 0, ip0);
		ip_pkt(s, ppt_tip_pge, ip0);
	}
	for (size_t j = 0; j < c->n; j++) {
		size_t i = c->tpos + j; /* position within the thread */
		uint64_t ip = steps[c->idx[j]].ip;
		uint64_t next = j + 1 < c->n ? steps[c->idx[j + 1]].ip : c->next;
		const struct ptsynth_insn *in = ptsynth_imap_find(imap, ip);
		int end_of_chunk = j + 1 == c->n;

		if (!in) {
			fprintf(stderr, "mkptdata: no instruction at %#" PRIx64 "\n", ip);
			return -ENOENT;
		}
		tsc = step_tsc(c->idx[j]);
		C.insns++;
		tick(s, tsc);
		if (s->ovf_skip > 0) { /* lost in an overflow */
			if (--s->ovf_skip == 0 && !end_of_chunk) {
				tsc_pkt(s, tsc + 500);
				ip_pkt(s, ppt_fup, next); /* resync: perf starts again at next */
			}
			continue;
		}
		if (user && stream_offset(s) - s->last_psb >= (uint64_t)O->psb_every)
			psb_plus(s, tsc, ip);
		if (user && O->tsc_every > 0 && i && i % (size_t)O->tsc_every == 0)
			tsc_pkt(s, tsc);
		if (O->ovf_at > 0 && i == (size_t)O->ovf_at && j + OVF_LOST + 2 < c->n) {
			flush_tnt(s);
			put0(s, ppt_ovf);
			if (s->exp && !s->lost) {
				pend_commit(s, s->tnt_mark, 1);
				fprintf(s->exp, "%" PRIu32 " error\n", s->tid);
			}
			s->lost = LOST_SYNC;
			s->nrs = 0;
			s->ovf_skip = OVF_LOST;
			j--; /* this instruction is the first lost one */
			continue;
		}
		if (end_of_chunk && c->last && c->cut) {
			/* the snapshot ends: perf decodes up to the last packet */
			flush_tnt(s);
			pend_commit(s, 0, 1);
			break;
		}
		if (end_of_chunk && c->last) { /* the thread's exit */
			if (in->kind != PTSYNTH_SYSCALL) {
				fprintf(stderr,
					"mkptdata: thread %" PRIu32 " ends at %#" PRIx64
					", not a syscall\n",
					s->tid, ip);
				return -EPROTO;
			}
			if (user) {
				expect(s, "tr end syscall", ip, 0);
				ip_pkt(s, ppt_tip_pgd, 0);
			}
			break;
		}
		uint64_t fall = ip + in->len;
		if (user) {
			switch (in->kind) {
			case PTSYNTH_JCC:
				if (next != fall)
					expect(s, "jcc", ip, next);
				tnt(s, next != fall);
				C.branches++;
				break;
			case PTSYNTH_JMP:
				expect(s, "jmp", ip, next);
				C.branches++;
				break;
			case PTSYNTH_JMPI:
				expect(s, "jmp", ip, next);
				tip(s, next);
				C.branches++;
				break;
			case PTSYNTH_CALL:
			case PTSYNTH_CALLI:
				/* perf misses the calls it cannot decode after an error */
				if (!s->lost && rs_push(s, fall) < 0)
					return -ENOMEM;
				expect(s, "call", ip, next);
				if (in->kind == PTSYNTH_CALLI)
					tip(s, next);
				C.branches++;
				break;
			case PTSYNTH_RET:
				if (O->retcomp && s->nrs && s->rs[s->nrs - 1] == next) {
					s->nrs--;
					expect(s, "return", ip, next);
					tnt(s, 1);
				} else {
					s->nrs -= s->nrs > 0;
					expect(s, "return", ip, next);
					tip(s, next);
				}
				C.branches++;
				break;
			default:
				break;
			}
		}
		if (in->kind == PTSYNTH_SYSCALL) {
			C.syscalls++;
			if (O->scope == SCOPE_U) {
				expect(s, "tr end syscall", ip, 0);
				ip_pkt(s, ppt_tip_pgd, 0);
				if (!(end_of_chunk && O->percpu)) {
					tsc_pkt(s, tsc + 500);
					expect(s, "tr strt", 0, next);
					ip_pkt(s, ppt_tip_pge, next);
				}
			} else {
				uint64_t kentry = k->sys_path[0], kret = k->sys_path[k->nsys - 1];
				if (O->scope == SCOPE_UK) {
					expect(s, "syscall", ip, kentry);
					ip_pkt(s, ppt_tip, kentry);
				} else {
					tsc_pkt(s, tsc + 100);
					expect(s, "tr strt", 0, kentry);
					ip_pkt(s, ppt_tip_pge, kentry);
				}
				tsc += 100;
				kernel_path(s, k, k->sys_path, k->nsys, &tsc);
				if (O->scope == SCOPE_UK) {
					expect(s, "sysret", kret, next);
					ip_pkt(s, ppt_tip, next);
				} else {
					expect(s, "tr end sysret", kret, 0);
					ip_pkt(s, ppt_tip_pgd, 0);
				}
			}
		} else if (in->kind == PTSYNTH_OTHER || in->kind == PTSYNTH_FAR) {
			if (next != fall) {
				fprintf(stderr,
					"mkptdata: thread %" PRIu32 ": %#" PRIx64 " -> %#" PRIx64
					" is not a branch\n",
					s->tid, ip, next);
				return -EPROTO;
			}
		}
		if (O->irq_every && i % (size_t)O->irq_every == (size_t)O->irq_every - 1 &&
		    in->kind != PTSYNTH_SYSCALL && !end_of_chunk) {
			C.irqs++;
			if (O->scope == SCOPE_U) {
				ip_pkt(s, ppt_fup, next);
				expect(s, "tr end async", next, 0);
				ip_pkt(s, ppt_tip_pgd, 0);
				tsc_pkt(s, tsc + 300);
				expect(s, "tr strt", 0, next);
				ip_pkt(s, ppt_tip_pge, next);
			} else {
				uint64_t kentry = k->irq_path[0], kret = k->irq_path[k->nirq - 1];
				if (O->scope == SCOPE_UK) {
					ip_pkt(s, ppt_fup, next);
					expect(s, "hw int", next, kentry);
					ip_pkt(s, ppt_tip, kentry);
				} else {
					tsc_pkt(s, tsc + 100);
					expect(s, "tr strt", 0, kentry);
					ip_pkt(s, ppt_tip_pge, kentry);
				}
				tsc += 100;
				kernel_path(s, k, k->irq_path, k->nirq, &tsc);
				if (O->scope == SCOPE_UK) {
					expect(s, "iret", kret, next);
					ip_pkt(s, ppt_tip, next);
				} else {
					expect(s, "tr end iret", kret, 0);
					ip_pkt(s, ppt_tip_pgd, 0);
				}
			}
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ perf.data */

struct out {
	uint8_t *data;
	size_t len, cap;
	int err;
};

struct sid { /* sample_id_all trailer for TID|TIME|CPU|IDENTIFIER */
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

static void emit(struct out *o, const void *p, size_t n)
{
	if (o->err)
		return;
	if (o->len + n > o->cap) {
		size_t cap = (o->len + n) * 2;
		void *d = realloc(o->data, cap);
		if (!d) {
			o->err = -ENOMEM;
			return;
		}
		o->data = d;
		o->cap = cap;
	}
	memcpy(o->data + o->len, p, n);
	o->len += n;
}

/* perf's tsc_to_perf_time with the -t parameters (sideband times are perf times). */
static uint64_t perf_time(uint64_t tsc)
{
	uint64_t quot = tsc >> O->tshift, rem = tsc & ((1ULL << O->tshift) - 1);

	return O->tzero + quot * O->tmult + ((rem * O->tmult) >> O->tshift);
}

static struct sid mksid(uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	struct sid s = {pid, tid, time ? perf_time(time) : 0, cpu, 0, EVT_ID};
	return s;
}

static void emit_auxtrace_info(struct out *o)
{
	uint64_t priv[17] = {0};
	struct {
		struct perf_event_header h;
		uint32_t type, res;
	} hdr;

	priv[0] = PT_PMU_TYPE;		  /* PMU_TYPE */
	priv[1] = O->tshift;		  /* TIME_SHIFT: perf time = tsc * MULT >> SHIFT + ZERO */
	priv[2] = O->tmult;		  /* TIME_MULT */
	priv[3] = O->tzero;		  /* TIME_ZERO */
	priv[4] = 1;			  /* CAP_USER_TIME_ZERO */
	priv[5] = CFG_TSC;		  /* TSC_BIT */
	priv[6] = CFG_NORETCMP;		  /* NORETCOMP_BIT */
	priv[7] = O->percpu ? 3 : 0;	  /* HAVE_SCHED_SWITCH: 3 = context_switch records */
	priv[8] = (uint64_t)O->snapshot;  /* SNAPSHOT_MODE */
	priv[9] = O->percpu ? 1 : 0;	  /* PER_CPU_MMAPS */
	priv[10] = 1ULL << 9;		  /* MTC_BIT */
	priv[11] = 0xfULL << 14;	  /* MTC_FREQ_BITS */
	priv[12] = O->mtc ? O->ctc_n : 1; /* TSC_CTC_N */
	priv[13] = O->mtc ? O->ctc_d : 1; /* TSC_CTC_D */
	priv[14] = 1ULL << 1;		  /* CYC_BIT */
	priv[15] = 20;			  /* MAX_NONTURBO_RATIO */
	priv[16] = 0;			  /* FILTER_STR_LEN */
	memset(&hdr, 0, sizeof hdr);
	hdr.h.type = PERF_RECORD_AUXTRACE_INFO;
	hdr.h.size = sizeof hdr + sizeof priv;
	hdr.type = 1; /* PERF_AUXTRACE_INTEL_PT */
	emit(o, &hdr, sizeof hdr);
	emit(o, priv, sizeof priv);
}

static void emit_comm(struct out *o, uint32_t pid, uint32_t tid, const char *comm, struct sid sid)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[16];
	} r;

	memset(&r, 0, sizeof r);
	r.h.type = PERF_RECORD_COMM;
	r.h.size = sizeof r + sizeof sid;
	r.pid = pid;
	r.tid = tid;
	snprintf(r.comm, sizeof r.comm, "%s", comm);
	emit(o, &r, sizeof r);
	emit(o, &sid, sizeof sid);
}

static void emit_mmap(struct out *o, uint32_t pid, uint32_t tid, uint16_t misc, uint64_t start,
		      uint64_t len, uint64_t pgoff, const char *path, struct sid sid)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
	} r;
	char fn[PATH_MAX + 8];
	size_t fnlen = (strlen(path) + 1 + 7) & ~(size_t)7;

	memset(&r, 0, sizeof r);
	memset(fn, 0, sizeof fn);
	snprintf(fn, sizeof fn, "%s", path);
	r.h.type = PERF_RECORD_MMAP;
	r.h.misc = misc;
	r.h.size = (uint16_t)(sizeof r + fnlen + sizeof sid);
	r.pid = pid;
	r.tid = tid;
	r.start = start;
	r.len = len;
	r.pgoff = pgoff;
	emit(o, &r, sizeof r);
	emit(o, fn, fnlen);
	emit(o, &sid, sizeof sid);
}

static void emit_pid_tid(struct out *o, uint32_t type, uint32_t pid, uint32_t tid, struct sid sid)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
	} r = {{type, 0, 0}, pid, tid};

	r.h.size = sizeof r + sizeof sid;
	emit(o, &r, sizeof r);
	emit(o, &sid, sizeof sid);
}

/* PERF_RECORD_FORK or _EXIT of tid (of process pid). */
static void emit_task(struct out *o, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
		      uint32_t ptid, uint64_t time, uint32_t cpu)
{
	struct sid sd = mksid(pid, tid, time, cpu);
	struct {
		struct perf_event_header h;
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
	} r = {{type, 0, 0}, pid, ppid, tid, ptid, sd.time};

	r.h.size = sizeof r + sizeof sd;
	emit(o, &r, sizeof r);
	emit(o, &sd, sizeof sd);
}

/* PERF_RECORD_SWITCH_CPU_WIDE: out of sid's thread to (pid, tid), or into it from them. */
static void emit_switch(struct out *o, int out, uint32_t pid, uint32_t tid, struct sid sid)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
	} r = {{PERF_RECORD_SWITCH_CPU_WIDE, 0, 0}, pid, tid};

	r.h.misc = out ? PERF_RECORD_MISC_SWITCH_OUT : 0;
	r.h.size = sizeof r + sizeof sid;
	emit(o, &r, sizeof r);
	emit(o, &sid, sizeof sid);
}

/*
 * PERF_RECORD_AUXTRACE records holding the stream: one, or with -B one more at
 * each PSB that psb_plus() chose (perf 6.1 on 64-bit does not join a packet
 * split between two records, so cuts are at packet boundaries). Each record is
 * padded to 8 bytes with PAD packets. Appends their file offsets to *offs.
 */
static int emit_auxtrace(struct out *o, const struct stream *s, uint32_t idx, uint32_t tid,
			 uint32_t cpu, size_t **offs, size_t *noffs)
{
	struct {
		struct perf_event_header h;
		uint64_t size, offset, reference;
		uint32_t idx, tid, cpu, res;
	} r;
	static const uint8_t zeros[8];
	size_t at = 0, aux_off = 0, k = 0;

	do {
		size_t n = (k < s->npsb ? s->psbs[k++] : s->size) - at;
		size_t pad = (n + 7) & ~(size_t)7;
		void *v = realloc(*offs, (*noffs + 1) * sizeof **offs);
		if (!v)
			return -ENOMEM;
		*offs = v;
		(*offs)[(*noffs)++] = o->len;
		memset(&r, 0, sizeof r);
		r.h.type = PERF_RECORD_AUXTRACE;
		r.h.size = sizeof r; /* the data that follows is not counted */
		r.size = pad;
		r.offset = aux_off;
		r.reference = 0x1234 + ((uint64_t)idx << 32) + *noffs;
		r.idx = idx;
		r.tid = tid;
		r.cpu = cpu;
		emit(o, &r, sizeof r);
		emit(o, s->buf + at, n);
		emit(o, zeros, pad - n);
		at += n;
		aux_off += pad;
	} while (at < s->size);
	return o->err;
}

static int write_file(const char *path, const struct out *o, const size_t *aux_offs, size_t naux,
		      const struct out *bids)
{
	struct perf_event_attr attr;
	struct {
		uint64_t magic, size, attr_size;
		uint64_t attrs[2], data[2], event_types[2];
		uint64_t feat[4];
	} fh;
	int err = 0;

	memset(&attr, 0, sizeof attr);
	attr.type = PT_PMU_TYPE;
	attr.size = sizeof attr;
	attr.config = (O->timeless ? 0 : CFG_TSC) | (O->retcomp ? 0 : CFG_NORETCMP) |
		      (O->cyc ? CFG_CYC | CFG_CYC_THR1 : 0) |
		      (O->mtc ? CFG_MTC | (uint64_t)O->mtc_period << CFG_MTC_SHIFT : 0);
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			   PERF_SAMPLE_IDENTIFIER;
	attr.read_format = PERF_FORMAT_ID;
	attr.exclude_kernel = O->scope == SCOPE_U;
	attr.exclude_user = O->scope == SCOPE_K;
	attr.exclude_hv = 1;
	attr.sample_id_all = 1;
	attr.mmap = 1;
	attr.comm = 1;
	attr.task = 1;
	attr.context_switch = O->percpu ? 1 : 0;

	memset(&fh, 0, sizeof fh);
	fh.magic = 0x32454c4946524550ULL; /* "PERFILE2" */
	fh.size = sizeof fh;
	fh.attr_size = sizeof attr + 16;
	uint64_t ids_off = sizeof fh + fh.attr_size;
	fh.attrs[0] = sizeof fh;
	fh.attrs[1] = fh.attr_size;
	fh.data[0] = ids_off + 8;
	fh.data[1] = o->len;
	fh.feat[0] = 1ULL << 18; /* HEADER_AUXTRACE: an index of the AUXTRACE records */
	if (bids->len)
		fh.feat[0] |= 1ULL << 2; /* HEADER_BUILD_ID (-b) */

	FILE *f = fopen(path, "wb");
	if (!f)
		return -errno;
	uint64_t idsec[2] = {ids_off, 8}, id = EVT_ID;
	fwrite(&fh, sizeof fh, 1, f);
	fwrite(&attr, sizeof attr, 1, f);
	fwrite(idsec, sizeof idsec, 1, f);
	fwrite(&id, sizeof id, 1, f);
	fwrite(o->data, 1, o->len, f);
	/* Feature section table (one entry), then HEADER_AUXTRACE: u64 nr; {offset, sz}[nr]
	 * where sz is the record's header.size (48), not header + data. */
	/* Feature sections in bit order: HEADER_BUILD_ID (-b), then HEADER_AUXTRACE. */
	uint64_t feat_tab = fh.data[0] + o->len, nfeat = bids->len ? 2 : 1;
	uint64_t sec[2] = {feat_tab + 16 * nfeat + bids->len, 8 + 16 * (uint64_t)naux}, nr = naux;
	if (bids->len) {
		uint64_t bsec[2] = {feat_tab + 16 * nfeat, bids->len};
		fwrite(bsec, sizeof bsec, 1, f);
	}
	fwrite(sec, sizeof sec, 1, f);
	if (bids->len)
		fwrite(bids->data, 1, bids->len, f);
	fwrite(&nr, sizeof nr, 1, f);
	for (size_t t = 0; t < naux; t++) {
		uint64_t ent[2] = {fh.data[0] + aux_offs[t], 48};
		fwrite(ent, sizeof ent, 1, f);
	}
	if (ferror(f))
		err = -EIO;
	if (fclose(f) != 0 && !err)
		err = -EIO;
	return err;
}

/*
 * perf record --kcore's copy of the kernel: kcore_dir/kcore, an ELF core file
 * whose PT_LOAD segments hold the kernel's code at its addresses (here the
 * pretend kernel's loadable segments), kallsyms (insnmap -k's KPREFIX.kallsyms)
 * and modules (none).
 */
static int write_kcore_dir(const char *dir, const char *image, const char *kprefix)
{
	char path[PATH_MAX + 32];
	FILE *in = NULL, *out = NULL;
	Elf64_Ehdr eh, ch;
	Elf64_Phdr ph[16], cp[16];
	int n = 0, err = 0;

	snprintf(path, sizeof path, "%s/kcore_dir", dir);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (!(in = fopen(image, "rb")))
		return -errno;
	if (fread(&eh, sizeof eh, 1, in) != 1 || eh.e_phnum > 16 ||
	    fseek(in, (long)eh.e_phoff, SEEK_SET) < 0 ||
	    fread(ph, sizeof ph[0], eh.e_phnum, in) != eh.e_phnum) {
		err = -EINVAL;
		goto out;
	}
	memset(&ch, 0, sizeof ch);
	memcpy(ch.e_ident, eh.e_ident, EI_NIDENT);
	ch.e_type = ET_CORE;
	ch.e_machine = eh.e_machine;
	ch.e_version = EV_CURRENT;
	ch.e_phoff = sizeof ch;
	ch.e_ehsize = sizeof ch;
	ch.e_phentsize = sizeof(Elf64_Phdr);
	uint64_t off = 4096;
	for (int i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X) || !ph[i].p_filesz)
			continue;
		cp[n] = ph[i];
		cp[n].p_offset = off;
		cp[n].p_flags = PF_R | PF_W | PF_X; /* as /proc/kcore */
		off += (ph[i].p_filesz + 4095) & ~4095ULL;
		n++;
	}
	ch.e_phnum = (uint16_t)n;
	snprintf(path, sizeof path, "%s/kcore_dir/kcore", dir);
	if (!(out = fopen(path, "wb"))) {
		err = -errno;
		goto out;
	}
	fwrite(&ch, sizeof ch, 1, out);
	fwrite(cp, sizeof cp[0], (size_t)n, out);
	for (int i = 0, k = 0; i < eh.e_phnum && !err; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X) || !ph[i].p_filesz)
			continue;
		char *buf = malloc(ph[i].p_filesz);
		if (!buf || fseek(in, (long)ph[i].p_offset, SEEK_SET) < 0 ||
		    fread(buf, 1, ph[i].p_filesz, in) != ph[i].p_filesz ||
		    fseek(out, (long)cp[k].p_offset, SEEK_SET) < 0 ||
		    fwrite(buf, 1, ph[i].p_filesz, out) != ph[i].p_filesz)
			err = buf ? -EIO : -ENOMEM;
		free(buf);
		k++;
	}
	if (fclose(out) != 0 && !err)
		err = -EIO;
	out = NULL;
	if (err)
		goto out;
	/* kallsyms: insnmap's list; modules: empty (no module is mapped) */
	char line[512];
	FILE *ks;
	snprintf(path, sizeof path, "%s.kallsyms", kprefix);
	if (!(ks = fopen(path, "r"))) {
		err = -errno;
		goto out;
	}
	snprintf(path, sizeof path, "%s/kcore_dir/kallsyms", dir);
	if (!(out = fopen(path, "w"))) {
		err = -errno;
		fclose(ks);
		goto out;
	}
	while (fgets(line, sizeof line, ks))
		fputs(line, out);
	fclose(ks);
	if (fclose(out) != 0)
		err = -EIO;
	out = NULL;
	snprintf(path, sizeof path, "%s/kcore_dir/modules", dir);
	if (!err && (!(out = fopen(path, "w")) || fclose(out) != 0))
		err = -EIO;
	out = NULL;
out:
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	return err;
}

/* ------------------------------------------------------------------ main */

static int kimage_load(struct kimage *k, const char *prefix)
{
	char path[PATH_MAX + 16], line[8192];
	int err = 0;

	memset(k, 0, sizeof *k);
	snprintf(path, sizeof path, "%s.insn", prefix);
	err = ptsynth_imap_load(&k->imap, path);
	if (err < 0)
		return err;
	snprintf(path, sizeof path, "%s.kimg", prefix);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof line, f)) {
		char *save = NULL, *w = strtok_r(line, " \n", &save);
		uint64_t **pv = NULL;
		size_t *pn = NULL;
		if (!w)
			continue;
		if (!strcmp(w, "path")) {
			w = strtok_r(NULL, " \n", &save);
			if (!w)
				goto bad;
			snprintf(k->path, sizeof k->path, "%s", w);
			continue;
		}
		if (!strcmp(w, "map")) {
			if (sscanf(save, "%" SCNx64 " %" SCNx64 " %" SCNx64, &k->start, &k->end,
				   &k->pgoff) != 3)
				goto bad;
			continue;
		}
		if (!strcmp(w, "sys")) {
			pv = &k->sys_path;
			pn = &k->nsys;
		} else if (!strcmp(w, "irq")) {
			pv = &k->irq_path;
			pn = &k->nirq;
		} else {
			goto bad;
		}
		while ((w = strtok_r(NULL, " \n", &save))) {
			void *v = reallocarray(*pv, *pn + 1, sizeof **pv);
			if (!v) {
				err = -ENOMEM;
				goto out;
			}
			*pv = v;
			(*pv)[(*pn)++] = strtoull(w, NULL, 16);
		}
	}
	if (!k->path[0] || k->nsys < 2 || k->nirq < 2)
		goto bad;
	goto out;
bad:
	err = -EINVAL;
out:
	fclose(f);
	return err;
}

static void kimage_fini(struct kimage *k)
{
	free(k->sys_path);
	free(k->irq_path);
	ptsynth_imap_fini(&k->imap);
}

struct thread {
	uint32_t tid;
	size_t *idx; /* global step indexes */
	size_t n;
};

/* Everything one run of mkptdata reads, builds and owns. */
struct job {
	struct opts opts;
	const char *prefix, *outpath, *exppath;
	char what[PATH_MAX + 16]; /* what failed, for the message */
	struct ptsynth_step *steps;
	size_t nsteps;
	struct ptsynth_maps maps;
	struct ptsynth_imap imap;
	struct kimage kimg;
	int have_k;
	struct thread th[MAX_THREADS];
	size_t nth;
	struct chunk *chunks;
	size_t nchunks;
	struct stream *streams;
	size_t nstreams;
	FILE *exp;
	struct out o;
	size_t *aux_offs, naux; /* file offsets of the AUXTRACE records */
};

static int usage(void)
{
	fprintf(stderr, "usage: mkptdata -p PREFIX -o OUT.data [-e EXPECT] [-r] [-T] [-k N] [-P N] "
			"[-S] [-g N] [-I N] [-c N] [-O N] [-C] [-n NCPU] [-s u|k|uk] [-K KPREFIX] "
			"[-V] [-D] [-B N] [-Y] [-m] [-M N] [-R N:D] [-F|-G] [-t M:S:Z] "
			"[-w FROM:TO] [-f] [-x]\n");
	return 2;
}

/* Returns 0, or 2 after printing the usage. */
static int parse_args(struct job *j, int argc, char **argv)
{
	struct opts *o = &j->opts;
	int c;

	o->ctc_n = CTC_TICK;
	o->ctc_d = 1;
	o->tmult = 1;
	while ((c = getopt(argc, argv, "p:o:e:rTk:P:Sg:I:c:O:Cn:s:K:VDb:B:YmM:R:FGt:w:fx")) != -1) {
		switch (c) {
		case 'p':
			j->prefix = optarg;
			break;
		case 'o':
			j->outpath = optarg;
			break;
		case 'e':
			j->exppath = optarg;
			break;
		case 'r':
			o->retcomp = 1;
			break;
		case 'T':
			o->timeless = 1;
			break;
		case 'k':
			o->tsc_every = atoi(optarg);
			break;
		case 'P':
			o->psb_every = atoi(optarg);
			break;
		case 'S':
			o->snapshot = 1;
			break;
		case 'g':
			o->garbage = atoi(optarg);
			break;
		case 'I':
			o->irq_every = atoi(optarg);
			break;
		case 'c':
			o->corrupt_at = atoi(optarg);
			break;
		case 'O':
			o->ovf_at = atoi(optarg);
			break;
		case 'C':
			if (!o->percpu)
				o->percpu = 1;
			break;
		case 'n':
			o->percpu = atoi(optarg);
			if (o->percpu < 1 || o->percpu > MAX_THREADS)
				return usage();
			break;
		case 's':
			if (!strcmp(optarg, "u"))
				o->scope = SCOPE_U;
			else if (!strcmp(optarg, "k"))
				o->scope = SCOPE_K;
			else if (!strcmp(optarg, "uk"))
				o->scope = SCOPE_UK;
			else
				return usage();
			break;
		case 'K':
			o->kprefix = optarg;
			break;
		case 'V':
			o->vmlinux = 1;
			break;
		case 'D':
			o->vmlinux = o->kcore = 1;
			break;
		case 'b':
			o->vmlinux = 1;
			o->bidhome = optarg;
			break;
		case 'Y':
			o->cyc = o->mtc = 1;
			break;
		case 'm':
			o->mtc = 1;
			break;
		case 'M':
			o->mtc_period = atoi(optarg);
			if (o->mtc_period < 0 || o->mtc_period > 15)
				return usage();
			break;
		case 'R':
			if (sscanf(optarg, "%" SCNu64 ":%" SCNu64, &o->ctc_n, &o->ctc_d) != 2 ||
			    !o->ctc_n || !o->ctc_d)
				return usage();
			break;
		case 'F':
			o->fine = 1;
			break;
		case 'G':
			o->fine = 2;
			break;
		case 't':
			if (sscanf(optarg, "%" SCNu64 ":%" SCNu64 ":%" SCNu64, &o->tmult,
				   &o->tshift, &o->tzero) != 3 ||
			    !o->tmult || o->tshift > 31)
				return usage();
			break;
		case 'w':
			if (sscanf(optarg, "%zu:%zu", &o->win_from, &o->win_to) != 2 ||
			    o->win_from >= o->win_to)
				return usage();
			break;
		case 'f':
			o->fork = 1;
			break;
		case 'x':
			o->remap = 1;
			break;
		case 'B':
			o->piece = (size_t)atoi(optarg);
			if (o->piece == 0)
				return usage();
			break;
		default:
			return usage();
		}
	}
	if (!j->prefix || !j->outpath || optind != argc || o->garbage < 0 || o->psb_every < 64 ||
	    o->tsc_every < 0 || o->irq_every < 0 || (o->scope != SCOPE_U && !o->kprefix) ||
	    (o->kcore && !o->kprefix) || (o->corrupt_at && (o->irq_every || o->scope != SCOPE_U)) ||
	    (o->percpu && (o->scope != SCOPE_U || o->corrupt_at || o->ovf_at || o->timeless)))
		return usage();
	return 0;
}

static int job_load(struct job *j)
{
	int err;

	snprintf(j->what, sizeof j->what, "%s.steps", j->prefix);
	if ((err = ptsynth_steps_load(j->what, &j->steps, &j->nsteps)) < 0)
		return err;
	if (j->nsteps == 0)
		return -EINVAL;
	snprintf(j->what, sizeof j->what, "%s.maps", j->prefix);
	if ((err = ptsynth_maps_load(&j->maps, j->what)) < 0)
		return err;
	if (j->maps.n == 0)
		return -EINVAL;
	snprintf(j->what, sizeof j->what, "%s.insn", j->prefix);
	if ((err = ptsynth_imap_load(&j->imap, j->what)) < 0)
		return err;
	if (j->opts.kprefix) {
		snprintf(j->what, sizeof j->what, "%s.kimg", j->opts.kprefix);
		if ((err = kimage_load(&j->kimg, j->opts.kprefix)) < 0)
			return err;
		j->have_k = 1;
	}
	return 0;
}

/* Splits the steps by thread (in order of appearance), then each thread into
 * chunks that end at a syscall or at the thread's end. */
static int job_split(struct job *j)
{
	int cut[MAX_THREADS] = {0};

	snprintf(j->what, sizeof j->what, "%s", j->prefix);
	for (size_t g = 0; g < j->nsteps; g++) {
		size_t t = 0;
		if (g < j->opts.win_from || g >= j->opts.win_to)
			continue;
		while (t < j->nth && j->th[t].tid != j->steps[g].tid)
			t++;
		if (t == j->nth) {
			if (j->nth == MAX_THREADS)
				return -E2BIG;
			j->th[t].tid = j->steps[g].tid;
			j->th[t].idx = malloc(j->nsteps * sizeof(size_t));
			if (!j->th[t].idx)
				return -ENOMEM;
			j->nth++;
		}
		j->th[t].idx[j->th[t].n++] = g;
	}
	if (j->nth == 0)
		return -EINVAL; /* an empty window */
	for (size_t g = j->opts.win_to; g < j->nsteps; g++)
		for (size_t t = 0; t < j->nth; t++)
			cut[t] |= j->th[t].tid == j->steps[g].tid;
	j->chunks = calloc(j->nsteps, sizeof *j->chunks);
	TIX = malloc(j->nsteps * sizeof *TIX);
	if (!j->chunks || !TIX)
		return -ENOMEM;
	for (size_t g = 0; g < j->nsteps; g++)
		TIX[g] = g;
	for (size_t t = 0; t < j->nth; t++) {
		const struct thread *th = &j->th[t];
		size_t b = 0;
		for (size_t i = 0; i < th->n; i++) {
			const struct ptsynth_insn *in =
				ptsynth_imap_find(&j->imap, j->steps[th->idx[i]].ip);
			if (!(in && in->kind == PTSYNTH_SYSCALL) && i + 1 < th->n)
				continue;
			struct chunk *ck = &j->chunks[j->nchunks++];
			ck->tid = th->tid;
			ck->idx = th->idx + b;
			ck->n = i + 1 - b;
			ck->tpos = b;
			ck->first = b == 0;
			ck->last = i + 1 == th->n;
			ck->cut = ck->last && cut[t];
			ck->next = ck->last ? 0 : j->steps[th->idx[i + 1]].ip;
			b = i + 1;
		}
	}
	if (j->opts.percpu) { /* run the chunks in the order they started, re-timed */
		struct chunk *c = j->chunks;
		for (size_t a = 1; a < j->nchunks; a++) /* insertion sort by first step, stable */
			for (size_t b = a; b > 0 && c[b - 1].idx[0] > c[b].idx[0]; b--) {
				struct chunk tmp = c[b];
				c[b] = c[b - 1];
				c[b - 1] = tmp;
			}
		size_t slot = 0;
		for (size_t k = 0; k < j->nchunks; k++) {
			c[k].cpu = (uint32_t)(k % (size_t)j->opts.percpu);
			for (size_t i = 0; i < c[k].n; i++)
				TIX[c[k].idx[i]] = slot++;
			slot += 2; /* room for the context switch */
		}
	}
	return 0;
}

/* Encodes the PT streams: one per thread, or one for CPU 0 with -C. */
static int job_encode(struct job *j)
{
	const struct kimage *k = j->have_k ? &j->kimg : NULL;
	int err;

	if (j->exppath && !(j->exp = fopen(j->exppath, "w"))) {
		snprintf(j->what, sizeof j->what, "%s", j->exppath);
		return -errno;
	}
	snprintf(j->what, sizeof j->what, "%s", j->prefix);
	j->nstreams = j->opts.percpu ? (size_t)j->opts.percpu : j->nth;
	j->streams = calloc(j->nstreams, sizeof *j->streams);
	if (!j->streams)
		return -ENOMEM;
	for (size_t t = 0; t < j->nstreams; t++) {
		size_t insns = j->opts.percpu ? j->nsteps : j->th[t].n;
		err = stream_init(&j->streams[t], insns, j->nchunks, j->th[t].tid, j->exp);
		if (err < 0)
			return err;
	}
	if (j->opts.percpu) {
		/* In time order: a chunk ends with TIP.PGD, so every thread's
		 * expectations come out in its order whatever CPU it ran on. */
		for (size_t c = 0; c < j->nchunks; c++) {
			struct stream *s = &j->streams[j->chunks[c].cpu];
			int start = stream_offset(s) == 0;
			if ((err = encode_chunk(s, &j->imap, k, j->steps, &j->chunks[c], start)) <
			    0)
				return err;
		}
	} else { /* thread by thread, so each thread's expectations are in its order */
		for (size_t t = 0; t < j->nth; t++)
			for (size_t c = 0; c < j->nchunks; c++)
				if (j->chunks[c].tid == j->th[t].tid &&
				    (err = encode_chunk(&j->streams[t], &j->imap, k, j->steps,
							&j->chunks[c], j->chunks[c].first)) < 0)
					return err;
	}
	for (size_t t = 0; t < j->nstreams; t++)
		if ((err = stream_fini(&j->streams[t])) < 0)
			return err;
	return 0;
}

/* sstep -d's copy of the vdso, which perf knows as [vdso]. */
static int is_vdso_copy(const char *path)
{
	size_t l = strlen(path);
	return l > 5 && !strcmp(path + l - 5, ".vdso");
}

/* The GNU build id of an ELF file (its PT_NOTE segments). Returns its length or 0. */
static size_t file_build_id(const char *path, uint8_t id[20])
{
	FILE *f = fopen(path, "rb");
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	size_t len = 0;

	if (!f)
		return 0;
	if (fread(&eh, sizeof eh, 1, f) != 1)
		goto out;
	for (int i = 0; i < eh.e_phnum && !len; i++) {
		uint8_t nb[256];
		if (fseek(f, (long)(eh.e_phoff + (uint64_t)i * sizeof ph), SEEK_SET) < 0 ||
		    fread(&ph, sizeof ph, 1, f) != 1)
			break;
		if (ph.p_type != PT_NOTE || ph.p_filesz > sizeof nb ||
		    fseek(f, (long)ph.p_offset, SEEK_SET) < 0 ||
		    fread(nb, 1, ph.p_filesz, f) != ph.p_filesz)
			continue;
		for (size_t q = 0; q + 12 <= ph.p_filesz;) {
			uint32_t nsz, dsz, type;
			memcpy(&nsz, nb + q, 4);
			memcpy(&dsz, nb + q + 4, 4);
			memcpy(&type, nb + q + 8, 4);
			size_t an = (nsz + 3) & ~3u, ad = (dsz + 3) & ~3u;
			if (q + 12 + an + ad > ph.p_filesz)
				break;
			if (type == 3 && nsz == 4 && !memcmp(nb + q + 12, "GNU", 4) && dsz &&
			    dsz <= 20) {
				memcpy(id, nb + q + 12 + an, dsz);
				len = dsz;
				break;
			}
			q += 12 + an + ad;
		}
	}
out:
	fclose(f);
	return len;
}

static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[65536];
	size_t n;
	int err = 0;

	if (!in || !out)
		err = -errno;
	while (!err && (n = fread(buf, 1, sizeof buf, in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			err = -EIO;
	if (in)
		fclose(in);
	if (out && fclose(out) != 0 && !err)
		err = -EIO;
	return err;
}

/* -b: file's copy in perf's build-id cache (HOME/.debug/.build-id/XX/REST/base) and
 * its perf_record_header_build_id entry (pid -1, the host) appended to *sec. */
static int bid_entry(struct out *sec, const char *file, const char *name, uint16_t misc,
		     const char *base)
{
	uint8_t id[20];
	size_t len = file_build_id(file, id);
	char hex[41], path[PATH_MAX + 128];
	struct {
		struct perf_event_header h;
		int32_t pid;
		uint8_t build_id[24];
	} b;
	size_t nl = (strlen(name) + 1 + 7) & ~(size_t)7;
	char fn[256] = "";

	if (!len) {
		fprintf(stderr, "mkptdata: %s has no build id\n", file);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	const char *parts[] = {"/.debug", "/.debug/.build-id", NULL};
	for (int i = 0; parts[i]; i++) {
		snprintf(path, sizeof path, "%s%s", O->bidhome, parts[i]);
		mkdir(path, 0700);
	}
	snprintf(path, sizeof path, "%s/.debug/.build-id/%.2s", O->bidhome, hex);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/.debug/.build-id/%.2s/%s", O->bidhome, hex, hex + 2);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof path, "%s/.debug/.build-id/%.2s/%s/%s", O->bidhome, hex, hex + 2,
		 base);
	int err = copy_file(file, path);
	if (err < 0)
		return err;
	memset(&b, 0, sizeof b);
	b.h.type = 0;
	b.h.misc = misc | (1 << 15); /* PERF_RECORD_MISC_BUILD_ID_SIZE */
	b.h.size = (uint16_t)(sizeof b + nl);
	b.pid = -1;
	memcpy(b.build_id, id, len);
	b.build_id[20] = (uint8_t)len;
	snprintf(fn, sizeof fn, "%s", name);
	emit(sec, &b, sizeof b);
	emit(sec, fn, nl);
	return sec->err;
}

/* Builds the data section: sideband records and the AUXTRACE records. */
static int job_sideband(struct job *j)
{
	struct out *o = &j->o;
	const struct opts *op = &j->opts;
	uint32_t pid = j->th[0].tid, cpu = op->percpu ? 0 : (uint32_t)-1,
		 ncpu = (uint32_t)op->percpu, mpid = op->fork ? FORK_PARENT : pid;
	uint64_t t_side = op->timeless ? 0 : TSC_START - 1000;
	const char *slash = strrchr(j->maps.v[0].path, '/');
	int err = 0;
	const char *comm = slash ? slash + 1 : j->maps.v[0].path;

	emit_auxtrace_info(o);
	if (op->fork)
		emit_comm(o, mpid, mpid, comm, mksid(mpid, mpid, t_side, cpu));
	else
		for (size_t t = 0; t < j->nth; t++)
			emit_comm(o, pid, j->th[t].tid, comm,
				  mksid(pid, j->th[t].tid, t_side, cpu));
	for (size_t m = 0; m < j->maps.n; m++)
		emit_mmap(o, mpid, mpid, PERF_RECORD_MISC_USER, j->maps.v[m].start,
			  j->maps.v[m].end - j->maps.v[m].start, j->maps.v[m].pgoff,
			  is_vdso_copy(j->maps.v[m].path) ? "[vdso]" : j->maps.v[m].path,
			  mksid(mpid, mpid, t_side, cpu));
	if (op->fork) {
		emit_task(o, PERF_RECORD_FORK, pid, mpid, pid, mpid, t_side, cpu);
		for (size_t t = 0; t < j->nth; t++)
			emit_comm(o, pid, j->th[t].tid, comm,
				  mksid(pid, j->th[t].tid, t_side, cpu));
	}
	/* The kernel image: by default mapped like a kernel module, so that perf
	 * reads its code and symbols from the file without options; with -V as
	 * perf records the kernel itself ([kernel.kallsyms]_text, pgoff = _text),
	 * which perf script then needs --vmlinux IMAGE for. */
	if (j->have_k && op->vmlinux)
		emit_mmap(o, (uint32_t)-1, 0, PERF_RECORD_MISC_KERNEL, j->kimg.start,
			  0xffffffffffffffffULL - j->kimg.start, j->kimg.pgoff,
			  "[kernel.kallsyms]_text", mksid((uint32_t)-1, 0, t_side, cpu));
	else if (j->have_k)
		emit_mmap(o, (uint32_t)-1, 0, PERF_RECORD_MISC_KERNEL, j->kimg.start,
			  j->kimg.end - j->kimg.start, 0, j->kimg.path,
			  mksid((uint32_t)-1, 0, t_side, cpu));
	if (!op->percpu)
		for (size_t t = 0; t < j->nth; t++)
			emit_pid_tid(o, PERF_RECORD_ITRACE_START, pid, j->th[t].tid,
				     mksid(pid, j->th[t].tid, t_side, cpu));
	for (uint32_t c = 0; c < ncpu && !err; c++) {
		/* ITRACE_START sets the CPU's current thread: the first to run on it.
		 * Then a switch out and in between chunks of different threads. */
		const struct chunk *prev = NULL;
		for (size_t k = 0; k < j->nchunks; k++) {
			const struct chunk *ck = &j->chunks[k];
			if (ck->cpu != c)
				continue;
			if (!prev) {
				emit_pid_tid(o, PERF_RECORD_ITRACE_START, pid, ck->tid,
					     mksid(pid, ck->tid, t_side, c));
			} else if (prev->tid != ck->tid) {
				uint64_t t0 = step_tsc(prev->idx[prev->n - 1]);
				uint64_t t1 = step_tsc(ck->idx[0]);
				emit_switch(o, 1, pid, ck->tid, mksid(pid, prev->tid, t0 + 700, c));
				emit_switch(o, 0, pid, prev->tid, mksid(pid, ck->tid, t1 - 500, c));
			}
			prev = ck;
		}
		err = emit_auxtrace(o, &j->streams[c], c, (uint32_t)-1, c, &j->aux_offs, &j->naux);
	}
	if (!op->percpu) {
		for (size_t t = 0; t < j->nth && !err; t++)
			err = emit_auxtrace(o, &j->streams[t], (uint32_t)t, j->th[t].tid,
					    (uint32_t)-1, &j->aux_offs, &j->naux);
	}
	if (err < 0)
		return err;
	if (op->remap) {
		const struct ptsynth_mapping *m = &j->maps.v[0];
		uint64_t last = 0;

		for (size_t t = 0; t < j->nth; t++)
			if (step_tsc(j->th[t].idx[j->th[t].n - 1]) > last)
				last = step_tsc(j->th[t].idx[j->th[t].n - 1]);
		emit_mmap(o, pid, pid, PERF_RECORD_MISC_USER, m->start, m->end - m->start,
			  m->pgoff + 0x1000, m->path, mksid(pid, pid, last + 500, cpu));
	}
	for (size_t t = j->nth; t-- > 0;) {
		const struct thread *th = &j->th[t];
		uint64_t te = op->timeless ? 0 : step_tsc(th->idx[th->n - 1]) + 900;

		emit_task(o, PERF_RECORD_EXIT, pid, t ? pid : 1, th->tid, t ? pid : 1, te, cpu);
	}
	return o->err;
}

static void job_fini(struct job *j)
{
	if (j->exp)
		fclose(j->exp);
	for (size_t t = 0; j->streams && t < j->nstreams; t++) {
		pt_free_encoder(j->streams[t].enc);
		free(j->streams[t].buf);
		free(j->streams[t].rs);
		free(j->streams[t].pend);
		free(j->streams[t].psbs);
	}
	free(j->streams);
	for (size_t t = 0; t < j->nth; t++)
		free(j->th[t].idx);
	free(j->chunks);
	free(TIX);
	TIX = NULL;
	free(j->o.data);
	free(j->aux_offs);
	free(j->steps);
	if (j->have_k)
		kimage_fini(&j->kimg);
	ptsynth_imap_fini(&j->imap);
	ptsynth_maps_fini(&j->maps);
}

int main(int argc, char **argv)
{
	static struct job job; /* large: not on the stack */
	struct job *j = &job;
	int err;

	j->opts = (struct opts){
		.tsc_every = 16, .psb_every = 4096, .scope = SCOPE_U, .win_to = (size_t)-1};
	O = &j->opts;
	if (parse_args(j, argc, argv))
		return 2;
	if ((err = job_load(j)) < 0 || (err = job_split(j)) < 0 || (err = job_encode(j)) < 0 ||
	    (err = job_sideband(j)) < 0)
		goto fail;
	snprintf(j->what, sizeof j->what, "%s", j->outpath);
	if (j->opts.kcore) { /* OUT/data and OUT/kcore_dir, as perf record --kcore */
		static char data[PATH_MAX + 8];
		if (mkdir(j->outpath, 0700) < 0 && errno != EEXIST) {
			err = -errno;
			goto fail;
		}
		if ((err = write_kcore_dir(j->outpath, j->kimg.path, j->opts.kprefix)) < 0)
			goto fail;
		snprintf(data, sizeof data, "%s/data", j->outpath);
		j->outpath = data;
	}
	static struct out bids; /* -b: HEADER_BUILD_ID and the build-id cache */
	if (j->opts.bidhome) {
		snprintf(j->what, sizeof j->what, "%s", j->opts.bidhome);
		if (j->have_k && (err = bid_entry(&bids, j->kimg.path, "[kernel.kallsyms]",
						  PERF_RECORD_MISC_KERNEL, "elf")) < 0)
			goto fail;
		for (size_t m = 0; m < j->maps.n; m++)
			if (is_vdso_copy(j->maps.v[m].path) &&
			    (err = bid_entry(&bids, j->maps.v[m].path, "[vdso]",
					     PERF_RECORD_MISC_USER, "vdso")) < 0)
				goto fail;
		snprintf(j->what, sizeof j->what, "%s", j->outpath);
	}
	err = write_file(j->outpath, &j->o, j->aux_offs, j->naux, &bids);
	free(bids.data);
	if (err < 0)
		goto fail;
	if (j->exp) {
		FILE *f = j->exp;
		j->exp = NULL;
		snprintf(j->what, sizeof j->what, "%s", j->exppath);
		if (fclose(f) != 0) {
			err = -EIO;
			goto fail;
		}
	}
	fprintf(stderr,
		"mkptdata: %zu insns, %zu threads, %zu branches, %zu syscalls, %zu interrupts, "
		"%zu kernel insns, %zu streams\n",
		C.insns, j->nth, C.branches, C.syscalls, C.irqs, C.kernel_insns, j->nstreams);
	job_fini(j);
	return 0;
fail:
	fprintf(stderr, "mkptdata: %s: %s\n", j->what, strerror(-err));
	job_fini(j);
	return 1;
}
