// SPDX-License-Identifier: GPL-2.0
/* util/progress: the terminal progress line, driven with a fake clock into a pipe. */
#include <fcntl.h>
#include <unistd.h>

#include "snap_test.h"
#include "util/progress.h"

#define S 1000000000ull

static size_t drain(int fd, char *buf, size_t len)
{
	ssize_t n = read(fd, buf, len - 1);

	buf[n > 0 ? n : 0] = 0;
	return n > 0 ? (size_t)n : 0;
}

static void progress_timing_and_text(void)
{
	struct snap_progress p;
	char buf[512];
	int fds[2];

	CHECK_INT_EQ(0, pipe2(fds, O_NONBLOCK));
	snap_progress_init(&p, fds[1], 1, 10 * S);
	CHECK_INT_EQ(0, snap_progress_update(&p, 1000, 10 * S + S / 2)); /* < 1 s: nothing */
	CHECK_INT_EQ(0, drain(fds[0], buf, sizeof(buf)));
	CHECK_INT_EQ(1, snap_progress_update(&p, 2000000, 12 * S)); /* 2 s: drawn */
	drain(fds[0], buf, sizeof(buf));
	CHECK_STR_EQ("\rsnaptrace: decoding: 2.00 M events, 1.00 M events/s, 2 s\033[K", buf);
	CHECK_INT_EQ(0, snap_progress_update(&p, 2100000, 12 * S + S / 10)); /* 100 ms later */
	CHECK_INT_EQ(1, snap_progress_update(&p, 2500000, 12 * S + S / 4));  /* 250 ms later */
	drain(fds[0], buf, sizeof(buf));
	snap_progress_done(&p);
	drain(fds[0], buf, sizeof(buf));
	CHECK_STR_EQ("\r\033[K", buf); /* erased */
	snap_progress_done(&p);
	CHECK_INT_EQ(0, drain(fds[0], buf, sizeof(buf))); /* only once */
	close(fds[0]);
	close(fds[1]);
}

/* Below a million the count is not "0.00 M"; while perf prints nothing the
 * line says so; events that trickle in still redraw it. */
static void progress_small_and_waiting(void)
{
	struct snap_progress p;
	char buf[512];
	int fds[2];

	CHECK_INT_EQ(0, pipe2(fds, O_NONBLOCK));
	snap_progress_init(&p, fds[1], 1, 10 * S);
	CHECK_INT_EQ(0, snap_progress_wait(&p, 10 * S + S / 2)); /* < 1 s: nothing */
	CHECK_INT_EQ(1, snap_progress_wait(&p, 11 * S));
	drain(fds[0], buf, sizeof(buf));
	CHECK(strstr(buf, "perf script: resolving symbols") != NULL);
	CHECK(strstr(buf, "1 s") != NULL);
	CHECK_INT_EQ(1, snap_progress_update(&p, 812, 12 * S));
	drain(fds[0], buf, sizeof(buf));
	CHECK_STR_EQ("\rsnaptrace: decoding: 812 events, 406 events/s, 2 s\033[K", buf);
	CHECK_INT_EQ(1, snap_progress_wait(&p, 13 * S)); /* perf quiet again: the last count */
	drain(fds[0], buf, sizeof(buf));
	CHECK(strstr(buf, "812 events") != NULL);
	CHECK(strstr(buf, "waiting for perf script") != NULL);
	CHECK_INT_EQ(1, snap_progress_update(&p, 45600, 14 * S));
	drain(fds[0], buf, sizeof(buf));
	CHECK(strstr(buf, "45.6 k events") != NULL);
	/* a tick looks at the clock within SNAP_PROGRESS_CHECK events */
	p.next_ns = 0;
	p.shown = 0;
	for (uint64_t i = 45601; i <= 45600 + SNAP_PROGRESS_CHECK; i++)
		snap_progress_tick(&p, i);
	CHECK_INT_EQ(1, p.shown);
	snap_progress_done(&p);
	close(fds[0]);
	close(fds[1]);
}

static void progress_disabled_or_short(void)
{
	struct snap_progress p;
	char buf[64];
	int fds[2];

	CHECK_INT_EQ(0, pipe2(fds, O_NONBLOCK));
	snap_progress_init(&p, fds[1], 0, 0); /* not a terminal */
	CHECK_INT_EQ(0, snap_progress_update(&p, 5, 100 * S));
	for (uint64_t i = 0; i < 10000; i++)
		snap_progress_tick(&p, i);
	snap_progress_done(&p);
	CHECK_INT_EQ(0, drain(fds[0], buf, sizeof(buf)));
	snap_progress_init(&p, fds[1], 1, snap_progress_now()); /* a fast decode */
	for (uint64_t i = 0; i < 10000; i++)
		snap_progress_tick(&p, i);
	snap_progress_done(&p);
	CHECK_INT_EQ(0, drain(fds[0], buf, sizeof(buf)));
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	RUN(progress_timing_and_text);
	RUN(progress_small_and_waiting);
	RUN(progress_disabled_or_short);
	return snap_test_done();
}
