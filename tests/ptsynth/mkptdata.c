// SPDX-License-Identifier: GPL-2.0
/*
 * mkptdata: writes an Intel PT perf.data that perf decodes with its real PT
 * decoder, from a single-step trace (sstep) and its instruction map (insnmap).
 * docs/pt-testing.md explains the file; pt-synthesis.md §2.1 lists what perf
 * needs in it.
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
 *   -O N      an overflow after instruction N of each thread: OVF, 20 instructions lost
 *   -C        per-CPU recording: one stream for CPU 0 with context switch records
 *   -s SCOPE  u (default), k or uk; k and uk need -K
 *   -K PREFIX kernel image: PREFIX.kimg and PREFIX.insn from insnmap -k
 *   -V        map the kernel image as [kernel.kallsyms] (perf script --vmlinux IMAGE)
 */
#include <errno.h>
#include <intel-pt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptsynth.h"

#define PT_PMU_TYPE  8 /* any value: perf matches attr.type with AUXTRACE_INFO priv[0] */
#define CFG_TSC	     (1ULL << 10)
#define CFG_NORETCMP (1ULL << 11)
#define EVT_ID	     1ULL
#define TSC_START    1000000ULL
#define TSC_PER_INSN 1000ULL   /* room for syscall/irq/switch time between steps */
#define BOGUS_IP     0x1000ULL /* never mapped: perf fails to read code there */
#define OVF_LOST     20
#define MAX_THREADS  64

#ifndef PERF_RECORD_AUXTRACE_INFO
#define PERF_RECORD_AUXTRACE_INFO 70
#define PERF_RECORD_AUXTRACE	  71
#endif

enum scope { SCOPE_U, SCOPE_K, SCOPE_UK };
enum { LOST_WALK = 1, LOST_SYNC };

struct opts {
	int retcomp, timeless, tsc_every, psb_every, snapshot, garbage;
	int irq_every, corrupt_at, ovf_at, percpu, vmlinux;
	enum scope scope;
	const char *kprefix;
};

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
	int ntip;
	int lost; /* LOST_*: after a corruption, until perf resyncs */
	int corrupt_pending, swallow;
	char *pend; /* expected lines not yet decodable */
	size_t npend, cappend, tnt_mark;
	int ovf_skip;  /* instructions still lost in an overflow */
	int err;       /* sticky libipt error */
	uint32_t tid;  /* thread whose expectations are written */
	FILE *exp;     /* expected branches, or NULL */
	uint64_t size; /* bytes, after fini */
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
	if (s->swallow) {
		s->swallow = 0;
		return;
	}
	if (s->corrupt_pending) { /* this branch's TIP was corrupted: perf fails after it */
		snprintf(line, sizeof line,
			 "%" PRIu32 " %s %" PRIx64 " %" PRIx64 "\n%" PRIu32 " error\n", s->tid,
			 name, ip, (uint64_t)BOGUS_IP, s->tid);
		pend_add(s, line);
		pend_commit(s, s->npend, 0);
		s->corrupt_pending = 0;
		s->lost = LOST_WALK;
		return;
	}
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
			expect(s, "tr strt", 0, ip);
			/* perf reports the resync, not the branch that made this TIP */
			s->swallow = t != ppt_fup;
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
	put0(s, ppt_psb);
	mode_exec64(s);
	tsc_pkt(s, tsc);
	if (fup) {
		struct pt_packet p;
		memset(&p, 0, sizeof p);
		p.type = ppt_fup;
		p.payload.ip.ipc = pt_ipc_sext_48;
		p.payload.ip.ip = fup;
		put(s, &p);
		on_packet(s, ppt_fup, fup);
	}
	put0(s, ppt_psbend);
	s->nrs = 0; /* be conservative: no compressed return across a PSB */
	s->last_psb = stream_offset(s);
}

static void tip(struct stream *s, uint64_t ip)
{
	if (++s->ntip == O->corrupt_at && !s->lost) {
		ip_pkt(s, ppt_tip, BOGUS_IP);
		s->corrupt_pending = 1;
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

static int stream_init(struct stream *s, size_t insns, uint32_t tid, FILE *exp)
{
	struct pt_config cfg;

	memset(s, 0, sizeof *s);
	s->tid = tid;
	s->exp = exp;
	s->junk = (size_t)O->garbage;
	s->cap = s->junk + 64 * 1024 + insns * 24;
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
	return s->err < 0 ? -EIO : 0;
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
			expect(s, "call", path[j], next);
			break;
		case PTSYNTH_RET:
			tip(s, next);
			expect(s, "return", path[j], next);
			break;
		default:
			break;
		}
	}
}

/* A run of one thread's instructions, ending at a syscall or at the thread's end. */
struct chunk {
	uint32_t tid;
	size_t *idx; /* global step indexes, borrowed */
	size_t n;
	size_t tpos;   /* index of the first instruction within its thread */
	int first;     /* the thread's first chunk */
	int last;      /* the thread's last chunk: ends with its exit */
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
	if (user && (c->first || O->percpu)) {
		/* the thread starts, or is switched in after its syscall */
		ip_pkt(s, ppt_tip_pge, ip0);
		expect(s, "tr strt", 0, ip0);
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
		if (end_of_chunk && c->last) { /* the thread's exit */
			if (in->kind != PTSYNTH_SYSCALL) {
				fprintf(stderr,
					"mkptdata: thread %" PRIu32 " ends at %#" PRIx64
					", not a syscall\n",
					s->tid, ip);
				return -EPROTO;
			}
			if (user) {
				ip_pkt(s, ppt_tip_pgd, 0);
				expect(s, "tr end syscall", ip, 0);
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
				tip(s, next);
				expect(s, "jmp", ip, next);
				C.branches++;
				break;
			case PTSYNTH_CALL:
			case PTSYNTH_CALLI:
				if (rs_push(s, fall) < 0)
					return -ENOMEM;
				if (in->kind == PTSYNTH_CALLI)
					tip(s, next);
				expect(s, "call", ip, next);
				C.branches++;
				break;
			case PTSYNTH_RET:
				if (O->retcomp && s->nrs && s->rs[s->nrs - 1] == next) {
					s->nrs--;
					expect(s, "return", ip, next);
					tnt(s, 1);
				} else {
					s->nrs -= s->nrs > 0;
					tip(s, next);
					expect(s, "return", ip, next);
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
				ip_pkt(s, ppt_tip_pgd, 0);
				expect(s, "tr end syscall", ip, 0);
				if (!(end_of_chunk && O->percpu)) {
					tsc_pkt(s, tsc + 500);
					ip_pkt(s, ppt_tip_pge, next);
					expect(s, "tr strt", 0, next);
				}
			} else {
				uint64_t kentry = k->sys_path[0], kret = k->sys_path[k->nsys - 1];
				if (O->scope == SCOPE_UK) {
					ip_pkt(s, ppt_tip, kentry);
					expect(s, "syscall", ip, kentry);
				} else {
					tsc_pkt(s, tsc + 100);
					ip_pkt(s, ppt_tip_pge, kentry);
					expect(s, "tr strt", 0, kentry);
				}
				tsc += 100;
				kernel_path(s, k, k->sys_path, k->nsys, &tsc);
				if (O->scope == SCOPE_UK) {
					ip_pkt(s, ppt_tip, next);
					expect(s, "sysret", kret, next);
				} else {
					ip_pkt(s, ppt_tip_pgd, 0);
					expect(s, "tr end sysret", kret, 0);
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
				ip_pkt(s, ppt_tip_pgd, 0);
				expect(s, "tr end async", next, 0);
				tsc_pkt(s, tsc + 300);
				ip_pkt(s, ppt_tip_pge, next);
				expect(s, "tr strt", 0, next);
			} else {
				uint64_t kentry = k->irq_path[0], kret = k->irq_path[k->nirq - 1];
				if (O->scope == SCOPE_UK) {
					ip_pkt(s, ppt_fup, next);
					ip_pkt(s, ppt_tip, kentry);
					expect(s, "hw int", next, kentry);
				} else {
					tsc_pkt(s, tsc + 100);
					ip_pkt(s, ppt_tip_pge, kentry);
					expect(s, "tr strt", 0, kentry);
				}
				tsc += 100;
				kernel_path(s, k, k->irq_path, k->nirq, &tsc);
				if (O->scope == SCOPE_UK) {
					ip_pkt(s, ppt_tip, next);
					expect(s, "iret", kret, next);
				} else {
					ip_pkt(s, ppt_tip_pgd, 0);
					expect(s, "tr end iret", kret, 0);
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

static struct sid mksid(uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	struct sid s = {pid, tid, time, cpu, 0, EVT_ID};
	return s;
}

static void emit_auxtrace_info(struct out *o)
{
	uint64_t priv[17] = {0};
	struct {
		struct perf_event_header h;
		uint32_t type, res;
	} hdr;

	priv[0] = PT_PMU_TYPE;		 /* PMU_TYPE */
	priv[1] = 0;			 /* TIME_SHIFT: perf time = tsc * MULT >> SHIFT + ZERO */
	priv[2] = 1;			 /* TIME_MULT */
	priv[3] = 0;			 /* TIME_ZERO */
	priv[4] = 1;			 /* CAP_USER_TIME_ZERO */
	priv[5] = CFG_TSC;		 /* TSC_BIT */
	priv[6] = CFG_NORETCMP;		 /* NORETCOMP_BIT */
	priv[7] = O->percpu ? 3 : 0;	 /* HAVE_SCHED_SWITCH: 3 = context_switch records */
	priv[8] = (uint64_t)O->snapshot; /* SNAPSHOT_MODE */
	priv[9] = (uint64_t)O->percpu;	 /* PER_CPU_MMAPS */
	priv[10] = 1ULL << 9;		 /* MTC_BIT */
	priv[11] = 0xfULL << 14;	 /* MTC_FREQ_BITS */
	priv[12] = 1;			 /* TSC_CTC_N */
	priv[13] = 1;			 /* TSC_CTC_D */
	priv[14] = 1ULL << 1;		 /* CYC_BIT */
	priv[15] = 20;			 /* MAX_NONTURBO_RATIO */
	priv[16] = 0;			 /* FILTER_STR_LEN */
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

/* PERF_RECORD_AUXTRACE followed by the stream padded to 8 bytes; returns its offset. */
static size_t emit_auxtrace(struct out *o, const struct stream *s, uint32_t idx, uint32_t tid,
			    uint32_t cpu)
{
	struct {
		struct perf_event_header h;
		uint64_t size, offset, reference;
		uint32_t idx, tid, cpu, res;
	} r;
	size_t at = o->len, pad = (s->size + 7) & ~(size_t)7;
	static const uint8_t zeros[8];

	memset(&r, 0, sizeof r);
	r.h.type = PERF_RECORD_AUXTRACE;
	r.h.size = sizeof r; /* the data that follows is not counted */
	r.size = pad;
	r.reference = 0x1234 + idx;
	r.idx = idx;
	r.tid = tid;
	r.cpu = cpu;
	emit(o, &r, sizeof r);
	emit(o, s->buf, s->size);
	emit(o, zeros, pad - s->size); /* PAD packets */
	return at;
}

static int write_file(const char *path, const struct out *o, const size_t *aux_offs, size_t naux)
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
	attr.config = (O->timeless ? 0 : CFG_TSC) | (O->retcomp ? 0 : CFG_NORETCMP);
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
	attr.context_switch = (unsigned)O->percpu;

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
	uint64_t feat_tab = fh.data[0] + o->len;
	uint64_t sec[2] = {feat_tab + 16, 8 + 16 * (uint64_t)naux}, nr = naux;
	fwrite(sec, sizeof sec, 1, f);
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
	size_t *idx; /* global step indexes after collapsing REP iterations */
	size_t n;
};

static int usage(void)
{
	fprintf(stderr, "usage: mkptdata -p PREFIX -o OUT.data [-e EXPECT] [-r] [-T] [-k N] [-P N] "
			"[-S] [-g N] [-I N] [-c N] [-O N] [-C] [-s u|k|uk] [-K KPREFIX] [-V]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct opts opts = {.tsc_every = 16, .psb_every = 4096, .scope = SCOPE_U};
	const char *prefix = NULL, *outpath = NULL, *exppath = NULL;
	struct ptsynth_step *steps = NULL;
	struct ptsynth_maps maps = {0};
	struct ptsynth_imap imap = {0};
	struct kimage kimg;
	struct thread th[MAX_THREADS];
	struct chunk *chunks = NULL;
	struct stream *streams = NULL;
	struct out o = {0};
	size_t nsteps = 0, nth = 0, nchunks = 0, nstreams = 0, aux_offs[MAX_THREADS];
	char path[PATH_MAX + 16];
	FILE *exp = NULL;
	int c, err = 0, have_k = 0;

	memset(th, 0, sizeof th);
	O = &opts;
	while ((c = getopt(argc, argv, "p:o:e:rTk:P:Sg:I:c:O:Cs:K:V")) != -1) {
		switch (c) {
		case 'p':
			prefix = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'e':
			exppath = optarg;
			break;
		case 'r':
			opts.retcomp = 1;
			break;
		case 'T':
			opts.timeless = 1;
			break;
		case 'k':
			opts.tsc_every = atoi(optarg);
			break;
		case 'P':
			opts.psb_every = atoi(optarg);
			break;
		case 'S':
			opts.snapshot = 1;
			break;
		case 'g':
			opts.garbage = atoi(optarg);
			break;
		case 'I':
			opts.irq_every = atoi(optarg);
			break;
		case 'c':
			opts.corrupt_at = atoi(optarg);
			break;
		case 'O':
			opts.ovf_at = atoi(optarg);
			break;
		case 'C':
			opts.percpu = 1;
			break;
		case 's':
			if (!strcmp(optarg, "u"))
				opts.scope = SCOPE_U;
			else if (!strcmp(optarg, "k"))
				opts.scope = SCOPE_K;
			else if (!strcmp(optarg, "uk"))
				opts.scope = SCOPE_UK;
			else
				return usage();
			break;
		case 'K':
			opts.kprefix = optarg;
			break;
		case 'V':
			opts.vmlinux = 1;
			break;
		default:
			return usage();
		}
	}
	if (!prefix || !outpath || opts.garbage < 0 || opts.psb_every < 64 ||
	    (opts.scope != SCOPE_U && !opts.kprefix) ||
	    (opts.percpu &&
	     (opts.scope != SCOPE_U || opts.corrupt_at || opts.ovf_at || opts.timeless)))
		return usage();

	snprintf(path, sizeof path, "%s.steps", prefix);
	if ((err = ptsynth_steps_load(path, &steps, &nsteps)) < 0 || nsteps == 0)
		goto fail;
	snprintf(path, sizeof path, "%s.maps", prefix);
	if ((err = ptsynth_maps_load(&maps, path)) < 0)
		goto fail;
	snprintf(path, sizeof path, "%s.insn", prefix);
	if ((err = ptsynth_imap_load(&imap, path)) < 0)
		goto fail;
	if (opts.kprefix) {
		snprintf(path, sizeof path, "%s.kimg", opts.kprefix);
		if ((err = kimage_load(&kimg, opts.kprefix)) < 0)
			goto fail;
		have_k = 1;
	}

	/* Threads, in order of appearance; REP iterations collapsed. */
	snprintf(path, sizeof path, "%s", prefix);
	for (size_t g = 0; g < nsteps; g++) {
		size_t t = 0;
		while (t < nth && th[t].tid != steps[g].tid)
			t++;
		if (t == nth) {
			if (nth == MAX_THREADS) {
				err = -E2BIG;
				goto fail;
			}
			th[nth].tid = steps[g].tid;
			th[nth++].idx = malloc(nsteps * sizeof(size_t));
			if (!th[t].idx) {
				err = -ENOMEM;
				goto fail;
			}
		}
		if (th[t].n && steps[th[t].idx[th[t].n - 1]].ip == steps[g].ip)
			continue;
		th[t].idx[th[t].n++] = g;
	}

	/* Chunks: each ends at a syscall or at the thread's end. */
	chunks = calloc(nsteps, sizeof *chunks);
	TIX = malloc(nsteps * sizeof *TIX);
	if (!chunks || !TIX) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t g = 0; g < nsteps; g++)
		TIX[g] = g;
	for (size_t t = 0; t < nth; t++) {
		size_t b = 0;
		for (size_t j = 0; j < th[t].n; j++) {
			const struct ptsynth_insn *in =
				ptsynth_imap_find(&imap, steps[th[t].idx[j]].ip);
			if (!(in && in->kind == PTSYNTH_SYSCALL) && j + 1 < th[t].n)
				continue;
			struct chunk *ck = &chunks[nchunks++];
			ck->tid = th[t].tid;
			ck->idx = th[t].idx + b;
			ck->n = j + 1 - b;
			ck->tpos = b;
			ck->first = b == 0;
			ck->last = j + 1 == th[t].n;
			ck->next = ck->last ? 0 : steps[th[t].idx[j + 1]].ip;
			b = j + 1;
		}
	}
	if (opts.percpu) { /* one CPU: run the chunks in the order they started, re-timed */
		for (size_t a = 1; a < nchunks; a++) /* insertion sort by first step, stable */
			for (size_t b = a; b > 0 && chunks[b - 1].idx[0] > chunks[b].idx[0]; b--) {
				struct chunk tmp = chunks[b];
				chunks[b] = chunks[b - 1];
				chunks[b - 1] = tmp;
			}
		size_t slot = 0;
		for (size_t k = 0; k < nchunks; k++) {
			for (size_t j = 0; j < chunks[k].n; j++)
				TIX[chunks[k].idx[j]] = slot++;
			slot += 2; /* room for the context switch */
		}
	}

	if (exppath && !(exp = fopen(exppath, "w"))) {
		err = -errno;
		snprintf(path, sizeof path, "%s", exppath);
		goto fail;
	}
	nstreams = opts.percpu ? 1 : nth;
	streams = calloc(nstreams, sizeof *streams);
	if (!streams) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t t = 0; t < nstreams; t++) {
		size_t insns = opts.percpu ? nsteps : th[t].n;
		if ((err = stream_init(&streams[t], insns, th[t].tid, exp)) < 0)
			goto fail;
	}
	/* Expectations are per thread: write each thread's in its order. */
	for (size_t t = 0; t < nth; t++) {
		struct stream *s = &streams[opts.percpu ? 0 : t];
		if (opts.percpu)
			break;
		for (size_t k = 0; k < nchunks; k++) {
			if (chunks[k].tid != th[t].tid)
				continue;
			err = encode_chunk(s, &imap, have_k ? &kimg : NULL, steps, &chunks[k],
					   chunks[k].first);
			if (err < 0)
				goto fail;
		}
	}
	if (opts.percpu) {
		for (size_t k = 0; k < nchunks; k++) {
			err = encode_chunk(&streams[0], &imap, NULL, steps, &chunks[k], k == 0);
			if (err < 0)
				goto fail;
		}
	}
	for (size_t t = 0; t < nstreams; t++)
		if ((err = stream_fini(&streams[t])) < 0)
			goto fail;

	/* The data section. */
	uint32_t pid = th[0].tid, cpu = opts.percpu ? 0 : (uint32_t)-1;
	uint64_t t_side = opts.timeless ? 0 : TSC_START - 1000;
	const char *comm = strrchr(maps.v[0].path, '/') ? strrchr(maps.v[0].path, '/') + 1 : "prog";
	emit_auxtrace_info(&o);
	for (size_t t = 0; t < nth; t++)
		emit_comm(&o, pid, th[t].tid, comm, mksid(pid, th[t].tid, t_side, cpu));
	for (size_t m = 0; m < maps.n; m++)
		emit_mmap(&o, pid, pid, PERF_RECORD_MISC_USER, maps.v[m].start,
			  maps.v[m].end - maps.v[m].start, maps.v[m].pgoff, maps.v[m].path,
			  mksid(pid, pid, t_side, cpu));
	/* The kernel image: by default mapped like a kernel module, so that perf
	 * reads its code and symbols from the file without options; with -V as
	 * perf records the kernel itself ([kernel.kallsyms]_text, pgoff = _text),
	 * which perf script then needs --vmlinux IMAGE for. */
	if (have_k && opts.vmlinux)
		emit_mmap(&o, (uint32_t)-1, 0, PERF_RECORD_MISC_KERNEL, kimg.start,
			  0xffffffffffffffffULL - kimg.start, kimg.pgoff, "[kernel.kallsyms]_text",
			  mksid((uint32_t)-1, 0, t_side, cpu));
	else if (have_k)
		emit_mmap(&o, (uint32_t)-1, 0, PERF_RECORD_MISC_KERNEL, kimg.start,
			  kimg.end - kimg.start, 0, kimg.path, mksid((uint32_t)-1, 0, t_side, cpu));
	/* Per-CPU: ITRACE_START sets the CPU's current thread, the first one to run. */
	for (size_t t = 0; t < (opts.percpu ? 1 : nth); t++)
		emit_pid_tid(&o, PERF_RECORD_ITRACE_START, pid, th[t].tid,
			     mksid(pid, th[t].tid, t_side, cpu));
	if (opts.percpu) {
		for (size_t k = 0; k + 1 < nchunks; k++) {
			uint32_t a = chunks[k].tid, b = chunks[k + 1].tid;
			uint64_t t0 = step_tsc(chunks[k].idx[chunks[k].n - 1]);
			if (a == b)
				continue;
			emit_switch(&o, 1, pid, b, mksid(pid, a, t0 + 700, 0));
			emit_switch(&o, 0, pid, a, mksid(pid, b, t0 + 1500, 0));
		}
		aux_offs[0] = emit_auxtrace(&o, &streams[0], 0, (uint32_t)-1, 0);
	} else {
		for (size_t t = 0; t < nth; t++)
			aux_offs[t] = emit_auxtrace(&o, &streams[t], (uint32_t)t, th[t].tid,
						    (uint32_t)-1);
	}
	for (size_t t = nth; t-- > 0;) {
		uint64_t te = opts.timeless ? 0 : step_tsc(th[t].idx[th[t].n - 1]) + 900;
		struct sid sd = mksid(pid, th[t].tid, te, cpu);
		struct {
			struct perf_event_header h;
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} r = {{PERF_RECORD_EXIT, 0, 0}, pid, t ? pid : 1, th[t].tid, t ? pid : 1, te};
		r.h.size = sizeof r + sizeof sd;
		emit(&o, &r, sizeof r);
		emit(&o, &sd, sizeof sd);
	}
	if ((err = o.err) < 0)
		goto fail;
	snprintf(path, sizeof path, "%s", outpath);
	if ((err = write_file(outpath, &o, aux_offs, nstreams)) < 0)
		goto fail;
	if (exp && fclose(exp) != 0) {
		exp = NULL;
		err = -EIO;
		snprintf(path, sizeof path, "%s", exppath);
		goto fail;
	}
	exp = NULL;
	fprintf(stderr,
		"mkptdata: %zu insns, %zu threads, %zu branches, %zu syscalls, %zu interrupts, "
		"%zu kernel insns, %zu streams\n",
		C.insns, nth, C.branches, C.syscalls, C.irqs, C.kernel_insns, nstreams);
	goto out;
fail:
	fprintf(stderr, "mkptdata: %s: %s\n", path, strerror(-err));
	if (!err)
		err = -EINVAL;
out:
	if (exp)
		fclose(exp);
	for (size_t t = 0; streams && t < nstreams; t++) {
		pt_free_encoder(streams[t].enc);
		free(streams[t].buf);
		free(streams[t].rs);
		free(streams[t].pend);
	}
	free(streams);
	for (size_t t = 0; t < nth; t++)
		free(th[t].idx);
	free(chunks);
	free(TIX);
	free(o.data);
	free(steps);
	if (have_k)
		kimage_fini(&kimg);
	ptsynth_imap_fini(&imap);
	ptsynth_maps_fini(&maps);
	return err < 0 ? 1 : 0;
}
