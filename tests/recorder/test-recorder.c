/* SPDX-License-Identifier: MIT */
/*
 * test-recorder.c - the embedded recorder end to end: real processes traced through
 * USERTP_EVENTS, and the files they leave checked against the kernel's trace format
 * (docs/tracefs.md section 6) and against what the programs did.
 *
 *	test-recorder WORKER-POOL REC-PROG REC-PROG-STATIC REC-MOD TEST
 *
 * (REC-PROG-STATIC: rec-prog linked with libusertp.a; REC-MOD: a module with an event.)
 *
 * Each TEST runs in a directory of its own under $TMPDIR (removed when the test passes, kept
 * and named when it fails).  The traced programs get a clean environment: no USERTP_*
 * variable but those the test sets, no core dumps, and sanitizer options that leave the fatal
 * signals to the program (an ASan SIGSEGV handler is the program's own handler, which the
 * recorder rightly leaves alone).
 *
 * Nothing here depends on timing: counts come from the programs (worker-pool prints its own
 * on stderr) or are fixed by them (rec-prog), and the tests that need a known CPU pin the
 * traced process to one.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <regex.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness.h"

extern char **environ;

static const char *worker_pool, *rec_prog, *rec_prog_static, *rec_mod;
static char workdir[4096];

/* --- small helpers ------------------------------------------------------------------------ */

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

/* Strings that live as long as the test (settings given to runs). */
static char *kept[64];
static unsigned int nr_kept;

static char *keep(char *s)
{
	if (nr_kept < sizeof(kept) / sizeof(kept[0]))
		kept[nr_kept++] = s;
	return s;
}

static void free_kept(void)
{
	while (nr_kept)
		free(kept[--nr_kept]);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap + 1);
			if (!buf)
				abort();
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static __attribute__((unused)) bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static void make_dir(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
}

/* Names in a directory (not . and ..), one per line, sorted: for messages and comparisons. */
static int count_entries(const char *dir, char *names, size_t size)
{
	struct dirent **list;
	int n, i, count = 0;

	if (names && size)
		names[0] = '\0';
	n = scandir(dir, &list, NULL, alphasort);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (strcmp(list[i]->d_name, ".") && strcmp(list[i]->d_name, "..")) {
			count++;
			if (names && strlen(names) + strlen(list[i]->d_name) + 2 < size) {
				strcat(names, list[i]->d_name);
				strcat(names, " ");
			}
		}
		free(list[i]);
	}
	free(list);
	return count;
}

static void remove_tree(const char *path)
{
	struct dirent *d;
	DIR *dir = opendir(path);

	if (!dir) {
		unlink(path);
		return;
	}
	while ((d = readdir(dir))) {
		char *sub;

		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		sub = xasprintf("%s/%s", path, d->d_name);
		remove_tree(sub);
		free(sub);
	}
	closedir(dir);
	rmdir(path);
}

/* The number of online CPUs, from /sys/devices/system/cpu/online ("0-3,5,7-8"). */
static int online_cpus(void)
{
	char *s = read_file("/sys/devices/system/cpu/online", NULL), *p;
	int n = 0;

	if (!s)
		return (int)sysconf(_SC_NPROCESSORS_ONLN);
	for (p = s; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		n += (int)(b - a + 1);
		p = *end == ',' ? end + 1 : end;
		if (end == p && *p != ',')
			break;
	}
	free(s);
	return n;
}

/* A CPU this process may run on: the traced programs of some tests are pinned to it. */
static int some_cpu(void)
{
	cpu_set_t set;
	int i;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			return i;
	return 0;
}

/* --- running a program -------------------------------------------------------------------- */

struct run {
	const char *argv[12];
	const char *env[12]; /* "NAME=value": added to a clean environment */
	const char *cwd;     /* default: workdir/out */
	int pin_cpu;	     /* -1: not pinned */
	bool ignore_term;    /* start with SIGTERM ignored (inherited SIG_IGN) */
	int kill_sig;	     /* once "ready" is read on stdout: kill(pid, kill_sig) */
	bool check_ignored;  /* before killing: SIGTERM must still be ignored (/proc/PID/status) */
	bool check_caught;   /* before killing: the fatal signals must be caught */
	/* results */
	pid_t pid;
	int status;
	char *out, *err; /* err: without a well-formed line of losses, which goes to losses */
	struct {
		bool said;
		unsigned long held, lost, all;
	} losses;
};

/*
 * The embedded recorder's line at exit when it lost events ("usertp: OUT holds N of M events
 * recorded: L overwritten|dropped in full buffers of K KiB per CPU (...)"): taken out of
 * r->err into r->losses when N + L = M, so that tests of stderr see the rest; a line that does
 * not add up stays, and fails them.
 */
static void take_losses_line(struct run *r)
{
	char *line = r->err ? strstr(r->err, "usertp: ") : NULL;

	while (line) {
		char *eol = strchr(line, '\n');
		unsigned long held, all, lost;
		const char *holds = strstr(line, " holds ");

		if (eol && holds && holds < eol &&
		    sscanf(holds, " holds %lu of %lu events recorded: %lu ", &held, &all, &lost) == 3 &&
		    held + lost == all) {
			r->losses.said = true;
			r->losses.held = held;
			r->losses.lost = lost;
			r->losses.all = all;
			memmove(line, eol + 1, strlen(eol + 1) + 1);
			return;
		}
		line = strstr(line + 1, "usertp: ");
	}
}

static void run_init(struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->pin_cpu = -1;
}

/* A run of "PROG MODE N", the form of most runs here. */
static void run_init_cmd(struct run *r, const char *prog, const char *mode, const char *n)
{
	run_init(r);
	r->argv[0] = prog;
	r->argv[1] = mode;
	r->argv[2] = n;
}

/* @options: the 3 strings allocated, for the caller to free. */
static char **child_env(const struct run *r, char **options)
{
	size_t n = 0, i, j;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 16, sizeof(*env));
	if (!env)
		abort();
	for (i = 0, j = 0; i < n; i++) {
		if (!strncmp(environ[i], "USERTP_", 7) || !strncmp(environ[i], "ASAN_OPTIONS=", 13) ||
		    !strncmp(environ[i], "TSAN_OPTIONS=", 13) || !strncmp(environ[i], "UBSAN_OPTIONS=", 14))
			continue;
		env[j++] = environ[i];
	}
	/* The fatal signals are the program's business: the sanitizers must not take them. */
	env[j++] = options[0] = xasprintf("ASAN_OPTIONS=%s%shandle_segv=0:handle_sigbus=0:handle_sigfpe=0:"
			     "handle_sigill=0:handle_abort=0:disable_coredump=1",
			     getenv("ASAN_OPTIONS") ? getenv("ASAN_OPTIONS") : "",
			     getenv("ASAN_OPTIONS") ? ":" : "");
	env[j++] = options[1] = xasprintf("TSAN_OPTIONS=%s%shandle_segv=0:handle_sigbus=0:handle_sigfpe=0:"
			     "handle_sigill=0:handle_abort=0:disable_coredump=1",
			     getenv("TSAN_OPTIONS") ? getenv("TSAN_OPTIONS") : "",
			     getenv("TSAN_OPTIONS") ? ":" : "");
	env[j++] = options[2] = xasprintf("UBSAN_OPTIONS=%s%sprint_stacktrace=1",
			     getenv("UBSAN_OPTIONS") ? getenv("UBSAN_OPTIONS") : "",
			     getenv("UBSAN_OPTIONS") ? ":" : "");
	for (i = 0; i < 12 && r->env[i]; i++)
		env[j++] = (char *)r->env[i];
	env[j] = NULL;
	return env;
}

/* The signal masks of /proc/PID/status ("SigIgn:", "SigCgt:"). */
static unsigned long long proc_sigmask(pid_t pid, const char *field)
{
	char *path = xasprintf("/proc/%d/status", (int)pid), *s = read_file(path, NULL), *p;
	unsigned long long mask = 0;

	free(path);
	if (s && (p = strstr(s, field)))
		mask = strtoull(p + strlen(field), NULL, 16);
	free(s);
	return mask;
}

#define SIGBIT(sig) (1ull << ((sig) - 1))

/*
 * LeakSanitizer, at the exit of a child forked from a process with threads, notes that it
 * cannot suspend those threads (they are not in the child): not a finding, taken out.
 */
static void strip_lsan_notes(char *err)
{
	char *line = err, *out = err;

	while (*line) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line + 1) : strlen(line);

		if (!(line[0] == '=' && line[1] == '=' &&
		      strstr(line, "was not suspended. False leaks are possible.") &&
		      strstr(line, "was not suspended. False leaks are possible.") < line + len)) {
			memmove(out, line, len);
			out += len;
		}
		line += len;
	}
	*out = '\0';
}

static void run(struct run *r)
{
	char *cwd = r->cwd ? NULL : xasprintf("%s/out", workdir);
	char *errpath = xasprintf("%s/stderr.txt", workdir);
	char *options[3], **env = child_env(r, options);
	int pipefd[2];
	size_t len = 0, cap = 4096;
	bool killed = false;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		abort();
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };
		int errfd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (errfd < 0 || dup2(pipefd[1], STDOUT_FILENO) < 0 || dup2(errfd, STDERR_FILENO) < 0)
			_exit(126);
		setrlimit(RLIMIT_CORE, &no_core);
		if (chdir(r->cwd ? r->cwd : cwd))
			_exit(126);
		if (r->pin_cpu >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(r->pin_cpu, &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				_exit(126);
		}
		signal(SIGTERM, r->ignore_term ? SIG_IGN : SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		execve(r->argv[0], (char *const *)r->argv, env);
		_exit(127);
	}
	close(pipefd[1]);
	r->pid = pid;
	r->out = malloc(cap);
	for (;;) {
		ssize_t n;

		if (cap - len < 1024) {
			cap *= 2;
			r->out = realloc(r->out, cap);
		}
		n = read(pipefd[0], r->out + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		r->out[len] = '\0';
		if (r->kill_sig && !killed && strstr(r->out, "ready\n")) {
			if (r->check_ignored) {
				unsigned long long ign = proc_sigmask(pid, "SigIgn:");

				CHECK(ign & SIGBIT(SIGTERM));
				if (!(ign & SIGBIT(SIGTERM)))
					fprintf(stderr, "SigIgn: %llx\n", ign);
				kill(pid, SIGTERM); /* ignored: nothing happens */
			}
			if (r->check_caught) {
				unsigned long long cgt = proc_sigmask(pid, "SigCgt:");
				unsigned long long want = SIGBIT(SIGTERM) | SIGBIT(SIGINT) |
							  SIGBIT(SIGHUP) | SIGBIT(SIGQUIT) |
							  SIGBIT(SIGABRT);

				CHECK((cgt & want) == want);
				if ((cgt & want) != want)
					fprintf(stderr, "SigCgt: %llx\n", cgt);
			}
			kill(pid, r->kill_sig);
			killed = true;
		}
	}
	r->out[len] = '\0';
	close(pipefd[0]);
	while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
		;
	r->err = read_file(errpath, NULL);
	take_losses_line(r);
	if (!r->err)
		r->err = strdup("");
	strip_lsan_notes(r->err);
	if (r->kill_sig)
		CHECK(killed);
	/* No sanitizer may have anything to say about a run. */
	if (strstr(r->err, "Sanitizer") || strstr(r->err, "runtime error")) {
		CHECK(!"a sanitizer reported something");
		fprintf(stderr, "--- stderr of %s:\n%s---\n", r->argv[0], r->err);
	}
	free(cwd);
	free(errpath);
	free(env);
	free(options[0]);
	free(options[1]);
	free(options[2]);
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* Report @r's status when it is not what was expected (@what @value). */
static bool status_expected(const struct run *r, bool ok, const char *what, int value)
{
	if (!ok)
		fprintf(stderr, "%s %s: status %#x (exit %d, signal %d), expected %s %d\nstderr:\n%s",
			r->argv[0], r->argv[1] ? r->argv[1] : "", r->status,
			WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1,
			WIFSIGNALED(r->status) ? WTERMSIG(r->status) : -1, what, value, r->err);
	return ok;
}

static bool exited(const struct run *r, int code)
{
	return status_expected(r, WIFEXITED(r->status) && WEXITSTATUS(r->status) == code, "exit",
			       code);
}

static bool signaled(const struct run *r, int sig)
{
	return status_expected(r, WIFSIGNALED(r->status) && WTERMSIG(r->status) == sig, "signal",
			       sig);
}

/* --- reading a trace file ----------------------------------------------------------------- */

struct event {
	char comm[64];
	int pid;
	int cpu;
	unsigned long long ts; /* microseconds, or raw clock ticks */
	char name[64];
	char text[512];
};

struct lost {
	int cpu;
	unsigned long long count;
	size_t before; /* the number of event lines before it */
};

struct trace {
	bool ok; /* the file exists and every line parsed */
	char header[12][160];
	unsigned long long entries, written;
	int nr_p;
	struct event *ev;
	size_t nr_ev;
	struct lost *lost;
	size_t nr_lost;
	unsigned long long lost_total;
};

static const char *const header_lines[12] = {
	"# tracer: nop",
	"#",
	NULL, /* entries-in-buffer/entries-written */
	"#",
	"#                                _-----=> irqs-off/BH-disabled",
	"#                               / _----=> need-resched",
	"#                              | / _---=> hardirq/softirq",
	"#                              || / _--=> preempt-depth",
	"#                              ||| / _-=> migrate-disable",
	"#                              |||| /     delay",
	"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION",
	"#              | |         |   |||||     |         |",
};

static void trace_free(struct trace *t)
{
	free(t->ev);
	free(t->lost);
	memset(t, 0, sizeof(*t));
}

/*
 * Parse @path; every event line is checked against the kernel's format by printing its fields
 * again with "%16s-%-7d [%03d] ..... %5lu.%06lu: %s: %s" (or %12llu for a raw clock).
 */
static bool read_trace(const char *path, struct trace *t, bool raw_clock)
{
	static regex_t re_ns, re_raw, re_lost;
	static bool compiled;
	char *buf = read_file(path, NULL), *line, *next;
	size_t cap = 0, lost_cap = 0, lineno = 0;
	bool ok = true;

	memset(t, 0, sizeof(*t));
	if (!compiled) {
		if (regcomp(&re_ns, "^(.*)-([0-9]+) +\\[([0-9]{3,})\\] \\.\\.\\.\\.\\. +([0-9]+)\\.([0-9]{6}): "
				    "([A-Za-z0-9_]+): (.*)$", REG_EXTENDED) ||
		    regcomp(&re_raw, "^(.*)-([0-9]+) +\\[([0-9]{3,})\\] \\.\\.\\.\\.\\. +([0-9]+): "
				     "([A-Za-z0-9_]+): (.*)$", REG_EXTENDED) ||
		    regcomp(&re_lost, "^CPU:([0-9]+) \\[LOST ([0-9]+) EVENTS\\]$", REG_EXTENDED))
			abort();
		compiled = true;
	}
	if (!buf) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return false;
	}
	for (line = buf; *line; line = next) {
		regmatch_t m[8];
		char *nl = strchr(line, '\n');

		if (!nl) {
			fprintf(stderr, "%s: the last line has no newline: \"%s\"\n", path, line);
			ok = false;
			break;
		}
		*nl = '\0';
		next = nl + 1;
		if (lineno < 12) {
			snprintf(t->header[lineno], sizeof(t->header[lineno]), "%s", line);
			if (lineno == 2 &&
			    sscanf(line, "# entries-in-buffer/entries-written: %llu/%llu   #P:%d",
				   &t->entries, &t->written, &t->nr_p) != 3) {
				fprintf(stderr, "%s:3: not the counts line: \"%s\"\n", path, line);
				ok = false;
			}
			lineno++;
			continue;
		}
		lineno++;
		if (!regexec(&re_lost, line, 3, m, 0)) {
			struct lost *l;

			if (t->nr_lost == lost_cap) {
				lost_cap = lost_cap ? lost_cap * 2 : 16;
				t->lost = realloc(t->lost, lost_cap * sizeof(*t->lost));
			}
			l = &t->lost[t->nr_lost++];
			l->cpu = atoi(line + m[1].rm_so);
			l->count = strtoull(line + m[2].rm_so, NULL, 10);
			l->before = t->nr_ev;
			t->lost_total += l->count;
			continue;
		}
		if (!regexec(raw_clock ? &re_raw : &re_ns, line, 8, m, 0)) {
			struct event *e;
			const char *comm = line;
			char again[1024];
			int k = raw_clock ? 4 : 5;

			if (t->nr_ev == cap) {
				cap = cap ? cap * 2 : 4096;
				t->ev = realloc(t->ev, cap * sizeof(*t->ev));
				if (!t->ev)
					abort();
			}
			e = &t->ev[t->nr_ev++];
			line[m[1].rm_eo] = '\0';
			while (*comm == ' ')
				comm++;
			snprintf(e->comm, sizeof(e->comm), "%s", comm);
			e->pid = atoi(line + m[2].rm_so);
			e->cpu = atoi(line + m[3].rm_so);
			if (raw_clock) {
				e->ts = strtoull(line + m[4].rm_so, NULL, 10);
			} else {
				e->ts = strtoull(line + m[4].rm_so, NULL, 10) * 1000000ull +
					strtoull(line + m[5].rm_so, NULL, 10);
			}
			snprintf(e->name, sizeof(e->name), "%.*s", (int)(m[k + 1].rm_eo - m[k + 1].rm_so),
				 line + m[k + 1].rm_so);
			snprintf(e->text, sizeof(e->text), "%s", line + m[k + 2].rm_so);
			if (raw_clock)
				snprintf(again, sizeof(again), "%16s-%-7d [%03d] ..... %12llu: %s: %s",
					 e->comm, e->pid, e->cpu, e->ts, e->name, e->text);
			else
				snprintf(again, sizeof(again), "%16s-%-7d [%03d] ..... %5llu.%06llu: %s: %s",
					 e->comm, e->pid, e->cpu, e->ts / 1000000, e->ts % 1000000,
					 e->name, e->text);
			line[m[1].rm_eo] = '-';
			if (strcmp(again, line)) {
				fprintf(stderr, "%s:%zu: not in the kernel's format:\n  \"%s\"\n  \"%s\"\n",
					path, lineno, line, again);
				ok = false;
			}
			continue;
		}
		fprintf(stderr, "%s:%zu: neither an event nor a lost-events line: \"%s\"\n", path,
			lineno, line);
		ok = false;
	}
	if (lineno < 12) {
		fprintf(stderr, "%s: %zu lines, not even the header\n", path, lineno);
		ok = false;
	}
	free(buf);
	t->ok = ok;
	return ok;
}

/* The 12 header lines, exactly as the kernel's, with the counts the file gives. */
static void check_header(const struct trace *t)
{
	char counts[160];
	int i;

	snprintf(counts, sizeof(counts), "# entries-in-buffer/entries-written: %llu/%llu   #P:%d",
		 t->entries, t->written, online_cpus());
	for (i = 0; i < 12; i++)
		CHECK_STR(t->header[i], header_lines[i] ? header_lines[i] : counts);
	CHECK_INT(t->nr_p, ==, online_cpus());
}

/* Timestamps never go back, in the whole file (merged) and in the lines of each CPU. */
static void check_order(const struct trace *t)
{
	unsigned long long last_cpu[4096] = { 0 };
	size_t i, bad_all = 0, bad_cpu = 0;

	for (i = 0; i < t->nr_ev; i++) {
		const struct event *e = &t->ev[i];

		if (i && e->ts < t->ev[i - 1].ts && !bad_all++)
			fprintf(stderr, "event %zu (%s) before the one above it: %llu < %llu\n", i,
				e->name, e->ts, t->ev[i - 1].ts);
		if (e->cpu < 0 || e->cpu >= 4096) {
			bad_cpu++;
			continue;
		}
		if (e->ts < last_cpu[e->cpu] && !bad_cpu++)
			fprintf(stderr, "event %zu goes back in time on CPU %d\n", i, e->cpu);
		last_cpu[e->cpu] = e->ts;
	}
	CHECK_INT(bad_all, ==, 0);
	CHECK_INT(bad_cpu, ==, 0);
}

/* A trace file read and checked in its form: header, line format, order. */
static bool load(const char *path, struct trace *t, bool raw_clock)
{
	bool ok = read_trace(path, t, raw_clock);

	CHECK(ok);
	if (!ok)
		return false;
	check_header(t);
	check_order(t);
	CHECK_INT(t->entries, ==, t->nr_ev);
	return true;
}

/* rec_event lines: "thread=T seq=S". */
static bool rec_event(const struct event *e, int *thread, int *seq)
{
	return !strcmp(e->name, "rec_event") && sscanf(e->text, "thread=%d seq=%d", thread, seq) == 2;
}

/*
 * The rec_event lines of @thread are exactly seq first..first+n-1, once each, in order and
 * from @pid (when not 0); returns how many rec_event lines other threads have.
 */
static size_t check_rec_events(const struct trace *t, int thread, int first, int n, int pid,
			       const char *comm)
{
	int expect = first, thr, seq;
	size_t i, others = 0, bad = 0;

	for (i = 0; i < t->nr_ev; i++) {
		const struct event *e = &t->ev[i];

		if (!rec_event(e, &thr, &seq))
			continue;
		if (thr != thread) {
			others++;
			continue;
		}
		if (seq != expect || (pid && e->pid != pid) || (comm && strcmp(e->comm, comm))) {
			if (!bad++)
				fprintf(stderr, "rec_event %d: thread=%d seq=%d pid %d comm %s, expected "
					"seq %d pid %d comm %s\n", (int)i, thr, seq, e->pid,
					e->comm, expect, pid, comm ? comm : "(any)");
		}
		expect++;
	}
	CHECK_INT(bad, ==, 0);
	CHECK_INT(expect - first, ==, n);
	return others;
}

static size_t count_named(const struct trace *t, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < t->nr_ev; i++)
		n += !strcmp(t->ev[i].name, name);
	return n;
}

/*
 * Events written while the output was taken from threads still firing, without overwrite:
 * every event written is in the file or counted lost in a "CPU:N [LOST M EVENTS]" line before
 * the first event.  (The snapshot shows a page up to an event still being written: a thread
 * preempted in the middle of one hides the events after it on that page, counted as written
 * and not in the buffer, as overwritten ones are.)  Dropped events (a full buffer) are not
 * written: they should all be counted at the end, but a thread that opened a page and was
 * preempted before noting the drops pending then takes the drops that happened meanwhile
 * (ring-buffer.h, usertp__rb_reserve(): lost_pending is taken after the CAS), so they may show
 * before that page: only noted here.
 */
static void check_busy_accounting(const struct trace *t)
{
	unsigned long long first_lost = 0;
	size_t i;

	for (i = 0; i < t->nr_lost; i++) {
		if (t->lost[i].before == 0)
			first_lost += t->lost[i].count;
		else if (t->lost[i].before != t->nr_ev)
			printf("note: CPU:%d [LOST %llu EVENTS] after event %zu of %zu\n",
			       t->lost[i].cpu, t->lost[i].count, t->lost[i].before, t->nr_ev);
	}
	CHECK_INT(t->written, ==, t->entries + first_lost);
	if (first_lost)
		printf("note: %llu events hidden behind an event being written\n", first_lost);
}

static char *out_path(const char *name)
{
	return xasprintf("%s/out/%s", workdir, name);
}

/* --- worker-pool -------------------------------------------------------------------------- */

struct pool_counts {
	unsigned long queued, started, done, slow;
};

static bool pool_counts(const struct run *r, struct pool_counts *c)
{
	const char *p = strstr(r->err, "worker-pool: ");

	if (!p || sscanf(p, "worker-pool: %lu queued, %lu started, %lu done, %lu slow", &c->queued,
			 &c->started, &c->done, &c->slow) != 4) {
		fprintf(stderr, "no counts from worker-pool on stderr:\n%s", r->err);
		return false;
	}
	return true;
}

struct job_seen {
	unsigned char queued, started, done, slow;
	unsigned long done_ns;
};

/*
 * Every call once: job_queued/started/done ids 0..N-1 once each, and job_slow as the program
 * counted.  The comm column names the thread: "worker-pool" (the main thread, pid = the
 * process) for job_queued, "worker-N" for the rest, the same name job_done carries.
 */
static void check_pool_trace(const struct trace *t, const struct run *r, int jobs, int workers)
{
	struct job_seen *seen = calloc((size_t)jobs, sizeof(*seen));
	struct pool_counts c;
	unsigned long nr_slow = 0, sure_slow = 0, maybe_slow = 0;
	size_t i, bad_line = 0, bad_comm = 0;
	char worker_comm[256][64] = { { 0 } };
	int worker_pid[256] = { 0 }, nr_workers_seen = 0;
	int id, j;

	CHECK(pool_counts(r, &c));
	CHECK_INT(c.queued, ==, jobs);
	CHECK_INT(c.started, ==, jobs);
	CHECK_INT(c.done, ==, jobs);
	for (i = 0; i < t->nr_ev; i++) {
		const struct event *e = &t->ev[i];
		unsigned char *slot = NULL;
		bool main_thread = !strcmp(e->name, "job_queued");

		if (sscanf(e->text, "id=%d", &id) != 1 || id < 0 || id >= jobs) {
			if (!bad_line++)
				fprintf(stderr, "unexpected event: %s: %s\n", e->name, e->text);
			continue;
		}
		if (!strcmp(e->name, "job_queued")) {
			slot = &seen[id].queued;
		} else if (!strcmp(e->name, "job_started")) {
			slot = &seen[id].started;
		} else if (!strcmp(e->name, "job_done")) {
			char worker[32];

			slot = &seen[id].done;
			if (sscanf(e->text, "id=%*d worker=%31s ns=%lu", worker, &seen[id].done_ns) != 2 ||
			    strcmp(worker, e->comm)) {
				if (!bad_comm++)
					fprintf(stderr, "job_done of %s: %s\n", e->comm, e->text);
			}
		} else if (!strcmp(e->name, "job_slow")) {
			slot = &seen[id].slow;
			nr_slow++;
		} else if (!bad_line++) {
			fprintf(stderr, "unexpected event: %s: %s\n", e->name, e->text);
		}
		if (slot && (*slot)++ && !bad_line++)
			fprintf(stderr, "twice: %s: %s\n", e->name, e->text);
		/* The comm column: the thread's name, and one pid per name. */
		if (main_thread) {
			if (strcmp(e->comm, "worker-pool") || e->pid != r->pid) {
				if (!bad_comm++)
					fprintf(stderr, "%s from %s-%d, expected worker-pool-%d\n",
						e->name, e->comm, e->pid, (int)r->pid);
			}
			continue;
		}
		if (strncmp(e->comm, "worker-", 7) || atoi(e->comm + 7) < 0 ||
		    atoi(e->comm + 7) >= workers || e->pid == r->pid) {
			if (!bad_comm++)
				fprintf(stderr, "%s from %s-%d\n", e->name, e->comm, e->pid);
			continue;
		}
		for (j = 0; j < nr_workers_seen; j++)
			if (!strcmp(worker_comm[j], e->comm))
				break;
		if (j == nr_workers_seen && nr_workers_seen < 256) {
			snprintf(worker_comm[j], sizeof(worker_comm[j]), "%s", e->comm);
			worker_pid[j] = e->pid;
			nr_workers_seen++;
		}
		if (worker_pid[j] != e->pid && !bad_comm++)
			fprintf(stderr, "%s has pids %d and %d\n", e->comm, worker_pid[j], e->pid);
	}
	CHECK_INT(bad_line, ==, 0);
	CHECK_INT(bad_comm, ==, 0);
	CHECK_INT(nr_workers_seen, >=, 1);
	CHECK_INT(nr_workers_seen, <=, workers);
	for (id = 0, j = 0; id < jobs; id++) {
		if (seen[id].queued != 1 || seen[id].started != 1 || seen[id].done != 1) {
			if (!j++)
				fprintf(stderr, "job %d: queued %d, started %d, done %d times\n", id,
					seen[id].queued, seen[id].started, seen[id].done);
		}
		/*
		 * job_slow: the program counts a job slow when now - start > 200 us, then fires
		 * job_slow with a second, later now - start (worker-pool.c, worker()): a job
		 * within a few ns of the limit is in the trace and not in the count.  What is
		 * exact: a job whose job_done ns (measured before both) is over the limit is in
		 * both; the others with a job_slow line may be in either.
		 */
		if (seen[id].done_ns > 200000) {
			sure_slow++;
			if (!seen[id].slow && !j++)
				fprintf(stderr, "job %d: done ns=%lu but no job_slow\n", id,
					seen[id].done_ns);
		} else if (seen[id].slow) {
			maybe_slow++;
		}
	}
	CHECK_INT(j, ==, 0);
	CHECK_INT(c.slow, <=, nr_slow);
	CHECK_INT(c.slow, >=, sure_slow);
	CHECK_INT(nr_slow, ==, sure_slow + maybe_slow);
	if (c.slow != nr_slow)
		printf("note: %lu job_slow lines, the program counted %lu slow (%lu at the limit: "
		       "the example's two clock reads)\n", nr_slow, c.slow, maybe_slow);
	/* entries-in-buffer/entries-written: every call, nothing lost. */
	CHECK_INT(t->entries, ==, 3ul * (unsigned long)jobs + nr_slow);
	CHECK_INT(t->written, ==, t->entries);
	CHECK_INT(t->nr_lost, ==, 0);
	free(seen);
}

static void test_pool(int workers, int jobs)
{
	char *trace = out_path("trace.txt"), *outdir = xasprintf("%s/out", workdir), nw[16], nj[16];
	struct trace t;
	struct run r;

	snprintf(nw, sizeof(nw), "%d", workers);
	snprintf(nj, sizeof(nj), "%d", jobs);
	run_init_cmd(&r, worker_pool, "-w", nw);
	r.argv[3] = nj;
	r.env[0] = "USERTP_EVENTS=jobs:*";
	r.env[1] = keep(xasprintf("USERTP_OUTPUT=%s", trace));
	run(&r);
	CHECK(exited(&r, 0));
	CHECK_STR(r.out, "");
	if (load(trace, &t, false))
		check_pool_trace(&t, &r, jobs, workers);
	CHECK_INT(count_entries(outdir, NULL, 0), ==, 1);
	trace_free(&t);
	run_free(&r);
	free(trace);
	free(outdir);
}

/*
 * A small buffer, the whole program on one CPU: a known stream.  With overwrite the survivors
 * are the newest: a suffix of the job ids of each kind (one worker takes the jobs in order);
 * without, the oldest: a prefix.
 */
static void test_pool_small(bool overwrite)
{
	const int jobs = 2000;
	char *trace = out_path("trace.txt");
	struct trace t;
	struct run r;
	struct pool_counts c;
	const char *kinds[3] = { "job_queued", "job_started", "job_done" };
	unsigned long long dropped = 0, gaps = 0, mid = 0;
	int k;
	size_t i;

	run_init_cmd(&r, worker_pool, "-w", "1");
	r.argv[3] = "2000";
	r.env[0] = "USERTP_EVENTS=jobs:*,!jobs:job_slow";
	r.env[1] = keep(xasprintf("USERTP_OUTPUT=%s", trace));
	r.env[2] = "USERTP_BUFFER_KB=8";
	r.env[3] = overwrite ? "USERTP_OVERWRITE=1" : "USERTP_OVERWRITE=0";
	r.pin_cpu = some_cpu();
	run(&r);
	CHECK(exited(&r, 0));
	CHECK(pool_counts(&r, &c));
	if (!load(trace, &t, false))
		goto out;
	/* Every call is either in the buffer or counted lost. */
	CHECK_INT(t.entries + t.lost_total, ==, 3ul * (unsigned long)jobs);
	CHECK_INT(t.entries, <, 3ul * (unsigned long)jobs);
	CHECK_INT(t.nr_lost, >=, 1);
	if (!t.nr_lost)
		goto out;
	for (i = 0; i < t.nr_lost; i++)
		CHECK_INT(t.lost[i].cpu, ==, r.pin_cpu);
	for (i = 0; i < t.nr_ev; i++)
		if (t.ev[i].cpu != r.pin_cpu)
			break;
	CHECK_INT(i, ==, t.nr_ev);
	/*
	 * Events can also be dropped on the way, rarely, whatever the buffer: a page is not
	 * reused while an event on it is still being written, nor written to while another
	 * thread opens it, and a thread preempted there holds the others up; what they drop is
	 * counted lost where it happened.  Such losses inside the kept events ("mid") are the
	 * only gaps allowed in them.  Nothing here needs timing to be right.
	 */
	for (i = 0; i < t.nr_lost; i++)
		if (t.lost[i].before < t.nr_ev && !(overwrite && i == 0))
			mid += t.lost[i].count;
	if (overwrite) {
		/* The overwritten are counted written, and lost before the first event. */
		CHECK_INT(t.lost[0].before, ==, 0);
		CHECK_INT(t.lost[0].count, ==, t.written - t.entries);
		dropped = t.lost_total - t.lost[0].count;
		CHECK_INT(t.written + dropped, ==, 3ul * (unsigned long)jobs);
	} else {
		/* The dropped are not written; once full, they are counted lost at the end. */
		CHECK_INT(t.written, ==, t.entries);
		CHECK_INT(t.lost[t.nr_lost - 1].before, ==, t.nr_ev);
	}
	if (mid)
		printf("note: %llu events dropped among those kept\n", mid);
	for (k = 0; k < 3; k++) {
		int first = -1, last = -1, id, bad = 0;

		for (i = 0; i < t.nr_ev; i++) {
			if (strcmp(t.ev[i].name, kinds[k]) || sscanf(t.ev[i].text, "id=%d", &id) != 1)
				continue;
			if (first < 0)
				first = id;
			else if (id <= last && !bad++)
				fprintf(stderr, "%s: id %d after %d\n", kinds[k], id, last);
			else
				gaps += (unsigned long long)(id - last - 1);
			last = id;
		}
		CHECK_INT(bad, ==, 0);
		if (overwrite) {
			/* The newest: up to the last job (job_done of it is the last event). */
			if (k == 2 || first >= 0)
				CHECK_INT(last, ==, jobs - 1);
		} else {
			/* The oldest: from job 0 (job_queued 0 is the first event). */
			if (k == 0 || first >= 0)
				CHECK_INT(first, ==, 0);
		}
	}
	/* Each kind's survivors are consecutive jobs, but for those dropped among them. */
	CHECK_INT(gaps, <=, mid);
out:
	trace_free(&t);
	run_free(&r);
	free(trace);
}

/* --- rec-prog: settings -------------------------------------------------------------------- */

/*
 * rec-prog on one CPU with a small buffer (3 pages): exactly which events survive.  @mode
 * "seq" fires rec_event (16 bytes: with their header word 20 bytes, 204 fill a page exactly;
 * in CAS mode, ThreadSanitizer's, with a length word too, 24 bytes, 170 a page), "spin" fires
 * rec_spin (24 bytes: 28 or 32 with their header, a page never ends exactly with one).
 * @pages: when not 0, @n is that many pages' worth of events more.
 */
static void test_seq_small(bool overwrite, const char *mode, int pages, int n)
{
	const char *name = !strcmp(mode, "seq") ? "rec_event" : "rec_spin";
#if defined(__SANITIZE_THREAD__) || !defined(__x86_64__)
	const int header = 8;
#else
	const int header = 4;
#endif
	/* 8 KiB: 3 pages of 4080 data bytes (ring-buffer.h, the kernel's sub-buffers). */
	const int per_page = 4080 / ((strcmp(mode, "seq") ? 24 : 16) + header);
	char *trace = out_path("trace.txt"), nstr[16];
	struct trace t;
	struct run r;
	int thr, seq, first = -1, last = -1, bad = 0;
	size_t i;

	n += pages * per_page;
	snprintf(nstr, sizeof(nstr), "%d", n);
	run_init_cmd(&r, rec_prog, mode, nstr);
	r.env[0] = "USERTP_EVENTS=rec:*";
	r.env[1] = "USERTP_BUFFER_KB=8";
	if (!overwrite)
		r.env[2] = "USERTP_OVERWRITE=0";
	r.pin_cpu = some_cpu();
	run(&r);
	CHECK(exited(&r, 0));
	CHECK_STR(r.err, "");
	if (!load(trace, &t, false))
		goto out;
	/* What the line of losses says the file holds, it holds. */
	CHECK(!r.losses.said || r.losses.held == t.nr_ev);
	for (i = 0; i < t.nr_ev; i++) {
		if (strcmp(t.ev[i].name, name) ||
		    sscanf(t.ev[i].text, "thread=%d seq=%d", &thr, &seq) != 2 || thr != 0 ||
		    t.ev[i].pid != r.pid || t.ev[i].cpu != r.pin_cpu) {
			if (!bad++)
				fprintf(stderr, "line %zu: %s-%d [%d] %s: %s\n", i, t.ev[i].comm,
					t.ev[i].pid, t.ev[i].cpu, t.ev[i].name, t.ev[i].text);
			continue;
		}
		if (first < 0)
			first = seq;
		else if (seq != last + 1 && !bad++)
			fprintf(stderr, "seq %d after %d\n", seq, last);
		last = seq;
	}
	CHECK_INT(bad, ==, 0);
	if (n <= 3 * per_page) {
		/* It all fits in the 3 pages. */
		CHECK_INT(t.nr_ev, ==, n);
		CHECK_INT(t.written, ==, n);
		CHECK_INT(t.nr_lost, ==, 0);
		goto out;
	}
	CHECK_INT(t.nr_ev, >, 100);
	CHECK_INT(t.nr_ev, <, n);
	CHECK_INT(t.nr_lost, ==, 1);
	if (t.nr_lost)
		CHECK_INT(t.lost[0].cpu, ==, r.pin_cpu);
	CHECK_INT(t.lost_total, ==, (unsigned long long)n - t.nr_ev);
	if (overwrite) {
		/* The newest survive: the page being written and the two before it... */
		CHECK_INT(t.nr_ev, ==, 2 * per_page + (n % per_page ? n % per_page : per_page));
		/* ...the oldest are counted written and shown lost first. */
		CHECK_INT(last, ==, n - 1);
		CHECK_INT(first, ==, n - (int)t.nr_ev);
		CHECK_INT(t.written, ==, n);
		if (t.nr_lost)
			CHECK_INT(t.lost[0].before, ==, 0);
	} else {
		/* The oldest survive, 3 pages; the dropped were never written, shown lost at
		 * the end. */
		CHECK_INT(t.nr_ev, ==, 3 * per_page);
		CHECK_INT(first, ==, 0);
		CHECK_INT(last, ==, (int)t.nr_ev - 1);
		CHECK_INT(t.written, ==, t.entries);
		if (t.nr_lost)
			CHECK_INT(t.lost[0].before, ==, t.nr_ev);
	}
out:
	trace_free(&t);
	run_free(&r);
	free(trace);
}

/*
 * Without overwrite the oldest events stay and every later one goes, as in the kernel (which
 * pads out the rest of the last page when it cannot move on).  rec-prog mixed: pairs of a
 * 60-byte rec_mark and a 16-byte rec_event, 84 bytes with their header words: 48 pairs fill a
 * page but for 48 bytes, room for a rec_event and not a rec_mark (in CAS mode, with length
 * words, 92 bytes: 44 pairs, 32 bytes left).
 */
static void test_mixed_no_overwrite(void)
{
#if defined(__SANITIZE_THREAD__) || !defined(__x86_64__)
	const int pairs = 44;
#else
	const int pairs = 48;
#endif
	const int n = 1000;
	char *trace = out_path("trace.txt");
	struct trace t;
	struct run r;
	int thr, seq, mark, next = 0, bad = 0;
	size_t i;

	run_init_cmd(&r, rec_prog, "mixed", "1000");
	r.env[0] = "USERTP_EVENTS=rec:*";
	r.env[1] = "USERTP_BUFFER_KB=8";
	r.env[2] = "USERTP_OVERWRITE=0";
	r.pin_cpu = some_cpu();
	run(&r);
	CHECK(exited(&r, 0));
	CHECK_STR(r.err, "");
	if (!load(trace, &t, false))
		goto out;
	/* The survivors: the first events fired, in order, with none missing. */
	for (i = 0; i < t.nr_ev; i++, next++) {
		bool ok = i % 2 ? rec_event(&t.ev[i], &thr, &seq) && seq == next / 2
				: sscanf(t.ev[i].text, "what=m-%d-", &mark) == 1 && mark == next / 2;

		if (!ok && !bad++)
			fprintf(stderr, "event %zu is %s: %s, expected the %s of pair %d\n", i,
				t.ev[i].name, t.ev[i].text, i % 2 ? "rec_event" : "rec_mark", next / 2);
	}
	CHECK_INT(bad, ==, 0);
	CHECK_INT(t.nr_ev, ==, 3 * pairs * 2);
	CHECK_INT(t.written, ==, t.entries);
	CHECK_INT(t.nr_lost, ==, 1);
	CHECK_INT(t.lost_total, ==, 2ull * n - t.nr_ev);
out:
	trace_free(&t);
	run_free(&r);
	free(trace);
}

/*
 * Bad settings: one line on stderr naming the variable and why, then the program runs
 * untraced to its normal end, and no file is written.
 */
static void test_bad_settings(void)
{
	static const char *const bad[][2] = {
		{ "USERTP_BUFFER_KB", "abc" },	 { "USERTP_BUFFER_KB", "0" },
		{ "USERTP_BUFFER_KB", "-1" },	 { "USERTP_BUFFER_KB", "8k" },
		{ "USERTP_BUFFER_KB", "" },	 { "USERTP_BUFFER_KB", "99999999999999999999" },
		{ "USERTP_BUFFER_KB", "4194305" }, { "USERTP_OVERWRITE", "2" },
		{ "USERTP_OVERWRITE", "yes" },	 { "USERTP_OUTPUT", "x.json" },
		{ "USERTP_OUTPUT", "x.dat.gz" },	 { "USERTP_OUTPUT", "x.txt/" },
		{ "USERTP_OUTPUT", "trace" },	 { "USERTP_OUTPUT", ".txt" },
		{ "USERTP_EVENTS", "*" },	 { "USERTP_EVENTS", "a:b:c" },
		{ "USERTP_EVENTS", "" },	 { "USERTP_EVENTS", "jobs:job*" },
		{ "USERTP_CLOCK", "foo" },
		{ "USERTP_CLOCK", "" },
		/* named with the reason at the start (before: a bare "cannot write" at exit) */
		{ "USERTP_OUTPUT", "/nonexistent-dir/x.txt" },
	};
	char *outdir = xasprintf("%s/out", workdir);
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *var = bad[i][0], *value = bad[i][1];
		char *setting = xasprintf("%s=%s", var, value), *named = xasprintf("%s: ", setting);
		char names[1024], *line, *nl;
		int usertp_lines = 0, lines = 0, files;
		struct pool_counts c;
		struct run r;

		run_init_cmd(&r, worker_pool, "-w", "2");
		r.argv[3] = "100";
		r.env[0] = strcmp(var, "USERTP_EVENTS") ? "USERTP_EVENTS=jobs:*" : setting;
		r.env[1] = setting;
		run(&r);
		CHECK(exited(&r, 0));
		CHECK_STR(r.out, "");
		CHECK(pool_counts(&r, &c) && c.queued == 100 && c.started == 100 && c.done == 100);
		for (line = r.err; *line; line = nl + 1) {
			nl = strchr(line, '\n');
			if (!nl)
				break;
			lines++;
			if (!strncmp(line, "usertp:", 7)) {
				usertp_lines++;
				/* "usertp: VAR=VALUE: reason" */
				CHECK(strstr(line, named) && nl - (strstr(line, named) + strlen(named)) > 5);
			}
		}
		CHECK_INT(usertp_lines, ==, 1);
		CHECK_INT(lines, ==, 2); /* and worker-pool's counts */
		files = count_entries(outdir, names, sizeof(names));
		CHECK_INT(files, ==, 0);
		if (usertp_lines != 1 || lines != 2 || files)
			fprintf(stderr, "with %s: stderr:\n%sfiles: %s\n", setting, r.err, names);
		remove_tree(outdir);
		make_dir(outdir);
		run_free(&r);
		free(setting);
		free(named);
	}
	free(outdir);
}

/* The lines of @text that start with @prefix. */
static int count_lines(const char *text, const char *prefix)
{
	int n = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p += p != NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

/*
 * Garbage in the settings that only tune or connect (USERTP_RSEQ, USERTP_CONTROL,
 * USERTP_SESSION) is reported as the others are, in one line naming the variable, and the
 * program runs (before: silently taken as the default).
 */
static void test_settings_ignored(void)
{
	static const char *const settings[] = { "USERTP_RSEQ=maybe", "USERTP_CONTROL=yes",
						"USERTP_SESSION=/nonexistent/record.sock" };

	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		char *named = xasprintf("usertp: %s: ", settings[i]);
		struct run r;

		run_init_cmd(&r, rec_prog, "seq", "10");
		r.env[0] = "USERTP_EVENTS=rec:*";
		r.env[1] = settings[i];
		run(&r);
		CHECK(exited(&r, 0));
		CHECK_INT(count_lines(r.err, "usertp:"), ==, 1);
		CHECK_INT(count_lines(r.err, named), ==, 1);
		if (count_lines(r.err, named) != 1)
			fprintf(stderr, "with %s: stderr:\n%s", settings[i], r.err);
		run_free(&r);
		free(named);
	}
}

/*
 * A spec of USERTP_EVENTS that selected nothing is named at exit with the close matches, once
 * (not again by a forked child); the others record as usual.
 */
static void test_events_nomatch(void)
{
	char *trace = out_path("trace.txt");
	struct trace t;
	struct run r;

	run_init_cmd(&r, rec_prog, "fork", "5");
	r.env[0] = "USERTP_EVENTS=rec:rec_evnt,rec:rec_mark";
	run(&r);
	CHECK(exited(&r, 0));
	CHECK_INT(count_lines(r.err, "usertp: USERTP_EVENTS: no event rec:rec_evnt in this "
				     "program; close matches: rec:rec_event"), ==, 1);
	CHECK_INT(count_lines(r.err, "usertp:"), ==, 1);
	if (count_lines(r.err, "usertp:") != 1)
		fprintf(stderr, "stderr:\n%s", r.err);
	/* rec:rec_mark was recorded all the same (one at the program's exit). */
	CHECK(read_trace(trace, &t, false));
	trace_free(&t);
	run_free(&r);
	free(trace);
}

/* Good settings at their limits are taken without a word. */
static void test_good_settings(void)
{
	static const char *const good[][3] = {
		{ "USERTP_BUFFER_KB=1", "USERTP_OVERWRITE=1", "USERTP_CLOCK=mono" },
		{ "USERTP_BUFFER_KB=1408", "USERTP_OVERWRITE=0", "USERTP_OUTPUT=trace.txt" },
	};
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char *trace = out_path("trace.txt");
		struct trace t;
		struct run r;

		run_init_cmd(&r, rec_prog, "seq", "10");
		r.env[0] = "USERTP_EVENTS=rec:*";
		r.env[1] = good[i][0];
		r.env[2] = good[i][1];
		r.env[3] = good[i][2];
		run(&r);
		CHECK(exited(&r, 0));
		CHECK_STR(r.err, "");
		if (load(trace, &t, false)) {
			CHECK_INT(check_rec_events(&t, 0, 0, 10, r.pid, "rec-prog"), ==, 0);
			CHECK_INT(t.nr_ev, ==, 10);
		}
		trace_free(&t);
		run_free(&r);
		unlink(trace);
		free(trace);
	}
}

/* USERTP_CLOCK=x86-tsc: raw counter ticks, printed "%12llu" as the kernel does. */
static void test_tsc(void)
{
	char *trace = out_path("trace.txt");
	struct trace t;
	struct run r;

	run_init_cmd(&r, rec_prog, "seq", "1000");
	r.env[0] = "USERTP_EVENTS=rec:*";
	r.env[1] = "USERTP_CLOCK=x86-tsc";
	run(&r);
	CHECK(exited(&r, 0));
#if defined(__x86_64__)
	CHECK_STR(r.err, "");
	if (load(trace, &t, true)) {
		CHECK_INT(check_rec_events(&t, 0, 0, 1000, r.pid, "rec-prog"), ==, 0);
		CHECK_INT(t.nr_ev, ==, 1000);
		CHECK_INT(t.written, ==, 1000);
	}
	trace_free(&t);
#else
	CHECK(strstr(r.err, "USERTP_CLOCK=x86-tsc: ") != NULL);
	CHECK(!exists(trace));
	(void)t;
#endif
	run_free(&r);
	free(trace);
}

/*
 * A relative USERTP_OUTPUT is taken from the directory the program started in, even when it
 * changes directory before the events; the default is trace.txt there.
 */
static void test_relative_output(void)
{
	char *start = xasprintf("%s/start", workdir), *elsewhere = xasprintf("%s/elsewhere", workdir);
	char *sub = xasprintf("%s/start/sub", workdir), *sub2 = xasprintf("%s/elsewhere/sub", workdir);
	char *expected = xasprintf("%s/start/sub/rel.txt", workdir);
	char *dflt = xasprintf("%s/start/trace.txt", workdir);
	struct trace t;
	struct run r;

	make_dir(start);
	make_dir(elsewhere);
	make_dir(sub);
	make_dir(sub2);
	run_init_cmd(&r, rec_prog, "chdir", "20");
	r.argv[3] = elsewhere;
	r.env[0] = "USERTP_EVENTS=rec:rec_event";
	r.env[1] = "USERTP_OUTPUT=sub/rel.txt";
	r.cwd = start;
	run(&r);
	CHECK(exited(&r, 0));
	CHECK_STR(r.err, "");
	if (load(expected, &t, false))
		CHECK_INT(check_rec_events(&t, 0, 0, 20, r.pid, "rec-prog"), ==, 0);
	trace_free(&t);
	CHECK_INT(count_entries(sub2, NULL, 0), ==, 0);
	CHECK_INT(count_entries(elsewhere, NULL, 0), ==, 1); /* sub */
	run_free(&r);

	/* No USERTP_OUTPUT: trace.txt where the program started. */
	run_init_cmd(&r, rec_prog, "chdir", "5");
	r.argv[3] = elsewhere;
	r.env[0] = "USERTP_EVENTS=rec:rec_event";
	r.cwd = start;
	run(&r);
	CHECK(exited(&r, 0));
	if (load(dflt, &t, false))
		CHECK_INT(check_rec_events(&t, 0, 0, 5, r.pid, "rec-prog"), ==, 0);
	trace_free(&t);
	CHECK_INT(count_entries(elsewhere, NULL, 0), ==, 1);
	run_free(&r);
	free(start);
	free(elsewhere);
	free(sub);
	free(sub2);
	free(expected);
	free(dflt);
}

/* --- rec-prog: how the process ends ------------------------------------------------------- */

#define K 1000

static void prog_run(struct run *r, const char *mode, const char *n)
{
	run_init(r);
	r->argv[0] = rec_prog;
	r->argv[1] = mode;
	r->argv[2] = n;
	r->env[0] = "USERTP_EVENTS=rec:*";
}

/* The file holds exactly the K events of the main thread (and @marks rec_mark lines). */
static void check_k_events(const struct run *r, const char *mark)
{
	char *trace = out_path("trace.txt");
	struct trace t;

	if (load(trace, &t, false)) {
		CHECK_INT(check_rec_events(&t, 0, 0, K, r->pid, "rec-prog"), ==, 0);
		CHECK_INT(t.nr_ev, ==, K + (mark ? 1 : 0));
		CHECK_INT(t.written, ==, t.nr_ev);
		CHECK_INT(t.nr_lost, ==, 0);
		if (mark && t.nr_ev == K + 1) {
			/* The program's own atexit handler and its signal handler run first. */
			CHECK_STR(t.ev[K].name, "rec_mark");
			CHECK_STR(t.ev[K].text, mark);
		}
	}
	trace_free(&t);
	free(trace);
}

static void check_no_output(void)
{
	char *outdir = xasprintf("%s/out", workdir), names[1024];
	int n = count_entries(outdir, names, sizeof(names));

	CHECK_INT(n, ==, 0);
	if (n)
		fprintf(stderr, "files: %s\n", names);
	free(outdir);
}

/*
 * Run rec-prog (or @prog) in @mode for 1000 events; it must exit 0 quietly, having written
 * its events with the one @extra from its atexit handler, or (@extra NULL) nothing at all.
 */
static void run_quiet(const char *prog, const char *mode, const char *extra)
{
	struct run r;

	prog_run(&r, mode, "1000");
	if (prog)
		r.argv[0] = prog;
	run(&r);
	CHECK(exited(&r, 0));
	CHECK_STR(r.err, "");
	if (extra)
		check_k_events(&r, extra);
	else
		check_no_output();
	run_free(&r);
}

static void test_exit_return(void)
{
	run_quiet(NULL, "return", "what=atexit");
}

/* exit() from a thread while three others fire rec_spin without end. */
static void test_exit_thread(void)
{
	char *trace = out_path("trace.txt");
	long long last_spin[3] = { -1, -1, -1 };
	struct trace t;
	struct run r;
	size_t i, spins = 0, bad = 0;
	int exiter_pid = 0;

	prog_run(&r, "exit-thread", "1000");
	/* Without overwrite the first events stay whatever the spinners do. */
	r.env[1] = "USERTP_OVERWRITE=0";
	run(&r);
	CHECK(exited(&r, 3));
	CHECK_STR(r.err, "");
	if (!load(trace, &t, false))
		goto out;
	for (i = 0; i < t.nr_ev && !exiter_pid; i++)
		if (!strcmp(t.ev[i].name, "rec_event"))
			exiter_pid = t.ev[i].pid;
	CHECK(exiter_pid != 0 && exiter_pid != r.pid);
	CHECK_INT(check_rec_events(&t, 1, 0, K, exiter_pid, "exiter"), ==, 0);
	for (i = 0; i < t.nr_ev; i++) {
		unsigned long long seq;
		int s;

		if (strcmp(t.ev[i].name, "rec_spin"))
			continue;
		spins++;
		/* A spinner's events are its own, each once, in order. */
		if (sscanf(t.ev[i].text, "thread=%d seq=%llu", &s, &seq) != 2 || s < 0 || s > 2 ||
		    strncmp(t.ev[i].comm, "spinner-", 8) || atoi(t.ev[i].comm + 8) != s ||
		    (long long)seq <= last_spin[s]) {
			if (!bad++)
				fprintf(stderr, "rec_spin line %zu: %s-%d %s\n", i, t.ev[i].comm,
					t.ev[i].pid, t.ev[i].text);
			continue;
		}
		last_spin[s] = (long long)seq;
	}
	CHECK_INT(bad, ==, 0);
	CHECK_INT(spins, >=, 1);
	CHECK_INT(t.nr_ev, ==, K + spins);
	check_busy_accounting(&t);
out:
	trace_free(&t);
	run_free(&r);
	free(trace);
}

/* _exit() runs no atexit handler: the recorder writes nothing (its documented points are
 * exit(), a return from main and the fatal signals). */
static void test_underscore_exit(void)
{
	run_quiet(NULL, "_exit", NULL);
}

/* A fatal signal the program raises itself: it still dies of it, with its events written. */
static void test_raised(const char *mode, int sig)
{
	struct run r;

	prog_run(&r, mode, "1000");
	run(&r);
	CHECK(signaled(&r, sig));
	CHECK_STR(r.err, "");
	check_k_events(&r, NULL);
	run_free(&r);
}

/* A signal from outside, once the program has fired its events and says "ready". */
static void test_killed(int sig)
{
	struct run r;

	prog_run(&r, "wait", "1000");
	r.kill_sig = sig;
	r.check_caught = true;
	run(&r);
	CHECK(signaled(&r, sig));
	CHECK_STR(r.out, "ready\n");
	if (sig == SIGKILL) {
		/* The buffers die with the process. */
		check_no_output();
	} else {
		CHECK_STR(r.err, "");
		check_k_events(&r, NULL);
	}
	run_free(&r);
}

/* SIGTERM while three threads fire without end. */
static void test_killed_busy(void)
{
	char *trace = out_path("trace.txt");
	struct trace t;
	struct run r;

	prog_run(&r, "wait-busy", "1000");
	r.env[1] = "USERTP_OVERWRITE=0";
	r.kill_sig = SIGTERM;
	run(&r);
	CHECK(signaled(&r, SIGTERM));
	CHECK_STR(r.err, "");
	if (load(trace, &t, false)) {
		CHECK_INT(check_rec_events(&t, 0, 0, K, r.pid, "rec-prog"), ==, 0);
		CHECK_INT(count_named(&t, "rec_spin"), ==, t.nr_ev - K);
		check_busy_accounting(&t);
	}
	trace_free(&t);
	run_free(&r);
	free(trace);
}

/* The program's own SIGTERM handler stays its own: the handler runs, the program ends well. */
static void test_own_handler(void)
{
	struct run r;

	prog_run(&r, "handler", "1000");
	r.kill_sig = SIGTERM;
	run(&r);
	CHECK(exited(&r, 0));
	CHECK_STR(r.err, "");
	check_k_events(&r, "what=handled");
	run_free(&r);
}

/* SIGTERM ignored from the start (an inherited SIG_IGN) stays ignored. */
static void test_ignored(void)
{
	struct run r;

	prog_run(&r, "wait", "1000");
	r.ignore_term = true;
	r.check_ignored = true;
	r.kill_sig = SIGINT;
	run(&r);
	CHECK(signaled(&r, SIGINT));
	CHECK_STR(r.err, "");
	check_k_events(&r, NULL);
	run_free(&r);
}

/* --- fork ----------------------------------------------------------------------------------- */

/* A child forked without exec writes its own events to trace.<pid>.txt; the parent's file
 * has only the parent's. */
static void test_fork(void)
{
	char *outdir = xasprintf("%s/out", workdir), *parent = out_path("f.txt"), *child = NULL;
	char names[1024];
	struct trace t;
	struct run r;
	int child_pid = 0;

	prog_run(&r, "fork", "1000");
	r.env[1] = "USERTP_OUTPUT=f.txt"; /* relative: the child's name is built from it */
	run(&r);
	CHECK(exited(&r, 0));
	CHECK_STR(r.err, "");
	CHECK(sscanf(r.out, "child %d", &child_pid) == 1 && child_pid > 0);
	if (load(parent, &t, false)) {
		CHECK_INT(check_rec_events(&t, 0, 0, 2 * K, r.pid, "rec-prog"), ==, 0);
		CHECK_INT(t.nr_ev, ==, 2 * K);
	}
	trace_free(&t);
	child = xasprintf("%s/f.%d.txt", outdir, child_pid);
	if (load(child, &t, false)) {
		CHECK_INT(check_rec_events(&t, 1, 0, K, child_pid, "rec-prog"), ==, 0);
		CHECK_INT(t.nr_ev, ==, K);
		CHECK_INT(t.written, ==, K);
	}
	trace_free(&t);
	CHECK_INT(count_entries(outdir, names, sizeof(names)), ==, 2);
	run_free(&r);
	free(outdir);
	free(parent);
	free(child);
}

/* fork() while three threads fire without end: no deadlock, every child writes its file. */
static void test_fork_busy(void)
{
	const int forks = 20;
	char *outdir = xasprintf("%s/out", workdir), *p;
	struct trace t;
	struct run r;
	int nr_children = 0;

	prog_run(&r, "fork-busy", "20");
	r.env[1] = "USERTP_BUFFER_KB=64";
	run(&r);
	CHECK(exited(&r, 0));
	CHECK_STR(r.err, "");
	for (p = r.out; (p = strstr(p, "child ")); p++) {
		int pid = atoi(p + 6);
		char *path = xasprintf("%s/trace.%d.txt", outdir, pid);

		nr_children++;
		if (load(path, &t, false)) {
			/* Only the child's own events: none of the spinners' (not in the child). */
			CHECK_INT(check_rec_events(&t, 1, 0, 10, pid, "rec-prog"), ==, 0);
			CHECK_INT(t.nr_ev, ==, 10);
		}
		trace_free(&t);
		free(path);
	}
	CHECK_INT(nr_children, ==, forks);
	p = out_path("trace.txt");
	if (load(p, &t, false))
		CHECK_INT(count_named(&t, "rec_spin"), ==, t.nr_ev);
	trace_free(&t);
	free(p);
	CHECK_INT(count_entries(outdir, NULL, 0), ==, forks + 1);
	run_free(&r);
	free(outdir);
}

/* --- untraced ----------------------------------------------------------------------------- */

/*
 * Without USERTP_EVENTS the recorder does nothing: no file, no thread, no buffers, no signal
 * handler; nor with a bad setting (after its one line on stderr).  Traced, the same program
 * has the buffers and the handlers, and still no thread of the recorder's.  The thread count
 * allows for ThreadSanitizer's own background thread, and for the control endpoint's one
 * sleeping thread, which USERTP_CONTROL=0 takes away.
 */
enum untraced_case { UNTRACED, TRACED, BAD_SETTING, NO_CONTROL };

static void test_untraced(enum untraced_case which)
{
	const unsigned long long handlers = SIGBIT(SIGTERM) | SIGBIT(SIGINT) | SIGBIT(SIGHUP) |
					    SIGBIT(SIGQUIT) | SIGBIT(SIGABRT);
	const int created = 5;
	unsigned long long sigcgt = 0;
	int tasks = -1, buffers = -1, extra = 0;
	struct run r;

#if defined(__SANITIZE_THREAD__)
	extra = 1;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
	extra = 1;
#endif
#endif
	run_init_cmd(&r, rec_prog, "threads", "5");
	if (which == TRACED)
		r.env[0] = "USERTP_EVENTS=rec:*";
	if (which == BAD_SETTING)
		r.env[0] = "USERTP_EVENTS=a:b:c";
	if (which == NO_CONTROL)
		r.env[0] = "USERTP_CONTROL=0";
	run(&r);
	CHECK(exited(&r, 0));
	if (which == BAD_SETTING)
		CHECK(!strncmp(r.err, "usertp: USERTP_EVENTS=a:b:c: ", 29) &&
		      strchr(r.err, '\n') == r.err + strlen(r.err) - 1);
	else
		CHECK_STR(r.err, "");
	CHECK(sscanf(r.out, "tasks=%d buffers=%d sigcgt=%llx", &tasks, &buffers, &sigcgt) == 3);
	CHECK_INT(tasks, ==, created + 1 + extra + (which == NO_CONTROL ? 0 : 1));
	CHECK_INT(buffers, ==, which == TRACED ? 1 : 0);
	CHECK_INT(sigcgt & handlers, ==, which == TRACED ? handlers : 0);
	if (which == TRACED) {
		char *trace = out_path("trace.txt");
		struct trace t;

		if (load(trace, &t, false)) {
			CHECK_INT(check_rec_events(&t, 0, 0, 10, r.pid, "rec-prog"), ==, 0);
			CHECK_INT(count_named(&t, "rec_spin"), ==, created);
		}
		trace_free(&t);
		free(trace);
	} else {
		check_no_output();
	}
	run_free(&r);
}

/*
 * While recording, a module with events stays mapped after dlclose(), and its events are
 * printed at exit with its own TP_printk; untraced, dlclose() unmaps it as usual.
 */
static void test_dlclose(enum untraced_case which)
{
	int mapped = -1;
	struct run r;

	run_init_cmd(&r, rec_prog, "dlclose", "50");
	r.argv[3] = rec_mod;
	if (which == TRACED)
		r.env[0] = "USERTP_EVENTS=recmod:*";
	if (which == BAD_SETTING)
		r.env[0] = "USERTP_EVENTS=a:b:c";
	run(&r);
	CHECK(exited(&r, 0));
	CHECK(sscanf(r.out, "mapped=%d", &mapped) == 1);
	CHECK_INT(mapped, ==, which == TRACED ? 1 : 0);
	if (which == TRACED) {
		char *trace = out_path("trace.txt");
		struct trace t;
		size_t i, bad = 0;

		CHECK_STR(r.err, "");
		if (load(trace, &t, false)) {
			CHECK_INT(t.nr_ev, ==, 50);
			for (i = 0; i < t.nr_ev; i++) {
				char want[64];

				snprintf(want, sizeof(want), "n=%zu (printed by rec-mod)", i);
				if ((strcmp(t.ev[i].name, "mod_event") || strcmp(t.ev[i].text, want)) &&
				    !bad++)
					fprintf(stderr, "line %zu: %s: %s\n", i, t.ev[i].name,
						t.ev[i].text);
			}
			CHECK_INT(bad, ==, 0);
		}
		trace_free(&t);
		free(trace);
	} else {
		check_no_output();
	}
	run_free(&r);
}

/* rec-prog linked with libusertp.a: the recorder is there as well. */
static void test_static(void)
{
	run_quiet(rec_prog_static, "return", "what=atexit");
}

/* --- main --------------------------------------------------------------------------------- */

static const struct {
	const char *name;
	void (*fn)(void);
} simple_tests[] = {
	{ "bad-settings", test_bad_settings },
	{ "settings-ignored", test_settings_ignored },
	{ "events-nomatch", test_events_nomatch },
	{ "good-settings", test_good_settings },
	{ "tsc", test_tsc },
	{ "relative-output", test_relative_output },
	{ "exit-return", test_exit_return },
	{ "exit-thread", test_exit_thread },
	{ "exit-_exit", test_underscore_exit },
	{ "sig-handler", test_own_handler },
	{ "sig-ignored", test_ignored },
	{ "sig-term-busy", test_killed_busy },
	{ "fork", test_fork },
	{ "fork-busy", test_fork_busy },
};

int main(int argc, char **argv)
{
	const char *test, *tmp = getenv("TMPDIR");
	char *outdir;
	size_t i;

	if (argc != 6) {
		fprintf(stderr, "usage: %s WORKER-POOL REC-PROG REC-PROG-STATIC REC-MOD TEST\n",
			argv[0]);
		return 2;
	}
	/* Absolute (and as /proc/self/maps names them): the programs run elsewhere. */
	worker_pool = realpath(argv[1], NULL);
	rec_prog = realpath(argv[2], NULL);
	rec_prog_static = realpath(argv[3], NULL);
	rec_mod = realpath(argv[4], NULL);
	if (!worker_pool || !rec_prog || !rec_prog_static || !rec_mod) {
		fprintf(stderr, "%s: a program is missing\n", argv[0]);
		return 2;
	}
	test = argv[5];
	snprintf(workdir, sizeof(workdir), "%s/usertp-recorder-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(workdir)) {
		perror(workdir);
		return 1;
	}
	outdir = xasprintf("%s/out", workdir);
	make_dir(outdir);
	free(outdir);

	if (!strcmp(test, "pool-4"))
		test_pool(4, 2000);
	else if (!strcmp(test, "pool-1"))
		test_pool(1, 2000);
	else if (!strcmp(test, "pool-overwrite"))
		test_pool_small(true);
	else if (!strcmp(test, "pool-no-overwrite"))
		test_pool_small(false);
	else if (!strcmp(test, "seq-overwrite"))
		test_seq_small(true, "seq", 0, 5000);
	else if (!strcmp(test, "seq-no-overwrite"))
		test_seq_small(false, "spin", 0, 5000);
	else if (!strcmp(test, "spin-overwrite"))
		test_seq_small(true, "spin", 0, 5000);
	else if (!strcmp(test, "page-exact-overwrite"))
		test_seq_small(true, "seq", 3, 0); /* 3 full pages: all fit */
	else if (!strcmp(test, "page-exact-overwrite-wrap"))
		test_seq_small(true, "seq", 4, 0); /* 4 full pages: the newest 3 survive */
	else if (!strcmp(test, "page-exact-no-overwrite"))
		test_seq_small(false, "seq", 3, 90); /* 3 full pages kept, 90 dropped */
	else if (!strcmp(test, "mixed-no-overwrite"))
		test_mixed_no_overwrite();
	else if (!strcmp(test, "sig-segv"))
		test_raised("segv", SIGSEGV);
	else if (!strcmp(test, "sig-segv-fault"))
		test_raised("segv-fault", SIGSEGV);
	else if (!strcmp(test, "sig-abort"))
		test_raised("abort", SIGABRT);
	else if (!strcmp(test, "sig-term"))
		test_killed(SIGTERM);
	else if (!strcmp(test, "sig-int"))
		test_killed(SIGINT);
	else if (!strcmp(test, "sig-hup"))
		test_killed(SIGHUP);
	else if (!strcmp(test, "sig-quit"))
		test_killed(SIGQUIT);
	else if (!strcmp(test, "sig-kill"))
		test_killed(SIGKILL);
	else if (!strcmp(test, "untraced"))
		test_untraced(UNTRACED);
	else if (!strcmp(test, "untraced-control"))
		test_untraced(TRACED);
	else if (!strcmp(test, "untraced-bad"))
		test_untraced(BAD_SETTING);
	else if (!strcmp(test, "untraced-nocontrol"))
		test_untraced(NO_CONTROL);
	else if (!strcmp(test, "dlclose"))
		test_dlclose(TRACED);
	else if (!strcmp(test, "dlclose-untraced"))
		test_dlclose(UNTRACED);
	else if (!strcmp(test, "dlclose-bad"))
		test_dlclose(BAD_SETTING);
	else if (!strcmp(test, "static"))
		test_static();
	else {
		for (i = 0; i < sizeof(simple_tests) / sizeof(simple_tests[0]); i++)
			if (!strcmp(test, simple_tests[i].name))
				break;
		if (i == sizeof(simple_tests) / sizeof(simple_tests[0])) {
			fprintf(stderr, "unknown test %s\n", test);
			return 2;
		}
		simple_tests[i].fn();
	}
	free_kept();
	free((void *)worker_pool);
	free((void *)rec_prog);
	free((void *)rec_prog_static);
	free((void *)rec_mod);
	if (harness_failed)
		printf("files kept in %s\n", workdir);
	else
		remove_tree(workdir);
	return harness_done();
}
