/* SPDX-License-Identifier: GPL-2.0 */
/* -report of run, attach and decode (cli/cmd_report.c): a decode tap that prints
 * `snaptrace report`'s default tables on stdout once the trace is written. */
#ifndef SNAP_CLI_REPORTCLI_H
#define SNAP_CLI_REPORTCLI_H

#include "cli/pipeline.h"

/* The tap to put in snap_decode_opts.tap; source names the trace in the header. */
const struct snap_decode_tap *snap_report_tap(const char *source);
/* 0 if the report was printed, else 1 (after the decode). */
int snap_report_tap_status(void);

#endif
