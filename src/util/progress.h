/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A progress line on a terminal for long decodes: "snaptrace: decoding:
 * 1.20 M events, 3.40 M events/s, 2 s" (k below a million, plain counts below
 * a thousand), and "snaptrace: perf script: resolving symbols ..., 3 s" while
 * perf has sent nothing yet. Shown only when enabled (the caller passes
 * isatty(2)), only once the work has taken longer than a second, redrawn at
 * most four times a second with "\r...\033[K", and erased by done().
 */
#ifndef SNAP_UTIL_PROGRESS_H
#define SNAP_UTIL_PROGRESS_H

#include <stdint.h>

#define SNAP_PROGRESS_DELAY_NS	1000000000ull /* nothing before 1 s */
#define SNAP_PROGRESS_PERIOD_NS 250000000ull  /* then at most every 250 ms */
#define SNAP_PROGRESS_CHECK	64u	      /* events between two looks at the clock */

struct snap_progress {
	int fd;		     /* where to draw (borrowed), normally 2 */
	int enabled;	     /* 0: every call is a no-op */
	int shown;	     /* a line is on screen */
	uint64_t start_ns;   /* clock at init */
	uint64_t next_ns;    /* earliest next redraw */
	uint64_t next_check; /* event count at which to look at the clock again */
	uint64_t events;     /* the count last passed to update */
};

/* Returns CLOCK_MONOTONIC in ns. */
uint64_t snap_progress_now(void);
/* Starts timing now_ns (snap_progress_now() normally). fd is borrowed. */
void snap_progress_init(struct snap_progress *p, int fd, int enabled, uint64_t now_ns);
/* Cheap per-event call: looks at the clock every SNAP_PROGRESS_CHECK events
 * (a clock read costs tens of ns: negligible per 64 events, and events that
 * trickle in, a few hundred a second, still redraw the line). */
static inline void snap_progress_tick(struct snap_progress *p, uint64_t events);
/* Redraws the line for `events` at now_ns if it is due. Returns 1 if it drew. */
int snap_progress_update(struct snap_progress *p, uint64_t events, uint64_t now_ns);
/* While waiting for input (perf script has printed nothing for a while):
 * redraws the line if due, saying what perf does before its first event
 * ("perf script: resolving symbols ...") or, later, the last count. Returns 1
 * if it drew. */
int snap_progress_wait(struct snap_progress *p, uint64_t now_ns);
/* Erases the line if one is shown. */
void snap_progress_done(struct snap_progress *p);

/* snap_progress_tick's body (its contract is above its declaration). */
static inline void snap_progress_tick(struct snap_progress *p, uint64_t events)
{
	if (p->enabled && events >= p->next_check) {
		p->next_check = events + SNAP_PROGRESS_CHECK;
		snap_progress_update(p, events, snap_progress_now());
	}
}

#endif
