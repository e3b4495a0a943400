/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A pretend kernel for the k and uk trace scopes of tests/ptsynth: a small ELF
 * linked at 0xffffffff81000000. It is never run: insnmap -k follows its code
 * from entry_SYSCALL_64 to the sysretq and from asm_common_interrupt to the
 * iretq (direct calls, returns and jumps only) to get the kernel part of each
 * syscall and interrupt. Call trees:
 *   entry_SYSCALL_64 -> do_syscall_64 -> x64_sys_call -> ksys_write
 *                                     -> syscall_exit_to_user_mode, which
 *                                        tail-calls exit_to_user_mode_loop
 *   asm_common_interrupt -> common_interrupt -> handle_irq_event
 */
	.text
	.globl _text
_text:

#define FUNC(name) .globl name; .type name, @function; name:
#define END(name) .size name, . - name

FUNC(entry_SYSCALL_64)
	push %rax
	call do_syscall_64
	pop %rax
	sysretq
END(entry_SYSCALL_64)

FUNC(do_syscall_64)
	push %rbp
	mov %rsp, %rbp
	call x64_sys_call
	call syscall_exit_to_user_mode
	pop %rbp
	ret
END(do_syscall_64)

FUNC(x64_sys_call)
	nop
	call ksys_write
	ret
END(x64_sys_call)

FUNC(ksys_write)
	mov %rdi, %rax
	ret
END(ksys_write)

FUNC(syscall_exit_to_user_mode)
	nop
	jmp exit_to_user_mode_loop
END(syscall_exit_to_user_mode)

FUNC(exit_to_user_mode_loop)
	nop
	ret
END(exit_to_user_mode_loop)

FUNC(asm_common_interrupt)
	push %rax
	call common_interrupt
	pop %rax
	iretq
END(asm_common_interrupt)

FUNC(common_interrupt)
	call handle_irq_event
	ret
END(common_interrupt)

FUNC(handle_irq_event)
	nop
	ret
END(handle_irq_event)

	.globl _etext
_etext:

/* A fixed GNU build id, as a vmlinux has in .notes (for tests/ptsynth's build-id
 * cache case, mkptdata -b); linked on its own page after the code. */
	.section .notes, "a", @note
	.balign 4
	.long 4, 20, 3
	.asciz "GNU"
	.byte 0x6b, 0x69, 0x6d, 0x61, 0x67, 0x65, 0x2d, 0x62, 0x75, 0x69
	.byte 0x6c, 0x64, 0x2d, 0x69, 0x64, 0x2d, 0x30, 0x30, 0x30, 0x31
