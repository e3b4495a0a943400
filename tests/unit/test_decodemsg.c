// SPDX-License-Identifier: GPL-2.0
/* cli/decodemsg: the decode's sentences, worded from stack/'s counters. */
#include <string.h>

#include "cli/decodemsg.h"
#include "snap_test.h"

/* --- from stack/ --- */

/* The stack-quality line names the fix for what it found: frame pointers or
 * dwarf for cut chains (never dwarf to a dwarf recording), debug symbols for
 * frames without a symbol; nothing below the sample minimum. */
static void quality(void)
{
	struct snap_builder_stats s;
	char line[512];

	memset(&s, 0, sizeof(s));
	s.samples = 3;
	s.chains_cut = 1;
	CHECK_INT_EQ(0, snap_decodemsg_quality(&s, line, sizeof(line))); /* too few samples */
	CHECK_STR_EQ("", line);
	s.samples = 100;
	s.chains_cut = 40;
	CHECK_INT_EQ(1, snap_decodemsg_quality(&s, line, sizeof(line)));
	CHECK_STR_EQ("stack quality: 40% of the call chains were cut at an address outside any "
		     "executable mapping (code without frame pointers: record with "
		     "-callgraph-mode dwarf, or build with -fno-omit-frame-pointer)",
		     line);
	s.dwarf = 1;
	CHECK_INT_EQ(1, snap_decodemsg_quality(&s, line, sizeof(line)));
	CHECK(strstr(line, "40% of the call chains were cut") != NULL);
	CHECK(strstr(line, "record with -callgraph-mode dwarf") == NULL);
	CHECK(strstr(line, "dwarf unwinder") != NULL);
	s.chains_cut = 10;
	s.user_frames = 8;
	s.unknown_frames = 7;
	CHECK_INT_EQ(1, snap_decodemsg_quality(&s, line, sizeof(line)));
	CHECK_STR_EQ("stack quality: 87% of the sampled user frames have no symbol (install the "
		     "debug symbol packages, e.g. PKG-dbgsym, or build with -g)",
		     line);
	s.unknown_frames = 1;
	CHECK_INT_EQ(0, snap_decodemsg_quality(&s, line, sizeof(line)));
	CHECK_INT_EQ(0, snap_decodemsg_quality(&s, line, 0));
	/* dwarf chains that end short of a thread's start (a stack deeper than the copy) */
	s.chains_rootless = 60;
	CHECK_INT_EQ(1, snap_decodemsg_quality(&s, line, sizeof(line)));
	CHECK_STR_EQ("stack quality: 60% of the call chains end short of where their thread "
		     "started (no _start or clone at their outer end: the dwarf unwinder stopped "
		     "early, at a stack deeper than its 8 KiB copy or at code it cannot unwind; "
		     "-callgraph-mode fp for code built with frame pointers)",
		     line);
	s.dwarf = 0; /* fp chains: never said (a cut one is counted as such) */
	CHECK_INT_EQ(0, snap_decodemsg_quality(&s, line, sizeof(line)));
}

/* The info and warning lines of a sampled decode: chains, switches, gaps. */
static void lines(void)
{
	struct snap_builder_stats s;
	char line[512];

	memset(&s, 0, sizeof(s));
	CHECK_INT_EQ(0, snap_decodemsg_chains(&s, line, sizeof(line)));
	CHECK_INT_EQ(0, snap_decodemsg_switches(&s, line, sizeof(line)));
	CHECK_INT_EQ(0, snap_decodemsg_gaps(&s, line, sizeof(line)));
	CHECK_STR_EQ("", line);
	s.samples = 3;
	s.unknown_frames = 2;
	s.user_frames = 5;
	s.chains_cut = 1;
	s.frames_cut = 4;
	CHECK_INT_EQ(1, snap_decodemsg_chains(&s, line, sizeof(line)));
	CHECK_STR_EQ("call chains: 2 of 5 user frames without a symbol; 1 chains cut at an address "
		     "outside any executable mapping (4 frames removed)",
		     line);
	s.switches_ignored = 1;
	CHECK_INT_EQ(1, snap_decodemsg_switches(&s, line, sizeof(line)));
	CHECK(strstr(line, "context switches: 0 out (0 preempted), 0 back in,") == line);
	CHECK(strstr(line, "; 1 switch records of untraced threads ignored") != NULL);
	s.gaps_inferred = 1;
	s.gap_ns = 1500000000u;
	CHECK_INT_EQ(1, snap_decodemsg_gaps(&s, line, sizeof(line)));
	CHECK(strstr(line, "1 gap of more than 4 sample periods between samples (1.500 s in all) "
			   "inferred as off-CPU") == line);
}

int main(void)
{
	RUN(quality);
	RUN(lines);
	return snap_test_done();
}
