// SPDX-License-Identifier: GPL-2.0
/* Pins the perf record argument vector (docs/behaviour.md §2.3) for many flag combinations. */
#include <errno.h>

#include "record/perfargs.h"
#include "snap_test.h"
#include "util/alloc.h"
#include "util/err.h"

static const struct snap_perfcaps pt_caps = {
	.perf_major = 6,
	.perf_minor = 1,
	.has_pt = 1,
	.has_pmu = 1,
	.psb_period = 1,
	.lbr = 1,
	.kernel_ok = 1,
	.paranoid = 2,
	.max_sample_rate = 50000,
};

/* This VM: no PT, no PMU, paranoid 2, not root. */
static const struct snap_perfcaps vm_caps = {
	.perf_major = 6,
	.perf_minor = 1,
	.paranoid = 2,
	.max_sample_rate = 100000,
};

static const int one_pid[] = {1234};
static const int two_pids[] = {1234, 99};

static struct snap_recopts base(void)
{
	struct snap_recopts o = {0};

	o.data = "/w/perf.data";
	o.pids = one_pid;
	o.npids = 1;
	o.res.kind = SNAP_RES_NORMAL;
	return o;
}

/* Builds and compares the space-joined argv; returns the error. */
static int argv_is(const struct snap_recopts *o, const struct snap_perfcaps *c, const char *want,
		   unsigned want_warn)
{
	struct snap_perfargs pa;
	int err = snap_perfargs_build(o, c, &pa);
	char *s;

	CHECK_INT_EQ(0, err);
	if (err < 0) {
		fprintf(stderr, "  err: %s\n", pa.err);
		return err;
	}
	s = snap_perfargs_join(&pa);
	CHECK_STR_EQ(want, s);
	CHECK_INT_EQ(want_warn, pa.warn);
	CHECK(pa.argv[pa.argc] == NULL);
	snap_free(s);
	snap_perfargs_fini(&pa);
	return 0;
}

static void refused(const struct snap_recopts *o, const struct snap_perfcaps *c, int want_err,
		    const char *want_substr)
{
	struct snap_perfargs pa;
	int err = snap_perfargs_build(o, c, &pa);

	CHECK_INT_EQ(want_err, err);
	CHECK(strstr(pa.err, want_substr) != NULL);
	if (!strstr(pa.err, want_substr))
		fprintf(stderr, "  err was: %s\n", pa.err);
	CHECK(pa.argv == NULL);
	snap_perfargs_fini(&pa);
}

#define P   "perf record -o /w/perf.data --timestamp --no-bpf-event "
#define CTL " --control=fd:3,4 -D -1"

static void b2_3_pt_default(void)
{
	struct snap_recopts o = base();

	argv_is(&o, &pt_caps,
		P "--event=intel_pt/cyc=1,cyc_thresh=1,mtc_period=0/u --per-thread -t 1234 "
		  "--snapshot=e" CTL,
		0);
}

static void b2_3_pt_low_high(void)
{
	struct snap_recopts o = base();

	o.res.kind = SNAP_RES_LOW;
	argv_is(&o, &pt_caps, P "--event=intel_pt//u --per-thread -t 1234 --snapshot=e" CTL, 0);
	o.res.kind = SNAP_RES_HIGH;
	argv_is(&o, &pt_caps,
		P "--event=intel_pt/cyc=1,cyc_thresh=1,mtc_period=0,noretcomp=1/u --per-thread -t "
		  "1234 --snapshot=e" CTL,
		0);
}

static void b2_3_pt_psb_downgrade(void)
{
	struct snap_recopts o = base();
	struct snap_perfcaps c = pt_caps;

	c.psb_period = 0;
	argv_is(&o, &c, P "--event=intel_pt//u --per-thread -t 1234 --snapshot=e" CTL,
		SNAP_PA_W_PSB_DOWNGRADE);
	/* Custom is never downgraded. */
	CHECK_INT_EQ(0, snap_res_parse("Custom:mtc=1,cyc=0", &o.res));
	argv_is(&o, &c, P "--event=intel_pt/cyc=0,mtc=1/u --per-thread -t 1234 --snapshot=e" CTL,
		0);
}

static void b2_3_pt_custom_sexp_order(void)
{
	struct snap_recopts o = base();

	CHECK_INT_EQ(0, snap_res_parse("(Custom (psb_period 3) (cyc true) (noretcomp false) "
				       "(cyc_thresh 2) (mtc_period 0) (mtc true))",
				       &o.res));
	argv_is(&o, &pt_caps,
		P "--event=intel_pt/cyc=1,cyc_thresh=2,mtc=1,mtc_period=0,noretcomp=0,psb_period=3/"
		  "u --per-thread -t 1234 --snapshot=e" CTL,
		0);
}

static void b2_3_pt_kernel_scopes(void)
{
	struct snap_recopts o = base();

	o.scope = SNAP_SCOPE_BOTH;
	o.res.kind = SNAP_RES_LOW;
	argv_is(&o, &pt_caps,
		P "--event=intel_pt//uk --per-thread -t 1234 --snapshot=e" CTL " --kcore", 0);
	o.scope = SNAP_SCOPE_KERNEL;
	argv_is(&o, &pt_caps,
		P "--event=intel_pt//k --per-thread -t 1234 --snapshot=e" CTL " --kcore", 0);
	{
		struct snap_perfcaps c = pt_caps;

		c.no_kcore = 1;
		argv_is(&o, &c, P "--event=intel_pt//k --per-thread -t 1234 --snapshot=e" CTL, 0);
	}
}

static void b2_3_pt_trigger_multi_thread_size(void)
{
	struct snap_recopts o = base();

	o.res.kind = SNAP_RES_LOW;
	o.trigger = 1;
	o.multi_thread = 1;
	o.pids = two_pids;
	o.npids = 2;
	CHECK_INT_EQ(0, snap_size_parse("9K", &o.snapshot_bytes));
	argv_is(&o, &pt_caps, P "--event=intel_pt//u -p 1234,99 --snapshot" CTL " -m,4",
		SNAP_PA_W_SIZE_ROUNDED);
	o.multi_snapshot = 1;
	CHECK_INT_EQ(0, snap_size_parse("1G", &o.snapshot_bytes));
	argv_is(&o, &pt_caps,
		P "--event=intel_pt//u --switch-output=signal -p 1234,99 --snapshot" CTL
		  " -m,262144",
		0);
}

static void b2_3_pt_full_execution(void)
{
	struct snap_recopts o = base();

	o.res.kind = SNAP_RES_LOW;
	o.full_execution = 1;
	argv_is(&o, &pt_caps, P "--event=intel_pt//u --per-thread -t 1234" CTL, 0);
}

static void b2_3_pt_old_perf(void)
{
	struct snap_recopts o = base();
	struct snap_perfcaps c = pt_caps;
	struct snap_perfargs pa;
	struct snap_ctlplan plan;

	o.res.kind = SNAP_RES_LOW;
	o.scope = SNAP_SCOPE_BOTH;
	c.perf_major = 5;
	c.perf_minor = 4;
	/* 5.4: --snapshot=e, no --control, no --kcore (warned) */
	argv_is(&o, &c, P "--event=intel_pt//uk --per-thread -t 1234 --snapshot=e",
		SNAP_PA_W_KCORE_OLD);
	CHECK_INT_EQ(0, snap_perfargs_build(&o, &c, &pa));
	plan = snap_perfargs_ctlplan(&pa, &o, &c);
	CHECK_INT_EQ(SNAP_CTL_SIGINT, plan.snapshot);
	CHECK_INT_EQ(SNAP_CTL_SIGTERM, plan.stop);
	snap_perfargs_fini(&pa);
	/* 4.19: no --no-bpf-event, plain --snapshot, SIGUSR2 */
	c.perf_major = 4;
	c.perf_minor = 19;
	o.scope = SNAP_SCOPE_USER;
	argv_is(&o, &c,
		"perf record -o /w/perf.data --timestamp --event=intel_pt//u --per-thread -t 1234 "
		"--snapshot",
		0);
	CHECK_INT_EQ(0, snap_perfargs_build(&o, &c, &pa));
	plan = snap_perfargs_ctlplan(&pa, &o, &c);
	CHECK_INT_EQ(SNAP_CTL_SIGUSR2, plan.snapshot);
	CHECK_INT_EQ(SNAP_CTL_SIGTERM, plan.stop);
	snap_perfargs_fini(&pa);
}

static void b2_3_pt_extra_events(void)
{
	struct snap_recopts o = base();
	struct snap_xev xev[SNAP_XEV_MAX];
	size_t n;

	CHECK_INT_EQ(0, snap_xev_parse("branch-misses,((when_to_sample (Frequency 100)) (name "
				       "Cache_misses) (precision Request_zero_skid))",
				       xev, &n));
	CHECK_INT_EQ(2, n);
	o.xev = xev;
	o.nxev = n;
	argv_is(&o, &pt_caps,
		P "--event=intel_pt/cyc=1,cyc_thresh=1,mtc_period=0/u,branch-misses/period=50/uP,"
		  "cache-misses/freq=100/upp -t 1234 --snapshot=e" CTL,
		0);
}

static void b2_3_sampling_vm_default(void)
{
	struct snap_recopts o = base();
	struct snap_perfargs pa;
	struct snap_ctlplan plan;

	o.sampling = 1;
	argv_is(&o, &vm_caps,
		P "--event=dummy:u,cpu-clock/freq=4000,overwrite,name=cpu-clock/u --switch-events "
		  "--per-thread -t "
		  "1234" CTL " --call-graph fp",
		SNAP_PA_W_CG_DEFAULT_FP);
	CHECK_INT_EQ(0, snap_perfargs_build(&o, &vm_caps, &pa));
	CHECK_INT_EQ(4000, pa.freq);
	CHECK_INT_EQ(SNAP_CG_FP, pa.cg);
	plan = snap_perfargs_ctlplan(&pa, &o, &vm_caps);
	CHECK_INT_EQ(SNAP_CTL_NONE, plan.snapshot);
	CHECK_INT_EQ(SNAP_CTL_CMD_STOP, plan.stop);
	snap_perfargs_fini(&pa);
}

static void b8_13_sampling_pmu_resolutions(void)
{
	struct snap_recopts o = base();

	o.sampling = 1;
	argv_is(&o, &pt_caps,
		P "--event=dummy:u,cycles/freq=10000,overwrite,name=cycles/u --switch-events "
		  "--per-thread -t 1234" CTL " --call-graph lbr",
		0);
	o.res.kind = SNAP_RES_HIGH;
	argv_is(&o, &pt_caps,
		P "--event=dummy:u,cycles/freq=50000,overwrite,name=cycles/u --switch-events "
		  "--per-thread -t 1234" CTL " --call-graph lbr",
		0);
	o.res.kind = SNAP_RES_LOW;
	o.cg = SNAP_CG_DWARF;
	argv_is(&o, &pt_caps,
		P "--event=dummy:u,cycles/freq=1000,overwrite,name=cycles/u --switch-events "
		  "--per-thread -t 1234" CTL " --call-graph dwarf,8192",
		0);
}

static void b2_3_sampling_vm_high_and_sample(void)
{
	struct snap_recopts o = base();

	o.sampling = 1;
	o.cg = SNAP_CG_FP;
	o.res.kind = SNAP_RES_HIGH;
	argv_is(&o, &vm_caps,
		P "--event=dummy:u,cpu-clock/freq=10000,overwrite,name=cpu-clock/u --switch-events "
		  "--per-thread -t "
		  "1234" CTL " --call-graph fp",
		0);
	CHECK_INT_EQ(0, snap_res_parse("(Sample (freq 2000))", &o.res));
	argv_is(&o, &vm_caps,
		P "--event=dummy:u,cpu-clock/freq=2000,overwrite,name=cpu-clock/u --switch-events "
		  "--per-thread -t "
		  "1234" CTL " --call-graph fp",
		0);
	CHECK_INT_EQ(0, snap_res_parse("Sample:60000", &o.res));
	argv_is(&o, &vm_caps,
		P "--event=dummy:u,cpu-clock/freq=60000,overwrite,name=cpu-clock/u --switch-events "
		  "--per-thread -t "
		  "1234" CTL " --call-graph fp",
		SNAP_PA_W_FREQ_HIGH);
}

static void b2_3_sampling_trigger_kernel_size(void)
{
	struct snap_recopts o = base();
	struct snap_perfcaps c = vm_caps;
	struct snap_perfargs pa;
	struct snap_ctlplan plan;

	c.kernel_ok = 1;
	o.sampling = 1;
	o.cg = SNAP_CG_FP;
	o.trigger = 1;
	o.multi_thread = 1;
	o.scope = SNAP_SCOPE_BOTH;
	o.snapshot_bytes = 1 << 20;
	argv_is(&o, &c,
		P "--event=dummy:u,cpu-clock/freq=4000,overwrite,name=cpu-clock/uk "
		  "--switch-output=signal --switch-events -p 1234" CTL
		  " --mmap-pages=256 --call-graph fp",
		0);
	CHECK_INT_EQ(0, snap_perfargs_build(&o, &c, &pa));
	plan = snap_perfargs_ctlplan(&pa, &o, &c);
	CHECK_INT_EQ(SNAP_CTL_SIGUSR2, plan.snapshot);
	CHECK_INT_EQ(SNAP_CTL_CMD_STOP, plan.stop);
	snap_perfargs_fini(&pa);
}

static void b8_12_sampling_ring_capped(void)
{
	struct snap_recopts o = base();

	o.sampling = 1;
	o.cg = SNAP_CG_FP;
	CHECK_INT_EQ(0, snap_size_parse("64G", &o.snapshot_bytes));
	argv_is(&o, &vm_caps,
		P "--event=dummy:u,cpu-clock/freq=4000,overwrite,name=cpu-clock/u --switch-events "
		  "--per-thread -t "
		  "1234" CTL " --mmap-pages=262144 --call-graph fp",
		SNAP_PA_W_SIZE_CAPPED);
	/* PT's AUX area is not capped */
	o.sampling = 0;
	o.cg = SNAP_CG_AUTO;
	o.res.kind = SNAP_RES_LOW;
	argv_is(&o, &pt_caps,
		P "--event=intel_pt//u --per-thread -t 1234 --snapshot=e" CTL " -m,16777216", 0);
}

static void b2_3_sampling_full_execution_no_pids(void)
{
	struct snap_recopts o = base();

	o.sampling = 1;
	o.cg = SNAP_CG_FP;
	o.full_execution = 1;
	o.pids = NULL;
	o.npids = 0;
	o.perf = "/opt/perf";
	argv_is(&o, &vm_caps,
		"/opt/perf record -o /w/perf.data --timestamp --no-bpf-event "
		"--event=cpu-clock/freq=4000,name=cpu-clock/u --switch-events --per-thread -t "
		"PID" CTL " --call-graph fp",
		0);
}

/* This VM as root: sched:sched_switch may be sampled, big rings may be locked. */
static struct snap_perfcaps vm_root_caps(void)
{
	struct snap_perfcaps c = vm_caps;

	c.kernel_ok = 1;
	c.sched_ok = 1;
	c.big_ring = 1;
	return c;
}

/* Off-CPU time: switch records always, sched_switch samples (in the ring,
 * with user-only call chains in the user scope) where permitted. */
static void b2_3_sampling_offcpu(void)
{
	struct snap_recopts o = base();
	struct snap_perfcaps c = vm_root_caps();
	struct snap_perfargs pa;

	o.sampling = 1;
	o.cg = SNAP_CG_FP;
	argv_is(&o, &c,
		P "--event=dummy:u,cpu-clock/freq=4000,overwrite,name=cpu-clock/u,"
		  "sched:sched_switch/overwrite/ --switch-events --per-thread -t 1234" CTL
		  " --call-graph fp --user-callchains",
		0);
	CHECK_INT_EQ(0, snap_perfargs_build(&o, &c, &pa));
	CHECK_INT_EQ(1, pa.switch_events);
	CHECK_INT_EQ(1, pa.sched_switch);
	snap_perfargs_fini(&pa);
	/* the kernel scope keeps the kernel part of the blocking chain */
	o.scope = SNAP_SCOPE_BOTH;
	o.multi_thread = 1;
	argv_is(&o, &c,
		P "--event=dummy:u,cpu-clock/freq=4000,overwrite,name=cpu-clock/uk,"
		  "sched:sched_switch/overwrite/ --switch-events -p 1234" CTL " --call-graph fp",
		0);
	/* -full-execution: no ring, so no overwrite terms */
	o.scope = SNAP_SCOPE_USER;
	o.multi_thread = 0;
	o.full_execution = 1;
	argv_is(&o, &c,
		P "--event=cpu-clock/freq=4000,name=cpu-clock/u,sched:sched_switch --switch-events "
		  "--per-thread -t 1234" CTL " --call-graph fp --user-callchains",
		0);
	/* unprivileged: switch records only */
	o.full_execution = 0;
	CHECK_INT_EQ(0, snap_perfargs_build(&o, &vm_caps, &pa));
	CHECK_INT_EQ(1, pa.switch_events);
	CHECK_INT_EQ(0, pa.sched_switch);
	snap_perfargs_fini(&pa);
	/* opted out */
	o.no_offcpu = 1;
	argv_is(&o, &c,
		P "--event=dummy:u,cpu-clock/freq=4000,overwrite,name=cpu-clock/u --per-thread -t "
		  "1234" CTL " --call-graph fp",
		0);
	/* Intel PT records no switch events of its own making */
	o = base();
	o.res.kind = SNAP_RES_LOW;
	c.has_pt = 1;
	argv_is(&o, &c, P "--event=intel_pt//u --per-thread -t 1234 --snapshot=e" CTL, 0);
}

/* dwarf: perf's 8 KiB stack copy everywhere (4 KiB cut C++ stacks), and
 * the ring sized so that it holds thousands of samples, or keeps up with
 * -full-execution; -snapshot-size still wins. */
static void b2_3_sampling_dwarf_sizes(void)
{
	struct snap_recopts o = base();
	struct snap_perfcaps c = vm_root_caps();
	struct snap_perfargs pa;

	o.sampling = 1;
	o.cg = SNAP_CG_DWARF;
	c.sched_ok = 0;
	argv_is(&o, &c,
		P "--event=dummy:u,cpu-clock/freq=4000,overwrite,name=cpu-clock/u --switch-events "
		  "--per-thread -t 1234" CTL " --mmap-pages=16384 --call-graph dwarf,8192",
		0);
	CHECK_INT_EQ(0, snap_perfargs_build(&o, &c, &pa));
	CHECK_INT_EQ(8192, pa.dwarf_stack);
	CHECK_INT_EQ(16384, pa.pages);
	CHECK(pa.ring_samples >= 7000);
	snap_perfargs_fini(&pa);
	/* without the right to lock a big ring: perf's ring, the same copy */
	argv_is(&o, &vm_caps,
		P "--event=dummy:u,cpu-clock/freq=4000,overwrite,name=cpu-clock/u --switch-events "
		  "--per-thread -t 1234" CTL " --call-graph dwarf,8192",
		0);
	CHECK_INT_EQ(0, snap_perfargs_build(&o, &vm_caps, &pa));
	CHECK_INT_EQ(0, pa.pages);
	CHECK_INT_EQ(8192, pa.dwarf_stack);
	CHECK_INT_EQ(128 * 4096, pa.ring_bytes);
	CHECK(pa.ring_samples > 30 && pa.ring_samples < 100);
	snap_perfargs_fini(&pa);
	/* -full-execution: perf drains the ring, which must absorb its stalls
	 * (perf's 512 KiB lost chunks); -multi-thread: one ring per CPU */
	o.full_execution = 1;
	argv_is(&o, &c,
		P "--event=cpu-clock/freq=4000,name=cpu-clock/u --switch-events "
		  "--per-thread -t 1234" CTL " --mmap-pages=8192 --call-graph dwarf,8192",
		0);
	argv_is(&o, &vm_caps,
		P "--event=cpu-clock/freq=4000,name=cpu-clock/u --switch-events "
		  "--per-thread -t 1234" CTL " --call-graph dwarf,8192",
		0);
	o.full_execution = 0;
	o.multi_thread = 1;
	CHECK_INT_EQ(0, snap_perfargs_build(&o, &c, &pa));
	CHECK_INT_EQ(8192, pa.pages);
	CHECK_INT_EQ(8192, pa.dwarf_stack);
	snap_perfargs_fini(&pa);
	o.multi_thread = 0;
	o.snapshot_bytes = 4 << 20;
	argv_is(&o, &c,
		P "--event=dummy:u,cpu-clock/freq=4000,overwrite,name=cpu-clock/u --switch-events "
		  "--per-thread -t 1234" CTL " --mmap-pages=1024 --call-graph dwarf,8192",
		0);
	/* fp: a small sample, perf's ring */
	o.snapshot_bytes = 0;
	o.cg = SNAP_CG_FP;
	CHECK_INT_EQ(0, snap_perfargs_build(&o, &c, &pa));
	CHECK_INT_EQ(0, pa.dwarf_stack);
	CHECK_INT_EQ(0, pa.pages);
	CHECK_INT_EQ(128 * 4096 / SNAP_FP_SAMPLE_BYTES, pa.ring_samples);
	snap_perfargs_fini(&pa);
	o.full_execution = 1;
	CHECK_INT_EQ(0, snap_perfargs_build(&o, &c, &pa));
	CHECK_INT_EQ(0, pa.pages);
	snap_perfargs_fini(&pa);
}

static void b1_4_refusals(void)
{
	struct snap_recopts o = base();

	CHECK_INT_EQ(0, snap_res_parse("Sample:1000", &o.res));
	refused(&o, &pt_caps, -SNAP_EUSAGE, "Sample needs -sampling");
	o.sampling = 1;
	CHECK_INT_EQ(0, snap_res_parse("Custom:cyc=1", &o.res));
	refused(&o, &vm_caps, -SNAP_EUSAGE, "Custom needs Intel PT");
	o = base();
	o.cg = SNAP_CG_FP;
	refused(&o, &pt_caps, -SNAP_EUSAGE, "only configurable with -sampling");
	o = base();
	refused(&o, &vm_caps, -SNAP_ENOTSUP, "Intel PT is not available");
	o.sampling = 1;
	o.scope = SNAP_SCOPE_BOTH;
	refused(&o, &vm_caps, -EACCES,
		"-trace-include-kernel needs root or kernel.perf_event_paranoid <= 1 (now 2); "
		"run as root or: sudo sysctl kernel.perf_event_paranoid=1");
	o.scope = SNAP_SCOPE_KERNEL;
	refused(&o, &vm_caps, -EACCES, "-trace-kernel-only needs root");
	o.scope = SNAP_SCOPE_USER;
	o.cg = SNAP_CG_LBR;
	refused(&o, &vm_caps, -SNAP_ENOTSUP, "this one has none; use -callgraph-mode fp or dwarf");
	o.cg = SNAP_CG_FP;
	o.multi_snapshot = 1;
	refused(&o, &vm_caps, -SNAP_EUSAGE, "-multi-snapshot needs -trigger");
	o.multi_snapshot = 0;
	{ /* -events without a PMU: the message names the fix */
		struct snap_xev xev[SNAP_XEV_MAX];
		size_t n;

		CHECK_INT_EQ(0, snap_xev_parse("branch-misses", xev, &n));
		o.xev = xev;
		o.nxev = n;
		refused(&o, &vm_caps, -SNAP_ENOTSUP,
			"and this machine has none: record without -events");
	}
}

static void b1_4_res_parsing(void)
{
	struct snap_res r;

	CHECK_INT_EQ(0, snap_res_parse("low", &r));
	CHECK_INT_EQ(SNAP_RES_LOW, r.kind);
	CHECK_INT_EQ(0, snap_res_parse("Normal", &r));
	CHECK_INT_EQ(SNAP_RES_NORMAL, r.kind);
	CHECK_INT_EQ(0, snap_res_parse("HIGH", &r));
	CHECK_INT_EQ(SNAP_RES_HIGH, r.kind);
	CHECK_INT_EQ(0, snap_res_parse("(Custom)", &r));
	CHECK_INT_EQ(SNAP_RES_CUSTOM, r.kind);
	CHECK_INT_EQ(0, snap_res_parse("Custom:", &r));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_res_parse("Medium", &r));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_res_parse("Sample:", &r));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_res_parse("Sample:0", &r));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_res_parse("Sample:-5", &r));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_res_parse("Sample:10x", &r));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_res_parse("(Sample (freq))", &r));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_res_parse("(Sample (freq 10)", &r));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_res_parse("(Custom (cyc maybe))", &r));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_res_parse("(Custom (cyc true) (cyc true))", &r));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_res_parse("(Custom (bogus 1))", &r));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_res_parse("Custom:cyc", &r));
	CHECK_INT_EQ(-SNAP_EUSAGE,
		     snap_res_parse("((((((((((((((((((((((((((((((((((((((((((((((((((", &r));
}

static void b1_4_cg_parsing(void)
{
	enum snap_cg cg;

	CHECK_INT_EQ(0, snap_cg_parse("lbr", &cg));
	CHECK_INT_EQ(SNAP_CG_LBR, cg);
	CHECK_INT_EQ(0, snap_cg_parse("Auto", &cg));
	CHECK_INT_EQ(SNAP_CG_AUTO, cg);
	CHECK_INT_EQ(0, snap_cg_parse("lbr-no-stitch", &cg));
	CHECK_INT_EQ(SNAP_CG_LBR_NOSTITCH, cg);
	CHECK_INT_EQ(0, snap_cg_parse("Frame_pointers", &cg));
	CHECK_INT_EQ(SNAP_CG_FP, cg);
	CHECK_INT_EQ(0, snap_cg_parse("Dwarf", &cg));
	CHECK_INT_EQ(SNAP_CG_DWARF, cg);
	CHECK_INT_EQ(0, snap_cg_parse("(Last_branch_record (stitched false))", &cg));
	CHECK_INT_EQ(SNAP_CG_LBR_NOSTITCH, cg);
	CHECK_INT_EQ(0, snap_cg_parse("(Last_branch_record (stitched true))", &cg));
	CHECK_INT_EQ(SNAP_CG_LBR, cg);
	cg = SNAP_CG_FP;
	CHECK_INT_EQ(0, snap_cg_parse("(Last_branch_record)", &cg)); /* the default: stitched */
	CHECK_INT_EQ(SNAP_CG_LBR, cg);
	cg = SNAP_CG_FP;
	CHECK_INT_EQ(0, snap_cg_parse(" ( Last_branch_record ) ", &cg));
	CHECK_INT_EQ(SNAP_CG_LBR, cg);
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_cg_parse("(Last_branch_record", &cg));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_cg_parse("bts", &cg));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_cg_parse("(Last_branch_record (stitched))", &cg));
	CHECK_STR_EQ("lbr", snap_cg_name(SNAP_CG_LBR_NOSTITCH));
}

static void b1_4_size_parsing(void)
{
	uint64_t b;
	int inexact;

	CHECK_INT_EQ(0, snap_size_parse("8K", &b));
	CHECK_U64_EQ(8192, b);
	CHECK_U64_EQ(2, snap_size_pages(b, &inexact));
	CHECK_INT_EQ(0, inexact);
	CHECK_INT_EQ(0, snap_size_parse("8000B", &b));
	CHECK_U64_EQ(2, snap_size_pages(b, &inexact));
	CHECK_INT_EQ(1, inexact);
	CHECK_INT_EQ(0, snap_size_parse("9K", &b));
	CHECK_U64_EQ(4, snap_size_pages(b, &inexact));
	CHECK_INT_EQ(1, inexact);
	CHECK_INT_EQ(0, snap_size_parse("1G", &b));
	CHECK_U64_EQ(262144, snap_size_pages(b, &inexact));
	CHECK_INT_EQ(0, inexact);
	CHECK_INT_EQ(0, snap_size_parse("1.5MiB", &b));
	CHECK_U64_EQ(1572864, b);
	CHECK_INT_EQ(0, snap_size_parse("100", &b));
	CHECK_U64_EQ(1, snap_size_pages(b, &inexact));
	CHECK_INT_EQ(1, inexact);
	CHECK_INT_EQ(0, snap_size_parse("1024T", &b));
	CHECK_U64_EQ(1ull << 36, snap_size_pages(b, &inexact));
	CHECK_INT_EQ(1, inexact);
	CHECK_INT_EQ(0, snap_size_parse("4k", &b));
	CHECK_U64_EQ(1, snap_size_pages(b, NULL));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_size_parse("", &b));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_size_parse("K", &b));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_size_parse("12Q", &b));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_size_parse("-1M", &b));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_size_parse("99999999999999999999K", &b));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_size_parse("16777216T", &b));
}

static void b1_4_xev_parsing(void)
{
	struct snap_xev x[SNAP_XEV_MAX];
	size_t n;

	CHECK_INT_EQ(0, snap_xev_parse("cache-misses", x, &n));
	CHECK_INT_EQ(1, n);
	CHECK_INT_EQ(SNAP_XEV_CACHE_MISSES, x[0].name);
	CHECK_U64_EQ(1, x[0].n);
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_xev_parse("branch-misses,branch-misses", x, &n));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_xev_parse("instructions", x, &n));
	CHECK_INT_EQ(-SNAP_EUSAGE, snap_xev_parse("", x, &n));
	CHECK_INT_EQ(-SNAP_EUSAGE,
		     snap_xev_parse("((when_to_sample (Period 5)) (name Branch_misses))", x, &n));
}

static void alloc_failures(void)
{
	struct snap_recopts o = base();
	int ok = 0;

	o.sampling = 1;
	for (long k = 0; k < 100 && !ok; k++) {
		struct snap_perfargs pa;
		int err;

		snap_alloc_fail_after(k);
		err = snap_perfargs_build(&o, &vm_caps, &pa);
		snap_alloc_fail_after(-1);
		CHECK(err == 0 || err == -ENOMEM);
		ok = err == 0;
		snap_perfargs_fini(&pa);
	}
	CHECK(ok);
}

int main(void)
{
	RUN(b2_3_pt_default);
	RUN(b2_3_pt_low_high);
	RUN(b2_3_pt_psb_downgrade);
	RUN(b2_3_pt_custom_sexp_order);
	RUN(b2_3_pt_kernel_scopes);
	RUN(b2_3_pt_trigger_multi_thread_size);
	RUN(b2_3_pt_full_execution);
	RUN(b2_3_pt_old_perf);
	RUN(b2_3_pt_extra_events);
	RUN(b2_3_sampling_vm_default);
	RUN(b8_13_sampling_pmu_resolutions);
	RUN(b2_3_sampling_vm_high_and_sample);
	RUN(b2_3_sampling_trigger_kernel_size);
	RUN(b8_12_sampling_ring_capped);
	RUN(b2_3_sampling_full_execution_no_pids);
	RUN(b2_3_sampling_offcpu);
	RUN(b2_3_sampling_dwarf_sizes);
	RUN(b1_4_refusals);
	RUN(b1_4_res_parsing);
	RUN(b1_4_cg_parsing);
	RUN(b1_4_size_parsing);
	RUN(b1_4_xev_parsing);
	RUN(alloc_failures);
	return snap_test_done();
}
