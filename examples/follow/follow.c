/* SPDX-License-Identifier: MIT */
/*
 * follow - follow the jobs of every running worker-pool, live: one line per finished job,
 * with how long it took from being queued to being done.
 *
 *	follow [-n JOBS] [-t SECONDS]
 *
 * It records jobs:job_queued and jobs:job_done of every program of this user that uses
 * libusertp, those running now and those that start later, in a session of its own that
 * nobody else sees or changes (the "program that follows forks" of seed 004, for jobs).
 * It stops after JOBS finished jobs, SECONDS without one, or Ctrl-C.
 *
 *	cc follow.c $(pkg-config --cflags --libs usertp-consumer) -o follow
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <usertp/consumer.h>

/* When each job was queued, by program and job id (a small open-addressing table). */
#define QUEUED_SLOTS 65536
static struct queued {
	pid_t pid;
	int id;
	unsigned long long ts;
} queued[QUEUED_SLOTS];

static struct queued *queued_slot(pid_t pid, int id)
{
	unsigned int h = ((unsigned int)pid * 2654435761u) ^ (unsigned int)id;

	for (unsigned int i = 0; i < QUEUED_SLOTS; i++) {
		struct queued *q = &queued[(h + i) % QUEUED_SLOTS];

		if (!q->pid || (q->pid == pid && q->id == id))
			return q;
	}
	return &queued[h % QUEUED_SLOTS]; /* full: the oldest guess is overwritten */
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The integer field @name of @rec. */
static long long field(struct usertp_record *rec, const char *name)
{
	struct tep_format_field *f = tep_find_field(rec->event, name);
	unsigned long long v = 0;

	if (!f || tep_read_number_field(f, rec->data, &v))
		return -1;
	return (long long)v;
}

int main(int argc, char **argv)
{
	struct usertp_session *s;
	struct usertp_record rec = USERTP_STRUCT_INIT(usertp_record);
	long max_jobs = -1, idle_s = -1, done = 0;
	int opt, ret;

	while ((opt = getopt(argc, argv, "n:t:h")) != -1) {
		switch (opt) {
		case 'n':
			max_jobs = atol(optarg);
			break;
		case 't':
			idle_s = atol(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-n JOBS] [-t SECONDS]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	ret = usertp_session_new(&s, NULL);
	if (!ret)
		ret = usertp_session_attach_all(s);
	if (!ret)
		ret = usertp_session_enable(s, "jobs:job_queued,jobs:job_done");
	if (ret) {
		fprintf(stderr, "follow: %s\n", s ? usertp_session_error(s) : strerror(-ret));
		usertp_session_free(s);
		return 1;
	}
	fprintf(stderr, "follow: following the jobs of every worker-pool\n");
	while (!stop && (max_jobs < 0 || done < max_jobs)) {
		ret = usertp_session_next(s, &rec, idle_s < 0 ? 500 : (int)idle_s * 1000);
		if (ret == 0 && idle_s >= 0)
			break; /* nothing for SECONDS */
		if (ret <= 0 || !rec.event)
			continue;
		if (rec.lost_before)
			printf("[%d] %llu events lost\n", (int)rec.pid,
			       (unsigned long long)rec.lost_before);
		if (!strcmp(rec.event->name, "job_queued")) {
			struct queued *q = queued_slot(rec.pid, (int)field(&rec, "id"));

			*q = (struct queued){ rec.pid, (int)field(&rec, "id"), rec.ts };
		} else if (!strcmp(rec.event->name, "job_done")) {
			int id = (int)field(&rec, "id");
			struct queued *q = queued_slot(rec.pid, id);

			if (q->pid == rec.pid && q->id == id)
				printf("[%d] job %d done by thread %d in %llu us\n", (int)rec.pid, id,
				       (int)rec.tid, (rec.ts - q->ts) / 1000);
			else
				printf("[%d] job %d done by thread %d (queued before we looked)\n",
				       (int)rec.pid, id, (int)rec.tid);
			fflush(stdout);
			done++;
		}
	}
	usertp_session_free(s);
	return 0;
}
