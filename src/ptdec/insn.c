// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process PT decoder (ptdec_int.h): the code a worker walks. Its copies
 * of the process images, what ptdec needs of one instruction (perf's flags, a
 * direct target, whether libipt needs trace to get past it), and two caches of
 * walked code: libipt blocks expanded into their instructions (the libipt
 * path) and runs, the instructions from an IP to the first one that needs
 * trace (the fast walk). Both are filled by libipt's instruction decoder
 * walking the code on a made-up trace (PSB+, TIP.PGE to the first IP) that
 * ends where the walk would need a packet.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "ptdec/ptdec_int.h"
#include "util/alloc.h"
#include "util/vec.h"

/* ---- images ---- */

struct pt_image *ptd_wimage(struct wctx *w, int32_t pid)
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
	else if (w->d->kimg) /* a task without user mappings: the kernel's code */
		pt_image_copy(w->imgs[w->nimgs].img, w->d->kimg);
	return w->imgs[w->nimgs++].img;
}

void ptd_wctx_fini(struct wctx *w)
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
	snap_free(w->rcache);
	snap_free(w->rinsns);
	snap_free(w->rbr);
	w->rshift = 0;
	w->rused = 0;
	w->rcache = NULL;
	w->rinsns = NULL;
	w->rbr = NULL;
	w->nrinsns = w->caprinsns = w->nrbr = w->caprbr = 0;
	snap_free(w->lcache); /* locations of w->d (pool.c) */
	w->lcache = NULL;
}

/* ---- one instruction ---- */

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
	case ptic_far_return: {
		/* sysret/sysexit 0f 07 / 0f 35, also after a REX prefix (sysretq 48 0f 07) */
		uint8_t r = in->size >= 3 && (in->raw[0] & 0xf0) == 0x40 ? 1 : 0;

		if (in->size >= r + 2 && in->raw[r] == 0x0f &&
		    (in->raw[r + 1] == 0x07 || in->raw[r + 1] == 0x35))
			return SNAP_PF_BRANCH | SNAP_PF_RETURN | SNAP_PF_SYSCALLRET;
		if (in->raw[0] == 0xcf || (in->size >= 2 && in->raw[1] == 0xcf))
			return SNAP_PF_BRANCH | SNAP_PF_RETURN | SNAP_PF_INTERRUPT;
		return SNAP_PF_BRANCH | SNAP_PF_RETURN;
	}
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

void ptd_cinsn_of(struct cinsn *c, const struct pt_insn *in)
{
	c->ip = in->ip;
	c->target = direct_target(in);
	c->flags = class_flags(in->iclass, in);
	c->size = in->size;
	c->cond = in->iclass == ptic_cond_jump;
	c->trace = (uint8_t)needs_trace(in);
	c->cls = (uint8_t)in->iclass;
}

int ptd_encode_sync(uint8_t *buf, size_t len, uint64_t ip, const uint64_t *tsc)
{
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_packet pk[5];
	uint64_t off = 0;
	int n = 0, err = 0;

	memset(pk, 0, sizeof(pk));
	pk[n++].type = ppt_psb;
	pk[n].type = ppt_mode;
	pk[n].payload.mode.leaf = pt_mol_exec;
	pk[n++].payload.mode.bits.exec.csl = 1;
	if (tsc) {
		pk[n].type = ppt_tsc;
		pk[n++].payload.tsc.tsc = *tsc;
	}
	pk[n++].type = ppt_psbend;
	pk[n].type = ppt_tip_pge;
	pk[n].payload.ip.ipc = pt_ipc_full;
	pk[n++].payload.ip.ip = ip;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + len;
	enc = pt_alloc_encoder(&cfg);
	if (!enc)
		return -1;
	for (int i = 0; i < n; i++)
		if (pt_enc_next(enc, &pk[i]) < 0)
			err = -1;
	pt_enc_get_offset(enc, &off);
	pt_free_encoder(enc);
	return err || off > len ? -1 : (int)off;
}

/* A decoder for the made-up trace that enables tracing at ip (64-bit code):
 * buf holds its bytes. NULL on failure. */
static struct pt_insn_decoder *madeup_decoder(struct pt_image *img, uint64_t ip, uint8_t *buf,
					      size_t len)
{
	struct pt_config cfg;
	struct pt_insn_decoder *dec;
	int n = ptd_encode_sync(buf, len, ip, NULL);

	if (n < 0)
		return NULL;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + n;
	dec = pt_insn_alloc_decoder(&cfg);
	if (!dec)
		return NULL;
	pt_insn_set_image(dec, img);
	return dec;
}

int ptd_add_section(struct snap_ptdec *d, const char *path, uint64_t off, uint64_t size,
		    uint64_t vaddr)
{
	int isid = pt_iscache_add_file(d->iscache, path, off, size, vaddr);
	size_t old = d->nsecs;
	struct stat st;

	if (isid <= 0)
		return isid;
	if (snap_vec_reserve(&d->secs, &d->nsecs, (size_t)isid + 1, sizeof(*d->secs)) < 0)
		return -pte_nomem;
	if (d->nsecs > old)
		memset(d->secs + old, 0, (d->nsecs - old) * sizeof(*d->secs));
	/* libipt cuts a section at the end of its file (pt_mk_section) */
	if (stat(path, &st) == 0 && st.st_size >= 0 && (uint64_t)st.st_size > off &&
	    (uint64_t)st.st_size - off < size)
		size = (uint64_t)st.st_size - off;
	d->secs[isid].vaddr = vaddr;
	d->secs[isid].size = size;
	return isid;
}

int ptd_in_section(const struct snap_ptdec *d, int isid, uint64_t ip, uint64_t size)
{
	const struct secbound *b;

	if (isid <= 0 || (size_t)isid >= d->nsecs)
		return 0;
	b = &d->secs[isid];
	return ip >= b->vaddr && ip - b->vaddr <= b->size && size <= b->size - (ip - b->vaddr);
}

/* The next instruction of the made-up walk: 1 and *out, 0 at its end (the
 * instruction that needed a packet is returned before that), -1 on an error.
 * With d, also -1 for an instruction that runs past the end of its section
 * (libipt's block decoder, which reads a section at a time, stops there where
 * the instruction decoder goes on). */
static int madeup_next(struct pt_insn_decoder *dec, int *status, struct cinsn *out,
		       const struct snap_ptdec *d)
{
	struct pt_insn insn;
	struct pt_event ev;

	if (*status < 0)
		return 0;
	while (*status & pts_event_pending) {
		*status = pt_insn_event(dec, &ev, sizeof(ev));
		if (*status < 0)
			return -1;
	}
	memset(&insn, 0, sizeof(insn));
	*status = pt_insn_next(dec, &insn, sizeof(insn));
	if (*status < 0 && !(*status == -pte_eos && insn.ip && insn.size))
		return -1;
	if (d && !ptd_in_section(d, insn.isid, insn.ip, insn.size))
		return -1;
	ptd_cinsn_of(out, &insn);
	return 1;
}

#define RCACHE_BITS 14 /* at most; it starts with RCACHE_MIN and doubles when half full */
#define RCACHE_MIN  9
#define RUN_MAX	    4096 /* longer runs (a loop of direct jumps) are left to libipt */

/* The run cache (struct run): for a process and an IP, the instructions the
 * walk executes from there up to and including the first one that needs
 * trace (a conditional, indirect or far branch, or a return), following
 * direct jumps and calls, and the indices of its direct branches. */
static int run_fill(struct wctx *w, struct run *r)
{
	uint8_t buf[64];
	struct pt_image *img = ptd_wimage(w, r->pid);
	struct pt_insn_decoder *dec = img ? madeup_decoder(img, r->ip, buf, sizeof(buf)) : NULL;
	const struct cinsn *v;
	size_t n = 0, nbr = 0;
	int status, got = 0;

	if (!dec)
		return 0;
	status = pt_insn_sync_forward(dec);
	while (n < RUN_MAX) {
		if (snap_vec_reserve(&w->rinsns, &w->caprinsns, w->nrinsns + n + 1,
				     sizeof(*w->rinsns))) {
			got = -1;
			break;
		}
		got = madeup_next(dec, &status, &w->rinsns[w->nrinsns + n], w->d);
		if (got <= 0)
			break;
		if (w->rinsns[w->nrinsns + n++].trace)
			break;
	}
	pt_insn_free_decoder(dec);
	/* Complete only if it ends at an instruction that needs trace, and
	 * libipt needed a packet exactly there. */
	v = &w->rinsns[w->nrinsns];
	if (got < 0 || !n || !v[n - 1].trace || status != -pte_eos)
		return 0;
	for (size_t i = 0; i + 1 < n; i++) {
		if (!v[i].flags)
			continue;
		if (snap_vec_reserve(&w->rbr, &w->caprbr, w->nrbr + nbr + 1, sizeof(*w->rbr)))
			return 0;
		w->rbr[w->nrbr + nbr++] = (uint32_t)i;
		/* A call to the next instruction pushes no return address (libipt):
		 * left to libipt. */
		r->callnext |= v[i].cls == ptic_call && v[i].target == v[i].ip + v[i].size;
	}
	r->first = (uint32_t)w->nrinsns;
	r->br = (uint32_t)w->nrbr;
	r->nbr = (uint32_t)nbr;
	r->n = (uint32_t)n;
	w->nrinsns += n;
	w->nrbr += nbr;
	return 0;
}

/* The run cache with twice the slots (RCACHE_MIN at first), its runs moved
 * over (one that finds its slot and the pair taken is dropped: a cache).
 * A worker's cache so takes the memory its code needs, not the most it may
 * (docs/ptdec.md, "Memory"). 0, or -1 out of memory (the old one stays). */
static int rcache_grow(struct wctx *w)
{
	unsigned old = 64 - w->rshift, bits = w->rcache ? old + 1 : RCACHE_MIN;
	struct run *t = snap_calloc((size_t)1 << bits, sizeof(*t));

	if (!t)
		return -1;
	w->rused = 0;
	for (size_t k = 0; w->rcache && k < (size_t)1 << old; k++) {
		const struct run *r = &w->rcache[k];
		size_t i;

		if (!r->used)
			continue;
		i = ptd_run_hash(r->pid, r->ip) >> (64 - bits);
		if (t[i].used)
			i ^= 1;
		if (!t[i].used) {
			t[i] = *r;
			w->rused++;
		}
	}
	snap_free(w->rcache);
	w->rcache = t;
	w->rshift = 64 - bits;
	return 0;
}

struct run *ptd_run_get(struct wctx *w, int32_t pid, uint64_t ip)
{
	struct run *r;
	uint64_t h = ptd_run_hash(pid, ip);
	size_t i;

	if (!w->rcache && rcache_grow(w) < 0)
		return NULL;
	/* two ways: the slot and its pair, the one used last in the slot (hot runs
	 * whose slots collide no longer evict each other) */
	i = h >> w->rshift;
	r = &w->rcache[i];
	if (!(r->used && r->ip == ip && r->pid == pid)) {
		struct run *o = &w->rcache[i ^ 1], t;

		if (o->used && o->ip == ip && o->pid == pid) {
			t = *r;
			*r = *o;
			*o = t;
			return r->n ? r : NULL;
		}
		if (w->rshift > 64 - RCACHE_BITS &&
		    w->rused >= ((size_t)1 << (64 - w->rshift)) / 2 && rcache_grow(w) == 0) {
			i = h >> w->rshift;
			r = &w->rcache[i];
			o = &w->rcache[i ^ 1];
		}
		if (w->nrinsns > (8u << 20)) { /* bounded: start again */
			memset(w->rcache, 0, sizeof(*w->rcache) << (64 - w->rshift));
			w->nrinsns = w->nrbr = 0;
			w->rused = 0;
		} else if (r->used) {
			w->rused += !o->used;
			*o = *r;
		}
		w->rused += !r->used;
		memset(r, 0, sizeof(*r));
		r->used = 1;
		r->ip = ip;
		r->pid = pid;
		run_fill(w, r);
	}
	return r->n ? r : NULL;
}

int ptd_run_has(const struct wctx *w, struct run *r, uint64_t ip)
{
	if (!r->asked || r->asked_ip != ip) {
		const struct cinsn *v = &w->rinsns[r->first];

		r->asked = 1;
		r->asked_ip = ip;
		r->has = 0;
		for (uint32_t i = 1; i < r->n && !r->has; i++)
			r->has = v[i].ip == ip;
	}
	return r->has;
}

/* ---- the block cache (the libipt path) ---- */

/* The block cache: each libipt block (image, first ip, instruction count)
 * expanded once into its instructions, following direct jumps and calls. */
struct bentry {
	uint64_t ip, end_ip;
	int32_t pid;
	uint16_t ninsn;
	uint8_t used, ok;
	uint8_t mode;	/* enum pt_exec_mode: a block of 32-bit code is not expanded */
	uint32_t first; /* index in wctx.binsns */
};

#define BCACHE_BITS 14

/* Expands a block into its instructions: libipt's instruction decoder walks it
 * on a made-up trace (PSB+, TIP.PGE to the block's first ip) that ends where
 * the walk would need a packet, which is where libipt ends a block. */
static int bcache_fill(struct wctx *w, int32_t pid, const struct pt_block *blk, uint32_t *first)
{
	uint8_t buf[64];
	struct pt_image *img = ptd_wimage(w, pid);
	struct pt_insn_decoder *dec;
	size_t n = 0;
	int status;

	if (!img || blk->mode != ptem_64bit)
		return -1;
	dec = madeup_decoder(img, blk->ip, buf, sizeof(buf));
	if (!dec)
		return -1;
	if (snap_vec_reserve(&w->binsns, &w->capbinsns, w->nbinsns + blk->ninsn,
			     sizeof(*w->binsns))) {
		pt_insn_free_decoder(dec);
		return -1;
	}
	status = pt_insn_sync_forward(dec);
	while (n < blk->ninsn && madeup_next(dec, &status, &w->binsns[w->nbinsns + n], NULL) > 0)
		n++;
	pt_insn_free_decoder(dec);
	if (n != blk->ninsn || w->binsns[w->nbinsns + n - 1].ip != blk->end_ip)
		return -1;
	*first = (uint32_t)w->nbinsns;
	w->nbinsns += n;
	return 0;
}

/* The instructions of a block (cached), or NULL. */
const struct cinsn *ptd_bcache_get(struct wctx *w, int32_t pid, const struct pt_block *blk)
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
	/* The whole block is the key: what is cached never depends on what came first. */
	if (e->used && e->ip == blk->ip && e->pid == pid && e->ninsn == blk->ninsn &&
	    e->end_ip == blk->end_ip && e->mode == (uint8_t)blk->mode)
		return e->ok ? &w->binsns[e->first] : NULL;
	if (w->nbinsns > (8u << 20)) { /* bounded: start again */
		memset(w->bcache, 0, sizeof(*w->bcache) << BCACHE_BITS);
		w->nbinsns = 0;
	}
	e->used = 1;
	e->ip = blk->ip;
	e->pid = pid;
	e->ninsn = blk->ninsn;
	e->end_ip = blk->end_ip;
	e->mode = (uint8_t)blk->mode;
	e->ok = bcache_fill(w, pid, blk, &e->first) == 0;
	return e->ok ? &w->binsns[e->first] : NULL;
}
