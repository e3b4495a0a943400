/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interactive trigger pickers of run and attach: -trigger ? lists the
 * function symbols of the executable (fzf, else a numbered list where typed
 * text is taken as the name), -trigger line:? its FILE:LINE:COL lines
 * (cli/picker). Each prints why on failure.
 */
#ifndef SNAP_CLI_TRIGPICK_H
#define SNAP_CLI_TRIGPICK_H

/* -trigger ?: returns 0 and sets *owned (snap_free) and *trigger to the chosen
 * symbol, or 1 after printing why. has_fzf: fzf is installed. */
int snap_trigpick_symbol(const char *cmd, int has_fzf, const char *exe, char **owned,
			 const char **trigger);

/* -trigger line:?: returns 0 and sets *owned (snap_free) and *trigger to
 * "line:FILE:LINE:COL", or 1 after printing why. */
int snap_trigpick_line(const char *cmd, const char *exe, char **owned, const char **trigger);

#endif
