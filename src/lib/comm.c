/* SPDX-License-Identifier: MIT */
/*
 * comm.c - the names of the threads that wrote events, for the "comm-pid" column.
 *
 * A thread's name is noted when it writes its first event (the slow path that also caches its
 * id), in a fixed table appended to without locks.  At output time a thread still alive is
 * named from /proc (its name now, as the kernel looks names up when the trace is read), one
 * that has gone from the table, and one never seen is "<...>", as in the kernel.  Everything
 * here is async-signal-safe.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "internal.h"
#include "proc.h"

#define COMM_LEN 16
#define COMM_MAX 8192

static struct {
	int tid;
	char comm[COMM_LEN];
} comms[COMM_MAX];
static unsigned int nr_comms;

/* The thread's name as of its first event: what filters compare COMM with. */
__thread char usertp__thread_comm[COMM_LEN] __attribute__((tls_model("initial-exec")));

void usertp__comm_note(int tid)
{
	unsigned int i = __atomic_fetch_add(&nr_comms, 1, __ATOMIC_RELAXED);
	char name[COMM_LEN] = "";

	prctl(PR_GET_NAME, name, 0, 0, 0);
	memcpy(usertp__thread_comm, name, COMM_LEN);
	usertp__thread_comm[COMM_LEN - 1] = '\0';
	if (i >= COMM_MAX)
		return;
	memcpy(comms[i].comm, name, COMM_LEN);
	comms[i].comm[COMM_LEN - 1] = '\0';
	__atomic_store_n(&comms[i].tid, tid, __ATOMIC_RELEASE);
}

const char *usertp__comm_find(int tid, char *buf, size_t size)
{
	unsigned int n = __atomic_load_n(&nr_comms, __ATOMIC_ACQUIRE), i;

	if (size < COMM_LEN)
		return NULL;
	if (!usertp__proc_comm(0, tid, buf, size) && buf[0])
		return buf;
	if (n > COMM_MAX)
		n = COMM_MAX;
	for (i = n; i-- > 0;) {
		if (__atomic_load_n(&comms[i].tid, __ATOMIC_ACQUIRE) == tid) {
			memcpy(buf, comms[i].comm, COMM_LEN);
			return buf;
		}
	}
	return NULL;
}

size_t usertp__comm_lines(char *buf, size_t size)
{
	unsigned int n = __atomic_load_n(&nr_comms, __ATOMIC_ACQUIRE), i, j;
	size_t len = 0;

	/* (No thread yet: an empty text, not what the buffer held: a peer is sent it.) */
	if (size)
		buf[0] = 0;
	if (n > COMM_MAX)
		n = COMM_MAX;
	for (i = 0; i < n; i++) {
		int tid = __atomic_load_n(&comms[i].tid, __ATOMIC_ACQUIRE);
		char name[32];
		const char *comm;
		int k;

		if (!tid)
			continue;
		for (j = i + 1; j < n && __atomic_load_n(&comms[j].tid, __ATOMIC_ACQUIRE) != tid; j++)
			;
		if (j < n)
			continue; /* noted again later: use that one */
		comm = usertp__comm_find(tid, name, sizeof(name));
		k = snprintf(buf + len, size - len, "%d %s\n", tid, comm ? comm : "<...>");
		if (k < 0 || (size_t)k >= size - len)
			break;
		len += (size_t)k;
	}
	return len;
}
