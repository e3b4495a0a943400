/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Processes and time: the monotonic clock in ms, a thread's CPU time, the CPUs -j uses, what a forked child does
 * before exec, exec with piped output, and running a command for its output.
 * The one home for these (record/ and cli/ spawn perf, fzf and the traced program).
 */
#ifndef SNAP_UTIL_PROC_H
#define SNAP_UTIL_PROC_H

#include <stddef.h>

/* CLOCK_MONOTONIC in milliseconds. */
long snap_now_ms(void);

/* The CPU time (user + system) of the calling thread in seconds, 0 if unknown
 * (-v: the decode's reading and consumer threads, docs/design.md). */
double snap_thread_cpu_seconds(void);

/* The threads a -j jobs asks for: jobs when above 0, else one per online CPU
 * (at least 1). */
int snap_jobs(int jobs);

/* The CPUs this process may run on: its affinity mask, else the online CPUs
 * (at least 1). */
int snap_cpus_allowed(void);

/* In a freshly forked child: default signal dispositions and an empty mask,
 * so perf and the traced program do not inherit our blocked signals or our
 * ignored SIGPIPE. */
void snap_child_reset_signals(void);

/* Moves fd to exactly `to` (used before exec, clearing close-on-exec);
 * returns 0 or -1. */
int snap_move_fd(int fd, int to);

/* execvp for perf: argv[0] without a '/' is searched in PATH's absolute
 * directories that no other user can change (root's or ours, not world-
 * writable); an empty or relative entry (the current directory: "a::b",
 * "a:", ".") and /tmp are skipped, so root in /tmp never runs another user's
 * ./perf (docs/guarantees.md). Returns only on failure, with errno. */
void snap_execvp_trusted(char *const argv[]);

/* In a forked child: dies with the parent, takes its own process group, puts
 * outw on stdout and (when recw >= 0) recw on fd rec_to, and execs argv (PATH
 * searched as snap_execvp_trusted does, PAGER=cat). Never returns (exit 127 when exec fails). */
_Noreturn void snap_exec_piped(const char *const *argv, int recw, int rec_to, int outw);

/* Runs argv to completion (stdin /dev/null, stderr discarded), capturing up
 * to len-1 bytes of stdout into buf (NUL-terminated). Returns the exit
 * status (0..255), 127 when it could not be run, or -errno. */
int snap_run_capture(char *const argv[], char *buf, size_t len);

#endif
