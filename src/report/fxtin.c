// SPDX-License-Identifier: GPL-2.0
#include "report/fxtin.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/err.h"
#include "write/fxtread.h"

#define NREFS 32768 /* FXT string indexes */

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

int snap_report_read_fxt(struct snap_report *r, const void *data, size_t len,
			 struct snap_report_fxtin *in)
{
	struct snap_strtab *st = r->st;
	struct snap_fxtread rd;
	struct snap_fxtread_rec rec;
	uint32_t *cache = snap_calloc(NREFS, sizeof(uint32_t));
	int ret, err = 0;

	memset(in, 0, sizeof(*in));
	if (!cache || snap_fxtread_init(&rd, data, len) < 0) {
		snap_free(cache);
		return -ENOMEM;
	}
	while (!err && (ret = snap_fxtread_next(&rd, &rec)) != 0) {
		uint32_t name;

		if (ret == -ENOMEM) {
			err = ret;
			break;
		}
		if (ret == -SNAP_EFORMAT || ret == -SNAP_ETRUNC || (ret < 0 && rec.index == 0)) {
			snprintf(in->fatal, sizeof(in->fatal), "record #%" PRIu64 ": %s%s",
				 rec.index, snap_fxtread_why(&rd),
				 ret == -SNAP_EFORMAT ? " (not an FXT trace?)" : "");
			err = ret;
			break;
		}
		if (ret < 0) { /* a malformed record, skipped */
			if (!in->bad++) {
				in->first_bad = rec.index;
				snprintf(in->why, sizeof(in->why), "%s", snap_fxtread_why(&rd));
			}
			continue;
		}
		in->records++;
		switch (rec.type) {
		case SNAP_FXT_STRING:
			if (rec.id < NREFS)
				cache[rec.id] = 0;
			break;
		case SNAP_FXT_METADATA:
			if (rec.sub == SNAP_FXT_MD_PROVIDER_INFO)
				memset(cache, 0, NREFS * sizeof(uint32_t));
			break;
		case SNAP_FXT_KOBJ:
			if (rec.sub == 2 && rec.name.s) { /* a thread's name */
				uint64_t pid = 0;

				for (uint32_t i = 0; i < rec.nargs; i++)
					if (str_is(&rec.args[i].name, "process"))
						pid = rec.args[i].v.u;
				if (!(name = fxt_name(st, cache, &rec.name)) ||
				    snap_report_thread_name(r, (int32_t)pid, (int32_t)rec.tid,
							    name) < 0)
					err = -ENOMEM;
			}
			break;
		case SNAP_FXT_EVENT: {
			uint32_t kind;

			if (rec.sub == SNAP_FXT_EV_COUNTER) {
				if (!str_is(&rec.name, SNAP_REPORT_SAMPLING_COUNTER))
					break;
				for (uint32_t i = 0; i < rec.nargs; i++)
					if (str_is(&rec.args[i].name, SNAP_REPORT_PERIOD_ARG) &&
					    rec.args[i].v.i > 0)
						snap_report_sampled(r, (uint64_t)rec.args[i].v.i);
				snap_report_sampled(r, 0);
				break;
			}
			if (rec.sub == SNAP_FXT_EV_BEGIN)
				kind = SNAP_REPORT_BEGIN;
			else if (rec.sub == SNAP_FXT_EV_END)
				kind = SNAP_REPORT_END;
			else if (rec.sub == SNAP_FXT_EV_COMPLETE)
				kind = SNAP_REPORT_COMPLETE;
			else
				break;
			if (kind == SNAP_REPORT_BEGIN)
				for (uint32_t i = 0; i < rec.nargs; i++)
					if (str_is(&rec.args[i].name, SNAP_REPORT_INFERRED_ARG))
						kind |= SNAP_REPORT_F_INFERRED;
			/* an end's name is informative: not interned */
			name = kind == SNAP_REPORT_END ? 0 : fxt_name(st, cache, &rec.name);
			if ((kind != SNAP_REPORT_END && !name) ||
			    snap_report_event(r, (int32_t)rec.pid, (int32_t)rec.tid, kind, rec.ts,
					      rec.end, name) < 0)
				err = -ENOMEM;
			break;
		}
		default:
			break;
		}
	}
	snap_fxtread_fini(&rd);
	snap_free(cache);
	return err;
}
