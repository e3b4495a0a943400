/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text from outside (a traced program's names, a file's bytes) made safe to
 * print on a terminal: the one escaper of dump, dump -tree, report and the
 * messages that quote input (docs/guarantees.md, "What bad input becomes").
 * Printed as is: printable ASCII and valid UTF-8 from U+00A0 up. Escaped:
 * ASCII controls (tab, newline, ESC...) and DEL as \xNN, the C1 controls
 * U+0080-U+009F as \uNNNN, a byte that is not valid UTF-8 (among them the
 * raw C1 bytes 0x80-0x9f) as \xNN; with SNAP_ESC_QUOTE also '"' and '\' as
 * \" and \\. With SNAP_ESC_QMARK each of them becomes one '?' instead; with
 * SNAP_ESC_NL a newline is kept.
 */
#ifndef SNAP_UTIL_ESC_H
#define SNAP_UTIL_ESC_H

#include <stddef.h>
#include <stdio.h>

#define SNAP_ESC_QUOTE 1u /* also '"' and '\' (a quoted string) */
#define SNAP_ESC_QMARK 2u /* '?' for each unsafe character instead of an escape */
#define SNAP_ESC_NL    4u /* newlines kept (lines relayed from another program) */
#define SNAP_ESC_MAX   8  /* bytes of the longest escape ("\u0085") with its NUL */

/* The length of the leading part of s[0..n) printed as is. */
size_t snap_esc_run(const char *s, size_t n, unsigned flags);

/* s[0..n) (n > 0) starts with something to escape: writes its escape to out
 * (NUL-terminated) and returns how many bytes of s it stands for (1 or 2). */
size_t snap_esc_one(const char *s, size_t n, unsigned flags, char out[SNAP_ESC_MAX]);

/* s[0..n) escaped into out (cap bytes, NUL-terminated when cap > 0), never
 * cutting an escape or a UTF-8 character; returns the length the whole
 * escaped text needs (as snprintf: the output was cut if >= cap). */
size_t snap_esc_str(char *out, size_t cap, const char *s, size_t n, unsigned flags);

/* Writes the NUL-terminated s escaped to f. */
void snap_esc_fputs(FILE *f, const char *s, unsigned flags);

#endif
