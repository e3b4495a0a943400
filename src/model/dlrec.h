/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The dlfilter record stream: what snaptrace-dlfilter.so (src/plugin/dlfilter.c,
 * loaded into `perf script --dlfilter`) writes and parse/dlrec reads. This header
 * is shared by both sides, so it holds only constants and the byte layout; it
 * must stay includable from the plugin (no libsnap, no util/ headers).
 *
 * Layout. Everything is little-endian, packed, no alignment padding.
 *
 *   stream header (16 bytes): "SNAPDLR1" u32 version (1) u32 header size (16)
 *   then records, each:      u32 kind, u32 len (payload bytes), payload[len]
 *
 * A reader skips records of kinds it does not know (using len), so kinds can be
 * added without a version change; a record that is shorter than its kind's fixed
 * part is an error. A payload may be longer than the fixed part (extra trailing
 * fields from a newer plugin are ignored).
 *
 * String ids: the plugin numbers every distinct string it sends (symbol names,
 * DSO paths, event names) 1, 2, 3, ... in one id space and sends each once in a
 * STR record before any record that uses it. Id 0 means "none": for a symbol,
 * that perf had no symbol (the reader names it "[unknown @ 0xADDR (DSO)]" like
 * the text parser, DSO "[unknown]" when the DSO id is 0 too).
 *
 * A location (LOC, 24 bytes): u64 addr, u64 off, u32 sym, u32 dso
 *   addr: the address as perf script prints it. Branch and flat-sample ips are
 *         absolute; call-chain entries are DSO-relative for user code (perf's
 *         "mapped" address, al->addr) and absolute for the kernel.
 *   off:  offset of addr in sym (0 when sym is 0).
 *
 * Records:
 *   STR    (1):  u32 id, bytes[len - 4] (no NUL)
 *   BRANCH (2):  u32 flags (perf's PERF_DLFILTER_FLAG_* bits, verbatim), s32 pid,
 *                s32 tid, u32 reserved, u64 time, LOC src (ip), LOC dst (addr)
 *                = 72 bytes
 *   SAMPLE (3):  (sched:sched_switch samples too: the reader makes them switch
 *                events) u32 event (string id), s32 pid, s32 tid, u32 nframes, u64 time,
 *                u64 period, LOC ip (the sample ip, absolute), then nframes LOCs,
 *                LEAF FIRST (as perf records them; the reader reverses them to
 *                outermost first). PERF_CONTEXT_* markers are not sent; a frame
 *                after the kernel marker has an absolute kernel address.
 *                nframes == 0 means perf recorded no call chain.
 *   EXTRA  (4):  same layout as SAMPLE (reserved; the plugin sends SAMPLE for
 *                every sampled event and the reader tells primary and extra
 *                events apart by the text parser's rule).
 *   POWER  (5):  u32 freq_mhz, s32 pid, s32 tid, u32 reserved, u64 time, LOC ip
 *                (a "cbr" event: freq_mhz as perf script prints it).
 *   TEXT   (6):  bytes[len]: text perf printed on its stdout (" instruction trace
 *                error ..." lines, PERF_RECORD_SWITCH lines, and samples with dwarf
 *                user stacks that the plugin leaves to perf to unwind and print:
 *                none of which a dlfilter gets as a record of its own), at exactly
 *                this point of the sample order.
 *                The plugin points perf's stdout at an unbuffered stream that
 *                writes here; the reader feeds these bytes, in order, to a
 *                perf script text parser. A line may span several TEXT records.
 *   COMM   (7):  s32 pid, s32 tid, u32 comm (string id; 0 = none): the thread's
 *                command name from now on (perf's thread comm, blanks trimmed at
 *                both ends as the text parser does). Sent before the first record
 *                of a thread and again when it changes; the plugin looks at it on
 *                every record that is not a plain call, return or jump (a comm
 *                only changes in the kernel: exec, prctl), so a name set from
 *                another thread shows up at the target's next kernel entry.
 *   END    (15): u64 records (every record before END, STR included),
 *                u64 branches, u64 samples (SAMPLE + EXTRA), u64 dropped (branches
 *                the plugin did not send, see dlfilter.c), u64 errors (samples the
 *                plugin could not encode), then nothing else may follow.
 *
 * Without an END record the stream was truncated (perf or the plugin died).
 */
#ifndef SNAP_MODEL_DLREC_H
#define SNAP_MODEL_DLREC_H

#define SNAP_DLREC_MAGIC       "SNAPDLR1"
#define SNAP_DLREC_MAGIC_LEN   8
#define SNAP_DLREC_VERSION     1u
#define SNAP_DLREC_HDR_SIZE    16u
#define SNAP_DLREC_REC_HDR     8u /* u32 kind, u32 len */
#define SNAP_DLREC_LOC_SIZE    24u
#define SNAP_DLREC_MAX_PAYLOAD (16u << 20) /* a reader refuses longer records */
#define SNAP_DLREC_MAX_STR     65536u	   /* the plugin truncates longer names */
#define SNAP_DLREC_MAX_FRAMES  4096u	   /* the plugin sends at most this many */

enum snap_dlrec_kind {
	SNAP_DLREC_STR = 1,
	SNAP_DLREC_BRANCH = 2,
	SNAP_DLREC_SAMPLE = 3,
	SNAP_DLREC_EXTRA = 4,
	SNAP_DLREC_POWER = 5,
	SNAP_DLREC_TEXT = 6,
	SNAP_DLREC_COMM = 7,
	SNAP_DLREC_END = 15,
};

/* Fixed payload sizes (bytes). */
#define SNAP_DLREC_BRANCH_SIZE (24u + 2u * SNAP_DLREC_LOC_SIZE)
#define SNAP_DLREC_SAMPLE_SIZE (32u + SNAP_DLREC_LOC_SIZE) /* + nframes * LOC */
#define SNAP_DLREC_POWER_SIZE  (24u + SNAP_DLREC_LOC_SIZE)
#define SNAP_DLREC_COMM_SIZE   12u
#define SNAP_DLREC_END_SIZE    40u

#endif
