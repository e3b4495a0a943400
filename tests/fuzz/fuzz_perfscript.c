// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the perf script text parser. The input is parsed twice with
 * one string table: once in a single feed, once in chunks whose sizes come
 * from a PRNG seeded by the input, draining next() after every feed. Both
 * runs must give the same events (differential oracle); every event must be
 * well formed. Any violation traps.
 */
#include <stdint.h>
#include <string.h>

#include "parse/perfscript.h"
#include "util/strtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK_OR_TRAP(c)                                                                           \
	do {                                                                                       \
		if (!(c))                                                                          \
			__builtin_trap();                                                          \
	} while (0)

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_loc(uint64_t h, const struct snap_loc *l, const struct snap_strtab *st)
{
	CHECK_OR_TRAP(l->sym <= st->count && l->dso <= st->count);
	h = mix(h, l->ip);
	h = mix(h, l->off);
	h = mix(h, l->sym);
	return mix(h, l->dso);
}

static uint64_t hash_event(const struct snap_event *ev, const struct snap_strtab *st)
{
	uint64_t h = 0;
	char desc[256];

	CHECK_OR_TRAP(snap_event_desc(st, ev, NULL, desc, sizeof(desc))[0] != '\0');
	CHECK_OR_TRAP(strcmp(snap_br_kind_name(ev->br_kind), "?") != 0);
	CHECK_OR_TRAP(ev->kind >= SNAP_EV_BRANCH && ev->kind <= SNAP_EV_TASK);
	CHECK_OR_TRAP(ev->task_exit <= 1 && (ev->kind == SNAP_EV_TASK || !ev->task_exit));
	CHECK_OR_TRAP(ev->sw_out <= 1 && ev->sw_preempt <= ev->sw_out);
	CHECK_OR_TRAP(ev->kind == SNAP_EV_SWITCH || (!ev->sw_out && !ev->sw_preempt));
	CHECK_OR_TRAP(ev->br_kind <= SNAP_BR_VMEXIT && ev->br_state <= SNAP_BR_END);
	CHECK_OR_TRAP(ev->in_tx <= 1 && ev->has_time <= 1);
	CHECK_OR_TRAP(ev->comm <= st->count && ev->msg <= st->count && ev->event <= st->count);
	CHECK_OR_TRAP(ev->nframes <= SNAP_PERFSCRIPT_MAX_FRAMES);
	CHECK_OR_TRAP(!ev->nframes || ev->frames);
	CHECK_OR_TRAP(ev->kind == SNAP_EV_SAMPLE || ev->kind == SNAP_EV_SWITCH || ev->nframes == 0);
	h = mix(h, ev->kind);
	h = mix(h, (uint32_t)ev->pid);
	h = mix(h, (uint32_t)ev->tid);
	h = mix(h, ev->comm);
	h = mix(h, ev->time);
	h = mix(h, ev->has_time);
	h = mix(h, ev->br_kind);
	h = mix(h, ev->br_state);
	h = mix(h, ev->in_tx);
	h = mix(h, ev->sw_out);
	h = mix(h, ev->sw_preempt);
	h = hash_loc(h, &ev->src, st);
	h = hash_loc(h, &ev->dst, st);
	h = mix(h, ev->msg);
	h = mix(h, ev->freq_mhz);
	h = mix(h, ev->event);
	h = mix(h, ev->period);
	for (uint32_t i = 0; i < ev->nframes; i++)
		h = hash_loc(h, &ev->frames[i], st);
	return mix(h, ev->nframes);
}

struct result {
	uint64_t hash, events, lines, unknown;
};

static void drain(struct snap_perfscript *ps, struct snap_strtab *st, struct result *res)
{
	struct snap_event ev;
	int r;

	while ((r = snap_perfscript_next(ps, &ev)) == 1) {
		res->hash = mix(res->hash, hash_event(&ev, st));
		res->events++;
	}
	CHECK_OR_TRAP(r == 0);
}

static void run(const uint8_t *data, size_t size, int chunked, struct snap_strtab *st,
		struct result *res)
{
	struct snap_perfscript ps;
	uint64_t rng = 0x2545f4914f6cdd1dull;
	size_t off = 0;

	memset(res, 0, sizeof(*res));
	CHECK_OR_TRAP(snap_perfscript_init(&ps, st) == 0);
	for (size_t i = 0; i < size && i < 8; i++)
		rng = mix(rng, data[i]);
	while (off < size) {
		size_t n = size - off;

		if (chunked) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			/* mostly small chunks, sometimes large ones */
			n = (rng & 0x100) ? 1 + (rng >> 20) % 4096 : 1 + (rng >> 20) % 16;
			if (n > size - off)
				n = size - off;
		}
		CHECK_OR_TRAP(snap_perfscript_feed(&ps, (const char *)data + off, n) == 0);
		off += n;
		drain(&ps, st, res);
	}
	snap_perfscript_finish(&ps);
	drain(&ps, st, res);
	drain(&ps, st, res); /* stays done */
	res->lines = snap_perfscript_stats(&ps)->lines;
	res->unknown = snap_perfscript_stats(&ps)->unknown_lines;
	CHECK_OR_TRAP(res->events == snap_perfscript_stats(&ps)->events);
	CHECK_OR_TRAP(res->events <= res->lines && res->unknown <= res->lines);
	CHECK_OR_TRAP(snap_perfscript_line(&ps) == res->lines);
	snap_perfscript_fini(&ps);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_strtab st;
	struct result whole, chunks;

	snap_strtab_init(&st);
	run(data, size, 0, &st, &whole);
	run(data, size, 1, &st, &chunks);
	CHECK_OR_TRAP(whole.hash == chunks.hash);
	CHECK_OR_TRAP(whole.events == chunks.events);
	CHECK_OR_TRAP(whole.lines == chunks.lines);
	CHECK_OR_TRAP(whole.unknown == chunks.unknown);
	snap_strtab_fini(&st);
	return 0;
}
