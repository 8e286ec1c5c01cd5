/* SPDX-License-Identifier: MIT */
/* layout.h - what the layouts test's programs call (layout-fire.c, layout-std.cpp). */
#ifndef LAYOUT_H
#define LAYOUT_H

#define LAYOUT_MAX_THREADS 64

/* (The plugin exports them: the build hides what is not said to be visible.) */
#define LAYOUT_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif
/* Fire @n job_queued and @n job_done in the calling thread, as thread number @thread. */
LAYOUT_API void layout_fire_jobs(int thread, int n);
/* @threads threads made with pthread_create() / std::thread each fire @n pairs; they are
 * joined.  Return: the events fired, or -1 when a thread could not be made. */
LAYOUT_API int layout_fire(int threads, int n);
LAYOUT_API int layout_fire_std(int threads, int n);
#ifdef __cplusplus
}
#endif

#endif
