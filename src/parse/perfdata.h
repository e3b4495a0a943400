/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recognises a perf.data file and what it holds, from its header and event
 * attributes (tools/perf/Documentation/perf.data-file-format.txt), so decode
 * can ask perf script for the right fields. Pure: bytes come from a reader.
 */
#ifndef SNAP_PARSE_PERFDATA_H
#define SNAP_PARSE_PERFDATA_H

#include <stddef.h>
#include <stdint.h>

enum snap_perfdata_kind {
	SNAP_PERFDATA_UNKNOWN = 0, /* perf.data, contents not classified (e.g. pipe mode) */
	SNAP_PERFDATA_AUX,	   /* has an AUX area trace (Intel PT): decode branches */
	SNAP_PERFDATA_SAMPLES,	   /* plain samples (with or without call chains) */
};

struct snap_perfdata_info {
	enum snap_perfdata_kind kind;
	uint32_t nattrs;
	int callchain; /* some event samples call chains */
	int dwarf;     /* some event samples user stack copies (dwarf call graphs) */
	int lbr;       /* some event samples branch stacks (LBR call graphs) */
	int pipe_mode; /* written to a pipe: no attribute section */
	int timeless;  /* AUX trace of a PMU event recorded without TSC packets */
	/* The header's sections (0 in pipe mode), for snap_perfdata_check_size. */
	uint64_t attrs_off, attrs_size;
	uint64_t data_off, data_size;
};

/* Reads len bytes at off into buf; returns len, fewer at end of file, or <0. */
typedef long (*snap_perfdata_read_fn)(void *ctx, uint64_t off, void *buf, size_t len);

/* Returns 1 if the first bytes (at least 8) are a perf.data magic, else 0. */
int snap_perfdata_is_magic(const void *buf, size_t len);

/* Fills *info. Returns 0, -SNAP_EFORMAT if not a perf.data file,
 * -SNAP_ETRUNC or -SNAP_EPARSE for a damaged header, or the reader's error. */
int snap_perfdata_probe(snap_perfdata_read_fn read, void *ctx, struct snap_perfdata_info *info);

/*
 * Checks the sections of a probed header against the file's size, so a damaged
 * or cut recording is refused before perf runs on it (perf script spins forever
 * or dies of SIGBUS on some). Returns 0, or -SNAP_ETRUNC (the file ends before
 * a section does) / -SNAP_EPARSE (an impossible section), with a one-line
 * reason in why (len bytes). Pipe-mode files have no sections: always 0.
 */
int snap_perfdata_check_size(const struct snap_perfdata_info *info, uint64_t file_size, char *why,
			     size_t len);

/*
 * The build ids perf stored in the header (the HEADER_BUILD_ID feature: one per
 * DSO with samples, written when the recording ends): calls fn(arg, path, id,
 * idlen) for each entry (path NUL-terminated, idlen 1..20), in file order, until
 * fn returns nonzero (returned). Returns 0 also when the file has none (pipe
 * mode, no such feature); -SNAP_EFORMAT, -SNAP_ETRUNC, -SNAP_EPARSE for a
 * damaged header or section (entries before the damage were passed), -ENOMEM,
 * or the reader's error. The section is read whole, up to
 * SNAP_PERFDATA_MAX_BUILD_IDS bytes (a larger one is refused: -SNAP_EPARSE).
 */
#define SNAP_PERFDATA_MAX_BUILD_IDS (16u << 20)
int snap_perfdata_build_ids(snap_perfdata_read_fn read, void *ctx,
			    int (*fn)(void *arg, const char *path, const uint8_t *id, size_t idlen),
			    void *arg);

/* What perf could not write into the recording: its PERF_RECORD_LOST records
 * (chunks: records dropped because a ring was full, with how many) and
 * PERF_RECORD_LOST_SAMPLES (samples the kernel dropped), against the samples
 * it kept (PERF_RECORD_SAMPLE). */
struct snap_perfdata_lost {
	uint64_t chunks;       /* PERF_RECORD_LOST records */
	uint64_t lost;	       /* ... the records they say were lost */
	uint64_t lost_samples; /* PERF_RECORD_LOST_SAMPLES: samples lost */
	uint64_t samples;      /* PERF_RECORD_SAMPLE records kept */
};

/*
 * Walks the record headers of the data section of a probed (non-pipe) file
 * and fills *out. Reads the section in chunks (any size works); the trace
 * bytes after a PERF_RECORD_AUXTRACE (Intel PT) are skipped unread. Returns 0,
 * -SNAP_EPARSE at a record that cannot be (size < 8, or past the section:
 * what came before it is counted), or the reader's error.
 */
int snap_perfdata_lost(snap_perfdata_read_fn read, void *ctx, const struct snap_perfdata_info *info,
		       struct snap_perfdata_lost *out);

#endif
