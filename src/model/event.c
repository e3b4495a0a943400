// SPDX-License-Identifier: GPL-2.0
#include "model/event.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/strtab.h"

void snap_event_set_branch_flags(struct snap_event *ev, uint32_t flags)
{
	uint32_t f = flags & ~(SNAP_PF_IN_TX | SNAP_PF_INTR_DISABLE | SNAP_PF_INTR_TOGGLE);
	uint32_t base = f & ~(SNAP_PF_TRACE_BEGIN | SNAP_PF_TRACE_END);
	uint8_t kind = SNAP_BR_NONE;

	ev->in_tx = (flags & SNAP_PF_IN_TX) != 0;
	ev->br_state = SNAP_BR_NOSTATE;
	if (f & SNAP_PF_TRACE_BEGIN)
		ev->br_state = SNAP_BR_START;
	if (f & SNAP_PF_TRACE_END)
		ev->br_state = ev->br_state == SNAP_BR_START ? SNAP_BR_NOSTATE : SNAP_BR_END;
	if (base & SNAP_PF_VMEXIT)
		kind = SNAP_BR_VMEXIT;
	else if (base & SNAP_PF_VMENTRY)
		kind = SNAP_BR_VMENTRY;
	else if (base & SNAP_PF_TX_ABORT)
		kind = SNAP_BR_TXABORT;
	else if ((base & (SNAP_PF_CALL | SNAP_PF_ASYNC | SNAP_PF_INTERRUPT)) ==
		 (SNAP_PF_CALL | SNAP_PF_ASYNC | SNAP_PF_INTERRUPT))
		kind = SNAP_BR_HWINT;
	else if (base & SNAP_PF_ASYNC)
		kind = SNAP_BR_ASYNC;
	else if ((base & (SNAP_PF_CALL | SNAP_PF_INTERRUPT)) == (SNAP_PF_CALL | SNAP_PF_INTERRUPT))
		kind = SNAP_BR_INT;
	else if ((base & (SNAP_PF_RETURN | SNAP_PF_INTERRUPT)) ==
		 (SNAP_PF_RETURN | SNAP_PF_INTERRUPT))
		kind = SNAP_BR_IRET;
	else if ((base & (SNAP_PF_CALL | SNAP_PF_SYSCALLRET)) ==
		 (SNAP_PF_CALL | SNAP_PF_SYSCALLRET))
		kind = SNAP_BR_SYSCALL;
	else if ((base & (SNAP_PF_RETURN | SNAP_PF_SYSCALLRET)) ==
		 (SNAP_PF_RETURN | SNAP_PF_SYSCALLRET))
		kind = SNAP_BR_SYSRET;
	else if (base & SNAP_PF_CALL)
		kind = SNAP_BR_CALL;
	else if (base & SNAP_PF_RETURN)
		kind = SNAP_BR_RETURN;
	else if (base & SNAP_PF_BRANCH)
		kind = SNAP_BR_JUMP;
	/* "tr strt" (0x101) and "tr end" of a plain jmp (0x201) carry no kind. */
	if ((f & (SNAP_PF_TRACE_BEGIN | SNAP_PF_TRACE_END)) && kind == SNAP_BR_JUMP)
		kind = SNAP_BR_NONE;
	ev->br_kind = kind;
}

const char *snap_scope_name(enum snap_scope scope)
{
	switch (scope) {
	case SNAP_SCOPE_KERNEL:
		return "k";
	case SNAP_SCOPE_BOTH:
		return "uk";
	case SNAP_SCOPE_USER:
	default:
		return "u";
	}
}

int snap_event_is_switch_name(const char *s, size_t n)
{
	return n == sizeof(SNAP_SWITCH_EVENT) - 1 && memcmp(s, SNAP_SWITCH_EVENT, n) == 0;
}

static const char *const br_kind_names[] = {
	[SNAP_BR_NONE] = "none",       [SNAP_BR_CALL] = "call",	      [SNAP_BR_RETURN] = "return",
	[SNAP_BR_JUMP] = "jmp",	       [SNAP_BR_INT] = "int",	      [SNAP_BR_HWINT] = "hw int",
	[SNAP_BR_IRET] = "iret",       [SNAP_BR_SYSCALL] = "syscall", [SNAP_BR_SYSRET] = "sysret",
	[SNAP_BR_TXABORT] = "tx abrt", [SNAP_BR_ASYNC] = "async",     [SNAP_BR_VMENTRY] = "vmentry",
	[SNAP_BR_VMEXIT] = "vmexit",
};

#define N_BR_KINDS (sizeof(br_kind_names) / sizeof(br_kind_names[0]))

const char *snap_br_kind_name(unsigned kind)
{
	return kind < N_BR_KINDS ? br_kind_names[kind] : "?";
}

int snap_br_kind_parse(const char *s, size_t n)
{
	for (size_t k = 0; k < N_BR_KINDS; k++)
		if (strlen(br_kind_names[k]) == n && !memcmp(br_kind_names[k], s, n))
			return (int)k;
	return -1;
}

static const char *name_or(const struct snap_strtab *st, uint32_t id, const char *dflt)
{
	const char *s = snap_strtab_get(st, id);

	return s[0] ? s : dflt;
}

static void desc_branch(const struct snap_strtab *st, const struct snap_event *ev, const char *when,
			char *buf, size_t size)
{
	const char *state = ev->br_state == SNAP_BR_START ? "tr strt"
			    : ev->br_state == SNAP_BR_END ? "tr end"
							  : "";
	const char *kind = ev->br_kind ? snap_br_kind_name(ev->br_kind) : "";

	snprintf(buf, size, "%s%s%s 0x%" PRIx64 " %s => 0x%" PRIx64 " %s at %s tid %" PRId32, state,
		 ev->br_state && ev->br_kind ? "  " : "", kind, ev->src.ip,
		 snap_strtab_get(st, ev->src.sym), ev->dst.ip, snap_strtab_get(st, ev->dst.sym),
		 when, ev->tid);
}

char *snap_event_desc(const struct snap_strtab *st, const struct snap_event *ev,
		      const struct snap_loc *frame, char *buf, size_t size)
{
	const struct snap_loc *l = &ev->src;
	char when[64];

	if (!size)
		return buf;
	if (ev->has_time)
		snprintf(when, sizeof(when), "%" PRIu64 ".%09" PRIu64, ev->time / 1000000000u,
			 ev->time % 1000000000u);
	else
		snprintf(when, sizeof(when), "?");
	switch (ev->kind) {
	case SNAP_EV_BRANCH:
		desc_branch(st, ev, when, buf, size);
		return buf;
	case SNAP_EV_SAMPLE:
		l = frame;
		if (!l && ev->nframes && ev->frames)
			l = &ev->frames[ev->nframes - 1];
		if (l)
			snprintf(buf, size, "%s sample frame 0x%" PRIx64 " %s at %s tid %" PRId32,
				 name_or(st, ev->event, "stack"), l->ip,
				 snap_strtab_get(st, l->sym), when, ev->tid);
		else
			snprintf(buf, size, "%s sample (no frames) at %s tid %" PRId32,
				 name_or(st, ev->event, "stack"), when, ev->tid);
		return buf;
	case SNAP_EV_POWER:
		snprintf(buf, size, "cbr %" PRIu32 " MHz 0x%" PRIx64 " %s at %s tid %" PRId32,
			 ev->freq_mhz, l->ip, snap_strtab_get(st, l->sym), when, ev->tid);
		return buf;
	case SNAP_EV_EXTRA:
		snprintf(buf, size, "%s 0x%" PRIx64 " %s at %s tid %" PRId32,
			 name_or(st, ev->event, "event"), l->ip, snap_strtab_get(st, l->sym), when,
			 ev->tid);
		return buf;
	case SNAP_EV_SWITCH:
		snprintf(buf, size, "context switch %s%s%s at %s tid %" PRId32,
			 ev->sw_out ? "out" : "in", ev->sw_preempt ? " (preempted)" : "",
			 ev->nframes ? " with its call chain" : "", when, ev->tid);
		return buf;
	case SNAP_EV_TASK:
		snprintf(buf, size, "thread %s at %s tid %" PRId32,
			 ev->task_exit ? "exit" : "birth", when, ev->tid);
		return buf;
	case SNAP_EV_ERROR:
		snprintf(buf, size, "decode error \"%s\" ip 0x%" PRIx64 " at %s tid %" PRId32,
			 snap_strtab_get(st, ev->msg), l->ip, when, ev->tid);
		return buf;
	default:
		snprintf(buf, size, "event kind %d at %s tid %" PRId32, (int)ev->kind, when,
			 ev->tid);
		return buf;
	}
}
