// SPDX-License-Identifier: GPL-2.0
/*
 * The FXT reader and validator. A record is read through a cursor limited
 * to the record's declared size, so no field can be read from outside it;
 * every length comes from the input and is checked before use.
 */
#include "write/fxtread.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/err.h"
#include "util/vec.h"

#define FXT_MAGIC 0x0016547846040010ull

static uint64_t bits(uint64_t w, unsigned lo, unsigned hi)
{
	return (w >> lo) & ((hi - lo == 63) ? ~0ull : ((1ull << (hi - lo + 1)) - 1));
}

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

/* 1 if a is the "process" koid argument of a thread kernel object. */
static int arg_is_process(const struct snap_fxtread_arg *a)
{
	return a->type == SNAP_FXT_ARG_KOID && a->name.s && a->name.len == 7 &&
	       !memcmp(a->name.s, "process", 7);
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
	size = bits(h, 4, 15);
	if (size == 0 || size * 8 - 8 > c->end - c->pos) {
		why_set(r, "argument #%u has size %zu words, %s", i, size,
			size ? "past the record end" : "which is invalid");
		return -SNAP_EPARSE;
	}
	ac.buf = c->buf;
	ac.pos = c->pos;
	ac.end = c->pos + size * 8 - 8;
	c->pos = ac.end;
	a->type = (uint32_t)bits(h, 0, 3);
	memset(&a->v, 0, sizeof(a->v));
	if (read_str(r, rec, &ac, (uint16_t)bits(h, 16, 31), &a->name) < 0)
		goto overrun;
	switch (a->type) {
	case SNAP_FXT_ARG_INT32:
		a->v.i = (int32_t)(uint32_t)bits(h, 32, 63);
		break;
	case SNAP_FXT_ARG_UINT32:
	case SNAP_FXT_ARG_BOOL:
		a->v.u = bits(h, 32, 63);
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
		err = read_str(r, rec, &ac, (uint16_t)bits(h, 32, 47), &a->v.str);
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
	rec->sub = (uint32_t)bits(h, 16, 19);
	rec->id = bits(h, 20, 51);
	switch (rec->sub) {
	case SNAP_FXT_MD_PROVIDER_INFO:
		if (cur_stream(c, (uint32_t)bits(h, 52, 59), &rec->name) < 0) {
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
		rec->ts = bits(h, 52, 55); /* the provider event type */
		break;
	case SNAP_FXT_MD_TRACE_INFO:
		rec->id = bits(h, 20, 23); /* trace info type; 0 = magic */
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

	rec->sub = (uint32_t)bits(h, 16, 19);
	if (cur_word(c, &rec->ts) < 0) {
		why_set(r, "event without a timestamp");
		return -SNAP_EPARSE;
	}
	err = read_thread(r, rec, c, (unsigned)bits(h, 24, 31));
	if (!err)
		err = read_str(r, rec, c, (uint16_t)bits(h, 32, 47), &rec->cat);
	if (!err)
		err = read_str(r, rec, c, (uint16_t)bits(h, 48, 63), &rec->name);
	if (!err)
		err = read_args(r, rec, c, (unsigned)bits(h, 20, 23));
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
	rec->sub = (uint32_t)bits(h, 16, 23);
	if (cur_word(c, &rec->tid) < 0) {
		why_set(r, "kernel object without a koid");
		return -SNAP_EPARSE;
	}
	if (read_str(r, rec, c, (uint16_t)bits(h, 24, 39), &rec->name) < 0)
		return -SNAP_EPARSE;
	return read_args(r, rec, c, (unsigned)bits(h, 40, 43));
}

static int read_string_rec(struct snap_fxtread *r, struct snap_fxtread_rec *rec, uint64_t h,
			   struct fxt_cur *c)
{
	rec->id = bits(h, 16, 30);
	if (cur_stream(c, (uint32_t)bits(h, 32, 46), &rec->name) < 0) {
		why_set(r, "string of %u bytes runs past the record", (unsigned)bits(h, 32, 46));
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
	rec->id = bits(h, 16, 23);
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
		if (cur_word(c, &rec->ts) < 0 || read_thread(r, rec, c, (unsigned)bits(h, 32, 39)))
			goto short_rec;
		if (cur_stream(c, (uint32_t)bits(h, 16, 30), &rec->name) < 0)
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
		sz = bits(hh, 0, 3) == SNAP_FXT_LARGE ? bits(hh, 4, 35) : bits(hh, 4, 15);
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
	rec->type = (uint32_t)bits(h, 0, 3);
	size = rec->type == SNAP_FXT_LARGE ? bits(h, 4, 35) : bits(h, 4, 15);
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

/* ---- desc: one line per record ---- */

struct fxt_out {
	char *buf;
	size_t len, pos; /* pos counts every byte, even those that did not fit */
};

static void out_bytes(struct fxt_out *o, const char *s, size_t n)
{
	if (o->pos < o->len) {
		size_t room = o->len - o->pos;

		memcpy(o->buf + o->pos, s, n < room ? n : room);
	}
	o->pos += n;
}

static void out_fmt(struct fxt_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out_fmt(struct fxt_out *o, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_bytes(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* A string as "...", escaping quote, backslash and control bytes; undefined as <undefined N>. */
static void out_str(struct fxt_out *o, const struct snap_fxt_str *s)
{
	size_t run = 0;

	if (!s->s) {
		out_fmt(o, "<undefined %u>", s->ref);
		return;
	}
	out_bytes(o, "\"", 1);
	for (size_t i = 0; i < s->len; i++) {
		unsigned char ch = (unsigned char)s->s[i];

		if (ch >= 0x20 && ch != 0x7f && ch != '"' && ch != '\\') {
			run++;
			continue;
		}
		out_bytes(o, s->s + i - run, run);
		run = 0;
		if (ch == '"' || ch == '\\')
			out_fmt(o, "\\%c", ch);
		else
			out_fmt(o, "\\x%02x", ch);
	}
	out_bytes(o, s->s + s->len - run, run);
	out_bytes(o, "\"", 1);
}

/* An argument name bare (it is a key), escaping only what would be ambiguous. */
static void out_key(struct fxt_out *o, const struct snap_fxt_str *s)
{
	int plain = s->s != NULL;

	for (size_t i = 0; plain && i < s->len; i++) {
		unsigned char ch = (unsigned char)s->s[i];

		if (ch < 0x20 || ch == 0x7f || ch == '"' || ch == '\\' || ch == '=' || ch == ',' ||
		    ch == '{' || ch == '}')
			plain = 0;
	}
	if (plain)
		out_bytes(o, s->s, s->len);
	else
		out_str(o, s);
}

static void out_args(struct fxt_out *o, const struct snap_fxtread_rec *rec, int skip_process)
{
	int first = 1;

	for (uint32_t i = 0; i < rec->nargs; i++) {
		const struct snap_fxtread_arg *a = &rec->args[i];

		if (skip_process && arg_is_process(a))
			continue;
		out_bytes(o, first ? " args={" : ", ", first ? 7 : 2);
		first = 0;
		out_key(o, &a->name);
		out_bytes(o, "=", 1);
		switch (a->type) {
		case SNAP_FXT_ARG_NULL:
			out_fmt(o, "null");
			break;
		case SNAP_FXT_ARG_INT32:
		case SNAP_FXT_ARG_INT64:
			out_fmt(o, "%" PRId64, a->v.i);
			break;
		case SNAP_FXT_ARG_UINT32:
		case SNAP_FXT_ARG_UINT64:
		case SNAP_FXT_ARG_KOID:
			out_fmt(o, "%" PRIu64, a->v.u);
			break;
		case SNAP_FXT_ARG_DOUBLE:
			out_fmt(o, "%.17g", a->v.d);
			break;
		case SNAP_FXT_ARG_STRING:
			out_str(o, &a->v.str);
			break;
		case SNAP_FXT_ARG_POINTER:
			out_fmt(o, "0x%" PRIx64, a->v.u);
			break;
		case SNAP_FXT_ARG_BOOL:
			out_fmt(o, "%s", a->v.u & 1 ? "true" : "false");
			break;
		default:
			out_fmt(o, "<type %u>", a->type);
			break;
		}
	}
	if (!first)
		out_bytes(o, "}", 1);
}

static const char *const fxt_event_names[] = {
	"instant",	 "counter",   "begin",	    "end",	 "complete", "async_begin",
	"async_instant", "async_end", "flow_begin", "flow_step", "flow_end",
};

static void desc_event(struct fxt_out *o, const struct snap_fxtread_rec *rec)
{
	if (rec->sub < sizeof(fxt_event_names) / sizeof(fxt_event_names[0]))
		out_fmt(o, "%s", fxt_event_names[rec->sub]);
	else
		out_fmt(o, "event_%u", rec->sub);
	out_fmt(o, " ts=%" PRIu64, rec->ts);
	if (rec->sub == SNAP_FXT_EV_COMPLETE)
		out_fmt(o, " end=%" PRIu64, rec->end);
	out_fmt(o, " pid=%" PRIu64 " tid=%" PRIu64, rec->pid, rec->tid);
	if (!rec->cat.s || rec->cat.len) {
		out_bytes(o, " cat=", 5);
		out_str(o, &rec->cat);
	}
	if (!rec->name.s || rec->name.len) {
		out_bytes(o, " name=", 6);
		out_str(o, &rec->name);
	}
	if (rec->sub == SNAP_FXT_EV_COUNTER ||
	    (rec->sub >= SNAP_FXT_EV_ASYNC_BEGIN && rec->sub <= SNAP_FXT_EV_FLOW_END))
		out_fmt(o, " id=%" PRIu64, rec->id);
	out_args(o, rec, 0);
}

static void desc_kobj(struct fxt_out *o, const struct snap_fxtread_rec *rec)
{
	int proc = -1;

	for (uint32_t i = 0; i < rec->nargs; i++)
		if (arg_is_process(&rec->args[i]))
			proc = (int)i;
	if (rec->sub == 1)
		out_fmt(o, "process koid=%" PRIu64, rec->tid);
	else if (rec->sub == 2)
		out_fmt(o, "thread koid=%" PRIu64, rec->tid);
	else
		out_fmt(o, "kernel_object type=%u koid=%" PRIu64, rec->sub, rec->tid);
	if (proc >= 0)
		out_fmt(o, " process=%" PRIu64, rec->args[proc].v.u);
	out_bytes(o, " name=", 6);
	out_str(o, &rec->name);
	out_args(o, rec, 1);
}

static void desc_metadata(struct fxt_out *o, const struct snap_fxtread_rec *rec)
{
	switch (rec->sub) {
	case SNAP_FXT_MD_PROVIDER_INFO:
		out_fmt(o, "provider id=%" PRIu64 " name=", rec->id);
		out_str(o, &rec->name);
		break;
	case SNAP_FXT_MD_PROVIDER_SECTION:
		out_fmt(o, "provider_section id=%" PRIu64, rec->id);
		break;
	case SNAP_FXT_MD_PROVIDER_EVENT:
		out_fmt(o, "provider_event id=%" PRIu64 " event=%" PRIu64, rec->id, rec->ts);
		break;
	case SNAP_FXT_MD_TRACE_INFO:
		if (rec->id == 0)
			out_fmt(o, "magic");
		else
			out_fmt(o, "trace_info type=%" PRIu64, rec->id);
		break;
	default:
		out_fmt(o, "metadata type=%u words=%u", rec->sub, rec->words);
		break;
	}
}

size_t snap_fxtread_desc(const struct snap_fxtread_rec *rec, char *buf, size_t len)
{
	struct fxt_out o = {buf, len, 0};

	switch (rec->type) {
	case SNAP_FXT_METADATA:
		desc_metadata(&o, rec);
		break;
	case SNAP_FXT_INIT:
		out_fmt(&o, "init ticks_per_second=%" PRIu64, rec->ts);
		break;
	case SNAP_FXT_STRING:
		out_fmt(&o, "string index=%" PRIu64 " ", rec->id);
		out_str(&o, &rec->name);
		break;
	case SNAP_FXT_THREAD:
		out_fmt(&o, "thread_ref index=%" PRIu64 " pid=%" PRIu64 " tid=%" PRIu64, rec->id,
			rec->pid, rec->tid);
		break;
	case SNAP_FXT_EVENT:
		desc_event(&o, rec);
		break;
	case SNAP_FXT_KOBJ:
		desc_kobj(&o, rec);
		break;
	case SNAP_FXT_LOG:
		out_fmt(&o, "log ts=%" PRIu64 " pid=%" PRIu64 " tid=%" PRIu64 " ", rec->ts,
			rec->pid, rec->tid);
		out_str(&o, &rec->name);
		break;
	default:
		out_fmt(&o, "record type=%u words=%u", rec->type, rec->words);
		break;
	}
	if (len)
		buf[o.pos < len ? o.pos : len - 1] = '\0';
	return o.pos;
}

/* ---- the validator ---- */

void snap_fxtcheck_init(struct snap_fxtcheck *c)
{
	memset(c, 0, sizeof(*c));
	snap_u64map_init(&c->map);
	snap_strtab_init(&c->names);
	c->tps = 1000000000ull;
	c->spill_fd = -1;
	c->run_max = SNAP_FXTCHECK_RUN;
}

void snap_fxtcheck_fini(struct snap_fxtcheck *c)
{
	snap_free(c->tracks);
	snap_free(c->ev);
	snap_u64map_fini(&c->map);
	snap_strtab_fini(&c->names);
	if (c->spill_fd >= 0)
		close(c->spill_fd);
	snap_free(c->runs);
	memset(c, 0, sizeof(*c));
	c->spill_fd = -1;
}

static int check_fail(struct snap_fxtcheck *c, uint64_t index, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int check_fail(struct snap_fxtcheck *c, uint64_t index, const char *fmt, ...)
{
	va_list ap;

	c->bad_index = index;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	return -SNAP_EPARSE;
}

/* The first undefined string ref of rec, or 0. */
static unsigned check_undef_ref(const struct snap_fxtread_rec *rec)
{
	if (!rec->name.s)
		return rec->name.ref;
	if (!rec->cat.s)
		return rec->cat.ref;
	for (uint32_t i = 0; i < rec->nargs; i++) {
		if (!rec->args[i].name.s)
			return rec->args[i].name.ref;
		if (rec->args[i].type == SNAP_FXT_ARG_STRING && !rec->args[i].v.str.s)
			return rec->args[i].v.str.ref;
	}
	return 0;
}

static int check_flags(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec)
{
	uint32_t f = rec->flags;

	if (f & SNAP_FXTREAD_F_UNDEF_STRING)
		return check_fail(c, rec->index, "undefined string index %u", check_undef_ref(rec));
	if (f & SNAP_FXTREAD_F_UNDEF_THREAD)
		return check_fail(c, rec->index, "undefined thread index");
	if (f & SNAP_FXTREAD_F_UNDEF_PROVIDER)
		return check_fail(c, rec->index, "section of provider %" PRIu64 ", never announced",
				  rec->id);
	if (f & SNAP_FXTREAD_F_INDEX_ZERO)
		return check_fail(c, rec->index, "%s record for index 0",
				  rec->type == SNAP_FXT_STRING ? "string" : "thread");
	if (f & SNAP_FXTREAD_F_ZERO_TICKS)
		return check_fail(c, rec->index, "0 ticks per second");
	if (f & SNAP_FXTREAD_F_BAD_MAGIC)
		return check_fail(c, rec->index, "bad magic record");
	return 0;
}

/* ticks must convert to ns below 2^63 (Perfetto drops the event otherwise). */
static int check_time(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec, uint64_t ticks)
{
	unsigned __int128 ns = (unsigned __int128)ticks * 1000000000u / c->tps;

	if (ns >> 63)
		return check_fail(c, rec->index, "timestamp %" PRIu64 " ticks overflows int64 ns",
				  ticks);
	return 0;
}

/* Returns the track index of rec's thread, adding it, or -ENOMEM. */
static int64_t check_track(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec)
{
	uint64_t key = (rec->pid & 0xffffffffu) << 32 | (rec->tid & 0xffffffffu), v;

	if (snap_u64map_get(&c->map, key, &v))
		return (int64_t)v;
	if (c->ntracks >= (1u << 27) ||
	    snap_vec_reserve(&c->tracks, &c->cap, c->ntracks + 1, sizeof(*c->tracks)) < 0)
		return -ENOMEM;
	v = c->ntracks++;
	c->tracks[v][0] = rec->pid;
	c->tracks[v][1] = rec->tid;
	if (snap_u64map_put(&c->map, key, v) < 0)
		return -ENOMEM;
	return (int64_t)v;
}

static int check_spill(struct snap_fxtcheck *c);

/* Keeps a duration event for finish. */
static int check_keep(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec)
{
	struct snap_fxtcheck_ev *e;
	int64_t t = check_track(c, rec);

	if (t < 0)
		return (int)t;
	if (c->nev >= c->run_max && c->spill_fd != -2)
		check_spill(c); /* on failure the events simply stay in memory */
	if (snap_vec_reserve(&c->ev, &c->evcap, c->nev + 1, sizeof(*c->ev)) < 0)
		return -ENOMEM;
	e = &c->ev[c->nev];
	e->name = "";
	e->name_len = 0;
	if (rec->name.s && rec->name.len) {
		int64_t id = snap_strtab_intern(&c->names, rec->name.s, rec->name.len);

		if (id < 0)
			return -ENOMEM;
		e->name = snap_strtab_get(&c->names, (uint32_t)id);
		e->name_len = rec->name.len;
	}
	c->nev++;
	e->ts = rec->ts;
	e->end = rec->end;
	e->index = rec->index;
	e->track_sub = (uint32_t)t << 4 | rec->sub;
	return 0;
}

static int check_event(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec)
{
	int err = check_time(c, rec, rec->ts);

	c->events++;
	if (err < 0)
		return err;
	switch (rec->sub) {
	case SNAP_FXT_EV_COMPLETE:
		c->completes++;
		if (rec->end < rec->ts)
			return check_fail(c, rec->index,
					  "complete event ends (%" PRIu64
					  ") before it starts (%" PRIu64 ")",
					  rec->end, rec->ts);
		err = check_time(c, rec, rec->end);
		return err < 0 ? err : check_keep(c, rec);
	case SNAP_FXT_EV_BEGIN:
		c->begins++;
		return check_keep(c, rec);
	case SNAP_FXT_EV_END:
		c->ends++;
		return check_keep(c, rec);
	case SNAP_FXT_EV_COUNTER:
		c->counters++;
		for (uint32_t i = 0; i < rec->nargs; i++)
			if (rec->args[i].type < SNAP_FXT_ARG_INT32 ||
			    rec->args[i].type > SNAP_FXT_ARG_DOUBLE)
				return check_fail(c, rec->index,
						  "counter argument #%u is not numeric", i);
		return 0;
	default:
		return 0;
	}
}

static int check_kobj(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec)
{
	c->kobjs++;
	if (rec->sub != 2)
		return 0;
	for (uint32_t i = 0; i < rec->nargs; i++) {
		const struct snap_fxtread_arg *a = &rec->args[i];

		if (a->name.len == 7 && !memcmp(a->name.s, "process", 7)) {
			if (a->type != SNAP_FXT_ARG_KOID)
				return check_fail(c, rec->index,
						  "thread %" PRIu64
						  " name: 'process' argument is not a koid",
						  rec->tid);
			return 0;
		}
	}
	return check_fail(c, rec->index,
			  "thread %" PRIu64 " name without a 'process' koid argument", rec->tid);
}

int snap_fxtcheck_feed(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec)
{
	int err = check_flags(c, rec);

	c->records++;
	if (err < 0)
		return err;
	switch (rec->type) {
	case SNAP_FXT_INIT:
		c->tps = rec->ts;
		return 0;
	case SNAP_FXT_EVENT:
		return check_event(c, rec);
	case SNAP_FXT_KOBJ:
		return check_kobj(c, rec);
	default:
		return 0;
	}
}

/* Track, then time, then file order: Perfetto's order on each thread. */
static int check_cmp(const void *pa, const void *pb)
{
	const struct snap_fxtcheck_ev *a = pa, *b = pb;
	uint32_t ta = a->track_sub >> 4, tb = b->track_sub >> 4;

	if (ta != tb)
		return ta < tb ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* An open slice while checking (a copy: the events may be streamed from
 * spilled runs): a begin (end unknown) or a complete event. */
struct check_open {
	struct snap_fxtcheck_ev ev;
	int is_begin;
	long anc; /* stack index of the nearest complete event below, or -1 */
};

/* The slice stack of the track being checked: memory bounded by its depth. */
struct check_trk {
	struct check_open *st;
	size_t cap, depth;
	uint32_t track; /* track index, UINT32_MAX before the first event */
};

#define CHECK_NAME(e) (int)((e)->name_len > 80 ? 80 : (e)->name_len), (e)->name

/* Checks that the track's stack is fully closed (at its last event). */
static int check_track_end(struct snap_fxtcheck *c, struct check_trk *k)
{
	const uint64_t *pt;

	if (k->track == UINT32_MAX)
		return 0;
	pt = c->tracks[k->track];
	while (k->depth && !k->st[k->depth - 1].is_begin)
		k->depth--;
	for (size_t i = 0; i < k->depth; i++)
		if (k->st[i].is_begin)
			return check_fail(c, k->st[i].ev.index,
					  "begin \"%.*s\" at %" PRIu64 " on pid %" PRIu64
					  " tid %" PRIu64 " never ended",
					  CHECK_NAME(&k->st[i].ev), k->st[i].ev.ts, pt[0], pt[1]);
	k->depth = 0;
	return 0;
}

/* Checks the next event in (track, time, file) order. */
static int check_step(struct snap_fxtcheck *c, struct check_trk *k,
		      const struct snap_fxtcheck_ev *e)
{
	const uint64_t *pt;
	unsigned sub = e->track_sub & 15;
	struct check_open *st;
	size_t depth;
	int err;

	if (e->track_sub >> 4 != k->track) {
		err = check_track_end(c, k);
		if (err < 0)
			return err;
		k->track = e->track_sub >> 4;
	}
	pt = c->tracks[k->track];
	st = k->st;
	depth = k->depth;
	/* complete events that are over by now */
	while (depth && !st[depth - 1].is_begin && st[depth - 1].ev.end <= e->ts &&
	       !(sub == SNAP_FXT_EV_COMPLETE && st[depth - 1].ev.end == e->ts &&
		 st[depth - 1].ev.ts == e->ts && e->end == e->ts))
		depth--;
	k->depth = depth;
	if (sub == SNAP_FXT_EV_END) {
		const struct snap_fxtcheck_ev *top;

		if (!depth)
			return check_fail(c, e->index,
					  "end at %" PRIu64 " on pid %" PRIu64 " tid %" PRIu64
					  " with no open begin",
					  e->ts, pt[0], pt[1]);
		top = &st[depth - 1].ev;
		if (!st[depth - 1].is_begin)
			return check_fail(c, e->index,
					  "end at %" PRIu64
					  " closes a begin while its child, complete "
					  "event \"%.*s\" [%" PRIu64 ", %" PRIu64
					  "], is still open (the child outlasts its parent)",
					  e->ts, CHECK_NAME(top), top->ts, top->end);
		if (e->name_len &&
		    (e->name_len != top->name_len || memcmp(e->name, top->name, e->name_len)))
			return check_fail(c, e->index,
					  "end \"%.*s\" closes \"%.*s\" (not in stack order)",
					  CHECK_NAME(e), CHECK_NAME(top));
		if (st[depth - 1].anc >= 0 && st[st[depth - 1].anc].ev.end < e->ts) {
			const struct snap_fxtcheck_ev *p = &st[st[depth - 1].anc].ev;

			return check_fail(c, e->index,
					  "end at %" PRIu64 " closes \"%.*s\", which began inside "
					  "complete event \"%.*s\" [%" PRIu64 ", %" PRIu64
					  "] (it outlasts its parent)",
					  e->ts, CHECK_NAME(top), CHECK_NAME(p), p->ts, p->end);
		}
		k->depth = depth - 1;
		return 0;
	}
	if (sub == SNAP_FXT_EV_COMPLETE && depth && !st[depth - 1].is_begin &&
	    e->end > st[depth - 1].ev.end)
		return check_fail(c, e->index,
				  "complete event \"%.*s\" [%" PRIu64 ", %" PRIu64
				  "] partially overlaps \"%.*s\" [%" PRIu64 ", %" PRIu64 "]",
				  CHECK_NAME(e), e->ts, e->end, CHECK_NAME(&st[depth - 1].ev),
				  st[depth - 1].ev.ts, st[depth - 1].ev.end);
	if (depth >= SNAP_FXTCHECK_MAX_DEPTH && !c->deep++) {
		c->deep_index = e->index;
		snprintf(c->warning, sizeof(c->warning),
			 "slice \"%.*s\" at depth %zu on pid %" PRIu64 " tid %" PRIu64
			 ": Perfetto drops slices deeper than %d",
			 CHECK_NAME(e), depth, pt[0], pt[1], SNAP_FXTCHECK_MAX_DEPTH - 1);
	}
	if (depth == k->cap) {
		if (snap_vec_reserve(&k->st, &k->cap, depth + 1, sizeof(*k->st)) < 0)
			return -ENOMEM;
		st = k->st;
	}
	st[depth].ev = *e;
	st[depth].is_begin = sub == SNAP_FXT_EV_BEGIN;
	st[depth].anc = !depth ? -1 : st[depth - 1].is_begin ? st[depth - 1].anc : (long)depth - 1;
	k->depth = depth + 1;
	return 0;
}

/* Writes the kept events, sorted, as one run to the spill file (created on
 * first use, unnamed, in $TMPDIR). Returns 0, or <0 to keep them in memory. */
static int check_spill(struct snap_fxtcheck *c)
{
	size_t bytes = c->nev * sizeof(*c->ev);
	const char *tmp = getenv("TMPDIR");
	const unsigned char *p = (const unsigned char *)c->ev;
	off_t off;

	if (c->spill_fd < 0) {
		c->spill_fd =
			open(tmp && *tmp ? tmp : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (c->spill_fd < 0)
			c->spill_fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (c->spill_fd < 0) {
			c->spill_fd = -2; /* never again: keep everything in memory */
			return -errno;
		}
	}
	if (c->spill_fd == -2 ||
	    snap_vec_reserve(&c->runs, &c->runcap, c->nruns + 1, sizeof(*c->runs)) < 0)
		return -ENOMEM;
	qsort(c->ev, c->nev, sizeof(*c->ev), check_cmp);
	off = (off_t)(c->spilled * sizeof(*c->ev));
	for (size_t done = 0; done < bytes;) {
		ssize_t n = pwrite(c->spill_fd, p + done, bytes - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO; /* the events stay in memory */
		done += (size_t)n;
	}
	c->runs[c->nruns].first = c->spilled;
	c->runs[c->nruns].n = c->nev;
	c->nruns++;
	c->spilled += c->nev;
	c->nev = 0;
	return 0;
}

/* One run being merged: a window of its events. */
struct check_run_rd {
	uint64_t next, left; /* next event index in the spill file, events left after buf */
	struct snap_fxtcheck_ev *buf;
	size_t pos, n;
};

#define CHECK_MERGE_BUF 2048 /* events read at a time per run */

static int check_run_fill(struct snap_fxtcheck *c, struct check_run_rd *r)
{
	size_t want = r->left < CHECK_MERGE_BUF ? (size_t)r->left : CHECK_MERGE_BUF;
	size_t bytes = want * sizeof(*r->buf), got = 0;

	while (got < bytes) {
		ssize_t n = pread(c->spill_fd, (unsigned char *)r->buf + got, bytes - got,
				  (off_t)(r->next * sizeof(*r->buf) + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		got += (size_t)n;
	}
	r->pos = 0;
	r->n = want;
	r->next += want;
	r->left -= want;
	return 0;
}

/* Merges the sorted runs (k-way) into the checker: memory is one window per
 * run and the slice stack. */
static int check_merge(struct snap_fxtcheck *c, struct check_trk *k)
{
	struct check_run_rd *rd = snap_calloc(c->nruns, sizeof(*rd));
	int err = rd ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < c->nruns; i++) {
		rd[i].next = c->runs[i].first;
		rd[i].left = c->runs[i].n;
		rd[i].buf = snap_malloc(CHECK_MERGE_BUF * sizeof(*rd[i].buf));
		err = rd[i].buf ? check_run_fill(c, &rd[i]) : -ENOMEM;
	}
	while (!err) {
		size_t best = c->nruns;

		for (size_t i = 0; i < c->nruns; i++) {
			if (rd[i].pos == rd[i].n)
				continue;
			if (best == c->nruns ||
			    check_cmp(&rd[i].buf[rd[i].pos], &rd[best].buf[rd[best].pos]) < 0)
				best = i;
		}
		if (best == c->nruns)
			break;
		err = check_step(c, k, &rd[best].buf[rd[best].pos++]);
		if (!err && rd[best].pos == rd[best].n && rd[best].left)
			err = check_run_fill(c, &rd[best]);
	}
	for (size_t i = 0; rd && i < c->nruns; i++)
		snap_free(rd[i].buf);
	snap_free(rd);
	return err;
}

int snap_fxtcheck_finish(struct snap_fxtcheck *c)
{
	struct check_trk k = {NULL, 0, 0, UINT32_MAX};
	int err = 0;

	if (c->nruns && c->nev)
		err = check_spill(c);
	if (!err && c->nruns) {
		err = check_merge(c, &k);
	} else if (c->nev) {
		err = 0;
		qsort(c->ev, c->nev, sizeof(*c->ev), check_cmp);
		for (size_t i = 0; !err && i < c->nev; i++)
			err = check_step(c, &k, &c->ev[i]);
	}
	if (!err)
		err = check_track_end(c, &k);
	snap_free(k.st);
	return err;
}
