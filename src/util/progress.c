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

/* "812", "12.3 k", "1.20 M": a count that reads at a glance (a million
 * events printed as "0.00 M" looked like none). */
static void fmt_count(char *buf, size_t len, double v)
{
	if (v < 1e3)
		snprintf(buf, len, "%.0f", v);
	else if (v < 1e6)
		snprintf(buf, len, "%.1f k", v / 1e3);
	else
		snprintf(buf, len, "%.2f M", v / 1e6);
}

static int draw(struct snap_progress *p, uint64_t now_ns, int waiting)
{
	char line[192], cnt[32], rt[32];
	double secs, rate;
	int n;

	p->next_ns = now_ns + SNAP_PROGRESS_PERIOD_NS;
	secs = (double)(now_ns - p->start_ns) / 1e9;
	rate = secs > 0 ? (double)p->events / secs : 0;
	fmt_count(cnt, sizeof(cnt), (double)p->events);
	fmt_count(rt, sizeof(rt), rate);
	if (waiting && !p->events)
		n = snprintf(line, sizeof(line),
			     "\rsnaptrace: perf script: resolving symbols and reading the "
			     "recording, no event yet, %.0f s\033[K",
			     secs);
	else
		n = snprintf(line, sizeof(line),
			     "\rsnaptrace: decoding: %s events, %s events/s, %.0f s%s\033[K", cnt,
			     rt, secs, waiting ? " (waiting for perf script)" : "");
	if (n <= 0 || (size_t)n >= sizeof(line))
		return 0;
	progress_write(p, line, (size_t)n);
	p->shown = 1;
	return 1;
}

int snap_progress_update(struct snap_progress *p, uint64_t events, uint64_t now_ns)
{
	if (!p->enabled)
		return 0;
	p->events = events;
	if (now_ns < p->next_ns)
		return 0;
	return draw(p, now_ns, 0);
}

int snap_progress_wait(struct snap_progress *p, uint64_t now_ns)
{
	if (!p || !p->enabled || now_ns < p->next_ns)
		return 0;
	return draw(p, now_ns, 1);
}

void snap_progress_done(struct snap_progress *p)
{
	if (p->shown)
		progress_write(p, "\r\033[K", 4);
	p->shown = 0;
}
