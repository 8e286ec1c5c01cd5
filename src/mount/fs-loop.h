/* SPDX-License-Identifier: MIT */
/*
 * fs-loop.h - usertp mount's request loop (fs-loop.c): libfuse's session served by a pool of
 * threads, reads of the pipes that would wait parked instead of holding a thread.
 */
#ifndef USERTP_MOUNT_FS_LOOP_H
#define USERTP_MOUNT_FS_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct fuse_session;

struct usertp__fs_loop_ops {
	/*
	 * A read of the open file @fh (fuse_file_info's fh) that may wait: if it is a pipe with
	 * nothing to give now, register @handle with its instance, whose notify must then call
	 * usertp__fs_loop_wake(@handle) once, and return true.  False: serve the read now.
	 */
	bool (*park)(uint64_t fh, void *handle);
};

/*
 * Serve @se with at most @max_threads threads until it ends (unmounted, or a signal).
 * Return: 0, or -1 (it could not start).
 */
int usertp__fs_loop_run(struct fuse_session *se, unsigned int max_threads,
			const struct usertp__fs_loop_ops *ops);
/* A parked read may go on (its instance's notify). */
void usertp__fs_loop_wake(void *handle);
/* Is the request this thread serves a parked read the kernel interrupted? */
bool usertp__fs_loop_interrupted(void);
/* After the session is gone: what is still queued is freed. */
void usertp__fs_loop_end(void);

#endif
