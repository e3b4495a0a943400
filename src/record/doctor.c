// SPDX-License-Identifier: GPL-2.0
#include "record/doctor.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct docb {
	struct snap_doc_item *items;
	size_t n, max;
};

static void item(struct docb *b, const char *what, enum snap_doc_status st, const char *fix,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void item(struct docb *b, const char *what, enum snap_doc_status st, const char *fix,
		 const char *fmt, ...)
{
	struct snap_doc_item *it;
	va_list ap;

	if (b->n >= b->max)
		return;
	it = &b->items[b->n++];
	it->what = what;
	it->status = st;
	va_start(ap, fmt);
	vsnprintf(it->detail, sizeof(it->detail), fmt, ap);
	va_end(ap);
	snprintf(it->fix, sizeof(it->fix), "%s", fix ? fix : "");
}

int snap_doctor_can_record(const struct snap_machine *m)
{
	/* paranoid 3 (a Debian patch) forbids perf to unprivileged users. */
	return m->perf_found && (m->caps.kernel_ok || m->caps.paranoid <= 2);
}

const char *snap_doctor_mode(const struct snap_machine *m)
{
	if (!snap_doctor_can_record(m))
		return "snaptrace cannot record here yet (see the fixes above)";
	if (m->caps.has_pt)
		return "snaptrace records with Intel PT (every branch, ring-buffer snapshots)";
	if (m->caps.has_pmu)
		return "snaptrace records with stack sampling (cycles, 10 kHz by default)";
	return "snaptrace records with stack sampling (cpu-clock, 4 kHz by default: no PMU here)";
}

static void check_perf(struct docb *b, const struct snap_machine *m)
{
	const struct snap_perfcaps *c = &m->caps;

	if (!m->perf_found) {
		item(b, "perf", SNAP_DOC_MISSING,
		     "install it: sudo apt-get install linux-perf (Debian) or linux-tools-$(uname "
		     "-r) "
		     "(Ubuntu); or set SNAPTRACE_PERF=/path/to/perf",
		     "perf not found or not runnable");
		return;
	}
	item(b, "perf", snap_caps_has_ctl_fd(c) ? SNAP_DOC_OK : SNAP_DOC_MISSING,
	     snap_caps_has_ctl_fd(c)
		     ? NULL
		     : "perf >= 5.10 adds the control fd (exact start/stop); upgrade perf",
	     "perf %s", m->perf_version);
}

static void check_pt(struct docb *b, const struct snap_machine *m)
{
	const struct snap_perfcaps *c = &m->caps;

	if (c->has_pt)
		item(b, "Intel PT", SNAP_DOC_OK, NULL, "available%s",
		     c->psb_period ? "" : " (no configurable PSB period: Normal/High act as Low)");
	else
		item(b, "Intel PT", SNAP_DOC_MISSING,
		     "needs an Intel CPU (Broadwell or newer) on bare metal, or a VM with PT "
		     "passthrough; meanwhile snaptrace uses stack sampling",
		     "not available (/sys/bus/event_source/devices/intel_pt is missing)");
	if (c->has_pmu)
		item(b, "hardware PMU", SNAP_DOC_OK, NULL, "available (cycles sampling)");
	else
		item(b, "hardware PMU", SNAP_DOC_MISSING,
		     "enable PMU passthrough in the hypervisor (e.g. -cpu host,pmu=on); sampling "
		     "uses the cpu-clock timer, kept at <= 4 kHz by default",
		     "none: software events only (a VM?)");
	if (c->lbr)
		item(b, "LBR", SNAP_DOC_OK, NULL, "available (-callgraph-mode lbr, the default)");
	else
		item(b, "LBR", SNAP_DOC_MISSING,
		     "the default call graph picks fp or dwarf by looking at the program; build it "
		     "with -fno-omit-frame-pointer for the cheaper fp",
		     "no last branch records: -callgraph-mode lbr is refused");
}

static void check_kernel(struct docb *b, const struct snap_machine *m)
{
	const struct snap_perfcaps *c = &m->caps;
	const char *why = m->euid == 0	     ? "root"
			  : m->cap_perfmon   ? "CAP_PERFMON/CAP_SYS_ADMIN"
			  : c->paranoid <= 1 ? "perf_event_paranoid <= 1"
					     : "";

	item(b, "perf_event_paranoid",
	     c->paranoid > 2 && !c->kernel_ok ? SNAP_DOC_MISSING : SNAP_DOC_INFO,
	     c->paranoid > 2 && !c->kernel_ok
		     ? "perf is closed to non-root users: sudo sysctl kernel.perf_event_paranoid=2"
		     : NULL,
	     "%d", c->paranoid);
	if (c->kernel_ok)
		item(b, "kernel tracing", SNAP_DOC_OK, NULL,
		     "allowed (%s): -trace-include-kernel, -trace-kernel-only", why);
	else
		item(b, "kernel tracing", SNAP_DOC_MISSING,
		     "run as root, or: sudo sysctl kernel.perf_event_paranoid=1",
		     "not allowed (not root, paranoid %d)", c->paranoid);
	if (c->sched_ok)
		item(b, "off-CPU stacks", SNAP_DOC_OK, NULL,
		     "sampling records switches and sched:sched_switch with call chains: time off "
		     "the CPU shows where the thread blocked");
	else
		item(b, "off-CPU stacks", SNAP_DOC_INFO,
		     "as root (or perf_event_paranoid -1) the blocking call chain is recorded too",
		     "sampling records context switches: time off the CPU shows as [off-CPU]");
	if (m->kptr_restrict < 0)
		item(b, "kptr_restrict", SNAP_DOC_INFO, NULL, "unreadable");
	else if (m->kptr_restrict == 0 || (m->kptr_restrict == 1 && m->euid == 0))
		item(b, "kptr_restrict", SNAP_DOC_OK, NULL, "%d: kernel symbols are visible",
		     m->kptr_restrict);
	else
		item(b, "kptr_restrict", SNAP_DOC_MISSING,
		     "kernel frames show as [unknown]: sudo sysctl kernel.kptr_restrict=0",
		     "%d: kernel addresses are hidden", m->kptr_restrict);
}

static void check_decode(struct docb *b, const struct snap_machine *m)
{
	int perf_ok = m->perf_found && snap_caps_has_dlfilter(&m->caps);

	if (perf_ok && m->plugin_found)
		item(b, "dlfilter", SNAP_DOC_OK, NULL, "fast decoding through %s", m->plugin_path);
	else if (!perf_ok)
		item(b, "dlfilter", SNAP_DOC_MISSING,
		     "perf >= 5.14 runs the plugin (3-5x faster decoding); upgrade perf",
		     "perf too old for --dlfilter: decoding uses perf script text");
	else if (m->plugin_off)
		item(b, "dlfilter", SNAP_DOC_MISSING,
		     "unset SNAPTRACE_NO_DLFILTER to decode through the plugin",
		     "no plugin: SNAPTRACE_NO_DLFILTER is set: decoding uses perf script text");
	else
		item(b, "dlfilter", SNAP_DOC_MISSING,
		     "run make: snaptrace-dlfilter.so must sit next to the snaptrace binary "
		     "(or set SNAPTRACE_DLFILTER)",
		     "plugin snaptrace-dlfilter.so not found: decoding uses perf script text");
}

static void check_trigger(struct docb *b, const struct snap_machine *m)
{
	if (m->ptrace_scope >= 3)
		item(b, "ptrace", SNAP_DOC_MISSING,
		     "snaptrace run starts programs with PTRACE_TRACEME: sudo sysctl "
		     "kernel.yama.ptrace_scope=1",
		     "disabled (yama ptrace_scope 3)");
	else
		item(b, "ptrace", SNAP_DOC_OK, NULL, "allowed%s",
		     m->ptrace_scope < 0 ? " (no Yama)" : "");
	if (m->has_bp_pmu)
		item(b, "breakpoints", SNAP_DOC_OK, NULL,
		     "hardware breakpoints available (-trigger, 4 per thread)");
	else
		item(b, "breakpoints", SNAP_DOC_MISSING,
		     "-trigger needs CONFIG_HAVE_HW_BREAKPOINT in the kernel",
		     "no breakpoint PMU: -trigger cannot work");
	item(b, "uprobes", SNAP_DOC_INFO, NULL, "%s",
	     m->has_uprobe_pmu ? "available (root only; snaptrace's trigger uses breakpoints)"
			       : "not available (not needed: the trigger uses breakpoints)");
	item(b, "fzf", m->has_fzf ? SNAP_DOC_OK : SNAP_DOC_INFO,
	     m->has_fzf ? NULL : "for a searchable -trigger ? picker: sudo apt-get install fzf",
	     "%s",
	     m->has_fzf ? "found (-trigger ? picker)" : "not found (-trigger ? shows a list)");
}

size_t snap_doctor_check(const struct snap_machine *m, struct snap_doc_item *items, size_t max)
{
	struct docb b = {items, 0, max};

	check_perf(&b, m);
	check_pt(&b, m);
	check_kernel(&b, m);
	check_decode(&b, m);
	check_trigger(&b, m);
	return b.n;
}
