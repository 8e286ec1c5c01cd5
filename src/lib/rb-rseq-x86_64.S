/* SPDX-License-Identifier: MIT */
/*
 * rb-rseq-x86_64.S - the rseq writer's fast path (see ring-buffer.h):
 *
 *	void *usertp__rb_rseq_reserve_tsc(struct usertp__rb *rb, size_t size, uint64_t first);
 *	void *usertp__rb_rseq_reserve_at(struct usertp__rb *rb, size_t size, uint64_t first,
 *					uint64_t ts);
 *
 * In assembly because it is the one place every recorded event passes through, and the
 * compiler, given the sequence as inline assembly, saved and restored six registers around
 * it: this uses only call-clobbered registers and no stack, and its slow exit is a tail call
 * with the caller's arguments.
 *
 * The entry's shape is usertp__rb_entry_shape()'s (ring-buffer.h), repeated here: the payload
 * rounded up to 4 bytes after the header word alone up to 112 bytes (the short form), else
 * after a header word and a length word; the word before the payload flagged pending.
 *
 * Registers in the sequence: rdi rb, r8 the entry's first 8 bytes without the delta, r9
 * total, r11 the rseq area's offset from the thread pointer (then a scratch), r10
 * &rb->w[cpu] then the entry, rcx the CPU's control block, rsi pos, rax the timestamp, rdx
 * the delta then the entry's first 8 bytes; xmm0 and xmm1 build {pos, last_ts}, xmm2 holds
 * the payload's first 8 bytes.
 */
#include "rb-layout.h"

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)

#define PENDING 0x80000000	/* USERTP_RB_PENDING */
#define DELTA_LIMIT 0x3fffffe	/* USERTP_RB_DELTA_LIMIT - 2: delta - 1 must not exceed it */
#define MAX_SMALL 112		/* USERTP__KPAGE_MAX_SMALL */

	.text

/* RESERVE name, tsc: tsc 1 reads the TSC inside the sequence, 0 takes ts in rcx. */
.macro RESERVE name, tsc
	.globl	\name
	.hidden	\name
	.type	\name, @function
	.p2align 5
\name:
	.cfi_startproc
	movq	%rdx, %xmm2			/* the payload's first 8 bytes, or 0 */
	.if !\tsc
	mov	%rcx, %rax			/* the timestamp */
	.endif
	lea	3(%rsi), %r8
	shr	$2, %r8				/* the payload's words */
	cmp	$MAX_SMALL / 4, %r8
	ja	.Llong_\name
	lea	4(,%r8,4), %r9			/* total: the short form's */
	or	$PENDING, %r8d			/* its header: type_len the words */
.Lretry_\name:
	mov	usertp__rb_rseq_offset(%rip), %r11
	lea	.Lcs_\name(%rip), %rcx
	mov	%rcx, %fs:8(%r11)		/* rseq->rseq_cs: the sequence starts */
.Lstart_\name:
	mov	%fs:4(%r11), %r10d		/* rseq->cpu_id (negative: none) */
	cmp	USERTP_RB_NR_CPUS_OFFSET(%rdi), %r10d
	jae	.Lslow_\name
	shl	$USERTP_RB_WCPU_SHIFT, %r10
	add	USERTP_RB_W_OFFSET(%rdi), %r10
	mov	USERTP_RB_WCPU_C(%r10), %rcx
	mov	USERTP_RB_CPU_POS(%rcx), %rsi
	mov	USERTP_RB_WCPU_PAGE(%r10), %r10	/* read after pos: see usertp__rb_wcpu */
	.if \tsc
	rdtsc
	shl	$32, %rdx
	or	%rdx, %rax
	.endif
	mov	%rax, %rdx
	sub	USERTP_RB_CPU_LAST_TS(%rcx), %rdx	/* delta */
	lea	-1(%rdx), %r11
	cmp	$DELTA_LIMIT, %r11		/* 1 <= delta < 1 << 26, else a time extend */
	ja	.Lslow_\name			/* (or the clock is not after last_ts) */
	mov	%esi, %r11d
	and	$4095, %r11d			/* off: where in the page */
	cmp	$16, %r11d			/* 0: no page yet; 1: being opened */
	jb	.Lslow_\name
	add	%r11, %r10			/* the entry */
	add	%r9, %r11
	cmp	$4096, %r11			/* does it fit? (64 bits: any size) */
	ja	.Lslow_\name
	shr	$12, %r11d			/* 1 when it ends the page exactly: */
	add	%r9, %rsi
	sub	%r11, %rsi			/* the new pos ends at OFF_EXACT then */
	shl	$5, %rdx
	or	%r8, %rdx
	mov	%rdx, (%r10)			/* pending header, before pos covers it */
	movq	%rsi, %xmm0
	movq	%rax, %xmm1
	punpcklqdq %xmm1, %xmm0
	movdqa	%xmm0, USERTP_RB_CPU_POS(%rcx)	/* {pos, last_ts}: the commit */
.Lend_\name:
	lea	4(%r10), %rax			/* the payload: after the header word, */
	test	%r8d, %r8d
	jnz	1f
	add	$4, %rax			/* and the length word in the long form */
1:	movq	%xmm2, (%rax)
	ret
	.byte	0x0f, 0xb9, 0x3d		/* the signature, before the abort handler */
	.long	0x53053053			/* USERTP_RB_RSEQ_SIG */
.Labort_\name:
	jmp	.Lretry_\name
.Llong_\name:
	lea	8(,%r8,4), %r9			/* total: the long form's, */
	lea	-4(%r9), %r8d
	or	$PENDING, %r8d
	shl	$32, %r8			/* type_len 0, then the length */
	jmp	.Lretry_\name
.Lslow_\name:
	lea	-4(%r9), %rsi			/* the size, rounded up: the same entry */
	test	%r8d, %r8d
	jnz	2f
	sub	$4, %rsi
2:	movq	%xmm2, %rdx
	jmp	usertp__rb_rseq_reserve_slow
	.cfi_endproc
	.size	\name, . - \name

	.pushsection __rseq_cs, "aw"
	.balign	32
.Lcs_\name:					/* struct rseq_cs */
	.long	0, 0				/* version, flags */
	.quad	.Lstart_\name, .Lend_\name - .Lstart_\name, .Labort_\name
	.popsection
.endm

	RESERVE usertp__rb_rseq_reserve_tsc, 1
	RESERVE usertp__rb_rseq_reserve_at, 0

#endif

	.section .note.GNU-stack, "", @progbits
