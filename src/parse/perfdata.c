// SPDX-License-Identifier: GPL-2.0
#include "parse/perfdata.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/bytes.h"
#include "util/err.h"

#define PERF_MAGIC2	 "PERFILE2"
#define HDR_SIZE	 104
#define PIPE_HDR_SIZE	 16
#define FEAT_BUILD_ID	 2
#define FEAT_AUXTRACE	 18
#define SAMPLE_CALLCHAIN (1u << 5)
#define SAMPLE_BRSTACK	 (1u << 11) /* PERF_SAMPLE_BRANCH_STACK: LBR call graphs */
#define SAMPLE_USERSTACK (1u << 13) /* PERF_SAMPLE_STACK_USER: dwarf call graphs */
#define ATTR_MIN_SIZE	 64	    /* PERF_ATTR_SIZE_VER0 */
#define PERF_TYPE_MAX	 6	    /* types above are dynamic PMUs (intel_pt, ...) */
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
		if (snap_get64(attr + 24) & SAMPLE_USERSTACK)
			info->dwarf = 1;
		if (snap_get64(attr + 24) & SAMPLE_BRSTACK)
			info->lbr = 1;
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

/* One build_id_event: u32 type, u16 misc, u16 size, s32 pid, u8 id[20], u8 id size
 * (valid with misc bit 15), 3 reserved bytes, then the file name (NUL-padded). */
#define BID_HDR		  36
#define BID_MISC_HAS_SIZE 0x8000u

int snap_perfdata_build_ids(snap_perfdata_read_fn read, void *ctx,
			    int (*fn)(void *arg, const char *path, const uint8_t *id, size_t idlen),
			    void *arg)
{
	uint8_t hdr[HDR_SIZE], sec[16], *buf;
	uint64_t data_off, data_size, off, size, idx = 0;
	size_t pos = 0;
	long n;
	int r = 0;

	n = read(ctx, 0, hdr, sizeof(hdr));
	if (n < 0)
		return (int)n;
	if (!snap_perfdata_is_magic(hdr, (size_t)n))
		return -SNAP_EFORMAT;
	if (n >= PIPE_HDR_SIZE && snap_get64(hdr + 8) == PIPE_HDR_SIZE)
		return 0; /* pipe mode: no feature sections */
	if (n < HDR_SIZE)
		return -SNAP_ETRUNC;
	if (!(hdr[72 + FEAT_BUILD_ID / 8] & (1u << (FEAT_BUILD_ID % 8))))
		return 0;
	/* the feature sections' table follows the data, one entry per set bit */
	for (int b = 0; b < FEAT_BUILD_ID; b++)
		idx += (hdr[72 + b / 8] >> (b % 8)) & 1;
	data_off = snap_get64(hdr + 40);
	data_size = snap_get64(hdr + 48);
	if (data_off > UINT64_MAX - data_size || data_off + data_size > UINT64_MAX - 16 * (idx + 1))
		return -SNAP_EPARSE;
	n = read(ctx, data_off + data_size + 16 * idx, sec, sizeof(sec));
	if (n < 0)
		return (int)n;
	if (n < (long)sizeof(sec))
		return -SNAP_ETRUNC;
	off = snap_get64(sec);
	size = snap_get64(sec + 8);
	if (size > SNAP_PERFDATA_MAX_BUILD_IDS)
		return -SNAP_EPARSE;
	if (!size)
		return 0;
	buf = snap_malloc((size_t)size + 1);
	if (!buf)
		return -ENOMEM;
	n = read(ctx, off, buf, (size_t)size);
	if (n < 0 || (uint64_t)n < size) {
		snap_free(buf);
		return n < 0 ? (int)n : -SNAP_ETRUNC;
	}
	buf[size] = '\0';
	while (!r && size - pos >= BID_HDR) {
		const uint8_t *e = buf + pos;
		uint16_t misc = snap_get16(e + 4), esize = snap_get16(e + 6);
		size_t idlen = misc & BID_MISC_HAS_SIZE ? e[32] : 20;
		const char *name = (const char *)e + BID_HDR;

		if (esize < BID_HDR || esize > size - pos) {
			r = -SNAP_EPARSE;
			break;
		}
		/* the name must end inside its entry */
		if (idlen && idlen <= 20 && memchr(name, '\0', esize - BID_HDR))
			r = fn(arg, name, e + 12, idlen);
		pos += esize;
	}
	snap_free(buf);
	return r;
}

/* Record types (perf_event.h): PERF_RECORD_LOST = 2, _SAMPLE = 9, _LOST_SAMPLES = 13;
 * perf's own PERF_RECORD_AUXTRACE = 71 (tools/perf/util/event.h: after its header, a
 * u64 size of the trace bytes that follow the record, not counted in header.size). */
#define REC_LOST	 2
#define REC_SAMPLE	 9
#define REC_LOST_SAMPLES 13
#define REC_AUXTRACE	 71
#define LOST_CHUNK	 (1u << 20)
/* A chunk starts at 64 KiB (a record's largest size, u16, fits) and doubles
 * while whole chunks are records: after an AUXTRACE record the next chunk is
 * small again, as the 1 MiB read after each of a PT recording's records was
 * mostly trace bytes, copied to be skipped (8 of a 16 MB file's; docs/design.md,
 * "Start-up"). */
#define LOST_FIRST	 (1u << 16)

int snap_perfdata_lost(snap_perfdata_read_fn read, void *ctx, const struct snap_perfdata_info *info,
		       struct snap_perfdata_lost *out)
{
	uint64_t off = 0, end = info->data_size;
	uint8_t *buf;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (info->pipe_mode || !end)
		return 0;
	if (info->data_off > UINT64_MAX - end)
		return -SNAP_EPARSE;
	buf = snap_malloc(LOST_CHUNK);
	if (!buf)
		return -ENOMEM;
	for (size_t chunk = LOST_FIRST; off < end && !err;) {
		size_t want = end - off < chunk ? (size_t)(end - off) : chunk, pos = 0;
		uint64_t skip = 0; /* an AUXTRACE record's trace bytes past this chunk */
		long n = read(ctx, info->data_off + off, buf, want);

		if (n < 0) {
			err = (int)n;
			break;
		}
		if ((size_t)n < 8) {
			err = -SNAP_ETRUNC;
			break;
		}
		/* whole records of this chunk; one cut by its end is read again */
		while (pos + 8 <= (size_t)n) {
			uint32_t type = snap_get32(buf + pos);
			uint16_t size = (uint16_t)(buf[pos + 6] | buf[pos + 7] << 8);

			if (size < 8 || off + pos + size > end) {
				err = -SNAP_EPARSE;
				break;
			}
			if (pos + size > (size_t)n)
				break;
			if (type == REC_AUXTRACE && size >= 16) {
				/* its trace bytes are no records: skipped, not read */
				uint64_t aux = snap_get64(buf + pos + 8);

				if (aux > end - (off + pos + size)) {
					err = -SNAP_EPARSE;
					break;
				}
				if (aux > (size_t)n - pos - size) {
					skip = off + pos + size + aux;
					pos = (size_t)n; /* (not 0: not a cut record) */
					break;
				}
				pos += size + (size_t)aux;
				continue;
			}
			if (type == REC_LOST && size >= 24) {
				out->chunks++;
				out->lost += snap_get64(buf + pos + 16);
			} else if (type == REC_LOST_SAMPLES && size >= 16) {
				out->lost_samples += snap_get64(buf + pos + 8);
			} else if (type == REC_SAMPLE) {
				out->samples++;
			}
			pos += size;
		}
		if (!pos && !err) /* a record cut by the end of the file */
			err = (size_t)n < want ? -SNAP_ETRUNC : -SNAP_EPARSE;
		off = skip ? skip : off + pos;
		chunk = skip ? LOST_FIRST : chunk < LOST_CHUNK ? 2 * chunk : LOST_CHUNK;
	}
	snap_free(buf);
	return err;
}
