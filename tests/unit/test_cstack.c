// SPDX-License-Identifier: GPL-2.0
/*
 * stack/cstack: one thread's branch state machine, table-driven. Each case is
 * a list of event lines (mock_timeline.h syntax, times used directly as trace
 * times) and the exact timeline text it must produce.
 */
#include <errno.h>

#include "alloc_sweep.h"
#include "cstack_threads.h"
#include "mock_timeline.h"
#include "snap_test.h"
#include "stack/cstack.h"
#include "util/alloc.h"
#include "util/err.h"

/* Case tables leave trailing counters out when they are 0. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define MAXTH 4

struct drv {
	struct snap_strtab st;
	struct mock_tl m;
	struct snap_cstack_ctx ctx;
	struct snap_cstack cs[MAXTH];
	size_t n;
};

static int drv_init(struct drv *d, enum snap_scope scope, uint32_t depth)
{
	memset(d, 0, sizeof(*d));
	snap_strtab_init(&d->st);
	mock_init(&d->m, &d->st);
	return snap_cstack_ctx_init(&d->ctx, &d->m.base, &d->st, scope, depth);
}

static void drv_fini(struct drv *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		snap_cstack_fini(&d->cs[i]);
	snap_cstack_ctx_fini(&d->ctx);
	mock_fini(&d->m);
	snap_strtab_fini(&d->st);
}

static int drv_feed(struct drv *d, const char *line)
{
	struct test_ev te;
	struct snap_cstack *cs = NULL;
	uint64_t t;
	int err;

	if (test_ev_parse(&d->st, line, &te) < 0) {
		fprintf(stderr, "bad test line: %s\n", line);
		return -SNAP_EPARSE;
	}
	err = cstack_threads_get(d->cs, &d->n, MAXTH, &d->ctx, &te.ev, &cs);
	if (err < 0)
		return err;
	t = snap_cstack_time(cs, te.ev.has_time, te.ev.time);
	if (te.ev.kind == SNAP_EV_ERROR)
		return snap_cstack_error(cs, te.ev.msg, t);
	return snap_cstack_branch(cs, &te.ev, t);
}

static int drv_finish(struct drv *d)
{
	return cstack_threads_end(d->cs, d->n);
}

struct ccase {
	const char *name;
	enum snap_scope scope;
	uint32_t depth;
	const char *in[24];
	const char *out;
	uint64_t unmatched, capped, unexpected;
};

static const struct ccase cases[] = {
	{"b4_5_1_calls_and_returns",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "10 1/1 call 400010 main 401000 foo",
	  "20 1/1 call 401010 foo 402000 bar", "30 1/1 return 402010 bar 401020 foo",
	  "40 1/1 return 401030 foo 400020 main"},
	 "B 10 tid=1 foo address=0x401000 symbol=foo\n"
	 "B 20 tid=1 bar address=0x402000 symbol=bar\n"
	 "E 30 tid=1 bar\n"
	 "E 40 tid=1 foo\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 40 tid=1 main\n"},
	/* docs/behaviour.md §4.3 example 1: two calls and returns at 1, next op at 100. */
	{"b4_3_spread_example_1",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "1 1/1 call 400010 main 401000 sub",
	  "1 1/1 return 401010 sub 400014 main", "1 1/1 call 400020 main 401000 sub",
	  "1 1/1 return 401010 sub 400024 main", "100 1/1 call 400030 main 402000 baz"},
	 "B 1 tid=1 sub address=0x401000 symbol=sub\n"
	 "E 50 tid=1 sub\n"
	 "B 50 tid=1 sub address=0x401000 symbol=sub\n"
	 "E 100 tid=1 sub\n"
	 "B 100 tid=1 baz address=0x402000 symbol=baz\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 100 tid=1 baz\n"
	 "E 100 tid=1 main\n"},
	/* docs/behaviour.md §4.3 example 2: four calls at 100, next op at 103. */
	{"b4_3_spread_example_2",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "100 1/1 call 400010 main 401000 a",
	  "100 1/1 call 401010 a 402000 b", "100 1/1 call 402010 b 403000 c",
	  "100 1/1 call 403010 c 404000 d", "103 1/1 return 404010 d 403014 c"},
	 "B 100 tid=1 a address=0x401000 symbol=a\n"
	 "B 100 tid=1 b address=0x402000 symbol=b\n"
	 "B 101 tid=1 c address=0x403000 symbol=c\n"
	 "B 102 tid=1 d address=0x404000 symbol=d\n"
	 "E 103 tid=1 d\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 103 tid=1 c\n"
	 "E 103 tid=1 b\n"
	 "E 103 tid=1 a\n"
	 "E 103 tid=1 main\n"},
	{"b4_3_one_ns_apart",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "1 1/1 call 400010 main 401000 a",
	  "2 1/1 call 401010 a 402000 b", "3 1/1 return 402010 b 401014 a",
	  "4 1/1 return 401020 a 400014 main"},
	 "B 1 tid=1 a address=0x401000 symbol=a\n"
	 "B 2 tid=1 b address=0x402000 symbol=b\n"
	 "E 3 tid=1 b\n"
	 "E 4 tid=1 a\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 4 tid=1 main\n"},
	/* A thread first seen at 50: its events stamped 50 land at 51 (docs/behaviour.md §4.2). */
	{"b4_2_late_thread_plus_1ns",
	 SNAP_SCOPE_USER,
	 0,
	 {"50 1/1 strt 0 - 400000 main", "50 1/1 call 400010 main 401000 a",
	  "60 1/1 return 401010 a 400014 main"},
	 "B 51 tid=1 main address=0x400000 symbol=main\n"
	 "B 55 tid=1 a address=0x401000 symbol=a\n"
	 "E 60 tid=1 a\n"
	 "E 60 tid=1 main\n"},
	{"b4_5_4_plt_call_then_jump",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "10 1/1 call 400010 main 401000 foo@plt",
	  "11 1/1 jmp 401000 foo@plt 402000 foo", "20 1/1 return 402010 foo 400014 main"},
	 "B 10 tid=1 foo@plt address=0x401000 symbol=foo@plt\n"
	 "E 11 tid=1 foo@plt\n"
	 "B 11 tid=1 foo address=0x402000 symbol=foo\n"
	 "E 20 tid=1 foo\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 20 tid=1 main\n"},
	/* a tail-calls foo through the PLT: a is replaced by foo@plt, then foo. */
	{"b4_5_4_tail_call_through_plt",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "10 1/1 call 400010 main 403000 a",
	  "20 1/1 jmp 403010 a 401000 foo@plt", "21 1/1 jmp 401000 foo@plt 402000 foo",
	  "30 1/1 return 402010 foo 400014 main"},
	 "B 10 tid=1 a address=0x403000 symbol=a\n"
	 "E 20 tid=1 a\n"
	 "B 20 tid=1 foo@plt address=0x401000 symbol=foo@plt\n"
	 "E 21 tid=1 foo@plt\n"
	 "B 21 tid=1 foo address=0x402000 symbol=foo\n"
	 "E 30 tid=1 foo\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 30 tid=1 main\n"},
	{"b4_5_4_jump_within_symbol_ignored",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "10 1/1 jmp 400010 main 400020 main",
	  "20 1/1 jmp 400030 main 400000 main"},
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 20 tid=1 main\n"},
	{"b8_8_direct_recursion",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 401000 f", "10 1/1 call 401010 f 401000 f",
	  "20 1/1 call 401010 f 401000 f", "30 1/1 return 401020 f 401014 f",
	  "40 1/1 return 401020 f 401014 f"},
	 "B 10 tid=1 f address=0x401000 symbol=f\n"
	 "B 20 tid=1 f address=0x401000 symbol=f\n"
	 "E 30 tid=1 f\n"
	 "E 40 tid=1 f\n"
	 "B 0 tid=1 f address=0x401000 symbol=f\n"
	 "E 40 tid=1 f\n"},
	{"b8_8_mutual_recursion",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "10 1/1 call 400010 main 401000 a",
	  "20 1/1 call 401010 a 402000 b", "30 1/1 call 402010 b 401000 a",
	  "40 1/1 return 401020 a 402014 b", "50 1/1 return 402020 b 401014 a",
	  "60 1/1 return 401020 a 400014 main"},
	 "B 10 tid=1 a address=0x401000 symbol=a\n"
	 "B 20 tid=1 b address=0x402000 symbol=b\n"
	 "B 30 tid=1 a address=0x401000 symbol=a\n"
	 "E 40 tid=1 a\n"
	 "E 50 tid=1 b\n"
	 "E 60 tid=1 a\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 60 tid=1 main\n"},
	/* Returns past the bottom: [unknown] spans from create_time, inferred callers. */
	{"b4_5_3_return_with_empty_stack",
	 SNAP_SCOPE_USER,
	 0,
	 {"100 1/1 return 401000 foo 400100 main", "110 1/1 return 400100 main 500000 start"},
	 "E 110 tid=1 main\n"
	 "B 100 tid=1 start address=0x500000 symbol=start inferred_start_time=true\n"
	 "B 100 tid=1 main address=0x400100 symbol=main inferred_start_time=true\n"
	 "X 100..101 tid=1 [unknown]\n"
	 "E 110 tid=1 start\n",
	 1},
	/* A jump into another symbol with an empty stack infers the frame. */
	{"b4_5_4_jump_with_empty_stack_infers",
	 SNAP_SCOPE_USER,
	 0,
	 {"100 1/1 jmp 401000 foo 401010 foo", "110 1/1 call 401020 foo 402000 bar"},
	 "B 110 tid=1 bar address=0x402000 symbol=bar\n"
	 "B 100 tid=1 foo address=0x401010 symbol=foo inferred_start_time=true\n"
	 "E 110 tid=1 bar\n"
	 "E 110 tid=1 foo\n"},
	{"b4_6_tr_end_syscall_user",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "10 1/1 call 400010 main 401000 read",
	  "20 1/1 end syscall 401005 read 0 -", "30 1/1 strt 0 - 401007 read",
	  "40 1/1 return 401010 read 400014 main"},
	 "B 10 tid=1 read address=0x401000 symbol=read\n"
	 "B 20 tid=1 [syscall] address=0x0 symbol=[syscall]\n"
	 "E 30 tid=1 [syscall]\n"
	 "E 40 tid=1 read\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 40 tid=1 main\n"},
	{"b4_6_tr_end_async_and_plain",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "10 1/1 end async 400010 main 0 -",
	  "20 1/1 strt 0 - 400010 main", "30 1/1 end 400020 main 0 -",
	  "40 1/1 strt 0 - 400020 main", "50 1/1 end return 400030 main 0 -",
	  "60 1/1 strt 0 - 400040 main"},
	 "B 10 tid=1 [untraced] address=0x0 symbol=[untraced]\n"
	 "E 20 tid=1 [untraced]\n"
	 "B 30 tid=1 [untraced] address=0x0 symbol=[untraced]\n"
	 "E 40 tid=1 [untraced]\n"
	 "B 50 tid=1 [returned] address=0x0 symbol=[returned]\n"
	 "E 60 tid=1 [returned]\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 60 tid=1 main\n"},
	/* "tr end  call" pushes the callee; "tr strt" then pops the top. */
	{"b4_6_tr_end_call",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "10 1/1 end call 400010 main 401000 foo",
	  "20 1/1 strt 0 - 401000 foo"},
	 "B 10 tid=1 foo address=0x401000 symbol=foo\n"
	 "E 20 tid=1 foo\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 20 tid=1 main\n"},
	{"b4_5_7_syscall_sysret_uk",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "10 1/1 call 400010 main 401000 read",
	  "20 1/1 syscall 401005 read ffffffff81000000 entry_SYSCALL_64",
	  "30 1/1 call ffffffff81000010 entry_SYSCALL_64 ffffffff81001000 do_syscall_64",
	  "40 1/1 return ffffffff81001010 do_syscall_64 ffffffff81000014 entry_SYSCALL_64",
	  "50 1/1 sysret ffffffff81000100 entry_SYSCALL_64 401007 read",
	  "60 1/1 return 401010 read 400014 main"},
	 /* ops at the syscall's time wait: an inferred kernel frame may precede them */
	 "B 10 tid=1 read address=0x401000 symbol=read\n"
	 "B 30 tid=1 do_syscall_64 address=0xffffffff81001000 symbol=do_syscall_64\n"
	 "E 40 tid=1 do_syscall_64\n"
	 "E 50 tid=1 entry_SYSCALL_64\n"
	 "E 60 tid=1 read\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "B 20 tid=1 entry_SYSCALL_64 address=0xffffffff81000000 symbol=entry_SYSCALL_64\n"
	 "E 60 tid=1 main\n"},
	/* An interrupt inside a syscall nests a third stack; iret pops it. */
	{"b4_5_7_hwint_iret_nesting_uk",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"0 1/1 strt 0 - 400000 main",
	  "10 1/1 syscall 400005 main ffffffff81000000 entry_SYSCALL_64",
	  "20 1/1 hw int ffffffff81000005 entry_SYSCALL_64 ffffffff82000000 irq",
	  "30 1/1 iret ffffffff82000010 irq ffffffff81000005 entry_SYSCALL_64",
	  "40 1/1 sysret ffffffff81000100 entry_SYSCALL_64 400007 main",
	  "50 1/1 hw int 400008 main ffffffff82000000 irq",
	  "60 1/1 iret ffffffff82000010 irq 400008 main"},
	 "E 30 tid=1 irq\n"
	 "E 40 tid=1 entry_SYSCALL_64\n"
	 "E 60 tid=1 irq\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "B 10 tid=1 entry_SYSCALL_64 address=0xffffffff81000000 symbol=entry_SYSCALL_64\n"
	 "B 20 tid=1 irq address=0xffffffff82000000 symbol=irq\n"
	 "B 50 tid=1 irq address=0xffffffff82000000 symbol=irq\n"
	 "E 60 tid=1 main\n"},
	/* sysret with no suspended stack: fresh stack, the target is inferred. */
	{"b4_5_7_sysret_without_entry_uk",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"100 1/1 sysret ffffffff81000100 entry_SYSCALL_64 400007 main",
	  "110 1/1 call 400010 main 401000 foo"},
	 "B 110 tid=1 foo address=0x401000 symbol=foo\n"
	 "B 100 tid=1 main address=0x400007 symbol=main inferred_start_time=true\n"
	 "E 110 tid=1 foo\n"
	 "E 110 tid=1 main\n"},
	/* Kernel-only: user time shows as [untraced]; "tr strt" starts a fresh stack. */
	{"b4_6_kernel_only_untraced",
	 SNAP_SCOPE_KERNEL,
	 0,
	 {"0 1/1 strt 0 - ffffffff81000000 entry",
	  "10 1/1 call ffffffff81000010 entry ffffffff81001000 do_sys",
	  "20 1/1 return ffffffff81001010 do_sys ffffffff81000014 entry",
	  "30 1/1 end sysret ffffffff81000100 entry 0 -", "40 1/1 strt 0 - ffffffff81000000 entry",
	  "50 1/1 call ffffffff81000010 entry ffffffff81001000 do_sys",
	  "60 1/1 return ffffffff81001010 do_sys ffffffff81000014 entry"},
	 "B 10 tid=1 do_sys address=0xffffffff81001000 symbol=do_sys\n"
	 "E 20 tid=1 do_sys\n"
	 "E 30 tid=1 entry\n"
	 "B 30 tid=1 [untraced] address=0x0 symbol=[untraced]\n"
	 "E 40 tid=1 [untraced]\n"
	 "B 50 tid=1 do_sys address=0xffffffff81001000 symbol=do_sys\n"
	 "E 60 tid=1 do_sys\n"
	 "B 0 tid=1 entry address=0xffffffff81000014 symbol=entry inferred_start_time=true\n"
	 "B 40 tid=1 entry address=0xffffffff81000014 symbol=entry inferred_start_time=true\n"
	 "E 60 tid=1 entry\n"},
	{"b4_8_decode_error_mid_stack",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "10 1/1 call 400010 main 401000 foo",
	  "20 1/1 error 0 Overflow packet", "30 1/1 return 401010 foo 400014 main"},
	 "X 20..20 tid=1 [decode error: Overflow packet]\n"
	 "B 10 tid=1 foo address=0x401000 symbol=foo\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 20 tid=1 foo\n"
	 "E 20 tid=1 main\n"
	 "B 20 tid=1 main address=0x400014 symbol=main inferred_start_time=true\n"
	 "X 20..30 tid=1 [unknown]\n"
	 "E 30 tid=1 main\n",
	 1},
	/* Events at exactly the error's time land 1 ns later (docs/behaviour.md §4.2). */
	{"b4_2_decode_error_then_same_time",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "20 1/1 error 0 Lost trace data",
	  "20 1/1 call 400010 main 401000 foo", "20 1/1 return 401010 foo 400014 main",
	  "25 1/1 call 400010 main 401000 foo"},
	 "X 20..20 tid=1 [decode error: Lost trace data]\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 20 tid=1 main\n"
	 "B 21 tid=1 foo address=0x401000 symbol=foo\n"
	 "E 25 tid=1 foo\n"
	 "B 25 tid=1 foo address=0x401000 symbol=foo\n"
	 "B 20 tid=1 main address=0x400014 symbol=main inferred_start_time=true\n"
	 "E 25 tid=1 foo\n"
	 "E 25 tid=1 main\n"},
	{"b4_8_decode_error_without_time",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "10 1/1 call 400010 main 401000 foo",
	  "- 1/1 error 0 Overflow packet"},
	 "X 10..10 tid=1 [decode error: Overflow packet]\n"
	 "B 10 tid=1 foo address=0x401000 symbol=foo\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 10 tid=1 foo\n"
	 "E 10 tid=1 main\n"},
	{"b4_10_depth_cap",
	 SNAP_SCOPE_USER,
	 3,
	 {"0 1/1 strt 0 - 400000 main", "10 1/1 call 400010 main 401000 a",
	  "20 1/1 call 401010 a 402000 b", "30 1/1 call 402010 b 403000 c",
	  "40 1/1 call 403010 c 404000 d", "50 1/1 return 404010 d 403014 c",
	  "60 1/1 return 403020 c 402014 b", "70 1/1 return 402020 b 401014 a",
	  "80 1/1 return 401020 a 400014 main"},
	 "B 10 tid=1 a address=0x401000 symbol=a\n"
	 "B 20 tid=1 b address=0x402000 symbol=b\n"
	 "E 70 tid=1 b\n"
	 "E 80 tid=1 a\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 80 tid=1 main\n",
	 0,
	 2},
	/* Combinations magic-trace calls "BUG": counted, handled sensibly. */
	{"b4_6_unexpected_combinations",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "10 1/1 async 400010 main 400020 main",
	  "20 1/1 end jmp 400020 main 0 -", "30 1/1 strt call 0 - 400030 main"},
	 "B 20 tid=1 [untraced] address=0x0 symbol=[untraced]\n"
	 "E 30 tid=1 [untraced]\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 30 tid=1 main\n",
	 0,
	 0,
	 3},
	{"b4_2_time_backwards_clamped",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "50 1/1 call 400010 main 401000 a",
	  "40 1/1 return 401010 a 400014 main"},
	 "B 50 tid=1 a address=0x401000 symbol=a\n"
	 "E 50 tid=1 a\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 50 tid=1 main\n"},
	{"b4_1_two_threads",
	 SNAP_SCOPE_USER,
	 0,
	 {"0 1/1 strt 0 - 400000 main", "0 1/2 strt 0 - 500000 worker",
	  "10 1/1 call 400010 main 401000 a", "15 1/2 call 500010 worker 501000 b",
	  "20 1/1 return 401010 a 400014 main", "25 1/2 return 501010 b 500014 worker"},
	 "B 10 tid=1 a address=0x401000 symbol=a\n"
	 "B 15 tid=2 b address=0x501000 symbol=b\n"
	 "E 20 tid=1 a\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "E 20 tid=1 main\n"
	 "E 25 tid=2 b\n"
	 "B 0 tid=2 worker address=0x500000 symbol=worker\n"
	 "E 25 tid=2 worker\n"},
};

static void run_case(const struct ccase *c)
{
	struct drv d;
	char out[8192], why[256];
	size_t i;
	int err = 0;

	CHECK_INT_EQ(0, drv_init(&d, c->scope, c->depth));
	for (i = 0; i < 24 && c->in[i]; i++)
		if (err >= 0)
			err = drv_feed(&d, c->in[i]);
	if (err >= 0)
		err = drv_finish(&d);
	CHECK_INT_EQ(0, err);
	mock_lines(&d.m, NULL, out, sizeof(out));
	if (strcmp(c->out, out))
		fprintf(stderr, "case %s:\n--- expected\n%s--- got\n%s", c->name, c->out, out);
	CHECK_STR_EQ(c->out, out);
	if (!mock_balanced(&d.m, 1, why, sizeof(why)))
		fprintf(stderr, "case %s: %s\n", c->name, why);
	CHECK(mock_balanced(&d.m, 1, why, sizeof(why)));
	CHECK_U64_EQ(c->unmatched, d.ctx.stats.unmatched_returns);
	CHECK_U64_EQ(c->capped, d.ctx.stats.depth_capped);
	CHECK_U64_EQ(c->unexpected, d.ctx.stats.unexpected);
	drv_fini(&d);
}

static void b4_6_table(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

/* Syscall nesting is capped; garbage cannot grow the inactive stacks. */
static void b4_5_7_nesting_cap(void)
{
	struct drv d;
	char why[256];
	int err = 0;

	CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_BOTH, 0));
	err = drv_feed(&d, "0 1/1 strt 0 - 400000 main");
	for (int i = 0; i < 1000 && err >= 0; i++)
		err = drv_feed(&d, "10 1/1 syscall 400005 main ffffffff81000000 entry");
	CHECK_INT_EQ(0, err);
	CHECK(d.cs[0].nstk <= SNAP_CSTACK_MAX_NEST);
	CHECK(d.ctx.stats.depth_capped > 0);
	CHECK_INT_EQ(0, drv_finish(&d));
	CHECK(mock_balanced(&d.m, 1, why, sizeof(why)));
	drv_fini(&d);
}

/* A deep chain of calls with no returns: depth and memory stay bounded. */
static void deep_garbage_bounded(void)
{
	struct drv d;
	char why[256];
	int err = 0;

	CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_USER, 100));
	for (int i = 0; i < 5000 && err >= 0; i++)
		err = drv_feed(&d, i % 2 ? "5 1/1 call 401000 f 401000 f" : "5 1/1 return 1 f 2 g");
	for (int i = 0; i < 5000 && err >= 0; i++)
		err = drv_feed(&d, "6 1/1 call 401000 f 401000 f");
	CHECK_INT_EQ(0, err);
	CHECK(d.cs[0].total <= 100);
	CHECK_INT_EQ(0, drv_finish(&d));
	CHECK(mock_balanced(&d.m, 1, why, sizeof(why)));
	drv_fini(&d);
}

struct nest_pt {
	uint64_t ts;
	int d; /* +1 begin, -1 end */
};

static int nest_pt_cmp(const void *a, const void *b)
{
	const struct nest_pt *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->d - y->d; /* ends first at equal times */
}

/* The deepest nesting of a one-track recording, from its text: B and E lines,
 * and X lines as intervals (the [unknown] spans). */
static size_t max_nesting(const struct mock_tl *m)
{
	struct nest_pt *p = malloc((m->len + 1) * sizeof(*p));
	size_t n = 0, max = 0;
	long depth = 0;
	const char *l = m->text;

	if (!p)
		abort();
	while (l && *l) {
		unsigned long long a, b;

		if (sscanf(l, "B %llu", &a) == 1)
			p[n++] = (struct nest_pt){a, 1};
		else if (sscanf(l, "E %llu", &a) == 1)
			p[n++] = (struct nest_pt){a, -1};
		else if (sscanf(l, "X %llu..%llu", &a, &b) == 2) {
			p[n++] = (struct nest_pt){a, 1};
			p[n++] = (struct nest_pt){b, -1};
		}
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	qsort(p, n, sizeof(*p), nest_pt_cmp);
	for (size_t i = 0; i < n; i++) {
		depth += p[i].d;
		if (depth > (long)max)
			max = (size_t)depth;
	}
	free(p);
	return max;
}

/* Returns without calls ([unknown] spans and inferred callers, all starting at
 * the segment's start) nest: 100,000 of them stay within the depth cap, the
 * rest are counted. */
static void b4_5_3_returns_without_calls_capped(void)
{
	struct drv d;
	char why[256], line[96];
	int err = 0;

	CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_USER, SNAP_MAX_NESTING));
	err = drv_feed(&d, "0 1/1 strt 0 - 400000 main");
	for (int i = 0; i < 100000 && err >= 0; i++) {
		snprintf(line, sizeof(line), "%d 1/1 return 401000 f%d 400000 main", 10 + i, i % 7);
		err = drv_feed(&d, line);
	}
	CHECK_INT_EQ(0, err);
	CHECK_INT_EQ(0, drv_finish(&d));
	CHECK(mock_balanced(&d.m, 1, why, sizeof(why)));
	CHECK(max_nesting(&d.m) <= SNAP_MAX_NESTING);
	CHECK(d.ctx.stats.inferred_capped + d.ctx.stats.depth_capped >= 100000 - SNAP_MAX_NESTING);
	drv_fini(&d);
}

/* The nesting checker itself must be able to fail. */
static void mock_detects_imbalance(void)
{
	struct snap_strtab st;
	struct mock_tl m;
	char why[256];
	uint32_t a, b;

	snap_strtab_init(&st);
	mock_init(&m, &st);
	a = (uint32_t)snap_strtab_intern_cstr(&st, "a");
	b = (uint32_t)snap_strtab_intern_cstr(&st, "b");
	m.base.ops->begin(&m.base, 1, 1, 10, a, NULL, 0);
	m.base.ops->begin(&m.base, 1, 1, 20, b, NULL, 0);
	CHECK(!mock_balanced(&m, 1, why, sizeof(why))); /* left open */
	m.base.ops->end(&m.base, 1, 1, 30, a);
	CHECK(!mock_balanced(&m, 0, why, sizeof(why))); /* wrong order */
	CHECK_STR_EQ("tid 1: E a at 30 does not close b", why);
	m.base.ops->begin(&m.base, 1, 2, 5, a, NULL, 0);
	m.base.ops->end(&m.base, 1, 2, 4, a); /* sorted by time: E before B */
	mock_fini(&m);
	mock_init(&m, &st);
	m.base.ops->end(&m.base, 1, 2, 4, a);
	m.base.ops->begin(&m.base, 1, 2, 5, a, NULL, 0);
	CHECK(!mock_balanced(&m, 0, why, sizeof(why)));
	CHECK_INT_EQ(2, m.unannounced);
	mock_fini(&m);
	snap_strtab_fini(&st);
}

/* Many calls at one timestamp: the pending batch stays bounded. */
static void b4_3_pending_bounded(void)
{
	struct drv d;
	char why[256];
	int err;

	CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_USER, 0));
	err = drv_feed(&d, "0 1/1 strt 0 - 400000 main");
	for (int i = 0; i < 200000 && err >= 0; i++)
		err = drv_feed(&d, i % 2 ? "7 1/1 call 400010 main 401000 foo"
					 : "7 1/1 return 401010 foo 400014 main");
	CHECK_INT_EQ(0, err);
	CHECK(d.cs[0].cappend <= 2 * SNAP_CSTACK_MAX_PENDING);
	CHECK_INT_EQ(0, drv_finish(&d));
	CHECK(mock_balanced(&d.m, 1, why, sizeof(why)));
	drv_fini(&d);
}

/* Returns into ever new unknown callers pile up deferred inferred frames;
 * past ctx->max_defer the segment is ended (memory stays bounded). */
static void b4_4_deferred_bounded(void)
{
	struct drv d;
	char why[256];
	int err;

	CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_USER, 0));
	d.ctx.max_defer = 100;
	err = drv_feed(&d, "5 1/1 jmp 401000 a 401010 a");
	for (int i = 0; i < 1000 && err >= 0; i++) {
		char line[128];

		snprintf(line, sizeof(line), "%d 1/1 return 401020 a 401030 a", 10 + i);
		err = drv_feed(&d, line);
	}
	CHECK_INT_EQ(0, err);
	CHECK(d.cs[0].ndefer <= 100);
	CHECK(d.ctx.stats.trimmed >= 9);
	CHECK_INT_EQ(0, drv_finish(&d));
	if (!mock_balanced(&d.m, 1, why, sizeof(why)))
		fprintf(stderr, "%s\n", why);
	CHECK(mock_balanced(&d.m, 1, why, sizeof(why)));
	drv_fini(&d);
}

/* Any branch ends the segment once max_defer ops are deferred, whatever
 * deferred them: here snap_cstack_reopen (the open frames begun again,
 * deferred), then a jump within the top frame's function, which changes
 * nothing else (snap_cstack_branch's shortest path, which must still test
 * the deferred ops). (The reopened frames begin twice: -filter's gate drops
 * what came before, so this timeline is not balanced.) */
static void deferred_bound_any_branch(void)
{
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_USER, 0));
	CHECK_INT_EQ(0, drv_feed(&d, "5 1/1 call 401000 a 402000 b"));
	CHECK_INT_EQ(0, drv_feed(&d, "6 1/1 call 402010 b 403000 c"));
	CHECK_INT_EQ(0, drv_feed(&d, "7 1/1 call 403010 c 404000 e"));
	CHECK_INT_EQ(0, drv_feed(&d, "8 1/1 jmp 404010 e 404020 e"));
	CHECK_U64_EQ(0, d.ctx.stats.trimmed);
	d.ctx.max_defer = 2;
	CHECK_INT_EQ(0, snap_cstack_reopen(&d.cs[0], 9));
	CHECK(d.cs[0].ndefer >= 2);
	CHECK_INT_EQ(0, drv_feed(&d, "10 1/1 jmp 404030 e 404040 e"));
	CHECK_U64_EQ(1, d.ctx.stats.trimmed);
	CHECK_U64_EQ(0, d.cs[0].ndefer);
	CHECK_INT_EQ(0, drv_finish(&d));
	drv_fini(&d);
}

/* The same bound for a call and a return queued at the pending ops' time (their
 * shortest paths, call_branch and ret_branch, which flush nothing): the segment ends
 * there too. */
static void deferred_bound_same_time(void)
{
	static const char *const last[] = {
		"9 1/1 call 404030 e 405000 f",
		"9 1/1 return 404030 e 403014 c",
	};

	for (size_t k = 0; k < 2; k++) {
		struct drv d;

		CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_USER, 0));
		CHECK_INT_EQ(0, drv_feed(&d, "5 1/1 call 401000 a 402000 b"));
		CHECK_INT_EQ(0, drv_feed(&d, "6 1/1 call 402010 b 403000 c"));
		CHECK_INT_EQ(0, drv_feed(&d, "7 1/1 call 403010 c 404000 e"));
		CHECK_INT_EQ(0, drv_feed(&d, "9 1/1 jmp 404010 e 404020 e"));
		d.ctx.max_defer = 2;
		CHECK_INT_EQ(0, snap_cstack_reopen(&d.cs[0], 9));
		CHECK(d.cs[0].ndefer >= 2);
		CHECK_U64_EQ(9, d.cs[0].pending_time);
		CHECK_INT_EQ(0, drv_feed(&d, last[k]));
		CHECK_U64_EQ(1, d.ctx.stats.trimmed);
		CHECK_U64_EQ(0, d.cs[0].ndefer);
		CHECK_INT_EQ(0, drv_finish(&d));
		drv_fini(&d);
	}
}

/* A call on a stack whose top frames the depth cap dropped is dropped too (and
 * counted), whatever the frames below: call_branch's shortest path tests the
 * stack's dropped frames, as call_in does. */
static void call_on_dropped_top(void)
{
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_USER, 0));
	CHECK_INT_EQ(0, drv_feed(&d, "5 1/1 call 401000 a 402000 b"));
	CHECK_INT_EQ(0, drv_feed(&d, "6 1/1 call 402010 b 403000 c"));
	d.cs[0].top->overflow = 1; /* (as the cap leaves it) */
	CHECK_INT_EQ(0, drv_feed(&d, "6 1/1 call 403010 c 404000 e"));
	CHECK_U64_EQ(1, d.ctx.stats.depth_capped);
	CHECK_U64_EQ(2, d.cs[0].top->overflow);
	CHECK_U64_EQ(2, d.cs[0].top->n);
	drv_fini(&d);
}

/* Timeline errors are passed up. */
static void timeline_error_propagates(void)
{
	struct drv d;
	int err = 0;

	CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_USER, 0));
	d.m.fail_after = 0;
	err = drv_feed(&d, "0 1/1 strt 0 - 400000 main");
	if (err >= 0)
		err = drv_feed(&d, "10 1/1 call 400010 main 401000 foo");
	if (err >= 0)
		err = drv_feed(&d, "20 1/1 call 401010 foo 402000 bar");
	CHECK_INT_EQ(-EIO, err);
	drv_fini(&d);
}

static const char *const alloc_scenario[] = {
	"0 1/1 strt 0 - 400000 main",	      "10 1/1 call 400010 main 401000 a",
	"10 1/1 call 401010 a 402000 b",      "11 1/1 return 402010 b 401014 a",
	"12 1/2 return 402010 b 401014 a",    "13 1/2 jmp 401014 a 405000 c",
	"14 1/1 error 0 Overflow packet",     "15 1/1 return 401020 a 400014 main",
	"16 1/1 end syscall 400020 main 0 -", NULL,
};

/* One run of the scenario for alloc_sweep. */
static int alloc_run(const void *arg)
{
	struct drv d;
	int err = drv_init(&d, SNAP_SCOPE_USER, 0);

	(void)arg;
	for (size_t i = 0; err >= 0 && alloc_scenario[i]; i++)
		err = drv_feed(&d, alloc_scenario[i]);
	if (err >= 0)
		err = drv_finish(&d);
	drv_fini(&d);
	return err;
}

/* Every allocation failure gives -ENOMEM (or success) and leaks nothing. */
static void alloc_failures(void)
{
	alloc_sweep(alloc_run, NULL, 200);
}

/* The sampling primitives: push_now reports a frame the depth cap dropped in
 * *dropped (returning 0), top_is and depth read the current stack. */
static void push_now_top_is(void)
{
	struct drv d;
	struct snap_cstack *cs = &d.cs[0];
	uint32_t a, b, c;
	int dropped = -1;

	CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_USER, 2));
	CHECK_INT_EQ(0, snap_strtab_intern_id(&d.st, "a", &a));
	CHECK_INT_EQ(0, snap_strtab_intern_id(&d.st, "b", &b));
	CHECK_INT_EQ(0, snap_strtab_intern_id(&d.st, "c", &c));
	CHECK_INT_EQ(0, snap_cstack_init(cs, &d.ctx, 1, 1, 0));
	d.n = 1;
	CHECK_INT_EQ(0, d.m.base.ops->thread(&d.m.base, 1, 1, a, a));
	CHECK_INT_EQ(0, snap_cstack_top_is(cs, 0, 0)); /* empty */
	CHECK_INT_EQ(0, (int)snap_cstack_depth(cs));
	CHECK_INT_EQ(0, snap_cstack_push_now(cs, 0x10, a, 5, &dropped));
	CHECK_INT_EQ(0, dropped);
	CHECK_INT_EQ(0, snap_cstack_push_now(cs, 0x20, b, 6, NULL));
	CHECK_INT_EQ(1, snap_cstack_top_is(cs, b, 0x20));
	CHECK_INT_EQ(0, snap_cstack_top_is(cs, b, 0x21));
	CHECK_INT_EQ(0, snap_cstack_top_is(cs, a, 0x10)); /* not the top */
	dropped = -1;
	CHECK_INT_EQ(0, snap_cstack_push_now(cs, 0x30, c, 7, &dropped));
	CHECK_INT_EQ(1, dropped);
	CHECK_U64_EQ(1, d.ctx.stats.depth_capped);
	CHECK_INT_EQ(2, (int)snap_cstack_depth(cs));
	CHECK_INT_EQ(1, snap_cstack_top_is(cs, b, 0x20));
	CHECK_INT_EQ(0, snap_cstack_pop_now(cs, 8));
	CHECK_INT_EQ(1, snap_cstack_top_is(cs, a, 0x10));
	CHECK_INT_EQ(0, snap_cstack_end_thread(cs, 9));
	CHECK_INT_EQ(0, (int)snap_cstack_depth(cs));
	CHECK(strstr(d.m.text, " c") == NULL); /* the dropped frame was never written */
	CHECK(strstr(d.m.text, "B 6 tid=1 b") != NULL);
	drv_fini(&d);
}

/* The ops write_op takes without building args (docs/design.md "The common
 * branch takes a lean path"), with args_once: a begin of a described function
 * at its address carries nothing, but an inlined one still says inlined=1 and
 * a begin marked inferred_start_time still says so; with debug_names, the end
 * of an inferred frame that returns is named "NAME [inferred start time]". */
static void args_once_plain_ops(void)
{
	static const char *const in[] = {
		"100 1/1 strt 0 - 401000 foo",
		"110 1/1 return 401010 foo 400015 main", /* main: an inferred caller */
		"120 1/1 return 400020 main 402000 top", /* ...that returns */
		NULL,
	};
	struct drv d;
	struct snap_cstack *cs = &d.cs[0];
	uint32_t f;
	char out[4096];

	CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_USER, 0));
	d.ctx.args_once = 1;
	CHECK_INT_EQ(0, snap_strtab_intern_id(&d.st, "f", &f));
	CHECK_INT_EQ(0, snap_cstack_init(cs, &d.ctx, 1, 1, 0));
	d.n = 1;
	CHECK_INT_EQ(0, d.m.base.ops->thread(&d.m.base, 1, 1, f, f));
	CHECK_INT_EQ(0, snap_cstack_push_now(cs, 0x10, f, 5, NULL)); /* describes f */
	CHECK_INT_EQ(0, snap_cstack_pop_now(cs, 6));
	CHECK_INT_EQ(0, snap_cstack_push_now(cs, 0x10, f, 7, NULL)); /* nothing to say */
	CHECK_INT_EQ(0, snap_cstack_pop_now(cs, 8));
	CHECK_INT_EQ(0, snap_cstack_push_inlined(cs, 0x10, f, 9, NULL));
	CHECK_INT_EQ(0, snap_cstack_pop_now(cs, 10));
	cs->start_cut = 1;
	CHECK_INT_EQ(0, snap_cstack_push_now(cs, 0x10, f, 11, NULL));
	cs->start_cut = 0;
	CHECK_INT_EQ(0, snap_cstack_pop_now(cs, 12));
	CHECK_INT_EQ(0, snap_cstack_end_thread(cs, 13));
	mock_lines(&d.m, NULL, out, sizeof(out));
	CHECK_STR_EQ("T pid=1 tid=1 proc=f thread=f\n"
		     "B 5 tid=1 f address=0x10 symbol=f\n"
		     "E 6 tid=1 f\n"
		     "B 7 tid=1 f\n"
		     "E 8 tid=1 f\n"
		     "B 9 tid=1 f inlined=1\n"
		     "E 10 tid=1 f\n"
		     "B 11 tid=1 f inferred_start_time=true\n"
		     "E 12 tid=1 f\n",
		     out);
	drv_fini(&d);

	CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_USER, 0));
	d.ctx.args_once = 1;
	d.ctx.debug_names = 1;
	for (size_t i = 0; in[i]; i++)
		CHECK_INT_EQ(0, drv_feed(&d, in[i]));
	CHECK_INT_EQ(0, drv_finish(&d));
	mock_lines(&d.m, "E", out, sizeof(out));
	CHECK(strstr(out, "E 120 tid=1 main [inferred start time]\n") != NULL);
	drv_fini(&d);
}

/* args_once's described functions (write_op, and flush's own copy of its test) through the
 * thread's cache in front of its map: two functions whose symbols share a cache entry
 * (ids SNAP_CSTACK_DCACHE apart), described at one address, are each described once and
 * then keep it, and
 * snap_cstack_reopen forgets them all, the cache too: the next begin of g is described
 * again. */
static void described_cache(void)
{
	struct drv d;
	struct snap_cstack *cs = &d.cs[0];
	uint32_t f, g, x;
	char out[4096], name[16];

	CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_USER, 0));
	d.ctx.args_once = 1;
	CHECK_INT_EQ(0, snap_strtab_intern_id(&d.st, "f", &f));
	for (unsigned i = 1; i < SNAP_CSTACK_DCACHE; i++) {
		snprintf(name, sizeof(name), "x%u", i);
		CHECK_INT_EQ(0, snap_strtab_intern_id(&d.st, name, &x));
	}
	CHECK_INT_EQ(0, snap_strtab_intern_id(&d.st, "g", &g));
	CHECK_U64_EQ(f + SNAP_CSTACK_DCACHE, g);
	CHECK_INT_EQ(0, snap_cstack_init(cs, &d.ctx, 1, 1, 0));
	d.n = 1;
	CHECK_INT_EQ(0, d.m.base.ops->thread(&d.m.base, 1, 1, f, f));
	CHECK_INT_EQ(0, snap_cstack_push_now(cs, 0x10, f, 5, NULL)); /* describes f */
	CHECK_INT_EQ(0, snap_cstack_pop_now(cs, 6));
	CHECK_INT_EQ(0, snap_cstack_push_now(cs, 0x10, g, 7, NULL)); /* describes g */
	CHECK_INT_EQ(0, snap_cstack_pop_now(cs, 8));
	CHECK_INT_EQ(0, snap_cstack_push_now(cs, 0x10, f, 9, NULL)); /* as described */
	CHECK_INT_EQ(0, snap_cstack_pop_now(cs, 10));
	CHECK_INT_EQ(0, snap_cstack_push_now(cs, 0x30, f, 11, NULL)); /* elsewhere */
	CHECK_INT_EQ(0, snap_cstack_pop_now(cs, 12));
	CHECK_INT_EQ(0, snap_cstack_push_now(cs, 0x10, g, 13, NULL)); /* as described */
	CHECK_INT_EQ(0, snap_cstack_reopen(cs, 14));		      /* g begun again (deferred) */
	CHECK_INT_EQ(0, snap_cstack_pop_now(cs, 15));
	CHECK_INT_EQ(0, snap_cstack_push_now(cs, 0x10, g, 16, NULL)); /* described again */
	CHECK_INT_EQ(0, snap_cstack_pop_now(cs, 17));
	CHECK_INT_EQ(0, snap_cstack_end_thread(cs, 18));
	mock_lines(&d.m, NULL, out, sizeof(out));
	CHECK_STR_EQ("T pid=1 tid=1 proc=f thread=f\n"
		     "B 5 tid=1 f address=0x10 symbol=f\n"
		     "E 6 tid=1 f\n"
		     "B 7 tid=1 g address=0x10 symbol=g\n"
		     "E 8 tid=1 g\n"
		     "B 9 tid=1 f\n"
		     "E 10 tid=1 f\n"
		     "B 11 tid=1 f address=0x30\n"
		     "E 12 tid=1 f\n"
		     "B 13 tid=1 g\n"
		     "E 15 tid=1 g\n"
		     "B 16 tid=1 g address=0x10 symbol=g\n"
		     "E 17 tid=1 g\n"
		     "B 14 tid=1 g inferred_start_time=true\n",
		     out);
	drv_fini(&d);
}

/* A source-position lookup that counts its calls per symbol; fail: the symbol whose first
 * lookup fails. */
struct srccount {
	unsigned calls[512];
	uint32_t fail;
};

static int srccount_lookup(void *ctx, const struct snap_loc *loc, uint32_t *file, int32_t *line,
			   int32_t *col)
{
	struct srccount *c = ctx;

	if (loc->sym >= 512)
		return -EINVAL;
	if (++c->calls[loc->sym] == 1 && loc->sym == c->fail)
		return -EIO;
	*file = loc->sym;
	*line = (int32_t)loc->sym;
	*col = 1;
	return loc->sym % 2 ? 0 : 1; /* odd symbols have no position */
}

/* snap_cstack_note_loc looks a symbol up once, however the targets alternate and whatever
 * its id (the bits of the symbols noted span words, grown as ids come), with or without a
 * position; a failed lookup is an error, and tried again the next time. */
static void note_loc_once(void)
{
	struct srccount c = {.fail = 0};
	struct snap_srcloc sl = {.lookup = srccount_lookup, .ctx = &c};
	struct snap_loc loc = {.ip = 0x1000};
	struct drv d;
	uint32_t sym[6], id;
	char name[16];
	int i, r;

	CHECK_INT_EQ(0, drv_init(&d, SNAP_SCOPE_USER, 0));
	for (i = 0; i < 300; i++) { /* ids well past 64 and 128 */
		snprintf(name, sizeof(name), "f%d", i);
		CHECK_INT_EQ(0, snap_strtab_intern_id(&d.st, name, &id));
	}
	sym[0] = 63;
	sym[1] = 64;
	sym[2] = 200;
	sym[3] = 2;
	sym[4] = 129;
	sym[5] = 300;
	c.fail = 129;
	d.ctx.srcloc = &sl;
	for (r = 0; r < 3; r++)
		for (i = 0; i < 12; i++) {
			loc.sym = sym[i % 6];
			if (r == 0 && i == 4)
				CHECK_INT_EQ(-EIO, snap_cstack_note_loc(&d.ctx, &loc));
			else
				CHECK_INT_EQ(0, snap_cstack_note_loc(&d.ctx, &loc));
		}
	for (i = 0; i < 6; i++)
		CHECK_INT_EQ(sym[i] == 129 ? 2 : 1, (int)c.calls[sym[i]]);
	loc.sym = 0; /* no symbol: nothing to look up */
	CHECK_INT_EQ(0, snap_cstack_note_loc(&d.ctx, &loc));
	CHECK_INT_EQ(0, (int)c.calls[0]);
	drv_fini(&d);
}

int main(void)
{
	RUN(b4_6_table);
	RUN(b4_5_7_nesting_cap);
	RUN(deep_garbage_bounded);
	RUN(b4_5_3_returns_without_calls_capped);
	RUN(mock_detects_imbalance);
	RUN(b4_3_pending_bounded);
	RUN(b4_4_deferred_bounded);
	RUN(deferred_bound_any_branch);
	RUN(deferred_bound_same_time);
	RUN(call_on_dropped_top);
	RUN(timeline_error_propagates);
	RUN(alloc_failures);
	RUN(push_now_top_is);
	RUN(args_once_plain_ops);
	RUN(described_cache);
	RUN(note_loc_once);
	return snap_test_done();
}
