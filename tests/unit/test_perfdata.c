// SPDX-License-Identifier: GPL-2.0
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mem_reader.h"
#include "parse/perfdata.h"
#include "snap_test.h"
#include "util/err.h"

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* A header with nattrs attributes of 136 bytes (+16 for the ids section) right after it. */
static size_t make_file(uint8_t *buf, int nattrs, int aux, uint64_t sample_type)
{
	const uint64_t attr_size = 136 + 16;

	memset(buf, 0, 1024);
	memcpy(buf, "PERFILE2", 8);
	put64(buf + 8, 104);
	put64(buf + 16, attr_size);
	put64(buf + 24, 104);
	put64(buf + 32, attr_size * (uint64_t)nattrs);
	if (aux)
		buf[72 + 2] |= 1u << 2; /* feature bit 18 */
	for (int i = 0; i < nattrs; i++)
		put64(buf + 104 + i * attr_size + 24, sample_type);
	return 104 + attr_size * (size_t)nattrs;
}

static void probe_classifies_files(void)
{
	uint8_t buf[1024];
	struct snap_perfdata_info info;
	struct snap_membuf m = {buf, 0};

	m.len = make_file(buf, 2, 1, 0x107);
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(SNAP_PERFDATA_AUX, info.kind);
	CHECK_INT_EQ(2, info.nattrs);
	CHECK_INT_EQ(0, info.callchain);

	m.len = make_file(buf, 1, 0, 0x127);
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(SNAP_PERFDATA_SAMPLES, info.kind);
	CHECK_INT_EQ(1, info.callchain);
	CHECK_INT_EQ(0, info.timeless);
	CHECK_INT_EQ(0, info.dwarf);
	/* dwarf call graphs: REGS_USER | STACK_USER (perf record --call-graph dwarf) */
	m.len = make_file(buf, 1, 0, 0x127 | 0x1000 | 0x2000);
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(1, info.dwarf);
	CHECK_INT_EQ(0, info.lbr);
	/* LBR call graphs: BRANCH_STACK (perf record --call-graph lbr) */
	m.len = make_file(buf, 1, 0, 0x127 | 0x800);
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(0, info.dwarf);
	CHECK_INT_EQ(1, info.lbr);
}

static void probe_finds_timeless_pt(void)
{
	uint8_t buf[1024];
	struct snap_perfdata_info info;
	struct snap_membuf m = {buf, 0};
	uint32_t pt_type = 8;

	/* attr 0: intel_pt (dynamic PMU type 8) with the tsc bit; attr 1: a dummy event */
	m.len = make_file(buf, 2, 1, 0x107);
	memcpy(buf + 104, &pt_type, 4);
	put64(buf + 104 + 8, 0x400);
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(0, info.timeless);
	put64(buf + 104 + 8, 0x800); /* noretcomp, no tsc */
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(1, info.timeless);
}

static void probe_rejects_bad_headers(void)
{
	uint8_t buf[1024];
	struct snap_perfdata_info info;
	struct snap_membuf m = {buf, 0};

	memcpy(buf, "hello world, not perf", 21);
	m.len = 21;
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_perfdata_probe(snap_mem_read, &m, &info));
	m.len = make_file(buf, 1, 0, 0);
	m.len = 50;
	CHECK_INT_EQ(-SNAP_ETRUNC, snap_perfdata_probe(snap_mem_read, &m, &info));
	m.len = make_file(buf, 3, 0, 0) - 100; /* last attribute cut short */
	CHECK_INT_EQ(-SNAP_ETRUNC, snap_perfdata_probe(snap_mem_read, &m, &info));
	m.len = make_file(buf, 1, 0, 0);
	put64(buf + 16, 7); /* absurd attr_size */
	CHECK_INT_EQ(-SNAP_EPARSE, snap_perfdata_probe(snap_mem_read, &m, &info));
	m.len = make_file(buf, 1, 0, 0);
	put64(buf + 8, 16); /* pipe mode */
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(1, info.pipe_mode);
	CHECK_INT_EQ(SNAP_PERFDATA_UNKNOWN, info.kind);
}

/* A data section that the file cannot hold (data.size 1 or 2^64-1: perf script
 * spins forever on those) is refused before perf runs. */
static void check_size_against_file(void)
{
	uint8_t buf[1024];
	struct snap_perfdata_info info;
	struct snap_membuf m = {buf, 0};
	char why[256];
	size_t len = make_file(buf, 1, 0, 0x107);

	put64(buf + 40, len);
	put64(buf + 48, 64);
	m.len = len + 64;
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(0, snap_perfdata_check_size(&info, m.len, why, sizeof(why)));
	CHECK_INT_EQ(-SNAP_ETRUNC, snap_perfdata_check_size(&info, m.len - 1, why, sizeof(why)));
	CHECK(strstr(why, "cut short") != NULL);
	put64(buf + 48, UINT64_MAX);
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(-SNAP_ETRUNC, snap_perfdata_check_size(&info, m.len, why, sizeof(why)));
	put64(buf + 48, 1);
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(-SNAP_EPARSE, snap_perfdata_check_size(&info, m.len, why, sizeof(why)));
	CHECK(strstr(why, "damaged") != NULL);
	put64(buf + 48, 0); /* perf killed before it wrote the header: perf copes */
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(0, snap_perfdata_check_size(&info, m.len, why, sizeof(why)));
	put64(buf + 40, 8); /* data inside the header */
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(-SNAP_EPARSE, snap_perfdata_check_size(&info, m.len, why, sizeof(why)));
	put64(buf + 40, len);
	put64(buf + 48, 64);
	put64(buf + 32, 1u << 20); /* attributes past the end */
	put64(buf + 16, 1u << 20);
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(-SNAP_ETRUNC, snap_perfdata_check_size(&info, m.len, why, sizeof(why)));
	info.pipe_mode = 1;
	CHECK_INT_EQ(0, snap_perfdata_check_size(&info, 0, why, sizeof(why)));
}

struct bids {
	int n;
	char path[4][64];
	uint8_t id[4][20];
	size_t len[4];
};

static int got_bid(void *arg, const char *path, const uint8_t *id, size_t idlen)
{
	struct bids *b = arg;

	if (b->n < 4) {
		snprintf(b->path[b->n], sizeof(b->path[0]), "%s", path);
		memcpy(b->id[b->n], id, idlen);
		b->len[b->n] = idlen;
	}
	b->n++;
	return 0;
}

/* One build_id_event at p: misc, id (idlen bytes; with the size field when
 * sized), name padded to 8. Returns its size. */
static size_t put_bid(uint8_t *p, const char *name, uint8_t first, size_t idlen, int sized)
{
	size_t nl = strlen(name) + 1, size = 36 + ((nl + 7) & ~(size_t)7);
	uint16_t misc = sized ? 0x8000 : 0, sz = (uint16_t)size;

	memset(p, 0, size);
	memcpy(p + 4, &misc, 2);
	memcpy(p + 6, &sz, 2);
	for (size_t i = 0; i < idlen; i++)
		p[12 + i] = (uint8_t)(first + i);
	p[32] = (uint8_t)idlen;
	memcpy(p + 36, name, nl);
	return size;
}

static void build_ids(void)
{
	uint8_t buf[2048];
	struct snap_membuf m = {buf, 0};
	struct bids b = {0};
	size_t n = make_file(buf, 1, 0, 0x127), sec, len;

	/* data section: 64 bytes; features HEADER_TRACING_DATA (1) and HEADER_BUILD_ID (2):
	 * the table after the data holds two sections, build ids second */
	put64(buf + 40, n);
	put64(buf + 48, 64);
	buf[72] |= 1u << 1 | 1u << 2;
	sec = n + 64 + 32;
	len = put_bid(buf + sec, "/usr/bin/gzip", 0x10, 20, 1);
	len += put_bid(buf + sec + len, "[kernel.kallsyms]", 0x20, 20, 0);
	len += put_bid(buf + sec + len, "/lib/x.so", 0x30, 8, 1);
	put64(buf + n + 64 + 16, sec);
	put64(buf + n + 64 + 24, len);
	m.len = sec + len;
	CHECK_INT_EQ(0, snap_perfdata_build_ids(snap_mem_read, &m, got_bid, &b));
	CHECK_INT_EQ(3, b.n);
	CHECK_STR_EQ("/usr/bin/gzip", b.path[0]);
	CHECK_INT_EQ(20, (long long)b.len[0]);
	CHECK_INT_EQ(0x10, b.id[0][0]);
	CHECK_INT_EQ(0x23, b.id[0][19]);
	CHECK_STR_EQ("[kernel.kallsyms]", b.path[1]);
	CHECK_INT_EQ(20, (long long)b.len[1]); /* no size field: 20 bytes */
	CHECK_INT_EQ(8, (long long)b.len[2]);
	CHECK_INT_EQ(0x37, b.id[2][7]);
	/* cut inside the section: refused, the entries before it passed */
	m.len = sec + len - 4;
	b.n = 0;
	CHECK_INT_EQ(-SNAP_ETRUNC, snap_perfdata_build_ids(snap_mem_read, &m, got_bid, &b));
	/* an entry claiming more than the section: the ones before it passed */
	m.len = sec + len;
	put64(buf + n + 64 + 24, len - 4);
	b.n = 0;
	CHECK_INT_EQ(-SNAP_EPARSE, snap_perfdata_build_ids(snap_mem_read, &m, got_bid, &b));
	CHECK_INT_EQ(2, b.n);
	/* an entry smaller than its header */
	put64(buf + n + 64 + 24, len);
	buf[sec + 6] = 8;
	buf[sec + 7] = 0;
	b.n = 0;
	CHECK_INT_EQ(-SNAP_EPARSE, snap_perfdata_build_ids(snap_mem_read, &m, got_bid, &b));
	CHECK_INT_EQ(0, b.n);
	/* no build-id feature, pipe mode: nothing, no error */
	buf[72] &= (uint8_t) ~(1u << 2);
	b.n = 0;
	CHECK_INT_EQ(0, snap_perfdata_build_ids(snap_mem_read, &m, got_bid, &b));
	CHECK_INT_EQ(0, b.n);
	put64(buf + 8, 16);
	CHECK_INT_EQ(0, snap_perfdata_build_ids(snap_mem_read, &m, got_bid, &b));
	/* a section too large */
	put64(buf + 8, 104);
	buf[72] |= 1u << 2;
	put64(buf + n + 64 + 24, (uint64_t)1 << 40);
	CHECK_INT_EQ(-SNAP_EPARSE, snap_perfdata_build_ids(snap_mem_read, &m, got_bid, &b));
	/* not a perf.data file */
	buf[0] = 'X';
	CHECK_INT_EQ(-SNAP_EFORMAT, snap_perfdata_build_ids(snap_mem_read, &m, got_bid, &b));
}

/* Appends one record (type, size; the u64 words after the header). */
static size_t rec(uint8_t *p, uint32_t type, uint16_t size, uint64_t w0, uint64_t w1)
{
	memset(p, 0, size);
	memcpy(p, &type, 4);
	memcpy(p + 6, &size, 2);
	if (size >= 16)
		put64(p + 8, w0);
	if (size >= 24)
		put64(p + 16, w1);
	return size;
}

/* perf's PERF_RECORD_LOST (id, lost) and LOST_SAMPLES (lost) records are
 * counted against the samples kept, across the reader's chunks; a damaged
 * record ends the walk with what came before it. */
static void lost_records(void)
{
	size_t cap = (3u << 20) + 4096, n = 104, data;
	uint8_t *buf = calloc(1, cap);
	struct snap_perfdata_info info;
	struct snap_perfdata_lost l;
	struct snap_membuf m;
	uint64_t samples = 0;

	CHECK(buf != NULL);
	if (!buf)
		return;
	make_file(buf, 1, 0, 0x127);
	n = 104 + 152;
	data = n;
	n += rec(buf + n, 3, 40, 0, 0);	  /* COMM */
	n += rec(buf + n, 9, 64, 0, 0);	  /* SAMPLE */
	n += rec(buf + n, 2, 24, 7, 5);	  /* LOST: id 7, 5 lost */
	n += rec(buf + n, 13, 16, 11, 0); /* LOST_SAMPLES: 11 */
	samples = 1;
	/* then enough 200-byte samples to cross two 1 MiB reads (not on a record edge) */
	while (n + 200 < cap - 64) {
		n += rec(buf + n, 9, 200, 0, 0);
		samples++;
	}
	n += rec(buf + n, 2, 24, 7, 3);
	put64(buf + 40, data);
	put64(buf + 48, n - data);
	m = (struct snap_membuf){buf, n};
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	CHECK_INT_EQ(0, snap_perfdata_lost(snap_mem_read, &m, &info, &l));
	CHECK_U64_EQ(2, l.chunks);
	CHECK_U64_EQ(8, l.lost);
	CHECK_U64_EQ(11, l.lost_samples);
	CHECK_U64_EQ(samples, l.samples);
	/* a record of size 0 in the middle: counted up to it */
	rec(buf + data + 40 + 64 + 24 + 16, 9, 0, 0, 0);
	buf[data + 40 + 64 + 24 + 16 + 6] = 0;
	CHECK_INT_EQ(-SNAP_EPARSE, snap_perfdata_lost(snap_mem_read, &m, &info, &l));
	CHECK_U64_EQ(1, l.chunks);
	CHECK_U64_EQ(11, l.lost_samples);
	/* the file ends before its data section does */
	m.len = data + 120;
	CHECK_INT_EQ(-SNAP_ETRUNC, snap_perfdata_lost(snap_mem_read, &m, &info, &l));
	CHECK_U64_EQ(1, l.samples);
	free(buf);
}

/* The bytes a reader handed out (counting_read: snap_mem_read, counted). */
static size_t bytes_read;

static long counting_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	long n = snap_mem_read(ctx, off, buf, len);

	if (n > 0)
		bytes_read += (size_t)n;
	return n;
}

/* An Intel PT recording: the trace bytes after each PERF_RECORD_AUXTRACE are
 * not records (they are skipped, also when they run past the reader's chunk,
 * and mostly not even read: the chunk after an AUXTRACE record is small), and
 * the LOST records between them are all counted. */
static void lost_records_between_aux(void)
{
	size_t cap = (3u << 20) + 4096, n, data, big = (3u << 19) + 40;
	uint8_t *buf = calloc(1, cap);
	struct snap_perfdata_info info;
	struct snap_perfdata_lost l;
	struct snap_membuf m;

	CHECK(buf != NULL);
	if (!buf)
		return;
	make_file(buf, 1, 0, 0x127);
	n = 104 + 152;
	data = n;
	n += rec(buf + n, 3, 40, 0, 0);	   /* COMM */
	n += rec(buf + n, 71, 48, big, 0); /* AUXTRACE, 1.5 MiB of trace after it */
	for (size_t k = 0; k + 24 <= big; k += 24)
		rec(buf + n + k, 2, 24, 9, 1000); /* bytes that look like LOST records */
	n += big;
	n += rec(buf + n, 2, 24, 7, 5); /* LOST: 5 */
	n += rec(buf + n, 71, 48, 100, 0);
	memset(buf + n, 0xff, 100); /* not a record */
	n += 100;
	n += rec(buf + n, 2, 24, 7, 3);
	put64(buf + 40, data);
	put64(buf + 48, n - data);
	m = (struct snap_membuf){buf, n};
	CHECK_INT_EQ(0, snap_perfdata_probe(snap_mem_read, &m, &info));
	bytes_read = 0;
	CHECK_INT_EQ(0, snap_perfdata_lost(counting_read, &m, &info, &l));
	CHECK_U64_EQ(2, l.chunks);
	CHECK_U64_EQ(8, l.lost);
	/* 64 KiB chunks around the 1.5 MiB of trace (1 MiB ones read 1.1 MiB) */
	CHECK(bytes_read <= (128u << 10) + 4096);
	/* trace bytes said to run past the data section */
	put64(buf + data + 40 + 8, (uint64_t)n);
	CHECK_INT_EQ(-SNAP_EPARSE, snap_perfdata_lost(snap_mem_read, &m, &info, &l));
	CHECK_U64_EQ(0, l.chunks);
	free(buf);
}

int main(void)
{
	RUN(lost_records);
	RUN(lost_records_between_aux);
	RUN(build_ids);
	RUN(check_size_against_file);
	RUN(probe_classifies_files);
	RUN(probe_rejects_bad_headers);
	RUN(probe_finds_timeless_pt);
	return snap_test_done();
}
