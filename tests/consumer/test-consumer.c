/* SPDX-License-Identifier: MIT */
/*
 * test-consumer - libusertp-consumer's sessions against real programs (cons-prog), one case
 * per run:
 *
 *	live		enable, disable, tracing off and on, on a running program: the records
 *			of each step counted exactly, in order, with the per-CPU counts
 *	small		buffers too small: read + dropped = fired, exactly; the descriptor wakes
 *	later		a program that starts after the session (attach_all) and one the session
 *			runs get the settings of that moment from their first event
 *	fork		a forked child, recorded with the settings current when it forks
 *			(and one heard of only after its parent's end was read)
 *	two		two sessions on one program, each getting exactly its own events
 *	errors		every error of the API: dead pid, not a libusertp program, twice the same,
 *			bad specs, a spec that matches nothing, settings out of range, a program
 *			killed mid-session, a peer that sends garbage, one that stalls
 *	filter		filters on a live session and for programs that come later
 *	hostile		a program that scribbles over its buffers: lost alone
 *	shrunk		a program that truncates its buffers' memfd: it cannot, they are read on
 *	garbled		a program that puts garbage after the records read of its live page:
 *			counted as lost, never read again and again
 *	detach		a program taken out of a session records nothing more for it
 *	pages		raw pages (usertp_session_next_page()): every record once, the session's ids
 *	other-user	another user's program (needs root and a second user: usertp-test2)
 *	kernel		the kernel's events in a session: typos and bad filters refused the
 *			kernel's way, a command run alone (usertp_session_run_only()) with its
 *			events and its threads' forks, nothing of other processes, the
 *			instance gone with the session, refused in file mode, children
 *			forked unread each before its exit (needs tracefs)
 *	latency		prints the time from usertp_session_enable() to the first record (no
 *			assertion on time: a figure for the docs)
 *
 *	test-consumer CASE CONS-PROG
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <traceevent/kbuffer.h>
#include <usertp/consumer.h>

#include "../harness.h"

static const char *cons_prog;
/* --- the traced program ------------------------------------------------------------------- */

struct prog {
	pid_t pid;
	FILE *in, *out;
};

static void prog_start(struct prog *p)
{
	int to[2], from[2];
	char line[64];

	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC)) {
		perror("pipe");
		exit(1);
	}
	p->pid = fork();
	if (p->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		execl(cons_prog, cons_prog, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	p->in = fdopen(to[1], "w");
	p->out = fdopen(from[0], "r");
	if (!fgets(line, sizeof(line), p->out) || strncmp(line, "ready ", 6)) {
		fprintf(stderr, "cons-prog did not start\n");
		exit(1);
	}
}

/* Send @cmd; return the reply line's number after its first word (or 0). */
static long prog_cmd(struct prog *p, const char *cmd)
{
	char line[128];

	fprintf(p->in, "%s\n", cmd);
	fflush(p->in);
	if (!fgets(line, sizeof(line), p->out))
		return -1;
	return strchr(line, ' ') ? atol(strchr(line, ' ') + 1) : 0;
}

static void prog_end(struct prog *p)
{
	int status;

	fprintf(p->in, "quit\n");
	fclose(p->in);
	fclose(p->out);
	waitpid(p->pid, &status, 0);
}

/* --- reading ------------------------------------------------------------------------------ */

struct counts {
	long a, b, other, lost;
	long bad_order;
	pid_t pids[8];
	long a_of[8], b_of[8];
	long next_a[8], next_b[8];
	unsigned int nr_pids;
};

static int pid_slot(struct counts *c, pid_t pid)
{
	for (unsigned int i = 0; i < c->nr_pids; i++)
		if (c->pids[i] == pid)
			return (int)i;
	if (c->nr_pids == 8)
		return 7;
	c->pids[c->nr_pids] = pid;
	return (int)c->nr_pids++;
}

static long of_pid(const struct counts *c, pid_t pid, bool a)
{
	for (unsigned int i = 0; i < c->nr_pids; i++)
		if (c->pids[i] == pid)
			return a ? c->a_of[i] : c->b_of[i];
	return 0;
}

/*
 * Everything the session has now: the programs committed their events before answering, so
 * once next() finds nothing for @idle_ms, all of it has been read.
 */
static void drain(struct usertp_session *s, struct counts *c, int idle_ms)
{
	struct usertp_record rec = USERTP_STRUCT_INIT(usertp_record);
	int ret;

	memset(c, 0, sizeof(*c));
	while ((ret = usertp_session_next(s, &rec, idle_ms)) == 1) {
		unsigned long long seq = 0;
		int slot = pid_slot(c, rec.pid);

		c->lost += (long)rec.lost_before;
		if (!rec.event) {
			c->other++;
			continue;
		}
		tep_read_number_field(tep_find_field(rec.event, "seq"), rec.data, &seq);
		if (!strcmp(rec.event->name, "cons_a")) {
			c->a++;
			c->a_of[slot]++;
			c->bad_order += (long)seq != c->next_a[slot];
			c->next_a[slot] = (long)seq + 1;
		} else if (!strcmp(rec.event->name, "cons_b")) {
			c->b++;
			c->b_of[slot]++;
			c->bad_order += (long)seq != c->next_b[slot];
			c->next_b[slot] = (long)seq + 1;
		} else {
			c->other++;
		}
	}
	CHECK(ret == 0 || ret == -ENODATA, "next: %d (%s)", ret, usertp_session_error(s));
}

static void expect(struct usertp_session *s, const char *what, long a, long b)
{
	struct counts c;

	drain(s, &c, 300);
	CHECK(c.a == a && c.b == b && !c.other && !c.bad_order && !c.lost,
	      "%s: cons_a %ld (want %ld), cons_b %ld (want %ld), other %ld, out of order %ld, lost %ld",
	      what, c.a, a, c.b, b, c.other, c.bad_order, c.lost);
}

static struct usertp_session *session(void)
{
	struct usertp_session *s;
	int ret = usertp_session_new(&s, NULL);

	if (ret) {
		fprintf(stderr, "usertp_session_new: %s\n", strerror(-ret));
		exit(1);
	}
	return s;
}

#define OK(call)                                                                                   \
	do {                                                                                       \
		int ret_ = (call);                                                                 \
		CHECK(!ret_, "%s: %d (%s)", #call, ret_, usertp_session_error(s));                 \
	} while (0)

/* Records read of program @index, summed over its CPUs, and its dropped ones. */
static void totals(struct usertp_session *s, unsigned int index, uint64_t *read, uint64_t *dropped)
{
	struct usertp_program_info info = USERTP_STRUCT_INIT(usertp_program_info);
	struct usertp_cpu_stats st = USERTP_STRUCT_INIT(usertp_cpu_stats);

	*read = *dropped = 0;
	if (usertp_session_program(s, index, &info))
		return;
	for (unsigned int cpu = 0; cpu < info.nr_cpus; cpu++)
		if (!usertp_session_cpu_stats(s, index, cpu, &st)) {
			*read += st.read;
			*dropped += st.dropped + st.overrun;
		}
}

/* --- cases -------------------------------------------------------------------------------- */

static char log_text[4096];

static void log_keep(const char *line, void *arg)
{
	(void)arg;
	snprintf(log_text + strlen(log_text), sizeof(log_text) - strlen(log_text), "%s\n", line);
}

static void case_live(void)
{
	struct usertp_session *s = session();
	struct prog p;
	uint64_t read, dropped;

	prog_start(&p);
	OK(usertp_session_attach_pid(s, p.pid));
	OK(usertp_session_enable(s, "cons:cons_a"));
	prog_cmd(&p, "fire 100");
	expect(s, "cons_a enabled", 100, 0);
	OK(usertp_session_enable(s, "cons:cons_b"));
	prog_cmd(&p, "fire 50");
	expect(s, "both enabled", 50, 50);
	OK(usertp_session_disable(s, "cons:cons_a"));
	prog_cmd(&p, "fire 30");
	expect(s, "cons_a disabled", 0, 30);
	OK(usertp_session_set_tracing(s, false));
	prog_cmd(&p, "fire 10");
	expect(s, "tracing off", 0, 0);
	OK(usertp_session_set_tracing(s, true));
	prog_cmd(&p, "fire 5");
	expect(s, "tracing on", 0, 5);
	/* Globs, live: everything of the system again. */
	OK(usertp_session_enable(s, "cons:*"));
	prog_cmd(&p, "fire 7");
	expect(s, "cons:*", 7, 7);
	/* The whole list at once: one event, a refused list changing nothing, none. */
	OK(usertp_session_set_specs(s, "cons:cons_b"));
	prog_cmd(&p, "fire 4");
	expect(s, "set_specs cons:cons_b", 0, 4);
	CHECK(usertp_session_set_specs(s, "cons:cons_a,nosuch:x") == -ENOENT, "set_specs of nosuch");
	prog_cmd(&p, "fire 3");
	expect(s, "after a refused set_specs", 0, 3);
	OK(usertp_session_set_specs(s, ""));
	prog_cmd(&p, "fire 2");
	expect(s, "set_specs nothing", 0, 0);
	{
		const char *const *specs;

		CHECK(usertp_session_specs(s, &specs) == 0, "specs after set_specs nothing");
	}
	totals(s, 0, &read, &dropped);
	CHECK(read == 100 + 100 + 30 + 5 + 14 + 4 + 3 && !dropped, "counts: %llu read, %llu dropped",
	      (unsigned long long)read, (unsigned long long)dropped);
	prog_end(&p);
	usertp_session_free(s);
}

/*
 * Wait for @pid while the session takes what comes: a program that starts joins the session
 * before its main(), and waits for the session to take it (250 ms at most, then it runs
 * untraced).
 */
static void wait_processing(struct usertp_session *s, pid_t pid, int *status)
{
	while (waitpid(pid, status, WNOHANG) != pid)
		usertp_session_process(s, 10);
}

/* Whether the session's first program runs still (process_while()). */
static bool first_running(struct usertp_session *s, pid_t unused)
{
	struct usertp_program_info info = USERTP_STRUCT_INIT(usertp_program_info);

	(void)unused;
	return !usertp_session_program(s, 0, &info) && info.running;
}

/* Whether process @pid exists still, not reaped by us (process_while()). */
static bool alive(struct usertp_session *s, pid_t pid)
{
	(void)s;
	return kill(pid, 0) == 0;
}

/*
 * Let the session take what comes, in 10 ms steps, while @going(@s, @pid) says so, 60 s at
 * most.  Return: whether it stopped saying so.
 */
static bool process_while(struct usertp_session *s, bool (*going)(struct usertp_session *, pid_t),
			  pid_t pid)
{
	for (int i = 0; i < 6000; i++) {
		if (!going(s, pid))
			return true;
		usertp_session_process(s, 10);
	}
	return !going(s, pid);
}

/*
 * Buffers too small for what is fired: every event is read or counted dropped, exactly, and
 * the session's descriptor wakes a poll() when a buffer fills.
 */
static void case_small(void)
{
	struct usertp_session_options opts = { .struct_size = sizeof(opts), .buffer_kb = 8 };
	struct usertp_session *s;
	struct pollfd pfd;
	struct counts c;
	struct prog p;
	uint64_t read, dropped;
	int ret = usertp_session_new(&s, &opts);

	CHECK(!ret, "usertp_session_new: %d", ret);
	if (ret)
		return;
	prog_start(&p);
	OK(usertp_session_attach_pid(s, p.pid));
	OK(usertp_session_enable(s, "cons:*"));
	usertp_session_process(s, 0); /* (asks the programs to wake it) */
	prog_cmd(&p, "fire 5000");
	pfd = (struct pollfd){ usertp_session_fd(s), POLLIN, 0 };
	CHECK(poll(&pfd, 1, 5000) == 1, "the session's descriptor did not wake");
	drain(s, &c, 300);
	totals(s, 0, &read, &dropped);
	CHECK((uint64_t)(c.a + c.b) == read && read + dropped == 10000 && dropped > 0,
	      "records %ld, read %llu + dropped %llu of 10000", c.a + c.b, (unsigned long long)read,
	      (unsigned long long)dropped);
	prog_end(&p);
	usertp_session_free(s);
}

/* "cons-prog auto N", started as any program of ours; its pid, once it has ended. */
static pid_t run_auto(struct usertp_session *s, int n, int *status)
{
	char count[16];
	pid_t pid;

	snprintf(count, sizeof(count), "%d", n);
	pid = fork();
	if (pid == 0) {
		execl(cons_prog, cons_prog, "auto", count, (char *)NULL);
		_exit(127);
	}
	wait_processing(s, pid, status);
	return pid;
}

static void case_later(void)
{
	struct usertp_session *s = session();
	struct counts c;
	pid_t pid;
	int status;

	OK(usertp_session_enable(s, "cons:cons_b"));
	OK(usertp_session_attach_all(s));
	/* A program of ours that starts now joins before its main(). */
	pid = run_auto(s, 20, &status);
	CHECK(WIFEXITED(status) && !WEXITSTATUS(status), "cons-prog auto: %#x", status);
	expect(s, "a program started after the session", 0, 20);
	/* The settings of this moment, for the next one. */
	OK(usertp_session_enable(s, "cons:cons_a"));
	OK(usertp_session_disable(s, "cons:cons_b"));
	pid = run_auto(s, 15, &status);
	drain(s, &c, 300);
	CHECK(c.a == 15 && c.b == 0 && of_pid(&c, pid, true) == 15, "after the change: %ld %ld",
	      c.a, c.b);
	usertp_session_free(s);

	/* A command the session runs. */
	s = session();
	OK(usertp_session_enable(s, "cons:*"));
	{
		char *argv[] = { (char *)cons_prog, (char *)"auto", (char *)"25", NULL };

		pid = usertp_session_run(s, argv);
		CHECK(pid > 0, "run: %d", (int)pid);
		/* Read while it runs: it joins, fires, exits. */
		wait_processing(s, pid, &status);
		expect(s, "a command the session runs", 25, 25);
	}
	usertp_session_free(s);

	/*
	 * A command one of whose events does not take the session's filter: stopped before its
	 * main() (nothing fired), and usertp_session_process() says so.
	 */
	s = session();
	OK(usertp_session_enable(s, "cons:*"));
	OK(usertp_session_set_filter(s, "cons:cons_a", "nosuch == 1", NULL, 0));
	{
		char *argv[] = { (char *)cons_prog, (char *)"auto", (char *)"25", NULL };
		int ret = 0;

		pid = usertp_session_run(s, argv);
		CHECK(pid > 0, "run: %d", (int)pid);
		while (waitpid(pid, &status, WNOHANG) != pid)
			ret = usertp_session_process(s, 10) ? : ret;
		ret = usertp_session_process(s, 0) ? : ret;
		CHECK(ret == -ECANCELED && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
		      strstr(usertp_session_error(s), "stopped before its main()"),
		      "a command refused at its start: %d, status %#x, %s", ret, status,
		      usertp_session_error(s));
		drain(s, &c, 100);
		CHECK(c.a == 0 && c.b == 0, "a command refused at its start fired: %ld %ld", c.a, c.b);
	}
	usertp_session_free(s);
}

/*
 * A child that outlives its parent, as a daemon's does: its fork is heard only once the
 * parent's end was read (held in its bind(), which comes first, by the slow-bind preload:
 * SLOW_BIND).  It is still known as the parent's child, and its events come with the formats
 * of the parent's image.  (SLOW_BIND: LD_PRELOAD's list, a sanitizer's runtime first.)
 */
static void fork_after_parent_end(void)
{
	const char *slow_bind = getenv("SLOW_BIND");
	struct usertp_program_info info = USERTP_STRUCT_INIT(usertp_program_info);
	struct usertp_session *s;
	struct counts c;
	char gate[PATH_MAX];
	struct prog p;
	pid_t child;

	CHECK(slow_bind && *slow_bind, "no slow-bind preload (SLOW_BIND)");
	if (!slow_bind || !*slow_bind)
		return;
	snprintf(gate, sizeof(gate), "%s/bind-gate", getenv("XDG_RUNTIME_DIR"));
	close(open(gate, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)); /* (the parent's endpoint: open) */
	setenv("LD_PRELOAD", slow_bind, 1);
	setenv("SLOW_BIND_GATE", gate, 1);
	prog_start(&p);
	unsetenv("LD_PRELOAD");
	unsetenv("SLOW_BIND_GATE");
	s = session();
	OK(usertp_session_attach_pid(s, p.pid));
	OK(usertp_session_enable(s, "cons:*"));
	unlink(gate);
	child = (pid_t)prog_cmd(&p, "spawn 25");
	prog_end(&p);
	CHECK(process_while(s, first_running, 0), "the parent's end was not read");
	close(open(gate, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	/* (Its events are in its buffers by its end.) */
	CHECK(process_while(s, alive, child), "the child %d did not end", (int)child);
	drain(s, &c, 300);
	CHECK(of_pid(&c, child, true) == 25 && of_pid(&c, child, false) == 25 && !c.other &&
	      !c.lost && !c.bad_order,
	      "a child heard of after its parent's end: cons_a %ld, cons_b %ld of 25, without a "
	      "format %ld, lost %ld, out of order %ld", of_pid(&c, child, true),
	      of_pid(&c, child, false), c.other, c.lost, c.bad_order);
	CHECK(usertp_session_nr_programs(s) == 2 && !usertp_session_program(s, 1, &info) &&
	      info.pid == child && info.forked_from == p.pid,
	      "programs %u, the second %d forked from %d", usertp_session_nr_programs(s),
	      (int)info.pid, info.forked_from);
	usertp_session_free(s);
	unlink(gate);
}

static void case_fork(void)
{
	struct usertp_session *s = session();
	struct counts c;
	struct prog p;
	pid_t child;

	prog_start(&p);
	OK(usertp_session_attach_pid(s, p.pid));
	OK(usertp_session_enable(s, "cons:cons_a"));
	child = (pid_t)prog_cmd(&p, "fork 40");
	drain(s, &c, 300);
	CHECK(of_pid(&c, child, true) == 40 && c.a == 40 && c.b == 0 && !c.bad_order,
	      "child %d: cons_a %ld of %ld, cons_b %ld", (int)child, of_pid(&c, child, true), c.a, c.b);
	/* Changed since the program started: the next child has the new settings. */
	OK(usertp_session_disable(s, "cons:cons_a"));
	OK(usertp_session_enable(s, "cons:cons_b"));
	child = (pid_t)prog_cmd(&p, "fork 30");
	drain(s, &c, 300);
	CHECK(of_pid(&c, child, false) == 30 && c.a == 0 && c.b == 30 && !c.bad_order,
	      "second child %d: cons_a %ld, cons_b %ld", (int)child, c.a, c.b);
	CHECK(usertp_session_nr_programs(s) == 3, "programs: %u", usertp_session_nr_programs(s));
	prog_end(&p);
	usertp_session_free(s);
	fork_after_parent_end();
}

static void case_two(void)
{
	struct usertp_session *s = session(), *t = session(), *keep = s;
	struct prog p;

	prog_start(&p);
	OK(usertp_session_attach_pid(s, p.pid));
	s = t;
	OK(usertp_session_attach_pid(t, p.pid));
	s = keep;
	OK(usertp_session_enable(s, "cons:cons_a"));
	OK(usertp_session_enable(t, "cons:cons_b"));
	prog_cmd(&p, "fire 60");
	expect(s, "first session", 60, 0);
	expect(t, "second session", 0, 60);
	/* One's tracing off changes nothing for the other. */
	OK(usertp_session_set_tracing(s, false));
	prog_cmd(&p, "fire 10");
	expect(s, "first session, off", 0, 0);
	expect(t, "second session, first off", 0, 10);
	/* One ends: the other goes on. */
	usertp_session_free(s);
	prog_cmd(&p, "fire 4");
	expect(t, "second session, first gone", 0, 4);
	prog_end(&p);
	usertp_session_free(t);
}

/* A fake endpoint for process @pid in our runtime directory, served by a thread. */
struct fake {
	char path[108];
	int fd;
	bool garbage; /* else: accepts and never answers */
};

static void *fake_serve(void *arg)
{
	struct fake *f = arg;

	for (;;) {
		int c = accept(f->fd, NULL, NULL);
		unsigned char junk[256];

		if (c < 0)
			return NULL;
		if (f->garbage) {
			/* The request read, then garbage for an answer. */
			(void)!read(c, junk, sizeof(junk));
			for (unsigned int i = 0; i < sizeof(junk); i++)
				junk[i] = (unsigned char)(i * 37 + 11);
			junk[0] = 0xff; /* a length no message has */
			(void)!write(c, junk, sizeof(junk));
			/* Open until the peer closes. */
			while (read(c, junk, sizeof(junk)) > 0)
				;
			close(c);
		}
		/* stalled: c stays open, unanswered (closed with the process) */
	}
}

/*
 * A hostile endpoint: with @pid, one put in place of process @pid's and served by us (not the
 * process that listens: never talked to); else one a forked child of ours serves as its own
 * (the peer is the process: garbage or silence, then).  Return: what attaching gave.
 */
static int fake_attach(pid_t pid, bool garbage, long long *ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct usertp_session *s = session();
	struct timespec t0, t1;
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int ready[2], ret;
	pid_t server = 0;
	struct fake f;
	pthread_t thread;

	f.garbage = garbage;
	if (pipe(ready))
		exit(1);
	if (!pid) {
		server = fork();
		if (server == 0) {
			snprintf(f.path, sizeof(f.path), "%s/usertp/%d.sock", xdg, (int)getpid());
			f.fd = socket(AF_UNIX, SOCK_STREAM, 0);
			snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f.path);
			if (bind(f.fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(f.fd, 4))
				_exit(1);
			(void)!write(ready[1], "x", 1);
			fake_serve(&f);
			_exit(0);
		}
		pid = server;
		snprintf(f.path, sizeof(f.path), "%s/usertp/%d.sock", xdg, (int)pid);
		(void)!read(ready[0], &sa, 1);
	} else {
		snprintf(f.path, sizeof(f.path), "%s/usertp/%d.sock", xdg, (int)pid);
		f.fd = socket(AF_UNIX, SOCK_STREAM, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f.path);
		unlink(f.path);
		if (bind(f.fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(f.fd, 4)) {
			perror("fake endpoint");
			exit(1);
		}
		pthread_create(&thread, NULL, fake_serve, &f);
	}
	close(ready[0]);
	close(ready[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = usertp_session_attach_pid(s, pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	printf("fake %s endpoint%s: %d (%s) after %lld ms\n", garbage ? "garbage" : "stalled",
	       server ? "" : " in another's place", ret, usertp_session_error(s), *ms);
	usertp_session_free(s);
	if (server) {
		kill(server, SIGKILL);
		waitpid(server, NULL, 0);
	} else {
		/* (accept() in the thread fails once the socket is shut down.) */
		shutdown(f.fd, SHUT_RDWR);
		pthread_join(thread, NULL);
		close(f.fd);
	}
	unlink(f.path);
	return ret;
}

static void case_errors(void)
{
	struct usertp_session *s = session(), *t;
	struct usertp_session_options big = { .struct_size = sizeof(big), .buffer_kb = 5000000 },
				      clock = { .struct_size = sizeof(clock), .clock = "bogus" };
	const char *const *specs;
	unsigned int nr;
	struct prog p;
	long long ms;
	pid_t dead, sleeper;
	int ret;

	/* A process that is gone. */
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	ret = usertp_session_attach_pid(s, dead);
	CHECK(ret == -ESRCH, "dead pid: %d", ret);
	/* A process that does not use libusertp. */
	sleeper = fork();
	if (sleeper == 0) {
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	usleep(100000);
	ret = usertp_session_attach_pid(s, sleeper);
	CHECK(ret == -ENOENT, "not a libusertp program: %d", ret);
	CHECK(strstr(usertp_session_error(s), "no libusertp control endpoint") != NULL, "message: %s",
	      usertp_session_error(s));
	/* Settings out of range. */
	CHECK(usertp_session_new(&t, &big) == -ERANGE, "buffer_kb 5000000 accepted");
	CHECK(usertp_session_new(&t, &clock) == -EINVAL, "clock bogus accepted");
	/* The trace.dat format: each bad choice refused, the last good one kept; none after. */
	OK(usertp_session_new(&t, NULL));
	CHECK(usertp_session_set_dat_format(t, 8, NULL) == -EINVAL, "version 8 accepted");
	CHECK(usertp_session_set_dat_format(t, 6, "zstd") == -EINVAL, "zstd in version 6 accepted");
	CHECK(usertp_session_set_dat_format(t, 7, "lz4") == -EINVAL, "lz4 accepted");
	CHECK(strstr(usertp_session_error(t), "none or zstd") != NULL, "message: %s",
	      usertp_session_error(t));
	OK(usertp_session_set_dat_format(t, 7, "zstd"));
	{
		char path[] = "/tmp/test-consumer-XXXXXX", dat[64];
		int fd;

		if (!mkdtemp(path))
			exit(1);
		snprintf(dat, sizeof(dat), "%s/f.dat", path);
		OK(usertp_session_write_dat(t, dat));
		CHECK(usertp_session_set_dat_format(t, 6, NULL) == -EBUSY, "format changed after the file");
		OK(usertp_session_finish(t, NULL));
		fd = open(dat, O_RDONLY);
		CHECK(fd >= 0 && pread(fd, dat, 22, 0) == 22 && dat[10] == '7' && !memcmp(dat + 18, "zstd", 4),
		      "the file is not version 7 with zstd");
		close(fd);
		usertp_session_free(t);
		snprintf(dat, sizeof(dat), "rm -rf %s", path);
		if (system(dat))
			exit(1);
	}
	/* Specs: malformed, matching nothing; neither changes anything. */
	prog_start(&p);
	OK(usertp_session_attach_pid(s, p.pid));
	ret = usertp_session_attach_pid(s, p.pid);
	CHECK(ret == -EALREADY, "the same program twice: %d", ret);
	OK(usertp_session_enable(s, "cons:cons_a"));
	ret = usertp_session_enable(s, "cons:cons_b,bad:spec:x");
	CHECK(ret == -EINVAL, "bad spec: %d", ret);
	ret = usertp_session_enable(s, "nosuch:event");
	CHECK(ret == -ENOENT, "a spec that matches nothing: %d (%s)", ret, usertp_session_error(s));
	/* The filter of such a spec: the same answer (issue 21, item 9: it was 0). */
	ret = usertp_session_set_filter(s, "nosuch:event", "seq > 1", NULL, 0);
	CHECK(ret == -ENOENT, "a filter for a spec that matches nothing: %d", ret);
	ret = usertp_session_set_filter(s, "cons:nosuch", "seq > 1", NULL, 0);
	CHECK(ret == -ENOENT, "a filter for an event that is not there: %d", ret);
	nr = usertp_session_specs(s, &specs);
	CHECK(nr == 1 && !strcmp(specs[0], "cons:cons_a"), "specs changed: %u", nr);
	prog_cmd(&p, "fire 12");
	expect(s, "after the refused changes", 12, 0);
	/* A program killed mid-session: what it committed is read; the session goes on. */
	prog_cmd(&p, "fire 9");
	kill(p.pid, SIGKILL);
	waitpid(p.pid, NULL, 0);
	expect(s, "a program killed", 9, 0);
	OK(usertp_session_disable(s, "cons:cons_a"));
	{
		struct usertp_session_status st = USERTP_STRUCT_INIT(usertp_session_status);

		usertp_session_status(s, &st);
		CHECK(st.running == 0 && st.programs == 1, "status: %u of %u running", st.running,
		      st.programs);
		CHECK(usertp_session_next(s, &(struct usertp_record)USERTP_STRUCT_INIT(usertp_record),
					  100) == -ENODATA,
		      "nothing more can come");
	}
	/* A structure without its size (built against no version of ours) is refused. */
	{
		struct usertp_session_options opts = { .buffer_kb = 64 };
		struct usertp_session_status st = { .programs = 0 };
		struct usertp_record rec = { .pid = 0 };
		struct usertp_session *other = NULL;

		CHECK(usertp_session_new(&other, &opts) == -EINVAL && !other, "options of no size");
		CHECK(usertp_session_status(s, &st) == -EINVAL, "a status of no size");
		CHECK(usertp_session_next(s, &rec, 0) == -EINVAL, "a record of no size");
		{
			struct usertp_cpu_stats cs = { .read = 0 };
			struct usertp_program_info pi = { .pid = 0 };
			struct usertp_page pg = { .pid = 0 };

			CHECK(usertp_session_cpu_stats(s, 0, 0, &cs) == -EINVAL, "cpu stats of no size");
			CHECK(usertp_session_program(s, 0, &pi) == -EINVAL, "program info of no size");
			CHECK(usertp_session_next_page(s, &pg, 0) == -EINVAL, "a page of no size");
		}
		/* A larger one (a later version's): nothing written past ours. */
		struct {
			struct usertp_session_status st;
			unsigned char later[64];
		} grown;

		memset(&grown, 0xa5, sizeof(grown));
		grown.st.struct_size = sizeof(grown);
		CHECK(usertp_session_status(s, &grown.st) == 0 && grown.st.programs == 1 &&
			      grown.later[0] == 0xa5 && grown.later[63] == 0xa5,
		      "a later version's status: %u programs", grown.st.programs);
	}
	fclose(p.in);
	fclose(p.out);
	usertp_session_free(s);
	/* Hostile endpoints of their own process: garbage, then silence. */
	ret = fake_attach(0, true, &ms);
	CHECK(ret < 0 && ret != -ENOENT, "garbage peer: %d", ret);
	ret = fake_attach(0, false, &ms);
	CHECK(ret == -ETIMEDOUT || ret == -EBUSY || ret == -EAGAIN, "stalled peer: %d", ret);
	CHECK(ms < 20000, "stalled peer held us %lld ms", ms);
	/* One put in the sleeper's place, served by another process: not talked to at all. */
	ret = fake_attach(sleeper, true, &ms);
	CHECK(ret == -ENOENT && ms < 1000, "an endpoint served by another process: %d", ret);
	kill(sleeper, SIGKILL);
	waitpid(sleeper, NULL, 0);
}

/* A program gone bad and a good one, both started and attached to @s. */
static void two_programs(struct usertp_session *s, struct prog *bad, struct prog *good)
{
	prog_start(bad);
	prog_start(good);
	OK(usertp_session_attach_pid(s, bad->pid));
	OK(usertp_session_attach_pid(s, good->pid));
}

/*
 * A program whose buffers turn to garbage (it scribbles over them) is lost to the session,
 * nothing else: another program's events are all read, and the program itself runs on.
 */
static void case_hostile(void)
{
	struct usertp_session *s = session();
	struct prog bad, good;
	struct counts c;
	char name[32];
	long n;

	usertp_session_set_log(s, log_keep, NULL);
	two_programs(s, &bad, &good);
	OK(usertp_session_enable(s, "cons:*"));
	n = prog_cmd(&bad, "scribble");
	CHECK(n >= 1, "scribbled %ld regions", n);
	prog_cmd(&bad, "fire 500");
	prog_cmd(&good, "fire 40");
	drain(s, &c, 300);
	CHECK(of_pid(&c, good.pid, true) == 40 && of_pid(&c, good.pid, false) == 40,
	      "the good program: %ld + %ld", of_pid(&c, good.pid, true), of_pid(&c, good.pid, false));
	/* The session goes on: live settings still reach the good one. */
	OK(usertp_session_disable(s, "cons:cons_b"));
	prog_cmd(&good, "fire 5");
	prog_cmd(&bad, "fire 5");
	drain(s, &c, 300);
	CHECK(of_pid(&c, good.pid, true) == 5 && of_pid(&c, good.pid, false) == 0,
	      "after the change: %ld + %ld", of_pid(&c, good.pid, true), of_pid(&c, good.pid, false));
	CHECK(prog_cmd(&bad, "fire 1") >= 0, "the scribbling program died");
	/* The session said which program it lost, and why. */
	snprintf(name, sizeof(name), "[%d]: ", (int)bad.pid);
	printf("log:\n%s", log_text);
	CHECK(strstr(log_text, name) && strstr(log_text, "does not hold together"),
	      "the log does not name the scribbler: %s", log_text);
	prog_end(&bad);
	prog_end(&good);
	usertp_session_free(s);
}

/*
 * A program that puts garbage in its page being written, after records the session has read
 * (item 11b of issue 21: the reader walked the page, dropped it and peeked it again, forever,
 * at 100 % CPU).  The garbage is that program's loss, counted; the session reads on: the
 * program's later pages and another program's events.  (The test's timeout catches a loop.)
 */
static void case_garbled(void)
{
	struct usertp_session *s = session();
	struct prog bad, good;
	struct counts c;
	long n;

	usertp_session_set_log(s, log_keep, NULL);
	two_programs(s, &bad, &good);
	OK(usertp_session_enable(s, "cons:cons_a"));
	CHECK(prog_cmd(&bad, "pin") == 0, "cons-prog could not keep to CPU 0");
	prog_cmd(&bad, "fire 5");
	drain(s, &c, 300);
	CHECK(of_pid(&c, bad.pid, true) == 5, "before: %ld", of_pid(&c, bad.pid, true));
	n = prog_cmd(&bad, "garble 1");
	CHECK(n >= 1, "garbled %ld pages", n);
	prog_cmd(&good, "fire 40");
	drain(s, &c, 300);
	CHECK(of_pid(&c, good.pid, true) == 40, "the good program: %ld", of_pid(&c, good.pid, true));
	/* More than a page more: the garbled page is left behind, its loss said. */
	prog_cmd(&bad, "fire 1000");
	drain(s, &c, 300);
	CHECK(of_pid(&c, bad.pid, true) >= 700 && c.lost >= 1,
	      "after the garbage: %ld read, %ld lost", of_pid(&c, bad.pid, true), c.lost);
	printf("log:\n%s", log_text);
	CHECK(strstr(log_text, "does not parse"), "the log does not say so: %s", log_text);
	prog_end(&bad);
	prog_end(&good);
	usertp_session_free(s);
}

/*
 * A program that truncates its buffers' memfd while a session maps them (issue 21, item 11:
 * root's mount died of SIGBUS, root's record -a with it): the memfd is sealed against
 * shrinking, the truncation fails, and the session reads on.
 */
static void case_shrunk(void)
{
	struct usertp_session *s = session();
	struct prog bad, good;
	struct counts c;

	two_programs(s, &bad, &good);
	OK(usertp_session_enable(s, "cons:cons_a"));
	prog_cmd(&bad, "fire 5");
	drain(s, &c, 300);
	CHECK(prog_cmd(&bad, "shrink") == 0, "a memfd of the buffers could be truncated");
	prog_cmd(&bad, "fire 50");
	prog_cmd(&good, "fire 40");
	drain(s, &c, 300);
	CHECK(of_pid(&c, bad.pid, true) == 50 && of_pid(&c, good.pid, true) == 40,
	      "after the truncation: %ld and %ld", of_pid(&c, bad.pid, true), of_pid(&c, good.pid, true));
	prog_end(&bad);
	prog_end(&good);
	usertp_session_free(s);
}

/* Detached, a program records nothing more for the session; what it had is still read. */
static void case_detach(void)
{
	struct usertp_session *s = session();
	struct prog a, b;

	prog_start(&a);
	prog_start(&b);
	OK(usertp_session_attach_pid(s, a.pid));
	OK(usertp_session_attach_pid(s, b.pid));
	OK(usertp_session_enable(s, "cons:cons_a"));
	prog_cmd(&a, "fire 30");
	prog_cmd(&b, "fire 20");
	OK(usertp_session_detach_pid(s, a.pid));
	CHECK(usertp_session_detach_pid(s, a.pid) == -ESRCH, "detached twice");
	expect(s, "what both had at the detach", 30 + 20, 0);
	prog_cmd(&a, "fire 100");
	prog_cmd(&b, "fire 10");
	expect(s, "after the detach: the other one's", 10, 0);
	prog_end(&a);
	prog_end(&b);
	usertp_session_free(s);
}

/* Raw pages: every record once, in the kernel's page format, with the session's ids. */
static void case_pages(void)
{
	struct usertp_session *s = session();
	struct usertp_page page = USERTP_STRUCT_INIT(usertp_page);
	struct kbuffer *kb;
	struct prog p;
	long records = 0, pages = 0, bad = 0;
	int ret;

	prog_start(&p);
	OK(usertp_session_attach_pid(s, p.pid));
	OK(usertp_session_enable(s, "cons:cons_b"));
	prog_cmd(&p, "fire 3000");
	prog_end(&p); /* its last, partial page comes once it has ended */
	/* Each page read as libtraceevent reads the kernel's (kbuffer). */
	kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	while ((ret = usertp_session_next_page(s, &page, 1000)) == 1) {
		unsigned long long ts, last = 0;
		void *data;
		uint64_t commit, used;

		pages++;
		memcpy(&commit, (const unsigned char *)page.data + 8, 8);
		used = commit & ((1ull << 30) - 1);
		CHECK(page.size == 4096 && used <= 4080, "page %ld: size %u, used %llu", pages, page.size,
		      (unsigned long long)used);
		kbuffer_load_subbuffer(kb, (void *)page.data);
		/* Each record: common_type the session's cons_b; times in order. */
		while ((data = kbuffer_read_event(kb, &ts))) {
			struct tep_record r = { .data = data, .size = (int)kbuffer_event_size(kb) };
			int type = tep_data_type(usertp_session_tep(s), &r);

			bad += !tep_find_event(usertp_session_tep(s), type) ||
			       strcmp(tep_find_event(usertp_session_tep(s), type)->name, "cons_b") ||
			       ts < last;
			last = ts;
			records++;
			kbuffer_next_event(kb, NULL);
		}
	}
	kbuffer_free(kb);
	CHECK(ret == -ENODATA, "next_page: %d", ret);
	CHECK(records == 3000 && !bad, "pages: %ld records on %ld pages, %ld not cons_b or out of order", records, pages,
	      bad);
	usertp_session_free(s);
}

/*
 * Filters on a live session: exactly the matching records, a refused one changing nothing
 * (the error with its caret), removed; a program that comes later has the filter from its
 * first record, and an event that cannot take it is not recorded.
 */
static void case_filter(void)
{
	struct usertp_session *s = session();
	char err[4096];
	struct counts c;
	struct prog p;
	int ret, status;

	prog_start(&p);
	OK(usertp_session_attach_pid(s, p.pid));
	OK(usertp_session_enable(s, "cons:*"));
	ret = usertp_session_set_filter(s, "cons:cons_a", "seq >= 10 && seq < 20", err, sizeof(err));
	CHECK(!ret, "set_filter: %d %s", ret, err);
	prog_cmd(&p, "fire 100");
	drain(s, &c, 300);
	CHECK(c.a == 10 && c.b == 100 && !c.lost, "filtered: a %ld, b %ld, lost %ld", c.a, c.b, c.lost);
	ret = usertp_session_set_filter(s, "cons:cons_a", "seq >= 10 &&", err, sizeof(err));
	CHECK(ret == -EINVAL && strstr(err, "seq >= 10 &&\n          ^\nparse_error: Meaningless filter expression"),
	      "refused: %d [%s]", ret, err);
	ret = usertp_session_set_filter(s, "cons:cons_a", "(seq == 1", err, sizeof(err));
	CHECK(ret == -ENOENT && strstr(err, "parse_error: Too many '('"), "refused: %d [%s]", ret, err);
	prog_cmd(&p, "fire 100");
	drain(s, &c, 300);
	CHECK(c.a == 10 && c.b == 100, "after the refusals: a %ld, b %ld", c.a, c.b);
	OK(usertp_session_set_filter(s, "cons:*", "seq < 5", err, sizeof(err)));
	prog_cmd(&p, "fire 100");
	drain(s, &c, 300);
	CHECK(c.a == 5 && c.b == 5, "cons:*: a %ld, b %ld", c.a, c.b);
	OK(usertp_session_set_filter(s, "cons:*", NULL, err, sizeof(err)));
	OK(usertp_session_set_filter(s, "cons:cons_a", "0", err, sizeof(err)));
	prog_cmd(&p, "fire 50");
	expect(s, "filters removed", 50, 50);
	prog_end(&p);
	usertp_session_free(s);

	/* Later programs: the filter from the start; one that does not fit: not recorded. */
	s = session();
	OK(usertp_session_enable(s, "cons:*"));
	OK(usertp_session_set_filter(s, "cons:cons_b", "seq == 7", err, sizeof(err)));
	OK(usertp_session_attach_all(s));
	run_auto(s, 20, &status);
	drain(s, &c, 300);
	CHECK(c.a == 20 && c.b == 1 && !c.lost, "a program started after the filter: a %ld, b %ld",
	      c.a, c.b);
	OK(usertp_session_set_filter(s, "cons:cons_b", "nosuch == 1", err, sizeof(err)));
	log_text[0] = 0;
	usertp_session_set_log(s, log_keep, NULL);
	run_auto(s, 20, &status);
	/* (Its events come after it joined: the one that does not take its filter is left out.) */
	drain(s, &c, 300);
	CHECK(c.a == 20 && c.b == 0, "a program whose filter does not fit: a %ld, b %ld", c.a, c.b);
	/* ...and said. */
	CHECK(strstr(log_text, "the filter of cons:cons_b does not fit cons:cons_b, which is not recorded") &&
	      strstr(log_text, "\nnosuch == 1\n       ^\nparse_error: Field not found"),
	      "the log: [%s]", log_text);
	usertp_session_free(s);
}

/* Records of each event by thread (common_pid): cons_a's of @tid, and all of both. */
static void drain_tid(struct usertp_session *s, pid_t tid, long *of_tid, long *all)
{
	struct usertp_record rec = USERTP_STRUCT_INIT(usertp_record);
	int ret;

	*of_tid = *all = 0;
	while ((ret = usertp_session_next(s, &rec, 300)) == 1) {
		unsigned long long pid = 0;

		if (!rec.event)
			continue;
		tep_read_number_field(tep_find_common_field(rec.event, "common_pid"), rec.data, &pid);
		*of_tid += (pid_t)pid == tid;
		(*all)++;
	}
	CHECK(ret == 0 || ret == -ENODATA, "next: %d (%s)", ret, usertp_session_error(s));
}

/*
 * Pid filters on a live session (set_event_pid, set_event_notrace_pid, event-fork): the
 * threads of a program, a thread it makes, a child it forks, cleared; a bad pid refused.
 */
static void case_pids(void)
{
	struct usertp_session *s = session();
	struct counts c;
	struct prog p;
	long of_tid, all;
	pid_t tid, child;

	prog_start(&p);
	OK(usertp_session_attach_pid(s, p.pid));
	OK(usertp_session_enable(s, "cons:*"));
	OK(usertp_session_set_pid_filter(s, &p.pid, 1, NULL, 0, false));
	prog_cmd(&p, "fire 10");
	tid = (pid_t)prog_cmd(&p, "thread 7");
	drain_tid(s, p.pid, &of_tid, &all);
	CHECK(of_tid == 20 && all == 20, "set_event_pid main: %ld of %ld", of_tid, all);
	OK(usertp_session_set_pid_filter(s, NULL, 0, &p.pid, 1, false));
	prog_cmd(&p, "fire 10");
	tid = (pid_t)prog_cmd(&p, "thread 7");
	drain_tid(s, tid, &of_tid, &all);
	CHECK(of_tid == 14 && all == 14, "set_event_notrace_pid main: %ld of %ld", of_tid, all);
	/* A bad pid: nothing changes. */
	{
		pid_t bad[2] = { 5, -1 };

		CHECK(usertp_session_set_pid_filter(s, bad, 2, NULL, 0, false) == -EINVAL,
		      "a pid of -1 taken");
		prog_cmd(&p, "fire 3");
		drain_tid(s, p.pid, &of_tid, &all);
		CHECK(all == 0, "after a refused pid list: %ld", all);
	}
	/* event-fork: the thread and the child the listed main thread makes are listed. */
	OK(usertp_session_set_pid_filter(s, &p.pid, 1, NULL, 0, true));
	tid = (pid_t)prog_cmd(&p, "thread 5");
	drain_tid(s, tid, &of_tid, &all);
	CHECK(of_tid == 10 && all == 10, "event-fork, a new thread: %ld of %ld", of_tid, all);
	child = (pid_t)prog_cmd(&p, "fork 6");
	drain(s, &c, 300);
	CHECK(of_pid(&c, child, true) == 6 && c.a == 6 && c.b == 6, "event-fork, a child: %ld, %ld %ld",
	      of_pid(&c, child, true), c.a, c.b);
	OK(usertp_session_set_pid_filter(s, &p.pid, 1, NULL, 0, false));
	child = (pid_t)prog_cmd(&p, "fork 6");
	tid = (pid_t)prog_cmd(&p, "thread 5");
	drain(s, &c, 300);
	CHECK(c.a == 0 && c.b == 0, "no event-fork: a child and a thread recorded: %ld %ld", c.a, c.b);
	OK(usertp_session_set_pid_filter(s, NULL, 0, NULL, 0, false));
	prog_cmd(&p, "fire 3");
	prog_cmd(&p, "thread 4");
	drain(s, &c, 300);
	CHECK(c.a == 7 && c.b == 7 && !c.lost, "pid filter cleared: %ld %ld", c.a, c.b);
	prog_end(&p);
	usertp_session_free(s);
}

static void case_other_user(void)
{
	struct passwd *pw = getpwnam("usertp-test2");
	struct prog p;
	pid_t pid;
	int status;

	if (geteuid() != 0 || !pw) {
		printf("SKIP: needs root and the user usertp-test2\n");
		exit(77);
	}
	prog_start(&p);
	pid = fork();
	if (pid == 0) {
		struct usertp_session *s;
		char dir[64];
		int ret;

		snprintf(dir, sizeof(dir), "/tmp/usertp-cons-%d", (int)getpid());
		mkdir(dir, 0700);
		if (chown(dir, pw->pw_uid, pw->pw_gid) || setgroups(0, NULL) ||
		    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) ||
		    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid))
			_exit(100);
		setenv("XDG_RUNTIME_DIR", dir, 1);
		if (usertp_session_new(&s, NULL))
			_exit(101);
		ret = usertp_session_attach_pid(s, p.pid);
		fprintf(stderr, "as another user: %d (%s)\n", ret, usertp_session_error(s));
		usertp_session_free(s);
		rmdir(dir);
		_exit(ret == -EACCES ? 0 : 102);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && !WEXITSTATUS(status), "another user's attach: status %#x", status);
	/* The program goes on, and root may record it. */
	{
		struct usertp_session *s = session();

		OK(usertp_session_attach_pid(s, p.pid));
		OK(usertp_session_enable(s, "cons:*"));
		prog_cmd(&p, "fire 3");
		expect(s, "root after the other user", 3, 3);
		usertp_session_free(s);
	}
	prog_end(&p);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* How soon a change takes effect: enable, then wait for the first record (a busy program). */
/* Is there an instance whose name starts with "usertp-record-@pid"? */
static bool kernel_instance_of(pid_t pid)
{
	char prefix[64];
	bool found = false;
	struct dirent *de;
	DIR *d = opendir("/sys/kernel/tracing/instances");

	snprintf(prefix, sizeof(prefix), "usertp-record-%d", (int)pid);
	while (d && (de = readdir(d)))
		found |= !strncmp(de->d_name, prefix, strlen(prefix)) &&
			 (!de->d_name[strlen(prefix)] || de->d_name[strlen(prefix)] == '-');
	if (d)
		closedir(d);
	return found;
}

static void case_kernel(void)
{
	char *argv[] = { (char *)cons_prog, (char *)"auto", (char *)"7", NULL };
	struct usertp_session *s;
	struct usertp_record rec = USERTP_STRUCT_INIT(usertp_record);
	char err[1024] = "";
	long a = 0, b = 0, forks = 0, outside = 0, other = 0;
	pid_t pid, tree[64];
	unsigned int nr_tree = 0;
	int status, ret;

	if (access("/sys/kernel/tracing/instances", W_OK))
		SKIP("no writable tracefs");
	s = session();
	/* A typo: refused with the close match, as trace-cmd refuses it; nothing made. */
	ret = usertp_session_enable(s, "sched:sched_process_forkk");
	CHECK(ret == -ENOENT && strstr(usertp_session_error(s), "sched:sched_process_fork"),
	      "a kernel typo: %d %s", ret, usertp_session_error(s));
	OK(usertp_session_enable(s, "sched:sched_process_fork"));
	CHECK(kernel_instance_of(getpid()), "no tracefs instance of the session");
	/* A filter the kernel refuses: its errno and message, with the caret. */
	ret = usertp_session_set_filter(s, "sched:sched_process_fork", "nosuch == 1", err,
					sizeof(err));
	CHECK(ret == -EINVAL && strstr(err, "nosuch") && strchr(err, '^'),
	      "a kernel filter refused: %d [%s]", ret, err);
	OK(usertp_session_set_filter(s, "sched:sched_process_fork", "child_pid > 0", NULL, 0));
	/* A file is chosen before the kernel's events are enabled (its spool has them). */
	ret = usertp_session_write_dat(s, "/tmp/usertp-test-kernel.dat");
	CHECK(ret == -EBUSY, "write_dat after kernel events: %d", ret);
	usertp_session_free(s);
	CHECK(!kernel_instance_of(getpid()), "the session's instance is left behind");

	/*
	 * A command alone: its events, its threads' forks (the kernel's), nothing else.  (Its
	 * pid filter first: kernel events enabled before it record every task, as tracefs's do.)
	 */
	s = session();
	pid = usertp_session_run_only(s, argv, true);
	CHECK(pid > 0, "run_only: %d %s", (int)pid, usertp_session_error(s));
	OK(usertp_session_enable(s, "sched:sched_process_fork,cons:*"));
	tree[nr_tree++] = pid;
	for (;;) {
		ret = usertp_session_next(s, &rec, 100);
		if (ret == 1) {
			bool in = false;

			for (unsigned int i = 0; i < nr_tree; i++)
				in |= rec.tid == tree[i];
			outside += !in;
			if (!in)
				fprintf(stderr, "outside the command: pid %d tid %d %s\n",
					(int)rec.pid, (int)rec.tid,
					rec.event ? rec.event->name : "?");
			if (rec.pid == 0 && rec.event &&
			    !strcmp(rec.event->name, "sched_process_fork")) {
				unsigned long long child = 0;

				tep_read_number_field(tep_find_field(rec.event, "child_pid"),
						      rec.data, &child);
				if (nr_tree < 64)
					tree[nr_tree++] = (pid_t)child;
				forks++;
			} else if (rec.pid == pid && rec.event &&
				   !strcmp(rec.event->name, "cons_a")) {
				a++;
			} else if (rec.pid == pid && rec.event &&
				   !strcmp(rec.event->name, "cons_b")) {
				b++;
			} else {
				other++;
			}
			continue;
		}
		if (ret < 0 || waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	while (usertp_session_next(s, &rec, 100) == 1) {
		bool in = false;

		for (unsigned int i = 0; i < nr_tree; i++)
			in |= rec.tid == tree[i];
		outside += !in;
		a += rec.pid == pid && rec.event && !strcmp(rec.event->name, "cons_a");
		b += rec.pid == pid && rec.event && !strcmp(rec.event->name, "cons_b");
	}
	CHECK(a == 7 && b == 7, "the command's events: %ld %ld", a, b);
	/* cons-prog makes its control thread: the kernel says so. */
	CHECK(forks >= 1, "no fork of the command's threads");
	CHECK(outside == 0, "%ld records of tasks outside the command", outside);
	CHECK(other == 0, "%ld records of other events", other);
	usertp_session_free(s);
	CHECK(!kernel_instance_of(getpid()), "the session's instance is left behind");

	/*
	 * A session that writes a file: the kernel's events go into it with the command's, and
	 * the summary counts them (the command's 14, and its thread's forks).
	 */
	s = session();
	{
		uint64_t cpu_events[1024], cpu_lost[1024];
		struct usertp_dat_summary sum = { .struct_size = sizeof(sum), .cpu_events = cpu_events,
						  .cpu_lost = cpu_lost, .max_cpus = 1024 };

		OK(usertp_session_write_dat(s, "/tmp/usertp-test-kernel.dat"));
		pid = usertp_session_run_only(s, argv, true);
		CHECK(pid > 0, "run_only: %d %s", (int)pid, usertp_session_error(s));
		OK(usertp_session_enable(s, "sched:sched_process_fork,cons:*"));
		CHECK(kernel_instance_of(getpid()), "no tracefs instance of the file session");
		wait_processing(s, pid, &status);
		OK(usertp_session_finish(s, &sum));
		CHECK(sum.events >= 15 && sum.lost == 0 && sum.programs == 1,
		      "the file: %llu events, %llu lost, %u programs", (unsigned long long)sum.events,
		      (unsigned long long)sum.lost, sum.programs);
		unlink("/tmp/usertp-test-kernel.dat");
	}
	usertp_session_free(s);
	CHECK(!kernel_instance_of(getpid()), "an instance left by a file session");

	/*
	 * Children forked while the reader does not look, each firing then exiting: each one's
	 * events come before the kernel's sched_process_exit of it.  (Before: one fork taken per
	 * look, so the second child's exit, older than that look, came before its events.)
	 */
	s = session();
	{
		pid_t kids[3];
		bool exited[3] = { false, false, false };
		long after_exit = 0, of_kids = 0;
		struct prog p;

		prog_start(&p);
		OK(usertp_session_attach_pid(s, p.pid));
		/*
		 * Its tree's exits alone, as record -P has them: a session's kernel events are
		 * every task's without a pid filter (before: the reading below, until 300 ms
		 * without a record, never ended while other tests started processes).
		 */
		OK(usertp_session_set_pid_filter(s, &p.pid, 1, NULL, 0, true));
		OK(usertp_session_enable(s, "sched:sched_process_exit,cons:*"));
		usertp_session_process(s, 0);
		for (unsigned int k = 0; k < 3; k++)
			kids[k] = (pid_t)prog_cmd(&p, "fork 2");
		while (usertp_session_next(s, &rec, 300) == 1) {
			for (unsigned int k = 0; k < 3; k++) {
				if (rec.pid == kids[k] && rec.event) {
					after_exit += exited[k];
					of_kids++;
				}
				if (!rec.pid && rec.tid == kids[k] && rec.event &&
				    !strcmp(rec.event->name, "sched_process_exit"))
					exited[k] = true;
			}
		}
		CHECK(of_kids == 12 && after_exit == 0 && exited[0] && exited[1] && exited[2],
		      "3 children: %ld events, %ld after their exits, exits %d %d %d", of_kids,
		      after_exit, exited[0], exited[1], exited[2]);
		prog_end(&p);
	}
	usertp_session_free(s);
}

static void case_latency(void)
{
	struct usertp_session *s = session();
	struct usertp_record rec = USERTP_STRUCT_INIT(usertp_record);
	double best = 1e12, sum = 0, worst = 0;
	struct prog p;
	pid_t firer;
	int rounds = 20;

	prog_start(&p);
	OK(usertp_session_attach_pid(s, p.pid));
	/* A child of the test keeps the program firing: 2000 events per command. */
	firer = fork();
	if (firer == 0) {
		for (;;)
			if (prog_cmd(&p, "fire 1000") < 0)
				_exit(0);
	}
	for (int i = 0; i < rounds; i++) {
		double t0 = now_us(), enabled, first = 0;

		OK(usertp_session_enable(s, "cons:cons_a"));
		enabled = now_us();
		while (usertp_session_next(s, &rec, 1000) == 1) {
			if (rec.event && !strcmp(rec.event->name, "cons_a") && rec.ts) {
				first = now_us();
				break;
			}
		}
		OK(usertp_session_disable(s, "cons:cons_a"));
		/* Read what the round left. */
		while (usertp_session_next(s, &rec, 20) == 1)
			;
		if (first) {
			double d = first - t0;

			best = d < best ? d : best;
			worst = d > worst ? d : worst;
			sum += d;
		}
		printf("round %d: enable returned after %.0f us, first record after %.0f us\n", i,
		       enabled - t0, first ? first - t0 : -1);
	}
	printf("enable to first record: best %.0f us, mean %.0f us, worst %.0f us (%d rounds)\n",
	       best, sum / rounds, worst, rounds);
	kill(firer, SIGKILL);
	waitpid(firer, NULL, 0);
	prog_end(&p);
	usertp_session_free(s);
}

/*
 * <usertp/track.h>'s events through a session, as any program's: "usertp:*" enabled, a
 * program's spans and counter read with their fields (track_event_type, slice_name,
 * counter_value), in order, none lost.
 */
static void case_spans(void)
{
	struct usertp_session *s = session();
	struct usertp_record rec = USERTP_STRUCT_INIT(usertp_record);
	long begins = 0, ends = 0, counters = 0, bad = 0, next_value = 0;
	struct prog p;
	int ret;

	prog_start(&p);
	OK(usertp_session_attach_pid(s, p.pid));
	OK(usertp_session_enable(s, "usertp:*"));
	prog_cmd(&p, "spans 20");
	while ((ret = usertp_session_next(s, &rec, 300)) == 1) {
		unsigned long long v = 0;
		char type = 0;

		CHECK(!rec.lost_before, "spans: %llu lost", (unsigned long long)rec.lost_before);
		if (!rec.event)
			continue;
		if (!strcmp(rec.event->name, "usertp_span")) {
			struct tep_format_field *name = tep_find_field(rec.event, "slice_name");
			int len = 0;
			const char *text = name ? tep_get_field_raw(NULL, rec.event, "slice_name",
								    &(struct tep_record){ .data = (void *)rec.data,
											  .size = (int)rec.size },
								    &len, 0) : NULL;

			tep_read_number_field(tep_find_field(rec.event, "track_event_type"), rec.data, &v);
			type = (char)v;
			begins += type == 'B';
			ends += type == 'E';
			bad += !text || strncmp(text, "work", (size_t)len) || (type != 'B' && type != 'E');
		} else if (!strcmp(rec.event->name, "usertp_counter")) {
			tep_read_number_field(tep_find_field(rec.event, "counter_value"), rec.data, &v);
			bad += (long)v != next_value++;
			counters++;
		}
	}
	CHECK(ret == 0 || ret == -ENODATA, "next: %d (%s)", ret, usertp_session_error(s));
	CHECK(begins == 20 && ends == 20 && counters == 20 && !bad,
	      "spans: %ld begins, %ld ends, %ld counters (want 20 each), %ld wrong", begins, ends,
	      counters, bad);
	prog_end(&p);
	usertp_session_free(s);
}

/*
 * usertp_printk() through a session: "ftrace:bprint" enabled, each record printed by the
 * session's tep handle as trace-cmd prints it: "main: cons I of n", in order, none lost.
 */
static void case_printk(void)
{
	struct usertp_session *s = session();
	struct usertp_record rec = USERTP_STRUCT_INIT(usertp_record);
	struct trace_seq seq;
	long n = 0, bad = 0;
	struct prog p;
	int ret;

	trace_seq_init(&seq);
	prog_start(&p);
	OK(usertp_session_attach_pid(s, p.pid));
	OK(usertp_session_enable(s, "ftrace:bprint"));
	prog_cmd(&p, "printk 20");
	while ((ret = usertp_session_next(s, &rec, 300)) == 1) {
		char want[64];

		CHECK(!rec.lost_before, "printk: %llu lost", (unsigned long long)rec.lost_before);
		if (!rec.event || strcmp(rec.event->name, "bprint"))
			continue;
		trace_seq_reset(&seq);
		tep_print_event(usertp_session_tep(s), &seq,
				&(struct tep_record){ .data = (void *)rec.data, .size = (int)rec.size },
				"%s", TEP_PRINT_INFO);
		trace_seq_terminate(&seq);
		snprintf(want, sizeof(want), "main: cons %ld of n", n++);
		if (strcmp(seq.buffer, want) && bad++ < 3)
			fprintf(stderr, "printk: \"%s\", want \"%s\"\n", seq.buffer, want);
	}
	CHECK(ret == 0 || ret == -ENODATA, "next: %d (%s)", ret, usertp_session_error(s));
	CHECK(n == 20 && !bad, "printk: %ld records (want 20), %ld wrong", n, bad);
	trace_seq_destroy(&seq);
	prog_end(&p);
	usertp_session_free(s);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test-consumer CASE CONS-PROG\n");
		return 2;
	}
	cons_prog = argv[2];
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(argv[1], "live"))
		case_live();
	else if (!strcmp(argv[1], "spans"))
		case_spans();
	else if (!strcmp(argv[1], "printk"))
		case_printk();
	else if (!strcmp(argv[1], "later"))
		case_later();
	else if (!strcmp(argv[1], "fork"))
		case_fork();
	else if (!strcmp(argv[1], "two"))
		case_two();
	else if (!strcmp(argv[1], "errors"))
		case_errors();
	else if (!strcmp(argv[1], "small"))
		case_small();
	else if (!strcmp(argv[1], "filter"))
		case_filter();
	else if (!strcmp(argv[1], "pids"))
		case_pids();
	else if (!strcmp(argv[1], "hostile"))
		case_hostile();
	else if (!strcmp(argv[1], "garbled"))
		case_garbled();
	else if (!strcmp(argv[1], "shrunk"))
		case_shrunk();
	else if (!strcmp(argv[1], "detach"))
		case_detach();
	else if (!strcmp(argv[1], "pages"))
		case_pages();
	else if (!strcmp(argv[1], "other-user"))
		case_other_user();
	else if (!strcmp(argv[1], "kernel"))
		case_kernel();
	else if (!strcmp(argv[1], "latency"))
		case_latency();
	else
		return 2;
	if (harness_failed)
		fprintf(stderr, "%d failure(s)\n", harness_failed);
	else
		printf("ok\n");
	return harness_failed ? 1 : 0;
}
