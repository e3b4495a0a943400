// SPDX-License-Identifier: GPL-2.0
/*
 * The decode's sentences to the user (cli/decodemsg.h), worded from the facts
 * the lower layers return (counts, flags, names): what was dropped, lost or
 * skipped, the stack builder's verdicts, and the "wrote" line.
 */
#include "cli/decodemsg.h"

#include <inttypes.h>
#include <stdio.h>

#include "util/log.h"

/* --- from stack/ --- */

int snap_decodemsg_quality(const struct snap_builder_stats *s, char *buf, size_t size)
{
	uint64_t unk, cut;
	unsigned q = snap_builder_quality(s, &cut, &unk);
	char a[320] = "", b[192] = "";

	if (!size)
		return 0;
	buf[0] = 0;
	if (!q)
		return 0;
	/* Cut chains mean frame pointers are missing (with dwarf: unwind tables,
	 * or a stack deeper than the copy); frames without a symbol mean symbols
	 * are missing (stripped code): each has its own fix. */
	if ((q & SNAP_BUILDER_Q_CUT) && s->dwarf)
		snprintf(a, sizeof(a),
			 "%" PRIu64 "%% of the call chains were cut at an address outside any "
			 "executable mapping (the dwarf unwinder lost its way: code without "
			 ".eh_frame, or a stack deeper than the copy; -callgraph-mode fp for code "
			 "built with frame pointers)",
			 cut);
	else if (q & SNAP_BUILDER_Q_CUT)
		snprintf(a, sizeof(a),
			 "%" PRIu64 "%% of the call chains were cut at an address outside any "
			 "executable mapping (code without frame pointers: record with "
			 "-callgraph-mode dwarf, or build with -fno-omit-frame-pointer)",
			 cut);
	if ((q & SNAP_BUILDER_Q_SHORT) && !a[0])
		snprintf(
			a, sizeof(a),
			"%" PRIu64 "%% of the call chains end short of where their thread "
			"started (no _start or clone at their outer end: the dwarf unwinder "
			"stopped early, at a stack deeper than its 8 KiB copy or at code it cannot "
			"unwind; -callgraph-mode fp for code built with frame pointers)",
			snap_builder_short_pct(s));
	if (q & SNAP_BUILDER_Q_NOSYM)
		snprintf(b, sizeof(b),
			 "%s%" PRIu64 "%% of the sampled user frames have no symbol (install the "
			 "debug symbol packages, e.g. PKG-dbgsym, or build with -g)",
			 a[0] ? "; " : "", unk);
	snprintf(buf, size, "stack quality: %s%s", a, b);
	return 1;
}

int snap_decodemsg_switches(const struct snap_builder_stats *s, char *buf, size_t size)
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

int snap_decodemsg_gaps(const struct snap_builder_stats *s, char *buf, size_t size)
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
		 s->gaps_inferred, s->gaps_inferred == 1 ? "" : "s", SNAP_BUILDER_GAP_PERIODS,
		 s->gap_ns / 1000000000u, s->gap_ns / 1000000u % 1000u);
	return 1;
}

int snap_decodemsg_chains(const struct snap_builder_stats *s, char *buf, size_t size)
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

/* --- from cli/pipeline.c --- */

void snap_decodemsg_unknown(const char *name, const struct snap_perfscript_stats *ps)
{
	if (!ps)
		return;
	if (ps->unknown_lines)
		snap_warn("%s: skipped %llu line%s not understood (first, line %llu: \"%s\")", name,
			  (unsigned long long)ps->unknown_lines, ps->unknown_lines == 1 ? "" : "s",
			  (unsigned long long)ps->first_unknown_line, ps->first_unknown);
	if (ps->dropped_frames)
		snap_warn(
			"%s: dropped %llu call-chain frame%s beyond %u per sample (the outermost)",
			name, (unsigned long long)ps->dropped_frames,
			ps->dropped_frames == 1 ? "" : "s", SNAP_PERFSCRIPT_MAX_FRAMES);
}

/* What a trace was made from, for the "wrote" line: "287 samples, 1 thread"
 * (sampled: the events fed are samples and switch records) or "N perf
 * events" (PT: branches and the rest; not the FXT events written). */
static const char *made_from(const struct snap_builder_stats *s, char *buf, size_t n)
{
	uint64_t k = s->samples ? s->samples : s->events;

	snprintf(buf, n, "from %llu %s%s, %llu thread%s", (unsigned long long)k,
		 s->samples ? "sample" : "perf event", k == 1 ? "" : "s",
		 (unsigned long long)s->threads, s->threads == 1 ? "" : "s");
	return buf;
}

void snap_decodemsg_lost(const struct snap_decode_result *r)
{
	uint64_t all = r->perf_samples + r->lost_samples;

	if (r->lost_samples)
		/* the share as perf's "Processed N samples and lost P%!" prints it */
		snap_warn("perf lost %llu of %llu samples (%.2f%%) while recording: its ring "
			  "filled faster than it was written out; the trace has gaps there",
			  (unsigned long long)r->lost_samples, (unsigned long long)all,
			  (double)r->lost_samples / (double)all * 100.0);
	else if (r->lost_records)
		snap_warn("perf lost %llu records (samples, switches) in %llu chunk%s while "
			  "recording: its ring filled faster than it was written out; the trace "
			  "has gaps there",
			  (unsigned long long)r->lost_records, (unsigned long long)r->lost_chunks,
			  r->lost_chunks == 1 ? "" : "s");
}

void snap_decodemsg_stats(const struct snap_builder_stats *s, enum snap_scope scope,
			  const char *output, const char *who)
{
	if (s->violations)
		snap_warn(
			"dropped %llu event%s outside the trace scope (%s), first: %s; decode with "
			"-trace-include-kernel to keep them, or -strict-scope to refuse such input",
			(unsigned long long)s->violations, s->violations == 1 ? "" : "s",
			snap_scope_name(scope), s->first_violation);
	if (s->depth_capped)
		snap_warn("dropped %llu call%s nested deeper than %d frames (the most Perfetto "
			  "shows)",
			  (unsigned long long)s->depth_capped, s->depth_capped == 1 ? "" : "s",
			  SNAP_DECODE_MAX_DEPTH);
	if (s->trap_mismatch)
		snap_warn("OCaml try-block depth mismatch %llu time%s: did PT drop data?",
			  (unsigned long long)s->trap_mismatch, s->trap_mismatch == 1 ? "" : "s");
	if (s->inferred_capped)
		snap_warn("dropped %llu return%s without a call ([unknown] frames) nested deeper "
			  "than %d frames (the most Perfetto shows)",
			  (unsigned long long)s->inferred_capped,
			  s->inferred_capped == 1 ? "" : "s", SNAP_DECODE_MAX_DEPTH);
	if (s->time_backwards)
		snap_warn("%llu event time%s went backwards (damaged or merged input): clamped to "
			  "the thread's latest time",
			  (unsigned long long)s->time_backwards, s->time_backwards == 1 ? "" : "s");
	if (s->decode_errors)
		snap_warn("%s reported %llu decode error%s (gaps in the trace, marked "
			  "[decode error: ...] in the timeline)",
			  who, (unsigned long long)s->decode_errors,
			  s->decode_errors == 1 ? "" : "s");
	snap_info("stats: %llu events, %llu threads, %llu samples, %llu unmatched returns, "
		  "%llu times clamped, %llu odd branch kinds, %llu transaction events dropped",
		  (unsigned long long)s->events, (unsigned long long)s->threads,
		  (unsigned long long)s->samples, (unsigned long long)s->unmatched_returns,
		  (unsigned long long)s->time_backwards, (unsigned long long)s->unexpected,
		  (unsigned long long)s->tx_dropped);
	{
		char line[512];

		if (snap_decodemsg_chains(s, line, sizeof(line)))
			snap_info("%s", line);
		if (snap_decodemsg_switches(s, line, sizeof(line)))
			snap_info("%s", line);
		if (snap_decodemsg_gaps(s, line, sizeof(line)))
			snap_warn("%s", line);
		if (snap_decodemsg_quality(s, line, sizeof(line)))
			snap_warn("%s", line);
	}
	if (output) {
		char what[96];

		if (s->filtered_out)
			snap_warn("wrote %s (%llu of %llu events inside -filter's regions, %s); "
				  "open it at https://ui.perfetto.dev",
				  output, (unsigned long long)(s->events - s->filtered_out),
				  (unsigned long long)s->events, made_from(s, what, sizeof(what)));
		else
			snap_warn("wrote %s (%s); open it at https://ui.perfetto.dev", output,
				  made_from(s, what, sizeof(what)));
	}
}

void snap_decodemsg_fxt(const struct snap_fxt_stats *s)
{
	if (s->clamped_times)
		snap_warn("%llu timestamp%s lay beyond 2^63 ns (292 years) after the first event "
			  "(damaged input?): written as the latest time FXT can hold",
			  (unsigned long long)s->clamped_times, s->clamped_times == 1 ? "" : "s");
	if (s->bad_utf8)
		snap_warn("%llu name%s not UTF-8: each bad byte is shown as U+FFFD",
			  (unsigned long long)s->bad_utf8, s->bad_utf8 == 1 ? " was" : "s were");
}
