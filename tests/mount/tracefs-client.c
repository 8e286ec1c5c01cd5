/* SPDX-License-Identifier: MIT */
/*
 * tracefs-client - libtracefs, unchanged, on a tracefs directory (usertp mount's, or the
 * kernel's): what a real client of tracefs sees there.
 *
 *	tracefs-client DIR systems	the systems, one a line (tracefs_event_systems())
 *	tracefs-client DIR events SYS	the events of SYS (tracefs_system_events())
 *	tracefs-client DIR raw		every record, consumed from per_cpu/cpuN/trace_pipe_raw
 *					(tracefs_iterate_raw_events()), as "TID NAME: TEXT" lines
 *					with libtraceevent's text of the record
 *	tracefs-client DIR binary ID TEXT	ID (4 bytes) and TEXT written to trace_marker_raw
 *					(tracefs_binary_init(), tracefs_binary_write())
 *
 * Exits 1 when libtracefs fails (it says why on stderr).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <tracefs.h>

static int print_record(struct tep_event *event, struct tep_record *record, int cpu, void *arg)
{
	struct trace_seq s;

	(void)cpu, (void)arg;
	trace_seq_init(&s);
	tep_print_event(event->tep, &s, record, "%d %s: %s", TEP_PRINT_PID, TEP_PRINT_NAME,
			TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	printf("%s\n", s.buffer);
	trace_seq_destroy(&s);
	return 0;
}

int main(int argc, char **argv)
{
	char **list;

	if (argc < 3) {
		fprintf(stderr, "usage: tracefs-client DIR systems|events SYS|raw\n");
		return 2;
	}
	if (tracefs_set_tracing_dir(argv[1])) {
		perror("tracefs_set_tracing_dir");
		return 1;
	}
	if (!strcmp(argv[2], "systems") || (!strcmp(argv[2], "events") && argc > 3)) {
		list = !strcmp(argv[2], "systems") ? tracefs_event_systems(NULL)
						   : tracefs_system_events(NULL, argv[3]);
		if (!list) {
			fprintf(stderr, "tracefs-client: libtracefs found nothing\n");
			return 1;
		}
		for (int i = 0; list[i]; i++)
			printf("%s\n", list[i]);
		tracefs_list_free(list);
		return 0;
	}
	if (!strcmp(argv[2], "raw")) {
		struct tep_handle *tep = tracefs_local_events(NULL);

		if (!tep) {
			fprintf(stderr, "tracefs-client: tracefs_local_events() failed\n");
			return 1;
		}
		if (tracefs_iterate_raw_events(tep, NULL, NULL, 0, print_record, NULL)) {
			fprintf(stderr, "tracefs-client: tracefs_iterate_raw_events() failed\n");
			tep_free(tep);
			return 1;
		}
		tep_free(tep);
		return 0;
	}
	if (!strcmp(argv[2], "binary") && argc == 5) {
		unsigned int id = (unsigned int)strtoul(argv[3], NULL, 0);
		size_t len = strlen(argv[4]);
		char *data = malloc(4 + len);

		if (!data || tracefs_binary_init(NULL)) {
			fprintf(stderr, "tracefs-client: tracefs_binary_init() failed\n");
			return 1;
		}
		memcpy(data, &id, 4);
		memcpy(data + 4, argv[4], len);
		if (tracefs_binary_write(NULL, data, (int)(4 + len)) < 0) {
			fprintf(stderr, "tracefs-client: tracefs_binary_write() failed\n");
			return 1;
		}
		tracefs_binary_close(NULL);
		free(data);
		return 0;
	}
	fprintf(stderr, "tracefs-client: %s: unknown\n", argv[2]);
	return 2;
}
