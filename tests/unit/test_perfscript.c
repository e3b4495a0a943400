// SPDX-License-Identifier: GPL-2.0
/*
 * Table-driven tests of the `perf script` text parser. Every event is turned
 * into one canonical text line (desc) and compared; the output struct is
 * pre-filled with 0xff and fields that do not belong to the event's kind
 * must come back 0.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/perfscript.h"
#include "snap_test.h"
#include "util/alloc.h"
#include "util/strtab.h"

static struct snap_strtab st;

static void app(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void app(char *out, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(out);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out + n, cap - n, fmt, ap);
	va_end(ap);
}

static void desc_loc(char *out, size_t cap, const struct snap_loc *l)
{
	app(out, cap, "%" PRIx64, l->ip);
	if (l->sym)
		app(out, cap, " %s+0x%" PRIx64, snap_strtab_get(&st, l->sym), l->off);
	else if (l->off)
		app(out, cap, " ?+0x%" PRIx64, l->off);
	if (l->dso)
		app(out, cap, " (%s)", snap_strtab_get(&st, l->dso));
	if (l->inlined)
		app(out, cap, " [inlined]");
}

static const char *const state_names[] = {"-", "start", "end"};

static int loc_zero(const struct snap_loc *l)
{
	return !l->ip && !l->off && !l->sym && !l->dso;
}

/* One line per event; also checks that fields outside the kind are 0. */
static void desc_event(char *out, size_t cap, const struct snap_event *ev)
{
	int clean = 1;

	out[0] = '\0';
	switch (ev->kind) {
	case SNAP_EV_BRANCH:
		app(out, cap, "B");
		break;
	case SNAP_EV_ERROR:
		app(out, cap, "E");
		break;
	case SNAP_EV_POWER:
		app(out, cap, "P");
		break;
	case SNAP_EV_SAMPLE:
		app(out, cap, "S");
		break;
	case SNAP_EV_EXTRA:
		app(out, cap, "X");
		break;
	case SNAP_EV_SWITCH:
		app(out, cap, "W");
		break;
	case SNAP_EV_TASK:
		app(out, cap, ev->task_exit ? "X" : "F");
		break;
	default:
		app(out, cap, "?%d", (int)ev->kind);
		return;
	}
	app(out, cap, " %d/%d", ev->pid, ev->tid);
	if (ev->has_time == 1)
		app(out, cap, " t=%" PRIu64, ev->time);
	else if (ev->has_time != 0 || ev->time != 0)
		clean = 0;
	if (ev->comm)
		app(out, cap, " comm=%s", snap_strtab_get(&st, ev->comm));
	if (ev->kind == SNAP_EV_BRANCH) {
		app(out, cap, " %s %s%s ", snap_br_kind_name(ev->br_kind),
		    ev->br_state < 3 ? state_names[ev->br_state] : "BAD", ev->in_tx ? " tx" : "");
		desc_loc(out, cap, &ev->src);
		app(out, cap, " => ");
		desc_loc(out, cap, &ev->dst);
	} else if (ev->br_kind || ev->br_state || ev->in_tx || !loc_zero(&ev->dst)) {
		clean = 0;
	}
	if (ev->kind == SNAP_EV_ERROR) {
		app(out, cap, " ip=");
		desc_loc(out, cap, &ev->src);
		app(out, cap, " msg=%s", snap_strtab_get(&st, ev->msg));
	} else if (ev->msg) {
		clean = 0;
	}
	if (ev->kind == SNAP_EV_POWER) {
		app(out, cap, " %u MHz at ", ev->freq_mhz);
		desc_loc(out, cap, &ev->src);
	} else if (ev->freq_mhz) {
		clean = 0;
	}
	if (ev->kind == SNAP_EV_SAMPLE || ev->kind == SNAP_EV_EXTRA ||
	    (ev->kind == SNAP_EV_SWITCH && ev->event)) {
		app(out, cap, " %s/%" PRIu64, ev->event ? snap_strtab_get(&st, ev->event) : "-",
		    ev->period);
	} else if (ev->event || ev->period) {
		clean = 0;
	}
	if (ev->kind == SNAP_EV_SWITCH)
		app(out, cap, " %s%s", ev->sw_out ? "out" : "in", ev->sw_preempt ? " preempt" : "");
	else if (ev->sw_out || ev->sw_preempt)
		clean = 0;
	if (ev->kind == SNAP_EV_EXTRA) {
		app(out, cap, " at ");
		desc_loc(out, cap, &ev->src);
	}
	if (ev->kind == SNAP_EV_SAMPLE || ev->kind == SNAP_EV_SWITCH) {
		for (uint32_t i = 0; i < ev->nframes; i++) {
			app(out, cap, " | ");
			desc_loc(out, cap, &ev->frames[i]);
		}
		if (ev->nframes == 0 && ev->frames)
			clean = 0;
		if (ev->kind == SNAP_EV_SWITCH && !ev->event && ev->nframes)
			clean = 0; /* PERF_RECORD_SWITCH lines have no chain */
	} else if (ev->nframes || ev->frames) {
		clean = 0;
	}
	if (ev->kind == SNAP_EV_SAMPLE && !loc_zero(&ev->src))
		clean = 0;
	if (!clean)
		app(out, cap, " UNCLEAN");
}

/* Parses text fed in chunks of `chunk` bytes (0 = all at once), draining after
 * each feed; writes one desc line per event into out. Returns 0 or the error. */
static int parse_all(const char *text, size_t len, size_t chunk, char *out, size_t cap,
		     struct snap_perfscript_stats *stats)
{
	struct snap_perfscript ps;
	struct snap_event ev;
	char line[4096];
	size_t off = 0;
	int r;

	out[0] = '\0';
	r = snap_perfscript_init(&ps, &st);
	if (r < 0)
		return r;
	if (!chunk)
		chunk = len ? len : 1;
	do {
		size_t n = len - off < chunk ? len - off : chunk;

		r = snap_perfscript_feed(&ps, text + off, n);
		if (r < 0)
			goto out;
		off += n;
		if (off == len)
			snap_perfscript_finish(&ps);
		for (;;) {
			memset(&ev, 0xff, sizeof(ev));
			r = snap_perfscript_next(&ps, &ev);
			if (r < 0)
				goto out;
			if (r == 0)
				break;
			desc_event(line, sizeof(line), &ev);
			app(out, cap, "%s\n", line);
		}
	} while (off < len);
	memset(&ev, 0xff, sizeof(ev));
	r = snap_perfscript_next(&ps, &ev); /* all done: stays 0 */
	if (r != 0)
		r = -EPROTO;
out:
	if (stats)
		*stats = *snap_perfscript_stats(&ps);
	snap_perfscript_fini(&ps);
	return r;
}

static char got[1 << 20];

/* ---- single lines: one event each ---- */

struct line_case {
	const char *in;
	const char *want; /* desc of the one event */
};

#define T "/path/to/target"

static const struct line_case branch_cases[] = {
	/* -F pid,tid,time,flags,ip,addr,sym,symoff,dso (no event) */
	{" 4242/4242  0.001000000:   call                   401007 _start+0x7 (" T
	 ")  =>           4010e2 cmain+0x0 (" T ")",
	 "B 4242/4242 t=1000000 call - 401007 _start+0x7 (" T ") => 4010e2 cmain+0x0 (" T ")"},
	/* with synth,event,period */
	{" 4242/4242  0.001000119:          1 branches:uH:   call                   40106e "
	 "work+0x23 (" T ")   =>   40100d op_add+0x0 (" T ")",
	 "B 4242/4242 t=1000119 call - 40106e work+0x23 (" T ") => 40100d op_add+0x0 (" T ")"},
	{"  4242  0.001000000:  1 branches:u:  return  4010e1 emit+0x43 (" T
	 ")   =>   40110c cmain+0x2a (" T ")",
	 "B -1/4242 t=1000000 return - 4010e1 emit+0x43 (" T ") => 40110c cmain+0x2a (" T ")"},
	/* every kind */
	{"4242 1.000000000:   jmp    401000 a+0x0 (" T ") =>  401010 b+0x0 (" T ")",
	 "B -1/4242 t=1000000000 jmp - 401000 a+0x0 (" T ") => 401010 b+0x0 (" T ")"},
	{"4242 1.0:   jcc    401000 a+0x0 (" T ") =>  401010 a+0x10 (" T ")",
	 "B -1/4242 t=1000000000 jmp - 401000 a+0x0 (" T ") => 401010 a+0x10 (" T ")"},
	{"1 1.0: int 1 a+0x1 (/d) => 2 b+0x2 (/d)",
	 "B -1/1 t=1000000000 int - 1 a+0x1 (/d) => 2 b+0x2 (/d)"},
	{"1 1.0: hw int 1 a+0x1 (/d) => 2 b+0x2 (/d)",
	 "B -1/1 t=1000000000 hw int - 1 a+0x1 (/d) => 2 b+0x2 (/d)"},
	{"1 1.0:   hw    int   1 a+0x1 (/d) => 2 b+0x2 (/d)",
	 "B -1/1 t=1000000000 hw int - 1 a+0x1 (/d) => 2 b+0x2 (/d)"},
	{"1 1.0: iret 1 a+0x1 (/d) => 2 b+0x2 (/d)",
	 "B -1/1 t=1000000000 iret - 1 a+0x1 (/d) => 2 b+0x2 (/d)"},
	{"1 1.0: syscall 1 a+0x1 (/d) => 2 b+0x2 (/d)",
	 "B -1/1 t=1000000000 syscall - 1 a+0x1 (/d) => 2 b+0x2 (/d)"},
	{"1 1.0: sysret 1 a+0x1 (/d) => 2 b+0x2 (/d)",
	 "B -1/1 t=1000000000 sysret - 1 a+0x1 (/d) => 2 b+0x2 (/d)"},
	{"1 1.0: tx abrt 1 a+0x1 (/d) => 2 b+0x2 (/d)",
	 "B -1/1 t=1000000000 tx abrt - 1 a+0x1 (/d) => 2 b+0x2 (/d)"},
	{"1 1.0: async 1 a+0x1 (/d) => 2 b+0x2 (/d)",
	 "B -1/1 t=1000000000 async - 1 a+0x1 (/d) => 2 b+0x2 (/d)"},
	{"1 1.0: vmentry 1 a+0x1 (/d) => 2 b+0x2 (/d)",
	 "B -1/1 t=1000000000 vmentry - 1 a+0x1 (/d) => 2 b+0x2 (/d)"},
	{"1 1.0: vmexit 1 a+0x1 (/d) => 2 b+0x2 (/d)",
	 "B -1/1 t=1000000000 vmexit - 1 a+0x1 (/d) => 2 b+0x2 (/d)"},
	/* trace start/end */
	{" 4242  0.001000000:   tr strt                     0 [unknown] ([unknown]) =>  401000 "
	 "_start+0x0 (" T ")",
	 "B -1/4242 t=1000000 none start 0 => 401000 _start+0x0 (" T ")"},
	{"1 1.0:   tr strt jmp   0 [unknown] ([unknown]) =>  401000 x+0x0 (/d)",
	 "B -1/1 t=1000000000 none start 0 => 401000 x+0x0 (/d)"},
	{"1 1.0:   tr end        401000 x+0x0 (/d) =>  0 [unknown] ([unknown])",
	 "B -1/1 t=1000000000 none end 401000 x+0x0 (/d) => 0"},
	{" 4242  0.001003031:   tr end  syscall        4010df emit+0x41 (" T
	 ")   =>       0 [unknown] ([unknown])",
	 "B -1/4242 t=1003031 syscall end 4010df emit+0x41 (" T ") => 0"},
	{"1 1.0:   tr end  async  401000 x+0x0 (/d) =>  0 [unknown] ([unknown])",
	 "B -1/1 t=1000000000 async end 401000 x+0x0 (/d) => 0"},
	{"1 1.0:   tr end  call  401000 x+0x0 (/d) =>  0 [unknown] ([unknown])",
	 "B -1/1 t=1000000000 call end 401000 x+0x0 (/d) => 0"},
	{"1 1.0:   tr end  return  401000 x+0x0 (/d) =>  0 [unknown] ([unknown])",
	 "B -1/1 t=1000000000 return end 401000 x+0x0 (/d) => 0"},
	{"1 1.0:   tr end  sysret  401000 x+0x0 (/d) =>  0 [unknown] ([unknown])",
	 "B -1/1 t=1000000000 sysret end 401000 x+0x0 (/d) => 0"},
	{"1 1.0:   tr end  iret  401000 x+0x0 (/d) =>  0 [unknown] ([unknown])",
	 "B -1/1 t=1000000000 iret end 401000 x+0x0 (/d) => 0"},
	{"1 1.0:   tr end  jmp  401000 x+0x0 (/d) =>  0 [unknown] ([unknown])",
	 "B -1/1 t=1000000000 none end 401000 x+0x0 (/d) => 0"},
	{"1 1.0:   tr strt tr end  401000 x+0x0 (/d) =>  401010 x+0x10 (/d)",
	 "B -1/1 t=1000000000 none - 401000 x+0x0 (/d) => 401010 x+0x10 (/d)"},
	/* markers */
	{"1 1.0:   call            (x)   401000 x+0x0 (/d) =>  401010 y+0x0 (/d)",
	 "B -1/1 t=1000000000 call - tx 401000 x+0x0 (/d) => 401010 y+0x0 (/d)"},
	{"1 1.0:   call (D)(x)  401000 x+0x0 (/d) =>  401010 y+0x0 (/d)",
	 "B -1/1 t=1000000000 call - tx 401000 x+0x0 (/d) => 401010 y+0x0 (/d)"},
	{"1 1.0:   jcc (D)  (t)  401000 x+0x0 (/d) =>  401010 x+0x10 (/d)",
	 "B -1/1 t=1000000000 jmp - 401000 x+0x0 (/d) => 401010 x+0x10 (/d)"},
	/* unnamed flag combinations print as letters (PERF_IP_FLAG_CHARS) */
	{"1 1.0:   bcyi  401000 x+0x0 (/d) =>  401010 y+0x0 (/d)",
	 "B -1/1 t=1000000000 hw int - 401000 x+0x0 (/d) => 401010 y+0x0 (/d)"},
	/* no flags field at all */
	{"1 1.0:  401000 x+0x0 (/d) =>  401010 y+0x0 (/d)",
	 "B -1/1 t=1000000000 none - 401000 x+0x0 (/d) => 401010 y+0x0 (/d)"},
	/* comm (right-aligned, with spaces) and cpu */
	{"      busy prog  4242/4243 [001]  12.5:   call  401000 x+0x0 (/d) =>  401010 y+0x0 (/d)",
	 "B 4242/4243 t=12500000000 comm=busy prog call - 401000 x+0x0 (/d) => 401010 y+0x0 "
	 "(/d)"},
	{"kworker/0:1 7 1.0: call 401000 x+0x0 (/d) => 401010 y+0x0 (/d)",
	 "B -1/7 t=1000000000 comm=kworker/0:1 call - 401000 x+0x0 (/d) => 401010 y+0x0 (/d)"},
	/* no dso, no symoff, neither */
	{"1 1.0: call 401007 _start+0x7  =>  4010e2 cmain+0x0",
	 "B -1/1 t=1000000000 call - 401007 _start+0x7 => 4010e2 cmain+0x0"},
	{"1 1.0: call 401007 _start (/d) =>  4010e2 cmain (/d)",
	 "B -1/1 t=1000000000 call - 401007 _start+0x0 (/d) => 4010e2 cmain+0x0 (/d)"},
	{"1 1.0: call 401007 _start =>  4010e2 cmain",
	 "B -1/1 t=1000000000 call - 401007 _start+0x0 => 4010e2 cmain+0x0"},
	{"1 1.0: call 401007 =>  4010e2", "B -1/1 t=1000000000 call - 401007 => 4010e2"},
	/* unknown symbols: unsigned hex of the ip, with the dso */
	{"1 1.0: call ffffffff81000000 [unknown] ([unknown]) =>  7f0000001000 [unknown] "
	 "(/lib/x.so)",
	 "B -1/1 t=1000000000 call - ffffffff81000000 [unknown @ 0xffffffff81000000 ([unknown])]"
	 "+0x0 => 7f0000001000 [unknown @ 0x7f0000001000 (/lib/x.so)]+0x0 (/lib/x.so)"},
	{"1 1.0: call 1000 [unknown] =>  0 [unknown]",
	 "B -1/1 t=1000000000 call - 1000 [unknown @ 0x1000]+0x0 => 0"},
	/* symbols with =>, spaces, +, commas, templates, operators */
	{"1 1.0: call 401000 a => b+0x1 (/d) =>  401010 c => d+0x2 (/d)",
	 "B -1/1 t=1000000000 call - 401000 a => b+0x1 (/d) => 401010 c => d+0x2 (/d)"},
	{"1 1.0: call 401000 std::vector<int, std::allocator<int> >::push_back(int const&)+0x1f "
	 "(/usr/bin/my prog (deleted)) =>  401010 operator+(a, b)+0x0 (/usr/bin/my prog "
	 "(deleted))",
	 "B -1/1 t=1000000000 call - 401000 std::vector<int, std::allocator<int> "
	 ">::push_back(int const&)+0x1f (/usr/bin/my prog (deleted)) => 401010 operator+(a, "
	 "b)+0x0 (/usr/bin/my prog (deleted))"},
	{"1 1.0: call 401000 foo+0x10bar+0x5 (/d) =>  401010 operator() (/d)",
	 "B -1/1 t=1000000000 call - 401000 foo+0x10bar+0x5 (/d) => 401010 operator()+0x0 (/d)"},
	{"1 1.0: call 401000 x+0x1 (/tmp/a (1)/b.so) =>  401010 y (/tmp/a (1)/b.so)",
	 "B -1/1 t=1000000000 call - 401000 x+0x1 (/tmp/a (1)/b.so) => 401010 y+0x0 (/tmp/a "
	 "(1)/b.so)"},
	/* offsets >= 2^63, and longer than 64 bits */
	{"1 1.0: call 401000 memcpy@plt+0xffffffffff22f000 (/d) =>  401010 x+0x1ffffffffffffffff "
	 "(/d)",
	 "B -1/1 t=1000000000 call - 401000 memcpy@plt+0xffffffffff22f000 (/d) => 401010 "
	 "x+0xffffffffffffffff (/d)"},
	/* runs of spaces and tabs everywhere */
	{"  \t4242/4242\t 0.000000001:\t  call  \t  401000   x+0x0   (/d)   =>   401010   y+0x0   "
	 "(/d)   ",
	 "B 4242/4242 t=1 call - 401000 x+0x0 (/d) => 401010 y+0x0 (/d)"},
	/* pid/tid 0 and -1 as printed; times padded and truncated */
	{"0/0 726.111154: call 1 x+0x0 (/d) => 2 y+0x0 (/d)",
	 "B 0/0 t=726111154000 call - 1 x+0x0 (/d) => 2 y+0x0 (/d)"},
	{"-1/-1 726.1111543901234: call 1 x+0x0 (/d) => 2 y+0x0 (/d)",
	 "B -1/-1 t=726111154390 call - 1 x+0x0 (/d) => 2 y+0x0 (/d)"},
	{"5/6 18446744073.709551615: call 1 x+0x0 (/d) => 2 y+0x0 (/d)",
	 "B 5/6 t=18446744073709551615 call - 1 x+0x0 (/d) => 2 y+0x0 (/d)"},
	/* no time field (perf refuses -F time on timeless PT data): needs pid/tid */
	{" 4242/4242   call   401007 _start+0x7 (/t)  =>   4010e2 cmain+0x0 (/t)",
	 "B 4242/4242 call - 401007 _start+0x7 (/t) => 4010e2 cmain+0x0 (/t)"},
	{"  target  4242/4243 [001]  1 branches:uH:  tr strt  0 [unknown] ([unknown]) =>  401000 "
	 "x+0x0 (/t)",
	 "B 4242/4243 comm=target none start 0 => 401000 x+0x0 (/t)"},
	/* instruction trace errors */
	{" instruction trace error type 1 time 0.001000477 cpu -1 pid 4242 tid 4242 ip 0x400000 "
	 "code 5: Failed to get instruction",
	 "E 4242/4242 t=1000477 ip=400000 msg=Failed to get instruction"},
	{" instruction trace error type 1 cpu 0 pid -1 tid -1 ip 0 code 6: Overflow packet",
	 "E -1/-1 ip=0 msg=Overflow packet"},
	{" instruction trace error type 1 cpu 2 pid 0 tid 0 ip 0xffffffff81000000 code 7: "
	 "Never-ending loop (refer perf config intel-pt.max-loops)",
	 "E 0/0 ip=ffffffff81000000 msg=Never-ending loop (refer perf config intel-pt.max-loops)"},
	{" instruction trace error type 1 time 5.5 cpu 1 pid 3 tid 4 ip 0x10 code 2: Lost trace "
	 "data machine_pid 9 vcpu 1",
	 "E 3/4 t=5500000000 ip=10 msg=Lost trace data"},
	/* cbr */
	{" 4242  0.002000000:   1 cbr:   cbr: 46 freq: 4606 MHz (159%)   0   401000 x+0x0 (/d)",
	 "P -1/4242 t=2000000 4606 MHz at 401000 x+0x0 (/d)"},
	{" 4242  0.002000000:   tr end    cbr:  8 freq:  801 MHz ( 28%)",
	 "P -1/4242 t=2000000 801 MHz at 0"},
	{"1/1 0.5: cbr: cbr: 8 freq: 801 MHz 401000 x+0x0 (/d)",
	 "P 1/1 t=500000000 801 MHz at 401000 x+0x0 (/d)"},
};

static void branch_and_single_lines(void)
{
	for (size_t i = 0; i < sizeof(branch_cases) / sizeof(branch_cases[0]); i++) {
		const struct line_case *c = &branch_cases[i];
		struct snap_perfscript_stats stats;
		char want[4096];
		int r;

		snprintf(want, sizeof(want), "%s\n", c->want);
		r = parse_all(c->in, strlen(c->in), 0, got, sizeof(got), &stats);
		CHECK_INT_EQ(0, r);
		CHECK_STR_EQ(want, got);
		CHECK_U64_EQ(0, stats.unknown_lines);
		CHECK_U64_EQ(1, stats.events);
		CHECK_U64_EQ(1, stats.lines);
		if (strcmp(want, got) || stats.unknown_lines)
			fprintf(stderr, "  case %zu: %s\n  first unknown: %s\n", i, c->in,
				stats.first_unknown);
	}
}

/* ---- multi-line inputs ---- */

struct text_case {
	const char *name;
	const char *in;
	const char *want; /* desc lines */
	uint64_t unknown;
};

static const struct text_case text_cases[] = {
	/* perf script's inlined frames (default --inline, a -O2 -g libm on Debian): the
	 * frame is kept and marked, in the DSO of the function it was inlined into (the
	 * next outer frame at its address; none: unknown); the second sample takes the
	 * symbol cache's path */
	{"sample with inlined frames",
	 "sinp  2344   756.570950:     500000 cpu-clock: \n"
	 "\t           702df libc_feholdsetround_sse_ctx+0x1f (inlined)\n"
	 "\t           702df __sin_fma+0x1f (/usr/lib/x86_64-linux-gnu/libm.so.6)\n"
	 "\t            123b work+0x5b (/tmp/rpt/sinp)\n"
	 "\t           27304 __libc_start_main_impl+0x84 (inlined)\n"
	 "\t            1110 _start+0x20 (/tmp/rpt/sinp)\n"
	 "\n"
	 "sinp  2344   756.571450:     500000 cpu-clock: \n"
	 "\t           702df libc_feholdsetround_sse_ctx+0x1f (inlined)\n"
	 "\t           702df __sin_fma+0x1f (/usr/lib/x86_64-linux-gnu/libm.so.6)\n"
	 "\n",
	 "S -1/2344 t=756570950000 comm=sinp cpu-clock/500000 | 1110 _start+0x20 "
	 "(/tmp/rpt/sinp) | 27304 __libc_start_main_impl+0x84 [inlined] | "
	 "123b work+0x5b (/tmp/rpt/sinp) | 702df __sin_fma+0x1f "
	 "(/usr/lib/x86_64-linux-gnu/libm.so.6) | 702df libc_feholdsetround_sse_ctx+0x1f "
	 "(/usr/lib/x86_64-linux-gnu/libm.so.6) [inlined]\n"
	 "S -1/2344 t=756571450000 comm=sinp cpu-clock/500000 | 702df __sin_fma+0x1f "
	 "(/usr/lib/x86_64-linux-gnu/libm.so.6) | 702df libc_feholdsetround_sse_ctx+0x1f "
	 "(/usr/lib/x86_64-linux-gnu/libm.so.6) [inlined]\n",
	 0},
	{"sample with chain (pid,tid,time,ip,sym,symoff,dso,event,period)",
	 " 8569/8569    708.065246383:    1000000 cpu-clock: \n"
	 "\t            125e leaf+0x1e (/tmp/ps/busy prog)\n"
	 "\t            11b4 mid+0x24 (/tmp/ps/busy prog)\n"
	 "\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
	 "\n"
	 " 8569/8570    708.065840928:    1000000 cpu-clock: \n"
	 "\tffffffff815e2d5f vm_normal_page+0x1f ([kernel.kallsyms])\n"
	 "\t           20d07 mprotect+0x7 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n"
	 "\t               0 [unknown] ([unknown])\n"
	 "\n",
	 "S 8569/8569 t=708065246383 cpu-clock/1000000 | 2724a __libc_start_call_main+0x7a "
	 "(/usr/lib/x86_64-linux-gnu/libc.so.6) | 11b4 mid+0x24 (/tmp/ps/busy prog) | 125e "
	 "leaf+0x1e (/tmp/ps/busy prog)\n"
	 "S 8569/8570 t=708065840928 cpu-clock/1000000 | 0 | 20d07 mprotect+0x7 "
	 "(/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2) | ffffffff815e2d5f "
	 "vm_normal_page+0x1f ([kernel.kallsyms])\n",
	 0},
	{"comm form, extra event with chain, modifiers stripped, finish closes",
	 "busy prog  8573/8573    708.268324599:    1000000 cpu-clock:u: \n"
	 "\t            1265 leaf+0x25 (/tmp/ps/busy prog)\n"
	 "\t            11b4 mid+0x24 (/tmp/ps/busy prog)\n"
	 "\n"
	 "busy prog  8573/8573    708.268331319:    50  branch-misses/period=50/uP: \n"
	 "\t            1265 leaf+0x25 (/tmp/ps/busy prog)\n"
	 "\t            11b4 mid+0x24 (/tmp/ps/busy prog)\n"
	 "\n"
	 "busy prog  8573/8574    708.268943420:    1000000 cpu-clock:u: \n"
	 "\t            1251 [unknown] (/tmp/ps/busy prog)",
	 "S 8573/8573 t=708268324599 comm=busy prog cpu-clock/1000000 | 11b4 mid+0x24 "
	 "(/tmp/ps/busy prog) | 1265 leaf+0x25 (/tmp/ps/busy prog)\n"
	 "X 8573/8573 t=708268331319 comm=busy prog branch-misses/50 at 1265 leaf+0x25 "
	 "(/tmp/ps/busy prog)\n"
	 "S 8573/8574 t=708268943420 comm=busy prog cpu-clock/1000000 | 1251 [unknown @ 0x1251 "
	 "(/tmp/ps/busy prog)]+0x0 (/tmp/ps/busy prog)\n",
	 0},
	{"default-ish form: comm tid (no blank line between records)",
	 "busy prog  8569   708.065246383:    1000000 cpu-clock: \n"
	 "\t            125e leaf+0x1e (/tmp/ps/busy prog)\n"
	 "busy prog  8570   708.065840928:    1000000 cpu-clock: \n"
	 "\t            1265 leaf+0x25 (/tmp/ps/busy prog)\n",
	 "S -1/8569 t=708065246383 comm=busy prog cpu-clock/1000000 | 125e leaf+0x1e (/tmp/ps/busy "
	 "prog)\n"
	 "S -1/8570 t=708065840928 comm=busy prog cpu-clock/1000000 | 1265 leaf+0x25 (/tmp/ps/busy "
	 "prog)\n",
	 0},
	{"no event field; -G prints the ip on the header; zero-chain sample",
	 "23473/23473   726.111154390: \n"
	 "\t            11f0 top+0x0 (/path/to/work)\n"
	 "\n"
	 " 8569/8569    708.065246383:      55d058aec25e leaf\n"
	 " 8569/8569    708.065246384: \n"
	 "\n"
	 " 8569/8569    708.065246385:  1000 task-clock: \n",
	 "S 23473/23473 t=726111154390 -/0 | 11f0 top+0x0 (/path/to/work)\n"
	 "S 8569/8569 t=708065246383 -/0 | 55d058aec25e leaf+0x0\n"
	 "S 8569/8569 t=708065246384 -/0\n"
	 "S 8569/8569 t=708065246385 task-clock/1000\n",
	 0},
	{"PT mode: no primary, extra events without chain (addr column)",
	 " 4242  0.001000000:          1 branches:uH:   call  401007 _start+0x7 (/d)  =>  4010e2 "
	 "cmain+0x0 (/d)\n"
	 " 4242  0.001000100:         50 branch-misses/period=50/u:                 0   401007 "
	 "_start+0x7 (/d)\n"
	 " 4242  0.001000200:         10 cache-misses:u:                 7f00   401010 "
	 "cmain+0x2e (/d)\n"
	 " 4242  0.001000300:         50 branch-misses/period=50/u:   401007 _start+0x7 (/d)\n",
	 "B -1/4242 t=1000000 call - 401007 _start+0x7 (/d) => 4010e2 cmain+0x0 (/d)\n"
	 "X -1/4242 t=1000100 branch-misses/50 at 401007 _start+0x7 (/d)\n"
	 "X -1/4242 t=1000200 cache-misses/10 at 401010 cmain+0x2e (/d)\n"
	 "X -1/4242 t=1000300 branch-misses/50 at 401007 _start+0x7 (/d)\n",
	 0},
	{"psb and other PT synth events are skipped silently",
	 " 4242  0.001000000:   1 psb:   psb offs: 0x4be8    0 [unknown] ([unknown])\n"
	 " 4242  0.001000000:   psb offs: 0x4be8\n"
	 " 4242  0.001000000:   1 pwre:   hw: 0 cstate: 2 sub-cstate: 0   0 x (/d)\n"
	 " 4242  0.001000000:   1 exstop:  IP: 0  0 x (/d)\n"
	 " 4242  0.001000000:   1 ptwrite:u:  IP: 0 payload: 0x1234  0 x (/d)\n"
	 " 4242  0.001000000:   1 mwait:  hints: 0x1 extensions: 0x0  0 x (/d)\n"
	 " 4242  0.001000000:   1 pwrx:  deepest cstate: 1 last cstate: 1 wake reason: 0x4\n"
	 " 4242  0.001000000:   hw: 0 cstate: 2 sub-cstate: 0\n"
	 " 4242  0.001000000:   call 1 x+0x0 (/d) => 2 y+0x0 (/d)\n"
	 " 4242  0.001000000:   tr end   0 401000 x+0x0 (/d)\n",
	 "B -1/4242 t=1000000 call - 1 x+0x0 (/d) => 2 y+0x0 (/d)\n", 0},
	{"PT synth events printed without event/synth fields are skipped silently",
	 " 4242/4242      0.001000000:                                        0                0 "
	 "[unknown] ([unknown])\n"
	 " 4242     0.001000000:                                        0                0\n"
	 " 4242/4242      0.001000000:   tr strt                               0 [unknown] "
	 "([unknown]) =>           401000 _start+0x0 (/t)\n"
	 " 4242/4242      0.001000001:   tr end                           401000 _start+0x0 "
	 "(/t)\n",
	 "B 4242/4242 t=1000000 none start 0 => 401000 _start+0x0 (/t)\n", 0},
	{"comments and side-band records are skipped silently",
	 "# ========\n# captured on: x\n"
	 "busy 27991/27991  2688.804279715: PERF_RECORD_MMAP2 27991/27991: [0x56(0x1000) @ 0x1000 "
	 "fe:00 1 2]: r-xp /path/to/work\n"
	 "busy 27991/27991  2688.808674499: PERF_RECORD_FORK(27992:27992):(27991:27991)\n",
	 "F 27992/27992 t=2688808674499 comm=busy\n", 0},
	/* perf script --show-task-events (docs/sampling.md "Threads born and exiting"): a
	 * fork names the child, an exit the thread; only an exec's COMM is a birth */
	{"task events",
	 "perf-exec     0/0         0.000000000: PERF_RECORD_COMM: perf-exec:30401/30401\n"
	 "wake 30401/30401   620.383718822: PERF_RECORD_COMM exec: wake:30401/30401\n"
	 "wake 30401/30401   620.384447169: PERF_RECORD_FORK(30401:30402):(30401:30401)\n"
	 "tpr  9178/9185    929.464128878: PERF_RECORD_EXIT(9178:9185):(9161:9161)\n"
	 "a:b 5/6    9.000000001: PERF_RECORD_COMM exec: a:b:5/6\n"
	 "x 1/1  1.000000000: PERF_RECORD_EXIT(1:\n"
	 "x 1/1  1.000000000: PERF_RECORD_COMM exec: x\n",
	 "F 30401/30401 t=620383718822 comm=wake\n"
	 "F 30401/30402 t=620384447169 comm=wake\n"
	 "X 9178/9185 t=929464128878 comm=tpr\n"
	 "F 5/6 t=9000000001 comm=a:b\n",
	 0},
	/* golden inputs start with such a line (tests/golden/run.sh); the dlfilter path
	 * hands perf's text to this same parser */
	{"a '# purpose:' line before branches is skipped silently",
	 "# purpose: a call => return (x: y)\n"
	 " 4242  0.001000000:   call 1 x+0x0 (/d) => 2 y+0x0 (/d)\n",
	 "B -1/4242 t=1000000 call - 1 x+0x0 (/d) => 2 y+0x0 (/d)\n", 0},
	{"a '# purpose:' line before samples is skipped silently",
	 "# purpose: one sample, one frame: 11f0 top+0x0\n"
	 "23473/23473   726.111154390: \n"
	 "\t            11f0 top+0x0 (/path/to/work)\n",
	 "S 23473/23473 t=726111154390 -/0 | 11f0 top+0x0 (/path/to/work)\n", 0},
	{"context switches, per thread and cpu-wide",
	 "busy 27991/27991  2688.808674499: PERF_RECORD_SWITCH OUT preempt\n"
	 "busy 27991/27991  2688.808674599: PERF_RECORD_SWITCH IN         \n"
	 "busy 27991/27991 [001] 2688.808675000: PERF_RECORD_SWITCH_CPU_WIDE OUT  next pid/tid: "
	 "   0/0    \n"
	 "busy 27991/27992 [000] 2688.808676000: PERF_RECORD_SWITCH_CPU_WIDE IN  prev pid/tid: "
	 "   0/0    \n"
	 "busy 27991/27991  2688.808677000: PERF_RECORD_SWITCH SIDEWAYS\n",
	 "W 27991/27991 t=2688808674499 comm=busy out preempt\n"
	 "W 27991/27991 t=2688808674599 comm=busy in\n"
	 "W 27991/27991 t=2688808675000 comm=busy out\n"
	 "W 27991/27992 t=2688808676000 comm=busy in\n",
	 0},
	{"sched_switch samples are switch-outs with their chain, never the primary event",
	 "busy 5/6  1.000000000:          1 sched:sched_switch: \n"
	 "\tffffffff821facd8 __schedule+0x618 ([kernel.kallsyms])\n"
	 "\t           cf503 clock_nanosleep+0x23 (/lib/libc.so.6)\n"
	 "\t            1292 outer+0xe (/d)\n"
	 "\n"
	 "busy 5/6  1.000000100:    1001001 cpu-clock: \n"
	 "\t            1290 outer+0xc (/d)\n"
	 "\n"
	 "busy 5/6  1.000000200:          1 sched:sched_switch: \n"
	 "\t            1291 outer+0xd (/d)\n",
	 "W 5/6 t=1000000000 comm=busy sched:sched_switch/1 out | 1292 outer+0xe (/d) | cf503 "
	 "clock_nanosleep+0x23 (/lib/libc.so.6) | ffffffff821facd8 __schedule+0x618 "
	 "([kernel.kallsyms])\n"
	 "S 5/6 t=1000000100 comm=busy cpu-clock/1001001 | 1290 outer+0xc (/d)\n"
	 "W 5/6 t=1000000200 comm=busy sched:sched_switch/1 out | 1291 outer+0xd (/d)\n",
	 0},
	{"errors in between records end them",
	 "1/1 1.0: 1 cpu-clock: \n"
	 "\t  10 a+0x0 (/d)\n"
	 " instruction trace error type 1 cpu -1 pid 1 tid 1 ip 0 code 5: Failed to get "
	 "instruction\n"
	 "\t  20 b+0x0 (/d)\n",
	 "S 1/1 t=1000000000 cpu-clock/1 | 10 a+0x0 (/d)\n"
	 "E 1/1 ip=0 msg=Failed to get instruction\n",
	 1},
	{"garbage is counted, never fatal",
	 "hello world\n"
	 "\tstray frame line\n"
	 "1 1.0: cbr: cbr: 8 MHz\n"
	 "1/1 1.0: 1 cpu-clock: \n"
	 "\tnot a frame\n"
	 "\t  10 a+0x0 (/d)\n"
	 " instruction trace error type x\n"
	 " instruction trace error type 1 cpu 0 pid 1 tid 1 ip zz code 5: m\n"
	 "1 1.0: 1 branches:u: call 1 x+0x0 (/d)\n"
	 "1 99999999999999.5: call 1 x+0x0 (/d) => 2 y+0x0 (/d)\n"
	 "1 1.0: call 11111111111111111 x+0x0 (/d) => 2 y+0x0 (/d)\n"
	 "1 1.0: zz top\n"
	 "1 1.0: call 1 x+0x0 (/d) => 2 y+0x0 (/d)\r\n"
	 "4242 call 1 x+0x0 (/d) => 2 y+0x0 (/d)\n"
	 "\x01\x02\xff\xfe\n",
	 "S 1/1 t=1000000000 cpu-clock/1 | 10 a+0x0 (/d)\n"
	 "B -1/1 t=1000000000 call - 1 x+0x0 (/d) => 2 y+0x0 (/d)\n",
	 12},
};

static void text_inputs(void)
{
	for (size_t i = 0; i < sizeof(text_cases) / sizeof(text_cases[0]); i++) {
		const struct text_case *c = &text_cases[i];
		struct snap_perfscript_stats stats;
		int r = parse_all(c->in, strlen(c->in), 0, got, sizeof(got), &stats);

		CHECK_INT_EQ(0, r);
		CHECK_STR_EQ(c->want, got);
		CHECK_U64_EQ(c->unknown, stats.unknown_lines);
		if (strcmp(c->want, got) || c->unknown != stats.unknown_lines)
			fprintf(stderr, "  case \"%s\": first unknown line %" PRIu64 ": %s\n",
				c->name, stats.first_unknown_line, stats.first_unknown);
	}
}

/* Every chunking gives the same events as one feed. */
static void chunking_does_not_matter(void)
{
	static char ref[1 << 16];

	for (size_t i = 0; i < sizeof(text_cases) / sizeof(text_cases[0]); i++) {
		const char *in = text_cases[i].in;
		size_t len = strlen(in);
		int ok = 1;

		CHECK_INT_EQ(0, parse_all(in, len, 0, ref, sizeof(ref), NULL));
		for (size_t chunk = 1; chunk <= 67; chunk++) {
			struct snap_perfscript_stats stats;

			if (parse_all(in, len, chunk, got, sizeof(got), &stats) != 0 ||
			    strcmp(ref, got) || stats.unknown_lines != text_cases[i].unknown) {
				fprintf(stderr, "  case %zu chunk %zu differs:\n%s", i, chunk, got);
				ok = 0;
				break;
			}
		}
		CHECK(ok);
	}
}

static void stats_and_line_numbers(void)
{
	const char *in = "1 1.0: call 1 x+0x0 (/d) => 2 y+0x0 (/d)\n"
			 "\n"
			 "what\x01 is this\n"
			 "nor this\n";
	struct snap_perfscript_stats stats;
	struct snap_perfscript ps;
	struct snap_event ev;

	CHECK_INT_EQ(0, parse_all(in, strlen(in), 0, got, sizeof(got), &stats));
	CHECK_U64_EQ(4, stats.lines);
	CHECK_U64_EQ(1, stats.events);
	CHECK_U64_EQ(2, stats.unknown_lines);
	CHECK_U64_EQ(3, stats.first_unknown_line);
	CHECK_STR_EQ("what? is this", stats.first_unknown);

	CHECK_INT_EQ(0, snap_perfscript_init(&ps, &st));
	CHECK_U64_EQ(0, snap_perfscript_line(&ps));
	CHECK_INT_EQ(0, snap_perfscript_next(&ps, &ev));
	CHECK_INT_EQ(0, snap_perfscript_feed(&ps, in, 10));
	CHECK_INT_EQ(0, snap_perfscript_next(&ps, &ev)); /* no full line yet */
	CHECK_INT_EQ(0, snap_perfscript_feed(&ps, in + 10, strlen(in) - 10));
	CHECK_INT_EQ(1, snap_perfscript_next(&ps, &ev));
	CHECK_U64_EQ(1, snap_perfscript_line(&ps));
	CHECK_INT_EQ(0, snap_perfscript_next(&ps, &ev));
	CHECK_U64_EQ(4, snap_perfscript_line(&ps));
	snap_perfscript_finish(&ps);
	CHECK_INT_EQ(0, snap_perfscript_next(&ps, &ev));
	CHECK_INT_EQ(0, snap_perfscript_next(&ps, &ev));
	CHECK_U64_EQ(2, snap_perfscript_stats(&ps)->unknown_lines);
	snap_perfscript_fini(&ps);
	snap_perfscript_fini(&ps); /* double fini is harmless */
}

/* A record stays open until the next line shows it is complete. */
static void record_completes_only_when_closed(void)
{
	struct snap_perfscript ps;
	struct snap_event ev;
	const char *hdr = "1/1 1.0: 1 cpu-clock: \n\t  10 a+0x0 (/d)\n";

	CHECK_INT_EQ(0, snap_perfscript_init(&ps, &st));
	CHECK_INT_EQ(0, snap_perfscript_feed(&ps, hdr, strlen(hdr)));
	CHECK_INT_EQ(0, snap_perfscript_next(&ps, &ev));
	CHECK_INT_EQ(0, snap_perfscript_feed(&ps, "\t  20 b+0x0 (/d)\n", 17));
	CHECK_INT_EQ(0, snap_perfscript_next(&ps, &ev));
	CHECK_INT_EQ(0, snap_perfscript_feed(&ps, "1/1 2.0: 1 cpu-clock: \n", 23));
	CHECK_INT_EQ(1, snap_perfscript_next(&ps, &ev));
	CHECK_INT_EQ(SNAP_EV_SAMPLE, ev.kind);
	CHECK_INT_EQ(2, ev.nframes);
	CHECK_U64_EQ(0x20, ev.frames[0].ip);
	CHECK_U64_EQ(0x10, ev.frames[1].ip);
	CHECK_INT_EQ(0, snap_perfscript_next(&ps, &ev));
	snap_perfscript_finish(&ps);
	CHECK_INT_EQ(1, snap_perfscript_next(&ps, &ev));
	CHECK_U64_EQ(2000000000, ev.time);
	CHECK_INT_EQ(0, ev.nframes);
	CHECK_INT_EQ(0, snap_perfscript_next(&ps, &ev));
	CHECK_U64_EQ(2, snap_perfscript_stats(&ps)->events);
	snap_perfscript_fini(&ps);
}

/* Lines over the limit are skipped (memory stays bounded) and counted. */
static void overlong_lines(void)
{
	size_t big = SNAP_PERFSCRIPT_MAX_LINE + 3 * 65536, chunk = 65536;
	char *junk = malloc(chunk);
	const char *ok = "1 1.0: call 1 x+0x0 (/d) => 2 y+0x0 (/d)\n";
	struct snap_perfscript ps;
	struct snap_event ev;
	int n = 0;

	CHECK(junk != NULL);
	if (!junk)
		return;
	memset(junk, 'a', chunk);
	CHECK_INT_EQ(0, snap_perfscript_init(&ps, &st));
	for (int round = 0; round < 2; round++) {
		CHECK_INT_EQ(0, snap_perfscript_feed(&ps, ok, strlen(ok)));
		/* round 0: fed in chunks, never holding a full line; round 1: TAB line */
		for (size_t fed = 0; fed < big; fed += chunk) {
			if (round == 1 && fed == 0)
				junk[0] = '\t';
			CHECK_INT_EQ(0, snap_perfscript_feed(&ps, junk, chunk));
			junk[0] = 'a';
			while (snap_perfscript_next(&ps, &ev) == 1)
				n++;
			CHECK(ps.cap <= 2 * (SNAP_PERFSCRIPT_MAX_LINE + chunk));
		}
		CHECK_INT_EQ(0, snap_perfscript_feed(&ps, "tail\n", 5));
		CHECK_INT_EQ(0, snap_perfscript_feed(&ps, ok, strlen(ok)));
		while (snap_perfscript_next(&ps, &ev) == 1)
			n++;
	}
	snap_perfscript_finish(&ps);
	while (snap_perfscript_next(&ps, &ev) == 1)
		n++;
	CHECK_INT_EQ(4, n);
	CHECK_U64_EQ(2, snap_perfscript_stats(&ps)->unknown_lines);
	CHECK_U64_EQ(2, snap_perfscript_stats(&ps)->first_unknown_line);
	CHECK_INT_EQ(159, (int)strlen(snap_perfscript_stats(&ps)->first_unknown));
	CHECK_U64_EQ(6, snap_perfscript_stats(&ps)->lines);
	snap_perfscript_fini(&ps);

	/* an overlong line fed in one piece with its newline */
	{
		size_t len = SNAP_PERFSCRIPT_MAX_LINE + 10;
		char *line = malloc(len + strlen(ok) + 1);
		struct snap_perfscript_stats stats;

		CHECK(line != NULL);
		if (line) {
			memset(line, 'b', len);
			line[len - 1] = '\n';
			strcpy(line + len, ok);
			CHECK_INT_EQ(0, parse_all(line, strlen(line), 0, got, sizeof(got), &stats));
			CHECK_U64_EQ(1, stats.unknown_lines);
			CHECK_U64_EQ(1, stats.events);
			free(line);
		}
	}
	free(junk);
}

/* The same ip with different texts (DSO-relative ips collide) is not
 * confused by the symbol cache; many distinct ips evict cleanly. */
static void symbol_cache_checks_text(void)
{
	const char *in = "1 1.0: call 11f0 top+0x0 (/a) => 11f0 other+0x10 (/b)\n"
			 "1 1.0: call 11f0 top+0x0 (/a) => 11f0 [unknown] (/c)\n"
			 "1 1.0: call 11f0 [unknown] (/c) => 11f0 top+0x0 (/a)\n";
	char buf[200000];
	size_t n = 0;

	CHECK_INT_EQ(0, parse_all(in, strlen(in), 0, got, sizeof(got), NULL));
	CHECK_STR_EQ("B -1/1 t=1000000000 call - 11f0 top+0x0 (/a) => 11f0 other+0x10 (/b)\n"
		     "B -1/1 t=1000000000 call - 11f0 top+0x0 (/a) => 11f0 [unknown @ 0x11f0 "
		     "(/c)]+0x0 (/c)\n"
		     "B -1/1 t=1000000000 call - 11f0 [unknown @ 0x11f0 (/c)]+0x0 (/c) => 11f0 "
		     "top+0x0 (/a)\n",
		     got);
	for (int i = 0; i < 3000; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "1 1.0: call %x f%d+0x%x (/d) => %x f%d+0x0 (/d)\n",
				      0x1000 + i * 16, i, i, 0x1000 + (i % 7) * 16, i % 7);
	{
		struct snap_perfscript_stats stats;

		CHECK_INT_EQ(0, parse_all(buf, n, 0, got, sizeof(got), &stats));
		CHECK_U64_EQ(3000, stats.events);
		CHECK_U64_EQ(0, stats.unknown_lines);
		CHECK(strstr(got, "call - 1000 f0+0x0 (/d) => 1000 f0+0x0 (/d)\n") != NULL);
		CHECK(strstr(got, "call - cb70 f2999+0xbb7 (/d) => 1030 f3+0x0 (/d)\n") != NULL);
	}
}

/* Call chains are capped (leaf side kept); the excess is counted once. */
static void frame_cap(void)
{
	size_t n = SNAP_PERFSCRIPT_MAX_FRAMES + 5, len = 0;
	char *in = malloc(n * 24 + 64);
	struct snap_perfscript ps;
	struct snap_event ev;

	CHECK(in != NULL);
	if (!in)
		return;
	len += (size_t)sprintf(in, "1/1 1.0: 1 cpu-clock: \n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(in + len, "\t %zx f (/d)\n", i + 1);
	CHECK_INT_EQ(0, snap_perfscript_init(&ps, &st));
	CHECK_INT_EQ(0, snap_perfscript_feed(&ps, in, len));
	CHECK_INT_EQ(0, snap_perfscript_feed(&ps, NULL, 0));
	snap_perfscript_finish(&ps);
	CHECK_INT_EQ(1, snap_perfscript_next(&ps, &ev));
	CHECK_INT_EQ(SNAP_EV_SAMPLE, ev.kind);
	CHECK_U64_EQ(SNAP_PERFSCRIPT_MAX_FRAMES, ev.nframes);
	CHECK_U64_EQ(SNAP_PERFSCRIPT_MAX_FRAMES, ev.frames[0].ip);
	CHECK_U64_EQ(1, ev.frames[ev.nframes - 1].ip);
	CHECK_INT_EQ(0, snap_perfscript_next(&ps, &ev));
	CHECK_U64_EQ(0, snap_perfscript_stats(&ps)->unknown_lines); /* not "not understood" */
	CHECK_U64_EQ(n - SNAP_PERFSCRIPT_MAX_FRAMES, snap_perfscript_stats(&ps)->dropped_frames);
	CHECK_U64_EQ(n + 1, snap_perfscript_stats(&ps)->lines);
	snap_perfscript_fini(&ps);
	free(in);
}

/* Every allocation failure gives -ENOMEM (and no leak under ASan). */
static void allocation_failures(void)
{
	const char *in = text_cases[1].in;
	size_t len = strlen(in);
	int saw_ok = 0, saw_enomem = 0;

	for (long n = 0; n < 200 && !saw_ok; n++) {
		struct snap_strtab local;
		struct snap_strtab saved = st;
		int r;

		snap_strtab_init(&local);
		st = local;
		snap_alloc_fail_after(n);
		r = parse_all(in, len, 7, got, sizeof(got), NULL);
		snap_alloc_fail_after(-1);
		snap_strtab_fini(&st);
		st = saved;
		if (r == 0)
			saw_ok = 1;
		else if (r == -ENOMEM)
			saw_enomem = 1;
		else
			CHECK_INT_EQ(-ENOMEM, r);
	}
	CHECK(saw_ok);
	CHECK(saw_enomem);
}

int main(void)
{
	snap_strtab_init(&st);
	RUN(branch_and_single_lines);
	RUN(text_inputs);
	RUN(chunking_does_not_matter);
	RUN(stats_and_line_numbers);
	RUN(record_completes_only_when_closed);
	RUN(overlong_lines);
	RUN(symbol_cache_checks_text);
	RUN(frame_cap);
	RUN(allocation_failures);
	snap_strtab_fini(&st);
	return snap_test_done();
}
