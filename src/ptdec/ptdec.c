// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process Intel PT decoder (ptdec/ptdec.h, docs/ptdec.md).
 *
 * Pieces. Every AUXTRACE buffer is cut at PSBs into pieces of about
 * piece_bytes; a PSB+ is a full synchronisation point, so each piece decodes
 * on its own with a libipt instruction decoder. Workers take pieces in the
 * order of their first timestamp and write raw events (struct rawev) into the
 * piece; the thread calling next() walks each queue's pieces in order, joins
 * them and merges the queues by time, resolving symbols on the way.
 *
 * What perf reports, reproduced here:
 *  - a direct branch is reported only once a later packet made the decoder
 *    walk that far: at the end of a buffer (or before an error) the direct
 *    branches after the last trace-consuming instruction are dropped; at a
 *    piece boundary the walk continues to the IP of the next PSB's FUP, as
 *    perf's continuous decode does there;
 *  - "tr strt" (ip 0) at the first synchronisation and after every resync,
 *    but not at a PSB in the middle of a clean stream;
 *  - "tr end <kind>" (addr 0) where tracing is disabled, "tr end async" for an
 *    asynchronous disable;
 *  - errors with perf's messages ("Failed to get instruction", ...).
 */
#include "ptdec/ptdec.h"

#include <errno.h>
#include <intel-pt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptdec/elfsyms.h"
#include "ptdec/pdata.h"
#include "util/alloc.h"
#include "util/bytes.h"
#include "util/err.h"
#include "util/fmap.h"
#include "util/u64map.h"
#include "util/vec.h"

#define AUTO_PIECE   (64u << 10)
#define ACACHE_BITS  16
#define WINDOW_PER_J 4
#define NO_IDX	     ((size_t)-1)

enum { RAW_BRANCH = 1, RAW_ERROR, RAW_POWER };

/* perf's error messages (util/intel-pt-decoder/intel-pt-decoder.c). */
enum {
	ERR_NOINSN = 0,
	ERR_MISMAT,
	ERR_BADPKT,
	ERR_OVR,
	ERR_LOST,
	ERR_NODATA,
	ERR_INTERN,
};
static const char *const err_msgs[] = {
	"Failed to get instruction",
	"Trace doesn't match instruction",
	"Bad packet",
	"Overflow packet",
	"Lost trace data",
	"No more data",
	"Internal error",
};

struct rawev {
	uint64_t time, ip, addr;
	uint32_t flags;
	int32_t pid, tid;
	uint8_t kind, err, implicit;
};

struct mapping {
	uint64_t start, len, pgoff;
	size_t dso;
	int32_t pid;
};

struct dso {
	char *path;
	uint32_t name; /* strtab id */
	int loaded, missing, isid;
	struct snap_elfsyms syms;
};

struct proc {
	int32_t pid;
	struct pt_image *img;
};

struct sw {
	uint64_t time;
	int32_t pid, tid, cpu;
	uint32_t seq; /* file order, for a stable sort */
};

struct comm {
	uint64_t time;
	int32_t tid;
	uint32_t name;
};

struct piece {
	size_t q;
	const uint8_t *b, *e;
	int run_start; /* first piece of its queue */
	int buf_start; /* first piece of its AUXTRACE buffer */
	int has_stop;
	uint64_t stop_ip;
	uint64_t start_time; /* perf time of the PSB+ TSC, for ordering */
	int32_t pid, tid, cpu;
	int state; /* 0 waiting, 1 running, 2 done, 3 released */
	int end_clean;
	uint64_t insns, unwalked;
	struct rawev *ev;
	size_t nev, cap;
};

struct queue {
	uint32_t idx;
	int32_t tid, cpu;
	size_t *pieces; /* indices into d->pieces, in stream order */
	size_t npieces, cappieces;
	size_t cur, pos;
	const struct rawev *head; /* the next event, once peeked (NULL: peek again) */
	size_t ready;		  /* cur + 1 once that piece is known decoded */
	int head_ok, prev_clean;
	int64_t last_cbr; /* -1 = none reported yet */
};

struct aent {
	uint64_t ip;
	int32_t pid;
	int used;
	struct snap_loc loc;
};

struct snap_ptdec {
	struct snap_pd pd;
	const void *map;
	size_t maplen;
	struct snap_strtab *names;
	struct snap_ptdec_opts o;
	char debug_dir[256];
	int timeless, per_cpu, snapshot;
	uint64_t seq;
	struct mapping *maps;
	size_t nmaps, capmaps;
	struct dso *dsos;
	size_t ndsos, capdsos;
	struct proc *procs;
	size_t nprocs, capprocs;
	struct sw *sws; /* switch-ins and itrace starts, by cpu then time */
	size_t nsws, capsws;
	struct comm *comms;
	size_t ncomms, capcomms;
	struct snap_u64map tidpid;
	struct pt_image_section_cache *iscache;
	struct queue *queues;
	size_t nqueues, capqueues;
	struct piece *pieces;
	size_t npieces, cappieces;
	size_t *order; /* pieces in dispatch order */
	size_t dispatched, live, window;
	pthread_mutex_t mu;
	pthread_cond_t cv_work, cv_done;
	pthread_t *threads;
	int nthreads, stop, threads_started;
	struct aent *acache;
	int use_blocks; /* libipt's block decoder and our block cache (else per instruction) */
	uint64_t cbr2khz;
	int debug;	  /* $SNAPTRACE_PTDEC_DEBUG: each event on stderr */
	int32_t comm_tid; /* comm_at's cache: tid, its comm, valid until comm_until */
	uint32_t comm_val;
	uint64_t comm_from, comm_until;
	struct snap_ptdec_stats st;
	struct snap_loc evframes[1];
};

/* ---- small helpers ---- */

static uint64_t tsc2perf(const struct snap_ptdec *d, uint64_t tsc)
{
	return snap_pd_tsc_to_perf(&d->pd.tc, tsc);
}

static int32_t pid_of(const struct snap_ptdec *d, int32_t tid)
{
	uint64_t v;

	if (tid < 0)
		return -1;
	if (snap_u64map_get(&d->tidpid, (uint32_t)tid, &v))
		return (int32_t)v;
	return tid;
}

/* ---- sideband ---- */

static int dso_get(struct snap_ptdec *d, const char *path, size_t len, size_t *out)
{
	int64_t id = snap_strtab_intern(d->names, path, len);
	struct dso *x;
	int err;

	if (id < 0)
		return (int)id;
	for (size_t i = 0; i < d->ndsos; i++)
		if (d->dsos[i].name == (uint32_t)id) {
			*out = i;
			return 0;
		}
	if ((err = snap_vec_reserve(&d->dsos, &d->capdsos, d->ndsos + 1, sizeof(*d->dsos))) < 0)
		return err;
	x = &d->dsos[d->ndsos];
	memset(x, 0, sizeof(*x));
	x->path = snap_strndup(path, len);
	if (!x->path)
		return -ENOMEM;
	x->name = (uint32_t)id;
	x->isid = -1;
	*out = d->ndsos++;
	return 0;
}

static struct proc *proc_get(struct snap_ptdec *d, int32_t pid)
{
	for (size_t i = 0; i < d->nprocs; i++)
		if (d->procs[i].pid == pid)
			return &d->procs[i];
	if (snap_vec_reserve(&d->procs, &d->capprocs, d->nprocs + 1, sizeof(*d->procs)))
		return NULL;
	d->procs[d->nprocs].pid = pid;
	d->procs[d->nprocs].img = pt_image_alloc(NULL);
	if (!d->procs[d->nprocs].img)
		return NULL;
	return &d->procs[d->nprocs++];
}

static int add_mmap(struct snap_ptdec *d, const struct snap_pd_rec *r)
{
	const uint8_t *p = r->p;
	int32_t pid = (int32_t)snap_get32(p + 8);
	uint64_t start = snap_get64(p + 16), len = snap_get64(p + 24), pgoff = snap_get64(p + 32);
	size_t noff = r->type == SNAP_PD_MMAP ? 40 : 72, nlen, di = 0;
	const char *name;
	struct mapping *m;
	struct proc *pr;
	int err;

	if (r->type == SNAP_PD_MMAP && (r->misc & SNAP_PD_MISC_MMAP_DATA))
		return 0;
	if (r->type == SNAP_PD_MMAP2 && !(snap_get32(p + 64) & 4)) /* PROT_EXEC */
		return 0;
	if ((r->misc & SNAP_PD_MISC_CPUMODE_MASK) == SNAP_PD_MISC_KERNEL || start >> 63)
		return 0; /* kernel maps: only user-space traces are decoded here */
	name = (const char *)p + noff;
	nlen = strnlen(name, r->size - noff);
	if (!nlen || name[0] != '/')
		return 0; /* [vdso], anon: no code to read (counted when decoding hits it) */
	if ((err = dso_get(d, name, nlen, &di)) < 0)
		return err;
	if ((err = snap_vec_reserve(&d->maps, &d->capmaps, d->nmaps + 1, sizeof(*d->maps))) < 0)
		return err;
	m = &d->maps[d->nmaps++];
	m->start = start;
	m->len = len;
	m->pgoff = pgoff;
	m->dso = di;
	m->pid = pid;
	pr = proc_get(d, pid);
	if (!pr)
		return -ENOMEM;
	if (d->dsos[di].missing)
		return 0;
	{
		int isid = pt_iscache_add_file(d->iscache, d->dsos[di].path, pgoff, len, start);

		if (isid < 0 || pt_image_add_cached(pr->img, d->iscache, isid, NULL) < 0) {
			d->dsos[di].missing = 1;
			d->st.missing_images++;
			if (!d->st.first_missing[0])
				snprintf(d->st.first_missing, sizeof(d->st.first_missing), "%s",
					 d->dsos[di].path);
		}
	}
	return 0;
}

static int cmp_sw(const void *x, const void *y)
{
	const struct sw *a = x, *b = y;

	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int read_sideband(struct snap_ptdec *d)
{
	int err;

	for (size_t i = 0; i < d->pd.nrecs; i++) {
		const struct snap_pd_rec *r = &d->pd.recs[i];
		const uint8_t *p = r->p;

		switch (r->type) {
		case SNAP_PD_MMAP:
		case SNAP_PD_MMAP2:
			if ((err = snap_u64map_put(&d->tidpid, snap_get32(p + 12),
						   snap_get32(p + 8))) < 0 ||
			    (err = add_mmap(d, r)) < 0)
				return err;
			break;
		case SNAP_PD_COMM: {
			const char *n = (const char *)p + 16;
			int64_t id = snap_strtab_intern(d->names, n, strnlen(n, r->size - 16u));
			struct comm *c;

			if (id < 0)
				return (int)id;
			if ((err = snap_u64map_put(&d->tidpid, snap_get32(p + 12),
						   snap_get32(p + 8))) < 0)
				return err;
			if ((err = snap_vec_reserve(&d->comms, &d->capcomms, d->ncomms + 1,
						    sizeof(*d->comms))) < 0)
				return err;
			c = &d->comms[d->ncomms++];
			c->time = r->time;
			c->tid = (int32_t)snap_get32(p + 12);
			c->name = (uint32_t)id;
			break;
		}
		case SNAP_PD_FORK:
		case SNAP_PD_EXIT:
			if ((err = snap_u64map_put(&d->tidpid, snap_get32(p + 16),
						   snap_get32(p + 8))) < 0)
				return err;
			break;
		case SNAP_PD_ITRACE_START:
		case SNAP_PD_SWITCH_CPU_WIDE: {
			struct sw *s;
			int32_t pid = (int32_t)snap_get32(p + 8), tid = (int32_t)snap_get32(p + 12);

			if (r->type == SNAP_PD_SWITCH_CPU_WIDE) {
				if (r->misc & SNAP_PD_MISC_SWITCH_OUT)
					break;
				pid = r->pid; /* switch-in: the sample_id is the task coming in */
				tid = r->tid;
			} else if ((err = snap_u64map_put(&d->tidpid, (uint32_t)tid,
							  (uint32_t)pid)) < 0) {
				return err;
			}
			if ((err = snap_vec_reserve(&d->sws, &d->capsws, d->nsws + 1,
						    sizeof(*d->sws))) < 0)
				return err;
			s = &d->sws[d->nsws++];
			s->time = r->time;
			s->pid = pid;
			s->tid = tid;
			s->cpu = r->cpu;
			s->seq = (uint32_t)d->nsws;
			break;
		}
		default:
			break;
		}
	}
	if (d->nsws)
		qsort(d->sws, d->nsws, sizeof(*d->sws), cmp_sw);
	return 0;
}

/* The task on cpu at perf time t: the last switch-in at or before t (else the
 * CPU's first). d->sws is sorted by (cpu, time): two binary searches. */
static const struct sw *task_at(const struct snap_ptdec *d, int32_t cpu, uint64_t t)
{
	size_t lo = 0, hi = d->nsws, first;

	while (lo < hi) { /* first entry of cpu */
		size_t mid = lo + (hi - lo) / 2;

		if (d->sws[mid].cpu < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == d->nsws || d->sws[lo].cpu != cpu)
		return NULL;
	first = lo;
	hi = d->nsws;
	while (lo < hi) { /* first entry of cpu after t */
		size_t mid = lo + (hi - lo) / 2;

		if (d->sws[mid].cpu == cpu && d->sws[mid].time <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > first ? &d->sws[lo - 1] : &d->sws[first];
}

/* ---- pieces ---- */

static const uint8_t psb_pat[16] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};

static const uint8_t *find_psb(const uint8_t *b, const uint8_t *e)
{
	if (e - b < 16)
		return NULL;
	return memmem(b, (size_t)(e - b), psb_pat, sizeof(psb_pat));
}

/* Reads the PSB+ at b: its TSC and FUP ip. */
static void psb_info(const uint8_t *b, const uint8_t *e, int *has_tsc, uint64_t *tsc, int *has_fup,
		     uint64_t *fup)
{
	struct pt_config cfg;
	struct pt_packet_decoder *pk;
	struct pt_packet pkt;

	*has_tsc = *has_fup = 0;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)b;
	cfg.end = (uint8_t *)e;
	pk = pt_pkt_alloc_decoder(&cfg);
	if (!pk)
		return;
	if (pt_pkt_sync_set(pk, 0) >= 0) {
		for (int n = 0; n < 64 && pt_pkt_next(pk, &pkt, sizeof(pkt)) >= 0; n++) {
			if (pkt.type == ppt_tsc) {
				*has_tsc = 1;
				*tsc = pkt.payload.tsc.tsc;
			} else if (pkt.type == ppt_fup) {
				uint64_t ip = pkt.payload.ip.ip;

				switch (pkt.payload.ip.ipc) {
				case pt_ipc_sext_48:
					*has_fup = 1;
					*fup = (uint64_t)((int64_t)(ip << 16) >> 16);
					break;
				case pt_ipc_full:
				case pt_ipc_update_16:
				case pt_ipc_update_32:
				case pt_ipc_update_48:
					*has_fup = 1;
					*fup = ip;
					break;
				default:
					break;
				}
			} else if (pkt.type == ppt_psbend) {
				break;
			}
		}
	}
	pt_pkt_free_decoder(pk);
}

static int add_piece(struct snap_ptdec *d, struct queue *q, size_t qi, const uint8_t *b,
		     const uint8_t *e, int run_start, const struct snap_pd_aux *a)
{
	struct piece *pc;
	int err;

	if ((err = snap_vec_reserve(&d->pieces, &d->cappieces, d->npieces + 1,
				    sizeof(*d->pieces))) < 0 ||
	    (err = snap_vec_reserve(&q->pieces, &q->cappieces, q->npieces + 1,
				    sizeof(*q->pieces))) < 0)
		return err;
	pc = &d->pieces[d->npieces];
	memset(pc, 0, sizeof(*pc));
	pc->q = qi;
	pc->b = b;
	pc->e = e;
	pc->run_start = run_start;
	pc->buf_start = b == a->data;
	pc->tid = d->per_cpu ? -1 : a->tid;
	pc->pid = d->per_cpu ? -1 : pid_of(d, a->tid);
	pc->cpu = a->cpu;
	q->pieces[q->npieces++] = d->npieces++;
	return 0;
}

static struct queue *queue_get(struct snap_ptdec *d, const struct snap_pd_aux *a, size_t *qi)
{
	for (size_t i = 0; i < d->nqueues; i++)
		if (d->queues[i].idx == a->idx) {
			*qi = i;
			return &d->queues[i];
		}
	if (snap_vec_reserve(&d->queues, &d->capqueues, d->nqueues + 1, sizeof(*d->queues)))
		return NULL;
	memset(&d->queues[d->nqueues], 0, sizeof(d->queues[0]));
	d->queues[d->nqueues].idx = a->idx;
	d->queues[d->nqueues].tid = a->tid;
	d->queues[d->nqueues].cpu = a->cpu;
	d->queues[d->nqueues].last_cbr = -1;
	*qi = d->nqueues;
	return &d->queues[d->nqueues++];
}

static int split_buffers(struct snap_ptdec *d)
{
	size_t want = d->o.piece_bytes ? d->o.piece_bytes : AUTO_PIECE;
	int err;

	for (size_t i = 0; i < d->pd.naux; i++) {
		const struct snap_pd_aux *a = &d->pd.aux[i];
		const uint8_t *b = a->data, *e = a->data + a->size, *cur = b, *next;
		size_t qi;
		struct queue *q = queue_get(d, a, &qi);
		int run_start = q == NULL || q->npieces == 0;

		if (!q)
			return -ENOMEM;
		d->st.buffers++;
		d->st.bytes += a->size;
		if (!a->size)
			continue;
		for (;;) {
			const uint8_t *from = cur + want < cur ? e : cur + want;

			next = from < e ? find_psb(from, e) : NULL;
			if ((err = add_piece(d, q, qi, cur, next ? next : e, run_start, a)) < 0)
				return err;
			run_start = 0;
			if (!next)
				break;
			cur = next;
		}
	}
	/* Each piece stops where the next one of its stream starts: at its PSB's FUP. */
	for (size_t i = 0; i < d->npieces; i++) {
		struct piece *pc = &d->pieces[i];
		int has_tsc, has_fup;
		uint64_t tsc = 0, fup = 0;
		const uint8_t *psb = find_psb(pc->b, pc->e);

		if (psb) {
			psb_info(psb, pc->e, &has_tsc, &tsc, &has_fup, &fup);
			pc->start_time = has_tsc ? tsc2perf(d, tsc) : 0;
		}
	}
	for (size_t qi = 0; qi < d->nqueues; qi++) {
		struct queue *q = &d->queues[qi];

		for (size_t k = 0; k + 1 < q->npieces; k++) {
			struct piece *pc = &d->pieces[q->pieces[k]],
				     *nx = &d->pieces[q->pieces[k + 1]];
			int has_tsc, has_fup;
			uint64_t tsc, fup = 0;

			/* perf decodes successive snapshot buffers as one stream, but drops
			 * the direct branches after the last packet of each buffer. */
			if (nx->run_start || (d->snapshot && nx->buf_start) || nx->e - nx->b < 16 ||
			    memcmp(nx->b, psb_pat, 16))
				continue;
			psb_info(nx->b, nx->e, &has_tsc, &tsc, &has_fup, &fup);
			pc->has_stop = has_fup;
			pc->stop_ip = fup;
		}
	}
	d->st.pieces = d->npieces;
	return 0;
}

/* ---- decoding one piece (workers) ---- */

struct cinsn;
struct bentry;

struct wctx {
	struct snap_ptdec *d;
	struct bentry *bcache; /* the block cache (BCACHE_BITS slots) */
	struct cinsn *binsns;  /* the instructions of the cached blocks */
	size_t nbinsns, capbinsns;
	struct proc *imgs; /* this worker's copies of the process images */
	size_t nimgs, capimgs;
};

static struct pt_image *wimage(struct wctx *w, int32_t pid)
{
	struct proc *src = NULL;

	for (size_t i = 0; i < w->nimgs; i++)
		if (w->imgs[i].pid == pid)
			return w->imgs[i].img;
	for (size_t i = 0; i < w->d->nprocs; i++)
		if (w->d->procs[i].pid == pid)
			src = &w->d->procs[i];
	if (snap_vec_reserve(&w->imgs, &w->capimgs, w->nimgs + 1, sizeof(*w->imgs)))
		return NULL;
	w->imgs[w->nimgs].pid = pid;
	w->imgs[w->nimgs].img = pt_image_alloc(NULL);
	if (!w->imgs[w->nimgs].img)
		return NULL;
	if (src)
		pt_image_copy(w->imgs[w->nimgs].img, src->img);
	return w->imgs[w->nimgs++].img;
}

static void wctx_fini(struct wctx *w)
{
	for (size_t i = 0; i < w->nimgs; i++)
		pt_image_free(w->imgs[i].img);
	snap_free(w->imgs);
	w->imgs = NULL;
	w->nimgs = w->capimgs = 0;
	snap_free(w->bcache);
	snap_free(w->binsns);
	w->bcache = NULL;
	w->binsns = NULL;
	w->nbinsns = w->capbinsns = 0;
}

/* The flags perf gives a branch by the class of its instruction. */
static uint32_t class_flags(enum pt_insn_class c, const struct pt_insn *in)
{
	switch (c) {
	case ptic_call:
		return SNAP_PF_BRANCH | SNAP_PF_CALL;
	case ptic_return:
		return SNAP_PF_BRANCH | SNAP_PF_RETURN;
	case ptic_jump:
		return SNAP_PF_BRANCH;
	case ptic_cond_jump:
		return SNAP_PF_BRANCH | SNAP_PF_CONDITIONAL;
	case ptic_far_call:
		/* syscall 0f 05, sysenter 0f 34; int n cd, int3 cc, into ce */
		if (in->size >= 2 && in->raw[0] == 0x0f &&
		    (in->raw[1] == 0x05 || in->raw[1] == 0x34))
			return SNAP_PF_BRANCH | SNAP_PF_CALL | SNAP_PF_SYSCALLRET;
		if (in->raw[0] == 0xcd || in->raw[0] == 0xcc || in->raw[0] == 0xce)
			return SNAP_PF_BRANCH | SNAP_PF_CALL | SNAP_PF_INTERRUPT;
		return SNAP_PF_BRANCH | SNAP_PF_CALL;
	case ptic_far_return:
		if (in->size >= 2 && in->raw[0] == 0x0f &&
		    (in->raw[1] == 0x07 || in->raw[1] == 0x35))
			return SNAP_PF_BRANCH | SNAP_PF_RETURN | SNAP_PF_SYSCALLRET;
		if (in->raw[0] == 0xcf || (in->size >= 2 && in->raw[1] == 0xcf))
			return SNAP_PF_BRANCH | SNAP_PF_RETURN | SNAP_PF_INTERRUPT;
		return SNAP_PF_BRANCH | SNAP_PF_RETURN;
	case ptic_far_jump:
		return SNAP_PF_BRANCH;
	default:
		return 0;
	}
}

/* 1 for a near call or jump through a register or memory (ff /2 /3 /4 /5). */
static int is_indirect(const struct pt_insn *in)
{
	uint8_t i = 0;

	while (i < in->size && (in->raw[i] == 0x66 || in->raw[i] == 0x67 || in->raw[i] == 0x2e ||
				in->raw[i] == 0x3e || in->raw[i] == 0x26 || in->raw[i] == 0x64 ||
				in->raw[i] == 0x65 || in->raw[i] == 0x36 || in->raw[i] == 0xf0 ||
				in->raw[i] == 0xf2 || in->raw[i] == 0xf3))
		i++;
	if (i < in->size && (in->raw[i] & 0xf0) == 0x40)
		i++;
	return i < in->size && in->raw[i] == 0xff;
}

/* Whether libipt needed trace to get past this instruction. */
static int needs_trace(const struct pt_insn *in)
{
	switch (in->iclass) {
	case ptic_cond_jump:
	case ptic_return:
	case ptic_far_call:
	case ptic_far_return:
	case ptic_far_jump:
		return 1;
	case ptic_call:
	case ptic_jump:
		return is_indirect(in);
	default:
		return 0;
	}
}

/*
 * perf's timestamps. perf gives a branch the time of the last TSC before the
 * packet that decided it (the TNT bit or TIP), and a direct branch the time of
 * the last packet consumed before it; libipt reads ahead through timing
 * packets, so its own time is often later. A second, lazy packet decoder on
 * the piece walks the trace packets in step with the instructions: each
 * trace-consuming instruction or event takes its token (a TNT bit, a TIP, a
 * PGE/PGD, a FUP, an OVF) and the TSC before it.
 */
enum { TOK_NONE = 0, TOK_TNT, TOK_TIP, TOK_PGE, TOK_PGD, TOK_FUP, TOK_OVF, TOK_PSB };

struct tokr {
	struct snap_ptdec *d;
	struct pt_packet_decoder *pk;
	uint64_t time, tsc; /* perf time and raw value of the last TSC read */
	uint64_t last_ip;   /* IP decompression state */
	int tsc_seen;	    /* a TSC was read since the last token */
	int tnt_left;
	uint64_t tnt_bits; /* the TNT packet's payload, the next bit at bit tnt_left - 1 */
	int in_psb, psb_has_fup;
	uint64_t psb_fup;
	int have;   /* a peeked token */
	int ktaken; /* a TNT token's bit */
	int kind, has_ip, ktsc;
	uint64_t ktime, kip, kend; /* kend: offset just after the token's packet */
	uint64_t psb_off;	   /* offset of the last PSB read */
};

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

static void tok_fill(struct tokr *t)
{
	struct pt_packet pkt;
	uint64_t off;

	if (t->have || !t->pk)
		return;
	if (t->tnt_left) {
		t->tnt_left--;
		t->ktaken = (t->tnt_bits >> t->tnt_left) & 1;
		t->have = 1;
		t->kind = TOK_TNT;
		t->ktime = t->time;
		t->has_ip = 0;
		t->ktsc = 0;
		return;
	}
	while (pt_pkt_next(t->pk, &pkt, sizeof(pkt)) >= 0) {
		int k = TOK_NONE, ok = 0;
		uint64_t ip = 0;

		switch (pkt.type) {
		case ppt_tsc:
			t->tsc = pkt.payload.tsc.tsc;
			if (!t->d->timeless)
				t->time = tsc2perf(t->d, pkt.payload.tsc.tsc);
			t->tsc_seen = 1;
			continue;
		case ppt_psb:
			if (pt_pkt_get_offset(t->pk, &off) >= 0)
				t->psb_off = off >= 16 ? off - 16 : 0;
			t->in_psb = 1;
			t->psb_has_fup = 0;
			t->last_ip = 0;
			continue;
		case ppt_psbend:
			t->in_psb = 0;
			k = TOK_PSB;
			ok = t->psb_has_fup;
			ip = t->psb_fup;
			break;
		case ppt_tnt_8:
		case ppt_tnt_64:
			if (!pkt.payload.tnt.bit_size)
				continue;
			t->tnt_bits = pkt.payload.tnt.payload;
			t->tnt_left = pkt.payload.tnt.bit_size - 1;
			t->ktaken = (t->tnt_bits >> t->tnt_left) & 1;
			k = TOK_TNT;
			break;
		case ppt_tip:
		case ppt_tip_pge:
		case ppt_tip_pgd:
		case ppt_fup:
			ip = ip_update(t->last_ip, &pkt.payload.ip, &ok);
			if (ok)
				t->last_ip = ip;
			if (pkt.type == ppt_fup && t->in_psb) {
				t->psb_has_fup = ok;
				t->psb_fup = ip;
				continue;
			}
			k = pkt.type == ppt_tip	      ? TOK_TIP
			    : pkt.type == ppt_tip_pge ? TOK_PGE
			    : pkt.type == ppt_tip_pgd ? TOK_PGD
						      : TOK_FUP;
			break;
		case ppt_ovf:
			k = TOK_OVF;
			break;
		default:
			continue;
		}
		t->have = 1;
		t->kind = k;
		t->ktime = t->time;
		t->has_ip = ok;
		t->kip = ip;
		t->ktsc = t->tsc_seen;
		t->tsc_seen = 0;
		t->kend = pt_pkt_get_offset(t->pk, &off) >= 0 ? off : 0;
		return;
	}
}

/* Repositions at the PSB at off (after libipt synchronised there). */
static void tok_sync(struct tokr *t, uint64_t off)
{
	t->have = 0;
	t->tnt_left = 0;
	t->in_psb = 0;
	if (t->pk && pt_pkt_sync_set(t->pk, off) < 0) {
		pt_pkt_free_decoder(t->pk);
		t->pk = NULL;
	}
}

/* An instruction as the piece decoder needs it (from libipt's instruction
 * decoder, or replayed from the block cache). */
struct cinsn {
	uint64_t ip;
	uint64_t target; /* a direct branch's target, 0 if none or not direct */
	uint32_t flags;	 /* perf's branch flags for its class, 0 = not a branch */
	uint8_t size;
	uint8_t cond;  /* a conditional jump */
	uint8_t trace; /* libipt needed trace to get past it */
	uint8_t pad;
};

/* The target of a direct jump, call or jcc (rel8/rel32), or 0. */
static uint64_t direct_target(const struct pt_insn *in)
{
	uint8_t i = 0, op;
	int64_t rel;

	while (i < in->size && (in->raw[i] == 0x66 || in->raw[i] == 0x67 || in->raw[i] == 0x2e ||
				in->raw[i] == 0x3e || in->raw[i] == 0xf2 || in->raw[i] == 0xf3))
		i++;
	if (i < in->size && (in->raw[i] & 0xf0) == 0x40)
		i++;
	if (i >= in->size)
		return 0;
	op = in->raw[i];
	if ((op >= 0x70 && op <= 0x7f) || op == 0xeb || (op >= 0xe0 && op <= 0xe3)) {
		if (i + 2 != in->size)
			return 0;
		rel = (int8_t)in->raw[i + 1];
	} else if (op == 0xe8 || op == 0xe9 ||
		   (op == 0x0f && i + 1 < in->size && (in->raw[i + 1] & 0xf0) == 0x80)) {
		int32_t r32;
		uint8_t at = (uint8_t)(op == 0x0f ? i + 2 : i + 1);

		if (at + 4 != in->size)
			return 0;
		memcpy(&r32, in->raw + at, 4);
		rel = r32;
	} else {
		return 0;
	}
	return in->ip + in->size + (uint64_t)rel;
}

static void cinsn_of(struct cinsn *c, const struct pt_insn *in)
{
	c->ip = in->ip;
	c->target = direct_target(in);
	c->flags = class_flags(in->iclass, in);
	c->size = in->size;
	c->cond = in->iclass == ptic_cond_jump;
	c->trace = (uint8_t)needs_trace(in);
	c->pad = 0;
}

/* The block cache: each libipt block (image, first ip, instruction count)
 * expanded once into its instructions, following direct jumps and calls. */
struct bentry {
	uint64_t ip;
	int32_t pid;
	uint16_t ninsn;
	uint8_t used, ok;
	uint32_t first; /* index in wctx.binsns */
};

struct pstate {
	struct snap_ptdec *d;
	struct wctx *w;
	struct piece *pc;
	struct pt_insn_decoder *dec;
	struct pt_block_decoder *bdec; /* the block decoder (else dec) */
	struct tokr tk;
	uint64_t stime; /* perf's sample time: the time of the last token consumed */
	uint64_t ts_insns, since_take, sample_insns; /* perf's instruction counts for estimates */
	uint64_t tok_ip;			     /* the IP of the last token taken, if any */
	int tok_has_ip, tok_taken;		     /* tok_taken: its TNT bit, -1 if no TNT */
	uint8_t *rebuf;		   /* a resynchronised copy of the piece (owned) */
	size_t reblen, prefix;	   /* its length, and that of its made-up PSB+ and TIP.PGE */
	const uint8_t *resync_buf; /* the last PSB perf_resync synchronised at */
	uint64_t resync_psb;
	int resync_psb_set;
	unsigned errors_in_row;
	int have_prev;
	struct cinsn prev;
	size_t confirm, stop_idx;
	int need_strt, implicit_ok, err;
	uint32_t cbr;
	int32_t pid, tid;
	uint64_t rets[64]; /* return addresses of the calls seen (compressed returns) */
	unsigned nrets;
	uint64_t ret_to; /* what the last return popped */
};

/* The two libipt decoders behind one face. */
static int dec_sync_forward(struct pstate *s)
{
	return s->bdec ? pt_blk_sync_forward(s->bdec) : pt_insn_sync_forward(s->dec);
}

static int dec_sync_set(struct pstate *s, uint64_t off)
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

static void dec_cbr(struct pstate *s, uint32_t *cbr)
{
	*cbr = 0;
	if (s->bdec)
		pt_blk_core_bus_ratio(s->bdec, cbr);
	else
		pt_insn_core_bus_ratio(s->dec, cbr);
}

static void dec_set_image(struct pstate *s, struct pt_image *img)
{
	if (s->bdec)
		pt_blk_set_image(s->bdec, img);
	else
		pt_insn_set_image(s->dec, img);
}

/* Consumes the next token, preferring kind want (0 = any); PSB markers on the
 * way update the sample time. Returns the token's time. */
static uint64_t take(struct pstate *s, int want)
{
	struct tokr *t = &s->tk;

	for (int guard = 0; guard < 64; guard++) {
		tok_fill(t);
		if (!t->have)
			return s->stime;
		s->ts_insns = t->ktsc ? s->since_take : s->ts_insns + s->since_take;
		s->since_take = 0;
		s->sample_insns = s->ts_insns;
		if (t->kind == TOK_PSB && want != TOK_PSB) {
			t->have = 0;
			s->stime = t->ktime;
			continue;
		}
		t->have = 0;
		s->stime = t->ktime;
		s->tok_ip = t->kip;
		s->tok_has_ip = t->has_ip;
		s->tok_taken = t->kind == TOK_TNT ? t->ktaken : -1;
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

	tok_fill(t);
	if (t->have && t->kind == TOK_PSB && (!t->has_ip || t->kip == ip)) {
		t->have = 0;
		s->stime = t->ktime;
	}
}

/* Everything so far was determined by packets the decoder had read. */
static void confirm_all(struct pstate *s)
{
	s->confirm = s->pc->nev;
	s->stop_idx = NO_IDX;
}

static struct rawev *emit(struct pstate *s, uint8_t kind, uint64_t time)
{
	struct piece *pc = s->pc;
	struct rawev *r;

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

static void emit_branch(struct pstate *s, uint32_t flags, uint64_t ip, uint64_t addr, uint64_t time)
{
	struct rawev *r = emit(s, RAW_BRANCH, time);

	if (r) {
		r->flags = flags;
		r->ip = ip;
		r->addr = addr;
	}
}

/* perf's estimated time of an error: the sample time plus two ns per
 * instruction walked since the timestamp (intel_pt_est_timestamp). */
static uint64_t est_time(const struct pstate *s)
{
	uint64_t est = s->sample_insns << 1;

	if (s->d->timeless)
		return 0;
	if (s->cbr && s->d->pd.priv[SNAP_PD_PT_MAX_NONTURBO_RATIO])
		est = est * s->d->pd.priv[SNAP_PD_PT_MAX_NONTURBO_RATIO] / s->cbr;
	return s->stime + est;
}

static void emit_error(struct pstate *s, int code, uint64_t ip)
{
	struct rawev *r = emit(s, RAW_ERROR, est_time(s));

	if (r) {
		r->err = (uint8_t)code;
		r->ip = ip;
	}
	confirm_all(s);
}

/* The core:bus ratio as perf reports it: a cbr event when it changes (the
 * reader drops repeats across pieces). */
static void emit_cbr(struct pstate *s, uint32_t cbr, uint64_t time)
{
	struct rawev *r = emit(s, RAW_POWER, time);

	if (r)
		r->addr = cbr;
}

/* Per-CPU streams: the task at the current time, and its image. */
static void set_task(struct pstate *s, uint64_t time)
{
	const struct sw *t;
	struct pt_image *img;

	if (!s->d->per_cpu)
		return;
	t = task_at(s->d, s->pc->cpu, time);
	if (!t || (t->tid == s->tid && t->pid == s->pid))
		return;
	s->pid = t->pid;
	s->tid = t->tid;
	img = wimage(s->w, s->pid);
	if (img)
		dec_set_image(s, img);
}

/* The previous instruction went on to next_ip: report its branch if it took one.
 * tok: the previous instruction's token was already taken (by an event). */
static void resolve_prev(struct pstate *s, uint64_t next_ip, int tok)
{
	const struct cinsn *p = &s->prev;
	uint64_t time = s->stime;
	uint32_t fl;
	int q;

	if (!s->have_prev)
		return;
	s->have_prev = 0;
	q = p->trace;
	if (q && !tok)
		time = take(s, p->cond ? TOK_TNT : TOK_TIP);
	fl = p->flags;
	if (fl && !(p->cond && next_ip == p->ip + p->size))
		emit_branch(s, fl, p->ip, next_ip, time);
	if (q || tok)
		confirm_all(s);
}

static void start_trace(struct pstate *s, uint64_t ip, int implicit, uint64_t time)
{
	struct rawev *r;

	set_task(s, time);
	r = emit(s, RAW_BRANCH, time);
	if (r) {
		r->flags = SNAP_PF_BRANCH | SNAP_PF_TRACE_BEGIN;
		r->addr = ip;
		r->implicit = (uint8_t)implicit;
	}
	s->need_strt = 0;
	confirm_all(s);
}

static void handle_event(struct pstate *s, const struct pt_event *ev)
{
	uint64_t t;

	switch (ev->type) {
	case ptev_enabled:
		resolve_prev(s, ev->variant.enabled.ip, 0);
		t = take(s, TOK_PGE);
		if (s->need_strt) { /* the first sync: perf's cbr event comes first */
			uint32_t cbr = 0;

			set_task(s, t);
			dec_cbr(s, &cbr);
			emit_cbr(s, cbr, t);
		}
		start_trace(s, ev->variant.enabled.ip, 0, t);
		break;
	case ptev_cbr:
		s->cbr = ev->variant.cbr.ratio;
		emit_cbr(s, ev->variant.cbr.ratio, s->stime);
		break;
	case ptev_disabled:
		t = take(s, TOK_PGD);
		if (s->have_prev) {
			const struct cinsn *p = &s->prev;
			uint32_t fl = p->flags;

			s->have_prev = 0;
			emit_branch(s, fl | SNAP_PF_TRACE_END, p->ip, 0, t);
		}
		confirm_all(s);
		break;
	case ptev_async_disabled:
		resolve_prev(s, ev->variant.async_disabled.at, 0);
		take(s, TOK_FUP);
		t = take(s, TOK_PGD);
		emit_branch(s, SNAP_PF_BRANCH | SNAP_PF_ASYNC | SNAP_PF_TRACE_END,
			    ev->variant.async_disabled.at, 0, t);
		confirm_all(s);
		break;
	case ptev_async_branch:
		resolve_prev(s, ev->variant.async_branch.from, 0);
		take(s, TOK_FUP);
		t = take(s, TOK_TIP);
		emit_branch(s, SNAP_PF_BRANCH | SNAP_PF_CALL | SNAP_PF_ASYNC | SNAP_PF_INTERRUPT,
			    ev->variant.async_branch.from, ev->variant.async_branch.to, t);
		confirm_all(s);
		break;
	case ptev_overflow:
		/* perf reports the branch whose packet came before the OVF first. */
		if (s->have_prev && s->prev.trace) {
			const struct cinsn *p = &s->prev;
			uint64_t to = 0, tt;

			tok_fill(&s->tk);
			if (s->tk.have && (s->tk.kind == TOK_TNT || s->tk.kind == TOK_TIP)) {
				tt = take(s, p->cond ? TOK_TNT : TOK_TIP);
				if (s->tok_has_ip)
					to = s->tok_ip;
				else if (p->cond && s->tok_taken == 1)
					to = p->target;
				else if (p->cond && s->tok_taken == 0)
					to = p->ip + p->size;
				else if ((p->flags & SNAP_PF_RETURN) && s->tok_taken == 1)
					to = s->ret_to; /* a compressed return: its call's address */
				if (to && !(p->cond && to == p->ip + p->size))
					emit_branch(s, p->flags, p->ip, to, tt);
				if (to)
					confirm_all(s);
			}
		}
		s->have_prev = 0;
		s->pc->nev = s->confirm;
		t = take(s, TOK_OVF);
		s->sample_insns = 0; /* perf's overflow error has the packet's time */
		emit_error(s, ERR_OVR, 0);
		if (!ev->ip_suppressed) {
			t = take(s, TOK_FUP);
			start_trace(s, ev->variant.overflow.ip, 0, t);
		}
		break;
	default:
		break;
	}
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
	int status = dec_sync_forward(s);

	if (status >= 0 && dec_sync_offset(s, &off) >= 0) {
		tok_sync(&s->tk, off);
		/* Per CPU: the task (and image) at the PSB's time, before any code is read. */
		tok_fill(&s->tk);
		if (s->tk.have && s->tk.kind == TOK_PSB)
			set_task(s, s->tk.ktime);
	}
	s->need_strt = 1;
	return status;
}

static int new_decoders(struct pstate *s, const uint8_t *b, const uint8_t *e)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)b;
	cfg.end = (uint8_t *)e;
	if (s->d->use_blocks)
		s->bdec = pt_blk_alloc_decoder(&cfg);
	else
		s->dec = pt_insn_alloc_decoder(&cfg);
	s->tk.pk = pt_pkt_alloc_decoder(&cfg);
	if ((!s->dec && !s->bdec) || !s->tk.pk)
		return -ENOMEM;
	if (s->pid != -2) {
		struct pt_image *img = wimage(s->w, s->pid);

		if (img)
			dec_set_image(s, img);
	}
	return 0;
}

static void free_decoders(struct pstate *s)
{
	pt_insn_free_decoder(s->dec);
	pt_blk_free_decoder(s->bdec);
	pt_pkt_free_decoder(s->tk.pk);
	s->dec = NULL;
	s->bdec = NULL;
	s->tk.pk = NULL;
}

/*
 * perf's recovery from an error: it drops the packet it was walking to, then
 * resynchronises at the next packet that carries an IP ("tr strt" there), or
 * silently at a PSB+. libipt only synchronises at PSBs, so for an IP packet
 * the rest of the piece is decoded from a copy that starts with a made-up
 * PSB+ (the last TSC) and a TIP.PGE to that IP. Returns the new status.
 */
static int perf_resync(struct pstate *s, const uint8_t *b, const uint8_t *e)
{
	struct tokr *t = &s->tk;
	int eaten = 0;

	t->tnt_left = 0; /* the rest of a TNT packet goes with it */
	for (;;) {
		tok_fill(t);
		if (!t->have)
			return -pte_eos;
		if (t->kind == TOK_PSB &&
		    !(s->resync_psb_set && t->psb_off == s->resync_psb && b == s->resync_buf)) {
			uint64_t off = t->psb_off;
			int status;

			s->resync_psb_set = 1; /* never this PSB again: progress */
			s->resync_psb = off;
			s->resync_buf = b;
			free_decoders(s);
			if (new_decoders(s, b, e) < 0)
				return -pte_nomem;
			s->need_strt = 0;
			status = dec_sync_set(s, off);
			if (status < 0)
				return -pte_eos; /* a damaged PSB+: nothing more to decode here */
			tok_sync(t, off);
			s->need_strt = 0;
			return status;
		}
		t->have = 0;
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
	{
		struct pt_config cfg;
		struct pt_encoder *enc;
		struct pt_packet pk[5];
		size_t rest = (size_t)(e - b) > t->kend ? (size_t)(e - b) - t->kend : 0;
		uint8_t *nb = snap_malloc(64 + rest);
		int n = 0, status;
		uint64_t off = 0, ip = t->kip, tsc = t->tsc;

		if (!nb)
			return -pte_nomem;
		memset(pk, 0, sizeof(pk));
		pk[0].type = ppt_psb;
		pk[1].type = ppt_mode;
		pk[1].payload.mode.leaf = pt_mol_exec;
		pk[1].payload.mode.bits.exec.csl = 1;
		pk[2].type = ppt_tsc;
		pk[2].payload.tsc.tsc = tsc;
		pk[3].type = ppt_psbend;
		pk[4].type = ppt_tip_pge;
		pk[4].payload.ip.ipc = pt_ipc_full;
		pk[4].payload.ip.ip = ip;
		pt_config_init(&cfg);
		cfg.begin = nb;
		cfg.end = nb + 64;
		enc = pt_alloc_encoder(&cfg);
		if (!enc) {
			snap_free(nb);
			return -pte_nomem;
		}
		for (int i = 0; i < 5; i++)
			if (pt_enc_next(enc, &pk[i]) < 0)
				n = -1;
		pt_enc_get_offset(enc, &off);
		pt_free_encoder(enc);
		if (n < 0 || off > 64) {
			snap_free(nb);
			return -pte_internal;
		}
		memcpy(nb + off, b + t->kend, rest);
		free_decoders(s);
		snap_free(s->rebuf);
		s->rebuf = nb;
		s->reblen = off + rest;
		s->prefix = off;
		if (new_decoders(s, nb, nb + off + rest) < 0)
			return -pte_nomem;
		s->tk.have = 0;
		s->tk.tnt_left = 0;
		status = dec_sync_forward(s);
		tok_sync(&s->tk, 0);
		s->need_strt = 0;
		s->since_take = 0;
		return status;
	}
}

/* One instruction reached by the walk (in execution order). */
static void process_insn(struct pstate *s, const struct cinsn *in)
{
	struct piece *pc = s->pc;

	pc->insns++;
	s->errors_in_row = 0;
	if (s->need_strt) {
		uint32_t cbr = 0;

		take(s, TOK_PSB);
		set_task(s, s->stime);
		dec_cbr(s, &cbr);
		s->cbr = cbr;
		emit_cbr(s, cbr, s->stime);
		if (s->implicit_ok && pc->nev)
			pc->ev[pc->nev - 1].implicit = 1;
		start_trace(s, in->ip, s->implicit_ok, s->stime);
	}
	s->implicit_ok = 0;
	if (s->have_prev)
		resolve_prev(s, in->ip, 0);
	s->since_take++;
	pass_psb(s, in->ip);
	if (pc->has_stop && in->ip == pc->stop_ip && s->stop_idx == NO_IDX)
		s->stop_idx = pc->nev;
	if ((in->flags & (SNAP_PF_CALL | SNAP_PF_SYSCALLRET | SNAP_PF_INTERRUPT)) == SNAP_PF_CALL)
		s->rets[s->nrets++ % 64] = in->ip + in->size;
	else if ((in->flags & (SNAP_PF_RETURN | SNAP_PF_SYSCALLRET | SNAP_PF_INTERRUPT)) ==
		 SNAP_PF_RETURN)
		s->ret_to = s->nrets ? s->rets[--s->nrets % 64] : 0;
	s->prev = *in;
	s->have_prev = 1;
}

#define BCACHE_BITS 14

/* Expands a block into its instructions: libipt's instruction decoder walks it
 * on a made-up trace (PSB+, TIP.PGE to the block's first ip) that ends where
 * the walk would need a packet, which is where libipt ends a block. */
static int bcache_fill(struct wctx *w, int32_t pid, const struct pt_block *blk, uint32_t *first)
{
	uint8_t buf[64];
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_insn_decoder *dec;
	struct pt_packet pk[4];
	struct pt_insn insn;
	struct pt_event ev;
	struct pt_image *img = wimage(w, pid);
	uint64_t off = 0;
	size_t n = 0;
	int status, err = 0;

	if (!img || blk->mode != ptem_64bit)
		return -1;
	memset(pk, 0, sizeof(pk));
	pk[0].type = ppt_psb;
	pk[1].type = ppt_mode;
	pk[1].payload.mode.leaf = pt_mol_exec;
	pk[1].payload.mode.bits.exec.csl = 1;
	pk[2].type = ppt_psbend;
	pk[3].type = ppt_tip_pge;
	pk[3].payload.ip.ipc = pt_ipc_full;
	pk[3].payload.ip.ip = blk->ip;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + sizeof(buf);
	enc = pt_alloc_encoder(&cfg);
	if (!enc)
		return -1;
	for (int i = 0; i < 4; i++)
		if (pt_enc_next(enc, &pk[i]) < 0)
			err = -1;
	pt_enc_get_offset(enc, &off);
	pt_free_encoder(enc);
	if (err)
		return -1;
	cfg.end = buf + off;
	dec = pt_insn_alloc_decoder(&cfg);
	if (!dec)
		return -1;
	pt_insn_set_image(dec, img);
	if (snap_vec_reserve(&w->binsns, &w->capbinsns, w->nbinsns + blk->ninsn,
			     sizeof(*w->binsns))) {
		pt_insn_free_decoder(dec);
		return -1;
	}
	status = pt_insn_sync_forward(dec);
	while (status >= 0 && n < blk->ninsn) {
		while (status & pts_event_pending) {
			status = pt_insn_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
		}
		if (status < 0)
			break;
		memset(&insn, 0, sizeof(insn));
		status = pt_insn_next(dec, &insn, sizeof(insn));
		if (status < 0 && !(status == -pte_eos && insn.ip && insn.size))
			break;
		cinsn_of(&w->binsns[w->nbinsns + n], &insn);
		n++;
	}
	pt_insn_free_decoder(dec);
	if (n != blk->ninsn || w->binsns[w->nbinsns + n - 1].ip != blk->end_ip)
		return -1;
	*first = (uint32_t)w->nbinsns;
	w->nbinsns += n;
	return 0;
}

/* The instructions of a block (cached), or NULL. */
static const struct cinsn *bcache_get(struct wctx *w, int32_t pid, const struct pt_block *blk)
{
	struct bentry *e;
	uint64_t h =
		(blk->ip * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(uint32_t)pid << 17) ^ blk->ninsn;

	if (!w->bcache) {
		w->bcache = snap_calloc((size_t)1 << BCACHE_BITS, sizeof(*w->bcache));
		if (!w->bcache)
			return NULL;
	}
	e = &w->bcache[(h * 0x9e3779b97f4a7c15ull) >> (64 - BCACHE_BITS)];
	if (e->used && e->ip == blk->ip && e->pid == pid && e->ninsn == blk->ninsn)
		return e->ok ? &w->binsns[e->first] : NULL;
	if (w->nbinsns > (8u << 20)) { /* bounded: start again */
		memset(w->bcache, 0, sizeof(*w->bcache) << BCACHE_BITS);
		w->nbinsns = 0;
	}
	e->used = 1;
	e->ip = blk->ip;
	e->pid = pid;
	e->ninsn = blk->ninsn;
	e->ok = bcache_fill(w, pid, blk, &e->first) == 0;
	return e->ok ? &w->binsns[e->first] : NULL;
}

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
		cinsn_of(one, &insn);
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
		*v = bcache_get(s->w, s->pid, &blk);
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
		*v = one;
		*n = 1;
		return status;
	}
}

static int decode_piece(struct wctx *w, struct piece *pc)
{
	struct snap_ptdec *d = w->d;
	struct pstate s;
	struct cinsn one;
	const struct cinsn *v;
	struct pt_event ev;
	const uint8_t *cb = pc->b, *ce = pc->e; /* the bytes the decoders read */
	int status;

	memset(&s, 0, sizeof(s));
	s.d = d;
	s.w = w;
	s.pc = pc;
	s.pid = d->per_cpu ? -2 : pc->pid; /* per CPU: set_task picks it on the first sync */
	s.tid = d->per_cpu ? -2 : pc->tid;
	s.stop_idx = NO_IDX;
	s.tk.d = d;
	if (new_decoders(&s, cb, ce) < 0) {
		free_decoders(&s);
		return -ENOMEM;
	}
	status = resync(&s);
	s.implicit_ok = 1;
	while (status != -pte_eos && !s.err) {
		size_t n;
		uint64_t eos_ip;

		if (status < 0) {
			uint64_t ip = 0;

			if (pt_errcode(status) == pte_nomap && s.have_prev && s.prev.trace) {
				/* perf reports the branch to the unreadable address first */
				const struct cinsn *p = &s.prev;
				uint64_t t = take(&s, p->cond ? TOK_TNT : TOK_TIP);

				s.have_prev = 0;
				if (s.tok_has_ip) {
					emit_branch(&s, p->flags, p->ip, s.tok_ip, t);
					ip = s.tok_ip;
				}
				confirm_all(&s);
			} else {
				ip = s.have_prev ? s.prev.ip : 0;
				s.have_prev = 0;
			}
			pc->nev = s.confirm;
			emit_error(&s, map_err(status), ip);
			pc->end_clean = 0;
			if (++s.errors_in_row > 100)
				break; /* no progress: give up the rest of this piece */
			if (s.rebuf) {
				cb = s.rebuf;
				ce = s.rebuf + s.reblen;
			}
			status = perf_resync(&s, cb, ce);
			s.implicit_ok = 0;
			continue;
		}
		pc->end_clean = 1;
		while (status & pts_event_pending) {
			status = dec_event(&s, &ev);
			if (status < 0)
				break;
			handle_event(&s, &ev);
		}
		if (status < 0)
			continue;
		status = next_insns(&s, &one, &v, &n, &eos_ip);
		for (size_t i = 0; i < n; i++) {
			const struct cinsn *in = &v[i];

			/* Fast path: a plain instruction after a plain one, nothing to
			 * start, no stop here, and the next token is known not to be a
			 * PSB+ (whose FUP this could be). */
			if (s.have_prev && !s.prev.flags && !s.prev.trace && !in->flags &&
			    !in->trace && !s.need_strt && s.tk.have && s.tk.kind != TOK_PSB &&
			    !(pc->has_stop && in->ip == pc->stop_ip)) {
				pc->insns++;
				s.since_take++;
				s.prev = *in;
				continue;
			}
			process_insn(&s, in);
		}
		if (status < 0) {
			/* libipt stops at the instruction that needs the next packet:
			 * the walk got that far (the next piece's PSB FUP, say). */
			if (status == -pte_eos && eos_ip && pc->has_stop && eos_ip == pc->stop_ip &&
			    s.stop_idx == NO_IDX) {
				if (s.have_prev && !s.prev.trace)
					resolve_prev(&s, eos_ip, 0);
				s.stop_idx = pc->nev;
			}
			if (status == -pte_eos)
				break;
			continue;
		}
	}
	/* The end of the piece: direct branches after the last packet are only
	 * reported up to the next piece's PSB (a continuous stream). */
	if (pc->has_stop && s.stop_idx != NO_IDX)
		pc->nev = s.stop_idx;
	else
		pc->nev = s.confirm;
	free_decoders(&s);
	snap_free(s.rebuf);
	return s.err;
}

/* ---- the pool ---- */

static void run_piece(struct wctx *w, struct piece *pc)
{
	int err = decode_piece(w, pc);

	pthread_mutex_lock(&w->d->mu);
	if (err < 0)
		pc->nev = 0; /* out of memory: the piece's events are lost, counted */
	pc->state = 2;
	pthread_cond_broadcast(&w->d->cv_done);
	pthread_mutex_unlock(&w->d->mu);
}

static void *worker(void *arg)
{
	struct snap_ptdec *d = arg;
	struct wctx w;

	memset(&w, 0, sizeof(w));
	w.d = d;
	pthread_mutex_lock(&d->mu);
	for (;;) {
		struct piece *pc;

		while (!d->stop && (d->dispatched == d->npieces || d->live >= d->window))
			pthread_cond_wait(&d->cv_work, &d->mu);
		if (d->stop)
			break;
		pc = &d->pieces[d->order[d->dispatched++]];
		if (pc->state != 0)
			continue; /* the reader decoded it itself */
		pc->state = 1;
		d->live++;
		pthread_mutex_unlock(&d->mu);
		run_piece(&w, pc);
		pthread_mutex_lock(&d->mu);
	}
	pthread_mutex_unlock(&d->mu);
	wctx_fini(&w);
	return NULL;
}

/* The reader's own context, for pieces it decodes itself. One decoder is open
 * at a time (successive snapshots are decoded one after the other). */
static struct wctx reader_ctx;

/* Waits until piece i is decoded (decoding it here if no worker took it yet). */
static void need_piece(struct snap_ptdec *d, size_t i)
{
	struct piece *pc = &d->pieces[i];

	pthread_mutex_lock(&d->mu);
	if (pc->state == 0) {
		pc->state = 1;
		d->live++;
		pthread_mutex_unlock(&d->mu);
		reader_ctx.d = d;
		run_piece(&reader_ctx, pc);
		pthread_mutex_lock(&d->mu);
	}
	while (pc->state == 1)
		pthread_cond_wait(&d->cv_done, &d->mu);
	pthread_mutex_unlock(&d->mu);
}

static void release_piece(struct snap_ptdec *d, struct piece *pc)
{
	pthread_mutex_lock(&d->mu);
	snap_free(pc->ev);
	pc->ev = NULL;
	pc->cap = 0;
	pc->state = 3;
	d->live--;
	pthread_cond_broadcast(&d->cv_work);
	pthread_mutex_unlock(&d->mu);
}

static struct snap_ptdec *sort_ctx;

static int cmp_order(const void *x, const void *y)
{
	const struct piece *a = &sort_ctx->pieces[*(const size_t *)x];
	const struct piece *b = &sort_ctx->pieces[*(const size_t *)y];

	if (a->start_time != b->start_time)
		return a->start_time < b->start_time ? -1 : 1;
	if (a->q != b->q)
		return a->q < b->q ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

static int start_pool(struct snap_ptdec *d)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int jobs = d->o.jobs > 0 ? d->o.jobs : (ncpu > 0 ? (int)ncpu : 1);

	if (jobs > 256)
		jobs = 256;
	d->st.jobs = jobs;
	d->order = snap_calloc(d->npieces ? d->npieces : 1, sizeof(*d->order));
	if (!d->order)
		return -ENOMEM;
	for (size_t i = 0; i < d->npieces; i++)
		d->order[i] = i;
	sort_ctx = d;
	qsort(d->order, d->npieces, sizeof(*d->order), cmp_order);
	d->window = (size_t)jobs * WINDOW_PER_J;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv_work, NULL);
	pthread_cond_init(&d->cv_done, NULL);
	d->threads_started = 1;
	/* With one job the reader decodes every piece itself, in order. */
	if (jobs <= 1)
		return 0;
	d->threads = snap_calloc((size_t)jobs, sizeof(*d->threads));
	if (!d->threads)
		return -ENOMEM;
	for (int i = 0; i < jobs; i++) {
		if (pthread_create(&d->threads[i], NULL, worker, d))
			break;
		d->nthreads++;
	}
	return 0;
}

/* ---- symbols ---- */

static int unknown_name(struct snap_ptdec *d, uint64_t addr, uint32_t dso, uint32_t *out)
{
	char buf[4200];
	const char *dname = dso ? snap_strtab_get(d->names, dso) : "[unknown]";
	int n = snprintf(buf, sizeof(buf), "[unknown @ 0x%llx (%.4000s)]", (unsigned long long)addr,
			 dname);
	int64_t id = snap_strtab_intern(d->names, buf, (size_t)n);

	if (id < 0)
		return (int)id;
	*out = (uint32_t)id;
	return 0;
}

static const struct mapping *find_map(const struct snap_ptdec *d, int32_t pid, uint64_t ip)
{
	const struct mapping *best = NULL;

	for (size_t i = 0; i < d->nmaps; i++) { /* the last mapping wins, as in perf */
		const struct mapping *m = &d->maps[i];

		if (m->pid == pid && ip >= m->start && ip - m->start < m->len)
			best = m;
	}
	return best;
}

static int resolve(struct snap_ptdec *d, int32_t pid, uint64_t ip, struct snap_loc *l)
{
	struct aent *e;
	const struct mapping *m;
	struct dso *x;
	uint64_t va;
	const struct snap_elfsym_ent *sym;
	int err;

	memset(l, 0, sizeof(*l));
	l->ip = ip;
	if (!ip)
		return 0;
	e = &d->acache[(ip * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)pid) >>
		       (64 - ACACHE_BITS)];
	if (e->used && e->ip == ip && e->pid == pid) {
		*l = e->loc;
		return 0;
	}
	m = find_map(d, pid, ip);
	if (m) {
		x = &d->dsos[m->dso];
		l->dso = x->name;
		if (!x->loaded) {
			x->loaded = 1;
			snap_elfsyms_load(&x->syms, x->path, d->debug_dir);
		}
		if (x->syms.ok &&
		    !snap_elfsyms_off2vaddr(&x->syms, ip - m->start + m->pgoff, &va) &&
		    (sym = snap_elfsyms_find(&x->syms, va)) != NULL) {
			int64_t id =
				snap_strtab_intern_cstr(d->names, snap_elfsyms_name(&x->syms, sym));

			if (id < 0)
				return (int)id;
			l->sym = (uint32_t)id;
			l->off = va - sym->start;
		}
	}
	if (!l->sym && (err = unknown_name(d, ip, l->dso, &l->sym)) < 0)
		return err;
	e->used = 1;
	e->ip = ip;
	e->pid = pid;
	e->loc = *l;
	return 0;
}

/* The thread's command at time t: its last COMM at or before t, else its first. */
static uint32_t comm_at(struct snap_ptdec *d, int32_t tid, uint64_t t)
{
	uint32_t c = 0, first = 0;
	uint64_t from = 0, until = UINT64_MAX;

	if (d->comm_tid == tid && d->comm_val && t >= d->comm_from && t < d->comm_until)
		return d->comm_val;
	for (size_t i = 0; i < d->ncomms; i++) {
		if (d->comms[i].tid != tid)
			continue;
		if (!first)
			first = d->comms[i].name;
		if (d->comms[i].time <= t || d->timeless) {
			c = d->comms[i].name;
			from = d->comms[i].time;
		} else if (d->comms[i].time < until) {
			until = d->comms[i].time;
		}
	}
	d->comm_tid = tid;
	d->comm_val = c ? c : first;
	d->comm_from = c ? from : 0;
	d->comm_until = c ? until : (until == UINT64_MAX ? UINT64_MAX : until);
	if (!c)
		d->comm_from = 0;
	return d->comm_val;
}

/* ---- the reader ---- */

/* The next raw event of queue q, or NULL at its end. Joins pieces. */
static const struct rawev *queue_peek(struct snap_ptdec *d, struct queue *q)
{
	for (;;) {
		struct piece *pc;
		const struct rawev *r;

		if (q->cur == q->npieces)
			return NULL;
		pc = &d->pieces[q->pieces[q->cur]];
		if (q->ready != q->cur + 1) { /* seen done under the lock once, then read freely */
			need_piece(d, q->pieces[q->cur]);
			q->ready = q->cur + 1;
		}
		if (q->pos < pc->nev) {
			r = &pc->ev[q->pos];
			/* A continuation piece's first "tr strt" is no restart when the
			 * previous piece of the stream ended cleanly. */
			if (r->implicit && !pc->run_start) {
				q->pos++;
				continue;
			}
			if (r->kind == RAW_POWER) {
				if ((int64_t)r->addr == q->last_cbr) {
					q->pos++;
					continue;
				}
			}
			return r;
		}
		q->prev_clean = pc->end_clean;
		d->st.insns += pc->insns;
		release_piece(d, pc);
		q->cur++;
		q->pos = 0;
	}
}

int snap_ptdec_next(struct snap_ptdec *d, struct snap_event *ev)
{
	const struct rawev *best = NULL;
	struct queue *bq = NULL;
	int err;

	for (size_t i = 0; i < d->nqueues; i++) {
		struct queue *q = &d->queues[i];
		const struct rawev *r;

		if (!q->head_ok) { /* only the queue consumed last needs a new look */
			q->head = queue_peek(d, q);
			q->head_ok = 1;
		}
		r = q->head;
		if (r && (!best || r->time < best->time)) {
			best = r;
			bq = &d->queues[i];
		}
	}
	if (!best)
		return 0;
	bq->pos++;
	bq->head_ok = 0;
	if (best->kind == RAW_POWER)
		bq->last_cbr = (int64_t)best->addr;
	if (d->debug)
		fprintf(stderr, "ptdec: q%zu k%d t%llu %d/%d f%x %llx -> %llx\n",
			(size_t)(bq - d->queues), best->kind, (unsigned long long)best->time,
			best->pid, best->tid, best->flags, (unsigned long long)best->ip,
			(unsigned long long)best->addr);
	memset(ev, 0, sizeof(*ev));
	ev->pid = best->pid;
	ev->tid = best->tid;
	ev->time = best->time;
	ev->has_time = 1;
	if (d->timeless)
		ev->time = ++d->seq;
	ev->comm = comm_at(d, best->tid, best->time);
	if (best->kind == RAW_ERROR) {
		int64_t id = snap_strtab_intern_cstr(d->names, err_msgs[best->err]);

		if (id < 0)
			return (int)id;
		ev->kind = SNAP_EV_ERROR;
		ev->msg = (uint32_t)id;
		ev->src.ip = best->ip;
		d->st.errors++;
		return 1;
	}
	if (best->kind == RAW_POWER) {
		ev->kind = SNAP_EV_POWER;
		ev->freq_mhz = (uint32_t)((best->addr * d->cbr2khz + 500) / 1000);
		return 1;
	}
	ev->kind = SNAP_EV_BRANCH;
	snap_event_set_branch_flags(ev, best->flags);
	if ((err = resolve(d, best->pid, best->ip, &ev->src)) < 0 ||
	    (err = resolve(d, best->pid, best->addr, &ev->dst)) < 0)
		return err;
	d->st.branches++;
	return 1;
}

/* ---- open / close ---- */

static int check_support(struct snap_ptdec *d, char *why, size_t whylen)
{
	const struct snap_pd *pd = &d->pd;
	uint64_t cfg = pd->pt_config;

	if (!pd->exclude_kernel)
		return snap_pd_notsup(why, whylen,
				      "it traces the kernel (only user-space traces are "
				      "decoded in-process)");
	if ((pd->priv[SNAP_PD_PT_CYC_BIT] && (cfg & pd->priv[SNAP_PD_PT_CYC_BIT])) ||
	    (pd->priv[SNAP_PD_PT_MTC_BIT] && (cfg & pd->priv[SNAP_PD_PT_MTC_BIT])))
		return snap_pd_notsup(why, whylen,
				      "it has cycle-accurate or MTC timing (perf's timestamp "
				      "interpolation is not reproduced)");
	if (!pd->sample_id_all)
		return snap_pd_notsup(why, whylen,
				      "its sideband has no sample_id (times of mmaps and "
				      "switches unknown)");
	if (!pd->naux)
		return snap_pd_notsup(why, whylen, "it has no AUXTRACE data");
	return 0;
}

int snap_ptdec_open_mem(struct snap_ptdec **out, const void *buf, size_t len,
			const struct snap_ptdec_opts *o, struct snap_strtab *names, char *why,
			size_t whylen)
{
	struct snap_ptdec *d = snap_calloc(1, sizeof(*d));
	int err;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->names = names;
	if (o)
		d->o = *o;
	d->debug = getenv("SNAPTRACE_PTDEC_DEBUG") != NULL;
	d->use_blocks = !getenv("SNAPTRACE_PTDEC_INSN");
	d->comm_tid = -3;
	snprintf(d->debug_dir, sizeof(d->debug_dir), "%s",
		 d->o.debug_dir ? d->o.debug_dir : "/usr/lib/debug");
	snap_u64map_init(&d->tidpid);
	err = snap_pd_parse(&d->pd, buf, len, why, whylen);
	if (err >= 0)
		err = check_support(d, why, whylen);
	if (err < 0)
		goto fail;
	d->timeless = !d->pd.priv[SNAP_PD_PT_TSC_BIT] ||
		      !(d->pd.pt_config & d->pd.priv[SNAP_PD_PT_TSC_BIT]);
	d->per_cpu = d->pd.priv[SNAP_PD_PT_PER_CPU_MMAPS] != 0;
	for (size_t i = 0; i < d->pd.naux && !d->per_cpu; i++)
		d->per_cpu = d->pd.aux[i].cpu >= 0 && d->pd.aux[i].tid < 0;
	d->snapshot = d->pd.priv[SNAP_PD_PT_SNAPSHOT_MODE] != 0;
	{
		/* perf's cbr2khz: TSC frequency / max non-turbo ratio / 1000. */
		const struct snap_pd_tc *tc = &d->pd.tc;
		uint64_t ns = 1000000000ull, tsc_freq = 0, ratio;

		if (tc->time_mult && tc->time_shift < 32)
			tsc_freq = ((ns / tc->time_mult) << tc->time_shift) +
				   ((ns % tc->time_mult) << tc->time_shift) / tc->time_mult;
		ratio = d->pd.priv[SNAP_PD_PT_MAX_NONTURBO_RATIO];
		if (!ratio)
			ratio = (tsc_freq + 50000000) / 100000000;
		d->cbr2khz = ratio ? tsc_freq / ratio / 1000 : 0;
	}
	d->st.lost = d->pd.lost;
	d->st.aux_truncated = d->pd.aux_truncated;
	d->st.aux_partial = d->pd.aux_partial;
	d->iscache = pt_iscache_alloc(NULL);
	d->acache = snap_calloc((size_t)1 << ACACHE_BITS, sizeof(*d->acache));
	err = -ENOMEM;
	if (!d->iscache || !d->acache)
		goto fail;
	if ((err = read_sideband(d)) < 0 || (err = split_buffers(d)) < 0 ||
	    (err = start_pool(d)) < 0)
		goto fail;
	*out = d;
	return 0;
fail:
	snap_ptdec_close(d);
	return err;
}

int snap_ptdec_open(struct snap_ptdec **out, const char *path, const struct snap_ptdec_opts *o,
		    struct snap_strtab *names, char *why, size_t whylen)
{
	const void *m;
	size_t len;
	int err;

	*out = NULL;
	err = snap_fmap(path, 1, UINT64_MAX, 0, &m, &len);
	if (err != 0)
		return err == 1 ? -SNAP_ETRUNC : err;
	err = snap_ptdec_open_mem(out, m, len, o, names, why, whylen);
	if (err < 0) {
		snap_funmap(m, len);
		return err;
	}
	(*out)->map = m;
	(*out)->maplen = len;
	return 0;
}

int snap_ptdec_timeless(const struct snap_ptdec *d)
{
	return d->timeless;
}

void snap_ptdec_stats(const struct snap_ptdec *d, struct snap_ptdec_stats *s)
{
	*s = d->st;
}

void snap_ptdec_close(struct snap_ptdec *d)
{
	if (!d)
		return;
	if (d->threads_started) {
		pthread_mutex_lock(&d->mu);
		d->stop = 1;
		pthread_cond_broadcast(&d->cv_work);
		pthread_mutex_unlock(&d->mu);
		for (int i = 0; i < d->nthreads; i++)
			pthread_join(d->threads[i], NULL);
		pthread_mutex_destroy(&d->mu);
		pthread_cond_destroy(&d->cv_work);
		pthread_cond_destroy(&d->cv_done);
	}
	wctx_fini(&reader_ctx);
	snap_free(d->threads);
	for (size_t i = 0; i < d->npieces; i++)
		snap_free(d->pieces[i].ev);
	for (size_t i = 0; i < d->nqueues; i++)
		snap_free(d->queues[i].pieces);
	snap_free(d->queues);
	snap_free(d->pieces);
	snap_free(d->order);
	for (size_t i = 0; i < d->nprocs; i++)
		pt_image_free(d->procs[i].img);
	snap_free(d->procs);
	for (size_t i = 0; i < d->ndsos; i++) {
		snap_free(d->dsos[i].path);
		snap_elfsyms_fini(&d->dsos[i].syms);
	}
	snap_free(d->dsos);
	snap_free(d->maps);
	snap_free(d->sws);
	snap_free(d->comms);
	snap_free(d->acache);
	snap_u64map_fini(&d->tidpid);
	if (d->iscache)
		pt_iscache_free(d->iscache);
	snap_pd_fini(&d->pd);
	if (d->map)
		snap_funmap(d->map, d->maplen);
	snap_free(d);
}
