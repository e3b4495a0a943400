/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reads what the in-process Intel PT decoder needs from a perf.data file
 * (docs/ptdec.md): the header, the event attributes, the intel_pt
 * AUXTRACE_INFO record (PMU type, TSC conversion, config bits), the sideband
 * records (MMAP, MMAP2, COMM, EXIT, ITRACE_START, SWITCH, SWITCH_CPU_WIDE,
 * AUX, LOST, TIME_CONV) with their sample_id times, the AUXTRACE records
 * with the position of their PT bytes, and the HEADER_BUILD_ID and
 * HEADER_OSRELEASE feature sections. Pure: it works on (buf, len), checks
 * every offset against len and copies nothing: records and buffers point into
 * buf.
 */
#ifndef SNAP_PTDEC_PDATA_H
#define SNAP_PTDEC_PDATA_H

#include <stddef.h>
#include <stdint.h>

/* perf record types used here (include/uapi/linux/perf_event.h, util/event.h). */
enum {
	SNAP_PD_MMAP = 1,
	SNAP_PD_LOST = 2,
	SNAP_PD_COMM = 3,
	SNAP_PD_EXIT = 4,
	SNAP_PD_FORK = 7,
	SNAP_PD_SAMPLE = 9,
	SNAP_PD_MMAP2 = 10,
	SNAP_PD_AUX = 11,
	SNAP_PD_ITRACE_START = 12,
	SNAP_PD_LOST_SAMPLES = 13,
	SNAP_PD_SWITCH = 14,
	SNAP_PD_SWITCH_CPU_WIDE = 15,
	SNAP_PD_AUXTRACE_INFO = 70,
	SNAP_PD_AUXTRACE = 71,
	SNAP_PD_AUXTRACE_ERROR = 72,
	SNAP_PD_TIME_CONV = 79,
};

#define SNAP_PD_MISC_CPUMODE_MASK  0x7
#define SNAP_PD_MISC_KERNEL	   1
#define SNAP_PD_MISC_USER	   2
#define SNAP_PD_MISC_MMAP_DATA	   0x2000 /* MMAP: not executable */
#define SNAP_PD_MISC_SWITCH_OUT	   0x2000
#define SNAP_PD_AUX_TRUNCATED	   0x01
#define SNAP_PD_AUX_OVERWRITE	   0x02
#define SNAP_PD_AUX_PARTIAL	   0x04
#define SNAP_PD_MISC_MMAP_BUILD_ID 0x4000 /* MMAP2: a build id instead of maj/min/ino */
#define SNAP_PD_MISC_BUILD_ID_SIZE 0x8000 /* HEADER_BUILD_ID entry: its size byte is set */

/* intel_pt AUXTRACE_INFO priv[] words (tools/perf/util/intel-pt.h). */
enum {
	SNAP_PD_PT_PMU_TYPE = 0,
	SNAP_PD_PT_TIME_SHIFT,
	SNAP_PD_PT_TIME_MULT,
	SNAP_PD_PT_TIME_ZERO,
	SNAP_PD_PT_CAP_USER_TIME_ZERO,
	SNAP_PD_PT_TSC_BIT,
	SNAP_PD_PT_NORETCOMP_BIT,
	SNAP_PD_PT_HAVE_SCHED_SWITCH,
	SNAP_PD_PT_SNAPSHOT_MODE,
	SNAP_PD_PT_PER_CPU_MMAPS,
	SNAP_PD_PT_MTC_BIT,
	SNAP_PD_PT_MTC_FREQ_BITS,
	SNAP_PD_PT_TSC_CTC_N,
	SNAP_PD_PT_TSC_CTC_D,
	SNAP_PD_PT_CYC_BIT,
	SNAP_PD_PT_MAX_NONTURBO_RATIO,
	SNAP_PD_PT_FILTER_STR_LEN,
	SNAP_PD_PT_NPRIV
};

/* perf's TSC to perf time conversion (tools/perf/util/tsc.c). */
struct snap_pd_tc {
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_zero;
	uint64_t time_cycles, time_mask;
	int cap_user_time_zero, cap_user_time_short;
};

/* One sideband record, with what its sample_id trailer says. */
struct snap_pd_rec {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	const uint8_t *p;      /* the whole record (header included), inside buf */
	uint64_t time;	       /* sample_id time, 0 if none */
	int32_t pid, tid, cpu; /* sample_id pid/tid/cpu, -1 if none */
};

/* One entry of the HEADER_BUILD_ID feature section (perf's build-id table):
 * the build id perf record saw for a DSO ("[kernel.kallsyms]", "[vdso]",
 * a path, a module). */
struct snap_pd_bid {
	const char *name; /* inside buf, not NUL-terminated: namelen bytes */
	size_t namelen;
	int32_t pid;
	uint16_t misc; /* cpumode: SNAP_PD_MISC_KERNEL or _USER */
	uint8_t len;
	uint8_t id[20];
};

/* One AUXTRACE record: PT bytes of one queue. */
struct snap_pd_aux {
	const uint8_t *data; /* inside buf */
	uint64_t size, offset, ref;
	uint32_t idx;
	int32_t tid, cpu;
	size_t nrec; /* sideband records before it in the file */
};

struct snap_pd {
	const uint8_t *buf; /* borrowed */
	size_t len;
	/* The PT event's attribute. */
	uint32_t pt_type;
	uint64_t pt_config, sample_type;
	int sample_id_all, context_switch, exclude_kernel, exclude_user;
	int nattrs;
	int have_info; /* an intel_pt AUXTRACE_INFO record */
	uint64_t priv[SNAP_PD_PT_NPRIV];
	struct snap_pd_tc tc;
	int have_time_conv;
	struct snap_pd_rec *recs;
	size_t nrecs, reccap;
	struct snap_pd_aux *aux;
	size_t naux, auxcap;
	uint64_t lost, aux_truncated, aux_partial, bad_records;
	struct snap_pd_bid *bids; /* HEADER_BUILD_ID */
	size_t nbids, bidcap;
	char osrelease[128]; /* HEADER_OSRELEASE, "" if none */
	/* snap_pd_parse_map: buf is a file mapping whose pages leave memory as the
	 * parse goes past them (drop_page: its page size; 0: never) */
	size_t drop_page, dropped;
};

/* A read fault maps at most the 2 MiB-aligned span of the mapping around it
 * (fault-around, or a large folio of the page cache mapped whole). */
#define SNAP_PD_DROP_SPAN ((size_t)2 << 20)

/* The build id recorded for DSO name (namelen bytes), or NULL. */
const struct snap_pd_bid *snap_pd_find_bid(const struct snap_pd *pd, const char *name,
					   size_t namelen);

/* Hex string of a build id (out: at least 41 bytes). */
void snap_pd_bid_hex(const uint8_t *id, size_t len, char *out);

/*
 * Parses buf (len bytes, a whole perf.data file). Returns 0, -SNAP_EFORMAT
 * for a file that is not a seekable perf.data, -SNAP_ETRUNC/-SNAP_EPARSE for a
 * damaged one, -SNAP_ENOTSUP (why says what, whylen bytes) for one this
 * reader does not handle, or -ENOMEM.
 */
int snap_pd_parse(struct snap_pd *pd, const void *buf, size_t len, char *why, size_t whylen);
/* The same for buf a read-only file mapping (page size pagesz): the pages the
 * parse read leave memory again as it goes (madvise(MADV_DONTNEED); read again
 * from the page cache when needed), so that about SNAP_PD_DROP_SPAN of the
 * file is resident at once however long it is (docs/ptdec.md, "Memory"). */
int snap_pd_parse_map(struct snap_pd *pd, const void *buf, size_t len, size_t pagesz, char *why,
		      size_t whylen);
/* Frees the record, AUXTRACE and build-id tables parse gave pd and zeroes pd
 * (the records point into buf, which stays the caller's). Safe on a zeroed pd. */
void snap_pd_fini(struct snap_pd *pd);

/* Copies msg into why (whylen bytes; why may be NULL) and returns -SNAP_ENOTSUP:
 * the one way the decoder says why it does not handle a file. */
int snap_pd_notsup(char *why, size_t whylen, const char *msg);

/* perf time of a TSC value (tools/perf/util/tsc.c, tsc_to_perf_time). */
uint64_t snap_pd_tsc_to_perf(const struct snap_pd_tc *tc, uint64_t tsc);

#endif
