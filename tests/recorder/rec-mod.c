/* SPDX-License-Identifier: MIT */
/* rec-mod.c - a module with an event of its own, opened and closed by rec-prog (dlclose mode). */
#define CREATE_TRACE_POINTS
#include "rec-mod-trace.h"

void rec_mod_fire(int n) __attribute__((visibility("default")));
void rec_mod_fire(int n)
{
	trace_mod_event(n);
}
