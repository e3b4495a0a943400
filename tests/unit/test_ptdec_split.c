// SPDX-License-Identifier: GPL-2.0
/* The cut of AUXTRACE buffers into pieces (src/ptdec/split.c, docs/ptdec.md
 * "Memory"): with -j two threads search the buffers, each half of the bytes;
 * the pieces are those of one search, in the same order, whatever -j; read
 * from the file with pread, the same pieces as from memory, without reading
 * the mapping; the read buffer only for a file. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pt_encode.h"
#include "ptdec/ptdec_int.h"
#include "snap_test.h"
#include "util/alloc.h"

enum { NBUF = 7, BUFSZ = 160 << 10 };

static uint8_t bufs[NBUF][BUFSZ];
static const size_t sizes[NBUF] = {40 << 10, 100 << 10, 0, 70 << 10, 30 << 10, 150 << 10, 90 << 10};

/* A PSB+ (TSC tsc, FUP ip) every 3000 bytes from byte lead on, pads between. */
static void fill(uint8_t *b, size_t size, size_t lead, uint64_t tsc, uint64_t ip)
{
	memset(b, 0, size); /* PAD */
	for (size_t at = lead; at + 64 <= size; at += 3000, tsc += 1000, ip += 16) {
		struct pt_packet pk[4];

		memset(pk, 0, sizeof(pk));
		pk[0].type = ppt_psb;
		pk[1].type = ppt_tsc;
		pk[1].payload.tsc.tsc = tsc;
		pk[2].type = ppt_fup;
		pk[2].payload.ip.ipc = pt_ipc_sext_48;
		pk[2].payload.ip.ip = ip;
		pk[3].type = ppt_psbend;
		CHECK(pt_encode(b + at, 64, pk, 4) > 16);
	}
}

static void dec_init(struct snap_ptdec *d, struct snap_pd_aux *aux, int jobs)
{
	memset(d, 0, sizeof(*d));
	d->fd = -1; /* memory: no file */
	d->pd.aux = aux;
	d->pd.naux = NBUF;
	d->pd.tc.time_mult = 1;
	d->o.jobs = jobs;
	d->o.piece_bytes = 16 << 10;
}

static void dec_fini(struct snap_ptdec *d)
{
	for (size_t i = 0; i < d->nqueues; i++)
		snap_free(d->queues[i].pieces);
	snap_free(d->queues);
	snap_free(d->pieces);
}

static void same_pieces_whatever_jobs(void)
{
	struct snap_pd_aux aux[NBUF];
	struct snap_ptdec d1, d2;
	size_t stops = 0, cross = 0;

	memset(aux, 0, sizeof(aux));
	for (int i = 0; i < NBUF; i++) {
		/* buffers 1 and 4 start inside a packet stream: their first piece
		 * starts without a PSB */
		fill(bufs[i], sizes[i], i == 1 || i == 4 ? 700 : 0, 100000 * (uint64_t)(i + 1),
		     0x400000 + 0x10000 * (uint64_t)i);
		aux[i].data = bufs[i];
		aux[i].size = sizes[i];
		aux[i].idx = (uint32_t)(i % 2);
		aux[i].tid = 40 + i % 2;
		aux[i].cpu = -1;
	}
	dec_init(&d1, aux, 1);
	dec_init(&d2, aux, 2);
	CHECK_INT_EQ(0, ptd_split_buffers(&d1));
	CHECK_INT_EQ(0, ptd_split_buffers(&d2));
	CHECK(d1.npieces > 20);
	CHECK_U64_EQ(d1.npieces, d2.npieces);
	CHECK_U64_EQ(NBUF, d2.st.buffers);
	CHECK_U64_EQ(d1.st.bytes, d2.st.bytes);
	CHECK_U64_EQ(d1.npieces, d2.st.pieces);
	CHECK_U64_EQ(2, d2.nqueues);
	for (size_t i = 0; i < d1.npieces && i < d2.npieces; i++) {
		const struct piece *a = &d1.pieces[i], *b = &d2.pieces[i];

		CHECK(a->b == b->b && a->e == b->e);
		CHECK_U64_EQ(a->q, b->q);
		CHECK_U64_EQ(a->qpos, b->qpos);
		CHECK_U64_EQ(a->start_time, b->start_time);
		CHECK_INT_EQ(a->run_start, b->run_start);
		CHECK_INT_EQ(a->buf_start, b->buf_start);
		CHECK_INT_EQ(a->has_stop, b->has_stop);
		CHECK_U64_EQ(a->stop_ip, b->stop_ip);
		CHECK_INT_EQ(a->tid, b->tid);
	}
	/* what the cut is: a piece stops at the FUP of the next on its queue,
	 * also across its buffer's end (a buffer that starts with a PSB) */
	for (size_t qi = 0; qi < d2.nqueues; qi++) {
		const struct queue *q = &d2.queues[qi];

		for (size_t k = 0; k + 1 < q->npieces; k++) {
			const struct piece *a = &d2.pieces[q->pieces[k]],
					   *n = &d2.pieces[q->pieces[k + 1]];

			CHECK(n->start_time > a->start_time || !n->start_time);
			if (n->b[0] == 0x02 && n->b[1] == 0x82) {
				CHECK_INT_EQ(1, a->has_stop);
				stops++;
				cross += n->buf_start;
				{
					size_t bi = (size_t)(n->b - bufs[0]) / BUFSZ,
					       off = (size_t)(n->b - bufs[bi]),
					       lead = bi == 1 || bi == 4 ? 700 : 0;

					CHECK_U64_EQ(0x400000 + 0x10000 * (uint64_t)bi +
							     16 * (uint64_t)((off - lead) / 3000),
						     a->stop_ip);
				}
			} else {
				CHECK_INT_EQ(0, a->has_stop);
			}
		}
	}
	CHECK(stops > 20);
	CHECK(cross >= 2);
	dec_fini(&d1);
	dec_fini(&d2);
}

/* Every field the cut sets, of d1's and d2's pieces, their bytes at the same
 * offsets from base1 and base2. */
static void same_cut(const struct snap_ptdec *d1, const uint8_t *base1, const struct snap_ptdec *d2,
		     const uint8_t *base2)
{
	CHECK_U64_EQ(d1->npieces, d2->npieces);
	for (size_t i = 0; i < d1->npieces && i < d2->npieces; i++) {
		const struct piece *a = &d1->pieces[i], *b = &d2->pieces[i];

		CHECK_U64_EQ((uint64_t)(a->b - base1), (uint64_t)(b->b - base2));
		CHECK_U64_EQ((uint64_t)(a->e - base1), (uint64_t)(b->e - base2));
		CHECK_U64_EQ(a->q, b->q);
		CHECK_U64_EQ(a->start_time, b->start_time);
		CHECK_INT_EQ(a->run_start, b->run_start);
		CHECK_INT_EQ(a->has_stop, b->has_stop);
		CHECK_U64_EQ(a->stop_ip, b->stop_ip);
	}
}

/* A perf.data-like file of FBUF buffers of FSZ bytes, one PSB+ (TSC, FUP)
 * every 2999 bytes, so that they fall at every offset from the end of a read
 * of the cut; the first of buffer 2 far into it (more than a 64 KiB read);
 * with longpsb, every fifth PSB+ longer than what the cut reads of it (50 MNT
 * packets before its FUP: 550 bytes). mem: the bytes; the file is mapped into
 * *map and its aux entries into aux (maux: those of mem). Returns the
 * descriptor, or -1. */
enum { FBUF = 4, FSZ = 2 << 20 };

static int make_file(uint8_t *mem, int longpsb, struct snap_pd_aux *maux, struct snap_pd_aux *aux,
		     const uint8_t **map)
{
	char path[] = "/tmp/snaptrace-test-split.XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return -1;
	unlink(path);
	memset(mem, 0, (size_t)FBUF * FSZ);
	for (int i = 0; i < FBUF; i++) {
		uint8_t *b = mem + (size_t)i * FSZ;
		uint64_t tsc = 1000000 * (uint64_t)(i + 1), ip = 0x500000;

		for (size_t at = i == 2 ? 100000 : 0; at + 1024 <= FSZ; at += 2999) {
			struct pt_packet pk[64];
			size_t n = 0;

			memset(pk, 0, sizeof(pk));
			pk[n++].type = ppt_psb;
			pk[n].type = ppt_tsc;
			pk[n++].payload.tsc.tsc = tsc += 1000;
			for (int m = 0; longpsb && (at / 2999) % 5 == 3 && m < 50; m++) {
				pk[n].type = ppt_mnt;
				pk[n++].payload.mnt.payload = (uint64_t)m;
			}
			pk[n].type = ppt_fup;
			pk[n].payload.ip.ipc = pt_ipc_sext_48;
			pk[n++].payload.ip.ip = ip += 16;
			pk[n++].type = ppt_psbend;
			CHECK(pt_encode(b + at, 1024, pk, n) > 16);
		}
		maux[i].data = b;
		maux[i].size = FSZ;
		maux[i].idx = (uint32_t)i;
		maux[i].tid = 50 + i;
		maux[i].cpu = -1;
	}
	CHECK(write(fd, mem, (size_t)FBUF * FSZ) == (ssize_t)FBUF * FSZ);
	*map = mmap(NULL, (size_t)FBUF * FSZ, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(*map != MAP_FAILED);
	if (*map == MAP_FAILED) {
		close(fd);
		return -1;
	}
	memcpy(aux, maux, FBUF * sizeof(*aux));
	for (int i = 0; i < FBUF; i++)
		aux[i].data = *map + (size_t)i * FSZ;
	return fd;
}

/* d over FBUF buffers aux; a file's (fd, map) or memory's (fd -1). */
static void file_init(struct snap_ptdec *d, struct snap_pd_aux *aux, int fd, const uint8_t *map,
		      int jobs)
{
	memset(d, 0, sizeof(*d));
	d->fd = fd;
	if (map) {
		d->map = map;
		d->maplen = (size_t)FBUF * FSZ;
		d->pagesz = (size_t)sysconf(_SC_PAGESIZE);
		ptd_slice_map(d);
	}
	d->pd.aux = aux;
	d->pd.naux = FBUF;
	d->pd.tc.time_mult = 1;
	d->o.jobs = jobs;
	d->o.piece_bytes = 16 << 10;
}

/* The cut of a perf.data file read with pread (d->fd, as snap_ptdec_open
 * does), on one thread and two, gives the pieces of the cut of the same bytes
 * in memory (make_file: PSBs across the reads' ends, far into a buffer, long
 * PSB+s read whole from the mapping). */
static void pread_cut_is_the_memory_cut(void)
{
	static struct snap_pd_aux aux[FBUF], maux[FBUF];
	uint8_t *mem = snap_malloc((size_t)FBUF * FSZ);
	struct snap_ptdec d1, d2;
	const uint8_t *map = NULL;
	int fd = mem ? make_file(mem, 1, maux, aux, &map) : -1;

	CHECK(fd >= 0);
	if (fd < 0) {
		snap_free(mem);
		return;
	}
	file_init(&d1, maux, -1, NULL, 1);
	CHECK_INT_EQ(0, ptd_split_buffers(&d1));
	CHECK(d1.npieces > 400);
	for (int jobs = 1; jobs <= 2; jobs++) {
		file_init(&d2, aux, fd, map, jobs);
		CHECK_INT_EQ(0, ptd_split_buffers(&d2));
		same_cut(&d1, mem, &d2, map);
		dec_fini(&d2);
	}
	{
		size_t stops = 0, long_ok = 0;

		for (size_t i = 0; i + 1 < d1.npieces; i++) {
			const struct piece *n = &d1.pieces[i + 1];

			if (n->q != d1.pieces[i].q)
				continue;
			stops += d1.pieces[i].has_stop;
			long_ok += d1.pieces[i].has_stop &&
				   ((size_t)(n->b - mem) % FSZ / 2999) % 5 == 3;
		}
		CHECK(stops > 400);
		CHECK(long_ok > 50); /* the long PSB+s' FUPs were read */
	}
	dec_fini(&d1);
	munmap((void *)(uintptr_t)map, (size_t)FBUF * FSZ);
	close(fd);
	snap_free(mem);
}

/* The allocations the cut of d's buffers makes (-j 1): the fewest that let it
 * succeed (util/alloc.h's failure injection), or -1. */
static long cut_allocations(struct snap_pd_aux *aux, int fd, const uint8_t *map)
{
	for (long n = 0; n < 200; n++) {
		struct snap_ptdec d;
		int err;

		file_init(&d, aux, fd, map, 1);
		snap_alloc_fail_after(n);
		err = ptd_split_buffers(&d);
		snap_alloc_fail_after(-1);
		dec_fini(&d);
		CHECK(err == 0 || err == -ENOMEM);
		if (err == 0)
			return n;
	}
	return -1;
}

/* The cut's read buffer (64 KiB and the PSB+s' bytes) is allocated only for a
 * file read with pread: the cut of the same bytes in memory makes one
 * allocation fewer (it once made the same ones). */
static void memory_cut_allocates_no_read_buffer(void)
{
	static struct snap_pd_aux aux[FBUF], maux[FBUF];
	uint8_t *mem = snap_malloc((size_t)FBUF * FSZ);
	const uint8_t *map = NULL;
	int fd = mem ? make_file(mem, 0, maux, aux, &map) : -1;
	long nmem, nfile;

	CHECK(fd >= 0);
	if (fd < 0) {
		snap_free(mem);
		return;
	}
	nmem = cut_allocations(maux, -1, NULL);
	nfile = cut_allocations(aux, fd, map);
	CHECK(nmem > 0);
	CHECK_INT_EQ((int)nmem + 1, (int)nfile);
	munmap((void *)(uintptr_t)map, (size_t)FBUF * FSZ);
	close(fd);
	snap_free(mem);
}

static sigjmp_buf segv_jmp;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(segv_jmp, 1);
}

/* With the descriptor the cut does not read the mapping at all (a read of it
 * faults in the 64 KiB around it, docs/ptdec.md "The start of a decode"): the
 * mapping is made unreadable during the cut, which must give the pieces it
 * gives in memory (the cut before read the mapping: SIGSEGV). */
static void pread_cut_reads_no_mapping(void)
{
	static struct snap_pd_aux aux[FBUF], maux[FBUF];
	uint8_t *mem = snap_malloc((size_t)FBUF * FSZ);
	struct snap_ptdec d1, d2;
	const uint8_t *map = NULL;
	int fd = mem ? make_file(mem, 0, maux, aux, &map) : -1;
	struct sigaction sa, old;
	volatile int segv = 0;

	CHECK(fd >= 0);
	if (fd < 0) {
		snap_free(mem);
		return;
	}
	file_init(&d1, maux, -1, NULL, 1);
	CHECK_INT_EQ(0, ptd_split_buffers(&d1));
	file_init(&d2, aux, fd, map, 1);
	CHECK_INT_EQ(0, mprotect((void *)(uintptr_t)map, (size_t)FBUF * FSZ, PROT_NONE));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, &old);
	if (sigsetjmp(segv_jmp, 1) == 0)
		CHECK_INT_EQ(0, ptd_split_buffers(&d2));
	else
		segv = 1;
	sigaction(SIGSEGV, &old, NULL);
	CHECK_INT_EQ(0, segv);
	if (!segv)
		same_cut(&d1, mem, &d2, map);
	dec_fini(&d1);
	if (!segv)
		dec_fini(&d2);
	munmap((void *)(uintptr_t)map, (size_t)FBUF * FSZ);
	close(fd);
	snap_free(mem);
}

int main(void)
{
	RUN(same_pieces_whatever_jobs);
	RUN(pread_cut_is_the_memory_cut);
	RUN(pread_cut_reads_no_mapping);
	RUN(memory_cut_allocates_no_read_buffer);
	return snap_test_done();
}
