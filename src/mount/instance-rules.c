/* SPDX-License-Identifier: MIT */
/*
 * instance-rules.c - an instance's rules (instance-private.h): set_event and the enable files,
 * filters and error_log, the pid lists and options, triggers, tracing_on; which records are kept.
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

const struct usertp__instance_option usertp__instance_options[NR_OPTIONS] = {
	[OPT_RECORD_TGID] = { "record-tgid", false },
	[OPT_OVERWRITE] = { "overwrite", true },
	[OPT_IRQ_INFO] = { "irq-info", true },
	[OPT_MARKERS] = { "markers", true },
	[OPT_EVENT_FORK] = { "event-fork", false },
	[OPT_PAUSE_ON_TRACE] = { "pause-on-trace", false },
	/* (the function tracer's: kept and read back, nothing else; trace-cmd record -d sets it) */
	[OPT_FUNCTION_TRACE] = { "function-trace", true },
	/*
	 * The programs' usertp_printk() records (ftrace:bprint, bputs) go to the top level while
	 * it is on, whatever set_event says, as the kernel's trace_printk() (rules_specs()).
	 */
	[OPT_TRACE_PRINTK] = { "trace_printk", true, true },
};

void usertp__inst_trigger_free(struct trigger *tr)
{
	free(tr->filter_text);
	usertp__filter_free(tr->filter);
}

static bool session_records(struct usertp__instance *in, bool tracing);

/*
 * A call of the session that may learn a format into its libtraceevent handle, which the
 * records' text reads: under the instance's tep_lock (instance-private.h).
 */
#define WITH_TEP(in, call)                                                                         \
	({                                                                                         \
		pthread_mutex_lock(&(in)->tep_lock);                                               \
		__typeof__(call) ret_ = (call);                                                    \
		pthread_mutex_unlock(&(in)->tep_lock);                                             \
		ret_;                                                                              \
	})

/* The session's tracing on/off for the instance's @on (session_records() first: it locks). */
static int session_tracing(struct usertp__instance *in, bool on)
{
	bool records = session_records(in, on);

	return WITH_TEP(in, usertp_session_set_tracing(in->session, records));
}

/* --- events ------------------------------------------------------------------------------- */

static bool rules_select(const struct usertp__spec *rules, size_t nr, const char *system,
			 const char *name)
{
	bool on = false;

	for (size_t i = 0; i < nr; i++)
		if (usertp__spec_selects(&rules[i], system, name))
			on = !rules[i].disable;
	return on;
}

/* @system:@name in soft mode (under lock), or NULL. */
static struct soft_event *soft_of(const struct usertp__instance *in, const char *system,
				  const char *name)
{
	for (size_t i = 0; i < in->nr_soft; i++)
		if ((in->soft[i].nr_triggers || in->soft[i].targeted) &&
		    !strcmp(in->soft[i].system, system) && !strcmp(in->soft[i].name, name))
			return &in->soft[i];
	return NULL;
}

/* Are @system:@name's records kept (under lock)?  As the rules say, unless a trigger said. */
static bool event_kept(const struct usertp__instance *in, const struct soft_event *soft,
		       const char *system, const char *name)
{
	if (soft && soft->state)
		return soft->state > 0;
	return rules_select(in->rules, in->nr_rules, system, name);
}

bool usertp__instance_enabled(struct usertp__instance *in, const char *system, const char *name)
{
	bool on;

	pthread_mutex_lock(&in->lock);
	/* (An event in soft mode counts as enabled: set_event lists it, its system reads X.) */
	on = soft_of(in, system, name) || rules_select(in->rules, in->nr_rules, system, name);
	pthread_mutex_unlock(&in->lock);
	return on;
}

const char *usertp__instance_enable_text(struct usertp__instance *in, const char *system,
					 const char *name)
{
	const struct soft_event *soft;
	bool kept;

	pthread_mutex_lock(&in->lock);
	soft = soft_of(in, system, name);
	kept = event_kept(in, soft, system, name);
	pthread_mutex_unlock(&in->lock);
	return soft ? (kept ? "1*\n" : "0*\n") : (kept ? "1\n" : "0\n");
}

/*
 * The rules as the session's comma-separated specs (to free()), or NULL; then the events in
 * soft mode, armed whatever the rules say.
 */
static char *rules_specs(const struct usertp__instance *in, const struct usertp__spec *rules,
			 size_t nr)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out)
		return NULL;
	for (size_t i = 0; i < nr; i++) {
		const struct usertp__spec *r = &rules[i];

		fprintf(out, "%s%s", ftell(out) ? "," : "", r->disable ? "!" : "");
		if (r->either)
			fputs(r->system, out);
		else
			fprintf(out, "%s:%s", r->system[0] ? r->system : "*",
				r->event[0] ? r->event : "*");
	}
	for (size_t i = 0; i < in->nr_soft; i++)
		if (in->soft[i].nr_triggers || in->soft[i].targeted)
			fprintf(out, "%s%s:%s", ftell(out) ? "," : "", in->soft[i].system,
				in->soft[i].name);
	/* ftrace's events are never set_event's; the top level has usertp_printk()'s records. */
	if (ftell(out))
		fputs(",!ftrace:*", out);
	if (!in->name && in->option[OPT_TRACE_PRINTK])
		fprintf(out, "%sftrace:bprint,ftrace:bputs", ftell(out) ? "," : "");
	return fclose(out) ? NULL : text;
}

/* The session's specs from @rules and the events in soft mode (under apply). */
static int session_specs(struct usertp__instance *in, const struct usertp__spec *rules,
			 size_t nr)
{
	char *specs;
	int ret;

	pthread_mutex_lock(&in->lock);
	specs = rules_specs(in, rules, nr);
	pthread_mutex_unlock(&in->lock);
	ret = specs ? WITH_TEP(in, usertp_session_set_specs(in->session, specs)) : -ENOMEM;
	free(specs);
	return ret;
}

int usertp__instance_set_events(struct usertp__instance *in, const struct usertp__spec *spec,
				bool reset)
{
	struct usertp__spec *rules;
	size_t nr = 0;
	int ret;

	pthread_mutex_lock(&in->apply);
	pthread_mutex_lock(&in->lock);
	rules = malloc((in->nr_rules + 1) * sizeof(*rules));
	if (rules && !reset)
		for (size_t i = 0; i < in->nr_rules; i++)
			if (!spec || !usertp__spec_covers(spec, &in->rules[i]))
				rules[nr++] = in->rules[i];
	pthread_mutex_unlock(&in->lock);
	if (!rules) {
		pthread_mutex_unlock(&in->apply);
		return -ENOMEM;
	}
	/* A first rule that disables selects nothing that was on: left out. */
	if (spec && !(spec->disable && !nr))
		rules[nr++] = *spec;
	ret = session_specs(in, rules, nr);
	pthread_mutex_lock(&in->lock);
	if (!ret) {
		free(in->rules);
		in->rules = rules;
		in->nr_rules = nr;
	} else {
		free(rules);
	}
	pthread_mutex_unlock(&in->lock);
	pthread_mutex_unlock(&in->apply);
	return ret;
}

/* --- filters and error_log ------------------------------------------------------------- */

/* The filter file of @system:@name (under lock), or NULL. */
static struct filter_file *filter_file_of(struct usertp__instance *in, const char *system,
					  const char *name)
{
	for (size_t i = 0; i < in->nr_filters; i++)
		if (!strcmp(in->filters[i].system, system) && !strcmp(in->filters[i].name, name))
			return &in->filters[i];
	return NULL;
}

char *usertp__instance_filter_file(struct usertp__instance *in, const char *system, const char *name)
{
	const struct filter_file *f;
	char *text;

	pthread_mutex_lock(&in->lock);
	f = filter_file_of(in, system, name);
	text = strdup(f && f->text ? f->text : "none\n");
	pthread_mutex_unlock(&in->lock);
	return text;
}

/* What the filter file of @system:@name reads from now: @text (taken), NULL for "none". */
static void filter_file_set(struct usertp__instance *in, const char *system, const char *name,
			    char *text)
{
	struct filter_file *f;

	pthread_mutex_lock(&in->lock);
	f = filter_file_of(in, system, name);
	if (!f && text) {
		struct filter_file *more = realloc(in->filters, (in->nr_filters + 1) * sizeof(*more));

		if (more) {
			in->filters = more;
			f = &in->filters[in->nr_filters];
			*f = (struct filter_file){ strdup(system), strdup(name), NULL };
			if (f->system && f->name) {
				in->nr_filters++;
			} else {
				free(f->system);
				free(f->name);
				f = NULL;
			}
		}
	}
	if (f) {
		free(f->text);
		f->text = text;
	} else {
		free(text);
	}
	pthread_mutex_unlock(&in->lock);
}

/* One error_log entry (docs/tracefs.md §13): the oldest goes past ERROR_LOG_MAX. */
static void error_log_add(struct usertp__instance *in, const char *text,
			  const struct usertp__filter_error *err)
{
	struct timespec now;
	char command[USERTP__FILTER_MAX + 64], *entry;

	clock_gettime(CLOCK_MONOTONIC, &now);
	usertp__filter_error_log(text, err, command, sizeof(command));
	if (asprintf(&entry, "[%5llu.%06lu] event filter parse error: error: %s\n%s",
		     (unsigned long long)now.tv_sec, (unsigned long)now.tv_nsec / 1000,
		     err->msg ? err->msg : "Error", command) < 0)
		return;
	pthread_mutex_lock(&in->lock);
	if (in->nr_errors == ERROR_LOG_MAX) {
		free(in->error_log[0]);
		memmove(in->error_log, in->error_log + 1, (ERROR_LOG_MAX - 1) * sizeof(char *));
		in->nr_errors--;
	}
	in->error_log[in->nr_errors++] = entry;
	pthread_mutex_unlock(&in->lock);
}

char *usertp__instance_error_log(struct usertp__instance *in)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out)
		return NULL;
	pthread_mutex_lock(&in->lock);
	for (size_t i = 0; i < in->nr_errors; i++)
		fputs(in->error_log[i], out);
	pthread_mutex_unlock(&in->lock);
	return fclose(out) ? NULL : text;
}

void usertp__instance_clear_error_log(struct usertp__instance *in)
{
	pthread_mutex_lock(&in->lock);
	while (in->nr_errors)
		free(in->error_log[--in->nr_errors]);
	pthread_mutex_unlock(&in->lock);
}

/*
 * A filter file's write as tracefs takes it (§4.2): into @out, with trailing white space
 * removed.  Return: 1 if it removes the filter ("0" between white space), 0, or -EINVAL
 * (4096 bytes or more), -ENOMEM.
 */
static int filter_text(const char *text, size_t len, char **out)
{
	const char *start;

	if (len > USERTP__FILTER_MAX)
		return -EINVAL;
	*out = strndup(text, len);
	if (!*out)
		return -ENOMEM;
	len = strlen(*out);
	while (len && isspace((unsigned char)(*out)[len - 1]))
		(*out)[--len] = 0;
	for (start = *out; isspace((unsigned char)*start); start++)
		;
	return !strcmp(start, "0");
}

/*
 * Compile @text for the event of @format.  Return: 0, a negative errno with @err, or -EIO
 * (a format that does not parse: err->msg NULL).
 */
static int filter_compile(const char *format, const char *text, struct usertp__filter_error *err)
{
	struct usertp__filter_field *fields = NULL;
	struct usertp__filter *f = NULL;
	char *names = NULL;
	int n = usertp__filter_fields_of_format(format, &fields, &names), ret;

	*err = (struct usertp__filter_error){ -EIO, NULL, 0 };
	if (n < 0)
		return -EIO;
	ret = usertp__filter_compile(text, fields, (unsigned int)n, &f, err);
	usertp__filter_free(f);
	free(fields);
	free(names);
	return ret;
}

/* The filter of @system:@name in the session: @text, or none (NULL).  Under apply. */
static int session_filter(struct usertp__instance *in, const char *system, const char *name,
			  const char *text, char *err, size_t errlen)
{
	char spec[2 * USERTP__TFS_TOKEN_MAX + 2];

	snprintf(spec, sizeof(spec), "%s:%s", system, name);
	return WITH_TEP(in, usertp_session_set_filter(in->session, spec, text, err, errlen));
}

int usertp__instance_set_filter(struct usertp__instance *in, const char *system, const char *name,
				const char *format, const char *text, size_t len)
{
	struct usertp__filter_error err;
	char *trimmed, *file = NULL, why[USERTP__FILTER_MAX + 256];
	int ret = filter_text(text, len, &trimmed);

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&in->apply);
	if (ret == 1) {
		ret = session_filter(in, system, name, NULL, why, sizeof(why));
		if (!ret)
			filter_file_set(in, system, name, NULL);
		goto out;
	}
	ret = filter_compile(format, trimmed, &err);
	if (ret == -ENOMEM)
		goto out;
	if (ret) {
		/* Refused: the event has no filter any more, and the file says why (§4.5). */
		usertp__filter_error_file(trimmed, &err, why, sizeof(why));
		session_filter(in, system, name, NULL, NULL, 0);
		filter_file_set(in, system, name, strdup(why));
		error_log_add(in, trimmed, &err);
		goto out;
	}
	ret = session_filter(in, system, name, trimmed, why, sizeof(why));
	if (ret) /* (a program whose event of that name has other fields) */
		file = strdup(why);
	else if (asprintf(&file, "%s\n", trimmed) < 0)
		file = NULL;
	filter_file_set(in, system, name, file);
out:
	pthread_mutex_unlock(&in->apply);
	free(trimmed);
	return ret;
}

int usertp__instance_set_system_filter(struct usertp__instance *in, const char *system,
				       const struct usertp__instance_event *events, size_t nr,
				       const char *text, size_t len)
{
	char *trimmed, *file;
	unsigned int logged = 0;
	int ret = filter_text(text, len, &trimmed);
	bool clear = ret == 1;

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&in->apply);
	for (size_t i = 0; i < nr; i++) {
		struct usertp__filter_error err = { 0, SYSTEM_FILTER_ERROR, 0 };

		if (clear) {
			if (!session_filter(in, system, events[i].name, NULL, NULL, 0))
				filter_file_set(in, system, events[i].name, NULL);
		} else if (!filter_compile(events[i].format, trimmed, &err) &&
			   !session_filter(in, system, events[i].name, trimmed, NULL, 0)) {
			if (asprintf(&file, "%s\n", trimmed) < 0)
				file = NULL;
			filter_file_set(in, system, events[i].name, file);
		} else {
			/* Where it does not compile: no filter, and the caret at 0 whatever the error. */
			err = (struct usertp__filter_error){ -EINVAL, SYSTEM_FILTER_ERROR, 0 };
			session_filter(in, system, events[i].name, NULL, NULL, 0);
			if (asprintf(&file, "%s\n^\nparse_error: %s\n\n", trimmed, SYSTEM_FILTER_ERROR) < 0)
				file = NULL;
			filter_file_set(in, system, events[i].name, file);
			if (logged++ < ERROR_LOG_MAX)
				error_log_add(in, trimmed, &err);
		}
	}
	pthread_mutex_unlock(&in->apply);
	free(trimmed);
	return 0;
}

/* --- pid lists and options ---------------------------------------------------------------- */

/* The session's pid filter from the instance's lists and event-fork (under apply). */
static int session_pids(struct usertp__instance *in, const struct usertp__pid_list *pids,
			const struct usertp__pid_list *notrace, bool event_fork)
{
	return WITH_TEP(in, usertp_session_set_pid_filter(in->session, pids->pids, pids->nr, notrace->pids,
					     notrace->nr, event_fork));
}

/* Is thread @tid there still (a thread id is found in /proc, though not listed there)? */
static bool thread_exists(int tid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d", tid);
	return !access(path, F_OK);
}

/*
 * With event-fork, as the kernel's: the threads written, and those the programs added as
 * listed threads made them, while they exist (a listed thread that exits is taken off).
 */
static int pids_followed(struct usertp__instance *in, struct usertp__pid_list *lists)
{
	struct usertp__pid_list kept = { NULL, 0 };
	int ret;

	pthread_mutex_lock(&in->apply);
	ret = WITH_TEP(in, usertp__session_listed(in->session, &lists[0], &lists[1]));
	pthread_mutex_unlock(&in->apply);
	for (int i = 0; i < 2 && !ret; i++) {
		for (size_t k = 0; k < lists[i].nr && !ret; k++)
			if (thread_exists(lists[i].pids[k]))
				ret = usertp__pid_list_add(&kept, lists[i].pids[k]);
		usertp__pid_list_free(&lists[i]);
		lists[i] = kept;
		kept = (struct usertp__pid_list){ NULL, 0 };
	}
	return ret;
}

char *usertp__instance_pids_text(struct usertp__instance *in, bool notrace)
{
	struct usertp__pid_list lists[2] = { { NULL, 0 }, { NULL, 0 } };
	char *text = NULL;
	bool event_fork;
	int ret = 0;

	pthread_mutex_lock(&in->lock);
	event_fork = in->option[OPT_EVENT_FORK];
	for (int i = 0; i < 2 && !ret; i++)
		ret = usertp__pid_list_copy(&lists[i], &in->pids[i]);
	pthread_mutex_unlock(&in->lock);
	if (!ret && event_fork)
		ret = pids_followed(in, lists);
	if (!ret)
		text = usertp__pid_list_text(&lists[notrace], '\n');
	usertp__pid_list_free(&lists[0]);
	usertp__pid_list_free(&lists[1]);
	return text;
}

int usertp__instance_add_pids(struct usertp__instance *in, bool notrace, const char *text,
			      size_t len, bool clear)
{
	struct usertp__pid_list lists[2] = { { NULL, 0 }, { NULL, 0 } };
	char *copy = strndup(text ? text : "", len);
	bool event_fork;
	int ret = copy ? 0 : -ENOMEM;

	pthread_mutex_lock(&in->apply);
	pthread_mutex_lock(&in->lock);
	for (int i = 0; i < 2 && !ret; i++)
		if (!(clear && i == notrace))
			ret = usertp__pid_list_copy(&lists[i], &in->pids[i]);
	event_fork = in->option[OPT_EVENT_FORK];
	pthread_mutex_unlock(&in->lock);
	if (!ret)
		ret = usertp__pid_list_parse(&lists[notrace], copy, " \t\n\r\v\f");
	if (!ret)
		ret = session_pids(in, &lists[0], &lists[1], event_fork);
	if (!ret) {
		pthread_mutex_lock(&in->lock);
		for (int i = 0; i < 2; i++) {
			usertp__pid_list_free(&in->pids[i]);
			in->pids[i] = lists[i];
			lists[i] = (struct usertp__pid_list){ NULL, 0 };
		}
		pthread_mutex_unlock(&in->lock);
	}
	pthread_mutex_unlock(&in->apply);
	usertp__pid_list_free(&lists[0]);
	usertp__pid_list_free(&lists[1]);
	free(copy);
	return ret;
}

const char *usertp__instance_option_name(const struct usertp__instance *in, unsigned int index)
{
	return index < NR_OPTIONS && (!usertp__instance_options[index].top_only || !in->name)
		       ? usertp__instance_options[index].name
		       : NULL;
}

static int option_index(const struct usertp__instance *in, const char *name)
{
	for (unsigned int i = 0; usertp__instance_option_name(in, i); i++)
		if (!strcmp(usertp__instance_options[i].name, name))
			return (int)i;
	return -EINVAL;
}

int usertp__instance_option(struct usertp__instance *in, const char *name)
{
	int i = option_index(in, name), on;

	if (i < 0)
		return i;
	pthread_mutex_lock(&in->lock);
	on = in->option[i];
	pthread_mutex_unlock(&in->lock);
	return on;
}

int usertp__instance_set_option(struct usertp__instance *in, const char *name, bool on)
{
	int i = option_index(in, name), ret = 0;
	bool was;

	if (i < 0)
		return i;
	pthread_mutex_lock(&in->apply);
	/* event-fork is the programs' (they follow forks and threads), the others are ours. */
	if (i == OPT_EVENT_FORK)
		ret = session_pids(in, &in->pids[0], &in->pids[1], on);
	pthread_mutex_lock(&in->lock);
	was = in->option[i];
	if (!ret)
		in->option[i] = on;
	pthread_mutex_unlock(&in->lock);
	/* trace_printk: the programs' specs (rules_specs()). */
	if (!ret && i == OPT_TRACE_PRINTK && was != on) {
		ret = session_specs(in, in->rules, in->nr_rules);
		if (ret) {
			pthread_mutex_lock(&in->lock);
			in->option[i] = was;
			pthread_mutex_unlock(&in->lock);
		}
	}
	pthread_mutex_unlock(&in->apply);
	return ret;
}

/* --- triggers (docs/tracefs.md §5) --------------------------------------------------------------- */

/* The soft-mode entry of @system:@name, made if need be (under lock), or NULL. */
static struct soft_event *soft_entry(struct usertp__instance *in, const char *system,
				     const char *name)
{
	struct soft_event *more;

	for (size_t i = 0; i < in->nr_soft; i++)
		if (!strcmp(in->soft[i].system, system) && !strcmp(in->soft[i].name, name))
			return &in->soft[i];
	more = realloc(in->soft, (in->nr_soft + 1) * sizeof(*more));
	if (!more)
		return NULL;
	in->soft = more;
	more = &in->soft[in->nr_soft];
	*more = (struct soft_event){ .system = strdup(system), .name = strdup(name) };
	if (!more->system || !more->name) {
		free(more->system);
		free(more->name);
		return NULL;
	}
	in->nr_soft++;
	return more;
}

static bool same_trigger(const struct usertp__tfs_trigger *a, const struct usertp__tfs_trigger *b)
{
	bool a_tracing = a->cmd == USERTP__TFS_TRACEON || a->cmd == USERTP__TFS_TRACEOFF;
	bool b_tracing = b->cmd == USERTP__TFS_TRACEON || b->cmd == USERTP__TFS_TRACEOFF;

	/* traceon and traceoff exclude each other; enable_event and disable_event, per target. */
	if (a_tracing || b_tracing)
		return a_tracing && b_tracing;
	return !strcmp(a->system, b->system) && !strcmp(a->event, b->event);
}

/*
 * Let go of a trigger's target (under lock): out of soft mode with its last trigger, where a
 * trigger that fired leaves it as it made it (an enable_event that fired: enabled), as the
 * kernel's: a rule for it then joins the set_event rules.
 */
static void untarget(struct usertp__instance *in, const struct trigger *tr)
{
	struct usertp__spec *more;
	struct soft_event *target;

	if (tr->t.cmd != USERTP__TFS_ENABLE_EVENT && tr->t.cmd != USERTP__TFS_DISABLE_EVENT)
		return;
	target = soft_entry(in, tr->t.system, tr->t.event);
	if (!target || !target->targeted || --target->targeted || target->nr_triggers)
		return;
	if (target->state && (more = realloc(in->rules, (in->nr_rules + 1) * sizeof(*more)))) {
		in->rules = more;
		more = &in->rules[in->nr_rules++];
		*more = (struct usertp__spec){ .disable = target->state < 0 };
		snprintf(more->system, sizeof(more->system), "%s", target->system);
		snprintf(more->event, sizeof(more->event), "%s", target->name);
	}
	target->state = 0;
}

char *usertp__instance_trigger_file(struct usertp__instance *in, const char *system, const char *name)
{
	const struct soft_event *ev;
	char *text = NULL, line[USERTP__FILTER_MAX + 512];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out)
		return NULL;
	pthread_mutex_lock(&in->lock);
	ev = soft_of(in, system, name);
	if (!ev || !ev->nr_triggers)
		fputs(USERTP__TFS_TRIGGER_HELP, out);
	for (size_t i = ev ? ev->nr_triggers : 0; i-- > 0;) {
		usertp__tfs_trigger_line(&ev->triggers[i].t, ev->triggers[i].filter_text, line,
					 sizeof(line));
		fputs(line, out);
	}
	pthread_mutex_unlock(&in->lock);
	return fclose(out) ? NULL : text;
}

/* Compile @tr's "if" filter against @format.  Return: 0, -EINVAL (error_log says why). */
static int trigger_filter(struct usertp__instance *in, struct trigger *tr, const char *format,
			  const struct usertp__tfs_trigger *t)
{
	struct usertp__filter_field *fields = NULL;
	struct usertp__filter_error err = { -EINVAL, NULL, 0 };
	char *names = NULL;
	int n = usertp__filter_fields_of_format(format, &fields, &names), ret;

	tr->filter_text = strndup(t->filter, t->filter_len);
	ret = !tr->filter_text ? -ENOMEM
	      : n < 0	       ? -EIO
			       : usertp__filter_compile(tr->filter_text, fields, (unsigned int)n,
							&tr->filter, &err);
	free(fields);
	free(names);
	if (!ret || ret == -ENOMEM)
		return ret;
	error_log_add(in, tr->filter_text, &err);
	return -EINVAL; /* (the kernel's word for a trigger's bad filter, whatever the error) */
}

int usertp__instance_set_trigger(struct usertp__instance *in, const char *system, const char *name,
				 const char *format, const struct usertp__tfs_trigger *t)
{
	struct trigger tr = { *t, NULL, NULL };
	struct soft_event *ev, *target = NULL;
	struct trigger *more;
	bool targets = t->cmd == USERTP__TFS_ENABLE_EVENT || t->cmd == USERTP__TFS_DISABLE_EVENT;
	int ret = 0;

	tr.t.filter = NULL;
	/* The filter first: the kernel refuses a bad one before it looks for a duplicate. */
	if (t->filter && !t->remove && (ret = trigger_filter(in, &tr, format, t))) {
		usertp__inst_trigger_free(&tr);
		return ret;
	}
	pthread_mutex_lock(&in->apply);
	pthread_mutex_lock(&in->lock);
	if (targets && !t->remove)
		target = soft_entry(in, t->system, t->event);
	ev = soft_entry(in, system, name);
	if (!ev || (targets && !t->remove && !target)) {
		ret = -ENOMEM;
		goto out;
	}
	if (target) /* (the array may have moved making ev) */
		target = soft_entry(in, t->system, t->event);
	for (size_t i = 0; i < ev->nr_triggers; i++) {
		if (!same_trigger(&ev->triggers[i].t, t))
			continue;
		if (!t->remove) {
			ret = -EEXIST;
			goto out;
		}
		untarget(in, &ev->triggers[i]);
		ev = soft_entry(in, system, name);
		usertp__inst_trigger_free(&ev->triggers[i]);
		memmove(&ev->triggers[i], &ev->triggers[i + 1],
			(ev->nr_triggers - i - 1) * sizeof(*ev->triggers));
		ev->nr_triggers--;
		if (!ev->nr_triggers && !ev->targeted)
			ev->state = 0;
		goto apply;
	}
	if (t->remove)
		goto out; /* (removing one that is not there succeeds, as the kernel's) */
	more = realloc(ev->triggers, (ev->nr_triggers + 1) * sizeof(*more));
	if (!more) {
		ret = -ENOMEM;
		goto out;
	}
	ev->triggers = more;
	ev->triggers[ev->nr_triggers++] = tr;
	tr = (struct trigger){ 0 };
	if (target)
		target->targeted++;
apply:
	pthread_mutex_unlock(&in->lock);
	/* Armed in the programs, and recording while there are triggers. */
	ret = session_specs(in, in->rules, in->nr_rules);
	if (!ret)
		ret = session_tracing(in, in->tracing);
	pthread_mutex_unlock(&in->apply);
	return ret;
out:
	pthread_mutex_unlock(&in->lock);
	pthread_mutex_unlock(&in->apply);
	usertp__inst_trigger_free(&tr);
	return ret;
}

/* --- tracing_on --------------------------------------------------------------------------- */

bool usertp__instance_tracing(struct usertp__instance *in)
{
	bool on;

	pthread_mutex_lock(&in->lock);
	on = in->tracing;
	pthread_mutex_unlock(&in->lock);
	return on;
}

/*
 * Whether the programs record for the instance (under apply): while tracing is on and not
 * paused; and always while it has triggers, which must see their events with tracing off
 * (a traceon trigger) — the pump then keeps nothing while tracing is off.
 */
static bool session_records(struct usertp__instance *in, bool tracing)
{
	bool triggers = false;

	pthread_mutex_lock(&in->lock);
	for (size_t i = 0; i < in->nr_soft; i++)
		triggers |= in->soft[i].nr_triggers != 0;
	pthread_mutex_unlock(&in->lock);
	return triggers || (tracing && !in->paused);
}

int usertp__instance_set_tracing(struct usertp__instance *in, bool on)
{
	int ret;

	pthread_mutex_lock(&in->apply);
	ret = session_tracing(in, on);
	pthread_mutex_lock(&in->lock);
	if (!ret)
		in->tracing = on;
	usertp__inst_wake(in); /* (trace_pipe's readers: end of file once nothing is held) */
	pthread_mutex_unlock(&in->lock);
	pthread_mutex_unlock(&in->apply);
	return ret;
}

void usertp__instance_clock_text(struct usertp__instance *in, FILE *out)
{
	bool tsc = usertp__session_counts_tsc(in->session);
	const char *sep = "";

	pthread_mutex_lock(&in->lock);
	for (unsigned int c = 0; c < USERTP_LIVE_NR; c++) {
		if (c == USERTP_LIVE_X86_TSC && !tsc)
			continue;
		fprintf(out, c == in->clock ? "%s[%s]" : "%s%s", sep, usertp__live_clock_name(c));
		sep = " ";
	}
	pthread_mutex_unlock(&in->lock);
	fputc('\n', out);
}

int usertp__instance_set_clock(struct usertp__instance *in, const char *name)
{
	enum usertp__live_clock c;
	const char *why;
	int ret;

	if (usertp__live_clock_parse(name, usertp__session_counts_tsc(in->session), &c, &why))
		return -EINVAL;
	pthread_mutex_lock(&in->apply);
	ret = WITH_TEP(in, usertp__session_set_clock(in->session, name));
	if (!ret) {
		pthread_mutex_lock(&in->lock);
		in->clock = c;
		pthread_mutex_unlock(&in->lock);
	}
	pthread_mutex_unlock(&in->apply);
	/* (The kernel's clears, even for the same clock.) */
	if (!ret)
		usertp__instance_clear(in, -1);
	return ret;
}

bool usertp__instance_pause(struct usertp__instance *in)
{
	bool pause;

	pthread_mutex_lock(&in->apply);
	pthread_mutex_lock(&in->lock);
	pause = in->option[OPT_PAUSE_ON_TRACE];
	pthread_mutex_unlock(&in->lock);
	if (pause && !in->paused++)
		session_tracing(in, in->tracing);
	pthread_mutex_unlock(&in->apply);
	return pause;
}

void usertp__instance_resume(struct usertp__instance *in)
{
	pthread_mutex_lock(&in->apply);
	if (in->paused && !--in->paused)
		session_tracing(in, in->tracing);
	pthread_mutex_unlock(&in->apply);
}

/* Run @ev's triggers on @rec (under lock). */
static void run_triggers(struct usertp__instance *in, struct soft_event *ev,
			 const struct usertp_record *rec)
{
	for (size_t i = 0; i < ev->nr_triggers; i++) {
		struct trigger *tr = &ev->triggers[i];
		struct usertp__filter_record fr = { rec->data, rec->size, rec->cpu,
						    usertp__inst_comm_get(in, rec->tid) };
		struct soft_event *target;

		if (!tr->t.count || (tr->filter && !usertp__filter_match(tr->filter, &fr)))
			continue;
		if (tr->t.count > 0)
			tr->t.count--;
		switch (tr->t.cmd) {
		case USERTP__TFS_TRACEON:
		case USERTP__TFS_TRACEOFF:
			in->tracing = tr->t.cmd == USERTP__TFS_TRACEON;
			break;
		case USERTP__TFS_ENABLE_EVENT:
		case USERTP__TFS_DISABLE_EVENT:
			target = soft_of(in, tr->t.system, tr->t.event);
			if (target)
				target->state = tr->t.cmd == USERTP__TFS_ENABLE_EVENT ? 1 : -1;
			break;
		}
	}
}

bool usertp__inst_keep_record(struct usertp__instance *in, const struct usertp_record *rec)
{
	struct soft_event *soft;
	bool keep = true, triggers = false;

	if (!rec->event)
		return true;
	pthread_mutex_lock(&in->lock);
	for (size_t i = 0; i < in->nr_soft && !triggers; i++)
		triggers = in->soft[i].nr_triggers != 0;
	soft = triggers ? soft_of(in, rec->event->system, rec->event->name) : NULL;
	if (triggers) {
		bool tracing = in->tracing;

		if (soft)
			keep = event_kept(in, soft, rec->event->system, rec->event->name);
		if (soft && soft->nr_triggers)
			run_triggers(in, soft, rec);
		keep &= tracing && !in->paused;
	}
	pthread_mutex_unlock(&in->lock);
	return keep;
}
