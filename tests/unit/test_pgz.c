// SPDX-License-Identifier: GPL-2.0
/* Tests of write/pgz: one gzip member a block, the same bytes for every
 * thread count, threads bounded by the CPUs, errors of the output and of
 * allocation. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "snap_test.h"
#include "util/alloc.h"
#include "write/pgz.h"

/* The output collected in memory; fail_at: the byte count at which the
 * callback fails with -ENOSPC (0: never). */
struct out {
	unsigned char *p;
	size_t len, cap, fail_at;
	int calls;
};

static int out_cb(void *ctx, const unsigned char *p, size_t len)
{
	struct out *o = ctx;

	o->calls++;
	if (o->fail_at && o->len + len >= o->fail_at)
		return -ENOSPC;
	if (o->len + len > o->cap) {
		o->cap = (o->len + len) * 2;
		o->p = realloc(o->p, o->cap);
	}
	memcpy(o->p + o->len, p, len);
	o->len += len;
	return 0;
}

/* n bytes that compress somewhat (FXT-like: words and counters). */
static unsigned char *pattern(size_t n)
{
	unsigned char *p = malloc(n ? n : 1);
	uint64_t x = 88172645463325252ull;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (i % 64) < 40 ? (unsigned char)("slice begin main foo"[i % 20])
				     : (unsigned char)x;
	}
	return p;
}

/* Compresses (p, n) with jobs threads in chunks of chunk bytes into o. */
static int pgz_compress(struct out *o, int level, int jobs, const unsigned char *p, size_t n,
			size_t chunk)
{
	struct snap_pgz *z = snap_pgz_new(level, jobs, out_cb, o);
	int err = 0;

	if (!z)
		return -ENOMEM;
	for (size_t i = 0; i < n && !err; i += chunk)
		err = snap_pgz_write(z, p + i, n - i < chunk ? n - i : chunk);
	if (!err)
		err = snap_pgz_finish(z);
	snap_pgz_free(z);
	return err;
}

/* Inflates o as gzip members in sequence, each holding one block of the
 * input (SNAP_PGZ_BLOCK bytes, the last one less; one empty member for an
 * empty input), and compares them with (p, n). */
static int inflates_to(const struct out *o, const unsigned char *p, size_t n)
{
	unsigned char *back = malloc(n + 16);
	size_t in = 0, got = 0;
	int ok = 1, members = 0;

	while (ok && (in < o->len || !members)) {
		z_stream zs;
		size_t want = n - got < SNAP_PGZ_BLOCK ? n - got : SNAP_PGZ_BLOCK;

		memset(&zs, 0, sizeof(zs));
		if (inflateInit2(&zs, 16 + 15) != Z_OK)
			return 0;
		zs.next_in = o->p + in;
		zs.avail_in = (uInt)(o->len - in);
		zs.next_out = back + got;
		zs.avail_out = (uInt)(n + 16 - got);
		ok = inflate(&zs, Z_FINISH) == Z_STREAM_END && zs.total_out == want;
		in += zs.total_in;
		got += zs.total_out;
		members++;
		inflateEnd(&zs);
	}
	ok = ok && in == o->len && got == n && !memcmp(back, p, n) &&
	     members == (int)(n ? (n + SNAP_PGZ_BLOCK - 1) / SNAP_PGZ_BLOCK : 1);
	free(back);
	return ok;
}

/* zlib's gzread (what snaptrace report and test_sink read with) reads the
 * members as one file. */
static int gzread_gives(const struct out *o, const unsigned char *p, size_t n)
{
	char path[] = "/tmp/snap-test-pgz-XXXXXX";
	int fd = mkstemp(path), ok;
	unsigned char *back = malloc(n + 16);
	gzFile f;

	if (fd < 0 || write(fd, o->p, o->len) != (ssize_t)o->len || lseek(fd, 0, SEEK_SET) != 0) {
		free(back);
		return 0;
	}
	f = gzdopen(fd, "rb");
	ok = f && gzread(f, back, (unsigned)(n + 16)) == (int)n && gzeof(f);
	if (f)
		gzclose(f);
	unlink(path);
	ok = ok && !memcmp(back, p, n);
	free(back);
	return ok;
}

/* Sizes around the block edges, levels 1 and 6: gunzip and gzread give the
 * input back, one member a block, and the bytes are the same for 1, 2, 8 and
 * 64 threads and any chunking of the writes. */
static void test_roundtrip_same_for_every_jobs(void)
{
	static const size_t sizes[] = {0,
				       1,
				       SNAP_PGZ_BLOCK - 1,
				       SNAP_PGZ_BLOCK,
				       SNAP_PGZ_BLOCK + 1,
				       7 * SNAP_PGZ_BLOCK / 2,
				       5 * SNAP_PGZ_BLOCK + 12345};
	static const int jobs[] = {1, 2, 8, 64};

	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t n = sizes[si];
		unsigned char *p = pattern(n);

		for (int level = 1; level <= 6; level += 5) {
			struct out ref = {0};

			CHECK_INT_EQ(0, pgz_compress(&ref, level, 1, p, n, n ? n : 1));
			CHECK(inflates_to(&ref, p, n));
			CHECK(gzread_gives(&ref, p, n));
			for (size_t ji = 0; ji < sizeof(jobs) / sizeof(jobs[0]); ji++) {
				struct out o = {0};

				CHECK_INT_EQ(0, pgz_compress(&o, level, jobs[ji], p, n, 4093));
				CHECK_U64_EQ(ref.len, o.len);
				CHECK(o.len == ref.len && !memcmp(o.p, ref.p, o.len));
				free(o.p);
			}
			free(ref.p);
		}
		free(p);
	}
}

/* The blocks are independent, yet at the same level the file is no bigger
 * than one zlib stream's, near enough (within 2 %). */
static void test_ratio_near_one_stream(void)
{
	size_t n = 4 * SNAP_PGZ_BLOCK;
	unsigned char *p = pattern(n);
	struct out o = {0};
	uLongf zlen = compressBound(n);
	unsigned char *zb = malloc(zlen);

	CHECK_INT_EQ(0, pgz_compress(&o, 6, 2, p, n, n));
	CHECK_INT_EQ(Z_OK, compress2(zb, &zlen, p, n, 6));
	CHECK(o.len < zlen + zlen / 50 + 64);
	free(zb);
	free(o.p);
	free(p);
}

/* Threads started at the first write, for jobs asked and the CPUs allowed. */
static int threads_for(int jobs)
{
	struct out o = {0};
	struct snap_pgz *z = snap_pgz_new(1, jobs, out_cb, &o);
	int n;

	CHECK_INT_EQ(0, snap_pgz_threads(z));
	CHECK_INT_EQ(0, snap_pgz_write(z, "abc", 3));
	n = snap_pgz_threads(z);
	CHECK_INT_EQ(0, snap_pgz_finish(z));
	snap_pgz_free(z);
	free(o.p);
	return n;
}

/* Memory does not grow with -j: the threads (and so the blocks in flight) are
 * bounded by the CPUs the process may run on and by SNAP_PGZ_MAX_WORKERS;
 * one CPU allowed means the caller compresses, with the same bytes. */
static void test_threads_bounded_by_cpus(void)
{
	cpu_set_t old, one;
	int cpus, want;

	CHECK_INT_EQ(0, sched_getaffinity(0, sizeof(old), &old));
	cpus = CPU_COUNT(&old);
	want = cpus < SNAP_PGZ_MAX_WORKERS ? cpus : SNAP_PGZ_MAX_WORKERS;
	CHECK_INT_EQ(0, threads_for(1));
	CHECK_INT_EQ(want > 1 ? want : 0, threads_for(64));
	CHECK_INT_EQ(want > 1 ? want : 0, threads_for(1024));
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &old)) {
			CPU_SET(c, &one);
			break;
		}
	CHECK_INT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	CHECK_INT_EQ(0, threads_for(8));
	{
		size_t n = 3 * SNAP_PGZ_BLOCK + 5;
		unsigned char *p = pattern(n);
		struct out a = {0}, b = {0};

		CHECK_INT_EQ(0, pgz_compress(&a, 1, 8, p, n, 65536));
		CHECK_INT_EQ(0, sched_setaffinity(0, sizeof(old), &old));
		CHECK_INT_EQ(0, pgz_compress(&b, 1, 8, p, n, 65536));
		CHECK(a.len == b.len && !memcmp(a.p, b.p, a.len));
		CHECK(inflates_to(&a, p, n));
		free(a.p);
		free(b.p);
		free(p);
	}
	CHECK_INT_EQ(0, sched_setaffinity(0, sizeof(old), &old));
}

/* An output error (a full disk) is sticky: every later call returns it, and
 * nothing is written after it. */
static void test_output_error_sticky(void)
{
	size_t n = 6 * SNAP_PGZ_BLOCK;
	unsigned char *p = pattern(n);

	for (int jobs = 1; jobs <= 4; jobs += 3) {
		struct out o = {0};
		struct snap_pgz *z = snap_pgz_new(1, jobs, out_cb, &o);
		int err = 0, calls;

		o.fail_at = SNAP_PGZ_BLOCK / 4;
		CHECK(z != NULL);
		for (size_t i = 0; i < n && !err; i += 65536)
			err = snap_pgz_write(z, p + i, 65536);
		if (!err)
			err = snap_pgz_finish(z);
		CHECK_INT_EQ(-ENOSPC, err);
		calls = o.calls;
		CHECK_INT_EQ(-ENOSPC, snap_pgz_write(z, p, 10));
		CHECK_INT_EQ(-ENOSPC, snap_pgz_finish(z));
		CHECK_INT_EQ(calls, o.calls);
		snap_pgz_free(z);
		free(o.p);
	}
	free(p);
}

/* Settings apply before the first write only; bad levels are refused. */
static void test_settings(void)
{
	struct out o = {0};
	struct snap_pgz *z = snap_pgz_new(1, 1, out_cb, &o);

	CHECK(snap_pgz_new(10, 1, out_cb, &o) == NULL);
	CHECK_INT_EQ(-EINVAL, snap_pgz_set_level(z, -1));
	CHECK_INT_EQ(0, snap_pgz_set_level(z, 9));
	CHECK_INT_EQ(0, snap_pgz_set_jobs(z, 3));
	CHECK_INT_EQ(0, snap_pgz_write(z, "abc", 3));
	CHECK_INT_EQ(-EINVAL, snap_pgz_set_level(z, 1));
	CHECK_INT_EQ(-EINVAL, snap_pgz_set_jobs(z, 1));
	CHECK_INT_EQ(0, snap_pgz_finish(z));
	CHECK_INT_EQ(-EINVAL, snap_pgz_write(z, "abc", 3));
	snap_pgz_free(z);
	CHECK(o.len > 18 && o.p[0] == 0x1f && o.p[1] == 0x8b && o.p[8] == 2); /* XFL: level 9 */
	free(o.p);
	snap_pgz_free(NULL);
}

/* Every allocation failing in turn: -ENOMEM or a good member, never a crash. */
static void test_alloc_failures(void)
{
	size_t n = 3 * SNAP_PGZ_BLOCK / 2;
	unsigned char *p = pattern(n);
	int ok = 0;

	for (long k = 0; k < 40; k++) {
		for (int jobs = 1; jobs <= 3; jobs += 2) {
			struct out o = {0};
			int err;

			snap_alloc_fail_after(k);
			err = pgz_compress(&o, 1, jobs, p, n, 100000);
			snap_alloc_fail_after(-1);
			CHECK(err == 0 || err == -ENOMEM);
			if (!err) {
				CHECK(inflates_to(&o, p, n));
				ok++;
			}
			free(o.p);
		}
	}
	CHECK(ok > 0);
	free(p);
}

int main(void)
{
	RUN(test_roundtrip_same_for_every_jobs);
	RUN(test_ratio_near_one_stream);
	RUN(test_threads_bounded_by_cpus);
	RUN(test_output_error_sticky);
	RUN(test_settings);
	RUN(test_alloc_failures);
	return snap_test_done();
}
