/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An interactive choice among lines (process, symbol and line pickers): fzf
 * when it is installed, else a numbered list on stderr and an answer read
 * from the terminal: a line number, or text that exactly one line contains
 * (when several do, they are shown and the question asked again).
 */
#ifndef SNAP_CLI_PICKER_H
#define SNAP_CLI_PICKER_H

#include <stddef.h>

/* 1 when stdin and stderr are terminals (a picker can be shown). */
int snap_picker_interactive(void);

/* Shows lines[0..n) and returns the chosen line (owned: snap_free), or NULL
 * (cancelled, no terminal, nothing matched; *why then says which, or is ""). */
char *snap_pick(const char *prompt, const char *const *lines, size_t n, const char **why);

/* The numbered list on stderr and question asked on the terminal: the answer
 * is a line's number, a line itself, or text exactly one line contains; when
 * several do, they are shown and the question is asked again. Text that no
 * line contains is returned as typed when free_text is set (a name that is
 * not listed), else NULL. Returns an owned string (snap_free) or NULL with
 * *why set. */
char *snap_pick_numbered(const char *question, const char *const *lines, size_t n, int free_text,
			 const char **why);

/* fzf (which must be installed) over lines[0..n); returns the chosen line
 * (owned: snap_free), or NULL when nothing was chosen. */
char *snap_pick_fzf(const char *prompt, const char *const *lines, size_t n);

#endif
