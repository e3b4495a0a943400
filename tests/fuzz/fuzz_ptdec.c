// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the in-process PT decoder's perf.data and AUX reading
 * (ptdec/pdata) and the decode of what it finds (ptdec/ptdec: PSB splitting,
 * libipt, the packet walk, perf-style resynchronisation, the join), on
 * arbitrary bytes. Odd-sized inputs use two decode threads. The corpus holds
 * synthetic recordings; some have their mmap path set to /proc/self/exe so
 * that libipt walks real (if meaningless) code. With SNAPTRACE_PTDEC_WALK=check
 * in the environment it is a differential fuzzer of the fast walk against
 * libipt's decoder (docs/ptdec.md). Inputs whose size is a multiple of 3 are
 * decoded with pieces handing their events on in segments of 7
 * ($SNAPTRACE_PTDEC_CAP, docs/ptdec.md "Memory"): the hand-over to the reader,
 * the reader's pieces moved to helper threads, and libipt's fallback after a
 * streamed walk. Each input is decoded twice, one event a call and several
 * (snap_ptdec_fill into stale slots): the events must be the same. For the
 * inputs whose size has bit 3 set (about half the corpus: perf.data sizes are
 * mostly multiples of 8) the second decode reads the bytes as a file (a memfd
 * opened by its /proc/self/fd path with snap_ptdec_open), so the code only a
 * file takes runs too: the cut's pread through the kept descriptor (split.c),
 * the drops of the file's pages (madvise), ptd_slice_map; the events must be
 * those of the decode from memory.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ptdec/ptdec.h"
#include "util/strtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* FNV-1a of s (and its end) into *h. */
static void hash_str(uint64_t *h, const char *s)
{
	for (; *s; s++)
		*h = (*h ^ (uint8_t)*s) * 0x100000001b3ull;
	*h = (*h ^ 0xff) * 0x100000001b3ull;
}

/* Every field of ev (names as strings: each decode has its own table) into *h. */
static void hash_event(uint64_t *h, const struct snap_strtab *st, const struct snap_event *ev)
{
	const struct snap_loc *l[2] = {&ev->src, &ev->dst};
	char num[200];

	snprintf(num, sizeof(num), "%d %d %d %llu %u %u %u %u %u %u %u %u %u %llu %u %d",
		 (int)ev->kind, ev->pid, ev->tid, (unsigned long long)ev->time, ev->has_time,
		 ev->br_kind, ev->br_state, ev->in_tx, ev->sw_out, ev->sw_preempt, ev->task_exit,
		 ev->freq_mhz, ev->event, (unsigned long long)ev->period, ev->nframes,
		 ev->frames != NULL);
	hash_str(h, num);
	hash_str(h, snap_strtab_get(st, ev->comm));
	hash_str(h, snap_strtab_get(st, ev->msg));
	for (int i = 0; i < 2; i++) {
		snprintf(num, sizeof(num), "%llx+%llx %u", (unsigned long long)l[i]->ip,
			 (unsigned long long)l[i]->off, l[i]->inlined);
		hash_str(h, num);
		hash_str(h, snap_strtab_get(st, l[i]->sym));
		hash_str(h, snap_strtab_get(st, l[i]->dso));
	}
}

/* A memfd holding data[0..size) and its path in path (len bytes), or -1. */
static int input_file(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("fuzz_ptdec", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	for (size_t got = 0; got < size;) {
		ssize_t n = write(fd, data + got, size - got);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		got += (size_t)n;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/*
 * Decodes data (the file at path instead when path is not NULL): with chunk 0 one snap_ptdec_next at a time (into a zeroed
 * event), else
 * snap_ptdec_fill of up to chunk events into slots holding stale bytes (as a
 * batch's do: every field must be set). The hash of the events' fields,
 * their count and the last result (its sign) into *h, *n, *last; 0 when it
 * did not open.
 */
static int decode(const uint8_t *data, size_t size, const char *path,
		  const struct snap_ptdec_opts *o, size_t chunk, uint64_t *h, long *n, int *last)
{
	struct snap_strtab st;
	struct snap_ptdec *d = NULL;
	struct snap_event ev[5];
	char desc[256];
	char why[256];
	int r = 0, opened;

	*h = 0xcbf29ce484222325ull;
	*n = 0;
	snap_strtab_init(&st);
	if (path)
		opened = snap_ptdec_open(&d, path, o, &st, why, sizeof(why)) == 0;
	else
		opened = snap_ptdec_open_mem(&d, data, size, o, &st, why, sizeof(why)) == 0;
	while (opened && *n < 2000000) {
		if (chunk) {
			memset(ev, 0xa5, sizeof(ev));
			r = snap_ptdec_fill(
				d, ev,
				chunk < (size_t)(2000000 - *n) ? chunk : (size_t)(2000000 - *n));
		} else {
			memset(ev, 0, sizeof(ev));
			r = snap_ptdec_next(d, &ev[0]);
		}
		if (r <= 0)
			break;
		for (int i = 0; i < r; i++, (*n)++) {
			if (!snap_event_desc(&st, &ev[i], NULL, desc, sizeof(desc))[0] ||
			    ev[i].frames || ev[i].nframes)
				abort();
			hash_event(h, &st, &ev[i]);
		}
	}
	*last = r < 0 ? -1 : r > 0;
	if (opened)
		snap_ptdec_close(d);
	snap_strtab_fini(&st);
	return opened;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_ptdec_opts o;
	uint64_t h1, h2;
	long n1, n2;
	int last1, last2, fd = -1, bad;
	char path[64];

	memset(&o, 0, sizeof(o));
	o.jobs = 1 + (int)(size & 1);
	o.piece_bytes = 1 + (size % 7) * 64; /* many pieces: every join path */
	o.no_host_kernel = 1;		     /* kernel code only from the input's paths */
	o.buildid_dir = "";		     /* and never from $HOME/.debug */
	/* (read by open, on this thread, before any decode thread starts) */
	if (size % 3 == 0)
		setenv("SNAPTRACE_PTDEC_CAP", "7", 1);
	else
		unsetenv("SNAPTRACE_PTDEC_CAP");
	/* one event a call, then several: the same events (ptdec.c, lead_run); compared
	 * with one job only: with two, damaged input that enters code in the middle of
	 * an instruction can decode differently from run to run (docs/ptdec.md,
	 * "Limits and figures") */
	if (size & 8)
		fd = input_file(data, size, path, sizeof(path));
	bad = decode(data, size, NULL, &o, 0, &h1, &n1, &last1) &&
	      (decode(data, size, fd >= 0 ? path : NULL, &o, 2 + size % 4, &h2, &n2, &last2) != 1 ||
	       (o.jobs == 1 && (h1 != h2 || n1 != n2 || last1 != last2)));
	if (fd >= 0)
		close(fd);
	if (bad)
		abort();
	return 0;
}
