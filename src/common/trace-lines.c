/* SPDX-License-Identifier: MIT */
/*
 * trace-lines.c - the kernel's `trace` text: header, legend, record lines, LOST lines
 * (trace-lines.h).  Async-signal-safe: snprintf into the stack, then the callback.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "trace-lines.h"

static void put(const struct usertp__tlines *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put(const struct usertp__tlines *o, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		o->write(o->arg, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void put_text(const struct usertp__tlines *o, const char *text)
{
	o->write(o->arg, text, strlen(text));
}

void usertp__tlines_header(const struct usertp__tlines *o, uint64_t entries, uint64_t written,
			   int nr_online)
{
	static const char *const flags[] = {
		"_-----=> irqs-off/BH-disabled", "/ _----=> need-resched", "| / _---=> hardirq/softirq",
		"|| / _--=> preempt-depth", "||| / _-=> migrate-disable", "|||| /     delay",
	};
	static const int indent[] = { 32, 31, 30, 30, 30, 30 };
	const char *tgid = o->tgid ? "   TGID   " : "", *tgid_bar = o->tgid ? "     |    " : "";

	put(o, "# tracer: nop\n#\n# entries-in-buffer/entries-written: %llu/%llu   #P:%d\n#\n",
	    (unsigned long long)entries, (unsigned long long)written, nr_online);
	if (!o->irq_info) {
		put(o, "#           TASK-PID    %s CPU#     TIMESTAMP  FUNCTION\n"
		       "#              | |      %s   |         |         |\n",
		    tgid, tgid_bar);
		return;
	}
	for (int i = 0; i < 6; i++)
		put(o, "#%*s%s\n", indent[i] + (o->tgid ? 10 : 0), "", flags[i]);
	put(o, "#           TASK-PID    %s CPU#  |||||  TIMESTAMP  FUNCTION\n"
	       "#              | |      %s   |   |||||     |         |\n",
	    tgid, tgid_bar);
}

void usertp__tlines_line(const struct usertp__tlines *o, const char *comm, int tid, int tgid,
			 unsigned int cpu, const char *flags, uint64_t ts, bool raw_clock,
			 const char *name, const char *text, bool keep_break)
{
	size_t len = strlen(text);

	put(o, "%16s-%-7d ", comm, tid);
	if (o->tgid)
		put(o, "(%7d) ", tgid);
	put(o, "[%03u] %s ", cpu, o->irq_info ? (flags ? flags : ".....") : "");
	if (raw_clock)
		put(o, "%12llu: ", (unsigned long long)ts);
	else
		put(o, "%5llu.%06llu: ", (unsigned long long)(ts / 1000000000ull),
		    (unsigned long long)(ts % 1000000000ull / 1000));
	if (name) {
		put_text(o, name);
		put_text(o, ": ");
	}
	o->write(o->arg, text, len);
	if (!keep_break || !len || text[len - 1] != '\n')
		put_text(o, "\n");
}

void usertp__tlines_lost(const struct usertp__tlines *o, unsigned int cpu, uint64_t n)
{
	put(o, "CPU:%u [LOST %llu EVENTS]\n", cpu, (unsigned long long)n);
}
