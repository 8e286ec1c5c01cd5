/* SPDX-License-Identifier: MIT */
/*
 * track-mod.c - a module that links libusertp and uses <usertp/track.h>, loaded with dlopen()
 * by a program that knows nothing of usertp (tests/record/dlopen-host.c calls rec_mod_fire()):
 * each call a "module" span around a "module-n" counter at the call's number.
 */
#include <usertp/track.h>

void rec_mod_fire(int i) __attribute__((visibility("default")));

void rec_mod_fire(int i)
{
	usertp_span_begin("module");
	usertp_counter("module-n", i);
	usertp_span_end("module");
}
