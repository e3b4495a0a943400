// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for stack/: bytes -> a stream of events (branches of every
 * kind and state, decode errors, samples (cpu-clock ones with idle gaps),
 * context switches, thread births and exits, comm changes,
 * power, extra events, over four
 * threads, with equal and backwards timestamps) -> decoder -> recording
 * timeline. Checks the invariants: no crash, feed/finish succeed (or
 * -SNAP_ESCOPE in strict mode), every track's begins and ends nest after a
 * stable sort by time, every track is announced, and a user-scope trace
 * never shows a kernel address. Option bits of data[1] also turn on OCaml
 * exception notes (fixed trap addresses among the fuzzed ips), the runtime
 * names of the Go and OCaml rules for some symbols, -filter (both passes over
 * the same events) and MAGIC_TRACE_DEBUG names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/mock_timeline.h"
#include "stack/builder.h"
#include "util/err.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz_kind {
	uint8_t ev, kind, state;
};

static const struct fz_kind fz_kinds[] = {
	{SNAP_EV_BRANCH, SNAP_BR_CALL, 0},
	{SNAP_EV_BRANCH, SNAP_BR_RETURN, 0},
	{SNAP_EV_BRANCH, SNAP_BR_JUMP, 0},
	{SNAP_EV_BRANCH, SNAP_BR_JUMP, 0},
	{SNAP_EV_BRANCH, SNAP_BR_CALL, 0},
	{SNAP_EV_BRANCH, SNAP_BR_RETURN, 0},
	{SNAP_EV_BRANCH, SNAP_BR_NONE, SNAP_BR_START},
	{SNAP_EV_BRANCH, SNAP_BR_NONE, SNAP_BR_END},
	{SNAP_EV_BRANCH, SNAP_BR_SYSCALL, SNAP_BR_END},
	{SNAP_EV_BRANCH, SNAP_BR_ASYNC, SNAP_BR_END},
	{SNAP_EV_BRANCH, SNAP_BR_RETURN, SNAP_BR_END},
	{SNAP_EV_BRANCH, SNAP_BR_CALL, SNAP_BR_END},
	{SNAP_EV_BRANCH, SNAP_BR_SYSCALL, 0},
	{SNAP_EV_BRANCH, SNAP_BR_SYSRET, 0},
	{SNAP_EV_BRANCH, SNAP_BR_HWINT, 0},
	{SNAP_EV_BRANCH, SNAP_BR_IRET, 0},
	{SNAP_EV_BRANCH, SNAP_BR_TXABORT, 0},
	{SNAP_EV_BRANCH, SNAP_BR_INT, 0},
	{SNAP_EV_ERROR, 0, 0},
	{SNAP_EV_SAMPLE, 0, 0},
	{SNAP_EV_POWER, 0, 0},
	{SNAP_EV_EXTRA, 0, 0},
	{SNAP_EV_BRANCH, SNAP_BR_IRET, SNAP_BR_END},
	{SNAP_EV_BRANCH, SNAP_BR_SYSRET, SNAP_BR_END},
	{SNAP_EV_BRANCH, SNAP_BR_ASYNC, 0},
	{SNAP_EV_BRANCH, SNAP_BR_CALL, SNAP_BR_START},
	{SNAP_EV_BRANCH, SNAP_BR_VMEXIT, 0},
	{SNAP_EV_BRANCH, SNAP_BR_JUMP, SNAP_BR_END},
	/* context switches: kind 0 = in, 1 = out, 2 = out preempted; with frames
	 * (a sched_switch sample) when the event bit is set */
	{SNAP_EV_SWITCH, 0, 0},
	{SNAP_EV_SWITCH, 1, 0},
	{SNAP_EV_SWITCH, 2, 0},
	{SNAP_EV_SWITCH, 1, 0},
	/* thread births (0) and exits (1) */
	{SNAP_EV_TASK, 0, 0},
	{SNAP_EV_TASK, 1, 0},
};

#define NK (sizeof(fz_kinds) / sizeof(fz_kinds[0]))

static void fz_loc(const uint32_t *syms, uint8_t b, struct snap_loc *l)
{
	int kernel = (b & 8) != 0;

	l->sym = syms[(b & 7) + (kernel ? 8 : 0)];
	l->ip = (kernel ? 0xffffffff81000000ull : 0x400000ull) + (uint64_t)(b & 7) * 0x100 +
		(b >> 5);
	if ((b & 0xf0) == 0xf0) {
		l->ip = 0;
		l->sym = 0;
	}
}

static void fz_fail(const char *what, const struct mock_tl *m)
{
	fprintf(stderr, "fuzz_builder: %s\n%s", what, m->text ? m->text : "");
	abort();
}

/* Trap addresses among the fuzzed user ips (0x400000 + 0x100 * k + 0..7). */
static const uint64_t fz_enter[] = {0x400200, 0x400503};
static const uint64_t fz_push[] = {0x400102, 0x400303};
static const uint64_t fz_pop[] = {0x400105, 0x400306};
static const struct snap_ocaml_eh fz_eh = {fz_enter, fz_push, fz_pop, 2, 2, 2};

/* Names: plain, or (runtime names) those the Go and OCaml rules look for. */
static const char *const fz_runtime[8] = {
	"s0",
	"s1",
	"caml_raise_exception",
	"caml_stash_backtrace",
	"caml_raise_exn",
	"runtime.gogo.abi0",
	"runtime.mcall",
	"caml_next_frame_descriptor",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_builder_opts o = {0};
	struct snap_filter filter;
	struct snap_event *evs = NULL;
	struct snap_loc *fr = NULL;
	size_t nev = 0;
	struct snap_strtab st;
	struct snap_builder bld;
	struct mock_tl m;
	uint32_t syms[16], msg[2], clock;
	uint64_t now = 1000;
	char why[256], name[8];
	size_t i;
	int err;

	if (size < 2)
		return 0;
	if (getenv("FUZZ_BUILDER_TRACE"))
		fprintf(stderr, "scope %d strict %d no_tx %d depth %d\n", data[0] % 3, data[1] & 1,
			(data[1] & 2) != 0, data[1] & 4 ? 4 : 0);
	snap_log_level = SNAP_LOG_QUIET;
	o.scope = (enum snap_scope)(data[0] % 3);
	o.strict_scope = data[1] & 1;
	o.no_tx = (data[1] & 2) != 0;
	o.max_depth = data[1] & 4 ? 4 : 0;
	o.ocaml_eh = data[1] & 8 ? &fz_eh : NULL;
	o.debug_names = (data[1] & 64) != 0;
	snap_strtab_init(&st);
	mock_init(&m, &st);
	for (i = 0; i < 16; i++) {
		snprintf(name, sizeof(name), "%c%zu", i < 8 ? 's' : 'k', i & 7);
		syms[i] = (uint32_t)snap_strtab_intern_cstr(
			&st, i < 8 && (data[1] & 32) ? fz_runtime[i] : name);
	}
	clock = (uint32_t)snap_strtab_intern_cstr(&st, "cpu-clock");
	snap_filter_init(&filter, syms[1], syms[2]);
	evs = calloc(size / 8 + 1, sizeof(*evs));
	fr = calloc(size / 8 + 1, 8 * sizeof(*fr));
	if (!evs || !fr)
		abort();
	msg[0] = (uint32_t)snap_strtab_intern_cstr(&st, "Overflow packet");
	msg[1] = (uint32_t)snap_strtab_intern_cstr(&st, "Lost trace data");
	for (i = 2; i + 8 <= size; i += 8) {
		const uint8_t *b = data + i;
		const struct fz_kind *k = &fz_kinds[b[0] % NK];
		struct snap_event ev = {0};

		ev.kind = (enum snap_ev_kind)k->ev;
		if (ev.kind == SNAP_EV_SWITCH) {
			ev.sw_out = k->kind != 0;
			ev.sw_preempt = k->kind == 2;
		} else if (ev.kind == SNAP_EV_TASK) {
			ev.task_exit = k->kind;
		} else {
			ev.br_kind = k->kind;
			ev.br_state = k->state;
		}
		ev.comm = b[7] & 0x40 ? syms[b[7] & 1] : 0; /* comm changes rename tracks */
		ev.tid = 1 + (b[1] & 3);
		ev.pid = 1 + ((b[1] >> 2) & 1);
		ev.has_time = !(b[1] & 0x80) || ev.kind != SNAP_EV_ERROR;
		if (b[2] == 255)
			now -= 10;
		else if (!(b[2] & 3))
			now += b[2] >> 2;
		ev.time = now;
		fz_loc(syms, b[3], &ev.src);
		fz_loc(syms, b[4], &ev.dst);
		ev.in_tx = (b[5] & 0x80) != 0;
		ev.msg = msg[b[5] & 1];
		ev.freq_mhz = b[6];
		ev.period = b[7];
		/* a clock event's period is CPU ns: idle gaps are inferred from it */
		ev.event = b[6] & 0x80 ? clock : syms[b[5] & 1];
		if (ev.kind == SNAP_EV_SAMPLE ||
		    (ev.kind == SNAP_EV_SWITCH && ev.sw_out && (b[5] & 1))) {
			ev.nframes = b[5] & 7;
			for (uint32_t f = 0; f < ev.nframes; f++)
				fz_loc(syms, (uint8_t)(b[6 + (f & 1)] >> (f & 4)) ^ (uint8_t)f,
				       &fr[nev * 8 + f]);
			ev.frames = &fr[nev * 8];
		}
		evs[nev++] = ev;
	}
	/* -filter: pass 1 over the same events */
	if (data[1] & 16) {
		for (i = 0; i < nev; i++)
			if (snap_filter_scan(&filter, &evs[i]) < 0)
				fz_fail("filter scan", &m);
		snap_filter_pair(&filter);
		o.filter = &filter;
	}
	if (snap_builder_init(&bld, &m.base, &st, &o) < 0)
		fz_fail("init", &m);
	for (i = 0; i < nev; i++) {
		const struct snap_event ev = evs[i];

		if (getenv("FUZZ_BUILDER_TRACE")) {
			char d[256];

			fprintf(stderr, "feed: %s\n", snap_builder_desc(&bld, &ev, d, sizeof(d)));
		}
		err = snap_builder_feed(&bld, &ev);
		if (err < 0 && !(err == -SNAP_ESCOPE && o.strict_scope))
			fz_fail("feed failed", &m);
	}
	if (snap_builder_finish(&bld) < 0)
		fz_fail("finish failed", &m);
	if (!mock_balanced(&m, 1, why, sizeof(why)))
		fz_fail(why, &m);
	if (m.unannounced)
		fz_fail("event on an unannounced track", &m);
	if (o.scope == SNAP_SCOPE_USER && m.text && strstr(m.text, "0xffffffff"))
		fz_fail("kernel address in a user-scope trace", &m);
	snap_builder_fini(&bld);
	snap_filter_fini(&filter);
	mock_fini(&m);
	snap_strtab_fini(&st);
	free(evs);
	free(fr);
	return 0;
}
