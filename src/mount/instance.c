/* SPDX-License-Identifier: MIT */
/*
 * instance.c - one tracefs instance of usertp mount (instance.h).
 *
 * Two locks: `apply` is held while the session is called (the pump reading it, a setting
 * waiting for the programs), `lock` guards what the files read (the rules, tracing_on, the
 * records, thread names) and is never held across a call to the session.  Order: apply, then
 * lock.
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
#include "tep-check.h"
#include "instance.h"
#include "pid-list.h"
#include "session.h"

/* A session's pages being written are looked at this often (usertp_session_next()). */
#define PUMP_POLL_MS 10
/* A trace_pipe read waiting for records asks whether it was interrupted this often. */
#define PIPE_WAIT_MS 100
/* The kernel's default buffer_size_kb (1408 asked, 1410 read back). */
#define DEFAULT_BUFFER_KB 1410
#define MAX_POLLERS 1024
/* error_log keeps the last 8 errors, as the kernel's. */
#define ERROR_LOG_MAX 8
#define SYSTEM_FILTER_ERROR "Couldn't find or set field in one of a subsystem's events"

/* The options (options/, trace_options), in trace_options's order, and their defaults. */
enum option {
	OPT_RECORD_TGID,
	OPT_OVERWRITE,
	OPT_IRQ_INFO,
	OPT_MARKERS,
	OPT_EVENT_FORK,
	OPT_PAUSE_ON_TRACE,
	OPT_FUNCTION_TRACE,
	NR_OPTIONS
};
static const struct {
	const char *name;
	bool initial;
} options[NR_OPTIONS] = {
	[OPT_RECORD_TGID] = { "record-tgid", false },
	[OPT_OVERWRITE] = { "overwrite", true },
	[OPT_IRQ_INFO] = { "irq-info", true },
	[OPT_MARKERS] = { "markers", true },
	[OPT_EVENT_FORK] = { "event-fork", false },
	[OPT_PAUSE_ON_TRACE] = { "pause-on-trace", false },
	/* (the function tracer's: kept and read back, nothing else; trace-cmd record -d sets it) */
	[OPT_FUNCTION_TRACE] = { "function-trace", true },
};

/* One record held, with its text after the event's name. */
struct held {
	struct held *prev, *next;
	uint64_t ts;
	pid_t tid, pid; /* the thread, and its program (its tgid) */
	unsigned int cpu, bytes;
	const char *flags; /* irq-info's five; NULL: "....." (static) */
	void *raw;	   /* the record, common_type the mount's id (trace_pipe_raw), or NULL */
	unsigned int raw_size;
	char *text; /* "name: payload" */
};

/* The records of one CPU, oldest first, and its counts (per_cpu/cpuN/stats). */
struct cpu_records {
	struct held *head, *tail;
	uint64_t kb;	       /* buffer_size_kb */
	uint64_t bytes, entries;
	uint64_t overrun;      /* overwritten (overwrite on): in entries-written */
	uint64_t dropped;      /* not held: the buffer full (overwrite off), or a program's full */
	uint64_t lost_pending; /* overwritten or lost since trace_pipe last gave a record */
	uint64_t read;	       /* given by trace_pipe */
};

struct comm_entry {
	pid_t tid, tgid; /* (tgid 0: not known) */
	char comm[17];	 /* ("": not known) */
};

/* What an event's filter file reads, when it is not "none". */
struct filter_file {
	char *system, *name;
	char *text; /* the filter and "\n", or the refused text, its caret and the message */
};

/* One trigger of an event (docs/tracefs.md §5). */
struct trigger {
	struct usertp__tfs_trigger t; /* (t.filter unused: filter_text) */
	char *filter_text;
	struct usertp__filter *filter;
};

static void trigger_free(struct trigger *tr)
{
	free(tr->filter_text);
	usertp__filter_free(tr->filter);
}

/*
 * An event in soft mode (it has triggers, or is the target of one): armed in the programs
 * whether enabled or not, its records kept as `state` says.
 */
struct soft_event {
	char *system, *name;
	struct trigger *triggers; /* in the order written (the file lists the newest first) */
	size_t nr_triggers;
	unsigned int targeted;    /* enable_event/disable_event triggers aiming at it */
	int state;		  /* 1: soft-enabled, -1: soft-disabled (a trigger fired), 0: neither */
};

struct usertp__instance {
	char *name;
	pthread_mutex_t apply, lock;
	pthread_cond_t more; /* records came, or tracing changed */
	struct usertp_session *session;
	pthread_t pump;
	atomic_bool stop;

	/* under lock */
	struct usertp__spec *rules;
	size_t nr_rules;
	bool tracing;
	unsigned int paused; /* `trace` files open with pause-on-trace (under apply) */
	bool option[NR_OPTIONS];
	struct usertp__pid_list pids[2]; /* set_event_pid, set_event_notrace_pid */
	unsigned int nr_cpus;
	struct cpu_records *cpus;
	struct comm_entry *comms; /* open addressing by tid; 0: free */
	size_t comms_cap, nr_comms;
	void (*notify)(void *handle);
	unsigned int (*event_id)(const char *system, const char *name);
	/* the pump's: events each program dropped on each CPU, as last counted */
	uint64_t (*seen_dropped)[USERTP__INSTANCE_CPUS];
	unsigned int nr_seen;
	void *pollers[MAX_POLLERS];
	size_t nr_pollers;
	struct filter_file *filters;
	size_t nr_filters;
	struct soft_event *soft; /* (under lock; changed under apply too) */
	size_t nr_soft;
	char *error_log[ERROR_LOG_MAX]; /* oldest first */
	size_t nr_errors;
};

/* (the events' part, further down, which the pump uses) */
static struct soft_event *soft_of(const struct usertp__instance *in, const char *system,
				  const char *name);
static bool event_kept(const struct usertp__instance *in, const struct soft_event *soft,
		       const char *system, const char *name);
static bool session_records(struct usertp__instance *in, bool tracing);

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

/* Under lock. */
static void tgid_put(struct usertp__instance *in, pid_t tid, pid_t tgid)
{
	struct comm_entry *e = tid > 0 ? comm_entry_of(in, tid) : NULL;

	if (e)
		e->tgid = tgid;
}

/* The name of thread @tid as the kernel prints it: "<idle>" for 0, "<...>" if unknown. */
static const char *comm_get(const struct usertp__instance *in, pid_t tid)
{
	const struct comm_entry *e;

	if (!tid)
		return "<idle>";
	if (!in->comms_cap)
		return "<...>";
	e = comm_slot(in->comms, in->comms_cap, tid);
	return e->tid && e->comm[0] ? e->comm : "<...>";
}

static void on_comm(pid_t tid, const char *comm, void *arg)
{
	struct usertp__instance *in = arg;

	pthread_mutex_lock(&in->lock);
	comm_put(in, tid, comm);
	pthread_mutex_unlock(&in->lock);
}

/* --- the records -------------------------------------------------------------------------- */

/* The bytes a record of @size takes in the kernel's buffer: its header, 4-byte aligned. */
static unsigned int record_bytes(unsigned int size)
{
	return 4 + (size > 112 ? 4 : 0) + ((size + 3) & ~3u);
}

static void held_free(struct held *h)
{
	free(h->text);
	free(h->raw);
	free(h);
}

static void held_unlink(struct cpu_records *c, struct held *h)
{
	*(h->prev ? &h->prev->next : &c->head) = h->next;
	*(h->next ? &h->next->prev : &c->tail) = h->prev;
	c->bytes -= h->bytes;
	c->entries--;
	held_free(h);
}

/* A CPU's room: its buffer_size_kb, less the page being written, as the kernel's. */
static uint64_t room(const struct cpu_records *c)
{
	uint64_t pages = c->kb * 1024 / 4080;

	return (pages > 1 ? pages - 1 : 1) * 4080;
}

/* Hold @h (under lock): after the records of its CPU that are not newer. */
static void hold(struct usertp__instance *in, struct held *h)
{
	struct cpu_records *c = &in->cpus[h->cpu];
	struct held *after;

	while (c->bytes + h->bytes > room(c) && c->head) {
		if (!in->option[OPT_OVERWRITE]) {
			c->dropped++;
			held_free(h);
			return;
		}
		held_unlink(c, c->head);
		c->overrun++;
		c->lost_pending++;
	}
	/* (After the evictions, which may have freed the tail.) */
	after = c->tail;
	while (after && after->ts > h->ts)
		after = after->prev;
	h->prev = after;
	h->next = after ? after->next : c->head;
	*(h->next ? &h->next->prev : &c->tail) = h;
	*(after ? &after->next : &c->head) = h;
	c->bytes += h->bytes;
	c->entries++;
}

/* @rec as held, its text made with the session's formats (in the pump, under apply). */
static struct held *held_new(struct usertp__instance *in, const struct usertp_record *rec)
{
	struct held *h = calloc(1, sizeof(*h));
	struct tep_record tr = { .ts = rec->ts, .cpu = (int)rec->cpu, .size = (int)rec->size,
				 .data = (void *)rec->data };
	const char *bad = "";
	struct trace_seq s;

	if (!h)
		return NULL;
	h->ts = rec->ts;
	h->tid = rec->tid;
	h->pid = rec->pid;
	h->cpu = rec->cpu < in->nr_cpus ? rec->cpu : in->nr_cpus - 1;
	h->bytes = record_bytes(rec->size);
	trace_seq_init(&s);
	if (rec->event && !usertp__tep_record_ok(rec->event, rec->data, (int)rec->size, &bad))
		/* (another user's record: libtraceevent would read where it does not say) */
		trace_seq_printf(&s, "%s: [FIELD %s OUTSIDE THE RECORD]", rec->event->name, bad);
	else if (rec->event)
		tep_print_event(usertp_session_tep(in->session), &s, &tr, "%s: %s", TEP_PRINT_NAME,
				TEP_PRINT_INFO);
	else
		trace_seq_printf(&s, "(NULL): (an event whose format its program did not give)");
	trace_seq_terminate(&s);
	h->text = strdup(s.buffer ? s.buffer : "");
	trace_seq_destroy(&s);
	/* The raw record, with the mount's id (the one events/SYS/EV/id says). */
	if (rec->event && rec->size >= 2 && (h->raw = malloc(rec->size))) {
		uint16_t id = (uint16_t)in->event_id(rec->event->system, rec->event->name);

		memcpy(h->raw, rec->data, rec->size);
		memcpy(h->raw, &id, 2);
		h->raw_size = rec->size;
	}
	if (!h->text) {
		held_free(h);
		return NULL;
	}
	return h;
}

/* The CPU whose oldest record is the oldest of all (@only >= 0: of that CPU), or -1. */
static int oldest_cpu(const struct usertp__instance *in, int only)
{
	int best = -1;

	for (unsigned int cpu = 0; cpu < in->nr_cpus; cpu++)
		if (in->cpus[cpu].head && (only < 0 || (unsigned int)only == cpu) &&
		    (best < 0 || in->cpus[cpu].head->ts < in->cpus[best].head->ts))
			best = (int)cpu;
	return best;
}

/* Is there anything for trace_pipe (of CPU @only, or all: -1) (under lock)? */
static bool pipe_has(const struct usertp__instance *in, const struct usertp__pipe_reader *r, int only)
{
	return (r && r->off < r->len) || oldest_cpu(in, only) >= 0;
}

/* Wake what waits on the records (under lock). */
static void wake(struct usertp__instance *in)
{
	pthread_cond_broadcast(&in->more);
	for (size_t i = 0; i < in->nr_pollers; i++)
		in->notify(in->pollers[i]);
	in->nr_pollers = 0;
}

/*
 * What the programs could not record (their buffers full: the pump was behind), from their
 * counters, per CPU: dropped, and said by trace_pipe as lost (in the pump, under apply).
 * Counted here rather than from the records that follow a loss: a loss at the end has none.
 * Return: whether there were any.
 */
static bool count_dropped(struct usertp__instance *in)
{
	unsigned int nr = usertp_session_nr_programs(in->session);
	bool any = false;

	if (nr > in->nr_seen) {
		void *more = realloc(in->seen_dropped, nr * sizeof(*in->seen_dropped));

		if (!more)
			return false;
		in->seen_dropped = more;
		memset(in->seen_dropped + in->nr_seen, 0, (nr - in->nr_seen) * sizeof(*in->seen_dropped));
		in->nr_seen = nr;
	}
	for (unsigned int i = 0; i < nr; i++) {
		struct usertp_cpu_stats st;

		for (unsigned int cpu = 0; cpu < USERTP__INSTANCE_CPUS; cpu++) {
			unsigned int to = cpu < in->nr_cpus ? cpu : in->nr_cpus - 1;
			uint64_t more;

			if (usertp_session_cpu_stats(in->session, i, cpu, &st))
				break;
			if (st.dropped <= in->seen_dropped[i][cpu])
				continue;
			more = st.dropped - in->seen_dropped[i][cpu];
			in->seen_dropped[i][cpu] = st.dropped;
			pthread_mutex_lock(&in->lock);
			in->cpus[to].dropped += more;
			in->cpus[to].lost_pending += more;
			pthread_mutex_unlock(&in->lock);
			any = true;
		}
	}
	return any;
}

/* Run @ev's triggers on @rec (under lock). */
static void run_triggers(struct usertp__instance *in, struct soft_event *ev,
			 const struct usertp_record *rec)
{
	for (size_t i = 0; i < ev->nr_triggers; i++) {
		struct trigger *tr = &ev->triggers[i];
		struct usertp__filter_record fr = { rec->data, rec->size, rec->cpu,
						    comm_get(in, rec->tid) };
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

/*
 * Is @rec to be held?  Its event's triggers run first.  Only records the instance armed for
 * its triggers are left out here (their event not kept, or tracing off while triggers keep
 * the programs recording): others were recorded because the instance asked for them.
 */
static bool keep_record(struct usertp__instance *in, const struct usertp_record *rec)
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

/* The pump: reads the session and holds what it gives. */
/* Take what the session has now into the records held (under apply). */
static void drain(struct usertp__instance *in)
{
	struct usertp_record rec;
	bool any = false;

	/* Programs that joined, their messages and thread names (next() waits for none). */
	usertp_session_process(in->session, 0);
	while (!atomic_load(&in->stop) && usertp_session_next(in->session, &rec, 0) == 1) {
		struct held *h;
		unsigned int cpu = rec.cpu < in->nr_cpus ? rec.cpu : in->nr_cpus - 1;

		if (!keep_record(in, &rec))
			continue;
		h = held_new(in, &rec);
		pthread_mutex_lock(&in->lock);
		tgid_put(in, rec.tid, rec.pid);
		if (h)
			hold(in, h);
		else
			in->cpus[cpu].dropped++;
		pthread_mutex_unlock(&in->lock);
		any = true;
	}
	any |= count_dropped(in);
	if (any) {
		pthread_mutex_lock(&in->lock);
		wake(in);
		pthread_mutex_unlock(&in->lock);
	}
}

static void *pump(void *arg)
{
	struct usertp__instance *in = arg;
	struct pollfd pfd = { usertp_session_fd(in->session), POLLIN, 0 };

	while (!atomic_load(&in->stop)) {
		poll(&pfd, 1, PUMP_POLL_MS);
		pthread_mutex_lock(&in->apply);
		drain(in);
		pthread_mutex_unlock(&in->apply);
	}
	return NULL;
}

void usertp__instance_sync(struct usertp__instance *in)
{
	/* (Never waits: while a setting is being applied, the pump will see to it.) */
	if (pthread_mutex_trylock(&in->apply))
		return;
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
	pthread_cond_init(&in->more, NULL);
	in->tracing = true;
	for (int i = 0; i < NR_OPTIONS; i++)
		in->option[i] = options[i].initial;
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
	usertp__session_mount_mode(in->session, on_comm, in);
	ret = usertp_session_attach_all(in->session);
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
	wake(in); /* (the pollers' handles are let go) */
	pthread_mutex_unlock(&in->lock);
	usertp_session_free(in->session);
	usertp__instance_clear(in, -1);
	free(in->cpus);
	free(in->seen_dropped);
	free(in->comms);
	free(in->rules);
	for (size_t i = 0; i < in->nr_soft; i++) {
		for (size_t k = 0; k < in->soft[i].nr_triggers; k++)
			trigger_free(&in->soft[i].triggers[k]);
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
	pthread_mutex_destroy(&in->apply);
	free(in);
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
	ret = specs ? usertp_session_set_specs(in->session, specs) : -ENOMEM;
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
	return usertp_session_set_filter(in->session, spec, text, err, errlen);
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
	return usertp_session_set_pid_filter(in->session, pids->pids, pids->nr, notrace->pids,
					     notrace->nr, event_fork);
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
	ret = usertp__session_listed(in->session, &lists[0], &lists[1]);
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

const char *usertp__instance_option_name(unsigned int index)
{
	return index < NR_OPTIONS ? options[index].name : NULL;
}

static int option_index(const char *name)
{
	for (int i = 0; i < NR_OPTIONS; i++)
		if (!strcmp(options[i].name, name))
			return i;
	return -EINVAL;
}

int usertp__instance_option(struct usertp__instance *in, const char *name)
{
	int i = option_index(name), on;

	if (i < 0)
		return i;
	pthread_mutex_lock(&in->lock);
	on = in->option[i];
	pthread_mutex_unlock(&in->lock);
	return on;
}

int usertp__instance_set_option(struct usertp__instance *in, const char *name, bool on)
{
	int i = option_index(name), ret = 0;

	if (i < 0)
		return i;
	pthread_mutex_lock(&in->apply);
	/* event-fork is the programs' (they follow forks and threads), the others are ours. */
	if (i == OPT_EVENT_FORK)
		ret = session_pids(in, &in->pids[0], &in->pids[1], on);
	pthread_mutex_lock(&in->lock);
	if (!ret)
		in->option[i] = on;
	pthread_mutex_unlock(&in->lock);
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
		trigger_free(&tr);
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
		trigger_free(&ev->triggers[i]);
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
		ret = usertp_session_set_tracing(in->session, session_records(in, in->tracing));
	pthread_mutex_unlock(&in->apply);
	return ret;
out:
	pthread_mutex_unlock(&in->lock);
	pthread_mutex_unlock(&in->apply);
	trigger_free(&tr);
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
	ret = usertp_session_set_tracing(in->session, session_records(in, on));
	pthread_mutex_lock(&in->lock);
	if (!ret)
		in->tracing = on;
	wake(in); /* (trace_pipe's readers: end of file once nothing is held) */
	pthread_mutex_unlock(&in->lock);
	pthread_mutex_unlock(&in->apply);
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
		usertp_session_set_tracing(in->session, session_records(in, in->tracing));
	pthread_mutex_unlock(&in->apply);
	return pause;
}

void usertp__instance_resume(struct usertp__instance *in)
{
	pthread_mutex_lock(&in->apply);
	if (in->paused && !--in->paused)
		usertp_session_set_tracing(in->session, session_records(in, in->tracing));
	pthread_mutex_unlock(&in->apply);
}

/* --- trace and trace_pipe ----------------------------------------------------------------- */

/* The text of `trace` and `trace_pipe` (trace-lines.h) into @out, as the options lay it out. */
static void tlines_write(void *arg, const char *text, size_t len)
{
	fwrite(text, 1, len, arg);
}

static struct usertp__tlines tlines_of(const struct usertp__instance *in, FILE *out)
{
	return (struct usertp__tlines){ tlines_write, out, in->option[OPT_RECORD_TGID],
					 in->option[OPT_IRQ_INFO] };
}

/* One line of `trace` and `trace_pipe` (docs/tracefs.md §6); a user-space record has no flags. */
static void print_line(const struct usertp__tlines *t, const struct usertp__instance *in,
		       const struct held *h)
{
	usertp__tlines_line(t, comm_get(in, h->tid), (int)h->tid, (int)h->pid, h->cpu, h->flags,
			    h->ts, false, NULL, h->text, true);
}

int usertp__instance_trace_text(struct usertp__instance *in, int only, char **text, size_t *len)
{
	FILE *out = open_memstream(text, len);
	struct usertp__tlines tl;
	struct held **at;
	uint64_t entries = 0, written = 0;

	if (!out)
		return -ENOMEM;
	pthread_mutex_lock(&in->lock);
	at = calloc(in->nr_cpus, sizeof(*at));
	for (unsigned int cpu = 0; cpu < in->nr_cpus; cpu++) {
		if (only >= 0 && (unsigned int)only != cpu)
			continue;
		entries += in->cpus[cpu].entries;
		written += in->cpus[cpu].entries + in->cpus[cpu].overrun;
		if (at)
			at[cpu] = in->cpus[cpu].head;
	}
	tl = tlines_of(in, out);
	usertp__tlines_header(&tl, entries, written, get_nprocs());
	/* Every CPU's records, merged by time. */
	for (;;) {
		int best = -1;

		for (unsigned int cpu = 0; at && cpu < in->nr_cpus; cpu++)
			if (at[cpu] && (best < 0 || at[cpu]->ts < at[best]->ts))
				best = (int)cpu;
		if (best < 0)
			break;
		print_line(&tl, in, at[best]);
		at[best] = at[best]->next;
	}
	pthread_mutex_unlock(&in->lock);
	free(at);
	return fclose(out) || !at ? -ENOMEM : 0;
}

/* Clear CPU @cpu's records and counts (under lock); its size stays. */
static void cpu_clear(struct cpu_records *c)
{
	uint64_t kb = c->kb;

	while (c->head)
		held_unlink(c, c->head);
	*c = (struct cpu_records){ .kb = kb };
}

void usertp__instance_clear(struct usertp__instance *in, int only)
{
	pthread_mutex_lock(&in->lock);
	for (unsigned int cpu = 0; cpu < in->nr_cpus; cpu++)
		if (only < 0 || (unsigned int)only == cpu)
			cpu_clear(&in->cpus[cpu]);
	pthread_mutex_unlock(&in->lock);
}

/* Consume the oldest record into @r's pending text, LOST line first (under lock). */
static int pipe_take(struct usertp__instance *in, struct usertp__pipe_reader *r)
{
	int cpu = oldest_cpu(in, r->cpu);
	struct usertp__tlines tl;
	struct cpu_records *c;
	FILE *out;

	if (cpu < 0)
		return 0;
	c = &in->cpus[cpu];
	free(r->pending);
	r->pending = NULL;
	r->off = 0;
	out = open_memstream(&r->pending, &r->len);
	if (!out)
		return -ENOMEM;
	tl = tlines_of(in, out);
	if (c->lost_pending)
		usertp__tlines_lost(&tl, (unsigned int)cpu, c->lost_pending);
	c->lost_pending = 0;
	c->read++;
	print_line(&tl, in, c->head);
	held_unlink(c, c->head);
	if (fclose(out))
		return -ENOMEM;
	return 1;
}

/*
 * The oldest records of CPU @cpu as one page of the kernel's format, into @r's pending bytes,
 * consuming them (under lock).  Records with no raw form are taken and left out.
 * Return: 1, 0 (nothing held), -ENOMEM.
 */
static int raw_take(struct usertp__instance *in, struct usertp__pipe_reader *r, unsigned int cpu)
{
	struct cpu_records *c = &in->cpus[cpu];
	struct usertp__kpage page = { NULL, 0, 0 };
	uint64_t lost = c->lost_pending;
	bool any = false;

	while (c->head && !c->head->raw) {
		c->read++;
		held_unlink(c, c->head);
	}
	if (!c->head)
		return 0;
	page.data = calloc(1, USERTP__KPAGE_SIZE);
	if (!page.data)
		return -ENOMEM;
	while (c->head) {
		struct held *h = c->head;
		unsigned char *at;

		if (!h->raw) {
			c->read++;
			held_unlink(c, h);
			continue;
		}
		if (!any)
			usertp__kpage_open(&page, page.data, h->ts);
		/* A known lost count goes after the entries, where it fits. */
		at = usertp__kpage_add(&page, h->ts, h->raw_size, USERTP__KPAGE_DATA);
		if (!at && any)
			break;
		if (at) /* (else too big for any page: left out, as the kernel cannot hold it) */
			memcpy(at, h->raw, h->raw_size);
		any |= at != NULL;
		c->read++;
		held_unlink(c, h);
	}
	usertp__kpage_seal(page.data, page.used, lost);
	c->lost_pending = 0;
	free(r->pending);
	r->pending = (char *)page.data;
	r->len = USERTP__KPAGE_SIZE;
	r->off = 0;
	return 1;
}

ssize_t usertp__instance_raw_read(struct usertp__instance *in, struct usertp__pipe_reader *r,
				  char *buf, size_t size, bool nonblock, bool (*interrupted)(void))
{
	size_t n;
	int ret = 0;

	pthread_mutex_lock(&in->lock);
	while (r->off == r->len) {
		struct timespec until;

		ret = raw_take(in, r, (unsigned int)r->cpu);
		if (ret)
			break;
		if (nonblock) {
			ret = -EAGAIN;
			break;
		}
		if (interrupted && interrupted()) {
			ret = -EINTR;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += PIPE_WAIT_MS * 1000000l;
		until.tv_sec += until.tv_nsec / 1000000000;
		until.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&in->more, &in->lock, &until);
	}
	if (ret < 0 && r->off == r->len) {
		pthread_mutex_unlock(&in->lock);
		return ret;
	}
	n = r->len - r->off < size ? r->len - r->off : size;
	memcpy(buf, r->pending + r->off, n);
	r->off += n;
	pthread_mutex_unlock(&in->lock);
	return (ssize_t)n;
}

ssize_t usertp__instance_pipe_read(struct usertp__instance *in, struct usertp__pipe_reader *r,
				   char *buf, size_t size, bool nonblock, bool (*interrupted)(void))
{
	size_t given = 0;
	int ret = 0;

	pthread_mutex_lock(&in->lock);
	while (!pipe_has(in, r, r->cpu)) {
		struct timespec until;

		if (r->gave && !in->tracing)
			goto out; /* end of file (docs/tracefs.md §7) */
		if (nonblock) {
			ret = -EAGAIN;
			goto out;
		}
		if (interrupted && interrupted()) {
			ret = -EINTR;
			goto out;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += PIPE_WAIT_MS * 1000000l;
		until.tv_sec += until.tv_nsec / 1000000000;
		until.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&in->more, &in->lock, &until);
	}
	/* Whole records while they fit; the rest of one that does not, for the next read. */
	while (given < size) {
		size_t n;

		if (r->off == r->len) {
			ret = pipe_take(in, r);
			if (ret <= 0)
				break;
		}
		n = r->len - r->off < size - given ? r->len - r->off : size - given;
		memcpy(buf + given, r->pending + r->off, n);
		r->off += n;
		given += n;
	}
	r->gave |= given > 0;
	if (given)
		ret = 0;
out:
	pthread_mutex_unlock(&in->lock);
	return ret < 0 ? ret : (ssize_t)given;
}

void usertp__pipe_reader_init(struct usertp__pipe_reader *r, int cpu)
{
	*r = (struct usertp__pipe_reader){ .cpu = cpu };
}

void usertp__pipe_reader_free(struct usertp__pipe_reader *r)
{
	free(r->pending);
	usertp__pipe_reader_init(r, r->cpu);
}

bool usertp__instance_poll(struct usertp__instance *in, const struct usertp__pipe_reader *r,
			   void *handle)
{
	bool ready;

	pthread_mutex_lock(&in->lock);
	ready = pipe_has(in, r, r->cpu);
	if (!ready && handle && in->nr_pollers < MAX_POLLERS)
		in->pollers[in->nr_pollers++] = handle;
	else if (handle)
		in->notify(handle); /* (ready, or no room to keep it: the caller looks again) */
	pthread_mutex_unlock(&in->lock);
	return ready;
}

/* --- buffer sizes, per-CPU stats, trace_marker ------------------------------------------- */

unsigned int usertp__instance_nr_cpus(const struct usertp__instance *in)
{
	return in->nr_cpus;
}

char *usertp__instance_buffer_kb_text(struct usertp__instance *in, int only, bool total)
{
	uint64_t sum = 0, first = 0;
	bool same = true;
	char *text;

	pthread_mutex_lock(&in->lock);
	for (unsigned int cpu = 0; cpu < in->nr_cpus; cpu++) {
		if (only >= 0 && (unsigned int)only != cpu)
			continue;
		if (!sum)
			first = in->cpus[cpu].kb;
		same &= in->cpus[cpu].kb == first;
		sum += in->cpus[cpu].kb;
	}
	pthread_mutex_unlock(&in->lock);
	if (total)
		return asprintf(&text, "%llu\n", (unsigned long long)sum) < 0 ? NULL : text;
	return asprintf(&text, same ? "%llu\n" : "X\n", (unsigned long long)first) < 0 ? NULL : text;
}

int usertp__instance_set_buffer_kb(struct usertp__instance *in, int only, uint64_t kb)
{
	if (!kb || kb > USERTP__INSTANCE_MAX_KB)
		return -EINVAL;
	kb = usertp__tfs_buffer_kb(kb);
	pthread_mutex_lock(&in->lock);
	for (unsigned int cpu = 0; cpu < in->nr_cpus; cpu++) {
		struct cpu_records *c = &in->cpus[cpu];

		if (only >= 0 && (unsigned int)only != cpu)
			continue;
		c->kb = kb;
		/* Smaller: the oldest go, as overwritten. */
		while (c->head && c->bytes > room(c)) {
			held_unlink(c, c->head);
			c->overrun++;
			c->lost_pending++;
		}
	}
	pthread_mutex_unlock(&in->lock);
	return 0;
}

char *usertp__instance_stats_text(struct usertp__instance *in, unsigned int cpu)
{
	struct timespec now;
	const struct cpu_records *c;
	char *text;
	int n;

	if (cpu >= in->nr_cpus)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&in->lock);
	c = &in->cpus[cpu];
	n = asprintf(&text,
		     "entries: %llu\noverrun: %llu\ncommit overrun: 0\nbytes: %llu\n"
		     "oldest event ts: %5llu.%06llu\nnow ts: %5llu.%06lu\n"
		     "dropped events: %llu\nread events: %llu\n",
		     (unsigned long long)c->entries, (unsigned long long)c->overrun,
		     (unsigned long long)c->bytes,
		     (unsigned long long)(c->head ? c->head->ts / 1000000000 : 0),
		     (unsigned long long)(c->head ? c->head->ts % 1000000000 / 1000 : 0),
		     (unsigned long long)now.tv_sec, (unsigned long)now.tv_nsec / 1000,
		     (unsigned long long)c->dropped, (unsigned long long)c->read);
	pthread_mutex_unlock(&in->lock);
	return n < 0 ? NULL : text;
}

/* A marker record of thread @tid, now, with @text and @raw_size bytes of raw (to fill). */
static struct held *marker_new(struct usertp__instance *in, pid_t tid, unsigned int raw_size)
{
	struct held *h = calloc(1, sizeof(*h));
	struct timespec now;
	int cpu = sched_getcpu();

	if (!h)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &now);
	h->ts = (uint64_t)now.tv_sec * 1000000000 + (uint64_t)now.tv_nsec;
	h->tid = tid;
	h->pid = tid;
	h->cpu = cpu >= 0 && (unsigned int)cpu < in->nr_cpus ? (unsigned int)cpu : 0;
	h->flags = "...1."; /* (the kernel writes it with preemption off) */
	h->raw_size = raw_size;
	h->raw = calloc(1, raw_size);
	h->bytes = record_bytes(raw_size);
	return h;
}

/* Hold marker @h (and its raw's common fields, event @name of ftrace).  Return: as _mark(). */
static ssize_t marker_hold(struct usertp__instance *in, struct held *h, const char *name,
			   size_t len)
{
	if (h->raw) {
		uint16_t id = (uint16_t)in->event_id("ftrace", name);
		int32_t pid = h->tid;

		memcpy(h->raw, &id, 2);
		memcpy((char *)h->raw + 4, &pid, 4);
	}
	pthread_mutex_lock(&in->lock);
	if (!in->option[OPT_MARKERS] || !in->tracing || in->paused) {
		bool markers = in->option[OPT_MARKERS];

		pthread_mutex_unlock(&in->lock);
		held_free(h);
		return markers ? -EBADF : -EINVAL;
	}
	hold(in, h);
	wake(in);
	pthread_mutex_unlock(&in->lock);
	return (ssize_t)len;
}

ssize_t usertp__instance_mark(struct usertp__instance *in, pid_t tid, const char *buf, size_t len)
{
	struct held *h;

	if (len > USERTP__INSTANCE_MARKER_MAX)
		len = USERTP__INSTANCE_MARKER_MAX;
	/* Raw, as the kernel's ftrace:print: the common fields, ip (0 here), buf and its NUL. */
	h = marker_new(in, tid, 16 + (unsigned int)len + 2);
	/* The text, with the newline the kernel adds when there is none. */
	if (!h || asprintf(&h->text, "tracing_mark_write: %.*s%s", (int)len, buf,
			   len && buf[len - 1] == '\n' ? "" : "\n") < 0) {
		if (h)
			held_free(h);
		return -ENOMEM;
	}
	if (h->raw) {
		memcpy((char *)h->raw + 16, buf, len);
		if (!len || buf[len - 1] != '\n')
			((char *)h->raw)[16 + len] = '\n';
	}
	return marker_hold(in, h, "print", len);
}

ssize_t usertp__instance_mark_raw(struct usertp__instance *in, pid_t tid, const char *buf,
				  size_t len)
{
	/* As the kernel's: the common fields, id, the data, padded to 4 bytes (all printed). */
	size_t data = (len + 3) / 4 * 4 - 4;
	struct held *h;
	uint32_t id;
	char *text;
	size_t at;

	if (len < 4 || len > USERTP__INSTANCE_RAW_MARKER_MAX)
		return -EINVAL;
	memcpy(&id, buf, 4);
	h = marker_new(in, tid, 12 + (unsigned int)data);
	text = h ? malloc(32 + 3 * data) : NULL;
	if (!text) {
		if (h)
			held_free(h);
		return -ENOMEM;
	}
	at = (size_t)sprintf(text, "# %x buf:", id);
	for (size_t i = 0; i < data; i++)
		at += (size_t)sprintf(text + at, " %02x", i < len - 4 ? (unsigned char)buf[4 + i] : 0);
	strcpy(text + at, "\n");
	h->text = text;
	if (h->raw)
		memcpy((char *)h->raw + 8, buf, len);
	return marker_hold(in, h, "raw_data", len);
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
