/* SPDX-License-Identifier: MIT */
/*
 * test-merge - usertp__merge_write() (src/tool/dat-merge.c) on real recordings, checked against
 * trace-cmd.
 *
 * Programs linked with libusertp record themselves into trace.dat files (the embedded
 * recorder); this driver cuts each file back into what `usertp record` hands the merge: per
 * CPU a spool of whole pages, and the event formats with the program's own ids.  The merged
 * file must then print in `trace-cmd report` the same event lines as `trace-cmd report -i a.dat
 * -i b.dat ...` of the inputs, per CPU, with the same [N EVENTS DROPPED] marks before the same
 * events, and the merge's counts must match what trace-cmd prints.
 *
 *	test-merge merge WORKER-POOL DAT-FIRE	three programs at once (two of them losing
 *						events), their ids colliding; one source that
 *						does not declare an event it recorded; clock x86-tsc
 *	test-merge corrupt WORKER-POOL DAT-FIRE	spools with damaged pages, cut short, unreadable
 *	test-merge enospc WORKER-POOL DAT-FIRE	the output on a 256 KiB tmpfs (root only), and an
 *						output that cannot be written at all
 *	test-merge pages WORKER-POOL DAT-FIRE	hand-made pages with every kind of kernel entry,
 *						merged with themselves (equal timestamps)
 *	test-merge adopt WORKER-POOL DAT-FIRE	a recording's pages taken as the file's where
 *						they are (usertp record's direct file), and
 *						the cases where they cannot be
 *	test-merge forms FILE			per CPU, the pages as written and as merged
 *	test-merge spool-bytes [--cached] DIR...	the bytes of pages spool directories hold
 *						(--cached: of those, the bytes in the page cache)
 *
 * Exit status 77 (skipped) where trace-cmd is missing, and for enospc when not root.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dat-merge.h"
#include "ring-buffer.h"
#include "spool.h"
#include "trace-dat.h"

#include "../harness.h"

#define MAX_SOURCES 4
#define MAX_CPUS 256

static char dir[64];
static const char *pool_prog, *fire_prog;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void run(const char *cmd)
{
	if (system(cmd))
		fprintf(stderr, "test-merge: '%s' failed\n", cmd);
}

/* A trace.dat file, version 6, as the recorder writes it: what the merge needs of it. */
struct dat {
	unsigned char *buf;
	size_t size;
	unsigned int nr_events, nr_cpus;
	struct usertp__merge_event events[64];
	char *cmdlines;
	size_t cmdlines_len;
	uint64_t cpu_offset[MAX_CPUS], cpu_size[MAX_CPUS];
};

struct cursor {
	const unsigned char *p, *end;
};

static const void *take(struct cursor *c, size_t n)
{
	const unsigned char *p = c->p;

	if ((size_t)(c->end - c->p) < n) {
		fprintf(stderr, "test-merge: trace.dat cut short\n");
		exit(1);
	}
	c->p += n;
	return p;
}

static uint64_t take_u(struct cursor *c, size_t n)
{
	uint64_t v = 0;

	memcpy(&v, take(c, n), n);
	return v;
}

static const char *take_str(struct cursor *c)
{
	const char *s = (const char *)c->p;

	take(c, strnlen(s, (size_t)(c->end - c->p)) + 1);
	return s;
}

/* A NUL-terminated copy of the next @n bytes. */
static char *take_text(struct cursor *c, size_t n)
{
	char *s = malloc(n + 1);

	if (!s)
		die("malloc");
	memcpy(s, take(c, n), n);
	s[n] = 0;
	return s;
}

static void *read_file(const char *path, size_t *size)
{
	struct stat st;
	unsigned char *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		die(path);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size)
		die(path);
	close(fd);
	*size = (size_t)st.st_size;
	return buf;
}

static void dat_load(struct dat *d, const char *path)
{
	struct cursor c;
	unsigned int i, j, n, nr_systems;

	memset(d, 0, sizeof(*d));
	d->buf = read_file(path, &d->size);
	c = (struct cursor){ d->buf, d->buf + d->size };
	if (memcmp(take(&c, 12), "\x17\x08\x44tracing6", 12) || take_u(&c, 1) || take_u(&c, 1) != 8 ||
	    take_u(&c, 4) != USERTP__KPAGE_SIZE) {
		fprintf(stderr, "test-merge: %s: not a little-endian v6 file of 4 KiB pages\n", path);
		exit(1);
	}
	take_str(&c); /* header_page */
	take(&c, take_u(&c, 8));
	take_str(&c); /* header_event */
	take(&c, take_u(&c, 8));
	for (n = (unsigned int)take_u(&c, 4); n--;) /* ftrace formats */
		take(&c, take_u(&c, 8));
	nr_systems = (unsigned int)take_u(&c, 4);
	for (i = 0; i < nr_systems; i++) {
		const char *system = take_str(&c);

		for (n = (unsigned int)take_u(&c, 4); n--;) {
			struct usertp__merge_event *e = &d->events[d->nr_events++];
			char *format = take_text(&c, take_u(&c, 8)), *id = strstr(format, "\nID: ");

			if (d->nr_events == 64 || !id)
				exit(1);
			*e = (struct usertp__merge_event){ (unsigned int)atoi(id + 5), system, format };
		}
	}
	take(&c, take_u(&c, 4)); /* kallsyms */
	take(&c, take_u(&c, 4)); /* printk formats */
	d->cmdlines_len = take_u(&c, 8);
	d->cmdlines = (char *)take(&c, d->cmdlines_len);
	d->nr_cpus = (unsigned int)take_u(&c, 4);
	if (d->nr_cpus > MAX_CPUS || memcmp(take(&c, 10), "options  ", 10))
		exit(1);
	while ((j = (unsigned int)take_u(&c, 2)))
		take(&c, take_u(&c, 4));
	if (memcmp(take(&c, 10), "flyrecord", 10))
		exit(1);
	for (i = 0; i < d->nr_cpus; i++) {
		d->cpu_offset[i] = take_u(&c, 8);
		d->cpu_size[i] = take_u(&c, 8);
		if (d->cpu_offset[i] > d->size || d->cpu_size[i] > d->size - d->cpu_offset[i])
			exit(1);
	}
}

/* A recording cut into what the merge takes: per CPU a spool file of its pages. */
struct spooled {
	struct dat dat;
	int fd[MAX_CPUS];
	struct usertp__merge_source src;
};

static int spool_file(const void *data, size_t size)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "%s/spool-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0 || unlink(path) || write(fd, data, size) != (ssize_t)size)
		die("spool");
	return fd;
}

static void spool(struct spooled *s, const char *path, const char *name)
{
	unsigned int i;

	dat_load(&s->dat, path);
	for (i = 0; i < s->dat.nr_cpus; i++)
		s->fd[i] = spool_file(s->dat.buf + s->dat.cpu_offset[i], s->dat.cpu_size[i]);
	s->src = (struct usertp__merge_source){ .name = name,
					       .events = s->dat.events,
					       .nr_events = s->dat.nr_events,
					       .nr_cpus = s->dat.nr_cpus,
					       .cpu_fd = s->fd };
}

static void unspool(struct spooled *s)
{
	unsigned int i;

	for (i = 0; i < s->dat.nr_cpus; i++)
		close(s->fd[i]);
	for (i = 0; i < s->dat.nr_events; i++)
		free((char *)s->dat.events[i].format);
	free(s->dat.buf);
}

static struct usertp__merge_stats stats;
static char cmdlines[1 << 16];
static char err[256];

/* Merge @n spooled recordings into @out; return what usertp__merge_write() did. */
/* The format merge() writes: version 6, 7, or 7 with zstd (a mode's "-v7", "-v7-zstd"). */
static unsigned int dat_version = 6;
static bool dat_zstd;

static int merge(const char *out, struct spooled **s, unsigned int n, bool raw_clock)
{
	struct usertp__merge_source sources[MAX_SOURCES];
	struct usertp__merge_input in = { .sources = sources, .nr_sources = n, .cmdlines = cmdlines,
					  .raw_clock = raw_clock, .file_version = dat_version,
					  .compress = dat_zstd };
	unsigned int i;
	int fd, ret;

	for (i = 0; i < n; i++) {
		sources[i] = s[i]->src;
		if (s[i]->dat.nr_cpus > in.nr_cpus)
			in.nr_cpus = s[i]->dat.nr_cpus;
		if (in.cmdlines_len + s[i]->dat.cmdlines_len > sizeof(cmdlines))
			exit(1);
		memcpy(cmdlines + in.cmdlines_len, s[i]->dat.cmdlines, s[i]->dat.cmdlines_len);
		in.cmdlines_len += s[i]->dat.cmdlines_len;
	}
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(out);
	ret = usertp__merge_write(fd, &in, &stats, err, sizeof(err));
	close(fd);
	return ret;
}

static uint64_t total(const uint64_t *per_cpu)
{
	uint64_t sum = 0;

	for (unsigned int i = 0; i < USERTP_MERGE_MAX_CPUS; i++)
		sum += per_cpu[i];
	return sum;
}

/*
 * Our own reading of a merged file, page by page with the ring buffer's checked iterator:
 * every page parses, timestamps never go back on a CPU, every record has a declared id.
 * Return: the number of records.
 */
static uint64_t check_pages(const char *path)
{
	static struct usertp__rb_page_copy page;
	struct dat d;
	uint64_t n = 0;
	unsigned int cpu, p;
	char v6[256], cmd[600];

	if (dat_version == 7) {
		/* Its pages as trace-cmd reads them: converted by it to version 6. */
		snprintf(v6, sizeof(v6), "%s/converted-v6.dat", dir); /* (not on a full disk) */
		snprintf(cmd, sizeof(cmd),
			 "trace-cmd convert -i %s -o %s --file-version 6 --compression none "
			 ">/dev/null 2>&1", path, v6);
		if (system(cmd)) {
			FAIL("%s: trace-cmd convert failed", path);
			return UINT64_MAX;
		}
		path = v6;
	}
	dat_load(&d, path);
	for (cpu = 0; cpu < d.nr_cpus; cpu++) {
		uint64_t last = 0;

		if (d.cpu_size[cpu] % USERTP__KPAGE_SIZE)
			FAIL("%s: CPU %u has %" PRIu64 " bytes, not whole pages", path, cpu, d.cpu_size[cpu]);
		for (p = 0; p < d.cpu_size[cpu] / USERTP__KPAGE_SIZE; p++) {
			struct usertp__kpage_iter it;
			struct usertp__kpage_entry e;
			uint64_t commit;
			int ret;

			memcpy(page.data, d.buf + d.cpu_offset[cpu] + (size_t)p * USERTP__KPAGE_SIZE,
			       USERTP__KPAGE_SIZE);
			memcpy(&commit, page.data + 8, 8);
			page.used = (uint32_t)(commit & ~(3ull << 30));
			if (page.used > USERTP__KPAGE_DATA) {
				FAIL("%s: CPU %u page %u: commit %#" PRIx64, path, cpu, p, commit);
				continue;
			}
			usertp__kpage_iter_init(&it, page.data, page.used);
			while ((ret = usertp__kpage_iter_next(&it, &e)) == 1) {
				uint16_t id;
				unsigned int i;

				memcpy(&id, e.data, 2);
				for (i = 0; i < d.nr_events && d.events[i].id != id; i++)
					;
				if (i == d.nr_events)
					FAIL("%s: CPU %u page %u: a record of id %u, not in the file", path, cpu, p, id);
				if (e.ts < last)
					FAIL("%s: CPU %u page %u: time goes back", path, cpu, p);
				last = e.ts;
				n++;
			}
			if (ret)
				FAIL("%s: CPU %u page %u does not parse", path, cpu, p);
		}
	}
	for (unsigned int i = 0; i < d.nr_events; i++)
		free((char *)d.events[i].format);
	free(d.buf);
	return n;
}

/* Merge @n recordings into DIR/m.dat (@path), which must succeed and parse page by page with
 * the number of records the merge counted; @what names the case in harness_failed. */
static void merge_checked(char *path, size_t size, struct spooled **s, unsigned int n,
			  const char *what)
{
	int ret;

	snprintf(path, size, "%s/m.dat", dir);
	ret = merge(path, s, n, false);
	if (ret)
		FAIL("%s: %d (%s)", what, ret, err);
	if (check_pages(path) != total(stats.events))
		FAIL("%s: the pages hold another number of records than counted", what);
}

/* What trace-cmd report prints: per line, its CPU, and whether it is a drop mark. */
struct line {
	char *text; /* without the "FILE: " prefix of a report of several files */
	int cpu;
	bool drop;
	uint64_t dropped; /* N of "[N EVENTS DROPPED]" */
};

/* The "[CPU]" column of an event line; where it ends. */
static const char *line_cpu(const char *text, int *cpu)
{
	const char *q;

	for (q = strchr(text, '['); q; q = strchr(q + 1, '['))
		if (q[1] >= '0' && q[1] <= '9' && q[2] >= '0' && q[2] <= '9' && q[3] >= '0' &&
		    q[3] <= '9' && q[4] == ']') {
			*cpu = atoi(q + 1);
			return q + 5;
		}
	return NULL;
}

struct report {
	struct line *lines;
	size_t nr;
	bool failed;
};

static void report(struct report *r, const char *args)
{
	char cmd[512], *text = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;

	memset(r, 0, sizeof(*r));
	snprintf(cmd, sizeof(cmd), "cd %s && trace-cmd report %s 2>report.err", dir, args);
	f = popen(cmd, "r");
	if (!f)
		die("popen");
	while ((len = getline(&text, &cap, f)) > 0) {
		struct line l = { 0 };
		char *p = text, *q;

		text[len - 1] = 0;
		/* "a.dat: ..." when several files are given */
		q = strstr(p, ".dat: ");
		if (q && !memchr(p, ' ', (size_t)(q - p)))
			p = q + 6;
		if (!strncmp(p, "cpus=", 5) || !*p)
			continue;
		if (!strncmp(p, "CPU:", 4)) {
			l.cpu = atoi(p + 4);
			l.drop = true;
			q = strchr(p, '[');
			l.dropped = q ? strtoull(q + 1, NULL, 10) : 0;
		} else if (!line_cpu(p, &l.cpu)) {
			FAIL("trace-cmd report %s: unexpected line '%s'", args, p);
			continue;
		}
		if (strstr(p, "FAILED TO PARSE") || strstr(p, "UNKNOWN EVENT"))
			FAIL("trace-cmd report %s: '%s'", args, p);
		l.text = strdup(p);
		r->lines = realloc(r->lines, (r->nr + 1) * sizeof(*r->lines));
		if (!r->lines || !l.text)
			die("realloc");
		r->lines[r->nr++] = l;
	}
	r->failed = pclose(f) != 0;
	snprintf(cmd, sizeof(cmd), "%s/report.err", dir);
	f = fopen(cmd, "r");
	if (f && (len = getline(&text, &cap, f)) > 0) {
		FAIL("trace-cmd report %s said: %s", args, text);
		r->failed = true;
	}
	if (f)
		fclose(f);
	free(text);
}

static void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nr; i++)
		free(r->lines[i].text);
	free(r->lines);
}

/* The timestamp column of an event line, for ordering. */
static double line_ts(const struct line *l)
{
	int cpu;
	const char *q = line_cpu(l->text, &cpu);

	return q ? strtod(q, NULL) : 0;
}

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = *(const struct line *const *)a, *y = *(const struct line *const *)b;
	double tx = line_ts(x), ty = line_ts(y);

	return tx < ty ? -1 : tx > ty ? 1 : strcmp(x->text, y->text);
}

/* One CPU's event lines (drop marks apart), ordered by time then text: ties may differ. */
static size_t cpu_lines(const struct report *r, int cpu, const struct line ***out)
{
	const struct line **v = malloc((r->nr + 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		die("malloc");
	for (size_t i = 0; i < r->nr; i++)
		if (r->lines[i].cpu == cpu && !r->lines[i].drop)
			v[n++] = &r->lines[i];
	qsort(v, n, sizeof(*v), cmp_line);
	*out = v;
	return n;
}

/* After a failure: the files compared, in the directory kept. */
static void keep_files(const char *what)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cd %s && mkdir -p 'failed %s' && cp *.dat 'failed %s'/", dir,
		 what, what);
	run(cmd);
}

/*
 * @ours (the merged file) prints what @theirs (the inputs together) prints, per CPU, except
 * the lines of event @left_out; drop marks before the same lines.  Checks the stats too.
 * Return: the number of drop marks.
 */
static uint64_t compare(const char *what, const struct report *ours, const struct report *theirs,
		    unsigned int nr_cpus, const char *left_out)
{
	uint64_t lost[MAX_CPUS] = { 0 }, marks = 0, found = 0;
	int failed = harness_failed;
	unsigned int cpu;
	size_t i, j;

	if (ours->failed || theirs->failed)
		FAIL("%s: trace-cmd report failed", what);
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		const struct line **a, **b;
		size_t na = cpu_lines(ours, (int)cpu, &a), nb = cpu_lines(theirs, (int)cpu, &b);

		for (i = j = 0; j < nb; j++) {
			if (left_out && strstr(b[j]->text, left_out))
				continue;
			if (i == na || strcmp(a[i]->text, b[j]->text)) {
				FAIL("%s: CPU %u line %zu: merged '%s', inputs '%s'", what, cpu, i,
				     i < na ? a[i]->text : "(end)", b[j]->text);
				break;
			}
			i++;
		}
		if (j == nb && i != na)
			FAIL("%s: CPU %u: %zu lines merged, %zu in the inputs", what, cpu, na, i);
		if (stats.events[cpu] != na)
			FAIL("%s: CPU %u: %" PRIu64 " events counted, %zu printed", what, cpu,
			     stats.events[cpu], na);
		free(a);
		free(b);
	}
	/* Each drop mark of the inputs, with the line after it, is in the merged report. */
	for (j = 0; j + 1 < theirs->nr; j++) {
		if (!theirs->lines[j].drop)
			continue;
		marks++;
		lost[theirs->lines[j].cpu] += theirs->lines[j].dropped;
		for (i = 0; i + 1 < ours->nr; i++)
			if (ours->lines[i].drop && !strcmp(ours->lines[i].text, theirs->lines[j].text) &&
			    !strcmp(ours->lines[i + 1].text, theirs->lines[j + 1].text))
				break;
		if (i + 1 < ours->nr)
			found++;
		else
			FAIL("%s: no '%s' before '%s' in the merged report", what,
			     theirs->lines[j].text, theirs->lines[j + 1].text);
	}
	for (i = 0; i < ours->nr; i++)
		marks -= ours->lines[i].drop;
	if (marks)
		FAIL("%s: the merged report has %" PRId64 " drop marks more or less than the inputs'",
		     what, -(int64_t)marks);
	for (cpu = 0; cpu < nr_cpus; cpu++)
		if (stats.lost[cpu] != lost[cpu])
			FAIL("%s: CPU %u: %" PRIu64 " lost counted, %" PRIu64 " marked", what, cpu,
			     stats.lost[cpu], lost[cpu]);
	if (harness_failed > failed)
		keep_files(what);
	printf("%s: %" PRIu64 " events, %" PRIu64 " lost (%" PRIu64 " marks), %" PRIu64
	       " dropped, %" PRIu64 " pages\n",
	       what, total(stats.events), total(stats.lost), found, stats.dropped, stats.pages);
	return found;
}

static size_t count_lines(const struct report *r, const char *needle)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr; i++)
		n += strstr(r->lines[i].text, needle) != NULL;
	return n;
}

/* Record the inputs: programs at the same time, so that their events interleave per CPU. */
/*
 * Each page of trace.dat (version 6) @path to @fn, in order per CPU, with its bytes of entries,
 * its loss mark, and how it was made: 0 as the programs' writer left it (its first record one
 * tick after the page's timestamp: ring-buffer.h), 1 as the merge encoded it (its first
 * record at the page's timestamp), -1 neither (no record, or not a page).  Return: the CPUs.
 */
static unsigned int page_walk(const char *path,
			      void (*fn)(unsigned int cpu, uint32_t used, uint64_t lost, int made, void *arg),
			      void *arg)
{
	struct dat d;

	dat_load(&d, path);
	for (unsigned int cpu = 0; cpu < d.nr_cpus && cpu < MAX_CPUS; cpu++) {
		for (uint64_t off = 0; off < d.cpu_size[cpu]; off += USERTP__KPAGE_SIZE) {
			const unsigned char *page = d.buf + d.cpu_offset[cpu] + off;
			struct usertp__kpage_iter it;
			struct usertp__kpage_entry e;
			uint64_t lost = 0, page_ts;
			uint32_t used = 0;
			int made = -1;

			memcpy(&page_ts, page, 8);
			if (usertp__kpage_header(page, &used, &lost)) {
				usertp__kpage_iter_init(&it, page, used);
				if (usertp__kpage_iter_next(&it, &e) == 1)
					made = e.ts == page_ts;
			} else {
				printf("CPU %u: a page that does not parse\n", cpu);
			}
			fn(cpu, used, lost, made, arg);
		}
	}
	for (unsigned int i = 0; i < d.nr_events; i++)
		free((char *)d.events[i].format);
	free(d.buf);
	return d.nr_cpus < MAX_CPUS ? d.nr_cpus : MAX_CPUS;
}

static void count_form(unsigned int cpu, uint32_t used, uint64_t lost, int made, void *arg)
{
	uint64_t (*n)[2] = arg;

	(void)used, (void)lost;
	if (made >= 0)
		n[cpu][made]++;
}

/* Per CPU, the pages as the writer left them (n[cpu][0]) and as the merge made them ([1]). */
static unsigned int page_forms(const char *path, uint64_t (*n)[2])
{
	memset(n, 0, MAX_CPUS * sizeof(*n));
	return page_walk(path, count_form, n);
}

struct early {
	unsigned int cpu, pages;
	bool prev_merged_short;
};

static void count_early(unsigned int cpu, uint32_t used, uint64_t lost, int made, void *arg)
{
	struct early *e = arg;

	if (cpu != e->cpu)
		e->prev_merged_short = false;
	e->cpu = cpu;
	if (made == 0 && !lost && e->prev_merged_short)
		e->pages++;
	e->prev_merged_short = made == 1 && USERTP__KPAGE_DATA - used >= 512;
}

/*
 * Pages of @path that the merge closed early to put a program's page as it is after them: a
 * page of its own encoding with 512 bytes or more unused (its rule: dat-merge.c,
 * emit_page()), followed by a page as the writer left it that marks no loss.
 */
static unsigned int pages_closed_early(const char *path)
{
	struct early e = { 0, 0, false };

	page_walk(path, count_early, &e);
	return e.pages;
}

static void record(bool tsc, int jobs)
{
	char cmd[1024];
	const char *clock = tsc ? "USERTP_CLOCK=x86-tsc" : "USERTP_CLOCK=mono";

	snprintf(cmd, sizeof(cmd),
		 "cd %s && rm -f a.dat b.dat c.dat && "
		 "(%s USERTP_EVENTS='jobs:*' USERTP_OUTPUT=a.dat %s -w 3 %d >/dev/null 2>&1 & "
		 "%s USERTP_BUFFER_KB=8 USERTP_EVENTS='jobs:*' USERTP_OUTPUT=b.dat %s -w 2 %d >/dev/null 2>&1 & "
		 /* later, after a gap that takes time extends */
		 "sleep 0.3; %s USERTP_EVENTS='usertp-test:*,!t_rel_len' USERTP_OUTPUT=c.dat %s 60; wait)",
		 dir, clock, pool_prog, jobs, clock, pool_prog, jobs / 2, clock, fire_prog);
	run(cmd);
}

static void spool_all(struct spooled *s)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/a.dat", dir);
	spool(&s[0], path, "worker-pool[a]");
	snprintf(path, sizeof(path), "%s/b.dat", dir);
	spool(&s[1], path, "worker-pool[b]");
	snprintf(path, sizeof(path), "%s/c.dat", dir);
	spool(&s[2], path, "dat-fire[c]");
}

static void test_merge(void)
{
	struct spooled s[3], *all[3] = { &s[0], &s[1], &s[2] };
	struct report ours, theirs;
	char path[96];
	int ret;

	record(false, 1500);
	spool_all(s);
	merge_checked(path, sizeof(path), all, 3, "merge");
	if (dat_version != 7) {
		/* dat-fire's pages come after the others': they go to the file as they are. */
		static uint64_t n[MAX_CPUS][2];
		uint64_t as_written = 0;

		for (unsigned int cpu = page_forms(path, n); cpu--;)
			as_written += n[cpu][0];
		if (!as_written)
			FAIL("merge: no page went to the file as its program wrote it");
		/* ...without half-empty pages before them. */
		if (pages_closed_early(path))
			FAIL("merge: %u pages closed early, 512 bytes or more unused, before a page as "
			     "its program wrote it", pages_closed_early(path));
	}
	report(&ours, "-i m.dat");
	report(&theirs, "-i a.dat -i b.dat -i c.dat");
	if (!compare("three programs", &ours, &theirs, s[0].dat.nr_cpus, NULL))
		FAIL("no lost events in the inputs: the drop marks are not tested");
	if (stats.dropped || stats.bad_pages)
		FAIL("merge: %" PRIu64 " dropped, %" PRIu64 " bad pages", stats.dropped, stats.bad_pages);
	report_free(&ours);

	/* A source that does not declare one event it recorded: its records are left out. */
	for (unsigned int i = 0; i < s[2].src.nr_events; i++) {
		if (!strstr(s[2].dat.events[i].format, "name: t_cond\n"))
			continue;
		free((char *)s[2].dat.events[i].format);
		s[2].dat.events[i] = s[2].dat.events[--s[2].dat.nr_events];
		s[2].src.nr_events--;
		break;
	}
	ret = merge(path, all, 3, false);
	report(&ours, "-i m.dat");
	compare("an undeclared event", &ours, &theirs, s[0].dat.nr_cpus, " t_cond: ");
	if (ret || stats.dropped != count_lines(&theirs, " t_cond: ") || !stats.dropped)
		FAIL("undeclared t_cond: %d, %" PRIu64 " records dropped, %zu in the inputs", ret,
		     stats.dropped, count_lines(&theirs, " t_cond: "));
	report_free(&ours);
	report_free(&theirs);
	for (unsigned int i = 0; i < 3; i++)
		unspool(&s[i]);

	/* x86-tsc ticks, printed as raw numbers. */
	record(true, 1500);
	spool_all(s);
	ret = merge(path, all, 3, true);
	if (ret)
		FAIL("merge (x86-tsc): %d (%s)", ret, err);
	report(&ours, "-i m.dat");
	report(&theirs, "-i a.dat -i b.dat -i c.dat");
	compare("x86-tsc", &ours, &theirs, s[0].dat.nr_cpus, NULL);
	report_free(&ours);
	report_free(&theirs);
	for (unsigned int i = 0; i < 3; i++)
		unspool(&s[i]);
}

static void write_at(int fd, const void *data, size_t size, uint64_t off)
{
	if (pwrite(fd, data, size, (off_t)off) != (ssize_t)size)
		die("pwrite");
}

/* A copy of spool @fd, to be damaged. */
static int spool_copy(int fd)
{
	struct stat st;
	void *buf;
	int copy;

	if (fstat(fd, &st) || !(buf = malloc((size_t)st.st_size + 1)) ||
	    pread(fd, buf, (size_t)st.st_size, 0) != st.st_size)
		die("spool copy");
	copy = spool_file(buf, (size_t)st.st_size);
	free(buf);
	return copy;
}

static void test_corrupt(void)
{
	struct spooled s[3], *all[3] = { &s[0], &s[1], &s[2] };
	struct report ours;
	uint32_t word[2];
	uint64_t commit, events, good_events, size;
	unsigned int i, iter, cpu;
	char path[96];
	int pipefd[2], fd, ret;

	record(false, 400);
	spool_all(s);
	snprintf(path, sizeof(path), "%s/m.dat", dir);
	if (merge(path, all, 3, false))
		FAIL("corrupt: the undamaged merge failed: %s", err);
	good_events = total(stats.events);

	/*
	 * a's busiest CPU: page 1 claims too many bytes, page 2 has an entry longer than the
	 * page, page 3 a lost count with no room for it, page 4 a record of an undeclared id;
	 * the spool ends in a page cut short.  Page 5 is flagged for lost events as the kernel
	 * flags them, bit 31 of a long, sign-extended: it is not damaged, its records count.
	 */
	cpu = s[0].dat.cpu_size[1] > s[0].dat.cpu_size[0];
	size = s[0].dat.cpu_size[cpu];
	if (size < 7 * USERTP__KPAGE_SIZE)
		FAIL("corrupt: worker-pool recorded fewer than 7 pages on CPU %u", cpu);
	fd = s[0].fd[cpu] = spool_copy(s[0].fd[cpu]);
	commit = 5000;
	write_at(fd, &commit, 8, 1 * USERTP__KPAGE_SIZE + 8);
	word[0] = 0; /* type_len 0, delta 0 */
	word[1] = 8000;
	write_at(fd, word, 8, 2 * USERTP__KPAGE_SIZE + USERTP__KPAGE_HEADER);
	commit = USERTP__KPAGE_DATA | 3ull << 30;
	write_at(fd, &commit, 8, 3 * USERTP__KPAGE_SIZE + 8);
	/* The first record's common_type: after its header word, and its length word in the
	 * long form (type_len 0). */
	if (pread(fd, word, 4, 4 * USERTP__KPAGE_SIZE + USERTP__KPAGE_HEADER) != 4)
		die("pread");
	i = word[0] & 31 ? 4 : 8;
	word[0] = 999;
	write_at(fd, word, 2, 4 * USERTP__KPAGE_SIZE + USERTP__KPAGE_HEADER + i);
	if (pread(fd, &commit, 8, 5 * USERTP__KPAGE_SIZE + 8) != 8)
		die("pread");
	commit |= 0xffffffff80000000ull;
	write_at(fd, &commit, 8, 5 * USERTP__KPAGE_SIZE + 8);
	if (ftruncate(fd, (off_t)size - 100))
		die("ftruncate");
	/* CPU 0 of c comes through a pipe (read, not pread). */
	if (pipe(pipefd) || s[2].dat.cpu_size[0] > 65536)
		die("pipe");
	if (write(pipefd[1], s[2].dat.buf + s[2].dat.cpu_offset[0], s[2].dat.cpu_size[0]) !=
	    (ssize_t)s[2].dat.cpu_size[0])
		die("pipe write");
	close(pipefd[1]);
	close(s[2].fd[0]);
	s[2].fd[0] = pipefd[0];

	ret = merge(path, all, 3, false);
	events = check_pages(path);
	report(&ours, "-i m.dat");
	if (ret || stats.bad_pages != 4 || stats.dropped != 1 || events != total(stats.events) ||
	    events >= good_events || ours.failed)
		FAIL("corrupt: %d (%s), %" PRIu64 " bad pages (4 expected), %" PRIu64
		     " dropped (1), %" PRIu64 " events in the pages, %" PRIu64 " counted, %" PRIu64
		     " undamaged",
		     ret, err, stats.bad_pages, stats.dropped, events, total(stats.events),
		     good_events);
	/* (the spool cut short is marked too, on an empty page at the end: trace-cmd is silent) */
	if (!count_lines(&ours, "[EVENTS DROPPED]"))
		FAIL("corrupt: skipped pages are not marked as lost events");
	if (count_lines(&ours, "[") - count_lines(&ours, "DROPPED]") != total(stats.events))
		FAIL("corrupt: trace-cmd prints another number of events than counted");
	report_free(&ours);
	printf("corrupt: %" PRIu64 " events of %" PRIu64 " kept, %" PRIu64 " bad pages\n",
	       total(stats.events), good_events, stats.bad_pages);

	/* Random damage: never a crash or a read out of bounds (ASan), always a file that parses. */
	srand(4);
	for (iter = 0; iter < 200; iter++) {
		struct spooled damaged = s[1], *one = &damaged;

		for (i = 0; i < 2; i++) {
			unsigned int n = 1 + (unsigned int)rand() % 16;

			damaged.fd[i] = spool_copy(s[1].fd[i]);
			while (n--) {
				unsigned char b = (unsigned char)rand();

				write_at(damaged.fd[i], &b, 1,
					 (uint64_t)rand() % (s[1].dat.cpu_size[i] + 1));
			}
		}
		if (merge(path, &one, 1, false))
			FAIL("random damage %u: %s", iter, err);
		if (check_pages(path) != total(stats.events))
			FAIL("random damage %u: the pages hold another number of records than counted",
			     iter);
		if (iter % 40 == 0) {
			report(&ours, "-i m.dat");
			if (ours.failed)
				FAIL("random damage %u: trace-cmd report failed", iter);
			report_free(&ours);
		}
		for (i = 0; i < 2; i++)
			close(damaged.fd[i]);
	}
	for (i = 0; i < 3; i++)
		unspool(&s[i]);
}

/* ---- hand-made pages: the entry kinds the recorder does not write ---- */

#define COMMON_FIELDS                                                                            \
	"format:\n"                                                                              \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"                   \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"                   \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"           \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static const struct usertp__dat_event hand_events[] = {
	{ "hand", "name: big\nID: 7\n" COMMON_FIELDS
		  "\tfield:unsigned int n;\toffset:8;\tsize:4;\tsigned:0;\n"
		  "\tfield:char msg[200];\toffset:12;\tsize:200;\tsigned:0;\n\n"
		  "print fmt: \"n=%u msg=%s\", REC->n, REC->msg\n" },
	{ "hand", "name: small\nID: 9\n" COMMON_FIELDS
		  "\tfield:unsigned char c;\toffset:8;\tsize:1;\tsigned:0;\n\n"
		  "print fmt: \"c=%u\", REC->c\n" },
};

/* Append an entry: header word, array[0] when @array0 >= 0, then @len bytes of @payload. */
static void entry(struct usertp__rb_page_copy *pg, uint32_t type, uint32_t delta, int64_t array0,
		  const void *payload, uint32_t len)
{
	unsigned char *at = pg->data + USERTP__KPAGE_HEADER + pg->used;
	uint32_t word = type | delta << 5, a = (uint32_t)array0;

	memcpy(at, &word, 4);
	pg->used += 4;
	if (array0 >= 0) {
		memcpy(at + 4, &a, 4);
		pg->used += 4;
	}
	memcpy(pg->data + USERTP__KPAGE_HEADER + pg->used, payload, len);
	pg->used += (len + 3) & ~3u;
}

/* A record of event @id (common_pid 4242) with @n or @c, in @rec of 512 bytes. */
static uint32_t hand_record(unsigned char *rec, uint16_t id, unsigned int n)
{
	memset(rec, 0, 512);
	memcpy(rec, &id, 2);
	memcpy(rec + 4, &(int){ 4242 }, 4);
	if (id == 9) {
		rec[8] = (unsigned char)n;
		return 9;
	}
	memcpy(rec + 8, &n, 4);
	snprintf((char *)rec + 12, 200, "a message longer than the short form's 112 bytes, number %u, "
					"padded out to two hundred bytes of text with these words",
		 n);
	return 212;
}

static void test_pages(void)
{
	static struct usertp__rb_page_copy pages[4];
	struct usertp__rb_cpu_snapshot cpus[2] = { { pages, 4, 0, 0, 0, 0 } };
	struct usertp__rb_snapshot snap = { 2, cpus };
	struct usertp__dat_source src = { .events = hand_events, .nr_events = 2,
					  .cmdlines = "4242 hand-made\n", .cmdlines_len = 15 };
	struct spooled s, *twice[2] = { &s, &s };
	struct report ours, theirs;
	unsigned char rec[512];
	uint64_t t0 = 5000000000100ull, big_gap = 1ull << 60;
	char path[96];
	uint32_t len, i;
	int fd;

	/* Page 0: long and odd-sized records, padding, a time extend, an absolute time stamp. */
	memcpy(pages[0].data, &t0, 8);
	len = hand_record(rec, 7, 1);
	entry(&pages[0], 0, 0, len + 4, rec, len);
	entry(&pages[0], USERTP__KPAGE_TYPE_PADDING, 1, 12, rec, 8);
	len = hand_record(rec, 9, 2);
	entry(&pages[0], 0, 3000, len + 4, rec, len);
	entry(&pages[0], USERTP__KPAGE_TYPE_TIME_EXTEND, 5, 3, NULL, 0); /* 3 << 27 + 5 ns */
	len = hand_record(rec, 9, 3);
	entry(&pages[0], 0, 0, len + 4, rec, len);
	entry(&pages[0], USERTP__KPAGE_TYPE_TIME_STAMP, 77, (int64_t)((t0 + 2000000000) >> 27), NULL, 0);
	len = hand_record(rec, 7, 4);
	entry(&pages[0], 0, 0, len + 4, rec, len); /* at (t0 + 2 s) rounded down to 2^27 ns, + 77 */
	/* Page 1: 2^60 ns later (more than a time extend holds), a short-form record. */
	pages[1].data[0] = 0;
	memcpy(pages[1].data, &(uint64_t){ t0 + big_gap }, 8);
	len = hand_record(rec, 9, 5);
	memset(rec + 9, 0, 3);
	entry(&pages[1], 3, 0, -1, rec, 12);
	/* Page 2: after 42 lost events, full up to the last byte; page 3: 7 lost. */
	memcpy(pages[2].data, &(uint64_t){ t0 + big_gap + 1000 }, 8);
	pages[2].lost_before = 42;
	for (i = 0; pages[2].used + 2 * 220 <= USERTP__KPAGE_DATA; i++) {
		len = hand_record(rec, 7, 100 + i);
		entry(&pages[2], 0, 500, len + 4, rec, len);
	}
	hand_record(rec, 7, 100 + i);
	len = USERTP__KPAGE_DATA - pages[2].used - 8; /* the record, then zeros */
	entry(&pages[2], 0, 500, len + 4, rec, len);
	memcpy(pages[3].data, &(uint64_t){ t0 + big_gap + 1000000 }, 8);
	pages[3].lost_before = 7;
	len = hand_record(rec, 9, 6);
	entry(&pages[3], 0, 0, len + 4, rec, len);

	snprintf(path, sizeof(path), "%s/h.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || usertp__trace_dat_write(fd, &snap, &src))
		die("h.dat");
	close(fd);
	spool(&s, path, "hand-made");
	merge_checked(path, sizeof(path), twice, 2, "pages");
	report(&ours, "-i m.dat");
	report(&theirs, "-i h.dat -i h.dat");
	compare("hand-made pages, twice", &ours, &theirs, 2, NULL);
	/* (the 42 are marked without their count: the page they precede is full) */
	if (total(stats.lost) != 2 * 7)
		FAIL("pages: %" PRIu64 " lost events, 14 expected", total(stats.lost));
	report_free(&ours);
	report_free(&theirs);
	unspool(&s);
}

static void test_enospc(void)
{
	struct spooled s[3], *all[3] = { &s[0], &s[1], &s[2] };
	struct report ours;
	char small[96], path[128];
	struct stat st;
	int fd, ret;

	record(false, 3000);
	spool_all(s);
	snprintf(small, sizeof(small), "%s/small", dir);
	snprintf(path, sizeof(path), "%s/m.dat", small);
	/* (zstd: the same events take about a seventh of the room) */
	if (mkdir(small, 0700) || mount("none", small, "tmpfs", 0, dat_zstd ? "size=32k" : "size=256k"))
		die("mount tmpfs");
	ret = merge(path, all, 3, false);
	if (ret != -ENOSPC || !strstr(err, "No space left on device"))
		FAIL("enospc: %d (%s)", ret, err);
	printf("enospc: %s\n", err);
	if (stat(path, &st) || (uint64_t)st.st_size != stats.size ||
	    (dat_version == 6 && st.st_size % USERTP__KPAGE_SIZE) || !stats.pages)
		FAIL("enospc: the file has %jd bytes, %" PRIu64 " said, %" PRIu64 " pages",
		     (intmax_t)st.st_size, stats.size, stats.pages);
	if (check_pages(path) != total(stats.events))
		FAIL("enospc: the pages hold another number of records than counted");
	report(&ours, "-i small/m.dat");
	if (ours.failed || count_lines(&ours, "[") - count_lines(&ours, "DROPPED]") !=
				   total(stats.events))
		FAIL("enospc: trace-cmd report does not read the %" PRIu64 " events kept",
		     total(stats.events));
	report_free(&ours);
	if (umount(small))
		die("umount");

	/*
	 * Not even the header fits: nothing is kept.  (Compressed, it fits in the smallest tmpfs:
	 * then the file is whole, with no events.)
	 */
	if (mount("none", small, "tmpfs", 0, "size=4k"))
		die("mount tmpfs");
	ret = merge(path, all, 3, false);
	if (dat_zstd) {
		printf("enospc in 4 KiB: %s\n", err);
		report(&ours, "-i small/m.dat");
		if (ret != -ENOSPC || ours.failed || total(stats.events) ||
		    count_lines(&ours, "[") - count_lines(&ours, "DROPPED]"))
			FAIL("enospc in 4 KiB: %d (%s), %" PRIu64 " events said", ret, err,
			     total(stats.events));
		report_free(&ours);
	} else if (ret != -ENOSPC || stat(path, &st) || st.st_size ||
		   !strstr(err, "no trace written")) {
		FAIL("enospc in the header: %d (%s), %jd bytes", ret, err, (intmax_t)st.st_size);
	}
	if (umount(small))
		die("umount");

	/* An output that cannot be written. */
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	{
		struct usertp__merge_input in = {
			.sources = (struct usertp__merge_source[]){ s[2].src },
			.nr_sources = 1,
			.nr_cpus = 2,
			.cmdlines = "",
		};

		ret = usertp__merge_write(fd, &in, &stats, err, sizeof(err));
	}
	close(fd);
	if (ret >= 0 || !strstr(err, "write"))
		FAIL("unwritable output: %d (%s)", ret, err);
	for (unsigned int i = 0; i < 3; i++)
		unspool(&s[i]);
}

/*
 * A direct file as usertp record writes it (src/consumer/spool.h): recording @s's pages of CPU
 * C at (C + 1) * @step, with their records and marked losses counted into @r (4 arrays of
 * MAX_CPUS: base, len, events, lost).  Return: its fd.
 */
static int direct_file(const struct spooled *s, uint64_t step, uint64_t *r)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "%s/direct", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(path);
	for (unsigned int cpu = 0; cpu < s->dat.nr_cpus; cpu++) {
		const unsigned char *pages = s->dat.buf + s->dat.cpu_offset[cpu];

		r[cpu] = (cpu + 1) * step;
		r[MAX_CPUS + cpu] = s->dat.cpu_size[cpu];
		r[2 * MAX_CPUS + cpu] = r[3 * MAX_CPUS + cpu] = 0;
		for (uint64_t off = 0; off < s->dat.cpu_size[cpu]; off += USERTP__KPAGE_SIZE) {
			struct usertp__kpage_iter it;
			struct usertp__kpage_entry e;
			uint32_t used;
			uint64_t lost;

			if (!usertp__kpage_header(pages + off, &used, &lost))
				FAIL("adopt: CPU %u: a page that does not parse", cpu);
			/* (A mark without a count counts none, as in the merge.) */
			r[3 * MAX_CPUS + cpu] += lost == USERTP__KPAGE_LOST_UNKNOWN ? 0 : lost;
			usertp__kpage_iter_init(&it, pages + off, used);
			while (usertp__kpage_iter_next(&it, &e) == 1)
				r[2 * MAX_CPUS + cpu]++;
		}
		if (s->dat.cpu_size[cpu])
			write_at(fd, pages, s->dat.cpu_size[cpu], r[cpu]);
	}
	return fd;
}

/*
 * A source's pages adopted where they are (usertp__merge_input's adopt): the direct file
 * becomes a trace.dat that prints what the recording printed, per CPU, drop marks included,
 * its size the header and the pages; refused (-EXDEV, the file unchanged) when another source
 * has pages, or when the source's ids are not the file's.
 */
static void test_adopt(void)
{
	static uint64_t r[4 * MAX_CPUS];
	struct spooled s[3];
	struct usertp__merge_source src[2];
	struct usertp__merge_input in = { .sources = src, .nr_sources = 1, .adopt = 1 };
	struct report ours, theirs;
	struct stat before, after;
	uint64_t step = 1ull << 30, pages = 0;
	int fd, ret;

	record(false, 1500);
	spool_all(s);
	/* (Only where the file system collapses ranges: usertp record writes no direct file else.) */
	fd = direct_file(&s[1], step, r);
	if (fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 0, USERTP__KPAGE_SIZE) && errno == EOPNOTSUPP) {
		printf("SKIP: %s does not collapse ranges\n", dir);
		close(fd);
		goto out;
	}
	close(fd);
	fd = direct_file(&s[1], step, r);
	/* b's: it lost events (8 KiB buffers), so its pages mark them. */
	src[0] = s[1].src;
	src[0].cpu_base = r;
	src[0].cpu_len = r + MAX_CPUS;
	src[0].cpu_events = r + 2 * MAX_CPUS;
	src[0].cpu_lost = r + 3 * MAX_CPUS;
	for (unsigned int i = 0; i < s[1].dat.nr_cpus; i++)
		pages += s[1].dat.cpu_size[i] / USERTP__KPAGE_SIZE;
	{
		int fds[MAX_CPUS];

		for (unsigned int i = 0; i < s[1].dat.nr_cpus; i++)
			fds[i] = fd;
		src[0].cpu_fd = fds;
		in.nr_cpus = s[1].dat.nr_cpus;
		in.cmdlines = s[1].dat.cmdlines;
		in.cmdlines_len = s[1].dat.cmdlines_len;

		/* Refused: a has pages too. */
		src[1] = s[0].src;
		in.nr_sources = 2;
		fstat(fd, &before);
		ret = usertp__merge_write(fd, &in, &stats, err, sizeof(err));
		fstat(fd, &after);
		if (ret != -EXDEV || before.st_size != after.st_size || before.st_blocks != after.st_blocks)
			FAIL("adopt with another source's pages: %d (%s), size %lld -> %lld", ret, err,
			     (long long)before.st_size, (long long)after.st_size);
		/* Refused: c declares first (its pages left out), its ids are taken: a's move. */
		src[1] = src[0];
		src[0] = s[2].src;
		src[0].nr_cpus = 0;
		in.adopt = 2;
		ret = usertp__merge_write(fd, &in, &stats, err, sizeof(err));
		if (ret != -EXDEV)
			FAIL("adopt with ids that are not the file's: %d (%s)", ret, err);
		src[0] = src[1];
		in.nr_sources = 1;
		in.adopt = 1;
		ret = usertp__merge_write(fd, &in, &stats, err, sizeof(err));
	}
	fstat(fd, &after);
	close(fd);
	if (ret)
		FAIL("adopt: %d (%s)", ret, err);
	if (stats.pages != pages || (uint64_t)after.st_size != stats.size ||
	    stats.size % USERTP__KPAGE_SIZE || stats.size > (pages + 64) * USERTP__KPAGE_SIZE)
		FAIL("adopt: %" PRIu64 " pages of %" PRIu64 ", a file of %lld bytes (%" PRIu64 " said)",
		     stats.pages, pages, (long long)after.st_size, stats.size);
	if (check_pages(strcat(strcpy((char[128]){ 0 }, dir), "/direct")) != total(stats.events))
		FAIL("adopt: the pages hold another number of records than counted");
	report(&ours, "-i direct");
	report(&theirs, "-i b.dat");
	if (!compare("adopted", &ours, &theirs, s[1].dat.nr_cpus, NULL))
		FAIL("adopt: no lost events in b.dat: the marks are not tested");
	report_free(&ours);
	report_free(&theirs);
out:
	for (unsigned int i = 0; i < 3; i++)
		unspool(&s[i]);
}

/* test-merge forms FILE: page_forms(), "CPU N: W written, M merged" per CPU. */
static int forms(const char *path)
{
	static uint64_t n[MAX_CPUS][2];
	unsigned int cpus = page_forms(path, n);

	for (unsigned int cpu = 0; cpu < cpus; cpu++)
		printf("CPU %u: %" PRIu64 " written, %" PRIu64 " merged\n", cpu, n[cpu][0], n[cpu][1]);
	return 0;
}

/* The bytes of @fd from @off (a multiple of the page size), @len long, in the page cache. */
static uint64_t cached_bytes(int fd, uint64_t off, uint64_t len)
{
	const uint64_t window = 64u << 20;
	static unsigned char vec[(64u << 20) / 4096];
	uint64_t total = 0;

	for (uint64_t at = off; at < off + len; at += window) {
		size_t n = (size_t)(off + len - at < window ? off + len - at : window);
		void *map = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, (off_t)at);

		if (map == MAP_FAILED)
			die("mmap");
		if (mincore(map, n, vec))
			die("mincore");
		for (size_t i = 0; i < (n + 4095) / 4096; i++)
			total += (vec[i] & 1) ? 4096 : 0;
		munmap(map, n);
	}
	return total;
}

/*
 * test-merge spool-bytes [--cached] DIR...: the bytes of pages the spool directories hold:
 * their CPU files' sizes, and in the direct file each region's data up to its first hole (as
 * --recover finds them: blocks given ahead of the writes are not data).  --cached: of those,
 * the bytes the page cache holds (mincore()).
 */
static int spool_bytes(int n, char **dirs)
{
	bool cached = n && !strcmp(dirs[0], "--cached");
	uint64_t total = 0;

	if (cached) {
		n--;
		dirs++;
	}
	for (int i = 0; i < n; i++) {
		struct usertp__spool_meta meta;
		char path[4200], why[256];
		struct dirent *de;
		struct stat st;
		DIR *d = opendir(dirs[i]);

		while (d && (de = readdir(d))) {
			snprintf(path, sizeof(path), "%s/%s", dirs[i], de->d_name);
			if (!strstr(de->d_name, ".cpu") || stat(path, &st))
				continue;
			if (!cached) {
				total += (uint64_t)st.st_size;
			} else if (st.st_size) {
				int fd = open(path, O_RDONLY);

				if (fd >= 0) {
					total += cached_bytes(fd, 0, (uint64_t)st.st_size);
					close(fd);
				}
			}
		}
		if (d)
			closedir(d);
		if (usertp__spool_meta_read(dirs[i], &meta, why, sizeof(why)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirs[i], USERTP_SPOOL_DIRECT);
		int fd = meta.direct_source >= 0 ? open(path, O_RDONLY) : -1;

		for (unsigned int cpu = 0; fd >= 0 && cpu < meta.nr_cpus; cpu++) {
			uint64_t base = meta.direct_base + cpu * meta.direct_step;
			uint64_t len = usertp__spool_region_end(fd, base, meta.direct_step) - base;

			total += cached ? cached_bytes(fd, base, len) : len;
		}
		if (fd >= 0)
			close(fd);
		usertp__spool_meta_free(&meta);
	}
	printf("%" PRIu64 "\n", total);
	return 0;
}

int main(int argc, char **argv)
{
	char cmd[128];

	if (argc == 3 && !strcmp(argv[1], "forms"))
		return forms(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "spool-bytes"))
		return spool_bytes(argc - 2, argv + 2);
	if (argc != 4) {
		fprintf(stderr, "usage: test-merge merge|corrupt|enospc|pages|adopt[-v7|-v7-zstd] "
				"WORKER-POOL DAT-FIRE, or test-merge forms FILE\n");
		return 2;
	}
	if (strstr(argv[1], "-v7")) {
		dat_version = 7;
		dat_zstd = strstr(argv[1], "-v7-zstd") != NULL;
		*strstr(argv[1], "-v7") = 0;
		printf("trace.dat version 7%s\n", dat_zstd ? ", zstd" : "");
	}
	if (system("command -v trace-cmd >/dev/null")) {
		printf("SKIP: trace-cmd is not installed\n");
		return 77;
	}
	if (!strcmp(argv[1], "enospc") && geteuid()) {
		printf("SKIP: mounting a small tmpfs needs root\n");
		return 77;
	}
	pool_prog = argv[2];
	fire_prog = argv[3];
	snprintf(dir, sizeof(dir), "/tmp/test-merge-XXXXXX");
	if (!mkdtemp(dir))
		die("mkdtemp");
	if (!strcmp(argv[1], "merge"))
		test_merge();
	else if (!strcmp(argv[1], "corrupt"))
		test_corrupt();
	else if (!strcmp(argv[1], "pages"))
		test_pages();
	else if (!strcmp(argv[1], "adopt"))
		test_adopt();
	else
		test_enospc();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (getenv("TEST_MERGE_KEEP") || harness_failed) /* to look at the files */
		printf("files kept in %s\n", dir);
	else
		run(cmd);
	printf("%s: ", argv[1]);
	return harness_done();
}
