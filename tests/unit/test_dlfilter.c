// SPDX-License-Identifier: GPL-2.0
/*
 * The perf plugin (src/plugin/dlfilter.c) against a fake perf: the test
 * includes the plugin's source (the .so itself is built without libsnap, and
 * stays so) and plays perf's part through perf_dlfilter_fns: it resolves
 * addresses from a small symbol table, hands over --dlarg arguments and the
 * event's attr, and calls start / filter_event_early / stop like perf script.
 * The record stream (model/dlrec.h) is written to a memfd and decoded here by
 * hand, byte by byte, so every field of every record kind is pinned. Each test
 * names the rule of the plugin it pins.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include "plugin/dlfilter.c"
#include "snap_test.h"

/* ---- the fake perf ---- */

struct fsym {
	uint64_t start, end;
	const char *name, *dso;
};

/* Two executables: /bin/app (main, foo, bar) and libc (write); 0x7000.. has no symbol. */
static const struct fsym fsyms[] = {
	{0x401000, 0x401100, "main", "/bin/app"}, {0x401100, 0x401200, "foo", "/bin/app"},
	{0x401200, 0x401300, "bar", "/bin/app"},  {0x7f0000, 0x7f0100, "write", "/lib/libc.so.6"},
	{0x7000, 0x8000, NULL, "/tmp/jit.so"},
};
#define DSO_BASE 0x400000 /* what perf's al->addr (mapped) subtracts for /bin/app */

static struct fake {
	const struct perf_dlfilter_sample *cur;
	struct perf_dlfilter_al ip_al, addr_al;
	const char *comm;
	char *argv[8];
	int argc;
	struct perf_event_attr attr;
	int no_attr;
	int resolve_calls; /* resolve_ip + resolve_addr + resolve_address */
} fk;

static int fill_al(uint64_t addr, struct perf_dlfilter_al *al)
{
	memset(al, 0, sizeof(*al));
	al->size = sizeof(*al);
	for (size_t i = 0; i < sizeof(fsyms) / sizeof(fsyms[0]); i++) {
		if (addr < fsyms[i].start || addr >= fsyms[i].end)
			continue;
		al->sym = fsyms[i].name;
		al->sym_start = fsyms[i].name ? fsyms[i].start : 0;
		al->sym_end = fsyms[i].end;
		al->dso = fsyms[i].dso;
		al->addr = addr >= 0x400000 && addr < 0x500000 ? addr - DSO_BASE : addr;
		al->sym_start = fsyms[i].name ? al->sym_start - (addr - al->addr) : 0;
		al->comm = fk.comm;
		return 0;
	}
	al->addr = addr;
	al->comm = fk.comm;
	return -1;
}

static const struct perf_dlfilter_al *fake_resolve_ip(void *ctx)
{
	(void)ctx;
	fk.resolve_calls++;
	fill_al(fk.cur->ip, &fk.ip_al);
	return &fk.ip_al;
}

static const struct perf_dlfilter_al *fake_resolve_addr(void *ctx)
{
	(void)ctx;
	fk.resolve_calls++;
	fill_al(fk.cur->addr, &fk.addr_al);
	return &fk.addr_al;
}

static __s32 fake_resolve_address(void *ctx, __u64 address, struct perf_dlfilter_al *al)
{
	(void)ctx;
	fk.resolve_calls++;
	return fill_al(address, al);
}

static char **fake_args(void *ctx, int *argc)
{
	(void)ctx;
	*argc = fk.argc;
	return fk.argv;
}

static struct perf_event_attr *fake_attr(void *ctx)
{
	(void)ctx;
	return fk.no_attr ? NULL : &fk.attr;
}

/* ---- running the plugin ---- */

static int memfd = -1;
static char fdarg[32];
static void *plugin;

/* Resets the fake; the stream goes to a fresh memfd through "fd=N" plus extra args. */
static void fake_reset(void)
{
	memset(&fk, 0, sizeof(fk));
	perf_dlfilter_fns.resolve_ip = fake_resolve_ip;
	perf_dlfilter_fns.resolve_addr = fake_resolve_addr;
	perf_dlfilter_fns.resolve_address = fake_resolve_address;
	perf_dlfilter_fns.args = fake_args;
	perf_dlfilter_fns.attr = fake_attr;
	fk.attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	fk.comm = "app";
	if (memfd >= 0)
		close(memfd);
	memfd = memfd_create("dlfilter-test", 0);
	snprintf(fdarg, sizeof(fdarg), "fd=%d", dup(memfd));
	fk.argv[fk.argc++] = fdarg;
	fk.argv[fk.argc++] = (char *)"nostdout";
}

static int plugin_start(void)
{
	return start(&plugin, &fk);
}

static int feed(const struct perf_dlfilter_sample *s)
{
	fk.cur = s;
	return filter_event_early(plugin, s, &fk);
}

static struct perf_dlfilter_sample branch(uint32_t flags, int tid, uint64_t time, uint64_t ip,
					  uint64_t addr)
{
	struct perf_dlfilter_sample s;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.event = "branches:u";
	s.flags = flags;
	s.pid = 100;
	s.tid = tid;
	s.time = time;
	s.ip = ip;
	s.addr = addr;
	s.addr_correlates_sym = 1;
	s.period = 1;
	return s;
}

#define CALL	(SNAP_PF_BRANCH | SNAP_PF_CALL)
#define RET	(SNAP_PF_BRANCH | SNAP_PF_RETURN)
#define JMP	SNAP_PF_BRANCH
#define JCC	(SNAP_PF_BRANCH | SNAP_PF_CONDITIONAL)
#define TRSTART (SNAP_PF_BRANCH | SNAP_PF_TRACE_BEGIN)

/* ---- reading the stream back ---- */

struct rec {
	uint32_t kind, len;
	const uint8_t *p;
};

static struct stream {
	uint8_t buf[1 << 16];
	size_t len;
	struct rec recs[256];
	size_t n;
	const char *strs[64]; /* id -> string (a copy), ids < 64 */
	char strbuf[4096];
	size_t strused;
	int bad; /* the framing is broken */
} sm;

static uint32_t g32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t g64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* Stops the plugin and splits what it wrote into records. */
static void plugin_stop(void)
{
	size_t off;

	CHECK_INT_EQ(0, stop(plugin, &fk));
	plugin = NULL;
	memset(&sm, 0, sizeof(sm));
	ssize_t n = pread(memfd, sm.buf, sizeof(sm.buf), 0);
	sm.len = n > 0 ? (size_t)n : 0;
	if (sm.len == 0)
		return;
	if (sm.len < SNAP_DLREC_HDR_SIZE || memcmp(sm.buf, SNAP_DLREC_MAGIC, 8) ||
	    g32(sm.buf + 8) != SNAP_DLREC_VERSION || g32(sm.buf + 12) != SNAP_DLREC_HDR_SIZE) {
		sm.bad = 1;
		return;
	}
	for (off = SNAP_DLREC_HDR_SIZE; off + 8 <= sm.len && sm.n < 256;) {
		struct rec *r = &sm.recs[sm.n++];

		r->kind = g32(sm.buf + off);
		r->len = g32(sm.buf + off + 4);
		r->p = sm.buf + off + 8;
		off += 8 + (size_t)r->len;
		if (off > sm.len) {
			sm.bad = 1;
			return;
		}
		if (r->kind == SNAP_DLREC_STR) {
			uint32_t id = g32(r->p);
			size_t sl = r->len - 4;

			if (id >= 64 || sm.strs[id] || sm.strused + sl + 1 > sizeof(sm.strbuf)) {
				sm.bad = 1; /* ids are new, each sent once */
				return;
			}
			memcpy(sm.strbuf + sm.strused, r->p + 4, sl);
			sm.strbuf[sm.strused + sl] = 0;
			sm.strs[id] = sm.strbuf + sm.strused;
			sm.strused += sl + 1;
		}
	}
	if (off != sm.len)
		sm.bad = 1;
}

static const char *str(uint32_t id)
{
	return id && id < 64 && sm.strs[id] ? sm.strs[id] : "";
}

/* The i-th record of a kind (0-based), or NULL. */
static const struct rec *nth(uint32_t kind, size_t i)
{
	for (size_t k = 0; k < sm.n; k++)
		if (sm.recs[k].kind == kind && i-- == 0)
			return &sm.recs[k];
	return NULL;
}

static size_t count(uint32_t kind)
{
	size_t c = 0;

	for (size_t k = 0; k < sm.n; k++)
		c += sm.recs[k].kind == kind;
	return c;
}

/* END: records, branches, samples, dropped, errors */
static uint64_t end_field(int i)
{
	const struct rec *e = nth(SNAP_DLREC_END, 0);

	return e && e->len >= SNAP_DLREC_END_SIZE ? g64(e->p + 8 * i) : UINT64_MAX;
}

struct dloc {
	uint64_t addr, off;
	const char *sym, *dso;
};

static struct dloc loc_at(const uint8_t *p)
{
	struct dloc l = {g64(p), g64(p + 8), str(g32(p + 16)), str(g32(p + 20))};

	return l;
}

#define CHECK_LOC(l, a, o, s, d)                                                                   \
	do {                                                                                       \
		CHECK_U64_EQ(a, (l).addr);                                                         \
		CHECK_U64_EQ(o, (l).off);                                                          \
		CHECK_STR_EQ(s, (l).sym);                                                          \
		CHECK_STR_EQ(d, (l).dso);                                                          \
	} while (0)

/* The times of the BRANCH records, in stream order, as "t1 t2 ..." */
static const char *branch_times(void)
{
	static char out[256];
	size_t n = 0;
	const struct rec *r;

	out[0] = 0;
	for (size_t i = 0; (r = nth(SNAP_DLREC_BRANCH, i)) != NULL && n < sizeof(out) - 24; i++)
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%" PRIu64, i ? " " : "",
				      g64(r->p + 16));
	return out;
}

/* ---- tests ---- */

/* The stream starts with the 16-byte header and ends with END, counting every record. */
static void header_and_end(void)
{
	fake_reset();
	CHECK_INT_EQ(0, plugin_start());
	plugin_stop();
	CHECK(!sm.bad);
	CHECK_INT_EQ(1, sm.n);
	CHECK_INT_EQ(SNAP_DLREC_END, sm.recs[0].kind);
	CHECK_INT_EQ(SNAP_DLREC_END_SIZE, sm.recs[0].len);
	for (int i = 0; i < 5; i++)
		CHECK_U64_EQ(0, end_field(i));
	CHECK_INT_EQ(SNAP_DLREC_HDR_SIZE + 8 + SNAP_DLREC_END_SIZE, sm.len);
}

/* BRANCH: flags verbatim, pid, tid, reserved 0, time, then src (ip) and dst (addr) as
 * absolute addresses with their offset in the symbol; names and DSOs sent once as STR
 * before first use; the thread's COMM before its first record. */
static void branch_encoding(void)
{
	struct perf_dlfilter_sample a = branch(CALL, 101, 1000, 0x401010, 0x401100),
				    b = branch(RET, 101, 2000, 0x401120, 0x401015);
	const struct rec *r, *c;
	struct dloc l;

	fake_reset();
	CHECK_INT_EQ(0, plugin_start());
	CHECK_INT_EQ(1, feed(&a)); /* hidden from perf's output */
	CHECK_INT_EQ(1, feed(&b));
	plugin_stop();
	CHECK(!sm.bad);
	CHECK_INT_EQ(2, count(SNAP_DLREC_BRANCH));
	/* the event ("branches", modifiers cut), /bin/app, main, foo, the comm: once each */
	CHECK_INT_EQ(5, count(SNAP_DLREC_STR));
	CHECK_STR_EQ("branches", str(1));
	r = nth(SNAP_DLREC_BRANCH, 0);
	c = nth(SNAP_DLREC_COMM, 0);
	CHECK(c != NULL && r != NULL && c < r);
	if (!r || !c)
		return;
	CHECK_INT_EQ(SNAP_DLREC_BRANCH_SIZE, r->len);
	CHECK_INT_EQ(CALL, g32(r->p));
	CHECK_INT_EQ(100, g32(r->p + 4));
	CHECK_INT_EQ(101, g32(r->p + 8));
	CHECK_INT_EQ(0, g32(r->p + 12));
	CHECK_U64_EQ(1000, g64(r->p + 16));
	l = loc_at(r->p + 24);
	CHECK_LOC(l, 0x401010, 0x10, "main", "/bin/app");
	l = loc_at(r->p + 48);
	CHECK_LOC(l, 0x401100, 0, "foo", "/bin/app");
	CHECK_INT_EQ(SNAP_DLREC_COMM_SIZE, c->len);
	CHECK_INT_EQ(100, g32(c->p));
	CHECK_INT_EQ(101, g32(c->p + 4));
	CHECK_STR_EQ("app", str(g32(c->p + 8)));
	r = nth(SNAP_DLREC_BRANCH, 1);
	l = loc_at(r->p + 48);
	CHECK_LOC(l, 0x401015, 0x15, "main", "/bin/app");
	CHECK_U64_EQ(sm.n - 1, end_field(0));
	CHECK_U64_EQ(2, end_field(1));
	CHECK_U64_EQ(0, end_field(2));
	CHECK_U64_EQ(0, end_field(3));
	CHECK_U64_EQ(0, end_field(4));
}

/* Unknown code: ip 0 gives an empty location; an address without a symbol keeps its
 * DSO and sym 0; a target perf cannot correlate (addr_correlates_sym 0) is not resolved. */
static void branch_unknown_locations(void)
{
	struct perf_dlfilter_sample a = branch(TRSTART, 101, 1000, 0, 0x7010),
				    b = branch(CALL, 101, 2000, 0x7020, 0x401100);
	const struct rec *r;
	struct dloc l;

	b.addr_correlates_sym = 0;
	fake_reset();
	CHECK_INT_EQ(0, plugin_start());
	feed(&a);
	feed(&b);
	plugin_stop();
	r = nth(SNAP_DLREC_BRANCH, 0);
	CHECK(r != NULL);
	if (!r)
		return;
	l = loc_at(r->p + 24);
	CHECK_LOC(l, 0, 0, "", "");
	l = loc_at(r->p + 48);
	CHECK_LOC(l, 0x7010, 0, "", "/tmp/jit.so");
	r = nth(SNAP_DLREC_BRANCH, 1);
	l = loc_at(r->p + 48);
	CHECK_LOC(l, 0x401100, 0, "", "");
}

/*
 * Dropped jumps: a plain jmp/jcc is dropped only when source and target are the same
 * known symbol AND that symbol is the top of the thread's stack, as the previous record
 * sent for the thread left it. Everything else is sent.
 */
static void b8_11_jump_dropped_only_at_top_of_stack(void)
{
	struct perf_dlfilter_sample s[] = {
		branch(CALL, 101, 100, 0x401010, 0x401100), /* main -> foo: top foo */
		branch(JCC, 101, 200, 0x401110, 0x401105),  /* in foo, top foo: dropped */
		branch(JMP, 101, 300, 0x401210, 0x401220),  /* in bar, top foo: sent */
		branch(JCC, 101, 400, 0x401230, 0x401205),  /* in bar, top bar now: dropped */
		branch(JCC, 102, 500, 0x401110, 0x401105),  /* other thread, top unknown: sent */
		branch(JCC | SNAP_PF_IN_TX, 101, 600, 0x401230, 0x401205), /* in tx: sent */
		branch(JCC, 101, 700, 0x7010, 0x7020),			   /* unknown code: sent */
		branch(JCC, 101, 800, 0x401110, 0x401210),		   /* foo -> bar: sent */
		branch(JCC, 101, 900, 0x401230, 0x401205),  /* in bar, top bar: dropped */
		branch(RET, 101, 1000, 0x401240, 0x401015), /* bar -> main: sent */
	};

	fake_reset();
	CHECK_INT_EQ(0, plugin_start());
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		CHECK_INT_EQ(1, feed(&s[i]));
	plugin_stop();
	CHECK_STR_EQ("100 300 500 600 700 800 1000", branch_times());
	CHECK_U64_EQ(7, end_field(1));
	CHECK_U64_EQ(3, end_field(3));
}

/* A sample, a trace start or any other non-plain branch makes the top unknown: the next
 * jump is sent, and the jump it sent makes its symbol the top again. */
static void jump_after_unknown_top_is_sent(void)
{
	struct perf_dlfilter_sample s[] = {
		branch(CALL, 101, 100, 0x401010, 0x401100), /* top foo */
		branch(TRSTART, 101, 200, 0, 0x401108),	    /* top unknown */
		branch(JCC, 101, 300, 0x401110, 0x401105),  /* sent: top foo again */
		branch(JCC, 101, 400, 0x401110, 0x401105),  /* dropped */
		branch(SNAP_PF_BRANCH | SNAP_PF_CALL | SNAP_PF_ASYNC | SNAP_PF_INTERRUPT, 101, 500,
		       0x401110, 0x401105), /* an interrupt, not a plain call: top unknown */
		branch(JCC, 101, 600, 0x401110, 0x401105), /* sent */
		branch(RET, 101, 700, 0x401120, 0x401015), /* return into main: top main */
		branch(JCC, 101, 800, 0x401020, 0x401030), /* dropped */
	};
	struct perf_dlfilter_sample smp = branch(0, 101, 900, 0x401040, 0);

	smp.event = "cpu-clock";
	fake_reset();
	CHECK_INT_EQ(0, plugin_start());
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		feed(&s[i]);
	feed(&smp);
	s[7].time = 1000; /* after a sample: sent */
	feed(&s[7]);
	plugin_stop();
	CHECK_STR_EQ("100 200 300 500 600 700 1000", branch_times());
	CHECK_U64_EQ(2, end_field(3));
}

/* keepjumps turns dropping off. */
static void b8_11_keepjumps_sends_every_jump(void)
{
	struct perf_dlfilter_sample a = branch(CALL, 101, 100, 0x401010, 0x401100),
				    b = branch(JCC, 101, 200, 0x401110, 0x401105);

	fake_reset();
	fk.argv[fk.argc++] = (char *)"keepjumps";
	CHECK_INT_EQ(0, plugin_start());
	feed(&a);
	feed(&b);
	plugin_stop();
	CHECK_STR_EQ("100 200", branch_times());
	CHECK_U64_EQ(0, end_field(3));
}

/* A thread's last dropped jump is sent at the end when no record of the thread followed
 * it (its time closes the thread's frames), in time order across threads; a later
 * record of the thread supersedes it. */
static void b8_11_last_dropped_jump_sent_at_end(void)
{
	struct perf_dlfilter_sample s[] = {
		branch(CALL, 101, 100, 0x401010, 0x401100),
		branch(CALL, 102, 110, 0x401010, 0x401100),
		branch(JCC, 101, 200, 0x401110, 0x401105),
		branch(JCC, 101, 300, 0x401110, 0x401105),
		branch(JCC, 102, 250, 0x401110, 0x401105),
		branch(RET, 102, 260, 0x401120, 0x401015),
		branch(CALL, 103, 120, 0x401010, 0x401100),
		branch(JCC, 103, 150, 0x401110, 0x401105),
	};

	fake_reset();
	CHECK_INT_EQ(0, plugin_start());
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		feed(&s[i]);
	plugin_stop();
	/* sent: 100 110 260 120; at the end 103's 150 then 101's 300 (by time) */
	CHECK_STR_EQ("100 110 260 120 150 300", branch_times());
	CHECK_U64_EQ(6, end_field(1));
	CHECK_U64_EQ(2, end_field(3)); /* 200 and 250 */
}

/* SAMPLE: event id (name without modifiers), pid, tid, nframes, time, period, the ip
 * (absolute), then the call chain leaf first without PERF_CONTEXT_* markers, each
 * frame DSO-relative (perf's mapped address) or absolute when perf cannot resolve it. */
static void sample_encoding(void)
{
	const __u64 chain[] = {PERF_CONTEXT_USER, 0x401110, 0x401020, 0x9000};
	struct perf_dlfilter_sample s = branch(0, 101, 5000, 0x401110, 0);
	const struct rec *r;
	struct dloc l;

	s.event = "cpu-clock:u";
	s.period = 250000;
	s.raw_callchain = chain;
	s.raw_callchain_nr = 4;
	fake_reset();
	CHECK_INT_EQ(0, plugin_start());
	CHECK_INT_EQ(1, feed(&s));
	s.raw_callchain = NULL; /* no chain recorded: nframes 0 */
	s.time = 6000;
	CHECK_INT_EQ(1, feed(&s));
	plugin_stop();
	CHECK(!sm.bad);
	CHECK_INT_EQ(2, count(SNAP_DLREC_SAMPLE));
	r = nth(SNAP_DLREC_SAMPLE, 0);
	if (!r)
		return;
	CHECK_INT_EQ(SNAP_DLREC_SAMPLE_SIZE + 3 * SNAP_DLREC_LOC_SIZE, r->len);
	CHECK_STR_EQ("cpu-clock", str(g32(r->p)));
	CHECK_INT_EQ(100, g32(r->p + 4));
	CHECK_INT_EQ(101, g32(r->p + 8));
	CHECK_INT_EQ(3, g32(r->p + 12));
	CHECK_U64_EQ(5000, g64(r->p + 16));
	CHECK_U64_EQ(250000, g64(r->p + 24));
	l = loc_at(r->p + 32);
	CHECK_LOC(l, 0x401110, 0x10, "foo", "/bin/app");
	l = loc_at(r->p + 56);
	CHECK_LOC(l, 0x1110, 0x10, "foo", "/bin/app");
	l = loc_at(r->p + 80);
	CHECK_LOC(l, 0x1020, 0x20, "main", "/bin/app");
	l = loc_at(r->p + 104);
	CHECK_LOC(l, 0x9000, 0, "", "");
	r = nth(SNAP_DLREC_SAMPLE, 1);
	CHECK_INT_EQ(SNAP_DLREC_SAMPLE_SIZE, r->len);
	CHECK_INT_EQ(0, g32(r->p + 12));
	CHECK_U64_EQ(2, end_field(2));
}

/* Event names: "branches" is a branch, "cbr" a POWER record, PT's synthesized psb & co
 * are ignored, anything else a SAMPLE; "/config/" and ":mods" are cut as the text parser
 * cuts them, but "sched:sched_switch" stays whole. */
static void event_kinds(void)
{
	const uint32_t cbr[2] = {0x1f, 2600600}; /* kHz */
	struct perf_dlfilter_sample s = branch(0, 101, 100, 0x401110, 0);
	const struct rec *r;
	struct dloc l;

	fake_reset();
	CHECK_INT_EQ(0, plugin_start());
	s.event = "psb";
	CHECK_INT_EQ(1, feed(&s));
	s.event = "pwre:u";
	CHECK_INT_EQ(1, feed(&s));
	s.event = "cbr";
	s.raw_data = cbr;
	s.raw_size = sizeof(cbr);
	s.time = 200;
	CHECK_INT_EQ(1, feed(&s));
	s.event = "sched:sched_switch";
	s.time = 300;
	CHECK_INT_EQ(1, feed(&s));
	s.event = "branch-misses/period=50/uP";
	s.time = 400;
	CHECK_INT_EQ(1, feed(&s));
	plugin_stop();
	CHECK(!sm.bad);
	CHECK_INT_EQ(0, count(SNAP_DLREC_BRANCH));
	CHECK_INT_EQ(1, count(SNAP_DLREC_POWER));
	CHECK_INT_EQ(2, count(SNAP_DLREC_SAMPLE));
	r = nth(SNAP_DLREC_POWER, 0);
	if (r) {
		CHECK_INT_EQ(SNAP_DLREC_POWER_SIZE, r->len);
		CHECK_INT_EQ(2601, g32(r->p)); /* (kHz + 500) / 1000, as perf script prints it */
		CHECK_INT_EQ(100, g32(r->p + 4));
		CHECK_INT_EQ(101, g32(r->p + 8));
		CHECK_U64_EQ(200, g64(r->p + 16));
		l = loc_at(r->p + 24);
		CHECK_LOC(l, 0x401110, 0x10, "foo", "/bin/app");
	}
	r = nth(SNAP_DLREC_SAMPLE, 0);
	if (r)
		CHECK_STR_EQ("sched:sched_switch", str(g32(r->p)));
	r = nth(SNAP_DLREC_SAMPLE, 1);
	if (r)
		CHECK_STR_EQ("branch-misses", str(g32(r->p)));
	CHECK_U64_EQ(0, end_field(4));
}

/* Samples of an event that copies user stacks (dwarf call graphs) are left to perf to
 * unwind and print (filter_event_early returns 0), no record. */
static void dwarf_samples_left_to_perf(void)
{
	struct perf_dlfilter_sample s = branch(0, 101, 100, 0x401110, 0);

	s.event = "cpu-clock";
	fake_reset();
	fk.attr.sample_type |= PERF_SAMPLE_STACK_USER;
	CHECK_INT_EQ(0, plugin_start());
	CHECK_INT_EQ(0, feed(&s));
	CHECK_INT_EQ(0, filter_event(plugin, &s, &fk));
	plugin_stop();
	CHECK_INT_EQ(0, count(SNAP_DLREC_SAMPLE));
	CHECK_U64_EQ(0, end_field(2));
}

/* Data without timestamps: the plugin fails perf (-1) before writing anything. */
static void timeless_data_fails_before_writing(void)
{
	struct perf_dlfilter_sample s = branch(CALL, 101, 0, 0x401010, 0x401100);

	fake_reset();
	fk.attr.sample_type = PERF_SAMPLE_IP;
	CHECK_INT_EQ(0, plugin_start());
	CHECK_INT_EQ(-1, feed(&s));
	CHECK_INT_EQ(1, feed(&s)); /* dead: everything is hidden, nothing written */
	plugin_stop();
	CHECK_INT_EQ(0, sm.len);
}

/* COMM: sent before a thread's first record, again when perf's comm changes (looked at on
 * records that are not a plain call, return or jump), blanks trimmed; a change empties the
 * address cache (an exec). */
static void comm_records(void)
{
	struct perf_dlfilter_sample a = branch(CALL, 101, 100, 0x401010, 0x401100),
				    b = branch(TRSTART, 101, 200, 0, 0x401010),
				    c = branch(CALL, 101, 300, 0x401010, 0x401100);
	const struct rec *r;
	int before;

	fake_reset();
	fk.comm = "  app\t";
	CHECK_INT_EQ(0, plugin_start());
	feed(&a);
	fk.comm = "newname";
	feed(&c); /* plain call: comm not looked at */
	feed(&b); /* trace start: looked at, changed */
	before = fk.resolve_calls;
	c.time = 400;
	feed(&c); /* the cache was emptied: resolved again */
	CHECK(fk.resolve_calls > before);
	plugin_stop();
	CHECK_INT_EQ(2, count(SNAP_DLREC_COMM));
	r = nth(SNAP_DLREC_COMM, 0);
	if (r)
		CHECK_STR_EQ("app", str(g32(r->p + 8)));
	r = nth(SNAP_DLREC_COMM, 1);
	if (r)
		CHECK_STR_EQ("newname", str(g32(r->p + 8)));
}

/* With taskevents (perf prints task lines on the stdout the plugin captures), a sample
 * reads the comm again only after a PERF_RECORD_COMM, _FORK or _EXIT line, also one cut
 * across two writes; other lines (a switch) do not count. Without taskevents, or with
 * nostdout, every sample reads it. */
static void comm_read_again_only_after_task_lines(void)
{
	struct perf_dlfilter_sample s = branch(0, 101, 100, 0x401110, 0);
	int calls[3], nd;

	s.event = "cpu-clock:u";
	for (int mode = 0; mode < 3; mode++) { /* taskevents, none, taskevents + nostdout */
		FILE *real = stdout;

		fake_reset();
		fk.argc = mode == 2 ? 2 : 1; /* fd (and nostdout) */
		if (mode != 1)
			fk.argv[fk.argc++] = (char *)"taskevents";
		CHECK_INT_EQ(0, plugin_start());
		s.time = 100;
		feed(&s); /* first record: comm read, ip resolved */
		nd = fk.resolve_calls;
		fk.comm = "newname";
		s.time = 200;
		feed(&s);
		if (mode != 2) /* (with nostdout it would go to the real stdout) */
			printf(" PERF_RECORD_SWITCH_CPU_WIDE OUT preempt\n");
		s.time = 300;
		feed(&s);
		calls[mode] = fk.resolve_calls - nd;
		if (mode != 2) {
			printf(" PERF_RECORD_CO");
			printf("MM: newname:100/101\n");
		}
		s.time = 400;
		feed(&s);
		plugin_stop();
		CHECK(stdout == real);
		CHECK_INT_EQ(2, count(SNAP_DLREC_COMM));
		/* the second COMM comes before the sample after the task line */
		CHECK(nth(SNAP_DLREC_COMM, 1) > nth(SNAP_DLREC_SAMPLE, mode == 0 ? 2 : 0));
		CHECK(nth(SNAP_DLREC_COMM, 1) < nth(SNAP_DLREC_SAMPLE, mode == 0 ? 3 : 1));
	}
	CHECK_INT_EQ(0, calls[0]);
	CHECK_INT_EQ(3, calls[1]); /* comm twice; the ip again after the change */
	CHECK_INT_EQ(3, calls[2]);
}

/* The address cache: a branch at known addresses is not resolved through perf again;
 * nocache resolves every time. */
static void address_cache(void)
{
	struct perf_dlfilter_sample a = branch(CALL, 101, 100, 0x401010, 0x401100);
	int first, second;

	for (int nocache = 0; nocache < 2; nocache++) {
		fake_reset();
		if (nocache)
			fk.argv[fk.argc++] = (char *)"nocache";
		CHECK_INT_EQ(0, plugin_start());
		feed(&a);
		first = fk.resolve_calls;
		a.time += 100;
		feed(&a);
		second = fk.resolve_calls - first;
		plugin_stop();
		CHECK_INT_EQ(nocache ? 2 : 0, second);
		CHECK_INT_EQ(2, count(SNAP_DLREC_BRANCH));
	}
}

/* TEXT: what perf prints on its stdout while the plugin runs lands in the stream at its
 * place, after the dropped jumps that came before it; stop() gives stdout back. */
static void stdout_becomes_text(void)
{
	struct perf_dlfilter_sample a = branch(CALL, 101, 100, 0x401010, 0x401100),
				    b = branch(JCC, 101, 200, 0x401110, 0x401105);
	static const char line[] = " instruction trace error type 1 time 0.000000300 ...\n";
	FILE *real = stdout;
	const struct rec *t, *j;
	char text[256];
	size_t n = 0;

	fake_reset();
	fk.argc = 1; /* fd only: no nostdout */
	CHECK_INT_EQ(0, plugin_start());
	CHECK(stdout != real);
	feed(&a);
	feed(&b); /* dropped, pending */
	printf("%s", line);
	plugin_stop();
	CHECK(stdout == real);
	t = nth(SNAP_DLREC_TEXT, 0);
	j = nth(SNAP_DLREC_BRANCH, 1);
	CHECK(t != NULL && j != NULL && j < t);
	for (size_t i = 0; (t = nth(SNAP_DLREC_TEXT, i)) != NULL && n + t->len < sizeof(text);
	     i++) {
		memcpy(text + n, t->p, t->len);
		n += t->len;
	}
	text[n] = 0;
	CHECK_STR_EQ(line, text);
	CHECK_U64_EQ(0, end_field(3));
}

/* Arguments and start-up errors: no output named, a bad fd, an unwritable path, a perf
 * without the resolve functions: start fails (perf reports it and stops). path=FILE and a
 * bare FILE create the file. */
static void start_errors(void)
{
	char path[64], bare[80];
	struct stat stb;

	fake_reset();
	fk.argc = 0;
	CHECK_INT_EQ(-1, plugin_start());
	CHECK(plugin == NULL);
	fake_reset();
	fk.argv[0] = (char *)"fd=x3";
	CHECK_INT_EQ(-1, plugin_start());
	fk.argv[0] = (char *)"fd=-1";
	CHECK_INT_EQ(-1, plugin_start());
	fk.argv[0] = (char *)"path=/nonexistent/dir/out";
	CHECK_INT_EQ(-1, plugin_start());
	fake_reset();
	perf_dlfilter_fns.resolve_address = NULL;
	CHECK_INT_EQ(-1, plugin_start());
	CHECK(plugin == NULL);

	snprintf(path, sizeof(path), "/tmp/snaptrace-dlf-test.%d", (int)getpid());
	snprintf(bare, sizeof(bare), "%s.bare", path);
	fake_reset();
	char parg[80];
	snprintf(parg, sizeof(parg), "path=%s", path);
	fk.argv[0] = parg;
	CHECK_INT_EQ(0, plugin_start());
	CHECK_INT_EQ(0, stop(plugin, &fk));
	CHECK(stat(path, &stb) == 0 &&
	      stb.st_size == SNAP_DLREC_HDR_SIZE + 8 + SNAP_DLREC_END_SIZE);
	fk.argv[0] = bare;
	CHECK_INT_EQ(0, plugin_start());
	CHECK_INT_EQ(0, stop(plugin, &fk));
	CHECK(stat(bare, &stb) == 0 && stb.st_size > 0);
	unlink(path);
	unlink(bare);
	CHECK(filter_description(NULL) != NULL);
}

/* Errors while running cost one sample each, counted in END: a cbr without payload, an
 * event kind past the table; a NULL sample is ignored. */
static void running_errors_counted(void)
{
	struct perf_dlfilter_sample s = branch(0, 101, 100, 0x401110, 0);
	char names[40][16];

	fake_reset();
	CHECK_INT_EQ(0, plugin_start());
	s.event = "cbr";
	CHECK_INT_EQ(1, feed(&s));
	CHECK_INT_EQ(1, filter_event_early(plugin, NULL, &fk));
	for (int i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "ev%d", i);
		s.event = names[i];
		CHECK_INT_EQ(1, feed(&s));
	}
	plugin_stop();
	CHECK(!sm.bad);
	CHECK_INT_EQ(0, count(SNAP_DLREC_POWER));
	/* cbr took one of the 32 event slots: 31 evN samples, 9 evN refused */
	CHECK_U64_EQ(31, end_field(2));
	CHECK_U64_EQ(1 + 9, end_field(4));
}

/* A reader that went away (EPIPE) makes the plugin stop writing, quietly: no SIGPIPE
 * kills perf, stop() still succeeds. */
static void closed_pipe_is_quiet(void)
{
	struct perf_dlfilter_sample a = branch(CALL, 101, 100, 0x401010, 0x401100);
	int p[2];

	CHECK_INT_EQ(0, pipe(p));
	fake_reset();
	snprintf(fdarg, sizeof(fdarg), "fd=%d", p[1]);
	close(p[0]);
	CHECK_INT_EQ(0, plugin_start());
	for (int i = 0; i < 20000; i++) { /* more than the 1 MiB buffer: written mid-run */
		a.time = 100 + (uint64_t)i;
		a.tid = 1000 + i % 50;
		feed(&a);
	}
	CHECK_INT_EQ(0, stop(plugin, &fk));
	plugin = NULL;
}

int main(void)
{
	RUN(header_and_end);
	RUN(branch_encoding);
	RUN(branch_unknown_locations);
	RUN(b8_11_jump_dropped_only_at_top_of_stack);
	RUN(jump_after_unknown_top_is_sent);
	RUN(b8_11_keepjumps_sends_every_jump);
	RUN(b8_11_last_dropped_jump_sent_at_end);
	RUN(sample_encoding);
	RUN(event_kinds);
	RUN(dwarf_samples_left_to_perf);
	RUN(timeless_data_fails_before_writing);
	RUN(comm_records);
	RUN(comm_read_again_only_after_task_lines);
	RUN(address_cache);
	RUN(stdout_becomes_text);
	RUN(start_errors);
	RUN(running_errors_counted);
	RUN(closed_pipe_is_quiet);
	return snap_test_done();
}
