// SPDX-License-Identifier: GPL-2.0
/*
 * perf.data reading for the in-process PT decoder (ptdec/pdata.h). Layouts:
 * tools/perf/Documentation/perf.data-file-format.txt and
 * include/uapi/linux/perf_event.h. Little-endian files only (x86).
 */
#include "ptdec/pdata.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "util/alloc.h"
#include "util/bytes.h"
#include "util/err.h"
#include "util/vec.h"

#define HDR_SIZE  104
#define ATTR_VER0 64

#define ST_IP	      0x1ull
#define ST_TID	      0x2ull
#define ST_TIME	      0x4ull
#define ST_ID	      0x40ull
#define ST_CPU	      0x80ull
#define ST_STREAM_ID  0x200ull
#define ST_IDENTIFIER 0x10000ull
#define ST_ID_BITS    (ST_TID | ST_TIME | ST_ID | ST_CPU | ST_STREAM_ID | ST_IDENTIFIER)

static int popcount64(uint64_t v)
{
	int n = 0;

	for (; v; v &= v - 1)
		n++;
	return n;
}

/* Fills rec's pid/tid/time/cpu from the sample_id trailer of a non-sample record. */
static void sample_id(const struct snap_pd *pd, struct snap_pd_rec *r)
{
	uint64_t st = pd->sample_type;
	size_t need = (size_t)popcount64(st & ST_ID_BITS) * 8;
	const uint8_t *p;

	r->time = 0;
	r->pid = r->tid = r->cpu = -1;
	if (!pd->sample_id_all || need + 8 > r->size)
		return;
	p = r->p + r->size - need;
	if (st & ST_TID) {
		r->pid = (int32_t)snap_get32(p);
		r->tid = (int32_t)snap_get32(p + 4);
		p += 8;
	}
	if (st & ST_TIME) {
		r->time = snap_get64(p);
		p += 8;
	}
	if (st & ST_ID)
		p += 8;
	if (st & ST_STREAM_ID)
		p += 8;
	if (st & ST_CPU)
		r->cpu = (int32_t)snap_get32(p);
}

static int read_attrs(struct snap_pd *pd, uint64_t attr_size, uint64_t off, uint64_t size,
		      char *why, size_t whylen)
{
	uint64_t id_bits = 0;
	int first = 1;

	if (attr_size < ATTR_VER0 + 16 || attr_size > 4096 || size % attr_size)
		return -SNAP_EPARSE;
	if (off > pd->len || size > pd->len - off)
		return -SNAP_ETRUNC;
	for (uint64_t a = 0; a < size; a += attr_size) {
		const uint8_t *p = pd->buf + off + a;
		uint64_t st = snap_get64(p + 24), flags = snap_get64(p + 40);

		if (first) {
			id_bits = st & ST_ID_BITS;
			pd->sample_type = st;
			pd->sample_id_all = (flags >> 18) & 1;
			first = 0;
		} else if ((st & ST_ID_BITS) != id_bits) {
			return snap_pd_notsup(why, whylen,
					      "its events have different sample_id layouts");
		}
		pd->nattrs++;
	}
	return pd->nattrs ? 0 : -SNAP_EPARSE;
}

/* Picks the attribute of the PT PMU (type = AUXTRACE_INFO's PMU type). */
static int find_pt_attr(struct snap_pd *pd, uint64_t attr_size, uint64_t off, uint64_t size)
{
	for (uint64_t a = 0; a < size; a += attr_size) {
		const uint8_t *p = pd->buf + off + a;
		uint64_t flags = snap_get64(p + 40);

		if (snap_get32(p) != (uint32_t)pd->priv[SNAP_PD_PT_PMU_TYPE])
			continue;
		pd->pt_type = snap_get32(p);
		pd->pt_config = snap_get64(p + 8);
		pd->sample_type = snap_get64(p + 24);
		pd->exclude_user = (flags >> 4) & 1;
		pd->exclude_kernel = (flags >> 5) & 1;
		pd->sample_id_all = (flags >> 18) & 1;
		pd->context_switch = (flags >> 26) & 1;
		return 0;
	}
	return -ENOENT;
}

static int add_rec(struct snap_pd *pd, const struct snap_pd_rec *r)
{
	int err = snap_vec_reserve(&pd->recs, &pd->reccap, pd->nrecs + 1, sizeof(*pd->recs));

	if (err)
		return err;
	pd->recs[pd->nrecs++] = *r;
	return 0;
}

static int add_aux(struct snap_pd *pd, const uint8_t *p, const uint8_t *data)
{
	struct snap_pd_aux *a;
	int err = snap_vec_reserve(&pd->aux, &pd->auxcap, pd->naux + 1, sizeof(*pd->aux));

	if (err)
		return err;
	a = &pd->aux[pd->naux++];
	a->size = snap_get64(p + 8);
	a->offset = snap_get64(p + 16);
	a->ref = snap_get64(p + 24);
	a->idx = snap_get32(p + 32);
	a->tid = (int32_t)snap_get32(p + 36);
	a->cpu = (int32_t)snap_get32(p + 40);
	a->data = data;
	a->nrec = pd->nrecs;
	return 0;
}

static void read_info(struct snap_pd *pd, const uint8_t *p, size_t size)
{
	size_t n = (size - 16) / 8;

	if (snap_get32(p + 8) != 1) /* PERF_AUXTRACE_INTEL_PT */
		return;
	if (n > SNAP_PD_PT_NPRIV)
		n = SNAP_PD_PT_NPRIV;
	memset(pd->priv, 0, sizeof(pd->priv));
	for (size_t i = 0; i < n; i++)
		pd->priv[i] = snap_get64(p + 16 + 8 * i);
	pd->have_info = 1;
	pd->tc.time_shift = (uint16_t)pd->priv[SNAP_PD_PT_TIME_SHIFT];
	pd->tc.time_mult = (uint32_t)pd->priv[SNAP_PD_PT_TIME_MULT];
	pd->tc.time_zero = pd->priv[SNAP_PD_PT_TIME_ZERO];
	pd->tc.cap_user_time_zero = pd->priv[SNAP_PD_PT_CAP_USER_TIME_ZERO] != 0;
}

#define FEAT_BUILD_ID  2
#define FEAT_OSRELEASE 3
#define FEAT_BITS      256

/* The build-id table: perf_record_header_build_id entries (header, pid,
 * build_id[24] whose byte 20 is the size when misc says so, filename). */
static int read_bids(struct snap_pd *pd, const uint8_t *p, uint64_t size)
{
	uint64_t pos = 0;
	int err;

	while (pos + 36 <= size) {
		const uint8_t *r = p + pos;
		uint16_t misc = snap_get16(r + 4), rsz = snap_get16(r + 6);
		struct snap_pd_bid *b;

		if (rsz < 36 || rsz > size - pos) {
			pd->bad_records++;
			return 0;
		}
		if ((err = snap_vec_reserve(&pd->bids, &pd->bidcap, pd->nbids + 1,
					    sizeof(*pd->bids))) < 0)
			return err;
		b = &pd->bids[pd->nbids++];
		b->pid = (int32_t)snap_get32(r + 8);
		b->misc = misc & SNAP_PD_MISC_CPUMODE_MASK;
		b->len = (misc & SNAP_PD_MISC_BUILD_ID_SIZE) ? r[32] : 20;
		if (b->len > 20)
			b->len = 20;
		memcpy(b->id, r + 12, 20);
		b->name = (const char *)r + 36;
		b->namelen = strnlen(b->name, rsz - 36u);
		pos += rsz;
	}
	return 0;
}

/* The feature sections perf writes after the data: a {offset, size} pair per
 * feature bit set in the header, in bit order. */
static int read_features(struct snap_pd *pd, uint64_t doff, uint64_t dsize)
{
	const uint8_t *b = pd->buf;
	uint64_t tab = doff + dsize;
	unsigned idx = 0;
	int err;

	if (dsize > pd->len || doff > pd->len - dsize)
		return 0;
	for (unsigned bit = 0; bit < FEAT_BITS; bit++) {
		uint64_t off, size;

		if (!((snap_get64(b + 72 + 8 * (bit / 64)) >> (bit % 64)) & 1))
			continue;
		if (tab + 16 * (uint64_t)(idx + 1) > pd->len)
			return 0; /* a table cut short: features are optional */
		off = snap_get64(b + tab + 16 * idx);
		size = snap_get64(b + tab + 16 * idx + 8);
		idx++;
		if (off > pd->len || size > pd->len - off)
			continue;
		if (bit == FEAT_BUILD_ID && (err = read_bids(pd, b + off, size)) < 0)
			return err;
		if (bit == FEAT_OSRELEASE && size > 4) {
			uint64_t n = snap_get32(b + off);

			if (n > size - 4)
				n = size - 4;
			snprintf(pd->osrelease, sizeof(pd->osrelease), "%.*s",
				 (int)strnlen((const char *)b + off + 4, n),
				 (const char *)b + off + 4);
		}
	}
	return 0;
}

const struct snap_pd_bid *snap_pd_find_bid(const struct snap_pd *pd, const char *name,
					   size_t namelen)
{
	for (size_t i = 0; i < pd->nbids; i++)
		if (pd->bids[i].namelen == namelen && !memcmp(pd->bids[i].name, name, namelen) &&
		    pd->bids[i].len)
			return &pd->bids[i];
	return NULL;
}

void snap_pd_bid_hex(const uint8_t *id, size_t len, char *out)
{
	static const char hx[] = "0123456789abcdef";

	if (len > 20)
		len = 20;
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = hx[id[i] >> 4];
		out[2 * i + 1] = hx[id[i] & 15];
	}
	out[2 * len] = 0;
}

/* snap_pd_parse_map: the spans of the file before the one at p leave memory. */
static void drop_before(struct snap_pd *pd, const uint8_t *p)
{
	uintptr_t m = (uintptr_t)pd->buf, from, to;

	if (!pd->drop_page || p < pd->buf || (size_t)(p - pd->buf) > pd->len)
		return;
	from = (m + pd->dropped) & ~(uintptr_t)(pd->drop_page - 1);
	to = (uintptr_t)p & ~(uintptr_t)(SNAP_PD_DROP_SPAN - 1);
	if (to <= from)
		return;
	madvise((void *)from, to - from, MADV_DONTNEED);
	pd->dropped = to - m;
}

static int parse(struct snap_pd *pd, const void *buf, size_t len, size_t pagesz, char *why,
		 size_t whylen)
{
	const uint8_t *b = buf;
	uint64_t hsize, attr_size, aoff, asize, doff, dsize, end, pos;
	int err;

	memset(pd, 0, sizeof(*pd));
	pd->buf = b;
	pd->len = len;
	pd->drop_page = pagesz;
	if (why && whylen)
		*why = 0;
	if (len < 16 || memcmp(b, "PERFILE2", 8))
		return -SNAP_EFORMAT;
	hsize = snap_get64(b + 8);
	if (hsize != HDR_SIZE)
		return snap_pd_notsup(why, whylen, "it was written to a pipe (perf record -o -)");
	if (len < HDR_SIZE)
		return -SNAP_ETRUNC;
	attr_size = snap_get64(b + 16);
	aoff = snap_get64(b + 24);
	asize = snap_get64(b + 32);
	doff = snap_get64(b + 40);
	dsize = snap_get64(b + 48);
	if ((err = read_attrs(pd, attr_size, aoff, asize, why, whylen)) < 0)
		return err;
	if (doff > len)
		return -SNAP_ETRUNC;
	if ((err = read_features(pd, doff, dsize)) < 0)
		return err;
	end = dsize && dsize <= len - doff ? doff + dsize : len;
	for (pos = doff; pos + 8 <= end;) {
		const uint8_t *p = b + pos;
		struct snap_pd_rec r;

		memset(&r, 0, sizeof(r));
		r.type = snap_get32(p);
		r.misc = snap_get16(p + 4);
		r.size = snap_get16(p + 6);
		r.p = p;
		drop_before(pd, p);
		if (r.size < 8 || r.size > end - pos) {
			pd->bad_records++;
			break; /* the rest cannot be framed */
		}
		pos += r.size;
		switch (r.type) {
		case SNAP_PD_AUXTRACE: {
			uint64_t sz;

			if (r.size < 48) {
				pd->bad_records++;
				continue;
			}
			sz = snap_get64(p + 8);
			if (sz > end - pos) {
				pd->bad_records++;
				sz = end - pos; /* a file cut short: keep what is there */
				err = add_aux(pd, p, b + pos);
				if (err)
					return err;
				pd->aux[pd->naux - 1].size = sz;
				pos = end;
				continue;
			}
			if ((err = add_aux(pd, p, b + pos)) < 0)
				return err;
			pos += sz;
			continue;
		}
		case SNAP_PD_AUXTRACE_INFO:
			if (r.size >= 16)
				read_info(pd, p, r.size);
			continue;
		case SNAP_PD_TIME_CONV:
			if (r.size >= 32)
				pd->have_time_conv = 1;
			continue;
		case SNAP_PD_MMAP:
		case SNAP_PD_MMAP2:
		case SNAP_PD_COMM:
		case SNAP_PD_EXIT:
		case SNAP_PD_FORK:
		case SNAP_PD_ITRACE_START:
		case SNAP_PD_SWITCH:
		case SNAP_PD_SWITCH_CPU_WIDE:
		case SNAP_PD_AUX:
		case SNAP_PD_LOST:
			break;
		default:
			continue;
		}
		/* Minimum sizes of the fixed parts. */
		if ((r.type == SNAP_PD_MMAP && r.size < 41) ||
		    (r.type == SNAP_PD_MMAP2 && r.size < 73) ||
		    (r.type == SNAP_PD_COMM && r.size < 17) ||
		    ((r.type == SNAP_PD_ITRACE_START || r.type == SNAP_PD_SWITCH_CPU_WIDE) &&
		     r.size < 16) ||
		    (r.type == SNAP_PD_AUX && r.size < 32) ||
		    (r.type == SNAP_PD_LOST && r.size < 24) ||
		    ((r.type == SNAP_PD_EXIT || r.type == SNAP_PD_FORK) && r.size < 24)) {
			pd->bad_records++;
			continue;
		}
		sample_id(pd, &r);
		if (r.type == SNAP_PD_LOST)
			pd->lost += snap_get64(p + 16);
		if (r.type == SNAP_PD_AUX) {
			uint64_t fl = snap_get64(p + 24);

			pd->aux_truncated += (fl & SNAP_PD_AUX_TRUNCATED) != 0;
			pd->aux_partial += (fl & SNAP_PD_AUX_PARTIAL) != 0;
		}
		if ((err = add_rec(pd, &r)) < 0)
			return err;
	}
	if (!pd->have_info)
		return snap_pd_notsup(why, whylen, "it has no Intel PT AUXTRACE_INFO record");
	if (find_pt_attr(pd, attr_size, aoff, asize) < 0)
		return snap_pd_notsup(why, whylen,
				      "no event uses the Intel PT PMU of its AUXTRACE_INFO");
	/* The trailer layout is the PT event's: re-read every record's sample_id. */
	pd->dropped = 0;
	for (size_t i = 0; i < pd->nrecs; i++) {
		drop_before(pd, pd->recs[i].p);
		sample_id(pd, &pd->recs[i]);
	}
	drop_before(pd, pd->buf + pd->len);
	return 0;
}

int snap_pd_parse(struct snap_pd *pd, const void *buf, size_t len, char *why, size_t whylen)
{
	return parse(pd, buf, len, 0, why, whylen);
}

int snap_pd_parse_map(struct snap_pd *pd, const void *buf, size_t len, size_t pagesz, char *why,
		      size_t whylen)
{
	return parse(pd, buf, len, pagesz, why, whylen);
}

void snap_pd_fini(struct snap_pd *pd)
{
	snap_free(pd->recs);
	snap_free(pd->aux);
	snap_free(pd->bids);
	memset(pd, 0, sizeof(*pd));
}

int snap_pd_notsup(char *why, size_t whylen, const char *msg)
{
	if (why && whylen)
		snprintf(why, whylen, "%s", msg);
	return -SNAP_ENOTSUP;
}

uint64_t snap_pd_tsc_to_perf(const struct snap_pd_tc *tc, uint64_t cyc)
{
	uint64_t quot, rem;

	if (tc->time_shift > 63)
		return cyc; /* nonsense from the file: keep the TSC */
	if (tc->cap_user_time_short)
		cyc = tc->time_cycles + ((cyc - tc->time_cycles) & tc->time_mask);
	quot = cyc >> tc->time_shift;
	rem = cyc & (((uint64_t)1 << tc->time_shift) - 1);
	return tc->time_zero + quot * tc->time_mult + ((rem * tc->time_mult) >> tc->time_shift);
}
