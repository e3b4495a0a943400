// SPDX-License-Identifier: GPL-2.0
/* parse/dlrec: the dlfilter record stream reader. Streams are built here with a
 * tiny encoder that follows model/dlrec.h byte by byte. */
#include <errno.h>

#include "model/dlrec.h"
#include "parse/dlrec.h"
#include "snap_test.h"
#include "util/alloc.h"
#include "util/err.h"

struct enc {
	uint8_t b[8192];
	size_t n;
};

static void e8(struct enc *e, const void *p, size_t n)
{
	memcpy(e->b + e->n, p, n);
	e->n += n;
}

static void e32(struct enc *e, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	e8(e, b, 4);
}

static void e64(struct enc *e, uint64_t v)
{
	e32(e, (uint32_t)v);
	e32(e, (uint32_t)(v >> 32));
}

static void ehdr(struct enc *e)
{
	e8(e, SNAP_DLREC_MAGIC, 8);
	e32(e, SNAP_DLREC_VERSION);
	e32(e, SNAP_DLREC_HDR_SIZE);
}

static void erec(struct enc *e, uint32_t kind, uint32_t len)
{
	e32(e, kind);
	e32(e, len);
}

static void estr(struct enc *e, uint32_t id, const char *s)
{
	erec(e, SNAP_DLREC_STR, 4 + (uint32_t)strlen(s));
	e32(e, id);
	e8(e, s, strlen(s));
}

static void eloc(struct enc *e, uint64_t addr, uint64_t off, uint32_t sym, uint32_t dso)
{
	e64(e, addr);
	e64(e, off);
	e32(e, sym);
	e32(e, dso);
}

static void ebranch(struct enc *e, uint32_t flags, uint64_t time, uint64_t ip, uint32_t isym,
		    uint64_t addr, uint32_t asym, uint32_t dso)
{
	erec(e, SNAP_DLREC_BRANCH, SNAP_DLREC_BRANCH_SIZE);
	e32(e, flags);
	e32(e, 42);
	e32(e, 43);
	e32(e, 0);
	e64(e, time);
	eloc(e, ip, isym ? 0x10 : 0, isym, isym ? dso : 0);
	eloc(e, addr, 0, asym, asym ? dso : 0);
}

static void eend(struct enc *e, uint64_t recs, uint64_t br, uint64_t samp)
{
	erec(e, SNAP_DLREC_END, SNAP_DLREC_END_SIZE);
	e64(e, recs);
	e64(e, br);
	e64(e, samp);
	e64(e, 7);
	e64(e, 1);
}

/* Standard prefix: header, strings 1 = "/bin/prog", 2 = "main", 3 = "work", 4 = "cpu-clock". */
static void eprefix(struct enc *e)
{
	ehdr(e);
	estr(e, 1, "/bin/prog");
	estr(e, 2, "main");
	estr(e, 3, "work");
	estr(e, 4, "cpu-clock");
}

struct rd {
	struct snap_strtab st;
	struct snap_dlrec r;
	struct snap_event ev[8];
	struct snap_loc frames[8][4]; /* copies: ev->frames is borrowed until next() */
	int nev;
	int err;    /* first negative next() result, or 0 */
	int finish; /* finish() result */
};

/* What rd_run tells the reader about the trace (parse/primary.h). */
static enum snap_trace_mode rd_mode;

/* Feeds the stream in chunks of `chunk` bytes (0 = all at once) and collects events. */
static void rd_run(struct rd *d, const struct enc *e, size_t chunk)
{
	size_t pos = 0;

	memset(d->ev, 0xff, sizeof(d->ev));
	d->nev = 0;
	d->err = 0;
	snap_strtab_init(&d->st);
	snap_dlrec_init(&d->r, &d->st);
	if (rd_mode)
		snap_dlrec_set_mode(&d->r, rd_mode);
	while (pos < e->n && !d->err) {
		size_t n = chunk && e->n - pos > chunk ? chunk : e->n - pos;
		struct snap_event ev;
		int ret;

		CHECK_INT_EQ(0, snap_dlrec_feed(&d->r, e->b + pos, n));
		pos += n;
		memset(&ev, 0xff, sizeof(ev));
		while ((ret = snap_dlrec_next(&d->r, &ev)) > 0) {
			if (ret == SNAP_DLREC_TEXT_POINT)
				continue;
			if (d->nev < 8) {
				d->ev[d->nev] = ev;
				if (ev.nframes <= 4 && ev.frames) {
					memcpy(d->frames[d->nev], ev.frames,
					       ev.nframes * sizeof(*ev.frames));
					d->ev[d->nev].frames = d->frames[d->nev];
				}
			}
			d->nev++;
			memset(&ev, 0xff, sizeof(ev));
		}
		if (ret < 0)
			d->err = ret;
	}
	d->finish = snap_dlrec_finish(&d->r);
}

static void rd_fini(struct rd *d)
{
	snap_dlrec_fini(&d->r);
	snap_strtab_fini(&d->st);
}

static const char *nm(struct rd *d, uint32_t id)
{
	return snap_strtab_get(&d->st, id);
}

static void branch_event(void)
{
	struct enc e = {.n = 0};
	struct rd d;

	eprefix(&e);
	ebranch(&e, 0x3, 1000000123, 0x401007, 2, 0x4010e2, 3, 1);
	eend(&e, 5, 1, 0);
	for (size_t chunk = 0; chunk < 10; chunk++) {
		rd_run(&d, &e, chunk);
		CHECK_INT_EQ(0, d.err);
		CHECK_INT_EQ(0, d.finish);
		CHECK_INT_EQ(1, d.nev);
		CHECK_INT_EQ(SNAP_EV_BRANCH, d.ev[0].kind);
		CHECK_INT_EQ(42, d.ev[0].pid);
		CHECK_INT_EQ(43, d.ev[0].tid);
		CHECK_INT_EQ(0, d.ev[0].comm);
		CHECK_U64_EQ(1000000123, d.ev[0].time);
		CHECK_INT_EQ(1, d.ev[0].has_time);
		CHECK_INT_EQ(SNAP_BR_CALL, d.ev[0].br_kind);
		CHECK_INT_EQ(SNAP_BR_NOSTATE, d.ev[0].br_state);
		CHECK_INT_EQ(0, d.ev[0].in_tx);
		CHECK_U64_EQ(0x401007, d.ev[0].src.ip);
		CHECK_U64_EQ(0x10, d.ev[0].src.off);
		CHECK_STR_EQ("main", nm(&d, d.ev[0].src.sym));
		CHECK_STR_EQ("/bin/prog", nm(&d, d.ev[0].src.dso));
		CHECK_U64_EQ(0x4010e2, d.ev[0].dst.ip);
		CHECK_U64_EQ(0, d.ev[0].dst.off);
		CHECK_STR_EQ("work", nm(&d, d.ev[0].dst.sym));
		CHECK_INT_EQ(0, d.ev[0].msg);
		CHECK_INT_EQ(0, d.ev[0].freq_mhz);
		CHECK_INT_EQ(0, d.ev[0].event);
		CHECK_U64_EQ(0, d.ev[0].period);
		CHECK(d.ev[0].frames == NULL);
		CHECK_INT_EQ(0, d.ev[0].nframes);
		CHECK_U64_EQ(5, snap_dlrec_stats(&d.r)->records);
		CHECK_U64_EQ(7, snap_dlrec_stats(&d.r)->dropped);
		CHECK_U64_EQ(1, snap_dlrec_stats(&d.r)->errors);
		CHECK_INT_EQ(1, snap_dlrec_ended(&d.r));
		rd_fini(&d);
	}
}

static void branch_flags_and_unknown_names(void)
{
	static const struct {
		uint32_t flags;
		int kind, state, in_tx;
	} tab[] = {
		{0x101, SNAP_BR_NONE, SNAP_BR_START, 0},     /* tr strt */
		{0x213, SNAP_BR_SYSCALL, SNAP_BR_END, 0},    /* tr end  syscall */
		{0x221, SNAP_BR_ASYNC, SNAP_BR_END, 0},	     /* tr end  async */
		{0x405, SNAP_BR_RETURN, SNAP_BR_NOSTATE, 1}, /* (x) return */
		{0x9, SNAP_BR_JUMP, SNAP_BR_NOSTATE, 0},     /* jcc */
	};
	struct enc e = {.n = 0};
	struct rd d;
	size_t i;

	eprefix(&e);
	for (i = 0; i < 5; i++)
		ebranch(&e, tab[i].flags, 10 + i, i ? 0x401000 + i : 0, i ? 2 : 0,
			0xffffffff81000000ull, 0, 1);
	eend(&e, 9, 5, 0);
	rd_run(&d, &e, 0);
	CHECK_INT_EQ(0, d.finish);
	CHECK_INT_EQ(5, d.nev);
	for (i = 0; i < 5; i++) {
		CHECK_INT_EQ(tab[i].kind, d.ev[i].br_kind);
		CHECK_INT_EQ(tab[i].state, d.ev[i].br_state);
		CHECK_INT_EQ(tab[i].in_tx, d.ev[i].in_tx);
	}
	/* ip 0 with no symbol and no DSO, as perf prints "0 [unknown] ([unknown])": no name */
	CHECK_INT_EQ(0, d.ev[0].src.sym);
	CHECK_INT_EQ(0, d.ev[0].src.dso);
	CHECK_U64_EQ(0, d.ev[0].src.ip);
	/* a kernel address, unsigned hex */
	CHECK_STR_EQ("[unknown @ 0xffffffff81000000 ([unknown])]", nm(&d, d.ev[1].dst.sym));
	CHECK_INT_EQ(d.ev[1].dst.sym, d.ev[4].dst.sym); /* cached, same id */
	CHECK_U64_EQ(0, d.ev[1].dst.off);
	rd_fini(&d);
}

static void b3_3_unknown_symbol_with_dso(void)
{
	struct enc e = {.n = 0};
	struct rd d;

	eprefix(&e);
	erec(&e, SNAP_DLREC_BRANCH, SNAP_DLREC_BRANCH_SIZE);
	e32(&e, 1);
	e32(&e, 1);
	e32(&e, 1);
	e32(&e, 0);
	e64(&e, 5);
	eloc(&e, 0x7f0000001234ull, 99, 0, 1); /* no symbol: offset is ignored */
	eloc(&e, 0x7f0000001234ull, 0, 0, 0);  /* same address, no DSO: other name */
	eend(&e, 5, 1, 0);
	rd_run(&d, &e, 3);
	CHECK_INT_EQ(1, d.nev);
	CHECK_STR_EQ("[unknown @ 0x7f0000001234 (/bin/prog)]", nm(&d, d.ev[0].src.sym));
	CHECK_U64_EQ(0, d.ev[0].src.off);
	CHECK_STR_EQ("/bin/prog", nm(&d, d.ev[0].src.dso));
	CHECK_STR_EQ("[unknown @ 0x7f0000001234 ([unknown])]", nm(&d, d.ev[0].dst.sym));
	rd_fini(&d);
}

static void esample(struct enc *e, uint32_t kind, uint32_t nframes)
{
	erec(e, kind, SNAP_DLREC_SAMPLE_SIZE + nframes * SNAP_DLREC_LOC_SIZE);
	e32(e, 4);
	e32(e, 100);
	e32(e, 101);
	e32(e, nframes);
	e64(e, 2000);
	e64(e, 500000);
	eloc(e, 0x555555555151ull, 0x11, 3, 1); /* sample ip, absolute */
	if (nframes >= 1)
		eloc(e, 0x1151, 0x11, 3, 1); /* leaf, DSO-relative */
	if (nframes >= 2)
		eloc(e, 0x1251, 0x61, 2, 1);
	if (nframes >= 3)
		eloc(e, 0x2724a, 0, 0, 0);
}

static void b3_6_sample_frames_outermost_first(void)
{
	struct enc e = {.n = 0};
	struct rd d;

	eprefix(&e);
	esample(&e, SNAP_DLREC_SAMPLE, 3);
	esample(&e, SNAP_DLREC_SAMPLE, 0);
	eend(&e, 6, 0, 2);
	rd_run(&d, &e, 7);
	CHECK_INT_EQ(0, d.finish);
	CHECK_INT_EQ(2, d.nev);
	CHECK_INT_EQ(SNAP_EV_SAMPLE, d.ev[0].kind);
	CHECK_STR_EQ("cpu-clock", nm(&d, d.ev[0].event));
	CHECK_U64_EQ(500000, d.ev[0].period);
	CHECK_U64_EQ(2000, d.ev[0].time);
	CHECK_INT_EQ(101, d.ev[0].tid);
	CHECK_INT_EQ(3, d.ev[0].nframes);
	CHECK_STR_EQ("[unknown @ 0x2724a ([unknown])]", nm(&d, d.ev[0].frames[0].sym));
	CHECK_STR_EQ("main", nm(&d, d.ev[0].frames[1].sym));
	CHECK_U64_EQ(0x1251, d.ev[0].frames[1].ip);
	CHECK_U64_EQ(0x61, d.ev[0].frames[1].off);
	CHECK_STR_EQ("work", nm(&d, d.ev[0].frames[2].sym));
	CHECK_U64_EQ(0x1151, d.ev[0].frames[2].ip);
	CHECK_U64_EQ(0, d.ev[0].src.ip); /* samples carry their ip in the frames */
	CHECK_INT_EQ(0, d.ev[0].src.sym);
	/* no call chain: the sample ip (absolute) is the only frame */
	CHECK_INT_EQ(1, d.ev[1].nframes);
	CHECK_STR_EQ("work", nm(&d, d.ev[1].frames[0].sym));
	CHECK_U64_EQ(0x555555555151ull, d.ev[1].frames[0].ip);
	CHECK_U64_EQ(0x11, d.ev[1].frames[0].off);
	CHECK_INT_EQ(0, d.ev[1].src.sym);
	rd_fini(&d);
}

static void extra_and_power(void)
{
	struct enc e = {.n = 0};
	struct rd d;

	eprefix(&e);
	estr(&e, 5, "branch-misses");
	esample(&e, SNAP_DLREC_SAMPLE, 1); /* cpu-clock first: the primary event */
	esample(&e, SNAP_DLREC_SAMPLE, 2);
	e.b[e.n - 2 * SNAP_DLREC_LOC_SIZE - SNAP_DLREC_SAMPLE_SIZE] = 5; /* event id 5 */
	erec(&e, SNAP_DLREC_POWER, SNAP_DLREC_POWER_SIZE);
	e32(&e, 4606);
	e32(&e, 5);
	e32(&e, 6);
	e32(&e, 0);
	e64(&e, 77);
	eloc(&e, 0x401000, 0, 2, 1);
	erec(&e, SNAP_DLREC_TEXT, 0);
	erec(&e, 9, 3); /* an unknown kind from a newer plugin: skipped */
	e8(&e, "abc", 3);
	eend(&e, 10, 0, 2);
	rd_run(&d, &e, 0);
	CHECK_INT_EQ(0, d.finish);
	CHECK_INT_EQ(3, d.nev);
	CHECK_U64_EQ(1, snap_dlrec_stats(&d.r)->texts);
	CHECK_INT_EQ(SNAP_EV_SAMPLE, d.ev[0].kind);
	CHECK_INT_EQ(SNAP_EV_EXTRA, d.ev[1].kind);
	CHECK_STR_EQ("branch-misses", nm(&d, d.ev[1].event));
	CHECK_STR_EQ("work", nm(&d, d.ev[1].src.sym)); /* the leaf frame */
	CHECK_U64_EQ(0x1151, d.ev[1].src.ip);
	CHECK_INT_EQ(0, d.ev[1].nframes);
	CHECK(d.ev[1].frames == NULL);
	CHECK_INT_EQ(SNAP_EV_POWER, d.ev[2].kind);
	CHECK_INT_EQ(4606, d.ev[2].freq_mhz);
	CHECK_U64_EQ(77, d.ev[2].time);
	CHECK_STR_EQ("main", nm(&d, d.ev[2].src.sym));
	CHECK_U64_EQ(1, snap_dlrec_stats(&d.r)->skipped);
	rd_fini(&d);
}

/* In a trace with branches every sampled event is an extra event. */
static void b3_6_samples_after_branches_are_extra(void)
{
	struct enc e = {.n = 0};
	struct rd d;

	eprefix(&e);
	ebranch(&e, 3, 1, 0x1000, 2, 0x2000, 3, 1);
	esample(&e, SNAP_DLREC_SAMPLE, 0);
	eend(&e, 6, 1, 1);
	rd_run(&d, &e, 0);
	CHECK_INT_EQ(0, d.finish);
	CHECK_INT_EQ(2, d.nev);
	CHECK_INT_EQ(SNAP_EV_EXTRA, d.ev[1].kind);
	CHECK_STR_EQ("work", nm(&d, d.ev[1].src.sym)); /* no chain: the sample ip */
	CHECK_U64_EQ(0x555555555151ull, d.ev[1].src.ip);
	rd_fini(&d);
}

/* Sets the event string id of the SAMPLE record that ends the stream so far. */
static void esample_event(struct enc *e, uint32_t nframes, uint8_t id)
{
	esample(e, SNAP_DLREC_SAMPLE, nframes);
	e->b[e->n - nframes * SNAP_DLREC_LOC_SIZE - SNAP_DLREC_SAMPLE_SIZE] = id;
}

/* The bug of a PT recording with -events: samples perf emits before the
 * first branch (taken before the PT window) must not become the primary
 * stream. Without a declared mode: branch-misses never is primary (even with
 * a chain), a probe event without a call chain is not either; once a branch
 * is seen no event is primary, not even cpu-clock with a chain. */
static void b3_6_extras_before_branches_never_primary(void)
{
	struct enc e = {.n = 0};
	struct rd d;

	eprefix(&e);
	estr(&e, 5, "branch-misses");
	estr(&e, 6, "probe_prog:work");
	esample_event(&e, 1, 5);
	esample_event(&e, 0, 6);
	esample_event(&e, 0, 5);
	ebranch(&e, 3, 1, 0x1000, 2, 0x2000, 3, 1);
	esample_event(&e, 2, 4);
	eend(&e, 11, 1, 4);
	rd_run(&d, &e, 5);
	CHECK_INT_EQ(0, d.finish);
	CHECK_INT_EQ(5, d.nev);
	CHECK_INT_EQ(SNAP_EV_EXTRA, d.ev[0].kind);
	CHECK_STR_EQ("branch-misses", nm(&d, d.ev[0].event));
	CHECK_INT_EQ(SNAP_EV_EXTRA, d.ev[1].kind);
	CHECK_STR_EQ("probe_prog:work", nm(&d, d.ev[1].event));
	CHECK_INT_EQ(SNAP_EV_EXTRA, d.ev[2].kind);
	CHECK_INT_EQ(SNAP_EV_BRANCH, d.ev[3].kind);
	CHECK_INT_EQ(SNAP_EV_EXTRA, d.ev[4].kind);
	CHECK_STR_EQ("cpu-clock", nm(&d, d.ev[4].event));
	CHECK_INT_EQ(0, d.ev[4].nframes);
	rd_fini(&d);
}

/* A mode declared by the caller (the perf.data header) wins over the chain test. */
static void declared_mode(void)
{
	struct enc e = {.n = 0};
	struct rd d;

	eprefix(&e);
	esample_event(&e, 2, 4); /* cpu-clock with a chain, before any branch */
	eend(&e, 5, 0, 1);
	rd_mode = SNAP_TRACE_PT;
	rd_run(&d, &e, 0);
	CHECK_INT_EQ(1, d.nev);
	CHECK_INT_EQ(SNAP_EV_EXTRA, d.ev[0].kind);
	rd_fini(&d);

	e.n = 0;
	eprefix(&e);
	esample_event(&e, 0, 4); /* no chain: still primary in a sampling recording */
	esample_event(&e, 1, 4);
	eend(&e, 6, 0, 2);
	rd_mode = SNAP_TRACE_SAMPLES;
	rd_run(&d, &e, 0);
	CHECK_INT_EQ(2, d.nev);
	CHECK_INT_EQ(SNAP_EV_SAMPLE, d.ev[0].kind);
	CHECK_INT_EQ(SNAP_EV_SAMPLE, d.ev[1].kind);
	rd_fini(&d);

	e.n = 0;
	eprefix(&e);
	esample_event(&e, 0, 4); /* unknown mode: a chain-less sample is not primary */
	esample_event(&e, 1, 4);
	eend(&e, 6, 0, 2);
	rd_mode = SNAP_TRACE_UNKNOWN;
	rd_run(&d, &e, 0);
	CHECK_INT_EQ(2, d.nev);
	CHECK_INT_EQ(SNAP_EV_EXTRA, d.ev[0].kind);
	CHECK_INT_EQ(SNAP_EV_SAMPLE, d.ev[1].kind);
	rd_fini(&d);
}

/* Bad streams: {what to do, expected error from next(), expected finish()}. */
static void bad_streams(void)
{
	for (int c = 0; c < 13; c++) {
		struct enc e = {.n = 0};
		struct rd d;
		int want_next = -SNAP_EPLUGIN, want_finish = -SNAP_EPLUGIN;

		switch (c) {
		case 0: /* bad magic */
			e8(&e, "SNAPDLR2", 8);
			e32(&e, 1);
			e32(&e, 16);
			break;
		case 1: /* unknown version */
			e8(&e, SNAP_DLREC_MAGIC, 8);
			e32(&e, 2);
			e32(&e, 16);
			break;
		case 2: /* branch too short */
			eprefix(&e);
			erec(&e, SNAP_DLREC_BRANCH, 8);
			e64(&e, 0);
			break;
		case 3: /* undefined string id */
			eprefix(&e);
			ebranch(&e, 3, 1, 1, 9, 2, 3, 1);
			break;
		case 4: /* END counts do not match */
			eprefix(&e);
			ebranch(&e, 3, 1, 1, 2, 2, 3, 1);
			eend(&e, 5, 2, 0);
			break;
		case 5: /* data after END */
			eprefix(&e);
			eend(&e, 4, 0, 0);
			estr(&e, 5, "late");
			break;
		case 6: /* string ids not dense */
			ehdr(&e);
			estr(&e, 2, "x");
			break;
		case 7: /* too many frames for the record length */
			eprefix(&e);
			erec(&e, SNAP_DLREC_SAMPLE, SNAP_DLREC_SAMPLE_SIZE);
			e32(&e, 4);
			e32(&e, 1);
			e32(&e, 1);
			e32(&e, 5);
			e64(&e, 1);
			e64(&e, 1);
			eloc(&e, 1, 0, 0, 0);
			break;
		case 8: /* absurd record length */
			eprefix(&e);
			erec(&e, SNAP_DLREC_STR, 0xffffffffu);
			break;
		case 9: /* truncated: no END */
			eprefix(&e);
			ebranch(&e, 3, 1, 1, 2, 2, 3, 1);
			want_next = 0;
			want_finish = -SNAP_ETRUNC;
			break;
		case 10: /* truncated in the middle of a record */
			eprefix(&e);
			ebranch(&e, 3, 1, 1, 2, 2, 3, 1);
			e.n -= 5;
			want_next = 0;
			want_finish = -SNAP_ETRUNC;
			break;
		case 11: /* empty input */
			want_next = 0;
			want_finish = -SNAP_ETRUNC;
			break;
		case 12: /* sample event id 0 */
			eprefix(&e);
			erec(&e, SNAP_DLREC_SAMPLE, SNAP_DLREC_SAMPLE_SIZE);
			e32(&e, 0);
			e32(&e, 1);
			e32(&e, 1);
			e32(&e, 0);
			e64(&e, 1);
			e64(&e, 1);
			eloc(&e, 1, 0, 0, 0);
			break;
		}
		rd_run(&d, &e, 0);
		if (want_next == 0 && d.err) {
			fprintf(stderr, "case %d: next() gave %d\n", c, d.err);
			CHECK(0);
		}
		if (want_next && d.err != want_next) {
			fprintf(stderr, "case %d: next() gave %d\n", c, d.err);
			CHECK(0);
		}
		CHECK_INT_EQ(want_finish, d.finish);
		/* errors are sticky and say where */
		if (want_next) {
			struct snap_event ev;

			CHECK_INT_EQ(want_next, snap_dlrec_next(&d.r, &ev));
			CHECK_INT_EQ(want_next, snap_dlrec_feed(&d.r, "x", 1));
			CHECK(snap_dlrec_offset(&d.r) <= e.n);
		}
		rd_fini(&d);
	}
}

static void text_point(void)
{
	struct enc e = {.n = 0};
	struct snap_strtab st;
	struct snap_dlrec r;
	struct snap_event ev;
	const char *t;
	size_t n;

	eprefix(&e);
	ebranch(&e, 3, 1, 1, 2, 2, 3, 1);
	erec(&e, SNAP_DLREC_TEXT, 5);
	e8(&e, "err\nx", 5);
	ebranch(&e, 0x101, 2, 0, 0, 2, 3, 1);
	eend(&e, 7, 2, 0);
	snap_strtab_init(&st);
	snap_dlrec_init(&r, &st);
	CHECK_INT_EQ(0, snap_dlrec_feed(&r, e.b, e.n));
	memset(&ev, 0xff, sizeof(ev));
	CHECK_INT_EQ(1, snap_dlrec_next(&r, &ev));
	CHECK_U64_EQ(1, ev.time);
	t = snap_dlrec_text(&r, &n);
	CHECK(t == NULL);
	CHECK_INT_EQ(0, n);
	CHECK_INT_EQ(SNAP_DLREC_TEXT_POINT, snap_dlrec_next(&r, &ev));
	CHECK_U64_EQ(1, ev.time); /* untouched */
	t = snap_dlrec_text(&r, &n);
	CHECK_INT_EQ(5, n);
	CHECK(t && !memcmp(t, "err\nx", 5));
	CHECK_INT_EQ(1, snap_dlrec_next(&r, &ev));
	CHECK_INT_EQ(SNAP_BR_START, ev.br_state);
	CHECK(snap_dlrec_text(&r, &n) == NULL);
	CHECK_INT_EQ(0, snap_dlrec_next(&r, &ev));
	CHECK_INT_EQ(0, snap_dlrec_finish(&r));
	snap_dlrec_fini(&r);
	snap_strtab_fini(&st);
}

static void ecomm(struct enc *e, int32_t pid, int32_t tid, uint32_t comm)
{
	erec(e, SNAP_DLREC_COMM, SNAP_DLREC_COMM_SIZE);
	e32(e, (uint32_t)pid);
	e32(e, (uint32_t)tid);
	e32(e, comm);
}

static void comm_per_thread(void)
{
	struct enc e = {.n = 0};
	struct rd d;

	eprefix(&e);
	ebranch(&e, 3, 1, 0x1000, 2, 0x2000, 3, 1); /* 42/43 before any COMM: no comm */
	ecomm(&e, 42, 43, 2);
	ebranch(&e, 3, 2, 0x1000, 2, 0x2000, 3, 1);
	ecomm(&e, 100, 101, 3);
	esample(&e, SNAP_DLREC_SAMPLE, 0); /* 100/101 */
	ebranch(&e, 3, 3, 0x1000, 2, 0x2000, 3, 1);
	ecomm(&e, 42, 43, 1); /* exec: new name */
	ebranch(&e, 3, 4, 0x1000, 2, 0x2000, 3, 1);
	eend(&e, 12, 4, 1);
	rd_run(&d, &e, 0);
	CHECK_INT_EQ(0, d.finish);
	CHECK_INT_EQ(5, d.nev);
	CHECK_INT_EQ(0, d.ev[0].comm);
	CHECK_STR_EQ("main", nm(&d, d.ev[1].comm));
	CHECK_STR_EQ("work", nm(&d, d.ev[2].comm));
	CHECK_STR_EQ("main", nm(&d, d.ev[3].comm));
	CHECK_STR_EQ("/bin/prog", nm(&d, d.ev[4].comm));
	rd_fini(&d);
}

static void error_offset(void)
{
	struct enc e = {.n = 0};
	struct rd d;
	size_t at;

	eprefix(&e);
	at = e.n;
	ebranch(&e, 3, 1, 1, 2, 2, 9, 1); /* undefined id 9 */
	rd_run(&d, &e, 5);
	CHECK_INT_EQ(-SNAP_EPLUGIN, d.err);
	CHECK_U64_EQ(at, snap_dlrec_offset(&d.r));
	rd_fini(&d);
}

static void alloc_failures(void)
{
	struct enc e = {.n = 0};
	int ok = 0;

	eprefix(&e);
	ebranch(&e, 3, 1, 0x1000, 0, 2, 3, 1);
	esample(&e, SNAP_DLREC_SAMPLE, 3);
	eend(&e, 6, 1, 1);
	for (long n = 0; n < 200 && !ok; n++) {
		struct snap_strtab st;
		struct snap_dlrec r;
		struct snap_event ev;
		int ret, nev = 0;

		snap_strtab_init(&st);
		snap_dlrec_init(&r, &st);
		snap_alloc_fail_after(n);
		ret = snap_dlrec_feed(&r, e.b, e.n);
		while (ret >= 0 && (ret = snap_dlrec_next(&r, &ev)) > 0)
			nev++;
		if (ret == 0)
			ret = snap_dlrec_finish(&r);
		snap_alloc_fail_after(-1);
		CHECK(ret == 0 || ret == -ENOMEM);
		if (ret == 0) {
			CHECK_INT_EQ(2, nev);
			ok = 1;
		}
		snap_dlrec_fini(&r);
		snap_strtab_fini(&st);
	}
	CHECK(ok);
}

static void fini_twice(void)
{
	struct snap_strtab st;
	struct snap_dlrec r;

	snap_strtab_init(&st);
	snap_dlrec_init(&r, &st);
	snap_dlrec_fini(&r);
	snap_dlrec_fini(&r);
	snap_dlrec_fini(NULL);
	snap_strtab_fini(&st);
}

int main(void)
{
	RUN(branch_event);
	RUN(branch_flags_and_unknown_names);
	RUN(b3_3_unknown_symbol_with_dso);
	RUN(b3_6_sample_frames_outermost_first);
	RUN(extra_and_power);
	RUN(b3_6_samples_after_branches_are_extra);
	RUN(b3_6_extras_before_branches_never_primary);
	RUN(declared_mode);
	RUN(bad_streams);
	RUN(text_point);
	RUN(comm_per_thread);
	RUN(error_offset);
	RUN(alloc_failures);
	RUN(fini_twice);
	return snap_test_done();
}
