/* SPDX-License-Identifier: MIT */
/*
 * report-line.c - one event as `trace-cmd report` prints it (report-line.h): usertp report's
 * lines and usertp stream's.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "report-line.h"

void usertp__report_line_init(struct usertp__report_line *l, bool fast)
{
	memset(l, 0, sizeof(*l));
	l->fast = fast ? usertp__fast_print_new() : NULL;
	trace_seq_init(&l->seq);
}

void usertp__report_line_free(struct usertp__report_line *l)
{
	usertp__fast_print_free(l->fast);
	trace_seq_destroy(&l->seq);
	free(l->text.buf);
	memset(l, 0, sizeof(*l));
}

void usertp__report_line_forget_comm(struct usertp__report_line *l)
{
	l->comm = NULL;
}

/*
 * The default line (trace-cmd report's, microseconds), without libtraceevent's format parsing
 * for the columns, and through fast-print.c for the event's text where it can: the same
 * bytes as libtraceevent's way below (test-report compares them on every file).
 * Return: false if the event's text is libtraceevent's to print (nothing written).
 */
static bool print_fast(FILE *out, struct usertp__report_line *l, struct tep_handle *tep,
		       struct tep_event *event, struct tep_record *rec)
{
	struct usertp__text *t = &l->text;
	unsigned long long usecs = (rec->ts + 500) / 1000;
	int pid = tep_data_pid(tep, rec);
	size_t len, name_len;

	t->len = 0;
	t->failed = false;
	if (!event)
		return false;
	if (rec->missed_events) {
		usertp__text_put(t, "CPU:", 4);
		usertp__text_put_u64(t, (unsigned long long)rec->cpu, 0, false, ' ');
		if (rec->missed_events > 0) {
			usertp__text_put(t, " [", 2);
			usertp__text_put_u64(t, (unsigned long long)rec->missed_events, 0, false, ' ');
			usertp__text_put(t, " EVENTS DROPPED]\n", 17);
		} else {
			usertp__text_put(t, " [EVENTS DROPPED]\n", 18);
		}
	}
	if (!l->comm || pid != l->comm_pid) {
		l->comm = tep_data_comm_from_pid(tep, pid);
		l->comm_pid = pid;
	}
	/* "%16s-%-5d [%03d] %5llu.%06llu: %s: " and spaces to 20 columns of name */
	len = strlen(l->comm);
	for (; len < 16; len++)
		usertp__text_putc(t, ' ');
	usertp__text_put(t, l->comm, strlen(l->comm));
	usertp__text_putc(t, '-');
	if (pid < 0)
		return false;
	usertp__text_put_u64(t, (unsigned long long)pid, 5, true, ' ');
	usertp__text_put(t, " [", 2);
	usertp__text_put_u64(t, (unsigned long long)rec->cpu, 3, false, '0');
	usertp__text_put(t, "] ", 2);
	usertp__text_put_u64(t, usecs / 1000000, 5, false, ' ');
	usertp__text_putc(t, '.');
	usertp__text_put_u64(t, usecs % 1000000, 6, false, '0');
	usertp__text_put(t, ": ", 2);
	name_len = strlen(event->name);
	usertp__text_put(t, event->name, name_len);
	usertp__text_put(t, ": ", 2);
	for (; name_len < 20; name_len++)
		usertp__text_putc(t, ' ');
	if (!usertp__fast_print_info(l->fast, event, rec, t) || t->failed)
		return false;
	len = t->len;
	if (len && t->buf[len - 1] == '\n')
		len--;
	fwrite(t->buf, 1, len, out);
	fputc('\n', out);
	return true;
}

void usertp__report_line_print(FILE *out, struct usertp__report_line *l, struct tep_handle *tep,
			       struct tep_record *rec, const struct usertp__line_style *opt)
{
	static const char spaces[] = "                    ";
	struct tep_event *event = tep_find_event_by_record(tep, rec);
	struct trace_seq *s = &l->seq;
	const char *bad = "";
	int len;

	if (!opt->latency && !opt->raw && !opt->nsec && l->fast && opt->usecs &&
	    print_fast(out, l, tep, event, rec))
		return;
	/*
	 * libtraceevent's way: a plugin's handler may register task names as it prints (the
	 * sched_switch one does), which can move them: the name kept is looked up again.
	 */
	l->comm = NULL;
	trace_seq_reset(s);
	if (rec->missed_events > 0)
		trace_seq_printf(s, "CPU:%d [%lld EVENTS DROPPED]\n", rec->cpu, rec->missed_events);
	else if (rec->missed_events < 0)
		trace_seq_printf(s, "CPU:%d [EVENTS DROPPED]\n", rec->cpu);
	tep_print_event(tep, s, rec, opt->latency ? "%8.8s-%-5d %3d" : "%16s-%-5d [%03d]",
			TEP_PRINT_COMM, TEP_PRINT_PID, TEP_PRINT_CPU);
	if (opt->latency) {
		if (opt->raw)
			trace_seq_printf(s, "-0x%x", tep_data_flags(tep, rec));
		else
			tep_print_event(tep, s, rec, "%s", TEP_PRINT_LATENCY);
	}
	if (!opt->usecs)
		tep_print_event(tep, s, rec, "%12d:", TEP_PRINT_TIME);
	else if (opt->nsec)
		tep_print_event(tep, s, rec, " %9.1d:", TEP_PRINT_TIME);
	else
		tep_print_event(tep, s, rec, " %6.1000d:", TEP_PRINT_TIME);
	/* the name (trace-cmd's "(NULL)" for an id without a format), then spaces to 20 columns */
	trace_seq_printf(s, " %s: ", event ? event->name : "(NULL)");
	len = (int)strlen(event ? event->name : "(NULL)");
	if (len < 20)
		trace_seq_printf(s, "%.*s", 20 - len, spaces);
	if (usertp__tep_record_ok(event, rec->data, rec->size, &bad))
		tep_print_event(tep, s, rec, "%s", opt->raw ? TEP_PRINT_INFO_RAW : TEP_PRINT_INFO);
	else /* (libtraceevent would read where the record does not say) */
		trace_seq_printf(s, "[FIELD %s OUTSIDE THE RECORD]", bad);
	trace_seq_terminate(s);
	len = s->len;
	if (len && s->buffer[len - 1] == '\n')
		len--;
	fwrite(s->buffer, 1, len, out);
	fputc('\n', out);
}

