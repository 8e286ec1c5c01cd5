/* SPDX-License-Identifier: MIT */
/* fs.h - usertp mount's file system (fs.c), for the command (src/tool/mount.c). */
#ifndef USERTP_MOUNT_FS_H
#define USERTP_MOUNT_FS_H

#include <stdbool.h>

/*
 * Threads serving requests at most (a thread costs the mount about 24 KB).  A read of
 * trace_pipe or trace_pipe_raw with nothing to give holds none: it is parked (fs-loop.c).
 * One that cannot be (no memory, or another reader took the records in the instant between
 * its check and its read) waits in its thread, within these shares: the rest
 * serve every other file, however many such readers wait.
 */
#define USERTP__MOUNT_MAX_THREADS 1024
#define USERTP__MOUNT_MAX_PIPE_WAITERS (USERTP__MOUNT_MAX_THREADS - 64)
/* Of those, one user's at most (root's: all), so that one user's readers leave others room. */
#define USERTP__MOUNT_MAX_PIPE_WAITERS_PER_USER (USERTP__MOUNT_MAX_PIPE_WAITERS / 4)

#include <sys/types.h>

/* tracefs's mount options: the owner and group of every file, the mode of the top directory. */
struct usertp__mount_owner {
	uid_t uid;
	gid_t gid;
	mode_t root_mode; /* tracefs's default: 0700 */
};

/*
 * Mount the file system at @mountpoint with FUSE mount @options (-o), its files owned as
 * @owner says, and serve it until it is unmounted or a signal ends it; in the background
 * unless @foreground.  Return: 0, or -1 (libfuse said why on stderr).
 */
int usertp__mount_run(const char *mountpoint, const char *options,
		      const struct usertp__mount_owner *owner, bool foreground);

#endif
