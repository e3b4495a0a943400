// SPDX-License-Identifier: GPL-2.0
/* The trigger hits file of a working directory. See hitsfile.h. */
#include "parse/hitsfile.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "util/alloc.h"
#include "util/err.h"
#include "util/vec.h"

#define HEADER "snaptrace-hits 1"

/* Parses an unsigned number in base 10 or 16 at *p up to a blank. */
static int num(const char **pp, const char *e, int base, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int n = 0;

	while (p < e && *p == ' ')
		p++;
	if (p < e && *p == '-' && base == 10) /* only for ARG: caller negates */
		return -1;
	for (; p < e && *p != ' '; p++, n++) {
		int d = *p >= '0' && *p <= '9'		       ? *p - '0'
			: base == 16 && *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
							       : -1;

		if (d < 0 || (base == 10 && v > (UINT64_MAX - (uint64_t)d) / 10) ||
		    (base == 16 && v >> 60))
			return -1;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (!n)
		return -1;
	*pp = p;
	*out = v;
	return 0;
}

static int snum(const char **pp, const char *e, int64_t *out)
{
	const char *p = *pp;
	uint64_t v;
	int neg = 0;

	while (p < e && *p == ' ')
		p++;
	if (p < e && *p == '-') {
		neg = 1;
		p++;
	}
	if (num(&p, e, 10, &v) < 0 || v > (uint64_t)INT64_MAX)
		return -1;
	*pp = p;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

static int line(struct snap_hitsfile *hf, const char *p, const char *e)
{
	struct snap_hit r;
	uint64_t pid, tid, has;
	char *sym;

	memset(&r, 0, sizeof(r));
	if (num(&p, e, 10, &r.time) < 0 || num(&p, e, 10, &pid) < 0 || pid > INT32_MAX ||
	    num(&p, e, 10, &tid) < 0 || tid > INT32_MAX || num(&p, e, 16, &r.ip) < 0 ||
	    num(&p, e, 10, &has) < 0 || has > 1 || snum(&p, e, &r.arg) < 0 ||
	    num(&p, e, 10, &r.passed_time) < 0 || p >= e || *p != ' ' || p + 1 >= e) {
		hf->bad_lines++;
		return 0;
	}
	r.pid = (int32_t)pid;
	r.tid = (int32_t)tid;
	r.has_arg = (int)has;
	r.symbol = sym = snap_strndup(p + 1, (size_t)(e - p - 1));
	if (!sym || memchr(sym, '\0', (size_t)(e - p - 1))) {
		int oom = !sym;

		snap_free(sym);
		if (oom)
			return -ENOMEM;
		hf->bad_lines++;
		return 0;
	}
	if (snap_vec_reserve(&hf->h, &hf->cap, hf->n + 1, sizeof(*hf->h)) < 0) {
		snap_free(sym);
		return -ENOMEM;
	}
	hf->h[hf->n++] = r;
	return 0;
}

int snap_hitsfile_parse(struct snap_hitsfile *hf, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	size_t hl = strlen(HEADER);
	int err;

	memset(hf, 0, sizeof(*hf));
	if (len < hl || memcmp(buf, HEADER, hl) || (len > hl && buf[hl] != '\n'))
		return -SNAP_EFORMAT;
	p += hl;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;

		if (p < e && p[0] != '\n' && (err = line(hf, p, e)) < 0) {
			snap_hitsfile_fini(hf);
			return err;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

void snap_hitsfile_fini(struct snap_hitsfile *hf)
{
	for (size_t i = 0; i < hf->n; i++)
		snap_free((char *)hf->h[i].symbol);
	snap_free(hf->h);
	memset(hf, 0, sizeof(*hf));
}

int snap_hitsfile_write(FILE *f, const struct snap_hit *h, size_t n)
{
	fprintf(f, "%s\n", HEADER);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%" PRIu64 " %d %d %" PRIx64 " %d %" PRId64 " %" PRIu64 " %s\n",
			h[i].time, (int)h[i].pid, (int)h[i].tid, h[i].ip, h[i].has_arg ? 1 : 0,
			h[i].arg, h[i].passed_time, h[i].symbol);
	return ferror(f) ? -EIO : 0;
}
