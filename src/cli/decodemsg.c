// SPDX-License-Identifier: GPL-2.0
/*
 * The sentences a decode says to the user, worded from the facts the lower
 * layers return (counts, flags, names): only cli/ words them. See
 * decodemsg.h.
 */
#include "cli/decodemsg.h"

#include <inttypes.h>
#include <stdio.h>

/* --- from stack/ --- */

int snap_decodemsg_quality(const struct snap_decoder_stats *s, char *buf, size_t size)
{
	uint64_t unk, cut;
	unsigned q = snap_decoder_quality(s, &cut, &unk);
	char a[256] = "", b[192] = "";

	if (!size)
		return 0;
	buf[0] = 0;
	if (!q)
		return 0;
	/* Cut chains mean frame pointers are missing (with dwarf: unwind tables,
	 * or a stack deeper than the copy); frames without a symbol mean symbols
	 * are missing (stripped code): each has its own fix. */
	if ((q & SNAP_DECODER_Q_CUT) && s->dwarf)
		snprintf(a, sizeof(a),
			 "%" PRIu64 "%% of the call chains were cut at an address outside any "
			 "executable mapping (the dwarf unwinder lost its way: code without "
			 ".eh_frame, or a stack deeper than the copy; -callgraph-mode fp for code "
			 "built with frame pointers)",
			 cut);
	else if (q & SNAP_DECODER_Q_CUT)
		snprintf(a, sizeof(a),
			 "%" PRIu64 "%% of the call chains were cut at an address outside any "
			 "executable mapping (code without frame pointers: record with "
			 "-callgraph-mode dwarf, or build with -fno-omit-frame-pointer)",
			 cut);
	if (q & SNAP_DECODER_Q_NOSYM)
		snprintf(b, sizeof(b),
			 "%s%" PRIu64 "%% of the sampled user frames have no symbol (install the "
			 "debug symbol packages, e.g. PKG-dbgsym, or build with -g)",
			 a[0] ? "; " : "", unk);
	snprintf(buf, size, "stack quality: %s%s", a, b);
	return 1;
}

int snap_decodemsg_switches(const struct snap_decoder_stats *s, char *buf, size_t size)
{
	if (!size)
		return 0;
	buf[0] = 0;
	if (!s->switches_out && !s->switches_in && !s->switches_ignored)
		return 0;
	snprintf(buf, size,
		 "context switches: %" PRIu64 " out (%" PRIu64 " preempted), %" PRIu64
		 " back in, %" PRIu64 " sched_switch samples with the blocking call chain, %" PRIu64
		 " [off-CPU] slices, %" PRIu64 " [off-CPU: preempted] slices, %" PRIu64
		 " [on-CPU: unsampled] slices (%" PRIu64 " us); %" PRIu64
		 " switch records of untraced threads ignored",
		 s->switches_out, s->preempted, s->switches_in, s->switch_chains, s->offcpu_slices,
		 s->preempted_slices, s->unsampled, s->unsampled_ns / 1000u, s->switches_ignored);
	return 1;
}

int snap_decodemsg_gaps(const struct snap_decoder_stats *s, char *buf, size_t size)
{
	if (!size)
		return 0;
	buf[0] = 0;
	if (!s->gaps_inferred)
		return 0;
	snprintf(buf, size,
		 "%" PRIu64 " gap%s of more than %d sample periods between samples (%" PRIu64
		 ".%03" PRIu64 " s in all) inferred as off-CPU ([off-CPU: inferred]): the "
		 "recording has no context-switch records; `snaptrace run` records switch events",
		 s->gaps_inferred, s->gaps_inferred == 1 ? "" : "s", SNAP_DECODER_GAP_PERIODS,
		 s->gap_ns / 1000000000u, s->gap_ns / 1000000u % 1000u);
	return 1;
}

int snap_decodemsg_chains(const struct snap_decoder_stats *s, char *buf, size_t size)
{
	if (!size)
		return 0;
	buf[0] = 0;
	if (!s->samples)
		return 0;
	snprintf(buf, size,
		 "call chains: %" PRIu64 " of %" PRIu64 " user frames without a symbol; %" PRIu64
		 " chains cut at an address outside any executable mapping (%" PRIu64
		 " frames removed)",
		 s->unknown_frames, s->user_frames, s->chains_cut, s->frames_cut);
	return 1;
}
