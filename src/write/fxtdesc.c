// SPDX-License-Identifier: GPL-2.0
/*
 * The FXT describer: one stable line of text per record read by
 * write/fxtread, for `snaptrace dump` and the golden files.
 */
#include "write/fxtdesc.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/esc.h"

/* 1 if a is the "process" koid argument of a thread kernel object. */
static int arg_is_process(const struct snap_fxtread_arg *a)
{
	return a->type == SNAP_FXT_ARG_KOID && a->name.s && a->name.len == 7 &&
	       !memcmp(a->name.s, "process", 7);
}

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

/* A string as "...", escaping quote, backslash, control characters and
 * bytes that are not UTF-8 (util/esc.h); undefined as <undefined N>. */
static void out_str(struct fxt_out *o, const struct snap_fxt_str *s)
{
	size_t at = 0;

	if (!s->s) {
		out_fmt(o, "<undefined %u>", s->ref);
		return;
	}
	out_bytes(o, "\"", 1);
	while (at < s->len) {
		size_t run = snap_esc_run(s->s + at, s->len - at, SNAP_ESC_QUOTE);
		char e[SNAP_ESC_MAX];

		out_bytes(o, s->s + at, run);
		at += run;
		if (at < s->len) {
			at += snap_esc_one(s->s + at, s->len - at, SNAP_ESC_QUOTE, e);
			out_bytes(o, e, strlen(e));
		}
	}
	out_bytes(o, "\"", 1);
}

/* An argument name bare (it is a key), escaping only what would be ambiguous. */
static void out_key(struct fxt_out *o, const struct snap_fxt_str *s)
{
	int plain = s->s != NULL && snap_esc_run(s->s, s->len, SNAP_ESC_QUOTE) == s->len;

	for (size_t i = 0; plain && i < s->len; i++) {
		unsigned char ch = (unsigned char)s->s[i];

		if (ch == '=' || ch == ',' || ch == '{' || ch == '}')
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
	if (rec->sub == SNAP_FXT_OBJ_PROCESS)
		out_fmt(o, "process koid=%" PRIu64, rec->tid);
	else if (rec->sub == SNAP_FXT_OBJ_THREAD)
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
