// SPDX-License-Identifier: GPL-2.0
#include "util/progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t snap_progress_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void snap_progress_init(struct snap_progress *p, int fd, int enabled, uint64_t now_ns)
{
	memset(p, 0, sizeof(*p));
	p->fd = fd;
	p->enabled = enabled;
	p->start_ns = now_ns;
	p->next_ns = now_ns + SNAP_PROGRESS_DELAY_NS;
}

static void progress_write(const struct snap_progress *p, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(p->fd, s, n);

		if (w <= 0)
			return; /* a progress line is not worth an error */
		s += w;
		n -= (size_t)w;
	}
}

int snap_progress_update(struct snap_progress *p, uint64_t events, uint64_t now_ns)
{
	char line[128];
	double secs, rate;
	int n;

	if (!p->enabled || now_ns < p->next_ns)
		return 0;
	p->next_ns = now_ns + SNAP_PROGRESS_PERIOD_NS;
	secs = (double)(now_ns - p->start_ns) / 1e9;
	rate = secs > 0 ? (double)events / secs : 0;
	n = snprintf(line, sizeof(line),
		     "\rsnaptrace: decoding: %.2f M events, %.2f M events/s, %.0f s\033[K",
		     (double)events / 1e6, rate / 1e6, secs);
	if (n <= 0 || (size_t)n >= sizeof(line))
		return 0;
	progress_write(p, line, (size_t)n);
	p->shown = 1;
	return 1;
}

void snap_progress_done(struct snap_progress *p)
{
	if (p->shown)
		progress_write(p, "\r\033[K", 4);
	p->shown = 0;
}
