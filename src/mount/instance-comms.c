/* SPDX-License-Identifier: MIT */
/*
 * instance-comms.c - an instance's thread names and tgids (instance-private.h), as the records
 * and the programs tell them: saved_cmdlines, saved_tgids.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <usertp/consumer.h>

#include "filter.h"
#include "kernel-page.h"
#include "trace-lines.h"
#include "private/usertp-consumer-private.h"
#include "pid-list.h"
#include "proc.h"
#include "instance-private.h"

/* --- thread names (saved_cmdlines) -------------------------------------------------------- */

static struct comm_entry *comm_slot(struct comm_entry *table, size_t cap, pid_t tid)
{
	size_t i = ((size_t)tid * 2654435761u) & (cap - 1);

	while (table[i].tid && table[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return &table[i];
}

/* The entry of @tid, made if need be (under lock), or NULL (no memory). */
static struct comm_entry *comm_entry_of(struct usertp__instance *in, pid_t tid)
{
	struct comm_entry *e;

	if ((in->nr_comms + 1) * 2 > in->comms_cap) {
		size_t cap = in->comms_cap ? in->comms_cap * 2 : 256;
		struct comm_entry *table = calloc(cap, sizeof(*table));

		if (!table)
			return NULL;
		for (size_t i = 0; i < in->comms_cap; i++)
			if (in->comms[i].tid)
				*comm_slot(table, cap, in->comms[i].tid) = in->comms[i];
		free(in->comms);
		in->comms = table;
		in->comms_cap = cap;
	}
	e = comm_slot(in->comms, in->comms_cap, tid);
	in->nr_comms += !e->tid;
	e->tid = tid;
	return e;
}

/* Under lock. */
static void comm_put(struct usertp__instance *in, pid_t tid, const char *comm)
{
	struct comm_entry *e = tid > 0 ? comm_entry_of(in, tid) : NULL;

	if (e)
		snprintf(e->comm, sizeof(e->comm), "%s", comm);
}

/*
 * Under lock.  A thread's first record: its name is taken from /proc now, as the kernel
 * saves a task's name when it records (the program tells its threads' names only once a
 * second: before, `cat trace` right after a program ran showed "<...>-PID"); what the
 * program tells later replaces it.
 */
void usertp__inst_thread_put(struct usertp__instance *in, pid_t tid, pid_t tgid)
{
	struct comm_entry *e = tid > 0 ? comm_entry_of(in, tid) : NULL;

	if (!e)
		return;
	if (!e->tgid && !e->comm[0] && tgid > 0)
		usertp__proc_comm(tgid, tid, e->comm, sizeof(e->comm));
	e->tgid = tgid;
}

/* The name of thread @tid as the kernel prints it: "<idle>" for 0, "<...>" if unknown. */
const char *usertp__inst_comm_get(const struct usertp__instance *in, pid_t tid)
{
	const struct comm_entry *e;

	if (!tid)
		return "<idle>";
	if (!in->comms_cap)
		return "<...>";
	e = comm_slot(in->comms, in->comms_cap, tid);
	return e->tid && e->comm[0] ? e->comm : "<...>";
}

void usertp__inst_on_comm(pid_t tid, const char *comm, void *arg)
{
	struct usertp__instance *in = arg;

	/* (Called inside the session, under tep_lock: queued, not put under lock here.) */
	pthread_mutex_lock(&in->comm_lock);
	if (in->nr_told == in->told_cap) {
		size_t cap = in->told_cap ? in->told_cap * 2 : 64;
		struct comm_entry *more = realloc(in->told, cap * sizeof(*more));

		if (more) {
			in->told = more;
			in->told_cap = cap;
		}
	}
	if (in->nr_told < in->told_cap && tid > 0) {
		in->told[in->nr_told].tid = tid;
		snprintf(in->told[in->nr_told].comm, sizeof(in->told[0].comm), "%s", comm);
		in->nr_told++;
	}
	pthread_mutex_unlock(&in->comm_lock);
}

void usertp__inst_comms_take(struct usertp__instance *in)
{
	pthread_mutex_lock(&in->comm_lock);
	for (size_t i = 0; i < in->nr_told; i++)
		comm_put(in, in->told[i].tid, in->told[i].comm);
	in->nr_told = 0;
	pthread_mutex_unlock(&in->comm_lock);
}

/* --- saved_cmdlines, saved_tgids (§14) ---------------------------------------------------- */

static int by_tid(const void *a, const void *b)
{
	const struct comm_entry *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* "TID VALUE" lines of the threads known, by tid (@tgids: their tgids, else their names). */
char *usertp__instance_saved(struct usertp__instance *in, bool tgids)
{
	struct comm_entry *known;
	char *text = NULL;
	size_t len = 0, nr = 0;
	FILE *out;

	pthread_mutex_lock(&in->lock);
	usertp__inst_comms_take(in);
	known = malloc((in->nr_comms ? in->nr_comms : 1) * sizeof(*known));
	for (size_t i = 0; known && i < in->comms_cap; i++)
		if (in->comms[i].tid && (tgids ? in->comms[i].tgid != 0 : in->comms[i].comm[0] != 0))
			known[nr++] = in->comms[i];
	pthread_mutex_unlock(&in->lock);
	out = known ? open_memstream(&text, &len) : NULL;
	if (!out) {
		free(known);
		return NULL;
	}
	qsort(known, nr, sizeof(*known), by_tid);
	for (size_t i = 0; i < nr; i++) {
		if (tgids)
			fprintf(out, "%d %d\n", (int)known[i].tid, (int)known[i].tgid);
		else
			fprintf(out, "%d %s\n", (int)known[i].tid, known[i].comm);
	}
	free(known);
	return fclose(out) ? NULL : text;
}

char *usertp__instance_printk_formats(struct usertp__instance *in)
{
	char *text;

	pthread_mutex_lock(&in->tep_lock); /* (the session learns them in the pump, under it) */
	text = usertp__session_printk_formats(in->session);
	pthread_mutex_unlock(&in->tep_lock);
	return text;
}
