/* SPDX-License-Identifier: MIT */
/*
 * proc.h - what /proc says about a process (proc.c): the one reader of /proc/PID/stat and of
 * threads' names; and which boot this is.
 */
#ifndef USERTP_PROC_H
#define USERTP_PROC_H

#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

/*
 * Field @field (numbered as in proc(5): 4 the parent, 22 the start time in clock ticks since
 * boot; 3 and on, the numbers after the comm) of /proc/@pid/stat.  Return: 0, -EINVAL (not
 * a number there), or the errno of reading it (-ENOENT: no such process).
 */
int usertp__proc_stat_field(pid_t pid, int field, unsigned long long *value);
/*
 * The state of @pid, as proc(5)'s field 3 says it ('R', 'S', 'D', 'T' stopped, 't' stopped by
 * a tracer, 'Z', ...), or 0 if it cannot be read (no such process).
 */
char usertp__proc_state(pid_t pid);
/* Does @pid run (it exists, and is neither a zombie nor dead)? */
bool usertp__proc_runs(pid_t pid);
/* The parent of @pid, or 0 if it cannot be read. */
pid_t usertp__proc_parent(pid_t pid);
/*
 * The name of thread @tid of process @pid (0: this process's own, /proc/self; @tid 0: its
 * main thread) into @buf, without its newline.  Return: 0, or -errno (-ENOENT: gone); @buf
 * is "" then.  (/proc/PID/comm is read from the kernel's task, not from the process's
 * memory: it never waits on the process.)
 */
int usertp__proc_comm(pid_t pid, pid_t tid, char *buf, size_t size);
/*
 * The end of a child forked to do some work (a trial parse) and not exec: the exit_group
 * system call itself, so that nothing of the parent's copy runs again in it: no atexit
 * handler, no flush of stdio buffers it inherited (under ThreadSanitizer, _exit() flushed
 * them: usertp stream printed records twice), no sanitizer's end-of-process work.
 */
__attribute__((noreturn)) void usertp__child_exit(int status);
/*
 * Argument @n (0: the program) of process @pid's command line into @buf.  Return: 0, or
 * -errno (-ENOENT: gone or no such argument; -ERANGE: longer than @size).  (Reads the
 * process's memory: for processes of one's own, such as another usertp command.)
 */
int usertp__proc_arg(pid_t pid, unsigned int n, char *buf, size_t size);
/* The user of process @pid (the owner of /proc/PID) into *@uid.  Return: 0 or -errno. */
int usertp__proc_owner(pid_t pid, uid_t *uid);
/*
 * This boot's id (/proc/sys/kernel/random/boot_id: 36 characters) into @buf (37 bytes at
 * least).  Return: 0 or -errno.
 */
int usertp__proc_boot_id(char *buf, size_t size);

#endif
