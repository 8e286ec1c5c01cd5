/* SPDX-License-Identifier: MIT */
/*
 * private/usertp-consumer-private.h - what libusertp-consumer gives usertp's own tools (the
 * usertp command and its mount, src/tool and src/mount) besides its public API
 * (usertp/consumer.h): declared here once, and nowhere else, as trace-cmd declares what its
 * tools take from its libraries in include/private/.  Never installed; no program outside
 * this project may use it.  The tools include no other header of src/consumer.
 *
 *   - finding programs that use libusertp and asking their control endpoints (client.c);
 *   - reading trace.dat files (dat-read.c) and printing their records: the checks made
 *     before libtraceevent prints a record of a format nobody vouches for (tep-check.c), and
 *     the quick printer of common print formats (fast-print.c);
 *   - what the mount needs of a session (session.c), and whether a spec is the kernel's.
 */
#ifndef USERTP_CONSUMER_PRIVATE_H
#define USERTP_CONSUMER_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <traceevent/event-parse.h>
#include <usertp/consumer.h>

#include "ctl-proto.h"
#include "pid-list.h"

#define USERTP__HIDDEN __attribute__((visibility("hidden")))

/* --- programs and their control endpoints (client.c) -------------------------------------- */

struct usertp__program {
	pid_t pid;
	char comm[17];
	char path[108]; /* its endpoint */
	bool foreign;	/* another user's (only root lists them) */
};

/*
 * The programs with an endpoint in our runtime directory, by pid (endpoints left by dead
 * processes are removed); as root with @every_user, every other user's too.  Return: how
 * many (in *out, to free()), or a negative errno.
 */
int usertp__client_programs(struct usertp__program **out, bool every_user);
/*
 * The runtime directory (ctl-proto.h), with a warning on stderr, once, when it is not the
 * usual one because another user took that, or when it cannot be used.
 */
int usertp__client_dir(char *buf, size_t size, bool create);
/*
 * Find the endpoint of process @pid: ours, or as root any user's.  A process younger than
 * USERTP_CTL_STARTING_MS may not have made it yet: it is waited for until then.
 * Return: 0, -ESRCH when there is no such process, -ENOENT when it has no endpoint, -EBUSY
 * when the endpoint serves all it can, -EACCES when it refuses us, -ETIMEDOUT when it does
 * not answer, -EPROTO when it answers nonsense.
 */
int usertp__client_find(pid_t pid, struct usertp__program *prog);
/* What an error of usertp__client_find() means, for a message. */
const char *usertp__client_find_error(int err);

/*
 * Ask each of @progs (@n of them) the request @req (a word alone: hello, events, ids) at once, each on a connection of its own, and take
 * the replies as they come: a program of ours is waited for @timeout_ms from the start, another
 * user's USERTP__FOREIGN_ANSWER_MS, so that programs that do not answer cost that once, not
 * once each.  replies[i]: its reply (to free()) or NULL; results[i]: as usertp__client_call()'s
 * (-ENOENT: it could not be reached, -EBUSY: its backlog is full).  Return: 0 or -ENOMEM.
 */
int usertp__client_ask_all(const struct usertp__program *progs, size_t n,
			   enum usertp__ctl_type req, int timeout_ms, char **replies, int *results);

/* Connect to @prog's endpoint.  Return: the socket or a negative errno. */
int usertp__client_connect(const struct usertp__program *prog);

/*
 * Send the request @req with its argument @arg (or NULL: "format SYS:EVENT" has one), encoded
 * by the protocol's codec, and wait for the reply (at most @timeout_ms per part).  *reply (to
 * free()) holds it, NUL-terminated; *fd a descriptor that came with it (or -1; may be NULL).
 * Return: 0 when the reply is "ok...", -EREMOTEIO for an "error ..." reply (still in *reply),
 * another negative errno when the exchange failed.
 */
int usertp__client_call(int sock, enum usertp__ctl_type req, const char *arg, char **reply,
			int *fd, int timeout_ms);

/* The text after the first line of a reply. */
const char *usertp__client_body(const char *reply);

/* An "error ERRNO text" reply as "text (ERRNO)" for messages. */
const char *usertp__client_error_text(const char *reply, char *buf, size_t size);

/* --- trace.dat files: reading (dat-read.c) ------------------------------------------------- */

/*
 * The reader takes trace.dat files (version 6, and version 7 uncompressed or zstd) as
 * trace-cmd writes them for the kernel and as usertp writes them. Every length and offset of
 * the file is checked: a damaged file gives its events up to the damage, then an error that
 * names the byte offset; it never makes the reader read outside the file or loop.
 */
struct usertp__dat_input;

/* Opens a file ("-" is stdin). NULL on failure, with the reason (naming the file and the
 * byte offset where it applies) in err. */
struct usertp__dat_input *usertp__dat_read_open(const char *path, char *err, size_t err_size);
/* The same for a file already in memory (the fuzz target); data must outlive the input. */
struct usertp__dat_input *usertp__dat_read_open_mem(const char *name, const void *data, size_t size,
			       char *err, size_t err_size);
void usertp__dat_read_close(struct usertp__dat_input *in);

const char *usertp__dat_read_name(const struct usertp__dat_input *in);
struct tep_handle *usertp__dat_read_tep(const struct usertp__dat_input *in);
/* CPUs with a data table entry (their data is read by index, 0 .. usertp__dat_read_cpus() - 1). */
int usertp__dat_read_cpus(const struct usertp__dat_input *in);
/* The CPU count trace-cmd prints ("cpus=N"): the machine's, also those without data. */
int usertp__dat_read_cpus_shown(const struct usertp__dat_input *in);
/* The number of the CPU at @index. */
int usertp__dat_read_cpu_id(const struct usertp__dat_input *in, int index);
/*
 * A version-6 file's layout, for sending it as trace-cmd record -N does (net-send.c): the
 * bytes before its "flyrecord" tag (the metadata, the CPU count and the options) and its
 * page size.  Return: false for another version, or a latency file.
 */
bool usertp__dat_read_v6_layout(const struct usertp__dat_input *in, uint64_t *head_len,
				unsigned int *page_size);
/* Where the data of the CPU at @index lies in the file (clipped to the file). */
void usertp__dat_read_cpu_bytes(const struct usertp__dat_input *in, int index, uint64_t *offset,
				uint64_t *size);
/* Whether timestamps are nanoseconds shown as secs.usecs (trace-cmd's rule on clock names). */
bool usertp__dat_read_time_in_usecs(const struct usertp__dat_input *in);
/* A latency-format file: plain text instead of ring-buffer pages (NULL otherwise). */
const char *usertp__dat_read_latency_text(const struct usertp__dat_input *in, size_t *len);

/*
 * The next record of the CPU at index cpu (0 .. usertp__dat_read_cpus() - 1), not consumed: NULL once the
 * CPU's data ends, or reaches damage (then usertp__dat_read_damage() tells where). record->cpu is the
 * CPU's number, record->missed_events the events lost before it (-1: an unknown number).
 */
struct tep_record *usertp__dat_read_peek(struct usertp__dat_input *in, int cpu);
void usertp__dat_read_consume(struct usertp__dat_input *in, int cpu);

/*
 * The CPUSTAT option of @cpu (the events the file holds of it, and those its ring buffer
 * overwrote or dropped), as the kernel's per_cpu stats or usertp record wrote it.
 * Return: false when the file has none for that CPU.
 */
struct usertp__dat_cpu_stats;
bool usertp__dat_read_cpu_stats(const struct usertp__dat_input *in, int cpu, struct usertp__dat_cpu_stats *st);

/* Damage met while reading the CPU data so far, one message per damaged CPU, or NULL. */
const char *usertp__dat_read_damage(const struct usertp__dat_input *in, int cpu);

/* --- printing records (tep-check.c, fast-print.c) ----------------------------------------- */

/*
 * libtraceevent trusts a record's __data_loc / __rel_loc words; one that points outside the
 * record can make its print path fault.  Records come from programs and files usertp does not
 * trust (another user's, as root): the printers (usertp report, the mount) ask first.
 */
/*
 * Do @ev's dynamic fields all lie within the record @data of @size bytes (and every fixed
 * field too)?  False: the name of the first that does not in *bad (when @bad is not NULL).
 * (A string libtraceevent prints to its NUL: the buffers records are printed from end in
 * zeroes, so that it stops there: dat-read.c's page_room, reader.c's queued_page.)
 */
bool usertp__tep_record_ok(const struct tep_event *ev, const void *data, int size,
			   const char **bad);

/*
 * Would libtraceevent parse the format @text (@len bytes) whole, its print fmt included, with
 * longs of @long_size bytes?  Tried in a forked child with a handle of its own, where a fault
 * of the parser costs nothing: a parse adds the event even when its print fmt failed, and the
 * records of such an event are printed field by field (a char array read to its NUL, wherever
 * that is), and libtraceevent's parser faults on some malformed texts.  False: refuse it.
 */
bool usertp__tep_format_ok(const char *text, size_t len, const char *system, int long_size);

/*
 * usertp report's quick way to an event's text, for the print formats most events have:
 * literal text and conversions %d %i %u %x %X %s (any flags, width, precision, h/hh/l/ll) of
 * plain fields and __get_str() strings.  The format and its arguments are libtraceevent's
 * parse (event->print_fmt); the text is what libtraceevent's pretty printer makes of them
 * (the same value casts, the same printf conversions), without its work per conversion (a
 * copy of the format, a trace_seq, vsnprintf for every piece).  Anything else (another
 * conversion, an expression, a typecast, a plugin's handler, a field outside the record, a
 * string without its NUL) is left to libtraceevent: the caller's tep_print_event().
 */
/* Text being built: grows as needed. */
struct usertp__text {
	char *buf;
	size_t len, cap;
	bool failed; /* out of memory: the text is cut */
};

void usertp__text_put(struct usertp__text *t, const char *s, size_t len);
void usertp__text_putc(struct usertp__text *t, char c);
/* @v in decimal, at least @width columns, left-aligned if @left. */
void usertp__text_put_u64(struct usertp__text *t, unsigned long long v, int width, bool left,
			  char pad);

/* The plans of one tep's events, made as they are first printed. */
struct usertp__fast_print;
struct usertp__fast_print *usertp__fast_print_new(void);
void usertp__fast_print_free(struct usertp__fast_print *fp);

/*
 * Append the text of @rec (an event of @event) to @t, as tep_print_event()'s TEP_PRINT_INFO.
 * Return: false (nothing appended) when it is libtraceevent's to print.
 */
bool usertp__fast_print_info(struct usertp__fast_print *fp, struct tep_event *event,
			     struct tep_record *rec, struct usertp__text *t);

/* --- what the mount takes of a session (session.c), and the most CPUs of a file ---------- */

#define USERTP_MERGE_MAX_CPUS 4096

/*
 * The clock the session's records are read on from now (a mount instance's trace_clock):
 * mono, mono_raw, boot, tai, or x86-tsc where the programs count the TSC.  Return: 0, or
 * -EINVAL (the reason in usertp_session_error()).
 */
USERTP__HIDDEN int usertp__session_set_clock(struct usertp_session *s, const char *name);
/* Whether the session's programs count the TSC (x86-tsc can then be read). */
USERTP__HIDDEN bool usertp__session_counts_tsc(const struct usertp_session *s);

/*
 * usertp mount's sessions: specs are taken whether or not a running program has an event
 * they select (the mount checks them against its catalog, as the kernel checks set_event
 * against its events, and keeps those of programs that ended), and @on_comm gets every
 * thread name the session learns, as it learns it.
 */
/* The usertp_printk() formats the session's programs told of, printk_formats lines (to free()). */
USERTP__HIDDEN char *usertp__session_printk_formats(const struct usertp_session *s);

USERTP__HIDDEN void usertp__session_mount_mode(struct usertp_session *s,
					       void (*on_comm)(pid_t tid, const char *comm,
							       void *arg),
					       void *arg);

/*
 * Add to @trace and @notrace the threads that the programs' pid filters list now (with
 * those event-fork added there), asking each program (usertp mount's set_event_pid).
 */
USERTP__HIDDEN int usertp__session_listed(struct usertp_session *s, struct usertp__pid_list *trace,
					  struct usertp__pid_list *notrace);

/* --- the kernel's events (kernel-rec.c): is a spec the kernel's, can they be had --------- */

/*
 * A spec whose system is one of the kernel's is the kernel's: a session records it in a
 * tracefs instance of its own (usertp_session_enable(3), src/consumer/kernel-rec.h).
 *
 * Does @spec name kernel events: is its system (or the whole spec, set_event's "SYSTEM"
 * form) a system of this kernel's tracefs?  False where tracefs cannot be read.
 */
bool usertp__kernel_spec(const char *spec);

/*
 * Can kernel events be recorded here (tracefs found, its instances writable)?  Return: 0,
 * or -1 with one line in @why saying what is missing and how to get it.
 */
int usertp__kernel_check(char *why, size_t whylen);

/*
 * Remove the instances that recorders which died left ("usertp-record-PID" of no running
 * PID), each @say(name) first (NULL: quietly).
 */
void usertp__kernel_remove_leftovers(void (*say)(const char *name));

/*
 * The kernel's events, "sys:event" lines (available_events; to free()), or NULL with why in
 * @why (tracefs not mounted, or not readable).
 */
char *usertp__kernel_events(char *why, size_t whylen);
/* The format text of the kernel's event "sys:event" (to free()), or NULL. */
char *usertp__kernel_format(const char *sysname);

#endif /* USERTP_CONSUMER_PRIVATE_H */
