/* SPDX-License-Identifier: GPL-2.0 */
/* The FXT describer: one line of text per record of write/fxtread. */
#ifndef SNAP_WRITE_FXTDESC_H
#define SNAP_WRITE_FXTDESC_H

#include <stddef.h>

#include "write/fxtread.h"

/* Prints rec as one line (no newline) into buf (len bytes, NUL-terminated,
 * truncated if short). Returns the full length the line needs, as snprintf.
 * The format (stable: golden files compare it):
 *   begin ts=1000 pid=42 tid=43 name="main" args={address=0x401000, symbol="main"}
 *   end ts=2000 pid=42 tid=43 name="main"
 *   complete ts=5 end=9 pid=42 tid=43 name="[decode error: Overflow packet]"
 *   counter ts=7 pid=42 tid=43 name="CPU" id=1 args={freq (MHz)=4600}
 *   instant|async_begin|async_instant|async_end|flow_begin|flow_step|flow_end ...
 *     (async and flow events carry id=N)
 *   process koid=42 name="prog [pid=42]"
 *   thread koid=43 process=42 name="prog [pid=42] [tid=43]"
 *   magic | provider id=0 name="snaptrace" | provider_section id=0 |
 *   init ticks_per_second=1000000000 | string index=5 "text" |
 *   thread_ref index=1 pid=42 tid=43 | log ts= pid= tid= "msg" |
 *   record type=N words=N (other record types)
 * Times are ticks as written. cat="..." appears only when not empty, name=
 * only when not empty; args only when present. Strings are quoted with \"
 * \\ and \xNN escapes (bytes < 0x20 and 0x7f), other bytes as they are;
 * an undefined string index prints as <undefined N>. Argument values:
 * integers in decimal, pointers 0x.., doubles %.17g, strings quoted, koids
 * decimal, booleans true/false, null; keys are bare unless they hold
 * quote, backslash, '=', ',', '{', '}' or control bytes (then quoted). */
size_t snap_fxtread_desc(const struct snap_fxtread_rec *rec, char *buf, size_t len);

#endif
