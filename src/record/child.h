/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The program `snaptrace run` starts, under ptrace: forked with
 * PTRACE_TRACEME so that it stops at its first instruction until the
 * recording is ready, and, for a trigger in a shared library, run on to its
 * entry point. The session (record/session) detaches it.
 */
#ifndef SNAP_RECORD_CHILD_H
#define SNAP_RECORD_CHILD_H

#include <sys/types.h>

/*
 * Notes the signal dispositions snaptrace was started with (call first in
 * main): the program gets them back, so `nohup snaptrace run` or a background
 * job's ignored SIGINT are what the program sees (docs/guarantees.md, Signals).
 */
void snap_child_save_signals(void);
/* 1 if sig was ignored when snaptrace started (snap_child_save_signals). */
int snap_child_inherited_ignored(int sig);

/*
 * Forks, PTRACE_TRACEME, execs argv (PATH searched): the program stops at its
 * first instruction (SIGTRAP), with the inherited signal dispositions and mask. Returns 0 with *pid. Else a negative errno:
 * with *exec_err set (the errno, > 0) when PTRACE_TRACEME or exec failed (it
 * comes back over a close-on-exec pipe), -ECHILD with *status when the
 * program did not stop, or the error of pipe/fork (*exec_err 0).
 */
int snap_child_start(char *const argv[], pid_t *pid, int *exec_err, int *status);

/*
 * The program is stopped at its first instruction, in ld.so, before its
 * shared libraries are mapped. To trigger on a library function, let it run
 * to its entry point (AT_ENTRY: ld.so has mapped every DT_NEEDED library by
 * then) with a one-shot int3, then stop it there again. Returns 0, -ECHILD
 * (the program did not stop there: *ended = 1 with *status when it ended),
 * -ENOTSUP off x86-64, or -errno. x86-64 only.
 */
int snap_child_run_to_entry(pid_t pid, int *status, int *ended);

/* Lets the stopped program run (PTRACE_DETACH). Returns 0 (also when it
 * is already gone) or -errno. */
int snap_child_detach(pid_t pid);

#endif
