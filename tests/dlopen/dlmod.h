/* SPDX-License-Identifier: MIT */
/*
 * dlmod.h - what the module of test-dlopen exports; the test finds these with dlsym().
 */
#ifndef DLMOD_H
#define DLMOD_H

/* The prototype of a probe on the module's dlmod_name tracepoint. */
typedef void (*dlmod_name_probe)(void *data, int iter, const char *name);

/* Fires dlmod_value(iter, val), dlmod_name(iter, name), dlmod_done(iter, "done"). */
typedef void (*dlmod_fire_fn)(int iter, unsigned long val, const char *name);
/* register_trace_dlmod_name() / unregister_trace_dlmod_name() inside the module. */
typedef int (*dlmod_probe_fn)(dlmod_name_probe probe, void *data);

#define DLMOD_FIRE "dlmod_fire"
#define DLMOD_REGISTER "dlmod_register_name_probe"
#define DLMOD_UNREGISTER "dlmod_unregister_name_probe"

#endif
