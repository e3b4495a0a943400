/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Spawning and driving `perf record` (docs/behaviour.md §2.4, §2.5): fork+exec
 * with PDEATHSIG and its own process group, perf's stdout/stderr into a log
 * file, the control fd pair on fds 3 and 4 (SNAP_PERF_CTL_FD/ACK_FD), acked
 * commands, signals and a bounded wait.
 */
#ifndef SNAP_RECORD_PERFRUN_H
#define SNAP_RECORD_PERFRUN_H

#include <stddef.h>
#include <sys/types.h>

struct snap_perf {
	pid_t pid;  /* 0 = not running */
	int ctl_fd; /* our write end of perf's control pipe, -1 = none */
	int ack_fd; /* our read end of perf's ack pipe, -1 = none */
	int status; /* waitpid status once reaped */
	int reaped;
};

/* Starts argv[0] with argv. log_fd (borrowed, may be -1 for /dev/null)
 * becomes perf's stdout and stderr. With use_ctl the control pipes are
 * created and put on fds 3/4 of perf. Returns 0 or -errno. */
int snap_perf_start(struct snap_perf *p, char *const argv[], int log_fd, int use_ctl);

/* Sends "cmd\n" on the control fd and waits up to timeout_ms for perf's
 * "ack\n\0". Returns 0 when acked, 1 when perf has gone (EOF/EPIPE: the
 * caller treats that as done), -ETIMEDOUT, -SNAP_EPERF (malformed ack),
 * -ENOTCONN (no control fd) or -errno. */
int snap_perf_ctl(struct snap_perf *p, const char *cmd, int timeout_ms);

/* Sends sig to perf if it still runs. Returns 0 or -errno. */
int snap_perf_signal(struct snap_perf *p, int sig);

/* Reaps perf, waiting up to timeout_ms (-1 = forever). Returns 1 when reaped
 * (p->status set), 0 on timeout, or -errno. */
int snap_perf_wait(struct snap_perf *p, int timeout_ms);

/* Kills (SIGKILL) and reaps perf if it still runs; closes the control fds.
 * Safe to call twice. */
void snap_perf_close(struct snap_perf *p);

#endif
