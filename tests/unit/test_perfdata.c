// SPDX-License-Identifier: GPL-2.0
#include <stdint.h>

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

int main(void)
{
	RUN(check_size_against_file);
	RUN(probe_classifies_files);
	RUN(probe_rejects_bad_headers);
	RUN(probe_finds_timeless_pt);
	return snap_test_done();
}
