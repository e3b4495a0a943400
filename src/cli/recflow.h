/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recording -> decode sequence of run and attach: check the flags, record
 * (record/session), decode every snapshot (cli/pipeline), keep or remove the
 * working directory, and say what was covered.
 */
#ifndef SNAP_CLI_RECFLOW_H
#define SNAP_CLI_RECFLOW_H

#include <stddef.h>

#include "cli/recflags.h"

/* Records (cmd: run this argv; else attach to pids) and decodes. Returns
 * the exit status: the program's for run (after a successful decode). */
int snap_recflow_record(struct snap_recflags *f, const char *cmd, const struct snap_machine *m,
			char *const *argv, const int *pids, size_t npids);

#endif
