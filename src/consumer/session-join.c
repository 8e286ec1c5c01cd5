/* SPDX-License-Identifier: MIT */
/*
 * session-join.c - how programs come to a session and go (session.h): attached by pid, run
 * as its command, joining through its socket or every user's (attach_all), forked children;
 * detached.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "client.h"
#include "ctl-proto.h"
#include "number.h"
#include "session.h"
#include "filter.h"
#include "format-field.h"
#include "spec.h"

/* --- our socket: joins, forked children --------------------------------------------------- */

/*
 * A socket listening at @path, which only its owner may use (or, with @everyone, anyone).  Its
 * backlog is the most the system allows: a forked child whose connect() finds it full is not
 * recorded, and a pre-forking server starts hundreds at once (before: 64, and record-fork's
 * burst kept 65 of 300).
 */
static int listen_at(const char *path, bool everyone)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(sa.sun_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(sa.sun_path, everyone ? 0666 : 0600) || listen(fd, SOMAXCONN)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

int usertp__ses_listen_open(struct usertp_session *s)
{
	char dir[PATH_MAX];
	static unsigned int sessions; /* (threads of usertp mount make them at once) */
	unsigned int serial = __atomic_fetch_add(&sessions, 1, __ATOMIC_RELAXED);
	int ret = usertp__client_dir(dir, sizeof(dir), true);

	if (ret)
		return ret;
	usertp__client_remove_stale();
	/* One per session: record-PID.sock for the first of a process (the name recorders had). */
	if ((size_t)snprintf(s->sock_path, sizeof(s->sock_path),
			     serial ? "%s/record-%d.%u.sock" : "%s/record-%d.sock", dir, (int)getpid(),
			     serial) >= sizeof(s->sock_path))
		return -ENAMETOOLONG;
	s->listen_fd = listen_at(s->sock_path, false);
	if (s->listen_fd < 0) {
		s->sock_path[0] = 0;
		return s->listen_fd;
	}
	return 0;
}

/*
 * Root's session of all: every user's programs that start join it through a socket in the
 * system directory (ctl-proto.h), "all." (@prefix) and our socket's name.  Or, "again.": the
 * programs of other users we record, which may only join again (usertp__ses_listen_again()).
 */
static int listen_every_user(struct usertp_session *s, const char *prefix)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char dir[PATH_MAX];
	int ret = usertp__ctl_system_dir(dir, sizeof(dir), true);

	if (ret)
		return usertp__session_fail(s, ret, "%s: %s", dir,
					    ret == -EPERM ? "not root's alone (another user may "
							    "write in it)" : strerror(-ret));
	if ((size_t)snprintf(s->every_path, sizeof(s->every_path), "%s/%s%s", dir, prefix,
			     strrchr(s->sock_path, '/') + 1) >= sizeof(s->every_path)) {
		s->every_path[0] = 0;
		return usertp__session_fail(s, -ENAMETOOLONG, "%s: %s", dir, strerror(ENAMETOOLONG));
	}
	usertp__client_remove_stale_in(dir);
	s->every_fd = listen_at(s->every_path, true);
	if (s->every_fd < 0) {
		ret = s->every_fd;
		usertp__session_fail(s, ret, "%s: %s", s->every_path, strerror(-ret));
		s->every_path[0] = 0;
		return ret;
	}
	ev.data.fd = s->every_fd;
	epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->every_fd, &ev);
	s->every_again_only = !strcmp(prefix, USERTP_CTL_AGAIN_PREFIX);
	return 0;
}

int usertp__ses_listen_again(struct usertp_session *s)
{
	return s->every_fd >= 0 ? 0 : listen_every_user(s, USERTP_CTL_AGAIN_PREFIX);
}

/*
 * Root's session of all, which had a socket for other users' programs to join again: it takes
 * every user's from now on (renamed "all.": programs that find it join; the programs told its
 * old name join it no more, should they close their connection).
 */
static int listen_every_user_all(struct usertp_session *s)
{
	char path[sizeof(s->every_path)];
	const char *name = strrchr(s->every_path, '/') + 1 + strlen(USERTP_CTL_AGAIN_PREFIX);

	if (s->every_fd < 0)
		return listen_every_user(s, USERTP_CTL_ALL_PREFIX);
	if ((size_t)snprintf(path, sizeof(path), "%.*s%s%s",
			     (int)(strrchr(s->every_path, '/') + 1 - s->every_path), s->every_path,
			     USERTP_CTL_ALL_PREFIX, name) >= sizeof(path) ||
	    rename(s->every_path, path))
		return usertp__session_fail(s, -errno ? -errno : -ENAMETOOLONG, "%s: %s", path,
					    strerror(errno ? errno : ENAMETOOLONG));
	memcpy(s->every_path, path, sizeof(path));
	s->every_again_only = false;
	return 0;
}

/* Is @uid kept out for now (a peer of it that stalled or lied lately)? */
static bool foreign_banned(struct usertp_session *s, uid_t uid, long long now)
{
	for (unsigned int i = 0; i < USERTP__FOREIGN_BANS; i++)
		if (s->bans[i].until_ms > now && s->bans[i].uid == uid)
			return true;
	return false;
}

static void foreign_ban(struct usertp_session *s, uid_t uid, long long now)
{
	unsigned int oldest = 0;

	for (unsigned int i = 1; i < USERTP__FOREIGN_BANS; i++)
		if (s->bans[i].until_ms < s->bans[oldest].until_ms)
			oldest = i;
	s->bans[oldest].uid = uid;
	s->bans[oldest].until_ms = now + USERTP__FOREIGN_BAN_MS;
}

int usertp_session_attach_all(struct usertp_session *s)
{
	struct usertp__program *progs;
	char dir[PATH_MAX];
	int n, ret;

	if (s->all)
		return 0;
	ret = usertp__client_dir(dir, sizeof(dir), true);
	if (ret)
		return usertp__session_fail(s, ret, "the runtime directory: %s", strerror(-ret));
	/* Programs that start look there: "all/" and our socket's name (ctl-proto.h). */
	if ((size_t)snprintf(s->all_path, sizeof(s->all_path), "%.*s/%s/%s", (int)sizeof(s->all_path),
			     dir, USERTP_CTL_ALL_DIR, strrchr(s->sock_path, '/') + 1) >=
	    sizeof(s->all_path)) {
		s->all_path[0] = 0;
		return usertp__session_fail(s, -ENAMETOOLONG, "the runtime directory: %s",
					    strerror(ENAMETOOLONG));
	}
	*strrchr(s->all_path, '/') = 0;
	ret = mkdir(s->all_path, 0700) && errno != EEXIST ? -errno : 0;
	s->all_path[strlen(s->all_path)] = '/';
	if (!ret) {
		unlink(s->all_path); /* (left by a session of a process of this pid that died) */
		ret = symlink(s->sock_path, s->all_path) ? -errno : 0;
	}
	if (ret) {
		usertp__session_fail(s, ret, "%s: %s", s->all_path, strerror(-ret));
		s->all_path[0] = 0;
		return ret;
	}
	if (geteuid() == 0 && (ret = listen_every_user_all(s))) {
		unlink(s->all_path);
		s->all_path[0] = 0;
		return ret;
	}
	s->all = true;
	/*
	 * Those running, found answering (all asked at once): ours attached as usual; another
	 * user's each answer waited for USERTP__FOREIGN_ANSWER_MS, and a user one of whose
	 * programs does not answer so is kept out (its other programs too), as when they join.
	 */
	n = usertp__client_programs(&progs, geteuid() == 0);
	for (int i = 0; i < n; i++) {
		long long start = usertp__mono_ms();
		uid_t uid;

		if (progs[i].pid == getpid() || usertp__ses_source_of_pid(s, progs[i].pid))
			continue;
		if (!progs[i].foreign) {
			usertp__ses_attach_found(s, &progs[i], USERTP__CALL_TIMEOUT_MS);
			continue;
		}
		if (usertp__proc_owner(progs[i].pid, &uid) || foreign_banned(s, uid, start))
			continue;
		if (usertp__ses_attach_found(s, &progs[i], USERTP__FOREIGN_ANSWER_MS) == -ETIMEDOUT ||
		    usertp__mono_ms() - start >= 3 * USERTP__FOREIGN_ANSWER_MS)
			foreign_ban(s, uid, usertp__mono_ms());
	}
	if (n > 0)
		free(progs);
	return 0;
}

/*
 * Start @argv.  With @hold, it waits for a byte on a pipe before it execs: the caller gives
 * it later (s->run_release), or the pipe's end, and it exits without running.
 */
static pid_t run(struct usertp_session *s, char *const argv[], bool hold)
{
	int release[2] = { -1, -1 };
	sigset_t empty;
	pid_t pid;

	if (!argv || !argv[0])
		return usertp__session_fail(s, -EINVAL, "no command");
	if (s->run_release >= 0)
		return usertp__session_fail(s, -EBUSY, "a command waits to start already");
	if (hold && pipe2(release, O_CLOEXEC))
		return usertp__session_fail(s, -errno, "a pipe: %s", strerror(errno));
	s->ran = true;
	pid = fork();
	if (pid < 0) {
		int err = errno;

		if (hold) {
			close(release[0]);
			close(release[1]);
		}
		return usertp__session_fail(s, -err, "cannot start %s: %s", argv[0], strerror(err));
	}
	if (pid == 0) {
		char go;
		ssize_t n;

		sigemptyset(&empty);
		sigprocmask(SIG_SETMASK, &empty, NULL);
		if (hold) {
			close(release[1]);
			do
				n = read(release[0], &go, 1);
			while (n < 0 && errno == EINTR);
			if (n != 1)
				_exit(127); /* the session ended before it was to start */
		}
		/* (Several recorders: their sockets a line each, joined in order: libusertp(3).) */
		if (s->run_also) {
			char both[2 * sizeof(s->sock_path) + 1];

			snprintf(both, sizeof(both), "%s\n%s", s->sock_path, s->run_also->sock_path);
			setenv("USERTP_SESSION", both, 1);
		} else {
			setenv("USERTP_SESSION", s->sock_path, 1);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "usertp: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	s->run_pid = pid;
	if (s->run_also)
		s->run_also->run_pid = pid; /* (its filters stop it before main() too) */
	if (hold) {
		close(release[0]);
		s->run_release = release[1];
	}
	return pid;
}

int usertp_session_run_also(struct usertp_session *s, struct usertp_session *also)
{
	if (!also || also == s)
		return usertp__session_fail(s, -EINVAL, "another session, not this one");
	s->run_also = also;
	return 0;
}

pid_t usertp_session_run(struct usertp_session *s, char *const argv[])
{
	return run(s, argv, false);
}

pid_t usertp_session_run_only(struct usertp_session *s, char *const argv[], bool children)
{
	pid_t pid = run(s, argv, true);
	int ret;

	if (pid < 0)
		return pid;
	ret = usertp_session_set_pid_filter(s, &pid, 1, NULL, 0, children);
	if (ret) {
		usertp__ses_run_release(s, false);
		waitpid(pid, NULL, 0);
		s->run_pid = 0;
		return ret;
	}
	return pid;
}

void usertp__ses_run_release(struct usertp_session *s, bool go)
{
	if (s->run_release < 0)
		return;
	if (go && write(s->run_release, "g", 1) != 1) {
		/* (it then sees the pipe's end, and exits 127) */
	}
	close(s->run_release);
	s->run_release = -1;
}


/* Send the session's settings to a program that came after they were given. */
static void source_send_settings(struct usertp_session *s, struct usertp__source *src)
{
	struct usertp__ctl_msg m;
	char *events;

	/* Not waited for: the reply comes among its messages (usertp__ses_session_message()). */
	if (!usertp__ses_settings_msg(s, USERTP_CTL_MSG_SET, &m, &events, NULL))
		usertp__ctl_send_msg(src->session, &m, -1);
	free(events);
}

/* Is the connection @sock to a program's session still open at the program's end? */
static bool session_stands(int sock)
{
	struct pollfd pfd = { .fd = sock, .events = POLLRDHUP };

	return poll(&pfd, 1, 0) == 0;
}

/*
 * @src's program closed its session's connection itself and joined again on @sock: its
 * session goes on there ("resume"), its buffers read all along, and it is given our wake
 * socket again (the one it had went with the rest).  Return: whether it does.
 */
static bool resume(struct usertp_session *s, struct usertp__source *src, int sock,
		   int timeout_ms)
{
	struct usertp__ctl_msg ok;
	char *reply = NULL;
	int ret = usertp__client_call_msg(sock,
					  &(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_RESUME },
					  s->overwrite ? -1 : s->wake_give, &reply, &ok, NULL, timeout_ms);

	free(reply);
	if (ret ||
	    usertp__ctl_send_msg(sock, &(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_RUN }, -1))
		return false;
	src->session = sock;
	src->orphan = false;
	return true;
}

static bool join_start(struct usertp_session *s, int sock, pid_t pid, const char *comm,
		       bool again, int timeout_ms);

/*
 * A program joined (USERTP_SESSION or all): start its session, let it run.  Its answers are
 * waited for @timeout_ms each.  Return: whether it runs recorded.
 */
static bool on_join(struct usertp_session *s, int sock, const struct usertp__ctl_msg *msg,
		    int timeout_ms)
{
	const char *comm = msg->text[USERTP_CTL_KEY_COMM];
	struct usertp__source *src, *replaced = NULL;
	pid_t pid = (pid_t)msg->num[USERTP_CTL_KEY_PID];
	bool again = msg->num[USERTP_CTL_KEY_AGAIN];
	bool ok;

	/*
	 * A process we record already joins again when it has exec'd a program (its old image
	 * and session are gone, whether or not we have seen that session's end yet: exec closed
	 * its end).  While that session's connection stands, it is the same program, which we
	 * found by its endpoint while it looked for us (control.c's second look): it keeps the
	 * session it has.
	 */
	src = pid > 0 ? usertp__ses_source_of_pid(s, pid) : NULL;
	if (src && src->session >= 0 && session_stands(src->session)) {
		close(sock);
		return true;
	}
	/*
	 * again=1: it closed its session's connection itself, as a daemon closes every
	 * descriptor it did not open, and joins again.  Its session, recording all along, is
	 * resumed on the new connection.  Failing that, a new one starts; the old one records
	 * until then (the program ends it before it answers the start), and is read to the end
	 * only then: every event is in one of the two, counted.
	 */
	if (src) {
		/*
		 * What it said there before it closed it is read first: the formats of events it
		 * added as it started (an executable's, a plugin's) may be waiting (before, they
		 * were lost with it, and their records came without a format: layouts-mount's
		 * daemon cases, under load).
		 */
		usertp__session_take_news(s, src);
		if (src->session >= 0)
			close(src->session);
		src->session = -1;
		if (again && resume(s, src, sock, timeout_ms))
			return true;
		if (again)
			replaced = src;
		else
			usertp__ses_source_finish(s, src);
	}
	ok = join_start(s, sock, pid, comm, replaced != NULL, timeout_ms);
	/*
	 * The old one is read to the end once the new one runs (the program ended the old one
	 * before it answered the start), or the program has ended; else it records on in the
	 * old one, read on as after its closing (it closed this connection too, as it was made,
	 * and joins once more).
	 */
	if (replaced && (ok || !usertp__proc_runs(pid)))
		usertp__ses_source_finish(s, replaced);
	else if (replaced)
		replaced->orphan = true;
	return ok;
}

/*
 * on_join()'s new source for @pid, its session started on @sock (@again: one that joins
 * again and has a session of ours still, which records on: its failure is no failure, the
 * program ending meanwhile or closing this connection too, and joining once more).
 * Return: whether it runs.
 */
static bool join_start(struct usertp_session *s, int sock, pid_t pid, const char *comm,
		       bool again, int timeout_ms)
{
	struct usertp__source *src;

	if (pid <= 0 || !(src = usertp__ses_source_new(s, pid, comm))) {
		close(sock); /* nonsense: it runs untraced */
		return false;
	}
	if (usertp__ses_source_start(s, src, sock, timeout_ms)) {
		if (again) {
			close(sock);
			src->ended = true;
			return false;
		}
		usertp__session_log(s, "%s", s->error);
		/* (A static program registers its events before it joins: refused at the start.) */
		if (s->remote_err == -EINVAL && s->nr_filters)
			usertp__ses_command_stop(s, src);
		close(sock);
		src->ended = true;
		s->untraced++;
		return false;
	}
	/* The names of all its events so far (for the checks of specs), then it may go on. */
	usertp__ses_source_learn(s, src, sock, timeout_ms);
	if (usertp__ctl_send_msg(sock, &(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_RUN }, -1)) {
		close(sock);
		src->session = -1;
		usertp__ses_source_finish(s, src);
		return false;
	}
	return true;
}

/* A traced program forked: the child's new region.  Return: whether it is recorded. */
static bool on_fork(struct usertp_session *s, int sock, const struct usertp__ctl_msg *msg, int fd)
{
	struct usertp__source *src, *parent;
	pid_t pid = (pid_t)msg->num[USERTP_CTL_KEY_PID];

	parent = usertp__ses_parent_of(s, (pid_t)msg->num[USERTP_CTL_KEY_PPID],
				       msg->num[USERTP_CTL_KEY_REGION]);
	src = pid > 0 && fd >= 0 ? usertp__ses_source_new(s, pid, parent ? parent->comm : NULL)
				 : NULL;
	if (src)
		src->forked_from = parent;
	if (!src || usertp__ses_source_map(s, src, fd, msg->num[USERTP_CTL_KEY_SIZE])) {
		if (src)
			src->ended = true;
		close(sock);
		return false;
	}
	/*
	 * Same program image: the parent's events, with the same ids (those we hear of from the
	 * parent later too are taken at the end).
	 */
	usertp__source_inherit(s, src);
	src->session = sock;
	/* It forked with the parent's settings: a change on the way may have missed it. */
	source_send_settings(s, src);
	return true;
}


/*
 * Whether another user's "fork" names its real parent: /proc says so, or, the child gone
 * before its word was read (a short-lived worker, or we were held up), the program it names
 * is that user's own, which it could speak for anyway.  (Before: refused, and the user kept
 * out for a while: the events of another user's short-lived children, under root's record
 * -a, were recorded nowhere and counted nowhere, 400 of 620 once.)
 */
static bool fork_parent_true(const struct usertp_session *s, const struct usertp__ctl_msg *m,
			     const struct ucred *cred)
{
	pid_t real = usertp__proc_parent(cred->pid);
	const struct usertp__source *parent;

	if (real > 0)
		return m->num[USERTP_CTL_KEY_PPID] == (uint64_t)real;
	parent = usertp__ses_parent_of(s, (pid_t)m->num[USERTP_CTL_KEY_PPID],
				       m->num[USERTP_CTL_KEY_REGION]);
	return parent && parent->uid_known && parent->uid == cred->uid;
}

/*
 * A program joins (or a traced program's child says it was born).  Another user's (only
 * root's session of every user hears them) is taken at its word only about itself (the pid
 * it gives must be its own, its parent its real one) and is given USERTP__FOREIGN_ANSWER_MS for each
 * answer, as long as such a program waits for us anyway; a user whose peer failed so is kept
 * out for USERTP__FOREIGN_BAN_MS, so that a hostile user holds the session up for 2.5 % at worst.
 */
void usertp__ses_accept_one(struct usertp_session *s, int listen_fd)
{
	enum { MSG_MAX = 65536 }; /* a join or a fork is small */
	char *msg;
	int sock = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC), fd = -1;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct usertp__ctl_msg m;
	const char *why = "";
	long long start = usertp__mono_ms();
	bool ours, taken = false;
	int timeout_ms;
	uid_t uid;
	long n;

	if (sock < 0)
		return;
	ours = usertp__ctl_peer_allowed(sock, &uid);
	if ((!ours && (geteuid() != 0 || foreign_banned(s, uid, start))) ||
	    getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		close(sock);
		return;
	}
	timeout_ms = ours ? USERTP__CALL_TIMEOUT_MS : USERTP__FOREIGN_ANSWER_MS;
	msg = malloc(MSG_MAX);
	n = msg ? usertp__ctl_recv(sock, msg, MSG_MAX, &fd, timeout_ms) : -ENOMEM;
	if (n > 0 && !usertp__ctl_decode(msg, &m, &why) && !ours &&
	    (m.num[USERTP_CTL_KEY_PID] != (uint64_t)cred.pid ||
	     (m.type == USERTP_CTL_MSG_FORK && !fork_parent_true(s, &m, &cred))))
		close(sock); /* another's word about a process not its own */
	else if (n > 0 && !why && listen_fd == s->every_fd && s->every_again_only &&
		 (m.type != USERTP_CTL_MSG_JOIN || !m.num[USERTP_CTL_KEY_AGAIN] ||
		  !usertp__ses_source_of_pid(s, (pid_t)m.num[USERTP_CTL_KEY_PID])))
		close(sock); /* there, only a program we record that joins again */
	else if (n > 0 && !why && m.type == USERTP_CTL_MSG_JOIN)
		taken = on_join(s, sock, &m, timeout_ms);
	else if (n > 0 && !why && m.type == USERTP_CTL_MSG_FORK)
		taken = on_fork(s, sock, &m, fd);
	else
		close(sock); /* nonsense: it runs untraced */
	free(msg);
	if (fd >= 0)
		close(fd);
	if (!ours && (!taken || usertp__mono_ms() - start >= USERTP__FOREIGN_ANSWER_MS))
		foreign_ban(s, uid, usertp__mono_ms());
}

/* --- attached by pid, and taken out ---------------------------------------------------------- */

/* Is @pid another user's process, and we not root? */
static bool another_users(pid_t pid)
{
	uid_t uid;

	return geteuid() != 0 && !usertp__proc_owner(pid, &uid) && uid != geteuid();
}

static int attach(struct usertp_session *s, pid_t pid, bool quiet_if_gone)
{
	struct usertp__program prog;
	int ret;

	ret = usertp__client_find(pid, &prog);
	if (ret == -ENOENT && another_users(pid))
		return quiet_if_gone ? -EACCES
				     : usertp__session_fail(s, -EACCES, "process %d: %s of ours: it is "
							    "another user's process (only root may "
							    "record it)", (int)pid,
							    usertp__client_find_error(ret));
	if (ret)
		return quiet_if_gone ? ret
				     : usertp__session_fail(s, ret, "process %d: %s", (int)pid,
							    usertp__client_find_error(ret));
	return usertp__ses_attach_found(s, &prog, USERTP__CALL_TIMEOUT_MS);
}

/* Attach @prog, found and answering, waiting @timeout_ms at most for each of its answers. */
int usertp__ses_attach_found(struct usertp_session *s, const struct usertp__program *prog,
			int timeout_ms)
{
	pid_t pid = prog->pid;
	struct usertp__source *src;
	char *reply = NULL;
	int sock, ret;

	/* (A daemon that has just closed its endpoint turns the knock away: again, a while.) */
	for (long long since = usertp__mono_ms();;) {
		sock = usertp__client_connect(prog);
		ret = sock < 0 ? sock
			       : usertp__client_call(sock, USERTP_CTL_MSG_HELLO, NULL, &reply, NULL,
						     timeout_ms);
		if (!ret || !usertp__client_knock_again(prog, ret, since))
			break;
		free(reply);
		reply = NULL;
		if (sock >= 0)
			close(sock);
	}
	if (sock < 0)
		return usertp__session_fail(s, sock, "process %d: %s", (int)pid, strerror(-sock));
	/* Another user's program refuses us on its first answer. */
	if (ret) {
		char err[256];

		if (ret == -EREMOTEIO)
			ret = strstr(reply, "EACCES") || strstr(reply, "EPERM") ? -EACCES : -EPROTO;
		usertp__session_fail(s, ret, "process %d: %s", (int)pid,
				     reply && !strncmp(reply, "error ", 6)
					     ? usertp__client_error_text(reply, err, sizeof(err))
					     : strerror(-ret));
		free(reply);
		close(sock);
		return ret;
	}
	free(reply);
	src = usertp__ses_source_new(s, pid, prog->comm);
	if (!src) {
		close(sock);
		return -ENOMEM;
	}
	ret = usertp__ses_source_start(s, src, sock, timeout_ms);
	if (ret) {
		close(sock);
		src->ended = true;
		return ret;
	}
	/* The names of all its events (for the checks of specs). */
	if (usertp__ses_source_query(src))
		usertp__ses_source_learn(s, src, src->query, timeout_ms);
	return 0;
}

int usertp_session_attach_pid(struct usertp_session *s, pid_t pid)
{
	if (pid <= 0)
		return usertp__session_fail(s, -ESRCH, "process %d: no such process", (int)pid);
	if (usertp__ses_source_of_pid(s, pid))
		return usertp__session_fail(s, -EALREADY, "process %d: in the session already",
					    (int)pid);
	return attach(s, pid, false);
}


int usertp_session_detach_pid(struct usertp_session *s, pid_t pid)
{
	struct usertp__source *src = usertp__ses_source_of_pid(s, pid);

	if (!src)
		return usertp__session_fail(s, -ESRCH, "process %d: not a program of the session",
					    (int)pid);
	if (src->session >= 0) {
		/* Its session ends there: once it answers, nothing more is written. */
		usertp__ses_source_call(s, src, &(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_STOP });
		close(src->session);
		src->session = -1;
	}
	usertp__ses_source_finish(s, src);
	return 0;
}

