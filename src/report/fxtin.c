// SPDX-License-Identifier: GPL-2.0
#include "report/fxtin.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model/names.h"
#include "util/alloc.h"
#include "util/err.h"
#include "write/fxtread.h"

#define NREFS 32768 /* FXT string indexes */

/* An end's sampled_ns (docs/sampling.md): a positive integer, else 0 (ignored). */
static uint64_t sampled_ns(const struct snap_fxtread_arg *a)
{
	if (a->type == SNAP_FXT_ARG_INT32 || a->type == SNAP_FXT_ARG_INT64)
		return a->v.i > 0 ? (uint64_t)a->v.i : 0;
	if (a->type == SNAP_FXT_ARG_UINT32 || a->type == SNAP_FXT_ARG_UINT64)
		return a->v.u;
	return 0;
}

static int str_is(const struct snap_fxt_str *s, const char *lit)
{
	size_t n = strlen(lit);

	return s->s && s->len == n && !memcmp(s->s, lit, n);
}

/* Interns an FXT string, caching by string-table index (redefinitions and
 * provider resets clear the cache). Returns the id or 0 (out of memory). */
static uint32_t fxt_name(struct snap_strtab *st, uint32_t *cache, const struct snap_fxt_str *s)
{
	int64_t id;
	int cached = s->ref && !(s->ref & 0x8000u);

	if (cached && cache[s->ref])
		return cache[s->ref];
	if (s->s)
		id = snap_strtab_intern(st, s->s, s->len);
	else
		id = snap_strtab_intern_cstr(st, "[undefined name]");
	if (id < 0)
		return 0;
	if (cached)
		cache[s->ref] = (uint32_t)id;
	return (uint32_t)id;
}

/* Takes one record (ret is what snap_fxtread_next returned). Returns 0 to go
 * on, or the error that ends the walk (in->fatal set for a fatal one). */
static int take(struct snap_report_fxtstream *s, int ret, const struct snap_fxtread_rec *rec)
{
	struct snap_report *r = s->r;
	struct snap_strtab *st = r->st;
	struct snap_report_fxtin *in = s->in;
	uint32_t *cache = s->cache;
	uint32_t name;
	int err = 0;

	if (ret == -ENOMEM)
		return ret;
	if (ret == -SNAP_EFORMAT || ret == -SNAP_ETRUNC || (ret < 0 && rec->index == 0)) {
		snprintf(in->fatal, sizeof(in->fatal), "record #%" PRIu64 ": %s%s", rec->index,
			 snap_fxtread_why(&s->rd),
			 ret == -SNAP_EFORMAT ? " (not an FXT trace?)" : "");
		return ret;
	}
	if (ret < 0) { /* a malformed record, skipped */
		if (!in->bad++) {
			in->first_bad = rec->index;
			snprintf(in->why, sizeof(in->why), "%s", snap_fxtread_why(&s->rd));
		}
		return 0;
	}
	in->records++;
	switch (rec->type) {
	case SNAP_FXT_STRING:
		if (rec->id < NREFS)
			cache[rec->id] = 0;
		break;
	case SNAP_FXT_METADATA:
		if (rec->sub == SNAP_FXT_MD_PROVIDER_INFO)
			memset(cache, 0, NREFS * sizeof(uint32_t));
		break;
	case SNAP_FXT_KOBJ:
		if (rec->sub == SNAP_FXT_OBJ_THREAD && rec->name.s) { /* a thread's name */
			uint64_t pid = 0;

			for (uint32_t i = 0; i < rec->nargs; i++)
				if (str_is(&rec->args[i].name, "process"))
					pid = rec->args[i].v.u;
			if (!(name = fxt_name(st, cache, &rec->name)) ||
			    snap_report_thread_name(r, (int32_t)pid, (int32_t)rec->tid, name) < 0)
				err = -ENOMEM;
		}
		break;
	case SNAP_FXT_EVENT: {
		uint64_t end;
		uint32_t kind, flags;

		if (rec->sub == SNAP_FXT_EV_COUNTER) {
			if (!str_is(&rec->name, SNAP_NAME_SAMPLING))
				break;
			for (uint32_t i = 0; i < rec->nargs; i++)
				if (str_is(&rec->args[i].name, SNAP_ARG_PERIOD) &&
				    rec->args[i].v.i > 0)
					snap_report_sampled(r, (uint64_t)rec->args[i].v.i);
				else if (str_is(&rec->args[i].name, SNAP_ARG_INFERRED_END))
					r->end_marks = 1; /* the trace flags its cut ends */
			snap_report_sampled(r, 0);
			break;
		}
		if (rec->sub == SNAP_FXT_EV_BEGIN)
			kind = SNAP_REPORT_BEGIN;
		else if (rec->sub == SNAP_FXT_EV_END)
			kind = SNAP_REPORT_END;
		else if (rec->sub == SNAP_FXT_EV_COMPLETE)
			kind = SNAP_REPORT_COMPLETE;
		else
			break;
		/* one pass over the args: the flags of a begin or complete, an end's */
		end = 0;
		flags = 0;
		for (uint32_t i = 0; i < rec->nargs; i++) {
			const struct snap_fxt_str *an = &rec->args[i].name;

			if (kind != SNAP_REPORT_END) {
				if (kind == SNAP_REPORT_BEGIN && str_is(an, SNAP_ARG_INFERRED))
					flags |= SNAP_REPORT_F_INFERRED;
				else if (str_is(an, SNAP_ARG_INLINED))
					flags |= SNAP_REPORT_F_INLINED;
			} else if (str_is(an, SNAP_ARG_INFERRED_END)) {
				flags |= SNAP_REPORT_F_CUT_END;
			} else if (str_is(an, SNAP_ARG_SAMPLED)) {
				end = sampled_ns(&rec->args[i]);
			}
		}
		if (end)
			flags |= SNAP_REPORT_F_SAMPLED;
		/* an end's name is informative: not interned */
		name = kind == SNAP_REPORT_END ? 0 : fxt_name(st, cache, &rec->name);
		if ((kind != SNAP_REPORT_END && !name) ||
		    snap_report_event(r, (int32_t)rec->pid, (int32_t)rec->tid, kind | flags,
				      rec->ts, end ? end : rec->end, name) < 0)
			err = -ENOMEM;
		break;
	}
	default:
		break;
	}
	return err;
}

/* Takes every record complete so far (all of them after feed_end). */
static int drain(struct snap_report_fxtstream *s)
{
	struct snap_fxtread_rec rec;
	int ret;

	while (!s->err && (ret = snap_fxtread_next(&s->rd, &rec)) != 0) {
		if (ret == SNAP_FXTREAD_MORE)
			break;
		s->err = take(s, ret, &rec);
	}
	return s->err;
}

int snap_report_fxt_begin(struct snap_report_fxtstream *s, struct snap_report *r,
			  struct snap_report_fxtin *in)
{
	memset(s, 0, sizeof(*s));
	memset(in, 0, sizeof(*in));
	s->r = r;
	s->in = in;
	s->cache = snap_calloc(NREFS, sizeof(uint32_t));
	if (!s->cache || snap_fxtread_init_stream(&s->rd) < 0) {
		snap_free(s->cache);
		s->cache = NULL;
		return s->err = -ENOMEM;
	}
	s->live = 1;
	return 0;
}

int snap_report_fxt_feed(struct snap_report_fxtstream *s, const void *data, size_t len)
{
	if (s->err || !len)
		return s->err;
	if (snap_fxtread_feed(&s->rd, data, len) < 0)
		return s->err = -ENOMEM;
	return drain(s);
}

int snap_report_fxt_end(struct snap_report_fxtstream *s)
{
	if (!s->live)
		return s->err;
	if (!s->err) {
		snap_fxtread_feed_end(&s->rd);
		drain(s);
	}
	snap_fxtread_fini(&s->rd);
	snap_free(s->cache);
	s->cache = NULL;
	s->live = 0;
	return s->err;
}

int snap_report_read_fxt(struct snap_report *r, const void *data, size_t len,
			 struct snap_report_fxtin *in)
{
	struct snap_report_fxtstream s;

	if (snap_report_fxt_begin(&s, r, in) == 0)
		snap_report_fxt_feed(&s, data, len);
	return snap_report_fxt_end(&s);
}
