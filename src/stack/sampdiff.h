/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stack samples -> slices (docs/behaviour.md §5.1, docs/sampling.md). Each sample
 * (frames outermost first) is compared with the thread's current stack from
 * the outermost frame. What changed is closed, innermost first, and the new
 * frames are opened, outermost first.
 *
 * One call, one slice. A frame of the sample continues the open frame at the
 * same depth when both name the same function (same symbol and same symbol
 * start, ip - off) and the frame above it (its caller) still calls from the
 * same call site: the caller's address in this sample equals the one it had
 * when it was last a caller. A caller address that was only ever seen as a
 * leaf (the pc where the sample interrupted it) is no call site and proves
 * nothing, so it does not split its callee. The leaf's own pc moves from
 * sample to sample inside one call and is never compared. Unknown code has
 * no symbol start: its name carries its address ("[unknown @ 0x...]"), so
 * such a frame continues only at the same address.
 *
 * A frame of a frame-pointer chain marked frameless (model/event.h: no frame
 * of its own at its address, so perf's walk skipped its caller: a leaf in a
 * libc wrapper, a return address into code without frame pointers) that
 * differs from the open frame at its depth, while the frame outside it still
 * calls from the same call site, does not end that open frame: the open frame
 * goes on (it is the caller the chain lost) and the marked frame is compared
 * with the frame open inside it (docs/sampling.md, "Call counts where a
 * frame-pointer chain loses a frame"). Unmarked frames (dwarf chains, files not
 * known) are as above.
 *
 * Design choice: everything happens at the sample time. magic-trace pushes
 * the new frames through the pending-call spreading of docs/behaviour.md §4.3, which draws
 * them as a "staircase" across the gap to the next sample (the k-th of n new
 * frames starting (k-1)/n of the way); the staircase invents timing we do
 * not have, so we open all new frames at the sample time (docs/behaviour.md §8.4).
 */
#ifndef SNAP_STACK_SAMPDIFF_H
#define SNAP_STACK_SAMPDIFF_H

#include <stdint.h>

#include "model/event.h"
#include "stack/cstack.h"
#include "stack/scope.h"

/* What sampdiff remembers of one open frame (parallel to the cstack's frames). */
struct snap_sampdiff_frame {
	uint64_t ip;	/* the address last seen for it */
	uint64_t start; /* ip - off: the function's start (ip when unknown) */
	uint32_t sym;
	uint8_t leaf; /* ip is the pc of a leaf, not a call site */
};

/* One thread's memory of its open frames; zero-initialised, freed by
 * snap_sampdiff_thread_fini. It follows the cstack by depth: frames the
 * cstack lost (restart, end of a snapshot) are forgotten at the next apply. */
struct snap_sampdiff_thread {
	struct snap_sampdiff_frame *f;
	size_t n, cap;
};

/* Frees the thread's frames; sdt is left empty (ready for reuse). */
void snap_sampdiff_thread_fini(struct snap_sampdiff_thread *sdt);

struct snap_sampdiff_stats {
	uint64_t samples;
	uint64_t dropped_frames; /* out of the kept scope */
	uint64_t zero_frames;	 /* address 0: skipped */
	uint64_t empty;		 /* samples with no usable frame (close everything) */
};

/* Applies one sample at time t (from snap_cstack_time) to cs: frames[0..n)
 * outermost first, borrowed for the call; frames not kept (snap_scope_keeps(keep), address 0)
 * are skipped; frames beyond the depth cap are dropped (ctx stats). A sample
 * with no usable frame closes every open frame. sdt is the thread's frame
 * memory (NULL: frames compare by address and symbol only); st may be NULL.
 * Returns 0 or a negative error (-ENOMEM, timeline errors). */
int snap_sampdiff_apply(struct snap_cstack *cs, struct snap_sampdiff_thread *sdt,
			const struct snap_loc *frames, uint32_t n, enum snap_scope keep, uint64_t t,
			struct snap_sampdiff_stats *st);

/* How many of cs's open frames (outermost first) the chain frames[0..n)
 * continues by the rule above, without changing anything. */
size_t snap_sampdiff_common(const struct snap_cstack *cs, const struct snap_sampdiff_thread *sdt,
			    const struct snap_loc *frames, uint32_t n, enum snap_scope keep);

#endif
