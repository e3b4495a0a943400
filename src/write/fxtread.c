// SPDX-License-Identifier: GPL-2.0
/*
 * The FXT reader. A record is read through a cursor limited
 * to the record's declared size, so no field can be read from outside it;
 * every length comes from the input and is checked before use.
 */
#include "write/fxtread.h"

#include <endian.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/err.h"
#include "util/vec.h"
#include "write/fxtfmt.h"

/* Reads words inside [pos, end) of the buffer. */
struct fxt_cur {
	const unsigned char *buf;
	size_t pos, end;
};

static int cur_word(struct fxt_cur *c, uint64_t *w)
{
	if (c->end - c->pos < 8)
		return -SNAP_EPARSE;
	memcpy(w, c->buf + c->pos, 8);
	*w = le64toh(*w);
	c->pos += 8;
	return 0;
}

/* A byte stream of len bytes padded to whole words. */
static int cur_stream(struct fxt_cur *c, uint32_t len, struct snap_fxt_str *out)
{
	size_t nb = ((size_t)len + 7) / 8 * 8;

	if (c->end - c->pos < nb)
		return -SNAP_EPARSE;
	out->s = (const char *)c->buf + c->pos;
	out->len = len;
	c->pos += nb;
	return 0;
}

static void why_set(struct snap_fxtread *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void why_set(struct snap_fxtread *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
}

/* Notes a semantic problem of rec. Callers describe (why_set) only the
 * first one of a record, when rec->flags is still 0. */
static void rec_flag(struct snap_fxtread_rec *rec, uint32_t flag)
{
	rec->flags |= flag;
}

/* Resolves a 16-bit string ref: 0 = "", 0x8000|n = inline n bytes, else index. */
static int read_str(struct snap_fxtread *r, struct snap_fxtread_rec *rec, struct fxt_cur *c,
		    uint16_t ref, struct snap_fxt_str *out)
{
	memset(out, 0, sizeof(*out));
	out->ref = ref;
	if (ref == 0) {
		out->s = "";
		return 0;
	}
	if (ref & 0x8000) {
		if (cur_stream(c, ref & 0x7fff, out) < 0) {
			why_set(r, "inline string of %u bytes runs past the record", ref & 0x7fffu);
			return -SNAP_EPARSE;
		}
		return 0;
	}
	if (ref >= r->str_cap || !r->strings[ref].s) {
		if (!rec->flags)
			why_set(r, "undefined string index %u", ref);
		rec_flag(rec, SNAP_FXTREAD_F_UNDEF_STRING);
		return 0;
	}
	*out = r->strings[ref];
	out->ref = ref;
	return 0;
}

/* Resolves a thread ref: 0 = inline pid, tid words; else an index. */
static int read_thread(struct snap_fxtread *r, struct snap_fxtread_rec *rec, struct fxt_cur *c,
		       unsigned ref)
{
	if (ref == 0) {
		if (cur_word(c, &rec->pid) < 0 || cur_word(c, &rec->tid) < 0) {
			why_set(r, "inline thread runs past the record");
			return -SNAP_EPARSE;
		}
		return 0;
	}
	if (!r->thread_def[ref]) {
		if (!rec->flags)
			why_set(r, "undefined thread index %u", ref);
		rec_flag(rec, SNAP_FXTREAD_F_UNDEF_THREAD);
		rec->pid = rec->tid = 0;
		return 0;
	}
	rec->pid = r->threads[ref][0];
	rec->tid = r->threads[ref][1];
	return 0;
}

static int read_arg(struct snap_fxtread *r, struct snap_fxtread_rec *rec, struct fxt_cur *c,
		    struct snap_fxtread_arg *a, unsigned i)
{
	struct fxt_cur ac;
	uint64_t h, w = 0;
	size_t size;
	int err = 0;

	if (cur_word(c, &h) < 0) {
		why_set(r, "argument #%u lies past the record end", i);
		return -SNAP_EPARSE;
	}
	size = fxt_get(h, FXT_ARG_WORDS);
	if (size == 0 || size * 8 - 8 > c->end - c->pos) {
		why_set(r, "argument #%u has size %zu words, %s", i, size,
			size ? "past the record end" : "which is invalid");
		return -SNAP_EPARSE;
	}
	ac.buf = c->buf;
	ac.pos = c->pos;
	ac.end = c->pos + size * 8 - 8;
	c->pos = ac.end;
	a->type = (uint32_t)fxt_get(h, FXT_ARG_TYPE);
	memset(&a->v, 0, sizeof(a->v));
	if (read_str(r, rec, &ac, (uint16_t)fxt_get(h, FXT_ARG_NAME), &a->name) < 0)
		goto overrun;
	switch (a->type) {
	case SNAP_FXT_ARG_INT32:
		a->v.i = (int32_t)(uint32_t)fxt_get(h, FXT_ARG_VALUE32);
		break;
	case SNAP_FXT_ARG_UINT32:
	case SNAP_FXT_ARG_BOOL:
		a->v.u = fxt_get(h, FXT_ARG_VALUE32);
		break;
	case SNAP_FXT_ARG_INT64:
	case SNAP_FXT_ARG_UINT64:
	case SNAP_FXT_ARG_POINTER:
	case SNAP_FXT_ARG_KOID:
		err = cur_word(&ac, &a->v.u);
		break;
	case SNAP_FXT_ARG_DOUBLE:
		err = cur_word(&ac, &w);
		memcpy(&a->v.d, &w, sizeof(w));
		break;
	case SNAP_FXT_ARG_STRING:
		err = read_str(r, rec, &ac, (uint16_t)fxt_get(h, FXT_ARG_STR), &a->v.str);
		break;
	default: /* null, or unknown: skipped by size */
		break;
	}
	if (err < 0)
		goto overrun;
	return 0;
overrun:
	why_set(r, "argument #%u content does not fit its %zu words", i, size);
	return -SNAP_EPARSE;
}

static int read_args(struct snap_fxtread *r, struct snap_fxtread_rec *rec, struct fxt_cur *c,
		     unsigned nargs)
{
	rec->nargs = nargs;
	for (unsigned i = 0; i < nargs; i++) {
		int err = read_arg(r, rec, c, &rec->args[i], i);

		if (err < 0)
			return err;
	}
	return 0;
}

static int read_metadata(struct snap_fxtread *r, struct snap_fxtread_rec *rec, uint64_t h,
			 struct fxt_cur *c)
{
	rec->sub = (uint32_t)fxt_get(h, FXT_META_TYPE);
	rec->id = fxt_get(h, FXT_META_PROVIDER);
	switch (rec->sub) {
	case SNAP_FXT_MD_PROVIDER_INFO:
		if (cur_stream(c, (uint32_t)fxt_get(h, FXT_META_NAME_LEN), &rec->name) < 0) {
			why_set(r, "provider name runs past the record");
			return -SNAP_EPARSE;
		}
		/* A provider (re)starts with empty tables. */
		if (r->str_cap)
			memset(r->strings, 0, r->str_cap * sizeof(*r->strings));
		memset(r->thread_def, 0, sizeof(r->thread_def));
		if (snap_u64map_put(&r->providers, rec->id, 1) < 0)
			return -ENOMEM;
		break;
	case SNAP_FXT_MD_PROVIDER_SECTION: {
		uint64_t v;

		if (rec->id != 0 && !snap_u64map_get(&r->providers, rec->id, &v)) {
			why_set(r, "section of provider %" PRIu64 ", never announced", rec->id);
			rec_flag(rec, SNAP_FXTREAD_F_UNDEF_PROVIDER);
		}
		break;
	}
	case SNAP_FXT_MD_PROVIDER_EVENT:
		rec->ts = fxt_get(h, FXT_META_EVENT_TYPE); /* the provider event type */
		break;
	case SNAP_FXT_MD_TRACE_INFO:
		rec->id = fxt_get(h, FXT_META_TRACE_INFO); /* trace info type; 0 = magic */
		if (rec->id == 0 && h != FXT_MAGIC) {
			why_set(r, "bad magic record 0x%016" PRIx64, h);
			rec_flag(rec, SNAP_FXTREAD_F_BAD_MAGIC);
		}
		break;
	default:
		break;
	}
	c->pos = c->end;
	return 0;
}

static int read_event(struct snap_fxtread *r, struct snap_fxtread_rec *rec, uint64_t h,
		      struct fxt_cur *c)
{
	int err;

	rec->sub = (uint32_t)fxt_get(h, FXT_EV_TYPE);
	if (cur_word(c, &rec->ts) < 0) {
		why_set(r, "event without a timestamp");
		return -SNAP_EPARSE;
	}
	err = read_thread(r, rec, c, (unsigned)fxt_get(h, FXT_EV_THREAD));
	if (!err)
		err = read_str(r, rec, c, (uint16_t)fxt_get(h, FXT_EV_CAT), &rec->cat);
	if (!err)
		err = read_str(r, rec, c, (uint16_t)fxt_get(h, FXT_EV_NAME), &rec->name);
	if (!err)
		err = read_args(r, rec, c, (unsigned)fxt_get(h, FXT_EV_NARGS));
	if (err < 0)
		return err;
	switch (rec->sub) {
	case SNAP_FXT_EV_COMPLETE:
		err = cur_word(c, &rec->end);
		break;
	case SNAP_FXT_EV_COUNTER:
	case SNAP_FXT_EV_ASYNC_BEGIN:
	case SNAP_FXT_EV_ASYNC_INSTANT:
	case SNAP_FXT_EV_ASYNC_END:
	case SNAP_FXT_EV_FLOW_BEGIN:
	case SNAP_FXT_EV_FLOW_STEP:
	case SNAP_FXT_EV_FLOW_END:
		err = cur_word(c, &rec->id);
		break;
	default:
		break;
	}
	if (err < 0)
		why_set(r, "event type %u misses its last word", rec->sub);
	return err;
}

static int read_kobj(struct snap_fxtread *r, struct snap_fxtread_rec *rec, uint64_t h,
		     struct fxt_cur *c)
{
	rec->sub = (uint32_t)fxt_get(h, FXT_KOBJ_TYPE);
	if (cur_word(c, &rec->tid) < 0) {
		why_set(r, "kernel object without a koid");
		return -SNAP_EPARSE;
	}
	if (read_str(r, rec, c, (uint16_t)fxt_get(h, FXT_KOBJ_NAME), &rec->name) < 0)
		return -SNAP_EPARSE;
	return read_args(r, rec, c, (unsigned)fxt_get(h, FXT_KOBJ_NARGS));
}

static int read_string_rec(struct snap_fxtread *r, struct snap_fxtread_rec *rec, uint64_t h,
			   struct fxt_cur *c)
{
	rec->id = fxt_get(h, FXT_STR_INDEX);
	if (cur_stream(c, (uint32_t)fxt_get(h, FXT_STR_LEN), &rec->name) < 0) {
		why_set(r, "string of %u bytes runs past the record",
			(unsigned)fxt_get(h, FXT_STR_LEN));
		return -SNAP_EPARSE;
	}
	if (rec->id == 0) {
		why_set(r, "string record for index 0");
		rec_flag(rec, SNAP_FXTREAD_F_INDEX_ZERO);
		return 0;
	}
	if (rec->id >= r->str_cap) {
		size_t old = r->str_cap;

		if (snap_vec_reserve(&r->strings, &r->str_cap, rec->id + 1, sizeof(*r->strings)))
			return -ENOMEM;
		memset(r->strings + old, 0, (r->str_cap - old) * sizeof(*r->strings));
		if (r->stream) {
			size_t cap = old;

			if (snap_vec_reserve(&r->owned, &cap, r->str_cap, sizeof(*r->owned))) {
				r->str_cap = old;
				return -ENOMEM;
			}
			memset(r->owned + old, 0, (r->str_cap - old) * sizeof(*r->owned));
		}
	}
	if (r->stream) { /* the bytes go away: keep a copy */
		char *copy = snap_strndup(rec->name.s, rec->name.len);

		if (!copy)
			return -ENOMEM;
		snap_free(r->owned[rec->id]);
		r->owned[rec->id] = copy;
		rec->name.s = copy;
	}
	r->strings[rec->id] = rec->name;
	return 0;
}

static int read_thread_rec(struct snap_fxtread *r, struct snap_fxtread_rec *rec, uint64_t h,
			   struct fxt_cur *c)
{
	rec->id = fxt_get(h, FXT_THREAD_INDEX);
	if (cur_word(c, &rec->pid) < 0 || cur_word(c, &rec->tid) < 0) {
		why_set(r, "thread record shorter than 3 words");
		return -SNAP_EPARSE;
	}
	if (rec->id == 0) {
		why_set(r, "thread record for index 0");
		rec_flag(rec, SNAP_FXTREAD_F_INDEX_ZERO);
		return 0;
	}
	r->threads[rec->id][0] = rec->pid;
	r->threads[rec->id][1] = rec->tid;
	r->thread_def[rec->id] = 1;
	return 0;
}

/* Decodes the body of the record at rec->off (header h, cursor c). */
static int read_body(struct snap_fxtread *r, struct snap_fxtread_rec *rec, uint64_t h,
		     struct fxt_cur *c)
{
	switch (rec->type) {
	case SNAP_FXT_METADATA:
		return read_metadata(r, rec, h, c);
	case SNAP_FXT_INIT:
		if (cur_word(c, &rec->ts) < 0) {
			why_set(r, "initialization record without ticks per second");
			return -SNAP_EPARSE;
		}
		if (rec->ts == 0) {
			why_set(r, "0 ticks per second");
			rec_flag(rec, SNAP_FXTREAD_F_ZERO_TICKS);
		}
		return 0;
	case SNAP_FXT_STRING:
		return read_string_rec(r, rec, h, c);
	case SNAP_FXT_THREAD:
		return read_thread_rec(r, rec, h, c);
	case SNAP_FXT_EVENT:
		return read_event(r, rec, h, c);
	case SNAP_FXT_KOBJ:
		return read_kobj(r, rec, h, c);
	case SNAP_FXT_LOG:
		rec->sub = 0;
		if (cur_word(c, &rec->ts) < 0 ||
		    read_thread(r, rec, c, (unsigned)fxt_get(h, FXT_LOG_THREAD)))
			goto short_rec;
		if (cur_stream(c, (uint32_t)fxt_get(h, FXT_LOG_LEN), &rec->name) < 0)
			goto short_rec;
		return 0;
	default: /* blobs, objects, scheduling, large, unknown: shown by size only */
		return 0;
	}
short_rec:
	why_set(r, "log record content runs past the record");
	return -SNAP_EPARSE;
}

int snap_fxtread_next(struct snap_fxtread *r, struct snap_fxtread_rec *rec)
{
	struct fxt_cur c;
	uint64_t h, size;
	int err;

	memset(rec, 0, offsetof(struct snap_fxtread_rec, args));
	rec->index = r->nrec;
	rec->off = r->base + r->off;
	if (r->stream && !r->eof) {
		uint64_t hh, sz;

		if (r->len - r->off < 8)
			return SNAP_FXTREAD_MORE;
		memcpy(&hh, r->buf + r->off, 8);
		hh = le64toh(hh);
		sz = fxt_get(hh, FXT_HDR_TYPE) == SNAP_FXT_LARGE ? fxt_get(hh, FXT_HDR_WORDS_LARGE)
								 : fxt_get(hh, FXT_HDR_WORDS);
		if (sz > SNAP_FXTREAD_MAX_STREAM_REC / 8 &&
		    (r->base || r->off || hh == FXT_MAGIC)) {
			why_set(r, "record of %" PRIu64 " words: more than snaptrace reads", sz);
			r->off = r->len;
			r->eof = 1; /* fatal: a stream reads no further */
			r->eof = 1;
			return -SNAP_ELIMIT;
		}
		if (sz && sz > (r->len - r->off) / 8 && (r->base || r->off || hh == FXT_MAGIC))
			return SNAP_FXTREAD_MORE;
	}
	if (r->off >= r->len)
		return 0;
	if (r->len - r->off < 8) {
		why_set(r, "%zu trailing bytes do not make a 64-bit word", r->len - r->off);
		r->off = r->len;
		r->eof = 1; /* fatal: a stream reads no further */
		return -SNAP_ETRUNC;
	}
	memcpy(&h, r->buf + r->off, 8);
	h = le64toh(h);
	if (r->base + r->off == 0 && h != FXT_MAGIC) {
		why_set(r, "not an FXT trace: no magic record (first word 0x%016" PRIx64 ")", h);
		r->off = r->len;
		r->eof = 1; /* fatal: a stream reads no further */
		return -SNAP_EFORMAT;
	}
	rec->type = (uint32_t)fxt_get(h, FXT_HDR_TYPE);
	size = rec->type == SNAP_FXT_LARGE ? fxt_get(h, FXT_HDR_WORDS_LARGE)
					   : fxt_get(h, FXT_HDR_WORDS);
	rec->words = (uint32_t)size;
	if (size == 0) {
		why_set(r, "record of size 0 (header 0x%016" PRIx64 ")", h);
		r->off = r->len;
		r->eof = 1; /* fatal: a stream reads no further */
		return -SNAP_EPARSE;
	}
	if (size > (r->len - r->off) / 8) {
		why_set(r, "record of %" PRIu64 " words runs past the end (%zu bytes left)", size,
			r->len - r->off);
		r->off = r->len;
		r->eof = 1; /* fatal: a stream reads no further */
		return -SNAP_ETRUNC;
	}
	c.buf = r->buf;
	c.pos = r->off + 8;
	c.end = r->off + size * 8;
	r->off = c.end;
	r->nrec++;
	err = read_body(r, rec, h, &c);
	return err < 0 ? err : 1;
}

int snap_fxtread_init(struct snap_fxtread *r, const void *buf, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->buf = buf;
	r->len = len;
	snap_u64map_init(&r->providers);
	return 0;
}

int snap_fxtread_init_stream(struct snap_fxtread *r)
{
	snap_fxtread_init(r, NULL, 0);
	r->stream = 1;
	return 0;
}

int snap_fxtread_feed(struct snap_fxtread *r, const void *buf, size_t len)
{
	size_t keep = r->len - r->off;

	if (!r->stream)
		return -EINVAL;
	if (r->eof)
		return 0; /* after the end or a fatal error: nothing more is read */
	/* drop what was read (records borrowed from it are done with) */
	if (r->off) {
		memmove(r->sbuf, r->sbuf + r->off, keep);
		r->base += r->off;
		r->off = 0;
		r->len = keep;
	}
	if (snap_vec_reserve(&r->sbuf, &r->scap, r->len + len, 1) < 0)
		return -ENOMEM;
	memcpy(r->sbuf + r->len, buf, len);
	r->len += len;
	r->buf = r->sbuf;
	return 0;
}

void snap_fxtread_feed_end(struct snap_fxtread *r)
{
	r->eof = 1;
}

void snap_fxtread_fini(struct snap_fxtread *r)
{
	if (r->owned)
		for (size_t i = 0; i < r->str_cap; i++)
			snap_free(r->owned[i]);
	snap_free(r->owned);
	snap_free(r->sbuf);
	snap_free(r->strings);
	snap_u64map_fini(&r->providers);
	memset(r, 0, sizeof(*r));
}

const char *snap_fxtread_why(const struct snap_fxtread *r)
{
	return r->why;
}

int snap_fxtread_is_default(const struct snap_fxtread_rec *rec)
{
	return rec->type == SNAP_FXT_EVENT || rec->type == SNAP_FXT_KOBJ;
}
