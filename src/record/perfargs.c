// SPDX-License-Identifier: GPL-2.0
/*
 * The perf record argv builder. Pure: no I/O. The flag-value parsers are in
 * record/perfvals.c.
 *
 * Deliberate differences from magic-trace (documented in docs/recording.md):
 *  - sampling uses cpu-clock when the machine has no hardware PMU (cycles
 *    silently falls back to it anyway) and keeps Normal at 4 kHz there;
 *  - the default sampling call graph is picked by looking at the program
 *    (record/cgpick.c); dwarf copies perf's 8 KiB of stack into a 32-64 MiB
 *    ring where it may be locked, instead of perf's 512 KiB (~60 samples),
 *    also with -full-execution (perf lost chunks of the 512 KiB one);
 *  - sampling records context switches and, where permitted, sched_switch
 *    samples with call chains: the timeline shows time off the CPU;
 *  - -snapshot-size also sizes the sampling ring (--mmap-pages) instead of
 *    being ignored;
 *  - a trigger in sampling mode adds --switch-output=signal so the ring can be
 *    cut at the hit;
 *  - with a control fd perf starts disabled (-D -1): the session enables it
 *    and waits for the ack, instead of sleeping 500 ms;
 *  - the sampling ring is the event's overwrite term (see add_events), not
 *    --overwrite, with a dummy event first for the side-band records.
 */
#include "record/perfargs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/caps.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/vec.h"

/* ---- the argv builder ---- */

struct argvb {
	struct snap_perfargs *pa;
	size_t cap;
	int err;
};

static void add(struct argvb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct argvb *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	if (b->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		b->err = -SNAP_ELIMIT;
		return;
	}
	if (snap_vec_reserve(&b->pa->argv, &b->cap, b->pa->argc + 2, sizeof(char *)) < 0) {
		b->err = -ENOMEM;
		return;
	}
	b->pa->argv[b->pa->argc] = snap_strndup(tmp, (size_t)n);
	if (!b->pa->argv[b->pa->argc]) {
		b->err = -ENOMEM;
		return;
	}
	b->pa->argv[++b->pa->argc] = NULL;
}

static int fail(struct snap_perfargs *pa, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct snap_perfargs *pa, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pa->err, sizeof(pa->err), fmt, ap);
	va_end(ap);
	return err;
}

static const char *scope_flag(enum snap_scope s)
{
	return s == SNAP_SCOPE_KERNEL ? "-trace-kernel-only" : "-trace-include-kernel";
}

/* Checks the combinations that can never work; fills pa->err. */
static int check_opts(const struct snap_recopts *o, const struct snap_perfcaps *c,
		      struct snap_perfargs *pa)
{
	if (!o->sampling && o->res.kind == SNAP_RES_SAMPLE)
		return fail(pa, -SNAP_EUSAGE,
			    "-timer-resolution Sample needs -sampling (Intel PT has no "
			    "sampling frequency; use Low, Normal, High or Custom)");
	if (o->sampling && o->res.kind == SNAP_RES_CUSTOM)
		return fail(pa, -SNAP_EUSAGE,
			    "-timer-resolution Custom needs Intel PT (not -sampling); use Low, "
			    "Normal, High or Sample:N");
	if (!o->sampling && o->cg != SNAP_CG_AUTO)
		return fail(pa, -SNAP_EUSAGE,
			    "-callgraph-mode is only configurable with -sampling");
	if (!o->sampling && !c->has_pt)
		return fail(pa, -SNAP_ENOTSUP,
			    "Intel PT is not available on this machine "
			    "(/sys/bus/event_source/devices/intel_pt is missing); use -sampling");
	if (o->scope != SNAP_SCOPE_USER && !c->kernel_ok)
		return fail(pa, -EACCES,
			    "%s needs root or kernel.perf_event_paranoid <= 1 (now %d); run as "
			    "root or: sudo sysctl kernel.perf_event_paranoid=1",
			    scope_flag(o->scope), c->paranoid);
	if (o->sampling && (o->cg == SNAP_CG_LBR || o->cg == SNAP_CG_LBR_NOSTITCH) && !c->lbr)
		return fail(pa, -SNAP_ENOTSUP,
			    "-callgraph-mode lbr needs a CPU with last branch records (LBR), and "
			    "this one has none; use -callgraph-mode fp or dwarf");
	if (o->nxev && !c->has_pmu)
		return fail(pa, -SNAP_ENOTSUP,
			    "-events needs a hardware PMU (/sys/bus/event_source/devices/cpu), "
			    "and this machine has none: record without -events (a VM may need "
			    "its PMU passed through)");
	if (o->multi_snapshot && !o->trigger)
		return fail(pa, -SNAP_EUSAGE, "-multi-snapshot needs -trigger");
	return 0;
}

static const char *pt_config(const struct snap_recopts *o, const struct snap_perfcaps *c,
			     struct snap_perfargs *pa, char *buf, size_t len)
{
	enum snap_res_kind k = o->res.kind;
	size_t used = 0;

	if ((k == SNAP_RES_NORMAL || k == SNAP_RES_HIGH) && !c->psb_period) {
		pa->warn |= SNAP_PA_W_PSB_DOWNGRADE;
		k = SNAP_RES_LOW;
	}
	buf[0] = '\0';
	if (k == SNAP_RES_NORMAL)
		return "cyc=1,cyc_thresh=1,mtc_period=0";
	if (k == SNAP_RES_HIGH)
		return "cyc=1,cyc_thresh=1,mtc_period=0,noretcomp=1";
	if (k != SNAP_RES_CUSTOM)
		return "";
	for (int f = 0; f < SNAP_RES_NFIELDS; f++) {
		if (!o->res.has[f])
			continue;
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s=%llu",
					 used ? "," : "", snap_res_field_names[f],
					 (unsigned long long)o->res.val[f]);
	}
	return buf;
}

static uint64_t sample_freq(const struct snap_recopts *o, const struct snap_perfcaps *c,
			    struct snap_perfargs *pa)
{
	uint64_t f, max = c->max_sample_rate ? c->max_sample_rate : 100000;

	switch (o->res.kind) {
	case SNAP_RES_LOW:
		f = 1000;
		break;
	case SNAP_RES_HIGH:
		/* Without a PMU every sample is a timer interrupt (a VM exit in a
		 * guest): >= 50 kHz livelocks such machines, so High stays at 10 kHz. */
		f = c->has_pmu ? max : (max < 10000 ? max : 10000);
		break;
	case SNAP_RES_SAMPLE:
		f = o->res.freq;
		break;
	case SNAP_RES_NORMAL:
	default:
		f = c->has_pmu ? 10000 : 4000;
		break;
	}
	if (!c->has_pmu && f > 10000)
		pa->warn |= SNAP_PA_W_FREQ_HIGH;
	return f;
}

static void add_events(struct argvb *b, const struct snap_recopts *o, const struct snap_perfcaps *c)
{
	struct snap_perfargs *pa = b->pa;
	const char *sel = snap_scope_name(o->scope);
	char prim[256], xev[256], cfg[160];
	size_t used = 0;

	if (o->sampling) {
		/* The ring is the event's own overwrite term, not --overwrite:
		 * --overwrite makes perf synthesize the process maps only when it
		 * stops, after a run's program has exited, which loses every symbol
		 * of the executable. A leading dummy event (normal ring) carries the
		 * side-band (mmap, comm) so the ring cannot overwrite it. name= keeps
		 * the event called "cpu-clock" in perf script, whatever the terms. */
		pa->freq = sample_freq(o, c, pa);
		const char *ev = c->has_pmu ? "cycles" : "cpu-clock";

		snprintf(prim, sizeof(prim), "%s%s/freq=%llu%s,name=%s/%s%s",
			 o->full_execution ? "" : "dummy:u,", ev, (unsigned long long)pa->freq,
			 o->full_execution ? "" : ",overwrite", ev, sel,
			 !pa->sched_switch   ? ""
			 : o->full_execution ? ",sched:sched_switch"
					     : ",sched:sched_switch/overwrite/");
	} else {
		snprintf(prim, sizeof(prim), "intel_pt/%s/%s",
			 pt_config(o, c, pa, cfg, sizeof(cfg)), sel);
	}
	xev[0] = '\0';
	for (size_t i = 0; i < o->nxev; i++) {
		const struct snap_xev *e = &o->xev[i];

		used += (size_t)snprintf(xev + used, used < sizeof(xev) ? sizeof(xev) - used : 0,
					 ",%s/%s=%llu/%s%s", snap_xev_names[e->name],
					 e->by_freq ? "freq" : "period", (unsigned long long)e->n,
					 sel, snap_xev_prec_mods[e->prec]);
	}
	add(b, "--event=%s%s", prim, xev);
}

static void add_targets(struct argvb *b, const struct snap_recopts *o)
{
	char list[512];
	size_t used = 0;

	if (o->multi_thread)
		add(b, "-p");
	else if (o->nxev)
		add(b, "-t"); /* --per-thread breaks perf's mmap with extra events */
	else {
		add(b, "--per-thread");
		add(b, "-t");
	}
	if (!o->npids) {
		add(b, "PID");
		return;
	}
	for (size_t i = 0; i < o->npids; i++)
		used += (size_t)snprintf(list + used, used < sizeof(list) ? sizeof(list) - used : 0,
					 "%s%d", i ? "," : "", o->pids[i]);
	if (used >= sizeof(list))
		b->err = -SNAP_ELIMIT;
	add(b, "%s", list);
}

int snap_perfargs_build(const struct snap_recopts *o, const struct snap_perfcaps *c,
			struct snap_perfargs *out)
{
	struct argvb b = {out, 0, 0};
	int err, inexact = 0;

	memset(out, 0, sizeof(*out));
	err = check_opts(o, c, out);
	if (err < 0)
		return err;
	out->when = o->full_execution ? SNAP_SNAP_NEVER
		    : o->trigger      ? SNAP_SNAP_ON_CALL
				      : SNAP_SNAP_AT_EXIT;
	out->ctl = snap_caps_has_ctl_fd(c);
	/* Off-CPU time (sampling): switch records say when a thread left and
	 * came back (any user, own processes); sched_switch samples with call
	 * chains say where it blocked, where the kernel allows tracepoints. Both
	 * cost one record per switch, nothing while the thread runs. */
	out->switch_events = o->sampling && !o->no_offcpu;
	out->sched_switch = out->switch_events && c->sched_ok;
	add(&b, "%s", o->perf ? o->perf : "perf");
	add(&b, "record");
	add(&b, "-o");
	add(&b, "%s", o->data ? o->data : "perf.data");
	add(&b, "--timestamp");
	if (snap_caps_has_no_bpf_event(c))
		add(&b, "--no-bpf-event");
	add_events(&b, o, c);
	out->switch_output = !o->full_execution && (o->sampling ? o->trigger : o->multi_snapshot);
	if (out->switch_output)
		add(&b, "--switch-output=signal");
	if (out->switch_events)
		add(&b, "--switch-events");
	add_targets(&b, o);
	if (!o->sampling && out->when != SNAP_SNAP_NEVER)
		add(&b, out->when == SNAP_SNAP_AT_EXIT && snap_caps_can_snapshot_at_exit(c)
				? "--snapshot=e"
				: "--snapshot");
	if (out->ctl) {
		add(&b, "--control=fd:%d,%d", SNAP_PERF_CTL_FD, SNAP_PERF_ACK_FD);
		add(&b, "-D");
		add(&b, "-1");
	}
	if (!o->sampling && o->scope != SNAP_SCOPE_USER && !c->no_kcore) {
		if (snap_caps_has_kcore(c))
			add(&b, "--kcore");
		else
			out->warn |= SNAP_PA_W_KCORE_OLD;
	}
	if (!o->snapshot_bytes && o->sampling && c->big_ring && o->cg == SNAP_CG_DWARF) {
		out->pages = o->full_execution || o->multi_thread ? SNAP_DWARF_CPU_PAGES
								  : SNAP_DWARF_PAGES;
		add(&b, "--mmap-pages=%llu", (unsigned long long)out->pages);
	} else if (o->snapshot_bytes) {
		out->pages = snap_size_pages(o->snapshot_bytes, &inexact);
		if (inexact)
			out->warn |= SNAP_PA_W_SIZE_ROUNDED;
		/* perf 6.1 silently records nothing from a >= 4 GiB sampling ring
		 * (the byte size overflows 32 bits): at most 1 GiB. */
		if (o->sampling && out->pages > SNAP_SAMPLING_MAX_PAGES) {
			out->pages = SNAP_SAMPLING_MAX_PAGES;
			out->warn |= SNAP_PA_W_SIZE_CAPPED;
		}
		if (o->sampling)
			add(&b, "--mmap-pages=%llu", (unsigned long long)out->pages);
		else
			add(&b, "-m,%llu", (unsigned long long)out->pages);
	}
	if (o->sampling) {
		uint64_t per_sample;

		out->cg = o->cg;
		if (out->cg == SNAP_CG_AUTO) {
			out->cg = c->lbr ? SNAP_CG_LBR : SNAP_CG_FP;
			if (!c->lbr)
				out->warn |= SNAP_PA_W_CG_DEFAULT_FP;
		}
		add(&b, "--call-graph");
		if (out->cg == SNAP_CG_DWARF) {
			/* perf's dwarf default copies 8 KiB per sample into a 512 KiB
			 * ring: ~60 samples. The copy stays (4 KiB cut C++ stacks);
			 * the ring grows where it may be locked. */
			out->dwarf_stack = SNAP_DWARF_STACK;
			add(&b, "dwarf,%u", out->dwarf_stack);
		} else {
			add(&b, "%s", snap_cg_name(out->cg));
		}
		if (out->sched_switch && o->scope == SNAP_SCOPE_USER)
			add(&b, "--user-callchains");
		per_sample = out->dwarf_stack ? out->dwarf_stack + SNAP_SAMPLE_OVERHEAD
					      : SNAP_FP_SAMPLE_BYTES;
		out->ring_bytes = (out->pages ? out->pages : SNAP_PERF_DEFAULT_PAGES) * 4096u;
		out->ring_samples = out->ring_bytes / per_sample;
	}
	if (o->no_buildid_cache)
		add(&b, "--no-buildid-cache");
	if (b.err < 0) {
		snap_perfargs_fini(out);
		return b.err;
	}
	return 0;
}

void snap_perfargs_fini(struct snap_perfargs *pa)
{
	if (!pa)
		return;
	for (size_t i = 0; i < pa->argc; i++)
		snap_free(pa->argv[i]);
	snap_free(pa->argv);
	memset(pa, 0, sizeof(*pa));
}

char *snap_perfargs_join(const struct snap_perfargs *pa)
{
	size_t len = 1, used = 0;
	char *s;

	for (size_t i = 0; i < pa->argc; i++)
		len += strlen(pa->argv[i]) + 1;
	s = snap_malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < pa->argc; i++) {
		size_t l = strlen(pa->argv[i]);

		if (i)
			s[used++] = ' ';
		memcpy(s + used, pa->argv[i], l + 1);
		used += l;
	}
	return s;
}

struct snap_ctlplan snap_perfargs_ctlplan(const struct snap_perfargs *pa,
					  const struct snap_recopts *o,
					  const struct snap_perfcaps *c)
{
	struct snap_ctlplan p = {SNAP_CTL_NONE, SNAP_CTL_SIGINT};

	if (o->sampling) {
		/* perf's "snapshot" command only snapshots AUX data: the sampling
		 * ring is cut by SIGUSR2 with --switch-output=signal. */
		p.snapshot = pa->switch_output ? SNAP_CTL_SIGUSR2 : SNAP_CTL_NONE;
		p.stop = pa->ctl ? SNAP_CTL_CMD_STOP : SNAP_CTL_SIGINT;
		return p;
	}
	if (pa->ctl) {
		p.snapshot = pa->when == SNAP_SNAP_AT_EXIT ? SNAP_CTL_CMD_STOP
			     : pa->when == SNAP_SNAP_NEVER ? SNAP_CTL_NONE
							   : SNAP_CTL_CMD_SNAPSHOT;
		p.stop = SNAP_CTL_CMD_STOP;
	} else if (snap_caps_can_snapshot_at_exit(c) && pa->when == SNAP_SNAP_AT_EXIT) {
		p.snapshot = SNAP_CTL_SIGINT;
		p.stop = SNAP_CTL_SIGTERM;
	} else {
		p.snapshot = pa->when == SNAP_SNAP_NEVER ? SNAP_CTL_NONE : SNAP_CTL_SIGUSR2;
		p.stop = SNAP_CTL_SIGTERM;
	}
	return p;
}
