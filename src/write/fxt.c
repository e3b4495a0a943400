// SPDX-License-Identifier: GPL-2.0
/*
 * The FXT writer. Every record is built as little-endian 64-bit words in a
 * small local array and handed to the sink in one write; strings and
 * threads are interned into FXT's tables through arrays indexed by strtab
 * id, so the per-event path allocates nothing.
 *
 * Table re-use: when all indexes are taken, CLOCK picks a victim (an index
 * whose reference bit is clear; passing over a set bit clears it). Indexes
 * already used by the record being built carry its stamp and are never
 * victims, so one record's refs cannot evict each other (a record uses at
 * most 2 + 2 * SNAP_FXT_MAX_ARGS strings, far fewer than the table holds).
 */
#include "write/fxt.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "util/alloc.h"
#include "util/vec.h"
#include "write/fxtfmt.h"

#define FXT_PROVIDER_NAME   "snaptrace"
#define FXT_STR_PROCESS	    1 /* index 1 is reserved for "process" */
/* header + timestamp + 15 two-word args + end timestamp / counter id */
#define FXT_MAX_EVENT_WORDS (3 + 2 * SNAP_FXT_MAX_ARGS)

static uint64_t fxt_hdr(unsigned type, size_t words)
{
	return fxt_pack(type, FXT_HDR_TYPE) | fxt_pack(words, FXT_HDR_WORDS);
}

static int fxt_fail(struct snap_fxt *fx, int err)
{
	if (!fx->err)
		fx->err = err;
	return fx->err;
}

/* Writes n words (host order) to the sink as little-endian. */
static void fxt_put(struct snap_fxt *fx, uint64_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		w[i] = htole64(w[i]);
	snap_sink_write(fx->sink, w, n * 8);
}

/* The sticky error of fx or its sink. */
static int fxt_status(struct snap_fxt *fx)
{
	if (!fx->err && snap_sink_error(fx->sink))
		fx->err = snap_sink_error(fx->sink);
	return fx->err;
}

/* Length of s cut to SNAP_FXT_MAX_STRING without splitting a UTF-8 sequence. */
static size_t fxt_cut(struct snap_fxt *fx, const char *s, size_t len)
{
	if (len <= SNAP_FXT_MAX_STRING)
		return len;
	fx->stats.truncated++;
	len = SNAP_FXT_MAX_STRING;
	for (int k = 0; k < 3 && len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80; k++)
		len--;
	return len;
}

/* Length of the well-formed UTF-8 sequence at p (n bytes left): 1-4, or 0
 * (a stray byte, an overlong form, a surrogate, beyond U+10FFFF, cut). */
static size_t fxt_utf8_seq(const unsigned char *p, size_t n)
{
	size_t k;
	uint32_t c;

	if (p[0] < 0x80)
		return 1;
	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	k = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (n < k)
		return 0;
	c = p[0] & (0x7f >> k);
	for (size_t i = 1; i < k; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((k == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (k == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return k;
}

/* Perfetto shows strings as UTF-8: a string that is not (a damaged line, a
 * Latin-1 file name) is written with each bad byte replaced by U+FFFD, into
 * an owned copy in *out (NULL when s is fine). Returns the length to write,
 * or 0 with *out NULL after ENOMEM (the sticky error is set). */
static size_t fxt_utf8_fix(struct snap_fxt *fx, const char *s, size_t len, char **out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, k;
	char *d;

	*out = NULL;
	while (i < len && (k = fxt_utf8_seq(p + i, len - i)) != 0)
		i += k;
	if (i == len)
		return len;
	d = snap_malloc(len * 3 + 1);
	if (!d) {
		fxt_fail(fx, -ENOMEM);
		return 0;
	}
	for (i = 0; i < len;) {
		k = fxt_utf8_seq(p + i, len - i);
		if (k) {
			memcpy(d + o, p + i, k);
			o += k;
			i += k;
		} else {
			memcpy(d + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	fx->stats.bad_utf8++;
	*out = d;
	return o;
}

static void fxt_put_string_record(struct snap_fxt *fx, uint32_t idx, const char *s, size_t len)
{
	static const unsigned char zero[8];
	size_t words = (len + 7) / 8;
	uint64_t h = fxt_hdr(SNAP_FXT_STRING, 1 + words) | fxt_pack(idx, FXT_STR_INDEX) |
		     fxt_pack(len, FXT_STR_LEN);

	fxt_put(fx, &h, 1);
	snap_sink_write(fx->sink, s, len);
	snap_sink_write(fx->sink, zero, words * 8 - len);
	fx->stats.string_records++;
}

/* CLOCK victim among string indexes 2..slots, never one the current record uses. */
static uint32_t fxt_str_victim(struct snap_fxt *fx)
{
	for (;;) {
		uint32_t h = fx->str_hand;
		struct snap_fxt_slot *sl = &fx->str_slot[h];

		fx->str_hand = h >= fx->str_slots ? FXT_STR_PROCESS + 1 : h + 1;
		if (sl->stamp == fx->stamp)
			continue;
		if (sl->ref) {
			sl->ref = 0;
			continue;
		}
		return h;
	}
}

/* CLOCK victim among thread indexes 1..slots. */
static uint32_t fxt_thr_victim(struct snap_fxt *fx)
{
	for (;;) {
		uint32_t h = fx->thr_hand;

		fx->thr_hand = h >= fx->thr_slots ? 1 : h + 1;
		if (fx->thr_ref[h]) {
			fx->thr_ref[h] = 0;
			continue;
		}
		return h;
	}
}

/* Makes room for string index idx in str_slot (zeroed). Returns 0 or -ENOMEM. */
static int fxt_str_grow(struct snap_fxt *fx, uint32_t idx)
{
	size_t old = fx->str_cap;

	if (idx < old)
		return 0;
	if (snap_vec_reserve(&fx->str_slot, &fx->str_cap, (size_t)idx + 1, sizeof(*fx->str_slot)))
		return -ENOMEM;
	memset(fx->str_slot + old, 0, (fx->str_cap - old) * sizeof(*fx->str_slot));
	return 0;
}

/* Slow path of fxt_str: gives id an index, evicting one if needed, and
 * writes its string record. Returns the index or 0 after an error. */
static uint16_t fxt_str_define(struct snap_fxt *fx, uint32_t id)
{
	const char *s = snap_strtab_get(fx->st, id);
	char *fixed;
	size_t len = fxt_utf8_fix(fx, s, snap_strtab_len(fx->st, id), &fixed);
	uint32_t idx;

	if (fixed)
		s = fixed;
	len = fxt_cut(fx, s, len);
	if (id >= fx->str_idx_cap) {
		size_t old = fx->str_idx_cap;

		if (snap_vec_reserve(&fx->str_idx, &fx->str_idx_cap, (size_t)id + 1,
				     sizeof(*fx->str_idx)) < 0) {
			fxt_fail(fx, -ENOMEM);
			snap_free(fixed);
			return 0;
		}
		memset(fx->str_idx + old, 0, (fx->str_idx_cap - old) * sizeof(*fx->str_idx));
	}
	if (fx->str_used < fx->str_slots) {
		idx = fx->str_used + 1;
		if (fxt_str_grow(fx, idx) < 0) {
			fxt_fail(fx, -ENOMEM);
			snap_free(fixed);
			return 0;
		}
		fx->str_used = idx;
	} else {
		idx = fxt_str_victim(fx);
		fx->str_idx[fx->str_slot[idx].owner] = 0;
		fx->stats.string_reuses++;
	}
	fx->str_slot[idx].owner = id;
	fx->str_slot[idx].stamp = fx->stamp;
	fx->str_slot[idx].ref = 0;
	fx->str_idx[id] = (uint16_t)idx;
	fxt_put_string_record(fx, idx, s, len);
	snap_free(fixed);
	return (uint16_t)idx;
}

/* Returns the FXT string ref of strtab id (0 for none/empty), defining it if needed. */
static inline uint16_t fxt_str(struct snap_fxt *fx, uint32_t id)
{
	uint16_t idx;

	if (!id)
		return 0;
	if (id < fx->str_idx_cap && (idx = fx->str_idx[id]) != 0) {
		fx->str_slot[idx].ref = 1;
		fx->str_slot[idx].stamp = fx->stamp;
		return idx;
	}
	if (!snap_strtab_len(fx->st, id))
		return 0;
	return fxt_str_define(fx, id);
}

static uint64_t fxt_key(int32_t pid, int32_t tid)
{
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
}

/* Slow path of fxt_thread: gives the track an index and writes its thread record. */
static uint32_t fxt_thread_define(struct snap_fxt *fx, uint64_t key)
{
	uint64_t w[3];
	uint32_t idx;

	if (fx->thr_used < fx->thr_slots) {
		idx = ++fx->thr_used;
	} else {
		idx = fxt_thr_victim(fx);
		fx->stats.thread_reuses++;
	}
	if (snap_u64map_put(&fx->thr_map, key, idx) < 0) {
		fxt_fail(fx, -ENOMEM);
		return 0;
	}
	fx->thr_owner[idx] = key;
	fx->thr_ref[idx] = 0;
	w[0] = fxt_hdr(SNAP_FXT_THREAD, 3) | fxt_pack(idx, FXT_THREAD_INDEX);
	w[1] = key >> 32;
	w[2] = key & 0xffffffffu;
	fxt_put(fx, w, 3);
	fx->stats.thread_records++;
	return idx;
}

/* Slow path of fxt_thread: another track than the last one. */
static uint32_t fxt_thread_find(struct snap_fxt *fx, uint64_t key)
{
	uint64_t v;

	if (!snap_u64map_get(&fx->thr_map, key, &v) || fx->thr_owner[v] != key)
		v = fxt_thread_define(fx, key);
	else
		fx->thr_ref[v] = 1;
	fx->thr_last_key = key;
	fx->thr_last_idx = (uint32_t)v;
	return (uint32_t)v;
}

/* Returns the FXT thread index of (pid, tid), defining it if needed (0 on
 * error). Inline: a run of events is almost always on the last track. */
static inline uint32_t fxt_thread(struct snap_fxt *fx, int32_t pid, int32_t tid)
{
	uint64_t key = fxt_key(pid, tid);
	uint32_t idx = fx->thr_last_idx;

	if (idx && fx->thr_last_key == key && fx->thr_owner[idx] == key) {
		fx->thr_ref[idx] = 1;
		return idx;
	}
	return fxt_thread_find(fx, key);
}

/* Encodes args at w (string refs resolved first). Returns the words used
 * and sets *nout to the number of args written. */
static size_t fxt_args(struct snap_fxt *fx, uint64_t *w, const struct snap_arg *args, size_t nargs,
		       int ints_only, unsigned *nout)
{
	size_t n = 0;
	unsigned k = 0;

	for (size_t i = 0; i < nargs; i++) {
		const struct snap_arg *a = &args[i];
		uint64_t name;

		if (k == SNAP_FXT_MAX_ARGS || (ints_only && a->type != SNAP_ARG_INT)) {
			fx->stats.dropped_args++;
			continue;
		}
		name = fxt_pack(fxt_str(fx, a->name), FXT_ARG_NAME);
		switch (a->type) {
		case SNAP_ARG_INT:
			if (a->v.i >= INT32_MIN && a->v.i <= INT32_MAX) {
				w[n++] = SNAP_FXT_ARG_INT32 | fxt_pack(1, FXT_ARG_WORDS) | name |
					 fxt_pack((uint32_t)(int32_t)a->v.i, FXT_ARG_VALUE32);
			} else {
				w[n++] = SNAP_FXT_ARG_INT64 | fxt_pack(2, FXT_ARG_WORDS) | name;
				w[n++] = (uint64_t)a->v.i;
			}
			break;
		case SNAP_ARG_PTR:
			w[n++] = SNAP_FXT_ARG_POINTER | fxt_pack(2, FXT_ARG_WORDS) | name;
			w[n++] = a->v.u;
			break;
		case SNAP_ARG_STR:
			w[n++] = SNAP_FXT_ARG_STRING | fxt_pack(1, FXT_ARG_WORDS) | name |
				 fxt_pack(fxt_str(fx, a->v.str), FXT_ARG_STR);
			break;
		default:
			fx->stats.dropped_args++;
			continue;
		}
		k++;
	}
	*nout = k;
	return n;
}

/* Times at or beyond 2^63 ns (a recording spanning 292 years: damaged input)
 * cannot be shown: Perfetto and `dump -check` read them as int64. Clamped to
 * SNAP_FXT_MAX_TS and counted in stats.clamped_times. */
static uint64_t fxt_ts(struct snap_fxt *fx, uint64_t ts)
{
	if (ts <= SNAP_FXT_MAX_TS)
		return ts;
	fx->stats.clamped_times++;
	return SNAP_FXT_MAX_TS;
}

/* Writes one event record. extra is the end timestamp / counter id (has_extra). */
static int fxt_event(struct snap_fxt *fx, unsigned etype, int32_t pid, int32_t tid, uint64_t ts,
		     uint32_t name, const struct snap_arg *args, size_t nargs, int has_extra,
		     uint64_t extra)
{
	uint64_t w[FXT_MAX_EVENT_WORDS];
	size_t n = 2;
	unsigned k = 0;
	uint32_t thr;
	uint16_t nref;

	if (fxt_status(fx) < 0)
		return fx->err;
	fx->stamp++;
	thr = fxt_thread(fx, pid, tid);
	nref = fxt_str(fx, name);
	if (nargs)
		n += fxt_args(fx, w + 2, args, nargs, etype == SNAP_FXT_EV_COUNTER, &k);
	if (has_extra)
		w[n++] = etype == SNAP_FXT_EV_COMPLETE ? fxt_ts(fx, extra) : extra;
	w[0] = fxt_hdr(SNAP_FXT_EVENT, n) | fxt_pack(etype, FXT_EV_TYPE) |
	       fxt_pack(k, FXT_EV_NARGS) | fxt_pack(thr, FXT_EV_THREAD) |
	       fxt_pack(nref, FXT_EV_NAME);
	w[1] = fxt_ts(fx, ts);
	if (fx->err)
		return fx->err;
	fxt_put(fx, w, n);
	fx->stats.events++;
	return fxt_status(fx);
}

/* fxt_event of a record without args: fxt_event_plain's other cases. Not
 * inline and with no more args than registers, so that fxt_event_plain and
 * its callers reach it by a jump and keep no stack frame. */
__attribute__((noinline)) static int fxt_event_noargs(struct snap_fxt *fx, unsigned etype,
						      int32_t pid, int32_t tid, uint64_t ts,
						      uint32_t name)
{
	return fxt_event(fx, etype, pid, tid, ts, name, NULL, 0, 0, 0);
}

/* fxt_event of the commonest records, a begin or end without args (most
 * calls and returns, docs/design.md "The common branch takes a lean path")
 * on the last event's track, whose name has a string index, with room in
 * the sink's buffer and no error (name 0 has none: str_idx[0] stays 0):
 * every test first, then the same effects as
 * fxt_event (the record's stamp, the reference bits, the two words, the
 * count), so that it needs no stack frame. Anything else: fxt_event. The
 * last track's index needs no test of its owner: thr_last_idx only ever
 * names the index fxt_thread_find just found or defined for thr_last_key
 * (an index changes owner in fxt_thread_define alone, whose caller then
 * makes it the last), or 0. */
static inline int fxt_event_plain(struct snap_fxt *fx, unsigned etype, int32_t pid, int32_t tid,
				  uint64_t ts, uint32_t name)
{
	struct snap_sink *sink = fx->sink;
	uint64_t key = fxt_key(pid, tid), w[2];
	uint32_t thr = fx->thr_last_idx, stamp;
	unsigned char *p;
	uint16_t nref;

	if (fx->err || snap_sink_error(sink) || !thr || fx->thr_last_key != key ||
	    name >= fx->str_idx_cap || !(nref = fx->str_idx[name]) || ts > SNAP_FXT_MAX_TS ||
	    !(p = snap_sink_room(sink, sizeof(w))))
		return fxt_event_noargs(fx, etype, pid, tid, ts, name);
	stamp = ++fx->stamp;
	fx->thr_ref[thr] = 1;
	fx->str_slot[nref].ref = 1;
	fx->str_slot[nref].stamp = stamp;
	w[0] = htole64(fxt_hdr(SNAP_FXT_EVENT, 2) | fxt_pack(etype, FXT_EV_TYPE) |
		       fxt_pack(thr, FXT_EV_THREAD) | fxt_pack(nref, FXT_EV_NAME));
	w[1] = htole64(ts);
	memcpy(p, w, sizeof(w));
	snap_sink_commit(sink, sizeof(w));
	fx->stats.events++;
	return 0;
}

/* fxt_op_begin of a begin with args. Not inline, with fxt_op_begin's
 * parameters, so that fxt_op_begin reaches it by a jump. */
__attribute__((noinline)) static int fxt_op_begin_args(struct snap_timeline *tl, int32_t pid,
						       int32_t tid, uint64_t ts, uint32_t name,
						       const struct snap_arg *args, size_t nargs)
{
	return fxt_event(snap_fxt_of(tl), SNAP_FXT_EV_BEGIN, pid, tid, ts, name, args, nargs, 0, 0);
}

static int fxt_op_begin(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
			uint32_t name, const struct snap_arg *args, size_t nargs)
{
	if (!nargs)
		return fxt_event_plain(snap_fxt_of(tl), SNAP_FXT_EV_BEGIN, pid, tid, ts, name);
	return fxt_op_begin_args(tl, pid, tid, ts, name, args, nargs);
}

static int fxt_op_end(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
		      uint32_t name)
{
	return fxt_event_plain(snap_fxt_of(tl), SNAP_FXT_EV_END, pid, tid, ts, name);
}

static int fxt_op_end_args(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
			   uint32_t name, const struct snap_arg *args, size_t nargs)
{
	return fxt_event(snap_fxt_of(tl), SNAP_FXT_EV_END, pid, tid, ts, name, args, nargs, 0, 0);
}

static int fxt_op_complete(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
			   uint64_t end_ts, uint32_t name, const struct snap_arg *args,
			   size_t nargs)
{
	/* A complete event that ends before it starts is dropped by Perfetto. */
	if (end_ts < ts)
		end_ts = ts;
	return fxt_event(snap_fxt_of(tl), SNAP_FXT_EV_COMPLETE, pid, tid, ts, name, args, nargs, 1,
			 end_ts);
}

static int fxt_op_counter(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
			  uint32_t name, const struct snap_arg *args, size_t nargs)
{
	struct snap_fxt *fx = snap_fxt_of(tl);
	uint64_t id;

	if (!snap_u64map_get(&fx->counters, name, &id)) {
		id = fx->counters.count + 1;
		if (snap_u64map_put(&fx->counters, name, id) < 0)
			return fxt_fail(fx, -ENOMEM);
	}
	return fxt_event(fx, SNAP_FXT_EV_COUNTER, pid, tid, ts, name, args, nargs, 1, id);
}

/* Writes a kernel object record: koid named name, with a "process" koid arg if thread. */
static void fxt_kobj(struct snap_fxt *fx, unsigned otype, uint64_t koid, uint32_t name, int has_pid,
		     uint64_t pid)
{
	uint64_t w[5];
	size_t n = 2;

	fx->stamp++;
	w[1] = koid;
	if (has_pid) {
		w[n++] = SNAP_FXT_ARG_KOID | fxt_pack(2, FXT_ARG_WORDS) |
			 fxt_pack(FXT_STR_PROCESS, FXT_ARG_NAME);
		w[n++] = pid;
	}
	w[0] = fxt_hdr(SNAP_FXT_KOBJ, n) | fxt_pack(otype, FXT_KOBJ_TYPE) |
	       fxt_pack(fxt_str(fx, name), FXT_KOBJ_NAME) |
	       fxt_pack(has_pid ? 1 : 0, FXT_KOBJ_NARGS);
	fxt_put(fx, w, n);
}

static int fxt_op_thread(struct snap_timeline *tl, int32_t pid, int32_t tid, uint32_t proc_name,
			 uint32_t thread_name)
{
	struct snap_fxt *fx = snap_fxt_of(tl);
	uint64_t ppid = (uint32_t)pid, old;

	if (fxt_status(fx) < 0)
		return fx->err;
	if (proc_name && (!snap_u64map_get(&fx->procs, ppid, &old) || old != proc_name)) {
		if (snap_u64map_put(&fx->procs, ppid, proc_name) < 0)
			return fxt_fail(fx, -ENOMEM);
		fxt_kobj(fx, SNAP_FXT_OBJ_PROCESS, ppid, proc_name, 0, 0);
	}
	if (thread_name)
		fxt_kobj(fx, SNAP_FXT_OBJ_THREAD, (uint32_t)tid, thread_name, 1, ppid);
	return fxt_status(fx);
}

static int fxt_op_finish(struct snap_timeline *tl)
{
	struct snap_fxt *fx = snap_fxt_of(tl);

	snap_sink_flush(fx->sink);
	return fxt_status(fx);
}

const struct snap_timeline_ops snap_fxt_ops = {
	.thread = fxt_op_thread,
	.begin = fxt_op_begin,
	.end = fxt_op_end,
	.end_args = fxt_op_end_args,
	.complete = fxt_op_complete,
	.counter = fxt_op_counter,
	.finish = fxt_op_finish,
};

/* Magic, provider info + section, initialization, and string 1 = "process". */
static void fxt_header(struct snap_fxt *fx)
{
	static const char pname[] = FXT_PROVIDER_NAME;
	const size_t plen = sizeof(pname) - 1, pwords = (plen + 7) / 8;
	uint64_t w[8] = {0};

	w[0] = FXT_MAGIC;
	fxt_put(fx, w, 1);
	w[0] = fxt_hdr(SNAP_FXT_METADATA, 1 + pwords) |
	       fxt_pack(SNAP_FXT_MD_PROVIDER_INFO, FXT_META_TYPE) | fxt_pack(0, FXT_META_PROVIDER) |
	       fxt_pack(plen, FXT_META_NAME_LEN);
	memset(w + 1, 0, pwords * 8);
	memcpy(w + 1, pname, plen);
	w[0] = htole64(w[0]);
	snap_sink_write(fx->sink, w, (1 + pwords) * 8);
	w[0] = fxt_hdr(SNAP_FXT_METADATA, 1) |
	       fxt_pack(SNAP_FXT_MD_PROVIDER_SECTION, FXT_META_TYPE); /* provider id 0 */
	fxt_put(fx, w, 1);
	w[0] = fxt_hdr(SNAP_FXT_INIT, 2);
	w[1] = 1000000000ull; /* ticks per second: ticks are ns */
	fxt_put(fx, w, 2);
	fxt_put_string_record(fx, FXT_STR_PROCESS, "process", 7);
}

int snap_fxt_init(struct snap_fxt *fx, struct snap_sink *sink, const struct snap_strtab *st)
{
	memset(fx, 0, sizeof(*fx));
	fx->base.ops = &snap_fxt_ops;
	fx->sink = sink;
	fx->st = st;
	snap_u64map_init(&fx->thr_map);
	snap_u64map_init(&fx->counters);
	snap_u64map_init(&fx->procs);
	if (fxt_str_grow(fx, 255) < 0)
		return fxt_fail(fx, -ENOMEM);
	fx->str_slots = SNAP_FXT_STR_SLOTS;
	fx->str_used = FXT_STR_PROCESS; /* reserved */
	fx->str_hand = FXT_STR_PROCESS + 1;
	fx->thr_slots = SNAP_FXT_THR_SLOTS;
	fx->thr_hand = 1;
	fxt_header(fx);
	return fxt_status(fx);
}

int snap_fxt_set_limits(struct snap_fxt *fx, uint32_t nstr, uint32_t nthr)
{
	if (nstr < 64 || nstr > SNAP_FXT_STR_SLOTS || nthr < 1 || nthr > SNAP_FXT_THR_SLOTS ||
	    fx->str_used > nstr || fx->thr_used > nthr)
		return -EINVAL;
	fx->str_slots = nstr;
	fx->thr_slots = nthr;
	return 0;
}

void snap_fxt_fini(struct snap_fxt *fx)
{
	snap_free(fx->str_idx);
	snap_free(fx->str_slot);
	snap_u64map_fini(&fx->thr_map);
	snap_u64map_fini(&fx->counters);
	snap_u64map_fini(&fx->procs);
	memset(fx, 0, sizeof(*fx));
}
