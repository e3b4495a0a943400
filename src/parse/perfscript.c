// SPDX-License-Identifier: GPL-2.0
/*
 * `perf script` text -> snap_event. Hot path: PT branch lines, ~2 M/s wanted,
 * so everything is memchr/memrchr and hand-written number parsing; symbol
 * texts are resolved through a small direct-mapped cache keyed by ip and
 * checked against the exact text (the same ip repeats a lot, but the same
 * DSO-relative ip can name different symbols in different DSOs).
 */
#include "parse/perfscript.h"

#include <errno.h>
#include <string.h>

#include "model/evname.h"
#include "model/names.h"
#include "util/alloc.h"
#include "util/esc.h"
#include "util/vec.h"

#define CACHE_BITS 11
#define CACHE_TEXT 150

struct cache_ent {
	uint64_t ip;
	uint64_t off;
	uint32_t sym, dso;
	uint8_t inlined;
	uint16_t len; /* text length + 1; 0 = empty slot */
	char text[CACHE_TEXT];
};

#define IDS_BITS 12

struct snap_perfscript_symcache {
	struct cache_ent ent[1u << CACHE_BITS];
	uint32_t ids[1u << IDS_BITS]; /* quick text hash -> strtab id, verified */
};

/* ---- small lexical helpers ---- */

static int is_sp(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_sp(const char *p, const char *e)
{
	while (p < e && is_sp(*p))
		p++;
	return p;
}

static const char *tok_end(const char *p, const char *e)
{
	while (p < e && !is_sp(*p))
		p++;
	return p;
}

static const char *rtrim(const char *b, const char *e)
{
	while (e > b && is_sp(e[-1]))
		e--;
	return e;
}

static int is_digit(char c)
{
	return (unsigned)(c - '0') < 10u;
}

static int hexval(char c)
{
	if ((unsigned)(c - '0') < 10u)
		return c - '0';
	if ((unsigned)(c - 'a') < 6u)
		return c - 'a' + 10;
	return -1;
}

static int tok_eq(const char *p, const char *e, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(e - p) == n && memcmp(p, word, n) == 0;
}

static int starts_with(const char *p, const char *e, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(e - p) >= n && memcmp(p, word, n) == 0;
}

/* A lowercase hex token [p, e) of 1 or more digits. Returns 1 and sets *v, else
 * 0. A value >= 2^64 (a long symbol offset) keeps its low 64 bits. */
static int parse_hex_wide(const char *p, const char *e, uint64_t *v)
{
	uint64_t x = 0;

	if (p >= e)
		return 0;
	for (; p < e; p++) {
		int d = hexval(*p);

		if (d < 0)
			return 0;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return 1;
}

/* Like parse_hex_wide but 1..16 digits only (an address). */
static int parse_hex(const char *p, const char *e, uint64_t *v)
{
	return e - p <= 16 && parse_hex_wide(p, e, v);
}

static int is_hex_tok(const char *p, const char *e)
{
	uint64_t v;

	return parse_hex(p, e, &v);
}

/* Decimal [p, e) of 1..19 digits. */
static int parse_dec(const char *p, const char *e, uint64_t *v)
{
	uint64_t x = 0;

	if (p >= e || e - p > 19)
		return 0;
	for (; p < e; p++) {
		if (!is_digit(*p))
			return 0;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	*v = x;
	return 1;
}

/* Optional '-' then 1..10 digits, within int32 range. */
static int parse_int(const char *p, const char *e, int32_t *v)
{
	int neg = 0;
	uint64_t x;

	if (p < e && *p == '-') {
		neg = 1;
		p++;
	}
	if (e - p > 10 || !parse_dec(p, e, &x))
		return 0;
	if (x > (neg ? 2147483648ull : 2147483647ull))
		return 0;
	*v = neg ? (int32_t)(-(int64_t)x) : (int32_t)x;
	return 1;
}

/* SEC [p, dot) and FRAC (dot, e): FRAC is right-padded/truncated to 9 digits. */
static int parse_time(const char *p, const char *dot, const char *e, uint64_t *ns)
{
	uint64_t sec, frac = 0;
	int n = 0;

	if (dot - p > 11 || !parse_dec(p, dot, &sec) || dot + 1 >= e)
		return 0;
	for (const char *q = dot + 1; q < e; q++) {
		if (!is_digit(*q))
			return 0;
		if (n < 9) {
			frac = frac * 10 + (uint64_t)(*q - '0');
			n++;
		}
	}
	for (; n < 9; n++)
		frac *= 10;
	*ns = sec * 1000000000ull + frac;
	return 1;
}

/* ---- buffer and bookkeeping ---- */

static void ps_unknown(struct snap_perfscript *ps, const char *s, size_t n)
{
	struct snap_perfscript_stats *st = &ps->stats;

	if (st->unknown_lines++ == 0) {
		size_t m = n < sizeof(st->first_unknown) - 1 ? n : sizeof(st->first_unknown) - 1;

		st->first_unknown_line = st->lines ? st->lines : 1;
		/* quoted in a warning: no control reaches the terminal (C1 included) */
		snap_esc_str(st->first_unknown, sizeof(st->first_unknown), s, m, SNAP_ESC_QMARK);
	}
}

int snap_perfscript_init(struct snap_perfscript *ps, struct snap_strtab *names)
{
	memset(ps, 0, sizeof(*ps));
	ps->names = names;
	ps->cache = snap_calloc(1, sizeof(*ps->cache));
	if (!ps->cache)
		return -ENOMEM;
	return 0;
}

void snap_perfscript_fini(struct snap_perfscript *ps)
{
	snap_free(ps->buf);
	snap_free(ps->frames);
	snap_free(ps->scratch);
	snap_free(ps->cache);
	memset(ps, 0, sizeof(*ps));
}

/* After appending: if the pending partial line has no '\n' and is too long,
 * drop it and skip input up to the next '\n'. */
static void ps_check_long(struct snap_perfscript *ps)
{
	size_t from = ps->scan > ps->pos ? ps->scan : ps->pos;

	if (from < ps->len && memchr(ps->buf + from, '\n', ps->len - from))
		return;
	ps->scan = ps->len;
	if (ps->len - ps->pos <= SNAP_PERFSCRIPT_MAX_LINE)
		return;
	ps->stats.lines++;
	ps_unknown(ps, ps->buf + ps->pos, ps->len - ps->pos);
	ps->pos = ps->len = ps->scan = 0;
	ps->skipping = 1;
}

int snap_perfscript_feed(struct snap_perfscript *ps, const char *buf, size_t len)
{
	ps->stats.bytes += len;
	if (ps->skipping) {
		const char *nl = len ? memchr(buf, '\n', len) : NULL;

		if (!nl)
			return 0;
		ps->skipping = 0;
		len -= (size_t)(nl + 1 - buf);
		buf = nl + 1;
	}
	if (!len)
		return 0;
	if (ps->pos) {
		memmove(ps->buf, ps->buf + ps->pos, ps->len - ps->pos);
		ps->len -= ps->pos;
		ps->scan = ps->scan > ps->pos ? ps->scan - ps->pos : 0;
		ps->pos = 0;
	}
	if (len > SIZE_MAX - ps->len)
		return -ENOMEM;
	if (snap_vec_reserve(&ps->buf, &ps->cap, ps->len + len, 1) < 0)
		return -ENOMEM;
	memcpy(ps->buf + ps->len, buf, len);
	ps->len += len;
	ps_check_long(ps);
	return 0;
}

void snap_perfscript_finish(struct snap_perfscript *ps)
{
	ps->finished = 1;
}

uint64_t snap_perfscript_line(const struct snap_perfscript *ps)
{
	return ps->stats.lines;
}

void snap_perfscript_set_cfi(struct snap_perfscript *ps, struct snap_cfi *cfi)
{
	ps->cfi = cfi;
}

void snap_perfscript_set_mode(struct snap_perfscript *ps, enum snap_trace_mode mode)
{
	snap_primary_set_mode(&ps->prim, mode);
	if (mode == SNAP_TRACE_PT)
		ps->pt_seen = 1;
}

const struct snap_perfscript_stats *snap_perfscript_stats(const struct snap_perfscript *ps)
{
	return &ps->stats;
}

/* Finds the next complete line without consuming it: *s, *n (no '\n'), and
 * *adv bytes to consume. Returns 1, or 0 if there is none yet. */
static int ps_peek(struct snap_perfscript *ps, const char **s, size_t *n, size_t *adv)
{
	const char *b, *nl = NULL;

	if (!ps->buf)
		return 0; /* nothing fed yet */
	b = ps->buf + ps->pos;
	if (ps->scan < ps->pos)
		ps->scan = ps->pos;
	if (ps->scan < ps->len)
		nl = memchr(ps->buf + ps->scan, '\n', ps->len - ps->scan);
	if (!nl) {
		ps->scan = ps->len;
		if (!ps->finished || ps->pos == ps->len || ps->skipping)
			return 0;
		*s = b;
		*n = *adv = ps->len - ps->pos;
		return 1;
	}
	*s = b;
	*n = (size_t)(nl - b);
	*adv = *n + 1;
	return 1;
}

static void ps_consume(struct snap_perfscript *ps, size_t adv)
{
	ps->pos += adv;
	ps->stats.lines++;
	if (ps->pos == ps->len)
		ps->pos = ps->len = ps->scan = 0;
}

/* A cheap hash of length and three 8-byte windows: names repeat a lot and
 * the strtab's byte-wise hash is the slow part of interning. */
static size_t quick_hash(const char *s, size_t n)
{
	uint64_t a = 0, b = 0, c = 0;

	if (n >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n / 2 - 4, 8);
		memcpy(&c, s + n - 8, 8);
	} else {
		memcpy(&a, s, n);
	}
	a = (a ^ (uint64_t)n) * 0x9e3779b97f4a7c15ull;
	a ^= (b + (a >> 29)) * 0xc2b2ae3d27d4eb4full;
	a ^= (c + (a >> 31)) * 0x165667b19e3779f9ull;
	return (size_t)(a >> (64 - IDS_BITS));
}

static int ps_intern(struct snap_perfscript *ps, const char *s, size_t n, uint32_t *id)
{
	uint32_t *slot;
	int64_t r;

	if (!n) {
		*id = 0;
		return 0;
	}
	slot = &ps->cache->ids[quick_hash(s, n)];
	if (*slot && snap_strtab_len(ps->names, *slot) == n &&
	    memcmp(snap_strtab_get(ps->names, *slot), s, n) == 0) {
		*id = *slot;
		return 0;
	}
	r = snap_strtab_intern(ps->names, s, n);
	if (r < 0)
		return (int)r;
	*id = *slot = (uint32_t)r;
	return 0;
}

/* ---- symbols ---- */

/* "[unknown @ 0xADDR (DSO)]", or "[unknown @ 0xADDR]" without a DSO. */
static int ps_unknown_name(struct snap_perfscript *ps, uint64_t ip, const char *dso, size_t dlen,
			   int has_dso, uint32_t *id)
{
	size_t n;

	if (snap_vec_reserve(&ps->scratch, &ps->scratch_cap, SNAP_UNKNOWN_NAME_SIZE(dlen), 1) < 0)
		return -ENOMEM;
	n = snap_unknown_name(ps->scratch, ip, has_dso ? dso : NULL, dlen);
	return ps_intern(ps, ps->scratch, n, id);
}

/* Finds the '(' opening the DSO that ends at e[-1] == ')', matching parentheses
 * from the right; it must follow whitespace. Returns NULL if none. */
static const char *dso_open(const char *b, const char *e)
{
	int depth = 0;

	for (const char *q = e - 1; q >= b; q--) {
		if (*q == ')') {
			depth++;
		} else if (*q == '(') {
			if (--depth == 0)
				return q > b && is_sp(q[-1]) ? q : NULL;
			if (depth < 0)
				return NULL;
		}
	}
	return NULL;
}

/* Splits the symbol text t (trimmed, non-empty) into sym, off and dso. */
static int ps_resolve(struct snap_perfscript *ps, uint64_t ip, const char *t, const char *e,
		      struct snap_loc *loc)
{
	const char *sym = t, *sym_end = e, *dso = NULL, *dso_end = NULL;
	const char *q = e;
	int err;

	loc->off = 0;
	/* the last "+0xHEX" followed by the end or by whitespace and "(...)" */
	while (q > t && (q = memrchr(t, '+', (size_t)(q - t))) != NULL) {
		const char *h = q + 3, *he = h, *r;
		uint64_t off = 0;

		if (e - q < 4 || q[1] != '0' || q[2] != 'x')
			continue;
		while (he < e && hexval(*he) >= 0)
			he++;
		if (he == h)
			continue;
		r = skip_sp(he, e);
		if (r == e && he == e) {
			/* no dso field */
		} else if (r > he && r < e && *r == '(' && e[-1] == ')' && e - r >= 2) {
			dso = r + 1;
			dso_end = e - 1;
		} else {
			continue;
		}
		parse_hex_wide(h, he, &off);
		loc->off = off;
		sym_end = q;
		goto named;
	}
	if (e[-1] == ')') {
		const char *o = dso_open(t, e);

		if (o) {
			dso = o + 1;
			dso_end = e - 1;
			sym_end = rtrim(t, o);
		}
	}
named:
	if (dso && dso_end - dso == 7 && memcmp(dso, "inlined", 7) == 0) {
		/* a call-chain frame of inlined code: "ADDR SYM+OFF (inlined)"; its
		 * DSO is the next outer frame's, filled in by ps_close */
		loc->dso = 0;
		loc->inlined = 1;
	} else if (dso && dso_end - dso == 9 && memcmp(dso, "[unknown]", 9) == 0) {
		loc->dso = 0;
	} else if ((err = ps_intern(ps, dso, dso ? (size_t)(dso_end - dso) : 0, &loc->dso)) < 0) {
		return err;
	}
	if (sym_end - sym == 9 && memcmp(sym, "[unknown]", 9) == 0) {
		if (!ip) {
			loc->sym = 0;
			return 0;
		}
		return ps_unknown_name(ps, ip, dso, dso ? (size_t)(dso_end - dso) : 0, dso != NULL,
				       &loc->sym);
	}
	return ps_intern(ps, sym, (size_t)(sym_end - sym), &loc->sym);
}

/* Parses "  IP[ SYMTEXT]" in [p, e). Returns 1 on success, 0 if malformed,
 * -ENOMEM. */
static int ps_loc(struct snap_perfscript *ps, const char *p, const char *e, struct snap_loc *loc)
{
	const char *t;
	struct cache_ent *ce;
	size_t tlen;
	uint64_t ip;
	int err;

	p = skip_sp(p, e);
	t = tok_end(p, e);
	if (!parse_hex(p, t, &ip))
		return 0;
	e = rtrim(t, e);
	t = skip_sp(t, e);
	loc->ip = ip;
	loc->inlined = 0;
	loc->frameless = 0; /* set by the source (parse/cfi.h snap_cfi_mark_frames) */
	if (t == e) {
		loc->off = 0;
		loc->sym = loc->dso = 0;
		return 1;
	}
	tlen = (size_t)(e - t);
	ce = &ps->cache->ent[(ip * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS)];
	if (ce->ip == ip && ce->len == tlen + 1 && memcmp(ce->text, t, tlen) == 0) {
		loc->off = ce->off;
		loc->sym = ce->sym;
		loc->dso = ce->dso;
		loc->inlined = ce->inlined;
		return 1;
	}
	err = ps_resolve(ps, ip, t, e, loc);
	if (err < 0)
		return err;
	if (tlen < CACHE_TEXT) {
		ce->ip = ip;
		ce->len = (uint16_t)(tlen + 1);
		memcpy(ce->text, t, tlen);
		ce->off = loc->off;
		ce->sym = loc->sym;
		ce->dso = loc->dso;
		ce->inlined = loc->inlined;
	}
	return 1;
}

/* "[ADDR ]IP SYMTEXT": perf prints the addr column before the ip when asked
 * for it (PT extra events, cbr). Two leading hex tokens mean addr + ip. */
static int ps_rest_loc(struct snap_perfscript *ps, const char *p, const char *e,
		       struct snap_loc *loc)
{
	const char *t1, *p2, *t2, *r;

	p = skip_sp(p, e);
	t1 = tok_end(p, e);
	if (!is_hex_tok(p, t1))
		return 0;
	p2 = skip_sp(t1, e);
	t2 = tok_end(p2, e);
	r = skip_sp(t2, e);
	if (t2 > p2 && is_hex_tok(p2, t2) && !(r < e && *r == '('))
		p = p2;
	return ps_loc(ps, p, e, loc);
}

/* ---- branch flags ---- */

/* perf's PERF_IP_FLAG_CHARS: flag combinations without a name print as letters. */
static const char flag_chars[] = "bcrosyiABExghDt";

static int flag_letters(const char *p, const char *e, uint32_t *bits)
{
	uint32_t b = 0;

	for (; p < e; p++) {
		const char *c = memchr(flag_chars, *p, sizeof(flag_chars) - 1);

		if (!c)
			return 0;
		b |= 1u << (c - flag_chars);
	}
	*bits = b;
	return 1;
}

/* perf's one-word branch kinds ("jcc" is a jump; "hw int" and "tx abrt" are
 * two words, matched in ps_flags; model/event.h names every kind). */
static const struct {
	const char *word;
	uint8_t kind;
} ps_kind_words[] = {
	{"call", SNAP_BR_CALL},	      {"return", SNAP_BR_RETURN}, {"jmp", SNAP_BR_JUMP},
	{"jcc", SNAP_BR_JUMP},	      {"int", SNAP_BR_INT},	  {"iret", SNAP_BR_IRET},
	{"syscall", SNAP_BR_SYSCALL}, {"sysret", SNAP_BR_SYSRET}, {"async", SNAP_BR_ASYNC},
	{"vmentry", SNAP_BR_VMENTRY}, {"vmexit", SNAP_BR_VMEXIT},
};

/* The kind of the word [p, t), or -1. After "hw", "int" is a hardware
 * interrupt; "abrt" is a kind only after "tx". */
static int ps_kind_word(const char *p, const char *t, int hw, int tx)
{
	if (tok_eq(p, t, "abrt"))
		return tx ? SNAP_BR_TXABORT : -1;
	for (size_t i = 0; i < sizeof(ps_kind_words) / sizeof(ps_kind_words[0]); i++)
		if (tok_eq(p, t, ps_kind_words[i].word))
			return ps_kind_words[i].kind == SNAP_BR_INT && hw ? SNAP_BR_HWINT
									  : ps_kind_words[i].kind;
	return -1;
}

/* Reads the flags words from p (stopping at the first hex token). With
 * skip_unknown, unknown words are skipped; else scanning stops there.
 * Sets br_kind/br_state/in_tx in ev; returns where scanning stopped. */
static const char *ps_flags(const char *p, const char *e, int skip_unknown, struct snap_event *ev)
{
	int start = 0, end = 0, hw = 0, tr = 0, tx = 0, have_bits = 0, k;
	uint8_t kind = SNAP_BR_NONE;
	uint32_t bits = 0;

	ev->in_tx = 0;
	for (;;) {
		const char *t;
		size_t n;

		p = skip_sp(p, e);
		t = tok_end(p, e);
		n = (size_t)(t - p);
		if (!n || is_hex_tok(p, t))
			break;
		if (n >= 2 && p[0] == '(' && t[-1] == ')') {
			if (memmem(p, n, "(x)", 3)) /* "(x)", also run together: "(x)(D)" */
				ev->in_tx = 1;
		} else if (tr && tok_eq(p, t, "strt")) {
			start = 1;
		} else if (tr && tok_eq(p, t, "end")) {
			end = 1;
		} else if (tok_eq(p, t, "tr")) { /* "tr strt", "tr end" */
			tr = 1;
			p = t;
			continue;
		} else if (tok_eq(p, t, "hw")) { /* "hw int" */
			hw = 1;
			tr = 0;
			p = t;
			continue;
		} else if (tok_eq(p, t, "tx")) { /* "tx abrt" */
			tx = 1;
			tr = hw = 0;
			p = t;
			continue;
		} else if ((k = ps_kind_word(p, t, hw, tx)) >= 0) {
			kind = (uint8_t)k;
		} else if (flag_letters(p, t, &bits)) {
			have_bits = 1;
		} else if (!skip_unknown) {
			break;
		}
		tr = hw = tx = 0;
		p = t;
	}
	if (have_bits) {
		uint8_t in_tx = ev->in_tx;

		bits |= (start ? SNAP_PF_TRACE_BEGIN : 0) | (end ? SNAP_PF_TRACE_END : 0);
		snap_event_set_branch_flags(ev, bits);
		ev->in_tx |= in_tx;
		return p;
	}
	if ((start || end) && kind == SNAP_BR_JUMP)
		kind = SNAP_BR_NONE;
	ev->br_kind = kind;
	ev->br_state = start && end ? SNAP_BR_NOSTATE
		       : start	    ? SNAP_BR_START
		       : end	    ? SNAP_BR_END
				    : SNAP_BR_NOSTATE;
	return p;
}

/* The last " => " followed by a hex token, or NULL. Returns the ' ' before "=>". */
static const char *find_arrow(const char *p, const char *e)
{
	const char *q = e;

	while (q > p) {
		const char *h, *he;

		q = memrchr(p, '>', (size_t)(q - p));
		if (!q)
			break;
		if (q - p < 2 || q[-1] != '=' || q[-2] != ' ' || q + 1 >= e || q[1] != ' ')
			continue;
		h = skip_sp(q + 1, e);
		he = tok_end(h, e);
		if (is_hex_tok(h, he))
			return q - 2;
	}
	return NULL;
}

/* ---- records ---- */

static int ps_branch(struct snap_perfscript *ps, const char *p, const char *arrow, const char *e,
		     struct snap_event *ev)
{
	int r;

	ev->kind = SNAP_EV_BRANCH;
	p = ps_flags(p, arrow, 1, ev);
	r = ps_loc(ps, p, arrow, &ev->src);
	if (r <= 0)
		return r;
	r = ps_loc(ps, arrow + 3, e, &ev->dst);
	if (r <= 0)
		return r;
	ps->pt_seen = 1;
	return 1;
}

/* cbr: ... freq: MHZ MHz [(NN%)] [ADDR] IP SYM (DSO) */
static int ps_power(struct snap_perfscript *ps, const char *p, const char *e, struct snap_event *ev)
{
	const char *f = memmem(p, (size_t)(e - p), "freq:", 5), *t;
	uint64_t mhz;
	int r;

	if (!f)
		return 0;
	p = skip_sp(f + 5, e);
	t = p;
	while (t < e && is_digit(*t))
		t++;
	if (!parse_dec(p, t, &mhz) || mhz > UINT32_MAX)
		return 0;
	ev->kind = SNAP_EV_POWER;
	ev->freq_mhz = (uint32_t)mhz;
	p = skip_sp(t, e);
	if (starts_with(p, e, "MHz"))
		p = skip_sp(p + 3, e);
	if (p < e && *p == '(') {
		const char *c = memchr(p, ')', (size_t)(e - p));

		p = c ? c + 1 : e;
	}
	r = ps_rest_loc(ps, p, e, &ev->src);
	if (r < 0)
		return r;
	if (!r)
		memset(&ev->src, 0, sizeof(ev->src));
	ps->pt_seen = 1;
	return 1;
}

/* ` instruction trace error type N [time S.F] cpu C pid P tid T ip X code N: MSG` */
static int ps_error(struct snap_perfscript *ps, const char *p, const char *e, struct snap_event *ev)
{
	uint64_t v;
	int32_t iv;

	memset(ev, 0, sizeof(*ev));
	ev->kind = SNAP_EV_ERROR;
	ev->pid = ev->tid = -1;
	if (starts_with(p, e, "instruction trace error"))
		p += 23;
	else
		p += 14; /* "auxtrace error" */
	for (;;) {
		const char *k = skip_sp(p, e), *ke = tok_end(k, e);
		const char *vb = skip_sp(ke, e), *ve = tok_end(vb, e);

		if (k == e)
			return 0;
		if (tok_eq(k, ke, "type") && parse_dec(vb, ve, &v)) {
		} else if (tok_eq(k, ke, "time")) {
			const char *dot = memchr(vb, '.', (size_t)(ve - vb));

			if (!dot || !parse_time(vb, dot, ve, &ev->time))
				return 0;
			ev->has_time = 1;
		} else if (tok_eq(k, ke, "cpu") && parse_int(vb, ve, &iv)) {
		} else if (tok_eq(k, ke, "pid") && parse_int(vb, ve, &iv)) {
			ev->pid = iv;
		} else if (tok_eq(k, ke, "tid") && parse_int(vb, ve, &iv)) {
			ev->tid = iv;
		} else if (tok_eq(k, ke, "ip")) {
			if (tok_eq(vb, ve, "0"))
				ev->src.ip = 0;
			else if (!starts_with(vb, ve, "0x") || !parse_hex(vb + 2, ve, &ev->src.ip))
				return 0;
		} else if (tok_eq(k, ke, "code") && ve > vb && ve[-1] == ':' &&
			   parse_dec(vb, ve - 1, &v)) {
			const char *m = ve < e ? ve + 1 : e, *me = rtrim(m, e);
			const char *mp = me;

			/* perf >= 5.18 may append " machine_pid N vcpu N" */
			for (int i = 0; i < 4 && mp > m; i++) {
				mp = rtrim(m, mp);
				while (mp > m && !is_sp(mp[-1]))
					mp--;
			}
			if (mp > m && starts_with(mp, me, "machine_pid "))
				me = rtrim(m, mp);
			return ps_intern(ps, m, (size_t)(me - m), &ev->msg) < 0 ? -ENOMEM : 1;
		} else {
			return 0;
		}
		p = ve;
	}
}

/* `PERF_RECORD_SWITCH OUT [preempt]`, `PERF_RECORD_SWITCH IN`, and the same
 * with PERF_RECORD_SWITCH_CPU_WIDE (then `next pid/tid: ...` or `prev pid/tid:
 * ...` follows; the header's pid/tid is the thread that leaves or enters).
 * Fills the SWITCH fields of ev; returns 1, or 0 for any other record. */
static int ps_switch(const char *p, const char *e, struct snap_event *ev)
{
	const char *t = tok_end(p, e), *w, *we;

	if (!tok_eq(p, t, "PERF_RECORD_SWITCH") && !tok_eq(p, t, "PERF_RECORD_SWITCH_CPU_WIDE"))
		return 0;
	w = skip_sp(t, e);
	we = tok_end(w, e);
	if (tok_eq(w, we, "OUT"))
		ev->sw_out = 1;
	else if (!tok_eq(w, we, "IN"))
		return 0;
	w = skip_sp(we, e);
	ev->sw_preempt = ev->sw_out && tok_eq(w, tok_end(w, e), "preempt");
	ev->kind = SNAP_EV_SWITCH;
	return 1;
}

/* `PERF_RECORD_FORK(PID:TID):(PPID:PTID)` (a thread is born; the header is
 * the parent's), `PERF_RECORD_EXIT(PID:TID):(PPID:PTID)` (it exits) and
 * `PERF_RECORD_COMM exec: COMM:PID/TID` (the thread starts a program), as
 * perf script --show-task-events prints them (docs/sampling.md "Threads
 * born and exiting"). Fills the TASK fields of ev; returns 1, or 0 for any
 * other record (a plain COMM: a rename, seen on the samples' comm). */
static int ps_task(const char *p, const char *e, struct snap_event *ev)
{
	const char *t = tok_end(p, e), *a, *c, *z;
	int exit;

	if (tok_eq(p, t, "PERF_RECORD_COMM")) {
		const char *w = skip_sp(t, e), *we = tok_end(w, e), *sl;

		if (!tok_eq(w, we, "exec:"))
			return 0;
		/* COMM:PID/TID, the comm may hold ':' */
		we = rtrim(w, e);
		c = we;
		while (c > w && c[-1] != ':')
			c--;
		sl = memchr(c, '/', (size_t)(we - c));
		if (c == w || !sl || !parse_int(c, sl, &ev->pid) ||
		    !parse_int(sl + 1, we, &ev->tid))
			return 0;
		ev->task_exit = 0;
		ev->kind = SNAP_EV_TASK;
		return 1;
	}
	if (starts_with(p, e, "PERF_RECORD_FORK("))
		exit = 0;
	else if (starts_with(p, e, "PERF_RECORD_EXIT("))
		exit = 1;
	else
		return 0;
	a = p + strlen("PERF_RECORD_FORK(");
	c = memchr(a, ':', (size_t)(e - a));
	z = c ? memchr(c, ')', (size_t)(e - c)) : NULL;
	if (!z || !parse_int(a, c, &ev->pid) || !parse_int(c + 1, z, &ev->tid))
		return 0;
	ev->task_exit = (uint8_t)exit;
	ev->kind = SNAP_EV_TASK;
	return 1;
}

/* Finds "SEC.FRAC:" followed by whitespace or the end of the line, with SEC
 * at the line start or after whitespace. Returns SEC's start and the colon. */
static const char *find_time(const char *s, const char *e, const char **colon, uint64_t *ns)
{
	const char *p = s;

	while (p < e && (p = memchr(p, ':', (size_t)(e - p))) != NULL) {
		const char *c = p++;
		const char *fb = c, *dot, *sb;

		if (c + 1 < e && !is_sp(c[1]))
			continue;
		while (fb > s && is_digit(fb[-1]))
			fb--;
		if (fb == c || fb == s || fb[-1] != '.')
			continue;
		dot = fb - 1;
		sb = dot;
		while (sb > s && is_digit(sb[-1]))
			sb--;
		if (sb == dot || (sb > s && !is_sp(sb[-1])))
			continue;
		if (!parse_time(sb, dot, c, ns))
			continue;
		*colon = c;
		return sb;
	}
	return NULL;
}

static int is_pidtid(const char *p, const char *e)
{
	const char *sl = memchr(p, '/', (size_t)(e - p));
	int32_t v;

	return sl && parse_int(p, sl, &v) && parse_int(sl + 1, e, &v);
}

/* For headers without a time: the end of the first "pid/tid" token (and of
 * a "[cpu]" token after it), or NULL. */
static const char *find_pidtid(const char *s, const char *e)
{
	const char *p = skip_sp(s, e);

	while (p < e) {
		const char *t = tok_end(p, e);

		if (is_pidtid(p, t)) {
			const char *c = skip_sp(t, e), *ce = tok_end(c, e);

			if (ce - c >= 3 && *c == '[' && ce[-1] == ']')
				return ce;
			return t;
		}
		p = skip_sp(t, e);
	}
	return NULL;
}

/* [comm] [pid/]tid [[cpu]] before the time. */
static int ps_prefix(struct snap_perfscript *ps, const char *b, const char *e,
		     struct snap_event *ev)
{
	const char *t, *slash;

	ev->pid = ev->tid = -1;
	e = rtrim(b, e);
	t = e;
	while (t > b && !is_sp(t[-1]))
		t--;
	if (e - t >= 3 && *t == '[' && e[-1] == ']') { /* [cpu] */
		e = rtrim(b, t);
		t = e;
		while (t > b && !is_sp(t[-1]))
			t--;
	}
	slash = memchr(t, '/', (size_t)(e - t));
	if (slash && parse_int(t, slash, &ev->pid) && parse_int(slash + 1, e, &ev->tid)) {
		e = t;
	} else if (!slash && parse_int(t, e, &ev->tid)) {
		e = t;
	} else {
		ev->pid = ev->tid = -1;
	}
	b = skip_sp(b, e);
	e = rtrim(b, e);
	if (b == e) {
		ev->comm = 0;
		return 0;
	}
	if ((size_t)(e - b) == ps->comm_len && ps->comm_id &&
	    memcmp(b, ps->comm_text, ps->comm_len) == 0) {
		ev->comm = ps->comm_id;
		return 0;
	}
	if (ps_intern(ps, b, (size_t)(e - b), &ev->comm) < 0)
		return -ENOMEM;
	if ((size_t)(e - b) <= sizeof(ps->comm_text)) {
		ps->comm_len = (size_t)(e - b);
		memcpy(ps->comm_text, b, ps->comm_len);
		ps->comm_id = ev->comm;
	}
	return 0;
}

/* Strips "/config/" and ":mods" from an event name (model/evname.h). */
static const char *event_base(const char *p, const char *e)
{
	return p + snap_evname_base(p, (size_t)(e - p));
}

/* Synth text printed without an event name (-F without `event`). */
static int is_synth_text(const char *p, const char *e)
{
	const char *t = tok_end(p, e);

	return tok_eq(p, t, "psb") || tok_eq(p, t, "hw:") || tok_eq(p, t, "IP:") ||
	       tok_eq(p, t, "deepest") || tok_eq(p, t, "hints:") || tok_eq(p, t, "cfe:") ||
	       tok_eq(p, t, "IFLAG:");
}

/* Opens a SAMPLE/EXTRA record from its header (a SWITCH record for a
 * sched:sched_switch sample: where the thread blocked, docs/sampling.md). */
static int ps_open_sample(struct snap_perfscript *ps, const struct snap_event *hdr, uint32_t event,
			  uint64_t period, int is_switch, const char *p, const char *e)
{
	int r;

	ps->rec = *hdr;
	ps->rec.event = event;
	ps->rec.period = period;
	ps->nframes = 0;
	ps->frames_dropped = 0;
	r = ps_rest_loc(ps, p, e, &ps->hdr_loc);
	if (r < 0)
		return r;
	ps->has_hdr_loc = r == 1;
	/* parse/primary.h: perf prints the ip on the header line exactly when
	 * the sample has no call chain. */
	if (ps->pt_seen)
		snap_primary_set_mode(&ps->prim, SNAP_TRACE_PT);
	if (is_switch) { /* sched:sched_switch: a switch-out with its chain, never primary */
		ps->rec.kind = SNAP_EV_SWITCH;
		ps->rec.sw_out = 1;
	} else {
		ps->rec.kind = !event ? SNAP_EV_SAMPLE
				      : snap_primary_classify(&ps->prim, ps->names, event,
							      !ps->has_hdr_loc);
	}
	ps->rec_open = 1;
	return 0;
}

/* A non-TAB, non-blank line. Returns 1 with *ev, 0 (record opened, line
 * skipped or counted), <0 error. */
static int ps_header(struct snap_perfscript *ps, const char *s, size_t n, struct snap_event *ev)
{
	const char *e = s + n, *p = skip_sp(s, e), *colon, *t, *arrow;
	struct snap_event hdr;
	uint64_t period = 0;
	uint32_t event = 0;
	int r;

	if (p < e && (*p == 'i' || *p == 'a') &&
	    (starts_with(p, e, "instruction trace error") || starts_with(p, e, "auxtrace error"))) {
		r = ps_error(ps, p, e, ev);
		goto done;
	}
	if (p < e && *p == '#')
		return 0;
	memset(&hdr, 0, sizeof(hdr));
	p = find_time(s, e, &colon, &hdr.time);
	if (p) {
		hdr.has_time = 1;
		if (ps_prefix(ps, s, p, &hdr) < 0)
			return -ENOMEM;
		p = skip_sp(colon + 1, e);
	} else {
		/* no time (timeless PT data): the header needs a "pid/tid" */
		const char *after = find_pidtid(s, e);

		if (!after) {
			r = 0;
			goto done;
		}
		/* "PID/TID 12x.5:" is a time that does not parse (damaged), not an
		 * event name: the line is not understood */
		t = tok_end(skip_sp(after, e), e);
		if (t > after && t[-1] == ':' && is_digit(*skip_sp(after, e))) {
			ps->stats.bad_lines++;
			r = 0;
			goto done;
		}
		if (ps_prefix(ps, s, after, &hdr) < 0)
			return -ENOMEM;
		p = skip_sp(after, e);
	}
	if (starts_with(p, e, "PERF_RECORD_")) {
		*ev = hdr;
		if (!ps_switch(p, e, ev) && !ps_task(p, e, ev))
			return 0; /* other side-band records: skipped */
		ps->stats.events++;
		return 1;
	}
	t = tok_end(p, e);
	if (t > p && is_digit(*p) && parse_dec(p, t, &period)) {
		const char *p2 = skip_sp(t, e), *t2 = tok_end(p2, e);

		if (t2 - p2 >= 2 && t2[-1] == ':') {
			p = p2;
			t = t2;
		} else {
			period = 0;
		}
	}
	if (t - p >= 2 && t[-1] == ':' && !is_synth_text(p, e)) {
		const char *be = event_base(p, t - 1);

		if (tok_eq(p, be, SNAP_EVNAME_BRANCHES)) {
			arrow = find_arrow(t, e);
			*ev = hdr;
			r = arrow ? ps_branch(ps, t, arrow, e, ev) : 0;
			goto done;
		}
		if (tok_eq(p, be, SNAP_EVNAME_CBR)) {
			*ev = hdr;
			r = ps_power(ps, t, e, ev);
			goto done;
		}
		if (snap_evname_is_synth(p, (size_t)(be - p))) {
			ps->pt_seen = 1;
			return 0;
		}
		if (ps_intern(ps, p, (size_t)(be - p), &event) < 0)
			return -ENOMEM;
		if (!event) {
			r = 0;
			goto done;
		}
		return ps_open_sample(ps, &hdr, event, period,
				      snap_event_is_switch_name(p, (size_t)(be - p)), t, e);
	}
	/* no event name printed: tell the record apart by its text */
	arrow = find_arrow(p, e);
	if (arrow) {
		*ev = hdr;
		r = ps_branch(ps, p, arrow, e, ev);
		goto done;
	}
	{
		struct snap_event tmp;
		const char *q = ps_flags(p, e, 0, &tmp);

		t = tok_end(q, e);
		if (tok_eq(q, t, "cbr:")) {
			*ev = hdr;
			r = ps_power(ps, q, e, ev);
			goto done;
		}
		if (is_synth_text(q, e)) {
			ps->pt_seen = 1;
			return 0;
		}
		/* Branch flags, or an addr column before the ip ("ADDR IP ..."),
		 * only come with PT: a synth event printed without `synth`. */
		if (q != p) {
			ps->pt_seen = 1;
			return 0;
		}
		if (is_hex_tok(q, t)) {
			const char *q2 = skip_sp(t, e), *t2 = tok_end(q2, e);

			if (is_hex_tok(q2, t2)) {
				ps->pt_seen = 1;
				return 0;
			}
		}
	}
	if (ps->pt_seen)
		return 0; /* a PT synth event printed without `event` and `synth` */
	r = ps_open_sample(ps, &hdr, 0, 0, 0, p, e);
	if (r < 0)
		return r;
	if (!ps->has_hdr_loc && p < e) {
		ps->rec_open = 0;
		r = 0;
		goto done;
	}
	return 0;
done:
	if (r < 0)
		return r;
	if (r == 0) {
		ps_unknown(ps, s, n);
		return 0;
	}
	ps->stats.events++;
	return 1;
}

/* A call-chain frame perf printed as "ADDR [unknown] (/path)" (ADDR mapped, a
 * file offset) is named after the start of the function around it, found in
 * the file's CFI: "[unknown @ 0xSTART (/path)]", off = ADDR - START. */
static int ps_func_start(struct snap_perfscript *ps, struct snap_loc *loc)
{
	const char *dso = snap_strtab_get(ps->names, loc->dso);
	struct snap_unknown_parts u;
	uint64_t start;
	int r;

	if (dso[0] != '/' ||
	    snap_unknown_parse(snap_strtab_get(ps->names, loc->sym),
			       snap_strtab_len(ps->names, loc->sym), &u) != 2 ||
	    u.addr_len < 2 || memcmp(u.addr, "0x", 2) != 0)
		return 0;
	r = snap_cfi_func_start(ps->cfi, loc->dso, dso, loc->ip, &start);
	if (r <= 0 || start == loc->ip)
		return r;
	loc->off = loc->ip - start;
	return ps_unknown_name(ps, start, dso, snap_strtab_len(ps->names, loc->dso), 1, &loc->sym);
}

/* A TAB line: one call-chain frame of the open record. */
static int ps_frame(struct snap_perfscript *ps, const char *s, size_t n)
{
	struct snap_loc loc;
	int r;

	if (!ps->rec_open) {
		ps_unknown(ps, s, n);
		return 0;
	}
	r = ps_loc(ps, s + 1, s + n, &loc);
	if (r < 0)
		return r;
	if (r == 0) {
		ps_unknown(ps, s, n);
		return 0;
	}
	if (ps->nframes >= SNAP_PERFSCRIPT_MAX_FRAMES) {
		ps->stats.dropped_frames++; /* counted as such, not as lines not understood */
		ps->frames_dropped = 1;
		return 0;
	}
	if (ps->cfi && loc.sym && loc.dso && !snap_loc_is_kernel(&loc) &&
	    (r = ps_func_start(ps, &loc)) < 0)
		return r;
	if (snap_vec_reserve(&ps->frames, &ps->fcap, ps->nframes + 1, sizeof(*ps->frames)) < 0)
		return -ENOMEM;
	ps->frames[ps->nframes++] = loc;
	return 0;
}

/* Completes the open record into *ev. Returns 1. */
static int ps_close(struct snap_perfscript *ps, struct snap_event *ev)
{
	*ev = ps->rec;
	ev->frames = NULL;
	ev->nframes = 0;
	ps->rec_open = 0;
	if (ps->rec.kind == SNAP_EV_EXTRA) {
		if (ps->nframes)
			ev->src = ps->frames[0];
		else if (ps->has_hdr_loc)
			ev->src = ps->hdr_loc;
	} else {
		if (!ps->nframes && ps->has_hdr_loc) {
			ev->frames = &ps->hdr_loc;
			ev->nframes = 1;
		} else if (ps->nframes) {
			for (size_t i = 0, j = ps->nframes - 1; i < j; i++, j--) {
				struct snap_loc tmp = ps->frames[i];

				ps->frames[i] = ps->frames[j];
				ps->frames[j] = tmp;
			}
			/* inlined code is in the DSO of the function it was inlined into:
			 * the next outer frame at the same address (perf prints the
			 * real function of an address after its inlined frames) */
			for (size_t i = 1; i < ps->nframes; i++)
				if (ps->frames[i].inlined && !ps->frames[i].dso &&
				    ps->frames[i - 1].ip == ps->frames[i].ip)
					ps->frames[i].dso = ps->frames[i - 1].dso;
			ev->frames = ps->frames;
			ev->nframes = (uint32_t)ps->nframes;
		}
	}
	ps->stats.events++;
	return 1;
}

int snap_perfscript_next(struct snap_perfscript *ps, struct snap_event *ev)
{
	for (;;) {
		const char *s;
		size_t n, adv;
		int r;

		if (!ps_peek(ps, &s, &n, &adv)) {
			if (ps->finished && ps->rec_open)
				return ps_close(ps, ev);
			return 0;
		}
		if (n && s[n - 1] == '\r')
			n--;
		if (n == 0) {
			ps_consume(ps, adv);
			if (ps->rec_open)
				return ps_close(ps, ev);
			continue;
		}
		if (s[0] == '\t') {
			ps_consume(ps, adv);
			if (n > SNAP_PERFSCRIPT_MAX_LINE || memchr(s, '\0', n)) {
				ps->stats.bad_lines += n <= SNAP_PERFSCRIPT_MAX_LINE;
				ps_unknown(ps, s, n);
				continue;
			}
			r = ps_frame(ps, s, n);
			if (r < 0)
				return r;
			continue;
		}
		if (ps->rec_open)
			return ps_close(ps, ev);
		ps_consume(ps, adv);
		if (n > SNAP_PERFSCRIPT_MAX_LINE || memchr(s, '\0', n)) {
			/* a NUL byte: a damaged file (perf never prints one), not a new
			 * event name or track */
			ps->stats.bad_lines += n <= SNAP_PERFSCRIPT_MAX_LINE;
			ps_unknown(ps, s, n);
			continue;
		}
		r = ps_header(ps, s, n, ev);
		if (r != 0)
			return r;
	}
}
