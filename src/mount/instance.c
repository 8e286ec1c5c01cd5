/* SPDX-License-Identifier: MIT */
/*
 * instance.c - one tracefs instance of usertp mount (instance.h, instance-private.h): its life,
 * and the pump that reads its session into the records it holds.
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
#include "instance-private.h"

/* The pump: reads the session and holds what it gives. */
/* The session's next record (it may learn a format: under tep_lock).  False: none now. */
static bool session_next(struct usertp__instance *in, struct usertp_record *rec)
{
	int ret;

	pthread_mutex_lock(&in->tep_lock);
	ret = usertp_session_next(in->session, rec, 0);
	pthread_mutex_unlock(&in->tep_lock);
	return ret == 1;
}

/* Take what the session has now into the records held (under apply). */
static void drain(struct usertp__instance *in)
{
	struct usertp_record rec = USERTP_STRUCT_INIT(usertp_record);
	bool any = false;

	/* Programs that joined, their messages and thread names (next() waits for none). */
	pthread_mutex_lock(&in->tep_lock);
	usertp_session_process(in->session, 0);
	pthread_mutex_unlock(&in->tep_lock);
	while (!atomic_load(&in->stop) && session_next(in, &rec)) {
		struct held *h;
		unsigned int cpu = rec.cpu < in->nr_cpus ? rec.cpu : in->nr_cpus - 1;

		if (!usertp__inst_keep_record(in, &rec))
			continue;
		h = usertp__inst_held_new(in, &rec);
		pthread_mutex_lock(&in->lock);
		usertp__inst_comms_take(in);
		usertp__inst_thread_put(in, rec.tid, rec.pid);
		if (h)
			usertp__inst_hold(in, h);
		else
			in->cpus[cpu].dropped++;
		pthread_mutex_unlock(&in->lock);
		any = true;
	}
	any |= usertp__inst_count_dropped(in);
	pthread_mutex_lock(&in->lock);
	usertp__inst_comms_take(in); /* (those the session told without a record after) */
	if (any)
		usertp__inst_wake(in);
	pthread_mutex_unlock(&in->lock);
}

static void *pump(void *arg)
{
	struct usertp__instance *in = arg;
	struct pollfd pfd = { usertp_session_fd(in->session), POLLIN, 0 };

	while (!atomic_load(&in->stop)) {
		poll(&pfd, 1, PUMP_POLL_MS);
		pthread_mutex_lock(&in->apply);
		atomic_store(&in->pumping, true);
		drain(in);
		pthread_mutex_unlock(&in->apply);
		atomic_store(&in->pumping, false); /* (after: a sync that saw it set tries again) */
	}
	return NULL;
}

void usertp__instance_sync(struct usertp__instance *in)
{
	/*
	 * What was committed before the open is seen: drained now, after the pump's drain if
	 * it is in one (it may have passed that program's buffer already).  A setting being
	 * applied is not waited for (a program may take its deadline): the pump sees to it.
	 */
	while (pthread_mutex_trylock(&in->apply)) {
		if (!atomic_load(&in->pumping))
			return;
		sched_yield();
	}
	drain(in);
	pthread_mutex_unlock(&in->apply);
}

/* --- the instance ------------------------------------------------------------------------- */

int usertp__instance_new(const char *name, void (*notify)(void *handle),
			 unsigned int (*event_id)(const char *system, const char *name),
			 struct usertp__instance **out, char *err, size_t errlen)
{
	struct usertp__instance *in = calloc(1, sizeof(*in));
	int ret = -ENOMEM;

	if (!in)
		return -ENOMEM;
	pthread_mutex_init(&in->apply, NULL);
	pthread_mutex_init(&in->lock, NULL);
	pthread_mutex_init(&in->tep_lock, NULL);
	pthread_mutex_init(&in->comm_lock, NULL);
	pthread_cond_init(&in->more, NULL);
	in->tracing = true;
	for (int i = 0; i < NR_OPTIONS; i++)
		in->option[i] = usertp__instance_options[i].initial;
	in->notify = notify;
	in->event_id = event_id;
	in->nr_cpus = (unsigned int)get_nprocs_conf();
	if (!in->nr_cpus)
		in->nr_cpus = 1;
	in->cpus = calloc(in->nr_cpus, sizeof(*in->cpus));
	if ((name && !(in->name = strdup(name))) || !in->cpus)
		goto fail;
	for (unsigned int cpu = 0; cpu < in->nr_cpus; cpu++)
		in->cpus[cpu].kb = DEFAULT_BUFFER_KB;
	ret = usertp_session_new(&in->session, NULL);
	if (ret)
		goto fail;
	usertp__session_mount_mode(in->session, usertp__inst_on_comm, in);
	ret = usertp_session_attach_all(in->session);
	/* The top level records usertp_printk()'s records from the start (options/trace_printk). */
	if (!ret && !name)
		ret = usertp__instance_set_events(in, NULL, false);
	if (ret) {
		snprintf(err, errlen, "%s", usertp_session_error(in->session));
		goto fail;
	}
	ret = -pthread_create(&in->pump, NULL, pump, in);
	if (!ret) {
		*out = in;
		return 0;
	}
fail:
	if (!err[0])
		snprintf(err, errlen, "%s", strerror(-ret));
	usertp_session_free(in->session);
	free(in->cpus);
	free(in->name);
	free(in);
	return ret;
}

void usertp__instance_free(struct usertp__instance *in)
{
	if (!in)
		return;
	atomic_store(&in->stop, true);
	pthread_join(in->pump, NULL);
	pthread_mutex_lock(&in->lock);
	usertp__inst_wake(in); /* (the pollers' handles are let go) */
	pthread_mutex_unlock(&in->lock);
	free(in->pollers);
	usertp_session_free(in->session);
	usertp__instance_clear(in, -1);
	free(in->cpus);
	free(in->seen_dropped);
	free(in->comms);
	free(in->rules);
	for (size_t i = 0; i < in->nr_soft; i++) {
		for (size_t k = 0; k < in->soft[i].nr_triggers; k++)
			usertp__inst_trigger_free(&in->soft[i].triggers[k]);
		free(in->soft[i].triggers);
		free(in->soft[i].system);
		free(in->soft[i].name);
	}
	free(in->soft);
	usertp__pid_list_free(&in->pids[0]);
	usertp__pid_list_free(&in->pids[1]);
	for (size_t i = 0; i < in->nr_filters; i++) {
		free(in->filters[i].system);
		free(in->filters[i].name);
		free(in->filters[i].text);
	}
	free(in->filters);
	usertp__instance_clear_error_log(in);
	free(in->name);
	pthread_cond_destroy(&in->more);
	pthread_mutex_destroy(&in->lock);
	pthread_mutex_destroy(&in->tep_lock);
	pthread_mutex_destroy(&in->comm_lock);
	free(in->told);
	pthread_mutex_destroy(&in->apply);
	free(in);
}
