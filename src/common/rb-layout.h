/* SPDX-License-Identifier: MIT */
/*
 * rb-layout.h - the offsets in struct usertp__rb, struct usertp__rb_wcpu and struct usertp__rb_cpu
 * that the assembly writer (rb-rseq-x86_64.S) uses; ring-buffer.c checks them against the C
 * definitions at compile time.  Plain defines: included by assembly.
 */
#ifndef USERTP_RB_LAYOUT_H
#define USERTP_RB_LAYOUT_H

#define USERTP_RB_NR_CPUS_OFFSET 20 /* struct usertp__rb: nr_cpus */
#define USERTP_RB_W_OFFSET 48	    /* struct usertp__rb: w */
#define USERTP_RB_WCPU_SHIFT 5	    /* sizeof(struct usertp__rb_wcpu) == 1 << 5 */
#define USERTP_RB_WCPU_C 0	    /* struct usertp__rb_wcpu: c */
#define USERTP_RB_WCPU_PAGE 8	    /* struct usertp__rb_wcpu: page */
#define USERTP_RB_CPU_POS 0	    /* struct usertp__rb_cpu: pos */
#define USERTP_RB_CPU_LAST_TS 8	    /* struct usertp__rb_cpu: last_ts */

#endif /* USERTP_RB_LAYOUT_H */
