/* SPDX-License-Identifier: MIT */
/*
 * disasm-site.c - the call site test-disasm disassembles: built with -O2 (whatever the build
 * type) and kept out of line, so that its code is what a real program's would be.  The
 * arguments need computing (arithmetic and a const function), which a disabled site skips.
 */
#include "disasm-trace.h"

__attribute__((noinline)) void disasm_site(int x, long y, const char *name)
{
	trace_disasm_tp(x * 31 + 7, disasm_pure(y) ^ (y >> 3), name);
}
