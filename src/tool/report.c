/* SPDX-License-Identifier: MIT */
/*
 * report.c - usertp report: prints the events of trace.dat files in the lines of
 * `trace-cmd report` (several files merged by time), or with --stat a count per event and
 * the events lost per CPU. Files are read by dat-read.c; libtraceevent formats every line.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "number.h"
#include "trace-dat.h"
#include "private/usertp-consumer-private.h"
#include "report-latency.h"
#include "report-line.h"
#include "report-spans.h"
#include "tool.h"

struct filter_spec {
	const char *text;
	bool negative;			/* given after -v: drops what it matches */
};

struct options {
	struct filter_spec *filters;
	int nr_filters;
	int *cpus;			/* --cpu: CPU numbers in the order given, or NULL */
	int nr_cpus;
	bool stat, latency, nsec, raw;
	struct usertp__latency **pairs;	/* --latency */
	struct usertp__spans *spans;	/* --spans */
	int nr_pairs;
	enum usertp__summary_format format; /* --format */
};

/* Counts of one event for --stat. */
struct event_count {
	struct tep_event *event;
	int id;
	unsigned long count;
};

struct input {
	struct usertp__dat_input *dat;
	const char *label;		/* base name, shown when several files are read */
	struct tep_event_filter **keep, **drop;
	int nr_keep, nr_drop;
	/* --stat */
	unsigned long *cpu_events;
	unsigned long long *cpu_lost; /* ULLONG_MAX: that many or more (a file says anything) */
	bool *cpu_lost_unknown;
	struct event_count *counts;
	int nr_counts;
	struct usertp__report_line line; /* its printer (report-line.h) */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: usertp report [-i FILE]... [--cpu LIST] [-v] [-F FILTER]... [--stat | --latency PAIR... | --spans] [-l] [-t] [-R] [FILE]\n"
		"  -i FILE     a trace.dat file (repeatable: events merged by time; default trace.dat)\n"
		"  --cpu LIST  only these CPUs (\"0,2-3\")\n"
		"  -F FILTER   only events matching the libtraceevent filter: \"event\", \"sys/event\",\n"
		"              \"event: field > 3\", \"sys/event: field == 1 && name ~ \\\"a*\\\"\"\n"
		"  -v          filters given after -v drop the events they match\n"
		"  --stat      events per CPU and per event, and events lost, instead of the events\n"
		"  --latency 'SYS:START.FIELD -> SYS:END.FIELD'  instead of the events, the time from\n"
		"              each START to the END with the same FIELD: count, min, mean, p50, p90,\n"
		"              p99, max, a histogram (repeatable)\n"
		"  --spans     instead of the events, those of <usertp/track.h> summed up: each span's\n"
		"              and async span's durations, each instant's count, each counter's values\n"
		"  --format text|csv|json  --latency's and --spans' output\n"
		"  -l          latency format columns      -t  nanosecond timestamps\n"
		"  -R          raw field values\n");
}

#define MAX_CPU 65535 /* the highest CPU number --cpu takes */

static bool parse_cpu_list(const char *text, struct options *opt)
{
	const char *s = text, *end;
	uint64_t a, b;

	do {
		if (usertp__parse_u64_prefix(s, &end, 0, MAX_CPU, &a))
			return false;
		b = a;
		s = end;
		if (*s == '-') {
			if (usertp__parse_u64_prefix(s + 1, &end, a, MAX_CPU, &b))
				return false;
			s = end;
		}
		for (uint64_t cpu = a; cpu <= b; cpu++) {
			int *cpus = realloc(opt->cpus, (opt->nr_cpus + 1) * sizeof(*cpus));

			if (!cpus)
				return false;
			opt->cpus = cpus;
			opt->cpus[opt->nr_cpus++] = (int)cpu;
		}
		if (*s == ',')
			s++;
		else if (*s)
			return false;
	} while (*s);
	return true;
}

/*
 * Each filter is parsed in each file; one that names nothing in a file matches nothing
 * there. A filter no file can take is an error.
 */
static bool setup_filters(struct input *inputs, int nr_inputs, const struct options *opt)
{
	char msg[256] = "";

	for (int f = 0; f < opt->nr_filters; f++) {
		bool taken = false;

		for (int i = 0; i < nr_inputs; i++) {
			struct input *in = &inputs[i];
			struct tep_handle *tep = usertp__dat_read_tep(in->dat);
			struct tep_event_filter *filter = tep_filter_alloc(tep);
			struct tep_event_filter ***list = opt->filters[f].negative ? &in->drop : &in->keep;
			int *nr = opt->filters[f].negative ? &in->nr_drop : &in->nr_keep;
			struct tep_event_filter **grown;
			enum tep_errno ret;

			if (!filter)
				return false;
			ret = tep_filter_add_filter_str(filter, opt->filters[f].text);
			if (ret < 0) {
				tep_filter_strerror(filter, ret, msg, sizeof(msg));
				tep_filter_free(filter);
				filter = NULL;
			} else {
				taken = true;
			}
			grown = realloc(*list, (*nr + 1) * sizeof(**list));
			if (!grown) {
				tep_filter_free(filter);
				return false;
			}
			*list = grown;
			(*list)[(*nr)++] = filter;
		}
		if (!taken) {
			const char *text = opt->filters[f].text;
			size_t sys = strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");

			/* trace-cmd's -e form: say how filters name events. */
			if (sys && text[sys] == ':' && !strpbrk(text + sys + 1, " =<>!~&|()"))
				usertp__tool_error("report", "filter \"%s\": filters name an event "
						  "\"%.*s/%s\" (or \"%s\"), not \"sys:event\"", text,
						  (int)sys, text, text + sys + 1, text + sys + 1);
			else
				usertp__tool_error("report", "filter \"%s\": %s", text,
						  msg[0] ? msg : "it names no event of the files");
			return false;
		}
	}
	return true;
}

static bool any_filter_matches(struct tep_event_filter **filters, int nr, struct tep_record *rec)
{
	for (int i = 0; i < nr; i++) {
		enum tep_errno ret;

		if (!filters[i])
			continue;
		ret = tep_filter_match(filters[i], rec);
		if (ret == FILTER_MATCH || ret == FILTER_NONE)
			return true;
	}
	return false;
}

/* trace-cmd's rule: kept if no -F or one matches, unless a -v filter matches. */
static bool record_wanted(const struct input *in, struct tep_record *rec)
{
	if (in->nr_keep && !any_filter_matches(in->keep, in->nr_keep, rec))
		return false;
	return !any_filter_matches(in->drop, in->nr_drop, rec);
}

/* Counts from a file may be anything: a sum stops at the largest, never wraps. */
static unsigned long long lost_sum(unsigned long long a, unsigned long long b)
{
	unsigned long long sum;

	return __builtin_add_overflow(a, b, &sum) ? ULLONG_MAX : sum;
}

static void count_lost(struct input *in, int cpu, struct tep_record *rec)
{
	if (!in->cpu_lost)
		return;
	if (rec->missed_events > 0)
		in->cpu_lost[cpu] = lost_sum(in->cpu_lost[cpu],
					     (unsigned long long)rec->missed_events);
	else if (rec->missed_events < 0)
		in->cpu_lost_unknown[cpu] = true;
}

/* The earliest wanted record of a file: CPUs in --cpu order, else by index; ties to the first. */
static struct tep_record *next_record(struct input *in, const struct options *opt, int *cpu_out)
{
	int nr = opt->cpus ? opt->nr_cpus : usertp__dat_read_cpus(in->dat);

	for (;;) {
		struct tep_record *best = NULL, *rec;
		int best_cpu = -1;

		for (int i = 0; i < nr; i++) {
			int cpu = opt->cpus ? opt->cpus[i] : i;

			if (cpu >= usertp__dat_read_cpus(in->dat))
				continue;
			rec = usertp__dat_read_peek(in->dat, cpu);
			if (rec && (!best || rec->ts < best->ts)) {
				best = rec;
				best_cpu = cpu;
			}
		}
		if (!best)
			return NULL;
		count_lost(in, best_cpu, best);
		if (record_wanted(in, best)) {
			*cpu_out = best_cpu;
			return best;
		}
		usertp__dat_read_consume(in->dat, best_cpu);
	}
}

static void print_label(FILE *out, const struct input *in, int width)
{
	if (width)
		fprintf(out, "%*s: ", width, in->label);
}

static void count_event(struct input *in, int cpu, struct tep_record *rec)
{
	struct tep_handle *tep = usertp__dat_read_tep(in->dat);
	int id = tep_data_type(tep, rec);
	struct event_count *c;

	in->cpu_events[cpu]++;
	for (int i = 0; i < in->nr_counts; i++)
		if (in->counts[i].id == id) {
			in->counts[i].count++;
			return;
		}
	c = realloc(in->counts, (in->nr_counts + 1) * sizeof(*c));
	if (!c)
		return;
	in->counts = c;
	in->counts[in->nr_counts++] = (struct event_count){
		.event = tep_find_event(tep, id), .id = id, .count = 1 };
}

static int compare_counts(const void *a, const void *b)
{
	const struct event_count *x = a, *y = b;
	int ret;

	if (!x->event || !y->event)
		return x->event ? -1 : y->event ? 1 : x->id - y->id;
	ret = strcmp(x->event->system, y->event->system);
	return ret ? ret : strcmp(x->event->name, y->event->name);
}

static void print_lost(FILE *out, unsigned long long lost, bool unknown)
{
	fprintf(out, " %11llu%s\n", lost, unknown ? "+" : "");
}

static void print_stat(FILE *out, struct input *in, const struct options *opt, int width)
{
	unsigned long all_events = 0;
	unsigned long long all_lost = 0;
	bool all_unknown = false;
	struct usertp__dat_cpu_stats st;

	print_label(out, in, width);
	fprintf(out, "cpus=%d\n", usertp__dat_read_cpus_shown(in->dat));
	fprintf(out, "CPU      events        lost\n");
	for (int cpu = 0; cpu < usertp__dat_read_cpus(in->dat); cpu++) {
		bool shown = !opt->cpus;

		for (int i = 0; opt->cpus && i < opt->nr_cpus; i++)
			shown |= opt->cpus[i] == cpu;
		if (!shown)
			continue;
		fprintf(out, "%3d %11lu", usertp__dat_read_cpu_id(in->dat, cpu), in->cpu_events[cpu]);
		/* The file's own count when it has one (losses after the last event included). */
		if (usertp__dat_read_cpu_stats(in->dat, usertp__dat_read_cpu_id(in->dat, cpu), &st)) {
			in->cpu_lost[cpu] = lost_sum(st.overrun, st.dropped);
			in->cpu_lost_unknown[cpu] = false;
		}
		print_lost(out, in->cpu_lost[cpu], in->cpu_lost_unknown[cpu]);
		all_events += in->cpu_events[cpu];
		all_lost = lost_sum(all_lost, in->cpu_lost[cpu]);
		all_unknown |= in->cpu_lost_unknown[cpu];
	}
	fprintf(out, "all %11lu", all_events);
	print_lost(out, all_lost, all_unknown);
	if (in->nr_counts)
		qsort(in->counts, in->nr_counts, sizeof(*in->counts), compare_counts);
	fprintf(out, "\n     events  event\n");
	for (int i = 0; i < in->nr_counts; i++) {
		struct event_count *c = &in->counts[i];

		if (c->event)
			fprintf(out, "%11lu  %s:%s\n", c->count, c->event->system, c->event->name);
		else
			fprintf(out, "%11lu  [unknown event id %d]\n", c->count, c->id);
	}
}

static bool alloc_stat(struct input *in)
{
	int cpus = usertp__dat_read_cpus(in->dat) ? usertp__dat_read_cpus(in->dat) : 1;

	in->cpu_events = calloc(cpus, sizeof(*in->cpu_events));
	in->cpu_lost = calloc(cpus, sizeof(*in->cpu_lost));
	in->cpu_lost_unknown = calloc(cpus, sizeof(*in->cpu_lost_unknown));
	return in->cpu_events && in->cpu_lost && in->cpu_lost_unknown;
}

/* --latency: each pair's events and fields found in the files (said when not). */
static bool bind_pairs(struct input *inputs, int nr_inputs, const struct options *opt)
{
	char err[1024];

	for (int k = 0; k < opt->nr_pairs; k++) {
		for (int i = 0; i < nr_inputs; i++)
			if (!usertp__latency_bind(opt->pairs[k], i, usertp__dat_read_tep(inputs[i].dat),
						  usertp__dat_read_name(inputs[i].dat), err, sizeof(err))) {
				usertp__tool_error("report", "%s", err);
				return false;
			}
		if (!usertp__latency_bound(opt->pairs[k], err, sizeof(err))) {
			usertp__tool_error("report", "%s", err);
			return false;
		}
	}
	for (int i = 0; opt->spans && i < nr_inputs; i++)
		usertp__spans_bind(opt->spans, i, usertp__dat_read_tep(inputs[i].dat));
	if (opt->spans && !usertp__spans_bound(opt->spans)) {
		usertp__tool_error("report", "--spans: no events of <usertp/track.h> (usertp:*) in "
				   "the file%s", nr_inputs > 1 ? "s" : "");
		return false;
	}
	return true;
}

/* Prints the inputs (opened) to out; returns the exit status. */
static int report(struct input *inputs, int nr_inputs, const struct options *opt, FILE *out,
		  bool quiet)
{
	int width = 0, status = 0;

	if (nr_inputs > 1)
		for (int i = 0; i < nr_inputs; i++)
			if ((int)strlen(inputs[i].label) > width)
				width = (int)strlen(inputs[i].label);
	if (!setup_filters(inputs, nr_inputs, opt) || !bind_pairs(inputs, nr_inputs, opt))
		return 1;
	for (int i = 0; i < nr_inputs; i++) {
		size_t len;
		const char *text = usertp__dat_read_latency_text(inputs[i].dat, &len);

		if (opt->stat && !alloc_stat(&inputs[i]))
			return 1;
		if (opt->stat || opt->nr_pairs || opt->spans)
			continue;
		print_label(out, &inputs[i], width);
		fprintf(out, "cpus=%d\n", usertp__dat_read_cpus_shown(inputs[i].dat));
		if (text) {
			if (nr_inputs > 1) {
				usertp__tool_error("report", "%s: latency traces cannot be merged with "
						  "other files", usertp__dat_read_name(inputs[i].dat));
				return 1;
			}
			fwrite(text, 1, len, out);
			return 0;
		}
	}

	for (;;) {
		struct tep_record *best = NULL, *rec;
		struct input *from = NULL;
		int best_cpu = -1, cpu;

		for (int i = 0; i < nr_inputs; i++) {
			if (usertp__dat_read_latency_text(inputs[i].dat, &(size_t){ 0 }))
				continue;
			rec = next_record(&inputs[i], opt, &cpu);
			if (rec && (!best || rec->ts < best->ts)) {
				best = rec;
				from = &inputs[i];
				best_cpu = cpu;
			}
		}
		if (!best)
			break;
		if (opt->stat) {
			count_event(from, best_cpu, best);
		} else if (opt->nr_pairs || opt->spans) {
			for (int k = 0; k < opt->nr_pairs; k++)
				usertp__latency_feed(opt->pairs[k], (int)(from - inputs), best);
			if (opt->spans)
				usertp__spans_feed(opt->spans, (int)(from - inputs), best);
		} else {
			struct usertp__line_style style = {
				.latency = opt->latency, .nsec = opt->nsec, .raw = opt->raw,
				.usecs = usertp__dat_read_time_in_usecs(from->dat) };

			print_label(out, from, width);
			usertp__report_line_print(out, &from->line, usertp__dat_read_tep(from->dat),
						  best, &style);
		}
		usertp__dat_read_consume(from->dat, best_cpu);
	}

	if (opt->nr_pairs)
		usertp__latency_print(out, opt->pairs, opt->nr_pairs, opt->format,
				      usertp__dat_read_time_in_usecs(inputs[0].dat));
	if (opt->spans) {
		if (opt->nr_pairs && opt->format == USERTP__SUMMARY_TEXT)
			fputc('\n', out);
		usertp__spans_print(out, opt->spans, opt->format,
				    usertp__dat_read_time_in_usecs(inputs[0].dat));
	}
	for (int i = 0; i < nr_inputs; i++) {
		if (opt->stat) {
			if (i)
				fputc('\n', out);
			print_stat(out, &inputs[i], opt, width);
		}
		for (int cpu = 0; cpu < usertp__dat_read_cpus(inputs[i].dat); cpu++) {
			const char *damage = usertp__dat_read_damage(inputs[i].dat, cpu);

			if (!damage)
				continue;
			if (!quiet)
				usertp__tool_error("report", "%s", damage);
			status = 1;
		}
	}
	return status;
}

static void free_filters(struct tep_event_filter **filters, int nr)
{
	for (int i = 0; i < nr; i++)
		if (filters[i]) /* a filter a file could not take is NULL there */
			tep_filter_free(filters[i]);
	free(filters);
}

static void close_inputs(struct input *inputs, int nr_inputs)
{
	for (int i = 0; i < nr_inputs; i++) {
		struct input *in = &inputs[i];

		free_filters(in->keep, in->nr_keep);
		free_filters(in->drop, in->nr_drop);
		free(in->cpu_events);
		free(in->cpu_lost);
		free(in->cpu_lost_unknown);
		free(in->counts);
		usertp__report_line_free(&in->line);
		usertp__dat_read_close(in->dat);
	}
	free(inputs);
}

enum { OPT_CPU = 256, OPT_STAT, OPT_LATENCY, OPT_FORMAT, OPT_SPANS };

int usertp__cmd_report(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "stat", no_argument, NULL, OPT_STAT },
		{ "latency", required_argument, NULL, OPT_LATENCY },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "spans", no_argument, NULL, OPT_SPANS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct options opt = { 0 };
	const char **files = NULL;
	struct input *inputs = NULL;
	bool negative = false, format_given = false;
	int nr_files = 0, c, status = 2;
	char err[600];

	optind = 1;
	while ((c = getopt_long(argc, argv, "+hi:F:vltR", long_options, NULL)) != -1) {
		void *grown;

		switch (c) {
		case 'h':
			usage(stdout);
			status = 0;
			goto out;
		case 'i':
			grown = realloc(files, (nr_files + 1) * sizeof(*files));
			if (!grown)
				goto out;
			files = grown;
			files[nr_files++] = optarg;
			break;
		case 'F':
			grown = realloc(opt.filters, (opt.nr_filters + 1) * sizeof(*opt.filters));
			if (!grown)
				goto out;
			opt.filters = grown;
			opt.filters[opt.nr_filters++] = (struct filter_spec){ optarg, negative };
			break;
		case 'v':
			negative = true;
			break;
		case 'l':
			opt.latency = true;
			break;
		case 't':
			opt.nsec = true;
			break;
		case 'R':
			opt.raw = true;
			break;
		case OPT_CPU:
			if (!parse_cpu_list(optarg, &opt)) {
				usertp__tool_error("report", "--cpu %s: not a list of CPU numbers from 0 "
						  "to %d (\"0,2-3\")", optarg, MAX_CPU);
				goto out;
			}
			break;
		case OPT_STAT:
			opt.stat = true;
			break;
		case OPT_LATENCY: {
			struct usertp__latency *pair = usertp__latency_parse(optarg, err, sizeof(err));

			grown = pair ? realloc(opt.pairs, (opt.nr_pairs + 1) * sizeof(*opt.pairs)) : NULL;
			if (!grown) {
				usertp__tool_error("report", "%s", pair ? "out of memory" : err);
				usertp__latency_free(pair);
				goto out;
			}
			opt.pairs = grown;
			opt.pairs[opt.nr_pairs++] = pair;
			break;
		}
		case OPT_SPANS:
			if (!opt.spans && !(opt.spans = usertp__spans_new()))
				goto out;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "text"))
				opt.format = USERTP__SUMMARY_TEXT;
			else if (!strcmp(optarg, "csv"))
				opt.format = USERTP__SUMMARY_CSV;
			else if (!strcmp(optarg, "json"))
				opt.format = USERTP__SUMMARY_JSON;
			else {
				usertp__tool_error("report", "--format %s: text, csv or json", optarg);
				goto out;
			}
			format_given = true;
			break;
		default:
			usertp__tool_bad_option("report", "+hi:F:vltR", argv);
			goto out;
		}
	}
	if (opt.stat && (opt.nr_pairs || opt.spans)) {
		usertp__tool_error("report", "--stat or --%s: one of them", opt.spans ? "spans" : "latency");
		goto out;
	}
	if (format_given && !opt.nr_pairs && !opt.spans) {
		usertp__tool_error("report", "--format: the output of --latency and --spans (give one)");
		goto out;
	}
	if (optind < argc - 1 || (optind == argc - 1 && nr_files)) {
		usage(stderr);
		goto out;
	}
	if (optind == argc - 1 || !nr_files) {
		files = realloc(files, sizeof(*files));
		if (!files)
			goto out;
		files[0] = optind == argc - 1 ? argv[optind] : "trace.dat";
		nr_files = 1;
	}

	inputs = calloc(nr_files, sizeof(*inputs));
	if (!inputs)
		goto out;
	status = 1;
	for (int i = 0; i < nr_files; i++) {
		const char *slash = strrchr(files[i], '/');

		inputs[i].label = slash ? slash + 1 : files[i];
		inputs[i].dat = usertp__dat_read_open(files[i], err, sizeof(err));
		if (!inputs[i].dat) {
			usertp__tool_error("report", "%s", err);
			close_inputs(inputs, i);
			inputs = NULL;
			goto out;
		}
		/* (USERTP_REPORT_LIBTRACEEVENT=1: every line through libtraceevent, to compare) */
		usertp__report_line_init(&inputs[i].line, !getenv("USERTP_REPORT_LIBTRACEEVENT"));
	}
	status = report(inputs, nr_files, &opt, stdout, false);
	if (fflush(stdout) || ferror(stdout)) {
		usertp__tool_error("report", "writing the output failed");
		status = 1;
	}
	close_inputs(inputs, nr_files);
out:
	free(files);
	free(opt.filters);
	free(opt.cpus);
	for (int k = 0; k < opt.nr_pairs; k++)
		usertp__latency_free(opt.pairs[k]);
	usertp__spans_free(opt.spans);
	free(opt.pairs);
	return status;
}

int usertp_report_fuzz_one(const uint8_t *data, size_t size)
{
	static const struct options plain = { 0 }, stat = { .stat = true };
	FILE *out = fopen("/dev/null", "w");
	char err[600];

	if (!out)
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		struct input *in = calloc(1, sizeof(*in));
		bool opened;

		if (!in)
			break;
		in->label = "fuzz.dat";
		in->dat = usertp__dat_read_open_mem("fuzz.dat", data, size, err, sizeof(err));
		opened = in->dat;
		if (opened) {
			usertp__report_line_init(&in->line, true);
			report(in, 1, pass ? &stat : &plain, out, true);
		}
		close_inputs(in, opened);
		if (!opened)
			break;
	}
	fclose(out);
	return 0;
}
