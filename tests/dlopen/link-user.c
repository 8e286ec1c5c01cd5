/* SPDX-License-Identifier: MIT */
/* link-user.c - includes the trace header WITHOUT CREATE_TRACE_POINTS and fires the event. */
#include "link-trace.h"

void link_use(int a, const char *s);

void link_use(int a, const char *s)
{
	trace_link_ev(a, s);
}
