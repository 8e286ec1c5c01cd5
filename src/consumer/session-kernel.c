/* SPDX-License-Identifier: MIT */
/*
 * session-kernel.c - the kernel's events of a session (session.h).
 *
 * A spec whose system is one of the kernel's (sched:sched_process_fork, irq) goes to a tracefs
 * instance of the session's own (kernel-rec.c), made with the session's clock and buffer
 * size when the first such spec is enabled, and removed with the session: what other tools do
 * with the global tracefs files, or with their own instances, never reaches it, and it never
 * touches theirs.  The session's pid filter, tracing on/off and filters of kernel events are
 * the instance's (set_event_pid, set_event_notrace_pid, options/event-fork, tracing_on,
 * events/SYS/EV/filter: the kernel applies them).
 *
 * Reading: its pages are read as usertp_session_process() runs, whole or not, and go to the
 * reader as one more source (not a program: its records have pid 0, tid the task's), merged
 * in timestamp order with the programs' records: the instance records with the programs'
 * clock.  What the kernel lost is counted in usertp_session_status()'s dropped.
 *
 * A file: its full pages are spliced into the spool as usertp_session_process() runs (so
 * that --recover of a recorder killed has them; the spool's meta has the formats and the
 * texts the file's header holds, written when they are known), and at the end its last
 * pages, counts and texts are one more source of the merge, as the kernel wrote them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "kernel-page.h"
#include "kernel-rec.h"
#include "ring-buffer.h"
#include "session.h"
#include "sinks.h"
#include "spec.h"

#define KERNEL_ROOM_PAGES 64 /* per CPU per round, at most: the reader's queue */

/* The session's pid filter, as the instance takes it. */
static struct usertp__kernel_pids kernel_pids(const struct usertp_session *s)
{
	return (struct usertp__kernel_pids){ .pids = s->trace_pids.pids,
					     .notrace = s->notrace_pids.pids,
					     .nr_pids = s->trace_pids.nr,
					     .nr_notrace = s->notrace_pids.nr,
					     .event_fork = s->event_fork };
}

/*
 * The formats of the events the instance records that the session has not taken yet: to the
 * reader, or to the spool's meta.  Return: 0 or a negative errno (said).
 */
static int kernel_formats(struct usertp_session *s)
{
	const struct usertp__merge_event *events;
	unsigned int nr_events, nr_cpus;
	int ret = 0;

	usertp__kernel_formats(s->kernel, &events, &nr_events, &nr_cpus);
	for (unsigned int i = s->kernel_told; i < nr_events && !ret; i++) {
		if (s->dat)
			ret = usertp__writer_kernel_event(s, &events[i]);
		else if (!usertp__source_has_event(s->kernel_src, events[i].id))
			usertp__source_keep_format(s, s->kernel_src, events[i].id, events[i].system,
						   events[i].format);
	}
	s->kernel_told = nr_events;
	return ret;
}

/* The filters the session keeps for kernel specs, to the instance (after set_event). */
static int kernel_filters(struct usertp_session *s)
{
	char text[1024];
	int ret = 0;

	for (unsigned int i = 0; i < s->nr_filters && !ret; i++)
		if (s->filters[i].kernel &&
		    (ret = usertp__kernel_set_filter(s->kernel, s->filters[i].events,
						     s->filters[i].text, text, sizeof(text))))
			usertp__session_fail(s, ret, "%s", text);
	return ret;
}

/*
 * A file's kernel part of the spool, from the start: what a recovery needs besides the pages
 * (the CPUs, the texts the file's header holds: their room on the disk taken before the
 * pages').  Return: 0 or a negative errno (said).
 */
static int kernel_spool(struct usertp_session *s)
{
	const struct usertp__merge_event *events;
	unsigned int nr_events, nr_cpus;
	struct usertp__kernel_texts texts;

	usertp__kernel_formats(s->kernel, &events, &nr_events, &nr_cpus);
	usertp__kernel_texts(s->kernel, &texts);
	return usertp__session_spool_kernel(s, nr_cpus, NULL, 0,
					    &(struct usertp__session_extra){
						    .cmdlines = texts.cmdlines,
						    .kallsyms = texts.kallsyms,
						    .kallsyms_len = texts.kallsyms_len,
						    .printk_formats = texts.printk_formats,
						    .printk_formats_len = texts.printk_formats_len });
}

/*
 * The instance, recording nothing yet; reading, its source; a file, its spool.  Return: 0 or
 * a negative errno.
 */
static int kernel_start(struct usertp_session *s)
{
	struct usertp__kernel_pids pids = kernel_pids(s);
	struct usertp__source *src;
	char why[512];
	int ret;

	if (usertp__kernel_check(why, sizeof(why)))
		return usertp__session_fail(s, -EACCES, "%s", why);
	usertp__kernel_remove_leftovers(NULL);
	if (usertp__kernel_start(&s->kernel, NULL, NULL, 0, s->kb, s->tsc ? "x86-tsc" : "mono",
				 &pids, s->dat ? usertp__session_spool_dir(s) : NULL, why,
				 sizeof(why)))
		return usertp__session_fail(s, -EIO, "%s", why);
	if (s->dat)
		return kernel_spool(s) ? -EIO
				       : s->tracing ? 0 : usertp__kernel_set_tracing(s->kernel, false);
	src = calloc(1, sizeof(*src));
	s->kernel_src = src;
	if (!src)
		return -ENOMEM;
	src->pid = 0;
	snprintf(src->comm, sizeof(src->comm), "kernel");
	snprintf(src->name, sizeof(src->name), "the kernel (%s)", usertp__kernel_name(s->kernel));
	src->session = src->query = -1;
	src->ended = true; /* (nothing to peek at: its pages come whole or not, when read) */
	src->nr_cpus = (unsigned int)get_nprocs_conf();
	if (src->nr_cpus > USERTP_MERGE_MAX_CPUS)
		src->nr_cpus = USERTP_MERGE_MAX_CPUS;
	if (src->nr_cpus > s->nr_cpus)
		s->nr_cpus = src->nr_cpus;
	src->stats = calloc(src->nr_cpus, sizeof(*src->stats));
	s->kernel_pages = calloc(src->nr_cpus, sizeof(*s->kernel_pages));
	if (!src->stats || !s->kernel_pages)
		return -ENOMEM;
	ret = s->sink->source_new(s, src);
	if (!ret && !s->tracing)
		ret = usertp__kernel_set_tracing(s->kernel, false);
	return ret;
}

int usertp__ses_kernel_specs(struct usertp_session *s, const char *const *specs,
			     unsigned int nr_specs, bool replace)
{
	char err[1024] = "";
	int ret;

	if (!nr_specs && (!replace || !s->kernel))
		return 0;
	if (!s->kernel && (ret = kernel_start(s))) {
		usertp__ses_kernel_free(s);
		return ret;
	}
	/* Off while the events and their filters are set: none of them unfiltered. */
	if (s->tracing)
		usertp__kernel_set_tracing(s->kernel, false);
	ret = usertp__kernel_set_events(s->kernel, specs, nr_specs, replace, err, sizeof(err));
	if (ret)
		usertp__session_fail(s, ret, "%s", err);
	if (!ret)
		ret = kernel_filters(s);
	if (!ret)
		ret = kernel_formats(s);
	if (s->tracing)
		usertp__kernel_set_tracing(s->kernel, true);
	return ret;
}

int usertp__ses_kernel_filter(struct usertp_session *s, const char *spec, const char *filter,
			      char *err, size_t errlen)
{
	char text[1024] = "";
	int ret;

	if (!s->kernel)
		return 0; /* (kept: the instance takes it when it is made) */
	ret = usertp__kernel_set_filter(s->kernel, spec, filter, text, sizeof(text));
	if (ret && err && errlen)
		snprintf(err, errlen, "%s", strchr(text, '\n') ? strchr(text, '\n') + 1 : text);
	return ret ? usertp__session_fail(s, ret, "%s", text) : 0;
}

int usertp__ses_kernel_settings(struct usertp_session *s)
{
	struct usertp__kernel_pids pids = kernel_pids(s);
	char err[512];
	int ret;

	if (!s->kernel)
		return 0;
	ret = usertp__kernel_set_pids(s->kernel, &pids, err, sizeof(err));
	if (!ret)
		ret = usertp__kernel_set_tracing(s->kernel, s->tracing);
	return ret ? usertp__session_fail(s, ret, "%s", err) : 0;
}

void usertp__ses_kernel_read(struct usertp_session *s)
{
	struct usertp__source *src = s->kernel_src;
	struct usertp__rb_page_copy *page;

	s->kernel_took = 0;
	/* A file's: its full pages to the spool (a failure there shows in the counts at stop). */
	if (s->kernel && s->dat) {
		usertp__kernel_drain(s->kernel);
		return;
	}
	if (!s->kernel || !src || !(page = malloc(sizeof(*page))))
		return;
	for (unsigned int cpu = 0; cpu < src->nr_cpus; cpu++) {
		for (unsigned int n = 0; n < KERNEL_ROOM_PAGES; n++) {
			uint64_t lost;

			if ((s->sink->room && !s->sink->room(src, cpu)) ||
			    usertp__kernel_read_page(s->kernel, cpu, page->data) != 1)
				break;
			if (!usertp__kpage_header(page->data, &page->used, &lost)) {
				usertp__session_log(s, "%s: a page of CPU %u does not parse; left out",
						    src->name, cpu);
				continue;
			}
			if (lost == USERTP__KPAGE_LOST_UNKNOWN) {
				if (!s->kernel_lost_said)
					usertp__session_log(s, "%s lost events on CPU %u (how many: "
							    "usertp_session_status())", src->name,
							    cpu);
				s->kernel_lost_said = true;
				lost = 0;
			}
			page->lost_before = lost;
			page->page_no = s->kernel_pages[cpu]++;
			if (!s->sink->page(s, src, cpu, page, 0))
				s->kernel_took++;
		}
	}
	free(page);
}

int usertp__ses_kernel_stop(struct usertp_session *s)
{
	struct usertp__kernel_texts texts;

	if (!s->kernel || !s->dat)
		return 0;
	s->kernel_fired = calloc(USERTP_MERGE_MAX_CPUS, sizeof(*s->kernel_fired));
	s->kernel_overrun = calloc(USERTP_MERGE_MAX_CPUS, sizeof(*s->kernel_overrun));
	if (!s->kernel_fired || !s->kernel_overrun)
		return -ENOMEM;
	usertp__kernel_stop(s->kernel, &s->kernel_merge, s->kernel_fired, s->kernel_overrun,
			    USERTP_MERGE_MAX_CPUS);
	usertp__kernel_texts(s->kernel, &texts);
	s->extra = (struct usertp__session_extra){ .src = &s->kernel_merge,
						   .fired = s->kernel_fired,
						   .overrun = s->kernel_overrun,
						   .cmdlines = texts.cmdlines,
						   .kallsyms = texts.kallsyms,
						   .kallsyms_len = texts.kallsyms_len,
						   .printk_formats = texts.printk_formats,
						   .printk_formats_len = texts.printk_formats_len };
	return 0;
}

uint64_t usertp__ses_kernel_dropped(const struct usertp_session *s)
{
	uint64_t all = 0;

	for (unsigned int cpu = 0; s->kernel && s->kernel_src && cpu < s->kernel_src->nr_cpus;
	     cpu++) {
		uint64_t dropped, overrun;

		usertp__kernel_lost(s->kernel, cpu, &dropped, &overrun);
		all += dropped + overrun;
	}
	return all;
}

void usertp__ses_kernel_free(struct usertp_session *s)
{
	struct usertp__source *src = s->kernel_src;

	usertp__kernel_free(s->kernel);
	s->kernel = NULL;
	if (src) {
		if (s->sink)
			s->sink->source_free(src);
		usertp__source_free_formats(src);
		free(src->stats);
		free(src);
	}
	s->kernel_src = NULL;
	free(s->kernel_pages);
	s->kernel_pages = NULL;
	free(s->kernel_fired);
	free(s->kernel_overrun);
	s->kernel_fired = s->kernel_overrun = NULL;
	s->extra = (struct usertp__session_extra){ .src = NULL };
}
