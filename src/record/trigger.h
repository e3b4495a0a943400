/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -trigger: find a function in a process (its executable and the shared
 * libraries already mapped, through /proc/PID/maps) and watch it with
 * hardware execute breakpoints (perf_event_open, PERF_TYPE_BREAKPOINT).
 * Unlike magic-trace, which watches the main thread only, a call from any
 * thread fires: for a process we start, one inherited breakpoint per CPU
 * follows every thread created later; for attach, one per thread, and new
 * threads are armed as they appear (snap_trigger_rescan).
 * The breakpoints are perf fds: they vanish with the fds, so a target is
 * never left with one, whatever happens to snaptrace.
 */
#ifndef SNAP_RECORD_TRIGGER_H
#define SNAP_RECORD_TRIGGER_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/hit.h"

#define SNAP_STOP_INDICATOR    "snaptrace_stop_indicator"
#define SNAP_MT_STOP_INDICATOR "magic_trace_stop_indicator"

/* A hit as a breakpoint reports it: hit's time, pid, tid and ip (the rest of
 * hit is for the caller to fill) and the registers a stop indicator's
 * arguments are in. */
struct snap_trigger_hit {
	struct snap_hit hit;
	/* The first two integer arguments of the called function (rdi, rsi),
	 * which a stop indicator uses for (start TSC, payload); has_regs = 0
	 * when the kernel sent no registers. */
	int has_regs;
	uint64_t arg0, arg1;
};

struct snap_bp {
	int fd;
	void *ring; /* 1 metadata page + data pages */
	size_t ring_len;
};

struct snap_trigger {
	uint64_t addr; /* runtime address of the breakpoints being opened */
	struct snap_bp *bps;
	size_t nbps, cap;
	int *tids; /* attach: threads armed so far */
	size_t ntids, tcap;
	uint64_t nhits; /* hits read so far (including discarded ones) */
	/* TSC -> perf clock conversion of the kernel (from a breakpoint's mmap page) */
	int have_tsc;
	uint64_t time_zero;
	uint32_t time_mult;
	uint16_t time_shift;
};

/*
 * Resolves function `name` in process pid: the executable first, then every
 * other file mapped executable, in the order of /proc/PID/maps. Returns 0 with
 * *addr (and the file in where, may be NULL), -ENOENT when no file has the
 * symbol, -SNAP_EFORMAT when the executable has no symbol table at all, or
 * -errno (e.g. -ESRCH, -EACCES reading /proc).
 */
int snap_trigger_resolve(pid_t pid, const char *sel, uint64_t *addr, char *where, size_t wlen);
/* The selection forms of -trigger (sel above): "symbol:NAME" (a function,
 * searched as described above), "addr:HEX" or bare hex with or without 0x (a
 * link-time address of the executable), "line:FILE:LINE[:COL]" or
 * "FILE:LINE[:COL]" (the executable's DWARF line table: the lowest column of
 * the line unless COL is given; FILE may be a trailing part of the path).
 * Without a prefix: a function name first, then FILE:LINE, then hex.
 * -EINVAL for an empty or malformed selection.
 * A function name is matched exactly first (in every file), then as a
 * demangled name (C++, Rust: "app::detail::count_words", a Rust path without
 * its hash, or the name with its parameters), then as a trailing part of one
 * after "::" ("count_words"); -EEXIST when functions at several addresses
 * match at that step. resolve_disp also writes the name perf shows for the
 * function found (demangled; sel itself for a line or an address) to disp;
 * resolve_named is the name-only resolver (disp may be NULL). */
int snap_trigger_resolve_disp(pid_t pid, const char *sel, uint64_t *addr, char *where, size_t wlen,
			      char *disp, size_t dlen);
int snap_trigger_resolve_named(pid_t pid, const char *name, uint64_t *addr, char *where,
			       size_t wlen, char *disp, size_t dlen);
/* Parses hex with or without 0x (at most 16 digits). Returns 0 or -1. */
int snap_trigger_parse_hex(const char *s, uint64_t *v);

/* No breakpoint armed yet. */
void snap_trigger_init(struct snap_trigger *t);
/* Arms breakpoints on addr. follow_children: pid is a process we start:
 * one breakpoint per online CPU with inherit (covers later threads; perf
 * events inherit into new threads of a task snaptrace opened them on before
 * it ran). Otherwise one per thread in /proc/PID/task: threads created later
 * are armed by snap_trigger_rescan (measured: breakpoints inherited from an
 * already running thread that perf also records do not reach new threads).
 * Returns 0 or -errno (-ENOSPC: the thread already uses its 4 debug
 * registers, -ESRCH: no thread). */
int snap_trigger_arm(struct snap_trigger *t, pid_t pid, uint64_t addr, int follow_children);
/* Arms the threads of pid not armed yet, at addr (pid's address of the
 * function). Returns how many, or -errno. */
int snap_trigger_rescan(struct snap_trigger *t, pid_t pid, uint64_t addr);
/* Makes the kernel itself send sig to pid at every hit (F_SETOWN, F_SETSIG,
 * O_ASYNC on each breakpoint fd): no round trip through snaptrace, so perf
 * cuts its ring within microseconds of the call. Returns 0 or -errno. */
int snap_trigger_signal_to(struct snap_trigger *t, pid_t pid, int sig);
/* Fills up to max pollfds (POLLIN). Returns the count. */
size_t snap_trigger_pollfds(const struct snap_trigger *t, struct pollfd *pfd, size_t max);
/* Reads the rings: copies up to max hits into hits (sorted by time) and
 * returns how many; hits beyond max stay for the next call (call until it
 * returns less than max). With hits NULL every pending hit is discarded
 * (counted in t->nhits). */
size_t snap_trigger_read(struct snap_trigger *t, struct snap_trigger_hit *hits, size_t max);
/* How many times the breakpoints fired without the hit reaching a ring (it
 * was full): their counters minus the hits read. Exact once every ring was
 * read empty (hits still in a ring count as unread). */
uint64_t snap_trigger_unread(struct snap_trigger *t);
/* A TSC value (rdtsc in the traced program) on the perf clock, or 0 when the
 * kernel gave no conversion (no hit read yet, or no TSC clock). */
uint64_t snap_trigger_tsc_time(const struct snap_trigger *t, uint64_t tsc);
/* Closes every breakpoint (the target runs on untouched). Safe twice. */
void snap_trigger_fini(struct snap_trigger *t);

#endif
