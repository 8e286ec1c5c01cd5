/* SPDX-License-Identifier: MIT */
/* mount.h - usertp mount's file system (fs.c), for the command (src/tool/mount.c). */
#ifndef USERTP_MOUNT_H
#define USERTP_MOUNT_H

#include <stdbool.h>

/* Threads serving requests at most. */
#define USERTP__MOUNT_MAX_THREADS 64

/*
 * Mount the file system at @mountpoint with FUSE mount @options (-o), and serve it until it
 * is unmounted or a signal ends it; in the background unless @foreground.
 * Return: 0, or -1 (libfuse said why on stderr).
 */
int usertp__mount_run(const char *mountpoint, const char *options, bool foreground);

#endif
