/* SPDX-License-Identifier: MIT */
/*
 * link-main.c - the file of the program that defines the tracepoints (CREATE_TRACE_POINTS),
 * and its main(): the event fired in another file (link-user.c, or link-define2.c in the
 * case that must not link) is recorded and printed.
 */
#include <stdio.h>
#include <string.h>

#define CREATE_TRACE_POINTS
#include "link-trace.h"

#include <usertp/usertp.h>

void link_use(int a, const char *s);

static char text[256];
static int records;

static void on_record(const struct usertp_event *ev, const void *record, unsigned int size,
		      void *arg)
{
	(void)arg;
	usertp_event_print(ev, record, size, text, sizeof(text));
	records++;
}

int main(void)
{
	struct usertp_listener *l = NULL;

	if (!usertp_event_find("linktest", "link_ev")) {
		fprintf(stderr, "linktest:link_ev not found\n");
		return 1;
	}
	if (usertp_listener_create("linktest:link_ev", on_record, NULL, &l)) {
		fprintf(stderr, "usertp_listener_create failed\n");
		return 1;
	}
	link_use(42, "other-file");
	usertp_listener_destroy(l);
	link_use(43, "not recorded");
	if (records != 1 || strcmp(text, "a=42 s=other-file")) {
		fprintf(stderr, "got %d records, last \"%s\"\n", records, text);
		return 1;
	}
	printf("recorded: %s\n", text);
	return 0;
}
