// SPDX-License-Identifier: GPL-2.0
#include "model/event.h"

#include <string.h>

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
