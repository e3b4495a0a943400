// SPDX-License-Identifier: GPL-2.0
#include "parse/perfdata.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/bytes.h"
#include "util/err.h"

#define PERF_MAGIC2	 "PERFILE2"
#define HDR_SIZE	 104
#define PIPE_HDR_SIZE	 16
#define FEAT_AUXTRACE	 18
#define SAMPLE_CALLCHAIN (1u << 5)
#define ATTR_MIN_SIZE	 64 /* PERF_ATTR_SIZE_VER0 */
#define PERF_TYPE_MAX	 6  /* types above are dynamic PMUs (intel_pt, ...) */
#define INTEL_PT_CFG_TSC (1u << 10)
#define MAX_ATTRS	 4096

int snap_perfdata_is_magic(const void *buf, size_t len)
{
	return len >= 8 && !memcmp(buf, PERF_MAGIC2, 8);
}

int snap_perfdata_probe(snap_perfdata_read_fn read, void *ctx, struct snap_perfdata_info *info)
{
	uint8_t hdr[HDR_SIZE], attr[ATTR_MIN_SIZE];
	uint64_t size, attr_size, attrs_off, attrs_size;
	long n;

	memset(info, 0, sizeof(*info));
	n = read(ctx, 0, hdr, sizeof(hdr));
	if (n < 0)
		return (int)n;
	if (!snap_perfdata_is_magic(hdr, (size_t)n))
		return -SNAP_EFORMAT;
	if (n < PIPE_HDR_SIZE)
		return -SNAP_ETRUNC;
	size = snap_get64(hdr + 8);
	if (size == PIPE_HDR_SIZE) {
		info->pipe_mode = 1;
		return 0;
	}
	if (size < HDR_SIZE)
		return -SNAP_EPARSE;
	if (n < HDR_SIZE)
		return -SNAP_ETRUNC;
	attr_size = snap_get64(hdr + 16);
	attrs_off = snap_get64(hdr + 24);
	attrs_size = snap_get64(hdr + 32);
	info->attrs_off = attrs_off;
	info->attrs_size = attrs_size;
	info->data_off = snap_get64(hdr + 40);
	info->data_size = snap_get64(hdr + 48);
	/* adds_features bitmap at 72; bit FEAT_AUXTRACE */
	if (hdr[72 + FEAT_AUXTRACE / 8] & (1u << (FEAT_AUXTRACE % 8)))
		info->kind = SNAP_PERFDATA_AUX;
	if (attr_size < ATTR_MIN_SIZE + 16 || attrs_size % attr_size ||
	    attrs_size / attr_size > MAX_ATTRS)
		return -SNAP_EPARSE;
	info->nattrs = (uint32_t)(attrs_size / attr_size);
	for (uint32_t i = 0; i < info->nattrs; i++) {
		n = read(ctx, attrs_off + i * attr_size, attr, sizeof(attr));
		if (n < 0)
			return (int)n;
		if (n < (long)sizeof(attr))
			return -SNAP_ETRUNC;
		if (snap_get64(attr + 24) & SAMPLE_CALLCHAIN)
			info->callchain = 1;
		/* The AUX event is the dynamic-PMU one; without its tsc bit there are
		 * no timestamps and perf script refuses -F time. */
		if (info->kind == SNAP_PERFDATA_AUX && snap_get32(attr) >= PERF_TYPE_MAX &&
		    !(snap_get64(attr + 8) & INTEL_PT_CFG_TSC))
			info->timeless = 1;
	}
	if (info->kind == SNAP_PERFDATA_UNKNOWN && info->nattrs)
		info->kind = SNAP_PERFDATA_SAMPLES;
	return 0;
}

/* 1 if the section [off, off + size) lies inside a file of file_size bytes. */
static int section_fits(uint64_t off, uint64_t size, uint64_t file_size)
{
	return off <= file_size && size <= file_size - off;
}

int snap_perfdata_check_size(const struct snap_perfdata_info *info, uint64_t file_size, char *why,
			     size_t len)
{
	if (len)
		why[0] = '\0';
	if (info->pipe_mode)
		return 0;
	if (info->data_off < HDR_SIZE || (info->data_size && info->data_size < 8)) {
		snprintf(why, len,
			 "impossible data section (offset %" PRIu64 ", size %" PRIu64
			 "): the header is damaged",
			 info->data_off, info->data_size);
		return -SNAP_EPARSE;
	}
	if (!section_fits(info->attrs_off, info->attrs_size, file_size)) {
		snprintf(why, len,
			 "the header's attribute section ends past the end of the file (%" PRIu64
			 " bytes): the file is cut short or damaged",
			 file_size);
		return -SNAP_ETRUNC;
	}
	if (!section_fits(info->data_off, info->data_size, file_size)) {
		snprintf(why, len,
			 "the header says the data ends at byte %" PRIu64
			 "%s but the file has %" PRIu64
			 " bytes: the file is cut short (copied while perf wrote it?) or damaged",
			 info->data_off + info->data_size,
			 info->data_off + info->data_size < info->data_off ? " (beyond 2^64)" : "",
			 file_size);
		return -SNAP_ETRUNC;
	}
	return 0;
}
