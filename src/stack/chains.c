// SPDX-License-Identifier: GPL-2.0
/*
 * Junk at the outer end of call chains (docs/sampling.md). See bthread.h.
 */
#include <string.h>

#include "model/names.h"
#include "stack/bthread.h"

/* Is the frame's name one of the "[unknown @ ...]" ones (or none)? */
static int unknown_frame(const struct snap_builder *bld, const struct snap_loc *f)
{
	const char *s;

	if (!f->sym)
		return 1;
	s = snap_strtab_get(bld->st, f->sym);
	return snap_unknown_parse(s, strlen(s), NULL) != 0;
}

/*
 * Junk at the outer end of a call chain (docs/sampling.md). perf walks a
 * frame-pointer chain from the leaf outwards and takes whatever the saved
 * frame pointers point at; in code built without frame pointers that is
 * data, and the "return addresses" it reads are in no executable mapping
 * (perf names them "[unknown]" with no DSO: no symbol, no DSO), or even look
 * like kernel addresses. The real kernel part of a chain is always at its leaf end, so
 * once a user frame was seen, the first frame outwards that has no DSO or a
 * kernel address ends the chain: it and every frame outside it are cut
 * (counted). The leaf-most user frame is the sampled pc itself and stays.
 * A chain in which no frame has a DSO (perf printed none) is only cut at
 * kernel addresses. perf's end-of-chain marker (ip ffffffffffffffff, or 0,
 * at the outer end) is dropped without counting: the chain was not cut.
 * Only the cuts of sample chains are counted (count): the quality line
 * weighs them against the samples (sched_switch chains made it say 109 %).
 * Returns the index of the first frame kept (frames are outermost first).
 */
uint32_t snap_chain_cut(struct snap_builder *bld, const struct snap_loc *fr, uint32_t n, int count)
{
	uint32_t i = n, user = 0, dsos = 0, end = 0;

	while (end < n && (fr[end].ip == UINT64_MAX || !fr[end].ip))
		end++;
	for (uint32_t j = 0; j < n && !dsos; j++)
		dsos = fr[j].dso != 0; /* else perf printed no DSOs at all (-F without dso) */
	while (i > end) {
		const struct snap_loc *f = &fr[--i];

		if (!f->ip)
			continue;
		if (!user) {
			user = !snap_loc_is_kernel(f);
			continue;
		}
		if (snap_loc_is_kernel(f) || (dsos && !f->dso && unknown_frame(bld, f))) {
			if (count) {
				bld->stats.chains_cut++;
				bld->stats.frames_cut += i + 1 - end;
			}
			return i + 1;
		}
	}
	return end < n ? end : 0;
}

/* Is the (named) frame a function threads start in: the program's and the
 * dynamic loader's entry, glibc's thread start, Go's? A complete chain's
 * outermost user frame is one; perf's dwarf unwinder, out of its stack copy,
 * stops anywhere (docs/sampling.md, "Stack quality"). */
static int root_frame(const struct snap_builder *bld, const struct snap_loc *f)
{
	static const char *const roots[] = {
		"_start",
		"_dl_start",
		"_dl_start_user",
		"__libc_start_main",
		"__libc_start_call_main",
		"clone",
		"clone3",
		"__clone",
		"__clone3",
		"start_thread",
		"thread_start",
		"runtime.goexit",
		"runtime.rt0_go",
		"runtime.mstart",
		"runtime.morestack",
	};
	const char *s = snap_strtab_get(bld->st, f->sym);

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		size_t k = strlen(roots[i]);

		/* the name, versioned (clone3@@GLIBC_2.34) or Go's ABI0 wrapper */
		if (!strncmp(s, roots[i], k) &&
		    (s[k] == '\0' || s[k] == '@' || !strcmp(s + k, ".abi0")))
			return 1;
	}
	return 0;
}

/* Counts the user frames of a sample and those without a symbol, and the
 * chain when its outermost user frame is named but no thread starts there. */
void snap_chain_count(struct snap_builder *bld, const struct snap_loc *fr, uint32_t n)
{
	int outer = 1;

	for (uint32_t i = 0; i < n; i++) {
		int unk;

		if (!fr[i].ip || snap_loc_is_kernel(&fr[i]))
			continue;
		unk = unknown_frame(bld, &fr[i]);
		bld->stats.user_frames++;
		bld->stats.unknown_frames += unk;
		if (outer && !unk && !root_frame(bld, &fr[i]))
			bld->stats.chains_rootless++;
		outer = 0;
	}
}
