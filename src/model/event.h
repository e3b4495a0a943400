/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The event model: what the parsers (perf script text, the dlfilter record
 * stream) produce and what stack/ consumes. Strings are strtab ids
 * (util/strtab.h); 0 means "none".
 */
#ifndef SNAP_MODEL_EVENT_H
#define SNAP_MODEL_EVENT_H

#include <stddef.h>
#include <stdint.h>

struct snap_strtab;

enum snap_ev_kind {
	SNAP_EV_BRANCH = 1, /* a branch decoded from Intel PT (perf --itrace=b) */
	SNAP_EV_ERROR,	    /* perf's "instruction trace error" (a gap in the data) */
	SNAP_EV_POWER,	    /* cbr: CPU frequency change */
	SNAP_EV_SAMPLE,	    /* a stack sample of the primary sampling event */
	SNAP_EV_EXTRA,	    /* a sample of an extra event (branch-misses, cache-misses, ...) */
	SNAP_EV_SWITCH,	    /* a context switch of the thread (docs/sampling.md) */
	SNAP_EV_TASK,	    /* a thread born (fork, exec) or exiting (docs/sampling.md) */
};

/* The tracepoint whose samples are switch-outs with the blocking call chain. */
#define SNAP_SWITCH_EVENT "sched:sched_switch"

/* What the branch instruction was (docs/behaviour.md §3.2). */
enum snap_br_kind {
	SNAP_BR_NONE = 0,
	SNAP_BR_CALL,
	SNAP_BR_RETURN,
	SNAP_BR_JUMP, /* jmp, jcc */
	SNAP_BR_INT,  /* software interrupt instruction */
	SNAP_BR_HWINT,
	SNAP_BR_IRET,
	SNAP_BR_SYSCALL,
	SNAP_BR_SYSRET,
	SNAP_BR_TXABORT,
	SNAP_BR_ASYNC,
	SNAP_BR_VMENTRY,
	SNAP_BR_VMEXIT,
};

/* Whether tracing started or stopped at this branch. */
enum snap_br_state {
	SNAP_BR_NOSTATE = 0,
	SNAP_BR_START, /* "tr strt": trace (re)starts at dst */
	SNAP_BR_END,   /* "tr end": trace stops after src */
};

/* perf's branch flag bits (PERF_IP_FLAG_*, identical in perf_dlfilter.h). */
#define SNAP_PF_BRANCH	    0x0001u
#define SNAP_PF_CALL	    0x0002u
#define SNAP_PF_RETURN	    0x0004u
#define SNAP_PF_CONDITIONAL 0x0008u
#define SNAP_PF_SYSCALLRET  0x0010u
#define SNAP_PF_ASYNC	    0x0020u
#define SNAP_PF_INTERRUPT   0x0040u
#define SNAP_PF_TX_ABORT    0x0080u
#define SNAP_PF_TRACE_BEGIN 0x0100u
#define SNAP_PF_TRACE_END   0x0200u
#define SNAP_PF_IN_TX	    0x0400u
#define SNAP_PF_VMENTRY	    0x0800u
#define SNAP_PF_VMEXIT	    0x1000u

/* Interrupt-state bits (PERF_IP_FLAG_INTR_*) of newer perf: no effect on the kind. */
#define SNAP_PF_INTR_DISABLE 0x2000u
#define SNAP_PF_INTR_TOGGLE  0x4000u

/* An address with its symbol. */
struct snap_loc {
	uint64_t ip;  /* absolute address; 0 = none. Top bit set = kernel address. */
	uint64_t off; /* offset of ip in its symbol */
	uint32_t sym; /* display name (strtab id): "foo", "[unknown @ 0x1234 (dso)]"; 0 = none */
	uint32_t dso; /* DSO path or "[kernel.kallsyms]" (strtab id), 0 = unknown */
	/* a call-chain frame perf printed "(inlined)": code inlined into the next
	 * outer frame's function, in its DSO (docs/report.md) */
	uint8_t inlined;
	/* a user frame of a frame-pointer chain without a frame of its own at ip:
	 * the frame outside it is not its caller (parse/cfi.h snap_cfi_mark_frames,
	 * docs/sampling.md); in the struct's padding */
	uint8_t frameless;
};

/* 1 if l's address is a kernel one (top bit set, docs/behaviour.md §3.3). */
static inline int snap_loc_is_kernel(const struct snap_loc *l)
{
	return (l->ip >> 63) != 0;
}

/*
 * One decoded event. Which fields are meaningful depends on kind:
 *  BRANCH: br_kind, br_state, in_tx, src, dst
 *  ERROR:  msg, src.ip (0 if perf printed no ip), has_time may be 0
 *  POWER:  freq_mhz, src (where the cbr packet was)
 *  SAMPLE: event, period, frames[0..nframes) OUTERMOST FIRST (frames[nframes-1] is the leaf)
 *  EXTRA:  event, period, src (the sampled location; the leaf frame if a chain was recorded)
 *  SWITCH: sw_out (1: the thread leaves the CPU, 0: it comes back), sw_preempt (left
 *          while still runnable), event (SNAP_SWITCH_EVENT for a tracepoint sample, else 0)
 *          and frames[0..nframes) outermost first: where it blocked (tracepoint
 *          samples only; PERF_RECORD_SWITCH records have no frames)
 *  TASK:   task_exit (1: the thread pid/tid exits, PERF_RECORD_EXIT; 0: it is
 *          born, PERF_RECORD_FORK of it or PERF_RECORD_COMM exec); pid/tid
 *          are the thread's (not the header's, which is the parent for a fork)
 * pid/tid are as perf printed them (0 or -1 = unknown).
 */
struct snap_event {
	enum snap_ev_kind kind;
	int32_t pid, tid;
	uint32_t comm; /* command name if perf printed one (strtab id), else 0 */
	uint64_t time; /* perf time in ns */
	uint8_t has_time;
	uint8_t br_kind;  /* enum snap_br_kind */
	uint8_t br_state; /* enum snap_br_state */
	uint8_t in_tx;	  /* "(x)": inside a TSX transaction */
	uint8_t sw_out;	  /* SWITCH */
	uint8_t sw_preempt;
	uint8_t task_exit; /* TASK */
	struct snap_loc src, dst;
	uint32_t msg;	   /* ERROR: message (strtab id) */
	uint32_t freq_mhz; /* POWER */
	uint32_t event;	   /* SAMPLE/EXTRA: event name without modifiers, e.g. "cpu-clock" */
	uint64_t period;
	const struct snap_loc *frames; /* borrowed from the parser until its next next() */
	uint32_t nframes;
};

/* Which privilege levels a trace may contain (docs/behaviour.md §4.7). */
enum snap_scope {
	SNAP_SCOPE_USER = 0, /* default */
	SNAP_SCOPE_KERNEL,   /* -trace-kernel-only */
	SNAP_SCOPE_BOTH,     /* -trace-include-kernel */
};

/* Maps perf branch flags (SNAP_PF_*) to kind/state/in_tx as perf script
 * would print them (docs/behaviour.md §3.2). Defined in model/event.c. */
void snap_event_set_branch_flags(struct snap_event *ev, uint32_t flags);
/* Returns 1 if the event name s (n bytes, modifiers already cut) is
 * SNAP_SWITCH_EVENT. Defined in model/event.c. */
int snap_event_is_switch_name(const char *s, size_t n);
/* The one name of each branch kind, as perf script prints it: "call",
 * "return", "jmp", "int", "hw int", "iret", "syscall", "sysret", "tx abrt",
 * "async", "vmentry", "vmexit"; "none" for SNAP_BR_NONE, "?" out of range. */
const char *snap_br_kind_name(unsigned kind);
/* The kind whose snap_br_kind_name is s (n bytes), or -1. */
int snap_br_kind_parse(const char *s, size_t n);
/* One-line description of ev for messages, tests and fuzz targets, e.g.
 * "call 0x401000 foo => 0xffffffff81000000 do_syscall_64 at 12.345678901 tid 42".
 * Names are looked up in st. For a SAMPLE, frame names the frame shown
 * (NULL: the leaf). Writes at most size bytes (NUL-terminated); returns buf. */
char *snap_event_desc(const struct snap_strtab *st, const struct snap_event *ev,
		      const struct snap_loc *frame, char *buf, size_t size);
/* Returns "u", "k" or "uk" for messages and perf event modifiers. */
const char *snap_scope_name(enum snap_scope scope);

#endif
