/* SPDX-License-Identifier: MIT */
/*
 * dlmod.c - the module that test-dlopen loads with dlopen() and unloads with dlclose() in
 * a loop: it defines the dlmod events and exports a function that fires them and helpers
 * that attach a probe to one of its tracepoints.
 */
#define CREATE_TRACE_POINTS
#include "dlmod-trace.h"

#include "dlmod.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT void dlmod_fire(int iter, unsigned long val, const char *name);
EXPORT int dlmod_register_name_probe(dlmod_name_probe probe, void *data);
EXPORT int dlmod_unregister_name_probe(dlmod_name_probe probe, void *data);

void dlmod_fire(int iter, unsigned long val, const char *name)
{
	trace_dlmod_value(iter, val);
	trace_dlmod_name(iter, name);
	trace_dlmod_done(iter, "done");
}

int dlmod_register_name_probe(dlmod_name_probe probe, void *data)
{
	return register_trace_dlmod_name(probe, data);
}

int dlmod_unregister_name_probe(dlmod_name_probe probe, void *data)
{
	return unregister_trace_dlmod_name(probe, data);
}
