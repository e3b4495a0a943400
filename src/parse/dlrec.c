// SPDX-License-Identifier: GPL-2.0
/*
 * The dlfilter record stream reader. Records are decoded straight from the
 * input buffer; the only state kept across records is the string id table
 * (plugin id -> strtab id) and a cache of "[unknown @ 0xADDR (DSO)]" names.
 */
#include "parse/dlrec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model/dlrec.h"
#include "model/names.h"
#include "parse/cfi.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/vec.h"

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

void snap_dlrec_init(struct snap_dlrec *r, struct snap_strtab *names)
{
	memset(r, 0, sizeof(*r));
	r->names = names;
	r->last_key = UINT64_MAX;
	snap_u64map_init(&r->unknown);
	snap_u64map_init(&r->comms);
}

void snap_dlrec_fini(struct snap_dlrec *r)
{
	if (!r)
		return;
	snap_free(r->buf);
	snap_free(r->ids);
	snap_free(r->frames);
	snap_u64map_fini(&r->unknown);
	snap_u64map_fini(&r->comms);
	memset(r, 0, sizeof(*r));
}

int snap_dlrec_feed(struct snap_dlrec *r, const void *buf, size_t len)
{
	if (r->err)
		return r->err;
	r->text = NULL; /* the buffer may move */
	r->textlen = 0;
	if (!len)
		return 0;
	if (r->pos) { /* drop consumed bytes before growing */
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->base += r->pos;
		r->pos = 0;
	}
	if (len > SIZE_MAX - r->len || snap_vec_reserve(&r->buf, &r->cap, r->len + len, 1))
		return -ENOMEM;
	memcpy(r->buf + r->len, buf, len);
	r->len += len;
	return 0;
}

static int dlrec_fail(struct snap_dlrec *r, int err)
{
	r->err = err;
	return err;
}

/* Maps a plugin string id to a strtab id; returns 0 and sets *out, or -1. */
static int dlrec_id(const struct snap_dlrec *r, uint32_t id, uint32_t *out)
{
	if (id >= r->nids && !(id == 0 && r->nids == 0))
		return -1;
	*out = id ? r->ids[id] : 0;
	return 0;
}

/* The name the text parser gives a location perf printed as "[unknown] (DSO)". */
static int dlrec_unknown_name(struct snap_dlrec *r, uint64_t addr, uint32_t dso, uint32_t *out)
{
	const char *dname = dso ? snap_strtab_get(r->names, dso) : SNAP_NAME_UNKNOWN;
	size_t dlen = strlen(dname), n;
	uint64_t v;
	int64_t id;
	char *tmp;

	if (snap_u64map_get(&r->unknown, addr, &v) && (uint32_t)v == dso) {
		*out = (uint32_t)(v >> 32);
		return 0;
	}
	tmp = snap_malloc(SNAP_UNKNOWN_NAME_SIZE(dlen));
	if (!tmp)
		return -ENOMEM;
	n = snap_unknown_name(tmp, addr, dname, dlen);
	id = snap_strtab_intern(r->names, tmp, n);
	snap_free(tmp);
	if (id < 0)
		return (int)id;
	*out = (uint32_t)id;
	return snap_u64map_put(&r->unknown, addr, (uint64_t)*out << 32 | dso);
}

/* Decodes a LOC at p; frame: a call-chain entry (a mapped address for user code).
 * Returns 0, -SNAP_EPLUGIN (bad string id) or -ENOMEM. */
static int dlrec_loc(struct snap_dlrec *r, const uint8_t *p, struct snap_loc *l, int frame)
{
	uint32_t sym, dso;
	uint64_t start;
	int err;

	l->ip = get64(p);
	l->off = get64(p + 8);
	l->inlined = 0;	  /* perf's dlfilter API resolves an address to its symbol only */
	l->frameless = 0; /* set by the source (parse/cfi.h snap_cfi_mark_frames) */
	if (dlrec_id(r, get32(p + 16), &sym) || dlrec_id(r, get32(p + 20), &dso))
		return -SNAP_EPLUGIN;
	l->dso = dso;
	if (!sym) {
		l->off = 0;
		l->sym = 0; /* perf printed "0 [unknown]": no name at all, as in the text parser */
		if (!l->ip)
			return 0;
		/* stripped code: named after the function around it (parse/cfi.h) */
		if (frame && r->cfi && !snap_loc_is_kernel(l) &&
		    (err = snap_cfi_func_start(r->cfi, dso, snap_strtab_get(r->names, dso), l->ip,
					       &start)) != 0) {
			if (err < 0)
				return err;
			l->off = l->ip - start;
			return dlrec_unknown_name(r, start, dso, &l->sym);
		}
		return dlrec_unknown_name(r, l->ip, dso, &l->sym);
	}
	l->sym = sym;
	return 0;
}

static int dlrec_str(struct snap_dlrec *r, const uint8_t *p, uint32_t len)
{
	int64_t id;

	if (len < 4 || get32(p) != (r->nids ? r->nids : 1))
		return -SNAP_EPLUGIN; /* ids are dense: 1, 2, 3, ... */
	if (!r->nids) {
		if (snap_vec_reserve(&r->ids, &r->idcap, 1, sizeof(*r->ids)))
			return -ENOMEM;
		r->ids[r->nids++] = 0;
	}
	if (snap_vec_reserve(&r->ids, &r->idcap, r->nids + 1, sizeof(*r->ids)))
		return -ENOMEM;
	id = snap_strtab_intern(r->names, (const char *)p + 4, len - 4);
	if (id < 0)
		return (int)id;
	r->ids[r->nids++] = (uint32_t)id;
	return 0;
}

static int dlrec_branch(struct snap_dlrec *r, const uint8_t *p, uint32_t len, struct snap_event *ev)
{
	int err;

	if (len < SNAP_DLREC_BRANCH_SIZE)
		return -SNAP_EPLUGIN;
	ev->kind = SNAP_EV_BRANCH;
	ev->pid = (int32_t)get32(p + 4);
	ev->tid = (int32_t)get32(p + 8);
	ev->time = get64(p + 16);
	ev->has_time = 1;
	snap_event_set_branch_flags(ev, get32(p));
	err = dlrec_loc(r, p + 24, &ev->src, 0);
	if (!err)
		err = dlrec_loc(r, p + 24 + SNAP_DLREC_LOC_SIZE, &ev->dst, 0);
	return err;
}

/* SAMPLE or EXTRA (same layout): classified below, like the text parser does. */
static int dlrec_sample(struct snap_dlrec *r, const uint8_t *p, uint32_t len, struct snap_event *ev)
{
	uint32_t n, i;
	const uint8_t *f;
	int err;

	if (len < SNAP_DLREC_SAMPLE_SIZE)
		return -SNAP_EPLUGIN;
	n = get32(p + 12);
	if (n > SNAP_DLREC_MAX_FRAMES || (len - SNAP_DLREC_SAMPLE_SIZE) / SNAP_DLREC_LOC_SIZE < n)
		return -SNAP_EPLUGIN;
	if (dlrec_id(r, get32(p), &ev->event) || !ev->event)
		return -SNAP_EPLUGIN;
	/* parse/primary.h (n == 0: perf recorded no call chain); sched:sched_switch
	 * samples are switch-outs with their chain, never the primary stream */
	if (!r->switch_id && snap_event_is_switch_name(snap_strtab_get(r->names, ev->event),
						       snap_strtab_len(r->names, ev->event)))
		r->switch_id = ev->event;
	if (r->st.branches || r->st.powers)
		snap_primary_set_mode(&r->prim, SNAP_TRACE_PT);
	if (ev->event == r->switch_id) {
		ev->kind = SNAP_EV_SWITCH;
		ev->sw_out = 1;
	} else {
		ev->kind = snap_primary_classify(&r->prim, r->names, ev->event, n > 0);
	}
	ev->pid = (int32_t)get32(p + 4);
	ev->tid = (int32_t)get32(p + 8);
	ev->time = get64(p + 16);
	ev->has_time = 1;
	ev->period = get64(p + 24);
	err = dlrec_loc(r, p + 32, &ev->src, 0);
	if (err)
		return err;
	if (snap_vec_reserve(&r->frames, &r->fcap, n ? n : 1, sizeof(*r->frames)))
		return -ENOMEM;
	/* The record is leaf first; events are outermost first. */
	f = p + SNAP_DLREC_SAMPLE_SIZE;
	for (i = 0; i < n; i++, f += SNAP_DLREC_LOC_SIZE) {
		err = dlrec_loc(r, f, &r->frames[n - 1 - i], 1);
		if (err)
			return err;
	}
	if (ev->kind == SNAP_EV_EXTRA) {
		if (n)
			ev->src = r->frames[n - 1];
		return 0;
	}
	if (!n) { /* no call chain: perf printed the ip on the header line */
		r->frames[0] = ev->src;
		n = 1;
	}
	memset(&ev->src, 0, sizeof(ev->src));
	ev->frames = r->frames;
	ev->nframes = n;
	return 0;
}

static int dlrec_power(struct snap_dlrec *r, const uint8_t *p, uint32_t len, struct snap_event *ev)
{
	if (len < SNAP_DLREC_POWER_SIZE)
		return -SNAP_EPLUGIN;
	ev->kind = SNAP_EV_POWER;
	ev->freq_mhz = get32(p);
	ev->pid = (int32_t)get32(p + 4);
	ev->tid = (int32_t)get32(p + 8);
	ev->time = get64(p + 16);
	ev->has_time = 1;
	return dlrec_loc(r, p + 24, &ev->src, 0);
}

static uint64_t dlrec_thread_key(int32_t pid, int32_t tid)
{
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
}

static int dlrec_comm(struct snap_dlrec *r, const uint8_t *p, uint32_t len)
{
	uint64_t key;
	uint32_t comm;

	if (len < SNAP_DLREC_COMM_SIZE || dlrec_id(r, get32(p + 8), &comm))
		return -SNAP_EPLUGIN;
	key = dlrec_thread_key((int32_t)get32(p), (int32_t)get32(p + 4));
	if (key == r->last_key)
		r->last_comm = comm;
	return snap_u64map_put(&r->comms, key, comm);
}

/* Sets ev->comm from the thread's last COMM record. */
static void dlrec_set_comm(struct snap_dlrec *r, struct snap_event *ev)
{
	uint64_t key = dlrec_thread_key(ev->pid, ev->tid), v = 0;

	if (key != r->last_key) {
		snap_u64map_get(&r->comms, key, &v);
		r->last_key = key;
		r->last_comm = (uint32_t)v;
	}
	ev->comm = r->last_comm;
}

static int dlrec_end(struct snap_dlrec *r, const uint8_t *p, uint32_t len)
{
	if (len < SNAP_DLREC_END_SIZE)
		return -SNAP_EPLUGIN;
	if (get64(p) != r->st.records || get64(p + 8) != r->st.branches ||
	    get64(p + 16) != r->st.samples)
		return -SNAP_EPLUGIN; /* records were lost on the way */
	r->st.dropped = get64(p + 24);
	r->st.errors = get64(p + 32);
	r->have_end = 1;
	return 0;
}

static int dlrec_header(struct snap_dlrec *r)
{
	const uint8_t *p = r->buf + r->pos;
	uint32_t hsize;

	if (r->len - r->pos < SNAP_DLREC_HDR_SIZE)
		return 0;
	hsize = get32(p + 12);
	if (memcmp(p, SNAP_DLREC_MAGIC, SNAP_DLREC_MAGIC_LEN) ||
	    get32(p + 8) != SNAP_DLREC_VERSION || hsize < SNAP_DLREC_HDR_SIZE || hsize > 4096)
		return dlrec_fail(r, -SNAP_EPLUGIN);
	if (r->len - r->pos < hsize)
		return 0;
	r->pos += hsize;
	r->have_header = 1;
	return 1;
}

/* Decodes the record at pos (complete, len bytes of payload). Returns 1 if *ev
 * was filled, SNAP_DLREC_TEXT_POINT at a TEXT, 0 if the record was consumed
 * without an event, or an error. */
static int dlrec_record(struct snap_dlrec *r, uint32_t kind, const uint8_t *p, uint32_t len,
			struct snap_event *ev)
{
	int err;

	if (kind == SNAP_DLREC_END)
		return dlrec_end(r, p, len);
	r->st.records++;
	if (kind == SNAP_DLREC_TEXT) {
		r->st.texts++;
		r->text = p;
		r->textlen = len;
		return SNAP_DLREC_TEXT_POINT;
	}
	memset(ev, 0, sizeof(*ev));
	switch (kind) {
	case SNAP_DLREC_STR:
		return dlrec_str(r, p, len);
	case SNAP_DLREC_BRANCH:
		r->st.branches++;
		err = dlrec_branch(r, p, len, ev);
		break;
	case SNAP_DLREC_SAMPLE:
	case SNAP_DLREC_EXTRA:
		r->st.samples++;
		err = dlrec_sample(r, p, len, ev);
		break;
	case SNAP_DLREC_POWER:
		r->st.powers++;
		err = dlrec_power(r, p, len, ev);
		break;
	case SNAP_DLREC_COMM:
		return dlrec_comm(r, p, len);
	default:
		r->st.skipped++;
		return 0;
	}
	if (err < 0)
		return err;
	dlrec_set_comm(r, ev);
	return 1;
}

int snap_dlrec_next(struct snap_dlrec *r, struct snap_event *ev)
{
	int ret;

	r->text = NULL;
	r->textlen = 0;
	for (;;) {
		const uint8_t *p;
		uint32_t kind, len;

		if (r->err)
			return r->err;
		if (!r->have_header) {
			r->recpos = r->base + r->pos;
			ret = dlrec_header(r);
			if (ret <= 0)
				return ret;
			continue;
		}
		if (r->len - r->pos < SNAP_DLREC_REC_HDR)
			return 0;
		r->recpos = r->base + r->pos;
		if (r->have_end)
			return dlrec_fail(r, -SNAP_EPLUGIN); /* data after END */
		p = r->buf + r->pos;
		kind = get32(p);
		len = get32(p + 4);
		if (len > SNAP_DLREC_MAX_PAYLOAD)
			return dlrec_fail(r, -SNAP_EPLUGIN);
		if (r->len - r->pos - SNAP_DLREC_REC_HDR < len)
			return 0;
		r->pos += SNAP_DLREC_REC_HDR + (size_t)len;
		ret = dlrec_record(r, kind, p + SNAP_DLREC_REC_HDR, len, ev);
		if (ret < 0)
			return dlrec_fail(r, ret);
		if (ret > 0)
			return ret;
	}
}

int snap_dlrec_finish(struct snap_dlrec *r)
{
	if (r->err)
		return r->err;
	if (r->have_end && r->pos < r->len) {
		r->recpos = r->base + r->pos;
		return dlrec_fail(r, -SNAP_EPLUGIN);
	}
	if (!r->have_end) {
		r->recpos = r->base + r->pos;
		return -SNAP_ETRUNC;
	}
	return 0;
}

uint64_t snap_dlrec_offset(const struct snap_dlrec *r)
{
	return r->recpos;
}

void snap_dlrec_set_mode(struct snap_dlrec *r, enum snap_trace_mode mode)
{
	snap_primary_set_mode(&r->prim, mode);
}

void snap_dlrec_set_cfi(struct snap_dlrec *r, struct snap_cfi *cfi)
{
	r->cfi = cfi;
}

const struct snap_dlrec_stats *snap_dlrec_stats(const struct snap_dlrec *r)
{
	return &r->st;
}

const char *snap_dlrec_text(const struct snap_dlrec *r, size_t *len)
{
	*len = r->textlen;
	return (const char *)r->text;
}

int snap_dlrec_ended(const struct snap_dlrec *r)
{
	return r->have_end;
}
