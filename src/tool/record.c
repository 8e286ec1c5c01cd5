/* SPDX-License-Identifier: MIT */
/*
 * record.c - usertp record: record events of running programs into a trace.dat file; and
 * usertp stream: print them live, as usertp report prints them afterwards.
 *
 *	usertp record -e SPEC [-f FILTER]... [-o FILE] [-b KIB] [--overwrite] [-C CLOCK] [-q]
 *		      (-P PID... | -a | -- CMD ARGS...)
 *	usertp stream -e SPEC [-f FILTER]... [-b KIB] [-C CLOCK] [-q] (-P PID... | -a | -- CMD)
 *
 * A command line over one libusertp-consumer session in file mode (usertp/consumer.h):
 * -P attaches to programs, -a to every program of the user, -- runs a command in the session;
 * the session writes the file (src/consumer/dat-writer.c).  This file holds the options, the
 * signals, the status line, the messages and the exit status.
 *
 * Recording stops on Ctrl-C, SIGTERM, the end of CMD, or (with -P) when every program has gone.
 *
 * Specs that name a kernel system (sched:sched_switch, irq) are the kernel's: the session
 * records them in a tracefs instance of its own (usertp_session_enable(3)), merged into the
 * same file.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <usertp/consumer.h>

#include "elf-events.h"
#include "proc.h"
#include "report-line.h"
#include "private/usertp-consumer-private.h"
#include "number.h"
#include "filter.h"
#include "net-send.h"
#include "pid-list.h"
#include "ring-buffer.h"
#include "spec.h"
#include "tool.h"
#include "tsc2nsec.h"

#define RECORDER_NICE (-10)
#define MAX_SPECS 256

static const char usage_text[] =
	"usage: usertp record -e SPEC [-e SPEC]... [options] (-P PID... | -a | -- CMD [ARGS...])\n"
	"  -e SPEC        events: sys:event, sys:*, *:event, event or sys, globs (sys:io_*),\n"
	"                 all; !SPEC leaves out\n"
	"  -f FILTER      filter of the -e before it, in the kernel's grammar ('id > 5'),\n"
	"                 run in the programs before anything is stored\n"
	"  -o FILE        output (default trace.dat)\n"
	"  -N HOST:PORT   send the recording to trace-cmd listen there, when it ends (with\n"
	"                 -o FILE: FILE kept here too)\n"
	"  -b KIB         buffer size per CPU and program, in KiB (default 1408)\n"
	"  -m KIB         keep at most about KIB per CPU and program, the oldest pages\n"
	"                 dropped as it goes (counted lost), as trace-cmd record -m\n"
	"  -P PID         record a running program (repeatable)\n"
	"  -a             record every program of this user, also those that start later\n"
	"  --pid TID[,TID]...  only the events of these threads (set_event_pid; repeatable)\n"
	"  --notrace-pid TID[,TID]...  none of these threads' events (set_event_notrace_pid)\n"
	"  -F             with -- CMD: only the events of CMD's own thread (trace-cmd's -F)\n"
	"  -c             follow: threads and children of listed threads are listed too\n"
	"                 (the event-fork option; with --pid or -F)\n"
	"  --overwrite    flight recorder: keep only the latest data, written at the end\n"
	"  -C CLOCK       mono, x86-tsc (ticks) or tsc2nsec (ticks, written as\n"
	"                 CLOCK_MONOTONIC nanoseconds; the default where the TSC is invariant)\n"
	"  --date         times printed as wall-clock time (the file's DATE option)\n"
	"  --rotate-size SIZE  a new file each SIZE bytes recorded (k, M, G: KiB, MiB, GiB):\n"
	"                 FILE.1, FILE.2, ..., each complete once closed\n"
	"  --rotate-time SECS  a new file each SECS seconds\n"
	"  --rotate-keep N  keep the last N files, removing older ones\n"
	"  --snapshot-on 'SPEC[ if FILTER]'  a flight recorder (--overwrite) that writes what\n"
	"                 it holds to FILE.1, FILE.2, ... each time such an event fires\n"
	"                 (SIGUSR2, or usertp snapshot, asks for one too)\n"
	"  --snapshot-after MS  the snapshot MS milliseconds after its trigger\n"
	"  --snapshots N  at most N snapshots\n"
	"  -s USECS       how often buffers are read (default 10000)\n"
	"  -q             quiet: no status line, no summary (errors and warnings stay)\n"
	"  --file-version N  trace.dat version 6 (default: every reader opens it) or 7\n"
	"  --compression none|zstd  zstd: compressed, about 7x smaller (version 7, implied)\n"
	"  --recover DIR  write the spool DIR of a recorder that was killed into a trace.dat\n"
	"  --allow-missing  events CMD and its libraries (with -P: the programs now) do not\n"
	"                 define are not refused at the start (libraries loaded later with\n"
	"                 dlopen(), programs run); named at the end if none came\n"
	"  -- CMD ARGS    run CMD and record it (and its children)\n";

static const char stream_usage_text[] =
	"usage: usertp stream -e SPEC [-e SPEC]... [options] (-P PID... | -a | -- CMD [ARGS...])\n"
	"  prints the events live, in the lines of usertp report (trace-cmd stream's way);\n"
	"  the options of usertp record that choose what is recorded and how:\n"
	"  -e SPEC, -f FILTER, -b KIB, -P PID, -a, --pid, --notrace-pid, -F, -c, -C CLOCK,\n"
	"  -s USECS, --allow-missing, -- CMD ARGS; -q: no summary at the end\n";

static struct {
	const char *name; /* "record", or "stream" (usertp__cmd_stream()) */
	bool stream;
	/* options */
	const char *specs[MAX_SPECS];
	unsigned int nr_specs;
	const char *filters[MAX_SPECS]; /* -f: the filter of specs[i] (NULL: none) */
	unsigned int last_e;		/* specs of the last -e: from here to nr_specs */
	const char *output;
	unsigned long kb;
	bool overwrite, all, quiet;
	struct usertp__clock_choice clock; /* -C, or the default (tsc2nsec.h) */
	unsigned int interval_us;
	pid_t *pids;
	unsigned int nr_pids;
	struct usertp__pid_list trace_pids, notrace_pids; /* --pid, --notrace-pid */
	bool filter_cmd, event_fork;			  /* -F, -c */
	bool allow_missing;				  /* --allow-missing */
	bool stopped_at_start; /* the command refused a filter before its main() */
	char **cmd;
	const char *recover; /* --recover DIR */
	bool output_given;
	const char *net;		  /* -N HOST:PORT (NULL: not given) */
	struct usertp__listener listener; /* -N's, resolved */
	char net_spool[PATH_MAX];	  /* -N: the file recorded, sent at the end */
	unsigned int file_version; /* --file-version (0: not given) */
	const char *compression;   /* --compression (NULL: not given) */
	bool date;		   /* --date */
	uint64_t limit_kb;		   /* -m (0: none) */
	uint64_t rotate_size, rotate_secs; /* --rotate-size, --rotate-time (0: not given) */
	unsigned int rotate_keep;	   /* --rotate-keep (0: all) */
	unsigned int part;		   /* rotating: the number of the file being written */
	uint64_t part_bytes_at;		   /* the session's bytes when it began */
	double part_started;		   /* elapsed() when it began */
	uint64_t parts_events, parts_lost; /* in the files closed */
	unsigned int rotate_failed;	   /* rotations that could not write their file */
	/* snapshots (--snapshot-on, SIGUSR2): FILE.N, N = snapshots + 1 */
	const char *snapshot_on;	   /* its spec, and filter (after " if ") */
	char snapshot_spec[512];
	const char *snapshot_filter;
	uint64_t snapshot_after_ms, snapshots_max;
	struct usertp_session *trigger;	   /* reading the trigger event alone */
	bool trigger_refused;		   /* its filter stopped the command before main() */
	unsigned int snapshots;		   /* written */
	double snapshot_due[64];	   /* elapsed() when each one asked for is due, in order */
	unsigned int snapshots_pending;

	/* which specs are the kernel's (kernel_specs_check()) */
	bool spec_kernel[MAX_SPECS];
	bool kernel;

	/* state */
	struct usertp_session *session;
	int sig_fd;
	pid_t child;
	int child_status;
	bool child_done, stop;
	int stop_signal; /* what ended the recording: SIGINT, SIGTERM, SIGHUP (0: the programs) */
	int write_error; /* the session's, once said */
	unsigned int untraced; /* programs of -P that could not be recorded */
	int nice;	 /* ours before raise_priority() */
	struct timespec start;
	/* stream: the printer, and what it printed and found lost, per CPU */
	struct usertp__report_line line;
	pid_t last_tid;
	uint64_t printed[USERTP_MERGE_MAX_CPUS], lost[USERTP_MERGE_MAX_CPUS], unknown;
} rec = { .name = "record", .output = "trace.dat", .kb = USERTP_RB_DEFAULT_KB, .interval_us = 10000, .sig_fd = -1 };

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "usertp %s: ", rec.name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* What the session says of its programs. */
static void session_log(const char *line, void *arg)
{
	(void)arg;
	fail("%s", line);
}

/*
 * Check every spec that selects something against the events the programs told of.  Each
 * that matches none is named, with what is close, after @prefix.  Return: true when all match.
 */
static bool specs_check(const char *prefix, const char *who)
{
	bool ok = true;

	for (unsigned int i = 0; i < rec.nr_specs; i++) {
		const char *spec = rec.specs[i];
		char close[512];

		if (spec[0] == '!' || rec.spec_kernel[i] ||
		    usertp_session_spec_seen(rec.session, spec, close, sizeof(close)))
			continue;
		ok = false;
		fprintf(stderr, "usertp %s: %sno event %s in %s", rec.name, prefix, spec, who);
		if (close[0])
			fprintf(stderr, "; close matches: %s", close);
		fputc('\n', stderr);
	}
	return ok;
}

/* --- status ------------------------------------------------------------------------------- */

static double elapsed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - rec.start.tv_sec) + (double)(now.tv_nsec - rec.start.tv_nsec) / 1e9;
}

/*
 * The status line lives on the terminal's last row, kept out of the scrolling region, so
 * that what the programs print (on the same terminal) never runs into it: the region is set
 * to the rows above it at the start and given back at the end.  Without the terminal's size,
 * each status is a line of its own.
 */
static void status_line(bool final)
{
	static unsigned short rows;
	struct usertp_session_status st = USERTP_STRUCT_INIT(usertp_session_status);
	char text[256];
	struct winsize ws;

	usertp_session_status(rec.session, &st);
	snprintf(text, sizeof(text), "usertp record: %.0fs  %u program%s  %llu events  %.1f MB  %llu lost",
		 elapsed(), st.running, st.running == 1 ? "" : "s", (unsigned long long)st.events,
		 (double)st.bytes / 1e6, (unsigned long long)st.dropped);
	if (!rows && !ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_row > 2) {
		rows = ws.ws_row;
		/* Room for it below the cursor, then the scrolling region above it. */
		fprintf(stderr, "\n\0337\033[1;%ur\0338\033[1A", rows - 1u);
	}
	if (!rows) {
		/* A terminal of no known size: whole lines, that nothing can run into. */
		fprintf(stderr, "%s\n", text);
	} else if (!final) {
		fprintf(stderr, "\0337\033[%u;1H\033[K%s\0338", (unsigned int)rows, text);
	} else {
		/* The whole screen scrolls again; the last status stays, on its own line. */
		fprintf(stderr, "\0337\033[r\033[%u;1H\033[K\0338%s\n", (unsigned int)rows, text);
		rows = 0;
	}
	fflush(stderr);
}

/* --- snapshots ----------------------------------------------------------------------------- */

/* A snapshot asked for (@why: what asked): due now, or --snapshot-after from now. */
static void snapshot_asked(const char *why)
{
	if (!rec.overwrite || rec.stream) {
		static bool said;

		if (!said)
			fail("%s: a snapshot is of a flight recorder (--overwrite or --snapshot-on); "
			     "none taken", why);
		said = true;
		return;
	}
	/* (More asked for than can wait: the later ones are taken by the ones waiting.) */
	if ((rec.snapshots_max && rec.snapshots + rec.snapshots_pending >= rec.snapshots_max) ||
	    rec.snapshots_pending == sizeof(rec.snapshot_due) / sizeof(rec.snapshot_due[0]))
		return;
	rec.snapshot_due[rec.snapshots_pending++] = elapsed() + (double)rec.snapshot_after_ms / 1000;
}

/* FILE.N: what the programs hold now. */
static void snapshot_take(void)
{
	struct usertp_dat_summary sum = { .struct_size = sizeof(sum) };
	char path[PATH_MAX];

	memmove(rec.snapshot_due, rec.snapshot_due + 1,
		--rec.snapshots_pending * sizeof(rec.snapshot_due[0]));
	snprintf(path, sizeof(path), "%s.%u", rec.output, rec.snapshots + 1);
	if (usertp_session_snapshot(rec.session, path, &sum)) {
		fail("%s", usertp_session_error(rec.session));
		return;
	}
	rec.snapshots++;
	if (!rec.quiet)
		fprintf(stderr, "usertp record: snapshot %s: %llu events, %llu lost, %.1f MB\n",
			sum.output, (unsigned long long)sum.events, (unsigned long long)sum.lost,
			(double)sum.bytes / 1e6);
}

/*
 * --snapshot-on: a session of its own reads the trigger event alone (its filter run in the
 * programs, as every filter); the flight recorder's session reads nothing until it is asked.
 */
static bool trigger_start(void)
{
	struct usertp_session_options opts = { .struct_size = sizeof(opts), .buffer_kb = 64 };
	char err[8192];

	if (usertp_session_new(&rec.trigger, &opts)) {
		fail("--snapshot-on: cannot make its session");
		return false;
	}
	usertp_session_set_log(rec.trigger, session_log, NULL);
	if ((rec.snapshot_filter && usertp_session_set_filter(rec.trigger, rec.snapshot_spec,
							     rec.snapshot_filter, err, sizeof(err))) ||
	    usertp_session_enable(rec.trigger, rec.snapshot_spec)) {
		fail("--snapshot-on: %s", usertp_session_error(rec.trigger));
		return false;
	}
	for (unsigned int i = 0; i < rec.nr_pids; i++)
		usertp_session_attach_pid(rec.trigger, rec.pids[i]);
	if (rec.all && usertp_session_attach_all(rec.trigger)) {
		fail("--snapshot-on: %s", usertp_session_error(rec.trigger));
		return false;
	}
	if (rec.cmd)
		usertp_session_run_also(rec.session, rec.trigger);
	return true;
}

/* A turn of the loop: the trigger's records, and the snapshot when it is due. */
static void snapshots_turn(void)
{
	struct usertp_record r = USERTP_STRUCT_INIT(usertp_record);

	if (rec.trigger) {
		if (usertp_session_process(rec.trigger, 0) == -ECANCELED) {
			/* Its filter does not fit the command's event: stopped before main(). */
			rec.trigger_refused = true;
			rec.stop = true;
			return;
		}
		while (usertp_session_next(rec.trigger, &r, 0) == 1)
			if (r.event)
				snapshot_asked(rec.snapshot_on);
	}
	while (rec.snapshots_pending && elapsed() >= rec.snapshot_due[0])
		snapshot_take();
}

/* --- the run ------------------------------------------------------------------------------ */

static int signals_open(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGUSR2); /* a snapshot (usertp snapshot) */
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	rec.sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return rec.sig_fd < 0 ? -errno : 0;
}

static void on_signals(void)
{
	struct signalfd_siginfo si;

	while (read(rec.sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR2) {
			snapshot_asked("SIGUSR2");
			continue;
		}
		if (si.ssi_signo != SIGCHLD) {
			rec.stop = true;
			if (!rec.stop_signal)
				rec.stop_signal = (int)si.ssi_signo;
			continue;
		}
		/*
		 * The command; and under -- its descendants that outlived their parent, ours as
		 * their subreaper, that end: reaped, not left as zombies (a script that leaves
		 * many would use up the pids).  (The recorder has no other thread, and waits for
		 * the children it forks itself before going on: none of theirs is taken here.)
		 */
		while (rec.child > 0) {
			int status;
			pid_t pid = waitpid(-1, &status, WNOHANG);

			if (pid <= 0)
				break;
			if (pid == rec.child && !rec.child_done) {
				rec.child_done = true;
				rec.child_status = status;
			}
		}
	}
}

/*
 * Reading must keep up with bursts on a busy machine: the recorder takes a higher priority
 * (nice -10) where it may (root, or RLIMIT_NICE), once the command it starts has its own.
 */
static void raise_priority(void)
{
	errno = 0;
	rec.nice = getpriority(PRIO_PROCESS, 0);
	if (errno || rec.nice <= RECORDER_NICE)
		return;
	if (setpriority(PRIO_PROCESS, 0, RECORDER_NICE))
		return; /* not allowed: as it was */
}

/*
 * A spool that could not be written (a full disk...): the session stops reading, and what
 * the spools hold is merged into the output at the end.  Under -- CMD the command runs on to
 * its end (its status is passed on): what its programs fire meanwhile is dropped by their
 * buffers, and counted.  Otherwise recording stops.
 */
static void check_write_error(const struct usertp_session_status *st)
{
	if (!st->write_error || rec.write_error)
		return;
	rec.write_error = st->write_error;
	if (!rec.cmd)
		rec.stop = true;
	fail("%s; %s", usertp_session_error(rec.session),
	     rec.cmd ? "events are no longer read (they are counted lost) until the command ends"
		     : "recording stops");
}

/* --- rotation: numbered files ----------------------------------------------------------- */

/* The name of file @n of a rotating recording: -o's, then ".N". */
static void part_path(char *buf, size_t size, unsigned int n)
{
	snprintf(buf, size, "%s.%u", rec.output, n);
}

/* The file of part @closed is written: with --rotate-keep N, the one N before it goes. */
static void parts_keep(unsigned int closed)
{
	char old[PATH_MAX];

	if (!rec.rotate_keep || closed <= rec.rotate_keep)
		return;
	part_path(old, sizeof(old), closed - rec.rotate_keep);
	if (unlink(old) && errno != ENOENT)
		fail("warning: cannot remove %s: %s", old, strerror(errno));
}

/* Close the file being written, its counts said, and go on into the next one. */
static void rotate(const struct usertp_session_status *st)
{
	struct usertp_dat_summary sum = { .struct_size = sizeof(sum) };
	char next[PATH_MAX];

	part_path(next, sizeof(next), rec.part + 1);
	if (usertp_session_rotate(rec.session, next, &sum)) {
		/*
		 * Its pages stay in the spool: the next rotation (another size or time on) or the
		 * end writes them.  Said once (a full disk fails each time).
		 */
		if (!rec.rotate_failed++)
			fail("%s (tried again at the next rotation; later failures are not said)",
			     usertp_session_error(rec.session));
		rec.part_bytes_at = st->bytes;
		rec.part_started = elapsed();
		return;
	}
	if (!rec.quiet)
		fprintf(stderr, "usertp record: %s: %llu events, %llu lost, %.1f MB\n", sum.output,
			(unsigned long long)sum.events, (unsigned long long)sum.lost,
			(double)sum.bytes / 1e6);
	rec.parts_events += sum.events;
	rec.parts_lost += sum.lost;
	parts_keep(rec.part);
	rec.part++;
	rec.part_bytes_at = st->bytes;
	rec.part_started = elapsed();
}

/* --- stream: the records as usertp report prints them ------------------------------------ */

/*
 * A thread's first record: its name from /proc, as the kernel saves a task's name as it
 * records (a program tells its threads' names once a second).
 */
static void stream_name(struct tep_handle *tep, pid_t tid)
{
	char comm[17];

	if (tid == rec.last_tid)
		return;
	rec.last_tid = tid;
	if (tid <= 0 || tep_is_pid_registered(tep, tid))
		return;
	if (!usertp__proc_comm(tid, 0, comm, sizeof(comm)) && comm[0]) {
		tep_register_comm(tep, comm, tid);
		usertp__report_line_forget_comm(&rec.line);
	}
}

static void stream_print(const struct usertp_record *r)
{
	struct tep_handle *tep = usertp_session_tep(rec.session);
	/* (x86-tsc prints ticks, as a file of them does) */
	struct usertp__line_style style = {
		.usecs = rec.clock.buffers != USERTP_RB_CLOCK_TSC || rec.clock.tsc2nsec };
	unsigned int cpu = r->cpu < USERTP_MERGE_MAX_CPUS ? r->cpu : USERTP_MERGE_MAX_CPUS - 1;
	struct tep_record tr = { .ts = r->ts, .cpu = (int)r->cpu, .data = (void *)r->data,
				 .size = (int)r->size, .record_size = (int)r->size,
				 .missed_events = (long long)r->lost_before };

	if (!r->event) {
		/* Its format never came, or was refused: lost, as a file counts it. */
		if (!rec.unknown++)
			fail("warning: records of an event whose format did not come are counted "
			     "lost (later ones are not said)");
		rec.lost[cpu]++;
		return;
	}
	stream_name(tep, r->tid);
	usertp__report_line_print(stdout, &rec.line, tep, &tr, &style);
	rec.printed[cpu]++;
}

/* Print what the session has, waiting up to @timeout_ms for the first.  Return: false when
 * nothing more can come (-ENODATA) or nothing came in time. */
static bool stream_drain(int timeout_ms)
{
	struct usertp_record r = USERTP_STRUCT_INIT(usertp_record);
	bool any = false;
	int ret;

	while ((ret = usertp_session_next(rec.session, &r, timeout_ms)) == 1) {
		stream_print(&r);
		timeout_ms = 0;
		any = true;
	}
	fflush(stdout);
	return ret != -ENODATA && any;
}

/*
 * The end: the programs stop recording for us (tracing off, as trace-cmd stream's end), what
 * they recorded is printed, then the summary: per CPU, printed + lost = fired.
 */
static void stream_end(void)
{
	uint64_t events = 0, lost = 0;
	unsigned int nr_cpus = 0;

	usertp_session_set_tracing(rec.session, false);
	while (stream_drain(20))
		;
	for (unsigned int i = 0; i < usertp_session_nr_programs(rec.session); i++) {
		struct usertp_program_info pi = USERTP_STRUCT_INIT(usertp_program_info);

		if (usertp_session_program(rec.session, i, &pi))
			continue;
		for (unsigned int cpu = 0; cpu < pi.nr_cpus && cpu < USERTP_MERGE_MAX_CPUS; cpu++) {
			struct usertp_cpu_stats cs = USERTP_STRUCT_INIT(usertp_cpu_stats);

			if (!usertp_session_cpu_stats(rec.session, i, cpu, &cs))
				rec.lost[cpu] += cs.dropped + cs.overrun;
		}
		if (pi.nr_cpus > nr_cpus)
			nr_cpus = pi.nr_cpus;
	}
	for (unsigned int cpu = 0; cpu < nr_cpus && cpu < USERTP_MERGE_MAX_CPUS; cpu++) {
		events += rec.printed[cpu];
		lost += rec.lost[cpu];
		if (!rec.quiet)
			fprintf(stderr, "  CPU %u: %llu events, %llu lost\n", cpu,
				(unsigned long long)rec.printed[cpu], (unsigned long long)rec.lost[cpu]);
	}
	if (!rec.quiet)
		fprintf(stderr, "usertp stream: %u program%s, %llu events, %llu lost\n",
			usertp_session_nr_programs(rec.session),
			usertp_session_nr_programs(rec.session) == 1 ? "" : "s",
			(unsigned long long)events, (unsigned long long)lost);
}

static void loop(void)
{
	double last_status = 0;
	bool tty = isatty(STDERR_FILENO) && !rec.quiet && !rec.stream;

	while (!rec.stop) {
		struct pollfd pfd[2] = { { usertp_session_fd(rec.session), POLLIN, 0 },
					 { rec.sig_fd, POLLIN, 0 } };
		struct usertp_session_status st = USERTP_STRUCT_INIT(usertp_session_status);

		poll(pfd, 2, (int)(rec.interval_us / 1000) ? (int)(rec.interval_us / 1000) : 1);
		if (pfd[1].revents)
			on_signals();
		if (usertp_session_process(rec.session, 0) == -ECANCELED) {
			rec.stopped_at_start = true; /* (the command is stopped: said at the end) */
			break;
		}
		if (rec.stream)
			stream_drain(0);
		snapshots_turn();
		usertp_session_status(rec.session, &st);
		check_write_error(&st);
		if (rec.part && ((rec.rotate_size && st.bytes - rec.part_bytes_at >= rec.rotate_size) ||
				 (rec.rotate_secs && elapsed() - rec.part_started >= (double)rec.rotate_secs))) {
			rotate(&st);
			usertp_session_status(rec.session, &st);
		}
		if (tty && elapsed() - last_status >= 1.0) {
			last_status = elapsed();
			status_line(false);
		}
		/* The end of CMD ends the recording; with -P, the end of every program. */
		if (rec.child > 0 && rec.child_done)
			rec.stop = true;
		if (rec.nr_pids && !rec.child && !rec.all && !st.running && st.programs)
			rec.stop = true;
	}
	if (tty)
		status_line(true);
}

/* The per-CPU counts of the summary (the most CPUs a file has). */
static uint64_t sum_events[USERTP_MERGE_MAX_CPUS], sum_lost[USERTP_MERGE_MAX_CPUS];
#define SUMMARY_INIT                                                                               \
	{ .struct_size = sizeof(struct usertp_dat_summary), .cpu_events = sum_events,              \
	  .cpu_lost = sum_lost, .max_cpus = USERTP_MERGE_MAX_CPUS }

/*
 * Under --, the command ended and left processes running: a daemon's child.  The recording
 * ended with the command, as trace-cmd's and perf's do.  Each is said once, with whether it
 * was recorded until then (a program that had joined) and how to record it on.  Those whose
 * parent ended are found as ours (the recorder is the command's descendants' subreaper:
 * PR_SET_CHILD_SUBREAPER), whether or not they had joined; the session knows the others.
 */
static bool *left_was_running; /* by program: running at the command's end (left_running_note()) */
static unsigned int left_nr_noted;

/* Before the session ends: which of its programs were running at the command's end. */
static void left_running_note(void)
{
	struct usertp_program_info info = USERTP_STRUCT_INIT(usertp_program_info);
	unsigned int n = usertp_session_nr_programs(rec.session);

	if (!rec.cmd || !rec.child_done || rec.quiet || rec.stop_signal ||
	    !(left_was_running = calloc(n + 1, sizeof(*left_was_running))))
		return;
	for (left_nr_noted = 0; left_nr_noted < n; left_nr_noted++)
		left_was_running[left_nr_noted] =
			!usertp_session_program(rec.session, left_nr_noted, &info) && info.running;
}

/*
 * Once it has ended (after left_running_note()): those left running.  The end takes the
 * children that told the recorder of themselves before it (a daemon's child, heard of only
 * then: recorded until the command's end too, and said so, not "not recorded").
 */
static void left_running_say(void)
{
	struct usertp_program_info info = USERTP_STRUCT_INIT(usertp_program_info);
	unsigned int i, j, n = usertp_session_nr_programs(rec.session);
	pid_t self = getpid();
	struct dirent *de;
	DIR *d;

	if (!left_was_running)
		return;
	/* What the session recorded, running still (once a process: exec'd, it is several). */
	for (i = 0; i < n; i++) {
		struct usertp_program_info later = USERTP_STRUCT_INIT(usertp_program_info);
		bool said_later = false;

		if (usertp_session_program(rec.session, i, &info) ||
		    (i < left_nr_noted && !left_was_running[i]) || info.pid == rec.child ||
		    !usertp__proc_runs(info.pid))
			continue;
		for (j = i + 1; j < n && !said_later; j++)
			said_later = !usertp_session_program(rec.session, j, &later) &&
				     later.pid == info.pid;
		if (said_later)
			continue;
		fprintf(stderr,
			"usertp record: %s[%d], forked by the command, still runs: recorded until "
			"the command's end; to record it on: usertp record -P %d (or -a)\n",
			info.comm, (int)info.pid, (int)info.pid);
	}
	/* The others the command left, as ours now: never joined (they had not by then). */
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		char *end, comm[17];
		long pid = strtol(de->d_name, &end, 10);
		bool known = false;

		if (*end || pid <= 0 || pid == rec.child || usertp__proc_parent((pid_t)pid) != self ||
		    !usertp__proc_runs((pid_t)pid))
			continue;
		for (i = 0; i < n && !known; i++)
			known = !usertp_session_program(rec.session, i, &info) && info.pid == pid;
		if (known || usertp__proc_comm((pid_t)pid, 0, comm, sizeof(comm)))
			continue;
		fprintf(stderr,
			"usertp record: %s[%ld], left running by the command, was not recorded (it "
			"had not joined by the command's end); if it uses libusertp, usertp record "
			"-P %ld (or -a) records it\n",
			comm, pid, pid);
	}
	if (d)
		closedir(d);
	free(left_was_running);
	left_was_running = NULL;
}

/* The summary of what the file holds (-q: none). */
static void summary(const struct usertp_dat_summary *sum, bool at_least)
{
	uint64_t total = sum->events, lost = sum->lost;

	for (unsigned int cpu = 0; cpu < sum->nr_cpus && cpu < sum->max_cpus; cpu++)
		if (!rec.quiet)
			fprintf(stderr, "  CPU %u: %llu events, %llu lost\n", cpu,
				(unsigned long long)sum->cpu_events[cpu],
				(unsigned long long)sum->cpu_lost[cpu]);
	/* -q: no status line, no summary (as trace-cmd record -q); errors and warnings stay. */
	if (!rec.quiet)
		fprintf(stderr, "usertp record: %u program%s, %llu events, %llu lost%s, %s: %.1f MB\n",
			sum->programs, sum->programs == 1 ? "" : "s", (unsigned long long)total,
			(unsigned long long)lost, at_least ? " at least (as marked in the pages)" : "",
			sum->output, (double)sum->bytes / 1e6);
}

/* --- the kernel's events ----------------------------------------------------------------- */

static void say_leftover(const char *name)
{
	fail("warning: removing tracefs instance %s, left by a recorder that was killed (its "
	     "kernel events were not written)", name);
}

/*
 * Which specs name kernel systems (the session records them); the kernel's tracefs checked,
 * and instances that recorders which died left removed.  Return: false (said) when kernel
 * events are asked for and cannot be recorded.
 */
static bool kernel_specs_check(void)
{
	unsigned int first = 0;
	char why[512];

	for (unsigned int i = 0; i < rec.nr_specs; i++) {
		rec.spec_kernel[i] = usertp__kernel_spec(rec.specs[i]);
		if (rec.spec_kernel[i] && !rec.kernel)
			first = i;
		rec.kernel |= rec.spec_kernel[i];
	}
	if (!rec.kernel)
		return true;
	if (usertp__kernel_check(why, sizeof(why))) {
		fail("-e %s: %s", rec.specs[first], why);
		return false;
	}
	usertp__kernel_remove_leftovers(say_leftover);
	return true;
}

/*
 * Which threads the kernel records, as trace-cmd's record does: --pid (with -c, their children
 * and threads); else with -P the programs' threads, following their new threads and children
 * (the session's pid filter then: it is the same for the programs it attaches); else with -F
 * the command (usertp_session_run_only()); else every thread.  --notrace-pid leaves out.
 * Return: false (said) on failure.
 */
static bool kernel_scope(void)
{
	if (!rec.kernel || rec.trace_pids.nr)
		return true;
	for (unsigned int i = 0; i < rec.nr_pids; i++) {
		char path[64];
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)rec.pids[i]);
		d = opendir(path);
		if (!d) {
			fail("process %d: %s", (int)rec.pids[i],
			     errno == ENOENT ? "no such process" : strerror(errno));
			return false;
		}
		while ((de = readdir(d)))
			if (atoi(de->d_name) > 0 &&
			    usertp__pid_list_add(&rec.trace_pids, atoi(de->d_name))) {
				closedir(d);
				return false;
			}
		closedir(d);
		rec.event_fork = true;
	}
	return true;
}

/* --- the command's events, before it runs ------------------------------------------------- */

/* The file @cmd runs: as given when it holds a '/', else the first in PATH (as execvp()). */
static bool command_file(const char *cmd, char *out, size_t size)
{
	const char *path = getenv("PATH"), *p, *colon;

	if (strchr(cmd, '/'))
		return (size_t)snprintf(out, size, "%s", cmd) < size && !access(out, X_OK);
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = colon + 1) {
		colon = strchr(p, ':');
		if (!colon)
			colon = p + strlen(p);
		if ((size_t)snprintf(out, size, "%.*s/%s", (int)(colon - p), colon == p ? "." : p,
				     cmd) < size && !access(out, X_OK))
			return true;
		if (!*colon)
			break;
	}
	return false;
}

/* @file's events ("sys:event" lines) added to *names (of *len bytes). */
static void add_events_of(const char *file, char **names, size_t *len)
{
	char err[600], *lines = NULL;
	size_t n;
	char *more;

	if (usertp_elf_events(file, &lines, err, sizeof(err)) || !lines)
		return;
	n = strlen(lines);
	more = realloc(*names, *len + n + 2);
	if (more) {
		memcpy(more + *len, lines, n);
		*len += n;
		more[(*len)++] = '\n';
		more[*len] = 0;
		*names = more;
	}
	free(lines);
}

/*
 * The shared libraries @exe links, as the dynamic loader finds them without running anything
 * (ldd: LD_TRACE_LOADED_OBJECTS), each given to add_events_of().
 */
static void add_events_of_libraries(const char *exe, char **names, size_t *len)
{
	int fds[2];
	pid_t pid;
	FILE *f;
	char line[4096];

	if (pipe(fds))
		return;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(fds[1], STDOUT_FILENO);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		close(fds[0]);
		execlp("ldd", "ldd", exe, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = pid > 0 ? fdopen(fds[0], "r") : NULL;
	while (f && fgets(line, sizeof(line), f)) {
		/* "\tlibx.so.0 => /path/libx.so.0 (0x...)" or "\t/lib64/ld-linux... (0x...)" */
		char *path = strstr(line, "=> "), *end;

		path = path ? path + 3 : line + strspn(line, " \t");
		end = strstr(path, " (");
		if (*path != '/' || !end)
			continue;
		*end = 0;
		add_events_of(path, names, len);
	}
	if (f)
		fclose(f);
	else
		close(fds[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/*
 * Under -- CMD, before anything runs: when CMD's executable is a usertp program (it or a
 * library it links defines events), every spec must select one of those events, or the typo
 * is refused with the close matches, as trace-cmd refuses an event the kernel does not have.
 * A command that defines none (a shell, a wrapper) is not judged: the programs it starts say
 * at the end.  Events of libraries it dlopen()s later: --allow-missing.  Return: false (said).
 */
static bool command_specs_check(void)
{
	char exe[4096], *names = NULL, close[512];
	size_t len = 0;
	bool ok = true;

	if (!command_file(rec.cmd[0], exe, sizeof(exe)))
		return true; /* (the command's own failure is said when it runs) */
	add_events_of(exe, &names, &len);
	add_events_of_libraries(exe, &names, &len);
	if (!names)
		return true;
	for (unsigned int i = 0; i < rec.nr_specs; i++) {
		const char *spec = rec.specs[i];

		if (spec[0] == '!' || rec.spec_kernel[i] || usertp__spec_matches_any(spec, names))
			continue;
		ok = false;
		usertp__spec_close_matches(spec, names, close, sizeof(close));
		fail("no event %s in %s or the libraries it links%s%s", spec, rec.cmd[0],
		     close[0] ? "; close matches: " : "", close);
	}
	if (rec.snapshot_on && !usertp__spec_matches_any(rec.snapshot_spec, names)) {
		ok = false;
		usertp__spec_close_matches(rec.snapshot_spec, names, close, sizeof(close));
		fail("--snapshot-on: no event %s in %s or the libraries it links%s%s",
		     rec.snapshot_spec, rec.cmd[0], close[0] ? "; close matches: " : "", close);
	}
	if (!ok)
		fail("(events of libraries %s loads later with dlopen(), or of programs it runs: "
		     "--allow-missing)", rec.cmd[0]);
	free(names);
	return ok;
}

/* --- options ------------------------------------------------------------------------------ */

/*
 * -N: one version-6 file, sent at the end (net-send.c): what makes several files, or another
 * version, is refused.
 */
static bool net_options_check(void)
{
	const char *other = rec.file_version == 7 ? "--file-version 7 or --compression zstd (trace-cmd "
						      "listen puts version 6 files together from its "
						      "protocol; trace-cmd convert makes a 7 there)"
			    : rec.rotate_size || rec.rotate_secs ? "--rotate-* (one file is sent)"
			    : rec.snapshot_on ? "--snapshot-on (one file is sent)"
			    : NULL;

	if (other) {
		fail("-N: not with %s", other);
		return false;
	}
	return true;
}

/* --rotate-size: bytes, or KiB, MiB, GiB with k, M, G; from 64 KiB to 1 TiB. */
static int parse_size(const char *text, uint64_t *bytes)
{
	static const struct {
		char suffix;
		unsigned int shift;
	} units[] = { { 0, 0 }, { 'k', 10 }, { 'K', 10 }, { 'M', 20 }, { 'G', 30 } };
	const char *end;
	uint64_t v;

	if (usertp__parse_u64_prefix(text, &end, 1, 1ull << 40, &v))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (end[0] != units[i].suffix || (units[i].suffix && end[1]))
			continue;
		if (v > (1ull << 40) >> units[i].shift)
			return -ERANGE;
		*bytes = v << units[i].shift;
		return *bytes >= 65536 ? 0 : -ERANGE;
	}
	return -EINVAL;
}

static bool parse_options(int argc, char **argv)
{
	enum { OPT_OVERWRITE = 256, OPT_RECOVER, OPT_PID, OPT_NOTRACE_PID, OPT_FILE_VERSION,
	       OPT_COMPRESSION, OPT_ALLOW_MISSING, OPT_DATE, OPT_ROTATE_SIZE, OPT_ROTATE_TIME,
	       OPT_ROTATE_KEEP, OPT_SNAPSHOT_ON, OPT_SNAPSHOT_AFTER, OPT_SNAPSHOTS };
	static const struct option longopts[] = {
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
		{ "recover", required_argument, NULL, OPT_RECOVER },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "notrace-pid", required_argument, NULL, OPT_NOTRACE_PID },
		{ "file-version", required_argument, NULL, OPT_FILE_VERSION },
		{ "compression", required_argument, NULL, OPT_COMPRESSION },
		{ "allow-missing", no_argument, NULL, OPT_ALLOW_MISSING },
		{ "date", no_argument, NULL, OPT_DATE },
		{ "rotate-size", required_argument, NULL, OPT_ROTATE_SIZE },
		{ "rotate-time", required_argument, NULL, OPT_ROTATE_TIME },
		{ "rotate-keep", required_argument, NULL, OPT_ROTATE_KEEP },
		{ "snapshot-on", required_argument, NULL, OPT_SNAPSHOT_ON },
		{ "snapshot-after", required_argument, NULL, OPT_SNAPSHOT_AFTER },
		{ "snapshots", required_argument, NULL, OPT_SNAPSHOTS },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *why;
	uint64_t value;
	int opt;

	/* mono: tsc2nsec where the TSC is invariant (tsc2nsec.h) */
	usertp__clock_parse(NULL, &rec.clock, &why);
	while ((opt = getopt_long(argc, argv, "+e:f:o:b:m:P:aqC:s:hFcN:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f': {
			struct usertp__filter_error fe;
			char text[8192];

			if (rec.last_e == rec.nr_specs) {
				fail("-f %s: no -e before it to filter", optarg);
				return false;
			}
			/* What does not depend on the events' fields is checked now. */
			if (strlen(optarg) > USERTP__FILTER_MAX || usertp__filter_check(optarg, &fe)) {
				if (strlen(optarg) > USERTP__FILTER_MAX)
					fail("-f: a filter is at most %u bytes", USERTP__FILTER_MAX);
				else {
					usertp__filter_error_file(optarg, &fe, text, sizeof(text));
					while (strlen(text) && text[strlen(text) - 1] == '\n')
						text[strlen(text) - 1] = 0;
					fail("-f: %s\n%s", strerror(-fe.err), text);
				}
				return false;
			}
			for (unsigned int i = rec.last_e; i < rec.nr_specs; i++)
				rec.filters[i] = optarg;
			break;
		}
		case 'e':
			rec.last_e = rec.nr_specs;
			for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
				/* trace-cmd's "all": every event. */
				if (!strcmp(tok, "all"))
					tok = (char *)"*:*";
				if (usertp__spec_check(tok + (tok[0] == '!'), USERTP__SPEC_GLOB)) {
					fail("-e %s: not an event spec (sys:event, sys:*, *:event, event, "
					     "globs such as sys:io_*, all)", tok);
					return false;
				}
				if (rec.nr_specs == MAX_SPECS) {
					fail("too many -e");
					return false;
				}
				rec.specs[rec.nr_specs++] = tok;
			}
			break;
		case 'o':
			rec.output = optarg;
			rec.output_given = true;
			break;
		case 'N': {
			char why_net[512];

			if (usertp__listener_parse(optarg, &rec.listener, why_net, sizeof(why_net))) {
				fail("%s", why_net);
				return false;
			}
			rec.net = optarg;
			break;
		}
		case 'b':
			if (usertp__rb_parse_kb(optarg, &rec.kb, &why)) {
				fail("-b %s: %s", optarg, why);
				return false;
			}
			break;
		case 'm':
			if (usertp__parse_u64(optarg, 64, 1ull << 30, &rec.limit_kb)) {
				fail("-m %s: a number of KiB from 64 to 1073741824", optarg);
				return false;
			}
			break;
		case 'P': {
			pid_t *p;

			if (usertp__parse_u64(optarg, 1, INT32_MAX, &value)) {
				fail("-P %s: not a process id", optarg);
				return false;
			}
			p = realloc(rec.pids, (rec.nr_pids + 1) * sizeof(*p));
			if (!p)
				return false;
			rec.pids = p;
			rec.pids[rec.nr_pids++] = (pid_t)value;
			break;
		}
		case 'a':
			rec.all = true;
			break;
		case 'q':
			rec.quiet = true;
			break;
		case 'C':
			if (usertp__clock_parse(optarg, &rec.clock, &why)) {
				fail("-C %s: %s", optarg, why);
				return false;
			}
			break;
		case 's':
			if (usertp__parse_u64(optarg, 1, 10000000, &value)) {
				fail("-s %s: not a number of microseconds from 1 to 10000000", optarg);
				return false;
			}
			rec.interval_us = (unsigned int)value;
			break;
		case OPT_PID:
		case OPT_NOTRACE_PID: {
			int err = usertp__pid_list_parse(opt == OPT_PID ? &rec.trace_pids : &rec.notrace_pids,
							 optarg, ",");

			if (err) {
				fail("--%s %s: %s", opt == OPT_PID ? "pid" : "notrace-pid", optarg,
				     err == -EPERM ? "a thread id is at most 1073741823"
						   : "not a comma-separated list of thread ids");
				return false;
			}
			break;
		}
		case 'F':
			rec.filter_cmd = true;
			break;
		case 'c':
			rec.event_fork = true;
			break;
		case OPT_OVERWRITE:
			rec.overwrite = true;
			break;
		case OPT_RECOVER:
			rec.recover = optarg;
			break;
		case OPT_FILE_VERSION:
			if (usertp__parse_u64(optarg, 6, 7, &value)) {
				fail("--file-version %s: 6 or 7", optarg);
				return false;
			}
			rec.file_version = (unsigned int)value;
			break;
		case OPT_COMPRESSION:
			if (strcmp(optarg, "none") && strcmp(optarg, "zstd")) {
				fail("--compression %s: none or zstd", optarg);
				return false;
			}
			rec.compression = optarg;
			break;
		case OPT_ALLOW_MISSING:
			rec.allow_missing = true;
			break;
		case OPT_DATE:
			rec.date = true;
			break;
		case OPT_ROTATE_SIZE:
			if (parse_size(optarg, &rec.rotate_size)) {
				fail("--rotate-size %s: a size from 64k to 1024G (bytes, or with k, M "
				     "or G)", optarg);
				return false;
			}
			break;
		case OPT_ROTATE_TIME:
			if (usertp__parse_u64(optarg, 1, 366 * 86400, &value)) {
				fail("--rotate-time %s: a number of seconds from 1 to 31622400", optarg);
				return false;
			}
			rec.rotate_secs = value;
			break;
		case OPT_SNAPSHOT_ON: {
			const char *cut = strstr(optarg, " if ");
			size_t len = cut ? (size_t)(cut - optarg) : strlen(optarg);
			struct usertp__filter_error fe;

			if (len >= sizeof(rec.snapshot_spec)) {
				fail("--snapshot-on: a spec too long");
				return false;
			}
			memcpy(rec.snapshot_spec, optarg, len);
			rec.snapshot_spec[len] = 0;
			if (usertp__spec_check(rec.snapshot_spec, USERTP__SPEC_GLOB)) {
				fail("--snapshot-on %s: not an event spec (sys:event, globs), then "
				     "optionally \" if FILTER\"", optarg);
				return false;
			}
			rec.snapshot_filter = cut ? cut + 4 : NULL;
			if (rec.snapshot_filter && usertp__filter_check(rec.snapshot_filter, &fe)) {
				char text[8192];

				usertp__filter_error_file(rec.snapshot_filter, &fe, text, sizeof(text));
				while (strlen(text) && text[strlen(text) - 1] == '\n')
					text[strlen(text) - 1] = 0;
				fail("--snapshot-on: %s\n%s", strerror(-fe.err), text);
				return false;
			}
			rec.snapshot_on = optarg;
			rec.overwrite = true; /* (a snapshot is a flight recorder's) */
			break;
		}
		case OPT_SNAPSHOT_AFTER:
			if (usertp__parse_u64(optarg, 0, 3600000, &rec.snapshot_after_ms)) {
				fail("--snapshot-after %s: a number of milliseconds from 0 to 3600000",
				     optarg);
				return false;
			}
			break;
		case OPT_SNAPSHOTS:
			if (usertp__parse_u64(optarg, 1, 1000000, &rec.snapshots_max)) {
				fail("--snapshots %s: a number from 1 to 1000000", optarg);
				return false;
			}
			break;
		case OPT_ROTATE_KEEP:
			if (usertp__parse_u64(optarg, 1, 1000000, &value)) {
				fail("--rotate-keep %s: a number of files from 1 to 1000000", optarg);
				return false;
			}
			rec.rotate_keep = (unsigned int)value;
			break;
		case 'h':
			fputs(rec.stream ? stream_usage_text : usage_text, stdout);
			exit(0);
		default:
			usertp__tool_bad_option(rec.name, "+e:f:o:b:m:P:aqC:s:hFcN:", argv);
			return false;
		}
	}
	if (optind < argc)
		rec.cmd = argv + optind;
	if (rec.stream) {
		/* (What only a file has: refused, as trace-cmd stream has no -o.) */
		const char *file_option = rec.output_given ? "-o"
					  : rec.net ? "-N"
					  : rec.snapshot_on ? "--snapshot-on"
					  : rec.overwrite   ? "--overwrite"
					  : rec.recover	    ? "--recover"
					  : rec.file_version ? "--file-version"
					  : rec.compression ? "--compression"
					  : rec.date	    ? "--date"
					  : rec.limit_kb    ? "-m"
					  : rec.rotate_size || rec.rotate_secs || rec.rotate_keep
						  ? "--rotate-*"
						  : NULL;

		if (file_option) {
			fail("%s: an option of a file; stream prints (usertp record writes one)",
			     file_option);
			return false;
		}
	}
	if (rec.recover) {
		if (rec.nr_specs || rec.cmd || rec.nr_pids || rec.all || rec.file_version || rec.net ||
		    rec.compression || rec.date || rec.rotate_size || rec.rotate_secs ||
		    rec.rotate_keep || rec.limit_kb) {
			fail("--recover DIR takes only -o FILE (the file's format is the recording's)");
			return false;
		}
		return true;
	}
	if (rec.compression && !strcmp(rec.compression, "zstd")) {
		if (rec.file_version == 6) {
			fail("--compression zstd: trace.dat version 6 is never compressed "
			     "(--file-version 7)");
			return false;
		}
		rec.file_version = 7;
	}
	if (!rec.nr_specs) {
		fail("no events: give at least one -e SPEC");
		return false;
	}
	if (!!rec.cmd + !!rec.nr_pids + rec.all != 1) {
		fail("say what to record: -P PID..., -a, or -- CMD (one of them)");
		return false;
	}
	if (rec.filter_cmd && !rec.cmd) {
		fail("-F filters the command: give -- CMD");
		return false;
	}
	if (rec.date && rec.clock.buffers == USERTP_RB_CLOCK_TSC && !rec.clock.tsc2nsec) {
		fail("--date needs a clock in nanoseconds (mono or tsc2nsec), not x86-tsc");
		return false;
	}
	if (!kernel_specs_check())
		return false;
	if ((rec.snapshot_after_ms || rec.snapshots_max) && !rec.snapshot_on) {
		fail("--snapshot-%s: give --snapshot-on", rec.snapshots_max ? "s" : "after");
		return false;
	}
	if (rec.snapshot_on && rec.kernel) {
		fail("--snapshot-on: not with the kernel's events yet");
		return false;
	}
	if (rec.rotate_keep && !rec.rotate_size && !rec.rotate_secs) {
		fail("--rotate-keep: give --rotate-size or --rotate-time");
		return false;
	}
	if ((rec.rotate_size || rec.rotate_secs) && (rec.overwrite || rec.kernel)) {
		fail("--rotate-%s: not %s", rec.rotate_size ? "size" : "time",
		     rec.overwrite ? "with --overwrite (a flight recorder writes at its end)"
				   : "with the kernel's events yet");
		return false;
	}
	if (rec.net && !net_options_check())
		return false;
	if (rec.rotate_size || rec.rotate_secs)
		rec.part = 1;
	if (rec.cmd && !rec.allow_missing && !command_specs_check())
		return false;
	if (rec.event_fork && !rec.filter_cmd && !rec.trace_pids.nr && !rec.notrace_pids.nr) {
		fail("-c follows the threads of --pid, --notrace-pid or -F: give one of them");
		return false;
	}
	{
		char too_big[160];

		if (usertp__rb_size_check((unsigned int)get_nprocs_conf(), rec.kb, too_big,
					 sizeof(too_big))) {
			fail("-b %lu: %s", rec.kb, too_big);
			return false;
		}
	}
	return true;
}

/*
 * --recover DIR: the spool of a recorder that was killed, merged into a trace.dat (the output
 * it was recording to, or -o), and removed once that is written.
 */
static int recover_spool(void)
{
	struct usertp_dat_summary sum = SUMMARY_INIT;
	char err[512];
	int ret = usertp_dat_recover(rec.recover, rec.output_given ? rec.output : NULL, &sum, err,
				     sizeof(err));

	if (ret) {
		fail("--recover %s: %s", rec.recover, err);
		return 1;
	}
	summary(&sum, true);
	return 0;
}

/* --pid, --notrace-pid, -F and -c, to the session.  Return: false on failure. */
static bool set_pid_filter(void)
{
	if (!rec.trace_pids.nr && !rec.notrace_pids.nr)
		return true;
	if (usertp_session_set_pid_filter(rec.session, rec.trace_pids.pids, rec.trace_pids.nr,
					  rec.notrace_pids.pids, rec.notrace_pids.nr, rec.event_fork)) {
		fail("%s", usertp_session_error(rec.session));
		return false;
	}
	return true;
}

/*
 * The specs, to the session: the kernel's in one call (its unknown events are said together,
 * a line each, as the programs' are: "no event X..."), then the programs', each.
 * Return: false (said) on failure.
 */
static bool enable_specs(void)
{
	const char *kernel[MAX_SPECS];
	unsigned int nr_kernel = 0;
	char *list = NULL;
	bool ok = true;

	for (unsigned int i = 0; i < rec.nr_specs; i++)
		if (rec.spec_kernel[i])
			kernel[nr_kernel++] = rec.specs[i];
	if (nr_kernel && !(list = usertp__spec_list_text(kernel, nr_kernel))) {
		fail("%s", strerror(ENOMEM));
		return false;
	}
	if (list && usertp_session_enable(rec.session, list)) {
		char *text = strdup(usertp_session_error(rec.session));

		for (char *save = NULL, *line = text ? strtok_r(text, "\n", &save) : NULL; line;
		     line = strtok_r(NULL, "\n", &save))
			fail("%s", line);
		free(text);
		ok = false;
	}
	free(list);
	for (unsigned int i = 0; ok && i < rec.nr_specs; i++)
		if (!rec.spec_kernel[i] && usertp_session_enable(rec.session, rec.specs[i])) {
			fail("%s", usertp_session_error(rec.session));
			ok = false;
		}
	return ok;
}

/*
 * -N: the listener answers; the recording's file -o's, or a new one in $TMPDIR (or /tmp),
 * removed once sent.
 */
static bool net_start(void)
{
	const char *tmp = getenv("TMPDIR");
	char why[512];
	int fd;

	if (usertp__listener_probe(&rec.listener, why, sizeof(why))) {
		fail("-N %s: %s", rec.net, why);
		return false;
	}
	if (rec.output_given)
		return true;
	snprintf(rec.net_spool, sizeof(rec.net_spool), "%s/usertp-record-N-XXXXXX.dat",
		 tmp && *tmp ? tmp : "/tmp");
	fd = mkstemps(rec.net_spool, 4);
	if (fd < 0) {
		fail("-N: a file for the recording in %s: %s", tmp && *tmp ? tmp : "/tmp",
		     strerror(errno));
		rec.net_spool[0] = 0;
		return false;
	}
	close(fd);
	rec.output = rec.net_spool;
	return true;
}

/*
 * -N, at the end: the file sent, then removed; kept (and said where) when it cannot be sent.
 * Return: false on failure.
 */
static bool net_finish(bool recorded)
{
	char why[512];

	if (!recorded) {
		if (rec.net_spool[0])
			unlink(rec.net_spool);
		return false;
	}
	if (usertp__listener_send(&rec.listener, rec.output, why, sizeof(why))) {
		fail("-N %s: not sent: %s; the recording is in %s", rec.net, why, rec.output);
		return false;
	}
	if (rec.net_spool[0])
		unlink(rec.net_spool);
	return true;
}

/* Start: the session, its file, its events, its programs.  Return: false on failure. */
static bool start(void)
{
	struct usertp_session_options opts = { .struct_size = sizeof(opts), .buffer_kb = rec.kb, .overwrite = rec.overwrite,
					       .clock = usertp__clock_name(&rec.clock) };
	int ret;

	/* -N: the listener there before anything runs; the file recorded into a spool. */
	if (rec.net && !net_start())
		return false;
	ret = usertp_session_new(&rec.session, &opts);
	if (ret) {
		fail("cannot listen in the runtime directory: %s", strerror(-ret));
		return false;
	}
	usertp_session_set_log(rec.session, session_log, NULL);
	if ((rec.file_version &&
	     usertp_session_set_dat_format(rec.session, rec.file_version, rec.compression)) ||
	    (rec.date && usertp_session_set_dat_date(rec.session, true)) ||
	    (rec.limit_kb && usertp_session_set_dat_limit(rec.session, rec.limit_kb * 1024))) {
		fail("%s", usertp_session_error(rec.session));
		return false;
	}
	/* The output must be writable, as a trace.dat, before anything starts. */
	if (rec.part) {
		char first[PATH_MAX];

		part_path(first, sizeof(first), 1);
		ret = usertp_session_write_dat(rec.session, first);
	} else {
		ret = rec.stream ? 0 : usertp_session_write_dat(rec.session, rec.output);
	}
	if (ret) {
		fail("%s%s", ret == -EINVAL ? "-o " : "", usertp_session_error(rec.session));
		return false;
	}
	/*
	 * The filters first: the programs' go with the start of each program (one that refuses
	 * its filter fails), the kernel's with its events, before the kernel records any.
	 */
	for (unsigned int i = 0; i < rec.nr_specs; i++) {
		char err[8192];

		if (rec.filters[i] && rec.specs[i][0] != '!' &&
		    usertp_session_set_filter(rec.session, rec.specs[i], rec.filters[i], err,
					      sizeof(err))) {
			fail("%s", usertp_session_error(rec.session));
			return false;
		}
	}
	/* Who is recorded, before the kernel records anyone: --pid, -P's threads, -F. */
	if (!kernel_scope() || !set_pid_filter())
		return false;
	/* The trigger's session before the command: it joins that too, before its main(). */
	if (rec.snapshot_on && !trigger_start())
		return false;
	/*
	 * The command's descendants that outlive their parent become ours, not init's: the end
	 * names those left running (left_running_say()); those that end are reaped (on_signals()).
	 */
	if (rec.cmd)
		(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (rec.cmd && rec.filter_cmd) {
		/* -F: the command alone, held until the session runs (after the events are set). */
		rec.child = usertp_session_run_only(rec.session, rec.cmd, rec.event_fork);
		if (rec.child < 0) {
			fail("%s", usertp_session_error(rec.session));
			return false;
		}
		/* (With the pids of --pid and --notrace-pid, as before it runs.) */
		if (usertp__pid_list_add(&rec.trace_pids, rec.child) || !set_pid_filter())
			return false;
	}
	if (!enable_specs())
		return false;
	if (signals_open()) {
		fail("cannot take signals: %s", strerror(errno));
		return false;
	}
	/* A program asked for that cannot be recorded makes the run fail (it goes on with the rest). */
	for (unsigned int i = 0; i < rec.nr_pids; i++)
		if (usertp_session_attach_pid(rec.session, rec.pids[i])) {
			fail("%s", usertp_session_error(rec.session));
			rec.untraced++;
		}
	if (rec.nr_pids) {
		char who[64];

		if (rec.untraced == rec.nr_pids)
			return false;
		/*
		 * Under -P every spec must match an event of one of the programs, unless they
		 * may load it later (--allow-missing: named at the end if none did).
		 */
		snprintf(who, sizeof(who), rec.nr_pids == 1 ? "process %d" : "the programs given",
			 (int)rec.pids[0]);
		if (!rec.allow_missing && !specs_check("", who)) {
			fail("(events of a library a program has not loaded now, with dlopen(): "
			     "--allow-missing)");
			return false;
		}
	}
	if (rec.all && (ret = usertp_session_attach_all(rec.session))) {
		fail("%s", usertp_session_error(rec.session));
		return false;
	}
	if (rec.cmd && !rec.filter_cmd) {
		rec.child = usertp_session_run(rec.session, rec.cmd);
		if (rec.child < 0) {
			fail("%s", usertp_session_error(rec.session));
			return false;
		}
	}
	raise_priority();
	return true;
}

int usertp__cmd_record(int argc, char **argv)
{
	struct usertp_dat_summary sum = SUMMARY_INIT;
	struct usertp_session_status st = USERTP_STRUCT_INIT(usertp_session_status);
	bool net_sent = true;
	int ret;

	if (!parse_options(argc, argv))
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &rec.start);
	if (rec.recover)
		return recover_spool();
	if (!start()) {
		usertp_session_free(rec.session);
		if (rec.net_spool[0])
			unlink(rec.net_spool);
		return 1;
	}
	loop();
	if (rec.trigger_refused) {
		fail("%s: --snapshot-on: %s", rec.cmd[0], usertp_session_error(rec.trigger));
		usertp_session_free(rec.trigger);
		usertp_session_free(rec.session);
		if (!rec.child_done)
			waitpid(rec.child, NULL, 0);
		return 2;
	}
	if (rec.stopped_at_start) {
		/* As trace-cmd refuses a filter before anything runs: no file, status 2. */
		fail("%s: %s", rec.cmd[0], usertp_session_error(rec.session));
		usertp_session_free(rec.session);
		if (!rec.child_done)
			waitpid(rec.child, NULL, 0);
		return 2;
	}
	/* The trigger's last records; snapshots asked for and not yet due: taken now. */
	snapshots_turn();
	while (rec.snapshots_pending)
		snapshot_take();
	usertp_session_free(rec.trigger);
	rec.trigger = NULL;
	/* Programs still running stop recording when the session ends; read what is left. */
	left_running_note();
	if (rec.stream) {
		stream_end();
		ret = 0;
	} else {
		ret = usertp_session_finish(rec.session, &sum);
	}
	left_running_say();
	usertp_session_status(rec.session, &st);
	if (rec.cmd && !st.programs)
		fail("no program of %s joined: not linked with libusertp, or started without the "
		     "USERTP_SESSION variable this command sets", rec.cmd[0]);
	else if (rec.cmd || rec.all || rec.allow_missing)
		specs_check("warning: ", "the programs recorded");
	if (ret)
		fail("%s", usertp_session_error(rec.session));
	if (rec.net) {
		net_sent = net_finish(!ret);
		if (net_sent && rec.net_spool[0])
			snprintf(sum.output, sizeof(sum.output), "trace-cmd listen at %s", rec.net);
	}
	if (!rec.stream)
		summary(&sum, false);
	if (rec.part) {
		parts_keep(rec.part);
		if (!rec.quiet)
			fprintf(stderr, "usertp record: %u files, %llu events, %llu lost in all\n",
				rec.part, (unsigned long long)(rec.parts_events + sum.events),
				(unsigned long long)(rec.parts_lost + sum.lost));
	}
	usertp_session_free(rec.session);
	usertp__report_line_free(&rec.line);
	/* Under -- the command's failure comes first; then ours. */
	/*
	 * Interrupted: Ctrl-C reaches the command too (one process group), which may end of it
	 * a moment after us: its status then (130 for SIGINT).  One that runs on (a SIGTERM to
	 * the recorder alone) is left running, and the file is complete: 0.
	 */
	for (int i = 0; rec.child > 0 && !rec.child_done && rec.stop_signal && i < 50; i++) {
		if (waitpid(rec.child, &rec.child_status, WNOHANG) == rec.child)
			rec.child_done = true;
		else
			usleep(10000);
	}
	if (rec.child > 0 && rec.child_done && WIFEXITED(rec.child_status) &&
	    WEXITSTATUS(rec.child_status))
		return WEXITSTATUS(rec.child_status);
	if (rec.child > 0 && rec.child_done && WIFSIGNALED(rec.child_status))
		return 128 + WTERMSIG(rec.child_status);
	/* (An event left out because it refused its filter was said: it fails the run too.) */
	return ret || !net_sent || st.write_error || st.untraced || st.refused || rec.untraced ? 1 : 0;
}

int usertp__cmd_stream(int argc, char **argv)
{
	rec.name = "stream";
	rec.stream = true;
	usertp__report_line_init(&rec.line, !getenv("USERTP_REPORT_LIBTRACEEVENT"));
	return usertp__cmd_record(argc, argv);
}
