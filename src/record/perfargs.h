/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The `perf record` argument vector (docs/behaviour.md §2.3), built by a pure
 * function: recording options + machine capabilities in, argv out, and the
 * snapshot/stop control plan
 * (docs/behaviour.md §2.4, §2.5). Nothing here touches files, processes or the terminal.
 */
#ifndef SNAP_RECORD_PERFARGS_H
#define SNAP_RECORD_PERFARGS_H

#include <stddef.h>
#include <stdint.h>

#include "model/event.h"
#include "record/perfvals.h"

/* What the machine and its perf can do (filled by record/caps.c or a test). */
struct snap_perfcaps {
	int perf_major, perf_minor; /* perf version; 0.0 = unknown (treated as old) */
	int has_pt;		    /* /sys/bus/event_source/devices/intel_pt exists */
	int has_pmu;		    /* a hardware PMU (devices/cpu) exists */
	int psb_period;		    /* intel_pt/caps/psb_cyc == 1 */
	int lbr;		    /* every cpuinfo flags line has pdcm (and has_pmu) */
	int kernel_ok;		    /* root, CAP_PERFMON/SYS_ADMIN, or paranoid <= 1 */
	int paranoid;		    /* kernel.perf_event_paranoid */
	uint64_t max_sample_rate;   /* kernel.perf_event_max_sample_rate; 0 = unknown */
	int no_kcore;		    /* never pass --kcore (SNAPTRACE_PERF_NO_KCORE) */
	int sched_ok;		    /* may sample sched:sched_switch (root, CAP_PERFMON, or
				       paranoid <= -1 with a readable tracefs) */
	int big_ring;		    /* may lock a large ring (root or CAP_IPC_LOCK) */
};

/* What the perf version allows: record/caps.h (snap_caps_has_ctl_fd() ...). */

enum snap_snapwhen {
	SNAP_SNAP_NEVER = 0, /* -full-execution */
	SNAP_SNAP_AT_EXIT,   /* no trigger: the snapshot is taken when recording ends */
	SNAP_SNAP_ON_CALL,   /* -trigger */
};

/* The recording options (the flags of docs/behaviour.md §1.4). All borrowed. */
struct snap_recopts {
	const char *perf; /* perf binary; NULL = "perf" */
	const char *data; /* output path for perf.data; NULL = "perf.data" */
	const int *pids;  /* processes/threads to trace; NULL with npids 0 prints "PID" */
	size_t npids;
	int sampling; /* -sampling (or the automatic fallback) */
	enum snap_scope scope;
	struct snap_res res;
	int multi_thread;
	int full_execution;
	int multi_snapshot;
	int trigger;		 /* a -trigger was given */
	uint64_t snapshot_bytes; /* -snapshot-size; 0 = perf's default */
	enum snap_cg cg;	 /* AUTO here: lbr where the CPU has it, else fp; callers
				    that inspect the program resolve AUTO first (cgpick.h) */
	int no_offcpu;		 /* sampling without switch events (tests, old kernels) */
	int no_buildid_cache;	 /* --no-buildid-cache: another user's processes, whose
				    files perf would copy (or link) into ~/.debug */
	const struct snap_xev *xev;
	size_t nxev;
};

/* Warnings the builder reports (bit set in snap_perfargs.warn). */
#define SNAP_PA_W_PSB_DOWNGRADE 0x01u /* Normal/High without psb_period: used Low */
#define SNAP_PA_W_SIZE_ROUNDED	0x02u /* -snapshot-size did not map to whole pages */
#define SNAP_PA_W_KCORE_OLD	0x04u /* kernel PT trace with perf < 5.5: no --kcore */
#define SNAP_PA_W_CG_DEFAULT_FP 0x08u /* no LBR here: call graphs use frame pointers */
#define SNAP_PA_W_FREQ_HIGH	0x10u /* sampling frequency risky without a PMU */
#define SNAP_PA_W_SIZE_CAPPED	0x20u /* sampling ring capped at SNAP_SAMPLING_MAX_PAGES */

/* dwarf call graphs: bytes of stack copied per sample (perf's default: less
 * cuts ordinary C++ stacks, e.g. a std::mt19937 on the stack), and the ring
 * they get when the user gave no -snapshot-size, only where a big ring may be
 * locked (root or CAP_IPC_LOCK): 16384 pages = 64 MiB for the snapshot ring
 * of --per-thread (room for ~7500 samples of ~8.4 KiB), 8192 pages = 32 MiB
 * per CPU with -multi-thread, and for -full-execution, where perf drains the
 * ring as it fills (perf's 512 KiB lasts ~15 ms at 4 kHz: it lost chunks).
 * Without that permission perf's default ring stays. */
#define SNAP_DWARF_STACK	8192u
#define SNAP_DWARF_PAGES	16384u
#define SNAP_DWARF_CPU_PAGES	8192u
/* Bytes a sample takes in the ring besides the stack copy (header, ip, tid,
 * time, period, registers, a short callchain): used to say what a ring holds. */
#define SNAP_SAMPLE_OVERHEAD	256u
#define SNAP_FP_SAMPLE_BYTES	256u /* an fp/lbr sample: header + ~24 frames */
#define SNAP_PERF_DEFAULT_PAGES 128u /* perf's ring without -m: 512 KiB */

/* The largest sampling ring (1 GiB of 4 KiB pages). */
#define SNAP_SAMPLING_MAX_PAGES (1ull << 18)

/* File descriptors perf gets for --control (set up by record/perfrun.c). */
#define SNAP_PERF_CTL_FD 3
#define SNAP_PERF_ACK_FD 4

struct snap_perfargs {
	char **argv; /* NULL-terminated; owned, release with snap_perfargs_fini */
	size_t argc;
	enum snap_snapwhen when;
	enum snap_cg cg;       /* the call-graph mode used (sampling), else AUTO */
	uint64_t freq;	       /* sampling frequency used */
	uint64_t pages;	       /* -m pages used, 0 = default */
	int ctl;	       /* --control=fd:3,4 and -D -1 are in argv (perf >= 5.10) */
	int switch_output;     /* --switch-output=signal is in argv */
	int switch_events;     /* --switch-events is in argv (sampling: off-CPU time) */
	int sched_switch;      /* sched:sched_switch with call chains is sampled too */
	uint32_t dwarf_stack;  /* dwarf: bytes of stack per sample, else 0 */
	uint64_t ring_bytes;   /* sampling: the sample ring's size (perf's default when
				 no -m was given: 516 KiB), for coverage estimates */
	uint64_t ring_samples; /* sampling: about how many samples that ring holds */
	unsigned warn;	       /* SNAP_PA_W_* */
	char err[256];	       /* on -SNAP_EUSAGE/-SNAP_ENOTSUP/-EACCES: one-line reason */
};

/*
 * Builds `perf record ...` (argv[0] is the perf binary). The order is
 * docs/behaviour.md §2.3: record -o DATA --timestamp [--no-bpf-event] --event=PRIMARY[,EXTRA]
 * [--switch-output=signal] [--switch-events] THREAD_SEL PIDS [--snapshot[=e]]
 * [--control=fd:3,4 -D -1] [--kcore] [-m,PAGES | --mmap-pages=PAGES]
 * [--call-graph MODE[,SIZE]] [--user-callchains] [--no-buildid-cache]. Sampling's PRIMARY is
 * dummy:u,EVENT/freq=F,overwrite/SEL[,sched:sched_switch/overwrite/] (a ring
 * without --overwrite; see perfargs.c), or EVENT/freq=F/SEL[,sched:sched_switch]
 * with -full-execution.
 * Returns 0 and fills *out (call snap_perfargs_fini), -SNAP_EUSAGE for a flag
 * combination that cannot work (out->err says why), -SNAP_ENOTSUP for a
 * capability this machine lacks, -EACCES for a kernel scope without the
 * permission (out->err says what to do), or -ENOMEM. out is always safe to fini.
 */
int snap_perfargs_build(const struct snap_recopts *o, const struct snap_perfcaps *c,
			struct snap_perfargs *out);
void snap_perfargs_fini(struct snap_perfargs *pa);
/* Returns an owned space-joined copy of argv (for -print-perf-commands), or NULL. */
char *snap_perfargs_join(const struct snap_perfargs *pa);

/* How to take a snapshot and how to stop perf (docs/behaviour.md §2.4, §2.5). */
enum snap_ctl_action {
	SNAP_CTL_NONE = 0,
	SNAP_CTL_CMD_SNAPSHOT, /* control fd "snapshot" */
	SNAP_CTL_CMD_STOP,     /* control fd "stop" */
	SNAP_CTL_SIGUSR2,
	SNAP_CTL_SIGINT,
	SNAP_CTL_SIGTERM,
};
struct snap_ctlplan {
	enum snap_ctl_action snapshot, stop;
};
/* Returns the plan for a built argv. Sampling snapshots are SIGUSR2 (with
 * --switch-output=signal) or nothing; stopping prefers the control fd. */
struct snap_ctlplan snap_perfargs_ctlplan(const struct snap_perfargs *pa,
					  const struct snap_recopts *o,
					  const struct snap_perfcaps *c);

#endif
