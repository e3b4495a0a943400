// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder's pure parts: TSC conversion, the perf.data reader on
 * hand-made files, the support checks, and ELF symbols of this test's own binary. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "ptdec/elfsyms.h"
#include "ptdec/pdata.h"
#include "ptdec/ptdec.h"
#include "snap_test.h"
#include "util/err.h"
#include "util/strtab.h"

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

#define ST_ID (0x2ull | 0x4ull | 0x80ull | 0x10000ull) /* TID TIME CPU IDENTIFIER */

/* Appends a record header at p; returns p. */
static uint8_t *rec(uint8_t *p, uint32_t type, uint16_t misc, uint16_t size)
{
	put32(p, type);
	put16(p + 4, misc);
	put16(p + 6, size);
	return p;
}

/* The sample_id trailer for ST_ID: pid, tid, time, cpu, res, id (32 bytes). */
static void trailer(uint8_t *p, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	put32(p, pid);
	put32(p + 4, tid);
	put64(p + 8, time);
	put32(p + 16, cpu);
	put64(p + 24, 1);
}

/*
 * A small Intel PT perf.data: one attribute (PMU type 8, tsc), AUXTRACE_INFO,
 * MMAP, COMM, ITRACE_START and one AUXTRACE record of 16 PT bytes (a PSB).
 * kernel: 0 = user only. Returns the length.
 */
static size_t make_pt(uint8_t *buf, int kernel, int info)
{
	const uint64_t attr_size = 136 + 16;
	uint8_t *p;
	uint64_t doff = 104 + attr_size;

	memset(buf, 0, 4096);
	memcpy(buf, "PERFILE2", 8);
	put64(buf + 8, 104);
	put64(buf + 16, attr_size);
	put64(buf + 24, 104);
	put64(buf + 32, attr_size);
	put64(buf + 40, doff);
	put32(buf + 104, 8);
	put64(buf + 104 + 8, 0x400);
	put64(buf + 104 + 24, ST_ID);
	put64(buf + 104 + 40, (1ull << 18) | (kernel ? 0 : 1ull << 5));
	p = buf + doff;
	if (info) {
		rec(p, SNAP_PD_AUXTRACE_INFO, 0, 16 + 17 * 8);
		put32(p + 8, 1);
		put64(p + 16 + 8 * SNAP_PD_PT_PMU_TYPE, 8);
		put64(p + 16 + 8 * SNAP_PD_PT_TIME_SHIFT, 0);
		put64(p + 16 + 8 * SNAP_PD_PT_TIME_MULT, 1);
		put64(p + 16 + 8 * SNAP_PD_PT_TSC_BIT, 0x400);
		p += 16 + 17 * 8;
	}
	rec(p, SNAP_PD_MMAP, SNAP_PD_MISC_USER, 56 + 32);
	put32(p + 8, 42);
	put32(p + 12, 43);
	put64(p + 16, 0x400000);
	put64(p + 24, 0x1000);
	put64(p + 32, 0);
	memcpy(p + 40, "/nonexistent/x", 15);
	trailer(p + 56, 42, 43, 1000, 0);
	p += 56 + 32;
	rec(p, SNAP_PD_COMM, 0, 24 + 32);
	put32(p + 8, 42);
	put32(p + 12, 43);
	memcpy(p + 16, "worker", 7);
	trailer(p + 24, 42, 43, 1100, 0);
	p += 24 + 32;
	rec(p, SNAP_PD_ITRACE_START, 0, 16 + 32);
	put32(p + 8, 42);
	put32(p + 12, 43);
	trailer(p + 16, 42, 43, 1200, 3);
	p += 16 + 32;
	rec(p, SNAP_PD_AUXTRACE, 0, 48);
	put64(p + 8, 16);
	put32(p + 32, 0);
	put32(p + 36, 43);
	put32(p + 40, (uint32_t)-1);
	p += 48;
	for (int i = 0; i < 16; i += 2) {
		p[i] = 0x02;
		p[i + 1] = 0x82;
	}
	p += 16;
	put64(buf + 48, (uint64_t)(p - buf) - doff);
	return (size_t)(p - buf);
}

static void tsc_conversion_is_perfs(void)
{
	struct snap_pd_tc tc;

	memset(&tc, 0, sizeof(tc));
	tc.time_mult = 1;
	CHECK_U64_EQ(123456789, snap_pd_tsc_to_perf(&tc, 123456789));
	/* quot * mult + ((rem * mult) >> shift) + zero, as tools/perf/util/tsc.c */
	tc.time_shift = 31;
	tc.time_mult = 3;
	tc.time_zero = 1000;
	CHECK_U64_EQ(1000 + 5 * 3 + 1, snap_pd_tsc_to_perf(&tc, (5ull << 31) | (1ull << 30)));
	tc.time_shift = 64; /* nonsense: the TSC unchanged, no undefined shift */
	CHECK_U64_EQ(77, snap_pd_tsc_to_perf(&tc, 77));
}

static void reads_a_small_recording(void)
{
	static uint8_t buf[4096];
	struct snap_pd pd;
	char why[128];
	size_t len = make_pt(buf, 0, 1);

	CHECK_INT_EQ(0, snap_pd_parse(&pd, buf, len, why, sizeof(why)));
	CHECK_INT_EQ(8, (int)pd.pt_type);
	CHECK_U64_EQ(0x400, pd.pt_config);
	CHECK_INT_EQ(1, pd.exclude_kernel);
	CHECK_INT_EQ(1, (int)pd.naux);
	CHECK_U64_EQ(16, pd.aux[0].size);
	CHECK_INT_EQ(43, pd.aux[0].tid);
	CHECK_INT_EQ(-1, pd.aux[0].cpu);
	CHECK_INT_EQ(3, (int)pd.aux[0].nrec);
	CHECK_INT_EQ(3, (int)pd.nrecs);
	CHECK_INT_EQ(SNAP_PD_MMAP, (int)pd.recs[0].type);
	CHECK_U64_EQ(1000, pd.recs[0].time);
	CHECK_INT_EQ(42, pd.recs[0].pid);
	CHECK_U64_EQ(1200, pd.recs[2].time);
	CHECK_INT_EQ(3, pd.recs[2].cpu);
	snap_pd_fini(&pd);
}

static void rejects_what_it_cannot_read(void)
{
	static uint8_t buf[4096];
	struct snap_pd pd;
	char why[128];
	size_t len = make_pt(buf, 0, 1);

	CHECK_INT_EQ(-SNAP_EFORMAT, snap_pd_parse(&pd, "PERFFILE", 8, why, sizeof(why)));
	CHECK_INT_EQ(-SNAP_ETRUNC, snap_pd_parse(&pd, buf, 60, why, sizeof(why)));
	put64(buf + 8, 16);
	CHECK_INT_EQ(-SNAP_ENOTSUP, snap_pd_parse(&pd, buf, len, why, sizeof(why)));
	CHECK(strstr(why, "pipe") != NULL);
	len = make_pt(buf, 0, 0);
	CHECK_INT_EQ(-SNAP_ENOTSUP, snap_pd_parse(&pd, buf, len, why, sizeof(why)));
	CHECK(strstr(why, "AUXTRACE_INFO") != NULL);
	snap_pd_fini(&pd);
	/* A file cut inside the PT bytes keeps what is there. */
	len = make_pt(buf, 0, 1);
	CHECK_INT_EQ(0, snap_pd_parse(&pd, buf, len - 6, why, sizeof(why)));
	CHECK_U64_EQ(10, pd.aux[0].size);
	snap_pd_fini(&pd);
}

static void opens_kernel_traces(void)
{
	static uint8_t buf[4096];
	struct snap_strtab st;
	struct snap_ptdec *d = NULL;
	struct snap_ptdec_opts o;
	struct snap_ptdec_stats s;
	struct snap_event ev;
	char why[128] = "";
	size_t len = make_pt(buf, 1, 1);

	memset(&o, 0, sizeof(o));
	o.jobs = 1;
	o.no_host_kernel = 1;
	o.buildid_dir = "";
	snap_strtab_init(&st);
	/* A kernel trace opens (no kernel mmap here: nothing more is missing). */
	CHECK_INT_EQ(0, snap_ptdec_open_mem(&d, buf, len, &o, &st, why, sizeof(why)));
	CHECK_INT_EQ(0, snap_ptdec_next(d, &ev));
	snap_ptdec_stats(d, &s);
	CHECK_U64_EQ(1, s.missing_images);
	CHECK_STR_EQ("/nonexistent/x", s.first_missing);
	CHECK_U64_EQ(1, s.buffers);
	snap_ptdec_close(d);
	/* A virtual machine guest's mmap: perf decodes it. */
	len = make_pt(buf, 1, 1);
	put16(buf + 104 + 136 + 16 + 16 + 17 * 8 + 4, 5); /* the MMAP's misc: GUEST_USER */
	CHECK_INT_EQ(-SNAP_ENOTSUP, snap_ptdec_open_mem(&d, buf, len, &o, &st, why, sizeof(why)));
	CHECK(strstr(why, "guest") != NULL);
	snap_strtab_fini(&st);
}

/* HEADER_BUILD_ID (feature bit 2) after the data, before HEADER_AUXTRACE (bit 18). */
static void reads_the_build_id_table(void)
{
	static uint8_t buf[4096];
	struct snap_pd pd;
	const struct snap_pd_bid *b;
	char why[128], hex[41];
	size_t len = make_pt(buf, 1, 1), tab = len, sec = tab + 32;
	uint8_t *e = buf + sec;

	put64(buf + 72, (1ull << 2) | (1ull << 18));
	/* {type, misc, size}, pid, build_id[24] (size at byte 20), name */
	rec(e, 0, SNAP_PD_MISC_KERNEL | SNAP_PD_MISC_BUILD_ID_SIZE, 36 + 24);
	put32(e + 8, (uint32_t)-1);
	for (int i = 0; i < 20; i++)
		e[12 + i] = (uint8_t)(0xa0 + i);
	e[32] = 20;
	memcpy(e + 36, "[kernel.kallsyms]", 18);
	rec(e + 60, 0, SNAP_PD_MISC_USER, 36 + 8); /* old style: 20 bytes, no size */
	put32(e + 68, (uint32_t)-1);
	memset(e + 72, 0x11, 20);
	memcpy(e + 96, "[vdso]", 7);
	put64(buf + tab, sec);
	put64(buf + tab + 8, 60 + 44);
	put64(buf + tab + 16, sec + 104);
	put64(buf + tab + 24, 8);
	len = sec + 104 + 8;
	CHECK_INT_EQ(0, snap_pd_parse(&pd, buf, len, why, sizeof(why)));
	CHECK_INT_EQ(2, (int)pd.nbids);
	b = snap_pd_find_bid(&pd, "[kernel.kallsyms]", 17);
	CHECK(b != NULL);
	if (b) {
		CHECK_INT_EQ(20, b->len);
		CHECK_INT_EQ(SNAP_PD_MISC_KERNEL, b->misc);
		snap_pd_bid_hex(b->id, b->len, hex);
		CHECK_STR_EQ("a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3", hex);
	}
	b = snap_pd_find_bid(&pd, "[vdso]", 6);
	CHECK(b != NULL && b->len == 20 && b->id[19] == 0x11);
	CHECK(snap_pd_find_bid(&pd, "[vdso", 5) == NULL);
	snap_pd_fini(&pd);
	/* A table pointing past the end: the features are ignored, the file still reads. */
	put64(buf + tab, len + 100);
	CHECK_INT_EQ(0, snap_pd_parse(&pd, buf, len, why, sizeof(why)));
	CHECK_INT_EQ(0, (int)pd.nbids);
	snap_pd_fini(&pd);
}

/* kallsyms as perf reads it: T/W/D/B kept, module names cut at the tab, the
 * best symbol at one address, ends at the next symbol or at a page after. */
static void reads_kallsyms(void)
{
	static const char text[] = "ffffffff81000000 T _text\n"
				   "ffffffff81000000 t startup_64\n"
				   "ffffffff81000040 T __switch_to\n"
				   "ffffffff81000080 W weak_fn\n"
				   "ffffffff81000080 T strong_fn\n"
				   "ffffffff810000c0 U undefined\n"
				   "ffffffff810000d0 r rodata_sym\n"
				   "ffffffff81001000 b bss_sym\n"
				   "ffffffffc0000000 t mod_fn\t[mymod]\n"
				   "ffffffffc0000100 T mod_last\t[mymod]\n"
				   "garbage line\n"
				   "ffffffffc0000200 T $x\n";
	struct snap_elfsyms s;
	const struct snap_elfsym_ent *e;
	uint64_t a = 0;

	CHECK_INT_EQ(0, snap_elfsyms_load_kallsyms_mem(&s, text, sizeof(text) - 1));
	CHECK_INT_EQ(6, (int)s.nsyms);
	e = snap_elfsyms_find(&s, 0xffffffff81000010);
	CHECK(e && !strcmp(snap_elfsyms_name(&s, e), "_text")); /* global beats local */
	e = snap_elfsyms_find(&s, 0xffffffff810000c8);
	CHECK(e && !strcmp(snap_elfsyms_name(&s, e), "strong_fn")); /* U and r skipped */
	e = snap_elfsyms_find(&s, 0xffffffffc0000010);
	CHECK(e && !strcmp(snap_elfsyms_name(&s, e), "mod_fn"));
	/* the last kernel symbol before a module one ends a page on, not at the module */
	e = snap_elfsyms_find(&s, 0xffffffff81001000);
	CHECK(e && e->end == 0xffffffff81002000);
	CHECK(snap_elfsyms_find(&s, 0xffffffff81002000) == NULL);
	e = snap_elfsyms_find(&s, 0xffffffffc0000100);
	CHECK(e && e->end == 0xffffffffc0002000); /* roundup + a page */
	CHECK_INT_EQ(0, snap_elfsyms_lookup(&s, "__switch_to", &a));
	CHECK_U64_EQ(0xffffffff81000040, a);
	CHECK_INT_EQ(-ENOENT, snap_elfsyms_lookup(&s, "startup_64", &a));
	snap_elfsyms_fini(&s);
}

static void symbols_of_this_binary(void)
{
	struct snap_elfsyms s;
	const struct snap_elfsym_ent *e = NULL, *f;
	uint64_t va;

	CHECK_INT_EQ(0, snap_elfsyms_load(&s, "/proc/self/exe", NULL));
	CHECK(s.ok);
	CHECK(s.nsyms > 10);
	for (size_t i = 0; i < s.nsyms; i++)
		if (!strcmp(snap_elfsyms_name(&s, &s.syms[i]), "main"))
			e = &s.syms[i];
	CHECK(e != NULL);
	if (e) {
		CHECK(e->end > e->start);
		f = snap_elfsyms_find(&s, e->start);
		CHECK(f == e);
		f = snap_elfsyms_find(&s, e->end - 1);
		CHECK(f == e);
		/* sorted, no two at one address */
		for (size_t i = 1; i < s.nsyms; i++)
			CHECK(s.syms[i - 1].start < s.syms[i].start);
	}
	CHECK(s.nload > 0);
	CHECK_INT_EQ(0, snap_elfsyms_off2vaddr(&s, s.load[0].off, &va));
	CHECK_U64_EQ(s.load[0].vaddr, va);
	snap_elfsyms_fini(&s);
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_elfsyms_load_mem(&s, (const uint8_t *)"\177ELF", 4, NULL));
}

int main(void)
{
	RUN(tsc_conversion_is_perfs);
	RUN(reads_a_small_recording);
	RUN(rejects_what_it_cannot_read);
	RUN(opens_kernel_traces);
	RUN(reads_the_build_id_table);
	RUN(reads_kallsyms);
	RUN(symbols_of_this_binary);
	return snap_test_done();
}
