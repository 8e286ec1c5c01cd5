/* SPDX-License-Identifier: MIT */
/*
 * disasm-trace.h - the tracepoint of the disassembly test: a plain DECLARE_TRACE, declared
 * here, defined (with its iterator) in test-disasm.c and called from disasm-site.c, so that
 * the call site reaches the iterator through a real call (or tail jump) instruction.
 */
#ifndef DISASM_TRACE_H
#define DISASM_TRACE_H

#include <usertp/tracepoint.h>

DECLARE_TRACE(disasm_tp,
	TP_PROTO(int x, long y, const char *name),
	TP_ARGS(x, y, name));

/* disasm-site.c, built with -O2: the one call site of disasm_tp. */
void disasm_site(int x, long y, const char *name);

/*
 * An argument computation the compiler may take as free of side effects: declared const for
 * the call site, while the definition in test-disasm.c counts its calls (and so is built
 * without the attribute), which shows whether a disabled site evaluated it.
 */
#ifndef DISASM_PURE_ATTR
#define DISASM_PURE_ATTR __attribute__((const))
#endif
long disasm_pure(long v) DISASM_PURE_ATTR;

#endif
