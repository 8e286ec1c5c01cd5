/* SPDX-License-Identifier: MIT */
/*
 * follow-forks - run a command and follow its process tree as it grows: every fork, exec
 * and exit the kernel sees in it (sched:sched_process_fork, _exec, _exit), and the events
 * its programs fire with libusertp, on one timeline.
 *
 *	follow-forks [-e SPECS] [-c CLOCK] -- COMMAND [ARGS...]
 *
 *	-e SPECS	the programs' events too (default: every one, "*:*"; "" for none)
 *	-c CLOCK	mono (default) or x86-tsc
 *
 * One line per event, in timestamp order:
 *
 *	SECS.USECS fork PARENT(COMM) -> CHILD(COMM)
 *	SECS.USECS exec PID FILENAME
 *	SECS.USECS exit PID(COMM)
 *	SECS.USECS event PID/TID SYSTEM:NAME: TEXT
 *
 * then "forks: N" on stderr, and the command's exit status is its own.
 *
 * The tool seed 004 ends wanting: the kernel records the tree's forks in a tracefs instance
 * of this session's own (the session's pid filter, with event-fork, is the instance's
 * set_event_pid), so other tools that change the global tracefs settings meanwhile, or
 * record in their own instances, change nothing here.  Needs tracefs: root, or tracefs's
 * group.
 *
 *	cc follow-forks.c $(pkg-config --cflags --libs usertp-consumer) -o follow-forks
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <usertp/consumer.h>

static const char *str_field(struct usertp_record *rec, const char *name, char *buf, size_t size)
{
	struct tep_format_field *f = tep_find_field(rec->event, name);
	int len;
	const char *p = f ? tep_get_field_raw(NULL, rec->event, name,
					      &(struct tep_record){ .data = (void *)rec->data,
								    .size = (int)rec->size },
					      &len, 0)
			  : NULL;

	snprintf(buf, size, "%.*s", p ? (int)strnlen(p, (size_t)len) : 1, p ? p : "?");
	return buf;
}

static long long num_field(struct usertp_record *rec, const char *name)
{
	struct tep_format_field *f = tep_find_field(rec->event, name);
	unsigned long long v = 0;

	if (!f || tep_read_number_field(f, rec->data, &v))
		return -1;
	return f->flags & TEP_FIELD_IS_SIGNED ? (long long)(int)v : (long long)v;
}

/* One line for @rec; returns whether it was a fork. */
static int print_record(struct usertp_session *s, struct usertp_record *rec)
{
	unsigned long long us = rec->ts / 1000;
	char a[64], b[64];

	printf("%llu.%06llu ", us / 1000000, us % 1000000);
	if (!rec->event) {
		printf("event %d/%d (a format the program did not give)\n", (int)rec->pid,
		       (int)rec->tid);
		return 0;
	}
	if (rec->pid == 0 && !strcmp(rec->event->name, "sched_process_fork")) {
		printf("fork %lld(%s) -> %lld(%s)\n", num_field(rec, "parent_pid"),
		       str_field(rec, "parent_comm", a, sizeof(a)), num_field(rec, "child_pid"),
		       str_field(rec, "child_comm", b, sizeof(b)));
		return 1;
	}
	if (rec->pid == 0 && !strcmp(rec->event->name, "sched_process_exec")) {
		printf("exec %lld %s\n", num_field(rec, "pid"),
		       str_field(rec, "filename", a, sizeof(a)));
		return 0;
	}
	if (rec->pid == 0 && !strcmp(rec->event->name, "sched_process_exit")) {
		printf("exit %lld(%s)\n", num_field(rec, "pid"), str_field(rec, "comm", a, sizeof(a)));
		return 0;
	}
	{
		struct tep_record tr = { .ts = rec->ts, .cpu = (int)rec->cpu,
					 .size = (int)rec->size, .data = (void *)rec->data };
		struct trace_seq seq;

		trace_seq_init(&seq);
		tep_print_event(usertp_session_tep(s), &seq, &tr, "%s", TEP_PRINT_INFO);
		trace_seq_terminate(&seq);
		printf("event %d/%d %s:%s: %s\n", (int)rec->pid, (int)rec->tid,
		       rec->event->system, rec->event->name, seq.buffer);
		trace_seq_destroy(&seq);
	}
	return 0;
}

/* What the session says of its programs (one that stalls, a format refused): on stderr. */
static void on_log(const char *line, void *arg)
{
	(void)arg;
	fprintf(stderr, "follow-forks: %s\n", line);
}

int main(int argc, char **argv)
{
	struct usertp_session_options opts = USERTP_STRUCT_INIT(usertp_session_options);
	const char *specs = "*:*";
	struct usertp_session *s = NULL;
	struct usertp_record rec = USERTP_STRUCT_INIT(usertp_record);
	int opt, ret, status = 0;
	long forks = 0;
	pid_t pid;
	bool ended = false;

	while ((opt = getopt(argc, argv, "+e:c:h")) != -1) {
		switch (opt) {
		case 'e':
			specs = optarg;
			break;
		case 'c':
			opts.clock = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-e SPECS] [-c CLOCK] -- COMMAND [ARGS...]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no command\n", argv[0]);
		return 2;
	}
	/*
	 * A line as soon as it is known (a live follower); and no buffered output is left for a
	 * process forked meanwhile (the command) to write again.
	 */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = usertp_session_new(&s, &opts);
	if (ret) {
		fprintf(stderr, "follow-forks: %s\n", strerror(-ret));
		return 1;
	}
	usertp_session_set_log(s, on_log, NULL);
	/*
	 * The command and what it starts alone (the session's pid filter, with event-fork); it
	 * starts once the session runs, with the events enabled below: where they cannot be
	 * had, it never runs.
	 */
	pid = usertp_session_run_only(s, argv + optind, true);
	ret = pid < 0 ? (int)pid : 0;
	if (!ret)
		ret = usertp_session_enable(s, "sched:sched_process_fork,sched:sched_process_exec,"
					       "sched:sched_process_exit");
	if (!ret && specs[0])
		ret = usertp_session_enable(s, specs);
	if (ret) {
		fprintf(stderr, "follow-forks: %s\n", usertp_session_error(s));
		usertp_session_free(s);
		return 1;
	}
	/* Until the command has ended, and what its tree did before is all read. */
	for (;;) {
		ret = usertp_session_next(s, &rec, 100);
		if (ret == 1) {
			forks += print_record(s, &rec);
			continue;
		}
		if (ret < 0 && ret != -ECANCELED) {
			if (ret != -ENODATA)
				fprintf(stderr, "follow-forks: %s\n", usertp_session_error(s));
			break;
		}
		if (ended)
			break; /* nothing in 100 ms after the end */
		if (waitpid(pid, &status, WNOHANG) == pid)
			ended = true;
	}
	fflush(stdout);
	fprintf(stderr, "forks: %ld\n", forks);
	if (!ended)
		waitpid(pid, &status, 0);
	usertp_session_free(s);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
