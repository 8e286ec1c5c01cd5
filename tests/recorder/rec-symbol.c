/* SPDX-License-Identifier: MIT */
/*
 * rec-symbol - fires callback_run for a function the program exports (linked with
 * -rdynamic, so its name is in the dynamic symbols) and for a static one (no name to find):
 * the text output prints the first as the kernel prints %pS and %ps from kallsyms, the
 * second as the kernel prints an address it cannot name.
 */
#define CREATE_TRACE_POINTS
#include "rec-symbol-trace.h"

void rec_symbol_exported(int arg);

__attribute__((noinline, visibility("default"))) void rec_symbol_exported(int arg)
{
	trace_callback_run((const void *)rec_symbol_exported, arg, "exported");
}

static __attribute__((noinline)) void hidden_callback(int arg)
{
	trace_callback_run((const void *)((const char *)hidden_callback + 0), arg, "hidden");
}

int main(void)
{
	rec_symbol_exported(7);
	hidden_callback(8);
	return 0;
}
