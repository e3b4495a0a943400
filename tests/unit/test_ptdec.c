// SPDX-License-Identifier: GPL-2.0
/* The in-process PT decoder's pure parts: TSC conversion, perf's PT clock
 * (TSC, TMA, MTC, CYC, CBR), the perf.data reader on hand-made files, the support
 * checks, and ELF symbols of this test's own binary. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pt_encode.h"
#include "ptdec/elfsyms.h"
#include "ptdec/pdata.h"
#include "ptdec/ptdec.h"
#include "ptdec/timing.h"
#include "snap_test.h"
#include "util/err.h"
#include "util/proc.h"
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

/* $SNAPTRACE_PTDEC_CAP (the segment size, docs/ptdec.md "Memory") of any
 * value opens and decodes: a huge one once made the window's size in pieces a
 * division by zero. */
static void any_segment_cap_decodes(void)
{
	static const char *const caps[] = {"1152921504606846976", "18446744073709551615", "0",
					   "junk", "1"};
	static uint8_t buf[4096];
	struct snap_strtab st;
	struct snap_ptdec_opts o;
	char why[128] = "";
	size_t len = make_pt(buf, 0, 1);

	memset(&o, 0, sizeof(o));
	o.no_host_kernel = 1;
	o.buildid_dir = "";
	snap_strtab_init(&st);
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		for (int j = 1; j <= 2; j++) {
			struct snap_ptdec *d = NULL;
			struct snap_event ev;

			o.jobs = j;
			setenv("SNAPTRACE_PTDEC_CAP", caps[i], 1);
			CHECK_INT_EQ(0,
				     snap_ptdec_open_mem(&d, buf, len, &o, &st, why, sizeof(why)));
			if (d) {
				CHECK_INT_EQ(0, snap_ptdec_next(d, &ev));
				snap_ptdec_close(d);
			}
		}
	unsetenv("SNAPTRACE_PTDEC_CAP");
	snap_strtab_fini(&st);
}

/*
 * A perf.data of one AUXTRACE record: a PSB+ (MODE.exec 64-bit, TSC, FUP at
 * 0x400000), then ntnt long TNTs of 47 taken branches each, then one not
 * taken; the code at 0x400000 (the file at path, mapped there) is jne to
 * itself: every bit is a branch event. Returns the length.
 */
static size_t make_loop(uint8_t *buf, size_t size, const char *path, size_t ntnt)
{
	const uint64_t attr_size = 136 + 16;
	size_t plen = (strlen(path) + 8) & ~(size_t)7, npk = 0, npt;
	struct pt_packet pk[64];
	uint8_t *p;
	uint64_t doff = 104 + attr_size;

	memset(buf, 0, size);
	memcpy(buf, "PERFILE2", 8);
	put64(buf + 8, 104);
	put64(buf + 16, attr_size);
	put64(buf + 24, 104);
	put64(buf + 32, attr_size);
	put64(buf + 40, doff);
	put32(buf + 104, 8);
	put64(buf + 104 + 8, 0x400);
	put64(buf + 104 + 24, ST_ID);
	put64(buf + 104 + 40, (1ull << 18) | (1ull << 5));
	p = buf + doff;
	rec(p, SNAP_PD_AUXTRACE_INFO, 0, 16 + 17 * 8);
	put32(p + 8, 1);
	put64(p + 16 + 8 * SNAP_PD_PT_PMU_TYPE, 8);
	put64(p + 16 + 8 * SNAP_PD_PT_TIME_MULT, 1);
	put64(p + 16 + 8 * SNAP_PD_PT_TSC_BIT, 0x400);
	p += 16 + 17 * 8;
	rec(p, SNAP_PD_MMAP, SNAP_PD_MISC_USER, (uint16_t)(40 + plen + 32));
	put32(p + 8, 42);
	put32(p + 12, 43);
	put64(p + 16, 0x400000);
	put64(p + 24, 0x1000);
	memcpy(p + 40, path, strlen(path) + 1);
	trailer(p + 40 + plen, 42, 43, 1000, 0);
	p += 40 + plen + 32;
	rec(p, SNAP_PD_ITRACE_START, 0, 16 + 32);
	put32(p + 8, 42);
	put32(p + 12, 43);
	trailer(p + 16, 42, 43, 1200, 0);
	p += 16 + 32;
	memset(pk, 0, sizeof(pk));
	pk[npk++].type = ppt_psb;
	pk[npk].type = ppt_mode;
	pk[npk].payload.mode.leaf = pt_mol_exec;
	pk[npk++].payload.mode.bits.exec.csl = 1;
	pk[npk].type = ppt_tsc;
	pk[npk++].payload.tsc.tsc = 2000;
	pk[npk].type = ppt_fup;
	pk[npk].payload.ip.ipc = pt_ipc_full;
	pk[npk++].payload.ip.ip = 0x400000;
	pk[npk++].type = ppt_psbend;
	for (size_t i = 0; i < ntnt && npk < 62; i++) {
		pk[npk].type = ppt_tnt_64;
		pk[npk].payload.tnt.bit_size = 47;
		pk[npk++].payload.tnt.payload = (1ull << 47) - 1;
	}
	pk[npk].type = ppt_tnt_8;
	pk[npk].payload.tnt.bit_size = 1;
	pk[npk++].payload.tnt.payload = 0;
	npt = pt_encode(p + 48, size - (size_t)(p + 48 - buf), pk, npk);
	rec(p, SNAP_PD_AUXTRACE, 0, 48);
	put64(p + 8, npt);
	put32(p + 36, 43);
	put32(p + 40, (uint32_t)-1);
	p += 48 + npt;
	put64(buf + 48, (uint64_t)(p - buf) - doff);
	return (size_t)(p - buf);
}

/*
 * A piece the reader is to decode itself (-j 1) but that reaches READER_CAPS
 * segments goes to a helper thread; when it is long in bytes (READER_EV_BYTES
 * an event: here with a cap of 7) before the reader starts it, so its events
 * are decoded once (the reader once decoded 14 of them, gave the piece up and
 * the helper decoded them again: docs/ptdec.md, "Memory"); when it is short
 * in bytes for its events (a cap of 50: 2 x 50 x 2 bytes, 141 events in 61)
 * once the reader reached the cap (stats: redone). The events are the same
 * with every cap.
 */
static void long_piece_decoded_once(void)
{
	static const struct {
		const char *cap;
		uint64_t redone;
	} cases[] = {{NULL, 0}, {"7", 0}, {"50", 1}, {"1000", 0}};
	static uint8_t buf[4096], code[4096];
	char path[] = "/tmp/snaptrace-test-loop.XXXXXX", why[128] = "";
	int fd = mkstemp(path);
	uint64_t first[200];
	size_t len, nfirst = 0;
	struct snap_ptdec_opts o;
	struct snap_strtab st;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	for (size_t i = 0; i < sizeof(code); i += 2) {
		code[i] = 0x75; /* jne . */
		code[i + 1] = 0xfe;
	}
	CHECK(write(fd, code, sizeof(code)) == (ssize_t)sizeof(code));
	close(fd);
	len = make_loop(buf, sizeof(buf), path, 3);
	memset(&o, 0, sizeof(o));
	o.jobs = 1;
	o.no_host_kernel = 1;
	o.buildid_dir = "";
	snap_strtab_init(&st);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct snap_ptdec *d = NULL;
		struct snap_ptdec_stats s;
		struct snap_event ev;
		size_t n = 0;

		if (cases[i].cap)
			setenv("SNAPTRACE_PTDEC_CAP", cases[i].cap, 1);
		else
			unsetenv("SNAPTRACE_PTDEC_CAP");
		CHECK_INT_EQ(0, snap_ptdec_open_mem(&d, buf, len, &o, &st, why, sizeof(why)));
		if (!d)
			continue;
		while (snap_ptdec_next(d, &ev) == 1) {
			uint64_t key = ev.src.ip ^ (ev.dst.ip << 24) ^ ((uint64_t)ev.kind << 56);

			if (!i && nfirst < 200)
				first[nfirst++] = key;
			else if (i)
				CHECK(n < nfirst && first[n] == key);
			n++;
		}
		snap_ptdec_stats(d, &s);
		if (i)
			CHECK_INT_EQ((int)nfirst, (int)n);
		CHECK_U64_EQ(cases[i].redone, s.redone);
		CHECK_U64_EQ(0, s.errors);
		snap_ptdec_close(d);
	}
	CHECK(nfirst > 140); /* "tr strt", the 141 taken branches */
	unsetenv("SNAPTRACE_PTDEC_CAP");
	snap_strtab_fini(&st);
	unlink(path);
}

/* The threads of this process now (/proc/self/task), or -1. */
static int threads_now(void)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!dir)
		return -1;
	while ((e = readdir(dir)) != NULL)
		n += e->d_name[0] != '.';
	closedir(dir);
	return n;
}

/* The pool's layout (docs/ptdec.md, "The reader and one worker"): on at most 2
 * CPUs, or with $SNAPTRACE_PTDEC_AHEAD=1, one worker whatever -j is above 1, the
 * reader decoding what it does not keep up with; otherwise a worker a job up to
 * the window's 8; with one job none. The decode threads the -v line counts are
 * -j's all the same. (The events of each layout: the ptsynth suite's piece1 and
 * stream8 decodes against perf's.) */
static void one_worker_on_two_cpus(void)
{
	static const struct {
		const char *ahead;
		int jobs, workers;
	} cases[] = {{"1", 2, 1}, {"1", 8, 1}, {"0", 2, 2}, {"0", 8, 8}, {"1", 1, 0}, {"", 2, -1}};
	static uint8_t buf[4096];
	struct snap_strtab st;
	struct snap_ptdec_opts o;
	char why[128] = "";
	size_t len = make_pt(buf, 0, 1);

	memset(&o, 0, sizeof(o));
	o.no_host_kernel = 1;
	o.buildid_dir = "";
	snap_strtab_init(&st);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct snap_ptdec *d = NULL;
		struct snap_ptdec_stats s;
		struct snap_event ev;
		int before = threads_now(), want = cases[i].workers;

		if (want < 0) /* the default: by the CPUs this process may use */
			want = snap_cpus_allowed() <= 2 ? 1 : 2;
		o.jobs = cases[i].jobs;
		setenv("SNAPTRACE_PTDEC_AHEAD", cases[i].ahead, 1);
		CHECK_INT_EQ(0, snap_ptdec_open_mem(&d, buf, len, &o, &st, why, sizeof(why)));
		if (!d)
			continue;
		CHECK_INT_EQ(before + want, threads_now());
		snap_ptdec_stats(d, &s);
		CHECK_INT_EQ(cases[i].jobs, s.jobs);
		CHECK_INT_EQ(0, snap_ptdec_next(d, &ev));
		snap_ptdec_close(d);
		CHECK_INT_EQ(before, threads_now());
	}
	unsetenv("SNAPTRACE_PTDEC_AHEAD");
	snap_strtab_fini(&st);
}

/* The mappings of file path in this process (/proc/self/smaps): how many, and
 * their resident KB. */
static void file_maps(const char *path, int *n, long *rss_kb)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[4352];
	int in = 0;

	*n = 0;
	*rss_kb = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		size_t l = strlen(line), pl = strlen(path);
		char *sp = strchr(line, ' ');

		if (sp && sp > line && strchr(line, '-') && strchr(line, '-') < sp) {
			in = l > pl && !strncmp(line + l - pl - 1, path, pl);
			*n += in;
		} else if (in && !strncmp(line, "Rss:", 4)) {
			*rss_kb += strtol(line + 4, NULL, 10);
		}
	}
	fclose(f);
}

/*
 * A long recording (8 AUXTRACE records of 1 MiB: a PSB+ every 4 KiB, pads
 * between) read from a file: it is cut into pieces of about 16 KiB, its
 * mapping into areas of at most 128 KiB (so that a read fault maps no large
 * folio of the page cache whole), and what the open and the decode read leaves
 * memory again: the file's pages stay out of the process's RSS
 * (docs/ptdec.md, "Memory").
 */
static void long_recording_stays_out_of_memory(void)
{
	static uint8_t head[4096], pt[1 << 20];
	char path[] = "/tmp/snaptrace-test-ptdec.XXXXXX", why[128] = "";
	int fd = mkstemp(path), nmaps = 0;
	size_t len = make_pt(head, 0, 1), total = len;
	struct snap_ptdec_opts o;
	struct snap_ptdec_stats stats;
	struct snap_strtab st;
	struct snap_ptdec *d = NULL;
	struct snap_event ev;
	long rss = 0;
	FILE *f;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	memset(pt, 0, sizeof(pt));
	for (size_t at = 0; at < sizeof(pt); at += 4096) {
		memcpy(pt + at, "\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82",
		       16);
		pt[at + 16] = 0x02; /* PSBEND */
		pt[at + 17] = 0x23;
	}
	total += 8 * (48 + sizeof(pt));
	put64(head + 48, (uint64_t)total - (104 + 136 + 16)); /* the data section's size */
	CHECK(fwrite(head, 1, len, f) == len);
	for (int i = 0; i < 8; i++) {
		uint8_t r[48];

		memset(r, 0, sizeof(r));
		rec(r, SNAP_PD_AUXTRACE, 0, 48);
		put64(r + 8, sizeof(pt));
		put32(r + 32, 0);
		put32(r + 36, 43);
		put32(r + 40, (uint32_t)-1);
		CHECK(fwrite(r, 1, sizeof(r), f) == sizeof(r));
		CHECK(fwrite(pt, 1, sizeof(pt), f) == sizeof(pt));
	}
	CHECK_INT_EQ(0, fclose(f));
	memset(&o, 0, sizeof(o));
	o.no_host_kernel = 1;
	o.buildid_dir = "";
	o.jobs = 2;
	snap_strtab_init(&st);
	CHECK_INT_EQ(0, snap_ptdec_open(&d, path, &o, &st, why, sizeof(why)));
	if (d) {
		void *probe = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		file_maps(path, &nmaps, &rss);
		/* cut into areas (where the kernel has MADV_NOHUGEPAGE: THP) */
		if (probe != MAP_FAILED && madvise(probe, 4096, MADV_NOHUGEPAGE) == 0)
			CHECK(nmaps >= (int)(total / (256 << 10)));
		if (probe != MAP_FAILED)
			munmap(probe, 4096);
		CHECK(rss <= 512);
		while (snap_ptdec_next(d, &ev) > 0)
			;
		snap_ptdec_stats(d, &stats);
		/* at the first PSB from 16 KiB on: 64 a record, and make_pt's one */
		CHECK_U64_EQ(8 * 64 + 1, stats.pieces);
		file_maps(path, &nmaps, &rss);
		CHECK(rss <= 512);
		snap_ptdec_close(d);
	}
	snap_strtab_fini(&st);
	unlink(path);
}

/* The cut finds every PSB, also one that straddles the end of a page (or of the
 * 2 MiB span the cut drops behind it, split.c: walk_at; the mapping starts on a
 * page, so the spans end on pages): the pieces are those of one search over the
 * whole buffer, cut at every PSB. */
static void psb_across_a_span_is_found(void)
{
	static uint8_t head[4096], pt[8 << 20];
	char path[] = "/tmp/snaptrace-test-ptdec.XXXXXX", why[128] = "";
	int fd = mkstemp(path);
	size_t len = make_pt(head, 0, 1), want = 0;
	uint64_t at0 = len + 48; /* pt's offset in the file */
	struct snap_ptdec_opts o;
	struct snap_ptdec_stats stats;
	struct snap_strtab st;
	struct snap_ptdec *d = NULL;
	struct snap_event ev;
	FILE *f;
	uint8_t r[48];

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	memset(pt, 0, sizeof(pt));
	for (size_t at = 4096 - 8 - at0 % 4096; at + 18 <= sizeof(pt); at += 4096) {
		memcpy(pt + at, "\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82",
		       16);
		pt[at + 16] = 0x02; /* PSBEND */
		pt[at + 17] = 0x23;
	}
	/* the pieces of one search: a cut at the first PSB after a piece's start */
	for (const uint8_t *cur = pt, *e = pt + sizeof(pt), *next;; cur = next) {
		want++;
		next = e - cur > 1 ? memmem(cur + 1, (size_t)(e - cur - 1),
					    "\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82"
					    "\x02\x82\x02\x82",
					    16)
				   : NULL;
		if (!next)
			break;
	}
	put64(head + 48, (uint64_t)(len + 48 + sizeof(pt)) - (104 + 136 + 16));
	CHECK(fwrite(head, 1, len, f) == len);
	memset(r, 0, sizeof(r));
	rec(r, SNAP_PD_AUXTRACE, 0, 48);
	put64(r + 8, sizeof(pt));
	put32(r + 36, 43);
	put32(r + 40, (uint32_t)-1);
	CHECK(fwrite(r, 1, sizeof(r), f) == sizeof(r));
	CHECK(fwrite(pt, 1, sizeof(pt), f) == sizeof(pt));
	CHECK_INT_EQ(0, fclose(f));
	memset(&o, 0, sizeof(o));
	o.no_host_kernel = 1;
	o.buildid_dir = "";
	o.jobs = 1;
	o.piece_bytes = 1; /* every PSB cuts: every page's end is searched across */
	snap_strtab_init(&st);
	CHECK_INT_EQ(0, snap_ptdec_open(&d, path, &o, &st, why, sizeof(why)));
	if (d) {
		while (snap_ptdec_next(d, &ev) > 0)
			;
		snap_ptdec_stats(d, &stats);
		CHECK(want > 2000);
		CHECK_U64_EQ(want + 1, stats.pieces); /* and make_pt's one */
		snap_ptdec_close(d);
	}
	snap_strtab_fini(&st);
	unlink(path);
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
	const struct snap_elfsyms_ent *e;
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
	const struct snap_elfsyms_ent *e = NULL, *f;
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

/* ---- perf's clock (ptdec/timing.c); every expected value is worked out by hand ---- */

static void clock_tsc(void)
{
	struct ptt_params p;
	struct ptt t;

	ptt_params_init(&p, 0, 0, 0, 0, 20);
	/* no history: the TSC as it is */
	ptt_init_fresh(&t);
	ptt_tsc(&t, &p, 1000000);
	CHECK_U64_EQ(1000000, t.timestamp);
	CHECK_INT_EQ(1, t.reset);
	/* back by less than the slip: the time stays, the TSC is remembered */
	ptt_tsc(&t, &p, 999000);
	CHECK_U64_EQ(1000000, t.timestamp);
	CHECK_U64_EQ(999000, t.tsc_timestamp);
	/* back by more, with a buffer reference: a bad TSC, the time stays */
	t.buf_timestamp = 5000000;
	ptt_tsc(&t, &p, 800000);
	CHECK_U64_EQ(1000000, t.timestamp);
	/* without a reference: taken as the 56-bit TSC wrapping */
	t.buf_timestamp = 0;
	ptt_tsc(&t, &p, 800000);
	CHECK_U64_EQ((1ULL << 56) + 800000, t.timestamp);
	/* a new buffer: the first TSC takes the reference's top byte */
	ptt_reposition(&t, (3ULL << 56) | 5);
	CHECK_U64_EQ(0, t.timestamp);
	ptt_tsc(&t, &p, 42);
	CHECK_U64_EQ((3ULL << 56) | 42, t.timestamp);
	/* ... and the nearer epoch when the reference is just across a wrap */
	ptt_reposition(&t, (3ULL << 56) | 5);
	ptt_tsc(&t, &p, (1ULL << 56) - 2);
	CHECK_U64_EQ((3ULL << 56) - 2, t.timestamp);
	/* with timestamp 0 and no reference perf ignores a TSC */
	memset(&t, 0, sizeof(t));
	ptt_tsc(&t, &p, 77);
	CHECK_U64_EQ(0, t.timestamp);
}

static void clock_mtc(void)
{
	struct ptt_params p;
	struct ptt t;

	/* 4000 TSC ticks per CTC tick, an MTC at every tick (period 0) */
	ptt_params_init(&p, 0, 0xfULL << 14, 4000, 1, 20);
	CHECK_INT_EQ(4000, (int)p.mult);
	ptt_init_fresh(&t);
	ptt_mtc(&t, &p, 1, NULL, 0); /* no TMA yet: nothing */
	CHECK_U64_EQ(0, t.timestamp);
	ptt_tsc(&t, &p, 1000000);
	ptt_tma(&t, &p, 250, 0); /* CTC 250 at TSC 1000000 */
	CHECK_INT_EQ(250, (int)t.last_mtc);
	CHECK_U64_EQ(1000000, t.ctc_timestamp);
	ptt_mtc(&t, &p, 251, NULL, 0);
	CHECK_U64_EQ(1004000, t.timestamp);
	/* the 8-bit MTC wraps: 251 -> 2 is 7 ticks */
	ptt_mtc(&t, &p, 2, NULL, 0);
	CHECK_U64_EQ(1000000 + 8 * 4000, t.timestamp);
	/* the same value again is a whole turn */
	ptt_mtc(&t, &p, 2, NULL, 0);
	CHECK_U64_EQ(1000000 + (8 + 256) * 4000, t.timestamp);
	/* an MTC before the current time is not taken */
	t.timestamp = 5000000;
	ptt_mtc(&t, &p, 3, NULL, 0);
	CHECK_U64_EQ(5000000, t.timestamp);
	CHECK_U64_EQ(1000000 + (8 + 256 + 1) * 4000, t.ctc_timestamp + t.ctc_delta * 4000);
}

static void clock_ctc_ratio(void)
{
	struct ptt_params p;
	struct ptt t;

	/* 1000/3 TSC ticks per CTC tick: perf's multdiv, no rounding up */
	ptt_params_init(&p, 0, 0xfULL << 14, 1000, 3, 20);
	CHECK_INT_EQ(0, (int)p.mult);
	ptt_init_fresh(&t);
	ptt_tsc(&t, &p, 900000);
	ptt_tma(&t, &p, 2700, 0);
	ptt_mtc(&t, &p, (2700 + 7) & 0xff, NULL, 0);
	CHECK_U64_EQ(900000 + 2333, t.timestamp); /* 7 * 1000 / 3 = 2333.3 */
	/* MTC period 3 (config bits 14-17 = 3): 8 CTC ticks an MTC, 100 TSC ticks a tick */
	ptt_params_init(&p, 3ULL << 14, 0xfULL << 14, 100, 1, 20);
	CHECK_INT_EQ(3, p.mtc_shift);
	ptt_init_fresh(&t);
	ptt_tsc(&t, &p, 10000000);
	ptt_tma(&t, &p, 0x1234, 5); /* 4 CTC ticks and 5 TSC ticks past the MTC 0x46 */
	CHECK_INT_EQ(0x46, (int)t.last_mtc);
	CHECK_U64_EQ(10000000 - 5 - 400, t.ctc_timestamp);
	ptt_mtc(&t, &p, 0x47, NULL, 0);
	CHECK_U64_EQ(10000000 - 405 + 800, t.timestamp);
}

static void clock_mtc_period_over_8(void)
{
	struct ptt_params p;
	struct ptt t;

	/* period 10: the TMA's 16 CTC bits give only 6 bits of an MTC */
	ptt_params_init(&p, 10ULL << 14, 0xfULL << 14, 1, 1, 20);
	ptt_init_fresh(&t);
	ptt_tsc(&t, &p, 1ULL << 30);
	ptt_tma(&t, &p, 0x1400, 0); /* MTC 5 of 64 */
	CHECK_INT_EQ(5, (int)t.last_mtc);
	/* MTC 0xc6: the missing bits come from it, 0xc5 -> 0xc6 is one MTC */
	ptt_mtc(&t, &p, 0xc6, NULL, 0);
	CHECK_U64_EQ((1ULL << 30) + 1024, t.timestamp);
	ptt_init_fresh(&t);
	ptt_tsc(&t, &p, 1ULL << 30);
	ptt_tma(&t, &p, 0x1400, 0);
	/* MTC 0xc5 is not after 0xc5: the TMA was one 64-MTC turn earlier */
	ptt_mtc(&t, &p, 0xc5, NULL, 0);
	CHECK_U64_EQ((1ULL << 30) + 64 * 1024, t.timestamp);
}

static void clock_cyc_with_cbr(void)
{
	struct ptt_params p;
	struct ptt t;

	ptt_params_init(&p, 0, 0, 0, 0, 20);
	ptt_init_fresh(&t);
	ptt_cyc(&t, 500); /* no reference time yet */
	CHECK_U64_EQ(0, t.timestamp);
	ptt_tsc(&t, &p, 1000000);
	ptt_cyc(&t, 500); /* no CBR yet: no estimate */
	CHECK_U64_EQ(1000000, t.timestamp);
	/* CBR 25 of 20: 0.8 TSC ticks a cycle, counted from the CBR */
	ptt_cbr(&t, &p, 25);
	CHECK_U64_EQ(1000000, t.cyc_ref_timestamp);
	t.reset = 0;
	ptt_cyc(&t, 1000);
	CHECK_U64_EQ(1000800, t.timestamp);
	CHECK_INT_EQ(1, t.reset);
	ptt_cyc(&t, 3); /* 1003 * 0.8 = 802.4: truncated */
	CHECK_U64_EQ(1000802, t.timestamp);
	/* the same ratio again changes nothing */
	ptt_cbr(&t, &p, 25);
	CHECK_U64_EQ(1000000, t.cyc_ref_timestamp);
	/* a TSC right after a CYC restarts the count there */
	t.last_cyc = 1;
	ptt_tsc(&t, &p, 2000000);
	CHECK_U64_EQ(2000000, t.cyc_ref_timestamp);
	CHECK_U64_EQ(0, t.cycle_cnt);
	/* an estimate behind the time is not taken */
	t.timestamp = 3000000;
	ptt_cyc(&t, 10);
	CHECK_U64_EQ(3000000, t.timestamp);
}

/* Encodes n packets into buf and feeds the first nfeed to a clock as the decoder
 * does (offsets relative to buf; perf looks ahead up to the end of the n). */
static void feed(struct ptt_clock *c, const struct pt_packet *pk, size_t n, size_t nfeed,
		 uint8_t *buf, size_t cap)
{
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	uint64_t len = 0, off;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + cap;
	enc = pt_alloc_encoder(&cfg);
	CHECK(enc != NULL);
	if (!enc)
		return;
	for (size_t i = 0; i < n; i++)
		CHECK(pt_enc_next(enc, &pk[i]) >= 0);
	pt_enc_get_offset(enc, &len);
	pt_free_encoder(enc);
	c->base = buf;
	c->bend = buf + len;
	cfg.end = buf + len;
	dec = pt_pkt_alloc_decoder(&cfg);
	CHECK(dec != NULL);
	if (!dec)
		return;
	pt_pkt_sync_set(dec, 0);
	for (size_t i = 0; i < nfeed && pt_pkt_next(dec, &pkt, sizeof(pkt)) >= 0 &&
			   pt_pkt_get_offset(dec, &off) >= 0;
	     i++)
		ptt_packet(c, &pkt, off);
	pt_pkt_free_decoder(dec);
}

static void clock_cyc_measured_between_mtcs(void)
{
	struct ptt_params p;
	struct ptt_clock c;
	uint8_t buf[256];
	struct pt_packet pk[8];

	/* 100 TSC ticks a CTC tick, MTC every tick, CBR 20 of 20: 1 tick a cycle */
	ptt_params_init(&p, 0, 0xfULL << 14, 100, 1, 20);
	memset(pk, 0, sizeof(pk));
	pk[0].type = ppt_tsc;
	pk[0].payload.tsc.tsc = 1000000;
	pk[1].type = ppt_tma;
	pk[1].payload.tma.ctc = 10000; /* MTC 0x10 */
	pk[2].type = ppt_cbr;
	pk[2].payload.cbr.ratio = 20;
	pk[3].type = ppt_cyc;
	pk[3].payload.cyc.value = 50;
	pk[4].type = ppt_mtc; /* after a CYC: perf looks ahead to the next MTC */
	pk[4].payload.mtc.ctc = 0x11;
	pk[5].type = ppt_cyc;
	pk[5].payload.cyc.value = 80;
	pk[6].type = ppt_mtc;
	pk[6].payload.mtc.ctc = 0x12;
	/* 100 ticks in 80 cycles: 1.25 ticks a cycle, not more than 1.25 times the CBR's */
	memset(&c, 0, sizeof(c));
	ptt_init_fresh(&c.st);
	c.p = &p;
	feed(&c, pk, 7, 6, buf, sizeof(buf)); /* up to the CYC 80 */
	CHECK_INT_EQ(1, c.st.have_calc);
	CHECK_U64_EQ(1000100, c.st.cyc_ref_timestamp);
	CHECK_U64_EQ(1000200, c.st.timestamp); /* 1000100 + 80 * 1.25 */
	ptt_clock_fini(&c);
	/* 100 ticks in 70 cycles is too slow for CBR 20: the CBR's 1 tick a cycle */
	pk[5].payload.cyc.value = 70;
	memset(&c, 0, sizeof(c));
	ptt_init_fresh(&c.st);
	c.p = &p;
	feed(&c, pk, 7, 6, buf, sizeof(buf));
	CHECK_INT_EQ(0, c.st.have_calc);
	CHECK_U64_EQ(1000170, c.st.timestamp);
	ptt_clock_fini(&c);
	/* the lookahead ends with the buffer: no measurement */
	memset(&c, 0, sizeof(c));
	ptt_init_fresh(&c.st);
	c.p = &p;
	feed(&c, pk, 6, 6, buf, sizeof(buf));
	CHECK_INT_EQ(0, c.st.have_calc);
	ptt_clock_fini(&c);
}

/* The scan's packet reader agrees with libipt on every packet libipt writes. */
static void walker_agrees_with_libipt(void)
{
	uint8_t buf[1024];
	struct pt_packet pk[40], got, want;
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_packet_decoder *dec;
	uint64_t len = 0, off = 0, prev = 0;
	size_t n = 0;
	static const enum pt_ip_compression ipcs[] = {pt_ipc_suppressed, pt_ipc_update_16,
						      pt_ipc_update_32,	 pt_ipc_update_48,
						      pt_ipc_sext_48,	 pt_ipc_full};

	memset(pk, 0, sizeof(pk));
	pk[n++].type = ppt_psb;
	pk[n].type = ppt_tsc;
	pk[n++].payload.tsc.tsc = 0x00123456789abcdeULL;
	pk[n].type = ppt_cbr;
	pk[n++].payload.cbr.ratio = 0x2c;
	pk[n].type = ppt_tma;
	pk[n].payload.tma.ctc = 0xbeef;
	pk[n++].payload.tma.fc = 0x1a5;
	pk[n].type = ppt_mode;
	pk[n].payload.mode.leaf = pt_mol_exec;
	pk[n++].payload.mode.bits.exec.csl = 1;
	pk[n++].type = ppt_psbend;
	pk[n++].type = ppt_pad;
	for (size_t i = 0; i < sizeof(ipcs) / sizeof(ipcs[0]); i++) {
		pk[n].type = i & 1 ? ppt_tip : ppt_fup;
		pk[n].payload.ip.ipc = ipcs[i];
		pk[n++].payload.ip.ip = 0x7ffff7fe4b70ULL;
	}
	pk[n].type = ppt_tip_pge;
	pk[n].payload.ip.ipc = pt_ipc_sext_48;
	pk[n++].payload.ip.ip = 0x401000;
	pk[n].type = ppt_tip_pgd;
	pk[n++].payload.ip.ipc = pt_ipc_suppressed;
	pk[n].type = ppt_tnt_8;
	pk[n].payload.tnt.bit_size = 5;
	pk[n++].payload.tnt.payload = 0x15;
	pk[n].type = ppt_tnt_64;
	pk[n].payload.tnt.bit_size = 40;
	pk[n++].payload.tnt.payload = 0xabcdef1234ULL;
	pk[n].type = ppt_mtc;
	pk[n++].payload.mtc.ctc = 0xfe;
	pk[n].type = ppt_cyc;
	pk[n++].payload.cyc.value = 0x13; /* one byte */
	pk[n].type = ppt_cyc;
	pk[n++].payload.cyc.value = 0x4e5; /* two */
	pk[n].type = ppt_cyc;
	pk[n++].payload.cyc.value = 0x123456789ULL; /* several */
	pk[n++].type = ppt_ovf;
	pk[n++].type = ppt_stop;
	pk[n].type = ppt_pip;
	pk[n++].payload.pip.cr3 = 0x12345000;
	pk[n].type = ppt_vmcs;
	pk[n++].payload.vmcs.base = 0x1234567000ULL;
	pk[n].type = ppt_mnt;
	pk[n++].payload.mnt.payload = 0x1122334455667788ULL;
	pk[n].type = ppt_ptw;
	pk[n].payload.ptw.plc = 0;
	pk[n++].payload.ptw.payload = 0x55;
	pk[n].type = ppt_ptw;
	pk[n].payload.ptw.plc = 1;
	pk[n].payload.ptw.ip = 1;
	pk[n++].payload.ptw.payload = 0x5566778899ULL;
	pk[n++].type = ppt_exstop;
	pk[n].type = ppt_mwait;
	pk[n].payload.mwait.hints = 3;
	pk[n++].payload.mwait.ext = 1;
	pk[n].type = ppt_pwre;
	pk[n++].payload.pwre.state = 2;
	pk[n].type = ppt_pwrx;
	pk[n++].payload.pwrx.last = 1;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + sizeof(buf);
	enc = pt_alloc_encoder(&cfg);
	CHECK(enc != NULL);
	if (!enc)
		return;
	for (size_t i = 0; i < n; i++)
		CHECK(pt_enc_next(enc, &pk[i]) >= 0);
	pt_enc_get_offset(enc, &len);
	pt_free_encoder(enc);
	cfg.end = buf + len;
	dec = pt_pkt_alloc_decoder(&cfg);
	CHECK(dec != NULL);
	if (!dec)
		return;
	pt_pkt_sync_set(dec, 0);
	for (size_t i = 0; i < n; i++) {
		int w;

		CHECK(pt_pkt_next(dec, &want, sizeof(want)) >= 0);
		pt_pkt_get_offset(dec, &off);
		w = ptt_walk_packet(buf + prev, (size_t)(len - prev), &got);
		CHECK_U64_EQ(off - prev, (uint64_t)w);
		CHECK_INT_EQ(ptt_is_timing(want.type) ? (int)want.type : (int)ppt_mode,
			     (int)got.type);
		if (want.type == ppt_tsc)
			CHECK_U64_EQ(want.payload.tsc.tsc, got.payload.tsc.tsc);
		if (want.type == ppt_cyc)
			CHECK_U64_EQ(want.payload.cyc.value, got.payload.cyc.value);
		if (want.type == ppt_mtc)
			CHECK_INT_EQ(want.payload.mtc.ctc, got.payload.mtc.ctc);
		if (want.type == ppt_cbr)
			CHECK_INT_EQ(want.payload.cbr.ratio, got.payload.cbr.ratio);
		if (want.type == ppt_tma) {
			CHECK_INT_EQ(want.payload.tma.ctc, got.payload.tma.ctc);
			CHECK_INT_EQ(want.payload.tma.fc, got.payload.tma.fc);
		}
		/* cut short, the packet is not read */
		if (off - prev > 1)
			CHECK_INT_EQ(0,
				     ptt_walk_packet(buf + prev, (size_t)(off - prev - 1), &got));
		prev = off;
	}
	pt_pkt_free_decoder(dec);
	CHECK_INT_EQ(0, ptt_walk_packet(buf, 0, &got));
	CHECK_INT_EQ(0, ptt_walk_packet((const uint8_t *)"\x09", 1, &got)); /* no such packet */
	CHECK_INT_EQ(0, ptt_walk_packet((const uint8_t *)"\x02\x82\x02\x83", 4, &got));
	/* a TMA whose FC has bits past its 9: libipt's bad packet, left to it
	 * (the fast walk read it as a TMA; differential fuzzing) */
	CHECK_INT_EQ(7, ptt_walk_packet((const uint8_t *)"\x02\x73\xb8\xc2\x0d\x00\x01", 7, &got));
	CHECK_INT_EQ(0, ptt_walk_packet((const uint8_t *)"\x02\x73\xb8\xc2\x0d\x00\xc8", 7, &got));
}

int main(void)
{
	RUN(walker_agrees_with_libipt);
	RUN(clock_tsc);
	RUN(clock_mtc);
	RUN(clock_ctc_ratio);
	RUN(clock_mtc_period_over_8);
	RUN(clock_cyc_with_cbr);
	RUN(clock_cyc_measured_between_mtcs);
	RUN(tsc_conversion_is_perfs);
	RUN(reads_a_small_recording);
	RUN(rejects_what_it_cannot_read);
	RUN(opens_kernel_traces);
	RUN(any_segment_cap_decodes);
	RUN(long_piece_decoded_once);
	RUN(one_worker_on_two_cpus);
	RUN(long_recording_stays_out_of_memory);
	RUN(psb_across_a_span_is_found);
	RUN(reads_the_build_id_table);
	RUN(reads_kallsyms);
	RUN(symbols_of_this_binary);
	return snap_test_done();
}
