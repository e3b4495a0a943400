// SPDX-License-Identifier: GPL-2.0
/*
 * The parsers of the recording flag values: -timer-resolution, -callgraph-mode,
 * -snapshot-size and -events, in snaptrace's words and magic-trace's
 * s-expressions. Pure: no I/O. See perfvals.h.
 */
#include "record/perfvals.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"

/* ---- a tiny s-expression tokenizer for magic-trace's flag syntax ---- */

#define SEXP_MAXTOK 48
#define SEXP_TOKLEN 40

struct sexp {
	char tok[SEXP_MAXTOK][SEXP_TOKLEN];
	int n;
};

/* Splits s into "(", ")" and atoms. Returns 0 or -SNAP_EUSAGE. */
static int sexp_lex(const char *s, struct sexp *x)
{
	x->n = 0;
	while (*s) {
		size_t len;

		if (isspace((unsigned char)*s)) {
			s++;
			continue;
		}
		if (x->n >= SEXP_MAXTOK)
			return -SNAP_EUSAGE;
		if (*s == '(' || *s == ')') {
			x->tok[x->n][0] = *s++;
			x->tok[x->n++][1] = '\0';
			continue;
		}
		len = strcspn(s, "() \t\r\n");
		if (len >= SEXP_TOKLEN)
			return -SNAP_EUSAGE;
		memcpy(x->tok[x->n], s, len);
		x->tok[x->n++][len] = '\0';
		s += len;
	}
	return 0;
}

static int tok_is(const struct sexp *x, int i, const char *want)
{
	return i < x->n && !strcasecmp(x->tok[i], want);
}

/* Parses an unsigned decimal (or 0x hex) number; rejects empty, junk, overflow. */
static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long r;

	if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -SNAP_EUSAGE;
	errno = 0;
	r = strtoull(s, &end, 0);
	if (errno || *end)
		return -SNAP_EUSAGE;
	*v = r;
	return 0;
}

static int parse_bool(const char *s, uint64_t *v)
{
	if (!strcasecmp(s, "true") || !strcmp(s, "1")) {
		*v = 1;
		return 0;
	}
	if (!strcasecmp(s, "false") || !strcmp(s, "0")) {
		*v = 0;
		return 0;
	}
	return -SNAP_EUSAGE;
}

/* ---- -timer-resolution ---- */

const char *const snap_res_field_names[SNAP_RES_NFIELDS] = {
	"cyc", "cyc_thresh", "mtc", "mtc_period", "noretcomp", "psb_period",
};

static int res_is_bool(int f)
{
	return f == SNAP_RES_CYC || f == SNAP_RES_MTC || f == SNAP_RES_NORETCOMP;
}

static int res_set_field(struct snap_res *r, const char *name, const char *val)
{
	for (int f = 0; f < SNAP_RES_NFIELDS; f++) {
		uint64_t v;
		int err;

		if (strcasecmp(name, snap_res_field_names[f]))
			continue;
		if (r->has[f])
			return -SNAP_EUSAGE;
		err = res_is_bool(f) ? parse_bool(val, &v) : parse_u64(val, &v);
		if (err < 0)
			return err;
		r->has[f] = 1;
		r->val[f] = v;
		return 0;
	}
	return -SNAP_EUSAGE;
}

/* "cyc=1,mtc_period=0" (possibly empty) */
static int res_parse_custom_list(const char *s, struct snap_res *r)
{
	char buf[256], *save = NULL, *item;

	if (strlen(s) >= sizeof(buf))
		return -SNAP_EUSAGE;
	strcpy(buf, s);
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		int err;

		if (!eq)
			return -SNAP_EUSAGE;
		*eq = '\0';
		err = res_set_field(r, item, eq + 1);
		if (err < 0)
			return err;
	}
	return 0;
}

static int res_parse_sexp(const char *s, struct snap_res *r)
{
	struct sexp x;
	int i;

	if (sexp_lex(s, &x) < 0 || x.n < 3 || !tok_is(&x, 0, "(") || !tok_is(&x, x.n - 1, ")"))
		return -SNAP_EUSAGE;
	if (tok_is(&x, 1, "Sample")) {
		if (x.n != 7 || !tok_is(&x, 2, "(") || !tok_is(&x, 3, "freq") ||
		    !tok_is(&x, 5, ")"))
			return -SNAP_EUSAGE;
		r->kind = SNAP_RES_SAMPLE;
		if (parse_u64(x.tok[4], &r->freq) < 0 || r->freq == 0)
			return -SNAP_EUSAGE;
		return 0;
	}
	if (!tok_is(&x, 1, "Custom"))
		return -SNAP_EUSAGE;
	r->kind = SNAP_RES_CUSTOM;
	for (i = 2; i + 3 < x.n; i += 4) {
		if (!tok_is(&x, i, "(") || !tok_is(&x, i + 3, ")"))
			return -SNAP_EUSAGE;
		if (res_set_field(r, x.tok[i + 1], x.tok[i + 2]) < 0)
			return -SNAP_EUSAGE;
	}
	return i == x.n - 1 ? 0 : -SNAP_EUSAGE;
}

int snap_res_parse(const char *s, struct snap_res *out)
{
	memset(out, 0, sizeof(*out));
	while (isspace((unsigned char)*s))
		s++;
	if (!strcasecmp(s, "low"))
		out->kind = SNAP_RES_LOW;
	else if (!strcasecmp(s, "normal"))
		out->kind = SNAP_RES_NORMAL;
	else if (!strcasecmp(s, "high"))
		out->kind = SNAP_RES_HIGH;
	else if (!strncasecmp(s, "sample:", 7)) {
		out->kind = SNAP_RES_SAMPLE;
		if (parse_u64(s + 7, &out->freq) < 0 || out->freq == 0)
			return -SNAP_EUSAGE;
	} else if (!strncasecmp(s, "custom:", 7)) {
		out->kind = SNAP_RES_CUSTOM;
		return res_parse_custom_list(s + 7, out);
	} else if (!strcasecmp(s, "custom")) {
		out->kind = SNAP_RES_CUSTOM;
	} else if (*s == '(') {
		return res_parse_sexp(s, out);
	} else {
		return -SNAP_EUSAGE;
	}
	return 0;
}

/* ---- -callgraph-mode ---- */

int snap_cg_parse(const char *s, enum snap_cg *out)
{
	struct sexp x;
	uint64_t b;

	if (!strcasecmp(s, "auto"))
		*out = SNAP_CG_AUTO;
	else if (!strcasecmp(s, "lbr"))
		*out = SNAP_CG_LBR;
	else if (!strcasecmp(s, "lbr-no-stitch"))
		*out = SNAP_CG_LBR_NOSTITCH;
	else if (!strcasecmp(s, "fp") || !strcasecmp(s, "Frame_pointers"))
		*out = SNAP_CG_FP;
	else if (!strcasecmp(s, "dwarf"))
		*out = SNAP_CG_DWARF;
	else if (!strcmp(s, "Last_branch_record") ||
		 (sexp_lex(s, &x) == 0 && x.n == 3 && tok_is(&x, 0, "(") &&
		  tok_is(&x, 1, "Last_branch_record") && tok_is(&x, 2, ")")))
		*out = SNAP_CG_LBR; /* magic-trace's record with its default: stitched */
	else if (sexp_lex(s, &x) == 0 && x.n == 7 && tok_is(&x, 0, "(") &&
		 tok_is(&x, 1, "Last_branch_record") && tok_is(&x, 2, "(") &&
		 tok_is(&x, 3, "stitched") && tok_is(&x, 5, ")") && tok_is(&x, 6, ")") &&
		 parse_bool(x.tok[4], &b) == 0)
		*out = b ? SNAP_CG_LBR : SNAP_CG_LBR_NOSTITCH;
	else
		return -SNAP_EUSAGE;
	return 0;
}

const char *snap_cg_name(enum snap_cg cg)
{
	switch (cg) {
	case SNAP_CG_LBR:
	case SNAP_CG_LBR_NOSTITCH:
		return "lbr";
	case SNAP_CG_DWARF:
		return "dwarf";
	case SNAP_CG_FP:
	case SNAP_CG_AUTO:
	default:
		return "fp";
	}
}

/* ---- -snapshot-size ---- */

int snap_size_parse(const char *s, uint64_t *bytes)
{
	uint64_t ip = 0, frac = 0, fscale = 1, mult, r, fr;
	int digits = 0, fdigits = 0;

	for (; isdigit((unsigned char)*s); s++, digits++) {
		if (__builtin_mul_overflow(ip, 10, &ip) ||
		    __builtin_add_overflow(ip, (uint64_t)(*s - '0'), &ip))
			return -SNAP_EUSAGE;
	}
	if (*s == '.') {
		for (s++; isdigit((unsigned char)*s); s++, fdigits++) {
			if (fdigits < 18) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				fscale *= 10;
			}
		}
	}
	if (!digits && !fdigits)
		return -SNAP_EUSAGE;
	switch (toupper((unsigned char)*s)) {
	case '\0':
	case 'B':
		mult = 1;
		break;
	case 'K':
		mult = 1ull << 10;
		break;
	case 'M':
		mult = 1ull << 20;
		break;
	case 'G':
		mult = 1ull << 30;
		break;
	case 'T':
		mult = 1ull << 40;
		break;
	default:
		return -SNAP_EUSAGE;
	}
	if (*s) {
		s++;
		if (mult > 1 && (!strcasecmp(s, "B") || !strcasecmp(s, "iB")))
			s += strlen(s);
		if (*s)
			return -SNAP_EUSAGE;
	}
	if (__builtin_mul_overflow(ip, mult, &r))
		return -SNAP_EUSAGE;
	/* frac / fscale * mult without overflow: fscale <= 10^18, mult <= 2^40 */
	fr = (uint64_t)(((unsigned __int128)frac * mult) / fscale);
	if (__builtin_add_overflow(r, fr, &r) || r >= (1ull << 63))
		return -SNAP_EUSAGE;
	*bytes = r;
	return 0;
}

uint64_t snap_size_pages(uint64_t bytes, int *inexact)
{
	uint64_t pages, p2 = 1;

	if (bytes < 4096) {
		if (inexact)
			*inexact = 1;
		return 1;
	}
	if (bytes > (1ull << 48)) {
		if (inexact)
			*inexact = 1;
		return 1ull << 36;
	}
	pages = (bytes + 4095) / 4096;
	while (p2 < pages)
		p2 <<= 1;
	if (inexact)
		*inexact = p2 != bytes / 4096;
	return p2;
}

/* ---- -events ---- */

const char *const snap_xev_names[] = {"branch-misses", "cache-misses"};
const char *const snap_xev_prec_mods[] = {"", "p", "pp", "ppp", "P"};

static int xev_parse_sexp(const char *s, struct snap_xev *e)
{
	static const char *const precs[] = {"Arbitrary_skid", "Constant_skid", "Request_zero_skid",
					    "Zero_skid", "Maximum_possible"};
	struct sexp x;
	int i, have = 0;

	if (sexp_lex(s, &x) < 0 || x.n < 2 || !tok_is(&x, 0, "(") || !tok_is(&x, x.n - 1, ")"))
		return -SNAP_EUSAGE;
	for (i = 1; i < x.n - 1;) {
		if (!tok_is(&x, i, "("))
			return -SNAP_EUSAGE;
		if (tok_is(&x, i + 1, "when_to_sample") && tok_is(&x, i + 2, "(") &&
		    tok_is(&x, i + 5, ")") && tok_is(&x, i + 6, ")")) {
			if (tok_is(&x, i + 3, "Period"))
				e->by_freq = 0;
			else if (tok_is(&x, i + 3, "Frequency"))
				e->by_freq = 1;
			else
				return -SNAP_EUSAGE;
			if (i + 4 >= x.n || parse_u64(x.tok[i + 4], &e->n) < 0 || !e->n)
				return -SNAP_EUSAGE;
			have |= 1;
			i += 7;
		} else if (tok_is(&x, i + 1, "name") && tok_is(&x, i + 3, ")")) {
			if (tok_is(&x, i + 2, "Branch_misses"))
				e->name = SNAP_XEV_BRANCH_MISSES;
			else if (tok_is(&x, i + 2, "Cache_misses"))
				e->name = SNAP_XEV_CACHE_MISSES;
			else
				return -SNAP_EUSAGE;
			have |= 2;
			i += 4;
		} else if (tok_is(&x, i + 1, "precision") && tok_is(&x, i + 3, ")")) {
			int k;

			for (k = 0; k < 5 && !tok_is(&x, i + 2, precs[k]); k++)
				;
			if (k == 5)
				return -SNAP_EUSAGE;
			e->prec = (enum snap_xev_prec)k;
			have |= 4;
			i += 4;
		} else {
			return -SNAP_EUSAGE;
		}
	}
	return have == 7 ? 0 : -SNAP_EUSAGE;
}

int snap_xev_parse(const char *s, struct snap_xev *out, size_t *n)
{
	char buf[512], *save = NULL, *item;

	*n = 0;
	if (strlen(s) >= sizeof(buf))
		return -SNAP_EUSAGE;
	strcpy(buf, s);
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		struct snap_xev e = {0};

		while (isspace((unsigned char)*item))
			item++;
		if (!strcmp(item, "branch-misses")) {
			e = (struct snap_xev){SNAP_XEV_BRANCH_MISSES, 0, 50, SNAP_PREC_MAX};
		} else if (!strcmp(item, "cache-misses")) {
			e = (struct snap_xev){SNAP_XEV_CACHE_MISSES, 0, 1, SNAP_PREC_MAX};
		} else if (xev_parse_sexp(item, &e) < 0) {
			return -SNAP_EUSAGE;
		}
		for (size_t k = 0; k < *n; k++)
			if (out[k].name == e.name)
				return -SNAP_EUSAGE;
		if (*n >= SNAP_XEV_MAX)
			return -SNAP_EUSAGE;
		out[(*n)++] = e;
	}
	return *n ? 0 : -SNAP_EUSAGE;
}
