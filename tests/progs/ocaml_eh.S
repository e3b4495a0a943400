/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An executable that only carries OCaml exception notes (never run): the
 * .note.ocaml_eh layout the OCaml compiler emits (owner "OCaml", type 1: the
 * recorded .stapsdt.base address, then entertraps, pushtraps, poptraps, each
 * list ended by 0). The addresses are those of the golden test
 * tests/golden/pt/ocaml_exceptions_notes.txt.
 */
	.text
	.globl _start
_start:
	ret

	.section .stapsdt.base, "aG", @progbits, .stapsdt.base, comdat
	.weak _.stapsdt.base
	.hidden _.stapsdt.base
_.stapsdt.base:
	.space 1

	.section .note.ocaml_eh, "", @note
	.balign 4
	.4byte 6f - 5f		/* namesz */
	.4byte 8f - 7f		/* descsz */
	.4byte 1		/* type */
5:	.asciz "OCaml"
6:	.balign 4
7:	.8byte _.stapsdt.base
	/* entertraps */
	.8byte 0x401240
	.8byte 0
	/* pushtraps (one listed twice: duplicates are dropped) */
	.8byte 0x401108
	.8byte 0x401308
	.8byte 0x401108
	.8byte 0
	/* poptraps */
	.8byte 0x401318
	.8byte 0
8:	.balign 4
